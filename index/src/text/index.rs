//! The trigram index of the text files: for every trigram (three bytes, ASCII letters folded
//! to lower case), the files that hold it, as in Russ Cox's codesearch and in zoekt.
//!
//! The lists are of documents: a file is one document, or, when indexed whole and larger
//! than [`BLOCK_BYTES`], one per block of whole lines (a search then reads only the blocks
//! that hold its trigrams). A part directory (`tx-…`) holds four files: `files.bin` (the
//! files by id, in path order, each with its size, mtime and whether it was indexed),
//! `docs.bin` (each file's first document, and where each document starts), `grams.bin` (the
//! trigrams in order, each with its document count and where its list starts) and `post.bin`
//! (each list as delta varints of document ids: an [`crate::idlist`] list whose count is in
//! `grams.bin`, read by [`IdReader::counted`]); each starts with the index's header
//! ([`crate::format::header`]: a foreign or damaged one is an error naming the file). Files over [`MAX_INDEXED_BYTES`] or that could not be read hold no
//! trigrams and are always candidates; a file with a NUL byte (rg calls it binary and stops
//! at the NUL) is indexed up to its first NUL. Every read is bounds-checked: a damaged part
//! gives an error, never a panic.

use std::io::Write;
use std::path::Path;

use super::search::Opener;
use super::walk::TextFile;
use crate::codec::{checksum_bytes, put_str, put_varint, Reader, CHECKSUM_CHUNK};
use crate::error::IndexError;
use crate::factstore::Prover;
use crate::format::{check_header, header, HEADER_LEN};
use crate::idlist::IdReader;
use crate::part::{FromFacts, Merge};
use crate::prefetch::prefetch;

/// Files larger than this hold no trigrams: they are read by every search.
pub const MAX_INDEXED_BYTES: u64 = 64 << 20;

/// A file indexed whole.
pub const INDEXED: u8 = 0;
/// A file with a NUL byte: indexed up to its first NUL.
pub const BINARY: u8 = 1;
/// A file with no trigrams (too large, unreadable): a candidate of every search.
pub const UNINDEXED: u8 = 2;

/// The kinds of the part's files in their [`header`]s.
const FILES_KIND: &[u8; 4] = b"TXFI";
const GRAMS_KIND: &[u8; 4] = b"TXGR";
const DOCS_KIND: &[u8; 4] = b"TXDO";
const POST_KIND: &[u8; 4] = b"TXPO";
/// Bytes before `files.bin`'s offsets: the header, the file count (u32).
const FILES_HEAD: usize = HEADER_LEN + 4;
/// Bytes before `grams.bin`'s entries: the header, the list count (u64).
const GRAMS_HEAD: usize = HEADER_LEN + 8;
/// Bytes before `docs.bin`'s first documents: the header, the file and document counts (u32).
const DOCS_HEAD: usize = HEADER_LEN + 8;
/// Bytes of one `docs.bin` document: byte offset (u32), first line (u32).
const DOC_ENTRY: usize = 8;
/// Bytes of one `grams.bin` entry: trigram (u32), file count (u32), list offset (u64).
const GRAM_ENTRY: usize = 16;

/// The trigram of three bytes, ASCII letters folded.
#[inline]
pub fn trigram(a: u8, b: u8, c: u8) -> u32 {
    (a.to_ascii_lowercase() as u32) << 16
        | (b.to_ascii_lowercase() as u32) << 8
        | c.to_ascii_lowercase() as u32
}

/// What a build wrote.
#[derive(Clone, Debug, Default)]
pub struct BuildStats {
    /// Files in the part.
    pub files: u64,
    /// Bytes of those files.
    pub bytes: u64,
    /// Files with a NUL byte.
    pub binary: u64,
    /// Files that hold no trigrams (too large, unreadable): read by every search.
    pub unindexed: Vec<String>,
    /// Postings written.
    pub postings: u64,
    /// Bytes of the part's files.
    pub index_bytes: u64,
    /// Each file of the part with its checksum ([`crate::codec::checksum_bytes`]).
    pub checksums: Vec<(String, u64)>,
}

/// Bytes of one arena block: 60 of list bytes, then the next block's index.
const BLOCK: usize = 64;
const BLOCK_DATA: usize = 60;
/// Blocks per arena chunk (1 MiB).
const CHUNK_BLOCKS: usize = 1 << 14;
/// The keys (see [`key`]) are split by their low bits into this many shards, built in
/// parallel.
const SHARDS: usize = 16;

/// The lists of one shard being built, one per trigram seen, as chains of blocks in an arena
/// mapped a megabyte at a time (no list is ever copied to grow). The arena and the slot table
/// are anonymous mappings: zeroed by the kernel as they are touched, and given back to it
/// whole when dropped, so the segment build that follows does not find the heap grown.
struct Lists {
    /// Key / [`SHARDS`] → list index + 1 (0: none yet), as little-endian u32s: the ASCII
    /// trigrams' part, half a megabyte, is the part that is hot.
    slot: memmap2::MmapMut,
    lists: Vec<List>,
    /// The trigram of each list.
    tris: Vec<u32>,
    arena: Vec<memmap2::MmapMut>,
    blocks: u32,
}

/// `len` zeroed bytes of anonymous memory.
fn zeroed(len: usize) -> std::io::Result<memmap2::MmapMut> {
    memmap2::MmapMut::map_anon(len)
}

/// Bytes a list keeps in its own entry before they go to its blocks: most additions then
/// touch one cache line, the entry's.
const PEND: usize = 14;

/// One list being built (its trigram is where the slot table points to it).
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct List {
    head: u32,
    tail: u32,
    last: u32,
    count: u32,
    /// Bytes used in the tail block.
    fill: u8,
    /// Bytes used in `pend`.
    npend: u8,
    /// The list's last bytes, not yet in its blocks.
    pend: [u8; PEND],
}

