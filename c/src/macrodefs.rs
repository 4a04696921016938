//! Names that kernel macros create: for each invocation of a definition-making macro the scanner
//! saw outside preprocessor lines (`SYSCALL_DEFINE3(read, …)`), read its arguments from the
//! source and expand its family's names (`sys_read`, `__x64_sys_read`, …) from the table in
//! `ctags/kernel-macros.tsv`. A function family's body (`SYSCALL_DEFINE3(…) { … }`) gives the
//! name its end line. `EXPORT_TRACEPOINT_SYMBOL(kmalloc)` exports the tracepoint of
//! `trace_kmalloc`, not `kmalloc`. Macros the table does not list are looked up in what was
//! learned from the `#define`s ([`crate::definers`]): a file-scope `M(args) {` or `M(args);`
//! defines what `M`'s definition declares, with `resolved_via: "macro:M"`.

use std::collections::HashMap;

use knav_ctags::macros::MacroTable;
use knav_ctags::Kind;

use crate::definers::{Definers, Learned};
use crate::scan::{FileScan, Occurrence};

/// A name made by a macro invocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Made {
    /// The name made.
    pub name: String,
    /// The invocation's line.
    pub line: u32,
    /// The line of the `}` closing the body that follows the invocation (functions only).
    pub end_line: Option<u32>,
    /// What the family makes.
    pub kind: Kind,
    /// The family, for `resolved_via: "macro:FAMILY"`.
    pub family: String,
}

/// What the invocations of one file make.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    /// Names defined.
    pub made: Vec<Made>,
    /// `(name, line)` of names an `EXPORT_*` macro exports without naming them
    /// (`EXPORT_TRACEPOINT_SYMBOL(kmalloc)` exports `trace_kmalloc`'s tracepoint).
    pub exports: Vec<(String, u32)>,
    /// `LINE: …` notes of invocations that were cut (argument size cap, scan budget).
    pub warnings: Vec<String>,
}

/// Bytes of one argument kept at most (a `TRACE_EVENT` spans dozens of lines; the names come
/// from its first arguments). A longer argument is cut, and the names that need it are not made.
const MAX_ARG_BYTES: usize = 64 << 10;

