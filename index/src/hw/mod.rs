//! The hardware part of the index behind `knav device` (MCP `find_device`): every device-tree
//! source (`.dts`, `.dtsi`, `.dtso`) and binding schema
//! (`Documentation/devicetree/bindings/**/*.yaml`) read by `knav-hw` ([`facts`]), the includes
//! resolved as the kernel's build resolves them ([`includes`]), and per compatible string the
//! bindings that document it and the nodes that name it ([`part`]).
//!
//! The part's files are among those the text walk lists (rg's file set). A refresh keeps the
//! part while the stats of its files are the same; otherwise it is written again whole, reading
//! only the files whose stat changed (the others' facts are taken from the part's
//! `facts.dat`). The part keeps no fact-store proof: an index started from another tree's
//! builds it.

pub mod check;
pub mod cread;
pub mod devkeys;
pub mod drivers;
pub mod facts;
pub mod ids;
pub mod includes;
pub mod part;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::codec::{hash64, put_str};
use crate::error::IndexError;
use crate::text::walk::TextFile;

/// Where the hardware part is, as the manifest names it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HwRef {
    /// Directory name inside the index directory.
    pub dir: String,
    /// [`fingerprint`] of the files it was built from.
    pub fingerprint: u64,
    /// Device-tree sources read.
    pub sources: u64,
    /// Binding schemas read.
    pub bindings: u64,
    /// Distinct compatible strings.
    pub compatibles: u64,
    /// Each file of the part with its checksum, for damage checks.
    pub checksums: Vec<(String, u64)>,
    /// The previous generation's directory, kept for readers that opened it.
    pub previous: Option<String>,
    /// The part's format ([`FORMAT`]); a part of another one is written again.
    #[serde(default)]
    pub format: u32,
}

/// The hardware part's format: a part written in another is written again by the next
/// refresh (its files' kinds say so to a query first).
pub const FORMAT: u32 = 6;

/// The rows a map's value `at` points to in `data` (a file with a header): their length, then
/// their bytes; `None` when they lie outside it.
pub(crate) fn rows_at(data: &[u8], at: u64) -> Option<&[u8]> {
    let body = data
        .get(at as usize..)
        .filter(|_| at >= crate::format::HEADER_LEN as u64)?;
    let mut outer = crate::codec::Reader::new(body);
    let len = outer.varint() as usize;
    let rows = outer.bytes(len);
    (!outer.overrun).then_some(rows)
}

/// The keys of `map` within `edits` edits of `key`, at most `max`, in order.
pub(crate) fn near_keys(
    map: &fst::Map<crate::disk::MapBytes>,
    key: &str,
    edits: u32,
    max: usize,
) -> Vec<String> {
    use fst::{IntoStreamer, Streamer};
    let Ok(lev) = fst::automaton::Levenshtein::new(key, edits) else {
        return Vec::new();
    };
    let mut s = map.search(lev).into_stream();
    let mut out = Vec::new();
    while let Some((k, _)) = s.next() {
        out.push(String::from_utf8_lossy(k).into_owned());
        if out.len() >= max {
            break;
        }
    }
    out
}

/// Files larger than this are not read (the kernel's largest device tree is under 1 MB).
pub const MAX_HW_BYTES: u64 = 8 << 20;

/// A hash of the paths, sizes and mtimes of `files`.
pub fn fingerprint(files: &[TextFile]) -> u64 {
    let mut buf = Vec::new();
    for f in files {
        put_str(&mut buf, f.path.as_bytes());
        buf.extend_from_slice(&f.size.to_le_bytes());
        buf.extend_from_slice(&f.mtime_ns.to_le_bytes());
    }
    hash64(&buf)
}

impl crate::part::Part for part::Hw {
    const KIND: crate::part::Kind = crate::part::Kind::Hw;
    type Ref = HwRef;
    type Open = part::Hw;

    fn open(index_dir: &Path, r: &HwRef) -> Result<part::Hw, IndexError> {
        part::Hw::open(&index_dir.join(&r.dir))
    }

    fn stamp<'a>(r: &'a HwRef, _: Option<&'a part::Hw>) -> Option<crate::part::Stamp<'a>> {
        Some(crate::part::Stamp::new(Self::KIND, &r.dir, &r.checksums))
    }
}
