//! How well search_code and search_docs answer questions in words (issue 32): the questions of
//! `search-questions.tsv` and `docs-questions.tsv` asked one by one, and per tool and half
//! (`tune`, `held`) the share answered first (top-1), in the first ten (top-10) and the mean
//! reciprocal rank of the first answer in the ten (MRR). The held-out half's misses are never
//! printed: it is only ever run, never studied.

use std::path::Path;
use std::process::Command;

/// search_code's questions: question, answers, where, half, area.
const CODE_QUESTIONS: &str = include_str!("../search-questions.tsv");
/// search_docs' questions: question, answer files, half.
const DOCS_QUESTIONS: &str = include_str!("../docs-questions.tsv");

/// One tool's score on one half.
#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    /// `search_code` or `search_docs`.
    pub tool: &'static str,
    /// `tune` or `held`.
    pub half: String,
    /// Questions asked.
    pub asked: usize,
    /// Answered first.
    pub top1: usize,
    /// Answered in the first ten.
    pub top10: usize,
    /// Mean reciprocal rank (0 for a question not answered in the ten).
    pub mrr: f64,
}

/// A question: its words, what answers it, its half.
struct Question<'a> {
    words: &'a str,
    answers: Vec<&'a str>,
    half: &'a str,
}

/// The questions of a tab-separated file whose half is column `half_col`.
fn questions(tsv: &str, half_col: usize) -> Vec<Question<'_>> {
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("question\t") && !l.is_empty())
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            Some(Question {
                words: cols.first()?,
                answers: cols.get(1)?.split_whitespace().collect(),
                half: cols.get(half_col)?,
            })
        })
        .collect()
}

/// The rank (0-based) of the first answer among the ten results of `knav <command>` for the
/// question, as `field` of each result names it; `None` when none is in the ten.
fn rank(knav: &mut Command, q: &Question<'_>, field: &str) -> Result<Option<usize>, String> {
    let out = knav
        .args(q.words.split_whitespace())
        .args(["--limit", "10", "--format", "json"])
        .output()
        .map_err(|e| format!("knav: {e}"))?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("knav's answer to `{}` is not JSON: {e}", q.words))?;
    let names: Vec<&str> = v["results"]
        .as_array()
        .map(|r| r.iter().filter_map(|x| x[field].as_str()).collect())
        .unwrap_or_default();
    Ok(names.iter().position(|n| q.answers.contains(n)))
}

/// Asks every question of both files with `knav` (a command that runs knav on the tree and
/// index, `--root` and `--index-dir` given), and scores each tool on each half. Prints each
/// miss of the tuning half to `log`.
pub fn measure(
    knav: &dyn Fn() -> Command,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Score>, String> {
    let mut out = Vec::new();
    for (tool, command, tsv, half_col, field) in [
        ("search_code", "search", CODE_QUESTIONS, 3, "symbol"),
        ("search_docs", "docs", DOCS_QUESTIONS, 2, "path"),
    ] {
        for half in ["tune", "held"] {
            let mut s = Score {
                tool,
                half: half.into(),
                asked: 0,
                top1: 0,
                top10: 0,
                mrr: 0.0,
            };
            for q in questions(tsv, half_col).iter().filter(|q| q.half == half) {
                let mut cmd = knav();
                cmd.arg(command);
                let r = rank(&mut cmd, q, field)?;
                s.asked += 1;
                match r {
                    Some(r) => {
                        s.top1 += (r == 0) as usize;
                        s.top10 += 1;
                        s.mrr += 1.0 / (r + 1) as f64;
                    }
                    None if half == "tune" => log(&format!("{tool} miss (tune): {}", q.words)),
                    None => {}
                }
            }
            s.mrr /= s.asked.max(1) as f64;
            out.push(s);
        }
    }
    Ok(out)
}

/// The report's rows: per tool and half, asked, top-1, top-10 and MRR.
pub fn section(scores: &[Score]) -> String {
    use std::fmt::Write;
    let mut o = String::from(
        "\n## Search quality\n\nkernel-bench/search-questions.tsv and docs-questions.tsv, asked \
         with `--limit 10`: the share of questions whose answer is first (top-1) and in the \
         first ten (top-10), and the mean reciprocal rank. `held` questions are never tuned on.\n\n\
         | tool | half | questions | top-1 | top-10 | MRR |\n|---|---|---|---|---|---|\n",
    );
    for s in scores {
        let pct = |n: usize| 100.0 * n as f64 / s.asked.max(1) as f64;
        let _ = writeln!(
            o,
            "| {} | {} | {} | {:.0}% ({}) | {:.0}% ({}) | {:.3} |",
            s.tool,
            s.half,
            s.asked,
            pct(s.top1),
            s.top1,
            pct(s.top10),
            s.top10,
            s.mrr
        );
    }
    o
}

/// True when `tree` looks like the Linux 6.12 tree the questions were written for.
pub fn fits(tree: &Path) -> bool {
    tree.join("mm/oom_kill.c").is_file() && tree.join("kernel/fork.c").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_files_hold_150_code_and_40_docs_questions_split_in_halves() {
        let code = questions(CODE_QUESTIONS, 3);
        assert!(code.len() >= 150, "{}", code.len());
        let held = code.iter().filter(|q| q.half == "held").count();
        assert!(held >= 75, "{held} held-out questions");
        assert!(code.iter().all(|q| matches!(q.half, "tune" | "held")));
        assert!(code.iter().all(|q| !q.answers.is_empty()));
        let docs = questions(DOCS_QUESTIONS, 2);
        assert_eq!(docs.len(), 40);
        assert_eq!(docs.iter().filter(|q| q.half == "held").count(), 20);
        assert!(docs
            .iter()
            .all(|q| q.answers.iter().all(|a| a.starts_with("Documentation/"))));
    }
}
