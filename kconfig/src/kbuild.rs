//! Which objects and directories Kbuild builds, and under which conditions: the directories are
//! followed down from the top (`Kbuild`, else `Makefile`: `obj-y += kernel/`), the top
//! `Makefile`'s and each `arch/*/Makefile`'s `core-y`/`drivers-y`/`libs-y`, and every
//! directory's `Kbuild` or `Makefile` (`obj-$(CONFIG_EXT4_FS) += ext4.o`, `ext4-y := …`).
//!
//! The answer, [`Presence`], gives each object (`fs/ext4/acl.o`, standing for `acl.c` or
//! `acl.S`) and each directory reached (`fs/ext4/`) its presence condition: alternatives (any
//! one builds it), each a conjunction of [`Atom`]s. It does not depend on a configuration, so
//! it is worked out once per tree; [`decide`] evaluates one under a `.config`.

use std::collections::{BTreeMap, HashMap};

use crate::config::Config;
use crate::expr::Tri;
use crate::makefile::{self, Atom, Makefile, Suffix, Test};

/// A path's presence condition: alternatives of conjunctions of atom ids.
pub type Condition = Vec<Vec<u32>>;

/// Presence conditions of the objects and directories Kbuild reaches.
#[derive(Clone, Debug, Default)]
pub struct Presence {
    /// Every atom, indexed by the ids in the conditions.
    pub atoms: Vec<Atom>,
    /// By object path (`fs/ext4/acl.o`) or directory path with a trailing `/` (`fs/ext4/`;
    /// the top is `""`).
    pub paths: BTreeMap<String, Condition>,
    /// Makefiles read, by path.
    pub makefiles: Vec<String>,
}

/// A path reached in more ways than this gets one undecidable alternative instead of more.
const MAX_ALTERNATIVES: usize = 8;
/// Directories deeper than this are not followed (a guard against `obj-y += ./`).
const MAX_DEPTH: usize = 40;
/// Conditions on one path's alternative, its directories' included; see [`Resolver::with`].
const MAX_CONJUNCTION: usize = 64;

/// What [`decide`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Some alternative holds.
    Live,
    /// No alternative can be shown to hold or to fail.
    Unknown,
    /// Every alternative fails; the first one's reason.
    Hidden(String),
}

/// Evaluates a condition (alternatives of atoms) under `config`.
pub fn decide<'a, A, I>(alternatives: A, config: &Config) -> Decision
where
    A: IntoIterator<Item = I>,
    I: IntoIterator<Item = &'a Atom>,
{
    let mut first_reason = None;
    let mut unknown = false;
    let mut any = false;
    for alt in alternatives {
        any = true;
        let mut value = Tri::True;
        for atom in alt {
            match atom.eval(config) {
                Tri::True => {}
                Tri::Unknown => value = Tri::Unknown,
                Tri::False => {
                    value = Tri::False;
                    if first_reason.is_none() {
                        first_reason = Some(atom.reason(config));
                    }
                    break;
                }
            }
        }
        match value {
            Tri::True => return Decision::Live,
            Tri::Unknown => unknown = true,
            Tri::False => {}
        }
    }
    match (any, unknown, first_reason) {
        (true, false, Some(r)) => Decision::Hidden(r),
        _ => Decision::Unknown,
    }
}

