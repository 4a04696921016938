//! The text of one function inside its lines: from its name to the `}` that closes its body,
//! so that a function sharing a line with other code (a generated or minified file, a 60 MB
//! line) is read alone, in time linear in the bytes before its end.
//!
//! ctags gives a function's first and last lines, not its bytes. The name is looked for on the
//! first line outside comments and literals; the body is the first `{ … }` after it outside
//! parentheses. The closing `}` cuts the last line only when it is on the last line ctags gave:
//! braces in both branches of an `#if` can make the count close early or late, and then the
//! whole lines are kept as before.

use super::lookup::Found;
use super::source::SourceText;
use super::Query;
use knav_ctags::macros::MacroTable;

/// A function's text.
#[derive(Debug, PartialEq, Eq)]
pub struct Span {
    /// The text, its lines joined with `\n`.
    pub text: Vec<u8>,
    /// The offset in `text` of the function's name; `None` when its first line does not name it
    /// (a macro made it: `SYSCALL_DEFINE3(read, …)` defines `sys_read`).
    pub name_at: Option<usize>,
    /// Bytes of the first line left out before `text` (the name was far along it).
    pub skipped: usize,
    /// Bytes of the last line left out after the closing `}`.
    pub dropped: usize,
}

/// Where the lexer is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lex {
    Code,
    BlockComment,
    /// A `//` comment continued onto this line.
    LineComment,
    /// A string or character literal closed by this quote.
    Literal(u8),
}

/// What is being looked for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seek {
    /// The body's `{`, outside parentheses (`parens` deep now).
    Open { parens: u32 },
    /// The `}` that closes the body (`depth` braces open).
    Close { depth: u32 },
}

/// The text of the function `name` on lines `line..=end` of `src`. With `braces` the text ends
/// at the body's closing `}` when that is on line `end`; the first line is kept whole unless the
/// name lies more than `keep_before` bytes along it. `None` when the lines are not in `src`.
pub fn function_span(
    src: &SourceText,
    line: u32,
    end: u32,
    name: &str,
    braces: bool,
    keep_before: usize,
) -> Option<Span> {
    let first = src.line(line)?;
    let mut name_pos = find_name(first, 0, name.as_bytes());
    let mut close = None;
    // Each round either ends or moves to a later mention of the name.
    loop {
        if !braces {
            break;
        }
        let from = name_pos.map_or(0, |p| p + name.len());
        match closing_brace(src, line, end, from) {
            Ok(c) => close = c,
            // A declaration first (`int f(void); int f(void) { … }`): the next mention.
            Err(()) => {
                name_pos = name_pos.and_then(|_| find_name(first, from, name.as_bytes()));
                if name_pos.is_some() {
                    continue;
                }
            }
        }
        break;
    }
    let start = match name_pos {
        Some(p) if p > keep_before => p,
        _ => 0,
    };
    let mut text = Vec::new();
    let mut dropped = 0;
    for n in line..=end.max(line) {
        let Some(l) = src.line(n) else { break };
        let from = if n == line { start } else { 0 };
        let to = match close {
            Some((cl, at)) if cl == n && n == end => at + 1,
            _ => l.len(),
        };
        if n > line {
            text.push(b'\n');
        }
        text.extend_from_slice(&l[from..to.max(from)]);
        dropped = l.len() - to.max(from);
    }
    Some(Span {
        text,
        name_at: name_pos.map(|p| p - start),
        skipped: start,
        dropped,
    })
}

/// A macro invocation that made a definition: `SYSCALL_DEFINE3(read, …) { … }`,
/// `TRACE_EVENT(sched_switch, …);`, `PAGEFLAG(Dirty, dirty, PF_HEAD)`.
#[derive(Debug, PartialEq, Eq)]
pub struct Invocation {
    /// The macro invoked.
    pub macro_name: String,
    /// Its arguments as written, trimmed (at most [`MAX_ARGS`], each cut at [`MAX_ARG_BYTES`]).
    pub args: Vec<String>,
    /// The line of the `{` of the body that follows the invocation, when one does.
    pub body: Option<u32>,
    /// The last line: of the `}` closing that body, the `;` ending the invocation, or its `)`.
    pub end: u32,
    /// The text from the macro's name to its end, its lines joined with `\n`.
    pub text: Vec<u8>,
}

/// Arguments of an [`Invocation`] kept.
pub const MAX_ARGS: usize = 16;
/// Bytes of an argument kept.
pub const MAX_ARG_BYTES: usize = 256;

