//! The hardware part on disk (`hw-…`), written and read. Eleven files:
//! - `files.dat`: per device-tree source or binding (path order) its path, kind, the board's
//!   `model` or the binding's `title`, the files its includes lead to (ids,
//!   [`super::includes`]) and the `status` its `&label { status = …; }` blocks give (the C
//!   files that say something follow them in the id space, in `cfiles.dat`);
//! - `compat.fst`: each compatible string to the offset of its rows in `compat.dat`;
//! - `compat.dat`: per compatible, the bindings documenting it (file, line), the device-tree
//!   nodes naming it (file, line, path, labels, status), the `of_device_id` entries matching it
//!   (file, table, line) and the code declaring or matching it (file, line, how);
//! - `facts.dat`: every file's [`HwFacts`] with its size and mtime, and the salt of the C
//!   files' context, which the next refresh reuses for the files whose stat did not change
//!   (queries never read it);
//! - `cfiles.dat`, `drivers.dat`, `ids.fst`, `ids.dat`: the C files, their facts and device
//!   keys ([`super::ids`]);
//! - `check.dat`: `knav dt check`'s findings ([`super::check`]);
//! - `stats.dat`: every file's path hash, size and mtime, fixed-size records in path order,
//!   and `deps.dat`, the headers C files with facts were read with (context and local): a
//!   refresh compares the tree with them without decoding `facts.dat`
//!   ([`quick_same`]).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::cread::{is_c_path, CReader};
use super::facts::{is_binding, is_dts, opt_string, string, HwFacts};
use super::ids::{Ids, IdsWriter};
use crate::codec::{checksum_bytes, put_opt_str, put_str, put_varint, Reader};
use crate::disk::MapBytes;
use crate::error::IndexError;
use crate::format::{check_header, header, HEADER_LEN};
use crate::part::Merge;
use crate::text::walk::TextFile;

/// The part's files, in the order [`HwMerge::finish`] writes them.
pub const FILES: [&str; 11] = [
    "files.dat",
    "compat.fst",
    "compat.dat",
    "facts.dat",
    super::ids::FILES[0],
    super::ids::FILES[1],
    super::ids::FILES[2],
    super::ids::FILES[3],
    "check.dat",
    "stats.dat",
    "deps.dat",
];

const CHECK_KIND: &[u8; 4] = b"HWCK";
const STATS_KIND: &[u8; 4] = b"HWST";
const DEPS_KIND: &[u8; 4] = b"HWDP";

const FILES_KIND: &[u8; 4] = b"HWF3";
const COMPAT_KIND: &[u8; 4] = b"HWC2";
const FACTS_KIND: &[u8; 4] = b"HWA4";

/// What kind of file of the part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A board's device tree (`.dts`).
    Board,
    /// An include (`.dtsi`).
    Include,
    /// An overlay (`.dtso`).
    Overlay,
    /// A binding schema.
    Binding,
    /// A C file.
    Code,
}

impl FileKind {
    /// The kind of the file at `path`.
    pub fn of(path: &str) -> FileKind {
        if path.ends_with(".dts") {
            FileKind::Board
        } else if path.ends_with(".dtsi") {
            FileKind::Include
        } else if path.ends_with(".dtso") {
            FileKind::Overlay
        } else if is_c_path(path) {
            FileKind::Code
        } else {
            FileKind::Binding
        }
    }

    fn byte(self) -> u8 {
        self as u8
    }

    fn from_byte(b: u8) -> Option<FileKind> {
        [
            FileKind::Board,
            FileKind::Include,
            FileKind::Overlay,
            FileKind::Binding,
            FileKind::Code,
        ]
        .get(b as usize)
        .copied()
    }
}

/// True for a root-relative path the hardware part reads.
pub fn is_hw_path(path: &str) -> bool {
    is_dts(path) || is_binding(path) || is_c_path(path)
}

/// One file as `files.dat` keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HwFile {
    /// Root-relative path.
    pub path: String,
    /// Its kind.
    pub kind: FileKind,
    /// A device tree's `model`, a binding's `title`.
    pub about: Option<String>,
    /// The files its includes lead to, by id.
    pub includes: Vec<u32>,
    /// The `status` its `&label { … }` blocks set: (label, status).
    pub statuses: Vec<(String, String)>,
}

