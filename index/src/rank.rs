//! How definitions are ordered: the kernel proper before the copies of its names that `tools/`,
//! `samples/`, selftests and documentation carry, bodies before declarations, generic code
//! before one architecture's. Shared by the queries and by the index, which stores each
//! defined name's best rank for search ([`crate::defined`]).

use knav_ctags::Kind;

/// Ranking key of a definition, smaller first: the kernel proper before `tools/`, `samples/`,
/// `scripts/`, `usr/`, selftests and documentation (which carry their own copies of kernel names); then
/// bodies, then prototypes and `extern` declarations, then members (each kind with code common
/// builds leave out after the rest, see `Query::rare`); then generic code before one
/// architecture's.
pub fn rank(kind: Kind, path: &str) -> (u8, u8, u8) {
    (
        is_copy(path) as u8,
        decl(kind),
        path.starts_with("arch/") as u8,
    )
}

/// True for the copies of kernel names that `tools/`, `samples/`, selftests and documentation
/// carry, and for the user-space programs the build runs (`scripts/`: `def current` listed
/// scripts/kconfig/gconf.c's variable first; `usr/gen_init_cpio.c`).
fn is_copy(path: &str) -> bool {
    path.starts_with("tools/")
        || path.starts_with("samples/")
        || path.starts_with("scripts/")
        || path.starts_with("usr/")
        || path.contains("/selftests/")
        || path.starts_with("Documentation/")
}

/// Bodies (functions, variables, types), then `#define`s (a local override such as
/// lib/decompress_unxz.c's `#define kfree(ptr) free(ptr)` must not come before mm/slub.c's
/// kfree), then declarations, then members and locals (other entities of the same name:
/// `knav def kmap` listed nine drm struct members before the prototype of the function).
fn decl(kind: Kind) -> u8 {
    match kind {
        Kind::Member | Kind::Label | Kind::Local => 3,
        Kind::Prototype | Kind::Externvar | Kind::Entry => 2,
        Kind::Macro => 1,
        _ => 0,
    }
}

/// What a path gives [`rank`], worked out once per file (the index ranks millions of
/// definitions of sixty thousand files); [`PathRank::byte`] is the rank in one byte, with
/// User-mode Linux's `arch/um` (a rare build carrying its own copies of kernel names) after
/// the other architectures: what the index stores per defined name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathRank(u8);

impl PathRank {
    /// The path's part of the rank.
    pub fn of(path: &str) -> PathRank {
        let copy = is_copy(path) as u8;
        let um = path.starts_with("arch/um/") as u8;
        let arch = path.starts_with("arch/") as u8;
        PathRank((copy << 4) | (um << 3) | arch)
    }

    /// The rank byte of a definition of `kind` in the path.
    pub fn byte(self, kind: Kind) -> u8 {
        self.0 | (decl(kind) << 1)
    }
}

/// What a file is, for search_code's scope: the kernel's own code, its tests (`tools/testing/`,
/// selftests, `samples/`, KUnit tests), its documentation, or the user-space tools under
/// `tools/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathClass {
    /// The kernel's own code.
    Code = 0,
    /// Tests and samples.
    Tests = 1,
    /// `Documentation/`.
    Docs = 2,
    /// The rest of `tools/`.
    Tools = 3,
}

impl PathClass {
    /// The class of the file at `path`. A KUnit test lives in a `tests` or `kunit` directory
    /// or a file named `*_test.c`, `*-test.c`, `*_kunit.c`, `*_tests.c` or `lib/test_*.c`.
    pub fn of(path: &str) -> PathClass {
        if path.starts_with("Documentation/") {
            return PathClass::Docs;
        }
        let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
        let stem = file.strip_suffix(".c").or(file.strip_suffix(".h"));
        let kunit = stem.is_some_and(|s| {
            ["_test", "-test", "_kunit", "_tests", "-kunit"]
                .iter()
                .any(|e| s.ends_with(e))
                || (dir == "lib" && s.starts_with("test_"))
        });
        let test_dir = dir
            .split('/')
            .any(|c| matches!(c, "tests" | "kunit" | "selftests" | "testing"));
        if path.starts_with("samples/") || test_dir || kunit {
            PathClass::Tests
        } else if path.starts_with("tools/") {
            PathClass::Tools
        } else {
            PathClass::Code
        }
    }

