//! The documents' tool tables and the CLI against the tools the server lists: GUIDE.md's table
//! has every tool with exactly its own arguments (those every retrieval tool shares are said
//! once below it) and its CLI command, the README's group table has every group with exactly its
//! tools, and every CLI command of a tool takes exactly that tool's arguments besides the shared
//! ones (the CLI's global flags), but for those the tool says only one front end has. A tool or
//! an argument added without its line in the documents, or to one front end only, fails here.

use std::collections::BTreeSet;
use std::path::Path;

use knav::serve::tools::{catalog, catalog_names};
use knav::tools::{group_tools, GROUPS, TOOLS};

/// Arguments GUIDE.md describes once for every retrieval tool, under its table.
const SHARED: &[&str] = &[
    "root",
    "format",
    "limit",
    "offset",
    "path_prefix",
    "active_config",
    "rev",
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
        .filter(|k| !SHARED.contains(&k.as_str()))
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
