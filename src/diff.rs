//! Reading a unified diff: `git diff`, `diff -u`, or a mailed patch (headers, commit message and
//! diffstat before the first file, a signature after the last) into files and hunks.
//!
//! Paths lose git's `a/` and `b/` prefixes; `/dev/null` marks a new or a deleted file; git's
//! `rename from`/`rename to` and `new file mode`/`deleted file mode` lines are read; a binary
//! patch is kept as a file without hunks. Each hunk's lines are counted against its `@@` header:
//! a hunk cut short is an error naming its line, never a guess.

/// Bytes of diff read at most.
pub const MAX_DIFF_BYTES: usize = 16 << 20;

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
    /// Its lines, in order.
    pub lines: Vec<Line<'a>>,
}

impl Hunk<'_> {
    /// `-a,b +c,d`, as the header says it.
    pub fn label(&self) -> String {
        format!(
            "-{},{} +{},{}",
            self.old_start, self.old_count, self.new_start, self.new_count
        )
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

/// The files and hunks of `text`; an error names the diff line of a hunk cut short or a
/// header that cannot be read.
pub fn parse(text: &str) -> Result<Vec<FilePatch<'_>>, String> {
    if text.len() > MAX_DIFF_BYTES {
        return Err(format!(
            "the diff is {} bytes, more than {} MiB",
            text.len(),
            MAX_DIFF_BYTES >> 20
        ));
    }
    let mut files: Vec<FilePatch<'_>> = Vec::new();
    // The file whose `---` was read last and is waiting for hunks.
    let mut open = false;
    let mut lines = text.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (old, new) = match rest.split_once(" b/") {
                Some((a, b)) => (path_of(a, "a/"), Some(b.to_string())),
                None => (None, None),
            };
            files.push(FilePatch {
                old_path: old,
                new_path: new,
                ..Default::default()
            });
            open = true;
        } else if let Some(p) = line.strip_prefix("--- ") {
            // `diff -u` has no `diff --git` line: a `---` after a file's hunks starts the next.
            if !open || files.last().is_some_and(|f| !f.hunks.is_empty()) {
                files.push(FilePatch::default());
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
            let Some((a, b, c, d)) = hunk_header(line) else {
                return Err(format!(
                    "diff line {}: cannot read hunk header {line:?}",
                    n + 1
                ));
            };
            let mut hunk = Hunk {
                old_start: a,
                old_count: b,
                new_start: c,
                new_count: d,
                lines: Vec::new(),
            };
            let (mut old, mut new) = (b, d);
            while old > 0 || new > 0 {
                let Some((_, l)) = lines.next() else {
                    return Err(format!(
                        "diff line {}: hunk {} ends early, at the end of the diff",
                        n + 1,
                        hunk.label()
                    ));
                };
                let l = l.strip_suffix('\r').unwrap_or(l);
                let (line, o, w) = match l.as_bytes().first() {
                    // A mailer may strip the space of an empty context line.
                    None => (Line::Context(""), 1, 1),
                    Some(b' ') => (Line::Context(&l[1..]), 1, 1),
                    Some(b'-') => (Line::Removed(&l[1..]), 1, 0),
                    Some(b'+') => (Line::Added(&l[1..]), 0, 1),
                    Some(b'\\') => continue,
                    _ => {
                        return Err(format!(
                        "diff line {}: hunk {} ends early: {old} old and {new} new lines missing",
                        n + 1,
                        hunk.label()
                    ))
                    }
                };
                if old < o || new < w {
                    return Err(format!(
                        "diff line {}: hunk {} has more lines than its header counts",
                        n + 1,
                        hunk.label()
                    ));
                }
                old -= o;
                new -= w;
                hunk.lines.push(line);
            }
            if let Some(f) = files.last_mut() {
                f.hunks.push(hunk);
            }
        }
        // Anything else (mail headers, the message, a diffstat, `index …`) says nothing here.
    }
    Ok(files)
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
        assert_eq!(h.lines[1], Line::Removed("\treturn 0;"));
        assert_eq!(h.lines[4], Line::Context("}"));
        // The blank line after it lost its space in the mail: still context.
        assert_eq!(h.lines[5], Line::Context(""));
        assert_eq!(files[1].old_path, None);
        assert_eq!(files[1].new_path.as_deref(), Some("fs/new.c"));
        assert_eq!(files[1].hunks[0].lines.len(), 2);
        assert_eq!(
            (files[2].old_path.as_deref(), files[2].new_path.as_deref()),
            (Some("old/name.c"), Some("new/name.c"))
        );
        assert!(files[2].hunks.is_empty());
        assert_eq!(files[3].new_path, None);
        assert_eq!(files[3].hunks[0].lines, vec![Line::Removed("int gone;")]);
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
            "diff line 3: hunk -1,3 +1,3 ends early, at the end of the diff"
        );
        let e = parse("--- a/x.c\n+++ b/x.c\n@@ -1 +1,2 @@\n-a\n-b\n+c\n").unwrap_err();
        assert_eq!(
            e,
            "diff line 3: hunk -1,1 +1,2 has more lines than its header counts"
        );
        assert!(parse("--- a/x.c\n+++ b/x.c\n@@ -x +1 @@\n").is_err());
        assert_eq!(parse("just words\n").unwrap(), Vec::new());
    }
}
