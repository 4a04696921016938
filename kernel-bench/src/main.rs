//! kernel-bench: knav against gtags, ctags, cscope and ripgrep on a real kernel tree, side by
//! side in one run, so that the machine's noise cancels out in the ratios. Writes `report.md`
//! and `chart.svg` to the output directory.

mod audit;
mod cscope;
mod facts;
mod lsp;
mod missing;
mod peers;
mod proc;
mod quality;
mod report;
mod revisions;
mod suite;
mod tokens;

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser;

/// Where `--prepare` puts Linux 6.12 (Debian's linux-source-6.12).
const PREPARED_TREE: &str = "/var/tmp/k/linux-source-6.12";

#[derive(Parser)]
#[command(
    name = "kernel-bench",
    about = "Measure knav against gtags, ctags, cscope and ripgrep on a kernel tree"
)]
struct Args {
    /// The kernel tree (or any C tree) to measure.
    #[arg(long, value_name = "DIR", required_unless_present = "prepare")]
    tree: Option<PathBuf>,
    /// Install Debian's linux-source-6.12 and unpack it to /var/tmp/k when it is not there.
    #[arg(long)]
    prepare: bool,
    /// Measure only the tree's fs/ subtree (the whole tree when it has none), one run per query.
    #[arg(long)]
    quick: bool,
    /// Where report.md and chart.svg go.
    #[arg(long, value_name = "DIR", default_value = "kernel-bench-report")]
    out: PathBuf,
    /// Scratch space for every tool's index (default: a fresh directory under /var/tmp).
    #[arg(long, value_name = "DIR")]
    work: Option<PathBuf>,
    /// The knav binary (default: the one beside this program, else `knav` on PATH).
    #[arg(long, value_name = "PATH")]
    knav: Option<PathBuf>,
    /// Runs per query (default 5; 1 with --quick).
    #[arg(long)]
    runs: Option<usize>,
    /// Parallel ctags processes (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Cold builds of knav and gtags, taken in turns; the median of each is reported (default
    /// 5; 1 with --quick). One run says little on a machine whose other tenants come and go,
    /// and with three, one slow spell of the machine moved the ratio by a tenth.
    #[arg(long)]
    cold_runs: Option<usize>,
    /// Keep the indexes already in --work instead of building them (cold builds and refreshes
    /// are then not measured): for re-measuring queries after a change to knav's query code.
    #[arg(long, requires = "work")]
    reuse: bool,
    /// A .config for the active_config rows (default: config.amd64 beside the tree, as
    /// DEVELOPERS.md unpacks Debian's; the rows are left out without one).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Another version of the tree for the fact store's scenarios (default:
    /// linux-source-6.1 beside the tree).
    #[arg(long, value_name = "DIR")]
    other_tree: Option<PathBuf>,
    /// Measure only these questions (comma-separated: def, refs, callers, grep, tools,
    /// quality, missing, revisions, tokens, cscope, lsp). `--only lsp --reuse --work DIR`
    /// times `knav lsp` alone on the index in DIR/knav.
    #[arg(long, value_delimiter = ',', value_parser = ["def", "refs", "callers", "grep", "tools", "quality", "missing", "revisions", "tokens", "cscope", "lsp"])]
    only: Vec<String>,
    /// The git repository kernel-bench/make-git-tree.sh builds, for the revisions' scenarios
    /// (`knav --rev`); without it they are not measured.
    #[arg(long, value_name = "DIR")]
    git: Option<PathBuf>,
}

fn main() {
    if let Err(e) = run(Args::parse()) {
        eprintln!("kernel-bench: {e}");
        std::process::exit(1);
    }
}

