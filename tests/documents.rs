//! The documents at the top of the repository (README.md, GUIDE.md, TESTING.md, BENCHMARKS.md,
//! ARCHITECTURE.md, SECURITY.md): the README stays short and keeps, word for word, the two
//! set-up commands `.ci/run` and the project's rules depend on, and every relative link between
//! the documents resolves, to a file and, after a `#`, to one of its headings.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The documents, from the repository's root.
const DOCUMENTS: &[&str] = &[
    "README.md",
    "GUIDE.md",
    "TESTING.md",
    "BENCHMARKS.md",
    "ARCHITECTURE.md",
    "SECURITY.md",
];

/// The longest the README may be, in lines.
const README_LINES: usize = 200;

/// The set-up commands the README must show as they are: the main job, then the tests.
const SET_UP: &[&str] = &[
    "cargo run --release -- def kmap --root tests/fixtures/minikernel",
    "cargo test --workspace",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines of `text` outside fenced code blocks, numbered from 1.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// The lines inside fenced code blocks.
fn fenced(text: &str) -> Vec<&str> {
    let outside: BTreeSet<usize> = prose(text).into_iter().map(|(n, _)| n).collect();
    text.lines()
        .enumerate()
        .filter(|(i, l)| !outside.contains(&(i + 1)) && !l.trim_start().starts_with("```"))
        .map(|(_, l)| l)
        .collect()
}

/// A heading's anchor as GitHub makes it: lower case, letters, digits, `-` and `_` kept,
/// spaces turned into `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a document's headings; a repeated one gets `-1`, `-2`, … as on GitHub.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, line) in prose(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if hashes == 0 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while out.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        out.insert(anchor);
    }
    out
}

/// A line with its inline code spans taken out.
fn without_code(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// The targets of the Markdown links of `text` outside code: `(line, target)`.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose(text) {
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push((n, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn the_readme_is_short_and_keeps_the_two_set_up_commands() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= README_LINES,
        "README.md has {lines} lines, more than {README_LINES}: move the details to GUIDE.md"
    );
    let code = fenced(&readme);
    for command in SET_UP {
        assert!(
            code.iter().any(|l| l.trim_end() == *command),
            "README.md does not show `{command}` on a line of its own in a code block"
        );
    }
}

#[test]
fn every_relative_link_between_the_documents_resolves() {
    let root = root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in DOCUMENTS {
        let text = read(&root.join(doc));
        for (n, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, fragment) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                root.join(doc)
            } else {
                root.join(file)
            };
            if !path.exists() {
                broken.push(format!("{doc}:{n}: {target}: no such file"));
                continue;
            }
            if let Some(anchor) = fragment {
                let is_md = path.extension().is_some_and(|e| e == "md");
                if !is_md || !anchors(&read(&path)).contains(anchor) {
                    broken.push(format!("{doc}:{n}: {target}: no such heading"));
                }
            }
        }
    }
    assert!(
        checked > 0,
        "no relative link found: the link reader is broken"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_links_every_other_document() {
    let readme = read(&root().join("README.md"));
    let targets: BTreeSet<String> = links(&readme)
        .into_iter()
        .map(|(_, t)| t.split('#').next().unwrap_or_default().to_string())
        .collect();
    for doc in &DOCUMENTS[1..] {
        assert!(targets.contains(*doc), "README.md does not link {doc}");
    }
}

#[test]
fn the_link_and_heading_readers_see_what_github_does() {
    let text = "# A title\n\n## Settings: `.knav.toml`\n\n## Settings: `.knav.toml`\n\n\
                ```\n# not a heading\n[x](nowhere.md)\n```\n\n\
                See [the guide](GUIDE.md#build-and-install) and `[not](a-link)`.\n";
    let a = anchors(text);
    let want: BTreeSet<String> = ["a-title", "settings-knavtoml", "settings-knavtoml-1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(a, want);
    assert_eq!(
        links(text),
        vec![(12, "GUIDE.md#build-and-install".to_string())]
    );
    assert_eq!(
        slug("Which code a .config builds: `--active-config`"),
        "which-code-a-config-builds---active-config"
    );
}

/// The README's example sessions: in a fenced block, a line `$ knav ARGS` followed by what it
/// prints, up to the block's end or the next `$` line.
fn sessions(text: &str) -> Vec<(Vec<String>, String)> {
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    let mut fenced = false;
    let mut open = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            open = false;
        } else if let Some(cmd) = line.strip_prefix("$ knav ").filter(|_| fenced) {
            let args = cmd.split_whitespace().map(str::to_string).collect();
            out.push((args, String::new()));
            open = true;
        } else if fenced && open {
            if let Some((_, printed)) = out.last_mut() {
                printed.push_str(line);
                printed.push('\n');
            }
        }
    }
    out
}

