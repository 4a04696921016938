//! The order of a name's definitions: the kernel proper before `tools/`, `samples/` and
//! selftests, code of common builds before `arch/um` and no-MMU or negated-condition files,
//! bodies before prototypes and `extern` declarations, then path order.

use std::cell::RefCell;
use std::collections::HashMap;

use knav_ctags::Kind;

use super::{structs, Found, Query};
use knav_index::buildfiles::AtomCache;
use knav_index::format::Def;
use knav_index::rank::rank;

/// User-mode Linux's architecture: a rare build carrying its own copies of kernel names.
pub(crate) const UML: &str = "arch/um/";

/// Which files common builds leave out, decided once per question ([`Query::rare`]).
#[derive(Default)]
pub(super) struct RareMemo {
    /// Kbuild atoms evaluated with every symbol `y`.
    all_yes_atoms: RefCell<AtomCache>,
    /// Kbuild atoms evaluated with no symbol set.
    all_no_atoms: RefCell<AtomCache>,
    /// The answer for each path asked.
    by_path: RefCell<HashMap<String, bool>>,
}

impl Query<'_> {
    /// Sorts the definitions of one name as [`Query::definitions`] returns them.
    pub(super) fn rank_definitions(&self, out: &mut [Found<'_>]) {
        if out.len() <= 1 {
            return;
        }
        out.sort_by_cached_key(|f| {
            let path = self.snap.segments[f.seg].file_path(f.def.file);
            let (copies, decl, arch) = rank(f.def.kind, path);
            (
                // A member named like a function is another entity: after the function's
                // every definition (`kmalloc`'s bcachefs flag after tools/' copies).
                decl == 3,
                copies,
                self.unbuilt(path),
                // User-mode Linux's copies of kernel names after the kernel's own, whatever
                // their kind (printk's #define before arch/um's static inline).
                path.starts_with(UML),
                // A body a common build leaves out still comes before a declaration of it:
                // rare only orders bodies among themselves (ath9k_hw_deinit's hw.c, built
                // by a selected symbol, before its prototype in hw.h).
                decl,
                self.rare(path),
                only_its_file(&f.def, path),
                f.def.kind == Kind::Macro && !structs::global_for(path, ""),
                arch,
                path.to_string(),
                f.def.line,
            )
        });
    }

    /// True when a file is built only in uncommon configurations, so that without a config a
    /// name's usual definition comes first: User-mode Linux's `arch/um` (which carries its own
    /// copies of kernel names, `printk` among them), and generic C files Kbuild builds only when
    /// a symbol is *not* set (not built with every symbol `y`: `mm/nommu.c`, which `mmu-y :=
    /// nommu.o` names until `mmu-$(CONFIG_MMU) :=` replaces it).
    pub fn rare(&self, path: &str) -> bool {
        if path.starts_with(UML) {
            return true;
        }
        let Some(build) = &self.snap.build else {
            return false;
        };
        // Architectures' own choices (`ifeq ($(CONFIG_X86_32),y) … else …`) are left alone.
        if path.starts_with("arch/") || !(path.ends_with(".c") || path.ends_with(".S")) {
            return false;
        }
        if let Some(&known) = self.memo.rare.by_path.borrow().get(path) {
            return known;
        }
        static ALL_YES: std::sync::LazyLock<knav_kconfig::Config> =
            std::sync::LazyLock::new(knav_kconfig::Config::all_yes);
        static ALL_NO: std::sync::LazyLock<Option<knav_kconfig::Config>> =
            std::sync::LazyLock::new(|| knav_kconfig::Config::parse("").ok());
        use knav_kconfig::kbuild::Decision;
        let rare = match build.decide_file(
            path,
            &ALL_YES,
            &mut self.memo.rare.all_yes_atoms.borrow_mut(),
        ) {
            Decision::Hidden(_) => true,
            // Built by a symbol that is off in common builds: `obj-$(CONFIG_TINY_RCU) +=
            // tiny.o`, whose Kconfig entry is `default y if !PREEMPT_RCU && !SMP`.
            _ => ALL_NO.as_ref().is_some_and(|none| {
                match build.decide_file(path, none, &mut self.memo.rare.all_no_atoms.borrow_mut()) {
                    Decision::Hidden(reason) => {
                        let symbols = super::verdict::config_symbols(&reason);
                        !symbols.is_empty()
                            && symbols.iter().all(|s| {
                                let entries = build.entries(s);
                                !entries.is_empty()
                                    && entries.iter().all(|e| off_in_common_builds(&e.entry))
                            })
                    }
                    _ => false,
                }
            }),
        };
        self.memo
            .rare
            .by_path
            .borrow_mut()
            .insert(path.to_string(), rare);
        rare
    }
}

/// True for a Kconfig entry a build with every visible symbol set leaves off: one that
/// depends on a symbol *not* being set (`depends on !SMP`), or has no prompt and only defaults
/// under such a condition (`TINY_RCU`: `default y if !PREEMPT_RCU && !SMP`).
fn off_in_common_builds(e: &knav_kconfig::kconfig::Entry) -> bool {
    let negated = |cond: &str| {
        cond.split("&&").any(|c| {
            c.trim()
                .strip_prefix('!')
                .is_some_and(|r| !r.starts_with('='))
        })
    };
    if e.depends.iter().any(|d| negated(d)) {
        return true;
    }
    e.prompt.is_none()
        && !e.defaults.is_empty()
        && e.defaults.iter().all(|d| {
            let (value, cond) = d.split_once(" if ").unwrap_or((d, ""));
            value.trim() == "n" || negated(cond)
        })
}

/// True for a definition no other file sees: a `static` function or variable, a `#define` of a
/// file that is not a header.
pub(crate) fn only_its_file(def: &Def<'_>, path: &str) -> bool {
    def.file_local || (def.kind == Kind::Macro && !path.ends_with(".h"))
}
