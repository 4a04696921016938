//! Command-line arguments and dispatch: parse, open (or first build) the index, run one query,
//! render its envelope. Exit 0 with results, 1 when the envelope carries an error, 2 for a
//! usage error; `grep` exits as grep does (0 with hits, 1 without, 2 on any error).

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::envelope::Envelope;
use crate::grepout::Plain;
use crate::index::store::{index_dir, Snapshot};
use crate::index::BuildOptions;
use crate::index::IndexError;
use crate::progress::Progress;
use crate::query::Page;
use crate::render::{render, Format};
use crate::request::answer;
use crate::tools::{choice, Order, Tool};

/// `--format`'s values.
const FORMATS: &[(&str, &str)] = &[
    ("text", "Compact text for people and agents"),
    ("json", "The JSON envelope"),
];

#[derive(Args, Clone)]
struct Common {
    /// Top of the source tree (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Where the index lives (default: ROOT/.knav, or $KNAV_INDEX_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    index_dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, global = true, value_parser = choice::<Format>(FORMATS), default_value = "text")]
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
    /// Answer for this git revision (tag, branch, SHA, HEAD~3): its files are read from git,
    /// not checked out, and indexed on first use (default: the files as they are).
    #[arg(long, global = true, value_name = "REV")]
    rev: Option<String>,
    /// Answer from the index as it is even when a file the answer cites changed since it was
    /// indexed (the answer then names those files); by default the index is refreshed first.
    #[arg(long, global = true)]
    no_refresh: bool,
    /// Every result in one page ([`crate::query::EVERY`]): `knav cscope`'s, never a flag.
    #[arg(skip)]
    every: bool,
}

/// The CLI's own arguments of `knav serve` (the only command that is no tool).
#[derive(Args)]
struct ServeArgs {
    /// Seconds an index stays fresh before a call refreshes it (overrides .knav.toml's
    /// serve.debounce_s; default 5).
    #[arg(long, value_name = "SECONDS", value_parser = parse_debounce)]
    debounce: Option<f64>,
    /// Another tree calls may name as `root` (repeatable; also .knav.toml's serve.roots).
    #[arg(long = "allow-root", value_name = "DIR")]
    allow_root: Vec<PathBuf>,
    /// Tool groups to serve: core, search, edit, review, hardware (overrides .knav.toml's
    /// serve.tools; default all).
    #[arg(long, value_name = "GROUPS", value_delimiter = ',')]
    tools: Option<Vec<String>>,
}

/// The CLI's own arguments of `knav lsp`.
#[derive(Args)]
struct LspArgs {
    /// Talk on stdin/stdout (the only way; accepted because clients pass it).
    #[arg(long)]
    stdio: bool,
}

/// The one-line help of `knav lsp`.
const LSP_ABOUT: &str = "Serve a Language Server (LSP) on stdio for editors: definition, \
                         references, hover, symbols, call hierarchy, inactive #if regions";

/// `knav cache`: the fact store shared by the user's builds.
#[derive(Args)]
struct CacheArgs {
    #[command(subcommand)]
    action: Option<CacheAction>,
}

#[derive(Subcommand)]
enum CacheAction {
    /// Remove the least recently used packs until the store holds at most --max-size.
    Prune {
        /// The size to trim to: bytes, or a number with K, M, G or T (default: .knav.toml's
        /// cache.max_size, else 4G).
        #[arg(long, value_name = "SIZE", value_parser = crate::settings::parse_size)]
        max_size: Option<u64>,
    },
}

/// The one-line help of `knav cache`.
const CACHE_ABOUT: &str = "The fact store builds share (size, entries, the last build's hit \
                           rate); `knav cache prune [--max-size N]` trims it";

/// The one-line help of `knav serve`.
const SERVE_ABOUT: &str = "Serve the tools over MCP on stdio. With --root, indexes are built and \
                           kept fresh; without it, the server answers from existing indexes only";

/// Where `serve` and `cache`, the commands that are no tool, come in `knav --help` (the tools'
/// commands come where [`crate::tools::Tool::help_at`] says).
const NOT_TOOLS: &[(&str, u8)] = &[("serve", 2), ("cache", 19), ("lsp", 20)];

/// The commands in the order `knav --help` lists them: `serve`, `cache`, and the CLI commands
/// of [`crate::tools::TOOLS`], each with the arguments its tool defines.
fn commands() -> &'static [&'static str] {
    static ALL: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| crate::tools::commands(NOT_TOOLS))
}

