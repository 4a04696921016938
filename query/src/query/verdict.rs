//! What the active configuration (`--active-config`) says about a line, a file, a definition or
//! a Kconfig entry: built, undecided, or not built and why.

use std::cell::{OnceCell, RefCell};

use super::{Found, Query};
use crate::envelope::Hidden;
use knav_index::buildfiles::{AtomCache, KconfigEntry};
use knav_index::NameMap;

/// What the active configuration says about one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Built: every enclosing condition is true.
    Live,
    /// Not decided (a condition names something the config does not set, or the file was not
    /// scanned).
    Unknown,
    /// Not built, and why (shared: every line of a hidden file has the same reason).
    Hidden(std::rc::Rc<str>),
}

/// A guard condition's value under the active config, and the reason when it is false.
type Decided = (knav_kconfig::Tri, Option<std::rc::Rc<str>>);

/// What the active config decided during one question.
#[derive(Default)]
pub(super) struct ConfigMemo {
    /// Each guard condition evaluated once (a hot name's references repeat the same few
    /// conditions thousands of times).
    decided: RefCell<NameMap<String, Decided>>,
    /// Kbuild atoms evaluated, by id.
    kbuild_atoms: RefCell<AtomCache>,
    /// The config's architecture, looked up once.
    arch: OnceCell<Option<&'static str>>,
}

