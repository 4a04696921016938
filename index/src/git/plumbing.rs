//! git's plumbing, run as a program: a revision resolved to its commit and to the tree of the
//! root's directory at it, that tree's files listed, their blobs read, and the refs nearest a
//! name that resolves to nothing. Nothing here changes the repository, its index or its work
//! tree (`GIT_OPTIONAL_LOCKS=0`: not even the index's stat cache), and nothing here makes git
//! run another program or reach the network: every command is built by [`git`], which pins
//! the configuration keys that would (signatures, external diffs, text conversions, lazy
//! fetches of a partial clone) or that change the shape of what git prints.
//!
//! The repository is git's own discovery from the root, with one exception: a `.git` *file*
//! (`gitdir: …`) is followed only when git would take its target for this tree's repository (a
//! worktree whose `gitdir` file names this `.git` file back, a submodule whose `core.worktree`
//! is this tree); any other is refused ([`GitError::ForeignGitdir`]). `GIT_*` variables of the
//! environment are honoured by the command line (and named in its answers: [`environment_note`]),
//! and removed from git's environment by a server ([`scrub_environment`]).
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What went wrong asking git about a revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitError {
    /// The `git` program cannot be run.
    NoGit(String),
    /// The root is in no git repository.
    NotRepository(PathBuf),
    /// The revision names no commit; the refs nearest its name.
    UnknownRevision {
        /// The revision asked for (its first [`MAX_REV_BYTES`] bytes when longer).
        rev: String,
        /// Refs (branches, tags) with the nearest names, nearest first.
        nearest: Vec<String>,
        /// The name's length in bytes when it is longer than [`MAX_REV_BYTES`] (then it was
        /// neither resolved nor matched against the refs).
        too_long: Option<usize>,
    },
    /// The root's `.git` is a file naming a repository that does not take this tree for its
    /// work tree: git would serve another tree's sources.
    ForeignGitdir {
        /// The `.git` file.
        file: PathBuf,
        /// The directory it names.
        target: PathBuf,
    },
    /// The root's directory does not exist at the revision.
    NoDirectory {
        /// The revision.
        rev: String,
        /// The root's path in the repository.
        prefix: String,
    },
    /// A git command failed: what was run and what it said.
    Failed {
        /// The command.
        what: String,
        /// Its stderr (or the error reading its output).
        said: String,
    },
}

impl fmt::Display for GitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitError::NoGit(e) => write!(
                f,
                "cannot run git ({e}); --rev reads the repository with git: install it"
            ),
            GitError::NotRepository(root) => write!(
                f,
                "{} is not in a git repository; --rev reads a revision from git (drop --rev to \
                 search the files as they are)",
                root.display()
            ),
            GitError::UnknownRevision {
                rev,
                too_long: Some(n),
                ..
            } => write!(
                f,
                "no revision '{}…' in this repository: a revision name is at most {MAX_REV_BYTES} \
                 bytes, this one has {n}",
                Quoted(rev)
            ),
            GitError::UnknownRevision { rev, nearest, .. } if nearest.is_empty() => write!(
                f,
                "no revision '{}' in this repository (no branch or tag either)",
                Quoted(rev)
            ),
            GitError::UnknownRevision { rev, nearest, .. } => write!(
                f,
                "no revision '{}' in this repository; nearest refs: {}",
                Quoted(rev),
                nearest
                    .iter()
                    .map(|r| Quoted(r).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            GitError::ForeignGitdir { file, target } => write!(
                f,
                "{} names the repository '{}', which does not take this tree for its work tree \
                 (neither a worktree whose gitdir file names {} back nor a submodule whose \
                 core.worktree is this tree); git would read another tree's sources, so --rev \
                 and the history refuse it: run knav on the repository's own work tree (or, on \
                 the command line, name the repository with GIT_DIR)",
                Quoted(&file.display().to_string()),
                Quoted(&target.display().to_string()),
                Quoted(&file.display().to_string()),
            ),
            GitError::NoDirectory { rev, prefix } => {
                write!(
                    f,
                    "the directory '{}' does not exist at revision '{}'",
                    Quoted(prefix),
                    Quoted(rev)
                )
            }
            GitError::Failed { what, said } => {
                write!(f, "{} failed: {}", Quoted(what), Quoted(said))
            }
        }
    }
}

