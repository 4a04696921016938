//! End-to-end tests of `knav serve`: the real binary driven as an MCP client over stdio
//! (JSON-RPC, one message per line), on private copies of the fixture tree.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod common;
use common::client::{result_of, root_arg, served, Client};
use common::{fixture, index_with_cli, Tree};

#[test]
fn tools_list_has_every_tool_with_annotations_meta_and_a_small_catalog() {
    let t = fixture("serve-list");
    let mut c = Client::start(&["--root", &root_arg(&t)], &t.root, &[]);
    let v = c.request("tools/list", json!({}));
    let tools = v["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "find_definition",
            "find_references",
            "find_callers",
            "find_callees",
            "get_symbol_body",
            "reachability",
            "list_file_symbols",
            "search_symbols",
            "search_files",
            "search_text",
            "search_code",
            "search_docs",
            "find_device",
            "change_impact",
            "compare_versions",
            "symbol_history",
            "review_diff",
            "update_index",
            "index_status",
            "replace_symbol",
            "insert_symbol"
        ]
    );
    let mut always_loaded = 0;
    for t in tools {
        let name = t["name"].as_str().unwrap();
        let a = &t["annotations"];
        if name == "update_index" {
            assert_eq!(a["readOnlyHint"], false);
            assert_eq!(a["destructiveHint"], false);
            assert_eq!(a["idempotentHint"], true);
        } else if ["replace_symbol", "insert_symbol"].contains(&name) {
            assert_eq!(a["readOnlyHint"], false, "{name}");
            assert_eq!(a["destructiveHint"], true, "{name}");
            assert_eq!(a["idempotentHint"], false, "{name}");
            assert_eq!(a["openWorldHint"], false, "{name}");
        } else {
            assert_eq!(a["readOnlyHint"], true, "{name}");
            assert_eq!(a["openWorldHint"], false, "{name}");
            let props = t["inputSchema"]["properties"].as_object().unwrap();
            // index_status pages nothing; compare_versions answers one symbol in two versions;
            // find_device filters by no path or revision (the catalog's budget is tight).
            let common: &[&str] = if name == "index_status" {
                &["root", "format"]
            } else if name == "compare_versions" {
                &["root", "format", "path_prefix"]
            } else if name == "find_device" {
                &["root", "format", "limit", "offset"]
            } else {
                &["root", "format", "limit", "offset", "path_prefix"]
            };
            for common in common {
                assert!(props.contains_key(*common), "{name} lacks {common}");
            }
            // A name or path search does not filter by configuration; a text search does.
            let unfiltered = [
                "search_symbols",
                "search_files",
                "index_status",
                "search_docs",
                "search_code",
                "find_device",
            ]
            .contains(&name);
            assert_eq!(props.contains_key("active_config"), !unfiltered, "{name}");
        }
        let always = ["find_definition", "find_callers", "get_symbol_body"].contains(&name);
        assert_eq!(
            t["_meta"]["anthropic/alwaysLoad"].as_bool(),
            always.then_some(true),
            "{name}"
        );
        assert!(
            t["description"].as_str().unwrap().contains("instead of") || name == "update_index",
            "{name} says what it replaces"
        );
        if always {
            always_loaded += t.to_string().len();
        }
    }
    // Tokens as characters / 4 of the result as sent: the whole list under 3,000, the
    // alwaysLoad tools under 1,200.
    let catalog = v["result"].to_string().len();
    assert!(catalog < 3_000 * 4, "tools/list takes {catalog} characters");
    assert!(
        always_loaded < 1_200 * 4,
        "the alwaysLoad tools take {always_loaded} characters"
    );
    assert!(
        names.len() == 21 && catalog > 2000 && always_loaded > 500,
        "the catalog was measured"
    );
}

#[test]
fn tools_list_leaves_the_shared_arguments_to_the_instructions() {
    // The arguments most tools take were described again in every tool's schema: the list
    // cost 5,000 tokens. The initialize result's instructions describe them once.
    let t = fixture("serve-shared");
    let mut c = Client::start(&["--root", &root_arg(&t)], &t.root, &[]);
    let instructions = c.init["result"]["instructions"]
        .as_str()
        .unwrap()
        .to_string();
    let v = c.request("tools/list", json!({}));
    let shared = [
        "root",
        "format",
        "limit",
        "offset",
        "path_prefix",
        "active_config",
        "rev",
    ];
    for name in shared {
        assert!(
            instructions.contains(&format!("\n- {name}: ")),
            "the instructions describe {name}: {instructions}"
        );
    }
    let mut seen = 0;
    for t in v["result"]["tools"].as_array().unwrap() {
        for (name, p) in t["inputSchema"]["properties"].as_object().unwrap() {
            if shared.contains(&name.as_str()) {
                seen += 1;
                assert_eq!(p.get("description"), None, "{}: {name}", t["name"]);
            }
        }
    }
    assert!(
        seen > 80,
        "the shared arguments are still in the schemas: {seen}"
    );
}

#[test]
fn tool_groups_chosen_by_flag_or_settings_list_and_answer_only_their_tools() {
    let t = fixture("serve-groups");
    let root = root_arg(&t);
    let names = |c: &mut Client| -> Vec<String> {
        let v = c.request("tools/list", json!({}));
        v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut c = Client::start(&["--root", &root, "--tools", "search,review"], &t.root, &[]);
    assert_eq!(
        names(&mut c),
        [
            "search_symbols",
            "search_files",
            "search_text",
            "search_code",
            "search_docs",
            "change_impact",
            "compare_versions",
            "symbol_history",
            "review_diff",
            "index_status"
        ]
    );
    let (text, err) = c.call("find_definition", json!({"symbol": "kmap"}));
    assert!(
        err && text.contains("find_definition is not served"),
        "{text}"
    );
    drop(c);
    std::fs::write(t.root.join(".knav.toml"), "[serve]\ntools = [\"review\"]\n").unwrap();
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    assert_eq!(
        names(&mut c),
        [
            "change_impact",
            "compare_versions",
            "symbol_history",
            "review_diff",
            "index_status"
        ]
    );
    drop(c);
    std::fs::write(t.root.join(".knav.toml"), "[serve]\ntools = [\"every\"]\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["serve", "--root", &root])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "serve.tools: unknown tool group 'every'; the groups are core, search, edit, review, hardware"
        ),
        "{err}"
    );
}

