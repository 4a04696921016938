//! Runs of bytes found eight at a time (SWAR): the tokenizers' runs (identifiers, blanks)
//! end at an unpredictable byte, and a branch per byte mispredicts at the end of almost every
//! run.

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` equal to `b`.
fn eq(x: u64, b: u8) -> u64 {
    let z = x ^ (LO * b as u64);
    !(((z & !HI) + !HI) | z) & HI
}

/// The high bit of each byte of `x` (high bits clear) in `lo..=hi`.
fn within(x: u64, lo: u8, hi: u8) -> u64 {
    (x + LO * (0x80 - lo) as u64) & !(x + LO * (0x7f - hi) as u64) & HI
}

/// The end of the run of bytes at `i` that `of` marks (in a word, as high bits).
fn run_end(src: &[u8], mut i: usize, of: fn(u64) -> u64, byte: fn(u8) -> bool) -> usize {
    while let Some(w) = src.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let stop = !of(u64::from_le_bytes(*w)) & HI;
        if stop != 0 {
            return i + stop.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while i < src.len() && byte(src[i]) {
        i += 1;
    }
    i
}

/// The end of the identifier characters (`[A-Za-z0-9_]`) from `i`.
pub fn ident_end(src: &[u8], i: usize) -> usize {
    fn of(x: u64) -> u64 {
        let low = x & !HI;
        let alnum = within(low, b'0', b'9') | within(low | (LO * 0x20), b'a', b'z');
        (alnum | eq(x, b'_')) & !x
    }
    run_end(src, i, of, crate::scan::is_ident)
}

/// The end of the spaces and tabs from `i`.
pub fn blank_end(src: &[u8], i: usize) -> usize {
    run_end(
        src,
        i,
        |x| eq(x, b' ') | eq(x, b'\t'),
        |b| b == b' ' || b == b'\t',
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The ends a byte at a time.
    fn slow_end(src: &[u8], mut i: usize, byte: fn(u8) -> bool) -> usize {
        while i < src.len() && byte(src[i]) {
            i += 1;
        }
        i
    }

    #[test]
    fn every_byte_ends_an_identifier_or_not_as_the_byte_test_says() {
        for b in 0..=255u8 {
            let src = [
                b'a', b'b', b, b'c', b'd', b'e', b'f', b'g', b'h', b'i', b'j',
            ];
            assert_eq!(
                ident_end(&src, 0),
                slow_end(&src, 0, crate::scan::is_ident),
                "byte {b:#x}"
            );
            let blanks = [
                b' ', b'\t', b, b' ', b' ', b' ', b' ', b' ', b' ', b' ', b' ',
            ];
            assert_eq!(
                blank_end(&blanks, 0),
                slow_end(&blanks, 0, |c| c == b' ' || c == b'\t'),
                "byte {b:#x}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(256)))]
        #[test]
        fn runs_end_where_a_byte_at_a_time_says(
            src in proptest::collection::vec(
                prop_oneof![
                    Just(b'a'), Just(b'Z'), Just(b'_'), Just(b'7'), Just(b' '), Just(b'\t'),
                    Just(b'@'), Just(b'['), Just(b'`'), Just(b'{'), Just(b'/'), Just(b':'),
                    Just(0xC1u8), Just(0xE1u8), Just(0xDFu8), any::<u8>(),
                ],
                0..40,
            ),
            at in 0usize..40,
        ) {
            let at = at.min(src.len());
            prop_assert_eq!(ident_end(&src, at), slow_end(&src, at, crate::scan::is_ident));
            prop_assert_eq!(
                blank_end(&src, at),
                slow_end(&src, at, |c| c == b' ' || c == b'\t')
            );
        }
    }
}
