//! knav: a code navigator for the Linux kernel and other large C trees.
//!
//! Data flows one way: [`walk`] finds the files, [`scan`] (knav's own scanner) and the
//! `knav-ctags` crate (universal-ctags) read them, [`index`] writes and publishes the index,
//! [`query`] answers a question with an [`envelope::Envelope`], and [`render`] turns that
//! envelope into compact text or JSON. The CLI ([`cli`]) only wires these together.
#![deny(missing_docs)]

pub mod cli;
pub mod definers;
pub mod envelope;
pub mod guard;
pub mod index;
pub mod macrodefs;
pub mod progress;
pub mod query;
pub mod render;
pub mod request;
pub mod scan;
pub mod serve;
pub mod settings;
pub mod walk;
