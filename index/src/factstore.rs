//! The store of per-file facts by content: what a part learned from one file's bytes
//! ([`super::part::FromFacts`]), kept under a key made of those bytes' hash and length and of
//! everything else that changes the facts (the part, a salt for the analyzer's version and
//! options), so that another tree or version holding the same file costs no new analysis.
//!
//! One entry is one file of the store's directory, written whole to a temporary file and
//! renamed into place: a reader sees an entry or none, never half of one, and two builds that
//! write the same entry at once both leave a good one. Every entry carries its key and a
//! checksum of its facts: an entry that is truncated, flipped, of another format or of another
//! key is never trusted; [`FactStore::get`] removes it and answers `None`, so the caller
//! computes the facts again. A read marks the entry used (its mtime): [`FactStore::prune`]
//! removes the least recently used first.
//!
//! Not wired into the build yet (issue "Facts kept by file content").

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::codec::{checksum_bytes, hash64};
use super::part::Kind;

/// The kind tag of an entry; changed when the entry's layout changes.
const MAGIC: &[u8; 8] = b"KNAVFS01";
/// Bytes of an entry before its facts: magic, key (content hash, length, salt, kind), facts
/// length, facts checksum.
const HEAD: usize = 8 + 8 + 8 + 8 + 1 + 8 + 8;

/// What facts are kept under: a file's content and everything else that changes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// [`hash64`] of the file's bytes.
    pub content: u64,
    /// The file's length in bytes.
    pub len: u64,
    /// A hash of what else the facts depend on (the analyzer's version, its options).
    pub salt: u64,
    /// The part the facts are for.
    pub kind: Kind,
}

impl Key {
    /// The key of the facts of `bytes` for part `kind` under `salt`.
    pub fn of(bytes: &[u8], salt: u64, kind: Kind) -> Key {
        Key {
            content: hash64(bytes),
            len: bytes.len() as u64,
            salt,
            kind,
        }
    }

    /// The entry's name: two hex digits of directory, then the rest.
    fn path(&self) -> PathBuf {
        let h = self.content ^ self.salt.rotate_left(29) ^ self.len.rotate_left(47);
        PathBuf::from(format!("{:02x}", h >> 56)).join(format!(
            "{h:016x}-{:x}-{:x}-{}",
            self.len,
            self.salt,
            self.kind.prefix()
        ))
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.content.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.salt.to_le_bytes());
        out.push(self.kind as u8);
    }
}

/// What a store holds: [`FactStore::usage`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Entries.
    pub entries: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// A store of facts in one directory.
pub struct FactStore {
    dir: PathBuf,
}

impl FactStore {
    /// The store in `dir`, created (owner only) when missing.
    pub fn open(dir: &Path) -> io::Result<FactStore> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        Ok(FactStore {
            dir: dir.to_path_buf(),
        })
    }

    /// The user's store: `$KNAV_CACHE_DIR`, else `knav/facts` under the user's cache directory
    /// (`$XDG_CACHE_HOME`, else `~/.cache`); `None` without any of them.
    pub fn default_dir() -> Option<PathBuf> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dir) = var("KNAV_CACHE_DIR") {
            return Some(PathBuf::from(dir));
        }
        let base = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("knav").join("facts"))
    }

    /// The facts kept under `key`; `None` when there are none or the entry cannot be trusted
    /// (then it is removed).
    pub fn get(&self, key: &Key) -> Option<Vec<u8>> {
        let path = self.dir.join(key.path());
        let mut file = File::open(&path).ok()?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).ok()?;
        match decode(&bytes, key) {
            Some(facts) => {
                // Used now: pruned last. A store that cannot be written still answers.
                let _ = file.set_modified(std::time::SystemTime::now());
                Some(facts.to_vec())
            }
            None => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Keeps `facts` under `key`, replacing what was there.
    pub fn put(&self, key: &Key, facts: &[u8]) -> io::Result<()> {
        let path = self.dir.join(key.path());
        let parent = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent)?;
        let mut entry = Vec::with_capacity(HEAD + facts.len());
        entry.extend_from_slice(MAGIC);
        key.encode(&mut entry);
        entry.extend_from_slice(&(facts.len() as u64).to_le_bytes());
        entry.extend_from_slice(&checksum_bytes(facts).to_le_bytes());
        entry.extend_from_slice(facts);
        let tmp = temporary(parent);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&entry))
            .and_then(|()| std::fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// The entries and bytes the store holds (temporary files of builds left out).
    pub fn usage(&self) -> Usage {
        let mut u = Usage::default();
        for (_, len, _) in self.entries() {
            u.entries += 1;
            u.bytes += len;
        }
        u
    }

    /// Removes the least recently used entries until the store holds at most `max_bytes`;
    /// returns what it removed.
    pub fn prune(&self, max_bytes: u64) -> Usage {
        let mut entries = self.entries();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        entries.sort_by_key(|e| e.2);
        let mut removed = Usage::default();
        for (path, len, _) in entries {
            if total <= max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
                removed.entries += 1;
                removed.bytes += len;
            }
        }
        removed
    }

    /// Every entry: its path, length and last use.
    fn entries(&self) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
        let mut out = Vec::new();
        let Ok(dirs) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        for d in dirs.flatten() {
            let Ok(files) = std::fs::read_dir(d.path()) else {
                continue;
            };
            for f in files.flatten() {
                let name = f.file_name();
                if name.to_string_lossy().starts_with(".tmp-") {
                    continue;
                }
                if let Some(m) = f.metadata().ok().filter(|m| m.is_file()) {
                    let used = m.modified().unwrap_or(std::time::UNIX_EPOCH);
                    out.push((f.path(), m.len(), used));
                }
            }
        }
        out
    }
}

