//! The git unit: everything knav asks of a git repository, and what it keeps of one.
//!
//! - `plumbing`: git run as a program, with a scrubbed environment: a revision resolved, a
//!   tree listed, blobs read, a diff, the commits of a range. What the other crates and the
//!   unit's own modules use of it is re-exported here.
//! - [`resolved`]: revisions resolved before, answered again without running git while the ref
//!   files that decided them are unchanged.
//! - [`revision`]: a revision's files as a directory (`revs/t-<tree id>/tree`) with its own
//!   index, made from its blobs and evicted least recently used first.
//! - [`history`]: the history index (which definitions each commit touched), built from the
//!   commits not seen yet.
//!
//! The unit reads the tree through [`crate::tree`] and knav's own directories through
//! [`crate::indexdir`]; nothing outside it runs git.

pub mod history;
mod plumbing;
pub mod resolved;
pub mod revision;

// What the other crates use.
pub use self::plumbing::{
    note_environment, range_diff, resolve, rev_list, scrub_environment, GitError, Quoted, Resolved,
};
// What the unit's own modules use (as `crate::git::…`).
pub(crate) use self::plumbing::{
    check_gitdir, git, honoured_variables, is_object_id, list_tree, read_blobs, Entry, EntryKind,
    Reaped, MAX_REV_BYTES,
};
