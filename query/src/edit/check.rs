//! The checks a symbol edit passes in memory before it reaches disk: braces, parentheses and
//! `#if`/`#endif` balance outside comments, strings and character literals, and the names
//! ctags and knav's scanner find defined on given lines of the new text.

use std::path::Path;

use knav_ctags::Kind;

/// The first imbalance in `text`: `(1-based line, what)`; `None` when balanced.
pub fn imbalance(text: &[u8]) -> Option<(u32, String)> {
    let mut open: Vec<(u8, u32)> = Vec::new();
    let mut conds: Vec<u32> = Vec::new();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, true);
    while i < text.len() {
        let c = text[i];
        match c {
            b'\n' => {
                line += 1;
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'#' if line_start => {
                let rest = &text[i + 1..];
                let word: Vec<u8> = rest
                    .iter()
                    .skip_while(|b| **b == b' ' || **b == b'\t')
                    .take_while(|b| b.is_ascii_alphabetic())
                    .copied()
                    .collect();
                match word.as_slice() {
                    b"if" | b"ifdef" | b"ifndef" => conds.push(line),
                    b"endif" if conds.pop().is_none() => {
                        return Some((line, "#endif without #if".into()))
                    }
                    b"else" | b"elif" | b"elifdef" | b"elifndef" if conds.is_empty() => {
                        let w = String::from_utf8_lossy(&word);
                        return Some((line, format!("#{w} without #if")));
                    }
                    _ => {}
                }
                // A directive's brackets are not code: skip to its end (with continuations).
                let end = knav_c::lex::line_comment_end(text, i);
                line += newlines(&text[i..end]);
                i = end;
                continue;
            }
            b'/' if text.get(i + 1) == Some(&b'/') => {
                // To its newline, over continued lines (`\` at a line's end).
                let end = knav_c::lex::line_comment_end(text, i);
                line += newlines(&text[i..end]);
                i = end;
                continue;
            }
            b'/' if text.get(i + 1) == Some(&b'*') => {
                let end = knav_c::lex::block_comment_end(text, i);
                if end == text.len() && (end < i + 4 || !text.ends_with(b"*/")) {
                    return Some((line, "comment not closed".into()));
                }
                line += newlines(&text[i..end]);
                i = end;
                line_start = false;
                continue;
            }
            b'"' | b'\'' => {
                let (end, closed) = knav_c::lex::literal_end(text, i);
                if !closed {
                    let what = if c == b'"' {
                        "string"
                    } else {
                        "character literal"
                    };
                    return Some((line, format!("{what} not closed on its line")));
                }
                line += newlines(&text[i..end]);
                i = end;
                line_start = false;
                continue;
            }
            b'{' | b'(' | b'[' => open.push((c, line)),
            b'}' | b')' | b']' => {
                let want = match c {
                    b'}' => b'{',
                    b')' => b'(',
                    _ => b'[',
                };
                match open.pop() {
                    Some((o, _)) if o == want => {}
                    Some((o, at)) => {
                        return Some((
                            line,
                            format!("'{}' closes the '{}' of line {at}", c as char, o as char),
                        ))
                    }
                    None => return Some((line, format!("'{}' closes nothing", c as char))),
                }
            }
            _ => {}
        }
        line_start = false;
        i += 1;
    }
    if let Some((o, at)) = open.pop() {
        return Some((at, format!("'{}' is never closed", o as char)));
    }
    conds.pop().map(|at| (at, "#if without #endif".to_string()))
}

/// The newlines in `bytes`.
fn newlines(bytes: &[u8]) -> u32 {
    memchr::memchr_iter(b'\n', bytes).count() as u32
}

