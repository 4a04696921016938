//! Writes FST maps, in the `fst` crate's on-disk format, faster than `fst::MapBuilder`.
//!
//! `fst::Map::new` reads what [`MapWriter`] writes unchanged (format version 3: a 16-byte
//! header of version and type, the nodes, then the key count, the root address and the
//! masked CRC32C of everything before it), so every reader in knav stays as it is. Keys come
//! in strictly increasing order, each with a `u64` value.
//!
//! Why not `fst::MapBuilder`: a profile of a cold kernel index put its registry (a fixed
//! 10,000×2 LRU cache of nodes, each a heap `Vec` that is hashed, compared through and cloned
//! on every miss) at ~7% of all CPU, mostly in the names FSTs (~4.7 M keys). Here the
//! unfinished nodes keep their transition vectors for the whole build (no allocation per
//! node), and the registry holds no nodes: a slot is 8 bytes, where a node starts and a tag
//! of its hash. A candidate is checked by encoding the new node at the candidate's address
//! and comparing those bytes with the bytes written there, so equal bytes are the proof (the
//! reader decodes the node from them); a hash is never trusted alone.
//!
//! Memory is bounded: nodes stream to the writer, and only the last [`WINDOW`] to
//! 2×[`WINDOW`] bytes written are kept for those checks. A candidate older than that is a
//! miss, and the node is written again (a popular node, once a window). The registry starts
//! small and doubles, to at most [`MAX_SLOTS`], by copying each slot into both slots its
//! nodes can hash to now, so growing forgets nothing.
//!
//! Against `fst::MapBuilder` over the keys of a kernel index's names FSTs
//! (`bench_against_fst_builder` below), this writer builds them in well under half the time,
//! and a few percent smaller; the window and registry sizes are where a larger table starts
//! missing the cache (BENCHMARKS.md, "Design measurements").
//!
//! Nodes are encoded as `fst` encodes them: a node of one transition and no final state is
//! "one transition" (or "one transition to the node just written", when that is where it
//! goes and it has no output), with the input byte folded into the state byte when it is one
//! of `fst`'s 63 common bytes; every other node lists its transitions, with a 256-byte index
//! past 32 of them. For small key sets (tested) the bytes are `fst::MapBuilder`'s own; on
//! larger ones the two registries forget different nodes, and either may write a node again
//! that the other reuses.

use std::io::{self, Write};

/// `fst`'s format version this module writes.
const VERSION: u64 = 3;
/// The address of the final node with no transitions and no output, which is never written.
const EMPTY_ADDRESS: u64 = 0;
/// The bytes, at least, kept after they are written, for the registry's checks.
pub const WINDOW: usize = 1 << 19;
/// The registry's size when it stops growing (8 bytes a slot).
pub const MAX_SLOTS: usize = 1 << 17;
/// A registry slot's low bits hold a tag of the node's hash, the rest where the node starts.
const TAG_BITS: u32 = 20;
/// Nodes with more transitions than this carry a 256-byte index of their inputs.
const TRANS_INDEX_THRESHOLD: usize = 32;
/// The 63 input bytes `fst` folds into a state byte, most common first (its
/// `COMMON_INPUTS_INV`): byte `COMMON[i]` is written as `i + 1`.
const COMMON: &[u8; 63] = b"te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHG";
/// Each byte's index in [`COMMON`] plus one, or 0 for a byte that is not there.
const COMMON_INDEX: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < COMMON.len() {
        t[COMMON[i] as usize] = i as u8 + 1;
        i += 1;
    }
    t
};

/// Writes one FST map; see the module's doc.
pub struct MapWriter<W> {
    out: W,
    /// The bytes from address `base` on, not yet given to `out`.
    recent: Vec<u8>,
    base: u64,
    /// How many bytes `recent` keeps at least (it holds up to twice this).
    window: usize,
    /// The CRC32C (unmasked, inverted) of the bytes given to `out`.
    crc: u32,
    /// The unfinished nodes along the last key; `depth` of them are in use.
    stack: Vec<Level>,
    depth: usize,
    last_key: Option<Vec<u8>>,
    len: u64,
    /// The address of the node written last.
    last_addr: u64,
    registry: Vec<u64>,
    /// Nodes written since the registry last grew.
    written: usize,
    max_slots: usize,
    scratch: Vec<u8>,
}

