//! The search tables of a segment: its *defined* names (a ctags definition other than a label,
//! a local or an entry-point mark, or a `#define`) and the part indexes of those names and of
//! its file paths. What search_symbols and search_files read.
//!
//! * `symnames-K.fst`: the defined names of name shard K → their ordinal in the shard; a name's
//!   id is `K << 32 | ordinal`, so ids sort as names do (shards are ranges of the name order);
//! * `symnames-K.dat`: per ordinal, 4 bytes: the kinds of its definitions (a bit per
//!   [`Kind`]), the [`crate::rank::rank_byte`] of its best one, and its length (at most 255);
//! * `symparts.fst` / `.dat`: lowercase name part → ids ([`super::parts`]);
//! * `fileparts.fst` / `.dat`: lowercase path part → file ids.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use knav_ctags::Kind;
use memmap2::Mmap;

use super::damage::open_fst;
use super::format::{check_header, header, Def, HEADER_LEN, NAME_SHARDS};
use super::parts::{name_parts, path_parts, PartsWriter};
use super::segment::{map, MapBytes};

/// Bytes per defined name in `symnames-K.dat`.
const INFO_LEN: usize = 4;

/// The search files of a segment.
pub fn files() -> Vec<String> {
    let mut out: Vec<String> = (0..NAME_SHARDS)
        .flat_map(|k| [format!("symnames-{k}.fst"), format!("symnames-{k}.dat")])
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
    /// The smallest [`crate::rank::rank_byte`] of its definitions.
    pub rank: u8,
    /// Its length in bytes, at most 255.
    pub len: u8,
}

/// The [`NameInfo`] of a name with ctags definitions `defs` and, when it has `#define`s, one of
/// them in file `macro_file`; `path` gives a file id's path. `None`: nothing search counts as
/// a definition.
pub fn describe<'a>(
    name: &[u8],
    defs: impl Iterator<Item = Def<'a>>,
    macro_file: Option<u32>,
    path: impl Fn(u32) -> &'a str,
) -> Option<NameInfo> {
    let mut info = NameInfo {
        kinds: 0,
        rank: u8::MAX,
        len: name.len().min(255) as u8,
    };
    let defs = defs
        .filter(|d| !matches!(d.kind, Kind::Entry | Kind::Label | Kind::Local))
        .map(|d| (d.kind, d.file));
    for (kind, file) in defs.chain(macro_file.map(|f| (Kind::Macro, f))) {
        info.kinds |= 1 << kind as u8;
        info.rank = info.rank.min(crate::rank::rank_byte(kind, path(file)));
    }
    (info.kinds != 0).then_some(info)
}

/// Writes one shard's defined names, in name order, and collects their parts.
pub struct DefinedWriter {
    shard: usize,
    fst: fst::MapBuilder<BufWriter<File>>,
    dat: BufWriter<File>,
    count: u64,
    parts: PartsWriter,
}

impl DefinedWriter {
    /// A writer of shard `shard`'s files in `dir`.
    pub fn new(dir: &Path, shard: usize) -> io::Result<DefinedWriter> {
        let fst = fst::MapBuilder::new(BufWriter::new(File::create(
            dir.join(format!("symnames-{shard}.fst")),
        )?))
        .map_err(io::Error::other)?;
        let mut dat = BufWriter::new(File::create(dir.join(format!("symnames-{shard}.dat")))?);
        dat.write_all(&header(b"SYMN"))?;
        Ok(DefinedWriter {
            shard,
            fst,
            dat,
            count: 0,
            parts: PartsWriter::default(),
        })
    }

    /// Adds the next defined name (names come in increasing order).
    pub fn add(&mut self, name: &[u8], info: NameInfo) -> io::Result<()> {
        self.fst
            .insert(name, self.count)
            .map_err(io::Error::other)?;
        let [k0, k1] = info.kinds.to_le_bytes();
        self.dat.write_all(&[k0, k1, info.rank, info.len])?;
        let id = id(self.shard, self.count);
        for part in name_parts(name) {
            self.parts.add(&part, id);
        }
        self.count += 1;
        Ok(())
    }

    /// Finishes the shard's files; returns its names' parts and how many names it holds.
    pub fn finish(self) -> io::Result<(PartsWriter, u64)> {
        self.fst.finish().map_err(io::Error::other)?;
        let mut dat = self.dat;
        dat.flush()?;
        Ok((self.parts, self.count))
    }
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
    names: Vec<fst::Map<MapBytes>>,
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
    pub fn open(dir: &Path, len: impl Fn(&str) -> Option<u64>) -> Result<SearchTables, String> {
        let headed = |name: &str, kind: &[u8; 4]| -> Result<Mmap, String> {
            let m = map(dir, name, len(name))?;
            check_header(&m, kind).map_err(|e| format!("{}/{name}: {e}", dir.display()))?;
            Ok(m)
        };
        let mut names = Vec::with_capacity(NAME_SHARDS);
        let mut infos = Vec::with_capacity(NAME_SHARDS);
        for k in 0..NAME_SHARDS {
            let (f, d) = (format!("symnames-{k}.fst"), format!("symnames-{k}.dat"));
            let fst = open_fst(dir, &f, len(&f))?;
            let info = headed(&d, b"SYMN")?;
            if (info.len() - HEADER_LEN) / INFO_LEN != fst.len() {
                return Err(super::damage::message(
                    &dir.join(&d),
                    "its name count differs from its FST's",
                ));
            }
            names.push(fst);
            infos.push(info);
        }
        let part = |f: &str, d: &str| -> Result<(fst::Map<MapBytes>, Mmap), String> {
            Ok((open_fst(dir, f, len(f))?, headed(d, b"PART")?))
        };
        Ok(SearchTables {
            names,
            infos,
            symparts: part("symparts.fst", "symparts.dat")?,
            fileparts: part("fileparts.fst", "fileparts.dat")?,
        })
    }

    /// The FSTs of defined names, one per shard (values are ordinals).
    pub fn names(&self) -> &[fst::Map<MapBytes>] {
        &self.names
    }

    /// The id of defined name `name`.
    pub fn id_of(&self, name: &[u8]) -> Option<u64> {
        let shard = super::format::shard_of(name);
        Some(id(shard, self.names.get(shard)?.get(name)?))
    }

    /// The defined name with id `id`; `None` when there is none (damage).
    pub fn name(&self, id: u64) -> Option<String> {
        let fst = self.names.get((id >> 32) as usize)?;
        let key = fst.as_fst().get_key(id & 0xffff_ffff)?;
        String::from_utf8(key).ok()
    }

    /// What is stored of the defined name with id `id`.
    pub fn info(&self, id: u64) -> Option<NameInfo> {
        let info = self.infos.get((id >> 32) as usize)?;
        let at = HEADER_LEN + (id & 0xffff_ffff) as usize * INFO_LEN;
        let b = info.get(at..at + INFO_LEN)?;
        Some(NameInfo {
            kinds: u16::from_le_bytes([b[0], b[1]]),
            rank: b[2],
            len: b[3],
        })
    }

    /// The sorted ids of every part starting with (or, when `exact`, equal to) lowercase
    /// `token`; `None` on damage.
    pub fn ids(&self, of: PartsOf, token: &[u8], exact: bool) -> Option<Vec<u64>> {
        let (fst, dat) = match of {
            PartsOf::Names => &self.symparts,
            PartsOf::Files => &self.fileparts,
        };
        super::parts::ids_matching(fst, dat, token, exact)
    }
}
