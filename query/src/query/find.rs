//! search_symbols: the defined names matching a query. Every whitespace-separated token must
//! match (AND): a token matches a name when it starts the name or one of its `_`-separated
//! parts, ignoring case (`ext4 read iter` finds `ext4_file_read_iter`; a one-letter token must
//! be a whole part). A token holding `_` (`file_read`) must also start at a part boundary. A
//! query written `/REGEX/` is a regular expression every defined name is matched against
//! whole, run as a DFA over the FST of names (the defined ones kept).
//!
//! Candidates come from the segments' part indexes ([`knav_index::defined`]), never from a
//! scan of the name list. Order: a name equal to the query (its tokens joined by `_`) first, then
//! the definition ranking of each name's best definition (the kernel before `tools/` and
//! `samples/`, `arch/um` after the other architectures, bodies before `#define`s before
//! members before declarations, generic before `arch/`), shorter names first, then name order.

use knav_ctags::Kind;

use super::lookup::Found;
use super::Query;
use crate::envelope::{Envelope, Results};
use knav_index::{at_boundary, intersect};
use knav_index::{NameInfo, PartsOf};

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "search_symbols";

/// Candidates checked one by one (their definitions read, about 3 µs each) at most with a path
/// prefix; more are refused.
const MAX_CHECKED: usize = 20_000;

/// Candidates of the older segments of a refreshed index checked one by one at most; past it
/// the total may count names whose definitions all changed (and the answer says so).
const MAX_RECHECKED: usize = 2_000;

/// The kind names `--kind` takes.
pub fn kind_names() -> Vec<&'static str> {
    Kind::ALL
        .iter()
        .filter(|k| !matches!(k, Kind::Entry | Kind::Label | Kind::Local))
        .map(|k| k.name())
        .collect()
}

/// The kind named `name`, or an error listing the kinds.
pub fn parse_kind(name: &str) -> Result<Kind, String> {
    Kind::ALL
        .iter()
        .copied()
        .find(|k| k.name() == name && kind_names().contains(&name))
        .ok_or_else(|| {
            format!(
                "unknown kind {}; the kinds are {}",
                crate::envelope::quote(name),
                kind_names().join(", ")
            )
        })
}

/// A name that matched, in segment `seg`.
#[derive(Clone, Copy, Debug)]
struct Hit {
    seg: usize,
    id: u64,
    info: NameInfo,
    exact: bool,
}

/// Answers search_symbols for `query`, keeping names with a definition of `kind` when given.
pub fn search_symbols(q: &Query<'_>, query: &str, kind: Option<Kind>) -> Envelope {
    let query = query.trim();
    let regex = query
        .strip_prefix('/')
        .and_then(|r| r.strip_suffix('/'))
        .filter(|r| !r.is_empty());
    let mut hits = match regex {
        Some(re) => match regex_hits(q, re) {
            Ok(h) => h,
            Err(e) => return q.envelope_error(TOOL, e),
        },
        None => match token_hits(q, query) {
            Ok(h) => h,
            Err(e) => return q.envelope_error(TOOL, e),
        },
    };
    if let Some(k) = kind {
        hits.retain(|h| h.info.kinds & (1 << k as u8) != 0);
    }
    let mut env = q.envelope(TOOL);
    // A refreshed index holds a name again in its newer segment: the older copy goes (found
    // from the newer segment's few names, not by naming every candidate).
    let newest = q.snap.segments.len() - 1;
    if newest > 0 {
        let mut older: std::collections::HashSet<(usize, u64)> = Default::default();
        for h in hits.iter().filter(|h| h.seg > 0) {
            let Some(name) = q.snap.segments[h.seg].search().and_then(|t| t.name(h.id)) else {
                continue;
            };
            for s in 0..h.seg {
                if let Some(id) = q.snap.segments[s]
                    .search()
                    .and_then(|t| t.id_of(name.as_bytes()))
                {
                    older.insert((s, id));
                }
            }
        }
        hits.retain(|h| !older.contains(&(h.seg, h.id)));
    }
    // An older segment's name whose definitions all changed is gone, and a path prefix needs
    // each name's definitions: checked one by one (the newest segment's names are all live).
    let path_prefix = q.page.path_prefix.is_some();
    let checked = hits
        .iter()
        .filter(|h| path_prefix || h.seg < newest)
        .count();
    if checked
        > if path_prefix {
            MAX_CHECKED
        } else {
            MAX_RECHECKED
        }
    {
        if path_prefix {
            return q.envelope_error(
                TOOL,
                format!(
                    "{} names match '{query}', too many to filter by path; add a token or --kind",
                    hits.len()
                ),
            );
        }
        env.warn(format!(
            "{checked} names match: the total may count names whose definitions all changed \
             since the last full `knav index`"
        ));
    } else if checked > 0 {
        hits.retain(|h| {
            if !path_prefix && h.seg == newest {
                return true;
            }
            q.snap.segments[h.seg]
                .search()
                .and_then(|t| t.name(h.id))
                .is_some_and(|name| !definitions(q, &name, kind).is_empty())
        });
    }
    super::page::order_pages(q, &mut hits, |h| {
        (!h.exact, h.info.rank, h.info.len, h.seg, h.id)
    });
    let page = q.paginate(&mut env, hits);
    let mut records = Vec::with_capacity(page.len());
    for h in page {
        let Some(name) = q.snap.segments[h.seg].search().and_then(|t| t.name(h.id)) else {
            q.snap.segments[h.seg].mark_damaged("symnames.fst", "a name id has no name");
            continue;
        };
        let defs = definitions(q, &name, kind);
        let (kept, _) = q.by_config(defs.clone());
        let (best, active) = match kept.first() {
            Some(&(f, active)) => (f, active),
            None => match defs.first() {
                Some(&f) => (f, Some(false)),
                None => continue,
            },
        };
        let mut r = q.def_record(&best);
        if q.page.active.is_some() {
            r.active = Some(active);
        }
        records.push(r);
    }
    if env.total == 0 {
        env.message = Some(format!(
            "no defined name matches '{query}'{}; try fewer or shorter tokens, or \
             find_references / grep for text",
            kind.map_or(String::new(), |k| format!(" with kind {}", k.name()))
        ));
        env.next_tools = vec!["find_references"];
    } else {
        env.next_tools = vec!["get_symbol_body", "find_callers", "find_definition"];
    }
    env.results = Some(Results::Records(records));
    env
}

