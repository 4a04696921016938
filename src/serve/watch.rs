//! Change notification for a served tree (Linux inotify): lets the server skip the stat walk of
//! a refresh when nothing under the tree could have changed since the last one.
//!
//! The watcher only ever says "clean" or "maybe changed"; the refresh stays the oracle. Every
//! directory the walk knows is watched for entries created, deleted, moved, written or
//! re-attributed. An event on a `.c`/`.h` or build file or on a directory marks the tree dirty
//! (for the CLI's daemon, on any file: `knav grep` reads what rg reads, `.o` files of a tree
//! outside git included), and so does a queue overflow. Directories that appear are watched
//! after the refresh that finds them, and the tree stays dirty until one more refresh has run
//! with those watches in place, so a file created in a new directory between the two is not
//! missed. A directory moved away is no longer watched (its watch follows it, under a name
//! that is no longer its own), so one made later under its old name is. A stat walk still
//! runs at least every [`STAT_AT_LEAST_EVERY`]. Where inotify is missing or its watch limit is
//! reached, the watcher reports "maybe changed" every time and the server refreshes by stat
//! walk as before.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::walk::Hint;

/// Even a clean tree is stat-walked this often: inotify does not see changes made on another
/// machine to a network filesystem.
pub const STAT_AT_LEAST_EVERY: Duration = Duration::from_secs(60);

/// Paths a hint holds at most: past that (a build writing its objects, now that the daemon
/// counts every file) the next refresh stats everything, and the hint takes no more memory.
const HINT_CAP: usize = 10_000;

/// Watches one tree.
pub struct Watcher {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    /// Root-relative directories watched, and by which watch descriptor.
    watched: HashSet<String>,
    by_wd: HashMap<i32, String>,
    /// What changed since the last refresh began.
    hint: Hint,
    /// False when something may have changed that `hint` does not name (a queue overflow, a
    /// directory watched only now): the next refresh then stats everything.
    exact: bool,
    /// False once a watch could not be added: every check then says "maybe changed".
    usable: bool,
    /// When the last refresh that stat'ed everything began.
    full_stat_at: Instant,
    /// Every file counts, not only `.c`/`.h` and build files (the CLI's watcher daemon:
    /// `knav grep` answers for every file rg searches, which a name alone does not tell).
    every_file: bool,
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
                by_wd: HashMap::new(),
                hint: Hint::default(),
                exact: false,
                usable: true,
                full_stat_at: Instant::now(),
                every_file: false,
            })
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// The same watcher, for which every file but a build's products counts.
    pub fn every_file(mut self) -> Watcher {
        self.every_file = true;
        self
    }

    /// False once a watch could not be added (the watch limit): it only ever says "maybe
    /// changed" from then on.
    pub fn is_usable(&self) -> bool {
        self.usable
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
            self.exact = false;
            match self.add(&root.join(crate::pathname::to_path(&dir))) {
                // Vanished meanwhile: not watched, so that one made later under its name is.
                Some(wd) if wd < 0 => continue,
                Some(wd) => {
                    // The same directory under another name (moved, its event not read yet):
                    // the old name is free for a directory made there.
                    if let Some(old) = self.by_wd.insert(wd, dir.clone()) {
                        self.watched.remove(&old);
                    }
                }
                None => {
                    self.usable = false;
                    return;
                }
            }
            self.watched.insert(dir);
        }
    }

    /// Watches `dir`: `Some(watch descriptor)` (-1 for a directory that vanished meanwhile), or
    /// `None` when no more watches can be added.
    #[cfg(target_os = "linux")]
    fn add(&self, dir: &Path) -> Option<i32> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: the descriptor is open and `c` is a valid NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), MASK) };
        // A directory that vanished meanwhile is not a reason to give up; a full watch table is.
        let vanished = || std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT);
        (wd >= 0 || vanished()).then_some(wd)
    }

    #[cfg(not(target_os = "linux"))]
    fn add(&self, _dir: &Path) -> Option<i32> {
        None
    }

    /// True while nothing is watched yet.
    pub fn is_new(&self) -> bool {
        self.watched.is_empty()
    }

    /// Reads the events queued so far; true when nothing relevant changed since the last
    /// [`Watcher::begin_refresh`].
    pub fn is_clean(&mut self) -> bool {
        if !self.usable || self.full_stat_at.elapsed() > STAT_AT_LEAST_EVERY {
            return false;
        }
        self.drain();
        self.exact && self.hint.is_empty()
    }

    /// Call just before a refresh, with the known directories watched: returns what changed
    /// since the last one, or `None` when the refresh must stat everything. What happens from
    /// now on counts for the next refresh.
    pub fn begin_refresh(&mut self) -> Option<Hint> {
        self.drain();
        let exact = self.usable && self.exact && self.full_stat_at.elapsed() <= STAT_AT_LEAST_EVERY;
        let hint = std::mem::take(&mut self.hint);
        self.exact = true;
        if exact {
            Some(hint)
        } else {
            self.full_stat_at = Instant::now();
            None
        }
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
                self.note(ev.wd, ev.mask, name);
                at = name_end;
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn drain(&mut self) {}
}

