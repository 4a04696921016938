//! File-scope declarations as far as ctags needs help with them: where a macro invocation
//! that ends no statement must be ended for ctags, and the functions a body shows.
//!
//! A macro invocation that begins a declaration and is followed by another declaration with
//! no `;` between (`FOLIO_FLAG(waiters, FOLIO_HEAD_PAGE)` then `static inline bool
//! folio_test_large(…) {`) reads to ctags as an old-style function whose parameter
//! declarations are the next declaration: it reports the macro as a function and loses what
//! follows. The place after such an invocation's `)` is recorded, and the text ctags reads
//! gets a `;` there ([`super::FileScan::ctags_semicolons`]). Independently of ctags, every
//! file-scope `TYPE name(…) {` is recorded with its lines ([`super::FileScan::functions`]),
//! as cscope finds functions, so that a definition ctags still misses is not lost.

/// A function definition seen at file scope: a name after its type, its parameters, its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileScopeFunction {
    /// Byte offset of the name.
    pub start: u32,
    /// Length of the name.
    pub len: u16,
    /// Line of the name.
    pub line: u32,
    /// Line of the body's closing brace.
    pub end_line: u32,
    /// Declared `static`.
    pub file_local: bool,
}

/// The name a body may belong to.
#[derive(Clone, Copy)]
struct Name {
    start: u32,
    len: u16,
    line: u32,
    /// Begins with `__`, as the kernel's attribute macros do (`__aligned(16)`).
    dunder: bool,
}

/// The state of the declaration being read at brace depth 0.
#[derive(Default)]
pub(super) struct TopLevel {
    /// No code token since the declaration began.
    at_start: bool,
    /// Started: the first token of the file begins a declaration.
    begun: bool,
    /// Parenthesis depth at brace depth 0.
    parens: u32,
    /// A macro invocation that began the declaration is open.
    invocation: bool,
    /// Where a `;` would end the invocation that just closed, if the next token begins a
    /// declaration.
    after_invocation: Option<u32>,
    /// The last code token was `)`.
    after_close: bool,
    /// The last name followed by `(` after a type: the function a body may follow.
    name: Option<Name>,
    /// `static` seen in this declaration.
    is_static: bool,
    /// The function whose body is open.
    open: Option<(Name, bool)>,
    /// The open block is a function's body (`) {`): the declaration ends with it. Any other
    /// (`struct s {`, `= {`) goes on after it (`} __aligned(8) name;`).
    body: bool,
    /// Positions of the `;`s ctags needs.
    pub semicolons: Vec<u32>,
    /// The functions found.
    pub functions: Vec<FileScopeFunction>,
}

impl TopLevel {
    fn begin(&mut self) {
        self.at_start = true;
        self.begun = true;
        self.name = None;
        self.is_static = false;
        self.invocation = false;
        self.parens = 0;
    }

    /// Any code token at brace depth 0: a pending `;` is written when `begins` (the token can
    /// begin a declaration: a name or a keyword), dropped otherwise.
    #[inline]
    fn token(&mut self, begins: bool) {
        if !self.begun {
            self.begin();
        }
        if let Some(at) = self.after_invocation.take() {
            if begins {
                self.semicolons.push(at);
                self.begin();
            }
        }
    }

    /// A C keyword at brace depth 0 (outside directives).
    #[inline]
    pub(super) fn keyword(&mut self, name: &[u8]) {
        self.token(true);
        if name == b"static" {
            self.is_static = true;
        }
        self.at_start = false;
        self.after_close = false;
    }

    /// Another name at brace depth 0 (outside directives), `call` when `(` follows it,
    /// `dunder` when it begins with `__`. A name right after a `)` is an attribute's
    /// (`f(void) __must_hold(l)`) unless what was taken for the name was one
    /// (`void __aligned(16) f(void)`).
    #[inline]
    pub(super) fn identifier(
        &mut self,
        start: usize,
        len: usize,
        line: u32,
        call: bool,
        dunder: bool,
    ) {
        self.token(true);
        if call && self.parens == 0 {
            let after_attribute = self.name.is_some_and(|n| n.dunder) && !dunder;
            if self.at_start {
                self.invocation = true;
            } else if !self.after_close || after_attribute {
                if let (Ok(start), Ok(len)) = (u32::try_from(start), u16::try_from(len)) {
                    self.name = Some(Name {
                        start,
                        len,
                        line,
                        dunder,
                    });
                }
            }
        }
        self.at_start = false;
        self.after_close = false;
    }

