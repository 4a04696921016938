//! Kbuild Makefiles read for what they build: every `VAR-SUFFIX += items` assignment
//! (`obj-$(CONFIG_EXT4_FS) += ext4.o`, `ext4-y := balloc.o …`, `core-y += arch/x86/`) with the
//! `ifdef`/`ifeq` conditions around it, as [`Atom`]s a `.config` decides.
//!
//! This is not make: variables are not expanded (a suffix or condition that is not a
//! `CONFIG_` symbol is an [`Test::Unknown`] atom), recipes and `define` blocks are skipped, and
//! `include` is not followed.

use crate::config::{Config, Value};
use crate::expr::Tri;

/// What an atom asks of its symbol.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Test {
    /// Set to anything (`obj-$(CONFIG_X)` with `y` or `m`, `ifdef CONFIG_X`).
    Set,
    /// Not set (`ifndef CONFIG_X`).
    NotSet,
    /// Equal to this value (`ifeq ($(CONFIG_X),y)`).
    Eq(String),
    /// Not equal to this value.
    Ne(String),
    /// The configuration builds this architecture (`arch/$(SRCARCH)/`, an arch Makefile).
    Arch(String),
    /// Nothing a `.config` decides (`ifeq ($(CC_IS_CLANG),y)`, `obj-$(foo-y)`).
    Unknown,
    /// The same under every configuration (`ifeq ($(KBUILD_EXTMOD),)`: the kernel proper is
    /// never an external module build).
    Constant(bool),
}

/// One condition on a build line, with where it comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Atom {
    /// The symbol tested, `CONFIG_` prefix included (empty for [`Test::Arch`],
    /// [`Test::Unknown`] and [`Test::Constant`]).
    pub symbol: String,
    /// The test.
    pub test: Test,
    /// `fs/ext4/Makefile:6 obj-$(CONFIG_EXT4_FS) += ext4.o`.
    pub origin: String,
}

impl Atom {
    /// The atom's value under `config`.
    pub fn eval(&self, config: &Config) -> Tri {
        self.test.eval(&self.symbol, config)
    }
}

impl Test {
    /// The test's value on `symbol` under `config`.
    pub fn eval(&self, symbol: &str, config: &Config) -> Tri {
        let value = || config.value(symbol);
        let text = |v: &Value| match v {
            Value::Yes => "y".to_string(),
            Value::Module => "m".to_string(),
            Value::No => String::new(),
            Value::Number(n) => n.to_string(),
            Value::Text(t) => t.clone(),
        };
        let tri = |b: bool| if b { Tri::True } else { Tri::False };
        match self {
            Test::Unknown => Tri::Unknown,
            Test::Constant(b) => tri(*b),
            Test::Arch(a) => config.arch().map_or(Tri::Unknown, |c| tri(c == a)),
            Test::Set => value().map_or(Tri::Unknown, |v| tri(*v != Value::No)),
            Test::NotSet => value().map_or(Tri::Unknown, |v| tri(*v == Value::No)),
            Test::Eq(want) => value().map_or(Tri::Unknown, |v| tri(text(v) == *want)),
            Test::Ne(want) => value().map_or(Tri::Unknown, |v| tri(text(v) != *want)),
        }
    }
}

impl Atom {
    /// Why the atom is false under `config`: `fs/Makefile:3 obj-$(CONFIG_FOO) += foo/: CONFIG_FOO
    /// is not set`.
    pub fn reason(&self, config: &Config) -> String {
        match &self.test {
            Test::Arch(a) => format!(
                "{}: builds arch/{a}, the config's architecture is {}",
                self.origin,
                config.arch().unwrap_or("unknown")
            ),
            Test::Unknown => format!("{}: not decided by a .config", self.origin),
            Test::Constant(_) => format!("{}: never true", self.origin),
            _ => format!("{}: {}", self.origin, config.describe(&self.symbol)),
        }
    }

    /// The atom that holds when this one fails (undecidable stays undecidable).
    pub fn negated(&self) -> Atom {
        let test = match &self.test {
            Test::Set => Test::NotSet,
            Test::NotSet => Test::Set,
            Test::Eq(v) => Test::Ne(v.clone()),
            Test::Ne(v) => Test::Eq(v.clone()),
            Test::Constant(b) => Test::Constant(!b),
            Test::Arch(_) | Test::Unknown => Test::Unknown,
        };
        Atom {
            symbol: self.symbol.clone(),
            test,
            origin: format!("{} (else)", self.origin),
        }
    }
}

