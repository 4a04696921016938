//! Every file operation below a root: reading a file, and replacing one through a temporary
//! file and a rename. Nothing below the root is reached by a path string after it was checked.
//!
//! A [`Root`] holds a descriptor of the root directory. A file is opened relative to it in one
//! `openat2` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (Linux 5.6 and later), or, where
//! that call is missing or refused, one component at a time with `openat(O_NOFOLLOW)`, each
//! directory with `O_DIRECTORY`. Either way a symbolic link anywhere below the root, whether it
//! was there before or swapped in during the operation, is refused, never followed. Files are
//! opened with `O_NOFOLLOW | O_NONBLOCK` (a FIFO put in a file's place does not block the open)
//! and checked on their descriptor to be regular files.
//!
//! Writes go through a [`Dir`], the open directory that holds the file: the temporary file is
//! made in it with `O_CREAT | O_EXCL | O_NOFOLLOW` and renamed over the file with `renameat` on
//! the same descriptor, so a directory swapped for a link after the check changes nothing.

/// Files larger than this are not indexed by default (the kernel's largest generated register
/// header is 24 MB; anything above 64 MB is not source a person reads). Here, beneath the walk,
/// the revisions and the history, which all skip what the index would not read.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a file below the root was not opened.
#[derive(Debug)]
pub enum Unread {
    /// It cannot be read (gone, no permission).
    Io(std::io::Error),
    /// It is not a regular file reached without a link: a link, a FIFO or device, a path with
    /// a link on the way or leading out of the root. What a link leads to is never opened.
    Changed(&'static str),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Io(e) => e.fmt(f),
            Unread::Changed(what) => write!(f, "{what}, not a regular file below the root"),
        }
    }
}

/// An open root directory; every file below it is reached through its descriptor.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    /// False once `openat2` said it is missing or refused (old kernels, seccomp filters).
    openat2: AtomicBool,
}

/// `(device, inode)`: a file or directory's identity.
pub type Identity = (u64, u64);

impl Root {
    /// Opens the root directory `path` (itself resolved by the caller: it may be reached
    /// through links, what lies below it may not).
    pub fn open(path: &Path) -> std::io::Result<Root> {
        use std::os::unix::fs::OpenOptionsExt;
        // O_DIRECTORY: a root that is not a directory is refused by the open itself.
        let file = File::options()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(path)?;
        Ok(Root {
            fd: file.into(),
            openat2: AtomicBool::new(cfg!(target_os = "linux")),
        })
    }

    /// Root-relative `rel` (escaped as [`crate::tree::pathname`] keeps paths) opened for reading,
    /// with its metadata, when it is a regular file reached without a link.
    pub fn open_file(&self, rel: &str) -> Result<(File, std::fs::Metadata), Unread> {
        let path = crate::tree::pathname::to_path(rel);
        let parts = components(&path)?;
        if self.openat2.load(Ordering::Relaxed) && !parts.is_empty() {
            match openat2_beneath(&self.fd, path.as_os_str()) {
                Some(Ok(fd)) => return regular(fd),
                Some(Err(e)) => return Err(e),
                None => self.openat2.store(false, Ordering::Relaxed),
            }
        }
        let (last, dirs) = parts.split_last().ok_or(Unread::Changed("an empty path"))?;
        let dir = self.walk(dirs)?;
        dir.open_file(&c_name(last)?)
    }

    /// The bytes of root-relative `rel`, read or memory-mapped as [`crate::build`]
    /// reads sources.
    pub fn read(&self, rel: &str) -> Result<Source, Unread> {
        let (file, _) = self.open_file(rel)?;
        read_open(file).map_err(Unread::Io)
    }

    /// The bytes of root-relative `rel` when it holds at most `cap` of them.
    pub fn read_capped(&self, rel: &str, cap: u64) -> Result<Vec<u8>, Unread> {
        use std::io::Read;
        let (file, meta) = self.open_file(rel)?;
        let too_big = || Unread::Io(std::io::Error::other(format!("over {cap} bytes")));
        if meta.len() > cap {
            return Err(too_big());
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(cap + 1)
            .read_to_end(&mut bytes)
            .map_err(Unread::Io)?;
        if bytes.len() as u64 > cap {
            return Err(too_big());
        }
        Ok(bytes)
    }

    /// The directory holding root-relative `rel`, opened without following a link, and the
    /// file's name in it.
    pub fn parent_of(&self, rel: &str) -> Result<(Dir, CString), Unread> {
        let path = crate::tree::pathname::to_path(rel);
        let parts = components(&path)?;
        let (last, dirs) = parts.split_last().ok_or(Unread::Changed("an empty path"))?;
        Ok((self.walk(dirs)?, c_name(last)?))
    }

    /// The directory `dirs` below the root, one component at a time.
    fn walk(&self, dirs: &[&OsStr]) -> Result<Dir, Unread> {
        let mut fd = dup(&self.fd).map_err(Unread::Io)?;
        for d in dirs {
            // O_PATH: a directory one may enter but not list is still walked through.
            fd = open_at(&fd, &c_name(d)?, libc::O_DIRECTORY | libc::O_PATH)?;
        }
        Ok(Dir { fd })
    }
}

/// An open directory below a [`Root`].
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

impl Dir {
    /// `name` in this directory opened for reading, when it is a regular file.
    pub fn open_file(&self, name: &CStr) -> Result<(File, std::fs::Metadata), Unread> {
        regular(open_at(&self.fd, name, libc::O_NONBLOCK)?)
    }

