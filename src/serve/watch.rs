//! Change notification for a served tree (Linux inotify): lets the server skip the stat walk of
//! a refresh when nothing under the tree could have changed since the last one.
//!
//! The watcher only ever says "clean" or "maybe changed"; the refresh stays the oracle. Every
//! directory the walk knows is watched for entries created, deleted, moved, written or
//! re-attributed. An event on a `.c`/`.h` file or on a directory marks the tree dirty (a build
//! writing `.o` files does not), and so does a queue overflow. Directories that appear are
//! watched after the refresh that finds them, and the tree stays dirty until one more refresh
//! has run with those watches in place, so a file created in a new directory between the two
//! is not missed. A stat walk still runs at least every [`STAT_AT_LEAST_EVERY`]. Where inotify is missing or its watch limit is reached, the watcher reports
//! "maybe changed" every time and the server refreshes by stat walk as before.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// Even a clean tree is stat-walked this often: inotify does not see changes made on another
/// machine to a network filesystem.
pub const STAT_AT_LEAST_EVERY: Duration = Duration::from_secs(60);

/// Watches one tree.
pub struct Watcher {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    /// Root-relative directories watched.
    watched: HashSet<String>,
    /// True until a refresh has run with every known directory watched.
    dirty: bool,
    /// False once a watch could not be added: every check then says "maybe changed".
    usable: bool,
    /// When the last refresh began.
    refreshed_at: Instant,
}

#[cfg(target_os = "linux")]
const MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_DELETE_SELF
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_MOVE_SELF
    | libc::IN_MODIFY
    | libc::IN_CLOSE_WRITE
    | libc::IN_ATTRIB
    | libc::IN_DONT_FOLLOW
    | libc::IN_ONLYDIR;

impl Watcher {
    /// A watcher with nothing watched yet (dirty), or `None` where the platform has none.
    pub fn new() -> Option<Watcher> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::FromRawFd;
            // SAFETY: plain syscall; the descriptor is owned below.
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            if fd < 0 {
                return None;
            }
            Some(Watcher {
                // SAFETY: `fd` is a fresh descriptor nobody else owns.
                fd: unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) },
                watched: HashSet::new(),
                dirty: true,
                usable: true,
                refreshed_at: Instant::now(),
            })
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Watches every directory of `dirs` (root-relative) not watched yet. Call before a refresh
    /// with the directories known so far and after it with the ones it found: a new one keeps
    /// the tree dirty for one more refresh.
    pub fn watch(&mut self, root: &Path, dirs: impl Iterator<Item = String>) {
        if !self.usable {
            return;
        }
        for dir in dirs {
            if self.watched.contains(&dir) {
                continue;
            }
            if !self.add(&root.join(&dir)) {
                self.usable = false;
                return;
            }
            self.watched.insert(dir);
            self.dirty = true;
        }
    }

    #[cfg(target_os = "linux")]
    fn add(&self, dir: &Path) -> bool {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: the descriptor is open and `c` is a valid NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), MASK) };
        // A directory that vanished meanwhile is not a reason to give up; a full watch table is.
        wd >= 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT)
    }

    #[cfg(not(target_os = "linux"))]
    fn add(&self, _dir: &Path) -> bool {
        false
    }

    /// True while nothing is watched yet.
    pub fn is_new(&self) -> bool {
        self.watched.is_empty()
    }

    /// Reads the events queued so far; true when nothing relevant changed since the last
    /// [`Watcher::begin_refresh`].
    pub fn is_clean(&mut self) -> bool {
        if !self.usable || self.refreshed_at.elapsed() > STAT_AT_LEAST_EVERY {
            return false;
        }
        self.drain();
        !self.dirty
    }

    /// Call just before a refresh (with the known directories watched): what is queued now is
    /// covered by it; what comes after it is not.
    pub fn begin_refresh(&mut self) {
        self.drain();
        self.dirty = false;
        self.refreshed_at = Instant::now();
    }

    /// Reads every queued event; marks the tree dirty on a relevant one.
    #[cfg(target_os = "linux")]
    pub fn drain(&mut self) {
        use std::os::fd::AsRawFd;
        let mut buf = [0u8; 16384];
        loop {
            // SAFETY: `buf` is writable for its length; the descriptor is open.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                )
            };
            if n <= 0 {
                return; // EAGAIN: the queue is empty
            }
            let mut at = 0usize;
            let header = std::mem::size_of::<libc::inotify_event>();
            while at + header <= n as usize {
                // SAFETY: the kernel wrote a whole event header at `at`; read it unaligned.
                let ev: libc::inotify_event = unsafe {
                    std::ptr::read_unaligned(buf.as_ptr().add(at) as *const libc::inotify_event)
                };
                let name_end = (at + header + ev.len as usize).min(n as usize);
                let raw = &buf[at + header..name_end];
                let name = &raw[..memchr::memchr(0, raw).unwrap_or(raw.len())];
                if relevant(ev.mask, name) {
                    self.dirty = true;
                }
                at = name_end;
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn drain(&mut self) {}
}

/// True for an event that can change what the index holds.
#[cfg(target_os = "linux")]
fn relevant(mask: u32, name: &[u8]) -> bool {
    if mask & libc::IN_Q_OVERFLOW != 0 {
        return true;
    }
    if mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF) != 0 {
        return true;
    }
    if mask & libc::IN_IGNORED != 0 {
        return false; // a watch went away: its parent's event says why
    }
    if mask & libc::IN_ISDIR != 0 {
        // Entering or leaving directories changes the tree; a directory's attributes do not.
        return mask
            & (libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO)
            != 0;
    }
    std::str::from_utf8(name).is_ok_and(crate::walk::is_source_name)
        || std::str::from_utf8(name).is_err()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn sources_and_directories_dirty_the_tree_and_other_files_do_not() {
        let root = std::env::temp_dir().join(format!("knav-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let mut w = Watcher::new().unwrap();
        w.watch(&root, ["".to_string(), "sub".to_string()].into_iter());
        assert!(
            !w.is_clean(),
            "dirty until a refresh has run with the watches in place"
        );
        w.begin_refresh();
        assert!(w.is_clean());
        std::fs::write(root.join("sub/a.o"), "x").unwrap();
        std::fs::write(root.join("notes.txt"), "x").unwrap();
        assert!(w.is_clean(), "object files and notes do not matter");
        std::fs::write(root.join("sub/a.c"), "int a;\n").unwrap();
        assert!(!w.is_clean());
        w.begin_refresh();
        std::fs::create_dir(root.join("new")).unwrap();
        assert!(!w.is_clean(), "a new directory");
        w.begin_refresh();
        // Watching a directory for the first time keeps the tree dirty for one refresh.
        w.watch(&root, ["new".to_string()].into_iter());
        assert!(!w.is_clean());
        w.begin_refresh();
        std::fs::write(root.join("new/b.h"), "int b;\n").unwrap();
        assert!(!w.is_clean(), "a header in the new directory");
        let _ = std::fs::remove_dir_all(&root);
    }
}
