//! knav-index: the index of a tree, built, refreshed, published atomically and opened.
//!
//! The walk ([`tree::walk`]) finds the files; every file below the root is opened through
//! [`tree::beneath`]; the C analysis (the `knav-c` crate) and universal-ctags (`knav-ctags`) read
//! them; [`update`] builds and publishes the index's parts ([`part`]: the symbol segments,
//! build files, text and documentation) and [`store`] opens a consistent [`store::Snapshot`]
//! of them. Queries (the `knav-query` crate) read that snapshot.
#![deny(missing_docs)]

pub mod accum;
pub mod bm25;
pub mod build;
pub mod buildfiles;
pub mod code;
pub mod codec;
pub mod ctagstext;
pub mod damage;
pub mod defined;
mod definers_read;
pub mod disk;
pub mod distance;
pub mod docs;
pub mod error;
pub mod factstore;
mod filefacts;
pub mod format;
pub mod fstbuild;
pub mod git;
pub mod idlist;
pub mod indexdir;
pub mod indirect;
pub mod interrupt;
pub mod nameparts;
pub mod part;
pub mod postings;
pub mod restat;
pub mod scratch;
pub mod seed;
pub mod segment;
pub mod stats;
pub mod store;
pub mod text;
pub mod tree;

pub mod alloc;
pub(crate) mod prefetch;
pub mod printable;
pub mod progress;
pub mod rank;

mod update;

// The units' modules under their old names, for the other crates until they use the units.
pub use self::git::{history, resolved, revision};
pub use self::tree::{beneath, pathname, settings, walk};

pub use self::error::IndexError;
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