/// A binding documenting a compatible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Documented {
    /// The binding's file id.
    pub file: u32,
    /// The line of the compatible in it.
    pub line: u32,
}

/// A device-tree node naming a compatible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeUse {
    /// Its file's id.
    pub file: u32,
    /// The line of its name.
    pub line: u32,
    /// Its path as written.
    pub path: String,
    /// Its labels.
    pub labels: Vec<String>,
    /// Its `status` as written in the node.
    pub status: Option<String>,
}

/// An `of_device_id` entry matching a compatible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableUse {
    /// Its file's id.
    pub file: u32,
    /// Its table's index among the file's tables.
    pub table: u32,
    /// The entry's line.
    pub line: u32,
}

/// Code that declares or matches a compatible outside a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeUse {
    /// Its file's id.
    pub file: u32,
    /// The line.
    pub line: u32,
    /// The macro or function (`IRQCHIP_DECLARE`, `of_device_is_compatible`).
    pub via: String,
    /// True for a declaration of the `OF_DECLARE` family (it binds a driver), false for a
    /// test in code.
    pub declared: bool,
}

/// What the part knows of one compatible string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uses {
    /// The bindings documenting it.
    pub documented: Vec<Documented>,
    /// The nodes naming it, in file order.
    pub nodes: Vec<NodeUse>,
    /// The `of_device_id` entries matching it.
    pub entries: Vec<TableUse>,
    /// The code declaring or matching it.
    pub code: Vec<CodeUse>,
}

/// What a build read and wrote.
pub struct Built {
    /// Device-tree sources read.
    pub sources: u64,
    /// Binding schemas read.
    pub bindings: u64,
    /// C files that say something about hardware.
    pub drivers: u64,
    /// Files whose facts were reused from the previous part.
    pub reused: u64,
    /// Distinct compatible strings.
    pub compatibles: u64,
    /// Each file of the part with its checksum.
    pub checksums: Vec<(String, u64)>,
    /// Bytes written.
    pub bytes: u64,
}

/// Every file's content hash and facts, in path order, and the salt of the C files' context.
#[derive(Default)]
pub struct HwMerge {
    facts: Vec<(u64, HwFacts)>,
    salt: u64,
    /// The context's headers.
    context: Vec<String>,
}

impl Merge<(u64, HwFacts)> for HwMerge {
    fn add(&mut self, batch: Vec<(u64, HwFacts)>) -> Result<(), IndexError> {
        self.facts.extend(batch);
        Ok(())
    }
}

/// A file's facts kept from a previous part, with the stat and content hash they were made of.
#[derive(Clone, Debug)]
pub struct Kept {
    /// Size in bytes.
    pub size: u64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// `hash64` of its bytes.
    pub hash: u64,
    /// Its facts.
    pub facts: HwFacts,
}

impl Kept {
    /// True when `f` has the stat the facts were made of.
    pub fn same_stat(&self, f: &TextFile) -> bool {
        (self.size, self.mtime_ns) == (f.size, f.mtime_ns)
    }
}

/// Facts kept from a previous part.
#[derive(Clone, Debug, Default)]
pub struct Reusable {
    /// The salt its C files were read with ([`CReader::salt`]).
    pub salt: u64,
    /// Each file's facts, by path.
    pub files: HashMap<String, Kept>,
}