/// Works out the presence of every object and directory reachable from the top. `read` gives
/// the text of a root-relative file, `None` when it does not exist; `arches` are the names of
/// the `arch/` subdirectories.
pub fn resolve(read: &(dyn Fn(&str) -> Option<String> + Sync), arches: &[String]) -> Presence {
    let mut r = Resolver {
        read,
        makefiles: HashMap::new(),
        atoms: HashMap::new(),
        out: Presence::default(),
    };
    r.out.paths.insert(String::new(), vec![vec![]]);
    let top = r.makefile("");
    if let Some(top) = &top {
        r.walk_objects("", top, &[], 0, arches);
    }
    // `core-y`, `drivers-y` and `libs-y` name directories from the top: in the top Makefile
    // (`libs-y := lib/`) and in each architecture's.
    let mut roots: Vec<(String, Vec<u32>)> = vec![("Makefile".into(), vec![])];
    for a in arches {
        let atom = r.intern(Atom {
            symbol: String::new(),
            test: Test::Arch(a.clone()),
            origin: format!("arch/{a}/Makefile"),
        });
        roots.push((format!("arch/{a}/Makefile"), vec![atom]));
    }
    for (path, conj) in roots {
        let Some(text) = (r.read)(&path) else {
            continue;
        };
        let mk = makefile::parse(&path, &text);
        if !r.out.makefiles.contains(&path) {
            r.out.makefiles.push(path);
        }
        for a in &mk.assigns {
            if !matches!(a.stem.as_str(), "core" | "drivers" | "libs") {
                continue;
            }
            let Some(c) = r.with(&conj, a) else { continue };
            for item in &a.items {
                if item.ends_with('/') && !item.contains('$') {
                    if let Some(dir) = normalize("", item) {
                        r.visit_dir(&dir, c.clone(), 1, arches);
                    }
                }
            }
        }
    }
    let mut atoms: Vec<(Atom, u32)> = r.atoms.into_iter().collect();
    atoms.sort_by_key(|(_, id)| *id);
    r.out.atoms = atoms.into_iter().map(|(a, _)| a).collect();
    r.out
}

struct Resolver<'r> {
    read: &'r (dyn Fn(&str) -> Option<String> + Sync),
    makefiles: HashMap<String, Option<std::rc::Rc<Makefile>>>,
    atoms: HashMap<Atom, u32>,
    out: Presence,
}

