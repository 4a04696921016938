//! The measurements: cold index builds of every tool, knav's refreshes (CLI and server), query
//! latency per symbol and tool, and answer sizes. Every tool writes its index under the work
//! directory, never into the tree; the files edited for the refresh runs are restored.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::peers::Peers;
use crate::proc::{median_p90, run, Run};

/// The symbols queried: hot and cold, functions, macros and one that the quick subtree (`fs/`)
/// and the fixture also hold.
pub const SYMBOLS: &[&str] = &[
    "vfs_read",
    "kmalloc",
    "kmap",
    "mutex_lock",
    "ext4_mark_inode_dirty",
    "schedule",
    "copy_from_user",
    "spin_lock_irqsave",
    "kfree",
    "alloc_pages",
    "wake_up_process",
    "dput",
    "iput",
    "filp_open",
    "list_add",
    "rcu_read_lock",
    "kernel_read",
    "ksys_read",
    "generic_file_llseek",
    "task_struct",
];

/// Patterns `knav grep` is timed on against `rg -n` (the same flags to both, run in the tree):
/// selective, common, case-insensitive, and without a literal the trigram index can use.
/// A tool timed: see [`TOOL_CASES`].
pub type ToolCase = (
    &'static str,
    &'static [&'static str],
    &'static str,
    &'static str,
    f64,
    f64,
);

/// The tools timed whole process and through `knav serve`: `(label, CLI arguments, MCP tool,
/// MCP arguments, goal in ms for the whole process, goal in ms for a call through the server)`.
/// The first three are the round trips of issue 33 (a warm server answers them in about a
/// millisecond); the rest the tools of issues 15-17.
pub const TOOL_CASES: &[ToolCase] = &[
    (
        "find_definition `vfs_read`",
        &["def", "vfs_read"],
        "find_definition",
        r#"{"symbol":"vfs_read"}"#,
        10.0,
        1.0,
    ),
    (
        "find_callers `vfs_read`",
        &["callers", "vfs_read"],
        "find_callers",
        r#"{"symbol":"vfs_read"}"#,
        10.0,
        1.0,
    ),
    (
        "reachability `ksys_read` → `rw_verify_area`",
        &["reach", "ksys_read", "rw_verify_area"],
        "reachability",
        r#"{"from_symbol":"ksys_read","to_symbol":"rw_verify_area"}"#,
        10.0,
        2.0,
    ),
    (
        "search_symbols `ext4 read iter`",
        &["find", "ext4", "read", "iter"],
        "search_symbols",
        r#"{"query":"ext4 read iter"}"#,
        10.0,
        10.0,
    ),
    (
        "search_files `ext4 inode`",
        &["files", "ext4", "inode"],
        "search_files",
        r#"{"query":"ext4 inode"}"#,
        10.0,
        10.0,
    ),
    (
        "search_code `choose which process to kill when memory runs out`",
        &[
            "search", "choose", "which", "process", "to", "kill", "when", "memory", "runs", "out",
        ],
        "search_code",
        r#"{"query":"choose which process to kill when memory runs out"}"#,
        30.0,
        30.0,
    ),
    (
        "search_docs `out of memory killer`",
        &["docs", "out", "of", "memory", "killer"],
        "search_docs",
        r#"{"query":"out of memory killer"}"#,
        50.0,
        50.0,
    ),
    (
        "find_callers `ext4_file_read_iter` (through ops tables)",
        &["callers", "ext4_file_read_iter"],
        "find_callers",
        r#"{"symbol":"ext4_file_read_iter"}"#,
        20.0,
        20.0,
    ),
    (
        "change_impact `vfs_read`, depth 2",
        &["impact", "vfs_read"],
        "change_impact",
        r#"{"symbol":"vfs_read"}"#,
        100.0,
        100.0,
    ),
];

/// One of [`TOOL_CASES`] timed.
#[derive(Clone, Debug)]
pub struct ToolTiming {
    /// What was asked.
    pub label: &'static str,
    /// Whole process, median.
    pub process: Option<Duration>,
    /// Through `knav serve`, median of 5 after one call.
    pub serve: Option<Duration>,
    /// The goal for the whole process, in milliseconds.
    pub process_goal_ms: f64,
    /// The goal for a call through the server, in milliseconds.
    pub serve_goal_ms: f64,
}

pub const GREP_PATTERNS: &[&[&str]] = &[
    &["vfs_iter_read"],
    &[r"EXPORT_SYMBOL\(kmap"],
    &["sched_switch"],
    &["CONFIG_HIGHMEM"],
    &["compatible = \"arm,cortex-a9"],
    &["Linus Torvalds"],
    &[r"^#define\s+PAGE_SHIFT"],
    &[r"\bmutex_lock_nested\b"],
    &["-F", "struct file_operations ext4"],
    &["-w", "ext4_mark_inode_dirty"],
    &["copy_from_user"],
    &["spin_lock_irqsave"],
    &["kmalloc"],
    &["TODO"],
    &["return"],
    &["-i", "use-after-free"],
    &["-i", "lockdep_assert_held"],
    &["-i", "ext4 error"],
    &["[A-Z_]{40,}"],
    &["zz"],
    &[r"\w+_lock\(&\w+->"],
    &["-g", "*.rst", "kmalloc"],
];

