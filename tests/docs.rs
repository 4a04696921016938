//! search_docs (`knav docs`): sections of the fixture's Documentation/ files ranked by BM25F,
//! with exact answers: titles and sections, stemming, title over body, paging, empty answers,
//! the part rebuilt only when a documentation file changes, and damage to it.

use serde_json::Value;

mod common;
use common::{age, fixture, json, knav, knav_output};

/// `(path:line, title)` of each result of `knav docs WORDS… --format json`, and the total.
fn docs(t: &common::Tree, args: &[&str]) -> (Vec<(String, String)>, u64) {
    let mut all = vec!["docs"];
    all.extend_from_slice(args);
    let (code, v) = json(t, &all);
    assert_eq!(code, 0, "{v}");
    (rows(&v), v["total"].as_u64().unwrap())
}

fn rows(v: &Value) -> Vec<(String, String)> {
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r| {
            (
                format!("{}:{}", r["path"].as_str().unwrap(), r["line"]),
                r["title"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn row(at: &str, title: &str) -> (String, String) {
    (at.to_string(), title.to_string())
}

#[test]
fn each_underlined_title_starts_a_section_and_a_txt_without_titles_is_one() {
    let t = fixture("docs-sections");
    // "Choosing a victim" is the second of oom.rst's three sections (overlined title first).
    assert_eq!(
        docs(&t, &["victim"]),
        (
            vec![row("Documentation/mm/oom.rst:10", "Choosing a victim")],
            1
        )
    );
    let (code, v) = json(&t, &["docs", "victim"]);
    assert_eq!(code, 0);
    // The snippet is the section's best line, not its title.
    assert_eq!(
        v["results"][0]["snippet"],
        "oom_badness() scores each task; the score is adjusted by oom_score_adj."
    );
    assert_eq!(v["next_tools"][0], "search_symbols");
    // notes.txt has no title: one section, titled by its first non-empty line.
    assert_eq!(
        docs(&t, &["zero", "bytes"]),
        (
            vec![row(
                "Documentation/filesystems/notes.txt:2",
                "Notes on reading files"
            )],
            1
        )
    );
}

#[test]
fn allocating_finds_allocation_and_a_title_outranks_a_body() {
    let t = fixture("docs-stem");
    // "allocation" is in a title and a body of oom.rst; "Allocating" only in a body of
    // highmem.rst.
    assert_eq!(
        docs(&t, &["allocating"]),
        (
            vec![
                row("Documentation/mm/oom.rst:15", "Page allocation failures"),
                row(
                    "Documentation/mm/highmem.rst:9",
                    "Temporary virtual mappings"
                ),
            ],
            2
        )
    );
    let (_, text) = knav(&t, &["docs", "allocating"]);
    assert_eq!(
        text,
        "Documentation/mm/oom.rst:15: Page allocation failures  [1.18]\n    \
         An allocation that fails after reclaim may invoke the killer.\n\
         Documentation/mm/highmem.rst:9: Temporary virtual mappings  [0.68]\n    \
         Allocating pages from high memory needs a temporary mapping.\n"
    );
}

#[test]
fn pages_count_every_matching_section() {
    let t = fixture("docs-pages");
    let (all, total) = docs(&t, &["memory", "mapping"]);
    assert_eq!(total, 3);
    assert_eq!(
        all,
        [
            row(
                "Documentation/mm/highmem.rst:9",
                "Temporary virtual mappings"
            ),
            row("Documentation/mm/highmem.rst:2", "High Memory Handling"),
            row("Documentation/mm/oom.rst:4", "Out Of Memory Killer"),
        ]
    );
    let (page, total) = docs(&t, &["memory", "mapping", "--limit", "1", "--offset", "1"]);
    assert_eq!((page, total), (vec![all[1].clone()], 3));
    let (_, text) = knav(&t, &["docs", "memory", "mapping", "--limit", "1"]);
    assert!(text.contains("[1-1 of 3 · --offset 1 for more]"), "{text}");
    // A path prefix keeps the sections under it.
    let (under, total) = docs(&t, &["memory", "--path-prefix", "Documentation/mm/oom"]);
    assert_eq!((under, total), (vec![all[2].clone()], 1));
}

#[test]
fn a_query_matching_nothing_says_so_and_one_of_stopwords_is_an_error() {
    let t = fixture("docs-empty");
    let (code, text) = knav(&t, &["docs", "zebra"]);
    assert_eq!(
        (code, text.as_str()),
        (
            0,
            "no documentation section matches 'zebra'; try other words, or search the text \
             with knav grep\n"
        )
    );
    let (code, v) = json(&t, &["docs", "the", "of"]);
    assert_eq!(code, 1);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("has no word to search for"),
        "{v}"
    );
}

/// The documentation part's directory in the index of `t`, as its manifest names it.
fn part_dir(t: &common::Tree) -> std::path::PathBuf {
    let index = t.root.join(".knav");
    let manifest = std::fs::read_to_string(index.join("CURRENT")).unwrap();
    let v: Value = serde_json::from_str(&manifest).unwrap();
    index.join(v["docs"]["dir"].as_str().unwrap())
}

#[test]
fn the_part_is_rebuilt_only_when_a_documentation_file_changes() {
    let t = fixture("docs-refresh");
    age(&t.root);
    assert_eq!(docs(&t, &["zebra"]).1, 0);
    let built = part_dir(&t);
    // A C file changed: a new delta, the same documentation part.
    std::fs::write(t.root.join("fs/new.c"), "int zebra_count;\n").unwrap();
    let (code, out) = knav(&t, &["index"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("index incremental:") && !out.contains("documentation"),
        "{out}"
    );
    assert_eq!(part_dir(&t), built);
    // A documentation file touched, its bytes the same: the part stays.
    let notes = t.root.join("Documentation/filesystems/notes.txt");
    let text = std::fs::read_to_string(&notes).unwrap();
    std::fs::write(&notes, &text).unwrap();
    let (_, out) = knav(&t, &["index"]);
    assert!(!out.contains("documentation"), "{out}");
    assert_eq!(part_dir(&t), built);
    // Changed: a new part, with the new words.
    std::fs::write(&notes, format!("{text}Zebra crossings are not files.\n")).unwrap();
    let (code, out) = knav(&t, &["index"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("index incremental:"), "{out}");
    assert!(
        out.contains("documentation (knav docs): 6 files, 9 sections"),
        "{out}"
    );
    assert_ne!(part_dir(&t), built);
    assert_eq!(
        docs(&t, &["zebra"]),
        (
            vec![row(
                "Documentation/filesystems/notes.txt:2",
                "Notes on reading files"
            )],
            1
        )
    );
    // A new file and a removed one.
    std::fs::remove_file(&notes).unwrap();
    std::fs::write(
        t.root.join("Documentation/zebra.rst"),
        "Zebras\n======\n\nStriped.\n",
    )
    .unwrap();
    let (_, out) = knav(&t, &["index"]);
    assert!(
        out.contains("documentation (knav docs): 6 files, 9 sections"),
        "{out}"
    );
    assert_eq!(
        docs(&t, &["zebra"]),
        (vec![row("Documentation/zebra.rst:1", "Zebras")], 1)
    );
    // Nothing changed since: the index stays as it is.
    let (_, out) = knav(&t, &["index"]);
    assert!(out.starts_with("index unchanged:"), "{out}");
}

/// `(exit code, stdout + stderr)` of `knav docs victim` with `envs`.
fn victim(t: &common::Tree, envs: &[(&str, &str)]) -> (i32, String) {
    // --no-refresh: a query's scan of the tree would rebuild the damaged part before answering.
    common::knav_env(t, &["docs", "victim", "--no-refresh"], envs)
}

#[test]
fn a_damaged_documentation_part_is_an_error_not_a_panic_and_the_next_index_rebuilds_it() {
    let t = fixture("docs-damaged");
    let (code, want) = victim(&t, &[]);
    assert_eq!(code, 0, "{want}");
    for name in ["docs.dat", "terms.fst", "postings.dat"] {
        let path = part_dir(&t).join(name);
        let good = std::fs::read(&path).unwrap();
        let len = good.len();
        let damage: [(&str, Vec<u8>); 4] = [
            ("truncated", good[..len / 2].to_vec()),
            ("flipped at 5", flipped(&good, 5)),
            ("flipped at a third", flipped(&good, len / 3)),
            ("flipped at the end", flipped(&good, len - 1)),
        ];
        for (what, bad) in damage {
            std::fs::write(&path, &bad).unwrap();
            // Not checksummed at open (as on a kernel-sized index): the decoders meet it.
            let (code, out) = victim(&t, &[("KNAV_OPEN_CHECK_BYTES", "0")]);
            assert!(
                !out.contains("panicked")
                    && (code == 0 && out == want || code == 1 && out.contains("run `knav index")),
                "{name} {what}: exit {code}\n{out}"
            );
            // Checksummed at open (a small part): a clear error.
            let (code, out) = victim(&t, &[]);
            assert_eq!(code, 1, "{name} {what}: {out}");
            assert!(
                out.contains(name) && out.contains("run `knav index` to rebuild it"),
                "{name} {what}: {out}"
            );
            let (code, out, _) = knav_output(&t, &["index", "--verify"]);
            assert_eq!(code, 1, "{name} {what}: {out}");
            std::fs::write(&path, &good).unwrap();
        }
        // The next refresh sees the damage and builds the part again.
        std::fs::write(&path, flipped(&good, len / 2)).unwrap();
        let (code, out) = knav(&t, &["index"]);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("rebuilt, not refreshed")
                && out.contains(&format!("{name} is damaged (checksum mismatch)"))
                && out.contains("documentation (knav docs): 6 files"),
            "{name}: {out}"
        );
        assert_eq!(victim(&t, &[]), (0, want.clone()), "{name}");
        assert_eq!(knav(&t, &["index", "--verify"]).0, 0, "{name}");
    }
}

fn flipped(bytes: &[u8], at: usize) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at] ^= 0xff;
    b
}
