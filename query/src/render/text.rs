//! The compact text form: an optional summary line, `path:line: source  [tags]` rows, a
//! pagination footer and `next:` hints.

use std::fmt::Write;

use crate::envelope::{Envelope, Record, Results};

fn tags(kind: Option<&str>, guard: &Option<Vec<String>>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(k) = kind {
        parts.push(k.to_string());
    }
    if let Some(g) = guard.as_ref().filter(|g| !g.is_empty()) {
        parts.push(format!("#if {}", g.join(" && ")));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("  [{}]", parts.join("; "))
    }
}

fn summary(env: &Envelope, out: &mut String) {
    let Some(s) = &env.summary else { return };
    let defs = match s.definition_count {
        1 => "1 definition".to_string(),
        n => format!("{n} definitions"),
    };
    let variants = if s.guard_variants > 1 {
        format!(" under {} #if variants", s.guard_variants)
    } else {
        String::new()
    };
    let mut line = format!(
        "{}: {defs}{variants} · {} refs in {} files",
        s.symbol, s.reference_count, s.file_count
    );
    if !s.counts_mix.is_empty() {
        let _ = write!(
            line,
            " of every entity named {} ({})",
            s.symbol,
            s.counts_mix.join(", ")
        );
    }
    if s.file_count > 1 {
        if let Some(t) = s.top_files.first() {
            let _ = write!(line, " (top: {} {}, …)", t.path, t.count);
        }
    }
    if let Some(e) = &s.exported {
        let _ = write!(
            line,
            " · exported: {} ({}:{})",
            e.macro_name, e.path, e.line
        );
    }
    if let Some(e) = &s.entry_point {
        let _ = write!(
            line,
            " · entry point: {} ({}:{})",
            e.macro_name, e.path, e.line
        );
    }
    let _ = writeln!(out, "{line}");
}

fn record_row(r: &Record, named: bool, out: &mut String) {
    let kind = r.role.as_deref().or(r.kind.as_deref());
    let via = r
        .resolved_via
        .as_ref()
        .map(|v| format!("  (resolved via {v})"))
        .unwrap_or_default();
    let undecided = if r.active == Some(None) {
        "  (config: undecided)"
    } else {
        ""
    };
    // A search answer names each row's symbol: the line alone may not (`SYSCALL_DEFINE3(read`).
    let name = if named {
        format!("{}  ", r.symbol)
    } else {
        String::new()
    };
    // An outline row shows the definition's line range.
    let range = match r.end_line {
        Some(end) if end > r.line => format!("{}-{end}", r.line),
        _ => r.line.to_string(),
    };
    let _ = writeln!(
        out,
        "{name}{}:{range}: {}{}{via}{undecided}",
        r.path,
        r.snippet,
        tags(kind, &r.guard)
    );
}

/// Definition, reference and body rows; `named`: each row starts with its symbol.
fn records(rs: &[Record], named: bool, out: &mut String) -> usize {
    for r in rs {
        if let Some(body) = &r.body {
            let _ = writeln!(
                out,
                "{}:{}-{}:{}",
                r.path,
                r.line,
                r.end_line.unwrap_or(r.line),
                tags(r.kind.as_deref(), &r.guard)
            );
            let _ = writeln!(out, "{body}");
            if r.body_truncated == Some(true) {
                let cap = r
                    .body_cut
                    .clone()
                    .unwrap_or_else(|| format!("{} lines", crate::query::MAX_BODY_LINES));
                let _ = writeln!(out, "… (body cut at {cap})");
            }
        } else if let Some(score) = r.score {
            scored_row(r, score.0, out);
        } else {
            record_row(r, named, out);
        }
    }
    rs.len()
}

/// A search_code row: score, name, place and first line, then the comment's first line.
fn scored_row(r: &Record, score: f64, out: &mut String) {
    let _ = writeln!(
        out,
        "{score:.2}  {}  {}:{}-{}: {}{}",
        r.symbol,
        r.path,
        r.line,
        r.end_line.unwrap_or(r.line),
        r.snippet,
        tags(r.kind.as_deref(), &r.guard)
    );
    if let Some(c) = &r.comment {
        let _ = writeln!(out, "      // {c}");
    }
    if let Some(w) = &r.why {
        let _ = writeln!(out, "      why: {w}");
    }
}

