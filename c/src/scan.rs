//! knav's own C scanner: identifier occurrences, `#define`s and the guard stack of one file.
//!
//! The scanner reads raw bytes (a memory-mapped file) once, front to back. It skips comments,
//! string and character literals, numbers and C keywords, and reports every other identifier
//! with its line, column and a role it can see locally: a call (the name is followed by `(`),
//! an export (the argument of `EXPORT_SYMBOL*(…)`), a macro definition (`#define NAME`), or a
//! plain reference. Whether an occurrence is *the* definition or a declaration is decided later
//! against ctags's definitions. Preprocessor conditionals feed a [`GuardStack`]; unbalanced
//! directives are reported, never fatal. Bad UTF-8 is irrelevant: identifiers are ASCII.

use knav_ctags::macros::MacroTable;

use crate::guard::{Directive, GuardStack, Guards};

mod include_guard;
mod opaque;
pub(crate) mod swar;
mod toplevel;

use include_guard::IncludeGuard;
use opaque::{Opaque, PpLine};
pub use toplevel::FileScopeFunction;
use toplevel::TopLevel;

/// What an occurrence does, as far as the scanner can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Role {
    /// Any other mention.
    Ref = 0,
    /// The name is followed by `(`.
    Call = 1,
    /// The argument of an `EXPORT_SYMBOL*(…)` line.
    Export = 2,
    /// The name of a `#define`.
    MacroDef = 3,
}

impl Role {
    /// The role from its stored 2-bit value.
    pub fn from_bits(v: u8) -> Role {
        match v & 3 {
            1 => Role::Call,
            2 => Role::Export,
            3 => Role::MacroDef,
            _ => Role::Ref,
        }
    }
}

/// One identifier occurrence. The name is `src[start..start + len]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occurrence {
    /// Byte offset of the name in the file.
    pub start: u32,
    /// Length of the name in bytes.
    pub len: u16,
    /// 1-based line.
    pub line: u32,
    /// 1-based byte column.
    pub col: u32,
    /// What the occurrence does.
    pub role: Role,
}

/// One `#define`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroDef {
    /// Byte offset of the name.
    pub start: u32,
    /// Length of the name.
    pub len: u16,
    /// Line of the `#define`.
    pub line: u32,
    /// Last line (after `\` continuations).
    pub end_line: u32,
    /// The parameter list of a function-like macro, e.g. `(a,b)`.
    pub signature: Option<String>,
}

/// Everything the scanner learned about one file.
#[derive(Debug, Default)]
pub struct FileScan {
    /// Identifier occurrences in file order.
    pub occurrences: Vec<Occurrence>,
    /// `#define`s in file order.
    pub macros: Vec<MacroDef>,
    /// The guard of every line.
    pub guards: Guards,
    /// True when the file has anything outside preprocessor lines and comments. A file
    /// without (a register header of `#define`s) needs no ctags run.
    pub has_code: bool,
    /// Number of lines.
    pub lines: u32,
    /// Byte offset of line `k * LINE_MARK_STRIDE + 1` at index `k - 1`: where a reader of one
    /// line can start instead of at the top of the file.
    pub line_marks: Vec<u32>,
    /// Indices into `occurrences` of calls to definition-making kernel macros
    /// (`SYSCALL_DEFINE3(…)`, `DEFINE_MUTEX(…)`) and of `EXPORT_TRACEPOINT_SYMBOL*(…)` outside
    /// preprocessor lines.
    pub invocations: Vec<u32>,
    /// Indices into `occurrences` of the other names followed by `(` at file scope: where a
    /// macro learned from its `#define` ([`crate::definers`]) may define names.
    pub file_scope_calls: Vec<u32>,
    /// Byte ranges, in file order, where ctags can find no definition: the insides of
    /// function bodies and initializers (`) {…}`, `= {…}`) with no unbalanced conditional and
    /// no `typedef`, `extern` or `struct`/`union`/`enum` body in them (see the `opaque`
    /// module), the text of comments outside those, and preprocessor lines but conditionals
    /// (not one on which a comment begins that ends on a later line).
    pub opaque: Vec<(u32, u32)>,
    /// Byte offsets, in file order, where the text ctags reads needs a `;`: after a macro
    /// invocation that begins a declaration and is followed by another with nothing between
    /// (see the `toplevel` module).
    pub ctags_semicolons: Vec<u32>,
    /// The function definitions at file scope, `TYPE name(…) {…}`, in file order: what cscope
    /// would report, for the definitions ctags misses.
    pub functions: Vec<FileScopeFunction>,
}

/// Longest identifier indexed; a longer one (no C code has one) is left out with a warning.
pub const MAX_IDENTIFIER_BYTES: usize = 1024;

/// Longest `#define` parameter list kept as its signature; a longer one is cut, the cut stated.
pub const MAX_SIGNATURE_BYTES: usize = 1024;

/// Lines between two [`FileScan::line_marks`].
pub const LINE_MARK_STRIDE: u32 = 64;

/// The line mark of `marks` ([`FileScan::line_marks`]) at or before `line`: `(its line, its
/// byte offset)`, `(1, 0)` before the first mark.
pub fn mark_before(marks: &[u32], line: u32) -> (u32, u64) {
    let k = ((line.max(1) - 1) / LINE_MARK_STRIDE) as usize;
    match k.checked_sub(1).and_then(|i| marks.get(i)) {
        Some(&m) => (k as u32 * LINE_MARK_STRIDE + 1, m as u64),
        None => (1, 0),
    }
}

