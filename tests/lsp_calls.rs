//! `knav lsp`'s call hierarchy and inactive regions on the fixture tree, over the wire: the
//! items prepareCallHierarchy makes, incoming calls (direct and through an ops table),
//! outgoing calls with where each callee is defined, and clangd's `textDocument/inactiveRegions`
//! for a `.config` the test writes.

mod common;
use common::fixture;
use common::lsp::{at, uri, Lsp};
use serde_json::{json, Value};

/// An item's place, its call lines and its detail.
type Call = ((String, String, u64), Vec<u64>, Value);

/// `(name, root-relative path, 0-based line)` of an item.
fn place(root: &std::path::Path, item: &Value) -> (String, String, u64) {
    let prefix = uri(root) + "/";
    let u = item["uri"].as_str().unwrap_or_default();
    (
        item["name"].as_str().unwrap_or_default().to_string(),
        u.strip_prefix(&prefix).unwrap_or(u).to_string(),
        item["selectionRange"]["start"]["line"].as_u64().unwrap(),
    )
}

/// The 0-based start lines of a call's `fromRanges`.
fn from_lines(call: &Value) -> Vec<u64> {
    call["fromRanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["start"]["line"].as_u64().unwrap())
        .collect()
}

/// The only item prepareCallHierarchy gives at `path`, 0-based `line`, `ch`.
fn prepare(lsp: &mut Lsp, root: &std::path::Path, path: &str, line: u32, ch: u32) -> Value {
    let items = lsp.result(
        "textDocument/prepareCallHierarchy",
        at(root, path, line, ch),
    );
    let items = items.as_array().expect("items").clone();
    assert_eq!(items.len(), 1, "{items:?}");
    items[0].clone()
}

#[test]
fn incoming_calls_of_vfs_read_are_its_three_direct_callers() {
    let t = fixture("lsp-calls-in");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // fs/ext2/file.c:6 `	return vfs_read(file, buf, count, pos);`, the cursor on `vfs_read`.
    let item = prepare(&mut lsp, &t.root, "fs/ext2/file.c", 5, 10);
    assert_eq!(
        place(&t.root, &item),
        ("vfs_read".into(), "fs/read_write.c".into(), 19)
    );
    assert_eq!(item["kind"], 12);
    assert_eq!(
        item["data"],
        json!({"name": "vfs_read", "path": "fs/read_write.c", "line": 20})
    );
    assert_eq!(item["selectionRange"]["start"]["character"], 8);
    assert_eq!(item["detail"], "fs/read_write.c:20");
    // A definition under `#ifdef` says so.
    let compat = prepare(&mut lsp, &t.root, "fs/read_write.c", 47, 10);
    assert_eq!(compat["detail"], "fs/read_write.c:48 · #if CONFIG_COMPAT");
    let calls = lsp.result("callHierarchy/incomingCalls", json!({"item": item}));
    let got: Vec<Call> = calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                place(&t.root, &c["from"]),
                from_lines(c),
                c["from"]["detail"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                ("ext2_file_read".into(), "fs/ext2/file.c".into(), 3),
                vec![5],
                json!("fs/ext2/file.c")
            ),
            (
                ("kernel_read".into(), "fs/read_write.c".into(), 28),
                vec![30],
                json!("fs/read_write.c")
            ),
            (
                ("ksys_read".into(), "fs/read_write.c".into(), 34),
                vec![38],
                json!("fs/read_write.c")
            ),
        ]
    );
    // The call's range is the name called: `	return vfs_read(` has it at 8..16.
    assert_eq!(calls[0]["fromRanges"][0]["start"]["character"], 8);
    assert_eq!(calls[0]["fromRanges"][0]["end"]["character"], 16);
    // A caller is an item of its own: ksys_read's callers are none in the fixture but its own
    // outgoing calls are asked from it without a cursor.
    let ksys = calls[2]["from"].clone();
    assert_eq!(
        ksys["data"],
        json!({"name": "ksys_read", "path": "fs/read_write.c", "line": 35})
    );
}

