//! The index's part for a tree's build files: which objects and directories Kbuild builds and
//! under which conditions ([`knav_kconfig::kbuild`]), the Kconfig entries that define each
//! `CONFIG_X`, and where Kconfig files and Makefiles name it.
//!
//! It is rebuilt whole whenever a build file changes (reading and parsing all of the kernel's
//! takes well under a second) into its own directory (`kb-…`), published with the manifest like
//! a segment. Files: `symbols.fst` (`CONFIG_X` → entries and uses), `data.bin` (the
//! conditions of objects and directories behind a hash table by path, and everything else) and
//! `meta.json` (their lengths and checksums, as a segment's).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use knav_kconfig::kbuild::{self, Decision};
use knav_kconfig::makefile::{Atom, Test};
use knav_kconfig::{kconfig, makefile, Config, Tri};
use memmap2::Mmap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::codec::{hash64, put_str, put_varint, Reader};
use super::damage::{open_fst, Damage};
use super::disk::{map, MapBytes};
use super::error::IndexError;
use super::format::{check_header, header, HEADER_LEN};
use crate::tree::walk::SourceFile;

/// Where the build-file part of an index is, and what it was built from.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct BuildFilesRef {
    /// Directory name inside the index directory.
    pub dir: String,
    /// [`fingerprint`] of the build files it was built from.
    pub fingerprint: u64,
    /// How many build files.
    pub files: u64,
    /// The previous generation's directory, kept for readers that opened it.
    #[serde(default)]
    pub previous: Option<String>,
}

/// Build files larger than this are not read (no Makefile or Kconfig comes close).
const MAX_BUILD_FILE_BYTES: u64 = 4 << 20;

/// A fingerprint of the build files' paths, sizes and mtimes: equal fingerprints, nothing to
/// rebuild.
pub fn fingerprint(files: &[SourceFile]) -> u64 {
    let mut sorted: Vec<&SourceFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut buf = Vec::with_capacity(files.len() * 48);
    for f in sorted {
        put_str(&mut buf, f.path.as_bytes());
        put_varint(&mut buf, f.size);
        put_varint(&mut buf, f.mtime_ns as u64);
    }
    hash64(&buf)
}

/// What a build found.
#[derive(Clone, Debug, Default)]
pub struct BuildStats {
    /// Makefiles followed from the top.
    pub makefiles: u64,
    /// Objects and directories with a presence condition.
    pub paths: u64,
    /// Kconfig entries.
    pub entries: u64,
    /// Milliseconds spent reading and parsing.
    pub parse_ms: u64,
}

/// One Kconfig entry as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KconfigEntry {
    /// The Kconfig file.
    pub path: String,
    /// The entry, its symbol included.
    pub entry: kconfig::Entry,
}

/// One place a build file names a symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildUse {
    /// The Kconfig file or Makefile.
    pub path: String,
    /// 1-based line.
    pub line: u32,
}

/// Reads and parses the build files `files` of `root`, writing the result into `dir` (the
/// part directory named `name`), and its proof into the fact store at `proofs`
/// ([`crate::factstore::Prover`]).
pub fn build(
    root: &Path,
    files: &[SourceFile],
    dir: &Path,
    name: &str,
    proofs: Option<&Path>,
) -> Result<BuildStats, IndexError> {
    let started = std::time::Instant::now();
    let prover = crate::factstore::Prover::new(proofs, name);
    let texts = BuildTexts::read(root, files, prover.as_ref())?;
    let read = |p: &str| texts.by_path.get(p).cloned();
    let presence = kbuild::resolve(&read, &texts.arches);
    let kconfigs = texts.kconfigs(root, prover.as_ref());
    let makefile_uses: Vec<(String, Vec<makefile::SymbolUse>)> = texts
        .by_path
        .par_iter()
        .filter(|(p, _)| matches!(file_name(p), "Makefile" | "Kbuild"))
        .map(|(p, t)| (p.clone(), makefile::parse(p, t).uses))
        .collect();
    let parse_ms = started.elapsed().as_millis() as u64;
    let symbols = Symbols::collect(&kconfigs, &makefile_uses);
    let data = encode_data(&presence, &symbols, files, &texts.hashes);
    write_part(dir, &data)?;
    if let Some(p) = prover {
        p.finish();
    }
    Ok(BuildStats {
        makefiles: presence.makefiles.len() as u64,
        paths: presence.paths.len() as u64,
        entries: symbols.entries,
        parse_ms,
    })
}

/// What one build file gives the part: the hash of its bytes and its text (`None` when it
/// cannot be read). A Makefile's meaning depends on those that descend into its directory,
/// and a Kconfig file's on those that source it: they are parsed once all are merged.
pub type BuildFileFacts = Option<(u64, String)>;

