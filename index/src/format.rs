//! The records of a segment (definitions, files, name entries), encoder and decoder side by
//! side, and the header every binary index file starts with.
//!
//! A segment is a directory holding:
//! * `names-K.fst`: every identifier of shard K ([`shard_of`]) → offset of its entry in
//!   `names-K.dat`;
//! * `names-K.dat`: per name, the offsets of its definitions in `defs.dat` and its postings;
//! * `defs.dat`: definition records, grouped by file;
//! * `files.dat` + `files.idx`: per file, its path, stat, content hash, status, definitions
//!   range and guard transitions; `files.idx` holds one fixed-width offset per file id;
//! * the search tables of defined names and paths ([`super::defined`]);
//! * `meta.json`: counts, lengths and checksums of the other files.
//!
//! Postings of a name are file blocks in file-id order: `file delta, count`, then per occurrence
//! `line delta << 2 | role`. A `#define` is a posting with role `MacroDef`, not a record.

use knav_ctags::Kind;

use std::path::Path;

use super::codec::{put_opt_str, put_str, put_varint, Reader};
use super::error::IndexError;
use super::stats::{NameStats, MIN_OCCURRENCES};

/// Format version; an index of another version is rebuilt, never misread.
pub const VERSION: u32 = 23;
/// Names are split into this many shards, each with its own FST and entries file, so that
/// building them (accumulating, sorting, merging, FST) runs on several cores.
pub const NAME_SHARDS: usize = 2;

/// Shard `k + 1` holds the names from `SHARD_STARTS[k]` on. Shards are ranges of the name
/// order, not hash classes: an FST builds faster from neighbouring names (on the kernel, two
/// range halves took 10 s where two hash halves took 12.8 s). The split balances the kernel's
/// names (`A`-`Q` against `R`-`Z`, `_` and lower case); another tree only builds less evenly.
const SHARD_STARTS: [u8; NAME_SHARDS - 1] = [b'R'];

/// The shard of `name`.
pub fn shard_of(name: &[u8]) -> usize {
    let first = name.first().copied().unwrap_or(0);
    SHARD_STARTS.iter().take_while(|&&s| first >= s).count()
}

/// Bytes before the body of every binary index file.
pub const HEADER_LEN: usize = 16;

/// The header of a binary index file of `kind` in this knav's format [`VERSION`].
pub const fn header(kind: &[u8; 4]) -> [u8; HEADER_LEN] {
    header_of(kind, VERSION)
}

/// The one header of every binary file knav writes (index parts, caches, the fact store's
/// packs and proofs): `KNAV`, the format `version` (LE u32), the file's `kind`, four zero
/// bytes. A file kept apart from the index (a pack, a proof) has a version of its own.
pub const fn header_of(kind: &[u8; 4], version: u32) -> [u8; HEADER_LEN] {
    let v = version.to_le_bytes();
    let k = kind;
    [
        b'K', b'N', b'A', b'V', v[0], v[1], v[2], v[3], k[0], k[1], k[2], k[3], 0, 0, 0, 0,
    ]
}

/// The kind and version of the header `bytes` start with; `None` without one.
pub fn read_header(bytes: &[u8]) -> Option<([u8; 4], u32)> {
    let h = bytes.get(..HEADER_LEN).filter(|h| h.starts_with(b"KNAV"))?;
    let version = u32::from_le_bytes(h[4..8].try_into().ok()?);
    Some((h[8..12].try_into().ok()?, version))
}

/// Checks the header of `bytes`, the contents of `path`, against [`VERSION`]; the error says
/// what is wrong.
pub fn check_header(bytes: &[u8], kind: &[u8; 4], path: &Path) -> Result<(), IndexError> {
    check_header_of(bytes, kind, VERSION, path)
}

/// Checks that `bytes`, the contents of `path`, start with the header of `kind` in format
/// `version`; the error names the file and says what is wrong.
pub fn check_header_of(
    bytes: &[u8],
    kind: &[u8; 4],
    version: u32,
    path: &Path,
) -> Result<(), IndexError> {
    let wrong = |detail: String| {
        Err(IndexError::Format {
            path: path.to_path_buf(),
            detail,
        })
    };
    let Some((found, v)) = read_header(bytes) else {
        return wrong("not a knav index file".into());
    };
    if v != version {
        return wrong(format!(
            "index format version {v}, this knav reads {version}"
        ));
    }
    if &found != kind {
        return wrong(format!(
            "expected a {} file, found {}",
            String::from_utf8_lossy(kind),
            String::from_utf8_lossy(&found)
        ));
    }
    Ok(())
}

