//! BM25F's three formulas, for every ranked search of the index (search_docs's sections,
//! search_code's definitions): a term's inverse document frequency, a field's length
//! normalisation, and a term's weighted frequency saturated and weighted by its idf. Each
//! search keeps its own fields, weights and constants.

/// BM25's term-frequency saturation, as both searches use it.
pub const K1: f32 = 1.2;

/// The inverse document frequency of a term `df` of `n` documents hold.
pub fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// What a field of `len` words (against `avg` on average) divides its count by; `b` is how much
/// length counts (0: not at all, 1: fully).
pub fn norm(b: f32, len: f32, avg: f32) -> f32 {
    1.0 - b + b * len / avg
}

/// The score of a term of inverse document frequency `idf` and weighted, normalised frequency
/// `tf` in a document, saturated by [`K1`].
pub fn score(idf: f32, tf: f32) -> f32 {
    idf * tf / (K1 + tf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rarer_term_and_a_more_frequent_one_score_higher_but_saturate() {
        assert!(idf(1000.0, 1.0) > idf(1000.0, 100.0));
        assert!(idf(1000.0, 1000.0) > 0.0);
        let i = idf(1000.0, 10.0);
        assert!(score(i, 2.0) > score(i, 1.0));
        assert!(score(i, 1000.0) < i);
        assert_eq!(norm(0.0, 50.0, 10.0), 1.0);
        assert_eq!(norm(1.0, 20.0, 10.0), 2.0);
    }
}
