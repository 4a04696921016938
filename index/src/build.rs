//! Building one segment: scan and ctags in parallel workers, postings accumulated in file order.
//!
//! The files are cut into chunks of consecutive files by bytes (about 8 MiB each). Each worker
//! takes the next chunk, reads and scans its files, and gives those with code beyond `#define`s
//! to one `ctags -L -` run (a chunk that times out is retried file by file with an interactive
//! ctags, each file with its own timeout). Results go to the writer (the calling thread), which
//! takes them in file-id order, writes definition and file records, and feeds the postings
//! accumulator. Nothing waits for the whole tree.

use crate::tree::beneath::{Root, Source, Unread};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::Duration;

use knav_ctags::{Ctags, FileTags, Kind, Worker};

use super::accum::Accumulator;
use super::code::extract::{file_docs, DocState, FileDocs};
use super::code::write::{write_code_index, Spool};
use super::codec::hash64;
use super::ctagstext::{ctags_text, CtagsTexts};
use super::defined::{describe, write_file_parts, write_name_parts, DefinedWriter};
use super::error::IndexError;
use super::factstore::FactStore;
use super::filefacts::{Deps, FileNames, FileResult, Kept, NameGroup};
use super::format::{header, DefRecord, FileRecord, FileStatus, HEADER_LEN, VERSION};
use super::format::{shard_of, NAME_SHARDS};
use super::scratch::Scratch;
use super::segment::{segment_files, SegmentMeta};
use crate::progress::Progress;
use crate::rank::PathRank;
use crate::tree::settings::{Ignore, Settings};
use crate::tree::walk::SourceFile;
use knav_c::definers::{Definers, Learned};
use knav_c::scan::{scan, FileScan};

/// Settings of a build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Worker threads (each with a ctags process).
    pub workers: usize,
    /// Per-file ctags timeout.
    pub ctags_timeout: Duration,
    /// Extra ctags options (the kernel set, `.knav.toml` additions).
    pub ctags_args: Vec<String>,
    /// Bytes of postings kept in memory before a run is spilled.
    pub mem_budget: usize,
    /// Paths the walk leaves out (`.knav.toml`'s `index.ignore`).
    pub ignore: Ignore,
    /// Every header of the tree, whose `#define`s say which macros define names
    /// ([`knav_c::definers`]); `None`: the headers among the inputs (a full build).
    pub headers: Option<Arc<Vec<String>>>,
    /// The [`DEFINES_FILE`] of the base segment: what the headers that are not inputs define.
    pub saved_defines: Option<PathBuf>,
    /// Where files' facts are kept by content ([`super::factstore`]); `None`: every file is
    /// analyzed.
    pub facts: Option<Arc<FactStore>>,
    /// Where the tree's builds keep facts (`.knav.toml`'s `[cache]`, `KNAV_CACHE_DIR`): the
    /// store an update opens into `facts`.
    pub cache: crate::tree::settings::Cache,
}

impl BuildOptions {
    /// The defaults with the tree's `.knav.toml` applied.
    pub fn for_root(root: &Path) -> Result<BuildOptions, String> {
        Ok(BuildOptions::with_settings(&Settings::load(root)?))
    }

    /// The defaults with `settings` applied.
    pub fn with_settings(settings: &Settings) -> BuildOptions {
        let mut opts = BuildOptions::default();
        opts.ctags_args
            .extend(settings.ctags_options.iter().cloned());
        opts.ignore = settings.ignore.clone();
        opts.cache = settings.cache.clone();
        opts
    }
}

impl Default for BuildOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mem_mb = std::env::var("KNAV_MEM_BUDGET_MB")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(96);
        BuildOptions {
            // One more worker than cores: a worker waiting on its ctags process leaves its core
            // to the others.
            workers: cores + 1,
            ctags_timeout: Duration::from_secs(
                std::env::var("KNAV_CTAGS_TIMEOUT")
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                    .filter(|t| *t > 0)
                    .unwrap_or(60),
            ),
            ctags_args: knav_ctags::kernel::options(),
            mem_budget: mem_mb << 20,
            ignore: Ignore::default(),
            headers: None,
            saved_defines: None,
            facts: None,
            cache: crate::tree::settings::Cache::default(),
        }
    }
}

/// A file to put in a segment.
#[derive(Clone, Debug)]
pub struct Input {
    /// Path and stat.
    pub file: SourceFile,
    /// Over the size cap: recorded, not read.
    pub too_big: bool,
}

/// One file's names and definitions on their way to the shard accumulators.
struct Batch {
    file_id: u32,
    defs: Vec<DefRecord>,
    /// Where each of `defs` was written in `defs.dat`.
    def_offsets: Vec<u64>,
    names: FileNames,
}

/// A file read and scanned as far as ctags needs (its spans ctags need not read, whether it has
/// code): its result so far, the scan [`scan_finish`] reads for the rest, and its bytes.
/// A file from the fact store is whole already, and one not read has no source.
fn scan_start(
    root: Option<&Root>,
    input: &Input,
    shorten: bool,
    kept: Option<&Kept<'_>>,
) -> (FileResult, Option<FileScan>, Option<Source>) {
    let f = &input.file;
    let mut record = FileRecord {
        path: f.path.clone(),
        size: f.size,
        mtime_ns: f.mtime_ns,
        ..Default::default()
    };
    let mut r = FileResult {
        record: FileRecord::default(),
        macro_only: false,
        opaque: Vec::new(),
        semicolons: Vec::new(),
        functions: Vec::new(),
        ctags_bytes: 0,
        defs: Vec::new(),
        names: FileNames::default(),
        indirect: Default::default(),
        docs: FileDocs::default(),
        deps: Some(Deps::default()),
        digest: None,
    };
    let Some((src, digest)) = read_to_scan(root, input, &mut record, kept) else {
        r.record = record;
        return (r, None, None);
    };
    r.digest = digest;
    if let Some(mut hit) = kept.zip(digest).and_then(|(k, d)| k.lookup(&record, d)) {
        hit.record.path = record.path;
        hit.record.size = record.size;
        hit.record.mtime_ns = record.mtime_ns;
        return (hit, None, Some(src));
    }
    let mut scanned = scan(&src);
    // ctags's C parser has nothing to say about assembly; its symbols come from its macros.
    r.macro_only = !scanned.has_code || crate::tree::walk::is_asm_name(&f.path);
    let opaque = std::mem::take(&mut scanned.opaque);
    if shorten && !r.macro_only {
        r.opaque = opaque;
    }
    if !r.macro_only {
        r.semicolons = std::mem::take(&mut scanned.ctags_semicolons);
    }
    record.lines = scanned.lines;
    record.line_marks = std::mem::take(&mut scanned.line_marks);
    r.record = record;
    (r, Some(scanned), Some(src))
}

