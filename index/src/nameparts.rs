//! Part indexes: each lowercase part of a name or path (`ext4_file_read_iter` → `ext4`, `file`,
//! `read`, `iter`) → the sorted ids of what has it. What search_symbols and search_files match
//! tokens against, so that a query walks a range of parts instead of every name.
//!
//! On disk, an FST of parts whose values are offsets into a `.dat` file holding, per part, a
//! count and the ids as deltas (varints).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use fst::{IntoStreamer, Streamer};

use super::accum::NameMap;
use super::format::{header, HEADER_LEN};
use super::idlist::{IdList, IdReader};

/// Adds the `_`-separated parts of C names, lowercase, empty ones left out, to a
/// [`PartsWriter`]. Names come in name order, and a part that ends inside the prefix a name
/// shares with the one before (`ext4_file_read` after `ext4_file_open`: `ext4`, `file`) is that
/// name's part again: its handle is kept, not looked up (on the kernel's defined names, most of
/// the 12 million parts; each lookup missed the cache).
#[derive(Default)]
pub struct NameParts {
    /// The name added last.
    prev: Vec<u8>,
    /// Its parts: where each ends in it, and its handle.
    parts: Vec<(usize, u32)>,
    /// The part being lowercased.
    lower: Vec<u8>,
}

impl NameParts {
    /// Records that `id` has each part of `name`.
    pub fn add(&mut self, w: &mut PartsWriter, name: &[u8], id: u64) {
        let common = self
            .prev
            .iter()
            .zip(name)
            .take_while(|(a, b)| a == b)
            .count();
        // A part ending before `common` is followed by the same `_` in both names.
        let kept = self.parts.iter().take_while(|p| p.0 < common).count();
        self.parts.truncate(kept);
        for &(_, handle) in &self.parts {
            w.add_to(handle, id);
        }
        let mut start = self.parts.last().map_or(0, |p| p.0);
        while start < name.len() {
            let end = name[start..]
                .iter()
                .position(|&b| b == b'_')
                .map_or(name.len(), |i| start + i);
            if end > start {
                self.lower.clear();
                self.lower
                    .extend(name[start..end].iter().map(u8::to_ascii_lowercase));
                let handle = w.handle(&self.lower);
                w.add_to(handle, id);
                self.parts.push((end, handle));
            }
            start = end + 1;
        }
        self.prev.clear();
        self.prev.extend_from_slice(name);
    }
}

/// Whether `b` separates the parts of a path (`fs/ext4/read_write.c`: `/`, `_`, `-`, `.`).
pub fn path_separator(b: u8) -> bool {
    matches!(b, b'/' | b'_' | b'-' | b'.')
}

/// The parts of a path, lowercase: each component whole, and its `_`, `-` and `.`-separated
/// pieces (`fs/read_write.c` → `fs`, `read_write.c`, `read`, `write`, `c`).
pub fn path_parts(path: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for component in path.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
        out.push(component.to_ascii_lowercase());
        if component.iter().any(|&b| path_separator(b)) {
            out.extend(
                component
                    .split(|&b| path_separator(b))
                    .filter(|p| !p.is_empty())
                    .map(<[u8]>::to_ascii_lowercase),
            );
        }
    }
    out.sort();
    out.dedup();
    out
}

/// True when lowercase `token` starts at a part boundary of lowercase `text` (its start, or
/// right after a byte `sep` accepts): the check a token spanning several parts
/// (`file_read`) needs beyond each part matching.
pub fn at_boundary(text: &[u8], token: &[u8], sep: impl Fn(u8) -> bool) -> bool {
    (0..text.len())
        .filter(|&i| i == 0 || sep(text[i - 1]))
        .any(|i| text[i..].starts_with(token))
}

/// Collects `(part, id)` pairs and writes them as a part index. Each part's ids are kept as
/// they are written, deltas in varints (on the kernel, 12 million ids in 30 MB rather than 96).
#[derive(Default)]
pub struct PartsWriter {
    /// Each part's handle: its index in `ids`.
    handles: NameMap<Box<[u8]>, u32>,
    ids: Vec<IdList>,
}

impl PartsWriter {
    /// Records that `id` has `part`. Ids must be added in increasing order per part.
    pub fn add(&mut self, part: &[u8], id: u64) {
        let handle = self.handle(part);
        self.add_to(handle, id);
    }

    /// The handle of `part`, which [`PartsWriter::add_to`] takes.
    pub fn handle(&mut self, part: &[u8]) -> u32 {
        if let Some(&handle) = self.handles.get(part) {
            return handle;
        }
        let handle = self.ids.len() as u32;
        self.ids.push(IdList::default());
        self.handles.insert(part.into(), handle);
        handle
    }

    /// Records that `id` has the part of `handle`, as [`PartsWriter::add`] does.
    pub fn add_to(&mut self, handle: u32, id: u64) {
        let ids = &mut self.ids[handle as usize];
        if ids.last() != Some(id) {
            ids.push(id);
        }
    }