/// Scans one file.
pub fn scan(src: &[u8]) -> FileScan {
    // Sized once rather than grown by doubling: the kernel has an identifier every 29 bytes,
    // and a `#define` every 230 (a guess only: the macros' room stops at 16 Ki, past which the
    // vector grows as it must).
    let mut out = FileScan::default();
    out.occurrences.reserve(src.len() / 32);
    out.macros.reserve((src.len() / 256).min(1 << 14));
    let mut s = Scanner {
        src,
        i: 0,
        line: 1,
        line_start: 0,
        out,
        guards: GuardStack::default(),
        pending_export: false,
        include_guard: IncludeGuard::default(),
        opaque: Opaque::default(),
        declarator: false,
        initializer: false,
        top: TopLevel::default(),
    };
    s.run();
    s.out.guards = s.guards.finish(s.include_guard.closed_at_end());
    s.out.opaque = s.opaque.finish();
    s.out.ctags_semicolons = std::mem::take(&mut s.top.semicolons);
    s.out.functions = std::mem::take(&mut s.top.functions);
    s.out.lines = if src.last() == Some(&b'\n') || src.is_empty() {
        s.line - 1
    } else {
        s.line
    };
    // A `#define` whose last line ends in `\` at the end of the file continues onto no line.
    let last = s.out.lines;
    for m in &mut s.out.macros {
        m.end_line = m.end_line.min(last).max(m.line);
    }
    s.out
}

struct Scanner<'a> {
    src: &'a [u8],
    i: usize,
    line: u32,
    line_start: usize,
    out: FileScan,
    guards: GuardStack,
    pending_export: bool,
    include_guard: IncludeGuard,
    opaque: Opaque,
    /// The last code token can end the type of a declarator (`int`, `u32`, `struct s *`): a
    /// name after it followed by `(` at file scope is declared (`INDIRECT_CALLABLE_DECLARE(int
    /// tcp_v4_rcv(struct sk_buff *));`), not called.
    declarator: bool,
    /// Inside a file-scope initializer (after `=`, up to `;`): names there are used.
    initializer: bool,
    /// The declaration being read at file scope.
    top: TopLevel,
}

/// Bits of [`CLASS`].
const IDENT: u8 = 1;
const IDENT_START: u8 = 2;
const BLANK: u8 = 4;

/// The class of every byte: one load instead of a chain of range checks in the hot loops.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphabetic() || c == b'_' {
            t[b] = IDENT | IDENT_START;
        } else if c.is_ascii_digit() {
            t[b] = IDENT;
        } else if matches!(c, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c') {
            t[b] = BLANK;
        }
        b += 1;
    }
    t
};

/// True for the bytes an identifier starts with: ASCII letters and `_`.
#[inline]
pub fn is_ident_start(b: u8) -> bool {
    CLASS[b as usize] & IDENT_START != 0
}

/// True for the bytes of identifiers: ASCII letters, digits and `_`.
#[inline]
pub fn is_ident(b: u8) -> bool {
    CLASS[b as usize] & IDENT != 0
}

#[inline]
fn is_blank(b: u8) -> bool {
    CLASS[b as usize] & BLANK != 0
}

/// C keywords and compiler extensions: never worth indexing.
const KEYWORDS: &[&[u8]] = &[
    b"auto",
    b"break",
    b"case",
    b"char",
    b"const",
    b"continue",
    b"default",
    b"do",
    b"double",
    b"else",
    b"enum",
    b"extern",
    b"float",
    b"for",
    b"goto",
    b"if",
    b"inline",
    b"int",
    b"long",
    b"register",
    b"restrict",
    b"return",
    b"short",
    b"signed",
    b"sizeof",
    b"static",
    b"struct",
    b"switch",
    b"typedef",
    b"union",
    b"unsigned",
    b"void",
    b"volatile",
    b"while",
    b"_Bool",
    b"_Complex",
    b"_Alignas",
    b"_Alignof",
    b"_Atomic",
    b"_Generic",
    b"_Noreturn",
    b"_Static_assert",
    b"_Thread_local",
    b"asm",
    b"__asm",
    b"__asm__",
    b"typeof",
    b"__typeof",
    b"__typeof__",
    b"__attribute__",
    b"__inline",
    b"__inline__",
    b"__volatile__",
    b"__restrict",
    b"__restrict__",
    b"__signed__",
    b"__extension__",
    b"__alignof__",
];

const KEYWORD_SLOTS: usize = 512;

/// A hash of a name's length and first, second and last bytes: it tells the keywords apart
/// and costs the same for any name (it runs on every identifier of the tree).
const fn keyword_hash(name: &[u8]) -> usize {
    let n = name.len();
    let h = (n as u32)
        ^ ((name[0] as u32) << 4)
        ^ ((name[1] as u32) << 9)
        ^ ((name[n - 1] as u32) << 14);
    (h.wrapping_mul(0x9E37_79B1) >> 23) as usize
}

/// An open-addressing table of [`KEYWORDS`]: slot → index + 1, 0 for empty.
static KEYWORD_TABLE: [u8; KEYWORD_SLOTS] = {
    let mut t = [0u8; KEYWORD_SLOTS];
    let mut i = 0;
    while i < KEYWORDS.len() {
        let mut slot = keyword_hash(KEYWORDS[i]);
        while t[slot] != 0 {
            slot = (slot + 1) % KEYWORD_SLOTS;
        }
        t[slot] = i as u8 + 1;
        i += 1;
    }
    t
};

/// True for a C keyword or compiler extension keyword. One hash and at most a few compares.
pub fn is_keyword(name: &[u8]) -> bool {
    if name.len() < 2 || name.len() > 14 {
        return false;
    }
    let mut slot = keyword_hash(name);
    loop {
        match KEYWORD_TABLE[slot] {
            0 => return false,
            i if KEYWORDS[i as usize - 1] == name => return true,
            _ => slot = (slot + 1) % KEYWORD_SLOTS,
        }
    }
}

/// Names whose parenthesised argument is an exported symbol (`EXPORT_TRACEPOINT_SYMBOL(x)`
/// exports `trace_x`'s tracepoint, not `x`: see [`crate::macrodefs`]).
fn is_export_macro(name: &[u8]) -> bool {
    name.starts_with(b"EXPORT_SYMBOL")
        || name.starts_with(b"EXPORT_PER_CPU_SYMBOL")
        || name.starts_with(b"EXPORT_STATIC_CALL")
        || name == b"ACPI_EXPORT_SYMBOL"
}

