//! The `#if` guard stack: which branch conditions enclose each line of a file.
//!
//! Conditions are rendered as the contract says: `#ifdef X` → `X`, `#ifndef X` → `!X`,
//! `#if E` → `E`, `#else` → the negation of every earlier branch, `#elif F` → the negations of
//! the earlier branches and `(F)`. A file's include guard (`#ifndef X` / `#define X` around the
//! whole file) is not a condition anyone asks about and is left out.

/// One `#if … #endif` group while it is open.
#[derive(Debug)]
struct Frame {
    /// Negations of the branches already passed (`!X`, `!(E)`).
    negated: Vec<String>,
    /// Index into [`GuardStack::branches`] of the branch now open.
    branch: u32,
    /// Line of the opening directive, for warnings.
    line: u32,
    /// True once `#else` was seen (a later `#elif`/`#else` is unbalanced).
    in_else: bool,
}

/// Builds the guard transitions of one file as its directives are scanned.
#[derive(Debug, Default)]
pub struct GuardStack {
    /// Every branch condition seen, rendered; transitions refer to them by index.
    branches: Vec<String>,
    frames: Vec<Frame>,
    /// `(first line, open branches outermost first)`, in line order.
    transitions: Vec<(u32, Vec<u32>)>,
    /// The branch that is the file's include guard candidate.
    include_guard: Option<u32>,
    /// Problems found (unbalanced directives), as `line: message`.
    pub warnings: Vec<String>,
}

/// How a condition was written, which decides how it is negated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Directive {
    /// `#ifdef X`.
    Ifdef,
    /// `#ifndef X`.
    Ifndef,
    /// `#if E`.
    If,
}

fn render(directive: Directive, cond: &str) -> (String, String) {
    match directive {
        Directive::Ifdef => (cond.to_string(), format!("!{cond}")),
        Directive::Ifndef => (format!("!{cond}"), cond.to_string()),
        Directive::If => (cond.to_string(), format!("!({cond})")),
    }
}

impl GuardStack {
    /// Depth of open groups.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    fn push_branch(&mut self, text: String) -> u32 {
        self.branches.push(text);
        (self.branches.len() - 1) as u32
    }

    fn record(&mut self, from_line: u32) {
        let open: Vec<u32> = self.frames.iter().map(|f| f.branch).collect();
        if let Some(last) = self.transitions.last_mut() {
            if last.0 == from_line {
                last.1 = open;
                return;
            }
            if last.1 == open {
                return;
            }
        } else if open.is_empty() {
            return;
        }
        self.transitions.push((from_line, open));
    }

    /// `#if`, `#ifdef` or `#ifndef` on `line`; the group applies from `next_line`.
    pub fn open(&mut self, directive: Directive, cond: &str, line: u32, next_line: u32) {
        let (pos, neg) = render(directive, cond);
        let branch = self.push_branch(pos);
        self.frames.push(Frame {
            negated: vec![neg],
            branch,
            line,
            in_else: false,
        });
        self.record(next_line);
    }

    /// Marks the group just opened as the include guard candidate: the file's first directive is
    /// `#ifndef X` and its second `#define X`.
    pub fn mark_include_guard(&mut self) {
        if self.frames.len() == 1 {
            self.include_guard = Some(self.frames[0].branch);
        }
    }

    /// `#elif E` (`directive` If), or C23 `#elifdef`/`#elifndef`.
    pub fn elif(&mut self, directive: Directive, cond: &str, line: u32, next_line: u32) {
        let Some(frame) = self.frames.last() else {
            self.warnings.push(format!("{line}: #elif without #if"));
            return;
        };
        if frame.in_else {
            self.warnings.push(format!("{line}: #elif after #else"));
        }
        let (pos, neg) = render(directive, cond);
        let pos = match directive {
            Directive::If => format!("({pos})"),
            _ => pos,
        };
        let mut parts = frame.negated.clone();
        parts.push(pos);
        let text = parts.join(" && ");
        let branch = self.push_branch(text);
        if let Some(frame) = self.frames.last_mut() {
            frame.negated.push(neg);
            frame.branch = branch;
        }
        self.record(next_line);
    }

    /// `#else`.
    pub fn else_(&mut self, line: u32, next_line: u32) {
        let Some(frame) = self.frames.last() else {
            self.warnings.push(format!("{line}: #else without #if"));
            return;
        };
        if frame.in_else {
            self.warnings.push(format!("{line}: second #else"));
        }
        let text = frame.negated.join(" && ");
        let branch = self.push_branch(text);
        if let Some(frame) = self.frames.last_mut() {
            frame.branch = branch;
            frame.in_else = true;
        }
        self.record(next_line);
    }

    /// `#endif`.
    pub fn endif(&mut self, line: u32, next_line: u32) {
        if self.frames.pop().is_none() {
            self.warnings.push(format!("{line}: #endif without #if"));
            return;
        }
        self.record(next_line);
    }

    /// Ends the file. `include_guard_closed_at_end` says whether nothing but comments followed
    /// `#endif` of the include guard, in which case it was not one.
    pub fn finish(mut self, include_guard_closed_at_end: bool) -> Guards {
        for frame in &self.frames {
            self.warnings
                .push(format!("{}: #if without #endif at end of file", frame.line));
        }
        let hidden = if include_guard_closed_at_end {
            self.include_guard
        } else {
            None
        };
        let mut transitions: Vec<(u32, Vec<String>)> = Vec::with_capacity(self.transitions.len());
        for (line, open) in self.transitions {
            let conds: Vec<String> = open
                .iter()
                .filter(|b| Some(**b) != hidden)
                .map(|b| self.branches[*b as usize].clone())
                .collect();
            match transitions.last_mut() {
                Some(last) if last.0 == line => last.1 = conds,
                Some(last) if last.1 == conds => {}
                None if conds.is_empty() => {}
                _ => transitions.push((line, conds)),
            }
        }
        Guards {
            transitions,
            warnings: self.warnings,
        }
    }
}

/// The guard of every line of a file, as transitions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Guards {
    /// `(first line, conditions outermost first)`: the conditions hold from that line until the
    /// next transition. Lines before the first transition are unconditional.
    pub transitions: Vec<(u32, Vec<String>)>,
    /// Unbalanced directives, as `line: message`.
    pub warnings: Vec<String>,
}

impl Guards {
    /// The conditions that enclose `line`.
    pub fn at(&self, line: u32) -> &[String] {
        at(&self.transitions, line)
    }
}

/// The conditions that enclose `line`, given a file's guard transitions.
pub fn at(transitions: &[(u32, Vec<String>)], line: u32) -> &[String] {
    let i = transitions.partition_point(|(l, _)| *l <= line);
    if i == 0 {
        &[]
    } else {
        &transitions[i - 1].1
    }
}
