//! Include-guard detection: is a file's first conditional the guard around the whole file?
//!
//! A file whose first directive is `#ifndef X` (or `#if !defined(X)`), with no code before it,
//! whose next directive is `#define X`, and whose matching `#endif` is followed by nothing but
//! comments, is guarded against a second inclusion; that condition is not one anyone asks
//! about, and the [`GuardStack`](crate::guard::GuardStack) leaves it out. So is a trace
//! header's multi-read guard, `#if !defined(_TRACE_X_H) || defined(TRACE_HEADER_MULTI_READ)`
//! opened before any code (after `#define TRACE_SYSTEM`) and followed by the directives that
//! include `trace/define_trace.h`. The scanner tells this detector of code and directives as
//! it meets them, in its one pass.

use super::{is_ident, is_ident_start};

/// What has been seen of a possible include guard.
#[derive(Default)]
pub(super) struct IncludeGuard {
    directives_seen: u32,
    /// The name of a leading `#ifndef X` that may be the include guard.
    candidate: Option<String>,
    /// Set when the include guard's `#endif` was seen.
    closed_at: Option<u32>,
    /// Anything but comments after the include guard's `#endif`.
    after: bool,
}

impl IncludeGuard {
    /// Code (anything but a comment or a directive).
    #[inline]
    pub(super) fn code(&mut self) {
        if self.closed_at.is_some() {
            self.after = true;
        }
        self.candidate = None;
    }

    /// A directive named `word` starts; returns the candidate guard name that a `#define` on
    /// this line would have to repeat.
    pub(super) fn directive(&mut self, word: &[u8]) -> Option<String> {
        self.directives_seen += 1;
        if self.closed_at.is_some() && !word.is_empty() {
            self.after = true;
        }
        self.candidate.take()
    }

    /// `#ifndef` with condition text `cond`; `has_code` says whether code came before.
    pub(super) fn ifndef(&mut self, cond: &str, has_code: bool) {
        if self.directives_seen == 1 && !has_code && !cond.contains(' ') {
            self.candidate = Some(cond.to_string());
        }
    }

    /// `#if` with condition text `cond` at depth 0 (nothing open); `has_code` says whether code
    /// came before. True when it is a trace header's multi-read guard.
    pub(super) fn if_(&mut self, cond: &str, has_code: bool) -> bool {
        if has_code {
            return false;
        }
        let tokens = tokens(cond);
        let Some((name, rest)) = not_defined(&tokens) else {
            return false;
        };
        match rest {
            [] if self.directives_seen == 1 => {
                self.candidate = Some(name.to_string());
                false
            }
            ["|", "|", "defined", "(", y, ")"] | ["|", "|", "defined", y] => {
                y.starts_with("TRACE_") && y.ends_with("_MULTI_READ")
            }
            _ => false,
        }
    }

    /// `#endif` closing a group that was `depth` deep (1: outermost) on `line`.
    pub(super) fn endif(&mut self, depth: usize, line: u32) {
        if depth == 1 && self.closed_at.is_none() && self.directives_seen > 2 {
            self.closed_at = Some(line);
            self.after = false;
        }
    }

    /// At the end of the file: whether the outermost group closed with nothing but comments
    /// after it.
    pub(super) fn closed_at_end(&self) -> bool {
        self.closed_at.is_some() && !self.after
    }
}

/// The words and single punctuators of a condition's text.
fn tokens(cond: &str) -> Vec<&str> {
    let b = cond.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() && out.len() < 16 {
        let start = i;
        if is_ident(b[i]) {
            while i < b.len() && is_ident(b[i]) {
                i += 1;
            }
        } else if b[i] == b' ' {
            i += 1;
            continue;
        } else {
            i += 1;
            while !cond.is_char_boundary(i) {
                i += 1;
            }
        }
        out.push(&cond[start..i]);
    }
    out
}

/// `X` and the tokens after `!defined(X)` or `!defined X` at the start of `tokens`.
fn not_defined<'t, 'a>(tokens: &'t [&'a str]) -> Option<(&'a str, &'t [&'a str])> {
    match tokens {
        ["!", "defined", "(", x, ")", rest @ ..] | ["!", "defined", x, rest @ ..]
            if x.bytes().next().is_some_and(is_ident_start) =>
        {
            Some((x, rest))
        }
        _ => None,
    }
}
