//! One question, whoever asks it: the CLI and the MCP server both turn their arguments into an
//! [`Ask`] and a [`Page`], and [`answer`] turns those into an envelope against one snapshot, so
//! the two front ends cannot disagree.

use crate::envelope::Envelope;
use crate::index::store::Snapshot;
use crate::query::{self, GroupBy, Page, Query};

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
    },
    /// find_callees.
    Callees {
        /// The function.
        symbol: String,
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
    },
    /// list_file_symbols.
    Symbols {
        /// Root-relative path.
        file: String,
    },
}

impl Ask {
    /// The tool name this question is asked as.
    pub fn tool(&self) -> &'static str {
        match self {
            Ask::Def { .. } => "find_definition",
            Ask::Refs { .. } => "find_references",
            Ask::Callers { .. } => "find_callers",
            Ask::Callees { .. } => "find_callees",
            Ask::Body { .. } => "get_symbol_body",
            Ask::Reach { .. } => "reachability",
            Ask::Symbols { .. } => "list_file_symbols",
        }
    }
}

/// The configuration `arg` names: a `.config` file (relative to `base`) or a macro list
/// (`CONFIG_A=y,CONFIG_B=m`), parsed once per content by this process.
pub fn active_config(
    arg: &str,
    base: &std::path::Path,
) -> Result<std::sync::Arc<knav_kconfig::Config>, String> {
    let arg = arg.trim();
    let path = base.join(arg);
    let from_list = arg.contains('=') && !path.exists();
    let text = if from_list {
        arg.to_string()
    } else {
        // A regular file of bounded size: /dev/zero or a FIFO is an error, not a hang.
        match knav_kconfig::read_file(&path, knav_kconfig::MAX_CONFIG_BYTES) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(knav_kconfig::ReadError::NotFound) => {
                return Err(format!("active_config file not found: {}", path.display()))
            }
            Err(e) => {
                return Err(format!(
                    "active_config {}: {e}; give a .config file or CONFIG_A=y,CONFIG_B=m",
                    path.display()
                ))
            }
        }
    };
    // A server is asked with the same .config again and again: parsed once per content.
    let key = crate::index::codec::hash64(text.as_bytes()) ^ from_list as u64;
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
            .map_err(|e| format!("active_config {}: {e}", path.display()))?
    };
    let config = std::sync::Arc::new(config);
    if cache.len() >= MAX_PARSED_CONFIGS {
        cache.remove(0);
    }
    cache.push((key, config.clone()));
    Ok(config)
}

/// Configurations parsed by this process, by the hash of their text, oldest first.
static PARSED_CONFIGS: std::sync::Mutex<Vec<(u64, std::sync::Arc<knav_kconfig::Config>)>> =
    std::sync::Mutex::new(Vec::new());
/// How many [`PARSED_CONFIGS`] are kept.
const MAX_PARSED_CONFIGS: usize = 4;

/// Answers `ask` from `snap`, one page at a time.
pub fn answer(snap: &Snapshot, page: Page, ask: &Ask) -> Envelope {
    let q = Query::new(snap, page);
    let mut env = match ask {
        Ask::Def { symbol } => query::find_definition(&q, symbol),
        Ask::Refs { symbol, group_by } => query::find_references(&q, symbol, *group_by),
        Ask::Callers { symbol } => query::find_callers(&q, symbol),
        Ask::Callees { symbol } => query::find_callees(&q, symbol),
        Ask::Body {
            symbol,
            max_definitions,
        } => query::get_symbol_body(&q, symbol, *max_definitions),
        Ask::Reach {
            from,
            to,
            max_depth,
        } => query::reachability(&q, from, to, *max_depth),
        Ask::Symbols { file } => query::list_file_symbols(&q, file),
    };
    if let Some(e) = &snap.build_error {
        env.warn(format!(
            "the index's Kbuild and Kconfig part cannot be read ({e}); run `knav index` to rebuild it"
        ));
    }
    // Every error says what to do next: by default, the same call with its arguments fixed;
    // for a file that is not there, finding where the symbol lives instead.
    if env.error.is_some() && env.next_tools.is_empty() {
        env.next_tools = vec![match ask {
            Ask::Symbols { .. } => "find_definition",
            other => other.tool(),
        }];
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

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
