//! What one question learns while it is answered, kept until it is: one cache per job, each
//! declared by the module that fills it (source texts and windows read, each file's facts
//! decoded, guard conditions and Kbuild atoms evaluated under the active config, which files
//! common builds leave out). A [`super::Query`] is a view of one snapshot plus one of these;
//! nothing here outlives the question.

use super::{guard, ranking, snippet, verdict};

/// The per-question caches of a [`super::Query`].
#[derive(Default)]
pub(super) struct Memo {
    /// Source files and windows of lines read, and the names on the last long line.
    pub(super) text: snippet::TextMemo,
    /// Each file's facts, decoded once.
    pub(super) files: guard::FileMemo,
    /// What the active config decided: guard conditions, Kbuild atoms, its architecture.
    pub(super) config: verdict::ConfigMemo,
    /// Which files common builds leave out ([`super::Query::rare`]).
    pub(super) rare: ranking::RareMemo,
}
