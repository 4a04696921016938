//! Opaque spans: the byte ranges of a file where ctags can find no definition.
//!
//! The scanner feeds this machine every code punctuator, keyword and identifier it lexes, and
//! tells it of comments, of each preprocessor line's kind and of the text of those that are
//! not conditionals (hidden whole); it follows top-level brace blocks to find function bodies
//! and initializers (`) {…}`, `= {…}`). Only a block opened at depth 0 right after `)` (a
//! function body) or `=` (an initializer) can be opaque, and never one that may be a
//! `struct`, `union` or `enum` body: after such a keyword at depth 0, a `{` is taken for its
//! body (`struct __attribute__((packed)) {`) unless what came between shows a
//! function's declarator (`struct s *f(…)`, `enum e f(…)`) or an initializer. The block stops
//! being opaque when it holds something ctags reports from inside a function: a `typedef`, an
//! `extern` declaration, or a tagged body (`struct s {`, `enum {`); or when a conditional
//! group in it (`#if` … `#endif`) has a branch that leaves the brace depth elsewhere than its
//! `#if` found it, or begins or ends outside it: then its braces may not balance in the
//! branch the compiler takes. After a `}` with no open brace the depth cannot be trusted, and
//! no later block is opaque.
//!
//! Preprocessor lines other than conditionals are hidden whole: ctags, told to skip macros,
//! gets nothing from `#define`, `#include`, `#undef`, `#pragma` or `#error`, while it follows
//! conditionals to choose branches.

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
    /// The brace depth at each open conditional group that began inside the open block.
    groups: Vec<u32>,
    /// Spans inside the open block: dropped when it becomes one span, kept when it cannot.
    inner: Vec<(u32, u32)>,
    /// The spans found, in file order.
    spans: Vec<(u32, u32)>,
}

/// What a preprocessor line is to the brace count.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum PpLine {
    /// `#if`, `#ifdef`, `#ifndef`: a group begins.
    If,
    /// `#elif`, `#elifdef`, `#elifndef`, `#else`: the next branch.
    Else,
    /// `#endif`.
    Endif,
    /// Any other: not a conditional.
    Other,
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
                        self.groups.clear();
                        self.inner.clear();
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
                    1 => match self.open {
                        // Opaque unless a group that began inside goes on past the block's end.
                        Some(open)
                            if self.groups.is_empty() && pos > open && pos <= u32::MAX as usize =>
                        {
                            self.spans.push((open as u32, pos as u32));
                            self.open = None;
                            self.inner.clear();
                        }
                        Some(_) => self.cancel(),
                        None => {}
                    },
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
                self.cancel();
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

    /// A preprocessor line, before its text is read: a conditional in the open block is
    /// checked against the brace depth its group began at.
    #[inline]
    pub(super) fn directive(&mut self, line: PpLine) {
        if self.open.is_none() {
            return;
        }
        let balanced = match line {
            PpLine::If => {
                self.groups.push(self.depth);
                true
            }
            PpLine::Else => self.groups.last() == Some(&self.depth),
            PpLine::Endif => self.groups.pop() == Some(self.depth),
            PpLine::Other => true,
        };
        if !balanced {
            self.cancel();
        }
    }

    /// A preprocessor line other than a conditional, `text` from its `#` at byte `start` to
    /// the end of its logical line. It is hidden unless a comment begins on it and goes on
    /// past its end (`#include "x.h" /* …`): ctags would read the comment's rest as code.
    #[inline]
    pub(super) fn other_directive(&mut self, text: &[u8], start: usize) {
        if !ends_in_open_comment(text) {
            self.hide(start, start + text.len());
        }
    }

    /// Adds `start..end` (a comment's text, a preprocessor line), unless it is too short to
    /// matter; inside a block that may become one span, it is held back until the block is
    /// decided (dropped if it is, added if it is not).
    #[inline]
    pub(super) fn hide(&mut self, start: usize, end: usize) {
        if end >= start + 8 && end <= u32::MAX as usize {
            let to = if self.open.is_some() {
                &mut self.inner
            } else {
                &mut self.spans
            };
            to.push((start as u32, end as u32));
        }
    }

    /// The spans found, in file order; a block still open at the end of the file is not one.
    pub(super) fn finish(&mut self) -> Vec<(u32, u32)> {
        self.cancel();
        std::mem::take(&mut self.spans)
    }

    /// The open block cannot be one span: the spans inside it are kept.
    fn cancel(&mut self) {
        self.open = None;
        self.groups.clear();
        self.spans.append(&mut self.inner);
    }
}

