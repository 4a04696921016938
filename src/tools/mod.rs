//! Each tool defined once: its name, CLI command, descriptions, group and effect ([`TOOLS`]),
//! and its arguments as one type per tool that derives the CLI flags (clap), the MCP input
//! schema (schemars) and the reading of an MCP call (serde), with the conversion of those
//! arguments into an [`Order`]. The CLI (`crate::cli`) and the MCP server (`crate::serve`) both
//! read this table; neither defines a tool's arguments.
//!
//! A field's doc comment is its CLI help; `#[schemars(description)]` is its (shorter) MCP
//! description, empty where the field's name and the tool's description say it all (the
//! arguments of [`Shared`] have none: the server's instructions describe them). The two front
//! ends differ only where a field says so: a positional on the CLI is a named property over MCP
//! (the field's name is the property's), a CLI-only field is `#[serde(skip)]` and
//! `#[schemars(skip)]`, an MCP-only one is `#[arg(skip)]`, and each tool lists those in
//! [`Tool::cli_only`] and [`Tool::mcp_only`] (tests/tool_docs.rs checks both).
//! A field with a default has the CLI's type and default, and over MCP `#[serde(default)]`
//! (with `skip_serializing`, so the schema shows no default) and the schema of an `Option`.

use rmcp::schemars::{self, JsonSchema};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::request::Ask;

mod args;
pub(crate) use args::choice;
use args::*;

