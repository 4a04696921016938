//! The `#if` guard stack: which branch conditions enclose each line of a file.
//!
//! Conditions are rendered as the contract says: `#ifdef X` → `X`, `#ifndef X` → `!X`,
//! `#if E` → `E`, `#else` → the negation of every earlier branch, `#elif F` → the negations of
//! the earlier branches and `(F)`. A file's include guard (`#ifndef X` / `#define X` around the
//! whole file) is not a condition anyone asks about and is left out.
//!
//! What is kept is bounded, whatever the file: a line shows at most [`MAX_DEPTH`] conditions,
//! a condition at most [`MAX_CONDITION_BYTES`] bytes (an `#elif` at most [`MAX_NEGATED`] earlier
//! branches), and a file at most [`MAX_FILE_GUARD_BYTES`] of condition text over all its
//! transitions; each cut is stated in the text (`… N more conditions`), which no `#if`
//! evaluator reads as true or false. The kernel's deepest line has 39 conditions, its longest
//! condition 788 bytes and its largest file 54 KB of guard text: the cuts never bite there.

/// Conditions shown for one line; deeper ones are summed up in a last `… N more conditions`.
pub const MAX_DEPTH: usize = 64;
/// Bytes of one rendered condition; a longer one ends with `… N more bytes`.
pub const MAX_CONDITION_BYTES: usize = 4096;
/// Earlier branches an `#elif`/`#else` names as negations; more are counted, not named.
pub const MAX_NEGATED: usize = 64;
/// Condition text stored for one file over all its transitions; later lines show one cut note.
pub const MAX_FILE_GUARD_BYTES: usize = 1 << 20;
/// Unbalanced-directive warnings kept for one file; more are counted.
pub const MAX_WARNINGS: usize = 100;

/// One `#if … #endif` group while it is open.
#[derive(Debug)]
struct Frame {
    /// Negations of the branches already passed (`!X`, `!(E)`), the first [`MAX_NEGATED`].
    negated: Vec<String>,
    /// Branches passed beyond those in `negated`.
    negated_cut: usize,
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
    /// `(first line, open branches outermost first, depth)`, in line order; only the first
    /// `MAX_DEPTH + 1` branches are kept (one more for a hidden include guard).
    transitions: Vec<(u32, Vec<u32>, usize)>,
    /// The branch that is the file's include guard candidate.
    include_guard: Option<u32>,
    /// The branch that is a trace header's multi-read guard: always left out.
    multi_read_guard: Option<u32>,
    /// Problems found (unbalanced directives, identifiers too long to index), as
    /// `line: message`.
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
    let cond = cut(cond, MAX_CONDITION_BYTES - 32);
    match directive {
        Directive::Ifdef => (cond.to_string(), format!("!{cond}")),
        Directive::Ifndef => (format!("!{cond}"), cond.to_string()),
        Directive::If => (cond.to_string(), format!("!({cond})")),
    }
}

/// `text` cut to at most `max` bytes (at a character boundary), the cut stated.
fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut end = max.saturating_sub(24);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} … {} more bytes", &text[..end], text.len() - end).into()
}