/// A transition of a node: input byte, output, target node's address.
#[derive(Clone, Copy)]
struct Trans {
    inp: u8,
    out: u64,
    addr: u64,
}

/// An unfinished node: its finished transitions and the last one, whose target is unfinished.
#[derive(Default)]
struct Level {
    is_final: bool,
    final_out: u64,
    trans: Vec<Trans>,
    last: Option<(u8, u64)>,
}

impl<W: Write> MapWriter<W> {
    /// A writer that streams the FST to `out` (it writes in large pieces).
    pub fn new(out: W) -> MapWriter<W> {
        MapWriter::with_limits(out, WINDOW, MAX_SLOTS)
    }

    /// A writer keeping at least `window` written bytes and at most `max_slots` (a power of
    /// two) registry slots.
    fn with_limits(out: W, window: usize, max_slots: usize) -> MapWriter<W> {
        // Room for twice the window and a node of 256 transitions: no copying as it fills.
        let mut recent = Vec::with_capacity(2 * window + (1 << 13));
        recent.extend_from_slice(&VERSION.to_le_bytes());
        recent.extend_from_slice(&0u64.to_le_bytes());
        MapWriter {
            out,
            recent,
            base: 0,
            window,
            crc: !0,
            stack: vec![Level::default()],
            depth: 1,
            last_key: None,
            len: 0,
            last_addr: 1,
            registry: vec![0; max_slots.min(1 << 12)],
            written: 0,
            max_slots,
            scratch: Vec::new(),
        }
    }