/// Reads `files` (in path order) under `root`, but those `reuse` holds with the same stat, and
/// writes the part into the new directory `dir` (a file read whose bytes `reuse` holds keeps
/// its facts too); `prover` takes the digest of each file read. A C file's facts are kept only
/// when the context's salt and the stats of the local headers it was read with are the same.
pub fn build(
    root: &Path,
    files: &[TextFile],
    reuse: &Reusable,
    dir: &Path,
    prover: Option<&crate::factstore::Prover>,
) -> Result<Built, IndexError> {
    let beneath = crate::tree::beneath::Root::open(root)
        .map_err(IndexError::io("cannot open the tree", root))?;
    let creader = CReader::new(&beneath, files);
    let by_path: HashMap<&str, &TextFile> = files.iter().map(|f| (f.path.as_str(), f)).collect();
    let same_salt = reuse.salt == creader.salt();
    let still = |k: &Kept| match &k.facts {
        HwFacts::Driver(d) => {
            same_salt
                && d.locals.iter().all(|l| {
                    let now = by_path.get(l.as_str());
                    let then = reuse.files.get(l);
                    matches!((now, then), (Some(n), Some(t)) if t.same_stat(n))
                })
        }
        _ => true,
    };
    let mut merge = HwMerge {
        facts: Vec::new(),
        salt: creader.salt(),
        context: creader.context().to_vec(),
    };
    let reused = std::sync::atomic::AtomicU64::new(0);
    let kept = |k: &Kept| {
        reused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (k.hash, k.facts.clone())
    };
    crate::part::build(
        files,
        |f| {
            let old = reuse.files.get(&f.path).filter(|k| still(k));
            if let Some(k) = old.filter(|k| k.same_stat(f)) {
                return kept(k);
            }
            let bytes = beneath.read(&f.path).ok();
            if let (Some(p), Some(b)) = (prover, bytes.as_deref()) {
                p.saw(&f.path, b);
            }
            let hash = bytes.as_deref().map_or(0, crate::codec::hash64);
            if let Some(k) = old.filter(|k| bytes.is_some() && k.hash == hash) {
                return kept(k);
            }
            let facts = match bytes.as_deref() {
                Some(b) if is_c_path(&f.path) => HwFacts::Driver(creader.read(&f.path, b)),
                b => HwFacts::of(&f.path, b),
            };
            (hash, facts)
        },
        &mut merge,
    )?;
    let mut built = merge.finish(files, dir)?;
    built.reused = reused.into_inner();
    Ok(built)
}

/// True when the part lists the file of these facts in `files.dat` (a C file that says
/// nothing about hardware is kept in `facts.dat` only).
fn listed(facts: &HwFacts) -> bool {
    !matches!(facts, HwFacts::Driver(d) if d.is_empty())
}

