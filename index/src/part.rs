//! The one interface every index part keeps.
//!
//! An index is a manifest (`CURRENT`) naming directories of the index directory, one per part:
//! the symbol segments (`seg-…`), the build-file part (`kb-…`), the text part (`tx-…`), the
//! documentation part (`kd-…`), the hardware part (`hw-…`) and, in an index started from another tree's, the restat part
//! (`rs-…`). Every part is a [`Part`]: it has a [`Kind`] (its name and its
//! directories' prefix), a manifest entry (`Ref`) and an opened form (`Open`), and gives a
//! [`Stamp`] (its directory and the checksum
//! of each of its files). What is done to every part alike reads the stamps
//! ([`super::store::Snapshot::stamps`]): damage checks ([`super::store::check_stamped`]) and
//! `knav index --verify` ([`verify`]); the removal of what no manifest names
//! ([`super::store::remove_orphans`]) keeps every directory [`super::store::Manifest::part_dirs`]
//! lists and removes the others of every [`Kind`]'s prefix.
//!
//! A part built from the tree's files is also [`FromFacts`]: what one file contributes (its
//! `Facts`) comes from that file's path and bytes alone, and a [`Merge`] writes the part from
//! every file's facts in path order ([`build`] runs both, reading a batch of files in parallel
//! while the previous batch is merged). What comes from one file's bytes alone can be kept by
//! content and shared between trees.
//!
//! Adding a part: a module that implements [`Part`] (and [`FromFacts`]), a [`Kind`], and its
//! field in the manifest, listed by [`super::store::Manifest::part_dirs`] and
//! [`super::store::Snapshot::stamps`] (ARCHITECTURE.md, "Adding an index part").
//!
//! The symbol segment is a [`Part`]; its facts per file (the scanner's and ctags's) depend on
//! the definer macros learned from the whole tree and are made a chunk of files at a time for
//! one ctags run, merged by its own writer (`super::build`), not through [`FromFacts`]
//! (ARCHITECTURE.md, "How a build runs", says why).

use std::path::Path;

use super::error::IndexError;

/// Which part of an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The symbol segments: definitions, occurrences, guards, code search, pointer calls.
    Segment,
    /// What Kbuild builds under which conditions, and the Kconfig entries.
    BuildFiles,
    /// Trigram postings of every file rg searches (`knav grep`).
    Text,
    /// Sections of `Documentation/` (`knav docs`).
    Docs,
    /// The files an index started from another tree's proved unchanged under another
    /// modification time ([`super::restat::Restat`]).
    Restat,
    /// Device trees and binding schemas by compatible string (`knav device`).
    Hw,
}

impl Kind {
    /// Every kind, in the order a manifest lists them.
    pub const ALL: [Kind; 6] = [
        Kind::Segment,
        Kind::BuildFiles,
        Kind::Text,
        Kind::Docs,
        Kind::Restat,
        Kind::Hw,
    ];

    /// The kinds built from the tree's files: those a fact-store proof or another tree's
    /// index (the seed) may name.
    pub const BUILT: [Kind; 4] = [Kind::Segment, Kind::BuildFiles, Kind::Text, Kind::Docs];

    /// The prefix of the part's directories (`seg-…`, `kb-…`, `tx-…`, `kd-…`, `rs-…`, `hw-…`).
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Segment => "seg",
            Kind::BuildFiles => "kb",
            Kind::Text => "tx",
            Kind::Docs => "kd",
            Kind::Restat => "rs",
            Kind::Hw => "hw",
        }
    }
}

/// Where a part is and what its files must hash to.
#[derive(Clone, Copy, Debug)]
pub struct Stamp<'a> {
    /// Which part.
    pub kind: Kind,
    /// Its directory inside the index directory.
    pub dir: &'a str,
    /// Each file of the part with the checksum recorded when it was written.
    pub checksums: &'a [(String, u64)],
}

impl<'a> Stamp<'a> {
    /// The stamp of a part of `kind` in `dir` with `checksums`.
    pub fn new(kind: Kind, dir: &'a str, checksums: &'a [(String, u64)]) -> Stamp<'a> {
        Stamp {
            kind,
            dir,
            checksums,
        }
    }
}

/// One part of an index: its manifest entry, opened for reading, stamped for checks.
pub trait Part {
    /// Which part it is.
    const KIND: Kind;
    /// What the manifest records of a built part.
    type Ref;
    /// The part opened for reading.
    type Open;

