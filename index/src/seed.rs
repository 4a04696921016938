//! A tree's first index started from another tree's: a copy or worktree of an indexed tree
//! (the same files at the same paths, but a few) costs only the files that differ.
//!
//! Every index built with a fact store is registered in it ([`register`]). A tree without
//! an index looks there for an index of another tree whose files it shares ([`seed`]): the
//! same paths with the same sizes for nearly all its C sources ([`MAX_OTHERS_SHARE`]), then the same
//! bytes, proven by the [`digest`] of each of its files against the one the store's proof of
//! the other index's part lists ([`FactStore::proof_of`]; each part's build writes one). A
//! part's own record of a file is a [`hash64`], which another tree can forge: a file with the
//! recorded size and hash64 (or modification time) but no proof of its digest is a file a
//! refresh would take for the other's. Such a file in a segment means nothing is linked; in
//! the text part, that part is not linked; the build-file and documentation parts are linked
//! only when every file their proofs list is proven (a refresh builds either whole again when
//! one of its files differs). The other index's segments and the parts proven are linked
//! (hard links: they are never written again once published) into the new index directory
//! and published under this tree's root; the parts not proven are built whole by the update
//! that follows, which finds what differs, as a refresh does, and builds a delta of those
//! files alone.
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
use crate::tree::walk::SourceFile;

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
    let mut manifest = snap.manifest.clone();
    let proven = prove(root, &from, store_dir, &snap)?;
    let in_segment = proven
        .in_segments
        .iter()
        .filter(|p| by_path.contains_key(p.as_str()))
        .count();
    if !fits(in_segment, sources.len()) {
        return None;
    }
    drop(snap);
    // A part not proven is built whole by the update that follows.
    if !proven.text {
        manifest.text = None;
    }
    if !proven.build_files {
        manifest.build_files = None;
    }
    if !proven.docs {
        manifest.docs = None;
    }
    // The hardware part keeps no proof: built whole by the update that follows.
    manifest.hw = None;
    link(root, index_dir, &from, manifest, &proven.restat).ok()?;
    Some(Seeded {
        from: from.display().to_string(),
        proven: proven.in_segments.len() as u64,
    })
}

/// One file checked against one part's record of it.
#[derive(Clone, Copy, PartialEq)]
enum Checked {
    /// Its digest is the part's proof's: with the modification time seen.
    Proven(i64),
    /// Other bytes, which a refresh tells apart (another size, hash64 or modification time),
    /// or no file.
    Differs,
    /// Other bytes, or bytes not proven, that a refresh would take for the recorded ones (the
    /// recorded size and modification time, or the recorded size and hash64).
    Hidden,
}

/// Which of another index's parts a file is recorded by.
#[derive(Clone, Copy, PartialEq)]
enum Owner {
    /// Its `n`th segment.
    Segment(usize),
    /// Its text part.
    Text,
    /// Its build-file or documentation part: linked only when every file its proof lists is
    /// proven (either part is built whole again when one of its files differs).
    Whole(Whole),
}

/// The parts linked only whole.
#[derive(Clone, Copy, PartialEq)]
enum Whole {
    BuildFiles,
    Docs,
}

/// The store's proofs of another index's parts.
struct Proofs {
    segments: Vec<Option<Proven>>,
    text: Option<Proven>,
    build_files: Option<Proven>,
    docs: Option<Proven>,
}

impl Proofs {
    /// The proof of the part `owner` names, when the store has it.
    fn of(&self, owner: Owner) -> Option<&Proven> {
        match owner {
            Owner::Segment(s) => self.segments.get(s)?.as_ref(),
            Owner::Text => self.text.as_ref(),
            Owner::Whole(Whole::BuildFiles) => self.build_files.as_ref(),
            Owner::Whole(Whole::Docs) => self.docs.as_ref(),
        }
    }
}

/// One part's record of a file.
struct Record {
    owner: Owner,
    size: u64,
    /// The modification time recorded (none: the part's proof lists the file, not the part).
    mtime: Option<i64>,
    /// The [`hash64`] recorded, by which a refresh takes the file as unchanged.
    hash: Option<u64>,
}

/// What the other index's parts were proven to hold of the tree.
struct Found {
    /// Files proven for the segments (and the text part, when linked) with the recorded and
    /// the seen modification time, for the restat part; sorted.
    restat: Vec<(String, (i64, i64))>,
    /// Files proven for the segments.
    in_segments: Vec<String>,
    /// Whether the text, build-file and documentation parts are linked.
    text: bool,
    build_files: bool,
    docs: bool,
}

