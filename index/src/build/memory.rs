//! glibc's allocator tuned for a build: arenas capped, free pages given back.

/// Caps glibc's malloc arenas. Buffers made on worker threads are freed on accumulator
/// threads; with an arena per thread, freed memory piles up where no one allocates again,
/// and the peak RSS of a kernel build grows by about a tenth. Four arenas for the build's five
/// busy threads: two made waiting for an arena's lock a visible share of the CPU, four a
/// negligible one for a few MB of peak (BENCHMARKS.md, "Design measurements").
pub(crate) fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; it is safe to call at any time.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 4);
    }
}

/// Gives the heap's free pages back to the system: what the scan's buffers (the files read,
/// their names and search documents) leave free stays counted in the RSS otherwise, under the
/// merge that follows.
pub(super) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; it is safe to call any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
