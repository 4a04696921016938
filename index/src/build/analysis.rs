//! One file's analysis for the segment: its scan started and finished (macro-made names,
//! exports, functions ctags misses), its names grouped, ctags' tags attached.

use super::*;

/// A file read and scanned as far as ctags needs (its spans ctags need not read, whether it has
/// code): its result so far, the scan [`scan_finish`] reads for the rest, and its bytes.
/// A file from the fact store is whole already, and one not read has no source.
pub(super) fn scan_start(
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
pub(super) fn scan_finish(r: &mut FileResult, scanned: FileScan, src: &[u8], learned: &Definers) {
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
pub(super) fn file_scope_functions(scanned: &FileScan, src: &[u8]) -> Vec<DefRecord> {
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
pub(super) fn own_macros(own: &[(String, Learned)], learned: &Definers) -> Option<Definers> {
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
pub(super) fn read_to_scan(
    root: Option<&Root>,
    input: &Input,
    record: &mut FileRecord,
    kept: Option<&Kept<'_>>,
) -> Option<(Source, Option<crate::codec::Digest>)> {
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
pub(super) fn add_exports(
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
pub(super) struct Grouping {
    /// The name table.
    pub(super) slots: Vec<u64>,
    /// Per group, its first occurrence.
    pub(super) first: Vec<u32>,
    /// Per group, its occurrences; then where the next of them goes in `order` (once all are
    /// placed, where they end).
    pub(super) counts: Vec<u32>,
    /// Per occurrence, its group.
    pub(super) group_of: Vec<u32>,
    /// The occurrences, grouped.
    pub(super) order: Vec<u32>,
}

impl Grouping {
    /// Empties the vectors, keeping room for at most [`knav_c::keep::KEEP`] entries of each
    /// for the next file.
    pub(super) fn shrink(&mut self) {
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
pub(super) fn group_by_name(
    occurrences: &[knav_c::scan::Occurrence],
    src: &[u8],
    extra: &[u8],
) -> FileNames {
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
        let h = crate::accum::name_hash(name);
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
            crate::postings::put_occurrence(&mut out.blocks, o.line - prev_line, o.role);
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
pub(super) fn needs_ctags(r: &FileResult) -> bool {
    r.deps.is_some() && r.record.status == FileStatus::Indexed && !r.macro_only
}

/// Adds ctags's definitions (or why there are none) to a scanned file.
pub(super) fn attach_tags(r: &mut FileResult, tags: Result<FileTags, String>) {
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
pub(super) fn add_functions(defs: &mut Vec<DefRecord>, mut functions: Vec<DefRecord>) {
    functions.retain(|f| !defs.iter().any(|d| d.name == f.name && d.line == f.line));
    defs.append(&mut functions);
}

/// A variable a macro made inside a function's body (`DEFINE_WAIT(wait);`) is a local of that
/// function, not a global.
pub(super) fn mark_locals(defs: &mut [DefRecord]) {
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