impl HwMerge {
    /// Writes the part of `files` (whose facts were merged, in this order) into the new
    /// directory `dir`.
    pub fn finish(self, files: &[TextFile], dir: &Path) -> Result<Built, IndexError> {
        let merged: Vec<(&TextFile, &HwFacts)> = files
            .iter()
            .zip(&self.facts)
            .map(|(f, (_, fa))| (f, fa))
            .collect();
        let (code, described): (Vec<_>, Vec<_>) = merged
            .iter()
            .filter(|(_, fa)| listed(fa))
            .partition(|(_, fa)| matches!(fa, HwFacts::Driver(_)));
        let ids: HashMap<&str, u32> = described
            .iter()
            .chain(&code)
            .enumerate()
            .map(|(i, (f, _))| (f.path.as_str(), i as u32))
            .collect();
        let mut facts = header(FACTS_KIND).to_vec();
        facts.extend_from_slice(&self.salt.to_le_bytes());
        put_varint(&mut facts, files.len() as u64);
        for (f, (hash, fa)) in files.iter().zip(&self.facts) {
            put_str(&mut facts, f.path.as_bytes());
            put_varint(&mut facts, f.size);
            put_varint(&mut facts, f.mtime_ns as u64);
            facts.extend_from_slice(&hash.to_le_bytes());
            fa.put(&mut facts);
        }
        let mut table = header(FILES_KIND).to_vec();
        put_varint(&mut table, described.len() as u64);
        let mut compat: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
        let (mut sources, mut bindings) = (0, 0);
        for (id, (f, fa)) in described.iter().enumerate() {
            put_file(&mut table, f, fa, &ids);
            match fa {
                HwFacts::Dts(d) => {
                    sources += 1;
                    for n in &d.nodes {
                        for c in &n.compatible {
                            let rows = compat.entry(c).or_default();
                            rows.push(1);
                            put_varint(rows, id as u64);
                            put_varint(rows, n.line as u64);
                            put_str(rows, n.path.as_bytes());
                            put_varint(rows, n.labels.len() as u64);
                            for l in &n.labels {
                                put_str(rows, l.as_bytes());
                            }
                            put_opt_str(rows, n.status.as_deref());
                        }
                    }
                }
                HwFacts::Binding(b) => {
                    bindings += 1;
                    for (c, line) in &b.compatibles {
                        let rows = compat.entry(c).or_default();
                        rows.push(0);
                        put_varint(rows, id as u64);
                        put_varint(rows, *line as u64);
                    }
                }
                HwFacts::Driver(_) | HwFacts::Unread => {}
            }
        }
        let c_side = add_code(&code, described.len(), &mut compat);
        let mut rows = header(COMPAT_KIND).to_vec();
        let mut fst = crate::fstbuild::MapWriter::new(Vec::new());
        for (c, r) in &compat {
            fst.insert(c.as_bytes(), rows.len() as u64)
                .map_err(|e| IndexError::io("cannot write", dir)(e))?;
            put_varint(&mut rows, r.len() as u64);
            rows.extend_from_slice(r);
        }
        let fst = fst
            .finish()
            .map_err(|e| IndexError::io("cannot write", dir)(e))?;
        let mut checksums = Vec::new();
        let mut bytes = 0;
        let mut all = vec![
            (FILES[0], table),
            (FILES[1], fst),
            (FILES[2], rows),
            (FILES[3], facts),
        ];
        all.extend(c_side.finish(dir)?);
        let mut check = header(CHECK_KIND).to_vec();
        super::check::put(&super::check::findings(&described, &code), &mut check);
        all.push((FILES[8], check));
        all.extend(stats_and_deps(files, &self.context, &code));
        for (name, data) in &all {
            let path = dir.join(name);
            std::fs::write(&path, data).map_err(IndexError::io("cannot write", &path))?;
            checksums.push((name.to_string(), checksum_bytes(data)));
            bytes += data.len() as u64;
        }
        Ok(Built {
            sources,
            bindings,
            drivers: code.len() as u64,
            reused: 0,
            compatibles: compat.len() as u64,
            checksums,
            bytes,
        })
    }
}

/// `stats.dat` and `deps.dat` of `files`, the context's headers and the C files `code`.
fn stats_and_deps(
    files: &[TextFile],
    context: &[String],
    code: &[(&TextFile, &HwFacts)],
) -> [(&'static str, Vec<u8>); 2] {
    let mut stats = header(STATS_KIND).to_vec();
    for f in files {
        stats.extend_from_slice(&crate::codec::hash64(f.path.as_bytes()).to_le_bytes());
        stats.extend_from_slice(&f.size.to_le_bytes());
        stats.extend_from_slice(&f.mtime_ns.to_le_bytes());
    }
    let mut deps: Vec<&str> = context.iter().map(String::as_str).collect();
    for (_, fa) in code {
        if let HwFacts::Driver(d) = fa {
            deps.extend(d.locals.iter().map(String::as_str));
        }
    }
    deps.sort_unstable();
    deps.dedup();
    let mut dep_bytes = header(DEPS_KIND).to_vec();
    put_varint(&mut dep_bytes, deps.len() as u64);
    for d in deps {
        put_str(&mut dep_bytes, d.as_bytes());
    }
    [(FILES[9], stats), (FILES[10], dep_bytes)]
}

/// The C files `code` (ids from `first`) into a new C side, and their compatibles into
/// `compat`'s rows.
fn add_code<'a>(
    code: &[(&'a TextFile, &'a HwFacts)],
    first: usize,
    compat: &mut BTreeMap<&'a str, Vec<u8>>,
) -> IdsWriter {
    let mut c_side = IdsWriter::new();
    for (i, (f, fa)) in code.iter().enumerate() {
        let HwFacts::Driver(d) = fa else { continue };
        let id = (first + i) as u64;
        c_side.add(id as u32, &f.path, d);
        for (ti, t) in d.tables.iter().enumerate() {
            if t.kind != "of_device_id" {
                continue;
            }
            for e in &t.entries {
                for c in &e.keys {
                    let rows = compat.entry(c).or_default();
                    rows.push(2);
                    put_varint(rows, id);
                    put_varint(rows, e.line as u64);
                    put_varint(rows, ti as u64);
                }
            }
        }
        for (line, via, c, declared) in &d.compatibles {
            let rows = compat.entry(c).or_default();
            rows.push(3);
            put_varint(rows, id);
            put_varint(rows, *line as u64);
            put_str(rows, via.as_bytes());
            rows.push(u8::from(*declared));
        }
    }
    c_side
}

