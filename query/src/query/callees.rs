//! find_callees: what a function calls, read from its body.

use std::cmp::Reverse;
use std::collections::HashSet;

use super::lookup::{not_found, valid_name, Found};
use super::span::{function_span, made_by};
use super::{indirect, rank, Query};
use crate::envelope::{Callee, Callees, Envelope, Results};
use knav_ctags::Kind;

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "find_callees";

/// At most this many distinct callees are listed a page.
pub const MAX_CALLEES: usize = 40;

/// A call through a member lists at most this many of the functions registered in it.
pub const MAX_TARGETS: usize = 5;

/// What a body calls: a name, or a member of a struct through a pointer.
#[derive(Clone, Debug)]
pub struct Called {
    /// The function called, or the member (`STRUCT.FIELD`, `?.FIELD` when the struct is not
    /// known).
    pub name: String,
    /// Line of the first call.
    pub line: u32,
    /// A call through a member: the struct, when known, and the member.
    pub through: Option<(Option<String>, String)>,
    /// Named as a likely target by an `INDIRECT_CALL_n`.
    pub listed: bool,
}

/// The distinct names called in the body of `f`, with the line of their first call: read from
/// its name to its closing `}` (a function sharing its line with others calls only its own),
/// in time linear in the body. A call through a member is listed once per member, and the
/// functions an `INDIRECT_CALL_n` lists are listed as called.
pub fn calls_in_body(q: &Query<'_>, f: &Found<'_>) -> Vec<Called> {
    let Some(span) = body_span(q, f) else {
        return Vec::new();
    };
    let body = &span.text;
    let scanned = knav_c::scan::scan(body);
    let (dispatches, listed) = indirect::dispatches_in(q, body, f.def.line, (f.seg, f.def.file));
    let mut seen: HashSet<String> = HashSet::new();
    let mut out: Vec<Called> = Vec::new();
    for o in scanned
        .occurrences
        .iter()
        .filter(|o| o.role == knav_c::scan::Role::Call)
    {
        let name = &body[o.start as usize..o.start as usize + o.len as usize];
        // The definition's own name (found, or where a macro made it, on its first line), and
        // the macro that made it (`SYSCALL_DEFINE3` is not a call of `sys_read`).
        let own = match span.name_at {
            Some(at) => o.start as usize == at,
            None => o.line == 1 && (name == f.def.name.as_bytes() || makes(f, name)),
        };
        if own {
            continue;
        }
        // Identifiers are ASCII: the scanner reports no other bytes as one.
        let name = String::from_utf8_lossy(name).into_owned();
        let line = f.def.line + o.line - 1;
        let through = dispatches
            .iter()
            .find(|d| d.line == line && d.field == name)
            .map(|d| (d.tag.clone(), d.field.clone()));
        let name = match &through {
            Some((tag, field)) => format!("{}.{field}", tag.as_deref().unwrap_or("?")),
            None => name,
        };
        if seen.insert(name.clone()) {
            out.push(Called {
                name,
                line,
                through,
                listed: false,
            });
        }
    }
    // Calls through a member the scanner did not see as calls: `INDIRECT_CALL_2(s->op->f, …)`.
    for d in dispatches {
        let name = format!("{}.{}", d.tag.as_deref().unwrap_or("?"), d.field);
        if seen.insert(name.clone()) {
            out.push(Called {
                name,
                line: d.line,
                through: Some((d.tag, d.field)),
                listed: false,
            });
        }
    }
    for (name, line) in listed {
        if seen.insert(name.clone()) {
            out.push(Called {
                name,
                line,
                through: None,
                listed: true,
            });
        }
    }
    out
}

/// True when `name` is the macro (of the family) that made `f`.
fn makes(f: &Found<'_>, name: &[u8]) -> bool {
    f.def.via.is_some_and(|via| {
        name == via.as_bytes()
            || knav_ctags::macros::MacroTable::kernel_family(name).is_some_and(|m| m.name == via)
    })
}

/// The text of `f` from its name to its closing `}` ([`function_span`]). The names one
/// invocation makes share the body that follows it: `__x64_sys_read` has `sys_read`'s.
fn body_span(q: &Query<'_>, f: &Found<'_>) -> Option<super::span::Span> {
    let made = match f.def.end_line {
        None if f.def.kind == Kind::Function => made_by(q, f).filter(|m| m.body.is_some()),
        _ => None,
    };
    let end = made.map_or(f.def.end_line.unwrap_or(f.def.line), |m| m.end);
    let src = q.text_at(f.seg, f.def.file, f.def.line, end)?;
    let braces = f.def.kind == Kind::Function;
    function_span(&src, f.def.line, end, f.def.name, braces, 0)
}