    /// Adds `key` with `value`; `key` must be greater than every key added before.
    pub fn insert(&mut self, key: impl AsRef<[u8]>, value: u64) -> io::Result<()> {
        let key = key.as_ref();
        match &mut self.last_key {
            Some(last) if key <= last.as_slice() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "FST keys out of order: {:?} after {:?} (keys must be sorted and distinct)",
                        String::from_utf8_lossy(key),
                        String::from_utf8_lossy(last)
                    ),
                ));
            }
            Some(last) => {
                last.clear();
                last.extend_from_slice(key);
            }
            None => self.last_key = Some(key.to_vec()),
        }
        self.len += 1;
        if key.is_empty() {
            self.stack[0].is_final = true;
            self.stack[0].final_out = value;
            return Ok(());
        }
        // Walk the prefix shared with the last key, leaving on each transition the smallest
        // output and pushing the rest down a level.
        let mut out = value;
        let mut i = 0;
        while i < key.len() && i + 1 < self.depth {
            let Some((inp, t_out)) = &mut self.stack[i].last else {
                break;
            };
            if *inp != key[i] {
                break;
            }
            let common = (*t_out).min(out);
            let push = *t_out - common;
            out -= common;
            *t_out = common;
            i += 1;
            if push != 0 {
                let next = &mut self.stack[i];
                if next.is_final {
                    next.final_out += push;
                }
                for t in &mut next.trans {
                    t.out += push;
                }
                if let Some((_, o)) = &mut next.last {
                    *o += push;
                }
            }
        }
        self.freeze_from(i)?;
        self.stack[self.depth - 1].last = Some((key[i], out));
        for &b in &key[i + 1..] {
            self.push(false).last = Some((b, 0));
        }
        self.push(true);
        Ok(())
    }

    /// Finishes the FST and writes the rest of it; returns the writer, flushed.
    pub fn finish(mut self) -> io::Result<W> {
        self.freeze_from(0)?;
        let root = std::mem::take(&mut self.stack[0]);
        let root_addr = self.compile(&root)?;
        self.recent.extend_from_slice(&self.len.to_le_bytes());
        self.recent.extend_from_slice(&root_addr.to_le_bytes());
        let crc = crc32c_update(self.crc, &self.recent);
        self.out.write_all(&self.recent)?;
        self.out.write_all(&mask(!crc).to_le_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }

    /// Pushes a fresh unfinished node, reusing a level's vector.
    fn push(&mut self, is_final: bool) -> &mut Level {
        if self.depth == self.stack.len() {
            self.stack.push(Level::default());
        }
        let level = &mut self.stack[self.depth];
        self.depth += 1;
        level.is_final = is_final;
        level.final_out = 0;
        level.trans.clear();
        level.last = None;
        level
    }

    /// Compiles the unfinished nodes deeper than `depth`, so the node at `depth` is the last
    /// unfinished one and its last transition points at a compiled node.
    fn freeze_from(&mut self, depth: usize) -> io::Result<()> {
        let mut addr = None;
        while depth + 1 < self.depth {
            self.depth -= 1;
            let mut level = std::mem::take(&mut self.stack[self.depth]);
            close_last(&mut level, addr);
            addr = Some(self.compile(&level)?);
            self.stack[self.depth] = level;
        }
        close_last(&mut self.stack[self.depth - 1], addr);
        Ok(())
    }

    /// Writes `node` unless an equal node is in the registry and the window; returns its
    /// address.
    fn compile(&mut self, node: &Level) -> io::Result<u64> {
        if node.is_final && node.trans.is_empty() && node.final_out == 0 {
            return Ok(EMPTY_ADDRESS);
        }
        let hash = node_hash(node);
        let i = ((hash >> 1) >> (63 - self.registry.len().trailing_zeros())) as usize;
        let tag = (hash >> 24) & ((1 << TAG_BITS) - 1);
        let slot = self.registry[i];
        let start = slot >> TAG_BITS;
        // A node written at `start` only goes to nodes written before it: an equal tag for a
        // node going further is a collision (and its deltas would not encode).
        if slot != 0
            && slot & ((1 << TAG_BITS) - 1) == tag
            && start >= self.base
            && node.trans.iter().all(|t| t.addr < start)
        {
            self.scratch.clear();
            encode(node, start, start - 1, &mut self.scratch);
            let from = (start - self.base) as usize;
            if self.recent.get(from..from + self.scratch.len()) == Some(&self.scratch[..]) {
                return Ok(start + self.scratch.len() as u64 - 1);
            }
        }
        let start = self.base + self.recent.len() as u64;
        encode(node, start, self.last_addr, &mut self.recent);
        self.last_addr = self.base + self.recent.len() as u64 - 1;
        if start < 1 << (64 - TAG_BITS) {
            self.registry[i] = (start << TAG_BITS) | tag;
        }
        self.written += 1;
        if self.written * 2 > self.registry.len() && self.registry.len() < self.max_slots {
            self.grow();
        }
        if self.recent.len() >= 2 * self.window {
            self.give_oldest()?;
        }
        Ok(self.last_addr)
    }

    /// Doubles the registry. A node in slot `i` can hash to slot `2i` or `2i + 1` now, so
    /// both get it; the wrong one is a tag or bytes mismatch later, never a wrong answer.
    fn grow(&mut self) {
        self.registry = self.registry.iter().flat_map(|&s| [s, s]).collect();
        self.written = 0;
    }

    /// Gives `out` the written bytes but the last `window`.
    fn give_oldest(&mut self) -> io::Result<()> {
        let n = self.recent.len() - self.window;
        self.out.write_all(&self.recent[..n])?;
        self.crc = crc32c_update(self.crc, &self.recent[..n]);
        self.recent.copy_within(n.., 0);
        self.recent.truncate(self.window);
        self.base += n as u64;
        Ok(())
    }
}

/// Turns a level's pending last transition into a transition to `addr`.
fn close_last(level: &mut Level, addr: Option<u64>) {
    if let (Some((inp, out)), Some(addr)) = (level.last, addr) {
        level.trans.push(Trans { inp, out, addr });
        level.last = None;
    }
}

