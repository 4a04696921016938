//! knav: a code navigator for the Linux kernel and other large C trees.
//!
//! Data flows one way: [`walk`] finds the files, [`beneath`] opens every file below the root
//! (never through a link), [`scan`] (knav's own scanner) and the `knav-ctags` crate
//! (universal-ctags) read them, [`index`] builds its parts (the symbol segment, text, docs, code
//! search, pointer calls, build files) and publishes them atomically, [`query`] answers a
//! question with an [`envelope::Envelope`], and [`render`] turns that envelope into compact
//! text or JSON. The CLI ([`cli`]) and the MCP server ([`serve`]) only wire these together
//! through [`request`]. No top-level module imports one that imports it back
//! (`tests/shape.rs`).
#![deny(missing_docs)]

pub mod cli;
pub mod diff;
pub mod edit;
pub mod envelope;
pub mod maintainers;
pub mod query;
pub mod render;
pub mod request;
pub mod serve;
pub mod status;
pub mod tools;

/// knav's C analysis, in the `knav-c` crate: every `crate::scan`, `crate::guard`, … path of
/// knav names it.
pub use knav_c::{definers, guard, indirect, lex, macrodefs, scan};
/// The index, in the `knav-index` crate: every `crate::index::…`, `crate::walk`, … path of knav
/// names it.
pub use knav_index as index;
pub use knav_index::{alloc, beneath, pathname, progress, rank, settings, walk};
