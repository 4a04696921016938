//! Revisions resolved before, remembered with the files git read to resolve them (the ref
//! files a name can mean, `packed-refs`, HEAD's target), so a query at a revision runs no git
//! process while those files are unchanged. A commit's tree never changes, so only the name's
//! meaning is checked: each file's identity (device, inode, size, mtime) or its absence. git
//! replaces a ref by renaming a new file over it, so a moved ref is always a changed inode.
//!
//! Only what can be checked this way is remembered: names and object ids with `~N`/`^N`
//! suffixes in a repository whose `.git` is a directory with files refs; anything else
//! (`@{…}`, `:/text`, `^{…}`, worktrees, reftable, a `GIT_*` variable honoured) asks git
//! every time.

use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::git::{self, GitError, Resolved};

/// The remembered resolutions' file, in the revisions' directory.
const FILE: &str = "resolved.json";
/// Resolutions kept (the most recent).
const KEEP: usize = 64;

/// One remembered resolution.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Entry {
    root: PathBuf,
    asked: String,
    commit: String,
    tree: String,
    witness: Vec<(PathBuf, Option<[u64; 4]>)>,
}

/// [`git::resolve`], answered from `revs`'s remembered resolutions when the files git would
/// read are unchanged, and remembered there when git had to be asked.
pub fn resolve(root: &Path, revs: &Path, rev: &str) -> Result<Resolved, GitError> {
    // What git::resolve refuses is refused before anything remembered is answered.
    git::check_gitdir(root)?;
    let paths = witness_paths(root, rev);
    if let Some(paths) = &paths {
        let now = witness(paths);
        let file = revs.join(FILE);
        let entries = read(&file);
        if let Some(e) = entries
            .iter()
            .find(|e| e.root == root && e.asked == rev && e.witness == now)
        {
            return Ok(Resolved {
                asked: rev.to_string(),
                commit: e.commit.clone(),
                tree: e.tree.clone(),
            });
        }
        let resolved = git::resolve(root, rev)?;
        // Remembered only when nothing moved while git read it.
        if witness(paths) == now && revs.is_dir() {
            remember(&file, entries, root, &resolved, now);
        }
        return Ok(resolved);
    }
    git::resolve(root, rev)
}

fn read(file: &Path) -> Vec<Entry> {
    fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Adds a resolution (newest last), keeping [`KEEP`]; written by rename, so a reader sees the
/// old list or the new one. Losing a race with another writer loses only a remembered answer.
fn remember(
    file: &Path,
    mut entries: Vec<Entry>,
    root: &Path,
    resolved: &Resolved,
    witness: Vec<(PathBuf, Option<[u64; 4]>)>,
) {
    entries.retain(|e| !(e.root == root && e.asked == resolved.asked));
    entries.push(Entry {
        root: root.to_path_buf(),
        asked: resolved.asked.clone(),
        commit: resolved.commit.clone(),
        tree: resolved.tree.clone(),
        witness,
    });
    let skip = entries.len().saturating_sub(KEEP);
    let Ok(bytes) = serde_json::to_vec(&entries[skip..]) else {
        return;
    };
    let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
    // A new file, never through a link planted under the temporary name.
    let _ = fs::remove_file(&tmp);
    let written = fs::File::options()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(&bytes));
    if written.is_err() || fs::rename(&tmp, file).is_err() {
        let _ = fs::remove_file(&tmp);
    }
}

fn witness(paths: &[PathBuf]) -> Vec<(PathBuf, Option<[u64; 4]>)> {
    paths
        .iter()
        .map(|p| {
            let id = fs::symlink_metadata(p).ok().map(|m| {
                let mtime = (m.mtime() as u64).wrapping_mul(1_000_000_000) + m.mtime_nsec() as u64;
                [m.dev(), m.ino(), m.size(), mtime]
            });
            (p.clone(), id)
        })
        .collect()
}

/// The files whose content decides what `rev` names for the repository of `root`, or None
/// when that cannot be known without git.
fn witness_paths(root: &Path, rev: &str) -> Option<Vec<PathBuf>> {
    // Any GIT_* variable git honours (GIT_DIR, GIT_OBJECT_DIRECTORY, GIT_CONFIG_*…) can
    // change what a name means without touching a file checked here.
    if !git::honoured_variables().is_empty() || rev.len() > git::MAX_REV_BYTES {
        return None;
    }
    let base = base_of(rev)?;
    let gitdir = root
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|g| g.exists())?;
    if !gitdir.is_dir() || gitdir.join("reftable").exists() || gitdir.join("commondir").exists() {
        return None;
    }
    // What makes a commit name another commit or tree: replacements and grafts.
    let mut paths = vec![
        gitdir.join("refs/replace"),
        gitdir.join("info/grafts"),
        gitdir.join("packed-refs"),
    ];
    if git::is_object_id(base) {
        return Some(paths);
    }
    // git's order of meanings for a name (its ref_rev_parse_rules).
    let rules = [
        "{}",
        "refs/{}",
        "refs/tags/{}",
        "refs/heads/{}",
        "refs/remotes/{}",
        "refs/remotes/{}/HEAD",
    ];
    for rule in rules {
        let p = gitdir.join(rule.replace("{}", base));
        paths.push(p.clone());
        // A symbolic ref (HEAD): its target too, one level deep.
        if let Ok(text) = fs::read_to_string(&p) {
            if let Some(target) = text.strip_prefix("ref: ") {
                let target = gitdir.join(target.trim());
                if fs::read_to_string(&target).is_ok_and(|t| t.starts_with("ref: ")) {
                    return None;
                }
                paths.push(target);
            }
        }
    }
    Some(paths)
}

/// The name `rev` starts from when the rest is only `~N` and `^N` steps (`HEAD~3^2`: `HEAD`;
/// `@` is `HEAD`), when that name is a plain one.
fn base_of(rev: &str) -> Option<&str> {
    let cut = rev.find(['~', '^']).unwrap_or(rev.len());
    let (base, steps) = rev.split_at(cut);
    if !steps
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'~' || b == b'^')
    {
        return None;
    }
    let base = if base == "@" { "HEAD" } else { base };
    is_plain_name(base).then_some(base)
}

/// A name that is only a ref name or an object id: no `..`, `@{`, `:`, `{`, spaces or glob
/// characters, and nothing git would read as an option.
fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['-', '/', '.'])
        && !s.ends_with(['/', '.'])
        && !s.contains("..")
        && !s.contains("//")
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_git_reads_from_ref_files_are_remembered() {
        let cases = [
            ("v6.1", Some("v6.1")),
            ("HEAD", Some("HEAD")),
            ("HEAD~3^2", Some("HEAD")),
            ("main^", Some("main")),
            ("feature/x", Some("feature/x")),
            ("@~2", Some("HEAD")),
            ("HEAD@{1}", None),
            (":/fix", None),
            ("v6.1^{tree}", None),
            ("a..b", None),
            ("-x", None),
            ("a b", None),
            ("main:fs", None),
            ("", None),
            ("~1", None),
        ];
        for (rev, base) in cases {
            assert_eq!(base_of(rev), base, "{rev}");
        }
    }
}