/// Where an invocation's reading is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Inside its arguments, `depth` parentheses deep.
    Args { depth: u32 },
    /// After its `)`: a `{`, a `;` or anything else decides.
    After,
    /// Inside the body, `depth` braces deep.
    Body { depth: u32 },
}

/// The first invocation on line `line` of `src` of a macro `is_macro` accepts that `made`
/// accepts, read to its end on a line up to `last` ([`read_invocation`]). `None` when there is
/// none.
pub fn invocation(
    src: &SourceText,
    line: u32,
    last: u32,
    is_macro: impl Fn(&[u8]) -> bool,
    made: impl Fn(&Invocation) -> bool,
) -> Option<Invocation> {
    let first = src.line(line)?;
    let mut from = 0;
    loop {
        let (start, open) = invoked_macro(first, from, &is_macro)?;
        if let Some(inv) = read_invocation(src, line, last, (start, open)) {
            if made(&inv) {
                return Some(inv);
            }
        }
        from = open + 1;
    }
}

/// The invocation whose macro's name starts at byte `at.0` of line `line` of `src` and whose
/// `(` is at `at.1`, read to its end on a line up to `last`: its arguments balanced, then a
/// `{ … }` body or a `;` when one follows. `None` when its arguments (or the body) do not end
/// by `last`.
fn read_invocation(
    src: &SourceText,
    line: u32,
    last: u32,
    (start, open): (usize, usize),
) -> Option<Invocation> {
    let first = src.line(line)?;
    let macro_name = String::from_utf8_lossy(&first[start..open])
        .trim()
        .to_string();
    let mut lex = Lex::Code;
    let mut part = Part::Args { depth: 0 };
    let mut args: Vec<Vec<u8>> = Vec::new();
    let mut text = Vec::new();
    let mut body = None;
    // The line of the `)` and the text's length after it.
    let mut closed = (line, 0usize);
    for n in line..=last.max(line) {
        let Some(l) = src.line(n) else { break };
        let from = if n == line { start } else { 0 };
        if n > line {
            text.push(b'\n');
        }
        let mut i = if n == line { open } else { 0 };
        while i < l.len() {
            let next = step(l, i, &mut lex).max(i + 1);
            let code = next == i + 1 && lex == Lex::Code;
            let b = l[i];
            if let (Part::Args { depth: d @ 1.. }, Some(arg)) = (part, args.last_mut()) {
                let edge = code && d == 1 && matches!(b, b',' | b')');
                if !edge && arg.len() < MAX_ARG_BYTES {
                    arg.extend_from_slice(&l[i..next.min(l.len())]);
                }
            }
            let mut cut = None;
            part = match (part, b) {
                (Part::Args { depth }, b'(') if code => {
                    if depth == 0 {
                        args.push(Vec::new());
                    }
                    Part::Args { depth: depth + 1 }
                }
                (Part::Args { depth: 1 }, b')') if code => {
                    closed = (n, text.len() + i + 1 - from);
                    Part::After
                }
                (Part::Args { depth }, b')') if code => Part::Args {
                    depth: depth.saturating_sub(1),
                },
                (Part::Args { depth: 1 }, b',') if code => {
                    args.push(Vec::new());
                    part
                }
                (Part::After, b'{') if code => {
                    body = Some(n);
                    Part::Body { depth: 1 }
                }
                (Part::After, b';') if code => {
                    cut = Some(i + 1);
                    part
                }
                (Part::After, b' ' | b'\t' | b'\r' | b'\\') => part,
                (Part::After, _) if code => {
                    // Something else follows: the invocation ended at its `)`.
                    if closed.0 == n {
                        text.extend_from_slice(&l[from..]);
                    }
                    text.truncate(closed.1);
                    return Some(finish(macro_name, args, body, closed.0, text));
                }
                (Part::Body { depth: 1 }, b'}') if code => {
                    cut = Some(i + 1);
                    part
                }
                (Part::Body { depth }, b'{') if code => Part::Body { depth: depth + 1 },
                (Part::Body { depth }, b'}') if code => Part::Body { depth: depth - 1 },
                (p, _) => p,
            };
            if let Some(to) = cut {
                text.extend_from_slice(&l[from..to]);
                return Some(finish(macro_name, args, body, n, text));
            }
            i = next;
        }
        text.extend_from_slice(&l[from..]);
    }
    if part != Part::After {
        return None;
    }
    text.truncate(closed.1);
    Some(finish(macro_name, args, body, closed.0, text))
}