    /// The class kept in the bits 5 and 6 of a rank byte by [`PathClass::with`].
    pub fn in_byte(byte: u8) -> PathClass {
        match (byte >> 5) & 3 {
            0 => PathClass::Code,
            1 => PathClass::Tests,
            2 => PathClass::Docs,
            _ => PathClass::Tools,
        }
    }

    /// `byte` with the class in its bits 5 and 6 (a [`PathRank::byte`] uses bits 0 to 4).
    pub fn with(self, byte: u8) -> u8 {
        byte | ((self as u8) << 5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_code_tests_docs_or_tools() {
        for (path, class) in [
            ("mm/vmscan.c", PathClass::Code),
            ("kernel/sched/core.c", PathClass::Code),
            ("lib/string.c", PathClass::Code),
            ("lib/test_bpf.c", PathClass::Tests),
            ("mm/kasan/kasan_test.c", PathClass::Tests),
            ("fs/ext4/mballoc-test.c", PathClass::Tests),
            (
                "drivers/gpu/drm/tests/drm_connector_test.c",
                PathClass::Tests,
            ),
            ("lib/kunit/test.c", PathClass::Tests),
            ("tools/testing/selftests/bpf/progs/a.c", PathClass::Tests),
            ("samples/bpf/xdp1_kern.c", PathClass::Tests),
            ("tools/perf/builtin-top.c", PathClass::Tools),
            ("Documentation/bpf/a.c", PathClass::Docs),
        ] {
            assert_eq!(PathClass::of(path), class, "{path}");
            let byte = class.with(PathRank::of(path).byte(Kind::Function));
            assert_eq!(PathClass::in_byte(byte), class, "{path}");
            assert_eq!(byte & 31, PathRank::of(path).byte(Kind::Function), "{path}");
        }
    }

    #[test]
    fn rank_bytes_order_as_the_definition_ranking() {
        let b = |k, p| PathRank::of(p).byte(k);
        assert!(b(Kind::Function, "mm/slub.c") < b(Kind::Macro, "include/linux/slab.h"));
        assert!(b(Kind::Prototype, "include/linux/slab.h") < b(Kind::Function, "tools/x.c"));
        assert!(b(Kind::Function, "arch/x86/mm/a.c") < b(Kind::Function, "arch/um/a.c"));
        assert!(b(Kind::Function, "mm/a.c") < b(Kind::Function, "arch/x86/a.c"));
    }

    #[test]
    fn user_space_programs_of_scripts_and_usr_rank_after_the_kernel() {
        // `def current` listed scripts/kconfig/gconf.c's variable before the kernel's #define.
        assert!(
            rank(Kind::Macro, "include/asm-generic/current.h")
                < rank(Kind::Variable, "scripts/kconfig/gconf.c")
        );
        assert_eq!(rank(Kind::Variable, "usr/gen_init_cpio.c").0, 1);
        assert_eq!(rank(Kind::Function, "kernel/scripts.c").0, 0);
    }

    #[test]
    fn the_rank_byte_holds_the_rank_and_arch_um() {
        let paths = [
            "mm/slub.c",
            "tools/x.c",
            "arch/um/a.c",
            "arch/x86/a.c",
            "a/selftests/b.c",
        ];
        let kinds = [Kind::Function, Kind::Macro, Kind::Member, Kind::Prototype];
        for p in paths {
            for k in kinds {
                let (copies, decl, arch) = rank(k, p);
                let um = p.starts_with("arch/um/") as u8;
                let want = (copies << 4) | (um << 3) | (decl << 1) | arch;
                assert_eq!(PathRank::of(p).byte(k), want, "{p} {k:?}");
            }
        }
    }
}