/// A temporary file's name in `dir`, unique to this process and call.
fn temporary(dir: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".tmp-{}-{n}", std::process::id()))
}

/// The facts of entry `bytes` when it is whole, of this format and of `key`.
fn decode<'a>(bytes: &'a [u8], key: &Key) -> Option<&'a [u8]> {
    let head = bytes.get(..HEAD)?;
    let mut want = MAGIC.to_vec();
    key.encode(&mut want);
    if head[..want.len()] != want[..] {
        return None;
    }
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&head[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let (len, sum) = (word(want.len()), word(want.len() + 8));
    let facts = &bytes[HEAD..];
    (facts.len() as u64 == len && checksum_bytes(facts) == sum).then_some(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str) -> (FactStore, PathBuf) {
        let dir = std::env::temp_dir().join(format!("knav-facts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (FactStore::open(&dir).unwrap(), dir)
    }

    #[test]
    fn facts_read_back_under_their_key_only() {
        let (s, dir) = store("roundtrip");
        let k = Key::of(b"int a;\n", 7, Kind::Text);
        assert_eq!(s.get(&k), None);
        s.put(&k, b"facts").unwrap();
        assert_eq!(s.get(&k).as_deref(), Some(&b"facts"[..]));
        // Another salt, another part: other facts.
        assert_eq!(s.get(&Key { salt: 8, ..k }), None);
        assert_eq!(
            s.get(&Key {
                kind: Kind::Docs,
                ..k
            }),
            None
        );
        assert_eq!(s.usage().entries, 1);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_truncated_or_flipped_entry_is_not_trusted_and_is_removed() {
        let (s, dir) = store("damage");
        let k = Key::of(b"x", 1, Kind::Docs);
        let path = dir.join(k.path());
        for damage in [
            |b: &mut Vec<u8>| b.truncate(b.len() - 1),
            |b: &mut Vec<u8>| *b.last_mut().unwrap() ^= 1,
            |b: &mut Vec<u8>| b[3] ^= 0x20,
            |b: &mut Vec<u8>| b.truncate(10),
        ] {
            s.put(&k, b"some facts").unwrap();
            let mut bytes = std::fs::read(&path).unwrap();
            damage(&mut bytes);
            std::fs::write(&path, bytes).unwrap();
            assert_eq!(s.get(&k), None);
            assert!(!path.exists(), "a damaged entry stays");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_entry_of_another_key_at_the_same_name_is_not_trusted() {
        let (s, dir) = store("foreign");
        let (a, b) = (Key::of(b"a", 1, Kind::Text), Key::of(b"b", 1, Kind::Text));
        s.put(&a, b"facts of a").unwrap();
        std::fs::create_dir_all(dir.join(b.path()).parent().unwrap()).unwrap();
        std::fs::copy(dir.join(a.path()), dir.join(b.path())).unwrap();
        assert_eq!(s.get(&b), None);
        assert_eq!(s.get(&a).as_deref(), Some(&b"facts of a"[..]));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn builds_writing_the_same_entries_at_once_leave_good_ones() {
        let (s, dir) = store("concurrent");
        let keys: Vec<Key> = (0..50u8).map(|i| Key::of(&[i], 0, Kind::Text)).collect();
        std::thread::scope(|t| {
            for _ in 0..4 {
                t.spawn(|| {
                    for k in &keys {
                        s.put(k, &k.content.to_le_bytes()).unwrap();
                    }
                });
            }
        });
        for k in &keys {
            assert_eq!(s.get(k), Some(k.content.to_le_bytes().to_vec()));
        }
        assert_eq!(s.usage().entries, 50, "a temporary file was left");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_unwritable_store_says_so_and_still_answers_none() {
        let (s, dir) = store("unwritable");
        let gone = FactStore {
            dir: dir.join("file-not-dir"),
        };
        std::fs::write(dir.join("file-not-dir"), b"").unwrap();
        let k = Key::of(b"y", 0, Kind::Text);
        assert!(gone.put(&k, b"facts").is_err());
        assert_eq!(gone.get(&k), None);
        drop(s);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn prune_removes_the_least_recently_used_first() {
        let (s, dir) = store("prune");
        let keys: Vec<Key> = (0..4u8).map(|i| Key::of(&[i], 0, Kind::Text)).collect();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for (i, k) in keys.iter().enumerate() {
            s.put(k, &[0u8; 100]).unwrap();
            let f = File::options()
                .write(true)
                .open(dir.join(k.path()))
                .unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i as u64))
                .unwrap();
        }
        // The oldest is used now: the next oldest goes first.
        assert!(s.get(&keys[0]).is_some());
        let one = s.usage().bytes / 4;
        let removed = s.prune(one * 2);
        assert_eq!(removed.entries, 2);
        assert!(s.get(&keys[0]).is_some());
        assert!(s.get(&keys[1]).is_none() && s.get(&keys[2]).is_none());
        assert!(s.get(&keys[3]).is_some());
        let _ = std::fs::remove_dir_all(dir);
    }
}
