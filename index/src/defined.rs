//! The search tables of a segment: its *defined* names (a ctags definition other than a label,
//! a local or an entry-point mark, or a `#define`) and the part indexes of those names and of
//! its file paths. What search_symbols and search_files read.
//!
//! * `symnames-K.dat`: the defined names of name shard K in name order, 9 bytes each: the
//!   offset of its entry in `names-K.dat` (its value in `names-K.fst`, 5 bytes), the kinds of
//!   its definitions (a bit per [`Kind`]), the [`crate::rank::PathRank::byte`] of its best one, and
//!   its length (at most 255). A name's id is `K << 32 | its ordinal`, so ids sort as names do
//!   (shards are ranges of the name order). Its name is read back from `names-K.fst`, whose
//!   values (entry offsets) grow with the names;
//! * `symparts.fst` / `.dat`: lowercase name part → ids ([`super::nameparts`]);
//! * `fileparts.fst` / `.dat`: lowercase path part → file ids.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use knav_ctags::Kind;
use memmap2::Mmap;

use super::damage::open_fst;
use super::disk::{map, MapBytes};
use super::error::IndexError;
use super::format::{check_header, header, HEADER_LEN, NAME_SHARDS};
use super::nameparts::{path_parts, NameParts, PartsWriter};
use crate::rank::PathRank;

/// Bytes per defined name in `symnames-K.dat`.
const INFO_LEN: usize = 9;

/// The search files of a segment.
pub fn files() -> Vec<String> {
    let mut out: Vec<String> = (0..NAME_SHARDS)
        .map(|k| format!("symnames-{k}.dat"))
        .collect();
    out.extend(
        [
            "symparts.fst",
            "symparts.dat",
            "fileparts.fst",
            "fileparts.dat",
        ]
        .map(String::from),
    );
    out
}

/// The id of ordinal `ordinal` of shard `shard`.
pub fn id(shard: usize, ordinal: u64) -> u64 {
    ((shard as u64) << 32) | ordinal
}

/// What search keeps of a defined name: the kinds of its definitions and its best rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NameInfo {
    /// A bit per [`Kind`] (`1 << kind as u8`).
    pub kinds: u16,
    /// The smallest [`crate::rank::PathRank::byte`] of its definitions.
    pub rank: u8,
    /// Its length in bytes, at most 255.
    pub len: u8,
}

/// The [`NameInfo`] of a name with ctags definitions `defs` (kind, file) and, when it has `#define`s, one of
/// them in file `macro_file`; `path_rank` gives a file id's [`PathRank`]. `None`: nothing
/// search counts as a definition.
pub fn describe(
    name: &[u8],
    defs: impl Iterator<Item = (Kind, u32)>,
    macro_file: Option<u32>,
    path_rank: impl Fn(u32) -> PathRank,
) -> Option<NameInfo> {
    let mut info = NameInfo {
        kinds: 0,
        rank: u8::MAX,
        len: name.len().min(255) as u8,
    };
    let defs = defs.filter(|(kind, _)| !matches!(kind, Kind::Entry | Kind::Label | Kind::Local));
    for (kind, file) in defs.chain(macro_file.map(|f| (Kind::Macro, f))) {
        info.kinds |= 1 << kind as u8;
        info.rank = info.rank.min(path_rank(file).byte(kind));
    }
    (info.kinds != 0).then_some(info)
}

/// Writes one shard's defined names, in name order: the table, and the names themselves in a
/// scratch file for [`write_name_parts`] (read back from `names-K.fst` instead, they cost a
/// walk over every name of the shard, defined or not: a second of CPU on the kernel).
pub struct DefinedWriter {
    dat: BufWriter<File>,
    names: BufWriter<File>,
    /// One name's entry in `names`, reused.
    entry: Vec<u8>,
}

/// The scratch file of shard `shard`'s defined names: each as a varint length and its bytes.
fn names_scratch(dir: &Path, shard: usize) -> std::path::PathBuf {
    dir.join(format!("symnames-{shard}.names"))
}

impl DefinedWriter {
    /// A writer of shard `shard`'s file in `dir`.
    pub fn new(dir: &Path, shard: usize) -> io::Result<DefinedWriter> {
        let mut dat = BufWriter::new(File::create(dir.join(format!("symnames-{shard}.dat")))?);
        dat.write_all(&header(b"SYMN"))?;
        let names = BufWriter::new(File::create(names_scratch(dir, shard))?);
        Ok(DefinedWriter {
            dat,
            names,
            entry: Vec::new(),
        })
    }

