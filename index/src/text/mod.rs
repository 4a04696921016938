//! The text index behind `knav grep` (MCP `search_text`): every file rg searches, a trigram
//! index of them, and the search that answers a pattern from it with exactly rg's lines.
//!
//! The index is a part of its own (`tx-…`, named by the manifest, published with it): a base
//! of trigram postings over the files as they were when it was built, and an overlay in the
//! manifest, recomputed at every refresh, of the files changed or added since (read by every
//! search) and of those deleted (left out). When the overlay grows past [`MAX_OVERLAY`] files,
//! the base is built again.

pub mod index;
pub mod plan;
pub mod search;
pub mod walk;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::codec::{put_str, put_varint, Reader};
use crate::error::IndexError;
use walk::{TextCache, TextDir, TextFile};

/// The overlay holds at most this many files (or 5% of the tree, if more) before the base is
/// built again.
pub const MAX_OVERLAY: usize = 2000;

/// The text part of a manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextRef {
    /// Directory name inside the index directory.
    pub dir: String,
    /// Files rg searches in the tree now (the base's, less the deleted, plus the new).
    pub files: u64,
    /// Bytes of those files.
    pub bytes: u64,
    /// Bytes of the base on disk.
    pub index_bytes: u64,
    /// Files of the base with a NUL byte (rg reads them only up to it).
    pub binary: u64,
    /// Files of the base that hold no trigrams (too large, unreadable), sorted: read by every
    /// search.
    pub unindexed: Vec<String>,
    /// Files changed or added since the base was built, sorted: read by every search.
    pub dirty: Vec<String>,
    /// Files of the base deleted since, sorted.
    pub deleted: Vec<String>,
    /// The previous generation's directory, kept while readers may use it.
    pub previous: Option<String>,
    /// Each file of the base with its checksum, for damage checks.
    #[serde(default)]
    pub checksums: Vec<(String, u64)>,
}

/// The text part for the files `walked` found: the old base with a new overlay, or a new base
/// (with `rebuild`, without an old one, or when the overlay would be too large), whose proof
/// goes into the fact store at `proofs` ([`crate::factstore::Prover`]).
#[allow(clippy::too_many_arguments)]
pub fn update(
    root: &Path,
    index_dir: &Path,
    walked: &[TextFile],
    old: Option<&TextRef>,
    rebuild: bool,
    restat: &crate::restat::Restat,
    proofs: Option<&Path>,
    files_read: &dyn Fn(),
) -> Result<TextRef, String> {
    if let Some(old) = old.filter(|_| !rebuild) {
        if let Ok(base) = index::TextIndex::open(&index_dir.join(&old.dir)) {
            let (dirty, deleted) = overlay(root, &base, walked, restat);
            let limit = MAX_OVERLAY.max(walked.len() / 20);
            if dirty.len() + deleted.len() <= limit {
                return Ok(TextRef {
                    files: walked.len() as u64,
                    dirty,
                    deleted,
                    previous: None,
                    ..old.clone()
                });
            }
        }
    }
    // Made and opened through the index directory's descriptor; written through its own.
    let dir = crate::indexdir::Part::make(index_dir, "tx").map_err(|e| {
        format!(
            "cannot create the text part in {}: {e}",
            index_dir.display()
        )
    })?;
    let prover = crate::factstore::Prover::new(proofs, dir.name());
    let stats = match index::build(root, walked, dir.via(), prover.as_ref(), files_read) {
        Ok(s) => s,
        Err(e) => {
            let e = crate::indexdir::shown_text(&e);
            dir.remove();
            return Err(e);
        }
    };
    if let Some(p) = prover {
        p.finish();
    }
    Ok(TextRef {
        dir: dir.name().to_string(),
        files: stats.files,
        bytes: stats.bytes,
        index_bytes: stats.index_bytes,
        binary: stats.binary,
        unindexed: stats.unindexed,
        checksums: stats.checksums,
        dirty: Vec::new(),
        deleted: Vec::new(),
        previous: old.map(|o| o.dir.clone()),
    })
}

/// The files of `walked` that differ from `base` (changed or new) and those of `base` that are
/// gone; both sorted. A file of the same size with another mtime is read: if its bytes are the
/// base's, it did not change.
fn overlay(
    root: &Path,
    base: &index::TextIndex,
    walked: &[TextFile],
    restat: &crate::restat::Restat,
) -> (Vec<String>, Vec<String>) {
    let mut dirty = Vec::new();
    let mut deleted = Vec::new();
    let mut id = 0u32;
    let n = base.len() as u32;
    let opener = search::Opener::new(root);
    for f in walked {
        while id < n && base.entry(id).path < f.path.as_str() {
            deleted.push(base.entry(id).path.to_string());
            id += 1;
        }
        let e = (id < n).then(|| base.entry(id));
        match e {
            Some(e) if e.path == f.path => {
                let same = e.size == f.size
                    && (e.mtime_ns == f.mtime_ns
                        || restat.same(&f.path, e.mtime_ns, f.mtime_ns)
                        || e.hash != 0 && same_bytes(&opener, f, e.hash));
                if !same {
                    dirty.push(f.path.clone());
                }
                id += 1;
            }
            _ => dirty.push(f.path.clone()),
        }
    }
    while id < n {
        deleted.push(base.entry(id).path.to_string());
        id += 1;
    }
    (dirty, deleted)
}