#[test]
fn every_tool_answers_on_the_fixture_as_the_cli_does() {
    let (t, mut c) = served("serve-tools", &[]);
    let (text, err) = c.call("find_definition", json!({"symbol": "kmap"}));
    assert!(!err);
    assert_eq!(
        text,
        "kmap: 2 definitions under 2 #if variants · 2 refs in 1 files\n\
         include/linux/highmem.h:20: static inline void *kmap(struct page *page)  [function; #if CONFIG_HIGHMEM]\n\
         include/linux/highmem.h:25: static inline void *kmap(struct page *page)  [function; #if !CONFIG_HIGHMEM]\n\
         next: get_symbol_body, find_callers, find_references\n"
    );
    // JSON is the CLI's envelope, byte for byte.
    let (text, _) = c.call(
        "find_definition",
        json!({"symbol": "kmap", "format": "json"}),
    );
    let cli = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["def", "kmap", "--format", "json", "--root"])
        .arg(&t.root)
        .output()
        .unwrap();
    assert_eq!(
        text.trim_end(),
        String::from_utf8_lossy(&cli.stdout).trim_end()
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["guard_variants"], 2);

    let (text, _) = c.call(
        "find_references",
        json!({"symbol": "kmap", "path_prefix": "mm/"}),
    );
    assert_eq!(
        text,
        "mm/highmem.c:14: void *from = kmap(src);  [call]\n\
         mm/highmem.c:15: void *to = kmap(dst);  [call]\n\
         next: find_callers, find_definition\n"
    );
    let (text, _) = c.call(
        "find_references",
        json!({"symbol": "kmap", "group_by": "file", "format": "json"}),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["results"][0]["path"], "include/linux/highmem.h");
    assert_eq!(v["results"][1]["path"], "mm/highmem.c");
    assert_eq!(v["results"][1]["lines"], json!([14, 15]));

    let (text, _) = c.call("find_callers", json!({"symbol": "vfs_read"}));
    assert_eq!(
        text,
        "ext2_file_read  fs/ext2/file.c:6: return vfs_read(file, buf, count, pos);\n\
         kernel_read  fs/read_write.c:31: return vfs_read(file, buf, count, pos);\n\
         ksys_read  fs/read_write.c:39: return vfs_read(f, buf, count, &f->f_pos);\n\
         next: get_symbol_body, find_callees, find_references\n"
    );
    let (text, _) = c.call("find_callees", json!({"symbol": "ksys_read"}));
    assert!(
        text.starts_with("ksys_read (fs/read_write.c:35) calls 2:\n")
            && text.contains("  vfs_read  line 39 → fs/read_write.c:20\n"),
        "{text}"
    );
    let (text, _) = c.call(
        "get_symbol_body",
        json!({"symbol": "vfs_read", "max_definitions": 1, "format": "json"}),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["results"][0]["line"], 20);
    assert_eq!(v["results"][0]["end_line"], 27);
    assert!(v["results"][0]["body"]
        .as_str()
        .unwrap()
        .contains("int ret = rw_verify_area(file, pos, count);"));
    let (text, _) = c.call(
        "reachability",
        json!({"from_symbol": "ksys_read", "to_symbol": "check_count", "format": "json"}),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["results"]["reachable"], true);
    assert_eq!(
        v["results"]["chain"],
        json!(["ksys_read", "vfs_read", "rw_verify_area", "check_count"])
    );
    let (text, _) = c.call(
        "list_file_symbols",
        json!({"file_path": "fs/read_write.c", "limit": 2}),
    );
    assert_eq!(
        text,
        "fs/read_write.c:8-11: static int check_count(size_t count)  [function]\n\
         fs/read_write.c:13-18: static int rw_verify_area(struct file *file, loff_t *pos, size_t count)  [function]\n\
         [1-2 of 7 · offset=2 for more]\n\
         next: get_symbol_body, find_references\n"
    );
    let (text, err) = c.call(
        "search_code",
        json!({"query": "read from a file", "limit": 1}),
    );
    assert!(!err, "{text}");
    assert_eq!(
        text,
        "9.48  vfs_read  fs/read_write.c:20-27: ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)  [function]\n      why: name: read · body: file · called by 3 matches\n\
         [1-1 of 10 · offset=1 for more]\n\
         next: get_symbol_body, find_callers\n"
    );
    let (text, err) = c.call(
        "search_text",
        json!({"pattern": "kmap_high", "paths": ["include"]}),
    );
    assert!(!err, "{text}");
    let body: Vec<&str> = text.lines().skip(1).collect();
    assert!(text.starts_with("2 hits in 1 files · "), "{text}");
    assert_eq!(
        body,
        [
            "include/linux/highmem.h",
            "  18: void *kmap_high(struct page *page);  [#if CONFIG_HIGHMEM]",
            "  20-23: static inline void *kmap(struct page *page)  [function kmap]",
            "    22: return kmap_high(page);  [#if CONFIG_HIGHMEM]",
            "next: get_symbol_body, find_references"
        ]
    );
    let (text, err) = c.call("update_index", json!({}));
    assert!(!err, "{text}");
    let (text, err) = c.call("update_index", json!({"full": true}));
    assert!(!err && text.contains("full"), "{text}");
    // active_config, as a macro list: the !CONFIG_HIGHMEM variant is hidden with its reason.
    let (text, err) = c.call(
        "find_definition",
        json!({"symbol": "kmap", "active_config": "CONFIG_HIGHMEM=y", "format": "json"}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["definition_count"], 1);
    assert_eq!(v["results"][0]["line"], 20);
    assert_eq!(v["results"][0]["active"], true);
    assert_eq!(
        v["hidden"],
        json!([{"path": "include/linux/highmem.h", "line": 25,
                "reason": "#if !CONFIG_HIGHMEM: CONFIG_HIGHMEM=y"}])
    );
    // A .config relative to the root: Kbuild hides drivers/misc, Kconfig defines CONFIG_ names.
    let (text, err) = c.call(
        "find_definition",
        json!({"symbol": "latin1_probe", "active_config": ".config"}),
    );
    assert!(!err, "{text}");
    assert!(
        text.contains("hidden by the active config: 1 (drivers/misc/latin1.c:5 — Makefile:3 obj-$(CONFIG_MISC_DRIVER) += drivers/misc/: CONFIG_MISC_DRIVER is not set)"),
        "{text}"
    );
    let (text, err) = c.call("find_definition", json!({"symbol": "CONFIG_HIGHMEM"}));
    assert!(!err, "{text}");
    assert!(
        text.contains("\nKconfig:1: config HIGHMEM: bool \"High memory support\"; depends on X86_32  [config]  (resolved via kconfig)\n"),
        "{text}"
    );
    let (text, err) = c.call(
        "find_definition",
        json!({"symbol": "kmap", "active_config": "/nope/.config"}),
    );
    assert!(err);
    assert!(
        text.starts_with(
            "Error: active_config file not found: /nope/.config\nnext: find_definition"
        ),
        "{text}"
    );
    let (text, err) = c.call("search_symbols", json!({"query": "ext2 fi rea"}));
    assert!(!err);
    assert_eq!(
        text,
        "ext2_file_read  fs/ext2/file.c:4: static ssize_t ext2_file_read(struct file *file, char *buf, size_t count, loff_t *pos)  [function]\n\
         next: get_symbol_body, find_callers, find_definition\n"
    );
    let (text, err) = c.call("search_files", json!({"query": "ext2", "format": "json"}));
    assert!(!err);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["results"],
        json!([{"path": "fs/ext2/file.c", "lines": 15, "definitions": 2}])
    );
}

