//! What one file contributes to a symbol segment ([`FileResult`]: its record, definitions,
//! names with their postings, calls through pointers and search documents), and its encoding
//! for the fact store ([`super::factstore`]).
//!
//! A file's facts depend on its bytes, its path (ctags names anonymous types after it, the
//! search documents hold its path's words) and the build's analyzer and ctags options, which
//! make the key; and on the definer table learned from the tree's headers, of which a file
//! reads only the entries of the macros it invokes at file scope and of those it declares
//! variables with ([`Deps`]). An entry keeps those macros' names and a hash of their entries
//! when it was made; it serves a build whose table gives the same entries, so a header edit
//! elsewhere in the tree (or another version's headers) costs only the files that use what
//! changed.

use knav_c::definers::Definers;
use knav_c::membercall::NameSketch;

use super::code::extract::FileDocs;
use super::codec::{digest, digest_parts, put_opt_str, put_str, put_varint, Digest, Reader};
use super::format::{Def, DefRecord, FileRecord};

/// Bumped when what a file's facts hold, or how they are made, changes.
pub const FACTS_VERSION: u32 = 21;

/// What a worker made of one file.
pub(crate) struct FileResult {
    pub record: FileRecord,
    /// Only preprocessor lines: no ctags run was needed.
    pub macro_only: bool,
    /// The spans ctags need not read ([`super::ctagstext::ctags_text`]); empty when it reads
    /// the whole file.
    pub opaque: Vec<(u32, u32)>,
    /// Where the text ctags reads gets a `;` (`knav_c::scan::FileScan::ctags_semicolons`).
    pub semicolons: Vec<u32>,
    /// The file-scope functions knav's scanner found, for those ctags does not report.
    pub functions: Vec<super::format::DefRecord>,
    /// Bytes ctags read for this file.
    pub ctags_bytes: u64,
    pub defs: Vec<DefRecord>,
    pub names: FileNames,
    /// Calls through function pointers it shows.
    pub indirect: knav_c::indirect::Facts,
    /// Its search documents, made once ctags's definitions are attached.
    pub docs: FileDocs,
    /// What it read of the definer table; `None` once it came from the store.
    pub deps: Option<Deps>,
    /// The [`super::codec::digest`] of its bytes, when a fact store asked for it.
    pub digest: Option<super::codec::Digest>,
}

/// The names of one file with their postings blocks.
#[derive(Default)]
pub(crate) struct FileNames {
    /// Names, back to back.
    pub text: Vec<u8>,
    /// Per name, where its name and postings block are.
    pub groups: Vec<NameGroup>,
    pub blocks: Vec<u8>,
}

/// One name's occurrences in one file: its bytes in `text` and its postings block in
/// `blocks` of the file's [`FileNames`] (offsets and lengths, so a file's names take three
/// allocations, not one per name).
#[derive(Clone, Copy, Debug)]
pub(crate) struct NameGroup {
    pub name: (u32, u32),
    pub block: (u32, u32),
    /// Occurrences in the block.
    pub count: u32,
    /// The name's shard ([`super::format::shard_of`]).
    pub shard: u8,
}

impl NameGroup {
    pub fn name<'a>(&self, names: &'a [u8]) -> &'a [u8] {
        let (at, len) = self.name;
        &names[at as usize..(at + len) as usize]
    }

    pub fn block<'a>(&self, blocks: &'a [u8]) -> &'a [u8] {
        let (at, len) = self.block;
        &blocks[at as usize..(at + len) as usize]
    }
}

/// The macros whose definer-table entries a file's facts depend on: their templates (the
/// macros invoked at file scope), or only the struct tag of the variables they declare (the
/// pointer pass's question).
#[derive(Clone, Debug, Default)]
pub(crate) struct Deps {
    /// Each name after a byte saying what was read of it: [`TEMPLATES`] or [`TAG`].
    names: Vec<Vec<u8>>,
}

/// A dependency on a macro's templates.
const TEMPLATES: u8 = b'F';
/// A dependency on the struct tag a macro's variable has.
const TAG: u8 = b'T';

impl Deps {
    /// Adds `name`, whose templates were read of the table.
    pub fn add(&mut self, name: &[u8]) {
        self.push(TEMPLATES, name);
    }

    /// Adds `name`, whose variable's struct tag was read of the table.
    pub fn add_tag(&mut self, name: &[u8]) {
        self.push(TAG, name);
    }

    fn push(&mut self, what: u8, name: &[u8]) {
        let mut v = Vec::with_capacity(name.len() + 1);
        v.push(what);
        v.extend_from_slice(name);
        self.names.push(v);
    }

    fn settle(&mut self) {
        self.names.sort_unstable();
        self.names.dedup();
    }

