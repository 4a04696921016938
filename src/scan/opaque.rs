//! Opaque spans: the byte ranges of a file where ctags can find no definition.
//!
//! The scanner feeds this machine every code punctuator, keyword and identifier it lexes, and
//! tells it of comments, `#define` bodies and preprocessor lines; it follows top-level brace
//! blocks to find function bodies and initializers (`) {…}`, `= {…}`). Only a block opened at
//! depth 0 right after `)` (a function body) or `=` (an initializer) can be opaque, and never
//! one that may be a `struct`, `union` or `enum` body: after such a keyword at depth 0, a `{` is
//! taken for its body (`struct __attribute__((packed)) {`) unless what came between shows a
//! function's declarator (`struct s *f(…)`, `enum e f(…)`) or an initializer. The block stops
//! being opaque when a preprocessor line falls inside it (its braces may then not balance), or
//! when it holds something ctags reports from inside a function: a `typedef`, an `extern`
//! declaration, or a tagged body (`struct s {`, `enum {`). After a `}` with no open brace the
//! depth cannot be trusted, and no later block is opaque.

use super::{is_ident, is_ident_start};

/// The state of top-level brace blocks, and the spans found so far.
#[derive(Default)]
pub(super) struct Opaque {
    depth: u32,
    /// Where the open top-level block's inside starts, while it may still be opaque.
    open: Option<usize>,
    /// The last byte of the last code token: what a `{` follows.
    last: u8,
    /// A `}` came with no open brace.
    lost: bool,
    /// A `struct`, `union` or `enum` at depth 0 whose body may be the next `{`.
    tag: bool,
    /// Identifiers after that keyword, outside parentheses.
    tag_idents: u32,
    /// Parenthesis depth at brace depth 0.
    parens: u32,
    /// The spans found, in file order.
    pub(super) spans: Vec<(u32, u32)>,
}

impl Opaque {
    /// Brace depth: 0 at file scope.
    #[inline]
    pub(super) fn depth(&self) -> u32 {
        self.depth
    }

    /// A code token ended with byte `b`: what a following `{` comes after.
    #[inline]
    pub(super) fn last_byte(&mut self, b: u8) {
        self.last = b;
    }

    /// A punctuator `b` at byte `pos` outside directives.
    #[inline]
    pub(super) fn punct(&mut self, b: u8, pos: usize) {
        match b {
            b';' => {
                self.tag = false;
                self.parens = 0;
            }
            b'{' => {
                if self.depth == 0 {
                    if !self.lost && !self.tag && matches!(self.last, b')' | b'=') {
                        self.open = Some(pos + 1);
                    }
                    self.tag = false;
                    self.parens = 0;
                }
                self.depth += 1;
            }
            b'(' | b')' | b'*' | b'=' if self.depth == 0 => match b {
                b'(' => {
                    // `enum e f(`: a type and a name before the parameters.
                    if self.parens == 0 && self.tag_idents >= 2 {
                        self.tag = false;
                    }
                    self.parens += 1;
                }
                b')' => self.parens = self.parens.saturating_sub(1),
                // `struct s *f(`, `struct s v = {`.
                _ if self.parens == 0 => self.tag = false,
                _ => {}
            },
            b'}' => {
                self.tag = false;
                self.parens = 0;
                match self.depth {
                    0 => self.lost = true,
                    1 => {
                        if let Some(open) = self.open.take() {
                            if pos > open && pos <= u32::MAX as usize {
                                self.spans.push((open as u32, pos as u32));
                            }
                        }
                    }
                    _ => {}
                }
                self.depth = self.depth.saturating_sub(1);
            }
            _ => {}
        }
    }

    /// A C keyword outside directives; `rest` is the text after it.
    #[inline]
    pub(super) fn keyword(&mut self, name: &[u8], rest: &[u8]) {
        if self.open.is_some() {
            let visible = match name {
                b"typedef" | b"extern" => true,
                b"struct" | b"union" | b"enum" => tag_body_follows(rest),
                _ => false,
            };
            if visible {
                self.open = None;
            }
        } else if self.depth == 0
            && self.parens == 0
            && matches!(name, b"struct" | b"union" | b"enum")
        {
            self.tag = true;
            self.tag_idents = 0;
        }
    }

    /// An identifier (not a keyword) outside directives.
    #[inline]
    pub(super) fn identifier(&mut self) {
        if self.tag && self.depth == 0 && self.parens == 0 {
            self.tag_idents += 1;
        }
    }

    /// A preprocessor line: the open block's braces may not balance, and ctags follows only
    /// some branches.
    #[inline]
    pub(super) fn directive(&mut self) {
        self.open = None;
    }

    /// Adds `start..end` (a comment's text, a `#define`'s body), unless it is too short to
    /// matter or inside a block that may become one span.
    #[inline]
    pub(super) fn hide(&mut self, start: usize, end: usize) {
        if end >= start + 8 && self.open.is_none() && end <= u32::MAX as usize {
            self.spans.push((start as u32, end as u32));
        }
    }
}

/// True when a tag's body may follow the `struct`/`union`/`enum` whose following text is
/// `rest`: `{` or `NAME {`, across blanks and newlines. Only a plain use (`struct s *p`,
/// `sizeof(struct s)`) is a "no": a wrong "no" would hide a definition from ctags, a wrong "yes"
/// only costs ctags time.
fn tag_body_follows(rest: &[u8]) -> bool {
    let skip_blanks = |mut j: usize| {
        while j < rest.len() && rest[j].is_ascii_whitespace() {
            j += 1;
        }
        j
    };
    let mut j = skip_blanks(0);
    if j < rest.len() && is_ident_start(rest[j]) {
        while j < rest.len() && is_ident(rest[j]) {
            j += 1;
        }
        j = skip_blanks(j);
        let plain_use = rest.get(j).is_some_and(|&c| {
            is_ident_start(c) || matches!(c, b'*' | b')' | b'(' | b';' | b',' | b'[' | b'=')
        });
        return !plain_use;
    }
    true
}
