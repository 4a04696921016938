//! `knav lsp` on the fixture tree, driven over its wire as an editor drives it: definitions,
//! declarations and references at a cursor, buffers with unsaved edits, saves, and the wire's
//! own rules (malformed messages, unknown methods, the order of initialize and shutdown).

mod common;
use common::fixture;
use common::lsp::{at, places, uri, Lsp};
use serde_json::{json, Value};

#[test]
fn definition_of_a_call_goes_to_the_function_and_declaration_to_its_prototype() {
    let t = fixture("lsp-def");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // fs/ext2/file.c:6 `	return vfs_read(file, buf, count, pos);`, the cursor on `vfs_read`.
    let defs = lsp.result(
        "textDocument/definition",
        at(&t.root, "fs/ext2/file.c", 5, 10),
    );
    assert_eq!(
        places(&t.root, &defs),
        vec![("fs/read_write.c".to_string(), 19)]
    );
    assert_eq!(defs[0]["range"]["start"]["character"], 8);
    assert_eq!(defs[0]["range"]["end"]["character"], 16);
    let decls = lsp.result(
        "textDocument/declaration",
        at(&t.root, "fs/ext2/file.c", 5, 10),
    );
    assert_eq!(
        places(&t.root, &decls),
        vec![("include/linux/fs.h".to_string(), 18)]
    );
}

#[test]
fn references_with_and_without_the_declarations() {
    let t = fixture("lsp-refs");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let mut params = at(&t.root, "fs/ext2/file.c", 5, 10);
    params["context"] = json!({"includeDeclaration": true});
    let all = places(
        &t.root,
        &lsp.result("textDocument/references", params.clone()),
    );
    params["context"] = json!({"includeDeclaration": false});
    let uses = places(&t.root, &lsp.result("textDocument/references", params));
    assert!(
        all.contains(&("fs/read_write.c".to_string(), 19)),
        "{all:?}"
    );
    assert!(
        all.contains(&("include/linux/fs.h".to_string(), 18)),
        "{all:?}"
    );
    assert!(
        !uses.contains(&("fs/read_write.c".to_string(), 19)),
        "{uses:?}"
    );
    assert!(
        uses.contains(&("fs/ext2/file.c".to_string(), 5)),
        "{uses:?}"
    );
    assert_eq!(all.len(), uses.len() + 2, "{all:?} / {uses:?}");
}

#[test]
fn a_buffer_with_lines_inserted_above_lands_on_the_moved_line() {
    let t = fixture("lsp-dirty");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    lsp.open(&t.root, "fs/read_write.c", None);
    let file = t.root.join("fs/read_write.c");
    // Three lines inserted at the top, unsaved.
    lsp.edit(&file, 2, (0, 0, 0, 0), "// a\n// b\n// c\n");
    // The cursor on `vfs_read` of `return vfs_read(file, ...)`, now line 31 (0-based 33).
    let defs = lsp.result(
        "textDocument/definition",
        at(&t.root, "fs/read_write.c", 33, 10),
    );
    assert_eq!(
        places(&t.root, &defs),
        vec![("fs/read_write.c".to_string(), 22)]
    );
    // The definition's own line edited: left out, and the user told.
    lsp.edit(&file, 3, (22, 0, 22, 7), "long");
    let defs = lsp.result(
        "textDocument/definition",
        at(&t.root, "fs/read_write.c", 33, 10),
    );
    assert_eq!(places(&t.root, &defs), vec![]);
    let told = lsp.from_server.iter().any(|m| {
        m["method"] == "window/showMessage"
            && m["params"]["message"]
                .as_str()
                .is_some_and(|s| s.contains("fs/read_write.c:20") && s.contains("save"))
    });
    assert!(told, "{:?}", lsp.from_server);
}

