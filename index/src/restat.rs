//! The files of an index started from another tree's (by `seed`) proven to hold the bytes
//! its parts recorded under another modification time: a refresh takes a file whose stat is the
//! listed one as unchanged, instead of hashing it again.

use std::collections::HashMap;
use std::path::Path;

/// The restat file in its directory.
pub const FILE: &str = "restat.txt";

/// Files whose bytes were proven equal to the base parts' records although their
/// modification times differ: path → (the time recorded, the time seen).
#[derive(Debug, Default)]
pub struct Restat {
    map: HashMap<String, (i64, i64)>,
}

impl Restat {
    /// The restat part `dir` (the manifest's `restat`) in `index_dir`; empty without one (or
    /// when it cannot be read: files are then hashed, as without it).
    pub fn load(index_dir: &Path, dir: Option<&str>) -> Restat {
        let Some(dir) = dir else {
            return Restat::default();
        };
        let text = std::fs::read_to_string(index_dir.join(dir).join(FILE)).unwrap_or_default();
        let map = text
            .lines()
            .filter_map(|l| {
                let mut f = l.rsplitn(3, '\t');
                let seen = f.next()?.parse().ok()?;
                let recorded = f.next()?.parse().ok()?;
                Some((f.next()?.to_string(), (recorded, seen)))
            })
            .collect();
        Restat { map }
    }

    /// Whether the file at `path`, recorded with modification time `recorded` and seen now
    /// with `seen`, was proven to hold the recorded bytes at that time.
    pub fn same(&self, path: &str, recorded: i64, seen: i64) -> bool {
        self.map.get(path) == Some(&(recorded, seen))
    }
}