/// One pattern timed with `knav grep` and `rg -n` (medians, warm cache).
#[derive(Clone, Debug)]
pub struct GrepTiming {
    /// The flags and pattern, as given to both.
    pub args: String,
    /// `knav grep`, whole process.
    pub knav: Duration,
    /// `rg -n`, whole process.
    pub rg: Duration,
    /// Both exited with 0 or 1.
    pub ok: bool,
}

/// The grep section: per-pattern timings, a selective pattern through `knav serve`, and the
/// text index's bytes against the bytes it covers.
#[derive(Clone, Debug, Default)]
pub struct Grep {
    /// One row per pattern.
    pub timings: Vec<GrepTiming>,
    /// `search_text` of a selective pattern through `knav serve` (median of 5).
    pub serve: Option<Duration>,
    /// Bytes of the text index and of the files it covers.
    pub index_bytes: Option<(u64, u64)>,
    /// What could not be measured.
    pub notes: Vec<String>,
}

/// What to measure and where.
pub struct Setup {
    /// The tree every tool indexes.
    pub tree: PathBuf,
    /// Where indexes and scratch files go.
    pub work: PathBuf,
    /// The knav binary.
    pub knav: PathBuf,
    /// Runs per query.
    pub runs: usize,
    /// Parallel ctags processes.
    pub jobs: usize,
    /// Cold builds of knav and of gtags, in turns (the median of each is kept).
    pub cold_runs: usize,
    /// A .config: knav's questions are asked again with `--active-config` it.
    pub config: Option<PathBuf>,
}

/// One cold build.
#[derive(Clone, Debug)]
pub struct Build {
    /// Tool label.
    pub tool: String,
    /// `None` when the tool is missing; else the run (or the error).
    pub run: Option<Result<Run, String>>,
    /// Bytes of the index it wrote.
    pub bytes: u64,
    /// The wall time of every run when there were several (`run` is their median).
    pub walls: Vec<Duration>,
}

impl Build {
    /// One build from `tool`'s runs: the median run by wall time, or the first that failed.
    fn median(tool: &str, mut runs: Vec<(Option<Result<Run, String>>, u64)>) -> Build {
        let failed = runs
            .iter()
            .position(|(r, _)| !matches!(r, Some(Ok(run)) if run.ok));
        let walls = runs
            .iter()
            .filter_map(|(r, _)| r.as_ref()?.as_ref().ok().map(|run| run.wall))
            .collect();
        let (run, bytes) = match failed {
            Some(i) => runs.swap_remove(i),
            None => {
                runs.sort_by_key(|(r, _)| r.as_ref().and_then(|r| r.as_ref().ok()).map(|r| r.wall));
                let mid = runs.len() / 2;
                runs.swap_remove(mid)
            }
        };
        Build {
            tool: tool.into(),
            run,
            bytes,
            walls,
        }
    }
}

/// Latency of one tool on one symbol.
#[derive(Clone, Debug)]
pub struct Latency {
    /// Question kind: def, refs or callers.
    pub question: &'static str,
    /// Tool label.
    pub tool: String,
    /// The symbol.
    pub symbol: &'static str,
    /// Median and 90th percentile.
    pub median: Duration,
    /// 90th percentile.
    pub p90: Duration,
    /// Exit status of the first run was 0 (or 1 for "not found").
    pub ok: bool,
}

/// knav's refresh times.
#[derive(Clone, Debug, Default)]
pub struct Refresh {
    /// `knav index` with nothing changed (median of 3).
    pub unchanged: Option<Duration>,
    /// `knav index` after appending a function to a `.c` file.
    pub c_edit: Option<Duration>,
    /// `knav index` after appending a declaration to a header.
    pub h_edit: Option<Duration>,
    /// The files edited.
    pub files: Vec<String>,
    /// knav serve: a call past the debounce window with nothing changed (median of 5).
    pub serve_unchanged: Option<Duration>,
    /// knav serve: a call past the window after a `.c` edit, which sees the edit.
    pub serve_c_edit: Option<Duration>,
    /// Why a measurement is missing.
    pub notes: Vec<String>,
}

/// What the fact store's scenarios measured (kernel-bench/src/facts.rs).
#[derive(Default)]
pub struct Facts {
    /// The tree indexed with an empty store, which it fills.
    pub fill: Option<Duration>,
    /// Its index bytes.
    pub tree_bytes: u64,
    /// The tree indexed again into another index directory, every file's facts from the store.
    pub from_store: Option<Duration>,
    /// That index's segment is the first one's, byte for byte.
    pub identical: Option<bool>,
    /// A copy of the tree with 200 `.c`/`.h` files changed, indexed with the same store.
    pub copy: Option<Duration>,
    /// The other version: its name, indexed with an empty store, and with the first tree's.
    pub other: Option<(String, Option<Duration>, Option<Duration>)>,
    /// Its index bytes.
    pub other_bytes: u64,
    /// The store's bytes after the first tree and the other version.
    pub store_bytes: u64,
    /// Why a measurement is missing.
    pub notes: Vec<String>,
}