/// Type keywords: a name after one (or after `*`s that follow one) is being declared.
fn is_type_keyword(name: &[u8]) -> bool {
    matches!(
        name,
        b"void"
            | b"char"
            | b"short"
            | b"int"
            | b"long"
            | b"float"
            | b"double"
            | b"signed"
            | b"unsigned"
            | b"_Bool"
            | b"_Complex"
            | b"__signed__"
    )
}

/// What a directive body's identifiers are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BodyMode {
    /// `#if`/`#elif`: references, `defined` skipped, condition text kept.
    Condition,
    /// `#define` body: references and calls.
    Define,
    /// `#undef`, `#ifdef`: references, text kept.
    Names,
}

impl<'a> Scanner<'a> {
    fn peek(&self, k: usize) -> u8 {
        *self.src.get(self.i + k).unwrap_or(&0)
    }

    fn newline_at(&mut self, pos: usize) {
        self.line += 1;
        self.line_start = pos + 1;
        if self.line % LINE_MARK_STRIDE == 1 {
            self.out.line_marks.push((pos + 1) as u32);
        }
    }

    fn run(&mut self) {
        let src = self.src;
        let n = src.len();
        let mut at_line_start = true;
        while self.i < n {
            let b = src[self.i];
            // Identifiers and blanks first, past the dispatch below: most bytes are theirs.
            if is_ident_start(b) {
                at_line_start = false;
                self.saw_code();
                self.identifier(BodyMode::Define, false);
                self.opaque.last_byte(src[self.i - 1]);
                continue;
            }
            if is_blank(b) {
                self.i += 1;
                // Spaces and tabs eight at a time; `\r`, `\v` and `\f` a byte at a time.
                loop {
                    self.i = swar::blank_end(src, self.i);
                    if self.i < n && is_blank(src[self.i]) {
                        self.i += 1;
                    } else {
                        break;
                    }
                }
                continue;
            }
            match b {
                b'\n' => {
                    self.newline_at(self.i);
                    self.i += 1;
                    at_line_start = true;
                }
                b'\\' if self.peek(1) == b'\n' => {
                    self.newline_at(self.i + 1);
                    self.i += 2;
                }
                b'\\' if self.peek(1) == b'\r' && self.peek(2) == b'\n' => {
                    self.newline_at(self.i + 2);
                    self.i += 3;
                }
                b'/' if self.peek(1) == b'*' => {
                    let start = self.i;
                    self.block_comment();
                    if self.src[..self.i].ends_with(b"*/") {
                        self.opaque.hide(start + 2, self.i - 2);
                    }
                }
                b'/' if self.peek(1) == b'/' => {
                    let start = self.i;
                    self.skip_logical_line();
                    self.opaque.hide(start + 2, self.i);
                }
                b'#' if at_line_start => {
                    self.directive();
                    at_line_start = true;
                }
                _ => {
                    at_line_start = false;
                    self.code_token();
                }
            }
        }
    }

    fn saw_code(&mut self) {
        self.out.has_code = true;
        self.include_guard.code();
    }

    /// One token outside directives that is not an identifier ([`Scanner::run`] takes those).
    fn code_token(&mut self) {
        self.saw_code();
        let b = self.src[self.i];
        let depth = self.opaque.depth();
        let number = b.is_ascii_digit() || (b == b'.' && self.peek(1).is_ascii_digit());
        if depth == 0 && (number || b == b'"' || b == b'\'') {
            self.top.other();
        }
        match b {
            b'"' | b'\'' => self.literal(),
            _ if number => self.number(),
            _ => {
                self.top.punct(b, self.i, self.line, depth);
                if b == b';' {
                    self.pending_export = false;
                    self.initializer = false;
                } else if b == b'=' && self.opaque.depth() == 0 {
                    self.initializer = true;
                }
                self.opaque.punct(b, self.i);
                self.i += 1;
            }
        }
        if b != b'*' {
            self.declarator = false;
        }
        self.opaque.last_byte(self.src[self.i - 1]);
    }

    fn block_comment(&mut self) {
        let start = self.i + 2;
        let end = crate::lex::block_comment_end(self.src, self.i);
        for nl in memchr::memchr_iter(b'\n', &self.src[start..end]) {
            self.newline_at(start + nl);
        }
        self.i = end;
    }

    /// A string or character literal; ends at its closing quote or, unterminated, at the line end.
    fn literal(&mut self) {
        let (end, _) = crate::lex::literal_end(self.src, self.i);
        // Newlines inside are continuations (an unclosed literal ends at its newline).
        for nl in memchr::memchr_iter(b'\n', &self.src[self.i..end]) {
            self.newline_at(self.i + nl);
        }
        self.i = end;
    }

