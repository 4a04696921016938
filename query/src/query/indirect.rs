//! Calls through function pointers, answered from every segment's `indirect.dat`: the
//! registrations of a function, the calls through members that can reach it, and the targets
//! of a call through a member. A type path (`file.f_op`) is resolved here against the struct
//! members of the whole index, so a file's calls resolve through headers indexed elsewhere.

use super::Query;
use knav_ctags::Kind;
use std::collections::HashMap;

/// `type`: the struct type of the call's expression is the one the function is stored in.
pub const TYPE: &str = "type";
/// `field-name`: the expression's type is unknown, only the member's name matched (a member
/// that is a function pointer in the struct the function is stored in, and in no other).
pub const FIELD_NAME: &str = "field-name";
/// `tag`: the call's expression has a struct type of the tag the function is stored in, but the
/// tree defines that tag in several places and which one the call sees is not known
/// ([`super::structs`]).
pub const TAG: &str = "tag";
/// The `via` of a target listed by `INDIRECT_CALL_n`.
pub const INDIRECT_CALL: &str = "INDIRECT_CALL";

/// A place of the index: segment, file id, line.
pub type At = (usize, u32, u32);

/// A function stored in a struct member.
#[derive(Clone, Debug)]
pub struct Registration {
    /// Where.
    pub at: At,
    /// The struct, resolved.
    pub tag: String,
    /// The member.
    pub field: String,
    /// The function.
    pub func: String,
}

/// A call that can reach a function through a pointer.
#[derive(Clone, Debug)]
pub struct IndirectCall {
    /// Where the call is.
    pub at: At,
    /// `STRUCT.FIELD`, `?.FIELD` when the struct called through is not known (a
    /// [`FIELD_NAME`] guess), or [`INDIRECT_CALL`].
    pub via: String,
    /// [`TYPE`] or [`FIELD_NAME`].
    pub certainty: &'static str,
    /// Where the function was stored in the member (none for `INDIRECT_CALL`).
    pub registered_at: Option<At>,
}

/// A call through a member in a function's text, with its resolved struct.
#[derive(Clone, Debug)]
pub struct BodyDispatch {
    /// The struct, when known.
    pub tag: Option<String>,
    /// The member.
    pub field: String,
    /// Line in the file.
    pub line: u32,
}

fn parse_at(seg: usize, file: &str, line: &str) -> Option<At> {
    Some((seg, file.parse().ok()?, line.parse().ok()?))
}

/// True when the file of `at` is live and passes the path filter.
fn wanted(q: &Query<'_>, at: At) -> bool {
    q.snap.is_live(at.0, at.1) && q.wanted_file(at.0, at.1)
}

/// Member macros followed at most in one type path (`sk_prot` is `__sk_common.skc_prot`): a
/// macro that names itself again cannot loop.
const MAX_ALIASES: u32 = 4;

/// The struct tag of member `member` of `struct owner`, from the newest segment that has it;
/// a member macro is followed to the member it stands for (`aliases` more at most).
fn member_tag(q: &Query<'_>, owner: &str, member: &str, aliases: u32) -> Option<String> {
    let key = format!("{owner}.{member}");
    let tag = q.snap.segments.iter().rev().find_map(|seg| {
        seg.indirect("M", &key)
            .find_map(|[tag, _fnptr]| (tag != "-").then(|| tag.to_string()))
    })?;
    match tag.strip_prefix(knav_c::indirect::ALIAS) {
        Some(chain) if aliases > 0 => resolve_in(q, &format!("{owner}.{chain}"), aliases - 1),
        Some(_) => None,
        None => Some(tag),
    }
}

/// The struct a type path (`tag.member…`) ends at; `None` when a member's type is unknown.
pub fn resolve(q: &Query<'_>, path: &str) -> Option<String> {
    resolve_in(q, path, MAX_ALIASES)
}

fn resolve_in(q: &Query<'_>, path: &str, aliases: u32) -> Option<String> {
    let mut parts = path.split('.');
    let first = parts.next()?;
    if first == "?" {
        return None;
    }
    let mut tag = match (
        first.strip_suffix("()"),
        first.strip_prefix(knav_c::indirect::GLOBAL),
    ) {
        (Some(function), _) => returned_tag(q, function)?,
        (None, Some(global)) => global_tag(q, global)?,
        (None, None) => first.to_string(),
    };
    for m in parts {
        tag = member_tag(q, &tag, m, aliases)?;
    }
    Some(tag)
}

