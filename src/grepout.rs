//! rg's plain output of `knav grep`, so that scripts and editors can run knav where they ran
//! rg: `path:line:text` (as `rg -n --no-heading`), `path:line:col:text` (`--vimgrep`), `path`
//! (`-l`) and `path:count` (`-c`), with `-C` context lines as rg prints them (`path-line-text`,
//! groups apart by `--`), every hit, no page, written when stdout is not a terminal or when
//! asked with `--no-heading` or `--vimgrep`.
//!
//! Paths are root-relative, as rg prints them when run at the root without paths (and without
//! the path when the only path asked for is a file, as rg does); files come in rg's
//! `--sort path` order (rg without it prints in the order its threads finish); each line is
//! the file's own bytes, its `\r` kept, a newline added to a last line without one.

use std::io::{IsTerminal, Write};
use std::path::Path;

use crate::envelope::{Envelope, FileGroup, Results};
use crate::index::text::search::{Opener, Pattern};
use crate::query::GrepMode;
use crate::render::Format;
use crate::request::Ask;
use crate::tools::{Order, Tool};

/// What each hit is printed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    /// `path:line:text` (`rg -n --no-heading`).
    Lines,
    /// `path:line:col:text`, one line per match (`rg --vimgrep`).
    Vimgrep,
    /// `path` (`rg -l`).
    Files,
    /// `path:count` (`rg -c`).
    Count,
}

/// Files whose lines are read and formatted at once, in parallel, before they are written.
const CHUNK: usize = 256;

/// rg's plain output of a `knav grep`, as its flags and stdout ask for it.
pub struct Plain {
    style: Style,
    pattern: Pattern,
    /// The one path asked for when it names a file: rg then prints no path.
    single_file: Option<String>,
    /// Lines of context either side (`-C`): `path-line-text`, groups apart by `--`.
    context: u32,
    /// `-m` was given: a line of the context after the last match counted that matches is
    /// printed as a match, as rg does.
    max_count: bool,
}

impl Plain {
    /// The plain output `tool`'s command with `m` asks for: a `knav grep` in text format with
    /// `--vimgrep` or `--no-heading`, or with stdout not a terminal and no `--heading`.
    pub fn asked(tool: &Tool, m: &clap::ArgMatches, format: Format) -> Option<Plain> {
        if tool.name != "search_text" || format != Format::Text {
            return None;
        }
        let flag = |id: &str| m.try_get_one::<bool>(id).ok().flatten() == Some(&true);
        let vimgrep = flag("vimgrep");
        if !vimgrep && (flag("heading") || !flag("no_heading") && std::io::stdout().is_terminal()) {
            return None;
        }
        let Ok(Order::Ask(Ask::Grep(g))) = tool.from_cli(m) else {
            return None;
        };
        let style = match g.mode {
            GrepMode::Files => Style::Files,
            GrepMode::Count => Style::Count,
            _ if vimgrep => Style::Vimgrep,
            _ => Style::Lines,
        };
        let single_file = match g.paths.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        };
        Some(Plain {
            style,
            pattern: g.pattern.clone(),
            single_file,
            context: g.context,
            max_count: g.max_count.is_some(),
        })
    }

    /// `order` asking for every hit, unpaged ([`GrepMode::Every`]).
    pub fn every(order: Order) -> Order {
        match order {
            Order::Ask(Ask::Grep(mut g)) => {
                g.mode = GrepMode::Every;
                Order::Ask(Ask::Grep(g))
            }
            o => o,
        }
    }

    /// `env` with its hits written as `plain` asks (see [`Plain::write`]); as it is without.
    pub fn written(plain: Option<&Plain>, mut env: Envelope, tree: &Path) -> Envelope {
        if let Some(p) = plain {
            p.write(&mut env, tree);
        }
        env
    }

    /// Writes the hits of `env` (a [`GrepMode::Every`] answer for the tree at `tree`) to
    /// stdout and takes them out of it; a closed pipe ends the writing quietly.
    pub fn write(&self, env: &mut Envelope, tree: &Path) {
        let Some(Results::Groups(groups)) = env.results.take() else {
            return;
        };
        // rg names the file on every line unless the one path asked for is a file (and
        // always with --vimgrep and -l).
        let named = match &self.single_file {
            Some(p) if !matches!(self.style, Style::Vimgrep | Style::Files) => {
                !tree.join(p).is_file()
            }
            _ => true,
        };
        let matcher = match self.pattern.matcher() {
            Ok(m) => m,
            Err(e) => {
                env.error = Some(format!("bad pattern: {e}"));
                return;
            }
        };
        let opener = Opener::new(tree);
        let out = std::io::stdout();
        // Asked for on a terminal: its control characters escaped, as every answer's are (rg
        // would print them raw); piped: the file's bytes.
        let terminal = out.is_terminal();
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out.lock());
        let mut any = false;
        for chunk in groups.chunks(CHUNK) {
            use rayon::prelude::*;
            let text: Vec<Vec<u8>> = chunk
                .par_iter()
                .map(|g| self.file_text(g, named, &opener, &matcher))
                .collect();
            // With context, rg sets each file's lines apart from the last file's by `--`.
            let apart = self.context > 0 && matches!(self.style, Style::Lines | Style::Vimgrep);
            let written = text.iter().filter(|t| !t.is_empty()).try_for_each(|t| {
                if std::mem::replace(&mut any, true) && apart {
                    out.write_all(b"--\n")?;
                }
                match terminal {
                    true => {
                        let t = String::from_utf8_lossy(t);
                        out.write_all(crate::index::printable::shown(&t).as_bytes())
                    }
                    false => out.write_all(t),
                }
            });
            if written.is_err() {
                return;
            }
        }
        let _ = out.flush();
    }

    /// What file `g` prints: its path or count, or each of its lines as rg prints them.
    fn file_text(
        &self,
        g: &FileGroup,
        named: bool,
        opener: &Opener,
        matcher: &grep_regex::RegexMatcher,
    ) -> Vec<u8> {
        let path = crate::index::pathname::to_path(&g.path);
        let path = path.as_os_str().as_encoded_bytes();
        let mut out = Vec::new();
        let prefix = |out: &mut Vec<u8>| {
            if named {
                out.extend_from_slice(path);
                out.push(b':');
            }
        };
        match self.style {
            Style::Files => {
                out.extend_from_slice(path);
                out.push(b'\n');
                return out;
            }
            Style::Count => {
                prefix(&mut out);
                out.extend_from_slice(format!("{}\n", g.lines.len()).as_bytes());
                return out;
            }
            Style::Lines | Style::Vimgrep => {}
        }
        let mut buf = Vec::new();
        let Some(bytes) = opener.read_with(&g.path, &mut buf) else {
            return out;
        };
        let shown = with_context(&g.lines, self.context);
        let mut last: Option<u32> = None;
        for (n, line, whole) in lines_at(&bytes, &shown) {
            if self.context > 0 && last.is_some_and(|l| n > l + 1) {
                out.extend_from_slice(b"--\n");
            }
            last = Some(n);
            let matched = || {
                g.lines.binary_search(&n).is_ok()
                    || self.max_count
                        && grep_matcher::Matcher::is_match(matcher, whole).unwrap_or(false)
            };
            if self.context > 0 && !matched() {
                // A context line: `path-line-text`.
                if named {
                    out.extend_from_slice(path);
                    out.push(b'-');
                }
                out.extend_from_slice(format!("{n}-").as_bytes());
                out.extend_from_slice(line);
                out.push(b'\n');
                continue;
            }
            let before = out.len();
            if self.style == Style::Vimgrep {
                // rg's --vimgrep: each match starting before the end of the line with its
                // terminator; a line matched only at its very end is printed without a column.
                let _ = grep_matcher::Matcher::find_iter(matcher, whole, |m| {
                    if m.start() >= whole.len() {
                        return false;
                    }
                    prefix(&mut out);
                    out.extend_from_slice(format!("{n}:{}:", m.start() + 1).as_bytes());
                    out.extend_from_slice(line);
                    out.push(b'\n');
                    true
                });
            }
            if out.len() == before {
                prefix(&mut out);
                out.extend_from_slice(format!("{n}:").as_bytes());
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        }
        out
    }
}

