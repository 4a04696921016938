//! Reading one segment: memory-mapped names, postings, definitions and files.
//!
//! # Safety
//!
//! Index files are memory-mapped. A segment is never written after it is published (a refresh
//! writes a new one beside it), so the maps only break if something outside knav truncates an
//! index file while a query runs; that ends the query with SIGBUS, it cannot corrupt anything.
//!
//! Every read is bounds-checked: damage a decoder runs into (a record past the end of its
//! file, a path that is not UTF-8) is remembered ([`Segment::damage`]) and the answer reports
//! it instead of answering from it.

use super::disk::{map, MapBytes};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use memmap2::Mmap;
use serde::{Deserialize, Serialize};

use super::code::read::CodeIndex;
use super::codec::Reader;
use super::damage::{open_fst, Damage};
use super::defined::{Search, SearchTables};
use super::error::IndexError;
pub use super::format::NameEntry;
use super::format::{check_header, shard_of, Def, FileRecord, HEADER_LEN, NAME_SHARDS};
use super::format::{FileStat, FileStatus};

pub use super::postings::{Posting, Postings};

/// What `meta.json` says about a segment.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SegmentMeta {
    /// Index format version.
    pub version: u32,
    /// Files in the segment (indexed or not).
    pub files: u32,
    /// Distinct names.
    pub names: u64,
    /// Identifier occurrences.
    pub occurrences: u64,
    /// Definitions.
    pub defs: u64,
    /// Bytes of source read.
    pub source_bytes: u64,
    /// Files that needed no ctags run (only preprocessor lines).
    pub macro_only_files: u64,
    /// Spilled runs merged while building.
    pub runs: usize,
    /// Bytes ctags read: the files it was given, with what it need not see left out.
    #[serde(default)]
    pub ctags_bytes: u64,
    /// Definitions kernel macros made, by family.
    #[serde(default)]
    pub macro_definitions: std::collections::BTreeMap<String, u64>,
    /// Functions stored in struct members (ops tables, `x->f = fn`).
    #[serde(default)]
    pub registrations: u64,
    /// Calls through struct members and `INDIRECT_CALL_n` targets.
    #[serde(default)]
    pub dispatch_sites: u64,
    /// Milliseconds spent scanning and running ctags, merging names, and checksumming.
    #[serde(default)]
    pub phase_ms: Vec<(String, u64)>,
    /// Length of each index file, checked when the segment is opened.
    pub lengths: Vec<(String, u64)>,
    /// Checksum of each index file, checked by [`super::part::verify`].
    pub checksums: Vec<(String, u64)>,
}

impl SegmentMeta {
    /// The length meta.json records for index file `name`.
    fn length(&self, name: &str) -> Option<u64> {
        self.lengths.iter().find(|(n, _)| n == name).map(|x| x.1)
    }
}

/// One segment of the index.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SegmentRef {
    /// Directory name inside the index directory.
    pub dir: String,
    /// Paths whose versions in earlier segments are dead (changed or deleted).
    pub shadow_paths: Vec<String>,
}

/// One open segment.
pub struct Segment {
    /// The segment directory.
    pub dir: PathBuf,
    /// Its metadata.
    pub meta: SegmentMeta,
    fsts: Vec<fst::Map<MapBytes>>,
    names: Vec<Mmap>,
    defs: Mmap,
    files: Mmap,
    files_idx: Mmap,
    /// `indirect.dat` ([`super::indirect`]).
    indirect: Mmap,
    /// Opened when first asked for: a lookup by name never reads them. `None` when they
    /// could not be opened (the error is the segment's damage).
    search: OnceLock<Option<SearchTables>>,
    code: OnceLock<Option<CodeIndex>>,
    damage: Damage,
}

/// A file's status and where its guard transitions are: see [`Segment::file_guards`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileGuards {
    /// Whether and how the file was indexed.
    pub status: FileStatus,
    /// Where its guard transitions start in the files table, for [`Segment::guard_at`].
    pub at: usize,
}

/// Where to start reading a line of a file: see [`Segment::line_hint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineHint {
    /// The file's size when indexed.
    pub size: u64,
    /// The file's mtime (ns) when indexed.
    pub mtime_ns: i64,
    /// The first line at `offset`.
    pub line: u32,
    /// Byte offset of `line`.
    pub offset: u64,
}

/// The index files of a segment.
pub fn segment_files() -> Vec<String> {
    let mut files: Vec<String> = (0..NAME_SHARDS)
        .flat_map(|k| [format!("names-{k}.fst"), format!("names-{k}.dat")])
        .collect();
    files.extend(["defs.dat", "files.dat", "files.idx", super::indirect::FILE].map(String::from));
    files.extend(super::defined::files());
    files.extend(super::code::files().map(String::from));
    files
}