/// What the suffix of an assigned variable says: `obj-y`, `obj-m`, `foo-objs` always;
/// `obj-$(CONFIG_X)` when X is set; anything else unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Suffix {
    /// `-y`, `-m`, `-objs`: always.
    Always,
    /// `-n`, `-` (an empty expansion): never.
    Never,
    /// `-$(CONFIG_X)`: when the atom holds.
    When(Atom),
}

/// One assignment of a Makefile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assign {
    /// 1-based line of the assignment (its first line when continued).
    pub line: u32,
    /// The variable's stem: `obj`, `lib`, `ext4`, `snd-hda-codec`, `core`.
    pub stem: String,
    /// What its suffix says.
    pub suffix: Suffix,
    /// The words assigned (`ext4.o`, `fs/`, `$(ARCH_CORE)`).
    pub items: Vec<String>,
    /// True when the assignment replaces the variable's value (`=`, `:=`, `::=`), false when it
    /// adds to it (`+=`, and `?=`, which only sets an empty variable).
    pub replaces: bool,
    /// The `ifdef`/`ifeq` conditions around it, outermost first.
    pub conditions: Vec<Atom>,
    /// `fs/ext4/Makefile:6 obj-$(CONFIG_EXT4_FS) += ext4.o`.
    pub origin: String,
}

/// A `CONFIG_` symbol named on a Makefile line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolUse {
    /// 1-based line.
    pub line: u32,
    /// `CONFIG_X`.
    pub symbol: String,
}

/// A parsed Makefile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Makefile {
    /// Its assignments in file order.
    pub assigns: Vec<Assign>,
    /// Every `CONFIG_` symbol it names, by line.
    pub uses: Vec<SymbolUse>,
}

/// Longest origin text kept from a line.
const ORIGIN_CHARS: usize = 90;
/// Conditions kept on one assignment (nested `if`s and `else if` chains together); beyond
/// them one undecidable atom stands for the rest. Copying them all makes memory grow with
/// assignments times nesting; the kernel nests a handful.
pub const MAX_CONDITIONS: usize = 32;

/// Parses the Makefile at root-relative `path` with contents `text`.
pub fn parse(path: &str, text: &str) -> Makefile {
    let mut out = Makefile::default();
    // One entry per open `if`: the atoms its branches added (an `else if` adds one more).
    let mut stack: Vec<Vec<Atom>> = Vec::new();
    let mut in_recipe = false;
    let mut in_define = false;
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let first = i;
        let mut logical = String::from(lines[i]);
        while logical.ends_with('\\') && i + 1 < lines.len() {
            logical.pop();
            logical.push(' ');
            i += 1;
            logical.push_str(lines[i]);
        }
        i += 1;
        let line_no = first as u32 + 1;
        let raw = logical.as_str();
        let body = strip_comment(raw);
        uses_in(body, line_no, &mut out.uses);
        if in_define {
            if body.trim_start().starts_with("endef") {
                in_define = false;
            }
            continue;
        }
        if raw.starts_with('\t') && in_recipe {
            continue;
        }
        let t = body.trim();
        if t.is_empty() {
            continue;
        }
        in_recipe = false;
        let origin = || format!("{path}:{line_no} {}", cut(t));
        let (word, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        match word {
            "ifdef" | "ifndef" | "ifeq" | "ifneq" => {
                stack.push(vec![condition(word, rest.trim(), origin())]);
                continue;
            }
            "else" => {
                if let Some(level) = stack.last_mut() {
                    if let Some(last) = level.pop() {
                        level.push(last.negated());
                    }
                    let rest = rest.trim();
                    let (w, r) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                    if matches!(w, "ifdef" | "ifndef" | "ifeq" | "ifneq") {
                        level.push(condition(w, r.trim(), origin()));
                    }
                }
                continue;
            }
            "endif" => {
                stack.pop();
                continue;
            }
            "define" => {
                in_define = true;
                continue;
            }
            "include" | "-include" | "sinclude" | "undefine" | "vpath" | "$(eval" => continue,
            _ => {}
        }
        let t = t
            .strip_prefix("export ")
            .or_else(|| t.strip_prefix("override "))
            .unwrap_or(t)
            .trim_start();
        match operator(t) {
            Some((lhs, op, rhs)) => {
                if let Some((stem, suffix)) = split_var(lhs.trim(), &origin()) {
                    out.assigns.push(Assign {
                        line: line_no,
                        stem,
                        suffix,
                        items: rhs.split_whitespace().map(str::to_string).collect(),
                        replaces: !matches!(op, "+=" | "?="),
                        conditions: conditions(&stack, &origin),
                        origin: origin(),
                    });
                }
            }
            None => in_recipe = t.contains(':'),
        }
    }
    out
}

