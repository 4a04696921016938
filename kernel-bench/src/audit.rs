//! The pointer-call audit (issue 34): each call through a function pointer of
//! `pointer-audit.tsv`, judged by reading the source, asked of knav again
//! (`knav callers FUNCTION --include-uncertain`); the precision of what knav now reports, per
//! certainty and half: judged right among the audited edges it still gives with that certainty.

use std::collections::HashMap;
use std::process::Command;

/// The judged edges: function, call site, via, certainty, registered at, half, verdict, reason.
const AUDIT: &str = include_str!("../pointer-audit.tsv");

/// knav's precision on one certainty and half.
#[derive(Clone, Debug, PartialEq)]
pub struct Precision {
    /// `type`, `tag` or `field-name`, as knav now reports the edge.
    pub certainty: String,
    /// `tune` or `held`.
    pub half: String,
    /// Audited edges knav reports with that certainty.
    pub reported: usize,
    /// Of them, judged right.
    pub right: usize,
}

/// A judged edge.
struct Edge<'a> {
    function: &'a str,
    site: &'a str,
    half: &'a str,
    right: bool,
}

fn edges() -> Vec<Edge<'static>> {
    AUDIT
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("function\t") && !l.is_empty())
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Some(Edge {
                function: c.first()?,
                site: c.get(1)?,
                half: c.get(5)?,
                right: *c.get(6)? == "right",
            })
        })
        .collect()
}

/// Asks knav for every audited function's callers (`knav` runs knav on the tree and index)
/// and scores what it reports now. Edges knav no longer gives are counted as `dropped`.
pub fn measure(knav: &dyn Fn() -> Command) -> Result<Vec<Precision>, String> {
    let mut now: HashMap<&str, HashMap<String, String>> = HashMap::new();
    let edges = edges();
    for e in &edges {
        if now.contains_key(e.function) {
            continue;
        }
        let out = knav()
            .args([
                "callers",
                e.function,
                "--include-uncertain",
                "--limit",
                "1000",
            ])
            .args(["--format", "json"])
            .output()
            .map_err(|err| format!("knav: {err}"))?;
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|err| format!("knav callers {}: {err}", e.function))?;
        let sites = v["results"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|c| {
                        let at = format!("{}:{}", c["path"].as_str()?, c["line"]);
                        Some((at, c["certainty"].as_str().unwrap_or("direct").to_string()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        now.insert(e.function, sites);
    }
    let mut out: Vec<Precision> = Vec::new();
    for e in &edges {
        let certainty = now[e.function]
            .get(e.site)
            .cloned()
            .unwrap_or_else(|| "dropped".into());
        let row = match out
            .iter_mut()
            .find(|p| p.certainty == certainty && p.half == e.half)
        {
            Some(p) => p,
            None => {
                out.push(Precision {
                    certainty: certainty.clone(),
                    half: e.half.to_string(),
                    reported: 0,
                    right: 0,
                });
                out.last_mut().expect("just pushed")
            }
        };
        row.reported += 1;
        row.right += e.right as usize;
    }
    // Type-certain edges first, then the uncertain ones, then those no longer given.
    let order = ["type", "tag", "field-name", "direct", "dropped"];
    out.sort_by_key(|p| {
        let at = order.iter().position(|c| *c == p.certainty);
        (at.unwrap_or(order.len()), p.half == "held")
    });
    Ok(out)
}

/// The report's rows.
pub fn section(rows: &[Precision]) -> String {
    use std::fmt::Write;
    let mut o = String::from(
        "\n## Pointer calls: the audit\n\nkernel-bench/pointer-audit.tsv: 300 calls through \
         function pointers judged by reading the source (200 drawn at first, 60 field-name \
         edges drawn after guesses were limited to members one struct alone has, 40 at uses \
         of macros that call through members), asked again (`knav callers F \
         --include-uncertain`). Per certainty knav reports now (`dropped`: no longer given) \
         and half: the edges, and the share judged right (the precision). Field-name and tag \
         edges are left out of answers unless `--include-uncertain` is given.\n\n\
         | certainty | half | edges | right | precision |\n|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.0}% |",
            r.certainty,
            r.half,
            r.reported,
            r.right,
            100.0 * r.right as f64 / r.reported.max(1) as f64
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_audit_holds_300_judged_edges_in_two_halves() {
        let e = edges();
        assert_eq!(e.len(), 300);
        assert!(e.iter().all(|e| matches!(e.half, "tune" | "held")));
        assert!(AUDIT
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(1)
            .all(|l| l.split('\t').count() == 8
                && matches!(l.split('\t').nth(6), Some("right" | "wrong" | "unsure"))));
    }
}
