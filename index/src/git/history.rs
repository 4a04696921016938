//! The history index: for every commit, the definitions its diff touched (lines added and
//! removed inside each, definitions added, removed or moved to another file), built from the
//! commits not seen yet and answered by name without running git.
//!
//! A commit's changed `.c` and `.h` files come from one `git log --raw` stream (blob ids, merges
//! left out, as `git log -p` shows them); both versions of each are read from git (two
//! `git cat-file --batch` readers, [`BATCH_FILES`] changes at a time) and their definitions
//! found by braces (`knav_c::spans`), so no file is checked out and ctags is not run. A
//! definition on both sides with another text has its own lines diffed. A definition that
//! leaves one file and arrives in another with the same text in one commit has moved: one
//! `moved` entry, not a removal and an addition. A root commit introduces all it holds.
//!
//! ```text
//! history/lock              held by the one builder at a time
//! history/commits.json      the state: commits in the order read (id, time, author, subject),
//!                           the tips whose commits are all in, the segments
//! history/paths.txt         the paths touches name, by number
//! history/seg-N/names.fst   name → offset of its touches in touches.dat
//! history/seg-N/touches.dat the header (`HTCH`), then per name: a varint count, then its
//!                           touches (commit, path, lines added and removed, what happened,
//!                           the file it moved from)
//! ```
//! Each build adds a segment (past [`MAX_SEGMENTS`], those after the first are merged) and
//! writes the state last, through a rename: readers see the old or the new history, never half
//! of one.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Stdio;

use serde::{Deserialize, Serialize};

use crate::codec::{put_varint, Reader};
use crate::git::{self, GitError};
use crate::progress::Progress;
use knav_c::spans::{def_spans, DefSpan, SpanKind};

/// The history directory's name below an index directory.
pub const DIR: &str = "history";
const COMMITS: &str = "commits.json";
const PATHS: &str = "paths.txt";
const NAMES: &str = "names.fst";
const TOUCHES: &str = "touches.dat";
/// The format of the history files (4: `touches.dat` starts with the index's header).
const VERSION: u32 = 4;
/// The kind of `touches.dat` in its header ([`crate::format::header_of`]).
const TOUCHES_KIND: &[u8; 4] = b"HTCH";
/// Segments at most: past this, the segments after the first (the root commit's, the largest)
/// are merged into one, so a history updated after every commit stays a few files to read.
const MAX_SEGMENTS: usize = 8;

/// A commit the history holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CommitInfo {
    /// Object id.
    pub id: String,
    /// Author time, seconds since the epoch.
    pub time: i64,
    /// Author name.
    pub author: String,
    /// The subject line.
    pub subject: String,
}

/// What happened to a definition in a commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Lines of it changed.
    Changed,
    /// It appeared in the file.
    Added,
    /// It left the file.
    Removed,
    /// It left another file for this one, its text unchanged.
    Moved,
}

/// One definition touched by one commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Touch {
    /// Index into the commits.
    pub commit: u32,
    /// Index into the paths.
    pub path: u32,
    /// Lines added inside it.
    pub added: u32,
    /// Lines removed inside it.
    pub removed: u32,
    /// What happened.
    pub change: Change,
    /// For a move: the path it left.
    pub from: Option<u32>,
    /// Function, type or macro.
    pub kind: SpanKind,
}

/// The largest `commits.json` or `paths.txt` read (a commit's record is a few hundred bytes:
/// the kernel's whole history is well under it).
const MAX_LIST_BYTES: u64 = 1 << 30;

/// The state file: commits, tips, segments (the paths are in their own file).
#[derive(Default, Serialize, Deserialize)]
struct State {
    version: u32,
    commits: Vec<CommitInfo>,
    tips: Vec<String>,
    /// The commits (indexes) no tip reaches any more (rewritten away and collected): their
    /// touches are not answered.
    #[serde(default)]
    gone: Vec<u32>,
    /// The segment directories (`seg-N`), oldest first: each holds the touches of the commits
    /// one build read.
    segments: Vec<u32>,
    #[serde(skip)]
    paths: Vec<String>,
}

/// One segment, mapped.
struct Segment {
    names: fst::Map<crate::disk::MapBytes>,
    touches: memmap2::Mmap,
}

/// An open history.
pub struct History {
    state: State,
    segments: Vec<Segment>,
    gone: HashSet<u32>,
}

/// What a build did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HistoryReport {
    /// Commits read now.
    pub commits_added: u64,
    /// Commits in the history.
    pub commits: u64,
    /// Touched definitions recorded now.
    pub touches_added: u64,
    /// Bytes of the history files.
    pub bytes: u64,
    /// Wall time in milliseconds.
    pub ms: u64,
}

fn io_failed(what: &str, e: impl std::fmt::Display) -> GitError {
    GitError::Failed {
        what: what.to_string(),
        said: e.to_string(),
    }
}

