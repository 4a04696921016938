//! replace_symbol and insert_symbol (MCP only): rewrite one definition in place, or add one
//! before or after an anchor definition, separated by exactly one blank line.
//!
//! The definition's lines come from the index, so nothing is quoted back to find them; its
//! bytes (module `bounds`) are cut from them, and other code that shares its first or last line
//! is kept byte for byte, or the edit refused naming the line. The new file is made in memory
//! and checked ([`check`]) before anything reaches disk: the source must be balanced (braces,
//! parentheses, `#if`/`#endif`), the file must stay so, and ctags or the scanner must find the
//! named (for an insert, a new) definition on its lines; otherwise the edit is refused naming
//! the line, and the file is left byte for byte as it was. The file must lie inside the root
//! lexically and by its real path, and is replaced atomically (a temporary file beside it, its
//! mode kept, then a rename).

mod bounds;
pub mod check;

use std::ffi::{CStr, CString};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path};

use knav_index::tree::beneath::{Dir, Root, Unread};

use knav_ctags::Kind;

use crate::envelope::{Envelope, Results};
use crate::query::{Page, Query};
use knav_index::store::Snapshot;

/// The longest `source` an edit takes, in bytes.
pub const MAX_SOURCE: usize = 1 << 20;

/// One symbol edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// replace_symbol.
    Replace {
        /// The file, relative to the root.
        file: String,
        /// The definition to rewrite.
        symbol: String,
        /// The whole new definition.
        source: String,
    },
    /// insert_symbol.
    Insert {
        /// The file, relative to the root.
        file: String,
        /// The definition to insert next to.
        anchor: String,
        /// Above the anchor (else below it).
        before: bool,
        /// The whole new definition.
        source: String,
    },
}

impl Edit {
    /// The tool name.
    pub fn tool(&self) -> &'static str {
        match self {
            Edit::Replace { .. } => "replace_symbol",
            Edit::Insert { .. } => "insert_symbol",
        }
    }

    fn file(&self) -> &str {
        match self {
            Edit::Replace { file, .. } | Edit::Insert { file, .. } => file,
        }
    }
}

/// A written edit: where the new definition is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The file, relative to the root.
    pub file: String,
    /// The name the new definition defines.
    pub name: String,
    /// Its first line.
    pub line: u32,
    /// Its last line.
    pub end_line: u32,
    /// What was done, in one sentence.
    pub what: String,
}

/// `file` (as a call gives it) as a path relative to `root`, checked lexically (no `..`,
/// nothing absolute outside the root). Links are refused when the file is opened
/// ([`knav_index::tree::beneath`]), on every component, at every step of the edit.
pub fn resolve(root: &Path, file: &str) -> Result<String, String> {
    let root_s = root.display().to_string();
    let rel = file
        .strip_prefix(&root_s)
        .filter(|r| r.is_empty() || r.starts_with('/'))
        .map_or(file, |r| r.trim_start_matches('/'));
    let rel = rel.trim_start_matches("./");
    let lexical_ok = !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !lexical_ok {
        return Err(format!(
            "{file} is outside the root {root_s}; give a path relative to the root, without '..'"
        ));
    }
    // `fs/./a.c` and `fs//a.c` are `fs/a.c`.
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    Ok(parts.join("/"))
}

/// Why `rel` could not be opened below the root, for an edit's answer.
fn unopened(rel: &str, e: Unread) -> String {
    match e {
        Unread::Changed(what) => format!(
            "{rel} is refused ({what}: knav opens only regular files below the root, and never \
             through a link); edit the file by its own path; it is unchanged"
        ),
        Unread::Io(e) => format!("cannot open {rel}: {e}"),
    }
}

use bounds::{line_at, line_start};

/// Line `n` (1-based) of `text`, without its newline.
fn line_of(text: &[u8], n: u32) -> &[u8] {
    let s = line_start(text, n);
    let e = memchr::memchr(b'\n', &text[s..]).map_or(text.len(), |i| s + i);
    &text[s..e]
}