    /// Its parts in byte order, each with its ids, for [`write_sorted`].
    pub fn into_sorted(self) -> SortedParts {
        let mut ids = self.ids;
        let mut parts: Vec<(Box<[u8]>, IdList)> = self
            .handles
            .into_iter()
            .map(|(part, handle)| (part, std::mem::take(&mut ids[handle as usize])))
            .collect();
        parts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        parts
    }

    /// Writes `fst_path` and `dat_path`.
    pub fn finish(self, fst_path: &Path, dat_path: &Path) -> io::Result<()> {
        write_sorted(vec![self.into_sorted()], fst_path, dat_path)
    }
}

/// Writes `fst_path` and `dat_path` from the sorted parts of several writers
/// ([`PartsWriter::into_sorted`]), every id of `shards[k]` above those of the shards before it:
/// a part several have gets their ids in shard order. Merged in order, not through one table:
/// each shard is sorted on its own thread, and no part is hashed again.
pub fn write_sorted(
    mut shards: Vec<SortedParts>,
    fst_path: &Path,
    dat_path: &Path,
) -> io::Result<()> {
    let mut fst = super::fstbuild::MapWriter::new(BufWriter::new(File::create(fst_path)?));
    let mut dat = BufWriter::new(File::create(dat_path)?);
    dat.write_all(&header(b"PART"))?;
    let mut offset = HEADER_LEN as u64;
    // Per shard, its next part.
    let mut at = vec![0usize; shards.len()];
    fn next<'a>(shards: &'a [SortedParts], at: &[usize], k: usize) -> Option<&'a [u8]> {
        shards[k].get(at[k]).map(|p| &*p.0)
    }
    // The least part next in any shard, then every later shard's ids of it.
    while let Some(least) = (0..shards.len())
        .filter(|&k| next(&shards, &at, k).is_some())
        .min_by(|&a, &b| next(&shards, &at, a).cmp(&next(&shards, &at, b)))
    {
        let (part, mut ids) = std::mem::take(&mut shards[least][at[least]]);
        at[least] += 1;
        for k in least + 1..shards.len() {
            if next(&shards, &at, k) == Some(&*part) {
                ids.append(std::mem::take(&mut shards[k][at[k]].1));
                at[k] += 1;
            }
        }
        fst.insert(&part, offset)?;
        offset += ids.write_to(&mut dat)?;
    }
    fst.finish()?;
    dat.flush()
}

/// A writer's parts in byte order, each with its ids ([`PartsWriter::into_sorted`]).
pub type SortedParts = Vec<(Box<[u8]>, IdList)>;

/// Appends to `out` the ids stored at `off` of a part index's `.dat`; false when they do not
/// decode (damage).
pub fn read_ids(dat: &[u8], off: u64, out: &mut Vec<u64>) -> bool {
    let Some(body) = dat.get(off as usize..).filter(|_| off >= HEADER_LEN as u64) else {
        return false;
    };
    let mut r = IdReader::new(body);
    while let Some(id) = r.next_id() {
        out.push(id);
    }
    !r.damaged
}

/// The sorted, distinct ids of every part of `fst` starting with `token` (equal to it when
/// `exact`); `None` on damage.
pub fn ids_matching<D: AsRef<[u8]>>(
    fst: &fst::Map<D>,
    dat: &[u8],
    token: &[u8],
    exact: bool,
) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    if exact {
        if let Some(off) = fst.get(token) {
            if !read_ids(dat, off, &mut out) {
                return None;
            }
        }
        return Some(out);
    }
    let aut =
        fst::Automaton::starts_with(fst::automaton::Str::new(std::str::from_utf8(token).ok()?));
    let mut stream = fst.search(aut).into_stream();
    let mut lists = 0;
    while let Some((_, off)) = stream.next() {
        if !read_ids(dat, off, &mut out) {
            return None;
        }
        lists += 1;
    }
    if lists > 1 {
        out.sort_unstable();
        out.dedup();
    }
    Some(out)
}