/// The atoms of the open `if`s, outermost first, at most [`MAX_CONDITIONS`].
fn conditions(stack: &[Vec<Atom>], origin: &dyn Fn() -> String) -> Vec<Atom> {
    let mut out: Vec<Atom> = stack
        .iter()
        .flatten()
        .take(MAX_CONDITIONS)
        .cloned()
        .collect();
    if stack.iter().flatten().nth(MAX_CONDITIONS).is_some() {
        out[MAX_CONDITIONS - 1] = Atom {
            symbol: String::new(),
            test: Test::Unknown,
            origin: format!("{}: inside more than {MAX_CONDITIONS} conditions", origin()),
        };
    }
    out
}

fn cut(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match s.char_indices().nth(ORIGIN_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

fn strip_comment(line: &str) -> &str {
    // `#` starts a comment unless escaped; `$(#…)` does not occur in Kbuild files.
    let b = line.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'#' && (i == 0 || b[i - 1] != b'\\') {
            return &line[..i];
        }
    }
    line
}

fn uses_in(text: &str, line: u32, out: &mut Vec<SymbolUse>) {
    let mut rest = text;
    while let Some(at) = rest.find("CONFIG_") {
        let before = rest[..at].bytes().last();
        let tail = &rest[at..];
        let len = tail
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') && len > 7 {
            out.push(SymbolUse {
                line,
                symbol: tail[..len].to_string(),
            });
        }
        rest = &tail[len.max(7)..];
    }
}

/// `(lhs, operator, rhs)` of an assignment (`=`, `:=`, `::=`, `+=`, `?=`, `!=`), or `None` for a
/// rule or anything else. Operators inside `$(…)` do not count.
fn operator(t: &str) -> Option<(&str, &str, &str)> {
    let b = t.as_bytes();
    let mut depth = 0i32;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' | b'{' => depth += 1,
            b')' | b'}' => depth -= 1,
            _ if depth > 0 => {}
            b'=' => {
                let start = match i.checked_sub(1).map(|j| b[j]) {
                    Some(b'+' | b'?' | b'!') => i - 1,
                    Some(b':') => {
                        if i >= 2 && b[i - 2] == b':' {
                            i - 2
                        } else {
                            i - 1
                        }
                    }
                    _ => i,
                };
                return Some((&t[..start], &t[start..=i], &t[i + 1..]));
            }
            b':' if b.get(i + 1) != Some(&b'=') && b.get(i + 1) != Some(&b':') => return None,
            _ => {}
        }
    }
    None
}

/// `obj-$(CONFIG_X)` → (`obj`, when CONFIG_X is set); `ext4-y` → (`ext4`, always).
fn split_var(lhs: &str, origin: &str) -> Option<(String, Suffix)> {
    let b = lhs.as_bytes();
    let mut depth = 0i32;
    let mut dash = None;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => depth -= 1,
            c if depth == 0 && c.is_ascii_whitespace() => return None,
            b'-' if depth == 0 => dash = Some(i),
            _ => {}
        }
    }
    let dash = dash?;
    let (stem, suffix) = (&lhs[..dash], &lhs[dash + 1..]);
    if stem.is_empty() || stem.contains('$') {
        return None;
    }
    let unknown = || Atom {
        symbol: String::new(),
        test: Test::Unknown,
        origin: origin.to_string(),
    };
    let suffix = match suffix {
        "y" | "m" | "objs" => Suffix::Always,
        "" | "n" => Suffix::Never,
        s => match config_var(s).or_else(|| subst_m_y(s)) {
            Some(sym) => Suffix::When(Atom {
                symbol: sym.to_string(),
                test: Test::Set,
                origin: origin.to_string(),
            }),
            None if s.starts_with('$') => Suffix::When(unknown()),
            None => return None,
        },
    };
    Some((stem.to_string(), suffix))
}

