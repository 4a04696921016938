//! `knav grep`'s plain output against rg, byte for byte (rg is the oracle): `path:line:text`
//! when stdout is not a terminal or with `--no-heading` (as `rg -n --no-heading`),
//! `--vimgrep`, `-l`, `-c` and `-m`, every hit (no page), in rg's `--sort path` order; the
//! grouped form with `--heading`, translations after the rest. Needs ripgrep.

use std::path::Path;
use std::process::Command;

mod common;
use common::{fixture, knav_output, Tree};

/// Bytes shown in a failure: printable, with what is not UTF-8 escaped.
fn shown(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// rg's stdout, run in `root` with `args` and its files sorted by path.
fn rg(root: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("rg")
        .args(["--sort", "path", "--color", "never"])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("ripgrep is needed (apt-get install ripgrep): {e}"));
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "rg {args:?}: {}",
        shown(&out.stderr)
    );
    out.stdout
}

/// `knav grep ARGS` with stdout piped: (exit code, stdout's bytes).
fn knav_grep(t: &Tree, args: &[&str]) -> (i32, Vec<u8>) {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .arg("grep")
        .args(args)
        .arg("--root")
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "knav grep {args:?}: {code}: {}",
        shown(&out.stderr)
    );
    (code, out.stdout)
}

/// The same bytes, or both shown.
fn assert_same(got: &[u8], want: &[u8], what: &str) {
    assert!(
        got == want,
        "{what}\n--- knav\n{}\n--- rg\n{}",
        shown(got),
        shown(want)
    );
}

/// A fixture copy, indexed.
fn indexed(name: &str) -> Tree {
    let t = fixture(name);
    let (code, _, err) = knav_output(&t, &["index"]);
    assert_eq!(code, 0, "{err}");
    t
}

/// Patterns compared: selective, common, case-insensitive, words, anchored, alternatives,
/// fixed strings, every line.
const PATTERNS: &[&[&str]] = &[
    &["kmap"],
    &["read"],
    &["-i", "READ"],
    &["-w", "read"],
    &["-i", "-w", "KMAP"],
    &["^#"],
    &["e$"],
    &["kmalloc|kfree"],
    &["-F", "("],
    &["-F", "a.b"],
    &["[0-9]+"],
    &["no_such_text_anywhere"],
];

/// `knav grep` with `knav_flags` against `rg` with `rg_flags`, for every pattern.
fn same_as_rg(t: &Tree, knav_flags: &[&str], rg_flags: &[&str]) {
    for p in PATTERNS {
        let k: Vec<&str> = knav_flags.iter().chain(p.iter()).copied().collect();
        let r: Vec<&str> = rg_flags.iter().chain(p.iter()).copied().collect();
        let (code, out) = knav_grep(t, &k);
        let want = rg(&t.root, &r);
        assert_same(&out, &want, &format!("knav grep {k:?} against rg {r:?}"));
        assert_eq!(code, if want.is_empty() { 1 } else { 0 }, "{k:?}");
    }
}

#[test]
fn grep_piped_prints_path_line_text_as_rg_n_no_heading() {
    let t = indexed("rg-lines");
    same_as_rg(&t, &[], &["-n", "--no-heading"]);
    same_as_rg(&t, &["--no-heading", "-n"], &["-n", "--no-heading"]);
    // The CRLF file's `\r` and the last line without a newline, as rg prints them.
    let (_, out) = knav_grep(&t, &["echo kmap"]);
    assert_same(&out, b"scripts/no_newline.sh:2:echo kmap\n", "no newline");
}

#[test]
fn grep_vimgrep_prints_one_line_per_match_as_rg() {
    let t = indexed("rg-vimgrep");
    same_as_rg(&t, &["--vimgrep"], &["--vimgrep"]);
    // Empty matches at every column, and a line matched only at its very end.
    for p in ["x*", "$", "^"] {
        let got = knav_grep(&t, &["--vimgrep", p]).1;
        assert_same(&got, &rg(&t.root, &["--vimgrep", p]), p);
    }
}

#[test]
fn grep_files_with_matches_and_count_print_as_rg() {
    let t = indexed("rg-files");
    same_as_rg(&t, &["-l"], &["-l"]);
    same_as_rg(&t, &["--files-with-matches"], &["-l"]);
    same_as_rg(&t, &["-c"], &["-c"]);
    same_as_rg(&t, &["--count"], &["-c"]);
}

