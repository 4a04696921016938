//! What knav promises about its root (SECURITY.md), each finding of the hostile probe tested
//! by name: edits and refreshes raced by swapping a directory or a file for a link (at a known
//! point: a stand-in ctags that waits for the test), scratch files, edits that lose nothing,
//! and a bounded loop of swaps while edits and refreshes run.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

mod common;
use common::client::Client;
use common::gate::{gated_ctags, wait_for};
use common::{outside, tree, Outside, Tree};

/// A served tree with its index built; `env` for the server.
fn serve(t: &Tree, first: &str, env: &[(&str, &str)]) -> Client {
    let root = t.root.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, env);
    let (text, err) = c.call_when_built("find_definition", json!({"symbol": first}));
    assert!(!err, "{text}");
    c
}

const TARGET: &str = "int target(void)\n{\n\treturn 1;\n}\n";
const NEW_TARGET: &str = "int target(void)\n{\n\treturn 2;\n}\n";

/// Sends replace_symbol of `target` in `e/e.c` without waiting; its request id.
fn send_replace(c: &mut Client) -> u64 {
    c.send(
        "tools/call",
        json!({"name": "replace_symbol",
               "arguments": {"file": "e/e.c", "symbol": "target", "source": NEW_TARGET}}),
    )
}

/// Starts an edit of `e/e.c` held inside its ctags check, runs `swap`, lets the check go on,
/// and returns the edit's answer.
fn edit_raced_by(name: &str, swap: impl FnOnce(&Path)) -> (Tree, Outside, String, bool) {
    let t = tree(name, &[("e/e.c", TARGET)]);
    let out = outside(name);
    std::fs::create_dir_all(out.0.join("e")).unwrap();
    std::fs::write(out.0.join("e/e.c"), TARGET).unwrap();
    std::fs::write(out.0.join("e.c"), TARGET).unwrap();
    let gate = outside(&format!("{name}-gate"));
    let ctags = gated_ctags(&gate.0);
    let mut c = serve(&t, "target", &[("KNAV_CTAGS", ctags.to_str().unwrap())]);
    std::fs::write(gate.0.join("armed"), "").unwrap();
    let id = send_replace(&mut c);
    wait_for(&gate.0.join("started"));
    swap(&t.root);
    std::fs::write(gate.0.join("go"), "").unwrap();
    let (text, err) = common::client::result_of(&c.response(id));
    (t, out, text, err)
}

#[test]
fn an_edit_does_not_write_outside_when_its_directory_is_swapped_for_a_link() {
    let mut moved_to = PathBuf::new();
    let (t, out, text, err) = edit_raced_by("sec-dir-swap", |root| {
        moved_to = root.join("e.real");
        std::fs::rename(root.join("e"), &moved_to).unwrap();
        std::os::unix::fs::symlink(outside_dir(root, "sec-dir-swap").join("e"), root.join("e"))
            .unwrap();
    });
    assert!(err, "{text}");
    assert!(
        text.contains("its directory was moved or replaced while the edit was checked")
            || text.contains("is refused (a symbolic link"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(out.0.join("e/e.c")).unwrap(),
        TARGET
    );
    assert_eq!(
        std::fs::read_to_string(moved_to.join("e.c")).unwrap(),
        TARGET
    );
    drop(t);
}

/// The outside directory `edit_raced_by` made for test `name`.
fn outside_dir(_root: &Path, name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("knav-outside-{name}-{}", std::process::id()))
}