#[test]
fn bad_calls_are_errors_and_the_server_keeps_serving() {
    let (t, mut c) = served("serve-errors", &[]);
    let file = t.root.join("Makefile").display().to_string();
    let cases = [
        (
            "find_definition",
            json!({"symbol": 42}),
            "'symbol' must be a string",
        ),
        ("find_definition", json!({}), "'symbol' is required"),
        (
            "find_definition",
            json!({"symbol": "kmap", "offset": -3}),
            "'offset' must be zero or more",
        ),
        (
            "find_definition",
            json!({"symbol": "kmap", "limit": 1e18}),
            "absurd",
        ),
        (
            "find_definition",
            json!({"symbol": "kmap", "limit": "ten"}),
            "'limit' must be an integer",
        ),
        (
            "find_definition",
            json!({"symbol": "kmap", "colour": 1}),
            "unknown argument 'colour'",
        ),
        (
            "find_references",
            json!({"symbol": "kmap", "group_by": "dir"}),
            "group_by must be",
        ),
        (
            "find_definition",
            json!({"symbol": "kmap", "root": "/no/such/dir"}),
            "cannot be read",
        ),
        (
            "find_definition",
            json!({"symbol": "kmap", "root": file}),
            "is not a directory",
        ),
        ("frobnicate", json!({}), "unknown tool 'frobnicate'"),
        (
            "find_definition",
            json!({"symbol": "no_such_symbol_anywhere"}),
            "no symbol named",
        ),
        (
            "list_file_symbols",
            json!({"file_path": "../etc/passwd"}),
            "",
        ),
    ];
    for (tool, args, want) in cases {
        let (text, err) = c.call(tool, args.clone());
        assert!(err, "{tool} {args} should fail: {text}");
        assert!(
            text.starts_with("Error: ") && text.contains(want),
            "{tool} {args}: {text}"
        );
        assert!(text.contains("\nnext: "), "{tool} {args}: {text}");
    }
    // Limits above the maximum are clamped, with a warning.
    let (text, err) = c.call(
        "find_definition",
        json!({"symbol": "kmap", "limit": 5000, "format": "json"}),
    );
    assert!(!err);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["limit"], 1000);
    assert!(v["warning"].as_str().unwrap().contains("1000"));
    // A protocol-level mistake (a call without a name) does not end the session either.
    let v = c.request("tools/call", json!({"arguments": {}}));
    assert!(v["error"].is_object(), "{v}");
    let (_, err) = c.call("find_definition", json!({"symbol": "kmap"}));
    assert!(!err, "still serving");
}

/// A ctags stand-in that logs each build's start (its version probe) and is slow to answer it,
/// so concurrent first calls overlap the build.
fn counting_ctags(t: &Tree) -> (String, std::path::PathBuf) {
    let log = t.root.join("probes.log");
    let fake = t.root.join("counting-ctags");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\ncase \"$*\" in *--version*) echo probe >> '{}'; sleep 1;; esac\nexec ctags \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    assert!(Command::new("chmod")
        .arg("+x")
        .arg(&fake)
        .status()
        .unwrap()
        .success());
    (fake.display().to_string(), log)
}

