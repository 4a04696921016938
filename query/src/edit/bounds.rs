//! Where a definition starts and ends to the byte, so that an edit keeps, byte for byte, the
//! other code that shares its first or last line (`int lead = 1; int target(void)`,
//! `} int after_decl = 3;`), or refuses saying which line holds what.
//!
//! The file is read once from its start, as C reads it: comments, string and character
//! literals and preprocessor directives (continued lines and comments included) are spans that
//! are not code; brackets and `;` outside them are marks with the bracket depth after each. A
//! `#else` or `#elif` branch starts again from the depth at its `#if`, so two branches that
//! each open a function's body (`#ifdef A` `int f(int a) {` `#else` `int f(void) {`) count once;
//! `extern "C" {` opens no depth, and a `}` at depth 0 closes nothing.

use knav_c::lex;
use knav_ctags::Kind;

/// What a span that is not code is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Span {
    /// `/* … */` or `// …`.
    Comment,
    /// `"…"` or `'…'`.
    Literal,
    /// `#…` to the end of its last line, over continuations and comments.
    Directive,
}

impl Span {
    fn what(self) -> &'static str {
        match self {
            Span::Comment => "a comment",
            Span::Literal => "a string",
            Span::Directive => "a preprocessor directive",
        }
    }
}

/// A bracket or `;` in code: where, which, and the depth after it.
#[derive(Clone, Copy, Debug)]
struct Mark {
    at: usize,
    byte: u8,
    depth: i32,
    /// The last code byte before it (`"` for a literal), 0 at the file's start.
    before: u8,
}

/// A file read as C reads it.
pub(super) struct Lexed<'a> {
    text: &'a [u8],
    /// Comments, literals and directives, in order, as `(start, end, what)`.
    spans: Vec<(usize, usize, Span)>,
    marks: Vec<Mark>,
}

/// Where the byte after a directive at `i` is: the newline that ends its last line.
fn directive_end(text: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < text.len() {
        match (text[j], text.get(j + 1).copied()) {
            (b'\n', _) if lex::continues(&text[..j]) => j += 1,
            (b'\n', _) => return j,
            (b'/', Some(b'*')) => j = lex::block_comment_end(text, j),
            (b'/', Some(b'/')) => return lex::line_comment_end(text, j),
            (b'"' | b'\'', _) => j = lex::literal_end(text, j).0.max(j + 1),
            _ => j += 1,
        }
    }
    text.len()
}

/// The word of the directive at `i` (`if`, `define`, …).
fn directive_word(text: &[u8], i: usize) -> &[u8] {
    let rest = &text[(i + 1).min(text.len())..];
    let skip = rest
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    let rest = &rest[skip..];
    let len = rest.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    &rest[..len]
}

