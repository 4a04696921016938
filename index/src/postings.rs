//! The postings of a name, encoder and decoder together: file blocks in file-id order, each
//! `file delta, count` then per occurrence `line delta << 2 | role` (the column is not stored:
//! queries find it on the line they show).

use super::codec::{put_varint, put_varint_into, Reader};
use knav_c::scan::Role;

/// Appends one occurrence, `line_delta` lines after the previous one of its block.
#[inline]
pub fn put_occurrence(out: &mut Vec<u8>, line_delta: u32, role: Role) {
    put_varint(out, ((line_delta as u64) << 2) | role as u64);
}

/// Writes the head of a file block (`file_delta` after the previous block's file, `count`
/// occurrences) at the start of `out` (at least 20 bytes); returns its length.
#[inline]
pub fn put_block_head(out: &mut [u8], file_delta: u32, count: u32) -> usize {
    let n = put_varint_into(out, file_delta as u64);
    n + put_varint_into(&mut out[n..], count as u64)
}

/// One occurrence read from postings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    /// File id.
    pub file: u32,
    /// 1-based line.
    pub line: u32,
    /// What the scanner saw.
    pub role: Role,
}

/// Iterates postings in (file, line) order; occurrences on one line come in column order.
pub struct Postings<'a> {
    r: Reader<'a>,
    file: u32,
    left_in_block: u64,
    line: u32,
    started: bool,
}

impl<'a> Postings<'a> {
    /// Postings decoded from `bytes`.
    pub fn new(bytes: &'a [u8]) -> Postings<'a> {
        Postings {
            r: Reader::new(bytes),
            file: 0,
            left_in_block: 0,
            line: 0,
            started: false,
        }
    }
}

impl Iterator for Postings<'_> {
    type Item = Posting;

    fn next(&mut self) -> Option<Posting> {
        while self.left_in_block == 0 {
            if self.r.at_end() || self.r.overrun {
                return None;
            }
            let delta = self.r.varint() as u32;
            self.file = if self.started {
                self.file.wrapping_add(delta)
            } else {
                delta
            };
            self.started = true;
            self.left_in_block = self.r.varint();
            self.line = 0;
        }
        self.left_in_block -= 1;
        let v = self.r.varint();
        if self.r.overrun {
            return None;
        }
        self.line = self.line.wrapping_add((v >> 2) as u32);
        Some(Posting {
            file: self.file,
            line: self.line,
            role: Role::from_bits(v as u8),
        })
    }
}
