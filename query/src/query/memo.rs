//! What one question learns while it is answered, kept until it is: source texts and windows
//! read, each file's facts decoded, guard conditions and Kbuild atoms evaluated under the active
//! config, its architecture, and the columns of the last long line. A [`super::Query`] is a view
//! of one snapshot plus one of these; nothing here outlives the question.

use std::cell::RefCell;
use std::collections::HashMap;

use super::{source, Decided, FileFacts, FileKey, LineKey, LineNames};

/// The per-question caches of a [`super::Query`].
#[derive(Default)]
pub(super) struct Memo {
    /// Whole source files read, by path (`None`: it could not be read).
    pub(super) sources: RefCell<HashMap<String, Option<std::rc::Rc<source::SourceText>>>>,
    /// Per file, the last window of lines read ([`super::Query::text_at`]) and how many were read.
    pub(super) windows: RefCell<HashMap<FileKey, (std::rc::Rc<source::SourceText>, u32)>>,
    /// Per file, decoded once per query: its guards (`None`: not scanned) and function ranges.
    pub(super) files: RefCell<knav_index::NameMap<(usize, u32), std::rc::Rc<FileFacts>>>,
    /// Each guard condition evaluated under the active config once per query (a hot name's
    /// references repeat the same few conditions thousands of times).
    pub(super) decided: RefCell<knav_index::NameMap<String, Decided>>,
    /// The file asked about last: postings come in file order.
    pub(super) last_file: RefCell<Option<(FileKey, std::rc::Rc<FileFacts>)>>,
    /// Kbuild atoms evaluated under the active config, by id, once per query.
    pub(super) kbuild_atoms: RefCell<knav_index::buildfiles::AtomCache>,
    /// Kbuild atoms evaluated with every symbol `y` ([`super::Query::rare`]).
    pub(super) all_yes_atoms: RefCell<knav_index::buildfiles::AtomCache>,
    /// Kbuild atoms evaluated with no symbol set ([`super::Query::rare`]).
    pub(super) all_no_atoms: RefCell<knav_index::buildfiles::AtomCache>,
    /// [`super::Query::rare`] of each path asked.
    pub(super) rare: RefCell<HashMap<String, bool>>,
    /// The active config's architecture, looked up once.
    pub(super) arch: std::cell::OnceCell<Option<&'static str>>,
    /// The last line longer than [`super::LONG_LINE`] asked for a column, and where each name is on it.
    pub(super) long_line: RefCell<Option<(LineKey, LineNames)>>,
}
