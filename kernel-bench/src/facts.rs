//! The fact store's scenarios: the tree indexed with an empty store (which fills it), again
//! from the full store, a copy of it with 200 `.c`/`.h` files changed, and another version of
//! the kernel (Debian's linux-source-6.1 beside the tree) with an empty store and with the
//! store the first tree filled.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::proc::run;
use crate::suite::{c_files, dir_bytes, Facts, Setup};

/// Files changed in the copy of the tree.
pub const CHANGED: usize = 200;

impl Setup {
    /// `knav index` of `tree` into `index_dir` with the fact store `store`; `full`: a build of
    /// every file (facts from the store), not one started from another tree's index.
    fn index_with_store(
        &self,
        tree: &Path,
        index_dir: &Path,
        store: &Path,
        full: bool,
    ) -> Result<Duration, String> {
        let _ = std::fs::remove_dir_all(index_dir);
        let mut cmd = Command::new(&self.knav);
        cmd.env_remove("KNAV_INDEX_DIR")
            .env("KNAV_CACHE_DIR", store)
            .arg("index");
        if full {
            cmd.arg("--full");
        }
        let r = run(cmd
            .arg("--root")
            .arg(tree)
            .arg("--index-dir")
            .arg(index_dir))?;
        if !r.ok {
            return Err(format!("knav index {}: {}", tree.display(), r.stderr_tail));
        }
        Ok(r.wall)
    }

    /// The fact store's scenarios; `other`: another version of the tree.
    pub fn facts(&self, other: Option<&Path>, log: &mut dyn FnMut(&str)) -> Facts {
        let mut out = Facts::default();
        let store = self.work.join("facts-store");
        let _ = std::fs::remove_dir_all(&store);
        let first = self.work.join("facts-index-1");
        log("fact store: the tree with an empty store");
        match self.index_with_store(&self.tree, &first, &store, true) {
            Ok(d) => out.fill = Some(d),
            Err(e) => {
                out.notes.push(e);
                return out;
            }
        }
        out.tree_bytes = dir_bytes(&first);
        log("fact store: the tree again, from the full store");
        let second = self.work.join("facts-index-2");
        match self.index_with_store(&self.tree, &second, &store, true) {
            Ok(d) => {
                out.from_store = Some(d);
                out.identical = Some(same_segment(&first, &second));
            }
            Err(e) => out.notes.push(e),
        }
        let _ = std::fs::remove_dir_all(&second);
        log(&format!(
            "fact store: a copy of the tree with {CHANGED} files changed"
        ));
        let copy = self.work.join("facts-copy");
        match changed_copy(&self.tree, &copy) {
            Ok(()) => {
                match self.index_with_store(
                    &copy,
                    &self.work.join("facts-index-copy"),
                    &store,
                    false,
                ) {
                    Ok(d) => out.copy = Some(d),
                    Err(e) => out.notes.push(e),
                }
            }
            Err(e) => out.notes.push(format!("copy of the tree: {e}")),
        }
        let _ = std::fs::remove_dir_all(&copy);
        let _ = std::fs::remove_dir_all(self.work.join("facts-index-copy"));
        if let Some(other) = other {
            let name = other
                .file_name()
                .map_or("other".into(), |n| n.to_string_lossy().into_owned());
            log(&format!("fact store: {name} with an empty store"));
            let empty = self.work.join("facts-store-empty");
            let _ = std::fs::remove_dir_all(&empty);
            let index = self.work.join("facts-index-other");
            let alone = self.index_with_store(other, &index, &empty, true);
            let _ = std::fs::remove_dir_all(&empty);
            log(&format!("fact store: {name} with the first tree's store"));
            let shared = self.index_with_store(other, &index, &store, true);
            out.other_bytes = dir_bytes(&index);
            let _ = std::fs::remove_dir_all(&index);
            let (alone, shared) = (
                alone.map_err(|e| out.notes.push(e)).ok(),
                shared.map_err(|e| out.notes.push(e)).ok(),
            );
            out.other = Some((name, alone, shared));
        } else {
            out.notes
                .push("no other version beside the tree (linux-source-6.1): not measured".into());
        }
        out.store_bytes = dir_bytes(&store);
        let _ = std::fs::remove_dir_all(&first);
        let _ = std::fs::remove_dir_all(&store);
        out
    }
}

/// The directory of the (first) segment `CURRENT` in `index` names.
fn segment_dir(index: &Path) -> Option<PathBuf> {
    let current: serde_json::Value =
        serde_json::from_slice(&std::fs::read(index.join("CURRENT")).ok()?).ok()?;
    Some(index.join(current["segments"][0]["dir"].as_str()?))
}

/// Whether the segments of two indexes of one tree hold the same bytes (their `meta.json`
/// without the build's timings).
fn same_segment(a: &Path, b: &Path) -> bool {
    let (Some(a), Some(b)) = (segment_dir(a), segment_dir(b)) else {
        return false;
    };
    let files = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let mut bytes = std::fs::read(e.path()).unwrap_or_default();
                if name == "meta.json" {
                    if let Ok(mut m) = serde_json::from_slice::<serde_json::Value>(&bytes) {
                        if let Some(o) = m.as_object_mut() {
                            o.remove("phase_ms");
                        }
                        bytes = serde_json::to_vec(&m).unwrap_or_default();
                    }
                }
                (name, bytes)
            })
            .collect();
        v.sort();
        v
    };
    files(&a) == files(&b)
}

/// A copy of `tree` at `copy` (hard links, else a copy) in which [`CHANGED`] `.c`/`.h` files,
/// spread over the tree, end with one more line.
fn changed_copy(tree: &Path, copy: &Path) -> Result<(), String> {
    let mut copied = false;
    for how in ["-al", "-a"] {
        let _ = std::fs::remove_dir_all(copy);
        let status = Command::new("cp").arg(how).arg(tree).arg(copy).status();
        if status.is_ok_and(|s| s.success()) {
            copied = true;
            break;
        }
    }
    if !copied {
        return Err(format!(
            "cp -a {} {} failed",
            tree.display(),
            copy.display()
        ));
    }
    let files = c_files(copy);
    let step = (files.len() / CHANGED).max(1);
    for (path, _) in files.iter().step_by(step).take(CHANGED) {
        let mut bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        bytes.extend_from_slice(b"\n/* changed by kernel-bench */\n");
        // A new file, not a write through the link into the tree.
        std::fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
        std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
