//! An update's text part (`knav grep`'s index): rg's file set walked with its own cache, and
//! the part the new manifest names (the index's own when nothing changed, else a new overlay
//! or base).

use std::path::Path;

use crate::build::BuildOptions;
use crate::error::IndexError;
use crate::store::Snapshot;

/// The text part's side of an update (`knav grep`'s index): rg's file set, walked with its own
/// cache, and the part the new manifest names.
pub(super) struct TextUpdate {
    pub(super) walk: crate::text::walk::TextWalk,
    /// The index's text part.
    pub(super) old: Option<crate::text::TextRef>,
    /// The walk found every file as the cache of the index's part has it.
    pub(super) same: bool,
    /// Files proven to hold what the index recorded under another modification time.
    pub(super) restat: crate::restat::Restat,
    /// The fact store the text, documentation and build-file parts' proofs go into.
    pub(super) proofs: Option<std::path::PathBuf>,
}

impl TextUpdate {
    /// Walks rg's file set. The C sources and build files the index's walk covers are not
    /// stat'ed twice (unless `index.ignore` left some out of it); `same_walk`: that walk found
    /// them all as cached. With `list`, the files are listed even when all are as cached.
    pub(super) fn walk(
        root: &Path,
        index_dir: &Path,
        old: Option<&Snapshot>,
        walked: &crate::tree::walk::Walk,
        same_walk: bool,
        opts: &BuildOptions,
        list: bool,
    ) -> TextUpdate {
        use crate::text::walk::Known;
        let cached = old.and_then(|_| crate::text::read_cache(index_dir));
        let old_text = old.and_then(|s| s.manifest.text.clone());
        let stats: std::collections::HashMap<&str, (u64, i64)> = if same_walk {
            Default::default()
        } else {
            walked
                .sources
                .iter()
                .chain(&walked.too_big)
                .chain(&walked.builds)
                .map(|f| (f.path.as_str(), (f.size, f.mtime_ns)))
                .collect()
        };
        let known = match (opts.ignore.is_empty(), same_walk) {
            (false, _) => Known::Nothing,
            (true, true) => Known::AsCached,
            (true, false) => Known::Stats(&stats),
        };
        // The cache describes the manifest's text part: a walk that finds it all as cached
        // needs to list nothing.
        let current = old_text
            .as_ref()
            .zip(cached.as_ref())
            .is_some_and(|(t, (_, part))| t.dir == *part);
        let walk = crate::text::walk::walk(
            root,
            cached.as_ref().map(|(c, _)| c),
            &known,
            current && !list,
        );
        TextUpdate {
            same: walk.same_as_cache && current,
            walk,
            old: old_text,
            restat: crate::restat::Restat::default(),
            proofs: opts.cache.dir.clone(),
        }
    }

    /// Every file the walk found, in path order; `None` when it found them all as cached
    /// and did not list them.
    pub(super) fn listed(&self) -> Option<&[crate::text::walk::TextFile]> {
        (!self.same || !self.walk.files.is_empty()).then_some(&self.walk.files)
    }

    /// The text part for the new manifest: the index's when nothing changed (and no
    /// `rebuild`), else the old base with a new overlay, or a new base.
    pub(super) fn part(
        &self,
        root: &Path,
        index_dir: &Path,
        rebuild: bool,
        files_read: &dyn Fn(),
    ) -> Result<Option<crate::text::TextRef>, IndexError> {
        if self.same && !rebuild {
            return Ok(self.old.clone().map(|t| crate::text::TextRef {
                previous: None,
                ..t
            }));
        }
        crate::text::update(
            root,
            index_dir,
            &self.walk.files,
            self.old.as_ref(),
            rebuild,
            &self.restat,
            self.proofs.as_deref(),
            files_read,
        )
        .map(Some)
        .map_err(IndexError::Build)
    }

    /// Writes the text walk's listings for the published part `text`.
    pub(super) fn write_cache(
        &self,
        index_dir: &Path,
        text: &Option<crate::text::TextRef>,
    ) -> Result<(), IndexError> {
        match text {
            Some(t) if !self.same => crate::text::write_cache(index_dir, &self.walk.cache, &t.dir)
                .map_err(IndexError::Build),
            _ => Ok(()),
        }
    }
}
