//! Source text for snippets and bodies: a file read once, lines found with memchr.

use std::path::Path;

use super::MAX_LINE_CHARS;
use crate::index::build::{read_source, Source};

/// A source file and the offsets of its lines.
pub struct SourceText {
    bytes: Source,
    starts: Vec<usize>,
}

impl SourceText {
    /// Reads `path` (large files are memory-mapped: a snippet of a 300 KB file should not copy
    /// 300 KB); `None` when it cannot be read.
    pub fn read(path: &Path) -> Option<SourceText> {
        let bytes = read_source(path).ok()?;
        let mut starts = Vec::with_capacity(bytes.len() / 30 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1));
        Some(SourceText { bytes, starts })
    }

    /// Line `n` (1-based) without its line ending.
    pub fn line(&self, n: u32) -> Option<&[u8]> {
        let i = (n as usize).checked_sub(1)?;
        let start = *self.starts.get(i)?;
        if start >= self.bytes.len() && i > 0 {
            return None;
        }
        let end = self.starts.get(i + 1).map_or(self.bytes.len(), |e| e - 1);
        let mut l = &self.bytes[start..end.max(start)];
        if l.last() == Some(&b'\r') {
            l = &l[..l.len() - 1];
        }
        Some(l)
    }

    /// Lines `from..=to`, joined with newlines.
    pub fn lines(&self, from: u32, to: u32) -> String {
        let mut out = String::new();
        for n in from..=to {
            match self.line(n) {
                Some(l) => {
                    if n > from {
                        out.push('\n');
                    }
                    out.push_str(&String::from_utf8_lossy(l));
                }
                None => break,
            }
        }
        out
    }

    /// The whole text.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl SourceText {
    /// The last line and the parameter list of the `#define NAME` on `line`.
    pub fn macro_shape(&self, line: u32, name: &str) -> (Option<u32>, Option<String>) {
        let Some(text) = self.line(line) else {
            return (None, None);
        };
        let mut end = line;
        let mut cur = text;
        while cur.ends_with(b"\\") {
            match self.line(end + 1) {
                Some(next) => {
                    end += 1;
                    cur = next;
                }
                None => break,
            }
        }
        let signature = find_word(text, name).and_then(|at| {
            let rest = &text[at + name.len()..];
            if rest.first() != Some(&b'(') {
                return None;
            }
            let close = memchr::memchr(b')', rest)?;
            let sig: String = String::from_utf8_lossy(&rest[..=close])
                .split_whitespace()
                .collect();
            Some(sig)
        });
        ((end > line).then_some(end), signature)
    }
}

/// The byte offset of the `nth` (0-based) occurrence of identifier `name` in `line`, outside
/// comments and strings, as the scanner sees it.
pub fn nth_identifier(line: &[u8], name: &str, nth: usize) -> Option<usize> {
    crate::scan::scan(line)
        .occurrences
        .iter()
        .filter(|o| &line[o.start as usize..o.start as usize + o.len as usize] == name.as_bytes())
        .nth(nth)
        .map(|o| o.start as usize)
        .or_else(|| find_word(line, name))
}

/// A line for display: trimmed, tabs kept, cut at [`MAX_LINE_CHARS`] characters.
pub fn cut(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    let s = s.trim();
    if s.chars().count() <= MAX_LINE_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_LINE_CHARS).collect();
    out.push('…');
    out
}

/// The byte offset of `word` as a whole identifier in `line`.
pub fn find_word(line: &[u8], word: &str) -> Option<usize> {
    let w = word.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(k) = memchr::memmem::find(&line[from..], w) {
        let at = from + k;
        let before = at == 0 || !is_ident(line[at - 1]);
        let after = line.get(at + w.len()).is_none_or(|b| !is_ident(*b));
        if before && after {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_words() {
        let dir = std::env::temp_dir().join(format!("knav-src-{}", std::process::id()));
        std::fs::write(&dir, "a\r\nint vfs_read_x, vfs_read;\n\nlast").unwrap();
        let s = SourceText::read(&dir).unwrap();
        assert_eq!(s.line(1), Some(&b"a"[..]));
        assert_eq!(s.line(4), Some(&b"last"[..]));
        assert_eq!(s.line(5), None);
        assert_eq!(s.line(0), None);
        assert_eq!(find_word(s.line(2).unwrap(), "vfs_read"), Some(16));
        assert_eq!(s.lines(1, 2), "a\nint vfs_read_x, vfs_read;");
        let long = "x".repeat(300);
        assert_eq!(cut(long.as_bytes()).chars().count(), MAX_LINE_CHARS + 1);
        let _ = std::fs::remove_file(&dir);
    }
}