impl Watcher {
    /// Records one event into the hint.
    #[cfg(target_os = "linux")]
    fn note(&mut self, wd: i32, mask: u32, name: &[u8]) {
        if mask & libc::IN_Q_OVERFLOW != 0 {
            self.exact = false;
            return;
        }
        if mask & libc::IN_IGNORED != 0 {
            // A watch went away with its directory; the parent's event says so.
            if let Some(dir) = self.by_wd.remove(&wd) {
                self.watched.remove(&dir);
            }
            return;
        }
        let Some(dir) = self.by_wd.get(&wd) else {
            return;
        };
        if mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF) != 0 {
            // The directory itself went: its parent's entries changed.
            let parent = dir.rsplit_once('/').map_or("", |(p, _)| p).to_string();
            if dir.is_empty() {
                self.exact = false; // the root itself
            } else {
                self.hint.dirs.insert(parent);
            }
            if mask & libc::IN_MOVE_SELF != 0 {
                let dir = dir.clone();
                self.forget(&dir);
            }
            return;
        }
        let name = &*crate::pathname::encode(name);
        if mask & libc::IN_ISDIR != 0 {
            // Entering or leaving directories changes the tree; a directory's attributes do not.
            if mask & (libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO)
                != 0
            {
                self.hint.dirs.insert(dir.clone());
            }
            return;
        }
        let counts = if self.every_file {
            true
        } else {
            crate::walk::is_source_name(name) || crate::walk::is_build_name(name)
        };
        if counts {
            let path = if dir.is_empty() {
                name.to_string()
            } else {
                format!("{dir}/{name}")
            };
            // A source that came or went changes its directory's listing too.
            if mask & (libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO)
                != 0
            {
                self.hint.dirs.insert(dir.clone());
            }
            self.hint.files.insert(path);
            if self.hint.files.len() + self.hint.dirs.len() > HINT_CAP {
                self.hint = Hint::default();
                self.exact = false;
            }
        }
    }
}

