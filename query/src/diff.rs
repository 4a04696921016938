//! Reading a unified diff: `git diff`, `diff -u`, or a mailed patch (headers, commit message and
//! diffstat before the first file, a signature after the last) into files and hunks.
//!
//! Paths lose git's `a/` and `b/` prefixes; `/dev/null` marks a new or a deleted file; git's
//! `rename from`/`rename to` and `new file mode`/`deleted file mode` lines are read; a binary
//! patch is kept as a file without hunks. Each hunk's lines are counted against its `@@` header:
//! a hunk cut short is an error naming its line, never a guess.
//!
//! What a diff may cost is bounded: past [`MAX_DIFF_BYTES`] it is not read, and reading stops at
//! the file past [`MAX_DIFF_FILES`] or the hunk past [`MAX_DIFF_HUNKS`], with an error naming the
//! limit; a hunk keeps its slice of the diff, not a copy of its lines.

/// Bytes of diff read at most.
pub const MAX_DIFF_BYTES: usize = 16 << 20;

/// Files a diff may have at most; reading stops at the next one.
pub const MAX_DIFF_FILES: usize = 10_000;

/// Hunks a diff may have at most, all its files together; reading stops at the next one.
pub const MAX_DIFF_HUNKS: usize = 50_000;

/// A hunk header's line numbers and counts at most: no file has that many lines, and the line
/// arithmetic of a review cannot overflow below it.
pub const MAX_HUNK_LINE: u32 = u32::MAX / 2;

/// What to do with a diff past a limit.
const SPLIT: &str = "split the patch (one commit or one directory at a time) and review each part";

/// Why a diff was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffError {
    /// It cannot be read as a diff: a hunk cut short, a header that says nothing (the diff line
    /// is named).
    Malformed(String),
    /// It is past [`MAX_DIFF_BYTES`], [`MAX_DIFF_FILES`] or [`MAX_DIFF_HUNKS`]; the message
    /// names the limit and says what to do.
    TooLarge(String),
}

impl std::fmt::Display for DiffError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiffError::Malformed(m) | DiffError::TooLarge(m) => f.write_str(m),
        }
    }
}

/// One line of a hunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// ` text`: in both versions.
    Context(&'a str),
    /// `-text`: only in the old one.
    Removed(&'a str),
    /// `+text`: only in the new one.
    Added(&'a str),
}

impl<'a> Line<'a> {
    /// The hunk line `l` (without its newline): `Ok(None)` for a `\ No newline` marker, `Err`
    /// for a line no hunk has. A mailer may strip the space of an empty context line.
    fn read(l: &'a str) -> Result<Option<Line<'a>>, ()> {
        let l = l.strip_suffix('\r').unwrap_or(l);
        match l.as_bytes().first() {
            None => Ok(Some(Line::Context(""))),
            Some(b' ') => Ok(Some(Line::Context(&l[1..]))),
            Some(b'-') => Ok(Some(Line::Removed(&l[1..]))),
            Some(b'+') => Ok(Some(Line::Added(&l[1..]))),
            Some(b'\\') => Ok(None),
            _ => Err(()),
        }
    }

    /// Lines it takes of the old and of the new side.
    fn sides(self) -> (u32, u32) {
        match self {
            Line::Context(_) => (1, 1),
            Line::Removed(_) => (1, 0),
            Line::Added(_) => (0, 1),
        }
    }
}

/// One `@@ -a,b +c,d @@` hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk<'a> {
    /// First line in the old file (0 for an empty range).
    pub old_start: u32,
    /// Lines in the old file.
    pub old_count: u32,
    /// First line in the new file.
    pub new_start: u32,
    /// Lines in the new file.
    pub new_count: u32,
    /// Its lines as the diff has them, checked against the header: read again by
    /// [`Hunk::lines`] rather than held as a list (8 million one-byte lines would take 24 bytes
    /// each).
    body: &'a str,
}

impl<'a> Hunk<'a> {
    /// `-a,b +c,d`, as the header says it.
    pub fn label(&self) -> String {
        format!(
            "-{},{} +{},{}",
            self.old_start, self.old_count, self.new_start, self.new_count
        )
    }

    /// Its lines, in order.
    pub fn lines(&self) -> impl Iterator<Item = Line<'a>> + 'a {
        let body: &'a str = self.body;
        body.lines().filter_map(|l| Line::read(l).ok().flatten())
    }
}

/// One file of a diff.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilePatch<'a> {
    /// The old path, `None` for a new file.
    pub old_path: Option<String>,
    /// The new path, `None` for a deleted file.
    pub new_path: Option<String>,
    /// A binary patch (no hunks to read).
    pub binary: bool,
    /// Its hunks, in order.
    pub hunks: Vec<Hunk<'a>>,
}

/// A path of a `---`/`+++` line or of git's header: the date `diff -u` appends after a tab
/// dropped, git's `a/`/`b/` prefix taken off; `None` for `/dev/null`.
fn path_of(s: &str, prefix: &str) -> Option<String> {
    let s = s.split('\t').next().unwrap_or(s).trim_end();
    let s = s.trim_matches('"');
    if s == "/dev/null" {
        return None;
    }
    Some(s.strip_prefix(prefix).unwrap_or(s).to_string())
}

/// `a` or `a,b` of a hunk header.
fn range(s: &str) -> Option<(u32, u32)> {
    match s.split_once(',') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((s.parse().ok()?, 1)),
    }
}