fn map(path: &Path) -> Result<memmap2::Mmap, String> {
    crate::disk::map_file(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `names.fst` of segment directory `seg`; one cut short or not an FST is an error naming
/// it (the `fst` crate would take a cut one and panic on its first lookup).
fn open_names(seg: &Path) -> Result<fst::Map<crate::disk::MapBytes>, String> {
    crate::damage::open_fst(seg, NAMES, None).map_err(|e| format!("the history is damaged: {e}"))
}

/// The `touches.dat` of segment directory `seg`, mapped; a foreign or damaged header is an
/// error naming it.
fn map_touches(seg: &Path) -> Result<memmap2::Mmap, String> {
    let path = seg.join(TOUCHES);
    let m = map(&path)?;
    crate::format::check_header_of(&m, TOUCHES_KIND, VERSION, &path)
        .map_err(|e| format!("the history is damaged: {e}"))?;
    Ok(m)
}

impl History {
    /// Opens the history under `index_dir`; `None` when none was built (or by another format).
    pub fn open(index_dir: &Path) -> Result<Option<History>, String> {
        let dir = index_dir.join(DIR);
        // Read as every index file is: never through a link, never blocking on a FIFO, a file
        // past its bound refused from its length.
        let Ok(own) = crate::indexdir::IndexDir::open(index_dir).and_then(|d| d.sub(DIR)) else {
            return Ok(None);
        };
        let Ok(bytes) = own.read(COMMITS, MAX_LIST_BYTES) else {
            return Ok(None);
        };
        let Ok(mut state) = serde_json::from_slice::<State>(&bytes) else {
            return Ok(None);
        };
        if state.version != VERSION {
            return Ok(None);
        }
        let paths = own
            .read(PATHS, MAX_LIST_BYTES)
            .map_err(|e| format!("{}: {e}", dir.join(PATHS).display()))?;
        state.paths = paths
            .split(|&b| b == b'\n')
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        let mut segments = Vec::with_capacity(state.segments.len());
        for n in &state.segments {
            let seg = dir.join(format!("seg-{n}"));
            let names = open_names(&seg)?;
            segments.push(Segment {
                names,
                touches: map_touches(&seg)?,
            });
        }
        let gone = state.gone.iter().copied().collect();
        Ok(Some(History {
            state,
            segments,
            gone,
        }))
    }

    /// The tips whose commits are all in.
    pub fn tips(&self) -> &[String] {
        &self.state.tips
    }

    /// The commits, in the order read (oldest first).
    pub fn commits(&self) -> &[CommitInfo] {
        &self.state.commits
    }

    /// The path at index `i`.
    pub fn path(&self, i: u32) -> &str {
        self.state.paths.get(i as usize).map_or("", String::as_str)
    }

    /// The touches of `name`, oldest commit first (none of a commit no tip reaches any more).
    pub fn touches(&self, name: &str) -> Vec<Touch> {
        let mut out = Vec::new();
        for seg in &self.segments {
            if let Some(off) = seg.names.get(name) {
                out.extend(
                    decode(&seg.touches, off as usize)
                        .into_iter()
                        .filter(|t| !self.gone.contains(&t.commit)),
                );
            }
        }
        out
    }
}

fn encode<'a>(out: &mut Vec<u8>, touches: impl ExactSizeIterator<Item = &'a Touch>) {
    put_varint(out, touches.len() as u64);
    for t in touches {
        put_varint(out, u64::from(t.commit));
        put_varint(out, u64::from(t.path));
        put_varint(out, u64::from(t.added));
        put_varint(out, u64::from(t.removed));
        let change = match t.change {
            Change::Changed => 0,
            Change::Added => 1,
            Change::Removed => 2,
            Change::Moved => 3,
        };
        let kind = match t.kind {
            SpanKind::Function => 0,
            SpanKind::Type => 1,
            SpanKind::Macro => 2,
        };
        out.push(change | kind << 2);
        if let Some(f) = t.from {
            put_varint(out, u64::from(f));
        }
    }
}

fn decode(buf: &[u8], at: usize) -> Vec<Touch> {
    let mut r = Reader::new(buf.get(at..).unwrap_or(&[]));
    let count = r.varint();
    let mut out = Vec::with_capacity(count.min(1 << 16) as usize);
    for _ in 0..count {
        let (commit, path, added, removed) = (r.varint(), r.varint(), r.varint(), r.varint());
        let tag = r.u8();
        let change = match tag & 3 {
            0 => Change::Changed,
            1 => Change::Added,
            2 => Change::Removed,
            _ => Change::Moved,
        };
        let kind = match tag >> 2 {
            0 => SpanKind::Function,
            1 => SpanKind::Type,
            _ => SpanKind::Macro,
        };
        let from = (change == Change::Moved).then(|| r.varint() as u32);
        if r.overrun {
            break;
        }
        out.push(Touch {
            commit: commit as u32,
            path: path as u32,
            added: added as u32,
            removed: removed as u32,
            change,
            from,
            kind,
        });
    }
    out
}

/// Touched definitions of one file by name, each with a hash of its text (what a move keeps).
type Found<'a> = Vec<(&'a str, Touch, u64)>;

/// Touched definitions of one commit by the number of their name in [`ByName`].
type Pending = Vec<(u32, Touch, u64)>;

/// The touches a build found, by name: each name's text kept once and the touches in one flat
/// list, grouped by name only when written. A commit of a whole tree touches millions of
/// definitions (5.7 million for Linux 6.1): a map of names to vectors of touches, with a name
/// allocated per touch on the way, took most of the build's memory.
#[derive(Default)]
struct ByName {
    ids: HashMap<Box<str>, u32>,
    /// (the name's number in `ids`, the touch), in the order found.
    touches: Vec<(u32, Touch)>,
}

impl ByName {
    /// The number of `name`, given it now if it has none.
    fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(name.into(), id);
        id
    }

    /// The names in byte order, and the touches grouped by them in that order (each name's in
    /// the order found), each with the name's place in the first list.
    fn sorted(self) -> (Vec<Box<str>>, Vec<(u32, Touch)>) {
        let mut names: Vec<(Box<str>, u32)> = self.ids.into_iter().collect();
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut rank = vec![0u32; names.len()];
        for (r, (_, id)) in names.iter().enumerate() {
            rank[*id as usize] = r as u32;
        }
        let mut touches = self.touches;
        for (id, _) in &mut touches {
            *id = rank[*id as usize];
        }
        // Stable: a name's touches keep the order they were found in (oldest commit first).
        touches.sort_by_key(|&(r, _)| r);
        (names.into_iter().map(|(n, _)| n).collect(), touches)
    }
}