/// The [`Invocation`] read.
fn finish(
    macro_name: String,
    args: Vec<Vec<u8>>,
    body: Option<u32>,
    end: u32,
    mut text: Vec<u8>,
) -> Invocation {
    while text.last().is_some_and(|b| b.is_ascii_whitespace()) {
        text.pop();
    }
    Invocation {
        macro_name,
        args: (args.iter().take(MAX_ARGS))
            .map(|a| String::from_utf8_lossy(a).trim().to_string())
            .collect(),
        body,
        end,
        text,
    }
}

/// Lines an invocation is read over at most ([`made_by`]).
pub const MAX_INVOCATION_LINES: u32 = 300;

/// The invocation of the macro that made `f` (its `via`: a family of the kernel's table or a
/// macro learned from its `#define`), read from `f`'s line; `None` for a definition no macro
/// made, or an invocation that does not end within [`MAX_INVOCATION_LINES`].
pub fn made_by(q: &Query<'_>, f: &Found<'_>) -> Option<Invocation> {
    let via = f.def.via?;
    let last = f.def.line.saturating_add(MAX_INVOCATION_LINES - 1);
    let src = q.text_at(f.seg, f.def.file, f.def.line, last)?;
    let family = |m: &[u8]| MacroTable::kernel_family(m).filter(|fam| fam.name == via);
    let is_macro = |m: &[u8]| m == via.as_bytes() || family(m).is_some();
    // Of several on the line (`PAGEFLAG(Dirty, …) PAGEFLAG(LRU, …)`), the one that makes the
    // name: by the family's templates, or (a macro learned from its `#define`) by an
    // identifier argument the name holds.
    let name = f.def.name;
    let made = |inv: &Invocation| {
        let args: Vec<&str> = inv.args.iter().map(String::as_str).collect();
        match family(inv.macro_name.as_bytes()) {
            Some(fam) => fam
                .names(&args)
                .is_some_and(|n| n.iter().any(|n| n == name)),
            None => args.iter().any(|a| {
                !a.is_empty()
                    && a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && name.contains(a)
            }),
        }
    };
    invocation(&src, f.def.line, last, is_macro, made)
}

/// The start of the first identifier on `line` from byte `from` (outside comments and literals) that
/// `is_macro` accepts and that a `(` follows, and the offset of that `(`.
fn invoked_macro(
    line: &[u8],
    from: usize,
    is_macro: impl Fn(&[u8]) -> bool,
) -> Option<(usize, usize)> {
    let mut lex = Lex::Code;
    let mut i = from;
    while i < line.len() {
        if lex == Lex::Code && is_ident(line[i]) {
            let s = i;
            while i < line.len() && is_ident(line[i]) {
                i += 1;
            }
            let mut j = i;
            while matches!(line.get(j), Some(b' ' | b'\t')) {
                j += 1;
            }
            if line.get(j) == Some(&b'(') && is_macro(&line[s..i]) {
                return Some((s, j));
            }
            continue;
        }
        i = step(line, i, &mut lex);
    }
    None
}

/// The byte offset of identifier `name` on `line` outside comments and literals, from byte
/// `from` (where code starts).
pub fn find_name(line: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut lex = Lex::Code;
    let mut i = from;
    while i < line.len() {
        let b = line[i];
        match lex {
            Lex::Code if is_ident(b) => {
                let s = i;
                while i < line.len() && is_ident(line[i]) {
                    i += 1;
                }
                if &line[s..i] == name {
                    return Some(s);
                }
                continue;
            }
            _ => i = step(line, i, &mut lex),
        }
    }
    None
}

/// `(line, byte)` of the `}` closing the first `{ … }` outside parentheses after byte `from`
/// of line `line`, on lines up to `end`; `None` when it does not close by then. A `;` before
/// the `{` (a declaration) is an error.
fn closing_brace(
    src: &SourceText,
    line: u32,
    end: u32,
    from: usize,
) -> Result<Option<(u32, usize)>, ()> {
    let mut lex = Lex::Code;
    let mut seek = Seek::Open { parens: 0 };
    for n in line..=end.max(line) {
        let Some(l) = src.line(n) else {
            return Ok(None);
        };
        let mut i = if n == line { from.min(l.len()) } else { 0 };
        while i < l.len() {
            if lex == Lex::Code {
                seek = match (seek, l[i]) {
                    (Seek::Open { parens }, b'(') => Seek::Open { parens: parens + 1 },
                    (Seek::Open { parens }, b')') => Seek::Open {
                        parens: parens.saturating_sub(1),
                    },
                    (Seek::Open { parens: 0 }, b'{') => Seek::Close { depth: 1 },
                    (Seek::Open { parens: 0 }, b';') => return Err(()),
                    (Seek::Close { depth }, b'{') => Seek::Close { depth: depth + 1 },
                    (Seek::Close { depth: 1 }, b'}') => return Ok(Some((n, i))),
                    (Seek::Close { depth }, b'}') => Seek::Close { depth: depth - 1 },
                    (s, _) => s,
                };
            }
            i = step(l, i, &mut lex);
        }
    }
    Ok(None)
}