#[test]
fn concurrent_first_calls_start_one_build_and_get_the_transient_message() {
    let t = fixture("serve-first");
    let (fake, log) = counting_ctags(&t);
    let mut c = Client::start(
        &["--root", &root_arg(&t)],
        &t.root,
        &[("KNAV_CTAGS", &fake)],
    );
    let ids: Vec<u64> = (0..6)
        .map(|_| {
            c.send(
                "tools/call",
                json!({"name": "find_definition", "arguments": {"symbol": "kmap"}}),
            )
        })
        .collect();
    for id in ids {
        let (text, err) = result_of(&c.response(id));
        assert!(err, "{text}");
        assert!(
            text.starts_with(&format!(
                "Error: Indexing {} for the first time (",
                t.root.display()
            )) && text.contains(" s elapsed; ")
                && text.contains("Retry this call shortly."),
            "{text}"
        );
    }
    let (text, err) = c.call_when_built("find_definition", json!({"symbol": "kmap"}));
    assert!(!err, "{text}");
    assert!(text.contains("include/linux/highmem.h:20:"), "{text}");
    let probes = std::fs::read_to_string(&log).unwrap();
    assert_eq!(probes.lines().count(), 1, "one build for six calls");
    assert_eq!(
        std::fs::read_dir(t.root.join(".knav"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("seg-"))
            .count(),
        1
    );
}

#[test]
fn an_edit_is_seen_once_the_debounce_window_has_passed() {
    let t = fixture("serve-fresh");
    std::fs::write(t.root.join(".knav.toml"), "[serve]\ndebounce_s = 2\n").unwrap();
    let root = root_arg(&t);
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    let (_, err) = c.call_when_built("find_definition", json!({"symbol": "kmap"}));
    assert!(!err);
    let checked = Instant::now();
    let file = t.root.join("fs/read_write.c");
    let mut src = std::fs::read_to_string(&file).unwrap();
    src.push_str("\nint vfs_fresh_edit(void)\n{\n\treturn 0;\n}\n");
    std::fs::write(&file, &src).unwrap();
    // Inside the window the server answers from the index it has.
    let (text, err) = c.call("find_definition", json!({"symbol": "vfs_fresh_edit"}));
    if checked.elapsed() < Duration::from_millis(1500) {
        assert!(err, "answered inside the window from the old index: {text}");
    }
    std::thread::sleep(Duration::from_millis(2100).saturating_sub(checked.elapsed()));
    let (text, err) = c.call("find_definition", json!({"symbol": "vfs_fresh_edit"}));
    assert!(!err, "{text}");
    assert!(
        text.contains("\nfs/read_write.c:55: int vfs_fresh_edit(void)  [function]\n"),
        "{text}"
    );
    // Now the tree is watched: a new directory with a file, then its removal, are seen too.
    std::fs::create_dir(t.root.join("fs/fresh")).unwrap();
    std::fs::write(
        t.root.join("fs/fresh/new.c"),
        "int fresh_new(void) { return 1; }\n",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    let (text, err) = c.call("find_definition", json!({"symbol": "fresh_new"}));
    assert!(!err && text.contains("fs/fresh/new.c:1:"), "{text}");
    std::fs::remove_dir_all(t.root.join("fs/fresh")).unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    let (text, err) = c.call("find_definition", json!({"symbol": "fresh_new"}));
    assert!(err, "{text}");
    // And an in-place edit of a file the watcher saw before.
    std::fs::write(&file, src.replace("vfs_fresh_edit", "vfs_fresh_again")).unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    let (text, err) = c.call("find_definition", json!({"symbol": "vfs_fresh_again"}));
    assert!(!err && text.contains("fs/read_write.c:55:"), "{text}");
    // A Makefile edited in place: the watcher hands it to the refresh.
    let list = "CONFIG_X86=y,CONFIG_MISC_DRIVER=y";
    let ask = json!({"symbol": "latin1_probe", "active_config": list, "format": "json"});
    let (text, _) = c.call("find_definition", ask.clone());
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["results"][0]["active"], Value::Null, "{text}");
    std::fs::write(
        t.root.join("drivers/misc/Makefile"),
        "obj-$(CONFIG_MISC_DRIVER) += blob.o latin1.o\n",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    let (text, _) = c.call("find_definition", ask);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["results"][0]["active"], true, "{text}");
    // A deleted file and a file renamed into another name.
    std::fs::remove_file(t.root.join("fs/ext2/file.c")).unwrap();
    std::fs::rename(t.root.join("mm/highmem.c"), t.root.join("mm/highmem2.c")).unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    let (text, err) = c.call("find_definition", json!({"symbol": "ext2_file_read"}));
    assert!(err, "{text}");
    let (text, _) = c.call(
        "find_references",
        json!({"symbol": "kmap", "path_prefix": "mm/"}),
    );
    assert!(text.starts_with("mm/highmem2.c:14: "), "{text}");
}

#[test]
fn a_call_during_a_full_rebuild_answers_from_the_snapshot_it_has() {
    let (t, c) = served("serve-during", &[]);
    // debounce 0 would refresh before every call; the default window makes calls use the index.
    let (fake, log) = counting_ctags(&t);
    drop(c);
    let mut c = Client::start(
        &["--root", &root_arg(&t)],
        &t.root,
        &[("KNAV_CTAGS", &fake)],
    );
    let rebuild = c.send(
        "tools/call",
        json!({"name": "update_index", "arguments": {"full": true}}),
    );
    // Wait until the rebuild is under way (its ctags probe ran), then ask.
    let started = Instant::now();
    while std::fs::read_to_string(&log).map_or(0, |s| s.lines().count()) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the rebuild never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (text, err) = c.call(
        "find_callers",
        json!({"symbol": "vfs_read", "root": root_arg(&t)}),
    );
    assert!(!err, "{text}");
    assert!(text.contains("ksys_read  fs/read_write.c:39:"), "{text}");
    let (text, err) = result_of(&c.response(rebuild));
    assert!(!err && text.contains("full"), "{text}");
    let (text, err) = c.call("find_callers", json!({"symbol": "vfs_read"}));
    assert!(
        !err && text.contains("kernel_read  fs/read_write.c:31:"),
        "{text}"
    );
}

#[test]
fn without_root_the_server_is_read_only() {
    let t = fixture("serve-ro");
    let mut c = Client::start(&[], &t.root, &[]);
    let (text, err) = c.call("find_definition", json!({"symbol": "kmap"}));
    assert!(err);
    assert!(
        text.contains("has no index") && text.contains("knav index --root"),
        "{text}"
    );
    let (text, err) = c.call("update_index", json!({}));
    assert!(err && text.contains("read-only"), "{text}");
    assert!(!t.root.join(".knav/CURRENT").exists(), "nothing was built");
    // With an index built by the CLI, it answers.
    index_with_cli(&t.root);
    let (text, err) = c.call("find_definition", json!({"symbol": "kmap"}));
    assert!(
        !err && text.contains("include/linux/highmem.h:25:"),
        "{text}"
    );
}

#[test]
fn malformed_json_rpc_lines_are_answered_and_the_session_goes_on() {
    let t = fixture("serve-wire");
    let mut c = Client::start(&[], &t.root, &[]);
    // Not JSON: -32700 with id null.
    c.write_raw("{\"jsonrpc\": \"2.0\", \"id\": 1000, \"method\": ");
    let v = c.null_id_message();
    assert_eq!(v["error"]["code"], -32700, "{v}");
    // Not a request, but with an id: answered with that id.
    c.write_raw(r#"{"id": 1001, "method": "tools/list"}"#);
    let v = c.response(1001);
    assert_eq!(v["error"]["code"], -32600, "{v}");
    // Params nested 100,000 deep: answered, no stack overflow.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1002,"method":"tools/call","params":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    c.write_raw(&deep);
    let v = c.response(1002);
    assert_eq!(v["error"]["code"], -32600, "{v}");
    // Arguments that are not an object: invalid params, not an unknown method.
    c.write_raw(
        r#"{"jsonrpc":"2.0","id":1003,"method":"tools/call","params":{"name":"find_definition","arguments":"x"}}"#,
    );
    let v = c.response(1003);
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let (_, err) = c.call("update_index", json!({}));
    assert!(err, "still serving (read-only, so an error)");
}

#[test]
fn a_10_mb_symbol_gets_a_short_error() {
    let t = fixture("serve-huge-arg");
    let mut c = Client::start(&[], &t.root, &[]);
    let huge = "a".repeat(10 << 20);
    let v = c.request(
        "tools/call",
        json!({"name": "find_definition", "arguments": {"symbol": huge}}),
    );
    let line = v.to_string();
    assert!(line.len() < 2000, "{} bytes of error", line.len());
    let (text, err) = result_of(&v);
    assert!(err && text.contains("10485760 bytes"), "{text}");
    // Over the message cap, the line is refused whole, with a short error.
    let huger = "a".repeat(17 << 20);
    c.write(
        &json!({"jsonrpc": "2.0", "id": 2000, "method": "tools/call",
                    "params": {"name": "find_definition", "arguments": {"symbol": huger}}}),
    );
    let v = c.response(2000);
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(v.to_string().len() < 500, "{v}");
}

#[test]
fn a_source_swapped_for_a_symlink_after_indexing_is_not_read_through_the_link() {
    let t = fixture("serve-swapped-link");
    let outside = t.root.with_extension("outside");
    let _ = std::fs::remove_dir_all(&outside);
    std::fs::create_dir_all(&outside).unwrap();
    // The same lines as the indexed file, but another text: followed, it would show.
    let indexed = std::fs::read_to_string(t.root.join("include/linux/highmem.h")).unwrap();
    std::fs::write(
        outside.join("x.h"),
        indexed.replace("kmap_high", "OUTSIDE_SECRET"),
    )
    .unwrap();
    index_with_cli(&t.root);
    let h = t.root.join("include/linux/highmem.h");
    std::fs::rename(&h, h.with_extension("h.bak")).unwrap();
    std::os::unix::fs::symlink(outside.join("x.h"), &h).unwrap();
    // A server without --root never refreshes: the swap stays until `knav index`.
    let mut c = Client::start(&[], &t.root, &[]);
    for (tool, args) in [
        ("get_symbol_body", json!({"symbol": "kmap"})),
        ("find_definition", json!({"symbol": "kmap"})),
        ("find_references", json!({"symbol": "kmap_high"})),
        (
            "list_file_symbols",
            json!({"file_path": "include/linux/highmem.h"}),
        ),
    ] {
        let (text, _) = c.call(tool, args.clone());
        assert!(!text.contains("OUTSIDE_SECRET"), "{tool}: {text}");
        assert!(
            text.contains("include/linux/highmem.h changed since indexing (now a symbolic link)"),
            "{tool} {args}: {text}"
        );
    }
    // A text search does not read through the link either.
    let (text, _) = c.call(
        "search_text",
        json!({"pattern": "OUTSIDE_SECRET|kmap_high", "format": "json"}),
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert!(!paths.contains(&"include/linux/highmem.h"), "{text}");
    assert!(paths.contains(&"mm/highmem.c"), "{text}");
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn mcp_active_config_reads_no_file_outside_the_root_or_its_config_dirs() {
    let (t, mut c) = served("serve-config-path", &[]);
    let outside = t.root.with_extension("configs");
    let _ = std::fs::remove_dir_all(&outside);
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "root:*:19000:0:99999:7:::\n").unwrap();
    std::fs::write(outside.join("x86.config"), "CONFIG_HIGHMEM=y\n").unwrap();
    std::fs::write(t.root.join("in.config"), "CONFIG_HIGHMEM=y\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), t.root.join("link.config")).unwrap();
    let ask = |c: &mut Client, cfg: &str| {
        c.call(
            "find_definition",
            json!({"symbol": "kmap", "active_config": cfg}),
        )
    };
    let secret = outside.join("secret").display().to_string();
    for cfg in [
        secret.as_str(),
        "../serve-config-path-x/../../etc/passwd",
        "link.config",
    ] {
        let (text, err) = ask(&mut c, cfg);
        assert!(err, "{cfg}: {text}");
        assert!(!text.contains("root:*"), "{cfg}: {text}");
        assert!(
            text.contains("is outside") || text.contains("not found"),
            "{cfg}: {text}"
        );
    }
    let (text, err) = ask(&mut c, &secret);
    assert!(text.contains("serve.config_dirs"), "{text}");
    let _ = err;
    // Inside the root it is read.
    let (text, err) = ask(&mut c, "in.config");
    assert!(!err, "{text}");
    // A directory .knav.toml names is allowed too.
    std::fs::write(
        t.root.join(".knav.toml"),
        format!("[serve]\nconfig_dirs = [\"{}\"]\n", outside.display()),
    )
    .unwrap();
    let x86 = outside.join("x86.config").display().to_string();
    let (text, err) = ask(&mut c, &x86);
    assert!(!err, "{text}");
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn mcp_root_is_limited_to_the_served_tree_and_the_allowed_ones() {
    let (t, mut c) = served("serve-root-limit", &[]);
    let other = fixture("serve-root-limit-other");
    let other_s = root_arg(&other);
    let (text, err) = c.call(
        "find_definition",
        json!({"symbol": "kmap", "root": other_s}),
    );
    assert!(err && text.contains("is not served"), "{text}");
    let (text, err) = c.call("update_index", json!({"root": other_s}));
    assert!(err && text.contains("is not served"), "{text}");
    assert!(
        !other.root.join(".knav").exists(),
        "nothing created in the other tree"
    );
    drop(c);
    // Named with --allow-root, it is served (and indexed).
    let mut c = Client::start(
        &["--root", &root_arg(&t), "--allow-root", &other_s],
        &t.root,
        &[],
    );
    let (text, err) = c.call_when_built(
        "find_definition",
        json!({"symbol": "kmap", "root": other_s}),
    );
    assert!(
        !err && text.contains("include/linux/highmem.h:25:"),
        "{text}"
    );
    drop(c);
    // Or in serve.roots of the served tree's .knav.toml.
    std::fs::write(
        t.root.join(".knav.toml"),
        format!("[serve]\nroots = [\"{other_s}\"]\n"),
    )
    .unwrap();
    let mut c = Client::start(&["--root", &root_arg(&t)], &t.root, &[]);
    let (text, err) = c.call_when_built(
        "find_definition",
        json!({"symbol": "kmap", "root": other_s}),
    );
    assert!(!err, "{text}");
    drop(c);
    // Without --root: the current directory only, and nothing is built there either.
    let third = fixture("serve-root-limit-third");
    let mut c = Client::start(&[], &third.root, &[]);
    let (text, err) = c.call(
        "find_definition",
        json!({"symbol": "kmap", "root": root_arg(&t)}),
    );
    assert!(err && text.contains("is not served"), "{text}");
    let (text, err) = c.call("find_definition", json!({"symbol": "kmap"}));
    assert!(err && text.contains("has no index"), "{text}");
    assert!(!third.root.join(".knav").exists());
}

#[test]
fn replace_symbol_rewrites_one_definition_and_find_definition_sees_the_new_lines() {
    let (t, mut c) = served("serve-replace", &[]);
    let file = t.root.join("fs/read_write.c");
    let (text, err) = c.call(
        "replace_symbol",
        json!({"file": "fs/read_write.c", "symbol": "check_count",
               "source": "static int check_count(size_t count)\n{\n\tif (count > MAX_RW_COUNT)\n\t\treturn -22;\n\treturn 0;\n}\n"}),
    );
    assert!(!err, "{text}");
    assert_eq!(
        text,
        "fs/read_write.c:8-13: static int check_count(size_t count)  [function]\n\
         replaced lines 8-11 of fs/read_write.c; check_count is now at lines 8-13\n\
         next: get_symbol_body, find_callers\n"
    );
    let now = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = now.lines().collect();
    assert_eq!(
        lines[6..15],
        [
            "",
            "static int check_count(size_t count)",
            "{",
            "\tif (count > MAX_RW_COUNT)",
            "\t\treturn -22;",
            "\treturn 0;",
            "}",
            "",
            "static int rw_verify_area(struct file *file, loff_t *pos, size_t count)"
        ]
    );
    // Two lines more: vfs_read moved from line 20 to 22, and the index knows it.
    let (text, _) = c.call("find_definition", json!({"symbol": "vfs_read"}));
    assert!(
        text.contains("fs/read_write.c:22: ssize_t vfs_read("),
        "{text}"
    );
}

#[test]
fn insert_symbol_adds_a_definition_one_blank_line_from_its_anchor() {
    let (t, mut c) = served("serve-insert", &[]);
    let file = t.root.join("fs/read_write.c");
    let (text, err) = c.call(
        "insert_symbol",
        json!({"file": "fs/read_write.c", "anchor": "check_count", "position": "after",
               "source": "\n\nstatic int helper(void)\n{\n\treturn 1;\n}\n\n"}),
    );
    assert!(!err, "{text}");
    assert!(
        text.starts_with("fs/read_write.c:13-16: static int helper(void)  [function]\n"),
        "{text}"
    );
    let (text, err) = c.call(
        "insert_symbol",
        json!({"file": "fs/read_write.c", "anchor": "check_count", "position": "before",
               "source": "#define CHECKED 1"}),
    );
    assert!(!err, "{text}");
    let now = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = now.lines().collect();
    assert_eq!(
        lines[5..21],
        [
            "#include <linux/syscalls.h>",
            "",
            "#define CHECKED 1",
            "",
            "static int check_count(size_t count)",
            "{",
            "\treturn count > MAX_RW_COUNT ? -22 : 0;",
            "}",
            "",
            "static int helper(void)",
            "{",
            "\treturn 1;",
            "}",
            "",
            "static int rw_verify_area(struct file *file, loff_t *pos, size_t count)",
            "{"
        ]
    );
    let (text, _) = c.call("find_definition", json!({"symbol": "helper"}));
    assert!(
        text.contains("fs/read_write.c:15: static int helper(void)"),
        "{text}"
    );
    let (text, _) = c.call("find_definition", json!({"symbol": "CHECKED"}));
    assert!(
        text.contains("fs/read_write.c:8: #define CHECKED 1"),
        "{text}"
    );
    // After a function comes after its EXPORT_SYMBOL line.
    let (text, err) = c.call(
        "insert_symbol",
        json!({"file": "fs/read_write.c", "anchor": "kernel_read", "position": "after",
               "source": "int after_export;"}),
    );
    assert!(!err, "{text}");
    let now = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = now.lines().collect();
    assert_eq!(
        lines[37..43],
        [
            "\treturn vfs_read(file, buf, count, pos);",
            "}",
            "EXPORT_SYMBOL(kernel_read);",
            "",
            "int after_export;",
            ""
        ]
    );
}

#[test]
fn an_edit_that_does_not_check_or_leaves_the_root_is_refused_with_the_file_unchanged() {
    let (t, mut c) = served("serve-edit-refused", &[]);
    let file = t.root.join("fs/read_write.c");
    let before = std::fs::read(&file).unwrap();
    let mut refused = |args: Value, tool: &str| -> String {
        let (text, err) = c.call(tool, args);
        assert!(err, "{text}");
        assert_eq!(std::fs::read(&file).unwrap(), before, "{text}");
        text
    };
    let text = refused(
        json!({"file": "fs/read_write.c", "symbol": "vfs_read",
               "source": "ssize_t vfs_read(struct file *file)\n{\n\treturn (1;\n}\n"}),
        "replace_symbol",
    );
    assert_eq!(
        text,
        "Error: refused: line 4 of source: '}' closes the '(' of line 3; fs/read_write.c is unchanged\n"
    );
    let text = refused(
        json!({"file": "fs/read_write.c", "symbol": "vfs_read", "source": "#if X\nint y;\n"}),
        "replace_symbol",
    );
    assert!(
        text.contains("line 1 of source: #if without #endif"),
        "{text}"
    );
    let text = refused(
        json!({"file": "fs/read_write.c", "symbol": "vfs_read",
               "source": "static int other(void)\n{\n\treturn 0;\n}\n"}),
        "replace_symbol",
    );
    assert!(
        text.contains("does not define vfs_read as ctags and knav read it (they find: other)"),
        "{text}"
    );
    let text = refused(
        json!({"file": "fs/../fs/read_write.c", "anchor": "vfs_read", "position": "after",
               "source": "int z;\n"}),
        "insert_symbol",
    );
    assert!(text.contains("is outside the root"), "{text}");
    // A symbolic link out of the root, to a directory and to a file.
    let outside = t.root.parent().unwrap().join(format!(
        "{}-outside",
        t.root.file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x.c"), "int x;\n").unwrap();
    std::os::unix::fs::symlink(&outside, t.root.join("fs/out")).unwrap();
    std::os::unix::fs::symlink(outside.join("x.c"), t.root.join("fs/x.c")).unwrap();
    for f in ["fs/out/x.c", "fs/x.c"] {
        let text = refused(
            json!({"file": f, "symbol": "x", "source": "int x = 1;\n"}),
            "replace_symbol",
        );
        assert!(
            text.contains(&format!(
                "{f} is refused (a symbolic link: knav opens only regular"
            )),
            "{text}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("x.c")).unwrap(),
        "int x;\n"
    );
    let _ = std::fs::remove_dir_all(&outside);
    let text = refused(
        json!({"file": "fs/read_write.c", "anchor": "vfs_read", "position": "inside",
               "source": "int z;\n"}),
        "insert_symbol",
    );
    assert!(text.contains("position must be before or after"), "{text}");
}

#[test]
fn a_read_only_server_refuses_edits() {
    let t = fixture("serve-edit-read-only");
    index_with_cli(&t.root);
    let mut c = Client::start(&[], &t.root, &[]);
    let before = std::fs::read(t.root.join("fs/read_write.c")).unwrap();
    let (text, err) = c.call(
        "replace_symbol",
        json!({"file": "fs/read_write.c", "symbol": "vfs_read", "source": "int vfs_read;\n"}),
    );
    assert!(
        err && text.contains("replace_symbol refused: this server is read-only"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(t.root.join("fs/read_write.c")).unwrap(),
        before
    );
}

#[test]
fn change_impact_and_review_diff_answer_over_the_wire_as_the_cli_does() {
    let (t, mut c) = served("serve-change", &[]);
    let (text, err) = c.call("change_impact", json!({"symbol": "ksys_read", "depth": 1}));
    assert!(!err, "{text}");
    let cli = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["impact", "ksys_read", "--depth", "1", "--root"])
        .arg(&t.root)
        .output()
        .unwrap();
    // The same answer; the CLI names its commands where MCP names tools.
    let cli = String::from_utf8_lossy(&cli.stdout);
    let (answer, next) = text.rsplit_once("next: ").unwrap();
    assert_eq!(next, "find_callers, get_symbol_body, reachability\n");
    assert_eq!(
        cli,
        format!("{answer}next: knav callers ksys_read, knav body ksys_read, knav reach ksys_read TARGET\n")
    );
    assert!(
        text.starts_with("ksys_read: 2 direct callers, 0 more within depth 1"),
        "{text}"
    );
    // The diff's last line is a context line of one space: kept, or the hunk would be short.
    let diff = "--- a/fs/read_write.c\n+++ b/fs/read_write.c\n@@ -8,5 +8,5 @@\n \
                static int check_count(size_t count)\n {\n-\treturn count > MAX_RW_COUNT ? -22 : 0;\n\
                +\treturn count > MAX_RW_COUNT ? -75 : 0;\n }\n \n";
    let (text, err) = c.call("review_diff", json!({"diff": diff, "format": "json"}));
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["results"]["definitions"][0]["symbol"], "check_count");
    assert_eq!(v["results"]["definitions"][0]["callers"], 1);
    let (text, err) = c.call("review_diff", json!({"diff": "no diff here"}));
    assert!(
        err && text.starts_with("Error: no file in the diff"),
        "{text}"
    );
}

#[test]
fn search_code_in_one_server_answers_a_question_again_as_the_first_time() {
    // The server keeps its snapshot and its scoring sums from call to call: a question asked
    // again, after others, gets the first answer, and the CLI's.
    let (t, mut c) = served("serve-search-again", &[]);
    let (first, err) = c.call("search_code", json!({"query": "read a file"}));
    assert!(
        !err && first.starts_with("9.48  vfs_read  fs/read_write.c:20-27:"),
        "{first}"
    );
    let (other, _) = c.call(
        "search_code",
        json!({"query": "map a page into kernel memory"}),
    );
    assert!(other.contains("bpf_map_lookup"), "{other}");
    let (again, _) = c.call("search_code", json!({"query": "read a file"}));
    assert_eq!(again, first);
    let cli = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["search", "read", "a", "file", "--root"])
        .arg(&t.root)
        .output()
        .unwrap();
    // The same hits; only the `next:` line names commands on the CLI.
    let hits = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with("next:"))
            .map(String::from)
            .collect()
    };
    assert_eq!(hits(&again), hits(&String::from_utf8_lossy(&cli.stdout)));
}

#[test]
fn a_long_body_over_mcp_is_cut_to_an_agents_budget_and_names_the_lines_left() {
    // A 280-line function (10,247 bytes): the CLI shows it whole, an agent
    // (no limit asked) gets the first 6,000 bytes and the lines to read for the rest.
    let mut long = String::from("int long_one(int x)\n{\n");
    for i in 0..276 {
        long.push_str(&format!("\tx = x * 3 + {i:>5}; /* step {i:>5} */\n"));
    }
    long.push_str("\treturn x;\n}\n");
    let t = common::tree("serve-long-body", &[("lib/long.c", &long)]);
    let root = root_arg(&t);
    let cli = Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["body", "long_one", "--format", "json", "--root", &root])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(
        v["results"][0]["body"].as_str().unwrap().len(),
        long.len() - 1,
        "{v}"
    );
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    let (text, err) = c.call_when_built(
        "get_symbol_body",
        json!({"symbol": "long_one", "format": "json"}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let body = v["results"][0]["body"].as_str().unwrap();
    assert!(body.len() <= 6_000 && body.len() > 5_000, "{}", body.len());
    assert!(body.starts_with("int long_one(int x)\n{\n"), "{body}");
    assert_eq!(v["results"][0]["body_truncated"], true, "{v}");
    let w = v["warning"].as_str().unwrap();
    assert!(
        w.contains(
            "the body of long_one at lib/long.c:1 is cut at 6000 bytes; read lines 1-280 of the file for the rest"
        ),
        "{w}"
    );
    // Asked for a page of its own, an agent still gets the cut body, not the whole one.
    let (text, _) = c.call(
        "get_symbol_body",
        json!({"symbol": "long_one", "limit": 100}),
    );
    assert!(text.len() < 7_000, "{}", text.len());
}

#[test]
fn a_new_text_file_is_found_by_search_text_once_the_debounce_window_has_passed() {
    // The server's watcher counted only C sources and build files: a new text file reached
    // search_text at the next full stat (60 s).
    let t = fixture("serve-fresh-text");
    std::fs::write(t.root.join(".knav.toml"), "[serve]\ndebounce_s = 1\n").unwrap();
    let root = root_arg(&t);
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    let (_, err) = c.call_when_built("search_text", json!({"pattern": "kmap"}));
    assert!(!err);
    // A first refresh after the build, so that the tree is watched.
    std::thread::sleep(Duration::from_millis(1100));
    let (_, err) = c.call("search_text", json!({"pattern": "kmap"}));
    assert!(!err);
    std::fs::create_dir_all(t.root.join("Documentation/fresh")).unwrap();
    std::fs::write(
        t.root.join("Documentation/fresh/notes.txt"),
        "a word nobody wrote: zorblattic\n",
    )
    .unwrap();
    std::fs::write(t.root.join("README.fresh"), "zorblattic again\n").unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    let (text, err) = c.call(
        "search_text",
        json!({"pattern": "zorblattic", "format": "json"}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let mut paths: Vec<String> = v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .filter_map(|h| h["path"].as_str().map(String::from))
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        ["Documentation/fresh/notes.txt", "README.fresh"],
        "{v}"
    );
}

#[test]
fn find_device_answers_over_mcp_as_the_cli_does() {
    let t = fixture("serve-device");
    index_with_cli(&t.root);
    let root = root_arg(&t);
    let mut c = Client::start(&["--root", &root, "--tools", "hardware"], &t.root, &[]);
    let (text, err) = c.call(
        "find_device",
        json!({"device": "fsl,imx21-i2c", "limit": 1}),
    );
    assert!(!err, "{text}");
    let (code, cli) = common::knav(&t, &["device", "fsl,imx21-i2c", "--limit", "1"]);
    assert_eq!(code, 0);
    assert_eq!(
        text.trim_end(),
        cli.replace("next: knav grep", "next: search_text")
            .replace("--offset 1", "offset=1")
            .trim_end()
    );
    assert!(
        text.starts_with(
            "fsl,imx21-i2c: 1 binding, 2 boards · nodes: 0 in .dts, 2 in .dtsi, 0 in overlays\n\
             Documentation/devicetree/bindings/i2c/acme,soc-i2c.yaml:13: binding  Acme SoC I2C controller\n\
             arch/arm/boot/dts/acme/acme-board-a.dts  \"Acme Board A\"\n"
        ),
        "{text}"
    );
    let (text, err) = c.call(
        "find_device",
        json!({"device": "fsl,imx21-i2c", "format": "json", "offset": 1}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["tool"], "find_device");
    assert_eq!(
        v["results"]["board_rows"][0]["path"],
        "arch/arm/boot/dts/acme/acme-board-b.dts"
    );
    let (text, err) = c.call("find_device", json!({"device": "acme,soc-i2d"}));
    assert!(err, "{text}");
    assert!(text.contains("did you mean: acme,soc-i2c"), "{text}");
    let (text, err) = c.call("find_device", json!({"device": "x", "path_prefix": "arch"}));
    assert!(err, "{text}");
}
