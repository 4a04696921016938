//! Each tool defined once: its name, CLI command, descriptions, group and effect ([`TOOLS`]),
//! and its arguments as one type per tool that derives the CLI flags (clap), the MCP input
//! schema (schemars) and the reading of an MCP call (serde), with the conversion of those
//! arguments into an [`Order`]. The CLI (`crate::cli`) and the MCP server (`crate::serve`) both
//! read this table; neither defines a tool's arguments.
//!
//! A field's doc comment is its CLI help; `#[schemars(description)]` is its (shorter) MCP
//! description. The two front ends differ only where a field says so: a positional on the CLI
//! is a named property over MCP (the field's name is the property's), a CLI-only field is
//! `#[serde(skip)]` and `#[schemars(skip)]`, an MCP-only one is `#[arg(skip)]`, and each tool
//! lists those in [`Tool::cli_only`] and [`Tool::mcp_only`] (tests/tool_docs.rs checks both).
//! A field with a default has the CLI's type and default, and over MCP `#[serde(default)]`
//! (with `skip_serializing`, so the schema shows no default) and the schema of an `Option`.

use std::path::PathBuf;

use clap::builder::TypedValueParser;
use rmcp::schemars::{self, JsonSchema};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};

use crate::envelope::quote;
use crate::query::GroupBy;
use crate::request::Ask;

/// What a tool is asked to do, whichever front end asks.
#[derive(Clone, Debug, PartialEq)]
pub enum Order {
    /// A question for the index (every retrieval and search tool).
    Ask(Ask),
    /// update_index: refresh the index, or rebuild it (`full`), or (CLI only) check it.
    Update {
        /// Rebuild everything.
        full: bool,
        /// `knav index --verify`: check the index against its checksums instead.
        verify: bool,
    },
    /// index_status.
    Status,
    /// replace_symbol or insert_symbol.
    Edit(crate::edit::Edit),
}

/// The arguments every retrieval tool takes over MCP; on the CLI they are the global flags
/// (`crate::cli`), so a tool's argument type skips them there.
#[derive(Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct Shared {
    /// tree to search (default: the served root)
    pub root: Option<String>,
    /// text (default) or json
    pub format: Option<String>,
    /// results per page, default 100, max 1000
    pub limit: Option<u64>,
    /// results to skip
    pub offset: Option<u64>,
    /// only paths under this
    pub path_prefix: Option<String>,
    /// .config path or CONFIG_A=y,CONFIG_B=m: leaves out what it does not build (#if, Makefiles, arch/), with reasons
    pub active_config: Option<String>,
}

/// [`Shared`] as the search tools take it: without `active_config` (a search does not filter by
/// configuration).
#[derive(Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct SearchShared {
    /// tree (default: the served root)
    root: Option<String>,
    /// text or json
    format: Option<String>,
    /// default 100, max 1000
    limit: Option<u64>,
    /// results to skip
    offset: Option<u64>,
    /// only paths under this
    path_prefix: Option<String>,
}

impl From<SearchShared> for Shared {
    fn from(c: SearchShared) -> Shared {
        Shared {
            root: c.root,
            format: c.format,
            limit: c.limit,
            offset: c.offset,
            path_prefix: c.path_prefix,
            active_config: None,
        }
    }
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
    /// Its MCP description: what it is for and which native call it replaces.
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

/// The tool groups `knav serve --tools` and `.knav.toml`'s `serve.tools` choose from (default:
/// all); every tool is in one.
pub const GROUPS: &[&str] = &["core", "search", "edit", "review"];

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

/// `s` parsed by `T`'s `FromStr`, its error as serde's (a string-valued choice over MCP).
fn parsed<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    String::deserialize(d)?.parse().map_err(D::Error::custom)
}

/// A `kind` argument (an empty one is none).
fn kind<'de, D: Deserializer<'de>>(d: D) -> Result<Option<knav_ctags::Kind>, D::Error> {
    let k = String::deserialize(d)?;
    if k.is_empty() {
        return Ok(None);
    }
    crate::query::parse_kind(&k)
        .map(Some)
        .map_err(D::Error::custom)
}

/// An integer argument, as a `u32` (larger ones taken as `u32::MAX`).
fn clamped<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(u64::deserialize(d)?.min(u32::MAX as u64) as u32)
}

/// A query over MCP: one string, where the CLI takes words.
fn words<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(vec![String::deserialize(d)?])
}

