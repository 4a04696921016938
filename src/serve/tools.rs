//! The MCP tool catalog: each tool of [`crate::tools::TOOLS`] as MCP lists it (description,
//! input schema derived from its argument type by schemars, as rmcp does, annotations), and the
//! checking of a call's arguments into a [`Call`] with messages a model can act on. The tools
//! themselves, their arguments included, are defined once in `crate::tools`, which the CLI
//! reads too. Descriptions say what each tool answers and which native call it replaces; the
//! arguments many tools share are described once, in the server's [`instructions`], and listed
//! bare in each schema. The whole `tools/list` result stays under [`CATALOG_BUDGET`]
//! characters, its `alwaysLoad` tools under [`ALWAYS_LOAD_BUDGET`].

use std::sync::Arc;

use rmcp::model::{JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use crate::envelope::quote;
use crate::query::{Page, MAX_LIMIT};
use crate::render::Format;
use crate::request::{Ask, MAX_CONFIG_ARG, MAX_PATH};
use crate::tools::{Effect, Order, Shared, SHARED_ARGS, TOOLS};

/// Characters the `tools/list` result of all tools may take, as JSON (3,000 tokens at 4
/// characters a token).
pub const CATALOG_BUDGET: usize = 12_000;

/// Entries a list argument (`paths`, `globs`) may have.
const MAX_LIST: usize = 256;

/// Characters the `_meta["anthropic/alwaysLoad"]` tools may take together in the `tools/list`
/// result, as JSON (1,200 tokens at 4 characters a token).
pub const ALWAYS_LOAD_BUDGET: usize = 4_800;

/// What knav is for, said once to a client in the initialize result.
const ABOUT: &str = "knav answers questions about a large C tree such as the Linux kernel from \
    a prebuilt index: definitions with their #if guards, references, callers, callees, bodies, \
    call reachability, file symbols, text, code and documentation search, history and review. \
    Prefer it to grep and reading files: answers are exact, paged and small. Paths are \
    relative to the root.";

/// The server's instructions: what knav is for, and the arguments of [`SHARED_ARGS`] that
/// tools' schemas list without a description.
pub fn instructions() -> String {
    let mut s = format!("{ABOUT}\nArguments shared by the tools that list them:");
    for (name, meaning) in SHARED_ARGS {
        s.push_str(&format!("\n- {name}: {meaning}"));
    }
    s
}

/// The tools of `groups` (`None`: all), in catalog order; an unknown group is an error naming
/// the groups.
pub fn select(groups: Option<&[String]>) -> Result<Vec<&'static str>, String> {
    let Some(groups) = groups else {
        return Ok(catalog_names());
    };
    let mut chosen: Vec<&str> = Vec::new();
    for g in groups {
        let Some(group) = crate::tools::GROUPS.iter().find(|name| **name == g.trim()) else {
            return Err(format!(
                "unknown tool group {}; the groups are {}",
                quote(g),
                crate::tools::GROUPS.join(", ")
            ));
        };
        chosen.extend(crate::tools::group_tools(group));
    }
    Ok(catalog_names()
        .into_iter()
        .filter(|n| chosen.contains(n))
        .collect())
}

/// The input schema of `tool`'s argument type, as MCP clients read it: an object of typed
/// properties. Left out, as they cost catalog characters and tell a model nothing the server
/// does not say when a call breaks them: schemars' `$schema`, `title`, integer `format` and
/// `minimum` (0 for an unsigned type), `writeOnly` (of an argument with a default, which
/// `crate::tools` never serializes), and `additionalProperties: false` ([`check`] refuses a
/// negative number or an unknown argument, naming it). A shared argument ([`SHARED_ARGS`]) has
/// no description: the server's instructions give it; nor has one whose description is empty
/// (`#[schemars(description = "")]`): its name and its tool's description say it.
fn schema(tool: &crate::tools::Tool) -> JsonObject {
    let settings = rmcp::schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.meta_schema = None;
    });
    let root = tool.schema(settings.into_generator());
    let mut v = serde_json::to_value(root).unwrap_or_default();
    let Some(obj) = v.as_object_mut() else {
        return JsonObject::new();
    };
    obj.remove("title");
    obj.remove("description");
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        // Every argument type flattens all of `Shared`; the tool lists those it takes.
        props.retain(|name, _| {
            tool.shared.contains(&name.as_str()) || !SHARED_ARGS.iter().any(|(s, _)| s == name)
        });
        for (name, p) in props.iter_mut() {
            let Some(p) = p.as_object_mut() else {
                continue;
            };
            p.remove("format");
            p.remove("minimum");
            p.remove("writeOnly");
            let bare = p.get("description").and_then(Value::as_str) == Some("");
            if bare || SHARED_ARGS.iter().any(|(shared, _)| shared == name) {
                p.remove("description");
            }
            // An `Option` is a property that may be left out, not one that may be null.
            if let Some(Value::Array(types)) = p.get("type") {
                let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if let [one] = types.as_slice() {
                    p.insert("type".into(), one.clone());
                }
            }
        }
    }
    obj.clone()
}