/// True when the last `/*` of `text` has no `*/` after it. Two byte searches rather than a
/// substring searcher built for each of the kernel's five million directives.
fn ends_in_open_comment(text: &[u8]) -> bool {
    let Some(star) = memchr::memrchr_iter(b'*', text).find(|&k| k > 0 && text[k - 1] == b'/')
    else {
        return false;
    };
    !memchr::memchr_iter(b'/', &text[star + 1..]).any(|k| k > 0 && text[star + k] == b'*')
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

#[cfg(test)]
mod tests {
    proptest::proptest! {
        #[test]
        fn the_open_comment_check_agrees_with_substring_search(text in "[/* a\n]{0,24}") {
            let text = text.as_bytes();
            let reference = memchr::memmem::rfind(text, b"/*")
                .is_some_and(|k| memchr::memmem::find(&text[k + 2..], b"*/").is_none());
            proptest::prop_assert_eq!(super::ends_in_open_comment(text), reference);
        }
    }

    /// The text of each opaque span of `src`.
    fn opaque(src: &str) -> Vec<&str> {
        crate::scan::scan(src.as_bytes())
            .opaque
            .iter()
            .map(|&(a, b)| &src[a as usize..b as usize])
            .collect()
    }

    #[test]
    fn preprocessor_lines_but_conditionals_are_hidden_whole() {
        let src = "#include <linux/types.h>\n#define MAX(a, b) \\\n\t((a) > (b) ? (a) : (b))\n\
                   #undef S\n  #  pragma once\n#error no\n#ifdef CONFIG_X\nint x;\n\
                   #elif defined(CONFIG_Y)\n#else\n#endif\n";
        assert_eq!(
            opaque(src),
            [
                "#include <linux/types.h>",
                "#define MAX(a, b) \\\n\t((a) > (b) ? (a) : (b))",
                "#undef S",
                "#  pragma once",
                "#error no",
            ]
        );
    }

    #[test]
    fn a_comment_begun_on_an_include_and_ended_below_it_keeps_the_line() {
        // Hiding the `#include` with the comment's start left ctags its end, `*/`, as code:
        // it lost the next tag.
        let src = "#include \"x.h\" /* one\n   two */\nint after;\n";
        assert!(opaque(src).is_empty(), "{:?}", opaque(src));
        // A `#define` reads its comments: its logical line ends after them.
        let src = "#define X 1 /* one\n   two */\nint after;\n";
        assert_eq!(opaque(src), ["#define X 1 /* one\n   two */"]);
    }

    #[test]
    fn a_body_with_other_preprocessor_lines_stays_opaque() {
        let src = "int f(void)\n{\n#define N 4\n\treturn N;\n#undef N\n}\n";
        assert_eq!(opaque(src), ["\n#define N 4\n\treturn N;\n#undef N\n"]);
    }

    #[test]
    fn a_body_whose_conditional_branches_balance_stays_opaque() {
        // Nested groups, an `#if 0` with text the compiler never reads, braces in a branch.
        let src = "int f(void)\n{\n#if A\n#ifdef B\n\tb();\n#endif\n\tif (a) {\n\t\tc();\n\t}\n\
                   #elif C\n#else\n#if 0\n\tdon't { look\n#endif\n#endif\n}\n";
        assert_eq!(
            opaque(src),
            [
                "\n#if A\n#ifdef B\n\tb();\n#endif\n\tif (a) {\n\t\tc();\n\t}\n\
              #elif C\n#else\n#if 0\n\tdon't { look\n#endif\n#endif\n"
            ]
        );
    }

    #[test]
    fn a_body_with_a_branch_that_moves_the_brace_depth_is_not_opaque() {
        let g = "int g(void)\n{\n\treturn 1;\n}\n";
        // The braces balance across all branches, not in each.
        for body in [
            "#ifdef A\n\tif (a) {\n#endif\n\t\tc();\n#ifdef A\n\t}\n#endif\n",
            // In a nested group.
            "#if A\n#ifdef B\n\tif (b) {\n#endif\n\t\tc();\n#ifdef B\n\t}\n#endif\n#endif\n",
            // In `#if 0`.
            "#if 0\n\t{\n#endif\n\ta();\n#if 0\n\t}\n#endif\n",
        ] {
            let src = format!("void f(void)\n{{\n{body}}}\n{g}");
            assert_eq!(opaque(&src), ["\n\treturn 1;\n"], "{body:?}");
        }
    }

    #[test]
    fn a_conditional_group_begun_or_ended_outside_a_body_makes_it_not_opaque() {
        // With A: f { a(); } and g { b(); }; without: f { b(); }.
        let src = "int f(void)\n{\n#ifdef A\n\ta();\n}\nint g(void)\n{\n#endif\n\tb();\n}\n\
                   int h(void)\n{\n\treturn 1;\n}\n";
        assert_eq!(opaque(src), ["\n\treturn 1;\n"]);
    }

    #[test]
    fn a_body_ctags_must_see_keeps_its_comments_and_preprocessor_lines_hidden() {
        let src = "int f(void)\n{\n\t/* a long comment */\n#ifdef A\n\
                   \tstruct local { int m; } l;\n#endif\n#define LOCAL 1\n}\n";
        assert_eq!(opaque(src), [" a long comment ", "#define LOCAL 1"]);
        // A typedef in a balanced group still shows the body.
        let src = "int f(void)\n{\n#ifdef A\n\ttypedef int t;\n#endif\n}\n";
        assert!(opaque(src).is_empty(), "{:?}", opaque(src));
    }
}
