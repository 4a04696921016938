//! The files of an index started from another tree's (by `seed`) proven to hold the bytes
//! its parts recorded under another modification time: a refresh takes a file whose stat is the
//! listed one as unchanged, instead of hashing it again.

use std::collections::HashMap;
use std::path::Path;

use super::error::IndexError;
use super::part::{Kind, Part, Stamp};

/// The restat file in its directory.
pub const FILE: &str = "restat.txt";
/// The largest restat file read (a line per file of the tree: a kernel's is a few MB).
const MAX_BYTES: u64 = 256 << 20;

/// Files whose bytes were proven equal to the base parts' records although their
/// modification times differ: path → (the time recorded, the time seen).
#[derive(Debug, Default)]
pub struct Restat {
    map: HashMap<String, (i64, i64)>,
}

impl Restat {
    /// The restat part `dir` (the manifest's `restat`) in `index_dir`; empty without one or
    /// when its file is not there. A file that cannot be read otherwise is an error naming it.
    pub fn load(index_dir: &Path, dir: Option<&str>) -> Result<Restat, IndexError> {
        let Some(dir) = dir else {
            return Ok(Restat::default());
        };
        let path = index_dir.join(dir).join(FILE);
        let text = match read_bounded(index_dir, dir) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Restat::default()),
            Err(e) => return Err(IndexError::io("", &path)(e)),
        };
        let map = text
            .lines()
            .filter_map(|l| {
                let mut f = l.rsplitn(3, '\t');
                let seen = f.next()?.parse().ok()?;
                let recorded = f.next()?.parse().ok()?;
                Some((f.next()?.to_string(), (recorded, seen)))
            })
            .collect();
        Ok(Restat { map })
    }

    /// [`Restat::load`], or empty with a warning on stderr when the file cannot be read: the
    /// files it lists are then hashed again, as without it (slower, never wrong).
    pub fn load_or_warn(index_dir: &Path, dir: Option<&str>) -> Restat {
        Restat::load(index_dir, dir).unwrap_or_else(|e| {
            eprintln!("knav: warning: {e}; the files it lists are hashed again");
            Restat::default()
        })
    }

    /// Whether the file at `path`, recorded with modification time `recorded` and seen now
    /// with `seen`, was proven to hold the recorded bytes at that time.
    pub fn same(&self, path: &str, recorded: i64, seen: i64) -> bool {
        self.map.get(path) == Some(&(recorded, seen))
    }
}

/// The text of part `dir`'s restat file in `index_dir`, read as every index file is (through
/// the index directory: never a link, never blocking on a FIFO), refused past [`MAX_BYTES`]
/// before anything is read.
fn read_bounded(index_dir: &Path, dir: &str) -> std::io::Result<String> {
    let bytes = crate::indexdir::IndexDir::open(index_dir)?
        .sub(dir)?
        .read(FILE, MAX_BYTES)?;
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

impl Part for Restat {
    const KIND: Kind = Kind::Restat;
    /// The part's directory, as the manifest names it.
    type Ref = String;
    type Open = Restat;

    fn open(index_dir: &Path, r: &String) -> Result<Restat, IndexError> {
        Restat::load(index_dir, Some(r))
    }

    /// No checksum is recorded: a damaged line only makes its file hashed again.
    fn stamp<'a>(_: &'a String, _: Option<&'a Restat>) -> Option<Stamp<'a>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("knav-restat-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("rs-1")).unwrap();
        dir
    }

    #[test]
    fn a_restat_file_is_read_and_a_missing_one_is_empty() {
        let dir = part("read");
        assert!(!Restat::load(&dir, Some("rs-1")).unwrap().same("a.c", 1, 2));
        std::fs::write(dir.join("rs-1").join(FILE), "a.c\t1\t2\nbad line\n").unwrap();
        let r = Restat::open(&dir, &"rs-1".to_string()).unwrap();
        assert!(r.same("a.c", 1, 2) && !r.same("a.c", 2, 1));
        assert!(!Restat::load(&dir, None).unwrap().same("a.c", 1, 2));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_restat_file_that_cannot_be_read_is_an_error_naming_it_not_an_empty_table() {
        let dir = part("unreadable");
        let file = dir.join("rs-1").join(FILE);
        // Not UTF-8.
        std::fs::write(&file, b"a.c\t1\t2\n\xff\n").unwrap();
        let e = Restat::load(&dir, Some("rs-1")).unwrap_err().to_string();
        assert!(e.contains(&file.display().to_string()), "{e}");
        // A directory where the file should be.
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
        let e = Restat::load(&dir, Some("rs-1")).unwrap_err().to_string();
        assert!(e.contains(&file.display().to_string()), "{e}");
        assert!(!Restat::load_or_warn(&dir, Some("rs-1")).same("a.c", 1, 2));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_restat_file_that_is_a_link_or_a_fifo_is_refused_without_following_or_blocking() {
        let dir = part("link");
        let file = dir.join("rs-1").join(FILE);
        let elsewhere = dir.join("elsewhere.txt");
        std::fs::write(&elsewhere, "a.c\t1\t2\n").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        let e = Restat::load(&dir, Some("rs-1")).unwrap_err().to_string();
        assert!(e.contains(&file.display().to_string()), "{e}");
        std::fs::remove_file(&file).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&file).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        // Opened non-blocking and refused as no regular file: no writer needed to return.
        let e = Restat::load(&dir, Some("rs-1")).unwrap_err().to_string();
        assert!(e.contains(&file.display().to_string()), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_restat_file_past_its_bound_is_an_error_naming_it_and_is_not_read() {
        let dir = part("huge");
        let file = dir.join("rs-1").join(FILE);
        // Sparse: no disk taken, and nothing of it is read.
        std::fs::File::create(&file)
            .unwrap()
            .set_len(MAX_BYTES + 1)
            .unwrap();
        let e = Restat::load(&dir, Some("rs-1")).unwrap_err().to_string();
        assert!(
            e.contains(&file.display().to_string()) && e.contains("over"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
