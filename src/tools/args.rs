//! Each tool's argument type: its fields derive the CLI flags (clap), the MCP input schema
//! (schemars) and the reading of an MCP call (serde), and its [`McpArgs::order`] turns them
//! into an [`Order`]; with the deserializers and defaults they share.

use std::path::PathBuf;

use clap::builder::TypedValueParser;
use rmcp::schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

use super::{CliArgs, McpArgs, Order, Shared};
use crate::envelope::quote;
use crate::query::{GroupBy, Scope};
use crate::request::Ask;

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

/// A flag that takes one of `values` (name, help), parsed by `T`'s `FromStr`: clap lists the
/// values and their help in `--help`, and refuses any other value with that list and the
/// nearest name, as it does for a `ValueEnum` (which the query crate, free of clap, cannot
/// derive).
pub(crate) fn choice<T>(values: &'static [(&str, &str)]) -> impl TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let possible = values
        .iter()
        .map(|(name, help)| clap::builder::PossibleValue::new(*name).help(*help));
    clap::builder::PossibleValuesParser::new(possible).try_map(|s| s.parse::<T>())
}

/// find_references' `--group-by` values.
const GROUP_BY: &[(&str, &str)] = &[
    (
        "auto",
        "One row per reference up to 200, else one row per file",
    ),
    ("line", "One row per reference"),
    ("file", "One row per file"),
];

/// search_code's `--scope` values.
const SCOPE: &[(&str, &str)] = &[
    ("all", "Everything, the kernel's own code first"),
    (
        "code",
        "The kernel's own code: not tests, samples, tools or documentation",
    ),
    (
        "tests",
        "`tools/testing`, selftests, `samples/` and KUnit tests",
    ),
    (
        "docs",
        "`Documentation/`: its sections, as search_docs ranks them",
    ),
];

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
pub(super) struct DefArgs {
    /// The identifier to look up.
    #[schemars(description = "")]
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

/// compare_versions (`knav compare`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct CompareArgs {
    /// The identifier to compare.
    #[schemars(description = "")]
    symbol: String,
    /// The first version: a git revision (tag, branch, SHA, HEAD~3).
    #[schemars(description = "")]
    rev_a: String,
    /// The second version: a git revision (default: the files as they are).
    #[schemars(description = "default: the working tree")]
    rev_b: Option<String>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for CompareArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let order = Order::Compare {
            symbol: self.symbol,
            a: self.rev_a,
            b: self.rev_b.filter(|b| !b.trim().is_empty()),
        };
        Ok((order, self.shared))
    }
}
impl CliArgs for CompareArgs {}

/// symbol_history (`knav history`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct HistoryArgs {
    /// The name (function, struct/union/enum, macro).
    #[schemars(description = "")]
    symbol: String,
    /// Only its definition in this file (root-relative), following its moves.
    #[arg(long, value_name = "PATH")]
    #[schemars(description = "only its definition in this file")]
    file: Option<String>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for HistoryArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let order = Order::History {
            symbol: self.symbol,
            file: self.file.filter(|f| !f.trim().is_empty()),
        };
        Ok((order, self.shared))
    }
}
impl CliArgs for HistoryArgs {}

/// find_references (`knav refs`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct RefsArgs {
    /// The identifier to look up.
    #[schemars(description = "")]
    symbol: String,
    /// One row per reference (line), per file (file), or per file above 200 (auto).
    #[arg(long, value_parser = choice::<GroupBy>(GROUP_BY), default_value = "auto")]
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

/// Also the calls through members whose struct type is not known: an argument of
/// find_callers, find_callees, change_impact and reachability (which says it its own way on
/// the CLI).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct Uncertain {
    /// Also calls through members whose struct type is not known, matched by the member's
    /// name only (3 in 4 such guesses are wrong on the kernel); without it they are counted,
    /// not listed.
    #[arg(long)]
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<bool>", description = "also guesses by member name")]
    include_uncertain: bool,
}

/// Which calls of a function [`CallsArgs`] asks for.
pub(super) trait Calls {
    /// The CLI help of the function's name.
    const SYMBOL: &'static str;
    /// The question.
    fn ask(symbol: String, include_uncertain: bool) -> Ask;
}

/// find_callers: the call sites of a function.
pub(super) struct Callers;