/// A hash of a node's logical content (Fx-style multiply and rotate).
fn node_hash(node: &Level) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mix = |h: u64, x: u64| (h.rotate_left(5) ^ x).wrapping_mul(K);
    let mut h = mix(u64::from(node.is_final), node.final_out);
    for t in &node.trans {
        h = mix(mix(h, u64::from(t.inp)), t.out);
        h = mix(h, t.addr);
    }
    h
}

/// Appends `node` encoded to start at address `start`, the node written before it ending at
/// `last_addr`.
fn encode(node: &Level, start: u64, last_addr: u64, out: &mut Vec<u8>) {
    let delta = |addr: u64| {
        if addr == EMPTY_ADDRESS {
            0
        } else {
            start - addr
        }
    };
    if let ([t], false) = (&node.trans[..], node.is_final) {
        let common = COMMON_INDEX[t.inp as usize];
        if t.addr == last_addr && t.out == 0 {
            if common == 0 {
                out.push(t.inp);
            }
            out.push(0b11_000000 | common);
            return;
        }
        let osize = if t.out == 0 {
            0
        } else {
            pack(out, t.out, pack_size(t.out))
        };
        let d = delta(t.addr);
        let tsize = pack(out, d, pack_size(d));
        out.push(tsize << 4 | osize);
        if common == 0 {
            out.push(t.inp);
        }
        out.push(0b10_000000 | common);
        return;
    }
    let n = node.trans.len();
    let mut tsize = 0;
    let mut osize = pack_size(node.final_out);
    let mut any_outs = node.final_out != 0;
    for t in &node.trans {
        tsize = tsize.max(pack_size(delta(t.addr)));
        osize = osize.max(pack_size(t.out));
        any_outs |= t.out != 0;
    }
    if any_outs {
        if node.is_final {
            pack(out, node.final_out, osize);
        }
        for t in node.trans.iter().rev() {
            pack(out, t.out, osize);
        }
    } else {
        osize = 0;
    }
    for t in node.trans.iter().rev() {
        pack(out, delta(t.addr), tsize);
    }
    out.extend(node.trans.iter().rev().map(|t| t.inp));
    if n > TRANS_INDEX_THRESHOLD {
        let mut index = [255u8; 256];
        for (i, t) in node.trans.iter().enumerate() {
            index[t.inp as usize] = i as u8;
        }
        out.extend_from_slice(&index);
    }
    out.push(tsize << 4 | osize);
    let mut state = if node.is_final { 0b01_000000 } else { 0 };
    match n {
        1..=63 => state |= n as u8,
        256 => out.push(1),
        _ => out.push(n as u8),
    }
    out.push(state);
}

/// The fewest bytes (at least one) that hold `n`.
fn pack_size(n: u64) -> u8 {
    (8 - n.leading_zeros() as u8 / 8).max(1)
}

/// Appends `n` little-endian in `size` bytes; returns `size`.
fn pack(out: &mut Vec<u8>, n: u64, size: u8) -> u8 {
    out.extend_from_slice(&n.to_le_bytes()[..size as usize]);
    size
}

