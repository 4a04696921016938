//! The one postings codec of the index's search tables: a list of increasing ids, each with an
//! optional payload. On disk a list is its count (a varint), then per id the varint delta from
//! the id before (the first from 0) followed by its payload. The name and path parts
//! ([`super::nameparts`]) store bare ids, the documentation part ids with their title and body
//! counts, code search documents with their field counts and files with a count.
//!
//! The text part's trigram lists are such lists without payloads, their counts kept in
//! `grams.bin` ([`IdReader::counted`] reads them); they are written by a writer of their own,
//! into chains of blocks while they grow (the text build's hot path). The occurrence postings
//! of a name ([`super::postings`]) are another format: blocks per file, with lines and roles.

use std::io::{self, Write};

use super::codec::{put_varint, Reader};

/// A list being written.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct IdList {
    count: u64,
    last: u64,
    bytes: Vec<u8>,
}

impl IdList {
    /// Appends `id`, which must not be below the last one, and returns the buffer its payload
    /// goes to.
    pub fn push(&mut self, id: u64) -> &mut Vec<u8> {
        put_varint(&mut self.bytes, id - self.last);
        self.last = id;
        self.count += 1;
        &mut self.bytes
    }

    /// The last id pushed; `None` for an empty list.
    pub fn last(&self) -> Option<u64> {
        (self.count > 0).then_some(self.last)
    }

    /// Appends the ids of `later`, all above this list's, with their payloads.
    pub fn append(&mut self, later: IdList) {
        if later.count == 0 {
            return;
        }
        // `later`'s first delta is from 0: make it one from this list's last id.
        let mut r = Reader::new(&later.bytes);
        let first = r.varint();
        put_varint(&mut self.bytes, first - self.last);
        self.bytes.extend_from_slice(&later.bytes[r.pos()..]);
        self.last = later.last;
        self.count += later.count;
    }

    /// Writes the list (its count, then its ids and payloads); returns the bytes written.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<u64> {
        let mut count = [0u8; 10];
        let n = super::codec::put_varint_into(&mut count, self.count);
        out.write_all(&count[..n])?;
        out.write_all(&self.bytes)?;
        Ok((n + self.bytes.len()) as u64)
    }

    /// Appends the list to `out`, as [`IdList::write_to`] writes it.
    pub fn put(&self, out: &mut Vec<u8>) {
        put_varint(out, self.count);
        out.extend_from_slice(&self.bytes);
    }
}

/// A list being read: [`IdReader::next_id`], then the id's payload from [`IdReader::payload`].
pub struct IdReader<'a> {
    r: Reader<'a>,
    left: u64,
    id: u64,
    /// Set when the list does not decode: it runs past its bytes, or an id past `u64`.
    pub damaged: bool,
}

impl<'a> IdReader<'a> {
    /// The list at the start of `body`.
    pub fn new(body: &'a [u8]) -> IdReader<'a> {
        let mut r = Reader::new(body);
        let left = r.varint();
        // Every id takes a byte at least: a longer count is damage.
        let damaged = r.overrun || left > body.len() as u64;
        IdReader {
            r,
            left: if damaged { 0 } else { left },
            id: 0,
            damaged,
        }
    }

    /// A list of `count` ids whose count is kept elsewhere (the text part's trigram lists,
    /// counted in `grams.bin`): the ids from the start of `body`.
    pub fn counted(body: &'a [u8], count: u64) -> IdReader<'a> {
        // Every id takes a byte at least: a longer count is damage.
        let damaged = count > body.len() as u64;
        IdReader {
            r: Reader::new(body),
            left: if damaged { 0 } else { count },
            id: 0,
            damaged,
        }
    }

    /// The ids left to read.
    pub fn left(&self) -> u64 {
        self.left
    }

    /// The next id; `None` at the end of the list or on damage (`damaged` says which).
    pub fn next_id(&mut self) -> Option<u64> {
        if self.left == 0 || self.damaged || self.r.overrun {
            self.damaged |= self.r.overrun;
            return None;
        }
        self.left -= 1;
        let delta = self.r.varint();
        match self.id.checked_add(delta) {
            Some(id) if !self.r.overrun => {
                self.id = id;
                Some(id)
            }
            _ => {
                self.damaged = true;
                None
            }
        }
    }

    /// The reader of the current id's payload (and, past the list, of what follows it).
    pub fn payload(&mut self) -> &mut Reader<'a> {
        &mut self.r
    }

    /// The ids left, payloads skipped by `skip`; then the reader past the list.
    pub fn skip_rest(mut self, skip: impl Fn(&mut Reader<'a>)) -> Option<Reader<'a>> {
        while self.next_id().is_some() {
            skip(&mut self.r);
        }
        (!self.damaged && !self.r.overrun).then_some(self.r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_payloads_read_back_as_written() {
        let mut l = IdList::default();
        for (id, p) in [(0u64, 7u8), (3, 1), (300, 2), (1 << 40, 9)] {
            l.push(id).push(p);
        }
        let mut bytes = Vec::new();
        assert_eq!(l.write_to(&mut bytes).unwrap(), bytes.len() as u64);
        let mut put = Vec::new();
        l.put(&mut put);
        assert_eq!(put, bytes);
        let mut r = IdReader::new(&bytes);
        let mut got = Vec::new();
        while let Some(id) = r.next_id() {
            got.push((id, r.payload().u8()));
        }
        assert!(!r.damaged);
        assert_eq!(got, [(0, 7), (3, 1), (300, 2), (1 << 40, 9)]);
    }

    #[test]
    fn an_appended_list_continues_the_deltas() {
        let (mut a, mut b, mut whole) = (IdList::default(), IdList::default(), IdList::default());
        for id in [2, 5] {
            a.push(id);
            whole.push(id);
        }
        for id in [9, 12] {
            b.push(id);
            whole.push(id);
        }
        a.append(b);
        assert_eq!(a, whole);
    }

    #[test]
    fn a_counted_list_reads_its_ids_and_a_count_past_its_bytes_is_damage() {
        let mut l = IdList::default();
        for id in [1u64, 4, 200] {
            l.push(id);
        }
        let mut bytes = Vec::new();
        l.put(&mut bytes);
        let body = &bytes[1..];
        let mut r = IdReader::counted(body, 3);
        let got: Vec<u64> = std::iter::from_fn(|| r.next_id()).collect();
        assert_eq!((got, r.damaged), (vec![1, 4, 200], false));
        let mut r = IdReader::counted(body, body.len() as u64 + 1);
        assert_eq!((r.next_id(), r.damaged), (None, true));
    }

    #[test]
    fn a_damaged_list_says_so_instead_of_reading_on() {
        // A count larger than the bytes, an id past u64, a list cut short.
        let past = [vec![2u8], vec![0xff; 9], vec![1], vec![1]].concat();
        for bytes in [vec![200u8, 1, 1], past, vec![3, 1, 0x80]] {
            let mut r = IdReader::new(&bytes);
            while r.next_id().is_some() {}
            assert!(r.damaged, "{bytes:?}");
        }
    }
}