#[test]
fn incoming_calls_through_an_ops_table_are_marked_with_the_member() {
    let t = fixture("lsp-calls-via");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // fs/streams/impl.c:9 `static int plain_fetch(…)`, registered as stream_operations.fetch.
    let item = prepare(&mut lsp, &t.root, "fs/streams/impl.c", 8, 12);
    assert_eq!(
        place(&t.root, &item),
        ("plain_fetch".into(), "fs/streams/impl.c".into(), 8)
    );
    let calls = lsp.result("callHierarchy/incomingCalls", json!({"item": item}));
    let calls = calls.as_array().unwrap();
    let got: Vec<((String, String, u64), Vec<u64>)> = calls
        .iter()
        .map(|c| (place(&t.root, &c["from"]), from_lines(c)))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                ("stream_fetch".into(), "fs/streams/core.c".into(), 8),
                vec![12]
            ),
            (
                ("stream_fetch_fast".into(), "fs/streams/core.c".into(), 20),
                vec![22]
            ),
        ]
    );
    for c in calls {
        assert_eq!(
            c["from"]["detail"],
            "via stream_operations.fetch (registered at fs/streams/impl.c:20) · fs/streams/core.c"
        );
        assert_eq!(c["from"]["data"]["via"], "stream_operations.fetch");
    }
    // `	return ops->fetch(s, buf, n);`: the range is the member called.
    assert_eq!(calls[0]["fromRanges"][0]["start"]["character"], 13);
    assert_eq!(calls[0]["fromRanges"][0]["end"]["character"], 18);
}

#[test]
fn outgoing_calls_go_where_each_callee_is_defined_or_say_it_is_not() {
    let t = fixture("lsp-calls-out");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // fs/read_write.c:35 `ssize_t ksys_read(…)`.
    let item = prepare(&mut lsp, &t.root, "fs/read_write.c", 34, 10);
    let calls = lsp.result("callHierarchy/outgoingCalls", json!({"item": item}));
    let got: Vec<Call> = calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                place(&t.root, &c["to"]),
                from_lines(c),
                c["to"]["detail"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                ("fget".into(), "fs/read_write.c".into(), 36),
                vec![36],
                json!("not defined in the tree")
            ),
            (
                ("vfs_read".into(), "fs/read_write.c".into(), 19),
                vec![38],
                json!("fs/read_write.c:20")
            ),
        ]
    );
    // fget has no body in the tree: it calls nothing shown, and is called by ksys_read.
    let fget = calls[0]["to"].clone();
    let none = lsp.result("callHierarchy/outgoingCalls", json!({"item": fget}));
    assert_eq!(none, json!([]));
    let callers = lsp.result("callHierarchy/incomingCalls", json!({"item": fget}));
    assert_eq!(callers.as_array().unwrap().len(), 1, "{callers}");
    assert_eq!(callers[0]["from"]["name"], "ksys_read");
    // A call through a member: the member at the call, with what is registered in it.
    let item = prepare(&mut lsp, &t.root, "fs/streams/core.c", 8, 6);
    let calls = lsp.result("callHierarchy/outgoingCalls", json!({"item": item}));
    assert_eq!(calls.as_array().unwrap().len(), 1, "{calls}");
    assert_eq!(
        place(&t.root, &calls[0]["to"]),
        (
            "stream_operations.fetch".into(),
            "fs/streams/core.c".into(),
            12
        )
    );
    assert_eq!(
        calls[0]["to"]["detail"],
        "through a pointer: 5 functions registered (plain_fetch, fancy_fetch, table_fetch, \
         macro_fetch, ghost_fetch)"
    );
    assert_eq!(calls[0]["to"]["data"].get("name"), None);
}

