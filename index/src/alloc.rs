//! The binary's allocator: the system's (glibc's malloc on Linux), and, once a large index
//! build asks for it ([`small_blocks_from_mimalloc`]), mimalloc for blocks of at most
//! [`SMALL`] bytes.
//!
//! A kernel build makes and frees hundreds of millions of small blocks (names, tags, per-file
//! tables) on five busy threads; glibc's malloc and free (`_int_malloc`, `unlink_chunk`,
//! `malloc_consolidate`) took nearly twice mimalloc's time (BENCHMARKS.md, "Design measurements").
//! A query never takes a block from mimalloc (mimalloc only starts in each process, two page
//! faults): as the whole process's allocator it made `knav def` take 1.36× its time (its
//! transparent huge pages, its purges at exit). Large blocks
//! stay with glibc, whose arenas and trims the build sets ([`limit_malloc_arenas`],
//! [`release_free_memory`]): with
//! mimalloc for every block, a kernel build's peak RSS rose by half.
//!
//! Which allocator owns a block is known from its address: mimalloc is given one arena of
//! address space, reserved when it is switched on and not committed until used, and may take
//! memory from nowhere else. A block inside it is mimalloc's, any other glibc's, so blocks made
//! before the switch are freed by glibc after it. (Asking mimalloc whether it owns a block,
//! `mi_is_in_heap_region`, tripled the time of the text index's build.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The largest block mimalloc serves.
pub const SMALL: usize = 64 << 10;

/// Address space asked for mimalloc's arena, the first size the system grants: far more than
/// a kernel build's small blocks at their peak (about 300 MB). When it is full, blocks come
/// from glibc again. (16 GiB was refused on a machine of 23 GB under the kernel's heuristic
/// overcommit.)
const ARENA_BYTES: [usize; 3] = [4 << 30, 1 << 30, 256 << 20];

/// Where mimalloc's arena starts and ends; both 0 until it is switched on.
static START: AtomicUsize = AtomicUsize::new(0);
static END: AtomicUsize = AtomicUsize::new(0);
/// Set by the first call of [`small_blocks_from_mimalloc`].
static ASKED: AtomicBool = AtomicBool::new(false);
/// Set when mimalloc gave a block outside its arena: no block is asked of it again (those it
/// made in its arena are still freed by it).
static STRAYED: AtomicBool = AtomicBool::new(false);

/// mimalloc's options (`mi_option_t` of mimalloc 3, which libmimalloc-sys builds). The crate's
/// version is pinned exactly in Cargo.toml, and a test reads these numbers out of the header it
/// builds from: a new mimalloc that renumbers them fails that test rather than the heap. Should
/// one mean something else all the same, a block from outside the arena is noticed when it is
/// made (see [`from_either`]) and mimalloc is no longer used.
const MI_OPTION_PURGE_DELAY: i32 = 15;
const MI_OPTION_DISALLOW_OS_ALLOC: i32 = 17;
const MI_OPTION_ARENA_PURGE_MULT: i32 = 24;

extern "C" {
    fn mi_option_set(option: i32, value: std::ffi::c_long);
    fn mi_reserve_os_memory_ex(
        size: usize,
        commit: bool,
        allow_large: bool,
        exclusive: bool,
        arena_id: *mut *mut c_void,
    ) -> i32;
    fn mi_arena_area(arena_id: *mut c_void, size: *mut usize) -> *mut c_void;
    fn mi_usable_size(p: *const c_void) -> usize;
}

/// Makes later blocks of at most [`SMALL`] bytes come from mimalloc, for the rest of the
/// process; true when they do. Meant for a large index build (see `index::MIMALLOC_FILES`).
/// Only the first call does anything.
pub fn small_blocks_from_mimalloc() -> bool {
    if ASKED.swap(true, Ordering::SeqCst) {
        return END.load(Ordering::Acquire) != 0;
    }
    // mimalloc reads its settings from the environment at its start: MIMALLOC_RESERVE_OS_MEMORY
    // and others make it reserve arenas of its own, whose blocks glibc would then be given to
    // free. With any of them set, the build keeps glibc.
    if std::env::vars_os().any(|(k, _)| k.as_encoded_bytes().starts_with(b"MIMALLOC_")) {
        return false;
    }
    let mut arena: *mut c_void = std::ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: mimalloc's options are plain settings, set before it allocates anything (no
    // block comes from it before START and END are set below); the arena id and size are
    // written by mimalloc into the locals given.
    let start = unsafe {
        // Freed pages go back to the system at once: with mimalloc's default delay, a kernel
        // build's peak RSS grew by a fifth.
        mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        mi_option_set(MI_OPTION_ARENA_PURGE_MULT, 0);
        mi_option_set(MI_OPTION_DISALLOW_OS_ALLOC, 1);
        let reserved = ARENA_BYTES
            .iter()
            .any(|&bytes| mi_reserve_os_memory_ex(bytes, false, false, false, &mut arena) == 0);
        if !reserved {
            return false;
        }
        mi_arena_area(arena, &mut size)
    };
    if start.is_null() || size == 0 {
        return false;
    }
    START.store(start as usize, Ordering::Release);
    END.store(start as usize + size, Ordering::Release);
    true
}