/// What the revisions' scenarios measured (kernel-bench/src/revisions.rs).
#[derive(Default)]
pub struct Revisions {
    /// The repository.
    pub repo: PathBuf,
    /// `knav index --rev v6.1` with nothing indexed and an empty store.
    pub alone: Option<Duration>,
    /// `knav index` of the work tree (v6.12), which fills the store.
    pub work_tree: Option<Duration>,
    /// `knav index --rev v6.1` after it.
    pub after: Option<Duration>,
    /// `knav index --rev v6.12` (the work tree's files, as a revision).
    pub same: Option<Duration>,
    /// `knav index --rev v6.12-200` after v6.12.
    pub near: Option<Duration>,
    /// Medians of def, refs and callers of five symbols summed: at `--rev v6.12`, and on the
    /// work tree.
    pub queries: Option<(Duration, Duration)>,
    /// Answers at `--rev v6.12` equal to the work tree's, of those asked.
    pub agree: Option<(usize, usize)>,
    /// `knav compare vfs_read v6.1`: median.
    pub compare: Option<Duration>,
    /// `knav index --history --rev v6.1` (the root commit: all of v6.1).
    pub history_root: Option<Duration>,
    /// `knav index --history --rev history` after it: wall, commits read, definitions touched,
    /// bytes the history grew by.
    pub history: Option<(Duration, u64, u64, u64)>,
    /// `knav history filemap_read --rev history`: median.
    pub history_query: Option<Duration>,
    /// Why a measurement is missing.
    pub notes: Vec<String>,
}

/// Everything measured.
pub struct Results {
    /// Cold builds.
    pub builds: Vec<Build>,
    /// knav refreshes.
    pub refresh: Refresh,
    /// Query latencies.
    pub latencies: Vec<Latency>,
    /// Answer sizes per symbol.
    pub sizes: Vec<Size>,
    /// knav grep against rg.
    pub grep: Grep,
    /// The search, pointer and review tools.
    pub tools: Vec<ToolTiming>,
    /// search_code's and search_docs' answers to the benchmark's questions.
    pub quality: Vec<crate::quality::Score>,
    /// The pointer-call audit's precision per certainty and half.
    pub audit: Vec<crate::audit::Precision>,
    /// The audit of missing definitions.
    pub missing: Option<crate::missing::Audit>,
    /// The fact store's scenarios.
    pub facts: Option<Facts>,
    /// The git revisions' scenarios (with `--git`).
    pub revisions: Option<Revisions>,
    /// Each MCP tool's default page for typical questions.
    pub tokens: Vec<crate::tokens::Page>,
    /// `knav cscope -dL -N` against `cscope -dL -N` (kernel-bench/src/cscope.rs).
    pub cscope: Option<crate::cscope::Bench>,
    /// `knav lsp` on the index: start, request latencies, memory.
    pub lsp: crate::lsp::Lsp,
}

/// Bytes of each answer to the questions about one symbol.
#[derive(Clone, Debug)]
pub struct Size {
    /// The symbol.
    pub symbol: &'static str,
    /// `knav def`, text.
    pub def_text: usize,
    /// `knav refs`, text.
    pub refs_text: usize,
    /// `knav def --format json`.
    pub def_json: usize,
    /// `knav refs --format json`.
    pub refs_json: usize,
    /// `rg -w -n`, when ripgrep is installed.
    pub rg: Option<usize>,
}

/// Bytes of everything under `p`.
pub fn dir_bytes(p: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return 0;
    };
    if meta.is_file() {
        return meta.len();
    }
    if !meta.is_dir() {
        return 0;
    }
    std::fs::read_dir(p)
        .map(|rd| rd.flatten().map(|e| dir_bytes(&e.path())).sum())
        .unwrap_or(0)
}

/// `.c`/`.h` files under `root` with their sizes (no symlinks, no VCS or index directories).
pub fn c_files(root: &Path) -> Vec<(PathBuf, u64)> {
    files(root, |name| name.ends_with(".c") || name.ends_with(".h"))
}

/// Reads every file under `root` once, so that each tool's first build finds the tree in the
/// page cache as the later ones do: with a tree not cached (a fresh unpack, a cache emptied by
/// other work), the first cold build would pay for the disk and the tool run after it gain
/// from its reads.
fn warm_page_cache(root: &Path) {
    let mut buf = Vec::new();
    for (path, _) in files(root, |_| true) {
        if let Ok(mut f) = std::fs::File::open(&path) {
            buf.clear();
            let _ = std::io::Read::read_to_end(&mut f, &mut buf);
        }
    }
}