/// One file a commit changed: its blobs before and after (None: absent).
struct FileChange {
    path: String,
    old: Option<String>,
    new: Option<String>,
}

/// One commit of the stream.
struct Read1 {
    info: CommitInfo,
    files: Vec<FileChange>,
}

/// Brings the history under `index_dir` up to date with the commits reachable from `tip`
/// (`HEAD` when `None`) in the repository of `root`.
pub fn update(
    root: &Path,
    index_dir: &Path,
    tip: Option<&str>,
    progress: &mut Progress,
) -> Result<HistoryReport, GitError> {
    let started = std::time::Instant::now();
    // The blobs of a batch are read and analyzed on every core: as in a segment build, a few
    // arenas, and a large block mapped on its own (unmapped when freed, not kept in a heap).
    crate::alloc::limit_malloc_arenas();
    let _mapped = crate::alloc::LargeBlocksMapped::start();
    let tip = git::resolve(root, tip.unwrap_or("HEAD"))?;
    let dir = index_dir.join(DIR);
    fs::create_dir_all(&dir).map_err(|e| io_failed("create the history directory", e))?;
    // O_NOFOLLOW, never truncated: a link planted as the lock is refused, its target untouched.
    let lock = crate::indexdir::IndexDir::open(&dir)
        .and_then(|d| d.lock_file("lock"))
        .map_err(|e| io_failed("lock the history", e))?;
    lock.lock().map_err(|e| io_failed("lock the history", e))?;
    let mut state = match History::open(index_dir).ok().flatten() {
        Some(h) => h.state,
        None => State {
            version: VERSION,
            ..State::default()
        },
    };
    remove_unlisted(&dir, &state);
    let mut report = HistoryReport::default();
    if !state.tips.contains(&tip.commit) {
        // A tip rewritten away and collected can no longer be excluded: git would refuse it,
        // and the commits only it reached are gone from the repository.
        let tips_before = state.tips.len();
        state.tips = live_tips(root, &state.tips)?;
        let shallow = shallow_commits(root)?;
        let known: HashMap<String, u32> = state
            .commits
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.clone(), i as u32))
            .collect();
        let mut fresh = Vec::new();
        let mut gone: HashSet<u32> = state.gone.iter().copied().collect();
        for c in read_log(root, &tip.commit, &state.tips, &shallow, progress)? {
            match known.get(&c.info.id) {
                // Reachable again: answered again.
                Some(i) => {
                    gone.remove(i);
                }
                None => fresh.push(c),
            }
        }
        state.gone = gone.into_iter().collect();
        state.gone.sort_unstable();
        let by_name = read_touches(root, &fresh, &mut state, progress)?;
        report.touches_added = by_name.touches.len() as u64;
        report.commits_added = fresh.len() as u64;
        state.commits.extend(fresh.into_iter().map(|c| c.info));
        state.tips.push(tip.commit.clone());
        if state.tips.len() < tips_before + 1 {
            state.gone = unreachable(root, &state)?;
        }
        // A tip another tip reaches adds nothing: the list stays one tip a line of work.
        state.tips = independent(root, &state.tips)?;
        write(&dir, &mut state, by_name)?;
    }
    report.bytes = dir_bytes(&dir, &state);
    progress.finish();
    report.commits = state.commits.len() as u64;
    report.ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Those of the tips `ids` still in the repository and reached by a ref (a branch, a tag,
/// HEAD): a tip rewritten away (`commit --amend`, a rebase) is dropped even while the reflog
/// keeps it.
fn live_tips(root: &Path, ids: &[String]) -> Result<Vec<String>, GitError> {
    let ids = existing_commits(root, ids)?;
    if ids.is_empty() {
        return Ok(ids);
    }
    // Object ids (checked by existing_commits): none reads as an option.
    let mut cmd = git::git(root);
    cmd.arg("rev-list").args(&ids).args(["--not", "--all"]);
    let unreferenced: HashSet<String> = lines_of(cmd, "git rev-list --not --all")?
        .into_iter()
        .collect();
    Ok(ids
        .into_iter()
        .filter(|t| !unreferenced.contains(t))
        .collect())
}

/// The tips of `ids` no other of them reaches (`git merge-base --independent`).
fn independent(root: &Path, ids: &[String]) -> Result<Vec<String>, GitError> {
    if ids.len() < 2 {
        return Ok(ids.to_vec());
    }
    let mut cmd = git::git(root);
    cmd.args(["merge-base", "--independent", "--end-of-options"])
        .args(ids);
    let kept: HashSet<String> = lines_of(cmd, "git merge-base --independent")?
        .into_iter()
        .collect();
    Ok(ids.iter().filter(|t| kept.contains(*t)).cloned().collect())
}

/// The object ids `cmd` prints, one a line.
fn lines_of(mut cmd: std::process::Command, what: &str) -> Result<Vec<String>, GitError> {
    let out = cmd.output().map_err(|e| GitError::NoGit(e.to_string()))?;
    if !out.status.success() {
        return Err(GitError::Failed {
            what: what.into(),
            said: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| git::is_object_id(l))
        .map(str::to_string)
        .collect())
}

/// Those of the commits `ids` still in the repository (`git cat-file --batch-check`).
fn existing_commits(root: &Path, ids: &[String]) -> Result<Vec<String>, GitError> {
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let sizes = object_sizes(root, &ids, "commit")?;
    Ok(ids
        .into_iter()
        .filter(|i| sizes.contains_key(*i))
        .map(str::to_string)
        .collect())
}

/// The indexes of `state`'s commits that none of its tips reaches (`git rev-list TIPS`).
fn unreachable(root: &Path, state: &State) -> Result<Vec<u32>, GitError> {
    let mut cmd = git::git(root);
    cmd.args(["rev-list", "--end-of-options"]).args(&state.tips);
    let out = cmd.output().map_err(|e| GitError::NoGit(e.to_string()))?;
    if !out.status.success() {
        return Err(GitError::Failed {
            what: "git rev-list".into(),
            said: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let reached: HashSet<&[u8]> = out.stdout.split(|&b| b == b'\n').collect();
    Ok(state
        .commits
        .iter()
        .enumerate()
        .filter(|(_, c)| !reached.contains(c.id.as_bytes()))
        .map(|(i, _)| i as u32)
        .collect())
}

/// The sizes of those of `oids` that are objects of type `kind` in the repository
/// (`git cat-file --batch-check`, which reads no object's content).
fn object_sizes(root: &Path, oids: &[&str], kind: &str) -> Result<HashMap<String, u64>, GitError> {
    use std::io::Write;
    let what = "git cat-file --batch-check";
    let mut child = git::Reaped(
        git::git(root)
            .args([
                "cat-file",
                "--batch-check=%(objectname) %(objecttype) %(objectsize)",
                "--buffer",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| GitError::NoGit(e.to_string()))?,
    );
    let stdin = child.0.stdin.take();
    let list: Vec<u8> = oids
        .iter()
        .flat_map(|o| [o.as_bytes(), b"\n"].concat())
        .collect();
    // Written beside the reader: git answers while it is still being asked.
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&list);
        }
    });
    let mut text = String::new();
    let read =
        child.0.stdout.take().map(|o| {
            std::io::Read::read_to_string(&mut std::io::Read::take(o, 1 << 30), &mut text)
        });
    drop(child);
    let _ = writer.join();
    if let Some(Err(e)) = read {
        return Err(io_failed(what, e));
    }
    Ok(text
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            match (f.next(), f.next(), f.next().and_then(|n| n.parse().ok())) {
                (Some(o), Some(k), Some(n)) if k == kind => Some((o.to_string(), n)),
                _ => None,
            }
        })
        .collect())
}