impl<'a> Lexed<'a> {
    /// Reads `text` from its start.
    pub(super) fn new(text: &'a [u8]) -> Lexed<'a> {
        let (mut spans, mut marks) = (Vec::new(), Vec::new());
        let (mut i, mut depth, mut before, mut line_start) = (0usize, 0i32, 0u8, true);
        let mut conds: Vec<i32> = Vec::new();
        while i < text.len() {
            let c = text[i];
            let next = text.get(i + 1).copied();
            let span_end = match (c, next) {
                (b'#', _) if line_start => {
                    match directive_word(text, i) {
                        b"if" | b"ifdef" | b"ifndef" => conds.push(depth),
                        b"else" | b"elif" | b"elifdef" | b"elifndef" => {
                            depth = conds.last().copied().unwrap_or(depth)
                        }
                        b"endif" => {
                            conds.pop();
                        }
                        _ => {}
                    }
                    Some((directive_end(text, i), Span::Directive))
                }
                (b'/', Some(b'*')) => Some((lex::block_comment_end(text, i), Span::Comment)),
                (b'/', Some(b'/')) => Some((lex::line_comment_end(text, i), Span::Comment)),
                (b'"' | b'\'', _) => Some((lex::literal_end(text, i).0.max(i + 1), Span::Literal)),
                _ => None,
            };
            if let Some((end, what)) = span_end {
                spans.push((i, end, what));
                if what == Span::Literal {
                    before = b'"';
                    line_start = false;
                }
                i = end;
                continue;
            }
            match c {
                b'\n' => line_start = true,
                b' ' | b'\t' | b'\r' | b'\x0c' => {}
                _ => {
                    let step = match c {
                        b'{' | b'(' | b'[' => Some(1),
                        b'}' | b')' | b']' => Some(-1),
                        b';' => Some(0),
                        _ => None,
                    };
                    // `extern "C" {` holds declarations as the file does; a `}` never
                    // closes more than was opened.
                    let step = match step {
                        Some(1) if c == b'{' && before == b'"' && depth == 0 => None,
                        Some(-1) if depth == 0 => None,
                        s => s,
                    };
                    if let Some(step) = step {
                        depth += step;
                        marks.push(Mark {
                            at: i,
                            byte: c,
                            depth,
                            before,
                        });
                    }
                    before = c;
                    line_start = false;
                }
            }
            i += 1;
        }
        Lexed { text, spans, marks }
    }

    /// True when the text ends in a `//` comment or a directive: what follows on its last line
    /// would be part of it.
    pub(super) fn open_at_end(&self) -> bool {
        self.spans.last().is_some_and(|&(s, e, what)| {
            e >= self.text.len()
                && (what == Span::Directive
                    || (what == Span::Comment && self.text.get(s + 1) == Some(&b'/')))
        })
    }

    /// The span that `at` lies strictly inside (it began before `at` and goes on past it).
    fn inside(&self, at: usize) -> Option<(usize, usize, Span)> {
        let k = self.spans.partition_point(|s| s.0 < at);
        let s = *self.spans.get(k.checked_sub(1)?)?;
        (s.1 > at).then_some(s)
    }

    /// The bracket depth at `at` (after the marks before it).
    fn depth_at(&self, at: usize) -> i32 {
        let k = self.marks.partition_point(|m| m.at < at);
        k.checked_sub(1).map_or(0, |k| self.marks[k].depth)
    }

    /// True when `at` cuts nothing: it is in no comment, literal or directive, and outside
    /// every bracket.
    pub(super) fn clean(&self, at: usize) -> bool {
        self.inside(at).is_none() && self.depth_at(at) == 0
    }

    /// True when `from..to` holds code: a byte that is not blank and not in a comment.
    fn has_code(&self, from: usize, to: usize) -> bool {
        let mut i = from;
        while i < to {
            if let Some(s) = self.span_at(i).filter(|s| s.2 == Span::Comment) {
                i = s.1;
                continue;
            }
            if !self.text[i].is_ascii_whitespace() {
                return true;
            }
            i += 1;
        }
        false
    }

    /// The first byte from `from` (before `to`) that is neither blank nor in a comment.
    fn first_code(&self, from: usize, to: usize) -> usize {
        let mut s = from;
        while s < to {
            match self.span_at(s) {
                Some((_, e, Span::Comment)) => s = e,
                _ if self.text[s].is_ascii_whitespace() => s += 1,
                _ => break,
            }
        }
        s
    }

    /// The span that holds byte `at`.
    fn span_at(&self, at: usize) -> Option<(usize, usize, Span)> {
        let k = self.spans.partition_point(|s| s.0 <= at);
        let s = *self.spans.get(k.checked_sub(1)?)?;
        (s.1 > at).then_some(s)
    }

    /// Where `name` is first written as a whole word on line `line`, outside comments and
    /// literals and, with `top`, outside every bracket but in a directive: where it is defined
    /// (without `top`, also inside a macro's arguments: `DEFINE_MUTEX(name);`).
    pub(super) fn name_on(&self, name: &str, line: u32, top: bool) -> Option<usize> {
        let (from, to) = (line_start(self.text, line), line_end(self.text, line));
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let n = name.as_bytes();
        memchr::memmem::find_iter(&self.text[from..to], n)
            .map(|k| from + k)
            .find(|&at| {
                let edge_before = at == 0 || !word(self.text[at - 1]);
                let edge_after = self.text.get(at + n.len()).is_none_or(|b| !word(*b));
                let span = self.span_at(at).map(|s| s.2);
                edge_before
                    && edge_after
                    && match span {
                        Some(Span::Directive) => true,
                        Some(_) => false,
                        None => !top || self.depth_at(at) == 0,
                    }
            })
    }

    /// The byte just past the last place in `from..to` where a declaration may begin at bracket
    /// depth `depth` (0: the file's level; inside a struct's braces: its members'): after a `;`,
    /// after the `}` that closes a function's body or a block, after a directive, at that
    /// depth; after a comment or directive that began before `from`.
    fn last_boundary(&self, from: usize, to: usize, depth: i32) -> Option<usize> {
        let k0 = self.marks.partition_point(|m| m.at < from);
        let k1 = self.marks.partition_point(|m| m.at < to);
        let mark = (k0..k1).rev().find_map(|k| {
            let m = self.marks[k];
            let ends = match m.byte {
                b';' => m.depth == depth,
                b'}' => m.depth == depth && self.opener(k).is_some_and(|o| o.before == b')'),
                _ => false,
            };
            ends.then_some(m.at + 1)
        });
        let tail = self.inside(from).map(|s| s.1).filter(|&e| e <= to);
        let s0 = self.spans.partition_point(|s| s.0 < from);
        let s1 = self.spans.partition_point(|s| s.0 < to);
        let directive = self.spans[s0..s1]
            .iter()
            .rev()
            .find(|s| s.2 == Span::Directive && s.1 <= to && self.depth_at(s.0) == depth)
            .map(|s| s.1);
        mark.max(tail).max(directive)
    }

    /// The innermost bracket still open at `at`.
    fn unclosed(&self, at: usize) -> Option<Mark> {
        let k = self.marks.partition_point(|m| m.at < at);
        self.opened_before(k, self.depth_at(at))
    }

    /// The last bracket opened before mark `k` at `depth` and not closed before it.
    fn opened_before(&self, k: usize, depth: i32) -> Option<Mark> {
        self.marks[..k]
            .iter()
            .rev()
            .take_while(|m| m.depth >= depth)
            .find(|m| m.depth == depth && matches!(m.byte, b'{' | b'(' | b'['))
            .copied()
    }

    /// True when `at` lies inside a `{` opened at or after `start`: in the body of what
    /// begins at `start` (a member, whatever wrote it: `DECLARE_BITMAP(bits, 8);`).
    fn in_body_from(&self, at: usize, start: usize) -> bool {
        let mut open = self.unclosed(at);
        while let Some(m) = open.filter(|m| m.at >= start) {
            if m.byte == b'{' {
                return true;
            }
            open = self.unclosed(m.at);
        }
        false
    }

    /// What `at` lies inside: a span or the innermost open bracket, with the line it opens on.
    fn around(&self, at: usize) -> String {
        let text = self.text;
        match (self.inside(at), self.unclosed(at)) {
            (Some((s, _, what)), _) => {
                let line = line_at(text, s);
                format!(
                    "{} that begins on line {line} ({})",
                    what.what(),
                    self.quoted(line)
                )
            }
            (None, Some(m)) => {
                let line = line_at(text, m.at);
                format!(
                    "the '{}' of line {line} ({})",
                    m.byte as char,
                    self.quoted(line)
                )
            }
            (None, None) => "a bracket closed more often than opened above it".to_string(),
        }
    }

    /// The mark that the closing mark `k` closes.
    fn opener(&self, k: usize) -> Option<Mark> {
        self.opened_before(k, self.marks[k].depth + 1)
    }

    /// Past the end of the definition of `kind` whose name is at `name_at`, its statement
    /// begun at bracket depth `base`: the `}` that closes a function's body (or the `;` of a
    /// prototype), else the `;` that ends the declaration at that depth, its declarators
    /// (`} u;`) in it. `None` when there is none (the braces around it close first).
    fn end_after(&self, name_at: usize, kind: Kind, base: i32) -> Option<usize> {
        let k0 = self.marks.partition_point(|m| m.at < name_at);
        let mut body = false;
        for m in &self.marks[k0..] {
            match (m.byte, m.depth - base) {
                (_, d) if d < 0 => return None,
                (b';', 0) => return Some(m.at + 1),
                (b'{', 1) if kind == Kind::Function => body = true,
                (b'}', 0) if body => return Some(m.at + 1),
                _ => {}
            }
        }
        None
    }

    /// Line `n` of the text, trimmed and cut for a message.
    fn quoted(&self, n: u32) -> String {
        let l =
            String::from_utf8_lossy(&self.text[line_start(self.text, n)..line_end(self.text, n)])
                .trim()
                .to_string();
        match l.char_indices().nth(60) {
            Some((cut, _)) => format!("`{}…`", &l[..cut]),
            None => format!("`{l}`"),
        }
    }
}

/// Byte offset where 1-based `line` starts in `text` (its length past the last line).
pub(super) fn line_start(text: &[u8], line: u32) -> usize {
    if line <= 1 {
        return 0;
    }
    memchr::memchr_iter(b'\n', text)
        .nth(line as usize - 2)
        .map_or(text.len(), |i| i + 1)
}

/// Byte offset of the newline that ends 1-based `line` (the text's length when none).
fn line_end(text: &[u8], line: u32) -> usize {
    let s = line_start(text, line);
    memchr::memchr(b'\n', &text[s..]).map_or(text.len(), |i| s + i)
}

/// The 1-based line of byte `at`.
pub(super) fn line_at(text: &[u8], at: usize) -> u32 {
    memchr::memchr_iter(b'\n', &text[..at.min(text.len())]).count() as u32 + 1
}

/// The bytes an edit of a definition replaces: `start..end`. `start` is a line's start unless
/// other code before the definition on its line is kept (`head_kept`); `end` is past the
/// newline of its last line unless other code after it is kept (`tail_kept`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Bounds {
    pub start: usize,
    pub end: usize,
    pub head_kept: bool,
    pub tail_kept: bool,
}

