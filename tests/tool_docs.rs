//! The documents' tool tables against the tools the server lists: GUIDE.md's table has every
//! tool with exactly its own arguments (those every retrieval tool shares are said once below
//! it), and the README's group table has every group with exactly its tools. A tool or an
//! argument added to the catalog without its line in the documents fails here.

use std::collections::BTreeSet;
use std::path::Path;

use knav::serve::tools::{catalog, catalog_names, GROUPS};

/// Arguments GUIDE.md describes once for every retrieval tool, under its table.
const SHARED: &[&str] = &[
    "root",
    "format",
    "limit",
    "offset",
    "path_prefix",
    "active_config",
];

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
            .filter(|k| !SHARED.contains(&k.as_str()))
            .cloned()
            .collect();
        let said: BTreeSet<String> = names_in(&row[1])
            .into_iter()
            .filter(|k| !SHARED.contains(&k.as_str()))
            .collect();
        assert_eq!(said, schema, "GUIDE.md's arguments of {}", tool.name);
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
        .map(|(g, tools)| (g.to_string(), tools.iter().map(|t| t.to_string()).collect()))
        .collect();
    assert_eq!(groups, want);
}