#[test]
fn a_callee_called_on_several_lines_has_a_range_per_line() {
    let t = fixture("lsp-calls-lines");
    // A second call of vfs_read in kernel_read's body, saved before the index is built.
    let file = t.root.join("fs/read_write.c");
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "\treturn vfs_read(file, buf, count, pos);\n}\nEXPORT_SYMBOL(kernel_read);",
        "\tvfs_read(file, buf, count, pos);\n\treturn vfs_read(file, buf, count, pos);\n}\n\
         EXPORT_SYMBOL(kernel_read);",
    );
    // And a function calling itself, at the end: its call is the recursion, not its definition.
    let lines = text.lines().count();
    let text = text + "\nint count_down(int n)\n{\n\treturn n ? count_down(n - 1) : 0;\n}\n";
    std::fs::write(&file, text).unwrap();
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let item = prepare(&mut lsp, &t.root, "fs/read_write.c", lines as u32 + 1, 6);
    assert_eq!(item["name"], "count_down");
    let calls = lsp.result("callHierarchy/outgoingCalls", json!({"item": item}));
    assert_eq!(calls.as_array().unwrap().len(), 1, "{calls}");
    assert_eq!(from_lines(&calls[0]), vec![lines as u64 + 3]);
    let item = prepare(&mut lsp, &t.root, "fs/read_write.c", 28, 10);
    assert_eq!(item["name"], "kernel_read");
    let calls = lsp.result("callHierarchy/outgoingCalls", json!({"item": item}));
    assert_eq!(calls.as_array().unwrap().len(), 1, "{calls}");
    assert_eq!(from_lines(&calls[0]), vec![30, 31]);
    // And incoming: kernel_read is one caller with both lines.
    let vfs = prepare(&mut lsp, &t.root, "fs/read_write.c", 19, 10);
    let calls = lsp.result("callHierarchy/incomingCalls", json!({"item": vfs}));
    let kernel_read = calls
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["from"]["name"] == "kernel_read")
        .expect("kernel_read calls vfs_read");
    assert_eq!(from_lines(kernel_read), vec![30, 31]);
}

#[test]
fn a_call_at_file_scope_comes_from_a_file_scope_item_nothing_is_asked_of() {
    let t = fixture("lsp-calls-file-scope");
    // A call in a macro's body, at the end of fs/read_write.c (line 55).
    let file = t.root.join("fs/read_write.c");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\n#define READ_ALL(f) vfs_read(f, 0, 0, 0)\n");
    std::fs::write(&file, text).unwrap();
    let mut lsp = Lsp::start(&t.root, Value::Null);
    let vfs = prepare(&mut lsp, &t.root, "fs/read_write.c", 19, 10);
    let calls = lsp.result("callHierarchy/incomingCalls", json!({"item": vfs}));
    let scope = calls
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["from"]["name"] == "(file scope)")
        .expect("the macro's call is listed")
        .clone();
    assert_eq!(
        place(&t.root, &scope["from"]),
        ("(file scope)".into(), "fs/read_write.c".into(), 54)
    );
    assert_eq!(from_lines(&scope), vec![54]);
    assert_eq!(scope["from"]["kind"], 1);
    assert_eq!(
        scope["from"]["data"],
        json!({"path": "fs/read_write.c", "line": 55})
    );
    // `#define READ_ALL(f) vfs_read(`: the range is the name called.
    assert_eq!(scope["fromRanges"][0]["start"]["character"], 20);
    for method in ["callHierarchy/incomingCalls", "callHierarchy/outgoingCalls"] {
        let none = lsp.result(method, json!({"item": scope["from"]}));
        assert_eq!(none, json!([]), "{method}");
    }
}