/// The names of the CLI's commands, in the order `knav --help` lists them: the tools'
/// ([`Tool::help_at`]) and `extra`, each at its own position.
pub fn commands(extra: &[(&'static str, u8)]) -> Vec<&'static str> {
    let mut all: Vec<(u8, &'static str)> = TOOLS
        .iter()
        .filter_map(|t| Some((t.help_at, t.command?)))
        .chain(extra.iter().map(|(name, at)| (*at, *name)))
        .collect();
    all.sort_by_key(|(at, _)| *at);
    all.into_iter().map(|(_, name)| name).collect()
}

/// What a tool is asked to do, whichever front end asks.
#[derive(Clone, Debug, PartialEq)]
pub enum Order {
    /// A question for the index (every retrieval and search tool).
    Ask(Ask),
    /// update_index: refresh the index, or rebuild it (`full`), or (CLI only) check it or
    /// bring its history index up to date.
    Update {
        /// Rebuild everything.
        full: bool,
        /// `knav index --verify`: check the index against its checksums instead.
        verify: bool,
        /// `knav index --history`: the history index instead.
        history: bool,
    },
    /// symbol_history: the commits that touched `symbol` (in `file`, when given); the shared
    /// `rev` bounds them (a range `A..B`, or what one revision reaches).
    History {
        /// The name.
        symbol: String,
        /// Only its definition in this file (moves followed).
        file: Option<String>,
    },
    /// index_status.
    Status {
        /// Every kernel macro family, not the top five (CLI `--verbose`).
        verbose: bool,
    },
    /// replace_symbol or insert_symbol.
    Edit(crate::edit::Edit),
    /// review_diff of a commit range: `git diff a b`, reviewed at revision `b`.
    ReviewRange {
        /// The older revision.
        a: String,
        /// The newer one.
        b: String,
    },
    /// compare_versions: `symbol` at git revision `a` and at `b` (`None`: the files as they are).
    Compare {
        /// The symbol.
        symbol: String,
        /// The first revision.
        a: String,
        /// The second revision, or the working tree.
        b: Option<String>,
    },
}

impl Order {
    /// Carries this order out by `front`: the one dispatch over orders, which the CLI and the
    /// MCP server both call (an order added is one each front end must carry out).
    pub fn carry_out<F: CarryOut>(self, front: &mut F) -> F::Out {
        match self {
            Order::Ask(ask) => front.ask(ask),
            Order::Update {
                full,
                verify,
                history,
            } => front.update(full, verify, history),
            Order::History { symbol, file } => front.history(symbol, file),
            Order::Status { verbose } => front.status(verbose),
            Order::Edit(edit) => front.edit(edit),
            Order::ReviewRange { a, b } => front.review_range(a, b),
            Order::Compare { symbol, a, b } => front.compare(symbol, a, b),
        }
    }
}

/// How a front end carries out each kind of [`Order`] ([`Order::carry_out`]).
pub trait CarryOut {
    /// What carrying an order out gives.
    type Out;
    /// A question for the index.
    fn ask(&mut self, ask: Ask) -> Self::Out;
    /// update_index (or, on the CLI, its `--verify` or `--history`).
    fn update(&mut self, full: bool, verify: bool, history: bool) -> Self::Out;
    /// symbol_history.
    fn history(&mut self, symbol: String, file: Option<String>) -> Self::Out;
    /// index_status.
    fn status(&mut self, verbose: bool) -> Self::Out;
    /// replace_symbol or insert_symbol.
    fn edit(&mut self, edit: crate::edit::Edit) -> Self::Out;
    /// review_diff of the commit range `a..b`, reviewed at `b`.
    fn review_range(&mut self, a: String, b: String) -> Self::Out;
    /// compare_versions.
    fn compare(&mut self, symbol: String, a: String, b: Option<String>) -> Self::Out;
}

/// The arguments every retrieval tool takes over MCP; on the CLI they are the global flags
/// (`crate::cli`), so a tool's argument type skips them there. Over MCP they are described once,
/// in the server's instructions ([`SHARED_ARGS`]), not in each tool's schema.
#[derive(Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct Shared {
    /// Another tree.
    pub root: Option<String>,
    /// `text` or `json`.
    pub format: Option<String>,
    /// Results per page.
    pub limit: Option<u64>,
    /// Results to skip.
    pub offset: Option<u64>,
    /// Only paths under this.
    pub path_prefix: Option<String>,
    /// A `.config` or `CONFIG_A=y,...` list.
    pub active_config: Option<String>,
    /// A git revision.
    pub rev: Option<String>,
}

/// The arguments of [`Shared`] with what each means, said once in the MCP server's
/// instructions: a tool's schema lists those it takes without a description.
pub const SHARED_ARGS: &[(&str, &str)] = &[
    ("root", "another indexed tree (default: the served root)"),
    ("format", "text (default) or json"),
    (
        "limit",
        "results per page, at most 1000 (default: a page sized for an agent)",
    ),
    (
        "offset",
        "results to skip; an answer gives its total and the next page's offset",
    ),
    ("path_prefix", "only paths under this"),
    (
        "active_config",
        "a .config path or CONFIG_A=y,CONFIG_B=m: leaves out what that configuration does not \
         build (#if, Makefiles, arch/), saying why",
    ),
    (
        "rev",
        "answer at this git revision (tag, branch, SHA; default: the working tree)",
    ),
];

/// Every shared argument, as [`SHARED_ARGS`] names them: the retrieval tools take them all.
const ALL: &[&str] = &{
    let mut names = [""; SHARED_ARGS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = SHARED_ARGS[i].0;
        i += 1;
    }
    names
};
/// The search tools' shared arguments: no `active_config` (a search does not filter by
/// configuration).
const SEARCH: &[&str] = &["root", "format", "limit", "offset", "path_prefix", "rev"];
/// compare_versions': no paging (it answers one symbol) and no `rev` (it names its two
/// revisions).
const COMPARE: &[&str] = &["root", "format", "path_prefix", "active_config"];
/// find_device's: paged, no path filter or revision (the catalog's budget is tight).
const DEVICE: &[&str] = &["root", "format", "limit", "offset"];
/// Only the tree (update_index and the edits answer for it, in text).
const ROOT: &[&str] = &["root"];
/// The tree and the format (index_status).
const ROOT_FORMAT: &[&str] = &["root", "format"];

/// What a `next:` hint naming a tool's command on the CLI gives it as its argument
/// (`crate::cliwords`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// Nothing: the command alone (`knav grep`, `knav status`).
    Bare,
    /// A symbol name: the answer's subject, the name asked, a hit's function; without one no
    /// hint (`knav body` alone is a usage error).
    Symbol,
    /// A chain from that name to a target only the user knows (`knav reach NAME TARGET`).
    Chain,
    /// The answer's first file.
    FirstFile,
    /// The base name of the file asked for (that is not there: where it is).
    FileName,
}

/// What a call to a tool may change, which its MCP annotations say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Reads the index only.
    Reads,
    /// Refreshes the index (update_index): changes no source, the same again changes nothing.
    Refreshes,
    /// Writes a source file.
    Writes,
}

/// The argument type of a tool as MCP reads it: its schema, its reading, its order.
trait McpArgs: DeserializeOwned + JsonSchema {
    /// The order these arguments give, and the shared ones; an error says what is wrong with
    /// an argument (the caller names the tool).
    fn order(self) -> Result<(Order, Shared), String>;
}

/// The argument type of a tool the CLI has too: its flags (clap).
trait CliArgs: McpArgs + clap::Args + clap::FromArgMatches {
    /// The order the CLI's arguments give (where the CLI reads more than MCP: a file).
    fn cli_order(self) -> Result<Order, String> {
        self.order().map(|(o, _)| o)
    }
}

/// A tool's argument type, as function pointers the table can hold.
#[derive(Clone, Copy)]
struct Parts {
    schema: fn(schemars::generate::SchemaGenerator) -> schemars::Schema,
    json: fn(serde_json::Value) -> Result<(Order, Shared), String>,
    cli: Option<(CliAugment, CliParse)>,
}

/// Adds a tool's arguments to its CLI command.
type CliAugment = fn(clap::Command) -> clap::Command;
/// Reads a CLI command's matches into an order.
type CliParse = fn(&clap::ArgMatches) -> Result<Order, String>;

fn root_schema<T: JsonSchema>(g: schemars::generate::SchemaGenerator) -> schemars::Schema {
    g.into_root_schema_for::<T>()
}

fn from_json<T: McpArgs>(v: serde_json::Value) -> Result<(Order, Shared), String> {
    serde_json::from_value::<T>(v)
        .map_err(|e| e.to_string())?
        .order()
}

fn from_cli<T: CliArgs>(m: &clap::ArgMatches) -> Result<Order, String> {
    T::from_arg_matches(m)
        .map_err(|e| e.to_string())?
        .cli_order()
}

/// The parts of a tool both front ends have.
const fn both<T: CliArgs>() -> Parts {
    Parts {
        schema: root_schema::<T>,
        json: from_json::<T>,
        cli: Some((T::augment_args, from_cli::<T>)),
    }
}

/// The parts of an MCP-only tool.
const fn mcp<T: McpArgs>() -> Parts {
    Parts {
        schema: root_schema::<T>,
        json: from_json::<T>,
        cli: None,
    }
}

/// One tool.
pub struct Tool {
    /// Its MCP name (and the envelope's `tool`).
    pub name: &'static str,
    /// Its CLI command, if the CLI has it.
    pub command: Option<&'static str>,
    /// The CLI command's one-line help (empty without a command).
    pub about: &'static str,
    /// Its MCP description, in a sentence or two: what it answers, and when to use it (which
    /// native call it replaces). The shared arguments are the server's instructions' to say.
    pub description: &'static str,
    /// The group (`knav serve --tools`) it is in: one of [`GROUPS`].
    pub group: &'static str,
    /// What a call may change.
    pub effect: Effect,
    /// Marked `_meta["anthropic/alwaysLoad"]`: an agent needs it before any search.
    pub always_load: bool,
    /// Arguments (clap ids) only the CLI has.
    pub cli_only: &'static [&'static str],
    /// Arguments (MCP properties, besides [`Shared`]'s) only MCP has.
    pub mcp_only: &'static [&'static str],
    /// What a `next:` hint naming its command on the CLI gives it as its argument.
    pub hint: Hint,
    /// The page size a call over MCP gets when it names no `limit`: sized so that a typical
    /// answer on the kernel stays under 2,000 tokens (kernel-bench's "Answer size over MCP"
    /// measures them); 0: the query's own default ([`crate::query::DEFAULT_LIMIT`]).
    pub agent_limit: u64,
    /// The arguments of [`Shared`] it takes (its MCP schema lists those, the server refuses
    /// the others); every argument type flattens all of [`Shared`].
    pub shared: &'static [&'static str],
    /// Where its command comes in `knav --help` (0: first; unused without a command).
    pub help_at: u8,
    parts: Parts,
}

