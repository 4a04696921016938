//! find_definition: where a name is defined, under which guards, how hot and whether exported.

use std::collections::BTreeSet;

use super::fuzzy::{self, Fuzzy};
use super::lookup::{def_lines, not_found, role_of, valid_name, Found, Visit};
use super::span::find_name;
use super::Query;
use crate::envelope::{DefSummary, Envelope, Export, Results, TopFile};
use knav_c::scan::Role;
use knav_ctags::Kind;
use knav_index::buildfiles::KconfigEntry;
use knav_index::segment::Posting;
use knav_index::{keep_top, NameStats};

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "find_definition";

/// Answers find_definition for `symbol` (or `struct_name.member`).
pub fn find_definition(q: &Query<'_>, symbol: &str) -> Envelope {
    if let Some((owner, member)) = fuzzy::split_member(symbol) {
        return member_answer(q, symbol, owner, member);
    }
    if !valid_name(symbol) {
        return q.envelope_error(
            TOOL,
            format!("{} is not a C identifier", crate::envelope::quote(symbol)),
        );
    }
    let (defs, counts) = definitions_counted(q, symbol);
    let kconfig = q.kconfig_entries(symbol);
    if defs.is_empty() && kconfig.is_empty() {
        // A Kconfig name without its prefix: `HIGHMEM` is `CONFIG_HIGHMEM`.
        let prefixed = format!("CONFIG_{symbol}");
        let kconfig = q.kconfig_entries(&prefixed);
        if !kconfig.is_empty() && counts.occurrences == 0 {
            let mut env = answer(q, &prefixed, Vec::new(), kconfig, None);
            env.warn(format!(
                "'{symbol}' is the Kconfig symbol {prefixed}; showing its entries"
            ));
            return env;
        }
        match fuzzy::resolve(q, symbol) {
            Fuzzy::One(name, how) => {
                let defs = q.definitions(&name);
                let mut env = answer(q, &name, defs, Vec::new(), None);
                mark_resolved(&mut env, &name);
                resolved(&mut env, symbol, &name, how);
                return env;
            }
            Fuzzy::Several(names) => return several(q, TOOL, symbol, names),
            Fuzzy::Nothing => {}
        }
    }
    answer(q, symbol, defs, kconfig, Some(counts))
}

/// Says in `env` that it answers `name`, found for `asked` as `how` says: the subject the next
/// tools take, and whether it is a guess ([`fuzzy::is_guess`]: a near match exits 1).
pub fn resolved(env: &mut Envelope, asked: &str, name: &str, how: &str) {
    env.subject = Some(name.to_string());
    env.near_match = fuzzy::is_guess(how);
    env.warn(if env.near_match {
        format!("'{asked}' has no definition; showing '{name}' ({how}), a near match, not the name asked")
    } else {
        format!("'{asked}' is '{name}' ({how})")
    });
}

/// Answers find_definition for a name written as a tag (`struct file_operations`): the
/// struct, union or enum of that name; every definition of the name when it has none.
pub fn find_tag(q: &Query<'_>, tag: &str, name: &str) -> Envelope {
    let kind = match tag {
        "union" => Kind::Union,
        "enum" => Kind::Enum,
        _ => Kind::Struct,
    };
    let (defs, counts) = definitions_counted(q, name);
    let tags: Vec<_> = defs
        .iter()
        .filter(|f| f.def.kind == kind)
        .copied()
        .collect();
    let mut env = if tags.is_empty() {
        let mut env = find_definition(q, name);
        env.warn(format!(
            "no {tag} {name} is defined; showing every definition of {name}"
        ));
        env
    } else {
        answer(q, name, tags, Vec::new(), Some(counts))
    };
    env.subject.get_or_insert_with(|| name.to_string());
    env
}

/// find_definition for member `member` of struct or union `owner` (asked as `symbol`): its
/// definitions, those inside anonymous structs and unions (and `struct_group()`s) at any depth
/// included, and references counted in the files that name `owner`.
fn member_answer(q: &Query<'_>, symbol: &str, owner: &str, member: &str) -> Envelope {
    let found = members_of(q, owner, member);
    if found.is_empty() {
        let mut env = not_found(q, TOOL, member);
        env.error = Some(format!("no member '{member}' in struct or union '{owner}'"));
        return env;
    }
    let mut paths: Vec<String> = found.iter().filter_map(|(_, p)| p.clone()).collect();
    paths.dedup();
    let defs: Vec<Found<'_>> = found.into_iter().map(|(f, _)| f).collect();
    let mut env = answer(q, member, defs, Vec::new(), None);
    mark_resolved(&mut env, member);
    env.warn(format!("'{symbol}' is member {member} of {owner}"));
    for p in paths {
        env.warn(format!(
            "{member} is in an anonymous struct or union declared as a member: written {p}"
        ));
    }
    member_counts(q, &mut env, owner, member);
    env
}

