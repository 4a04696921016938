//! search_code (`knav search`): ranked natural-language search over definitions, with exact
//! answers on small trees: field weights, stemming, the kernel before its copies, kind filter,
//! empty answers, paging and a refreshed index.

mod common;
use common::{hits, json, knav, knav_output, names, tree};

const OOM: &str = "\
/**
 * oom_badness - heuristic function to determine which candidate task to kill
 * @p: task struct of which task we should calculate
 */
long oom_badness(struct task_struct *p)
{
\treturn p->points;
}

/* Pick the process to kill when memory is short. */
static void select_bad_process(struct oom_control *oc)
{
\toom_badness(oc->chosen);
}

struct oom_control {
\tint order;
};
";

/// Four functions with the word `reap` in one field each, otherwise alike.
const FIELDS: &[(&str, &str)] = &[
    ("mm/a.c", "int reap_one(void)\n{\n\treturn zero();\n}\n"),
    (
        "mm/b.c",
        "/* reap */\nint other_one(void)\n{\n\treturn zero();\n}\n",
    ),
    ("reap/c.c", "int third_one(void)\n{\n\treturn zero();\n}\n"),
    ("mm/d.c", "int fourth_one(void)\n{\n\treturn reap();\n}\n"),
];

#[test]
fn a_word_in_the_name_outranks_the_comment_the_path_and_the_body() {
    let t = tree("code-fields", FIELDS);
    assert_eq!(
        hits(&t, &["search", "reap"]),
        [
            ("reap_one".to_string(), "mm/a.c:1".to_string()),
            ("other_one".to_string(), "mm/b.c:2".to_string()),
            ("third_one".to_string(), "reap/c.c:1".to_string()),
            ("fourth_one".to_string(), "mm/d.c:1".to_string()),
        ]
    );
}

#[test]
fn words_meet_their_stems_and_stopwords_are_dropped() {
    let t = tree("code-stems", &[("mm/oom_kill.c", OOM)]);
    // "killing" → kill, "tasks" → task, "candidates" → candid; "the" dropped. oom_control
    // has only its path's `kill`.
    assert_eq!(
        names(&t, &["search", "the", "candidates", "killing", "tasks"]),
        ["oom_badness", "select_bad_process", "oom_control"]
    );
    // `task` also matches `process` (the word kernel code writes as `task`, and back), in
    // select_bad_process's name and comment.
    let (code, v) = json(&t, &["search", "which", "task", "to", "kill"]);
    assert_eq!(code, 0);
    let first = &v["results"][0];
    assert_eq!(first["symbol"], "select_bad_process");
    assert_eq!(first["end_line"], 14);
    assert_eq!(first["kind"], "function");
    assert_eq!(
        first["comment"],
        "Pick the process to kill when memory is short."
    );
    assert!(first["score"].as_f64().unwrap() > 0.0, "{first}");
    assert_eq!(
        v["results"][1]["comment"],
        "oom_badness - heuristic function to determine which candidate task to kill"
    );
    assert_eq!(v["next_tools"][0], "get_symbol_body");
}

#[test]
fn the_kind_filter_keeps_one_kind() {
    let t = tree("code-kind", &[("mm/oom_kill.c", OOM)]);
    assert_eq!(
        names(&t, &["search", "oom"]),
        ["oom_badness", "oom_control", "select_bad_process"]
    );
    assert_eq!(
        hits(&t, &["search", "oom", "--kind", "struct"]),
        [("oom_control".to_string(), "mm/oom_kill.c:16".to_string())]
    );
}

#[test]
fn the_kernel_comes_before_the_copies_in_tools_and_each_name_once() {
    // The same file twice: the copy in tools/ comes first in file order; the kernel's is the
    // answer, and each name is answered once, by its best definition.
    let t = tree(
        "code-tools",
        &[("tools/perf/oom_kill.c", OOM), ("virt/kvm/oom_kill.c", OOM)],
    );
    assert_eq!(
        hits(&t, &["search", "heuristic", "badness"]),
        [
            (
                "oom_badness".to_string(),
                "virt/kvm/oom_kill.c:5".to_string()
            ),
            (
                "select_bad_process".to_string(),
                "virt/kvm/oom_kill.c:11".to_string()
            ),
        ]
    );
}