/// The files under `root` whose names `keep` accepts, with their sizes (no symlinks, no VCS
/// or index directories).
fn files(root: &Path, keep: impl Fn(&str) -> bool) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let name = e.file_name();
            let name = name.to_string_lossy();
            if ft.is_dir() {
                if !matches!(name.as_ref(), ".git" | ".knav" | ".hg" | ".svn" | ".pc") {
                    stack.push(e.path());
                }
            } else if ft.is_file() && keep(&name) {
                out.push((e.path(), e.metadata().map_or(0, |m| m.len())));
            }
        }
    }
    out.sort();
    out
}

fn fresh_dir(p: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(p);
    std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))
}

impl Setup {
    fn knav(&self) -> Command {
        let mut c = Command::new(&self.knav);
        c.env_remove("KNAV_INDEX_DIR")
            .env("KNAV_CACHE_DIR", self.cold_store());
        c
    }

    /// The fact store of the cold builds, emptied before each: a cold build computes every
    /// file's facts and keeps them.
    fn cold_store(&self) -> PathBuf {
        self.work.join("facts-cold")
    }

    /// A knav command on the tree and its index (`--root`, `--index-dir`), its subcommand
    /// and arguments to be added.
    pub fn knav_on_tree(&self) -> Command {
        let mut c = self.knav();
        c.arg("--root")
            .arg(&self.tree)
            .arg("--index-dir")
            .arg(self.knav_index_dir());
        c
    }

    /// Where the step of `knav cscope` against cscope runs ([`crate::cscope::On`]).
    pub fn cscope_on(&self, peers: &Peers) -> crate::cscope::On {
        crate::cscope::On {
            tree: self.tree.clone(),
            knav: self.knav.clone(),
            index_dir: self.knav_index_dir(),
            cscope: peers.cscope.path.clone(),
            xref: self.cscope_file(),
            runs: self.runs,
        }
    }

    fn knav_index_dir(&self) -> PathBuf {
        self.work.join("knav")
    }

    /// The audit of missing definitions on knav's index, with cscope's sample when its
    /// cross-reference was built.
    pub fn missing(&self) -> Result<crate::missing::Audit, String> {
        let cscope = Some(self.cscope_file()).filter(|f| f.is_file());
        crate::missing::measure(&self.tree, &self.knav_index_dir(), cscope.as_deref())
    }

    fn gtags_dir(&self) -> PathBuf {
        self.work.join("gtags")
    }

    fn tags_file(&self) -> PathBuf {
        self.work.join("ctags/tags")
    }

    fn cscope_file(&self) -> PathBuf {
        self.work.join("cscope/cscope.out")
    }

    /// Cold builds, each from an empty index.
    pub fn cold_builds(&self, peers: &Peers, log: &mut dyn FnMut(&str)) -> Vec<Build> {
        let mut out = Vec::new();
        let tree = &self.tree;

        log("reading the tree once (page cache)");
        warm_page_cache(tree);
        // knav and gtags in turns, so that a slow spell of the machine falls on both.
        let (mut knav, mut gtags) = (Vec::new(), Vec::new());
        for i in 1..=self.cold_runs {
            log(&format!("cold build {i}/{}: knav", self.cold_runs));
            let dir = self.knav_index_dir();
            let _ = std::fs::remove_dir_all(&dir);
            let _ = std::fs::remove_dir_all(self.cold_store());
            let r = run(self
                .knav()
                .arg("index")
                .arg("--root")
                .arg(tree)
                .arg("--index-dir")
                .arg(&dir));
            knav.push((Some(r), dir_bytes(&dir)));

            log(&format!("cold build {i}/{}: gtags", self.cold_runs));
            let dir = self.gtags_dir();
            let r = peers.gtags.cmd().map(|mut c| {
                fresh_dir(&dir)?;
                run(c.current_dir(tree).arg(&dir))
            });
            gtags.push((r, dir_bytes(&dir)));
        }
        out.push(Build::median("knav index", knav));
        out.push(Build::median("gtags", gtags));

        log("cold build: ctags -R");
        let tags = self.tags_file();
        let r = peers.ctags.cmd().map(|mut c| {
            fresh_dir(tags.parent().unwrap_or(&self.work))?;
            run(c
                .current_dir(tree)
                .args(["-R", "--sort=no", "-f"])
                .arg(&tags)
                .arg("."))
        });
        out.push(Build {
            tool: "ctags -R (unsorted)".into(),
            run: r,
            bytes: dir_bytes(&tags),
            walls: Vec::new(),
        });

        log("cold build: ctags in parallel");
        let dir = self.work.join("ctags-par");
        let r = peers.ctags.path.as_ref().map(|ctags| {
            fresh_dir(&dir)?;
            self.parallel_ctags(ctags, &dir)
        });
        out.push(Build {
            tool: format!("ctags, {} processes (C files)", self.jobs),
            run: r,
            bytes: dir_bytes(&dir),
            walls: Vec::new(),
        });

        log("cold build: cscope");
        let file = self.cscope_file();
        let r = peers.cscope.cmd().map(|mut c| {
            fresh_dir(file.parent().unwrap_or(&self.work))?;
            run(c
                .current_dir(tree)
                .args(["-R", "-b", "-q", "-k", "-f"])
                .arg(&file))
        });
        out.push(Build {
            tool: "cscope -bqk".into(),
            run: r,
            bytes: dir_bytes(file.parent().unwrap_or(&self.work)),
            walls: Vec::new(),
        });
        out
    }