/// A path as the CLI reads it (any bytes, in the form knav keeps them).
fn path_arg() -> impl TypedValueParser<Value = String> {
    clap::builder::OsStringValueParser::new().map(|s| crate::pathname::from_arg(&s))
}

/// Bodies get_symbol_body shows by default.
const MAX_DEFINITIONS: u64 = 3;
/// Calls reachability follows by default.
const MAX_DEPTH: u32 = 8;

fn max_definitions() -> u64 {
    MAX_DEFINITIONS
}

fn max_depth() -> u32 {
    MAX_DEPTH
}

fn impact_depth() -> u32 {
    crate::query::impact::DEFAULT_DEPTH
}

/// find_definition (`knav def`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct DefArgs {
    /// The identifier to look up.
    #[schemars(description = "C identifier")]
    symbol: String,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for DefArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Def {
            symbol: self.symbol,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for DefArgs {}

/// find_references (`knav refs`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct RefsArgs {
    /// The identifier to look up.
    #[schemars(description = "C identifier")]
    symbol: String,
    /// One row per reference (line), per file (file), or per file above 200 (auto).
    #[arg(long, value_enum, default_value_t = GroupBy::Auto)]
    #[serde(default, skip_serializing, deserialize_with = "parsed")]
    #[schemars(
        with = "Option<String>",
        description = "auto (per file above 200 rows), line or file"
    )]
    group_by: GroupBy,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for RefsArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Refs {
            symbol: self.symbol,
            group_by: self.group_by,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for RefsArgs {}

/// find_callers (`knav callers`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct CallersArgs {
    /// The function whose call sites to list.
    #[schemars(description = "C identifier")]
    symbol: String,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for CallersArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Callers {
            symbol: self.symbol,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for CallersArgs {}

/// find_callees (`knav callees`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct CalleesArgs {
    /// The function whose body to read.
    #[schemars(description = "C identifier")]
    symbol: String,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for CalleesArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Callees {
            symbol: self.symbol,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for CalleesArgs {}

/// get_symbol_body (`knav body`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct BodyArgs {
    /// The identifier whose definitions to show.
    #[schemars(description = "C identifier")]
    symbol: String,
    /// Bodies to show at most.
    #[arg(long, default_value_t = MAX_DEFINITIONS)]
    #[serde(default = "max_definitions", skip_serializing)]
    #[schemars(with = "Option<u64>", description = "bodies to show, default 3")]
    max_definitions: u64,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for BodyArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Body {
            symbol: self.symbol,
            max_definitions: self.max_definitions,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for BodyArgs {}

/// reachability (`knav reach`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct ReachArgs {
    /// The function to start from.
    #[arg(value_name = "FROM")]
    #[schemars(description = "function to start from")]
    from_symbol: String,
    /// The function to reach.
    #[arg(value_name = "TO")]
    #[schemars(description = "function to reach")]
    to_symbol: String,
    /// Calls to follow at most (1..12).
    #[arg(long, default_value_t = MAX_DEPTH)]
    #[serde(default = "max_depth", skip_serializing, deserialize_with = "clamped")]
    #[schemars(with = "Option<u64>", description = "calls to follow, 1-12, default 8")]
    max_depth: u32,
    /// Also follow calls through members whose struct type is not known (matched by the
    /// member's name only).
    #[arg(long)]
    #[serde(default, skip_serializing)]
    #[schemars(
        with = "Option<bool>",
        description = "also follow calls through members of unknown struct type"
    )]
    include_uncertain: bool,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for ReachArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Reach {
            from: self.from_symbol,
            to: self.to_symbol,
            max_depth: self.max_depth,
            include_uncertain: self.include_uncertain,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for ReachArgs {}

/// Where list_file_symbols starts its pages.
#[derive(Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
enum Start {
    /// The first definition.
    #[default]
    Start,
    /// The last definition, paging backwards.
    End,
}

impl std::str::FromStr for Start {
    type Err = String;
    fn from_str(s: &str) -> Result<Start, String> {
        match s {
            "start" => Ok(Start::Start),
            "end" => Ok(Start::End),
            f => Err(format!("from must be start or end, not {}", quote(f))),
        }
    }
}

/// list_file_symbols (`knav symbols`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct FileArgs {
    /// A path relative to the root; a directory lists its files with their definition
    /// counts.
    #[arg(value_name = "FILE", value_parser = path_arg())]
    #[schemars(description = "path relative to the root; a directory lists its files")]
    file_path: String,
    /// `end`: page backwards from the end of the file, last definition first.
    #[arg(long, value_enum, default_value_t = Start::Start)]
    #[serde(default, skip_serializing, deserialize_with = "parsed")]
    #[schemars(
        with = "Option<String>",
        description = "start (default) or end: page backwards from the file's end"
    )]
    from: Start,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for FileArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Symbols {
            file: self.file_path,
            from_end: self.from == Start::End,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for FileArgs {}

/// search_symbols (`knav find`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct FindArgs {
    /// Parts of a name, or /REGEX/ matched against whole names.
    #[arg(required = true, num_args = 1..)]
    #[serde(deserialize_with = "words")]
    #[schemars(
        with = "String",
        description = "name parts (all must match) or /REGEX/"
    )]
    query: Vec<String>,
    /// Only names with a definition of this kind (function, struct, macro, …).
    #[arg(long, value_parser = crate::query::parse_kind)]
    #[serde(default, skip_serializing, deserialize_with = "kind")]
    #[schemars(with = "Option<String>", description = "function, struct, macro, ...")]
    kind: Option<knav_ctags::Kind>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: SearchShared,
}

