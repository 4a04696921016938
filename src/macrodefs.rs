//! Names that kernel macros create: for each invocation of a definition-making macro the scanner
//! saw outside preprocessor lines (`SYSCALL_DEFINE3(read, …)`), read its arguments from the
//! source and expand its family's names (`sys_read`, `__x64_sys_read`, …) from the table in
//! `ctags/kernel-macros.tsv`.

use knav_ctags::macros::MacroTable;
use knav_ctags::Kind;

use crate::scan::Occurrence;

/// A name made by a macro invocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Made {
    /// The name made.
    pub name: String,
    /// The invocation's line.
    pub line: u32,
    /// What the family makes.
    pub kind: Kind,
    /// The family, for `resolved_via: "macro:FAMILY"`.
    pub family: String,
}

/// Bytes of an invocation's argument list read at most (a `TRACE_EVENT` spans dozens of lines;
/// the names come from its first arguments).
const MAX_ARGS_BYTES: usize = 64 << 10;

/// The names the invocations at `invocations` (indices into `occurrences`) make.
pub fn expand(src: &[u8], occurrences: &[Occurrence], invocations: &[u32]) -> Vec<Made> {
    let table = MacroTable::kernel();
    let mut out = Vec::new();
    for &i in invocations {
        let Some(o) = occurrences.get(i as usize) else {
            continue;
        };
        let start = o.start as usize;
        let macro_name = &src[start..start + o.len as usize];
        let Some(family) = table.family(macro_name) else {
            continue;
        };
        let args = arguments(src, start + o.len as usize, family.max_arg + 1);
        let args: Vec<&str> = args.iter().map(|a| a.as_str()).collect();
        if let Some(names) = family.names(&args) {
            for name in names {
                out.push(Made {
                    name,
                    line: o.line,
                    kind: family.kind,
                    family: family.name.clone(),
                });
            }
        }
    }
    out
}

/// The first `want` top-level arguments of the parenthesised list after `at` (comments and
/// literals skipped, nested brackets kept whole). An argument that is cut (end of file, size cap)
/// is left out.
fn arguments(src: &[u8], at: usize, want: usize) -> Vec<String> {
    let end = src.len().min(at + MAX_ARGS_BYTES);
    let mut i = at;
    while i < end && src[i].is_ascii_whitespace() {
        i += 1;
    }
    if i >= end || src[i] != b'(' {
        return Vec::new();
    }
    i += 1;
    let mut args = Vec::new();
    let mut cur = Vec::new();
    let mut depth = 0usize;
    while i < end && args.len() < want {
        let b = src[i];
        match b {
            b'/' if src.get(i + 1) == Some(&b'*') => {
                i = memchr::memmem::find(&src[i + 2..end], b"*/").map_or(end, |p| i + 2 + p + 2);
                cur.push(b' ');
                continue;
            }
            b'/' if src.get(i + 1) == Some(&b'/') => {
                i = memchr::memchr(b'\n', &src[i..end]).map_or(end, |p| i + p);
                continue;
            }
            b'"' | b'\'' => {
                let from = i;
                i += 1;
                while i < end && src[i] != b {
                    if src[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(end);
                cur.extend_from_slice(&src[from..i]);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            b')' => {
                args.push(String::from_utf8_lossy(&cur).trim().to_string());
                return args;
            }
            b',' if depth == 0 => {
                args.push(String::from_utf8_lossy(&cur).trim().to_string());
                cur.clear();
                i += 1;
                continue;
            }
            b'\\' if src.get(i + 1) == Some(&b'\n') => {
                i += 2;
                continue;
            }
            _ => {}
        }
        cur.push(if b == b'\n' { b' ' } else { b });
        i += 1;
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    fn made(src: &str) -> Vec<(String, u32, String)> {
        let s = scan(src.as_bytes());
        expand(src.as_bytes(), &s.occurrences, &s.invocations)
            .into_iter()
            .map(|m| (m.name, m.line, m.family))
            .collect()
    }

    #[test]
    fn arguments_split_at_top_level_commas_only() {
        let src = b"X( a, f(b, c) /* , */, \"s,t\", [1,2] )";
        assert_eq!(arguments(src, 1, 9), ["a", "f(b, c)", "\"s,t\"", "[1,2]"]);
        assert_eq!(arguments(src, 1, 2), ["a", "f(b, c)"]);
        assert_eq!(
            arguments(b"X(a, b", 1, 9),
            ["a"],
            "a cut argument is left out"
        );
        assert!(arguments(b"X;", 1, 9).is_empty());
    }

    #[test]
    fn invocations_make_names_and_directives_do_not() {
        let src =
            "SYSCALL_DEFINE3(read, unsigned int, fd, char __user *, buf, size_t, count)\n{\n}\n\
                   static DEFINE_MUTEX(cgroup_mutex);\n\
                   PAGEFLAG(Dirty, dirty, PF_HEAD) TESTSCFLAG(Dirty, dirty, PF_HEAD)\n\
                   #define SYSCALL_DEFINE1(name, ...) SYSCALL_DEFINEx(1, _##name, __VA_ARGS__)\n\
                   #define X \\\n  DEFINE_MUTEX(in_a_macro_body)\n\
                   DEFINE_PER_CPU_SHARED_ALIGNED(struct rq, runqueues);\n";
        let m = made(src);
        let names: Vec<&str> = m.iter().map(|(n, _, _)| n.as_str()).collect();
        assert!(names.contains(&"sys_read") && names.contains(&"__do_sys_read"));
        assert!(m.contains(&("cgroup_mutex".into(), 4, "DEFINE_MUTEX".into())));
        assert!(m.contains(&("SetPageDirty".into(), 5, "PAGEFLAG".into())));
        assert!(m.contains(&("TestClearPageDirty".into(), 5, "TESTSCFLAG".into())));
        assert!(m.contains(&("runqueues".into(), 9, "DEFINE_PER_CPU".into())));
        assert!(!names.contains(&"in_a_macro_body"), "{names:?}");
        assert!(!names.iter().any(|n| n.contains("name")), "{names:?}");
    }
}
