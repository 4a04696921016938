//! knav's own directories (the index directory, `revs/`, `history/`) as untrusted input: every
//! open, create, lock, rename and delete below one goes through a descriptor of it, one name at
//! a time, and never follows a symbolic link.
//!
//! Anyone who can write the tree can write `ROOT/.knav`: another user, or an agent using knav's
//! read-only tools and its own file tools. So an [`IndexDir`] is opened with
//! `O_DIRECTORY | O_NOFOLLOW` (a link in the directory's place is refused, with what to do), is
//! refused when another user owns it (unless [`ALLOW_FOREIGN`] is set to `1`), and reaches what
//! is below it with `openat`, `mkdirat`, `linkat`, `renameat` and `unlinkat` on its descriptor
//! with single names (no `/`, `.` or `..`). Files are opened `O_NOFOLLOW` and checked to be
//! regular; lock files are opened `O_CREAT | O_NOFOLLOW` and never truncated; a recursive
//! removal ([`IndexDir::remove_tree`]) removes a link as a link and never leaves the directory
//! it opened.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The environment variable that lets knav use an index directory another user owns (`1`).
pub const ALLOW_FOREIGN: &str = "KNAV_ALLOW_FOREIGN_INDEX";

/// Deepest directory [`IndexDir::remove_tree`] and [`IndexDir::bytes`] go down.
const MAX_DEPTH: usize = 64;

/// What a name in a directory is, looked at without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nothing has the name.
    Missing,
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link.
    Link,
    /// A FIFO, socket or device.
    Other,
}

/// The largest cache file of an index directory read ([`IndexDir::read_cache`]; the kernel's
/// walk caches are a few MB).
pub const CACHE_CAP: u64 = 256 << 20;

