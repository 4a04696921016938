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
        let hint = self.snap.segments[seg].line_hint(file, from);
        let root = &self.snap.root;
        match source::SourceText::read_window(root, path, hint, from, to.saturating_sub(from)) {
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
