//! Names as people write them (`struct file_operations`, `vfs_read()`), and fuzzy resolution,
//! for a name that has no definition: a system call's name (`openat` → `sys_openat`), syscall
//! wrapper prefixes (`__x64_sys_read` → `sys_read`), a member asked as `struct_name.member`, a case-insensitive
//! match, then one and two edits away (a transposition of neighbours counting as one). Each
//! step that finds exactly one defined name resolves to it; one that finds several lists them,
//! the most used first, instead of guessing.

use fst::Automaton;
use knav_index::Within;

use super::lookup::Found;
use super::nearmiss::{by_use, collect_defined, edits_allowed, Used};
use super::Query;
use knav_ctags::Kind;

/// What fuzzy resolution found.
#[derive(Debug, PartialEq, Eq)]
pub enum Fuzzy {
    /// One name: `(name, how it was found)`.
    One(String, &'static str),
    /// Several equally close names.
    Several(Vec<String>),
    /// Nothing close.
    Nothing,
}

/// Prefixes of the functions a `SYSCALL_DEFINE` expands to, and the name they resolve to.
const SYSCALL_PREFIXES: &[(&str, &str)] = &[
    ("__riscv_sys_", "sys_"),
    ("__s390x_sys_", "sys_"),
    ("__s390_sys_", "sys_"),
    ("__powerpc_sys_", "sys_"),
    ("__x64_sys_", "sys_"),
    ("__ia32_sys_", "sys_"),
    ("__arm64_sys_", "sys_"),
    ("__se_sys_", "sys_"),
    ("__do_sys_", "sys_"),
    ("__x64_compat_sys_", "compat_sys_"),
    ("__ia32_compat_sys_", "compat_sys_"),
    ("__se_compat_sys_", "compat_sys_"),
    ("__do_compat_sys_", "compat_sys_"),
];

/// A case-insensitive exact match over the FST.
struct NoCase<'a>(&'a [u8]);

impl Automaton for NoCase<'_> {
    type State = Option<usize>;
    fn start(&self) -> Option<usize> {
        Some(0)
    }
    fn is_match(&self, s: &Option<usize>) -> bool {
        *s == Some(self.0.len())
    }
    fn can_match(&self, s: &Option<usize>) -> bool {
        s.is_some()
    }
    fn accept(&self, s: &Option<usize>, b: u8) -> Option<usize> {
        let i = (*s)?;
        (i < self.0.len() && self.0[i].eq_ignore_ascii_case(&b)).then_some(i + 1)
    }
}

fn decide(names: Vec<Used>, symbol: &str, how: &'static str) -> Option<Fuzzy> {
    let mut names = by_use(names);
    names.retain(|(n, _)| n != symbol);
    names.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut names: Vec<String> = names.into_iter().map(|(n, _)| n).collect();
    match names.len() {
        0 => None,
        1 => Some(Fuzzy::One(names.remove(0), how)),
        _ => {
            names.truncate(10);
            Some(Fuzzy::Several(names))
        }
    }
}

/// How a name was found that is the one asked, only spelled another way (a syscall's name
/// for its `sys_` function, a wrapper prefix), not a guess.
const SYSCALL_NAME: &str = "the system call SYSCALL_DEFINE makes";
const SYSCALL_WRAPPER: &str = "syscall wrapper prefix";

/// True when a name found as `how` says is a guess at what was meant (a near match), not the
/// name asked spelled another way.
pub fn is_guess(how: &str) -> bool {
    how != SYSCALL_NAME && how != SYSCALL_WRAPPER
}

/// The function `SYSCALL_DEFINEn(name, …)` makes for system call `name` (`openat` →
/// `sys_openat`), when `name` itself has no definition: a syscall's name is what people type.
pub fn syscall(q: &Query<'_>, name: &str) -> Option<String> {
    if name.starts_with("sys_") || !q.definitions(name).is_empty() {
        return None;
    }
    let sys = format!("sys_{name}");
    (!q.definitions(&sys).is_empty()).then_some(sys)
}

/// What a tool answers a name from, which decides whether the name is one of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnsweredFrom {
    /// Its definitions: callees, body, reach's start.
    Definitions,
    /// Its mentions or its definitions: refs, callers, impact, reach's target.
    Mentions,
}

/// What a name asked of a tool other than find_definition is answered for: the name itself
/// when the tool can answer it (it has definitions, or mentions for a tool that lists them:
/// `kill` is a parameter's name as well as a system call's), else a system call's function
/// for its name, else a near match for a name the index does not hold at all ([`resolve`]);
/// [`Fuzzy::Nothing`] for a name answered as it is.
pub fn for_tools(q: &Query<'_>, name: &str, from: AnsweredFrom) -> Fuzzy {
    // A name a macro makes (`sys_read`, `folio_test_lru`) is defined with no posting of its own.
    if !q.definitions(name).is_empty() {
        return Fuzzy::Nothing;
    }
    let sys = syscall(q, name);
    let mentioned = mentioned_beside(q, name, sys.as_deref());
    if mentioned && from == AnsweredFrom::Mentions {
        return Fuzzy::Nothing;
    }
    if let Some(sys) = sys {
        return Fuzzy::One(sys, SYSCALL_NAME);
    }
    if mentioned {
        return Fuzzy::Nothing;
    }
    resolve(q, name)
}

/// True when `name` is mentioned anywhere but on the lines that define `made`: the `openat`
/// of `SYSCALL_DEFINE4(openat, …)` names the system call `sys_openat`, it is no use of its own.
fn mentioned_beside(q: &Query<'_>, name: &str, made: Option<&str>) -> bool {
    let lines: Vec<(usize, u32, u32)> = made
        .map(|m| q.definitions(m))
        .unwrap_or_default()
        .iter()
        .map(|f| (f.seg, f.def.file, f.def.line))
        .collect();
    q.postings_iter(name)
        .any(|(s, p)| !lines.contains(&(s, p.file, p.line)))
}

