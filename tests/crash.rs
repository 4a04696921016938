//! Crash safety: `knav index --full` killed with SIGKILL at random points leaves the old index
//! answering, and the next `knav index` removes everything the killed builds left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A generated tree of a few hundred C files, big enough that a build takes a moment.
struct Generated {
    root: PathBuf,
    scratch: PathBuf,
}

impl Drop for Generated {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

fn generate(name: &str, files: usize) -> Generated {
    let root = std::env::temp_dir().join(format!("knav-crash-{name}-{}", std::process::id()));
    let scratch = root.with_extension("scratch");
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    for f in 0..files {
        let dir = root.join(format!("drivers/d{}", f % 12));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::from("#include <linux/types.h>\n\n");
        for g in 0..25 {
            let callee = (f * 25 + g + 1) % (files * 25);
            text.push_str(&format!(
                "int fn_{f}_{g}(int x)\n{{\n#ifdef CONFIG_OPT_{g}\n\tx += {g};\n#endif\n\treturn fn_{}_{}(x) + x;\n}}\n\n",
                callee / 25,
                callee % 25
            ));
        }
        std::fs::write(dir.join(format!("f{f}.c")), text).unwrap();
    }
    Generated { root, scratch }
}

fn knav(g: &Generated) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_knav"));
    c.arg("--root")
        .arg(&g.root)
        .env_remove("KNAV_INDEX_DIR")
        .env("KNAV_SCRATCH_DIR", &g.scratch);
    c
}

fn run(g: &Generated, args: &[&str]) -> (i32, String) {
    let out = knav(g).args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "{args:?}: {text}");
    (out.status.code().unwrap_or(-1), text)
}

/// The pids of the ctags processes whose parent is `pid`.
fn ctags_children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // pid (comm) state ppid …
        let Some((comm, rest)) = stat.split_once(") ") else {
            continue;
        };
        let ppid = rest.split(' ').nth(1).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) && comm.ends_with("(ctags") {
            out.push(child);
        }
    }
    out
}

/// True while `pid` runs (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.split_once(") ").map(|(_, r)| !r.starts_with('Z')))
        .unwrap_or(false)
}

/// Directory names inside `dir` that start with `prefix`.
fn names(dir: &Path, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect();
    v.sort();
    v
}

#[test]
fn index_builds_killed_with_sigkill_leave_the_old_index_answering_and_nothing_behind() {
    assert!(
        Command::new("ctags").arg("--version").output().is_ok(),
        "this test needs Universal Ctags on PATH: apt-get install universal-ctags"
    );
    let g = generate("kill", 250);
    let (code, out) = run(&g, &["index"]);
    assert_eq!(code, 0, "{out}");
    let (code, want) = run(&g, &["callers", "fn_3_4"]);
    assert_eq!(code, 0, "{want}");
    assert!(want.contains("drivers/d3/f3.c"), "{want}");
    // How long a full build takes here: kills land anywhere in it.
    let started = Instant::now();
    let (code, out) = run(&g, &["index", "--full"]);
    assert_eq!(code, 0, "{out}");
    let full_ms = started.elapsed().as_millis() as u64;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut ctags_seen = Vec::new();
    for i in 0..20 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_millis(seed % (full_ms + 1));
        let mut child = knav(&g)
            .args(["index", "--full"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let until = Instant::now() + delay;
        let mut children = Vec::new();
        while Instant::now() < until {
            children.extend(ctags_children(child.id()));
            std::thread::sleep(Duration::from_millis(5));
        }
        children.extend(ctags_children(child.id()));
        child.kill().unwrap();
        let _ = child.wait();
        ctags_seen.extend(children.iter().copied());
        // The killed build's ctags dies with it (PDEATHSIG), not seconds later.
        let deadline = Instant::now() + Duration::from_millis(500);
        while children.iter().any(|&p| alive(p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let left: Vec<u32> = children.iter().copied().filter(|&p| alive(p)).collect();
        assert!(
            left.is_empty(),
            "kill {i} after {delay:?}: ctags {left:?} outlived knav"
        );
        let (code, out) = run(&g, &["callers", "fn_3_4"]);
        assert_eq!(
            (code, &out),
            (0, &want),
            "kill {i} after {delay:?}: the index no longer answers"
        );
    }
    assert!(!ctags_seen.is_empty(), "no kill landed while ctags ran");
    // A refresh that finds nothing to do still removes what the killed builds left.
    let (code, out) = run(&g, &["index"]);
    assert_eq!(code, 0, "{out}");
    let index = g.root.join(".knav");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(index.join("CURRENT")).unwrap()).unwrap();
    let mut named: Vec<String> = manifest["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["dir"].as_str().unwrap().to_string())
        .chain(
            manifest["retired"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string()),
        )
        .collect();
    for key in ["dir", "previous"] {
        if let Some(d) = manifest["build_files"][key].as_str() {
            named.push(d.to_string());
        }
    }
    for d in names(&index, "seg-")
        .into_iter()
        .chain(names(&index, "kb-"))
    {
        assert!(named.contains(&d), "orphaned {d} remains: {named:?}");
    }
    let tmp: Vec<String> = names(&index, "")
        .into_iter()
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(tmp.is_empty(), "{tmp:?}");
    assert_eq!(names(&g.scratch, "knav-"), Vec::<String>::new());
    let (code, out) = run(&g, &["callers", "fn_3_4"]);
    assert_eq!((code, out), (0, want));
}

#[test]
fn a_second_index_build_says_it_waits_for_the_pid_that_holds_the_lock() {
    let g = generate("wait", 3);
    let index = g.root.join(".knav");
    std::fs::create_dir_all(&index).unwrap();
    // Another build holds the lock and has written its pid there.
    let lock = std::fs::File::options()
        .create(true)
        .truncate(true)
        .write(true)
        .open(index.join("lock"))
        .unwrap();
    lock.lock().unwrap();
    std::fs::write(index.join("lock"), "4242").unwrap();
    let child = knav(&g)
        .args(["index", "--full"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id();
    assert!(alive(pid), "the second build did not wait");
    drop(lock);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("waiting for the build of pid 4242 to finish indexing"),
        "{err}"
    );
}
