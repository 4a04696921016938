#!/usr/bin/env python3
"""Draw a reproducible sample of 25 PCI and 25 USB device IDs from Linux match tables.

Run from the top of a Linux tree: python3 sample.py [SEED]  (default seed 49).
Candidates: every `PCI_DEVICE(v, d)`, `PCI_VDEVICE(V, d)`, `USB_DEVICE(v, p)` line that
`rg -n --type c` finds under drivers/ sound/ net/, whose two arguments are literal numbers
or names #defined in include/linux/pci_ids.h or in the entry's own file.
Prints one line per sampled ID: `bus:vvvv:dddd path:line text`.
"""
import random
import re
import subprocess
import sys

DEF = re.compile(r'^\s*#\s*define\s+([A-Za-z_]\w*)\s+\(?\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_]\w*)\s*\)?\s*(?:/[*/].*)?$')
ENTRY = re.compile(r'\b(PCI_DEVICE|PCI_VDEVICE|USB_DEVICE)\(\s*(\w+)\s*,\s*(\w+)\s*\)')


def defines(path, cache={}):
    if path not in cache:
        table = {}
        with open(path, errors='replace') as f:
            for line in f:
                m = DEF.match(line)
                if m:
                    table.setdefault(m.group(1), m.group(2))
        cache[path] = table
    return cache[path]


def value(tok, path, depth=0):
    """The number a token stands for, or None."""
    if re.fullmatch(r'0[xX][0-9a-fA-F]+', tok):
        return int(tok, 16)
    if re.fullmatch(r'\d+', tok):
        return int(tok)
    if depth > 3:
        return None
    for table in (defines(path), defines('include/linux/pci_ids.h')):
        if tok in table:
            return value(table[tok], path, depth + 1)
    return None


def candidates():
    out = subprocess.run(['rg', '-n', r'PCI_DEVICE\(|PCI_VDEVICE\(|USB_DEVICE\(', '--type', 'c',
                          'drivers', 'sound', 'net'], capture_output=True, text=True).stdout
    for row in sorted(out.splitlines()):
        path, line, text = row.split(':', 2)
        if re.match(r'\s*#\s*define', text):
            continue
        for kind, a, b in ENTRY.findall(text):
            ven = value(('PCI_VENDOR_ID_' + a) if kind == 'PCI_VDEVICE' else a, path)
            dev = value(b, path)
            if ven is None or dev is None or ven > 0xffff or dev > 0xffff:
                continue
            bus = 'usb' if kind == 'USB_DEVICE' else 'pci'
            yield bus, '%s:%04x:%04x' % (bus, ven, dev), '%s:%s' % (path, line), text.strip()


def main():
    random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 49)
    pool = list(candidates())
    random.shuffle(pool)
    print('# candidates: %d pci, %d usb' % (sum(c[0] == 'pci' for c in pool),
                                           sum(c[0] == 'usb' for c in pool)))
    for bus in ('pci', 'usb'):
        seen = set()
        for b, key, where, text in pool:
            if b == bus and key not in seen and len(seen) < 25:
                seen.add(key)
                print(key, where, text)


main()