impl McpArgs for FindArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Find {
            query: self.query.join(" "),
            kind: self.kind,
        };
        Ok((Order::Ask(ask), self.shared.into()))
    }
}
impl CliArgs for FindArgs {}

/// search_files (`knav files`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct FilesArgs {
    /// Parts of a path.
    #[arg(required = true, num_args = 1..)]
    #[serde(deserialize_with = "words")]
    #[schemars(with = "String", description = "path parts (all must match)")]
    query: Vec<String>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: SearchShared,
}

impl McpArgs for FilesArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Files {
            query: self.query.join(" "),
        };
        Ok((Order::Ask(ask), self.shared.into()))
    }
}
impl CliArgs for FilesArgs {}

/// search_text (`knav grep`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct TextArgs {
    /// A Rust regular expression (rg's syntax), or a literal with -F.
    #[schemars(description = "rg regex")]
    pattern: String,
    /// Files or directories to search in, relative to the root (default: all of it).
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<Vec<String>>", description = "files/dirs to search")]
    paths: Vec<String>,
    /// Take the pattern as a literal string.
    #[arg(short = 'F', long)]
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<bool>", description = "literal (-F)")]
    fixed_strings: bool,
    /// Match case-insensitively.
    #[arg(short = 'i', long)]
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<bool>", description = "-i")]
    ignore_case: bool,
    /// Only matches surrounded by word boundaries.
    #[arg(short = 'w', long = "word-regexp")]
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<bool>", description = "-w")]
    word: bool,
    /// Only files matching this rg glob; `!GLOB` excludes (repeatable).
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<Vec<String>>", description = "rg globs, !g excludes")]
    globs: Vec<String>,
    /// Only hits inside the definitions of SYMBOL.
    #[arg(long, value_name = "SYMBOL")]
    #[schemars(description = "only in this symbol's definitions")]
    within: Option<String>,
    /// Lines of context either side of each hit (0-10).
    #[arg(short = 'C', long, default_value_t = 0, value_name = "N")]
    #[serde(default, skip_serializing, deserialize_with = "clamped")]
    #[schemars(with = "Option<u64>", description = "context lines 0-10")]
    context: u32,
    /// lines, files or count
    #[arg(skip)]
    output: Option<String>,
    /// List the files with hits, not the lines.
    #[arg(short = 'l', long, conflicts_with = "count")]
    #[serde(skip)]
    #[schemars(skip)]
    files_with_matches: bool,
    /// Count the matching lines of each file.
    #[arg(short = 'c', long)]
    #[serde(skip)]
    #[schemars(skip)]
    count: bool,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for TextArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        use crate::query::GrepMode;
        let mode = match self.output.as_deref() {
            None if self.files_with_matches => GrepMode::Files,
            None if self.count => GrepMode::Count,
            None | Some("lines") => GrepMode::Lines,
            Some("files") => GrepMode::Files,
            Some("count") => GrepMode::Count,
            Some(o) => {
                return Err(format!(
                    "output must be lines, files or count, not {}",
                    quote(o)
                ))
            }
        };
        let ask = Ask::Grep(Box::new(crate::query::GrepAsk {
            pattern: crate::index::text::search::Pattern {
                text: self.pattern,
                fixed: self.fixed_strings,
                ignore_case: self.ignore_case,
                word: self.word,
            },
            paths: self.paths,
            globs: self.globs,
            within: self.within,
            context: self.context,
            mode,
        }));
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for TextArgs {}

