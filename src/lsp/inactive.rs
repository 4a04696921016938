//! The code the configured `.config` does not build, as clangd's `inactiveRegions` extension
//! marks it: the notification `textDocument/inactiveRegions` with `{textDocument: {uri,
//! version}, regions: [Range]}`, sent to a client whose capabilities have
//! `textDocument.inactiveRegionsCapabilities.inactiveRegions: true`, after `didOpen`, `didSave`,
//! a change of the `.config` or the groups, and a first index becoming ready (the last two for
//! every open document), when the group `inactive` is served.
//!
//! A region covers the lines of an `#if` branch the active configuration decides false, the
//! directive lines themselves left out as clangd leaves them out (`#if X` … `#else` greys the
//! lines between the two); a file the configuration does not build at all (another
//! architecture's `arch/`, a C file Kbuild leaves out) is one region, the whole file. A branch
//! whose condition cannot be decided (a macro that is no `CONFIG_` option, as `#ifdef
//! __KERNEL__`; an option a `.config` does not list is off, as Kbuild reads it) is not marked.
//! Without an `activeConfig` nothing is inactive: the regions sent are none (which clears what
//! an earlier configuration marked).
//!
//! The guards are read from the text the user sees, the open buffer with its unsaved edits,
//! by the indexer's own guard scanner ([`crate::scan::scan`]), and decided by the query's
//! evaluator ([`crate::query::Query::guard_verdict`], [`crate::query::Query::file_verdict`]):
//! a branch just typed is greyed or not at once, without mapping the index's lines through
//! the edit.

use lsp_types::{Position, Range, Uri};
use serde_json::json;

use super::position::{char_of, Encoding, Lines};
use super::session::{read_text, Failure, Session};
use crate::query::{Query, Verdict};

/// The notification's method, as clangd names it.
pub const METHOD: &str = "textDocument/inactiveRegions";

/// The group that gates the notification (it answers no request).
pub const GROUP: &str = "inactive";

/// Sends `uri`'s inactive regions when the client takes them and the group is served; a
/// failure (no index yet, a `.config` that cannot be read) is logged, not shown.
pub fn send(s: &mut Session, uri: &Uri) {
    if !s.caps.inactive_regions || !super::notify::group_on(s, GROUP) {
        return;
    }
    match regions(s, uri) {
        Ok(regions) => {
            let version = s.docs.get(uri).map(|d| d.version);
            let params = json!({
                "textDocument": {"uri": uri.as_str(), "version": version},
                "regions": regions,
            });
            s.out.send(super::notification(METHOD, params));
        }
        Err(f) => super::notify::log(
            &s.out,
            &format!(
                "knav: no inactive regions for {}: {}",
                uri.as_str(),
                f.message
            ),
        ),
    }
}

/// Sends the inactive regions of every open document.
pub fn send_all(s: &mut Session) {
    for uri in s.docs.uris() {
        send(s, &uri);
    }
}

/// After a change of settings from `before`: every open document's regions, when the
/// `.config` or the groups changed.
pub fn settings_changed(s: &mut Session, before: &super::session::Options) {
    if s.options.active_config != before.active_config || s.options.groups != before.groups {
        send_all(s);
    }
}

/// The inactive regions of `uri` (its open buffer, else the file) under the active
/// configuration; none without one.
pub fn regions(s: &mut Session, uri: &Uri) -> Result<Vec<Range>, Failure> {
    if s.options.active_config.is_none() {
        return Ok(Vec::new());
    }
    let (tree, snap, path) = s.tree_of(uri)?;
    let page = s.page(&tree)?;
    let text = match s.docs.get(uri) {
        Some(doc) => doc.text.clone(),
        None => read_text(&tree, &path)
            .ok_or_else(|| Failure::failed(format!("{path} cannot be read")))?,
    };
    let Some(config) = page.active.clone() else {
        return Ok(Vec::new());
    };
    let q = Query::new(&snap, page);
    let lines = Lines::new(&text);
    let hidden = match q.file_verdict(&path, &config) {
        Verdict::Hidden(_) => vec![(0, last_line(&text, &lines))],
        _ => hidden_branches(&q, &text, &lines),
    };
    Ok(hidden
        .into_iter()
        .map(|(first, last)| whole_lines(&text, &lines, first, last, s.enc))
        .collect())
}

/// The 0-based line spans `(first, last)` of the `#if` branches of `text` the configuration
/// of `q` decides false. The directive that closes a false branch (`#else`, `#elif …` with its
/// continuation lines, `#endif`) is left out unless a false group around it hides it too.
fn hidden_branches(q: &Query<'_>, text: &str, lines: &Lines) -> Vec<(usize, usize)> {
    let guards = crate::scan::scan(text.as_bytes()).guards;
    let hidden = |conds: &[String]| {
        matches!(
            q.guard_verdict(conds.iter().map(String::as_str)),
            Some(Verdict::Hidden(_))
        )
    };
    // Per transition (1-based first line): its branch hidden, and the groups around its
    // innermost one hidden.
    let decided: Vec<(u32, bool, bool)> = guards
        .transitions
        .iter()
        .map(|(first, conds)| {
            let outer = &conds[..conds.len().saturating_sub(1)];
            (*first, hidden(conds), hidden(outer))
        })
        .collect();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let (mut t, mut in_directive) = (0, false);
    for i in 0..lines.count() {
        while decided.get(t).is_some_and(|d| d.0 as usize <= i + 1) {
            t += 1;
        }
        let (branch, around) = t.checked_sub(1).map_or((false, false), |k| {
            let (_, b, a) = decided[k];
            (b, a)
        });
        let line = lines.line(text, i).unwrap_or_default();
        let closing = in_directive || is_closing_directive(line);
        in_directive = closing && line.trim_end().ends_with('\\');
        if !branch || (closing && !around) {
            continue;
        }
        match spans.last_mut() {
            Some(last) if last.1 + 1 == i => last.1 = i,
            _ => spans.push((i, i)),
        }
    }
    spans
}

/// True when `line` is `#else`, `#elif…` or `#endif` (spaces allowed around the `#`).
fn is_closing_directive(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix('#') else {
        return false;
    };
    let word: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    matches!(
        word.as_str(),
        "else" | "elif" | "elifdef" | "elifndef" | "endif"
    )
}

/// The last line of `text` holding anything (0-based).
fn last_line(text: &str, lines: &Lines) -> usize {
    let n = lines.count().saturating_sub(1);
    if n > 0 && lines.line(text, n).is_some_and(str::is_empty) {
        n - 1
    } else {
        n
    }
}

/// Lines `first..=last` whole: from the first one's start to the last one's end.
fn whole_lines(text: &str, lines: &Lines, first: usize, last: usize, enc: Encoding) -> Range {
    let end = lines.line(text, last).unwrap_or_default();
    Range::new(
        Position::new(first as u32, 0),
        Position::new(last as u32, char_of(end, end.len(), enc)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_directives_are_told_apart() {
        assert!(is_closing_directive("  #  endif /* X */"));
        assert!(is_closing_directive("#elif defined(X)"));
        assert!(is_closing_directive("#else"));
        assert!(!is_closing_directive("#ifdef X"));
        assert!(!is_closing_directive("x = y; # endif"));
    }
}