/// The member definitions of `member` in `owner`: those whose scope is `owner` itself or an
/// anonymous struct or union inside it, at any depth (ctags names them `__anonNNN`: `scope`
/// `sock_common::__anon…::__anon…`). Each comes with the path it is written as when an
/// anonymous one on the way is the type of a named member (`union { … } u;`: `owner.u.member`);
/// one whose members are the enclosing struct's (C11, and `struct_group()`) adds nothing.
fn members_of<'s>(q: &Query<'s>, owner: &str, member: &'s str) -> Vec<(Found<'s>, Option<String>)> {
    let mut out: Vec<_> = (fuzzy::member_definitions(q, owner, member).into_iter())
        .map(|mut f| {
            member_line(q, &mut f);
            (f, None)
        })
        .collect();
    for mut f in q.definitions(member) {
        let Some(scope) = f.def.scope.filter(|_| f.def.kind == Kind::Member) else {
            continue;
        };
        let parts: Vec<&str> = scope.split("::").collect();
        let anonymous = parts[1..].iter().all(|p| p.starts_with("__anon"));
        if parts[0] != owner || parts.len() == 1 || !anonymous {
            continue;
        }
        let mut path = vec![owner.to_string()];
        for depth in 2..=parts.len() {
            if let Some(name) = anon_declarator(q, &f, &parts[..depth]) {
                path.push(name);
            }
        }
        let named = path.len() > 1;
        path.push(member.to_string());
        member_line(q, &mut f);
        out.push((f, named.then(|| path.join("."))));
    }
    out
}

/// The member an anonymous struct or union `scope` (its last part, inside the rest) of the
/// file of `f` is the type of: an identifier after its closing `}` that names a member of that
/// type (`} u;`), `None` when its members are the enclosing one's (`};`, `} __packed;`, or a
/// `struct_group(NAME, …)`, whose closing line has no `}`).
fn anon_declarator(q: &Query<'_>, f: &Found<'_>, scope: &[&str]) -> Option<String> {
    let (anon, parent) = scope.split_last()?;
    let parent = parent.join("::");
    let full = format!(":{}", scope.join("::"));
    let d = q.definitions(anon).into_iter().find(|d| {
        d.seg == f.seg && d.def.file == f.def.file && d.def.scope == Some(parent.as_str())
    })?;
    let end = d.def.end_line?;
    let src = q.text_at(d.seg, d.def.file, end, end)?;
    let line = src.line(end)?;
    let after = &line[line.iter().rposition(|&b| b == b'}')? + 1..];
    let words = String::from_utf8_lossy(after);
    let named = words
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .find(|w| {
            q.definitions(w).iter().any(|m| {
                m.def.kind == Kind::Member
                    && m.seg == d.seg
                    && m.def.file == d.def.file
                    && m.def.typeref.is_some_and(|t| t.ends_with(&full))
            })
        });
    named.map(str::to_string)
}

/// Lines searched above a member for its own line.
const MEMBER_LINE_WINDOW: u32 = 400;

/// Moves member `f` to the line that names it when its own does not: ctags gives a
/// `struct_group(NAME, …)` and its members the line that closes the invocation.
fn member_line(q: &Query<'_>, f: &mut Found<'_>) {
    let last = f.def.line;
    let first = last.saturating_sub(MEMBER_LINE_WINDOW).max(1);
    let Some(src) = q.text_at(f.seg, f.def.file, first, last) else {
        return;
    };
    let name = f.def.name.as_bytes();
    let found = (first..=last)
        .rev()
        .find(|&n| src.line(n).is_some_and(|l| find_name(l, 0, name).is_some()));
    if let Some(n) = found {
        f.def.line = n;
        f.def.end_line = Some(n);
    }
}