impl std::error::Error for GitError {}

/// The most bytes of a revision name resolved or matched against the refs: a longer one names
/// nothing (a ref name is a path of at most a few hundred bytes), and its nearest refs would
/// cost an edit distance per ref of its whole length.
pub const MAX_REV_BYTES: usize = 256;

pub use crate::printable::Quoted;

/// A revision as git resolved it for a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The revision as asked (`v6.1`, `HEAD~3`, a SHA).
    pub asked: String,
    /// Its commit's object id (hex).
    pub commit: String,
    /// The object id of the root's directory's tree at that commit.
    pub tree: String,
}

impl Resolved {
    /// The commit's first 12 hex digits, as answers show it.
    pub fn short(&self) -> &str {
        &self.commit[..self.commit.len().min(12)]
    }
}

/// The configuration every command runs with (`-c KEY=VALUE`, which outranks every file and
/// the environment's `GIT_CONFIG_*`): git's defaults for the keys that change what it prints,
/// and off for those that would run a program or reach the network. A repository's own
/// `.git/config` is the tree's author's, not the user's: it decides neither.
pub const PINNED: &[&str] = &[
    // Programs: signatures (gpg.program), a file system monitor, hooks, transports.
    "log.showSignature=false",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "protocol.allow=never",
    "gc.auto=0",
    "maintenance.auto=false",
    // A bare repository planted in the tree is not discovered (git's own advice for tools).
    "safe.bareRepository=explicit",
    // The shape of log and diff output.
    "i18n.logOutputEncoding=UTF-8",
    "log.showRoot=true",
    "log.decorate=false",
    "log.follow=false",
    "log.abbrevCommit=false",
    "core.quotePath=true",
    "color.ui=false",
    "color.diff=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.srcPrefix=a/",
    "diff.dstPrefix=b/",
    "diff.relative=false",
    "diff.renames=true",
    "diff.algorithm=myers",
    "diff.indentHeuristic=true",
    "diff.interHunkContext=0",
    "diff.suppressBlankEmpty=false",
    "diff.submodule=short",
    "diff.ignoreSubmodules=none",
    "diff.context=3",
];

/// Set once a server starts: git's environment is then only what [`git`] gives it.
static SCRUBBED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Removes every `GIT_*` variable of this process's environment from the environment of the
/// git commands run from now on (a server: what its clients see must not depend on the shell
/// that started it).
pub fn scrub_environment() {
    SCRUBBED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// `GIT_*` variables that change nothing git reads for knav: who commits, which editor, what
/// a prompt shows, tracing, the network's, and those [`git`] sets itself.
const INERT: &[&str] = &[
    "GIT_AUTHOR_",
    "GIT_COMMITTER_",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PS1_",
    "GIT_MERGE_",
    "GIT_TRACE",
    "GIT_PAGER",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
    "GIT_NO_LAZY_FETCH",
    // The network's: knav fetches nothing.
    "GIT_SSL_",
    "GIT_SSH",
    "GIT_ASKPASS",
    "GIT_HTTP_",
    "GIT_PROXY_",
    "GIT_CURL_",
];

/// The `GIT_*` variables of the environment git runs with that can change what it reads (the
/// repository, its objects, its configuration), by name, sorted; none for a server.
pub fn honoured_variables() -> Vec<String> {
    if SCRUBBED.load(std::sync::atomic::Ordering::Relaxed) {
        return Vec::new();
    }
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("GIT_") && !INERT.iter().any(|p| k.starts_with(p)))
        .collect();
    names.sort();
    names
}

