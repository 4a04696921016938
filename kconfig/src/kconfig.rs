//! Kconfig files read for the symbols they define and name: each `config X` / `menuconfig X`
//! entry (type, prompt, `depends on`, `select`, `default`) is the definition of `CONFIG_X`;
//! every symbol in an expression (`depends on MMU && BLOCK`, `select CRYPTO`, `default y if X`)
//! is a use of it; `source "fs/Kconfig"` names the files to read next.
//!
//! Help texts are skipped by indentation, as the kernel's own parser does, so a help paragraph
//! mentioning "select" is not an attribute.

use crate::makefile::SymbolUse;

/// One `config` or `menuconfig` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// `CONFIG_X`.
    pub symbol: String,
    /// 1-based line of the `config X` line.
    pub line: u32,
    /// `config` or `menuconfig`.
    pub keyword: String,
    /// `bool`, `tristate`, `string`, `hex`, `int` (`def_bool` gives `bool`).
    pub kind: Option<String>,
    /// The prompt, unquoted.
    pub prompt: Option<String>,
    /// `depends on` expressions: the entry's own, then those of the `if` blocks and menus
    /// around it, innermost first.
    pub depends: Vec<String>,
    /// `select X [if …]` and `imply X [if …]` lines, as written.
    pub selects: Vec<String>,
    /// `default …` and `def_bool`/`def_tristate` values, as written.
    pub defaults: Vec<String>,
    /// Last line of the entry (its help text included).
    pub end_line: u32,
}

/// A parsed Kconfig file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KconfigFile {
    /// Its entries in file order.
    pub entries: Vec<Entry>,
    /// Symbols its expressions name, by line (the `config X` lines are not uses).
    pub uses: Vec<SymbolUse>,
    /// Files it sources, root-relative, `$(SRCARCH)` not expanded; `rsource` paths are
    /// resolved against `path`'s directory.
    pub sources: Vec<String>,
}

/// `if` blocks and menus nested deeper than this are counted, not kept: an entry inside them
/// gets a `…` for the conditions left out. (The kernel nests a handful.)
const MAX_NESTING: usize = 64;
/// Enclosing conditions copied into each entry, in bytes: beyond it a `…`. An answer shows an
/// entry's dependencies in one 200-character line, and copying without a bound makes memory
/// grow with entries times nesting.
const MAX_INHERITED_BYTES: usize = 256;

enum Block {
    Entry(usize),
    Menu,
    Other,
}