    fn number(&mut self) {
        let n = self.src.len();
        self.i += 1;
        while self.i < n {
            let c = self.src[self.i];
            let exponent_sign = (c == b'+' || c == b'-')
                && matches!(self.src[self.i - 1], b'e' | b'E' | b'p' | b'P');
            if is_ident(c) || c == b'.' || exponent_sign {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn read_ident(&mut self) -> (usize, usize) {
        let start = self.i;
        self.i = swar::ident_end(self.src, start + 1);
        (start, self.i)
    }

    /// True when the next non-blank byte on this line is `(`.
    fn followed_by_paren(&self) -> bool {
        let mut j = self.i;
        while j < self.src.len() && matches!(self.src[j], b' ' | b'\t') {
            j += 1;
        }
        self.src.get(j) == Some(&b'(')
    }

    #[inline]
    fn push(&mut self, start: usize, end: usize, role: Role) {
        let len = end - start;
        if len > MAX_IDENTIFIER_BYTES || start > u32::MAX as usize {
            self.too_long(len);
            return;
        }
        self.out.occurrences.push(Occurrence {
            start: start as u32,
            len: len as u16,
            line: self.line,
            col: (start - self.line_start + 1) as u32,
            role,
        });
    }

    /// An identifier left out: warned of when it is too long (one past 4 GiB is not).
    #[cold]
    fn too_long(&mut self, len: usize) {
        if len > MAX_IDENTIFIER_BYTES {
            self.guards.warnings.push(format!(
                "{}: identifier of {len} bytes not indexed (over {MAX_IDENTIFIER_BYTES})",
                self.line
            ));
        }
    }

    /// An identifier at `self.i`; `in_directive` disables export tracking.
    fn identifier(&mut self, mode: BodyMode, in_directive: bool) {
        let (start, end) = self.read_ident();
        let name = &self.src[start..end];
        // String prefixes: L"…", u8"…", u'…'.
        if matches!(name, b"L" | b"u" | b"U" | b"u8") && matches!(self.peek(0), b'"' | b'\'') {
            self.literal();
            self.declarator = false;
            return;
        }
        if matches!(name, b"__attribute__" | b"__attribute") {
            // `__attribute__((aligned(8)))`: attribute names are not references.
            self.skip_blanks();
            if self.peek(0) == b'(' {
                self.skip_parens(in_directive);
            }
            return;
        }
        if is_keyword(name) {
            if in_directive {
                return;
            }
            self.declarator = is_type_keyword(name);
            self.opaque.keyword(name, &self.src[self.i..]);
            if self.opaque.depth() == 0 {
                self.top.keyword(name);
            }
            return;
        }
        if !in_directive {
            self.opaque.identifier();
        }
        if mode == BodyMode::Condition && name == b"defined" {
            return;
        }
        let call = self.followed_by_paren();
        if !in_directive && self.opaque.depth() == 0 {
            let dunder = self.src[start..end].starts_with(b"__");
            self.top
                .identifier(start, end - start, self.line, call, dunder);
        }
        let maker = call
            && !in_directive
            && (MacroTable::kernel_family(name).is_some() || is_tracepoint_export(name));
        // `int f(void);` and `INDIRECT_CALLABLE_DECLARE(int f(void));` at file scope declare f.
        let declared = call
            && !in_directive
            && !maker
            && self.declarator
            && !self.initializer
            && self.opaque.depth() == 0;
        let role = if self.pending_export && !in_directive {
            self.pending_export = false;
            Role::Export
        } else if call && !declared {
            Role::Call
        } else {
            Role::Ref
        };
        if !in_directive {
            self.declarator = !call;
        }
        if call && !in_directive && is_export_macro(name) {
            self.pending_export = true;
        }
        self.push(start, end, role);
        if call && !in_directive && !maker && self.opaque.depth() == 0 {
            self.out
                .file_scope_calls
                .push(self.out.occurrences.len() as u32 - 1);
        }
        if maker {
            self.out
                .invocations
                .push(self.out.occurrences.len() as u32 - 1);
        }
    }

    /// Skips a balanced parenthesised group starting at `(`, across lines, comments and
    /// literals; an unbalanced one ends at the end of the file, or, in a directive
    /// (`in_directive`), at the end of its logical line.
    fn skip_parens(&mut self, in_directive: bool) {
        let mut depth = 0usize;
        while self.i < self.src.len() {
            match self.src[self.i] {
                b'(' => {
                    depth += 1;
                    self.i += 1;
                }
                b')' => {
                    self.i += 1;
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                b'\\' if in_directive && self.peek(1) == b'\n' => {
                    self.newline_at(self.i + 1);
                    self.i += 2;
                }
                b'\\' if in_directive && self.peek(1) == b'\r' && self.peek(2) == b'\n' => {
                    self.newline_at(self.i + 2);
                    self.i += 3;
                }
                b'\n' if in_directive => return,
                b'\n' => {
                    self.newline_at(self.i);
                    self.i += 1;
                }
                b'"' | b'\'' => self.literal(),
                b'/' if self.peek(1) == b'*' => self.block_comment(),
                _ => self.i += 1,
            }
        }
    }

    fn skip_blanks(&mut self) {
        while self.i < self.src.len() {
            match self.src[self.i] {
                b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => self.i += 1,
                b'\\' if self.peek(1) == b'\n' => {
                    self.newline_at(self.i + 1);
                    self.i += 2;
                }
                b'/' if self.peek(1) == b'*' => self.block_comment(),
                _ => return,
            }
        }
    }

    /// Skips to the end of a logical line (not consuming the newline): the rest of a directive,
    /// or a `//` comment, both continued by a trailing backslash.
    fn skip_logical_line(&mut self) {
        let end = crate::lex::line_comment_end(self.src, self.i);
        // Newlines before `end` are continued ones.
        for nl in memchr::memchr_iter(b'\n', &self.src[self.i..end]) {
            self.newline_at(self.i + nl);
        }
        self.i = end;
    }

    /// Lexes a directive body up to the end of its logical line, reporting identifiers, and
    /// returns its text with comments removed and blanks collapsed.
    fn directive_body(&mut self, mode: BodyMode) -> String {
        let mut text = String::new();
        let n = self.src.len();
        let mut blank = false;
        while self.i < n {
            let b = self.src[self.i];
            match b {
                b'\n' => break,
                b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => {
                    blank = true;
                    self.i += 1;
                    continue;
                }
                b'\\' if self.peek(1) == b'\n' => {
                    self.newline_at(self.i + 1);
                    self.i += 2;
                    blank = true;
                    continue;
                }
                b'\\' if self.peek(1) == b'\r' && self.peek(2) == b'\n' => {
                    self.newline_at(self.i + 2);
                    self.i += 3;
                    blank = true;
                    continue;
                }
                b'/' if self.peek(1) == b'*' => {
                    self.block_comment();
                    blank = true;
                    continue;
                }
                b'/' if self.peek(1) == b'/' => {
                    self.skip_logical_line();
                    break;
                }
                _ => {}
            }
            if blank && !text.is_empty() {
                text.push(' ');
            }
            blank = false;
            let start = self.i;
            match b {
                b'"' | b'\'' => self.literal(),
                b'0'..=b'9' => self.number(),
                b'.' if self.peek(1).is_ascii_digit() => self.number(),
                _ if is_ident_start(b) => self.identifier(mode, true),
                _ => self.i += 1,
            }
            if mode != BodyMode::Define {
                text.push_str(&String::from_utf8_lossy(&self.src[start..self.i]));
            }
        }
        text
    }

    fn directive(&mut self) {
        let line = self.line;
        let start = self.i;
        self.i += 1;
        self.skip_blanks();
        let word_start = self.i;
        while self.i < self.src.len() && self.src[self.i].is_ascii_alphabetic() {
            self.i += 1;
        }
        let word = &self.src[word_start..self.i];
        let pp_line = match word {
            b"if" | b"ifdef" | b"ifndef" => PpLine::If,
            b"elif" | b"elifdef" | b"elifndef" | b"else" => PpLine::Else,
            b"endif" => PpLine::Endif,
            _ => PpLine::Other,
        };
        self.opaque.directive(pp_line);
        self.declarator = false;
        let candidate = self.include_guard.directive(word);
        match word {
            b"ifdef" | b"ifndef" => {
                self.skip_blanks();
                let cond = self.directive_body(BodyMode::Names);
                let directive = if word == b"ifdef" {
                    Directive::Ifdef
                } else {
                    Directive::Ifndef
                };
                self.guards.open(directive, &cond, line, self.line + 1);
                if word == b"ifndef" {
                    self.include_guard.ifndef(&cond, self.out.has_code);
                }
            }
            b"if" => {
                let cond = self.directive_body(BodyMode::Condition);
                let outermost = self.guards.depth() == 0;
                self.guards.open(Directive::If, &cond, line, self.line + 1);
                if outermost && self.include_guard.if_(&cond, self.out.has_code) {
                    self.guards.mark_multi_read_guard();
                }
            }
            b"elif" => {
                let cond = self.directive_body(BodyMode::Condition);
                self.guards.elif(Directive::If, &cond, line, self.line + 1);
            }
            b"elifdef" | b"elifndef" => {
                let cond = self.directive_body(BodyMode::Names);
                let d = if word == b"elifdef" {
                    Directive::Ifdef
                } else {
                    Directive::Ifndef
                };
                self.guards.elif(d, &cond, line, self.line + 1);
            }
            b"else" => {
                self.directive_body(BodyMode::Names);
                self.guards.else_(line, self.line + 1);
            }
            b"endif" => {
                let depth = self.guards.depth();
                self.directive_body(BodyMode::Names);
                self.guards.endif(line, self.line + 1);
                self.include_guard.endif(depth, line);
            }
            b"define" => self.define(line, candidate),
            b"undef" => {
                self.directive_body(BodyMode::Names);
            }
            // #include <a/b.h>, #error text, #pragma: nothing there to index.
            _ => self.skip_logical_line(),
        }
        if pp_line == PpLine::Other {
            self.opaque.other_directive(&self.src[start..self.i], start);
        }
    }

    fn define(&mut self, line: u32, guard_candidate: Option<String>) {
        self.skip_blanks();
        if self.i >= self.src.len() || !is_ident_start(self.src[self.i]) {
            self.skip_logical_line();
            return;
        }
        let (start, end) = self.read_ident();
        if let Some(name) = guard_candidate {
            if name.as_bytes() == &self.src[start..end] && self.peek(0) != b'(' {
                self.guards.mark_include_guard();
            }
        }
        self.push(start, end, Role::MacroDef);
        let mut signature = None;
        if self.peek(0) == b'(' {
            let sig_start = self.i;
            let close = memchr::memchr2(b')', b'\n', &self.src[self.i..]).map(|k| self.i + k);
            if let Some(close) = close.filter(|c| self.src[*c] == b')') {
                let text = String::from_utf8_lossy(&self.src[sig_start..=close]);
                let mut sig = String::with_capacity(text.len());
                sig.extend(text.split_whitespace());
                if sig.len() > MAX_SIGNATURE_BYTES {
                    let mut end = MAX_SIGNATURE_BYTES - 32;
                    while !sig.is_char_boundary(end) {
                        end -= 1;
                    }
                    let more = sig.len() - end;
                    sig = format!("{} … {more} more bytes)", &sig[..end]);
                }
                signature = Some(sig);
            }
        }
        self.directive_body(BodyMode::Define);
        if end - start > MAX_IDENTIFIER_BYTES {
            return;
        }
        let def = MacroDef {
            start: start as u32,
            len: (end - start).min(u16::MAX as usize) as u16,
            line,
            end_line: self.line,
            signature,
        };
        self.out.macros.push(def);
    }
}

/// Macros whose argument names a tracepoint, not a symbol of its own.
pub fn is_tracepoint_export(name: &[u8]) -> bool {
    name.starts_with(b"EXPORT_TRACEPOINT_SYMBOL")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<(String, u32, u32, Role)> {
        let s = scan(src.as_bytes());
        s.occurrences
            .iter()
            .map(|o| {
                let name = &src[o.start as usize..o.start as usize + o.len as usize];
                (name.to_string(), o.line, o.col, o.role)
            })
            .collect()
    }

    fn just_names(src: &str) -> Vec<String> {
        names(src).into_iter().map(|n| n.0).collect()
    }

    #[test]
    fn comments_strings_and_chars_are_skipped() {
        let src = "int a; /* b c\n d */ e(\"f g\", 'h', '\\'', i); // j k\nl;";
        assert_eq!(just_names(src), ["a", "e", "i", "l"]);
        let found = names(src);
        assert_eq!(found[1], ("e".into(), 2, 7, Role::Call));
        assert_eq!(found[3], ("l".into(), 3, 1, Role::Ref));
    }

    #[test]
    fn string_with_escaped_quote_and_prefixes() {
        let src = "x = \"a \\\" vfs_read\" y; z = L\"w\"; u8'q';";
        assert_eq!(just_names(src), ["x", "y", "z"]);
    }

    #[test]
    fn every_keyword_is_found_and_near_misses_are_not() {
        for k in KEYWORDS {
            assert!(is_keyword(k), "{}", String::from_utf8_lossy(k));
        }
        for w in [
            &b"int_"[..],
            b"in",
            b"structs",
            b"_",
            b"x",
            b"vfs_read",
            b"__attribute",
        ] {
            assert!(!is_keyword(w), "{}", String::from_utf8_lossy(w));
        }
    }

    proptest::proptest! {
        #[test]
        fn a_comment_ends_where_a_substring_search_finds_its_end(text in "[/* a\n]{0,24}") {
            let src = format!("/*{text}").into_bytes();
            let reference = memchr::memmem::find(&src[2..], b"*/").map_or(src.len(), |k| k + 4);
            proptest::prop_assert_eq!(crate::lex::block_comment_end(&src, 0), reference);
        }
    }

    #[test]
    fn attribute_arguments_are_not_references() {
        let src = "int x __attribute__((aligned(8),\n section(\".data\"))) = y;\nz();";
        assert_eq!(
            names(src),
            [
                ("x".into(), 1, 5, Role::Ref),
                ("y".into(), 2, 23, Role::Ref),
                ("z".into(), 3, 1, Role::Call),
            ]
        );
    }

    #[test]
    fn numbers_and_keywords_are_skipped() {
        let src = "static unsigned long x = 0x1fULL + 1e+5 + .5f; return sizeof(y);";
        assert_eq!(just_names(src), ["x", "y"]);
    }

    #[test]
    fn line_continuations_keep_line_numbers() {
        let src = "#define M(a) \\\n\tfoo(a) \\\n\t+ bar\nbaz;\n";
        let found = names(src);
        assert_eq!(
            found,
            [
                ("M".into(), 1, 9, Role::MacroDef),
                ("a".into(), 1, 11, Role::Ref),
                ("foo".into(), 2, 2, Role::Call),
                ("a".into(), 2, 6, Role::Ref),
                ("bar".into(), 3, 4, Role::Ref),
                ("baz".into(), 4, 1, Role::Ref),
            ]
        );
        let s = scan(src.as_bytes());
        assert_eq!(s.macros.len(), 1);
        assert_eq!((s.macros[0].line, s.macros[0].end_line), (1, 3));
        assert_eq!(s.macros[0].signature.as_deref(), Some("(a)"));
        assert!(s.has_code, "baz is code");
    }

    #[test]
    fn a_comment_continued_by_backslash_swallows_the_next_line() {
        assert_eq!(just_names("// a \\\nb\nc"), ["c"]);
    }

    #[test]
    fn a_define_continued_past_the_last_line_ends_on_the_last_line() {
        // Found by tests/scan_properties.rs: end_line was 3 in a file of 2 lines.
        let s = scan(b"#if A\n#define M(a, b) a ## b \\\n");
        assert_eq!(s.lines, 2);
        assert_eq!((s.macros[0].line, s.macros[0].end_line), (2, 2));
    }

    #[test]
    fn a_prototype_at_file_scope_is_not_a_call() {
        let src = "INDIRECT_CALLABLE_DECLARE(int tcp_v4_rcv(struct sk_buff *));\n\
                   struct sk_buff *tcp4_gro(struct list_head *);\n\
                   int __attribute__((weak)) weak_one(void);\n\
                   static int x = a * used_in_init(3);\n\
                   static DEFINE_MUTEX(m);\n\
                   int f(void) { return vfs_read(1); }\n\
                   u32 g(void)\n{\n\tu32 y = (u32) h(2);\n\treturn k(y) * m2(y);\n}\n";
        let role = |name: &str| {
            names(src)
                .into_iter()
                .find(|n| n.0 == name)
                .map(|n| n.3)
                .unwrap()
        };
        for declared in ["tcp_v4_rcv", "tcp4_gro", "weak_one", "f", "g"] {
            assert_eq!(role(declared), Role::Ref, "{declared}");
        }
        for called in [
            "INDIRECT_CALLABLE_DECLARE",
            "used_in_init",
            "DEFINE_MUTEX",
            "vfs_read",
            "h",
            "k",
            "m2",
        ] {
            assert_eq!(role(called), Role::Call, "{called}");
        }
    }

    #[test]
    fn a_tracepoint_export_does_not_export_its_argument() {
        let src = "EXPORT_TRACEPOINT_SYMBOL(kmalloc);\nEXPORT_TRACEPOINT_SYMBOL_GPL(kfree);\n";
        let found = names(src);
        assert_eq!(found[1], ("kmalloc".into(), 1, 26, Role::Ref));
        assert_eq!(found[3], ("kfree".into(), 2, 30, Role::Ref));
        assert_eq!(scan(src.as_bytes()).invocations, [0, 2]);
    }

    #[test]
    fn export_role_and_includes() {
        let src = "#include <linux/fs.h>\nEXPORT_SYMBOL_GPL(vfs_read);\nEXPORT_SYMBOL(x);";
        let found = names(src);
        assert_eq!(
            found,
            [
                ("EXPORT_SYMBOL_GPL".into(), 2, 1, Role::Call),
                ("vfs_read".into(), 2, 19, Role::Export),
                ("EXPORT_SYMBOL".into(), 3, 1, Role::Call),
                ("x".into(), 3, 15, Role::Export),
            ]
        );
    }

    #[test]
    fn line_marks_point_at_every_64th_line_across_comments_and_continuations() {
        let mut src = String::from("/* a comment\nover lines */\n#define X \\\n 1\n");
        while src.lines().count() < 200 {
            src.push_str("int v;\n");
        }
        let s = scan(src.as_bytes());
        let starts: Vec<usize> = std::iter::once(0)
            .chain(src.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        assert_eq!(
            s.line_marks,
            [starts[64] as u32, starts[128] as u32, starts[192] as u32],
            "lines 65, 129 and 193"
        );
    }

    #[test]
    fn macro_only_header_has_no_code() {
        let src =
            "/* regs */\n#ifndef H\n#define H\n#define A 1\n#define B(x) ((x) << 2)\n#endif\n";
        let s = scan(src.as_bytes());
        assert!(!s.has_code);
        assert_eq!(s.macros.len(), 3);
        assert!(s.guards.transitions.is_empty(), "include guard is hidden");
        assert_eq!(s.lines, 6);
    }

    #[test]
    fn guards_nesting_elif_else() {
        let src = "\
#ifdef CONFIG_A
a1;
#if X > 1
a2;
#elif defined(Y)
a3;
#elif Z
a4;
#else
a5;
#endif
#else
a6;
#endif
a7;
#ifndef CONFIG_B
b1;
#else
b2;
#endif
";
        let s = scan(src.as_bytes());
        let g = &s.guards;
        assert!(g.warnings.is_empty(), "{:?}", g.warnings);
        let at = |l| g.at(l).to_vec();
        assert_eq!(at(2), ["CONFIG_A"]);
        assert_eq!(at(4), ["CONFIG_A", "X > 1"]);
        assert_eq!(at(6), ["CONFIG_A", "!(X > 1) && (defined(Y))"]);
        assert_eq!(at(8), ["CONFIG_A", "!(X > 1) && !(defined(Y)) && (Z)"]);
        assert_eq!(at(10), ["CONFIG_A", "!(X > 1) && !(defined(Y)) && !(Z)"]);
        assert_eq!(at(13), ["!CONFIG_A"]);
        assert!(at(15).is_empty());
        assert_eq!(at(17), ["!CONFIG_B"]);
        assert_eq!(at(19), ["CONFIG_B"]);
        // Identifiers inside conditions are references; `defined` is not.
        let n = just_names(src);
        assert!(n.contains(&"Y".to_string()) && !n.contains(&"defined".to_string()));
    }

    #[test]
    fn unbalanced_directives_are_reported_not_fatal() {
        let src = "#endif\na;\n#if A\nb;\n#else\n#else\nc;\n";
        let s = scan(src.as_bytes());
        let w = &s.guards.warnings;
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].starts_with("1: #endif without #if"));
        assert!(w[1].starts_with("6: second #else"));
        assert!(w[2].starts_with("3: #if without #endif"));
        assert_eq!(s.guards.at(4), ["A"]);
        assert_eq!(s.guards.at(7), ["!(A)"]);
    }

    #[test]
    fn if_zero_is_a_guard_and_its_body_still_scanned() {
        let src = "#if 0\ndead();\n#endif\nlive();\n";
        let s = scan(src.as_bytes());
        assert_eq!(s.guards.at(2), ["0"]);
        assert!(s.guards.at(4).is_empty());
        assert_eq!(just_names(src), ["dead", "live"]);
    }

    #[test]
    fn a_leading_ifndef_that_is_not_an_include_guard_stays() {
        // `#ifndef pr_fmt` / `#define pr_fmt` followed by code: a real condition.
        let src = "#ifndef pr_fmt\n#define pr_fmt(fmt) fmt\n#endif\nint x;\n";
        let s = scan(src.as_bytes());
        assert_eq!(s.guards.at(2), ["!pr_fmt"]);
        let src = "#ifndef H\n#define H\nint y;\n#endif\nint x;\n";
        let s = scan(src.as_bytes());
        assert_eq!(
            s.guards.at(3),
            ["!H"],
            "code after the #endif: not an include guard"
        );
    }

    #[test]
    fn include_guard_with_code_inside_is_hidden() {
        let src = "/* c */\n#ifndef _H\n#define _H\n#ifdef CONFIG_X\nint a;\n#endif\nint b;\n#endif /* _H */\n";
        let s = scan(src.as_bytes());
        assert_eq!(s.guards.at(5), ["CONFIG_X"]);
        assert!(s.guards.at(7).is_empty());
    }

    #[test]
    fn a_trace_headers_multi_read_guard_is_not_shown_on_its_events() {
        // include/trace/events/sched.h: every TRACE_EVENT showed
        // `!defined(_TRACE_SCHED_H) || defined(TRACE_HEADER_MULTI_READ)` as its guard.
        let src = "/* SPDX */\n#undef TRACE_SYSTEM\n#define TRACE_SYSTEM sched\n\n\
                   #if !defined(_TRACE_SCHED_H) || defined(TRACE_HEADER_MULTI_READ)\n\
                   #define _TRACE_SCHED_H\n\n#include <linux/tracepoint.h>\n\n\
                   TRACE_EVENT(sched_switch,\n\tTP_PROTO(bool preempt),\n\tTP_ARGS(preempt));\n\
                   #ifdef CONFIG_SCHEDSTATS\nDEFINE_EVENT(sched_stat, sched_stat_wait);\n#endif\n\
                   #endif /* _TRACE_SCHED_H */\n\n/* This part must be outside protection */\n\
                   #include <trace/define_trace.h>\n";
        let s = scan(src.as_bytes());
        assert!(s.guards.warnings.is_empty(), "{:?}", s.guards.warnings);
        assert!(s.guards.at(10).is_empty(), "{:?}", s.guards.at(10));
        assert_eq!(s.guards.at(14), ["CONFIG_SCHEDSTATS"]);
        assert!(s.guards.transitions.iter().all(|t| t.1.len() <= 1));
        // The same condition after code, or another `||`, is a real condition.
        for src in [
            "int x;\n#if !defined(_T_H) || defined(TRACE_HEADER_MULTI_READ)\ny;\n#endif\n",
            "#if !defined(_T_H) || defined(CONFIG_X)\ny;\n#endif\n",
        ] {
            assert_eq!(scan(src.as_bytes()).guards.at(3).len(), 1, "{src}");
        }
    }

    #[test]
    fn an_include_guard_written_as_if_not_defined_is_hidden() {
        let src = "#if !defined(_ASM_X_H)\n#define _ASM_X_H\nint a;\n#endif\n";
        assert!(scan(src.as_bytes()).guards.at(3).is_empty());
        let src = "#if !defined(_ASM_X_H)\n#define OTHER\nint a;\n#endif\n";
        assert_eq!(scan(src.as_bytes()).guards.at(3), ["!defined(_ASM_X_H)"]);
    }

    #[test]
    fn an_identifier_over_the_limit_is_left_out_with_a_warning() {
        let long = "a".repeat(MAX_IDENTIFIER_BYTES + 1);
        let src = format!("int ok;\nint {long};\n#define {long} 1\n");
        let s = scan(src.as_bytes());
        assert_eq!(just_names(&src), ["ok"]);
        assert!(s.macros.is_empty());
        assert_eq!(s.guards.warnings.len(), 2, "{:?}", s.guards.warnings);
        assert!(s.guards.warnings[0].starts_with("2: identifier of 1025 bytes not indexed"));
        let fits = "b".repeat(MAX_IDENTIFIER_BYTES);
        assert_eq!(just_names(&format!("int {fits};")), [fits]);
    }

    #[test]
    fn a_define_with_a_huge_parameter_list_keeps_a_cut_signature() {
        let params: Vec<String> = (0..20_000).map(|i| format!("p{i}")).collect();
        let src = format!("#define M({}) 0\n", params.join(", "));
        let s = scan(src.as_bytes());
        let sig = s.macros[0].signature.as_deref().unwrap_or("");
        assert!(sig.len() <= MAX_SIGNATURE_BYTES, "{}", sig.len());
        assert!(sig.starts_with("(p0,p1,p2,"));
        assert!(sig.ends_with("more bytes)"), "{}", &sig[sig.len() - 30..]);
        let s = scan(b"#define M(a, b) 0\n");
        assert_eq!(s.macros[0].signature.as_deref(), Some("(a,b)"));
    }

    #[test]
    fn continued_condition_is_joined() {
        let src = "#if defined(A) && \\\n    defined(B) /* c */\nx;\n#endif\n";
        let s = scan(src.as_bytes());
        assert_eq!(s.guards.at(3), ["defined(A) && defined(B)"]);
    }

    #[test]
    fn crlf_and_binary_garbage_do_not_panic() {
        let src = b"int a;\r\n#if X\r\nb;\r\n#endif\r\n\xff\xfe\x00 c \"unterminated\n'x";
        let s = scan(src);
        assert_eq!(s.guards.at(3), ["X"]);
        assert!(s.occurrences.iter().any(|o| o.line == 5));
    }

    /// The text of each opaque span of `src`.
    fn opaque(src: &str) -> Vec<&str> {
        scan(src.as_bytes())
            .opaque
            .iter()
            .map(|&(a, b)| &src[a as usize..b as usize])
            .collect()
    }

    #[test]
    fn function_bodies_and_initializers_are_opaque_and_tag_bodies_are_not() {
        let src = "struct s {\n\tint member_one;\n};\n\
                   static int f(int a)\n{\n\treturn a + 1;\n}\n\
                   static const struct s v = {\n\t.member_one = 1,\n};\n\
                   typedef struct __attribute__((packed)) {\n\tint packed_one;\n} p_t;\n\
                   struct s *g(struct s *x) {\n\treturn x;\n}\n\
                   enum e h(void) {\n\treturn 0;\n}\n\
                   enum e { A, B };\n";
        assert_eq!(
            opaque(src),
            [
                "\n\treturn a + 1;\n",
                "\n\t.member_one = 1,\n",
                "\n\treturn x;\n",
                "\n\treturn 0;\n"
            ]
        );
    }

    #[test]
    fn a_body_ctags_must_see_is_not_opaque() {
        // A local tagged type, a typedef, an extern.
        for body in [
            "\tstruct local { int m; } l;\n",
            "\tenum\n\t{ LOCAL_A } v;\n",
            "\ttypedef int local_t;\n",
            "\textern int somewhere_else;\n",
        ] {
            let src = format!("void f(void)\n{{\n{body}}}\nint g(void)\n{{\n\treturn 1;\n}}\n");
            assert_eq!(opaque(&src), ["\n\treturn 1;\n"], "{body:?}");
        }
        // Plain uses of tags are fine.
        let src = "void f(void)\n{\n\tstruct s *p = (struct s){ 0 };\n\tsizeof(union u);\n}\n";
        assert_eq!(opaque(src).len(), 1);
    }

    #[test]
    fn after_a_stray_close_brace_nothing_is_opaque() {
        let src = "#ifdef A\nvoid f(void) {\n#else\nvoid f(int x) {\n#endif\n}\n}\n}\n\
                   int g(void)\n{\n\treturn 1;\n}\n";
        assert!(opaque(src).is_empty());
    }

    #[test]
    fn a_file_of_hashes_does_not_reserve_a_macro_for_each() {
        // The room reserved for macros is a guess from the `#`s; a file of them once asked for
        // a 40-byte record each (gigabytes for a 64 MiB file).
        let src = vec![b'#'; 1 << 20];
        let scanned = scan(&src);
        assert!(scanned.macros.is_empty());
        assert!(
            scanned.macros.capacity() <= 1 << 14,
            "{}",
            scanned.macros.capacity()
        );
    }

    #[test]
    fn comments_and_defines_are_opaque_short_ones_are_not() {
        let src = "/* a long comment\n   on two lines */\n// a line comment here\n\
                   #define LONG_ONE(a, b) ((a) + \\\n\t(b) * 2)\n#define S 1\n/* tiny */\n";
        assert_eq!(
            opaque(src),
            [
                " a long comment\n   on two lines ",
                " a line comment here",
                "#define LONG_ONE(a, b) ((a) + \\\n\t(b) * 2)",
                "#define S 1"
            ]
        );
    }

    #[test]
    fn an_unbalanced_attribute_in_a_define_ends_with_its_line() {
        // sh_pfc.h: `__attribute__((deprecated` closed by the macro's user. Skipping to the
        // balancing `)` swallowed the next 140 lines, their references and definitions.
        let src = "#define E(n) \\\n\tdeprecated)); char n __attribute__((deprecated\n\
                   int after_it(void);\n";
        let names: Vec<&[u8]> = scan(src.as_bytes())
            .occurrences
            .iter()
            .map(|o| &src.as_bytes()[o.start as usize..o.start as usize + o.len as usize])
            .collect();
        assert!(names.contains(&&b"after_it"[..]), "{names:?}");
    }
}