/// `f`'s record of `files.dat`.
fn put_file(out: &mut Vec<u8>, f: &TextFile, facts: &HwFacts, ids: &HashMap<&str, u32>) {
    put_str(out, f.path.as_bytes());
    out.push(FileKind::of(&f.path).byte());
    let (about, includes, statuses) = match facts {
        HwFacts::Dts(d) => {
            let includes: Vec<u32> = d
                .includes
                .iter()
                .filter_map(|(p, _, kind)| super::includes::resolve(&f.path, p, *kind, ids))
                .collect();
            let statuses: Vec<(&str, &str)> = d
                .nodes
                .iter()
                .filter_map(|n| Some((n.path.strip_prefix('&')?, n.status.as_deref()?)))
                .filter(|(label, _)| !label.contains('/') && !label.starts_with('{'))
                .collect();
            (d.model.as_deref(), includes, statuses)
        }
        HwFacts::Binding(b) => (b.title.as_deref(), Vec::new(), Vec::new()),
        HwFacts::Driver(_) | HwFacts::Unread => (None, Vec::new(), Vec::new()),
    };
    put_opt_str(out, about);
    put_varint(out, includes.len() as u64);
    for i in includes {
        put_varint(out, i as u64);
    }
    put_varint(out, statuses.len() as u64);
    for (label, status) in statuses {
        put_str(out, label.as_bytes());
        put_str(out, status.as_bytes());
    }
}

/// An open hardware part.
pub struct Hw {
    /// The part's directory.
    pub dir: std::path::PathBuf,
    /// Every file, by id.
    pub files: Vec<HwFile>,
    compat: fst::Map<MapBytes>,
    rows: memmap2::Mmap,
    /// The C side.
    pub ids: Ids,
    bytes: u64,
}

impl Hw {
    /// Opens the part in `dir` (`files.dat` read, the compatibles mapped); an error says
    /// which file is unreadable or damaged.
    pub fn open(dir: &Path) -> Result<Hw, IndexError> {
        let path = dir.join(FILES[0]);
        let bytes = std::fs::read(&path).map_err(IndexError::io("", &path))?;
        check_header(&bytes, FILES_KIND, &path)?;
        let files = read_files(&bytes[HEADER_LEN..])
            .ok_or_else(|| IndexError::damaged(&path, "a file record does not decode"))?;
        let compat = crate::damage::open_fst(dir, FILES[1], None)?;
        let rows = crate::disk::map(dir, FILES[2], None)?;
        check_header(&rows, COMPAT_KIND, &dir.join(FILES[2]))?;
        let ids = Ids::open(dir)?;
        Ok(Hw {
            bytes: bytes.len() as u64
                + compat.as_fst().as_bytes().len() as u64
                + rows.len() as u64
                + ids.bytes(),
            dir: dir.to_path_buf(),
            files,
            compat,
            rows,
            ids,
        })
    }

    /// Bytes of the files a query reads.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// `knav dt check`'s findings ([`super::check`]).
    pub fn findings(&self) -> Result<Vec<super::check::Finding>, IndexError> {
        let path = self.dir.join(FILES[8]);
        let bytes = std::fs::read(&path).map_err(IndexError::io("", &path))?;
        check_header(&bytes, CHECK_KIND, &path)?;
        super::check::get(&mut Reader::new(&bytes[HEADER_LEN..]))
            .ok_or_else(|| IndexError::damaged(&path, "a finding does not decode"))
    }

    /// The path of the file `id`, a device-tree source, a binding or a C file.
    pub fn path(&self, id: u32) -> Result<String, IndexError> {
        match self.files.get(id as usize) {
            Some(f) => Ok(f.path.clone()),
            None => Ok(self.c_file(id)?.0),
        }
    }

