//! The files of the macro definers' table: [`knav_c::definers`] (in the `knav-c` crate) reads
//! only bytes, so the headers it learns from are read here, beneath the root, and so are the
//! two files a full build saves for its deltas: the record of what each header defines
//! ([`super::build::DEFINES_FILE`]) and the resolved table ([`super::build::DEFINERS_FILE`]).

use std::collections::HashSet;
use std::path::Path;

use crate::tree::beneath::Root;
use knav_c::definers::{Definers, HeaderDefines};

/// [`Definers::learn_headers`] of the headers at `paths` under `root`, with the record
/// `saved` (unread when missing: every header is then read).
pub(crate) fn learn_headers(
    root: &Path,
    paths: &[&str],
    saved: Option<&Path>,
    fresh: &HashSet<&str>,
    threads: usize,
) -> (Definers, Vec<HeaderDefines>) {
    let saved = saved.and_then(|p| std::fs::read_to_string(p).ok());
    let beneath = Root::open(root).ok();
    let read = |p: &str| beneath.as_ref()?.read(p).ok();
    Definers::learn_headers(read, paths, saved.as_deref(), fresh, threads)
}

/// [`Definers::record_differs`] for the headers at `paths` under `root` and the record file
/// `saved`; no record: true.
pub(crate) fn record_differs(root: &Path, saved: &Path, paths: &[&str]) -> bool {
    if paths.is_empty() {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(saved) else {
        return true;
    };
    let beneath = Root::open(root).ok();
    Definers::record_differs(|p| beneath.as_ref()?.read(p).ok(), &text, paths)
}

/// Writes [`Definers::record_text`] of `learned` to `path`.
pub(crate) fn save(path: &Path, learned: &[HeaderDefines]) -> std::io::Result<()> {
    std::fs::write(path, Definers::record_text(learned))
}

/// Writes the resolved table, [`Definers::table_text`], to `path`.
pub(crate) fn save_resolved(definers: &Definers, path: &Path) -> std::io::Result<()> {
    std::fs::write(path, definers.table_text())
}

/// The table [`save_resolved`] wrote; `None` when it is missing or damaged.
pub(crate) fn load(path: &Path) -> Option<Definers> {
    Definers::from_table_text(&std::fs::read_to_string(path).ok()?)
}
