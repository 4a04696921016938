//! `knav cscope`: cscope's line-oriented interface over the index, so that what drives cscope
//! (vim's `:cscope` with `cscopeprg`, emacs xcscope, Neovim's cscope_maps.nvim) drives knav.
//! One-shot `-L -N PATTERN` prints the lines of query N; `-l` reads queries at cscope's `>> `
//! prompt. The answers are the CLI's ([`crate::cli::cscope_run`]), rendered as cscope lines
//! ([`crate::render::cscope_lines`]). Run as a program named `cscope` (a link), it takes
//! cscope's arguments as they are.

use std::ffi::OsString;
use std::io::{BufRead, Write};

use crate::tools::{Order, Tool};

mod args;
mod assign;
mod link;

use args::Options;

/// The command line (`knav refs --group-by line -- NAME`) that asks cscope query `n` for
/// `pattern`; `None` for a query knav does not answer. cscope is one more front end over the
/// CLI's commands: each is read by its tool's own entry ([`crate::tools`]).
fn command_of(n: u8, pattern: &str, fold_case: bool) -> Option<Vec<String>> {
    let fold: &[&str] = if fold_case { &["-i"] } else { &[] };
    let include;
    let (words, pattern): (Vec<&str>, &str) = match n {
        // Query 9 is query 0's lines that assign the name ([`assign`]).
        0 | 9 => (vec!["refs", "--group-by", "line"], pattern),
        1 => (vec!["def"], pattern),
        2 => (vec!["callees"], pattern),
        3 => (vec!["callers"], pattern),
        4 => ([&["grep", "-F"][..], fold].concat(), pattern),
        6 => ([&["grep"][..], fold].concat(), pattern),
        7 => (vec!["files"], pattern),
        8 => {
            include = format!(r#"^\s*#\s*include\s*[<"](.*/)?{}[>"]"#, escaped(pattern));
            (vec!["grep"], include.as_str())
        }
        _ => return None,
    };
    let mut argv: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    argv.push("--".into());
    argv.push(pattern.to_string());
    Some(argv)
}

/// The tool and order of CLI command line `argv` (`refs -- NAME`), read by the tool's entry.
fn order_of(argv: &[String]) -> Result<(&'static Tool, Order), String> {
    let tool = crate::tools::by_command(&argv[0]).ok_or("no such command")?;
    let cmd = tool.cli_command().ok_or("no CLI command")?;
    let m = cmd.try_get_matches_from(argv).map_err(|e| e.to_string())?;
    Ok((tool, tool.from_cli(&m)?))
}

/// `s` with every character a regex gives a meaning to escaped.
fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The cscope lines of query `n` for `pattern`, every page of them. A name the index does not
/// hold, or holds only as a near match, has none (cscope matches names exactly).
fn lines(o: &Options, n: u8, pattern: &str) -> Result<Vec<String>, String> {
    let Some(argv) = command_of(n, pattern, o.fold_case) else {
        return Err(format!(
            "query {n} is not answered by knav (0-4 and 6-9 are)"
        ));
    };
    let (tool, order) = order_of(&argv)?;
    let mut out = Vec::new();
    let mut offset = 0;
    loop {
        let mut env = crate::cli::cscope_run(&asked(o), tool, order.clone(), offset);
        if let Some(e) = env.error.as_deref().filter(|_| env.results.is_none()) {
            return match e.starts_with("no symbol named ") {
                true => Ok(out),
                false => Err(e.to_string()),
            };
        }
        if env.near_match {
            return Ok(out);
        }
        if n == 1 {
            definitions_only(&mut env);
        }
        let mut page = crate::render::cscope_lines(&env);
        if n == 2 {
            // cscope's text column is the call's source line (a callee's result has none).
            with_source_lines(std::path::Path::new(&env.root), &mut page);
        }
        if n == 9 {
            page.retain(|l| {
                l.splitn(4, ' ')
                    .nth(3)
                    .is_some_and(|t| assign::assigns(t, pattern))
            });
        }
        out.extend(page);
        // Every result was asked for: a tool that still pages (find_callees, by fewer) says
        // where its next page starts.
        if !env.truncated || env.limit == 0 || env.limit == crate::query::EVERY {
            // cscope lists a line once for a name (two references on one line are one line).
            out.dedup();
            return Ok(out);
        }
        offset = offset.saturating_add(env.limit);
    }
}

/// cscope's query 1 lists definitions, not prototypes: `env`'s prototypes are left out when it
/// has anything else (a name only declared keeps its declarations).
fn definitions_only(env: &mut crate::envelope::Envelope) {
    if let Some(crate::envelope::Results::Records(records)) = &mut env.results {
        let prototype = |r: &crate::envelope::Record| r.kind.as_deref() == Some("prototype");
        if records.iter().any(|r| !prototype(r)) {
            records.retain(|r| !prototype(r));
        }
    }
}

/// Each `file function line text` line of `lines` with its text the file's own line, read
/// beneath `root` once per file (a line that cannot be read keeps its text).
fn with_source_lines(root: &std::path::Path, lines: &mut [String]) {
    let mut file: Option<(String, Vec<String>)> = None;
    for l in lines.iter_mut() {
        let mut f = l.splitn(4, ' ');
        let (Some(path), Some(function), Some(n)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<usize>() else {
            continue;
        };
        if file.as_ref().is_none_or(|(p, _)| p != path) {
            let text = crate::beneath::open_file(root, path)
                .ok()
                .and_then(|(f, _)| crate::beneath::read_open(f).ok())
                .map(|s| {
                    String::from_utf8_lossy(&s)
                        .lines()
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            file = Some((path.to_string(), text));
        }
        let Some((_, text)) = &file else { continue };
        if let Some(text) = n.checked_sub(1).and_then(|i| text.get(i)) {
            *l = format!("{path} {function} {n} {}", text.trim());
        }
    }
}

/// Runs `knav cscope ARGS`; the exit code.
pub fn main(args: &[OsString]) -> i32 {
    let mut o = match args::parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("knav cscope: {e}");
            return 2;
        }
    };
    if let Some(dir) = &o.install_link {
        return install_link(dir);
    }
    if o.build {
        return match refresh(&o).and_then(|_| placeholder(&o)) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("knav cscope: {e}");
                1
            }
        };
    }
    if let Some((n, pattern)) = o.query.clone() {
        return match lines(&o, n, &pattern) {
            Ok(lines) => {
                // One write per buffer, not per line (stdout is line-buffered).
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                for l in lines {
                    if writeln!(out, "{l}").is_err() {
                        return 0;
                    }
                }
                let _ = out.flush();
                0
            }
            Err(e) => {
                eprintln!("knav cscope: {e}");
                1
            }
        };
    }
    if o.line_mode {
        return prompt(&mut o);
    }
    eprintln!(
        "knav cscope: give -L -N PATTERN (one query), -l (queries at a prompt), -b (refresh the \
         index) or --install-link DIR; no full-screen mode"
    );
    2
}