impl Lists {
    fn new() -> std::io::Result<Lists> {
        Ok(Lists {
            slot: zeroed(KEYS / SHARDS * 4)?,
            lists: Vec::new(),
            tris: Vec::new(),
            arena: Vec::new(),
            blocks: 0,
        })
    }

    fn slot(&self, key: usize) -> u32 {
        let b = &self.slot[key * 4..key * 4 + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    fn block(&mut self) -> std::io::Result<u32> {
        let b = self.blocks;
        if b as usize / CHUNK_BLOCKS >= self.arena.len() {
            self.arena.push(zeroed(CHUNK_BLOCKS * BLOCK)?);
        }
        self.blocks += 1;
        Ok(b)
    }

    fn block_bytes(&mut self, block: u32) -> &mut [u8] {
        let b = block as usize;
        let at = (b % CHUNK_BLOCKS) * BLOCK;
        &mut self.arena[b / CHUNK_BLOCKS][at..at + BLOCK]
    }

    /// Adds document `id` (larger than every id added before) to the list of the trigram
    /// of key `k`.
    fn add(&mut self, k: u32, id: u32) -> std::io::Result<()> {
        let key = k as usize / SHARDS;
        let s = self.slot(key);
        let l = if s == 0 {
            let head = self.block()?;
            self.lists.push(List {
                head,
                tail: head,
                last: 0,
                count: 0,
                fill: 0,
                npend: 0,
                pend: [0; PEND],
            });
            self.tris.push(trigram_of(k));
            let n = self.lists.len() as u32;
            self.slot[key * 4..key * 4 + 4].copy_from_slice(&n.to_le_bytes());
            self.lists.len() - 1
        } else {
            s as usize - 1
        };
        if self.lists[l].npend as usize + 5 > PEND {
            self.flush(l)?;
        }
        let list = &mut self.lists[l];
        let mut n = list.npend as usize;
        let mut delta = id - list.last;
        while delta >= 0x80 {
            list.pend[n] = (delta as u8) | 0x80;
            delta >>= 7;
            n += 1;
        }
        list.pend[n] = delta as u8;
        list.npend = n as u8 + 1;
        list.last = id;
        list.count += 1;
        Ok(())
    }

    /// Adds document `id` (larger than every id added before) to the lists of the trigrams
    /// of keys `keys`, asking for each one's slot and list a few keys ahead (see
    /// [`crate::prefetch`]).
    fn add_doc(&mut self, keys: &[u32], id: u32) -> std::io::Result<()> {
        /// Keys between asking for a slot and using it; the list is asked for halfway.
        const AHEAD: usize = 8;
        for (i, &k) in keys.iter().enumerate() {
            if let Some(&a) = keys.get(i + AHEAD) {
                prefetch(self.slot[a as usize / SHARDS * 4..].as_ptr());
            }
            if let Some(&b) = keys.get(i + AHEAD / 2) {
                if let Some(l) = (self.slot(b as usize / SHARDS) as usize).checked_sub(1) {
                    prefetch(&self.lists[l]);
                }
            }
            self.add(k, id)?;
        }
        Ok(())
    }

    /// Moves the pending bytes of list `l` to its blocks.
    fn flush(&mut self, l: usize) -> std::io::Result<()> {
        let mut list = self.lists[l];
        let mut rest = &list.pend[..list.npend as usize];
        while !rest.is_empty() {
            if list.fill as usize == BLOCK_DATA {
                let next = self.block()?;
                self.block_bytes(list.tail)[BLOCK_DATA..].copy_from_slice(&next.to_le_bytes());
                list.tail = next;
                list.fill = 0;
            }
            let (at, take) = (
                list.fill as usize,
                rest.len().min(BLOCK_DATA - list.fill as usize),
            );
            self.block_bytes(list.tail)[at..at + take].copy_from_slice(&rest[..take]);
            list.fill += take as u8;
            rest = &rest[take..];
        }
        list.npend = 0;
        self.lists[l] = list;
        Ok(())
    }

    /// The bytes of list `l`, appended to `out`.
    fn copy_list(&self, l: &List, out: &mut Vec<u8>) {
        let mut b = l.head;
        loop {
            let chunk = &self.arena[b as usize / CHUNK_BLOCKS];
            let at = (b as usize % CHUNK_BLOCKS) * BLOCK;
            if b == l.tail {
                out.extend_from_slice(&chunk[at..at + l.fill as usize]);
                out.extend_from_slice(&l.pend[..l.npend as usize]);
                return;
            }
            out.extend_from_slice(&chunk[at..at + BLOCK_DATA]);
            let mut next = [0u8; 4];
            next.copy_from_slice(&chunk[at + BLOCK_DATA..at + BLOCK]);
            b = u32::from_le_bytes(next);
        }
    }
}

/// What one file gives the text part (its facts): its flag, its hash and its blocks'
/// trigrams.
pub struct FileGrams {
    flag: u8,
    /// [`crate::codec::hash64`] of the file's bytes (0 when unread).
    hash: u64,
    /// One or more: a file is one block unless indexed whole and larger than [`BLOCK_BYTES`].
    docs: Vec<DocGrams>,
}

/// One block of a file: where it starts and the keys of its distinct trigrams, by shard.
struct DocGrams {
    start: Block,
    grams: Vec<u32>,
    /// Where each shard's trigrams end in `grams`.
    ends: [u32; SHARDS],
}

impl FileGrams {
    fn none(flag: u8) -> FileGrams {
        FileGrams {
            flag,
            hash: 0,
            docs: vec![DocGrams {
                start: Block::FIRST,
                grams: Vec::new(),
                ends: [0; SHARDS],
            }],
        }
    }
}

impl DocGrams {
    /// `grams` ordered by shard (a counting sort).
    fn by_shard(start: Block, grams: &[u32]) -> DocGrams {
        let mut ends = [0u32; SHARDS];
        for &t in grams {
            ends[t as usize % SHARDS] += 1;
        }
        let mut at = [0u32; SHARDS];
        let mut sum = 0;
        for k in 0..SHARDS {
            at[k] = sum;
            sum += ends[k];
            ends[k] = sum;
        }
        let mut out = vec![0u32; grams.len()];
        for &t in grams {
            let k = t as usize % SHARDS;
            out[at[k] as usize] = t;
            at[k] += 1;
        }
        DocGrams {
            start,
            grams: out,
            ends,
        }
    }

    fn shard(&self, k: usize) -> &[u32] {
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        &self.grams[start..self.ends[k] as usize]
    }
}

/// Bits of the ASCII trigrams' keys: three 7-bit bytes.
const ASCII_KEYS: usize = 1 << 21;
/// Keys of all trigrams: the ASCII ones, then one for each trigram of 24 bits.
const KEYS: usize = ASCII_KEYS + (1 << 24);

/// The key of trigram `t`: its three bytes' low 7 bits when all are ASCII (a dense space of
/// 2^21, the part that is hot), else [`ASCII_KEYS`] + `t`. Keys keep the trigram's low 7 bits,
/// so a key's shard is its trigram's.
#[cfg(test)]
fn key(t: u32) -> u32 {
    if t & 0x80_8080 == 0 {
        (t >> 2) & 0x1F_C000 | (t >> 1) & 0x3F80 | t & 0x7F
    } else {
        ASCII_KEYS as u32 + t
    }
}

/// The trigram of key `k` (the inverse of [`key`]).
fn trigram_of(k: u32) -> u32 {
    match k.checked_sub(ASCII_KEYS as u32) {
        Some(t) => t,
        None => (k & 0x1F_C000) << 2 | (k & 0x3F80) << 1 | k & 0x7F,
    }
}

/// Each byte folded to lower case, its low 7 bits.
static LOW7: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).to_ascii_lowercase() & 0x7F;
        i += 1;
    }
    t
};

