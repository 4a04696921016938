//! Whether an answer cites files that changed since they were indexed: each file a record
//! names (its `path`) is stat'ed and compared with the size and modification time the index
//! recorded for it (microseconds a file). The CLI refreshes the index and answers again when
//! one changed, or, with `--no-refresh`, says which.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;

use crate::envelope::Envelope;
use crate::index::store::Snapshot;

/// Files an answer shows at most before "and N more".
const NAMED: usize = 5;

/// The root-relative paths `env`'s results name (every `path` field), each once.
fn cited(env: &Envelope) -> BTreeSet<String> {
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

/// The files `env` cites that the index holds and that changed on disk since (other size or
/// modification time, or gone), in path order.
pub fn changed_cited(snap: &Snapshot, env: &Envelope) -> Vec<String> {
    let mut restat = None;
    cited(env)
        .into_iter()
        .filter(|path| {
            let Some((s, f)) = snap.find_file(path) else {
                return false;
            };
            let was = snap.segments[s].file_stat(f);
            let on_disk = snap.root.join(crate::index::pathname::to_path(path));
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
                crate::index::restat::Restat::load(&snap.index_dir, snap.manifest.restat.as_deref())
            });
            !restat.same(path, was.mtime_ns, mtime)
        })
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