impl Segment {
    /// Opens the segment in `dir`, checking headers and lengths.
    pub fn open(dir: &Path) -> Result<Segment, IndexError> {
        let meta_path = dir.join("meta.json");
        let text = std::fs::read(&meta_path).map_err(IndexError::io("", &meta_path))?;
        let meta: SegmentMeta = serde_json::from_slice(&text).map_err(|e| IndexError::Json {
            path: meta_path.clone(),
            source: e.into(),
        })?;
        if meta.version != super::format::VERSION {
            return Err(IndexError::Format {
                path: dir.to_path_buf(),
                detail: format!(
                    "index format version {}, this knav reads {}",
                    meta.version,
                    super::format::VERSION
                ),
            });
        }
        let len = |name: &str| meta.length(name);
        for name in segment_files() {
            if len(&name).is_none() || !meta.checksums.iter().any(|(n, _)| *n == name) {
                return Err(IndexError::damaged(
                    &meta_path,
                    format!("it gives no length or checksum of {name}"),
                ));
            }
        }
        let total: u64 = meta.lengths.iter().map(|(_, l)| *l).sum();
        if super::damage::checksum_at_open(total) {
            // A small index is cheap to check whole: damage is an error before any answer.
            for (name, sum) in &meta.checksums {
                let m = map(dir, name, len(name))?;
                if super::codec::checksum_bytes(&m) != *sum {
                    return Err(IndexError::damaged(dir.join(name), "checksum mismatch"));
                }
            }
        }
        let mut fsts = Vec::with_capacity(NAME_SHARDS);
        let mut names = Vec::with_capacity(NAME_SHARDS);
        for k in 0..NAME_SHARDS {
            let (f, d) = (format!("names-{k}.fst"), format!("names-{k}.dat"));
            fsts.push(open_fst(dir, &f, len(&f))?);
            let m = map(dir, &d, len(&d))?;
            check_header(&m, b"NAME", &dir.join(&d))?;
            names.push(m);
        }
        let defs = map(dir, "defs.dat", len("defs.dat"))?;
        let files = map(dir, "files.dat", len("files.dat"))?;
        let files_idx = map(dir, "files.idx", len("files.idx"))?;
        let indirect = map(dir, super::indirect::FILE, len(super::indirect::FILE))?;
        for (m, kind, file) in [
            (&defs, b"DEFS", "defs.dat"),
            (&files, b"FILE", "files.dat"),
            (&files_idx, b"FIDX", "files.idx"),
            (&indirect, b"INDI", super::indirect::FILE),
        ] {
            check_header(m, kind, &dir.join(file))?;
        }
        if (files_idx.len() - HEADER_LEN) / 8 != meta.files as usize {
            return Err(IndexError::damaged(
                dir.join("files.idx"),
                "its file count differs from meta.json's",
            ));
        }
        Ok(Segment {
            dir: dir.to_path_buf(),
            meta,
            fsts,
            names,
            defs,
            files,
            files_idx,
            indirect,
            search: OnceLock::new(),
            code: OnceLock::new(),
            damage: Damage::default(),
        })
    }

