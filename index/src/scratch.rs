//! A RAM directory for the texts ctags reads instead of the tree's files.
//!
//! ctags takes paths, not bytes, so the shortened texts of a chunk (see `ctagstext`)
//! are written as files. On a disk file system that costs more kernel time than ctags saves
//! (creating, writing and unlinking 60,000 files on ext4 took a minute of system time for the
//! kernel); on tmpfs it is nearly free. So the texts go to `/dev/shm` when it is a tmpfs, and
//! nowhere otherwise: ctags then reads the tree itself.
//!
//! `KNAV_SCRATCH_DIR` overrides the place (empty: no scratch space; ctags is then sent each
//! file's bytes, see `build::tag_chunk`).
//! Each build gets `/dev/shm/knav-PID-XXXXXX` (made by `mkdtemp`, 0700), removed when the build ends. A build that was killed
//! leaves its directory behind; the next `knav index` (one with nothing to do too) removes
//! directories whose process is gone. One interrupted by Ctrl-C or SIGTERM removes its own at
//! once (`interrupt`).

use std::path::{Path, PathBuf};

/// The RAM file system knav writes to when it is one.
const SHM: &str = "/dev/shm";

/// A build's scratch directory, removed on drop.
#[derive(Debug)]
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// A fresh scratch directory in `/dev/shm`, or `None` when that is not a writable tmpfs.
    /// `KNAV_SCRATCH_DIR` names another parent (used as given), or, empty, turns scratch
    /// space off.
    pub fn for_ctags() -> Option<Scratch> {
        let parent = parent()?;
        remove_abandoned(&parent);
        Scratch::new_in(&parent)
    }

    /// A fresh scratch directory in `parent`, `knav-PID-XXXXXX` made by `mkdtemp`: a name no
    /// one can guess, created new (never one another user made first), readable by this user
    /// only (/dev/shm is shared by every user).
    pub fn new_in(parent: &Path) -> Option<Scratch> {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        let template = parent.join(format!("knav-{}-XXXXXX", std::process::id()));
        let mut bytes = std::ffi::CString::new(template.as_os_str().as_bytes())
            .ok()?
            .into_bytes_with_nul();
        // Made and registered in one step, so a Ctrl-C between the two still removes it.
        let dir = crate::interrupt::register_scratch_made_by(|| {
            // SAFETY: `bytes` is a NUL-terminated template ending in XXXXXX, which mkdtemp
            // overwrites in place.
            let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
            if made.is_null() {
                return None;
            }
            bytes.pop();
            Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
        })?;
        Some(Scratch { dir })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        crate::interrupt::unregister_scratch(&self.dir);
    }
}

/// Where scratch directories are made: `KNAV_SCRATCH_DIR`, else `/dev/shm` when it is a tmpfs.
fn parent() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("KNAV_SCRATCH_DIR") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    let shm = Path::new(SHM);
    is_tmpfs(shm).then(|| shm.to_path_buf())
}

/// Removes the scratch directories of builds that were killed; every `knav index` calls it,
/// one that finds nothing to do too.
pub fn remove_abandoned_scratch() {
    if let Some(parent) = parent() {
        remove_abandoned(&parent);
    }
}

/// True when `dir` is on a tmpfs.
fn is_tmpfs(dir: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        const TMPFS_MAGIC: i64 = 0x0102_1994;
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `c` is a valid NUL-terminated path and `st` a zeroed statfs to fill.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: as above; statfs writes only into `st`.
        let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
        rc == 0 && st.f_type as i64 == TMPFS_MAGIC
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        false
    }
}

/// Removes `knav-PID-XXXXXX` directories in `parent` whose process no longer runs.
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("knav-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_dir_is_removed_on_drop_and_an_abandoned_one_by_the_next_build() {
        let parent = std::env::temp_dir().join(format!("knav-scratch-test-{}", std::process::id()));
        std::fs::create_dir_all(&parent).unwrap();
        // No process has pid 4294967295: the directory was abandoned.
        let abandoned = parent.join("knav-4294967295-0");
        std::fs::create_dir_all(abandoned.join("sub")).unwrap();
        let unrelated = parent.join("other-dir");
        std::fs::create_dir_all(&unrelated).unwrap();
        let s = Scratch::new_in(&parent).unwrap();
        std::fs::write(s.path().join("a.c"), "int a;\n").unwrap();
        let kept = s.path().to_path_buf();
        assert!(kept.exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&kept).unwrap().permissions().mode();
            assert_eq!(
                mode & 0o077,
                0,
                "others may read the scratch texts: {mode:o}"
            );
        }
        remove_abandoned(&parent);
        assert!(!abandoned.exists(), "a dead process's scratch stays");
        assert!(kept.exists(), "this process's own scratch was removed");
        assert!(unrelated.exists());
        drop(s);
        assert!(!kept.exists());
        let _ = std::fs::remove_dir_all(&parent);
    }

    #[test]
    fn a_scratch_dir_has_a_name_no_one_can_guess_and_is_always_new() {
        let parent =
            std::env::temp_dir().join(format!("knav-scratch-names-{}", std::process::id()));
        std::fs::create_dir_all(&parent).unwrap();
        // The names scratch directories had before (knav-PID-N), made first by someone else,
        // and a link among them: none is used or followed.
        let trap = parent.join("trap");
        std::fs::create_dir_all(&trap).unwrap();
        for n in 0..4 {
            let old = parent.join(format!("knav-{}-{n}", std::process::id()));
            std::os::unix::fs::symlink(&trap, old).unwrap();
        }
        let (a, b) = (
            Scratch::new_in(&parent).unwrap(),
            Scratch::new_in(&parent).unwrap(),
        );
        assert_ne!(a.path(), b.path());
        for s in [&a, &b] {
            let name = s.path().file_name().unwrap().to_str().unwrap();
            let suffix = name
                .strip_prefix(&format!("knav-{}-", std::process::id()))
                .unwrap();
            assert_eq!(suffix.len(), 6, "{name}");
            assert!(!std::fs::symlink_metadata(s.path()).unwrap().is_symlink());
        }
        assert_eq!(std::fs::read_dir(&trap).unwrap().count(), 0);
        drop((a, b));
        let _ = std::fs::remove_dir_all(&parent);
    }
}
