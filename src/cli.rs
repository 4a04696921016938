//! Command-line arguments and dispatch: parse, open (or first build) the index, run one query,
//! render its envelope. Exit 0 with results, 1 when the envelope carries an error, 2 for a
//! usage error; `grep` exits as grep does (0 with hits, 1 without, 2 on any error).

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::envelope::Envelope;
use crate::index::build::BuildOptions;
use crate::index::store::{index_dir, Snapshot};
use crate::index::IndexError;
use crate::progress::Progress;
use crate::query::{GroupBy, Page};
use crate::render::{render, Format};
use crate::request::{answer, Ask};

#[derive(Args, Clone)]
struct Common {
    /// Top of the source tree (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Where the index lives (default: ROOT/.knav, or $KNAV_INDEX_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    index_dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Results per page (0: the default, 100).
    #[arg(long, global = true, default_value_t = 0)]
    limit: u64,
    /// Results to skip.
    #[arg(long, global = true, default_value_t = 0)]
    offset: u64,
    /// Only results under this path.
    #[arg(long, global = true, value_name = "P")]
    path_prefix: Option<OsString>,
    /// Leave out what this .config (or CONFIG_A=y,CONFIG_B=m list) does not build.
    #[arg(long, global = true, value_name = "FILE_OR_MACROS")]
    active_config: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Build or refresh the index.
    Index {
        /// Rebuild everything instead of only what changed.
        #[arg(long)]
        full: bool,
        /// Check the index against its checksums instead of refreshing it.
        #[arg(long, conflicts_with = "full")]
        verify: bool,
    },
    /// Whether the index is ready and what it holds (index_status); builds nothing.
    Status,
    /// Serve the tools over MCP on stdio. With --root, indexes are built and kept fresh;
    /// without it, the server answers from existing indexes only.
    Serve {
        /// Seconds an index stays fresh before a call refreshes it (overrides .knav.toml's
        /// serve.debounce_s; default 5).
        #[arg(long, value_name = "SECONDS", value_parser = parse_debounce)]
        debounce: Option<f64>,
        /// Another tree calls may name as `root` (repeatable; also .knav.toml's serve.roots).
        #[arg(long = "allow-root", value_name = "DIR")]
        allow_root: Vec<PathBuf>,
        /// Tool groups to serve: core, search, edit, review (overrides .knav.toml's
        /// serve.tools; default all).
        #[arg(long, value_name = "GROUPS", value_delimiter = ',')]
        tools: Option<Vec<String>>,
    },
    /// Where SYMBOL is defined (find_definition).
    Def {
        /// The identifier to look up.
        symbol: String,
    },
    /// Every reference to SYMBOL (find_references).
    Refs {
        /// The identifier to look up.
        symbol: String,
        /// One row per reference (line), per file (file), or per file above 200 (auto).
        #[arg(long, value_enum, default_value_t = GroupBy::Auto)]
        group_by: GroupBy,
    },
    /// The call sites of SYMBOL (find_callers).
    Callers {
        /// The function whose call sites to list.
        symbol: String,
    },
    /// What SYMBOL calls (find_callees).
    Callees {
        /// The function whose body to read.
        symbol: String,
    },
    /// The source of SYMBOL's definitions (get_symbol_body).
    Body {
        /// The identifier whose definitions to show.
        symbol: String,
        /// Bodies to show at most.
        #[arg(long, default_value_t = 3)]
        max_definitions: u64,
    },
    /// Whether FROM can reach TO through calls (reachability).
    Reach {
        /// The function to start from.
        from: String,
        /// The function to reach.
        to: String,
        /// Calls to follow at most (1..12).
        #[arg(long, default_value_t = 8)]
        max_depth: u32,
        /// Also follow calls through members whose struct type is not known (matched by the
        /// member's name only).
        #[arg(long)]
        include_uncertain: bool,
    },
    /// The definitions in FILE (list_file_symbols).
    Symbols {
        /// A path relative to the root; a directory lists its files with their definition
        /// counts.
        file: OsString,
        /// `end`: page backwards from the end of the file, last definition first.
        #[arg(long, value_enum, default_value_t = From::Start)]
        from: From,
    },
    /// Defined names matching every token, each as a prefix of the name or of a `_` part
    /// (search_symbols): `knav find ext4 read iter`, `knav find '/vfs_.*v/'`.
    Find {
        /// Parts of a name, or /REGEX/ matched against whole names.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// Only names with a definition of this kind (function, struct, macro, …).
        #[arg(long, value_parser = crate::query::parse_kind)]
        kind: Option<knav_ctags::Kind>,
    },
    /// Indexed files whose path matches every token (search_files): `knav files ext2 file`.
    Files {
        /// Parts of a path.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Who a change to SYMBOL affects: its callers to --depth levels, by MAINTAINERS subsystem
    /// and top directory, with export status (change_impact).
    Impact {
        /// The function.
        symbol: String,
        /// Levels of callers (0-10; 1: direct callers only).
        #[arg(long, default_value_t = crate::query::impact::DEFAULT_DEPTH)]
        depth: u32,
    },
    /// The definitions a unified diff touches, with guards, callers and subsystems
    /// (review_diff). `--limit`/`--offset` page its hunks and definitions together, in diff
    /// order; a diff of more than 16 MiB, 10,000 files or 50,000 hunks is refused.
    Diff {
        /// The diff (git diff, diff -u or a mailed patch); `-` or none: standard input.
        file: Option<PathBuf>,
    },
    /// The lines of any text file matching PATTERN, as `rg -n` finds them (search_text).
    /// Exit 0 with hits, 1 without, 2 on an error.
    Grep(GrepArgs),
    /// Documentation sections ranked for a query in words (search_docs):
    /// `knav docs out of memory killer`.
    Docs {
        /// Words to look for.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Definitions ranked for what they do, in words (search_code):
    /// `knav search choose a process to kill when memory runs out`.
    Search {
        /// Words saying what the code does.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// Only definitions of this kind (function, struct, union, enum, typedef).
        #[arg(long, value_parser = crate::query::parse_kind)]
        kind: Option<knav_ctags::Kind>,
    },
}

/// Where `knav symbols` starts its pages.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum From {
    /// The first definition.
    Start,
    /// The last definition, paging backwards.
    End,
}

#[derive(Args, Clone)]
struct GrepArgs {
    /// A Rust regular expression (rg's syntax), or a literal with -F.
    pattern: String,
    /// Files or directories to search in, relative to the root (default: all of it).
    paths: Vec<String>,
    /// Take the pattern as a literal string.
    #[arg(short = 'F', long)]
    fixed_strings: bool,
    /// Match case-insensitively.
    #[arg(short = 'i', long)]
    ignore_case: bool,
    /// Only matches surrounded by word boundaries.
    #[arg(short = 'w', long)]
    word_regexp: bool,
    /// Only files matching this rg glob; `!GLOB` excludes (repeatable).
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    globs: Vec<String>,
    /// Only hits inside the definitions of SYMBOL.
    #[arg(long, value_name = "SYMBOL")]
    within: Option<String>,
    /// Lines of context either side of each hit (0-10).
    #[arg(short = 'C', long, default_value_t = 0, value_name = "N")]
    context: u32,
    /// List the files with hits, not the lines.
    #[arg(short = 'l', long, conflicts_with = "count")]
    files_with_matches: bool,
    /// Count the matching lines of each file.
    #[arg(short = 'c', long)]
    count: bool,
}

#[derive(Parser)]
#[command(
    name = "knav",
    version,
    about = "Navigate the Linux kernel and other large C trees"
)]
struct Cli {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Command,
}

