//! Macros that define what their arguments name, learned from their `#define`s: a body that
//! declares a function or variable named by a parameter (as is, or pasted with `##`), directly
//! (`#define DEFINE_IDTENTRY_RAW(func) __visible noinstr void func(struct pt_regs *regs)`) or
//! through another such macro it invokes (one or two levels). The build learns them from every
//! header of the tree before it reads invocations, and from each file's own `#define`s.

use std::collections::{HashMap, HashSet};
use std::ops::Deref;

use knav_ctags::Kind;

use crate::lex::{tokens, Tok};
use crate::membercall::{MemberCall, NameSketch};

/// One piece of a name template: text, or an argument by index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Piece {
    /// Literal text.
    Text(String),
    /// The invocation's argument at this index.
    Arg(usize),
}

/// A name a macro makes from its arguments, and what it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Template {
    /// The name's pieces.
    pub pieces: Vec<Piece>,
    /// `Function` (a body follows the declarator, in the macro or at the invocation),
    /// `Prototype` (the macro ends the declaration with `;`) or `Variable`.
    pub kind: Kind,
    /// A function declarator ends the macro: the invocation's own `{ … }` is its body, and an
    /// invocation followed by `;` only declares it.
    pub open: bool,
    /// The struct tag of a variable's type (`const struct sched_class name##_sched_class`):
    /// an invocation followed by `= {` initializes that struct ([`crate::indirect`]).
    pub tag: Option<String>,
}

impl Template {
    /// The name for `args`; `None` when an argument it needs is missing or not an identifier.
    pub fn name(&self, args: &[&str]) -> Option<String> {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Arg(i) => {
                    let a = args.get(*i)?.trim();
                    if !is_ident(a) {
                        return None;
                    }
                    out.push_str(a);
                }
            }
        }
        is_ident(&out).then_some(out)
    }
}

/// A macro a `#define` invokes, with its arguments as pieces: `None` for an argument that is
/// not a paste of parameters and identifiers.
pub type Call = (String, Vec<Option<Vec<Piece>>>);

/// What one header's `#define`s define: its path, and per macro what was learned.
pub type HeaderDefines = (String, Vec<(String, Learned)>);

/// What one `#define` says: its own templates, and the macros it invokes with its parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Learned {
    templates: Vec<Template>,
    calls: Vec<Call>,
    /// An indirect-call wrapper ([`Definers::wrapper`]): the functions it lists after its
    /// pointer, and the macro it hands them to when it does not call the pointer itself.
    wrapper: Option<(usize, Option<String>)>,
    /// The calls through members its body makes ([`crate::membercall`]).
    member_calls: Vec<MemberCall>,
    /// The paths its calls through members apply under ([`crate::membercall::scope_of`] its
    /// header; empty: everywhere).
    scope: String,
    /// The `#define` from its name on, on one line: what [`Definers::record_text`] keeps.
    text: String,
}

impl Learned {
    /// The names the `#define` itself declares, from its parameters.
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// The macros it invokes, each with its arguments as pieces of its own parameters.
    pub fn calls(&self) -> &[Call] {
        &self.calls
    }
}

/// The text of `pieces` for `args`: `None` when an argument it needs is missing.
pub fn pieces_text(pieces: &[Piece], args: &[&str]) -> Option<String> {
    let mut out = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Arg(i) => out.push_str(args.get(*i)?.trim()),
        }
    }
    Some(out)
}