#[test]
fn the_scope_keeps_code_tests_or_docs() {
    let t = tree(
        "code-scope",
        &[
            ("samples/oom/oom_kill.c", OOM),
            ("mm/oom_kill.c", OOM),
            ("mm/kasan/oom_test.c", OOM),
            (
                "Documentation/mm/oom.rst",
                "OOM killer\n==========\n\nThe heuristic badness of a task picks the victim.\n",
            ),
        ],
    );
    let paths =
        |args: &[&str]| -> Vec<String> { hits(&t, args).into_iter().map(|(_, p)| p).collect() };
    assert_eq!(
        paths(&["search", "badness", "--scope", "code"]),
        ["mm/oom_kill.c:5", "mm/oom_kill.c:11"]
    );
    assert_eq!(
        paths(&["search", "badness", "--scope", "tests"]),
        ["mm/kasan/oom_test.c:5", "mm/kasan/oom_test.c:11"],
        "samples/ and KUnit tests, one result per name"
    );
    assert_eq!(
        paths(&["search", "badness"]),
        ["mm/oom_kill.c:5", "mm/oom_kill.c:11"],
        "all: the kernel's own code before its tests"
    );
    let (_, v) = json(&t, &["search", "heuristic", "badness", "--scope", "docs"]);
    assert_eq!(v["tool"], "search_code");
    assert_eq!(v["results"][0]["path"], "Documentation/mm/oom.rst", "{v}");
    let (code, _, err) = knav_output(&t, &["search", "badness", "--scope", "drivers"]);
    assert!(code == 2 && err.contains("drivers"), "{code} {err}");
}

#[test]
fn each_answer_says_which_words_matched_and_where() {
    let t = tree("code-why", &[("mm/oom_kill.c", OOM)]);
    let (_, v) = json(&t, &["search", "pick", "process", "kill", "memory"]);
    let why: Vec<(&str, &str)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["symbol"].as_str().unwrap(), r["why"].as_str().unwrap()))
        .collect();
    assert_eq!(
        why,
        [
            (
                "select_bad_process",
                "name: process · comment: pick kill memory"
            ),
            (
                "oom_badness",
                "comment: process (task) kill · called by 1 match"
            ),
            ("oom_control", "path: kill"),
        ]
    );
    let (_, text) = knav(&t, &["search", "pick", "process", "kill", "memory"]);
    assert!(
        text.contains("\n      why: name: process · comment: pick kill memory\n"),
        "{text}"
    );
}

#[test]
fn an_abbreviation_counts_as_the_words_it_stands_for() {
    let t = tree(
        "code-abbrev",
        &[
            (
                "kernel/irq/handle.c",
                "int handle_irq(void)\n{\n\treturn 0;\n}\n",
            ),
            ("kernel/sys.c", "int do_syscall(void)\n{\n\treturn 0;\n}\n"),
        ],
    );
    assert_eq!(names(&t, &["search", "interrupt"]), ["handle_irq"]);
    // One-word `interrupt` goes both ways; `system call` needs both its words.
    assert_eq!(
        names(&t, &["search", "handle", "interrupt"]),
        names(&t, &["search", "handle", "irq"])
    );
    assert_eq!(names(&t, &["search", "system", "call"]), ["do_syscall"]);
    assert_eq!(names(&t, &["search", "system"]), Vec::<String>::new());
}

/// A function alike in words, lines and use wherever it is (its file's name matches no query;
/// a one-letter word of a name is no term).
const ALIKE: &str = "/* Reap the dead. */\nint reap(void)\n{\n\treturn 0;\n}\n";

/// [`ALIKE`] named `name`.
fn alike(name: &str) -> String {
    ALIKE.replace("reap(", &format!("{name}("))
}

#[test]
fn the_core_comes_before_drivers_and_other_architectures() {
    let t = tree(
        "code-core",
        &[
            ("arch/arm/kernel/a.c", &alike("reap_a")),
            ("arch/x86/kernel/a.c", &alike("reap_b")),
            ("drivers/net/a.c", &alike("reap_c")),
            ("kernel/a.c", &alike("reap_d")),
        ],
    );
    let found = hits(&t, &["search", "reap"]);
    let paths: Vec<&str> = found.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "arch/x86/kernel/a.c:2",
            "kernel/a.c:2",
            "arch/arm/kernel/a.c:2",
            "drivers/net/a.c:2",
        ]
    );
}

