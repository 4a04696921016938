//! `knav cscope -dL -N` against `cscope -dL -N` (issue 48): the same queries on the same
//! symbols, whole process, knav on its index and cscope on the cross-reference it built
//! beforehand (`cscope -R -b -q -k`, the cold build, not counted here); and the recall of
//! cscope's callers (query 3) among knav's, by file and line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::proc::{median_p90, run, Run};

/// What the step runs on (from the run's setup: this module names no other of kernel-bench).
pub struct On {
    /// The tree both tools answer for.
    pub tree: PathBuf,
    /// The knav binary.
    pub knav: PathBuf,
    /// knav's index of the tree.
    pub index_dir: PathBuf,
    /// cscope, when installed.
    pub cscope: Option<PathBuf>,
    /// cscope's cross-reference of the tree.
    pub xref: PathBuf,
    /// Runs per query.
    pub runs: usize,
}

/// The queries timed: references, definitions, callers.
pub const QUERIES: &[u8] = &[0, 1, 3];

/// The functions asked about, hot and cold ([`crate::suite::SYMBOLS`]' functions).
pub const SYMBOLS: &[&str] = &[
    "vfs_read",
    "kmalloc",
    "mutex_lock",
    "kfree",
    "dput",
    "iput",
    "filp_open",
    "kernel_read",
    "ksys_read",
    "generic_file_llseek",
    "wake_up_process",
    "schedule",
];

/// One query on one symbol, both tools.
#[derive(Clone, Debug)]
pub struct Timing {
    /// cscope's query number.
    pub query: u8,
    /// The symbol.
    pub symbol: &'static str,
    /// knav's median whole-process time.
    pub knav: Duration,
    /// cscope's.
    pub cscope: Duration,
    /// The lines each printed.
    pub lines: (usize, usize),
}

/// cscope's callers found among knav's.
#[derive(Clone, Debug, Default)]
pub struct Recall {
    /// cscope's call sites (file and line) knav also lists.
    pub found: usize,
    /// cscope's call sites.
    pub of: usize,
    /// The first of those knav does not list (`file:line symbol`).
    pub missed: Vec<String>,
}

/// The step's results.
#[derive(Clone, Debug, Default)]
pub struct Bench {
    /// Every query timed.
    pub timings: Vec<Timing>,
    /// Query 3's recall over [`SYMBOLS`].
    pub recall: Option<Recall>,
    /// Why something is missing.
    pub notes: Vec<String>,
}

/// Times both tools' answers to [`QUERIES`] on [`SYMBOLS`] and measures query 3's recall.
pub fn measure(on: &On, log: &mut dyn FnMut(&str)) -> Bench {
    let mut out = Bench::default();
    let xref = &on.xref;
    let Some(cscope) = on.cscope.as_ref().filter(|_| xref.is_file()) else {
        out.notes
            .push("cscope or its cross-reference missing: knav cscope not measured".into());
        return out;
    };
    let mut recall = Recall::default();
    for &symbol in SYMBOLS {
        log(&format!("cscope protocol: {symbol}"));
        for &query in QUERIES {
            let flag = format!("-{query}");
            let mut knav = Command::new(&on.knav);
            knav.current_dir(&on.tree)
                .env("KNAV_INDEX_DIR", &on.index_dir)
                .env("KNAV_CACHE_DIR", "off")
                .args(["cscope", "-dL", &flag, symbol, "-P"])
                .arg(&on.tree);
            let mut theirs = Command::new(cscope);
            theirs
                .current_dir(&on.tree)
                .args(["-dL", &flag, symbol, "-f"])
                .arg(xref);
            let (k, c) = match (timed(&mut knav, on.runs), timed(&mut theirs, on.runs)) {
                (Ok(k), Ok(c)) => (k, c),
                (Err(e), _) | (_, Err(e)) => {
                    out.notes.push(format!("-{query} {symbol}: {e}"));
                    continue;
                }
            };
            if query == 3 {
                add_recall(&mut recall, symbol, &k.1.stdout, &c.1.stdout);
            }
            out.timings.push(Timing {
                query,
                symbol,
                knav: k.0,
                cscope: c.0,
                lines: (lines(&k.1.stdout), lines(&c.1.stdout)),
            });
        }
    }
    out.recall = Some(recall);
    out
}

/// The median wall time of `runs` runs of `cmd` and its first run; an error when it fails.
fn timed(cmd: &mut Command, runs: usize) -> Result<(Duration, Run), String> {
    let mut walls = Vec::new();
    let mut first = None;
    for _ in 0..runs.max(1) {
        let r = run(cmd)?;
        if !r.ok {
            return Err(format!("{cmd:?} failed: {}", r.stderr_tail));
        }
        walls.push(r.wall);
        first.get_or_insert(r);
    }
    let first = first.ok_or("not run")?;
    Ok((median_p90(&walls).0, first))
}

fn lines(stdout: &[u8]) -> usize {
    stdout.iter().filter(|&&b| b == b'\n').count()
}

/// The `(file, line)` of each `file function line text` line of `stdout`.
fn sites(stdout: &[u8]) -> BTreeSet<(String, u32)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let path = f.next()?;
            let line = f.nth(1)?.parse().ok()?;
            let path = Path::new(path.strip_prefix("./").unwrap_or(path));
            Some((path.display().to_string(), line))
        })
        .collect()
}

/// cscope's call sites of `symbol` (its query 3 lines `theirs`) counted into `recall`, each
/// found when knav's lines `ours` name the same file and line.
fn add_recall(recall: &mut Recall, symbol: &str, ours: &[u8], theirs: &[u8]) {
    let ours = sites(ours);
    for (path, line) in sites(theirs) {
        recall.of += 1;
        if ours.contains(&(path.clone(), line)) {
            recall.found += 1;
        } else if recall.missed.len() < 20 {
            recall.missed.push(format!("{path}:{line} {symbol}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_counts_cscopes_sites_by_file_and_line() {
        let mut r = Recall::default();
        let theirs = b"./fs/a.c f 3 x(1);\nfs/b.c g 9 x(2);\nfs/c.c <global> 1 x\n";
        let ours = b"fs/a.c f 3 x(1);\nfs/c.c h 1 x\nfs/d.c k 4 p->x(); /* via ops.x */\n";
        add_recall(&mut r, "x", ours, theirs);
        assert_eq!((r.found, r.of), (2, 3));
        assert_eq!(r.missed, ["fs/b.c:9 x"]);
        assert_eq!(lines(theirs), 3);
    }
}