    /// The C file `id`: its path and the offset of its facts ([`Ids::facts`]).
    pub fn c_file(&self, id: u32) -> Result<(String, u64), IndexError> {
        self.ids
            .c_file((id as usize).wrapping_sub(self.files.len()))
    }

    /// The id of the C file at `path`, if it says something.
    pub fn c_id(&self, path: &str) -> Result<Option<u32>, IndexError> {
        Ok(self.ids.find(path)?.map(|i| (i + self.files.len()) as u32))
    }

    /// What the part knows of `compatible`; `None` when no file names it.
    pub fn uses(&self, compatible: &str) -> Result<Option<Uses>, IndexError> {
        let Some(at) = self.compat.get(compatible) else {
            return Ok(None);
        };
        let damaged = || IndexError::damaged(self.dir.join(FILES[2]), "a row does not decode");
        let rows = super::rows_at(&self.rows, at).ok_or_else(damaged)?;
        let mut r = Reader::new(rows);
        let mut uses = Uses::default();
        while !r.at_end() && !r.overrun {
            let tag = r.u8();
            let (file, line) = (r.varint() as u32, r.varint() as u32);
            let known = match tag {
                0 | 1 => self.files.len(),
                _ => self.files.len() + self.ids.len(),
            };
            if file as usize >= known {
                return Err(damaged());
            }
            match tag {
                0 => {
                    uses.documented.push(Documented { file, line });
                    continue;
                }
                2 => {
                    let table = r.varint() as u32;
                    uses.entries.push(TableUse { file, table, line });
                    continue;
                }
                3 => {
                    let via = string(&mut r).ok_or_else(damaged)?;
                    let declared = r.u8() == 1;
                    uses.code.push(CodeUse {
                        file,
                        line,
                        via,
                        declared,
                    });
                    continue;
                }
                1 => {}
                _ => return Err(damaged()),
            }
            let path = string(&mut r).ok_or_else(damaged)?;
            let n = r.varint();
            let mut labels = Vec::with_capacity(r.room_for(n, 1));
            for _ in 0..n {
                labels.push(string(&mut r).ok_or_else(damaged)?);
            }
            let status = opt_string(&mut r);
            uses.nodes.push(NodeUse {
                file,
                line,
                path,
                labels,
                status,
            });
        }
        if r.overrun {
            return Err(damaged());
        }
        Ok(Some(uses))
    }

    /// The compatibles that start with `prefix` and end with `suffix` (a `*` between them),
    /// at most `max`.
    pub fn matching(&self, prefix: &str, suffix: &str, max: usize) -> Vec<String> {
        use fst::{Automaton, IntoStreamer, Streamer};
        let mut s = self
            .compat
            .search(fst::automaton::Str::new(prefix).starts_with())
            .into_stream();
        let mut out = Vec::new();
        while let Some((k, _)) = s.next() {
            let k = String::from_utf8_lossy(k);
            if k.len() >= prefix.len() + suffix.len() && k.ends_with(suffix) {
                out.push(k.into_owned());
                if out.len() >= max {
                    break;
                }
            }
        }
        out
    }

    /// Compatibles within two edits of `compatible`, at most `max`.
    pub fn near(&self, compatible: &str, max: usize) -> Vec<String> {
        super::near_keys(&self.compat, compatible, 2, max)
    }

    /// Per file id, the files whose includes lead to it.
    pub fn includers(&self) -> Vec<Vec<u32>> {
        let mut by = vec![Vec::new(); self.files.len()];
        for (id, f) in self.files.iter().enumerate() {
            for &i in &f.includes {
                by[i as usize].push(id as u32);
            }
        }
        by
    }

    /// The boards (`.dts` files) that include `file`, directly or through other includes
    /// (`includers`: [`Hw::includers`]), in path order.
    pub fn boards_including(&self, includers: &[Vec<u32>], file: u32) -> Vec<u32> {
        let mut seen = vec![false; self.files.len()];
        let mut stack = vec![file];
        let mut boards = Vec::new();
        while let Some(f) = stack.pop() {
            for &by in includers.get(f as usize).into_iter().flatten() {
                if std::mem::replace(&mut seen[by as usize], true) {
                    continue;
                }
                if self.files[by as usize].kind == FileKind::Board {
                    boards.push(by);
                }
                stack.push(by);
            }
        }
        boards.sort_unstable();
        boards
    }