impl Calls for Callers {
    const SYMBOL: &'static str = "The function whose call sites to list";
    fn ask(symbol: String, include_uncertain: bool) -> Ask {
        Ask::Callers {
            symbol,
            include_uncertain,
        }
    }
}

/// find_callees: what a function calls.
pub(super) struct Callees;

impl Calls for Callees {
    const SYMBOL: &'static str = "The function whose body to read";
    fn ask(symbol: String, include_uncertain: bool) -> Ask {
        Ask::Callees {
            symbol,
            include_uncertain,
        }
    }
}

/// find_callers (`knav callers`) and find_callees (`knav callees`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars", rename = "CallsArgs", bound = "")]
#[serde(bound = "")]
pub(super) struct CallsArgs<C: Calls> {
    #[arg(help = C::SYMBOL)]
    #[schemars(description = "")]
    symbol: String,
    #[serde(flatten)]
    #[command(flatten)]
    uncertain: Uncertain,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
    #[serde(skip)]
    #[arg(skip)]
    #[schemars(skip)]
    calls: std::marker::PhantomData<C>,
}

impl<C: Calls> McpArgs for CallsArgs<C> {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = C::ask(self.symbol, self.uncertain.include_uncertain);
        Ok((Order::Ask(ask), self.shared))
    }
}
impl<C: Calls> CliArgs for CallsArgs<C> {}

/// get_symbol_body (`knav body`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct BodyArgs {
    /// The identifier whose definitions to show.
    #[schemars(description = "")]
    symbol: String,
    /// Bodies to show at most.
    #[arg(long, default_value_t = MAX_DEFINITIONS)]
    #[serde(default = "max_definitions", skip_serializing)]
    #[schemars(with = "Option<u64>", description = "default 3")]
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
#[command(mut_arg("include_uncertain", |a| a.help(REACH_UNCERTAIN)))]
pub(super) struct ReachArgs {
    /// The function to start from.
    #[arg(value_name = "FROM")]
    #[schemars(description = "")]
    from_symbol: String,
    /// The function to reach.
    #[arg(value_name = "TO")]
    #[schemars(description = "")]
    to_symbol: String,
    /// Calls to follow at most (1..12).
    #[arg(long, default_value_t = MAX_DEPTH)]
    #[serde(default = "max_depth", skip_serializing, deserialize_with = "clamped")]
    #[schemars(with = "Option<u64>", description = "1-12, default 8")]
    max_depth: u32,
    #[serde(flatten)]
    #[command(flatten)]
    uncertain: Uncertain,
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
            include_uncertain: self.uncertain.include_uncertain,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for ReachArgs {}

/// reachability's CLI help of [`Uncertain`].
const REACH_UNCERTAIN: &str = "Also follow calls through members whose struct type is not \
                               known (matched by the member's name only)";

/// Where list_file_symbols starts its pages.
#[derive(Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Start {
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
pub(super) struct FileArgs {
    /// A path relative to the root; a directory lists its files with their definition
    /// counts.
    #[arg(value_name = "FILE", value_parser = path_arg())]
    #[schemars(description = "a file or directory")]
    file_path: String,
    /// `end`: page backwards from the end of the file, last definition first.
    #[arg(long, value_enum, default_value_t = Start::Start)]
    #[serde(default, skip_serializing, deserialize_with = "parsed")]
    #[schemars(
        with = "Option<String>",
        description = "start (default) or end: page back from the end"
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
pub(super) struct FindArgs {
    /// Parts of a name, or /REGEX/ matched against whole names.
    #[arg(required = true, num_args = 1..)]
    #[serde(deserialize_with = "words")]
    #[schemars(
        with = "String",
        description = "ext4 read iter: each the start of the name or a _-part; or /REGEX/"
    )]
    query: Vec<String>,
    /// Only names with a definition of this kind (function, struct, macro, …).
    #[arg(long, value_parser = crate::query::parse_kind)]
    #[serde(default, skip_serializing, deserialize_with = "kind")]
    #[schemars(with = "Option<String>", description = "function, struct, macro, ...")]
    kind: Option<knav_ctags::Kind>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for FindArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Find {
            query: self.query.join(" "),
            kind: self.kind,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for FindArgs {}

/// search_files (`knav files`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct FilesArgs {
    /// Parts of a path.
    #[arg(required = true, num_args = 1..)]
    #[serde(deserialize_with = "words")]
    #[schemars(with = "String", description = "")]
    query: Vec<String>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for FilesArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Files {
            query: self.query.join(" "),
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for FilesArgs {}

/// search_text (`knav grep`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct TextArgs {
    /// A Rust regular expression (rg's syntax), or a literal with -F.
    #[schemars(description = "rg regex")]
    pattern: String,
    /// Files or directories to search in, relative to the root (default: all of it).
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<Vec<String>>", description = "")]
    paths: Vec<String>,
    /// Take the pattern as a literal string.
    #[arg(short = 'F', long)]
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<bool>", description = "-F")]
    fixed_strings: bool,
    /// Match case-insensitively.
    #[arg(short = 'i', long)]
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<bool>", description = "")]
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
    #[schemars(with = "Option<u64>", description = "lines, 0-10")]
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
    /// At most NUM matching lines of each file, as rg's -m.
    #[arg(short = 'm', long, value_name = "NUM")]
    #[serde(skip)]
    #[schemars(skip)]
    max_count: Option<u64>,
    /// Print `path:line:col:text`, one line per match, as rg --vimgrep.
    #[arg(long, conflicts_with_all = ["files_with_matches", "count", "heading"])]
    #[serde(skip)]
    #[schemars(skip)]
    vimgrep: bool,
    /// Print hits grouped by file and definition, with totals and a page (the default on a
    /// terminal).
    #[arg(long, conflicts_with = "no_heading")]
    #[serde(skip)]
    #[schemars(skip)]
    heading: bool,
    /// Print every hit as `path:line:text`, exactly as rg -n --no-heading (the default when
    /// stdout is not a terminal).
    #[arg(long)]
    #[serde(skip)]
    #[schemars(skip)]
    no_heading: bool,
    /// Line numbers are always shown (accepted for rg's command lines).
    #[arg(short = 'n', long)]
    #[serde(skip)]
    #[schemars(skip)]
    line_number: bool,
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
            max_count: self.max_count,
        }));
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for TextArgs {}