    /// ctags over the tree's C files split by bytes into `jobs` lists, all processes at once;
    /// the wall time is the group's, the peak RSS the largest process's.
    fn parallel_ctags(&self, ctags: &Path, dir: &Path) -> Result<Run, String> {
        let mut files = c_files(&self.tree);
        files.sort_by_key(|f| std::cmp::Reverse(f.1));
        let jobs = self.jobs.max(1);
        let mut lists = vec![(0u64, String::new()); jobs];
        for (path, size) in files {
            // The lightest list takes the next largest file.
            let Some(l) = lists.iter_mut().min_by_key(|l| l.0) else {
                break;
            };
            l.0 += size;
            l.1.push_str(&path.to_string_lossy());
            l.1.push('\n');
        }
        let started = Instant::now();
        let handles: Vec<_> = lists
            .into_iter()
            .enumerate()
            .map(|(i, (_, list))| {
                let list_file = dir.join(format!("list-{i}"));
                let tags = dir.join(format!("tags-{i}"));
                let ctags = ctags.to_path_buf();
                std::thread::spawn(move || {
                    std::fs::write(&list_file, list).map_err(|e| e.to_string())?;
                    run(Command::new(ctags)
                        .args(["--sort=no", "--language-force=C", "-L"])
                        .arg(&list_file)
                        .arg("-f")
                        .arg(&tags))
                })
            })
            .collect();
        let mut runs = Vec::new();
        for h in handles {
            runs.push(
                h.join()
                    .map_err(|_| "a ctags thread panicked".to_string())??,
            );
        }
        let wall = started.elapsed();
        for i in 0..jobs {
            let _ = std::fs::remove_file(dir.join(format!("list-{i}")));
        }
        Ok(Run {
            wall,
            max_rss_kb: runs.iter().map(|r| r.max_rss_kb).max().unwrap_or(0),
            ok: runs.iter().all(|r| r.ok),
            stdout: Vec::new(),
            stderr_tail: runs
                .iter()
                .map(|r| r.stderr_tail.as_str())
                .find(|s| !s.is_empty())
                .unwrap_or("")
                .to_string(),
        })
    }

    fn knav_refresh(&self) -> Result<Duration, String> {
        let r = run(self
            .knav()
            .arg("index")
            .arg("--root")
            .arg(&self.tree)
            .arg("--index-dir")
            .arg(self.knav_index_dir()))?;
        if !r.ok {
            return Err(format!("knav index failed: {}", r.stderr_tail));
        }
        Ok(r.wall)
    }

    /// A `.c` and a header to edit: well-known ones when the tree has them, else the first.
    fn edit_targets(&self) -> (Option<PathBuf>, Option<PathBuf>) {
        let pick = |candidates: &[&str], ext: &str| {
            candidates
                .iter()
                .map(|c| self.tree.join(c))
                .find(|p| p.is_file())
                .or_else(|| {
                    c_files(&self.tree)
                        .into_iter()
                        .map(|f| f.0)
                        .find(|p| p.to_string_lossy().ends_with(ext))
                })
        };
        (
            pick(&["fs/read_write.c", "read_write.c"], ".c"),
            pick(&["include/linux/kref.h", "internal.h"], ".h"),
        )
    }

    /// knav's refreshes: unchanged, one `.c` edited, one header edited; then the same questions
    /// through `knav serve` (debounce 0.2 s).
    pub fn refresh(&self, log: &mut dyn FnMut(&str)) -> Refresh {
        let mut out = Refresh::default();
        log("refresh: nothing changed");
        let _ = self.knav_refresh();
        let mut samples = Vec::new();
        for _ in 0..3 {
            match self.knav_refresh() {
                Ok(d) => samples.push(d),
                Err(e) => out.notes.push(e),
            }
        }
        if !samples.is_empty() {
            out.unchanged = Some(median_p90(&samples).0);
        }
        let (c, h) = self.edit_targets();
        for (file, decl, is_c) in [
            (c, "\nint knav_bench_probe_c(void) { return 1; }\n", true),
            (h, "\nint knav_bench_probe_h(void);\n", false),
        ] {
            let Some(file) = file else {
                out.notes.push(format!(
                    "no {} file to edit",
                    if is_c { ".c" } else { ".h" }
                ));
                continue;
            };
            log(&format!("refresh: {} edited", file.display()));
            let rel = file
                .strip_prefix(&self.tree)
                .unwrap_or(&file)
                .display()
                .to_string();
            out.files.push(rel);
            // Three rounds, the median: the first after the peers' builds can find knav's
            // index evicted from the page cache (cscope's sort alone takes gigabytes).
            let mut samples = Vec::new();
            for _ in 0..3 {
                match Edited::append(&file, decl).and_then(|_edit| self.knav_refresh()) {
                    Ok(d) => samples.push(d),
                    Err(e) => out.notes.push(e),
                }
                let _ = self.knav_refresh(); // back to the original
            }
            if !samples.is_empty() {
                let d = median_p90(&samples).0;
                if is_c {
                    out.c_edit = Some(d);
                } else {
                    out.h_edit = Some(d);
                }
            }
        }
        log("refresh: knav serve");
        if let Err(e) = self.serve_refresh(&mut out) {
            out.notes.push(format!("knav serve: {e}"));
        }
        out
    }

