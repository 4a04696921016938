//! One question, whoever asks it: the CLI and the MCP server both turn their arguments into an
//! [`Ask`] and a [`Page`], and [`answer`] turns those into an envelope against one snapshot, so
//! the two front ends cannot disagree.

use crate::envelope::quote;
use crate::envelope::Envelope;
use crate::query::fuzzy::{self, AnsweredFrom};
use crate::query::{self, GroupBy, Page, Query};
use knav_index::store::Snapshot;

/// A question for the index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ask {
    /// find_definition.
    Def {
        /// The identifier.
        symbol: String,
    },
    /// find_references.
    Refs {
        /// The identifier.
        symbol: String,
        /// Rows per reference or per file.
        group_by: GroupBy,
    },
    /// find_callers.
    Callers {
        /// The function.
        symbol: String,
        /// Also the calls through members of unknown struct type (field-name guesses).
        include_uncertain: bool,
    },
    /// find_callees.
    Callees {
        /// The function.
        symbol: String,
        /// Also the targets of calls through members of unknown struct type.
        include_uncertain: bool,
    },
    /// get_symbol_body.
    Body {
        /// The identifier.
        symbol: String,
        /// Bodies to show at most.
        max_definitions: u64,
    },
    /// reachability.
    Reach {
        /// Where to start.
        from: String,
        /// What to reach.
        to: String,
        /// Calls to follow at most.
        max_depth: u32,
        /// Also follow calls through members whose struct type is not known.
        include_uncertain: bool,
    },
    /// list_file_symbols.
    Symbols {
        /// Root-relative path (a directory: its files with their definition counts).
        file: String,
        /// Page from the end of the file backwards (`from: "end"`), last definition first.
        from_end: bool,
    },
    /// search_symbols.
    Find {
        /// Parts of a name (`ext4 read iter`) or `/REGEX/`.
        query: String,
        /// Only names with a definition of this kind.
        kind: Option<knav_ctags::Kind>,
    },
    /// search_files.
    Files {
        /// Parts of a path (`ext2 file`).
        query: String,
    },
    /// search_text.
    Grep(Box<query::GrepAsk>),
    /// search_docs.
    Docs {
        /// Words (`out of memory killer`).
        query: String,
    },
    /// find_device.
    Device {
        /// A compatible string (`fsl,imx21-i2c`), or a pattern with one `*`.
        compatible: String,
    },
    /// change_impact.
    Impact {
        /// The function.
        symbol: String,
        /// Levels of callers (0..=10).
        depth: u32,
        /// Also callers through members of unknown struct type.
        include_uncertain: bool,
    },
    /// review_diff.
    Review {
        /// A unified diff.
        diff: String,
    },
    /// search_code.
    Code {
        /// What the code does, in words (`choose a process to kill when memory runs out`).
        query: String,
        /// Only definitions of this kind.
        kind: Option<knav_ctags::Kind>,
        /// Which files answer.
        scope: query::Scope,
    },
}

