//! `knav lsp`'s symbol requests on the fixture tree, over its wire: hover (declaration, place,
//! guard, what the configured `.config` builds, export, the comment above), the outline of a
//! file (nested or flat, in a buffer with unsaved edits), the workspace's symbols, and
//! implementation (the functions stored in an ops table's member).

mod common;
use common::fixture;
use common::lsp::{at, places, uri, Lsp};
use serde_json::{json, Value};

/// The hover's markdown at `line`, `ch` (0-based) of `path`.
fn hover_text(lsp: &mut Lsp, root: &std::path::Path, path: &str, line: u32, ch: u32) -> String {
    let h = lsp.result("textDocument/hover", at(root, path, line, ch));
    assert_eq!(h["contents"]["kind"], "markdown", "{h}");
    h["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn hover_shows_the_declaration_its_place_its_export_and_the_other_definitions() {
    let t = fixture("lsp-hover");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // fs/read_write.c:29 `ssize_t kernel_read(...)`, the cursor on `kernel_read`.
    let h = lsp.result("textDocument/hover", at(&t.root, "fs/read_write.c", 28, 10));
    assert_eq!(
        h["range"],
        json!({"start": {"line": 28, "character": 8}, "end": {"line": 28, "character": 19}})
    );
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(
        text.starts_with(
            "```c\nssize_t kernel_read(struct file *file, void *buf, size_t count, loff_t *pos)\n```\n"
        ),
        "{text}"
    );
    assert!(text.contains("function at `fs/read_write.c:29`"), "{text}");
    assert!(
        text.contains("exported: `EXPORT_SYMBOL` at `fs/read_write.c:33`"),
        "{text}"
    );
    // The prototype in include/linux/fs.h.
    assert!(text.contains("1 other definition\n"), "{text}");
    // No configuration set: nothing said of it.
    assert!(!text.contains(".config"), "{text}");
    // vfs_read is not exported.
    let text = hover_text(&mut lsp, &t.root, "fs/ext2/file.c", 5, 10);
    assert!(text.contains("function at `fs/read_write.c:20`"), "{text}");
    assert!(text.contains("\nnot exported\n"), "{text}");
}

#[test]
fn hover_says_whether_the_configured_config_builds_it_and_why_not() {
    let t = fixture("lsp-hover-config");
    let mut lsp = Lsp::start(&t.root, json!({"activeConfig": ".config"}));
    // fs/read_write.c:48 `ssize_t compat_read(...)` under `#ifdef CONFIG_COMPAT`, not set.
    let text = hover_text(&mut lsp, &t.root, "fs/read_write.c", 47, 10);
    assert!(text.contains("function at `fs/read_write.c:48`"), "{text}");
    assert!(text.contains("under `#if CONFIG_COMPAT`"), "{text}");
    assert!(
        text.contains(
            "**not built** by the configured `.config`: #if CONFIG_COMPAT: CONFIG_COMPAT is not set"
        ),
        "{text}"
    );
    assert!(
        text.contains("exported: `EXPORT_SYMBOL_GPL` at `fs/read_write.c:52`"),
        "{text}"
    );
    let text = hover_text(&mut lsp, &t.root, "fs/ext2/file.c", 5, 10);
    assert!(
        text.contains("\nbuilt by the configured `.config`\n"),
        "{text}"
    );
}

#[test]
fn hover_shows_the_first_line_of_the_kerneldoc_comment() {
    let t = fixture("lsp-hover-doc");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // include/linux/pageflags_defs.h:26, the cursor on `folio_test_large`.
    let text = hover_text(&mut lsp, &t.root, "include/linux/pageflags_defs.h", 25, 25);
    assert!(
        text.contains("\n---\nfolio_test_large() - Does this folio contain more than one page?\n"),
        "{text}"
    );
    // Without a comment above: no such part.
    let text = hover_text(&mut lsp, &t.root, "fs/ext2/file.c", 5, 10);
    assert!(!text.contains("\n---\nssize"), "{text}");
    // On a blank line: nothing.
    let h = lsp.result("textDocument/hover", at(&t.root, "fs/read_write.c", 46, 0));
    assert_eq!(h, Value::Null);
}

/// `(name, kind, start line, selection start character)` of each symbol of `v`.
fn outline(v: &Value) -> Vec<(String, u64, u64, u64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["kind"].as_u64().unwrap(),
                s["range"]["start"]["line"].as_u64().unwrap(),
                s["selectionRange"]["start"]["character"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn doc_params(root: &std::path::Path, path: &str) -> Value {
    json!({"textDocument": {"uri": uri(&root.join(path))}})
}

#[test]
fn document_symbols_nest_members_inside_their_struct() {
    let t = fixture("lsp-outline");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let v = lsp.result(
        "textDocument/documentSymbol",
        doc_params(&t.root, "fs/streams/stream.h"),
    );
    assert_eq!(
        outline(&v),
        vec![
            ("_LINUX_STREAM_H".to_string(), 14, 2, 8),
            ("stream_operations".to_string(), 23, 6, 7),
            ("stream".to_string(), 23, 12, 7),
            ("sound_ops".to_string(), 23, 18, 7),
            ("DEFINE_STREAM_OPS".to_string(), 12, 22, 8),
        ]
    );
    let ops = &v[1];
    assert_eq!(ops["range"]["end"], json!({"line": 10, "character": 2}));
    assert_eq!(
        outline(&ops["children"]),
        vec![
            ("open".to_string(), 8, 7, 7),
            ("fetch".to_string(), 8, 8, 7),
            ("release".to_string(), 8, 9, 8),
        ]
    );
    assert_eq!(
        ops["children"][1]["detail"],
        "int (*)(struct stream *,char *,int)"
    );
    // sound_ops has its own `fetch`.
    assert_eq!(
        outline(&v[3]["children"]),
        vec![("fetch".to_string(), 8, 19, 7)]
    );
}

#[test]
fn document_symbols_are_flat_for_a_client_without_the_tree() {
    let t = fixture("lsp-outline-flat");
    let mut lsp = Lsp::spawn(&t.root, &[]);
    let init = lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&t.root), "capabilities": {}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    lsp.notify("initialized", json!({}));
    lsp.wait_ready(&t.root);
    let v = lsp.result(
        "textDocument/documentSymbol",
        doc_params(&t.root, "fs/streams/stream.h"),
    );
    let rows: Vec<(String, u64, Option<String>)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["location"]["range"]["start"]["line"].as_u64().unwrap(),
                s["containerName"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(rows.len(), 11, "{rows:?}");
    assert_eq!(
        rows[3],
        (
            "fetch".to_string(),
            8,
            Some("stream_operations".to_string())
        )
    );
    assert_eq!(rows[1], ("stream_operations".to_string(), 6, None));
    assert!(v[0].get("children").is_none());
}

#[test]
fn document_symbols_of_a_buffer_with_lines_inserted_above_move_with_them() {
    let t = fixture("lsp-outline-dirty");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let text = std::fs::read_to_string(t.root.join("fs/streams/stream.h")).unwrap();
    lsp.open(
        &t.root,
        "fs/streams/stream.h",
        Some(&format!("// a\n// b\n{text}")),
    );
    let v = lsp.result(
        "textDocument/documentSymbol",
        doc_params(&t.root, "fs/streams/stream.h"),
    );
    let rows = outline(&v);
    assert_eq!(rows[1], ("stream_operations".to_string(), 23, 8, 7));
    assert_eq!(v[1]["range"]["end"]["line"], 12);
    assert_eq!(
        outline(&v[1]["children"])[1],
        ("fetch".to_string(), 8, 10, 7)
    );
}

#[test]
fn workspace_symbols_match_name_parts_and_an_empty_query_has_none() {
    let t = fixture("lsp-wsym");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let v = lsp.result("workspace/symbol", json!({"query": "stream fetch"}));
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["stream_fetch", "ksys_stream_fetch", "stream_fetch_fast"]
    );
    assert_eq!(
        places(&t.root, &json!([v[0]["location"]])),
        vec![("fs/streams/core.c".to_string(), 8)]
    );
    assert_eq!(v[0]["containerName"], "fs/streams/core.c");
    assert_eq!(v[0]["kind"], 12);
    // A member's container is its struct.
    let v = lsp.result("workspace/symbol", json!({"query": "s_op"}));
    assert_eq!(v[0]["name"], "s_op");
    assert_eq!(v[0]["containerName"], "stream");
    assert_eq!(v[0]["kind"], 8);
    // The exact name first.
    let v = lsp.result("workspace/symbol", json!({"query": "read"}));
    assert_eq!(v[0]["name"], "read");
    assert_eq!(v[0]["containerName"], "file_operations");
    let v = lsp.result("workspace/symbol", json!({"query": "  "}));
    assert_eq!(v, json!([]));
}

#[test]
fn implementation_of_a_call_through_an_ops_member_lists_the_functions_stored_in_it() {
    let t = fixture("lsp-impl");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // fs/streams/core.c:13 `return ops->fetch(s, buf, n);`, the cursor on `fetch`.
    let v = lsp.result(
        "textDocument/implementation",
        at(&t.root, "fs/streams/core.c", 12, 14),
    );
    let impl_c = |line| ("fs/streams/impl.c".to_string(), line);
    let all = vec![impl_c(8), impl_c(23), impl_c(37), impl_c(46), impl_c(63)];
    assert_eq!(places(&t.root, &v), all);
    // On the name of plain_fetch.
    assert_eq!(v[0]["range"]["start"]["character"], 11);
    // The same from the member in the struct's definition (fs/streams/stream.h:9).
    let v = lsp.result(
        "textDocument/implementation",
        at(&t.root, "fs/streams/stream.h", 8, 9),
    );
    assert_eq!(places(&t.root, &v), all);
    // sound_ops.fetch, a member of the same name in another struct: its own function.
    let v = lsp.result(
        "textDocument/implementation",
        at(&t.root, "fs/streams/core.c", 32, 14),
    );
    assert_eq!(places(&t.root, &v), vec![impl_c(55)]);
    // file_operations.read (include/linux/fs.h:15): ext2's.
    let v = lsp.result(
        "textDocument/implementation",
        at(&t.root, "include/linux/fs.h", 14, 12),
    );
    assert_eq!(places(&t.root, &v), vec![("fs/ext2/file.c".to_string(), 3)]);
    // A plain function: its definition.
    let v = lsp.result(
        "textDocument/implementation",
        at(&t.root, "fs/streams/core.c", 37, 10),
    );
    assert_eq!(
        places(&t.root, &v),
        vec![("fs/streams/core.c".to_string(), 8)]
    );
}

#[test]
fn implementation_leaves_out_what_the_configured_config_does_not_build() {
    let t = fixture("lsp-impl-config");
    let mut lsp = Lsp::start(&t.root, json!({"activeConfig": ".config"}));
    // ghost_fetch (fs/streams/impl.c:64) is under `#ifdef CONFIG_HIGHMEM`, not set.
    let v = lsp.result(
        "textDocument/implementation",
        at(&t.root, "fs/streams/core.c", 12, 14),
    );
    let lines: Vec<u64> = places(&t.root, &v).into_iter().map(|(_, l)| l).collect();
    assert_eq!(lines, vec![8, 23, 37, 46]);
}

#[test]
fn implementation_at_a_store_into_a_member_takes_the_stores_struct() {
    let t = fixture("lsp-impl-store");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let impl_c = |line| ("fs/streams/impl.c".to_string(), line);
    let all = vec![impl_c(8), impl_c(23), impl_c(37), impl_c(46), impl_c(63)];
    // fs/streams/impl.c:20 `.fetch = plain_fetch,` and :35 `ops->fetch = fancy_fetch;`: `fetch`
    // is a member of two structs, the store says which.
    for (line, ch) in [(19, 3), (34, 8)] {
        let v = lsp.result(
            "textDocument/implementation",
            at(&t.root, "fs/streams/impl.c", line, ch),
        );
        assert_eq!(places(&t.root, &v), all, "at {line}");
    }
    // fs/streams/impl.c:61 `{ .fetch = beep_fetch }` of sound_ops.
    let v = lsp.result(
        "textDocument/implementation",
        at(&t.root, "fs/streams/impl.c", 60, 38),
    );
    assert_eq!(places(&t.root, &v), vec![impl_c(55)]);
}

#[test]
fn the_outline_of_a_file_the_index_does_not_hold_is_empty() {
    let t = fixture("lsp-outline-none");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let v = lsp.result(
        "textDocument/documentSymbol",
        doc_params(&t.root, "Kconfig"),
    );
    assert_eq!(v, json!([]));
}

#[test]
fn hover_on_a_member_of_several_structs_shows_the_one_called_through() {
    let t = fixture("lsp-hover-member");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // fs/streams/core.c:33 `return snd->fetch(n);`: sound_ops's `fetch`.
    let text = hover_text(&mut lsp, &t.root, "fs/streams/core.c", 32, 14);
    assert!(
        text.starts_with("```c\nint (*fetch)(int);\n```\n"),
        "{text}"
    );
    assert!(
        text.contains("member at `fs/streams/stream.h:20` in `sound_ops`"),
        "{text}"
    );
    assert!(text.contains("1 other definition"), "{text}");
    // fs/streams/core.c:13 `return ops->fetch(s, buf, n);`: stream_operations's.
    let text = hover_text(&mut lsp, &t.root, "fs/streams/core.c", 12, 14);
    assert!(
        text.contains("member at `fs/streams/stream.h:9` in `stream_operations`"),
        "{text}"
    );
}
