//! The store of per-file facts by content: what a part learned from one file's bytes, kept
//! under a key made of those bytes' digest and length and of everything else that changes the
//! facts (the part, a salt for the analyzer's version and options), so that another tree or
//! version holding the same file costs no new analysis.
//!
//! The store is shared by every tree a user indexes, trusted and not: its keys are
//! cryptographic ([`crate::codec::digest`], BLAKE3), so a file made to look like another
//! (same path, same length, same [`hash64`]) never gets the other's facts. Its files are
//! opened without following links and without blocking, and must be regular files: a FIFO or
//! device named like a pack is skipped with a note ([`FactStore::skipped`]).
//!
//! The store is a directory of packs. A build that computes facts appends them to a pack of
//! its own, written under a temporary name and renamed into place whole when the build ends
//! ([`FactStore::finish`]): another build sees a pack or none, never half of one, and two
//! builds writing at once each publish their own (one written as one sequential file: a file
//! per entry cost 33 µs an entry, a second of a kernel build's CPU). A pack ends with its
//! index (key → offset) and a footer that checksums the index; every entry carries its key and
//! a checksum of its facts. A pack whose footer or index is wrong is removed (a pack of another
//! knav's format is left to it, and pruned first when the store is over its size); an entry that is
//! truncated, flipped or of another key is never trusted: [`FactStore::get`] skips it and the
//! caller computes the facts again. A pack that served a build is marked used (its mtime):
//! [`FactStore::prune`] removes the least recently used packs first.
//!
//! What a build did with the store ([`Tally`]) is kept in `last-build.json` for `knav cache`.
//!
//! A segment build also leaves its *proof* (`proofs/<segment directory>`): the path, length
//! and [`Digest`] of every file it read; so do the text, build-file and documentation part
//! builds (`proofs/<part directory>`, written by a [`Prover`]). A copy of the tree started from
//! those parts ([`crate::seed`]) holds a file's facts only when its bytes have the digest the
//! part's proof lists: a part's own record of a file is a [`hash64`], which another tree can
//! forge.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::codec::{checksum_bytes, digest, hash64, Digest};
use super::format::{header_of, read_header, HEADER_LEN};
use super::part::Kind;

/// The kind of a pack in its header ([`header_of`]).
const PACK_KIND: &[u8; 4] = b"PACK";
/// The format of a pack, in its header; changed when the layout changes (3: keys by
/// [`Digest`]; 4: the index's header in place of the magic `KNAVPK03`). A pack of another
/// format (or with an old magic `KNAVPK..`) is never read, and pruned first.
const PACK_VERSION: u32 = 4;
/// The first bytes of a pack.
const MAGIC: [u8; HEADER_LEN] = header_of(PACK_KIND, PACK_VERSION);
/// The last bytes of a whole pack.
const END: &[u8; 8] = b"KNAVPKND";
/// Bytes of a key as written.
const KEY_LEN: usize = 32 + 8 + 32 + 1;
/// Bytes of an entry before its facts: key, stored length, checksum of the stored bytes. The
/// facts are stored LZ4-compressed, their length first.
const HEAD: usize = KEY_LEN + 8 + 8;
/// Bytes of a pack's footer: index offset, entries, index checksum, [`END`].
const FOOTER: usize = 8 + 8 + 8 + 8;
/// Where packs are, inside the store's directory.
const PACKS: &str = "packs";
/// The ending of a pack's name. Packs with the index's header are `.kpack`: a knav of before
/// the header (which named its packs `.pack`) skips a name it does not know, where it would
/// have removed a `.pack` whose magic it did not know. Its `.pack` files are still listed here:
/// another knav's format, kept, never read, pruned first.
const PACK_EXT: &str = ".kpack";
/// The ending of the names of packs written before [`PACK_EXT`].
const OLD_PACK_EXT: &str = ".pack";
/// What the last build did with the store.
const LAST_BUILD: &str = "last-build.json";
/// Where parts' proofs are, inside the store's directory.
const PROOFS: &str = "proofs";
/// The kind of a proof in its header ([`header_of`]).
const PROOF_KIND: &[u8; 4] = b"PROF";
/// The format of a proof (1: the magic `KNAVPR01`; 2: the index's header).
const PROOF_VERSION: u32 = 2;
/// The first bytes of a proof; its last 32 are the [`Digest`] of all before them.
const PROOF_MAGIC: [u8; HEADER_LEN] = header_of(PROOF_KIND, PROOF_VERSION);
/// The largest proof read (a kernel segment's is ~5 MB, its text part's ~7 MB).
const MAX_PROOF_BYTES: u64 = 256 << 20;
/// Proofs are trimmed to this many bytes, the oldest removed first; a seed from a segment
/// whose proof is gone builds the tree whole, from another part whose proof is gone that part.
const KEPT_PROOF_BYTES: u64 = 256 << 20;

/// The files one segment build read, with their digests.
#[derive(Default)]
struct Proof {
    /// The segment's directory name (`seg-<time>-<pid>`, unique).
    segment: Option<String>,
    files: Vec<(String, u64, Digest)>,
}

/// What a part's proof says of each file: its length and digest.
pub type Proven = HashMap<String, (u64, Digest)>;

/// What facts are kept under: a file's content and everything else that changes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// [`digest`] of the file's bytes.
    pub content: Digest,
    /// The file's length in bytes.
    pub len: u64,
    /// [`digest`] of what else the facts depend on (the analyzer's version, its options, the
    /// file's path).
    pub salt: Digest,
    /// The part the facts are for.
    pub kind: Kind,
}

