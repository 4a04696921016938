//! knav: a code navigator for the Linux kernel and other large C trees: the CLI, the MCP
//! server and the one table of tools both serve.
//!
//! Data flows one way, through crates that hold it (ARCHITECTURE.md): `knav-c` reads the bytes
//! of one C file (the lexer, the scanner, `#if` guards, macro-made names, calls through
//! pointers); `knav-index` walks the tree, opens every file below the root, builds the index's
//! parts and publishes them atomically; `knav-query` answers a question against one snapshot
//! with an envelope and renders it as text or JSON. This crate only wires them together:
//! [`tools`] defines each tool once, [`cli`] and [`serve`] read that table and hand each
//! question to `knav_query::request`. The compiler keeps the direction (no crate names one
//! above it); `tests/shape.rs` keeps each crate's modules free of import cycles.
#![deny(missing_docs)]

pub mod cli;
pub mod cliwords;
pub mod cscope;
pub mod discover;
pub mod grepout;
pub mod lsp;
pub mod serve;
pub mod stale;
pub mod tools;
pub mod watchd;

/// knav's C analysis, in the `knav-c` crate: every `crate::scan`, `crate::guard`, … path of
/// knav names it.
pub use knav_c::{definers, guard, indirect, lex, macrodefs, scan};
/// The index, in the `knav-index` crate: every `crate::index::…`, `crate::walk`, … path of knav
/// names it.
pub use knav_index as index;
pub use knav_index::tree::{beneath, pathname, settings, walk};
pub use knav_index::{alloc, progress, rank};
/// The answers, in the `knav-query` crate: every `crate::query::…`, `crate::envelope`, … path of
/// knav names it.
pub use knav_query::{
    compare, diff, edit, envelope, history, maintainers, query, render, request, status,
};
