//! Near-misses for a name that is not in the index: names sharing a prefix or a `_`-separated
//! part, or within one or two edits, that have a definition (from ctags or a `#define`). Found with automata over the FST.

use fst::automaton::{Levenshtein, Str};
use fst::{Automaton, IntoStreamer, Streamer};

use super::Query;
use knav_c::scan::Role;
use knav_index::segment::Postings;

use knav_index::distance::edit_distance;

/// True when a Levenshtein automaton of two edits is affordable for `name`: on a long name it
/// is huge (0.3 s to build for 20 characters), and very short names match too much.
pub(super) fn two_edits_allowed(name: &str) -> bool {
    (5..=10).contains(&name.len())
}

/// Names `aut` accepts that have a definition, at most `cap` per shard, appended to `out`.
pub(super) fn collect_defined<A: Automaton>(
    q: &Query<'_>,
    aut: A,
    cap: usize,
    out: &mut Vec<String>,
) {
    for seg in &q.snap.segments {
        for (shard, fst) in seg.names().iter().enumerate() {
            let mut stream = fst.search(&aut).into_stream();
            let mut n = 0;
            while let Some((k, off)) = stream.next() {
                // A definition from ctags, or a `#define` (a macro-definition posting).
                let entry = seg.entry_at(shard, off);
                let defined = !entry.defs.is_empty()
                    || Postings::new(entry.postings).any(|p| p.role == Role::MacroDef);
                if !defined {
                    continue;
                }
                if let Ok(s) = std::str::from_utf8(k) {
                    out.push(s.to_string());
                }
                n += 1;
                if n >= cap {
                    break;
                }
            }
        }
    }
}

/// Up to `max` near-misses of `name`, each marked `~`, closest first.
pub fn near_misses(q: &Query<'_>, name: &str, max: usize) -> Vec<String> {
    let mut cands = Vec::new();
    if name.len() <= 48 {
        // The prefix and part searches below cover long names.
        let edits = if two_edits_allowed(name) { 2 } else { 1 };
        if let Ok(lev) = Levenshtein::new(name, edits) {
            collect_defined(q, lev, 50, &mut cands);
        }
    }
    // The longest prefix ending before a `_`, then each `_`-separated part as a prefix.
    if let Some(cut) = name.rfind('_').filter(|c| *c > 0) {
        collect_defined(q, Str::new(&name[..=cut]).starts_with(), 50, &mut cands);
    }
    for part in name.split('_').filter(|p| p.len() >= 3) {
        collect_defined(
            q,
            Str::new(&format!("{part}_")).starts_with(),
            20,
            &mut cands,
        );
    }
    if name.len() >= 4 {
        collect_defined(q, Str::new(name).starts_with(), 20, &mut cands);
    }
    cands.sort();
    cands.dedup();
    cands.retain(|c| c != name);
    let common = |c: &str| {
        c.bytes()
            .zip(name.bytes())
            .take_while(|(a, b)| a == b)
            .count()
    };
    cands.sort_by_key(|c| {
        (
            edit_distance(c.as_bytes(), name.as_bytes()),
            usize::MAX - common(c),
            c.clone(),
        )
    });
    cands.truncate(max);
    cands.into_iter().map(|c| format!("~{c}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(super::edit_distance(b"vfs_raed", b"vfs_read"), 1);
        assert_eq!(super::edit_distance(b"kmap", b"kmap"), 0);
        assert_eq!(super::edit_distance(b"kmap", b"kunmap"), 2);
    }
}