impl Tool {
    /// The CLI command with its own arguments (the global ones are the CLI's), if any.
    pub fn cli_command(&self) -> Option<clap::Command> {
        let (augment, _) = self.parts.cli?;
        let name = self.command?;
        Some(
            augment(clap::Command::new(name))
                .about(self.about)
                .long_about(None),
        )
    }

    /// The order a CLI command's matches give; an error is the envelope's.
    pub fn from_cli(&self, m: &clap::ArgMatches) -> Result<Order, String> {
        match self.parts.cli {
            Some((_, parse)) => parse(m),
            None => Err(format!("{} has no CLI command", self.name)),
        }
    }

    /// The root schema of the tool's arguments, from generator `g`.
    pub fn schema(&self, g: schemars::generate::SchemaGenerator) -> schemars::Schema {
        (self.parts.schema)(g)
    }

    /// The order and shared arguments of MCP arguments `args` (already checked against the
    /// schema); an error says what is wrong without naming the tool.
    pub fn from_json(&self, args: serde_json::Value) -> Result<(Order, Shared), String> {
        (self.parts.json)(args)
    }
}

/// The page size a call of `tool` over MCP gets when it names no `limit`
/// ([`Tool::agent_limit`]); 0 for no tool.
pub fn agent_limit(tool: &str) -> u64 {
    by_name(tool).map_or(0, |t| t.agent_limit)
}

