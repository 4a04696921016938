//! The tokens of one C file with their lines, and its `#define`s: what the match-table, driver
//! and compatible readers walk. Comments, literals and line continuations are skipped by
//! `knav_c::lex`; other preprocessor directives are left out (both sides of an `#if` are read,
//! as the kernel's own `dt-extract-compatibles` reads them).

use std::borrow::Cow;

use knav_c::lex::{block_comment_end, line_comment_end, literal_end};

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An identifier or keyword.
    Ident,
    /// A preprocessing number (`0x8086`, `10UL`).
    Number,
    /// A string literal, with its quotes.
    Str,
    /// A character literal, with its quotes.
    Char,
    /// An operator or punctuator (`##`, `->`, `...` are one token).
    Punct,
}

/// One token: its text (borrowed from the file or a macro's body, owned when pasted) and the
/// 1-based line it is on (for a token a macro made: the line of the invocation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tok<'a> {
    /// What it is.
    pub kind: Kind,
    /// Its text as written.
    pub text: Cow<'a, str>,
    /// Its 1-based line.
    pub line: u32,
}

impl Tok<'_> {
    /// True for the punctuator `p`.
    pub fn is(&self, p: &str) -> bool {
        self.kind == Kind::Punct && self.text == p
    }

    /// True for the identifier `name`.
    pub fn is_ident(&self, name: &str) -> bool {
        self.kind == Kind::Ident && self.text == name
    }
}

/// One `#define`: its name, its parameters (`None` for an object-like macro), whether the last
/// parameter is `...` (named `__VA_ARGS__` or as written before `...`), its body and its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Define<'a> {
    /// The macro's name.
    pub name: &'a str,
    /// Its parameters, `None` when it is object-like.
    pub params: Option<Vec<&'a str>>,
    /// The last parameter takes the rest of the arguments.
    pub variadic: bool,
    /// The replacement list.
    pub body: Vec<Tok<'a>>,
    /// The line of `#define`.
    pub line: u32,
}

/// A file's tokens outside directives, and its `#define`s.
#[derive(Clone, Debug, Default)]
pub struct Lexed<'a> {
    /// The tokens, in order.
    pub toks: Vec<Tok<'a>>,
    /// The `#define`s, in order.
    pub defines: Vec<Define<'a>>,
}

/// `src` as text: borrowed when it is UTF-8 (checking is fast), else with its bad bytes
/// replaced.
pub fn text(src: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(src) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(src),
    }
}

/// The tokens and `#define`s of `text` (bytes that are not UTF-8 already replaced:
/// `String::from_utf8_lossy`).
pub fn lex(text: &str) -> Lexed<'_> {
    let src = text.as_bytes();
    // About one token in six bytes of kernel C, one in four in dense code: few files' tokens
    // outgrow this (a large reservation's pages are only mapped when written).
    let mut out = Lexed {
        toks: Vec::with_capacity(src.len() / 4),
        defines: Vec::new(),
    };
    let mut line: u32 = 1;
    let mut i = 0;
    let mut line_start = true;
    while i < src.len() {
        let b = src[i];
        // Tested most frequent first, by branches that predict better than one jump by table.
        if IDENT_START[usize::from(b)] {
            let e = word_end(src, i + 1);
            push(&mut out.toks, text, Kind::Ident, i, e, line);
            line_start = false;
            i = e;
        } else if b == b' ' || b == b'\t' {
            i += 1;
        } else if SINGLE[usize::from(b)] {
            push(&mut out.toks, text, Kind::Punct, i, i + 1, line);
            line_start = false;
            i += 1;
        } else if b == b'\n' {
            line += 1;
            line_start = true;
            i += 1;
        } else {
            match b {
                b'\r' | b'\x0c' | b'\x0b' => i += 1,
                b'\\' if matches!(src.get(i + 1), Some(b'\n')) => {
                    line += 1;
                    i += 2;
                }
                b'#' if line_start => {
                    let end = directive_end(src, i);
                    if let Some(d) = text.get(i + 1..end).and_then(|d| define(d, line)) {
                        out.defines.push(d);
                    }
                    line += count_lines(&src[i..end]);
                    i = end;
                }
                _ => {
                    line_start = false;
                    let (next, lines) = token(text, i, line, &mut out.toks);
                    line += lines;
                    i = next;
                }
            }
        }
    }
    out
}

