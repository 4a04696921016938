//! An answer's MCP words put as the command line says them, for the CLI's text: the tools it
//! suggests next become `knav` commands with the name asked (`next: knav body vfs_read`), and
//! in its error, warning and message, tool names become commands and argument names flags
//! (`path_prefix` → `--path-prefix`, `group_by=line` → `--group-by line`). MCP and the JSON
//! envelope keep tool and argument names: they are what a client calls.

use std::collections::HashSet;

use crate::envelope::Envelope;
use crate::tools::{Hint, TOOLS};

/// `knav COMMAND` for MCP tool `name`, or None for a tool the CLI does not have.
fn command_of(name: &str) -> Option<&'static str> {
    TOOLS
        .iter()
        .find(|t| t.name == name)
        .and_then(|t| t.command)
}

/// `env` as the CLI's text: rendered with its prose in CLI words ([`for_cli`]), the page
/// footer's flag ([`footer`]) and the `next:` line naming commands with their arguments
/// ([`next_line`]; `asked`: the value of one of the command's arguments, by its id). `cmd`
/// builds the CLI's clap command, asked for only when the prose may name an argument.
pub fn text(
    mut env: Envelope,
    asked: &dyn Fn(&str) -> Option<String>,
    cmd: impl FnOnce() -> clap::Command,
) -> String {
    let next = next_line(&env, asked);
    for_cli(&mut env, cmd);
    let mut out = footer(crate::render::text(&env));
    out.push_str(next.as_deref().unwrap_or_default());
    out
}

/// The CLI's `next:` line for `env`'s next tools, each a command with its argument where it
/// is known (the answer's subject, the name asked, a reach's ends, a grep hit's function, a
/// result's file or name); None when there are none.
fn next_line(env: &Envelope, asked: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if env.next_tools.is_empty() {
        return None;
    }
    let hints: Vec<String> = env
        .next_tools
        .iter()
        .filter_map(|t| match command_of(t) {
            // A chain from the name needs its other end, which only the user knows.
            Some(c) if hint_of(t) == Hint::Chain && env.tool != *t => {
                Some(match argument(env, "find_callees", asked) {
                    Some(a) => format!(
                        "knav {c} {} TARGET",
                        crate::index::printable::shell_word(&a)
                    ),
                    None => format!("knav {c} FROM TARGET"),
                })
            }
            Some(c) => match argument(env, t, asked) {
                Some(a) => Some(format!(
                    "knav {c} {}",
                    crate::index::printable::shell_word(&a)
                )),
                // `knav body` alone is a usage error, not a hint.
                None if hint_of(t) == Hint::Symbol => None,
                None => Some(format!("knav {c}")),
            },
            None => Some(format!("{t} (over MCP)")),
        })
        .collect();
    (!hints.is_empty()).then(|| format!("next: {}\n", hints.join(", ")))
}

/// The argument next tool `tool` takes after `env`, when it is known.
fn argument(env: &Envelope, tool: &str, asked: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    use crate::envelope::Results;
    if env.tool == "reachability" {
        // Where the chain starts, and where it should end.
        return match tool {
            "find_callees" => asked("from_symbol"),
            "find_callers" => asked("to_symbol"),
            _ => None,
        };
    }
    match hint_of(tool) {
        Hint::FirstFile => match &env.results {
            Some(Results::Files(f)) => f.first().map(|f| f.path.clone()),
            Some(Results::Records(r)) => r.first().map(|r| r.path.clone()),
            _ => None,
        },
        Hint::FileName => {
            // A file that is not there: its name, to find where it is.
            let file = asked("file_path")?;
            let name = file
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(&file);
            (!name.is_empty()).then(|| name.to_string())
        }
        Hint::Symbol => symbol(env, asked),
        Hint::Bare | Hint::Chain => None,
    }
}