/// The reference counts of `env`'s summary for member `member` of `owner`: a reference is a
/// name, not told apart by what it refers to, so those counted are the references of
/// `member` in files that also name `owner` (the struct's users), and a warning says so.
fn member_counts(q: &Query<'_>, env: &mut Envelope, owner: &str, member: &str) {
    let files: BTreeSet<(usize, u32)> = q.postings_iter(owner).map(|(s, p)| (s, p.file)).collect();
    // Every definition of the name is left out of the counts, as `def NAME` leaves them out.
    let lines = def_lines(&q.definitions(member));
    let mut c = Counts::default();
    let mut all = 0u64;
    for (s, p) in q.postings_iter(member) {
        let is_def = matches!(role_of(&p, &lines, s), "def" | "decl") || p.role == Role::MacroDef;
        all += u64::from(!is_def);
        if files.contains(&(s, p.file)) {
            c.add(q, s, &p, is_def);
        }
    }
    let top = top_files(q, &mut c.per_file);
    if let Some(sum) = env.summary.as_mut() {
        sum.reference_count = c.refs;
        sum.file_count = c.files;
        sum.top_files = top;
        sum.counts_mix = Vec::new();
    }
    env.warn(format!(
        "references are of the name {member} in the {} files that also name {owner} ({} in all \
         files): knav does not tell a member access from another use of the name",
        c.files, all
    ));
}

/// The error for a name with several equally close defined names: they are listed, not guessed.
pub fn several(q: &Query<'_>, tool: &'static str, symbol: &str, names: Vec<String>) -> Envelope {
    let mut env = q.envelope(tool);
    env.error = Some(format!(
        "'{symbol}' has no definition, and {} defined names are equally close; ask for one of them",
        names.len()
    ));
    env.near_misses = names.into_iter().map(|n| format!("~{n}")).collect();
    env.next_tools = vec![tool];
    env
}

/// Marks every record as found by fuzzy resolution to `name`.
pub fn mark_resolved(env: &mut Envelope, name: &str) {
    if let Some(Results::Records(records)) = &mut env.results {
        for r in records {
            r.resolved_via = Some(format!("fuzzy:{name}"));
        }
    }
}

/// The macro a line starts with (`EXPORT_SYMBOL_GPL` of `EXPORT_SYMBOL_GPL(vfs_read);`).
pub(super) fn macro_on_line(q: &Query<'_>, seg: usize, file: u32, line: u32) -> Option<String> {
    let src = q.text_at(seg, file, line, line)?;
    let l = String::from_utf8_lossy(src.line(line)?).into_owned();
    let t = l.trim_start();
    let name = t[..t.find('(').unwrap_or(t.len())].trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// One definition shown: a C one from the index, or a Kconfig entry.
enum Shown<'s> {
    C(Found<'s>),
    Kconfig(KconfigEntry),
}

/// What the postings of a name say beyond its definitions: how often and where it is used,
/// and whether it is exported.
#[derive(Default)]
struct Counts {
    occurrences: u64,
    refs: u64,
    /// Files holding references.
    files: u64,
    /// References per file, in posting (file) order.
    per_file: Vec<((usize, u32), u64)>,
    exported: Option<Export>,
}

impl Counts {
    /// Counts posting `p` of segment `s`; `is_def` says whether it is a definition or
    /// declaration line (not a reference).
    fn add(&mut self, q: &Query<'_>, s: usize, p: &Posting, is_def: bool) {
        self.occurrences += 1;
        if p.role == Role::Export {
            self.export(q, s, p);
        }
        if is_def {
            return;
        }
        self.refs += 1;
        // Postings come in file order per segment: count runs, no map.
        match self.per_file.last_mut() {
            Some((key, n)) if *key == (s, p.file) => *n += 1,
            _ => {
                self.files += 1;
                self.per_file.push(((s, p.file), 1));
            }
        }
    }

    /// Counts the facts stored for a hot name in segment `s` as [`Counts::add`] counts its
    /// postings: its totals and top files while every file of the segment is live, its
    /// per-file counts of the live files otherwise.
    fn add_stats(&mut self, q: &Query<'_>, s: usize, occurrences: u64, st: &NameStats) {
        for &(file, line) in &st.exports {
            if q.snap.is_live(s, file) {
                let p = Posting {
                    file,
                    line,
                    role: Role::Export,
                };
                self.export(q, s, &p);
            }
        }
        // Leaving files out of the top list keeps the rest of it on top: it holds while none of
        // its own files is dead.
        let top_holds = st.top.iter().all(|&(file, _)| q.snap.is_live(s, file));
        if top_holds {
            self.per_file
                .extend(st.top.iter().map(|&(file, n)| ((s, file), n as u64)));
        }
        if q.snap.all_live(s) {
            self.occurrences += occurrences;
            self.refs += st.refs;
            self.files += st.files;
            return;
        }
        for (file, refs, other) in st.per_file() {
            if !q.snap.is_live(s, file) {
                continue;
            }
            self.occurrences += (refs + other) as u64;
            if refs > 0 {
                self.refs += refs as u64;
                self.files += 1;
                if !top_holds {
                    self.per_file.push(((s, file), refs as u64));
                }
            }
        }
    }

    /// Notes the export posting `p` of segment `s`.
    fn export(&mut self, q: &Query<'_>, s: usize, p: &Posting) {
        // `EXPORT_TRACEPOINT_SYMBOL(kfree)` exports the tracepoint, not the function: it is
        // reported only when nothing else exports the name.
        // Nor is a rare build's export (mm/nommu.c's vfree) when a common one exports it too.
        let path = q.path(s, p.file);
        let settled = self.exported.as_ref().is_some_and(|e| {
            !e.macro_name.starts_with("EXPORT_TRACEPOINT") && (!q.rare(&e.path) || q.rare(path))
        });
        if !settled {
            let macro_name =
                macro_on_line(q, s, p.file, p.line).unwrap_or_else(|| "EXPORT_SYMBOL".into());
            if self.exported.is_none() || !macro_name.starts_with("EXPORT_TRACEPOINT") {
                self.exported = Some(Export {
                    macro_name,
                    path: path.to_string(),
                    line: p.line,
                });
            }
        }
    }
}

/// The definitions of `symbol` and its [`Counts`], from one walk of its postings (a hot
/// name has tens of thousands).
fn definitions_counted<'a>(q: &Query<'a>, symbol: &'a str) -> (Vec<Found<'a>>, Counts) {
    let mut counts = Counts::default();
    let defs = q.definitions_visiting(symbol, |s, seen| match seen {
        Visit::Posting(p, at_def) => counts.add(q, s, p, at_def || p.role == Role::MacroDef),
        Visit::Stats(occurrences, stats) => counts.add_stats(q, s, occurrences, stats),
    });
    (defs, counts)
}

