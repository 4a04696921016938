//! `knav cscope`: cscope's one-shot `-L -N` and `-l` prompt on the fixture, compared line by
//! line with real cscope (`cscope -dL -N`, Debian's `cscope`, which `.ci/run` installs) where
//! cscope is right.

use std::io::Write;
use std::process::{Command, Stdio};

mod common;
use common::{fixture, Tree};

/// The sorted stdout lines of `knav cscope ARGS -P TREE`, run in the tree.
fn knav_cscope(t: &Tree, args: &[&str], stdin: &str) -> Vec<String> {
    let mut all: Vec<&str> = args.to_vec();
    let root = t.root.display().to_string();
    all.extend(["-P", root.as_str()]);
    let (code, out, err) = run(&t.root, env!("CARGO_BIN_EXE_knav"), true, &all, stdin);
    assert_eq!(code, 0, "{err}");
    sorted_lines(out.as_bytes())
}

/// `program ARGS` run in `dir` (`as_knav`: `knav cscope ARGS`; else ARGS as they are, for a
/// program that is knav through a link named cscope) with `stdin`: its exit code, stdout and
/// stderr.
fn run(
    dir: &std::path::Path,
    program: &str,
    as_knav: bool,
    args: &[&str],
    stdin: &str,
) -> (i32, String, String) {
    let mut cmd = Command::new(program);
    if as_knav {
        cmd.arg("cscope");
    }
    let mut child = cmd
        .args(args)
        .current_dir(dir)
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
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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

/// `lines` with each line's blanks removed. cscope keeps a line in its database with runs of
/// blanks squeezed (`.fetch\t\t= plain_fetch,` is printed `.fetch = plain_fetch,`) and a
/// blank put between some tokens (`__field(int, pid)` is printed `__field(int , pid)`); knav
/// prints the line as the file has it. The comparison is of the lines without their blanks:
/// the same file, function, line and tokens.
fn unblanked(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect())
        .collect()
}

/// Query 9 (assignments) and 7 (files) against real cscope. Query 9 is knav's references of the
/// name kept where the line assigns it (the index has no write role): the members assigned in
/// initializers (`.fetch = …`) and through pointers, a local's initialisation, a global's, a
/// name inside a string left out (`"prev_pid=%d"`), and a line assigning two names listed once.
#[test]
fn assignments_and_files_are_cscopes_own_lines() {
    let t = fixture("cscope-oracle-9");
    for name in [
        "fetch",
        "ops",
        "ret",
        "slots",
        "prev_pid",
        "pid",
        "plain_stream_ops",
    ] {
        let ours = knav_cscope(&t, &["-dL", "-9", name], "");
        let theirs = real_cscope(&t, 9, name);
        assert!(!theirs.is_empty(), "cscope found no assignment to {name}");
        assert_eq!(unblanked(&ours), unblanked(&theirs), "query 9 {name}");
    }
    // Exact lines: the text column is the file's line as written.
    assert_eq!(
        knav_cscope(&t, &["-dL", "-9", "ops"], ""),
        [
            "fs/streams/core.c stream_fetch 11 const struct stream_operations *ops = s->s_op;",
            "fs/streams/impl.c fancy_setup 33 struct stream_operations *ops = &fancy_ops;",
        ]
    );
    for pattern in ["streams", "read_write.c"] {
        let ours = knav_cscope(&t, &["-dL", "-7", pattern], "");
        assert_eq!(ours, real_cscope(&t, 7, pattern), "query 7 {pattern}");
    }
    assert_eq!(
        knav_cscope(&t, &["-dL", "-7", "streams"], ""),
        [
            "fs/streams/core.c <unknown> 1 <unknown>",
            "fs/streams/impl.c <unknown> 1 <unknown>",
            "fs/streams/stream.h <unknown> 1 <unknown>",
        ]
    );
}

