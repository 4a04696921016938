//! The documentation part of the index behind `knav docs` (MCP `search_docs`): the tree's
//! `Documentation/` `.rst` and `.txt` files cut into sections ([`sections`]), their search
//! words ([`words`]) in an inverted index ([`part`]), ranked by BM25F ([`rank`]).
//!
//! The part's files are the ones the text walk lists (rg's file set): a refresh whose text
//! walk found every file as cached keeps the part without looking at it; otherwise the part is
//! built again, whole, when a documentation file was added, removed or changed.

pub mod part;
pub mod rank;
pub mod sections;
pub mod words;

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::codec::{hash64, put_str};
use crate::error::IndexError;
use crate::text::walk::TextFile;

/// Where the documentation part is, as the manifest names it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocsRef {
    /// Directory name inside the index directory.
    pub dir: String,
    /// [`fingerprint`] of the documentation files it was built from.
    pub fingerprint: u64,
    /// Documentation files read.
    pub files: u64,
    /// Sections indexed.
    pub sections: u64,
    /// [`content_hash`] of the documentation files: a file touched but not changed keeps the
    /// part.
    pub content: u64,
    /// Each file of the part with its checksum, for damage checks.
    pub checksums: Vec<(String, u64)>,
    /// The previous generation's directory, kept for readers that opened it.
    pub previous: Option<String>,
}

/// Documentation files larger than this are not read (the kernel's largest is under 1 MB).
const MAX_DOC_BYTES: u64 = 8 << 20;

/// True for a root-relative path search_docs indexes: a `.rst` or `.txt` file under
/// `Documentation/`.
pub fn is_doc_path(path: &str) -> bool {
    path.starts_with("Documentation/") && (path.ends_with(".rst") || path.ends_with(".txt"))
}

/// A hash of the paths, sizes and mtimes of `files`.
fn fingerprint(files: &[TextFile]) -> u64 {
    let mut buf = Vec::new();
    for f in files {
        put_str(&mut buf, f.path.as_bytes());
        buf.extend_from_slice(&f.size.to_le_bytes());
        buf.extend_from_slice(&f.mtime_ns.to_le_bytes());
    }
    hash64(&buf)
}

/// A hash of the paths and contents of `files` (each read and hashed on its own, in
/// parallel); one that cannot be read counts as empty.
fn content_hash(root: &Path, files: &[TextFile]) -> u64 {
    use rayon::prelude::*;
    let beneath = crate::tree::beneath::Root::open(root).ok();
    let hashes: Vec<u64> = files
        .par_iter()
        .map(|f| {
            let bytes = beneath.as_ref().and_then(|b| b.read(&f.path).ok());
            hash64(bytes.as_deref().unwrap_or_default())
        })
        .collect();
    combine(files.iter().map(|f| f.path.as_str()).zip(hashes))
}

/// One hash of `(path, content hash)` pairs.
fn combine<'a>(files: impl Iterator<Item = (&'a str, u64)>) -> u64 {
    let mut buf = Vec::new();
    for (path, h) in files {
        put_str(&mut buf, path.as_bytes());
        buf.extend_from_slice(&h.to_le_bytes());
    }
    hash64(&buf)
}

/// The tree's documentation files against the index's documentation part.
pub struct DocsState {
    /// The documentation files, in path order.
    files: Vec<TextFile>,
    /// Their [`fingerprint`].
    fingerprint: u64,
    /// The index's part.
    old: Option<DocsRef>,
    /// True when the index's part (or its absence) still fits the tree.
    pub same: bool,
}

impl DocsState {
    /// Compares the documentation among `listed`, every file the text walk found in path
    /// order, with `old`, the index's part; `listed` is `None` when that walk found every file
    /// as cached: the part stays.
    pub fn of(root: &Path, old: Option<&DocsRef>, listed: Option<&[TextFile]>) -> DocsState {
        let Some(listed) = listed else {
            return DocsState {
                files: Vec::new(),
                fingerprint: 0,
                old: old.cloned(),
                same: true,
            };
        };
        let files: Vec<TextFile> = listed
            .iter()
            .filter(|f| is_doc_path(&f.path) && f.size <= MAX_DOC_BYTES)
            .cloned()
            .collect();
        let fingerprint = fingerprint(&files);
        let same = match old {
            Some(d) => d.fingerprint == fingerprint || d.content == content_hash(root, &files),
            None => files.is_empty(),
        };
        DocsState {
            files,
            fingerprint,
            old: old.cloned(),
            same,
        }
    }

    /// The part for the new manifest: the index's when it still fits, none without
    /// documentation files, else a new one built whole in `index_dir`, its proof written into
    /// the fact store at `proofs` ([`crate::factstore::Prover`]); with a one-line summary of a
    /// new one.
    pub fn part(
        &self,
        root: &Path,
        index_dir: &Path,
        proofs: Option<&Path>,
    ) -> Result<(Option<DocsRef>, Option<String>), IndexError> {
        if self.same {
            let kept = self.old.clone().map(|d| DocsRef {
                previous: None,
                ..d
            });
            return Ok((kept, None));
        }
        if self.files.is_empty() {
            return Ok((None, None));
        }
        let started = Instant::now();
        // Made and opened through the index directory's descriptor; written through its own.
        let dir = crate::indexdir::Part::make(index_dir, "kd").map_err(IndexError::io(
            "cannot create the documentation part in",
            index_dir,
        ))?;
        let prover = crate::factstore::Prover::new(proofs, dir.name());
        let built = match part::build(root, &self.files, dir.via(), prover.as_ref()) {
            Ok(b) => b,
            Err(e) => {
                let e = e.shown();
                dir.remove();
                return Err(e);
            }
        };
        if let Some(p) = prover {
            p.finish();
        }
        let summary = format!(
            "documentation (knav docs): {} files, {} sections, {:.1} MB, in {} ms",
            built.files,
            built.sections,
            built.bytes as f64 / 1e6,
            started.elapsed().as_millis()
        );
        let part = DocsRef {
            dir: dir.name().to_string(),
            fingerprint: self.fingerprint,
            files: built.files,
            sections: built.sections,
            content: built.content,
            checksums: built.checksums,
            previous: self.old.as_ref().map(|d| d.dir.clone()),
        };
        Ok((Some(part), Some(summary)))
    }
}

impl crate::part::Part for part::Docs {
    const KIND: crate::part::Kind = crate::part::Kind::Docs;
    type Ref = DocsRef;
    type Open = part::Docs;

    fn open(index_dir: &Path, r: &DocsRef) -> Result<part::Docs, IndexError> {
        part::Docs::open(&index_dir.join(&r.dir))
    }

    fn stamp<'a>(r: &'a DocsRef, _: Option<&'a part::Docs>) -> Option<crate::part::Stamp<'a>> {
        Some(crate::part::Stamp::new(Self::KIND, &r.dir, &r.checksums))
    }
}