    /// A digest of what the table whose entries hash to `table` says of these names (a digest:
    /// another tree's headers must not make their table pass for this one's).
    fn fingerprint(&self, table: &TableHashes) -> Digest {
        let mut said = Vec::with_capacity(self.names.len() * 24);
        for n in &self.names {
            said.extend_from_slice(n);
            said.push(0);
            let (what, name) = n.split_first().unwrap_or((&0, &[]));
            let read = std::str::from_utf8(name)
                .ok()
                .and_then(|n| table.entries.get(n));
            let h = match (what, read) {
                (&TEMPLATES, Some(h)) => h.templates,
                (&TAG, Some(h)) => h.tag,
                _ => [0; 32],
            };
            said.extend_from_slice(&h);
        }
        // Every file's calls through pointers read the indirect-call wrappers the table knows
        // (any call of a wrapper lists functions): they key every file's facts.
        said.extend_from_slice(&table.wrappers);
        digest(&said)
    }
}

/// What a file's [`Deps`] are checked against: per definer macro, a hash of its templates and
/// one of its variable's struct tag; and a hash of the table's indirect-call wrappers.
#[derive(Debug, Default)]
pub(crate) struct TableHashes {
    entries: std::collections::HashMap<String, EntryHashes>,
    wrappers: Digest,
    /// Per macro that calls through members, a digest of its calls: a file's facts depend on
    /// those of the names it holds ([`TableHashes::member_calls_of`]).
    member_calls: std::collections::HashMap<Vec<u8>, Digest>,
    /// The names of `member_calls`.
    member_call_names: NameSketch,
}

#[derive(Debug, Clone, Copy)]
struct EntryHashes {
    templates: Digest,
    tag: Digest,
}

impl TableHashes {
    /// The hashes of `table`'s entries.
    pub fn of(table: &Definers) -> TableHashes {
        // In name order, whatever order they were learned in.
        let wrappers: Vec<(&str, usize)> = table.wrappers().collect();
        let entries = table
            .entries()
            .map(|(name, t)| {
                // What `Definers::struct_tag` answers: no tag hashes as no entry.
                let tag = t.iter().find_map(|t| t.tag.as_deref());
                let hashes = EntryHashes {
                    templates: digest(format!("{t:?}").as_bytes()),
                    tag: tag.map_or([0; 32], |tag| digest_parts(&[b"tag", tag.as_bytes()])),
                };
                (name.to_string(), hashes)
            })
            .collect();
        let member_calls: std::collections::HashMap<Vec<u8>, Digest> =
            (table.all_member_calls().into_iter())
                .map(|(name, calls)| {
                    let h = digest(format!("{calls:?}").as_bytes());
                    (name.as_bytes().to_vec(), h)
                })
                .collect();
        let mut member_call_names = NameSketch::default();
        for name in member_calls.keys() {
            member_call_names.insert(name);
        }
        TableHashes {
            entries,
            wrappers: digest(format!("{wrappers:?}").as_bytes()),
            member_calls,
            member_call_names,
        }
    }

    /// A hash of the calls through members of the macros among the names of a file (`groups`
    /// into `text`): what its dispatches read of the table. Another tree's table that makes a
    /// name the file uses a macro calling through members, or changes its calls, changes it;
    /// one that only differs in macros the file never names does not.
    pub fn member_calls_of(&self, text: &[u8], groups: &[NameGroup]) -> Digest {
        // In the file's name order, which its bytes fix.
        let mut h = blake3::Hasher::new();
        for g in groups {
            let name = g.name(text);
            if !self.member_call_names.may_hold(name) {
                continue;
            }
            if let Some(calls) = self.member_calls.get(name) {
                h.update(&(name.len() as u64).to_le_bytes());
                h.update(name);
                h.update(calls);
            }
        }
        *h.finalize().as_bytes()
    }
}

/// The encoded facts of `r`, whose definer-table reads are `deps` under `table`.
pub(crate) fn encode(r: &FileResult, deps: &mut Deps, table: &TableHashes) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    deps.settle();
    put_varint(&mut out, deps.names.len() as u64);
    for n in &deps.names {
        put_str(&mut out, n);
    }
    out.extend_from_slice(&deps.fingerprint(table));
    let record = FileRecord {
        path: String::new(),
        size: 0,
        mtime_ns: 0,
        ..r.record.clone()
    };
    record.encode(&mut out);
    out.push(r.macro_only as u8);
    put_varint(&mut out, r.ctags_bytes);
    put_varint(&mut out, r.defs.len() as u64);
    for d in &r.defs {
        d.encode(&mut out);
    }
    put_str(&mut out, &r.names.text);
    put_str(&mut out, &r.names.blocks);
    put_varint(&mut out, r.names.groups.len() as u64);
    for g in &r.names.groups {
        for v in [g.name.0, g.name.1, g.block.0, g.block.1, g.count] {
            put_varint(&mut out, v as u64);
        }
        out.push(g.shard);
    }
    out.extend_from_slice(&table.member_calls_of(&r.names.text, &r.names.groups));
    encode_indirect(&r.indirect, &mut out);
    put_varint(&mut out, r.docs.defs.len() as u64);
    for d in &r.docs.defs {
        put_varint(&mut out, *d as u64);
    }
    for v in [&r.docs.terms, &r.docs.path, &r.docs.bytes] {
        put_str(&mut out, v);
    }
    out
}