#[test]
fn an_edit_does_not_write_outside_when_its_file_is_swapped_for_a_link() {
    let (t, out, text, err) = edit_raced_by("sec-file-swap", |root| {
        std::fs::rename(root.join("e/e.c"), root.join("e/e.c.bak")).unwrap();
        std::os::unix::fs::symlink(
            outside_dir(root, "sec-file-swap").join("e.c"),
            root.join("e/e.c"),
        )
        .unwrap();
    });
    assert!(err, "{text}");
    assert!(text.contains("e/e.c is refused (a symbolic link"), "{text}");
    assert_eq!(std::fs::read_to_string(out.0.join("e.c")).unwrap(), TARGET);
    assert_eq!(
        std::fs::read_to_string(t.root.join("e/e.c.bak")).unwrap(),
        TARGET
    );
    assert!(std::fs::symlink_metadata(t.root.join("e/e.c"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn an_edit_check_writes_no_scratch_file() {
    // The check's text went to a predictable /tmp path that followed links; now ctags reads
    // it on its input. While ctags runs, and after, the temporary directory holds nothing new.
    let tmp = outside("sec-scratch-tmp");
    let t = tree("sec-scratch", &[("e/e.c", TARGET)]);
    let gate = outside("sec-scratch-gate");
    let ctags = gated_ctags(&gate.0);
    let mut c = serve(
        &t,
        "target",
        &[
            ("KNAV_CTAGS", ctags.to_str().unwrap()),
            ("TMPDIR", tmp.0.to_str().unwrap()),
        ],
    );
    let listing = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = listing(&tmp.0);
    std::fs::write(gate.0.join("armed"), "").unwrap();
    let id = send_replace(&mut c);
    wait_for(&gate.0.join("started"));
    assert_eq!(listing(&tmp.0), before, "a scratch file while ctags runs");
    // Nor beside the file: the temporary file there is made only after the check.
    assert_eq!(listing(&t.root.join("e")), ["e.c"]);
    std::fs::write(gate.0.join("go"), "").unwrap();
    let (text, err) = common::client::result_of(&c.response(id));
    assert!(!err, "{text}");
    assert_eq!(listing(&tmp.0), before);
    assert_eq!(listing(&t.root.join("e")), ["e.c"]);
    // At every start of ctags during the check, too.
    let seen = std::fs::read_to_string(gate.0.join("tmp-seen")).unwrap();
    assert_eq!(
        seen, "",
        "the temporary directory held files when ctags started"
    );
    assert_eq!(
        std::fs::read_to_string(t.root.join("e/e.c")).unwrap(),
        NEW_TARGET
    );
}

#[test]
fn a_replace_keeps_the_line_above_that_ends_in_a_comment() {
    let text = "int call_count; // number of calls\nint target_one(void)\n{\n\treturn 1;\n}\n\
                \nstatic int /* kept */\ntarget_two(void)\n{\n\treturn 2;\n}\n";
    let t = tree("sec-comment-above", &[("a.c", text)]);
    let mut c = serve(&t, "target_one", &[]);
    let (answer, err) = c.call(
        "replace_symbol",
        json!({"file": "a.c", "symbol": "target_one",
               "source": "int target_one(void)\n{\n\treturn 10;\n}\n"}),
    );
    assert!(!err, "{answer}");
    assert!(answer.contains("replaced lines 2-5 of a.c"), "{answer}");
    let (answer, err) = c.call(
        "replace_symbol",
        json!({"file": "a.c", "symbol": "target_two",
               "source": "static int target_two(void)\n{\n\treturn 20;\n}\n"}),
    );
    assert!(!err, "{answer}");
    assert!(answer.contains("replaced lines 7-11 of a.c"), "{answer}");
    assert_eq!(
        std::fs::read_to_string(t.root.join("a.c")).unwrap(),
        "int call_count; // number of calls\nint target_one(void)\n{\n\treturn 10;\n}\n\
         \nstatic int target_two(void)\n{\n\treturn 20;\n}\n"
    );
}

#[test]
fn a_replace_whose_source_brings_a_comment_replaces_the_definitions_comment() {
    let text = "int keep;\n\n/**\n * old doc\n */\nint target(void)\n{\n\treturn 1;\n}\n";
    let t = tree("sec-doc-comment", &[("a.c", text)]);
    let mut c = serve(&t, "target", &[]);
    // Without a comment in the source, the definition's own stays.
    let (answer, err) = c.call(
        "replace_symbol",
        json!({"file": "a.c", "symbol": "target", "source": NEW_TARGET}),
    );
    assert!(!err, "{answer}");
    assert_eq!(
        std::fs::read_to_string(t.root.join("a.c")).unwrap(),
        "int keep;\n\n/**\n * old doc\n */\nint target(void)\n{\n\treturn 2;\n}\n"
    );
    let (answer, err) = c.call(
        "replace_symbol",
        json!({"file": "a.c", "symbol": "target",
               "source": "/* new doc */\nint target(void)\n{\n\treturn 3;\n}\n"}),
    );
    assert!(!err, "{answer}");
    assert_eq!(
        std::fs::read_to_string(t.root.join("a.c")).unwrap(),
        "int keep;\n\n/* new doc */\nint target(void)\n{\n\treturn 3;\n}\n"
    );
}

#[test]
fn an_edit_keeps_the_files_owner_group_and_mode() {
    let t = tree("sec-owner", &[("e/e.c", TARGET)]);
    let file = t.root.join("e/e.c");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let (uid, gid) = if root {
        std::os::unix::fs::chown(&file, Some(1234), Some(2345)).unwrap();
        (1234, 2345)
    } else {
        // Not root: a file can be given no other owner; its own must still be kept.
        let m = std::fs::metadata(&file).unwrap();
        eprintln!("not root: the owner kept is the test's own");
        (m.uid(), m.gid())
    };
    let mut c = serve(&t, "target", &[]);
    let (answer, err) = c.call(
        "replace_symbol",
        json!({"file": "e/e.c", "symbol": "target", "source": NEW_TARGET}),
    );
    assert!(!err, "{answer}");
    let m = std::fs::metadata(&file).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (uid, gid, 0o640));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), NEW_TARGET);
}

#[test]
fn a_nul_byte_in_source_is_refused_and_the_file_stays_indexed() {
    let t = tree("sec-nul", &[("e/e.c", TARGET)]);
    let mut c = serve(&t, "target", &[]);
    for (bad, byte) in [("\u{0}", "0x00"), ("\u{1b}[2J", "0x1b")] {
        let (answer, err) = c.call(
            "replace_symbol",
            json!({"file": "e/e.c", "symbol": "target",
                   "source": format!("int target(void)\n{{\n\treturn 2;{bad}\n}}\n")}),
        );
        assert!(err, "{answer}");
        assert!(
            answer.contains(&format!("line 3 of source holds the control byte {byte}")),
            "{answer}"
        );
        assert_eq!(
            std::fs::read_to_string(t.root.join("e/e.c")).unwrap(),
            TARGET
        );
    }
    let (answer, err) = c.call("find_definition", json!({"symbol": "target"}));
    assert!(!err && answer.contains("e/e.c:1"), "{answer}");
}

#[test]
fn a_crlf_file_stays_crlf_after_an_edit() {
    let crlf = |s: &str| s.replace('\n', "\r\n");
    let t = tree(
        "sec-crlf",
        &[(
            "a.c",
            crlf("int a;\n\nint target(void)\n{\n\treturn 1;\n}\n"),
        )],
    );
    let mut c = serve(&t, "target", &[]);
    let (answer, err) = c.call(
        "replace_symbol",
        json!({"file": "a.c", "symbol": "target", "source": NEW_TARGET}),
    );
    assert!(!err, "{answer}");
    let (answer, err) = c.call(
        "insert_symbol",
        json!({"file": "a.c", "anchor": "target", "position": "after",
               "source": "int after(void)\r\n{\n\treturn 3;\n}\n"}),
    );
    assert!(!err, "{answer}");
    let (answer, err) = c.call(
        "insert_symbol",
        json!({"file": "a.c", "anchor": "target", "position": "before",
               "source": "int before(void)\n{\n\treturn 4;\n}\n"}),
    );
    assert!(!err, "{answer}");
    assert_eq!(
        std::fs::read_to_string(t.root.join("a.c")).unwrap(),
        crlf(
            "int a;\n\nint before(void)\n{\n\treturn 4;\n}\n\nint target(void)\n{\n\treturn 2;\n}\n\
             \nint after(void)\n{\n\treturn 3;\n}\n"
        )
    );
}

/// Swaps `root/name` with a link to `target` and back, and (for files) with a FIFO, until
/// `stop`; how many swaps were made.
fn swapper(
    root: PathBuf,
    name: &'static str,
    target: PathBuf,
    fifo: bool,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u32> {
    std::thread::spawn(move || {
        let (at, aside) = (root.join(name), root.join(format!("{name}.aside")));
        let mut n = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            n += 1;
            if std::fs::rename(&at, &aside).is_err() {
                continue;
            }
            if fifo && n % 2 == 0 {
                let c = std::ffi::CString::new(at.to_str().unwrap()).unwrap();
                // SAFETY: `c` is a NUL-terminated path.
                unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
            } else {
                let _ = std::os::unix::fs::symlink(&target, &at);
            }
            std::thread::sleep(Duration::from_micros(500 + u64::from(n % 7) * 300));
            let _ = std::fs::remove_file(&at);
            let _ = std::fs::rename(&aside, &at);
            std::thread::sleep(Duration::from_micros(300 + u64::from(n % 5) * 400));
        }
        n
    })
}

#[test]
fn two_hundred_raced_edits_and_refreshes_leave_the_outside_untouched() {
    let t = tree(
        "sec-swap-loop",
        &[("e/e.c", TARGET), ("d/a.c", "int inside_a;\n")],
    );
    let out = outside("sec-swap-loop");
    std::fs::create_dir_all(out.0.join("e")).unwrap();
    std::fs::write(out.0.join("e/e.c"), TARGET).unwrap();
    std::fs::write(out.0.join("a.c"), "int secret_outside;\nint secret_two;\n").unwrap();
    let stamp = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (std::fs::read(p).unwrap(), m.mtime(), m.mtime_nsec())
    };
    let before = (stamp(&out.0.join("e/e.c")), stamp(&out.0.join("a.c")));
    let mut c = serve(&t, "target", &[]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let dirs = swapper(t.root.clone(), "e", out.0.join("e"), false, stop.clone());
    let files = swapper(
        t.root.join("d"),
        "a.c",
        out.0.join("a.c"),
        true,
        stop.clone(),
    );
    let (mut written, mut refreshed) = (0, 0);
    for i in 0..200 {
        let source = format!("int target(void)\n{{\n\treturn {i};\n}}\n");
        let (answer, err) = c.call(
            "replace_symbol",
            json!({"file": "e/e.c", "symbol": "target", "source": source}),
        );
        written += u32::from(!err);
        assert!(!answer.contains("panicked"), "{answer}");
        let (answer, err) = c.call("update_index", json!({}));
        refreshed += u32::from(!err);
        assert!(!answer.contains("panicked"), "{answer}");
        let (answer, _) = c.call("find_definition", json!({"symbol": "secret_outside"}));
        assert!(
            !answer.contains("a.c:"),
            "a name from outside, refresh {i}: {answer}"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = (dirs.join().unwrap(), files.join().unwrap());
    assert!(swaps.0 > 50 && swaps.1 > 50, "{swaps:?}");
    assert!(
        refreshed > 0 && written > 0,
        "{written} edits, {refreshed} refreshes"
    );
    let after = (stamp(&out.0.join("e/e.c")), stamp(&out.0.join("a.c")));
    assert!(before == after, "a file outside the root changed");
    // The tree is whole again; a refresh now must find no name from outside.
    let (answer, err) = c.call("update_index", json!({}));
    assert!(!err, "{answer}");
    for name in ["secret_outside", "secret_two"] {
        let (answer, _) = c.call("find_definition", json!({"symbol": name}));
        assert!(!answer.contains("a.c:"), "{name} from outside: {answer}");
    }
    let (answer, err) = c.call("find_definition", json!({"symbol": "inside_a"}));
    assert!(!err && answer.contains("d/a.c:1"), "{answer}");
}