impl Ask {
    /// The tool this question is asked as: its query module's `TOOL`.
    pub fn tool(&self) -> &'static str {
        match self {
            Ask::Def { .. } => query::def::TOOL,
            Ask::Refs { .. } => query::refs::TOOL,
            Ask::Callers { .. } => query::callers::TOOL,
            Ask::Callees { .. } => query::callees::TOOL,
            Ask::Body { .. } => query::body::TOOL,
            Ask::Reach { .. } => query::reach::TOOL,
            Ask::Symbols { .. } => query::symbols::TOOL,
            Ask::Find { .. } => query::find::TOOL,
            Ask::Files { .. } => query::files::TOOL,
            Ask::Grep(_) => query::grep::TOOL,
            Ask::Docs { .. } => query::docs::TOOL,
            Ask::Device { .. } => query::device::TOOL,
            Ask::Impact { .. } => query::impact::TOOL,
            Ask::Review { .. } => query::review::TOOL,
            Ask::Code { .. } => query::code::TOOL,
        }
    }

    /// What [`answer`] needs to know of each tool's question besides asking it: one row per
    /// tool (the only per-tool table of this module besides [`Ask::tool`] and [`match_ask`]).
    fn shape(&mut self) -> Shape<'_> {
        use AnsweredFrom::{Definitions, Mentions};
        let query_len = |query: &str| {
            if query.len() > MAX_QUERY {
                Err(format!(
                    "query {} is longer than {MAX_QUERY} bytes",
                    quote(query)
                ))
            } else {
                Ok(())
            }
        };
        let (names, others, filters_by_prefix) = match self {
            Ask::Def { symbol } => (Names::Def(symbol), Ok(()), true),
            Ask::Refs { symbol, .. } => (Names::One(symbol, Mentions), Ok(()), true),
            Ask::Callers { symbol, .. } => (Names::One(symbol, Mentions), Ok(()), true),
            Ask::Callees { symbol, .. } => (Names::One(symbol, Definitions), Ok(()), true),
            Ask::Body { symbol, .. } => (Names::One(symbol, Definitions), Ok(()), true),
            Ask::Impact { symbol, .. } => (Names::One(symbol, Mentions), Ok(()), true),
            Ask::Reach { from, to, .. } => (Names::Reach(from, to), Ok(()), false),
            Ask::Symbols { file, .. } => {
                let checked = match file.len() > MAX_PATH {
                    true => Err(format!(
                        "file path {} is longer than {MAX_PATH} bytes",
                        quote(file)
                    )),
                    false => Ok(()),
                };
                // A file that is not there: where the symbol lives is the next question.
                let shape = Shape::new(Names::None, checked, false);
                return Shape {
                    next_on_error: Some(query::files::TOOL),
                    ..shape
                };
            }
            Ask::Find { query, .. } | Ask::Files { query } | Ask::Code { query, .. } => {
                (Names::None, query_len(query), true)
            }
            Ask::Docs { query } => (Names::None, query_len(query), false),
            Ask::Device { compatible } => (Names::None, query_len(compatible), false),
            Ask::Review { diff } => (
                Names::None,
                crate::diff::check_bytes(diff.len()).map_err(|e| e.to_string()),
                false,
            ),
            Ask::Grep(g) => {
                let checked = match g.paths.iter().find(|p| p.len() > MAX_PATH) {
                    Some(p) => Err(format!("path {} is longer than {MAX_PATH} bytes", quote(p))),
                    None => g.within.as_deref().map_or(Ok(()), |w| name("within", w)),
                };
                (Names::None, checked, false)
            }
        };
        Shape::new(names, others, filters_by_prefix)
    }
}

/// A question's per-tool facts ([`Ask::shape`]).
struct Shape<'a> {
    /// The names it carries, by role.
    names: Names<'a>,
    /// The check of its other arguments' sizes and shape.
    others: Result<(), String>,
    /// True when the path prefix filters its answer by the indexed files' paths (grep checks
    /// its own against the tree; documentation is not among the indexed files).
    filters_by_prefix: bool,
    /// The tool an error suggests next, when not the same call with its arguments fixed.
    next_on_error: Option<&'static str>,
}

