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
//! node), and the registry is a power-of-two table of (hash, where the node's bytes are) that
//! checks a candidate by encoding it at the cached node's place and comparing the bytes, so
//! it holds no copies of nodes. The table grows to [`MAX_SLOTS`], then replaces. The FST is
//! built in memory and written by `finish`.
//!
//! Measured on 2 loaded, shared cores (`bench_against_fst_builder` below over the kernel's
//! names-1.fst keys, 2,661,323 keys, three runs each): `fst::MapBuilder` 2.63 s, 2.59 s,
//! 2.12 s (22,079,894 bytes); this writer 2.54 s, 1.67 s, 1.72 s (25,304,354 bytes, +15%:
//! input bytes are never folded into the state byte, and the registry forgets). With a
//! 4 M-slot registry the bytes were 24,534,756 but the time only ~20% less (its 64 MB table
//! misses the cache); with 512 K slots, 1.69–2.17 s and 25,840,539 bytes. A cold kernel
//! index (one run each): the "merge names" phase took 6.1 s of CPU, main 8.5 s; the whole
//! build 72.4 s of CPU (user+sys), main 84.0 s; peak RSS 503 MB, main 454 MB.
//!
//! Nodes are encoded as `fst` reads them: a node of one transition and no final state is
//! "one transition" (or "one transition to the node just written", when that is where it
//! goes and it has no output); every other node lists its transitions, with a 256-byte index
//! past 32 of them. Input bytes are always written out (the format's table of common bytes is
//! optional to a writer).

use std::io::{self, Write};

/// `fst`'s format version this module writes.
const VERSION: u64 = 3;
/// The address of the final node with no transitions and no output, which is never written.
const EMPTY_ADDRESS: u64 = 0;
/// The registry's size when it stops growing (16 bytes a slot).
pub const MAX_SLOTS: usize = 1 << 20;
/// Nodes with more transitions than this carry a 256-byte index of their inputs.
const TRANS_INDEX_THRESHOLD: usize = 32;