/// `name`'s live definitions (of `kind`, under the path prefix), ranked.
fn definitions<'a, 's: 'a>(q: &Query<'s>, name: &'a str, kind: Option<Kind>) -> Vec<Found<'a>> {
    let mut defs = q.definitions(name);
    defs.retain(|f| {
        !matches!(f.def.kind, Kind::Entry | Kind::Label | Kind::Local)
            && kind.is_none_or(|k| f.def.kind == k)
            && q.wanted_file(f.seg, f.def.file)
    });
    defs
}

/// The names every token of `query` matches, per segment.
fn token_hits(q: &Query<'_>, query: &str) -> Result<Vec<Hit>, String> {
    let tokens: Vec<String> = query
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .filter(|t| t.bytes().any(|b| b != b'_'))
        .collect();
    if tokens.is_empty() {
        return Err(format!(
            "query {} has no token to match; give parts of a name (ext4 read iter) or /REGEX/",
            crate::envelope::quote(query)
        ));
    }
    if let Some(t) = tokens.iter().find(|t| !crate::query::valid_name(t)) {
        return Err(format!(
            "token {} is not part of a C identifier; use /REGEX/ for patterns",
            crate::envelope::quote(t)
        ));
    }
    let joined = tokens.join("_");
    let typed = query.split_whitespace().collect::<Vec<_>>().join("_");
    let mut hits = Vec::new();
    for (s, seg) in q.snap.segments.iter().enumerate() {
        // Not opened: the segment's damage replaces the answer.
        let Some(search) = seg.search() else {
            return Ok(Vec::new());
        };
        let mut ids: Option<Vec<u64>> = None;
        'tokens: for t in &tokens {
            for sub in t.split('_').filter(|p| !p.is_empty()) {
                let Some(found) = search.ids(PartsOf::Names, sub.as_bytes(), t.len() == 1) else {
                    seg.mark_damaged("symparts.dat", "a part's names do not decode");
                    return Ok(Vec::new());
                };
                ids = Some(match ids {
                    None => found,
                    Some(prev) => intersect(&prev, &found),
                });
                if ids.as_ref().is_some_and(Vec::is_empty) {
                    break 'tokens;
                }
            }
        }
        let mut ids = ids.unwrap_or_default();
        // A token of several parts must also appear whole, from a part boundary.
        let spanning: Vec<&String> = tokens.iter().filter(|t| t.contains('_')).collect();
        if !spanning.is_empty() {
            ids.retain(|&id| {
                search.name(id).is_some_and(|n| {
                    let n = n.to_ascii_lowercase();
                    spanning
                        .iter()
                        .all(|t| at_boundary(n.as_bytes(), t.as_bytes(), |b| b == b'_'))
                })
            });
        }
        let exact: Vec<u64> = [
            typed.as_str(),
            joined.as_str(),
            &joined.to_ascii_uppercase(),
        ]
        .iter()
        .filter_map(|n| search.id_of(n.as_bytes()))
        .collect();
        for id in ids {
            let Some(hit) = hit(seg, s, id, exact.contains(&id)) else {
                return Ok(Vec::new());
            };
            hits.push(hit);
        }
    }
    Ok(hits)
}

/// The hit of name `id` of segment `seg` (number `s`); `None` when the segment has no such
/// name (damage, marked on it).
fn hit(seg: &knav_index::segment::Segment, s: usize, id: u64, exact: bool) -> Option<Hit> {
    let Some(info) = seg.search().and_then(|t| t.info(id)) else {
        seg.mark_damaged("symnames.dat", "a name id is past its end");
        return None;
    };
    Some(Hit {
        seg: s,
        id,
        info,
        exact,
    })
}

