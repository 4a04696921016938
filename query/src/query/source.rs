//! Source text for snippets and bodies: a file read once, lines found with memchr.
//!
//! Files are opened beneath the root without following a symbolic link anywhere on the way
//! ([`knav_index::tree::beneath`]): a file swapped for a link after indexing must not show what the link
//! points to.

use std::path::Path;

use knav_index::segment::LineHint;
use knav_index::tree::beneath::{read_open, Source, Unread};

/// A source file, or a window of whole lines of one, and the offsets of its lines.
pub struct SourceText {
    bytes: Source,
    starts: Vec<usize>,
    /// The line at `bytes[0]`: 1 for a whole file.
    first_line: u32,
    /// True when `bytes` run to the end of the file.
    to_end: bool,
}

/// Source lines are cut at this many characters.
pub const MAX_LINE_CHARS: usize = 200;

/// Bytes a window read starts with; it grows fourfold until it holds what is asked.
const WINDOW_BYTES: u64 = 8 << 10;

impl SourceText {
    /// Reads `rel` under `root` (large files are memory-mapped in the CLI: a snippet of a
    /// 300 KB file should not copy 300 KB).
    pub fn read(root: &Path, rel: &str) -> Result<SourceText, Unread> {
        let bytes =
            read_open(knav_index::tree::beneath::open_file(root, rel)?.0).map_err(Unread::Io)?;
        Ok(SourceText::new(bytes, 1, true))
    }

    fn new(bytes: Source, first_line: u32, to_end: bool) -> SourceText {
        let mut starts = Vec::with_capacity(bytes.len() / 30 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1));
        SourceText {
            bytes,
            starts,
            first_line,
            to_end,
        }
    }

    /// Lines `line..=line + after` of `path` (fewer at the end of the file), read from the
    /// line mark `hint` instead of from the top; `past` is a line mark after them when the file
    /// has one (the window is sized to reach it, not grown read after read). `None` when the
    /// file is unreadable or no longer has the size and mtime it was indexed with (its marks may
    /// be wrong: read it whole).
    pub fn read_window(
        root: &Path,
        rel: &str,
        hint: LineHint,
        line: u32,
        after: u32,
        past: Option<LineHint>,
    ) -> Option<SourceText> {
        use std::os::unix::fs::FileExt;
        let (file, meta) = knav_index::tree::beneath::open_file(root, rel).ok()?;
        let size = meta.len();
        if size != hint.size
            || knav_index::tree::walk::mtime_ns(&meta) != hint.mtime_ns
            || hint.offset > size
        {
            return None;
        }
        let last = line.saturating_add(after);
        let mut want = match past {
            Some(p) if p.line > last => p.offset.saturating_sub(hint.offset).max(1),
            _ => WINDOW_BYTES,
        };
        loop {
            let len = want.min(size - hint.offset);
            let to_end = hint.offset + len == size;
            let mut buf = vec![0u8; len as usize];
            file.read_exact_at(&mut buf, hint.offset).ok()?;
            if !to_end {
                // Whole lines only: a cut line would read as a short one.
                let keep = memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1);
                buf.truncate(keep);
            }
            let text = SourceText::new(Source::Read(buf), hint.line, to_end);
            // Complete when the line after `last` starts inside the window, or at its end.
            let next = (last + 1).checked_sub(hint.line).map(|i| i as usize);
            if to_end || next.is_some_and(|i| i < text.starts.len()) {
                return Some(text);
            }
            want = want.saturating_mul(4);
        }
    }

    /// True when lines `from..=to` are all here (or past the end of the file); false when
    /// either is before the first line here.
    pub fn covers(&self, from: u32, to: u32) -> bool {
        if from < self.first_line {
            return false;
        }
        match to.checked_sub(self.first_line) {
            Some(past_first) => self.to_end || past_first as usize + 1 < self.starts.len(),
            None => false,
        }
    }

    /// Line `n` (1-based) without its line ending.
    pub fn line(&self, n: u32) -> Option<&[u8]> {
        let i = (n as usize).checked_sub(self.first_line as usize)?;
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

    /// The text: the whole file when it came from [`SourceText::read`].
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

/// Line `line` of `src`, cut for display; empty when there is no such line or no text.
pub fn snippet(src: Option<&SourceText>, line: u32) -> String {
    src.and_then(|s| s.line(line).map(cut)).unwrap_or_default()
}

/// The 1-based column of the `nth` (0-based) occurrence of `name` on line `line` of `src`; 1
/// when it is not found.
pub fn column(src: Option<&SourceText>, line: u32, name: &str, nth: usize) -> u32 {
    src.and_then(|s| s.line(line).and_then(|l| nth_identifier(l, name, nth)))
        .map_or(1, |c| c as u32 + 1)
}

/// The byte offset of the `nth` (0-based) occurrence of identifier `name` in `line`, outside
/// comments and strings, as the scanner sees it.
pub fn nth_identifier(line: &[u8], name: &str, nth: usize) -> Option<usize> {
    knav_c::scan::scan(line)
        .occurrences
        .iter()
        .filter(|o| &line[o.start as usize..o.start as usize + o.len as usize] == name.as_bytes())
        .nth(nth)
        .map(|o| o.start as usize)
        .or_else(|| find_word(line, name))
}

/// A line for display: trimmed, tabs kept, cut at [`MAX_LINE_CHARS`] characters.
pub fn cut(line: &[u8]) -> String {
    // A char is at most 4 bytes: this prefix holds every char shown, and a 60 MB line is not
    // converted whole for 200 characters of it.
    let head = line.trim_ascii_start();
    let head = &head[..head.len().min(MAX_LINE_CHARS * 4 + 4)];
    let s = String::from_utf8_lossy(head);
    let s = s.trim();
    if s.chars().count() <= MAX_LINE_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_LINE_CHARS).collect();
    out.push('…');
    out
}