/// Writes one FST map; see the module's doc.
pub struct MapWriter<W> {
    out: W,
    /// The whole FST so far, header included, so offsets are addresses.
    buf: Vec<u8>,
    /// The unfinished nodes along the last key; `depth` of them are in use.
    stack: Vec<Level>,
    depth: usize,
    last_key: Option<Vec<u8>>,
    len: u64,
    /// The address of the node written last.
    last_addr: u64,
    registry: Vec<Slot>,
    registered: usize,
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

/// A registered node: its hash, and its first byte's offset (high 48 bits) and length.
#[derive(Clone, Copy, Default)]
struct Slot {
    hash: u64,
    at: u64,
}

impl<W: Write> MapWriter<W> {
    /// A writer that writes the FST to `out` when finished.
    pub fn new(out: W) -> MapWriter<W> {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(&VERSION.to_le_bytes());
        buf.extend_from_slice(&0u64.to_le_bytes());
        MapWriter {
            out,
            buf,
            stack: vec![Level::default()],
            depth: 1,
            last_key: None,
            len: 0,
            last_addr: 1,
            registry: vec![Slot::default(); 1 << 12],
            registered: 0,
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
        self.freeze_from(i);
        self.stack[self.depth - 1].last = Some((key[i], out));
        for &b in &key[i + 1..] {
            self.push(false).last = Some((b, 0));
        }
        self.push(true);
        Ok(())
    }

    /// Finishes the FST and writes it; returns the writer, flushed.
    pub fn finish(mut self) -> io::Result<W> {
        self.freeze_from(0);
        let root = std::mem::take(&mut self.stack[0]);
        let root_addr = self.compile(&root);
        self.buf.extend_from_slice(&self.len.to_le_bytes());
        self.buf.extend_from_slice(&root_addr.to_le_bytes());
        let sum = masked_crc32c(&self.buf);
        self.out.write_all(&self.buf)?;
        self.out.write_all(&sum.to_le_bytes())?;
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
    fn freeze_from(&mut self, depth: usize) {
        let mut addr = None;
        while depth + 1 < self.depth {
            self.depth -= 1;
            let mut level = std::mem::take(&mut self.stack[self.depth]);
            close_last(&mut level, addr);
            addr = Some(self.compile(&level));
            self.stack[self.depth] = level;
        }
        close_last(&mut self.stack[self.depth - 1], addr);
    }

    /// Writes `node` unless an equal node was written before; returns its address.
    fn compile(&mut self, node: &Level) -> u64 {
        if node.is_final && node.trans.is_empty() && node.final_out == 0 {
            return EMPTY_ADDRESS;
        }
        let hash = node_hash(node);
        let i = slot_of(hash, self.registry.len());
        let slot = self.registry[i];
        if slot.at != 0 && slot.hash == hash {
            let (start, len) = (slot.at >> 16, (slot.at & 0xffff) as usize);
            self.scratch.clear();
            encode(node, start, start - 1, &mut self.scratch);
            let start = start as usize;
            if self.buf[start..start + len] == self.scratch[..] {
                return (start + len - 1) as u64;
            }
        }
        let start = self.buf.len() as u64;
        self.scratch.clear();
        encode(node, start, self.last_addr, &mut self.scratch);
        self.buf.extend_from_slice(&self.scratch);
        self.last_addr = self.buf.len() as u64 - 1;
        let at = start << 16 | self.scratch.len() as u64;
        if slot.at == 0 {
            self.registered += 1;
        }
        self.registry[i] = Slot { hash, at };
        if self.registered * 2 > self.registry.len() && self.registry.len() < MAX_SLOTS {
            self.grow();
        }
        self.last_addr
    }

    /// Doubles the registry, keeping its nodes.
    fn grow(&mut self) {
        let mut bigger = vec![Slot::default(); self.registry.len() * 2];
        let len = bigger.len();
        for s in self.registry.iter().filter(|s| s.at != 0) {
            bigger[slot_of(s.hash, len)] = *s;
        }
        self.registered = bigger.iter().filter(|s| s.at != 0).count();
        self.registry = bigger;
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

/// A hash's slot in a table of `len` (a power of two) slots: its high bits, which the last
/// multiply mixed best.
fn slot_of(hash: u64, len: usize) -> usize {
    (hash >> (64 - len.trailing_zeros())) as usize
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
        if t.addr == last_addr && t.out == 0 {
            out.extend_from_slice(&[t.inp, 0b11_000000]);
            return;
        }
        let osize = if t.out == 0 {
            0
        } else {
            pack(out, t.out, pack_size(t.out))
        };
        let d = delta(t.addr);
        let tsize = pack(out, d, pack_size(d));
        out.extend_from_slice(&[tsize << 4 | osize, t.inp, 0b10_000000]);
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

/// CRC32C (Castagnoli), 8 bytes at a time, masked as `fst` (and Snappy) mask it.
fn masked_crc32c(bytes: &[u8]) -> u32 {
    const TABLES: [[u32; 256]; 8] = crc_tables();
    let mut crc = !0u32;
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
    let sum = !crc;
    (sum.rotate_right(15)).wrapping_add(0xa282_ead8)
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

    fn ours(keys: &[(Vec<u8>, u64)]) -> fst::Map<Vec<u8>> {
        let mut w = MapWriter::new(Vec::new());
        for (k, v) in keys {
            w.insert(k, *v).unwrap();
        }
        fst::Map::new(w.finish().unwrap()).unwrap()
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
        let map = ours(keys);
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
        let dfa = Dfa::new("k[mz]alloc.*");
        let found = all(map.search(&dfa).into_stream());
        assert_eq!(found, all(reference.search(&dfa).into_stream()));
        assert_eq!(found.len(), 3);
    }

    /// A whole-key regex, searched as src/query/find.rs searches names.
    struct Dfa(regex_automata::dfa::dense::DFA<Vec<u32>>);

    impl Dfa {
        fn new(re: &str) -> Dfa {
            use regex_automata::dfa::dense;
            let config = dense::Config::new().start_kind(regex_automata::dfa::StartKind::Anchored);
            Dfa(dense::Builder::new()
                .configure(config)
                .build(&format!("(?:{re})$"))
                .unwrap())
        }
    }

    impl fst::Automaton for Dfa {
        type State = Option<regex_automata::util::primitives::StateID>;
        fn start(&self) -> Self::State {
            use regex_automata::dfa::Automaton;
            let config =
                regex_automata::util::start::Config::new().anchored(regex_automata::Anchored::Yes);
            self.0.start_state(&config).ok()
        }
        fn is_match(&self, s: &Self::State) -> bool {
            use regex_automata::dfa::Automaton;
            s.is_some_and(|s| self.0.is_match_state(self.0.next_eoi_state(s)))
        }
        fn can_match(&self, s: &Self::State) -> bool {
            use regex_automata::dfa::Automaton;
            s.is_some_and(|s| !self.0.is_dead_state(s))
        }
        fn accept(&self, s: &Self::State, b: u8) -> Self::State {
            use regex_automata::dfa::Automaton;
            s.map(|s| self.0.next_state(s, b))
        }
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
