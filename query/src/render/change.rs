//! The text form of what a change affects: change_impact's callers by level with their groups,
//! review_diff's files, hunks and touched definitions, compare_versions' definitions paired
//! across two versions, symbol_history's commits.

use std::fmt::Write;

use crate::envelope::{Envelope, Impact, Review, ReviewFile, Touched};

/// `#if G` and the export of a row, as `  [..; ..]`.
fn tags(parts: Vec<String>) -> String {
    if parts.is_empty() {
        String::new()
    } else {
        format!("  [{}]", parts.join("; "))
    }
}

fn guard_tag(guard: &Option<Vec<String>>) -> Option<String> {
    guard
        .as_ref()
        .filter(|g| !g.is_empty())
        .map(|g| format!("#if {}", g.join(" && ")))
}

/// `name functions/call sites` for each group, at most eight.
fn groups(gs: &[crate::envelope::ImpactGroup], floor: &str) -> String {
    let mut shown: Vec<String> = gs
        .iter()
        .take(8)
        .map(|g| format!("{} {floor}{}", g.name, g.functions))
        .collect();
    if gs.len() > 8 {
        shown.push(format!("… {} more", gs.len() - 8));
    }
    shown.join(", ")
}

/// change_impact: a summary line, the groups, then one row per affected function.
pub fn impact(i: &Impact, out: &mut String) -> usize {
    let floor = if i.counts_capped { "≥" } else { "" };
    let mut head = format!(
        "{}: {floor}{} direct callers, {floor}{} more within depth {} · {floor}{} call sites",
        i.symbol, i.direct_callers, i.transitive_callers, i.depth, i.call_sites
    );
    if let Some(d) = &i.defined_at {
        let _ = write!(head, " · defined {d}");
    }
    if let Some(s) = &i.subsystem {
        let _ = write!(head, " ({s})");
    }
    if let Some(e) = &i.exported {
        let _ = write!(head, " · exported: {e}");
    }
    if i.counts_capped {
        head.push_str(" · counts capped: floors, not totals");
    }
    let _ = writeln!(out, "{head}");
    if !i.subsystems.is_empty() {
        let _ = writeln!(
            out,
            "subsystems (functions): {}",
            groups(&i.subsystems, floor)
        );
        let _ = writeln!(out, "top dirs (functions): {}", groups(&i.top_dirs, floor));
    }
    for a in &i.callers {
        let name = a.function.as_deref().unwrap_or("(file scope)");
        let indent = "  ".repeat(a.level.saturating_sub(1) as usize);
        let via = match &a.via {
            Some(v) => format!(" →[{v}] {}", a.calls),
            None if a.level > 1 => format!(" → {}", a.calls),
            None => String::new(),
        };
        let more = if a.call_sites > 1 {
            format!(" (+{} calls)", a.call_sites - 1)
        } else {
            String::new()
        };
        let mut t: Vec<String> = a.subsystem.iter().cloned().collect();
        t.extend(a.exported.iter().map(|e| format!("exported: {e}")));
        t.extend(guard_tag(&a.guard));
        let undecided = if a.active == Some(None) {
            "  (config: undecided)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{} {indent}{name}{via}  {}:{}{more}{}{undecided}",
            a.level,
            a.path,
            a.line,
            tags(t)
        );
    }
    i.callers.len()
}

/// review_diff: a summary line with the totals of all pages, then each file of the page with
/// its hunks and the touched definitions under them; a line says what a cut page leaves out.
/// Returns the page's rows (hunks, files without hunks, definitions), as the footer counts them.
pub fn review(env: &Envelope, r: &Review, out: &mut String) -> usize {
    let not = if r.hunks_not_applied > 0 {
        format!(" ({} do not apply)", r.hunks_not_applied)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{} files, {} hunks{not} · {} definitions touched",
        r.files_total, r.hunks, r.definitions_total
    );
    let mut defs = r.definitions.iter().peekable();
    for f in &r.files {
        review_file_line(f, out);
        // Definitions at the top of the page whose hunk an earlier page showed.
        let mut earlier: Option<&str> = None;
        while let Some(d) =
            defs.next_if(|d| holds(f, d) && f.hunks.first().is_none_or(|h| h.hunk != d.hunk))
        {
            if earlier != Some(d.hunk.as_str()) {
                let _ = writeln!(out, "  @@ {} @@ (on an earlier page)", d.hunk);
                earlier = Some(d.hunk.as_str());
            }
            touched_line(d, out);
        }
        for h in &f.hunks {
            let mut status = h.applies.to_string();
            if h.offset != 0 {
                let _ = write!(status, " at offset {:+}", h.offset);
            }
            if let Some(n) = &h.note {
                let _ = write!(status, ": {n}");
            }
            let _ = writeln!(out, "  @@ {} @@ {status}", h.hunk);
            while let Some(d) = defs.next_if(|d| holds(f, d) && d.hunk == h.hunk) {
                touched_line(d, out);
            }
        }
    }
    let hunks: usize = r.files.iter().map(|f| f.hunks.len()).sum();
    if env.truncated || env.offset > 0 {
        let _ = writeln!(
            out,
            "cut: this page has {hunks} of {} hunks and {} of {} definitions, in {} of {} files",
            r.hunks,
            r.definitions.len(),
            r.definitions_total,
            r.files.len(),
            r.files_total
        );
    }
    let bare = r
        .files
        .iter()
        .filter(|f| f.hunks_total == 0 || f.error.is_some())
        .count();
    hunks + bare + r.definitions.len()
}

