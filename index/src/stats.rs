//! What a definition answer needs from a hot name's postings, computed once at index time.
//!
//! `knav def kfree` reports how often the name is referenced, in how many files, the files
//! that use it most, whether it is exported, and its `#define`s; for a name with tens of
//! thousands of occurrences that is a walk of all its postings on every query. A name with at
//! least [`MIN_OCCURRENCES`] occurrences stores these facts per file after its postings in
//! `names-K.dat` (kfree: 9,404 files for 39,994 occurrences), so that a query reads those
//! instead, leaving out the files a later segment replaced.

use super::codec::{put_varint, Reader};
use super::postings::Postings;
use knav_c::scan::Role;

/// Names with at least this many occurrences in a segment carry [`NameStats`].
pub const MIN_OCCURRENCES: u64 = 2048;

/// Files kept in [`NameStats::top`]: a query shows five, and merges segments' lists.
pub const TOP_FILES: usize = 64;

/// Keeps the [`TOP_FILES`] entries of `files` with the most references, most first, ties by
/// file: selected, not all sorted. A query's top files and a hot name's stored ones are chosen
/// by this one rule, so that the stored list stands for its segment's files.
pub fn keep_top<K: Ord + Copy, C: Ord + Copy>(files: &mut Vec<(K, C)>) {
    let order = |a: &(K, C), b: &(K, C)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
    if files.len() > TOP_FILES {
        files.select_nth_unstable_by(TOP_FILES - 1, order);
        files.truncate(TOP_FILES);
    }
    files.sort_unstable_by(order);
}

/// The `(file, line)`s of a name's definitions, sorted, asked about postings in posting order:
/// a cursor answers whether each is on a definition line, no search.
pub struct DefLines<'a> {
    lines: &'a [(u32, u32)],
    next: usize,
}

impl<'a> DefLines<'a> {
    /// A cursor over `lines`, which must be sorted.
    pub fn new(lines: &'a [(u32, u32)]) -> DefLines<'a> {
        DefLines { lines, next: 0 }
    }

    /// True when `(file, line)`, at or after every position asked before, is a definition line.
    pub fn contains(&mut self, file: u32, line: u32) -> bool {
        while self.lines.get(self.next).is_some_and(|d| *d < (file, line)) {
            self.next += 1;
        }
        self.lines.get(self.next) == Some(&(file, line))
    }
}

/// A hot name's facts in one segment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameStats {
    /// References: occurrences not on one of the name's definition lines, not `#define`s.
    pub refs: u64,
    /// Files holding references.
    pub files: u64,
    /// The [`TOP_FILES`] files with the most references, `(file id, references)`, most first,
    /// then by file id.
    pub top: Vec<(u32, u32)>,
    /// Its `EXPORT_*` postings, `(file id, line)`, in posting order.
    pub exports: Vec<(u32, u32)>,
    /// Its `#define`s, `(file id, line)`, in posting order.
    pub macro_defs: Vec<(u32, u32)>,
    /// Per file holding it, in file order: `(file id, references, other occurrences)`; what a
    /// query counts instead when a later segment replaced some of the files. Kept encoded
    /// until then ([`NameStats::per_file`]).
    per_file: Vec<u8>,
}

impl NameStats {
    /// The facts of `postings`, whose name has its (non entry-point) definitions on the sorted
    /// `(file, line)`s of `def_lines`.
    pub fn compute(postings: &[u8], def_lines: &[(u32, u32)]) -> NameStats {
        let mut st = NameStats::default();
        let mut per_file: Vec<(u32, u32, u32)> = Vec::new();
        let mut defs = DefLines::new(def_lines);
        for p in Postings::new(postings) {
            match p.role {
                Role::Export => st.exports.push((p.file, p.line)),
                Role::MacroDef => st.macro_defs.push((p.file, p.line)),
                _ => {}
            }
            let at_def = defs.contains(p.file, p.line);
            let is_ref = p.role != Role::MacroDef && !at_def;
            if per_file.last().is_none_or(|f| f.0 != p.file) {
                per_file.push((p.file, 0, 0));
            }
            if let Some(f) = per_file.last_mut() {
                if is_ref {
                    f.1 += 1;
                } else {
                    f.2 += 1;
                }
            }
        }
        let mut top: Vec<(u32, u32)> = per_file
            .iter()
            .filter(|f| f.1 > 0)
            .map(|f| (f.0, f.1))
            .collect();
        st.refs = top.iter().map(|f| f.1 as u64).sum();
        st.files = top.len() as u64;
        keep_top(&mut top);
        st.top = top;
        let mut prev = 0u32;
        put_varint(&mut st.per_file, per_file.len() as u64);
        for &(file, refs, other) in &per_file {
            put_varint(&mut st.per_file, (file - prev) as u64);
            put_varint(&mut st.per_file, refs as u64);
            put_varint(&mut st.per_file, other as u64);
            prev = file;
        }
        st
    }

