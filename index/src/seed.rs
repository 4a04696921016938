//! A tree's first index started from another tree's: a copy or worktree of an indexed tree
//! (the same files at the same paths, but a few) costs only the files that differ.
//!
//! Every index built with a fact store is registered in it ([`register`]). A tree without
//! an index looks there for an index of another tree whose files it shares ([`seed`]): the
//! same paths with the same sizes for nearly all its C sources ([`MAX_OTHERS_SHARE`]), then the same
//! bytes, proven by the [`digest`] of each of its files against the one the store's proof of
//! the other index's segment lists ([`FactStore::proof_of`]). The index's own record of a
//! file is a [`hash64`], which another tree can forge: a file with the recorded size and
//! hash64 but no proof of its digest is a file a refresh would take for the other's, and
//! then nothing is linked. The other index's segments are linked (hard links: they are never
//! written again once published) into the new index directory and published under this
//! tree's root; its text, build-file and documentation parts are not (they record files by
//! hash64 alone) and are built whole by the update that follows, which finds what differs, as
//! a refresh does, and builds a delta of those files alone.
//!
//! The parts record the other tree's modification times. The files proven equal are listed
//! with both times in a restat part ([`crate::restat::Restat`], `rs-…`, named by the manifest): a refresh
//! takes a file whose stat is the listed one as unchanged, instead of hashing it again at
//! every refresh. A full build drops it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::codec::{digest, hash64};
use crate::factstore::{FactStore, Proven};
use crate::restat::FILE;
use crate::store::{Manifest, Snapshot};
use crate::walk::SourceFile;

/// Another index is linked as a tree's start when it holds more than half of the tree's C
/// sources at the same paths with the same size (and then the same bytes), and the others
/// are few enough for a delta: at most this share of the tree, or [`MAX_OTHERS`] files.
pub const MAX_OTHERS_SHARE: f64 = 0.05;
/// …or this many files.
pub const MAX_OTHERS: usize = 500;

/// Whether `shared` of `sources` files fit a start and a delta of the others.
fn fits(shared: usize, sources: usize) -> bool {
    let others = sources.saturating_sub(shared);
    shared * 2 > sources
        && (others as f64 <= MAX_OTHERS_SHARE * sources as f64 || others <= MAX_OTHERS)
}

/// The restat file in its directory.
/// Where a store lists the indexes built with it.
const REGISTRY: &str = "indexes";

/// Records in the store at `store_dir` that `index_dir` holds an index built with it.
pub fn register(store_dir: &Path, index_dir: &Path) {
    let Ok(abs) = std::fs::canonicalize(index_dir) else {
        return;
    };
    let text = abs.to_string_lossy().into_owned();
    let dir = store_dir.join(REGISTRY);
    let entry = dir.join(format!("{:016x}", hash64(text.as_bytes())));
    if entry.exists() || std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".tmp-{}", std::process::id()));
    if std::fs::write(&tmp, &text)
        .and_then(|()| std::fs::rename(&tmp, &entry))
        .is_err()
    {
        let _ = std::fs::remove_file(tmp);
    }
}

/// The indexes registered in the store at `store_dir`; entries of indexes gone are removed.
fn registered(store_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(store_dir.join(REGISTRY))
        .into_iter()
        .flatten()
        .flatten()
    {
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        // Never a FIFO or a link: it would hang or lead elsewhere.
        let mut text = String::new();
        let read = crate::factstore::open_regular(&e.path()).and_then(|f| {
            use std::io::Read;
            f.take(4096).read_to_string(&mut text)
        });
        if read.is_err() {
            continue;
        }
        let dir = PathBuf::from(text.trim_end());
        if dir.join("CURRENT").is_file() {
            out.push(dir);
        } else {
            let _ = std::fs::remove_file(e.path());
        }
    }
    out.sort();
    out
}

/// Where a new index was started from.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Seeded {
    /// The tree whose index was linked.
    pub from: String,
    /// Files proven to hold the bytes its index recorded.
    pub proven: u64,
}