/// The rest of the scan of a file [`scan_start`] began: calls through pointers, the names
/// kernel macros make, the names with their postings, the guards. It needs nothing of ctags,
/// and runs while ctags reads the chunk.
fn scan_finish(r: &mut FileResult, scanned: FileScan, src: &[u8], learned: &Definers) {
    // What the facts read of the definer table: the macros invoked at file scope (below) and
    // those a variable is declared with.
    let deps = std::cell::RefCell::new(Deps::default());
    for &i in &scanned.file_scope_calls {
        if let Some(o) = scanned.occurrences.get(i as usize) {
            let start = o.start as usize;
            if let Some(name) = src.get(start..start + o.len as usize) {
                deps.borrow_mut().add(name);
            }
        }
    }
    // The file's own function-like `#define`s, read once for the pointer pass and the names
    // its macros make.
    let own_defines = knav_c::definers::of_file(src, &scanned);
    r.indirect = if crate::tree::walk::is_asm_name(&r.record.path) {
        Default::default()
    } else {
        // Indirect-call wrappers and macros that call through members: the tree's, learned
        // from its headers, and the file's own (net/core/fib_rules.c's `#define
        // INDIRECT_CALL_MT(f, f2, f1, ...)`).
        let own = own_macros(&own_defines, learned);
        let wrappers = |m: &[u8]| {
            own.as_ref()
                .and_then(|d| d.wrapper(m))
                .or_else(|| learned.wrapper(m))
        };
        // A macro the file defines itself is the file's alone, whatever the headers say.
        let path = r.record.path.as_str();
        let own_names: std::collections::HashSet<&[u8]> = (scanned.macros.iter())
            .filter(|m| m.signature.is_some())
            .filter_map(|m| src.get(m.start as usize..m.start as usize + m.len as usize))
            .collect();
        let member_calls = |m: &[u8]| match &own {
            Some(d) if own_names.contains(m) => d.member_calls(m, path),
            _ if own_names.contains(m) => Vec::new(),
            _ => learned.member_calls(m, path),
        };
        let tag = |m: &[u8]| {
            deps.borrow_mut().add_tag(m);
            learned.struct_tag(m)
        };
        let macros = knav_c::indirect::Macros {
            tag: &tag,
            wrapper: &wrappers,
            member_calls: &member_calls,
        };
        knav_c::indirect::facts_of(src, macros)
    };
    // `#define`s are not stored as definition records: their `MacroDef` postings are the
    // definitions (a register header has hundreds of thousands of them). Names that kernel
    // macros make are records, marked with their family.
    let expansion = knav_c::macrodefs::expand_file(src, &scanned, Some(learned), own_defines);
    r.defs = expansion
        .made
        .into_iter()
        .map(|m| DefRecord {
            file: 0,
            name: m.name,
            line: m.line,
            end_line: m.end_line,
            kind: m.kind,
            file_local: false,
            typeref: None,
            scope: None,
            signature: None,
            via: Some(m.family),
        })
        .collect();
    r.functions = file_scope_functions(&scanned, src);
    let FileScan {
        mut occurrences,
        guards,
        ..
    } = scanned;
    r.record.guards = guards.transitions;
    r.record.warnings = guards.warnings;
    r.record.warnings.extend(expansion.warnings);
    let extra = add_exports(&mut occurrences, src.len(), expansion.exports);
    r.names = group_by_name(&occurrences, src, &extra);
    r.deps = Some(deps.into_inner());
}

/// The file-scope functions the scanner found (`TYPE name(…) {…}`), as definitions to add
/// where ctags reports none of their name; none in a branch the compiler never takes
/// (`#if 0`), which ctags skips, nor in assembly.
fn file_scope_functions(scanned: &FileScan, src: &[u8]) -> Vec<DefRecord> {
    let never = |line: u32| {
        scanned
            .guards
            .at(line)
            .iter()
            .any(|c| c == "0" || c == "!1")
    };
    scanned
        .functions
        .iter()
        .filter(|f| !never(f.line))
        .filter_map(|f| {
            let name = src.get(f.start as usize..f.start as usize + f.len as usize)?;
            let name = std::str::from_utf8(name).ok()?;
            // A name a kernel macro family owns is an invocation, not a function.
            (knav_ctags::macros::MacroTable::kernel_family(name.as_bytes()).is_none()).then(|| {
                DefRecord {
                    file: 0,
                    name: name.to_string(),
                    line: f.line,
                    end_line: Some(f.end_line),
                    kind: Kind::Function,
                    file_local: f.file_local,
                    typeref: None,
                    scope: None,
                    signature: None,
                    via: None,
                }
            })
        })
        .collect()
}

/// The indirect-call wrappers and the macros calling through members that the file's own
/// function-like `#define`s (`own`, [`knav_c::definers::of_file`]) make (a wrapper handing on to its own or to the tree's, `learned`),
/// if any.
fn own_macros(own: &[(String, Learned)], learned: &Definers) -> Option<Definers> {
    if own.is_empty() {
        return None;
    }
    let d = Definers::resolve_beside(own.to_vec(), Some(learned));
    let any = d.wrappers().next().is_some() || d.has_member_calls();
    any.then_some(d)
}

/// The bytes of `input` to scan, its size and hash recorded, and their digest when `kept`
/// (which records it: [`Kept::saw`]); `None` when there is nothing to scan (too big,
/// unreadable, binary), with the reason in `record`.
fn read_to_scan(
    root: Option<&Root>,
    input: &Input,
    record: &mut FileRecord,
    kept: Option<&Kept<'_>>,
) -> Option<(Source, Option<super::codec::Digest>)> {
    if input.too_big {
        record.status = FileStatus::TooBig;
        record.note = Some(format!("{} bytes: over the size cap", input.file.size));
        return None;
    }
    let read = root.map_or(
        Err(Unread::Changed("in a root that cannot be opened")),
        |r| r.read(&input.file.path),
    );
    let src = match read {
        Ok(s) => s,
        Err(e) => {
            record.status = FileStatus::Unreadable;
            record.note = Some(e.to_string());
            return None;
        }
    };
    record.size = src.len() as u64;
    // Within this index only: a copy of the tree is proven by the digest (crate::seed).
    record.hash = hash64(&src);
    let digest = kept.map(|k| k.saw(&record.path, &src));
    if memchr::memchr(0, &src[..src.len().min(8192)]).is_some() {
        record.status = FileStatus::Binary;
        record.note = Some("binary file (contains NUL bytes)".into());
        return None;
    }
    Some((src, digest))
}

/// A name a macro exports without spelling it (`trace_kmalloc` of
/// `EXPORT_TRACEPOINT_SYMBOL(kmalloc)`) gets an export occurrence on the macro's line, in line
/// order; its text goes in the returned bytes, addressed past the end of the file's `src_len`.
fn add_exports(
    occurrences: &mut Vec<knav_c::scan::Occurrence>,
    src_len: usize,
    exports: Vec<(String, u32)>,
) -> Vec<u8> {
    let mut extra: Vec<u8> = Vec::new();
    for (name, line) in exports {
        let Ok(start) = u32::try_from(src_len + extra.len()) else {
            break;
        };
        extra.extend_from_slice(name.as_bytes());
        let at = occurrences.partition_point(|o| o.line <= line);
        occurrences.insert(
            at,
            knav_c::scan::Occurrence {
                start,
                len: name.len() as u16,
                line,
                col: 0,
                role: knav_c::scan::Role::Export,
            },
        );
    }
    extra
}

/// [`group_by_name`]'s working vectors, their memory kept from file to file.
#[derive(Default)]
struct Grouping {
    /// The name table.
    slots: Vec<u64>,
    /// Per group, its first occurrence.
    first: Vec<u32>,
    /// Per group, its occurrences; then where the next of them goes in `order` (once all are
    /// placed, where they end).
    counts: Vec<u32>,
    /// Per occurrence, its group.
    group_of: Vec<u32>,
    /// The occurrences, grouped.
    order: Vec<u32>,
}

impl Grouping {
    /// Empties the vectors, keeping room for at most [`knav_c::keep::KEEP`] entries of each
    /// for the next file.
    fn shrink(&mut self) {
        for v in [
            &mut self.first,
            &mut self.counts,
            &mut self.group_of,
            &mut self.order,
        ] {
            knav_c::keep::clear_kept(v);
        }
        knav_c::keep::clear_kept(&mut self.slots);
    }
}