/// The symbol a `next:` hint names after `env`: the answer's subject, the name asked, a grep
/// hit's function, a result's name.
fn symbol(env: &Envelope, asked: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    use crate::envelope::Results;
    let valid = |s: &String| crate::query::valid_name(s);
    env.subject
        .clone()
        .or_else(|| asked("symbol"))
        .or_else(|| asked("pattern").filter(valid))
        .or_else(|| match &env.results {
            // A grep hit's function; a file's first definition.
            Some(Results::Hits(h)) => h
                .iter()
                .find_map(|h| Some(h.enclosing.as_ref()?.symbol.clone())),
            Some(Results::Records(r)) => r.first().map(|r| r.symbol.clone()),
            // A reviewed change's first definition.
            Some(Results::Review(r)) => r.definitions.first().map(|d| d.symbol.clone()),
            _ => None,
        })
}

/// The argument a `next:` hint gives tool `tool` ([`crate::tools::Tool::hint`]).
fn hint_of(tool: &str) -> Hint {
    crate::tools::by_name(tool).map_or(Hint::Bare, |t| t.hint)
}

/// `text` with tool names as `knav` commands and the argument names in `flags` as `--flags`
/// (`name=value` as `--name value`). Only whole words change.
pub fn rewrite(text: &str, flags: &HashSet<String>) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let word = b[i].is_ascii_alphanumeric() || b[i] == b'_';
        let starts_word = word
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'-'));
        if !starts_word {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        let end = b[i..]
            .iter()
            .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .map_or(b.len(), |k| i + k);
        let w = &text[i..end];
        if let Some(c) = command_of(w) {
            out.push_str(&format!("knav {c}"));
        } else if flags.contains(w) && (w.contains('_') || b.get(end) == Some(&b'=')) {
            out.push_str("--");
            out.push_str(&w.replace('_', "-"));
            if b.get(end) == Some(&b'=') {
                out.push(' ');
                i = end + 1;
                continue;
            }
        } else {
            out.push_str(w);
        }
        i = end;
    }
    out
}

/// The rendered text's page footer (`[1-100 of 250 · offset=100 for more]`) with the flag the
/// CLI takes.
fn footer(text: String) -> String {
    if text.contains(" · offset=") {
        text.replace(" · offset=", " · --offset ")
    } else {
        text
    }
}

/// `env` made ready for the CLI's text: its error, warning and message rewritten
/// ([`rewrite`]) with the long flags of `cmd` and its subcommands, and its next tools taken
/// out ([`text`] prints [`next_line`] instead).
fn for_cli(env: &mut Envelope, cmd: impl FnOnce() -> clap::Command) {
    let prose = [&env.error, &env.warning, &env.message];
    if prose
        .iter()
        .any(|p| p.as_deref().is_some_and(|s| s.contains(['_', '='])))
    {
        let cmd = cmd();
        let mut flags = HashSet::new();
        let mut add = |c: &clap::Command| {
            for a in c.get_arguments() {
                if let Some(l) = a.get_long() {
                    flags.insert(l.replace('-', "_"));
                }
            }
        };
        add(&cmd);
        for sub in cmd.get_subcommands() {
            add(sub);
        }
        for s in [&mut env.error, &mut env.warning, &mut env.message]
            .into_iter()
            .flatten()
        {
            *s = rewrite(s, &flags);
        }
    }
    env.next_tools.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags() -> HashSet<String> {
        ["path_prefix", "group_by", "limit", "max_depth"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn mcp_words_in_prose_become_commands_and_flags() {
        let f = flags();
        assert_eq!(
            rewrite(
                "12220 references: grouped by file; pass path_prefix to narrow, or group_by=line",
                &f
            ),
            "12220 references: grouped by file; pass --path-prefix to narrow, or --group-by line"
        );
        assert_eq!(
            rewrite("use find_references with path_prefix to narrow it", &f),
            "use knav refs with --path-prefix to narrow it"
        );
        // Words that are not arguments, and plain words that are, stay.
        assert_eq!(
            rewrite("no limit on my_path_prefix; limit=5 is fine", &f),
            "no limit on my_path_prefix; --limit 5 is fine"
        );
        assert_eq!(
            rewrite("max_depth must be 1..20", &f),
            "--max-depth must be 1..20"
        );
    }
}
