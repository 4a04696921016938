//! What a row needs of its file, decoded once per question: the `#if` guards around a line and
//! the function enclosing it.

use std::cell::RefCell;
use std::rc::Rc;

use super::{Query, Verdict};
use knav_index::format::FileStatus;
use knav_index::NameMap;

/// A file of the snapshot: `(segment, file id)`.
pub(super) type FileKey = (usize, u32);

/// Each file's facts, decoded once per question.
#[derive(Default)]
pub(super) struct FileMemo {
    /// Per file: its guards (`None`: not scanned) and function ranges.
    by_file: RefCell<NameMap<FileKey, Rc<FileFacts>>>,
    /// The file asked about last: postings come in file order.
    last: RefCell<Option<(FileKey, Rc<FileFacts>)>>,
}

/// What rows of one file need: its guard transitions and its functions' line ranges.
pub(super) struct FileFacts {
    /// Where its guard transitions are in the segment's files table
    /// ([`knav_index::segment::Segment::guard_at`]); `None` when it was not scanned.
    pub(super) guards: Option<usize>,
    /// Decoded on first use: a file's definitions are many, and a guard needs none of them.
    functions: std::cell::OnceCell<Vec<(u32, u32, String)>>,
    /// With an active config: whether the file is built at all (its architecture, Kbuild).
    pub(super) built: std::cell::OnceCell<Verdict>,
}

impl Query<'_> {
    /// The guard of `line` in a file; `None` when the file was not scanned.
    pub fn guard(&self, seg: usize, file: u32, line: u32) -> Option<Vec<String>> {
        let facts = self.file_facts(seg, file);
        let at = facts.guards?;
        Some(
            self.snap.segments[seg]
                .guard_at(at, line)
                .into_iter()
                .map(str::to_string)
                .collect(),
        )
    }

    /// The function enclosing `line` of a file, from ctags's line ranges.
    pub fn enclosing_function(&self, seg: usize, file: u32, line: u32) -> Option<String> {
        self.enclosing_function_at(seg, file, line)
            .map(|(name, _)| name)
    }

    /// The function enclosing `line` of a file and the line its definition starts on.
    pub fn enclosing_function_at(&self, seg: usize, file: u32, line: u32) -> Option<(String, u32)> {
        let facts = self.file_facts(seg, file);
        facts
            .functions
            .get_or_init(|| {
                self.snap.segments[seg]
                    .file_functions(file)
                    .into_iter()
                    .map(|(line, end, name)| (line, end, name.to_string()))
                    .collect()
            })
            .iter()
            .filter(|(start, end, _)| *start <= line && line <= *end)
            .min_by_key(|(start, _, _)| line - start)
            .map(|(start, _, name)| (name.clone(), *start))
    }

    /// The facts of file `file` of segment `seg`, decoded on its first row.
    pub(super) fn file_facts(&self, seg: usize, file: u32) -> std::rc::Rc<FileFacts> {
        if let Some((key, f)) = &*self.memo.files.last.borrow() {
            if *key == (seg, file) {
                return f.clone();
            }
        }
        let found = self.memo.files.by_file.borrow().get(&(seg, file)).cloned();
        if let Some(f) = found {
            *self.memo.files.last.borrow_mut() = Some(((seg, file), f.clone()));
            return f;
        }
        let segment = &self.snap.segments[seg];
        let file_guards = segment.file_guards(file);
        let guards = match file_guards.status {
            FileStatus::Indexed | FileStatus::NoDefinitions => Some(file_guards.at),
            _ => None,
        };
        let facts = std::rc::Rc::new(FileFacts {
            guards,
            functions: std::cell::OnceCell::new(),
            built: std::cell::OnceCell::new(),
        });
        self.memo
            .files
            .by_file
            .borrow_mut()
            .insert((seg, file), facts.clone());
        *self.memo.files.last.borrow_mut() = Some(((seg, file), facts.clone()));
        facts
    }
}