/// Groups `occurrences` by name without sorting: number each distinct name, count, then place
/// (a counting sort, stable, so each name's occurrences stay in line order). An occurrence's
/// text is in `src`, or past its end in `extra` ([`add_exports`]).
fn group_by_name(occurrences: &[knav_c::scan::Occurrence], src: &[u8], extra: &[u8]) -> FileNames {
    let name_of = |o: &knav_c::scan::Occurrence| {
        let (start, len) = (o.start as usize, o.len as usize);
        match start.checked_sub(src.len()) {
            Some(k) => &extra[k..k + len],
            None => &src[start..start + len],
        }
    };
    thread_local! {
        static GROUPING: std::cell::Cell<Grouping> = const {
            std::cell::Cell::new(Grouping {
                slots: Vec::new(),
                first: Vec::new(),
                counts: Vec::new(),
                group_of: Vec::new(),
                order: Vec::new(),
            })
        };
    }
    let mut w = GROUPING.take();
    // An open-addressing table at most half full: a slot holds the high half of the name's
    // hash and its group + 1 (0: empty); a group's name is that of its first occurrence.
    let size = (occurrences.len() * 2).next_power_of_two().max(16);
    w.slots.resize(size, 0);
    let mask = size - 1;
    let mut text_len = 0;
    for (i, o) in occurrences.iter().enumerate() {
        let name = name_of(o);
        let h = super::accum::name_hash(name);
        let tag = h >> 32;
        let mut at = h as usize & mask;
        let g = loop {
            let slot = w.slots[at];
            if slot == 0 {
                w.first.push(i as u32);
                w.counts.push(0);
                w.slots[at] = tag << 32 | w.first.len() as u64;
                text_len += name.len();
                break w.first.len() - 1;
            }
            let g = (slot as u32 - 1) as usize;
            if slot >> 32 == tag && name_of(&occurrences[w.first[g] as usize]) == name {
                break g;
            }
            at = (at + 1) & mask;
        };
        w.counts[g] += 1;
        w.group_of.push(g as u32);
    }
    let mut out = FileNames {
        text: Vec::with_capacity(text_len),
        groups: Vec::with_capacity(w.first.len()),
        blocks: Vec::with_capacity(occurrences.len() * 3),
    };
    // Each group's count becomes where its occurrences start in `order`, then (once placed)
    // where they end.
    let mut total = 0u32;
    for c in w.counts.iter_mut() {
        (*c, total) = (total, total + *c);
    }
    w.order.resize(occurrences.len(), 0);
    let Grouping {
        counts: fill,
        group_of,
        order,
        first,
        ..
    } = &mut w;
    for (i, g) in group_of.iter().enumerate() {
        order[fill[*g as usize] as usize] = i as u32;
        fill[*g as usize] += 1;
    }
    let mut start = 0;
    for (&first, &end) in first.iter().zip(fill.iter()) {
        let name = name_of(&occurrences[first as usize]);
        let name_off = out.text.len() as u32;
        out.text.extend_from_slice(name);
        let block_off = out.blocks.len() as u32;
        let mut prev_line = 0u32;
        for &k in &order[start as usize..end as usize] {
            let o = &occurrences[k as usize];
            super::postings::put_occurrence(&mut out.blocks, o.line - prev_line, o.role);
            prev_line = o.line;
        }
        out.groups.push(NameGroup {
            name: (name_off, name.len() as u32),
            block: (block_off, out.blocks.len() as u32 - block_off),
            count: end - start,
            shard: shard_of(name) as u8,
        });
        start = end;
    }
    w.shrink();
    GROUPING.set(w);
    out
}

/// True when the file needs ctags: it was read and has code beyond preprocessor lines.
fn needs_ctags(r: &FileResult) -> bool {
    r.deps.is_some() && r.record.status == FileStatus::Indexed && !r.macro_only
}

/// Adds ctags's definitions (or why there are none) to a scanned file.
fn attach_tags(r: &mut FileResult, tags: Result<FileTags, String>) {
    let mut functions = std::mem::take(&mut r.functions);
    match tags {
        Ok(tags) => {
            r.defs.reserve(tags.tags.len());
            // A function ctags names (even as a macro invocation it drops) is its to report.
            if !functions.is_empty() {
                let named: std::collections::HashSet<&str> =
                    tags.tags.iter().map(|t| t.name.as_str()).collect();
                functions.retain(|f| !named.contains(f.name.as_str()));
            }
            for t in tags.tags {
                if t.kind == Kind::Macro || t.is_macro_pseudo_definition() {
                    // `SYSCALL_DEFINE3(read, …) { … }` looks to ctags like a function named
                    // SYSCALL_DEFINE3: its body's lines go to the first name the invocation
                    // made (`sys_read`), so calls in it have a caller. ctags follows one branch
                    // of an `#if` in the body; the macro reader's brace count is the fallback.
                    if let Some(end) = t.end.filter(|e| *e >= t.line) {
                        if let Some(d) = r.defs.iter_mut().find(|d| {
                            d.line == t.line && d.via.is_some() && d.kind == Kind::Function
                        }) {
                            d.end_line = Some(end);
                        }
                    }
                    continue;
                }
                // ctags's C parser knows `bool` as a keyword: `typedef _Bool bool;`
                // (include/linux/types.h) comes out as a typedef named `_Bool` of type `bool`.
                let (name, typeref) = match (t.kind, t.name.as_str(), t.typeref.as_deref()) {
                    (Kind::Typedef, "_Bool", Some("bool")) => {
                        ("bool".to_string(), Some("_Bool".to_string()))
                    }
                    _ => (t.name, t.typeref),
                };
                r.defs.push(DefRecord {
                    file: 0,
                    name,
                    line: t.line,
                    // A one-line function ends on its first line: its calls have a caller.
                    end_line: t.end.filter(|e| *e >= t.line),
                    kind: t.kind,
                    file_local: t.file_local,
                    typeref,
                    scope: t.scope,
                    signature: t.signature,
                    via: None,
                });
            }
            add_functions(&mut r.defs, functions);
            mark_locals(&mut r.defs);
            if let Some(e) = tags.errors.first() {
                r.record.status = FileStatus::NoDefinitions;
                r.record.note = Some(format!("ctags: {e}"));
            }
        }
        Err(e) => {
            r.record.status = FileStatus::NoDefinitions;
            r.record.note = Some(e);
            add_functions(&mut r.defs, functions);
        }
    }
    r.defs
        .sort_by(|a, b| (a.line, &a.name).cmp(&(b.line, &b.name)));
}

/// Adds the scanner's `functions` that ctags missed to `defs`, but where a macro made the name
/// on the same line.
fn add_functions(defs: &mut Vec<DefRecord>, mut functions: Vec<DefRecord>) {
    functions.retain(|f| !defs.iter().any(|d| d.name == f.name && d.line == f.line));
    defs.append(&mut functions);
}

/// A variable a macro made inside a function's body (`DEFINE_WAIT(wait);`) is a local of that
/// function, not a global.
fn mark_locals(defs: &mut [DefRecord]) {
    let is_macro_variable = |d: &DefRecord| d.via.is_some() && d.kind == Kind::Variable;
    if !defs.iter().any(is_macro_variable) {
        return;
    }
    let functions: Vec<(u32, u32, usize)> = defs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind == Kind::Function && d.via.is_none())
        .filter_map(|(k, d)| Some((d.line, d.end_line?, k)))
        .collect();
    for i in 0..defs.len() {
        if !is_macro_variable(&defs[i]) {
            continue;
        }
        let line = defs[i].line;
        if let Some(&(_, _, f)) = functions
            .iter()
            .find(|(start, end, _)| *start < line && line <= *end)
        {
            defs[i].scope = Some(defs[f].name.clone());
            defs[i].kind = Kind::Local;
        }
    }
}

