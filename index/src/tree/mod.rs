//! The tree unit: how the index reaches a source tree, and which of its files it takes.
//!
//! - [`beneath`]: every file operation below a root, through a descriptor of the root, never a
//!   path string checked first and used later.
//! - [`pathname`]: root-relative paths as knav keeps them (any file name's bytes).
//! - [`walk`]: which files knav indexes and which it only counts.
//! - [`settings`]: the tree's own `.knav.toml` (what the walk ignores, ctags options, the
//!   server's refresh).
//!
//! The unit depends on no other part of the index but the fact store's location
//! ([`crate::factstore::FactStore::default_dir`]) and the layout of knav's own directories
//! ([`crate::indexdir`]); everything else reads the tree through it.

pub mod beneath;
pub mod pathname;
pub mod settings;
pub mod walk;