/// A definition as the index gives it: its name, its first line (with the lines of its type
/// above the name's), the name's line, its last line when the index has one, its kind.
pub(super) struct Indexed<'s> {
    pub name: &'s str,
    pub first: u32,
    pub line: u32,
    pub end: Option<u32>,
    pub kind: Kind,
}

/// The bytes of the definition `d` in `lexed`, or why they cannot be told apart from the
/// code around them (a sentence saying which line holds what, and what to do).
pub(super) fn bounds(lexed: &Lexed<'_>, d: &Indexed<'_>) -> Result<Bounds, String> {
    let text = lexed.text;
    let name = d.name;
    let name_at = lexed
        .name_on(name, d.line, true)
        .or_else(|| lexed.name_on(name, d.line, false))
        .unwrap_or_else(|| line_start(text, d.line));
    let (start, head_kept) = start_of(lexed, d, name_at)?;
    let end_at = if d.kind == Kind::Macro {
        let last = d.end.unwrap_or(d.line).max(d.line);
        let at = line_end(text, last);
        if let Some((_, e, what)) = lexed.inside(at) {
            return Err(format!(
                "the last line {last} of {name} ({}) opens {} that goes on to line {}: \
                 replacing its lines would leave the rest behind; close it on line {last} \
                 first, or edit these lines with your editor",
                lexed.quoted(last),
                if what == Span::Directive {
                    "a comment"
                } else {
                    what.what()
                },
                line_at(text, e)
            ));
        }
        at
    } else {
        let Some(at) = lexed.end_after(name_at, d.kind, lexed.depth_at(start)) else {
            return Err(format!(
                "knav cannot find where {name} (line {}) ends outside comments, strings and \
                 brackets; edit it with your editor",
                d.line
            ));
        };
        let last = line_at(text, at);
        let short = last < d.end.unwrap_or(d.line).max(d.line);
        if short || (d.kind == Kind::Function && d.end.is_some_and(|e| e != last)) {
            return Err(format!(
                "{name} ends on line {} in the index but its brackets close on line {last} \
                 (an #if branch may open or close one of them); edit it with your editor",
                d.end.unwrap_or(d.line)
            ));
        }
        at
    };
    let last = line_at(text, end_at);
    let eol = line_end(text, last);
    let tail_kept = lexed.has_code(end_at, eol) || lexed.inside(eol).is_some();
    let end = if tail_kept {
        end_at
    } else {
        (eol + 1).min(text.len())
    };
    Ok(Bounds {
        start,
        end,
        head_kept,
        tail_kept,
    })
}

