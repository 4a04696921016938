//! The report: a Markdown file with every figure and the ratio knav/peer, the machine and the
//! versions, the targets met or missed, and an SVG chart of the ratios.

use std::fmt::Write;
use std::time::Duration;

use crate::peers::Peers;
use crate::suite::{Build, Latency, Results};

/// About the run, for the report's head.
pub struct Context {
    /// The tree measured.
    pub tree: String,
    /// Whether this was a quick run on a subtree.
    pub quick: bool,
    /// Runs per query.
    pub runs: usize,
    /// `.c`/`.h` files and their bytes.
    pub files: (usize, u64),
    /// knav's version line.
    pub knav_version: String,
    /// Machine description.
    pub machine: String,
    /// When.
    pub date: String,
}

/// One knav/peer ratio with its target (`ratio <= goal` is met).
pub struct Ratio {
    /// What is compared.
    pub label: String,
    /// knav's figure as text.
    pub knav: String,
    /// The peer's figure as text (or the absolute goal).
    pub peer: String,
    /// knav / peer, or the absolute figure / goal for absolute targets.
    pub value: Option<f64>,
    /// The target for `value`.
    pub goal: f64,
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1e3)
    } else if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn build<'a>(r: &'a Results, tool: &str) -> Option<&'a Build> {
    r.builds.iter().find(|b| b.tool.starts_with(tool))
}

fn build_wall(b: Option<&Build>) -> Option<Duration> {
    match b?.run.as_ref()? {
        Ok(r) if r.ok => Some(r.wall),
        _ => None,
    }
}

/// Sum of medians of `tool` for `question` over the symbols every listed tool answered.
fn total(lat: &[Latency], question: &str, tool: &str, symbols: &[&str]) -> Option<Duration> {
    let mut sum = Duration::ZERO;
    for s in symbols {
        let l = lat
            .iter()
            .find(|l| l.question == question && l.tool == tool && l.symbol == *s)?;
        if !l.ok {
            return None;
        }
        sum += l.median;
    }
    Some(sum)
}

fn one(lat: &[Latency], question: &str, tool: &str, symbol: &str) -> Option<Duration> {
    lat.iter()
        .find(|l| l.question == question && l.tool == tool && l.symbol == symbol && l.ok)
        .map(|l| l.median)
}

/// The targets of the design, from one run.
pub fn targets(r: &Results) -> Vec<Ratio> {
    let mut out = Vec::new();
    build_targets(r, &mut out);
    refresh_targets(r, &mut out);
    query_targets(r, &mut out);
    grep_targets(r, &mut out);
    facts_targets(r, &mut out);
    revisions_targets(r, &mut out);
    cscope_targets(r, &mut out);
    lsp_targets(r, &mut out);
    let knav_bytes: usize = r.sizes.iter().map(|s| s.def_text + s.refs_text).sum();
    let rg_bytes: Option<usize> = r.sizes.iter().map(|s| s.rg.map(|b| 2 * b)).sum();
    out.push(Ratio {
        label: "answer tokens (def + refs), knav text / rg -w -n".into(),
        knav: format!("{} tokens", knav_bytes.div_ceil(4)),
        peer: rg_bytes.map_or("missing".into(), |b| format!("{} tokens", b.div_ceil(4))),
        value: rg_bytes
            .filter(|&b| b > 0)
            .map(|b| knav_bytes as f64 / b as f64),
        goal: 0.10,
    });
    out
}

/// The LSP targets: every request's median, the start, the memory.
fn lsp_targets(r: &Results, out: &mut Vec<Ratio>) {
    use crate::lsp::{mib, ms, MEDIAN_GOAL, RSS_GOAL_KB, START_GOAL};
    let l = &r.lsp;
    if l.start.is_none() && l.timings.is_empty() {
        return;
    }
    out.push(Ratio {
        label: "knav lsp: spawn to the first definition answered".into(),
        knav: l.start.map_or("failed".into(), ms),
        peer: format!("{} goal", ms(START_GOAL)),
        value: l.start.map(|s| s.as_secs_f64() / START_GOAL.as_secs_f64()),
        goal: 1.0,
    });
    for t in l.timings.iter().filter(|t| t.n > 0) {
        out.push(Ratio {
            label: format!("knav lsp: {} median", t.request),
            knav: ms(t.median),
            peer: format!("{} goal", ms(MEDIAN_GOAL)),
            value: Some(t.median.as_secs_f64() / MEDIAN_GOAL.as_secs_f64()),
            goal: 1.0,
        });
    }
    out.push(Ratio {
        label: "knav lsp: resident memory beyond the mapped index (VmRSS − RssFile)".into(),
        knav: l
            .rss
            .map_or("not read".into(), |(r, f, _)| mib(r - f.min(r))),
        peer: format!("{} goal", mib(RSS_GOAL_KB)),
        value: l
            .rss
            .map(|(r, f, _)| (r - f.min(r)) as f64 / RSS_GOAL_KB as f64),
        goal: 1.0,
    });
}

