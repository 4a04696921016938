//! One `ctags -L -` process over a chunk of files: the fast path. ctags's interactive mode
//! costs about a quarter more per byte, so it is kept for retrying a chunk file by file, and the
//! tag-file output format costs ctags a fifth less than JSON, so the batch run uses it.
//!
//! Told to write to standard output (`-o -`), ctags writes its tags to a temporary file in
//! `$TMPDIR` and, at its end, copies that to its output a character at a time (`getc`,
//! `putc`): given a tag file of its own on a RAM file system, its CPU time over a chunk of
//! kernel sources is about a sixth less (BENCHMARKS.md, "Design measurements"). The tags are then read from that file once
//! ctags is done.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use crate::worker::{base_args, FileTags, WorkerError};
use crate::Ctags;

/// Runs ctags once over `paths` (relative to `root`) and returns their tags in the same order;
/// a path with a newline cannot be listed to ctags and gets none (ask [`crate::Worker`]).
/// When the whole chunk takes longer than `timeout`, ctags is killed and the chunk fails with
/// [`WorkerError::Timeout`]; the caller retries it file by file. With `tag_file` (a path that
/// does not exist yet, best on a RAM file system), ctags writes its tags there rather than to
/// its output; the file is removed once read.
pub fn tags_of_chunk(
    ctags: &Ctags,
    root: &Path,
    extra_args: &[String],
    paths: &[&Path],
    timeout: Duration,
    tag_file: Option<&Path>,
) -> Result<Vec<FileTags>, WorkerError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    // ctags opens it from `root`, knav from its own directory: the path must be absolute.
    let tag_path = match tag_file.map(std::path::absolute).transpose() {
        Ok(f) => f,
        Err(e) => return Err(WorkerError::Died(format!("no path for a tag file: {e}"))),
    };
    let args = batch_args(extra_args, tag_path.as_deref());
    // A tag file left by an earlier run would be appended to, or refused.
    let tag_file = tag_path.clone().map(|f| {
        let _ = std::fs::remove_file(&f);
        RemovedOnDrop(f)
    });
    let (mut child, mut stdin, stdout) =
        crate::spawn::spawn(&ctags.program, &args, root).map_err(WorkerError::Spawn)?;
    let mut list: Vec<u8> = Vec::new();
    for p in paths {
        // A name with a newline would be read as two: it is not listed, and gets no tags.
        if !p.as_os_str().as_bytes().contains(&b'\n') {
            list.extend_from_slice(&listed(p));
            list.push(b'\n');
        }
    }
    // Writing on another thread: a ctags stuck on one file stops reading its list.
    std::thread::spawn(move || {
        let _ = stdin.write_all(&list);
    });
    let index: HashMap<Vec<u8>, usize> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| (listed(p), i))
        .collect();
    let (tx, rx) = mpsc::channel();
    let files = paths.len();
    let tags_from = tag_path;
    std::thread::spawn(move || {
        let _ = tx.send(read_tags(stdout, tags_from, &index, files));
    });
    match rx.recv_timeout(timeout) {
        // A tag file of its own is whole only when ctags ended well (it exits 1 when it cannot
        // write it, on a full disk for one); the caller then retries the files one by one.
        Ok(out) => match (child.wait(), out) {
            (true, Some(out)) => Ok(out),
            (false, Some(_)) if tag_file.is_some() => Err(WorkerError::Died(
                "ctags failed while it wrote its tag file".into(),
            )),
            (_, Some(out)) => Ok(out),
            (_, None) => Err(WorkerError::Died("ctags wrote no tag file".into())),
        },
        Err(_) => {
            child.kill();
            child.wait();
            Err(WorkerError::Timeout(timeout))
        }
    }
}

/// `path` as the list ctags reads names it: `./` before a name that starts with `-`, which ctags
/// would otherwise take for an option (`--options=/elsewhere`).
fn listed(path: &Path) -> Vec<u8> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.starts_with(b"-") {
        [b"./", bytes].concat()
    } else {
        bytes.to_vec()
    }
}

/// The arguments of a batch run: the interactive run's, in the tag-file format, then
/// `extra_args`, reading the list of files from standard input and writing the tags to
/// `tag_path` (standard output without one).
fn batch_args<'a>(extra_args: &'a [String], tag_path: Option<&'a Path>) -> Vec<&'a OsStr> {
    base_args()
        .into_iter()
        .filter(|a| {
            // The tag-file format costs ctags a fifth less than JSON; no pattern with numbers,
            // and no `line:` field, which would say the number a second time.
            !matches!(
                *a,
                "--_interactive" | "--output-format=json" | "--fields=-P"
            )
        })
        .chain(["--output-format=u-ctags", "--excmd=number", "--fields=-n"])
        .map(OsStr::new)
        .chain(extra_args.iter().map(OsStr::new))
        .chain(["-L", "-", "-o"].map(OsStr::new))
        .chain([tag_path.map_or(OsStr::new("-"), Path::as_os_str)])
        .collect()
}