#[test]
fn the_readme_example_output_is_what_knav_prints() {
    let readme = read(&root().join("README.md"));
    let shown = sessions(&readme);
    assert!(!shown.is_empty(), "README.md shows no `$ knav …` session");
    let fixture = "tests/fixtures/minikernel";
    let copy = common::fixture("readme_examples");
    for (args, printed) in shown {
        let args: Vec<String> = args
            .into_iter()
            .map(|a| {
                if a == fixture {
                    copy.root.display().to_string()
                } else {
                    a
                }
            })
            .collect();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_knav"))
            .args(&args)
            .env_remove("KNAV_INDEX_DIR")
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            got,
            printed,
            "README.md's example `knav {}` no longer prints what knav prints",
            args.join(" ")
        );
    }
}

/// Each crate's directory and the directory of its sources, as ARCHITECTURE.md's module tables
/// head them (`### \`c/\` …`).
const CRATES: &[(&str, &str)] = &[
    ("c/", "c/src"),
    ("hw/", "hw/src"),
    ("ctags/", "ctags/src"),
    ("kconfig/", "kconfig/src"),
    ("index/", "index/src"),
    ("query/", "query/src"),
    ("src/", "src"),
    ("kernel-bench/", "kernel-bench/src"),
];

/// The modules of the crate whose sources are in `src`, as ARCHITECTURE.md names them: a
/// file's path below `src` without `.rs` (`mod.rs` naming its directory), `::` between the
/// parts; `lib.rs` is the crate itself and is left out.
fn module_files(src: &Path) -> BTreeSet<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                walk(&path, &format!("{prefix}{name}::"), out);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let module = match stem {
                    "lib" if prefix.is_empty() => continue,
                    "mod" => prefix.trim_end_matches("::").to_string(),
                    _ => format!("{prefix}{stem}"),
                };
                out.insert(module);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(src, "", &mut out);
    out
}

/// The modules ARCHITECTURE.md's `## Modules` section names, per crate heading (`### \`c/\``):
/// the code spans of the first cell of each table row, in order, repeats kept.
fn tabled_modules(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut inside = false;
    for (_, line) in prose(text) {
        if let Some(heading) = line.strip_prefix("## ") {
            inside = heading.trim() == "Modules";
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(heading) = line.strip_prefix("### ") {
            let dir = heading.split('`').nth(1).unwrap_or_default().to_string();
            out.push((dir, Vec::new()));
            continue;
        }
        let Some(row) = line.strip_prefix('|') else {
            continue;
        };
        let cell = row.split('|').next().unwrap_or_default();
        if cell.trim_start().starts_with("---") || cell.trim() == "module" {
            continue;
        }
        if let Some((_, names)) = out.last_mut() {
            names.extend(cell.split('`').skip(1).step_by(2).map(str::to_string));
        }
    }
    out
}

/// What is wrong between the modules a crate has and those its table names: a module not
/// named, one named twice, a name with no module.
fn module_table_faults(dir: &str, files: &BTreeSet<String>, named: &[String]) -> Vec<String> {
    let mut faults = Vec::new();
    for module in files {
        match named.iter().filter(|n| *n == module).count() {
            0 => faults.push(format!("{dir}: module `{module}` is in no row")),
            1 => {}
            n => faults.push(format!("{dir}: module `{module}` is named {n} times")),
        }
    }
    for name in named {
        if !files.contains(name) {
            faults.push(format!("{dir}: `{name}` names no module file"));
        }
    }
    faults
}

#[test]
fn architecture_names_every_module_of_every_crate_once() {
    let root = root();
    let tables = tabled_modules(&read(&root.join("ARCHITECTURE.md")));
    let mut faults = Vec::new();
    for (dir, src) in CRATES {
        let files = module_files(&root.join(src));
        assert!(
            !files.is_empty(),
            "{src}: no module found: the walk is broken"
        );
        let Some((_, named)) = tables.iter().find(|(d, _)| d == dir) else {
            faults.push(format!(
                "ARCHITECTURE.md has no `### \\`{dir}\\`` module table"
            ));
            continue;
        };
        faults.extend(module_table_faults(dir, &files, named));
    }
    assert!(
        faults.is_empty(),
        "ARCHITECTURE.md's module tables (## Modules) and the sources differ; give each \
         module one row (or one name in a row) with its job:\n{}",
        faults.join("\n")
    );
}

#[test]
fn the_module_table_check_sees_a_missing_a_repeated_and_a_stale_name() {
    let text = "## Modules\n\n### `c/` (`knav-c`)\n\n| module | its job |\n|---|---|\n\
                | `lex`, `scan` | lexing; scanning |\n| `scan` | again |\n| `gone` | old |\n\n\
                ## Next\n\n| `spans` | not in the section |\n";
    let tables = tabled_modules(text);
    assert_eq!(tables.len(), 1);
    let files: BTreeSet<String> = ["lex", "scan", "spans"].map(String::from).into();
    let faults = module_table_faults("c/", &files, &tables[0].1);
    assert_eq!(
        faults,
        [
            "c/: module `scan` is named 2 times",
            "c/: module `spans` is in no row",
            "c/: `gone` names no module file",
        ]
    );
    let here = module_files(&root().join("query/src"));
    assert!(here.contains("query::fuzzy") && here.contains("render") && !here.contains("lib"));
}
