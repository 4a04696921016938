//! The MCP prompts (prompts/list, prompts/get): ready-made tasks that tell an agent which knav
//! tools to call, in which order: explore_subsystem (a path), assess_change (a symbol) and
//! review_patch (a diff).

use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};

use crate::envelope::quote;

/// Bytes a prompt argument may have (a diff; a path or a symbol is far shorter).
const MAX_ARGUMENT: usize = 1 << 20;

/// One prompt: its name, what it is for, its one argument and its text with `{ARG}` in it.
struct Spec {
    name: &'static str,
    description: &'static str,
    argument: &'static str,
    argument_description: &'static str,
    text: &'static str,
}

const SPECS: &[Spec] = &[
    Spec {
        name: "explore_subsystem",
        description: "Map a kernel directory: its main definitions, entry points, exported API \
                      and MAINTAINERS entry.",
        argument: "path",
        argument_description: "a directory relative to the root, e.g. fs/ext4",
        text: "Explore the kernel subsystem under {ARG} with the knav tools, not by reading \
files whole.\n\
1. list_file_symbols with file_path \"{ARG}/\": its files with their lines and definition counts \
(page with offset).\n\
2. list_file_symbols on the few largest files: their definitions with line ranges (from: \"end\" \
for the tail of a long file).\n\
3. Entry points: search_text for \"module_init|late_initcall|subsys_initcall|SYSCALL_DEFINE|\
__setup\" with paths [\"{ARG}\"].\n\
4. Exported API: search_text for \"EXPORT_SYMBOL\" with paths [\"{ARG}\"]; find_definition on the \
main ones for their signatures and #if guards.\n\
5. Maintainers: search_text for \"^F:\\s+{ARG}\" with paths [\"MAINTAINERS\"] and context 10.\n\
6. For the central functions: find_callees, find_callers and get_symbol_body.\n\
Report: what the subsystem does, its main data structures, entry points, exported API, and its \
maintainers and list.",
    },
    Spec {
        name: "assess_change",
        description: "What changing one symbol affects: callers by subsystem, guards, exports.",
        argument: "symbol",
        argument_description: "a C identifier, e.g. vfs_read",
        text: "Assess what changing {ARG} would affect, with the knav tools.\n\
1. find_definition for {ARG}: its definitions, their #if guards and its export status.\n\
2. change_impact for {ARG} (depth 2): callers and their callers grouped by subsystem; a count \
marked as capped is a floor, not a total. Without change_impact, find_callers for {ARG} and \
then for its busiest callers.\n\
3. find_references for {ARG}: uses that are not calls (function pointers, ops tables, exports).\n\
4. get_symbol_body for {ARG} and for the callers that depend most on its behaviour.\n\
5. For each guard, whether the configurations that matter build it (active_config).\n\
Report: who depends on {ARG}, in which subsystems, whether modules use it through its export, \
and the callers most at risk.",
    },
    Spec {
        name: "review_patch",
        description: "Review a unified diff against the indexed tree: touched definitions, their \
                      callers and what to check.",
        argument: "diff",
        argument_description: "a unified diff (git diff or a mailed patch)",
        text: "Review this patch against the indexed tree with the knav tools.\n\
1. review_diff with the diff below: the definitions each hunk touches (added and removed ones \
too), their #if guards, direct caller counts and subsystems; hunks that do not apply to the tree \
are reported, not guessed.\n\
2. For each touched function: get_symbol_body for the current code; find_callers when its \
signature, return values or locking change; change_impact when it is exported or widely called.\n\
3. Check: error paths and cleanup, locking, every #if branch the change sits under, callers' \
expectations, EXPORT_SYMBOL users, Kconfig dependencies.\n\
Report findings per hunk with path:line.\n\n\
```diff\n{ARG}\n```",
    },
];

/// The prompts as MCP lists them.
pub fn list() -> Vec<Prompt> {
    SPECS
        .iter()
        .map(|s| {
            let arg = PromptArgument::new(s.argument)
                .with_description(s.argument_description)
                .with_required(true);
            Prompt::new(s.name, Some(s.description), Some(vec![arg]))
        })
        .collect()
}

/// Prompt `name` rendered with `arguments`; an error names what is wrong.
pub fn get(name: &str, arguments: Option<&JsonObject>) -> Result<GetPromptResult, String> {
    let Some(spec) = SPECS.iter().find(|s| s.name == name) else {
        let names: Vec<&str> = SPECS.iter().map(|s| s.name).collect();
        return Err(format!(
            "unknown prompt {}; the prompts are {}",
            quote(name),
            names.join(", ")
        ));
    };
    let value = arguments
        .and_then(|a| a.get(spec.argument))
        .and_then(|v| v.as_str())
        .map(str::trim)
        // `fs/ext4/` and `fs/ext4` are one directory.
        .map(|v| {
            if spec.argument == "path" {
                v.trim_end_matches('/')
            } else {
                v
            }
        })
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("{name}: argument '{}' is required", spec.argument))?;
    if value.len() > MAX_ARGUMENT {
        return Err(format!(
            "{name}: argument '{}' is {} bytes long, more than {MAX_ARGUMENT}",
            spec.argument,
            value.len()
        ));
    }
    let text = spec.text.replace("{ARG}", value);
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(spec.description),
    )
}