impl Watcher {
    /// Stops watching `dir` (root-relative) and every watched directory below it, moved away
    /// with it: their watches follow them under names no longer theirs. What happens in them
    /// until they are watched again under their new names is unknown, so the next refresh
    /// stats everything.
    #[cfg(target_os = "linux")]
    fn forget(&mut self, dir: &str) {
        use std::os::fd::AsRawFd;
        let below = |d: &str| d == dir || d.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
        let gone: Vec<i32> = self
            .by_wd
            .iter()
            .filter(|(_, d)| below(d))
            .map(|(wd, _)| *wd)
            .collect();
        for wd in gone {
            if let Some(d) = self.by_wd.remove(&wd) {
                self.watched.remove(&d);
            }
            // SAFETY: plain syscall on the open descriptor; a watch already gone fails harmlessly.
            unsafe { libc::inotify_rm_watch(self.fd.as_raw_fd(), wd) };
        }
        self.exact = false;
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> HashSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_hint_names_changed_sources_and_directories_and_ignores_other_files() {
        let root = std::env::temp_dir().join(format!("knav-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/old.c"), "int a;\n").unwrap();
        let mut w = Watcher::new().unwrap();
        w.watch(&root, ["".to_string(), "sub".to_string()].into_iter());
        assert!(
            !w.is_clean(),
            "dirty until a refresh has run with the watches in place"
        );
        assert_eq!(
            w.begin_refresh(),
            None,
            "the first refresh stats everything"
        );
        assert!(w.is_clean());
        std::fs::write(root.join("sub/a.o"), "x").unwrap();
        std::fs::write(root.join("notes.txt"), "x").unwrap();
        assert!(w.is_clean(), "object files and notes do not matter");
        std::fs::write(root.join("sub/old.c"), "int b;\n").unwrap();
        assert!(!w.is_clean());
        let h = w.begin_refresh().unwrap();
        assert_eq!((h.files, h.dirs), (set(&["sub/old.c"]), set(&[])));
        std::fs::write(root.join("top.h"), "int t;\n").unwrap();
        std::fs::create_dir(root.join("new")).unwrap();
        assert!(!w.is_clean());
        let h = w.begin_refresh().unwrap();
        assert_eq!((h.files, h.dirs), (set(&["top.h"]), set(&[""])));
        // Watching a directory for the first time makes the next refresh stat everything.
        w.watch(&root, ["new".to_string()].into_iter());
        assert!(!w.is_clean());
        assert_eq!(w.begin_refresh(), None);
        std::fs::write(root.join("new/b.h"), "int b;\n").unwrap();
        std::fs::remove_file(root.join("sub/old.c")).unwrap();
        let h = w.begin_refresh().unwrap();
        assert_eq!(
            (h.files, h.dirs),
            (set(&["new/b.h", "sub/old.c"]), set(&["new", "sub"]))
        );
        std::fs::remove_dir_all(root.join("new")).unwrap();
        let h = w.begin_refresh().unwrap();
        assert!(h.dirs.contains(""), "{h:?}");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A scratch directory of its own for a test named `name`, with the watcher watching
    /// `dirs` and a first refresh done.
    fn watched(name: &str, dirs: &[&str], every_file: bool) -> (std::path::PathBuf, Watcher) {
        let root = std::env::temp_dir().join(format!("knav-watch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in dirs {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let mut w = Watcher::new().unwrap();
        if every_file {
            w = w.every_file();
        }
        w.watch(&root, dirs.iter().map(|d| d.to_string()));
        assert_eq!(w.begin_refresh(), None);
        assert!(w.is_clean());
        (root, w)
    }

    #[test]
    fn a_directory_made_where_a_watched_one_was_moved_away_is_watched() {
        let (root, mut w) = watched("moved", &["", "d", "d/a", "d/a/sub"], false);
        std::fs::rename(root.join("d/a"), root.join("d/b")).unwrap();
        std::fs::create_dir_all(root.join("d/a/sub")).unwrap();
        // (What the moved watches saw meanwhile is not known: this refresh stats everything.)
        let _ = w.begin_refresh();
        // The refresh found d/a, d/a/sub (new) and d/b, d/b/sub (moved): all watched from now.
        let known = ["", "d", "d/a", "d/a/sub", "d/b", "d/b/sub"];
        w.watch(&root, known.iter().map(|d| d.to_string()));
        assert_eq!(w.begin_refresh(), None);
        std::fs::write(root.join("d/a/n.c"), "int n;\n").unwrap();
        std::fs::write(root.join("d/a/sub/m.c"), "int m;\n").unwrap();
        std::fs::write(root.join("d/b/sub/o.c"), "int o;\n").unwrap();
        let h = w.begin_refresh().expect("exact");
        assert_eq!(
            h.files,
            set(&["d/a/n.c", "d/a/sub/m.c", "d/b/sub/o.c"]),
            "{h:?}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn every_file_counts_for_the_daemon_names_that_look_like_build_products_too() {
        let (root, mut w) = watched("every", &[""], true);
        for name in ["fresh.d", "x.o.txt~", "other.tmp", "a.o", ".tmp_x"] {
            std::fs::write(root.join(name), "fresh_word\n").unwrap();
        }
        let h = w.begin_refresh().expect("exact");
        let want = set(&["fresh.d", "x.o.txt~", "other.tmp", "a.o", ".tmp_x"]);
        assert_eq!(h.files, want, "{h:?}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