/// The build files' facts merged, in path order.
struct BuildFilesMerge<'a> {
    /// The files whose facts are merged, in that order.
    files: &'a [SourceFile],
    /// The hash of each file's bytes (0: unreadable).
    hashes: Vec<u64>,
    /// The text of each file that could be read.
    by_path: HashMap<String, String>,
}

impl super::part::Merge<BuildFileFacts> for BuildFilesMerge<'_> {
    fn add(&mut self, batch: Vec<BuildFileFacts>) -> Result<(), IndexError> {
        for facts in batch {
            let path = &self.files[self.hashes.len()].path;
            self.hashes.push(facts.as_ref().map_or(0, |(h, _)| *h));
            if let Some((_, text)) = facts {
                self.by_path.insert(path.clone(), text);
            }
        }
        Ok(())
    }
}

/// The build files' texts as read, by path.
struct BuildTexts {
    /// The text of each file that could be read.
    by_path: HashMap<String, String>,
    /// The hash of each file's bytes, in the order of the files given (0: unreadable).
    hashes: Vec<u64>,
    /// The architectures of the tree (`arch/*`), sorted.
    arches: Vec<String>,
}

impl BuildTexts {
    /// Reads `files` of `root` in parallel: each one's facts, merged; `prover` takes the
    /// digest of each file read.
    fn read(
        root: &Path,
        files: &[SourceFile],
        prover: Option<&crate::factstore::Prover>,
    ) -> Result<BuildTexts, IndexError> {
        let beneath = crate::tree::beneath::Root::open(root).ok();
        let mut merge = BuildFilesMerge {
            files,
            hashes: Vec::with_capacity(files.len()),
            by_path: HashMap::new(),
        };
        super::part::build(
            files,
            |f| {
                let bytes = beneath
                    .as_ref()
                    .and_then(|b| b.read_capped(&f.path, MAX_BUILD_FILE_BYTES).ok());
                if let (Some(p), Some(b)) = (prover, bytes.as_deref()) {
                    p.saw(&f.path, b);
                }
                <BuildFiles as super::part::FromFacts>::facts(&f.path, bytes.as_deref())
            },
            &mut merge,
        )?;
        let BuildFilesMerge {
            hashes, by_path, ..
        } = merge;
        let mut arches: Vec<String> = by_path
            .keys()
            .filter_map(|p| p.strip_prefix("arch/")?.split_once('/').map(|(a, _)| a))
            .collect::<HashSet<&str>>()
            .into_iter()
            .map(str::to_string)
            .collect();
        arches.sort();
        Ok(BuildTexts {
            by_path,
            hashes,
            arches,
        })
    }

    /// Every Kconfig file parsed, and what they source that is named otherwise (those read
    /// digested by `prover`).
    fn kconfigs(
        &self,
        root: &Path,
        prover: Option<&crate::factstore::Prover>,
    ) -> Vec<(String, kconfig::KconfigFile)> {
        let mut kconfigs: Vec<(String, kconfig::KconfigFile)> = self
            .by_path
            .par_iter()
            .filter(|(p, _)| file_name(p).starts_with("Kconfig"))
            .map(|(p, t)| (p.clone(), kconfig::parse(p, t)))
            .collect();
        let mut seen: HashSet<String> = kconfigs.iter().map(|(p, _)| p.clone()).collect();
        let mut todo: Vec<String> = kconfigs
            .iter()
            .flat_map(|(_, k)| k.sources.iter().cloned())
            .collect();
        let beneath = crate::tree::beneath::Root::open(root).ok();
        while let Some(src) = todo.pop() {
            let expanded: Vec<String> = if src.contains("$(") {
                self.arches
                    .iter()
                    .map(|a| src.replace("$(SRCARCH)", a).replace("$(HEADER_ARCH)", a))
                    .filter(|p| !p.contains("$("))
                    .collect()
            } else {
                vec![src]
            };
            for p in expanded {
                // A path as a Kconfig line names it, as the walk's paths are kept.
                let p = crate::tree::pathname::encode(p.as_bytes()).into_owned();
                if p.contains("..") || p.starts_with('/') || !seen.insert(p.clone()) {
                    continue;
                }
                // Regular files only, reached without a link: a link may lead out of the tree.
                let Some(Ok(bytes)) = beneath
                    .as_ref()
                    .map(|b| b.read_capped(&p, MAX_BUILD_FILE_BYTES))
                else {
                    continue;
                };
                if let Some(prover) = prover {
                    prover.saw(&p, &bytes);
                }
                let k = kconfig::parse(&p, &String::from_utf8_lossy(&bytes));
                todo.extend(k.sources.iter().cloned());
                kconfigs.push((p, k));
            }
        }
        kconfigs
    }
}

/// What the build files say of one symbol.
#[derive(Default)]
struct SymbolRecords<'a> {
    /// Its Kconfig entries as (file id, entry), generic Kconfig files first, then in path order.
    entries: Vec<(u32, &'a kconfig::Entry)>,
    /// Where Kconfig files and Makefiles name it, as (file id, line).
    uses: Vec<(u32, u32)>,
}

