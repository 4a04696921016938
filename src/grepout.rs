//! rg's plain output of `knav grep`, so that scripts and editors can run knav where they ran
//! rg: `path:line:text` (as `rg -n --no-heading`), `path:line:col:text` (`--vimgrep`), `path`
//! (`-l`) and `path:count` (`-c`), with `-C` context lines as rg prints them (`path-line-text`,
//! groups apart by `--`), every hit, no page, written when stdout is not a terminal or when
//! asked with `--no-heading` or `--vimgrep`.
//!
//! Paths are printed as rg prints them: relative to the directory knav was run in (the root
//! with `--root`), and below a path asked for, that path as typed joined with the rest
//! (`../mm/highmem.c`, `./fs/open.c`), none when the only path asked for is a file; files come
//! in rg's `--sort path` order, path by path asked (rg without it prints in the order its
//! threads finish); each line is the file's own bytes, its `\r` kept, a newline added to a
//! last line without one.

use std::io::{IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

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

/// A path asked for, as typed, and the root-relative path it names (None: outside the root,
/// which the search refuses).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Place {
    typed: Vec<u8>,
    names: Option<Vec<u8>>,
}

impl Place {
    /// How rg prints `path` (root-relative bytes) when this place covers it: the path typed
    /// joined with the rest, the path typed for the file itself; None when it does not.
    fn printed(&self, path: &[u8]) -> Option<Vec<u8>> {
        let names = self.names.as_deref()?;
        let rest = match names {
            [] => Some(path),
            n if path == n => None,
            n => Some(path.strip_prefix(n)?.strip_prefix(b"/")?),
        };
        let mut out = self.typed.clone();
        if let Some(rest) = rest {
            if !out.is_empty() && !out.ends_with(b"/") {
                out.push(b'/');
            }
            out.extend_from_slice(rest);
        }
        Some(out)
    }
}

/// The root-relative path (bytes, `/`-separated) that `typed`, asked in `below` (the
/// directory knav ran in, root-relative), names; None outside `root`.
fn names(root: &Path, below: &Path, typed: &str) -> Option<Vec<u8>> {
    let typed = Path::new(typed);
    let from = match typed.strip_prefix(root) {
        Ok(rest) => rest.components().collect::<Vec<_>>(),
        Err(_) if typed.is_absolute() => return None,
        Err(_) => below.components().chain(typed.components()).collect(),
    };
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in from {
        match c {
            Component::Normal(n) => parts.push(n),
            Component::ParentDir => {
                parts.pop()?;
            }
            _ => {}
        }
    }
    Some(parts.join(std::ffi::OsStr::new("/")).as_bytes().to_vec())
}

/// rg's plain output of a `knav grep`, as its flags and stdout ask for it.
#[derive(Clone)]
pub struct Plain {
    style: Style,
    pattern: Pattern,
    /// The paths asked for, as typed.
    asked: Vec<String>,
    /// Where rg's paths are printed from ([`Plain::placed`]): each path asked for, or the
    /// directory knav ran in when none was.
    places: Vec<Place>,
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
        Some(Plain {
            style,
            pattern: g.pattern.clone(),
            asked: g.paths.clone(),
            places: Vec::new(),
            context: g.context,
            max_count: g.max_count.is_some(),
        })
    }

    /// This output for a search of the tree at `root` run in its directory `below`
    /// (root-relative; empty at the root or with `--root`): the paths asked for are read from
    /// there, and the paths printed relative to it, as rg prints them.
    pub fn placed(&self, root: &Path, below: &Path) -> Plain {
        let places = match self.asked.is_empty() {
            true => vec![Place {
                typed: Vec::new(),
                names: Some(below.as_os_str().as_bytes().to_vec()),
            }],
            false => self
                .asked
                .iter()
                .map(|a| Place {
                    typed: a.as_bytes().to_vec(),
                    names: names(root, below, a),
                })
                .collect(),
        };
        Plain {
            places,
            ..self.clone()
        }
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
        let named = match self.asked.as_slice() {
            [_] if !matches!(self.style, Style::Vimgrep | Style::Files) => {
                let names = self.places.first().and_then(|p| p.names.as_deref());
                names.is_none_or(|n| !tree.join(std::ffi::OsStr::from_bytes(n)).is_file())
            }
            _ => true,
        };
        let files = self.printed(&groups);
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
        for chunk in files.chunks(CHUNK) {
            use rayon::prelude::*;
            let text: Vec<Vec<u8>> = chunk
                .par_iter()
                .map(|(g, path)| self.file_text(g, path, named, &opener, &matcher))
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

    /// The files of `groups` (in root-relative path order) in the order rg prints them, each
    /// with its path as printed: place by place, a file as often as places cover it.
    fn printed<'g>(&self, groups: &'g [FileGroup]) -> Vec<(&'g FileGroup, Vec<u8>)> {
        let root = [Place {
            typed: Vec::new(),
            names: Some(Vec::new()),
        }];
        let places = match self.places.is_empty() {
            true => &root[..],
            false => &self.places,
        };
        let mut out = Vec::with_capacity(groups.len());
        for place in places {
            for g in groups {
                let path = crate::pathname::to_path(&g.path);
                if let Some(p) = place.printed(path.as_os_str().as_bytes()) {
                    out.push((g, p));
                }
            }
        }
        out
    }

    /// What file `g` prints: its path or count, or each of its lines as rg prints them.
    fn file_text(
        &self,
        g: &FileGroup,
        path: &[u8],
        named: bool,
        opener: &Opener,
        matcher: &grep_regex::RegexMatcher,
    ) -> Vec<u8> {
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
    fn a_path_asked_for_is_printed_as_typed_joined_with_the_rest() {
        let (root, below) = (Path::new("/t"), Path::new("fs"));
        let place = |typed: &str| Place {
            typed: typed.as_bytes().to_vec(),
            names: names(root, below, typed),
        };
        let shown = |typed: &str, path: &str| {
            place(typed)
                .printed(path.as_bytes())
                .map(|p| String::from_utf8(p).unwrap())
        };
        assert_eq!(
            shown("../mm", "mm/highmem.c").as_deref(),
            Some("../mm/highmem.c")
        );
        assert_eq!(
            shown("../mm/", "mm/highmem.c").as_deref(),
            Some("../mm/highmem.c")
        );
        assert_eq!(shown(".", "fs/open.c").as_deref(), Some("./open.c"));
        assert_eq!(shown("..", "fs/open.c").as_deref(), Some("../fs/open.c"));
        assert_eq!(shown("open.c", "fs/open.c").as_deref(), Some("open.c"));
        assert_eq!(shown("/t/mm", "mm/a.c").as_deref(), Some("/t/mm/a.c"));
        assert_eq!(shown("ext2", "fs/ext2x/a.c"), None);
        assert_eq!(shown("../mm", "fs/open.c"), None);
        assert_eq!(names(root, below, "../.."), None);
        assert_eq!(names(root, below, "/elsewhere"), None);
    }

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
