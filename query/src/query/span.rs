//! The text of one function inside its lines: from its name to the `}` that closes its body,
//! so that a function sharing a line with other code (a generated or minified file, a 60 MB
//! line) is read alone, in time linear in the bytes before its end.
//!
//! ctags gives a function's first and last lines, not its bytes. The name is looked for on the
//! first line outside comments and literals; the body is the first `{ … }` after it outside
//! parentheses. The closing `}` cuts the last line only when it is on the last line ctags gave:
//! braces in both branches of an `#if` can make the count close early or late, and then the
//! whole lines are kept as before.

use super::source::SourceText;

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
