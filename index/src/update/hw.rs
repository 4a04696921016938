//! An update's hardware part: the tree's device-tree sources and binding schemas (among the
//! files the text walk lists) against the index's part, by their fingerprint; kept when it
//! still fits, else written again, reading only the files whose stat changed.

use std::path::Path;
use std::time::Instant;

use crate::error::IndexError;
use crate::hw::{fingerprint, part, HwRef, MAX_HW_BYTES};
use crate::text::walk::TextFile;

/// The tree's hardware files against the index's hardware part.
pub(super) struct HwState {
    /// The hardware files, in path order.
    files: Vec<TextFile>,
    /// Their [`fingerprint`].
    fingerprint: u64,
    /// The index's part.
    old: Option<HwRef>,
    /// The facts of the index's part, when its files' stats changed.
    reuse: part::Reusable,
    /// True when the index's part (or its absence) still fits the tree.
    pub(super) same: bool,
}

impl HwState {
    /// Compares the hardware files among `listed`, every file the text walk found in path
    /// order, with `old`, the index's part in `index_dir`; `listed` is `None` when that walk
    /// found every file as cached: the part stays. When their stats differ from the part's,
    /// the files whose stat changed are read: the part stays if they hold the same bytes (a
    /// file touched, not changed).
    pub(super) fn of(
        root: &Path,
        index_dir: &Path,
        old: Option<&HwRef>,
        listed: Option<&[TextFile]>,
    ) -> HwState {
        let Some(listed) = listed else {
            return HwState {
                files: Vec::new(),
                fingerprint: 0,
                old: old.cloned(),
                reuse: part::Reusable::default(),
                same: true,
            };
        };
        let files: Vec<TextFile> = listed
            .iter()
            .filter(|f| part::is_hw_path(&f.path) && f.size <= MAX_HW_BYTES)
            .cloned()
            .collect();
        let fingerprint = fingerprint(&files);
        let mut reuse = part::Reusable::default();
        let same = match old {
            Some(h) if h.format != crate::hw::FORMAT => false,
            Some(h) if h.fingerprint == fingerprint => true,
            Some(h) if quick(root, index_dir, h, &files) => true,
            Some(h) => {
                reuse = part::reusable(&index_dir.join(&h.dir));
                same_bytes(root, &files, &reuse)
            }
            // Written even without files: an index without the part is one an older knav built.
            None => false,
        };
        HwState {
            files,
            fingerprint,
            old: old.cloned(),
            reuse,
            same,
        }
    }

    /// The part for the new manifest: the index's when it still fits, else a new one in `index_dir` (the old part's facts reused for the files whose
    /// stat is the same); with a one-line summary of a new one.
    pub(super) fn part(
        &self,
        root: &Path,
        index_dir: &Path,
    ) -> Result<(Option<HwRef>, Option<String>), IndexError> {
        if self.same {
            // Kept under the tree's fingerprint when the walk listed the files (their stats
            // moved, their facts did not).
            let fingerprint = (!self.files.is_empty()).then_some(self.fingerprint);
            let kept = self.old.clone().map(|h| HwRef {
                previous: None,
                fingerprint: fingerprint.unwrap_or(h.fingerprint),
                ..h
            });
            return Ok((kept, None));
        }
        let started = Instant::now();
        // Made and opened through the index directory's descriptor; written through its own.
        let dir = crate::indexdir::Part::make(index_dir, crate::part::Kind::Hw.prefix()).map_err(
            IndexError::io("cannot create the hardware part in", index_dir),
        )?;
        let built = match part::build(root, &self.files, &self.reuse, dir.via(), None) {
            Ok(b) => b,
            Err(e) => {
                let e = e.shown();
                dir.remove();
                return Err(e);
            }
        };
        let summary = format!(
            "hardware (knav device): {} device trees, {} bindings, {} driver files, {} compatibles ({} files read, {} kept), {:.1} MB, in {} ms",
            built.sources,
            built.bindings,
            built.drivers,
            built.compatibles,
            self.files.len() as u64 - built.reused,
            built.reused,
            built.bytes as f64 / 1e6,
            started.elapsed().as_millis()
        );
        let part = HwRef {
            dir: dir.name().to_string(),
            fingerprint: self.fingerprint,
            sources: built.sources,
            bindings: built.bindings,
            compatibles: built.compatibles,
            checksums: built.checksums,
            previous: self.old.as_ref().map(|h| h.dir.clone()),
            format: crate::hw::FORMAT,
        };
        Ok((Some(part), Some(summary)))
    }
}

/// [`part::quick_same`] on the index's part `h`.
fn quick(root: &Path, index_dir: &Path, h: &HwRef, files: &[TextFile]) -> bool {
    let dir = index_dir.join(&h.dir);
    crate::hw::ids::Ids::open(&dir).is_ok_and(|ids| part::quick_same(root, &dir, &ids, files))
}

/// True when `files` are the files `kept` holds, each with the bytes it was read with (only
/// those whose stat changed are read).
fn same_bytes(root: &Path, files: &[TextFile], kept: &part::Reusable) -> bool {
    if files.len() != kept.files.len() {
        return false;
    }
    let beneath = crate::tree::beneath::Root::open(root).ok();
    files.iter().all(|f| match kept.files.get(&f.path) {
        Some(k) if k.same_stat(f) => true,
        Some(k) => beneath
            .as_ref()
            .and_then(|b| b.read(&f.path).ok())
            .is_some_and(|bytes| crate::codec::hash64(&bytes) == k.hash),
        None => false,
    })
}