    /// The `status` the board `board` gives a node of `labels`: the last `&label { status }`
    /// in its own file or in the files it includes (depth first, in include order, the board
    /// last, as dtc applies them).
    pub fn status_in(&self, board: u32, labels: &[String]) -> Option<String> {
        let mut order = Vec::new();
        let mut seen = vec![false; self.files.len()];
        self.post_order(board, &mut seen, &mut order, 0);
        let mut found = None;
        for f in order {
            for (label, status) in &self.files[f as usize].statuses {
                if labels.contains(label) {
                    found = Some(status.clone());
                }
            }
        }
        found
    }

    fn post_order(&self, f: u32, seen: &mut [bool], out: &mut Vec<u32>, depth: usize) {
        if depth > 64 || std::mem::replace(&mut seen[f as usize], true) {
            return;
        }
        for &i in &self.files[f as usize].includes {
            if (i as usize) < seen.len() {
                self.post_order(i, seen, out, depth + 1);
            }
        }
        out.push(f);
    }
}

/// The records of `files.dat` after its header; `None` when they do not decode.
fn read_files(bytes: &[u8]) -> Option<Vec<HwFile>> {
    let mut r = Reader::new(bytes);
    let n = r.varint();
    let mut files = Vec::with_capacity(r.room_for(n, 4));
    for _ in 0..n {
        let path = string(&mut r)?;
        let kind = FileKind::from_byte(r.u8())?;
        let about = opt_string(&mut r);
        let k = r.varint();
        let mut includes = Vec::with_capacity(r.room_for(k, 1));
        for _ in 0..k {
            includes.push(u32::try_from(r.varint()).ok().filter(|&i| (i as u64) < n)?);
        }
        let k = r.varint();
        let mut statuses = Vec::with_capacity(r.room_for(k, 2));
        for _ in 0..k {
            statuses.push((string(&mut r)?, string(&mut r)?));
        }
        if r.overrun {
            return None;
        }
        files.push(HwFile {
            path,
            kind,
            about,
            includes,
            statuses,
        });
    }
    r.at_end().then_some(files)
}