impl<'a> Shape<'a> {
    fn new(names: Names<'a>, others: Result<(), String>, filters_by_prefix: bool) -> Shape<'a> {
        Shape {
            names,
            others,
            filters_by_prefix,
            next_on_error: None,
        }
    }
}

/// The names a question carries, each read as written ([`as_written`]), checked as a C
/// identifier ([`check`]) and resolved to the name the tool is best asked with
/// ([`resolve_and_answer`]).
enum Names<'a> {
    /// None (a search, a file, a diff).
    None,
    /// find_definition's: `struct_name.member` allowed, and resolved by the tool itself.
    Def(&'a mut String),
    /// One `symbol`, and what the tool answers it from.
    One(&'a mut String, AnsweredFrom),
    /// reachability's two: `from` (answered from its definitions) and `to` (its mentions).
    Reach(&'a mut String, &'a mut String),
}

/// The longest name a question may carry, in bytes: the kernel's own limit for a symbol
/// (KSYM_NAME_LEN).
pub const MAX_NAME: usize = 512;
/// The longest path a question may carry, in bytes (PATH_MAX).
pub const MAX_PATH: usize = 4096;
/// The longest search query, in bytes.
pub const MAX_QUERY: usize = 1024;
/// The longest `active_config` argument, in bytes (a long list of CONFIG_X=y).
pub const MAX_CONFIG_ARG: usize = 64 << 10;
/// `path` for an error: whole when short, else its first characters and its length (an
/// `active_config` argument of 60 KB names no file, and must not come back whole).
fn shown(path: &std::path::Path) -> String {
    let s = path.display().to_string();
    match s.char_indices().nth(MAX_SHOWN_PATH) {
        None => s,
        Some((cut, _)) => format!("{}… ({} bytes)", &s[..cut], s.len()),
    }
}

/// Characters of a path an error shows.
const MAX_SHOWN_PATH: usize = 200;

/// `s`, named `what` in an error, checked as a C identifier.
fn name(what: &str, s: &str) -> Result<(), String> {
    if s.len() > MAX_NAME {
        Err(format!(
            "{what} {} is longer than {MAX_NAME} bytes; a C identifier is shorter",
            quote(s)
        ))
    } else if !crate::query::valid_name(s) {
        Err(format!("{what} {} is not a C identifier", quote(s)))
    } else {
        Ok(())
    }
}

/// Checks the sizes and shape of `ask`'s strings before any lookup.
fn check(ask: &mut Ask) -> Result<(), String> {
    let shape = ask.shape();
    match &shape.names {
        // `struct_name.member` is checked by find_definition itself.
        Names::Def(symbol) if symbol.len() > 2 * MAX_NAME + 16 => Err(format!(
            "symbol {} is longer than {MAX_NAME} bytes; a C identifier is shorter",
            quote(symbol)
        )),
        Names::Def(_) | Names::None => Ok(()),
        Names::One(symbol, _) => name("symbol", symbol),
        Names::Reach(from, to) => name("from", from).and_then(|_| name("to", to)),
    }?;
    shape.others
}

/// The configuration `arg` names: a `.config` file (relative to `base`) or a macro list
/// (`CONFIG_A=y,CONFIG_B=m`), parsed once per content by this process.
pub fn active_config(
    arg: &str,
    base: &std::path::Path,
) -> Result<std::sync::Arc<knav_kconfig::Config>, String> {
    active_config_within(arg, base, None)
}

/// Bytes of a `.config` read at most through [`active_config_within`]'s directories (the
/// kernel's own are about 300 KB).
const MAX_CONFIG_FILE: u64 = 16 << 20;

/// [`active_config`], but with `within`, a `.config` file must lie inside one of those
/// directories (canonical paths): its real path must, and it is opened without following a
/// link below that directory. The MCP server asks this way, so a client cannot read any file
/// the server can.
pub fn active_config_within(
    arg: &str,
    base: &std::path::Path,
    within: Option<&[std::path::PathBuf]>,
) -> Result<std::sync::Arc<knav_kconfig::Config>, String> {
    let arg = arg.trim();
    if arg.len() > MAX_CONFIG_ARG {
        return Err(format!(
            "active_config {} is longer than {MAX_CONFIG_ARG} bytes",
            quote(arg)
        ));
    }
    let path = base.join(arg);
    let from_list = arg.contains('=') && !path.exists();
    let text = if from_list {
        arg.to_string()
    } else if let Some(dirs) = within {
        read_config_within(&path, dirs)?
    } else {
        // A regular file of bounded size: /dev/zero or a FIFO is an error, not a hang.
        match knav_kconfig::read_file(&path, knav_kconfig::MAX_CONFIG_BYTES) {
            Ok(bytes) => config_text(bytes),
            Err(knav_kconfig::ReadError::NotFound) => {
                return Err(format!("active_config file not found: {}", shown(&path)))
            }
            Err(e) => {
                return Err(format!(
                    "active_config {}: {e}; give a .config file or CONFIG_A=y,CONFIG_B=m",
                    shown(&path)
                ))
            }
        }
    };
    // A server is asked with the same .config again and again: parsed once per content.
    let key = knav_index::hash64(text.as_bytes()) ^ from_list as u64;
    let mut cache = PARSED_CONFIGS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, c)) = cache.iter().find(|(k, _)| *k == key) {
        return Ok(c.clone());
    }
    let config = if from_list {
        knav_kconfig::Config::from_macros(arg).map_err(|e| format!("active_config {e}"))?
    } else {
        knav_kconfig::Config::parse(&text)
            .map_err(|e| format!("active_config {}: {e}", shown(&path)))?
    };
    let config = std::sync::Arc::new(config);
    if cache.len() >= MAX_PARSED_CONFIGS {
        cache.remove(0);
    }
    cache.push((key, config.clone()));
    Ok(config)
}