    /// The lines of table `table` of `indirect.dat` with key `key` and `N` fields after it,
    /// split into them.
    pub fn indirect<'a, const N: usize>(
        &'a self,
        table: &str,
        key: &str,
    ) -> impl Iterator<Item = [&'a str; N]> + 'a {
        super::indirect::lookup(&self.indirect[HEADER_LEN..], table, key)
    }

    /// The first damage a read of this segment ran into, as a clear error.
    pub fn damage(&self) -> Option<&IndexError> {
        self.damage.get()
    }

    #[cold]
    fn damaged(&self, file: &str, what: &str) {
        self.damage.mark(&self.dir, file, what);
    }

    /// The search tables: defined names and the part indexes; `None` when they cannot be
    /// opened (the segment's [`Segment::damage`] says why).
    pub fn search(&self) -> Option<Search<'_>> {
        let tables = self
            .search
            .get_or_init(|| self.opened(|dir, len| SearchTables::open(dir, len)));
        tables.as_ref().map(|t| t.with(&self.fsts))
    }

    /// The code search files: definitions as documents (search_code); `None` when they
    /// cannot be opened (the segment's [`Segment::damage`] says why).
    pub fn code(&self) -> Option<&CodeIndex> {
        let files = self.meta.files;
        self.code
            .get_or_init(|| self.opened(|dir, len| CodeIndex::open(dir, files, len)))
            .as_ref()
    }

    /// A part of the segment opened late by `open` (given the directory and each file's length
    /// as meta.json records it); its error is kept as the segment's damage.
    fn opened<T>(
        &self,
        open: impl FnOnce(&Path, &dyn Fn(&str) -> Option<u64>) -> Result<T, IndexError>,
    ) -> Option<T> {
        open(&self.dir, &|name| self.meta.length(name))
            .map_err(|e| self.damage.keep(e))
            .ok()
    }

    /// Remembers damage a reader of `file` ran into (see [`Segment::damage`]).
    pub fn mark_damaged(&self, file: &str, what: &str) {
        self.damaged(file, what);
    }

    /// The FSTs of names, one per shard.
    pub fn names(&self) -> &[fst::Map<MapBytes>] {
        &self.fsts
    }

    /// The entry of `name`, if it occurs or is defined in this segment.
    pub fn lookup(&self, name: &[u8]) -> Option<NameEntry<'_>> {
        let shard = shard_of(name);
        let off = self.fsts.get(shard)?.get(name)?;
        Some(self.entry_at(shard, off))
    }

    /// The entry at an offset (an FST value) of shard `shard`'s entries file.
    pub fn entry_at(&self, shard: usize, off: u64) -> NameEntry<'_> {
        let names = self.names.get(shard).map_or(&[][..], |m| &m[..]);
        let body = names.get(off as usize..).unwrap_or(&[]);
        let mut r = Reader::new(body);
        let entry = NameEntry::decode(&mut r);
        if r.overrun || off as usize >= names.len() {
            self.damaged(
                &format!("names-{shard}.dat"),
                &format!("the entry at offset {off} does not decode"),
            );
        }
        entry
    }

    /// The definition at a `defs.dat` offset.
    pub fn def_at(&self, off: u64) -> Def<'_> {
        let body = self.defs.get(off as usize..).unwrap_or(&[]);
        let mut r = Reader::new(body);
        let def = Def::decode(&mut r);
        if r.overrun || def.name.is_empty() || off < HEADER_LEN as u64 {
            self.damaged(
                "defs.dat",
                &format!("the definition at offset {off} does not decode"),
            );
        }
        def
    }

    /// Number of files.
    pub fn file_count(&self) -> u32 {
        self.meta.files
    }

    fn file_offset(&self, id: u32) -> usize {
        let at = HEADER_LEN + id as usize * 8;
        let mut b = [0u8; 8];
        match self.files_idx.get(at..at + 8) {
            Some(s) => b.copy_from_slice(s),
            None => self.damaged("files.idx", &format!("no offset for file {id}")),
        }
        let off = u64::from_le_bytes(b) as usize;
        if off < HEADER_LEN || off >= self.files.len() {
            self.damaged(
                "files.idx",
                &format!("file {id}'s record is outside files.dat"),
            );
        }
        off
    }

    /// The head of file `id`'s record from `r`, remembering damage (an empty path: not UTF-8).
    fn stat_of<'a>(&self, id: u32, r: &mut Reader<'a>) -> FileStat<'a> {
        let stat = FileStat::decode(r);
        if stat.path.is_empty() || r.overrun {
            self.damaged(
                "files.dat",
                &format!("the record of file {id} does not decode"),
            );
        }
        stat
    }

    /// The status of file `id` and where its guard transitions start in the files table, for
    /// [`Segment::guard_at`]: what every posting of a query under an active config asks for,
    /// without decoding (or allocating) anything else.
    pub fn file_guards(&self, id: u32) -> FileGuards {
        let start = self.file_offset(id);
        let body = self.files.get(start..).unwrap_or(&[]);
        let mut r = Reader::new(body);
        let status = self.stat_of(id, &mut r).status;
        FileRecord::skip_to_guards(&mut r);
        FileGuards {
            status,
            at: start + r.pos(),
        }
    }

    /// Where a reader of line `line` of file `id` can start instead of at the top of the file:
    /// the line and byte offset of the nearest line mark at or before it, with the size and
    /// mtime the file had when indexed (a reader checks the file still has them).
    pub fn line_hint(&self, id: u32, line: u32) -> LineHint {
        let body = self.files.get(self.file_offset(id)..).unwrap_or(&[]);
        let mut r = Reader::new(body);
        let FileStat { size, mtime_ns, .. } = self.stat_of(id, &mut r);
        FileRecord::skip_to_guards(&mut r);
        let marks = FileRecord::line_marks_after_guards(&mut r);
        if r.overrun {
            self.damaged(
                "files.dat",
                &format!("the record of file {id} does not decode"),
            );
        }
        let (line, offset) = knav_c::scan::mark_before(&marks, line);
        LineHint {
            size,
            mtime_ns,
            line,
            offset,
        }
    }

    /// The conditions enclosing `line` of the file whose guard transitions start at `at` (from
    /// [`Segment::file_guards`]), outermost first.
    pub fn guard_at(&self, at: usize, line: u32) -> Vec<&str> {
        let mut r = Reader::new(self.files.get(at..).unwrap_or(&[]));
        let conds = FileRecord::guard_at(&mut r, line);
        if r.overrun {
            self.damaged(
                "files.dat",
                &format!("the guards at offset {at} do not decode"),
            );
        }
        conds
    }

    /// The record of file `id`.
    pub fn file(&self, id: u32) -> FileRecord {
        let body = self.files.get(self.file_offset(id)..).unwrap_or(&[]);
        self.stat_of(id, &mut Reader::new(body));
        let mut r = Reader::new(body);
        let rec = FileRecord::decode(&mut r);
        if r.overrun {
            self.damaged(
                "files.dat",
                &format!("the record of file {id} does not decode"),
            );
        }
        rec
    }

    /// The head of file `id`'s record, without decoding guards and notes: what a refresh
    /// compares against the tree.
    pub fn file_stat(&self, id: u32) -> FileStat<'_> {
        let body = self.files.get(self.file_offset(id)..).unwrap_or(&[]);
        let stat = self.stat_of(id, &mut Reader::new(body));
        if stat.path.is_empty() {
            return FileStat {
                status: FileStatus::Unreadable,
                ..stat
            };
        }
        stat
    }

    /// The path of file `id`, without decoding the rest of its record.
    pub fn file_path(&self, id: u32) -> &str {
        let body = self.files.get(self.file_offset(id)..).unwrap_or(&[]);
        let mut r = Reader::new(body);
        match FileStat::decode_path(&mut r) {
            p if !r.overrun && !p.is_empty() => p,
            _ => {
                self.damaged(
                    "files.dat",
                    &format!("the path of file {id} does not decode"),
                );
                ""
            }
        }
    }

    /// The id of the file at `path` (files are sorted by path).
    pub fn find_file(&self, path: &str) -> Option<u32> {
        let (mut lo, mut hi) = (0u32, self.file_count());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.file_path(mid).cmp(path) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The functions of file `id` that have a last line: `(first line, last line, name)`, in
    /// line order (the enclosing function of a line, without decoding every definition whole).
    pub fn file_functions(&self, id: u32) -> Vec<(u32, u32, &str)> {
        let rec = self.file(id);
        let body = self.defs.get(rec.defs_start as usize..).unwrap_or(&[]);
        let mut r = Reader::new(body);
        let mut out = Vec::new();
        for _ in 0..rec.defs_count {
            let (file, name, line, end, kind) = Def::decode_extent(&mut r);
            if r.overrun || name.is_empty() || file != id {
                self.damaged(
                    "defs.dat",
                    &format!("the definitions of file {id} do not decode"),
                );
                break;
            }
            if let (knav_ctags::Kind::Function, Some(end)) = (kind, end) {
                if let Ok(name) = std::str::from_utf8(name) {
                    out.push((line, end, name));
                }
            }
        }
        out
    }

    /// The definitions of file `id`, in line order.
    pub fn file_defs(&self, id: u32) -> Vec<Def<'_>> {
        let rec = self.file(id);
        let body = self.defs.get(rec.defs_start as usize..).unwrap_or(&[]);
        let mut r = Reader::new(body);
        // The count comes from files.dat: reserved only as far as defs.dat can hold it.
        let mut out = Vec::with_capacity(r.room_for(rec.defs_count.into(), Def::MIN_BYTES));
        for _ in 0..rec.defs_count {
            let def = Def::decode(&mut r);
            // Past the file's definitions (a damaged count) come another file's.
            if r.overrun || def.name.is_empty() || def.file != id {
                self.damaged(
                    "defs.dat",
                    &format!("the definitions of file {id} do not decode"),
                );
                break;
            }
            out.push(def);
        }
        out
    }
}

impl super::part::Part for Segment {
    const KIND: super::part::Kind = super::part::Kind::Segment;
    type Ref = SegmentRef;
    type Open = Segment;

    fn open(index_dir: &Path, r: &Self::Ref) -> Result<Segment, IndexError> {
        Segment::open(&index_dir.join(&r.dir))
    }

    /// A segment keeps its checksums in its own `meta.json`: stamped once opened.
    fn stamp<'a>(r: &'a Self::Ref, open: Option<&'a Segment>) -> Option<super::part::Stamp<'a>> {
        // Retired segments are kept by the manifest's list of them.
        Some(super::part::Stamp::new(
            Self::KIND,
            &r.dir,
            &open?.meta.checksums,
        ))
    }
}
