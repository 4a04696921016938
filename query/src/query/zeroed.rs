//! Zeroed memory for search_code's per-document sums (`code::Sums`): mapped from the kernel,
//! 2 MiB aligned and advised to be backed by huge pages, so a query process that touches
//! documents all over its ~11 MB takes a few faults instead of one a 4 KiB page (about 3,200
//! faults, a sixth of a whole `knav search`). Where the mapping fails, an ordinary zeroed
//! allocation serves.

/// The huge page size the mapping is aligned to.
const HUGE: usize = 2 << 20;

/// `len` zeroed bytes, 4-byte aligned at least.
pub struct Zeroed {
    ptr: *mut u8,
    len: usize,
    /// The fallback allocation, when the mapping failed (`None`: `ptr` is a mapping).
    heap: Option<Vec<u32>>,
}

// SAFETY: the memory is owned by this value alone, as a Vec's would be.
unsafe impl Send for Zeroed {}

impl Zeroed {
    /// `len` zeroed bytes.
    pub fn new(len: usize) -> Zeroed {
        Self::mapped(len).unwrap_or_else(|| {
            let mut heap = vec![0u32; len.div_ceil(4)];
            Zeroed {
                ptr: heap.as_mut_ptr().cast(),
                len,
                heap: Some(heap),
            }
        })
    }

    fn mapped(len: usize) -> Option<Zeroed> {
        let size = len.max(1).next_multiple_of(HUGE);
        let span = size.checked_add(HUGE)?;
        // SAFETY: an anonymous private mapping of `span` bytes; its unaligned head and tail
        // are unmapped below, and the aligned middle is owned by the value returned.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return None;
            }
            let base = p as usize;
            let start = base.next_multiple_of(HUGE);
            if start > base {
                libc::munmap(p, start - base);
            }
            let end = start + size;
            if base + span > end {
                libc::munmap(end as *mut libc::c_void, base + span - end);
            }
            libc::madvise(start as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
            Some(Zeroed {
                ptr: start as *mut u8,
                len: size,
                heap: None,
            })
        }
    }

    /// Its bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Its start, for slices of its bytes.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for Zeroed {
    fn drop(&mut self) {
        if self.heap.is_none() {
            // SAFETY: the aligned mapping made by `mapped`, unmapped once.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_memory_is_zero_aligned_and_writable() {
        let mut z = Zeroed::new(3 << 20);
        assert!(z.len() >= 3 << 20);
        assert_eq!(z.as_mut_ptr() as usize % 4, 0);
        // SAFETY: `len` bytes from the start are owned by `z`.
        let bytes = unsafe { std::slice::from_raw_parts_mut(z.as_mut_ptr(), z.len()) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes[(3 << 20) - 1] = 7;
        assert_eq!(bytes[(3 << 20) - 1], 7);
    }
}
