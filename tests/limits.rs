//! Bounds on what an answer holds: paging at absurd offsets and limits, caps on bodies and
//! long lines, and the notes that state every cut. Each test indexes its own tree.

use serde_json::Value;

mod common;
use common::{fixture, json, knav, knav_env, tree};

fn callee_names(v: &Value) -> Vec<String> {
    v["results"]["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["symbol"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn callees_honour_offset_instead_of_ignoring_it() {
    let t = fixture("callees-offset");
    let (_, v) = json(&t, &["callees", "vfs_read"]);
    assert_eq!(callee_names(&v), ["rw_verify_area", "pr_warn"]);
    let (_, v) = json(&t, &["callees", "vfs_read", "--offset", "1"]);
    assert_eq!(callee_names(&v), ["pr_warn"]);
    assert_eq!(
        (v["total"].as_u64(), v["offset"].as_u64()),
        (Some(2), Some(1))
    );
    let (_, out) = knav(
        &t,
        &["callees", "vfs_read", "--offset", "1", "--limit", "1"],
    );
    assert!(out.contains("calls 2:\n  pr_warn"), "{out}");
    assert!(out.contains("[2-2 of 2]\n"), "{out}");
    // Past the end: an empty page that says so, never `[6-13 of 8]`.
    let (_, out) = knav(
        &t,
        &["callees", "vfs_read", "--offset", "5", "--limit", "8"],
    );
    assert!(out.contains("[none of 2 at offset=5]\n"), "{out}");
    assert!(out.contains("offset 5 is past the end"), "{out}");
}

#[test]
fn callees_page_at_forty_and_point_at_the_next_page() {
    let calls: String = (0..45).map(|i| format!("\tcallee_{i:02}();\n")).collect();
    let src = format!("void big(void)\n{{\n{calls}}}\n");
    let t = tree("callees-40", &[("big.c", src.as_bytes())]);
    let (_, v) = json(&t, &["callees", "big"]);
    assert_eq!(v["total"], 45);
    assert_eq!(v["limit"], 40);
    assert_eq!(v["truncated"], true);
    let names = callee_names(&v);
    assert_eq!(names.len(), 40);
    assert_eq!(
        (names[0].as_str(), names[39].as_str()),
        ("callee_00", "callee_39")
    );
    let (_, out) = knav(&t, &["callees", "big", "--offset", "40"]);
    assert!(out.contains("  callee_40  line 43"), "{out}");
    assert!(out.contains("[41-45 of 45]\n"), "{out}");
    let (_, v) = json(&t, &["callees", "big", "--limit", "500"]);
    assert_eq!(callee_names(&v).len(), 40);
    assert!(
        v["warning"]
            .as_str()
            .unwrap()
            .contains("limit 500 cut to 40"),
        "{v}"
    );
}

#[test]
fn offsets_near_two_to_the_64_do_not_wrap_the_footer() {
    let t = fixture("offset-wrap");
    let max = u64::MAX.to_string();
    for args in [
        vec!["def", "kmap"],
        vec!["refs", "vfs_read"],
        vec!["refs", "vfs_read", "--group-by", "file"],
        vec!["callers", "vfs_read"],
        vec!["callees", "vfs_read"],
        vec!["body", "kmap"],
        vec!["symbols", "fs/read_write.c"],
    ] {
        for offset in [max.as_str(), "18446744073709551614", "99999999999"] {
            let mut a = args.clone();
            a.extend(["--offset", offset, "--limit", &max]);
            let (code, out) = knav(&t, &a);
            assert_eq!(code, 0, "{a:?}: {out}");
            assert!(
                out.contains(&format!(" at offset={offset}]\n")),
                "{a:?}: {out}"
            );
            assert!(out.contains("is past the end"), "{a:?}: {out}");
            let (_, v) = json(&t, &a);
            assert_eq!(v["offset"].as_u64(), offset.parse().ok(), "{a:?}");
            assert_eq!(v["truncated"], false, "{a:?}");
            assert!(v["total"].as_u64().unwrap() > 0, "{a:?}");
        }
    }
    // The last page near the top of the range is numbered without wrapping.
    let (_, out) = knav(&t, &["refs", "vfs_read", "--offset", "4", "--limit", &max]);
    assert!(out.contains("[5-5 of 5]\n"), "{out}");
}

#[test]
fn max_definitions_above_the_maximum_is_cut_and_says_so() {
    let t = fixture("max-defs");
    let (code, v) = json(&t, &["body", "kmap", "--max-definitions", "99999999999"]);
    assert_eq!(code, 0);
    assert_eq!(v["limit"], 50);
    let w = v["warning"].as_str().unwrap_or("");
    assert!(
        w.contains("max_definitions 99999999999 cut to the maximum 50"),
        "{v}"
    );
    // Bodies page with offset like every other list.
    let (_, v) = json(&t, &["body", "kmap", "--max-definitions", "1"]);
    assert_eq!(v["results"][0]["line"], 20);
    assert_eq!(v["truncated"], true);
    let (_, v) = json(
        &t,
        &["body", "kmap", "--max-definitions", "1", "--offset", "1"],
    );
    assert_eq!(v["results"][0]["line"], 25);
    assert_eq!(v["truncated"], false);
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
}

#[test]
fn reachability_ignores_an_offset_and_says_so() {
    let t = fixture("reach-offset");
    let (_, out) = knav(
        &t,
        &["reach", "vfs_read", "rw_verify_area", "--offset", "3"],
    );
    assert!(
        out.starts_with("vfs_read reaches rw_verify_area in 1 calls"),
        "{out}"
    );
    assert!(!out.contains("[4-4 of 1]"), "{out}");
    assert!(out.contains("offset 3 ignored"), "{out}");
}

/// One line of `n` small functions: `int fK(void){ gK(); hK(); return 0; }`.
fn one_line_of_functions(n: usize) -> String {
    let parts: Vec<String> = (0..n)
        .map(|i| format!("int f{i}(void){{ g{i}(); h{i}(); return 0; }}"))
        .collect();
    parts.join(" ") + "\n"
}

#[test]
fn callees_on_a_long_shared_line_are_the_functions_own_not_the_whole_line() {
    // 2.3 MB on one line: callees took 10 s and listed every call on the line.
    let t = tree(
        "long-callees",
        &[("one.c", one_line_of_functions(50_000).as_bytes())],
    );
    let started = std::time::Instant::now();
    let (code, v) = json(&t, &["callees", "f30000"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(callee_names(&v), ["g30000", "h30000"]);
    assert_eq!(v["total"], 2);
    // Generous for a debug build on a busy machine; the quadratic path took minutes here.
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    // Its body is its own too, from its name, and its snippet shows it.
    let (_, v) = json(&t, &["body", "f30000"]);
    assert_eq!(
        v["results"][0]["body"],
        "…f30000(void){ g30000(); h30000(); return 0; }"
    );
    let (_, v) = json(&t, &["def", "f30000"]);
    let snippet = v["results"][0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("int f30000(void)"), "{snippet}");
    assert!(snippet.chars().count() <= 202, "{snippet}");
    let (_, v) = json(&t, &["refs", "g30000"]);
    let snippet = v["results"][0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("g30000();"), "{snippet}");
    assert!(snippet.chars().count() <= 202, "{snippet}");
}

#[test]
fn a_body_over_the_byte_cap_is_cut_and_the_answer_says_where_the_rest_is() {
    let line = format!("\tcall_{}();\n", "x".repeat(480));
    let src = format!("int big(void)\n{{\n{}}}\n", line.repeat(200));
    let t = tree("body-bytes", &[("big.c", src.as_bytes())]);
    let (code, v) = json(&t, &["body", "big"]);
    assert_eq!(code, 0, "{v}");
    let r = &v["results"][0];
    let body = r["body"].as_str().unwrap();
    assert!(body.len() <= 65536 && body.len() > 60_000, "{}", body.len());
    assert!(body.starts_with("int big(void)\n{\n\tcall_x"), "{body}");
    assert_eq!(r["body_truncated"], true);
    assert_eq!(r["body_cut"], "65536 bytes");
    assert_eq!(r["end_line"], 203);
    let w = v["warning"].as_str().unwrap();
    assert!(
        w.contains("big.c:1 is cut at 65536 bytes; read lines 1-203"),
        "{w}"
    );
    let (_, out) = knav(&t, &["body", "big"]);
    assert!(out.contains("… (body cut at 65536 bytes)\n"), "{out}");
}

#[test]
fn bodies_stop_at_the_answer_cap_and_point_at_the_next_offset() {
    let line = format!("\tcall_{}();\n", "x".repeat(480));
    let src = format!("int big(void)\n{{\n{}}}\n", line.repeat(150));
    let files: Vec<(String, Vec<u8>)> = (0..6)
        .map(|i| (format!("d{i}/big.c"), src.clone().into_bytes()))
        .collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_slice()))
        .collect();
    let t = tree("body-answer", &refs);
    let (_, v) = json(&t, &["body", "big", "--max-definitions", "10"]);
    let shown = v["results"].as_array().unwrap().len();
    assert_eq!(shown, 4, "four 64 KiB bodies fill the 256 KiB answer");
    assert_eq!(v["total"], 6);
    assert_eq!(v["truncated"], true);
    let w = v["warning"].as_str().unwrap();
    assert!(
        w.contains("4 of 6 on this page; offset=4 for the rest"),
        "{w}"
    );
    let (_, out) = knav(&t, &["body", "big", "--max-definitions", "10"]);
    assert!(out.contains("[1-4 of 6 · --offset 4 for more]"), "{out}");
}

#[test]
fn a_body_line_longer_than_the_line_cap_is_cut_with_an_ellipsis() {
    let src = format!(
        "int wide(void)\n{{\n\treturn {};\n}}\n",
        "1 + ".repeat(2000) + "1"
    );
    let t = tree("body-line", &[("wide.c", src.as_bytes())]);
    let (_, v) = json(&t, &["body", "wide"]);
    let body = v["results"][0]["body"].as_str().unwrap();
    let third = body.lines().nth(2).unwrap();
    assert_eq!(third.chars().count(), 1001, "{third}");
    assert!(third.ends_with('…'), "{third}");
    assert!(body.ends_with("\n}"), "{body}");
}

/// A build of more files than `MIMALLOC_FILES` (4096) switches its small blocks to mimalloc,
/// with blocks made before the switch still freed by glibc: it must index and answer as any
/// other build does.
#[test]
fn a_build_large_enough_for_mimalloc_indexes_every_file() {
    let files: Vec<(String, String)> = (0..4200)
        .map(|i| {
            (
                format!("d{}/f{i}.c", i % 50),
                format!("int helper_{i}(int x)\n{{\n\treturn x + {i};\n}}\n\nint caller_{i}(void)\n{{\n\treturn helper_{i}(1);\n}}\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let t = tree("mimalloc-build", &refs);
    let (code, err) = knav_env(&t, &["index"], &[("KNAV_TRACE", "1")]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("small blocks from mimalloc"),
        "the build did not switch: {err}"
    );
    let (_, v) = json(&t, &["def", "helper_4199"]);
    assert_eq!(v["total"], 1, "{v}");
    assert_eq!(v["results"][0]["path"], "d49/f4199.c", "{v}");
    assert_eq!(v["results"][0]["line"], 1, "{v}");
    let (_, v) = json(&t, &["callers", "helper_17"]);
    assert_eq!(v["results"][0]["caller"], "caller_17", "{v}");
    // mimalloc's own settings could give it arenas whose blocks glibc would be asked to free:
    // with any set, the build keeps glibc.
    let (code, err) = knav_env(
        &t,
        &["index", "--full"],
        &[("KNAV_TRACE", "1"), ("MIMALLOC_RESERVE_OS_MEMORY", "64MiB")],
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("small blocks from mimalloc"), "{err}");
    let (_, v) = json(&t, &["def", "helper_4199"]);
    assert_eq!(v["total"], 1, "{v}");
}