    fn serve_refresh(&self, out: &mut Refresh) -> Result<(), String> {
        let (Some(c), _) = self.edit_targets() else {
            return Err("no .c file to edit".into());
        };
        let debounce = Duration::from_millis(200);
        let result = self.with_server(&format!("{}", debounce.as_secs_f64()), |mcp| {
            // The first call checks the whole tree and starts watching it.
            mcp.find_definition("vfs_read")?;
            let mut samples = Vec::new();
            for _ in 0..5 {
                std::thread::sleep(debounce + Duration::from_millis(50));
                samples.push(mcp.find_definition("vfs_read")?.0);
            }
            out.serve_unchanged = Some(median_p90(&samples).0);
            let edit = Edited::append(&c, "\nint knav_bench_probe_s(void) { return 2; }\n")?;
            std::thread::sleep(debounce + Duration::from_millis(50));
            let (d, answer) = mcp.find_definition("knav_bench_probe_s")?;
            drop(edit);
            if answer.contains("\"isError\":true") {
                return Err(format!("the edit was not seen: {answer}"));
            }
            out.serve_c_edit = Some(d);
            Ok(())
        });
        let _ = self.knav_refresh();
        result
    }

    /// Query latency and answer sizes.
    pub fn queries(
        &self,
        peers: &Peers,
        symbols: &[&'static str],
        only: &[String],
        log: &mut dyn FnMut(&str),
    ) -> (Vec<Latency>, Vec<Size>) {
        let asked = |q: &str| only.is_empty() || only.iter().any(|o| o == q);
        let mut lat = Vec::new();
        let mut sizes = Vec::new();
        let gtags_env = |c: &mut Command| {
            c.current_dir(&self.tree)
                .env("GTAGSROOT", &self.tree)
                .env("GTAGSDBPATH", self.gtags_dir());
        };
        let have_gtags = self.gtags_dir().join("GTAGS").is_file();
        let have_tags = self.tags_file().is_file();
        let have_cscope = self.cscope_file().is_file();
        for &sym in symbols {
            log(&format!("queries: {sym}"));
            let knav = |args: &[&str]| {
                let mut c = self.knav();
                c.args(args)
                    .arg(sym)
                    .arg("--root")
                    .arg(&self.tree)
                    .arg("--index-dir")
                    .arg(self.knav_index_dir());
                c
            };
            let mut cases: Vec<(&'static str, String, Command)> = vec![
                ("def", "knav def".into(), knav(&["def"])),
                ("refs", "knav refs".into(), knav(&["refs"])),
                ("callers", "knav callers".into(), knav(&["callers"])),
            ];
            if let Some(config) = self.config.as_ref().and_then(|c| c.to_str()) {
                for q in ["def", "refs", "callers"] {
                    cases.push((
                        q,
                        format!("knav {q} --active-config"),
                        knav(&[q, "--active-config", config]),
                    ));
                }
            }
            if let (Some(mut c), true) = (peers.global.cmd(), have_gtags) {
                gtags_env(&mut c);
                c.args(["-x", sym]);
                cases.push(("def", "global -x".into(), c));
            }
            if let (Some(mut c), true) = (peers.global.cmd(), have_gtags) {
                gtags_env(&mut c);
                c.args(["-rx", sym]);
                cases.push(("refs", "global -rx".into(), c));
            }
            if let (Some(mut c), true) = (peers.readtags.cmd(), have_tags) {
                c.arg("-t").arg(self.tags_file()).arg(sym);
                cases.push(("def", "readtags (unsorted tags)".into(), c));
            }
            for (q, flag) in [("refs", "-L0"), ("callers", "-L3")] {
                if let (Some(mut c), true) = (peers.cscope.cmd(), have_cscope) {
                    c.current_dir(&self.tree)
                        .args(["-d", flag, sym, "-f"])
                        .arg(self.cscope_file());
                    cases.push((q, format!("cscope {flag}"), c));
                }
            }
            let mut rg_bytes = None;
            if let Some(mut c) = peers.rg.cmd() {
                c.current_dir(&self.tree).args(["-w", "-n", sym, "."]);
                cases.push(("def", "rg -w".into(), c));
                if let Some(mut c) = peers.rg.cmd() {
                    c.current_dir(&self.tree).args(["-w", "-n", sym, "."]);
                    cases.push(("refs", "rg -w".into(), c));
                }
            }
            for (question, tool, mut cmd) in cases {
                // rg answers both def and refs; its size is wanted either way.
                let size_still_needed = tool == "rg -w" && rg_bytes.is_none();
                if !(asked(question) || size_still_needed) {
                    continue;
                }
                let mut samples = Vec::new();
                let mut first: Option<Run> = None;
                for _ in 0..self.runs.max(1) {
                    match run(&mut cmd) {
                        Ok(r) => {
                            samples.push(r.wall);
                            first.get_or_insert(r);
                        }
                        Err(_) => break,
                    }
                }
                let (median, p90) = median_p90(&samples);
                let bytes = first.as_ref().map_or(0, |r| r.stdout.len());
                if tool == "rg -w" {
                    rg_bytes = Some(bytes);
                }
                lat.push(Latency {
                    question,
                    tool,
                    symbol: sym,
                    median,
                    p90,
                    ok: first.is_some(),
                });
            }
            let size = |args: &[&str]| run(&mut knav(args)).map_or(0, |r| r.stdout.len());
            sizes.push(Size {
                symbol: sym,
                def_text: size(&["def"]),
                refs_text: size(&["refs"]),
                def_json: size(&["def", "--format", "json"]),
                refs_json: size(&["refs", "--format", "json"]),
                rg: rg_bytes,
            });
        }
        (lat, sizes)
    }
}

impl Setup {
    /// Times `knav grep` against `rg -n` on [`GREP_PATTERNS`] (each run once first, so both
    /// find the tree in the page cache), then a selective pattern through `knav serve`.
    pub fn grep(&self, peers: &Peers, log: &mut dyn FnMut(&str)) -> Grep {
        let mut out = Grep {
            index_bytes: self.text_index_bytes(),
            ..Default::default()
        };
        let Some(rg) = peers.rg.cmd() else {
            out.notes.push("rg is missing: grep not compared".into());
            return out;
        };
        let rg_program = rg.get_program().to_owned();
        for args in GREP_PATTERNS {
            log(&format!("grep: {}", args.join(" ")));
            let mut knav = self.knav();
            knav.arg("grep")
                .args(*args)
                .arg("--root")
                .arg(&self.tree)
                .arg("--index-dir")
                .arg(self.knav_index_dir());
            let mut rg = Command::new(&rg_program);
            rg.current_dir(&self.tree).arg("-n").args(*args);
            let mut ok = true;
            let mut times = (Vec::new(), Vec::new());
            for round in 0..=self.runs.max(1) {
                for (cmd, samples) in [(&mut knav, &mut times.0), (&mut rg, &mut times.1)] {
                    match run(cmd) {
                        // grep's status: 0 with hits, 1 without.
                        Ok(r) if r.ok || r.stdout.is_empty() => {
                            if round > 0 {
                                samples.push(r.wall);
                            }
                        }
                        _ => ok = false,
                    }
                }
            }
            out.timings.push(GrepTiming {
                args: args.join(" "),
                knav: median_p90(&times.0).0,
                rg: median_p90(&times.1).0,
                ok,
            });
        }
        log("grep: knav serve");
        match self.serve_grep() {
            Ok(d) => out.serve = Some(d),
            Err(e) => out.notes.push(format!("knav serve: {e}")),
        }
        out
    }

