//! replace_symbol and insert_symbol (MCP only): rewrite one definition in place, or add one
//! before or after an anchor definition, separated by exactly one blank line.
//!
//! The definition's lines come from the index, so nothing is quoted back to find them. The new
//! file is made in memory and checked ([`check`]) before anything reaches disk: the source must
//! be balanced (braces, parentheses, `#if`/`#endif`), the file must stay so, and ctags or the
//! scanner must find the named (for an insert, a new) definition on its lines; otherwise the
//! edit is refused naming the line, and the file is left byte for byte as it was. The file must
//! lie inside the root lexically and by its real path, and is replaced atomically (a temporary
//! file beside it, its mode kept, then a rename).

pub mod check;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use knav_ctags::Kind;

use crate::envelope::{Envelope, Results};
use crate::index::store::Snapshot;
use crate::query::{Page, Query};

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

/// `file` (as a call gives it) as a path inside `root`, checked lexically (no `..`, nothing
/// absolute outside the root) and by its real path (no symbolic link leading out of the root,
/// none at all on the way: the index never follows one). `(relative, path)`.
pub fn resolve(root: &Path, file: &str) -> Result<(String, PathBuf), String> {
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
    let path = root.join(rel);
    let real = std::fs::canonicalize(&path).map_err(|e| format!("{file}: {e}"))?;
    if !real.starts_with(root) {
        return Err(format!(
            "{file} resolves through a symbolic link to {}, outside the root {root_s}",
            real.display()
        ));
    }
    if real != path {
        return Err(format!(
            "{file} is reached through a symbolic link (it is {}); edit the file by its own path",
            real.display()
        ));
    }
    Ok((rel.to_string(), path))
}

/// Byte offset where 1-based `line` starts in `text` (its length past the last line).
fn line_start(text: &[u8], line: u32) -> usize {
    if line <= 1 {
        return 0;
    }
    memchr::memchr_iter(b'\n', text)
        .nth(line as usize - 2)
        .map_or(text.len(), |i| i + 1)
}

/// Line `n` (1-based) of `text`, without its newline.
fn line_of(text: &[u8], n: u32) -> &[u8] {
    let s = line_start(text, n);
    let e = memchr::memchr(b'\n', &text[s..]).map_or(text.len(), |i| s + i);
    &text[s..e]
}