/// search_code (`knav search`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct CodeArgs {
    /// Words saying what the code does.
    #[arg(required = true, num_args = 1..)]
    #[serde(deserialize_with = "words")]
    #[schemars(with = "String", description = "")]
    query: Vec<String>,
    /// Only definitions of this kind (function, struct, union, enum, typedef).
    #[arg(long, value_parser = crate::query::parse_kind)]
    #[serde(default, skip_serializing, deserialize_with = "kind")]
    #[schemars(with = "Option<String>", description = "function, struct, ...")]
    kind: Option<knav_ctags::Kind>,
    /// Which files: all (default: the kernel's own code first), code (not tests, samples,
    /// tools or documentation), tests (tools/testing, selftests, samples, KUnit) or docs
    /// (Documentation sections, as `knav docs`).
    #[arg(long, value_parser = choice::<Scope>(SCOPE), default_value = "all")]
    #[serde(default, skip_serializing, deserialize_with = "parsed")]
    #[schemars(
        with = "Option<String>",
        description = "all (default), code, tests or docs"
    )]
    scope: Scope,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for CodeArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Code {
            query: self.query.join(" "),
            kind: self.kind,
            scope: self.scope,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for CodeArgs {}

/// search_docs (`knav docs`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct DocsArgs {
    /// Words to look for.
    #[arg(required = true, num_args = 1..)]
    #[serde(deserialize_with = "words")]
    #[schemars(with = "String", description = "")]
    query: Vec<String>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for DocsArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Docs {
            query: self.query.join(" "),
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for DocsArgs {}

/// find_device (`knav device`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct DeviceArgs {
    /// A compatible (fsl,imx21-i2c; one * lists matches), a device ID (pci:8086:15b8,
    /// usb:0b95:1790, acpi:ACPI0003, i2c:lm75, pci:class:0c0330), driver:NAME|FILE, or
    /// check:[KIND] for the devicetree check.
    #[schemars(description = "")]
    #[arg(required_unless_present_any = ["driver", "check"])]
    device: Option<String>,
    /// Everything a driver matches and the properties it reads: its structure's name,
    /// its .name, or its file.
    #[arg(long, value_name = "NAME|FILE")]
    #[serde(skip)]
    driver: Option<String>,
    /// The devicetree check (also `knav dt check [KIND]`): compatibles drivers match that
    /// no binding documents (undocumented), nodes no driver matches (unmatched), properties
    /// a driver reads that its bindings do not name (property).
    #[arg(long, value_name = "KIND", num_args = 0..=1, default_missing_value = "")]
    #[serde(skip)]
    check: Option<String>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for DeviceArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let compatible = match (self.check, self.driver, self.device) {
            (Some(kind), _, _) => format!("check:{kind}"),
            (None, Some(d), _) => format!("driver:{d}"),
            (None, None, Some(c)) => c,
            (None, None, None) => {
                return Err("give a device: fsl,imx21-i2c, pci:8086:15b8 or driver:NAME".into())
            }
        };
        Ok((Order::Ask(Ask::Device { compatible }), self.shared))
    }
}
impl CliArgs for DeviceArgs {}