/// The text of `.config` `path`, which must lie inside one of `dirs` (canonical).
fn read_config_within(
    path: &std::path::Path,
    dirs: &[std::path::PathBuf],
) -> Result<String, String> {
    use std::io::Read;
    let real = match std::fs::canonicalize(path) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("active_config file not found: {}", shown(path)))
        }
        Err(e) => return Err(format!("active_config {}: {e}", shown(path))),
    };
    let inside = dirs
        .iter()
        .find_map(|d| Some((d, real.strip_prefix(d).ok()?)));
    let Some((dir, rel)) = inside else {
        let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(format!(
            "active_config {} is outside {}; over MCP a .config must lie in the served tree or \
             in a directory its .knav.toml names in serve.config_dirs",
            shown(path),
            names.join(", ")
        ));
    };
    let rel = knav_index::tree::pathname::encode_os(rel.as_os_str());
    let file = knav_index::tree::beneath::open_file(dir, &rel)
        .map(|(f, _)| f)
        .map_err(|e| match e {
            knav_index::tree::beneath::Unread::Io(e) => {
                format!("active_config {}: {e}", shown(path))
            }
            knav_index::tree::beneath::Unread::Changed(what) => format!(
                "active_config {} is {what}, not a regular file inside {}",
                shown(path),
                dir.display()
            ),
        })?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("active_config {}: {e}", shown(path)))?;
    if bytes.len() as u64 > MAX_CONFIG_FILE {
        return Err(format!(
            "active_config {} is larger than {} MiB; a .config is a few hundred KB",
            shown(path),
            MAX_CONFIG_FILE >> 20
        ));
    }
    Ok(config_text(bytes))
}

/// A `.config`'s text. Valid UTF-8 (every real .config) is taken as is, without a lossy copy;
/// other bytes (a Latin-1 comment) are replaced, whoever asks.
fn config_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Configurations parsed by this process, by the hash of their text, oldest first.
static PARSED_CONFIGS: std::sync::Mutex<Vec<(u64, std::sync::Arc<knav_kconfig::Config>)>> =
    std::sync::Mutex::new(Vec::new());
/// How many [`PARSED_CONFIGS`] are kept.
const MAX_PARSED_CONFIGS: usize = 4;

/// `ask` with its names read as people write them ([`fuzzy::as_written`]: `struct
/// file_operations`, `vfs_read()`, `&init_task`), and the tag a find_definition name was
/// written with.
fn as_written(ask: &Ask) -> (Ask, Option<&'static str>) {
    let mut ask = ask.clone();
    let mut tag = None;
    let mut read = |s: &mut String| {
        if let Some(w) = fuzzy::as_written(s) {
            tag = w.tag;
            *s = w.name.to_string();
        }
    };
    match ask.shape().names {
        Names::Def(symbol) if fuzzy::split_member(symbol).is_none() => read(symbol),
        Names::One(symbol, _) => read(symbol),
        Names::Reach(from, to) => {
            read(from);
            read(to);
        }
        Names::Def(_) | Names::None => {}
    }
    (ask, tag)
}