/// Feeds `bytes` to a CRC32C (Castagnoli) register `crc`, 8 bytes at a time (start with
/// `!0`; the sum is the register inverted).
fn crc32c_update(mut crc: u32, bytes: &[u8]) -> u32 {
    const TABLES: [[u32; 256]; 8] = crc_tables();
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let lo = crc ^ u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        crc = TABLES[7][lo as usize & 0xff]
            ^ TABLES[6][(lo >> 8) as usize & 0xff]
            ^ TABLES[5][(lo >> 16) as usize & 0xff]
            ^ TABLES[4][(lo >> 24) as usize]
            ^ TABLES[3][c[4] as usize]
            ^ TABLES[2][c[5] as usize]
            ^ TABLES[1][c[6] as usize]
            ^ TABLES[0][c[7] as usize];
    }
    for &b in chunks.remainder() {
        crc = TABLES[0][((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// A CRC32C sum masked as `fst` (and Snappy) mask it.
fn mask(sum: u32) -> u32 {
    sum.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// The slice-by-8 tables of the reflected CRC32C polynomial.
const fn crc_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82f6_3b78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut j = 1;
    while j < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[j - 1][i];
            t[j][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        j += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use fst::{Automaton, IntoStreamer, Streamer};
    use proptest::prelude::*;

    /// Our map of `keys`, written with at least `window` bytes kept and `slots` slots at
    /// most, checking on the way that no more than that is held back from the writer.
    fn ours_with(keys: &[(Vec<u8>, u64)], window: usize, slots: usize) -> fst::Map<Vec<u8>> {
        let mut w = MapWriter::with_limits(Vec::new(), window, slots);
        for (k, v) in keys {
            w.insert(k, *v).unwrap();
            // Twice the window, and a node: 256 transitions of 8-byte outputs and addresses.
            assert!(w.recent.len() < 2 * window + 256 * 17 + 256 + 3);
            assert!(w.registry.len() <= slots);
        }
        fst::Map::new(w.finish().unwrap()).unwrap()
    }

    fn ours(keys: &[(Vec<u8>, u64)]) -> fst::Map<Vec<u8>> {
        ours_with(keys, WINDOW, MAX_SLOTS)
    }

    fn theirs(keys: &[(Vec<u8>, u64)]) -> fst::Map<Vec<u8>> {
        fst::Map::from_iter(keys.iter().map(|(k, v)| (k, *v))).unwrap()
    }

    fn all<'a, S: for<'b> Streamer<'b, Item = (&'b [u8], u64)>>(mut s: S) -> Vec<(Vec<u8>, u64)> {
        let mut out = Vec::new();
        while let Some((k, v)) = s.next() {
            out.push((k.to_vec(), v));
        }
        out
    }

    /// Checks our map against the input and against `fst`'s own map of it.
    fn check(keys: &[(Vec<u8>, u64)]) {
        check_map(keys, ours(keys));
        // A window of a few nodes and a registry of two slots: most candidates miss.
        check_map(keys, ours_with(keys, 24, 2));
    }

    fn check_map(keys: &[(Vec<u8>, u64)], map: fst::Map<Vec<u8>>) {
        map.as_fst().verify().unwrap();
        let reference = theirs(keys);
        assert_eq!(map.len(), keys.len());
        assert_eq!(all(map.stream()), keys);
        for (k, v) in keys {
            assert_eq!(map.get(k), Some(*v));
            let mut longer = k.clone();
            longer.push(0xff);
            assert_eq!(map.get(&longer), reference.get(&longer));
            if let Some(shorter) = k.get(..k.len().saturating_sub(1)) {
                assert_eq!(map.get(shorter), reference.get(shorter));
            }
        }
        if let (Some(lo), Some(hi)) = (keys.get(keys.len() / 3), keys.get(keys.len() * 2 / 3)) {
            let range = |m: &fst::Map<Vec<u8>>| all(m.range().ge(&lo.0).lt(&hi.0).into_stream());
            assert_eq!(range(&map), range(&reference));
            let first = lo.0.get(..1).and_then(|b| std::str::from_utf8(b).ok());
            let prefix = fst::automaton::Str::new(first.unwrap_or("a")).starts_with();
            assert_eq!(
                all(map.search(&prefix).into_stream()),
                all(reference.search(&prefix).into_stream())
            );
        }
    }

    /// Maps strings to increasing offsets, as the names FSTs do.
    fn offsets(keys: &[&str]) -> Vec<(Vec<u8>, u64)> {
        keys.iter()
            .enumerate()
            .map(|(i, k)| (k.as_bytes().to_vec(), 16 + 7 * i as u64))
            .collect()
    }

    #[test]
    fn empty_map_and_empty_key() {
        check(&[]);
        check(&[(vec![], 0)]);
        check(&[(vec![], 5)]);
        check(&[(vec![], 5), (b"a".to_vec(), 0)]);
    }

    #[test]
    fn prefixes_shared_suffixes_and_huge_values() {
        check(&offsets(&[
            "a", "ab", "abc", "abcd", "b", "xb", "xbc", "yb", "ybc",
        ]));
        check(&[
            (b"a".to_vec(), u64::MAX),
            (b"b".to_vec(), 0),
            (b"c".to_vec(), 1 << 40),
        ]);
        let suffix = "_lock_irqsave_nested_common";
        let keys: Vec<String> = (b'a'..=b'z')
            .map(|c| format!("{}{suffix}", c as char))
            .collect();
        check(&offsets(
            &keys.iter().map(String::as_str).collect::<Vec<_>>(),
        ));
    }

    #[test]
    fn node_of_all_256_bytes() {
        let mut keys: Vec<(Vec<u8>, u64)> =
            (0..=255u8).map(|b| (vec![b'k', b], b as u64)).collect();
        keys.extend((0..=255u8).map(|b| (vec![b'm', b, b'z'], 0)));
        check(&keys);
        check(
            &(0..=255u8)
                .map(|b| (vec![b], 1000 - b as u64))
                .collect::<Vec<_>>(),
        );
    }

    /// Small key sets fit in the registry, so the bytes must be `fst`'s own: this checks
    /// the encoding byte for byte, common inputs folded into state bytes included.
    #[test]
    fn small_maps_are_byte_for_byte_fst_s_own() {
        let sets = [
            offsets(&["a", "ab", "abc", "abcd", "b", "xb", "xbc", "yb", "ybc"]),
            offsets(&["kfree", "kmalloc", "kzalloc", "spin_lock", "spin_unlock"]),
            offsets(&["A\x01", "A\x01\x02", "AZ", "Q~", "q{}"]),
            (0..=255u8).map(|b| (vec![b'k', b], b as u64)).collect(),
            vec![(vec![], 9), (b"te".to_vec(), 0), (b"te/".to_vec(), 1 << 33)],
        ];
        for keys in &sets {
            let mut w = MapWriter::new(Vec::new());
            for (k, v) in keys {
                w.insert(k, *v).unwrap();
            }
            assert_eq!(w.finish().unwrap(), theirs(keys).into_fst().into_inner());
        }
    }

    /// A window of 64 bytes: the writer gets the FST while it is built, and a node seen
    /// again past the window is written again (the FST grows) yet reads back right.
    #[test]
    fn window_streams_and_forgets_old_nodes() {
        let suffix = "_lock_irqsave";
        let names: Vec<String> = (0..200).map(|i| format!("f{i:03}{suffix}")).collect();
        let keys = offsets(&names.iter().map(String::as_str).collect::<Vec<_>>());
        let mut w = MapWriter::with_limits(Vec::new(), 64, 1 << 10);
        for (k, v) in &keys[..100] {
            w.insert(k, *v).unwrap();
        }
        assert!(w.base > 0 && w.out.len() as u64 == w.base);
        let small = w.recent.len();
        assert!((64..128 + 64).contains(&small), "{small} bytes held back");
        let narrow = ours_with(&keys, 64, 1 << 10);
        let wide = ours(&keys);
        assert!(narrow.as_fst().size() > wide.as_fst().size());
        check_map(&keys, narrow);
    }

    /// A candidate whose tag matches but which starts before a node the new node goes to
    /// (a hash collision) is a miss: encoding the new node there would need a negative delta.
    #[test]
    fn colliding_candidate_older_than_a_target_is_a_miss() {
        let mut w = MapWriter::new(Vec::new());
        let leaf = |inp| Level {
            is_final: false,
            final_out: 0,
            trans: vec![Trans {
                inp,
                out: 7,
                addr: 0,
            }],
            last: None,
        };
        let first = w.compile(&leaf(b'x')).unwrap();
        let second = w.compile(&leaf(b'y')).unwrap();
        assert!(16 < first && first < second);
        let node = Level {
            is_final: true,
            final_out: 0,
            trans: vec![Trans {
                inp: b'a',
                out: 0,
                addr: second,
            }],
            last: None,
        };
        let hash = node_hash(&node);
        let i = ((hash >> 1) >> (63 - w.registry.len().trailing_zeros())) as usize;
        w.registry[i] = (16 << TAG_BITS) | ((hash >> 24) & ((1 << TAG_BITS) - 1));
        let third = w.compile(&node).unwrap();
        assert_eq!(third, w.last_addr);
        assert!(third > second);
    }

    #[test]
    fn out_of_order_and_duplicate_keys_are_errors() {
        let mut w = MapWriter::new(Vec::new());
        w.insert(b"b", 1).unwrap();
        assert!(w.insert(b"a", 2).is_err());
        assert!(w.insert(b"b", 2).is_err());
    }

    #[test]
    fn levenshtein_and_regex_match_fst_s_own_map() {
        let mut names = [
            "kfree",
            "kmalloc",
            "kmalloc_array",
            "kzalloc",
            "sping_lock",
            "spin_lock",
            "spin_lock_bh",
            "spin_lock_irq",
            "spin_lock_irqsave",
            "spin_unlock",
            "spin_unlock_bh",
        ];
        names.sort_unstable();
        let keys = offsets(&names);
        let (map, reference) = (ours(&keys), theirs(&keys));
        let lev = fst::automaton::Levenshtein::new("spin_lok", 2).unwrap();
        let found = all(map.search(&lev).into_stream());
        assert_eq!(found, all(reference.search(&lev).into_stream()));
        let found: Vec<&[u8]> = found.iter().map(|(k, _)| &k[..]).collect();
        assert_eq!(found, [&b"spin_lock"[..], b"sping_lock"]);
        // What `knav find '/k[mz]alloc.*/'` asks of a name FST, as fst's own automata.
        let dfa = fst::automaton::Str::new("kmalloc")
            .starts_with()
            .union(fst::automaton::Str::new("kzalloc").starts_with());
        let found = all(map.search(&dfa).into_stream());
        assert_eq!(found, all(reference.search(&dfa).into_stream()));
        assert_eq!(found.len(), 3);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn random_maps_read_back(
            keys in proptest::collection::btree_map(
                proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'_'), any::<u8>()], 0..12),
                prop_oneof![Just(0u64), 0..1000u64, any::<u64>()],
                0..200,
            )
        ) {
            check(&keys.into_iter().collect::<Vec<_>>());
        }

        #[test]
        fn random_increasing_offsets_read_back(
            keys in proptest::collection::btree_set("[a-d_]{0,10}", 0..300),
            step in 1..300u64,
        ) {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let mut map = offsets(&keys);
            for (i, e) in map.iter_mut().enumerate() {
                e.1 = i as u64 * step;
            }
            check(&map);
        }
    }

    /// Times this writer against `fst::MapBuilder` on the keys of the FST at
    /// `KNAV_FSTBUILD_KEYS` (e.g. a kernel index's names-1.fst).
    #[test]
    #[ignore = "a benchmark: needs KNAV_FSTBUILD_KEYS, an FST whose keys to build from"]
    fn bench_against_fst_builder() {
        let path = std::env::var("KNAV_FSTBUILD_KEYS").expect("KNAV_FSTBUILD_KEYS");
        let map = fst::Map::new(std::fs::read(path).unwrap()).unwrap();
        let keys = all(map.stream());
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let mut b = fst::MapBuilder::memory();
            for (k, v) in &keys {
                b.insert(k, *v).unwrap();
            }
            let theirs = b.into_inner().unwrap();
            let fst_time = t.elapsed();
            let t = std::time::Instant::now();
            let mut w = MapWriter::new(Vec::new());
            for (k, v) in &keys {
                w.insert(k, *v).unwrap();
            }
            let mine = w.finish().unwrap();
            let our_time = t.elapsed();
            eprintln!(
                "{} keys: fst {fst_time:?} ({} bytes), ours {our_time:?} ({} bytes)",
                keys.len(),
                theirs.len(),
                mine.len()
            );
        }
    }
}
