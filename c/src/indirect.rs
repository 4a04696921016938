//! Calls through function pointers, as far as one file shows them: the function-pointer and
//! struct-typed members of its struct definitions, the functions it registers in ops tables
//! (designated initializers of a struct, or `x->f = fn;` with `x`'s struct type in scope), and
//! the calls it makes through a member (`ops->f(…)`, `(*x.f)(…)`, `INDIRECT_CALL_2(p, a, b, …)`)
//! with the struct type of the expression as far as the declarations in scope give it.
//!
//! The pass reads tokens (comments, literals and preprocessor lines left out) and keeps a
//! brace depth, the struct-typed names declared in scope and the initializers it is inside.
//! A type reached through members (`file->f_op->read_iter`: `struct file`, then `f_op`) is
//! kept as a [`TypePath`] and resolved later against every struct definition of the index.

/// The first character of a [`TypePath`] tag that names a global variable rather than a struct:
/// its type is the struct tag its declarations give (`=efi` is `struct efi`).
pub const GLOBAL: char = '=';

use crate::membercall::{MemberCall, Start, Step};

/// The first character of a [`TypePath`] tag that names the anonymous struct type of a
/// variable declared with it (`static const struct { … } init_funcs[] = { … }` is
/// `@init_funcs`): a type of that file alone, matched only there.
pub const FILE_ANONYMOUS: char = '@';

/// What joins a struct's tag and the name of a member of it whose type is an anonymous struct
/// or union (`radeon_asic::dpm` for `struct radeon_asic { … struct { … } dpm; }`): that type's
/// name.
pub const ANONYMOUS: &str = "::";

/// A struct type, possibly through members: `file.f_op` is the type of member `f_op` of
/// `struct file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypePath {
    /// The struct tag the path starts at.
    pub tag: String,
    /// Members followed from it, in order.
    pub chain: Vec<String>,
}

impl TypePath {
    /// `tag.m1.m2`: how the index stores it.
    pub fn encode(&self) -> String {
        let mut s = self.tag.clone();
        for m in &self.chain {
            s.push('.');
            s.push_str(m);
        }
        s
    }
}

/// A member of a struct definition worth knowing: a function pointer, or of a struct type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The struct it belongs to.
    pub owner: String,
    /// Its name.
    pub name: String,
    /// The struct tag of its type (`const struct file_operations *f_op`), if any; for a
    /// member macro (`#define sk_prot __sk_common.skc_prot` in `struct sock`), [`ALIAS`] and
    /// the chain it stands for.
    pub tag: Option<String>,
    /// Declared as `(*name)(…)`.
    pub fnptr: bool,
}

/// A function stored in a struct member: `.read_iter = ext4_file_read_iter` or
/// `ops->open = my_open;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    /// The struct whose member is set.
    pub target: TypePath,
    /// The member.
    pub field: String,
    /// The function stored.
    pub func: String,
    /// 1-based line of the function's name.
    pub line: u32,
}

/// A call through a member: `expr->field(…)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// The struct type of `expr`, when the declarations in scope give it.
    pub target: Option<TypePath>,
    /// The member called.
    pub field: String,
    /// 1-based line of the member's name.
    pub line: u32,
}

/// What one file (or one function's text) shows of calls through pointers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// Members of its struct definitions.
    pub members: Vec<Member>,
    /// Functions it stores in members.
    pub registrations: Vec<Registration>,
    /// Calls through members.
    pub dispatches: Vec<Dispatch>,
    /// Functions an `INDIRECT_CALL_n(ptr, f1, …, fn, args)` names as likely targets, with the
    /// line of each.
    pub listed: Vec<(String, u32)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ident,
    Arrow,
    Punct(u8),
    /// A literal, a number or a two-byte operator.
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tok {
    kind: Kind,
    start: u32,
    end: u32,
    line: u32,
}

/// A file's tokens, and the ones [`Pass`] acts on.
#[derive(Clone, Default)]
struct Tokens {
    all: Vec<Tok>,
    /// Indices in `all` of the tokens the pass must visit: the others (literals, most
    /// punctuation, a name that is no `struct`, member or callee) change nothing.
    visit: Vec<u32>,
}

/// True for the macros whose second argument is the type of what they give:
/// `container_of(ptr, struct t, member)`, `list_first_entry(head, struct t, member)`, ….
fn names_its_type(w: &[u8]) -> bool {
    matches!(
        w,
        b"container_of"
            | b"container_of_const"
            | b"list_entry"
            | b"list_first_entry"
            | b"list_last_entry"
            | b"list_first_entry_or_null"
            | b"list_entry_rcu"
            | b"hlist_entry"
            | b"hlist_entry_safe"
            | b"rb_entry"
            | b"rb_entry_safe"
    )
}

/// True for the macros that read a pointer and give it back with its type: `READ_ONCE`,
/// `rcu_dereference` and its variants, `rcu_access_pointer`, `smp_load_acquire`,
/// `rtnl_dereference`, `data_race`.
fn is_accessor(w: &[u8]) -> bool {
    w.starts_with(b"rcu_dereference")
        || w.starts_with(b"srcu_dereference")
        || matches!(
            w,
            b"READ_ONCE"
                | b"READ_ONCE_NOCHECK"
                | b"rcu_access_pointer"
                | b"smp_load_acquire"
                | b"rtnl_dereference"
                | b"data_race"
        )
}

/// True for a name the pass acts on wherever it is: `struct`, `union`, `INDIRECT_CALL_n`.
fn is_pass_keyword(w: &[u8]) -> bool {
    w == b"struct" || w == b"union" || w.starts_with(b"INDIRECT_CALL_")
}

/// The tokens of `src`, without comments and preprocessor lines, in place of what `out` held:
/// all of them in `out.all`, and in `out.visit` the indexes of those [`Pass::run`] acts on
/// (braces, parentheses, `;`, `.`, `struct`, `union`, `INDIRECT_CALL_n`, a name after `->` or
/// `.`, a name before `(`).
fn tokens(src: &[u8], out: &mut Tokens) {
    let Tokens { all: out, visit } = out;
    out.clear();
    out.reserve(src.len() / 5);
    visit.clear();
    let (mut i, mut line, n) = (0usize, 1u32, src.len());
    let mut line_start = true;
    while i < n {
        let b = src[i];
        let start = i;
        let kind = match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                i = crate::scan::swar::ident_end(src, i + 1);
                let after_member = out
                    .last()
                    .is_some_and(|t| matches!(t.kind, Kind::Arrow | Kind::Punct(b'.')));
                if after_member || is_pass_keyword(&src[start..i]) {
                    visit.push(out.len() as u32);
                }
                Kind::Ident
            }
            b'(' => {
                // A name before `(` may be a callee or a macro that declares a variable.
                let k = out.len() as u32;
                if out.last().is_some_and(|t| t.kind == Kind::Ident)
                    && visit.last() != Some(&(k - 1))
                {
                    visit.push(k - 1);
                }
                visit.push(k);
                i += 1;
                Kind::Punct(b)
            }
            b'{' | b'}' | b')' | b';' | b'.' => {
                visit.push(out.len() as u32);
                i += 1;
                Kind::Punct(b)
            }
            b' ' | b'\t' => {
                i = crate::scan::swar::blank_end(src, i + 1);
                continue;
            }
            b'\n' => {
                line += 1;
                i = crate::scan::swar::blank_end(src, i + 1);
                line_start = true;
                continue;
            }
            b'\r' | b'\x0b' | b'\x0c' | b'\\' => {
                i += 1;
                continue;
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                let end = crate::lex::block_comment_end(src, i);
                line += memchr::memchr_iter(b'\n', &src[i..end]).count() as u32;
                i = end;
                continue;
            }
            b'/' if src.get(i + 1) == Some(&b'/') => {
                i = skip_logical_line(src, i, &mut line);
                line_start = true;
                continue;
            }
            b'#' if line_start => {
                i = skip_logical_line(src, i, &mut line);
                continue;
            }
            b'"' | b'\'' => {
                i = literal_end(src, i, &mut line);
                Kind::Other
            }
            b'0'..=b'9' => {
                i += 1;
                while i < n && (src[i].is_ascii_alphanumeric() || src[i] == b'.') {
                    i += 1;
                }
                Kind::Other
            }
            b'-' if src.get(i + 1) == Some(&b'>') => {
                i += 2;
                Kind::Arrow
            }
            b'=' | b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^'
                if src.get(i + 1) == Some(&b'=') =>
            {
                i += 2;
                Kind::Other
            }
            b'&' | b'|' | b'+' | b'-' if src.get(i + 1) == Some(&b) => {
                i += 2;
                Kind::Other
            }
            _ => {
                i += 1;
                Kind::Punct(b)
            }
        };
        line_start = false;
        out.push(Tok {
            kind,
            start: start as u32,
            end: i as u32,
            line,
        });
    }
}

/// Past the closing quote of the literal opening at `i` (its continued lines counted); an
/// unclosed one ends at its newline, which the caller then counts.
fn literal_end(src: &[u8], i: usize, line: &mut u32) -> usize {
    let (end, _) = crate::lex::literal_end(src, i);
    *line += memchr::memchr_iter(b'\n', &src[i..end]).count() as u32;
    end
}