/// Where the definition `d` (its name at `name_at`) starts, and whether other code before it
/// on that line is kept.
fn start_of(lexed: &Lexed<'_>, d: &Indexed<'_>, name_at: usize) -> Result<(usize, bool), String> {
    let text = lexed.text;
    let first_at = line_start(text, d.first);
    if d.kind == Kind::Macro {
        return Ok((first_at, false));
    }
    if let Some(b) = lexed.last_boundary(first_at, name_at, 0) {
        return Ok((lexed.first_code(b, name_at), true));
    }
    if lexed.clean(first_at) {
        return Ok((first_at, false));
    }
    if let Some(at) = nested_start(lexed, first_at, name_at) {
        return Ok(at);
    }
    // `typedef struct {` … `} name;`: the declaration that the brace above opens.
    let opener = lexed
        .unclosed(first_at)
        .filter(|m| m.depth == 1 && m.byte == b'{' && lexed.inside(first_at).is_none());
    if let Some(m) = opener.filter(|_| matches!(d.kind, Kind::Typedef | Kind::Variable)) {
        let from = lexed.last_boundary(0, m.at, 0).unwrap_or(0);
        let s = lexed.first_code(from, m.at);
        let line = line_start(text, line_at(text, s));
        return Ok(if lexed.has_code(line, s) {
            (s, true)
        } else {
            (line, false)
        });
    }
    let name = d.name;
    Err(format!(
        "line {} ({}) begins inside {}, before {name}: replacing its whole line would cut that; \
         put {name} in a declaration on a line of its own first, then edit it",
        d.first,
        lexed.quoted(d.first),
        lexed.around(first_at),
    ))
}