/// True when `d` is a definition of file `f` (a renamed file's are under its old path while
/// the tree has that one).
fn holds(f: &ReviewFile, d: &Touched) -> bool {
    d.path == f.path || f.old_path.as_deref() == Some(d.path.as_str())
}

/// `renamed NEW (from OLD), binary  [SUBSYSTEM]`, and why it is not reviewed.
fn review_file_line(f: &ReviewFile, out: &mut String) {
    let renamed = f
        .old_path
        .as_ref()
        .map(|o| format!(" (from {o})"))
        .unwrap_or_default();
    let sub = f
        .subsystem
        .as_ref()
        .map(|s| format!("  [{s}]"))
        .unwrap_or_default();
    let binary = if f.binary { ", binary" } else { "" };
    let _ = writeln!(out, "{} {}{renamed}{binary}{sub}", f.status, f.path);
    if let Some(e) = &f.error {
        let _ = writeln!(out, "  not reviewed: {e}");
    }
}

/// `    CHANGE KIND NAME  line N  [#if G; N callers; SUBSYSTEMS]`.
fn touched_line(d: &Touched, out: &mut String) {
    let mut t: Vec<String> = Vec::new();
    t.extend(guard_tag(&d.guard));
    if let Some(c) = d.callers {
        t.push(format!("{c} callers"));
    }
    if !d.subsystems.is_empty() {
        t.push(d.subsystems.join(", "));
    }
    let _ = writeln!(
        out,
        "    {} {} {}  line {}{}",
        d.change,
        d.kind,
        d.symbol,
        d.line,
        tags(t)
    );
}

/// compare_versions: `SYMBOL: A → B`, a line per definition pair with what changed and the
/// body's diff indented, the export in each, and the callers added and removed.
pub(super) fn compare(c: &crate::envelope::Comparison, out: &mut String) -> usize {
    let name = |r: &Option<crate::envelope::RevName>| crate::envelope::RevName::label(r.as_ref());
    let _ = writeln!(out, "{}: {} → {}", c.symbol, name(&c.a), name(&c.b));
    let loc = |d: &Option<crate::envelope::DefAt>| match d {
        Some(d) => format!("{}:{}", d.path, d.line),
        None => "-".to_string(),
    };
    for d in &c.definitions {
        let kind =
            d.a.as_ref()
                .or(d.b.as_ref())
                .and_then(|x| x.kind.clone())
                .unwrap_or_default();
        let what = if d.changed.is_empty() {
            String::new()
        } else {
            format!("  changed: {}", d.changed.join(", "))
        };
        let _ = writeln!(
            out,
            "{:<8} {kind} {} → {}{what}",
            d.status,
            loc(&d.a),
            loc(&d.b)
        );
        for (label, side) in [("was", &d.a), ("now", &d.b)] {
            if d.changed.contains(&"signature") || d.changed.contains(&"guard") {
                if let Some(x) = side {
                    let guard = x.guard.as_ref().map(|g| g.join(" && ")).unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "  {label}: {}{}",
                        x.signature.as_deref().unwrap_or(""),
                        if guard.is_empty() {
                            String::new()
                        } else {
                            format!("  [#if {guard}]")
                        }
                    );
                }
            }
        }
        if let Some(diff) = &d.diff {
            for line in diff.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    let export = |e: &Option<crate::envelope::Export>| match e {
        Some(e) => e.macro_name.clone(),
        None => "not exported".to_string(),
    };
    let [ea, eb] = &c.exported;
    if ea != eb || ea.is_some() {
        let _ = writeln!(out, "export: {} → {}", export(ea), export(eb));
    }
    let k = &c.callers;
    let _ = writeln!(
        out,
        "callers: {} → {} call sites; {} callers added, {} removed{}",
        k.a_total,
        k.b_total,
        k.added_total,
        k.removed_total,
        if k.complete {
            ""
        } else {
            " (of the first 1000 call sites of each)"
        }
    );
    let list = |v: &[crate::envelope::Caller]| -> String {
        v.iter()
            .map(|c| {
                format!(
                    "{} ({})",
                    c.caller.as_deref().unwrap_or("(file scope)"),
                    c.path
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (label, shown, total) in [
        ("added", &k.added, k.added_total),
        ("removed", &k.removed, k.removed_total),
    ] {
        if shown.is_empty() {
            continue;
        }
        let more = match total as usize - shown.len() {
            0 => String::new(),
            n => format!(", … {n} more"),
        };
        let _ = writeln!(out, "  {label}: {}{more}", list(shown));
    }
    c.definitions.len()
}

/// symbol_history: a line per commit, newest first: `SHA DATE AUTHOR +A -R PATH  SUBJECT`, a
/// move as `FROM → PATH`, the introducing commit marked. The author and subject are git's
/// bytes: their control characters are escaped (the paths are escaped as knav keeps them).
pub(super) fn history(h: &[crate::envelope::HistoryEntry], out: &mut String) -> usize {
    use knav_index::git::Quoted;
    for e in h {
        let what = match (e.change, &e.from) {
            ("moved", Some(from)) => format!("moved {from} → {}", e.path),
            ("changed", _) => format!("+{} -{} {}", e.added, e.removed, e.path),
            (c, _) => format!("{c} {} ({} lines)", e.path, e.added.max(e.removed)),
        };
        let mark = if e.introduced { "  [introduced]" } else { "" };
        let _ = writeln!(
            out,
            "{} {} {}  {what}  {}{mark}",
            e.commit,
            e.date,
            Quoted(&e.author),
            Quoted(&e.subject)
        );
    }
    h.len()
}
