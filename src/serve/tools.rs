//! The MCP tool catalog: names, descriptions, input schemas and annotations, and the checking of
//! a call's arguments into a [`Call`]. Descriptions say what each tool is for and which native
//! call it replaces; all of them with their schemas stay under [`CATALOG_BUDGET`] characters.

use std::sync::Arc;

use rmcp::model::{JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use crate::query::{GroupBy, Page, MAX_LIMIT};
use crate::render::Format;
use crate::request::{quote, Ask, MAX_CONFIG_ARG, MAX_PATH};

/// Characters all descriptions and input schemas together may take (about 2,000 tokens).
pub const CATALOG_BUDGET: usize = 8000;

/// Tools marked `_meta["anthropic/alwaysLoad"]`: the ones an agent needs before any search.
const ALWAYS_LOAD: &[&str] = &["find_definition", "find_callers", "get_symbol_body"];

/// What one tool is for.
struct Spec {
    name: &'static str,
    description: &'static str,
    /// The tool's own arguments: (name, JSON type, description, required).
    args: &'static [(&'static str, &'static str, &'static str, bool)],
}

const SYMBOL: (&str, &str, &str, bool) = ("symbol", "string", "C identifier", true);

const SPECS: &[Spec] = &[
    Spec {
        name: "find_definition",
        description: "Where a C symbol is defined (functions, macros, structs, typedefs, \
                      variables; CONFIG_X in Kconfig), each with its #if guard, kind and \
                      signature, plus reference count and top files. Use instead of grep for \
                      `name(` or ctags.",
        args: &[SYMBOL],
    },
    Spec {
        name: "find_references",
        description: "Every use of a symbol (code only, not comments or strings), with role \
                      (call, ref, export, decl, def; kconfig and makefile for CONFIG_X) and \
                      guard; grouped by file when there are many. Use instead of grep -rw.",
        args: &[
            SYMBOL,
            (
                "group_by",
                "string",
                "auto (per file above 200 rows), line or file",
                false,
            ),
        ],
    },
    Spec {
        name: "find_callers",
        description: "The call sites of a function with the calling function's name. Use \
                      instead of grep for `name(` and reading each hit.",
        args: &[SYMBOL],
    },
    Spec {
        name: "find_callees",
        description: "The functions a function calls, each with where it is defined. Use \
                      instead of reading the body and looking up each call.",
        args: &[SYMBOL],
    },
    Spec {
        name: "get_symbol_body",
        description: "The source text of a symbol's definitions (up to 300 lines each). Use \
                      instead of find + reading the file.",
        args: &[
            SYMBOL,
            (
                "max_definitions",
                "integer",
                "bodies to show, default 3",
                false,
            ),
        ],
    },
    Spec {
        name: "reachability",
        description: "Whether one function can reach another through calls, with the shortest \
                      call chain. Use instead of tracing callers by hand.",
        args: &[
            ("from_symbol", "string", "function to start from", true),
            ("to_symbol", "string", "function to reach", true),
            (
                "max_depth",
                "integer",
                "calls to follow, 1-12, default 8",
                false,
            ),
        ],
    },
    Spec {
        name: "list_file_symbols",
        description: "The definitions in one file in line order, with kinds and guards. Use \
                      instead of reading the whole file to find what is in it.",
        args: &[("file_path", "string", "path relative to the root", true)],
    },
    Spec {
        name: "update_index",
        description: "Refresh the index now (only what changed), or rebuild it with full=true. \
                      Calls already refresh when the index is older than serve.debounce_s.",
        args: &[("full", "boolean", "rebuild everything", false)],
    },
];

/// Arguments every retrieval tool takes.
const COMMON: &[(&str, &str, &str)] = &[
    (
        "root",
        "string",
        "tree to search (default: the served root)",
    ),
    ("format", "string", "text (default) or json"),
    (
        "limit",
        "integer",
        "results per page, default 100, max 1000",
    ),
    ("offset", "integer", "results to skip"),
    ("path_prefix", "string", "only paths under this"),
    (
        "active_config",
        "string",
        ".config path or CONFIG_A=y,CONFIG_B=m: leaves out what it does not build \
         (#if, Makefiles, arch/), with reasons",
    ),
];

/// The tool names.
pub fn catalog_names() -> Vec<&'static str> {
    SPECS.iter().map(|s| s.name).collect()
}

/// The tools as MCP lists them.
pub fn catalog() -> Vec<Tool> {
    SPECS.iter().map(tool).collect()
}

fn tool(spec: &Spec) -> Tool {
    let mut props = Map::new();
    let mut required = Vec::new();
    for (name, ty, desc, req) in spec.args {
        props.insert(name.to_string(), prop(ty, desc));
        if *req {
            required.push(Value::from(*name));
        }
    }
    let retrieval = spec.name != "update_index";
    if retrieval {
        for (name, ty, desc) in COMMON {
            props.insert(name.to_string(), prop(ty, desc));
        }
    } else {
        let (name, ty, desc) = COMMON[0];
        props.insert(name.to_string(), prop(ty, desc));
    }
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    let annotations = if retrieval {
        ToolAnnotations::new().read_only(true).open_world(false)
    } else {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(true)
            .open_world(false)
    };
    let mut t = Tool::new(spec.name, spec.description, Arc::new(schema)).annotate(annotations);
    if ALWAYS_LOAD.contains(&spec.name) {
        let mut meta = JsonObject::new();
        meta.insert("anthropic/alwaysLoad".into(), json!(true));
        t = t.with_meta(MetaObject(meta));
    }
    t
}