/// The `#define`s of `text` alone, found by their `#` that begins a line (after blanks):
/// what a header included for its macros is read for, without lexing the rest. Lines are
/// counted as [`lex`] counts them; a `#define` inside a block comment whose lines do not
/// start with `*` is taken as one.
pub fn defines(text: &str) -> Vec<Define<'_>> {
    let src = text.as_bytes();
    let mut line: u32 = 1;
    let mut counted = 0;
    define_directives(text, true)
        .filter_map(|(start, d)| {
            line += count_lines(&src[counted..start]);
            counted = start;
            define(d, line)
        })
        .collect()
}

/// The names [`defines`] would find, and perhaps a few more, without reading their bodies:
/// what a `#define` looks like inside another's continued lines, or one whose `(` never
/// closes.
pub fn define_names(text: &str) -> impl Iterator<Item = &str> {
    define_directives(text, false).filter_map(|(_, d)| define_name(d).map(|(name, _)| name))
}

/// Each directive `#define` of `text`, found by its `#` that begins a line (after blanks):
/// where its line starts, and its text after the `#` (to the directive's end when `whole`,
/// else to the end of `text`, not looking for the end nor skipping to it).
fn define_directives(text: &str, whole: bool) -> impl Iterator<Item = (usize, &str)> {
    let src = text.as_bytes();
    let finder = memchr::memmem::Finder::new(b"define");
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(p) = finder.find(&src[from..]) {
            let at = from + p;
            from = at + 6;
            let start = src[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |n| n + 1);
            let head = &src[start..at];
            let Some(hash) = head.iter().position(|&b| b == b'#') else {
                continue;
            };
            let blank = |s: &[u8]| s.iter().all(|b| matches!(b, b' ' | b'\t'));
            if !blank(&head[..hash]) || !blank(&head[hash + 1..]) {
                continue;
            }
            let end = if whole {
                directive_end(src, start + hash)
            } else {
                src.len()
            };
            if whole {
                from = from.max(end);
            }
            if let Some(d) = text.get(start + hash + 1..end) {
                return Some((start, d));
            }
        }
        None
    })
}

/// The tokens of `src` with no directive handling, all on line `line` (a `#define` body).
fn body_tokens(text: &str, line: u32) -> Vec<Tok<'_>> {
    let src = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < src.len() {
        match src[i] {
            b' ' | b'\t' | b'\r' | b'\n' | b'\\' | b'\x0c' | b'\x0b' => i += 1,
            _ => i = token(text, i, line, &mut toks).0,
        }
    }
    toks
}

/// Reads the token (or comment) at `i`, pushing it onto `toks`; returns where it ends and how
/// many newlines it spans. Inlined: a call per token showed; comments and literals, long,
/// are read by functions of their own.
#[inline(always)]
fn token<'a>(text: &'a str, i: usize, line: u32, toks: &mut Vec<Tok<'a>>) -> (usize, u32) {
    let src = text.as_bytes();
    let b = src[i];
    let (kind, end) = match b {
        b'/' if matches!(src.get(i + 1), Some(b'*' | b'/')) => return comment(src, i),
        b'"' | b'\'' => return literal(text, i, line, toks),
        _ if IDENT_START[usize::from(b)] => (Kind::Ident, word_end(src, i + 1)),
        b'0'..=b'9' => (Kind::Number, number_end(src, i)),
        b'.' if src.get(i + 1).is_some_and(u8::is_ascii_digit) => {
            (Kind::Number, number_end(src, i))
        }
        _ => (Kind::Punct, i + punct_len(&src[i..])),
    };
    push(toks, text, kind, i, end, line);
    (end, 0)
}