/// The ranges of a `@@ -a,b +c,d @@` line.
fn hunk_header(line: &str) -> Option<(u32, u32, u32, u32)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}

/// The lines of `text` without their newlines, each with its index and the byte it ends at
/// (past its newline).
fn numbered(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    text.split_inclusive('\n')
        .scan(0, |end, l| {
            *end += l.len();
            Some((*end, l))
        })
        .enumerate()
        .map(|(n, (end, l))| {
            let l = l.strip_suffix('\n').unwrap_or(l);
            (n, end, l.strip_suffix('\r').unwrap_or(l))
        })
}

/// Refuses a diff of `len` bytes, past [`MAX_DIFF_BYTES`].
pub fn check_bytes(len: usize) -> Result<(), DiffError> {
    if len <= MAX_DIFF_BYTES {
        return Ok(());
    }
    Err(DiffError::TooLarge(format!(
        "the diff is {len} bytes, more than {} MiB (the most review_diff reads): {SPLIT}",
        MAX_DIFF_BYTES >> 20
    )))
}

/// Adds a file to `files`, or refuses the diff at line `n` when it has [`MAX_DIFF_FILES`].
fn start_file<'a>(
    files: &mut Vec<FilePatch<'a>>,
    n: usize,
    file: FilePatch<'a>,
) -> Result<(), DiffError> {
    if files.len() >= MAX_DIFF_FILES {
        return Err(DiffError::TooLarge(format!(
            "the diff has more than {MAX_DIFF_FILES} files (the most review_diff reads; diff line {} starts one more): {SPLIT}",
            n + 1
        )));
    }
    files.push(file);
    Ok(())
}

