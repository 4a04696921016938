//! Change detection: the walk of an update against the files the index holds, each file's
//! size and modification time compared and, when only the time differs, its bytes; and
//! [`changes`], the same comparison for `knav status`, building and writing nothing.

use std::path::Path;

use serde::Serialize;

use super::text::TextUpdate;
use crate::accum;
use crate::build::BuildOptions;
use crate::error::IndexError;
use crate::format::{FileStat, FileStatus};
use crate::store::{self, Snapshot};
use crate::tree::walk::{walk, SourceFile, DEFAULT_MAX_FILE_BYTES};

/// What the walk of an update found.
pub(super) struct Walked<'s> {
    pub(super) walk: crate::tree::walk::Walk,
    /// For a hinted walk, the index's files by path (the diff compares against them); else
    /// empty.
    pub(super) indexed: Indexed<'s>,
}

/// Walks the tree. With a hint and an index, the walk trusts the index's stats of every file
/// the hint does not name.
pub(super) fn walk_tree<'s>(
    root: &Path,
    opts: &BuildOptions,
    old: Option<&'s Snapshot>,
    cache: Option<&crate::tree::walk::WalkCache>,
    hint: Option<&crate::tree::walk::Hint>,
) -> Walked<'s> {
    let indexed = match (old, hint) {
        (Some(snap), Some(_)) => indexed_files(snap),
        _ => Indexed::default(),
    };
    // Build files' stats, for a watcher-hinted walk only (it trusts them).
    let build_inputs: std::collections::HashMap<String, (u64, i64)> = old
        .and_then(|s| s.build.as_ref())
        .filter(|_| hint.is_some())
        .map(|b| {
            b.inputs()
                .into_iter()
                .map(|f| (f.path, (f.size, f.mtime_ns)))
                .collect()
        })
        .unwrap_or_default();
    let known = |path: &str| {
        indexed
            .get(path)
            .map(|s| (s.size, s.mtime_ns))
            .or_else(|| build_inputs.get(path).copied())
    };
    let trust = hint
        .filter(|_| old.is_some())
        .map(|hint| crate::tree::walk::Trust {
            hint,
            known: &known,
        });
    let walk = walk(
        root,
        DEFAULT_MAX_FILE_BYTES,
        &opts.ignore,
        cache,
        trust.as_ref(),
    );
    Walked { walk, indexed }
}

/// What changed in the tree since the index: the files to index again and those gone.
pub(super) struct Diff {
    /// Paths to (re-)index: content changed or new.
    pub(super) changed: Vec<String>,
    /// Of `changed`, how many existed before.
    pub(super) modified: u64,
    /// Paths gone from the tree.
    pub(super) deleted: Vec<String>,
}

/// Each live file of `snap` by path.
pub(super) type Indexed<'s> = accum::NameMap<&'s str, FileStat<'s>>;

/// Each live file of `snap` by path, as the diff compares against them.
pub(super) fn indexed_files(snap: &Snapshot) -> Indexed<'_> {
    let mut known = Indexed::default();
    known.reserve(snap.manifest.files_scanned as usize + 1024);
    for (s, f) in snap.live_files() {
        let stat = snap.segments[s].file_stat(f);
        known.insert(stat.path, stat);
    }
    known
}

/// The C sources that changed in a tree since its index was built, as a refresh would find them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Files the index does not hold, in path order.
    pub added: Vec<String>,
    /// Files whose bytes differ from those indexed.
    pub changed: Vec<String>,
    /// Files indexed that are gone.
    pub deleted: Vec<String>,
}

/// What changed in the C sources of `root` since its index in `index_dir` was built: a walk
/// that stats every file, as a refresh's does, comparing contents where only the modification
/// time differs; building, writing and locking nothing. `None` when there is no index.
pub fn changes(
    root: &Path,
    index_dir: &Path,
    opts: &BuildOptions,
) -> Result<Option<Changes>, IndexError> {
    let Some(snap) = Snapshot::open(root, index_dir)? else {
        return Ok(None);
    };
    let cache = store::read_walk_cache(index_dir);
    let Walked {
        walk: mut walked, ..
    } = walk_tree(root, opts, Some(&snap), cache.as_ref(), None);
    if let Some(c) = &cache {
        walked.materialize(c, DEFAULT_MAX_FILE_BYTES);
    }
    let restat = crate::restat::Restat::load_or_warn(index_dir, snap.manifest.restat.as_deref());
    let files = walked.sources.iter().chain(&walked.too_big);
    let d = diff(root, indexed_files(&snap), files, &restat);
    let (mut changed, mut added): (Vec<String>, Vec<String>) = d
        .changed
        .into_iter()
        .partition(|p| snap.find_file(p).is_some());
    let mut deleted = d.deleted;
    for v in [&mut changed, &mut added, &mut deleted] {
        v.sort_unstable();
    }
    Ok(Some(Changes {
        added,
        changed,
        deleted,
    }))
}

