//! symbol_history: the commits that changed a definition's lines, newest first, from the
//! history index (`knav_index::git::history`), with the commit that introduced it marked and moves
//! to another file followed.

use std::collections::HashSet;

use knav_c::spans::SpanKind;
use knav_index::git::history::{Change, History};
use knav_index::git::Quoted;

use crate::envelope::{Envelope, HistoryEntry, Results};
use crate::query::{Page, DEFAULT_LIMIT, MAX_LIMIT};

const TOOL: &str = "symbol_history";

/// The revision whose commits a history answer needs: HEAD, or the revision (a range's end)
/// asked.
pub fn tip_of(rev: Option<&str>) -> &str {
    match rev.map(|r| r.split_once("..").map_or(r, |(_, b)| b)) {
        Some(t) if !t.is_empty() && !t.starts_with('.') => t,
        _ => "HEAD",
    }
}

/// True when the history index in `index_dir` has read the commits `tip` reaches, or when
/// `tip` names nothing (there is nothing to build; the answer says why).
pub fn has_tip(root: &std::path::Path, index_dir: &std::path::Path, tip: &str) -> bool {
    let Ok(head) = knav_index::git::resolve(root, tip) else {
        return true;
    };
    matches!(History::open(index_dir), Ok(Some(h)) if h.tips().contains(&head.commit))
}

/// symbol_history for the tree at `root` whose index is in `index_dir`: the history index
/// brought up to date with HEAD first (built when there is none, if `build`), the commits
/// bounded by `rev` (`A..B`, or what one revision reaches). The `GIT_*` variables git ran
/// with are named in a warning.
#[allow(clippy::too_many_arguments)]
pub fn answer(
    root: &std::path::Path,
    index_dir: &std::path::Path,
    symbol: &str,
    file: Option<&str>,
    rev: Option<&str>,
    page: &Page,
    build: bool,
    progress: &mut knav_index::progress::Progress,
) -> Envelope {
    let mut env = answer_from_git(root, index_dir, symbol, file, rev, page, build, progress);
    knav_index::git::note_environment(&mut env.warning);
    env
}

#[allow(clippy::too_many_arguments)]
fn answer_from_git(
    root: &std::path::Path,
    index_dir: &std::path::Path,
    symbol: &str,
    file: Option<&str>,
    rev: Option<&str>,
    page: &Page,
    build: bool,
    progress: &mut knav_index::progress::Progress,
) -> Envelope {
    let root_s = root.display().to_string();
    let fail = |e: String| {
        let mut env = Envelope::error(TOOL, &root_s, e);
        env.next_tools = vec![TOOL];
        env
    };
    let tip = tip_of(rev);
    let head = match knav_index::git::resolve(root, tip) {
        Ok(h) => h,
        Err(e) => return fail(e.to_string()),
    };
    let hist = match History::open(index_dir) {
        Ok(Some(h)) if h.tips().contains(&head.commit) => h,
        Ok(_) if build => {
            if let Err(e) = knav_index::git::history::update(root, index_dir, Some(tip), progress) {
                return fail(format!("cannot build the history index: {e}"));
            }
            match History::open(index_dir) {
                Ok(Some(h)) => h,
                Ok(None) => return fail("the history index was not written".into()),
                Err(e) => return fail(e),
            }
        }
        Ok(Some(h)) => h,
        Ok(None) => {
            return fail(format!(
                "{root_s} has no history index; run `knav index --history --root {root_s}`"
            ))
        }
        Err(e) => return fail(e),
    };
    let commits = match rev.map(|r| knav_index::git::rev_list(root, r)).transpose() {
        Ok(c) => c,
        Err(e) => return fail(e.to_string()),
    };
    symbol_history(&root_s, &hist, symbol, file, commits.as_ref(), page)
}

/// The history of `symbol`: every commit that touched a definition of that name (in `file`
/// and the files it moved from or to, when given; in `commits`, when given), newest first.
pub fn symbol_history(
    root: &str,
    hist: &History,
    symbol: &str,
    file: Option<&str>,
    commits: Option<&HashSet<String>>,
    page: &Page,
) -> Envelope {
    let touches = hist.touches(symbol);
    let mut env = Envelope::new(TOOL, root);
    if touches.is_empty() {
        env.error = Some(format!(
            "no commit of the {} in the history touched a definition named '{}' (functions, \
             struct/union/enum bodies and #defines of .c and .h files)",
            hist.commits().len(),
            Quoted(symbol)
        ));
        env.next_tools = vec!["find_definition"];
        return env;
    }
    // The files of `file`'s definition, following its moves both ways.
    let files: Option<HashSet<u32>> = file.map(|f| {
        let mut set: HashSet<u32> = touches
            .iter()
            .filter(|t| hist.path(t.path) == f)
            .map(|t| t.path)
            .collect();
        loop {
            let before = set.len();
            for t in &touches {
                if let Some(from) = t.from {
                    if set.contains(&from) || set.contains(&t.path) {
                        set.insert(from);
                        set.insert(t.path);
                    }
                }
            }
            if set.len() == before {
                break;
            }
        }
        set
    });
    let introduced = touches
        .iter()
        .filter(|t| t.change == Change::Added)
        .filter(|t| files.as_ref().is_none_or(|f| f.contains(&t.path)))
        .map(|t| t.commit)
        .min();
    let mut kept: Vec<_> = touches
        .iter()
        .filter(|t| files.as_ref().is_none_or(|f| f.contains(&t.path)))
        .filter(|t| {
            commits.is_none_or(|c| {
                hist.commits()
                    .get(t.commit as usize)
                    .is_some_and(|info| c.contains(&info.id))
            })
        })
        .collect();
    kept.sort_by(|a, b| b.commit.cmp(&a.commit).then(a.path.cmp(&b.path)));
    env.total = kept.len() as u64;
    let limit = match page.limit {
        0 => DEFAULT_LIMIT,
        n => n.min(MAX_LIMIT),
    };
    env.limit = limit;
    env.offset = page.offset;
    let shown: Vec<HistoryEntry> = kept
        .iter()
        .skip(page.offset as usize)
        .take(limit as usize)
        .filter_map(|t| {
            let c = hist.commits().get(t.commit as usize)?;
            Some(HistoryEntry {
                commit: c.id.chars().take(12).collect(),
                date: date(c.time),
                author: c.author.clone(),
                subject: c.subject.clone(),
                path: hist.path(t.path).to_string(),
                kind: match t.kind {
                    SpanKind::Function => "function",
                    SpanKind::Type => "type",
                    SpanKind::Macro => "macro",
                },
                change: match t.change {
                    Change::Changed => "changed",
                    Change::Added => "added",
                    Change::Removed => "removed",
                    Change::Moved => "moved",
                },
                added: t.added,
                removed: t.removed,
                from: t.from.map(|f| hist.path(f).to_string()),
                introduced: Some(t.commit) == introduced && t.change == Change::Added,
            })
        })
        .collect();
    env.truncated = page.offset + (shown.len() as u64) < env.total;
    if introduced.is_none() {
        env.message = Some(format!(
            "'{}' was there before the oldest commit the history read: no commit \
             introduced it",
            Quoted(symbol)
        ));
    }
    env.results = Some(Results::History(shown));
    env.next_tools = vec!["get_symbol_body", "compare_versions"];
    env
}

/// `YYYY-MM-DD` of seconds since the epoch (UTC; the civil calendar from days).
fn date(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_utc_calendar_days() {
        assert_eq!(super::date(0), "1970-01-01");
        assert_eq!(super::date(1_670_768_100), "2022-12-11");
        assert_eq!(super::date(951_782_400), "2000-02-29");
    }
}