/// The facts in `bytes` when they were made under what `table` says of their macros now and
/// decode whole; the record's path, size and modification time are left to the caller.
pub(crate) fn decode(bytes: &[u8], table: &TableHashes) -> Option<FileResult> {
    let mut r = Reader::new(bytes);
    let mut deps = Deps::default();
    for _ in 0..r.varint() {
        deps.names.push(r.str().to_vec());
        if r.overrun {
            return None;
        }
    }
    let fp = super::codec::Reader::bytes(&mut r, 32);
    if fp != deps.fingerprint(table) {
        return None;
    }
    let record = FileRecord::decode(&mut r);
    let macro_only = r.u8() != 0;
    let ctags_bytes = r.varint();
    let n = r.varint() as usize;
    let mut defs = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        defs.push(Def::decode(&mut r).to_record());
        if r.overrun {
            return None;
        }
    }
    let text = r.str().to_vec();
    let blocks = r.str().to_vec();
    let n = r.varint() as usize;
    let mut groups = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        let mut v = [0u32; 5];
        for x in &mut v {
            *x = r.varint() as u32;
        }
        let g = NameGroup {
            name: (v[0], v[1]),
            block: (v[2], v[3]),
            count: v[4],
            shard: r.u8(),
        };
        let fits = |(at, len): (u32, u32), within: usize| at as usize + len as usize <= within;
        if r.overrun || !fits(g.name, text.len()) || !fits(g.block, blocks.len()) {
            return None;
        }
        groups.push(g);
    }
    let calls = super::codec::Reader::bytes(&mut r, 32);
    if calls != table.member_calls_of(&text, &groups) {
        return None;
    }
    let indirect = decode_indirect(&mut r)?;
    let n = r.varint() as usize;
    let mut doc_defs = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        doc_defs.push(r.varint() as u32);
        if r.overrun {
            return None;
        }
    }
    let docs = FileDocs {
        defs: doc_defs,
        terms: r.str().to_vec(),
        path: r.str().to_vec(),
        bytes: r.str().to_vec(),
    };
    if r.overrun || !r.at_end() {
        return None;
    }
    Some(FileResult {
        record,
        macro_only,
        opaque: Vec::new(),
        semicolons: Vec::new(),
        functions: Vec::new(),
        ctags_bytes,
        defs,
        names: FileNames {
            text,
            groups,
            blocks,
        },
        indirect,
        docs,
        deps: None,
        digest: None,
    })
}

fn put_path(out: &mut Vec<u8>, p: &knav_c::indirect::TypePath) {
    put_str(out, p.tag.as_bytes());
    put_varint(out, p.chain.len() as u64);
    for m in &p.chain {
        put_str(out, m.as_bytes());
    }
}

fn encode_indirect(f: &knav_c::indirect::Facts, out: &mut Vec<u8>) {
    put_varint(out, f.members.len() as u64);
    for m in &f.members {
        put_str(out, m.owner.as_bytes());
        put_str(out, m.name.as_bytes());
        put_opt_str(out, m.tag.as_deref());
        out.push(m.fnptr as u8);
    }
    put_varint(out, f.registrations.len() as u64);
    for g in &f.registrations {
        put_path(out, &g.target);
        put_str(out, g.field.as_bytes());
        put_str(out, g.func.as_bytes());
        put_varint(out, g.line as u64);
    }
    put_varint(out, f.dispatches.len() as u64);
    for d in &f.dispatches {
        out.push(d.target.is_some() as u8);
        if let Some(t) = &d.target {
            put_path(out, t);
        }
        put_str(out, d.field.as_bytes());
        put_varint(out, d.line as u64);
    }
    put_varint(out, f.listed.len() as u64);
    for (name, line) in &f.listed {
        put_str(out, name.as_bytes());
        put_varint(out, *line as u64);
    }
}