/// An open directory of knav's own.
#[derive(Debug)]
pub struct IndexDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl IndexDir {
    /// Opens directory `path` (the path leading to it is the caller's, and may pass through
    /// links; its last name may not be one), refusing one another user owns.
    pub fn open(path: &Path) -> io::Result<IndexDir> {
        // A [`Pinned`] directory's `/proc/self/fd/N` is a link by design: its `.` is opened.
        let dot;
        let (path, shown) = match path.parent() == Some(Path::new(PROC_FD)) {
            true => {
                dot = path.join(".");
                (dot.as_path(), shown(path))
            }
            false => (path, path.to_path_buf()),
        };
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| refused(&shown, "a path with a NUL byte"))?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: `c` is NUL-terminated; the descriptor returned is owned below.
        let fd = unsafe { libc::open(c.as_ptr(), flags) };
        if fd < 0 {
            return Err(open_error(&shown, io::Error::last_os_error()));
        }
        let dir = IndexDir {
            // SAFETY: `fd` was just opened and is owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path: shown,
        };
        dir.check_owner()?;
        Ok(dir)
    }

    /// [`IndexDir::open`], making the directory (and its parents) first when missing.
    pub fn create(path: &Path) -> io::Result<IndexDir> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        match std::fs::create_dir(path) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        IndexDir::open(path)
    }

    /// Its path, for messages (never used to reach it again).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in it, for messages.
    pub fn join(&self, name: impl AsRef<OsStr>) -> PathBuf {
        self.path.join(name.as_ref())
    }

    fn check_owner(&self) -> io::Result<()> {
        let st = fstat(&self.fd)?;
        // SAFETY: geteuid cannot fail.
        let euid = unsafe { libc::geteuid() };
        let allowed = std::env::var_os(ALLOW_FOREIGN).is_some_and(|v| v == "1");
        if owner_refused(st.st_uid, euid, allowed) {
            return Err(refused(
                &self.path,
                &format!(
                    "owned by user {} and not by you (user {euid}): knav does not use an \
                     index another user could have written; remove it, pass --index-dir with \
                     a directory of your own, or set {ALLOW_FOREIGN}=1 to use it anyway",
                    st.st_uid
                ),
            ));
        }
        Ok(())
    }

    /// What `name` is, not following a link.
    pub fn kind(&self, name: impl AsRef<OsStr>) -> Kind {
        match self.stat(name.as_ref()) {
            Ok(st) => kind_of(st.st_mode),
            Err(_) => Kind::Missing,
        }
    }

    fn stat(&self, name: &OsStr) -> io::Result<libc::stat> {
        let c = self.name(name)?;
        // SAFETY: a zeroed stat is a valid out-parameter; `c` is NUL-terminated.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above; fstatat writes only into `st`.
        let rc = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(st)
    }

    /// The directory `name` in it; a link or anything else in its place is refused.
    pub fn sub(&self, name: impl AsRef<OsStr>) -> io::Result<IndexDir> {
        let name = name.as_ref();
        let c = self.name(name)?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let path = self.join(name);
        // SAFETY: `c` is NUL-terminated and `self.fd` an open descriptor.
        let fd = unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags) };
        if fd < 0 {
            return Err(open_error(&path, io::Error::last_os_error()));
        }
        Ok(IndexDir {
            // SAFETY: `fd` was just opened and is owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path,
        })
    }

    /// Makes directory `name` in it (mode 0700 less the umask) unless it is there; true when
    /// it was made.
    pub fn mkdir(&self, name: impl AsRef<OsStr>) -> io::Result<bool> {
        let c = self.name(name.as_ref())?;
        // SAFETY: `c` is NUL-terminated and `self.fd` an open descriptor.
        let rc = unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o700) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::AlreadyExists {
                return Ok(false);
            }
            return Err(e);
        }
        Ok(true)
    }

    /// [`IndexDir::sub`], made first when missing.
    pub fn sub_or_create(&self, name: impl AsRef<OsStr>) -> io::Result<IndexDir> {
        self.mkdir(name.as_ref())?;
        self.sub(name)
    }

    /// `name` opened for reading when it is a regular file (a link is refused, a FIFO does not
    /// block).
    pub fn open_file(&self, name: impl AsRef<OsStr>) -> io::Result<File> {
        let flags = libc::O_RDONLY | libc::O_NONBLOCK;
        self.open_regular(name.as_ref(), flags, 0)
    }

    /// The bytes of regular file `name` when it holds at most `cap` of them (a longer one is
    /// refused from its length, before anything is read).
    pub fn read(&self, name: impl AsRef<OsStr>, cap: u64) -> io::Result<Vec<u8>> {
        use std::io::Read;
        let name = name.as_ref();
        let f = self.open_file(name)?;
        let len = f.metadata()?.len();
        if len > cap {
            return Err(refused(&self.join(name), &format!("over {cap} bytes")));
        }
        let mut out = Vec::with_capacity(len as usize);
        f.take(cap + 1).read_to_end(&mut out)?;
        if out.len() as u64 > cap {
            return Err(refused(&self.join(name), &format!("over {cap} bytes")));
        }
        Ok(out)
    }

    /// File `name` of the index directory `index_dir` when it is a regular file of at most
    /// [`CACHE_CAP`] bytes: one of knav's caches (a link or a FIFO planted there is not read
    /// and cannot block), so any failure is `None` and the cache is made again.
    pub fn read_cache(index_dir: &Path, name: &str) -> Option<Vec<u8>> {
        IndexDir::open(index_dir).ok()?.read(name, CACHE_CAP).ok()
    }

    /// A new file `name` for writing with `mode`; refused when anything, a link too, has the
    /// name.
    pub fn create_new(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<File> {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
        self.open_regular(name.as_ref(), flags, mode)
    }

    /// The lock file `name`, made when missing, never truncated and never through a link.
    pub fn lock_file(&self, name: impl AsRef<OsStr>) -> io::Result<File> {
        let flags = libc::O_RDWR | libc::O_CREAT | libc::O_NONBLOCK;
        self.open_regular(name.as_ref(), flags, 0o644)
    }

    fn open_regular(&self, name: &OsStr, flags: i32, mode: u32) -> io::Result<File> {
        let c = self.name(name)?;
        let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: `c` is NUL-terminated and `self.fd` an open descriptor.
        let fd =
            unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) };
        let path = self.join(name);
        if fd < 0 {
            return Err(open_error(&path, io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        if !file.metadata()?.is_file() {
            return Err(refused(&path, "not a regular file"));
        }
        Ok(file)
    }

    /// Writes `.gitignore` ignoring everything here unless something has that name (a link
    /// too, which is left alone): an index inside a tree is not part of its `git status`.
    pub fn ignore_in_git(&self) {
        if let Ok(mut f) = self.create_new(".gitignore", 0o644) {
            let _ = io::Write::write_all(&mut f, b"# knav's index: not part of the tree\n*\n");
        }
    }

    /// Replaces file `name` with `bytes`: written to a new temporary file (never through a
    /// link planted under its name), synced with `sync`, then renamed over it.
    pub fn replace(&self, name: &str, bytes: &[u8], sync: bool) -> io::Result<()> {
        let tmp = format!("{name}.tmp-{}", std::process::id());
        let _ = self.remove_file(&tmp);
        let written = self.create_new(&tmp, 0o644).and_then(|mut f| {
            io::Write::write_all(&mut f, bytes)?;
            if sync {
                f.sync_all()?;
            }
            Ok(())
        });
        match written.and_then(|()| self.rename(&tmp, name)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = self.remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// Renames `from` to `to`, both in this directory, replacing `to`.
    pub fn rename(&self, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
        let (f, t) = (self.name(from.as_ref())?, self.name(to.as_ref())?);
        let d = self.fd.as_raw_fd();
        // SAFETY: both names are NUL-terminated and `d` is an open descriptor.
        let rc = unsafe { libc::renameat(d, f.as_ptr(), d, t.as_ptr()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// A hard link `to` in this directory to file `from` of directory `dir` (a link there is
    /// linked as itself, never followed).
    pub fn link_from(&self, dir: &IndexDir, from: &CStr, to: &CStr) -> io::Result<()> {
        // SAFETY: both names are NUL-terminated and both descriptors open; flags 0: no follow.
        let rc = unsafe {
            libc::linkat(
                dir.fd.as_raw_fd(),
                from.as_ptr(),
                self.fd.as_raw_fd(),
                to.as_ptr(),
                0,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// A symbolic link `name` in this directory whose target is `target`.
    pub fn symlink(&self, target: &[u8], name: &CStr) -> io::Result<()> {
        let t = CString::new(target).map_err(|_| io::Error::other("a link with a NUL byte"))?;
        // SAFETY: both strings are NUL-terminated and `self.fd` an open descriptor.
        let rc = unsafe { libc::symlinkat(t.as_ptr(), self.fd.as_raw_fd(), name.as_ptr()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes `name` when it is not a directory (a link is removed as a link).
    pub fn remove_file(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        self.unlink(name.as_ref(), 0)
    }

    fn unlink(&self, name: &OsStr, flags: i32) -> io::Result<()> {
        let c = self.name(name)?;
        // SAFETY: `c` is NUL-terminated and `self.fd` an open descriptor.
        let rc = unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), flags) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes `name` and, when it is a directory, everything below it, through descriptors:
    /// a link anywhere is removed as a link, and nothing outside `name` is ever reached.
    pub fn remove_tree(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        self.remove_below(name.as_ref(), 0)
    }

    fn remove_below(&self, name: &OsStr, depth: usize) -> io::Result<()> {
        // What is gone already (another process, a writer renaming its file) is not an error.
        let gone = |r: io::Result<()>| match r {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r,
        };
        match self.kind(name) {
            Kind::Missing => return Ok(()),
            Kind::Dir => {}
            _ => return gone(self.unlink(name, 0)),
        }
        if depth >= MAX_DEPTH {
            return Err(refused(&self.join(name), "deeper than knav ever writes"));
        }
        // A writer may still add a file while the directory is emptied: emptied again then.
        let mut tries = 0;
        loop {
            match self.sub(name) {
                Ok(sub) => {
                    let mut first = Ok(());
                    for e in sub.entries()? {
                        let r = sub.remove_below(&e, depth + 1);
                        if first.is_ok() {
                            first = r;
                        }
                    }
                    first?;
                }
                // Swapped for a link or a file since it was looked at: removed as such.
                Err(_) => return gone(self.unlink(name, 0)),
            }
            match gone(self.unlink(name, libc::AT_REMOVEDIR)) {
                Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) && tries < 3 => tries += 1,
                r => return r,
            }
        }
    }

    /// The names in this directory (without `.` and `..`).
    pub fn entries(&self) -> io::Result<Vec<OsString>> {
        // A descriptor of its own: readdir moves its offset.
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
        // SAFETY: "." is NUL-terminated and `self.fd` an open descriptor.
        let fd = unsafe { libc::openat(self.fd.as_raw_fd(), c".".as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is an open directory descriptor; fdopendir takes it over.
        let dir = unsafe { libc::fdopendir(fd) };
        if dir.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `fd` is still ours to close.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let mut out = Vec::new();
        loop {
            // SAFETY: `dir` is an open DIR stream; the entry is read before the next call.
            let ent = unsafe { libc::readdir(dir) };
            if ent.is_null() {
                break;
            }
            // SAFETY: d_name is a NUL-terminated array inside the entry readdir returned.
            let name = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) }.to_bytes();
            if name != b"." && name != b".." {
                out.push(OsString::from_vec(name.to_vec()));
            }
        }
        // SAFETY: `dir` is an open DIR stream, closed once.
        unsafe { libc::closedir(dir) };
        Ok(out)
    }

    /// Bytes of the regular files below `name` (or of `name` itself), links not followed.
    pub fn bytes(&self, name: impl AsRef<OsStr>) -> u64 {
        self.bytes_below(name.as_ref(), 0)
    }

    fn bytes_below(&self, name: &OsStr, depth: usize) -> u64 {
        let Ok(st) = self.stat(name) else { return 0 };
        match kind_of(st.st_mode) {
            Kind::File => st.st_size as u64,
            Kind::Dir if depth < MAX_DEPTH => self.sub(name).map_or(0, |sub| {
                sub.entries()
                    .unwrap_or_default()
                    .iter()
                    .map(|e| sub.bytes_below(e, depth + 1))
                    .sum()
            }),
            _ => 0,
        }
    }

    /// Hard links of regular file `name` (0 when it is not one).
    // st_nlink is u32 on some targets.
    #[allow(clippy::unnecessary_cast)]
    pub fn links(&self, name: impl AsRef<OsStr>) -> u64 {
        match self.stat(name.as_ref()) {
            Ok(st) if kind_of(st.st_mode) == Kind::File => st.st_nlink as u64,
            _ => 0,
        }
    }

    /// `name` as a single name in this directory: refused with a `/`, a NUL, or as `.`, `..`
    /// or empty.
    fn name(&self, name: &OsStr) -> io::Result<CString> {
        let b = name.as_bytes();
        if matches!(b, b"" | b"." | b"..") || b.contains(&b'/') {
            return Err(refused(&self.join(name), "not a single name"));
        }
        CString::new(b).map_err(|_| refused(&self.path, "a name with a NUL byte"))
    }
}

/// Where this process's descriptors are reached by path.
const PROC_FD: &str = "/proc/self/fd";

/// The `/proc/self/fd/N` paths of the [`Pinned`] directories now open, with the paths they
/// show as.
static SHOWN: std::sync::Mutex<Vec<(PathBuf, PathBuf)>> = std::sync::Mutex::new(Vec::new());

fn shown_list() -> std::sync::MutexGuard<'static, Vec<(PathBuf, PathBuf)>> {
    SHOWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// `path` as messages show it: below a [`Pinned`] directory's `/proc/self/fd/N`, the
/// directory's own path instead (the innermost pinned directory first).
pub fn shown(path: &Path) -> PathBuf {
    if !path.starts_with(PROC_FD) {
        return path.to_path_buf();
    }
    let list = shown_list();
    let mut path = path.to_path_buf();
    // A part directory shows as `/proc/self/fd/N/seg-…`, which shows as `ROOT/.knav/seg-…`.
    for _ in 0..4 {
        let Some((via, real)) = list.iter().rev().find(|(via, _)| path.starts_with(via)) else {
            break;
        };
        let rest = path.strip_prefix(via).unwrap_or(Path::new(""));
        path = match rest.as_os_str().is_empty() {
            true => real.clone(),
            false => real.join(rest),
        };
    }
    path
}

/// `text` with every `/proc/self/fd/N` of a [`Pinned`] directory in it shown as [`shown`]
/// shows the path.
pub fn shown_text(text: &str) -> String {
    if !text.contains(PROC_FD) {
        return text.to_string();
    }
    let mut text = text.to_string();
    let mut list = shown_list().clone();
    // Longest first: `/proc/self/fd/1` is not replaced inside `/proc/self/fd/12`.
    list.sort_by_key(|(via, _)| std::cmp::Reverse(via.as_os_str().len()));
    for _ in 0..4 {
        for (via, real) in &list {
            let via = via.to_string_lossy().into_owned();
            let real = real.to_string_lossy();
            let mut out = String::with_capacity(text.len());
            let mut rest = text.as_str();
            while let Some(k) = rest.find(&via) {
                let after = &rest[k + via.len()..];
                out.push_str(&rest[..k]);
                if after.starts_with(|c: char| c.is_ascii_digit()) {
                    out.push_str(&via);
                } else {
                    out.push_str(&real);
                }
                rest = after;
            }
            out.push_str(rest);
            text = out;
        }
    }
    text
}

/// True when `/proc/self/fd` reaches this process's descriptors (checked once, on `dir`).
fn proc_fd_works(dir: &IndexDir) -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        let via = PathBuf::from(format!("{PROC_FD}/{}/.", dir.fd.as_raw_fd()));
        let same = match (std::fs::metadata(&via), fstat(&dir.fd)) {
            (Ok(m), Ok(st)) => {
                use std::os::unix::fs::MetadataExt;
                m.dev() == st.st_dev && m.ino() == st.st_ino
            }
            _ => false,
        };
        if !same && std::env::var_os("KNAV_TRACE").is_some() {
            eprintln!(
                "knav trace: {PROC_FD} does not reach knav's descriptors (/proc not mounted?): \
                 files below {} are named by path, and a directory swapped for a link while \
                 knav writes in it is followed",
                dir.path.display()
            );
        }
        same
    })
}

/// A directory of knav's held open as long as something reads or writes below it, with the
/// path that reaches it through its descriptor, `/proc/self/fd/N` (its own path when /proc is
/// not mounted): the kernel resolves that to the directory opened, so a later swap of the
/// directory (or of a directory above it) for a link changes nothing. Messages show the
/// directory's own path ([`shown`]).
#[derive(Debug)]
pub struct Pinned {
    dir: IndexDir,
    via: PathBuf,
}

impl Pinned {
    /// `dir`, reached through its descriptor from now on.
    pub fn new(dir: IndexDir) -> Pinned {
        if !proc_fd_works(&dir) {
            let via = dir.path.clone();
            return Pinned { dir, via };
        }
        let via = PathBuf::from(format!("{PROC_FD}/{}", dir.fd.as_raw_fd()));
        shown_list().push((via.clone(), dir.path.clone()));
        Pinned { dir, via }
    }

    /// The path that reaches the directory through its descriptor: what readers and writers
    /// are handed.
    pub fn via(&self) -> &Path {
        &self.via
    }

    /// The directory.
    pub fn dir(&self) -> &IndexDir {
        &self.dir
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let mut list = shown_list();
        if let Some(k) = list.iter().rposition(|(via, _)| *via == self.via) {
            list.remove(k);
        }
    }
}

/// A new part directory (`seg-…`, `tx-…`) of an index: made in its index directory with
/// `mkdirat` and opened at once (a link put in its place afterwards is never followed).
#[derive(Debug)]
pub struct Part {
    name: String,
    dir: Pinned,
    parent: IndexDir,
}

impl Part {
    /// A new directory `PREFIX-<time>-<pid>` in `index_dir` (a path, or a [`Pinned::via`]).
    pub fn make(index_dir: &Path, prefix: &str) -> io::Result<Part> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Part::make_named(
            index_dir,
            format!("{prefix}-{nanos:x}-{}", std::process::id()),
        )
    }

    /// A new directory `name` in `index_dir`; refused when anything has the name.
    pub fn make_named(index_dir: &Path, name: String) -> io::Result<Part> {
        let parent = IndexDir::open(index_dir)?;
        if !parent.mkdir(&name)? {
            return Err(refused(
                &parent.join(&name),
                "already there: not a new directory",
            ));
        }
        let dir = Pinned::new(parent.sub(&name)?);
        Ok(Part { name, dir, parent })
    }

    /// Its name in the index directory, as a manifest names it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The directory.
    pub fn dir(&self) -> &IndexDir {
        self.dir.dir()
    }

    /// The path its writers are handed ([`Pinned::via`]).
    pub fn via(&self) -> &Path {
        self.dir.via()
    }

    /// Removes it and what was written in it (after a failed build), never through a link.
    pub fn remove(self) {
        let _ = self.parent.remove_tree(&self.name);
    }
}

/// A kept revision's `tree/` and `index/` (made when missing), opened one name at a time from
/// its index directory (`.knav` → `revs` → `t-<tree>` → `tree`), no link followed at any step,
/// and held open: readers are handed their [`Pinned::via`], so the revision's directories
/// swapped for links after its check are not read.
#[derive(Debug)]
pub struct RevisionDirs {
    /// Its files.
    pub tree: Pinned,
    /// Its index.
    pub index: Pinned,
}

impl RevisionDirs {
    /// The directories of revision directory `dir` (`INDEX_DIR/revs/t-<tree>`).
    pub fn open(dir: &Path) -> io::Result<RevisionDirs> {
        let name = |p: &Path| {
            p.file_name()
                .map(OsStr::to_os_string)
                .ok_or_else(|| refused(dir, "not a revision's directory"))
        };
        let revs = dir.parent().unwrap_or(Path::new(""));
        let index_dir = revs.parent().unwrap_or(Path::new(""));
        let rev = IndexDir::open(index_dir)?
            .sub(name(revs)?)?
            .sub(name(dir)?)?;
        Ok(RevisionDirs {
            tree: Pinned::new(rev.sub("tree")?),
            index: Pinned::new(rev.sub_or_create("index")?),
        })
    }
}

/// True when a directory owned by `owner` is refused to user `euid`.
fn owner_refused(owner: u32, euid: u32, allowed: bool) -> bool {
    owner != euid && !allowed
}

fn fstat(fd: &OwnedFd) -> io::Result<libc::stat> {
    // SAFETY: a zeroed stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open; fstat writes only into `st`.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

fn kind_of(mode: libc::mode_t) -> Kind {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFREG => Kind::File,
        libc::S_IFLNK => Kind::Link,
        _ => Kind::Other,
    }
}

/// An error saying what is wrong with `path` and that knav left it alone.
pub fn refused(path: &Path, what: &str) -> io::Error {
    io::Error::other(format!("{}: {what}", path.display()))
}

/// The error of an open of `path` that failed with `e`, saying what to do when a link or a
/// file is where knav's directory or file belongs.
fn open_error(path: &Path, e: io::Error) -> io::Error {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) if link => refused(
            path,
            "a symbolic link where knav keeps its own files; knav never follows one there \
             (anyone who can write the tree can plant it): remove the link (or pass \
             --index-dir with a directory of your own)",
        ),
        Some(libc::ENOTDIR) => refused(
            path,
            "not a directory where knav keeps its own; remove it, or pass --index-dir",
        ),
        _ => io::Error::new(e.kind(), format!("{}: {e}", path.display())),
    }
}

/// The record of a written revision (`revs/t-<tree id>/rev.json`, [`crate::git::revision`]).
pub(crate) const REV_RECORD: &str = "rev.json";
/// A revision's files (`revs/t-<tree id>/tree`).
pub(crate) const REV_TREE: &str = "tree";
/// A revision directory's name before its tree id.
pub(crate) const REV_PREFIX: &str = "t-";

/// True when `dir` is (or is below) the files of a kept revision: `revs/t-<tree id>/tree`.
/// Here, with the names of the layout, so that the tree's settings and the text part tell a
/// revision's files without depending on [`crate::git`].
pub fn is_revision_tree(dir: &Path) -> bool {
    dir.ancestors().any(|d| {
        named_like_revision_tree(d) && d.parent().is_some_and(|p| p.join(REV_RECORD).is_file())
    })
}

/// True when `dir`'s name and its parent's are those of a kept revision's files
/// (`t-<tree id>/tree`), whatever they hold.
pub fn named_like_revision_tree(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n == REV_TREE)
        && dir.parent().is_some_and(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(REV_PREFIX))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let base =
            std::env::temp_dir().join(format!("knav-indexdir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        base
    }

    #[test]
    fn a_forged_cache_past_its_cap_is_refused_from_its_length_before_any_read() {
        // Sparse: a reservation of its length (the whole file read first) would take 256 MiB
        // and more under a test's address-space limit; its length alone refuses it.
        let dir = scratch("cache-cap");
        std::fs::File::create(dir.join("walk.cache"))
            .unwrap()
            .set_len(CACHE_CAP + 1)
            .unwrap();
        assert_eq!(IndexDir::read_cache(&dir, "walk.cache"), None);
        let e = IndexDir::open(&dir)
            .unwrap()
            .read("walk.cache", CACHE_CAP)
            .unwrap_err();
        assert!(e.to_string().contains("over"), "{e}");
        std::fs::write(dir.join("small"), b"abc").unwrap();
        assert_eq!(
            IndexDir::read_cache(&dir, "small").as_deref(),
            Some(&b"abc"[..])
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_link_in_a_directorys_place_is_refused_and_removed_as_a_link() {
        let base = scratch("links");
        let outside = base.join("outside");
        std::fs::create_dir_all(outside.join("d")).unwrap();
        std::fs::write(outside.join("d/f"), "kept").unwrap();
        std::os::unix::fs::symlink(&outside, base.join("link")).unwrap();
        let e = IndexDir::open(&base.join("link")).unwrap_err().to_string();
        assert!(e.contains("a symbolic link where knav keeps"), "{e}");
        let dir = IndexDir::open(&base).unwrap();
        assert!(dir.sub("link").is_err());
        assert_eq!(dir.kind("link"), Kind::Link);
        // A tree holding links to the outside: the links go, the outside stays.
        let t = dir.sub_or_create("t").unwrap();
        std::os::unix::fs::symlink(outside.join("d"), base.join("t/d")).unwrap();
        std::os::unix::fs::symlink(outside.join("d/f"), base.join("t/f")).unwrap();
        t.mkdir("sub").unwrap();
        std::fs::write(base.join("t/sub/x"), "x").unwrap();
        assert_eq!(dir.bytes("t"), 1);
        dir.remove_tree("t").unwrap();
        dir.remove_tree("link").unwrap();
        assert_eq!(dir.kind("t"), Kind::Missing);
        assert_eq!(std::fs::read(outside.join("d/f")).unwrap(), b"kept");
        // A lock file that is a link is refused, its target untouched.
        std::os::unix::fs::symlink(outside.join("d/f"), base.join("lock")).unwrap();
        assert!(dir.lock_file("lock").is_err());
        assert!(dir.create_new("lock", 0o600).is_err());
        assert_eq!(std::fs::read(outside.join("d/f")).unwrap(), b"kept");
        assert!(dir.sub("../outside").is_err());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_revision_tree_swapped_for_a_link_after_its_check_is_not_read() {
        let base = scratch("rev-swap");
        let rev = base.join(".knav/revs/t-x");
        std::fs::create_dir_all(rev.join("tree")).unwrap();
        std::fs::write(rev.join("tree/a.c"), "kept").unwrap();
        let outside = base.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("a.c"), "outside").unwrap();
        let held = RevisionDirs::open(&rev).unwrap();
        // Swapped after the open: what is read through the descriptor is the revision's.
        std::fs::rename(rev.join("tree"), rev.join("tree.moved")).unwrap();
        std::os::unix::fs::symlink(&outside, rev.join("tree")).unwrap();
        let via = held.tree.via().join("a.c");
        assert!(via.starts_with(PROC_FD), "{}", via.display());
        assert_eq!(std::fs::read(&via).unwrap(), b"kept");
        // Messages show the real paths.
        assert_eq!(shown(&via), rev.join("tree/a.c"));
        assert_eq!(shown(held.index.via()), rev.join("index"));
        assert_eq!(
            shown_text(&format!("{}: gone", via.display())),
            format!("{}: gone", rev.join("tree/a.c").display())
        );
        drop(held);
        // A link at each step of the chain is refused, never followed.
        let e = RevisionDirs::open(&rev).unwrap_err().to_string();
        assert!(e.contains("a symbolic link where knav keeps"), "{e}");
        std::fs::remove_file(rev.join("tree")).unwrap();
        std::fs::rename(rev.join("tree.moved"), rev.join("tree")).unwrap();
        std::fs::rename(&rev, base.join("t-x.moved")).unwrap();
        std::os::unix::fs::symlink(base.join("t-x.moved"), &rev).unwrap();
        assert!(RevisionDirs::open(&rev).is_err());
        std::fs::remove_file(&rev).unwrap();
        std::fs::rename(base.join("t-x.moved"), &rev).unwrap();
        std::fs::rename(base.join(".knav/revs"), base.join("revs.moved")).unwrap();
        std::os::unix::fs::symlink(base.join("revs.moved"), base.join(".knav/revs")).unwrap();
        assert!(RevisionDirs::open(&rev).is_err());
        std::fs::remove_file(base.join(".knav/revs")).unwrap();
        std::fs::rename(base.join("revs.moved"), base.join(".knav/revs")).unwrap();
        assert!(RevisionDirs::open(&rev).is_ok());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn an_index_directory_of_another_user_is_refused_unless_allowed() {
        assert!(owner_refused(1000, 1001, false));
        assert!(!owner_refused(1000, 1001, true));
        assert!(!owner_refused(1000, 1000, false));
    }
}
