//! The binary's allocator: blocks of at most [`SMALL`] bytes come from mimalloc, larger ones from
//! the system's allocator (glibc's malloc on Linux).
//!
//! A kernel build makes and frees hundreds of millions of small blocks (names, tags, per-file
//! tables) on five busy threads. In a perf profile of a whole kernel build, glibc's malloc and
//! free took 4.6 s of its 65 s of CPU (`_int_malloc`, `unlink_chunk`, `malloc_consolidate`);
//! with this allocator, mimalloc's took 2.7 s and glibc's 0.05 s. mimalloc alone kept freed
//! large buffers mapped, and the build's peak RSS rose from 455 MB to 695 MB; large blocks stay
//! with glibc, whose thresholds and trims the build sets (see `index::build`), and the peak is
//! about 465 MB.
//!
//! Which allocator owns a block is known from its size alone: Rust passes a block's layout to
//! `dealloc` and `realloc`, the same as it was allocated with.

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// The largest block mimalloc serves.
pub const SMALL: usize = 64 << 10;

/// Small blocks from mimalloc, large ones from [`System`].
pub struct Split;

fn small(size: usize) -> bool {
    size <= SMALL
}

// SAFETY: each block is allocated and freed by the same allocator, chosen by its size, which
// is the same at `alloc` and `dealloc` (GlobalAlloc's contract); a block that changes owner in
// `realloc` is copied into a new block of the other and freed by its own.
unsafe impl GlobalAlloc for Split {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if small(layout.size()) {
            MiMalloc.alloc(layout)
        } else {
            System.alloc(layout)
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if small(layout.size()) {
            MiMalloc.alloc_zeroed(layout)
        } else {
            System.alloc_zeroed(layout)
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if small(layout.size()) {
            MiMalloc.dealloc(ptr, layout)
        } else {
            System.dealloc(ptr, layout)
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (small(layout.size()), small(new_size)) {
            (true, true) => MiMalloc.realloc(ptr, layout, new_size),
            (false, false) => System.realloc(ptr, layout, new_size),
            _ => {
                // SAFETY: the caller guarantees new_size, rounded up to the alignment, does
                // not overflow isize (GlobalAlloc::realloc's contract).
                let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                let new = self.alloc(new_layout);
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block keeps its bytes when `realloc` moves it from one allocator to the other and back.
    #[test]
    fn realloc_across_the_threshold_keeps_the_bytes() {
        let bytes: Vec<u8> = (0..SMALL).map(|i| (i % 251) as u8).collect();
        for align in [1, 8, 64] {
            let layout = Layout::from_size_align(SMALL, align).unwrap();
            // SAFETY: each block is used within its size and freed with its layout.
            unsafe {
                let p = Split.alloc(layout);
                assert!(!p.is_null());
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, SMALL);
                let big = Split.realloc(p, layout, 4 * SMALL);
                assert!(!big.is_null());
                assert_eq!(big as usize % align, 0);
                assert_eq!(std::slice::from_raw_parts(big, SMALL), &bytes[..]);
                let big_layout = Layout::from_size_align(4 * SMALL, align).unwrap();
                let back = Split.realloc(big, big_layout, 100);
                assert!(!back.is_null());
                assert_eq!(back as usize % align, 0);
                assert_eq!(std::slice::from_raw_parts(back, 100), &bytes[..100]);
                Split.dealloc(back, Layout::from_size_align(100, align).unwrap());
            }
        }
    }

    /// Zeroed blocks are zero on both sides of the threshold.
    #[test]
    fn zeroed_blocks_are_zero() {
        for size in [1, 100, SMALL, SMALL + 1, 8 * SMALL] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            // SAFETY: the block is read within its size and freed with its layout.
            unsafe {
                let p = Split.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert!(std::slice::from_raw_parts(p, size).iter().all(|&b| b == 0));
                Split.dealloc(p, layout);
            }
        }
    }
}
