//! A stand-in ctags that holds a build or an edit at a known point, so a test can swap a file
//! or directory for a link while knav waits inside its check.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A stand-in for ctags in `dir`: the real one, except that while `dir/armed` exists (after
/// the first build: the next run is an edit's check) each run first makes `dir/started` and
/// waits for `dir/go`; it lists what `$TMPDIR` holds then in `dir/tmp-seen`.
pub fn gated_ctags(dir: &Path) -> PathBuf {
    let path = dir.join("gated-ctags");
    let d = dir.display();
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n\
             if [ -e '{d}/armed' ]; then\n\
               if [ -n \"$TMPDIR\" ]; then ls -A \"$TMPDIR\" >> '{d}/tmp-seen'; fi\n\
               touch '{d}/started'\n\
               while [ ! -e '{d}/go' ]; do sleep 0.01; done\n\
             fi\n\
             exec ctags \"$@\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Waits (at most a minute) for `path` to appear.
pub fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
