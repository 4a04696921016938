//! The MCP tool catalog: names, descriptions, input schemas and annotations, and the checking of
//! a call's arguments into a [`Call`]. Each tool's arguments are a type; its input schema is
//! derived from that type (schemars, as rmcp does) and one checker reads every call against it. Descriptions say what each tool is for and which native
//! call it replaces; all of them with their schemas stay under [`CATALOG_BUDGET`] characters.

use std::sync::Arc;

use rmcp::model::{JsonObject, MetaObject, Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::envelope::quote;
use crate::query::{GroupBy, Page, MAX_LIMIT};
use crate::render::Format;
use crate::request::{Ask, MAX_CONFIG_ARG, MAX_PATH};

/// Characters all descriptions and input schemas together may take (4,500 tokens at 4
/// characters a token).
pub const CATALOG_BUDGET: usize = 18_000;

/// Entries a list argument (`paths`, `globs`) may have.
const MAX_LIST: usize = 256;

/// Characters the `_meta["anthropic/alwaysLoad"]` tools' descriptions and schemas may take
/// together (1,500 tokens at 4 characters a token).
pub const ALWAYS_LOAD_BUDGET: usize = 6_000;

/// Tools marked `_meta["anthropic/alwaysLoad"]`: the ones an agent needs before any search.
const ALWAYS_LOAD: &[&str] = &["find_definition", "find_callers", "get_symbol_body"];

/// The tool groups `knav serve --tools` and `.knav.toml`'s `serve.tools` choose from (default:
/// all); every tool is in one. A new tool is one more name in its group's list.
pub const GROUPS: &[(&str, &[&str])] = &[
    (
        "core",
        &[
            "find_definition",
            "find_references",
            "find_callers",
            "find_callees",
            "get_symbol_body",
            "reachability",
            "list_file_symbols",
            "update_index",
        ],
    ),
    (
        "search",
        &[
            "search_symbols",
            "search_files",
            "search_text",
            "search_code",
            "search_docs",
        ],
    ),
    ("edit", &["replace_symbol", "insert_symbol"]),
    ("review", &["index_status", "change_impact", "review_diff"]),
];

/// A `kind` argument (an empty one is none).
fn kind_arg(tool: &str, kind: Option<String>) -> Result<Option<knav_ctags::Kind>, String> {
    kind.filter(|k| !k.is_empty())
        .map(|k| crate::query::parse_kind(&k).map_err(|e| format!("{tool}: {e}")))
        .transpose()
}

/// The tools of `groups` (`None`: all), in catalog order; an unknown group is an error naming
/// the groups.
pub fn select(groups: Option<&[String]>) -> Result<Vec<&'static str>, String> {
    let Some(groups) = groups else {
        return Ok(catalog_names());
    };
    let mut chosen: Vec<&str> = Vec::new();
    for g in groups {
        let Some((_, tools)) = GROUPS.iter().find(|(name, _)| *name == g.trim()) else {
            let names: Vec<&str> = GROUPS.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "unknown tool group {}; the groups are {}",
                quote(g),
                names.join(", ")
            ));
        };
        chosen.extend(*tools);
    }
    Ok(catalog_names()
        .into_iter()
        .filter(|n| chosen.contains(n))
        .collect())
}

/// What one tool is for.
struct Spec {
    name: &'static str,
    description: &'static str,
    /// The input schema, derived from the tool's argument type.
    schema: fn() -> JsonObject,
}

/// Arguments every retrieval tool takes.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Common {
    /// tree to search (default: the served root)
    root: Option<String>,
    /// text (default) or json
    format: Option<String>,
    /// results per page, default 100, max 1000
    limit: Option<u64>,
    /// results to skip
    offset: Option<u64>,
    /// only paths under this
    path_prefix: Option<String>,
    /// .config path or CONFIG_A=y,CONFIG_B=m: leaves out what it does not build (#if, Makefiles, arch/), with reasons
    active_config: Option<String>,
}

/// find_definition, find_callers, find_callees.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct SymbolArgs {
    /// C identifier
    symbol: String,
    #[serde(flatten)]
    common: Common,
}

/// find_references.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct RefsArgs {
    /// C identifier
    symbol: String,
    /// auto (per file above 200 rows), line or file
    group_by: Option<String>,
    #[serde(flatten)]
    common: Common,
}