/// The lines `hits` (ascending) and `context` lines either side of each, ascending, once
/// each (those past the end are dropped when read).
fn with_context(hits: &[u32], context: u32) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(hits.len());
    for &m in hits {
        let from = m
            .saturating_sub(context)
            .max(out.last().map_or(1, |l| l + 1));
        out.extend(from..=m.saturating_add(context));
    }
    out
}

/// A line: its number, its bytes without the `\n`, and with it (when it has one).
type Line<'b> = (u32, &'b [u8], &'b [u8]);

/// The lines numbered `wanted` (1-based, ascending) of `bytes`.
fn lines_at<'b>(bytes: &'b [u8], wanted: &[u32]) -> Vec<Line<'b>> {
    let mut found = Vec::with_capacity(wanted.len());
    let (mut line, mut at) = (1u32, 0usize);
    for &w in wanted {
        while line < w {
            match memchr::memchr(b'\n', &bytes[at..]) {
                Some(k) => at += k + 1,
                None => return found,
            }
            line += 1;
        }
        // Past a last newline is no line.
        if at == bytes.len() {
            return found;
        }
        let (end, whole) = match memchr::memchr(b'\n', &bytes[at..]) {
            Some(k) => (at + k, at + k + 1),
            None => (bytes.len(), bytes.len()),
        };
        found.push((w, &bytes[at..end], &bytes[at..whole]));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_is_no_line_past_a_last_newline() {
        assert_eq!(lines_at(b"a\n", &[1, 2]), vec![(1, &b"a"[..], &b"a\n"[..])]);
        assert_eq!(lines_at(b"", &[1]), vec![]);
    }

    #[test]
    fn context_lines_are_merged_and_start_at_line_one() {
        assert_eq!(with_context(&[1, 3, 9], 1), vec![1, 2, 3, 4, 8, 9, 10]);
        assert_eq!(with_context(&[2, 5], 0), vec![2, 5]);
    }

    #[test]
    fn lines_at_finds_each_line_without_its_newline_and_a_last_line_without_one() {
        let text = b"a\nbb\r\n\nlast";
        assert_eq!(
            lines_at(text, &[1, 2, 3, 4]),
            vec![
                (1, &b"a"[..], &b"a\n"[..]),
                (2, &b"bb\r"[..], &b"bb\r\n"[..]),
                (3, &b""[..], &b"\n"[..]),
                (4, &b"last"[..], &b"last"[..])
            ]
        );
        assert_eq!(
            lines_at(text, &[2, 9]),
            vec![(2, &b"bb\r"[..], &b"bb\r\n"[..])]
        );
    }
}
