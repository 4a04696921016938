//! Macros learned from `#define`s and expanded as the C preprocessor does, far enough to read
//! match tables: object-like and function-like macros, `#` and `##`, variadic arguments, a
//! macro never expanded inside itself. The caller builds the shared table from the headers it
//! chooses (`include/linux/pci.h`, `usb.h`, `pci_ids.h`, …); a file's own `#define`s, then
//! those of the local headers it includes, are looked up first ([`Scope`]). Expansion is
//! bounded in depth and in tokens.

use std::borrow::Cow;

use crate::cmacro_lex::{lex, Define, Kind, Tok};
use crate::fxhash::FxHashMap;

/// How deep macros may nest in one expansion.
const MAX_DEPTH: usize = 32;
/// How many tokens an invocation's arguments may span.
pub const MAX_ARGUMENT_TOKENS: usize = 1 << 12;
/// How many tokens one expansion may produce.
const MAX_TOKENS: usize = 1 << 16;

/// One learned macro; its text borrowed from the file it was read from, or owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Macro<'a> {
    /// Parameters, `None` when object-like.
    pub params: Option<Vec<Cow<'a, str>>>,
    /// The last parameter takes the rest of the arguments.
    pub variadic: bool,
    /// The replacement list.
    pub body: Vec<Tok<'a>>,
}

/// Macros by name; a later `#define` of a name replaces an earlier one (which is kept for
/// [`Macros::all`]: the other branch of an `#ifdef` may be the one a build sees).
#[derive(Clone, Debug, Default)]
pub struct Macros<'a> {
    defs: FxHashMap<Cow<'a, str>, Macro<'a>>,
    replaced: Vec<(Cow<'a, str>, Macro<'a>)>,
}

impl Macros<'static> {
    /// Learns every `#define` of one file's bytes, owning their text.
    pub fn learn(&mut self, src: &[u8]) {
        let text = crate::cmacro_lex::text(src);
        for d in lex(&text).defines {
            self.add_owned(&d);
        }
    }

    /// Learns one `#define`, owning its text.
    pub fn add_owned(&mut self, d: &Define<'_>) {
        let owned = |t: &Tok<'_>| Tok {
            kind: t.kind,
            text: match t.kind {
                Kind::Punct => punctuator(&t.text)
                    .map_or_else(|| Cow::Owned(t.text.to_string()), Cow::Borrowed),
                _ => Cow::Owned(t.text.to_string()),
            },
            line: t.line,
        };
        let m = Macro {
            params: d
                .params
                .as_ref()
                .map(|p| p.iter().map(|s| Cow::Owned(s.to_string())).collect()),
            variadic: d.variadic,
            body: d.body.iter().map(owned).collect(),
        };
        self.insert(Cow::Owned(d.name.to_string()), m);
    }
}

impl<'a> Macros<'a> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Learns one `#define`, borrowing its text.
    pub fn add(&mut self, d: Define<'a>) {
        let m = Macro {
            params: d.params.map(|p| p.into_iter().map(Cow::Borrowed).collect()),
            variadic: d.variadic,
            body: d.body,
        };
        self.insert(Cow::Borrowed(d.name), m);
    }

    /// Adds `m` as `name`, keeping the definition it replaces.
    fn insert(&mut self, name: Cow<'a, str>, m: Macro<'a>) {
        if let Some(old) = self.defs.insert(name.clone(), m) {
            self.replaced.push((name, old));
        }
    }

    /// Every definition learned, replaced ones too, in no order.
    pub fn all(&self) -> impl Iterator<Item = (&str, &Macro<'a>)> {
        self.iter()
            .chain(self.replaced.iter().map(|(k, v)| (k.as_ref(), v)))
    }

    /// The macro named `name`.
    pub fn get(&self, name: &str) -> Option<&Macro<'a>> {
        self.defs.get(name)
    }

    /// Every macro, in no order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Macro<'a>)> {
        self.defs.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// How many macros it holds.
    pub fn len(&self) -> usize {
        self.defs.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }
}

/// Macros looked up by name: a [`Macros`] table, or a local header's whose `#define`s are
/// read on the first lookup that may find one (`driver_file::LocalHeader`).
pub trait Lookup: std::fmt::Debug {
    /// The macro named `name`.
    fn lookup(&self, name: &str) -> Option<&Macro<'_>>;
}

impl Lookup for Macros<'_> {
    fn lookup(&self, name: &str) -> Option<&Macro<'_>> {
        self.get(name)
    }
}

