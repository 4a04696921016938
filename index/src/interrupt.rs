//! Ctrl-C (SIGINT) and SIGTERM during a build: the scratch directories the build made and the
//! parts it wrote but did not publish are removed at once, then the process ends as the
//! signal asks (not at the next build, as a killed build's leftovers are).
//!
//! [`install`] sets a handler for the two signals; once a build registers what it would leave
//! behind, the handler passes the signal through a pipe to a thread of its own, where removing
//! files is ordinary code, not a signal handler's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

/// What an interrupted process removes.
static CLEANUP: Mutex<Cleanup> = Mutex::new(Cleanup {
    scratch: Vec::new(),
    index_dirs: Vec::new(),
});

struct Cleanup {
    /// Scratch directories of running builds.
    scratch: Vec<PathBuf>,
    /// Index directories a build of this process holds the lock of.
    index_dirs: Vec<PathBuf>,
}

fn cleanup() -> std::sync::MutexGuard<'static, Cleanup> {
    CLEANUP.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes a scratch directory with `make` and registers it (removed if the process is
/// interrupted while it is registered), both under the lock the interrupt takes: a signal
/// between the two cannot leave the directory behind.
pub fn register_scratch_made_by(make: impl FnOnce() -> Option<PathBuf>) -> Option<PathBuf> {
    waiter();
    let mut c = cleanup();
    let dir = make()?;
    c.scratch.push(dir.clone());
    Some(dir)
}

/// Forgets `dir` (removed by its owner).
pub fn unregister_scratch(dir: &Path) {
    cleanup().scratch.retain(|d| d != dir);
}

/// While it lives (a build holds the index's lock), the unpublished parts in its index
/// directory are removed if the process is interrupted.
pub struct IndexGuard(PathBuf);

/// An [`IndexGuard`] for `index_dir`.
pub fn guard_index(index_dir: &Path) -> IndexGuard {
    waiter();
    cleanup().index_dirs.push(index_dir.to_path_buf());
    IndexGuard(index_dir.to_path_buf())
}

impl Drop for IndexGuard {
    fn drop(&mut self) {
        let mut c = cleanup();
        if let Some(k) = c.index_dirs.iter().position(|d| *d == self.0) {
            c.index_dirs.remove(k);
        }
    }
}

/// Takes SIGINT and SIGTERM over for the whole process. Until a build registers something to
/// remove, the handler ends the process as the signal would have; after, it hands the signal
/// to a thread started then (see [`waiter`]), where removing files is ordinary code. A query
/// never starts that thread (it cost a one-line query a sixth of its time).
pub fn install() {
    // SAFETY: a plain sigaction with a handler that makes only async-signal-safe calls.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        for sig in [libc::SIGINT, libc::SIGTERM] {
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Where the handler writes the signal for the [`waiter`] thread; -1 until that thread runs.
static TO_WAITER: AtomicI32 = AtomicI32::new(-1);

/// The signal handler: async-signal-safe calls only.
extern "C" fn on_signal(sig: libc::c_int) {
    let fd = TO_WAITER.load(Ordering::SeqCst);
    let byte = sig as u8;
    // SAFETY: write, signal and raise are async-signal-safe.
    unsafe {
        if fd >= 0 && libc::write(fd, (&byte as *const u8).cast(), 1) == 1 {
            return;
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Starts, once, the thread that removes what builds registered when a signal comes, then
/// ends the process by that signal. Called before anything is registered.
fn waiter() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 fills the two descriptors of `fds`.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return;
        }
        let [from_handler, to_waiter] = fds;
        let spawned = std::thread::Builder::new()
            .name("knav-signals".into())
            .spawn(move || {
                let mut sig = 0u8;
                loop {
                    // SAFETY: a one-byte read into `sig` from the pipe this thread owns.
                    let n = unsafe { libc::read(from_handler, (&mut sig as *mut u8).cast(), 1) };
                    if n == 1 {
                        break;
                    }
                    if n < 0
                        && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                    {
                        continue;
                    }
                    return;
                }
                clean_up();
                // Ended by the signal itself, as without this thread.
                // SAFETY: plain libc calls.
                unsafe {
                    libc::signal(sig as libc::c_int, libc::SIG_DFL);
                    libc::raise(sig as libc::c_int);
                }
            });
        if spawned.is_ok() {
            TO_WAITER.store(to_waiter, Ordering::SeqCst);
        }
    });
}

/// Removes what the registered builds made and did not publish.
fn clean_up() {
    let c = cleanup();
    for d in &c.scratch {
        remove_while_written(d);
    }
    for d in &c.index_dirs {
        crate::store::remove_unpublished(d);
    }
}

/// Removes `dir` while the build's threads may still be writing into it: renamed first, so
/// no new file can be opened by its old path, then removed, again if a file opened just
/// before the rename made the first removal fail.
fn remove_while_written(dir: &Path) {
    let mut gone = dir.as_os_str().to_owned();
    gone.push(".gone");
    let gone = PathBuf::from(gone);
    let target = if std::fs::rename(dir, &gone).is_ok() {
        gone
    } else {
        dir.to_path_buf()
    };
    for _ in 0..100 {
        if std::fs::remove_dir_all(&target).is_ok() || !target.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}