#[test]
fn a_long_function_comes_before_a_short_one_matching_alike() {
    let long: String = (0..400).map(|i| format!("\tstep({i});\n")).collect();
    let t = tree(
        "code-size",
        &[
            (
                "mm/a.c",
                "/* Reap the dead. */\nint reap_one(void)\n{\n\treturn 0;\n}\n",
            ),
            (
                "mm/b.c",
                &format!("/* Reap the dead. */\nint reap_big(void)\n{{\n{long}}}\n"),
            ),
        ],
    );
    // Alike but in their length (and their names' second words, no query's).
    assert_eq!(names(&t, &["search", "reap"]), ["reap_big", "reap_one"]);
}

#[test]
fn a_query_matching_nothing_says_so_and_suggests_find_and_grep() {
    let t = tree("code-empty", &[("mm/oom_kill.c", OOM)]);
    let (code, v) = json(&t, &["search", "zebra", "giraffe"]);
    assert_eq!((code, v["total"].as_u64()), (0, Some(0)), "{v}");
    assert_eq!(
        v["message"],
        "no definition matches 'zebra giraffe'; try other words, `knav find` \
         (search_symbols) for parts of a name, or `knav grep` (search_text) for text"
    );
    assert_eq!(
        v["next_tools"],
        serde_json::json!(["search_symbols", "search_text"])
    );
    let (_, out) = knav(&t, &["search", "the", "of"]);
    assert!(
        out.starts_with("Error: query 'the of' has no word to search for"),
        "{out}"
    );
}

#[test]
fn pages_cut_the_ranked_list_and_the_total_is_exact() {
    let t = tree("code-pages", FIELDS);
    let (_, v) = json(&t, &["search", "reap", "--limit", "2", "--offset", "1"]);
    let page: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["symbol"].as_str().unwrap())
        .collect();
    assert_eq!(page, ["other_one", "third_one"]);
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(4), Some(true))
    );
    let (_, text) = knav(&t, &["search", "reap", "--limit", "2"]);
    let rows: Vec<&str> = text.lines().collect();
    assert!(
        rows[0].ends_with("reap_one  mm/a.c:1-4: int reap_one(void)  [function]"),
        "{text}"
    );
    assert_eq!(rows[1], "      why: name: reap");
    assert_eq!(
        rows[2].split_whitespace().nth(1),
        Some("other_one"),
        "{text}"
    );
    assert_eq!(rows[3], "      // reap");
    assert_eq!(rows[4], "      why: comment: reap");
    assert_eq!(rows[5], "[1-2 of 4 · --offset 2 for more]");
}

#[test]
fn a_refreshed_file_is_searched_in_its_new_version_only() {
    let t = tree(
        "code-delta",
        &[
            ("mm/oom_kill.c", OOM),
            ("mm/other.c", "int zero(void)\n{\n\treturn 0;\n}\n"),
        ],
    );
    assert_eq!(
        names(&t, &["search", "badness"]),
        ["oom_badness", "select_bad_process"]
    );
    let path = t.root.join("mm/oom_kill.c");
    std::fs::write(&path, OOM.replace("oom_badness", "oom_score")).unwrap();
    let (code, out) = knav(&t, &["index"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("index incremental"), "{out}");
    // `badness` and `bad` share their stem; the old oom_badness is gone, not listed twice.
    assert_eq!(names(&t, &["search", "badness"]), ["select_bad_process"]);
    assert_eq!(
        hits(&t, &["search", "score"]),
        [
            ("oom_score".to_string(), "mm/oom_kill.c:5".to_string()),
            (
                "select_bad_process".to_string(),
                "mm/oom_kill.c:11".to_string()
            ),
        ]
    );
}

#[test]
fn an_abbreviation_the_tree_uses_is_learned_from_its_names_and_comments() {
    // Three functions named `*_rcv` say "receive" in their comments, and thirty others say
    // nothing of it: `rcv` is learned as short for `receive`, so the uncommented `tipc_rcv`
    // answers; `rc`, never named beside "receive", is not learned.
    let mut commented = String::new();
    for p in ["tcp", "udp", "raw"] {
        commented.push_str(&format!(
            "/* Receive a frame from the wire. */\nint {p}_rcv(void)\n{{\n\treturn 0;\n}}\n"
        ));
    }
    let mut others = String::new();
    for i in 0..30 {
        others.push_str(&format!(
            "/* Count the widgets. */\nint widget_count_{i}(void)\n{{\n\treturn 0;\n}}\n"
        ));
    }
    others.push_str("int rc_setup(void)\n{\n\treturn 0;\n}\n");
    let t = tree(
        "code-learned",
        &[
            ("net/a.c", commented.as_str()),
            ("net/b.c", "int tipc_rcv(void)\n{\n\treturn 0;\n}\n"),
            ("lib/w.c", others.as_str()),
        ],
    );
    let found = names(&t, &["search", "receive"]);
    assert!(found.contains(&"tipc_rcv".to_string()), "{found:?}");
    assert!(!found.contains(&"rc_setup".to_string()), "{found:?}");
    let (_, v) = json(&t, &["search", "receive"]);
    let why: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["symbol"] == "tipc_rcv")
        .map(|r| r["why"].as_str().unwrap())
        .collect();
    assert_eq!(why, ["name: receive (rcv)"]);
}