/// What a text search covered, in one line.
fn search_summary(s: &crate::envelope::SearchSummary, out: &mut String) {
    let _ = writeln!(
        out,
        "{} hits in {} files · {} files searched ({} read; {} binary, searched to their first NUL byte as rg does)",
        s.hits, s.files_with_hits, s.files_searched, s.files_read, s.files_binary
    );
}

/// Text search hits: under each file, grouped under their enclosing definition (its line
/// range and first line), each hit as `line: text`, context lines as `line- text`.
fn hits(hs: &[crate::envelope::Hit], out: &mut String) -> usize {
    let mut last_path: Option<&str> = None;
    let mut last_group: Option<(u32, u32)> = None;
    for h in hs {
        if last_path != Some(h.path.as_str()) {
            let _ = writeln!(out, "{}", h.path);
            last_path = Some(&h.path);
            last_group = None;
        }
        let group = h.enclosing.as_ref().map(|e| (e.line, e.end_line));
        if group != last_group {
            if let Some(e) = &h.enclosing {
                let _ = writeln!(
                    out,
                    "  {}-{}: {}  [{} {}]",
                    e.line, e.end_line, e.signature, e.kind, e.symbol
                );
            }
            last_group = group;
        }
        let indent = if h.enclosing.is_some() { "    " } else { "  " };
        let ctx = h.context.as_ref();
        if let Some(c) = ctx {
            let first = h.line as usize - c.before.len();
            for (k, l) in c.before.iter().enumerate() {
                let _ = writeln!(out, "{indent}{}- {l}", first + k);
            }
        }
        let undecided = if h.active == Some(None) {
            "  (config: undecided)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{indent}{}: {}{}{undecided}",
            h.line,
            h.snippet,
            tags(None, &h.guard)
        );
        if let Some(c) = ctx {
            for (k, l) in c.after.iter().enumerate() {
                let _ = writeln!(out, "{indent}{}- {l}", h.line as usize + 1 + k);
            }
        }
    }
    hs.len()
}

/// `-l` and `-c` answers: one file a row, with its count for `-c`.
fn file_counts(gs: &[crate::envelope::FileGroup], count: bool, out: &mut String) -> usize {
    for g in gs {
        if count {
            let _ = writeln!(out, "{}:{}", g.path, g.count);
        } else {
            let _ = writeln!(out, "{}", g.path);
        }
    }
    gs.len()
}

/// References grouped by file: one row per file.
fn groups(gs: &[crate::envelope::FileGroup], out: &mut String) -> usize {
    for g in gs {
        let mut lines: Vec<String> = g.lines.iter().take(12).map(u32::to_string).collect();
        if g.lines.len() > 12 {
            lines.push("…".into());
        }
        let _ = writeln!(
            out,
            "{}: {} refs (lines {})",
            g.path,
            g.count,
            lines.join(", ")
        );
    }
    gs.len()
}