/// Every symbol's entries and uses, with the files they are in.
struct Symbols<'a> {
    /// The Kconfig files and Makefiles that define or name a symbol; ids follow path order.
    file_ids: BTreeMap<String, u32>,
    by_name: BTreeMap<&'a str, SymbolRecords<'a>>,
    /// Kconfig entries in all.
    entries: u64,
}

impl<'a> Symbols<'a> {
    fn collect(
        kconfigs: &'a [(String, kconfig::KconfigFile)],
        makefile_uses: &'a [(String, Vec<makefile::SymbolUse>)],
    ) -> Symbols<'a> {
        let mut file_ids: BTreeMap<String, u32> = BTreeMap::new();
        for (p, _) in kconfigs.iter() {
            file_ids.insert(p.clone(), 0);
        }
        for (p, _) in makefile_uses.iter() {
            file_ids.insert(p.clone(), 0);
        }
        for (i, v) in file_ids.values_mut().enumerate() {
            *v = i as u32;
        }
        let mut by_name: BTreeMap<&str, SymbolRecords<'_>> = BTreeMap::new();
        let mut entries = 0u64;
        for (p, k) in kconfigs {
            let id = file_ids[p];
            for e in &k.entries {
                entries += 1;
                by_name.entry(&e.symbol).or_default().entries.push((id, e));
            }
            for u in &k.uses {
                by_name
                    .entry(&u.symbol)
                    .or_default()
                    .uses
                    .push((id, u.line));
            }
        }
        for (p, uses) in makefile_uses {
            let id = file_ids[p];
            for u in uses {
                by_name
                    .entry(&u.symbol)
                    .or_default()
                    .uses
                    .push((id, u.line));
            }
        }
        // Entries in path order, generic Kconfig files before architectures' (file ids follow
        // path order).
        let paths: Vec<&String> = file_ids.keys().collect();
        for records in by_name.values_mut() {
            records
                .entries
                .sort_by_key(|(id, e)| (paths[*id as usize].starts_with("arch/"), *id, e.line));
        }
        Symbols {
            file_ids,
            by_name,
            entries,
        }
    }
}

/// Bytes of `data.bin`'s table of contents: seven offsets and counts after the header.
const TOC: usize = 7 * 8;

/// The contents of a build-file part's `data.bin`, and what `symbols.fst` maps into it.
struct PartData<'a> {
    /// `data.bin`.
    data: Vec<u8>,
    /// Each symbol's offset in `data`, in symbol order.
    symbol_keys: Vec<(&'a str, u64)>,
}

/// `data.bin`: header, table of contents, then the sections.
fn encode_data<'a>(
    presence: &kbuild::Presence,
    symbols: &Symbols<'a>,
    files: &[SourceFile],
    hashes: &[u64],
) -> PartData<'a> {
    let mut data = header(b"KBLD").to_vec();
    data.resize(HEADER_LEN + TOC, 0);
    let files_at = data.len() as u64;
    put_varint(&mut data, symbols.file_ids.len() as u64);
    for p in symbols.file_ids.keys() {
        put_str(&mut data, p.as_bytes());
    }
    let atoms_at = put_atoms(&mut data, &presence.atoms);
    let path_offsets = put_paths(&mut data, &presence.paths);
    let symbol_keys = put_symbols(&mut data, symbols);
    let table = put_path_table(&mut data, path_offsets);
    let inputs_at = data.len() as u64;
    put_varint(&mut data, files.len() as u64);
    for (f, h) in files.iter().zip(hashes) {
        put_str(&mut data, f.path.as_bytes());
        put_varint(&mut data, f.size);
        put_varint(&mut data, f.mtime_ns.max(0) as u64);
        put_varint(&mut data, *h);
    }
    let toc = [
        files_at,
        atoms_at,
        presence.atoms.len() as u64,
        inputs_at,
        table.at,
        table.slots,
        data.len() as u64,
    ];
    for (i, v) in toc.iter().enumerate() {
        let at = HEADER_LEN + i * 8;
        data[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    PartData { data, symbol_keys }
}

/// Appends the atoms, then their offsets; returns where the offsets start.
fn put_atoms(data: &mut Vec<u8>, atoms: &[Atom]) -> u64 {
    let mut atom_offsets = Vec::with_capacity(atoms.len());
    for a in atoms {
        atom_offsets.push(data.len() as u32);
        encode_atom(data, a);
    }
    let atoms_at = data.len() as u64;
    for off in &atom_offsets {
        data.extend_from_slice(&off.to_le_bytes());
    }
    atoms_at
}

/// Appends each path then its condition; returns each path's hash and offset.
fn put_paths(data: &mut Vec<u8>, paths: &BTreeMap<String, kbuild::Condition>) -> Vec<(u64, u64)> {
    let mut path_offsets: Vec<(u64, u64)> = Vec::with_capacity(paths.len());
    for (path, alts) in paths {
        path_offsets.push((hash64(path.as_bytes()), data.len() as u64));
        put_str(data, path.as_bytes());
        put_varint(data, alts.len() as u64);
        for alt in alts {
            put_varint(data, alt.len() as u64);
            for id in alt {
                put_varint(data, *id as u64);
            }
        }
    }
    path_offsets
}

/// Appends each symbol's entries and uses; returns each symbol's offset.
fn put_symbols<'a>(data: &mut Vec<u8>, symbols: &Symbols<'a>) -> Vec<(&'a str, u64)> {
    let mut symbol_keys: Vec<(&str, u64)> = Vec::with_capacity(symbols.by_name.len());
    for (name, records) in &symbols.by_name {
        symbol_keys.push((name, data.len() as u64));
        put_varint(data, records.entries.len() as u64);
        for (file, e) in &records.entries {
            put_varint(data, *file as u64);
            put_varint(data, e.line as u64);
            put_varint(data, e.end_line as u64);
            put_str(data, e.keyword.as_bytes());
            super::codec::put_opt_str(data, e.kind.as_deref());
            super::codec::put_opt_str(data, e.prompt.as_deref());
            for list in [&e.depends, &e.selects, &e.defaults] {
                put_varint(data, list.len() as u64);
                for s in list {
                    put_str(data, s.as_bytes());
                }
            }
        }
        let mut uses = records.uses.clone();
        uses.sort_unstable();
        uses.dedup();
        put_varint(data, uses.len() as u64);
        for (file, line) in uses {
            put_varint(data, file as u64);
            put_varint(data, line as u64);
        }
    }
    symbol_keys
}