    /// Adds the next defined name (names come in increasing order), whose entry is at `offset`
    /// of `names-K.dat`.
    pub fn add(&mut self, name: &[u8], offset: u64, info: NameInfo) -> io::Result<()> {
        self.entry.clear();
        super::codec::put_str(&mut self.entry, name);
        self.names.write_all(&self.entry)?;
        let mut rec = [0u8; INFO_LEN];
        rec[..5].copy_from_slice(&offset.to_le_bytes()[..5]);
        rec[5..7].copy_from_slice(&info.kinds.to_le_bytes());
        rec[7] = info.rank;
        rec[8] = info.len;
        self.dat.write_all(&rec)
    }

    /// Finishes the shard's files.
    pub fn finish(self) -> io::Result<()> {
        let (mut dat, mut names) = (self.dat, self.names);
        names.flush()?;
        dat.flush()
    }
}

/// Writes `symparts.fst` / `.dat` from the finished `names-K.fst` and `symnames-K.dat` of the
/// segment in `dir`: done after the names are merged, so that its memory does not add to
/// theirs, one thread per shard. The defined names are found by streaming each FST beside its
/// table (both in name order).
pub fn write_name_parts(dir: &Path) -> Result<(), IndexError> {
    // Each shard's parts are found and sorted on its own thread.
    let shards: Vec<Result<super::nameparts::SortedParts, IndexError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..NAME_SHARDS)
            .map(|shard| s.spawn(move || shard_parts(dir, shard).map(PartsWriter::into_sorted)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(IndexError::Build("a name part thread panicked".into()))
                })
            })
            .collect()
    });
    // Shards are ranges of the name order: each one's ids are above the last one's.
    let shards = shards.into_iter().collect::<Result<Vec<_>, _>>()?;
    super::nameparts::write_sorted(shards, &dir.join("symparts.fst"), &dir.join("symparts.dat"))
        .map_err(IndexError::io("cannot write index in", dir))
}

/// The parts of shard `shard`'s defined names, read from the scratch file its
/// [`DefinedWriter`] wrote (removed then).
fn shard_parts(dir: &Path, shard: usize) -> Result<PartsWriter, IndexError> {
    let path = names_scratch(dir, shard);
    let names = std::fs::read(&path).map_err(IndexError::io("cannot read", &path))?;
    let _ = std::fs::remove_file(&path);
    let mut parts = PartsWriter::default();
    let mut name_parts = NameParts::default();
    let mut r = super::codec::Reader::new(&names);
    let mut ordinal = 0u64;
    while !r.at_end() {
        let name = r.str();
        if r.overrun {
            return Err(IndexError::damaged(
                path,
                "a defined name is cut short".to_string(),
            ));
        }
        name_parts.add(&mut parts, name, id(shard, ordinal));
        ordinal += 1;
    }
    Ok(parts)
}

/// Writes `fileparts.fst` / `.dat` for a segment's file paths (`paths[id]`).
pub fn write_file_parts<'a>(dir: &Path, paths: impl Iterator<Item = &'a str>) -> io::Result<()> {
    let mut w = PartsWriter::default();
    for (id, path) in paths.enumerate() {
        for part in path_parts(path.as_bytes()) {
            w.add(&part, id as u64);
        }
    }
    w.finish(&dir.join("fileparts.fst"), &dir.join("fileparts.dat"))
}

/// The search tables of an open segment.
pub struct SearchTables {
    infos: Vec<Mmap>,
    symparts: (fst::Map<MapBytes>, Mmap),
    fileparts: (fst::Map<MapBytes>, Mmap),
}

/// Which part index to ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartsOf {
    /// Defined names' parts → name ids.
    Names,
    /// Paths' parts → file ids.
    Files,
}