#[test]
fn a_saved_file_is_reindexed_before_the_next_request() {
    let t = fixture("lsp-save");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let file = t.root.join("fs/ext2/file.c");
    let text = std::fs::read_to_string(&file).unwrap()
        + "\nint lsp_saved_helper(void)\n{\n\treturn 0;\n}\n";
    lsp.open(&t.root, "fs/ext2/file.c", None);
    std::fs::write(&file, &text).unwrap();
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&file), "version": 2},
            "contentChanges": [{"text": text}]}),
    );
    lsp.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri(&file)}, "text": text}),
    );
    let line = text
        .lines()
        .position(|l| l.starts_with("int lsp_saved_helper"))
        .unwrap();
    let defs = lsp.result(
        "textDocument/definition",
        at(&t.root, "fs/ext2/file.c", line as u32, 6),
    );
    assert_eq!(
        places(&t.root, &defs),
        vec![("fs/ext2/file.c".to_string(), line as u64)]
    );
}

#[test]
fn the_wire_answers_bad_messages_and_keeps_going() {
    let t = fixture("lsp-wire");
    let mut lsp = Lsp::spawn(&t.root, &[]);
    // Before initialize: ServerNotInitialized.
    let early = lsp.request("textDocument/hover", at(&t.root, "fs/read_write.c", 0, 0));
    assert_eq!(early["error"]["code"], -32002, "{early}");
    let init = lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&t.root),
        "capabilities": {}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["definitionProvider"], true,
        "{init}"
    );
    lsp.notify("initialized", json!({}));
    // Malformed JSON: a parse error with a null id, and the server goes on.
    lsp.write_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\":");
    let parse = lsp.next().unwrap();
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);
    // An unknown method: MethodNotFound.
    let unknown = lsp.request("textDocument/knavNoSuchThing", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // A message over the limit is skipped whole, unread.
    let big = vec![b' '; 65 << 20];
    lsp.write_raw(&big);
    let skipped = lsp.next().unwrap();
    assert_eq!(skipped["error"]["code"], -32700, "{skipped}");
    lsp.wait_ready(&t.root);
    // A 10 MB didChange is taken, and the buffer answers after it.
    lsp.open(&t.root, "fs/read_write.c", None);
    let file = t.root.join("fs/read_write.c");
    let original = std::fs::read_to_string(&file).unwrap();
    let huge = "/* padding */\n".repeat(10 << 20 >> 4) + &original;
    let pad = huge.lines().count() - original.lines().count();
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&file), "version": 2}, "contentChanges": [{"text": huge}]}),
    );
    let defs = lsp.result(
        "textDocument/definition",
        at(&t.root, "fs/read_write.c", (pad + 30) as u32, 10),
    );
    assert_eq!(
        places(&t.root, &defs),
        vec![("fs/read_write.c".to_string(), (pad + 19) as u64)]
    );
    // After shutdown, requests are refused; exit ends with 0.
    let down = lsp.request("shutdown", Value::Null);
    assert_eq!(down["result"], Value::Null, "{down}");
    let after = lsp.request(
        "textDocument/definition",
        at(&t.root, "fs/read_write.c", 30, 10),
    );
    assert_eq!(after["error"]["code"], -32600, "{after}");
    lsp.notify("exit", Value::Null);
    assert_eq!(lsp.exit_code(), Some(0));
}

#[test]
fn a_cancelled_request_is_answered_cancelled() {
    let t = fixture("lsp-cancel");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // Two requests written at once, the first cancelled before the server reads on: the
    // second is answered, the first is answered RequestCancelled or with its result (if it was
    // already taken), never lost.
    let a = lsp.send(
        "textDocument/definition",
        at(&t.root, "fs/ext2/file.c", 5, 10),
    );
    lsp.notify("$/cancelRequest", json!({"id": a}));
    let b = lsp.send(
        "textDocument/definition",
        at(&t.root, "fs/ext2/file.c", 5, 10),
    );
    let rb = lsp.response(b);
    assert!(rb.get("result").is_some(), "{rb}");
    let ra = lsp
        .from_server
        .iter()
        .find(|m| m["id"] == json!(a))
        .cloned()
        .unwrap();
    assert!(
        ra["error"]["code"] == -32800 || ra.get("result").is_some(),
        "{ra}"
    );
}