/// A definition to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefRecord {
    /// File id within the segment.
    pub file: u32,
    /// Defined name.
    pub name: String,
    /// 1-based line.
    pub line: u32,
    /// Last line, when known.
    pub end_line: Option<u32>,
    /// ctags kind.
    pub kind: Kind,
    /// `static` / file-local.
    pub file_local: bool,
    /// Type (`ssize_t`, `struct:foo`).
    pub typeref: Option<String>,
    /// Enclosing struct/union/enum.
    pub scope: Option<String>,
    /// Parameter list.
    pub signature: Option<String>,
    /// The macro family that made the name (`SYSCALL_DEFINE` for `sys_read`).
    pub via: Option<String>,
}

/// A definition read back, borrowing from the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Def<'a> {
    /// File id within the segment.
    pub file: u32,
    /// Defined name.
    pub name: &'a str,
    /// 1-based line.
    pub line: u32,
    /// Last line, when known.
    pub end_line: Option<u32>,
    /// ctags kind.
    pub kind: Kind,
    /// `static` / file-local.
    pub file_local: bool,
    /// Type.
    pub typeref: Option<&'a str>,
    /// Enclosing struct/union/enum.
    pub scope: Option<&'a str>,
    /// Parameter list.
    pub signature: Option<&'a str>,
    /// The macro family that made the name.
    pub via: Option<&'a str>,
}

impl DefRecord {
    /// Appends the encoded record.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.file as u64);
        put_str(out, self.name.as_bytes());
        put_varint(out, self.line as u64);
        put_varint(out, self.end_line.map_or(0, |e| e as u64 + 1));
        out.push(self.kind as u8);
        out.push(self.file_local as u8);
        put_opt_str(out, self.typeref.as_deref());
        put_opt_str(out, self.scope.as_deref());
        put_opt_str(out, self.signature.as_deref());
        put_opt_str(out, self.via.as_deref());
    }
}

impl<'a> Def<'a> {
    /// The fewest bytes a record takes: one per varint, flag and optional string, and a name
    /// of one byte with its length.
    pub const MIN_BYTES: usize = 11;

    /// The record, owned.
    pub fn to_record(&self) -> DefRecord {
        let s = |v: Option<&str>| v.map(str::to_string);
        DefRecord {
            file: self.file,
            name: self.name.to_string(),
            line: self.line,
            end_line: self.end_line,
            kind: self.kind,
            file_local: self.file_local,
            typeref: s(self.typeref),
            scope: s(self.scope),
            signature: s(self.signature),
            via: s(self.via),
        }
    }

    /// Decodes one record as far as a function's extent: `(file, name, line, end line, kind)`,
    /// the name's bytes unchecked and the optional strings after them skipped. What the
    /// enclosing function of every reference in a file needs, without [`Def::decode`]'s checks
    /// of strings it does not read.
    pub fn decode_extent(r: &mut Reader<'a>) -> (u32, &'a [u8], u32, Option<u32>, Kind) {
        let head = Head::decode(r);
        for _ in 0..4 {
            let n = r.varint() as usize;
            r.bytes(n.saturating_sub(1));
        }
        (head.file, head.name, head.line, head.end_line, head.kind)
    }

    /// Decodes one record.
    pub fn decode(r: &mut Reader<'a>) -> Def<'a> {
        let head = Head::decode(r);
        Def {
            file: head.file,
            name: std::str::from_utf8(head.name).unwrap_or(""),
            line: head.line,
            end_line: head.end_line,
            kind: head.kind,
            file_local: head.file_local,
            typeref: r.opt_str(),
            scope: r.opt_str(),
            signature: r.opt_str(),
            via: r.opt_str(),
        }
    }
}

/// The fixed fields a definition record starts with, before its optional strings.
struct Head<'a> {
    file: u32,
    name: &'a [u8],
    line: u32,
    end_line: Option<u32>,
    kind: Kind,
    file_local: bool,
}