/// `$(CONFIG_X)` → `CONFIG_X`.
fn config_var(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("$(")?.strip_suffix(')')?;
    is_config(inner).then_some(inner)
}

/// `$(subst m,y,$(CONFIG_X))` → `CONFIG_X`: built in when X is `y` or `m`.
fn subst_m_y(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("$(subst m,y,")?.strip_suffix(')')?;
    config_var(inner.trim())
}

fn is_config(s: &str) -> bool {
    s.len() > 7
        && s.starts_with("CONFIG_")
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The atom of `ifdef X`, `ifeq ($(CONFIG_X),y)`, `ifneq "$(CONFIG_X)" ""`.
fn condition(word: &str, args: &str, origin: String) -> Atom {
    let unknown = Atom {
        symbol: String::new(),
        test: Test::Unknown,
        origin: origin.clone(),
    };
    match word {
        "ifdef" | "ifndef" => {
            if BUILD_STATE.contains(&args) {
                return Atom {
                    symbol: String::new(),
                    test: Test::Constant(word == "ifndef"),
                    origin,
                };
            }
            if !is_config(args) {
                return unknown;
            }
            Atom {
                symbol: args.to_string(),
                test: if word == "ifdef" {
                    Test::Set
                } else {
                    Test::NotSet
                },
                origin,
            }
        }
        _ => {
            let Some((a, b)) = two_args(args) else {
                return unknown;
            };
            let known = |s: &str| {
                let name = s.strip_prefix("$(")?.strip_suffix(')')?;
                BUILD_STATE.contains(&name).then_some("")
            };
            let eq = word == "ifeq";
            if let (Some(x), Some(y)) = (known(a).or(literal(a)), known(b).or(literal(b))) {
                return Atom {
                    symbol: String::new(),
                    test: Test::Constant((x == y) == eq),
                    origin,
                };
            }
            let (sym, value) = match (config_var(a), config_var(b)) {
                (Some(s), None) => (s, literal(b)),
                (None, Some(s)) => (s, literal(a)),
                _ => return unknown,
            };
            let Some(value) = value else { return unknown };
            let test = match (value, eq) {
                ("", true) => Test::NotSet,
                ("", false) => Test::Set,
                (v, true) => Test::Eq(v.to_string()),
                (v, false) => Test::Ne(v.to_string()),
            };
            Atom {
                symbol: sym.to_string(),
                test,
                origin,
            }
        }
    }
}

/// Variables of the top Makefile that are empty in a plain build of the kernel proper (not an
/// external module, not a sub-make, not a config target): the conditions on them are constant.
const BUILD_STATE: &[&str] = &[
    "KBUILD_EXTMOD",
    "need-sub-make",
    "mixed-build",
    "config-build",
];

/// `(a,b)`, `"a" "b"`, `'a' 'b'` → the two arguments, trimmed.
fn two_args(s: &str) -> Option<(&str, &str)> {
    if let Some(inner) = s.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
        let b = inner.as_bytes();
        let mut depth = 0i32;
        for (i, &c) in b.iter().enumerate() {
            match c {
                b'(' => depth += 1,
                b')' => depth -= 1,
                b',' if depth == 0 => return Some((inner[..i].trim(), inner[i + 1..].trim())),
                _ => {}
            }
        }
        return None;
    }
    let q = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &s[1..];
    let end = rest.find(q)?;
    let a = &rest[..end];
    let rest = rest[end + 1..].trim_start();
    let q2 = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &rest[1..];
    let end = rest.find(q2)?;
    Some((a.trim(), rest[..end].trim()))
}