/// The targets of the fact store: a changed copy of the tree and another version against
/// their cold builds, and the bytes of the store and both indexes against one index.
fn facts_targets(r: &Results, out: &mut Vec<Ratio>) {
    let Some(f) = &r.facts else {
        return;
    };
    let ratio = |a: Option<Duration>, b: Option<Duration>| {
        a.zip(b).map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
    };
    let show = |d: Option<Duration>| d.map_or("failed".into(), ms);
    out.push(Ratio {
        label: format!(
            "copy of the tree with {} files changed / the tree's cold build (same store)",
            crate::facts::CHANGED
        ),
        knav: show(f.copy),
        peer: show(f.fill),
        value: ratio(f.copy, f.fill),
        goal: 0.15,
    });
    if let Some((name, alone, shared)) = &f.other {
        out.push(Ratio {
            label: format!("{name} with the tree's store / with an empty store"),
            knav: show(*shared),
            peer: show(*alone),
            value: ratio(*shared, *alone),
            goal: 0.75,
        });
        out.push(Ratio {
            label: format!("fact store + both indexes / the tree's index ({name} beside it)"),
            knav: mb(f.store_bytes + f.tree_bytes + f.other_bytes),
            peer: mb(f.tree_bytes),
            value: (f.tree_bytes > 0).then(|| {
                (f.store_bytes + f.tree_bytes + f.other_bytes) as f64 / f.tree_bytes as f64
            }),
            goal: 1.7,
        });
    }
}

/// The targets of the revisions: v6.1 after v6.12 against v6.1 alone, a revision 200 files
/// from an indexed one, queries at a revision against the work tree, and compare.
fn revisions_targets(r: &Results, out: &mut Vec<Ratio>) {
    let Some(v) = &r.revisions else {
        return;
    };
    let show = |d: Option<Duration>| d.map_or("failed".into(), ms);
    let ratio = |a: Option<Duration>, b: Option<Duration>| {
        a.zip(b).map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
    };
    out.push(Ratio {
        label: "knav index --rev v6.1 with v6.12 indexed / v6.1 alone".into(),
        knav: show(v.after),
        peer: show(v.alone),
        value: ratio(v.after, v.alone),
        goal: 0.75,
    });
    out.push(Ratio {
        label: "knav index --rev v6.12-200 (200 files from the indexed v6.12) / 3 s".into(),
        knav: show(v.near),
        peer: "3 s".into(),
        value: v.near.map(|d| d.as_secs_f64() / 3.0),
        goal: 1.0,
    });
    let (at, now) = v.queries.unzip();
    out.push(Ratio {
        label: "def + refs + callers at --rev v6.12 / on the work tree (5 symbols, medians)".into(),
        knav: show(at),
        peer: show(now),
        value: ratio(at, now),
        goal: 1.5,
    });
    if let Some((same, asked)) = v.agree {
        out.push(Ratio {
            label: "answers at --rev v6.12 the work tree (a checkout of it) gives: asked / same"
                .into(),
            knav: format!("{same} the same"),
            peer: format!("{asked} asked"),
            value: (same > 0).then(|| asked as f64 / same as f64),
            goal: 1.0,
        });
    }
    if let Some((wall, commits, touches, bytes)) = v.history {
        let rate = commits as f64 / wall.as_secs_f64();
        out.push(Ratio {
            label: "history index: commits a second on the synthetic history / 200".into(),
            knav: format!("{rate:.0} commits/s ({commits} in {})", ms(wall)),
            peer: "200 commits/s".into(),
            value: (rate > 0.0).then(|| 200.0 / rate),
            goal: 1.0,
        });
        out.push(Ratio {
            label: "history index: bytes a touched definition / 100".into(),
            knav: format!(
                "{:.1} bytes ({touches} touched)",
                bytes as f64 / touches.max(1) as f64
            ),
            peer: "100 bytes".into(),
            value: (touches > 0).then(|| bytes as f64 / touches as f64 / 100.0),
            goal: 1.0,
        });
    }
    out.push(Ratio {
        label: "knav history filemap_read / 50 ms".into(),
        knav: show(v.history_query),
        peer: "50 ms".into(),
        value: v.history_query.map(|d| d.as_secs_f64() / 0.05),
        goal: 1.0,
    });
    out.push(Ratio {
        label: "knav compare vfs_read v6.1 / 100 ms".into(),
        knav: show(v.compare),
        peer: "100 ms".into(),
        value: v.compare.map(|d| d.as_secs_f64() / 0.1),
        goal: 1.0,
    });
}