/// The struct (or union) tag function `function` returns a pointer to or a value of, from the
/// return type ctags gives its definitions and prototypes (`struct:aead_alg *`,
/// `typename:const struct file_operations *`); `None` when none says, or two say different tags.
fn returned_tag(q: &Query<'_>, function: &str) -> Option<String> {
    let defs = q.definitions(function);
    let typed = defs
        .iter()
        .filter(|f| matches!(f.def.kind, Kind::Function | Kind::Prototype));
    agreed_tag(typed.map(|f| f.def.typeref))
}

/// The struct (or union) tag of global variable `name`, from its definitions and `extern`
/// declarations that are not file-local (`extern const struct clk_ops clk_divider_ops;`); `None`
/// when none says, two say different tags, or no kernel header declares it (`extern struct efi
/// { … } efi;`; not the headers of `tools/`, the other copies, or `scripts/`): a name the
/// scanner did not see declared is as often a local of a typedef'd type (`args`, `cfg`) as a
/// global, and only a header's declaration makes a global visible to other files.
fn global_tag(q: &Query<'_>, name: &str) -> Option<String> {
    let defs = q.definitions(name);
    let typed: Vec<_> = defs
        .iter()
        .filter(|f| matches!(f.def.kind, Kind::Variable | Kind::Externvar) && !f.def.file_local)
        .filter(|f| f.def.typeref.and_then(tag_of_type).is_some())
        .collect();
    let in_header = typed.iter().any(|f| {
        let path = q.path(f.seg, f.def.file);
        path.ends_with(".h") && !super::structs::is_copy(path) && !path.starts_with("scripts/")
    });
    agreed_tag(typed.iter().map(|f| f.def.typeref)).filter(|_| in_header)
}

/// The one struct tag the types `types` name ([`tag_of_type`]); `None` when none names one or
/// two name different tags.
fn agreed_tag<'a>(types: impl Iterator<Item = Option<&'a str>>) -> Option<String> {
    let mut tag: Option<&str> = None;
    for t in types.filter_map(|t| t.and_then(tag_of_type)) {
        match tag {
            Some(seen) if seen != t => return None,
            _ => tag = Some(t),
        }
    }
    tag.map(str::to_string)
}

/// The tag of a ctags type naming a struct or union, directly (`struct:aead_alg *`) or in its
/// text (`typename:const struct file_operations *`, stored as `const struct file_operations *`).
fn tag_of_type(typeref: &str) -> Option<&str> {
    let ident = |s: &str| -> Option<usize> {
        let n = s
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        (n > 0).then_some(n)
    };
    for kind in ["struct:", "union:"] {
        if let Some(rest) = typeref.strip_prefix(kind) {
            return ident(rest).map(|n| &rest[..n]);
        }
    }
    let text = typeref.strip_prefix("typename:").unwrap_or(typeref);
    let mut words = text.split(|c: char| c.is_whitespace() || c == '*');
    while let Some(w) = words.next() {
        if w == "struct" || w == "union" {
            let next = words.find(|w| !w.is_empty())?;
            return ident(next).filter(|&n| n == next.len()).map(|_| next);
        }
    }
    None
}

/// The one struct tag with a function-pointer member `field`; `None` when no struct or several
/// have one. A call through a member of unknown type is guessed to reach only the functions
/// stored in the sole struct with such a member: where several have one (`open`, `init`,
/// `probe`), nearly every such guess was wrong (the pointer audit in BENCHMARKS.md).
fn sole_fnptr_owner<'q>(q: &'q Query<'_>, field: &str) -> Option<&'q str> {
    let mut owner = None;
    for seg in &q.snap.segments {
        for [o] in seg.indirect("P", field) {
            match owner {
                None => owner = Some(o),
                Some(seen) if seen != o => return None,
                Some(_) => {}
            }
        }
    }
    owner
}

/// Where `func` is stored in a struct member, in live wanted files.
pub fn registrations_of(q: &Query<'_>, func: &str) -> Vec<Registration> {
    let mut out = Vec::new();
    for (s, seg) in q.snap.segments.iter().enumerate() {
        for [target, field, file, line] in seg.indirect("R", func) {
            let Some(at) = parse_at(s, file, line).filter(|at| wanted(q, *at)) else {
                continue;
            };
            if let Some(tag) = resolve(q, target) {
                out.push(Registration {
                    at,
                    tag,
                    field: field.to_string(),
                    func: func.to_string(),
                });
            }
        }
    }
    out
}