/// A segment's record of the headers' `#define`s that define names, for the next delta.
pub const DEFINES_FILE: &str = "defines.txt";
/// Beside it, the table resolved from them, which a delta uses as it is.
pub const DEFINERS_FILE: &str = "definers.txt";

/// The report's name for definitions made by macros learned from their `#define`s.
pub const LEARNED_FAMILY: &str = "(learned from #defines)";

/// The family a definition made by macro `via` is counted under: its family in the kernel
/// macro table, or [`LEARNED_FAMILY`] for a macro learned from its `#define`.
pub fn counted_family(via: &str) -> &str {
    let table = knav_ctags::macros::MacroTable::kernel();
    if table.families().iter().any(|f| f.name == via) {
        via
    } else {
        LEARNED_FAMILY
    }
}

/// Source bytes per ctags run: big enough that process start-up is noise, small enough that
/// the workers stay balanced and the results waiting to be written stay small.
const CHUNK_BYTES: u64 = 8 << 20;
/// Files per ctags run at most.
const CHUNK_FILES: usize = 2000;

/// Splits `inputs` into runs of consecutive files by bytes.
fn chunks(inputs: &[Input]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, input) in inputs.iter().enumerate() {
        if !input.too_big {
            bytes += input.file.size;
        }
        if bytes >= CHUNK_BYTES || i + 1 - start >= CHUNK_FILES {
            out.push(start..i + 1);
            start = i + 1;
            bytes = 0;
        }
    }
    if start < inputs.len() {
        out.push(start..inputs.len());
    }
    out
}

/// What a build worker keeps from one chunk to the next.
#[derive(Default)]
struct WorkerState {
    /// The interactive ctags that retries files one by one, started on first need.
    fallback: Option<Worker>,
    /// Words already turned into search terms, and the memory for a file's documents.
    docs: DocState,
}

/// Scans a chunk of files, gives those with code to one ctags run (a chunk that times out is
/// retried file by file, each with its own timeout), then makes each file's search documents
/// from its bytes and definitions.
#[allow(clippy::too_many_arguments)]
fn process_chunk(
    root: &Path,
    inputs: &[Input],
    learned: &Definers,
    ctags: Option<&Ctags>,
    opts: &BuildOptions,
    scratch: Option<&Path>,
    chunk: usize,
    state: &mut WorkerState,
    kept: Option<&Kept<'_>>,
) -> Vec<FileResult> {
    // Scratch space is only made when there is a ctags to read it.
    let shorten = scratch.is_some();
    let beneath = Root::open(root).ok();
    let mut results = Vec::with_capacity(inputs.len());
    let mut scans = Vec::with_capacity(inputs.len());
    let mut sources = Vec::with_capacity(inputs.len());
    for input in inputs {
        let (r, scanned, src) = scan_start(beneath.as_ref(), input, shorten, kept);
        results.push(r);
        scans.push(scanned);
        sources.push(src);
    }
    let wanted: Vec<usize> = (0..results.len())
        .filter(|&i| needs_ctags(&results[i]))
        .collect();
    let opaque: Vec<Cuts> = wanted
        .iter()
        .map(|&i| {
            let r = &mut results[i];
            (
                std::mem::take(&mut r.opaque),
                std::mem::take(&mut r.semicolons),
            )
        })
        .collect();
    // ctags reads the chunk while this thread finishes the scans: a chunk of one large file
    // would otherwise leave a core idle for as long as each takes.
    let fallback = &mut state.fallback;
    let tagged = std::thread::scope(|s| {
        let sources = &sources;
        // No thread for a chunk ctags has nothing to read in (its facts from the store).
        let tagging = (!wanted.is_empty()).then(|| {
            s.spawn(move || {
                tag_chunk(
                    inputs, wanted, opaque, sources, ctags, opts, scratch, chunk, fallback,
                )
            })
        });
        for ((r, scanned), src) in results.iter_mut().zip(&mut scans).zip(sources) {
            if let (Some(scanned), Some(src)) = (scanned.take(), src) {
                scan_finish(r, scanned, src, learned);
            }
        }
        tagging.map_or(Ok(Vec::new()), |t| t.join())
    });
    match tagged {
        Ok(tagged) => {
            for (i, ctags_bytes, tags) in tagged {
                results[i].ctags_bytes = ctags_bytes;
                attach_tags(&mut results[i], tags);
            }
        }
        Err(_) => {
            for r in results.iter_mut().filter(|r| needs_ctags(r)) {
                attach_tags(r, Err("the ctags thread panicked".into()));
            }
        }
    }
    for (r, src) in results.iter_mut().zip(sources) {
        // Facts from the store have their documents.
        if let (Some(src), Some(_)) = (src, &r.deps) {
            r.docs = file_docs(&src, &r.record.path, &r.defs, &mut state.docs);
            if let Some(kept) = kept {
                kept.keep(r, &src);
            }
        }
    }
    results
}

/// What the text ctags reads leaves out of a file and adds to it: its opaque spans and its
/// `;`s ([`crate::ctagstext::ctags_text`]).
type Cuts = (Vec<(u32, u32)>, Vec<u32>);

