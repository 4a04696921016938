//! Source lines for an answer: a file's text read once per question (or a window of its lines),
//! a line cut for display, the column of a name on it, and a `#define`'s extent and parameters.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use knav_ctags::Kind;

use super::guard::FileKey;
use super::source::SourceText;
use super::{source, span, Found, Query};

/// A line of a file of the snapshot: `(segment, file id, line)`.
type LineKey = (usize, u32, u32);

/// The byte offsets of each identifier on one line.
type LineNames = HashMap<Box<[u8]>, Vec<u32>>;

/// Per file of `lines` (`(segment, file, first, last)` each), each once: its first and last
/// line, for [`Query::read_ahead`].
pub(super) fn file_spans(
    lines: impl IntoIterator<Item = (usize, u32, u32, u32)>,
) -> Vec<(usize, u32, u32, u32)> {
    let mut by_file: std::collections::BTreeMap<(usize, u32), (u32, u32)> = Default::default();
    for (s, f, from, to) in lines {
        let span = by_file.entry((s, f)).or_insert((from, to));
        span.0 = span.0.min(from);
        span.1 = span.1.max(to);
    }
    by_file
        .into_iter()
        .map(|((s, f), (a, b))| (s, f, a, b))
        .collect()
}

/// Rows whose files are read ahead at once, then let go ([`Query::read_ahead`]).
pub(super) const READ_AHEAD_ROWS: usize = 1024;

/// Lines longer than this many bytes are scanned once per query for columns.
const LONG_LINE: usize = 4096;

/// What a question has read of the sources, kept until it answers.
#[derive(Default)]
pub(super) struct TextMemo {
    /// Whole source files read, by path (`None`: it could not be read).
    sources: RefCell<HashMap<String, Option<Rc<SourceText>>>>,
    /// Per file, the last window of lines read ([`Query::text_at`]) and how many were read.
    windows: RefCell<HashMap<FileKey, (Rc<SourceText>, u32)>>,
    /// The last line longer than [`LONG_LINE`] asked for a column, and where each name is on it.
    long_line: RefCell<Option<(LineKey, LineNames)>>,
}