/// A command: `serve`, or a tool with its arguments as parsed.
enum Command {
    Serve(ServeArgs),
    Lsp,
    Cache(CacheArgs),
    Tool(&'static Tool, clap::ArgMatches),
}

impl clap::FromArgMatches for Command {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        match m.subcommand() {
            Some(("serve", sub)) => Ok(Command::Serve(ServeArgs::from_arg_matches(sub)?)),
            Some(("cache", sub)) => Ok(Command::Cache(CacheArgs::from_arg_matches(sub)?)),
            Some(("lsp", sub)) => LspArgs::from_arg_matches(sub).map(|_| Command::Lsp),
            Some((name, sub)) => match crate::tools::by_command(name) {
                Some(tool) => Ok(Command::Tool(tool, sub.clone())),
                None => Err(clap::Error::new(clap::error::ErrorKind::InvalidSubcommand)),
            },
            None => Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand)),
        }
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// The one command the arguments name, when a first look finds one: only it is then built for
/// clap (building all twenty took a fifth of a small query's time). Unset for help, a version
/// or an unknown command, which need them all.
static ONLY: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The global flags that take a value (`--root DIR`), so a first look can step over them: read
/// from [`Common`]'s own declaration.
fn global_values() -> Vec<String> {
    Common::augment_args(clap::Command::new("knav"))
        .get_arguments()
        .filter(|a| a.get_action().takes_values())
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect()
}

/// The command `args` (without the program's name) name before anything else, at a first
/// look: None for help, a version, `--`, or a word that is no command.
fn command_in(args: impl IntoIterator<Item = OsString>) -> Option<&'static str> {
    let mut args = args.into_iter();
    let mut valued = None;
    while let Some(a) = args.next() {
        let a = a.to_str()?;
        if let Some(flag) = a.strip_prefix("--") {
            if flag.is_empty() || flag == "help" || flag == "version" {
                return None;
            }
            let valued = valued.get_or_insert_with(global_values);
            if !flag.contains('=') && valued.iter().any(|v| v == flag) {
                args.next();
            }
            continue;
        }
        if a.starts_with('-') {
            return None;
        }
        return commands().iter().find(|c| **c == a).copied();
    }
    None
}

impl Subcommand for Command {
    fn augment_subcommands(mut cmd: clap::Command) -> clap::Command {
        let only = ONLY.get();
        for name in commands().iter().filter(|n| only.is_none_or(|o| o == *n)) {
            let sub = match crate::tools::by_command(name).and_then(Tool::cli_command) {
                Some(sub) => sub,
                None if *name == "cache" => CacheArgs::augment_args(clap::Command::new("cache"))
                    .about(CACHE_ABOUT)
                    .long_about(None),
                None if *name == "lsp" => LspArgs::augment_args(clap::Command::new("lsp"))
                    .about(LSP_ABOUT)
                    .long_about(None),
                None => ServeArgs::augment_args(clap::Command::new("serve"))
                    .about(SERVE_ABOUT)
                    .long_about(None),
            };
            cmd = cmd.subcommand(sub);
        }
        cmd
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        commands().contains(&name)
    }
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

/// `knav index`: refreshes the index of `root` (`full`: rebuilds it), or checks it (`verify`).
fn index(common: &Common, root: &Path, full: bool, verify: bool) -> Envelope {
    const TOOL: &str = "update_index";
    let root_s = root.display().to_string();
    let dir = index_dir(root, common.index_dir.as_deref());
    let done = if verify {
        crate::index::verify(root, &dir)
    } else {
        let opts = match BuildOptions::for_root(root) {
            Ok(o) => o,
            Err(e) => return Envelope::error(TOOL, &root_s, e),
        };
        crate::index::update(root, &dir, full, &opts, &mut Progress::stderr())
    };
    match done {
        Ok(report) => {
            let rebuilt = report.rebuilt_because.clone();
            let mut env = Envelope::index_report(&root_s, report);
            if let Some(why) = rebuilt {
                env.warn(format!("rebuilt, not refreshed: {why}"));
            }
            env
        }
        Err(e) => Envelope::error(TOOL, &root_s, e.to_string()),
    }
}

/// Opens the index of `root`, building it first when there is none or when it has another
/// format version (one built by an older knav). A damaged index stays an error.
pub fn open_or_build(root: &Path, explicit_dir: Option<&Path>) -> Result<Snapshot, String> {
    opened_or_built(root, explicit_dir).map(|(s, _)| s)
}

/// [`open_or_build`], and whether it built the index now.
fn opened_or_built(root: &Path, explicit_dir: Option<&Path>) -> Result<(Snapshot, bool), String> {
    let existing = crate::index::store::existing_index_dir(root, explicit_dir);
    match Snapshot::open(root, &existing) {
        Ok(Some(s)) => return Ok((s, false)),
        Ok(None) => {
            // Nothing is created for a directory that is not a source tree.
            if !crate::walk::any_source(root) {
                return Err(no_sources(root));
            }
        }
        Err(IndexError::OtherFormat { .. }) => {}
        Err(e) => return Err(e.to_string()),
    }
    refreshed(root, explicit_dir).map(|s| (s, true))
}

/// Why a directory with no C sources is not indexed on first use, and the indexed tree above
/// it, when there is one, that --root should name.
fn no_sources(root: &Path) -> String {
    let mut e = format!(
        "there are no C sources (.c, .h, .S) under {}, so there is nothing to index; run knav \
         from the top of a source tree or pass --root DIR (`knav index` indexes it anyway)",
        root.display()
    );
    if std::env::var_os("KNAV_INDEX_DIR").is_none() {
        let indexed = root.ancestors().skip(1).find(|a| {
            crate::index::store::existing_index_dir(a, None)
                .join(crate::index::store::CURRENT)
                .is_file()
        });
        if let Some(a) = indexed {
            e.push_str(&format!(
                "; {} is indexed: --root {}",
                a.display(),
                a.display()
            ));
        }
    }
    e
}

/// The tree a command run without `--root` in `cwd` is about ([`crate::discover`]), with the
/// global flags that go with it (another user's tree gets its index in the user's cache
/// directory) and a search's paths made root-relative (`knav grep` in a subdirectory searches
/// that subdirectory, as rg does). Says which tree on a terminal's stderr when it is not `cwd`.
fn found_root(common: &Common, cwd: PathBuf, order: Order) -> (PathBuf, Common, Order) {
    let mut common = common.clone();
    let named_dir = common.index_dir.is_some()
        || std::env::var_os("KNAV_INDEX_DIR").is_some_and(|d| !d.is_empty());
    let found = match &common.root {
        Some(_) => None,
        None => crate::discover::root_above(&cwd, named_dir).filter(|f| f.root != cwd),
    };
    let Some(found) = found else {
        return (cwd, common, order);
    };
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprintln!(
            "knav: answering for {} ({} above the current directory; --root DIR for another)",
            found.root.display(),
            found.why
        );
    }
    let root = found.root;
    let indexed_here = root
        .join(".knav")
        .join(crate::index::store::CURRENT)
        .is_file();
    if !named_dir && !indexed_here && crate::discover::someone_elses(&root) {
        common.index_dir = crate::index::store::cache_dir(&root);
    }
    let order = match order {
        Order::Ask(crate::request::Ask::Grep(mut g)) => {
            g.paths = match g.paths.is_empty() {
                true => vec![crate::discover::rebased(&root, &cwd, ".")],
                false => g
                    .paths
                    .iter()
                    .map(|p| crate::discover::rebased(&root, &cwd, p))
                    .collect(),
            };
            Order::Ask(crate::request::Ask::Grep(g))
        }
        o => o,
    };
    common.root = Some(root.clone());
    (root, common, order)
}