impl Command {
    /// The question a query subcommand asks; `None` for `index` (and `diff`, whose question
    /// is read by [`read_diff`]).
    fn ask(&self) -> Option<Ask> {
        Some(match self {
            Command::Index { .. }
            | Command::Serve { .. }
            | Command::Status
            | Command::Diff { .. } => return None,
            Command::Impact { symbol, depth } => Ask::Impact {
                symbol: symbol.clone(),
                depth: *depth,
            },
            Command::Def { symbol } => Ask::Def {
                symbol: symbol.clone(),
            },
            Command::Refs { symbol, group_by } => Ask::Refs {
                symbol: symbol.clone(),
                group_by: *group_by,
            },
            Command::Callers { symbol } => Ask::Callers {
                symbol: symbol.clone(),
            },
            Command::Callees { symbol } => Ask::Callees {
                symbol: symbol.clone(),
            },
            Command::Body {
                symbol,
                max_definitions,
            } => Ask::Body {
                symbol: symbol.clone(),
                max_definitions: *max_definitions,
            },
            Command::Reach {
                from,
                to,
                max_depth,
                include_uncertain,
            } => Ask::Reach {
                from: from.clone(),
                to: to.clone(),
                max_depth: *max_depth,
                include_uncertain: *include_uncertain,
            },
            Command::Symbols { file, from } => Ask::Symbols {
                file: crate::pathname::from_arg(file),
                from_end: *from == From::End,
            },
            Command::Find { query, kind } => Ask::Find {
                query: query.join(" "),
                kind: *kind,
            },
            Command::Files { query } => Ask::Files {
                query: query.join(" "),
            },
            Command::Search { query, kind } => Ask::Code {
                query: query.join(" "),
                kind: *kind,
            },
            Command::Grep(g) => Ask::Grep(Box::new(crate::query::GrepAsk {
                pattern: crate::index::text::search::Pattern {
                    text: g.pattern.clone(),
                    fixed: g.fixed_strings,
                    ignore_case: g.ignore_case,
                    word: g.word_regexp,
                },
                paths: g.paths.clone(),
                globs: g.globs.clone(),
                within: g.within.clone(),
                context: g.context,
                mode: if g.files_with_matches {
                    crate::query::GrepMode::Files
                } else if g.count {
                    crate::query::GrepMode::Count
                } else {
                    crate::query::GrepMode::Lines
                },
            })),
            Command::Docs { query } => Ask::Docs {
                query: query.join(" "),
            },
        })
    }
}