#[test]
fn grep_max_count_keeps_the_first_lines_of_each_file_as_rg() {
    let t = indexed("rg-max");
    same_as_rg(&t, &["-m", "1"], &["-n", "--no-heading", "-m", "1"]);
    same_as_rg(&t, &["-c", "--max-count", "2"], &["-c", "-m", "2"]);
    same_as_rg(&t, &["--vimgrep", "-m", "2"], &["--vimgrep", "-m", "2"]);
}

#[test]
fn grep_context_prints_rgs_context_lines_and_separators() {
    let t = indexed("rg-context");
    same_as_rg(&t, &["-C", "1"], &["-n", "--no-heading", "-C", "1"]);
    same_as_rg(&t, &["--context", "3"], &["-n", "--no-heading", "-C", "3"]);
    same_as_rg(&t, &["--vimgrep", "-C", "2"], &["--vimgrep", "-C", "2"]);
    same_as_rg(
        &t,
        &["-m", "1", "-C", "2"],
        &["-n", "--no-heading", "-m", "1", "-C", "2"],
    );
    // A match in the context after the last one -m counts is printed as a match, as rg does.
    same_as_rg(
        &t,
        &["-m", "2", "-C", "1"],
        &["-n", "--no-heading", "-m", "2", "-C", "1"],
    );
    same_as_rg(
        &t,
        &["--vimgrep", "-m", "1", "-C", "1"],
        &["--vimgrep", "-m", "1", "-C", "1"],
    );
}

#[test]
fn grep_of_one_file_prints_no_path_as_rg() {
    let t = indexed("rg-one-file");
    for flags in [
        &["-n", "--no-heading"][..],
        &["-c"],
        &["-l"],
        &["--vimgrep"],
    ] {
        let mut k: Vec<&str> = flags.iter().copied().filter(|f| *f != "-n").collect();
        k.extend(["read", "fs/read_write.c"]);
        let mut r = flags.to_vec();
        r.extend(["read", "fs/read_write.c"]);
        let got = knav_grep(&t, &k).1;
        assert_same(&got, &rg(&t.root, &r), &format!("{flags:?}"));
    }
    // A directory is no file: paths are printed.
    let (_, out) = knav_grep(&t, &["-c", "read", "fs"]);
    assert_same(&out, &rg(&t.root, &["-c", "read", "fs"]), "fs");
    assert!(out.starts_with(b"fs/"), "{}", shown(&out));
}

/// `knav grep ARGS` run in `dir` without `--root` (the tree found above it), stdout piped:
/// stdout's bytes.
fn knav_grep_in(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .arg("grep")
        .args(args)
        .current_dir(dir)
        .env_remove("KNAV_INDEX_DIR")
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "knav grep {args:?} in {}: {code}: {}",
        dir.display(),
        shown(&out.stderr)
    );
    out.stdout
}

#[test]
fn grep_piped_in_a_subdirectory_prints_paths_as_rg_run_there() {
    let t = indexed("rg-subdir");
    let fs = t.root.join("fs");
    let mut paths: Vec<Vec<&str>> = [
        "",
        ".",
        "./",
        "read_write.c",
        "./read_write.c",
        "../fs/read_write.c",
        "../mm",
        "../mm/",
        "..",
        "ext2",
        "./ext2",
        "ext2/../ext2",
    ]
    .iter()
    .map(|p| p.split_whitespace().collect())
    .collect();
    // Several paths: rg prints them one after another, a file as often as they name it.
    paths.push(vec!["../mm", "./ext2", ".."]);
    paths.push(vec!["read_write.c", "../mm/highmem.c"]);
    let abs_mm = t.root.join("mm");
    let abs_file = fs.join("read_write.c");
    paths.push(vec![abs_mm.to_str().unwrap()]);
    paths.push(vec![abs_file.to_str().unwrap()]);
    for flags in [
        &["-n", "--no-heading"][..],
        &["--vimgrep"],
        &["-l"],
        &["-c"],
        &["-n", "-C", "1"],
    ] {
        for p in &paths {
            let mut r = flags.to_vec();
            r.push("read|kmap|inode");
            r.extend(p);
            let k: Vec<&str> = r.iter().copied().filter(|f| *f != "-n").collect();
            let got = knav_grep_in(&fs, &k);
            assert_same(&got, &rg(&fs, &r), &format!("in fs/: knav grep {k:?}"));
        }
    }
    // main printed `fs/read_write.c:20:9:…` and the path of the one file asked for.
    let got = knav_grep_in(&fs, &["--vimgrep", "vfs_read"]);
    assert!(
        got.starts_with(b"ext2/file.c:6:9:") && shown(&got).contains("\nread_write.c:20:9:"),
        "{}",
        shown(&got)
    );
    let got = knav_grep_in(&fs, &["vfs_read", "read_write.c"]);
    assert!(got.starts_with(b"3:"), "{}", shown(&got));
}

