//! Confirming candidates: rg's own matcher and searcher (`grep-regex`, `grep-searcher`) built
//! as rg builds them, so that the lines found are exactly rg's: Unicode, `^`/`$` at line
//! ends, CRLF lines (`$` does not match before `\r`, as in rg without `--crlf`), a last line
//! without a newline, and rg's binary rule for files found by walking (a file is searched up
//! to the buffer where its first NUL byte shows up).

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
pub fn matching_lines(searcher: &mut Searcher, matcher: &RegexMatcher, bytes: &[u8]) -> Vec<u32> {
    let mut out = Vec::new();
    // A file with a NUL byte is read as rg reads it, buffer by buffer, so that its binary rule
    // stops at the same place; any other is searched in place.
    let done = if memchr::memchr(0, bytes).is_some() {
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