impl Resolver<'_> {
    fn intern(&mut self, atom: Atom) -> u32 {
        let next = self.atoms.len() as u32;
        *self.atoms.entry(atom).or_insert(next)
    }

    /// The parsed `Kbuild` (preferred, as Kbuild does) or `Makefile` of `dir`.
    fn makefile(&mut self, dir: &str) -> Option<std::rc::Rc<Makefile>> {
        if let Some(m) = self.makefiles.get(dir) {
            return m.clone();
        }
        let found = ["Kbuild", "Makefile"].iter().find_map(|name| {
            let path = format!("{dir}{name}");
            (self.read)(&path).map(|text| (path, text))
        });
        let parsed = found.map(|(path, text)| {
            let m = makefile::parse(&path, &text);
            self.out.makefiles.push(path);
            std::rc::Rc::new(m)
        });
        self.makefiles.insert(dir.to_string(), parsed.clone());
        parsed
    }

    /// `conj` and the conditions of assignment `a` (its `if`s, its suffix); `None` for `-n`.
    fn with(&mut self, conj: &[u32], a: &makefile::Assign) -> Option<Vec<u32>> {
        let mut c = conj.to_vec();
        let mut add = |r: &mut Self, atom: &Atom| {
            // Past the bound one undecidable atom stands for the rest.
            if c.len() > MAX_CONJUNCTION {
                return;
            }
            if c.len() == MAX_CONJUNCTION {
                let unknown = Atom {
                    symbol: String::new(),
                    test: Test::Unknown,
                    origin: format!("{}: under more than {MAX_CONJUNCTION} conditions", a.origin),
                };
                c.push(r.intern(unknown));
                return;
            }
            let id = r.intern(atom.clone());
            if !c.contains(&id) {
                c.push(id);
            }
        };
        for atom in &a.conditions {
            add(self, atom);
        }
        match &a.suffix {
            Suffix::Always => {}
            Suffix::Never => return None,
            Suffix::When(atom) => add(self, atom),
        }
        Some(c)
    }

    /// Records one more way to reach `key`; false when it adds nothing.
    fn add(&mut self, key: &str, conj: Vec<u32>) -> bool {
        let alts = self.out.paths.entry(key.to_string()).or_default();
        if alts.iter().any(|a| a.iter().all(|id| conj.contains(id))) {
            return false; // an alternative as weak or weaker is there already
        }
        if alts.len() >= MAX_ALTERNATIVES {
            let unknown = Atom {
                symbol: String::new(),
                test: Test::Unknown,
                origin: format!("{key}: built in more than {MAX_ALTERNATIVES} ways"),
            };
            let id = self.intern(unknown);
            let alts = self.out.paths.entry(key.to_string()).or_default();
            if !alts.iter().any(|a| a == &[id]) {
                alts.push(vec![id]);
            }
            return false;
        }
        alts.push(conj);
        true
    }

    fn visit_dir(&mut self, dir: &str, conj: Vec<u32>, depth: usize, arches: &[String]) {
        if depth > MAX_DEPTH || !self.add(dir, conj.clone()) {
            return;
        }
        if let Some(mk) = self.makefile(dir) {
            self.walk_objects(dir, &mk, &conj, depth, arches);
        }
    }

    /// The `obj-*` and `lib-*` lines of `dir`'s Makefile.
    fn walk_objects(
        &mut self,
        dir: &str,
        mk: &Makefile,
        conj: &[u32],
        depth: usize,
        arches: &[String],
    ) {
        // Composite objects' parts by stem (`ext4-y := …`), found once, not per object.
        let mut parts: HashMap<&str, Vec<&makefile::Assign>> = HashMap::new();
        for a in &mk.assigns {
            if !matches!(a.stem.as_str(), "obj" | "lib") {
                parts.entry(&a.stem).or_default().push(a);
            }
        }
        for a in &mk.assigns {
            if !matches!(a.stem.as_str(), "obj" | "lib") {
                continue;
            }
            let Some(c) = self.with(conj, a) else {
                continue;
            };
            for item in &a.items {
                if item.contains("$(SRCARCH)") {
                    // Every architecture's tree, each under its own architecture.
                    for arch in arches {
                        let atom = self.intern(Atom {
                            symbol: String::new(),
                            test: Test::Arch(arch.clone()),
                            origin: a.origin.clone(),
                        });
                        let mut c = c.clone();
                        c.push(atom);
                        let item = item.replace("$(SRCARCH)", arch);
                        if let Some(d) = normalize(dir, &item).filter(|d| d.ends_with('/')) {
                            self.visit_dir(&d, c, depth + 1, arches);
                        }
                    }
                    continue;
                }
                if let Some(assigns) = var_ref(item).and_then(|stem| parts.get(stem)) {
                    // `obj-y += $(mmu-y)`: the variable's words, each under its own condition.
                    for (word, c) in self.expand(&c, assigns) {
                        self.item(dir, &word, c, &parts, depth, arches);
                    }
                    continue;
                }
                self.item(dir, item, c.clone(), &parts, depth, arches);
            }
        }
    }

    /// One word of an `obj-*` line: a directory to visit or an object, not a variable.
    fn item(
        &mut self,
        dir: &str,
        item: &str,
        conj: Vec<u32>,
        parts: &HashMap<&str, Vec<&makefile::Assign>>,
        depth: usize,
        arches: &[String],
    ) {
        if item.contains('$') {
            return;
        }
        let Some(path) = normalize(dir, item) else {
            return;
        };
        if path.ends_with('/') {
            self.visit_dir(&path, conj, depth + 1, arches);
        } else if let Some(stem) = item.strip_suffix(".o") {
            let parts = parts.get(stem).map_or(&[][..], Vec::as_slice);
            self.object(dir, parts, &path, conj);
        }
    }

    /// The words of a variable (`mmu-y` from `mmu-y := nommu.o` and `mmu-$(CONFIG_MMU) :=
    /// highmem.o …`), each with `conj`, its assignment's conditions, and the negation of every
    /// later assignment that replaces the value: `nommu.o` holds only when CONFIG_MMU is not
    /// set. A replacing assignment whose negation is not one atom makes the words before it
    /// undecidable rather than wrong.
    fn expand(&mut self, conj: &[u32], assigns: &[&makefile::Assign]) -> Vec<(String, Vec<u32>)> {
        let mut out = Vec::new();
        for (i, a) in assigns.iter().enumerate() {
            let Some(mut c) = self.with(conj, a) else {
                continue;
            };
            let mut replaced = false;
            for later in assigns[i + 1..].iter().filter(|l| l.replaces) {
                let not_later = match (&later.suffix, later.conditions.as_slice()) {
                    (Suffix::Never, _) => continue,
                    (Suffix::Always, []) => {
                        replaced = true;
                        break;
                    }
                    (Suffix::When(atom), []) => Atom {
                        origin: format!(
                            "{} (replaced on line {} when {} is set)",
                            a.origin, later.line, atom.symbol
                        ),
                        ..atom.negated()
                    },
                    _ => Atom {
                        symbol: String::new(),
                        test: Test::Unknown,
                        origin: format!("{}: replaced by {}", a.origin, later.origin),
                    },
                };
                let id = self.intern(not_later);
                if !c.contains(&id) && c.len() < MAX_CONJUNCTION {
                    c.push(id);
                }
            }
            if !replaced {
                out.extend(a.items.iter().map(|w| (w.clone(), c.clone())));
            }
        }
        out
    }

    /// Object `path` of `dir`: a composite's `parts`, or the object itself.
    fn object(&mut self, dir: &str, parts: &[&makefile::Assign], path: &str, conj: Vec<u32>) {
        if parts.is_empty() {
            self.add(path, conj);
            return;
        }
        for a in parts {
            let Some(c) = self.with(&conj, a) else {
                continue;
            };
            for item in &a.items {
                if item.ends_with(".o") && !item.contains('$') {
                    if let Some(p) = normalize(dir, item) {
                        self.add(&p, c.clone());
                    }
                }
            }
        }
    }
}