/// Call sites: one row per caller and file, the first call's line, then the other lines.
fn calls(cs: &[crate::envelope::CallSite], out: &mut String) -> usize {
    // One row per caller and file: the first call's line, then the other lines.
    let mut i = 0;
    while i < cs.len() {
        let c = &cs[i];
        let mut j = i + 1;
        while j < cs.len() && cs[j].caller == c.caller && cs[j].path == c.path && cs[j].via == c.via
        {
            j += 1;
        }
        let caller = c.caller.as_deref().unwrap_or("(file scope)");
        let more = if j - i > 1 {
            let rest: Vec<String> = cs[i + 1..j]
                .iter()
                .take(5)
                .map(|c| c.line.to_string())
                .collect();
            let ell = if j - i - 1 > 5 { ", …" } else { "" };
            format!("  (+{} more: {}{ell})", j - i - 1, rest.join(", "))
        } else {
            String::new()
        };
        let via = match (&c.via, &c.registered_at, c.certainty) {
            (Some(v), Some(r), Some(cert)) => format!("  [via {v}, registered {r}, {cert}]"),
            (Some(v), _, _) => format!("  [via {v}]"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{caller}  {}:{}: {}{}{more}{via}",
            c.path,
            c.line,
            c.snippet,
            tags(None, &c.guard)
        );
        i = j;
    }
    cs.len()
}

/// Files found: one path a row, with its size.
fn files(fs: &[crate::envelope::FileHit], out: &mut String) -> usize {
    for f in fs {
        let _ = writeln!(
            out,
            "{}  ({} lines, {} definitions)",
            f.path, f.lines, f.definitions
        );
    }
    fs.len()
}

/// Documentation sections found: where and the title, then the best line.
fn docs(ds: &[crate::envelope::DocHit], out: &mut String) -> usize {
    for d in ds {
        let _ = writeln!(out, "{}:{}: {}  [{:.2}]", d.path, d.line, d.title, d.score);
        if !d.snippet.is_empty() {
            let _ = writeln!(out, "    {}", d.snippet);
        }
    }
    ds.len()
}

/// Nodes of a board a find_device row shows at most.
const DEVICE_NODES_SHOWN: usize = 3;

/// find_device: the counts, the bindings, then a board a row with its nodes; for a pattern,
/// the compatibles it matches.
fn device(d: &crate::envelope::Device, out: &mut String) -> usize {
    let plural = |n: u64, one: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {one}s"),
    };
    if let Some(r) = &d.driver_file {
        return driver_report(r, out);
    }
    if !d.counts.is_empty() {
        let counts: Vec<String> = d.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(out, "dt check: {}", counts.join(", "));
        for f in &d.findings {
            let _ = writeln!(
                out,
                "{}:{}: {} {}: {}",
                f.path, f.line, f.kind, f.subject, f.detail
            );
        }
        return d.findings.len();
    }
    if d.bindings.is_empty() && d.board_rows.is_empty() && d.boards == 0 && d.matches.is_empty() {
        // A device key: its drivers alone.
        let _ = writeln!(
            out,
            "{}: {}",
            d.compatible,
            plural(d.drivers.len() as u64, "driver")
        );
        for r in &d.drivers {
            device_driver(r, out);
        }
        return d.drivers.len();
    }
    if !d.matches.is_empty() {
        for m in &d.matches {
            let _ = writeln!(
                out,
                "{}  ({}, {})",
                m.compatible,
                plural(m.bindings, "binding"),
                plural(m.nodes, "node")
            );
        }
        return d.matches.len();
    }
    let _ = writeln!(
        out,
        "{}: {}, {} · nodes: {} in .dts, {} in .dtsi, {} in overlays",
        d.compatible,
        plural(d.bindings.len() as u64, "binding"),
        plural(d.boards, "board"),
        d.dts_nodes,
        d.dtsi_nodes,
        d.overlay_nodes
    );
    for r in &d.drivers {
        device_driver(r, out);
    }
    for c in &d.code {
        let _ = writeln!(out, "{}:{}: tested by {}", c.path, c.line, c.via);
    }
    for b in &d.bindings {
        let title = b.title.as_deref().unwrap_or("");
        let _ = writeln!(out, "{}:{}: binding  {title}", b.path, b.line);
    }
    for b in &d.board_rows {
        let model = b
            .model
            .as_deref()
            .map(|m| format!("  \"{m}\""))
            .unwrap_or_default();
        let _ = writeln!(out, "{}{model}", b.path);
        for n in b.nodes.iter().take(DEVICE_NODES_SHOWN) {
            let status = n.status.as_deref().unwrap_or("okay");
            let _ = writeln!(out, "    {}:{}: {}  [{status}]", n.path, n.line, n.node);
        }
        if b.nodes.len() > DEVICE_NODES_SHOWN {
            let _ = writeln!(
                out,
                "    … {} more nodes",
                b.nodes.len() - DEVICE_NODES_SHOWN
            );
        }
    }
    d.board_rows.len()
}