fn decode_indirect(r: &mut Reader<'_>) -> Option<knav_c::indirect::Facts> {
    use knav_c::indirect::{Dispatch, Facts, Member, Registration, TypePath};
    fn string(r: &mut Reader<'_>) -> String {
        String::from_utf8_lossy(r.str()).into_owned()
    }
    fn path(r: &mut Reader<'_>) -> TypePath {
        let tag = string(r);
        let n = r.varint() as usize;
        let mut chain = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            chain.push(string(r));
            if r.overrun {
                break;
            }
        }
        TypePath { tag, chain }
    }
    let mut f = Facts::default();
    for _ in 0..r.varint() {
        f.members.push(Member {
            owner: string(r),
            name: string(r),
            tag: r.opt_str().map(str::to_string),
            fnptr: r.u8() != 0,
        });
        if r.overrun {
            return None;
        }
    }
    for _ in 0..r.varint() {
        f.registrations.push(Registration {
            target: path(r),
            field: string(r),
            func: string(r),
            line: r.varint() as u32,
        });
        if r.overrun {
            return None;
        }
    }
    for _ in 0..r.varint() {
        let target = (r.u8() != 0).then(|| path(r));
        f.dispatches.push(Dispatch {
            target,
            field: string(r),
            line: r.varint() as u32,
        });
        if r.overrun {
            return None;
        }
    }
    for _ in 0..r.varint() {
        f.listed.push((string(r), r.varint() as u32));
        if r.overrun {
            return None;
        }
    }
    Some(f)
}

/// The fact store as a segment build uses it: the store, the build's salt and its definer
/// table's hashes.
pub(crate) struct Kept<'a> {
    pub store: &'a super::factstore::FactStore,
    pub salt: super::codec::Digest,
    pub table: TableHashes,
}

impl Kept<'_> {
    /// The key of the facts of the file `record` describes, whose bytes have digest `content`
    /// (never the record's [`super::codec::hash64`], which others can forge), under the build's salt and
    /// the file's path.
    fn key(&self, record: &FileRecord, content: super::codec::Digest) -> super::factstore::Key {
        super::factstore::Key {
            content,
            len: record.size,
            salt: super::codec::digest_parts(&[&self.salt, record.path.as_bytes()]),
            kind: super::part::Kind::Segment,
        }
    }

    /// The digest of `src`, the bytes of the file at `path`, recorded in the segment's proof
    /// ([`super::factstore::FactStore::saw`]): every file a build reads, binary ones too.
    pub fn saw(&self, path: &str, src: &[u8]) -> super::codec::Digest {
        let d = super::codec::digest(src);
        self.store.saw(path, src.len() as u64, d);
        d
    }

    /// The kept facts of the file `record` describes (its bytes' digest `content`), when they
    /// were made under what the build's definer table says now.
    pub fn lookup(&self, record: &FileRecord, content: super::codec::Digest) -> Option<FileResult> {
        self.store.find(&self.key(record, content), |bytes| {
            decode(bytes, &self.table)
        })
    }

    /// Keeps the facts of `r`, made now, when they are the file's own: ctags ran and
    /// answered (a timeout or a failure is not kept).
    pub fn keep(&self, r: &mut FileResult, src: &[u8]) {
        if r.record.status != super::format::FileStatus::Indexed {
            return;
        }
        let Some(mut deps) = r.deps.take() else {
            return;
        };
        let bytes = encode(r, &mut deps, &self.table);
        let content = r.digest.unwrap_or_else(|| super::codec::digest(src));
        self.store.put(&self.key(&r.record, content), &bytes);
    }
}

/// The salt of a segment build's facts: the analyzer's version and everything of the build
/// that changes a file's facts (ctags and its options, whether ctags reads shortened texts).
pub(crate) fn salt(
    ctags: Option<&knav_ctags::Ctags>,
    args: &[String],
    shorten: bool,
) -> super::codec::Digest {
    let mut s = format!(
        "knav {} facts {FACTS_VERSION} format {}\n",
        env!("CARGO_PKG_VERSION"),
        super::format::VERSION
    );
    match ctags {
        Some(c) => {
            s.push_str(&format!("ctags {} {}", c.version, c.program.display()));
            if let Some(m) = program_file(&c.program).and_then(|p| std::fs::metadata(p).ok()) {
                use std::os::unix::fs::MetadataExt;
                s.push_str(&format!(" {} {}", m.len(), m.mtime()));
            }
        }
        None => s.push_str("no ctags"),
    }
    for a in args {
        s.push('\n');
        s.push_str(a);
    }
    s.push_str(if shorten { "\nshortened" } else { "\nwhole" });
    // A digest: a tree's ctags options are in it, and must not pass for another's.
    super::codec::digest(s.as_bytes())
}

/// The file `program` runs: itself when it names a path, else the first on `PATH`.
fn program_file(program: &std::path::Path) -> Option<std::path::PathBuf> {
    if program.components().count() > 1 {
        return Some(program.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}
