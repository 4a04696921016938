//! Whether the index still matches the tree. Before a query answers, the whole tree is
//! checked ([`fresh`]): the watcher daemon ([`crate::watchd`]) says "clean" in microseconds,
//! else the tree is scanned and refreshed as `knav index` does (stat of every file, what changed
//! re-indexed). After it, each file the answer cites (its `path`s) is stat'ed against the size
//! and modification time the index recorded (microseconds a file): with `--no-refresh` (no
//! whole-tree check) the answer then names those that changed.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;

use std::path::Path;

use crate::envelope::Envelope;
use crate::index::store::Snapshot;
use crate::index::BuildOptions;
use crate::watchd::{Client, Said};

/// Files an answer shows at most before "and N more".
const NAMED: usize = 5;

/// The root-relative paths `env`'s results name (every `path` field), each once, in order.
/// The lists of the answers that run to thousands of rows (references, calls, hits) are read
/// directly; the others through their JSON form ([`cited_in_json`]).
fn cited(env: &Envelope) -> Vec<&str> {
    use crate::envelope::Results as R;
    let mut out: Vec<&str> = match &env.results {
        Some(R::Records(v)) => v.iter().map(|r| r.path.as_str()).collect(),
        Some(R::Hits(v)) => v.iter().map(|r| r.path.as_str()).collect(),
        Some(R::Groups(v)) => v.iter().map(|r| r.path.as_str()).collect(),
        Some(R::Calls(v)) => v.iter().map(|r| r.path.as_str()).collect(),
        Some(R::Files(v)) => v.iter().map(|r| r.path.as_str()).collect(),
        _ => return Vec::new(),
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// The root-relative paths `env`'s results name (every `path` field), each once, found in
/// their JSON form: what [`cited`] leaves to it.
fn cited_in_json(env: &Envelope) -> BTreeSet<String> {
    fn walk(v: &serde_json::Value, out: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    match v {
                        serde_json::Value::String(s) if k == "path" => {
                            out.insert(s.clone());
                        }
                        _ => walk(v, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    if let Some(r) = &env.results {
        if let Ok(v) = serde_json::to_value(r) {
            walk(&v, &mut out);
        }
    }
    out
}

/// The files `env` cites that the index holds and that changed on disk since (other size, or
/// other bytes under another modification time, or gone), in path order.
pub fn changed_cited(snap: &Snapshot, env: &Envelope) -> Vec<String> {
    let mut restat = None;
    let mut beneath = None;
    let direct = cited(env);
    let in_json = match direct.is_empty() {
        true => cited_in_json(env),
        false => BTreeSet::new(),
    };
    direct
        .into_iter()
        .chain(in_json.iter().map(String::as_str))
        .filter(|path| {
            let Some((s, f)) = snap.find_file(path) else {
                return false;
            };
            let was = snap.segments[s].file_stat(f);
            let on_disk = snap.root.join(crate::pathname::to_path(path));
            let Ok(now) = std::fs::symlink_metadata(on_disk) else {
                return true;
            };
            let mtime = now.mtime() * 1_000_000_000 + now.mtime_nsec();
            if now.size() != was.size {
                return true;
            }
            if mtime == was.mtime_ns {
                return false;
            }
            // A file of a seeded index proven equal under another time is unchanged.
            let restat = restat.get_or_insert_with(|| {
                crate::index::Restat::load_or_warn(&snap.index_dir, snap.manifest.restat.as_deref())
            });
            if restat.same(path, was.mtime_ns, mtime) {
                return false;
            }
            // Touched, not edited (the refresh keeps it for the same reason): same bytes.
            if was.status == crate::index::format::FileStatus::TooBig {
                return true;
            }
            let beneath =
                beneath.get_or_insert_with(|| crate::beneath::Root::open(&snap.root).ok());
            !beneath
                .as_ref()
                .and_then(|b| b.read(path).ok())
                .is_some_and(|b| was.holds(&b))
        })
        .map(str::to_string)
        .collect()
}

/// The warning for an answer given from an index older than `changed` files.
pub fn warning(changed: &[String]) -> String {
    let more = match changed.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "{} changed since they were indexed: the lines shown may be stale (without --no-refresh \
         knav refreshes first; or run `knav index`): {}{more}",
        match changed.len() {
            1 => "1 file cited here".to_string(),
            n => format!("{n} files cited here"),
        },
        changed
            .iter()
            .take(NAMED)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `snap`, the index of `root` in `index_dir`, when the tree still matches it; else the index
/// refreshed (what changed re-indexed) and opened again. The watcher daemon answers when it
/// can; without it (not started yet, turned off with `KNAV_WATCH=0`, no inotify) the tree is
/// scanned. While another process builds the index, the answer comes from the index as it is,
/// with a warning (waiting could take a whole build).
pub fn fresh(
    root: &Path,
    index_dir: &Path,
    snap: Snapshot,
    warnings: &mut Vec<String>,
) -> Result<Snapshot, String> {
    let generation = snap.manifest.generation;
    let daemon = Client::of(root, index_dir);
    let armed = match daemon.as_ref().map(|d| (d, d.check(generation))) {
        Some((_, Said::Clean)) => return Ok(snap),
        Some((d, Said::Dirty)) => d.arm(),
        Some((d, Said::Absent)) => {
            d.spawn();
            None
        }
        _ => None,
    };
    let (token, hint) = match armed {
        Some((token, hint)) => (Some(token), hint),
        None => (None, None),
    };
    if crate::status::build_holder(index_dir).is_some() {
        warnings.push(
            "an index build is running; answered from the index before it (files changed \
             since are not seen yet)"
                .into(),
        );
        return Ok(snap);
    }
    // What the watcher saw change, when it can say exactly: only that is stat'ed. A tree
    // that cannot be refreshed (a bad .knav.toml, an index directory this user may not
    // write) is answered from its index as it is, saying why.
    let refreshed = BuildOptions::for_root(root).and_then(|opts| {
        crate::index::update_hinted(
            root,
            index_dir,
            false,
            &opts,
            &mut crate::progress::Progress::stderr(),
            hint.as_ref(),
        )
        .map_err(|e| e.to_string())
    });
    let report = match refreshed {
        Ok(r) => r,
        Err(e) => {
            warnings.push(format!(
                "the index could not be refreshed, so files changed since it was built may \
                 be missed: {e}"
            ));
            return Ok(snap);
        }
    };
    let snap = match report.mode {
        crate::index::UpdateMode::Unchanged => snap,
        _ => {
            // The process ends soon: its exit unmaps the old index in one sweep.
            std::mem::forget(snap);
            Snapshot::open(root, index_dir)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("no index in {} after refreshing it", index_dir.display()))?
        }
    };
    if let (Some(d), Some(token)) = (&daemon, token) {
        d.mark(snap.manifest.generation, token);
    }
    Ok(snap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{Record, Results};

    /// The direct reading of a references answer names what its JSON form names.
    #[test]
    fn cited_paths_of_records_are_those_of_their_json() {
        let mut env = Envelope::new("find_references", "/t");
        let record = |path: &str, line| Record {
            path: path.into(),
            line,
            ..Default::default()
        };
        env.results = Some(Results::Records(vec![
            record("mm/b.c", 3),
            record("fs/a.c", 9),
            record("mm/b.c", 1),
        ]));
        assert_eq!(cited(&env), ["fs/a.c", "mm/b.c"]);
        let json: Vec<String> = cited_in_json(&env).into_iter().collect();
        assert_eq!(cited(&env), json);
    }
}