fn prepare() -> Result<PathBuf, String> {
    let tree = PathBuf::from(PREPARED_TREE);
    if tree.join("Makefile").is_file() {
        return Ok(tree);
    }
    let tarball = Path::new("/usr/src/linux-source-6.12.tar.xz");
    if !tarball.is_file() {
        eprintln!("kernel-bench: installing linux-source-6.12");
        let ok = Command::new("apt-get")
            .args(["install", "-y", "linux-source-6.12"])
            .status()
            .is_ok_and(|s| s.success());
        if !ok || !tarball.is_file() {
            return Err(
                "could not install linux-source-6.12; run `apt-get update && apt-get \
                        install -y linux-source-6.12` as root, or pass --tree DIR"
                    .into(),
            );
        }
    }
    std::fs::create_dir_all("/var/tmp/k").map_err(|e| format!("/var/tmp/k: {e}"))?;
    let ok = Command::new("tar")
        .args(["-xJf"])
        .arg(tarball)
        .args(["-C", "/var/tmp/k"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok || !tree.join("Makefile").is_file() {
        return Err(format!("unpacking {} failed", tarball.display()));
    }
    Ok(tree)
}

fn find_knav(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(k) = explicit {
        return peers::which(&k.to_string_lossy())
            .ok_or_else(|| format!("--knav {}: not an executable", k.display()));
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join("knav")))
        .filter(|p| p.is_file());
    beside.or_else(|| peers::which("knav")).ok_or_else(|| {
        "no knav binary beside kernel-bench or on PATH; build it (`cargo build --release`) \
             or pass --knav PATH"
            .to_string()
    })
}

/// Copies `knav` into `work`, as `cargo install` would, and returns the copy. The peers run
/// installed binaries; a linker's fresh output sits in the page cache in small pieces, and
/// starting it page-faults about a tenth more (a fifth slower on a 3 ms query).
fn install(knav: &Path, work: &Path) -> Result<PathBuf, String> {
    let dir = work.join("bin");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let to = dir.join("knav");
    let _ = std::fs::remove_file(&to);
    std::fs::copy(knav, &to)
        .map_err(|e| format!("copying {} to {}: {e}", knav.display(), to.display()))?;
    Ok(to)
}

/// Whether the ELF executable at `path` names a dynamic loader: start-up differs by a
/// quarter on a 3 ms query, so the report says which knav it timed.
fn linkage(path: &Path) -> &'static str {
    const PT_INTERP: u32 = 3;
    let Ok(b) = std::fs::read(path) else {
        return "unreadable";
    };
    let u = |at: usize, n: usize| -> Option<u64> {
        let s = b.get(at..at + n)?;
        Some(s.iter().rev().fold(0u64, |v, &x| (v << 8) | x as u64))
    };
    let interp = (|| {
        if b.get(..5)? != b"\x7fELF\x02" {
            return None;
        }
        let (phoff, phentsize, phnum) = (u(0x20, 8)?, u(0x36, 2)?, u(0x38, 2)?);
        Some((0..phnum).any(|i| u((phoff + i * phentsize) as usize, 4) == Some(PT_INTERP as u64)))
    })();
    match interp {
        Some(true) => "dynamically linked",
        Some(false) => "statically linked",
        None => "not a 64-bit ELF file",
    }
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_gb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let kernel = output(Command::new("uname").arg("-sr"));
    format!("{cores} cores ({cpu}), {mem_gb:.0} GiB RAM, {kernel}")
}