impl<'a> Head<'a> {
    fn decode(r: &mut Reader<'a>) -> Head<'a> {
        let file = r.varint() as u32;
        let name = r.str();
        let line = r.varint() as u32;
        let end = r.varint();
        Head {
            file,
            name,
            line,
            end_line: if end == 0 { None } else { Some(end as u32 - 1) },
            kind: Kind::from_u8(r.u8()),
            file_local: r.u8() != 0,
        }
    }
}

/// A name's entry in `names-K.dat`: where its definitions are, its counts and its postings.
#[derive(Clone, Debug)]
pub struct NameEntry<'a> {
    /// Offsets of its definitions in `defs.dat`.
    pub defs: Vec<u64>,
    /// Occurrences in the segment.
    pub occurrences: u64,
    /// Files it occurs in.
    pub files: u64,
    /// Encoded postings.
    pub postings: &'a [u8],
    /// What a definition answer needs of the postings, for a hot name.
    pub stats: Option<NameStats>,
}

impl<'a> NameEntry<'a> {
    /// Appends an entry: the offsets of the name's definitions (ascending), its counts and
    /// postings, and for a name of at least [`MIN_OCCURRENCES`] occurrences the stats
    /// `stats` computes, which it returns.
    pub fn encode(
        out: &mut Vec<u8>,
        defs: &[u64],
        occurrences: u64,
        files: u64,
        postings: &[u8],
        stats: impl FnOnce() -> NameStats,
    ) -> Option<NameStats> {
        put_varint(out, defs.len() as u64);
        let mut prev = 0u64;
        for d in defs {
            put_varint(out, d - prev);
            prev = *d;
        }
        put_varint(out, occurrences);
        put_varint(out, files);
        put_varint(out, postings.len() as u64);
        out.extend_from_slice(postings);
        if occurrences < MIN_OCCURRENCES {
            return None;
        }
        let stats = stats();
        stats.encode(out);
        Some(stats)
    }

    /// Decodes one entry; `r.overrun` is set when it does not decode (definition offsets that
    /// overflow included).
    pub fn decode(r: &mut Reader<'a>) -> NameEntry<'a> {
        let n = r.varint().min(1 << 24);
        let mut defs = Vec::with_capacity(n.min(1 << 10) as usize);
        let mut prev = 0u64;
        let mut overflow = false;
        for _ in 0..n {
            let Some(next) = prev.checked_add(r.varint()) else {
                overflow = true;
                break;
            };
            prev = next;
            if r.overrun {
                break;
            }
            defs.push(prev);
        }
        let occurrences = r.varint();
        let files = r.varint();
        let plen = r.varint() as usize;
        let postings = r.bytes(plen);
        let stats = if occurrences >= MIN_OCCURRENCES {
            NameStats::decode(r)
        } else {
            None
        };
        r.overrun |= overflow;
        NameEntry {
            defs,
            occurrences,
            files,
            postings,
            stats,
        }
    }
}

/// Whether and how a file was indexed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum FileStatus {
    /// Scanned and given to ctags (or needing no ctags: only `#define`s).
    #[default]
    Indexed = 0,
    /// Scanned, but ctags failed or timed out on it: references only. Counted unindexed.
    NoDefinitions = 1,
    /// Contains NUL bytes.
    Binary = 2,
    /// Larger than the size cap.
    TooBig = 3,
    /// Could not be read.
    Unreadable = 4,
}

impl FileStatus {
    /// From the stored byte.
    pub fn from_u8(v: u8) -> FileStatus {
        match v {
            0 => FileStatus::Indexed,
            1 => FileStatus::NoDefinitions,
            2 => FileStatus::Binary,
            3 => FileStatus::TooBig,
            _ => FileStatus::Unreadable,
        }
    }
}

/// A file record to store.
#[derive(Clone, Debug, Default)]
pub struct FileRecord {
    /// Root-relative path.
    pub path: String,
    /// Size in bytes when indexed.
    pub size: u64,
    /// Modification time (ns) when indexed.
    pub mtime_ns: i64,
    /// Content hash.
    pub hash: u64,
    /// Line count.
    pub lines: u32,
    /// Whether and how it was indexed.
    pub status: FileStatus,
    /// Why the file is not (fully) indexed.
    pub note: Option<String>,
    /// Offset of the file's first definition in `defs.dat`.
    pub defs_start: u64,
    /// Number of definitions.
    pub defs_count: u32,
    /// Guard transitions: `(first line, conditions)`.
    pub guards: Vec<(u32, Vec<String>)>,
    /// Unbalanced-directive warnings.
    pub warnings: Vec<String>,
    /// Byte offsets of every [`knav_c::scan::LINE_MARK_STRIDE`]th line ([`FileScan::line_marks`]).
    ///
    /// [`FileScan::line_marks`]: knav_c::scan::FileScan::line_marks
    pub line_marks: Vec<u32>,
}