/// Answers `ask` (its names read as written) for the name each tool is best asked with: a
/// system call's function for its name, a near match for a name the index does not hold
/// ([`fuzzy::for_tools`]), said in the answer (a near match is [`Envelope::near_match`]), the
/// way find_definition resolves its own.
fn resolve_and_answer(q: &Query<'_>, ask: &Ask, tag: Option<&str>) -> Envelope {
    if let (Ask::Def { symbol }, Some(tag)) = (ask, tag) {
        return query::find_tag(q, tag, symbol);
    }
    let mut ask = ask.clone();
    let mut found = Vec::new();
    let mut resolve = |name: &mut String, from| match fuzzy::for_tools(q, name, from) {
        fuzzy::Fuzzy::One(to, how) => {
            found.push((std::mem::replace(name, to.clone()), to, how));
            Ok(())
        }
        fuzzy::Fuzzy::Several(names) => Err((name.clone(), names)),
        fuzzy::Fuzzy::Nothing => Ok(()),
    };
    let outcome = match ask.shape().names {
        Names::Reach(from, to) => resolve(from, AnsweredFrom::Definitions)
            .and_then(|_| resolve(to, AnsweredFrom::Mentions)),
        Names::One(name, from) => resolve(name, from),
        Names::Def(_) | Names::None => Ok(()),
    };
    if let Err((name, names)) = outcome {
        return query::several(q, ask.tool(), &name, names);
    }
    let mut env = match_ask(q, &ask);
    let unfound = found
        .iter()
        .find(|(_, name, how)| !fuzzy::is_guess(how) && says_not_found(&env, name));
    if let Some((asked, name, _)) = unfound {
        // That answer is about a name the user never typed: the name as typed, unless refs
        // knows it no better (then `env` says the defined function is named nowhere).
        let plain = match_ask(q, &as_asked(&ask, asked, name));
        if !(matches!(ask, Ask::Refs { .. }) && says_not_found(&plain, asked)) {
            return plain;
        }
    }
    for (asked, name, how) in found {
        let guess = env.near_match;
        query::resolved(&mut env, &asked, &name, how);
        query::mark_resolved(&mut env, &name);
        env.near_match |= guess;
    }
    env
}

/// True when `env` is the error that `name` is not in the index, or find_references' answer
/// that nothing names a defined name.
fn says_not_found(env: &Envelope, name: &str) -> bool {
    let says = format!("no symbol named {} ", quote(name));
    let unnamed = format!("no references to {}: ", quote(name));
    env.error.as_deref().is_some_and(|e| e.starts_with(&says))
        || (env.tool == "find_references"
            && env
                .message
                .as_deref()
                .is_some_and(|m| m.starts_with(&unnamed)))
}

/// `ask` with `name`, which `asked` was resolved to, put back as `asked`.
fn as_asked(ask: &Ask, asked: &str, name: &str) -> Ask {
    let mut ask = ask.clone();
    let names = match ask.shape().names {
        Names::Reach(from, to) => vec![from, to],
        Names::One(n, _) => vec![n],
        Names::Def(_) | Names::None => Vec::new(),
    };
    for n in names.into_iter().filter(|n| *n == name) {
        *n = asked.to_string();
    }
    ask
}

/// Answers `ask` from `snap`, one page at a time.
pub fn answer(snap: &Snapshot, page: Page, ask: &Ask) -> Envelope {
    let q = Query::new(snap, page);
    let (mut read, tag) = as_written(ask);
    let mut env = match check(&mut read) {
        Err(e) => q.envelope_error(ask.tool(), e),
        Ok(()) => resolve_and_answer(&q, &read, tag),
    };
    if !q.prefix_matches() && read.shape().filters_by_prefix && env.error.is_none() {
        let prefix = q.page.path_prefix.as_deref().unwrap_or_default();
        env.error = Some(format!(
            "path_prefix {} names nothing: no indexed file's path starts with it",
            quote(prefix)
        ));
        env.next_tools = vec!["search_files"];
    }
    if env.subject.is_none() && read != *ask {
        // The next tools take the name as read (`file_operations`, not `struct …`).
        env.subject = match read.shape().names {
            Names::Def(symbol) | Names::One(symbol, _) => Some(symbol.clone()),
            Names::Reach(..) | Names::None => None,
        };
    }
    let mut changed = q.changed.take();
    changed.sort();
    changed.dedup();
    if let Some((path, what)) = changed.first() {
        let more = match changed.len() {
            1 => String::new(),
            n => format!(" (and {} more files)", n - 1),
        };
        env.warn(format!(
            "{path}{more} changed since indexing (now {what}); its lines are left out, nothing it \
             leads to is read; run `knav index`"
        ));
    }
    if let Some(e) = &snap.build_error {
        env.warn(format!(
            "the index's Kbuild and Kconfig part cannot be read ({e}); run `knav index` to rebuild it"
        ));
    }
    // Every error says what to do next: by default, the same call with its arguments fixed;
    // for a file that is not there, finding where the symbol lives instead.
    if env.error.is_some() && env.next_tools.is_empty() {
        env.next_tools = vec![read.shape().next_on_error.unwrap_or(ask.tool())];
    }
    env
}

