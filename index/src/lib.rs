//! knav-index: the index of a tree, built, refreshed, published atomically and opened.
//!
//! The walk ([`tree::walk`]) finds the files; every file below the root is opened through
//! [`tree::beneath`]; the C analysis (the `knav-c` crate) and universal-ctags (`knav-ctags`) read
//! them; [`update`] builds and publishes the index's parts (the symbol segments,
//! build files, text and documentation) and [`store`] opens a consistent [`store::Snapshot`]
//! of them. Queries (the `knav-query` crate) read that snapshot.
//!
//! What the crate offers the other crates, and nothing else:
//! - the units: [`tree`] (the source tree: files beneath a root, paths, the walk, settings),
//!   [`git`] (git run as a program, revisions, the history index), [`factstore`] (per-file
//!   facts by content), [`store`] (where an index lives, its manifest, a [`store::Snapshot`]);
//! - the parts a query reads from a snapshot: [`segment`] (with its records in [`format`]),
//!   [`text`], [`docs`], [`hw`], [`code`], [`buildfiles`]; [`bm25`] for ranked searches;
//! - [`update`], [`update_hinted`], [`verify`] and [`changes`], which build, refresh and check an
//!   index, with what they report; [`BuildOptions`];
//! - knav's own directories ([`indexdir`]), and what every front end shares: [`printable`]
//!   text, [`progress`] on a terminal, the binary's [`alloc`]ator, Ctrl-C during a build
//!   ([`interrupt`]), the order of definitions ([`rank`]);
//! - the few items of the build's own modules a query needs, re-exported below.
//!
//! Every other module is the crate's own (`pub(crate)` or private).
#![deny(missing_docs)]

pub mod alloc;
pub mod bm25;
pub mod buildfiles;
pub mod code;
pub mod docs;
pub mod factstore;
pub mod format;
pub mod git;
pub mod hw;
pub mod indexdir;
pub mod interrupt;
pub mod printable;
pub mod progress;
pub mod rank;
pub mod segment;
pub mod store;
pub mod text;
pub mod tree;

pub(crate) mod accum;
pub(crate) mod build;
pub(crate) mod codec;
mod ctagstext;
pub(crate) mod damage;
pub(crate) mod defined;
mod definers_read;
pub(crate) mod disk;
pub(crate) mod distance;
pub(crate) mod error;
mod filefacts;
pub(crate) mod fstbuild;
pub(crate) mod idlist;
pub(crate) mod indirect;
pub(crate) mod nameparts;
pub(crate) mod part;
pub(crate) mod postings;
pub(crate) mod prefetch;
pub(crate) mod restat;
mod scratch;
pub(crate) mod seed;
pub(crate) mod stats;
mod update;

pub use self::accum::NameMap;
pub use self::build::{counted_family, BuildOptions};
pub use self::codec::hash64;
pub use self::damage::checksum_at_open;
pub use self::defined::{NameInfo, PartsOf};
pub use self::distance::{edit_distance, Within};
pub use self::error::IndexError;
pub use self::nameparts::{at_boundary, intersect, path_separator};
pub use self::part::Part;
pub use self::restat::Restat;
pub use self::stats::{keep_top, DefLines, NameStats};
pub use self::update::{
    changes, update, update_hinted, verify, Changes, FactsReport, Trace, UpdateMode, UpdateReport,
};

/// Cases a property test runs: its own count `n`, or `PROPTEST_CASES` when set
/// (`ProptestConfig::with_cases` alone would ignore the variable the README gives).
#[cfg(test)]
pub(crate) fn proptest_cases(n: u32) -> u32 {
    cases_from(std::env::var("PROPTEST_CASES").ok().as_deref(), n)
}

#[cfg(test)]
fn cases_from(env: Option<&str>, n: u32) -> u32 {
    env.and_then(|v| v.trim().parse().ok()).unwrap_or(n)
}

#[cfg(test)]
mod tests {
    #[test]
    fn proptest_cases_in_the_environment_override_a_tests_own_count() {
        assert_eq!(super::cases_from(Some("100000"), 48), 100_000);
        assert_eq!(super::cases_from(None, 48), 48);
        assert_eq!(super::cases_from(Some("many"), 1000), 1000);
    }
}