    /// Times each of [`TOOL_CASES`] as a whole process and through one `knav serve`.
    pub fn tools(&self, log: &mut dyn FnMut(&str)) -> Vec<ToolTiming> {
        let mut out = Vec::new();
        for &(label, args, _, _, process_goal_ms, serve_goal_ms) in TOOL_CASES {
            log(&format!("tools: {label}"));
            let mut knav = self.knav();
            knav.args(args)
                .arg("--root")
                .arg(&self.tree)
                .arg("--index-dir")
                .arg(self.knav_index_dir());
            let mut samples = Vec::new();
            for round in 0..=self.runs.max(1) {
                match run(&mut knav) {
                    Ok(r) if r.ok => {
                        if round > 0 {
                            samples.push(r.wall);
                        }
                    }
                    _ => break,
                }
            }
            out.push(ToolTiming {
                label,
                process: (!samples.is_empty()).then(|| median_p90(&samples).0),
                serve: None,
                process_goal_ms,
                serve_goal_ms,
            });
        }
        log("tools: knav serve");
        let served = self.with_server("3600", |mcp| {
            let mut times = Vec::new();
            for &(_, _, tool, arguments, _, _) in TOOL_CASES {
                let call = format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#);
                let first = mcp.request("tools/call", &call)?;
                if first.contains("\"isError\":true") {
                    times.push(None);
                    continue;
                }
                let mut samples = Vec::new();
                for _ in 0..5 {
                    let t = Instant::now();
                    mcp.request("tools/call", &call)?;
                    samples.push(t.elapsed());
                }
                times.push(Some(median_p90(&samples).0));
            }
            Ok(times)
        });
        if let Ok(times) = served {
            for (t, d) in out.iter_mut().zip(times) {
                t.serve = d;
            }
        }
        out
    }

