//! The top-level definitions of one C file with their lines, found by following braces in one
//! pass, without ctags: functions (`name(…) {…}`), `struct`/`union`/`enum` bodies
//! (`struct name {…}`) and `#define`s. The history index reads every version of every file a
//! commit changes, so it needs spans in microseconds; ctags gives definitions of one version.
//!
//! Both branches of an `#if` are read as code: braces that balance only within one branch can
//! end a definition early or late (rare in the kernel, which keeps its functions whole in each
//! branch). A function made by a macro is named by the macro (`SYSCALL_DEFINE3`), as in its
//! text.

use crate::lex;
use crate::scan::{is_ident, is_ident_start};

/// What a span defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpanKind {
    /// A function: its name is followed by `(…)` and a body.
    Function,
    /// A `struct`, `union` or `enum` with a body.
    Type,
    /// A `#define`.
    Macro,
}

/// One top-level definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefSpan {
    /// Its name.
    pub name: String,
    /// What it is.
    pub kind: SpanKind,
    /// Its first line (1-based): the name's, or the line above when the name starts its line
    /// (the kernel's `static int\nname(…)`).
    pub first: u32,
    /// Its last line (the closing `}`, or the `#define`'s last continued line).
    pub last: u32,
}

/// The state of the walk at brace depth 0: what a `{` would open.
#[derive(Default)]
struct Top {
    depth: u32,
    parens: u32,
    /// The last identifier before a `(` at paren depth 0: (start, end, line, starts its line).
    callee: Option<(usize, usize, u32, bool)>,
    /// After `struct`/`union`/`enum`: its name, once seen.
    tagged: Option<Option<(usize, usize, u32)>>,
    /// The last identifier at depth 0.
    last_ident: Option<(usize, usize, u32, bool)>,
    /// The last code byte (`a` for an identifier).
    last_sig: u8,
    /// The definition the open block is the body of.
    open: Option<(String, SpanKind, u32)>,
}

impl Top {
    /// An identifier `src[start..end]` on `line`.
    fn ident(&mut self, src: &[u8], start: usize, end: usize, line: u32, first_on_line: bool) {
        if self.depth == 0 {
            let word = &src[start..end];
            if matches!(word, b"struct" | b"union" | b"enum") && self.parens == 0 {
                self.tagged = Some(None);
            } else if let Some(None) = self.tagged {
                self.tagged = Some(Some((start, end, line)));
            }
            self.last_ident = Some((start, end, line, first_on_line));
        }
        self.last_sig = b'a';
    }

    /// A code byte `b` on `line`; a definition it closes goes to `out`.
    fn punct(&mut self, src: &[u8], b: u8, line: u32, out: &mut Vec<DefSpan>) {
        match b {
            b'(' if self.depth == 0 => {
                // `f(…) __acquires(x) {`: an annotation after a closed parameter list does not
                // name the function.
                let annotation = self.last_sig == b'a'
                    && self.callee.is_some()
                    && self
                        .last_ident
                        .is_some_and(|(s, _, _, _)| src[s..].starts_with(b"__"));
                if self.parens == 0 && !annotation {
                    self.callee = self.last_ident.filter(|_| self.last_sig == b'a');
                    self.tagged = self.tagged.filter(|t| t.is_none());
                }
                self.parens += 1;
            }
            b')' if self.depth == 0 => self.parens = self.parens.saturating_sub(1),
            b'{' => {
                if self.depth == 0 {
                    self.open = match (self.tagged.take(), self.callee) {
                        (Some(Some((s, e, l))), _) => Some((text(src, s, e), SpanKind::Type, l)),
                        (None, Some((s, e, l, first))) if self.last_sig == b')' => Some((
                            text(src, s, e),
                            SpanKind::Function,
                            if first && l > 1 { l - 1 } else { l },
                        )),
                        _ => None,
                    };
                }
                self.depth += 1;
            }
            b'}' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    if let Some((name, kind, first)) = self.open.take() {
                        out.push(DefSpan {
                            name,
                            kind,
                            first,
                            last: line,
                        });
                    }
                    self.callee = None;
                    self.tagged = None;
                }
            }
            b';' if self.depth == 0 => {
                self.callee = None;
                self.tagged = None;
                self.parens = 0;
            }
            // An initializer follows: no definition's body.
            b'=' if self.depth == 0 && self.parens == 0 => {
                self.callee = None;
                self.tagged = None;
            }
            _ => {}
        }
        self.last_sig = b;
    }
}

