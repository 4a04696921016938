//! Text that cannot drive a terminal or forge a line: what knav prints is escaped here, for
//! every answer, error and front end.
//!
//! An answer carries text others wrote: source lines, commit subjects, a name a caller asked
//! for. Printed raw, an escape sequence in it moves the cursor or rewrites the screen, a
//! bidirectional control hides text from the reader, and a newline in an echoed name starts a
//! line of its own (`next: …`) that the caller, not knav, wrote. [`shown`] escapes every control
//! character but the line structure (newline, tab, form feed, the carriage return of a CRLF);
//! [`one_line`] (and [`Quoted`], its `Display`) escapes newlines and backslashes too, for a
//! value echoed inside a line. Escapes are `\xNN` for ASCII and `\u{NNNN}` beyond, as
//! `pathname::encode` writes a path's.

use std::borrow::Cow;
use std::fmt::Write;

/// True for a character printed as an escape: C0 and C1 controls, DEL, and the Unicode
/// bidirectional controls (the "Trojan Source" set).
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Appends `c` escaped.
fn push_escaped(out: &mut String, c: char) {
    if c.is_ascii() {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:04x}}}", c as u32);
    }
}

/// `s` with every control character escaped but where `keep` says so.
fn escaped(s: &str, keep: impl Fn(char, Option<char>) -> bool) -> Cow<'_, str> {
    let mut chars = s.chars().peekable();
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    while let Some(c) = chars.next() {
        if is_unsafe(c) && !keep(c, chars.peek().copied()) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` as printed: lines stay lines (newline, tab, form feed, and a carriage return before
/// a newline are kept), every other control character is escaped.
pub fn shown(text: &str) -> Cow<'_, str> {
    escaped(text, |c, next| {
        matches!(c, '\n' | '\t' | '\x0c') || (c == '\r' && next == Some('\n'))
    })
}

/// `value` as echoed inside one line: every control character escaped, newlines and tabs
/// included, and each backslash doubled, so that what is shown reads back as one value.
pub fn one_line(value: &str) -> Cow<'_, str> {
    if !value.contains('\\') {
        return escaped(value, |_, _| false);
    }
    let mut out = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            c if is_unsafe(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A value shown inside one line of an answer or error: [`one_line`] as `Display`.
pub struct Quoted<'a>(pub &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&one_line(self.0))
    }
}

/// `word` as a shell reads it back: as it is when it holds only characters no shell treats
/// specially, else in single quotes, or as `$'…'` (bash, zsh, ksh) when it holds a control
/// character.
pub fn shell_word(word: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:,+=@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return Cow::Borrowed(word);
    }
    if !word.chars().any(is_unsafe) {
        return Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")));
    }
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\'' => out.push_str(r"\'"),
            '\\' => out.push_str(r"\\"),
            c if is_unsafe(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out.push('\'');
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_escape_sequence_is_shown_escaped_and_lines_stay_lines() {
        assert_eq!(
            shown("a\x1b[31mred\nb\tc\x0cd\r\n"),
            "a\\x1b[31mred\nb\tc\x0cd\r\n"
        );
        assert_eq!(shown("over\rwrite"), "over\\x0dwrite");
        assert_eq!(shown("x\u{9b}2J"), "x\\u{009b}2J");
        assert_eq!(shown("bidi \u{202e}evil"), "bidi \\u{202e}evil");
        assert!(matches!(shown("plain text"), Cow::Borrowed(_)));
    }

    #[test]
    fn an_echoed_value_cannot_start_a_line() {
        assert_eq!(one_line("vfs_read\nnext: rm"), "vfs_read\\x0anext: rm");
        assert_eq!(one_line(r"a\x0ab"), r"a\\x0ab");
        assert_eq!(Quoted("x\ny").to_string(), r"x\x0ay");
        assert_eq!(one_line("tab\there"), "tab\\x09here");
    }

    #[test]
    fn a_shell_word_reads_back_as_itself() {
        assert_eq!(shell_word("vfs_read"), "vfs_read");
        assert_eq!(shell_word("sk_buff.len"), "sk_buff.len");
        assert_eq!(
            shell_word("struct file_operations"),
            "'struct file_operations'"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("a\nb'c"), r"$'a\x0ab\'c'");
        assert_eq!(shell_word(""), "''");
    }
}
