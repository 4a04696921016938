//! Include-guard detection: is a file's first conditional the guard around the whole file?
//!
//! A file whose first directive is `#ifndef X`, with no code before it, whose next directive is
//! `#define X`, and whose matching `#endif` is followed by nothing but comments, is guarded
//! against a second inclusion; that condition is not one anyone asks about, and the
//! [`GuardStack`](crate::guard::GuardStack) leaves it out. The scanner tells this detector of
//! code and directives as it meets them, in its one pass.

/// What has been seen of a possible include guard.
#[derive(Default)]
pub(super) struct IncludeGuard {
    directives_seen: u32,
    /// The name of a leading `#ifndef X` that may be the include guard, as a byte range.
    candidate: Option<(usize, usize)>,
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
    pub(super) fn directive(&mut self, word: &[u8]) -> Option<(usize, usize)> {
        self.directives_seen += 1;
        if self.closed_at.is_some() && !word.is_empty() {
            self.after = true;
        }
        self.candidate.take()
    }

    /// `#ifndef` with condition text `cond` whose name starts at byte `name_start`; `has_code`
    /// says whether code came before.
    pub(super) fn ifndef(&mut self, name_start: usize, cond: &str, has_code: bool) {
        if self.directives_seen == 1 && !has_code && !cond.contains(' ') {
            self.candidate = Some((name_start, name_start + cond.len()));
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