/// get_symbol_body.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct BodyArgs {
    /// C identifier
    symbol: String,
    /// bodies to show, default 3
    max_definitions: Option<u64>,
    #[serde(flatten)]
    common: Common,
}

/// reachability.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct ReachArgs {
    /// function to start from
    from_symbol: String,
    /// function to reach
    to_symbol: String,
    /// calls to follow, 1-12, default 8
    max_depth: Option<u64>,
    /// also follow calls through members of unknown struct type
    include_uncertain: Option<bool>,
    #[serde(flatten)]
    common: Common,
}

/// list_file_symbols.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct FileArgs {
    /// path relative to the root; a directory lists its files
    file_path: String,
    /// start (default) or end: page backwards from the file's end
    from: Option<String>,
    #[serde(flatten)]
    common: Common,
}

/// Arguments of the search tools: [`Common`] without `active_config` (a search does not
/// filter by configuration).
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct SearchCommon {
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

impl From<SearchCommon> for Common {
    fn from(c: SearchCommon) -> Common {
        Common {
            root: c.root,
            format: c.format,
            limit: c.limit,
            offset: c.offset,
            path_prefix: c.path_prefix,
            active_config: None,
        }
    }
}

/// search_symbols.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct FindArgs {
    /// name parts (all must match) or /REGEX/
    query: String,
    /// function, struct, macro, ...
    kind: Option<String>,
    #[serde(flatten)]
    common: SearchCommon,
}

/// search_files.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct FilesArgs {
    /// path parts (all must match)
    query: String,
    #[serde(flatten)]
    common: SearchCommon,
}

/// search_code.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct CodeArgs {
    /// words
    query: String,
    /// function, struct, ...
    kind: Option<String>,
    #[serde(flatten)]
    common: SearchCommon,
}

/// search_text.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct TextArgs {
    /// rg regex
    pattern: String,
    /// literal (-F)
    fixed_strings: Option<bool>,
    /// -i
    ignore_case: Option<bool>,
    /// -w
    word: Option<bool>,
    /// files/dirs to search
    paths: Option<Vec<String>>,
    /// rg globs, !g excludes
    globs: Option<Vec<String>>,
    /// only in this symbol's definitions
    within: Option<String>,
    /// context lines 0-10
    context: Option<u64>,
    /// lines, files or count
    output: Option<String>,
    #[serde(flatten)]
    common: Common,
}

/// search_docs.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct DocsArgs {
    /// words
    query: String,
    #[serde(flatten)]
    common: SearchCommon,
}

/// change_impact.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct ImpactArgs {
    /// function
    symbol: String,
    /// levels of callers, 0-10, default 2
    depth: Option<u64>,
    #[serde(flatten)]
    common: Common,
}

/// review_diff.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct DiffArgs {
    /// unified diff text (git diff, mailed patch); at most 10000 files, 50000 hunks
    diff: String,
    #[serde(flatten)]
    common: Common,
}

/// update_index.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct UpdateArgs {
    /// rebuild everything
    full: Option<bool>,
    /// tree to search (default: the served root)
    root: Option<String>,
}

/// index_status.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct StatusArgs {
    /// tree (default: the served root)
    root: Option<String>,
    /// text or json
    format: Option<String>,
}

/// replace_symbol.
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

/// insert_symbol.
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