/// The revisions' scenarios, as measured.
fn revisions_section(o: &mut String, r: &Results) {
    let Some(v) = &r.revisions else {
        return;
    };
    let show = |d: Option<Duration>| d.map_or("failed".into(), ms);
    let _ = writeln!(
        o,
        "\n## Git revisions\n\nWhole `knav` runs on {} (kernel-bench/make-git-tree.sh: v6.1, \
         v6.12, v6.12-200; the work tree at v6.12), warm page cache.\n",
        v.repo.display()
    );
    let _ = writeln!(o, "| run | wall |\n|---|---|");
    for (label, d) in [
        ("`index --rev v6.1`, nothing indexed, empty store", v.alone),
        ("`index` of the work tree (v6.12), empty store", v.work_tree),
        ("`index --rev v6.1` after it", v.after),
        ("`index --rev v6.12` (the work tree's files)", v.same),
        ("`index --rev v6.12-200` after it", v.near),
        ("`compare vfs_read v6.1` (median)", v.compare),
        (
            "`index --history --rev v6.1` (the root commit: all of v6.1)",
            v.history_root,
        ),
        (
            "`index --history --rev history` after it",
            v.history.map(|h| h.0),
        ),
        (
            "`history filemap_read --rev history` (median)",
            v.history_query,
        ),
    ] {
        let _ = writeln!(o, "| {label} | {} |", show(d));
    }
    if let Some((at, now)) = v.queries {
        let _ = writeln!(
            o,
            "\ndef, refs and callers of 5 symbols, medians summed: {} at `--rev v6.12`, {} on \
             the work tree.",
            ms(at),
            ms(now)
        );
    }
    for n in &v.notes {
        let _ = writeln!(o, "\nNote: {n}");
    }
}

/// The fact store's scenarios, as measured.
fn facts_section(o: &mut String, r: &Results) {
    let Some(f) = &r.facts else {
        return;
    };
    let show = |d: Option<Duration>| d.map_or("failed".into(), ms);
    let _ = writeln!(
        o,
        "\n## Fact store\n\nWhole `knav index` runs, one each, warm page cache; the store starts \
         empty.\n"
    );
    let _ = writeln!(o, "| build | wall |\n|---|---|");
    let _ = writeln!(o, "| the tree, empty store (fills it) | {} |", show(f.fill));
    let _ = writeln!(
        o,
        "| the tree again, every file's facts from the store (segment identical: {}) | {} |",
        match f.identical {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "not compared",
        },
        show(f.from_store)
    );
    let _ = writeln!(
        o,
        "| a copy with {} files changed, same store | {} |",
        crate::facts::CHANGED,
        show(f.copy)
    );
    if let Some((name, alone, shared)) = &f.other {
        let _ = writeln!(o, "| {name}, empty store | {} |", show(*alone));
        let _ = writeln!(o, "| {name}, the tree's store | {} |", show(*shared));
    }
    let _ = writeln!(
        o,
        "\nBytes: the tree's index {}, the other's {}, the store {}.",
        mb(f.tree_bytes),
        mb(f.other_bytes),
        mb(f.store_bytes)
    );
    for n in &f.notes {
        let _ = writeln!(o, "\nNote: {n}");
    }
}