/// One driver of a device: its table entry, driver structure, probe function and config,
/// on one line (`path:line: how · entry · driver :line · probe f (path:line) · CONFIG_X=m
/// "prompt"`), the reason it is not built on the next.
fn device_driver(r: &crate::envelope::DeviceDriver, out: &mut String) {
    let mut parts = vec![r.how.clone()];
    if let Some(k) = &r.key {
        parts.push(format!("as {k}"));
    }
    if let Some(e) = &r.entry {
        parts.push(e.clone());
    }
    if let (Some(d), Some(l)) = (&r.driver, r.driver_line) {
        parts.push(format!("{d} :{l}"));
    }
    for (what, f) in [("probe", &r.probe), ("remove", &r.remove)] {
        if let Some(f) = f {
            let at = match (&f.path, f.line) {
                (Some(p), Some(l)) if *p == r.path => format!(" :{l}"),
                (Some(p), Some(l)) => format!(" {p}:{l}"),
                _ => String::new(),
            };
            parts.push(format!("{what} {}{at}", f.name));
        }
    }
    if let Some(c) = &r.config {
        let mut s = c.symbol.clone();
        if let Some(b) = &c.built {
            s.push_str(&format!("={b}"));
        }
        if let Some(p) = &c.prompt {
            s.push_str(&format!(" \"{p}\""));
        }
        if let Some(k) = &c.kconfig {
            s.push_str(&format!(" ({k})"));
        }
        parts.push(s);
    }
    let _ = writeln!(out, "{}:{}: {}", r.path, r.line, parts.join(" · "));
    if let Some(why) = r.config.as_ref().and_then(|c| c.why.as_ref()) {
        let _ = writeln!(out, "    not built: {why}");
    }
}

/// What one driver file matches and reads (`knav device --driver`).
fn driver_report(r: &crate::envelope::DriverReport, out: &mut String) -> usize {
    let _ = writeln!(out, "{}:", r.path);
    for d in &r.drivers {
        device_driver(d, out);
    }
    let mut rows = 0;
    for t in &r.tables {
        let mdt = match &t.module_device_table {
            Some(bus) => format!("MODULE_DEVICE_TABLE({bus})"),
            None => "no MODULE_DEVICE_TABLE".to_string(),
        };
        let _ = writeln!(
            out,
            "{}:{}: {} {} ({} entries, {mdt})",
            r.path,
            t.line,
            t.kind,
            t.name,
            t.keys.len()
        );
        for k in &t.keys {
            let _ = writeln!(out, "    {k}");
        }
        rows += t.keys.len();
    }
    for c in &r.code {
        let _ = writeln!(
            out,
            "{}:{}: {} {}",
            c.path,
            c.line,
            c.via,
            c.compatible.as_deref().unwrap_or("")
        );
    }
    if !r.properties.is_empty() {
        let _ = writeln!(out, "properties read:");
        for p in &r.properties {
            let _ = writeln!(out, "    :{} {} ({})", p.line, p.property, p.function);
        }
    }
    rows.max(r.drivers.len())
}

/// What a function calls, one row per callee.
fn callees(env: &Envelope, c: &crate::envelope::Callees, out: &mut String) -> usize {
    let _ = writeln!(
        out,
        "{} ({}:{}) calls {}:",
        c.symbol, c.path, c.line, env.total
    );
    for e in &c.callees {
        if let Some(n) = e.guesses {
            let _ = writeln!(
                out,
                "  {}  line {} → through a pointer of unknown struct type, {n} guesses by member name",
                e.symbol, e.line
            );
            continue;
        }
        if let Some(n) = e.registered {
            let more = if n as usize > e.targets.len() {
                ", …"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  {}  line {} → through a pointer, {n} registered: {}{more}",
                e.symbol,
                e.line,
                e.targets.join(", ")
            );
            continue;
        }
        let at = e.defined_at.as_deref().unwrap_or("(no definition indexed)");
        let _ = writeln!(out, "  {}  line {} → {at}", e.symbol, e.line);
    }
    c.callees.len()
}

/// The call chain found, if any.
fn reach(r: &crate::envelope::Reach, out: &mut String) -> usize {
    if r.reachable {
        let _ = writeln!(
            out,
            "{} reaches {} in {} calls: {}",
            r.from,
            r.to,
            r.chain.len().saturating_sub(1),
            chain(r)
        );
    }
    usize::from(r.reachable)
}

