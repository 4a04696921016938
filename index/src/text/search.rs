//! Confirming candidates: rg's own matcher and searcher (`grep-regex`, `grep-searcher`) built
//! as rg builds them, so that the lines found are exactly rg's: Unicode, `^`/`$` at line
//! ends, CRLF lines (`$` does not match before `\r`, as in rg without `--crlf`), a last line
//! without a newline, and rg's binary rule for files found by walking (a file is searched up
//! to the buffer where its first NUL byte shows up).

use std::path::Path;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};

/// A pattern and rg's flags for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pattern {
    /// The regular expression (Rust syntax), or the literal text with `fixed`.
    pub text: String,
    /// `-F`: the text is a literal.
    pub fixed: bool,
    /// `-i`: case-insensitive.
    pub ignore_case: bool,
    /// `-w`: only matches surrounded by word boundaries.
    pub word: bool,
}

impl Pattern {
    /// rg's matcher for the pattern; the error is the regex parser's, pointing at the fault.
    pub fn matcher(&self) -> Result<RegexMatcher, String> {
        let mut b = RegexMatcherBuilder::new();
        b.case_insensitive(self.ignore_case)
            .multi_line(true)
            .unicode(true)
            .octal(false)
            .word(self.word)
            .fixed_strings(self.fixed)
            .line_terminator(Some(b'\n'))
            .dot_matches_new_line(false);
        b.build(&self.text).map_err(|e| e.to_string())
    }
}

/// rg's searcher for files found by walking a tree.
pub fn searcher() -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .build()
}

/// Collects the numbers of matching lines.
struct Lines<'a>(&'a mut Vec<u32>);

impl Sink for Lines<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let first = m.line_number().unwrap_or(0) as u32;
        for (k, _) in m.lines().enumerate() {
            self.0.push(first + k as u32);
        }
        Ok(true)
    }
}

/// The lines of `bytes` (a whole file) where `matcher` matches, as rg finds them.
///
/// `text_known`: the text index found no NUL in the file as it is now (its size and mtime are
/// the indexed ones), so it need not be scanned for one again.
pub fn matching_lines(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    bytes: &[u8],
    text_known: bool,
) -> Vec<u32> {
    let mut out = Vec::new();
    // A file with a NUL byte is read as rg reads it, buffer by buffer, so that its binary rule
    // stops at the same place; any other is searched in place.
    let done = if !text_known && memchr::memchr(0, bytes).is_some() {
        searcher.search_reader(matcher, bytes, Lines(&mut out))
    } else {
        searcher.search_slice(matcher, bytes, Lines(&mut out))
    };
    if done.is_err() {
        out.clear();
    }
    out
}

/// The 1-based byte column of the first match on `line` (1 when none: a line matched only
/// through its terminator).
pub fn column(matcher: &RegexMatcher, line: &[u8]) -> u32 {
    use grep_matcher::Matcher;
    matcher
        .find(line)
        .ok()
        .flatten()
        .map_or(1, |m| m.start() as u32 + 1)
}

/// Files up to this many bytes are read into a reused buffer; larger ones are read whole (or
/// mapped), so that no thread keeps a buffer the size of the largest file.
pub const BUFFERED: u64 = 1 << 20;

/// A file's bytes: in the caller's buffer, or its own.
pub enum Bytes<'b> {
    /// In the buffer passed.
    Buffered(&'b [u8]),
    /// Read or mapped on their own.
    Own(crate::tree::beneath::Source),
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Buffered(b) => b,
            Bytes::Own(s) => s,
        }
    }
}

/// Opens files under a root for reading through one [`crate::tree::beneath::Root`] opened once: a
/// search may open every file of the tree.
pub struct Opener {
    root: Option<crate::tree::beneath::Root>,
}

impl Opener {
    /// An opener for files under `root` (one that opens nothing when `root` cannot be opened).
    pub fn new(root: &Path) -> Opener {
        Opener {
            root: crate::tree::beneath::Root::open(root).ok(),
        }
    }

    /// The bytes of root-relative `rel` (mapped when large, as the index build reads them);
    /// `None` when it cannot be read or is not a regular file below the root.
    pub fn read(&self, rel: &str) -> Option<crate::tree::beneath::Source> {
        crate::tree::beneath::read_open(self.open(rel)?.0).ok()
    }

    /// Root-relative `rel` opened, with its size; `None` when it cannot be or is not a
    /// regular file below the root.
    fn open(&self, rel: &str) -> Option<(std::fs::File, u64)> {
        let (file, meta) = self.root.as_ref()?.open_file(rel).ok()?;
        Some((file, meta.len()))
    }

    /// The lines of root-relative `rel` where `matcher` matches, searching only the byte
    /// ranges `blocks` (`start, end, first line`, each of whole lines) of a file
    /// without NUL bytes, when it still has `size` bytes; the whole file otherwise. `None` when
    /// it cannot be read.
    pub fn matching_lines_in(
        &self,
        rel: &str,
        size: u64,
        blocks: &[(u64, u64, u32)],
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        buf: &mut Vec<u8>,
    ) -> Option<Vec<u32>> {
        use std::os::unix::fs::FileExt;
        let (file, len) = self.open(rel)?;
        if blocks.is_empty() || len != size {
            drop(file);
            return self
                .read_with(rel, buf)
                .map(|b| matching_lines(searcher, matcher, &b, false));
        }
        let mut out = Vec::new();
        for &(start, end, line) in blocks {
            buf.resize((end - start) as usize, 0);
            file.read_exact_at(buf, start).ok()?;
            let lines = matching_lines(searcher, matcher, buf, true);
            out.extend(lines.into_iter().map(|l| l + line - 1));
        }
        Some(out)
    }

    /// The bytes of root-relative `rel`: a file up to [`BUFFERED`] bytes read into `buf` (its
    /// capacity kept: a search reads thousands of files through one buffer per thread, with no
    /// mapping to set up and tear down for each), a larger one as the index build reads it;
    /// `None` when it cannot be read or is not a regular file below the root.
    pub fn read_with<'b>(&self, rel: &str, buf: &'b mut Vec<u8>) -> Option<Bytes<'b>> {
        let (file, len) = self.open(rel)?;
        if len > BUFFERED {
            return crate::tree::beneath::read_open(file).ok().map(Bytes::Own);
        }
        buf.clear();
        crate::tree::beneath::read_to_end(&file, len, buf).ok()?;
        Some(Bytes::Buffered(buf))
    }
}