/// Moves past byte `i` of `line` (a comment or a literal at once, through [`knav_c::lex`]),
/// updating `lex` for the next line when one goes on past the line's end: a block comment not
/// closed, a `//` comment or a literal whose line ends in a backslash.
fn step(line: &[u8], i: usize, lex: &mut Lex) -> usize {
    let b = line[i];
    let next = line.get(i + 1).copied();
    match *lex {
        Lex::Code => match (b, next) {
            (b'/', Some(b'/')) => {
                if knav_c::lex::continues(line) {
                    *lex = Lex::LineComment;
                }
                line.len()
            }
            (b'/', Some(b'*')) => comment_from(line, i + 2, lex),
            (b'"' | b'\'', _) => literal_from(line, i + 1, b, lex),
            _ => i + 1,
        },
        Lex::BlockComment => comment_from(line, i, lex),
        Lex::LineComment => {
            if !knav_c::lex::continues(line) {
                *lex = Lex::Code;
            }
            line.len()
        }
        Lex::Literal(q) => literal_from(line, i, q, lex),
    }
}

/// Past the `*/` at or after byte `from` of `line`, or its end (the comment goes on).
fn comment_from(line: &[u8], from: usize, lex: &mut Lex) -> usize {
    match knav_c::lex::block_comment_rest(line, from.min(line.len())) {
        Some(end) => {
            *lex = Lex::Code;
            end
        }
        None => {
            *lex = Lex::BlockComment;
            line.len()
        }
    }
}

