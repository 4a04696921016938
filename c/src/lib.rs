//! knav-c: knav's C analysis. Its one job is to read the bytes of C source and say what they
//! hold; it opens no file and knows nothing of paths on disk, indexes or queries (`knav-index`
//! reads the files and stores what this crate finds, `knav-query` answers questions from it).
//!
//! - [`lex`]: C's lexical skips, written once (comments, string and character literals, line
//!   continuations).
//! - [`scan`]: the scanner of one file: identifier occurrences, `#define`s, the guard stack,
//!   spans opaque to ctags, include guards.
//! - [`guard`]: the `#if` guard stack, which conditions enclose each line.
//! - [`indirect`]: calls through function pointers, as far as one file shows them.
//! - [`macrodefs`]: the names kernel macros create at their invocations.
//! - [`membercall`]: calls through members that function-like macros make, learned from
//!   their `#define`s.
//! - [`definers`]: macros that define what their arguments name, learned from their
//!   `#define`s (the files they are read from are given as bytes by the caller).
//! - [`spans`]: the top-level definitions of one file with their lines, by braces, without
//!   ctags (the history index reads every version of a file).
//! - [`keep`]: how much of a reused working vector a build thread keeps between files.
#![deny(missing_docs)]

pub mod definers;
pub mod guard;
pub mod indirect;
pub mod keep;
pub mod lex;
pub mod macrodefs;
pub mod membercall;
pub mod scan;
pub mod spans;

/// Cases a property test runs: its own count `n`, or `PROPTEST_CASES` when set
/// (`ProptestConfig::with_cases` alone would ignore the variable the README gives).
#[cfg(test)]
pub(crate) fn proptest_cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(n)
}