impl Query<'_> {
    /// What the active configuration says about `line` of a file; `None` without one.
    pub fn verdict(&self, seg: usize, file: u32, line: u32) -> Option<Verdict> {
        let config = self.page.active.as_deref()?;
        let facts = self.file_facts(seg, file);
        let built = facts
            .built
            .get_or_init(|| self.file_verdict(self.path(seg, file), config));
        if let Verdict::Hidden(_) = built {
            return Some(built.clone());
        }
        let Some(at) = facts.guards else {
            return Some(Verdict::Unknown);
        };
        let conds = self.snap.segments[seg].guard_at(at, line);
        Some(match self.guard_verdict(conds)? {
            Verdict::Live if *built == Verdict::Unknown => Verdict::Unknown,
            v => v,
        })
    }

    /// What the active configuration says about a line its `#if` conditions `conds` (a guard,
    /// outermost first, as [`knav_c::guard`] renders it) enclose, its file aside: `Hidden` with
    /// the first false condition, `Unknown` when one cannot be decided; `None` without a
    /// configuration. Each condition is evaluated once a question.
    pub fn guard_verdict<'c>(&self, conds: impl IntoIterator<Item = &'c str>) -> Option<Verdict> {
        let config = self.page.active.as_deref()?;
        let mut unknown = false;
        for cond in conds {
            let known = self.memo.config.decided.borrow().get(cond).cloned();
            let (tri, reason) = match known {
                Some(t) => t,
                None => {
                    let t = knav_kconfig::eval(cond, config);
                    let reason = (t == knav_kconfig::Tri::False).then(|| {
                        let symbols: Vec<String> = config_symbols(cond)
                            .into_iter()
                            .map(|s| config.describe(&s))
                            .collect();
                        let why = if symbols.is_empty() {
                            "false".to_string()
                        } else {
                            symbols.join(", ")
                        };
                        std::rc::Rc::from(format!("#if {cond}: {why}"))
                    });
                    self.memo
                        .config
                        .decided
                        .borrow_mut()
                        .insert(cond.to_string(), (t, reason.clone()));
                    (t, reason)
                }
            };
            match (tri, reason) {
                (knav_kconfig::Tri::Unknown, _) => unknown = true,
                (knav_kconfig::Tri::False, Some(reason)) => return Some(Verdict::Hidden(reason)),
                _ => {}
            }
        }
        Some(if unknown {
            Verdict::Unknown
        } else {
            Verdict::Live
        })
    }

    /// Whether `config` builds the file at `path` at all: only the configured architecture's
    /// `arch/` tree is; a C or assembly file is when Kbuild's Makefiles say so (a header is
    /// decided by its guards alone). `Live` means "no objection": the lines' guards decide.
    pub fn file_verdict(&self, path: &str, config: &knav_kconfig::Config) -> Verdict {
        let arch = *self.memo.config.arch.get_or_init(|| config.arch());
        if let (Some(arch), Some(rest)) = (arch, path.strip_prefix("arch/")) {
            if let Some((dir, _)) = rest.split_once('/') {
                if dir != arch {
                    return Verdict::Hidden(
                        format!("arch/{dir} is not built: the config's architecture is {arch}")
                            .into(),
                    );
                }
            }
        }
        let compiled = path.ends_with(".c") || path.ends_with(".S");
        match (&self.snap.build, compiled) {
            (Some(build), true) => {
                match build.decide_file(
                    path,
                    config,
                    &mut self.memo.config.kbuild_atoms.borrow_mut(),
                ) {
                    knav_kconfig::kbuild::Decision::Live => Verdict::Live,
                    knav_kconfig::kbuild::Decision::Unknown => Verdict::Unknown,
                    knav_kconfig::kbuild::Decision::Hidden(r) => Verdict::Hidden(r.into()),
                }
            }
            _ => Verdict::Live,
        }
    }

    /// The active configuration's architecture (`x86` for Debian's amd64 config), if any.
    pub fn config_arch(&self) -> Option<&'static str> {
        let config = self.page.active.as_deref()?;
        *self.memo.config.arch.get_or_init(|| config.arch())
    }

    /// True when the active configuration does not build the file at `path` at all (another
    /// architecture's `arch/`, a C file Kbuild leaves out); false without one. Definitions
    /// there are ranked after those it may build, wherever one is chosen.
    pub fn unbuilt(&self, path: &str) -> bool {
        self.page
            .active
            .as_deref()
            .is_some_and(|c| matches!(self.file_verdict(path, c), Verdict::Hidden(_)))
    }

    /// Splits `defs` by the active configuration: the ones kept with their `active` value
    /// (`Some(true)` decided, `None` undecided; all `None` without a config), and the hidden
    /// ones with their reasons.
    pub fn by_config<'a>(
        &self,
        defs: Vec<Found<'a>>,
    ) -> (Vec<(Found<'a>, Option<bool>)>, Vec<Hidden>) {
        let mut kept = Vec::with_capacity(defs.len());
        let mut hidden = Vec::new();
        for f in defs {
            match self.verdict(f.seg, f.def.file, f.def.line) {
                None | Some(Verdict::Unknown) => kept.push((f, None)),
                Some(Verdict::Live) => kept.push((f, Some(true))),
                Some(Verdict::Hidden(reason)) => hidden.push(Hidden {
                    path: self.path(f.seg, f.def.file).to_string(),
                    line: f.def.line,
                    reason: reason.to_string(),
                }),
            }
        }
        (kept, hidden)
    }

    /// [`Query::by_config`] for Kconfig entries: only their file (an architecture's Kconfig)
    /// can be out.
    pub fn kconfig_by_config(
        &self,
        entries: Vec<KconfigEntry>,
    ) -> (Vec<(KconfigEntry, Option<bool>)>, Vec<Hidden>) {
        let mut kept = Vec::with_capacity(entries.len());
        let mut hidden = Vec::new();
        for k in entries {
            match self
                .page
                .active
                .as_deref()
                .map(|c| self.file_verdict(&k.path, c))
            {
                Some(Verdict::Hidden(reason)) => hidden.push(Hidden {
                    path: k.path.clone(),
                    line: k.entry.line,
                    reason: reason.to_string(),
                }),
                Some(Verdict::Live) => kept.push((k, Some(true))),
                _ => kept.push((k, None)),
            }
        }
        (kept, hidden)
    }
}

/// The `CONFIG_` names in a condition, in order, once each.
pub(super) fn config_symbols(cond: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in cond.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.starts_with("CONFIG_") && !out.iter().any(|w| w == word) {
            out.push(word.to_string());
        }
    }
    out
}
