//! Answering questions from an open index: each tool builds an [`crate::envelope::Envelope`].
//!
//! A tool module reads top-down: look the name up (`lookup`, ranked by `ranking`), filter by
//! the active config (`verdict`), cut the page (`page`), make the rows (`record`, with
//! `snippet`'s source lines and `guard`'s `#if` guards). They all work on one [`Query`]: the
//! snapshot, the page asked for, and what the question has read so far (`memo`).

pub(crate) mod body;
pub(crate) mod callees;
pub(crate) mod callers;
pub(crate) mod code;
pub(crate) mod def;
pub(crate) mod device;
mod device_drivers;
pub(crate) mod docs;
pub(crate) mod files;
pub(crate) mod find;
pub mod fuzzy;
pub(crate) mod grep;
pub mod impact;
mod indirect;
mod learned;
mod memo;
mod nearmiss;
pub(crate) mod reach;
pub(crate) mod refs;
pub(crate) mod review;
pub mod source;
mod span;
mod structs;
pub(crate) mod symbols;
mod vocab;
mod why;
mod zeroed;

mod guard;
mod lookup;
mod page;
mod ranking;
mod record;
mod snippet;
mod verdict;

use std::cell::RefCell;

use knav_index::store::Snapshot;

pub use body::get_symbol_body;
pub use callees::find_callees;
pub use callers::find_callers;
pub use code::{comment_words, search_code, Scope};
pub use def::{find_definition, find_tag, mark_resolved, resolved, several};
pub use device::find_device;
pub use docs::search_docs;
pub use files::search_files;
pub use find::{parse_kind, search_symbols};
pub use grep::{search_text, GrepAsk, GrepMode, MAX_CONTEXT};
pub use impact::change_impact;
pub use indirect::{stored_in, stores_of};
pub use reach::reachability;
pub use refs::{find_references, GroupBy};
pub use review::review_diff;
pub use symbols::list_file_symbols;

pub use knav_index::rank::rank;

pub use body::MAX_BODY_LINES;
pub use lookup::{valid_name, Found, Visit};
pub use page::{Page, DEFAULT_LIMIT, EVERY, MAX_LIMIT};
pub use source::MAX_LINE_CHARS;
pub use verdict::Verdict;

/// A query against one snapshot.
pub struct Query<'s> {
    /// The index.
    pub snap: &'s Snapshot,
    /// Paging.
    pub page: Page,
    limit: u64,
    clamped: Option<u64>,
    /// What this question has read, decoded and evaluated so far.
    memo: memo::Memo,
    /// Files not read because they changed since indexing (now a link, …), with what they are.
    pub changed: RefCell<Vec<(String, &'static str)>>,
}

impl<'s> Query<'s> {
    /// A query with `page`; an absurd limit is clamped (and reported by [`Query::envelope`]).
    pub fn new(snap: &'s Snapshot, page: Page) -> Query<'s> {
        let (limit, clamped) = page.effective_limit();
        Query {
            snap,
            page,
            limit,
            clamped,
            memo: memo::Memo::default(),
            changed: RefCell::new(Vec::new()),
        }
    }
}