    /// Per file holding the name, in file order: `(file id, references, other occurrences)`.
    pub fn per_file(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        let mut r = Reader::new(&self.per_file);
        let n = r.varint();
        let mut file = 0u32;
        (0..n).map_while(move |_| {
            file = file.wrapping_add(r.varint() as u32);
            let f = (file, r.varint() as u32, r.varint() as u32);
            (!r.overrun).then_some(f)
        })
    }

    /// Appends the encoded facts.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.refs);
        put_varint(out, self.files);
        for list in [&self.top, &self.exports, &self.macro_defs] {
            put_varint(out, list.len() as u64);
            for &(a, b) in list {
                put_varint(out, a as u64);
                put_varint(out, b as u64);
            }
        }
        put_varint(out, self.per_file.len() as u64);
        out.extend_from_slice(&self.per_file);
    }

    /// Decodes facts written by [`NameStats::encode`]; `None` when they are cut short.
    pub fn decode(r: &mut Reader<'_>) -> Option<NameStats> {
        let refs = r.varint();
        let files = r.varint();
        let mut pairs = || {
            let n = r.varint() as usize;
            let mut v = Vec::with_capacity(n.min(1 << 10));
            for _ in 0..n.min(1 << 24) {
                v.push((r.varint() as u32, r.varint() as u32));
                if r.overrun {
                    break;
                }
            }
            v
        };
        let top = pairs();
        let exports = pairs();
        let macro_defs = pairs();
        let n = r.varint() as usize;
        let per_file = r.bytes(n).to_vec();
        (!r.overrun).then_some(NameStats {
            refs,
            files,
            top,
            exports,
            macro_defs,
            per_file,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Postings of `(file, [(line, role)])` blocks, encoded as the index stores them.
    fn postings(blocks: &[(u32, &[(u32, Role)])]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut prev_file = 0;
        for (i, (file, occ)) in blocks.iter().enumerate() {
            put_varint(
                &mut out,
                (if i == 0 { *file } else { file - prev_file }) as u64,
            );
            put_varint(&mut out, occ.len() as u64);
            let mut prev_line = 0;
            for &(line, role) in occ.iter() {
                put_varint(&mut out, (((line - prev_line) as u64) << 2) | role as u64);
                prev_line = line;
            }
            prev_file = *file;
        }
        out
    }

    #[test]
    fn counts_skip_definition_lines_and_defines() {
        let p = postings(&[
            (
                2,
                &[(10, Role::Ref), (12, Role::MacroDef), (40, Role::Call)],
            ),
            (5, &[(3, Role::Call), (8, Role::Export), (9, Role::Call)]),
            (7, &[(4, Role::MacroDef)]),
            (9, &[(1, Role::Ref), (7, Role::Call), (9, Role::Call)]),
        ]);
        // A definition of the name on 2:10 and another on 9:7.
        let st = NameStats::compute(&p, &[(2, 10), (9, 7)]);
        assert_eq!(
            st.per_file().collect::<Vec<_>>(),
            [(2, 1, 2), (5, 3, 0), (7, 0, 1), (9, 2, 1)]
        );
        assert_eq!((st.refs, st.files), (6, 3));
        assert_eq!(st.top, [(5, 3), (9, 2), (2, 1)]);
        assert_eq!(st.exports, [(5, 8)]);
        assert_eq!(st.macro_defs, [(2, 12), (7, 4)]);
        let mut out = Vec::new();
        st.encode(&mut out);
        assert_eq!(NameStats::decode(&mut Reader::new(&out)), Some(st));
        assert_eq!(
            NameStats::decode(&mut Reader::new(&out[..out.len() - 1])),
            None
        );
    }

    #[test]
    fn top_files_keep_the_most_referencing_ties_by_file_id() {
        let blocks: Vec<(u32, Vec<(u32, Role)>)> = (0..100u32)
            .map(|f| (f, (1..=(f % 7 + 1)).map(|l| (l, Role::Ref)).collect()))
            .collect();
        let refs: Vec<(u32, &[(u32, Role)])> =
            blocks.iter().map(|(f, o)| (*f, o.as_slice())).collect();
        let st = NameStats::compute(&postings(&refs), &[]);
        assert_eq!(st.files, 100);
        assert_eq!(st.top.len(), TOP_FILES);
        // 7 references: files 6, 13, …, 97 (14 of them), then 6 references: 5, 12, …
        assert_eq!(st.top[0], (6, 7));
        assert_eq!(st.top[13], (97, 7));
        assert_eq!(st.top[14], (5, 6));
    }
}