/// The targets of the cold builds: knav's wall time and index bytes against gtags', and its
/// peak RSS.
fn build_targets(r: &Results, out: &mut Vec<Ratio>) {
    let knav_build = build(r, "knav");
    let gtags_build = build(r, "gtags");
    let (kw, gw) = (build_wall(knav_build), build_wall(gtags_build));
    out.push(Ratio {
        label: "cold index wall, knav / gtags".into(),
        knav: kw.map_or("failed".into(), ms),
        peer: gw.map_or("missing".into(), ms),
        value: kw.zip(gw).map(|(k, g)| k.as_secs_f64() / g.as_secs_f64()),
        goal: 0.7,
    });
    let kb = knav_build.map(|b| b.bytes).filter(|&b| b > 0);
    let gb = gtags_build.map(|b| b.bytes).filter(|&b| b > 0);
    out.push(Ratio {
        label: "index bytes, knav / gtags".into(),
        knav: kb.map_or("failed".into(), mb),
        peer: gb.map_or("missing".into(), mb),
        value: kb.zip(gb).map(|(k, g)| k as f64 / g as f64),
        goal: 0.25,
    });
    let rss = knav_build
        .and_then(|b| b.run.as_ref())
        .and_then(|r| r.as_ref().ok())
        .map(|r| r.max_rss_kb);
    out.push(Ratio {
        label: "peak RSS while indexing (knav) / 512 MB".into(),
        knav: rss.map_or("failed".into(), |k| format!("{:.0} MB", k as f64 / 1024.0)),
        peer: "512 MB".into(),
        value: rss.map(|k| k as f64 / 1024.0 / 512.0),
        goal: 1.0,
    });
}

/// The targets of knav's refreshes, `knav index` and `knav serve`, in milliseconds.
fn refresh_targets(r: &Results, out: &mut Vec<Ratio>) {
    for (label, d, goal_ms) in [
        (
            "no-change refresh, `knav index` / 150 ms",
            r.refresh.unchanged,
            150.0,
        ),
        (
            "no-change freshness check, `knav serve` / 150 ms",
            r.refresh.serve_unchanged,
            150.0,
        ),
        (
            "one-file refresh (.c), `knav index` / 300 ms",
            r.refresh.c_edit,
            300.0,
        ),
        (
            "one-file edit to answer, `knav serve` / 300 ms",
            r.refresh.serve_c_edit,
            300.0,
        ),
    ] {
        out.push(Ratio {
            label: label.into(),
            knav: d.map_or("failed".into(), ms),
            peer: format!("{goal_ms:.0} ms"),
            value: d.map(|d| d.as_secs_f64() * 1e3 / goal_ms),
            goal: 1.0,
        });
    }
}

/// The targets of the queries: definitions against global, references against cscope, and
/// the cost of `--active-config`.
fn query_targets(r: &Results, out: &mut Vec<Ratio>) {
    let symbols: Vec<&str> = r.sizes.iter().map(|s| s.symbol).collect();
    let (kd, gd) = (
        total(&r.latencies, "def", "knav def", &symbols),
        total(&r.latencies, "def", "global -x", &symbols),
    );
    out.push(Ratio {
        label: format!(
            "definition lookup, knav def / global -x (sum of {} medians)",
            symbols.len()
        ),
        knav: kd.map_or("failed".into(), ms),
        peer: gd.map_or("missing".into(), ms),
        value: kd.zip(gd).map(|(k, g)| k.as_secs_f64() / g.as_secs_f64()),
        goal: 1.0,
    });
    let (kr, cr) = (
        one(&r.latencies, "refs", "knav refs", "kmalloc"),
        one(&r.latencies, "refs", "cscope -L0", "kmalloc"),
    );
    out.push(Ratio {
        label: "references of kmalloc, knav refs / cscope -L0".into(),
        knav: kr.map_or("failed".into(), ms),
        peer: cr.map_or("missing".into(), ms),
        value: kr.zip(cr).map(|(k, c)| k.as_secs_f64() / c.as_secs_f64()),
        goal: 0.5,
    });
    // The same questions under a real .config: the Kbuild and #if verdicts' cost.
    for q in ["def", "refs", "callers"] {
        let plain = total(&r.latencies, q, &format!("knav {q}"), &symbols);
        let active = total(
            &r.latencies,
            q,
            &format!("knav {q} --active-config"),
            &symbols,
        );
        if let (Some(p), Some(a)) = (plain, active) {
            out.push(Ratio {
                label: format!(
                    "knav {q} with --active-config / without (sum of {} medians)",
                    symbols.len()
                ),
                knav: ms(a),
                peer: ms(p),
                value: Some(a.as_secs_f64() / p.as_secs_f64()),
                goal: 2.0,
            });
        }
    }
}

