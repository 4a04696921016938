//! Property tests: the `#if` evaluator, the `.config` parser, and the Makefile and Kconfig
//! parsers on arbitrary input (no panic, invariants hold), and the evaluator against a small
//! reference evaluator on generated well-formed expressions. CI-sized by default (256 cases
//! each); `PROPTEST_CASES=100000 cargo test -p knav-kconfig --test properties` runs longer.

use std::collections::BTreeMap;

use knav_kconfig::{eval, kbuild, kconfig, makefile, Config, Tri, Value};
use proptest::prelude::*;

/// Text from arbitrary bytes, or from lines of fragments the parsers care about.
fn soup(fragments: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..600)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        proptest::collection::vec(
            (
                proptest::sample::select(fragments),
                proptest::sample::select(TAILS)
            ),
            0..60
        )
        .prop_map(|parts| {
            parts
                .into_iter()
                .map(|(f, tail)| format!("{f}{tail}\n"))
                .collect()
        }),
    ]
}

/// What may follow a fragment on its line.
const TAILS: &[&str] = &[
    "", "", "", " ", "\t", "\\", " \\", "#", " # x", "\"", "'", "(", ")", "$(", " A", "_B", "=",
    ":", " +=", "-", "\r", "é",
];

const EXPR_FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "!",
    "~",
    "-",
    "+",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "&",
    "^",
    "|",
    "&&",
    "||",
    "?",
    ":",
    ",",
    "0",
    "1",
    "0x10",
    "017",
    "250",
    "'a'",
    "'\\n'",
    "defined",
    "CONFIG_Y",
    "CONFIG_M",
    "CONFIG_N",
    "CONFIG_HZ",
    "IS_ENABLED",
    "IS_MODULE",
    "X",
    " ",
    "\\",
];

const MAKEFILE_FRAGMENTS: &[&str] = &[
    "obj-y += a.o",
    "obj-$(CONFIG_A) += b/",
    "obj-$(subst m,y,$(CONFIG_B)) += c.o",
    "a-y := x.o y.o",
    "ifdef CONFIG_A",
    "ifndef CONFIG_B",
    "ifeq ($(CONFIG_A),y)",
    "ifneq \"$(CONFIG_C)\" \"\"",
    "else",
    "else ifeq ($(CONFIG_D),m)",
    "endif",
    "define x",
    "endef",
    "\t@echo",
    "target: dep",
    "include x",
    "# comment",
    "core-y += lib/",
    "x := \\",
];

const KCONFIG_FRAGMENTS: &[&str] = &[
    "config A",
    "menuconfig B",
    "\tbool \"p\"",
    "\ttristate \"t\" if X",
    "\tdef_bool y",
    "\tdepends on A && !B",
    "\tselect C if D",
    "\timply E",
    "\tdefault y if F",
    "\trange 1 10 if G",
    "\thelp",
    "\t  text depends on nothing",
    "if H",
    "endif",
    "menu \"m\"",
    "endmenu",
    "choice",
    "endchoice",
    "source \"x/Kconfig\"",
    "rsource \"y\"",
    "comment \"c\"",
    "\t$(shell, x)",
];

const CONFIG_FRAGMENTS: &[&str] = &[
    "CONFIG_A=y",
    "CONFIG_B=m",
    "# CONFIG_C is not set",
    "CONFIG_D=\"s\"",
    "CONFIG_E=0x10",
    "CONFIG_F=-3",
    "CONFIG_G=",
    "#",
    "",
    "CONFIG_",
    "=y",
];

const NAME_CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

fn config() -> Config {
    Config::parse("CONFIG_Y=y\nCONFIG_M=m\n# CONFIG_N is not set\nCONFIG_HZ=250\n").unwrap()
}

