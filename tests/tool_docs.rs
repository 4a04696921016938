//! The documents' tool tables and the CLI against the tools the server lists: GUIDE.md's table
//! has every tool with exactly its own arguments (those every retrieval tool shares are said
//! once below it) and its CLI command, the README's group table has every group with exactly its
//! tools, and every CLI command of a tool takes exactly that tool's arguments besides the shared
//! ones (the CLI's global flags), but for those the tool says only one front end has, and the
//! guide's token table gives each group's tools and what their `tools/list` entries cost. A
//! tool or an argument added without its line in the documents, or to one front end only, or a
//! catalog grown or shrunk past its documented size, fails here.

use std::collections::BTreeSet;
use std::path::Path;

use knav::serve::tools::{catalog, catalog_names, listed_chars};
use knav::tools::{group_tools, GROUPS, SHARED_ARGS, TOOLS};

/// Arguments GUIDE.md describes once for every retrieval tool, under its table (and the
/// server's instructions once for every tool).
fn shared() -> Vec<&'static str> {
    SHARED_ARGS.iter().map(|(name, _)| *name).collect()
}

fn read(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

/// The rows of the first table after the heading line `heading`: its cells, trimmed.
fn table_after(text: &str, heading: &str) -> Vec<Vec<String>> {
    let at = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no heading {heading:?}"));
    text[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The `code` spans of `cell` outside parentheses.
fn names_in(cell: &str) -> BTreeSet<String> {
    let mut plain = String::new();
    let mut depth = 0;
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_guides_tool_table_has_every_tool_with_its_own_arguments() {
    let guide = read("GUIDE.md");
    let rows = table_after(&guide, "### Tools");
    let documented: Vec<String> = rows
        .iter()
        .map(|r| r[0].trim_matches('`').to_string())
        .collect();
    assert_eq!(
        documented,
        catalog_names(),
        "GUIDE.md's tools, in catalog order"
    );
    for (row, tool) in rows.iter().zip(catalog(&catalog_names())) {
        let schema: BTreeSet<String> = tool.input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| !shared().contains(&k.as_str()))
            .cloned()
            .collect();
        let said: BTreeSet<String> = names_in(&row[1])
            .into_iter()
            .filter(|k| !shared().contains(&k.as_str()))
            .collect();
        assert_eq!(said, schema, "GUIDE.md's arguments of {}", tool.name);
    }
    let commands: Vec<String> = rows.iter().map(|r| r[2].clone()).collect();
    let want: Vec<String> = TOOLS
        .iter()
        .map(|t| match t.command {
            Some(c) => format!("`knav {c}`"),
            None => "(MCP only)".to_string(),
        })
        .collect();
    assert_eq!(commands, want, "GUIDE.md's CLI commands, in catalog order");
}

/// The arguments of `tool` besides the shared ones, as the MCP schema lists them.
fn mcp_arguments(tool: &rmcp::model::Tool) -> BTreeSet<String> {
    tool.input_schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !shared().contains(&k.as_str()))
        .cloned()
        .collect()
}

#[test]
fn every_cli_command_takes_exactly_its_tools_arguments() {
    for (def, tool) in TOOLS.iter().zip(catalog(&catalog_names())) {
        assert_eq!(def.name, tool.name);
        let mcp = mcp_arguments(&tool);
        for only in def.mcp_only {
            assert!(
                mcp.contains(*only),
                "{}: {only} is no MCP argument",
                def.name
            );
        }
        let Some(command) = def.cli_command() else {
            assert!(
                def.command.is_none() && def.cli_only.is_empty(),
                "{}",
                def.name
            );
            continue;
        };
        let cli: BTreeSet<String> = command
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        for only in def.cli_only {
            assert!(
                cli.contains(*only),
                "{}: {only} is no CLI argument",
                def.name
            );
        }
        let cli_shared: BTreeSet<String> = cli
            .iter()
            .filter(|a| !def.cli_only.contains(&a.as_str()))
            .cloned()
            .collect();
        let mcp_shared: BTreeSet<String> = mcp
            .iter()
            .filter(|a| !def.mcp_only.contains(&a.as_str()))
            .cloned()
            .collect();
        assert_eq!(cli_shared, mcp_shared, "the arguments of {}", def.name);
    }
}

#[test]
fn the_readmes_group_table_has_every_group_with_its_tools() {
    let readme = read("README.md");
    let rows = table_after(&readme, "| group | tools (CLI command) |").into_iter();
    // The heading is the table's own first line here: its rows start after the separator.
    let rows: Vec<Vec<String>> = rows.collect();
    let groups: Vec<(String, BTreeSet<String>)> = rows
        .iter()
        .map(|r| (r[0].trim_matches('`').to_string(), names_in(&r[1])))
        .collect();
    let want: Vec<(String, BTreeSet<String>)> = GROUPS
        .iter()
        .map(|g| {
            let tools = group_tools(g).iter().map(|t| t.to_string()).collect();
            (g.to_string(), tools)
        })
        .collect();
    assert_eq!(groups, want);
}

/// Tokens (characters / 4) of `chars` characters, as GUIDE.md writes them: `1,234`.
fn tokens(chars: usize) -> String {
    let t = (chars + 2) / 4;
    if t >= 1000 {
        format!("{},{:03}", t / 1000, t % 1000)
    } else {
        t.to_string()
    }
}

/// The number a GUIDE.md cell starts with (`1,234` or `1,234, of which ...`).
fn number_in(cell: &str) -> usize {
    let digits: String = cell
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(0)
}

#[test]
fn the_guides_token_table_has_every_group_with_its_tools_and_size() {
    // The table said 18 tools, index_status in the wrong group and 3,632 tokens once the
    // list had 20 tools and cost 5,000: regenerated, it is checked here within 5%.
    let guide = read("GUIDE.md");
    let rows = table_after(&guide, "### Tool groups");
    let mut want = Vec::new();
    for g in GROUPS {
        let tools = group_tools(g);
        let chars = listed_chars(&catalog(&tools)) - r#"{"tools":[]}"#.len();
        want.push((format!("`{g}`"), tools.join(", "), tokens(chars)));
    }
    let all = catalog(&catalog_names());
    let always: Vec<&str> = TOOLS
        .iter()
        .filter(|t| t.always_load)
        .map(|t| t.name)
        .collect();
    want.push((
        format!("all ({} tools)", all.len()),
        "every tool".to_string(),
        format!(
            "{}, of which the {} alwaysLoad tools {}",
            tokens(listed_chars(&all)),
            always.len(),
            tokens(listed_chars(&catalog(&always)))
        ),
    ));
    let table: String = want
        .iter()
        .map(|(g, t, n)| format!("| {g} | {t} | {n} |\n"))
        .collect();
    assert_eq!(rows.len(), want.len(), "GUIDE.md's token table:\n{table}");
    for (row, (group, tools, size)) in rows.iter().zip(&want) {
        assert_eq!((&row[0], &row[1]), (group, tools), "want:\n{table}");
        let (said, is) = (number_in(&row[2]), number_in(size));
        assert!(
            said * 20 >= is * 19 && said * 20 <= is * 21,
            "{group} is {size} tokens, GUIDE.md says {}; want:\n{table}",
            row[2]
        );
    }
    let said_always = rows.last().unwrap()[2]
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
    let is_always = listed_chars(&catalog(&always));
    assert!(
        number_in(&said_always) * 20 >= (is_always / 4) * 19
            && number_in(&said_always) * 20 <= (is_always / 4) * 21,
        "alwaysLoad: GUIDE.md says {said_always}; want:\n{table}"
    );
}

/// The non-test code of every `.rs` file under `dirs` (paths relative to the repository):
/// each file cut at its `#[cfg(test)]` module, its `//` comments left out.
fn sources(dirs: &[&str]) -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in dirs {
        walk(&top.join(d), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
            let code: String = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            let rel = p.strip_prefix(top).unwrap().display().to_string();
            (rel, code)
        })
        .collect()
}

/// The files (besides `allowed`) whose code names at least `min` distinct words of `words`,
/// each as `prefix` + word followed by a non-identifier character.
fn listing_files(
    words: &[&str],
    prefix: &str,
    min: usize,
    allowed: &[&str],
) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for (file, code) in sources(&["src", "query/src"]) {
        if allowed.contains(&file.as_str()) {
            continue;
        }
        let named: Vec<String> = words
            .iter()
            .filter(|w| {
                let needle = format!("{prefix}{w}");
                code.match_indices(&needle).any(|(at, _)| {
                    let next = code[at + needle.len()..].chars().next().unwrap_or(' ');
                    !(next.is_ascii_alphanumeric() || next == '_')
                })
            })
            .map(|w| w.to_string())
            .collect();
        if named.len() >= min {
            found.push((file, named));
        }
    }
    found
}

