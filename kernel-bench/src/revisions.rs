//! The git revisions' scenarios (`knav --rev`), on the repository kernel-bench/make-git-tree.sh
//! builds (v6.1, v6.12 and a branch v6.12-200 with 200 files changed; the work tree at v6.12):
//! v6.1 indexed alone and with v6.12 indexed, v6.12-200 after v6.12, queries at a revision
//! against the same queries on the work tree, and `knav compare`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::proc::{median_p90, run};
use crate::suite::{Revisions, Setup};

/// Symbols asked at a revision and on the work tree.
const SYMBOLS: &[&str] = &[
    "vfs_read",
    "kmalloc",
    "mutex_lock",
    "ext4_mark_inode_dirty",
    "kfree",
];

impl Setup {
    /// The history index on the branch `history` (one commit per directory from v6.1 to
    /// v6.12): its root commit first, then the rest, then a query.
    fn history(
        &self,
        repo: &Path,
        index: &Path,
        store: &Path,
        out: &mut Revisions,
        log: &mut dyn FnMut(&str),
    ) {
        log("revisions: history index of v6.1 (the root commit)");
        let root_cmd = self.knav_in(repo, index, store, &["index", "--history", "--rev", "v6.1"]);
        out.history_root = self.timed(root_cmd, &mut out.notes);
        let before = crate::suite::dir_bytes(&index.join("history"));
        log("revisions: history index of branch history");
        let mut cmd = self.knav_in(
            repo,
            index,
            store,
            &["index", "--history", "--rev", "history"],
        );
        match run(&mut cmd) {
            Ok(r) if r.ok => {
                // "history: N commits read now, M in all; K definitions touched recorded now; …"
                let text = String::from_utf8_lossy(&r.stdout).into_owned();
                let number = |after: &str| -> u64 {
                    text.split(after)
                        .next()
                        .and_then(|head| head.split_whitespace().last())
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0)
                };
                let grown = crate::suite::dir_bytes(&index.join("history")).saturating_sub(before);
                out.history = Some((
                    r.wall,
                    number(" commits read now"),
                    number(" definitions touched recorded now"),
                    grown,
                ));
            }
            Ok(r) => out
                .notes
                .push(format!("knav index --history: {}", r.stderr_tail)),
            Err(e) => out.notes.push(e),
        }
        out.history_query = self.median_of(
            repo,
            index,
            store,
            &["history", "filemap_read", "--rev", "history"],
        );
    }

    fn knav_in(&self, repo: &Path, index: &Path, store: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.knav);
        cmd.env_remove("KNAV_INDEX_DIR")
            .env("KNAV_CACHE_DIR", store)
            .args(args)
            .arg("--root")
            .arg(repo)
            .arg("--index-dir")
            .arg(index);
        cmd
    }

    fn timed(&self, mut cmd: Command, notes: &mut Vec<String>) -> Option<Duration> {
        match run(&mut cmd) {
            Ok(r) if r.ok => Some(r.wall),
            Ok(r) => {
                notes.push(format!("{cmd:?}: {}", r.stderr_tail));
                None
            }
            Err(e) => {
                notes.push(e);
                None
            }
        }
    }

    /// Median of [`Setup::runs`] runs of `args` (one run first, not counted).
    fn median_of(
        &self,
        repo: &Path,
        index: &Path,
        store: &Path,
        args: &[&str],
    ) -> Option<Duration> {
        let mut samples = Vec::new();
        for i in 0..=self.runs {
            let r = run(&mut self.knav_in(repo, index, store, args)).ok()?;
            if i > 0 {
                samples.push(r.wall);
            }
        }
        Some(median_p90(&samples).0)
    }

    /// How many of def, refs, callers and grep of [`SYMBOLS`] answer the same at `--rev v6.12`
    /// as on the work tree (a checkout of v6.12), of how many asked; each difference noted.
    fn agree(
        &self,
        repo: &Path,
        index: &Path,
        store: &Path,
        notes: &mut Vec<String>,
    ) -> (usize, usize) {
        let answer = |args: &[&str]| -> Option<serde_json::Value> {
            let mut all = args.to_vec();
            all.extend(["--format", "json", "--limit", "500"]);
            let out = self.knav_in(repo, index, store, &all).output().ok()?;
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
            Some(serde_json::json!([v["results"], v["total"], v["error"]]))
        };
        let (mut same, mut asked) = (0, 0);
        for sym in SYMBOLS {
            for q in ["def", "refs", "callers", "grep"] {
                asked += 1;
                let at = answer(&[q, sym, "--rev", "v6.12"]);
                match (&at, answer(&[q, sym])) {
                    (Some(a), Some(b)) if *a == b => same += 1,
                    _ => notes.push(format!("`{q} {sym}` differs at --rev v6.12")),
                }
            }
        }
        (same, asked)
    }

    /// The revisions' scenarios on `repo`.
    pub fn revisions(&self, repo: &Path, log: &mut dyn FnMut(&str)) -> Revisions {
        let mut out = Revisions {
            repo: repo.to_path_buf(),
            ..Default::default()
        };
        let notes = &mut out.notes;
        let (cold_index, cold_store) = (
            self.work.join("rev-index-alone"),
            self.work.join("rev-store-alone"),
        );
        let (index, store) = (self.work.join("rev-index"), self.work.join("rev-store"));
        for d in [&cold_index, &cold_store, &index, &store] {
            let _ = std::fs::remove_dir_all(d);
        }
        log("revisions: v6.1 alone");
        out.alone = self.timed(
            self.knav_in(repo, &cold_index, &cold_store, &["index", "--rev", "v6.1"]),
            notes,
        );
        let _ = std::fs::remove_dir_all(&cold_index);
        let _ = std::fs::remove_dir_all(&cold_store);
        log("revisions: the work tree (v6.12)");
        out.work_tree = self.timed(self.knav_in(repo, &index, &store, &["index"]), notes);
        log("revisions: v6.1 with v6.12 indexed");
        out.after = self.timed(
            self.knav_in(repo, &index, &store, &["index", "--rev", "v6.1"]),
            notes,
        );
        log("revisions: v6.12, then v6.12-200");
        out.same = self.timed(
            self.knav_in(repo, &index, &store, &["index", "--rev", "v6.12"]),
            notes,
        );
        out.near = self.timed(
            self.knav_in(repo, &index, &store, &["index", "--rev", "v6.12-200"]),
            notes,
        );
        log("revisions: def, refs and callers at v6.12 and on the work tree");
        let (mut at_rev, mut now) = (Duration::ZERO, Duration::ZERO);
        let mut complete = true;
        for sym in SYMBOLS {
            for q in ["def", "refs", "callers"] {
                let a = self.median_of(repo, &index, &store, &[q, sym, "--rev", "v6.12"]);
                let b = self.median_of(repo, &index, &store, &[q, sym]);
                match (a, b) {
                    (Some(a), Some(b)) => {
                        at_rev += a;
                        now += b;
                    }
                    _ => complete = false,
                }
            }
        }
        if complete {
            out.queries = Some((at_rev, now));
        } else {
            notes.push("a query at a revision or on the work tree failed".into());
        }
        log("revisions: answers at v6.12 against the work tree's");
        out.agree = Some(self.agree(repo, &index, &store, notes));
        log("revisions: compare vfs_read v6.1");
        out.compare = self.median_of(repo, &index, &store, &["compare", "vfs_read", "v6.1"]);
        self.history(repo, &index, &store, &mut out, log);
        let _ = std::fs::remove_dir_all(&index);
        let _ = std::fs::remove_dir_all(&store);
        out
    }
}