/// The macros in force in one file: its own first, then its local headers' (the last included
/// first), then the shared ones.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'m> {
    /// The file's own `#define`s.
    pub file: &'m Macros<'m>,
    /// The `#define`s of the local headers it includes (`#include "hw.h"`), in include order.
    pub local: &'m [&'m dyn Lookup],
    /// The table the caller built from headers.
    pub shared: &'m Macros<'m>,
}

impl<'m> Scope<'m> {
    /// The macro named `name`.
    pub fn get(&self, name: &str) -> Option<&'m Macro<'m>> {
        self.own(name).or_else(|| self.shared.get(name))
    }

    /// The macro named `name` among the file's own and its local headers'.
    pub fn own(&self, name: &str) -> Option<&'m Macro<'m>> {
        self.file
            .get(name)
            .or_else(|| self.local.iter().rev().find_map(|m| m.lookup(name)))
    }

    /// `toks` with every macro expanded (each token a macro made takes the line of the
    /// invocation); the output ends at the token bound.
    pub fn expand<'a>(&self, toks: &[Tok<'a>]) -> Vec<Tok<'a>>
    where
        'm: 'a,
    {
        let mut out = Vec::with_capacity(toks.len());
        let mut active = Vec::new();
        let mut budget = MAX_TOKENS;
        self.expand_into(toks, &mut out, &mut active, &mut budget, None);
        out
    }

    /// The body of the function-like macro invoked at `toks[0]` with its arguments in place,
    /// not rescanned (the macros it invokes are left for the caller to read).
    pub fn substituted<'t>(&self, toks: &[Tok<'t>]) -> Option<Vec<Tok<'t>>>
    where
        'm: 't,
    {
        let name = toks.first()?;
        let m = self.get(&name.text)?;
        let params = m.params.as_ref()?;
        let (args, _) = arguments(toks, 1)?;
        let mut budget = MAX_TOKENS;
        Some(self.substitute(m, params, &args, name.line, &mut budget))
    }

    /// Expands `toks` onto `out`; `line` overrides the tokens' lines when set.
    fn expand_into<'a>(
        &self,
        toks: &[Tok<'a>],
        out: &mut Vec<Tok<'a>>,
        active: &mut Vec<String>,
        budget: &mut usize,
        line: Option<u32>,
    ) where
        'm: 'a,
    {
        let mut i = 0;
        while i < toks.len() && *budget > 0 {
            *budget -= 1;
            let t = &toks[i];
            let at = line.unwrap_or(t.line);
            let found = (t.kind == Kind::Ident && active.len() < MAX_DEPTH)
                .then(|| self.get(&t.text))
                .flatten()
                .filter(|_| !active.iter().any(|a| *a == t.text));
            let Some(m) = found else {
                out.push(Tok {
                    line: at,
                    ..t.clone()
                });
                i += 1;
                continue;
            };
            let (body, next) = match &m.params {
                None => (m.body.iter().map(|b| relined(b, at)).collect(), i + 1),
                Some(params) => match arguments(toks, i + 1) {
                    Some((args, next)) => (self.substitute(m, params, &args, at, budget), next),
                    None => {
                        out.push(Tok {
                            line: at,
                            ..t.clone()
                        });
                        i += 1;
                        continue;
                    }
                },
            };
            active.push(t.text.to_string());
            self.expand_into(&body, out, active, budget, Some(at));
            active.pop();
            i = next;
        }
    }

    /// The body of `m` with `args` in place of its parameters: `#p` a string, `a ## b` one
    /// token, a parameter elsewhere its argument expanded.
    fn substitute<'a>(
        &self,
        m: &'m Macro<'m>,
        params: &[Cow<'m, str>],
        args: &[Vec<Tok<'a>>],
        line: u32,
        budget: &mut usize,
    ) -> Vec<Tok<'a>>
    where
        'm: 'a,
    {
        let arg_of = |t: &Tok<'_>| -> Option<usize> {
            if t.kind != Kind::Ident {
                return None;
            }
            params.iter().position(|p| *p == t.text)
        };
        let arg_toks = |k: usize| -> Vec<Tok<'a>> {
            if m.variadic && k + 1 == params.len() {
                let mut all = Vec::new();
                for (n, a) in args.iter().enumerate().skip(k) {
                    if n > k {
                        all.push(punct(",", line));
                    }
                    all.extend(a.iter().cloned());
                }
                all
            } else {
                args.get(k).cloned().unwrap_or_default()
            }
        };
        let mut out: Vec<Tok<'a>> = Vec::new();
        let body = &m.body;
        let mut i = 0;
        while i < body.len() && *budget > 0 {
            let t = &body[i];
            let pasted_next = body.get(i + 1).is_some_and(|n| n.is("##"));
            let pasted_prev = i > 0 && body[i - 1].is("##");
            if t.is("#") && body.get(i + 1).and_then(arg_of).is_some() {
                let k = body.get(i + 1).and_then(arg_of).unwrap_or(0);
                out.push(stringify(&arg_toks(k), line));
                i += 2;
                continue;
            }
            if t.is("##") {
                if let (Some(left), Some(right)) = (out.pop(), body.get(i + 1)) {
                    let mut right_toks = match arg_of(right) {
                        Some(k) => arg_toks(k),
                        None => vec![relined(right, line)],
                    };
                    if right_toks.is_empty() {
                        // `, ## args` with no arguments drops the comma (GNU).
                        if !left.is(",") {
                            out.push(left);
                        }
                    } else if left.is(",") {
                        // `, ## args` with arguments keeps the comma, pasting nothing.
                        out.push(left);
                        out.extend(right_toks.into_iter().map(|t| Tok { line, ..t }));
                    } else {
                        let first = right_toks.remove(0);
                        out.push(paste(left, &first, line));
                        out.extend(right_toks.into_iter().map(|t| Tok { line, ..t }));
                    }
                }
                i += 2;
                continue;
            }
            match arg_of(t) {
                Some(k) if pasted_next || pasted_prev => {
                    out.extend(arg_toks(k).into_iter().map(|t| Tok { line, ..t }));
                }
                Some(k) => {
                    let mut expanded = Vec::new();
                    let mut active = Vec::new();
                    self.expand_into(&arg_toks(k), &mut expanded, &mut active, budget, Some(line));
                    out.extend(expanded);
                }
                None => out.push(relined(t, line)),
            }
            i += 1;
        }
        out
    }
}