/// Starts the index of `root` in `index_dir` (which holds none) from the registered index
/// that shares most of the C sources `sources` (the walk's), when one shares enough of them
/// ([`MAX_OTHERS_SHARE`]); publishes it and returns where it came from. Anything that does
/// not fit (another format, other options, a damaged part) means no seed: the update builds
/// the tree whole, as without a store.
pub fn seed(
    root: &Path,
    index_dir: &Path,
    sources: &[SourceFile],
    store_dir: &Path,
    options_hash: u64,
) -> Option<Seeded> {
    if sources.is_empty() {
        return None;
    }
    let here = std::fs::canonicalize(index_dir).ok();
    let by_path: HashMap<&str, &SourceFile> =
        sources.iter().map(|f| (f.path.as_str(), f)).collect();
    let mut best: Option<(usize, Snapshot, PathBuf)> = None;
    for dir in registered(store_dir) {
        if Some(&dir) == here.as_ref() {
            continue;
        }
        let Ok(Some(m)) = crate::store::read_manifest(&dir) else {
            continue;
        };
        if m.version != crate::format::VERSION || m.options_hash != options_hash {
            continue;
        }
        let Ok(Some(snap)) = Snapshot::open(Path::new(&m.root), &dir) else {
            continue;
        };
        let mut shared = 0usize;
        for (s, f) in snap.live_files() {
            let stat = snap.segments[s].file_stat(f);
            if by_path.get(stat.path).is_some_and(|b| b.size == stat.size) {
                shared += 1;
            }
        }
        if !fits(shared, sources.len()) {
            continue;
        }
        if best.as_ref().is_none_or(|b| shared > b.0) {
            best = Some((shared, snap, dir));
        }
    }
    let (_, snap, from) = best?;
    let manifest = snap.manifest.clone();
    let proven = prove(root, store_dir, &snap)?;
    let in_segment = proven
        .iter()
        .filter(|(p, _)| by_path.contains_key(p.as_str()))
        .count();
    if !fits(in_segment, sources.len()) {
        return None;
    }
    drop(snap);
    link(root, index_dir, &from, manifest, &proven).ok()?;
    Some(Seeded {
        from: from.display().to_string(),
        proven: proven.len() as u64,
    })
}

/// One file checked against another index's record.
#[derive(PartialEq)]
enum Checked {
    /// Its digest is the proof's: its path, the recorded and the seen modification time.
    Proven(String, (i64, i64)),
    /// Other bytes, which a refresh tells apart (another size, hash64 or modification time).
    Differs,
    /// Other bytes, or bytes not proven, that a refresh would take for the recorded ones (the
    /// recorded size and modification time, or the recorded size and hash64).
    Hidden,
}

/// The C sources of `root` that hold the bytes the index `snap` recorded for their path, proven
/// by their digests against the proofs of its segments in the store at `store_dir`, with the
/// recorded and the seen modification time; `None` when a file a refresh would take for the
/// recorded one is not proven ([`Checked::Hidden`]).
fn prove(root: &Path, store_dir: &Path, snap: &Snapshot) -> Option<Vec<(String, (i64, i64))>> {
    use rayon::prelude::*;
    let mut proofs: Vec<Option<Proven>> = Vec::with_capacity(snap.segments.len());
    for s in &snap.manifest.segments {
        proofs.push(FactStore::proof_of(store_dir, &s.dir));
    }
    let mut recorded: Vec<(String, (u64, i64, u64, usize))> = Vec::new();
    for (s, f) in snap.live_files() {
        let st = snap.segments[s].file_stat(f);
        recorded.push((st.path.to_string(), (st.size, st.mtime_ns, st.hash, s)));
    }
    let beneath = crate::beneath::Root::open(root).ok()?;
    let checked: Vec<Checked> = recorded
        .into_par_iter()
        .map(|(path, (size, mtime, hash, s))| {
            let Ok((file, meta)) = beneath.open_file(&path) else {
                return Checked::Differs;
            };
            if meta.len() != size {
                return Checked::Differs;
            }
            let seen = crate::walk::mtime_ns(&meta);
            let Ok(bytes) = crate::beneath::read_open(file) else {
                return Checked::Differs;
            };
            if hash64(&bytes) != hash {
                return if seen == mtime {
                    Checked::Hidden
                } else {
                    Checked::Differs
                };
            }
            let listed = proofs[s].as_ref().and_then(|p| p.get(&path));
            if listed == Some(&(size, digest(&bytes))) {
                Checked::Proven(path, (mtime, seen))
            } else {
                Checked::Hidden
            }
        })
        .collect();
    if checked.contains(&Checked::Hidden) {
        return None;
    }
    let mut out: Vec<(String, (i64, i64))> = checked
        .into_iter()
        .filter_map(|c| match c {
            Checked::Proven(path, times) => Some((path, times)),
            _ => None,
        })
        .collect();
    out.sort();
    Some(out)
}