/// An answer and the exit code it ends the process with when not the envelope's own.
type Ran = (Envelope, Option<i32>);

/// Runs tool `tool` with the arguments `matches` of its command, and the global ones; at
/// `--rev`, against that revision's files and index, the answer naming it.
/// `plain`: rg's plain output of `knav grep`, written here (every hit, from the tree read).
fn run(
    common: &Common,
    tool: &Tool,
    matches: &clap::ArgMatches,
    plain: Option<&Plain>,
    trace: &mut crate::index::Trace,
) -> Ran {
    let order = match tool.from_cli(matches) {
        Ok(o) if plain.is_some() => Plain::every(o),
        Ok(o) => o,
        Err(e) => return (Envelope::error(tool.name, ".", e), None),
    };
    let tool = tool.name;
    let root_arg = common.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let root = match crate::beneath::resolve_root(&root_arg) {
        Ok(r) => r,
        Err(e) => {
            return (
                Envelope::error(tool, &root_arg.display().to_string(), e),
                None,
            )
        }
    };
    let ran_in = root.clone();
    let (root, common, order) = found_root(common, root, order);
    let common = &common;
    // rg's paths are relative to the directory it runs in: below a root found above it.
    let below = ran_in.strip_prefix(&root).unwrap_or(Path::new(""));
    let placed = plain.map(|p| p.placed(&root, below));
    let plain = placed.as_ref();
    let mut front = CliRun {
        common,
        tool,
        root,
        plain,
        trace,
    };
    order.carry_out(&mut front)
}

/// What `knav cscope` asks the CLI with besides the order: the global flags it sets.
pub(crate) struct CscopeAsk {
    /// The tree's top, as `--root` (`-P`); the current directory, or the tree above it, when
    /// none.
    pub root: Option<PathBuf>,
    /// As `--active-config`: what that configuration does not build is left out.
    pub active_config: Option<String>,
}

