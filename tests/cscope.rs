//! `knav cscope`: cscope's one-shot `-L -N` and `-l` prompt on the fixture, compared line by
//! line with real cscope (`cscope -dL -N`, Debian's `cscope`, which `.ci/run` installs) where
//! cscope is right.

use std::io::Write;
use std::process::{Command, Stdio};

mod common;
use common::{fixture, Tree};

/// The sorted stdout lines of `knav cscope ARGS -P TREE`, run in the tree.
fn knav_cscope(t: &Tree, args: &[&str], stdin: &str) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_knav"))
        .arg("cscope")
        .args(args)
        .arg("-P")
        .arg(&t.root)
        .current_dir(&t.root)
        .env("KNAV_CACHE_DIR", "off")
        .env_remove("KNAV_INDEX_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("knav runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    sorted_lines(&out.stdout)
}

/// The sorted lines of real `cscope -dL -N NAME` over the tree's `.c` and `.h` files.
fn real_cscope(t: &Tree, n: u8, name: &str) -> Vec<String> {
    let found = Command::new("cscope").arg("-V").output();
    assert!(
        found.is_ok(),
        "cscope is not installed: apt-get install cscope (.ci/run does)"
    );
    let mut files = String::new();
    for dir in ["fs", "include", "mm", "kernel", "drivers", "arch"] {
        for e in walk(&t.root.join(dir)) {
            let rel = e.strip_prefix(&t.root).unwrap().display().to_string();
            if rel.ends_with(".c") || rel.ends_with(".h") {
                files.push_str(&rel);
                files.push('\n');
            }
        }
    }
    std::fs::write(t.root.join("cscope.files"), files).unwrap();
    let built = Command::new("cscope")
        .args(["-b", "-k"])
        .current_dir(&t.root)
        .status()
        .unwrap();
    assert!(built.success());
    let out = Command::new("cscope")
        .args(["-dL", &format!("-{n}"), name])
        .current_dir(&t.root)
        .output()
        .unwrap();
    sorted_lines(&out.stdout)
}

/// The lines of `bytes`, sorted (cscope's order is its database's, knav's the index's).
fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(bytes)
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn references_callers_and_definitions_are_cscopes_own_lines() {
    let t = fixture("cscope-oracle");
    for n in [0u8, 1, 2, 3] {
        let ours = knav_cscope(&t, &["-dL", &format!("-{n}"), "vfs_read"], "");
        let theirs = real_cscope(&t, n, "vfs_read");
        assert!(!theirs.is_empty(), "cscope found nothing for -{n}");
        assert_eq!(ours, theirs, "query {n}");
    }
    // cscope matches names exactly: a misspelt name is no line, not knav's near match.
    let misspelt = knav_cscope(&t, &["-dL", "-1", "vfs_raed"], "");
    assert_eq!(misspelt, real_cscope(&t, 1, "vfs_raed"));
    assert!(misspelt.is_empty(), "{misspelt:?}");
}

#[test]
fn the_line_prompt_answers_each_query_with_its_count_and_quits() {
    let t = fixture("cscope-prompt");
    let out = knav_cscope(&t, &["-dl"], "3vfs_read\n1no_such_name_at_all\nr\nq\n");
    assert!(out.contains(&">> cscope: 3 lines".to_string()), "{out:?}");
    assert!(out.contains(&">> cscope: 0 lines".to_string()), "{out:?}");
    assert!(
        out.iter()
            .any(|l| l == "fs/read_write.c kernel_read 31 return vfs_read(file, buf, count, pos);"),
        "{out:?}"
    );
    let files = knav_cscope(&t, &["-dL", "-7", "read_write.c"], "");
    assert_eq!(files, ["fs/read_write.c <unknown> 1 <unknown>"]);
}

/// Vim (built with cscope: Debian's `vim-nox`, which `.ci/run` installs) running knav through
/// a link named `cscope` as its `cscopeprg`: `:cs find c` (callers) read back from Vim's own
/// listing, `:cs find g` (definition) from where Vim jumped.
#[test]
fn vim_finds_callers_and_definitions_through_knav_as_its_cscope() {
    let version = Command::new("vim").arg("--version").output();
    let has_cscope = version
        .as_ref()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("+cscope"));
    assert!(
        has_cscope,
        "vim with +cscope is not installed: apt-get install vim-nox (.ci/run does)"
    );
    let t = fixture("cscope-vim");
    let bin = t.root.join(".vimbin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_knav"), bin.join("cscope")).unwrap();
    // Vim wants an existing database file; knav reads none.
    std::fs::write(t.root.join(".knav-cscope"), "").unwrap();
    let listing = t.root.join(".vim-out");
    let cmds = [
        format!("set cscopeprg={}", bin.join("cscope").display()),
        "silent! cs add .knav-cscope".to_string(),
        format!("redir! > {}", listing.display()),
        "silent! cs find c vfs_read".to_string(),
        "clist".to_string(),
        // One definition: Vim jumps to it.
        "silent! cs find g rw_verify_area".to_string(),
        "echo 'at ' . expand('%') . ':' . line('.')".to_string(),
        "redir END".to_string(),
        "qa!".to_string(),
    ];
    let mut vim = Command::new("vim");
    vim.args(["-Nu", "NONE", "-es"]).current_dir(&t.root);
    vim.env("KNAV_CACHE_DIR", "off")
        .env_remove("KNAV_INDEX_DIR");
    for c in &cmds {
        vim.arg("-c").arg(c);
    }
    let status = vim.stdin(Stdio::null()).status().expect("vim runs");
    let _ = status;
    let out = std::fs::read_to_string(&listing).unwrap_or_default();
    for want in [
        "fs/ext2/file.c <<ext2_file_read>>",
        "fs/read_write.c <<kernel_read>>",
        "fs/read_write.c <<ksys_read>>",
        "at fs/read_write.c:13",
    ] {
        assert!(out.contains(want), "{want} not in Vim's listing:\n{out}");
    }
}