/// True for the type of a variable declared with an anonymous struct
/// (`static const struct { … } v[]`, [`knav_c::indirect::FILE_ANONYMOUS`]): its file's alone.
fn file_local(tag: &str) -> bool {
    tag.starts_with(knav_c::indirect::FILE_ANONYMOUS)
}

/// The lines where `func` is stored in a struct member: find_references' `register` role.
pub fn registration_lines(q: &Query<'_>, func: &str) -> std::collections::HashSet<At> {
    let mut out = std::collections::HashSet::new();
    for (s, seg) in q.snap.segments.iter().enumerate() {
        for [_, _, file, line] in seg.indirect("R", func) {
            out.extend(parse_at(s, file, line));
        }
    }
    out
}

/// The functions stored in member `field` of `struct tag`, in live files, in path order; with
/// an active config, those it does not build are left out. With `from`, the file of a call
/// through the member, those stored in another struct of the same tag (one the file does not
/// see, [`super::structs`]) are left out too.
pub fn registered_in(
    q: &Query<'_>,
    tag: &str,
    field: &str,
    from: Option<&str>,
) -> Vec<Registration> {
    let mut out = Vec::new();
    let homes = match from {
        Some(_) => super::structs::defining_files(q, tag),
        None => Vec::new(),
    };
    // Registrations in one member share few type paths: each resolved once.
    let mut resolved: HashMap<&str, bool> = HashMap::new();
    for (s, seg) in q.snap.segments.iter().enumerate() {
        for [target, func, file, line] in seg.indirect("F", field) {
            let is_tag = *resolved
                .entry(target)
                .or_insert_with(|| resolve(q, target).as_deref() == Some(tag));
            if !is_tag {
                continue;
            }
            let Some(at) = parse_at(s, file, line).filter(|at| q.snap.is_live(at.0, at.1)) else {
                continue;
            };
            if let Some(super::verdict::Verdict::Hidden(_)) = q.verdict(at.0, at.1, at.2) {
                continue;
            }
            if let Some(from) = from {
                let reg = q.path(at.0, at.1);
                if super::structs::same_struct(&homes, reg, from) == Some(false)
                    || file_local(tag) && reg != from
                {
                    continue;
                }
            }
            out.push(Registration {
                at,
                tag: tag.to_string(),
                field: field.to_string(),
                func: func.to_string(),
            });
        }
    }
    // Each path read once, not at every comparison.
    out.sort_by_cached_key(|r| (q.path(r.at.0, r.at.1), r.at.2, r.func.clone()));
    out.dedup_by(|a, b| a.func == b.func);
    out
}

/// The functions stored in member `field` of `struct tag`, all of them (find_callees lists a
/// call's first few): `(function, path, line)` of each store, in path order; with an active
/// config, those it does not build are left out. With `from`, the file of a call through the
/// member, as [`registered_in`] has it.
pub fn stored_in(
    snap: &knav_index::store::Snapshot,
    page: super::Page,
    tag: &str,
    field: &str,
    from: Option<&str>,
) -> Vec<(String, String, u32)> {
    let q = Query::new(snap, page);
    registered_in(&q, tag, field, from)
        .into_iter()
        .map(|r| (r.func, q.path(r.at.0, r.at.1).to_string(), r.at.2))
        .collect()
}

/// Where function `func` is stored in a struct member: `(struct, member, path, line)` of each
/// store, in live wanted files (find_references' `register` rows, with their struct).
pub fn stores_of(
    snap: &knav_index::store::Snapshot,
    page: super::Page,
    func: &str,
) -> Vec<(String, String, String, u32)> {
    let q = Query::new(snap, page);
    registrations_of(&q, func)
        .into_iter()
        .map(|r| (r.tag, r.field, q.path(r.at.0, r.at.1).to_string(), r.at.2))
        .collect()
}

/// The functions stored in member `field` of the one struct that has a function-pointer member
/// of that name ([`sole_fnptr_owner`]): the guessed targets of a call through `field` whose
/// struct is not known; none when several structs have such a member.
pub fn registered_by_field(q: &Query<'_>, field: &str) -> Vec<Registration> {
    match sole_fnptr_owner(q, field) {
        Some(tag) => registered_in(q, tag, field, None),
        None => Vec::new(),
    }
}