/// Where a definition nested in another's braces starts (`union u {` … `} u;` among the
/// members of `struct s {`), and whether code before it on its line is kept: its first line
/// and its name lie in the same braces, at their depth, and the code before it there ends a
/// member (`;`), opens the braces, or is a directive. `None` when it is not so nested.
fn nested_start(lexed: &Lexed<'_>, first_at: usize, name_at: usize) -> Option<(usize, bool)> {
    let outer = lexed
        .unclosed(first_at)
        .filter(|m| m.byte == b'{' && lexed.inside(first_at).is_none())?;
    let same = lexed.unclosed(name_at).is_some_and(|m| m.at == outer.at);
    if !same {
        return None;
    }
    if let Some(b) = lexed.last_boundary(first_at, name_at, outer.depth) {
        return Some((lexed.first_code(b, name_at), true));
    }
    lexed
        .goes_on(first_at)
        .is_none()
        .then_some((first_at, false))
}

/// True when `name` is written in `src` as a whole word outside every comment, literal and
/// bracket, after its last closing brace: a declarator (`} u;`, `} *props;`, `} l[4];`), not
/// the tag of `union u {`.
pub(super) fn declarator_in(src: &[u8], name: &str) -> bool {
    let lexed = Lexed::new(src);
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let after = lexed
        .marks
        .iter()
        .rev()
        .find(|m| m.byte == b'}' && m.depth == 0)
        .map_or(0, |m| m.at);
    memchr::memmem::find_iter(src, name.as_bytes()).any(|at| {
        let edge_before = at == 0 || !word(src[at - 1]);
        let edge_after = src.get(at + name.len()).is_none_or(|b| !word(*b));
        edge_before
            && edge_after
            && at >= after
            && lexed.span_at(at).is_none()
            && lexed.depth_at(at) == 0
    })
}