/// Macro name → the names its invocations define.
#[derive(Clone, Debug, Default)]
pub struct Definers {
    map: HashMap<String, Vec<Template>>,
    /// The indirect-call wrappers among them, with the functions each lists: a handful, looked
    /// up at every call in a file.
    wrappers: Vec<(String, usize)>,
    /// The macros whose bodies call through members ([`crate::membercall`]), with their
    /// calls, each with the paths it applies under.
    member_calls: HashMap<String, Vec<(String, MemberCall)>>,
    /// The names of `member_calls`.
    member_call_names: NameSketch,
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && !s.as_bytes()[0].is_ascii_digit()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Words before a name that make it something other than a declared one.
fn not_a_type(word: &str) -> bool {
    matches!(
        word,
        "return"
            | "else"
            | "case"
            | "goto"
            | "sizeof"
            | "do"
            | "if"
            | "while"
            | "for"
            | "switch"
            | "typedef"
            | "extern"
            | "struct"
            | "union"
            | "enum"
            | "defined"
            | "__typeof__"
            | "typeof"
            | "asm"
            | "__asm__"
            | "break"
            | "continue"
    )
}

/// The pieces of the paste `toks[at..]` (`__x64_sys ## name`) and where it ends; `None` when it
/// names no parameter.
fn paste_at(toks: &[Tok<'_>], at: usize, params: &[&str]) -> (Option<Vec<Piece>>, usize) {
    let mut pieces = Vec::new();
    let mut i = at;
    let mut uses_param = false;
    while let Some(Tok::Ident(w)) = toks.get(i) {
        match params.iter().position(|p| p == w) {
            Some(k) => {
                pieces.push(Piece::Arg(k));
                uses_param = true;
            }
            None => match pieces.last_mut() {
                Some(Piece::Text(t)) => t.push_str(w),
                _ => pieces.push(Piece::Text(w.to_string())),
            },
        }
        i += 1;
        if toks.get(i) == Some(&Tok::Paste) {
            i += 1;
        } else {
            break;
        }
    }
    (uses_param.then_some(pieces), i.max(at + 1))
}

/// Learns what a `#define NAME(params) body` defines.
pub fn learn(params: &[&str], body: &[u8]) -> Learned {
    let mut out = Learned::default();
    if params.is_empty() || body.is_empty() {
        return out;
    }
    let toks = tokens(body);
    let (mut parens, mut braces) = (0usize, 0usize);
    // The statement so far holds `extern` or `typedef`: nothing in it is defined.
    let mut declaration_only = false;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct(b'(') => parens += 1,
            Tok::Punct(b')') => parens = parens.saturating_sub(1),
            Tok::Punct(b'{') => braces += 1,
            Tok::Punct(b'}') => {
                braces = braces.saturating_sub(1);
                declaration_only = false;
            }
            Tok::Punct(b';') if braces == 0 => declaration_only = false,
            Tok::Ident(w) if parens == 0 && braces == 0 => {
                if matches!(*w, "extern" | "typedef") {
                    declaration_only = true;
                }
                let prev = i.checked_sub(1).map(|p| &toks[p]);
                let typed = match prev {
                    Some(Tok::Ident(p)) => !not_a_type(p) && params.iter().all(|q| q != p),
                    // `int *name`, `char **name`; not `2 * name`.
                    Some(Tok::Punct(b'*')) => toks[..i - 1]
                        .iter()
                        .rev()
                        .find(|t| **t != Tok::Punct(b'*'))
                        .is_some_and(|t| matches!(t, Tok::Ident(p) if !not_a_type(p))),
                    _ => false,
                };
                let (pieces, end) = paste_at(&toks, i, params);
                // A macro invoked with parameters: `SYSCALL_DEFINEx(3, _##name, …)`.
                if toks.get(end) == Some(&Tok::Punct(b'('))
                    && end == i + 1
                    && params.iter().all(|q| q != w)
                {
                    if let Some(args) = call_args(&toks, end, params) {
                        if args.iter().any(|a| {
                            a.as_ref()
                                .is_some_and(|p| p.iter().any(|x| matches!(x, Piece::Arg(_))))
                        }) {
                            out.calls.push((w.to_string(), args));
                        }
                    }
                }
                if let (Some(pieces), true, false) = (pieces, typed, declaration_only) {
                    let tag = match (i.checked_sub(2).map(|p| &toks[p]), prev) {
                        (Some(Tok::Ident("struct" | "union")), Some(Tok::Ident(t))) => {
                            Some(t.to_string())
                        }
                        _ => None,
                    };
                    if let Some(t) = declared(&toks, end, pieces, tag) {
                        out.templates.push(t);
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// What the declarator ending at `toks[end]` declares: a function (`(…)` then `{`, or the end
/// of the body), a prototype (`(…);`) or a variable (`=`, `;`, `[`, `,`, an attribute, or the
/// end of the body).
fn declared(
    toks: &[Tok<'_>],
    end: usize,
    pieces: Vec<Piece>,
    tag: Option<String>,
) -> Option<Template> {
    let template = |kind, open| {
        Some(Template {
            pieces: pieces.clone(),
            kind,
            open,
            tag: if kind == Kind::Variable {
                tag.clone()
            } else {
                None
            },
        })
    };
    match toks.get(end) {
        Some(Tok::Punct(b'(')) => {
            let close = matching(toks, end)?;
            match toks.get(close + 1) {
                None => template(Kind::Function, true),
                Some(Tok::Punct(b'{')) => template(Kind::Function, false),
                Some(Tok::Punct(b';')) => template(Kind::Prototype, false),
                _ => None,
            }
        }
        None | Some(Tok::Punct(b'=' | b';' | b'[' | b',')) => template(Kind::Variable, false),
        Some(Tok::Ident(w)) if w.starts_with("__") => template(Kind::Variable, false),
        _ => None,
    }
}

/// The index of the `)` matching the `(` at `open`.
fn matching(toks: &[Tok<'_>], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct(b'(') => depth += 1,
            Tok::Punct(b')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The arguments of the invocation whose `(` is at `open`, each a paste of identifiers and
/// parameters or `None`.
fn call_args(toks: &[Tok<'_>], open: usize, params: &[&str]) -> Option<Vec<Option<Vec<Piece>>>> {
    let close = matching(toks, open)?;
    let mut args = Vec::new();
    let mut start = open + 1;
    let mut depth = 0usize;
    for k in open + 1..=close {
        match toks[k] {
            Tok::Punct(b'(') => depth += 1,
            Tok::Punct(b')') if depth > 0 => depth -= 1,
            Tok::Punct(b',') | Tok::Punct(b')') if depth == 0 => {
                let (pieces, end) = paste_at(toks, start, params);
                let whole = end == k;
                let plain = match &toks[start..k] {
                    [Tok::Ident(w)] => Some(vec![Piece::Text(w.to_string())]),
                    _ => None,
                };
                args.push(if whole { pieces.or(plain) } else { None });
                start = k + 1;
            }
            _ => {}
        }
    }
    Some(args)
}

/// True for `INDIRECT_CALL_<n>`, the kernel's own indirect-call wrappers, with `n` listed
/// functions: what a learned wrapper may hand its arguments to.
pub fn indirect_call_arity(name: &[u8]) -> Option<usize> {
    let digits = name.strip_prefix(b"INDIRECT_CALL_")?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// An indirect-call wrapper's `#define`: variadic, with the pointer as its first parameter and
/// at least one function after it (`INDIRECT_CALL_1(f, f1, ...)`), each of which the body
/// compares (with the pointer or its copy) and calls with the variadic arguments
/// (`likely(__f1 == f1) ? f1(__VA_ARGS__) : …`), or hands on after the pointer to another macro
/// (`INDIRECT_CALL_2(f, f2, f1, __VA_ARGS__)`), which must be a wrapper too. A variant that
/// only calls the pointer (`f(__VA_ARGS__)`, the build without the optimisation) says nothing;
/// a macro that calls its first parameter with other parameters beside the variadic ones
/// (`call_on_irqstack_cond(func, regs, …)`) is no wrapper. `params` as [`define_named`] gives
/// them (the variadic one last).
fn wrapper_of(params: &[&str], variadic: bool, body: &[u8]) -> Option<(usize, Option<String>)> {
    let (pointer, rest) = params.split_first()?;
    let (va, fns) = rest.split_last()?;
    if !variadic || fns.is_empty() {
        return None;
    }
    let toks = tokens(body);
    let called = |f: &str| {
        toks.windows(4).any(|w| {
            matches!(w, [Tok::Ident(p), Tok::Punct(b'('), Tok::Ident(a), Tok::Punct(b')')]
                if *p == f && a == va)
        })
    };
    // The macro the pointer (or a copy of it: `typeof(f) __f2 = (f);`) is handed to as a
    // first argument, and the names in that call.
    let mut handed: Option<(&str, Vec<&str>)> = None;
    for (i, w) in toks.windows(4).enumerate() {
        if let [Tok::Ident(m), Tok::Punct(b'('), Tok::Ident(_), Tok::Punct(b',')] = w {
            if handed.is_none() && !fns.contains(m) && m != pointer {
                let mut depth = 0usize;
                let mut names = Vec::new();
                for t in &toks[i + 1..] {
                    match t {
                        Tok::Punct(b'(') => depth += 1,
                        Tok::Punct(b')') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Tok::Ident(n) => names.push(*n),
                        _ => {}
                    }
                }
                handed = Some((m, names));
            }
        }
    }
    // The pointer (or its copy) is compared with a listed function (`likely(__f1 == f1)`).
    let compared = |f: &str| {
        toks.windows(4).any(|w| match w {
            [Tok::Ident(a), Tok::Punct(b'='), Tok::Punct(b'='), Tok::Ident(b)] => {
                *a == f || *b == f
            }
            _ => false,
        })
    };
    let mut via = None;
    for f in fns {
        if called(f) && compared(f) {
            continue;
        }
        match &handed {
            Some((m, names)) if names.contains(f) => via = Some(m.to_string()),
            _ => return None,
        }
    }
    Some((fns.len(), via))
}

impl Definers {
    /// The number of functions an invocation of the indirect-call wrapper `macro_name` lists
    /// after its pointer (`INDIRECT_CALL_INET(f, f2, f1, …)`: 2), learned from its `#define`s
    /// ([`wrapper_of`]); `None` for any other macro.
    pub fn wrapper(&self, macro_name: &[u8]) -> Option<usize> {
        self.wrappers
            .iter()
            .find(|(name, _)| name.as_bytes() == macro_name)
            .map(|&(_, n)| n)
    }

    /// Every indirect-call wrapper ([`Definers::wrapper`]) with the number of functions it
    /// lists, by name.
    pub fn wrappers(&self) -> impl Iterator<Item = (&str, usize)> {
        self.wrappers.iter().map(|(name, n)| (name.as_str(), *n))
    }

    /// The calls through members that an invocation of `macro_name` in the file at `path`
    /// makes (learned from its `#define`s, [`crate::membercall::learn`], where the header
    /// that defines it is seen from `path`: [`crate::membercall::scope_of`]); empty for any
    /// other macro.
    pub fn member_calls(&self, macro_name: &[u8], path: &str) -> Vec<MemberCall> {
        if !self.member_call_names.may_hold(macro_name) {
            return Vec::new();
        }
        let Some(calls) = std::str::from_utf8(macro_name)
            .ok()
            .and_then(|m| self.member_calls.get(m))
        else {
            return Vec::new();
        };
        // The nearest header's definition hides the others: a driver's own header before
        // include/'s.
        let seen = |scope: &str| path.starts_with(scope);
        let Some(nearest) = (calls.iter())
            .filter(|(scope, _)| seen(scope))
            .map(|(scope, _)| scope.len())
            .max()
        else {
            return Vec::new();
        };
        (calls.iter())
            .filter(|(scope, _)| seen(scope) && scope.len() == nearest)
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// Every macro that calls through members, with its calls and where each applies, in
    /// name order.
    pub fn all_member_calls(&self) -> Vec<(&str, &[(String, MemberCall)])> {
        let mut v: Vec<(&str, &[(String, MemberCall)])> = (self.member_calls.iter())
            .map(|(k, v)| (k.as_str(), v.as_slice()))
            .collect();
        v.sort_unstable();
        v
    }

    /// True when some macro calls through members.
    pub fn has_member_calls(&self) -> bool {
        !self.member_calls.is_empty()
    }

    /// Adds the calls through members of `macro_name`, once each, applying under `scope`.
    fn add_member_calls(&mut self, macro_name: &str, scope: &str, calls: Vec<MemberCall>) {
        if calls.is_empty() {
            return;
        }
        self.member_call_names.insert(macro_name.as_bytes());
        let e = self.member_calls.entry(macro_name.to_string()).or_default();
        for c in calls {
            let c = (scope.to_string(), c);
            if !e.contains(&c) {
                e.push(c);
            }
        }
        e.sort_unstable();
    }

    /// The struct tag of the variable an invocation of `macro_name` declares, if it declares
    /// one of a struct type.
    pub fn struct_tag(&self, macro_name: &[u8]) -> Option<String> {
        self.get(macro_name)?.iter().find_map(|t| t.tag.clone())
    }

    /// The templates of `macro_name`.
    pub fn get(&self, macro_name: &[u8]) -> Option<&[Template]> {
        let name = std::str::from_utf8(macro_name).ok()?;
        self.map.get(name).map(Vec::as_slice)
    }

    /// Every definer macro with its templates, in no order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &[Template])> {
        self.map.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }

    /// Number of definer macros.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no macro is known to define names.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Definers from `learned` (macro name, what one of its `#define`s says), chains resolved
    /// two levels deep. A macro the kernel table lists is left to the table.
    pub fn resolve(learned: Vec<(String, Learned)>) -> Definers {
        Definers::resolve_beside(learned, None)
    }

    /// [`Definers::resolve`], where a wrapper may hand its pointer on to one of `base`'s
    /// wrappers (a file's own `#define`s beside the table of the tree's headers).
    pub fn resolve_beside(learned: Vec<(String, Learned)>, base: Option<&Definers>) -> Definers {
        let table = knav_ctags::macros::MacroTable::kernel();
        let mut map: HashMap<String, Vec<Template>> = HashMap::new();
        let mut chained: Vec<(String, Vec<Call>)> = Vec::new();
        let mut wrappers: Vec<(String, usize)> = Vec::new();
        let mut handing: Vec<(String, usize, String)> = Vec::new();
        let mut member_calls: Vec<(String, String, Vec<MemberCall>)> = Vec::new();
        for (name, l) in learned {
            if !l.member_calls.is_empty() {
                member_calls.push((name.clone(), l.scope, l.member_calls));
            }
            if table.family(name.as_bytes()).is_some() {
                continue;
            }
            match l.wrapper {
                Some((n, None)) => wrappers.push((name.clone(), n)),
                Some((n, Some(to))) => handing.push((name.clone(), n, to)),
                None => {}
            }
            if !l.templates.is_empty() {
                let e = map.entry(name.clone()).or_default();
                for t in l.templates {
                    if !e.contains(&t) {
                        e.push(t);
                    }
                }
            }
            if !l.calls.is_empty() {
                chained.push((name, l.calls));
            }
        }
        for _ in 0..2 {
            let mut added: Vec<(String, Template)> = Vec::new();
            for (name, calls) in &chained {
                for (callee, args) in calls {
                    let Some(ts) = map.get(callee) else {
                        continue;
                    };
                    for t in ts {
                        if let Some(t) = substitute(t, args) {
                            added.push((name.clone(), t));
                        }
                    }
                }
            }
            let mut grew = false;
            for (name, t) in added {
                let e = map.entry(name).or_default();
                if !e.contains(&t) {
                    e.push(t);
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        // A wrapper that hands its pointer to a wrapper (two levels, as for the templates).
        for _ in 0..2 {
            let known = |name: &str| {
                wrappers.iter().any(|(w, _)| w == name)
                    || base.is_some_and(|b| b.wrapper(name.as_bytes()).is_some())
            };
            let more: Vec<(String, usize)> = handing
                .iter()
                .filter(|(name, _, to)| {
                    !known(name) && (indirect_call_arity(to.as_bytes()).is_some() || known(to))
                })
                .map(|(name, n, _)| (name.clone(), *n))
                .collect();
            wrappers.extend(more);
        }
        wrappers.sort_unstable();
        wrappers.dedup_by(|a, b| a.0 == b.0);
        Definers::of_parts(map, wrappers, member_calls)
    }

    /// The table of `map`'s templates, the `wrappers` and the macros calling through
    /// members (name, where they apply, their calls).
    fn of_parts(
        map: HashMap<String, Vec<Template>>,
        wrappers: Vec<(String, usize)>,
        member_calls: Vec<(String, String, Vec<MemberCall>)>,
    ) -> Definers {
        let mut d = Definers {
            map,
            wrappers,
            ..Definers::default()
        };
        for (name, scope, calls) in member_calls {
            d.add_member_calls(&name, &scope, calls);
        }
        d
    }

    /// What the headers at `paths` define: taken from `saved` (the text of a record
    /// [`Definers::record_text`] made, by header path) for the paths not in `fresh`, learned
    /// from the headers' bytes, which `read` gives for a path (`None`: not read), for the rest.
    /// Returns the definers and what to record for them, both in header path order whatever
    /// the order of `paths` and of the reading threads: two headers that define the same macro
    /// give its templates in the same order every build.
    pub fn learn_headers<R, S>(
        read: R,
        paths: &[&str],
        saved: Option<&str>,
        fresh: &HashSet<&str>,
        threads: usize,
    ) -> (Definers, Vec<HeaderDefines>)
    where
        R: Fn(&str) -> Option<S> + Sync,
        S: Deref<Target = [u8]>,
    {
        let saved: Option<HashMap<String, Vec<String>>> = saved.map(|text| {
            let mut m: HashMap<String, Vec<String>> = HashMap::new();
            for line in text.lines() {
                if let Some((path, define)) = line.split_once('\t') {
                    m.entry(path.to_string())
                        .or_default()
                        .push(define.to_string());
                }
            }
            m
        });
        let (mut from_saved, mut to_read) = (Vec::new(), Vec::new());
        for &p in paths {
            match &saved {
                Some(m) if !fresh.contains(p) => {
                    let learned: Vec<(String, Learned)> = m
                        .get(p)
                        .into_iter()
                        .flatten()
                        .filter_map(|d| define_named(d.as_bytes(), 0))
                        .collect();
                    if !learned.is_empty() {
                        from_saved.push((p.to_string(), learned));
                    }
                }
                _ => to_read.push(p),
            }
        }
        from_saved.extend(Definers::of_headers(&read, &to_read, threads));
        from_saved.sort_by(|a, b| a.0.cmp(&b.0));
        let all = from_saved
            .iter()
            .flat_map(|(p, l)| {
                let scope = crate::membercall::scope_of(p);
                l.iter().cloned().map(move |(name, mut l)| {
                    l.scope = scope.to_string();
                    (name, l)
                })
            })
            .collect();
        (Definers::resolve(all), from_saved)
    }

    /// True when the headers at `paths` (changed or deleted since the build that made the
    /// record `saved`, the text of [`Definers::record_text`]) now define through their macros
    /// other than the record says: the files that invoke those macros must then be read again.
    /// `read` gives a header's bytes now (`None`: deleted or unreadable, so it defines nothing).
    pub fn record_differs<R, S>(read: R, saved: &str, paths: &[&str]) -> bool
    where
        R: Fn(&str) -> Option<S>,
        S: Deref<Target = [u8]>,
    {
        let mut old: HashMap<&str, Vec<&str>> = HashMap::new();
        for line in saved.lines() {
            if let Some((path, define)) = line.split_once('\t') {
                old.entry(path).or_default().push(define);
            }
        }
        paths.iter().any(|p| {
            let now: Vec<String> = read(p)
                .map(|src| of_source(&src).into_iter().map(|(_, l)| l.text).collect())
                .unwrap_or_default();
            let was = old.get(p).map_or(&[][..], Vec::as_slice);
            now.len() != was.len() || now.iter().zip(was).any(|(a, b)| a != b)
        })
    }

    /// The resolved table as text, one `MACRO<TAB>KIND<TAB>OPEN<TAB>NAME{0}…[<TAB>TAG]` line
    /// per template, then one `MACRO<TAB>w<TAB>0<TAB>N` line per indirect-call wrapper listing
    /// N functions and one `MACRO<TAB>c<TAB>SCOPE<TAB>CALL` line per call through a member
    /// ([`MemberCall::encode`]), for [`Definers::from_table_text`].
    pub fn table_text(&self) -> String {
        let mut out = String::new();
        let mut names: Vec<&String> = self.map.keys().collect();
        names.sort();
        for m in names {
            for t in &self.map[m] {
                let kind = match t.kind {
                    Kind::Function => 'f',
                    Kind::Prototype => 'p',
                    _ => 'v',
                };
                out.push_str(&format!("{m}\t{kind}\t{}\t", u8::from(t.open)));
                for p in &t.pieces {
                    match p {
                        Piece::Text(x) => out.push_str(x),
                        Piece::Arg(k) => out.push_str(&format!("{{{k}}}")),
                    }
                }
                if let Some(tag) = &t.tag {
                    out.push('\t');
                    out.push_str(tag);
                }
                out.push('\n');
            }
        }
        for (m, n) in &self.wrappers {
            out.push_str(&format!("{m}\tw\t0\t{n}\n"));
        }
        for (m, calls) in self.all_member_calls() {
            for (scope, c) in calls {
                out.push_str(&format!("{m}\tc\t{scope}\t{}\n", c.encode()));
            }
        }
        out
    }

    /// The table of [`Definers::table_text`]; `None` when `text` is damaged.
    pub fn from_table_text(text: &str) -> Option<Definers> {
        let mut map: HashMap<String, Vec<Template>> = HashMap::new();
        let mut wrappers = Vec::new();
        let mut member_calls: Vec<(String, String, Vec<MemberCall>)> = Vec::new();
        for line in text.lines() {
            let mut cols = line.split('\t');
            let (m, kind, open, name) = (cols.next()?, cols.next()?, cols.next()?, cols.next()?);
            let tag = cols.next().map(str::to_string);
            if kind == "w" {
                wrappers.push((m.to_string(), name.parse().ok()?));
                continue;
            }
            if kind == "c" {
                let call = MemberCall::decode(name)?;
                member_calls.push((m.to_string(), open.to_string(), vec![call]));
                continue;
            }
            let kind = match kind {
                "f" => Kind::Function,
                "p" => Kind::Prototype,
                "v" => Kind::Variable,
                _ => return None,
            };
            let mut pieces = Vec::new();
            let mut rest = name;
            while let Some(open) = rest.find('{') {
                let close = open + rest[open..].find('}')?;
                if open > 0 {
                    pieces.push(Piece::Text(rest[..open].to_string()));
                }
                pieces.push(Piece::Arg(rest[open + 1..close].parse().ok()?));
                rest = &rest[close + 1..];
            }
            if !rest.is_empty() {
                pieces.push(Piece::Text(rest.to_string()));
            }
            map.entry(m.to_string()).or_default().push(Template {
                pieces,
                kind,
                open: open == "1",
                tag,
            });
        }
        wrappers.sort_unstable();
        Some(Definers::of_parts(map, wrappers, member_calls))
    }

    /// The record of what `learned` holds, one `PATH<TAB>#define text` line each, for
    /// [`Definers::learn_headers`] of a later build.
    pub fn record_text(learned: &[HeaderDefines]) -> String {
        let mut out = String::new();
        for (p, defs) in learned {
            for (_, l) in defs {
                out.push_str(p);
                out.push('\t');
                out.push_str(&l.text);
                out.push('\n');
            }
        }
        out
    }

    /// Learns the definers of the headers at `paths`, whose bytes `read` gives, on `threads`
    /// threads; in the order of `paths`, whichever thread read them (the order of a macro's
    /// templates is the order of the names it makes, and the index must not depend on the
    /// threads' timing).
    fn of_headers<R, S>(read: &R, paths: &[&str], threads: usize) -> Vec<HeaderDefines>
    where
        R: Fn(&str) -> Option<S> + Sync,
        S: Deref<Target = [u8]>,
    {
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads.max(1))
                .map(|_| {
                    let next = &next;
                    s.spawn(move || {
                        let mut out = Vec::new();
                        loop {
                            let k = next.fetch_add(64, std::sync::atomic::Ordering::Relaxed);
                            let Some(batch) = paths.get(k..(k + 64).min(paths.len())) else {
                                return out;
                            };
                            if batch.is_empty() {
                                return out;
                            }
                            for (i, p) in (k..).zip(batch) {
                                // Large (register) headers are mapped, not copied.
                                if let Some(src) = read(p) {
                                    let learned = of_source(&src);
                                    if !learned.is_empty() {
                                        out.push((i, (p.to_string(), learned)));
                                    }
                                }
                            }
                        }
                    })
                })
                .collect();
            let mut read: Vec<(usize, HeaderDefines)> = handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect();
            read.sort_unstable_by_key(|(i, _)| *i);
            read.into_iter().map(|(_, h)| h).collect()
        })
    }
}

/// The template `t` of a callee, with its arguments replaced by `args` (the caller's pieces).
fn substitute(t: &Template, args: &[Option<Vec<Piece>>]) -> Option<Template> {
    let mut pieces: Vec<Piece> = Vec::new();
    for p in &t.pieces {
        let add: Vec<Piece> = match p {
            Piece::Text(s) => vec![Piece::Text(s.clone())],
            Piece::Arg(k) => args.get(*k)?.clone()?,
        };
        for a in add {
            match (pieces.last_mut(), a) {
                (Some(Piece::Text(x)), Piece::Text(y)) => x.push_str(&y),
                (_, a) => pieces.push(a),
            }
        }
    }
    let uses_args = pieces.iter().any(|p| matches!(p, Piece::Arg(_)));
    uses_args.then_some(Template {
        pieces,
        kind: t.kind,
        open: t.open,
        tag: t.tag.clone(),
    })
}

/// What the function-like `#define`s of `src` say, found without a full scan: a line whose
/// first token is `#define NAME(`.
pub fn of_source(src: &[u8]) -> Vec<(String, Learned)> {
    let mut out = Vec::new();
    for at in memchr::memmem::find_iter(src, b"define") {
        // `#` and blanks before it, at the start of a line.
        let mut j = at;
        while j > 0 && matches!(src[j - 1], b' ' | b'\t') {
            j -= 1;
        }
        if j == 0 || src[j - 1] != b'#' {
            continue;
        }
        j -= 1;
        while j > 0 && matches!(src[j - 1], b' ' | b'\t') {
            j -= 1;
        }
        if j > 0 && src[j - 1] != b'\n' {
            continue;
        }
        if let Some(l) = define_at(src, at + b"define".len()) {
            out.push(l);
        }
    }
    out
}

/// The `#define` whose name follows `at` (after blanks): learned when it is function-like and
/// defines names.
fn define_at(src: &[u8], at: usize) -> Option<(String, Learned)> {
    let mut i = at;
    if !matches!(src.get(i), Some(b' ' | b'\t')) {
        return None;
    }
    while matches!(src.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    define_named(src, i)
}

/// What the function-like `#define`s of a file (`src`, as the scanner saw it) say.
pub fn of_file(src: &[u8], scanned: &crate::scan::FileScan) -> Vec<(String, Learned)> {
    (scanned.macros.iter())
        .filter(|m| m.signature.is_some())
        .filter_map(|m| define_named(src, m.start as usize))
        .collect()
}

/// The `#define` whose name starts at `s`: learned when it is function-like and defines names.
pub fn define_named(src: &[u8], s: usize) -> Option<(String, Learned)> {
    let mut i = s;
    while i < src.len() && (src[i].is_ascii_alphanumeric() || src[i] == b'_') {
        i += 1;
    }
    if i == s || src.get(i) != Some(&b'(') {
        return None;
    }
    let name = std::str::from_utf8(&src[s..i]).ok()?;
    let close = i + memchr::memchr2(b')', b'\n', &src[i..])?;
    if src[close] != b')' {
        return None;
    }
    let raw = std::str::from_utf8(&src[i + 1..close]).ok()?;
    let variadic = raw.trim_end().ends_with("...");
    let params: Vec<&str> = raw
        .split(',')
        .map(|p| {
            let p = p.trim();
            if p == "..." {
                "__VA_ARGS__"
            } else {
                p.trim_end_matches("...")
            }
        })
        .collect();
    // The body: to the end of the logical line.
    let mut end = close + 1;
    loop {
        match memchr::memchr(b'\n', &src[end..]) {
            Some(k) => {
                let nl = end + k;
                let continued = src[..nl].ends_with(b"\\") || src[..nl].ends_with(b"\\\r");
                end = nl + 1;
                if !continued || end - close > 64 << 10 {
                    end = nl;
                    break;
                }
            }
            None => {
                end = src.len();
                break;
            }
        }
    }
    let mut learned = learn(&params, &src[close + 1..end]);
    learned.wrapper = wrapper_of(&params, variadic, &src[close + 1..end]);
    learned.member_calls = crate::membercall::learn(&params, variadic, &src[close + 1..end]);
    if learned.templates.is_empty()
        && learned.calls.is_empty()
        && learned.wrapper.is_none()
        && learned.member_calls.is_empty()
    {
        return None;
    }
    learned.text = String::from_utf8_lossy(&src[s..end])
        .replace("\\\n", " ")
        .replace(['\n', '\t', '\r'], " ");
    Some((name.to_string(), learned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(defines: &str, macro_name: &str, args: &[&str]) -> Vec<(String, Kind, bool)> {
        let d = Definers::resolve(of_source(defines.as_bytes()));
        d.get(macro_name.as_bytes())
            .unwrap_or(&[])
            .iter()
            .filter_map(|t| Some((t.name(args)?, t.kind, t.open)))
            .collect()
    }

    #[test]
    fn indirect_call_wrappers_are_learned_from_their_defines() {
        let src = "#ifdef CONFIG_X\n\
                   #define INDIRECT_CALL_1(f, f1, ...) ({ typeof(f) __f1 = (f); likely(__f1 == f1) ? f1(__VA_ARGS__) : __f1(__VA_ARGS__); })\n\
                   #else\n\
                   #define INDIRECT_CALL_1(f, f1, ...) f(__VA_ARGS__)\n\
                   #endif\n\
                   #define INDIRECT_CALL_INET(f, f2, f1, ...) INDIRECT_CALL_2(f, f2, f1, __VA_ARGS__)\n\
                   #define INDIRECT_CALL_L4(f, f2, f1, ...) CALL_TWO(f, f2, f1, __VA_ARGS__)\n\
                   #define CALL_TWO(f, g, h, args...) (f == g ? g(args) : f == h ? h(args) : f(args))\n\
                   #define INDIRECT_CALL_MT(f, f2, f1, ...) INDIRECT_CALL_1(f, f2, __VA_ARGS__)\n\
                   #define ONLY_POINTER(f, g, ...) f(__VA_ARGS__)\n\
                   #define NOT_A_WRAPPER(f, g, ...) g(f, __VA_ARGS__)\n\
                   #define call_on_stack(func, regs, args...) func(regs, args)\n\
                   #define FIXED(f, g) f(g)\n";
        let d = Definers::resolve(of_source(src.as_bytes()));
        let mut got: Vec<(&str, usize)> = d.wrappers().collect();
        got.sort_unstable();
        assert_eq!(
            got,
            [
                ("CALL_TWO", 2),
                ("INDIRECT_CALL_1", 1),
                ("INDIRECT_CALL_INET", 2),
                ("INDIRECT_CALL_L4", 2)
            ]
        );
        // A wrapper makes no name, and survives the saved table.
        assert!(names(src, "INDIRECT_CALL_INET", &["a", "b", "c"]).is_empty());
        let again = Definers::from_table_text(&d.table_text()).unwrap();
        assert_eq!(again.wrapper(b"INDIRECT_CALL_INET"), Some(2));
        assert_eq!(again.wrapper(b"NOT_A_WRAPPER"), None);
    }

    #[test]
    fn the_nearest_headers_macro_calling_through_members_hides_the_others() {
        let files: HashMap<&str, &[u8]> = [
            ("include/linux/r.h", &b"#define rd(p) (p)->read(p)\n"[..]),
            ("drivers/x/x.h", &b"#define rd(p) (p)->ops->get(p)\n"[..]),
        ]
        .into_iter()
        .collect();
        let paths = ["drivers/x/x.h", "include/linux/r.h"];
        let (d, _) = Definers::learn_headers(
            |p: &str| files.get(p).copied(),
            &paths,
            None,
            &HashSet::new(),
            1,
        );
        let calls = |path: &str| -> Vec<String> {
            d.member_calls(b"rd", path)
                .iter()
                .map(|c| c.encode())
                .collect()
        };
        assert_eq!(calls("drivers/x/main.c"), ["{0}.ops.get"]);
        assert_eq!(calls("fs/a.c"), ["{0}.read"]);
        assert_eq!(calls("drivers/y/main.c"), ["{0}.read"]);
    }

    #[test]
    fn headers_read_on_several_threads_are_learned_in_path_order() {
        // The threads' results were joined thread by thread: the order of a macro's templates,
        // and with it the index, changed from build to build.
        let paths: Vec<String> = (0..400).map(|i| format!("h{i:03}.h")).collect();
        let files: HashMap<&str, Vec<u8>> = (paths.iter().enumerate())
            .map(|(i, p)| (p.as_str(), format!("#define M(x) int x##_{i:03};\n").into()))
            .collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let read = Definers::of_headers(&|p: &str| files.get(p).map(Vec::as_slice), &paths, 4);
        let got: Vec<&str> = read.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(got, paths);
        let d = Definers::resolve(read.into_iter().flat_map(|(_, l)| l).collect());
        let made: Vec<String> = d
            .get(b"M")
            .unwrap_or(&[])
            .iter()
            .filter_map(|t| t.name(&["a"]))
            .collect();
        assert_eq!(made.len(), 400);
        assert!(made.windows(2).all(|w| w[0] < w[1]), "{made:?}");
    }

    #[test]
    fn learned_templates_do_not_depend_on_the_order_headers_are_given_or_read_in() {
        // Two headers define the same macro, each with its own name: both names are kept, in
        // header path order.
        let files: HashMap<&str, &[u8]> = HashMap::from([
            ("a.h", &b"#define TP(name) void trace_##name(void)\n"[..]),
            ("b.h", b"#define TP(name) void __bpf_trace_##name(void)\n"),
        ]);
        let read = |p: &str| files.get(p).copied();
        let learn = |paths: &[&str], threads| {
            let (d, saved) =
                Definers::learn_headers(read, paths, None, &Default::default(), threads);
            let names: Vec<String> = d
                .get(b"TP")
                .unwrap_or(&[])
                .iter()
                .filter_map(|t| t.name(&["x"]))
                .collect();
            let saved: Vec<String> = saved.into_iter().map(|(p, _)| p).collect();
            (names, saved)
        };
        let want = (
            vec!["trace_x".to_string(), "__bpf_trace_x".to_string()],
            vec!["a.h".to_string(), "b.h".to_string()],
        );
        assert_eq!(learn(&["a.h", "b.h"], 1), want);
        assert_eq!(learn(&["b.h", "a.h"], 1), want);
        assert_eq!(learn(&["b.h", "a.h"], 2), want);
    }

    #[test]
    fn the_table_and_the_record_read_back_as_they_were_made() {
        let h: &[u8] = b"#define TP(name) void trace_##name(void)\n\
                         #define V(n) const struct ops n##_ops = { 0 }\n";
        let read = |p: &str| (p == "a.h").then_some(h);
        let (d, learned) = Definers::learn_headers(read, &["a.h"], None, &HashSet::new(), 1);
        let table = d.table_text();
        assert_eq!(
            Definers::from_table_text(&table).map(|t| t.table_text()),
            Some(table)
        );
        assert!(
            Definers::from_table_text("TP\tz\t0\tx").is_none(),
            "an unknown kind"
        );
        let record = Definers::record_text(&learned);
        assert!(!Definers::record_differs(read, &record, &["a.h", "b.h"]));
        let gone = |_: &str| None::<&[u8]>;
        assert!(Definers::record_differs(gone, &record, &["a.h"]));
        let (again, _) = Definers::learn_headers(gone, &["a.h"], Some(&record), &HashSet::new(), 1);
        assert_eq!(
            again.table_text(),
            d.table_text(),
            "taken from the record, not read"
        );
    }

    #[test]
    fn a_define_that_declares_a_parameter_defines_it() {
        let h = "#define DEFINE_IDTENTRY_RAW_ERRORCODE(func)\t\t\t\t\\\n\
                 __visible noinstr void func(struct pt_regs *regs, unsigned long error_code)\n";
        assert_eq!(
            names(h, "DEFINE_IDTENTRY_RAW_ERRORCODE", &["exc_page_fault"]),
            [("exc_page_fault".into(), Kind::Function, true)]
        );
    }

    #[test]
    fn pasted_names_and_variables_and_prototypes() {
        let h = "#define DECLARE_IDTENTRY(vector, func) \\\n\
                 \tasmlinkage void asm_##func(void); \\\n\
                 \tasmlinkage void xen_asm_##func(void); \\\n\
                 \t__visible void func(struct pt_regs *regs)\n\
                 #define MY_LIST(name) struct list_head name##_list = LIST_HEAD_INIT(name##_list)\n\
                 #define NOT_ONE(x) do { foo(x); } while (0)\n\
                 #define ALSO_NOT(x) return x(3)\n\
                 #define EXTERN_ONLY(x) extern int x;\n";
        assert_eq!(
            names(h, "DECLARE_IDTENTRY", &["X86_TRAP_DE", "exc_divide_error"]),
            [
                ("asm_exc_divide_error".into(), Kind::Prototype, false),
                ("xen_asm_exc_divide_error".into(), Kind::Prototype, false),
                ("exc_divide_error".into(), Kind::Function, true),
            ]
        );
        assert_eq!(
            names(h, "MY_LIST", &["free"]),
            [("free_list".into(), Kind::Variable, false)]
        );
        assert!(names(h, "NOT_ONE", &["a"]).is_empty());
        assert!(names(h, "ALSO_NOT", &["a"]).is_empty());
        assert!(names(h, "EXTERN_ONLY", &["a"]).is_empty());
    }

    #[test]
    fn a_chain_of_macros_is_followed() {
        let h =
            "#define DEFINE_IDTENTRY_RAW(func) __visible noinstr void func(struct pt_regs *regs)\n\
                 #define DEFINE_IDTENTRY_NMI(func) DEFINE_IDTENTRY_RAW(func)\n\
                 #define DEFINE_FREDENTRY(f) DEFINE_IDTENTRY_NMI(fred_##f)\n";
        assert_eq!(
            names(h, "DEFINE_IDTENTRY_NMI", &["exc_nmi"]),
            [("exc_nmi".into(), Kind::Function, true)]
        );
        assert_eq!(
            names(h, "DEFINE_FREDENTRY", &["exc_nmi"]),
            [("fred_exc_nmi".into(), Kind::Function, true)]
        );
    }

    #[test]
    fn table_macros_stay_with_the_table() {
        let h = "#define DEFINE_MUTEX(mutexname) struct mutex mutexname = __MUTEX_INITIALIZER(mutexname)\n";
        assert!(names(h, "DEFINE_MUTEX", &["m"]).is_empty());
    }
}