/// The targets of `knav cscope`: each query's time against cscope's on the same symbols (sum
/// of medians, whole process), and the share of cscope's callers knav does not list.
fn cscope_targets(r: &Results, out: &mut Vec<Ratio>) {
    let Some(b) = &r.cscope else { return };
    for &q in crate::cscope::QUERIES {
        // A row even when nothing was timed (cscope missing): the report says so.
        let rows: Vec<_> = b.timings.iter().filter(|t| t.query == q).collect();
        let k: Duration = rows.iter().map(|t| t.knav).sum();
        let c: Duration = rows.iter().map(|t| t.cscope).sum();
        let measured = !rows.is_empty();
        out.push(Ratio {
            label: format!(
                "cscope query {q}, knav cscope -dL -{q} / cscope -dL -{q} (sum of {} medians)",
                crate::cscope::SYMBOLS.len()
            ),
            knav: if measured {
                ms(k)
            } else {
                "not measured".into()
            },
            peer: if measured { ms(c) } else { "missing".into() },
            value: measured.then(|| k.as_secs_f64() / c.as_secs_f64()),
            goal: 0.3,
        });
    }
    let recall = b.recall.as_ref().filter(|rc| rc.of > 0);
    out.push(Ratio {
        label: "cscope's callers (query 3) knav does not list, share".into(),
        knav: recall.map_or("not measured".into(), |rc| {
            format!("{} missed", rc.of - rc.found)
        }),
        peer: recall.map_or("missing".into(), |rc| format!("of {}", rc.of)),
        value: recall.map(|rc| (rc.of - rc.found) as f64 / rc.of as f64),
        goal: 0.02,
    });
}

/// The section of `knav cscope` against cscope: every query timed and the callers missed.
fn cscope_section(o: &mut String, r: &Results) {
    let Some(b) = &r.cscope else { return };
    let _ = writeln!(
        o,
        "\n## knav cscope against cscope\n\nWhole process, median; cscope on its \
         cross-reference built beforehand (`cscope -R -b -q -k`), knav on its index.\n"
    );
    let _ = writeln!(
        o,
        "| query | symbol | knav cscope | cscope | knav/cscope | lines (knav, cscope) |"
    );
    let _ = writeln!(o, "|---|---|---|---|---|---|");
    for t in &b.timings {
        let _ = writeln!(
            o,
            "| -{} | {} | {} | {} | {:.3} | {}, {} |",
            t.query,
            t.symbol,
            ms(t.knav),
            ms(t.cscope),
            t.knav.as_secs_f64() / t.cscope.as_secs_f64().max(1e-9),
            t.lines.0,
            t.lines.1
        );
    }
    if let Some(rc) = &b.recall {
        let _ = writeln!(
            o,
            "\nCallers (query 3): knav lists {} of cscope's {} call sites (file and line).",
            rc.found, rc.of
        );
        for m in &rc.missed {
            let _ = writeln!(o, "- not in knav's: {m}");
        }
    }
    for n in &b.notes {
        let _ = writeln!(o, "- {n}");
    }
}

/// The targets of knav grep: against rg, through `knav serve`, and its index's size.
fn grep_targets(r: &Results, out: &mut Vec<Ratio>) {
    let g = &r.grep;
    let ratios = grep_ratios(g);
    let median = ratios.get(ratios.len() / 2).copied();
    out.push(Ratio {
        label: format!(
            "knav grep / rg -n, median over {} patterns",
            g.timings.len()
        ),
        knav: median.map_or("not measured".into(), |m| format!("{m:.3}")),
        peer: "rg -n, same flags".into(),
        value: median,
        goal: 0.1,
    });
    out.push(Ratio {
        label: "knav grep / rg -n, slowest pattern".into(),
        knav: ratios
            .last()
            .map_or("not measured".into(), |m| format!("{m:.3}")),
        peer: "rg -n, same flags".into(),
        value: ratios.last().copied(),
        goal: 1.0,
    });
    out.push(Ratio {
        label: "search_text (selective) through `knav serve` / 10 ms".into(),
        knav: g.serve.map_or("failed".into(), ms),
        peer: "10 ms".into(),
        value: g.serve.map(|d| d.as_secs_f64() * 1e3 / 10.0),
        goal: 1.0,
    });
    out.push(Ratio {
        label: "text index bytes / bytes it covers".into(),
        knav: g.index_bytes.map_or("n/a".into(), |(i, _)| mb(i)),
        peer: g.index_bytes.map_or("n/a".into(), |(_, c)| mb(c)),
        value: g
            .index_bytes
            .filter(|&(_, c)| c > 0)
            .map(|(i, c)| i as f64 / c as f64),
        goal: 0.2,
    });
}