    /// True when `name` in this directory is a symbolic link (looked at, not followed).
    pub fn is_link(&self, name: &CStr) -> bool {
        is_link(&self.fd, name)
    }

    /// The directory's identity.
    pub fn identity(&self) -> std::io::Result<Identity> {
        let file = File::from(dup(&self.fd)?);
        let m = file.metadata()?;
        Ok((m.dev(), m.ino()))
    }

    /// A new file `name` made for writing with `mode`; refused when anything has that name.
    pub fn create_new(&self, name: &CStr, mode: u32) -> std::io::Result<File> {
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: `name` is NUL-terminated and `self.fd` an open descriptor.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                name.as_ptr(),
                flags,
                mode as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Renames `from` to `to`, both in this directory, replacing `to`.
    pub fn rename(&self, from: &CStr, to: &CStr) -> std::io::Result<()> {
        let d = self.fd.as_raw_fd();
        // SAFETY: both names are NUL-terminated and `d` is an open descriptor.
        let rc = unsafe { libc::renameat(d, from.as_ptr(), d, to.as_ptr()) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes the file `name` from this directory.
    pub fn remove(&self, name: &CStr) -> std::io::Result<()> {
        // SAFETY: `name` is NUL-terminated and `self.fd` an open descriptor.
        let rc = unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), 0) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// The components of `path` (a root-relative path): plain names only.
fn components(path: &Path) -> Result<Vec<&OsStr>, Unread> {
    let mut out = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return Err(Unread::Changed("a path leading out of the root")),
        }
    }
    Ok(out)
}

fn c_name(name: &OsStr) -> Result<CString, Unread> {
    CString::new(name.as_bytes()).map_err(|_| Unread::Changed("a name with a NUL byte"))
}

fn dup(fd: &OwnedFd) -> std::io::Result<OwnedFd> {
    fd.try_clone()
}

/// `name` in `dir`, opened read-only with `extra` flags, never through a link.
fn open_at(dir: &OwnedFd, name: &CStr, extra: i32) -> Result<OwnedFd, Unread> {
    let flags = extra | libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    // SAFETY: `name` is NUL-terminated and `dir` an open descriptor.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ELOOP) => Unread::Changed("a symbolic link"),
            // O_DIRECTORY on a link to a directory says ENOTDIR: tell the two apart.
            Some(libc::ENOTDIR) if is_link(dir, name) => Unread::Changed("a symbolic link"),
            Some(libc::ENOTDIR) => Unread::Changed("a path through something not a directory"),
            _ => Unread::Io(e),
        });
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// True when `name` in `dir` is a symbolic link.
fn is_link(dir: &OwnedFd, name: &CStr) -> bool {
    // SAFETY: a zeroed stat is a valid out-parameter; `name` is NUL-terminated.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; fstatat writes only into `st`.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFLNK
}

/// `fd` as a file when it is a regular one.
fn regular(fd: OwnedFd) -> Result<(File, std::fs::Metadata), Unread> {
    let file = File::from(fd);
    let meta = file.metadata().map_err(Unread::Io)?;
    if !meta.is_file() {
        return Err(Unread::Changed("not a regular file"));
    }
    Ok((file, meta))
}

/// `rel` below `dir` in one `openat2` call that refuses links and `..`; `None` when the system
/// lacks the call or refuses it.
#[cfg(target_os = "linux")]
fn openat2_beneath(dir: &OwnedFd, rel: &OsStr) -> Option<Result<OwnedFd, Unread>> {
    let Ok(name) = CString::new(rel.as_bytes()) else {
        return Some(Err(Unread::Changed("a name with a NUL byte")));
    };
    // SAFETY: open_how is plain data; all zeros is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOFOLLOW) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: `name` is NUL-terminated, `how` is a valid open_how of the size passed, and `dir`
    // an open descriptor; the returned descriptor is owned below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            name.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOSYS) | Some(libc::EPERM) => None,
            Some(libc::ELOOP) => Some(Err(Unread::Changed("a symbolic link"))),
            Some(libc::EXDEV) => Some(Err(Unread::Changed("a path leading out of the root"))),
            Some(libc::ENOTDIR) => Some(Err(Unread::Changed(
                "a path through something not a directory",
            ))),
            _ => Some(Err(Unread::Io(e))),
        };
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Some(Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) }))
}