/// Parses Kconfig text of root-relative `path`.
pub fn parse(path: &str, text: &str) -> KconfigFile {
    let mut p = Parser {
        path,
        out: KconfigFile::default(),
        enclosing: Vec::new(),
        too_deep: 0,
        inherited: Vec::new(),
        block: Block::Other,
        help: None,
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let first = i;
        let raw = lines[i];
        i += 1;
        if p.help_text(raw, first) {
            continue;
        }
        let mut logical = raw.to_string();
        while logical.ends_with('\\') && i < lines.len() {
            logical.pop();
            logical.push(' ');
            logical.push_str(lines[i]);
            i += 1;
        }
        let body = strip_comment(&logical);
        let t = body.trim();
        if t.is_empty() {
            continue;
        }
        let (word, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        let rest = rest.trim();
        if p.structure(word, rest, raw, first) {
            continue;
        }
        extend(&mut p.out, &p.block, first);
        p.attribute(word, rest, first as u32 + 1);
    }
    let mut out = p.out;
    for (e, inherited) in out.entries.iter_mut().zip(p.inherited) {
        e.depends.reverse();
        e.depends.extend(inherited);
    }
    out
}

/// What [`parse`] keeps from line to line.
struct Parser<'p> {
    /// The file's root-relative path.
    path: &'p str,
    /// What the file holds so far.
    out: KconfigFile,
    /// `if EXPR` blocks and menus' `depends on`, innermost last; a menu without one pushes "".
    enclosing: Vec<(&'static str, String)>,
    /// `if`s and menus opened beyond MAX_NESTING and not closed yet.
    too_deep: usize,
    /// Each entry's enclosing conditions, joined to its own `depends on` at the end.
    inherited: Vec<Vec<String>>,
    /// The block the attribute lines belong to.
    block: Block,
    /// Inside a help text: the indentation of the `help` line, and of its first text line.
    help: Option<(usize, Option<usize>)>,
}

impl Parser<'_> {
    /// True when `raw`, the line at index `at`, is part of a help text (or blank inside one);
    /// a line indented less than the text ends it.
    fn help_text(&mut self, raw: &str, at: usize) -> bool {
        let Some((help_indent, text_indent)) = self.help else {
            return false;
        };
        if raw.trim().is_empty() {
            return true;
        }
        let indent = indentation(raw);
        match text_indent {
            None if indent > help_indent => {
                self.help = Some((help_indent, Some(indent)));
                extend(&mut self.out, &self.block, at);
                true
            }
            Some(t) if indent >= t => {
                extend(&mut self.out, &self.block, at);
                true
            }
            _ => {
                self.help = None;
                false
            }
        }
    }

    /// Takes the line at index `at` (`raw` as written), whose first word is `word`, when it
    /// opens or closes a block (an entry, menu, `if`, choice, help text) or sources a file;
    /// false for an attribute of the current block.
    fn structure(&mut self, word: &str, rest: &str, raw: &str, at: usize) -> bool {
        let line_no = at as u32 + 1;
        let out = &mut self.out;
        match word {
            "config" | "menuconfig" => {
                let symbol = format!("CONFIG_{rest}");
                out.entries.push(Entry {
                    symbol,
                    line: line_no,
                    keyword: word.to_string(),
                    end_line: line_no,
                    ..Default::default()
                });
                self.inherited
                    .push(inherit(&self.enclosing, self.too_deep > 0));
                self.block = Block::Entry(out.entries.len() - 1);
            }
            "menu" | "if" => {
                let kind = if word == "if" {
                    uses(rest, line_no, &mut out.uses);
                    "if"
                } else {
                    "menu"
                };
                if self.enclosing.len() < MAX_NESTING {
                    let cond = if kind == "if" { rest } else { "" };
                    self.enclosing.push((kind, cond.to_string()));
                } else {
                    self.too_deep += 1;
                }
                // A menu's own `depends on` lines follow it; one that is too deep keeps none.
                self.block = if kind == "menu" && self.too_deep == 0 {
                    Block::Menu
                } else {
                    Block::Other
                };
            }
            "endmenu" | "endif" => {
                if self.too_deep > 0 {
                    self.too_deep -= 1;
                } else {
                    pop(
                        &mut self.enclosing,
                        if word == "endif" { "if" } else { "menu" },
                    );
                }
                self.block = Block::Other;
            }
            "choice" | "endchoice" | "comment" | "mainmenu" => {
                self.block = Block::Other;
            }
            "source" | "rsource" | "osource" | "orsource" => {
                let file = rest.trim_matches('"');
                let file = if word.starts_with('o') || word == "rsource" {
                    match (word, self.path.rsplit_once('/')) {
                        ("rsource" | "orsource", Some((dir, _))) => format!("{dir}/{file}"),
                        _ => file.to_string(),
                    }
                } else {
                    file.to_string()
                };
                out.sources.push(file);
                self.block = Block::Other;
            }
            "help" | "---help---" => {
                self.help = Some((indentation(raw), None));
                extend(out, &self.block, at);
            }
            _ => return false,
        }
        true
    }

    /// Takes the attribute line `line_no` of the current block, whose first word is `word`:
    /// its type, prompt, `depends on`, `select`, `default`, and the symbols it names.
    fn attribute(&mut self, word: &str, rest: &str, line_no: u32) {
        let (out, block) = (&mut self.out, &self.block);
        let expr_of = |s: &str| s.to_string();
        match word {
            "bool" | "tristate" | "string" | "hex" | "int" | "def_bool" | "def_tristate" => {
                let kind = word.trim_start_matches("def_").to_string();
                let (value, cond) = split_if(rest);
                if let Block::Entry(e) = *block {
                    let entry = &mut out.entries[e];
                    entry.kind = Some(kind);
                    if word.starts_with("def_") {
                        entry.defaults.push(expr_of(rest));
                    } else if let Some(p) = quoted(value) {
                        entry.prompt = Some(p);
                    }
                }
                if word.starts_with("def_") {
                    uses(value, line_no, &mut out.uses);
                }
                uses(cond, line_no, &mut out.uses);
            }
            "prompt" => {
                let (value, cond) = split_if(rest);
                if let Block::Entry(e) = *block {
                    out.entries[e].prompt = quoted(value);
                }
                uses(cond, line_no, &mut out.uses);
            }
            "depends" => {
                let expr = rest.strip_prefix("on").unwrap_or(rest).trim();
                uses(expr, line_no, &mut out.uses);
                match *block {
                    // Innermost first: the entry's last `depends on` line comes first.
                    Block::Entry(e) => out.entries[e].depends.push(expr.to_string()),
                    Block::Menu => match self.enclosing.last_mut() {
                        Some((_, cond)) if cond.is_empty() => *cond = expr.to_string(),
                        // Past what an answer shows, more `depends on` lines add nothing.
                        Some((_, cond)) if cond.len() <= MAX_INHERITED_BYTES => {
                            cond.push_str(" && ");
                            cond.push_str(expr);
                        }
                        _ => {}
                    },
                    Block::Other => {}
                }
            }
            "select" | "imply" => {
                uses(rest, line_no, &mut out.uses);
                if let Block::Entry(e) = *block {
                    out.entries[e].selects.push(format!("{word} {rest}"));
                }
            }
            "default" => {
                uses(rest, line_no, &mut out.uses);
                if let Block::Entry(e) = *block {
                    out.entries[e].defaults.push(rest.to_string());
                }
            }
            "range" | "visible" => uses(rest.trim_start_matches("if"), line_no, &mut out.uses),
            _ => {}
        }
    }
}

