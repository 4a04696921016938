//! Kernel macros that create definitions (`SYSCALL_DEFINE3(read, …)` defines `sys_read`), read
//! from the data file `kernel-macros.tsv`: one family per line, so adding a family is one line.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::Kind;

/// The table shipped with knav.
pub const KERNEL_MACROS: &str = include_str!("../kernel-macros.tsv");

/// One piece of a name template: text, or an argument by index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Arg(usize),
}

/// A family of definition-making macros.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    /// The family's name, as in `resolved_via: "macro:FAMILY"`.
    pub name: String,
    /// What the names are: `function`, `variable`, `extern`(var), `struct`, `typedef`, `entry`…
    pub kind: Kind,
    templates: Vec<Vec<Piece>>,
    /// The highest argument index the templates use.
    pub max_arg: usize,
}

impl Family {
    /// The names one invocation with `args` makes; `None` when an argument a template needs is
    /// missing or not a plain identifier.
    pub fn names(&self, args: &[&str]) -> Option<Vec<String>> {
        // An argument pasted after text may start with a digit (mips's
        // `SYSCALL_DEFINE6(32_pread, …)` makes `sys_32_pread`); a name may not.
        let word =
            |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let mut out = Vec::with_capacity(self.templates.len());
        for t in &self.templates {
            let mut name = String::new();
            for p in t {
                match p {
                    Piece::Text(s) => name.push_str(s),
                    Piece::Arg(i) => {
                        let a = args.get(*i)?.trim();
                        if !word(a) || (name.is_empty() && a.as_bytes()[0].is_ascii_digit()) {
                            return None;
                        }
                        name.push_str(a);
                    }
                }
            }
            out.push(name);
        }
        Some(out)
    }
}

/// Macro name → its family.
#[derive(Clone, Debug, Default)]
pub struct MacroTable {
    by_macro: HashMap<String, usize>,
    families: Vec<Family>,
    /// (first byte, last byte, length class) of every macro name, as bits: a scanner asks for
    /// every call it sees, and almost all are answered by this filter.
    filter: Vec<u64>,
}

/// Words of a table's filter: a bit for every (first byte, last byte, length class).
const FILTER_WORDS: usize = (1 << 18) / 64;

fn filter_bit(name: &[u8]) -> Option<usize> {
    let (first, last) = (*name.first()?, *name.last()?);
    Some(bit_of(first, last, name.len()))
}

const fn bit_of(first: u8, last: u8, len: usize) -> usize {
    let pair = ((first as usize) << 8) | last as usize;
    let length_class = if len < 11 { len } else { 11 } / 4;
    (pair << 2) | length_class
}

/// The kernel table's filter, made when knav is compiled: a line's scan asks it of every call
/// and almost all are answered without parsing the table (which costs a one-line query about
/// a tenth of a millisecond).
static KERNEL_FILTER: [u64; FILTER_WORDS] = filter_of(KERNEL_MACROS.as_bytes());