impl Key {
    /// The key of the facts of `bytes` for part `kind` under `salt` (everything else the facts
    /// depend on, digested).
    pub fn of(bytes: &[u8], salt: &[u8], kind: Kind) -> Key {
        Key {
            content: digest(bytes),
            len: bytes.len() as u64,
            salt: digest(salt),
            kind,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.content);
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.salt);
        out.push(self.kind as u8);
    }

    fn decode(b: &[u8]) -> Option<Key> {
        let kind = *Kind::BUILT.get(*b.get(KEY_LEN - 1)? as usize)?;
        Some(Key {
            content: b.get(..32)?.try_into().ok()?,
            len: word(b, 32)?,
            salt: b.get(40..72)?.try_into().ok()?,
            kind,
        })
    }
}

/// `path` opened for reading when it is a regular file: without following a link, without
/// waiting on a FIFO or a device (`O_NONBLOCK`), checked on the open descriptor.
pub fn open_regular(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            NOT_REGULAR.to_string(),
        ));
    }
    Ok(file)
}

/// Why [`open_regular`] refused a file that is there.
const NOT_REGULAR: &str = "not a regular file (a FIFO, device, directory or link)";

/// The note of a store file skipped because it is not a regular file.
fn skipped_note(path: &Path) -> String {
    format!(
        "{}: {NOT_REGULAR}, skipped; remove it from the fact store",
        path.display()
    )
}

/// Whether `e` is [`open_regular`]'s refusal of a file that is not regular (or a link:
/// `ELOOP`).
fn is_not_regular(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::InvalidInput || e.raw_os_error() == Some(libc::ELOOP)
}

/// The little-endian word at `at` of `b`.
fn word(b: &[u8], at: usize) -> Option<u64> {
    let mut w = [0u8; 8];
    w.copy_from_slice(b.get(at..at + 8)?);
    Some(u64::from_le_bytes(w))
}

/// What a store holds: [`FactStore::usage`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Packs.
    pub packs: u64,
    /// Entries.
    pub entries: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// What one build did with the store.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Files whose facts the store gave.
    pub hits: u64,
    /// Files analyzed: the store had no facts for them (or none that could be trusted).
    pub misses: u64,
    /// Entries found damaged (and not trusted).
    pub damaged: u64,
    /// Files whose kept facts were made under something else the caller checks (for a
    /// segment, what the tree's headers define of the macros the file uses).
    #[serde(default)]
    pub rejected: u64,
    /// Entries written.
    pub written: u64,
    /// Why facts could not be kept, when they could not.
    pub not_kept: Option<String>,
    /// Files of the store skipped because they are not regular files ([`open_regular`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

impl Tally {
    /// Hits among lookups, in percent.
    pub fn hit_rate(&self) -> f64 {
        let asked = self.hits + self.misses;
        if asked == 0 {
            0.0
        } else {
            100.0 * self.hits as f64 / asked as f64
        }
    }
}

/// One pack opened for reading.
struct Pack {
    path: PathBuf,
    file: File,
    /// Where its index starts: no entry reaches past it.
    end: u64,
    entries: u64,
    bytes: u64,
    /// It gave facts to this build.
    used: AtomicBool,
}

/// A pack being written.
struct Writer {
    tmp: PathBuf,
    out: BufWriter<File>,
    at: u64,
    index: Vec<u8>,
    entries: u64,
}

/// A store of facts in one directory, opened for one build.
pub struct FactStore {
    dir: PathBuf,
    packs: Vec<Pack>,
    /// Per key, where its entries are (pack, offset), newest pack first.
    index: HashMap<Key, Vec<(u32, u64)>>,
    writer: Mutex<Option<Writer>>,
    /// Packs of another format (another knav's), with their bytes: pruned first.
    foreign: Vec<(PathBuf, u64)>,
    /// The first error that stopped this build's writes.
    failed: Mutex<Option<String>>,
    /// Files of the store that are not regular files, skipped when it was opened.
    skipped: Vec<String>,
    /// The proof of the segment this build makes.
    proof: Mutex<Proof>,
    hits: AtomicU64,
    misses: AtomicU64,
    damaged: AtomicU64,
    rejected: AtomicU64,
    written: AtomicU64,
}

impl std::fmt::Debug for FactStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FactStore").field("dir", &self.dir).finish()
    }
}