/// `a → b →[ops.f] c`: each call through a pointer shows the member it went through.
fn chain(r: &crate::envelope::Reach) -> String {
    let mut s = r.chain.first().cloned().unwrap_or_default();
    for (i, next) in r.chain.iter().enumerate().skip(1) {
        match r.via.get(i - 1).cloned().flatten() {
            Some(via) => {
                let _ = write!(s, " →[{via}] {next}");
            }
            None => {
                let _ = write!(s, " → {next}");
            }
        }
    }
    s
}

/// The kernel macro families `knav index` and `knav status` name, the most productive first.
const MACRO_FAMILIES_SHOWN: usize = 5;

/// `  118340 definitions made by kernel macros: (learned from #defines) 63797, …`: the `shown`
/// most productive families, and how many more `knav status --verbose` lists.
fn macro_families(
    families: &std::collections::BTreeMap<String, u64>,
    shown: usize,
    out: &mut String,
) {
    if families.is_empty() {
        return;
    }
    let total: u64 = families.values().sum();
    let mut by_count: Vec<_> = families.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut list: Vec<String> = by_count
        .iter()
        .take(shown)
        .map(|(f, n)| format!("{f} {n}"))
        .collect();
    if by_count.len() > shown {
        list.push(format!(
            "and {} more families (`knav status --verbose`)",
            by_count.len() - shown
        ));
    }
    let _ = writeln!(
        out,
        "  {total} definitions made by kernel macros: {}",
        list.join(", ")
    );
}

/// What a build or refresh did, and what it could not index.
fn index_report(r: &knav_index::UpdateReport, out: &mut String) -> usize {
    let _ = writeln!(
        out,
        "index {}: {}; {} changed, {} added, {} deleted in {} ms",
        r.mode,
        crate::envelope::file_counts(r.files_scanned, r.files_unindexed, r.other_files),
        r.changed,
        r.added,
        r.deleted,
        r.elapsed_ms
    );
    for e in r.walk_errors.iter().take(20) {
        let _ = writeln!(out, "  skipped: {e}");
    }
    for why in r.unindexed_sources.iter().take(20) {
        let _ = writeln!(out, "  not indexed: {why}");
    }
    if r.unindexed_sources.len() > 20 {
        let _ = writeln!(out, "  … and {} more", r.unindexed_sources.len() - 20);
    }
    if let Some(b) = &r.build_files {
        let _ = writeln!(out, "  {b}");
    }
    if r.text_files > 0 {
        let _ = writeln!(
            out,
            "  text index (knav grep): {} files, {:.1} MB",
            r.text_files,
            r.text_index_bytes as f64 / 1e6
        );
    }
    if let Some(d) = &r.docs {
        let _ = writeln!(out, "  {d}");
    }
    if let Some(h) = &r.hw {
        let _ = writeln!(out, "  {h}");
    }
    if let Some(s) = &r.seeded_from {
        let _ = writeln!(
            out,
            "  started from the index in {}: {} files proven the same",
            s.from, s.proven
        );
    }
    if let Some(f) = &r.facts {
        facts_line(f, out);
    }
    macro_families(&r.macro_definitions, MACRO_FAMILIES_SHOWN, out);
    1
}
/// What one build did with the fact store: `24391 of 61264 files' facts from the store (40%),
/// 36873 analyzed, 36873 kept`, with what was not kept, not trusted or made under other macros;
/// `knav index` and `knav cache` say it alike.
pub fn tally(t: &knav_index::factstore::Tally) -> String {
    let mut out = format!(
        "{} of {} files' facts from the store ({:.0}%), {} analyzed",
        t.hits,
        t.hits + t.misses,
        t.hit_rate(),
        t.misses
    );
    match &t.not_kept {
        Some(why) => {
            let _ = write!(out, ", none kept: {why}");
        }
        None => {
            let _ = write!(out, ", {} kept", t.written);
        }
    }
    if t.rejected > 0 {
        let _ = write!(
            out,
            " ({} kept under other definer macros of the headers)",
            t.rejected
        );
    }
    if t.damaged > 0 {
        let _ = write!(out, "; {} damaged entries not trusted", t.damaged);
    }
    for note in &t.skipped {
        let _ = write!(out, "; skipped {note}");
    }
    out
}

