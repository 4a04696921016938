//! The documents the client has open: their text as the editor holds it (the name under the
//! cursor is read from it, not from the disk), kept up to date by `didOpen`/`didChange`, and a
//! map from the lines of the file as indexed (the disk's, after a refresh) to the buffer's, so
//! that an answer about a buffer with unsaved edits cites the line where it now is, or leaves
//! out (and says) a line the edit changed.

use std::collections::HashMap;
use std::time::Duration;

use lsp_types::{Position, Range, TextDocumentContentChangeEvent, Uri};

use super::position::{Encoding, Lines};

/// Time a line diff of a buffer against its file may take; past it, the diff is coarser (fewer
/// lines mapped), never wrong.
const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// Where a line of the file as indexed is in the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapped {
    /// At this (0-based) line, with the same text.
    At(u32),
    /// The edit changed or removed it.
    Changed,
}

/// One open document.
pub struct Doc {
    /// The file (absolute).
    pub path: std::path::PathBuf,
    /// Its text in the editor.
    pub text: String,
    /// Where its lines start.
    pub lines: Lines,
    /// The client's version.
    pub version: i32,
    /// The file's text as on disk, read when the document was opened or saved (`None`: it could
    /// not be read).
    disk: Option<String>,
    /// Buffer line of each disk line, when they differ (computed when first asked).
    map: Option<Option<Vec<Option<u32>>>>,
}

impl Doc {
    /// A document opened with `text`; `disk` is the file's text now.
    pub fn new(path: std::path::PathBuf, text: String, version: i32, disk: Option<String>) -> Doc {
        Doc {
            path,
            lines: Lines::new(&text),
            text,
            version,
            disk,
            map: None,
        }
    }

    /// Applies the client's changes (whole texts, or ranges in `enc`) in order.
    pub fn change(
        &mut self,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        enc: Encoding,
    ) {
        for c in changes {
            match c.range {
                None => self.text = c.text,
                Some(r) => {
                    let (Some(a), Some(b)) = (self.offset(r.start, enc), self.offset(r.end, enc))
                    else {
                        // A range past the end: appended.
                        self.text.push_str(&c.text);
                        self.lines = Lines::new(&self.text);
                        continue;
                    };
                    let (a, b) = (a.min(b), a.max(b));
                    self.text.replace_range(a..b, &c.text);
                }
            }
            self.lines = Lines::new(&self.text);
        }
        self.version = version;
        self.map = None;
    }

    /// The file was saved (with its text when the client sends it) and re-indexed: the disk is
    /// the buffer again, or `disk` when given.
    pub fn saved(&mut self, disk: Option<String>) {
        self.disk = disk;
        self.map = None;
    }

    /// True when the buffer holds edits the disk (and so the index) does not.
    pub fn dirty(&self) -> bool {
        self.disk.as_deref() != Some(self.text.as_str())
    }

    /// The byte offset of `pos`, a position past the last line being `None`.
    pub fn offset(&self, pos: Position, enc: Encoding) -> Option<usize> {
        if pos.line as usize == self.lines.count() {
            return Some(self.text.len());
        }
        self.lines.offset(&self.text, pos, enc)
    }

    /// Where line `line` (0-based) of the file as indexed is in the buffer.
    pub fn map_line(&mut self, line: u32) -> Mapped {
        let map = self.map.get_or_insert_with(|| {
            let disk = self.disk.as_deref()?;
            (disk != self.text).then(|| line_map(disk, &self.text))
        });
        match map {
            None if self.disk.is_some() => Mapped::At(line),
            None => Mapped::Changed,
            Some(m) => match m.get(line as usize) {
                Some(Some(b)) => Mapped::At(*b),
                _ => Mapped::Changed,
            },
        }
    }

    /// The range of the `len` bytes at byte column `col` (0-based) of buffer line `line`.
    pub fn range(&self, line: u32, col: usize, len: usize, enc: Encoding) -> Range {
        let text = self
            .lines
            .line(&self.text, line as usize)
            .unwrap_or_default();
        range_on(text, line, col, len, enc)
    }
}

/// The range of the `len` bytes at byte column `col` of `text`, line `line`.
pub fn range_on(text: &str, line: u32, col: usize, len: usize, enc: Encoding) -> Range {
    let start = super::position::char_of(text, col, enc);
    let end = super::position::char_of(text, col + len, enc);
    Range::new(Position::new(line, start), Position::new(line, end))
}

/// For each line of `old`, the line of `new` holding it unchanged, by a line diff.
fn line_map(old: &str, new: &str) -> Vec<Option<u32>> {
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mut map = vec![None; Lines::new(old).count()];
    for op in diff.ops() {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = *op
        {
            for i in 0..len {
                if let Some(slot) = map.get_mut(old_index + i) {
                    *slot = Some((new_index + i) as u32);
                }
            }
        }
    }
    map
}

/// The open documents, by URI.
#[derive(Default)]
pub struct Buffers {
    docs: HashMap<String, Doc>,
}

impl Buffers {
    /// Opens (or reopens) `uri`.
    pub fn open(&mut self, uri: &Uri, doc: Doc) {
        self.docs.insert(uri.as_str().to_string(), doc);
    }

    /// Closes `uri`.
    pub fn close(&mut self, uri: &Uri) {
        self.docs.remove(uri.as_str());
    }

    /// The open document `uri`.
    pub fn get(&self, uri: &Uri) -> Option<&Doc> {
        self.docs.get(uri.as_str())
    }

    /// The open document `uri`, to change.
    pub fn get_mut(&mut self, uri: &Uri) -> Option<&mut Doc> {
        self.docs.get_mut(uri.as_str())
    }

    /// The URIs of the open documents.
    pub fn uris(&self) -> Vec<Uri> {
        self.docs.keys().filter_map(|k| k.parse().ok()).collect()
    }

    /// The open document of file `path`, to map lines through.
    pub fn by_path_mut(&mut self, path: &std::path::Path) -> Option<&mut Doc> {
        self.docs.values_mut().find(|d| d.path == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(disk: &str) -> Doc {
        Doc::new("/t/a.c".into(), disk.into(), 1, Some(disk.into()))
    }

    #[test]
    fn lines_inserted_above_move_the_lines_below_and_a_changed_line_is_gone() {
        let mut d = doc("a\nb\nc\nd\n");
        assert_eq!(d.map_line(2), Mapped::At(2));
        let change = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(0, 0), Position::new(0, 0))),
            range_length: None,
            text: "x\ny\n".into(),
        };
        d.change(2, vec![change], Encoding::Utf16);
        assert_eq!(d.text, "x\ny\na\nb\nc\nd\n");
        assert!(d.dirty());
        assert_eq!(d.map_line(2), Mapped::At(4));
        let edit = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(5, 0), Position::new(5, 1))),
            range_length: None,
            text: "D".into(),
        };
        d.change(3, vec![edit], Encoding::Utf16);
        assert_eq!(d.map_line(3), Mapped::Changed);
        d.saved(Some(d.text.clone()));
        assert!(!d.dirty());
        assert_eq!(d.map_line(3), Mapped::At(3));
    }

    #[test]
    fn a_utf16_range_edit_lands_on_the_right_bytes() {
        let mut d = doc("s = \"\u{1F600}\"; f();\n");
        let edit = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(0, 10), Position::new(0, 11))),
            range_length: None,
            text: "g".into(),
        };
        d.change(2, vec![edit], Encoding::Utf16);
        assert_eq!(d.text, "s = \"\u{1F600}\"; g();\n");
    }
}