/// The calls that can reach `func` through a pointer, type-certain ones first for the same
/// site, one per site.
pub fn callers_through_pointers(q: &Query<'_>, func: &str) -> Vec<IndirectCall> {
    let mut out = Vec::new();
    let regs = registrations_of(q, func);
    let mut seen_keys: Vec<(&str, &str)> = Vec::new();
    let mut homes: std::collections::HashMap<&str, Vec<String>> = Default::default();
    for r in &regs {
        if seen_keys.contains(&(r.tag.as_str(), r.field.as_str())) {
            continue;
        }
        seen_keys.push((&r.tag, &r.field));
        // Guessed by the member's name only when no other struct has a function pointer of
        // that name.
        let guessed = sole_fnptr_owner(q, &r.field) == Some(r.tag.as_str());
        let homes = homes
            .entry(r.tag.as_str())
            .or_insert_with(|| super::structs::defining_files(q, &r.tag));
        for (s, seg) in q.snap.segments.iter().enumerate() {
            for [target, file, line] in seg.indirect("D", &r.field) {
                let Some(at) = parse_at(s, file, line).filter(|at| wanted(q, *at)) else {
                    continue;
                };
                let certainty = match resolve(q, target) {
                    Some(t) if t == r.tag => {
                        let (reg, site) = (q.path(r.at.0, r.at.1), q.path(at.0, at.1));
                        if file_local(&t) && reg != site {
                            continue;
                        }
                        match super::structs::same_struct(homes, reg, site) {
                            Some(true) => TYPE,
                            Some(false) => continue,
                            None => TAG,
                        }
                    }
                    None if guessed => FIELD_NAME,
                    _ => continue,
                };
                // A guess names the member only: the struct called through is not known
                // (the function was stored in `r.tag`'s, at `registered_at`).
                let via = match certainty {
                    FIELD_NAME => format!("?.{}", r.field),
                    _ => format!("{}.{}", r.tag, r.field),
                };
                out.push(IndirectCall {
                    at,
                    via,
                    certainty,
                    registered_at: Some(r.at),
                });
            }
        }
    }
    for (s, seg) in q.snap.segments.iter().enumerate() {
        for [file, line] in seg.indirect("I", func) {
            if let Some(at) = parse_at(s, file, line).filter(|at| wanted(q, *at)) {
                out.push(IndirectCall {
                    at,
                    via: INDIRECT_CALL.to_string(),
                    certainty: TYPE,
                    registered_at: None,
                });
            }
        }
    }
    out.sort_by_key(|c| (c.at, c.certainty != TYPE));
    out.dedup_by_key(|c| c.at);
    out
}

/// The struct of the call through `field` the index recorded at `line` of `file`, resolved.
fn indexed_dispatch(q: &Query<'_>, file: (usize, u32), line: u32, field: &str) -> Option<String> {
    let seg = q.snap.segments.get(file.0)?;
    let (id, at) = (file.1.to_string(), line.to_string());
    let target = seg
        .indirect("D", field)
        .find_map(|[target, f, l]| (f == id && l == at).then(|| target.to_string()))?;
    resolve(q, &target)
}

/// The calls through members in `text`, a function from its name to its closing brace that
/// starts at line `first_line`, with their structs resolved; and the functions an
/// `INDIRECT_CALL_n` there lists, with their lines.
/// A struct the text alone does not resolve (an array of file scope, `init_funcs[i].init()`) is
/// the one the index recorded for the call at that line of file `file` (segment, file id).
pub fn dispatches_in(
    q: &Query<'_>,
    text: &[u8],
    first_line: u32,
    file: (usize, u32),
) -> (Vec<BodyDispatch>, Vec<(String, u32)>) {
    let facts = knav_c::indirect::facts(text, &|_| None);
    let calls = facts
        .dispatches
        .into_iter()
        .map(|d| {
            let line = first_line + d.line - 1;
            let tag = (d.target.and_then(|t| resolve(q, &t.encode())))
                .or_else(|| indexed_dispatch(q, file, line, &d.field));
            BodyDispatch {
                tag,
                field: d.field,
                line,
            }
        })
        .collect();
    let listed = facts
        .listed
        .into_iter()
        .map(|(f, l)| (f, first_line + l - 1))
        .collect();
    (calls, listed)
}
