//! `kernel-bench --quick` on a copy of the committed fixture: the report has every section and
//! a row per tool, the chart is an SVG, and the tree is left as it was. Not a timing test.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../tests/common/tree.rs"]
mod common;
use common::copy_dir;

/// Every file under `dir` with its content, for comparing a tree before and after.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn quick_run_on_the_fixture_writes_a_complete_report_and_leaves_the_tree_alone() {
    let bench = PathBuf::from(env!("CARGO_BIN_EXE_kernel-bench"));
    let knav = bench.with_file_name("knav");
    assert!(
        knav.is_file(),
        "{} is missing: run `cargo test --workspace` (or `cargo build -p knav`) first",
        knav.display()
    );
    let base = std::env::temp_dir().join(format!("kernel-bench-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let tree = base.join("tree");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/minikernel"),
        &tree,
    );
    let before = snapshot(&tree);
    let out_dir = base.join("out");
    let status = Command::new(&bench)
        .args(["--quick", "--runs", "1", "--tree"])
        .arg(&tree)
        .arg("--out")
        .arg(&out_dir)
        .arg("--work")
        .arg(base.join("work"))
        .arg("--knav")
        .arg(&knav)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(snapshot(&tree), before, "the tree is left as it was");

    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    for section in [
        "# kernel-bench: knav against its peers",
        "## Targets",
        "## Cold index",
        "## knav refresh",
        "## Query latency",
        "### def",
        "### refs",
        "### callers",
        "## Answer size",
        "## knav grep against rg -n",
        "## Fact store",
        "## knav cscope against cscope",
        "## knav lsp",
    ] {
        assert!(md.contains(section), "report lacks {section}:\n{md}");
    }
    assert!(md.contains("(quick run on a subtree)"), "{md}");
    assert!(md.contains("Machine: "), "{md}");
    // Every target has a row; knav's own figures are measured even where a peer is missing.
    for target in [
        "| cold index wall, knav / gtags | ",
        "| index bytes, knav / gtags | ",
        "| peak RSS while indexing (knav) / 512 MB | ",
        "| no-change refresh, `knav index` / 150 ms | ",
        "| no-change freshness check, `knav serve` / 150 ms | ",
        "| one-file refresh (.c), `knav index` / 300 ms | ",
        "| one-file edit to answer, `knav serve` / 300 ms | ",
        "| definition lookup, knav def / global -x ",
        "| references of kmalloc, knav refs / cscope -L0 | ",
        "| answer tokens (def + refs), knav text / rg -w -n | ",
        "| knav grep / rg -n, median over 22 patterns | ",
        "| knav grep / rg -n, slowest pattern | ",
        "| search_text (selective) through `knav serve` / 10 ms | ",
        "| text index bytes / bytes it covers | ",
        "| copy of the tree with 200 files changed / the tree's cold build (same store) | ",
        "| cscope query 0, knav cscope -dL -0 / cscope -dL -0 (sum of 12 medians) | ",
        "| cscope query 1, knav cscope -dL -1 / cscope -dL -1 (sum of 12 medians) | ",
        "| cscope query 3, knav cscope -dL -3 / cscope -dL -3 (sum of 12 medians) | ",
        "| cscope's callers (query 3) knav does not list, share | ",
        "| knav lsp: spawn to the first definition answered | ",
        "| knav lsp: definition median | ",
        "| knav lsp: references median | ",
        "| knav lsp: hover median | ",
        "| knav lsp: documentSymbol median | ",
        "| knav lsp: prepareCallHierarchy + incomingCalls median | ",
        "| knav lsp: resident memory beyond the mapped index (VmRSS − RssFile) | ",
    ] {
        let row = md
            .lines()
            .find(|l| l.starts_with(target))
            .unwrap_or_else(|| panic!("no row {target}:\n{md}"));
        assert!(!row.contains("| failed |"), "{row}");
    }
    // Cold builds: knav measured; each peer measured or reported missing, never left out.
    for tool in ["knav index", "gtags", "ctags -R (unsorted)", "cscope -bqk"] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {tool} |")))
            .unwrap_or_else(|| panic!("no cold-build row for {tool}:\n{md}"));
        if tool == "knav index" {
            assert!(row.contains(" ms | ") || row.contains(" s | "), "{row}");
        }
    }
    // One latency row per symbol and question.
    assert_eq!(
        md.matches("\n| vfs_read | ").count(),
        4,
        "def, refs, callers, sizes"
    );
    let svg = std::fs::read_to_string(out_dir.join("chart.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(
        svg.matches("stroke-width=\"2\"").count(),
        26,
        "a goal mark per target (15, knav cscope's four and knav lsp's start, five requests and memory)"
    );
    let _ = std::fs::remove_dir_all(&base);
}