/// The CLI's answer to `order` (of `tool`) for `knav cscope` ([`crate::cscope`]), carried out
/// as the CLI carries out its own: the tree `ask` names (the current directory, or the tree
/// found above it), refreshed first, with its active configuration, the results from `offset`
/// (every result from there: a tool that pages by fewer, find_callees, gives a
/// page of its own). The cscope front end renders it as cscope lines.
pub(crate) fn cscope_run(
    ask: &CscopeAsk,
    tool: &'static Tool,
    order: Order,
    offset: u64,
) -> Envelope {
    let common = Common {
        root: ask.root.clone(),
        index_dir: None,
        format: Format::Text,
        limit: crate::query::MAX_LIMIT,
        offset,
        path_prefix: None,
        active_config: ask.active_config.clone(),
        rev: None,
        no_refresh: offset > 0,
        every: true,
    };
    let root_arg = common.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let root = match crate::beneath::resolve_root(&root_arg) {
        Ok(r) => r,
        Err(e) => return Envelope::error(tool.name, &root_arg.display().to_string(), e),
    };
    let (root, common, order) = found_root(&common, root, order);
    let mut trace = crate::index::Trace::new();
    let mut front = CliRun {
        common: &common,
        tool: tool.name,
        root,
        plain: None,
        trace: &mut trace,
    };
    order.carry_out(&mut front).0
}

/// One command's order carried out for the tree at `root` ([`Order::carry_out`]).
struct CliRun<'a> {
    common: &'a Common,
    tool: &'static str,
    root: PathBuf,
    /// rg's plain output of `knav grep`, placed for the tree.
    plain: Option<&'a Plain>,
    trace: &'a mut crate::index::Trace,
}

impl CliRun<'_> {
    /// The envelope `answer` gives for the tree, or at `--rev` `rev` for that revision's
    /// files and index (read through descriptors opened one name at a time after the
    /// revision's check, held until the answer is made), the answer naming it.
    fn at(
        &mut self,
        rev: Option<String>,
        answer: impl FnOnce(&Common, &Path, &mut crate::index::Trace) -> Envelope,
    ) -> Ran {
        let (common, tool, root, plain) = (self.common, self.tool, &self.root, self.plain);
        let Some(rev) = &rev else {
            let env = answer(common, root, self.trace);
            return (Plain::written(plain, env, root), None);
        };
        let root_s = root.display().to_string();
        let (r, name) = match revision(common, root, rev) {
            Ok(r) => r,
            Err((e, code)) => return (Envelope::error(tool, &root_s, e), code),
        };
        self.trace.mark("revision");
        // Its directories swapped for links since are not read.
        let held = match crate::index::indexdir::RevisionDirs::open(&r.dir) {
            Ok(h) => h,
            Err(e) => return (Envelope::error(tool, &root_s, e.to_string()), None),
        };
        let mut at = common.clone();
        at.index_dir = Some(held.index.via().to_path_buf());
        let env = answer(&at, held.tree.via(), self.trace);
        let mut env = Plain::written(plain, env, held.tree.via());
        shown_in(&mut env);
        env.root = root_s;
        env.rev = Some(name);
        crate::index::git::note_environment(&mut env.warning);
        (env, None)
    }
}

impl crate::tools::CarryOut for CliRun<'_> {
    type Out = Ran;

    fn ask(&mut self, ask: crate::request::Ask) -> Ran {
        let tool = self.tool;
        self.at(self.common.rev.clone(), |common, root, trace| {
            ask_in(common, tool, ask, root, trace)
        })
    }

    fn update(&mut self, full: bool, verify: bool, history: bool) -> Ran {
        if history {
            return (history_update(self.common, self.tool, &self.root), None);
        }
        self.at(self.common.rev.clone(), |common, root, _| {
            index(common, root, full, verify)
        })
    }

    fn history(&mut self, symbol: String, file: Option<String>) -> Ran {
        let (common, root) = (self.common, &self.root);
        let page = Page {
            limit: common.limit,
            offset: common.offset,
            ..Page::default()
        };
        let dir = index_dir(root, common.index_dir.as_deref());
        let env = crate::history::answer(
            root,
            &dir,
            &symbol,
            file.as_deref(),
            common.rev.as_deref(),
            &page,
            true,
            &mut Progress::stderr(),
        );
        (env, None)
    }

    fn status(&mut self, verbose: bool) -> Ran {
        (status(self.common, &self.root, verbose), None)
    }

    fn edit(&mut self, _: crate::edit::Edit) -> Ran {
        let tool = self.tool;
        self.at(self.common.rev.clone(), |_, root, _| {
            let root_s = root.display().to_string();
            Envelope::error(tool, &root_s, "an edit is MCP only")
        })
    }

    fn review_range(&mut self, a: String, b: String) -> Ran {
        let root_s = self.root.display().to_string();
        if self.common.rev.is_some() {
            let e = "a range names its revisions (REV_A..REV_B); drop --rev";
            return (Envelope::error(self.tool, &root_s, e), Some(2));
        }
        match crate::index::git::range_diff(&self.root, &a, &b, crate::diff::MAX_DIFF_BYTES) {
            Ok(diff) => {
                let (ask, tool) = (crate::request::Ask::Review { diff }, self.tool);
                self.at(Some(b), |common, root, trace| {
                    ask_in(common, tool, ask, root, trace)
                })
            }
            Err(e) => {
                let code =
                    matches!(e, crate::index::git::GitError::UnknownRevision { .. }).then_some(2);
                (Envelope::error(self.tool, &root_s, e.to_string()), code)
            }
        }
    }

    fn compare(&mut self, symbol: String, a: String, b: Option<String>) -> Ran {
        compare(self.common, &self.root, &symbol, &a, b.as_deref())
    }
}

