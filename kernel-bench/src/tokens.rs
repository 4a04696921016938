//! Agent-sized answers: each MCP tool's default page (no `limit` given) for the questions an
//! agent typically asks of a kernel, in characters and tokens (bytes / 4, as the report's
//! other token figures), with the answer's total and whether the next page is said.

use std::fmt::Write as _;
use std::path::Path;

/// The most tokens a default page may take.
pub const BUDGET: usize = 2000;

/// The questions: `(label, MCP tool, MCP arguments)`; `{diff}` stands for a small diff of
/// fs/read_write.c made from the tree ([`small_diff`]).
pub const QUESTIONS: &[(&str, &str, &str)] = &[
    (
        "def vfs_read",
        "find_definition",
        r#"{"symbol":"vfs_read"}"#,
    ),
    ("def kmalloc", "find_definition", r#"{"symbol":"kmalloc"}"#),
    ("def current", "find_definition", r#"{"symbol":"current"}"#),
    ("refs kmalloc", "find_references", r#"{"symbol":"kmalloc"}"#),
    (
        "callers vfs_read",
        "find_callers",
        r#"{"symbol":"vfs_read"}"#,
    ),
    (
        "callers kfree_skb",
        "find_callers",
        r#"{"symbol":"kfree_skb"}"#,
    ),
    (
        "callees vfs_read",
        "find_callees",
        r#"{"symbol":"vfs_read"}"#,
    ),
    (
        "body of a big function (__schedule)",
        "get_symbol_body",
        r#"{"symbol":"__schedule"}"#,
    ),
    (
        "body of a 563-line function (copy_process)",
        "get_symbol_body",
        r#"{"symbol":"copy_process"}"#,
    ),
    (
        "grep kmalloc_array",
        "search_text",
        r#"{"pattern":"kmalloc_array"}"#,
    ),
    (
        "grep a regex",
        "search_text",
        r#"{"pattern":"spin_lock_irq(save)?\\(&"}"#,
    ),
    (
        "search allocate zeroed memory for an array",
        "search_code",
        r#"{"query":"allocate zeroed memory for an array"}"#,
    ),
    (
        "symbols of a big file (mm/memory.c)",
        "list_file_symbols",
        r#"{"file_path":"mm/memory.c"}"#,
    ),
    (
        "impact vfs_read",
        "change_impact",
        r#"{"symbol":"vfs_read"}"#,
    ),
    ("review a small diff", "review_diff", r#"{"diff":"{diff}"}"#),
    (
        "docs out of memory killer",
        "search_docs",
        r#"{"query":"out of memory killer"}"#,
    ),
    (
        "find ext4 read iter",
        "search_symbols",
        r#"{"query":"ext4 read iter"}"#,
    ),
    (
        "files ext4 inode",
        "search_files",
        r#"{"query":"ext4 inode"}"#,
    ),
];

/// One question's default page.
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// The question.
    pub label: &'static str,
    /// The tool asked.
    pub tool: &'static str,
    /// Characters of the text answer.
    pub chars: usize,
    /// Tokens: its bytes / 4.
    pub tokens: usize,
    /// The answer's total results (its JSON form's `total`).
    pub total: u64,
    /// The page holds fewer than the total.
    pub truncated: bool,
    /// A truncated page says where the next one starts (`offset=`); true when whole.
    pub next_said: bool,
    /// Why it was not measured.
    pub failed: Option<String>,
}

/// A one-hunk diff of fs/read_write.c under `tree` adding a comment after `vfs_read`'s first
/// line, JSON-escaped; `None` when the tree has no such function.
pub fn small_diff(tree: &Path) -> Option<String> {
    let text = std::fs::read_to_string(tree.join("fs/read_write.c")).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let k = lines
        .iter()
        .position(|l| l.starts_with("ssize_t vfs_read("))?;
    let ctx = lines.get(k..k + 3)?;
    let mut d = format!(
        "--- a/fs/read_write.c\n+++ b/fs/read_write.c\n@@ -{},3 +{},4 @@\n {}\n {}\n",
        k + 1,
        k + 1,
        ctx[0],
        ctx[1]
    );
    let _ = writeln!(d, "+\t/* reviewed */\n {}", ctx[2]);
    let quoted = serde_json::Value::String(d).to_string();
    Some(quoted[1..quoted.len() - 1].to_string())
}

/// The text of an MCP `tools/call` response line, and whether it is an error.
fn text_of(response: &str) -> Result<String, String> {
    let v: serde_json::Value = serde_json::from_str(response).map_err(|e| e.to_string())?;
    let r = &v["result"];
    let text = r["content"][0]["text"]
        .as_str()
        .ok_or_else(|| format!("no text in {response}"))?;
    if r["isError"] == true {
        return Err(text.to_string());
    }
    Ok(text.to_string())
}

/// Each of [`QUESTIONS`] asked through `call(tool, arguments)` (which answers the response
/// line), in text and in JSON, for the tree at `tree`.
pub fn measure(
    tree: &Path,
    call: &mut dyn FnMut(&str, &str) -> Result<String, String>,
) -> Vec<Page> {
    let diff = small_diff(tree).unwrap_or_default();
    QUESTIONS
        .iter()
        .map(|&(label, tool, args)| {
            let args = args.replace("{diff}", &diff);
            let mut page = Page {
                label,
                tool,
                ..Page::default()
            };
            let asked = (|| {
                let text = text_of(&call(tool, &args)?)?;
                let json_args = format!(r#"{{"format":"json",{}"#, &args[1..]);
                let json: serde_json::Value =
                    serde_json::from_str(&text_of(&call(tool, &json_args)?)?)
                        .map_err(|e| e.to_string())?;
                Ok::<_, String>((text, json))
            })();
            match asked {
                Ok((text, json)) => {
                    page.chars = text.chars().count();
                    page.tokens = text.len().div_ceil(4);
                    page.total = json["total"].as_u64().unwrap_or(0);
                    page.truncated = json["truncated"] == true;
                    page.next_said = !page.truncated || text.contains("offset=");
                }
                Err(e) => page.failed = Some(e),
            }
            page
        })
        .collect()
}

/// The report's section: a row per question.
pub fn section(o: &mut String, pages: &[Page]) {
    if pages.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n## Answer size over MCP (default page)\n");
    let _ = writeln!(
        o,
        "Each tool's default page (no `limit`) through `knav serve`, as an agent reads it: \
         characters and tokens (bytes / 4) of the text answer, the total it counts, and whether \
         a page short of the total says where the next starts. Budget: {BUDGET} tokens.\n"
    );
    let _ = writeln!(
        o,
        "| question | tool | characters | tokens | total | next page said |"
    );
    let _ = writeln!(o, "|---|---|---|---|---|---|");
    for p in pages {
        match &p.failed {
            Some(e) => {
                let e: String = e.chars().take(80).collect();
                let _ = writeln!(o, "| {} | {} | failed: {e} | | | |", p.label, p.tool);
            }
            None => {
                let over = if p.tokens > BUDGET { " (over)" } else { "" };
                let next = match (p.truncated, p.next_said) {
                    (false, _) => "whole",
                    (true, true) => "yes",
                    (true, false) => "NO",
                };
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {}{over} | {} | {next} |",
                    p.label, p.tool, p.chars, p.tokens, p.total
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_question_is_a_json_object_of_arguments() {
        for (label, tool, args) in QUESTIONS {
            let args = args.replace("{diff}", "x");
            let v: serde_json::Value =
                serde_json::from_str(&args).unwrap_or_else(|e| panic!("{label}: {args}: {e}"));
            assert!(v.is_object(), "{label}");
            assert!(!tool.is_empty() && !tool.contains(' '), "{label}");
        }
    }

    #[test]
    fn the_small_diff_adds_one_line_after_vfs_reads_first_two() {
        let dir = std::env::temp_dir().join(format!("kb-tokens-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("fs")).unwrap();
        std::fs::write(
            dir.join("fs/read_write.c"),
            "int x;\nssize_t vfs_read(struct file *f)\n{\n\treturn 0;\n}\n",
        )
        .unwrap();
        let d = small_diff(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let d: String = serde_json::from_str(&format!("\"{d}\"")).unwrap();
        assert_eq!(
            d,
            "--- a/fs/read_write.c\n+++ b/fs/read_write.c\n@@ -2,3 +2,4 @@\n \
             ssize_t vfs_read(struct file *f)\n {\n+\t/* reviewed */\n \treturn 0;\n"
        );
    }

    #[test]
    fn a_page_over_the_budget_or_without_its_next_offset_is_flagged() {
        let pages = [
            Page {
                label: "a",
                tool: "t",
                chars: 9000,
                tokens: 2250,
                total: 300,
                truncated: true,
                next_said: false,
                failed: None,
            },
            Page {
                label: "b",
                tool: "t",
                chars: 40,
                tokens: 10,
                total: 1,
                ..Page::default()
            },
        ];
        let mut o = String::new();
        section(&mut o, &pages);
        assert!(
            o.contains("| a | t | 9000 | 2250 (over) | 300 | NO |"),
            "{o}"
        );
        assert!(o.contains("| b | t | 40 | 10 | 1 | whole |"), "{o}");
    }
}