/// Past the comment at `i` (`/*` or `//`), and the newlines it spans.
fn comment(src: &[u8], i: usize) -> (usize, u32) {
    let e = if src.get(i + 1) == Some(&b'*') {
        block_comment_end(src, i)
    } else {
        line_comment_end(src, i)
    };
    (e, count_lines(&src[i..e]))
}

/// Pushes the string or character literal at `i`; returns where it ends and the newlines it
/// spans (an unclosed one ends at its line's end).
fn literal<'a>(text: &'a str, i: usize, line: u32, toks: &mut Vec<Tok<'a>>) -> (usize, u32) {
    let src = text.as_bytes();
    let (e, _) = literal_end(src, i);
    let kind = if src[i] == b'"' {
        Kind::Str
    } else {
        Kind::Char
    };
    push(toks, text, kind, i, e, line);
    (e, count_lines(&src[i..e]))
}

/// Pushes the token `text[s..e]` onto `toks`.
#[inline(always)]
fn push<'a>(toks: &mut Vec<Tok<'a>>, text: &'a str, kind: Kind, s: usize, e: usize, line: u32) {
    // Tokens end on character boundaries; a slice that would not is taken as bytes.
    let text = match text.get(s..e) {
        Some(t) => Cow::Borrowed(t),
        None => Cow::Owned(lossy(&text.as_bytes()[s..e])),
    };
    toks.push(Tok { kind, text, line });
}

/// Bytes that are not a whole text, as text.
#[cold]
fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The punctuators that never start a longer one: a third of a file's tokens.
static SINGLE: [bool; 256] = {
    let mut t = [false; 256];
    let all = b"()[]{},;~?:";
    let mut i = 0;
    while i < all.len() {
        t[all[i] as usize] = true;
        i += 1;
    }
    t
};

/// The bytes an identifier starts with: letters, `_` and those of characters beyond ASCII.
static IDENT_START: [bool; 256] = byte_table(false);
/// The bytes an identifier continues with: those it starts with, and digits.
static IDENT_BYTE: [bool; 256] = byte_table(true);

/// The identifier bytes, digits with them when `digits`.
const fn byte_table(digits: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 || (digits && b.is_ascii_digit());
        i += 1;
    }
    t
}

/// Past the identifier that starts at `i`: eight bytes at a time, then one at a time.
#[inline]
fn word_end(src: &[u8], i: usize) -> usize {
    let mut e = i;
    while let Some(chunk) = src.get(e..e + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let others = not_ident(u64::from_le_bytes(w));
        if others != 0 {
            return e + (others.trailing_zeros() / 8) as usize;
        }
        e += 8;
    }
    while e < src.len() && IDENT_BYTE[usize::from(src[e])] {
        e += 1;
    }
    e
}

/// The high bit of each byte of `w` (eight bytes of text) that is not an identifier's: a
/// letter, a digit, `_` or a byte of a character beyond ASCII.
#[inline]
fn not_ident(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    // Each byte without its high bit is at most 0x7f, so that adding at most 0x80 to it
    // carries into no other byte.
    let low = w & !HIGH;
    let at_least = |v: u64, n: u64| (v + ONES * (0x80 - n)) & HIGH;
    let digit = at_least(low, b'0'.into()) & !at_least(low, u64::from(b'9') + 1);
    let folded = low | (ONES * 0x20);
    let letter = at_least(folded, b'a'.into()) & !at_least(folded, u64::from(b'z') + 1);
    let underscore = !((low ^ (ONES * u64::from(b'_'))) + ONES * 0x7f) & HIGH;
    !(w | digit | letter | underscore) & HIGH
}

/// Past the preprocessing number that starts at `i` (`1e+5`, `0x1fUL`).
fn number_end(src: &[u8], i: usize) -> usize {
    let mut e = i + 1;
    while e < src.len() {
        let c = src[e];
        let sign = (c == b'+' || c == b'-') && matches!(src[e - 1], b'e' | b'E' | b'p' | b'P');
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || sign {
            e += 1;
        } else {
            break;
        }
    }
    e
}