/// File changes analyzed together: their blobs are read at once (two git readers) and dropped
/// after, so a commit of a whole tree is read in parts.
const BATCH_FILES: usize = 2000;

/// The most bytes of blobs read at once (fewer file changes than [`BATCH_FILES`] past it).
const BATCH_BYTES: u64 = 64 << 20;

/// The largest blob read: a larger file is not indexed by knav (its walk's limit), and its
/// changes touch nothing in the history.
const MAX_BLOB_BYTES: u64 = crate::tree::walk::DEFAULT_MAX_FILE_BYTES;

/// The file changes from `units[start]` read together (at most [`BATCH_FILES`], their blobs
/// at most [`BATCH_BYTES`] unless one change alone is larger): where they end, and the blobs
/// to read for them, distinct, each at most [`MAX_BLOB_BYTES`] (sizes asked of git first: no
/// larger blob is ever read).
fn next_chunk<'a>(
    root: &Path,
    units: &[(usize, &'a FileChange)],
    start: usize,
) -> Result<(usize, Vec<&'a str>), GitError> {
    let end = (start + BATCH_FILES).min(units.len());
    let blobs_of = |f: &'a FileChange| [f.old.as_deref(), f.new.as_deref()].into_iter().flatten();
    let mut seen = HashSet::new();
    let all: Vec<&str> = units[start..end]
        .iter()
        .flat_map(|(_, f)| blobs_of(f))
        .filter(|o| seen.insert(*o))
        .collect();
    let sizes = object_sizes(root, &all, "blob")?;
    let mut seen = HashSet::new();
    let (mut oids, mut bytes, mut cut) = (Vec::new(), 0u64, start);
    for (_, f) in &units[start..end] {
        let new: Vec<(&str, u64)> = blobs_of(f)
            .filter(|o| !seen.contains(o))
            .filter_map(|o| sizes.get(o).map(|&n| (o, n)))
            .filter(|&(_, n)| n <= MAX_BLOB_BYTES)
            .collect();
        let more: u64 = new.iter().map(|(_, n)| n).sum();
        if cut > start && bytes + more > BATCH_BYTES {
            break;
        }
        bytes += more;
        cut += 1;
        for (o, _) in new {
            seen.insert(o);
            oids.push(o);
        }
    }
    Ok((cut, oids))
}

/// The touches of the commits `fresh` (numbered from `state.commits.len()`), by name; new
/// paths are added to `state.paths`.
fn read_touches(
    root: &Path,
    fresh: &[Read1],
    state: &mut State,
    progress: &mut Progress,
) -> Result<ByName, GitError> {
    use rayon::prelude::*;
    let mut paths: HashMap<String, u32> = state
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| (p.clone(), i as u32))
        .collect();
    for f in fresh.iter().flat_map(|c| &c.files) {
        if !paths.contains_key(&f.path) {
            paths.insert(f.path.clone(), state.paths.len() as u32);
            state.paths.push(f.path.clone());
        }
    }
    let first = state.commits.len() as u32;
    let units: Vec<(usize, &FileChange)> = fresh
        .iter()
        .enumerate()
        .flat_map(|(k, c)| c.files.iter().map(move |f| (k, f)))
        .collect();
    // A commit no file of which had an old side removes no definition, so moves none: its
    // touches are folded chunk by chunk (a root commit's are the whole tree's).
    let may_move: Vec<bool> = fresh
        .iter()
        .map(|c| c.files.iter().any(|f| f.old.is_some()))
        .collect();
    let mut by_name = ByName::default();
    let mut pending: Pending = Vec::new();
    let mut pending_commit = 0usize;
    let total = units.len() as u64;
    let mut start = 0;
    while start < units.len() {
        progress.update("history", start as u64, total, 0, 0);
        let (end, oids) = next_chunk(root, &units, start)?;
        let chunk = &units[start..end];
        start = end;
        let blobs = read_batch(root, &oids)?;
        let found: Vec<(usize, Found)> = chunk
            .par_iter()
            .map(|&(k, f)| {
                let path = paths.get(&f.path).copied().unwrap_or(0);
                (k, file_touches(f, first + k as u32, path, &blobs))
            })
            .collect();
        for (k, ts) in found {
            if k != pending_commit {
                fold_moves(std::mem::take(&mut pending), &mut by_name);
                pending_commit = k;
            }
            pending.extend(ts.into_iter().map(|(n, t, h)| (by_name.id(n), t, h)));
        }
        if !may_move[pending_commit] {
            fold_moves(std::mem::take(&mut pending), &mut by_name);
        }
    }
    fold_moves(pending, &mut by_name);
    Ok(by_name)
}