/// `t` (from a macro body) on line `line`, its text borrowed from the body.
fn relined<'a>(t: &'a Tok<'_>, line: u32) -> Tok<'a> {
    Tok {
        kind: t.kind,
        text: Cow::Borrowed(t.text.as_ref()),
        line,
    }
}

/// The punctuator `p` as a static text: an owned token that needs no allocation of its own.
fn punctuator(p: &str) -> Option<&'static str> {
    Some(match p {
        "(" => "(",
        ")" => ")",
        "," => ",",
        ";" => ";",
        "{" => "{",
        "}" => "}",
        "[" => "[",
        "]" => "]",
        "." => ".",
        "#" => "#",
        "##" => "##",
        "=" => "=",
        "+" => "+",
        "-" => "-",
        "*" => "*",
        "/" => "/",
        "%" => "%",
        "&" => "&",
        "|" => "|",
        "^" => "^",
        "~" => "~",
        "!" => "!",
        "<" => "<",
        ">" => ">",
        "?" => "?",
        ":" => ":",
        "->" => "->",
        "<<" => "<<",
        ">>" => ">>",
        "&&" => "&&",
        "||" => "||",
        "==" => "==",
        "!=" => "!=",
        "<=" => "<=",
        ">=" => ">=",
        "++" => "++",
        "--" => "--",
        "+=" => "+=",
        "-=" => "-=",
        "*=" => "*=",
        "/=" => "/=",
        "&=" => "&=",
        "|=" => "|=",
        "^=" => "^=",
        "..." => "...",
        "<<=" => "<<=",
        ">>=" => ">>=",
        _ => return None,
    })
}

/// A punctuator token.
fn punct<'a>(p: &'static str, line: u32) -> Tok<'a> {
    Tok {
        kind: Kind::Punct,
        text: Cow::Borrowed(p),
        line,
    }
}

/// `a ## b`: one token of both texts, an identifier when it reads as one.
fn paste<'a>(a: Tok<'a>, b: &Tok<'a>, line: u32) -> Tok<'a> {
    let text = format!("{}{}", a.text, b.text);
    let kind = match a.kind {
        Kind::Ident | Kind::Number => a.kind,
        _ => b.kind,
    };
    Tok {
        kind,
        text: Cow::Owned(text),
        line,
    }
}

/// `#arg`: the argument's text as a string literal.
fn stringify<'a>(arg: &[Tok<'_>], line: u32) -> Tok<'a> {
    let mut s = String::from("\"");
    for (n, t) in arg.iter().enumerate() {
        if n > 0 && joins_with_space(&arg[n - 1], t) {
            s.push(' ');
        }
        for c in t.text.chars() {
            if matches!(t.kind, Kind::Str | Kind::Char) && (c == '"' || c == '\\') {
                s.push('\\');
            }
            s.push(c);
        }
    }
    s.push('"');
    Tok {
        kind: Kind::Str,
        text: Cow::Owned(s),
        line,
    }
}