/// Where the paths' hash table is in `data.bin`.
struct PathTable {
    /// Its offset.
    at: u64,
    /// Its slots, a power of two.
    slots: u64,
}

/// Appends the open-addressing hash table of the paths (a query looks up thousands of paths:
/// a probe is cheaper than an FST walk).
fn put_path_table(data: &mut Vec<u8>, path_offsets: Vec<(u64, u64)>) -> PathTable {
    let slots = (path_offsets.len() * 2).next_power_of_two().max(2);
    let mut table = vec![0u64; slots];
    for (h, off) in path_offsets {
        let mut i = h as usize & (slots - 1);
        while table[i] != 0 {
            i = (i + 1) & (slots - 1);
        }
        table[i] = off + 1;
    }
    let table_at = data.len() as u64;
    for slot in &table {
        data.extend_from_slice(&slot.to_le_bytes());
    }
    PathTable {
        at: table_at,
        slots: slots as u64,
    }
}

/// Writes `data.bin`, `symbols.fst` and the `meta.json` giving their lengths and checksums
/// into `dir`.
fn write_part(dir: &Path, part: &PartData<'_>) -> Result<(), IndexError> {
    let data = &part.data[..];
    let io = |name: &str| IndexError::io("", &dir.join(name));
    std::fs::create_dir_all(dir).map_err(io(""))?;
    std::fs::write(dir.join("data.bin"), data).map_err(io("data.bin"))?;
    let name = "symbols.fst";
    let mut b = super::fstbuild::MapWriter::new(Vec::new());
    for (k, v) in &part.symbol_keys {
        b.insert(k, *v).map_err(io(name))?;
    }
    let bytes = b.finish().map_err(io(name))?;
    let meta = PartMeta {
        version: super::format::VERSION,
        lengths: vec![
            ("data.bin".into(), data.len() as u64),
            (name.into(), bytes.len() as u64),
        ],
        checksums: vec![
            ("data.bin".into(), super::codec::checksum_bytes(data)),
            (name.into(), super::codec::checksum_bytes(&bytes)),
        ],
    };
    std::fs::write(dir.join(name), bytes).map_err(io(name))?;
    let json = serde_json::to_vec_pretty(&meta).map_err(std::io::Error::from);
    std::fs::write(dir.join(PART_META), json.map_err(io(PART_META))?).map_err(io(PART_META))
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn encode_atom(out: &mut Vec<u8>, a: &Atom) {
    let (tag, value) = match &a.test {
        Test::Set => (0, ""),
        Test::NotSet => (1, ""),
        Test::Eq(v) => (2, v.as_str()),
        Test::Ne(v) => (3, v.as_str()),
        Test::Arch(v) => (4, v.as_str()),
        Test::Unknown => (5, ""),
        Test::Constant(true) => (6, ""),
        Test::Constant(false) => (7, ""),
    };
    out.push(tag);
    put_str(out, a.symbol.as_bytes());
    put_str(out, value.as_bytes());
    put_str(out, a.origin.as_bytes());
}

/// The file of a build-file part that gives the others' lengths and checksums.
const PART_META: &str = "meta.json";

/// What `meta.json` of a build-file part says.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct PartMeta {
    /// Index format version.
    version: u32,
    /// Length of each file, checked when the part is opened.
    lengths: Vec<(String, u64)>,
    /// Checksum of each file, checked by [`super::part::verify`].
    checksums: Vec<(String, u64)>,
}