/// Past the closing `quote` at or after byte `from` of `line`, or its end: an unclosed literal
/// ends with its line unless a backslash continues it.
fn literal_from(line: &[u8], from: usize, quote: u8, lex: &mut Lex) -> usize {
    let (end, closed) = knav_c::lex::literal_rest(line, from, quote);
    *lex = if closed || !knav_c::lex::continues(line) {
        Lex::Code
    } else {
        Lex::Literal(quote)
    };
    end
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(text: &str, line: u32, end: u32, name: &str, keep: usize) -> Span {
        // One file a call: named by the text's length alone, two tests running at once with
        // texts of one length removed each other's file (the suite's rare failure under load).
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let file = format!("knav-span-{}-{n}", std::process::id());
        let path = std::env::temp_dir().join(&file);
        std::fs::write(&path, text).unwrap();
        let src = SourceText::read(&std::env::temp_dir(), &file).unwrap();
        let _ = std::fs::remove_file(&path);
        function_span(&src, line, end, name, true, keep).unwrap()
    }

    fn s(sp: &Span) -> &str {
        std::str::from_utf8(&sp.text).unwrap()
    }

    #[test]
    fn a_continued_line_comment_or_literal_hides_the_next_lines_braces() {
        let text = "int f(void)\n{\n\tg(); // note \\\n\t}\n\ts(\"a\\\n}\");\n\treturn 0;\n}\n";
        let file = format!("knav-span-cont-{}", std::process::id());
        let path = std::env::temp_dir().join(&file);
        std::fs::write(&path, text).unwrap();
        let src = SourceText::read(&std::env::temp_dir(), &file).unwrap();
        let _ = std::fs::remove_file(&path);
        // The `}` on line 4 is in the comment, the one on line 6 in the string.
        assert_eq!(closing_brace(&src, 1, 8, 0), Ok(Some((8, 0))));
    }

    #[test]
    fn a_function_sharing_its_line_is_cut_at_its_own_braces() {
        let one =
            "int f(void) { return g(\"}\"); } /* f( */ int h(void) { return k('}'); } int z;\n";
        let sp = span(one, 1, 1, "h", 0);
        assert_eq!(s(&sp), "h(void) { return k('}'); }");
        assert_eq!((sp.name_at, sp.skipped, sp.dropped), (Some(0), 44, 7));
        let sp = span(one, 1, 1, "f", 100);
        assert_eq!(s(&sp), "int f(void) { return g(\"}\"); }");
        // Kept whole before the name when it is near the line's start.
        let sp = span(one, 1, 1, "h", 100);
        assert!(s(&sp).starts_with("int f(void)"), "{}", s(&sp));
        // A declaration on the line before the definition is passed over.
        let sp = span("int f(void); int f(void) { g(); } int y;\n", 1, 1, "f", 0);
        assert_eq!(s(&sp), "f(void) { g(); }");
    }

    #[test]
    fn a_multi_line_body_ends_at_its_last_line_and_keeps_unbalanced_if_branches() {
        let text = "static int\nf(int a)\n{\n#ifdef X\n\tif (a) {\n#else\n\tif (!a) {\n#endif\n\t\tg();\n\t}\n\treturn 0;\n} int after(void) { }\n";
        let sp = span(text, 2, 12, "f", 0);
        assert!(s(&sp).starts_with("f(int a)\n{\n#ifdef X"), "{}", s(&sp));
        // The count never closes: the whole last line is kept.
        assert!(s(&sp).ends_with("} int after(void) { }"), "{}", s(&sp));
        let text = "int f(void)\n{\n\tg(); /* } */\n}\nint after;\n";
        let sp = span(text, 1, 4, "f", 100);
        assert_eq!(s(&sp), "int f(void)\n{\n\tg(); /* } */\n}");
    }

    fn invoked(text: &str, line: u32, name: &str) -> Option<Invocation> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let file = format!("knav-invocation-{}-{n}", std::process::id());
        let path = std::env::temp_dir().join(&file);
        std::fs::write(&path, text).unwrap();
        let src = SourceText::read(&std::env::temp_dir(), &file).unwrap();
        let _ = std::fs::remove_file(&path);
        invocation(&src, line, line + 40, |m| m == name.as_bytes(), |_| true)
    }

    #[test]
    fn an_invocation_is_read_through_its_arguments_and_its_body_or_semicolon() {
        let text = "TRACE_EVENT(sched_switch,\n\tTP_PROTO(bool p), /* ) */\n\tTP_printk(\")\"));\nint x;\n\
                    PAGEFLAG(Dirty, dirty, PF_HEAD) TESTSCFLAG(Dirty, dirty, PF_HEAD)\n\
                    \t__CLEARPAGEFLAG(Dirty, dirty, PF_HEAD)\n\
                    SYSCALL_DEFINE3(read, unsigned int, fd)\n{\n\tif (fd) { return 1; }\n\treturn 0;\n} int y;\n";
        let t = invoked(text, 1, "TRACE_EVENT").unwrap();
        assert_eq!(t.macro_name, "TRACE_EVENT");
        assert_eq!(
            t.args,
            [
                "sched_switch",
                "TP_PROTO(bool p)",
                "/* ) */\tTP_printk(\")\")"
            ]
            .map(String::from)
        );
        assert_eq!((t.body, t.end), (None, 3));
        assert!(String::from_utf8_lossy(&t.text).ends_with("TP_printk(\")\"));"));
        // Several on a line: the one asked for, to its `)`.
        let p = invoked(text, 5, "TESTSCFLAG").unwrap();
        assert_eq!(p.text, b"TESTSCFLAG(Dirty, dirty, PF_HEAD)");
        assert_eq!(p.end, 5);
        let p = invoked(text, 5, "PAGEFLAG").unwrap();
        assert_eq!(p.text, b"PAGEFLAG(Dirty, dirty, PF_HEAD)");
        // A body on the next lines, its braces balanced, nothing after its `}`.
        let s = invoked(text, 7, "SYSCALL_DEFINE3").unwrap();
        assert_eq!((s.body, s.end), (Some(8), 11));
        assert!(
            s.text.ends_with(b"return 0;\n}"),
            "{}",
            String::from_utf8_lossy(&s.text)
        );
        assert_eq!(invoked(text, 4, "TRACE_EVENT"), None);
    }

    #[test]
    fn a_name_a_macro_made_is_not_looked_for_and_the_body_still_closes() {
        let text = "SYSCALL_DEFINE3(read, unsigned int, fd) { return ksys_read(fd); } int x;\n";
        let sp = span(text, 1, 1, "sys_read", 0);
        assert_eq!(sp.name_at, None);
        assert_eq!(
            s(&sp),
            "SYSCALL_DEFINE3(read, unsigned int, fd) { return ksys_read(fd); }"
        );
    }
}