#[cfg(not(target_os = "linux"))]
fn openat2_beneath(_dir: &OwnedFd, _rel: &OsStr) -> Option<Result<OwnedFd, Unread>> {
    None
}

/// The bytes of a file, read or memory-mapped.
pub enum Source {
    /// Read into memory (small files).
    Read(Vec<u8>),
    /// Memory-mapped (large files).
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Source {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Source::Read(v) => v,
            Source::Mapped(m) => m,
        }
    }
}

/// Whether [`read_open`] may memory-map large files. The server turns it off: a file
/// truncated while mapped raises SIGBUS, which would end every session it serves.
pub static MAP_SOURCES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Reads an open source file; large ones are memory-mapped unless [`MAP_SOURCES`] is off.
/// Files below a root are opened by [`crate::tree::beneath::Root`].
///
/// # Safety
///
/// A mapped file truncated while it is read raises SIGBUS. The CLI accepts that risk, as
/// ripgrep does, for files above 256 KiB: mapping and scanning 296 kernel files above 256 KiB
/// takes 0.23-0.28 s against 0.38-0.47 s reading them, and one 278 KB file 0.13 ms against
/// 0.47 ms. A long-lived process (the server) turns [`MAP_SOURCES`] off.
pub fn read_open(file: File) -> std::io::Result<Source> {
    let len = file.metadata()?.len();
    if len >= 256 << 10 && MAP_SOURCES.load(std::sync::atomic::Ordering::Relaxed) {
        // SAFETY: see above; a truncation while mapped raises SIGBUS, accepted in the CLI.
        let m = unsafe { memmap2::Mmap::map(&file) }?;
        Ok(Source::Mapped(m))
    } else {
        let mut v = Vec::new();
        read_to_end(&file, len, &mut v)?;
        Ok(Source::Read(v))
    }
}