/// search_code (`knav search`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct CodeArgs {
    /// Words saying what the code does.
    #[arg(required = true, num_args = 1..)]
    #[serde(deserialize_with = "words")]
    #[schemars(with = "String", description = "words")]
    query: Vec<String>,
    /// Only definitions of this kind (function, struct, union, enum, typedef).
    #[arg(long, value_parser = crate::query::parse_kind)]
    #[serde(default, skip_serializing, deserialize_with = "kind")]
    #[schemars(with = "Option<String>", description = "function, struct, ...")]
    kind: Option<knav_ctags::Kind>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: SearchShared,
}

impl McpArgs for CodeArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Code {
            query: self.query.join(" "),
            kind: self.kind,
        };
        Ok((Order::Ask(ask), self.shared.into()))
    }
}
impl CliArgs for CodeArgs {}

/// search_docs (`knav docs`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct DocsArgs {
    /// Words to look for.
    #[arg(required = true, num_args = 1..)]
    #[serde(deserialize_with = "words")]
    #[schemars(with = "String", description = "words")]
    query: Vec<String>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: SearchShared,
}

impl McpArgs for DocsArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Docs {
            query: self.query.join(" "),
        };
        Ok((Order::Ask(ask), self.shared.into()))
    }
}
impl CliArgs for DocsArgs {}

/// change_impact (`knav impact`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct ImpactArgs {
    /// The function.
    #[schemars(description = "function")]
    symbol: String,
    /// Levels of callers (0-10; 1: direct callers only).
    #[arg(long, default_value_t = crate::query::impact::DEFAULT_DEPTH)]
    #[serde(
        default = "impact_depth",
        skip_serializing,
        deserialize_with = "clamped"
    )]
    #[schemars(
        with = "Option<u64>",
        description = "levels of callers, 0-10, default 2"
    )]
    depth: u32,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for ImpactArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Impact {
            symbol: self.symbol,
            depth: self.depth,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for ImpactArgs {}

/// review_diff (`knav diff`): MCP takes the diff's text, the CLI a file holding it.
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct DiffArgs {
    /// unified diff text (git diff, mailed patch); at most 10000 files, 50000 hunks
    #[arg(skip)]
    diff: String,
    /// The diff (git diff, diff -u or a mailed patch); `-` or none: standard input.
    #[serde(skip)]
    #[schemars(skip)]
    file: Option<PathBuf>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for DiffArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        Ok((Order::Ask(Ask::Review { diff: self.diff }), self.shared))
    }
}

impl CliArgs for DiffArgs {
    fn cli_order(self) -> Result<Order, String> {
        let diff = read_diff(self.file.as_deref())?;
        Ok(Order::Ask(Ask::Review { diff }))
    }
}

/// The diff `knav diff` reads: FILE, or standard input for `-` or none.
fn read_diff(file: Option<&std::path::Path>) -> Result<String, String> {
    use std::io::Read;
    let max = crate::diff::MAX_DIFF_BYTES as u64;
    let mut bytes = Vec::new();
    let (read, what) = match file.filter(|f| *f != std::path::Path::new("-")) {
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

/// update_index (`knav index`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct UpdateArgs {
    /// Rebuild everything instead of only what changed.
    #[arg(long)]
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<bool>", description = "rebuild everything")]
    full: bool,
    /// Check the index against its checksums instead of refreshing it.
    #[arg(long, conflicts_with = "full")]
    #[serde(skip)]
    #[schemars(skip)]
    verify: bool,
    /// tree to search (default: the served root)
    #[arg(skip)]
    root: Option<String>,
}

impl McpArgs for UpdateArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let order = Order::Update {
            full: self.full,
            verify: self.verify,
        };
        let shared = Shared {
            root: self.root,
            ..Shared::default()
        };
        Ok((order, shared))
    }
}
impl CliArgs for UpdateArgs {}

/// index_status (`knav status`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct StatusArgs {
    /// tree (default: the served root)
    #[arg(skip)]
    root: Option<String>,
    /// text or json
    #[arg(skip)]
    format: Option<String>,
}

impl McpArgs for StatusArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let shared = Shared {
            root: self.root,
            format: self.format,
            ..Shared::default()
        };
        Ok((Order::Status, shared))
    }
}
impl CliArgs for StatusArgs {}