/// What a build did with the fact store: `fact store: 24391 of 61264 files' facts from the
/// store (40%), 36873 analyzed and kept; 1.2 GB in 3 packs (DIR)`.
fn facts_line(f: &knav_index::FactsReport, out: &mut String) {
    let _ = write!(out, "  fact store: {}", tally(&f.tally));
    let _ = write!(
        out,
        "; {:.1} MB in {} packs ({})",
        f.usage.bytes as f64 / 1e6,
        f.usage.packs,
        f.dir
    );
    if f.pruned.packs > 0 {
        let _ = write!(
            out,
            ", {} packs ({:.1} MB) pruned to the size cap",
            f.pruned.packs,
            f.pruned.bytes as f64 / 1e6
        );
    }
    let _ = writeln!(out);
}

/// The pagination footer: `[first-last of total · offset=K for more]`, `[first-last of total]`
/// past the first page, `[none of total at offset=K]` past the end; nothing for a whole answer.
/// Saturating: an offset near 2^64 must not wrap the numbers shown.
fn footer(env: &Envelope, shown: u64, out: &mut String) {
    if !env.truncated && env.offset == 0 {
        return;
    }
    if shown == 0 {
        let _ = writeln!(out, "[none of {} at offset={}]", env.total, env.offset);
        return;
    }
    let first = env.offset.saturating_add(1);
    let last = env.offset.saturating_add(shown);
    if env.truncated {
        let _ = writeln!(
            out,
            "[{first}-{last} of {} · offset={last} for more]",
            env.total
        );
    } else {
        let _ = writeln!(out, "[{first}-{last} of {}]", env.total);
    }
}