/// Appends the bytes of `file`, `len` bytes long when it was last looked at, to `buf`, up to
/// its end (past `len` when it grew since). One read takes the file and one more finds its
/// end: `File::read_to_end` first asks the system for the file's size and position again (a
/// statx and an lseek), and through `Read::take` its reads start at 8 KiB and double, four
/// or five for a file of 100 KB.
pub fn read_to_end(file: &File, len: u64, buf: &mut Vec<u8>) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // One byte more than the file: the read that finds its end needs no room made.
    buf.reserve(usize::try_from(len).unwrap_or(usize::MAX).saturating_add(1));
    loop {
        if buf.len() == buf.capacity() {
            buf.reserve(buf.len().max(8 << 10));
        }
        let spare = buf.spare_capacity_mut();
        // SAFETY: read(2) writes at most `spare.len()` bytes at the start of `buf`'s spare
        // room, which `buf` owns; the length grows only by the count it says it wrote.
        let n = unsafe { libc::read(file.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
        match n {
            0 => return Ok(()),
            // SAFETY: as above, the first `n` spare bytes were written.
            n if n > 0 => unsafe { buf.set_len(buf.len() + n as usize) },
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// `root` made absolute and canonical, or an error that says what is wrong with it.
pub fn resolve_root(root: &Path) -> Result<PathBuf, String> {
    let meta = std::fs::metadata(root).map_err(|e| {
        format!(
            "root {} cannot be read: {e}; pass --root with an existing directory",
            root.display()
        )
    })?;
    if !meta.is_dir() {
        return Err(format!(
            "root {} is not a directory; pass --root with the top of a source tree",
            root.display()
        ));
    }
    std::fs::canonicalize(root).map_err(|e| format!("root {}: {e}", root.display()))
}

/// Root-relative `rel` under the root directory `root` opened for reading, as
/// [`Root::open_file`] opens it (for one file: a caller opening many keeps a [`Root`]).
pub fn open_file(root: &Path, rel: &str) -> Result<(File, std::fs::Metadata), Unread> {
    Root::open(root).map_err(Unread::Io)?.open_file(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_tree(name: &str) -> (PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("knav-beneath-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("d/a.c"), "int inside;\n").unwrap();
        std::fs::write(outside.join("a.c"), "int outside;\n").unwrap();
        (root, outside)
    }

    fn refused(r: Result<Source, Unread>) -> &'static str {
        match r {
            Err(Unread::Changed(what)) => what,
            Err(Unread::Io(e)) => panic!("an error, not a refusal: {e}"),
            Ok(s) => panic!("read {:?}", String::from_utf8_lossy(&s)),
        }
    }

    /// A file is read to its end whatever length it was said to have (it may have grown or
    /// shrunk since it was looked at), after what the buffer held, and across reads of any
    /// size.
    #[test]
    fn read_to_end_reads_the_whole_file_whatever_its_length_was_said_to_be() {
        let dir = std::env::temp_dir().join(format!("knav-read-to-end-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        for said in [0, 1, 99_999, 100_000, 100_001, 1 << 20] {
            let mut buf = b"kept".to_vec();
            read_to_end(&File::open(&path).unwrap(), said, &mut buf).unwrap();
            assert_eq!(&buf[..4], b"kept");
            assert!(
                buf[4..] == bytes[..],
                "said {said}: {} bytes",
                buf.len() - 4
            );
        }
        std::fs::write(&path, b"").unwrap();
        let mut buf = Vec::new();
        read_to_end(&File::open(&path).unwrap(), 10, &mut buf).unwrap();
        assert!(buf.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_read_never_follows_a_link_below_the_root() {
        let (root, outside) = scratch_tree("links");
        let r = Root::open(&root).unwrap();
        assert_eq!(&*r.read("d/a.c").unwrap(), b"int inside;\n");
        assert_eq!(&*r.read("./d/a.c").unwrap(), b"int inside;\n");
        std::os::unix::fs::symlink(outside.join("a.c"), root.join("d/link.c")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
        assert_eq!(refused(r.read("d/link.c")), "a symbolic link");
        assert_eq!(refused(r.read("out/a.c")), "a symbolic link");
        assert_eq!(
            refused(r.read("../outside/a.c")),
            "a path leading out of the root"
        );
        assert_eq!(
            refused(r.read("d/a.c/x")),
            "a path through something not a directory"
        );
        // Both ways of opening agree: one openat2 call, and one component at a time.
        r.openat2.store(false, Ordering::Relaxed);
        assert_eq!(&*r.read("d/a.c").unwrap(), b"int inside;\n");
        assert_eq!(refused(r.read("d/link.c")), "a symbolic link");
        assert_eq!(refused(r.read("out/a.c")), "a symbolic link");
        let _ = std::fs::remove_dir_all(root.parent().unwrap());
    }

    #[test]
    fn a_fifo_in_a_files_place_is_refused_without_blocking() {
        let (root, _) = scratch_tree("fifo");
        std::fs::remove_file(root.join("d/a.c")).unwrap();
        let c = CString::new(root.join("d/a.c").as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let r = Root::open(&root).unwrap();
        // No writer: a blocking open would wait forever.
        assert_eq!(refused(r.read("d/a.c")), "not a regular file");
        r.openat2.store(false, Ordering::Relaxed);
        assert_eq!(refused(r.read("d/a.c")), "not a regular file");
        let _ = std::fs::remove_dir_all(root.parent().unwrap());
    }

    #[test]
    fn a_file_is_replaced_in_the_directory_that_was_opened() {
        let (root, outside) = scratch_tree("replace");
        let r = Root::open(&root).unwrap();
        let (dir, name) = r.parent_of("d/a.c").unwrap();
        // The directory moves and a link to the outside takes its place: the opened directory
        // is still the one written.
        std::fs::rename(root.join("d"), root.join("d.moved")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("d")).unwrap();
        let tmp = CString::new(".a.c.tmp").unwrap();
        let mut f = dir.create_new(&tmp, 0o600).unwrap();
        std::io::Write::write_all(&mut f, b"int replaced;\n").unwrap();
        assert!(dir.create_new(&tmp, 0o600).is_err(), "O_EXCL");
        dir.rename(&tmp, &name).unwrap();
        assert_eq!(
            std::fs::read(root.join("d.moved/a.c")).unwrap(),
            b"int replaced;\n"
        );
        assert_eq!(
            std::fs::read(outside.join("a.c")).unwrap(),
            b"int outside;\n"
        );
        // And the directory the path reaches now is refused.
        assert!(matches!(
            r.parent_of("d/a.c"),
            Err(Unread::Changed("a symbolic link"))
        ));
        let _ = std::fs::remove_dir_all(root.parent().unwrap());
    }
}