/// `knav index --history`: the history index brought up to date, its figures in the message.
fn history_update(common: &Common, tool: &'static str, root: &Path) -> Envelope {
    let dir = index_dir(root, common.index_dir.as_deref());
    let root_s = root.display().to_string();
    let done = crate::index::git::history::update(
        root,
        &dir,
        common.rev.as_deref(),
        &mut Progress::stderr(),
    );
    let env = match done {
        Ok(r) => {
            let mut env = Envelope::new(tool, &root_s);
            env.message = Some(format!(
                "history: {} commits read now, {} in all; {} definitions touched recorded \
                 now; {:.1} MB; in {} ms",
                r.commits_added,
                r.commits,
                r.touches_added,
                r.bytes as f64 / 1e6,
                r.ms
            ));
            env
        }
        Err(e) => Envelope::error(tool, &root_s, e.to_string()),
    };
    env
}

/// `env`'s messages with a pinned directory's `/proc/self/fd/N` shown as its own path.
fn shown_in(env: &mut Envelope) {
    use crate::index::indexdir::shown_text;
    for s in [&mut env.warning, &mut env.message, &mut env.error]
        .into_iter()
        .flatten()
    {
        *s = shown_text(s);
    }
}

/// Revision `rev` of the tree at `root`, its files made on first use; an error with the exit
/// code of an unknown revision (2).
fn revision(
    common: &Common,
    root: &Path,
    rev: &str,
) -> Result<
    (
        crate::index::git::revision::Revision,
        crate::envelope::RevName,
    ),
    (String, Option<i32>),
> {
    // Nothing is created before git has said the revision exists.
    let revs = crate::index::store::existing_index_dir(root, common.index_dir.as_deref())
        .join(crate::status::REVS);
    let r = crate::index::git::revision::materialize(root, &revs, rev, &mut Progress::stderr())
        .map_err(|e| (e.to_string(), e.is_unknown_revision().then_some(2)))?;
    let name = crate::envelope::RevName::of(&r.resolved);
    Ok((r, name))
}

/// A revision's index and the descriptors it is read through (to hold while it is read).
type RevSnapshot = (
    Snapshot,
    crate::envelope::RevName,
    crate::index::indexdir::RevisionDirs,
);

/// The index of revision `rev` of the tree at `root`, made and built on first use, read
/// through descriptors opened after the revision's check (as `--rev` reads it).
fn revision_snapshot(
    common: &Common,
    root: &Path,
    rev: &str,
) -> Result<RevSnapshot, (String, Option<i32>)> {
    use crate::index::indexdir::{shown_text, RevisionDirs};
    let (r, name) = revision(common, root, rev)?;
    let held = RevisionDirs::open(&r.dir).map_err(|e| (e.to_string(), None))?;
    let snap = open_or_build(held.tree.via(), Some(held.index.via()))
        .map_err(|e| (shown_text(&e), None))?;
    Ok((snap, name, held))
}

/// The page the global flags ask for, with the active configuration read.
fn page_of(common: &Common) -> Result<Page, String> {
    let active = match &common.active_config {
        None => None,
        Some(arg) => Some(crate::request::active_config(arg, Path::new("."))?),
    };
    Ok(Page {
        // A user's --limit stays below EVERY (it is clamped to a page, as any large limit).
        limit: match common.every {
            true => crate::query::EVERY,
            false => common.limit.min(crate::query::EVERY - 1),
        },
        offset: common.offset,
        path_prefix: common.path_prefix.as_deref().map(crate::pathname::from_arg),
        active,
        body_bytes: 0,
        places_only: false,
    })
}

/// `knav compare SYMBOL REV_A [REV_B]`: the symbol at two revisions, or at one and in the
/// files as they are.
fn compare(common: &Common, root: &Path, symbol: &str, a: &str, b: Option<&str>) -> Ran {
    const TOOL: &str = "compare_versions";
    let root_s = root.display().to_string();
    let fail = |(e, code): (String, Option<i32>)| (Envelope::error(TOOL, &root_s, e), code);
    if common.rev.is_some() {
        return fail((
            "compare names its two revisions (REV_A, REV_B); drop --rev".into(),
            Some(2),
        ));
    }
    let (snap_a, rev_a, _held_a) = match revision_snapshot(common, root, a) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let (snap_b, rev_b, _held_b) = match b {
        Some(b) => match revision_snapshot(common, root, b) {
            Ok((s, r, h)) => (s, Some(r), Some(h)),
            Err(e) => return fail(e),
        },
        None => match open_or_build(root, common.index_dir.as_deref()) {
            Ok(s) => (s, None, None),
            Err(e) => return fail((e, None)),
        },
    };
    let page = match page_of(common) {
        Ok(p) => p,
        Err(e) => return fail((e, None)),
    };
    let side_a = crate::compare::Side {
        rev: Some(rev_a),
        snap: &snap_a,
    };
    let side_b = crate::compare::Side {
        rev: rev_b,
        snap: &snap_b,
    };
    let mut env = crate::index::store::answer_or_damage(&snap_a, || {
        crate::compare::compare(&root_s, symbol, &side_a, &side_b, &page)
    })
    .unwrap_or_else(|e| Envelope::error(TOOL, &root_s, e.to_string()));
    shown_in(&mut env);
    crate::index::git::note_environment(&mut env.warning);
    (env, None)
}