/// replace_symbol (MCP only).
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct ReplaceArgs {
    /// path relative to the root
    file: String,
    /// the definition to rewrite
    symbol: String,
    /// the whole new definition, signature included
    source: String,
    /// tree (default: the served root)
    root: Option<String>,
}

impl McpArgs for ReplaceArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let edit = crate::edit::Edit::Replace {
            file: self.file,
            symbol: self.symbol,
            source: self.source,
        };
        let shared = Shared {
            root: self.root,
            ..Shared::default()
        };
        Ok((Order::Edit(edit), shared))
    }
}

/// insert_symbol (MCP only).
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct InsertArgs {
    /// path relative to the root
    file: String,
    /// the definition to insert next to
    anchor: String,
    /// before or after
    position: String,
    /// the whole new definition
    source: String,
    /// tree (default: the served root)
    root: Option<String>,
}

impl McpArgs for InsertArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let before = match self.position.as_str() {
            "before" => true,
            "after" => false,
            p => {
                return Err(format!(
                    "position must be before or after, not {}",
                    quote(p)
                ))
            }
        };
        let edit = crate::edit::Edit::Insert {
            file: self.file,
            anchor: self.anchor,
            before,
            source: self.source,
        };
        let shared = Shared {
            root: self.root,
            ..Shared::default()
        };
        Ok((Order::Edit(edit), shared))
    }
}