/// `--active-config`: what the .config does not build is left out of every query's lines, as
/// the CLI leaves it out (the fixture's .config leaves CONFIG_HIGHMEM and CONFIG_COMPAT unset).
#[test]
fn the_active_config_leaves_out_what_it_does_not_build() {
    let t = fixture("cscope-config");
    let config = t.root.join(".config").display().to_string();
    let with = |args: &[&str]| {
        let mut all = vec!["--active-config", config.as_str()];
        all.extend(args);
        knav_cscope(&t, &all, "")
    };
    let compat = "fs/read_write.c compat_read 50 return ksys_read(fd, buf, count);";
    let sys = "fs/read_write.c sys_read 44 return ksys_read(fd, buf, count);";
    assert_eq!(
        knav_cscope(&t, &["-dL", "-3", "ksys_read"], ""),
        [compat, sys]
    );
    assert_eq!(with(&["-dL", "-3", "ksys_read"]), [sys]);
    // The CONFIG_HIGHMEM kmap (line 20) is gone, the other stays.
    assert_eq!(
        with(&["-dL", "-1", "kmap"]),
        ["include/linux/highmem.h kmap 25 static inline void *kmap(struct page *page)"]
    );
    assert_eq!(knav_cscope(&t, &["-dL", "-1", "kmap"], "").len(), 2);
    // ghost_ops, under CONFIG_HIGHMEM, assigns no fetch in this configuration.
    let ghost = "fs/streams/impl.c <global> 70 .fetch = ghost_fetch,";
    assert!(knav_cscope(&t, &["-dL", "-9", "fetch"], "").contains(&ghost.to_string()));
    let fetch = with(&["-dL", "-9", "fetch"]);
    assert_eq!(fetch.len(), 5, "{fetch:?}");
    assert!(!fetch.contains(&ghost.to_string()), "{fetch:?}");
    // The text queries too, as `knav grep --active-config`.
    assert_eq!(with(&["-dL", "-4", "ghost_fetch"]), Vec::<String>::new());
    assert_eq!(knav_cscope(&t, &["-dL", "-4", "ghost_fetch"], "").len(), 2);
    // At the prompt, and in the `=` form.
    let arg = format!("--active-config={config}");
    let out = knav_cscope(&t, &[arg.as_str(), "-dl"], "3ksys_read\n");
    assert!(out.contains(&">> cscope: 1 lines".to_string()), "{out:?}");
}

/// `--install-link DIR` makes DIR/cscope a link to knav, which then answers cscope's command
/// line; an existing file that is not such a link is refused and left as it was.
#[test]
fn install_link_makes_a_cscope_that_answers_and_replaces_nothing() {
    let t = fixture("cscope-link");
    let knav = env!("CARGO_BIN_EXE_knav");
    let bin = t.root.join(".bin");
    std::fs::create_dir(&bin).unwrap();
    let dir = bin.display().to_string();
    let (code, out, err) = run(&t.root, knav, true, &["--install-link", &dir], "");
    assert_eq!(code, 0, "{err}");
    let link = bin.join("cscope");
    assert_eq!(
        out.trim(),
        format!(
            "{} -> {}",
            link.display(),
            std::fs::canonicalize(knav).unwrap().display()
        )
    );
    assert_eq!(
        std::fs::canonicalize(&link).unwrap(),
        std::fs::canonicalize(knav).unwrap()
    );
    assert_eq!(std::fs::read_dir(&bin).unwrap().count(), 1);
    let cscope = link.display().to_string();
    let (code, out, err) = run(
        &t.root,
        &cscope,
        false,
        &["-dL", "-1", "rw_verify_area"],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "fs/read_write.c rw_verify_area 13 static int rw_verify_area(struct file *file, loff_t *pos, size_t count)\n"
    );
    // Again: nothing to do.
    let (code, out, _) = run(&t.root, knav, true, &["--install-link", &dir], "");
    assert_eq!(
        (code, out.trim()),
        (0, format!("{cscope} already runs this knav").as_str())
    );
    // A real file of that name is refused, named, and kept.
    std::fs::remove_file(&link).unwrap();
    std::fs::write(&link, "mine").unwrap();
    let (code, _, err) = run(&t.root, knav, true, &["--install-link", &dir], "");
    assert_eq!(code, 1);
    assert!(
        err.contains(&cscope) && err.contains("does not replace it"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&link).unwrap(), "mine");
}

