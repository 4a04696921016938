//! Command-line arguments and dispatch: parse, open (or first build) the index, run one query,
//! render its envelope. Exit 0 with results, 1 when the envelope carries an error, 2 for a
//! usage error.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::envelope::{Envelope, Results};
use crate::index::build::BuildOptions;
use crate::index::store::{index_dir, Snapshot};
use crate::progress::Progress;
use crate::query::{self, GroupBy, Page, Query};
use crate::render::{render, Format};

#[derive(Args, Clone)]
struct Common {
    /// Top of the source tree (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Where the index lives (default: ROOT/.knav, or $KNAV_INDEX_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    index_dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, global = true, default_value = "text", value_parser = ["text", "json"])]
    format: String,
    /// Results per page (0: the default, 100).
    #[arg(long, global = true, default_value_t = 0)]
    limit: u64,
    /// Results to skip.
    #[arg(long, global = true, default_value_t = 0)]
    offset: u64,
    /// Only results under this path.
    #[arg(long, global = true, value_name = "P")]
    path_prefix: Option<String>,
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
        #[arg(long, default_value = "auto", value_parser = ["auto", "line", "file"])]
        group_by: String,
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
    },
    /// The definitions in FILE (list_file_symbols).
    Symbols {
        /// A path relative to the root.
        file: String,
    },
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

fn tool_name(c: &Command) -> &'static str {
    match c {
        Command::Index { .. } => "update_index",
        Command::Def { .. } => "find_definition",
        Command::Refs { .. } => "find_references",
        Command::Callers { .. } => "find_callers",
        Command::Callees { .. } => "find_callees",
        Command::Body { .. } => "get_symbol_body",
        Command::Reach { .. } => "reachability",
        Command::Symbols { .. } => "list_file_symbols",
    }
}

/// Opens the index of `root`, building it first when there is none.
pub fn open_or_build(root: &Path, explicit_dir: Option<&Path>) -> Result<Snapshot, String> {
    let dir = index_dir(root, explicit_dir);
    if let Some(s) = Snapshot::open(root, &dir)? {
        return Ok(s);
    }
    let mut progress = Progress::stderr();
    crate::index::update(root, &dir, false, &BuildOptions::default(), &mut progress)?;
    Snapshot::open(root, &dir)?
        .ok_or_else(|| format!("no index in {} after building it", dir.display()))
}

fn run(common: &Common, command: &Command) -> Envelope {
    let tool = tool_name(command);
    let root_arg = common.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let root = match crate::walk::resolve_root(&root_arg) {
        Ok(r) => r,
        Err(e) => return Envelope::error(tool, &root_arg.display().to_string(), e),
    };
    let root_s = root.display().to_string();
    if let Command::Index { full, verify } = command {
        let dir = index_dir(&root, common.index_dir.as_deref());
        let mut progress = Progress::stderr();
        let done = if *verify {
            crate::index::verify(&root, &dir)
        } else {
            crate::index::update(&root, &dir, *full, &BuildOptions::default(), &mut progress)
        };
        return match done {
            Ok(report) => {
                let mut env = Envelope::new(tool, &root_s);
                env.total = 1;
                env.results = Some(Results::Index(report));
                env
            }
            Err(e) => Envelope::error(tool, &root_s, e),
        };
    }
    let snap = match open_or_build(&root, common.index_dir.as_deref()) {
        Ok(s) => s,
        Err(e) => return Envelope::error(tool, &root_s, e),
    };
    let q = Query::new(
        &snap,
        Page {
            limit: common.limit,
            offset: common.offset,
            path_prefix: common.path_prefix.clone(),
        },
    );
    match command {
        Command::Index { .. } => unreachable!("handled above"),
        Command::Def { symbol } => query::find_definition(&q, symbol),
        Command::Refs { symbol, group_by } => {
            let g = group_by.parse::<GroupBy>().unwrap_or_default();
            query::find_references(&q, symbol, g)
        }
        Command::Callers { symbol } => query::find_callers(&q, symbol),
        Command::Callees { symbol } => query::find_callees(&q, symbol),
        Command::Body {
            symbol,
            max_definitions,
        } => query::get_symbol_body(&q, symbol, *max_definitions),
        Command::Reach {
            from,
            to,
            max_depth,
        } => query::reachability(&q, from, to, *max_depth),
        Command::Symbols { file } => query::list_file_symbols(&q, file),
    }
}

/// Runs the CLI; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let env = run(&cli.common, &cli.command);
    let format: Format = cli.common.format.parse().unwrap_or_default();
    let out = render(&env, format);
    // A closed pipe (`knav refs x | head`) is not an error worth a panic.
    let mut stdout = std::io::stdout().lock();
    let newline = if format == Format::Json { "\n" } else { "" };
    let _ = write!(stdout, "{out}{newline}").and_then(|_| stdout.flush());
    env.exit_code()
}