/// True when `ptr` is in mimalloc's arena.
#[inline]
fn mimalloc_owns(ptr: *mut u8) -> bool {
    let p = ptr as usize;
    // Acquire: a thread that sees END set sees START too (stored before END's Release).
    p < END.load(Ordering::Acquire) && p >= START.load(Ordering::Relaxed)
}

/// True when a block of `size` bytes is to come from mimalloc.
#[inline]
fn from_mimalloc(size: usize) -> bool {
    size <= SMALL && END.load(Ordering::Relaxed) != 0 && !STRAYED.load(Ordering::Relaxed)
}

/// `p`, a block mimalloc just made, when it lies in its arena; else (mimalloc took memory from
/// elsewhere, which its options forbid) the block is given back to mimalloc, mimalloc is not
/// asked again, and null is returned: glibc must never be handed such a block to free.
#[inline]
unsafe fn in_arena(p: *mut u8) -> *mut u8 {
    if p.is_null() || mimalloc_owns(p) {
        return p;
    }
    STRAYED.store(true, Ordering::Relaxed);
    libmimalloc_sys::mi_free(p as *mut c_void);
    std::ptr::null_mut()
}

/// The system's allocator, and mimalloc for small blocks once switched on.
pub struct Alloc;

/// A block of `layout` from mimalloc's `mi` (its size and alignment as arguments) when it is
/// to come from mimalloc and mimalloc has room, else from `system`.
#[inline(always)]
unsafe fn from_either(
    layout: Layout,
    mi: unsafe extern "C" fn(usize, usize) -> *mut c_void,
    system: impl FnOnce() -> *mut u8,
) -> *mut u8 {
    if from_mimalloc(layout.size()) {
        let p = in_arena(mi(layout.size(), layout.align()) as *mut u8);
        if !p.is_null() {
            return p;
        }
    }
    system()
}

// SAFETY: a block is freed by the allocator that owns its address (mimalloc's arena or not),
// whichever allocated it; mimalloc returns blocks of the asked size and alignment, or null
// (the arena full), and then glibc is asked. `realloc` keeps a block with its owner, or copies
// it into a new block and frees the old one with its own.
unsafe impl GlobalAlloc for Alloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        from_either(layout, libmimalloc_sys::mi_malloc_aligned, || {
            System.alloc(layout)
        })
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        from_either(layout, libmimalloc_sys::mi_zalloc_aligned, || {
            System.alloc_zeroed(layout)
        })
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mimalloc_owns(ptr) {
            libmimalloc_sys::mi_free(ptr as *mut c_void)
        } else {
            System.dealloc(ptr, layout)
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !mimalloc_owns(ptr) {
            return System.realloc(ptr, layout, new_size);
        }
        // A block that already has the room keeps its place (it is in the arena).
        if new_size <= mi_usable_size(ptr as *const c_void) {
            return ptr;
        }
        if new_size <= SMALL && !STRAYED.load(Ordering::Relaxed) {
            // Into a new block of mimalloc's, checked to be in the arena, then copied: mimalloc's
            // own realloc frees the old block when it moves it, and a stray new block could then
            // not be refused.
            let p =
                in_arena(libmimalloc_sys::mi_malloc_aligned(new_size, layout.align()) as *mut u8);
            if !p.is_null() {
                std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                libmimalloc_sys::mi_free(ptr as *mut c_void);
                return p;
            }
        }
        // Too large for mimalloc (or its arena full): into a block of glibc's.
        // SAFETY: the caller guarantees new_size, rounded up to the alignment, does not
        // overflow isize (GlobalAlloc::realloc's contract).
        let new = System.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
        if !new.is_null() {
            std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
            libmimalloc_sys::mi_free(ptr as *mut c_void);
        }
        new
    }
}

/// While alive, glibc maps every block of 1 MiB or more on its own and unmaps it when freed
/// (a segment build, a history update). glibc otherwise raises its threshold to the largest
/// block freed: after the first large generated header or blob, every later one came from a
/// heap and stayed counted in the RSS when freed (BENCHMARKS.md, "History in bounded memory").
/// Setting the threshold turns glibc's dynamic threshold off for the rest of the process, for
/// good: dropped, this fixes it at 32 MiB (the most the dynamic threshold would reach; glibc's
/// starting 128 KiB would map every larger buffer afresh), so that a server's queries keep
/// reusing their large buffers from the heap.
pub struct LargeBlocksMapped;

impl LargeBlocksMapped {
    /// Large blocks mapped on their own until the value is dropped.
    pub fn start() -> LargeBlocksMapped {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes allocator tuning; it is safe to call at any time.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        }
        LargeBlocksMapped
    }
}