/// The code of `line`, trimmed: comments closed on it and a `//` comment left out, literals
/// kept (`int n; /* count */` is `int n;`, `char *u = "http://x";` stays whole). `None` when the
/// line is not all code and whole comments: it opens a comment it does not close, closes one
/// opened above it, or holds a literal it does not close.
fn code_of(line: &[u8]) -> Option<String> {
    let mut code = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        match (line[i], line.get(i + 1).copied()) {
            (b'/', Some(b'/')) => break,
            (b'/', Some(b'*')) => {
                i = knav_c::lex::block_comment_rest(line, i + 2)?;
                code.push(b' ');
            }
            (b'*', Some(b'/')) => return None,
            (b'"' | b'\'', _) => {
                let (end, closed) = knav_c::lex::literal_end(line, i);
                if !closed {
                    return None;
                }
                code.extend_from_slice(&line[i..end]);
                i = end;
            }
            (b, _) => {
                code.push(b);
                i += 1;
            }
        }
    }
    Some(String::from_utf8_lossy(&code).trim().to_string())
}

/// The first line of a definition named on line `line`: earlier lines that carry its type or
/// attributes (`static int __init` above `foo(void)`) belong to it. A line that ends a
/// statement, a block or a directive, is a comment or part of one, or continues a directive
/// (`\t128` under `#define MAX \`), does not (also when a comment follows its code:
/// `int calls; // count`).
fn decl_start(text: &[u8], line: u32) -> u32 {
    let mut start = line;
    while start > 1 {
        let above = line_of(text, start - 1);
        let raw = String::from_utf8_lossy(above).trim().to_string();
        let continues = code_of(above).is_some_and(|p| {
            !p.is_empty()
                && !raw.starts_with(['#', '/', '*', '}'])
                && !p.ends_with([';', '{', '}', ')', ',', '\\'])
        });
        let in_directive = start > 2 && knav_c::lex::continues(line_of(text, start - 2));
        if !continues || in_directive {
            break;
        }
        start -= 1;
    }
    start
}

/// The first line of the comment block that ends on the line just above `first` (`/* … */`
/// whose first line starts with `/*`, or a run of `//` lines); `first` when there is none.
fn comment_above(text: &[u8], first: u32) -> u32 {
    let trimmed = |n: u32| String::from_utf8_lossy(line_of(text, n)).trim().to_string();
    if first <= 1 {
        return first;
    }
    let last = trimmed(first - 1);
    if last.starts_with("//") {
        let mut start = first - 1;
        while start > 1 && trimmed(start - 1).starts_with("//") {
            start -= 1;
        }
        return start;
    }
    if !last.ends_with("*/") {
        return first;
    }
    let mut at = first - 1;
    loop {
        let l = trimmed(at);
        if let Some(open) = l.find("/*") {
            // The comment's first line: a comment only, not code before it.
            return if open == 0 { at } else { first };
        }
        if at == 1 {
            return first;
        }
        at -= 1;
    }
}

/// True when `source` (trimmed) opens with a comment: it brings the definition's own.
fn starts_with_comment(source: &str) -> bool {
    let s = source.trim_start();
    s.starts_with("/*") || s.starts_with("//")
}

/// True when `line` is `EXPORT_SYMBOL…(name);`.
fn exports(line: &[u8], name: &str) -> bool {
    let line = String::from_utf8_lossy(line);
    let line = line.trim();
    line.starts_with("EXPORT_SYMBOL")
        && line.split_once('(').is_some_and(|(_, rest)| {
            rest.trim_start()
                .strip_prefix(name)
                .is_some_and(|r| r.trim_start().starts_with(')'))
        })
}