/// The names defined on lines `from..=to` of `text` (a file called `name`), as ctags (run with
/// `ctags_args`) and knav's scanner (`#define`s) find them, in line order: members,
/// enumerators, locals and labels left out. ctags is handed the text on its input: nothing is
/// written to disk.
pub fn defined_names(
    text: &[u8],
    name: &str,
    ctags_args: &[String],
    from: u32,
    to: u32,
) -> Result<Vec<(u32, String)>, String> {
    let ctags = knav_ctags::Ctags::probe().map_err(|e| e.to_string())?;
    let mut worker = knav_ctags::Worker::new(
        &ctags,
        Path::new("/"),
        ctags_args,
        std::time::Duration::from_secs(30),
    );
    let tags = worker
        .tags_of_text(Path::new(name), text)
        .map_err(|e| format!("ctags could not read the new text: {e}"))?;
    let mut names: Vec<(u32, String)> = tags
        .tags
        .into_iter()
        .filter(|t| {
            (from..=to).contains(&t.line)
                && !t.is_macro_pseudo_definition()
                && !matches!(
                    t.kind,
                    Kind::Member | Kind::Enumerator | Kind::Local | Kind::Label | Kind::Entry
                )
        })
        .map(|t| (t.line, t.name))
        .collect();
    for m in knav_c::scan::scan(text).macros {
        if (from..=to).contains(&m.line) {
            let at = &text[m.start as usize..m.start as usize + m.len as usize];
            names.push((m.line, String::from_utf8_lossy(at).into_owned()));
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// The first character of `source` that would make a C file binary or hide what it holds:
/// NUL and the other control characters but tab, newline and form feed; a carriage return
/// not followed by a newline; Unicode's bidirectional embedding, override and isolate controls
/// (U+202A-U+202E, U+2066-U+2069), which make text read in another order than the compiler
/// reads it. `(1-based line, what it is)`.
pub fn hidden_char(source: &str) -> Option<(u32, String)> {
    let bytes = source.as_bytes();
    let (at, what) = source.char_indices().find_map(|(i, c)| {
        let what = match c {
            '\r' if bytes.get(i + 1) == Some(&b'\n') => return None,
            '\r' => "a carriage return without a line feed".to_string(),
            '\t' | '\n' | '\x0c' => return None,
            c if (c as u32) < 0x20 || c == '\x7f' => format!("the control byte 0x{:02x}", c as u32),
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                format!("the bidirectional control U+{:04X}", c as u32)
            }
            _ => return None,
        };
        Some((i, what))
    })?;
    let line = memchr::memchr_iter(b'\n', &bytes[..at]).count() as u32 + 1;
    Some((line, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imbalance_names_the_line_outside_comments_and_strings() {
        assert_eq!(
            imbalance(b"int f(void)\n{\n\treturn g(\"}\" /* ) */);\n}\n"),
            None
        );
        assert_eq!(
            imbalance(b"int f(void)\n{\n\treturn g(1;\n}\n"),
            Some((4, "'}' closes the '(' of line 3".into()))
        );
        assert_eq!(
            imbalance(b"int f(void)\n{\n"),
            Some((2, "'{' is never closed".into()))
        );
        assert_eq!(
            imbalance(b"#ifdef A\nint x;\n#else\nint y;\n"),
            Some((1, "#if without #endif".into()))
        );
        assert_eq!(
            imbalance(b"int x;\n#endif\n"),
            Some((2, "#endif without #if".into()))
        );
        assert_eq!(
            imbalance(b"#define M(x) { (x\nchar c = '{';\n"),
            None,
            "a directive's and a literal's brackets are not code"
        );
    }

    #[test]
    fn a_line_comment_continued_by_a_backslash_hides_the_next_line_too() {
        // The edit check ended a `//` comment at its newline; C (and the pointer pass) go on.
        assert_eq!(imbalance(b"int a; // note \\\n{ (\nint b;\n"), None);
        assert_eq!(
            imbalance(b"// a \\\n b\n}\n"),
            Some((3, "'}' closes nothing".into())),
            "lines are still counted over the continuation"
        );
        assert_eq!(
            imbalance(b"char *s = \"a\\\nb\";\n)"),
            Some((3, "')' closes nothing".into()))
        );
        assert_eq!(
            imbalance(b"x;\n/* open"),
            Some((2, "comment not closed".into()))
        );
    }
}