/// The ids in both sorted lists.
pub fn intersect(a: &[u64], b: &[u64]) -> Vec<u64> {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    small
        .iter()
        .copied()
        .filter(|id| large.binary_search(id).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`NameParts`] replaced, the oracle of its tests: each part looked up.
    fn each_name_part(name: &[u8], mut f: impl FnMut(&[u8])) {
        let mut lower = Vec::with_capacity(name.len());
        for part in name.split(|&b| b == b'_').filter(|p| !p.is_empty()) {
            lower.clear();
            lower.extend(part.iter().map(u8::to_ascii_lowercase));
            f(&lower);
        }
    }

    /// Every part of `w` with its ids, sorted by part.
    fn contents(w: &PartsWriter) -> Vec<(&[u8], &IdList)> {
        let mut out: Vec<_> = w
            .handles
            .iter()
            .map(|(part, &h)| (&part[..], &w.ids[h as usize]))
            .collect();
        out.sort_unstable_by(|a, b| a.0.cmp(b.0));
        out
    }

    /// Both ways of adding the parts of `names` (the id of each is its index) must agree.
    fn check_name_parts(names: &[Vec<u8>]) {
        let (mut cached, mut looked_up) = (PartsWriter::default(), PartsWriter::default());
        let mut parts = NameParts::default();
        for (id, name) in names.iter().enumerate() {
            parts.add(&mut cached, name, id as u64);
            each_name_part(name, |p| looked_up.add(p, id as u64));
        }
        assert_eq!(contents(&cached), contents(&looked_up));
    }

    #[test]
    fn names_split_into_lowercase_parts() {
        let mut w = PartsWriter::default();
        NameParts::default().add(&mut w, b"__x64_sys_READ", 7);
        let parts: Vec<&[u8]> = contents(&w).into_iter().map(|(p, _)| p).collect();
        assert_eq!(parts, [&b"read"[..], b"sys", b"x64"]);
    }

    #[test]
    fn parts_inside_a_shared_prefix_are_the_last_name_s() {
        let names: Vec<Vec<u8>> = [
            "ext4_file",
            "ext4_file_open",
            "ext4_file_read",
            "ext4_filex",
            "ext4__file",
            "ext4_",
            "Ext4_file_file",
            "x",
            "x__",
        ]
        .iter()
        .map(|n| n.as_bytes().to_vec())
        .collect();
        check_name_parts(&names);
        let mut w = PartsWriter::default();
        let mut parts = NameParts::default();
        for (id, name) in names.iter().enumerate() {
            parts.add(&mut w, name, id as u64);
        }
        let file = w.handles[&b"file"[..]];
        // Names 0, 1, 2, 4 and 6 (twice in 6, once in its ids).
        let mut bytes = Vec::new();
        w.ids[file as usize].put(&mut bytes);
        assert_eq!(bytes, [5, 0, 1, 1, 2, 2]);
    }

    proptest::proptest! {
        /// Names sorted (as a shard gives them) and not, from an alphabet of few letters so
        /// that they share prefixes and parts.
        #[test]
        fn name_parts_kept_from_the_last_name_are_the_ones_looked_up(
            mut names in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec![b'a', b'B', b'b', b'_']), 0..10),
                0..60),
            sort in proptest::prelude::any::<bool>(),
        ) {
            if sort {
                names.sort();
            }
            check_name_parts(&names);
        }
    }

    #[test]
    fn paths_split_into_components_and_their_pieces() {
        let parts: Vec<String> = path_parts(b"fs/ext2/Read_write.c")
            .into_iter()
            .map(|p| String::from_utf8(p).unwrap())
            .collect();
        assert_eq!(parts, ["c", "ext2", "fs", "read", "read_write.c", "write"]);
    }

    #[test]
    fn a_token_spanning_parts_must_start_at_a_boundary() {
        let sep = |b| b == b'_';
        assert!(at_boundary(b"ext4_file_read_iter", b"file_re", sep));
        assert!(at_boundary(b"ext4_file_read_iter", b"ext4_f", sep));
        assert!(!at_boundary(b"ext4_file_read_iter", b"ile_read", sep));
    }

    #[test]
    fn a_written_index_gives_back_each_prefixs_ids() {
        let dir = std::env::temp_dir().join(format!("knav-parts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut w = PartsWriter::default();
        for (part, id) in [
            ("read", 1),
            ("read", 1),
            ("read", 5),
            ("readl", 3),
            ("write", 2),
        ] {
            w.add(part.as_bytes(), id);
        }
        let mut later = PartsWriter::default();
        later.add(b"read", 9);
        later.add(b"readv", 12);
        let mut third = PartsWriter::default();
        third.add(b"aaa", 20);
        third.add(b"read", 21);
        let shards = vec![w.into_sorted(), later.into_sorted(), third.into_sorted()];
        write_sorted(shards, &dir.join("p.fst"), &dir.join("p.dat")).unwrap();
        let fst = fst::Map::new(std::fs::read(dir.join("p.fst")).unwrap()).unwrap();
        let dat = std::fs::read(dir.join("p.dat")).unwrap();
        assert_eq!(
            ids_matching(&fst, &dat, b"rea", false),
            Some(vec![1, 3, 5, 9, 12, 21])
        );
        assert_eq!(
            ids_matching(&fst, &dat, b"read", true),
            Some(vec![1, 5, 9, 21])
        );
        assert_eq!(ids_matching(&fst, &dat, b"aaa", true), Some(vec![20]));
        assert_eq!(ids_matching(&fst, &dat, b"x", false), Some(vec![]));
        assert!(!read_ids(&dat, 3, &mut Vec::new()), "inside the header");
        assert_eq!(intersect(&[1, 3, 5, 9], &[3, 9, 11]), vec![3, 9]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