/// index_status for the tree at `root` (`verbose`: every kernel macro family).
fn status(common: &Common, root: &Path, verbose: bool) -> Envelope {
    let dir = crate::index::store::existing_index_dir(root, common.index_dir.as_deref());
    let mut env = crate::status::index_status(root, &dir, None);
    let mut generation = None;
    if let Some(crate::envelope::Results::Status(s)) = &mut env.results {
        s.verbose = verbose;
        generation = s.indexed.then_some(s.generation);
    }
    // What changed since the index was built: the watcher's word when it saw nothing, else a
    // scan (at a revision nothing changes).
    if let (Some(g), None) = (generation, &common.rev) {
        let clean = crate::watchd::Client::of(root, &dir)
            .is_some_and(|c| c.check(g) == crate::watchd::Said::Clean);
        crate::status::add_changes(&mut env, root, &dir, clean);
    }
    if let Some(why) = crate::watchd::unavailable() {
        env.warn(why);
    }
    env
}

/// Answers `ask` of tool `tool` for the tree at `root`.
fn ask_in(
    common: &Common,
    tool: &'static str,
    ask: crate::request::Ask,
    root: &Path,
    trace: &mut crate::index::Trace,
) -> Envelope {
    let root = root.to_path_buf();
    let root_s = root.display().to_string();
    trace.mark("resolve root");
    let (snap, built) = match opened_or_built(&root, common.index_dir.as_deref()) {
        Ok(s) => s,
        Err(e) => return Envelope::error(tool, &root_s, e),
    };
    trace.mark("open index");
    // The whole tree checked against the index, and what changed refreshed, before answering
    // (a revision's files never change; --no-refresh answers from the index as it is).
    let mut warnings = Vec::new();
    let snap = match (built, common.rev.is_some() || common.no_refresh) {
        (false, false) => {
            let dir = snap.index_dir.clone();
            match crate::stale::fresh(&root, &dir, snap, &mut warnings) {
                Ok(s) => s,
                Err(e) => return Envelope::error(tool, &root_s, e),
            }
        }
        _ => snap,
    };
    trace.mark("fresh tree");
    let page = match page_of(common) {
        Ok(p) => p,
        Err(e) => {
            let mut env = Envelope::error(tool, &root_s, e);
            env.next_tools = vec![tool];
            return env;
        }
    };
    trace.mark("active config");
    // An answer read from a damaged index is replaced by the damage (a decoder that ran past
    // its data, or a panic in the `fst` crate on a damaged FST).
    let ask_at = |snap: &Snapshot, page: Page| {
        crate::index::store::answer_or_damage(snap, || answer(snap, page, &ask))
            .unwrap_or_else(|e| Envelope::error(tool, &root_s, e.to_string()))
    };
    let mut env = ask_at(&snap, page);
    for w in warnings {
        env.warn(w);
    }
    trace.mark("answer");
    // No answer cites a line of a file changed since it was indexed without knowing it (a
    // revision's files never change).
    let changed = match common.rev {
        None => crate::stale::changed_cited(&snap, &env),
        Some(_) => Vec::new(),
    };
    if !changed.is_empty() && common.no_refresh {
        env.warn(crate::stale::warning(&changed));
    } else if !changed.is_empty() {
        let again = refreshed(&root, common.index_dir.as_deref())
            .and_then(|fresh| Ok((page_of(common)?, fresh)));
        match again {
            Ok((page, fresh)) => {
                env = ask_at(&fresh, page);
                let still = crate::stale::changed_cited(&fresh, &env);
                if !still.is_empty() {
                    env.warn(crate::stale::warning(&still));
                }
                std::mem::forget(fresh);
            }
            Err(e) => env.warn(format!(
                "{}; refreshing failed: {e}",
                crate::stale::warning(&changed)
            )),
        }
        trace.mark("refresh");
    }
    // The process ends right after: its exit unmaps the index in one sweep, cheaper than
    // unmapping file by file (a fifth of a small query's time).
    std::mem::forget(snap);
    env
}