/// The conditions of the `if` blocks and menus around an entry, innermost first, at most
/// [`MAX_INHERITED_BYTES`] of them; `…` stands for any left out.
fn inherit(enclosing: &[(&'static str, String)], too_deep: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut bytes = 0;
    let mut cut = too_deep;
    for (_, cond) in enclosing.iter().rev().filter(|(_, c)| !c.is_empty()) {
        bytes += cond.len();
        if bytes > MAX_INHERITED_BYTES {
            cut = true;
            break;
        }
        out.push(cond.clone());
    }
    if cut {
        out.push("…".to_string());
    }
    out
}

/// The block's entry, if any, runs to line index `at` (0-based).
fn extend(out: &mut KconfigFile, block: &Block, at: usize) {
    if let Block::Entry(e) = block {
        out.entries[*e].end_line = at as u32 + 1;
    }
}

fn pop(stack: &mut Vec<(&'static str, String)>, kind: &str) {
    if let Some(i) = stack.iter().rposition(|(k, _)| *k == kind) {
        stack.truncate(i);
    }
}

fn indentation(line: &str) -> usize {
    let mut n = 0;
    for c in line.chars() {
        match c {
            ' ' => n += 1,
            '\t' => n = (n / 8 + 1) * 8,
            _ => break,
        }
    }
    n
}

fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('#', None) => return &line[..i],
            _ => {}
        }
    }
    line
}

/// `"text" if EXPR` → (`"text"`, `EXPR`).
fn split_if(s: &str) -> (&str, &str) {
    let mut quote = None;
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match (c, quote) {
            (b'"' | b'\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            (b'i', None)
                if s[i..].starts_with("if")
                    && (i == 0 || b[i - 1].is_ascii_whitespace())
                    && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
            {
                return (s[..i].trim(), s[i + 2..].trim());
            }
            _ => {}
        }
    }
    (s.trim(), "")
}