    /// Opens the part `r` names in `index_dir`; a damaged part is an error saying where.
    fn open(index_dir: &Path, r: &Self::Ref) -> Result<Self::Open, IndexError>;

    /// Its stamp: from the manifest entry, or from the opened part for a part that keeps
    /// its checksums in its own directory.
    fn stamp<'a>(r: &'a Self::Ref, open: Option<&'a Self::Open>) -> Option<Stamp<'a>>;

    /// Re-reads every file of the part `r` names and compares it with its checksum.
    fn verify_files(
        index_dir: &Path,
        r: &Self::Ref,
        open: Option<&Self::Open>,
    ) -> Result<(), IndexError> {
        match Self::stamp(r, open) {
            Some(stamp) => verify(index_dir, &stamp),
            None => Ok(()),
        }
    }
}

/// A part built from per-file facts and a merge (a [`Merge`] of its `Facts`).
pub trait FromFacts: Part {
    /// What one file contributes: computed from its path and bytes alone.
    type Facts: Send;

    /// What the file at `path` contributes; `bytes` is `None` for a file that could not be
    /// read (or was not read: too large for the part).
    fn facts(path: &str, bytes: Option<&[u8]>) -> Self::Facts;
}

/// The merging side of a part's build: files' facts come in path order, a batch at a time.
pub trait Merge<F> {
    /// Takes the facts of the next `batch` of files.
    fn add(&mut self, batch: Vec<F>) -> Result<(), IndexError>;
}

/// Files read together before their facts are merged in path order.
pub const BATCH: usize = 1024;

/// Computes the facts of `files` (in path order) with `facts_of`, a batch at a time in
/// parallel, and hands each batch to `merge` in order while the next one is computed: neither
/// step alone keeps every core busy to its end (a large file, a long merge).
pub fn build<T, F, M>(
    files: &[T],
    facts_of: impl Fn(&T) -> F + Sync,
    merge: &mut M,
) -> Result<(), IndexError>
where
    T: Sync,
    F: Send,
    M: Merge<F> + Send,
{
    use rayon::prelude::*;
    let extract = |batch: &[T]| -> Vec<F> { batch.par_iter().map(&facts_of).collect() };
    let mut batches = files.chunks(BATCH);
    let mut got = batches.next().map(extract).unwrap_or_default();
    while !got.is_empty() {
        let batch = std::mem::take(&mut got);
        let (next, added) = rayon::join(
            || batches.next().map(extract).unwrap_or_default(),
            || merge.add(batch),
        );
        added?;
        got = next;
    }
    Ok(())
}

/// Re-reads every file `stamp` names and compares it with its checksum: `knav index --verify`
/// of one part.
pub fn verify(index_dir: &Path, stamp: &Stamp<'_>) -> Result<(), IndexError> {
    super::damage::verify_checksums(&index_dir.join(stamp.dir), stamp.checksums)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects what it is given, in the order given.
    struct Collect(Vec<usize>);

    impl Merge<usize> for Collect {
        fn add(&mut self, batch: Vec<usize>) -> Result<(), IndexError> {
            self.0.extend(batch);
            Ok(())
        }
    }

    #[test]
    fn facts_are_merged_in_file_order_across_batches() {
        let files: Vec<usize> = (0..BATCH * 3 + 7).collect();
        let mut merge = Collect(Vec::new());
        build(&files, |f| f * 2, &mut merge).unwrap();
        assert_eq!(merge.0, files.iter().map(|f| f * 2).collect::<Vec<_>>());
    }

    #[test]
    fn a_failed_merge_stops_the_build_with_its_error() {
        struct Fail(usize);
        impl Merge<u8> for Fail {
            fn add(&mut self, _: Vec<u8>) -> Result<(), IndexError> {
                self.0 += 1;
                Err(IndexError::Build("disk full".into()))
            }
        }
        let files = vec![0u8; BATCH * 4];
        let mut merge = Fail(0);
        let e = build(&files, |f| *f, &mut merge).unwrap_err();
        assert_eq!(merge.0, 1);
        assert!(e.to_string().contains("disk full"), "{e}");
    }

    #[test]
    fn every_kind_has_its_own_prefix_and_all_lists_them_in_order() {
        let prefixes: std::collections::HashSet<_> = Kind::ALL.iter().map(|k| k.prefix()).collect();
        assert_eq!(prefixes.len(), Kind::ALL.len());
        assert!(Kind::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Kind::BUILT, Kind::ALL[..4]);
    }
}
