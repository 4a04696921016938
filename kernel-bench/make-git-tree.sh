#!/bin/sh
# Builds the git test ground of `knav --rev`: a repository holding Debian's linux-source-6.1
# as one commit (tag v6.1) and linux-source-6.12 as the next (tag v6.12), a branch v6.12-200
# with 200 .c/.h files changed from v6.12, a branch history replaying v6.1 -> v6.12 one
# directory per commit (thousands of commits), and Debian's
# packaging rule `/*` dropped from each top-level .gitignore (it would ignore every file).
#
#   kernel-bench/make-git-tree.sh OUT [TREE_6_1] [TREE_6_12]
#
# OUT must not exist. The trees default to /var/tmp/k/linux-source-6.1 and -6.12 (see
# TESTING.md for how to get them). Takes a few minutes and about 2.5 GB.
set -eu
out=${1:?usage: make-git-tree.sh OUT [TREE_6_1] [TREE_6_12]}
t61=${2:-/var/tmp/k/linux-source-6.1}
t612=${3:-/var/tmp/k/linux-source-6.12}
for t in "$t61" "$t612"; do
    [ -f "$t/Makefile" ] || { echo "make-git-tree.sh: $t is not a kernel tree" >&2; exit 2; }
done
[ -e "$out" ] && { echo "make-git-tree.sh: $out exists; give a new directory" >&2; exit 2; }
mkdir -p "$out"
cd "$out"
git init -q -b master .
# No gc in the middle of an import: one at the end packs the objects as a clone has them.
git config gc.auto 0
export GIT_AUTHOR_NAME=kernel-bench GIT_AUTHOR_EMAIL=kernel-bench@localhost
export GIT_COMMITTER_NAME=kernel-bench GIT_COMMITTER_EMAIL=kernel-bench@localhost
import() { # import TREE TAG DATE
    find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
    (cd "$1" && tar -cf - --exclude=./.git --exclude=./.knav .) | tar -xf -
    sed -i '\|^/\*$|d' .gitignore
    git add -A
    GIT_AUTHOR_DATE="$3" GIT_COMMITTER_DATE="$3" git commit -q -m "Linux $2 (Debian linux-source)"
    git tag "$2"
}
import "$t61" v6.1 "2022-12-11T14:15:00Z"
import "$t612" v6.12 "2024-11-17T14:15:00Z"
# A branch 200 files away from v6.12: every 150th .c/.h file gains a function.
git checkout -q -b v6.12-200
git ls-files '*.c' '*.h' | awk 'NR % 150 == 0' | head -n 200 | while read -r f; do
    printf '\nint kernel_bench_added_%s(void)\n{\n\treturn 0;\n}\n' "$(echo "$f" | tr -c 'A-Za-z0-9\n' _)" >> "$f"
done
git commit -q -a -m "200 files changed"
git checkout -q master
# A synthetic history for the history index: branch `history` replays v6.1 → v6.12 one
# directory per commit (each directory's .c/.h files as v6.12 has them), written by
# git fast-import from the blobs v6.12 already has.
git diff --name-status --no-renames v6.1 v6.12 -- '*.c' '*.h' > "$out.changes"
git ls-tree -r v6.12 > "$out.blobs"
awk -F'\t' -v from="$(git rev-parse v6.1)" '
    FILENAME == ARGV[1] { split($1, m, " "); blob[$2] = m[1] " " m[3]; next }
    {
        d = $2; if (!sub(/\/[^\/]*$/, "", d)) d = "."
        if (!(d in seen)) { seen[d] = ++ndirs; dirs[ndirs] = d }
        k = seen[d]; lines[k] = lines[k] ($1 == "D" ? "D " $2 : "M " blob[$2] " " $2) "\n"
    }
    END {
        for (k = 1; k <= ndirs; k++) {
            msg = dirs[k] ": as in v6.12"
            t = 1672531200 + k * 3600
            print "commit refs/heads/history"
            print "author kernel-bench <kernel-bench@localhost> " t " +0000"
            print "committer kernel-bench <kernel-bench@localhost> " t " +0000"
            print "data " length(msg); print msg
            if (k == 1) print "from " from
            printf "%s", lines[k]
            print ""
        }
    }' "$out.blobs" "$out.changes" | git fast-import --quiet
rm -f "$out.changes" "$out.blobs"
git gc -q
echo "$out: $(git rev-list --count HEAD) commits, tags $(git tag | tr '\n' ' ')"
