//! Ctrl-C (SIGINT) and SIGTERM during a build: the scratch directories the build made and the
//! parts it wrote but did not publish are removed at once, then the process ends as the
//! signal asks (not at the next build, as a killed build's leftovers are).
//!
//! [`install`] blocks the two signals in the calling thread before any other thread starts (so
//! every thread inherits the mask) and waits for them in a thread of its own, where removing
//! files is ordinary code, not a signal handler's.

use std::path::{Path, PathBuf};
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

/// Takes SIGINT and SIGTERM over for the whole process: call it first, before any thread is
/// started. Does nothing when the signals cannot be blocked.
pub fn install() {
    // SAFETY: plain libc calls on a signal set this function owns.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("knav-signals".into())
            .spawn(move || {
                let mut sig: libc::c_int = 0;
                if libc::sigwait(&set, &mut sig) == 0 {
                    clean_up();
                    // Ended by the signal itself, as without this thread.
                    libc::signal(sig, libc::SIG_DFL);
                    libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                    libc::raise(sig);
                }
            });
        if spawned.is_err() {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
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