/// The defined names regular expression `re` matches whole.
fn regex_hits(q: &Query<'_>, re: &str) -> Result<Vec<Hit>, String> {
    let dfa = NameRegex::new(re)?;
    let mut hits = Vec::new();
    for (s, seg) in q.snap.segments.iter().enumerate() {
        // Not opened: the segment's damage replaces the answer.
        let Some(search) = seg.search() else {
            return Ok(Vec::new());
        };
        for (shard, fst) in search.names().iter().enumerate() {
            use fst::{IntoStreamer, Streamer};
            let mut stream = fst.search(&dfa).into_stream();
            while let Some((_, offset)) = stream.next() {
                // Every name matched; the defined ones have an id.
                let Some(id) = search.id_at(shard, offset) else {
                    continue;
                };
                let Some(hit) = hit(seg, s, id, false) else {
                    return Ok(Vec::new());
                };
                hits.push(hit);
            }
        }
    }
    Ok(hits)
}

/// A regular expression over whole names, as a DFA the FST can be searched with.
pub(crate) struct NameRegex(regex_automata::dfa::dense::DFA<Vec<u32>>);

/// The largest DFA a query may build.
const MAX_DFA_BYTES: usize = 16 << 20;

impl NameRegex {
    pub(crate) fn new(re: &str) -> Result<NameRegex, String> {
        use regex_automata::dfa::dense;
        use regex_automata::util::syntax;
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(regex_automata::dfa::StartKind::Anchored)
                    .dfa_size_limit(Some(MAX_DFA_BYTES))
                    .determinize_size_limit(Some(MAX_DFA_BYTES)),
            )
            .syntax(syntax::Config::new().unicode(false).utf8(false))
            // Matched whole: a match must end where the name does.
            .build(&format!("(?:{re})$"))
            .map_err(|e| {
                // The syntax error itself is the last source of "error building NFA", its
                // last line the reason (`error: unclosed character class`).
                let mut last: &dyn std::error::Error = &e;
                while let Some(s) = last.source() {
                    last = s;
                }
                let text = last.to_string();
                let why = text
                    .lines()
                    .last()
                    .unwrap_or("")
                    .trim_start_matches("error: ");
                format!("bad regular expression /{re}/: {why}")
            })?;
        Ok(NameRegex(dfa))
    }
}

impl fst::Automaton for NameRegex {
    type State = Option<regex_automata::util::primitives::StateID>;

    fn start(&self) -> Self::State {
        use regex_automata::dfa::Automaton;
        let config =
            regex_automata::util::start::Config::new().anchored(regex_automata::Anchored::Yes);
        self.0.start_state(&config).ok()
    }

    fn is_match(&self, state: &Self::State) -> bool {
        use regex_automata::dfa::Automaton;
        state.is_some_and(|s| self.0.is_match_state(self.0.next_eoi_state(s)))
    }

    fn can_match(&self, state: &Self::State) -> bool {
        use regex_automata::dfa::Automaton;
        state.is_some_and(|s| !self.0.is_dead_state(s) && !self.0.is_quit_state(s))
    }

    fn accept(&self, state: &Self::State, byte: u8) -> Self::State {
        use regex_automata::dfa::Automaton;
        state.map(|s| self.0.next_state(s, byte))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fst::{IntoStreamer, Streamer};

    fn matches(re: &str, keys: &[&str]) -> Vec<String> {
        let fst = fst::Set::from_iter(keys.iter().copied()).unwrap();
        let dfa = NameRegex::new(re).unwrap();
        let mut out = Vec::new();
        let mut s = fst.search(&dfa).into_stream();
        while let Some(k) = s.next() {
            out.push(String::from_utf8(k.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn a_name_regex_matches_whole_names_only() {
        let keys = ["ext4_file_read_iter", "ext4_read", "vfs_read", "vfs_readv"];
        assert_eq!(
            matches("ext4_.*", &keys),
            ["ext4_file_read_iter", "ext4_read"]
        );
        assert_eq!(matches(".*_read", &keys), ["ext4_read", "vfs_read"]);
        assert_eq!(matches("vfs_readv?", &keys), ["vfs_read", "vfs_readv"]);
        assert!(
            matches("read", &keys).is_empty(),
            "whole names, not substrings"
        );
        let e = NameRegex::new("[a-z").err().unwrap();
        assert_eq!(e, "bad regular expression /[a-z/: unclosed character class");
    }

    #[test]
    fn kinds_are_parsed_by_their_ctags_names() {
        assert_eq!(parse_kind("function"), Ok(Kind::Function));
        let e = parse_kind("fn").unwrap_err();
        assert!(e.contains("'fn'") && e.contains("function, "), "{e}");
        assert!(parse_kind("label").is_err());
    }
}
