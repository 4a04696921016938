//! An update's build-file part: the tree's Kbuild and Kconfig files against the index's part
//! (their fingerprint, or each file's stat), kept when it still fits, else built anew.

use std::path::Path;

use crate::buildfiles;
use crate::error::IndexError;
use crate::store::Snapshot;
use crate::tree::walk::SourceFile;

/// The tree's build files against the index's build-file part.
pub(super) struct BuildFilesState {
    /// [`buildfiles::fingerprint`] of the tree's build files.
    pub(super) fingerprint: u64,
    /// The index's build-file part.
    pub(super) old: Option<buildfiles::BuildFilesRef>,
    /// True when the index's part (or its absence) still fits the tree's build files.
    pub(super) same: bool,
}

impl BuildFilesState {
    pub(super) fn of(
        root: &Path,
        old: Option<&Snapshot>,
        builds: &[SourceFile],
    ) -> BuildFilesState {
        let fingerprint = buildfiles::fingerprint(builds);
        let old_ref = old.and_then(|s| s.manifest.build_files.clone());
        let same = match (&old_ref, old.and_then(|s| s.build.as_ref())) {
            (Some(b), Some(open)) => b.fingerprint == fingerprint || open.unchanged(root, builds),
            (None, _) => old.is_some() && builds.is_empty(),
            _ => false,
        };
        BuildFilesState {
            fingerprint,
            old: old_ref,
            same,
        }
    }
}

/// The build-file part of a new index, and what reading the build files found.
pub(super) struct BuildFilesPart {
    /// The part to publish; `None`: the tree has no build files.
    pub(super) part: Option<buildfiles::BuildFilesRef>,
    /// For a new part, a one-line summary for the report.
    pub(super) summary: Option<String>,
}

/// The build-file part for `builds` (`state`: their [`buildfiles::fingerprint`] and the index's
/// part): the old one when it still fits, none when there are no build files, else a new one
/// (its proof into the fact store at `proofs`).
pub(super) fn build_files_part(
    root: &Path,
    index_dir: &Path,
    builds: &[SourceFile],
    state: &BuildFilesState,
    proofs: Option<&Path>,
) -> Result<BuildFilesPart, IndexError> {
    let (fingerprint, old, same) = (state.fingerprint, state.old.as_ref(), state.same);
    if same {
        let kept = old.map(|b| buildfiles::BuildFilesRef {
            previous: None,
            ..b.clone()
        });
        return Ok(BuildFilesPart {
            part: kept,
            summary: None,
        });
    }
    if builds.is_empty() {
        return Ok(BuildFilesPart {
            part: None,
            summary: None,
        });
    }
    let dir = crate::indexdir::Part::make(index_dir, "kb").map_err(IndexError::io(
        "cannot create a build-files part in",
        index_dir,
    ))?;
    let stats = match buildfiles::build(root, builds, dir.via(), dir.name(), proofs) {
        Ok(s) => s,
        Err(e) => {
            let e = e.shown();
            dir.remove();
            return Err(e);
        }
    };
    let name = dir.name().to_string();
    let summary = format!(
        "{} build files: {} Makefiles followed, {} objects and directories with a condition, {} Kconfig entries, parsed in {} ms",
        builds.len(),
        stats.makefiles,
        stats.paths,
        stats.entries,
        stats.parse_ms
    );
    Ok(BuildFilesPart {
        part: Some(buildfiles::BuildFilesRef {
            dir: name,
            fingerprint,
            files: builds.len() as u64,
            previous: old.map(|b| b.dir.clone()),
        }),
        summary: Some(summary),
    })
}
