//! How definitions are ordered: the kernel proper before the copies of its names that `tools/`,
//! `samples/`, selftests and documentation carry, bodies before declarations, generic code
//! before one architecture's. Shared by the queries and by the index, which stores each
//! defined name's best rank for search ([`crate::defined`]).

use knav_ctags::Kind;

/// Ranking key of a definition, smaller first: the kernel proper before `tools/`, `samples/`,
/// selftests and documentation (which carry their own copies of kernel names); then (after
/// rare code, see `Query::rare`) bodies, then prototypes and `extern` declarations, then
/// members; then generic code before one architecture's.
pub fn rank(kind: Kind, path: &str) -> (u8, u8, u8) {
    (
        is_copy(path) as u8,
        decl(kind),
        path.starts_with("arch/") as u8,
    )
}

/// True for the copies of kernel names that `tools/`, `samples/`, selftests and documentation
/// carry.
fn is_copy(path: &str) -> bool {
    path.starts_with("tools/")
        || path.starts_with("samples/")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_bytes_order_as_the_definition_ranking() {
        let b = |k, p| PathRank::of(p).byte(k);
        assert!(b(Kind::Function, "mm/slub.c") < b(Kind::Macro, "include/linux/slab.h"));
        assert!(b(Kind::Prototype, "include/linux/slab.h") < b(Kind::Function, "tools/x.c"));
        assert!(b(Kind::Function, "arch/x86/mm/a.c") < b(Kind::Function, "arch/um/a.c"));
        assert!(b(Kind::Function, "mm/a.c") < b(Kind::Function, "arch/x86/a.c"));
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