/// A word without variable references.
fn literal(s: &str) -> Option<&str> {
    (!s.contains('$')).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        Config::parse(text).expect("config parses")
    }

    #[test]
    fn obj_lines_with_config_suffixes() {
        let m = parse(
            "fs/ext4/Makefile",
            "# comment\nobj-$(CONFIG_EXT4_FS) += ext4.o\n\next4-y\t:= balloc.o bitmap.o \\\n\t\tdir.o\next4-$(CONFIG_EXT4_FS_POSIX_ACL)\t+= acl.o\next4-inode-test-objs += inode-test.o\nobj-$(subst m,y,$(CONFIG_HYPERV)) += hyperv/\nobj-$(foo) += x.o\nobj-n += never.o\n",
        );
        let a = &m.assigns;
        assert_eq!(a.len(), 7);
        assert_eq!((a[0].line, a[0].stem.as_str()), (2, "obj"));
        assert_eq!(a[0].items, vec!["ext4.o"]);
        match &a[0].suffix {
            Suffix::When(atom) => {
                assert_eq!(atom.symbol, "CONFIG_EXT4_FS");
                assert_eq!(atom.test, Test::Set);
                assert_eq!(
                    atom.origin,
                    "fs/ext4/Makefile:2 obj-$(CONFIG_EXT4_FS) += ext4.o"
                );
            }
            s => panic!("{s:?}"),
        }
        assert_eq!((a[1].line, a[1].stem.as_str()), (4, "ext4"));
        assert_eq!(a[1].suffix, Suffix::Always);
        assert_eq!(a[1].items, vec!["balloc.o", "bitmap.o", "dir.o"]);
        assert_eq!(a[2].line, 6);
        assert_eq!(a[3].stem, "ext4-inode-test");
        assert_eq!(a[3].suffix, Suffix::Always);
        match &a[4].suffix {
            Suffix::When(atom) => assert_eq!(
                (atom.symbol.as_str(), &atom.test),
                ("CONFIG_HYPERV", &Test::Set)
            ),
            s => panic!("{s:?}"),
        }
        match &a[5].suffix {
            Suffix::When(atom) => assert_eq!(atom.test, Test::Unknown),
            s => panic!("{s:?}"),
        }
        assert_eq!(a[6].suffix, Suffix::Never);
        let syms: Vec<(u32, &str)> = m.uses.iter().map(|u| (u.line, u.symbol.as_str())).collect();
        assert_eq!(
            syms,
            vec![
                (2, "CONFIG_EXT4_FS"),
                (6, "CONFIG_EXT4_FS_POSIX_ACL"),
                (8, "CONFIG_HYPERV")
            ]
        );
    }

    #[test]
    fn conditions_nest_and_else_negates() {
        let m = parse(
            "net/Makefile",
            "ifdef CONFIG_A\nobj-y += a.o\nelse ifeq ($(CONFIG_B),m)\nobj-y += b.o\nelse\nobj-y += c.o\nendif\nifneq ($(CONFIG_C),)\n  ifndef CONFIG_D\n\tobj-y += d.o\n  endif\nendif\nobj-y += e.o\n",
        );
        let conds: Vec<Vec<(String, Test)>> = m
            .assigns
            .iter()
            .map(|a| {
                a.conditions
                    .iter()
                    .map(|c| (c.symbol.clone(), c.test.clone()))
                    .collect()
            })
            .collect();
        let s = |x: &str| x.to_string();
        assert_eq!(
            conds,
            vec![
                vec![(s("CONFIG_A"), Test::Set)],
                vec![
                    (s("CONFIG_A"), Test::NotSet),
                    (s("CONFIG_B"), Test::Eq(s("m")))
                ],
                vec![
                    (s("CONFIG_A"), Test::NotSet),
                    (s("CONFIG_B"), Test::Ne(s("m")))
                ],
                vec![(s("CONFIG_C"), Test::Set), (s("CONFIG_D"), Test::NotSet)],
                vec![],
            ]
        );
        assert_eq!(m.assigns[3].items, vec!["d.o"]);
        assert_eq!(
            m.assigns[1].conditions[0].origin,
            "net/Makefile:1 ifdef CONFIG_A (else)"
        );
    }

    #[test]
    fn recipes_rules_and_defines_are_not_assignments() {
        let m = parse(
            "x/Makefile",
            "obj-y += a.o\n$(obj)/gen.h: $(src)/gen.sh\n\tobj-y += not.o\n\n\tcat x\ndefine rule\nobj-y += nor.o\nendef\nifeq ($(CONFIG_X),y)\n\tobj-y += yes.o\nendif\nalways-y := a b\n",
        );
        let items: Vec<&str> = m
            .assigns
            .iter()
            .flat_map(|a| a.items.iter().map(String::as_str))
            .collect();
        assert_eq!(items, vec!["a.o", "yes.o", "a", "b"]);
    }

    #[test]
    fn atoms_under_y_m_and_unset() {
        let c = config("CONFIG_A=y\nCONFIG_B=m\nCONFIG_N=42\nCONFIG_S=\"x86\"\nCONFIG_X86=y\n");
        let atom = |symbol: &str, test: Test| Atom {
            symbol: symbol.into(),
            test,
            origin: "M:1 x".into(),
        };
        assert_eq!(atom("CONFIG_A", Test::Set).eval(&c), Tri::True);
        assert_eq!(atom("CONFIG_B", Test::Set).eval(&c), Tri::True);
        assert_eq!(atom("CONFIG_C", Test::Set).eval(&c), Tri::False);
        assert_eq!(atom("CONFIG_C", Test::NotSet).eval(&c), Tri::True);
        assert_eq!(atom("CONFIG_B", Test::Eq("y".into())).eval(&c), Tri::False);
        assert_eq!(atom("CONFIG_B", Test::Eq("m".into())).eval(&c), Tri::True);
        assert_eq!(atom("CONFIG_N", Test::Eq("42".into())).eval(&c), Tri::True);
        assert_eq!(
            atom("CONFIG_S", Test::Ne("x86".into())).eval(&c),
            Tri::False
        );
        assert_eq!(atom("", Test::Arch("x86".into())).eval(&c), Tri::True);
        assert_eq!(atom("", Test::Arch("arm64".into())).eval(&c), Tri::False);
        assert_eq!(atom("", Test::Unknown).eval(&c), Tri::Unknown);
        let partial = Config::from_macros("CONFIG_A=y").expect("list");
        assert_eq!(atom("CONFIG_C", Test::Set).eval(&partial), Tri::Unknown);
        assert_eq!(
            atom("", Test::Arch("x86".into())).eval(&partial),
            Tri::Unknown
        );
        assert_eq!(
            atom("CONFIG_C", Test::Set).reason(&c),
            "M:1 x: CONFIG_C is not set"
        );
    }

    #[test]
    fn extmod_conditions_are_constant() {
        let m = parse(
            "Makefile",
            "ifeq ($(KBUILD_EXTMOD),)\ncore-y :=\nlibs-y := lib/\nelse\nlibs-y := ext/\nendif\n",
        );
        let c = config("");
        let live: Vec<(Vec<&str>, bool)> = m
            .assigns
            .iter()
            .map(|a| {
                (
                    a.items.iter().map(String::as_str).collect(),
                    a.conditions.iter().all(|x| x.eval(&c) == Tri::True),
                )
            })
            .collect();
        assert_eq!(
            live,
            vec![(vec![], true), (vec!["lib/"], true), (vec!["ext/"], false)]
        );
    }

    #[test]
    fn deep_ifdef_nesting_does_not_copy_every_condition_into_every_assignment() {
        // Copies grew with assignments times nesting (and `else if` chains).
        let n = 2_000;
        let mut text = "ifdef CONFIG_OUTER\n".to_string();
        text.push_str(&"ifdef CONFIG_X86\n".repeat(n));
        text.push_str(&"obj-y += a.o\n".repeat(n));
        text.push_str(&"endif\n".repeat(n + 1));
        text.push_str("ifeq ($(CONFIG_A),y)\n");
        for i in 0..n {
            text.push_str(&format!("else ifeq ($(CONFIG_B{i}),y)\n"));
        }
        text.push_str("obj-y += b.o\nendif\nobj-y += c.o\n");
        let m = parse("Makefile", &text);
        assert_eq!(m.assigns.len(), n + 2);
        let c = config("CONFIG_OUTER=y\nCONFIG_X86=y\n");
        for a in &m.assigns[..n + 1] {
            assert_eq!(a.conditions.len(), MAX_CONDITIONS);
            let last = &a.conditions[MAX_CONDITIONS - 1];
            assert_eq!(last.test, Test::Unknown);
            assert!(
                last.origin
                    .ends_with(&format!(": inside more than {MAX_CONDITIONS} conditions")),
                "{}",
                last.origin
            );
        }
        // The conditions kept still decide what they can.
        assert_eq!(m.assigns[0].conditions[0].symbol, "CONFIG_OUTER");
        assert_eq!(m.assigns[0].conditions[0].eval(&c), Tri::True);
        assert_eq!(m.assigns[n].conditions[1].test, Test::Ne("y".into()));
        assert_eq!(m.assigns[n + 1].conditions, vec![], "all closed");
    }
}
