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
//!   `defs.dat` (5 bytes) and its [`extract::DocHead`];
//! * `codeterms.fst`: term → offset of its postings in `codepost.dat`;
//! * `codepost.dat`: per term, its document count, then per document the gap from the last
//!   one and the term's frequency in the name, comment and body ([`put_tf`]); then the count
//!   of files whose path has it, and per file the gap and the count (the path field of every
//!   document of a file is the file's, so it is kept once a file).

pub mod extract;
pub mod read;
pub mod terms;
pub mod write;

use super::codec::Reader;
use extract::{FIELDS, HEAD_LEN};

/// Bytes of a document in `codedocs.dat`.
pub const DOC_LEN: usize = 5 + HEAD_LEN;

/// The files of a segment's code search part.
pub fn files() -> [&'static str; 3] {
    ["codedocs.dat", "codeterms.fst", "codepost.dat"]
}

/// Appends a term's frequency in a document's name, comment and body (its path's is kept per
/// file) in one byte: the body's alone when only the body has it (up to 127), else a flag, the
/// name's (up to 1), the comment's (up to 3) and the body's (up to 15).
pub fn put_tf(out: &mut Vec<u8>, tf: [u8; FIELDS]) {
    let [name, comment, _, body] = tf;
    if name == 0 && comment == 0 {
        out.push(body.min(0x7f));
    } else {
        out.push(0x80 | (name.min(1) << 6) | (comment.min(3) << 4) | body.min(15));
    }
}

/// Reads what [`put_tf`] wrote.
pub fn read_tf(r: &mut Reader<'_>) -> [u8; FIELDS] {
    let b = r.u8();
    if b < 0x80 {
        return [0, 0, 0, b];
    }
    [(b >> 6) & 1, (b >> 4) & 3, 0, b & 15]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_frequencies_round_trip_capped() {
        for (tf, back) in [
            ([0, 0, 0, 5], [0, 0, 0, 5]),
            ([0, 0, 0, 200], [0, 0, 0, 127]),
            ([1, 2, 0, 0], [1, 2, 0, 0]),
            ([9, 9, 9, 99], [1, 3, 0, 15]),
        ] {
            let mut out = Vec::new();
            put_tf(&mut out, tf);
            assert_eq!(out.len(), 1, "{tf:?}");
            assert_eq!(read_tf(&mut Reader::new(&out)), back);
        }
    }
}