/// The words after the closing brace of a definition nested in another's braces that
/// `start..end` holds, with their lines: its declarators (`u` of `} u;`, `probes` of
/// `} *probes[255];`), whatever the index knows of them (a member, a local). None at file level,
/// where the index has them as variables.
pub(super) fn nested_declarators(
    lexed: &Lexed<'_>,
    (start, end): (usize, usize),
) -> Vec<(String, u32)> {
    let base = lexed.depth_at(start);
    let (k0, k1) = (
        lexed.marks.partition_point(|m| m.at < start),
        lexed.marks.partition_point(|m| m.at < end),
    );
    let close = lexed.marks[k0..k1]
        .iter()
        .rev()
        .find(|m| m.byte == b'}' && m.depth == base);
    let Some(close) = close.filter(|_| base > 0) else {
        return Vec::new();
    };
    let text = lexed.text;
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = close.at + 1;
    while i < end.min(text.len()) {
        if let Some(s) = lexed.span_at(i) {
            i = s.1;
            continue;
        }
        if word(text[i]) && !text[i].is_ascii_digit() && lexed.depth_at(i) == base {
            let len = text[i..].iter().take_while(|b| word(**b)).count();
            let name = String::from_utf8_lossy(&text[i..i + len]).into_owned();
            out.push((name, line_at(text, i)));
            i += len;
            continue;
        }
        i += text[i..].iter().take_while(|b| word(**b)).count().max(1);
    }
    out
}

/// The definitions of `others` (name and line) that lie in `start..end` of `lexed`, in the
/// order they are written, but for those inside its braces (its members, whatever wrote
/// them; a `#define` there is not one): an edit of those bytes rewrites them too.
pub(super) fn within<'o>(
    lexed: &Lexed<'_>,
    (start, end): (usize, usize),
    others: &'o [(String, u32)],
) -> Vec<&'o (String, u32)> {
    let (from, to) = (
        line_at(lexed.text, start),
        line_at(lexed.text, end.saturating_sub(1)),
    );
    let mut found: Vec<(usize, &(String, u32))> = others
        .iter()
        .filter(|(_, line)| (from..=to).contains(line))
        .filter_map(|o| {
            let at = lexed
                .name_on(&o.0, o.1, true)
                .or_else(|| lexed.name_on(&o.0, o.1, false))?;
            // A `#define` in a body is not scoped by its braces: the rest of the file sees it.
            let member = lexed.in_body_from(at, start) && lexed.span_at(at).is_none();
            ((start..end).contains(&at) && !member).then_some((at, o))
        })
        .collect();
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, o)| o).collect()
}

/// Why inserting at `at` (a line's start) would split other code; `None` when it would not:
/// `at` must be outside every comment, literal, directive and bracket, and the code before it
/// must end there (a `;`, a `}`, a directive, or nothing).
pub(super) fn splits(lexed: &Lexed<'_>, at: usize) -> Option<String> {
    let text = lexed.text;
    if !lexed.clean(at) {
        return Some(format!(
            "line {} is inside {}",
            line_at(text, at),
            lexed.around(at)
        ));
    }
    lexed.goes_on(at)
}