/// Renders `env` as compact text.
pub fn text(env: &Envelope) -> String {
    let out = unescaped(env);
    match knav_index::printable::shown(&out) {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

/// [`text`] before its control characters are escaped.
fn unescaped(env: &Envelope) -> String {
    let mut out = String::new();
    if let Some(rev) = &env.rev {
        let _ = writeln!(out, "at {}", crate::envelope::RevName::label(Some(rev)));
    }
    if let Some(e) = &env.error {
        let _ = writeln!(out, "Error: {e}");
        if !env.near_misses.is_empty() {
            let _ = writeln!(out, "did you mean: {}", env.near_misses.join(", "));
        }
        if !env.next_tools.is_empty() {
            let _ = writeln!(out, "next: {}", env.next_tools.join(", "));
        }
        return out;
    }
    summary(env, &mut out);
    if let Some(s) = &env.search {
        search_summary(s, &mut out);
    }
    let shown = match &env.results {
        Some(Results::Records(rs)) => records(rs, env.tool == "search_symbols", &mut out),
        Some(Results::Hits(hs)) => hits(hs, &mut out),
        Some(Results::Groups(gs)) if env.search.is_some() => {
            let count = env.search.as_ref().is_some_and(|s| s.mode == "count");
            file_counts(gs, count, &mut out)
        }
        Some(Results::Groups(gs)) => groups(gs, &mut out),
        Some(Results::Calls(cs)) => calls(cs, &mut out),
        Some(Results::Files(fs)) => files(fs, &mut out),
        Some(Results::Docs(ds)) => docs(ds, &mut out),
        Some(Results::Callees(c)) => callees(env, c, &mut out),
        Some(Results::Reach(r)) => reach(r, &mut out),
        Some(Results::Index(r)) => index_report(r, &mut out),
        Some(Results::Status(s)) => status(s, &mut out),
        Some(Results::Impact(i)) => super::change::impact(i, &mut out),
        Some(Results::Review(r)) => super::change::review(env, r, &mut out),
        Some(Results::Compare(c)) => super::change::compare(c, &mut out),
        Some(Results::History(h)) => super::change::history(h, &mut out),
        Some(Results::Device(d)) => device(d, &mut out),
        None => 0,
    };
    if let Some(m) = &env.message {
        let _ = writeln!(out, "{m}");
    }
    for d in &env.devices {
        let more = match d.devices as usize > d.first.len() {
            true => ", …",
            false => "",
        };
        let _ = writeln!(
            out,
            "probe of {} ({}:{}), matching {} devices: {}{more}",
            d.driver,
            d.path,
            d.line,
            d.devices,
            d.first.join(", ")
        );
    }
    if !env.hidden.is_empty() {
        let shown: Vec<String> = env
            .hidden
            .iter()
            .take(3)
            .map(|h| format!("{}:{} — {}", h.path, h.line, h.reason))
            .collect();
        let more = if env.hidden.len() > 3 { "; …" } else { "" };
        let _ = writeln!(
            out,
            "hidden by the active config: {} ({}{more})",
            env.hidden.len(),
            shown.join("; ")
        );
    }
    footer(env, shown as u64, &mut out);
    if let Some(w) = &env.warning {
        let _ = writeln!(out, "warning: {w}");
    }
    if !env.next_tools.is_empty() {
        let _ = writeln!(out, "next: {}", env.next_tools.join(", "));
    }
    out
}

/// The status line of what changed in the C sources since the index was built.
fn since_indexed(c: &crate::envelope::SinceIndexed, out: &mut String) {
    let n = c.added + c.changed + c.deleted;
    if n == 0 {
        let _ = writeln!(
            out,
            "  no C source changed since the index was built (by the {})",
            c.by
        );
        return;
    }
    let more = match n.saturating_sub(c.files.len() as u64) {
        0 => String::new(),
        k => format!(", and {k} more"),
    };
    let _ = writeln!(
        out,
        "  changed since the index was built (by a {}): {} added, {} changed, {} deleted: {}{more}; \
         the next query refreshes them (or `knav index`)",
        c.by,
        c.added,
        c.changed,
        c.deleted,
        c.files.join(", ")
    );
}

/// index_status: one line for the index, one for what it left out, one for a running build.
fn status(s: &crate::envelope::IndexStatus, out: &mut String) -> usize {
    if s.indexed || s.unusable.is_some() {
        let _ = writeln!(
            out,
            "index generation {}, published {} s ago, {:.1} MB in {}: {}",
            s.generation,
            s.age_s,
            s.size_bytes as f64 / 1e6,
            s.index_dir,
            crate::envelope::file_counts(s.files_scanned, s.files_unindexed, s.unindexed.not_c)
        );
    }
    if let Some(why) = &s.unusable {
        let _ = writeln!(out, "  unusable: {why}");
    }
    for r in &s.revisions {
        let _ = writeln!(
            out,
            "  revision {} ({}): {} files, {}",
            r.record.asked,
            &r.record.commit[..r.record.commit.len().min(12)],
            r.record.files,
            if r.indexed { "indexed" } else { "not indexed" }
        );
    }
    let u = &s.unindexed;
    if s.files_unindexed > u.not_c || s.symlinks > 0 {
        let _ = writeln!(
            out,
            "  C files not indexed: {} without definitions (ctags failed), {} binary, {} too big, {} unreadable; {} symbolic links skipped",
            u.no_definitions, u.binary, u.too_big, u.unreadable, s.symlinks
        );
    }
    let shown = if s.verbose {
        usize::MAX
    } else {
        MACRO_FAMILIES_SHOWN
    };
    macro_families(&s.macro_definitions, shown, out);
    if let Some(c) = &s.since_indexed {
        since_indexed(c, out);
    }
    match &s.build {
        // A tree without an index says so in its message; no line about builds comes first.
        None if !s.indexed && s.unusable.is_none() => {}
        None => {
            let _ = writeln!(out, "  no build running");
        }
        Some(b) => {
            let pid = b
                .pid
                .map_or("another process".to_string(), |p| format!("pid {p}"));
            let how = b
                .progress
                .as_deref()
                .map(|p| format!(": {p}"))
                .unwrap_or_default();
            let _ = writeln!(out, "  a build is running (held by {pid}){how}");
        }
    }
    1
}
