//! `knav lsp` driven by a real editor: headless Neovim (0.7's `vim.lsp.start_client`, Debian's
//! `neovim`, which `.ci/run` installs) on the fixture tree and on a generated tree. Each test
//! writes a Lua script of steps; Neovim runs it with its own LSP client (the jump is Neovim's
//! `jump_to_location`, the edits its buffer API, the save `:write`) and writes one line per
//! step to a file the test reads back.

mod common;
use common::{fixture, tree, Tree};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Time Neovim is given for one script.
const WAIT: Duration = Duration::from_secs(240);

/// The Lua every script starts with: the client started on `ROOT` and a few steps.
/// `ask` retries while the first index builds (the server answers "... Retry" meanwhile).
const PRELUDE: &str = r#"
local out = assert(io.open(OUT, "w"))
local function put(...)
  local t = {}
  for i, v in ipairs({...}) do t[i] = (tostring(v):gsub("\n", "\\n")) end
  out:write(table.concat(t, "\t"), "\n")
  out:flush()
end
local id = vim.lsp.start_client({
  name = "knav",
  cmd = { KNAV, "lsp" },
  cmd_env = { KNAV_CACHE_DIR = "off" },
  root_dir = ROOT,
  flags = { debounce_text_changes = 0 },
})
assert(id, "knav lsp did not start")
assert(vim.wait(60000, function()
  local c = vim.lsp.get_client_by_id(id)
  return c ~= nil and c.initialized
end, 20), "knav lsp was not initialized in time")