/// A per-thread set of the trigrams seen in the current block, cleared through the list of
/// those set: a byte for each ASCII trigram's key (two megabytes) and a bit for each other
/// one (two megabytes, rarely touched).
///
/// A byte, not a bit, for the ASCII keys, so that marking a key is a store that does not wait
/// for the load before it: with a bit (a load, an OR and a store), each repeat of a trigram
/// still in the pipeline (a run of blanks, a common word) waited for the store before it, and
/// a branch on whether it is new was mispredicted at every new trigram; both cost more than
/// the cache misses of the larger table.
struct Seen {
    ascii: Vec<u8>,
    high: Vec<u64>,
    /// The keys found, room for a window of bytes past them.
    out: Vec<u32>,
}

/// Bytes looked at between checks that `Seen::out` has room.
const WINDOW: usize = 1 << 16;

/// Trigrams taken together when their bytes are all ASCII, without a test of each.
const RUN: usize = 16;

impl Seen {
    fn new() -> Seen {
        Seen {
            ascii: vec![0; ASCII_KEYS],
            high: vec![0; (KEYS - ASCII_KEYS) / 64],
            out: Vec::new(),
        }
    }

    /// The keys of the distinct trigrams of `bytes`, in the order first seen. The key of an
    /// ASCII trigram is built a byte at a time as the window slides, [`RUN`] trigrams at a
    /// time when all their bytes are ASCII; a trigram with a byte past ASCII goes the slow way.
    fn grams(&mut self, bytes: &[u8]) -> &[u32] {
        let mut n = 0;
        let tris = bytes.len().saturating_sub(2);
        // Sliced to its length, so that a key masked to it needs no bounds check.
        let ascii = &mut self.ascii[..ASCII_KEYS];
        let mut k = match bytes {
            [a, b, _, ..] => (LOW7[*a as usize] as u32) << 7 | LOW7[*b as usize] as u32,
            _ => 0,
        };
        let mut at = 0;
        while at < tris {
            let end = tris.min(at + WINDOW);
            if self.out.len() < n + (end - at) {
                self.out.resize(n + (end - at), 0);
            }
            let out = &mut self.out[..];
            let mut i = at;
            while i < end {
                if let Some(run) = bytes[i..].first_chunk::<{ RUN + 2 }>() {
                    if i + RUN <= end && all_ascii(run) {
                        for &c in &run[2..] {
                            k = k << 7 | LOW7[c as usize] as u32;
                            mark(ascii, out, &mut n, k);
                        }
                        i += RUN;
                        continue;
                    }
                }
                let (a, b, c) = (bytes[i], bytes[i + 1], bytes[i + 2]);
                k = k << 7 | LOW7[c as usize] as u32;
                if (a | b | c) < 0x80 {
                    mark(ascii, out, &mut n, k);
                } else {
                    let t = trigram(a, b, c);
                    let (w, bit) = (t as usize >> 6, 1u64 << (t & 63));
                    if self.high[w] & bit == 0 {
                        self.high[w] |= bit;
                        out[n] = ASCII_KEYS as u32 + t;
                        n += 1;
                    }
                }
                i += 1;
            }
            at = end;
        }
        for &key in &self.out[..n] {
            match (key as usize).checked_sub(ASCII_KEYS) {
                None => self.ascii[key as usize] = 0,
                Some(t) => self.high[t >> 6] = 0,
            }
        }
        &self.out[..n]
    }
}

/// True when the bytes of a run are all ASCII, tested a word at a time (a fold of the bytes
/// was compiled to a load of each, kept in registers and spilled).
#[inline(always)]
fn all_ascii(run: &[u8; RUN + 2]) -> bool {
    let word = |at: usize| u64::from_le_bytes(std::array::from_fn(|j| run[at + j]));
    (word(0) | word(8) | (run[16] | run[17]) as u64) & 0x8080_8080_8080_8080 == 0
}