/// A tree whose line 2 has non-ASCII text before the name.
fn accented(name: &str) -> common::Tree {
    common::tree(
        name,
        &[
            (
                "a.c",
                "int x;\n/* d\u{e9}j\u{e0} \u{1F600} */ int accented_fn(void) { return 0; }\nint y(void) { return accented_fn(); }\n",
            ),
            ("b.h", "int accented_fn(void);\n"),
        ],
    )
}

#[test]
fn columns_are_utf16_units_by_default_and_bytes_when_the_client_offers_utf8() {
    let t = accented("lsp-utf16");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let defs = lsp.result("textDocument/definition", at(&t.root, "a.c", 2, 23));
    assert_eq!(places(&t.root, &defs), vec![("a.c".to_string(), 1)]);
    // `/* déjà 😀 */ int ` is 18 UTF-16 units (the emoji two) and 22 bytes.
    assert_eq!(defs[0]["range"]["start"]["character"], 18, "{defs}");
    assert_eq!(defs[0]["range"]["end"]["character"], 29, "{defs}");
    // The cursor counted in UTF-16 too: unit 20 is inside `accented_fn`.
    let here = lsp.result("textDocument/definition", at(&t.root, "a.c", 1, 20));
    assert_eq!(places(&t.root, &here), vec![("a.c".to_string(), 1)]);

    let mut lsp8 = Lsp::spawn(&t.root, &[]);
    let init = lsp8.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&t.root),
            "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["positionEncoding"], "utf-8",
        "{init}"
    );
    lsp8.notify("initialized", json!({}));
    lsp8.wait_ready(&t.root);
    let defs = lsp8.result("textDocument/definition", at(&t.root, "a.c", 2, 23));
    assert_eq!(defs[0]["range"]["start"]["character"], 22, "{defs}");
    assert_eq!(defs[0]["range"]["end"]["character"], 33, "{defs}");
}

/// References and incoming calls place their ranges from the columns the answer read (the
/// language server reads no file again): after an emoji they count UTF-16 units, or bytes.
#[test]
fn reference_and_call_ranges_after_non_ascii_text_count_the_clients_units() {
    let t = common::tree(
        "lsp-utf16-refs",
        &[(
            "a.c",
            "int accented_fn(void) { return 0; }\n/* \u{1F600} */ int z(void) { return accented_fn(); }\n",
        )],
    );
    // `/* 😀 */ int z(void) { return ` is 30 UTF-16 units and 32 bytes; `z` is at 13 and 15.
    for (offer, call, z) in [(json!(["utf-16"]), 30, 13), (json!(["utf-8"]), 32, 15)] {
        let mut lsp = Lsp::spawn(&t.root, &[]);
        lsp.request(
            "initialize",
            json!({"processId": null, "rootUri": uri(&t.root),
                "capabilities": {"general": {"positionEncodings": offer}}}),
        );
        lsp.notify("initialized", json!({}));
        lsp.wait_ready(&t.root);
        let mut refs = lsp.result(
            "textDocument/references",
            json!({"textDocument": {"uri": uri(&t.root.join("a.c"))},
                "position": {"line": 0, "character": 6},
                "context": {"includeDeclaration": true}}),
        );
        let refs = refs.as_array_mut().unwrap();
        refs.sort_by_key(|r| r["range"]["start"]["line"].as_u64());
        let ranges: Vec<(u64, u64, u64)> = refs
            .iter()
            .map(|r| {
                let r = &r["range"];
                let n = |v: &Value| v.as_u64().unwrap();
                (
                    n(&r["start"]["line"]),
                    n(&r["start"]["character"]),
                    n(&r["end"]["character"]),
                )
            })
            .collect();
        assert_eq!(ranges, [(0, 4, 15), (1, call, call + 11)], "{offer}");
        let items = lsp.result(
            "textDocument/prepareCallHierarchy",
            at(&t.root, "a.c", 0, 6),
        );
        let calls = lsp.result("callHierarchy/incomingCalls", json!({"item": items[0]}));
        assert_eq!(calls[0]["from"]["name"], "z", "{calls}");
        assert_eq!(
            calls[0]["from"]["range"]["start"]["character"], z,
            "{calls}"
        );
        assert_eq!(
            calls[0]["fromRanges"][0]["start"]["character"], call,
            "{calls}"
        );
        assert_eq!(
            calls[0]["fromRanges"][0]["end"]["character"],
            call + 11,
            "{calls}"
        );
    }
}