/// The index of `root` built, or refreshed (what changed since it was built re-indexed), and
/// opened.
fn refreshed(root: &Path, explicit_dir: Option<&Path>) -> Result<Snapshot, String> {
    let dir = index_dir(root, explicit_dir);
    let opts = BuildOptions::for_root(root)?;
    crate::index::update(root, &dir, false, &opts, &mut Progress::stderr())
        .map_err(|e| e.to_string())?;
    Snapshot::open(root, &dir)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no index in {} after building it", dir.display()))
}

/// `knav cache [prune --max-size N]`: prints the fact store of the tree at `--root` (or the
/// current directory) and what the last build did with it, or trims it.
fn cache(common: &Common, args: CacheArgs) -> i32 {
    let root = common.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let settings = match crate::settings::Settings::load(&root) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("knav: {e}");
            return 2;
        }
    };
    let Some(dir) = settings.cache.dir.clone() else {
        println!(
            "no fact store: KNAV_CACHE_DIR=off, cache.enabled = false in .knav.toml, or no \
                  cache directory (set KNAV_CACHE_DIR)"
        );
        return 0;
    };
    let store = match crate::index::factstore::FactStore::open(&dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "knav: cannot open the fact store {}: {e}; set KNAV_CACHE_DIR to a writable \
                 directory",
                dir.display()
            );
            return 1;
        }
    };
    let out = match args.action {
        Some(CacheAction::Prune { max_size }) => {
            let max = max_size.unwrap_or(settings.cache.max_bytes);
            let removed = store.prune(max);
            let json = serde_json::json!({"dir": dir, "max_bytes": max, "pruned": removed});
            let text = format!(
                "pruned {} packs ({} entries, {:.1} MB) from {} to at most {:.1} MB\n",
                removed.packs,
                removed.entries,
                removed.bytes as f64 / 1e6,
                dir.display(),
                max as f64 / 1e6
            );
            (json, text)
        }
        None => {
            let u = store.usage();
            let last = crate::index::factstore::FactStore::last_build(&dir);
            let mut text = format!(
                "fact store {}: {} entries in {} packs, {:.1} MB (cap {:.1} MB)\n",
                dir.display(),
                u.entries,
                u.packs,
                u.bytes as f64 / 1e6,
                settings.cache.max_bytes as f64 / 1e6
            );
            if let Some(t) = &last {
                text.push_str(&format!("last build: {}\n", crate::render::tally(t)));
            }
            let json = serde_json::json!({
                "dir": dir,
                "usage": u,
                "max_bytes": settings.cache.max_bytes,
                "last_build": last,
            });
            (json, text)
        }
    };
    let (mut json, mut text) = out;
    // Store files that are not regular files (a FIFO named like a pack): never opened.
    for note in store.skipped() {
        text.push_str(&format!("skipped {note}\n"));
    }
    if !store.skipped().is_empty() {
        json["skipped"] = serde_json::json!(store.skipped());
    }
    let rendered = match common.format {
        Format::Json => format!("{json}\n"),
        _ => text,
    };
    let mut stdout = std::io::stdout().lock();
    let _ = write!(stdout, "{rendered}").and_then(|_| stdout.flush());
    0
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

/// `knav dt check [KIND] …` is `knav device --check [KIND] …`.
fn dt_check_as_device(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.collect();
    if args.len() >= 3 && args[1] == "dt" && args[2] == "check" {
        args.splice(1..3, [OsString::from("device"), OsString::from("--check")]);
    }
    args
}