#[test]
fn calls_in_a_buffer_with_lines_inserted_above_land_on_the_moved_lines() {
    let t = fixture("lsp-calls-dirty");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    lsp.open(&t.root, "fs/read_write.c", None);
    let file = t.root.join("fs/read_write.c");
    lsp.edit(&file, 2, (0, 0, 0, 0), "// a\n// b\n// c\n");
    // vfs_read's definition, now on line 23 (0-based 22).
    let item = prepare(&mut lsp, &t.root, "fs/read_write.c", 22, 10);
    assert_eq!(
        place(&t.root, &item),
        ("vfs_read".into(), "fs/read_write.c".into(), 22)
    );
    // Its data keeps the indexed line: what the index answers for.
    assert_eq!(item["data"]["line"], 20);
    let calls = lsp.result("callHierarchy/incomingCalls", json!({"item": item}));
    let got: Vec<Call> = calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (place(&t.root, &c["from"]), from_lines(c), Value::Null))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                ("ext2_file_read".into(), "fs/ext2/file.c".into(), 3),
                vec![5],
                Value::Null
            ),
            (
                ("kernel_read".into(), "fs/read_write.c".into(), 31),
                vec![33],
                Value::Null
            ),
            (
                ("ksys_read".into(), "fs/read_write.c".into(), 37),
                vec![41],
                Value::Null
            ),
        ]
    );
}

#[test]
fn prepare_on_a_name_that_is_no_function_is_null() {
    let t = fixture("lsp-calls-null");
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // fs/ext2/file.c:9 `const struct file_operations ext2_file_operations = {`, on the struct.
    let items = lsp.result(
        "textDocument/prepareCallHierarchy",
        at(&t.root, "fs/ext2/file.c", 8, 16),
    );
    assert_eq!(items, Value::Null);
}

/// The regions of the last `textDocument/inactiveRegions` the server sent for `path`, after
/// every message before a request sent now.
fn regions(lsp: &mut Lsp, root: &std::path::Path, path: &str) -> Option<Vec<[u64; 4]>> {
    lsp.request("textDocument/definition", at(root, "knav-probe.c", 0, 0));
    let want = uri(&root.join(path));
    let last = lsp
        .from_server
        .iter()
        .rev()
        .find(|m| {
            m["method"] == "textDocument/inactiveRegions"
                && m["params"]["textDocument"]["uri"] == want.as_str()
        })?
        .clone();
    lsp.from_server.clear();
    Some(
        last["params"]["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                [
                    r["start"]["line"].as_u64().unwrap(),
                    r["start"]["character"].as_u64().unwrap(),
                    r["end"]["line"].as_u64().unwrap(),
                    r["end"]["character"].as_u64().unwrap(),
                ]
            })
            .collect(),
    )
}

/// A `.config` for x86 without HIGHMEM and EXT2, written in the tree.
fn write_config(root: &std::path::Path) {
    std::fs::write(
        root.join(".config"),
        "CONFIG_X86=y\nCONFIG_64BIT=y\n# CONFIG_HIGHMEM is not set\n# CONFIG_EXT2_FS is not set\n\
         CONFIG_COMPAT=y\n",
    )
    .unwrap();
}

#[test]
fn inactive_regions_are_the_branches_and_files_the_config_does_not_build() {
    let t = fixture("lsp-inactive");
    write_config(&t.root);
    let mut lsp = Lsp::start(&t.root, json!({"activeConfig": ".config"}));
    // mm/highmem.c: `#ifdef CONFIG_HIGHMEM` on line 4, `#endif` on line 10: lines 5..9 greyed,
    // to the end of `EXPORT_SYMBOL(kmap_high);` (25 characters).
    lsp.open(&t.root, "mm/highmem.c", None);
    assert_eq!(
        regions(&mut lsp, &t.root, "mm/highmem.c"),
        Some(vec![[4, 0, 8, 25]])
    );
    // fs/read_write.c: CONFIG_COMPAT is set: nothing.
    lsp.open(&t.root, "fs/read_write.c", None);
    assert_eq!(regions(&mut lsp, &t.root, "fs/read_write.c"), Some(vec![]));
    // fs/ext2/file.c: Kbuild builds it only with CONFIG_EXT2_FS: the whole file, to the end
    // of its last line `#define wait_for_it() 0` (23 characters).
    lsp.open(&t.root, "fs/ext2/file.c", None);
    assert_eq!(
        regions(&mut lsp, &t.root, "fs/ext2/file.c"),
        Some(vec![[0, 0, 14, 23]])
    );
}