/// A line naming the `GIT_*` variables of the environment that git honours for this answer
/// (`GIT_DIR` reads another repository), or None when there are none.
pub fn environment_note() -> Option<String> {
    let names = honoured_variables();
    (!names.is_empty()).then(|| {
        format!(
            "git ran with {} from the environment",
            names
                .iter()
                .map(|n| Quoted(n).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Adds [`environment_note`] to an answer's `warning`.
pub fn note_environment(warning: &mut Option<String>) {
    if let Some(note) = environment_note() {
        *warning = Some(match warning.take() {
            Some(w) => format!("{w}; {note}"),
            None => note,
        });
    }
}

/// A command `git -C root …` that reads only, runs no other program, fetches nothing, and
/// prints what git prints with its defaults ([`PINNED`]).
pub fn git(root: &Path) -> Command {
    let mut c = Command::new("git");
    if SCRUBBED.load(std::sync::atomic::Ordering::Relaxed) {
        for (k, _) in std::env::vars_os() {
            if k.as_encoded_bytes().starts_with(b"GIT_") {
                c.env_remove(k);
            }
        }
    }
    c.arg("--no-pager").arg("-C").arg(root);
    for kv in PINNED {
        c.arg("-c").arg(kv);
    }
    c.env("GIT_OPTIONAL_LOCKS", "0")
        // A partial clone's missing object is missing, not fetched (git 2.44 and later; older
        // ones meet `protocol.allow=never`).
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    c
}

/// Refuses a root whose repository git would find through a `.git` file naming a repository
/// that does not take this tree for its work tree (see the module's doc). A `.git` directory,
/// no `.git` at all, or `GIT_DIR` in the environment of the command line: git decides.
pub fn check_gitdir(root: &Path) -> Result<(), GitError> {
    if honoured_variables().iter().any(|v| v == "GIT_DIR") {
        return Ok(());
    }
    let Some(file) = root
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|g| std::fs::symlink_metadata(g).is_ok())
    else {
        return Ok(());
    };
    let Ok(meta) = std::fs::metadata(&file) else {
        return Ok(());
    };
    let tree = file.parent().unwrap_or(Path::new("/"));
    if meta.is_dir() {
        // A symbolic link to a repository outside the tree is another tree's, as a file is.
        let linked = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_symlink());
        return match (
            linked,
            std::fs::canonicalize(&file),
            std::fs::canonicalize(tree),
        ) {
            (false, _, _) => Ok(()),
            (true, Ok(target), Ok(tree)) if target.starts_with(&tree) => Ok(()),
            (true, target, _) => Err(GitError::ForeignGitdir {
                target: target.unwrap_or_else(|_| file.clone()),
                file,
            }),
        };
    }
    let text = std::fs::read(&file).unwrap_or_default();
    let named = text
        .strip_prefix(b"gitdir: ")
        .map(|t| t.strip_suffix(b"\n").unwrap_or(t))
        .map(|t| t.strip_suffix(b"\r").unwrap_or(t));
    let Some(named) = named else {
        // Not a gitdir file: git stops there with its own error.
        return Ok(());
    };
    let target = tree.join(std::ffi::OsStr::from_bytes(named));
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    // A worktree: its gitdir file names this `.git` file.
    let back = std::fs::read(target.join("gitdir")).ok().map(|b| {
        let b = b.strip_suffix(b"\n").unwrap_or(&b).to_vec();
        target.join(std::ffi::OsStr::from_bytes(&b))
    });
    if back.is_some_and(|b| same(&b, &file)) {
        return Ok(());
    }
    // A submodule (or a separate git directory): its core.worktree is this tree.
    if core_worktree(&target).is_some_and(|w| same(&target.join(w), tree)) {
        return Ok(());
    }
    Err(GitError::ForeignGitdir { file, target })
}

/// `core.worktree` of the repository `gitdir`, read from its config file alone (no includes,
/// no other file), or None.
fn core_worktree(gitdir: &Path) -> Option<PathBuf> {
    let mut cmd = Command::new("git");
    cmd.arg("config")
        .arg("--no-includes")
        .arg("--file")
        .arg(gitdir.join("config"))
        .args(["--get", "core.worktree"])
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    let out = cmd.output().ok()?;
    let line = out.stdout.strip_suffix(b"\n")?;
    (out.status.success() && !line.is_empty())
        .then(|| PathBuf::from(std::ffi::OsStr::from_bytes(line)))
}

/// A git child process, killed and reaped when dropped: no path out of a reader (an error
/// midway included) leaves a zombie or a git process blocked on a full pipe.
pub struct Reaped(pub std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cmd` to its end: its output, or why git could not be run.
fn output(mut cmd: Command) -> Result<std::process::Output, GitError> {
    cmd.output().map_err(|e| GitError::NoGit(e.to_string()))
}

fn stdout_line(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

fn failed(what: &str, out: &std::process::Output) -> GitError {
    GitError::Failed {
        what: what.to_string(),
        said: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    }
}

/// Resolves `rev` for the tree at `root`: its commit, and the tree of `root`'s directory in
/// it (the whole repository's when `root` is its top).
pub fn resolve(root: &Path, rev: &str) -> Result<Resolved, GitError> {
    if rev.len() > MAX_REV_BYTES {
        let mut cut = MAX_REV_BYTES.min(64);
        while !rev.is_char_boundary(cut) {
            cut -= 1;
        }
        return Err(GitError::UnknownRevision {
            rev: rev[..cut].to_string(),
            nearest: Vec::new(),
            too_long: Some(rev.len()),
        });
    }
    check_gitdir(root)?;
    let unknown = || GitError::UnknownRevision {
        rev: rev.to_string(),
        nearest: nearest_refs(root, rev),
        too_long: None,
    };
    // A name git would read as an option, or one with a control character, names no revision.
    if rev.is_empty() || rev.starts_with('-') || rev.chars().any(char::is_control) {
        return Err(unknown());
    }
    // `:/text` searches commit messages for all that follows: nothing can be appended to it,
    // so it is resolved alone first.
    let searched;
    let base = if rev.starts_with(":/") {
        searched = verify(root, rev)?.ok_or_else(unknown)?;
        searched.as_str()
    } else {
        rev
    };
    // One run for the common case: `REV:./` is the tree of the directory git runs in (the
    // root). When it fails, the runs below say why.
    let mut cmd = git(root);
    cmd.args(["rev-parse", "--end-of-options"])
        .arg(format!("{base}^{{commit}}"))
        .arg(format!("{base}:./"));
    let out = output(cmd)?;
    if out.status.success() {
        let text = String::from_utf8_lossy(&out.stdout);
        // rev-parse echoes `--end-of-options` before the ids.
        let mut ids = text.lines().filter(|l| *l != "--end-of-options");
        if let (Some(commit), Some(tree), None) = (ids.next(), ids.next(), ids.next()) {
            if is_object_id(commit) && is_object_id(tree) {
                return Ok(Resolved {
                    asked: rev.to_string(),
                    commit: commit.to_string(),
                    tree: tree.to_string(),
                });
            }
        }
    }
    let mut cmd = git(root);
    cmd.args(["rev-parse", "--show-prefix"]);
    let out = output(cmd)?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(if said.contains("not a git repository") {
            GitError::NotRepository(root.to_path_buf())
        } else {
            failed("git rev-parse --show-prefix", &out)
        });
    }
    let prefix = stdout_line(&out);
    let commit = verify(root, &format!("{base}^{{commit}}"))?.ok_or_else(unknown)?;
    let tree_name = if prefix.is_empty() {
        format!("{commit}^{{tree}}")
    } else {
        format!("{commit}:{}", prefix.trim_end_matches('/'))
    };
    let tree = verify(root, &tree_name)?.ok_or_else(|| GitError::NoDirectory {
        rev: rev.to_string(),
        prefix: prefix.trim_end_matches('/').to_string(),
    })?;
    Ok(Resolved {
        asked: rev.to_string(),
        commit,
        tree,
    })
}

/// `git rev-parse --verify --quiet NAME`: the object id, or None when it names nothing.
fn verify(root: &Path, name: &str) -> Result<Option<String>, GitError> {
    let mut cmd = git(root);
    cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options", name]);
    let out = output(cmd)?;
    let id = stdout_line(&out);
    Ok((out.status.success() && is_object_id(&id)).then_some(id))
}

/// True for a full object id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
pub fn is_object_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64)
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The refs (short names: branches, tags) nearest `name` by edit distance, at most five,
/// nearest first; empty when git lists none.
pub fn nearest_refs(root: &Path, name: &str) -> Vec<String> {
    if name.len() > MAX_REV_BYTES {
        return Vec::new();
    }
    let mut cmd = git(root);
    cmd.args(["for-each-ref", "--format=%(refname:short)"]);
    let Ok(out) = cmd.output() else {
        return Vec::new();
    };
    let refs = String::from_utf8_lossy(&out.stdout);
    let mut scored: Vec<(usize, &str)> = refs
        .lines()
        .chain(["HEAD"])
        .map(|r| {
            (
                crate::distance::edit_distance(name.as_bytes(), r.as_bytes()),
                r,
            )
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(5)
        .map(|(_, r)| r.to_string())
        .collect()
}

/// What a tree entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A file (mode 100644 or 100755).
    File,
    /// A symbolic link (mode 120000): the blob is the target.
    Symlink,
    /// A submodule's commit (mode 160000): nothing to read.
    Submodule,
}

/// One file of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// Its blob's object id.
    pub oid: String,
    /// Its path below the tree, as git stores it (bytes, `/`-separated).
    pub path: Vec<u8>,
    /// Its blob's size in bytes (0 for a submodule).
    pub size: u64,
}

/// Every file below tree `tree`, with its size (`git ls-tree -r -z --long`).
pub fn list_tree(root: &Path, tree: &str) -> Result<Vec<Entry>, GitError> {
    let what = format!("git ls-tree -r --long {tree}");
    let mut cmd = git(root);
    cmd.args(["ls-tree", "-r", "-z", "--long", "--end-of-options", tree]);
    let out = output(cmd)?;
    if !out.status.success() {
        return Err(failed(&what, &out));
    }
    let mut entries = Vec::new();
    for rec in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        // "<mode> SP <type> SP <oid> SP+ <size or -> TAB <path>"
        let bad = || GitError::Failed {
            what: what.clone(),
            said: format!("unreadable entry '{}'", String::from_utf8_lossy(rec)),
        };
        let tab = memchr::memchr(b'\t', rec).ok_or_else(bad)?;
        let mut head = rec[..tab].split(|&b| b == b' ').filter(|f| !f.is_empty());
        let (mode, oid, size) = match (head.next(), head.next(), head.next(), head.next()) {
            (Some(m), Some(_), Some(o), Some(s)) => (m, o, s),
            _ => return Err(bad()),
        };
        let kind = match mode {
            b"100644" | b"100755" => EntryKind::File,
            b"120000" => EntryKind::Symlink,
            b"160000" => EntryKind::Submodule,
            _ => return Err(bad()),
        };
        let size = match (kind, std::str::from_utf8(size).ok()) {
            (EntryKind::Submodule, _) => 0,
            (_, Some(n)) => n.parse::<u64>().map_err(|_| bad())?,
            (_, None) => return Err(bad()),
        };
        let oid = String::from_utf8_lossy(oid).into_owned();
        if !is_object_id(&oid) {
            return Err(bad());
        }
        entries.push(Entry {
            kind,
            oid,
            path: rec[tab + 1..].to_vec(),
            size,
        });
    }
    Ok(entries)
}

/// Reads the blobs `oids` with two `git cat-file --batch` readers at once, each given half of
/// them (git inflates and resolves deltas on one core each), handing each blob to `take` on
/// either reader's thread, and calling `tick` after each blob the calling thread's reader took.
/// An error stops the reader it came from; the first half's is returned first.
pub fn read_blobs(
    root: &Path,
    oids: &[&str],
    take: impl Fn(&str, &[u8]) -> std::io::Result<()> + Sync,
    mut tick: impl FnMut(),
) -> Result<(), GitError> {
    let (first, second) = oids.split_at(oids.len().div_ceil(2));
    let (mine, theirs) = std::thread::scope(|s| {
        let other = s.spawn(|| read_blobs_one(root, second, &take));
        let mine = read_blobs_one(root, first, |oid, data| {
            take(oid, data)?;
            tick();
            Ok(())
        });
        let theirs = other.join().unwrap_or_else(|_| {
            Err(GitError::Failed {
                what: "git cat-file --batch".into(),
                said: "the reader thread panicked".into(),
            })
        });
        (mine, theirs)
    });
    mine.and(theirs)
}

/// Reads the blobs `oids` (`git cat-file --batch`), handing each to `take` with its bytes, in
/// the order given. Stops at the first error `take` returns.
fn read_blobs_one(
    root: &Path,
    oids: &[&str],
    mut take: impl FnMut(&str, &[u8]) -> std::io::Result<()>,
) -> Result<(), GitError> {
    if oids.is_empty() {
        return Ok(());
    }
    let what = "git cat-file --batch";
    let mut child = Reaped(
        git(root)
            .args(["cat-file", "--batch", "--buffer"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| GitError::NoGit(e.to_string()))?,
    );
    let io_err = |e: std::io::Error| GitError::Failed {
        what: what.to_string(),
        said: e.to_string(),
    };
    let mut stdin = child
        .0
        .stdin
        .take()
        .ok_or_else(|| io_err(std::io::ErrorKind::BrokenPipe.into()))?;
    let stdout = child
        .0
        .stdout
        .take()
        .ok_or_else(|| io_err(std::io::ErrorKind::BrokenPipe.into()))?;
    let list: Vec<u8> = oids
        .iter()
        .flat_map(|o| [o.as_bytes(), b"\n"].concat())
        .collect();
    // The writer runs beside the reader: git answers while it is still being asked.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&list);
    });
    let mut reader = BufReader::with_capacity(1 << 20, stdout);
    let mut head = String::new();
    let mut buf = Vec::new();
    let mut result = Ok(());
    for oid in oids {
        head.clear();
        if let Err(e) = reader.read_line(&mut head) {
            result = Err(io_err(e));
            break;
        }
        // "<oid> blob <size>\n<bytes>\n", or "<oid> missing\n".
        let mut parts = head.split_ascii_whitespace();
        let size = match (parts.next(), parts.next(), parts.next()) {
            (Some(o), Some("blob"), Some(size)) if o == *oid => size.parse::<usize>().ok(),
            _ => None,
        };
        let Some(size) = size else {
            result = Err(GitError::Failed {
                what: what.to_string(),
                said: format!("object {oid}: {}", head.trim()),
            });
            break;
        };
        buf.resize(size + 1, 0);
        if let Err(e) = reader.read_exact(&mut buf) {
            result = Err(io_err(e));
            break;
        }
        if let Err(e) = take(oid, &buf[..size]) {
            result = Err(io_err(e));
            break;
        }
    }
    drop(reader);
    // Killed before the writer is joined: a git that stopped reading would block it.
    drop(child);
    let _ = writer.join();
    result
}

/// `git diff A B` of the root's directory (paths relative to it) between commits `a` and `b`
/// (object ids), at most `max` bytes: an error past that says how large it was at least.
pub fn diff(root: &Path, a: &str, b: &str, max: usize) -> Result<String, GitError> {
    let what = format!("git diff {a} {b}");
    let mut child = git(root)
        .args([
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--relative",
            "-U3",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            // diff.orderFile, which no `-c` can unset.
            "-O/dev/null",
            "--end-of-options",
            a,
            b,
            "--",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| GitError::NoGit(e.to_string()))?;
    let mut bytes = Vec::new();
    let read = child
        .stdout
        .take()
        .map(|out| out.take(max as u64 + 1).read_to_end(&mut bytes));
    let too_big = bytes.len() > max;
    if too_big {
        let _ = child.kill();
    }
    let out = child.wait_with_output().map_err(|e| GitError::Failed {
        what: what.clone(),
        said: e.to_string(),
    })?;
    if too_big {
        return Err(GitError::Failed {
            what,
            said: format!(
                "the diff is larger than {} MiB (the most review_diff reads); review a shorter \
                 range, or a part of the tree with --root",
                max >> 20
            ),
        });
    }
    if let Some(Err(e)) = read {
        return Err(GitError::Failed {
            what,
            said: e.to_string(),
        });
    }
    if !out.status.success() {
        return Err(failed(&what, &out));
    }
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// The diff of range `a..b` (revisions as asked) of the root's directory, at most `max` bytes.
pub fn range_diff(root: &Path, a: &str, b: &str, max: usize) -> Result<String, GitError> {
    let (ra, rb) = (resolve(root, a)?, resolve(root, b)?);
    diff(root, &ra.commit, &rb.commit, max)
}

/// The commits `spec` names: a range `A..B`, or what one revision reaches (`git rev-list`).
pub fn rev_list(root: &Path, spec: &str) -> Result<std::collections::HashSet<String>, GitError> {
    let revs: Vec<&str> = match spec.split_once("..") {
        Some((a, b)) if !a.is_empty() && !b.is_empty() && !b.starts_with('.') => vec![a, b],
        _ => vec![spec],
    };
    let mut ids = Vec::new();
    for r in &revs {
        ids.push(resolve(root, r)?.commit);
    }
    let mut cmd = git(root);
    cmd.args(["rev-list", "--end-of-options"]);
    match ids.as_slice() {
        [a, b] => cmd.arg(b).arg(format!("^{a}")),
        _ => cmd.args(&ids),
    };
    let out = output(cmd)?;
    if !out.status.success() {
        return Err(failed("git rev-list", &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_readers_hand_over_every_blob_and_tick_for_the_callers_half() {
        let root = crate::disk::unique_dir(&std::env::temp_dir(), "knav-read-blobs");
        std::fs::create_dir_all(&root).unwrap();
        assert!(git(&root).args(["init", "-q"]).status().unwrap().success());
        let mut oids = Vec::new();
        for text in ["a\n", "bb\n", "ccc\n"] {
            std::fs::write(root.join("f"), text).unwrap();
            let out = git(&root)
                .args(["hash-object", "-w", "f"])
                .output()
                .unwrap();
            oids.push(String::from_utf8(out.stdout).unwrap().trim().to_string());
        }
        let asked: Vec<&str> = oids.iter().map(String::as_str).collect();
        let got = std::sync::Mutex::new(Vec::new());
        let mut ticks = 0;
        read_blobs(
            &root,
            &asked,
            |oid, data| {
                got.lock().unwrap().push((oid.to_string(), data.len()));
                Ok(())
            },
            || ticks += 1,
        )
        .unwrap();
        let mut got = got.into_inner().unwrap();
        got.sort_by_key(|&(_, len)| len);
        let want: Vec<(String, usize)> = oids.iter().cloned().zip([2, 3, 4]).collect();
        assert_eq!(got, want);
        assert_eq!(
            ticks, 2,
            "the calling thread reads the first half, two of three"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