fn dir_bytes(dir: &Path, state: &State) -> u64 {
    let seg_files = state
        .segments
        .iter()
        .flat_map(|n| [NAMES, TOUCHES].map(|f| dir.join(format!("seg-{n}")).join(f)));
    [dir.join(COMMITS), dir.join(PATHS)]
        .into_iter()
        .chain(seg_files)
        .filter_map(|f| fs::metadata(f).ok())
        .map(|m| m.len())
        .sum()
}

/// Writes the touches `by_name` as a new segment, then the paths, then the state naming it
/// (each through a temporary name and a rename, the state last: a reader sees the history
/// before or after, never a state naming a segment not written).
fn write(dir: &Path, state: &mut State, by_name: ByName) -> Result<(), GitError> {
    let fail = |e: std::io::Error| io_failed("write the history", e);
    // No touches (no new commit, or none touching a definition): no segment, only the state.
    if !by_name.touches.is_empty() {
        let (names, touches) = by_name.sorted();
        let groups = touches.chunk_by(|a, b| a.0 == b.0).map(|g| {
            let name: &str = names.get(g[0].0 as usize).map_or("", |n| &**n);
            (name, g.iter().map(|(_, t)| t))
        });
        write_segment(dir, state, groups)?;
    }
    if state.segments.len() > MAX_SEGMENTS {
        merge_tail(dir, state)?;
    }
    let replace = |name: &str, bytes: &[u8]| -> Result<(), GitError> {
        let t = dir.join(format!("{name}.tmp-{}", std::process::id()));
        fs::write(&t, bytes).map_err(fail)?;
        fs::rename(&t, dir.join(name)).map_err(fail)
    };
    replace(PATHS, state.paths.join("\n").as_bytes())?;
    let json = serde_json::to_vec(&*state).map_err(|e| io_failed("write the history", e))?;
    replace(COMMITS, &json)
}

/// Merges the segments after the first into one, named in `state` in their place (the old
/// ones are removed by the next update, once no reader of this state can still open them).
fn merge_tail(dir: &Path, state: &mut State) -> Result<(), GitError> {
    use fst::{IntoStreamer, Streamer};
    let open = |n: u32| -> Result<Segment, GitError> {
        let seg = dir.join(format!("seg-{n}"));
        let names = open_names(&seg).map_err(|e| io_failed("merge", e))?;
        let touches = map_touches(&seg).map_err(|e| io_failed("merge", e))?;
        Ok(Segment { names, touches })
    };
    let tail: Vec<Segment> = state.segments[1..]
        .iter()
        .map(|&n| open(n))
        .collect::<Result<_, _>>()?;
    let mut union = fst::map::OpBuilder::new();
    for s in &tail {
        union = union.add(&s.names);
    }
    let mut stream = union.union().into_stream();
    let mut merged: BTreeMap<String, Vec<Touch>> = BTreeMap::new();
    while let Some((name, hits)) = stream.next() {
        // Oldest segment first, as the touches are kept.
        let mut hits = hits.to_vec();
        hits.sort_by_key(|h| h.index);
        let mut ts = Vec::new();
        for h in hits {
            ts.extend(decode(&tail[h.index].touches, h.value as usize));
        }
        merged.insert(String::from_utf8_lossy(name).into_owned(), ts);
    }
    // Numbered past every segment named now: none of them is overwritten.
    let first = state.segments[0];
    write_segment(
        dir,
        state,
        merged.iter().map(|(n, ts)| (n.as_str(), ts.iter())),
    )?;
    let merged_into = state.segments.last().copied().unwrap_or(first);
    state.segments = vec![first, merged_into];
    Ok(())
}

