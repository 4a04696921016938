//! A documentation file cut into sections. A section starts at a title: a line of text
//! followed by a line of one punctuation character repeated at least as long as the text
//! (reStructuredText's underline, with or without an overline of the same character). A file
//! without titles is one section, titled by its first non-empty line; text before the first
//! title belongs to the first section. A title longer than [`MAX_TITLE_CHARS`] is cut.

/// The longest title kept, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

/// `text` cut after `max` characters, with `…` when it was longer.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// One section of a file, 1-based lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The title's line.
    pub line: u32,
    /// The first line of its text (its overline, or 1 for the first section).
    pub start: u32,
    /// Its last line.
    pub end: u32,
    /// The title.
    pub title: String,
}

/// The character and length of a line that can underline (or overline) a title: one
/// punctuation character, repeated.
pub fn adornment(line: &str) -> Option<(char, usize)> {
    let line = line.trim_end();
    let c = line.chars().next()?;
    let n = line.chars().count();
    (c.is_ascii_punctuation() && n >= 2 && line.chars().all(|x| x == c)).then_some((c, n))
}

/// The sections of a file's `lines`.
pub fn sections(lines: &[&str]) -> Vec<Section> {
    let mut titles: Vec<(u32, u32, String)> = Vec::new(); // (title line, start, title)
    let mut i = 0;
    while i + 1 < lines.len() {
        let text = lines[i].trim_end();
        let over = if i > 0 { adornment(lines[i - 1]) } else { None };
        match adornment(lines[i + 1]) {
            Some((c, n))
                if !text.is_empty()
                    && !text.starts_with(char::is_whitespace)
                    && adornment(text).is_none()
                    && n >= text.chars().count()
                    && over.is_none_or(|o| o.0 == c) =>
            {
                let start = if over.is_some() { i } else { i + 1 };
                titles.push((i as u32 + 1, start as u32, cut(text, MAX_TITLE_CHARS)));
                i += 2;
            }
            _ => i += 1,
        }
    }
    let last = lines.len() as u32;
    if titles.is_empty() {
        let Some(first) = lines.iter().position(|l| !l.trim().is_empty()) else {
            return Vec::new();
        };
        return vec![Section {
            line: first as u32 + 1,
            start: 1,
            end: last,
            title: cut(lines[first].trim(), MAX_TITLE_CHARS),
        }];
    }
    let starts: Vec<u32> = titles.iter().map(|t| t.1).collect();
    titles
        .into_iter()
        .enumerate()
        .map(|(k, (line, start, title))| Section {
            line,
            start: if k == 0 { 1 } else { start },
            end: starts.get(k + 1).map_or(last, |s| s - 1),
            title,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_with_and_without_overlines() {
        let text = ".. SPDX\n\n======\nMemory\n======\n\nIntro.\n\nAllocation\n----------\nText\nShort\n--\n";
        let lines: Vec<&str> = text.lines().collect();
        let got: Vec<(u32, u32, u32, String)> = sections(&lines)
            .into_iter()
            .map(|s| (s.line, s.start, s.end, s.title))
            .collect();
        // "Short" is longer than its underline: not a title.
        assert_eq!(
            got,
            vec![
                (4, 1, 8, "Memory".to_string()),
                (9, 9, 13, "Allocation".to_string())
            ]
        );
    }

    #[test]
    fn an_overline_of_another_character_makes_no_title() {
        let lines = ["~~~~~", "Title", "=====", "body"];
        assert_eq!(sections(&lines)[0].title, "~~~~~");
    }

    #[test]
    fn a_long_first_line_is_cut_to_make_a_title() {
        let line = "é".repeat(MAX_TITLE_CHARS + 1);
        let title = &sections(&[&line])[0].title;
        assert_eq!(title.chars().count(), MAX_TITLE_CHARS + 1);
        assert!(title.ends_with("é…"), "{title}");
    }

    #[test]
    fn a_file_without_titles_is_one_section() {
        let lines = ["", "  Some notes", "on things"];
        assert_eq!(
            sections(&lines),
            vec![Section {
                line: 2,
                start: 1,
                end: 3,
                title: "Some notes".into()
            }]
        );
    }
}