/// What the invocations of the scanned file `src` make: the table's families, then the macros
/// `learned` knows or the file's own `#define`s (`own`, [`crate::definers::of_file`]) define.
pub fn expand_file(
    src: &[u8],
    scanned: &FileScan,
    learned: Option<&Definers>,
    own: Vec<(String, Learned)>,
) -> Expansion {
    let mut budget = src.len().saturating_mul(8).saturating_add(1 << 20);
    let mut out = expand_with(src, &scanned.occurrences, &scanned.invocations, &mut budget);
    if scanned.file_scope_calls.is_empty() {
        return out;
    }
    let own = (!own.is_empty()).then(|| Definers::resolve(own));
    let aliases = family_aliases(src, scanned, MacroTable::kernel());
    for &i in &scanned.file_scope_calls {
        let Some(o) = scanned.occurrences.get(i as usize) else {
            continue;
        };
        let start = o.start as usize;
        let Some(macro_name) = src.get(start..start + o.len as usize) else {
            continue;
        };
        if let Some(families) = aliases.get(macro_name) {
            // Each `#define` of the alias is one build's (`#ifdef CONFIG_PPC32` … `#else` …):
            // the invocation makes the names of every one.
            for family in families {
                expand_family(src, o, family, &mut budget, &mut out);
            }
            continue;
        }
        let Some(templates) = own
            .as_ref()
            .and_then(|d| d.get(macro_name))
            .or_else(|| learned.and_then(|d| d.get(macro_name)))
        else {
            continue;
        };
        let want = templates
            .iter()
            .flat_map(|t| &t.pieces)
            .filter_map(|p| match p {
                crate::definers::Piece::Arg(k) => Some(k + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let call = read_call(src, start + o.len as usize, want, true, &mut budget);
        // Only `M(args) {` and `M(args);` define: anything else is a use inside an expression.
        if !matches!(call.then, Some(b'{' | b';')) {
            continue;
        }
        let end_line = call
            .body_end
            .map(|end| o.line + memchr::memchr_iter(b'\n', &src[start..end]).count() as u32);
        let args: Vec<&str> = call.args.iter().map(|a| a.as_str()).collect();
        let family = String::from_utf8_lossy(macro_name).into_owned();
        let mut body_given = false;
        for t in templates {
            let Some(name) = t.name(&args) else {
                continue;
            };
            let (kind, end) = match (t.open, call.then) {
                (true, Some(b'{')) if !body_given => {
                    body_given = true;
                    (Kind::Function, end_line)
                }
                (true, Some(b'{')) => (Kind::Function, None),
                (true, _) => (Kind::Prototype, None),
                (false, _) => (t.kind, None),
            };
            if out.made.iter().any(|m| m.name == name && m.line == o.line) {
                continue;
            }
            out.made.push(Made {
                name,
                line: o.line,
                end_line: end,
                kind,
                family: family.clone(),
            });
        }
    }
    out
}

/// What the invocations at `invocations` (indices into `occurrences`) of the table's families
/// make.
pub fn expand(src: &[u8], occurrences: &[Occurrence], invocations: &[u32]) -> Expansion {
    let mut budget = src.len().saturating_mul(8).saturating_add(1 << 20);
    expand_with(src, occurrences, invocations, &mut budget)
}

/// [`expand`] with a scan budget: bytes the argument and body readers may visit in this file,
/// which keeps the work linear in its size however the invocations nest or fail to close.
fn expand_with(
    src: &[u8],
    occurrences: &[Occurrence],
    invocations: &[u32],
    budget: &mut usize,
) -> Expansion {
    let table = MacroTable::kernel();
    let mut out = Expansion::default();
    for &i in invocations {
        let Some(o) = occurrences.get(i as usize) else {
            continue;
        };
        let start = o.start as usize;
        let Some(macro_name) = src.get(start..start + o.len as usize) else {
            continue;
        };
        let after = start + o.len as usize;
        if crate::scan::is_tracepoint_export(macro_name) {
            let call = read_call(src, after, 1, false, budget);
            if let Some(tp) = call.args.first().filter(|a| is_ident(a)) {
                out.exports.push((format!("trace_{tp}"), o.line));
            }
            continue;
        }
        let Some(family) = table.family(macro_name) else {
            continue;
        };
        expand_family(src, o, family, budget, &mut out);
    }
    out
}

/// What invocation `o` of `family`'s macro (or of an alias of it) makes, into `out`.
fn expand_family(
    src: &[u8],
    o: &Occurrence,
    family: &knav_ctags::macros::Family,
    budget: &mut usize,
    out: &mut Expansion,
) {
    let start = o.start as usize;
    let after = start + o.len as usize;
    let macro_name = &src[start..after];
    {
        let function = family.kind == Kind::Function;
        let call = read_call(src, after, family.max_arg + 1, function, budget);
        if let Some(why) = call.cut {
            out.warnings.push(format!(
                "{}: {} invocation cut ({why})",
                o.line,
                String::from_utf8_lossy(macro_name)
            ));
        }
        let end_line = call
            .body_end
            .map(|end| o.line + memchr::memchr_iter(b'\n', &src[start..end]).count() as u32);
        let args: Vec<&str> = call.args.iter().map(|a| a.as_str()).collect();
        if let Some(names) = family.names(&args) {
            // The body belongs to the first name (`sys_read`, not `__do_sys_read`): one caller.
            for (k, name) in names.into_iter().enumerate() {
                out.made.push(Made {
                    name,
                    line: o.line,
                    end_line: end_line.filter(|_| function && k == 0),
                    kind: family.kind,
                    family: family.name.clone(),
                });
            }
        }
    }
}

/// The file's object-like `#define`s whose body is the name of a table family's macro
/// (powerpc's `#define PPC32_SYSCALL_DEFINE6 SYSCALL_DEFINE6`): alias name → those families, in
/// the order of the `#define`s (an alias defined under `#ifdef` and again under `#else` has
/// two).
fn family_aliases<'t>(
    src: &[u8],
    scanned: &FileScan,
    table: &'t MacroTable,
) -> HashMap<Vec<u8>, Vec<&'t knav_ctags::macros::Family>> {
    let mut out: HashMap<Vec<u8>, Vec<&knav_ctags::macros::Family>> = HashMap::new();
    for m in scanned.macros.iter().filter(|m| m.signature.is_none()) {
        let name_end = m.start as usize + m.len as usize;
        let Some(rest) = src.get(name_end..) else {
            continue;
        };
        let line_end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let body = rest[..line_end].trim_ascii();
        if let Some(f) = table.family(body) {
            let families = out
                .entry(src[m.start as usize..name_end].to_vec())
                .or_default();
            if !families.iter().any(|g| std::ptr::eq(*g, f)) {
                families.push(f);
            }
        }
    }
    out
}

/// True for a plain C identifier.
fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && !s.as_bytes()[0].is_ascii_digit()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An invocation's argument list as read.
#[derive(Debug, Default)]
struct Call {
    /// The first top-level arguments, complete ones only.
    args: Vec<String>,
    /// Why the reading stopped short, if it did.
    cut: Option<&'static str>,
    /// Offset just past the `}` of the body that follows the list (when asked for).
    body_end: Option<usize>,
    /// The first byte after the list, past blanks and comments (when asked for a body).
    then: Option<u8>,
}

/// Reads the parenthesised list after `at`: its first `want` top-level arguments (comments and
/// literals skipped, nested brackets kept whole) and, with `body`, the end of a `{ … }` that
/// follows it. An argument that is cut (end of file, size cap, budget) is left out; every byte
/// visited is taken from `budget`.
fn read_call(src: &[u8], at: usize, want: usize, body: bool, budget: &mut usize) -> Call {
    let mut call = Call::default();
    let mut i = skip_blank(src, at, budget);
    if src.get(i) != Some(&b'(') {
        return call;
    }
    i += 1;
    let mut collecting = want > 0;
    let mut cur = Vec::new();
    let mut depth = 0usize;
    let close = loop {
        if i >= src.len() {
            break None;
        }
        if *budget == 0 {
            call.cut = Some("scan budget spent");
            break None;
        }
        *budget -= 1;
        let from = i;
        // What the byte (or comment, literal) adds to the argument: comments and line breaks
        // become a blank, a line continuation nothing.
        let kept: &[u8] = match src[i] {
            b'/' if src.get(i + 1) == Some(&b'*') => {
                i = crate::lex::block_comment_end(src, i);
                b" "
            }
            b'/' if src.get(i + 1) == Some(&b'/') => {
                i = crate::lex::line_comment_end(src, i);
                b" "
            }
            b'"' | b'\'' => {
                i = literal_end(src, i);
                &src[from..i]
            }
            b'\\' if src.get(i + 1) == Some(&b'\n') => {
                i += 2;
                b""
            }
            b'\n' => {
                i += 1;
                b" "
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
                &src[from..i]
            }
            b')' | b']' | b'}' if depth > 0 => {
                depth -= 1;
                i += 1;
                &src[from..i]
            }
            b')' => break Some(i + 1),
            b',' if depth == 0 => {
                i += 1;
                if collecting {
                    call.args
                        .push(String::from_utf8_lossy(&cur).trim().to_string());
                    cur.clear();
                    collecting = call.args.len() < want;
                    if !collecting && !body {
                        return call;
                    }
                }
                continue;
            }
            _ => {
                i += 1;
                &src[from..i]
            }
        };
        *budget = budget.saturating_sub(i - from - 1);
        if collecting {
            if cur.len() + kept.len() > MAX_ARG_BYTES {
                call.cut = Some("an argument over 64 KiB");
                collecting = false;
            } else {
                cur.extend_from_slice(kept);
            }
        }
    };
    let Some(close) = close else {
        return call;
    };
    if collecting {
        call.args
            .push(String::from_utf8_lossy(&cur).trim().to_string());
    }
    if body {
        call.then = src.get(skip_blank(src, close, budget)).copied();
        call.body_end = body_end(src, close, budget);
        if call.body_end.is_none() && *budget == 0 {
            call.cut = Some("scan budget spent");
        }
    }
    call
}

/// Past the blanks, line continuations and comments from `at`.
fn skip_blank(src: &[u8], mut i: usize, budget: &mut usize) -> usize {
    let from = i;
    while i < src.len() {
        match src[i] {
            b if b.is_ascii_whitespace() => i += 1,
            b'\\' if src.get(i + 1) == Some(&b'\n') => i += 2,
            b'/' if src.get(i + 1) == Some(&b'*') => i = crate::lex::block_comment_end(src, i),
            _ => break,
        }
    }
    *budget = budget.saturating_sub(i - from);
    i
}

/// Past the closing quote of the literal opening at `i`; an unterminated one ends past its
/// line's newline.
fn literal_end(src: &[u8], i: usize) -> usize {
    match crate::lex::literal_end(src, i) {
        (end, true) => end,
        (nl, false) => (nl + 1).min(src.len()),
    }
}

/// Past the `}` of a body `{ … }` that follows `at` (blanks and comments between), if any.
fn body_end(src: &[u8], at: usize, budget: &mut usize) -> Option<usize> {
    let mut i = skip_blank(src, at, budget);
    if src.get(i) != Some(&b'{') {
        return None;
    }
    let mut depth = 0usize;
    while i < src.len() && *budget > 0 {
        let from = i;
        match src[i] {
            b'/' if src.get(i + 1) == Some(&b'*') => i = crate::lex::block_comment_end(src, i),
            b'/' if src.get(i + 1) == Some(&b'/') => {
                i = crate::lex::line_comment_end(src, i);
            }
            b'"' | b'\'' => i = literal_end(src, i),
            b'{' => {
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
        *budget = budget.saturating_sub(i - from);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    fn made(src: &str) -> Vec<(String, u32, String)> {
        let s = scan(src.as_bytes());
        expand(src.as_bytes(), &s.occurrences, &s.invocations)
            .made
            .into_iter()
            .map(|m| (m.name, m.line, m.family))
            .collect()
    }

    fn arguments(src: &[u8], at: usize, want: usize) -> Vec<String> {
        read_call(src, at, want, false, &mut { usize::MAX }).args
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
        assert_eq!(arguments(b"X(a /* x */ * b)", 1, 1), ["a   * b"]);
    }

    #[test]
    fn a_comment_opening_at_the_end_of_the_file_does_not_panic() {
        // The old reader sliced `src[i + 2..end]` with `i + 2 > end` when `/*` straddled its
        // 64 KiB window.
        for pad in (MAX_ARG_BYTES - 4)..(MAX_ARG_BYTES + 4) {
            let mut src = b"DEFINE_MUTEX(".to_vec();
            src.resize(src.len() + pad, b'a');
            src.extend_from_slice(b"/*");
            let s = scan(&src);
            let e = expand(&src, &s.occurrences, &s.invocations);
            assert!(e.made.is_empty());
            src.pop();
            let s = scan(&src);
            expand(&src, &s.occurrences, &s.invocations);
        }
    }

    #[test]
    fn a_syscall_with_arguments_over_64_kib_keeps_its_body_lines() {
        let args: Vec<String> = (0..9000).map(|i| format!("int, a{i}")).collect();
        let src = format!(
            "SYSCALL_DEFINE3(bigcall, {})\n{{\n\tvfs_read(1);\n\treturn 0;\n}}\n",
            args.join(", ")
        );
        assert!(src.len() > 100_000);
        let s = scan(src.as_bytes());
        let e = expand(src.as_bytes(), &s.occurrences, &s.invocations);
        let sys = e.made.iter().find(|m| m.name == "sys_bigcall").unwrap();
        assert_eq!((sys.line, sys.end_line), (1, Some(5)));
        assert!(
            e.warnings.is_empty(),
            "the name needs only the first argument"
        );
    }

    #[test]
    fn an_argument_over_the_cap_is_cut_and_the_cut_stated() {
        let src = format!(
            "int a;\nDEFINE_PER_CPU(struct {{ {} }}, big_one);\nDEFINE_PER_CPU(int, small_one);\n",
            "int x; ".repeat(10_000)
        );
        let s = scan(src.as_bytes());
        let e = expand(src.as_bytes(), &s.occurrences, &s.invocations);
        let names: Vec<&str> = e.made.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["small_one"]);
        assert_eq!(
            e.warnings,
            ["2: DEFINE_PER_CPU invocation cut (an argument over 64 KiB)"]
        );
    }

    #[test]
    fn unclosed_invocations_cost_linear_time() {
        // Each `DEFINE_MUTEX(` left open read to the end of the file: quadratic.
        let src = "DEFINE_MUTEX(\n".repeat(40_000);
        let s = scan(src.as_bytes());
        let started = std::time::Instant::now();
        let e = expand(src.as_bytes(), &s.occurrences, &s.invocations);
        assert!(e.made.is_empty());
        assert!(e
            .warnings
            .iter()
            .any(|w| w.ends_with("(scan budget spent)")));
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    }

    #[test]
    fn a_tracepoint_export_exports_trace_name_not_the_argument() {
        let src = "EXPORT_TRACEPOINT_SYMBOL(kmalloc);\nEXPORT_TRACEPOINT_SYMBOL_GPL(kfree);\n";
        let s = scan(src.as_bytes());
        let e = expand(src.as_bytes(), &s.occurrences, &s.invocations);
        assert_eq!(
            e.exports,
            [
                ("trace_kmalloc".to_string(), 1),
                ("trace_kfree".to_string(), 2)
            ]
        );
        assert!(e.made.is_empty());
    }

    proptest::proptest! {
        #[test]
        fn expansion_of_any_bytes_does_not_panic(
            src in proptest::collection::vec(proptest::prop_oneof![
                proptest::sample::select(vec![
                    b'(', b')', b'{', b'}', b',', b'/', b'*', b'"', b'\'', b'\\', b'\n', b' ',
                    b'a', b'#',
                ]),
                proptest::num::u8::ANY,
            ], 0..400),
            prefix in proptest::sample::select(vec![
                "SYSCALL_DEFINE1(", "DEFINE_MUTEX(", "EXPORT_TRACEPOINT_SYMBOL(", "PAGEFLAG(",
            ]),
        ) {
            let mut bytes = prefix.as_bytes().to_vec();
            bytes.extend_from_slice(&src);
            let s = scan(&bytes);
            let e = expand(&bytes, &s.occurrences, &s.invocations);
            for m in &e.made {
                proptest::prop_assert!(m.end_line.is_none_or(|end| end >= m.line));
            }
        }
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