/// The first line of a definition named on line `line`: earlier lines that carry its type or
/// attributes (`static int __init` above `foo(void)`) belong to it.
fn decl_start(text: &[u8], line: u32) -> u32 {
    let mut start = line;
    while start > 1 {
        let prev = String::from_utf8_lossy(line_of(text, start - 1));
        let p = prev.trim();
        let continues = !p.is_empty()
            && !p.starts_with(['#', '/', '*', '}'])
            && !p.ends_with([';', '{', '}', ')', ',', '\\'])
            && !p.ends_with("*/");
        if !continues {
            break;
        }
        start -= 1;
    }
    start
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

/// The lines `(first, last)` of `symbol`'s one definition in file `rel`.
fn locate(snap: &Snapshot, rel: &str, symbol: &str) -> Result<(u32, u32, Kind), String> {
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
        [f] => {
            let end = q.macro_shape(f).0.unwrap_or(f.def.line).max(f.def.line);
            Ok((f.def.line, end, f.def.kind))
        }
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

/// `source` as lines to splice in: leading and trailing blank lines dropped, one final newline.
fn normalized(source: &str) -> String {
    let s = source.trim_end();
    let s = s.trim_start_matches(['\n', '\r']);
    format!("{s}\n")
}

/// Applies `edit` to its file under `snap`'s root, or refuses it leaving the file unchanged.
pub fn apply(snap: &Snapshot, edit: &Edit, ctags_args: &[String]) -> Result<Written, String> {
    let root = &snap.root;
    let (rel, path) = resolve(root, edit.file())?;
    if snap.find_file(&rel).is_none() {
        return Err(format!(
            "{rel} is not an indexed C source of {}; only indexed .c, .h and .S files are edited",
            root.display()
        ));
    }
    let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("{rel}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{rel} is not a regular file"));
    }
    let old = std::fs::read(&path).map_err(|e| format!("cannot read {rel}: {e}"))?;
    let (symbol, source) = match edit {
        Edit::Replace { symbol, source, .. } => (symbol, source),
        Edit::Insert { anchor, source, .. } => (anchor, source),
    };
    let (line, end, kind) = locate(snap, &rel, symbol)?;
    let first = if kind == Kind::Macro {
        line
    } else {
        decl_start(&old, line)
    };
    let src = normalized(source);
    if let Some((at, what)) = check::imbalance(src.as_bytes()) {
        return Err(format!(
            "refused: line {at} of source: {what}; {rel} is unchanged"
        ));
    }
    // After a definition comes after its `EXPORT_SYMBOL(name);` line too.
    let end = match edit {
        Edit::Insert { before: false, .. } if exports(line_of(&old, end + 1), symbol) => end + 1,
        _ => end,
    };
    let (start, stop) = (line_start(&old, first), line_start(&old, end + 1));
    let mut new: Vec<u8> = Vec::with_capacity(old.len() + src.len() + 2);
    let (new_first, what) = match edit {
        Edit::Replace { .. } => {
            new.extend_from_slice(&old[..start]);
            new.extend_from_slice(src.as_bytes());
            new.extend_from_slice(&old[stop..]);
            (first, format!("replaced lines {first}-{end} of {rel}"))
        }
        Edit::Insert { before: false, .. } => {
            // anchor, one blank line, the new definition, one blank line, what followed.
            let rest = &old[stop..];
            let rest = &rest[rest.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
            new.extend_from_slice(&old[..stop]);
            if !old[..stop].ends_with(b"\n") {
                new.push(b'\n');
            }
            new.push(b'\n');
            let at = new.iter().filter(|b| **b == b'\n').count() as u32 + 1;
            new.extend_from_slice(src.as_bytes());
            if !rest.is_empty() {
                new.push(b'\n');
                new.extend_from_slice(rest);
            }
            (at, format!("inserted after {symbol} (line {end}) in {rel}"))
        }
        Edit::Insert { before: true, .. } => {
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
                new.extend_from_slice(b"\n\n");
            }
            let at = new.iter().filter(|b| **b == b'\n').count() as u32 + 1;
            new.extend_from_slice(src.as_bytes());
            new.push(b'\n');
            new.extend_from_slice(&old[start..]);
            (
                at,
                format!("inserted before {symbol} (line {first}) in {rel}"),
            )
        }
    };
    let new_end = new_first + src.matches('\n').count() as u32 - 1;
    if check::imbalance(&old).is_none() {
        if let Some((at, what)) = check::imbalance(&new) {
            return Err(format!(
                "refused: the edited {rel} would be unbalanced at its line {at}: {what}; {rel} \
                 is unchanged"
            ));
        }
    }
    let base = path
        .file_name()
        .map_or("file.c".into(), |n| n.to_string_lossy().into_owned());
    let names = check::defined_names(&new, &base, ctags_args, new_first, new_end)?;
    let name = match edit {
        Edit::Replace { symbol, .. } => names.iter().find(|(_, n)| n == symbol).map(|_| symbol),
        Edit::Insert { .. } => names.first().map(|(_, n)| n),
    };
    let Some(name) = name.cloned() else {
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
    write_atomically(&path, &old, &new, &meta)?;
    Ok(Written {
        file: rel,
        name,
        line: new_first,
        end_line: new_end,
        what,
    })
}

/// Replaces `path` (read as `old`) with `new`: a temporary file beside it with its mode, then a
/// rename. Refused when the file changed since it was read.
fn write_atomically(
    path: &Path,
    old: &[u8],
    new: &[u8],
    meta: &std::fs::Metadata,
) -> Result<(), String> {
    let shown = path.display();
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.knav-edit-{}", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(new)?;
        f.set_permissions(std::fs::Permissions::from_mode(meta.permissions().mode()))?;
        f.sync_all()?;
        if std::fs::read(path)? != old {
            return Err(std::io::Error::other(
                "it changed while the edit was checked; read it again",
            ));
        }
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write {shown}: {e}; it is unchanged"));
    }
    Ok(())
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
    fn a_path_must_stay_inside_the_root_lexically() {
        let root = std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).unwrap();
        let fixture = "tests/fixtures/minikernel/fs/read_write.c";
        assert_eq!(resolve(&root, fixture).unwrap().0, fixture);
        let abs = root.join(fixture).display().to_string();
        assert_eq!(resolve(&root, &abs).unwrap().0, fixture);
        for bad in ["../x.c", "fs/../../x.c", "/etc/passwd", ""] {
            let e = resolve(&root, bad).unwrap_err();
            assert!(e.contains("is outside the root"), "{bad}: {e}");
        }
    }
}
