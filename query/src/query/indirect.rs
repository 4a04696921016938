//! Calls through function pointers, answered from every segment's `indirect.dat`: the
//! registrations of a function, the calls through members that can reach it, and the targets
//! of a call through a member. A type path (`file.f_op`) is resolved here against the struct
//! members of the whole index, so a file's calls resolve through headers indexed elsewhere.

use super::Query;
use std::collections::HashMap;

/// `type`: the struct type of the call's expression is the one the function is stored in.
pub const TYPE: &str = "type";
/// `field-name`: the expression's type is unknown, only the member's name matched (a member
/// that is a function pointer in the struct the function is stored in).
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
    let mut tag = parts.next()?.to_string();
    if tag == "?" {
        return None;
    }
    for m in parts {
        tag = member_tag(q, &tag, m, aliases)?;
    }
    Some(tag)
}

/// True when `struct owner` has a function-pointer member `field`.
fn has_fnptr(q: &Query<'_>, owner: &str, field: &str) -> bool {
    q.snap
        .segments
        .iter()
        .any(|seg| seg.indirect("P", field).any(|[o]| o == owner))
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
            if let Some(super::Verdict::Hidden(_)) = q.verdict(at.0, at.1, at.2) {
                continue;
            }
            if let Some(from) = from {
                let reg = q.path(at.0, at.1);
                if super::structs::same_struct(&homes, reg, from) == Some(false) {
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

/// The functions stored in member `field` of any struct that has a function-pointer member of
/// that name: the targets of a call through `field` whose struct is not known.
pub fn registered_by_field(q: &Query<'_>, field: &str) -> Vec<Registration> {
    let mut tags: Vec<String> = Vec::new();
    for seg in &q.snap.segments {
        for [target, _, _, _] in seg.indirect("F", field) {
            if let Some(tag) = resolve(q, target) {
                if !tags.contains(&tag) && has_fnptr(q, &tag, field) {
                    tags.push(tag);
                }
            }
        }
    }
    tags.iter()
        .flat_map(|t| registered_in(q, t, field, None))
        .collect()
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
        let fnptr = has_fnptr(q, &r.tag, &r.field);
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
                        match super::structs::same_struct(homes, reg, site) {
                            Some(true) => TYPE,
                            Some(false) => continue,
                            None => TAG,
                        }
                    }
                    None if fnptr => FIELD_NAME,
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

/// The calls through members in `text`, a function from its name to its closing brace that
/// starts at line `first_line`, with their structs resolved; and the functions an
/// `INDIRECT_CALL_n` there lists, with their lines.
pub fn dispatches_in(
    q: &Query<'_>,
    text: &[u8],
    first_line: u32,
) -> (Vec<BodyDispatch>, Vec<(String, u32)>) {
    let facts = knav_c::indirect::facts(text, &|_| None);
    let calls = facts
        .dispatches
        .into_iter()
        .map(|d| BodyDispatch {
            tag: d.target.and_then(|t| resolve(q, &t.encode())),
            field: d.field,
            line: first_line + d.line - 1,
        })
        .collect();
    let listed = facts
        .listed
        .into_iter()
        .map(|(f, l)| (f, first_line + l - 1))
        .collect();
    (calls, listed)
}
