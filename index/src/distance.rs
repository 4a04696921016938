//! Edit distance between two names, a transposition of neighbours counting as one edit
//! (optimal string alignment, the restricted Damerau–Levenshtein distance): `copy_form_user` is
//! one edit from `copy_from_user`, not two.

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

#[cfg(test)]
mod tests {
    use super::edit_distance;

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