/// The filter of the macros (second column) of a table's text, as [`MacroTable::parse`]
/// reads them.
const fn filter_of(text: &[u8]) -> [u64; FILTER_WORDS] {
    let mut out = [0u64; FILTER_WORDS];
    let mut at = 0;
    while at < text.len() {
        let mut end = at;
        while end < text.len() && text[end] != b'\n' {
            end += 1;
        }
        let mut first = at;
        while first < end && text[first].is_ascii_whitespace() {
            first += 1;
        }
        if first < end && text[first] != b'#' {
            let mut k = at;
            while k < end && text[k] != b'\t' {
                k += 1;
            }
            k += 1;
            while k < end && text[k] != b'\t' {
                while k < end && text[k] == b' ' {
                    k += 1;
                }
                let start = k;
                while k < end && text[k] != b' ' && text[k] != b'\t' {
                    k += 1;
                }
                if k > start {
                    let bit = bit_of(text[start], text[k - 1], k - start);
                    out[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        at = end + 1;
    }
    out
}

impl MacroTable {
    /// Parses the table format; an error names the line.
    pub fn parse(text: &str) -> Result<MacroTable, String> {
        let mut t = MacroTable::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            let [family, macros, kind, names] = cols[..] else {
                return Err(format!(
                    "line {}: expected 4 tab-separated columns, found {}",
                    n + 1,
                    cols.len()
                ));
            };
            let kind = match kind {
                "extern" => Kind::Externvar,
                k => match Kind::from_name(k) {
                    Kind::Other => return Err(format!("line {}: unknown kind '{k}'", n + 1)),
                    k => k,
                },
            };
            let mut templates = Vec::new();
            let mut max_arg = 0;
            for name in names.split_whitespace() {
                let mut pieces = Vec::new();
                let mut rest = name;
                while let Some(open) = rest.find('{') {
                    let close = rest[open..]
                        .find('}')
                        .map(|c| open + c)
                        .ok_or_else(|| format!("line {}: unclosed '{{' in {name}", n + 1))?;
                    if open > 0 {
                        pieces.push(Piece::Text(rest[..open].to_string()));
                    }
                    let i: usize = rest[open + 1..close]
                        .parse()
                        .map_err(|_| format!("line {}: bad argument index in {name}", n + 1))?;
                    max_arg = max_arg.max(i);
                    pieces.push(Piece::Arg(i));
                    rest = &rest[close + 1..];
                }
                if !rest.is_empty() {
                    pieces.push(Piece::Text(rest.to_string()));
                }
                if !pieces.iter().any(|p| matches!(p, Piece::Arg(_))) {
                    return Err(format!("line {}: {name} uses no argument", n + 1));
                }
                templates.push(pieces);
            }
            if templates.is_empty() {
                return Err(format!("line {}: no names", n + 1));
            }
            let id = t.families.len();
            t.families.push(Family {
                name: family.to_string(),
                kind,
                templates,
                max_arg,
            });
            for m in macros.split_whitespace() {
                if let Some(bit) = filter_bit(m.as_bytes()) {
                    if t.filter.is_empty() {
                        t.filter = vec![0; FILTER_WORDS];
                    }
                    t.filter[bit / 64] |= 1 << (bit % 64);
                }
                if t.by_macro.insert(m.to_string(), id).is_some() {
                    return Err(format!("line {}: macro {m} is in two families", n + 1));
                }
            }
        }
        Ok(t)
    }

    /// The kernel table (parsed once).
    pub fn kernel() -> &'static MacroTable {
        static TABLE: OnceLock<MacroTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            // The table is part of the program: a bad line is a bug caught by its tests.
            MacroTable::parse(KERNEL_MACROS).unwrap_or_default()
        })
    }

    /// The family `macro_name` belongs to in the kernel table, which is parsed only when the
    /// name passes its filter.
    pub fn kernel_family(macro_name: &[u8]) -> Option<&'static Family> {
        let bit = filter_bit(macro_name)?;
        if KERNEL_FILTER[bit / 64] & (1 << (bit % 64)) == 0 {
            return None;
        }
        MacroTable::kernel().family(macro_name)
    }

    /// The family `macro_name` belongs to.
    pub fn family(&self, macro_name: &[u8]) -> Option<&Family> {
        let bit = filter_bit(macro_name)?;
        if self
            .filter
            .get(bit / 64)
            .is_none_or(|w| w & (1 << (bit % 64)) == 0)
        {
            return None;
        }
        let name = std::str::from_utf8(macro_name).ok()?;
        self.by_macro.get(name).map(|&i| &self.families[i])
    }

    /// Every family, for reports.
    pub fn families(&self) -> &[Family] {
        &self.families
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_filter_made_at_compile_time_is_the_parsed_tables() {
        let t = MacroTable::parse(KERNEL_MACROS).unwrap();
        assert_eq!(t.filter, KERNEL_FILTER.to_vec());
        assert!(MacroTable::kernel_family(b"SYSCALL_DEFINE3").is_some());
        assert!(MacroTable::kernel_family(b"vfs_read").is_none());
    }

    #[test]
    fn the_kernel_table_parses_and_covers_the_families() {
        let t = MacroTable::parse(KERNEL_MACROS).unwrap();
        assert!(t.families().len() >= 60, "{}", t.families().len());
        let f = t.family(b"SYSCALL_DEFINE3").unwrap();
        assert_eq!(f.name, "SYSCALL_DEFINE");
        assert_eq!(f.kind, Kind::Function);
        let names = f.names(&["read", " unsigned int", " fd"]).unwrap();
        assert_eq!(names[0], "sys_read");
        assert!(names.contains(&"__x64_sys_read".to_string()));
        let f = t.family(b"DEFINE_PER_CPU_SHARED_ALIGNED").unwrap();
        assert_eq!(
            f.names(&["struct rq", " runqueues"]).unwrap(),
            ["runqueues"]
        );
        let f = t.family(b"PAGEFLAG").unwrap();
        assert_eq!(
            f.names(&["Dirty", "dirty", "PF_HEAD"]).unwrap(),
            [
                "PageDirty",
                "SetPageDirty",
                "ClearPageDirty",
                "folio_test_dirty",
                "folio_set_dirty",
                "folio_clear_dirty"
            ]
        );
        assert_eq!(t.family(b"module_init").unwrap().kind, Kind::Entry);
        assert_eq!(t.family(b"DECLARE_PER_CPU").unwrap().kind, Kind::Externvar);
        assert!(t.family(b"printk").is_none());
    }

    #[test]
    fn arguments_that_are_not_identifiers_make_no_names() {
        let t = MacroTable::parse(KERNEL_MACROS).unwrap();
        let f = t.family(b"DEFINE_MUTEX").unwrap();
        assert_eq!(f.names(&["name"]).unwrap(), ["name"]);
        assert!(f.names(&["_##name"]).is_none());
        assert!(f.names(&["x[4]"]).is_none());
        assert!(f.names(&[]).is_none());
        assert!(f.names(&["9lives"]).is_none());
    }

    #[test]
    fn bad_table_lines_are_errors_naming_the_line() {
        assert!(MacroTable::parse("A\tB\tfunction\n")
            .unwrap_err()
            .contains("line 1"));
        assert!(MacroTable::parse("A\tB\tblob\tx{0}\n")
            .unwrap_err()
            .contains("unknown kind"));
        assert!(MacroTable::parse("A\tB\tfunction\tx\n")
            .unwrap_err()
            .contains("no argument"));
        assert!(
            MacroTable::parse("A\tB\tfunction\tx{0}\nC\tB\tfunction\ty{0}\n")
                .unwrap_err()
                .contains("two families")
        );
    }
}
