//! The bound on what a build thread keeps of a file's working vectors for the next file: their
//! memory is reused, but a huge file's is given back rather than held for the rest of the build.

/// Entries a reused vector keeps room for between files.
pub const KEEP: usize = 1 << 16;

/// Empties `v`, keeping room for at most [`KEEP`] entries.
pub fn clear_kept<T>(v: &mut Vec<T>) {
    v.clear();
    v.shrink_to(KEEP);
}
