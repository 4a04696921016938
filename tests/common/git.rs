//! git run by the tests that make repositories: a fixed author and committer, no system config,
//! and a failure that fails the test.

use std::path::Path;
use std::process::{Command, Stdio};

/// Runs git in `dir`; its stdout. Panics when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_in(dir, args, None)
}

/// [`git`] with `input` on its stdin.
pub fn git_in(dir: &Path, args: &[&str], input: Option<&[u8]>) -> String {
    use std::io::Write;
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@localhost")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@localhost")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("git runs");
    let mut stdin = child.stdin.take().expect("git's stdin");
    if let Some(bytes) = input {
        stdin.write_all(bytes).expect("git reads its input");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("git ends");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
