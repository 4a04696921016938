//! search_code's part of a segment: its definitions as documents for ranked natural-language
//! search (BM25F over four fields, see [`extract::Field`]).
//!
//! * [`terms`]: words to stemmed terms, for documents and queries alike;
//! * [`extract`]: a file's documents, made in the build's per-file pass;
//! * [`write`]: the documents spooled in file order during the scan, and the segment's files
//!   made from them after the names are merged;
//! * [`read`]: those files in an open segment.
//!
//! The files:
//! * `codedocs.dat`: the number of documents, the average length of each field, the first
//!   document of each file (documents are in file order, so a document's file is found by a
//!   binary search), then [`DOC_LEN`] bytes a document: the offset of its definition in
//!   `defs.dat` (6 bytes) and its [`extract::DocHead`];
//! * `codeterms.fst`: term → offset of its postings in `codepost.dat`;
//! * `codepost.dat`: per term, its document count, then per document the gap from the last
//!   one and the term's frequency in each field ([`put_tf`]).

pub mod extract;
pub mod read;
pub mod terms;
pub mod write;

use super::codec::Reader;
use extract::{FIELDS, HEAD_LEN};

/// Bytes of a document in `codedocs.dat`.
pub const DOC_LEN: usize = 6 + HEAD_LEN;

/// The files of a segment's code search part.
pub fn files() -> [&'static str; 3] {
    ["codedocs.dat", "codeterms.fst", "codepost.dat"]
}

/// Appends a term's frequency in each field: one byte for the common case (only in the body,
/// fewer than 128 times), else a byte of flags and counts (name and path up to 3, comment up to
/// 7) and a byte of the body's count.
pub fn put_tf(out: &mut Vec<u8>, tf: [u8; FIELDS]) {
    let [name, comment, path, body] = tf;
    if name == 0 && comment == 0 && path == 0 && body < 0x80 {
        out.push(body);
    } else {
        out.push(0x80 | name.min(3) | (path.min(3) << 2) | (comment.min(7) << 4));
        out.push(body);
    }
}

/// Reads what [`put_tf`] wrote.
pub fn read_tf(r: &mut Reader<'_>) -> [u8; FIELDS] {
    let b = r.u8();
    if b < 0x80 {
        return [0, 0, 0, b];
    }
    [b & 3, (b >> 4) & 7, (b >> 2) & 3, r.u8()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_frequencies_round_trip_capped() {
        for (tf, bytes, back) in [
            ([0, 0, 0, 5], 1, [0, 0, 0, 5]),
            ([0, 0, 0, 200], 2, [0, 0, 0, 200]),
            ([1, 2, 1, 0], 2, [1, 2, 1, 0]),
            ([9, 9, 9, 9], 2, [3, 7, 3, 9]),
        ] {
            let mut out = Vec::new();
            put_tf(&mut out, tf);
            assert_eq!(out.len(), bytes, "{tf:?}");
            assert_eq!(read_tf(&mut Reader::new(&out)), back);
        }
    }
}
