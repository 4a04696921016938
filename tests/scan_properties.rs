//! Property tests of the scanner (`knav::scan`): on arbitrary bytes it never panics and what it
//! reports stays inside the file; on generated C-like text with nested `#if`/`#elif`/`#else`,
//! the guard of every line equals a simple model's. CI-sized (a few seconds in a debug build);
//! run longer with `PROPTEST_CASES=100000 cargo test --release --test scan_properties`.

use knav::scan::{scan, FileScan};
use proptest::prelude::*;

/// Bytes that are mostly C's own: the lexer's states are reached far more often than with
/// uniform bytes, and any byte can still appear.
fn c_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        any::<u8>().prop_map(|b| vec![b]),
        prop::sample::select(vec![
            "#if A\n",
            "#ifdef B\n",
            "#ifndef C\n",
            "#elif D\n",
            "#else\n",
            "#endif\n",
            "#define M(a, b) a ## b \\\n",
            "#define N 1\n",
            "#undef N\n",
            "/*",
            "*/",
            "//",
            "\"",
            "'",
            "\\",
            "\\\n",
            "\n",
            "\r\n",
            " ",
            "(",
            ")",
            "{",
            "}",
            ";",
            "=",
            "*",
            "struct s",
            "enum e",
            "typedef",
            "extern",
            "f(",
            "x",
            "EXPORT_SYMBOL(",
            "0x1f",
            "__attribute__((",
            "DEFINE_MUTEX(",
            "L\"",
            "#",
            "defined(",
        ])
        .prop_map(|s: &str| s.as_bytes().to_vec()),
    ];
    prop::collection::vec(piece, 0..200).prop_map(|v| v.concat())
}

/// What every scan must satisfy, whatever its input.
fn check_invariants(src: &[u8], s: &FileScan) {
    let lines = s.lines.max(1);
    for o in &s.occurrences {
        let (start, end) = (o.start as usize, o.start as usize + o.len as usize);
        assert!(end <= src.len(), "occurrence past the end: {o:?}");
        assert!(o.line >= 1 && o.line <= lines, "{o:?} of {lines} lines");
        assert!(o.col >= 1);
        let name = &src[start..end];
        assert!(
            !name.is_empty()
                && (name[0].is_ascii_alphabetic() || name[0] == b'_')
                && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_'),
            "not an identifier: {name:?}"
        );
    }
    for w in s.occurrences.windows(2) {
        assert!(w[0].start < w[1].start, "occurrences out of order");
    }
    for m in &s.macros {
        assert!(m.line >= 1 && m.line <= m.end_line, "{m:?}");
        assert!(m.end_line <= lines, "{m:?} of {lines} lines");
        assert!(m.start as usize + m.len as usize <= src.len());
    }
    for &(a, b) in &s.opaque {
        assert!(
            a <= b && b as usize <= src.len(),
            "opaque {a}..{b} of {}",
            src.len()
        );
    }
    for w in s.guards.transitions.windows(2) {
        assert!(w[0].0 < w[1].0, "transitions out of line order");
    }
    for (line, conds) in &s.guards.transitions {
        assert!(
            *line >= 1 && *line <= lines + 1,
            "transition at {line} of {lines}"
        );
        assert!(conds.len() <= knav::guard::MAX_DEPTH);
    }
    for &i in &s.invocations {
        assert!((i as usize) < s.occurrences.len());
    }
}

/// A generated piece of C: a code line, or an `#if` group of branches and an optional `#else`.
#[derive(Clone, Debug)]
enum Item {
    Code,
    Group {
        /// `(directive, condition, body)`; the first is the `#if`, the rest `#elif`s.
        branches: Vec<(Kind, String, Vec<Item>)>,
        otherwise: Option<Vec<Item>>,
    },
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Ifdef,
    Ifndef,
    If,
}

fn items() -> impl Strategy<Value = Vec<Item>> {
    let leaf = Just(Item::Code);
    let item = leaf.prop_recursive(4, 48, 4, |inner| {
        let body = prop::collection::vec(inner, 0..4);
        let cond = prop::sample::select(vec!["CONFIG_A", "CONFIG_B", "X", "Y_1"]);
        let kind = prop::sample::select(vec![Kind::Ifdef, Kind::Ifndef, Kind::If]);
        let branch = (kind, cond, body.clone()).prop_map(|(k, c, b)| {
            let c = match k {
                Kind::If => format!("{c} > 1"),
                _ => c.to_string(),
            };
            (k, c, b)
        });
        (prop::collection::vec(branch, 1..4), prop::option::of(body)).prop_map(
            |(branches, otherwise)| Item::Group {
                branches,
                otherwise,
            },
        )
    });
    prop::collection::vec(item, 0..6)
}

/// Renders `items` and, for each code line, the guard the contract gives it.
fn render(
    items: &[Item],
    stack: &mut Vec<String>,
    src: &mut String,
    want: &mut Vec<(u32, Vec<String>)>,
) {
    for item in items {
        match item {
            Item::Code => {
                src.push_str("int v;\n");
                want.push((src.lines().count() as u32, stack.clone()));
            }
            Item::Group {
                branches,
                otherwise,
            } => {
                let mut negated: Vec<String> = Vec::new();
                for (i, (kind, cond, body)) in branches.iter().enumerate() {
                    let (directive, pos, neg) = match (i, kind) {
                        (0, Kind::Ifdef) => ("#ifdef", cond.clone(), format!("!{cond}")),
                        (0, Kind::Ifndef) => ("#ifndef", format!("!{cond}"), cond.clone()),
                        (0, Kind::If) => ("#if", cond.clone(), format!("!({cond})")),
                        (_, Kind::Ifdef) => ("#elifdef", cond.clone(), format!("!{cond}")),
                        (_, Kind::Ifndef) => ("#elifndef", format!("!{cond}"), cond.clone()),
                        (_, Kind::If) => ("#elif", format!("({cond})"), format!("!({cond})")),
                    };
                    src.push_str(&format!("{directive} {cond}\n"));
                    let text = negated
                        .iter()
                        .cloned()
                        .chain([pos])
                        .collect::<Vec<_>>()
                        .join(" && ");
                    negated.push(neg);
                    stack.push(text);
                    render(body, stack, src, want);
                    stack.pop();
                }
                if let Some(body) = otherwise {
                    src.push_str("#else\n");
                    stack.push(negated.join(" && "));
                    render(body, stack, src, want);
                    stack.pop();
                }
                src.push_str("#endif\n");
            }
        }
    }
}

// proptest's own default: 256 cases, or `PROPTEST_CASES` (which `with_cases` would override).
proptest! {

    #[test]
    fn the_scanner_on_arbitrary_bytes_never_panics_and_stays_inside_the_file(src in c_like_bytes()) {
        let s = scan(&src);
        check_invariants(&src, &s);
    }

    #[test]
    fn the_scanner_on_uniform_random_bytes_never_panics(src in prop::collection::vec(any::<u8>(), 0..4096)) {
        let s = scan(&src);
        check_invariants(&src, &s);
    }

    #[test]
    fn the_guard_of_every_line_equals_the_models(items in items()) {
        // Code first: no group can be taken for an include guard.
        let mut src = String::from("int first;\n");
        let mut want = Vec::new();
        render(&items, &mut Vec::new(), &mut src, &mut want);
        let s = scan(src.as_bytes());
        prop_assert!(s.guards.warnings.is_empty(), "{:?}", s.guards.warnings);
        for (line, guard) in want {
            prop_assert_eq!(s.guards.at(line), &guard[..], "line {} of\n{}", line, src);
        }
    }
}
