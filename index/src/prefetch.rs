//! A cache hint for the build's large tables: their lookups miss the caches one after another,
//! and asking for the memory a few lookups ahead lets the misses overlap.

/// Asks the CPU to bring the cache line at `p` in, without waiting for it.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; it reads nothing and cannot fault, whatever
    // the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
