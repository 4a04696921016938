//! Every dependency a workspace crate declares is used by its code: a dependency nothing names
//! is only build time, binary weight and supply-chain surface. A crate counts as used when a
//! source file of the package names it as a path (`name::`), in a `use` or an `extern crate`,
//! or calls one of its macros (`name!`).

use std::path::{Path, PathBuf};

/// The dependency tables whose crates must be named by the package's sources.
const TABLES: [&str; 3] = [
    "[dependencies]",
    "[dev-dependencies]",
    "[build-dependencies]",
];

/// The workspace's package directories, from the root manifest's `members`.
fn members(root: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let start = text.find("members = [").expect("a workspace members list");
    let list = &text[start..];
    let list = &list[list.find('[').unwrap() + 1..list.find(']').unwrap()];
    list.split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| {
            if m == "." {
                root.to_path_buf()
            } else {
                root.join(m)
            }
        })
        .collect()
}

/// The crate names (`-` as `_`) declared in `manifest`'s dependency tables.
fn declared(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_table = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = TABLES.contains(&line);
            continue;
        }
        if !in_table || line.starts_with('#') || line.is_empty() {
            continue;
        }
        // A renamed dependency is named in the code by its key, as any other.
        let Some((key, _)) = line.split_once('=') else {
            continue;
        };
        let name = key.trim().split('.').next().unwrap_or("").replace('-', "_");
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name();
        if name == "target" || name == "fixtures" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Whether `text` names crate `name` as code does.
fn names(text: &str, name: &str) -> bool {
    let mut at = 0;
    while let Some(i) = text[at..].find(name) {
        let start = at + i;
        let end = start + name.len();
        at = end;
        let before = text[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let after = &text[end..];
        let used = after.starts_with("::")
            || after.starts_with('!')
            || text[..start].ends_with("use ")
            || text[..start].ends_with("extern crate ");
        if used {
            return true;
        }
    }
    false
}

#[test]
fn every_declared_dependency_is_used_by_its_package() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut unused = Vec::new();
    for package in members(root) {
        let manifest = std::fs::read_to_string(package.join("Cargo.toml")).unwrap();
        let mut files = Vec::new();
        for dir in ["src", "tests", "benches", "examples"] {
            sources(&package.join(dir), &mut files);
        }
        files.push(package.join("build.rs"));
        let texts: Vec<String> = files
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .collect();
        for dep in declared(&manifest) {
            if !texts.iter().any(|t| names(t, &dep)) {
                unused.push(format!("{}: {dep}", package.join("Cargo.toml").display()));
            }
        }
    }
    assert!(
        unused.is_empty(),
        "dependencies nothing uses (remove them from Cargo.toml):\n{}",
        unused.join("\n")
    );
}

#[test]
fn a_dependency_is_used_only_when_named_as_code_names_a_crate() {
    assert!(names("let x = memchr::memchr(b'a', s);", "memchr"));
    assert!(names("use serde::Deserialize;", "serde"));
    assert!(names("use rayon;", "rayon"));
    assert!(names("proptest! { }", "proptest"));
    assert!(!names("// fst is a nice crate", "fst"));
    assert!(!names("let my_fst::x = 1;", "fst"));
    assert!(!names("serde_json::to_string(&v)", "serde"));
    assert_eq!(
        declared(
            "[dependencies]\nfoo-bar = \"1\"\n# x = 1\nbaz.workspace = true\n[features]\nq = []\n"
        ),
        ["foo_bar", "baz"]
    );
}