/// The name's line, the last line (when the index has one) and the kind of `symbol`'s one
/// definition in file `rel`.
fn locate(snap: &Snapshot, rel: &str, symbol: &str) -> Result<(u32, Option<u32>, Kind), String> {
    let q = Query::new(snap, Page::default());
    let found: Vec<_> = q
        .definitions(symbol)
        .into_iter()
        .filter(|f| {
            q.path(f.seg, f.def.file) == rel
                && !matches!(
                    f.def.kind,
                    Kind::Entry | Kind::Member | Kind::Enumerator | Kind::Local | Kind::Label
                )
        })
        .collect();
    if let Some(f) = found.iter().find(|f| f.def.via.is_some()) {
        return Err(format!(
            "{symbol} in {rel}:{} is made by the macro {}; edit the invocation's lines with \
             your editor",
            f.def.line,
            f.def.via.unwrap_or_default()
        ));
    }
    // A prototype in the same file as its body is not the definition asked for.
    let bodies: Vec<_> = found
        .iter()
        .filter(|f| !f.def.kind.is_declaration())
        .collect();
    let chosen: Vec<_> = if bodies.is_empty() {
        found.iter().collect()
    } else {
        bodies
    };
    match chosen.as_slice() {
        [] => Err(format!(
            "{rel} has no definition of {symbol} in the index; list_file_symbols shows what it \
             defines"
        )),
        [f] => Ok((f.def.line, q.macro_shape(f).0, f.def.kind)),
        several => {
            let lines: Vec<String> = several.iter().map(|f| f.def.line.to_string()).collect();
            Err(format!(
                "{rel} defines {symbol} {} times (lines {}); edit the file itself to choose one",
                several.len(),
                lines.join(", ")
            ))
        }
    }
}

/// `source` as lines to splice in: leading and trailing blank lines dropped, one final line
/// ending, every line ending `nl` (the file's).
fn normalized(source: &str, nl: &str) -> String {
    let s = source.trim_end();
    let s = s.trim_start_matches(['\n', '\r']);
    let s = s.replace("\r\n", "\n");
    let mut out = if nl == "\n" { s } else { s.replace('\n', nl) };
    out.push_str(nl);
    out
}