fn prop(ty: &str, desc: &str) -> Value {
    let mut p = json!({"type": ty, "description": desc});
    if ty == "integer" {
        p["minimum"] = json!(0);
    }
    p
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
}

/// The arguments of one call, taken out one by one so that what is left over is an error.
struct Args {
    tool: &'static str,
    map: JsonObject,
}

impl Args {
    fn take(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key).filter(|v| !v.is_null())
    }

    fn string(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => {
                // Names and paths are short; only a CONFIG_X=y list may be long.
                let max = if key == "active_config" {
                    MAX_CONFIG_ARG
                } else {
                    MAX_PATH
                };
                if s.len() > max {
                    return Err(format!(
                        "{}: argument '{key}' is {} bytes long, more than {max}: {}",
                        self.tool,
                        s.len(),
                        quote(&s)
                    ));
                }
                Ok(Some(s))
            }
            Some(v) => Err(format!(
                "{}: argument '{key}' must be a string, not {}",
                self.tool,
                type_name(&v)
            )),
        }
    }

    fn required(&mut self, key: &str) -> Result<String, String> {
        match self.string(key)? {
            Some(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(_) => Err(format!("{}: argument '{key}' is empty", self.tool)),
            None => Err(format!("{}: argument '{key}' is required", self.tool)),
        }
    }

    fn integer(&mut self, key: &str) -> Result<Option<u64>, String> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        let bad = |what: &str| {
            format!(
                "{}: argument '{key}' must be {what}, not {}",
                self.tool,
                quote(&v.to_string())
            )
        };
        let n = match &v {
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
            _ => None,
        };
        match n {
            Some(n) if n >= 0 => Ok(Some(n as u64)),
            Some(_) => Err(bad("zero or more")),
            None => Err(bad("an integer")),
        }
    }

    fn boolean(&mut self, key: &str) -> Result<Option<bool>, String> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(v) => Err(format!(
                "{}: argument '{key}' must be true or false, not {}",
                self.tool,
                quote(&v.to_string())
            )),
        }
    }

    fn finish(self) -> Result<(), String> {
        match self.map.keys().next() {
            None => Ok(()),
            Some(k) => Err(format!(
                "{}: unknown argument {}; see the tool's input schema",
                self.tool,
                quote(k)
            )),
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
    let mut a = Args {
        tool,
        map: arguments.unwrap_or_default(),
    };
    let root = a.string("root")?;
    if tool == "update_index" {
        let full = a.boolean("full")?.unwrap_or(false);
        a.finish()?;
        return Ok(Call {
            tool,
            ask: None,
            full,
            root,
            format: Format::Text,
            page: Page::default(),
            active_config: None,
        });
    }
    let format = match a.string("format")? {
        None => Format::Text,
        Some(f) => f.parse::<Format>().map_err(|e| format!("{tool}: {e}"))?,
    };
    let limit = a.integer("limit")?.unwrap_or(0);
    if limit > MAX_LIMIT.saturating_mul(1_000_000) {
        return Err(format!(
            "{tool}: limit {limit} is absurd; ask for at most {MAX_LIMIT} and page with offset"
        ));
    }
    let page = Page {
        limit,
        offset: a.integer("offset")?.unwrap_or(0),
        path_prefix: a.string("path_prefix")?.filter(|p| !p.is_empty()),
        active: None,
    };
    let active_config = a.string("active_config")?.filter(|c| !c.trim().is_empty());
    let ask = match tool {
        "find_definition" => Ask::Def {
            symbol: a.required("symbol")?,
        },
        "find_references" => Ask::Refs {
            symbol: a.required("symbol")?,
            group_by: match a.string("group_by")? {
                None => GroupBy::Auto,
                Some(g) => g.parse().map_err(|e| format!("{tool}: {e}"))?,
            },
        },
        "find_callers" => Ask::Callers {
            symbol: a.required("symbol")?,
        },
        "find_callees" => Ask::Callees {
            symbol: a.required("symbol")?,
        },
        "get_symbol_body" => Ask::Body {
            symbol: a.required("symbol")?,
            max_definitions: a.integer("max_definitions")?.unwrap_or(3),
        },
        "reachability" => Ask::Reach {
            from: a.required("from_symbol")?,
            to: a.required("to_symbol")?,
            max_depth: a
                .integer("max_depth")?
                .map_or(8, |d| d.min(u32::MAX as u64) as u32),
        },
        "list_file_symbols" => Ask::Symbols {
            file: a.required("file_path")?,
        },
        _ => unreachable!("every spec is matched above"),
    };
    a.finish()?;
    Ok(Call {
        tool,
        ask: Some(ask),
        full: false,
        root,
        format,
        page,
        active_config,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Option<JsonObject> {
        v.as_object().cloned()
    }

    #[test]
    fn the_catalog_fits_its_budget() {
        let size: usize = catalog()
            .iter()
            .map(|t| {
                t.description.as_deref().unwrap_or("").len()
                    + serde_json::to_string(&*t.input_schema).unwrap().len()
            })
            .sum();
        assert!(size < CATALOG_BUDGET, "catalog is {size} characters");
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
    }
}