/// The distinct names `f` calls directly (not through pointers), read from its body as
/// [`calls_in_body`] reads it, without its own name: for ranking, where the pointer calls'
/// cost is not worth it.
pub fn direct_calls(q: &Query<'_>, f: &Found<'_>) -> Vec<String> {
    let Some(span) = body_span(q, f) else {
        return Vec::new();
    };
    let body = &span.text;
    let scanned = knav_c::scan::scan(body);
    let mut out: Vec<String> = (scanned.occurrences.iter())
        .filter(|o| o.role == knav_c::scan::Role::Call)
        .map(|o| &body[o.start as usize..o.start as usize + o.len as usize])
        .filter(|name| *name != f.def.name.as_bytes())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The function definitions of `symbol`, best first.
pub fn function_defs<'s: 'a, 'a>(q: &Query<'s>, symbol: &'a str) -> Vec<Found<'a>> {
    q.definitions(symbol)
        .into_iter()
        .filter_map(|mut f| match f.def.kind {
            Kind::Function => Some(f),
            // A multi-line macro has a body worth following.
            Kind::Macro => {
                f.def.end_line = q.macro_shape(&f).0;
                f.def.end_line.map(|_| f)
            }
            _ => None,
        })
        .collect()
}

/// Where a body's calls are made from, for [`called_def`]: the caller's file, its part of the
/// tree and its architecture, and the headers it includes by a quoted name (read once, when
/// first needed).
pub struct CallSite<'q> {
    seg: usize,
    file: u32,
    line: u32,
    from: &'q str,
    dir: &'q str,
    side: Side<'q>,
    arch: Option<&'q str>,
    included: std::cell::OnceCell<Vec<String>>,
}

impl<'q> CallSite<'q> {
    /// The calls of the body of `f`.
    pub fn new(q: &Query<'q>, f: &Found<'_>) -> CallSite<'q> {
        let from = q.path(f.seg, f.def.file);
        CallSite {
            seg: f.seg,
            file: f.def.file,
            line: f.def.line,
            from,
            dir: from.rsplit_once('/').map_or("", |(d, _)| d),
            side: side(from),
            arch: arch(from),
            included: std::cell::OnceCell::new(),
        }
    }

    /// True when the caller's file includes `path` by a quoted name above the caller.
    fn includes(&self, q: &Query<'_>, path: &str) -> bool {
        let included = self
            .included
            .get_or_init(|| quoted_includes(q, self.seg, self.file, Some(self.line), self.dir));
        included.iter().any(|h| h == path)
    }
}

/// The part of the tree a path is in, for which definitions its calls reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side<'p> {
    /// The kernel (with its in-tree selftests and samples, which are kernel modules).
    Kernel,
    /// `tools/`: user-space programs and their copies of kernel names.
    Tools,
    /// A program of its own inside the kernel's tree ([`program`]).
    Program(&'p str),
}

/// The side of `path`.
fn side(path: &str) -> Side<'_> {
    match program(path) {
        Some(p) => Side::Program(p),
        None if path.starts_with("tools/") => Side::Tools,
        None => Side::Kernel,
    }
}