/// The line ending of `text`: `\r\n` when its first line ends so, else `\n`.
fn line_ending(text: &[u8]) -> &'static str {
    match memchr::memchr(b'\n', text) {
        Some(i) if i > 0 && text[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// Applies `edit` to its file under `snap`'s root, or refuses it leaving the file unchanged.
pub fn apply(snap: &Snapshot, edit: &Edit, ctags_args: &[String]) -> Result<Written, String> {
    let rel = resolve(&snap.root, edit.file())?;
    let root = Root::open(&snap.root).map_err(|e| format!("{}: {e}", snap.root.display()))?;
    let (dir, name) = root.parent_of(&rel).map_err(|e| unopened(&rel, e))?;
    let Some((seg, id)) = snap.find_file(&rel) else {
        if dir.is_link(&name) {
            return Err(unopened(&rel, Unread::Changed("a symbolic link")));
        }
        return Err(format!(
            "{rel} is not an indexed C source of {}; only indexed .c, .h and .S files are edited",
            snap.root.display()
        ));
    };
    let (file, meta) = dir.open_file(&name).map_err(|e| unopened(&rel, e))?;
    let old = knav_index::tree::beneath::read_open(file)
        .map_err(|e| format!("cannot read {rel}: {e}"))?
        .to_vec();
    // The definition's lines come from the index: they hold only for the bytes it indexed.
    if knav_index::hash64(&old) != snap.segments[seg].file_stat(id).hash {
        return Err(format!(
            "{rel} changed since it was indexed, so its definitions' lines may have moved; run \
             update_index and try again; it is unchanged"
        ));
    }
    let (symbol, source) = match edit {
        Edit::Replace { symbol, source, .. } => (symbol, source),
        Edit::Insert { anchor, source, .. } => (anchor, source),
    };
    if let Some((at, what)) = check::hidden_char(source) {
        return Err(format!(
            "refused: line {at} of source holds {what}, which would make {rel} binary or hide \
             text; {rel} is unchanged"
        ));
    }
    let (line, end, kind) = locate(snap, &rel, symbol)?;
    let nl = line_ending(&old);
    let src = normalized(source, nl);
    if let Some((at, what)) = check::imbalance(src.as_bytes()) {
        return Err(format!(
            "refused: line {at} of source: {what}; {rel} is unchanged"
        ));
    }
    let lexed = bounds::Lexed::new(&old);
    let first = if kind == Kind::Macro {
        line
    } else {
        decl_start(&old, line)
    };
    let d = bounds::Indexed {
        name: symbol,
        first,
        line,
        end,
        kind,
    };
    let spliced = splice(edit, &old, &src, nl, (&d, &lexed), &rel)
        .map_err(|e| format!("refused: {e}; {rel} is unchanged"))?;
    if check::imbalance(&old).is_none() {
        if let Some((at, what)) = check::imbalance(&spliced.text) {
            return Err(format!(
                "refused: the edited {rel} would be unbalanced at its line {at}: {what}; {rel} \
                 is unchanged"
            ));
        }
    }
    let (new_first, new_end) = (
        spliced.first,
        spliced.first + src.matches('\n').count() as u32 - 1,
    );
    let base = String::from_utf8_lossy(name.to_bytes()).into_owned();
    let names = check::defined_names(&spliced.text, &base, ctags_args, new_first, new_end)?;
    let name_found = match edit {
        Edit::Replace { symbol, .. } => names.iter().find(|(_, n)| n == symbol).map(|_| symbol),
        Edit::Insert { .. } => names.first().map(|(_, n)| n),
    };
    if let Some(range) = spliced.replaced {
        let others = others_of(snap, (seg, id), &old, symbol);
        keeps_others(&lexed, range, &others, (&names, &src)).map_err(|lost| {
            format!(
                "refused: {} would also remove {lost}, which the source does not define; bring \
                 them in the source, or first give them a declaration of their own on a line of \
                 their own (for example `struct target var;` after `struct target {{…}};`); \
                 {rel} is unchanged",
                spliced.what.replacen("replaced", "replacing", 1)
            )
        })?;
    }
    let Some(defined) = name_found.cloned() else {
        let found: Vec<&str> = names.iter().map(|(_, n)| n.as_str()).collect();
        let wanted = match edit {
            Edit::Replace { symbol, .. } => format!("define {symbol}"),
            Edit::Insert { .. } => "define anything".to_string(),
        };
        return Err(format!(
            "refused: the source at line {new_first} does not {wanted} as ctags and knav read \
             it (they find: {}); {rel} is unchanged",
            if found.is_empty() {
                "nothing".to_string()
            } else {
                found.join(", ")
            }
        ));
    };
    let at = Target {
        root: &root,
        rel: &rel,
        dir: &dir,
        name: &name,
        meta: &meta,
    };
    write_atomically(&at, &old, &spliced.text)?;
    Ok(Written {
        file: rel,
        name: defined,
        line: new_first,
        end_line: new_end,
        what: spliced.what,
    })
}

/// A file's new text, with where the new definition starts and what was done; for a replace,
/// the bytes of the old text that were replaced.
struct Spliced {
    text: Vec<u8>,
    first: u32,
    what: String,
    replaced: Option<(usize, usize)>,
}

/// The other definitions of file `(seg, id)` and the `#define`s of its text `old`: name and
/// line; members, enumerators, locals, labels and `symbol` itself left out.
fn others_of(
    snap: &Snapshot,
    (seg, id): (usize, u32),
    old: &[u8],
    symbol: &str,
) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = snap.segments[seg]
        .file_defs(id)
        .into_iter()
        .filter(|d| {
            d.name != symbol
                && !matches!(
                    d.kind,
                    Kind::Member | Kind::Enumerator | Kind::Local | Kind::Label | Kind::Entry
                )
        })
        .map(|d| (d.name.to_string(), d.line))
        .collect();
    for m in knav_c::scan::scan(old).macros {
        let at = old.get(m.start as usize..m.start as usize + m.len as usize);
        let name = String::from_utf8_lossy(at.unwrap_or_default());
        if name != symbol {
            out.push((name.into_owned(), m.line));
        }
    }
    out
}

/// `Err(what of range the source does not define again)`: a definition of `others` that
/// `names` lacks, or a declarator after the closing brace of a nested definition (`} u;` in
/// `struct s {`) that `src` does not declare after its own.
fn keeps_others(
    lexed: &bounds::Lexed<'_>,
    range: (usize, usize),
    others: &[(String, u32)],
    (names, src): (&[(u32, String)], &str),
) -> Result<(), String> {
    let mut lost: Vec<String> = bounds::within(lexed, range, others)
        .into_iter()
        .filter(|(n, _)| !names.iter().any(|(_, m)| m == n))
        .map(|(n, l)| format!("{n} (line {l})"))
        .collect();
    lost.extend(
        bounds::nested_declarators(lexed, range)
            .into_iter()
            .filter(|(n, _)| !bounds::declarator_in(src.as_bytes(), n))
            .map(|(n, l)| {
                format!("{n} (line {l}, declared after the nested definition's closing brace)")
            }),
    );
    if lost.is_empty() {
        Ok(())
    } else {
        Err(lost.join(", "))
    }
}

/// Why `body` cannot go between the code kept before and after it on the lines of `b`: a
/// directive must begin its line, and a `//` comment or a directive at its end would take in
/// the code after it.
fn joins(old: &[u8], body: &str, b: bounds::Bounds) -> Result<(), String> {
    let quoted = |at: usize| {
        let l = line_at(old, at);
        (
            l,
            String::from_utf8_lossy(line_of(old, l)).trim().to_string(),
        )
    };
    if b.head_kept && body.trim_start().starts_with('#') {
        let (l, text) = quoted(b.start);
        return Err(format!(
            "the source begins with a directive, which must begin its line, but line {l} \
             (`{text}`) holds other code before it; put that code on a line of its own first"
        ));
    }
    if b.tail_kept && bounds::Lexed::new(body.as_bytes()).open_at_end() {
        let (l, text) = quoted(b.end);
        return Err(format!(
            "the source ends in a `//` comment or a directive, which would take in the code after \
             it on line {l} (`{text}`); end the source with code, or put that code on a line of \
             its own first"
        ));
    }
    Ok(())
}

/// `old` with the definition `d` replaced by `src`, or `src` inserted next to it, one blank
/// line apart; other code on the definition's first and last lines is kept byte for byte, or
/// the edit refused saying why (a sentence without "refused").
fn splice(
    edit: &Edit,
    old: &[u8],
    src: &str,
    nl: &str,
    (d, lexed): (&bounds::Indexed<'_>, &bounds::Lexed<'_>),
    rel: &str,
) -> Result<Spliced, String> {
    let symbol = d.name;
    let nl_b = nl.as_bytes();
    let mut new: Vec<u8> = Vec::with_capacity(old.len() + src.len() + 4);
    let lines_in = |b: &[u8]| memchr::memchr_iter(b'\n', b).count() as u32;
    let (at, what) = match edit {
        Edit::Replace { .. } => {
            let b = bounds::bounds(lexed, d)?;
            let mut start = b.start;
            // A source that brings its own comment replaces the definition's.
            if !b.head_kept && starts_with_comment(src) {
                start = line_start(old, comment_above(old, line_at(old, b.start)));
            }
            let body = if b.tail_kept {
                src.strip_suffix(nl).unwrap_or(src)
            } else {
                src
            };
            joins(old, body, b)?;
            new.extend_from_slice(&old[..start]);
            new.extend_from_slice(body.as_bytes());
            new.extend_from_slice(&old[b.end..]);
            let first = line_at(old, start);
            let last = line_at(old, b.end.saturating_sub(1).max(start));
            return Ok(Spliced {
                text: new,
                first,
                what: format!("replaced lines {first}-{last} of {rel}"),
                replaced: Some((start, b.end)),
            });
        }
        Edit::Insert { before: false, .. } => {
            let last = bounds::bounds(lexed, d).map_or(d.end.unwrap_or(d.line).max(d.line), |b| {
                line_at(old, b.end.saturating_sub(1))
            });
            // After a definition comes after its `EXPORT_SYMBOL(name);` line too.
            let end = if exports(line_of(old, last + 1), symbol) {
                last + 1
            } else {
                last
            };
            let stop = line_start(old, end + 1);
            if let Some(why) = bounds::splits(lexed, stop) {
                return Err(format!(
                    "inserting after {symbol} would go after its line {end}, but {why}; put \
                     that code on lines of its own first"
                ));
            }
            // anchor, one blank line, the new definition, one blank line, what followed.
            let rest = &old[stop..];
            let rest = &rest[rest.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
            new.extend_from_slice(&old[..stop]);
            if !old[..stop].ends_with(b"\n") {
                new.extend_from_slice(nl_b);
            }
            new.extend_from_slice(nl_b);
            let at = lines_in(&new) + 1;
            new.extend_from_slice(src.as_bytes());
            if !rest.is_empty() {
                new.extend_from_slice(nl_b);
                new.extend_from_slice(rest);
            }
            (at, format!("inserted after {symbol} (line {end}) in {rel}"))
        }
        Edit::Insert { before: true, .. } => {
            // The line the declaration starts on (`typedef struct {` above `} name;`).
            let first = bounds::bounds(lexed, d).map_or(d.first, |b| line_at(old, b.start));
            let start = line_start(old, first);
            if let Some(why) = bounds::splits(lexed, start) {
                return Err(format!(
                    "inserting before {symbol} would go before its line {first}, but {why}; \
                     put {symbol} on lines of its own first"
                ));
            }
            // what preceded, one blank line, the new definition, one blank line, the anchor.
            let head = &old[..start];
            let kept = head.len()
                - head
                    .iter()
                    .rev()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
            new.extend_from_slice(&head[..kept]);
            if kept > 0 {
                new.extend_from_slice(nl_b);
                new.extend_from_slice(nl_b);
            }
            let at = lines_in(&new) + 1;
            new.extend_from_slice(src.as_bytes());
            new.extend_from_slice(nl_b);
            new.extend_from_slice(&old[start..]);
            (
                at,
                format!("inserted before {symbol} (line {first}) in {rel}"),
            )
        }
    };
    Ok(Spliced {
        text: new,
        first: at,
        what,
        replaced: None,
    })
}

/// The file an edit replaces: as it was opened when the edit began.
struct Target<'a> {
    root: &'a Root,
    rel: &'a str,
    /// Its directory, opened when the edit began.
    dir: &'a Dir,
    /// Its name in `dir`.
    name: &'a CStr,
    /// Its metadata then.
    meta: &'a std::fs::Metadata,
}

/// Replaces the file of `at` (read as `old`) with `new`: a temporary file in its directory with
/// its owner, group and mode, then a rename in that directory. Refused when the directory is no
/// longer where it was (moved, or swapped for a link) or the file changed since it was read.
fn write_atomically(at: &Target<'_>, old: &[u8], new: &[u8]) -> Result<(), String> {
    let rel = at.rel;
    let unchanged = |why: String| format!("cannot write {rel}: {why}; it is unchanged");
    // The directory as the path reaches it now must be the one opened at the start.
    let (dir, name) = at.root.parent_of(rel).map_err(|e| unopened(rel, e))?;
    let (was, is) = (at.dir.identity(), dir.identity());
    if name.as_c_str() != at.name || was.is_err() || was.ok() != is.ok() {
        return Err(unchanged(
            "its directory was moved or replaced while the edit was checked; read it again".into(),
        ));
    }
    let (file, meta) = dir.open_file(&name).map_err(|e| unopened(rel, e))?;
    let now = knav_index::tree::beneath::read_open(file).map_err(|e| unchanged(e.to_string()))?;
    if (meta.dev(), meta.ino()) != (at.meta.dev(), at.meta.ino()) || *now != *old {
        return Err(unchanged(
            "it changed while the edit was checked; read it again".into(),
        ));
    }
    let tmp = scratch_name(&name);
    let mut f = dir
        .create_new(&tmp, 0o600)
        .map_err(|e| unchanged(format!("cannot make a temporary file beside it: {e}")))?;
    let written = (|| {
        f.write_all(new)?;
        keep_owner(&f, &meta).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "its owner {}:{} cannot be kept by this user ({e})",
                    meta.uid(),
                    meta.gid()
                ),
            )
        })?;
        // A write clears set-user-ID and set-group-ID; so does an edit.
        f.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o1777))?;
        f.sync_all()?;
        dir.rename(&tmp, &name)
    })();
    if let Err(e) = written {
        let _ = dir.remove(&tmp);
        return Err(unchanged(e.to_string()));
    }
    Ok(())
}