const SPECS: &[Spec] = &[
    Spec {
        name: "find_definition",
        description: "Where a C symbol is defined (functions, macros, structs, typedefs, \
                      variables; CONFIG_X in Kconfig), each with its #if guard, kind and \
                      signature, plus reference count and top files. Use instead of grep for \
                      `name(` or ctags.",
        schema: schema::<SymbolArgs>,
    },
    Spec {
        name: "find_references",
        description: "Every use of a symbol (code only, not comments or strings), with role \
                      (call, ref, export, decl, def; kconfig and makefile for CONFIG_X) and \
                      guard; grouped by file when there are many. Use instead of grep -rw.",
        schema: schema::<RefsArgs>,
    },
    Spec {
        name: "find_callers",
        description: "The call sites of a function with the calling function's name. Use \
                      instead of grep for `name(` and reading each hit.",
        schema: schema::<SymbolArgs>,
    },
    Spec {
        name: "find_callees",
        description: "The functions a function calls, each with where it is defined. Use \
                      instead of reading the body and looking up each call.",
        schema: schema::<SymbolArgs>,
    },
    Spec {
        name: "get_symbol_body",
        description: "The source text of a symbol's definitions (up to 300 lines each). Use \
                      instead of find + reading the file.",
        schema: schema::<BodyArgs>,
    },
    Spec {
        name: "reachability",
        description: "Whether one function can reach another through calls, with the shortest \
                      call chain. Use instead of tracing callers by hand.",
        schema: schema::<ReachArgs>,
    },
    Spec {
        name: "list_file_symbols",
        description: "The definitions in one file in line order, with kinds and guards. Use \
                      instead of reading the whole file to find what is in it.",
        schema: schema::<FileArgs>,
    },
    Spec {
        name: "search_symbols",
        description: "Defined names from parts of the name: each token starts the name or \
                      a _-part (ext4 read iter), exact name first. Use instead of grep when \
                      unsure of a name.",
        schema: schema::<FindArgs>,
    },
    Spec {
        name: "search_files",
        description: "C files from parts of their path, exact file name first. Use instead \
                      of find -name.",
        schema: schema::<FilesArgs>,
    },
    Spec {
        name: "search_text",
        description: "Search every text file (code, comments, Kconfig, Makefiles, devicetree, \
                      docs) for a regex: exactly rg -n's lines, in ms; each hit \
                      with its enclosing definition and #if guard. Use instead of Grep or rg.",
        schema: schema::<TextArgs>,
    },
    Spec {
        name: "search_code",
        description: "Definitions ranked for what they do (oom kill process), by name, \
                      comment, path and body. Use instead of grepping guessed words.",
        schema: schema::<CodeArgs>,
    },
    Spec {
        name: "search_docs",
        description: "Sections of Documentation/ (.rst, .txt) ranked for words. Use instead of \
                      grep -r Documentation.",
        schema: schema::<DocsArgs>,
    },
    Spec {
        name: "change_impact",
        description: "What a change to a function affects: its callers and theirs to a depth, \
                      grouped by MAINTAINERS subsystem and top directory, with export status; \
                      capped counts are floors. Use instead of repeated find_callers.",
        schema: schema::<ImpactArgs>,
    },
    Spec {
        name: "review_diff",
        description: "The definitions a unified diff touches (functions, structs, macros, \
                      Kconfig; added and removed too), each with guard, callers count and \
                      subsystems; hunks that do not apply are reported. limit/offset page hunks \
                      and definitions in diff order; totals always given. Use instead of reading \
                      each hunk's file.",
        schema: schema::<DiffArgs>,
    },
    Spec {
        name: "update_index",
        description: "Refresh the index now (only what changed), or rebuild it with full=true. \
                      Calls already refresh when the index is older than serve.debounce_s.",
        schema: schema::<UpdateArgs>,
    },
    Spec {
        name: "index_status",
        description: "Whether the index is ready: files scanned and unindexed (by reason), age, \
                      generation, size, a running build's progress. Use instead of retrying \
                      a call to see if indexing is done.",
        schema: schema::<StatusArgs>,
    },
    Spec {
        name: "replace_symbol",
        description: "Rewrite one definition (function, struct, macro, variable) in place: its \
                      lines come from the index; source is the whole new definition. Refused, \
                      file unchanged, naming the line, unless braces, parentheses and #if \
                      balance and ctags finds the symbol in it. Atomic write; index refreshed. \
                      Use instead of Edit or Write on a whole file.",
        schema: schema::<ReplaceArgs>,
    },
    Spec {
        name: "insert_symbol",
        description: "Add a definition before or after an anchor definition, one blank line \
                      apart; checked and written as replace_symbol. Use instead of Edit on a \
                      whole file.",
        schema: schema::<InsertArgs>,
    },
];