/// The files and hunks of `text`; an error names the diff line of a hunk cut short, of a
/// header that cannot be read, or of the file or hunk past a limit (reading stops there).
pub fn parse(text: &str) -> Result<Vec<FilePatch<'_>>, DiffError> {
    check_bytes(text.len())?;
    let mut files: Vec<FilePatch<'_>> = Vec::new();
    let mut hunks = 0usize;
    // The file whose `---` was read last and is waiting for hunks.
    let mut open = false;
    let mut lines = numbered(text);
    while let Some((n, end, line)) = lines.next() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (old, new) = match rest.split_once(" b/") {
                Some((a, b)) => (path_of(a, "a/"), Some(b.to_string())),
                None => (None, None),
            };
            let file = FilePatch {
                old_path: old,
                new_path: new,
                ..Default::default()
            };
            start_file(&mut files, n, file)?;
            open = true;
        } else if let Some(p) = line.strip_prefix("--- ") {
            // `diff -u` has no `diff --git` line: a `---` after a file's hunks starts the next.
            if !open || files.last().is_some_and(|f| !f.hunks.is_empty()) {
                start_file(&mut files, n, FilePatch::default())?;
            }
            open = true;
            if let Some(f) = files.last_mut() {
                f.old_path = path_of(p, "a/");
            }
        } else if let (Some(p), true) = (line.strip_prefix("+++ "), open) {
            if let Some(f) = files.last_mut() {
                f.new_path = path_of(p, "b/");
            }
        } else if let (Some(p), true) = (line.strip_prefix("rename to "), open) {
            if let Some(f) = files.last_mut() {
                f.new_path = Some(p.to_string());
            }
        } else if let (Some(p), true) = (line.strip_prefix("rename from "), open) {
            if let Some(f) = files.last_mut() {
                f.old_path = Some(p.to_string());
            }
        } else if open && line.starts_with("new file mode") {
            if let Some(f) = files.last_mut() {
                f.old_path = None;
            }
        } else if open && line.starts_with("deleted file mode") {
            if let Some(f) = files.last_mut() {
                f.new_path = None;
            }
        } else if open && (line == "GIT binary patch" || line.starts_with("Binary files ")) {
            if let Some(f) = files.last_mut() {
                f.binary = true;
            }
        } else if line.starts_with("@@ ") && open {
            if hunks >= MAX_DIFF_HUNKS {
                return Err(DiffError::TooLarge(format!(
                    "the diff has more than {MAX_DIFF_HUNKS} hunks (the most review_diff reads; diff line {} starts one more): {SPLIT}",
                    n + 1
                )));
            }
            hunks += 1;
            let hunk = read_hunk(text, n, end, line, &mut lines)?;
            if let Some(f) = files.last_mut() {
                f.hunks.push(hunk);
            }
        }
        // Anything else (mail headers, the message, a diffstat, `index …`) says nothing here.
    }
    Ok(files)
}

/// The hunk whose header `header` is diff line `n` (ending at byte `start` of `text`), its
/// lines taken from `lines` as far as the header counts them.
fn read_hunk<'a>(
    text: &'a str,
    n: usize,
    start: usize,
    header: &str,
    lines: &mut impl Iterator<Item = (usize, usize, &'a str)>,
) -> Result<Hunk<'a>, DiffError> {
    let malformed = |why: String| DiffError::Malformed(format!("diff line {}: {why}", n + 1));
    let Some((a, b, c, d)) = hunk_header(header) else {
        return Err(malformed(format!("cannot read hunk header {header:?}")));
    };
    if let Some(big) = [a, b, c, d].into_iter().find(|&x| x > MAX_HUNK_LINE) {
        return Err(malformed(format!(
            "hunk header {header:?} has {big} in it, past {MAX_HUNK_LINE}: no file has that many \
             lines"
        )));
    }
    let mut hunk = Hunk {
        old_start: a,
        old_count: b,
        new_start: c,
        new_count: d,
        body: "",
    };
    let (mut old, mut new) = (b, d);
    let mut end = start;
    while old > 0 || new > 0 {
        let Some((_, at, l)) = lines.next() else {
            return Err(malformed(format!(
                "hunk {} ends early, at the end of the diff",
                hunk.label()
            )));
        };
        end = at;
        let line = match Line::read(l) {
            Ok(Some(line)) => line,
            Ok(None) => continue,
            Err(()) => {
                return Err(malformed(format!(
                    "hunk {} ends early: {old} old and {new} new lines missing",
                    hunk.label()
                )))
            }
        };
        let (o, w) = line.sides();
        if old < o || new < w {
            return Err(malformed(format!(
                "hunk {} has more lines than its header counts",
                hunk.label()
            )));
        }
        old -= o;
        new -= w;
    }
    hunk.body = &text[start..end];
    Ok(hunk)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAILED: &str = "\
From 1234 Mon Sep 17 00:00:00 2001
From: A Developer <a@example.org>
Subject: [PATCH] fs: tidy read paths

