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

pub mod alloc;
pub mod beneath;
pub mod cli;
pub mod diff;
pub mod edit;
pub mod envelope;
pub mod index;
pub mod maintainers;
pub mod pathname;
pub(crate) mod prefetch;
pub mod progress;
pub mod query;
pub mod rank;
pub mod render;
pub mod request;
pub mod serve;
pub mod settings;
pub mod status;
pub mod tools;
pub mod walk;

pub(crate) use knav_c::keep;
/// knav's C analysis, in the `knav-c` crate: every `crate::scan`, `crate::guard`, … path of
/// knav names it.
pub use knav_c::{definers, guard, indirect, lex, macrodefs, scan};

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