impl FileRecord {
    /// Appends the encoded record.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_str(out, self.path.as_bytes());
        put_varint(out, self.size);
        put_varint(out, ((self.mtime_ns << 1) ^ (self.mtime_ns >> 63)) as u64);
        out.extend_from_slice(&self.hash.to_le_bytes());
        put_varint(out, self.lines as u64);
        out.push(self.status as u8);
        put_opt_str(out, self.note.as_deref());
        put_varint(out, self.defs_start);
        put_varint(out, self.defs_count as u64);
        put_varint(out, self.guards.len() as u64);
        for (line, conds) in &self.guards {
            put_varint(out, *line as u64);
            put_varint(out, conds.len() as u64);
            for c in conds {
                put_str(out, c.as_bytes());
            }
        }
        put_varint(out, self.warnings.len() as u64);
        for w in &self.warnings {
            put_str(out, w.as_bytes());
        }
        put_varint(out, self.line_marks.len() as u64);
        let mut prev = 0u32;
        for &m in &self.line_marks {
            put_varint(out, (m - prev) as u64);
            prev = m;
        }
    }

    /// Decodes one record (its head as [`FileStat::decode`] reads it).
    pub fn decode(r: &mut Reader<'_>) -> FileRecord {
        let head = FileStat::decode(r);
        let note = r.opt_str().map(str::to_string);
        let defs_start = r.varint();
        let defs_count = r.varint() as u32;
        let n = r.varint() as usize;
        let mut guards = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            let line = r.varint() as u32;
            let conds = read_conditions(r)
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect();
            guards.push((line, conds));
            if r.overrun {
                break;
            }
        }
        let warnings = read_warnings(r)
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let line_marks = read_line_marks(r);
        FileRecord {
            path: head.path.to_string(),
            size: head.size,
            mtime_ns: head.mtime_ns,
            hash: head.hash,
            lines: head.lines,
            status: head.status,
            note,
            defs_start,
            defs_count,
            guards,
            warnings,
            line_marks,
        }
    }
}

/// The head of a file record: what a refresh compares against the tree, decoded without the
/// rest (guards, notes, line marks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileStat<'a> {
    /// Root-relative path; empty when the stored one is not UTF-8 (a damaged record).
    pub path: &'a str,
    /// Size in bytes when indexed.
    pub size: u64,
    /// Modification time (ns) when indexed.
    pub mtime_ns: i64,
    /// Content hash.
    pub hash: u64,
    /// Line count.
    pub lines: u32,
    /// Whether and how it was indexed.
    pub status: FileStatus,
}

impl<'a> FileStat<'a> {
    /// True when `bytes`, read now under another modification time, are the bytes indexed
    /// (a file touched, not edited); never for a file indexed as too big, whose hash is not
    /// of its bytes.
    pub fn holds(&self, bytes: &[u8]) -> bool {
        self.status != FileStatus::TooBig && super::codec::hash64(bytes) == self.hash
    }