/// The definition a call to `name` in a body at `site` reaches, of the kinds a call can name
/// (a function, its prototype, a macro, a variable holding a function), best first by:
/// 1. being seen from the caller's file: not another file's `static` function or `#define`
///    of a `.c` file (md-linear.c's `struct dev_info` is not what a driver's `dev_info(…)`
///    calls) unless one of the two files includes the other (a KUnit test `#include`d by the
///    file it tests calls its `static` functions); `None` when only those are left; then
///    what the active config builds before what it does not;
/// 2. a body, `#define` or variable of the caller's own file;
/// 3. its part of the tree ([`Side`]): the same, then the kernel's, then another's;
/// 4. its architecture: the caller's (for generic code, the active config's: `access_ok` in
///    fs/read_write.c is x86's under an amd64 config), a 32-bit-only file after the others
///    for other code, then generic code, then another architecture's;
/// 5. common builds before rare ones ([`Query::rare`]), bodies before `#define`s before
///    declarations ([`rank`]);
/// 6. for a `#define` or a declaration, a header the file includes by a quoted name, then the
///    nearest directory above the file (a driver's own `DBG` in drivers/gpu/drm/msm/msm_drv.h
///    for its subdirectories); which body a call reaches depends on the configuration (a
///    header's `static inline` or `#define` is often the `#else` of the real one), so bodies
///    keep [`Query::definitions`]' order;
/// 7. the kernel's shared headers before other headers, then [`Query::definitions`]' order.
pub fn called_def<'a>(q: &Query<'a>, site: &CallSite<'_>, name: &'a str) -> Option<Found<'a>> {
    let (from, dir) = (site.from, site.dir);
    let best = q
        .definitions(name)
        .into_iter()
        .enumerate()
        .filter(|(_, d)| {
            matches!(
                d.def.kind,
                Kind::Function | Kind::Prototype | Kind::Macro | Kind::Variable | Kind::Externvar
            )
        })
        .map(|(i, d)| {
            let path = q.path(d.seg, d.def.file);
            let own = path == from;
            let hidden = super::ranking::only_its_file(&d.def, path) && !own;
            let (_, decl, _) = rank(d.def.kind, path);
            let def_side = side(path);
            let side_key = if def_side == site.side {
                0
            } else if def_side == Side::Kernel {
                1
            } else {
                2
            };
            // A generic file's call, under a config, reaches its architecture's definition.
            let arch_key = match (arch(path), site.arch.or_else(|| q.config_arch())) {
                (Some(a), Some(b)) if a == b => u8::from(is_32(path) && !is_32(from)),
                (Some(_), Some(_)) => 3,
                _ => 2,
            };
            let header = path.ends_with(".h");
            let quoted = !own && header && decl > 0 && site.includes(q, path);
            let near = if decl > 0 { above(path, dir) } else { 0 };
            let shared = super::structs::global_for(path, from);
            let first = (
                hidden,
                q.unbuilt(path),
                !(own && decl < 2),
                side_key,
                arch_key,
            );
            let then = (
                path.starts_with(super::ranking::UML),
                decl,
                // Among bodies (or declarations), one a common build leaves out last.
                q.rare(path),
                !quoted,
                Reverse(near),
                header && !shared,
            );
            ((first, then, i), d)
        })
        .min_by_key(|(key, _)| *key)?;
    let (((hidden, ..), ..), d) = best;
    if hidden {
        // Seen only if one file includes the other.
        let path = q.path(d.seg, d.def.file);
        let def_dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let theirs = quoted_includes(q, d.seg, d.def.file, None, def_dir);
        if !theirs.iter().any(|h| h == from) && !site.includes(q, path) {
            return None;
        }
    }
    Some(d)
}

/// True for a file of an architecture's 32-bit build alone (`arch/x86/lib/string_32.c`).
fn is_32(path: &str) -> bool {
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    stem.ends_with("_32")
}

/// The program of its own a path belongs to, when it is not the kernel's: the EFI stub, an
/// architecture's boot code (its decompressor apart), x86's real-mode code and kexec's
/// purgatory (each links its own `memset`, `printf`, `exit`).
fn program(path: &str) -> Option<&str> {
    if path.starts_with("drivers/firmware/efi/libstub/") {
        return Some("drivers/firmware/efi/libstub");
    }
    let rest = path.strip_prefix("arch/")?;
    let mut parts = rest.split('/');
    let (arch, top, next) = (parts.next()?, parts.next()?, parts.next()?);
    let len = match (top, next) {
        ("boot", "compressed") | ("realmode", "rm") => arch.len() + top.len() + next.len() + 2,
        ("boot", "startup") | ("realmode", _) => return None,
        ("boot", _) | ("purgatory", _) => arch.len() + top.len() + 1,
        _ => return None,
    };
    Some(&path[..5 + len])
}

/// The architecture whose code a path is (User-mode Linux's for `arch/x86/um/`).
fn arch(path: &str) -> Option<&str> {
    if path.starts_with("arch/x86/um/") {
        return Some("um");
    }
    path.strip_prefix("arch/")?.split('/').next()
}

/// How many directories deep the directory of `path` is when it holds `dir` (is `dir` or one
/// of its parents), else 0.
fn above(path: &str, dir: &str) -> usize {
    let d = path.rsplit_once('/').map_or("", |(d, _)| d);
    let holds = dir == d || (dir.starts_with(d) && dir.as_bytes().get(d.len()) == Some(&b'/'));
    if holds && !d.is_empty() {
        d.split('/').count()
    } else {
        0
    }
}