impl SearchTables {
    /// Opens the tables in `dir`, checking headers and lengths (`len` gives each file's).
    pub fn open(dir: &Path, len: impl Fn(&str) -> Option<u64>) -> Result<SearchTables, IndexError> {
        let headed = |name: &str, kind: &[u8; 4]| -> Result<Mmap, IndexError> {
            let m = map(dir, name, len(name))?;
            check_header(&m, kind, &dir.join(name))?;
            Ok(m)
        };
        let mut infos = Vec::with_capacity(NAME_SHARDS);
        for k in 0..NAME_SHARDS {
            let d = format!("symnames-{k}.dat");
            let info = headed(&d, b"SYMN")?;
            if !(info.len() - HEADER_LEN).is_multiple_of(INFO_LEN) {
                return Err(IndexError::damaged(
                    dir.join(&d),
                    "its length is not a whole number of records",
                ));
            }
            infos.push(info);
        }
        let part = |f: &str, d: &str| -> Result<(fst::Map<MapBytes>, Mmap), IndexError> {
            Ok((open_fst(dir, f, len(f))?, headed(d, b"PART")?))
        };
        Ok(SearchTables {
            infos,
            symparts: part("symparts.fst", "symparts.dat")?,
            fileparts: part("fileparts.fst", "fileparts.dat")?,
        })
    }

    /// The tables with the segment's name FSTs, to read names by.
    pub fn with<'a>(&'a self, names: &'a [fst::Map<MapBytes>]) -> Search<'a> {
        Search {
            tables: self,
            names,
        }
    }
}

/// A segment's search tables and its name FSTs.
pub struct Search<'a> {
    tables: &'a SearchTables,
    names: &'a [fst::Map<MapBytes>],
}

impl Search<'_> {
    /// The record of the defined name with id `id`: its `names-K.dat` offset and info.
    fn record(&self, id: u64) -> Option<(u64, NameInfo)> {
        let table = self.tables.infos.get((id >> 32) as usize)?;
        let at = HEADER_LEN + (id & 0xffff_ffff) as usize * INFO_LEN;
        let b = table.get(at..at + INFO_LEN)?;
        let mut off = [0u8; 8];
        off[..5].copy_from_slice(&b[..5]);
        Some((
            u64::from_le_bytes(off),
            NameInfo {
                kinds: u16::from_le_bytes([b[5], b[6]]),
                rank: b[7],
                len: b[8],
            },
        ))
    }

    /// The ordinal in shard `shard`'s table of the defined name whose entry is at `offset`.
    fn ordinal(&self, shard: usize, offset: u64) -> Option<u64> {
        let table = self.tables.infos.get(shard)?;
        let n = (table.len() - HEADER_LEN) / INFO_LEN;
        let key = |i: usize| {
            let at = HEADER_LEN + i * INFO_LEN;
            let mut off = [0u8; 8];
            off[..5].copy_from_slice(&table[at..at + 5]);
            u64::from_le_bytes(off)
        };
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match key(mid).cmp(&offset) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u64),
            }
        }
        None
    }

    /// The id of defined name `name`.
    pub fn id_of(&self, name: &[u8]) -> Option<u64> {
        let shard = super::format::shard_of(name);
        let offset = self.names.get(shard)?.get(name)?;
        Some(id(shard, self.ordinal(shard, offset)?))
    }

    /// The id of the name of shard `shard` whose entry is at `offset`, if it is defined.
    pub fn id_at(&self, shard: usize, offset: u64) -> Option<u64> {
        Some(id(shard, self.ordinal(shard, offset)?))
    }

    /// The FSTs of every name of the segment (values: entry offsets).
    pub fn names(&self) -> &[fst::Map<MapBytes>] {
        self.names
    }

    /// The defined name with id `id`; `None` when there is none (damage).
    pub fn name(&self, id: u64) -> Option<String> {
        let (offset, _) = self.record(id)?;
        let key = self
            .names
            .get((id >> 32) as usize)?
            .as_fst()
            .get_key(offset)?;
        String::from_utf8(key).ok()
    }

    /// What is stored of the defined name with id `id`.
    pub fn info(&self, id: u64) -> Option<NameInfo> {
        self.record(id).map(|(_, info)| info)
    }

    /// The sorted ids of every part starting with (or, when `exact`, equal to) lowercase
    /// `token`; `None` on damage.
    pub fn ids(&self, of: PartsOf, token: &[u8], exact: bool) -> Option<Vec<u64>> {
        let (fst, dat) = match of {
            PartsOf::Names => &self.tables.symparts,
            PartsOf::Files => &self.tables.fileparts,
        };
        super::nameparts::ids_matching(fst, dat, token, exact)
    }
}