/// The length of the punctuator at the start of `s` (never 0 for a non-empty `s`): `...`,
/// `<<=`, `>>=`, `##`, `->`, the doubled and the compound assignment operators, else one
/// character.
fn punct_len(s: &[u8]) -> usize {
    let at = |k: usize| s.get(k).copied().unwrap_or(0);
    match (at(0), at(1)) {
        (b'.', b'.') if at(2) == b'.' => 3,
        (b'<', b'<') | (b'>', b'>') if at(2) == b'=' => 3,
        (b'#', b'#') | (b'-', b'>') | (b'<', b'<') | (b'>', b'>') | (b'&', b'&') | (b'|', b'|') => {
            2
        }
        (b'+', b'+') | (b'-', b'-') => 2,
        (b'=' | b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'&' | b'|' | b'^', b'=') => 2,
        _ => {
            // One byte, or one whole UTF-8 character so that a text slice stays on a boundary.
            let mut n = 1;
            while n < s.len() && (s[n] & 0xc0) == 0x80 {
                n += 1;
            }
            n
        }
    }
}

/// The newlines in `s`.
fn count_lines(s: &[u8]) -> u32 {
    u32::try_from(memchr::memchr_iter(b'\n', s).count()).unwrap_or(u32::MAX)
}

/// The end of the directive whose `#` is at `i`: its first newline not continued and not
/// inside a block comment.
fn directive_end(src: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < src.len() {
        match src[j] {
            b'\n' => return j,
            b'\\' if matches!(src.get(j + 1), Some(b'\n')) => j += 2,
            b'\\' if src.get(j + 1) == Some(&b'\r') && src.get(j + 2) == Some(&b'\n') => j += 3,
            b'/' if src.get(j + 1) == Some(&b'*') => j = block_comment_end(src, j),
            b'/' if src.get(j + 1) == Some(&b'/') => return line_comment_end(src, j),
            b'"' | b'\'' => j = literal_end(src, j).0.max(j + 1),
            _ => j += 1,
        }
    }
    src.len()
}

/// The `#define` a directive's text (after its `#`) holds, if it is one.
fn define(text: &str, line: u32) -> Option<Define<'_>> {
    let d = text.as_bytes();
    let (name, e) = define_name(text)?;
    let (params, variadic, body_at) = if d.get(e) == Some(&b'(') {
        let close = e + memchr::memchr(b')', &d[e..])?;
        let (p, v) = params(text.get(e + 1..close)?);
        (Some(p), v, close + 1)
    } else {
        (None, false, e)
    };
    Some(Define {
        name,
        params,
        variadic,
        body: body_tokens(text.get(body_at..)?, line),
        line,
    })
}

/// The name of the `#define` a directive's text (after its `#`) holds, and where it ends.
fn define_name(text: &str) -> Option<(&str, usize)> {
    let d = text.as_bytes();
    let mut i = 0;
    while i < d.len() && matches!(d[i], b' ' | b'\t') {
        i += 1;
    }
    let rest = d[i..].strip_prefix(b"define")?;
    let start = d.len() - rest.len();
    let mut j = start;
    while j < d.len() && matches!(d[j], b' ' | b'\t' | b'\\' | b'\r' | b'\n') {
        j += 1;
    }
    if j == start || j >= d.len() || !(d[j].is_ascii_alphabetic() || d[j] == b'_') {
        return None;
    }
    let e = word_end(d, j);
    Some((text.get(j..e)?, e))
}