/// ctags's definitions of the files `wanted` of a chunk (indexes into `inputs`, each with the
/// spans ctags need not read and the `;`s it needs), from one ctags run: per file, its index,
/// the bytes ctags read and its tags or why there are none.
#[allow(clippy::too_many_arguments)]
fn tag_chunk(
    inputs: &[Input],
    wanted: Vec<usize>,
    mut opaque: Vec<Cuts>,
    sources: &[Option<Source>],
    ctags: Option<&Ctags>,
    opts: &BuildOptions,
    scratch: Option<&Path>,
    chunk: usize,
    fallback: &mut Option<Worker>,
) -> Vec<(usize, u64, Result<FileTags, String>)> {
    let mut out = Vec::with_capacity(wanted.len());
    let Some(ctags) = ctags else {
        for i in wanted {
            out.push((i, 0, Err("ctags not available".into())));
        }
        return out;
    };
    // `ctags -L -` reads one name a line: a file whose name has a newline is asked for alone.
    let newline = |i: usize| crate::tree::pathname::decode(&inputs[i].file.path).contains(&b'\n');
    // The `;`s of every file, for one retried alone.
    let semicolons: std::collections::HashMap<usize, Vec<u32>> = wanted
        .iter()
        .zip(&opaque)
        .filter(|(_, (_, s))| !s.is_empty())
        .map(|(&i, (_, s))| (i, s.clone()))
        .collect();
    let alone: Vec<usize> = wanted.iter().copied().filter(|&i| newline(i)).collect();
    let (wanted, opaque): (Vec<usize>, Vec<Cuts>) = wanted
        .into_iter()
        .zip(opaque.drain(..))
        .filter(|&(i, _)| !newline(i))
        .unzip();
    // ctags is given the files' real names: its anonymous types are named after them.
    let paths: Vec<std::borrow::Cow<'_, Path>> = wanted
        .iter()
        .map(|i| crate::tree::pathname::to_path(&inputs[*i].file.path))
        .collect();
    let paths: Vec<&Path> = paths.iter().map(|p| &**p).collect();
    let bytes: u64 = wanted.iter().map(|i| inputs[*i].file.size).sum();
    let timeout = opts.ctags_timeout + Duration::from_secs(bytes >> 20);
    // ctags reads the bytes knav read, never the tree: texts in the scratch directory, else
    // each file sent to a worker (a file swapped for a link since must not give its names).
    let shortened = wanted.iter().zip(opaque).map(|(&i, (opaque, semicolons))| {
        (
            sources[i].as_deref().unwrap_or_default(),
            opaque,
            semicolons,
        )
    });
    let texts = scratch.and_then(|s| CtagsTexts::write(s, chunk, &paths, shortened));
    let retried = match &texts {
        Some(texts) => {
            // Beside the texts, on the same RAM file system: ctags's own tag file (see
            // knav_ctags::batch).
            let tag_file = texts.dir.with_extension("tags");
            let batch = knav_ctags::tags_of_chunk(
                ctags,
                &texts.dir,
                &opts.ctags_args,
                &paths,
                timeout,
                Some(&tag_file),
            );
            match batch {
                Ok(tags) => {
                    for ((&i, mut t), text) in wanted.iter().zip(tags).zip(&texts.texts) {
                        for tag in &mut t.tags {
                            tag.line = text.lines.file_line(tag.line);
                            tag.end = tag.end.map(|e| text.lines.file_line(e));
                        }
                        out.push((i, text.len, Ok(t)));
                    }
                    Vec::new()
                }
                Err(_) => wanted,
            }
        }
        None => wanted,
    };
    drop(texts);
    for i in retried.into_iter().chain(alone) {
        let worker = fallback
            // In `/`: it reads no file, and the tree's `./.ctags.d` must not reach it.
            .get_or_insert_with(|| {
                Worker::new(ctags, Path::new("/"), &opts.ctags_args, opts.ctags_timeout)
            });
        let path = crate::tree::pathname::to_path(&inputs[i].file.path);
        let t = match sources[i].as_deref() {
            // The `;`s the batch run's texts have, so that its tags are the same.
            Some(src) if semicolons.contains_key(&i) => {
                let mut text = Vec::with_capacity(src.len() + 64);
                ctags_text(src, &[], &semicolons[&i], &mut text);
                worker.tags_of_text(&path, &text)
            }
            Some(text) => worker.tags_of_text(&path, text),
            None => Err(knav_ctags::WorkerError::Read(std::io::Error::other(
                "not read by knav",
            ))),
        };
        out.push((i, inputs[i].file.size, t.map_err(|e| e.to_string())));
    }
    out
}

/// Caps glibc's malloc arenas. Buffers made on worker threads are freed on accumulator
/// threads; with an arena per thread, freed memory piles up where no one allocates again,
/// and the peak RSS of a kernel build grows by about a tenth. Four arenas for the build's five
/// busy threads: two made waiting for an arena's lock a visible share of the CPU, four a
/// negligible one for a few MB of peak (BENCHMARKS.md, "Design measurements").
pub(crate) fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; it is safe to call at any time.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 4);
    }
}

/// Gives the heap's free pages back to the system: what the scan's buffers (the files read,
/// their names and search documents) leave free stays counted in the RSS otherwise, under the
/// merge that follows.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; it is safe to call any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Writes a whole file and returns its length.
fn write_file(path: &Path, kind: &[u8; 4], body: &[u8]) -> std::io::Result<u64> {
    let mut w = BufWriter::new(File::create(path)?);
    w.write_all(&header(kind))?;
    w.write_all(body)?;
    w.flush()?;
    Ok((HEADER_LEN + body.len()) as u64)
}

/// Builds a segment of `inputs` (sorted by path) in `out_dir`, which must be empty.
///
/// The steps: learn what macros define, scan and ctags the files while the writer stores
/// their records and feeds the name accumulators, merge each shard's names into its FST, then
/// checksum every file into `meta.json`.
pub fn build_segment(
    root: &Path,
    inputs: &[Input],
    out_dir: &Path,
    ctags: Option<&Ctags>,
    opts: &BuildOptions,
    progress: &mut Progress,
) -> Result<SegmentMeta, IndexError> {
    std::fs::create_dir_all(out_dir)
        .map_err(IndexError::io("cannot create segment in", out_dir))?;
    let started = std::time::Instant::now();
    limit_malloc_arenas();
    let _mapped = crate::alloc::LargeBlocksMapped::start();
    let learned = learn_definers(root, inputs, out_dir, opts)?;
    let learned_at = started.elapsed();
    let mut meta = SegmentMeta {
        version: VERSION,
        files: inputs.len() as u32,
        ..Default::default()
    };
    let scan = Scan {
        root,
        inputs,
        ctags,
        opts,
        learned: &learned,
    };
    let mut trace = super::Trace::new();
    let (accumulators, facts, indirect) = scan.run(out_dir, &mut meta, progress)?;
    release_free_memory();
    trace.mark("segment: scan+ctags");
    let scanned_at = started.elapsed();
    progress.phase("merge names");
    merge_names(out_dir, inputs, accumulators, &facts, &mut meta)?;
    drop(facts);
    trace.mark("segment: merge names");
    let names_at = started.elapsed();
    progress.phase("search tables");
    // The calls through pointers and the code documents read only what the scan spooled: they
    // are written beside the search parts (after the merge, whose peak memory they would add to),
    // each on a thread of its own: one after the other, they ended half a second after the
    // search parts, with a core idle.
    let (parts, pointers, code) = std::thread::scope(|s| {
        let pointers =
            s.spawn(move || timed(|| indirect.finish(&out_dir.join(super::indirect::FILE))));
        let code = s.spawn(move || timed(|| write_code_index(out_dir, inputs.len() as u32)));
        let parts = write_search_parts(out_dir, inputs);
        let parts_ms = started.elapsed() - names_at;
        let joined =
            |h: std::thread::ScopedJoinHandle<'_, std::io::Result<std::time::Duration>>,
             what: &str| {
                h.join()
                    .map_err(|_| IndexError::Build(format!("the {what} thread panicked")))
            };
        (
            parts.map(|()| parts_ms),
            joined(pointers, "calls through pointers'"),
            joined(code, "code documents'"),
        )
    });
    let parts_ms = parts?;
    let pointers_ms = pointers?.map_err(write_error(out_dir))?;
    let code_ms = code?.map_err(write_error(out_dir))?;
    trace.mark("segment: search parts, calls through pointers, code documents");
    let merged_at = started.elapsed();
    seal(out_dir, &mut meta)?;
    meta.phase_ms = vec![
        ("learn defines".into(), learned_at.as_millis() as u64),
        (
            "scan+ctags".into(),
            (scanned_at - learned_at).as_millis() as u64,
        ),
        ("merge".into(), (names_at - scanned_at).as_millis() as u64),
        // These three ran side by side: each is its own time, not a share of the total.
        ("search parts".into(), parts_ms.as_millis() as u64),
        (
            "calls through pointers".into(),
            pointers_ms.as_millis() as u64,
        ),
        ("code documents".into(), code_ms.as_millis() as u64),
        (
            "checksum".into(),
            (started.elapsed() - merged_at).as_millis() as u64,
        ),
    ];
    let json = serde_json::to_vec_pretty(&meta).map_err(std::io::Error::from);
    std::fs::write(
        out_dir.join("meta.json"),
        json.map_err(write_error(out_dir))?,
    )
    .map_err(write_error(out_dir))?;
    Ok(meta)
}

