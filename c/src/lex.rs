//! C's lexical skips, written once: where a block comment, a line comment and a string or
//! character literal that start at a given byte end, with C's line continuations (a backslash
//! at the end of a line continues a `//` comment and a literal onto the next line).
//!
//! The scanner, the span finder, the edit checks, macro expansion and the definers' reader use
//! these; the definers and the macros that call through members read `#define` bodies as
//! [`Tok`]s. The pointer pass (`indirect`) still walks bytes with a loop of its own, tuned token by
//! token, over the same rules.

/// Past the `*/` of the block comment whose `/*` is at `i`; the end of `src` when it is never
/// closed. The first `/` after a `*` of the comment's text: a substring searcher built for
/// each of the kernel's comments would cost more than it saves.
#[inline]
pub fn block_comment_end(src: &[u8], i: usize) -> usize {
    block_comment_rest(src, (i + 2).min(src.len())).unwrap_or(src.len())
}

/// Past the first `*/` that starts at or after `from` (inside a block comment); `None` when
/// there is none.
#[inline]
pub fn block_comment_rest(src: &[u8], from: usize) -> Option<usize> {
    memchr::memchr_iter(b'/', &src[from..])
        .find(|&k| k > 0 && src[from + k - 1] == b'*')
        .map(|k| from + k + 1)
}

/// The newline that ends the `//` comment at `i` (the end of `src` when none): the first one
/// not continued by a backslash before it (`\` then `\r\n` continues too).
#[inline]
pub fn line_comment_end(src: &[u8], i: usize) -> usize {
    let mut at = i;
    loop {
        match memchr::memchr(b'\n', &src[at..]) {
            None => return src.len(),
            Some(p) => {
                let nl = at + p;
                if continued(src, nl) {
                    at = nl + 1;
                } else {
                    return nl;
                }
            }
        }
    }
}

/// True when `line` (without its newline) ends in a backslash, before a final carriage return
/// if it has one: it continues onto the next line.
#[inline]
pub fn continues(line: &[u8]) -> bool {
    line.strip_suffix(b"\r").unwrap_or(line).last() == Some(&b'\\')
}

/// True when the newline at `nl` is escaped by a backslash (`\` `\n` or `\` `\r` `\n`).
#[inline]
fn continued(src: &[u8], nl: usize) -> bool {
    continues(&src[..nl])
}

/// Where the string or character literal whose quote is at `i` ends: `(past its closing quote,
/// true)`, or `(the newline that ends it unclosed, false)` (the end of `src` when none). A
/// backslash escapes the byte after it, a newline too (a continuation).
#[inline]
pub fn literal_end(src: &[u8], i: usize) -> (usize, bool) {
    literal_rest(src, i + 1, src[i])
}

/// [`literal_end`] from byte `from` inside a literal closed by `quote`.
#[inline]
pub fn literal_rest(src: &[u8], from: usize, quote: u8) -> (usize, bool) {
    let mut j = from;
    while j < src.len() {
        match src[j] {
            b'\\' => j += if src.get(j + 1) == Some(&b'\r') { 3 } else { 2 },
            b'\n' => return (j, false),
            b if b == quote => return (j + 1, true),
            _ => j += 1,
        }
    }
    (src.len(), false)
}

/// A token of a `#define` body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tok<'a> {
    Ident(&'a str),
    Paste,
    Punct(u8),
}

/// The tokens of `body` (comments, literals and numbers left out as `Punct(b'0')`).
pub(crate) fn tokens(body: &[u8]) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        match b {
            b'\\' | b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'/' if body.get(i + 1) == Some(&b'*') => i = block_comment_end(body, i),
            b'/' if body.get(i + 1) == Some(&b'/') => break,
            b'"' | b'\'' => {
                i = literal_end(body, i).0;
                out.push(Tok::Punct(b'0'));
            }
            b'#' if body.get(i + 1) == Some(&b'#') => {
                out.push(Tok::Paste);
                i += 2;
            }
            _ if b.is_ascii_alphabetic() || b == b'_' => {
                let s = i;
                while i < body.len() && (body[i].is_ascii_alphanumeric() || body[i] == b'_') {
                    i += 1;
                }
                // The body's bytes are ASCII here.
                out.push(Tok::Ident(std::str::from_utf8(&body[s..i]).unwrap_or("")));
            }
            b'0'..=b'9' => {
                while i < body.len() && (body[i].is_ascii_alphanumeric() || body[i] == b'.') {
                    i += 1;
                }
                out.push(Tok::Punct(b'0'));
            }
            _ => {
                out.push(Tok::Punct(b));
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_end_where_c_ends_them() {
        let s = b"a /* x */ b";
        assert_eq!(block_comment_end(s, 2), 9);
        assert_eq!(block_comment_end(b"/* open", 0), 7);
        assert_eq!(
            block_comment_end(b"/*/", 0),
            3,
            "the opening's star closes nothing"
        );
        let s = b"// one \\\n two\nthree";
        assert_eq!(line_comment_end(s, 0), 13, "a continued // comment goes on");
        assert_eq!(line_comment_end(b"// a\\\r\nb\nc", 0), 8);
        assert_eq!(line_comment_end(b"// end", 0), 6);
    }

    #[test]
    fn literals_end_at_their_quote_or_their_line() {
        assert_eq!(literal_end(b"\"a\\\"b\" x", 0), (6, true));
        assert_eq!(literal_end(b"'\\''", 0), (4, true));
        assert_eq!(literal_end(b"\"open\nx\"", 0), (5, false));
        assert_eq!(literal_end(b"\"a\\\nb\"", 0), (6, true), "a continuation");
        assert_eq!(literal_end(b"\"a\\\r\nb\"", 0), (7, true));
        assert_eq!(literal_end(b"\"end", 0), (4, false));
        assert_eq!(
            literal_end(b"\"\\", 0),
            (2, false),
            "a backslash at the end"
        );
    }
}
