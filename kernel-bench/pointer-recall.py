#!/usr/bin/env python3
"""The recall of calls through pointers (issue 34): for well-known ops functions, every
dispatch site `rg` finds for their member (`->MEMBER(`, `.MEMBER(`, `->MEMBER)(`, in .c and .h
files) should be among their callers. Each site is: `type` (a caller, type-certain), `guess`
(a caller only with --include-uncertain: its struct is not known), `other` (knav records the
call as one through MEMBER of another struct: not a caller, rightly when that type is right),
or `missed` (knav records no call through MEMBER there); the last two are one column, `not a
caller`, told apart by reading the site. Comment lines are left out. Prints a table per
function, then every site that is not a caller. Usage: pointer-recall.py KNAV TREE INDEX_DIR"""
import json, re, subprocess, sys
from collections import defaultdict

knav, tree, index = sys.argv[1:4]

# (function, struct, member): VFS, block, net, sched and mm.
OPS = [
    ("ext4_file_read_iter", "file_operations", "read_iter"),
    ("ext4_file_write_iter", "file_operations", "write_iter"),
    ("ext4_file_open", "file_operations", "open"),
    ("ext4_release_file", "file_operations", "release"),
    ("ext4_llseek", "file_operations", "llseek"),
    ("ext4_file_mmap", "file_operations", "mmap"),
    ("ext4_sync_file", "file_operations", "fsync"),
    ("ext4_fallocate", "file_operations", "fallocate"),
    ("ext4_lookup", "inode_operations", "lookup"),
    ("ext4_create", "inode_operations", "create"),
    ("ext4_mkdir", "inode_operations", "mkdir"),
    ("ext4_unlink", "inode_operations", "unlink"),
    ("ext4_getattr", "inode_operations", "getattr"),
    ("ext4_setattr", "inode_operations", "setattr"),
    ("ext4_alloc_inode", "super_operations", "alloc_inode"),
    ("ext4_evict_inode", "super_operations", "evict_inode"),
    ("ext4_statfs", "super_operations", "statfs"),
    ("ext4_read_folio", "address_space_operations", "read_folio"),
    ("ext4_writepages", "address_space_operations", "writepages"),
    ("ext4_readahead", "address_space_operations", "readahead"),
    ("nvme_queue_rq", "blk_mq_ops", "queue_rq"),
    ("nvme_pci_complete_rq", "blk_mq_ops", "complete"),
    ("tcp_sendmsg", "proto", "sendmsg"),
    ("tcp_recvmsg", "proto", "recvmsg"),
    ("tcp_v4_connect", "proto", "connect"),
    ("inet_sendmsg", "proto_ops", "sendmsg"),
    ("inet_recvmsg", "proto_ops", "recvmsg"),
    ("e1000_xmit_frame", "net_device_ops", "ndo_start_xmit"),
    ("e1000_open", "net_device_ops", "ndo_open"),
    ("enqueue_task_fair", "sched_class", "enqueue_task"),
    ("dequeue_task_fair", "sched_class", "dequeue_task"),
    ("task_tick_fair", "sched_class", "task_tick"),
    ("shmem_fault", "vm_operations_struct", "fault"),
    ("filemap_map_pages", "vm_operations_struct", "map_pages"),
]


def ask(*args):
    r = subprocess.run([knav, *args, "--format", "json", "--root", tree, "--index-dir", index],
                       capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def sites(member):
    """The lines `rg` finds a call through `member` on, as (path, line)."""
    pattern = r"(->|\.)\s*" + member + r"\s*\)?\s*\("
    out = subprocess.run(["rg", "-n", "--no-heading", "-g", "*.c", "-g", "*.h", "-e", pattern],
                         cwd=tree, capture_output=True, text=True).stdout
    found = set()
    for line in out.splitlines():
        path, num, text = line.split(":", 2)
        # A comment that names the member (` * This is the ->read_iter() routine`).
        if text.lstrip().startswith(("*", "/*", "//")):
            continue
        # A definition or declaration of a function pointer member, not a call.
        if re.search(r"\(\s*\*\s*" + member + r"\s*\)", text) and "->" not in text:
            continue
        # A prototype in a struct initializer is not a call either; a #define is kept
        # (its uses are the calls) but marked.
        found.add((path, int(num), text.lstrip().startswith("#define")))
    return found


def main():
    rows, missed = [], []
    for func, struct, member in OPS:
        callers = ask("callers", func, "--include-uncertain", "--limit", "5000")
        certain = {}
        for c in callers.get("results") or []:
            certain[(c["path"], c["line"])] = c.get("certainty") or "direct"
        counts = defaultdict(int)
        for path, line, in_define in sorted(sites(member)):
            how = certain.get((path, line))
            if how in ("type", "tag"):
                counts["type"] += 1
            elif how == "field-name":
                counts["guess"] += 1
            elif how is not None:
                counts["type"] += 1
            elif in_define:
                counts["define"] += 1
            else:
                counts["other or missed"] += 1
                missed.append((func, f"{path}:{line}"))
        rows.append((func, f"{struct}.{member}", counts))
    print("| function | member | rg sites | type | guess | in a #define | not a caller |")
    print("|---|---|---|---|---|---|---|")
    for func, via, c in rows:
        total = sum(c.values())
        print(f"| {func} | {via} | {total} | {c['type']} | {c['guess']} | {c['define']} "
              f"| {c['other or missed']} |")
    print()
    for func, at in missed:
        print(f"not a caller of {func}: {at}")


main()