/// change_impact (`knav impact`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct ImpactArgs {
    /// The function.
    #[schemars(description = "")]
    symbol: String,
    /// Levels of callers (0-10; 1: direct callers only).
    #[arg(long, default_value_t = crate::query::impact::DEFAULT_DEPTH)]
    #[serde(
        default = "impact_depth",
        skip_serializing,
        deserialize_with = "clamped"
    )]
    #[schemars(with = "Option<u64>", description = "0-10, default 2")]
    depth: u32,
    #[serde(flatten)]
    #[command(flatten)]
    uncertain: Uncertain,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for ImpactArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let ask = Ask::Impact {
            symbol: self.symbol,
            depth: self.depth,
            include_uncertain: self.uncertain.include_uncertain,
        };
        Ok((Order::Ask(ask), self.shared))
    }
}
impl CliArgs for ImpactArgs {}

/// review_diff (`knav diff`): MCP takes the diff's text, the CLI a file holding it.
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct DiffArgs {
    /// a unified diff or mailed patch: at most 10000 files, 50000 hunks
    #[arg(skip)]
    #[serde(default, skip_serializing)]
    diff: String,
    /// The diff (git diff, diff -u or a mailed patch); `-` or none: standard input; REV_A..REV_B
    /// (no such file): the commits of that git range.
    #[serde(skip)]
    #[schemars(skip)]
    file: Option<PathBuf>,
    /// instead of diff: REV_A..REV_B, reviewed at REV_B
    #[arg(skip)]
    range: Option<String>,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for DiffArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        match (
            self.range.filter(|r| !r.trim().is_empty()),
            self.diff.is_empty(),
        ) {
            (Some(_), false) => Err("give diff or range, not both".into()),
            (Some(r), true) => Ok((range_order(r.trim())?, self.shared)),
            (None, true) => Err("argument 'diff' (or 'range') is required".into()),
            (None, false) if self.diff.trim().is_empty() => Err("argument 'diff' is empty".into()),
            (None, false) => Ok((Order::Ask(Ask::Review { diff: self.diff }), self.shared)),
        }
    }
}

impl CliArgs for DiffArgs {
    fn cli_order(self) -> Result<Order, String> {
        // `A..B` names a range unless a file has that name.
        if let Some(arg) = self.file.as_deref().and_then(|f| f.to_str()) {
            let path_like = arg.starts_with(['.', '/']);
            if arg.contains("..") && !path_like && !std::path::Path::new(arg).exists() {
                return range_order(arg);
            }
        }
        let diff = read_diff(self.file.as_deref())?;
        Ok(Order::Ask(Ask::Review { diff }))
    }
}