impl Query<'_> {
    /// The text of a live file, read once per query.
    pub fn source(&self, path: &str) -> Option<std::rc::Rc<source::SourceText>> {
        if let Some(s) = self.memo.text.sources.borrow().get(path) {
            return s.clone();
        }
        let text = match source::SourceText::read(&self.snap.root, path) {
            Ok(t) => Some(std::rc::Rc::new(t)),
            Err(knav_index::tree::beneath::Unread::Changed(what)) => {
                self.changed.borrow_mut().push((path.to_string(), what));
                None
            }
            Err(knav_index::tree::beneath::Unread::Io(_)) => None,
        };
        self.memo
            .text
            .sources
            .borrow_mut()
            .insert(path.to_string(), text.clone());
        text
    }

    /// Drops the text of `path` that [`Query::source`] keeps: a tool reading many files once
    /// each (review_diff's up to 10,000) does not hold them all until it answers.
    pub fn forget_source(&self, path: &str) {
        self.memo.text.sources.borrow_mut().remove(path);
    }

    /// Text holding lines `from..=to` of file `file` of segment `seg` (or as many as it has):
    /// the whole file when it was read already; else a window read from the line mark before
    /// `from` (a snippet of line 4,800 should not read 200 KB); the whole file when it no
    /// longer matches its record or its rows need many windows.
    pub fn text_at(
        &self,
        seg: usize,
        file: u32,
        from: u32,
        to: u32,
    ) -> Option<std::rc::Rc<source::SourceText>> {
        /// Windows read from one file before it is read whole instead.
        const MAX_WINDOWS: u32 = 4;
        let path = self.path(seg, file);
        if let Some(s) = self.memo.text.sources.borrow().get(path) {
            return s.clone();
        }
        let read = match self.memo.text.windows.borrow().get(&(seg, file)) {
            Some((w, _)) if w.covers(from, to) => return Some(w.clone()),
            Some((_, n)) => *n,
            None => 0,
        };
        if read >= MAX_WINDOWS {
            return self.source(path);
        }
        let (hint, past) = self.window_marks(seg, file, from, to);
        let root = &self.snap.root;
        let after = to.saturating_sub(from);
        match source::SourceText::read_window(root, path, hint, from, after, past) {
            Some(w) => {
                let w = std::rc::Rc::new(w);
                self.memo
                    .text
                    .windows
                    .borrow_mut()
                    .insert((seg, file), (w.clone(), read + 1));
                Some(w)
            }
            None => self.source(path),
        }
    }

    /// The line marks a window of lines `from..=to` of a file starts at and reads up to (the
    /// first mark past `to`, when the file has one).
    fn window_marks(
        &self,
        seg: usize,
        file: u32,
        from: u32,
        to: u32,
    ) -> (
        knav_index::segment::LineHint,
        Option<knav_index::segment::LineHint>,
    ) {
        let segment = &self.snap.segments[seg];
        let hint = segment.line_hint(file, from);
        let stride = knav_c::scan::LINE_MARK_STRIDE;
        let past = segment.line_hint(file, to.saturating_add(stride));
        (hint, (past.line > to).then_some(past))
    }

    /// Reads ahead, on every core, the lines `spans` cite (`(segment, file, first line, last
    /// line)`, one per file): one window each from the line mark before its first line through
    /// its last, kept for [`Query::text_at`]. Files read already are left as they are.
    pub fn read_ahead(&self, spans: &[(usize, u32, u32, u32)]) {
        use rayon::prelude::*;
        /// Fewer files than this are read one by one, as asked.
        const PARALLEL_FROM: usize = 32;
        if spans.len() < PARALLEL_FROM {
            return;
        }
        let jobs: Vec<_> = {
            let windows = self.memo.text.windows.borrow();
            let sources = self.memo.text.sources.borrow();
            spans
                .iter()
                .filter(|(s, f, _, _)| {
                    !windows.contains_key(&(*s, *f)) && !sources.contains_key(self.path(*s, *f))
                })
                .map(|&(s, f, from, to)| {
                    let (hint, past) = self.window_marks(s, f, from, to);
                    (
                        s,
                        f,
                        self.path(s, f),
                        hint,
                        from,
                        to.saturating_sub(from),
                        past,
                    )
                })
                .collect()
        };
        let root = &self.snap.root;
        let read: Vec<Option<SourceText>> = jobs
            .par_iter()
            .map(|&(_, _, path, hint, from, after, past)| {
                SourceText::read_window(root, path, hint, from, after, past)
            })
            .collect();
        let mut windows = self.memo.text.windows.borrow_mut();
        for (job, w) in jobs.iter().zip(read) {
            if let Some(w) = w {
                windows.insert((job.0, job.1), (Rc::new(w), 1));
            }
        }
    }

    /// Lets go of the windows of lines read so far ([`Query::read_ahead`]): a long answer does
    /// not hold every file it cites until it is done.
    pub fn forget_windows(&self) {
        self.memo.text.windows.borrow_mut().clear();
    }

    /// Line `line` of file `file` of segment `seg`, cut for display; empty when unreadable.
    pub fn snippet_at(&self, seg: usize, file: u32, line: u32) -> String {
        source::snippet(self.text_at(seg, file, line, line).as_deref(), line)
    }

    /// The 1-based column of the `nth` (0-based) occurrence of `name` on line `line` of file
    /// `file` of segment `seg`.
    pub fn column_at(&self, seg: usize, file: u32, line: u32, name: &str, nth: usize) -> u32 {
        let src = self.text_at(seg, file, line, line);
        let Some(l) = src.as_deref().and_then(|s| s.line(line)) else {
            return 1;
        };
        if l.len() <= LONG_LINE {
            return source::column(src.as_deref(), line, name, nth);
        }
        if nth == 0 {
            // A definition's name: read up to it, not the whole line.
            return span::find_name(l, 0, name.as_bytes()).map_or(1, |c| c as u32 + 1);
        }
        // A long line is scanned once for all the rows on it (a generated file's one line can
        // hold thousands of them).
        let mut cache = self.memo.text.long_line.borrow_mut();
        if cache
            .as_ref()
            .is_none_or(|(at, _)| *at != (seg, file, line))
        {
            let mut names = LineNames::new();
            for o in knav_c::scan::scan(l).occurrences {
                let w = &l[o.start as usize..o.start as usize + o.len as usize];
                names.entry(w.into()).or_default().push(o.start);
            }
            *cache = Some(((seg, file, line), names));
        }
        cache
            .as_ref()
            .and_then(|(_, names)| names.get(name.as_bytes())?.get(nth).copied())
            .map_or(1, |c| c + 1)
    }

    /// The 0-based UTF-16 column of 1-based byte column `col` on line `line` of file `file` of
    /// segment `seg` (bytes that are not UTF-8 counted as their replacement characters); `None`
    /// when the line cannot be read.
    pub fn utf16_col(&self, seg: usize, file: u32, line: u32, col: u32) -> Option<u32> {
        let src = self.text_at(seg, file, line, line)?;
        let l = src.line(line)?;
        let before = &l[..(col.saturating_sub(1) as usize).min(l.len())];
        Some(match before.is_ascii() {
            true => before.len() as u32,
            false => String::from_utf8_lossy(before).encode_utf16().count() as u32,
        })
    }

    /// Where the `nth` occurrence of `word` is on line `line` of file `file` of segment `seg`:
    /// its 1-based byte column and 0-based UTF-16 column; `None` when the line cannot be read
    /// or does not hold the word.
    pub fn word_col(
        &self,
        seg: usize,
        file: u32,
        line: u32,
        word: &str,
        nth: usize,
    ) -> Option<(u32, u32)> {
        let col = self.column_at(seg, file, line, word, nth);
        let src = self.text_at(seg, file, line, line)?;
        let l = src.line(line)?;
        let at = l.get(col as usize - 1..)?;
        if !at.starts_with(word.as_bytes()) {
            return None;
        }
        Some((col, self.utf16_col(seg, file, line, col)?))
    }

    /// Line `line` of a file cut for display, from a little before byte column `col` when the
    /// cut would leave it out (a call deep into a long line is shown, not the line's start).
    pub fn snippet_near(&self, seg: usize, file: u32, line: u32, col: u32) -> String {
        let src = self.text_at(seg, file, line, line);
        let Some(l) = src.as_deref().and_then(|s| s.line(line)) else {
            return String::new();
        };
        source::cut_near(l, col)
    }

    /// The source line `line` of `path`, cut for display; empty when unreadable.
    pub fn snippet(&self, path: &str, line: u32) -> String {
        source::snippet(self.source(path).as_deref(), line)
    }

    /// The 1-based column of the `nth` (0-based) occurrence of `name` on a line.
    pub fn column(&self, path: &str, line: u32, name: &str, nth: usize) -> u32 {
        source::column(self.source(path).as_deref(), line, name, nth)
    }

    /// The last line and parameter list of a `#define`, read from the source.
    pub fn macro_shape(&self, f: &Found<'_>) -> (Option<u32>, Option<String>) {
        if f.def.kind != Kind::Macro || f.def.signature.is_some() || f.def.end_line.is_some() {
            return (f.def.end_line, f.def.signature.map(str::to_string));
        }
        // Most `#define`s are one line or a few: a window of the next lines, the whole file
        // when the continuation runs past it.
        let line = f.def.line;
        let Some(src) = self.text_at(f.seg, f.def.file, line, line + 16) else {
            return (None, None);
        };
        let shape = src.macro_shape(line, f.def.name);
        let end = shape.0.unwrap_or(line);
        if src.covers(end + 1, end + 1) {
            return shape;
        }
        match self.source(self.path(f.seg, f.def.file)) {
            Some(src) => src.macro_shape(line, f.def.name),
            None => (None, None),
        }
    }
}