#[test]
fn grep_cli_prints_every_hit_past_the_page_limit() {
    // Past the largest page (1,000), in two files.
    let big: String = (1..=1500).map(|k| format!("int x{k};\n")).collect();
    let t = common::tree("rg-every", &[("fs/a.c", big.as_str()), ("fs/b.h", &big)]);
    let (code, _, err) = knav_output(&t, &["index"]);
    assert_eq!(code, 0, "{err}");
    let (code, out) = knav_grep(&t, &["int x"]);
    assert_eq!(code, 0);
    let want = rg(&t.root, &["-n", "--no-heading", "int x"]);
    assert_eq!(want.iter().filter(|&&b| b == b'\n').count(), 3000);
    assert_same(&out, &want, "every line");
    // --limit pages the grouped form only.
    let (_, out) = knav_grep(&t, &["--limit", "5", "int x"]);
    assert_same(&out, &want, "every line, --limit 5");
    let (_, out) = knav_grep(&t, &["-c", "int x"]);
    assert_same(&out, b"fs/a.c:1500\nfs/b.h:1500\n", "-c");
}

#[test]
fn grep_heading_keeps_the_grouped_form_with_totals_and_a_page() {
    let t = indexed("rg-heading");
    let (code, out) = knav_grep(&t, &["--heading", "--limit", "2", "kmap"]);
    assert_eq!(code, 0);
    let out = shown(&out);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains(" hits in "), "{out}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("[1-2 of ") && l.contains("--offset 2")),
        "{out}"
    );
    // JSON stays the envelope, paged.
    let (_, out, _) = knav_output(&t, &["grep", "--format", "json", "--limit", "2", "kmap"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 2, "{v}");
}

#[test]
fn grep_translations_come_after_the_rest_in_the_grouped_form() {
    let t = indexed("rg-translations");
    let (_, out, _) = knav_output(&t, &["grep", "--format", "json", "-l", "kmap"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    let translation = "Documentation/translations/zh_CN/highmem.rst";
    assert_eq!(paths.last(), Some(&translation), "{paths:?}");
    assert!(paths[0].starts_with("Documentation/"), "{paths:?}");
    let (_, out, _) = knav_output(&t, &["grep", "--format", "json", "kmap"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.last().unwrap()["path"], translation, "{v}");
    // The plain form keeps rg's order: the translation among the other Documentation files.
    let (_, out) = knav_grep(&t, &["-l", "kmap"]);
    assert_same(&out, &rg(&t.root, &["-l", "kmap"]), "-l");
    let out = shown(&out);
    assert_ne!(out.lines().last(), Some(translation), "{out}");
}

/// On Linux 6.12 (`KNAV_KERNEL_TREE`; the index in `KNAV_INDEX_DIR` when set, else the tree's
/// own): `knav grep` piped prints what `rg --sort path` prints, byte for byte, for a common
/// name (49,656 lines of kfree), a regex with --vimgrep, -c and -l.
#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_grep_plain_output_is_rgs_byte_for_byte() {
    let tree = match std::env::var("KNAV_KERNEL_TREE") {
        Ok(t) if !t.is_empty() => std::path::PathBuf::from(t),
        _ => panic!("KNAV_KERNEL_TREE is not set: set it to a Linux 6.12 source tree"),
    };
    let cases: &[(&[&str], &[&str])] = &[
        (&["kfree"], &["-n", "--no-heading", "kfree"]),
        (
            &["--vimgrep", r"kmalloc_array\(.*GFP_KERNEL"],
            &["--vimgrep", r"kmalloc_array\(.*GFP_KERNEL"],
        ),
        (&["-c", "-w", "-i", "todo"], &["-c", "-w", "-i", "todo"]),
        (
            &["-l", r"spin_lock_irq(save)?\(&"],
            &["-l", r"spin_lock_irq(save)?\(&"],
        ),
        (
            &["-C", "2", "-m", "3", "kmem_cache_zalloc"],
            &[
                "-n",
                "--no-heading",
                "-C",
                "2",
                "-m",
                "3",
                "kmem_cache_zalloc",
            ],
        ),
    ];
    for (k, r) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_knav"))
            .arg("grep")
            .args(*k)
            .arg("--root")
            .arg(&tree)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", shown(&out.stderr));
        let want = rg(&tree, r);
        let lines = want.iter().filter(|&&b| b == b'\n').count();
        assert!(lines > 100, "{k:?}: {lines} lines");
        assert!(out.stdout == want, "knav grep {k:?} differs from rg {r:?}");
    }
}