/// Marks the ASCII key of `k` (its low 21 bits) seen in `ascii` (one byte per key), keeping
/// it in `out` at `n` if it is new, without a branch.
#[inline(always)]
fn mark(ascii: &mut [u8], out: &mut [u32], n: &mut usize, k: u32) {
    let key = k & (ASCII_KEYS as u32 - 1);
    let was = ascii[key as usize];
    ascii[key as usize] = 1;
    out[*n] = key;
    *n += (was ^ 1) as usize;
}

thread_local! {
    /// Each thread's [`Seen`], made once (not once per task rayon splits).
    static SEEN: std::cell::RefCell<Seen> = std::cell::RefCell::new(Seen::new());
    /// Each thread's read buffer.
    static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Calls `f` with the keys of the distinct trigrams of `bytes`, in the order first seen (an
/// ASCII trigram's key is its three bytes' low 7 bits, another's 2^21 + the trigram), as the
/// build takes them from one document: for benches of that step.
pub fn trigram_keys<R>(bytes: &[u8], f: impl FnOnce(&[u32]) -> R) -> R {
    SEEN.with(|s| f(s.borrow_mut().grams(bytes)))
}

/// The facts of `f`, read with `opener` into `buf`: none for a file too large or unreadable.
/// With `prover`, the bytes read are digested into the part's proof.
fn file_grams(
    opener: &Opener,
    f: &TextFile,
    buf: &mut Vec<u8>,
    prover: Option<&Prover>,
) -> FileGrams {
    if f.size > MAX_INDEXED_BYTES {
        return FileGrams::none(UNINDEXED);
    }
    let bytes = opener.read_with(&f.path, buf);
    if let (Some(p), Some(b)) = (prover, bytes.as_deref()) {
        p.saw(&f.path, b);
    }
    <TextIndex as FromFacts>::facts(&f.path, bytes.as_deref())
}

impl FromFacts for TextIndex {
    type Facts = FileGrams;

    fn facts(_path: &str, bytes: Option<&[u8]>) -> FileGrams {
        let Some(bytes) = bytes else {
            return FileGrams::none(UNINDEXED);
        };
        // rg reads a file that starts with a UTF-16 byte order mark as UTF-8 transcoded from
        // it: its raw bytes say nothing of what rg matches.
        if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
            return FileGrams::none(UNINDEXED);
        }
        let hash = crate::codec::hash64(bytes);
        SEEN.with(|seen| {
            let seen = &mut *seen.borrow_mut();
            let docs = match memchr::memchr(0, bytes) {
                Some(nul) => {
                    return FileGrams {
                        flag: BINARY,
                        hash,
                        docs: vec![DocGrams::by_shard(Block::FIRST, seen.grams(&bytes[..nul]))],
                    }
                }
                None => blocks(bytes)
                    .map(|(start, b)| {
                        // Two bytes past the block: a trigram across its last newline is kept
                        // too.
                        let end = (b.end + 2).min(bytes.len());
                        DocGrams::by_shard(start, seen.grams(&bytes[start.offset as usize..end]))
                    })
                    .collect(),
            };
            FileGrams {
                flag: INDEXED,
                hash,
                docs,
            }
        })
    }
}

/// A file indexed whole is split into blocks of whole lines, each at least this many bytes
/// (but the last): each block is a document of the posting lists, so that a search reads only
/// the blocks of a large file that hold its trigrams.
pub const BLOCK_BYTES: usize = 256 << 10;

/// Where a block of a file starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Byte offset in the file.
    pub offset: u32,
    /// 1-based number of its first line.
    pub line: u32,
}

impl Block {
    const FIRST: Block = Block { offset: 0, line: 1 };
}

/// The blocks of `bytes` (at most [`MAX_INDEXED_BYTES`]): each start with its byte range.
fn blocks(bytes: &[u8]) -> impl Iterator<Item = (Block, std::ops::Range<usize>)> + '_ {
    let mut next = Some(Block::FIRST);
    std::iter::from_fn(move || {
        let start = next?;
        let at = start.offset as usize;
        let end = bytes
            .get(at + BLOCK_BYTES..)
            .and_then(|rest| memchr::memchr(b'\n', rest))
            .map_or(bytes.len(), |nl| at + BLOCK_BYTES + nl + 1);
        next = (end < bytes.len()).then(|| Block {
            offset: end as u32,
            line: start.line + memchr::memchr_iter(b'\n', &bytes[at..end]).count() as u32,
        });
        Some((start, at..end))
    })
}