    /// A number or literal at brace depth 0.
    #[inline]
    pub(super) fn other(&mut self) {
        self.token(false);
        self.at_start = false;
        self.after_close = false;
    }

    /// Punctuator `b` at byte `pos` on `line`, `depth` the brace depth before it.
    #[inline]
    pub(super) fn punct(&mut self, b: u8, pos: usize, line: u32, depth: u32) {
        if depth > 0 {
            if b == b'}' && depth == 1 {
                if let Some((name, file_local)) = self.open.take() {
                    self.functions.push(FileScopeFunction {
                        start: name.start,
                        len: name.len,
                        line: name.line,
                        end_line: line,
                        file_local,
                    });
                }
                if std::mem::take(&mut self.body) {
                    self.begin();
                }
                self.after_close = false;
            }
            return;
        }
        self.token(false);
        match b {
            b'(' => self.parens += 1,
            b')' => {
                self.parens = self.parens.saturating_sub(1);
                if self.parens == 0 && self.invocation {
                    self.invocation = false;
                    self.after_invocation = u32::try_from(pos + 1).ok();
                }
            }
            b';' => self.begin(),
            b'{' => {
                self.body = self.after_close && self.parens == 0;
                self.open = match self.name {
                    Some(name) if self.after_close && self.parens == 0 => {
                        Some((name, self.is_static))
                    }
                    _ => None,
                };
            }
            b'}' => self.begin(),
            b'=' | b',' if self.parens == 0 => self.name = None,
            _ => {}
        }
        if b != b';' && b != b'}' {
            self.at_start = false;
        }
        self.after_close = b == b')';
    }
}

#[cfg(test)]
mod tests {
    use crate::scan::scan;

    /// The text with a `;` at each place the scanner found, and the functions' `name:line-end`.
    fn read(src: &str) -> (String, Vec<String>) {
        let s = scan(src.as_bytes());
        let mut text = src.to_string();
        for &at in s.ctags_semicolons.iter().rev() {
            text.insert(at as usize, ';');
        }
        let functions = s
            .functions
            .iter()
            .map(|f| {
                let name = &src[f.start as usize..f.start as usize + f.len as usize];
                let local = if f.file_local { " static" } else { "" };
                format!("{name}:{}-{}{local}", f.line, f.end_line)
            })
            .collect();
        (text, functions)
    }

    #[test]
    fn an_invocation_before_a_declaration_gets_its_semicolon() {
        let (text, functions) = read(
            "FOLIO_FLAG(a, b)\n\tFOLIO_TEST(c, d)\n#endif\nstatic inline bool f(const struct folio *x)\n{\n\treturn 0;\n}\n",
        );
        assert_eq!(
            text,
            "FOLIO_FLAG(a, b);\n\tFOLIO_TEST(c, d);\n#endif\nstatic inline bool f(const struct folio *x)\n{\n\treturn 0;\n}\n"
        );
        assert_eq!(functions, ["f:4-7 static"]);
    }

    #[test]
    fn invocations_ended_or_followed_by_a_body_or_an_initializer_get_none() {
        for src in [
            "SYSCALL_DEFINE1(x, int, a)\n{\n}\nint g(void) {}\n",
            "DEFINE_MUTEX(m);\nint g(void) {}\n",
            "LIST_HEAD(l) = { 0 };\n",
            "static DEFINE_X(a) int v;\n",
            "int f(int a) __must_hold(a);\n",
            // arch/s390/include/asm/compat.h: the typedef's name after an attribute.
            "typedef struct {\n\tu32 mask;\n} __aligned(8) psw_compat_t;\n",
        ] {
            let (text, _) = read(src);
            assert_eq!(text, src);
        }
    }

    #[test]
    fn functions_are_names_after_a_type_followed_by_a_body() {
        let (_, functions) = read(
            "int a(void)\n{\n\tif (x) { y(); }\n}\nstruct s { int (*f)(void); };\nint v = w(1);\n\
             static int b(void) __acquires(l) { }\nSYSCALL_DEFINE0(c) { }\nint t[] = { 1 };\n\
             static MY_ATTR(hot) int d(int x)\n{\n}\nstatic void __aligned(16) e(void)\n{\n}\n\
             static int __f(void) __must_hold(l)\n{\n}\n",
        );
        assert_eq!(
            functions,
            [
                "a:1-4",
                "b:7-7 static",
                "d:10-12 static",
                "e:13-15 static",
                "__f:16-18 static"
            ]
        );
    }
}