/// How long `step` took, or its error.
fn timed(step: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<std::time::Duration> {
    let at = std::time::Instant::now();
    step().map(|()| at.elapsed())
}

/// The error of a failed write into segment directory `out_dir`.
fn write_error(out_dir: &Path) -> impl FnOnce(std::io::Error) -> IndexError {
    IndexError::io("cannot write index in", out_dir)
}

/// What macros define, learned from every header before any invocation is read; a full build
/// saves it in `out_dir` for its deltas, a delta takes its base's.
fn learn_definers(
    root: &Path,
    inputs: &[Input],
    out_dir: &Path,
    opts: &BuildOptions,
) -> Result<Definers, IndexError> {
    // A delta's table is its base's: a delta that would change it is a full rebuild.
    let base_table = opts
        .saved_defines
        .as_deref()
        .and_then(|p| super::definers_read::load(&p.with_file_name(DEFINERS_FILE)));
    if let Some(table) = base_table {
        return Ok(table);
    }
    let headers: Vec<&str> = match &opts.headers {
        Some(h) => h.iter().map(String::as_str).collect(),
        None => inputs
            .iter()
            .filter(|i| !i.too_big && i.file.path.ends_with(".h"))
            .map(|i| i.file.path.as_str())
            .collect(),
    };
    let fresh: std::collections::HashSet<&str> =
        inputs.iter().map(|i| i.file.path.as_str()).collect();
    let (learned, kept) = super::definers_read::learn_headers(
        root,
        &headers,
        opts.saved_defines.as_deref(),
        &fresh,
        opts.workers,
    );
    let cannot_write = || IndexError::io("cannot write in", out_dir);
    super::definers_read::save(&out_dir.join(DEFINES_FILE), &kept).map_err(cannot_write())?;
    super::definers_read::save_resolved(&learned, &out_dir.join(DEFINERS_FILE))
        .map_err(cannot_write())?;
    Ok(learned)
}

/// The scan of a segment's files: what every worker shares.
struct Scan<'a> {
    root: &'a Path,
    inputs: &'a [Input],
    ctags: Option<&'a Ctags>,
    opts: &'a BuildOptions,
    learned: &'a Definers,
}