/// What the CLI is asked with: the tree and the active configuration of `o`.
fn asked(o: &Options) -> crate::cli::CscopeAsk {
    crate::cli::CscopeAsk {
        root: o.root.clone(),
        active_config: o.active_config.clone(),
    }
}

/// The index of the tree brought up to date (`-b`, the prompt's `r`), as `knav index` does.
fn refresh(o: &Options) -> Result<(), String> {
    let (tool, order) = order_of(&["index".to_string()])?;
    match crate::cli::cscope_run(&asked(o), tool, order, 0).error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `-b -f FILE`: an empty FILE where there is none, since cscope_maps.nvim and xcscope look for
/// the database file before they ask (knav's index is under the tree's `.knav`). An existing
/// file is left as it is.
fn placeholder(o: &Options) -> Result<(), String> {
    let Some(file) = &o.database else {
        return Ok(());
    };
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!(
            "-f {}: {e} (cscope's database file, left empty by knav for the plugins that look \
             for it)",
            file.display()
        )),
    }
}

/// `--install-link DIR`; the exit code.
fn install_link(dir: &std::path::Path) -> i32 {
    let knav = match std::env::current_exe() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("knav cscope: cannot tell where this knav is: {e}");
            return 1;
        }
    };
    match link::install(dir, &knav) {
        Ok(link::Installed::Made(link, to)) => {
            println!("{} -> {}", link.display(), to.display());
            0
        }
        Ok(link::Installed::Already(link)) => {
            println!("{} already runs this knav", link.display());
            0
        }
        Err(e) => {
            eprintln!("knav cscope: {e}");
            1
        }
    }
}

/// cscope's `-l` protocol: `>> ` prompt, a query as its number and pattern (`1vfs_read`),
/// `cscope: N lines` then the lines; `c` toggles case folding, `r` rebuilds, `q` quits.
fn prompt(o: &mut Options) -> i32 {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    loop {
        if write!(out, ">> ").and_then(|_| out.flush()).is_err() {
            return 0;
        }
        line.clear();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => return 0,
            Ok(_) => {}
        }
        let line = line.trim_end_matches(['\n', '\r']);
        let mut chars = line.chars();
        let reply = match chars.next() {
            Some('q') => return 0,
            Some('c') => {
                o.fold_case = !o.fold_case;
                Vec::new()
            }
            Some('r') => {
                if let Err(e) = refresh(o) {
                    eprintln!("knav cscope: {e}");
                }
                Vec::new()
            }
            Some(d) if d.is_ascii_digit() => lines(o, d as u8 - b'0', chars.as_str().trim())
                .unwrap_or_else(|e| {
                    eprintln!("knav cscope: {e}");
                    Vec::new()
                }),
            _ => Vec::new(),
        };
        let mut text = format!("cscope: {} lines\n", reply.len());
        for l in reply {
            text.push_str(&l);
            text.push('\n');
        }
        if out.write_all(text.as_bytes()).is_err() {
            return 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_query_number_asks_its_tool() {
        let tool = |n: u8| {
            command_of(n, "x", false)
                .map(|argv| order_of(&argv).map(|(t, _)| t.name))
                .ok_or(())
        };
        assert_eq!(tool(0), Ok(Ok("find_references")));
        assert_eq!(tool(1), Ok(Ok("find_definition")));
        assert_eq!(tool(2), Ok(Ok("find_callees")));
        assert_eq!(tool(3), Ok(Ok("find_callers")));
        assert_eq!(tool(4), Ok(Ok("search_text")));
        assert_eq!(tool(7), Ok(Ok("search_files")));
        assert_eq!(tool(8), Ok(Ok("search_text")));
        assert_eq!(tool(9), Ok(Ok("find_references")));
        assert!(tool(5).is_err());
        // A pattern that starts with a dash is a pattern, not a flag.
        assert_eq!(
            command_of(4, "-EINVAL", true).unwrap(),
            ["grep", "-F", "-i", "--", "-EINVAL"]
        );
        let include = command_of(8, "a.h", false).unwrap();
        assert!(include[2].contains(r"a\.h"), "{include:?}");
    }
}