/// Removes the segment directories `state` does not name (merged away by an earlier update).
fn remove_unlisted(dir: &Path, state: &State) {
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let listed = name
            .strip_prefix("seg-")
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| state.segments.contains(&n));
        if name.starts_with("seg-") && !listed {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// Writes `groups` (each name, in byte order, with its touches) as the next segment and names
/// it in `state`. Both files are written as they are made, neither held whole.
fn write_segment<'a, T>(
    dir: &Path,
    state: &mut State,
    groups: impl Iterator<Item = (&'a str, T)>,
) -> Result<(), GitError>
where
    T: ExactSizeIterator<Item = &'a Touch>,
{
    use std::io::Write;
    let fail = |e: std::io::Error| io_failed("write the history", e);
    let n = state.segments.iter().max().map_or(0, |m| m + 1);
    let seg = dir.join(format!("seg-{n}"));
    let tmp = dir.join(format!("seg-{n}.tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(fail)?;
    let create = |name: &str| fs::File::create(tmp.join(name)).map(std::io::BufWriter::new);
    let mut touches = create(TOUCHES).map_err(fail)?;
    let mut names = fst::MapBuilder::new(create(NAMES).map_err(fail)?)
        .map_err(|e| io_failed("write the history's names", e))?;
    touches
        .write_all(&crate::format::header_of(TOUCHES_KIND, VERSION))
        .map_err(fail)?;
    let (mut at, mut record) = (crate::format::HEADER_LEN as u64, Vec::new());
    for (name, ts) in groups {
        names
            .insert(name, at)
            .map_err(|e| io_failed("write the history's names", e))?;
        record.clear();
        encode(&mut record, ts);
        touches.write_all(&record).map_err(fail)?;
        at += record.len() as u64;
    }
    names
        .into_inner()
        .map_err(|e| io_failed("write the history's names", e))?
        .flush()
        .map_err(fail)?;
    touches.flush().map_err(fail)?;
    drop(touches);
    let _ = fs::remove_dir_all(&seg);
    fs::rename(&tmp, &seg).map_err(fail)?;
    state.segments.push(n);
    Ok(())
}

/// The most bytes of one token of `git log`'s output kept (a commit's header, a path): the
/// rest of a longer one is read and dropped.
const MAX_TOKEN: usize = 64 << 10;

/// Reads the next NUL-terminated token of `r` into `buf` (without its NUL), keeping at most
/// [`MAX_TOKEN`] bytes of it; false at the end of the stream.
fn next_token(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    buf.clear();
    let mut any = false;
    loop {
        let avail = r.fill_buf()?;
        if avail.is_empty() {
            return Ok(any);
        }
        any = true;
        let (take, done) = match memchr::memchr(0, avail) {
            Some(i) => (i, true),
            None => (avail.len(), false),
        };
        let room = MAX_TOKEN.saturating_sub(buf.len());
        buf.extend_from_slice(&avail[..take.min(room)]);
        r.consume(take + usize::from(done));
        if done {
            return Ok(true);
        }
    }
}

/// The commits of a shallow clone's boundary (`.git/shallow`): their parents are not in the
/// repository, so their diffs show all they hold as added, which introduces nothing.
fn shallow_commits(root: &Path) -> Result<HashSet<String>, GitError> {
    let mut cmd = git::git(root);
    cmd.args(["rev-parse", "--git-path", "shallow"]);
    let out = cmd.output().map_err(|e| GitError::NoGit(e.to_string()))?;
    if !out.status.success() {
        return Err(GitError::Failed {
            what: "git rev-parse --git-path shallow".into(),
            said: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let line = out.stdout.strip_suffix(b"\n").unwrap_or(&out.stdout);
    let path = root.join(std::ffi::OsStr::from_bytes(line));
    let text = fs::read_to_string(path).unwrap_or_default();
    Ok(text
        .lines()
        .filter(|l| git::is_object_id(l))
        .map(str::to_string)
        .collect())
}

/// The commits reachable from `tip` and from none of `seen`, oldest first, with the changes of
/// their `.c` and `.h` files (none for a commit of `shallow`).
fn read_log(
    root: &Path,
    tip: &str,
    seen: &[String],
    shallow: &HashSet<String>,
    progress: &mut Progress,
) -> Result<Vec<Read1>, GitError> {
    progress.phase("reading the commits");
    let mut cmd = git::git(root);
    cmd.args([
        "log",
        "--reverse",
        "--topo-order",
        "--no-merges",
        "--root",
        "--raw",
        "-z",
        "--no-abbrev",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-show-signature",
        "--no-notes",
        "--relative",
        "--format=%x01%H%x02%at%x02%an%x02%s",
        "--end-of-options",
        tip,
    ]);
    for s in seen {
        cmd.arg(format!("^{s}"));
    }
    cmd.args(["--", "*.c", "*.h"]);
    let mut child = git::Reaped(
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| GitError::NoGit(e.to_string()))?,
    );
    let stdout = child
        .0
        .stdout
        .take()
        .ok_or_else(|| io_failed("git log", "no output"))?;
    let mut reader = BufReader::with_capacity(1 << 20, stdout);
    let out = parse_log(&mut reader, shallow)?;
    let mut said = String::new();
    if let Some(e) = child.0.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut std::io::Read::take(e, 1 << 16), &mut said);
    }
    let status = child.0.wait().map_err(|e| io_failed("git log", e))?;
    if !status.success() {
        return Err(GitError::Failed {
            what: "git log".into(),
            said: said.trim().to_string(),
        });
    }
    Ok(out)
}

/// The commits of `git log -z --raw` with the format [`read_log`] asks for: a header token
/// `\x01ID\x02TIME\x02AUTHOR\x02SUBJECT`, then per file a token `:MODES OIDS STATUS` and a
/// token with its path (raw bytes: escaped as knav keeps paths, [`crate::tree::pathname`]).
fn parse_log(reader: &mut impl BufRead, shallow: &HashSet<String>) -> Result<Vec<Read1>, GitError> {
    let mut out: Vec<Read1> = Vec::new();
    let mut tok = Vec::new();
    let mut path = Vec::new();
    let fail = |e: std::io::Error| io_failed("git log", e);
    while next_token(reader, &mut tok).map_err(fail)? {
        let t = tok.strip_prefix(b"\n").unwrap_or(&tok);
        if let Some(head) = t.strip_prefix(b"\x01") {
            let text = String::from_utf8_lossy(head);
            let mut parts = text.splitn(4, '\x02');
            let id = parts.next().unwrap_or("").to_string();
            if !git::is_object_id(&id) {
                return Err(io_failed(
                    "git log",
                    format!("unreadable commit header '{}'", git::Quoted(&text)),
                ));
            }
            let time = parts.next().and_then(|t| t.parse().ok()).unwrap_or(0);
            let author = parts.next().unwrap_or("").to_string();
            let subject = parts.next().unwrap_or("").to_string();
            out.push(Read1 {
                info: CommitInfo {
                    id,
                    time,
                    author,
                    subject,
                },
                files: Vec::new(),
            });
            continue;
        }
        let Some(raw) = t.strip_prefix(b":") else {
            continue;
        };
        // ":old_mode new_mode old_oid new_oid STATUS", then the path.
        if !next_token(reader, &mut path).map_err(fail)? {
            break;
        }
        let Some(commit) = out.last_mut() else {
            continue;
        };
        let head = String::from_utf8_lossy(raw);
        let f: Vec<&str> = head.split(' ').collect();
        if f.len() < 5 || shallow.contains(&commit.info.id) {
            continue;
        }
        let blob = |oid: &str, mode: &str| {
            (mode.starts_with("100") && git::is_object_id(oid) && oid.bytes().any(|b| b != b'0'))
                .then(|| oid.to_string())
        };
        commit.files.push(FileChange {
            path: crate::tree::pathname::encode(&path).into_owned(),
            old: blob(f[2], f[0]),
            new: blob(f[3], f[1]),
        });
    }
    Ok(out)
}

/// One blob read for a batch of commits: its bytes and its definitions, each with a hash of
/// its text.
struct Blob {
    bytes: Vec<u8>,
    /// Where the lines that start or end a definition start: (line index from 0, offset),
    /// by line. Only those: a file of newlines would otherwise cost 4 bytes a line.
    bounds: Vec<(u32, u32)>,
    spans: Vec<(DefSpan, u64)>,
}

impl Blob {
    fn new(bytes: Vec<u8>) -> Blob {
        let defs = def_spans(&bytes);
        let mut wanted: Vec<u32> = defs
            .iter()
            .flat_map(|d| [d.first.saturating_sub(1), d.last])
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut bounds = Vec::with_capacity(wanted.len());
        let mut next = wanted.iter().peekable();
        if next.next_if_eq(&&0).is_some() {
            bounds.push((0, 0));
        }
        for (n, p) in memchr::memchr_iter(b'\n', &bytes).enumerate() {
            let Some(&&k) = next.peek() else { break };
            if k as usize == n + 1 {
                bounds.push((k, (p + 1) as u32));
                next.next();
            }
        }
        let mut blob = Blob {
            bytes,
            bounds,
            spans: Vec::new(),
        };
        blob.spans = defs
            .into_iter()
            .map(|d| {
                let hash = crate::codec::hash64(blob.text(d.first, d.last));
                (d, hash)
            })
            .collect();
        blob
    }

    /// Where line `k` (from 0) starts; the end for a line past the last.
    fn start(&self, k: u32) -> usize {
        match self.bounds.binary_search_by_key(&k, |&(l, _)| l) {
            Ok(i) => (self.bounds[i].1 as usize).min(self.bytes.len()),
            Err(_) => self.bytes.len(),
        }
    }

    /// The bytes of lines `first..=last` (1-based).
    fn text(&self, first: u32, last: u32) -> &[u8] {
        let to = self.start(last);
        let from = self.start(first.saturating_sub(1)).min(to);
        &self.bytes[from..to]
    }

    /// Lines `first..=last` (1-based), each with its newline.
    fn lines(&self, first: u32, last: u32) -> impl Iterator<Item = &[u8]> {
        self.text(first, last).split_inclusive(|&b| b == b'\n')
    }
}

/// The blobs `oids` (distinct), read from git and analyzed on every core.
fn read_batch(root: &Path, oids: &[&str]) -> Result<HashMap<String, Blob>, GitError> {
    use rayon::prelude::*;
    let got = std::sync::Mutex::new(Vec::with_capacity(oids.len()));
    let take = |oid: &str, data: &[u8]| {
        let blob = (oid.to_string(), data.to_vec());
        got.lock().unwrap_or_else(|p| p.into_inner()).push(blob);
        Ok(())
    };
    git::read_blobs(root, oids, take, || {})?;
    let raw = got.into_inner().unwrap_or_else(|p| p.into_inner());
    // A binary file (a NUL in its first 8000 bytes, git's own test) is not source: not analyzed.
    Ok(raw
        .into_par_iter()
        .filter(|(_, bytes)| memchr::memchr(0, &bytes[..bytes.len().min(8000)]).is_none())
        .map(|(oid, bytes)| (oid, Blob::new(bytes)))
        .collect())
}

/// Lines removed from and added to a definition, `old` lines to `new` lines (each with its
/// newline), as a minimal line diff aligns them. A diff that takes more than two seconds is cut
/// short (coarser: unchanged lines may count as changed).
fn lines_changed<'a>(
    old: impl Iterator<Item = &'a [u8]>,
    new: impl Iterator<Item = &'a [u8]>,
) -> (u32, u32) {
    use similar::DiffOp;
    // Lines compared by a hash of their bytes: a diff of numbers, not of byte strings (two
    // different lines collide with odds of 2^-64).
    let old: Vec<u64> = old.map(crate::codec::hash64).collect();
    let new: Vec<u64> = new.map(crate::codec::hash64).collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let (mut removed, mut added) = (0, 0);
    for op in
        similar::capture_diff_slices_deadline(similar::Algorithm::Myers, &old, &new, Some(deadline))
    {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete { old_len, .. } => removed += old_len,
            DiffOp::Insert { new_len, .. } => added += new_len,
            DiffOp::Replace {
                old_len, new_len, ..
            } => {
                removed += old_len;
                added += new_len;
            }
        }
    }
    (removed as u32, added as u32)
}

/// The definitions file change `f` of commit `idx` touched, each with a hash of its text
/// (for the moves [`fold_moves`] finds).
fn file_touches<'a>(
    f: &FileChange,
    idx: u32,
    path: u32,
    blobs: &'a HashMap<String, Blob>,
) -> Found<'a> {
    let mut out: Found = Vec::new();
    const NONE: &[(DefSpan, u64)] = &[];
    {
        let old_blob = f.old.as_ref().and_then(|o| blobs.get(o));
        let new_blob = f.new.as_ref().and_then(|n| blobs.get(n));
        // A side not read (too large, binary): the change is not knav's to judge.
        if old_blob.is_none() != f.old.is_none() || new_blob.is_none() != f.new.is_none() {
            return out;
        }
        let old = old_blob.map_or(NONE, |b| b.spans.as_slice());
        let new = new_blob.map_or(NONE, |b| b.spans.as_slice());
        // Pair by name and kind, in file order.
        let mut by_key: HashMap<(&str, SpanKind), std::collections::VecDeque<usize>> =
            HashMap::new();
        for (j, (n, _)) in new.iter().enumerate() {
            by_key
                .entry((n.name.as_str(), n.kind))
                .or_default()
                .push_back(j);
        }
        let mut used_new = vec![false; new.len()];
        for (o, ohash) in old.iter() {
            let j = by_key
                .get_mut(&(o.name.as_str(), o.kind))
                .and_then(|q| q.pop_front());
            match j {
                Some(j) => {
                    used_new[j] = true;
                    let (n, nhash) = &new[j];
                    // The same text: not touched, wherever it now stands in the file.
                    let (removed, added) = match (old_blob, new_blob) {
                        (Some(ob), Some(nb)) if nhash != ohash => {
                            lines_changed(ob.lines(o.first, o.last), nb.lines(n.first, n.last))
                        }
                        _ => (0, 0),
                    };
                    if added + removed > 0 {
                        out.push((
                            o.name.as_str(),
                            Touch {
                                commit: idx,
                                path,
                                added,
                                removed,
                                change: Change::Changed,
                                from: None,
                                kind: o.kind,
                            },
                            0,
                        ));
                    }
                }
                None => out.push((
                    o.name.as_str(),
                    Touch {
                        commit: idx,
                        path,
                        added: 0,
                        removed: o.last - o.first + 1,
                        change: Change::Removed,
                        from: None,
                        kind: o.kind,
                    },
                    *ohash,
                )),
            }
        }
        for (j, (n, nhash)) in new.iter().enumerate() {
            if !used_new[j] {
                out.push((
                    n.name.as_str(),
                    Touch {
                        commit: idx,
                        path,
                        added: n.last - n.first + 1,
                        removed: 0,
                        change: Change::Added,
                        from: None,
                        kind: n.kind,
                    },
                    *nhash,
                ));
            }
        }
    }
    out
}