/// Bytes of source text (bodies) an answer over MCP shows at most, so that a long function
/// keeps its page under the 2,000 tokens [`agent_limit`] keeps a page under (the CLI's 300
/// lines are well over); the answer names the lines left out.
pub const AGENT_BODY_BYTES: usize = 6_000;

/// The tool groups `knav serve --tools` and `.knav.toml`'s `serve.tools` choose from (default:
/// all); every tool is in one.
pub const GROUPS: &[&str] = &["core", "search", "edit", "review", "hardware"];

/// The tools of group `group`, in catalog order.
pub fn group_tools(group: &str) -> Vec<&'static str> {
    TOOLS
        .iter()
        .filter(|t| t.group == group)
        .map(|t| t.name)
        .collect()
}

/// The tool named `name`.
pub fn by_name(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The tool whose CLI command is `command`.
pub fn by_command(command: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.command == Some(command))
}

/// Every tool, in catalog order (the order MCP lists them in).
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "find_definition",
        command: Some("def"),
        about: "Where SYMBOL is defined (find_definition)",
        description: "Where a C symbol or CONFIG_X is defined, with kind, signature, #if guard \
                      and reference count. Use instead of grep or ctags.",
        group: "core",
        effect: Effect::Reads,
        always_load: true,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Symbol,
        agent_limit: 0,
        shared: ALL,
        help_at: 3,
        parts: both::<DefArgs>(),
    },
    Tool {
        name: "find_references",
        command: Some("refs"),
        about: "Every reference to SYMBOL (find_references)",
        description: "Every use of a symbol in code (not comments), with its role and #if guard. Use instead of grep -rw.",
        group: "core",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Symbol,
        agent_limit: 40,
        shared: ALL,
        help_at: 4,
        parts: both::<RefsArgs>(),
    },
    Tool {
        name: "find_callers",
        command: Some("callers"),
        about: "The call sites of SYMBOL (find_callers)",
        description: "The call sites of a function, each with the calling function. Use \
                      instead of grep for `name(`.",
        group: "core",
        effect: Effect::Reads,
        always_load: true,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Symbol,
        agent_limit: 40,
        shared: ALL,
        help_at: 5,
        parts: both::<CallsArgs<Callers>>(),
    },
    Tool {
        name: "find_callees",
        command: Some("callees"),
        about: "What SYMBOL calls (find_callees)",
        description: "The functions a function calls, each with where it is defined. Use \
                      instead of reading its body.",
        group: "core",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Symbol,
        agent_limit: 0,
        shared: ALL,
        help_at: 6,
        parts: both::<CallsArgs<Callees>>(),
    },
    Tool {
        name: "get_symbol_body",
        command: Some("body"),
        about: "The source of SYMBOL's definitions (get_symbol_body)",
        description: "The source text of a symbol's definitions. Use instead of finding and \
                      reading the file.",
        group: "core",
        effect: Effect::Reads,
        always_load: true,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Symbol,
        agent_limit: 0,
        shared: ALL,
        help_at: 7,
        parts: both::<BodyArgs>(),
    },
    Tool {
        name: "reachability",
        command: Some("reach"),
        about: "Whether FROM can reach TO through calls (reachability)",
        description: "Whether one function can reach another through calls, with the shortest call chain. Use instead of tracing callers.",
        group: "core",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Chain,
        agent_limit: 0,
        shared: ALL,
        help_at: 8,
        parts: both::<ReachArgs>(),
    },
    Tool {
        name: "list_file_symbols",
        command: Some("symbols"),
        about: "The definitions in FILE (list_file_symbols)",
        description: "A file's definitions in line order, with kind and #if guard. Use instead of reading the file.",
        group: "core",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::FirstFile,
        agent_limit: 50,
        shared: ALL,
        help_at: 9,
        parts: both::<FileArgs>(),
    },
    Tool {
        name: "search_symbols",
        command: Some("find"),
        about: "Defined names matching every token, each as a prefix of the name or of a `_` part \
                (search_symbols): `knav find ext4 read iter`, `knav find '/vfs_.*v/'`",
        description: "Defined names from parts of the name, exact name first. Use instead of \
                      grep when unsure of a name.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Symbol,
        agent_limit: 30,
        shared: SEARCH,
        help_at: 10,
        parts: both::<FindArgs>(),
    },
    Tool {
        name: "search_files",
        command: Some("files"),
        about: "Indexed files whose path matches every token (search_files): `knav files ext2 file`",
        description: "C files from parts of their path, exact file name first. Use instead of \
                      find -name.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::FileName,
        agent_limit: 30,
        shared: SEARCH,
        help_at: 11,
        parts: both::<FilesArgs>(),
    },
    Tool {
        name: "search_text",
        command: Some("grep"),
        about: "The lines of any text file matching PATTERN, as `rg -n` finds them (search_text). \
                Exit 0 with hits, 1 without, 2 on an error",
        description: "rg -n over every text file, each hit with its enclosing definition and #if guard. Use instead of Grep or rg.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[
            "files_with_matches",
            "count",
            "max_count",
            "vimgrep",
            "heading",
            "no_heading",
            "line_number",
        ],
        mcp_only: &["output"],
        hint: Hint::Bare,
        agent_limit: 20,
        shared: ALL,
        help_at: 16,
        parts: both::<TextArgs>(),
    },
    Tool {
        name: "search_code",
        command: Some("search"),
        about: "Definitions ranked for what they do, in words (search_code): \
                `knav search choose a process to kill when memory runs out`",
        description: "Definitions ranked for what they do, in words. Use instead of grepping guessed names.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Bare,
        agent_limit: 10,
        shared: SEARCH,
        help_at: 18,
        parts: both::<CodeArgs>(),
    },
    Tool {
        name: "search_docs",
        command: Some("docs"),
        about: "Documentation sections ranked for a query in words (search_docs): \
                `knav docs out of memory killer`",
        description: "Sections of Documentation/ ranked for words. Use instead of grep -r \
                      Documentation.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Bare,
        agent_limit: 10,
        shared: SEARCH,
        help_at: 17,
        parts: both::<DocsArgs>(),
    },
    Tool {
        name: "find_device",
        command: Some("device"),
        about: "The drivers matching a compatible or device ID (table entry, driver, probe, \
                CONFIG and y/m/n), its bindings and the boards using it (find_device): \
                `knav device fsl,imx21-i2c`, `knav device pci:8086:15b8`, `--driver NAME|FILE`",
        description: "Drivers, config, bindings and boards of a compatible or device ID. Use \
                      instead of grep -r.",
        group: "hardware",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &["driver", "check"],
        mcp_only: &[],
        hint: Hint::Bare,
        agent_limit: 10,
        shared: DEVICE,
        help_at: 21,
        parts: both::<DeviceArgs>(),
    },
    Tool {
        name: "change_impact",
        command: Some("impact"),
        about: "Who a change to SYMBOL affects: its callers to --depth levels, by MAINTAINERS \
                subsystem and top directory, with export status (change_impact)",
        description: "Who a change to a function affects: its callers to a depth by subsystem and directory, with export status. Use instead of repeated find_callers.",
        group: "review",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Symbol,
        agent_limit: 40,
        shared: ALL,
        help_at: 12,
        parts: both::<ImpactArgs>(),
    },
    Tool {
        name: "compare_versions",
        command: Some("compare"),
        about: "SYMBOL at git revision REV_A and at REV_B (default: the files as they are): each \
                definition same, changed, moved, added or removed, with the body's diff, and \
                the callers added and removed (compare_versions)",
        description: "A symbol at two git revisions: each definition same, changed, moved, added or removed, with its diff and the callers gained and lost. Use instead of diffing checkouts.",
        group: "review",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Bare,
        agent_limit: 0,
        shared: COMPARE,
        help_at: 14,
        parts: both::<CompareArgs>(),
    },
    Tool {
        name: "symbol_history",
        command: Some("history"),
        about: "The commits that changed SYMBOL's definition, newest first (--file PATH for one \
                file's, moves followed; --rev RANGE to bound them), from the history index \
                (`knav index --history`, or built on first use) (symbol_history)",
        description: "The commits that changed a definition, newest first; rev bounds them (A..B). Use instead of git log -L.",
        group: "review",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Symbol,
        agent_limit: 0,
        shared: ALL,
        help_at: 15,
        parts: both::<HistoryArgs>(),
    },
    Tool {
        name: "review_diff",
        command: Some("diff"),
        about: "The definitions a unified diff touches, with guards, callers and subsystems \
                (review_diff). `--limit`/`--offset` page its hunks and definitions together, in diff \
                order; a diff of more than 16 MiB, 10,000 files or 50,000 hunks is refused",
        description: "The definitions a unified diff or git range touches, with #if guard, callers and subsystems. Use instead of reading each hunk's file.",
        group: "review",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &["file"],
        mcp_only: &["diff", "range"],
        hint: Hint::Bare,
        agent_limit: 0,
        shared: ALL,
        help_at: 13,
        parts: both::<DiffArgs>(),
    },
    Tool {
        name: "update_index",
        command: Some("index"),
        about: "Build or refresh the index",
        description: "Refresh the index now (what changed), or rebuild it (full). Calls \
                      already refresh an index older than serve.debounce_s.",
        group: "core",
        effect: Effect::Refreshes,
        always_load: false,
        cli_only: &["verify", "history"],
        mcp_only: &[],
        hint: Hint::Bare,
        agent_limit: 0,
        shared: ROOT,
        help_at: 0,
        parts: both::<UpdateArgs>(),
    },
    Tool {
        name: "index_status",
        command: Some("status"),
        about: "Whether the index is ready and what it holds (index_status); builds nothing",
        description: "Whether the index is ready: files indexed and left out, age, size, a build's progress. Use instead of retrying until indexing is done.",
        group: "review",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &["verbose"],
        mcp_only: &[],
        hint: Hint::Bare,
        agent_limit: 0,
        shared: ROOT_FORMAT,
        help_at: 1,
        parts: both::<StatusArgs>(),
    },
    Tool {
        name: "replace_symbol",
        command: None,
        about: "",
        description: "Rewrite one definition in place; refused unless brackets and #if balance and ctags finds the symbol. Use instead of Edit on a whole file.",
        group: "edit",
        effect: Effect::Writes,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Bare,
        agent_limit: 0,
        shared: ROOT,
        help_at: 0,
        parts: mcp::<ReplaceArgs>(),
    },
    Tool {
        name: "insert_symbol",
        command: None,
        about: "",
        description: "Add a definition before or after another, checked as replace_symbol. Use instead of Edit on a whole file.",
        group: "edit",
        effect: Effect::Writes,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        hint: Hint::Bare,
        agent_limit: 0,
        shared: ROOT,
        help_at: 0,
        parts: mcp::<InsertArgs>(),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The order of CLI command line `argv` (the command and its arguments).
    fn cli(argv: &[&str]) -> Order {
        let tool = by_command(argv[0]).unwrap();
        let m = tool
            .cli_command()
            .unwrap()
            .try_get_matches_from(argv)
            .unwrap();
        tool.from_cli(&m).unwrap()
    }

    /// The order of MCP call `args` to `name`.
    fn mcp(name: &str, args: serde_json::Value) -> Order {
        by_name(name).unwrap().from_json(args).unwrap().0
    }

    #[test]
    fn both_front_ends_give_the_same_order_for_the_same_arguments() {
        let same: &[(&[&str], &str, serde_json::Value)] = &[
            (
                &["def", "kmap"],
                "find_definition",
                json!({"symbol": "kmap"}),
            ),
            (
                &["refs", "kmap", "--group-by", "file"],
                "find_references",
                json!({"symbol": "kmap", "group_by": "file"}),
            ),
            (
                &["callers", "kmap"],
                "find_callers",
                json!({"symbol": "kmap"}),
            ),
            (
                &["callees", "kmap"],
                "find_callees",
                json!({"symbol": "kmap"}),
            ),
            (
                &["body", "kmap"],
                "get_symbol_body",
                json!({"symbol": "kmap"}),
            ),
            (
                &["reach", "a", "b", "--max-depth", "3", "--include-uncertain"],
                "reachability",
                json!({"from_symbol": "a", "to_symbol": "b", "max_depth": 3,
                       "include_uncertain": true}),
            ),
            (
                &["symbols", "mm/x.c", "--from", "end"],
                "list_file_symbols",
                json!({"file_path": "mm/x.c", "from": "end"}),
            ),
            (
                &["find", "ext4", "read", "--kind", "function"],
                "search_symbols",
                json!({"query": "ext4 read", "kind": "function"}),
            ),
            (
                &["files", "ext2", "file"],
                "search_files",
                json!({"query": "ext2 file"}),
            ),
            (
                &[
                    "grep", "-Fiw", "-c", "-C", "2", "-g", "*.c", "--within", "f", "x(", "mm",
                ],
                "search_text",
                json!({"pattern": "x(", "fixed_strings": true, "ignore_case": true,
                       "word": true, "output": "count", "context": 2, "globs": ["*.c"],
                       "within": "f", "paths": ["mm"]}),
            ),
            (
                &["search", "kill", "--kind", "struct"],
                "search_code",
                json!({"query": "kill", "kind": "struct"}),
            ),
            (
                &["docs", "oom", "killer"],
                "search_docs",
                json!({"query": "oom killer"}),
            ),
            (
                &["device", "fsl,imx21-i2c"],
                "find_device",
                json!({"device": "fsl,imx21-i2c"}),
            ),
            (
                &["device", "--driver", "i2c_imx_driver"],
                "find_device",
                json!({"device": "driver:i2c_imx_driver"}),
            ),
            (&["impact", "f"], "change_impact", json!({"symbol": "f"})),
            (&["index", "--full"], "update_index", json!({"full": true})),
            (&["status"], "index_status", json!({})),
        ];
        for (argv, name, args) in same {
            let order = cli(argv);
            assert_eq!(order, mcp(name, args.clone()), "{argv:?}");
            if let Order::Ask(ask) = &order {
                assert_eq!(ask.tool(), *name, "{argv:?}");
            }
        }
    }

    #[test]
    fn a_questions_tool_is_its_entrys_name() {
        // Each query module names its tool (`TOOL`, read by `Ask::tool`); the entry must
        // say the same name. The other questions are checked with both front ends above.
        let diff = "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n";
        let Order::Ask(ask) = mcp("review_diff", json!({ "diff": diff })) else {
            panic!("review_diff of a diff is a question")
        };
        assert_eq!(ask.tool(), "review_diff");
    }

    #[test]
    fn every_tool_takes_shared_arguments_that_exist() {
        assert_eq!(ALL.len(), 7);
        for t in TOOLS {
            for name in t.shared {
                assert!(ALL.contains(name), "{}: no shared argument {name}", t.name);
            }
        }
    }

    #[test]
    fn defaults_and_choices_are_read_alike() {
        assert_eq!(
            mcp("get_symbol_body", json!({"symbol": "x"})),
            cli(&["body", "x"])
        );
        assert_eq!(
            mcp(
                "reachability",
                json!({"from_symbol": "a", "to_symbol": "b"})
            ),
            cli(&["reach", "a", "b"])
        );
        assert_eq!(
            mcp(
                "reachability",
                json!({"from_symbol": "a", "to_symbol": "b",
                                       "max_depth": 1u64 << 40})
            ),
            Order::Ask(Ask::Reach {
                from: "a".into(),
                to: "b".into(),
                max_depth: u32::MAX,
                include_uncertain: false
            })
        );
        assert_eq!(
            mcp("search_symbols", json!({"query": "x", "kind": ""})),
            cli(&["find", "x"])
        );
        assert_eq!(
            cli(&["grep", "-l", "x"]),
            mcp("search_text", json!({"pattern": "x", "output": "files"}))
        );
        let e =
            |name: &str, v: serde_json::Value| by_name(name).unwrap().from_json(v).err().unwrap();
        assert_eq!(
            e(
                "list_file_symbols",
                json!({"file_path": "a", "from": "middle"})
            ),
            "from must be start or end, not 'middle'"
        );
        assert!(e("search_code", json!({"query": "a", "kind": "fn"})).contains("unknown kind 'fn'"));
        assert!(
            e("find_references", json!({"symbol": "a", "group_by": "x"}))
                .contains("auto, line or file")
        );
        assert!(e(
            "insert_symbol",
            json!({"file": "a", "anchor": "b", "position": "in", "source": "s"})
        )
        .contains("before or after"));
    }
}
