//! Positions as the client counts them: a line and a character offset in UTF-16 code units
//! (LSP's default) or in bytes (UTF-8, when the client offers it and the server picks it), to
//! and from the byte offsets knav works in.

use lsp_types::Position;

/// How the client counts characters in a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-16 code units.
    Utf16,
    /// Bytes.
    Utf8,
}

/// Where each line of a text starts.
#[derive(Clone, Debug, Default)]
pub struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    /// The lines of `text` (`\n` ends a line; a `\r` before it belongs to the line's end).
    pub fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Lines { starts }
    }

    /// Lines in the text (a last line without `\n` counts; an empty text has one).
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// The text of line `line` (0-based) without its line break; `None` past the end.
    pub fn line<'t>(&self, text: &'t str, line: usize) -> Option<&'t str> {
        let start = *self.starts.get(line)?;
        let end = self.starts.get(line + 1).copied().unwrap_or(text.len());
        let s = text.get(start..end)?;
        Some(s.trim_end_matches('\n').trim_end_matches('\r'))
    }

    /// The byte offset in `text` of `pos`; a character past the line's end is its end, a line
    /// past the text's end is `None`.
    pub fn offset(&self, text: &str, pos: Position, enc: Encoding) -> Option<usize> {
        let start = *self.starts.get(pos.line as usize)?;
        let line = self.line(text, pos.line as usize)?;
        Some(start + byte_of(line, pos.character as usize, enc))
    }
}

/// The byte offset in `line` of character `ch` counted in `enc` (clamped to the line; inside a
/// character, that character's start).
pub fn byte_of(line: &str, ch: usize, enc: Encoding) -> usize {
    match enc {
        Encoding::Utf8 => {
            let mut b = ch.min(line.len());
            while !line.is_char_boundary(b) {
                b -= 1;
            }
            b
        }
        Encoding::Utf16 => {
            let mut units = 0;
            for (i, c) in line.char_indices() {
                if units + c.len_utf16() > ch {
                    return i;
                }
                units += c.len_utf16();
            }
            line.len()
        }
    }
}

/// The character offset in `enc` of byte `byte` of `line` (clamped to the line).
pub fn char_of(line: &str, byte: usize, enc: Encoding) -> u32 {
    let mut b = byte.min(line.len());
    while !line.is_char_boundary(b) {
        b -= 1;
    }
    match enc {
        Encoding::Utf8 => b as u32,
        Encoding::Utf16 => line[..b].chars().map(char::len_utf16).sum::<usize>() as u32,
    }
}

/// The identifier (`[A-Za-z0-9_]+`, not starting with a digit) at or just before byte `at` of
/// `text`, with its start.
pub fn word_at(text: &str, at: usize) -> Option<(usize, &str)> {
    let b = text.as_bytes();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut at = at.min(b.len());
    if (at == b.len() || !is_word(b[at])) && at > 0 && is_word(b[at - 1]) {
        at -= 1;
    }
    if at >= b.len() || !is_word(b[at]) {
        return None;
    }
    let start = (0..=at).rev().take_while(|&i| is_word(b[i])).last()?;
    let end = (at..b.len()).find(|&i| !is_word(b[i])).unwrap_or(b.len());
    (!b[start].is_ascii_digit()).then(|| (start, &text[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_counts_a_character_outside_the_bmp_as_two_units() {
        let line = "a\u{1F600}b é c";
        assert_eq!(byte_of(line, 1, Encoding::Utf16), 1);
        assert_eq!(byte_of(line, 3, Encoding::Utf16), 5); // after the emoji's two units
        assert_eq!(char_of(line, 5, Encoding::Utf16), 3);
        assert_eq!(char_of(line, 9, Encoding::Utf16), 6); // after "é"
        assert_eq!(char_of(line, 8, Encoding::Utf16), 5); // inside "é": its start
        assert_eq!(byte_of(line, 2, Encoding::Utf16), 1); // inside the pair: its start
        assert_eq!(byte_of(line, 99, Encoding::Utf8), line.len());
        assert_eq!(byte_of(line, 3, Encoding::Utf8), 1); // inside the emoji's bytes
    }

    #[test]
    fn offsets_and_lines_of_a_crlf_text() {
        let text = "int a;\r\nvoid f(void)\r\n";
        let lines = Lines::new(text);
        assert_eq!(lines.count(), 3);
        assert_eq!(lines.line(text, 1), Some("void f(void)"));
        let pos = Position::new(1, 5);
        assert_eq!(lines.offset(text, pos, Encoding::Utf16), Some(13));
        assert_eq!(
            lines.offset(text, Position::new(9, 0), Encoding::Utf16),
            None
        );
    }

    #[test]
    fn the_word_under_the_cursor_or_just_before_it() {
        let text = "x = vfs_read(f);";
        assert_eq!(word_at(text, 6), Some((4, "vfs_read")));
        assert_eq!(word_at(text, 12), Some((4, "vfs_read"))); // on the `(` after it
        assert_eq!(word_at(text, 2), None);
        assert_eq!(word_at("a 12ab", 3), None); // a number is no name
    }
}