/// The top-level definitions of `src`, in file order.
pub fn def_spans(src: &[u8]) -> Vec<DefSpan> {
    let mut out = Vec::new();
    let mut line: u32 = 1;
    let mut line_start = 0usize;
    let mut top = Top {
        last_sig: b';',
        ..Top::default()
    };
    let mut i = 0usize;
    // Whether anything but white space came before, on this line.
    let mut code_on_line = false;
    while i < src.len() {
        let b = src[i];
        if b == b'\n' {
            line += 1;
            i += 1;
            line_start = i;
            code_on_line = false;
            continue;
        }
        let first_on_line = !code_on_line;
        code_on_line |= !b.is_ascii_whitespace();
        let skip_to = match b {
            b'/' if src.get(i + 1) == Some(&b'*') => lex::block_comment_end(src, i),
            b'/' if src.get(i + 1) == Some(&b'/') => lex::line_comment_end(src, i),
            b'"' | b'\'' => {
                top.last_sig = b'"';
                lex::literal_end(src, i).0
            }
            b'#' if first_on_line => {
                let end = directive_end(src, i);
                if top.depth == 0 {
                    if let Some((name, last)) = define(src, i, end, line) {
                        out.push(DefSpan {
                            name,
                            kind: SpanKind::Macro,
                            first: line,
                            last,
                        });
                    }
                }
                end
            }
            _ if is_ident_start(b) => {
                let start = i;
                while i < src.len() && is_ident(src[i]) {
                    i += 1;
                }
                top.ident(src, start, i, line, first_on_line);
                continue;
            }
            _ => {
                if !b.is_ascii_whitespace() {
                    top.punct(src, b, line, &mut out);
                }
                i += 1;
                continue;
            }
        };
        count_lines(src, i, skip_to, &mut line, &mut line_start);
        i = skip_to;
    }
    out.sort_by_key(|d| (d.first, d.last));
    out
}

fn text(src: &[u8], s: usize, e: usize) -> String {
    String::from_utf8_lossy(&src[s..e]).into_owned()
}

/// Counts the newlines of `src[from..to]` into `line`, and where the last line starts.
fn count_lines(src: &[u8], from: usize, to: usize, line: &mut u32, line_start: &mut usize) {
    for nl in memchr::memchr_iter(b'\n', &src[from..to.min(src.len())]) {
        *line += 1;
        *line_start = from + nl + 1;
    }
}

/// The newline that ends the preprocessor line at `i`: the first not continued by a backslash
/// (as a `//` comment ends).
fn directive_end(src: &[u8], i: usize) -> usize {
    lex::line_comment_end(src, i)
}

/// The name of the `#define` in `src[i..end]` and its last line (from `line`).
fn define(src: &[u8], i: usize, end: usize, line: u32) -> Option<(String, u32)> {
    let d = &src[i + 1..end];
    let rest = d.trim_ascii_start().strip_prefix(b"define")?;
    let name_at = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    if name_at == 0 {
        return None;
    }
    let name: Vec<u8> = rest[name_at..]
        .iter()
        .copied()
        .take_while(|&b| is_ident(b))
        .collect();
    if name.is_empty() || !is_ident_start(name[0]) {
        return None;
    }
    let lines = memchr::memchr_iter(b'\n', d).count() as u32;
    Some((String::from_utf8_lossy(&name).into_owned(), line + lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(src: &str) -> Vec<(String, SpanKind, u32, u32)> {
        def_spans(src.as_bytes())
            .into_iter()
            .map(|d| (d.name, d.kind, d.first, d.last))
            .collect()
    }

    #[test]
    fn an_annotation_after_the_parameters_does_not_name_the_function() {
        let src = "static void *c_start(struct seq_file *m) __acquires(RCU)\n{\n\treturn 0;\n}\n__attribute__((cold)) int g(void)\n{\n}\n";
        assert_eq!(
            spans(src),
            [
                ("c_start".into(), SpanKind::Function, 1, 4),
                ("g".into(), SpanKind::Function, 5, 7),
            ]
        );
    }

    #[test]
    fn functions_types_and_macros_with_their_lines() {
        let src = "#include <x.h>\n#define ONE 1\n#define TWO(a) \\\n\t((a) + 2)\n\nstatic int\nfoo(int a)\n{\n\tif (a) {\n\t\treturn 1; /* } */\n\t}\n\treturn \"}\"[0];\n}\n\nstruct bar {\n\tint x;\n};\n\nint baz(void);\nint (*fp)(void) = 0;\nvoid qux(void) { }\n";
        assert_eq!(
            spans(src),
            [
                ("ONE".into(), SpanKind::Macro, 2, 2),
                ("TWO".into(), SpanKind::Macro, 3, 4),
                ("foo".into(), SpanKind::Function, 6, 13),
                ("bar".into(), SpanKind::Type, 15, 17),
                ("qux".into(), SpanKind::Function, 21, 21),
            ]
        );
    }

    #[test]
    fn initializers_and_declarations_are_no_definitions() {
        let src = "static const struct ops o = {\n\t.f = f,\n};\nint a[] = { 1, 2 };\nextern int g(int);\n";
        assert_eq!(spans(src), []);
    }

    #[test]
    fn a_macro_made_function_is_named_by_its_macro() {
        let src = "SYSCALL_DEFINE3(read, unsigned int, fd, char __user *, buf, size_t, count)\n{\n\treturn ksys_read(fd, buf, count);\n}\n";
        assert_eq!(
            spans(src),
            [("SYSCALL_DEFINE3".into(), SpanKind::Function, 1, 4)]
        );
    }
}