/// Checks the file at `path` of `beneath` against each of `records`, read once, against the
/// proofs of their parts (`proofs`).
fn check_file(
    beneath: &crate::tree::beneath::Root,
    path: &str,
    records: &[Record],
    proofs: &Proofs,
) -> Vec<Checked> {
    let Ok((file, meta)) = beneath.open_file(path) else {
        return vec![Checked::Differs; records.len()];
    };
    let seen = crate::tree::walk::mtime_ns(&meta);
    let bytes = if records.iter().any(|r| r.size == meta.len()) {
        crate::tree::beneath::read_open(file).ok()
    } else {
        None
    };
    // Each computed once, when first needed: the digest for every file, the hash64 only for
    // a file its proof does not list.
    let (mut content, mut hash) = (None, None);
    records
        .iter()
        .map(|r| {
            let Some(bytes) = bytes.as_ref().filter(|_| meta.len() == r.size) else {
                return Checked::Differs;
            };
            let content = *content.get_or_insert_with(|| digest(bytes));
            if proofs.of(r.owner).and_then(|p| p.get(path)) == Some(&(r.size, content)) {
                return Checked::Proven(seen);
            }
            // Not proven: hidden when a refresh would take it for the record.
            let differs = r
                .hash
                .is_some_and(|h| *hash.get_or_insert_with(|| hash64(bytes)) != h);
            if differs && r.mtime != Some(seen) {
                Checked::Differs
            } else {
                Checked::Hidden
            }
        })
        .collect()
}

/// Every file the parts of `snap` (the other index, in `from`) record, by path: its segments'
/// live files, its text part's indexed files, and the files its build-file and documentation
/// parts' proofs list.
fn records(from: &Path, snap: &Snapshot, proofs: &Proofs) -> HashMap<String, Vec<Record>> {
    let mut by_path: HashMap<String, Vec<Record>> = HashMap::new();
    for (s, f) in snap.live_files() {
        let st = snap.segments[s].file_stat(f);
        by_path
            .entry(st.path.to_string())
            .or_default()
            .push(Record {
                owner: Owner::Segment(s),
                size: st.size,
                mtime: Some(st.mtime_ns),
                hash: Some(st.hash),
            });
    }
    let text = snap.manifest.text.as_ref();
    if let Some(Ok(base)) = text.map(|t| crate::text::index::TextIndex::open(&from.join(&t.dir))) {
        for id in 0..base.len() as u32 {
            let e = base.entry(id);
            // A file without trigrams is read by every search: nothing of it is trusted.
            if e.flag == crate::text::index::UNINDEXED || e.hash == 0 {
                continue;
            }
            by_path.entry(e.path.to_string()).or_default().push(Record {
                owner: Owner::Text,
                size: e.size,
                mtime: Some(e.mtime_ns),
                hash: Some(e.hash),
            });
        }
    }
    for whole in [Whole::BuildFiles, Whole::Docs] {
        for (path, &(size, _)) in proofs.of(Owner::Whole(whole)).into_iter().flatten() {
            by_path.entry(path.clone()).or_default().push(Record {
                owner: Owner::Whole(whole),
                size,
                mtime: None,
                hash: None,
            });
        }
    }
    by_path
}