local function rel(name)
  if name:sub(1, #ROOT + 1) == ROOT .. "/" then return name:sub(#ROOT + 2) end
  return name
end
vim.o.hidden = true
function open(path)
  if rel(vim.api.nvim_buf_get_name(0)) ~= path then
    vim.cmd("edit " .. vim.fn.fnameescape(ROOT .. "/" .. path))
  end
  vim.lsp.buf_attach_client(0, id)
end
function ask(method, params)
  local deadline = vim.loop.now() + 120000
  while true do
    local r, err = vim.lsp.buf_request_sync(0, method, params, 60000)
    assert(r, method .. ": " .. tostring(err))
    local a = assert(r[id], method .. ": no answer from knav")
    local msg = a.error and tostring(a.error.message) or ""
    local building = msg:find("Retry") or msg:find("build is running")
    if not (building and vim.loop.now() < deadline) then
      assert(not a.error, method .. ": " .. vim.inspect(a.error))
      return a.result
    end
    vim.wait(100)
  end
end
function at(line, col)
  vim.api.nvim_win_set_cursor(0, { line, col })
  return vim.lsp.util.make_position_params()
end
-- Neovim jumps to the (first) definition: where it lands, or "none".
function definition(tag, line, col)
  local r = ask("textDocument/definition", at(line, col))
  if r and r[1] then r = r[1] end
  if r == nil or (r.uri == nil and r.targetUri == nil) then return put(tag, "none") end
  vim.lsp.util.jump_to_location(r, "utf-16")
  local c = vim.api.nvim_win_get_cursor(0)
  put(tag, rel(vim.api.nvim_buf_get_name(0)), c[1], c[2])
end
function references(tag, line, col, decl)
  local p = at(line, col)
  p.context = { includeDeclaration = decl }
  local r = ask("textDocument/references", p) or {}
  local places = {}
  for i, l in ipairs(r) do places[i] = rel(vim.uri_to_fname(l.uri)) .. ":" .. (l.range.start.line + 1) end
  table.sort(places)
  put(tag, #r, table.concat(places, " "))
end
function hover(tag, line, col)
  local r = ask("textDocument/hover", at(line, col))
  if r == nil then return put(tag, "none") end
  local lines = vim.lsp.util.convert_input_to_markdown_lines(r.contents)
  put(tag, table.concat(lines, "\n"))
end
function symbols(tag)
  local r = ask("textDocument/documentSymbol", { textDocument = vim.lsp.util.make_text_document_params() }) or {}
  local names = {}
  for i, s in ipairs(r) do names[i] = s.name .. ":" .. ((s.selectionRange or s.location.range).start.line + 1) end
  put(tag, #r, table.concat(names, " "))
end
function incoming(tag, line, col)
  local items = ask("textDocument/prepareCallHierarchy", at(line, col)) or {}
  if not items[1] then return put(tag, "none") end
  local calls = ask("callHierarchy/incomingCalls", { item = items[1] }) or {}
  local from = {}
  for i, c in ipairs(calls) do
    from[i] = c.from.name .. "@" .. rel(vim.uri_to_fname(c.from.uri)) .. ":" .. (c.fromRanges[1].start.line + 1)
  end
  table.sort(from)
  put(tag, items[1].name, table.concat(from, " "))
end
"#;

/// Runs `steps` (Lua, after [`PRELUDE`]) in headless Neovim on `root`; the lines they put,
/// split at tabs.
fn nvim(root: &Path, steps: &str) -> Vec<Vec<String>> {
    let version = Command::new("nvim").arg("--version").output();
    assert!(
        version.is_ok_and(|o| o.status.success()),
        "Neovim is not installed: apt-get install neovim (.ci/run does)"
    );
    let script = root.join(".nvim-steps.lua");
    let out = root.join(".nvim-out");
    let lua_str = |p: &Path| format!("{:?}", p.display().to_string());
    let text = format!(
        "ROOT = {}\nKNAV = {}\nOUT = {}\n{PRELUDE}\nlocal ok, e = pcall(function()\n{steps}\nend)\n\
         if not ok then put(\"error\", e) end\nout:close()\n",
        lua_str(root),
        lua_str(Path::new(env!("CARGO_BIN_EXE_knav"))),
        lua_str(&out),
    );
    std::fs::write(&script, text).unwrap();
    let mut child = Command::new("nvim")
        .args(["--headless", "--clean", "-u", "NONE", "-n", "-i", "NONE"])
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .args(["-c", "qa!"])
        .current_dir(root)
        .env_remove("KNAV_INDEX_DIR")
        .env("KNAV_CACHE_DIR", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nvim starts");
    let until = Instant::now() + WAIT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "nvim did not finish in {WAIT:?}; it wrote: {}",
                std::fs::read_to_string(&out).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let written = std::fs::read_to_string(&out).unwrap_or_default();
    let lines: Vec<Vec<String>> = written
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    if let Some(e) = lines.iter().find(|l| l[0] == "error") {
        panic!(
            "the Lua steps failed: {}\nbefore it: {written}",
            e[1..].join(" ")
        );
    }
    lines
}

/// The fields after the tag of the line `tag` put.
fn line<'a>(lines: &'a [Vec<String>], tag: &str) -> &'a [String] {
    match lines.iter().find(|l| l[0] == tag) {
        Some(l) => &l[1..],
        None => panic!("no line {tag:?} in {lines:?}"),
    }
}

/// `gen/fF.c` for F in 0..FILES, each with PER functions `int gen_F_I(int x)` whose body calls
/// `gen_{F+1}_I` (the next file's) and `gen_F_{I+1}` (its neighbour's), every one declared in
/// `gen/gen.h`. Function I's signature is on line 3 + 5·I (1-based), its call on 5 + 5·I.
const FILES: usize = 5;
const PER: usize = 60;

fn generated(name: &str) -> Tree {
    let mut files = Vec::new();
    let mut header = String::new();
    for f in 0..FILES {
        let mut text = String::from("#include \"gen.h\"\n\n");
        for i in 0..PER {
            header.push_str(&format!("int gen_{f}_{i}(int x);\n"));
            text.push_str(&format!(
                "int gen_{f}_{i}(int x)\n{{\n\treturn gen_{}_{i}(x) + gen_{f}_{}(x);\n}}\n\n",
                (f + 1) % FILES,
                (i + 1) % PER
            ));
        }
        files.push((format!("gen/f{f}.c"), text));
    }
    files.push(("gen/gen.h".to_string(), header));
    let files: Vec<(&str, &String)> = files.iter().map(|(p, t)| (p.as_str(), t)).collect();
    tree(name, &files)
}

#[test]
fn neovim_jumps_counts_references_and_follows_edits_and_saves_on_the_fixture() {
    let t = fixture("nvim-fixture");
    let lines = nvim(
        &t.root,
        r#"
open("fs/ext2/file.c")
-- `	return vfs_read(file, buf, count, pos);`, line 6, the cursor on vfs_read.
definition("def", 6, 10)
open("fs/ext2/file.c")
references("refs", 6, 10, true)
references("uses", 6, 10, false)
-- Three lines inserted above, unsaved: kernel_read's call to vfs_read is now line 34, and
-- vfs_read's definition line 23 of the same (dirty) buffer.
open("fs/read_write.c")
vim.api.nvim_buf_set_lines(0, 0, 0, false, { "// a", "// b", "// c" })
definition("dirty", 34, 10)
put("modified", vim.bo.modified)
vim.cmd("edit!")
-- A function and its caller added: unknown until saved, found after `:write`.
open("fs/ext2/file.c")
local n = vim.api.nvim_buf_line_count(0)
vim.api.nvim_buf_set_lines(0, n, n, false, { "", "int nvim_saved_helper(void)", "{",
  "\treturn 0;", "}", "", "int nvim_saved_caller(void)", "{", "\treturn nvim_saved_helper();", "}" })
definition("unsaved", n + 9, 10)
open("fs/ext2/file.c")
vim.cmd("write")
definition("saved", n + 9, 10)
"#,
    );
    assert_eq!(line(&lines, "def"), ["fs/read_write.c", "20", "8"]);
    assert_eq!(
        line(&lines, "refs"),
        [
            "5",
            "fs/ext2/file.c:6 fs/read_write.c:20 fs/read_write.c:31 fs/read_write.c:39 \
             include/linux/fs.h:19"
        ]
    );
    assert_eq!(
        line(&lines, "uses"),
        [
            "3",
            "fs/ext2/file.c:6 fs/read_write.c:31 fs/read_write.c:39"
        ]
    );
    assert_eq!(line(&lines, "dirty"), ["fs/read_write.c", "23", "8"]);
    assert_eq!(line(&lines, "modified"), ["true"]);
    assert_eq!(line(&lines, "unsaved"), ["none"]);
    let helper = fs_line(&t.root, "fs/ext2/file.c", "int nvim_saved_helper");
    assert_eq!(
        line(&lines, "saved"),
        ["fs/ext2/file.c".to_string(), helper.to_string(), "4".into()]
    );
}

/// The 1-based line of `path` that starts with `start`.
fn fs_line(root: &Path, path: &str, start: &str) -> usize {
    let text = std::fs::read_to_string(root.join(path)).unwrap();
    1 + text
        .lines()
        .position(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?} in {path}"))
}

#[test]
fn neovim_jumps_across_files_of_a_generated_tree() {
    let t = generated("nvim-gen");
    let lines = nvim(
        &t.root,
        r#"
-- gen_2_17's call of gen_3_17 (line 5 + 5·17, after the tab and `return `).
open("gen/f2.c")
definition("across", 90, 8)
open("gen/f2.c")
-- ... and of its neighbour gen_2_18, after `gen_3_17(x) + `.
definition("beside", 90, 23)
open("gen/f3.c")
references("refs", 88, 4, true)
references("uses", 88, 4, false)
"#,
    );
    assert_eq!(line(&lines, "across"), ["gen/f3.c", "88", "4"]);
    assert_eq!(line(&lines, "beside"), ["gen/f2.c", "93", "4"]);
    assert_eq!(
        line(&lines, "refs"),
        ["4", "gen/f2.c:90 gen/f3.c:85 gen/f3.c:88 gen/gen.h:198"]
    );
    assert_eq!(line(&lines, "uses"), ["2", "gen/f2.c:90 gen/f3.c:85"]);
}

#[test]
fn neovim_shows_hover_and_document_symbols() {
    let t = fixture("nvim-hover");
    let lines = nvim(
        &t.root,
        r#"
open("fs/ext2/file.c")
hover("hover", 6, 10)
open("fs/read_write.c")
symbols("symbols")
"#,
    );
    let hover = &line(&lines, "hover")[0];
    assert!(
        hover.contains("ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)"),
        "{hover}"
    );
    assert!(hover.contains("fs/read_write.c"), "{hover}");
    let symbols = line(&lines, "symbols");
    for want in [
        "check_count:8",
        "rw_verify_area:13",
        "vfs_read:20",
        "kernel_read:29",
        "ksys_read:35",
    ] {
        assert!(
            symbols[1].split(' ').any(|s| s == want),
            "{want} in {symbols:?}"
        );
    }
    let t = generated("nvim-gen-symbols");
    let lines = nvim(
        &t.root,
        "open(\"gen/f3.c\")\nsymbols(\"symbols\")\nhover(\"hover\", 88, 4)\n",
    );
    assert_eq!(line(&lines, "symbols")[0], PER.to_string());
    assert!(line(&lines, "hover")[0].contains("int gen_3_17(int x)"));
}

#[test]
fn neovim_lists_incoming_calls_through_an_ops_table() {
    let t = fixture("nvim-calls");
    let lines = nvim(
        &t.root,
        r#"
-- plain_open is only called through stream_operations.open, by stream_open.
open("fs/streams/impl.c")
incoming("ops", 4, 12)
open("fs/ext2/file.c")
incoming("direct", 6, 10)
"#,
    );
    assert_eq!(
        line(&lines, "ops"),
        ["plain_open", "stream_open@fs/streams/core.c:6"]
    );
    assert_eq!(
        line(&lines, "direct"),
        [
            "vfs_read",
            "ext2_file_read@fs/ext2/file.c:6 kernel_read@fs/read_write.c:31 \
             ksys_read@fs/read_write.c:39"
        ]
    );
}