/// Past the newline that ends the logical line (continuations followed) at `i`, every newline
/// of it counted.
fn skip_logical_line(src: &[u8], i: usize, line: &mut u32) -> usize {
    let end = crate::lex::line_comment_end(src, i);
    let past = (end + 1).min(src.len());
    *line += memchr::memchr_iter(b'\n', &src[i..past]).count() as u32;
    past
}

/// The mark before a member macro's chain in a member's struct tag (see [`Member`]).
pub const ALIAS: &str = "@";

/// The member macros of a struct's body, `#define sk_prot __sk_common.skc_prot`: each macro's
/// name and the member chain it stands for (names joined by `.`).
fn member_aliases(body: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in body.split(|&b| b == b'\n') {
        // Without a comment after it.
        let cut = line.windows(2).position(|w| w == b"/*" || w == b"//");
        let line = cut.map_or(line, |c| &line[..c]).trim_ascii();
        let Some(rest) = line.strip_prefix(b"#") else {
            continue;
        };
        let Some(rest) = rest.trim_ascii_start().strip_prefix(b"define") else {
            continue;
        };
        let mut words = rest
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty());
        let (Some(name), Some(chain), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        let ident = |w: &[u8]| {
            w.first().is_some_and(|&b| crate::scan::is_ident_start(b))
                && w.iter().all(|&b| crate::scan::is_ident(b))
        };
        let parts: Vec<&[u8]> = chain.split(|&b| b == b'.').collect();
        if ident(name) && parts.len() > 1 && parts.iter().all(|p| ident(p)) {
            out.push((
                String::from_utf8_lossy(name).into_owned(),
                String::from_utf8_lossy(chain).into_owned(),
            ));
        }
    }
    out
}

/// What a brace of an initializer initializes.
#[derive(Clone, Debug)]
enum Init {
    /// A struct of this type.
    Struct(TypePath),
    /// An array of structs of this type.
    Array(TypePath),
    /// Something else.
    Unknown,
}

/// Tokens [`Pass::more_declarators`] looks ahead at most.
const DECLARATOR_REACH: usize = 256;

/// A struct-typed name in scope, declared at brace depth `depth`.
struct Var {
    name: (u32, u32),
    tag: (u32, u32),
    depth: u32,
}

struct Pass<'a> {
    src: &'a [u8],
    t: Vec<Tok>,
    visit: Vec<u32>,
    out: Facts,
    depth: u32,
    vars: Vec<Var>,
    /// Parameters of a file-scope parenthesis: the body's names if a `{` follows.
    params: Vec<Var>,
    /// Struct definitions open: tag and the depth of their members.
    structs: Vec<(String, u32)>,
    /// Anonymous struct or union bodies open: the depth of their members and the number of
    /// members recorded before them (a named one's are renamed when it closes,
    /// [`Pass::close_brace`]).
    anonymous: Vec<(u32, usize)>,
    /// Anonymous struct or union bodies open outside any struct (`static const struct { … }
    /// v[] = …`): the depth of their members.
    loose: Vec<u32>,
    /// The names declared with such a body: each is the name of its type
    /// ([`FILE_ANONYMOUS`]), and the range stands for the tag in a [`Var`].
    loose_tags: Vec<(u32, u32)>,
    /// Named struct definitions open: the depth of their members and where their `{` is, to
    /// read the member macros of their body when it closes ([`member_aliases`]).
    bodies: Vec<(u32, usize, (u32, u32))>,
    /// Initializer braces open: what each initializes and its depth inside.
    inits: Vec<(Init, u32)>,
    /// The initializer of the next `{`.
    pending_init: Option<Init>,
    parens: u32,
    /// Inside a function body (a `{` after a file-scope `)`), not a file-scope initializer.
    in_body: bool,
    /// The function's local function pointers read from a member (`fn = ops->f;`), latest
    /// last: a call through one (`fn(x)`, `(*fn)(x)`) is a call through the member.
    local_fns: Vec<LocalFn>,
}

/// A local name that holds a member's function pointer: see [`Pass::local_fns`].
struct LocalFn {
    name: (u32, u32),
    target: Option<TypePath>,
    field: String,
}

/// The struct tag of the variable a learned macro declares (`DEFINE_SCHED_CLASS(fair)`:
/// `const struct sched_class fair_sched_class`), by macro name.
pub type MacroTags<'a> = &'a dyn Fn(&[u8]) -> Option<String>;

/// The number of functions an indirect-call wrapper macro lists after its pointer, by macro
/// name (learned from its `#define`s: [`crate::definers::Definers::wrapper`]).
pub type Wrappers<'a> = &'a dyn Fn(&[u8]) -> Option<usize>;

/// The calls through members an invocation of a macro makes, by macro name (learned from its
/// `#define`s: [`crate::definers::Definers::member_calls`]).
pub type MemberCalls<'a> = &'a dyn Fn(&[u8]) -> Vec<MemberCall>;

/// What the pass asks of the macros of the tree and of the file.
#[derive(Clone, Copy)]
pub struct Macros<'a> {
    /// The struct tag of the variable an invocation declares.
    pub tag: MacroTags<'a>,
    /// The functions an indirect-call wrapper lists.
    pub wrapper: Wrappers<'a>,
    /// The calls through members an invocation makes.
    pub member_calls: MemberCalls<'a>,
}

/// Everything `src` shows of calls through pointers; `macro_tag` gives the struct type of the
/// variable a macro invocation declares. Indirect-call wrappers are `INDIRECT_CALL_<n>` only:
/// see [`facts_with`].
pub fn facts(src: &[u8], macro_tag: MacroTags<'_>) -> Facts {
    facts_with(src, macro_tag, &|_| None)
}

/// [`facts`], with `wrappers` saying which other macros are indirect-call wrappers
/// (`INDIRECT_CALL_INET(f, f2, f1, …)`).
pub fn facts_with(src: &[u8], macro_tag: MacroTags<'_>, wrappers: Wrappers<'_>) -> Facts {
    let m = Macros {
        tag: macro_tag,
        wrapper: wrappers,
        member_calls: &|_| Vec::new(),
    };
    facts_of(src, m)
}

/// [`facts_with`], with the macros whose invocations call through members
/// (`v4l2_subdev_call(sd, video, s_stream, 1)`) as dispatches too.
pub fn facts_of(src: &[u8], m: Macros<'_>) -> Facts {
    thread_local! {
        /// The token vectors, their memory kept from file to file.
        static TOKENS: std::cell::Cell<Tokens> = std::cell::Cell::new(Tokens::default());
    }
    let mut t = TOKENS.take();
    tokens(src, &mut t);
    let (out, mut t) = pass(src, t, m);
    crate::keep::clear_kept(&mut t.all);
    crate::keep::clear_kept(&mut t.visit);
    TOKENS.set(t);
    out
}

/// The facts the tokens `t` of `src` show, and the tokens back (for their memory).
fn pass(src: &[u8], t: Tokens, m: Macros<'_>) -> (Facts, Tokens) {
    let mut p = Pass {
        src,
        t: t.all,
        visit: t.visit,
        out: Facts::default(),
        depth: 0,
        vars: Vec::new(),
        params: Vec::new(),
        structs: Vec::new(),
        anonymous: Vec::new(),
        loose: Vec::new(),
        loose_tags: Vec::new(),
        bodies: Vec::new(),
        inits: Vec::new(),
        pending_init: None,
        parens: 0,
        in_body: false,
        local_fns: Vec::new(),
    };
    p.run(m);
    let t = Tokens {
        all: p.t,
        visit: p.visit,
    };
    (p.out, t)
}

fn is_type_qualifier(w: &[u8]) -> bool {
    matches!(
        w,
        b"const" | b"volatile" | b"__rcu" | b"__iomem" | b"__user" | b"__percpu" | b"__private"
    )
}

/// A name that may be a function: not a keyword, with a lower-case letter (`NULL`,
/// `THIS_MODULE` and other macros are not).
fn may_be_function(w: &[u8]) -> bool {
    w.iter().any(|b| b.is_ascii_lowercase()) && !crate::scan::is_keyword(w)
}