/// The parameter names of `a, b, ...` and whether the list is variadic (`...` is named
/// `__VA_ARGS__`, `args...` is named `args`).
fn params(text: &str) -> (Vec<&str>, bool) {
    let mut out = Vec::new();
    let mut variadic = false;
    for p in text.split(',') {
        let p = p.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\\');
        if p.is_empty() {
            continue;
        }
        if let Some(named) = p.strip_suffix("...") {
            variadic = true;
            let named = named.trim();
            out.push(if named.is_empty() {
                "__VA_ARGS__"
            } else {
                named
            });
        } else {
            out.push(p);
        }
    }
    (out, variadic)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'a>(t: &'a [Tok<'a>]) -> Vec<&'a str> {
        t.iter().map(|t| t.text.as_ref()).collect()
    }

    #[test]
    fn tokens_lines_and_defines() {
        // Modelled on drivers/net/ethernet/intel/e1000e/netdev.c's table head.
        let src = b"/* c\n */\n#define X(a, b) a##b \\\n  + 1\nstatic const struct pci_device_id t[] = {\n\t{ PCI_VDEVICE(INTEL, 0x105E), board_82571 }, // x\n};\n";
        let l = lex(std::str::from_utf8(src).unwrap());
        assert_eq!(l.defines.len(), 1);
        let d = &l.defines[0];
        assert_eq!((d.name, d.line), ("X", 3));
        assert_eq!(d.params.as_deref(), Some(&["a", "b"][..]));
        assert_eq!(texts(&d.body), ["a", "##", "b", "+", "1"]);
        assert_eq!(l.toks[0].line, 5);
        let v = l.toks.iter().find(|t| t.text == "PCI_VDEVICE").unwrap();
        assert_eq!(v.line, 6);
        let n = l.toks.iter().find(|t| t.text == "0x105E").unwrap();
        assert_eq!(n.kind, Kind::Number);
        assert_eq!(l.toks.last().unwrap().line, 7);
    }

    #[test]
    fn defines_alone_as_lex_finds_them() {
        let src = "/* #define no 1\n * #define NO 2\n */\n  #  define A 0x8086 /* c\n */\nint undefined;\n#define F(a, \\\n b) a##b\n#include \"x.h\"\n";
        let all = lex(src).defines;
        let alone = defines(src);
        assert_eq!(alone, all);
        assert_eq!(define_names(src).collect::<Vec<_>>(), ["A", "F"]);
        assert_eq!(
            alone.iter().map(|d| (d.name, d.line)).collect::<Vec<_>>(),
            [("A", 4), ("F", 7)]
        );
    }

    #[test]
    fn variadic_and_object_like() {
        let l = lex("#define A 0x8086\n#define F(fmt, args...) f(fmt, ##args)\n#define G(...) __VA_ARGS__\n#include <x.h>\n");
        assert_eq!(l.defines.len(), 3);
        assert_eq!(l.defines[0].params, None);
        assert!(l.defines[1].variadic);
        assert_eq!(l.defines[1].params.as_deref(), Some(&["fmt", "args"][..]));
        assert_eq!(l.defines[2].params.as_deref(), Some(&["__VA_ARGS__"][..]));
        assert!(l.toks.is_empty());
    }

    #[test]
    fn identifier_bytes_eight_at_a_time() {
        for b in 0..=255u8 {
            let mut w = [b'a'; 8];
            w[3] = b;
            let stop = not_ident(u64::from_le_bytes(w));
            let expected = if IDENT_BYTE[usize::from(b)] {
                0
            } else {
                0x80 << 24
            };
            assert_eq!(stop, expected, "byte {b:#x}");
        }
        let src = b"a_very_long_identifier_9 x\xc3\xa9y+";
        assert_eq!(word_end(src, 0), 24);
        assert_eq!(word_end(src, 25), 29);
    }

    #[test]
    fn punctuators_longest_first() {
        let l =
            lex("a<<=b>>=c<<d>>e...f..g##h->i&&j||k==l!=m<=n>=o++p--q+=r-=s*=t/=u&=v|=w^=x%=y<z");
        let puncts: Vec<&str> = l
            .toks
            .iter()
            .filter(|t| t.kind == Kind::Punct)
            .map(|t| t.text.as_ref())
            .collect();
        assert_eq!(
            puncts,
            [
                "<<=", ">>=", "<<", ">>", "...", ".", ".", "##", "->", "&&", "||", "==", "!=",
                "<=", ">=", "++", "--", "+=", "-=", "*=", "/=", "&=", "|=", "^=", "%", "=", "<"
            ]
        );
    }

    #[test]
    fn punctuators_and_literals() {
        let l = lex("a->b ... \"x\\\"y\" 'c' é");
        assert_eq!(
            texts(&l.toks),
            ["a", "->", "b", "...", "\"x\\\"y\"", "'c'", "é"]
        );
    }
}