impl Scan<'_> {
    /// Scans every input on worker threads and writes their records in file-id order, feeding
    /// one accumulator thread per name shard; returns the accumulators, all names added.
    fn run(
        &self,
        out_dir: &Path,
        meta: &mut SegmentMeta,
        progress: &mut Progress,
    ) -> Result<(Vec<Accumulator>, DefFacts, super::indirect::IndirectWriter), IndexError> {
        let scratch = self.ctags.and_then(|_| Scratch::for_ctags());
        let scratch_dir = scratch.as_ref().map(|s| s.path());
        let kept = self.opts.facts.as_deref().map(|store| Kept {
            store: store.proving(out_dir),
            salt: super::filefacts::salt(self.ctags, &self.opts.ctags_args, scratch.is_some()),
            table: super::filefacts::TableHashes::of(self.learned),
        });
        let kept = kept.as_ref();
        let chunks = chunks(self.inputs);
        let workers = self.opts.workers.max(1).min(chunks.len().max(1));
        let mut records = RecordWriter::create(out_dir, self.inputs.len())?;
        let io = write_error(out_dir);
        let next = AtomicUsize::new(0);
        // Each worker's chunk and one more finished may wait for the writer.
        let window = Window::new(workers + 1);
        let accumulators = std::thread::scope(|s| {
            let (shard_tx, shard_threads): (Vec<_>, Vec<_>) = (0..NAME_SHARDS)
                .map(|k| {
                    // A chunk's batches go together: one message, one wake-up, a chunk
                    // (sending each file's cost a second of CPU in futex calls over the
                    // kernel). With one chunk in the channel, at most three chunks' names
                    // are alive: the slowest shard's, the one waiting, the writer's.
                    let (tx, rx) = mpsc::sync_channel::<Arc<Vec<Batch>>>(1);
                    let acc = Accumulator::new(
                        out_dir,
                        &format!("run-{k}"),
                        self.opts.mem_budget / NAME_SHARDS,
                    );
                    (tx, s.spawn(move || accumulate_shard(k, acc, rx)))
                })
                .unzip();
            let (tx, rx) = mpsc::sync_channel::<(usize, Vec<FileResult>)>(workers);
            for _ in 0..workers {
                let (tx, next, chunks, window) = (tx.clone(), &next, &chunks, &window);
                s.spawn(move || self.work(chunks, next, window, scratch_dir, kept, tx));
            }
            drop(tx);
            // Workers waiting for their turn stop when the writer does, even on an error or a
            // panic.
            let closes = Closes {
                window: &window,
                always: true,
            };
            let written =
                records.write_in_order(rx, self.inputs, &chunks, meta, progress, |c, batches| {
                    for tx in &shard_tx {
                        // A closed channel means the shard thread failed; its join says why.
                        let _ = tx.send(Arc::clone(&batches));
                    }
                    window.written(c);
                });
            drop(closes);
            let written = written?;
            if written != self.inputs.len() {
                return Err(IndexError::Build(format!(
                    "indexing stopped after {written} of {} files (a worker failed)",
                    self.inputs.len()
                )));
            }
            drop(shard_tx);
            shard_threads
                .into_iter()
                .map(|h| match h.join() {
                    Ok(r) => r.map_err(write_error(out_dir)),
                    Err(_) => Err(IndexError::Build(
                        "a name accumulator thread panicked".into(),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        let (facts, indirect) = records.finish(meta).map_err(io)?;
        Ok((accumulators, facts, indirect))
    }

    /// A worker: takes the next chunk until none is left, and sends its files' results
    /// together with its number.
    fn work(
        &self,
        chunks: &[std::ops::Range<usize>],
        next: &AtomicUsize,
        window: &Window,
        scratch: Option<&Path>,
        kept: Option<&Kept<'_>>,
        tx: mpsc::SyncSender<(usize, Vec<FileResult>)>,
    ) {
        let mut state = WorkerState::default();
        // A worker that panics never sends its chunk: the writer, and the workers waiting
        // for it, would wait for ever.
        let _closes = Closes {
            window,
            always: false,
        };
        loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            let Some(range) = chunks.get(c) else {
                return;
            };
            if !window.wait_for(c) {
                return;
            }
            let results = process_chunk(
                self.root,
                &self.inputs[range.clone()],
                self.learned,
                self.ctags,
                self.opts,
                scratch,
                c,
                &mut state,
                kept,
            );
            if tx.send((c, results)).is_err() {
                return;
            }
        }
    }
}

/// How far ahead of the writer the workers may scan. Results are written in file order, so
/// a chunk finished before the one being written waits in memory; without a bound, one slow
/// chunk (a large generated file, a ctags retried file by file) let the others pile up behind it.
struct Window {
    /// Chunks written so far, and whether the writer has stopped.
    state: Mutex<(usize, bool)>,
    moved: Condvar,
    /// Chunks, from the first unwritten one on, that may be scanned or wait to be written.
    ahead: usize,
}

impl Window {
    fn new(ahead: usize) -> Window {
        Window {
            state: Mutex::new((0, false)),
            moved: Condvar::new(),
            ahead,
        }
    }

    /// Waits until chunk `chunk` may be scanned; false when the writer has stopped.
    fn wait_for(&self, chunk: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while !state.1 && chunk >= state.0 + self.ahead {
            state = self.moved.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        !state.1
    }

    /// The writer has written chunk `chunk` (and every one before it).
    fn written(&self, chunk: usize) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0 = chunk + 1;
        self.moved.notify_all();
    }

    /// The writer has stopped: no worker waits any more.
    fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.moved.notify_all();
    }
}

/// Closes a [`Window`] when dropped: always, or only while its thread panics.
struct Closes<'a> {
    window: &'a Window,
    always: bool,
}

impl Drop for Closes<'_> {
    fn drop(&mut self) {
        if self.always || std::thread::panicking() {
            self.window.close();
        }
    }
}

/// One shard's accumulator thread: adds the definitions and postings of the names of shard
/// `k` from every batch.
fn accumulate_shard(
    k: usize,
    mut acc: Accumulator,
    rx: mpsc::Receiver<Arc<Vec<Batch>>>,
) -> std::io::Result<Accumulator> {
    for chunk in rx {
        for b in chunk.iter() {
            for (d, off) in b.defs.iter().zip(&b.def_offsets) {
                if shard_of(d.name.as_bytes()) == k {
                    acc.add_def(d.name.as_bytes(), *off);
                }
            }
            let names = &b.names;
            let blocks = names
                .groups
                .iter()
                .filter(|g| g.shard as usize == k)
                .map(|g| (g.name(&names.text), g.count, g.block(&names.blocks)));
            acc.add_blocks(b.file_id, blocks);
            acc.maybe_spill()?;
        }
    }
    Ok(acc)
}

/// The writer of a segment's `defs.dat`, `files.dat` and `files.idx`, which takes the files'
/// results in file-id order.
struct RecordWriter {
    out_dir: PathBuf,
    defs: BufWriter<File>,
    files: BufWriter<File>,
    defs_len: u64,
    files_len: u64,
    /// The offset of each file's record in `files.dat`, written at the end.
    files_idx: Vec<u8>,
    /// The kind and file of every definition written, for the merge.
    def_facts: DefFacts,
    /// Calls through function pointers, written sorted at the end.
    indirect: super::indirect::IndirectWriter,
    /// The families of the kernel macro table: definitions of other macros are counted together.
    table_families: std::collections::HashSet<&'static str>,
    /// The files' search documents, in file order.
    spool: Spool,
    buf: Vec<u8>,
}

impl RecordWriter {
    /// Creates `defs.dat` and `files.dat` in `out_dir` for `files` files.
    fn create(out_dir: &Path, files: usize) -> Result<RecordWriter, IndexError> {
        let create = |name: &str, what: &'static str| -> Result<BufWriter<File>, IndexError> {
            let mut w = BufWriter::with_capacity(
                1 << 20,
                File::create(out_dir.join(name)).map_err(IndexError::io(what, out_dir))?,
            );
            let kind = if name == "defs.dat" { b"DEFS" } else { b"FILE" };
            w.write_all(&header(kind)).map_err(write_error(out_dir))?;
            Ok(w)
        };
        Ok(RecordWriter {
            out_dir: out_dir.to_path_buf(),
            defs: create("defs.dat", "cannot create defs.dat in")?,
            files: create("files.dat", "cannot create files.dat in")?,
            defs_len: HEADER_LEN as u64,
            files_len: HEADER_LEN as u64,
            files_idx: Vec::with_capacity(files * 8),
            def_facts: DefFacts::default(),
            indirect: super::indirect::IndirectWriter::create(out_dir)
                .map_err(IndexError::io("cannot create indirect.spool in", out_dir))?,
            table_families: knav_ctags::macros::MacroTable::kernel()
                .families()
                .iter()
                .map(|f| f.name.as_str())
                .collect(),
            spool: Spool::create(out_dir).map_err(IndexError::io("cannot create", out_dir))?,
            buf: Vec::new(),
        })
    }

    /// Writes the results arriving on `rx`, each chunk's (by its number in `chunks`) in file
    /// order, chunks in order, counting them into `meta`, and hands each chunk's names to
    /// `send` with its number; returns how many files were written.
    fn write_in_order(
        &mut self,
        rx: mpsc::Receiver<(usize, Vec<FileResult>)>,
        inputs: &[Input],
        chunks: &[std::ops::Range<usize>],
        meta: &mut SegmentMeta,
        progress: &mut Progress,
        send: impl Fn(usize, Arc<Vec<Batch>>),
    ) -> Result<usize, IndexError> {
        let total_bytes: u64 = inputs
            .iter()
            .filter(|i| !i.too_big)
            .map(|i| i.file.size)
            .sum();
        let mut pending: BTreeMap<usize, Vec<FileResult>> = BTreeMap::new();
        let (mut want_chunk, mut want) = (0usize, 0usize);
        let mut bytes_done = 0u64;
        for (chunk, results) in rx {
            pending.insert(chunk, results);
            while let Some(results) = pending.remove(&want_chunk) {
                let range = &chunks[want_chunk];
                if range.start != want || range.len() != results.len() {
                    return Err(IndexError::Build(format!(
                        "chunk {want_chunk} of files {range:?} came with {} results at file {want}",
                        results.len()
                    )));
                }
                let mut batches = Vec::with_capacity(results.len());
                for r in results {
                    batches.push(self.write(want as u32, r, meta)?);
                    if !inputs[want].too_big {
                        bytes_done += inputs[want].file.size;
                    }
                    want += 1;
                    progress.update(
                        "index",
                        want as u64,
                        inputs.len() as u64,
                        bytes_done,
                        total_bytes,
                    );
                }
                send(want_chunk, Arc::new(batches));
                want_chunk += 1;
            }
        }
        meta.source_bytes = bytes_done;
        Ok(want)
    }

    /// Writes the definitions and the record of file `file_id`; its names go on as a batch.
    fn write(
        &mut self,
        file_id: u32,
        mut r: FileResult,
        meta: &mut SegmentMeta,
    ) -> Result<Batch, IndexError> {
        let io = || write_error(&self.out_dir);
        r.record.defs_start = self.defs_len;
        r.record.defs_count = r.defs.len() as u32;
        let mut def_offsets = Vec::with_capacity(r.defs.len());
        for d in &mut r.defs {
            d.file = file_id;
            self.buf.clear();
            d.encode(&mut self.buf);
            def_offsets.push(self.defs_len);
            self.def_facts.push(self.defs_len, d.kind, file_id);
            self.defs.write_all(&self.buf).map_err(io())?;
            self.defs_len += self.buf.len() as u64;
        }
        meta.defs += r.defs.len() as u64;
        self.spool
            .add(file_id, &r.docs, &def_offsets)
            .map_err(io())?;
        for d in &r.defs {
            if let Some(family) = &d.via {
                // Macros learned from their `#define`s are counted together.
                let key = if self.table_families.contains(family.as_str()) {
                    family.as_str()
                } else {
                    LEARNED_FAMILY
                };
                match meta.macro_definitions.get_mut(key) {
                    Some(n) => *n += 1,
                    None => {
                        meta.macro_definitions.insert(key.to_string(), 1);
                    }
                }
            }
        }
        if r.macro_only {
            meta.macro_only_files += 1;
        }
        meta.ctags_bytes += r.ctags_bytes;
        self.indirect.add(file_id, &r.indirect).map_err(io())?;
        self.buf.clear();
        r.record.encode(&mut self.buf);
        self.files_idx
            .extend_from_slice(&self.files_len.to_le_bytes());
        self.files.write_all(&self.buf).map_err(io())?;
        self.files_len += self.buf.len() as u64;
        Ok(Batch {
            file_id,
            defs: r.defs,
            def_offsets,
            names: r.names,
        })
    }

    /// Flushes `defs.dat` and `files.dat` and writes `files.idx`, counting the registrations
    /// and dispatch sites into `meta`; returns what the merge needs of the definitions, and the
    /// calls through pointers, left to sort later ([`super::indirect::IndirectWriter::finish`]
    /// reads the whole spool) when the names' accumulators no longer hold their memory.
    fn finish(
        self,
        meta: &mut SegmentMeta,
    ) -> std::io::Result<(DefFacts, super::indirect::IndirectWriter)> {
        let RecordWriter {
            out_dir,
            mut defs,
            mut files,
            files_idx,
            def_facts,
            indirect,
            spool,
            ..
        } = self;
        spool.finish()?;
        defs.flush()?;
        files.flush()?;
        drop((defs, files));
        write_file(&out_dir.join("files.idx"), b"FIDX", &files_idx)?;
        meta.registrations = indirect.registrations;
        meta.dispatch_sites = indirect.dispatches;
        Ok((def_facts, indirect))
    }
}