impl Drop for LargeBlocksMapped {
    fn drop(&mut self) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: as in `start`.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        }
    }
}

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
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; it is safe to call any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option numbers above are mimalloc's in the header of the pinned libmimalloc-sys that
    /// the build compiled (from Cargo's registry).
    #[test]
    fn mimalloc_option_numbers_match_the_pinned_header() {
        let manifest = include_str!("../Cargo.toml");
        let version = manifest
            .lines()
            .find_map(|l| l.strip_prefix("libmimalloc-sys = { version = \"="))
            .and_then(|l| l.split('"').next())
            .expect("Cargo.toml pins libmimalloc-sys with an exact version (=x.y.z)");
        let home = std::env::var_os("CARGO_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")))
            .expect("CARGO_HOME or HOME");
        let header = std::fs::read_dir(home.join("registry/src"))
            .expect("Cargo's registry sources (the build read libmimalloc-sys from there)")
            .flatten()
            .map(|d| {
                d.path()
                    .join(format!("libmimalloc-sys-{version}"))
                    .join("c_src/mimalloc/v3/include/mimalloc.h")
            })
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no mimalloc.h of libmimalloc-sys {version} in {home:?}"));
        let text = std::fs::read_to_string(&header).unwrap();
        let body = text
            .split("typedef enum mi_option_e {")
            .nth(1)
            .and_then(|b| b.split('}').next())
            .expect("mi_option_e in mimalloc.h");
        let names: Vec<&str> = body
            .lines()
            .map(|l| l.split("//").next().unwrap_or("").trim())
            .filter(|l| l.starts_with("mi_option_") && !l.contains('='))
            .map(|l| l.trim_end_matches(','))
            .collect();
        let number = |name: &str| names.iter().position(|n| *n == name).map(|i| i as i32);
        assert_eq!(number("mi_option_purge_delay"), Some(MI_OPTION_PURGE_DELAY));
        assert_eq!(
            number("mi_option_disallow_os_alloc"),
            Some(MI_OPTION_DISALLOW_OS_ALLOC)
        );
        assert_eq!(
            number("mi_option_arena_purge_mult"),
            Some(MI_OPTION_ARENA_PURGE_MULT)
        );
    }

    /// Blocks made before the switch and after it, small and large, keep their bytes through
    /// `realloc` across the threshold and are freed by their owners.
    #[test]
    fn blocks_from_before_and_after_the_switch_move_and_free() {
        let bytes: Vec<u8> = (0..SMALL).map(|i| (i % 251) as u8).collect();
        let layout = |size, align| Layout::from_size_align(size, align).unwrap();
        // SAFETY: each block is used within its size and freed with its layout.
        unsafe {
            // The only test that switches mimalloc on: this block is glibc's.
            let before = Alloc.alloc(layout(100, 8));
            assert!(!before.is_null());
            assert!(!mimalloc_owns(before));
            assert!(
                small_blocks_from_mimalloc(),
                "the arena could not be reserved"
            );
            assert!(small_blocks_from_mimalloc(), "a second call keeps it on");
            for align in [1, 8, 64] {
                let p = Alloc.alloc(layout(SMALL, align));
                assert!(mimalloc_owns(p));
                assert_eq!(p as usize % align, 0);
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, SMALL);
                let big = Alloc.realloc(p, layout(SMALL, align), 4 * SMALL);
                assert!(!big.is_null() && !mimalloc_owns(big));
                assert_eq!(big as usize % align, 0);
                assert_eq!(std::slice::from_raw_parts(big, SMALL), &bytes[..]);
                let back = Alloc.realloc(big, layout(4 * SMALL, align), 100);
                assert_eq!(std::slice::from_raw_parts(back, 100), &bytes[..100]);
                Alloc.dealloc(back, layout(100, align));
                let small = Alloc.alloc(layout(10, align));
                assert!(mimalloc_owns(small));
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), small, 10);
                let grown = Alloc.realloc(small, layout(10, align), 1000);
                assert!(mimalloc_owns(grown));
                assert_eq!(std::slice::from_raw_parts(grown, 10), &bytes[..10]);
                Alloc.dealloc(grown, layout(1000, align));
            }
            // Zeroed blocks are zero on both sides of the threshold.
            for size in [1, 100, SMALL, SMALL + 1, 8 * SMALL] {
                let p = Alloc.alloc_zeroed(layout(size, 8));
                assert!(!p.is_null());
                assert_eq!(mimalloc_owns(p), size <= SMALL);
                assert!(std::slice::from_raw_parts(p, size).iter().all(|&b| b == 0));
                Alloc.dealloc(p, layout(size, 8));
            }
            // A block glibc made before the switch is grown and freed by glibc.
            let moved = Alloc.realloc(before, layout(100, 8), 200);
            assert!(!mimalloc_owns(moved));
            Alloc.dealloc(moved, layout(200, 8));
        }
    }
}