A message with --- inside it.
---
 fs/read_write.c | 3 ++-
 1 file changed

diff --git a/fs/read_write.c b/fs/read_write.c
index 1111111..2222222 100644
--- a/fs/read_write.c
+++ b/fs/read_write.c
@@ -8,4 +8,5 @@ static int check_count(size_t count)
 {
-\treturn 0;
+\tint x = 0;
+\treturn x;
 }

diff --git a/fs/new.c b/fs/new.c
new file mode 100644
--- /dev/null
+++ b/fs/new.c
@@ -0,0 +1,2 @@
+int f(void)
+{ return 0; }
diff --git a/old/name.c b/new/name.c
similarity index 100%
rename from old/name.c
rename to new/name.c
diff --git a/gone.c b/gone.c
deleted file mode 100644
--- a/gone.c
+++ /dev/null
@@ -1 +0,0 @@
-int gone;
\\ No newline at end of file
-- 
2.43.0
";

    #[test]
    fn a_mailed_patch_gives_its_files_and_hunks() {
        let files = parse(MAILED).unwrap();
        assert_eq!(files.len(), 4);
        let f = &files[0];
        assert_eq!(f.old_path.as_deref(), Some("fs/read_write.c"));
        assert_eq!(f.new_path.as_deref(), Some("fs/read_write.c"));
        assert_eq!(f.hunks.len(), 1);
        let h = &f.hunks[0];
        assert_eq!(
            (h.old_start, h.old_count, h.new_start, h.new_count),
            (8, 4, 8, 5)
        );
        let lines: Vec<Line<'_>> = h.lines().collect();
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[1], Line::Removed("\treturn 0;"));
        assert_eq!(lines[4], Line::Context("}"));
        // The blank line after it lost its space in the mail: still context.
        assert_eq!(lines[5], Line::Context(""));
        assert_eq!(files[1].old_path, None);
        assert_eq!(files[1].new_path.as_deref(), Some("fs/new.c"));
        assert_eq!(files[1].hunks[0].lines().count(), 2);
        assert_eq!(
            (files[2].old_path.as_deref(), files[2].new_path.as_deref()),
            (Some("old/name.c"), Some("new/name.c"))
        );
        assert!(files[2].hunks.is_empty());
        assert_eq!(files[3].new_path, None);
        assert_eq!(
            files[3].hunks[0].lines().collect::<Vec<_>>(),
            vec![Line::Removed("int gone;")]
        );
    }

    #[test]
    fn plain_diff_u_files_follow_one_another() {
        let text =
            "--- linux.orig/a.c\t2024-01-01\n+++ linux/a.c\t2024-01-02\n@@ -1 +1 @@\n-x\n+y\n\
                    --- linux.orig/b.c\n+++ linux/b.c\n@@ -2,0 +3 @@\n+z\n";
        let files = parse(text).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].new_path.as_deref(), Some("linux/a.c"));
        assert_eq!(files[1].old_path.as_deref(), Some("linux.orig/b.c"));
        assert_eq!(files[1].hunks[0].label(), "-2,0 +3,1");
    }

    #[test]
    fn a_hunk_cut_short_is_an_error_naming_its_line() {
        let e = parse("--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,3 @@\n a\n-b\n").unwrap_err();
        assert_eq!(
            e,
            DiffError::Malformed(
                "diff line 3: hunk -1,3 +1,3 ends early, at the end of the diff".into()
            )
        );
        let e = parse("--- a/x.c\n+++ b/x.c\n@@ -1 +1,2 @@\n-a\n-b\n+c\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "diff line 3: hunk -1,1 +1,2 has more lines than its header counts"
        );
        assert!(parse("--- a/x.c\n+++ b/x.c\n@@ -x +1 @@\n").is_err());
        for header in ["@@ -4294967295,0 +1,1 @@", "@@ -1,1 +2147483648,0 @@"] {
            let e = parse(&format!("--- a/x.c\n+++ b/x.c\n{header}\n+y\n")).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("diff line 3: hunk header {header:?} has ")),
                "{e}"
            );
        }
        assert_eq!(parse("just words\n").unwrap(), Vec::new());
    }

    /// `n` one-line hunks on one file: its header is lines 1-2, hunk `k` (from 0) starts at
    /// line `3 + 3k`.
    fn hunks(n: usize) -> String {
        let mut d = String::from("--- a/x.c\n+++ b/x.c\n");
        d.push_str(&"@@ -1 +1 @@\n-x\n+y\n".repeat(n));
        d
    }

    #[test]
    fn a_diff_past_max_diff_hunks_is_refused_at_the_hunk_past_the_limit() {
        let d = hunks(MAX_DIFF_HUNKS);
        assert_eq!(parse(&d).unwrap()[0].hunks.len(), MAX_DIFF_HUNKS);
        // A malformed hunk after the limit is never read: reading stopped at the limit.
        let mut d = hunks(MAX_DIFF_HUNKS + 1);
        d.push_str("@@ -1,5 +1,5 @@\n cut short\n");
        assert_eq!(
            parse(&d).unwrap_err(),
            DiffError::TooLarge(
                "the diff has more than 50000 hunks (the most review_diff reads; diff line 150003 \
                 starts one more): split the patch (one commit or one directory at a time) and \
                 review each part"
                    .into()
            )
        );
    }

    #[test]
    fn a_diff_past_max_diff_files_is_refused_at_the_file_past_the_limit() {
        // git's form: each file is `diff --git`, `Binary files … differ` (two lines).
        let file = |i: usize| format!("diff --git a/{i}.bin b/{i}.bin\nBinary files differ\n");
        let d: String = (0..MAX_DIFF_FILES).map(file).collect();
        assert_eq!(parse(&d).unwrap().len(), MAX_DIFF_FILES);
        let d: String = (0..=MAX_DIFF_FILES).map(file).collect();
        assert_eq!(
            parse(&d).unwrap_err().to_string(),
            "the diff has more than 10000 files (the most review_diff reads; diff line 20001 \
             starts one more): split the patch (one commit or one directory at a time) and review \
             each part"
        );
        // `diff -u`'s form: a `---` after a file's hunks starts the next (five lines a file).
        let file = |i: usize| format!("--- a/{i}.c\n+++ b/{i}.c\n@@ -1 +1 @@\n-x\n+y\n");
        let d: String = (0..=MAX_DIFF_FILES).map(file).collect();
        assert!(
            parse(&d)
                .unwrap_err()
                .to_string()
                .starts_with("the diff has more than 10000 files (the most review_diff reads; diff line 50001 starts"),
        );
    }

    #[test]
    fn a_diff_past_max_diff_bytes_is_refused_before_it_is_read() {
        let d = " ".repeat(MAX_DIFF_BYTES + 1);
        assert_eq!(
            parse(&d).unwrap_err(),
            DiffError::TooLarge(format!(
                "the diff is {} bytes, more than 16 MiB (the most review_diff reads): split the \
                 patch (one commit or one directory at a time) and review each part",
                MAX_DIFF_BYTES + 1
            ))
        );
    }

    #[test]
    fn a_hunks_lines_are_read_again_from_the_diff_as_parse_counted_them() {
        // A `\ No newline` marker inside the hunk, carriage returns, and a line after the hunk.
        let d =
            "--- a/x.c\r\n+++ b/x.c\r\n@@ -1,2 +1,2 @@\r\n-a\r\n\\ No newline at end of file\r\n\
                 +b\r\n c\r\n\\ No newline at end of file\r\nnot the hunk's\r\n";
        let files = parse(d).unwrap();
        assert_eq!(files[0].new_path.as_deref(), Some("x.c"));
        assert_eq!(
            files[0].hunks[0].lines().collect::<Vec<_>>(),
            vec![Line::Removed("a"), Line::Added("b"), Line::Context("c")]
        );
    }
}