#[test]
fn each_workspace_folder_is_answered_from_its_own_index() {
    let a = fixture("lsp-folder-a");
    let b = accented("lsp-folder-b");
    let mut lsp = Lsp::spawn(&a.root, &[]);
    let folders = json!([{"uri": uri(&a.root), "name": "a"}, {"uri": uri(&b.root), "name": "b"}]);
    let init = lsp.request(
        "initialize",
        json!({"processId": null, "workspaceFolders": folders, "capabilities": {}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    lsp.notify("initialized", json!({}));
    lsp.wait_ready(&a.root);
    lsp.wait_ready(&b.root);
    let in_a = lsp.result(
        "textDocument/definition",
        at(&a.root, "fs/ext2/file.c", 5, 10),
    );
    assert_eq!(
        places(&a.root, &in_a),
        vec![("fs/read_write.c".to_string(), 19)]
    );
    let in_b = lsp.result("textDocument/declaration", at(&b.root, "a.c", 2, 23));
    assert_eq!(places(&b.root, &in_b), vec![("b.h".to_string(), 0)]);
    // A file in neither folder: a clear error, not an answer from the wrong tree.
    let elsewhere = lsp.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": "file:///nonexistent/x.c"},
            "position": {"line": 0, "character": 0}}),
    );
    let msg = elsewhere["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("in no workspace folder"), "{elsewhere}");
}

#[test]
fn path_prefix_set_by_did_change_configuration_filters_the_references() {
    let t = fixture("lsp-config");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let mut params = at(&t.root, "fs/ext2/file.c", 5, 10);
    params["context"] = json!({"includeDeclaration": true});
    let all = places(
        &t.root,
        &lsp.result("textDocument/references", params.clone()),
    );
    lsp.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"knav": {"pathPrefix": "include/"}}}),
    );
    let some = places(&t.root, &lsp.result("textDocument/references", params));
    assert_eq!(
        some,
        vec![("include/linux/fs.h".to_string(), 18)],
        "{all:?}"
    );
    assert!(all.len() > some.len());
}

#[test]
fn references_past_the_cap_are_cut_and_the_user_told() {
    let mut body = String::from("void many_refs(void);\nvoid caller(void)\n{\n");
    for _ in 0..20_005 {
        body.push_str("\tmany_refs();\n");
    }
    body.push_str("}\n");
    let t = common::tree("lsp-cap", &[("a.c", body)]);
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let mut params = at(&t.root, "a.c", 3, 3);
    params["context"] = json!({"includeDeclaration": true});
    let refs = lsp.result("textDocument/references", params);
    assert_eq!(refs.as_array().map(Vec::len), Some(20_000));
    let told = lsp.from_server.iter().any(|m| {
        m["method"] == "window/showMessage"
            && m["params"]["message"]
                .as_str()
                .is_some_and(|s| s.starts_with("20006 results; the first 20000 are listed"))
    });
    assert!(told, "{:?}", lsp.from_server.last());
}

/// The error code of `r`, a response that must be an error.
fn code(r: &Value) -> i64 {
    r.pointer("/error/code")
        .and_then(Value::as_i64)
        .unwrap_or_else(|| panic!("not an error: {r}"))
}

#[test]
fn a_second_initialize_and_an_unknown_dollar_request_are_refused() {
    let t = fixture("lsp-twice");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let again = lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&t.root), "capabilities": {}}),
    );
    assert_eq!(code(&again), -32600, "{again}");
    // LSP 3.17: a `$/` request the server does not know is MethodNotFound (it was null).
    let dollar = lsp.request("$/knavNoSuchThing", json!({}));
    assert_eq!(code(&dollar), -32601, "{dollar}");
    // The server still answers.
    let defs = lsp.result(
        "textDocument/definition",
        at(&t.root, "fs/ext2/file.c", 5, 10),
    );
    assert_eq!(
        places(&t.root, &defs),
        vec![("fs/read_write.c".to_string(), 19)]
    );
}