impl FactStore {
    /// The store in `dir`, created (owner only) when missing, with every whole pack in it.
    /// A pack that is not whole is removed, as are temporary packs of builds no longer running.
    pub fn open(dir: &Path) -> io::Result<FactStore> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir.join(PACKS))?;
        let mut found = Vec::new();
        let mut skipped = Vec::new();
        for e in std::fs::read_dir(dir.join(PACKS))?.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let path = e.path();
            if let Some(rest) = name.strip_prefix(".tmp-") {
                if !writer_alive(rest) {
                    let _ = std::fs::remove_file(&path);
                }
                continue;
            }
            if !name.ends_with(PACK_EXT) && !name.ends_with(OLD_PACK_EXT) {
                continue;
            }
            // Not followed, not opened: a link, FIFO or device named like a pack.
            let Ok(meta) = e.metadata() else {
                continue;
            };
            if !meta.file_type().is_file() {
                skipped.push(skipped_note(&path));
                continue;
            }
            let used = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
            found.push((used, path));
        }
        // Newest first: its entries are tried first.
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let mut store = FactStore {
            dir: dir.to_path_buf(),
            packs: Vec::new(),
            index: HashMap::new(),
            writer: Mutex::new(None),
            foreign: Vec::new(),
            failed: Mutex::new(None),
            skipped,
            proof: Mutex::new(Proof::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            damaged: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            written: AtomicU64::new(0),
        };
        for (_, path) in found {
            match read_pack(&path) {
                Ok(Some((pack, keys))) => {
                    let p = store.packs.len() as u32;
                    for (key, at) in keys {
                        store.index.entry(key).or_default().push((p, at));
                    }
                    store.packs.push(pack);
                }
                // Another knav's format: left to it, and to the size cap.
                Ok(None) if foreign(&path) => {
                    if let Ok(m) = std::fs::symlink_metadata(&path) {
                        store.foreign.push((path, m.len()));
                    }
                }
                // Not whole: never trusted.
                Ok(None) => {
                    let _ = std::fs::remove_file(&path);
                }
                // Swapped for a FIFO, device or link since it was listed: never opened.
                Err(e) if is_not_regular(&e) => store.skipped.push(skipped_note(&path)),
                // Removed by a prune since it was listed, or unreadable: left alone.
                Err(_) => {}
            }
        }
        Ok(store)
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

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Makes this build's proof the proof of the segment built in `segment_dir`.
    pub fn proving(&self, segment_dir: &Path) -> &FactStore {
        // A segment written through its descriptor (`/proc/self/fd/N`) is named by its own path.
        let name = crate::indexdir::shown(segment_dir)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        self.proof.lock().unwrap_or_else(|e| e.into_inner()).segment = name;
        self
    }

    /// Records that the segment this build makes read `len` bytes of digest `content` at `path`.
    pub fn saw(&self, path: &str, len: u64, content: Digest) {
        let mut p = self.proof.lock().unwrap_or_else(|e| e.into_inner());
        p.files.push((path.to_string(), len, content));
    }

    /// What the proof of the part in directory `part` (a segment's, text, build-file or
    /// documentation part's directory name) in the store at `dir` says; `None` when there is
    /// none, or it is damaged, too big or not a regular file.
    pub fn proof_of(dir: &Path, part: &str) -> Option<Proven> {
        use std::io::Read;
        if !is_proof_name(part) {
            return None;
        }
        let mut bytes = Vec::new();
        open_regular(&dir.join(PROOFS).join(part))
            .ok()?
            .take(MAX_PROOF_BYTES)
            .read_to_end(&mut bytes)
            .ok()?;
        let body_len = bytes.len().checked_sub(32)?;
        let (body, sum) = bytes.split_at(body_len);
        if digest(body) != sum || !body.starts_with(&PROOF_MAGIC) {
            return None;
        }
        let mut r = super::codec::Reader::new(&body[PROOF_MAGIC.len()..]);
        let mut out = Proven::new();
        while !r.at_end() {
            let path = String::from_utf8(r.str().to_vec()).ok()?;
            let len = r.varint();
            let content: Digest = r.bytes(32).try_into().ok()?;
            if r.overrun {
                return None;
            }
            out.insert(path, (len, content));
        }
        Some(out)
    }

    /// Writes this build's proof, when it made a segment, and trims the proofs kept.
    fn write_proof(&self) -> io::Result<()> {
        let proof = std::mem::take(&mut *self.proof.lock().unwrap_or_else(|e| e.into_inner()));
        let Some(segment) = proof.segment else {
            return Ok(());
        };
        write_proof(&self.dir, &segment, proof.files)
    }

    /// Files of the store skipped because they are not regular files, each with what to do.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// The first facts kept under `key` that `accept` takes, newest first; an entry that
    /// cannot be trusted is skipped and counted. Counts a hit or a miss.
    pub fn find<T>(&self, key: &Key, mut accept: impl FnMut(&[u8]) -> Option<T>) -> Option<T> {
        let mut refused = false;
        let found = self.index.get(key).and_then(|places| {
            places.iter().find_map(|&(p, at)| {
                let pack = &self.packs[p as usize];
                match read_entry(pack, at, key) {
                    Some(facts) => {
                        let Some(got) = accept(&facts) else {
                            refused = true;
                            return None;
                        };
                        pack.used.store(true, Ordering::Relaxed);
                        Some(got)
                    }
                    None => {
                        self.damaged.fetch_add(1, Ordering::Relaxed);
                        None
                    }
                }
            })
        });
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if refused && found.is_none() {
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// The newest trusted facts kept under `key`.
    pub fn get(&self, key: &Key) -> Option<Vec<u8>> {
        self.find(key, |f| Some(f.to_vec()))
    }

    /// Keeps `facts` under `key` in this build's pack. A store that cannot be written stops
    /// taking facts; the first error is in [`FactStore::tally`].
    pub fn put(&self, key: &Key, facts: &[u8]) {
        let stored = lz4_flex::block::compress_prepend_size(facts);
        let facts = &stored[..];
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if self.has_failed() {
            return;
        }
        if w.is_none() {
            match self.new_writer() {
                Ok(new) => *w = Some(new),
                Err(e) => return self.fail(format!("cannot create a pack: {e}")),
            }
        }
        let Some(writer) = w.as_mut() else {
            return;
        };
        let mut head = Vec::with_capacity(HEAD);
        key.encode(&mut head);
        head.extend_from_slice(&(facts.len() as u64).to_le_bytes());
        head.extend_from_slice(&checksum_bytes(facts).to_le_bytes());
        let at = writer.at;
        let wrote = writer
            .out
            .write_all(&head)
            .and_then(|()| writer.out.write_all(facts));
        match wrote {
            Ok(()) => {
                writer.at += (HEAD + facts.len()) as u64;
                key.encode(&mut writer.index);
                writer.index.extend_from_slice(&at.to_le_bytes());
                writer.entries += 1;
                self.written.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                let tmp = writer.tmp.clone();
                *w = None;
                let _ = std::fs::remove_file(tmp);
                self.fail(format!("cannot write a pack: {e}"));
            }
        }
    }

    fn has_failed(&self) -> bool {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    fn fail(&self, why: String) {
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        if failed.is_none() {
            *failed = Some(format!("{} ({})", why, self.dir.display()));
        }
    }

    fn new_writer(&self) -> io::Result<Writer> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = self
            .dir
            .join(PACKS)
            .join(format!(".tmp-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        if let Err(e) = out.write_all(&MAGIC) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(Writer {
            tmp,
            out,
            at: MAGIC.len() as u64,
            index: Vec::new(),
            entries: 0,
        })
    }

    /// Ends this build's use of the store: publishes its pack, marks the packs it read used,
    /// and records its [`Tally`] for `knav cache`.
    pub fn finish(&self) -> Tally {
        // Without its proof a segment is only never started from (crate::seed): the facts
        // are kept all the same.
        let _ = self.write_proof();
        let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(w) = writer {
            let tmp = w.tmp.clone();
            if let Err(e) = publish(w, &self.dir.join(PACKS)) {
                let _ = std::fs::remove_file(tmp);
                self.fail(format!("cannot write a pack: {e}"));
            }
        }
        let now = std::time::SystemTime::now();
        for p in &self.packs {
            if p.used.load(Ordering::Relaxed) {
                // A store that cannot be written still answers.
                let _ = p.file.set_modified(now);
            }
        }
        let mut tally = self.tally();
        if tally.not_kept.is_some() {
            tally.written = 0;
        }
        let json = serde_json::to_vec_pretty(&tally).unwrap_or_default();
        let path = self.dir.join(LAST_BUILD);
        let tmp = self
            .dir
            .join(format!(".{LAST_BUILD}-{}", std::process::id()));
        if std::fs::write(&tmp, json)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .is_err()
        {
            let _ = std::fs::remove_file(tmp);
        }
        tally
    }

    /// What this build did with the store so far.
    pub fn tally(&self) -> Tally {
        Tally {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            damaged: self.damaged.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            written: self.written.load(Ordering::Relaxed),
            skipped: self.skipped.clone(),
            not_kept: self
                .failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }

    /// What the last build that used the store at `dir` did with it (`None` when its record
    /// is missing, damaged, over 1 MiB or not a regular file).
    pub fn last_build(dir: &Path) -> Option<Tally> {
        use std::io::Read;
        let mut bytes = Vec::new();
        open_regular(&dir.join(LAST_BUILD))
            .ok()?
            .take(1 << 20)
            .read_to_end(&mut bytes)
            .ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The packs, entries and bytes the store held when opened (another format's packs
    /// counted in packs and bytes: they take room under the same cap).
    pub fn usage(&self) -> Usage {
        Usage {
            packs: (self.packs.len() + self.foreign.len()) as u64,
            entries: self.packs.iter().map(|p| p.entries).sum(),
            bytes: self.packs.iter().map(|p| p.bytes).sum::<u64>()
                + self.foreign.iter().map(|f| f.1).sum::<u64>(),
        }
    }

    /// Removes the least recently used packs until the store holds at most `max_bytes`;
    /// returns what it removed. A build reading a removed pack still reads it (its file
    /// stays open); the next build computes those facts again.
    pub fn prune(&self, max_bytes: u64) -> Usage {
        // Proofs take at most an eighth of the cap.
        trim_proofs(
            &self.dir.join(PROOFS),
            (max_bytes / 8).min(KEPT_PROOF_BYTES),
        );
        let mut total = self.usage().bytes;
        let mut removed = Usage::default();
        // Another format's packs first: this knav cannot use them.
        for (path, bytes) in &self.foreign {
            if total <= max_bytes {
                return removed;
            }
            if std::fs::remove_file(path).is_ok() {
                removed.packs += 1;
                removed.bytes += bytes;
            }
            total -= bytes;
        }
        let mut order: Vec<&Pack> = self.packs.iter().collect();
        // Oldest first; a pack used by this build counts as used now.
        let used = |p: &Pack| {
            if p.used.load(Ordering::Relaxed) {
                std::time::SystemTime::now()
            } else {
                p.file
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH)
            }
        };
        order.sort_by_key(|p| used(p));
        for p in order {
            if total <= max_bytes {
                break;
            }
            match std::fs::remove_file(&p.path) {
                Ok(()) => {
                    total -= p.bytes;
                    removed.packs += 1;
                    removed.entries += p.entries;
                    removed.bytes += p.bytes;
                }
                // Another prune removed it: gone all the same.
                Err(e) if e.kind() == io::ErrorKind::NotFound => total -= p.bytes,
                Err(_) => {}
            }
        }
        removed
    }
}

/// Writes the proof of the part in directory `part` (its name), which read `files`, into the
/// store at `store_dir`, and trims the proofs kept. Nothing for a name that is not a part
/// directory's.
fn write_proof(
    store_dir: &Path,
    part: &str,
    mut files: Vec<(String, u64, Digest)>,
) -> io::Result<()> {
    if !is_proof_name(part) {
        return Ok(());
    }
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut body = PROOF_MAGIC.to_vec();
    for (path, len, content) in &files {
        super::codec::put_str(&mut body, path.as_bytes());
        super::codec::put_varint(&mut body, *len);
        body.extend_from_slice(content);
    }
    let sum = digest(&body);
    body.extend_from_slice(&sum);
    let dir = store_dir.join(PROOFS);
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(".tmp-{}-{part}", std::process::id()));
    let wrote = std::fs::write(&tmp, &body).and_then(|()| std::fs::rename(&tmp, dir.join(part)));
    if wrote.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    trim_proofs(&dir, KEPT_PROOF_BYTES);
    wrote
}

/// The proof of one text, build-file or documentation part being built: the path, length and
/// [`Digest`] of each file the build read, from the bytes it read (never read again), written
/// into the store when the part is whole ([`Prover::finish`]).
pub struct Prover {
    store_dir: PathBuf,
    part: String,
    files: Mutex<Vec<(String, u64, Digest)>>,
}

impl Prover {
    /// The proof of the part directory named `part`, for the store at `store_dir`; `None`
    /// without a store (`KNAV_CACHE_DIR=off`): nothing is digested.
    pub fn new(store_dir: Option<&Path>, part: &str) -> Option<Prover> {
        Some(Prover {
            store_dir: store_dir?.to_path_buf(),
            part: part.to_string(),
            files: Mutex::new(Vec::new()),
        })
    }

    /// Records that the part read `bytes` at `path`.
    pub fn saw(&self, path: &str, bytes: &[u8]) {
        let entry = (path.to_string(), bytes.len() as u64, digest(bytes));
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(entry);
    }

    /// Writes the proof. A proof that cannot be written only means the part is never started
    /// from (the seed builds it whole): the error is dropped.
    pub fn finish(self) {
        let files = self.files.into_inner().unwrap_or_else(|e| e.into_inner());
        let _ = write_proof(&self.store_dir, &self.part, files);
    }
}

/// Whether `name` may name a proof: a part directory's name (`seg-`, `tx-`, `kb-`, `kd-` and
/// letters, digits, `-`, `_`), one plain component.
fn is_proof_name(name: &str) -> bool {
    Kind::BUILT.iter().any(|k| {
        name.strip_prefix(k.prefix())
            .is_some_and(|r| r.starts_with('-'))
    }) && name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Removes the oldest proofs in `dir` (and temporary ones of builds no longer running) until
/// those left take at most `max_bytes`. Entries that are not regular files are left alone
/// (never opened).
fn trim_proofs(dir: &Path, max_bytes: u64) {
    let mut proofs = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(rest) = name.strip_prefix(".tmp-") {
            if !writer_alive(rest) {
                let _ = std::fs::remove_file(e.path());
            }
            continue;
        }
        let Ok(m) = e.metadata() else { continue };
        if m.file_type().is_file() {
            let when = m.modified().unwrap_or(std::time::UNIX_EPOCH);
            proofs.push((when, m.len(), e.path()));
        }
    }
    let mut total: u64 = proofs.iter().map(|p| p.1).sum();
    proofs.sort();
    for (_, len, path) in proofs {
        if total <= max_bytes {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

/// Whether the file at `path` is a pack of another knav's format (its header names another
/// version, or it starts with the magic `KNAVPK` packs had before the header); a file too
/// short for a header, or with none, is no pack at all.
fn foreign(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    let Ok(file) = open_regular(path) else {
        return false;
    };
    if file.read_exact_at(&mut magic, 0).is_err() {
        return false;
    }
    let mut head = [0u8; HEADER_LEN];
    let other = file.read_exact_at(&mut head, 0).is_ok()
        && read_header(&head).is_some_and(|(k, v)| &k == PACK_KIND && v != PACK_VERSION);
    other || magic.starts_with(b"KNAVPK")
}

/// Whether the process that writes temporary pack `.tmp-<rest>` (`<pid>-<n>`) still runs.
fn writer_alive(rest: &str) -> bool {
    let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
        return false;
    };
    pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
}

/// Writes `w`'s index and footer and renames it into `packs`.
fn publish(mut w: Writer, packs: &Path) -> io::Result<()> {
    let mut footer = Vec::with_capacity(FOOTER);
    footer.extend_from_slice(&w.at.to_le_bytes());
    footer.extend_from_slice(&w.entries.to_le_bytes());
    footer.extend_from_slice(&checksum_bytes(&w.index).to_le_bytes());
    footer.extend_from_slice(END);
    w.out.write_all(&w.index)?;
    w.out.write_all(&footer)?;
    // Not synced: a pack that a crash cuts or zeroes fails its checksums, and its facts are
    // computed again; nothing else depends on it being on disk.
    let file = w.out.into_inner().map_err(|e| e.into_error())?;
    drop(file);
    // A name only (the checksums inside are what is checked): hash64 is enough for it.
    let name = format!(
        "{:016x}-{}{PACK_EXT}",
        hash64(&w.index),
        w.tmp
            .file_name()
            .map(|n| n.to_string_lossy().trim_start_matches(".tmp-").to_string())
            .unwrap_or_default()
    );
    std::fs::rename(&w.tmp, packs.join(name))
}

/// A pack and its keys with their offsets; `None` when it is not a whole pack of this format.
type Opened = Option<(Pack, Vec<(Key, u64)>)>;

fn read_pack(path: &Path) -> io::Result<Opened> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len < (MAGIC.len() + FOOTER) as u64 {
        return Ok(None);
    }
    let mut magic = [0u8; HEADER_LEN];
    file.read_exact_at(&mut magic, 0)?;
    let mut footer = [0u8; FOOTER];
    file.read_exact_at(&mut footer, len - FOOTER as u64)?;
    let (Some(start), Some(entries), Some(sum)) =
        (word(&footer, 0), word(&footer, 8), word(&footer, 16))
    else {
        return Ok(None);
    };
    let entry_len = (KEY_LEN + 8) as u64;
    let index_len = (len - FOOTER as u64).checked_sub(start);
    let whole = magic == MAGIC
        && &footer[24..] == END
        && start >= MAGIC.len() as u64
        && index_len.is_some()
        && entries.checked_mul(entry_len) == index_len;
    if !whole {
        return Ok(None);
    }
    let mut index = vec![0u8; (entries * entry_len) as usize];
    file.read_exact_at(&mut index, start)?;
    if checksum_bytes(&index) != sum {
        return Ok(None);
    }
    let mut keys = Vec::with_capacity(entries as usize);
    for e in index.chunks_exact(entry_len as usize) {
        // An entry of a part this knav does not know is skipped.
        if let (Some(key), Some(at)) = (Key::decode(e), word(e, KEY_LEN)) {
            keys.push((key, at));
        }
    }
    let pack = Pack {
        path: path.to_path_buf(),
        file,
        end: start,
        entries,
        bytes: len,
        used: AtomicBool::new(false),
    };
    Ok(Some((pack, keys)))
}

/// The facts of the entry at `at` of `pack` when it is whole and of `key`.
fn read_entry(pack: &Pack, at: u64, key: &Key) -> Option<Vec<u8>> {
    let mut head = [0u8; HEAD];
    pack.file.read_exact_at(&mut head, at).ok()?;
    let mut want = Vec::with_capacity(KEY_LEN);
    key.encode(&mut want);
    if head[..KEY_LEN] != want[..] {
        return None;
    }
    let (len, sum) = (word(&head, KEY_LEN)?, word(&head, KEY_LEN + 8)?);
    let start = at.checked_add(HEAD as u64)?;
    if start.checked_add(len)? > pack.end {
        return None;
    }
    let mut stored = vec![0u8; usize::try_from(len).ok()?];
    pack.file.read_exact_at(&mut stored, start).ok()?;
    if checksum_bytes(&stored) != sum {
        return None;
    }
    // The length the facts will take, checked before it is allocated.
    let raw = u32::from_le_bytes(stored.get(..4)?.try_into().ok()?);
    if raw > MAX_FACTS {
        return None;
    }
    lz4_flex::block::decompress_size_prepended(&stored).ok()
}

/// The largest facts of one file read back (a file's facts are a few times its size, and
/// files past the walk's size cap are not analyzed).
const MAX_FACTS: u32 = 1 << 30;

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str) -> (FactStore, PathBuf) {
        let dir = std::env::temp_dir().join(format!("knav-facts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (FactStore::open(&dir).unwrap(), dir)
    }

    fn packs(dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(PACKS))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn facts_read_back_under_their_key_only_once_the_build_is_finished() {
        let (s, dir) = store("roundtrip");
        let k = Key::of(b"int a;\n", b"7", Kind::Text);
        assert_eq!(s.get(&k), None);
        s.put(&k, b"facts");
        // Another build sees the pack only when it is whole.
        assert_eq!(FactStore::open(&dir).unwrap().get(&k), None);
        let t = s.finish();
        assert_eq!((t.hits, t.misses, t.written), (0, 1, 1));
        let s = FactStore::open(&dir).unwrap();
        assert_eq!(s.get(&k).as_deref(), Some(&b"facts"[..]));
        // Another salt, another part: other facts.
        assert_eq!(s.get(&Key { salt: [8; 32], ..k }), None);
        assert_eq!(
            s.get(&Key {
                kind: Kind::Docs,
                ..k
            }),
            None
        );
        assert_eq!(s.usage().entries, 1);
        let t = s.finish();
        assert_eq!((t.hits, t.misses, t.written), (1, 2, 0));
        assert_eq!(FactStore::last_build(&dir), Some(t));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn facts_of_a_file_forged_with_the_same_length_and_hash64_are_not_the_real_files() {
        let (s, dir) = store("forged");
        let real = b"int     vfs_read(int fd)\n{\n\treturn fd + 1;\n}\n/* padding padding padding padding padding padding */\n";
        let forged = crate::codec::hash64_twin(real, 8, *b"evilread", 72);
        assert_eq!(hash64(&forged), hash64(real));
        let (k_real, k_forged) = (
            Key::of(real, b"fs/read_write.c", Kind::Segment),
            Key::of(&forged, b"fs/read_write.c", Kind::Segment),
        );
        assert_ne!(k_real, k_forged);
        s.put(&k_forged, b"evilread");
        s.finish();
        let s = FactStore::open(&dir).unwrap();
        assert_eq!(s.get(&k_real), None);
        assert_eq!(s.get(&k_forged).as_deref(), Some(&b"evilread"[..]));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_fifo_named_like_a_pack_or_a_proof_is_skipped_and_blocks_nothing() {
        let (s, dir) = store("fifo");
        let k = Key::of(b"x", b"1", Kind::Segment);
        s.put(&k, b"kept");
        s.proving(Path::new("/index/seg-1-2"));
        s.saw("a.c", 1, digest(b"x"));
        s.finish();
        let fifo = |p: &Path| {
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            assert_eq!(
                // SAFETY: a NUL-terminated path; mkfifo reads it only.
                unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
                0,
                "{}",
                p.display()
            );
        };
        let pack = dir.join(PACKS).join("evil.pack");
        fifo(&pack);
        std::fs::remove_file(dir.join(LAST_BUILD)).unwrap();
        fifo(&dir.join(LAST_BUILD));
        fifo(&dir.join(PROOFS).join("seg-fifo"));
        let s = FactStore::open(&dir).unwrap();
        assert_eq!(
            s.skipped(),
            [format!(
                "{}: not a regular file (a FIFO, device, directory or link), skipped; remove \
                 it from the fact store",
                pack.display()
            )]
        );
        assert_eq!(s.get(&k).as_deref(), Some(&b"kept"[..]));
        assert_eq!(FactStore::last_build(&dir), None);
        assert_eq!(FactStore::proof_of(&dir, "seg-fifo"), None);
        let proof = FactStore::proof_of(&dir, "seg-1-2").unwrap();
        assert_eq!(proof.get("a.c"), Some(&(1, digest(b"x"))));
        assert_eq!(FactStore::proof_of(&dir, "../packs/evil.pack"), None);
        assert_eq!(s.prune(0).packs, 1);
        assert!(pack.exists(), "the FIFO is left (not a pack)");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_text_build_file_or_docs_part_leaves_a_proof_under_its_directory_name() {
        let (_, dir) = store("part-proofs");
        for part in ["tx-18ee-1", "kb-18ee-1", "kd-18ee-1"] {
            let p = Prover::new(Some(&dir), part).unwrap();
            p.saw("Kconfig", b"config A\n");
            p.saw("Documentation/a.rst", b"words");
            p.finish();
            let proof = FactStore::proof_of(&dir, part).unwrap();
            assert_eq!(proof.len(), 2, "{part}");
            assert_eq!(proof.get("Kconfig"), Some(&(9, digest(b"config A\n"))));
            assert_eq!(
                proof.get("Documentation/a.rst"),
                Some(&(5, digest(b"words")))
            );
        }
        // Without a store nothing is digested; a name not a part directory's gets no proof.
        assert!(Prover::new(None, "tx-1").is_none());
        let p = Prover::new(Some(&dir), "rs-1").unwrap();
        p.saw("a", b"a");
        p.finish();
        assert!(!dir.join(PROOFS).join("rs-1").exists());
        for bad in ["rs-1", "tx", "txt-1", "tx-1/../x", "../tx-1", ""] {
            assert_eq!(FactStore::proof_of(&dir, bad), None, "{bad}");
        }
        // A proof flipped by one bit is not read.
        let path = dir.join(PROOFS).join("kb-18ee-1");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[10] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(FactStore::proof_of(&dir, "kb-18ee-1"), None);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_truncated_or_flipped_entry_is_not_trusted() {
        let (s, dir) = store("damage");
        let (a, b) = (
            Key::of(b"x", b"1", Kind::Docs),
            Key::of(b"y", b"1", Kind::Docs),
        );
        s.put(&a, b"some facts");
        s.put(&b, b"other facts");
        s.finish();
        let pack = packs(&dir).pop().unwrap();
        let mut bytes = std::fs::read(&pack).unwrap();
        // The last byte of a's stored facts.
        let stored = lz4_flex::block::compress_prepend_size(b"some facts").len();
        bytes[MAGIC.len() + HEAD + stored - 1] ^= 1;
        std::fs::write(&pack, &bytes).unwrap();
        let s = FactStore::open(&dir).unwrap();
        assert_eq!(s.get(&a), None);
        assert_eq!(s.get(&b).as_deref(), Some(&b"other facts"[..]));
        assert_eq!(s.tally().damaged, 1);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_pack_of_another_format_is_kept_and_pruned_first() {
        let (s, dir) = store("foreign-format");
        let k = Key::of(b"x", b"1", Kind::Segment);
        s.put(&k, b"some facts");
        s.finish();
        let other = dir.join(PACKS).join("other-version.pack");
        std::fs::write(&other, b"KNAVPK99 a pack of a later knav").unwrap();
        let s = FactStore::open(&dir).unwrap();
        assert!(other.exists(), "another knav's pack was removed");
        assert_eq!(s.get(&k).as_deref(), Some(&b"some facts"[..]));
        let ours = s.usage().bytes - std::fs::metadata(&other).unwrap().len();
        let removed = s.prune(ours);
        assert_eq!((removed.packs, removed.entries), (1, 0));
        assert!(!other.exists());
        assert_eq!(FactStore::open(&dir).unwrap().usage().packs, 1);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_knav_of_before_the_header_never_sees_a_new_pack() {
        // It listed `*.pack` only and removed one whose magic it did not know.
        let (s, dir) = store("old-knav-names");
        s.put(&Key::of(b"x", b"1", Kind::Segment), b"some facts");
        s.finish();
        let names: Vec<String> = packs(&dir)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1);
        assert!(
            names
                .iter()
                .all(|n| n.ends_with(PACK_EXT) && !n.ends_with(OLD_PACK_EXT)),
            "{names:?}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_pack_whose_header_names_another_version_is_kept_and_never_read() {
        let (s, dir) = store("foreign-header");
        let k = Key::of(b"x", b"1", Kind::Segment);
        s.put(&k, b"some facts");
        s.finish();
        // Our own pack, whole, but its header saying another pack format.
        let ours = packs(&dir).pop().unwrap();
        let mut bytes = std::fs::read(&ours).unwrap();
        bytes[..HEADER_LEN].copy_from_slice(&header_of(PACK_KIND, PACK_VERSION + 1));
        std::fs::write(&ours, &bytes).unwrap();
        let s = FactStore::open(&dir).unwrap();
        assert!(ours.exists(), "another knav's pack was removed");
        assert_eq!(s.get(&k), None);
        assert_eq!(s.usage().bytes, bytes.len() as u64);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_footer_pointing_past_the_pack_is_not_trusted_and_does_not_panic() {
        let (s, dir) = store("footer");
        let k = Key::of(b"x", b"1", Kind::Segment);
        s.put(&k, b"some facts");
        s.finish();
        let pack = packs(&dir).pop().unwrap();
        let mut bytes = std::fs::read(&pack).unwrap();
        let at = bytes.len() - FOOTER;
        bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        std::fs::write(&pack, &bytes).unwrap();
        let s = FactStore::open(&dir).unwrap();
        assert_eq!(s.get(&k), None);
        assert!(!pack.exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_pack_cut_short_is_removed_whole() {
        let (s, dir) = store("cut");
        let k = Key::of(b"x", b"1", Kind::Segment);
        s.put(&k, b"some facts");
        s.finish();
        let pack = packs(&dir).pop().unwrap();
        let bytes = std::fs::read(&pack).unwrap();
        for cut in [1, FOOTER, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(&pack, &bytes[..bytes.len() - cut]).unwrap();
            let s = FactStore::open(&dir).unwrap();
            assert_eq!(s.get(&k), None, "cut by {cut}");
            assert!(!pack.exists(), "a pack cut by {cut} stays");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_entry_of_another_key_at_the_offset_is_not_trusted() {
        let (s, dir) = store("foreign");
        let (a, b) = (
            Key::of(b"a", b"1", Kind::Text),
            Key::of(b"b", b"1", Kind::Text),
        );
        s.put(&a, b"facts of a");
        s.finish();
        let mut s = FactStore::open(&dir).unwrap();
        let place = s.index[&a].clone();
        s.index.insert(b, place);
        assert_eq!(s.get(&b), None);
        assert_eq!(s.get(&a).as_deref(), Some(&b"facts of a"[..]));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn builds_writing_the_same_entries_at_once_leave_good_ones() {
        let (_, dir) = store("concurrent");
        let keys: Vec<Key> = (0..50u8).map(|i| Key::of(&[i], b"0", Kind::Text)).collect();
        std::thread::scope(|t| {
            for _ in 0..4 {
                t.spawn(|| {
                    let s = FactStore::open(&dir).unwrap();
                    for k in &keys {
                        s.put(k, &k.content);
                    }
                    s.finish();
                });
            }
        });
        let s = FactStore::open(&dir).unwrap();
        for k in &keys {
            assert_eq!(s.get(k), Some(k.content.to_vec()));
        }
        assert_eq!(s.usage().packs, 4);
        assert!(packs(&dir).iter().all(|p| p.extension().is_some()));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_build_killed_while_writing_leaves_nothing_trusted_and_its_scratch_is_removed() {
        let (_, dir) = store("killed");
        // What a killed build leaves: a temporary pack of a process that no longer runs.
        let dead = dir.join(PACKS).join(format!(".tmp-{}-0", u32::MAX - 1));
        std::fs::write(&dead, b"KNAVPK01 half an entry").unwrap();
        let s = FactStore::open(&dir).unwrap();
        assert!(!dead.exists());
        assert_eq!(s.usage(), Usage::default());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_unwritable_store_says_so_and_still_answers() {
        let (s, dir) = store("unwritable");
        let k = Key::of(b"y", b"0", Kind::Text);
        s.put(&k, b"kept");
        s.finish();
        // The packs directory replaced by a file: nothing can be created in it.
        let s = FactStore::open(&dir).unwrap();
        let moved = dir.join("moved");
        std::fs::rename(dir.join(PACKS), &moved).unwrap();
        std::fs::write(dir.join(PACKS), b"").unwrap();
        assert_eq!(s.get(&k).as_deref(), Some(&b"kept"[..]));
        s.put(&Key::of(b"z", b"0", Kind::Text), b"facts");
        let t = s.finish();
        assert!(
            t.not_kept
                .as_deref()
                .unwrap_or("")
                .contains("cannot create a pack"),
            "{t:?}"
        );
        assert_eq!(t.written, 0);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_full_disk_stops_the_writes_and_leaves_no_pack() {
        assert!(
            Path::new("/dev/full").exists(),
            "this test needs the device /dev/full (mknod -m 666 /dev/full c 1 7)"
        );
        let (s, dir) = store("full");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        *s.writer.lock().unwrap() = Some(Writer {
            tmp: dir.join(PACKS).join(".tmp-full"),
            out: BufWriter::with_capacity(16, file),
            at: 0,
            index: Vec::new(),
            entries: 0,
        });
        for i in 0..4u8 {
            s.put(&Key::of(&[i], b"0", Kind::Text), &[i; 64]);
        }
        let t = s.finish();
        assert!(
            t.not_kept.as_deref().unwrap_or("").contains("No space"),
            "{t:?}"
        );
        assert_eq!(FactStore::open(&dir).unwrap().usage().packs, 0);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn prune_removes_the_least_recently_used_packs_first() {
        let (_, dir) = store("prune");
        let keys: Vec<Key> = (0..4u8).map(|i| Key::of(&[i], b"0", Kind::Text)).collect();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for (i, k) in keys.iter().enumerate() {
            let s = FactStore::open(&dir).unwrap();
            s.put(k, &[0u8; 100]);
            s.finish();
            for p in packs(&dir) {
                let f = File::options().write(true).open(&p).unwrap();
                if f.metadata().unwrap().modified().unwrap()
                    > old + std::time::Duration::from_secs(60)
                {
                    f.set_modified(old + std::time::Duration::from_secs(i as u64))
                        .unwrap();
                }
            }
        }
        // The oldest is used now: the next oldest goes first.
        let s = FactStore::open(&dir).unwrap();
        assert!(s.get(&keys[0]).is_some());
        let one = s.usage().bytes / 4;
        let removed = s.prune(one * 2);
        assert_eq!((removed.packs, removed.entries), (2, 2));
        s.finish();
        let s = FactStore::open(&dir).unwrap();
        assert!(s.get(&keys[0]).is_some());
        assert!(s.get(&keys[1]).is_none() && s.get(&keys[2]).is_none());
        assert!(s.get(&keys[3]).is_some());
        let _ = std::fs::remove_dir_all(dir);
    }
}