/// One commit's touches into `by_name`: a removal and an addition of the same text under the
/// same name in two files are one move.
fn fold_moves(mut out: Pending, by_name: &mut ByName) {
    let mut moved = vec![false; out.len()];
    let mut removals: HashMap<(u32, SpanKind, u64), Vec<usize>> = HashMap::new();
    for (j, (name, t, hash)) in out.iter().enumerate() {
        if t.change == Change::Removed {
            removals.entry((*name, t.kind, *hash)).or_default().push(j);
        }
    }
    let mut moves: Vec<(usize, usize)> = Vec::new();
    if !removals.is_empty() {
        for (i, (name, t, hash)) in out.iter().enumerate() {
            if t.change != Change::Added {
                continue;
            }
            let Some(js) = removals.get_mut(&(*name, t.kind, *hash)) else {
                continue;
            };
            if let Some(k) = js.iter().position(|&j| out[j].1.path != t.path) {
                moves.push((i, js.remove(k)));
            }
        }
    }
    for (i, j) in moves {
        moved[j] = true;
        let from = out[j].1.path;
        let t = &mut out[i].1;
        t.change = Change::Moved;
        t.from = Some(from);
        t.added = 0;
    }
    for ((name, t, _), m) in out.into_iter().zip(moved) {
        if !m {
            by_name.touches.push((name, t));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Blob;

    #[test]
    fn a_blobs_definition_lines_are_the_files_lines() {
        let text = "int a(void)\n{\n\treturn 1;\n}\n\n#define B 2\nstruct c {\n\tint x;\n};\nint d(void)\n{\n}";
        let blob = Blob::new(text.as_bytes().to_vec());
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        assert_eq!(blob.spans.len(), 4, "{:?}", blob.spans);
        for (d, hash) in &blob.spans {
            let want: Vec<&[u8]> = lines[d.first as usize - 1..d.last as usize]
                .iter()
                .map(|l| l.as_bytes())
                .collect();
            assert_eq!(
                blob.lines(d.first, d.last).collect::<Vec<_>>(),
                want,
                "{d:?}"
            );
            assert_eq!(*hash, crate::codec::hash64(&want.concat()), "{d:?}");
        }
        // Lines past the end are empty, not a panic.
        assert_eq!(blob.lines(40, 50).count(), 0);
    }
}

#[cfg(test)]
mod open_tests {
    use super::*;

    #[test]
    fn a_history_state_file_that_is_a_link_is_not_followed() {
        let index_dir =
            std::env::temp_dir().join(format!("knav-history-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&index_dir);
        let dir = index_dir.join(DIR);
        std::fs::create_dir_all(&dir).unwrap();
        // A whole, empty history of this format, elsewhere, and a link to it in the index.
        let elsewhere = index_dir.join("elsewhere.json");
        let state = format!(r#"{{"version":{VERSION},"commits":[],"tips":[],"segments":[]}}"#);
        std::fs::write(&elsewhere, state).unwrap();
        std::fs::write(dir.join(PATHS), "").unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.join(COMMITS)).unwrap();
        assert!(matches!(History::open(&index_dir), Ok(None)));
        // The same file in place is a history.
        std::fs::remove_file(dir.join(COMMITS)).unwrap();
        std::fs::rename(&elsewhere, dir.join(COMMITS)).unwrap();
        assert!(matches!(History::open(&index_dir), Ok(Some(_))));
        let _ = std::fs::remove_dir_all(index_dir);
    }
}