/// The order of a range `A..B`.
fn range_order(range: &str) -> Result<Order, String> {
    match range.split_once("..") {
        Some((a, b)) if !a.is_empty() && !b.is_empty() && !b.starts_with('.') => {
            Ok(Order::ReviewRange {
                a: a.to_string(),
                b: b.to_string(),
            })
        }
        _ => Err(format!(
            "range {} is not REV_A..REV_B (two revisions, two dots)",
            quote(range)
        )),
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
pub(super) struct UpdateArgs {
    /// Rebuild everything instead of only what changed.
    #[arg(long)]
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<bool>", description = "")]
    full: bool,
    /// Check the index against its checksums instead of refreshing it.
    #[arg(long, conflicts_with = "full")]
    #[serde(skip)]
    #[schemars(skip)]
    verify: bool,
    /// Bring the history index (`knav history`) up to date with the commits HEAD (or --rev)
    /// reaches, instead of refreshing the index.
    #[arg(long, conflicts_with_all = ["full", "verify"])]
    #[serde(skip)]
    #[schemars(skip)]
    history: bool,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for UpdateArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let order = Order::Update {
            full: self.full,
            verify: self.verify,
            history: self.history,
        };
        Ok((order, self.shared))
    }
}
impl CliArgs for UpdateArgs {}

/// index_status (`knav status`).
#[derive(clap::Args, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct StatusArgs {
    /// List every kernel macro family the index found definitions from, not the top five.
    #[arg(long)]
    #[serde(skip)]
    #[schemars(skip)]
    verbose: bool,
    #[serde(flatten)]
    #[arg(skip)]
    shared: Shared,
}

impl McpArgs for StatusArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let order = Order::Status {
            verbose: self.verbose,
        };
        Ok((order, self.shared))
    }
}
impl CliArgs for StatusArgs {}

/// replace_symbol (MCP only).
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct ReplaceArgs {
    /// The file, relative to the root.
    #[schemars(description = "")]
    file: String,
    /// The definition to rewrite.
    #[schemars(description = "")]
    symbol: String,
    /// the whole new definition, signature included
    source: String,
    #[serde(flatten)]
    shared: Shared,
}

impl McpArgs for ReplaceArgs {
    fn order(self) -> Result<(Order, Shared), String> {
        let edit = crate::edit::Edit::Replace {
            file: self.file,
            symbol: self.symbol,
            source: self.source,
        };
        Ok((Order::Edit(edit), self.shared))
    }
}

/// insert_symbol (MCP only).
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct InsertArgs {
    /// The file, relative to the root.
    #[schemars(description = "")]
    file: String,
    /// The definition to insert next to.
    #[schemars(description = "")]
    anchor: String,
    /// before or after
    position: String,
    /// the whole new definition
    source: String,
    #[serde(flatten)]
    shared: Shared,
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
        Ok((Order::Edit(edit), self.shared))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values of `list`, each parsed by `T`'s `FromStr`: every one must parse, and to a
    /// value no other name gives.
    fn distinct<T: std::str::FromStr + PartialEq + std::fmt::Debug>(list: &[(&str, &str)]) {
        let mut seen: Vec<T> = Vec::new();
        for (name, _) in list {
            let value = name
                .parse::<T>()
                .unwrap_or_else(|_| panic!("'{name}' is listed but does not parse"));
            assert!(!seen.contains(&value), "'{name}' repeats {value:?}");
            seen.push(value);
        }
    }

    #[test]
    fn every_listed_choice_parses_to_a_value_of_its_own() {
        distinct::<GroupBy>(GROUP_BY);
        distinct::<Scope>(SCOPE);
    }

    #[test]
    fn the_query_crate_does_not_depend_on_clap() {
        let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/query/Cargo.toml");
        let text = std::fs::read_to_string(manifest).unwrap();
        let named = text
            .lines()
            .any(|l| l.trim_start().starts_with("clap ") || l.trim_start().starts_with("clap="));
        assert!(
            !named,
            "query/Cargo.toml depends on clap: the CLI's parsing belongs in src/ (`choice`)"
        );
    }

    #[test]
    fn a_choice_flag_lists_its_values_in_help_and_errors_as_a_value_enum_did() {
        let mut refs = crate::tools::by_command("refs")
            .and_then(|t| t.cli_command())
            .unwrap();
        let help = refs.render_long_help().to_string();
        for line in [
            "- auto: One row per reference up to 200, else one row per file",
            "- line: One row per reference",
            "- file: One row per file",
            "[default: auto]",
        ] {
            assert!(help.contains(line), "no `{line}` in:\n{help}");
        }
        let err = refs
            .try_get_matches_from(["refs", "kmap", "--group-by", "lin"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("invalid value 'lin' for '--group-by <GROUP_BY>'"),
            "{err}"
        );
        assert!(err.contains("[possible values: auto, line, file]"), "{err}");
        assert!(err.contains("a similar value exists: 'line'"), "{err}");
    }
}