/// The tool names.
pub fn catalog_names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

/// Characters of the `tools/list` result listing `tools`, as JSON: what the list costs a
/// client's context (a token is about four of them).
pub fn listed_chars(tools: &[Tool]) -> usize {
    serde_json::to_string(&json!({ "tools": tools })).map_or(0, |s| s.len())
}

/// The tools named in `served` as MCP lists them.
pub fn catalog(served: &[&str]) -> Vec<Tool> {
    TOOLS
        .iter()
        .filter(|t| served.contains(&t.name))
        .map(tool)
        .collect()
}

fn tool(def: &crate::tools::Tool) -> Tool {
    let annotations = match def.effect {
        Effect::Writes => ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(false),
        Effect::Reads => ToolAnnotations::new().read_only(true).open_world(false),
        Effect::Refreshes => ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    };
    let schema = Arc::new(schema(def));
    let mut t = Tool::new(def.name, def.description, schema).annotate(annotations);
    if def.always_load {
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
    /// What it asks for.
    pub order: Order,
    /// The tree, when the call names one.
    pub root: Option<String>,
    /// Output format.
    pub format: Format,
    /// Paging and filtering.
    pub page: Page,
    /// The `.config` to apply, when given.
    pub active_config: Option<String>,
    /// The git revision to answer for, when given.
    pub rev: Option<String>,
}

impl Call {
    /// The question asked, for a question for the index.
    pub fn ask(&self) -> Option<Ask> {
        match &self.order {
            Order::Ask(ask) => Some(ask.clone()),
            _ => None,
        }
    }
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
    let Some(def) = crate::tools::by_name(name) else {
        return Err(format!(
            "unknown tool {}; the tools are {}",
            quote(name),
            catalog_names().join(", ")
        ));
    };
    let tool = def.name;
    let args = check(tool, &schema(def), arguments.unwrap_or_default())?;
    let (order, shared) = def.from_json(args).map_err(|e| format!("{tool}: {e}"))?;
    call(tool, order, shared)
}

/// The call of `tool` giving `order`, with the arguments every tool shares: format, paging,
/// root and active configuration.
fn call(tool: &'static str, order: Order, shared: Shared) -> Result<Call, String> {
    let format = match shared.format {
        None => Format::Text,
        Some(f) => f.parse::<Format>().map_err(|e| format!("{tool}: {e}"))?,
    };
    let limit = shared
        .limit
        .unwrap_or_else(|| crate::tools::agent_limit(tool));
    if limit > MAX_LIMIT.saturating_mul(1_000_000) {
        return Err(format!(
            "{tool}: limit {limit} is absurd; ask for at most {MAX_LIMIT} and page with offset"
        ));
    }
    let page = Page {
        limit,
        offset: shared.offset.unwrap_or(0),
        path_prefix: shared.path_prefix.filter(|p| !p.is_empty()),
        active: None,
        body_bytes: crate::tools::AGENT_BODY_BYTES,
        places_only: false,
    };
    Ok(Call {
        tool,
        order,
        root: shared.root,
        format,
        page,
        active_config: shared.active_config.filter(|c| !c.trim().is_empty()),
        rev: shared.rev.filter(|r| !r.trim().is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Option<JsonObject> {
        v.as_object().cloned()
    }

    #[test]
    fn every_tool_is_in_one_group_and_groups_choose_tools() {
        use crate::tools::{group_tools, GROUPS};
        for t in TOOLS {
            assert!(GROUPS.contains(&t.group), "{} is in no group", t.name);
        }
        for g in GROUPS {
            assert!(!group_tools(g).is_empty(), "group {g} has no tool");
        }
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
                "compare_versions",
                "symbol_history",
                "review_diff",
                "index_status"
            ]
        );
        assert_eq!(select(None).unwrap(), catalog_names());
        let e = select(Some(&["cores".into()])).unwrap_err();
        assert_eq!(
            e,
            "unknown tool group 'cores'; the groups are core, search, edit, review, hardware"
        );
        assert_eq!(select(Some(&["hardware".into()])).unwrap(), ["find_device"]);
    }

    #[test]
    fn the_catalog_fits_its_budget() {
        let all = catalog(&catalog_names());
        let size = listed_chars(&all);
        assert!(size < CATALOG_BUDGET, "tools/list takes {size} characters");
        let always: Vec<Tool> = TOOLS.iter().filter(|t| t.always_load).map(tool).collect();
        let size = listed_chars(&always);
        assert!(size < ALWAYS_LOAD_BUDGET, "alwaysLoad tools take {size}");
    }

    #[test]
    fn shared_arguments_are_described_once_in_the_instructions_not_in_each_schema() {
        // Every argument of `Shared` has its line in the instructions, and no schema
        // describes it again.
        let g = rmcp::schemars::generate::SchemaSettings::draft2020_12().into_generator();
        let shared = serde_json::to_value(g.into_root_schema_for::<Shared>()).unwrap();
        let names: Vec<&str> = shared["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut listed: Vec<&str> = SHARED_ARGS.iter().map(|(n, _)| *n).collect();
        listed.sort_unstable();
        assert_eq!(names, listed, "SHARED_ARGS names Shared's fields");
        let text = instructions();
        for (name, meaning) in SHARED_ARGS {
            assert!(text.contains(&format!("- {name}: {meaning}")), "{name}");
        }
        for t in catalog(&catalog_names()) {
            for (name, p) in t.input_schema["properties"].as_object().unwrap() {
                let shared = SHARED_ARGS.iter().any(|(n, _)| n == name);
                let described = p.get("description").is_some();
                assert!(
                    !(shared && described),
                    "{}: {name} is described again",
                    t.name
                );
                assert_ne!(p.get("description"), Some(&json!("")), "{}: {name}", t.name);
            }
        }
    }

    #[test]
    fn schemas_derived_from_the_argument_types_list_every_argument() {
        let s = schema(crate::tools::by_name("reachability").unwrap());
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["from_symbol", "to_symbol"]));
        let p = &s["properties"];
        assert_eq!(
            p["max_depth"],
            json!({"type": "integer", "description": "1-12, default 8"})
        );
        assert_eq!(p["root"], json!({"type": "string"}));
        assert_eq!(p.as_object().unwrap().len(), 11, "4 own and 7 common");
    }

    #[test]
    fn arguments_are_checked_by_type_and_name() {
        let c = parse_call(
            "find_references",
            args(json!({"symbol": "kmap", "group_by": "file", "limit": 5, "offset": 10.0})),
        )
        .unwrap();
        assert_eq!(
            c.ask(),
            Some(Ask::Refs {
                symbol: "kmap".into(),
                group_by: crate::query::GroupBy::File
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
            c.ask(),
            Some(Ask::Impact {
                symbol: "vfs_read".into(),
                depth: 2,
                include_uncertain: false
            })
        );
        let c = parse_call(
            "change_impact",
            args(json!({"symbol": "x", "depth": 0, "include_uncertain": true})),
        )
        .unwrap();
        assert_eq!(
            c.ask(),
            Some(Ask::Impact {
                symbol: "x".into(),
                depth: 0,
                include_uncertain: true
            })
        );
        // A diff is long, and its last context line may be a lone space.
        let diff = format!(
            "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n {}\n ",
            "x".repeat(8000)
        );
        let c = parse_call("review_diff", args(json!({"diff": diff, "limit": 5}))).unwrap();
        assert_eq!(c.ask(), Some(Ask::Review { diff }));
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
        let Some(Ask::Grep(g)) = c.ask() else {
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
    fn every_shared_argument_a_tool_does_not_take_is_refused_by_name() {
        // Every argument type flattens all of `Shared`: what a tool takes is its entry's list,
        // held by its schema alone.
        let mut refused = 0;
        for tool in TOOLS {
            for (name, _) in SHARED_ARGS {
                let taken = tool.shared.contains(name);
                let v = match *name {
                    "limit" | "offset" => json!(1),
                    _ => json!("x"),
                };
                let mut one = JsonObject::new();
                one.insert((*name).to_string(), v);
                let e = parse_call(tool.name, Some(one)).err().unwrap_or_default();
                let unknown = e.contains(&format!("unknown argument '{name}'"));
                assert_eq!(unknown, !taken, "{} and {name}: {e}", tool.name);
                refused += usize::from(!taken);
            }
        }
        assert!(refused > 20, "only {refused} pairs refused");
    }

    #[test]
    fn search_symbols_takes_a_query_and_a_kind_but_no_active_config() {
        let c = parse_call(
            "search_symbols",
            args(json!({"query": " ext4 read ", "kind": "function", "path_prefix": "fs/"})),
        )
        .unwrap();
        assert_eq!(
            c.ask(),
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
            c.ask(),
            Some(Ask::Files {
                query: "ext2".into()
            })
        );
    }
}