/// Gives `f` the owner and group of `meta` when they differ from what it was made with.
fn keep_owner(f: &std::fs::File, meta: &std::fs::Metadata) -> std::io::Result<()> {
    let made = f.metadata()?;
    if (made.uid(), made.gid()) == (meta.uid(), meta.gid()) {
        return Ok(());
    }
    std::os::unix::fs::fchown(f, Some(meta.uid()), Some(meta.gid()))
}

/// A temporary name beside `name` that no one can guess: `.NAME.knav-edit-PID-RANDOM`.
fn scratch_name(name: &CStr) -> CString {
    let mut random = [0u8; 8];
    // SAFETY: getrandom writes at most `random.len()` bytes into `random`.
    let got = unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), 0) };
    let r = if got == random.len() as isize {
        u64::from_ne_bytes(random)
    } else {
        knav_index::hash64(&knav_index::tree::walk::now_ns().to_ne_bytes())
    };
    let mut bytes = b".".to_vec();
    // Room for the suffix in a 255-byte name.
    bytes.extend_from_slice(&name.to_bytes()[..name.to_bytes().len().min(200)]);
    bytes.extend_from_slice(format!(".knav-edit-{}-{r:016x}", std::process::id()).as_bytes());
    // The name had no NUL; the suffix has none.
    CString::new(bytes).unwrap_or_default()
}