#[test]
fn exit_before_shutdown_exits_1() {
    let t = fixture("lsp-exit1");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    lsp.notify("exit", Value::Null);
    assert_eq!(lsp.exit_code(), Some(1));
}

#[test]
fn a_batch_and_ids_lsp_has_not_are_refused_and_a_string_id_answered() {
    let t = fixture("lsp-ids");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    lsp.write(&json!([{"jsonrpc": "2.0", "id": 90, "method": "shutdown"}]));
    let batch = lsp.next().unwrap();
    assert_eq!(code(&batch), -32600, "{batch}");
    assert_eq!(batch["id"], Value::Null);
    // An id over 32 bits was read as a notification and never answered.
    lsp.write(
        &json!({"jsonrpc": "2.0", "id": 1u64 << 40, "method": "textDocument/hover",
        "params": at(&t.root, "fs/ext2/file.c", 5, 10)}),
    );
    let huge = lsp.next().unwrap();
    assert_eq!(code(&huge), -32600, "{huge}");
    assert_eq!(huge["id"], json!(1u64 << 40));
    lsp.write(
        &json!({"jsonrpc": "2.0", "id": "s-1", "method": "textDocument/definition",
        "params": at(&t.root, "fs/ext2/file.c", 5, 10)}),
    );
    let named = lsp.next().unwrap();
    assert_eq!(named["id"], "s-1", "{named}");
    assert_eq!(
        places(&t.root, &named["result"]),
        vec![("fs/read_write.c".to_string(), 19)]
    );
    // A response to the server with an error (a refused progress token) is taken silently;
    // one with a null id is unreadable, logged, never answered.
    lsp.write(
        &json!({"jsonrpc": "2.0", "id": "knav-progress-knav/index/0",
        "error": {"code": -32601, "message": "no progress here"}}),
    );
    lsp.write(&json!({"jsonrpc": "2.0", "id": null, "error": {"code": -1, "message": "?"}}));
    let shut = lsp.request("shutdown", Value::Null);
    assert_eq!(shut["result"], Value::Null, "{shut}");
    assert!(
        lsp.from_server.iter().all(|m| m.get("error").is_none()),
        "a response was answered: {:?}",
        lsp.from_server
    );
}