/// Opens the index of `root`, building it first when there is none or when it has another
/// format version (one built by an older knav). A damaged index stays an error.
pub fn open_or_build(root: &Path, explicit_dir: Option<&Path>) -> Result<Snapshot, String> {
    let dir = index_dir(root, explicit_dir);
    match Snapshot::open(root, &dir) {
        Ok(Some(s)) => return Ok(s),
        Ok(None) | Err(IndexError::OtherFormat { .. }) => {}
        Err(e) => return Err(e.to_string()),
    }
    let opts = BuildOptions::for_root(root)?;
    crate::index::update(root, &dir, false, &opts, &mut Progress::stderr())
        .map_err(|e| e.to_string())?;
    Snapshot::open(root, &dir)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no index in {} after building it", dir.display()))
}

/// The diff `knav diff` reads: FILE, or standard input for `-` or none.
fn read_diff(file: Option<&Path>) -> Result<String, String> {
    use std::io::Read;
    let max = crate::diff::MAX_DIFF_BYTES as u64;
    let mut bytes = Vec::new();
    let (read, what) = match file.filter(|f| *f != Path::new("-")) {
        Some(f) => (
            std::fs::File::open(f).and_then(|h| h.take(max + 1).read_to_end(&mut bytes)),
            f.display().to_string(),
        ),
        None => (
            std::io::stdin().take(max + 1).read_to_end(&mut bytes),
            "standard input".to_string(),
        ),
    };
    read.map_err(|e| format!("cannot read the diff from {what}: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "the diff in {what} is larger than {} MiB (the most review_diff reads): split the \
             patch and review each part",
            max >> 20
        ));
    }
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

