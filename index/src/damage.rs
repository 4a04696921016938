//! Telling a damaged index apart from a good one: FSTs checked before the `fst` crate reads
//! them, small indexes checksummed whenever they are opened, damage a decoder runs into
//! remembered for the answer to report, and a panic inside a decoder turned into that report.
//!
//! A large index is checked on sizes and headers at open (a query must stay a few ms); its
//! checksums are compared by `knav index --verify` and by every `knav index` before it builds
//! on it (see [`super::store::check_stamped`]).

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::sync::{Once, OnceLock};

use super::disk::{map, MapBytes};
use super::error::IndexError;

/// Re-reads each file `name` of the part directory `dir` and compares its checksum with `sum`,
/// the one recorded when it was built: [`super::part::verify`] of every part.
pub fn verify_checksums(dir: &Path, sums: &[(String, u64)]) -> Result<(), IndexError> {
    for (name, sum) in sums {
        let path = dir.join(name);
        let got = super::codec::checksum_file(&path).map_err(IndexError::io("", &path))?;
        if got != *sum {
            return Err(IndexError::damaged(path, "checksum mismatch"));
        }
    }
    Ok(())
}

/// An index up to this many bytes has every file checksummed when it is opened (a few hundred
/// µs of hashing in a release build; a 2 MB index took 65 ms more per query in a debug build);
/// `KNAV_OPEN_CHECK_BYTES` sets another limit (0: never).
const OPEN_CHECK_BYTES: u64 = 1 << 20;

/// True when an index part of `bytes` is checksummed at open.
pub fn checksum_at_open(bytes: u64) -> bool {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    let limit = *LIMIT.get_or_init(|| {
        std::env::var("KNAV_OPEN_CHECK_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(OPEN_CHECK_BYTES)
    });
    bytes <= limit
}

/// The first damage a reader of one index part ran into.
#[derive(Debug, Default)]
pub struct Damage(OnceLock<IndexError>);

impl Damage {
    /// Remembers damage in `file` of `dir` (only the first is kept).
    #[cold]
    pub fn mark(&self, dir: &Path, file: &str, what: &str) {
        let _ = self.0.set(IndexError::damaged(dir.join(file), what));
    }

    /// Remembers `error`, met opening a part of the index late (only the first is kept).
    #[cold]
    pub fn keep(&self, error: IndexError) {
        let _ = self.0.set(error);
    }

    /// The first damage seen, as a clear error.
    pub fn get(&self) -> Option<&IndexError> {
        self.0.get()
    }
}

/// Opens the FST `name` of `dir` (of `expected` bytes when known), checking what
/// `fst::Map::new` does not: a truncated FST whose tail no longer names its root is accepted
/// by the crate and panics on the first lookup.
pub fn open_fst(
    dir: &Path,
    name: &str,
    expected: Option<u64>,
) -> Result<fst::Map<MapBytes>, IndexError> {
    let m = map(dir, name, expected)?;
    let bad = |what: &str| IndexError::damaged(dir.join(name), what);
    let b: &[u8] = &m;
    let word = |at: usize| -> u64 {
        let mut w = [0u8; 8];
        if let Some(s) = b.get(at..at + 8) {
            w.copy_from_slice(s);
        }
        u64::from_le_bytes(w)
    };
    if b.len() < 36 {
        return Err(bad("too short for an FST"));
    }
    // fst format 3: version, type, nodes, then the key count, the root address, a checksum.
    if word(0) != 3 {
        return Err(bad("not an FST of format 3"));
    }
    let root = word(b.len() - 12);
    let fits = if root == 0 {
        b.len() == 36
    } else {
        root.checked_add(21) == Some(b.len() as u64)
    };
    if !fits {
        return Err(bad("its root address does not match its length"));
    }
    fst::Map::new(MapBytes(m)).map_err(|e| bad(&e.to_string()))
}

thread_local! {
    /// Set while [`catch_decoder_panic`] runs: its panics are reported, not printed.
    static QUIET: Cell<bool> = const { Cell::new(false) };
    /// The message of the last quiet panic, printed if it was not damage after all.
    static LAST: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Runs `f`, catching a panic (the `fst` crate panics on some damaged FSTs) without printing
/// it; `Err` carries the panic's message.
pub fn catch_decoder_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) {
                LAST.with(|l| *l.borrow_mut() = info.to_string());
            } else {
                previous(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.map_err(|_| LAST.with(|l| std::mem::take(&mut *l.borrow_mut())))
}