fn quoted(s: &str) -> Option<String> {
    let s = s.trim();
    let q = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = s[1..].strip_suffix(q)?;
    Some(inner.to_string())
}

/// Symbols named in expression `s`: words of capitals, digits and `_` outside quotes and
/// `$(…)` macros (`y`, `m`, `n` and numbers are values).
fn uses(s: &str, line: u32, out: &mut Vec<SymbolUse>) {
    let b = s.as_bytes();
    let mut i = 0;
    let mut depth = 0i32;
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            let end = s[i + 1..]
                .find(c as char)
                .map_or(b.len(), |e| i + 1 + e + 1);
            i = end;
            continue;
        }
        if c == b'$' && b.get(i + 1) == Some(&b'(') {
            depth += 1;
            i += 2;
            continue;
        }
        if depth > 0 {
            match c {
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            i += 1;
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &s[start..i];
            let symbol_like = word.bytes().any(|c| c.is_ascii_uppercase())
                && !word.bytes().any(|c| c.is_ascii_lowercase())
                && !word.starts_with("0x");
            if symbol_like {
                out.push(SymbolUse {
                    line,
                    symbol: format!("CONFIG_{word}"),
                });
            }
            continue;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MM: &str = "# SPDX\n\nmenu \"Memory Management options\"\n\tdepends on MMU\n\nconfig ZPOOL\n\tbool\n\nmenuconfig SWAP\n\tbool \"Support for paging of anonymous memory (swap)\"\n\tdepends on MMU && BLOCK && !ARCH_NO_SWAP\n\tdefault y\n\thelp\n\t  This option allows you to select whether\n\t  depends on nothing.\n\n\t  Second paragraph.\n\nif SWAP\nconfig ZSWAP\n\tbool \"Compressed cache\" if EXPERT\n\tselect CRYPTO\n\timply ZPOOL if 64BIT\n\tdefault \"zbud\" # not a symbol\nendif\nendmenu\nsource \"mm/damon/Kconfig\"\nrsource \"sub/Kconfig\"\nconfig NR_CPUS\n\tint \"Maximum number\"\n\trange 2 512 if SMP\n\tdefault 0x40 if X86_64\n";

    #[test]
    fn entries_with_their_attributes() {
        let k = parse("mm/Kconfig", MM);
        let names: Vec<(&str, u32, u32)> = k
            .entries
            .iter()
            .map(|e| (e.symbol.as_str(), e.line, e.end_line))
            .collect();
        assert_eq!(
            names,
            vec![
                ("CONFIG_ZPOOL", 6, 7),
                ("CONFIG_SWAP", 9, 17),
                ("CONFIG_ZSWAP", 20, 24),
                ("CONFIG_NR_CPUS", 29, 32)
            ]
        );
        let swap = &k.entries[1];
        assert_eq!(swap.keyword, "menuconfig");
        assert_eq!(swap.kind.as_deref(), Some("bool"));
        assert_eq!(
            swap.prompt.as_deref(),
            Some("Support for paging of anonymous memory (swap)")
        );
        assert_eq!(swap.depends, vec!["MMU && BLOCK && !ARCH_NO_SWAP", "MMU"]);
        assert_eq!(swap.defaults, vec!["y"]);
        let zswap = &k.entries[2];
        assert_eq!(zswap.prompt.as_deref(), Some("Compressed cache"));
        assert_eq!(zswap.depends, vec!["SWAP", "MMU"]);
        assert_eq!(zswap.selects, vec!["select CRYPTO", "imply ZPOOL if 64BIT"]);
        assert_eq!(
            k.entries[3].depends,
            Vec::<String>::new(),
            "menu and if closed"
        );
        assert_eq!(k.sources, vec!["mm/damon/Kconfig", "mm/sub/Kconfig"]);
    }

    #[test]
    fn uses_skip_help_text_values_and_strings() {
        let k = parse("mm/Kconfig", MM);
        let uses: Vec<(u32, &str)> = k.uses.iter().map(|u| (u.line, u.symbol.as_str())).collect();
        assert_eq!(
            uses,
            vec![
                (4, "CONFIG_MMU"),
                (11, "CONFIG_MMU"),
                (11, "CONFIG_BLOCK"),
                (11, "CONFIG_ARCH_NO_SWAP"),
                (19, "CONFIG_SWAP"),
                (21, "CONFIG_EXPERT"),
                (22, "CONFIG_CRYPTO"),
                (23, "CONFIG_ZPOOL"),
                (23, "CONFIG_64BIT"),
                (31, "CONFIG_SMP"),
                (32, "CONFIG_X86_64"),
            ]
        );
    }

    #[test]
    fn def_bool_and_macros() {
        let k = parse(
            "Kconfig",
            "config CC_IS_GCC\n\tdef_bool $(success,test \"$(cc-name)\" = GCC)\nconfig X\n\tdef_tristate m if MODULES\n",
        );
        assert_eq!(k.entries[0].kind.as_deref(), Some("bool"));
        assert_eq!(k.entries[1].kind.as_deref(), Some("tristate"));
        assert_eq!(k.entries[1].defaults, vec!["m if MODULES"]);
        let uses: Vec<&str> = k.uses.iter().map(|u| u.symbol.as_str()).collect();
        assert_eq!(uses, vec!["CONFIG_MODULES"]);
    }

    #[test]
    fn deep_if_nesting_does_not_copy_every_condition_into_every_entry() {
        // Copies grew with entries times nesting: 20,000 of each made 400 million.
        let n = 2_000;
        let mut text = "menu \"m\"\n\tdepends on MENU_DEP\n".to_string();
        for i in 0..n {
            text.push_str(&format!("if COND_{i}\n"));
        }
        for i in 0..n {
            text.push_str(&format!(
                "config E{i}\n\tbool\n\tdepends on OWN_A\n\tdepends on OWN_B\n"
            ));
        }
        text.push_str(&"endmenu\n".repeat(n));
        text.push_str("config AFTER\n\tbool\n");
        let k = parse("Kconfig", &text);
        assert_eq!(k.entries.len(), n + 1);
        for e in &k.entries[..n] {
            let bytes: usize = e.depends.iter().map(String::len).sum();
            assert!(bytes <= 2 * MAX_INHERITED_BYTES, "{} bytes", bytes);
            assert_eq!(e.depends[..3], ["OWN_B", "OWN_A", "COND_62"]);
            assert_eq!(e.depends.last().map(String::as_str), Some("…"));
        }
        // Every `endmenu` closed one level, the menu last.
        assert_eq!(k.entries[n].depends, Vec::<String>::new());
    }

    #[test]
    fn many_depends_lines_on_a_menu_are_not_copied_whole_into_its_entries() {
        let mut text = "menu \"m\"\n".to_string();
        text.push_str(&"\tdepends on SOME_LONG_SYMBOL_NAME\n".repeat(10_000));
        text.push_str(&"config E\n\tbool\n".repeat(1_000));
        let k = parse("Kconfig", &text);
        assert_eq!(k.entries.len(), 1_000);
        for e in &k.entries {
            let bytes: usize = e.depends.iter().map(String::len).sum();
            assert!(bytes <= 2 * MAX_INHERITED_BYTES, "{bytes} bytes");
            assert_eq!(e.depends, ["…"], "one condition too long to keep");
        }
        let k = parse(
            "Kconfig",
            "menu \"m\"\n\tdepends on A\n\tdepends on B\nconfig E\n\tbool\n",
        );
        assert_eq!(k.entries[0].depends, ["A && B"]);
    }
}