fn output(cmd: &mut Command) -> String {
    cmd.output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn run(args: Args) -> Result<(), String> {
    let tree = tree_of(&args)?;
    let knav = find_knav(args.knav.clone())?;
    let runs = args
        .runs
        .unwrap_or(if args.quick { 1 } else { 5 })
        .clamp(1, 100);
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, 256);
    let cold_runs = args
        .cold_runs
        .unwrap_or(if args.quick { 1 } else { 5 })
        .clamp(1, 20);
    let work = match &args.work {
        Some(w) => w.clone(),
        None => std::env::temp_dir().join(format!("kernel-bench-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let knav = install(&knav, &work)?;

    let files = suite::c_files(&tree);
    let cx = report::Context {
        tree: tree.display().to_string(),
        quick: args.quick,
        runs,
        files: (files.len(), files.iter().map(|f| f.1).sum()),
        knav_version: format!(
            "{} ({})",
            output(Command::new(&knav).arg("--version")),
            linkage(&knav)
        ),
        machine: machine(),
        date: output(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"])),
    };
    let peers = peers::Peers::find();
    let config = match &args.config {
        Some(c) if !c.is_file() => return Err(format!("--config {}: not a file", c.display())),
        Some(c) => Some(c.clone()),
        None => tree
            .parent()
            .map(|p| p.join("config.amd64"))
            .filter(|c| c.is_file() && !args.quick),
    };
    let setup = suite::Setup {
        tree,
        work: work.clone(),
        knav,
        runs,
        jobs,
        cold_runs,
        config,
    };
    let started = std::time::Instant::now();
    let mut log = |what: &str| {
        eprintln!(
            "kernel-bench [{:>4.0} s] {what}",
            started.elapsed().as_secs_f64()
        )
    };
    let results = measure(&args, &setup, &peers, &mut log)?;
    let md = report::markdown(&cx, &peers, &results);
    let svg = report::svg(&results);
    let md_path = args.out.join("report.md");
    std::fs::write(&md_path, &md).map_err(|e| format!("{}: {e}", md_path.display()))?;
    let svg_path = args.out.join("chart.svg");
    std::fs::write(&svg_path, &svg).map_err(|e| format!("{}: {e}", svg_path.display()))?;
    if args.work.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    log(&format!(
        "wrote {} and {}",
        md_path.display(),
        svg_path.display()
    ));
    Ok(())
}

/// The tree to measure: `--tree` (or the tree `--prepare` unpacks), made absolute; its `fs/`
/// with `--quick`.
fn tree_of(args: &Args) -> Result<PathBuf, String> {
    let tree = match (&args.tree, args.prepare) {
        (Some(t), _) => t.clone(),
        (None, _) => prepare()?,
    };
    let tree =
        std::fs::canonicalize(&tree).map_err(|e| format!("--tree {}: {e}", tree.display()))?;
    if !tree.is_dir() {
        return Err(format!("--tree {}: not a directory", tree.display()));
    }
    Ok(if args.quick && tree.join("fs").is_dir() {
        tree.join("fs")
    } else {
        tree
    })
}

/// Takes every measurement `args` asks for (cold builds and refreshes unless `--reuse`, then
/// the questions of `--only`) with `setup`.
fn measure(
    args: &Args,
    setup: &suite::Setup,
    peers: &peers::Peers,
    log: &mut dyn FnMut(&str),
) -> Result<suite::Results, String> {
    let (builds, refresh) = if args.reuse {
        if !setup.work.join("knav/CURRENT").is_file() {
            return Err(format!(
                "--reuse: no knav index in {}; run once without --reuse",
                setup.work.display()
            ));
        }
        log("reusing the indexes in --work: cold builds and refreshes not measured");
        (Vec::new(), suite::Refresh::default())
    } else {
        (setup.cold_builds(peers, log), setup.refresh(log))
    };
    let asked = |q: &str| args.only.is_empty() || args.only.iter().any(|o| o == q);
    let (mut latencies, sizes) = if args.only.iter().all(|q| q == "lsp") && !args.only.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        setup.queries(peers, suite::SYMBOLS, &args.only, log)
    };
    latencies.retain(|l| args.only.is_empty() || args.only.iter().any(|q| q == l.question));
    let grep = if asked("grep") {
        setup.grep(peers, log)
    } else {
        suite::Grep::default()
    };
    let tools = if asked("tools") {
        setup.tools(log)
    } else {
        Vec::new()
    };
    let quality = if (asked("quality")) && quality::fits(&setup.tree) {
        match quality::measure(&|| setup.knav_on_tree(), log) {
            Ok(q) => q,
            Err(e) => {
                log(&format!("search quality not measured: {e}"));
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let audit = if (asked("quality")) && quality::fits(&setup.tree) {
        log("the pointer-call audit");
        audit::measure(&|| setup.knav_on_tree()).unwrap_or_else(|e| {
            log(&format!("the pointer-call audit not measured: {e}"));
            Vec::new()
        })
    } else {
        Vec::new()
    };
    let missing = if asked("missing") {
        log("the audit of missing definitions");
        setup.missing().map_or_else(
            |e| {
                log(&format!(
                    "the audit of missing definitions not measured: {e}"
                ));
                None
            },
            Some,
        )
    } else {
        None
    };
    let facts = if args.reuse || !args.only.is_empty() {
        None
    } else {
        let other = match &args.other_tree {
            Some(o) => Some(o.clone()),
            None if args.quick => None,
            None => setup
                .tree
                .parent()
                .map(|p| p.join("linux-source-6.1"))
                .filter(|p| p.is_dir()),
        };
        Some(setup.facts(other.as_deref(), log))
    };
    let revisions = match &args.git {
        Some(repo) if asked("revisions") => Some(setup.revisions(repo, log)),
        _ => None,
    };
    let tokens = match asked("tokens") {
        true => setup.tokens(log),
        false => Vec::new(),
    };
    let cscope = asked("cscope").then(|| cscope::measure(&setup.cscope_on(peers), log));
    let lsp = if asked("lsp") {
        lsp_step(setup, log)
    } else {
        lsp::Lsp::default()
    };
    Ok(suite::Results {
        cscope,
        lsp,
        revisions,
        tokens,
        builds,
        refresh,
        latencies,
        sizes,
        grep,
        tools,
        quality,
        audit,
        missing,
        facts,
    })
}

/// `knav lsp` on the index: the sample of call sites read from knav's callers, then the timings.
fn lsp_step(setup: &suite::Setup, log: &mut dyn FnMut(&str)) -> lsp::Lsp {
    log("knav lsp: the sample of call sites");
    let (sample, notes) = lsp::sample(&setup.tree, suite::SYMBOLS, &|| setup.knav_on_tree());
    log(&format!("knav lsp: {} call sites", sample.len()));
    let mut l = lsp::measure(&setup.tree, setup.knav_on_tree(), &sample);
    l.notes.extend(notes);
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linkage_reads_the_program_headers() {
        let exe = std::env::current_exe().unwrap();
        assert!(linkage(&exe).ends_with("linked"), "{}", linkage(&exe));
        let not_elf = std::env::temp_dir().join(format!("kb-not-elf-{}", std::process::id()));
        std::fs::write(&not_elf, "#!/bin/sh\n").unwrap();
        assert_eq!(linkage(&not_elf), "not a 64-bit ELF file");
        let _ = std::fs::remove_file(&not_elf);
    }
}