/// The input schema of argument type `T`, as MCP clients read it: an object of typed
/// properties with descriptions, no others allowed; schemars' `$schema`, `title` and integer
/// `format` left out (they cost catalog characters and say nothing to a model).
fn schema<T: JsonSchema>() -> JsonObject {
    let settings = rmcp::schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.meta_schema = None;
    });
    let root = settings.into_generator().into_root_schema_for::<T>();
    let mut v = serde_json::to_value(root).unwrap_or_default();
    let Some(obj) = v.as_object_mut() else {
        return JsonObject::new();
    };
    obj.remove("title");
    obj.remove("description");
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for p in props.values_mut().filter_map(Value::as_object_mut) {
            p.remove("format");
            // An `Option` is a property that may be left out, not one that may be null.
            if let Some(Value::Array(types)) = p.get("type") {
                let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if let [one] = types.as_slice() {
                    p.insert("type".into(), one.clone());
                }
            }
        }
    }
    obj.insert("additionalProperties".into(), json!(false));
    obj.clone()
}

/// The tool names.
pub fn catalog_names() -> Vec<&'static str> {
    SPECS.iter().map(|s| s.name).collect()
}

/// The tools named in `served` as MCP lists them.
pub fn catalog(served: &[&str]) -> Vec<Tool> {
    SPECS
        .iter()
        .filter(|s| served.contains(&s.name))
        .map(tool)
        .collect()
}

fn tool(spec: &Spec) -> Tool {
    let annotations = if GROUPS
        .iter()
        .any(|(g, t)| *g == "edit" && t.contains(&spec.name))
    {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(false)
    } else if spec.name != "update_index" {
        ToolAnnotations::new().read_only(true).open_world(false)
    } else {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(true)
            .open_world(false)
    };
    let schema = Arc::new((spec.schema)());
    let mut t = Tool::new(spec.name, spec.description, schema).annotate(annotations);
    if ALWAYS_LOAD.contains(&spec.name) {
        let mut meta = JsonObject::new();
        meta.insert("anthropic/alwaysLoad".into(), json!(true));
        t = t.with_meta(MetaObject(meta));
    }
    t
}

/// A checked tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The tool's name.
    pub tool: &'static str,
    /// The question; `None` for update_index.
    pub ask: Option<Ask>,
    /// update_index: rebuild everything.
    pub full: bool,
    /// The tree, when the call names one.
    pub root: Option<String>,
    /// Output format.
    pub format: Format,
    /// Paging and filtering.
    pub page: Page,
    /// The `.config` to apply, when given.
    pub active_config: Option<String>,
    /// replace_symbol and insert_symbol: the edit.
    pub edit: Option<crate::edit::Edit>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks `args` against tool `tool`'s derived `schema` with messages a model can act on, and