/// Every tool, in catalog order (the order MCP lists them in).
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "find_definition",
        command: Some("def"),
        about: "Where SYMBOL is defined (find_definition)",
        description: "Where a C symbol is defined (functions, macros, structs, typedefs, \
                      variables; CONFIG_X in Kconfig), each with its #if guard, kind and \
                      signature, plus reference count and top files. Use instead of grep for \
                      `name(` or ctags.",
        group: "core",
        effect: Effect::Reads,
        always_load: true,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<DefArgs>(),
    },
    Tool {
        name: "find_references",
        command: Some("refs"),
        about: "Every reference to SYMBOL (find_references)",
        description: "Every use of a symbol (code only, not comments or strings), with role \
                      (call, ref, export, decl, def; kconfig and makefile for CONFIG_X) and \
                      guard; grouped by file when there are many. Use instead of grep -rw.",
        group: "core",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<RefsArgs>(),
    },
    Tool {
        name: "find_callers",
        command: Some("callers"),
        about: "The call sites of SYMBOL (find_callers)",
        description: "The call sites of a function with the calling function's name. Use \
                      instead of grep for `name(` and reading each hit.",
        group: "core",
        effect: Effect::Reads,
        always_load: true,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<CallersArgs>(),
    },
    Tool {
        name: "find_callees",
        command: Some("callees"),
        about: "What SYMBOL calls (find_callees)",
        description: "The functions a function calls, each with where it is defined. Use \
                      instead of reading the body and looking up each call.",
        group: "core",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<CalleesArgs>(),
    },
    Tool {
        name: "get_symbol_body",
        command: Some("body"),
        about: "The source of SYMBOL's definitions (get_symbol_body)",
        description: "The source text of a symbol's definitions (up to 300 lines each). Use \
                      instead of find + reading the file.",
        group: "core",
        effect: Effect::Reads,
        always_load: true,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<BodyArgs>(),
    },
    Tool {
        name: "reachability",
        command: Some("reach"),
        about: "Whether FROM can reach TO through calls (reachability)",
        description: "Whether one function can reach another through calls, with the shortest \
                      call chain. Use instead of tracing callers by hand.",
        group: "core",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<ReachArgs>(),
    },
    Tool {
        name: "list_file_symbols",
        command: Some("symbols"),
        about: "The definitions in FILE (list_file_symbols)",
        description: "The definitions in one file in line order, with kinds and guards. Use \
                      instead of reading the whole file to find what is in it.",
        group: "core",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<FileArgs>(),
    },
    Tool {
        name: "search_symbols",
        command: Some("find"),
        about: "Defined names matching every token, each as a prefix of the name or of a `_` part \
                (search_symbols): `knav find ext4 read iter`, `knav find '/vfs_.*v/'`",
        description: "Defined names from parts of the name: each token starts the name or \
                      a _-part (ext4 read iter), exact name first. Use instead of grep when \
                      unsure of a name.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<FindArgs>(),
    },
    Tool {
        name: "search_files",
        command: Some("files"),
        about: "Indexed files whose path matches every token (search_files): `knav files ext2 file`",
        description: "C files from parts of their path, exact file name first. Use instead \
                      of find -name.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<FilesArgs>(),
    },
    Tool {
        name: "search_text",
        command: Some("grep"),
        about: "The lines of any text file matching PATTERN, as `rg -n` finds them (search_text). \
                Exit 0 with hits, 1 without, 2 on an error",
        description: "Search every text file (code, comments, Kconfig, Makefiles, devicetree, \
                      docs) for a regex: exactly rg -n's lines, in ms; each hit \
                      with its enclosing definition and #if guard. Use instead of Grep or rg.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &["files_with_matches", "count"],
        mcp_only: &["output"],
        parts: both::<TextArgs>(),
    },
    Tool {
        name: "search_code",
        command: Some("search"),
        about: "Definitions ranked for what they do, in words (search_code): \
                `knav search choose a process to kill when memory runs out`",
        description: "Definitions ranked for what they do (oom kill process), by name, \
                      comment, path and body. Use instead of grepping guessed words.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<CodeArgs>(),
    },
    Tool {
        name: "search_docs",
        command: Some("docs"),
        about: "Documentation sections ranked for a query in words (search_docs): \
                `knav docs out of memory killer`",
        description: "Sections of Documentation/ (.rst, .txt) ranked for words. Use instead of \
                      grep -r Documentation.",
        group: "search",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<DocsArgs>(),
    },
    Tool {
        name: "change_impact",
        command: Some("impact"),
        about: "Who a change to SYMBOL affects: its callers to --depth levels, by MAINTAINERS \
                subsystem and top directory, with export status (change_impact)",
        description: "What a change to a function affects: its callers and theirs to a depth, \
                      grouped by MAINTAINERS subsystem and top directory, with export status; \
                      capped counts are floors. Use instead of repeated find_callers.",
        group: "review",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<ImpactArgs>(),
    },
    Tool {
        name: "review_diff",
        command: Some("diff"),
        about: "The definitions a unified diff touches, with guards, callers and subsystems \
                (review_diff). `--limit`/`--offset` page its hunks and definitions together, in diff \
                order; a diff of more than 16 MiB, 10,000 files or 50,000 hunks is refused",
        description: "The definitions a unified diff touches (functions, structs, macros, \
                      Kconfig; added and removed too), each with guard, callers count and \
                      subsystems; hunks that do not apply are reported. limit/offset page hunks \
                      and definitions in diff order; totals always given. Use instead of reading \
                      each hunk's file.",
        group: "review",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &["file"],
        mcp_only: &["diff"],
        parts: both::<DiffArgs>(),
    },
    Tool {
        name: "update_index",
        command: Some("index"),
        about: "Build or refresh the index",
        description: "Refresh the index now (only what changed), or rebuild it with full=true. \
                      Calls already refresh when the index is older than serve.debounce_s.",
        group: "core",
        effect: Effect::Refreshes,
        always_load: false,
        cli_only: &["verify"],
        mcp_only: &[],
        parts: both::<UpdateArgs>(),
    },
    Tool {
        name: "index_status",
        command: Some("status"),
        about: "Whether the index is ready and what it holds (index_status); builds nothing",
        description: "Whether the index is ready: files scanned and unindexed (by reason), age, \
                      generation, size, a running build's progress. Use instead of retrying \
                      a call to see if indexing is done.",
        group: "review",
        effect: Effect::Reads,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: both::<StatusArgs>(),
    },
    Tool {
        name: "replace_symbol",
        command: None,
        about: "",
        description: "Rewrite one definition (function, struct, macro, variable) in place: its \
                      lines come from the index; source is the whole new definition. Refused, \
                      file unchanged, naming the line, unless braces, parentheses and #if \
                      balance and ctags finds the symbol in it. Atomic write; index refreshed. \
                      Use instead of Edit or Write on a whole file.",
        group: "edit",
        effect: Effect::Writes,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
        parts: mcp::<ReplaceArgs>(),
    },
    Tool {
        name: "insert_symbol",
        command: None,
        about: "",
        description: "Add a definition before or after an anchor definition, one blank line \
                      apart; checked and written as replace_symbol. Use instead of Edit on a \
                      whole file.",
        group: "edit",
        effect: Effect::Writes,
        always_load: false,
        cli_only: &[],
        mcp_only: &[],
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