    /// Each of [`crate::tokens::QUESTIONS`]' default page through one `knav serve`.
    pub fn tokens(&self, log: &mut dyn FnMut(&str)) -> Vec<crate::tokens::Page> {
        log("tokens: knav serve");
        let pages = self.with_server("3600", |mcp| {
            Ok(crate::tokens::measure(&self.tree, &mut |tool, args| {
                let call = format!(r#"{{"name":"{tool}","arguments":{args}}}"#);
                mcp.request("tools/call", &call)
            }))
        });
        pages.unwrap_or_else(|e| {
            log(&format!("tokens not measured: {e}"));
            Vec::new()
        })
    }

    /// Bytes of the text index (its `tx-` directory) and of the files it covers (the
    /// manifest's `text.bytes`).
    fn text_index_bytes(&self) -> Option<(u64, u64)> {
        let dir = self.knav_index_dir();
        let manifest = std::fs::read_to_string(dir.join("CURRENT")).ok()?;
        let text = &manifest[manifest.find("\"text\":")?..];
        let name = text.split("\"dir\": \"").nth(1)?.split('"').next()?;
        let covered = text.split("\"bytes\": ").nth(1)?;
        let covered: u64 = covered
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        Some((dir_bytes(&dir.join(name)), covered))
    }

    /// The median of 5 `search_text` calls for a selective pattern through `knav serve`.
    fn serve_grep(&self) -> Result<Duration, String> {
        self.with_server("3600", |mcp| {
            let call = r#"{"name":"search_text","arguments":{"pattern":"vfs_iter_read"}}"#;
            let first = mcp.request("tools/call", call)?;
            if first.contains("\"isError\":true") {
                return Err(format!("search_text failed: {first}"));
            }
            let mut samples = Vec::new();
            for _ in 0..5 {
                let t = Instant::now();
                mcp.request("tools/call", call)?;
                samples.push(t.elapsed());
            }
            Ok(median_p90(&samples).0)
        })
    }

    /// Runs `f` against a `knav serve` of the tree (debounce `debounce` seconds) that it has
    /// started and initialized, and stops the server.
    fn with_server<T>(
        &self,
        debounce: &str,
        f: impl FnOnce(&mut Session) -> Result<T, String>,
    ) -> Result<T, String> {
        let mut child = self
            .knav()
            .arg("serve")
            .arg("--root")
            .arg(&self.tree)
            .arg("--index-dir")
            .arg(self.knav_index_dir())
            .arg("--debounce")
            .arg(debounce)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let result = (|| {
            let mut mcp = Session {
                stdin: child.stdin.take().ok_or("no stdin")?,
                lines: BufReader::new(child.stdout.take().ok_or("no stdout")?).lines(),
                id: 0,
            };
            mcp.request(
                "initialize",
                r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"kernel-bench","version":"1"}}"#,
            )?;
            mcp.notify("notifications/initialized")?;
            f(&mut mcp)
        })();
        let _ = child.kill();
        let _ = child.wait();
        result
    }
}

/// A minimal MCP client session over a child's stdio (one JSON-RPC message per line).
struct Session {
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    id: u64,
}

impl Session {
    fn send(&mut self, msg: &str) -> Result<(), String> {
        writeln!(self.stdin, "{msg}").map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())
    }

    fn request(&mut self, method: &str, params: &str) -> Result<String, String> {
        self.id += 1;
        let id = self.id;
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ))?;
        self.lines
            .next()
            .ok_or("the server closed its output")?
            .map_err(|e| e.to_string())
    }

    fn notify(&mut self, method: &str) -> Result<(), String> {
        self.send(&format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#))
    }

    /// Times one find_definition call; returns the time and the raw response.
    fn find_definition(&mut self, symbol: &str) -> Result<(Duration, String), String> {
        let t = Instant::now();
        let r = self.request(
            "tools/call",
            &format!(r#"{{"name":"find_definition","arguments":{{"symbol":"{symbol}"}}}}"#),
        )?;
        Ok((t.elapsed(), r))
    }
}

/// A file with text appended, restored byte for byte when dropped.
struct Edited {
    path: PathBuf,
    original: Vec<u8>,
}

impl Edited {
    fn append(path: &Path, text: &str) -> Result<Edited, String> {
        let original = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut changed = original.clone();
        changed.extend_from_slice(text.as_bytes());
        std::fs::write(path, &changed).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Edited {
            path: path.to_path_buf(),
            original,
        })
    }
}

impl Drop for Edited {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(&self.path, &self.original) {
            eprintln!(
                "kernel-bench: could not restore {}: {e}",
                self.path.display()
            );
        }
    }
}