/// The definition answer for `symbol` with its definitions `defs` and Kconfig entries
/// `kconfig` (which come first: they are what defines a `CONFIG_` symbol); `counts` when the
/// postings were counted already.
fn answer<'s>(
    q: &Query<'s>,
    symbol: &str,
    defs: Vec<Found<'s>>,
    kconfig: Vec<KconfigEntry>,
    counts: Option<Counts>,
) -> Envelope {
    // `module_init(fn)` marks `fn`; it is not a definition of its own.
    let (entries, defs): (Vec<_>, Vec<_>) =
        defs.into_iter().partition(|f| f.def.kind == Kind::Entry);
    let entry_point = entries.first().map(|f| entry_point(q, f));
    if defs.is_empty() && kconfig.is_empty() && q.postings_iter(symbol).next().is_none() {
        return not_found(q, TOOL, symbol);
    }
    let mut env = q.envelope(TOOL);
    let Counts {
        occurrences,
        mut refs,
        files,
        mut per_file,
        exported,
    } = counts.unwrap_or_else(|| count(q, symbol, &defs));
    // Kconfig files and Makefiles naming a `CONFIG_` symbol count as references too.
    let build_uses = if kconfig.is_empty() && !symbol.starts_with("CONFIG_") {
        Vec::new()
    } else {
        q.build_uses(symbol)
    };
    refs += build_uses.len() as u64;
    let build_files: BTreeSet<&str> = build_uses.iter().map(|u| u.path.as_str()).collect();
    // A file can appear twice only across segments (shadowed copies are not live).
    let file_count = files + build_files.len() as u64;
    let top = top_files(q, &mut per_file);

    let in_prefix: Vec<_> = defs
        .iter()
        .filter(|f| q.wanted_file(f.seg, f.def.file))
        .copied()
        .collect();
    // The active configuration leaves out what it does not build, and says why.
    let (wanted, mut hidden) = q.by_config(in_prefix);
    let mut shown: Vec<(Shown<'_>, Option<bool>)> = Vec::new();
    let (kconfig, kconfig_hidden) = q.kconfig_by_config(kconfig);
    hidden.extend(kconfig_hidden);
    shown.extend(kconfig.into_iter().map(|(k, a)| (Shown::Kconfig(k), a)));
    if let Some(config) = q.page.active.as_deref() {
        if !shown.is_empty() {
            env.warn(format!("active config: {}", config.describe(symbol)));
        }
    }
    let hidden_count = hidden.len();
    env.hidden = hidden;
    // Guards for the variant count; full records (snippets read from the sources) only for
    // the page shown.
    let variants: BTreeSet<_> = wanted
        .iter()
        .map(|(f, _)| q.guard(f.seg, f.def.file, f.def.line))
        .collect();
    let definition_count = (wanted.len() + shown.len()) as u64;
    let entities: BTreeSet<&'static str> = defs.iter().filter_map(|f| entity(f.def.kind)).collect();
    env.summary = Some(DefSummary {
        symbol: symbol.to_string(),
        definition_count,
        guard_variants: variants.len() as u64,
        reference_count: refs,
        file_count,
        counts_mix: if entities.len() > 1 {
            entities.into_iter().collect()
        } else {
            Vec::new()
        },
        top_files: top,
        exported,
        entry_point,
    });
    shown.extend(wanted.into_iter().map(|(f, a)| (Shown::C(f), a)));
    if shown.is_empty() {
        env.message = Some(
            if defs.is_empty() && definition_count == 0 && hidden_count == 0 {
                format!(
                    "no definition of '{symbol}' in the index; it occurs {} times in {} files",
                    occurrences, file_count
                )
            } else if hidden_count > 0 {
                format!("the active config builds none of the {hidden_count} definitions")
            } else {
                "no definition under the path prefix".to_string()
            },
        );
        env.next_tools = vec!["find_references"];
        env.results = Some(Results::Records(Vec::new()));
        return env;
    }
    show_page(q, &mut env, shown);
    env
}

/// The kind of entity a definition of `kind` is, as a reader tells them apart (a function, its
/// prototypes and a macro of its name are one); None for what names no entity of its own.
fn entity(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Function | Kind::Prototype | Kind::Macro => Some("function or macro"),
        Kind::Member => Some("struct member"),
        Kind::Struct | Kind::Union | Kind::Enum | Kind::Typedef => Some("type"),
        Kind::Variable | Kind::Externvar => Some("variable"),
        Kind::Enumerator => Some("enumerator"),
        Kind::Label | Kind::Local | Kind::Other | Kind::Entry => None,
    }
}