/// A well-formed expression.
#[derive(Clone, Debug)]
enum E {
    Num(i64),
    Sym(&'static str),
    Defined(&'static str),
    Call(&'static str, &'static str),
    Unary(&'static str, Box<E>),
    Binary(&'static str, Box<E>, Box<E>),
    Cond(Box<E>, Box<E>, Box<E>),
}

const SYMBOLS: &[&str] = &["CONFIG_Y", "CONFIG_M", "CONFIG_N", "CONFIG_HZ", "FOO"];

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        (0i64..300).prop_map(E::Num),
        proptest::sample::select(SYMBOLS).prop_map(E::Sym),
        proptest::sample::select(SYMBOLS).prop_map(E::Defined),
        (
            proptest::sample::select(
                &["IS_ENABLED", "IS_BUILTIN", "IS_MODULE", "IS_REACHABLE"][..]
            ),
            proptest::sample::select(SYMBOLS)
        )
            .prop_map(|(f, s)| E::Call(f, s)),
    ];
    leaf.prop_recursive(6, 64, 3, |inner| {
        prop_oneof![
            (
                proptest::sample::select(&["!", "~", "-", "+"][..]),
                inner.clone()
            )
                .prop_map(|(op, e)| E::Unary(op, Box::new(e))),
            (
                proptest::sample::select(
                    &[
                        "*", "/", "%", "+", "-", "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&",
                        "^", "|", "&&", "||"
                    ][..]
                ),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, a, b)| E::Binary(op, Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone(), inner).prop_map(|(c, a, b)| E::Cond(
                Box::new(c),
                Box::new(a),
                Box::new(b)
            )),
        ]
    })
}

/// Fully parenthesized, numbers in decimal, hex or octal.
fn render(e: &E) -> String {
    match e {
        E::Num(n) => match n % 3 {
            0 => n.to_string(),
            1 => format!("{n:#x}"),
            _ if *n == 0 => "0".into(),
            _ => format!("0{n:o}"),
        },
        E::Sym(s) => s.to_string(),
        E::Defined(s) if s.len() % 2 == 0 => format!("defined({s})"),
        E::Defined(s) => format!("defined {s}"),
        E::Call(f, s) => format!("{f}({s})"),
        E::Unary(op, a) => format!("{op}({})", render(a)),
        E::Binary(op, a, b) => format!("({} {op} {})", render(a), render(b)),
        E::Cond(c, a, b) => format!("({} ? {} : {})", render(c), render(a), render(b)),
    }
}

/// The reference: what the preprocessor computes, `None` where the config does not decide.
fn reference(e: &E) -> Option<i64> {
    match e {
        E::Num(n) => Some(*n),
        E::Sym(s) => match *s {
            "CONFIG_Y" => Some(1),
            "CONFIG_HZ" => Some(250),
            "CONFIG_M" | "CONFIG_N" => Some(0),
            _ => None,
        },
        E::Defined(s) => match *s {
            "CONFIG_Y" | "CONFIG_HZ" => Some(1),
            "CONFIG_M" | "CONFIG_N" => Some(0),
            _ => None,
        },
        E::Call(f, s) => {
            let (y, m) = match *s {
                "CONFIG_Y" => (true, false),
                "CONFIG_M" => (false, true),
                "CONFIG_N" | "CONFIG_HZ" => (false, false),
                _ => return None,
            };
            match *f {
                "IS_ENABLED" => Some((y || m) as i64),
                "IS_BUILTIN" => Some(y as i64),
                "IS_MODULE" => Some(m as i64),
                _ if y => Some(1),
                _ if m => None,
                _ => Some(0),
            }
        }
        E::Unary(op, a) => {
            let v = reference(a)?;
            Some(match *op {
                "!" => (v == 0) as i64,
                "~" => !v,
                "-" => v.wrapping_neg(),
                _ => v,
            })
        }
        E::Binary(op, a, b) => {
            let (a, b) = (reference(a), reference(b));
            match *op {
                "&&" => match (a, b) {
                    (Some(0), _) | (_, Some(0)) => Some(0),
                    (Some(_), Some(_)) => Some(1),
                    _ => None,
                },
                "||" => match (a, b) {
                    (Some(x), _) if x != 0 => Some(1),
                    (_, Some(y)) if y != 0 => Some(1),
                    (Some(_), Some(_)) => Some(0),
                    _ => None,
                },
                _ => {
                    let (a, b) = (a?, b?);
                    match *op {
                        "*" => Some(a.wrapping_mul(b)),
                        "/" => a.checked_div(b),
                        "%" => a.checked_rem(b),
                        "+" => Some(a.wrapping_add(b)),
                        "-" => Some(a.wrapping_sub(b)),
                        "<<" => a.checked_shl(u32::try_from(b).ok()?),
                        ">>" => a.checked_shr(u32::try_from(b).ok()?),
                        "<" => Some((a < b) as i64),
                        ">" => Some((a > b) as i64),
                        "<=" => Some((a <= b) as i64),
                        ">=" => Some((a >= b) as i64),
                        "==" => Some((a == b) as i64),
                        "!=" => Some((a != b) as i64),
                        "&" => Some(a & b),
                        "^" => Some(a ^ b),
                        _ => Some(a | b),
                    }
                }
            }
        }
        E::Cond(c, a, b) => {
            let (a, b) = (reference(a), reference(b));
            match reference(c) {
                Some(0) => b,
                Some(_) => a,
                None if a == b => a,
                None => None,
            }
        }
    }
}

fn tri(v: Option<i64>) -> Tri {
    match v {
        None => Tri::Unknown,
        Some(0) => Tri::False,
        Some(_) => Tri::True,
    }
}

/// Lines of `text` as the parsers count them.
fn line_count(text: &str) -> u32 {
    text.lines().count() as u32
}

proptest! {
    #[test]
    fn eval_never_panics_on_arbitrary_text(text in soup(EXPR_FRAGMENTS)) {
        let c = config();
        let _ = eval(&text, &c);
        let _ = eval(&text.replace('\n', " "), &c);
    }

    #[test]
    fn eval_agrees_with_the_reference_evaluator(e in expr()) {
        let text = render(&e);
        prop_assert_eq!(eval(&text, &config()), tri(reference(&e)), "{}", text);
    }

    #[test]
    fn config_parse_never_panics_and_errors_never_quote(text in soup(CONFIG_FRAGMENTS)) {
        match Config::parse(&text) {
            Ok(c) => {
                prop_assert!(c.set_count() <= text.lines().count());
            }
            Err(e) => {
                let (line, rest) = e.strip_prefix("line ").and_then(|r| r.split_once(": ")).unwrap();
                let n: usize = line.parse().unwrap();
                prop_assert!(n >= 1 && n <= text.split('\n').count());
                prop_assert!(rest.starts_with("expected "), "{}", e);
            }
        }
        let _ = Config::from_macros(&text);
    }

    #[test]
    fn a_written_config_reads_back(
        values in proptest::collection::btree_map(
            proptest::collection::vec(proptest::sample::select(NAME_CHARS), 1..10)
                .prop_map(|c| format!("CONFIG_{}", String::from_utf8_lossy(&c))),
            prop_oneof![
                Just(Value::Yes),
                Just(Value::Module),
                Just(Value::No),
                any::<i64>().prop_map(Value::Number),
                proptest::collection::vec(proptest::sample::select(NAME_CHARS), 0..8)
                    .prop_map(|c| Value::Text(String::from_utf8_lossy(&c).to_lowercase())),
            ],
            0..24,
        )
    ) {
        let text: String = values
            .iter()
            .map(|(k, v)| match v {
                Value::Yes => format!("{k}=y\n"),
                Value::Module => format!("{k}=m\n"),
                Value::No => format!("# {k} is not set\n"),
                Value::Number(n) => format!("{k}={n}\n"),
                Value::Text(t) => format!("{k}=\"{t}\"\n"),
            })
            .collect();
        let c = Config::parse(&text).unwrap();
        let got: BTreeMap<String, Value> =
            values.keys().map(|k| (k.clone(), c.value(k).cloned().unwrap())).collect();
        prop_assert_eq!(got, values);
        prop_assert_eq!(c.value("CONFIG_NOT_WRITTEN_HERE_"), Some(&Value::No));
    }

    #[test]
    fn makefile_parse_never_panics_and_keeps_lines_and_bounds(text in soup(MAKEFILE_FRAGMENTS)) {
        let m = makefile::parse("d/Makefile", &text);
        let lines = line_count(&text);
        for a in &m.assigns {
            prop_assert!(a.line >= 1 && a.line <= lines, "line {} of {}", a.line, lines);
            prop_assert!(a.conditions.len() <= makefile::MAX_CONDITIONS);
            let origin = format!("d/Makefile:{} ", a.line);
            prop_assert!(a.origin.starts_with(&origin), "{}", a.origin);
            prop_assert!(!a.stem.is_empty());
        }
        for u in &m.uses {
            prop_assert!(u.line >= 1 && u.line <= lines);
            prop_assert!(u.symbol.starts_with("CONFIG_") && u.symbol.len() > 7);
        }
    }

    #[test]
    fn kconfig_parse_never_panics_and_keeps_lines(text in soup(KCONFIG_FRAGMENTS)) {
        let k = kconfig::parse("d/Kconfig", &text);
        let lines = line_count(&text);
        let mut previous = 0;
        for e in &k.entries {
            prop_assert!(e.line > previous && e.line <= e.end_line && e.end_line <= lines);
            prop_assert!(e.symbol.starts_with("CONFIG_"));
            previous = e.line;
        }
        for u in &k.uses {
            prop_assert!(u.line >= 1 && u.line <= lines);
            prop_assert!(u.symbol.starts_with("CONFIG_"));
        }
    }

    #[test]
    fn kbuild_resolve_never_panics_and_stays_in_the_tree(
        top in soup(MAKEFILE_FRAGMENTS),
        sub in soup(MAKEFILE_FRAGMENTS),
    ) {
        let top = format!("obj-y += b/ ../ ./\n{top}");
        let files: BTreeMap<&str, &str> =
            [("Kbuild", top.as_str()), ("b/Makefile", sub.as_str()), ("arch/x86/Makefile", sub.as_str())]
                .into_iter()
                .collect();
        let read = |p: &str| files.get(p).map(|t| t.to_string());
        let p = kbuild::resolve(&read, &["x86".to_string()]);
        for (path, alts) in &p.paths {
            prop_assert!(!path.starts_with('/') && !path.split('/').any(|c| c == ".." || c == "."), "{}", path);
            for alt in alts {
                prop_assert!(alt.iter().all(|&id| (id as usize) < p.atoms.len()));
            }
        }
    }
}