/// True when two adjacent tokens need a space between them to stay two (both words).
pub fn joins_with_space(a: &Tok<'_>, b: &Tok<'_>) -> bool {
    matches!(a.kind, Kind::Ident | Kind::Number) && matches!(b.kind, Kind::Ident | Kind::Number)
}

/// The tokens as C text, a space only where two words meet.
pub fn text_of(toks: &[Tok<'_>]) -> String {
    let mut s = String::new();
    for (n, t) in toks.iter().enumerate() {
        if n > 0 && joins_with_space(&toks[n - 1], t) {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}

/// The arguments of the invocation whose `(` should be at `toks[at]`, split at top-level
/// commas, and the index past its `)`; `None` when no `(` follows or it does not close within
/// [`MAX_ARGUMENT_TOKENS`] (an invocation that never closes costs no more than that).
pub fn arguments<'a>(toks: &[Tok<'a>], at: usize) -> Option<(Vec<Vec<Tok<'a>>>, usize)> {
    if !toks.get(at)?.is("(") {
        return None;
    }
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    let end = toks.len().min(at + MAX_ARGUMENT_TOKENS);
    for (k, t) in toks.iter().enumerate().take(end).skip(at + 1) {
        if t.kind == Kind::Punct {
            match t.text.as_ref() {
                "(" | "[" | "{" => depth += 1,
                ")" if depth == 0 => {
                    if args.len() == 1 && args[0].is_empty() {
                        args.clear();
                    }
                    return Some((args, k + 1));
                }
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                "," if depth == 0 => {
                    args.push(Vec::new());
                    continue;
                }
                _ => {}
            }
        }
        if let Some(last) = args.last_mut() {
            last.push(t.clone());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(src: &str) -> Macros<'static> {
        let mut m = Macros::new();
        m.learn(src.as_bytes());
        m
    }

    fn expand(shared: &Macros, src: &str) -> String {
        let file = Macros::new();
        let scope = Scope {
            file: &file,
            local: &[],
            shared,
        };
        let l = lex(src);
        text_of(&scope.expand(&l.toks))
    }

    #[test]
    fn pci_vdevice_pastes_and_resolves() {
        // include/linux/pci.h and include/linux/pci_ids.h, Linux 6.12.
        let m = table(
            "#define PCI_ANY_ID (~0)\n#define PCI_VENDOR_ID_INTEL 0x8086\n\
             #define PCI_VDEVICE(vend, dev) \\\n\t.vendor = PCI_VENDOR_ID_##vend, .device = (dev), \\\n\t.subvendor = PCI_ANY_ID, .subdevice = PCI_ANY_ID, 0, 0\n",
        );
        assert_eq!(
            expand(&m, "PCI_VDEVICE(INTEL, 0x105E)"),
            ".vendor=0x8086,.device=(0x105E),.subvendor=(~0),.subdevice=(~0),0,0"
        );
    }

    #[test]
    fn stringify_variadic_and_recursion() {
        let m = table(
            "#define S(x) #x\n#define V(a, ...) f(a, ##__VA_ARGS__)\n#define R R + 1\n#define A B\n#define B A\n",
        );
        assert_eq!(expand(&m, "S(foo bar)"), "\"foo bar\"");
        assert_eq!(expand(&m, "V(1)"), "f(1)");
        assert_eq!(expand(&m, "V(1, 2, 3)"), "f(1,2,3)");
        assert_eq!(expand(&m, "R"), "R+1");
        assert_eq!(expand(&m, "A"), "A");
        assert_eq!(expand(&m, "S"), "S", "a function-like name without (");
    }

    #[test]
    fn lines_are_the_invocations() {
        let m = table("#define E(c) { .compatible = c },\n");
        let file = Macros::new();
        let scope = Scope {
            file: &file,
            local: &[],
            shared: &m,
        };
        let l = lex("x\n\nE(\"a,b\")\n");
        let out = scope.expand(&l.toks);
        assert_eq!(out.last().unwrap().line, 3);
        assert_eq!(out[0].line, 1);
    }

    #[test]
    fn expansion_is_bounded() {
        let m = table("#define X(a) a a a a a a a a\n#define Y X(X(X(X(X(X(X(X(1))))))))\n");
        let out = expand(&m, "Y Y");
        assert!(out.len() <= MAX_TOKENS, "{}", out.len());
    }
}