#[test]
fn bad_positions_params_and_changes_are_errors_and_the_server_goes_on() {
    let t = accented("lsp-bad-input");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    for (line, ch) in [(u32::MAX, u32::MAX), (2, u32::MAX), (99, 0), (1, 9)] {
        for method in [
            "textDocument/definition",
            "textDocument/hover",
            "textDocument/implementation",
            "textDocument/prepareCallHierarchy",
        ] {
            // Line 1 character 9 is inside the emoji's surrogate pair.
            let r = lsp.request(method, at(&t.root, "a.c", line, ch));
            assert!(
                r.get("result").is_some() || matches!(code(&r), -32602 | -32803),
                "{method} {line}:{ch}: {r}"
            );
        }
    }
    for params in [Value::Null, json!("a.c"), json!({"textDocument": 3})] {
        let r = lsp.request("textDocument/definition", params);
        assert_eq!(code(&r), -32602, "{r}");
    }
    // An incoming-calls item the client made up, at the last line there is.
    let file = t.root.join("a.c");
    let item = json!({"name": "accented_fn", "kind": 12, "uri": uri(&file),
        "range": {"start": {"line": u32::MAX, "character": 0}, "end": {"line": u32::MAX, "character": 1}},
        "selectionRange": {"start": {"line": u32::MAX, "character": 0}, "end": {"line": u32::MAX, "character": 1}}});
    for method in ["callHierarchy/incomingCalls", "callHierarchy/outgoingCalls"] {
        // Line u32::MAX + 1 overflowed: a panic, answered InternalError at best.
        let r = lsp.request(method, json!({"item": item}));
        assert!(r.get("result").is_some() || code(&r) != -32603, "{r}");
    }
    // Changes to a document never opened, ranges reversed and past the end.
    let change = |v: i32, range: Value, text: &str| {
        json!({"textDocument": {"uri": uri(&file), "version": v},
            "contentChanges": [{"range": range, "text": text}]})
    };
    let r = |a: (u32, u32), b: (u32, u32)| json!({"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}});
    lsp.notify(
        "textDocument/didChange",
        change(2, r((0, 0), (0, 1)), "never opened"),
    );
    lsp.open(&t.root, "a.c", None);
    lsp.notify("textDocument/didChange", change(3, r((2, 5), (0, 2)), ""));
    lsp.notify("textDocument/didChange", change(4, r((1, 9), (1, 10)), "z"));
    lsp.notify(
        "textDocument/didChange",
        change(5, r((u32::MAX, 0), (u32::MAX, 9)), "\nint tail;"),
    );
    lsp.notify("textDocument/didChange", json!({"textDocument": 1}));
    // Closed, the file answers again as indexed.
    lsp.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(&file)}}),
    );
    let defs = lsp.result("textDocument/definition", at(&t.root, "b.h", 0, 6));
    assert_eq!(places(&t.root, &defs), vec![("a.c".to_string(), 1)]);
    let down = lsp.request("shutdown", Value::Null);
    assert_eq!(down["result"], Value::Null, "{down}");
    lsp.notify("exit", Value::Null);
    assert_eq!(lsp.exit_code(), Some(0));
}

#[test]
fn a_document_through_dotdot_or_a_link_out_of_the_folder_is_not_read() {
    let outside = common::tree(
        "lsp-outside",
        &[("secret.c", "int outside_secret(void) { return 1; }\n")],
    );
    let t = common::tree(
        "lsp-inside",
        &[(
            "a.c",
            "int outside_secret(void);\nint inside(void) { return 0; }\n",
        )],
    );
    std::os::unix::fs::symlink(outside.root.join("secret.c"), t.root.join("link.c")).unwrap();
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let dotdot = format!(
        "{}/../{}/secret.c",
        uri(&t.root),
        outside.root.file_name().unwrap().to_str().unwrap()
    );
    let r = lsp.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": dotdot}, "position": {"line": 0, "character": 6}}),
    );
    assert_eq!(code(&r), -32602, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("`..`"),
        "{r}"
    );
    // Through the link: the file is not read (the name under the cursor would come from it).
    let r = lsp.request("textDocument/definition", at(&t.root, "link.c", 0, 6));
    let msg = r.pointer("/error/message").and_then(Value::as_str);
    assert!(msg.is_some_and(|m| m.contains("cannot be read")), "{r}");
}

#[test]
fn a_folder_named_through_a_symbolic_link_is_answered_in_the_clients_spelling() {
    let t = fixture("lsp-linked");
    let link = std::env::temp_dir().join(format!("knav-lsp-link-{}", std::process::id()));
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&t.root, &link).unwrap();
    // Every document of the folder was "in no workspace folder": the folder was resolved, the
    // client's URIs were not.
    let mut lsp = Lsp::start(&link, Value::Null);
    let defs = lsp.result(
        "textDocument/definition",
        at(&link, "fs/ext2/file.c", 5, 10),
    );
    assert_eq!(
        places(&link, &defs),
        vec![("fs/read_write.c".to_string(), 19)]
    );
    // An open buffer with lines inserted above is found by its path through the link.
    lsp.open(&link, "fs/read_write.c", None);
    let file = link.join("fs/read_write.c");
    lsp.edit(&file, 2, (0, 0, 0, 0), "// a\n// b\n");
    let moved = lsp.result(
        "textDocument/definition",
        at(&link, "fs/ext2/file.c", 5, 10),
    );
    assert_eq!(
        places(&link, &moved),
        vec![("fs/read_write.c".to_string(), 21)]
    );
    let _ = std::fs::remove_file(&link);
}
