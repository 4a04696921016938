//! A fast hasher for the crate's maps keyed by names (macros, struct tags, declarers): the
//! multiply-and-rotate hash of rustc's `FxHasher`, eight bytes at a time. Not resistant to
//! chosen collisions, which a source tree a user indexes has no reason to hold; the maps it
//! serves are looked up once per token of a driver file, where SipHash showed in profiles.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A `HashSet` with [`FxHasher`].
pub type FxHashSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

/// The multiplier of rustc's `FxHasher` (64-bit).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Rustc's `FxHasher`: each word rotated into the state, then multiplied.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    /// Mixes one word into the state.
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            // The length keeps "a\0" and "a" apart.
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, BuildHasherDefault};

    fn hash(s: &str) -> u64 {
        BuildHasherDefault::<FxHasher>::default().hash_one(s)
    }

    #[test]
    fn names_that_differ_hash_apart() {
        let names = [
            "",
            "a",
            "a\0",
            "PCI_VDEVICE",
            "PCI_DEVICE",
            "PCI_VENDOR_ID_INTEL",
            "PCI_VENDOR_ID_INTEM",
            "IRQCHIP_PLATFORM_DRIVER_BEGIN",
            "IRQCHIP_PLATFORM_DRIVER_END",
        ];
        let hashes: std::collections::BTreeSet<u64> = names.iter().map(|n| hash(n)).collect();
        assert_eq!(hashes.len(), names.len());
        assert_eq!(hash("PCI_VDEVICE"), hash("PCI_VDEVICE"));
    }

    #[test]
    fn a_map_finds_what_it_holds() {
        let mut m: FxHashMap<String, usize> = FxHashMap::default();
        for k in 0..1000 {
            m.insert(format!("MACRO_{k}"), k);
        }
        assert_eq!(m.get("MACRO_417"), Some(&417));
        assert_eq!(m.get("MACRO_1000"), None);
    }
}
