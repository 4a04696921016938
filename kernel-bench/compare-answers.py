#!/usr/bin/env python3
"""Compare the answers of two knav builds on a kernel tree, query by query.

Usage:

    python3 kernel-bench/compare-answers.py --old OLD_KNAV --new NEW_KNAV \\
        --tree /var/tmp/k/linux-source-6.12 [--queries 2400] [--seed 1] \\
        [--work DIR] [--format text|json] [--jobs 2] [--answer-formats json,text]

What it does:

1. Indexes TREE once per binary, each into its own index directory,
   WORK/idx-<first 16 hex digits of the binary's sha256>, with
   `knav index --root TREE --index-dir DIR`. An index directory is therefore only
   ever reused by the very binary that built it (a second run refreshes it, which
   takes a fraction of a second on an unchanged tree).
2. Picks --queries random queries with a fixed --seed from the tree itself, not
   from either binary: it walks TREE (sorted, symbolic links not followed), reads
   random .c/.h files and takes names from them with regexes, biased toward
   defined functions (a line at column 0 that names `f(` and does not end in `;`),
   then macros (`#define`), struct/union/enum/typedef names, any identifier, and
   a few names that exist nowhere (a misspelt name, to exercise "did you mean").
   grep patterns are identifiers (-w), literal pieces of a line (-F), `name\\s*\\(`
   regexes, comment words (-i), with now and then a path, -l, -c, -C, -g,
   --within, or a path that is a symbolic link in the tree; find queries are
   prefixes of a name's `_` parts or a /REGEX/; search queries are words from the
   file's comments. Now and then a query gets --limit, --offset, --path-prefix or
   --active-config (the .config next to the tree, `config.amd64`, when present).
   The kinds are dealt out evenly: def, refs, callers, callees, body, grep, find,
   search, and symbols (list_file_symbols on the picked file, a directory, or a
   symbolic link); 2,400 queries give 266 or 267 of each. The same seed and tree
   always give the same queries; they are written to WORK/queries-seed<N>.json.
3. Runs every query with both binaries in every --answer-formats format (json and
   text by default), 2 queries at a time (--jobs), each as
   `knav --root TREE --index-dir DIR --format F <command> ...` with argv[0] set to
   `knav` for both binaries (so clap's usage lines name the same program), from
   WORK, with every KNAV_* variable removed from the environment.
4. Compares stdout and the exit code of each run. A query is "different" when any
   of its formats differs in either. stderr is compared too but only reported
   (`stderr-only` column), since queries print their answers and errors on stdout.

Normalizations (applied to stdout and stderr before comparing): only the index
directory, which is run-dependent by construction (each binary has its own), is
replaced by `<INDEX_DIR>` wherever it appears (error messages can name it). No
other field needs it: the query envelope is tool, root, results, total, offset,
truncated, limit, next_tools, warning, error and index{files_scanned,
files_unindexed}; it holds no timing, no index age and no index path (those are in
`knav status` and `knav index` only, which this script runs but does not compare:
it prints their counts in the header). The root is the same TREE for both.

Output: a table per kind (queries; runs, 4 per query with two formats; answered,
the queries the new binary answered with exit 0 in the first format, the rest
being "no such symbol", "no line matches", refusals and the like, compared all the
same; identical; different; stderr-only), then for each differing format of each
different query the command (KNAV standing for either binary, DIR for its index
directory), both exit codes and a short unified diff (--diff-lines). Both outputs
of each differing run are kept in WORK/diffs/NNNNN-{old,new}.{json,txt}.
--format json prints the same as one JSON object. Exit status: 0 when every
answer is identical, 1 when some differ, 2 when the comparison could not run.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import hashlib
import json
import os
import random
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ["def", "refs", "callers", "callees", "body", "grep", "find", "search", "symbols"]

C_KEYWORDS = set(
    """auto break case char const continue default do double else enum extern float for
    goto if inline int long register restrict return short signed sizeof static struct
    switch typedef union unsigned void volatile while bool true false NULL defined
    __attribute__ asm __asm__ typeof __typeof__ include ifdef ifndef endif elif define
    undef pragma error""".split()
)

SKIP_DIRS = {".git", ".hg", ".svn", ".knav"}

RE_FUNC_DEF = re.compile(r"^(?![#\s{}/*])(?:[^;=(]*[\s*])?([A-Za-z_]\w*)\s*\((?!.*;\s*$)")
RE_MACRO = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)")
RE_TYPE = re.compile(r"^(?:typedef\s+)?(?:struct|union|enum)\s+([A-Za-z_]\w*)\s*\{")
RE_TYPEDEF = re.compile(r"^typedef\b.*?\b([A-Za-z_]\w*)\s*;")
RE_IDENT = re.compile(r"\b[A-Za-z_]\w{2,}\b")
RE_COMMENT = re.compile(r"/\*(.*?)\*/|//(.*)$|^\s*\*\s(.*)$", re.S | re.M)
RE_WORD = re.compile(r"\b[a-z]{3,}\b")


# --------------------------------------------------------------------------- tree


@dataclass
class FileNames:
    funcs: list[str] = field(default_factory=list)
    macros: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    idents: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def dedup(xs):
    return list(dict.fromkeys(xs))


def names_of(path: Path) -> FileNames | None:
    try:
        text = path.read_bytes()[: 1 << 20].decode("utf-8", "replace")
    except OSError:
        return None
    f = FileNames()
    for line in text.splitlines():
        if m := RE_FUNC_DEF.match(line):
            if m.group(1) not in C_KEYWORDS:
                f.funcs.append(m.group(1))
        if m := RE_MACRO.match(line):
            f.macros.append(m.group(1))
        if m := RE_TYPE.match(line) or RE_TYPEDEF.match(line):
            f.types.append(m.group(1))
        s = line.strip()
        if 8 <= len(s) <= 200 and s.isascii() and not s.startswith(("*", "/*", "//")):
            f.lines.append(s)
    f.idents = [w for w in RE_IDENT.findall(text) if w not in C_KEYWORDS]
    for m in RE_COMMENT.finditer(text):
        body = next((g for g in m.groups() if g), "")
        f.words.extend(RE_WORD.findall(body))
    f.funcs, f.macros, f.types = dedup(f.funcs), dedup(f.macros), dedup(f.types)
    f.idents, f.words = dedup(f.idents), dedup(f.words)
    return f if f.idents else None


def walk_tree(tree: Path):
    """Sorted lists of C files, other text-ish files, directories and symbolic links."""
    c_files, dirs, links = [], [], []
    for top, subdirs, files in os.walk(tree):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIP_DIRS)
        rel_top = os.path.relpath(top, tree)
        rel_top = "" if rel_top == "." else rel_top
        if rel_top:
            dirs.append(rel_top)
        for d in subdirs:
            if os.path.islink(os.path.join(top, d)):
                links.append(os.path.join(rel_top, d))
        for name in sorted(files):
            rel = os.path.join(rel_top, name)
            if os.path.islink(os.path.join(top, name)):
                links.append(rel)
            elif name.endswith((".c", ".h")):
                c_files.append(rel)
    return c_files, dirs, links


# --------------------------------------------------------------------------- queries


class Picker:
    def __init__(self, tree: Path, seed: int, active_config: str | None):
        self.tree = tree
        self.rng = random.Random(seed)
        self.active_config = active_config
        self.c_files, self.dirs, self.links = walk_tree(tree)
        if not self.c_files:
            raise SystemExit(f"no .c or .h files under {tree}")
        self.cache: dict[str, FileNames | None] = {}

    def file(self) -> tuple[str, FileNames]:
        while True:
            rel = self.rng.choice(self.c_files)
            if rel not in self.cache:
                self.cache[rel] = names_of(self.tree / rel)
            if self.cache[rel] is not None:
                return rel, self.cache[rel]

    def symbol(self, f: FileNames, func_share: float) -> str:
        r = self.rng.random()
        if r < func_share and f.funcs:
            return self.rng.choice(f.funcs)
        r = self.rng.random()
        if r < 0.35 and f.macros:
            return self.rng.choice(f.macros)
        if r < 0.6 and f.types:
            return self.rng.choice(f.types)
        if r < 0.92:
            return self.rng.choice(f.idents)
        # A name that is nowhere: a misspelling of a real one.
        name = self.rng.choice(f.funcs or f.idents)
        i = self.rng.randrange(len(name))
        return name[:i] + "q" + name[i + 1 :] + "_zz"

    def common(self, rel: str) -> list[str]:
        rng, opts = self.rng, []
        if rng.random() < 0.15:
            opts += ["--limit", str(rng.choice([1, 3, 10, 50]))]
            if rng.random() < 0.5:
                opts += ["--offset", str(rng.choice([1, 2, 5, 20]))]
        elif rng.random() < 0.05:
            opts += ["--offset", str(rng.choice([1, 5, 100]))]
        if rng.random() < 0.10:
            parts = rel.split("/")
            opts += ["--path-prefix", "/".join(parts[: rng.randint(1, max(1, len(parts) - 1))])]
        if self.active_config and rng.random() < 0.08:
            opts += ["--active-config", self.active_config]
        return opts

    def grep_args(self, rel: str, f: FileNames) -> list[str]:
        rng = self.rng
        flags: list[str] = []
        paths: list[str] = []
        r = rng.random()
        if r < 0.35:
            flags.append("-w")
            pattern = rng.choice(f.idents)
        elif r < 0.55 and f.lines:
            line = rng.choice(f.lines)
            i = rng.randrange(len(line))
            pattern = line[i : i + rng.randint(6, 30)].strip() or line.strip()
            flags.append("-F")
        elif r < 0.70:
            pattern = re.escape(rng.choice(f.funcs or f.idents)) + r"\s*\("
        elif r < 0.80 and f.words:
            flags.append("-i")
            pattern = " ".join(rng.sample(f.words, 1))
        else:
            pattern = rng.choice(f.idents)
            paths.append(os.path.dirname(rel) or ".")
        x = rng.random()
        if x < 0.05:
            flags.append("-l")
        elif x < 0.10:
            flags.append("-c")
        elif x < 0.15:
            flags += ["-C", str(rng.randint(1, 3))]
        if rng.random() < 0.05:
            flags += ["-g", rng.choice(["*.h", "*.c", "!*.h", "*.rst"])]
        if rng.random() < 0.05 and f.funcs:
            flags += ["--within", rng.choice(f.funcs)]
        if self.links and rng.random() < 0.04:
            paths = [rng.choice(self.links)]
        elif not paths and rng.random() < 0.05:
            paths = [rel]
        return flags + ["--", pattern] + paths

    def find_args(self, f: FileNames) -> list[str]:
        rng = self.rng
        name = rng.choice(f.funcs or f.types or f.idents)
        parts = [p for p in name.split("_") if p]
        flags = []
        if rng.random() < 0.15:
            flags += ["--kind", rng.choice(["function", "struct", "macro", "variable"])]
        if rng.random() < 0.15 and len(parts) >= 2:
            return flags + ["--", f"/{re.escape(parts[0])}_.*{re.escape(parts[-1])}/"]
        if not parts:
            return flags + ["--", name]
        start = rng.randrange(len(parts))
        toks = parts[start : start + rng.randint(1, 3)]
        toks = [t[: rng.randint(min(2, len(t)), len(t))] for t in toks]
        return flags + ["--"] + toks

    def search_args(self, f: FileNames) -> list[str]:
        rng = self.rng
        pool = f.words or [p for n in f.funcs or f.idents for p in n.lower().split("_") if len(p) > 2]
        if not pool:
            pool = f.idents
        words = rng.sample(pool, min(len(pool), rng.randint(1, 6)))
        flags = []
        if rng.random() < 0.15:
            flags += ["--kind", rng.choice(["function", "struct", "enum", "typedef"])]
        return flags + ["--"] + words

    def symbols_args(self, rel: str) -> list[str]:
        rng = self.rng
        r = rng.random()
        if r < 0.08 and self.links:
            target = rng.choice(self.links)
        elif r < 0.18:
            target = os.path.dirname(rel) or "."
        else:
            target = rel
        flags = []
        if rng.random() < 0.15:
            flags += ["--from", "end"]
        return flags + ["--", target]

    def query(self, kind: str) -> list[str]:
        rel, f = self.file()
        rng = self.rng
        if kind in ("callers", "callees"):
            args = ["--", self.symbol(f, 0.85)]
        elif kind == "def":
            args = ["--", self.symbol(f, 0.55)]
        elif kind == "refs":
            args = ["--", self.symbol(f, 0.55)]
            if rng.random() < 0.3:
                args = ["--group-by", rng.choice(["auto", "line", "file"])] + args
        elif kind == "body":
            args = ["--", self.symbol(f, 0.7)]
            if rng.random() < 0.2:
                args = ["--max-definitions", str(rng.choice([1, 5]))] + args
        elif kind == "grep":
            args = self.grep_args(rel, f)
        elif kind == "find":
            args = self.find_args(f)
        elif kind == "search":
            args = self.search_args(f)
        elif kind == "symbols":
            args = self.symbols_args(rel)
        else:
            raise ValueError(kind)
        return [kind] + self.common(rel) + args


def make_queries(picker: Picker, n: int) -> list[list[str]]:
    kinds = [KINDS[i % len(KINDS)] for i in range(n)]
    picker.rng.shuffle(kinds)
    return [picker.query(k) for k in kinds]


# --------------------------------------------------------------------------- running


@dataclass
class Binary:
    label: str
    path: str
    index_dir: str


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KNAV_")}


def run_knav(b: Binary, argv: list[str], cwd: str, timeout: float):
    try:
        p = subprocess.run(
            ["knav"] + argv,
            executable=b.path,
            capture_output=True,
            cwd=cwd,
            env=clean_env(),
            timeout=timeout,
        )
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or b"", e.stderr or b""


def normalize(out: bytes, b: Binary) -> str:
    s = out.decode("utf-8", "surrogateescape")
    return s.replace(b.index_dir, "<INDEX_DIR>")


def binary_id(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def prepare_index(b: Binary, tree: str, cwd: str, log) -> dict:
    t = time.monotonic()
    code, out, err = run_knav(b, ["index", "--root", tree, "--index-dir", b.index_dir], cwd, 3600)
    if code != 0:
        raise SystemExit(
            f"{b.label}: `knav index` failed ({code}):\n{out.decode(errors='replace')}"
            f"{err.decode(errors='replace')}"
        )
    log(f"{b.label}: index in {b.index_dir} ready in {time.monotonic() - t:.1f} s: "
        + out.decode(errors="replace").splitlines()[0])
    _, out, _ = run_knav(
        b, ["status", "--root", tree, "--index-dir", b.index_dir, "--format", "json"], cwd, 600
    )
    try:
        r = json.loads(out)["results"]
        return {k: r.get(k) for k in ("files_scanned", "files_unindexed", "symlinks", "size_bytes")}
    except (ValueError, KeyError, TypeError):
        return {}


def short_diff(a: str, b: str, max_lines: int) -> list[str]:
    lines = list(difflib.unified_diff(a.splitlines(), b.splitlines(), "old", "new", n=1, lineterm=""))
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more diff lines)"]
    return lines


def compare_one(i, query, old, new, tree, formats, cwd, timeout, diffs_dir, max_lines):
    res = {"n": i, "kind": query[0], "args": query, "runs": 0, "different": [], "stderr_only": []}
    for fmt in formats:
        outs = []
        for b in (old, new):
            argv = ["--root", tree, "--index-dir", b.index_dir, "--format", fmt] + query
            code, out, err = run_knav(b, argv, cwd, timeout)
            outs.append((code, normalize(out, b), normalize(err, b), out, err))
            res["runs"] += 1
            res.setdefault("exit_" + b.label, code)
        (oc, oo, oe, oraw, oerr), (nc, no, ne, nraw, nerr) = outs
        if oc != nc or oo != no:
            ext = "json" if fmt == "json" else "txt"
            for label, raw, err in (("old", oraw, oerr), ("new", nraw, nerr)):
                (diffs_dir / f"{i:05d}-{label}.{ext}").write_bytes(raw)
                if err:
                    (diffs_dir / f"{i:05d}-{label}.{ext}.stderr").write_bytes(err)
            res["different"].append(
                {
                    "format": fmt,
                    "exit_old": oc,
                    "exit_new": nc,
                    "diff": short_diff(oo, no, max_lines),
                    "stderr_diff": short_diff(oe, ne, 10) if oe != ne else [],
                }
            )
        elif oe != ne:
            res["stderr_only"].append({"format": fmt, "diff": short_diff(oe, ne, 10)})
    return res


def command_line(query, fmt, tree):
    return "KNAV --root {} --index-dir DIR --format {} {}".format(
        shlex.quote(tree), fmt, " ".join(shlex.quote(a) for a in query)
    )


# --------------------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Run random knav queries with two builds on a kernel tree and diff the answers.",
    )
    ap.add_argument("--old", required=True, help="the previous knav binary")
    ap.add_argument("--new", required=True, help="the new knav binary")
    ap.add_argument("--tree", required=True, help="the source tree (Linux 6.12)")
    ap.add_argument("--queries", type=int, default=2400, help="queries in all (default 2400)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--work", default=None, help="indexes, query list and diffs (default: a new /tmp dir)")
    ap.add_argument("--format", choices=["text", "json"], default="text", help="report format")
    ap.add_argument("--jobs", type=int, default=2, help="queries run at a time (default 2)")
    ap.add_argument("--answer-formats", default="json,text", help="knav --format values to compare")
    ap.add_argument(
        "--active-config",
        default=None,
        help="a .config some queries pass as --active-config (default: config.amd64 next to the tree)",
    )
    ap.add_argument("--timeout", type=float, default=300, help="seconds one knav run may take")
    ap.add_argument("--diff-lines", type=int, default=30, help="diff lines shown per difference")
    args = ap.parse_args()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    tree = os.path.realpath(args.tree)
    if not os.path.isdir(tree):
        log(f"no tree at {tree}")
        return 2
    for p in (args.old, args.new):
        if not os.access(p, os.X_OK):
            log(f"not an executable: {p}")
            return 2
    work = Path(args.work) if args.work else Path(
        subprocess.check_output(["mktemp", "-d", "/tmp/compare-answers.XXXXXX"], text=True).strip()
    )
    work.mkdir(parents=True, exist_ok=True)
    work = work.resolve()
    diffs_dir = work / "diffs"
    diffs_dir.mkdir(exist_ok=True)
    for stale in diffs_dir.iterdir():
        stale.unlink()
    active_config = args.active_config
    if active_config is None:
        guess = Path(tree).parent / "config.amd64"
        active_config = str(guess) if guess.is_file() else None
    elif active_config == "":
        active_config = None
    formats = [f for f in args.answer_formats.split(",") if f]

    old = Binary("old", os.path.realpath(args.old), "")
    new = Binary("new", os.path.realpath(args.new), "")
    for b in (old, new):
        b.index_dir = str(work / f"idx-{binary_id(b.path)}")
    index_info = {b.label: prepare_index(b, tree, str(work), log) for b in (old, new)}

    t = time.monotonic()
    picker = Picker(Path(tree), args.seed, active_config)
    queries = make_queries(picker, args.queries)
    (work / f"queries-seed{args.seed}.json").write_text(json.dumps(queries, indent=0) + "\n")
    log(f"{len(queries)} queries picked from {len(picker.cache)} files in {time.monotonic() - t:.1f} s; "
        f"running them in {'+'.join(formats)} with {args.jobs} workers")

    t = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = [
            pool.submit(compare_one, i, q, old, new, tree, formats, str(work), args.timeout,
                        diffs_dir, args.diff_lines)
            for i, q in enumerate(queries)
        ]
        for done, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            results.append(fut.result())
            if done % 200 == 0:
                log(f"  {done}/{len(queries)} queries, {time.monotonic() - t:.0f} s")
    results.sort(key=lambda r: r["n"])
    elapsed = time.monotonic() - t

    summary = {}
    for k in KINDS:
        rs = [r for r in results if r["kind"] == k]
        summary[k] = {
            "queries": len(rs),
            "runs": sum(r["runs"] for r in rs),
            "answered": sum(1 for r in rs if r.get("exit_new") == 0),
            "identical": sum(1 for r in rs if not r["different"]),
            "different": sum(1 for r in rs if r["different"]),
            "stderr_only": sum(1 for r in rs if r["stderr_only"] and not r["different"]),
        }
    total = {c: sum(s[c] for s in summary.values()) for c in next(iter(summary.values()))}
    differing = [r for r in results if r["different"]]
    report = {
        "old": old.path,
        "new": new.path,
        "tree": tree,
        "seed": args.seed,
        "work": str(work),
        "answer_formats": formats,
        "active_config": active_config,
        "index": index_info,
        "seconds": round(elapsed, 1),
        "summary": summary,
        "total": total,
        "differences": [
            {
                "n": r["n"],
                "kind": r["kind"],
                "commands": [command_line(r["args"], d["format"], tree) for d in r["different"]],
                "formats": r["different"],
            }
            for r in differing
        ],
        "stderr_only": [
            {"n": r["n"], "kind": r["kind"], "args": r["args"], "stderr": r["stderr_only"]}
            for r in results
            if r["stderr_only"] and not r["different"]
        ],
    }

    if args.format == "json":
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        print(f"old:  {old.path}  (index {old.index_dir}: {index_info['old']})")
        print(f"new:  {new.path}  (index {new.index_dir}: {index_info['new']})")
        print(f"tree: {tree}; seed {args.seed}; formats {', '.join(formats)}; "
              f"active config {active_config}; {elapsed:.0f} s")
        print()
        print(f"{'kind':<9} {'queries':>8} {'runs':>7} {'answered':>9} {'identical':>10} {'different':>10} "
              f"{'stderr-only':>12}")
        for k, s in list(summary.items()) + [("all", total)]:
            print(f"{k:<9} {s['queries']:>8} {s['runs']:>7} {s['answered']:>9} {s['identical']:>10} "
                  f"{s['different']:>10} {s['stderr_only']:>12}")
        for r in differing:
            print()
            for d in r["different"]:
                print(f"#{r['n']} {r['kind']} [{d['format']}]: exit old {d['exit_old']}, new {d['exit_new']}")
                print("  " + command_line(r["args"], d["format"], tree))
                for line in d["diff"]:
                    print("    " + line)
                if d["stderr_diff"]:
                    print("  stderr:")
                    for line in d["stderr_diff"]:
                        print("    " + line)
        if report["stderr_only"]:
            print()
            print("stderr-only differences:")
            for r in report["stderr_only"]:
                print(f"#{r['n']} {r['kind']}: {' '.join(shlex.quote(a) for a in r['args'])}")
                for d in r["stderr"]:
                    for line in d["diff"]:
                        print("    " + line)
        if differing:
            print()
            print(f"outputs of the differing runs: {diffs_dir}/NNNNN-{{old,new}}.{{json,txt}}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