/// The kind and file of every definition of a segment by its offset in `defs.dat`: what the
/// defined names' search table needs of them, kept as it is written (8 bytes a definition)
/// instead of read back from `defs.dat`, whose every page the merge would otherwise map in (a
/// third of a kernel build's peak RSS).
#[derive(Default)]
struct DefFacts {
    /// In offset order.
    facts: Vec<DefFact>,
    /// For each 2^[`FACTS_BUCKET`] bytes of `defs.dat`, the index of its first definition: a
    /// lookup searches a bucket's few facts, not all of them (a binary search over millions
    /// missed the cache at every step).
    buckets: Vec<u32>,
}

/// One definition's facts: a lookup reads one record, not an offset, a kind and a file from
/// three arrays (each a cache miss).
#[derive(Clone, Copy)]
struct DefFact {
    file: u32,
    /// The offset's low [`FACTS_BUCKET`] bits: its bucket holds the rest.
    low: u16,
    kind: Kind,
}

/// The base-2 logarithm of the bytes of `defs.dat` per bucket of [`DefFacts`].
const FACTS_BUCKET: u32 = 10;

impl DefFacts {
    fn push(&mut self, offset: u64, kind: Kind, file: u32) {
        let bucket = (offset >> FACTS_BUCKET) as usize;
        while self.buckets.len() <= bucket {
            self.buckets.push(self.facts.len() as u32);
        }
        self.facts.push(DefFact {
            file,
            low: (offset & ((1 << FACTS_BUCKET) - 1)) as u16,
            kind,
        });
    }

    /// The kind and file of the definition at `offset`.
    fn get(&self, offset: u64) -> Option<(Kind, u32)> {
        let bucket = (offset >> FACTS_BUCKET) as usize;
        let start = *self.buckets.get(bucket)? as usize;
        let end = self
            .buckets
            .get(bucket + 1)
            .map_or(self.facts.len(), |&e| e as usize);
        let low = (offset & ((1 << FACTS_BUCKET) - 1)) as u16;
        let facts = &self.facts[start..end];
        let i = facts.binary_search_by_key(&low, |f| f.low).ok()?;
        Some((facts[i].kind, facts[i].file))
    }
}

/// Merges each shard's runs into its FST and entries file, the shards at the same time, and
/// counts the names into `meta`.
fn merge_names(
    out_dir: &Path,
    inputs: &[Input],
    accumulators: Vec<Accumulator>,
    facts: &DefFacts,
    meta: &mut SegmentMeta,
) -> Result<(), IndexError> {
    let defs_map = super::disk::map(out_dir, "defs.dat", None)?;
    let defs_dat: &[u8] = &defs_map;
    let ranks: Vec<PathRank> = inputs.iter().map(|i| PathRank::of(&i.file.path)).collect();
    let path_rank = |file: u32| {
        ranks
            .get(file as usize)
            .copied()
            .unwrap_or_else(|| PathRank::of(""))
    };
    // Each shard merges its runs and builds its FST (and its defined names' search table) at
    // the same time as the others.
    let summaries: Vec<Result<_, IndexError>> = std::thread::scope(|s| {
        let handles: Vec<_> = accumulators
            .into_iter()
            .enumerate()
            .map(|(k, acc)| {
                s.spawn(move || {
                    let mut defined = DefinedWriter::new(out_dir, k)?;
                    let summary = acc.finish(
                        &out_dir.join(format!("names-{k}.fst")),
                        &out_dir.join(format!("names-{k}.dat")),
                        defs_dat,
                        &mut |name, offset, defs, macro_file| {
                            let decoded = defs.iter().filter_map(|&off| facts.get(off));
                            match describe(name, decoded, macro_file, path_rank) {
                                Some(info) => defined.add(name, offset, info),
                                None => Ok(()),
                            }
                        },
                    )?;
                    Ok((summary, defined.finish()?))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r.map_err(write_error(out_dir)),
                Err(_) => Err(IndexError::Build("a name merge thread panicked".into())),
            })
            .collect()
    });
    for summary in summaries {
        let (summary, ()) = summary?;
        meta.names += summary.names;
        meta.occurrences += summary.occurrences;
        meta.runs += summary.runs;
    }
    Ok(())
}

/// Writes the search tables of the defined names' parts and of the files' path parts.
fn write_search_parts(out_dir: &Path, inputs: &[Input]) -> Result<(), IndexError> {
    write_name_parts(out_dir)?;
    write_file_parts(out_dir, inputs.iter().map(|i| i.file.path.as_str()))
        .map_err(write_error(out_dir))
}

/// Records the length and checksum of every file of the segment in `meta`.
fn seal(out_dir: &Path, meta: &mut SegmentMeta) -> Result<(), IndexError> {
    let io = || write_error(out_dir);
    // The definer tables are written by a full build only (a delta uses its base's).
    let optional = [DEFINES_FILE, DEFINERS_FILE]
        .into_iter()
        .filter(|f| out_dir.join(f).is_file())
        .map(String::from);
    for name in segment_files().into_iter().chain(optional) {
        let path = out_dir.join(&name);
        let len = std::fs::metadata(&path).map_err(io())?.len();
        meta.lengths.push((name.to_string(), len));
        meta.checksums.push((
            name.to_string(),
            super::codec::checksum_file(&path).map_err(io())?,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(name, count)` of each group of `src`'s names, in the order `group_by_name` gives.
    fn groups(src: &str) -> Vec<(String, u32)> {
        let occ = scan(src.as_bytes()).occurrences;
        let names = group_by_name(&occ, src.as_bytes(), &[]);
        names
            .groups
            .iter()
            .map(|g| {
                let name = String::from_utf8_lossy(g.name(&names.text)).into_owned();
                (name, g.count)
            })
            .collect()
    }

    #[test]
    fn names_are_grouped_in_first_appearance_order_across_files() {
        // Enough names to fill a table that is reused by the next, smaller file: a slot left
        // from this file must not group the next file's names.
        let mut big = String::new();
        for i in 0..300 {
            big.push_str(&format!("int v{i} = w{} + v{i};\n", i % 7));
        }
        let got = groups(&big);
        assert_eq!(got.len(), 307);
        assert_eq!(got[0], ("v0".to_string(), 2));
        assert_eq!(got[1], ("w0".to_string(), 43));
        assert_eq!(got[2], ("v1".to_string(), 2));
        assert_eq!(got[13], ("w6".to_string(), 42));
        assert_eq!(got[14], ("v7".to_string(), 2));
        assert_eq!(got[306], ("v299".to_string(), 2));
        assert_eq!(
            groups("f(a, b);\nb = a + f(c);\n"),
            [
                ("f".to_string(), 2),
                ("a".to_string(), 2),
                ("b".to_string(), 2),
                ("c".to_string(), 1)
            ]
        );
    }
}