/// What changed in the tree since `snap` (the files it `indexed`), against the `walked` files;
/// loads the restat part of `snap` into `text` first.
pub(super) fn compare(
    root: &Path,
    index_dir: &Path,
    snap: &Snapshot,
    indexed: Indexed<'_>,
    walked: &crate::tree::walk::Walk,
    text: &mut TextUpdate,
) -> Diff {
    text.restat = crate::restat::Restat::load_or_warn(index_dir, snap.manifest.restat.as_deref());
    let files = walked.sources.iter().chain(&walked.too_big);
    diff(root, indexed, files, &text.restat)
}

/// The files of `files` that differ from those `known` (size, modification time unless the
/// restat part proves the bytes the same, then content), and those of `known` gone.
fn diff<'a>(
    root: &Path,
    mut known: Indexed<'_>,
    files: impl Iterator<Item = &'a SourceFile>,
    restat: &crate::restat::Restat,
) -> Diff {
    let beneath = crate::tree::beneath::Root::open(root).ok();
    let mut changed = Vec::new();
    let mut modified = 0;
    for f in files {
        // What is left in `known` at the end was deleted.
        match known.remove(f.path.as_str()) {
            None => changed.push(f.path.clone()),
            Some(was) => {
                // A file that could not be read (swapped for a link or a FIFO while it was read)
                // is read again, whatever its stamp says, once it can be opened.
                let retry = was.status == FileStatus::Unreadable
                    && beneath
                        .as_ref()
                        .is_some_and(|b| b.open_file(&f.path).is_ok());
                let stamped =
                    was.mtime_ns == f.mtime_ns || restat.same(&f.path, was.mtime_ns, f.mtime_ns);
                if was.size == f.size && stamped && !retry {
                    continue;
                }
                // Same size, new mtime: compare contents before re-indexing.
                let same = was.size == f.size
                    && was.status != FileStatus::TooBig
                    && beneath
                        .as_ref()
                        .and_then(|b| b.read(&f.path).ok())
                        .is_some_and(|b| was.holds(&b));
                if !same {
                    changed.push(f.path.clone());
                    modified += 1;
                }
            }
        }
    }
    let deleted = known.keys().map(|p| p.to_string()).collect();
    Diff {
        changed,
        modified,
        deleted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::walk::SourceFile;

    #[test]
    fn a_file_unreadable_at_the_last_refresh_is_read_again_with_the_same_stamp() {
        // It was swapped for a link while a refresh read it: the walk saw it, the read refused
        // it. Swapped back, it has its old size and mtime; it must not stay unreadable. One
        // that still cannot be opened is not rebuilt at every refresh.
        let root = std::env::temp_dir().join(format!("knav-unreadable-{}", std::process::id()));
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::write(root.join("d/a.c"), "int a;\n").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("d/c.c")).unwrap();
        let stat = |path: &'static str, status| FileStat {
            path,
            size: 10,
            mtime_ns: 5,
            hash: 0,
            lines: 1,
            status,
        };
        let mut known = Indexed::default();
        known.insert("d/a.c", stat("d/a.c", FileStatus::Unreadable));
        known.insert("d/b.c", stat("d/b.c", FileStatus::Indexed));
        known.insert("d/c.c", stat("d/c.c", FileStatus::Unreadable));
        let files: Vec<SourceFile> = ["d/a.c", "d/b.c", "d/c.c"]
            .iter()
            .map(|p| SourceFile {
                path: p.to_string(),
                size: 10,
                mtime_ns: 5,
            })
            .collect();
        let d = diff(
            &root,
            known,
            files.iter(),
            &crate::restat::Restat::default(),
        );
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(d.changed, ["d/a.c"]);
        assert!(d.deleted.is_empty());
    }
}