/// Resolves `symbol`, which has no definition of its own.
pub fn resolve(q: &Query<'_>, symbol: &str) -> Fuzzy {
    if let Some(sys) = syscall(q, symbol) {
        return Fuzzy::One(sys, SYSCALL_NAME);
    }
    for (prefix, to) in SYSCALL_PREFIXES {
        if let Some(rest) = symbol.strip_prefix(prefix) {
            let name = format!("{to}{rest}");
            if !q.definitions(&name).is_empty() {
                return Fuzzy::One(name, SYSCALL_WRAPPER);
            }
        }
    }
    let mut names = Vec::new();
    collect_defined(q, NoCase(symbol.as_bytes()), 20, &mut names);
    if let Some(f) = decide(names, symbol, "case-insensitive match") {
        return f;
    }
    for (edits, how) in [(1, "one edit away"), (2, "two edits away")] {
        if edits > edits_allowed(symbol) {
            break;
        }
        let mut names = Vec::new();
        collect_defined(q, Within::new(symbol.as_bytes(), edits), 20, &mut names);
        if let Some(f) = decide(names, symbol, how) {
            return f;
        }
    }
    Fuzzy::Nothing
}

/// A name as people write it, read as the identifier it names: `struct file_operations` (the
/// tag, `tag` set to `struct`), `vfs_read()` and `vfs_read(` (a call), `&init_task` and `*p`.
#[derive(Debug, PartialEq, Eq)]
pub struct Written<'a> {
    /// The identifier.
    pub name: &'a str,
    /// `struct`, `union` or `enum` when the name was written as a tag.
    pub tag: Option<&'static str>,
}

/// `symbol` read as [`Written`]; None when it is not one of those shapes (a plain name, a
/// member, anything else).
pub fn as_written(symbol: &str) -> Option<Written<'_>> {
    let mut s = symbol.trim();
    let mut tag = None;
    for word in ["struct", "union", "enum"] {
        if let Some(rest) = s.strip_prefix(word) {
            if rest.starts_with([' ', '\t']) {
                tag = Some(word);
                s = rest.trim_start();
                break;
            }
        }
    }
    if tag.is_none() {
        s = s.trim_start_matches(['&', '*', ' ']);
        // A call as written: `f()`, `f(`, `f(a, b)`.
        if let Some((name, args)) = s.split_once('(') {
            if args.is_empty() || args.ends_with(')') {
                s = name.trim_end();
            }
        }
    }
    (s != symbol && super::lookup::valid_name(s)).then_some(Written { name: s, tag })
}

/// `struct_name.member` (also `->` or `::`): the member's definitions in that struct or union.
pub fn split_member(symbol: &str) -> Option<(&str, &str)> {
    let (s, m) = symbol
        .split_once("->")
        .or_else(|| symbol.split_once("::"))
        .or_else(|| symbol.split_once('.'))?;
    let s = s
        .trim()
        .trim_start_matches("struct ")
        .trim_start_matches("union ")
        .trim();
    let m = m.trim();
    let ident =
        |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    (ident(s) && ident(m)).then_some((s, m))
}

/// The definitions of member `member` of struct or union `owner`.
pub fn member_definitions<'s>(q: &Query<'s>, owner: &str, member: &'s str) -> Vec<Found<'s>> {
    q.definitions(member)
        .into_iter()
        .filter(|f| f.def.kind == Kind::Member && f.def.scope == Some(owner))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_syntax_is_split_three_ways() {
        assert_eq!(
            split_member("file_operations.read_iter"),
            Some(("file_operations", "read_iter"))
        );
        assert_eq!(split_member("struct file->f_pos"), Some(("file", "f_pos")));
        assert_eq!(split_member("page::flags"), Some(("page", "flags")));
        assert_eq!(split_member("a.b.c"), None);
        assert_eq!(split_member("kmap"), None);
    }

    #[test]
    fn names_as_people_write_them_are_read_as_identifiers() {
        let w = |name, tag| Some(Written { name, tag });
        assert_eq!(
            as_written("struct file_operations"),
            w("file_operations", Some("struct"))
        );
        assert_eq!(
            as_written(" union  bpf_attr "),
            w("bpf_attr", Some("union"))
        );
        assert_eq!(as_written("enum pid_type"), w("pid_type", Some("enum")));
        assert_eq!(as_written("vfs_read()"), w("vfs_read", None));
        assert_eq!(as_written("vfs_read("), w("vfs_read", None));
        assert_eq!(as_written("kfree(ptr)"), w("kfree", None));
        assert_eq!(as_written("&init_task"), w("init_task", None));
        assert_eq!(as_written("*current"), w("current", None));
        for unchanged in [
            "kmap",
            "structure",
            "struct",
            "a b",
            "f(x",
            "sk_buff.len",
            "",
        ] {
            assert_eq!(as_written(unchanged), None, "{unchanged}");
        }
    }

    #[test]
    fn the_case_insensitive_automaton_matches_whole_names_only() {
        let a = NoCase(b"PageDirty");
        let run = |s: &[u8]| {
            let mut st = a.start();
            for &b in s {
                st = a.accept(&st, b);
            }
            a.is_match(&st)
        };
        assert!(run(b"pagedirty") && run(b"PAGEDIRTY") && run(b"PageDirty"));
        assert!(!run(b"pagedirt") && !run(b"pagedirtyx"));
    }
}
