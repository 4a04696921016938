//! `knav grep` against `rg -n` on the fixture: for every pattern and flag set, the same
//! (path, line) pairs, whatever the file's kind (C, Kconfig, Makefiles, docs, devicetree,
//! CRLF lines, a last line without a newline, UTF-8 text, a 300-character line), with rg's
//! rules for hidden, ignored and binary files. Needs ripgrep (`apt-get install ripgrep`).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

mod common;
use common::{age, fixture, json, knav, knav_output, Tree};

/// `(path, line)` of every line `rg -n ARGS` prints when run in `root`.
fn rg(root: &Path, args: &[&str]) -> BTreeSet<(String, u64)> {
    let out = Command::new("rg")
        .args([
            "-n",
            "--no-heading",
            "--with-filename",
            "--null",
            "--color",
            "never",
        ])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("ripgrep is needed (apt-get install ripgrep): {e}"));
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "rg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut set = BTreeSet::new();
    for line in out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let nul = line.iter().position(|&b| b == 0).expect("--null output");
        let path = String::from_utf8_lossy(&line[..nul]).into_owned();
        let rest = &line[nul + 1..];
        let colon = rest.iter().position(|&b| b == b':').expect("line number");
        let n: u64 = std::str::from_utf8(&rest[..colon])
            .unwrap()
            .parse()
            .unwrap();
        set.insert((path.trim_start_matches("./").to_string(), n));
    }
    set
}