#[test]
fn inactive_regions_follow_the_buffer_and_the_settings() {
    let t = fixture("lsp-inactive-buffer");
    write_config(&t.root);
    let mut lsp = Lsp::start(&t.root, Value::Null);
    // Without an activeConfig: no regions.
    lsp.open(&t.root, "mm/highmem.c", None);
    assert_eq!(regions(&mut lsp, &t.root, "mm/highmem.c"), Some(vec![]));
    // Setting one sends the open documents' regions.
    lsp.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"knav": {"activeConfig": ".config"}}}),
    );
    assert_eq!(
        regions(&mut lsp, &t.root, "mm/highmem.c"),
        Some(vec![[4, 0, 8, 25]])
    );
    // A buffer with branches typed and saved: the regions are the buffer's. The `#else`
    // branch of a false `#ifdef` is built; of `#elif`s, only the true one; a false group
    // inside a false one is one region with the inner directives; an option the .config does
    // not list is off (a .config lists them all), but a macro that is no option decides
    // nothing, and its branch stays.
    let text = "#ifdef CONFIG_HIGHMEM\nint a;\n#else\nint b;\n#endif\n\
                #if defined(CONFIG_EXT2_FS)\nint c;\n#elif defined(CONFIG_COMPAT)\nint d;\n\
                #else\nint e;\n#endif\n\
                #ifdef CONFIG_HIGHMEM\nint f;\n#ifdef CONFIG_COMPAT\nint g;\n#endif\nint h;\n#endif\n\
                #ifdef CONFIG_NOT_IN_THE_CONFIG\nint u;\n#endif\n\
                #if ARCH_SLOTS > 8\nint v;\n#endif\n";
    let file = t.root.join("mm/highmem.c");
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&file), "version": 2},
            "contentChanges": [{"text": text}]}),
    );
    let want = vec![
        [1, 0, 1, 6],
        [6, 0, 6, 6],
        [10, 0, 10, 6],
        [13, 0, 17, 6],
        [20, 0, 20, 6],
    ];
    // Unsaved, the buffer counts, not the file: the same config named again sends them.
    lsp.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"knav": {"activeConfig": "./.config"}}}),
    );
    assert_eq!(
        regions(&mut lsp, &t.root, "mm/highmem.c"),
        Some(want.clone())
    );
    std::fs::write(&file, text).unwrap();
    lsp.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri(&file)}}),
    );
    assert_eq!(regions(&mut lsp, &t.root, "mm/highmem.c"), Some(want));
    // Unset again: the regions are cleared.
    lsp.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"activeConfig": null}}),
    );
    assert_eq!(regions(&mut lsp, &t.root, "mm/highmem.c"), Some(vec![]));
}

#[test]
fn a_client_without_the_capability_or_the_group_gets_no_regions() {
    let t = fixture("lsp-inactive-off");
    write_config(&t.root);
    let mut lsp = Lsp::start(
        &t.root,
        json!({"activeConfig": ".config", "groups": ["navigate", "calls"]}),
    );
    lsp.open(&t.root, "mm/highmem.c", None);
    assert_eq!(regions(&mut lsp, &t.root, "mm/highmem.c"), None);
}

#[test]
fn the_calls_group_left_out_serves_no_call_hierarchy() {
    let t = fixture("lsp-calls-off");
    let mut lsp = Lsp::start(&t.root, json!({"groups": ["navigate"]}));
    let r = lsp.request(
        "textDocument/prepareCallHierarchy",
        at(&t.root, "fs/ext2/file.c", 5, 10),
    );
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert_eq!(
        r["error"]["message"],
        "textDocument/prepareCallHierarchy is in a group the options leave out"
    );
}