/// The tags ctags wrote to `stdout`, or to `tags_from` once it has closed `stdout`, for each
/// of the `files` files `index` numbers by path, in order; `None` when the tag file cannot be
/// opened.
fn read_tags(
    stdout: std::fs::File,
    tags_from: Option<std::path::PathBuf>,
    index: &HashMap<Vec<u8>, usize>,
    files: usize,
) -> Option<Vec<FileTags>> {
    let mut reader: BufReader<Box<dyn std::io::Read>> = match tags_from {
        // ctags's output is empty: it has ended when it closes it.
        Some(file) => {
            let _ = std::io::copy(&mut { stdout }, &mut std::io::sink());
            match std::fs::File::open(file) {
                Ok(f) => BufReader::with_capacity(1 << 16, Box::new(f)),
                Err(_) => return None,
            }
        }
        None => BufReader::with_capacity(1 << 16, Box::new(stdout)),
    };
    let mut buf = Vec::with_capacity(512);
    let mut out: Vec<FileTags> = (0..files).map(|_| FileTags::default()).collect();
    // A file's tags come together: its path is looked up once, not once a tag, and its
    // tags are gathered in `run`, then moved to the file in a vector of their number.
    let mut last: Option<(Vec<u8>, usize)> = None;
    let mut run: Vec<crate::Tag> = Vec::new();
    let mut flush = |run: &mut Vec<crate::Tag>, last: &Option<(Vec<u8>, usize)>| {
        if let Some((_, i)) = last {
            let tags: &mut Vec<crate::Tag> = &mut out[*i].tags;
            tags.reserve_exact(run.len());
            tags.append(run);
        }
    };
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if buf.starts_with(b"!_") {
            continue; // pseudo tags
        }
        if let Some((tag, path)) = crate::Tag::parse_tag_line(&buf) {
            let known = match &last {
                Some((p, _)) if **p == *path => true,
                _ => {
                    flush(&mut run, &last);
                    last = index.get(&*path).map(|&i| (path.to_vec(), i));
                    last.is_some()
                }
            };
            if known {
                run.push(tag);
            }
        }
    }
    flush(&mut run, &last);
    Some(out)
}

/// A file removed when dropped.
struct RemovedOnDrop(std::path::PathBuf);

impl Drop for RemovedOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_name_is_never_an_option() {
        assert_eq!(listed(Path::new("--options=x.c")), b"./--options=x.c");
        assert_eq!(listed(Path::new("fs/-a.c")), b"fs/-a.c");
    }

    #[test]
    fn a_chunk_returns_tags_per_file_in_order() {
        // Not skipped without ctags: a green run must mean the test ran.
        let ctags = Ctags::probe()
            .unwrap_or_else(|e| panic!("this test runs ctags, which it needs installed: {e}"));
        let dir = std::env::temp_dir().join(format!("knav-batch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.c"), "int a;\nstatic void f(void)\n{\n}\n").unwrap();
        std::fs::write(dir.join("empty.c"), "/* nothing */\n").unwrap();
        std::fs::write(dir.join("b.h"), "struct s { int m; };\n").unwrap();
        // Names that are not UTF-8, or that ctags escapes, are matched by their bytes.
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"caf\xff\\\t.c"));
        std::fs::write(dir.join(odd), "int g(void) { return 0; }\n").unwrap();
        // Listed, `nl\nb.h` would be read as `nl` and `b.h`: b.h's tags twice.
        let newline = Path::new("nl\nb.h");
        std::fs::write(dir.join(newline), "int nl;\n").unwrap();
        let paths = ["a.c", "empty.c", "b.h"].map(Path::new);
        // A tag file of ctags's own, outside the listed tree; a stale one there is replaced.
        let tag_file = dir.with_extension("tags");
        std::fs::write(&tag_file, "stale\ta.c\t1;\"\tvariable\tline:1\n").unwrap();
        for tags_to in [None, Some(tag_file.as_path())] {
            let got = tags_of_chunk(
                &ctags,
                &dir,
                &[],
                &[paths[0], paths[1], newline, paths[2], odd],
                Duration::from_secs(30),
                tags_to,
            )
            .unwrap();
            let names: Vec<Vec<&str>> = got
                .iter()
                .map(|f| f.tags.iter().map(|t| t.name.as_str()).collect())
                .collect();
            assert_eq!(
                names,
                [vec!["a", "f"], vec![], vec![], vec!["s", "m"], vec!["g"]],
                "tags to {tags_to:?}"
            );
        }
        assert!(!tag_file.exists(), "the tag file is removed once read");
        // ctags cannot write a tag file where there is no directory: the chunk fails (and is
        // retried file by file), never a chunk of files without tags.
        let nowhere = dir.join("no-such-dir/tags");
        let failed = tags_of_chunk(
            &ctags,
            &dir,
            &[],
            &[paths[0]],
            Duration::from_secs(30),
            Some(&nowhere),
        );
        assert!(matches!(failed, Err(WorkerError::Died(_))), "{failed:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
