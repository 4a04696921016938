//! The shape the code keeps (ARCHITECTURE.md): no import cycle between the top-level modules of
//! a crate, and no function over 120 lines outside tests. Both are read from the sources as
//! rustfmt leaves them (comments and `#[cfg(test)]` modules left out).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a function may be, in lines from its `fn` to its closing brace.
const MAX_FN_LINES: usize = 120;

/// The crates whose sources are checked: `(name, src dir)`.
fn crates() -> Vec<(&'static str, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        ("knav", root.join("src")),
        ("knav-c", root.join("c/src")),
        ("knav-hw", root.join("hw/src")),
        ("knav-index", root.join("index/src")),
        ("knav-query", root.join("query/src")),
        ("knav-ctags", root.join("ctags/src")),
        ("knav-kconfig", root.join("kconfig/src")),
        ("kernel-bench", root.join("kernel-bench/src")),
    ]
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The text of a source file before its `#[cfg(test)]` module (tests sit at the end).
fn non_test(text: &str) -> &str {
    text.find("\n#[cfg(test)]\nmod ")
        .map_or(text, |i| &text[..i])
}

/// The top-level module a file of `src` belongs to (`None` for the crate root files).
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.trim_end_matches(".rs").to_string();
    (!matches!(name.as_str(), "lib" | "main")).then_some(name)
}

/// The top-level modules `text` names through `crate::` (and `super::` in a top-level file).
fn references(
    text: &str,
    own: &str,
    top_level_file: bool,
    modules: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |name: &str| {
        if name != own && modules.contains(name) {
            out.insert(name.to_string());
        }
    };
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + 7..];
        if rest.starts_with('{') {
            // use crate::{a::x, b};
            let inner = &rest[1..rest.find('}').unwrap_or(rest.len())];
            for part in inner.split(',') {
                add(part.trim().split("::").next().unwrap_or("").trim());
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            add(&name);
        }
    }
    if top_level_file {
        for (i, _) in text.match_indices("super::") {
            let name: String = text[i + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            add(&name);
        }
    }
    out
}

/// The import graph between the top-level modules of the crate in `src`.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(src, f)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(own) = top_module(src, f) else {
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        let top_level_file = f.parent() == Some(src);
        let code: String = non_test(&text)
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| format!("{l}\n"))
            .collect();
        let refs = references(&code, &own, top_level_file, &modules);
        g.entry(own).or_default().extend(refs);
    }
    g
}

/// The strongly connected components of `g` with more than one module (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// `(file:function, lines)` of each function of `text` over [`MAX_FN_LINES`].
fn long_functions(shown: &str, text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = non_test(text).lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        let Some(at) = body.find("fn ") else {
            continue;
        };
        let head = &body[..at];
        let is_item = head.split_whitespace().all(|w| {
            matches!(
                w,
                "pub"
                    | "pub(crate)"
                    | "pub(super)"
                    | "const"
                    | "unsafe"
                    | "async"
                    | "extern"
                    | "\"C\""
            )
        });
        if !is_item || body.starts_with("//") {
            continue;
        }
        let name: String = body[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The body ends at the first `}` line at the `fn`'s indent; a declaration ends in `;`.
        let close = format!("{}}}", " ".repeat(indent));
        let mut end = None;
        for (j, l) in lines.iter().enumerate().skip(i) {
            if l.trim_end() == close {
                end = Some(j);
                break;
            }
            if j == i && l.trim_end().ends_with(';') {
                break;
            }
        }
        if let Some(end) = end {
            let n = end - i + 1;
            if n > MAX_FN_LINES {
                out.push((format!("{shown}:{name}"), n));
            }
        }
    }
    out
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let mut found = Vec::new();
    for (name, src) in crates() {
        for c in cycles(&graph(&src)) {
            found.push(format!("{name}: {}", c.join(" ")));
        }
    }
    assert!(
        found.is_empty(),
        "import cycles between top-level modules: {found:?}"
    );
}

#[test]
fn no_function_over_120_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for (_, src) in crates() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let shown = f.strip_prefix(root).unwrap().display().to_string();
            let text = std::fs::read_to_string(&f).unwrap();
            found.extend(long_functions(&shown, &text));
        }
    }
    assert!(
        found.is_empty(),
        "functions over {MAX_FN_LINES} lines: {found:?}"
    );
}

#[test]
fn the_checks_see_a_cycle_and_a_long_function() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&g), [["a", "b", "c"]]);
    let modules: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(
        references(
            "use crate::{b::x, c};\nlet y = crate::a::z;",
            "a",
            true,
            &modules
        ),
        ["b", "c"].iter().map(|s| s.to_string()).collect()
    );
    let long = format!(
        "pub fn big() {{\n{}}}\nfn small() {{\n}}\n",
        "    x();\n".repeat(119)
    );
    assert_eq!(
        long_functions("f.rs", &long),
        [("f.rs:big".to_string(), 121)]
    );
}