/// The entry point `f` (a `module_init(fn)` line) makes of its function, as an [`Export`] of
/// the macro that names it.
fn entry_point(q: &Query<'_>, f: &Found<'_>) -> Export {
    let path = q.path(f.seg, f.def.file);
    Export {
        macro_name: macro_on_line(q, f.seg, f.def.file, f.def.line)
            .unwrap_or_else(|| f.def.via.unwrap_or("module_init").to_string()),
        path: path.to_string(),
        line: f.def.line,
    }
}

/// The [`Counts`] of the postings of `symbol`, whose definitions are `defs`.
fn count(q: &Query<'_>, symbol: &str, defs: &[Found<'_>]) -> Counts {
    let lines = def_lines(defs);
    let mut c = Counts::default();
    for (s, p) in q.postings_iter(symbol) {
        c.add(q, s, &p, matches!(role_of(&p, &lines, s), "def" | "decl"));
    }
    c
}

/// The five files of `per_file` (references per file) with the most references, ties broken
/// by path; `per_file` is left trimmed to the files that could be among them.
fn top_files(q: &Query<'_>, per_file: &mut Vec<((usize, u32), u64)>) -> Vec<TopFile> {
    // Only the top few are shown: select them as a hot name's stored list was, then sort them.
    // Paths (which break ties) are looked up only for files that can make the five shown: a
    // lookup touches the index's file table at random.
    keep_top(per_file);
    per_file.sort_unstable_by_key(|e| std::cmp::Reverse(e.1));
    let fifth = per_file.get(4).map_or(0, |e| e.1);
    let mut top: Vec<TopFile> = per_file
        .iter()
        .take_while(|(_, c)| *c >= fifth)
        .map(|((s, f), c)| TopFile {
            path: q.path(*s, *f).to_string(),
            count: *c,
        })
        .collect();
    top.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
    top.truncate(5);
    top
}

/// Sets the results of `env` to the page of `shown` asked for (each with whether the active
/// configuration builds it, when there is one) and the tools to go on with.
fn show_page(q: &Query<'_>, env: &mut Envelope, shown: Vec<(Shown<'_>, Option<bool>)>) {
    let only_kconfig = shown.iter().all(|(s, _)| matches!(s, Shown::Kconfig(_)));
    let page = q.paginate(env, shown);
    env.results = Some(Results::Records(
        page.into_iter()
            .map(|(f, active)| {
                let mut r = match f {
                    Shown::C(f) => q.def_record(&f),
                    Shown::Kconfig(k) => q.kconfig_record(&k),
                };
                if q.page.active.is_some() {
                    r.active = Some(active);
                }
                r
            })
            .collect(),
    ));
    env.next_tools = if only_kconfig {
        vec!["find_references"]
    } else {
        vec!["get_symbol_body", "find_callers", "find_references"]
    };
}