fn run(common: &Common, command: &Command, trace: &mut crate::index::Trace) -> Envelope {
    let ask = match command {
        Command::Diff { file } => match read_diff(file.as_deref()) {
            Ok(diff) => Some(Ask::Review { diff }),
            Err(e) => return Envelope::error("review_diff", ".", e),
        },
        _ => command.ask(),
    };
    let tool = match command {
        Command::Status => "index_status",
        _ => ask.as_ref().map_or("update_index", Ask::tool),
    };
    let root_arg = common.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let root = match crate::beneath::resolve_root(&root_arg) {
        Ok(r) => r,
        Err(e) => return Envelope::error(tool, &root_arg.display().to_string(), e),
    };
    let root_s = root.display().to_string();
    if let Command::Status = command {
        let dir = crate::index::store::existing_index_dir(&root, common.index_dir.as_deref());
        return crate::status::index_status(&root, &dir, None);
    }
    let Some(ask) = ask else {
        let Command::Index { full, verify } = command else {
            unreachable!("only `index` asks nothing")
        };
        let dir = index_dir(&root, common.index_dir.as_deref());
        let done = if *verify {
            crate::index::verify(&root, &dir)
        } else {
            let opts = match BuildOptions::for_root(&root) {
                Ok(o) => o,
                Err(e) => return Envelope::error(tool, &root_s, e),
            };
            crate::index::update(&root, &dir, *full, &opts, &mut Progress::stderr())
        };
        return match done {
            Ok(report) => {
                let rebuilt = report.rebuilt_because.clone();
                let mut env = Envelope::index_report(&root_s, report);
                if let Some(why) = rebuilt {
                    env.warn(format!("rebuilt, not refreshed: {why}"));
                }
                env
            }
            Err(e) => Envelope::error(tool, &root_s, e.to_string()),
        };
    };
    trace.mark("resolve root");
    let snap = match open_or_build(&root, common.index_dir.as_deref()) {
        Ok(s) => s,
        Err(e) => return Envelope::error(tool, &root_s, e),
    };
    trace.mark("open index");
    let active = match &common.active_config {
        None => None,
        Some(arg) => match crate::request::active_config(arg, Path::new(".")) {
            Ok(c) => Some(c),
            Err(e) => {
                let mut env = Envelope::error(tool, &root_s, e);
                env.next_tools = vec![tool];
                return env;
            }
        },
    };
    trace.mark("active config");
    let page = Page {
        limit: common.limit,
        offset: common.offset,
        path_prefix: common.path_prefix.as_deref().map(crate::pathname::from_arg),
        active,
    };
    // An answer read from a damaged index is replaced by the damage (a decoder that ran past
    // its data, or a panic in the `fst` crate on a damaged FST).
    let env = crate::index::damage::answer_or_damage(&snap, || answer(&snap, page, &ask))
        .unwrap_or_else(|e| Envelope::error(tool, &root_s, e.to_string()));
    trace.mark("answer");
    // The process ends right after: its exit unmaps the index in one sweep, cheaper than
    // unmapping file by file (a fifth of a small query's time).
    std::mem::forget(snap);
    env
}

fn parse_debounce(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if (0.0..=3600.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is out of range; use 0 to 3600 seconds"))
    }
}

/// Runs the CLI; returns the exit code.
pub fn main() -> i32 {
    let mut trace = crate::index::Trace::new();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    if let Command::Serve {
        debounce,
        allow_root,
        tools,
    } = cli.command
    {
        return crate::serve::run(&crate::serve::ServeOptions {
            root: cli.common.root.clone(),
            index_dir: cli.common.index_dir.clone(),
            debounce: debounce.map(std::time::Duration::from_secs_f64),
            allow_roots: allow_root,
            tools,
        });
    }
    trace.mark("parse args");
    let env = run(&cli.common, &cli.command, &mut trace);
    trace.mark("run");
    let format = cli.common.format;
    let out = render(&env, format);
    // A closed pipe (`knav refs x | head`) is not an error worth a panic.
    let mut stdout = std::io::stdout().lock();
    let newline = if format == Format::Json { "\n" } else { "" };
    let _ = write!(stdout, "{out}{newline}").and_then(|_| stdout.flush());
    trace.mark("render+write");
    env.exit_code()
}