/// `l` cut for display, from a little before byte column `col` when the cut would leave it
/// out (a match deep into a long line is shown, not the line's start).
pub fn cut_near(l: &[u8], col: u32) -> String {
    let at = (col as usize).saturating_sub(1).min(l.len());
    /// Characters shown before the column.
    const BEFORE: usize = 40;
    let head = &l[..at.min(MAX_LINE_CHARS * 4)];
    if l.len() <= MAX_LINE_CHARS
        || String::from_utf8_lossy(head).chars().count() + BEFORE < MAX_LINE_CHARS
    {
        return cut(l);
    }
    let mut from = at.saturating_sub(BEFORE);
    // Start on a character, not inside one.
    while from < at && l[from] & 0xC0 == 0x80 {
        from += 1;
    }
    format!("…{}", cut(&l[from..]))
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
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn lines_and_words() {
        let name = format!("knav-src-{}", std::process::id());
        let dir = std::env::temp_dir().join(&name);
        std::fs::write(&dir, "a\r\nint vfs_read_x, vfs_read;\n\nlast").unwrap();
        let s = SourceText::read(&std::env::temp_dir(), &name).unwrap();
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

    #[test]
    fn covers_with_to_before_the_windows_first_line_is_false_not_an_overflow() {
        let window = SourceText::new(Source::Read(b"ten\neleven\n".to_vec()), 10, false);
        assert!(window.covers(10, 11));
        assert!(!window.covers(10, 12));
        assert!(!window.covers(9, 10));
        // `to - first_line` underflowed: a panic in a debug build.
        assert!(!window.covers(10, 9));
        assert!(!window.covers(11, 0));
        let to_end = SourceText::new(Source::Read(b"ten\n".to_vec()), 10, true);
        assert!(to_end.covers(10, 500));
        assert!(!to_end.covers(10, 9));
    }

    #[test]
    fn a_window_from_a_line_mark_holds_the_asked_lines_and_a_changed_file_is_refused() {
        let tmp = std::env::temp_dir();
        let name = format!("knav-win-{}", std::process::id());
        let path = tmp.join(&name);
        // Lines of growing length: a window must grow past its first read for the last ones.
        let text: String = (1..=3000)
            .map(|n| format!("{}\n", "x".repeat(n % 97)))
            .collect();
        std::fs::write(&path, &text).unwrap();
        let scanned = knav_c::scan::scan(text.as_bytes());
        let meta = std::fs::metadata(&path).unwrap();
        let hint_for = |line: u32| {
            let (line, offset) = knav_c::scan::mark_before(&scanned.line_marks, line);
            LineHint {
                size: meta.len(),
                mtime_ns: knav_index::tree::walk::mtime_ns(&meta),
                line,
                offset,
            }
        };
        let whole = SourceText::read(&tmp, &name).unwrap();
        for line in [1, 64, 65, 1000, 2999, 3000] {
            let hint = hint_for(line);
            assert_eq!(
                hint.line,
                line - (line - 1) % 64,
                "the mark at or before {line}"
            );
            let w = SourceText::read_window(&tmp, &name, hint, line, 300, None).unwrap();
            assert!(w.covers(line, line + 300));
            for n in line..=(line + 300).min(3000) {
                assert_eq!(w.line(n), whole.line(n), "line {n} from a window at {line}");
            }
            assert_eq!(w.line(3001), None);
            // Sized by the mark past the last line asked: read once, and it still holds them.
            let past = Some(hint_for(line + 300 + 64)).filter(|p| p.line > line + 300);
            let sized = SourceText::read_window(&tmp, &name, hint, line, 300, past).unwrap();
            assert!(sized.covers(line, line + 300), "a sized window at {line}");
            for n in line..=(line + 300).min(3000) {
                assert_eq!(sized.line(n), whole.line(n), "line {n} of a sized window");
            }
        }
        // The window's first line is the mark's: a line before it is not there.
        let w = SourceText::read_window(&tmp, &name, hint_for(1000), 1000, 0, None).unwrap();
        assert_eq!(w.line(900), None);
        assert!(!w.covers(900, 900));
        // A file that no longer has its indexed size is read whole by the caller.
        let mut stale = hint_for(1000);
        stale.size += 1;
        assert!(SourceText::read_window(&tmp, &name, stale, 1000, 0, None).is_none());
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_source_swapped_for_a_symlink_after_indexing_is_not_followed() {
        let tmp = std::env::temp_dir().join(format!("knav-beneath-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let (root, outside) = (tmp.join("root"), tmp.join("outside"));
        std::fs::create_dir_all(root.join("fs")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("x.c"), "SECRET\n").unwrap();
        std::fs::write(root.join("fs/a.c"), "int a;\n").unwrap();
        assert_eq!(
            SourceText::read(&root, "fs/a.c").unwrap().line(1),
            Some(&b"int a;"[..])
        );
        let changed = |rel: &str| match SourceText::read(&root, rel) {
            Err(Unread::Changed(what)) => what,
            Ok(t) => panic!("{rel} read: {:?}", String::from_utf8_lossy(t.bytes())),
            Err(Unread::Io(e)) => panic!("{rel}: {e}"),
        };
        // The file is a link now.
        std::fs::rename(root.join("fs/a.c"), root.join("fs/a.c.bak")).unwrap();
        std::os::unix::fs::symlink(outside.join("x.c"), root.join("fs/a.c")).unwrap();
        assert_eq!(changed("fs/a.c"), "a symbolic link");
        // A directory on the way is a link now.
        std::fs::rename(root.join("fs"), root.join("fs.bak")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("fs")).unwrap();
        std::fs::write(outside.join("a.c"), "SECRET\n").unwrap();
        assert_eq!(changed("fs/a.c"), "a symbolic link");
        // Up and out, and a FIFO in a file's place (the open must not hang).
        assert_eq!(changed("../outside/x.c"), "a path leading out of the root");
        let fifo = CString::new(root.join("f.c").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert_eq!(changed("f.c"), "not a regular file");
        // A hint that fits the file the link leads to.
        let meta = std::fs::metadata(outside.join("a.c")).unwrap();
        let hint = LineHint {
            size: meta.len(),
            mtime_ns: knav_index::tree::walk::mtime_ns(&meta),
            line: 1,
            offset: 0,
        };
        let win = SourceText::read_window(&root, "fs/a.c", hint, 1, 0, None);
        assert!(win.is_none(), "a window is not read through a link either");
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