/// True when the part in `dir` still holds the facts of `files` (the tree's, in path order)
/// although their stats moved: the same paths, and every file whose stat changed a C file
/// that said nothing, that no file with facts reads as a header, and that holds none of
/// [`super::cread::COARSE_NEEDLES`] (an edit to `kernel/sched/core.c` keeps the part). Reads
/// `stats.dat`, `deps.dat`, the C files' list and the changed files only.
pub fn quick_same(root: &Path, dir: &Path, ids: &Ids, files: &[TextFile]) -> bool {
    let Ok(stats) = std::fs::read(dir.join(FILES[9])) else {
        return false;
    };
    if check_header(&stats, STATS_KIND, &dir.join(FILES[9])).is_err()
        || stats.len() != HEADER_LEN + 24 * files.len()
    {
        return false;
    }
    let word = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&stats[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let mut changed = Vec::new();
    for (k, f) in files.iter().enumerate() {
        let at = HEADER_LEN + 24 * k;
        if word(at) != crate::codec::hash64(f.path.as_bytes()) {
            return false;
        }
        if word(at + 8) != f.size || word(at + 16) as i64 != f.mtime_ns {
            changed.push(f);
        }
    }
    if changed.len() > 64 {
        return false;
    }
    let deps = match std::fs::read(dir.join(FILES[10])) {
        Ok(b) if check_header(&b, DEPS_KIND, &dir.join(FILES[10])).is_ok() => b,
        _ => return false,
    };
    let mut r = Reader::new(&deps[HEADER_LEN..]);
    let n = r.varint();
    let mut dep_paths = Vec::with_capacity(r.room_for(n, 1));
    for _ in 0..n {
        dep_paths.push(r.str());
    }
    if r.overrun {
        return false;
    }
    let Ok(beneath) = crate::tree::beneath::Root::open(root) else {
        return false;
    };
    changed.iter().all(|f| {
        is_c_path(&f.path)
            && dep_paths.binary_search(&f.path.as_bytes()).is_err()
            && matches!(ids.find(&f.path), Ok(None))
            && beneath
                .read(&f.path)
                .is_ok_and(|b| !super::cread::may_say_something(&b))
    })
}

/// The facts of the part in `dir` (`facts.dat`), for a refresh to reuse; empty when they
/// cannot be read (every file is then read again).
pub fn reusable(dir: &Path) -> Reusable {
    let path = dir.join(FILES[3]);
    let Ok(bytes) = std::fs::read(&path) else {
        return Reusable::default();
    };
    if check_header(&bytes, FACTS_KIND, &path).is_err() {
        return Reusable::default();
    }
    let mut r = Reader::new(&bytes[HEADER_LEN..]);
    let salt = u64::from_le_bytes(r.bytes(8).try_into().unwrap_or_default());
    let n = r.varint();
    let mut out = HashMap::with_capacity(r.room_for(n, 4));
    for _ in 0..n {
        let Some(path) = string(&mut r) else {
            return Reusable::default();
        };
        let (size, mtime_ns) = (r.varint(), r.varint() as i64);
        let hash = u64::from_le_bytes(r.bytes(8).try_into().unwrap_or_default());
        let Some(facts) = HwFacts::get(&mut r) else {
            return Reusable::default();
        };
        out.insert(
            path,
            Kept {
                size,
                mtime_ns,
                hash,
                facts,
            },
        );
    }
    Reusable { salt, files: out }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The part of `files` (path, bytes), written into a fresh directory and opened.
    fn part_of(name: &str, files: &[(&str, &str)]) -> Hw {
        let dir = std::env::temp_dir().join(format!("knav-hw-part-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let listed: Vec<TextFile> = files
            .iter()
            .map(|(p, b)| TextFile {
                path: p.to_string(),
                size: b.len() as u64,
                mtime_ns: 0,
            })
            .collect();
        let mut merge = HwMerge::default();
        let facts = files
            .iter()
            .map(|(p, b)| (0, HwFacts::of(p, Some(b.as_bytes()))))
            .collect();
        merge.add(facts).unwrap();
        merge.finish(&listed, &dir).unwrap();
        let hw = Hw::open(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        hw
    }

    #[test]
    fn includes_in_a_cycle_end_and_the_last_status_written_wins() {
        // a.dtsi and b.dtsi include each other; the board includes a.dtsi, then enables the
        // node b.dtsi disabled after a.dtsi did.
        let hw = part_of(
            "cycle",
            &[
                ("x/a.dtsi", "#include \"b.dtsi\"\n/ { n: node { compatible = \"v,n\"; status = \"disabled\"; }; };\n"),
                ("x/b.dtsi", "#include \"a.dtsi\"\n&n { status = \"fail\"; };\n"),
                ("x/board.dts", "#include \"a.dtsi\"\n&n { status = \"okay\"; };\n"),
                ("x/other.dts", "#include \"b.dtsi\"\n"),
            ],
        );
        let includers = hw.includers();
        assert_eq!(hw.boards_including(&includers, 0), [2, 3]);
        assert_eq!(hw.boards_including(&includers, 1), [2, 3]);
        let uses = hw.uses("v,n").unwrap().unwrap();
        assert_eq!(
            (uses.nodes.len(), uses.nodes[0].file, uses.nodes[0].line),
            (1, 0, 2)
        );
        let labels = ["n".to_string()];
        assert_eq!(hw.status_in(2, &labels).as_deref(), Some("okay"));
        // other.dts: b.dtsi's a.dtsi first, then b.dtsi's own &n.
        assert_eq!(hw.status_in(3, &labels).as_deref(), Some("fail"));
        assert_eq!(hw.uses("v,m").unwrap(), None);
        assert_eq!(hw.matching("v,", "", 10), ["v,n"]);
        assert_eq!(hw.near("v,m", 10), ["v,n"]);
    }
}