/// knav grep / rg per pattern measured, smallest first.
fn grep_ratios(g: &crate::suite::Grep) -> Vec<f64> {
    let mut v: Vec<f64> = g
        .timings
        .iter()
        .filter(|t| t.ok && !t.rg.is_zero())
        .map(|t| t.knav.as_secs_f64() / t.rg.as_secs_f64())
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The Markdown report.
pub fn markdown(cx: &Context, peers: &Peers, r: &Results) -> String {
    let mut o = String::new();
    head(&mut o, cx, peers);
    targets_section(&mut o, r);
    grep_section(&mut o, r);
    tools_section(&mut o, r);
    if !r.quality.is_empty() {
        o.push_str(&crate::quality::section(&r.quality));
    }
    if !r.audit.is_empty() {
        o.push_str(&crate::audit::section(&r.audit));
    }
    if let Some(m) = &r.missing {
        o.push_str(&crate::missing::section(m));
    }
    cold_index_section(&mut o, r);
    refresh_section(&mut o, r);
    facts_section(&mut o, r);
    revisions_section(&mut o, r);
    cscope_section(&mut o, r);
    latency_section(&mut o, cx, r);
    crate::lsp::section(&mut o, &r.lsp);
    answer_size_section(&mut o, r);
    crate::tokens::section(&mut o, &r.tokens);
    let _ = writeln!(o, "\n![ratios](chart.svg)");
    o
}

/// The report's head: the tree, the machine and every tool's version.
fn head(o: &mut String, cx: &Context, peers: &Peers) {
    let _ = writeln!(o, "# kernel-bench: knav against its peers\n");
    let _ = writeln!(
        o,
        "Tree `{}`{}: {} `.c`/`.h` files, {}. {} run(s) per query. {}.\n",
        cx.tree,
        if cx.quick {
            " (quick run on a subtree)"
        } else {
            ""
        },
        cx.files.0,
        mb(cx.files.1),
        cx.runs,
        cx.date
    );
    let _ = writeln!(o, "Machine: {}\n", cx.machine);
    let _ = writeln!(o, "| tool | version |\n|---|---|");
    let _ = writeln!(o, "| knav | {} |", cx.knav_version);
    for p in peers.all() {
        let _ = writeln!(o, "| {} | {} |", p.name, p.version);
    }
}

/// The table of the targets, met or missed.
fn targets_section(o: &mut String, r: &Results) {
    let _ = writeln!(o, "\n## Targets\n");
    let _ = writeln!(
        o,
        "| target | knav | peer or goal | ratio | goal | met |\n|---|---|---|---|---|---|"
    );
    for t in targets(r) {
        let (ratio, met) = match t.value {
            Some(v) => (
                format!("{v:.3}"),
                if v <= t.goal { "yes" } else { "**no**" }.to_string(),
            ),
            None => ("n/a".into(), "not measured".into()),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | ≤ {} | {} |",
            t.label, t.knav, t.peer, ratio, t.goal, met
        );
    }
}

/// knav grep against rg, pattern by pattern (nothing when grep was not measured).
fn grep_section(o: &mut String, r: &Results) {
    if !r.grep.timings.is_empty() || !r.grep.notes.is_empty() {
        let _ = writeln!(
            o,
            "\n## knav grep against rg -n\n\nWhole processes, medians, warm cache (each run \
             once first); the same flags to both, rg run in the tree.\n"
        );
        let _ = writeln!(
            o,
            "| pattern | knav grep | rg -n | knav / rg |\n|---|---|---|---|"
        );
        for t in &r.grep.timings {
            let ratio = if t.ok && !t.rg.is_zero() {
                format!("{:.3}", t.knav.as_secs_f64() / t.rg.as_secs_f64())
            } else {
                "failed".into()
            };
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {ratio} |",
                t.args.replace('|', "\\|"),
                ms(t.knav),
                ms(t.rg)
            );
        }
        for n in &r.grep.notes {
            let _ = writeln!(o, "\n{n}");
        }
    }
}

/// The search, pointer and review tools' timings (nothing when they were not measured).
fn tools_section(o: &mut String, r: &Results) {
    if !r.tools.is_empty() {
        let _ = writeln!(
            o,
            "\n## Search, pointer and review tools\n\nMedians, warm cache: a whole process \
             (after one run), and a call through one `knav serve` (median of 5 after one call).\n"
        );
        let _ = writeln!(
            o,
            "| question | whole process | knav serve | goal (process, serve) | met |\n|---|---|---|---|---|"
        );
        for t in &r.tools {
            let show = |d: Option<Duration>| d.map_or("failed".into(), ms);
            let within =
                |d: Option<Duration>, goal: f64| d.is_some_and(|d| d.as_secs_f64() * 1e3 <= goal);
            let met = within(t.process, t.process_goal_ms) && within(t.serve, t.serve_goal_ms);
            let _ = writeln!(
                o,
                "| {} | {} | {} | ≤ {} ms, ≤ {} ms | {} |",
                t.label,
                show(t.process),
                show(t.serve),
                t.process_goal_ms,
                t.serve_goal_ms,
                if met { "yes" } else { "no" }
            );
        }
    }
}

