//! The kernel's `MAINTAINERS` file: which subsystem a path belongs to.
//!
//! Each entry is a title line followed by `X:\tvalue` fields; knav reads the `F:` (files) and
//! `X:` (excluded files) patterns as `scripts/get_maintainer.pl` does: a trailing `/` covers the
//! directory and everything below it; a pattern without a wildcard names a file or a directory;
//! a pattern with `*`, `?` or `[…]` matches paths of its own depth only (`drivers/net/*` is the
//! files of `drivers/net`, not below), each wildcard within one path component. `N:` (regex)
//! fields are not read. Of the entries whose `F:` matches a path and whose `X:` does not, the
//! most specific wins: the pattern with the most components, then the most literal bytes, then
//! the entry first in the file.
//!
//! A parse is kept per tree in memory, by the file's size and mtime, so a server parses it once
//! per change.

use knav_index::NameMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Bytes of `MAINTAINERS` read at most (the kernel's is about 800 KB).
const MAX_BYTES: u64 = 16 << 20;

/// One `F:` or `X:` pattern.
#[derive(Debug)]
struct Pattern {
    /// The entry it belongs to.
    entry: u32,
    /// `X:`: the entry does not cover what this matches.
    exclude: bool,
    /// The pattern, a trailing `/` dropped.
    text: Box<str>,
    /// Its components.
    depth: usize,
    /// What it matches below its own depth: a trailing `/` or a literal path (a directory).
    below: bool,
    /// Specificity: components, then literal bytes.
    score: (u32, u32),
}

/// The entries of a `MAINTAINERS` file, ready to match paths.
#[derive(Debug, Default)]
pub struct Maintainers {
    /// Entry titles, in file order.
    titles: Vec<String>,
    /// Patterns by their literal leading components joined with `/` (`""` for `*/`).
    by_prefix: NameMap<Box<str>, Vec<Pattern>>,
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

impl Maintainers {
    /// Parses the text of a `MAINTAINERS` file; lines it does not understand are skipped.
    pub fn parse(text: &str) -> Maintainers {
        let mut m = Maintainers::default();
        let mut current: Option<u32> = None;
        for line in text.lines() {
            let field = line.as_bytes().get(..2).filter(|b| {
                b[0].is_ascii_uppercase() && b[1] == b':' && line[2..].starts_with([' ', '\t'])
            });
            if field.is_none() {
                current = match line.trim() {
                    "" => None,
                    // A title: a line that is not indented (the header's text becomes titles
                    // of entries without patterns, which match nothing).
                    t if !line.starts_with([' ', '\t']) => {
                        m.titles.push(t.to_string());
                        Some(m.titles.len() as u32 - 1)
                    }
                    _ => current,
                };
                continue;
            }
            let (Some(entry), kind) = (current, line.as_bytes()[0]) else {
                continue;
            };
            if kind != b'F' && kind != b'X' {
                continue;
            }
            let value = line[2..].trim();
            if let Some(p) = Self::pattern(entry, kind == b'X', value) {
                // The components before the first one with a wildcard.
                let literal = match p.text.find(['*', '?', '[']) {
                    Some(w) => p.text[..w].rfind('/').map_or("", |s| &p.text[..s]),
                    None => &p.text,
                };
                match m.by_prefix.get_mut(literal) {
                    Some(v) => v.push(p),
                    None => {
                        m.by_prefix.insert(literal.into(), vec![p]);
                    }
                }
            }
        }
        m
    }

    fn pattern(entry: u32, exclude: bool, value: &str) -> Option<Pattern> {
        let value = value.trim_start_matches("./");
        let dir = value.ends_with('/');
        let text = value.trim_end_matches('/');
        if text.is_empty() || text.split('/').any(|c| c.is_empty() || c == ".") {
            return None;
        }
        let depth = text.split('/').count();
        let literal = text.bytes().filter(|b| !b"*?[]/".contains(b)).count() as u32;
        Some(Pattern {
            entry,
            exclude,
            below: dir || !has_glob(value),
            score: (depth as u32, literal),
            text: text.into(),
            depth,
        })
    }

    /// The number of entries with at least one pattern.
    pub fn entries(&self) -> usize {
        let mut seen: Vec<u32> = self.by_prefix.values().flatten().map(|p| p.entry).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }

    /// The title of the most specific entry covering root-relative `path`.
    pub fn subsystem(&self, path: &str) -> Option<&str> {
        let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        let mut hits: Vec<(u32, bool, (u32, u32))> = Vec::new();
        let mut key = String::new();
        for depth in 0..=comps.len() {
            if depth > 0 {
                if depth > 1 {
                    key.push('/');
                }
                key.push_str(comps[depth - 1]);
            }
            for p in self.by_prefix.get(key.as_str()).into_iter().flatten() {
                if p.matches(&comps) {
                    hits.push((p.entry, p.exclude, p.score));
                }
            }
        }
        let excluded = |e: u32| hits.iter().any(|&(x, ex, _)| ex && x == e);
        hits.iter()
            .filter(|&&(e, ex, _)| !ex && !excluded(e))
            .max_by(|a, b| a.2.cmp(&b.2).then(b.0.cmp(&a.0)))
            .map(|&(e, _, _)| self.titles[e as usize].as_str())
    }
}

impl Pattern {
    fn matches(&self, comps: &[&str]) -> bool {
        let depth_ok = if self.below {
            comps.len() >= self.depth
        } else {
            comps.len() == self.depth
        };
        depth_ok
            && self
                .text
                .split('/')
                .zip(comps)
                .all(|(p, c)| glob_component(p.as_bytes(), c.as_bytes()))
    }
}

/// Whether one path component matches one pattern component (`*`, `?`, `[abc]`, `[a-z]`,
/// `[!a]`).
fn glob_component(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|k| glob_component(&p[1..], &s[k..])),
        Some(b'?') => !s.is_empty() && glob_component(&p[1..], &s[1..]),
        Some(b'[') => {
            let Some(end) = p.iter().skip(2).position(|&b| b == b']').map(|e| e + 2) else {
                return s.first() == Some(&b'[') && glob_component(&p[1..], &s[1..]);
            };
            let Some(&c) = s.first() else { return false };
            let (negate, set) = match p[1] {
                b'!' | b'^' => (true, &p[2..end]),
                _ => (false, &p[1..end]),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    hit |= set[i] <= c && c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != negate && glob_component(&p[end + 1..], &s[1..])
        }
        Some(&b) => s.first() == Some(&b) && glob_component(&p[1..], &s[1..]),
    }
}

/// The top directory of a root-relative path (`fs` for `fs/read_write.c`; `.` for a file at
/// the top).
pub fn top_dir(path: &str) -> &str {
    match path.split_once('/') {
        Some((top, _)) => top,
        None => ".",
    }
}

/// Parses kept per tree: `(root, size, mtime, parse)`, the last few asked for.
type Cache = Vec<(PathBuf, u64, std::time::SystemTime, Arc<Maintainers>)>;
static PARSED: Mutex<Cache> = Mutex::new(Vec::new());
/// How many trees' parses are kept.
const MAX_PARSED: usize = 4;

/// The `MAINTAINERS` file at the top of `root`, parsed (once per content by this process);
/// `Ok(None)` when the tree has none. It is opened without following a symbolic link.
pub fn for_root(root: &Path) -> Result<Option<Arc<Maintainers>>, String> {
    use knav_index::tree::beneath::Unread;
    let (file, meta) = match knav_index::tree::beneath::open_file(root, "MAINTAINERS") {
        Ok(f) => f,
        Err(Unread::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(Unread::Io(e)) => return Err(format!("{}/MAINTAINERS: {e}", root.display())),
        Err(Unread::Changed(what)) => {
            return Err(format!(
                "{}/MAINTAINERS is {what}; subsystems are read from a regular file only",
                root.display()
            ))
        }
    };
    let stamp = (meta.len(), meta.modified().unwrap_or(std::time::UNIX_EPOCH));
    let mut cache = PARSED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, _, _, m)) = cache
        .iter()
        .find(|(r, size, mtime, _)| r == root && (*size, *mtime) == stamp)
    {
        return Ok(Some(m.clone()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}/MAINTAINERS: {e}", root.display()))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!(
            "{}/MAINTAINERS is larger than {} MiB; the kernel's is under 1 MiB",
            root.display(),
            MAX_BYTES >> 20
        ));
    }
    let parsed = Arc::new(Maintainers::parse(&String::from_utf8_lossy(&bytes)));
    cache.retain(|(r, ..)| r != root);
    if cache.len() >= MAX_PARSED {
        cache.remove(0);
    }
    cache.push((root.to_path_buf(), stamp.0, stamp.1, parsed.clone()));
    Ok(Some(parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
List of maintainers
===================

Descriptions of section entries:

\tF: *Files* and directories wildcard patterns.

ABC DRIVER
M:\tSomeone <a@b>
F:\tdrivers/abc/
F:\tinclude/linux/abc*.h

FILESYSTEMS (VFS and infrastructure)
F:\tfs/*
F:\tinclude/linux/fs.h

EXT4
F:\tfs/ext4
X:\tfs/ext4/fast_commit.c

READ WRITE
F:\tfs/read_write.c

THE REST
F:\t*
F:\t*/
";

    #[test]
    fn the_most_specific_entry_wins() {
        let m = Maintainers::parse(TEXT);
        assert_eq!(m.entries(), 5);
        let s = |p| m.subsystem(p);
        assert_eq!(s("fs/read_write.c"), Some("READ WRITE"));
        assert_eq!(s("fs/open.c"), Some("FILESYSTEMS (VFS and infrastructure)"));
        // `fs/*` covers fs/'s own files, not those below.
        assert_eq!(s("fs/ext4/inode.c"), Some("EXT4"));
        assert_eq!(s("fs/xfs/xfs_file.c"), Some("THE REST"));
        // X: takes the file out of EXT4.
        assert_eq!(s("fs/ext4/fast_commit.c"), Some("THE REST"));
        assert_eq!(s("drivers/abc/sub/x.c"), Some("ABC DRIVER"));
        assert_eq!(s("include/linux/abc_def.h"), Some("ABC DRIVER"));
        assert_eq!(s("include/linux/abc/def.h"), Some("THE REST"));
        assert_eq!(s("Makefile"), Some("THE REST"));
        assert_eq!(Maintainers::parse("").subsystem("fs/x.c"), None);
    }

    #[test]
    fn wildcards_stay_within_a_component() {
        assert!(glob_component(b"r8169*", b"r8169_main.c"));
        assert!(glob_component(b"*ab8500*", b"x_ab8500.c"));
        assert!(glob_component(b"ad1889.?", b"ad1889.c"));
        assert!(glob_component(b"[abc]x", b"bx"));
        assert!(!glob_component(b"[!abc]x", b"bx"));
        assert!(glob_component(b"[a-c]x", b"cx"));
        assert!(!glob_component(b"a*", b"b"));
        assert_eq!(top_dir("fs/read_write.c"), "fs");
        assert_eq!(top_dir("Makefile"), ".");
    }
}