/// Whether `name`, from another index's manifest, names a part directory of it: one path
/// component with a part's prefix. Anything else (`..`, a path, another name) is not linked.
fn is_part_dir(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    let one = matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    );
    one && crate::part::Kind::ALL.iter().any(|k| {
        name.strip_prefix(k.prefix())
            .is_some_and(|rest| rest.starts_with('-'))
    })
}

/// Links the parts `manifest` (of the index in `from`) names into `index_dir`, writes the
/// restat part of `proven`, and publishes the manifest under `root`.
fn link(
    root: &Path,
    index_dir: &Path,
    from: &Path,
    mut manifest: Manifest,
    proven: &[(String, (i64, i64))],
) -> std::io::Result<()> {
    manifest.retired.clear();
    // Parts that record files by hash64 alone: built whole by the update that follows.
    manifest.text = None;
    manifest.build_files = None;
    manifest.docs = None;
    manifest.restat = None;
    let dirs: Vec<String> = manifest.part_dirs().iter().map(|d| d.to_string()).collect();
    if let Some(bad) = dirs.iter().find(|d| !is_part_dir(d)) {
        return Err(std::io::Error::other(format!(
            "{}: the manifest names '{bad}', not a part directory",
            from.display()
        )));
    }
    for d in &dirs {
        // A new directory of this index: never one that exists (a link, another's), made and
        // written through descriptors.
        let part = crate::indexdir::Part::make_named(index_dir, d.clone())?;
        let (src, dst) = (from.join(d), part.via());
        for e in std::fs::read_dir(&src)?.flatten() {
            // Regular files only: a link in the other index is not followed.
            if !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let target = dst.join(e.file_name());
            if std::fs::hard_link(e.path(), &target).is_err() {
                let mut from_file = std::fs::File::open(e.path())?;
                let mut to_file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&target)?;
                std::io::copy(&mut from_file, &mut to_file)?;
            }
        }
    }
    let rs = crate::indexdir::Part::make(index_dir, crate::store::RESTAT_PREFIX)?;
    let mut text = String::with_capacity(proven.len() * 64);
    for (path, (recorded, seen)) in proven {
        if recorded != seen && !path.contains(['\n', '\t']) {
            text.push_str(&format!("{path}\t{recorded}\t{seen}\n"));
        }
    }
    std::io::Write::write_all(&mut rs.dir().create_new(FILE, 0o644)?, text.as_bytes())?;
    manifest.restat = Some(rs.name().to_string());
    manifest.root = root.display().to_string();
    manifest.generation = 1;
    crate::store::publish(index_dir, &manifest).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_part_directory_of_one_component_is_linked() {
        for ok in ["seg-18ee-1", "kb-1", "tx-a", "kd-b"] {
            assert!(is_part_dir(ok), "{ok}");
        }
        for bad in [
            "..", "../seg-1", "/seg-1", "seg-1/..", "seg-1/x", "rs-1", "CURRENT", "", "seg",
            "segx-1",
        ] {
            assert!(!is_part_dir(bad), "{bad}");
        }
    }
}