/// True when `f` still has the bytes whose hash is `hash`.
fn same_bytes(opener: &search::Opener, f: &TextFile, hash: u64) -> bool {
    opener
        .read(&f.path)
        .is_some_and(|b| crate::codec::hash64(&b) == hash)
}

impl crate::part::Part for index::TextIndex {
    const KIND: crate::part::Kind = crate::part::Kind::Text;
    type Ref = TextRef;
    type Open = index::TextIndex;

    fn open(index_dir: &Path, r: &TextRef) -> Result<index::TextIndex, IndexError> {
        let dir = index_dir.join(&r.dir);
        index::TextIndex::open(&dir).map_err(|e| IndexError::damaged(dir, e))
    }

    fn stamp<'a>(
        r: &'a TextRef,
        _: Option<&'a index::TextIndex>,
    ) -> Option<crate::part::Stamp<'a>> {
        Some(crate::part::Stamp::new(Self::KIND, &r.dir, &r.checksums))
    }
}

/// The file the text walk's listings are kept in.
const CACHE_FILE: &str = "text-walk";
/// The kind of the cache file in its [`crate::format::header`].
const CACHE_KIND: &[u8; 4] = b"TWLK";

/// The listings of the last text walk, and the text part they were taken for; `None` when
/// missing, damaged or naming a path outside the root (the walk then lists the whole tree).
pub fn read_cache(index_dir: &Path) -> Option<(TextCache, String)> {
    let bytes = crate::indexdir::IndexDir::read_cache(index_dir, CACHE_FILE)?;
    crate::format::check_header(&bytes, CACHE_KIND, Path::new(CACHE_FILE)).ok()?;
    let rest = &bytes[crate::format::HEADER_LEN..];
    let mut r = Reader::new(rest);
    let part = String::from_utf8(r.str().to_vec()).ok()?;
    let taken_ns = r.varint() as i64;
    let n = r.varint() as usize;
    // A listing takes three bytes or more.
    let mut dirs = Vec::with_capacity(r.room_for(n as u64, 3));
    let ignores = |r: &mut Reader<'_>| -> Option<Vec<(String, u64, i64)>> {
        let k = r.varint() as usize;
        let mut v = Vec::with_capacity(k.min(1 << 16));
        for _ in 0..k {
            let name = std::str::from_utf8(r.str()).ok()?.to_string();
            v.push((name, r.varint(), r.varint() as i64));
            if r.overrun {
                return None;
            }
        }
        Some(v)
    };
    for _ in 0..n {
        let path = std::str::from_utf8(r.str()).ok()?.to_string();
        let mtime_ns = r.varint() as i64;
        let k = r.varint() as usize;
        let text = std::str::from_utf8(r.str()).ok()?;
        let mut names = crate::tree::walk::Names::with_capacity(k.min(1 << 16), text.len());
        let mut stats = Vec::with_capacity(k.min(1 << 16));
        let mut at = 0;
        for _ in 0..k {
            let len = r.varint() as usize;
            names.push(text.get(at..at + len)?);
            at += len;
            stats.push((r.varint(), r.varint() as i64));
            if r.overrun {
                return None;
            }
        }
        let ignores = ignores(&mut r)?;
        // A forged cache must not make the walk list or stat a directory outside the root.
        let one = |n: &str| crate::tree::walk::is_one_name(n.as_bytes());
        let below = crate::tree::walk::is_path_below_root(path.as_bytes())
            && names.iter().all(one)
            && ignores.iter().all(|i| one(&i.0));
        if !below {
            return None;
        }
        dirs.push(TextDir {
            path,
            mtime_ns,
            names,
            stats,
            ignores,
        });
        if r.overrun {
            return None;
        }
    }
    (!r.overrun && r.at_end()).then_some((TextCache { taken_ns, dirs }, part))
}

/// Writes the listings `cache`, taken for the text part `part`, atomically.
pub fn write_cache(index_dir: &Path, cache: &TextCache, part: &str) -> Result<(), String> {
    let mut out = crate::format::header(CACHE_KIND).to_vec();
    put_str(&mut out, part.as_bytes());
    put_varint(&mut out, cache.taken_ns as u64);
    put_varint(&mut out, cache.dirs.len() as u64);
    let stats = |out: &mut Vec<u8>, v: &[(String, u64, i64)]| {
        put_varint(out, v.len() as u64);
        for (name, size, mtime) in v {
            put_str(out, name.as_bytes());
            put_varint(out, *size);
            put_varint(out, *mtime as u64);
        }
    };
    for d in &cache.dirs {
        put_str(&mut out, d.path.as_bytes());
        put_varint(&mut out, d.mtime_ns as u64);
        // The names back to back, then each name's length and stats.
        put_varint(&mut out, d.names.len() as u64);
        let text: String = d.names.iter().collect();
        put_str(&mut out, text.as_bytes());
        for (name, (size, mtime)) in d.names.iter().zip(&d.stats) {
            put_varint(&mut out, name.len() as u64);
            put_varint(&mut out, *size);
            put_varint(&mut out, *mtime as u64);
        }
        stats(&mut out, &d.ignores);
    }
    // Through the index directory's descriptor: never through a link planted under the name.
    let io =
        |e: std::io::Error| format!("cannot write {}: {e}", index_dir.join(CACHE_FILE).display());
    let dir = crate::indexdir::IndexDir::open(index_dir).map_err(io)?;
    dir.replace(CACHE_FILE, &out, false).map_err(io)
}