/// The files of `root` that hold the bytes the index `snap` (in `from`) recorded for their
/// path, proven by their digests against the proofs of its parts in the store at
/// `store_dir`, and which of its text, build-file and documentation parts can be linked;
/// `None` when a file a refresh would take for a segment's record is not proven
/// ([`Checked::Hidden`]). A part with such a file (or any file not proven, for the build-file
/// and documentation parts), or without a proof, is not linked: the update builds it whole.
fn prove(root: &Path, from: &Path, store_dir: &Path, snap: &Snapshot) -> Option<Found> {
    use rayon::prelude::*;
    let m = &snap.manifest;
    let part_proof = |dir: Option<&String>| dir.and_then(|d| FactStore::proof_of(store_dir, d));
    let proofs = Proofs {
        segments: m
            .segments
            .iter()
            .map(|s| part_proof(Some(&s.dir)))
            .collect(),
        text: part_proof(m.text.as_ref().map(|t| &t.dir)),
        build_files: part_proof(m.build_files.as_ref().map(|b| &b.dir)),
        docs: part_proof(m.docs.as_ref().map(|d| &d.dir)),
    };
    let by_path = records(from, snap, &proofs);
    let beneath = crate::tree::beneath::Root::open(root).ok()?;
    let checked: Vec<(String, Vec<Record>, Vec<Checked>)> = by_path
        .into_par_iter()
        .map(|(path, records)| {
            let checked = check_file(&beneath, &path, &records, &proofs);
            (path, records, checked)
        })
        .collect();
    let all = || checked.iter().flat_map(|(_, r, c)| r.iter().zip(c));
    if all().any(|(r, c)| matches!(r.owner, Owner::Segment(_)) && *c == Checked::Hidden) {
        return None;
    }
    let text = m.text.is_some()
        && proofs.text.is_some()
        && !all().any(|(r, c)| r.owner == Owner::Text && *c == Checked::Hidden);
    let whole = |w: Whole, proof: &Option<Proven>| {
        proof.is_some()
            && all().all(|(r, c)| r.owner != Owner::Whole(w) || matches!(c, Checked::Proven(_)))
    };
    let build_files = m.build_files.is_some() && whole(Whole::BuildFiles, &proofs.build_files);
    let docs = m.docs.is_some() && whole(Whole::Docs, &proofs.docs);
    let mut out = Found {
        restat: Vec::new(),
        in_segments: Vec::new(),
        text,
        build_files,
        docs,
    };
    for (path, records, checked) in checked {
        // The parts a refresh takes the file's stat from: the segments and a linked text part.
        let counted = |r: &Record| match r.owner {
            Owner::Segment(_) => true,
            Owner::Text => text,
            Owner::Whole(_) => false,
        };
        let mut first = None;
        let mut all_proven = true;
        for (r, c) in records.iter().zip(&checked).filter(|(r, _)| counted(r)) {
            match (c, r.mtime) {
                (Checked::Proven(seen), Some(recorded)) => {
                    first.get_or_insert((recorded, *seen));
                }
                _ => all_proven = false,
            }
        }
        let in_segment = records
            .iter()
            .zip(&checked)
            .any(|(r, c)| matches!((r.owner, c), (Owner::Segment(_), Checked::Proven(_))));
        if in_segment {
            out.in_segments.push(path.clone());
        }
        if let (Some(times), true) = (first, all_proven) {
            out.restat.push((path, times));
        }
    }
    out.restat.sort();
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
    one && crate::part::Kind::BUILT.iter().any(|k| {
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
    for t in manifest.text.iter_mut() {
        t.previous = None;
    }
    for b in manifest.build_files.iter_mut() {
        b.previous = None;
    }
    for d in manifest.docs.iter_mut() {
        d.previous = None;
    }
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
    let rs = crate::indexdir::Part::make(index_dir, crate::part::Kind::Restat.prefix())?;
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
    fn a_file_is_proven_by_its_parts_proof_alone_and_hidden_when_a_refresh_would_take_it() {
        let dir = std::env::temp_dir().join(format!("knav-seed-check-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let real = b"config A\n\tbool \"a\"\n";
        std::fs::write(dir.join("Kconfig"), real).unwrap();
        let seen = crate::tree::walk::mtime_ns(&std::fs::metadata(dir.join("Kconfig")).unwrap());
        let beneath = crate::tree::beneath::Root::open(&dir).unwrap();
        let len = real.len() as u64;
        let proven: Proven = [("Kconfig".to_string(), (len, digest(real)))].into();
        let other: Proven = [("Kconfig".to_string(), (len, digest(b"other")))].into();
        let proofs = Proofs {
            segments: vec![None],
            text: Some(proven),
            build_files: Some(other),
            docs: None,
        };
        let rec = |owner, size, mtime, hash| Record {
            owner,
            size,
            mtime,
            hash,
        };
        let h = hash64(real);
        let records = [
            rec(Owner::Text, len, Some(seen - 1), Some(h)),
            // Its proof lists other bytes.
            rec(Owner::Whole(Whole::BuildFiles), len, None, None),
            // No proof at all.
            rec(Owner::Whole(Whole::Docs), len, None, None),
            // Not proven (no proof), another hash64 under another time: a refresh reads it
            // and tells it apart.
            rec(Owner::Segment(0), len, Some(seen - 1), Some(h ^ 1)),
            // Not proven, another hash64 under the time seen: a refresh would keep the record.
            rec(Owner::Segment(0), len, Some(seen), Some(h ^ 1)),
            // Not proven, the recorded hash64: a refresh would keep the record.
            rec(Owner::Segment(0), len, Some(seen - 1), Some(h)),
            rec(Owner::Text, len + 1, Some(seen), Some(h)),
        ];
        let checked = check_file(&beneath, "Kconfig", &records, &proofs);
        let (hidden, differs) = (Checked::Hidden, Checked::Differs);
        let want = [
            Checked::Proven(seen),
            hidden,
            hidden,
            differs,
            hidden,
            hidden,
            differs,
        ];
        assert!(checked == want);
        let gone = check_file(&beneath, "Kbuild", &records[..1], &proofs);
        assert!(gone == [differs]);
        let _ = std::fs::remove_dir_all(dir);
    }

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