/// normalizes them for serde (nulls dropped, whole floats made integers, required strings
/// trimmed). serde then cannot fail on what passed.
fn check(tool: &str, schema: &JsonObject, mut args: JsonObject) -> Result<Value, String> {
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    args.retain(|_, v| !v.is_null());
    if let Some(k) = args.keys().find(|k| !props.contains_key(*k)) {
        return Err(format!(
            "{tool}: unknown argument {}; see the tool's input schema",
            quote(k)
        ));
    }
    for (key, prop) in props {
        let ty = prop.get("type").and_then(Value::as_str).unwrap_or("");
        let Some(v) = args.get_mut(key) else {
            if required.contains(&key.as_str()) {
                return Err(format!("{tool}: argument '{key}' is required"));
            }
            continue;
        };
        let bad = |what: &str, v: &Value| {
            format!(
                "{tool}: argument '{key}' must be {what}, not {}",
                quote(&v.to_string())
            )
        };
        match ty {
            "string" => {
                let Value::String(s) = v else {
                    return Err(format!(
                        "{tool}: argument '{key}' must be a string, not {}",
                        type_name(v)
                    ));
                };
                // Names and paths are short; only a CONFIG_X=y list or a source may be long.
                let max = match key.as_str() {
                    "active_config" => MAX_CONFIG_ARG,
                    "source" => crate::edit::MAX_SOURCE,
                    "diff" => crate::diff::MAX_DIFF_BYTES,
                    _ => MAX_PATH,
                };
                if s.len() > max {
                    return Err(format!(
                        "{tool}: argument '{key}' is {} bytes long, more than {max}: {}",
                        s.len(),
                        quote(s)
                    ));
                }
                if required.contains(&key.as_str()) {
                    if s.trim().is_empty() {
                        return Err(format!("{tool}: argument '{key}' is empty"));
                    }
                    // A pattern's spaces are part of it, a source's indentation, a diff's
                    // context lines.
                    if key != "pattern" && key != "source" && key != "diff" {
                        *s = s.trim().to_string();
                    }
                }
            }
            "integer" => {
                let n = match &*v {
                    Value::Number(n) => n
                        .as_i64()
                        .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
                    _ => None,
                };
                match n {
                    Some(n) if n >= 0 => *v = json!(n),
                    Some(_) => return Err(bad("zero or more", v)),
                    None => return Err(bad("an integer", v)),
                }
            }
            "boolean" if !v.is_boolean() => return Err(bad("true or false", v)),
            "array" => {
                let Value::Array(items) = v else {
                    return Err(format!(
                        "{tool}: argument '{key}' must be an array of strings, not {}",
                        type_name(v)
                    ));
                };
                if items.len() > MAX_LIST {
                    return Err(format!(
                        "{tool}: argument '{key}' has {} entries, more than {MAX_LIST}",
                        items.len()
                    ));
                }
                for item in items.iter() {
                    match item {
                        Value::String(s) if s.len() <= MAX_PATH => {}
                        Value::String(s) => {
                            return Err(format!(
                                "{tool}: an entry of '{key}' is {} bytes long, more than {MAX_PATH}: {}",
                                s.len(),
                                quote(s)
                            ))
                        }
                        other => {
                            return Err(format!(
                                "{tool}: argument '{key}' must be an array of strings, not one holding {}",
                                type_name(other)
                            ))
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(Value::Object(args))
}

/// Checks the arguments of a call to tool `name`.
pub fn parse_call(name: &str, arguments: Option<JsonObject>) -> Result<Call, String> {
    let Some(spec) = SPECS.iter().find(|s| s.name == name) else {
        let names: Vec<&str> = SPECS.iter().map(|s| s.name).collect();
        return Err(format!(
            "unknown tool {}; the tools are {}",
            quote(name),
            names.join(", ")
        ));
    };
    let tool = spec.name;
    let args = check(tool, &(spec.schema)(), arguments.unwrap_or_default())?;
    if tool == "update_index" {
        let a: UpdateArgs = typed(tool, args)?;
        return Ok(Call {
            tool,
            ask: None,
            full: a.full.unwrap_or(false),
            root: a.root,
            format: Format::Text,
            page: Page::default(),
            active_config: None,
            edit: None,
        });
    }
    if tool == "replace_symbol" || tool == "insert_symbol" {
        return edit_call(tool, args);
    }
    if tool == "index_status" {
        let a: StatusArgs = typed(tool, args)?;
        let format = match a.format {
            None => Format::Text,
            Some(f) => f.parse::<Format>().map_err(|e| format!("{tool}: {e}"))?,
        };
        return Ok(Call {
            tool,
            ask: None,
            full: false,
            root: a.root,
            format,
            page: Page::default(),
            active_config: None,
            edit: None,
        });
    }
    let (ask, common) = query_ask(tool, args)?;
    query_call(tool, ask, common)
}

/// The call of retrieval or search tool `tool` asking `ask`, with its common arguments
/// `common`: format, paging, root and active configuration.
fn query_call(tool: &'static str, ask: Ask, common: Common) -> Result<Call, String> {
    let format = match common.format {
        None => Format::Text,
        Some(f) => f.parse::<Format>().map_err(|e| format!("{tool}: {e}"))?,
    };
    let limit = common.limit.unwrap_or(0);
    if limit > MAX_LIMIT.saturating_mul(1_000_000) {
        return Err(format!(
            "{tool}: limit {limit} is absurd; ask for at most {MAX_LIMIT} and page with offset"
        ));
    }
    let page = Page {
        limit,
        offset: common.offset.unwrap_or(0),
        path_prefix: common.path_prefix.filter(|p| !p.is_empty()),
        active: None,
    };
    Ok(Call {
        tool,
        ask: Some(ask),
        full: false,
        root: common.root,
        format,
        page,
        active_config: common.active_config.filter(|c| !c.trim().is_empty()),
        edit: None,
    })
}

/// `args`, as [`check`] left them, as the argument type of `tool`.
fn typed<T: serde::de::DeserializeOwned>(tool: &str, args: Value) -> Result<T, String> {
    serde_json::from_value(args).map_err(|e| format!("{tool}: {e}"))
}

/// The call of replace_symbol or insert_symbol (`tool`) with `args`.
fn edit_call(tool: &'static str, args: Value) -> Result<Call, String> {
    let (edit, root) = if tool == "replace_symbol" {
        let a: ReplaceArgs = typed(tool, args)?;
        let edit = crate::edit::Edit::Replace {
            file: a.file,
            symbol: a.symbol,
            source: a.source,
        };
        (edit, a.root)
    } else {
        let a: InsertArgs = typed(tool, args)?;
        let before = match a.position.as_str() {
            "before" => true,
            "after" => false,
            p => {
                return Err(format!(
                    "{tool}: position must be before or after, not {}",
                    quote(p)
                ))
            }
        };
        let edit = crate::edit::Edit::Insert {
            file: a.file,
            anchor: a.anchor,
            before,
            source: a.source,
        };
        (edit, a.root)
    };
    Ok(Call {
        tool,
        ask: None,
        full: false,
        root,
        format: Format::Text,
        page: Page::default(),
        active_config: None,
        edit: Some(edit),
    })
}

/// The question the retrieval or search tool `tool` asks with `args`, and the arguments every
/// such tool takes.
fn query_ask(tool: &str, args: Value) -> Result<(Ask, Common), String> {
    Ok(match tool {
        "find_definition" | "find_callers" | "find_callees" => {
            let a: SymbolArgs = typed(tool, args)?;
            let ask = match tool {
                "find_definition" => Ask::Def { symbol: a.symbol },
                "find_callers" => Ask::Callers { symbol: a.symbol },
                _ => Ask::Callees { symbol: a.symbol },
            };
            (ask, a.common)
        }
        "find_references" => {
            let a: RefsArgs = typed(tool, args)?;
            let group_by = match a.group_by {
                None => GroupBy::Auto,
                Some(g) => g.parse().map_err(|e| format!("{tool}: {e}"))?,
            };
            let ask = Ask::Refs {
                symbol: a.symbol,
                group_by,
            };
            (ask, a.common)
        }
        "get_symbol_body" => {
            let a: BodyArgs = typed(tool, args)?;
            let ask = Ask::Body {
                symbol: a.symbol,
                max_definitions: a.max_definitions.unwrap_or(3),
            };
            (ask, a.common)
        }
        "reachability" => {
            let a: ReachArgs = typed(tool, args)?;
            let ask = Ask::Reach {
                from: a.from_symbol,
                to: a.to_symbol,
                max_depth: a.max_depth.map_or(8, |d| d.min(u32::MAX as u64) as u32),
                include_uncertain: a.include_uncertain.unwrap_or(false),
            };
            (ask, a.common)
        }
        "list_file_symbols" => {
            let a: FileArgs = typed(tool, args)?;
            let ask = Ask::Symbols {
                file: a.file_path,
                from_end: from_end(tool, a.from.as_deref())?,
            };
            (ask, a.common)
        }
        "search_symbols" => {
            let a: FindArgs = typed(tool, args)?;
            let kind = kind_arg(tool, a.kind)?;
            let ask = Ask::Find {
                query: a.query,
                kind,
            };
            (ask, a.common.into())
        }
        "search_code" => {
            let a: CodeArgs = typed(tool, args)?;
            let kind = kind_arg(tool, a.kind)?;
            let ask = Ask::Code {
                query: a.query,
                kind,
            };
            (ask, a.common.into())
        }
        "search_files" => {
            let a: FilesArgs = typed(tool, args)?;
            (Ask::Files { query: a.query }, a.common.into())
        }
        "change_impact" => {
            let a: ImpactArgs = typed(tool, args)?;
            let depth = a.depth.map_or(crate::query::impact::DEFAULT_DEPTH, |d| {
                d.min(u32::MAX as u64) as u32
            });
            let ask = Ask::Impact {
                symbol: a.symbol,
                depth,
            };
            (ask, a.common)
        }
        "review_diff" => {
            let a: DiffArgs = typed(tool, args)?;
            (Ask::Review { diff: a.diff }, a.common)
        }
        "search_text" => grep_ask(tool, typed(tool, args)?)?,
        "search_docs" => {
            let a: DocsArgs = typed(tool, args)?;
            (Ask::Docs { query: a.query }, a.common.into())
        }
        _ => unreachable!("every spec is matched above"),
    })
}

/// list_file_symbols' `from`: true for `end` (page backwards from the file's end).
fn from_end(tool: &str, from: Option<&str>) -> Result<bool, String> {
    match from {
        None | Some("start") => Ok(false),
        Some("end") => Ok(true),
        Some(f) => Err(format!(
            "{tool}: from must be start or end, not {}",
            quote(f)
        )),
    }
}

/// The search_text question of `a`, and its common arguments.
fn grep_ask(tool: &str, a: TextArgs) -> Result<(Ask, Common), String> {
    let mode = match a.output.as_deref() {
        None | Some("lines") => crate::query::GrepMode::Lines,
        Some("files") => crate::query::GrepMode::Files,
        Some("count") => crate::query::GrepMode::Count,
        Some(o) => {
            return Err(format!(
                "{tool}: output must be lines, files or count, not {}",
                quote(o)
            ))
        }
    };
    let ask = Ask::Grep(Box::new(crate::query::GrepAsk {
        pattern: crate::index::text::search::Pattern {
            text: a.pattern,
            fixed: a.fixed_strings.unwrap_or(false),
            ignore_case: a.ignore_case.unwrap_or(false),
            word: a.word.unwrap_or(false),
        },
        paths: a.paths.unwrap_or_default(),
        globs: a.globs.unwrap_or_default(),
        within: a.within,
        context: a.context.map_or(0, |c| c.min(u32::MAX as u64) as u32),
        mode,
    }));
    Ok((ask, a.common))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Option<JsonObject> {
        v.as_object().cloned()
    }

    #[test]
    fn every_tool_is_in_one_group_and_groups_choose_tools() {
        for name in catalog_names() {
            let n = GROUPS.iter().filter(|(_, t)| t.contains(&name)).count();
            assert_eq!(n, 1, "{name} is in {n} groups");
        }
        let grouped: usize = GROUPS.iter().map(|(_, t)| t.len()).sum();
        assert_eq!(
            grouped,
            catalog_names().len(),
            "a group names a tool with no spec"
        );
        let chosen = select(Some(&["search".into(), "review".into()])).unwrap();
        assert_eq!(
            chosen,
            [
                "search_symbols",
                "search_files",
                "search_text",
                "search_code",
                "search_docs",
                "change_impact",
                "review_diff",
                "index_status"
            ]
        );
        assert_eq!(select(None).unwrap(), catalog_names());
        let e = select(Some(&["cores".into()])).unwrap_err();
        assert_eq!(
            e,
            "unknown tool group 'cores'; the groups are core, search, edit, review"
        );
    }

    #[test]
    fn the_catalog_fits_its_budget() {
        let size: usize = catalog(&catalog_names())
            .iter()
            .map(|t| {
                t.description.as_deref().unwrap_or("").len()
                    + serde_json::to_string(&*t.input_schema).unwrap().len()
            })
            .sum();
        assert!(size < CATALOG_BUDGET, "catalog is {size} characters");
    }

    #[test]
    fn schemas_derived_from_the_argument_types_list_every_argument() {
        let s = schema::<ReachArgs>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], json!(["from_symbol", "to_symbol"]));
        let p = &s["properties"];
        assert_eq!(
            p["max_depth"],
            json!({"type": "integer", "minimum": 0, "description": "calls to follow, 1-12, default 8"})
        );
        assert_eq!(p["root"]["type"], "string");
        assert_eq!(p.as_object().unwrap().len(), 10, "4 own and 6 common");
    }

    #[test]
    fn arguments_are_checked_by_type_and_name() {
        let c = parse_call(
            "find_references",
            args(json!({"symbol": "kmap", "group_by": "file", "limit": 5, "offset": 10.0})),
        )
        .unwrap();
        assert_eq!(
            c.ask,
            Some(Ask::Refs {
                symbol: "kmap".into(),
                group_by: GroupBy::File
            })
        );
        assert_eq!((c.page.limit, c.page.offset), (5, 10));
        let e = |name: &str, v: Value| parse_call(name, args(v)).unwrap_err();
        assert!(e("find_definition", json!({})).contains("'symbol' is required"));
        assert!(
            e("find_definition", json!({"symbol": 3})).contains("must be a string, not a number")
        );
        assert!(e("find_definition", json!({"symbol": "x", "offset": -1})).contains("zero or more"));
        assert!(e("find_definition", json!({"symbol": "x", "limit": "10"})).contains("an integer"));
        assert!(e("find_definition", json!({"symbol": "x", "limit": 1e15})).contains("absurd"));
        assert!(e("find_definition", json!({"symbol": "x", "symbl": "y"}))
            .contains("unknown argument 'symbl'"));
        assert!(
            e("find_definition", json!({"symbol": "x", "format": "xml"})).contains("text or json")
        );
        assert!(e("update_index", json!({"full": "yes"})).contains("true or false"));
        assert!(e("grep", json!({})).contains("unknown tool 'grep'"));
        assert!(e("search_text", json!({"pattern": "x", "paths": "fs"})).contains("array"));
        assert!(e("search_text", json!({"pattern": "x", "output": "all"})).contains("lines"));
    }

    #[test]
    fn change_impact_and_review_diff_take_their_arguments() {
        let c = parse_call("change_impact", args(json!({"symbol": "vfs_read"}))).unwrap();
        assert_eq!(
            c.ask,
            Some(Ask::Impact {
                symbol: "vfs_read".into(),
                depth: 2
            })
        );
        let c = parse_call("change_impact", args(json!({"symbol": "x", "depth": 0}))).unwrap();
        assert_eq!(
            c.ask,
            Some(Ask::Impact {
                symbol: "x".into(),
                depth: 0
            })
        );
        // A diff is long, and its last context line may be a lone space.
        let diff = format!(
            "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n {}\n ",
            "x".repeat(8000)
        );
        let c = parse_call("review_diff", args(json!({"diff": diff, "limit": 5}))).unwrap();
        assert_eq!(c.ask, Some(Ask::Review { diff }));
        assert_eq!(c.page.limit, 5);
        let e = parse_call("review_diff", args(json!({"diff": "  "}))).unwrap_err();
        assert!(e.contains("'diff' is empty"), "{e}");
    }

    #[test]
    fn a_search_text_call_keeps_its_pattern_as_given() {
        let c = parse_call(
            "search_text",
            args(
                json!({"pattern": " kmap(", "fixed_strings": true, "paths": ["mm"],
                        "globs": ["*.c"], "context": 2, "output": "count"}),
            ),
        )
        .unwrap();
        let Some(Ask::Grep(g)) = c.ask else {
            panic!("{c:?}")
        };
        assert_eq!(g.pattern.text, " kmap(");
        assert!(g.pattern.fixed && !g.pattern.ignore_case);
        assert_eq!(
            (g.paths, g.globs, g.context),
            (vec!["mm".to_string()], vec!["*.c".to_string()], 2)
        );
        assert_eq!(g.mode, crate::query::GrepMode::Count);
    }

    #[test]
    fn search_symbols_takes_a_query_and_a_kind_but_no_active_config() {
        let c = parse_call(
            "search_symbols",
            args(json!({"query": " ext4 read ", "kind": "function", "path_prefix": "fs/"})),
        )
        .unwrap();
        assert_eq!(
            c.ask,
            Some(Ask::Find {
                query: "ext4 read".into(),
                kind: Some(knav_ctags::Kind::Function)
            })
        );
        assert_eq!(c.page.path_prefix.as_deref(), Some("fs/"));
        let e = |v: Value| parse_call("search_symbols", args(v)).unwrap_err();
        assert!(e(json!({"query": "x", "kind": "fn"})).contains("unknown kind 'fn'"));
        assert!(e(json!({"query": "x", "active_config": "a"})).contains("unknown argument"));
        assert!(e(json!({"query": "  "})).contains("'query' is empty"));
        let c = parse_call("search_files", args(json!({"query": "ext2"}))).unwrap();
        assert_eq!(
            c.ask,
            Some(Ask::Files {
                query: "ext2".into()
            })
        );
    }
}