/// `mmu` of `$(mmu-y)`.
fn var_ref(item: &str) -> Option<&str> {
    item.strip_prefix("$(")?.strip_suffix("-y)")
}

/// `dir` joined with `item`, `..` and `.` resolved; `None` for a path leaving the tree.
fn normalize(dir: &str, item: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for p in item.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    let mut out = parts.join("/");
    if item.ends_with('/') && !out.is_empty() {
        out.push('/');
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Presence {
        let files: HashMap<String, String> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let read = move |p: &str| files.get(p).cloned();
        resolve(&read, &["x86".to_string(), "arm64".to_string()])
    }

    fn verdict(p: &Presence, key: &str, config: &str) -> Decision {
        let config = Config::parse(config).expect("config");
        let alts = &p.paths[key];
        decide(
            alts.iter()
                .map(|alt| alt.iter().map(|&i| &p.atoms[i as usize])),
            &config,
        )
    }

    fn sample() -> Presence {
        tree(&[
            (
                "Kbuild",
                "obj-y += kernel/ fs/\nobj-y += arch/$(SRCARCH)/\nobj-$(CONFIG_NET) += net/\n",
            ),
            ("Makefile", "libs-y := lib/\n"),
            ("arch/x86/Makefile", "drivers-$(CONFIG_PCI) += arch/x86/pci/\n"),
            ("arch/x86/Kbuild", "obj-y += kernel/\n"),
            ("arch/x86/kernel/Makefile", "obj-y += setup.o\n"),
            ("arch/x86/pci/Makefile", "obj-y += direct.o\n"),
            ("arch/arm64/Kbuild", "obj-y += kernel/\n"),
            ("arch/arm64/kernel/Makefile", "obj-y += cpufeature.o\n"),
            ("kernel/Makefile", "obj-y += fork.o\nobj-$(CONFIG_KEXEC) += kexec.o\n"),
            ("fs/Makefile", "obj-$(CONFIG_EXT4_FS) += ext4/\nobj-y += ../lib/x.o\n"),
            (
                "fs/ext4/Makefile",
                "obj-$(CONFIG_EXT4_FS) += ext4.o\next4-y := super.o\next4-$(CONFIG_EXT4_FS_POSIX_ACL) += acl.o\n",
            ),
            ("net/Makefile", "ifdef CONFIG_INET\nobj-y += ipv4/\nendif\n"),
            ("net/ipv4/Makefile", "obj-y += tcp.o\n"),
            ("lib/Makefile", "lib-y += sort.o\n"),
        ])
    }

    #[test]
    fn objects_and_directories_get_their_conditions() {
        let p = sample();
        let cfg = "CONFIG_X86=y\nCONFIG_EXT4_FS=m\nCONFIG_NET=y\n";
        assert_eq!(verdict(&p, "kernel/fork.o", cfg), Decision::Live);
        assert_eq!(
            verdict(&p, "kernel/kexec.o", cfg),
            Decision::Hidden(
                "kernel/Makefile:2 obj-$(CONFIG_KEXEC) += kexec.o: CONFIG_KEXEC is not set".into()
            )
        );
        assert_eq!(verdict(&p, "fs/ext4/super.o", cfg), Decision::Live);
        assert_eq!(
            verdict(&p, "fs/ext4/acl.o", cfg),
            Decision::Hidden(
                "fs/ext4/Makefile:3 ext4-$(CONFIG_EXT4_FS_POSIX_ACL) += acl.o: CONFIG_EXT4_FS_POSIX_ACL is not set"
                    .into()
            )
        );
        assert!(
            !p.paths.contains_key("fs/ext4/ext4.o"),
            "a composite is its parts"
        );
        assert_eq!(
            verdict(&p, "net/ipv4/tcp.o", cfg),
            Decision::Hidden("net/Makefile:1 ifdef CONFIG_INET: CONFIG_INET is not set".into())
        );
        assert_eq!(verdict(&p, "lib/sort.o", cfg), Decision::Live);
        assert_eq!(verdict(&p, "lib/x.o", cfg), Decision::Live);
        assert_eq!(verdict(&p, "arch/x86/kernel/setup.o", cfg), Decision::Live);
        assert_eq!(
            verdict(&p, "arch/arm64/kernel/cpufeature.o", cfg),
            Decision::Hidden(
                "Kbuild:2 obj-y += arch/$(SRCARCH)/: builds arch/arm64, the config's architecture is x86"
                    .into()
            )
        );
        assert_eq!(
            verdict(&p, "arch/x86/pci/direct.o", cfg),
            Decision::Hidden(
                "arch/x86/Makefile:1 drivers-$(CONFIG_PCI) += arch/x86/pci/: CONFIG_PCI is not set"
                    .into()
            )
        );
        let all = "CONFIG_X86=y\nCONFIG_EXT4_FS=y\nCONFIG_EXT4_FS_POSIX_ACL=y\nCONFIG_NET=y\nCONFIG_INET=y\nCONFIG_PCI=y\nCONFIG_KEXEC=m\n";
        for key in [
            "fs/ext4/acl.o",
            "net/ipv4/tcp.o",
            "arch/x86/pci/direct.o",
            "kernel/kexec.o",
        ] {
            assert_eq!(verdict(&p, key, all), Decision::Live, "{key}");
        }
        assert_eq!(
            verdict(&p, "fs/ext4/", "CONFIG_X86=y\n"),
            Decision::Hidden(
                "fs/Makefile:1 obj-$(CONFIG_EXT4_FS) += ext4/: CONFIG_EXT4_FS is not set".into()
            )
        );
    }

    #[test]
    fn an_object_named_through_a_replaced_variable_was_never_reached() {
        // mm/Makefile: `mmu-y := nommu.o`, replaced by `mmu-$(CONFIG_MMU) := … vmalloc.o`, and
        // `obj-y := … $(mmu-y)`. nommu.o was not reached at all (so `knav def vfree` could not
        // rank mm/nommu.c below mm/vmalloc.c by its build condition).
        let p = tree(&[
            ("Kbuild", "obj-y += mm/\n"),
            (
                "mm/Makefile",
                "mmu-y\t\t\t:= nommu.o\n\
                 mmu-$(CONFIG_MMU)\t:= highmem.o \\\n\t\t\t   vmalloc.o\n\
                 mmu-$(CONFIG_MMU)\t+= mseal.o\n\
                 dead-y := gone.o\ndead-y := kept.o\n\
                 obj-y := filemap.o $(mmu-y) $(dead-y)\n",
            ),
        ]);
        let mmu = "CONFIG_X86=y\nCONFIG_MMU=y\n";
        let nommu = "CONFIG_X86=y\n";
        for key in ["mm/vmalloc.o", "mm/highmem.o", "mm/mseal.o"] {
            assert_eq!(verdict(&p, key, mmu), Decision::Live, "{key}");
            assert!(
                matches!(verdict(&p, key, nommu), Decision::Hidden(_)),
                "{key}"
            );
        }
        assert_eq!(verdict(&p, "mm/nommu.o", nommu), Decision::Live);
        assert_eq!(
            verdict(&p, "mm/nommu.o", mmu),
            Decision::Hidden(
                "mm/Makefile:1 mmu-y := nommu.o (replaced on line 2 when CONFIG_MMU is set): CONFIG_MMU=y".into()
            )
        );
        assert_eq!(verdict(&p, "mm/filemap.o", nommu), Decision::Live);
        assert_eq!(verdict(&p, "mm/kept.o", nommu), Decision::Live);
        assert!(
            !p.paths.contains_key("mm/gone.o"),
            "a value replaced unconditionally is never built"
        );
    }

    #[test]
    fn two_ways_in_is_live_if_either_is() {
        let p = tree(&[
            ("Kbuild", "obj-y += a/\n"),
            (
                "a/Makefile",
                "obj-$(CONFIG_A) += x.o\nobj-$(CONFIG_B) += x.o\n",
            ),
        ]);
        assert_eq!(p.paths["a/x.o"].len(), 2);
        assert_eq!(verdict(&p, "a/x.o", "CONFIG_B=y\n"), Decision::Live);
        assert!(matches!(
            verdict(&p, "a/x.o", "CONFIG_C=y\n"),
            Decision::Hidden(_)
        ));
        let partial = Config::from_macros("CONFIG_A=n").expect("list");
        let alts = &p.paths["a/x.o"];
        let d = decide(
            alts.iter()
                .map(|alt| alt.iter().map(|&i| &p.atoms[i as usize])),
            &partial,
        );
        assert_eq!(d, Decision::Unknown, "CONFIG_B is not in the list");
    }

    #[test]
    fn loops_and_escapes_end() {
        let p = tree(&[
            ("Kbuild", "obj-y += a/ ../../etc/\n"),
            ("a/Makefile", "obj-y += ./ ../a/ b/\n"),
            ("a/b/Makefile", "obj-y += ../ y.o\n"),
        ]);
        assert_eq!(verdict(&p, "a/b/y.o", ""), Decision::Live);
        assert!(p
            .paths
            .keys()
            .all(|k| !k.contains("..") && !k.starts_with("etc")));
    }

    #[test]
    fn many_composite_objects_are_resolved_in_linear_time() {
        // Each object once searched all of its Makefile's assignments for its parts: 20,000
        // composites took 400 million comparisons.
        let n = 20_000;
        let mut mk = String::new();
        for i in 0..n {
            mk.push_str(&format!("obj-y += c{i}.o\nc{i}-y := p{i}.o\n"));
        }
        let started = std::time::Instant::now();
        let p = tree(&[("Kbuild", "obj-y += a/\n"), ("a/Makefile", &mk)]);
        let elapsed = started.elapsed();
        assert_eq!(p.paths.len(), n + 2, "the top, a/ and the parts");
        assert_eq!(verdict(&p, &format!("a/p{}.o", n - 1), ""), Decision::Live);
        assert!(!p.paths.contains_key("a/c0.o"), "a composite is its parts");
        assert!(elapsed.as_secs() < 20, "{elapsed:?}");
    }

    #[test]
    fn a_conjunction_longer_than_the_bound_ends_in_one_undecidable_atom() {
        // 40 directories deep, each under its own condition and 31 conditions of its Makefile.
        let ifs: String = (0..31).map(|i| format!("ifdef CONFIG_I{i}\n")).collect();
        let mut files = vec![("Kbuild".to_string(), "obj-y += d/\n".to_string())];
        let mut dir = "d/".to_string();
        for depth in 0..20 {
            files.push((
                format!("{dir}Makefile"),
                format!("{ifs}obj-$(CONFIG_D{depth}) += d/ x.o\n"),
            ));
            dir.push_str("d/");
        }
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let p = tree(&files);
        let deepest = format!("{}x.o", "d/".repeat(20));
        let alts = &p.paths[&deepest];
        assert_eq!(alts.len(), 1);
        assert_eq!(alts[0].len(), MAX_CONJUNCTION + 1);
        let last = &p.atoms[alts[0][MAX_CONJUNCTION] as usize];
        assert_eq!(last.test, Test::Unknown);
        assert!(
            last.origin.contains("under more than 64 conditions"),
            "{}",
            last.origin
        );
        // A condition that is kept still hides it.
        assert!(matches!(
            verdict(&p, &deepest, "CONFIG_X86=y\n"),
            Decision::Hidden(_)
        ));
    }
}