/// The branch text of an `#elif`/`#else`: the earlier branches' negations and `pos`.
fn join_branches(negated: &[String], negated_cut: usize, pos: Option<String>) -> String {
    let mut parts: Vec<String> = negated.to_vec();
    if negated_cut > 0 {
        parts.push(format!("… {negated_cut} more earlier branches"));
    }
    parts.extend(pos);
    cut(&parts.join(" && "), MAX_CONDITION_BYTES).into_owned()
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
        // Past the kept depth a line is summed up, not listed: memory stays linear in depth.
        let open: Vec<u32> = self
            .frames
            .iter()
            .take(MAX_DEPTH + 1)
            .map(|f| f.branch)
            .collect();
        let depth = self.frames.len();
        if let Some(last) = self.transitions.last_mut() {
            if last.0 == from_line {
                last.1 = open;
                last.2 = depth;
                return;
            }
            if last.1 == open && last.2 == depth {
                return;
            }
        } else if open.is_empty() {
            return;
        }
        self.transitions.push((from_line, open, depth));
    }

    /// `#if`, `#ifdef` or `#ifndef` on `line`; the group applies from `next_line`.
    pub fn open(&mut self, directive: Directive, cond: &str, line: u32, next_line: u32) {
        let (pos, neg) = render(directive, cond);
        let branch = self.push_branch(pos);
        self.frames.push(Frame {
            negated: vec![neg],
            negated_cut: 0,
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

    /// Marks the group just opened, the outermost, as a trace header's multi-read guard
    /// (`#if !defined(_TRACE_X_H) || defined(TRACE_HEADER_MULTI_READ)`).
    pub fn mark_multi_read_guard(&mut self) {
        if self.frames.len() == 1 && self.multi_read_guard.is_none() {
            self.multi_read_guard = Some(self.frames[0].branch);
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
        let text = join_branches(&frame.negated, frame.negated_cut, Some(pos));
        let branch = self.push_branch(text);
        if let Some(frame) = self.frames.last_mut() {
            if frame.negated.len() < MAX_NEGATED {
                frame.negated.push(neg);
            } else {
                frame.negated_cut += 1;
            }
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
        let text = join_branches(&frame.negated, frame.negated_cut, None);
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
        let guard = if include_guard_closed_at_end {
            self.include_guard
        } else {
            None
        };
        let multi_read = self.multi_read_guard;
        let hidden = |b: &u32| Some(*b) == guard || Some(*b) == multi_read;
        let mut transitions: Vec<(u32, Vec<String>)> = Vec::with_capacity(self.transitions.len());
        let mut budget = MAX_FILE_GUARD_BYTES;
        let mut cut_note: Option<String> = None;
        for (line, open, depth) in self.transitions {
            let depth = depth - open.iter().filter(|b| hidden(b)).count();
            let shown = if depth > MAX_DEPTH {
                MAX_DEPTH - 1
            } else {
                depth
            };
            let mut conds: Vec<String> = open
                .iter()
                .filter(|b| !hidden(b))
                .take(shown)
                .map(|b| self.branches[*b as usize].clone())
                .collect();
            if depth > shown {
                conds.push(format!("… {} more conditions", depth - shown));
            }
            let bytes: usize = conds.iter().map(String::len).sum();
            if cut_note.is_none() && bytes > budget {
                cut_note = Some(format!(
                    "… guards cut from line {line}: over {} MiB of conditions in this file",
                    MAX_FILE_GUARD_BYTES >> 20
                ));
            }
            match &cut_note {
                // One note for every guarded line after the cut; unguarded lines cost nothing.
                Some(note) if !conds.is_empty() => conds = vec![note.clone()],
                Some(_) => {}
                None => budget -= bytes,
            }
            match transitions.last_mut() {
                Some(last) if last.0 == line => last.1 = conds,
                Some(last) if last.1 == conds => {}
                None if conds.is_empty() => {}
                _ => transitions.push((line, conds)),
            }
        }
        if self.warnings.len() > MAX_WARNINGS {
            let more = self.warnings.len() - MAX_WARNINGS;
            self.warnings.truncate(MAX_WARNINGS);
            self.warnings.push(format!("… {more} more warnings"));
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
    /// Unbalanced directives and identifiers too long to index, as `line: message`; at most
    /// [`MAX_WARNINGS`] and a count of the rest.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    /// Bytes the index stores for `src`'s guards and warnings: knav's file record writes each
    /// count, line and string length as a LEB128 varint, then the string's bytes.
    fn record_bytes(src: &str) -> (usize, Guards) {
        fn varint(n: usize) -> usize {
            (usize::BITS - (n | 1).leading_zeros()).div_ceil(7) as usize
        }
        let g = scan(src.as_bytes()).guards;
        let string = |s: &String| varint(s.len()) + s.len();
        let guards: usize = (g.transitions.iter())
            .map(|(line, conds)| {
                varint(*line as usize)
                    + varint(conds.len())
                    + conds.iter().map(string).sum::<usize>()
            })
            .sum();
        let warnings: usize = g.warnings.iter().map(string).sum();
        let bytes = varint(g.transitions.len()) + guards + varint(g.warnings.len()) + warnings;
        (bytes, g)
    }

    #[test]
    fn four_thousand_nested_ifdefs_give_a_small_index_record_that_states_the_cut() {
        // 4,000 levels took 1.1 GB while indexing: every line stored its whole stack.
        let depth = 4000;
        let mut src = "#ifdef CONFIG_X86
int x;
"
        .repeat(depth);
        src.push_str(
            &"#endif
"
            .repeat(depth),
        );
        let (bytes, g) = record_bytes(&src);
        assert!(bytes < 2 << 20, "{bytes} bytes of guards");
        let deep = g.at(2 * 100);
        assert_eq!(deep.len(), MAX_DEPTH);
        assert_eq!(deep[0], "CONFIG_X86");
        assert_eq!(
            deep.last().map(String::as_str),
            Some("… 37 more conditions")
        );
        assert_eq!(
            g.at(2 * 10),
            vec!["CONFIG_X86"; 10],
            "shallow lines are whole"
        );
        let deepest = g.at(2 * depth as u32);
        assert_eq!(deepest.len(), 1);
        assert!(
            deepest[0].starts_with("… guards cut from line "),
            "{deepest:?}"
        );
        assert!(
            g.at(3 * depth as u32 + 1).is_empty(),
            "after the last #endif"
        );
    }

    #[test]
    fn twenty_thousand_nested_ifdefs_stay_within_the_file_guard_budget() {
        // A 500 KB file of 20,000 levels drove knav index to 24 GB and the OOM killer.
        let depth = 20_000;
        let mut src = "#ifdef CONFIG_X86
"
        .repeat(depth);
        src.push_str(
            "int x;
",
        );
        src.push_str(
            &"#endif
"
            .repeat(depth),
        );
        let (bytes, g) = record_bytes(&src);
        assert!(bytes < MAX_FILE_GUARD_BYTES + (1 << 20), "{bytes} bytes");
        let text: usize = g
            .transitions
            .iter()
            .flat_map(|t| &t.1)
            .map(String::len)
            .sum();
        assert!(
            text <= MAX_FILE_GUARD_BYTES + 256,
            "{text} bytes of conditions"
        );
        let last = g.at(depth as u32 + 1);
        assert_eq!(last.len(), 1);
        assert!(
            last[0].starts_with("… guards cut from line ")
                && last[0].ends_with("MiB of conditions in this file"),
            "{last:?}"
        );
    }

    #[test]
    fn a_long_elif_chain_names_a_bounded_number_of_earlier_branches() {
        // 10,000 `#elif 0` took 1.2 GB and a 382 MB index: each branch named all earlier ones.
        let n = 10_000;
        let mut src = String::from(
            "#if 0
int a;
",
        );
        src.push_str(
            &"#elif 0
int b;
"
            .repeat(n),
        );
        src.push_str(
            "#else
int c;
#endif
",
        );
        let (bytes, g) = record_bytes(&src);
        assert!(bytes < 2 << 20, "{bytes} bytes");
        assert_eq!(g.at(4), ["!(0) && (0)"], "a short chain is whole");
        // `#elif` number 100 (line 201) names the `#if` and 63 more, and counts the rest.
        let hundredth = g.at(202);
        assert_eq!(hundredth.len(), 1);
        assert!(hundredth[0].starts_with("!(0) && !(0) && "));
        assert!(
            hundredth[0].ends_with(" && … 36 more earlier branches && (0)"),
            "{}",
            hundredth[0]
        );
        assert_eq!(hundredth[0].matches("!(0)").count(), MAX_NEGATED);
        let last = g.at(2 * n as u32 + 4);
        assert_eq!(last.len(), 1);
        assert!(last[0].starts_with("… guards cut from line "), "{last:?}");
        assert!(last[0].len() <= MAX_CONDITION_BYTES);
    }

    #[test]
    fn a_huge_condition_is_cut_with_the_bytes_left_out_stated() {
        let cond = "defined(CONFIG_A) || ".repeat(10_000) + "0";
        let src = format!(
            "#if {cond}
int x;
#endif
"
        );
        let g = scan(src.as_bytes()).guards;
        let shown = &g.at(2)[0];
        assert!(shown.len() <= MAX_CONDITION_BYTES, "{}", shown.len());
        assert!(shown.starts_with("defined(CONFIG_A) || "));
        assert!(
            shown.ends_with("more bytes"),
            "{}",
            &shown[shown.len() - 40..]
        );
    }

    #[test]
    fn thousands_of_unbalanced_directives_keep_a_bounded_list_of_warnings() {
        let g = scan("#endif\n".replace("\\n", "\n").repeat(5000).as_bytes()).guards;
        assert_eq!(g.warnings.len(), MAX_WARNINGS + 1);
        assert_eq!(g.warnings[MAX_WARNINGS], "… 4900 more warnings");
    }
}
