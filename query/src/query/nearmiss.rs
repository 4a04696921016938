//! Near-misses for a name that is not in the index: names within one or two edits (a
//! transposition counting as one), or sharing a prefix or a `_`-separated part, that have a
//! definition (from ctags or a `#define`); closest first, then the most used. Found with
//! automata over the FST.

use fst::automaton::Str;
use fst::{Automaton, IntoStreamer, Streamer};

use super::Query;
use knav_c::scan::Role;
use knav_index::segment::Postings;

use knav_index::{edit_distance, Within};

/// The edits a near-miss may be away from `name`: one for short names (which two edits turn
/// into too many others), two from five characters on.
pub(super) fn edits_allowed(name: &str) -> u8 {
    if name.len() < 5 {
        1
    } else {
        2
    }
}

/// A defined name and how used it is (the bytes of its postings: references and definitions).
pub(super) type Used = (String, usize);

/// Names `aut` accepts that have a definition, at most `cap` per shard, appended to `out`.
pub(super) fn collect_defined<A: Automaton>(
    q: &Query<'_>,
    aut: A,
    cap: usize,
    out: &mut Vec<Used>,
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
                    out.push((s.to_string(), entry.postings.len()));
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
    collect_defined(
        q,
        Within::new(name.as_bytes(), edits_allowed(name)),
        50,
        &mut cands,
    );
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
    let mut cands = by_use(cands);
    cands.retain(|(c, _)| c != name);
    let common = |c: &str| {
        c.bytes()
            .zip(name.bytes())
            .take_while(|(a, b)| a == b)
            .count()
    };
    cands.sort_by_key(|(c, used)| {
        (
            edit_distance(c.as_bytes(), name.as_bytes()),
            usize::MAX - common(c),
            usize::MAX - used,
            c.clone(),
        )
    });
    cands.truncate(max);
    cands.into_iter().map(|(c, _)| format!("~{c}")).collect()
}

/// Each name once, with its uses summed over the segments that hold it.
pub(super) fn by_use(mut names: Vec<Used>) -> Vec<Used> {
    names.sort();
    let mut out: Vec<Used> = Vec::with_capacity(names.len());
    for (n, used) in names {
        match out.last_mut() {
            Some((last, u)) if *last == n => *u += used,
            _ => out.push((n, used)),
        }
    }
    out
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