impl Lexed<'_> {
    /// Why the code before `at` (a line's start) goes on past it; `None` when it ends there: a
    /// `;`, a `{` or `}`, a directive, or nothing.
    fn goes_on(&self, at: usize) -> Option<String> {
        let text = self.text;
        let mut i = at;
        while i > 0 {
            match self.span_at(i - 1) {
                Some((s, _, Span::Comment)) => i = s,
                Some((_, _, Span::Directive)) => return None,
                _ if text[i - 1].is_ascii_whitespace() => i -= 1,
                _ if matches!(text[i - 1], b';' | b'}' | b'{') => return None,
                _ => {
                    let line = line_at(text, i - 1);
                    return Some(format!(
                        "the code of line {line} ({}) goes on to line {}",
                        self.quoted(line),
                        line_at(text, at)
                    ));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, name: &str, first: u32, line: u32, end: u32, kind: Kind) -> Bounds {
        let lexed = Lexed::new(text.as_bytes());
        let d = Indexed {
            name,
            first,
            line,
            end: Some(end),
            kind,
        };
        bounds(&lexed, &d).unwrap_or_else(|e| panic!("{e}"))
    }

    fn cut(text: &str, b: Bounds) -> &str {
        &text[b.start..b.end]
    }

    #[test]
    fn a_definition_is_cut_at_the_code_that_shares_its_lines() {
        let t = "int f(void)\n{\n\treturn 1;\n} int after_decl = 3;\n";
        let b = at(t, "f", 1, 1, 4, Kind::Function);
        assert_eq!(cut(t, b), "int f(void)\n{\n\treturn 1;\n}");
        assert!(b.tail_kept && !b.head_kept);
        let b = at(t, "after_decl", 4, 4, 4, Kind::Variable);
        assert_eq!(cut(t, b), "int after_decl = 3;\n");
        assert!(b.head_kept && !b.tail_kept);
        let t = "int a(void) { return 1; } int b(void) { return 2; }\n";
        assert_eq!(
            cut(t, at(t, "a", 1, 1, 1, Kind::Function)),
            "int a(void) { return 1; }"
        );
        assert_eq!(
            cut(t, at(t, "b", 1, 1, 1, Kind::Function)),
            "int b(void) { return 2; }\n"
        );
        let t = "int lead = 1; /* c */ static int\ntarget(void)\n{\n}\n";
        assert_eq!(
            cut(t, at(t, "target", 1, 2, 4, Kind::Function)),
            "static int\ntarget(void)\n{\n}\n"
        );
    }

    #[test]
    fn a_struct_with_declarators_takes_them_and_an_if_branch_counts_once() {
        let t = "struct target {\n\tint x;\n} instance_var, *instance_ptr;\n";
        let b = at(t, "target", 1, 1, 3, Kind::Struct);
        assert_eq!(cut(t, b), t);
        let lexed = Lexed::new(t.as_bytes());
        let others = [
            ("instance_var".to_string(), 3),
            ("instance_ptr".to_string(), 3),
        ];
        assert_eq!(within(&lexed, (b.start, b.end), &others).len(), 2);
        // A variable or typedef named after the brace is declared from the struct's line.
        assert_eq!(cut(t, at(t, "instance_var", 3, 3, 3, Kind::Variable)), t);
        let t = "int g; typedef struct {\n\tint x;\n} foo_t; int h;\n";
        let b = at(t, "foo_t", 3, 3, 3, Kind::Typedef);
        assert_eq!(cut(t, b), "typedef struct {\n\tint x;\n} foo_t;");
        assert!(b.head_kept && b.tail_kept);
        let t = "#define A 1\n/* x */\ntypedef struct {\n\tint x;\n} foo_t;\n";
        let b = at(t, "foo_t", 5, 5, 5, Kind::Typedef);
        assert_eq!(cut(t, b), "typedef struct {\n\tint x;\n} foo_t;\n");
        let t = "#ifdef A\nint f(int a) {\n#else\nint f(void) {\n#endif\n\treturn 0;\n}\nint g;\n";
        let lexed = Lexed::new(t.as_bytes());
        assert_eq!(lexed.depth_at(t.find("int g").unwrap()), 0);
        assert_eq!(lexed.depth_at(t.find("return").unwrap()), 1);
    }

    #[test]
    fn a_nested_definition_is_cut_inside_its_braces_with_its_declarators() {
        let t = "struct o {\n\tint x; union n {\n\t\tint y;\n\t} *u[2], v; /* c */\n\tint w;\n};\n";
        let b = at(t, "n", 2, 2, 4, Kind::Union);
        // A comment after it on its last line goes with it, as at file level.
        assert_eq!(cut(t, b), "union n {\n\t\tint y;\n\t} *u[2], v; /* c */\n");
        assert!(b.head_kept && !b.tail_kept);
        let lexed = Lexed::new(t.as_bytes());
        assert_eq!(
            nested_declarators(&lexed, (b.start, b.end)),
            [("u".to_string(), 4), ("v".to_string(), 4)]
        );
        assert!(declarator_in(b"union n { int y; } *u[2], v;", "u"));
        assert!(!declarator_in(b"union n { int u; };", "u"));
        assert!(
            !declarator_in(b"union u { int y; };", "u"),
            "a tag is no declarator"
        );
        let t = "typedef struct { DECLARE_BITMAP(bits, 8); } m_t;\n";
        let lexed = Lexed::new(t.as_bytes());
        let b = at(t, "m_t", 1, 1, 1, Kind::Typedef);
        let others = [("bits".to_string(), 1)];
        assert!(within(&lexed, (b.start, b.end), &others).is_empty());
        assert!(nested_declarators(&lexed, (b.start, b.end)).is_empty());
        let t = "int f(void)\n{\n#define X 1\n\treturn X;\n}\n";
        let lexed = Lexed::new(t.as_bytes());
        let b = at(t, "f", 1, 1, 5, Kind::Function);
        let others = [("X".to_string(), 3)];
        assert_eq!(within(&lexed, (b.start, b.end), &others).len(), 1);
    }

    #[test]
    fn what_cannot_be_cut_is_refused_naming_the_line() {
        let t = "struct target {\n\tint x;\n} instance_var, *instance_ptr;\n";
        let lexed = Lexed::new(t.as_bytes());
        let d = Indexed {
            name: "instance_var",
            first: 3,
            line: 3,
            end: Some(3),
            kind: Kind::Prototype,
        };
        let e = bounds(&lexed, &d).unwrap_err();
        assert!(
            e.starts_with(
                "line 3 (`} instance_var, *instance_ptr;`) begins inside the '{' of line 1 \
                 (`struct target {`), before instance_var"
            ),
            "{e}"
        );
        let t = "#define X 1 /* starts\n ends */\nint y;\n";
        let lexed = Lexed::new(t.as_bytes());
        let d = Indexed {
            name: "X",
            first: 1,
            line: 1,
            end: None,
            kind: Kind::Macro,
        };
        let e = bounds(&lexed, &d).unwrap_err();
        assert!(
            e.starts_with(
                "the last line 1 of X (`#define X 1 /* starts`) opens a comment that goes on to \
                 line 2"
            ),
            "{e}"
        );
        assert_eq!(
            splits(&lexed, line_start(t.as_bytes(), 2)).as_deref(),
            Some(
                "line 2 is inside a preprocessor directive that begins on line 1 \
                 (`#define X 1 /* starts`)"
            )
        );
        assert_eq!(splits(&lexed, line_start(t.as_bytes(), 3)), None);
    }
}
