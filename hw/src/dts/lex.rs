//! The tokens of a device-tree source as dtc sees them after the C preprocessor, read from the
//! file before it: comments, strings, char literals, parenthesised expressions and byte strings
//! are each one token (or none), so no brace inside them is ever counted; the preprocessor's
//! lines are left out, and their `#include`s (and dtc's `/include/ "x"`) recorded.

use super::{Include, IncludeKind, Problem, Target};

/// One token and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub line: u32,
}

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok<'a> {
    /// A node or property name, a number or a macro's name: dtc's name characters.
    Word(&'a [u8]),
    /// `name:` before a node (or a property).
    Label(&'a [u8]),
    /// A string literal, as written with its quotes (unescaped only where it is needed).
    Str(&'a [u8]),
    /// `&label` or `&{/path}`.
    Ref(Target),
    /// `/name/`: `/delete-node/`, `/plugin/`, `/bits/`, … (the name without its slashes).
    Directive(&'a [u8]),
    /// `/` alone: the root node's name.
    Slash,
    /// `{`, `}`, `;`, `=` and any other single byte.
    Punct(u8),
    /// A char literal, a `(…)` expression or a `[…]` byte string, skipped whole.
    Group,
}

/// The preprocessor's directives: a line starting with `#` and one of these is not dtc's.
const DIRECTIVES: &[&str] = &[
    "include", "define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else",
    "endif", "error", "warning", "pragma", "line",
];

/// The tokens of `src`, with the includes found and what could not be read.
pub(crate) fn tokens(src: &[u8]) -> (Vec<Token<'_>>, Vec<Include>, Vec<Problem>) {
    let mut lx = Lexer {
        s: src,
        i: 0,
        line: 1,
        line_start: true,
        out: Vec::new(),
        includes: Vec::new(),
        problems: Vec::new(),
    };
    lx.run();
    (lx.out, lx.includes, lx.problems)
}

/// The bytes dtc allows in node and property names (and which numbers and macros use).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b",._+*#?@-".contains(&b)
}

fn is_label_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    line: u32,
    /// Only blanks since the last newline: a `#` here may start a preprocessor line.
    line_start: bool,
    out: Vec<Token<'a>>,
    includes: Vec<Include>,
    problems: Vec<Problem>,
}

impl<'a> Lexer<'a> {
    fn peek(&self, k: usize) -> u8 {
        self.s.get(self.i + k).copied().unwrap_or(0)
    }

    fn push(&mut self, tok: Tok<'a>, line: u32) {
        self.out.push(Token { tok, line });
    }

    fn run(&mut self) {
        while self.i < self.s.len() {
            let b = self.s[self.i];
            if b == b'\n' {
                self.line += 1;
                self.i += 1;
                self.line_start = true;
                continue;
            }
            if b.is_ascii_whitespace() {
                self.i += 1;
                continue;
            }
            if self.skip_comment() {
                continue;
            }
            let at_line_start = std::mem::replace(&mut self.line_start, false);
            if b == b'#' && at_line_start && self.preprocessor_line() {
                continue;
            }
            self.token(b);
        }
    }

    /// Skips a comment at `i`, counting its lines; false when none starts here.
    fn skip_comment(&mut self) -> bool {
        match (self.peek(0), self.peek(1)) {
            (b'/', b'*') => {
                let line = self.line;
                let rest = &self.s[self.i + 2..];
                match memchr::memmem::find(rest, b"*/") {
                    Some(end) => {
                        self.count_lines(self.i + 2, self.i + 2 + end);
                        self.i += end + 4;
                    }
                    None => {
                        self.problems
                            .push(Problem::new(line, "a comment that never ends"));
                        self.count_lines(self.i, self.s.len());
                        self.i = self.s.len();
                    }
                }
                true
            }
            (b'/', b'/') => {
                self.i =
                    memchr::memchr(b'\n', &self.s[self.i..]).map_or(self.s.len(), |n| self.i + n);
                true
            }
            _ => false,
        }
    }

    fn count_lines(&mut self, from: usize, to: usize) {
        let n = memchr::memchr_iter(b'\n', &self.s[from..to]).count();
        self.line = self.line.saturating_add(n as u32);
    }

    /// Reads a preprocessor line at `#` (its `\`-continued lines and comments too) and records
    /// an `#include`; false when the `#` starts a property name (`#address-cells`) instead.
    fn preprocessor_line(&mut self) -> bool {
        let mut j = self.i + 1;
        while j < self.s.len() && matches!(self.s[j], b' ' | b'\t') {
            j += 1;
        }
        let start = j;
        while j < self.s.len() && (self.s[j].is_ascii_lowercase() || self.s[j] == b'_') {
            j += 1;
        }
        let word = &self.s[start..j];
        let next = self.s.get(j).copied().unwrap_or(b'\n');
        if !DIRECTIVES.iter().any(|d| d.as_bytes() == word) || is_name_byte(next) {
            return false;
        }
        let line = self.line;
        self.i = j;
        if word == b"include" {
            self.include_operand(line, false);
        }
        self.skip_to_line_end();
        true
    }

    /// Records the `<path>` or `"path"` after `#include` (or the `"path"` after `/include/`).
    fn include_operand(&mut self, line: u32, dtc: bool) {
        while matches!(self.peek(0), b' ' | b'\t') {
            self.i += 1;
        }
        let (close, kind) = match self.peek(0) {
            b'<' if !dtc => (b'>', IncludeKind::System),
            b'"' if dtc => (b'"', IncludeKind::Dtc),
            b'"' => (b'"', IncludeKind::Local),
            _ => return,
        };
        let rest = &self.s[self.i + 1..];
        let end = rest.iter().position(|&b| b == close || b == b'\n');
        if let Some(n) = end.filter(|&n| rest[n] == close) {
            let path = String::from_utf8_lossy(&rest[..n]).into_owned();
            self.includes.push(Include { path, line, kind });
            self.i += n + 2;
        }
    }

    /// Skips to the end of a preprocessor line, past `\`-continuations and comments.
    fn skip_to_line_end(&mut self) {
        while self.i < self.s.len() {
            let b = self.s[self.i];
            match b {
                b'\n' => return,
                b'\\' if self.peek(1) == b'\n' => {
                    self.line += 1;
                    self.i += 2;
                }
                b'\\' if self.peek(1) == b'\r' && self.peek(2) == b'\n' => {
                    self.line += 1;
                    self.i += 3;
                }
                b'/' if self.skip_comment() => {}
                _ => self.i += 1,
            }
        }
    }

    /// One token starting with `b` at `i` (not blank, not a comment).
    fn token(&mut self, b: u8) {
        let line = self.line;
        match b {
            b'"' => match literal_len(&self.s[self.i..]) {
                Some(used) => {
                    let s: &'a [u8] = self.s;
                    self.push(Tok::Str(&s[self.i..self.i + used]), line);
                    self.i += used;
                }
                None => {
                    self.problems
                        .push(Problem::new(line, "a string that never ends on its line"));
                    self.i += 1;
                }
            },
            b'\'' => self.char_literal(line),
            b'(' | b'[' => self.group(line),
            b'&' => self.reference(line),
            b'/' => self.slash(line),
            _ if is_name_byte(b) => self.word(line),
            _ => {
                self.i += 1;
                self.push(Tok::Punct(b), line);
            }
        }
    }

    fn char_literal(&mut self, line: u32) {
        let mut j = self.i + 1;
        while j < self.s.len() && self.s[j] != b'\'' && self.s[j] != b'\n' {
            j += if self.s[j] == b'\\' { 2 } else { 1 };
        }
        self.i = (j + 1).min(self.s.len());
        if self.s.get(j) == Some(&b'\n') {
            self.i = j;
        }
        self.push(Tok::Group, line);
    }

    /// A `(…)` expression (nested, strings and comments inside skipped) or a `[…]` byte
    /// string; one that does not close ends before the next `;`, `{` or `}`, so that an
    /// unbalanced one cannot swallow the file.
    fn group(&mut self, line: u32) {
        let mut depth = 0usize;
        while self.i < self.s.len() {
            let b = self.s[self.i];
            match b {
                b'(' | b'[' => depth += 1,
                b')' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.i += 1;
                        break;
                    }
                }
                b';' | b'{' | b'}' => break,
                b'\n' => self.line += 1,
                b'"' => {
                    if let Some(used) = literal_len(&self.s[self.i..]) {
                        self.i += used;
                        continue;
                    }
                }
                b'/' if self.skip_comment() => continue,
                _ => {}
            }
            self.i += 1;
        }
        self.push(Tok::Group, line);
    }

    /// `&label`, `&{/path}` or a lone `&`.
    fn reference(&mut self, line: u32) {
        let rest = &self.s[self.i + 1..];
        if rest.first() == Some(&b'{') {
            let end = rest[1..]
                .iter()
                .position(|&b| matches!(b, b'}' | b'\n' | b';' | b'{'))
                .map(|n| n + 1);
            if let Some(n) = end.filter(|&n| n > 1 && rest[n] == b'}') {
                let path = String::from_utf8_lossy(&rest[1..n]).into_owned();
                self.i += n + 2;
                self.push(Tok::Ref(Target::Path(path)), line);
                return;
            }
        }
        let mut n = rest.iter().take_while(|&&b| is_label_byte(b)).count();
        if n > 0 && rest.get(n) == Some(&b'(') {
            // `&DIE_NODE(pmgr)`: a macro that makes the label.
            n += call_end(&rest[n..]).unwrap_or(0);
        }
        self.i += 1 + n;
        if n == 0 {
            self.push(Tok::Punct(b'&'), line);
        } else {
            let label = String::from_utf8_lossy(&rest[..n]).into_owned();
            self.push(Tok::Ref(Target::Label(label)), line);
        }
    }

    /// `/name/` (a dtc directive; `/include/ "x"` is recorded here) or `/` alone.
    fn slash(&mut self, line: u32) {
        let rest = &self.s[self.i + 1..];
        let n = rest
            .iter()
            .take_while(|&&b| b.is_ascii_lowercase() || b == b'-')
            .count();
        if n > 0 && rest.get(n) == Some(&b'/') {
            let s: &'a [u8] = self.s;
            let name = &s[self.i + 1..self.i + 1 + n];
            self.i += n + 2;
            if name == b"include" {
                self.include_operand(line, true);
            } else {
                self.push(Tok::Directive(name), line);
            }
        } else {
            self.i += 1;
            self.push(Tok::Slash, line);
        }
    }

    /// A name, number or macro; `name:` is a label. A macro's call standing for a label or a
    /// node name (`DIE_NODE(pmgr): pmgr {`, `CP11X_NODE_NAME(ic-thermal) {`) is one token, the
    /// call as written; before anything else its arguments are left to [`Self::group`].
    fn word(&mut self, line: u32) {
        let start = self.i;
        while self.i < self.s.len() && is_name_byte(self.s[self.i]) {
            self.i += 1;
        }
        let ident = is_identifier(&self.s[start..self.i]);
        let mut end = self.i;
        if ident && self.peek(0) == b'(' {
            if let Some(close) = call_end(&self.s[self.i..]) {
                let after = self.s[self.i + close..]
                    .iter()
                    .find(|b| !matches!(b, b' ' | b'\t'))
                    .copied();
                if matches!(after, Some(b':' | b'{')) {
                    end = self.i + close;
                }
            }
        }
        let s: &'a [u8] = self.s;
        let text = &s[start..end];
        self.i = end;
        if ident && self.peek(0) == b':' {
            self.i += 1;
            self.push(Tok::Label(text), line);
        } else {
            self.push(Tok::Word(text), line);
        }
    }
}

/// Whether `s` is a C identifier (and so a possible label or macro name).
fn is_identifier(s: &[u8]) -> bool {
    !s.is_empty() && !s[0].is_ascii_digit() && s.iter().all(|&b| is_label_byte(b))
}

/// The length of the balanced `(…)` call arguments that start `s`, on one line.
fn call_end(s: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &b) in s.iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            b'\n' | b';' | b'{' | b'}' | b'"' => return None,
            _ => {}
        }
    }
    None
}

/// The length of the string literal that starts `s` (at its `"`) with its quotes; `None` when
/// it does not close on its line.
fn literal_len(s: &[u8]) -> Option<usize> {
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            b'\n' => return None,
            _ => i += 1,
        }
    }
    None
}