/// Runs the CLI; returns the exit code.
pub fn main() -> i32 {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == crate::watchd::COMMAND) {
        return crate::watchd::main(&args[1..]);
    }

    let mut trace = crate::index::Trace::new();
    // Ctrl-C or SIGTERM during a build removes its scratch and unpublished parts.
    crate::index::interrupt::install();
    if let Some(only) = command_in(dt_check_as_device(std::env::args_os()).into_iter().skip(1)) {
        let _ = ONLY.set(only);
    }
    let cli = match Cli::try_parse_from(dt_check_as_device(std::env::args_os())) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let (tool, matches) = match cli.command {
        Command::Serve(serve) => {
            return crate::serve::run(&crate::serve::ServeOptions {
                root: cli.common.root.clone(),
                index_dir: cli.common.index_dir.clone(),
                debounce: serve.debounce.map(std::time::Duration::from_secs_f64),
                allow_roots: serve.allow_root,
                tools: serve.tools,
            })
        }
        Command::Lsp => {
            return crate::lsp::run(&crate::lsp::LspOptions {
                root: cli.common.root.clone(),
                index_dir: cli.common.index_dir.clone(),
            })
        }
        Command::Cache(args) => return cache(&cli.common, args),
        Command::Tool(tool, matches) => (tool, matches),
    };
    trace.mark("parse args");
    let format = cli.common.format;
    let plain = Plain::asked(tool, &matches, format);
    let (env, code) = run(&cli.common, tool, &matches, plain.as_ref(), &mut trace);
    trace.mark("run");
    let code = code.unwrap_or_else(|| env.exit_code());
    if plain.is_some() {
        // The hits are written; what else the answer says goes to stderr, as rg's messages.
        for m in [&env.warning, &env.error].into_iter().flatten() {
            eprintln!("knav: {m}");
        }
        trace.mark("render+write");
        return code;
    }
    let out = match format {
        Format::Text => {
            let asked = |id: &str| matches.try_get_one::<String>(id).ok().flatten().cloned();
            let cmd = <Cli as clap::CommandFactory>::command;
            crate::cliwords::text(env, &asked, cmd)
        }
        Format::Json => render(&env, format),
    };
    // A closed pipe (`knav refs x | head`) is not an error worth a panic.
    let mut stdout = std::io::stdout().lock();
    let newline = if format == Format::Json { "\n" } else { "" };
    let _ = write!(stdout, "{out}{newline}").and_then(|_| stdout.flush());
    trace.mark("render+write");
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_knav_cscope_asks_for_every_result() {
        let huge = crate::query::EVERY.to_string();
        let cli = Cli::try_parse_from(["knav", "--limit", &huge, "refs", "kmap"]).unwrap();
        assert!(!cli.common.every);
        assert_eq!(page_of(&cli.common).unwrap().limit, crate::query::EVERY - 1);
        let mut every = cli.common.clone();
        every.every = true;
        assert_eq!(page_of(&every).unwrap().limit, crate::query::EVERY);
    }

    #[test]
    fn every_format_listed_parses_to_a_format_of_its_own() {
        let parsed: Vec<Format> = FORMATS
            .iter()
            .map(|(name, _)| name.parse::<Format>().unwrap())
            .collect();
        assert_eq!(parsed, [Format::Text, Format::Json]);
    }

    #[test]
    fn the_commands_are_serve_and_the_tools_commands() {
        let mut listed = commands().to_vec();
        listed.sort_unstable();
        let mut want: Vec<&str> = crate::tools::TOOLS
            .iter()
            .filter_map(|t| t.command)
            .chain(["serve", "lsp", "cache"])
            .collect();
        want.sort_unstable();
        assert_eq!(listed, want);
        // Each at a place of its own in `knav --help`.
        let mut at: Vec<u8> = crate::tools::TOOLS
            .iter()
            .filter(|t| t.command.is_some())
            .map(|t| t.help_at)
            .chain(NOT_TOOLS.iter().map(|(_, at)| *at))
            .collect();
        at.sort_unstable();
        at.dedup();
        assert_eq!(at.len(), listed.len(), "two commands at one place");
    }

    #[test]
    fn the_global_flags_are_the_shared_arguments_and_the_index_dir() {
        let global: Vec<String> = Common::augment_args(clap::Command::new("knav"))
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .filter(|id| id != "index_dir" && id != "no_refresh")
            .collect();
        let schema = rmcp::schemars::schema_for!(crate::tools::Shared);
        let mut shared: Vec<String> = schema.as_value()["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let mut global = global;
        global.sort();
        shared.sort();
        assert_eq!(global, shared);
    }

    #[test]
    fn a_first_look_finds_the_command_past_the_global_flags_and_their_values() {
        let look = |args: &[&str]| command_in(args.iter().map(OsString::from));
        assert_eq!(look(&["def", "x"]), Some("def"));
        assert_eq!(look(&["--root", "def", "refs", "x"]), Some("refs"));
        assert_eq!(
            look(&["--limit=5", "--no-refresh", "grep", "x"]),
            Some("grep")
        );
        assert_eq!(look(&["--help"]), None);
        assert_eq!(look(&["-h", "def"]), None);
        assert_eq!(look(&["deff", "x"]), None);
        assert_eq!(look(&[]), None);
        // Every global flag with a value is stepped over with its value.
        let valued = global_values();
        assert!(valued.len() >= 8, "{valued:?}");
        for flag in valued {
            let flag = format!("--{flag}");
            assert_eq!(look(&[&flag, "refs", "def"]), Some("def"), "{flag}");
        }
    }

    #[test]
    fn a_tool_command_parses_into_its_tool() {
        let cli = Cli::try_parse_from(["knav", "--limit", "5", "refs", "kmap"]).unwrap();
        let Command::Tool(tool, m) = cli.command else {
            panic!("refs is a tool")
        };
        assert_eq!((tool.name, cli.common.limit), ("find_references", 5));
        assert!(matches!(tool.from_cli(&m), Ok(Order::Ask(_))));
        let cli = Cli::try_parse_from(["knav", "serve", "--tools", "core,edit"]).unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("serve is no tool")
        };
        assert_eq!(
            serve.tools,
            Some(vec!["core".to_string(), "edit".to_string()])
        );
        assert!(Cli::try_parse_from(["knav", "grep", "-l", "-c", "x"]).is_err());
    }
}