    /// Decodes the head of a record, the reader left after it.
    pub fn decode(r: &mut Reader<'a>) -> FileStat<'a> {
        let path = Self::decode_path(r);
        let size = r.varint();
        let z = r.varint();
        let mtime_ns = ((z >> 1) as i64) ^ -((z & 1) as i64);
        let mut h = [0u8; 8];
        h.copy_from_slice(r.bytes(8).get(..8).unwrap_or(&[0; 8]));
        let lines = r.varint() as u32;
        let status = FileStatus::from_u8(r.u8());
        FileStat {
            path,
            size,
            mtime_ns,
            hash: u64::from_le_bytes(h),
            lines,
            status,
        }
    }

    /// Decodes only the path that starts a record: empty when it is not UTF-8.
    pub fn decode_path(r: &mut Reader<'a>) -> &'a str {
        std::str::from_utf8(r.str()).unwrap_or("")
    }
}

/// The parts of a file record after its head, each read from `r` where it starts: what a
/// query reads of a record without decoding (or allocating) the rest.
impl FileRecord {
    /// Reads past what lies between the head and the guard transitions (the note and the
    /// definitions range): `r` is left at the guard transitions.
    pub fn skip_to_guards(r: &mut Reader<'_>) {
        r.opt_str();
        r.varint();
        r.varint();
    }

    /// The conditions in force at `line` (outermost first), from the guard transitions at `r`;
    /// `r.overrun` is set when they do not decode.
    pub fn guard_at<'a>(r: &mut Reader<'a>, line: u32) -> Vec<&'a str> {
        let n = r.varint() as usize;
        // The conditions of the last transition at or before `line`, read once it is known.
        let mut found = None;
        for _ in 0..n {
            let first = r.varint() as u32;
            if first > line || r.overrun {
                break;
            }
            found = Some(r.clone());
            read_conditions(r).for_each(drop);
        }
        let Some(mut at) = found else {
            return Vec::new();
        };
        let conds = read_conditions(&mut at)
            .map(|c| std::str::from_utf8(c).unwrap_or("0"))
            .collect();
        r.overrun |= at.overrun;
        conds
    }

    /// The line marks of the record whose guard transitions start at `r`.
    pub fn line_marks_after_guards(r: &mut Reader<'_>) -> Vec<u32> {
        let n = r.varint() as usize;
        for _ in 0..n {
            r.varint();
            read_conditions(r).for_each(drop);
            if r.overrun {
                break;
            }
        }
        read_warnings(r).for_each(drop);
        read_line_marks(r)
    }
}

/// The conditions of one guard transition, read lazily from `r`.
fn read_conditions<'r, 'a>(r: &'r mut Reader<'a>) -> impl Iterator<Item = &'a [u8]> + 'r {
    let k = r.varint() as usize;
    (0..k.min(1 << 10)).map(move |_| r.str())
}

/// The unbalanced-directive warnings of a record, read lazily from `r`.
fn read_warnings<'r, 'a>(r: &'r mut Reader<'a>) -> impl Iterator<Item = &'a [u8]> + 'r {
    let n = r.varint() as usize;
    (0..n.min(1 << 16)).map(move |_| r.str())
}