/// The root-relative paths of the files file `file` of segment `seg` includes by a quoted name
/// (`#include "cinergyT2.h"`), above line `upto` when given, `dir` being the file's directory.
fn quoted_includes(
    q: &Query<'_>,
    seg: usize,
    file: u32,
    upto: Option<u32>,
    dir: &str,
) -> Vec<String> {
    let src = match upto {
        Some(line) => q.text_at(seg, file, 1, line),
        None => q.source(q.path(seg, file)),
    };
    let Some(src) = src else {
        return Vec::new();
    };
    let last = upto.unwrap_or(u32::MAX);
    let mut out = Vec::new();
    for n in 1..last {
        let Some(line) = src.line(n) else { break };
        if line.trim_ascii_start().first() != Some(&b'#') {
            continue;
        }
        let line = String::from_utf8_lossy(line);
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let Some(header) = rest
            .trim()
            .strip_prefix('"')
            .and_then(|r| r.split('"').next())
        else {
            continue;
        };
        let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
        for part in header.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        out.push(parts.join("/"));
    }
    out
}

/// Answers find_callees for `symbol`; the functions a call through a member of unknown struct
/// type may reach (guesses by member name) are listed with `include_uncertain`, else counted.
pub fn find_callees(q: &Query<'_>, symbol: &str, include_uncertain: bool) -> Envelope {
    if !valid_name(symbol) {
        return q.envelope_error(TOOL, format!("'{symbol}' is not a C identifier"));
    }
    let defs = function_defs(q, symbol);
    let Some(f) = defs.first() else {
        if q.definitions(symbol).is_empty() {
            return not_found(q, TOOL, symbol);
        }
        let mut env = q.envelope(TOOL);
        env.error = Some(format!("'{symbol}' is not a function with a body"));
        env.next_tools = vec!["find_definition"];
        return env;
    };
    let mut env = q.envelope(TOOL);
    if defs.len() > 1 {
        env.warn(format!(
            "{} function definitions; showing {}:{}",
            defs.len(),
            q.path(f.seg, f.def.file),
            f.def.line
        ));
    }
    let calls = calls_in_body(q, f);
    // Each callee costs a definition lookup: pages hold at most MAX_CALLEES.
    let size = q.limit().min(MAX_CALLEES as u64);
    if q.page.limit > size {
        env.warn(format!(
            "limit {} cut to {size}: find_callees lists at most {MAX_CALLEES} callees a page",
            q.page.limit
        ));
    }
    let calls = q.paginate_by(&mut env, calls, size);
    let site = CallSite::new(q, f);
    let mut guesses = 0;
    let callees: Vec<Callee> = calls
        .into_iter()
        .map(|c| {
            let Some((tag, field)) = c.through else {
                let defined_at = called_def(q, &site, &c.name)
                    .map(|d| format!("{}:{}", q.path(d.seg, d.def.file), d.def.line));
                return Callee {
                    symbol: c.name,
                    line: c.line,
                    defined_at,
                    registered: None,
                    targets: Vec::new(),
                    guesses: None,
                };
            };
            let regs = match &tag {
                Some(tag) => {
                    indirect::registered_in(q, tag, &field, Some(q.path(f.seg, f.def.file)))
                }
                None => indirect::registered_by_field(q, &field),
            };
            if tag.is_none() && !include_uncertain {
                guesses += regs.len();
                return Callee {
                    symbol: c.name,
                    line: c.line,
                    defined_at: None,
                    registered: None,
                    targets: Vec::new(),
                    guesses: Some(regs.len() as u64),
                };
            }
            Callee {
                symbol: c.name,
                line: c.line,
                defined_at: None,
                registered: Some(regs.len() as u64),
                targets: regs.into_iter().take(MAX_TARGETS).map(|r| r.func).collect(),
                guesses: None,
            }
        })
        .collect();
    if guesses > 0 {
        env.message = Some(super::callers::guesses_left_out(guesses));
    }
    env.results = Some(Results::Callees(Callees {
        symbol: symbol.to_string(),
        path: q.path(f.seg, f.def.file).to_string(),
        line: f.def.line,
        callees,
    }));
    env.next_tools = vec!["get_symbol_body", "reachability"];
    env
}