/// The exact command lines cscope_maps.nvim (lua/cscope/init.lua, lua/cscope/db.lua) and emacs
/// xcscope (xcscope.el's cscope-search-one-database and its indexer) run, answered as cscope
/// answers them; `-b` leaves the empty database file both look for before they ask.
#[test]
fn the_plugins_command_lines_are_answered() {
    let t = fixture("cscope-plugins");
    let knav = env!("CARGO_BIN_EXE_knav");
    let root = t.root.display().to_string();
    let db = format!("{root}/cscope.out");
    // cscope_maps.nvim: `:Cs db build` in the project's directory, then `:Cs find c vfs_read`.
    let (code, _, err) = run(&t.root, knav, true, &["-f", &db, "-bqkv"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), b"");
    let (code, out, err) = run(
        &t.root.join("fs"),
        knav,
        true,
        &["-dL", "-3", "vfs_read", "-f", &db, "-P", &root],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(sorted_lines(out.as_bytes()).len(), 3, "{out}");
    assert!(out.contains("fs/read_write.c kernel_read 31 "), "{out}");
    // xcscope: its indexer, then a query with its custom options first, in the tree's top.
    std::fs::remove_file(&db).unwrap();
    std::fs::write(t.root.join("cscope.files"), "fs/read_write.c\n").unwrap();
    let args = ["-k", "-q", "-b", "-i", "cscope.files", "-f", "cscope.out"];
    let (code, _, err) = run(&t.root, knav, true, &args, "");
    assert_eq!(code, 0, "{err}");
    assert!(t.root.join("cscope.out").exists());
    let args = [
        "-I/usr/include",
        "-k",
        "-q",
        "-f",
        "cscope.out",
        "-d",
        "-L",
        "-9",
        "ret",
    ];
    let (code, out, err) = run(&t.root, knav, true, &args, "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "fs/read_write.c vfs_read 22 int ret = rw_verify_area(file, pos, count);\n"
    );
    // xcscope without -d (a writable database): the same answer.
    let args = ["-f", "cscope.out", "-L", "-1", "kernel_read"];
    let (_, out, _) = run(&t.root, knav, true, &args, "");
    assert!(out.starts_with("fs/read_write.c kernel_read 2"), "{out}");
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
/// listing, `:cs find g` (definition) from where Vim jumped, `:cs find s` (the symbol) and
/// `:cs find t` (text) from the quickfix list.
#[test]
fn vim_finds_callers_definitions_symbols_and_text_through_knav_as_its_cscope() {
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
        // `s` (the symbol) and `t` (text) into the quickfix list, written as file:line:text.
        "set cscopequickfix=s-,t-".to_string(),
        "silent! cs find s kmap".to_string(),
        qf_to(&t.root.join(".qf-s")),
        "silent! cs find t vfs_read failed".to_string(),
        qf_to(&t.root.join(".qf-t")),
        "qa!".to_string(),
    ];
    let mut vim = Command::new("vim");
    vim.args(["-Nu", "NONE", "-es"]).current_dir(&t.root);
    vim.env("KNAV_CACHE_DIR", "off")
        .env_remove("KNAV_INDEX_DIR");
    // A script, not `-c` each: Vim takes at most ten `-c` commands.
    let script = t.root.join(".vim-script");
    std::fs::write(&script, cmds.join("\n") + "\n").unwrap();
    vim.arg("-S").arg(&script);
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
    let read = |name: &str| std::fs::read_to_string(t.root.join(name)).unwrap_or_default();
    assert_eq!(
        read(".qf-s"),
        "include/linux/highmem.h:20:<<kmap>> static inline void *kmap(struct page *page)\n\
         include/linux/highmem.h:25:<<kmap>> static inline void *kmap(struct page *page)\n\
         mm/highmem.c:14:<<copy_page_data>> void *from = kmap(src);\n\
         mm/highmem.c:15:<<copy_page_data>> void *to = kmap(dst);\n"
    );
    assert_eq!(
        read(".qf-t"),
        "fs/read_write.c:25:<<vfs_read>> pr_warn(\"vfs_read failed: %d\\n\", ret);\n"
    );
}

/// The Vim command that writes the quickfix list to `file`, one `file:line:text` a line.
fn qf_to(file: &std::path::Path) -> String {
    format!(
        "call writefile(map(getqflist(), {{_, e -> bufname(e.bufnr) . ':' . e.lnum . ':' . e.text}}), '{}')",
        file.display()
    )
}
