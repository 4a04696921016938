//! Edit distance between two names, a transposition of neighbours counting as one edit
//! (optimal string alignment, the restricted Damerau–Levenshtein distance): `copy_form_user` is
//! one edit from `copy_from_user`, not two. [`Within`] finds the names within a few such edits
//! in an FST, walking it with the distance's rows as the automaton's state (no automaton is
//! built beforehand, so a long name costs no more than a short one).

use fst::Automaton;

/// The edits (insertions, deletions, substitutions, transpositions of two neighbours) that turn
/// `a` into `b`, byte by byte.
pub fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    // Three rows: the one before the previous is what a transposition reaches back to.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 0..a.len() {
        cur[0] = i + 1;
        for j in 0..b.len() {
            let mut d = (prev[j] + usize::from(a[i] != b[j]))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                d = d.min(before[j - 1] + 1);
            }
            cur[j + 1] = d;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// An automaton accepting the keys within `max` edits of a name, a transposition of
/// neighbours counting as one ([`edit_distance`]).
pub struct Within<'a> {
    name: &'a [u8],
    max: u8,
}

impl<'a> Within<'a> {
    /// Keys within `max` edits of `name` (`max` at most 254).
    pub fn new(name: &'a [u8], max: u8) -> Self {
        Within {
            name,
            max: max.min(254),
        }
    }
}

/// The distance rows of the key read so far: the current one, the one before (transpositions
/// reach back to it) and the key's last byte. None once no key with this prefix can match.
#[derive(Clone)]
pub struct Rows {
    before: Vec<u8>,
    cur: Vec<u8>,
    last: Option<u8>,
}

impl Automaton for Within<'_> {
    type State = Option<Rows>;

    fn start(&self) -> Option<Rows> {
        let n = self.name.len();
        Some(Rows {
            before: vec![u8::MAX; n + 1],
            cur: (0..=n).map(|j| j.min(255) as u8).collect(),
            last: None,
        })
    }

    fn is_match(&self, state: &Option<Rows>) -> bool {
        state
            .as_ref()
            .is_some_and(|r| r.cur[self.name.len()] <= self.max)
    }

    fn can_match(&self, state: &Option<Rows>) -> bool {
        state.is_some()
    }

    fn accept(&self, state: &Option<Rows>, c: u8) -> Option<Rows> {
        let r = state.as_ref()?;
        let b = self.name;
        let mut next = vec![0u8; b.len() + 1];
        next[0] = r.cur[0].saturating_add(1);
        for j in 0..b.len() {
            let mut d = r.cur[j]
                .saturating_add(u8::from(b[j] != c))
                .min(r.cur[j + 1].saturating_add(1))
                .min(next[j].saturating_add(1));
            if j > 0 && r.last == Some(b[j]) && c == b[j - 1] {
                d = d.min(r.before[j - 1].saturating_add(1));
            }
            next[j + 1] = d;
        }
        // A row whose every entry is over the bound only grows (a transposition reaches back
        // one row, whose entries are at least this row's less one).
        if next.iter().all(|&d| d > self.max) {
            return None;
        }
        Some(Rows {
            before: r.cur.clone(),
            cur: next,
            last: Some(c),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{edit_distance, Within};
    use fst::{IntoStreamer, Set, Streamer};

    #[test]
    fn within_finds_exactly_the_keys_edit_distance_puts_within_the_bound() {
        let keys = [
            "copy_form_user",
            "copy_from_user",
            "copy_to_user",
            "generic_file_read_iter",
            "tcp_sendmsg",
            "tcp_sendmsg_locked",
            "vfs_read",
            "vfs_readv",
            "vfs_write",
        ];
        let set = Set::from_iter(keys).unwrap();
        for name in [
            "copy_form_user",
            "tcp_sendmgs",
            "generic_file_raed_iter",
            "vfs_raed",
        ] {
            for max in 0..=3u8 {
                let mut found = Vec::new();
                let mut s = set.search(Within::new(name.as_bytes(), max)).into_stream();
                while let Some(k) = s.next() {
                    found.push(String::from_utf8(k.to_vec()).unwrap());
                }
                let want: Vec<String> = keys
                    .iter()
                    .filter(|k| edit_distance(k.as_bytes(), name.as_bytes()) <= max as usize)
                    .map(|k| k.to_string())
                    .collect();
                assert_eq!(found, want, "{name} within {max}");
            }
        }
    }

    #[test]
    fn a_transposition_is_one_edit() {
        assert_eq!(edit_distance(b"copy_form_user", b"copy_from_user"), 1);
        assert_eq!(edit_distance(b"tcp_sendmgs", b"tcp_sendmsg"), 1);
        assert_eq!(edit_distance(b"ab", b"ba"), 1);
    }

    #[test]
    fn insertions_deletions_and_substitutions_count_one_each() {
        assert_eq!(edit_distance(b"", b""), 0);
        assert_eq!(edit_distance(b"", b"abc"), 3);
        assert_eq!(edit_distance(b"abc", b""), 3);
        assert_eq!(edit_distance(b"kitten", b"sitting"), 3);
        assert_eq!(edit_distance(b"v6.1", b"v6.12"), 1);
        assert_eq!(edit_distance(b"same", b"same"), 0);
    }
}
