//! The texts ctags reads: each file of a chunk with its opaque spans taken out, written under
//! one scratch directory, and the map that turns the line numbers ctags reports in them back
//! into the file's own.
//!
//! An opaque span (the inside of a function body or of an initializer, a comment, a
//! preprocessor line but a conditional: where ctags finds nothing, see `scan::opaque`) is
//! replaced by one newline when it holds any, by nothing when it holds none. ctags then
//! tokenizes about an eighth of the bytes, and reads a fifth of the lines: it spends about
//! 65 ns on each line even when the line is empty (5 million newlines: 0.33 s), and over the
//! texts of `fs/` its CPU time was a quarter less than with every line kept (0.40 s against
//! 0.53 s, three runs each). Every line of a text is the whole or a part of one line of the
//! file, so [`LineMap`] gives each back exactly.

use std::path::{Path, PathBuf};

/// Where the lines of a text moved from the file's: `(text line, lines added)` at each text
/// line after a span that held more than one newline, in order. Empty when no line moved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineMap {
    moves: Vec<(u32, u32)>,
}

impl LineMap {
    /// The file's line of `line` of the text.
    pub fn file_line(&self, line: u32) -> u32 {
        let after = self.moves.partition_point(|&(at, _)| at <= line);
        match after.checked_sub(1) {
            Some(i) => line + self.moves[i].1,
            None => line,
        }
    }
}

/// The text ctags reads for `src` without its `opaque` spans (sorted, not overlapping), with a
/// `;` at each of `semicolons` (sorted, none inside a span: see `knav_c::scan::FileScan::ctags_semicolons`),
/// in place of what `out` held, and where its lines moved.
pub fn ctags_text(
    src: &[u8],
    opaque: &[(u32, u32)],
    semicolons: &[u32],
    out: &mut Vec<u8>,
) -> LineMap {
    out.clear();
    let mut map = LineMap::default();
    // The line of the text being written, and how many lines of the file it is behind.
    let (mut line, mut behind) = (1u32, 0u32);
    let mut at = 0usize;
    let mut semicolons = semicolons.iter().map(|&s| s as usize).peekable();
    // Copies `src[from..to]` with the `;`s that fall in it.
    let mut keep = |out: &mut Vec<u8>, mut from: usize, to: usize| {
        while let Some(s) = semicolons.next_if(|&s| s <= to) {
            if s >= from {
                out.extend_from_slice(&src[from..s]);
                out.push(b';');
                from = s;
            }
        }
        out.extend_from_slice(&src[from..to]);
    };
    for &(start, end) in opaque {
        let (start, end) = (start as usize, end as usize);
        let kept = &src[at..start];
        keep(out, at, start);
        line += memchr::memchr_iter(b'\n', kept).count() as u32;
        let newlines = memchr::memchr_iter(b'\n', &src[start..end]).count() as u32;
        if newlines > 0 {
            out.push(b'\n');
            line += 1;
            if newlines > 1 {
                behind += newlines - 1;
                map.moves.push((line, behind));
            }
        }
        at = end;
    }
    keep(out, at, src.len());
    map
}

/// A chunk's files as ctags reads them, under one scratch directory with the tree's relative
/// paths (ctags names anonymous types after the path it is given): each file's
/// [`ctags_text`], made from the bytes knav read (ctags never reads the tree: a file swapped for
/// a link after knav read it cannot feed ctags another file's names). Removed when dropped.
pub(crate) struct CtagsTexts {
    /// The scratch directory the texts are under, with the tree's relative paths.
    pub dir: PathBuf,
    /// Each file's text.
    pub texts: Vec<Text>,
}

/// One file's text as written for ctags.
pub(crate) struct Text {
    /// Its bytes.
    pub len: u64,
    /// Where its lines moved from the file's.
    pub lines: LineMap,
}

impl CtagsTexts {
    /// Writes the texts of chunk number `chunk` into `scratch`, each file given by its bytes
    /// and opaque spans; `None` when anything fails.
    pub fn write<'a>(
        scratch: &Path,
        chunk: usize,
        paths: &[&Path],
        texts: impl Iterator<Item = (&'a [u8], Vec<(u32, u32)>, Vec<u32>)>,
    ) -> Option<CtagsTexts> {
        let mut out = CtagsTexts {
            dir: scratch.join(format!("ctags-in-{chunk}")),
            texts: Vec::with_capacity(paths.len()),
        };
        let mut text = Vec::new();
        std::fs::create_dir(&out.dir).ok()?;
        let mut made: std::collections::HashSet<&Path> = std::collections::HashSet::new();
        for (rel, (src, opaque, semicolons)) in paths.iter().zip(texts) {
            if rel.is_absolute()
                || rel
                    .components()
                    .any(|c| c == std::path::Component::ParentDir)
            {
                return None;
            }
            let at = out.dir.join(rel);
            if let Some(parent) = rel.parent() {
                if made.insert(parent) {
                    make_dirs_below(&out.dir, parent).ok()?;
                }
            }
            let lines = ctags_text(src, &opaque, &semicolons, &mut text);
            std::fs::write(&at, &text).ok()?;
            out.texts.push(Text {
                len: text.len() as u64,
                lines,
            });
        }
        (out.texts.len() == paths.len()).then_some(out)
    }
}