/// Every tool's cold index build: wall time, peak RSS, index size.
fn cold_index_section(o: &mut String, r: &Results) {
    let _ = writeln!(o, "\n## Cold index\n");
    let _ = writeln!(
        o,
        "| tool | wall | peak RSS | index size | wall / knav |\n|---|---|---|---|---|"
    );
    let knav_wall = build_wall(build(r, "knav"));
    for b in &r.builds {
        match &b.run {
            None => {
                let _ = writeln!(o, "| {} | missing | | | |", b.tool);
            }
            Some(Err(e)) => {
                let _ = writeln!(o, "| {} | failed: {} | | | |", b.tool, e.replace('|', "/"));
            }
            Some(Ok(run)) => {
                let status = if run.ok {
                    String::new()
                } else {
                    format!(" (exit != 0: {})", run.stderr_tail.replace('|', "/"))
                };
                let runs = if run.ok && b.walls.len() > 1 {
                    let all: Vec<String> = b.walls.iter().map(|w| ms(*w)).collect();
                    format!(" (median of {})", all.join(", "))
                } else {
                    String::new()
                };
                let _ = writeln!(
                    o,
                    "| {} | {}{}{} | {:.0} MB | {} | {} |",
                    b.tool,
                    ms(run.wall),
                    runs,
                    status,
                    run.max_rss_kb as f64 / 1024.0,
                    mb(b.bytes),
                    knav_wall.map_or("".into(), |k| format!(
                        "{:.2}",
                        run.wall.as_secs_f64() / k.as_secs_f64()
                    ))
                );
            }
        }
    }
    let _ = writeln!(
        o,
        "\nPeak RSS is each process's own (`wait4`); for the parallel ctags row, the largest \
         process's. Index sizes are the bytes each tool wrote (knav: its index directory)."
    );
}

/// knav's refreshes, by `knav index` and `knav serve`.
fn refresh_section(o: &mut String, r: &Results) {
    let _ = writeln!(o, "\n## knav refresh\n");
    let f = &r.refresh;
    let row = |o: &mut String, what: &str, d: Option<Duration>| {
        let _ = writeln!(o, "| {what} | {} |", d.map_or("not measured".into(), ms));
    };
    let _ = writeln!(o, "| case | time |\n|---|---|");
    row(
        o,
        "`knav index`, nothing changed (median of 3)",
        f.unchanged,
    );
    row(
        o,
        &format!(
            "`knav index`, {} edited (median of 3)",
            f.files.first().map_or("a .c file", |s| s)
        ),
        f.c_edit,
    );
    row(
        o,
        &format!(
            "`knav index`, {} edited (median of 3)",
            f.files.get(1).map_or("a header", |s| s)
        ),
        f.h_edit,
    );
    row(
        o,
        "`knav serve`, call past the debounce window, nothing changed (median of 5)",
        f.serve_unchanged,
    );
    row(
        o,
        "`knav serve`, call past the debounce window after a .c edit (answer sees it)",
        f.serve_c_edit,
    );
    for n in &f.notes {
        let _ = writeln!(o, "\nNote: {n}");
    }
}

/// Every tool's latency per question and symbol, with knav's ratio to each.
fn latency_section(o: &mut String, cx: &Context, r: &Results) {
    let _ = writeln!(o, "\n## Query latency\n");
    let _ = writeln!(
        o,
        "Whole processes, median / p90 of {} run(s), per symbol; the last column is knav's \
         median over the tool's.\n",
        cx.runs
    );
    for question in ["def", "refs", "callers"] {
        let tools: Vec<String> = {
            let mut t: Vec<String> = r
                .latencies
                .iter()
                .filter(|l| l.question == question)
                .map(|l| l.tool.clone())
                .collect();
            t.dedup();
            let mut seen = Vec::new();
            t.retain(|x| {
                let new = !seen.contains(x);
                seen.push(x.clone());
                new
            });
            t
        };
        let _ = writeln!(o, "### {question}\n");
        let _ = writeln!(o, "| symbol | {} |", tools.join(" | "));
        let _ = writeln!(o, "|---|{}", "---|".repeat(tools.len()));
        for sym in r.sizes.iter().map(|s| s.symbol) {
            let mut cells = Vec::new();
            let knav = r
                .latencies
                .iter()
                .find(|l| l.question == question && l.symbol == sym && l.tool.starts_with("knav"));
            for t in &tools {
                let cell = match r
                    .latencies
                    .iter()
                    .find(|l| l.question == question && l.symbol == sym && &l.tool == t)
                {
                    Some(l) if l.ok => {
                        let ratio = match knav {
                            Some(k) if !t.starts_with("knav") && l.median > Duration::ZERO => {
                                format!(
                                    " ({:.2}×)",
                                    k.median.as_secs_f64() / l.median.as_secs_f64()
                                )
                            }
                            _ => String::new(),
                        };
                        format!("{} / {}{}", ms(l.median), ms(l.p90), ratio)
                    }
                    Some(_) => "failed".into(),
                    None => "missing".into(),
                };
                cells.push(cell);
            }
            let _ = writeln!(o, "| {sym} | {} |", cells.join(" | "));
        }
        let _ = writeln!(o);
    }
}