#[test]
fn the_generic_layer_comes_before_one_filesystems_code_unless_the_question_names_it() {
    let t = tree(
        "code-leaf",
        &[
            ("fs/btrfs/inode.c", &alike("reap_a")),
            ("fs/inode.c", &alike("reap_b")),
        ],
    );
    assert_eq!(names(&t, &["search", "reap"]), ["reap_b", "reap_a"]);
    assert_eq!(
        names(&t, &["search", "btrfs", "reap"]),
        ["reap_a", "reap_b"]
    );
}

#[test]
fn a_function_on_a_line_of_a_million_is_found_by_its_name_not_by_the_whole_line() {
    // A generated file: over 64 KiB on one line. Each function's body words would be the
    // whole line's (ctags gives lines), read again for every function on it.
    let line: String = (0..3000)
        .map(|i| format!("int gen_item{i}(int a){{return reap_call{i}(a);}} "))
        .collect();
    assert!(line.len() > 1 << 16);
    let t = tree(
        "code-long-line",
        &[
            ("gen/one.c", format!("{line}\n").as_str()),
            (
                "mm/d.c",
                "int fourth_one(void)\n{\n\treturn reap_call7();\n}\n",
            ),
        ],
    );
    assert_eq!(
        hits(&t, &["search", "gen", "item2999"])[0],
        ("gen_item2999".to_string(), "gen/one.c:1".to_string())
    );
    // The line's words are no function's body on it: only mm/d.c has the body word.
    assert_eq!(names(&t, &["search", "reap", "call7"]), ["fourth_one"]);
}

#[test]
fn the_function_that_the_matching_code_calls_ranks_above_its_callers() {
    // Five serial drivers' receive functions carry the question's words in their names; the
    // function they all call, which does what was asked, has them only in its comment.
    let drivers: Vec<(String, String)> = ["alpha", "beta", "gamma", "delta", "epsilon"]
        .iter()
        .map(|d| {
            let src = format!(
                "static void {d}_serial_receive_characters(struct uart_port *port)\n{{\n\
                 \tread_fifo(port);\n\ttty_flip_buffer_push(&port->state->port);\n}}\n"
            );
            (format!("drivers/tty/serial/{d}.c"), src)
        })
        .collect();
    let mut files: Vec<(&str, &str)> = vec![(
        "drivers/tty/tty_buffer.c",
        "/* Push the characters a serial port received to the line discipline. */\n\
         void tty_flip_buffer_push(struct tty_port *port)\n{\n\tqueue(port);\n}\n",
    )];
    files.extend(drivers.iter().map(|(p, s)| (p.as_str(), s.as_str())));
    let t = tree("code-votes", &files);
    let got = names(&t, &["search", "serial", "receive", "characters"]);
    assert_eq!(
        got.first().map(String::as_str),
        Some("tty_flip_buffer_push"),
        "{got:?}"
    );
    assert_eq!(got.len(), 6, "{got:?}");
}
