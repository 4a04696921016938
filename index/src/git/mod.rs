//! The git unit: everything knav asks of a git repository, and what it keeps of one.
//!
//! - `plumbing`: git run as a program, with a scrubbed environment: a revision resolved, a
//!   tree listed, blobs read, a diff, the commits of a range. Its items are re-exported here.
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

pub use self::plumbing::{
    check_gitdir, diff, environment_note, git, honoured_variables, is_object_id, list_tree,
    nearest_refs, note_environment, range_diff, read_blobs, resolve, rev_list, scrub_environment,
    Entry, EntryKind, GitError, Quoted, Reaped, Resolved, MAX_REV_BYTES, PINNED,
};
