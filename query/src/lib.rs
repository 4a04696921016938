//! knav-query: questions asked of one index snapshot, answered with one envelope.
//!
//! A question from the CLI or the MCP server becomes a [`request::Ask`] and a
//! [`query::Page`], answered against one [`knav_index::store::Snapshot`] by [`query`] (one
//! module per tool) into an [`envelope::Envelope`], the one answer shape every tool returns;
//! [`render`] turns it into compact text or JSON. Beside them: [`status`] (index_status),
//! [`maintainers`] (who maintains a path), [`diff`] (unified diffs read for review) and
//! [`edit`] (replace_symbol and insert_symbol, written through `knav_index::tree::beneath`), and
//! [`compare`] (compare_versions: one symbol answered by two snapshots) and [`history`]
//! (symbol_history, from the history index).
#![deny(missing_docs)]

pub mod compare;
pub mod diff;
pub mod edit;
pub mod envelope;
pub mod history;
pub mod maintainers;
pub mod query;
pub mod render;
pub mod request;
pub mod status;