/// The size of knav's answers against rg's, per symbol.
fn answer_size_section(o: &mut String, r: &Results) {
    let _ = writeln!(o, "## Answer size\n");
    let _ = writeln!(
        o,
        "Bytes and tokens (bytes / 4) of what an agent reads: knav's compact text and JSON \
         (first page) against `rg -w -n` for the same symbol.\n"
    );
    let _ = writeln!(
        o,
        "| symbol | knav def text | knav refs text | knav def json | knav refs json | rg -w -n | (def+refs text) / (2 × rg) |\n|---|---|---|---|---|---|---|"
    );
    let tok = |b: usize| format!("{} B / {} tok", b, b.div_ceil(4));
    for z in &r.sizes {
        let ratio = z.rg.filter(|&g| g > 0).map_or("n/a".into(), |g| {
            format!("{:.3}", (z.def_text + z.refs_text) as f64 / (2 * g) as f64)
        });
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {ratio} |",
            z.symbol,
            tok(z.def_text),
            tok(z.refs_text),
            tok(z.def_json),
            tok(z.refs_json),
            z.rg.map_or("missing".into(), tok)
        );
    }
}

/// A horizontal bar chart of the target ratios on a log scale, with each goal marked.
pub fn svg(r: &Results) -> String {
    let rows = targets(r);
    let (left, width, bar_h, gap) = (430.0, 420.0, 18.0, 10.0);
    let top = 40.0;
    let height = top + rows.len() as f64 * (bar_h + gap) + 40.0;
    let (lo, hi) = (-3.0f64, 1.0f64); // 0.001 .. 10
    let x = |v: f64| left + (v.max(1e-3).log10() - lo) / (hi - lo) * width;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="sans-serif" font-size="12">"#,
        left + width + 30.0
    );
    let _ = writeln!(
        o,
        r#"<text x="10" y="20" font-size="14">knav / peer (log scale; left of the goal mark is met)</text>"#
    );
    for p in -3..=1 {
        let v = 10f64.powi(p);
        let xv = x(v);
        let _ = writeln!(
            o,
            r##"<line x1="{xv}" y1="{}" x2="{xv}" y2="{}" stroke="#ddd"/><text x="{xv}" y="{}" text-anchor="middle" fill="#555">{v}</text>"##,
            top - 5.0,
            height - 30.0,
            height - 15.0
        );
    }
    for (i, t) in rows.iter().enumerate() {
        let y = top + i as f64 * (bar_h + gap);
        let label = t
            .label
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('`', "");
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="end">{label}</text>"#,
            left - 8.0,
            y + bar_h - 5.0
        );
        match t.value {
            Some(v) => {
                let color = if v <= t.goal { "#3a7d44" } else { "#c0392b" };
                let _ = writeln!(
                    o,
                    r#"<rect x="{left}" y="{y}" width="{:.1}" height="{bar_h}" fill="{color}"/><text x="{:.1}" y="{}" fill="{color}">{v:.3}</text>"#,
                    (x(v) - left).max(1.0),
                    x(v) + 4.0,
                    y + bar_h - 5.0
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    r##"<text x="{}" y="{}" fill="#888">not measured</text>"##,
                    left + 4.0,
                    y + bar_h - 5.0
                );
            }
        }
        let gx = x(t.goal);
        let _ = writeln!(
            o,
            r#"<line x1="{gx}" y1="{}" x2="{gx}" y2="{}" stroke="black" stroke-width="2"/>"#,
            y - 2.0,
            y + bar_h + 2.0
        );
    }
    let _ = writeln!(o, "</svg>");
    o
}