/// `(path, line)` of every hit of `knav grep ARGS`, read page by page, with its total.
fn knav_hits(t: &Tree, args: &[&str]) -> (BTreeSet<(String, u64)>, u64) {
    let mut set = BTreeSet::new();
    let mut offset = 0u64;
    loop {
        let off = offset.to_string();
        let mut a = vec!["grep"];
        a.extend(args);
        a.extend(["--limit", "1000", "--offset", &off]);
        let (code, v) = json(t, &a);
        assert!(
            code == 0 || code == 1,
            "knav grep {args:?}: exit {code}: {v}"
        );
        let rows = v["results"].as_array().unwrap_or_else(|| panic!("{v}"));
        let total = v["total"].as_u64().unwrap();
        for r in rows {
            set.insert((
                r["path"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
            ));
        }
        offset += rows.len() as u64;
        if rows.is_empty() || offset >= total {
            return (set, total);
        }
    }
}

/// Patterns and flags compared with rg: selective, common, case-insensitive, anchored, no
/// literal at all, Unicode, fixed strings, words, and patterns that match nothing.
const CASES: &[&[&str]] = &[
    &["kmap"],
    &["kmap$"],
    &["^kmap"],
    &["-i", "KMAP"],
    &["-i", "ÜNÏCÖDÉ"],
    &["ünïcödé"],
    &["-i", "k"],
    &["-w", "kmap"],
    &["-F", "kmap()"],
    &["-F", "k.ap"],
    &[r"vfs_\w+"],
    &["[A-Z_]{6,}"],
    &["ab"],
    &["(?i)high memory"],
    &["kmap_tail_marker"],
    &["echo kmap"],
    &["compatible = \"acme"],
    &[r"\bsys_\w+"],
    &["x{300}"],
    &["^$"],
    &["."],
    &["config|CONFIG_"],
    &["-w", "-i", "Kmap_High"],
    &["binary"],
    &["here$"],
    &["no_such_text_anywhere"],
    &["-g", "*.rst", "kmap"],
    &["-g", "!Documentation", "-g", "!*.h", "kmap"],
    &["-g", "fs/**", "read"],
];

#[test]
fn every_pattern_finds_exactly_rgs_lines() {
    let t = fixture("grep-rg");
    for case in CASES {
        // rg takes the same flags; knav grep's glob flag is rg's -g.
        let expected = rg(&t.root, case);
        let (got, total) = knav_hits(&t, case);
        assert_eq!(got, expected, "knav grep {case:?} differs from rg");
        assert_eq!(total, expected.len() as u64, "total of {case:?}");
    }
}

#[test]
fn hidden_ignored_and_binary_files_are_left_out_as_rg_leaves_them() {
    let t = fixture("grep-rules");
    let (hits, _) = knav_hits(&t, &["kmap"]);
    let paths: BTreeSet<&str> = hits.iter().map(|(p, _)| p.as_str()).collect();
    // .gitignore is not read outside a git repository: notes.txt is searched.
    assert!(paths.contains("Documentation/notes.txt"), "{paths:?}");
    for left_out in [
        ".hidden_notes",
        ".github/workflow.yml",
        "generated/defs.txt",
        "fs/read_write.c.orig",
        "scratch.txt",
        "firmware/blob.bin",
    ] {
        assert!(!paths.contains(left_out), "{left_out} searched: {paths:?}");
    }
}

#[test]
fn paths_after_the_pattern_narrow_the_search_as_in_rg() {
    let t = fixture("grep-paths");
    let expected = rg(&t.root, &["kmap", "mm", "include/linux"]);
    let (got, _) = knav_hits(&t, &["kmap", "mm", "./include/linux/"]);
    assert_eq!(got, expected);
    assert_eq!(got.len(), 8, "{got:?}");
}

#[test]
fn exit_codes_are_greps() {
    let t = fixture("grep-exit");
    let (code, out) = knav(&t, &["grep", "--heading", "kunmap"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = knav(&t, &["grep", "--heading", "no_such_text_anywhere"]);
    assert_eq!(code, 1, "{out}");
    let (code, out, _) = knav_output(&t, &["grep", "--heading", "foo("]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("unclosed group") && out.contains("foo("),
        "the parser's message, pointing at the error: {out}"
    );
    let (code, out) = knav(&t, &["grep", "--heading", "kmap", "-C", "11"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("0 to 10"), "{out}");
}

#[test]
fn a_hit_carries_its_column_snippet_enclosing_definition_guard_and_context() {
    let t = fixture("grep-record");
    let (code, v) = json(
        &t,
        &["grep", "kmap_high", "mm/highmem.c", "include", "-C", "1"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["total"], 4, "{v}");
    let r = &v["results"];
    // include/linux/highmem.h:22 is inside kmap()'s body under #ifdef CONFIG_HIGHMEM.
    let h = &r[1];
    assert_eq!(h["path"], "include/linux/highmem.h");
    assert_eq!(h["line"], 22);
    assert_eq!(h["col"], 9);
    assert_eq!(h["snippet"], "return kmap_high(page);");
    assert_eq!(h["enclosing"]["symbol"], "kmap");
    assert_eq!(h["enclosing"]["kind"], "function");
    assert_eq!(h["enclosing"]["line"], 20);
    assert_eq!(h["enclosing"]["end_line"], 23);
    assert_eq!(
        h["enclosing"]["signature"],
        "static inline void *kmap(struct page *page)"
    );
    assert_eq!(h["guard"], serde_json::json!(["CONFIG_HIGHMEM"]));
    assert_eq!(h["context"]["before"], serde_json::json!(["{"]));
    assert_eq!(h["context"]["after"], serde_json::json!(["}"]));
    // Ordered by path, then line.
    let order: Vec<(String, u64)> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_string(),
                h["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    // A text file has no guard and no enclosing definition.
    let (_, v) = json(&t, &["grep", "kmap_local_page"]);
    assert_eq!(v["results"][0]["path"], "Documentation/mm/highmem.rst");
    assert_eq!(v["results"][0]["guard"], serde_json::Value::Null);
    assert_eq!(v["results"][0]["enclosing"], serde_json::Value::Null);
    let s = &v["search"];
    assert_eq!(s["hits"], 1);
    assert_eq!(s["files_read"], 1, "the trigrams select one file: {s}");
}

#[test]
fn the_text_form_groups_hits_under_their_enclosing_definition() {
    let t = fixture("grep-text");
    let (code, out) = knav(&t, &["grep", "--heading", "kmap_high", "include", "mm"]);
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("4 hits in 2 files · "), "{out}");
    assert_eq!(lines[1], "include/linux/highmem.h");
    assert_eq!(
        lines[2],
        "  18: void *kmap_high(struct page *page);  [#if CONFIG_HIGHMEM]"
    );
    assert_eq!(
        lines[3],
        "  20-23: static inline void *kmap(struct page *page)  [function kmap]"
    );
    assert_eq!(
        lines[4],
        "    22: return kmap_high(page);  [#if CONFIG_HIGHMEM]"
    );
    assert_eq!(lines[5], "mm/highmem.c");
    let (_, out) = knav(&t, &["grep", "--heading", "-c", "kmap", "mm", "include"]);
    assert!(
        out.contains("\ninclude/linux/highmem.h:4\nmm/highmem.c:4\n"),
        "{out}"
    );
    let (_, out) = knav(&t, &["grep", "--heading", "-l", "kunmap"]);
    assert!(out.contains("\nDocumentation/mm/highmem.rst\n"), "{out}");
}

#[test]
fn within_keeps_the_hits_inside_a_definition_and_active_config_hides_unbuilt_lines() {
    let t = fixture("grep-within");
    let (_, v) = json(&t, &["grep", "kmap", "--within", "copy_page_data"]);
    let rows = v["results"].as_array().unwrap();
    let lines: Vec<u64> = rows.iter().map(|r| r["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [14, 15], "{v}");
    let config = t.root.join(".config").display().to_string();
    let (_, v) = json(
        &t,
        &["grep", "kmap_high", "include", "--active-config", &config],
    );
    let hidden = v["hidden"].as_array().unwrap();
    assert!(
        hidden.iter().any(|h| h["line"] == 22),
        "line 22 is under #ifdef CONFIG_HIGHMEM: {v}"
    );
}

#[test]
fn an_edit_a_new_file_and_a_deletion_are_searched_after_a_refresh() {
    let t = fixture("grep-refresh");
    let (code, _) = knav(&t, &["grep", "kmap"]);
    assert_eq!(code, 0);
    std::fs::write(t.root.join("Documentation/notes.txt"), "fresh_marker_one\n").unwrap();
    std::fs::write(t.root.join("Documentation/new.txt"), "fresh_marker_two\n").unwrap();
    std::fs::remove_file(t.root.join("Documentation/mm/highmem.rst")).unwrap();
    let (code, _) = knav(&t, &["index"]);
    assert_eq!(code, 0);
    for case in [&["fresh_marker"][..], &["kmap"], &["kunmap"]] {
        let (got, _) = knav_hits(&t, case);
        assert_eq!(got, rg(&t.root, case), "{case:?} after the refresh");
    }
    // A new ignore rule applies at the next refresh.
    std::fs::write(
        t.root.join(".ignore"),
        "generated/\n*.orig\nDocumentation/\n",
    )
    .unwrap();
    knav(&t, &["index"]);
    let (got, _) = knav_hits(&t, &["fresh_marker"]);
    assert!(got.is_empty(), "{got:?}");
    assert_eq!(got, rg(&t.root, &["fresh_marker"]));
}

#[test]
fn a_file_indexed_in_blocks_gives_rgs_line_numbers_in_every_block() {
    let t = fixture("grep-blocks");
    // About 1 MB of register definitions (four blocks of the text index), with markers in the
    // first block, just past the first block's end, in the last block, on a CRLF line and on
    // a last line without a newline.
    let mut text = String::new();
    let mut n = 0u32;
    while text.len() < 1_000_000 {
        n += 1;
        let line = match n {
            3 => "#define FIRST_MARKER_REG 1\n".to_string(),
            7600 => "#define CRLF_MARKER_REG 2\r\n".to_string(),
            _ if text.len() > 262_144 && !text.contains("BOUNDARY_MARKER") => {
                "#define BOUNDARY_MARKER_REG 3\n".to_string()
            }
            _ => format!("#define mmREG_{n:06}_MASK 0x{:08x}\n", n * 7),
        };
        text.push_str(&line);
    }
    text.push_str("#define LAST_MARKER_REG 4");
    std::fs::write(t.root.join("include/regs_sh_mask.h"), &text).unwrap();
    let (code, out) = knav(&t, &["index"]);
    assert_eq!(code, 0, "{out}");
    for case in [
        &["FIRST_MARKER"][..],
        &["BOUNDARY_MARKER_REG"],
        &[r"CRLF_MARKER_REG 2\r$"],
        &["CRLF_MARKER_REG 2"],
        &["LAST_MARKER_REG"],
        &["-i", "last_marker_reg 4$"],
        &["mmREG_0076"],
        &["MARKER_REG"],
        &[r"mmREG_00[0-2]\d\d7_"],
    ] {
        let (got, total) = knav_hits(&t, case);
        let want = rg(&t.root, case);
        assert!(!want.is_empty(), "{case:?}");
        assert_eq!(got, want, "{case:?}");
        assert_eq!(total, want.len() as u64, "{case:?}");
    }
    // Only the file with the marker is read.
    let (_, v) = json(&t, &["grep", "BOUNDARY_MARKER_REG"]);
    assert_eq!(v["search"]["files_read"], 1, "{v}");
}

#[test]
fn a_damaged_text_index_is_reported_and_rebuilt_by_the_next_refresh() {
    let t = fixture("grep-damage");
    let (code, _) = knav(&t, &["index"]);
    assert_eq!(code, 0);
    let index = t.root.join(".knav");
    for name in ["post.bin", "grams.bin", "files.bin"] {
        // The part the manifest names now (a repair writes a new one).
        let manifest = std::fs::read_to_string(index.join("CURRENT")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&manifest).unwrap();
        let path = index.join(v["text"]["dir"].as_str().unwrap()).join(name);
        let mut bad = std::fs::read(&path).unwrap();
        let at = bad.len() / 2;
        bad[at] ^= 0xff;
        std::fs::write(&path, &bad).unwrap();
        let (code, out) = knav(&t, &["index", "--verify"]);
        assert_eq!(code, 1, "{name}: {out}");
        assert!(out.contains("checksum mismatch"), "{name}: {out}");
        // A small part is checksummed when a search opens it (--no-refresh: a query's scan of
        // the tree would rebuild it first).
        let (code, out, _) = knav_output(&t, &["grep", "--heading", "kmap", "--no-refresh"]);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(out.contains("is damaged (checksum mismatch)"), "{out}");
        let (code, out) = knav(&t, &["index"]);
        assert_eq!(code, 0, "{out}");
        let (got, _) = knav_hits(&t, &["kmap"]);
        assert_eq!(got, rg(&t.root, &["kmap"]), "after repairing {name}");
        let (code, out) = knav(&t, &["index", "--verify"]);
        assert_eq!(code, 0, "{out}");
    }
}

#[test]
fn the_text_walk_cache_still_sees_edits_in_place_new_directories_and_deletions() {
    let t = fixture("grep-cache");
    age(&t.root);
    knav(&t, &["index"]);
    age(&t.root);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged", "{v}");
    // In place (the directory's mtime stays), in a C file and in a text file.
    let edit = |rel: &str, text: &str| {
        let p = t.root.join(rel);
        let mut s = std::fs::read_to_string(&p).unwrap();
        s.push_str(text);
        std::fs::write(&p, s).unwrap();
    };
    edit("Documentation/mm/highmem.rst", "cached_marker in a doc\n");
    edit("mm/highmem.c", "int cached_marker_in_c;\n");
    std::fs::create_dir(t.root.join("Documentation/new")).unwrap();
    std::fs::write(
        t.root.join("Documentation/new/a.txt"),
        "cached_marker new\n",
    )
    .unwrap();
    std::fs::remove_file(t.root.join("tools/crlf.txt")).unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "incremental", "{v}");
    for case in [&["cached_marker"][..], &["kmap"]] {
        let (got, _) = knav_hits(&t, case);
        assert_eq!(got, rg(&t.root, case), "{case:?}");
    }
    let (got, _) = knav_hits(&t, &["cached_marker"]);
    assert_eq!(got.len(), 3, "{got:?}");
}

#[test]
fn a_refresh_that_finds_only_a_text_file_changed_keeps_every_c_file_indexed() {
    // Regression: the index's walk found its files as cached and listed none, and the refresh
    // that went on for the text file took every C file for deleted.
    let t = fixture("grep-text-only");
    age(&t.root);
    knav(&t, &["index"]);
    age(&t.root);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(v["results"]["mode"], "unchanged", "{v}");
    let p = t.root.join("Documentation/mm/highmem.rst");
    let mut s = std::fs::read_to_string(&p).unwrap();
    s.push_str("text_only_marker\n");
    std::fs::write(&p, s).unwrap();
    let (_, v) = json(&t, &["index"]);
    let r = &v["results"];
    assert_eq!(
        (
            r["mode"].as_str(),
            r["deleted"].as_u64(),
            r["files_scanned"].as_u64()
        ),
        (Some("incremental"), Some(0), Some(14)),
        "{v}"
    );
    let (_, v) = json(&t, &["def", "kmap"]);
    assert_eq!(v["definition_count"], 2, "{v}");
    let (got, _) = knav_hits(&t, &["text_only_marker"]);
    assert_eq!(got.len(), 1, "{got:?}");
}
