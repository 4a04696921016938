//! Byte-level encoding shared by every index file: LEB128 varints, length-prefixed strings and
//! the 64-bit hash used for content change detection and file checksums.

/// Appends `v` as an unsigned LEB128 varint.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Writes `v` as a varint at the start of `out` (at least 10 bytes long); returns its length.
pub fn put_varint_into(out: &mut [u8], mut v: u64) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        out[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    out[n] = v as u8;
    n + 1
}

/// Appends an optional string: `0` for none, else `len + 1` and the bytes.
pub fn put_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => put_varint(out, 0),
        Some(s) => {
            put_varint(out, s.len() as u64 + 1);
            out.extend_from_slice(s.as_bytes());
        }
    }
}

/// Appends a string: its length and the bytes.
pub fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// The most bytes a varint of 64 bits takes.
const MAX_VARINT: usize = 10;

/// The next varint of stream `r` (a build's scratch files), decoded by [`Reader::varint`];
/// `None` at the stream's end. A varint cut short or longer than 64 bits is an error.
pub fn read_varint(r: &mut impl std::io::Read) -> std::io::Result<Option<u64>> {
    let mut bytes = [0u8; MAX_VARINT];
    for n in 0..MAX_VARINT {
        if r.read(&mut bytes[n..=n])? == 0 {
            return match n {
                0 => Ok(None),
                _ => Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "a varint cut short",
                )),
            };
        }
        if bytes[n] < 0x80 {
            return Ok(Some(Reader::new(&bytes[..=n]).varint()));
        }
    }
    Err(std::io::Error::other("a varint longer than 64 bits"))
}

/// The most records a decoder reserves room for before reading them ([`Reader::room_for`]).
pub const MAX_RESERVED: usize = 1 << 16;

/// A cursor over encoded bytes. Reading past the end yields zeros and sets `overrun`, so a
/// corrupt index gives wrong answers that the checks catch, never a panic.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Set when a read went past the end of the buffer.
    pub overrun: bool,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader {
            buf,
            pos: 0,
            overrun: false,
        }
    }

    /// Current position.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// True when everything was read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The next varint.
    #[inline]
    pub fn varint(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        while let Some(&b) = self.buf.get(self.pos) {
            self.pos += 1;
            if shift < 64 {
                v |= ((b & 0x7f) as u64) << shift;
            }
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
        self.overrun = true;
        v
    }

    /// The room to reserve for `count` records of at least `min_record` bytes each, still to
    /// be read: no more than the bytes left can hold, nor more than [`MAX_RESERVED`] (a longer
    /// list grows as it is read). A damaged count then cannot ask for memory the file's length
    /// does not justify: an allocation that fails aborts the process, past any panic handler.
    pub fn room_for(&self, count: u64, min_record: usize) -> usize {
        let fits = self.rest().len() / min_record.max(1);
        usize::try_from(count)
            .unwrap_or(usize::MAX)
            .min(fits)
            .min(MAX_RESERVED)
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos.min(self.buf.len())..]
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let end = self.pos.saturating_add(n);
        if end > self.buf.len() {
            self.overrun = true;
            self.pos = self.buf.len();
            return &[];
        }
        let s = &self.buf[self.pos..end];
        self.pos = end;
        s
    }

    /// The next byte.
    pub fn u8(&mut self) -> u8 {
        self.bytes(1).first().copied().unwrap_or(0)
    }

    /// A string written by [`put_str`].
    pub fn str(&mut self) -> &'a [u8] {
        let n = self.varint() as usize;
        self.bytes(n)
    }

    /// A string written by [`put_opt_str`].
    pub fn opt_str(&mut self) -> Option<&'a str> {
        let n = self.varint() as usize;
        if n == 0 {
            return None;
        }
        std::str::from_utf8(self.bytes(n - 1)).ok()
    }
}