/// Atom values under one configuration, by atom id; one per query.
#[derive(Default)]
pub struct AtomCache(Vec<u8>);

impl AtomCache {
    /// The cached value of atom `id`, or `eval`'s, remembered.
    fn get(&mut self, id: u64, eval: impl FnOnce() -> Tri) -> Tri {
        let i = id as usize;
        match self.0.get(i).copied().unwrap_or(0) {
            1 => Tri::True,
            2 => Tri::False,
            3 => Tri::Unknown,
            _ => {
                let t = eval();
                if self.0.len() <= i {
                    self.0.resize(i + 1, 0);
                }
                self.0[i] = match t {
                    Tri::True => 1,
                    Tri::False => 2,
                    Tri::Unknown => 3,
                };
                t
            }
        }
    }
}

/// The build-file part of an open index.
pub struct BuildFiles {
    dir: std::path::PathBuf,
    meta: PartMeta,
    damage: Damage,
    data: Mmap,
    /// Where the paths' hash table is, and its size (a power of two).
    table_at: usize,
    slots: usize,
    symbols: fst::Map<MapBytes>,
    files_at: usize,
    /// Where each file path is in `data`: read on first use (most queries name no build
    /// file).
    files: std::sync::OnceLock<Vec<(usize, usize)>>,
    atoms_at: usize,
    atoms_count: usize,
    inputs_at: usize,
}

impl BuildFiles {
    /// Opens the part in `dir`.
    pub fn open(dir: &Path) -> Result<BuildFiles, IndexError> {
        let meta_path = dir.join(PART_META);
        let text = std::fs::read(&meta_path).map_err(IndexError::io("", &meta_path))?;
        let meta: PartMeta = serde_json::from_slice(&text)
            .map_err(|e| IndexError::damaged(&meta_path, e.to_string()))?;
        if meta.version != super::format::VERSION {
            return Err(IndexError::damaged(&meta_path, "another format version"));
        }
        let length = |name: &str| meta.lengths.iter().find(|(n, _)| n == name).map(|x| x.1);
        let sum = |name: &str| meta.checksums.iter().find(|(n, _)| n == name).map(|x| x.1);
        for name in ["data.bin", "symbols.fst"] {
            if length(name).is_none() || sum(name).is_none() {
                return Err(IndexError::damaged(
                    &meta_path,
                    format!("it gives no length or checksum of {name}"),
                ));
            }
        }
        let bad = |what: &str| IndexError::damaged(dir.join("data.bin"), what);
        let data = map(dir, "data.bin", length("data.bin"))?;
        check_header(&data, b"KBLD", &dir.join("data.bin")).map_err(|e| match e {
            IndexError::Format { detail, .. } => bad(&detail),
            e => e,
        })?;
        if super::damage::checksum_at_open(data.len() as u64)
            && Some(super::codec::checksum_bytes(&data)) != sum("data.bin")
        {
            return Err(bad("checksum mismatch"));
        }
        let toc = |i: usize| -> Result<usize, IndexError> {
            let at = HEADER_LEN + i * 8;
            let b = data
                .get(at..at + 8)
                .ok_or_else(|| bad("data.bin is truncated"))?;
            let mut v = [0u8; 8];
            v.copy_from_slice(b);
            Ok(u64::from_le_bytes(v) as usize)
        };
        let (files_at, atoms_at, atoms_count, inputs_at) = (toc(0)?, toc(1)?, toc(2)?, toc(3)?);
        let (table_at, slots, len) = (toc(4)?, toc(5)?, toc(6)?);
        if len != data.len()
            || files_at > len
            || atoms_at.saturating_add(atoms_count.saturating_mul(4)) > len
            || table_at.saturating_add(slots.saturating_mul(8)) > len
            || !slots.is_power_of_two()
        {
            return Err(bad("data.bin is truncated or replaced"));
        }
        let symbols = open_fst(dir, "symbols.fst", length("symbols.fst"))?;
        let fst_bytes = symbols.as_fst().as_bytes();
        if super::damage::checksum_at_open(fst_bytes.len() as u64)
            && Some(super::codec::checksum_bytes(fst_bytes)) != sum("symbols.fst")
        {
            return Err(IndexError::damaged(
                dir.join("symbols.fst"),
                "checksum mismatch",
            ));
        }
        Ok(BuildFiles {
            dir: dir.to_path_buf(),
            meta,
            damage: Damage::default(),
            table_at,
            slots,
            symbols,
            data,
            files_at,
            files: std::sync::OnceLock::new(),
            atoms_at,
            atoms_count,
            inputs_at,
        })
    }