/// Adding a retrieval tool touches its `Tool` entry (src/tools/), its argument type
/// (src/tools/args.rs), its `Ask` variant with its row (query/src/request.rs), its query
/// module, its rendering and a test (ARCHITECTURE.md, "Adding a tool"). A new list of every
/// question, or code that branches on tool names, elsewhere is one more place each new tool
/// must remember: it fails here, naming the file.
#[test]
fn a_tool_is_listed_in_its_entry_and_its_question_only() {
    // Every `Ask` variant, as `Ask::tool` lists them.
    let request = read("query/src/request.rs");
    let tool_fn = &request[request.find("pub fn tool(&self)").unwrap()..];
    let tool_fn = &tool_fn[..tool_fn.find("\n    }\n").unwrap()];
    let variants: Vec<&str> = tool_fn
        .split("Ask::")
        .skip(1)
        .filter_map(|s| s.split([' ', '(']).next())
        .collect();
    assert!(variants.len() >= 14, "{variants:?}");
    let lists = listing_files(
        &variants,
        "Ask::",
        4,
        &["query/src/request.rs", "src/tools/args.rs"],
    );
    assert!(
        lists.is_empty(),
        "these files list the questions (Ask variants), a place each new tool would need: \
         {lists:?}; say it in the question's row (Ask::shape) or its Tool entry instead"
    );
    // Branching on a tool's name: allowed where one tool's own output is made (grepout: rg's
    // lines of search_text; cliwords: the arguments of a `next:` hint; the renderer and the
    // resolver's special cases of one tool each).
    let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    let allowed = [
        "src/cliwords.rs",
        "src/grepout.rs",
        "query/src/render/text.rs",
        "query/src/request.rs",
    ];
    for prefix in ["== \"", "!= \""] {
        let quoted: Vec<String> = names.iter().map(|n| format!("{n}\"")).collect();
        let quoted: Vec<&str> = quoted.iter().map(String::as_str).collect();
        let branches = listing_files(&quoted, prefix, 1, &allowed);
        assert!(
            branches.is_empty(),
            "these files branch on a tool's name ({prefix}…): {branches:?}; give the Tool entry \
             (src/tools/mod.rs) a field instead"
        );
    }
    let arms: Vec<String> = names.iter().map(|n| format!("{n}\" =>")).collect();
    let arms: Vec<&str> = arms.iter().map(String::as_str).collect();
    let matches = listing_files(&arms, "\"", 2, &allowed);
    assert!(
        matches.is_empty(),
        "these files match on tool names: {matches:?}; give the Tool entry (src/tools/mod.rs) \
         a field instead"
    );
}