fn match_ask(q: &Query<'_>, ask: &Ask) -> Envelope {
    match ask {
        Ask::Def { symbol } => query::find_definition(q, symbol),
        Ask::Refs { symbol, group_by } => query::find_references(q, symbol, *group_by),
        Ask::Callers {
            symbol,
            include_uncertain,
        } => query::find_callers(q, symbol, *include_uncertain),
        Ask::Callees {
            symbol,
            include_uncertain,
        } => query::find_callees(q, symbol, *include_uncertain),
        Ask::Body {
            symbol,
            max_definitions,
        } => query::get_symbol_body(q, symbol, *max_definitions),
        Ask::Reach {
            from,
            to,
            max_depth,
            include_uncertain,
        } => query::reachability(q, from, to, *max_depth, *include_uncertain),
        Ask::Symbols { file, from_end } => query::list_file_symbols(q, file, *from_end),
        Ask::Find { query, kind } => query::search_symbols(q, query, *kind),
        Ask::Files { query } => query::search_files(q, query),
        Ask::Grep(g) => query::search_text(q, g),
        Ask::Docs { query } => query::search_docs(q, query),
        Ask::Device { compatible } => query::find_device(q, compatible),
        Ask::Impact {
            symbol,
            depth,
            include_uncertain,
        } => query::change_impact(q, symbol, *depth, *include_uncertain),
        Ask::Review { diff } => query::review_diff(q, diff),
        Ask::Code { query, kind, scope } => query::search_code(q, query, *kind, *scope),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn errors_about_a_huge_symbol_quote_a_short_prefix() {
        let huge = "x".repeat(10 << 20);
        let e = check(&mut Ask::Callers {
            include_uncertain: false,
            symbol: huge.clone(),
        })
        .unwrap_err();
        assert!(e.len() < 200 && e.contains("10485760 bytes"), "{e}");
        let e = check(&mut Ask::Def { symbol: huge }).unwrap_err();
        assert!(e.len() < 200, "{e}");
        let e = check(&mut Ask::Reach {
            from: "a".into(),
            to: "b-c".into(),
            max_depth: 8,
            include_uncertain: false,
        })
        .unwrap_err();
        assert_eq!(e, "to 'b-c' is not a C identifier");
        assert_eq!(quote("kmap"), "'kmap'");
        let long = "é".repeat(100);
        assert_eq!(quote(&long), format!("'{}…' (200 bytes)", "é".repeat(80)));
        let e = active_config(
            &format!("CONFIG_A={}", "y".repeat(100 << 10)),
            Path::new("."),
        )
        .unwrap_err();
        assert!(e.len() < 200, "{e}");
    }

    #[test]
    fn a_60_kb_active_config_path_is_not_echoed_whole() {
        let long = "a".repeat(60_000);
        let e = active_config(&long, Path::new("/nonexistent-knav-dir")).unwrap_err();
        assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..100]);
        assert!(e.contains("(60022 bytes)"), "{e}");
        let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        let e = active_config_within(&long, &tmp, Some(std::slice::from_ref(&tmp))).unwrap_err();
        assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..100]);
    }

    #[test]
    fn a_config_is_parsed_once_per_content() {
        let dir = std::env::temp_dir().join(format!("knav-config-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cfg");
        std::fs::write(&path, "CONFIG_A=y\n").unwrap();
        let a = active_config("cfg", &dir).unwrap();
        let b = active_config("cfg", &dir).unwrap();
        assert!(std::sync::Arc::ptr_eq(&a, &b), "same content, same parse");
        std::fs::write(&path, "CONFIG_A=m\n").unwrap();
        let c = active_config("cfg", &dir).unwrap();
        assert!(!std::sync::Arc::ptr_eq(&a, &c), "new content, new parse");
        assert_eq!(c.value("CONFIG_A"), Some(&knav_kconfig::Value::Module));
        let list = active_config("CONFIG_A=y", &dir).unwrap();
        assert_eq!(
            list.value("CONFIG_B"),
            None,
            "a list leaves the rest undecided"
        );
        let err = active_config("nope", &dir).unwrap_err();
        assert!(err.contains("not found"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
