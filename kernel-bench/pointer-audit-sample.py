#!/usr/bin/env python3
"""Draws the pointer-call audit sample (issue 34): functions stored in struct members by a
designated initializer (`.member = function,`) in the kernel's .c files, 600 of them drawn
with random.Random(34), each asked `knav callers --include-uncertain`; of their calls through
pointers, 100 type-certain (or `tag`) edges and 100 field-name edges drawn with the same
generator, each half marked `tune` or `held` at random. Prints the TSV to stdout:
function, call site, via, certainty, registered at, half. Usage:
pointer-audit-sample.py KNAV TREE INDEX_DIR > sample.tsv

With `--guesses N SEED`, a later round: N field-name edges only, drawn with random.Random(SEED)
from the functions the first round did not pick (rows to judge and append to the audit).
pointer-audit-sample.py KNAV TREE INDEX_DIR --guesses N SEED > more.tsv"""
import json, random, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

knav, tree, index = sys.argv[1:4]
guesses = sys.argv[4:5] == ["--guesses"]
rng = random.Random(34)
out = subprocess.run(
    ["rg", "--no-filename", "-o", "-g", "*.c", r"^\s*\.[a-z_0-9]+\s*=\s*&?([a-z_][a-z_0-9]*),\s*$",
     "-r", "$1", tree], capture_output=True, text=True).stdout
names = sorted(set(n.strip() for n in out.split() if len(n.strip()) > 3))
rng.shuffle(names)
picked = names[:600]
if guesses:
    wanted, seed = int(sys.argv[5]), int(sys.argv[6])
    rng = random.Random(seed)
    picked = names[600:]

def edges(name):
    r = subprocess.run([knav, "callers", name, "--include-uncertain", "--limit", "1000",
                        "--format", "json", "--root", tree, "--index-dir", index],
                       capture_output=True, text=True)
    try:
        v = json.loads(r.stdout)
    except ValueError:
        return []
    return [(name, f'{c["path"]}:{c["line"]}', c["via"], c["certainty"], c.get("registered_at") or "-")
            for c in v.get("results") or [] if c.get("certainty") and c.get("via") != "INDIRECT_CALL"]

found = []
for e in ThreadPoolExecutor(2).map(edges, picked):
    found.extend(e)
typed = [e for e in found if e[3] in ("type", "tag")]
guessed = [e for e in found if e[3] == "field-name"]
if guesses:
    sample = rng.sample(guessed, min(wanted, len(guessed)))
else:
    sample = rng.sample(typed, min(100, len(typed))) + rng.sample(guessed, min(100, len(guessed)))
print("function\tcall site\tvia\tcertainty\tregistered at\thalf")
for e in sample:
    print("\t".join(e + ("held" if rng.random() < 0.5 else "tune",)))
print(f"{len(picked)} functions, {len(typed)} type/tag edges, {len(guessed)} field-name edges",
      file=sys.stderr)