/// Makes the directories of `rel` under `base`, never `base` itself or its parents: when a
/// Ctrl-C has removed the scratch directory, a build thread still writing must not make it
/// again (`create_dir_all` would, and leave it behind).
fn make_dirs_below(base: &Path, rel: &Path) -> std::io::Result<()> {
    let mut at = base.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::create_dir(&at) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

impl Drop for CtagsTexts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of `src` without the spans, and each text line's file line by the map.
    fn text_and_lines(src: &str, spans: &[(u32, u32)]) -> (String, Vec<u32>) {
        let mut out = Vec::new();
        let map = ctags_text(src.as_bytes(), spans, &[], &mut out);
        let text = String::from_utf8(out).unwrap();
        let lines = (1..=text.lines().count() as u32)
            .map(|l| map.file_line(l))
            .collect();
        (text, lines)
    }

    #[test]
    fn a_span_becomes_one_newline_and_lines_map_back() {
        let src =
            "int f(void) {\n  a();\n  b();\n}\nint x; /* one */ int y;\n/* two\nlines */ int z;\n";
        let body = (
            src.find('{').unwrap() as u32 + 1,
            src.find('}').unwrap() as u32,
        );
        let one = (
            src.find("/* one").unwrap() as u32,
            src.find(" int y").unwrap() as u32,
        );
        let two = (
            src.find("/* two").unwrap() as u32,
            src.find(" int z").unwrap() as u32,
        );
        let (text, lines) = text_and_lines(src, &[body, one, two]);
        assert_eq!(text, "int f(void) {\n}\nint x;  int y;\n\n int z;\n");
        // `}` is on line 4, `int y` on 5, the comment's first line 6, `int z` on 7.
        assert_eq!(lines, [1, 4, 5, 6, 7]);
    }

    #[test]
    fn a_text_without_spans_keeps_its_lines() {
        let (text, lines) = text_and_lines("a;\nb;\n", &[]);
        assert_eq!(text, "a;\nb;\n");
        assert_eq!(lines, [1, 2]);
        assert_eq!(LineMap::default().file_line(9), 9);
    }

    proptest::proptest! {
        #[test]
        fn every_kept_byte_is_on_the_file_line_the_map_gives(
            lens in proptest::collection::vec(0usize..6, 1..12),
            mut cuts in proptest::collection::vec(0usize..80, 0..10),
        ) {
            // Lines of distinct bytes, so that each kept byte is found in the text.
            let mut src = Vec::new();
            let mut next = b'!';
            for len in lens {
                for _ in 0..len {
                    src.push(next);
                    next += 1;
                }
                src.push(b'\n');
            }
            // Spans between cut points, at any place in a line or across lines.
            cuts.iter_mut().for_each(|c| *c = (*c).min(src.len()));
            cuts.sort_unstable();
            let spans: Vec<(u32, u32)> =
                cuts.chunks_exact(2).map(|c| (c[0] as u32, c[1] as u32)).collect();
            let mut out = Vec::new();
            let map = ctags_text(&src, &spans, &[], &mut out);
            let in_span = |i: usize| spans.iter().any(|&(s, e)| (s as usize..e as usize).contains(&i));
            for (i, &b) in src.iter().enumerate().filter(|&(i, &b)| b != b'\n' && !in_span(i)) {
                let pos = out.iter().position(|&o| o == b).unwrap();
                let text_line = 1 + out[..pos].iter().filter(|&&o| o == b'\n').count() as u32;
                let file_line = 1 + src[..i].iter().filter(|&&o| o == b'\n').count() as u32;
                proptest::prop_assert_eq!(map.file_line(text_line), file_line);
            }
            // Every line of the file outside the spans is still a line of the text.
            let kept_newlines = src.iter().enumerate().filter(|&(i, &b)| b == b'\n' && !in_span(i)).count();
            let span_newlines = spans.iter().filter(|&&(s, e)| src[s as usize..e as usize].contains(&b'\n')).count();
            proptest::prop_assert_eq!(out.iter().filter(|&&o| o == b'\n').count(), kept_newlines + span_newlines);
        }
    }
}