/// A fast 64-bit hash (word-at-a-time multiply-mix), for change detection and checksums. Not
/// cryptographic; stable across platforms and releases because the index stores it (a change
/// of it is a change of [`crate::format::VERSION`]).
///
/// Not collision resistant: each step is invertible, so two texts of one length with one
/// hash are easy to make. It is a checksum against damage and a key inside one index (what a
/// refresh compares a file of the same tree against); anything shared between trees (the fact
/// store's keys, the proof that another tree's file holds the same bytes) is keyed by
/// [`digest`].
///
/// Input of 32 bytes or more is mixed in four lanes, a word into each in turn, folded at the
/// end: one lane's chain of xor, multiply and rotate waits ~5 cycles a word, so four
/// independent ones take about a third (0.054 against 0.172 ns a byte, measured over 256 MB).
/// A build hashes every file it reads and every file it writes (~3.4 GB for the kernel): one
/// lane took ~0.6 s of its CPU for that. Shorter input gives [`hash64_one_lane`]'s value.
pub fn hash64(data: &[u8]) -> u64 {
    /// Each lane's start, xored into the first's.
    const LANES: [u64; 4] = [
        0,
        0x1319_8A2E_0370_7344,
        0xA409_3822_299F_31D0,
        0x082E_FA98_EC4E_6C89,
    ];
    if data.len() < 32 {
        return hash64_one_lane(data);
    }
    let start = hash_start(data.len());
    let mut lanes = LANES.map(|l| start ^ l);
    let mut blocks = data.chunks_exact(32);
    for b in &mut blocks {
        for (j, lane) in lanes.iter_mut().enumerate() {
            *lane = hash_mix(*lane, word_le(&b[8 * j..8 * j + 8]));
        }
    }
    let mut h = lanes[0];
    for &lane in &lanes[1..] {
        h = hash_mix(h, lane);
    }
    hash_finish(hash_words(h, blocks.remainder()))
}

/// The hash of knav's first releases, one lane over all of `data`: what names an index's
/// directory in the cache from its root's path (see `store`), which must not move between
/// releases, and [`hash64`] of input under 32 bytes.
pub fn hash64_one_lane(data: &[u8]) -> u64 {
    hash_finish(hash_words(hash_start(data.len()), data))
}

const HASH_K: u64 = 0x9E37_79B9_7F4A_7C15;

fn hash_start(len: usize) -> u64 {
    0x243F_6A88_85A3_08D3 ^ (len as u64).wrapping_mul(HASH_K)
}

#[inline(always)]
fn hash_mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(HASH_K).rotate_left(29)
}

#[inline(always)]
fn word_le(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(b);
    u64::from_le_bytes(w)
}

/// `h` with the words of `data` mixed in one after the other, the last padded with zeros.
fn hash_words(mut h: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        h = hash_mix(h, word_le(c));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = hash_mix(h, u64::from_le_bytes(w));
    }
    h
}

fn hash_finish(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A cryptographic digest of bytes: BLAKE3's 256 bits. What facts kept between trees are keyed
/// by ([`crate::factstore`]): no one can make other bytes with a file's digest, as they can
/// with [`hash64`]. BLAKE3 over SHA-256: 4.8 against 1.3 GB/s on one core here (100 MB, and
/// 16 KB pieces alike; SHA-256 with the CPU's SHA instructions).
pub type Digest = [u8; 32];

/// The [`Digest`] of `data`.
pub fn digest(data: &[u8]) -> Digest {
    *blake3::hash(data).as_bytes()
}

/// The [`Digest`] of `parts` one after another, each with its length first (so that no two
/// lists of parts run together into one).
pub fn digest_parts(parts: &[&[u8]]) -> Digest {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    *h.finalize().as_bytes()
}

/// Bytes per checksum chunk: a file is hashed chunk by chunk, so that a large one is never held
/// in memory and a mapped one gives the same sum.
pub const CHECKSUM_CHUNK: usize = 1 << 20;

/// The checksum of a file, read in chunks so a large index file is never held in memory.
pub fn checksum_file(path: &std::path::Path) -> std::io::Result<u64> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; CHECKSUM_CHUNK];
    let mut h = 0u64;
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            let n = f.read(&mut buf[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            return Ok(h);
        }
        h = h.rotate_left(17) ^ hash64(&buf[..filled]);
        if filled < buf.len() {
            return Ok(h);
        }
    }
}