    /// The first damage a read of this part ran into, as a clear error.
    pub fn damage(&self) -> Option<&IndexError> {
        self.damage.get()
    }

    #[cold]
    fn damaged(&self, what: &str) {
        self.damage.mark(&self.dir, "data.bin", what);
    }

    /// The directory of the part.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, id: u64) -> String {
        let files = self.files.get_or_init(|| {
            let mut r = Reader::new(self.data.get(self.files_at..).unwrap_or(&[]));
            let n = r.varint() as usize;
            let mut files = Vec::with_capacity(n.min(1 << 20));
            for _ in 0..n.min(1 << 20) {
                let s = r.str();
                if r.overrun {
                    self.damaged("the list of build files does not decode");
                    break;
                }
                let end = self.files_at + r.pos();
                files.push((end - s.len(), s.len()));
            }
            files
        });
        match files
            .get(id as usize)
            .and_then(|&(at, len)| self.data.get(at..at + len))
        {
            Some(b) => String::from_utf8_lossy(b).into_owned(),
            None => {
                self.damaged(&format!("no build file {id}"));
                String::new()
            }
        }
    }

    /// The value of atom `id` under `config`, read without copying its strings (only an
    /// `ifeq` value or an architecture name is copied).
    fn eval_atom(&self, id: u64, config: &Config) -> Tri {
        let Some(bytes) = self.atom_bytes(id) else {
            return Tri::Unknown;
        };
        let mut r = Reader::new(bytes);
        let tag = r.u8();
        let symbol = std::str::from_utf8(r.str()).unwrap_or("");
        if r.overrun || tag > 7 {
            self.damaged(&format!("atom {id} does not decode"));
            return Tri::Unknown;
        }
        let value = || String::from_utf8_lossy(r.clone().str()).into_owned();
        let test = match tag {
            0 => Test::Set,
            1 => Test::NotSet,
            2 => Test::Eq(value()),
            3 => Test::Ne(value()),
            4 => Test::Arch(value()),
            6 => Test::Constant(true),
            7 => Test::Constant(false),
            _ => Test::Unknown,
        };
        test.eval(symbol, config)
    }

    /// The encoded atom `id`, remembering damage when it is out of bounds.
    fn atom_bytes(&self, id: u64) -> Option<&[u8]> {
        let bytes = usize::try_from(id)
            .ok()
            .filter(|&id| id < self.atoms_count)
            .and_then(|id| {
                let at = self.atoms_at + 4 * id;
                let b: [u8; 4] = self.data.get(at..at + 4)?.try_into().ok()?;
                let off = u32::from_le_bytes(b) as usize;
                self.data.get(off..).filter(|_| off >= HEADER_LEN)
            });
        if bytes.is_none() {
            self.damaged(&format!("no atom {id}"));
        }
        bytes
    }

    fn atom(&self, id: u64) -> Atom {
        let unknown = Atom {
            symbol: String::new(),
            test: Test::Unknown,
            origin: "a corrupt build-file index".into(),
        };
        let Some(bytes) = self.atom_bytes(id) else {
            return unknown;
        };
        let mut r = Reader::new(bytes);
        let tag = r.u8();
        let text = |r: &mut Reader<'_>| String::from_utf8_lossy(r.str()).into_owned();
        let symbol = text(&mut r);
        let value = text(&mut r);
        let origin = text(&mut r);
        let test = match tag {
            0 => Test::Set,
            1 => Test::NotSet,
            2 => Test::Eq(value),
            3 => Test::Ne(value),
            4 => Test::Arch(value),
            6 => Test::Constant(true),
            7 => Test::Constant(false),
            _ => Test::Unknown,
        };
        Atom {
            symbol,
            test,
            origin,
        }
    }

    /// Where the condition of `key` starts, through the hash table.
    fn find_path(&self, key: &str) -> Option<usize> {
        let mask = self.slots - 1;
        let mut i = hash64(key.as_bytes()) as usize & mask;
        for _ in 0..self.slots {
            let at = self.table_at + 8 * i;
            let mut b = [0u8; 8];
            b.copy_from_slice(self.data.get(at..at + 8)?);
            let off = u64::from_le_bytes(b) as usize;
            if off == 0 {
                return None;
            }
            let Some(bytes) = self.data.get(off - 1..) else {
                self.damaged(&format!("path slot {i} points outside the file"));
                return None;
            };
            let mut r = Reader::new(bytes);
            if r.str() == key.as_bytes() {
                return Some(off - 1 + r.pos());
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Evaluates the condition of an object (`fs/ext4/acl.o`) or directory (`fs/ext4/`)
    /// under `config`; `None` when Kbuild does not reach it. Atoms are evaluated once per
    /// `cache` (a query's); a reason is built only for a hidden path.
    fn decide_key(&self, key: &str, config: &Config, cache: &mut AtomCache) -> Option<Decision> {
        let mut r = Reader::new(self.data.get(self.find_path(key)?..)?);
        let n = r.varint() as usize;
        let mut first_false = None;
        let mut unknown = false;
        for _ in 0..n.min(1 << 16) {
            let k = r.varint() as usize;
            let mut value = Tri::True;
            for _ in 0..k.min(1 << 16) {
                let id = r.varint();
                if value == Tri::False {
                    continue; // the rest of this alternative is read past
                }
                match cache.get(id, || self.eval_atom(id, config)) {
                    Tri::True => {}
                    Tri::Unknown => value = Tri::Unknown,
                    Tri::False => {
                        value = Tri::False;
                        first_false.get_or_insert(id);
                    }
                }
            }
            match value {
                Tri::True => return Some(Decision::Live),
                Tri::Unknown => unknown = true,
                Tri::False => {}
            }
        }
        if r.overrun {
            self.damaged(&format!("the condition of {key} does not decode"));
            return None;
        }
        Some(match (unknown, first_false) {
            (false, Some(id)) => Decision::Hidden(self.atom(id).reason(config)),
            _ => Decision::Unknown,
        })
    }

    /// Whether `config` builds the C or assembly file `path`: from its own Makefile line when
    /// one names it, else from the nearest directory Kbuild reaches (a directory it does not
    /// build hides every source below it). Headers and files Kbuild does not name in a built
    /// directory (included by another file, built by a special rule) are not decided.
    pub fn decide_file(&self, path: &str, config: &Config, cache: &mut AtomCache) -> Decision {
        let Some(stem) = path.strip_suffix(".c").or_else(|| path.strip_suffix(".S")) else {
            return Decision::Unknown;
        };
        let mut key = String::with_capacity(path.len());
        key.push_str(stem);
        key.push_str(".o");
        if let Some(d) = self.decide_key(&key, config, cache) {
            return d;
        }
        let mut dir = path;
        while let Some((parent, _)) = dir.rsplit_once('/') {
            dir = parent;
            key.clear();
            key.push_str(parent);
            key.push('/');
            if let Some(d) = self.decide_key(&key, config, cache) {
                return match d {
                    Decision::Hidden(r) => Decision::Hidden(r),
                    _ => Decision::Unknown,
                };
            }
        }
        Decision::Unknown
    }

    /// What Kbuild builds the C or assembly file `path` under: the alternatives (each a list
    /// of atoms, all of which must hold) of its own object's Makefile lines, else of the
    /// nearest directory Kbuild reaches; empty when Kbuild reaches neither.
    pub fn file_conditions(&self, path: &str) -> Vec<Vec<knav_kconfig::makefile::Atom>> {
        let Some(stem) = path.strip_suffix(".c").or_else(|| path.strip_suffix(".S")) else {
            return Vec::new();
        };
        let mut keys = vec![format!("{stem}.o")];
        let mut dir = path;
        while let Some((parent, _)) = dir.rsplit_once('/') {
            dir = parent;
            keys.push(format!("{parent}/"));
        }
        for key in keys {
            let Some(at) = self.find_path(&key) else {
                continue;
            };
            let Some(bytes) = self.data.get(at..) else {
                return Vec::new();
            };
            let mut r = Reader::new(bytes);
            let n = r.varint() as usize;
            let mut out = Vec::with_capacity(n.min(16));
            for _ in 0..n.min(1 << 16) {
                let k = r.varint() as usize;
                let ids: Vec<u64> = (0..k.min(1 << 16)).map(|_| r.varint()).collect();
                if r.overrun {
                    self.damaged(&format!("the condition of {key} does not decode"));
                    return Vec::new();
                }
                out.push(ids.into_iter().map(|id| self.atom(id)).collect());
            }
            return out;
        }
        Vec::new()
    }

    fn symbol_reader(&self, symbol: &str) -> Option<Reader<'_>> {
        let off = self.symbols.get(symbol)? as usize;
        let bytes = self.data.get(off..).filter(|_| off >= HEADER_LEN);
        if bytes.is_none() {
            self.damaged(&format!("the record of {symbol} is outside the file"));
        }
        Some(Reader::new(bytes?))
    }

    /// The Kconfig entries defining `symbol` (`CONFIG_X`), in path order.
    pub fn entries(&self, symbol: &str) -> Vec<KconfigEntry> {
        match self.symbol_reader(symbol) {
            Some(mut r) => self.read_entries(&mut r, symbol),
            None => Vec::new(),
        }
    }

    /// Where Kconfig files and Makefiles name `symbol`, in path then line order.
    pub fn uses(&self, symbol: &str) -> Vec<BuildUse> {
        let Some(mut r) = self.symbol_reader(symbol) else {
            return Vec::new();
        };
        // The uses follow the entries (a symbol has a handful).
        self.read_entries(&mut r, symbol);
        let k = r.varint() as usize;
        let mut out = Vec::with_capacity(k.min(1 << 16));
        for _ in 0..k.min(1 << 20) {
            let path = self.file(r.varint());
            let line = r.varint() as u32;
            if r.overrun {
                self.damaged(&format!("the uses of {symbol} do not decode"));
                break;
            }
            out.push(BuildUse { path, line });
        }
        out
    }

    /// A symbol's entries, as [`build`] writes them, from `r` at the start of its record.
    fn read_entries(&self, r: &mut Reader<'_>, symbol: &str) -> Vec<KconfigEntry> {
        let n = r.varint() as usize;
        let mut out = Vec::with_capacity(n.min(64));
        let text = |r: &mut Reader<'_>| String::from_utf8_lossy(r.str()).into_owned();
        for _ in 0..n.min(1 << 16) {
            let path = self.file(r.varint());
            let line = r.varint() as u32;
            let end_line = r.varint() as u32;
            let keyword = text(r);
            let kind = r.opt_str().map(str::to_string);
            let prompt = r.opt_str().map(str::to_string);
            let mut lists: [Vec<String>; 3] = Default::default();
            for list in lists.iter_mut() {
                let k = r.varint() as usize;
                *list = (0..k.min(1 << 16)).map(|_| text(r)).collect();
            }
            let [depends, selects, defaults] = lists;
            if r.overrun {
                self.damaged(&format!("the entries of {symbol} do not decode"));
                break;
            }
            out.push(KconfigEntry {
                path,
                entry: kconfig::Entry {
                    symbol: symbol.to_string(),
                    line,
                    keyword,
                    kind,
                    prompt,
                    depends,
                    selects,
                    defaults,
                    end_line,
                },
            });
        }
        out
    }

    /// True when `files` are the build files this part was built from: the same paths and
    /// sizes, and the same mtimes or, where an mtime moved, the same contents.
    pub fn unchanged(&self, root: &Path, files: &[SourceFile]) -> bool {
        let inputs: HashMap<String, (u64, i64, u64)> = self
            .inputs_hashed()
            .into_iter()
            .map(|(f, h)| (f.path, (f.size, f.mtime_ns, h)))
            .collect();
        let beneath = crate::tree::beneath::Root::open(root).ok();
        inputs.len() == files.len()
            && files.par_iter().all(|f| match inputs.get(&f.path) {
                Some(&(size, mtime, hash)) if size == f.size => {
                    mtime == f.mtime_ns
                        || beneath
                            .as_ref()
                            .and_then(|b| b.read_capped(&f.path, MAX_BUILD_FILE_BYTES).ok())
                            .is_some_and(|b| hash64(&b) == hash)
                }
                _ => false,
            })
    }

    /// The build files this part was built from, with their sizes and mtimes.
    pub fn inputs(&self) -> Vec<SourceFile> {
        self.inputs_hashed().into_iter().map(|(f, _)| f).collect()
    }

    fn inputs_hashed(&self) -> Vec<(SourceFile, u64)> {
        let Some(bytes) = self.data.get(self.inputs_at..) else {
            return Vec::new();
        };
        let mut r = Reader::new(bytes);
        let n = r.varint() as usize;
        let mut out = Vec::with_capacity(n.min(1 << 20));
        for _ in 0..n.min(1 << 22) {
            let path = String::from_utf8_lossy(r.str()).into_owned();
            let size = r.varint();
            let mtime_ns = r.varint() as i64;
            let hash = r.varint();
            if r.overrun {
                self.damaged("the list of build files does not decode");
                break;
            }
            out.push((
                SourceFile {
                    path,
                    size,
                    mtime_ns,
                },
                hash,
            ));
        }
        out
    }
}

impl super::part::FromFacts for BuildFiles {
    type Facts = BuildFileFacts;

    fn facts(_path: &str, bytes: Option<&[u8]>) -> BuildFileFacts {
        bytes.map(|b| (hash64(b), String::from_utf8_lossy(b).into_owned()))
    }
}

impl super::part::Part for BuildFiles {
    const KIND: super::part::Kind = super::part::Kind::BuildFiles;
    type Ref = BuildFilesRef;
    type Open = BuildFiles;

    fn open(index_dir: &Path, r: &BuildFilesRef) -> Result<BuildFiles, IndexError> {
        BuildFiles::open(&index_dir.join(&r.dir))
    }

    /// The part keeps its checksums in its own `meta.json`: stamped once opened.
    fn stamp<'a>(
        r: &'a BuildFilesRef,
        open: Option<&'a BuildFiles>,
    ) -> Option<super::part::Stamp<'a>> {
        let sums = &open?.meta.checksums;
        Some(super::part::Stamp::new(Self::KIND, &r.dir, sums))
    }
}