/// The answer to a written edit, from the index refreshed after it: the new definition's
/// record with its line range.
pub fn answer(snap: &Snapshot, tool: &'static str, w: &Written) -> Envelope {
    let q = Query::new(snap, Page::default());
    let mut env = q.envelope(tool);
    let found = q.definitions(&w.name).into_iter().find(|f| {
        q.path(f.seg, f.def.file) == w.file && (w.line..=w.end_line).contains(&f.def.line)
    });
    let mut records = Vec::new();
    match found {
        Some(f) => {
            let mut r = q.def_record(&f);
            r.end_line = Some(w.end_line);
            records.push(r);
        }
        None => env.warn(format!(
            "the index does not show {} in {} yet; run update_index",
            w.name, w.file
        )),
    }
    env.total = records.len() as u64;
    env.results = Some(Results::Records(records));
    env.message = Some(format!(
        "{}; {} is now at lines {}-{}",
        w.what, w.name, w.line, w.end_line
    ));
    env.next_tools = vec!["get_symbol_body", "find_callers"];
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_starts_at_the_lines_that_carry_its_type() {
        let text = b"int a;\n\nstatic int __init\nfoo(void)\n{\n}\n/* c */\nint\nbar(void)\n";
        assert_eq!(decl_start(text, 4), 3);
        assert_eq!(decl_start(text, 9), 8, "not into a comment");
        assert_eq!(decl_start(text, 1), 1);
        assert_eq!(line_of(text, 4), b"foo(void)");
        assert_eq!(line_start(text, 3), 8);
        assert_eq!(line_start(text, 99), text.len());
        assert!(exports(b"EXPORT_SYMBOL_GPL( foo );", "foo"));
        assert!(!exports(b"EXPORT_SYMBOL(foobar);", "foo"));
    }

    #[test]
    fn a_definition_does_not_start_above_a_line_that_ends_in_a_comment() {
        let text = b"int call_count; // number of calls\nint target_one(void)\n{\n}\n\
                     int n; /* count */\nstatic int /* why */\nbar(void)\n";
        assert_eq!(decl_start(text, 2), 2);
        assert_eq!(
            decl_start(text, 7),
            6,
            "a type line with a comment inside belongs"
        );
        assert_eq!(
            code_of(b"  int n; /* a */ /* b */ ").as_deref(),
            Some("int n;")
        );
        assert_eq!(code_of(b"static int // x").as_deref(), Some("static int"));
        assert_eq!(
            code_of(b"static const char u[] = \"http://x\";").as_deref(),
            Some("static const char u[] = \"http://x\";")
        );
        assert_eq!(code_of(b"   ever take */"), None);
        assert_eq!(code_of(b"int a; /* open"), None);
    }

    #[test]
    fn a_definition_does_not_take_a_line_whose_comment_or_string_holds_slashes() {
        // From review: each of these lines above `foo` was deleted by a replace.
        for above in [
            "static int debug; /* see https://example.com/debug */",
            "static const char url[] = \"http://example.com\";",
            "static int limit = 4;\t/* the most we\n\t\t\t   ever take */",
            "#define MAX_BAR \\\n\t128",
        ] {
            let text = format!("{above}\nint foo(void)\n{{\n}}\n");
            let line = text.matches('\n').count() as u32 - 2;
            assert_eq!(decl_start(text.as_bytes(), line), line, "{above:?}");
        }
    }

    #[test]
    fn the_comment_above_a_definition_is_found_whole() {
        let text = b"int a;\n/**\n * doc\n */\nint f(void)\n// one\n// two\nint g;\nint x; /* t */\nint h;\n";
        assert_eq!(comment_above(text, 5), 2);
        assert_eq!(comment_above(text, 8), 6);
        assert_eq!(
            comment_above(text, 10),
            10,
            "a comment after code is the code's"
        );
        assert_eq!(comment_above(text, 2), 2);
    }

    #[test]
    fn source_takes_the_files_line_ending() {
        assert_eq!(
            normalized("\nint a;\r\nint b;\n\n", "\n"),
            "int a;\nint b;\n"
        );
        assert_eq!(
            normalized("int a;\r\nint b;\n", "\r\n"),
            "int a;\r\nint b;\r\n"
        );
        assert_eq!(line_ending(b"a\r\nb\n"), "\r\n");
        assert_eq!(line_ending(b"a\nb\r\n"), "\n");
        let hidden = check::hidden_char;
        assert_eq!(hidden("int a;\n\tint b;\x0c\r\n"), None);
        assert_eq!(
            hidden("int a;\nint\0 b;"),
            Some((2, "the control byte 0x00".into()))
        );
        assert_eq!(hidden("\x7f"), Some((1, "the control byte 0x7f".into())));
        assert_eq!(
            hidden("a;\rb;"),
            Some((1, "a carriage return without a line feed".into()))
        );
        assert_eq!(
            hidden("/* x */\nif (admin\u{202e} ) {}"),
            Some((2, "the bidirectional control U+202E".into()))
        );
    }

    #[test]
    fn a_path_must_stay_inside_the_root_lexically() {
        let root = std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).unwrap();
        let fixture = "tests/fixtures/minikernel/fs/read_write.c";
        assert_eq!(resolve(&root, fixture).unwrap(), fixture);
        let abs = root.join(fixture).display().to_string();
        assert_eq!(resolve(&root, &abs).unwrap(), fixture);
        for bad in ["../x.c", "fs/../../x.c", "/etc/passwd", ""] {
            let e = resolve(&root, bad).unwrap_err();
            assert!(e.contains("is outside the root"), "{bad}: {e}");
        }
    }
}