/// Builds the part for `files` (sorted by path) in `dir`, calling `files_read` once every file
/// is read (the rest is one thread's work); `prover` takes the digest of each file read.
pub fn build(
    root: &Path,
    files: &[TextFile],
    dir: &Path,
    prover: Option<&Prover>,
    files_read: &dyn Fn(),
) -> Result<BuildStats, String> {
    let io = |e: std::io::Error| format!("cannot write the text index in {}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(io)?;
    let shards: Vec<Lists> = (0..SHARDS)
        .map(|_| Lists::new())
        .collect::<std::io::Result<_>>()
        .map_err(io)?;
    let (
        ReadFiles {
            flags,
            first_doc,
            starts,
            postings,
        },
        shards,
    ) = read_files(root, files, shards, prover).map_err(|e| io(std::io::Error::other(e)))?;
    files_read();
    // files.bin
    let out = files_bin(files, &flags);
    write_file(&dir.join("files.bin"), &out).map_err(io)?;
    let mut checksums = vec![("files.bin".to_string(), checksum_bytes(&out))];
    let files_bytes = out.len() as u64;
    drop(out);
    // docs.bin
    let docs = docs_bin(files.len(), &first_doc, &starts);
    write_file(&dir.join("docs.bin"), &docs).map_err(io)?;
    checksums.push(("docs.bin".to_string(), checksum_bytes(&docs)));
    let docs_bytes = docs.len() as u64;
    drop(docs);
    // grams.bin and post.bin
    let Written {
        grams,
        post_sum,
        post_bytes,
    } = write_lists(dir, shards).map_err(io)?;
    checksums.push(("post.bin".to_string(), post_sum));
    write_file(&dir.join("grams.bin"), &grams).map_err(io)?;
    checksums.push(("grams.bin".to_string(), checksum_bytes(&grams)));
    let index_bytes = files_bytes + docs_bytes + grams.len() as u64 + post_bytes;
    Ok(BuildStats {
        files: files.len() as u64,
        bytes: files.iter().map(|f| f.size).sum(),
        binary: flags.iter().filter(|f| f.0 == BINARY).count() as u64,
        unindexed: files
            .iter()
            .zip(&flags)
            .filter(|(_, f)| f.0 == UNINDEXED)
            .map(|(f, _)| f.path.clone())
            .collect(),
        postings,
        index_bytes,
        checksums,
    })
}

/// What [`read_files`] found of each file, in file order.
struct ReadFiles {
    /// Each file's flag and hash.
    flags: Vec<(u8, u64)>,
    /// Each file's first document, then the number of documents.
    first_doc: Vec<u32>,
    /// Where each document starts.
    starts: Vec<Block>,
    /// Trigrams added to the lists.
    postings: u64,
}

/// The text part's files' facts merged, in path order: their trigrams added to the lists of
/// their shards, documents numbered in file order.
pub struct TextMerge {
    shards: Vec<Lists>,
    read: ReadFiles,
}

impl Merge<FileGrams> for TextMerge {
    fn add(&mut self, got: Vec<FileGrams>) -> Result<(), IndexError> {
        use rayon::prelude::*;
        let ReadFiles {
            flags,
            first_doc,
            starts,
            postings,
        } = &mut self.read;
        let first = starts.len() as u32;
        self.shards
            .par_iter_mut()
            .enumerate()
            .try_for_each(|(k, lists)| {
                let docs = got.iter().flat_map(|g| &g.docs);
                for (j, d) in docs.enumerate() {
                    lists.add_doc(d.shard(k), first + j as u32)?;
                }
                Ok(())
            })
            .map_err(|e: std::io::Error| IndexError::Build(e.to_string()))?;
        for g in &got {
            flags.push((g.flag, g.hash));
            first_doc.push(starts.len() as u32);
            for d in &g.docs {
                starts.push(d.start);
                *postings += d.grams.len() as u64;
            }
        }
        Ok(())
    }
}

/// Reads `files` and adds the trigrams of their documents to `shards`, documents numbered in
/// file order.
fn read_files(
    root: &Path,
    files: &[TextFile],
    shards: Vec<Lists>,
    prover: Option<&Prover>,
) -> Result<(ReadFiles, Vec<Lists>), String> {
    let opener = Opener::new(root);
    let mut merge = TextMerge {
        shards,
        read: ReadFiles {
            flags: Vec::with_capacity(files.len()),
            first_doc: Vec::with_capacity(files.len() + 1),
            starts: Vec::with_capacity(files.len()),
            postings: 0,
        },
    };
    crate::part::build(
        files,
        |f| BUF.with(|buf| file_grams(&opener, f, &mut buf.borrow_mut(), prover)),
        &mut merge,
    )
    .map_err(|e| e.to_string())?;
    let TextMerge {
        shards,
        read: mut got,
    } = merge;
    got.first_doc.push(got.starts.len() as u32);
    Ok((got, shards))
}

/// The bytes of `files.bin`: each file's offset, then its flag, size, mtime, hash and path.
fn files_bin(files: &[TextFile], flags: &[(u8, u64)]) -> Vec<u8> {
    let mut records = Vec::with_capacity(files.len() * 48);
    let mut offsets: Vec<u32> = Vec::with_capacity(files.len() + 1);
    for (f, (flag, hash)) in files.iter().zip(flags) {
        offsets.push(records.len() as u32);
        records.push(*flag);
        put_varint(&mut records, f.size);
        put_varint(&mut records, f.mtime_ns as u64);
        records.extend_from_slice(&hash.to_le_bytes());
        put_str(&mut records, f.path.as_bytes());
    }
    offsets.push(records.len() as u32);
    let mut out = Vec::with_capacity(FILES_HEAD + offsets.len() * 4 + records.len());
    out.extend_from_slice(&header(FILES_KIND));
    out.extend_from_slice(&(files.len() as u32).to_le_bytes());
    for o in &offsets {
        out.extend_from_slice(&o.to_le_bytes());
    }
    out.extend_from_slice(&records);
    out
}

/// The bytes of `docs.bin`: each of the `files` files' first document, then where each
/// document starts.
fn docs_bin(files: usize, first_doc: &[u32], starts: &[Block]) -> Vec<u8> {
    let mut docs = Vec::with_capacity(DOCS_HEAD + first_doc.len() * 4 + starts.len() * DOC_ENTRY);
    docs.extend_from_slice(&header(DOCS_KIND));
    docs.extend_from_slice(&(files as u32).to_le_bytes());
    docs.extend_from_slice(&(starts.len() as u32).to_le_bytes());
    for d in first_doc {
        docs.extend_from_slice(&d.to_le_bytes());
    }
    for b in starts {
        docs.extend_from_slice(&b.offset.to_le_bytes());
        docs.extend_from_slice(&b.line.to_le_bytes());
    }
    docs
}

/// What [`write_lists`] wrote, and what is left to write.
struct Written {
    /// The bytes of `grams.bin`.
    grams: Vec<u8>,
    /// The checksum of `post.bin`.
    post_sum: u64,
    /// The bytes of `post.bin`.
    post_bytes: u64,
}

/// Writes the lists of `shards` to `post.bin` in `dir`, in trigram order, and returns the
/// `grams.bin` that finds them; the shards are dropped once written.
fn write_lists(dir: &Path, shards: Vec<Lists>) -> std::io::Result<Written> {
    // The lists in trigram order.
    let mut order: Vec<(u32, usize, u32)> = shards
        .iter()
        .enumerate()
        .flat_map(|(k, l)| (0..l.tris.len() as u32).map(move |i| (l.tris[i as usize], k, i)))
        .collect();
    order.sort_unstable();
    let lists = order.len();
    let mut grams = Vec::with_capacity(GRAMS_HEAD + lists * GRAM_ENTRY);
    grams.extend_from_slice(&header(GRAMS_KIND));
    grams.extend_from_slice(&(lists as u64).to_le_bytes());
    let post_path = dir.join("post.bin");
    let mut post = std::fs::File::create(&post_path)?;
    // The lists are copied into `chunk` (after post.bin's header) and written from it a
    // checksum chunk at a time; the checksum of post.bin is taken as written, chunk by chunk
    // as `checksum_bytes` takes it.
    let mut sum = 0u64;
    let mut chunk: Vec<u8> = Vec::with_capacity(2 * CHECKSUM_CHUNK);
    chunk.extend_from_slice(&header(POST_KIND));
    let mut at = HEADER_LEN as u64;
    for (tri, k, i) in order {
        let l = shards[k].lists[i as usize];
        let before = chunk.len();
        shards[k].copy_list(&l, &mut chunk);
        grams.extend_from_slice(&tri.to_le_bytes());
        grams.extend_from_slice(&l.count.to_le_bytes());
        grams.extend_from_slice(&at.to_le_bytes());
        at += (chunk.len() - before) as u64;
        if chunk.len() >= CHECKSUM_CHUNK {
            let full = chunk.len() - chunk.len() % CHECKSUM_CHUNK;
            for c in chunk[..full].chunks(CHECKSUM_CHUNK) {
                sum = sum.rotate_left(17) ^ crate::codec::hash64(c);
            }
            post.write_all(&chunk[..full])?;
            chunk.drain(..full);
        }
    }
    if !chunk.is_empty() {
        sum = sum.rotate_left(17) ^ crate::codec::hash64(&chunk);
        post.write_all(&chunk)?;
    }
    post.sync_all()?;
    drop(shards);
    Ok(Written {
        grams,
        post_sum: sum,
        post_bytes: at,
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// One file of an open part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Root-relative path.
    pub path: &'a str,
    /// Size when indexed.
    pub size: u64,
    /// Mtime when indexed (ns).
    pub mtime_ns: i64,
    /// [`INDEXED`], [`BINARY`] or [`UNINDEXED`].
    pub flag: u8,
    /// Hash of its bytes when indexed (0 when unread).
    pub hash: u64,
}

/// An open part, its files mapped.
pub struct TextIndex {
    files: memmap2::Mmap,
    docs: memmap2::Mmap,
    grams: memmap2::Mmap,
    post: memmap2::Mmap,
    count: usize,
    doc_count: usize,
}

fn map(path: &Path) -> Result<memmap2::Mmap, String> {
    crate::disk::map_file(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The little-endian u32 at `at` of `bytes`, if it is there.
fn u32_field(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// The little-endian u64 at `at` of `bytes`, if it is there.
fn u64_field(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// The error of a damaged part.
fn damaged(dir: &Path, what: &str) -> String {
    format!(
        "the text index {} is damaged ({what}); run `knav index --full` to rebuild it",
        dir.display()
    )
}

impl TextIndex {
    /// Opens the part in `dir`.
    pub fn open(dir: &Path) -> Result<TextIndex, String> {
        let files = map(&dir.join("files.bin"))?;
        let docs = map(&dir.join("docs.bin"))?;
        let grams = map(&dir.join("grams.bin"))?;
        let post = map(&dir.join("post.bin"))?;
        for (bytes, name, kind) in [
            (&files, "files.bin", FILES_KIND),
            (&docs, "docs.bin", DOCS_KIND),
            (&grams, "grams.bin", GRAMS_KIND),
            (&post, "post.bin", POST_KIND),
        ] {
            check_header(bytes, kind, Path::new(name)).map_err(|e| damaged(dir, &e.to_string()))?;
        }
        let (Some(count), Some(n), Some(doc_count)) = (
            u32_field(&files, HEADER_LEN),
            u64_field(&grams, HEADER_LEN),
            u32_field(&docs, HEADER_LEN + 4),
        ) else {
            return Err(damaged(dir, "a header is cut short"));
        };
        let (count, n, doc_count) = (count as usize, n as usize, doc_count as usize);
        if files.len() < FILES_HEAD + (count + 1) * 4 {
            return Err(damaged(dir, "files.bin is cut short"));
        }
        if n.checked_mul(GRAM_ENTRY)
            .and_then(|b| b.checked_add(GRAMS_HEAD))
            != Some(grams.len())
        {
            return Err(damaged(dir, "grams.bin has the wrong size"));
        }
        if u32_field(&docs, HEADER_LEN) != Some(count as u32) {
            return Err(damaged(dir, "docs.bin is of other files"));
        }
        if docs.len() != DOCS_HEAD + (count + 1) * 4 + doc_count * DOC_ENTRY {
            return Err(damaged(dir, "docs.bin has the wrong size"));
        }
        let idx = TextIndex {
            files,
            docs,
            grams,
            post,
            count,
            doc_count,
        };
        // Every file has one document or more, in order: checked once here.
        if idx.first_doc(0) != 0
            || idx.first_doc(count) != doc_count as u32
            || (0..count).any(|i| idx.first_doc(i) >= idx.first_doc(i + 1))
        {
            return Err(damaged(dir, "docs.bin's documents are out of order"));
        }
        // Every record must lie inside the file, in order: checked once here.
        let end = idx.offset(count).unwrap_or(usize::MAX);
        if (0..count).any(|i| idx.offset(i) > idx.offset(i + 1)) || end > idx.records().len() {
            return Err(damaged(dir, "files.bin's offsets are out of order"));
        }
        Ok(idx)
    }

    /// Bytes of the part's files.
    pub fn bytes(&self) -> u64 {
        (self.files.len() + self.docs.len() + self.grams.len() + self.post.len()) as u64
    }

    fn u32_at(bytes: &[u8], at: usize) -> u32 {
        bytes
            .get(at..at + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The first document of file `id` (of `id` = [`TextIndex::len`]: the number of
    /// documents).
    fn first_doc(&self, id: usize) -> u32 {
        Self::u32_at(&self.docs, DOCS_HEAD + id * 4)
    }

    /// The file of document `doc` (a valid document id).
    pub fn file_of(&self, doc: u32) -> u32 {
        // The last file whose first document is at most `doc`.
        let (mut lo, mut hi) = (0usize, self.count);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.first_doc(mid) <= doc {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo as u32
    }

    /// The documents of file `id`: one, unless it was indexed in blocks.
    pub fn docs(&self, id: u32) -> std::ops::Range<u32> {
        self.first_doc(id as usize)..self.first_doc(id as usize + 1)
    }

    /// Where document `doc` starts in its file.
    pub fn block(&self, doc: u32) -> Block {
        let at = DOCS_HEAD + (self.count + 1) * 4 + doc as usize * DOC_ENTRY;
        Block {
            offset: Self::u32_at(&self.docs, at),
            line: Self::u32_at(&self.docs, at + 4),
        }
    }

    /// Files in the part.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when the part has no files.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn records(&self) -> &[u8] {
        &self.files[FILES_HEAD + (self.count + 1) * 4..]
    }

    fn offset(&self, i: usize) -> Option<usize> {
        let at = FILES_HEAD + i * 4;
        let b = self.files.get(at..at + 4)?;
        Some(u32::from_le_bytes(b.try_into().ok()?) as usize)
    }

    /// File `id`; a damaged record reads as an unindexed file with an empty path.
    pub fn entry(&self, id: u32) -> Entry<'_> {
        let bad = Entry {
            path: "",
            size: 0,
            mtime_ns: 0,
            flag: UNINDEXED,
            hash: 0,
        };
        let (Some(a), Some(b)) = (self.offset(id as usize), self.offset(id as usize + 1)) else {
            return bad;
        };
        let Some(rec) = self.records().get(a..b) else {
            return bad;
        };
        let mut r = Reader::new(rec);
        let flag = r.u8();
        let size = r.varint();
        let mtime_ns = r.varint() as i64;
        let hash = u64::from_le_bytes(r.bytes(8).try_into().unwrap_or_default());
        let path = std::str::from_utf8(r.str()).unwrap_or("");
        if r.overrun {
            return bad;
        }
        Entry {
            path,
            size,
            mtime_ns,
            flag,
            hash,
        }
    }

    /// The id of `path`, if the part holds it.
    pub fn find(&self, path: &str) -> Option<u32> {
        let (mut lo, mut hi) = (0u32, self.count as u32);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.entry(mid).path.cmp(path) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The documents holding trigram `tri`, in id order; `Err` on a damaged list.
    pub fn list(&self, tri: u32) -> Result<Vec<u32>, &'static str> {
        let n = (self.grams.len() - GRAMS_HEAD) / GRAM_ENTRY;
        let entry = |i: usize| -> (u32, u32, u64) {
            let at = GRAMS_HEAD + i * GRAM_ENTRY;
            let e = &self.grams[at..at + GRAM_ENTRY];
            let u32_at = |k: usize| u32::from_le_bytes([e[k], e[k + 1], e[k + 2], e[k + 3]]);
            let off = u64::from_le_bytes(e[8..16].try_into().unwrap_or_default());
            (u32_at(0), u32_at(4), off)
        };
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (t, count, off) = entry(mid);
            match t.cmp(&tri) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let end = if mid + 1 < n {
                        entry(mid + 1).2
                    } else {
                        self.post.len() as u64
                    };
                    let bytes = self
                        .post
                        .get(off as usize..end as usize)
                        .filter(|_| off >= HEADER_LEN as u64)
                        .ok_or("a posting list lies outside post.bin")?;
                    // Every document id takes a byte or more: a count the list's bytes
                    // cannot hold is damage, found before anything is reserved for it.
                    let mut r = IdReader::counted(bytes, count.into());
                    let mut out = Vec::with_capacity(r.left() as usize);
                    let mut id = 0u64;
                    while let Some(next) = r.next_id() {
                        id = next;
                        out.push(id as u32);
                    }
                    if r.damaged || id >= self.doc_count as u64 && count > 0 {
                        return Err("a posting list is damaged");
                    }
                    return Ok(out);
                }
            }
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extraction as it was before [`Seen`] kept a byte per ASCII key: the oracle.
    struct BitSeen {
        bits: Vec<u64>,
        out: Vec<u32>,
    }

    impl BitSeen {
        fn new() -> BitSeen {
            BitSeen {
                bits: vec![0; KEYS / 64],
                out: Vec::new(),
            }
        }

        fn grams(&mut self, bytes: &[u8]) -> &[u32] {
            let mut n = 0;
            if bytes.len() >= 3 {
                let (ascii, high) = self.bits.split_at_mut(ASCII_KEYS / 64);
                let mut k = (LOW7[bytes[0] as usize] as u32) << 7 | LOW7[bytes[1] as usize] as u32;
                let mut raw = (bytes[0] as u32) << 8 | bytes[1] as u32;
                for window in bytes[2..].chunks(WINDOW) {
                    if self.out.len() < n + window.len() {
                        self.out.resize(n + window.len(), 0);
                    }
                    let out = &mut self.out[..];
                    for &c in window {
                        k = (k << 7 | LOW7[c as usize] as u32) & (ASCII_KEYS as u32 - 1);
                        raw = raw << 8 | c as u32;
                        if raw & 0x80_8080 == 0 {
                            let (w, bit) = (k as usize >> 6, 1u64 << (k & 63));
                            let seen = ascii[w];
                            ascii[w] = seen | bit;
                            out[n] = k;
                            n += (seen & bit == 0) as usize;
                        } else {
                            let t = trigram((raw >> 16) as u8, (raw >> 8) as u8, c);
                            let (w, bit) = (t as usize >> 6, 1u64 << (t & 63));
                            if high[w] & bit == 0 {
                                high[w] |= bit;
                                out[n] = ASCII_KEYS as u32 + t;
                                n += 1;
                            }
                        }
                    }
                }
                for &key in &self.out[..n] {
                    self.bits[key as usize >> 6] = 0;
                }
            }
            &self.out[..n]
        }
    }

    /// Pieces of text: ASCII words and blanks, runs of one byte, bytes past ASCII, any bytes.
    fn piece() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            "[a-zA-Z_0-9 \t\n(){};*/.-]{0,40}".prop_map(String::into_bytes),
            (any::<u8>(), 0..40usize).prop_map(|(b, n)| vec![b; n]),
            proptest::collection::vec(0x80u8.., 0..4),
            proptest::collection::vec(any::<u8>(), 0..5),
        ]
    }

    proptest::proptest! {
        /// Documents of 0 to hundreds of bytes, one after another through one `Seen`: the keys,
        /// in order, are the bit-per-key extraction's.
        #[test]
        fn seen_gives_the_keys_of_the_bit_per_key_extraction_in_its_order(
            docs in proptest::collection::vec(proptest::collection::vec(piece(), 0..30), 1..4)
        ) {
            let (mut seen, mut oracle) = (Seen::new(), BitSeen::new());
            for doc in docs {
                let doc = doc.concat();
                proptest::prop_assert_eq!(seen.grams(&doc), oracle.grams(&doc));
            }
        }
    }

    #[test]
    fn seen_gives_the_keys_of_the_bit_per_key_extraction_across_windows() {
        // Pseudo-random text of 300,000 bytes, mostly ASCII: runs of 16 trigrams and single
        // ones, bytes past ASCII here and there, across several windows.
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ_0123 \t\n(){};*";
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut doc = Vec::new();
        while doc.len() < 300_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 100 {
                0 => doc.push(0xC3),
                1..=9 => doc.extend_from_slice(&[b' '; 12]),
                _ => doc.push(ALPHABET[(x >> 8) as usize % ALPHABET.len()]),
            }
        }
        let (mut seen, mut oracle) = (Seen::new(), BitSeen::new());
        for len in [
            doc.len(),
            WINDOW + 17,
            WINDOW + 2,
            WINDOW + 1,
            3,
            2,
            0,
            doc.len(),
        ] {
            assert_eq!(
                seen.grams(&doc[..len]),
                oracle.grams(&doc[..len]),
                "{len} bytes"
            );
        }
    }

    #[test]
    fn seen_gives_each_folded_trigram_once_and_forgets_them_for_the_next_block() {
        let mut seen = Seen::new();
        let mut grams =
            |b: &[u8]| -> Vec<u32> { seen.grams(b).iter().map(|&k| trigram_of(k)).collect() };
        let t = |s: &[u8]| trigram(s[0], s[1], s[2]);
        let want = [t(b"abc"), t(b"bca"), t(b"cab")];
        assert_eq!(grams(b"abcABCab"), want);
        assert_eq!(grams(b"abcabc"), want);
        // Bytes past ASCII have bits of their own: no trigram is taken for another.
        let high = [b'a', 0xC3, 0xA9, b'a', b'b', b'c'];
        let want = [
            t(&[b'a', 0xC3, 0xA9]),
            t(&[0xC3, 0xA9, b'a']),
            t(&[0xA9, b'a', b'b']),
            t(b"abc"),
        ];
        assert_eq!(grams(&high), want);
        // A byte past ASCII is kept as it is; an ASCII letter next to it is folded.
        let want = [t(&[0xC3, 0x89, b'a']), t(&[0x89, b'a', b'a'])];
        assert_eq!(grams(&[0xC3, 0x89, b'A', b'a']), want);
        assert!(grams(b"ab").is_empty());
    }

    #[test]
    fn a_key_gives_back_its_trigram_and_keeps_its_low_bits() {
        for t in [
            0, 0x61_6263, 0x7F_7F7F, 0x80_0000, 0x61_8062, 0x00_0080, 0xFF_FFFF,
        ] {
            assert_eq!(trigram_of(key(t)), t, "{t:06x}");
            assert_eq!(key(t) as usize % SHARDS, t as usize % SHARDS, "{t:06x}");
        }
        assert!(key(0x7F_7F7F) < ASCII_KEYS as u32 && key(0x61_8062) >= ASCII_KEYS as u32);
    }

    #[test]
    fn a_list_longer_than_its_pending_bytes_reads_back_whole() {
        let mut lists = Lists::new().unwrap();
        let ids: Vec<u32> = (0..500u32).map(|i| i * i).collect();
        for &id in &ids {
            lists.add(7 * SHARDS as u32, id).unwrap();
        }
        let mut bytes = Vec::new();
        let list = lists.lists[0];
        lists.copy_list(&list, &mut bytes);
        let mut r = Reader::new(&bytes);
        let mut id = 0u32;
        let back: Vec<u32> = (0..list.count)
            .map(|_| {
                id += r.varint() as u32;
                id
            })
            .collect();
        assert_eq!(back, ids);
        assert!(r.at_end());
    }
}