/// Decodes the line marks that end a file record.
fn read_line_marks(r: &mut Reader<'_>) -> Vec<u32> {
    let n = r.varint() as usize;
    let mut marks = Vec::with_capacity(n.min(1 << 20));
    let mut at = 0u32;
    for _ in 0..n {
        at = at.wrapping_add(r.varint() as u32);
        if r.overrun {
            break;
        }
        marks.push(at);
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_definition_record_takes_min_bytes() {
        let d = DefRecord {
            file: 0,
            name: "k".into(),
            line: 0,
            end_line: None,
            kind: Kind::Function,
            file_local: false,
            typeref: None,
            scope: None,
            signature: None,
            via: None,
        };
        let mut out = Vec::new();
        d.encode(&mut out);
        assert_eq!(out.len(), Def::MIN_BYTES);
    }

    #[test]
    fn records_round_trip() {
        let d = DefRecord {
            file: 7,
            name: "kmap".into(),
            line: 40,
            end_line: Some(46),
            kind: Kind::Function,
            file_local: true,
            typeref: Some("void *".into()),
            scope: None,
            signature: Some("(struct page * page)".into()),
            via: Some("PAGEFLAG".into()),
        };
        let mut out = Vec::new();
        d.encode(&mut out);
        let got = Def::decode(&mut Reader::new(&out));
        assert_eq!((got.file, got.name), (7, "kmap"));
        assert_eq!((got.line, got.end_line), (40, Some(46)));
        assert_eq!(got.kind, Kind::Function);
        assert_eq!(got.via, Some("PAGEFLAG"));
        assert!(got.file_local);
        assert_eq!(got.typeref, Some("void *"));
        assert_eq!(got.scope, None);

        let f = FileRecord {
            path: "include/linux/highmem-internal.h".into(),
            size: 9,
            mtime_ns: -5,
            hash: 77,
            lines: 300,
            status: FileStatus::NoDefinitions,
            note: None,
            defs_start: 1234,
            defs_count: 3,
            guards: vec![(39, vec!["CONFIG_HIGHMEM".into()]), (160, vec![])],
            warnings: vec!["3: #endif without #if".into()],
            line_marks: vec![2100, 4470, 9000],
        };
        let mut out = Vec::new();
        f.encode(&mut out);
        let g = FileRecord::decode(&mut Reader::new(&out));
        assert_eq!(g.path, f.path);
        assert_eq!((g.size, g.mtime_ns, g.hash, g.lines), (9, -5, 77, 300));
        assert_eq!(g.status, FileStatus::NoDefinitions);
        assert_eq!(g.guards, f.guards);
        assert_eq!(knav_c::guard::at(&g.guards, 40), ["CONFIG_HIGHMEM"]);
        assert!(knav_c::guard::at(&g.guards, 161).is_empty());
        assert_eq!(g.warnings, f.warnings);
        assert_eq!(g.line_marks, f.line_marks);
    }

    #[test]
    fn guards_and_line_marks_read_alone_agree_with_the_whole_record_and_stop_at_its_end() {
        let f = FileRecord {
            path: "mm/slab.h".into(),
            note: Some("ctags: timeout".into()),
            defs_start: 99,
            defs_count: 2,
            guards: vec![
                (3, vec!["CONFIG_A".into()]),
                (10, vec!["CONFIG_A".into(), "!CONFIG_B".into()]),
                (20, vec![]),
            ],
            warnings: vec!["7: #else after #else".into()],
            line_marks: vec![4000, 8100],
            ..Default::default()
        };
        let mut out = Vec::new();
        f.encode(&mut out);
        let at_guards = |bytes| {
            let mut r = Reader::new(bytes);
            FileStat::decode(&mut r);
            FileRecord::skip_to_guards(&mut r);
            r
        };
        for (line, want) in [
            (2, vec![]),
            (3, vec!["CONFIG_A"]),
            (15, vec!["CONFIG_A", "!CONFIG_B"]),
            (25, vec![]),
        ] {
            let mut r = at_guards(&out);
            assert_eq!(FileRecord::guard_at(&mut r, line), want, "line {line}");
            assert!(!r.overrun);
        }
        let mut r = at_guards(&out);
        assert_eq!(FileRecord::line_marks_after_guards(&mut r), f.line_marks);
        assert!(!r.overrun && r.at_end());
        // A record cut inside its guards: the reader says so instead of reading past it.
        let cut = &out[..out.len() - 30];
        let mut r = at_guards(cut);
        FileRecord::guard_at(&mut r, 15);
        assert!(r.overrun);
        let mut r = at_guards(cut);
        FileRecord::line_marks_after_guards(&mut r);
        assert!(r.overrun);
    }

    #[test]
    fn a_name_entry_round_trips_and_overflowing_definition_offsets_are_damage() {
        let mut out = Vec::new();
        let postings = [1u8, 2, 3];
        NameEntry::encode(&mut out, &[16, 40, 41], 7, 2, &postings, || unreachable!());
        let mut r = Reader::new(&out);
        let e = NameEntry::decode(&mut r);
        assert_eq!(e.defs, [16, 40, 41]);
        assert_eq!((e.occurrences, e.files, e.postings), (7, 2, &postings[..]));
        assert!(e.stats.is_none() && !r.overrun && r.at_end());
        // Two deltas whose sum passes u64::MAX.
        let mut bad = Vec::new();
        put_varint(&mut bad, 2);
        put_varint(&mut bad, u64::MAX);
        put_varint(&mut bad, 1);
        bad.extend_from_slice(&[0, 0, 0]);
        let mut r = Reader::new(&bad);
        assert_eq!(NameEntry::decode(&mut r).defs, [u64::MAX]);
        assert!(r.overrun);
    }

    #[test]
    fn headers_are_checked() {
        let h = header(b"DEFS");
        let at = Path::new("seg/defs.dat");
        assert!(check_header(&h, b"DEFS", at).is_ok());
        assert_eq!(
            check_header(&h, b"FILE", at).unwrap_err().to_string(),
            "seg/defs.dat: expected a FILE file, found DEFS"
        );
        assert!(check_header(b"KNA", b"DEFS", at).is_err());
        let mut old = h;
        old[4] = 0;
        assert_eq!(
            check_header(&old, b"DEFS", at).unwrap_err().to_string(),
            format!("seg/defs.dat: index format version 0, this knav reads {VERSION}")
        );
    }
}