/// [`checksum_file`] of bytes already in memory (a mapped index file).
pub fn checksum_bytes(bytes: &[u8]) -> u64 {
    let mut h = 0u64;
    for chunk in bytes.chunks(CHECKSUM_CHUNK) {
        h = h.rotate_left(17) ^ hash64(chunk);
    }
    h
}

/// `real` with the word at `at` replaced by `with` and the word at `fix` (the same lane: `fix`
/// is `at` plus a multiple of 32, inside the whole 32-byte blocks) set so that [`hash64`] is
/// unchanged: what anyone can do, and why [`hash64`] keys nothing shared between trees.
#[cfg(test)]
pub(crate) fn hash64_twin(real: &[u8], at: usize, with: [u8; 8], fix: usize) -> Vec<u8> {
    const LANES: [u64; 4] = [
        0,
        0x1319_8A2E_0370_7344,
        0xA409_3822_299F_31D0,
        0x082E_FA98_EC4E_6C89,
    ];
    assert!(at.is_multiple_of(8) && fix > at && (fix - at).is_multiple_of(32));
    assert!(fix + 8 <= real.len() / 32 * 32);
    let lane = at % 32 / 8;
    let mut forged = real.to_vec();
    forged[at..at + 8].copy_from_slice(&with);
    // The lane's state before the word at `fix`, in either text.
    let state = |b: &[u8]| {
        let mut h = hash_start(b.len()) ^ LANES[lane];
        for i in (lane * 8..fix).step_by(32) {
            h = hash_mix(h, word_le(&b[i..i + 8]));
        }
        h
    };
    let w = state(real) ^ state(&forged) ^ word_le(&real[fix..fix + 8]);
    forged[fix..fix + 8].copy_from_slice(&w.to_le_bytes());
    forged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_count_reserves_no_more_than_the_bytes_left_can_hold() {
        let bytes = [0u8; 100];
        let mut r = Reader::new(&bytes);
        r.bytes(10);
        assert_eq!(r.room_for(u64::from(u32::MAX), 11), 90 / 11);
        assert_eq!(r.room_for(u64::MAX, 1), 90);
        assert_eq!(r.room_for(3, 11), 3);
        assert_eq!(r.room_for(5, 0), 5);
        let big = vec![0u8; MAX_RESERVED * 2];
        assert_eq!(Reader::new(&big).room_for(u64::MAX, 1), MAX_RESERVED);
    }

    #[test]
    fn hash64_is_forged_in_one_step_and_the_digest_is_not() {
        let real = b"int     vfs_read(int fd)\n{\n\treturn fd + 1;\n}\n/* padding padding padding padding padding padding */\n";
        let forged = hash64_twin(real, 8, *b"evilread", 72);
        assert_ne!(&forged[..], &real[..]);
        assert_eq!(forged.len(), real.len());
        assert_eq!(hash64(&forged), hash64(real));
        assert_eq!(checksum_bytes(&forged), checksum_bytes(real));
        assert_ne!(digest(&forged), digest(real));
        assert_ne!(digest_parts(&[b"ab", b"c"]), digest_parts(&[b"a", b"bc"]));
    }

    #[test]
    fn varints_round_trip() {
        let mut out = Vec::new();
        let vals = [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX];
        for v in vals {
            put_varint(&mut out, v);
        }
        put_opt_str(&mut out, None);
        put_opt_str(&mut out, Some(""));
        put_opt_str(&mut out, Some("ssize_t"));
        let mut r = Reader::new(&out);
        for v in vals {
            assert_eq!(r.varint(), v);
        }
        assert_eq!(r.opt_str(), None);
        assert_eq!(r.opt_str(), Some(""));
        assert_eq!(r.opt_str(), Some("ssize_t"));
        assert!(r.at_end() && !r.overrun);
    }

    #[test]
    fn stream_varints_read_what_the_slice_reader_reads_and_refuse_cut_or_overlong_ones() {
        let vals = [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX];
        let mut out = Vec::new();
        for v in vals {
            put_varint(&mut out, v);
        }
        let mut stream = &out[..];
        for v in vals {
            assert_eq!(read_varint(&mut stream).unwrap(), Some(v));
        }
        assert_eq!(read_varint(&mut stream).unwrap(), None);
        let cut = read_varint(&mut &[0x80u8, 0x80][..]).unwrap_err();
        assert_eq!(cut.kind(), std::io::ErrorKind::UnexpectedEof);
        assert!(read_varint(&mut &[0x80u8; 11][..]).is_err());
    }

    #[test]
    fn truncated_input_sets_overrun_instead_of_panicking() {
        let mut r = Reader::new(&[0x80, 0x80]);
        r.varint();
        assert!(r.overrun);
        let mut r = Reader::new(&[5, b'a']);
        assert_eq!(r.str(), b"");
        assert!(r.overrun);
    }

    #[test]
    fn hash_differs_on_one_byte() {
        assert_ne!(hash64(b"int a;"), hash64(b"int b;"));
        assert_ne!(hash64(b""), hash64(b"\0"));
        assert_eq!(hash64(b"same"), hash64(b"same"));
    }

    #[test]
    fn the_four_lane_hash_sees_every_byte_and_where_it_is() {
        let base: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        let mut seen = std::collections::HashSet::new();
        for len in 0..base.len() {
            assert!(seen.insert(hash64(&base[..len])), "length {len}");
        }
        for at in 0..base.len() {
            let mut b = base.clone();
            b[at] ^= 1;
            assert!(seen.insert(hash64(&b)), "byte {at} flipped");
        }
        // Two words swapped between lanes, and two blocks swapped.
        let mut b = base.clone();
        b[..8].copy_from_slice(&base[8..16]);
        b[8..16].copy_from_slice(&base[..8]);
        assert_ne!(hash64(&b), hash64(&base));
        let mut b = base.clone();
        b[..32].copy_from_slice(&base[32..64]);
        b[32..64].copy_from_slice(&base[..32]);
        assert_ne!(hash64(&b), hash64(&base));
        // The index stores these values: a change of them is a change of the format version.
        assert_eq!(hash64(&base), 0x1f1f_e455_aeed_e8a2);
        assert_eq!(hash64(&base[..32]), 0xa2de_afc8_933d_0742);
    }

    #[test]
    fn an_index_directory_keeps_the_one_lane_hash_of_its_root() {
        // The values of knav's first releases: a root's cache directory must not move.
        assert_eq!(hash64_one_lane(b""), 0x7acd_bb98_b134_4213);
        assert_eq!(
            hash64_one_lane(b"/home/someone/src/linux-6.12-with-a-long-name"),
            0xe79f_096b_3cfc_977d
        );
        assert_eq!(hash64(b"short"), hash64_one_lane(b"short"));
    }

    #[test]
    fn a_mapped_file_checksums_as_the_file_read_in_chunks() {
        let path = std::env::temp_dir().join(format!("knav-sum-{}", std::process::id()));
        for len in [0, 5, CHECKSUM_CHUNK, CHECKSUM_CHUNK * 2 + 3] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            assert_eq!(
                checksum_file(&path).unwrap(),
                checksum_bytes(&bytes),
                "{len}"
            );
        }
        let _ = std::fs::remove_file(&path);
    }
}