impl Pass<'_> {
    fn text(&self, k: usize) -> &[u8] {
        let t = &self.t[k];
        &self.src[t.start as usize..t.end as usize]
    }

    fn string(&self, k: usize) -> String {
        String::from_utf8_lossy(self.text(k)).into_owned()
    }

    fn is(&self, k: usize, kind: Kind) -> bool {
        self.t.get(k).is_some_and(|t| t.kind == kind)
    }

    fn range(&self, k: usize) -> (u32, u32) {
        (self.t[k].start, self.t[k].end)
    }

    fn bytes(&self, r: (u32, u32)) -> &[u8] {
        &self.src[r.0 as usize..r.1 as usize]
    }

    /// The index after the `)` or `]` that matches the opener at `k`.
    fn after_group(&self, k: usize, open: u8, close: u8) -> usize {
        let mut depth = 0u32;
        for j in k..self.t.len() {
            match self.t[j].kind {
                Kind::Punct(b) if b == open => depth += 1,
                Kind::Punct(b) if b == close => {
                    depth -= 1;
                    if depth == 0 {
                        return j + 1;
                    }
                }
                _ => {}
            }
        }
        self.t.len()
    }

    fn in_function(&self) -> bool {
        self.in_body && self.structs.is_empty() && self.inits.is_empty()
    }

    fn run(&mut self, m: Macros<'_>) {
        // The next token to visit: a step may consume the tokens after its own.
        let mut next = 0;
        for v in 0..self.visit.len() {
            let k = self.visit[v] as usize;
            if k < next {
                continue;
            }
            next = match self.t[k].kind {
                Kind::Punct(b'{') => self.open_brace(k),
                Kind::Punct(b'}') => self.close_brace(k),
                Kind::Punct(b'(') => {
                    if self.depth == 0 && self.parens == 0 {
                        self.params.clear();
                    }
                    self.parens += 1;
                    self.fnptr_member(k);
                    k + 1
                }
                Kind::Punct(b')') => {
                    self.parens = self.parens.saturating_sub(1);
                    // `(*fn)(x)`
                    if self.is(k + 1, Kind::Punct(b'('))
                        && self.is(k.wrapping_sub(2), Kind::Punct(b'*'))
                        && self.is(k.wrapping_sub(3), Kind::Punct(b'('))
                    {
                        self.local_call(k - 1);
                    }
                    k + 1
                }
                Kind::Punct(b';') => {
                    if self.depth == 0 {
                        self.params.clear();
                        self.parens = 0;
                    }
                    self.pending_init = None;
                    k + 1
                }
                Kind::Punct(b'.') if !self.inits.is_empty() => self.designator(k),
                Kind::Ident => self.ident(k, m),
                _ => k + 1,
            };
        }
    }

    fn open_brace(&mut self, k: usize) -> usize {
        if self.depth == 0 && self.is(k.wrapping_sub(1), Kind::Punct(b')')) {
            let params = std::mem::take(&mut self.params);
            self.vars
                .extend(params.into_iter().map(|v| Var { depth: 1, ..v }));
            self.in_body = true;
        }
        self.depth += 1;
        self.parens = 0;
        let init = match self.pending_init.take() {
            Some(i) => Some(i),
            // A compound literal is in a function (or in an initializer).
            None => (self.depth > 1)
                .then(|| self.compound_literal(k))
                .flatten()
                .or_else(|| match self.inits.last() {
                    Some((outer, d)) if *d == self.depth - 1 => Some(self.nested_init(k, outer)),
                    _ => None,
                }),
        };
        if let Some(i) = init {
            self.inits.push((i, self.depth));
        }
        k + 1
    }

    /// What the `{` at `k` of a compound literal initializes: `(struct t){ .f = fn }` a
    /// `struct t`, `(struct t[]){ … }` an array of them. Not a function's body or a cast's
    /// operand: the `(` is not after a name (other than `return`).
    fn compound_literal(&self, k: usize) -> Option<Init> {
        if !self.is(k.wrapping_sub(1), Kind::Punct(b')')) {
            return None;
        }
        let array = self.is(k.wrapping_sub(2), Kind::Punct(b']'))
            && self.is(k.wrapping_sub(3), Kind::Punct(b'['));
        let tag = k.wrapping_sub(if array { 4 } else { 2 });
        let ok = self.is(tag, Kind::Ident)
            && self.is(tag.wrapping_sub(1), Kind::Ident)
            && matches!(self.text(tag - 1), b"struct" | b"union");
        if !ok {
            return None;
        }
        // `(const struct t[])`
        let mut open = tag.wrapping_sub(2);
        while self.is(open, Kind::Ident) && is_type_qualifier(self.text(open)) {
            open = open.wrapping_sub(1);
        }
        if !self.is(open, Kind::Punct(b'(')) {
            return None;
        }
        if open > 0 && self.is(open - 1, Kind::Ident) && self.text(open - 1) != b"return" {
            return None;
        }
        let path = TypePath {
            tag: self.string(tag),
            chain: Vec::new(),
        };
        Some(if array {
            Init::Array(path)
        } else {
            Init::Struct(path)
        })
    }

    /// What a `{` inside the initializer `outer` initializes.
    fn nested_init(&self, k: usize, outer: &Init) -> Init {
        // `.member = {`
        if self.is(k.wrapping_sub(1), Kind::Punct(b'='))
            && self.is(k.wrapping_sub(2), Kind::Ident)
            && self.is(k.wrapping_sub(3), Kind::Punct(b'.'))
        {
            if let Init::Struct(p) = outer {
                let mut p = p.clone();
                p.chain.push(self.string(k - 2));
                return Init::Struct(p);
            }
            return Init::Unknown;
        }
        match outer {
            Init::Array(p) => Init::Struct(p.clone()),
            _ => Init::Unknown,
        }
    }

    fn close_brace(&mut self, k: usize) -> usize {
        self.depth = self.depth.saturating_sub(1);
        self.parens = 0;
        self.in_body &= self.depth > 0;
        if !self.in_body {
            self.local_fns.clear();
        }
        let d = self.depth;
        // Names are declared in depth order: the ones of the closed block are last.
        while self.vars.last().is_some_and(|v| v.depth > d) {
            self.vars.pop();
        }
        while self.inits.last().is_some_and(|(_, at)| *at > d) {
            self.inits.pop();
        }
        let mut closed_tag = None;
        // An anonymous struct or union closes here when a struct is open at this depth and no
        // named body is.
        let anonymous = self
            .structs
            .last()
            .filter(|(_, at)| *at > d)
            .filter(|_| self.bodies.last().is_none_or(|(at, _, _)| *at <= d))
            .map(|(o, _)| o.clone());
        let mut first_member = None;
        while let Some(&(at, first)) = self.anonymous.last().filter(|(at, _)| *at > d) {
            self.anonymous.pop();
            if anonymous.is_some() && at == d + 1 {
                first_member = Some(first);
            }
        }
        while let Some(&(at, start, tag)) = self.bodies.last().filter(|(at, _, _)| *at > d) {
            self.bodies.pop();
            closed_tag = Some(tag);
            let owner = self.structs.iter().rev().find(|(_, a)| *a == at);
            if let Some((owner, _)) = owner {
                let end = self.t[k].start as usize;
                for (name, chain) in member_aliases(&self.src[start..end]) {
                    self.out.members.push(Member {
                        owner: owner.clone(),
                        name,
                        tag: Some(format!("{ALIAS}{chain}")),
                        fnptr: false,
                    });
                }
            }
        }
        while self.structs.last().is_some_and(|(_, at)| *at > d) {
            self.structs.pop();
        }
        if let Some(tag) = closed_tag {
            self.declared_after_definition(k + 1, tag);
        }
        if self.loose.last() == Some(&(d + 1)) {
            self.loose.pop();
            // `struct { … } v[] = { … }`: the type is named after its first declarator.
            let j = self.past_pointers(k + 1);
            if self.is(j, Kind::Ident) && self.parens == 0 {
                let tag = self.range(j);
                self.loose_tags.push(tag);
                self.declared_after_definition(k + 1, tag);
            }
        }
        // `union { const struct omapdss_dpi_ops *dpi; … } ops;`: a type of its own, named
        // `omap_dss_device::ops` ([`ANONYMOUS`]), whose members were recorded as the enclosing
        // struct's until here: `in->ops.dpi` reaches `dpi`, and radeon's `asic->dpm.init` is
        // not `asic->init`. (Unnamed, `struct { int x; };`, its members are the enclosing
        // struct's.)
        if let Some(owner) = anonymous {
            let named = self.is(k + 1, Kind::Ident)
                && matches!(
                    self.t.get(k + 2).map(|t| t.kind),
                    Some(Kind::Punct(b';' | b'[' | b','))
                );
            let enclosing = self
                .structs
                .last()
                .is_some_and(|(o, at)| *o == owner && *at == d);
            if let (true, true, Some(first)) = (named, enclosing, first_member) {
                let name = self.string(k + 1);
                let own = format!("{owner}{ANONYMOUS}{name}");
                let inner = format!("{owner}{ANONYMOUS}");
                // The owners of its members, and the types inside it; not a member whose type
                // is the enclosing struct itself (`struct A *parent;`).
                let nested = |t: &mut String| {
                    if let Some(rest) = t.strip_prefix(&inner) {
                        *t = format!("{own}{ANONYMOUS}{rest}");
                    }
                };
                for m in self.out.members.iter_mut().skip(first) {
                    if m.owner == owner {
                        m.owner = own.clone();
                    } else {
                        nested(&mut m.owner);
                    }
                    if let Some(t) = m.tag.as_mut() {
                        nested(t);
                    }
                }
                self.out.members.push(Member {
                    owner,
                    name,
                    tag: Some(own),
                    fnptr: false,
                });
            }
        }
        k + 1
    }

    /// Past the `*`s and type qualifiers from `j`: where a declarator's name is.
    fn past_pointers(&self, mut j: usize) -> usize {
        while self.is(j, Kind::Punct(b'*'))
            || self.is(j, Kind::Ident) && is_type_qualifier(self.text(j))
        {
            j += 1;
        }
        j
    }

    /// The name at `at` is declared here, of struct type `tag`.
    fn declare(&mut self, at: usize, tag: (u32, u32)) {
        let var = Var {
            name: self.range(at),
            tag,
            depth: self.depth,
        };
        self.vars.push(var);
    }

    /// `struct t { … } v[] = { … };`: the names declared with a struct's definition, from `j`
    /// (after its `}`), are of its type, and their initializer registers in it.
    fn declared_after_definition(&mut self, j: usize, tag: (u32, u32)) {
        let j = self.past_pointers(j);
        if !self.is(j, Kind::Ident) || self.parens > 0 {
            return;
        }
        self.declare(j, tag);
        self.initializer_after(j + 1, tag);
        self.more_declarators(j + 1, tag);
    }

    /// `(*name)(` inside a struct definition: a function-pointer member.
    fn fnptr_member(&mut self, k: usize) {
        let Some((owner, at)) = self.structs.last() else {
            return;
        };
        if *at == self.depth
            && self.parens == 1
            && self.is(k + 1, Kind::Punct(b'*'))
            && self.is(k + 2, Kind::Ident)
            && self.is(k + 3, Kind::Punct(b')'))
            && self.is(k + 4, Kind::Punct(b'('))
        {
            let m = Member {
                owner: owner.clone(),
                name: self.string(k + 2),
                tag: None,
                fnptr: true,
            };
            self.out.members.push(m);
        }
    }

    /// `.field = value` inside an initializer.
    fn designator(&mut self, k: usize) -> usize {
        let Some((Init::Struct(target), d)) = self.inits.last() else {
            return k + 1;
        };
        if *d != self.depth || !self.is(k + 1, Kind::Ident) || !self.is(k + 2, Kind::Punct(b'=')) {
            return k + 1;
        }
        let mut v = k + 3;
        if self.is(v, Kind::Punct(b'&')) {
            v += 1;
        }
        if self.is(v, Kind::Ident)
            && matches!(
                self.t.get(v + 1).map(|t| t.kind),
                Some(Kind::Punct(b',' | b'}'))
            )
            && may_be_function(self.text(v))
        {
            // `.dpm.init = f`: member `init` of member `dpm`.
            let mut target = target.clone();
            let mut j = k;
            let mut through = Vec::new();
            while j >= 2 && self.is(j - 1, Kind::Ident) && self.is(j - 2, Kind::Punct(b'.')) {
                through.push(self.string(j - 1));
                j -= 2;
            }
            if !through.is_empty()
                && matches!(
                    j.checked_sub(1).map(|p| self.t[p].kind),
                    Some(Kind::Punct(b'{' | b','))
                )
            {
                target.chain.extend(through.into_iter().rev());
            }
            let r = Registration {
                target,
                field: self.string(k + 1),
                func: self.string(v),
                line: self.t[v].line,
            };
            self.out.registrations.push(r);
        }
        k + 2
    }

    fn ident(&mut self, k: usize, m: Macros<'_>) -> usize {
        let w = self.text(k);
        if w == b"struct" || w == b"union" {
            return self.tagged(k);
        }
        if self.is(k + 1, Kind::Punct(b'(')) {
            if let Some(n) = crate::definers::indirect_call_arity(w).or_else(|| (m.wrapper)(w)) {
                self.indirect_call(k, n);
                return k + 1;
            }
            if self.in_function() {
                let calls = (m.member_calls)(w);
                if !calls.is_empty() {
                    self.macro_member_calls(k, &calls);
                    return k + 1;
                }
            }
        }
        let after_member = k > 0 && matches!(self.t[k - 1].kind, Kind::Arrow | Kind::Punct(b'.'));
        if after_member && self.in_function() {
            if self.is(k + 1, Kind::Punct(b'('))
                || self.is(k + 1, Kind::Punct(b')')) && self.is(k + 2, Kind::Punct(b'('))
            {
                self.dispatch(k);
            } else if self.is(k + 1, Kind::Punct(b'=')) {
                self.assignment(k);
            } else if self.is(k + 1, Kind::Punct(b';'))
                || self.is(k + 1, Kind::Punct(b')')) && self.is(k + 2, Kind::Punct(b';'))
            {
                self.member_read(k);
            }
            return k + 1;
        }
        // `DEFINE_SCHED_CLASS(fair) = {`
        if self.depth == 0 && self.parens == 0 && self.is(k + 1, Kind::Punct(b'(')) && !after_member
        {
            let close = self.after_group(k + 1, b'(', b')');
            if self.is(close, Kind::Punct(b'=')) && self.is(close + 1, Kind::Punct(b'{')) {
                if let Some(tag) = (m.tag)(w) {
                    self.pending_init = Some(Init::Struct(TypePath {
                        tag,
                        chain: Vec::new(),
                    }));
                    return close + 1;
                }
            }
        }
        if self.in_function() && self.is(k + 1, Kind::Punct(b'(')) {
            self.local_call(k);
        }
        k + 1
    }

    /// `struct tag` (or `union tag`): a definition, a declaration of a struct-typed name, or a
    /// mere mention.
    fn tagged(&mut self, k: usize) -> usize {
        if self.is(k + 1, Kind::Punct(b'{')) {
            // An anonymous struct or union: its members are its enclosing struct's.
            let owner = self.structs.last().filter(|(_, at)| *at == self.depth);
            if let Some((owner, _)) = owner {
                self.structs.push((owner.clone(), self.depth + 1));
                self.anonymous
                    .push((self.depth + 1, self.out.members.len()));
            } else if self.parens == 0 {
                self.loose.push(self.depth + 1);
            }
            return k + 1;
        }
        if !self.is(k + 1, Kind::Ident) {
            return k + 1;
        }
        let tag = self.range(k + 1);
        if self.is(k + 2, Kind::Punct(b'{')) {
            self.structs.push((
                String::from_utf8_lossy(self.bytes(tag)).into_owned(),
                self.depth + 1,
            ));
            self.bodies
                .push((self.depth + 1, self.t[k + 2].end as usize, tag));
            return k + 2;
        }
        // Pointers and qualifiers, then the declared name.
        let j = self.past_pointers(k + 2);
        if !self.is(j, Kind::Ident) {
            return k + 2;
        }
        let name = self.range(j);
        let next = self.t.get(j + 1).map(|t| t.kind);
        let declared = matches!(next, Some(Kind::Punct(b'=' | b';' | b',' | b')' | b'[')))
            || self.is(j + 1, Kind::Ident) && self.text(j + 1).starts_with(b"__");
        if !declared {
            return k + 2;
        }
        let owner = self.structs.last().filter(|(_, at)| *at == self.depth);
        if let (Some((owner, _)), 0) = (owner, self.parens) {
            let m = Member {
                owner: owner.clone(),
                name: String::from_utf8_lossy(self.bytes(name)).into_owned(),
                tag: Some(String::from_utf8_lossy(self.bytes(tag)).into_owned()),
                fnptr: false,
            };
            self.out.members.push(m);
            return j + 1;
        }
        let var = Var {
            name,
            tag,
            depth: self.depth,
        };
        if self.depth == 0 && self.parens > 0 {
            self.params.push(var);
            return j + 1;
        }
        if self.parens == 0 {
            self.vars.push(var);
            self.initializer_after(j + 1, tag);
            self.more_declarators(j + 1, tag);
        }
        j + 1
    }

    /// `struct t *a = NULL, *b;`: the names declared after the first (from `j`, after it),
    /// struct-typed names of `tag` too. Looks at most [`DECLARATOR_REACH`] tokens ahead, so a
    /// file of declarations without `;` stays linear.
    fn more_declarators(&mut self, j: usize, tag: (u32, u32)) {
        let mut depth = 0u32;
        let end = self.t.len().min(j + DECLARATOR_REACH);
        let mut k = j;
        while k < end {
            match self.t[k].kind {
                Kind::Punct(b'(' | b'[' | b'{') => depth += 1,
                Kind::Punct(b')' | b']' | b'}') if depth == 0 => return,
                Kind::Punct(b')' | b']' | b'}') => depth -= 1,
                Kind::Punct(b';') => return,
                Kind::Punct(b',') if depth == 0 => {
                    let n = self.past_pointers(k + 1);
                    let next = self.t.get(n + 1).map(|t| t.kind);
                    if self.is(n, Kind::Ident)
                        && matches!(next, Some(Kind::Punct(b'=' | b';' | b',' | b'[')))
                    {
                        self.declare(n, tag);
                    }
                    k = n;
                    continue;
                }
                _ => {}
            }
            k += 1;
        }
    }

    /// After a declared struct-typed name: `= {` (or `[…] = {`, attributes between) starts an
    /// initializer of `tag`.
    fn initializer_after(&mut self, mut j: usize, tag: (u32, u32)) {
        let mut array = false;
        loop {
            if self.is(j, Kind::Punct(b'[')) {
                array = true;
                j = self.after_group(j, b'[', b']');
            } else if self.is(j, Kind::Ident) && self.text(j).starts_with(b"__") {
                j += 1;
                if self.is(j, Kind::Punct(b'(')) {
                    j = self.after_group(j, b'(', b')');
                }
            } else {
                break;
            }
        }
        if self.is(j, Kind::Punct(b'=')) && self.is(j + 1, Kind::Punct(b'{')) {
            let p = TypePath {
                tag: self.tag_name(tag),
                chain: Vec::new(),
            };
            self.pending_init = Some(if array {
                Init::Array(p)
            } else {
                Init::Struct(p)
            });
        }
    }

    /// The token before the member access (`->` or `.`) at `j`, past an index (`name[…]`).
    fn before_access(&self, j: usize) -> Option<usize> {
        let n = j.checked_sub(1)?;
        if self.is(n, Kind::Punct(b']')) {
            return self.group_start(n, b'[', b']')?.checked_sub(1);
        }
        Some(n)
    }

    /// The struct type of the expression ending just before the member access at `k` (an
    /// `->` or `.`): a name in scope, then members; `None` when it is anything else.
    fn type_before(&self, k: usize) -> Option<TypePath> {
        let mut chain = Vec::new();
        let mut j = k;
        loop {
            let mut n = self.before_access(j)?;
            // `READ_ONCE(sock->ops)->mmap`: the accessor's first argument is the expression.
            if self.is(n, Kind::Punct(b')')) {
                match self.accessor_arg(n) {
                    Some(arg) => n = arg,
                    None => {
                        let tag = self.call_result(n)?;
                        chain.reverse();
                        return Some(TypePath { tag, chain });
                    }
                }
            }
            if !self.is(n, Kind::Ident) {
                return None;
            }
            let before = n.checked_sub(1).map(|p| self.t[p].kind);
            if matches!(before, Some(Kind::Arrow | Kind::Punct(b'.'))) {
                chain.push(self.string(n));
                j = n - 1;
                continue;
            }
            chain.reverse();
            let tag = match self.var_tag(n) {
                Some(tag) => tag,
                // `clk_divider_ops.recalc_rate(…)`, `efi.set_time(…)`: a struct object not
                // declared in the file is a global declared in a header, typed later from its
                // declarations (`=name`). Only for `.`: a pointer not in scope is more often a
                // local of a typedef'd type than a global.
                None if self.is(j, Kind::Punct(b'.')) && self.depth > 0 => {
                    format!("{GLOBAL}{}", String::from_utf8_lossy(self.text(n)))
                }
                None => return None,
            };
            return Some(TypePath { tag, chain });
        }
    }

    /// The struct tag the name at `n` is declared with in scope, if it is.
    fn var_tag(&self, n: usize) -> Option<String> {
        let name = self.text(n);
        let var = self
            .vars
            .iter()
            .rev()
            .find(|v| self.bytes(v.name) == name)?;
        Some(self.tag_name(var.tag))
    }

    /// The struct tag at `tag`, or the name of a loose anonymous struct's type
    /// ([`FILE_ANONYMOUS`]) when `tag` is the variable it was declared with.
    fn tag_name(&self, tag: (u32, u32)) -> String {
        let name = String::from_utf8_lossy(self.bytes(tag));
        match self.loose_tags.contains(&tag) {
            true => format!("{FILE_ANONYMOUS}{name}"),
            false => name.into_owned(),
        }
    }

    /// The index of the `open` that the `close` at `k` closes (`[` of `]`, `(` of `)`).
    fn group_start(&self, k: usize, open: u8, close: u8) -> Option<usize> {
        let mut depth = 0u32;
        let mut j = k;
        loop {
            match self.t[j].kind {
                Kind::Punct(b) if b == close => depth += 1,
                Kind::Punct(b) if b == open => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                _ => {}
            }
            j = j.checked_sub(1)?;
        }
    }

    /// The type of the call `f(…)` closing at `close`: `f()`, resolved later from the return
    /// type of function `f` (`crypto_aead_alg(tfm)->decrypt`); for `container_of(p, struct t,
    /// m)` and the list macros that name their type the same way, `t`. `None` for anything
    /// else: a cast, a call through a member, a keyword's parentheses.
    fn call_result(&self, close: usize) -> Option<String> {
        let open = self.group_start(close, b'(', b')')?;
        let callee = open.checked_sub(1)?;
        if !self.is(callee, Kind::Ident) || crate::scan::is_keyword(self.text(callee)) {
            return None;
        }
        let before = callee.checked_sub(1).map(|p| self.t[p].kind);
        if matches!(before, Some(Kind::Arrow | Kind::Punct(b'.'))) {
            return None;
        }
        let name = self.text(callee);
        if !names_its_type(name) {
            return Some(format!("{}()", String::from_utf8_lossy(name)));
        }
        // The second top-level argument: `struct t`.
        let j = self.first_comma(open, close)? + 1;
        let tagged = self.is(j, Kind::Ident)
            && matches!(self.text(j), b"struct" | b"union")
            && self.is(j + 1, Kind::Ident)
            && self.is(j + 2, Kind::Punct(b','));
        tagged.then(|| self.string(j + 1))
    }

    /// For `ACCESSOR(expr, …)` closing at `close`, with ACCESSOR one of [`is_accessor`]'s, the
    /// index of `expr`'s last token when it is a name (`READ_ONCE(sock->ops)`: `ops`).
    fn accessor_arg(&self, close: usize) -> Option<usize> {
        let open = self.group_start(close, b'(', b')')?;
        let callee = open.checked_sub(1)?;
        if !(self.is(callee, Kind::Ident) && is_accessor(self.text(callee))) {
            return None;
        }
        let end = self.first_comma(open, close).unwrap_or(close);
        let last = end.checked_sub(1).filter(|&l| l > open)?;
        self.is(last, Kind::Ident).then_some(last)
    }

    /// The first comma between the parentheses at `open` and `close` outside any bracket: the
    /// end of the first argument.
    fn first_comma(&self, open: usize, close: usize) -> Option<usize> {
        let mut depth = 0u32;
        for j in open + 1..close {
            match self.t[j].kind {
                Kind::Punct(b'(' | b'[' | b'{') => depth += 1,
                Kind::Punct(b')' | b']' | b'}') => depth = depth.saturating_sub(1),
                Kind::Punct(b',') if depth == 0 => return Some(j),
                _ => {}
            }
        }
        None
    }

    /// `expr->field(…)` or `(*expr->field)(…)`.
    fn dispatch(&mut self, k: usize) {
        let d = Dispatch {
            target: self.type_before(k - 1),
            field: self.string(k),
            line: self.t[k].line,
        };
        self.out.dispatches.push(d);
    }

    /// `fn = expr->field;`, `T fn = expr->field;` or `R (*fn)(P) = expr->field;` in a
    /// function (the read may be wrapped in an accessor macro), with the member name at `k`:
    /// `fn` holds the member's pointer from here on.
    fn member_read(&mut self, k: usize) {
        let Some(mut start) = self.chain_start(k - 1) else {
            return;
        };
        // `c = READ_ONCE(prot->close);`
        if self.is(k + 1, Kind::Punct(b')')) {
            let accessor = start.wrapping_sub(2);
            if !(self.is(start.wrapping_sub(1), Kind::Punct(b'('))
                && self.is(accessor, Kind::Ident)
                && is_accessor(self.text(accessor)))
            {
                return;
            }
            start = accessor;
        }
        let Some(eq) = start
            .checked_sub(1)
            .filter(|&e| self.is(e, Kind::Punct(b'=')))
        else {
            return;
        };
        let name = match eq.checked_sub(1) {
            // `fn = …`, `T fn = …`; not `x->fn = …`.
            Some(n)
                if self.is(n, Kind::Ident)
                    && !n.checked_sub(1).is_some_and(|m| {
                        matches!(self.t[m].kind, Kind::Arrow | Kind::Punct(b'.'))
                    }) =>
            {
                n
            }
            // `R (*fn)(P) = …`
            Some(close) if self.is(close, Kind::Punct(b')')) => {
                let Some(params) = self.group_start(close, b'(', b')') else {
                    return;
                };
                let inner = params.wrapping_sub(1);
                let Some(open) = self
                    .is(inner, Kind::Punct(b')'))
                    .then(|| self.group_start(inner, b'(', b')'))
                    .flatten()
                else {
                    return;
                };
                if !(open + 3 == inner
                    && self.is(open + 1, Kind::Punct(b'*'))
                    && self.is(open + 2, Kind::Ident))
                {
                    return;
                }
                open + 2
            }
            _ => return,
        };
        let local = LocalFn {
            name: self.range(name),
            target: self.type_before(k - 1),
            field: self.string(k),
        };
        self.local_fns.push(local);
    }

    /// The first token of the member-access expression whose access (`->` or `.`) is at `k`:
    /// its base name, or the accessor macro around it (`READ_ONCE(x->ops)->f`).
    fn chain_start(&self, k: usize) -> Option<usize> {
        let mut j = k;
        loop {
            let mut n = self.before_access(j)?;
            if self.is(n, Kind::Punct(b')')) {
                n = self.group_start(n, b'(', b')')?.checked_sub(1)?;
            }
            if !self.is(n, Kind::Ident) {
                return None;
            }
            match n.checked_sub(1).map(|p| self.t[p].kind) {
                Some(Kind::Arrow | Kind::Punct(b'.')) => j = n - 1,
                _ => return Some(n),
            }
        }
    }

    /// A call of the name at `k`: a dispatch through the member a local function pointer of
    /// that name was last read from.
    fn local_call(&mut self, k: usize) {
        if self.local_fns.is_empty() || !self.is(k, Kind::Ident) {
            return;
        }
        let name = self.text(k);
        let Some(local) = self
            .local_fns
            .iter()
            .rev()
            .find(|l| self.bytes(l.name) == name)
        else {
            return;
        };
        let d = Dispatch {
            target: local.target.clone(),
            field: local.field.clone(),
            line: self.t[k].line,
        };
        self.out.dispatches.push(d);
    }

    /// `x->field = fn;`
    fn assignment(&mut self, k: usize) {
        let v = k + 2;
        if !(self.is(v, Kind::Ident)
            && self.is(v + 1, Kind::Punct(b';'))
            && may_be_function(self.text(v)))
        {
            return;
        }
        if let Some(target) = self.type_before(k - 1) {
            let r = Registration {
                target,
                field: self.string(k),
                func: self.string(v),
                line: self.t[v].line,
            };
            self.out.registrations.push(r);
        }
    }

    /// The token ranges of the first `most` top-level arguments of the call whose `(` is at
    /// `open` (and of one more, which may end early).
    fn args(&self, open: usize, most: usize) -> Vec<(usize, usize)> {
        let mut args: Vec<(usize, usize)> = Vec::new();
        let (mut depth, mut start) = (0u32, open + 1);
        for j in open..self.t.len() {
            match self.t[j].kind {
                Kind::Punct(b'(' | b'[' | b'{') => depth += 1,
                Kind::Punct(b')' | b']' | b'}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        args.push((start, j));
                        break;
                    }
                }
                Kind::Punct(b',') if depth == 1 => {
                    args.push((start, j));
                    start = j + 1;
                    if args.len() > most {
                        break;
                    }
                }
                _ => {}
            }
        }
        args
    }

    /// An invocation at `k` of a macro whose body calls through members: a dispatch per call,
    /// typed from its arguments (`v4l2_subdev_call(sd, video, s_stream, 1)`: `s_stream` of
    /// member `video` of member `ops` of `struct v4l2_subdev`).
    fn macro_member_calls(&mut self, k: usize, calls: &[MemberCall]) {
        let most = calls.iter().map(MemberCall::params).max().unwrap_or(0);
        let args = self.args(k + 1, most);
        // The name each argument is, if it is one.
        let names: Vec<Option<usize>> = (args.iter())
            .map(|&(a, b)| (b == a + 1 && self.is(a, Kind::Ident)).then_some(a))
            .collect();
        let name = |i: usize| names.get(i).copied().flatten();
        for call in calls {
            let Some((last, members)) = call.steps.split_last() else {
                continue;
            };
            let (field, line) = match last {
                Step::Member(f) => (f.clone(), self.t[k].line),
                Step::Param(i) => match name(*i) {
                    Some(a) => (self.string(a), self.t[a].line),
                    None => continue,
                },
            };
            let mut target = match &call.start {
                Start::Param(i) => args.get(*i).and_then(|&(a, b)| self.type_of_arg(a, b)),
                Start::Tag(tag) => Some(TypePath {
                    tag: tag.clone(),
                    chain: Vec::new(),
                }),
                Start::Global(g) => Some(TypePath {
                    tag: format!("{GLOBAL}{g}"),
                    chain: Vec::new(),
                }),
            };
            for step in members {
                let member = match step {
                    Step::Member(m) => Some(m.clone()),
                    Step::Param(i) => name(*i).map(|a| self.string(a)),
                };
                target = match (target, member) {
                    (Some(mut t), Some(m)) => {
                        t.chain.push(m);
                        Some(t)
                    }
                    _ => None,
                };
            }
            self.out.dispatches.push(Dispatch {
                target,
                field,
                line,
            });
        }
    }

    /// The struct type of the macro argument in tokens `a..b`: a name in scope, a member of
    /// one (`&dev->sd`, `priv->sd`), as [`Pass::type_before`] types the expression before a
    /// member access.
    fn type_of_arg(&self, mut a: usize, b: usize) -> Option<TypePath> {
        while a < b && matches!(self.t[a].kind, Kind::Punct(b'&' | b'*')) {
            a += 1;
        }
        let last = b
            .checked_sub(1)
            .filter(|&l| l >= a && self.is(l, Kind::Ident))?;
        if last == a {
            return Some(TypePath {
                tag: self.var_tag(last)?,
                chain: Vec::new(),
            });
        }
        if !matches!(self.t[last - 1].kind, Kind::Arrow | Kind::Punct(b'.')) {
            return None;
        }
        let mut t = self.type_before(last - 1)?;
        t.chain.push(self.string(last));
        Some(t)
    }

    /// `INDIRECT_CALL_n(ptr, f1, …, fn, args…)` or a learned wrapper listing `n` functions: the
    /// listed functions, and `ptr` as a dispatch when it is a member.
    fn indirect_call(&mut self, k: usize, n: usize) {
        let args = self.args(k + 1, n);
        if let Some(&(a, b)) = args.first() {
            if b >= a + 3
                && self.is(b - 1, Kind::Ident)
                && matches!(self.t[b - 2].kind, Kind::Arrow | Kind::Punct(b'.'))
            {
                self.dispatch(b - 1);
            }
        }
        for &(a, b) in args.iter().skip(1).take(n) {
            if b == a + 1 && self.is(a, Kind::Ident) {
                self.out.listed.push((self.string(a), self.t[a].line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The tokenizer as it was first written, a byte at a time: the reference for `tokens`.
    fn tokens_bytewise(src: &[u8]) -> Vec<Tok> {
        let mut out = Vec::new();
        let (mut i, mut line, n) = (0usize, 1u32, src.len());
        let mut line_start = true;
        while i < n {
            let b = src[i];
            let start = i;
            let kind = match b {
                b'\n' => {
                    line += 1;
                    i += 1;
                    line_start = true;
                    continue;
                }
                b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' | b'\\' => {
                    i += 1;
                    continue;
                }
                b'/' if src.get(i + 1) == Some(&b'*') => {
                    let end =
                        memchr::memmem::find(&src[i + 2..], b"*/").map_or(n, |k| i + 2 + k + 2);
                    line += memchr::memchr_iter(b'\n', &src[i..end]).count() as u32;
                    i = end;
                    continue;
                }
                b'/' if src.get(i + 1) == Some(&b'/') => {
                    i = skip_logical_line(src, i, &mut line);
                    line_start = true;
                    continue;
                }
                b'#' if line_start => {
                    i = skip_logical_line(src, i, &mut line);
                    continue;
                }
                b'"' | b'\'' => {
                    i += 1;
                    while i < n && src[i] != b && src[i] != b'\n' {
                        if src[i] == b'\\' {
                            if src.get(i + 1) == Some(&b'\n') {
                                line += 1;
                            } else if src.get(i + 1) == Some(&b'\r')
                                && src.get(i + 2) == Some(&b'\n')
                            {
                                line += 1;
                                i += 1;
                            }
                            i += 1;
                        }
                        i += 1;
                    }
                    // Past the closing quote; an unclosed literal ends at its newline.
                    if i < n && src[i] == b {
                        i += 1;
                    }
                    i = i.min(n);
                    Kind::Other
                }
                _ if b.is_ascii_alphabetic() || b == b'_' => {
                    while i < n && crate::scan::is_ident(src[i]) {
                        i += 1;
                    }
                    Kind::Ident
                }
                b'0'..=b'9' => {
                    while i < n && (src[i].is_ascii_alphanumeric() || src[i] == b'.') {
                        i += 1;
                    }
                    Kind::Other
                }
                b'-' if src.get(i + 1) == Some(&b'>') => {
                    i += 2;
                    Kind::Arrow
                }
                b'=' | b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|'
                | b'^'
                    if src.get(i + 1) == Some(&b'=') =>
                {
                    i += 2;
                    Kind::Other
                }
                b'&' | b'|' | b'+' | b'-' if src.get(i + 1) == Some(&b) => {
                    i += 2;
                    Kind::Other
                }
                _ => {
                    i += 1;
                    Kind::Punct(b)
                }
            };
            line_start = false;
            let (start, end) = (start as u32, i as u32);
            out.push(Tok {
                kind,
                start,
                end,
                line,
            });
        }
        out
    }

    /// Bytes that are mostly C's own, so that every state of the tokenizer and of the pass is
    /// reached often; any byte can still appear.
    fn c_like_bytes() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            any::<u8>().prop_map(|b| vec![b]),
            prop::sample::select(vec![
                "int f(struct s *p)\n{",
                "p->f(",
                "p->f = g;",
                "(*p->g)(",
                ".f = g,",
                "struct s v = {",
                "struct s a[] = {",
                "};",
                "DEFINE_X(y) = {",
                "int (*f)(int);",
                "struct s {",
                "p[i].f(",
                "INDIRECT_CALL_2(p->f, a, b, c);",
                "call_op(p, f, 1);",
                "struct ",
                "union ",
                "s ",
                "ops",
                "f_op",
                "INDIRECT_CALL_2",
                "DEFINE_X",
                "a1",
                "_x",
                "0x1f",
                "1.5",
                "->",
                "-",
                ">",
                ".",
                "=",
                "==",
                "&",
                "&&",
                "+",
                "++",
                "|",
                "*",
                "(",
                ")",
                "[",
                "]",
                "{",
                "}",
                ";",
                ",",
                "/*",
                "*/",
                "//",
                "#",
                "\"",
                "'",
                "\\",
                "\\\n",
                "\n",
                "\r\n",
                " ",
                "\t",
                "\t\t",
                "const ",
                "__rcu ",
                "__read_mostly ",
                "é",
            ])
            .prop_map(|s| s.as_bytes().to_vec()),
        ];
        prop::collection::vec(piece, 0..120).prop_map(|v| v.concat())
    }

    fn macro_tags(m: &[u8]) -> Option<String> {
        (m == b"DEFINE_X").then(|| "x_ops".to_string())
    }

    proptest! {
        #[test]
        fn tokens_are_the_bytewise_tokenizers(src in c_like_bytes()) {
            let mut t = Tokens::default();
            tokens(&src, &mut t);
            prop_assert_eq!(t.all, tokens_bytewise(&src));
        }

        #[test]
        fn visiting_only_the_listed_tokens_changes_no_fact(src in c_like_bytes()) {
            let mut t = Tokens::default();
            tokens(&src, &mut t);
            let calls = [MemberCall::decode("{0}.ops.{1}").unwrap()];
            let member_calls = |w: &[u8]| if w == b"call_op" { calls.to_vec() } else { Vec::new() };
            let m = Macros { tag: &macro_tags, wrapper: &|_| None, member_calls: &member_calls };
            let (listed, mut t) = pass(&src, t, m);
            t.visit = (0..t.all.len() as u32).collect();
            let (all, _) = pass(&src, t, m);
            prop_assert_eq!(listed, all);
        }
    }

    fn no_macros(_: &[u8]) -> Option<String> {
        None
    }

    fn regs(f: &Facts) -> Vec<(String, String, String, u32)> {
        f.registrations
            .iter()
            .map(|r| (r.target.encode(), r.field.clone(), r.func.clone(), r.line))
            .collect()
    }

    /// Each member as its owner, name and struct tag.
    fn owners(f: &Facts) -> Vec<(String, String, Option<String>)> {
        (f.members.iter())
            .map(|m| (m.owner.clone(), m.name.clone(), m.tag.clone()))
            .collect()
    }

    fn calls(f: &Facts) -> Vec<(Option<String>, String, u32)> {
        f.dispatches
            .iter()
            .map(|d| {
                (
                    d.target.as_ref().map(TypePath::encode),
                    d.field.clone(),
                    d.line,
                )
            })
            .collect()
    }

    fn s(x: &str) -> String {
        x.to_string()
    }

    /// The calls through members of `src`, each as its struct path, member and line.
    fn calls_in(src: &str) -> Vec<(Option<String>, String, u32)> {
        calls(&facts(src.as_bytes(), &no_macros))
    }

    /// `(Some(path), member, line)`.
    fn typed(path: &str, member: &str, line: u32) -> (Option<String>, String, u32) {
        (Some(s(path)), s(member), line)
    }

    #[test]
    fn a_macro_calling_through_members_is_a_dispatch_at_each_use() {
        let defines =
            "#define v4l2_subdev_call(sd, o, f, args...) ({ struct v4l2_subdev *__sd = (sd); \\\n\
                       __sd->ops->o->f(__sd, ##args); })\n\
                       #define map_read(map, ofs) (map)->read(map, ofs)\n";
        let d = crate::definers::Definers::resolve(crate::definers::of_source(defines.as_bytes()));
        let src = "int probe(struct my_dev *dev, struct map_info *map)\n{\n\
                   \tv4l2_subdev_call(dev->sd, video, s_stream, 1);\n\
                   \tx = map_read(map, 0) + map_read(&dev->map, 4);\n\
                   \treturn map_read(get(), 0) + v4l2_subdev_call(sd, pad, op);\n}\n\
                   static int v = map_read(m, 0);\n";
        let m = Macros {
            tag: &no_macros,
            wrapper: &|_| None,
            member_calls: &|w| d.member_calls(w, "drivers/x.c"),
        };
        assert_eq!(
            calls(&facts_of(src.as_bytes(), m)),
            [
                typed("v4l2_subdev.ops.video", "s_stream", 3),
                typed("map_info", "read", 4),
                typed("my_dev.map", "read", 4),
                (None, s("read"), 5),
                typed("v4l2_subdev.ops.pad", "op", 5),
            ]
        );
    }

    #[test]
    fn members_of_a_struct_definition() {
        let src = "struct file {\n\tconst struct file_operations *f_op;\n\tint x;\n\
                   \tunion { struct inode *i; };\n};\n\
                   struct file_operations {\n\tssize_t (*read_iter)(struct kiocb *, int);\n\
                   \tint (*open)(struct inode *, struct file *);\n\tvoid *p;\n};\n";
        let f = facts(src.as_bytes(), &no_macros);
        let got: Vec<_> = f
            .members
            .iter()
            .map(|m| (m.owner.as_str(), m.name.as_str(), m.tag.as_deref(), m.fnptr))
            .collect();
        assert_eq!(
            got,
            [
                ("file", "f_op", Some("file_operations"), false),
                ("file", "i", Some("inode"), false),
                ("file_operations", "read_iter", None, true),
                ("file_operations", "open", None, true),
            ]
        );
    }

    #[test]
    fn designated_initializers_arrays_nested_and_macros() {
        let src = "static const struct file_operations fops = {\n\t.read_iter = my_read,\n\
                   \t.owner = THIS_MODULE,\n\t.open = &my_open\n};\n\
                   static struct proto_ops arr[] __read_mostly = {\n\t{ .bind = a_bind, },\n\
                   \t[1] = { .bind = b_bind },\n};\n\
                   struct outer o = { .inner = { .cb = in_cb }, .n = 3 };\n\
                   DEFINE_CLASS(fair) = {\n\t.pick = pick_fair,\n};\n\
                   int x = { 1 };\n\
                   static const int regs[] = { [R(0) ... R(3)] = 3 };\n";
        let tags = |m: &[u8]| (m == b"DEFINE_CLASS").then(|| s("sched_class"));
        let f = facts(src.as_bytes(), &tags);
        assert_eq!(
            regs(&f),
            [
                (s("file_operations"), s("read_iter"), s("my_read"), 2),
                (s("file_operations"), s("open"), s("my_open"), 4),
                (s("proto_ops"), s("bind"), s("a_bind"), 7),
                (s("proto_ops"), s("bind"), s("b_bind"), 8),
                (s("outer.inner"), s("cb"), s("in_cb"), 10),
                (s("sched_class"), s("pick"), s("pick_fair"), 12),
            ]
        );
        // `[R(0) ... R(3)]` in a file-scope initializer is no call through a member.
        assert!(f.dispatches.is_empty(), "{:?}", f.dispatches);
    }

    #[test]
    fn a_struct_type_declared_with_its_array_registers_and_is_called_through() {
        // i915_module.c's `init_funcs[]` (issue 46, item 15): the type has no tag.
        let src = "static const struct {\n\tint (*init)(void);\n\tvoid (*exit)(void);\n\
                   } init_funcs[] = {\n\t{ .init = a_init, .exit = a_exit },\n\
                   \t{ .init = b_init },\n};\n\
                   static int go(void)\n{\n\tint i;\n\
                   \tfor (i = 0; i < 2; i++)\n\t\tinit_funcs[i].init();\n\
                   \tstatic const struct { void (*run)(int); } local_ops = { .run = c_run };\n\
                   \tlocal_ops.run(1);\n\treturn 0;\n}\n";
        let f = facts(src.as_bytes(), &|_| None);
        assert_eq!(
            regs(&f),
            [
                (s("@init_funcs"), s("init"), s("a_init"), 5),
                (s("@init_funcs"), s("exit"), s("a_exit"), 5),
                (s("@init_funcs"), s("init"), s("b_init"), 6),
                (s("@local_ops"), s("run"), s("c_run"), 13),
            ]
        );
        assert_eq!(
            calls(&f),
            [
                (Some(s("@init_funcs")), s("init"), 12),
                (Some(s("@local_ops")), s("run"), 14)
            ]
        );
        // A struct's anonymous member struct is still the struct's own.
        let f = facts(
            b"struct s { struct { int (*f)(void); } in; };\nstruct { int x; };\n",
            &|_| None,
        );
        assert!(f.registrations.is_empty() && f.dispatches.is_empty());
        assert_eq!(owners(&f)[1], (s("s"), s("in"), Some(s("s::in"))));
    }

    #[test]
    fn a_compound_literal_registers_in_its_struct() {
        let src = "static void setup(struct dev *d)\n{\n\
                   \td->ops = (struct dev_ops){ .start = dev_start,\n\
                   \t\t.irq = { .handle = dev_irq } };\n\
                   \tuse((const struct dev_ops[]){ { .start = other_start } });\n\
                   \treturn (struct dev_ops){ .stop = dev_stop };\n\
                   \tif (f(struct_size)) { .x = no_func; }\n\
                   }\n\
                   int g(struct dev_ops) { return 0; }\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(
            regs(&f),
            [
                (s("dev_ops"), s("start"), s("dev_start"), 3),
                (s("dev_ops.irq"), s("handle"), s("dev_irq"), 4),
                (s("dev_ops"), s("start"), s("other_start"), 5),
                (s("dev_ops"), s("stop"), s("dev_stop"), 6),
            ]
        );
    }

    #[test]
    fn dispatch_through_parameters_locals_chains_and_indirect_call() {
        let src = "static int f(struct file *file, int n)\n{\n\
                   \tstruct net_device_ops *ops = get();\n\
                   \tfile->f_op->read_iter(file, n);\n\
                   \tops->ndo_open(n);\n\
                   \tunknown()->go(n);\n\
                   \t(*file->f_op->open)(file);\n\
                   \tx = INDIRECT_CALL_2(file->f_op->poll, p_one, p_two, file);\n\
                   \tops->ndo_stop = my_stop;\n\
                   \treturn 0;\n}\n\
                   static void g(void)\n{\n\tops->ndo_open(1);\n}\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(
            calls(&f),
            [
                (Some(s("file.f_op")), s("read_iter"), 4),
                (Some(s("net_device_ops")), s("ndo_open"), 5),
                (Some(s("unknown()")), s("go"), 6),
                (Some(s("file.f_op")), s("open"), 7),
                (Some(s("file.f_op")), s("poll"), 8),
                (None, s("ndo_open"), 14),
            ]
        );
        assert_eq!(f.listed, [(s("p_one"), 8), (s("p_two"), 8)]);
        assert_eq!(
            regs(&f),
            [(s("net_device_ops"), s("ndo_stop"), s("my_stop"), 9)]
        );
    }

    #[test]
    fn a_local_function_pointer_read_from_a_member_is_a_call_through_it() {
        let src = "static int f(struct file *file, struct proto *prot)\n{\n\
                   \tssize_t (*read)(struct file *, int);\n\
                   \tread = file->f_op->read;\n\
                   \tif (read)\n\
                   \t\tread(file, 1);\n\
                   \tint (*open)(struct file *) = file->f_op->open;\n\
                   \t(*open)(file);\n\
                   \tclose_fn c = READ_ONCE(prot->close);\n\
                   \tc(prot);\n\
                   \tgo = unknown()->go;\n\
                   \tgo();\n\
                   \tfile->f_op->poll = other;\n\
                   \treturn 0;\n}\n\
                   static void g(void)\n{\n\tread(1);\n}\n";
        let expected = [
            typed("file.f_op", "read", 6),
            typed("file.f_op", "open", 8),
            typed("proto", "close", 10),
            (Some(s("unknown()")), s("go"), 12),
        ];
        assert_eq!(calls_in(src), expected);
    }

    #[test]
    fn every_declarator_of_a_declaration_is_typed() {
        let src = "static int f(void)\n{\n\
                   \tstruct net_device_ops *a = NULL, *b, c[2];\n\
                   \tstruct proto *p = get(1, 2), *q;\n\
                   \tb->ndo_open(1);\n\
                   \tc[0].ndo_stop(1);\n\
                   \tq->close(1);\n\
                   \treturn 0;\n}\n";
        let expected = [
            typed("net_device_ops", "ndo_open", 5),
            typed("net_device_ops", "ndo_stop", 6),
            typed("proto", "close", 7),
        ];
        assert_eq!(calls_in(src), expected);
    }

    #[test]
    fn a_member_macro_in_a_struct_body_is_a_member_alias() {
        let src = "struct sock {\n\
                   \tstruct sock_common __sk_common;\n\
                   #define sk_prot\t\t__sk_common.skc_prot /* the protocol */\n\
                   #define sk_hash(x)\t__sk_common.skc_hash\n\
                   #define sk_flags\t(__sk_common.skc_flags)\n\
                   \tint sk_rcvbuf;\n};\n";
        let f = facts(src.as_bytes(), &no_macros);
        let alias = f.members.iter().find(|m| m.name == "sk_prot").unwrap();
        assert_eq!(alias.owner, "sock");
        assert_eq!(alias.tag.as_deref(), Some("@__sk_common.skc_prot"));
        assert_eq!(
            f.members
                .iter()
                .filter(|m| m.tag.as_deref().is_some_and(|t| t.starts_with(ALIAS)))
                .count(),
            1
        );
    }

    #[test]
    fn a_struct_defined_with_its_variable_types_the_variable_and_its_initializer() {
        let src = "static const struct ops {\n\tint (*open)(void);\n} my_ops[] = {\n\
                   \t{ .open = a_open },\n};\n\
                   struct other { int x; } one = { .x = 1 }, *two;\n\
                   static int f(void)\n{\n\tmy_ops[0].open();\n\ttwo->y(1);\n\treturn 0;\n}\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(regs(&f), [(s("ops"), s("open"), s("a_open"), 4)]);
        assert_eq!(
            calls(&f),
            [typed("ops", "open", 9), typed("other", "y", 10)]
        );
    }

    #[test]
    fn a_pointer_read_by_an_accessor_macro_keeps_its_type() {
        let src = "static int f(struct socket *sock, struct net_device *dev)\n{\n\
                   \tREAD_ONCE(sock->ops)->mmap(sock);\n\
                   \trcu_dereference_protected(dev->ops, 1)->open(dev);\n\
                   \tREAD_ONCE(sock)->ops->bind(sock);\n\
                   \tfoo(sock->ops)->poll(sock);\n\
                   \treturn 0;\n}\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(
            calls(&f),
            [
                (Some(s("socket.ops")), s("mmap"), 3),
                (Some(s("net_device.ops")), s("open"), 4),
                (Some(s("socket.ops")), s("bind"), 5),
                (Some(s("foo()")), s("poll"), 6),
            ]
        );
    }

    #[test]
    fn a_struct_object_not_declared_in_the_file_is_a_global_typed_later() {
        let src = "static int f(struct clk_hw *hw, my_ops_t *ops)\n{\n\
                   \tclk_divider_ops.recalc_rate(hw, 0);\n\
                   \tefi.set_time(0);\n\
                   \tops->undeclared(hw);\n\
                   \ttable[2].run(hw);\n\
                   \treturn 0;\n}\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(
            calls(&f),
            [
                (Some(s("=clk_divider_ops")), s("recalc_rate"), 3),
                (Some(s("=efi")), s("set_time"), 4),
                (None, s("undeclared"), 5),
                (Some(s("=table")), s("run"), 6),
            ]
        );
    }

    #[test]
    fn a_named_anonymous_union_is_a_type_of_its_own() {
        let src = "struct omap_dss_device {\n\tunion {\n\
                   \t\tconst struct omapdss_dpi_ops *dpi;\n\
                   \t\tconst struct omapdss_sdi_ops *sdi;\n\t} ops;\n\
                   \tstruct { int x; };\n};\n\
                   static int f(struct omap_dss_device *in)\n{\n\
                   \treturn in->ops.dpi->connect(in);\n}\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(
            owners(&f),
            [
                (
                    s("omap_dss_device::ops"),
                    s("dpi"),
                    Some(s("omapdss_dpi_ops"))
                ),
                (
                    s("omap_dss_device::ops"),
                    s("sdi"),
                    Some(s("omapdss_sdi_ops"))
                ),
                (
                    s("omap_dss_device"),
                    s("ops"),
                    Some(s("omap_dss_device::ops"))
                ),
            ]
        );
        assert_eq!(
            calls(&f),
            [(Some(s("omap_dss_device.ops.dpi")), s("connect"), 10)]
        );
    }

    #[test]
    fn inside_a_named_anonymous_union_the_enclosing_struct_keeps_its_name() {
        // The review's cases: `struct A *parent` inside `u` was renamed `A::u`, and `.u.f =
        // myfn` registered in `A.f`, not in `A::u.f` where `p->u.f(1)` calls.
        let src = "struct A {\n\tunion {\n\t\tstruct A *parent;\n\t\tint (*f)(int);\n\t} u;\n};\n\
                   static int myfn(int x)\n{\n\treturn x;\n}\n\
                   static struct A a = {\n\t.u.f = myfn,\n};\n\
                   int call(struct A *p)\n{\n\treturn p->u.f(1) + p->u.parent->u.f(2);\n}\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(
            owners(&f),
            [
                (s("A::u"), s("parent"), Some(s("A"))),
                (s("A::u"), s("f"), None),
                (s("A"), s("u"), Some(s("A::u"))),
            ]
        );
        assert_eq!(regs(&f), [(s("A.u"), s("f"), s("myfn"), 12)]);
        assert_eq!(
            calls(&f),
            [
                (Some(s("A.u")), s("f"), 16),
                (Some(s("A.u.parent.u")), s("f"), 16)
            ]
        );
    }

    #[test]
    fn a_calls_result_is_typed_by_its_function_or_by_its_type_argument() {
        let src = "static int f(struct work_struct *w, struct crypto_aead *tfm)\n{\n\
                   \tcrypto_aead_alg(tfm)->decrypt(tfm);\n\
                   \tcontainer_of(w, struct foo_dev, work)->ops->reset(w);\n\
                   \tlist_first_entry(&w->list, struct foo_dev, node)->ops->stop(w);\n\
                   \tw->ops->get(w)->put(w);\n\
                   \t((struct bar *)w)->go(w);\n\
                   \treturn 0;\n}\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(
            calls(&f),
            [
                (Some(s("crypto_aead_alg()")), s("decrypt"), 3),
                (Some(s("foo_dev.ops")), s("reset"), 4),
                (Some(s("foo_dev.ops")), s("stop"), 5),
                (Some(s("work_struct.ops")), s("get"), 6),
                (None, s("put"), 6),
                (None, s("go"), 7),
            ]
        );
    }

    #[test]
    fn comments_strings_and_preprocessor_lines_are_skipped() {
        let src = "/* a->b(c) */\n#define X(p) p->q(1)\nvoid f(struct s *p)\n{\n\
                   \t// p->c(1)\n\tputs(\"p->d(1)\");\n\tp->e(2);\n}\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(calls(&f), [(Some(s("s")), s("e"), 7)]);
    }

    #[test]
    fn an_unclosed_quote_does_not_shift_the_lines_after_it() {
        // `don't` in a comment-like line of code: the quote is never closed; its newline was
        // swallowed with it, and every later fact of the file was a line early.
        let src = "#if 0\nthis don't build\n#endif\nvoid f(struct s *p)\n{\n\tp->e(1);\n}\n";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(calls(&f), [(Some(s("s")), s("e"), 6)]);
    }

    #[test]
    fn a_directive_after_a_line_comment_is_skipped() {
        // The line after a `//` comment starts a line: its `#define` was read as code.
        let src = "void f(struct s *p)
{
	int a = 0; // note
#define X(q) q->cb(q)
                   	p->e(a);
}
";
        let f = facts(src.as_bytes(), &no_macros);
        assert_eq!(calls(&f), [(Some(s("s")), s("e"), 5)]);
    }
}
