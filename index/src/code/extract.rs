//! A file's search documents, made in the build's per-file pass from the bytes it read and the
//! definitions ctags found: one document per function, struct, union, enum and typedef, with
//! four fields of terms ([`Field`]): its name's words, the words of the comment right above it
//! (the kernel-doc with its `@param` lines, or a `/* */` or `//` block), its path's words, and
//! the words of its lines (identifiers, strings and comments alike).

use std::ops::Range;

use knav_ctags::Kind;

use super::terms::{FileTerms, Terms};
use crate::codec::{put_str, put_varint};
use crate::format::DefRecord;

/// A document's fields, in the order their term frequencies are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The definition's name.
    Name = 0,
    /// The comment above it.
    Comment = 1,
    /// Its file's path.
    Path = 2,
    /// Its lines.
    Body = 3,
}

/// The number of fields.
pub const FIELDS: usize = 4;

/// Declaration lines allowed between a comment and the line of the name (`static int` above
/// `foo(void)`, an attribute line).
const MAX_DECL_LINES: u32 = 2;

/// Bytes of a file's lines read for its documents' bodies at most, as a multiple of its size:
/// definitions sharing lines (50,000 functions on one line) would read them again each.
const MAX_BODY_READS: usize = 4;

/// Bytes of a line past which the definitions that start on it have no body words: ctags gives
/// a definition's lines, and a generated file's one line holds a million functions (the kernel
/// has no line of even 8 KiB). Their names, comments and paths are still searched.
const LONG_LINE: usize = 1 << 16;

/// Bytes searched back for the `/*` of a comment whose `*/` ends right above a definition.
const MAX_COMMENT_BYTES: usize = 16 << 10;

/// True for the definitions that are documents: functions, structs, unions, enums and
/// typedefs; of the names a kernel macro makes, only those that own lines below the macro's
/// (`sys_read` of `SYSCALL_DEFINE3(read, …) {…}`, not its one-line aliases `__x64_sys_read`, …).
pub fn is_document(d: &DefRecord) -> bool {
    matches!(
        d.kind,
        Kind::Function | Kind::Struct | Kind::Union | Kind::Enum | Kind::Typedef
    ) && (d.via.is_none() || d.end_line.is_some_and(|e| e > d.line))
}

/// What the segment keeps of a document besides its terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DocHead {
    /// Its definition's kind.
    pub kind: u8,
    /// Its definition's [`crate::rank::PathRank::byte`], with its file's
    /// [`crate::rank::PathClass`] in bits 5 and 6.
    pub rank: u8,
    /// Lines from the first line of words of its comment down to its line; 0 without one (or
    /// when it is more than 255 lines above).
    pub comment_back: u8,
    /// Terms in each field: the body's at most `u16::MAX`, the others' at most 255.
    pub lens: [u16; FIELDS],
}

/// Bytes of an encoded [`DocHead`].
pub const HEAD_LEN: usize = 8;

impl DocHead {
    /// Appends the head's bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let short = |f: Field| self.lens[f as usize].min(255) as u8;
        out.extend_from_slice(&[self.kind, self.rank, self.comment_back]);
        out.extend_from_slice(&[
            short(Field::Name),
            short(Field::Comment),
            short(Field::Path),
        ]);
        out.extend_from_slice(&self.lens[Field::Body as usize].to_le_bytes());
    }

    /// The head encoded at the start of `b`.
    pub fn decode(b: &[u8]) -> Option<DocHead> {
        let b = b.get(..HEAD_LEN)?;
        Some(DocHead {
            kind: b[0],
            rank: b[1],
            comment_back: b[2],
            lens: [
                b[3] as u16,
                b[4] as u16,
                b[5] as u16,
                u16::from_le_bytes([b[6], b[7]]),
            ],
        })
    }
}

/// A file's documents, for the segment's document writer ([`super::write`]). Their terms are
/// kept once a file and named by their index there; the path field is the file's, also kept
/// once.
#[derive(Debug, Default)]
pub struct FileDocs {
    /// Per document, the index of its definition among the file's.
    pub defs: Vec<u32>,
    /// The terms of the file's documents and path: their number, then each as its length and
    /// its bytes.
    pub terms: Vec<u8>,
    /// The path's terms: their number, then each as its index in `terms` and its count.
    pub path: Vec<u8>,
    /// Per document: its [`DocHead`], its number of terms, then each term as its index in
    /// `terms` and its frequencies as [`super::put_tf`] writes them, numbers as varints.
    pub bytes: Vec<u8>,
}

/// What making documents keeps from one file to the next (a build worker has one): the words
/// already turned into terms, and the memory of a file's tables.
#[derive(Default)]
pub struct DocState {
    terms: Terms,
    file: FileTerms,
    counts: Counts,
    starts: Vec<usize>,
}

/// The documents of the file at `path` with bytes `src` and definitions `defs`.
pub fn file_docs(src: &[u8], path: &str, defs: &[DefRecord], state: &mut DocState) -> FileDocs {
    let mut out = FileDocs::default();
    if !defs.iter().any(is_document) {
        return out;
    }
    let DocState {
        terms,
        file,
        counts,
        starts,
    } = state;
    terms.forget();
    file.clear();
    counts.trim();
    line_starts(src, starts);
    let path_rank = crate::rank::PathRank::of(path);
    let class = crate::rank::PathClass::of(path);
    file.each_ident(path.as_bytes(), |i| counts.add(i, Field::Path));
    file.resolve(terms);
    let path_len = counts.sum_terms(file)[Field::Path as usize].min(255) as u16;
    put_varint(&mut out.path, counts.touched.len() as u64);
    for (id, c) in counts.drain() {
        put_varint(&mut out.path, id as u64);
        out.path.push(c[Field::Path as usize].min(255) as u8);
    }
    let mut body_budget = MAX_BODY_READS * src.len() + (1 << 16);
    for (i, d) in defs.iter().enumerate() {
        if !is_document(d) {
            continue;
        }
        let mut head = DocHead {
            kind: d.kind as u8,
            rank: class.with(path_rank.byte(d.kind)),
            ..Default::default()
        };
        counts.add(file.ident(d.name.as_bytes()), Field::Name);
        if let Some((comment, first)) = leading_comment(src, starts, d.line) {
            file.each_ident(&src[comment], |i| counts.add(i, Field::Comment));
            head.comment_back = u8::try_from(d.line - first).unwrap_or(0);
        }
        let last = d.end_line.unwrap_or(d.line).max(d.line);
        let body = lines(starts, src.len(), d.line, last);
        let first = lines(starts, src.len(), d.line, d.line);
        if first.len() <= LONG_LINE && body.len() <= body_budget {
            body_budget -= body.len();
            file.each_ident(&src[body], |i| counts.add(i, Field::Body));
        }
        file.resolve(terms);
        let lens = counts.sum_terms(file);
        head.lens = lens.map(|n| n.min(u16::MAX as u64) as u16);
        head.lens[Field::Path as usize] = path_len;
        out.defs.push(i as u32);
        head.encode(&mut out.bytes);
        put_varint(&mut out.bytes, counts.touched.len() as u64);
        for (id, c) in counts.drain() {
            put_varint(&mut out.bytes, id as u64);
            super::put_tf(&mut out.bytes, c.map(|n| n.min(255) as u8));
        }
    }
    put_varint(&mut out.terms, file.len() as u64);
    file.each_term(terms, |t| put_str(&mut out.terms, t.as_bytes()));
    out
}

/// A document's counts while it is made: per identifier of its file, its occurrences in each
/// field; then per term of the file, the sum over its identifiers.
#[derive(Default)]
struct Counts {
    idents: Vec<[u32; FIELDS]>,
    /// The identifiers with counts.
    seen: Vec<u32>,
    terms: Vec<[u32; FIELDS]>,
    /// The terms with counts.
    touched: Vec<u32>,
}

impl Counts {
    /// Gives back the room of a huge file's counts (they are all zero between documents).
    fn trim(&mut self) {
        for v in [&mut self.idents, &mut self.terms] {
            if v.len() > knav_c::keep::KEEP {
                knav_c::keep::clear_kept(v);
            }
        }
        knav_c::keep::clear_kept(&mut self.seen);
        knav_c::keep::clear_kept(&mut self.touched);
    }

    /// Counts an occurrence of the file's identifier of index `ident` in field `f`.
    fn add(&mut self, ident: u32, f: Field) {
        let i = ident as usize;
        if i >= self.idents.len() {
            self.idents.resize(i + 1, [0; FIELDS]);
        }
        if self.idents[i] == [0; FIELDS] {
            self.seen.push(ident);
        }
        self.idents[i][f as usize] += 1;
    }

    /// Adds the identifiers' counts to their terms' and empties them; the number of terms in
    /// each field.
    fn sum_terms(&mut self, file: &FileTerms) -> [u64; FIELDS] {
        let mut lens = [0u64; FIELDS];
        if self.terms.len() < file.len() {
            self.terms.resize(file.len(), [0; FIELDS]);
        }
        for ident in self.seen.drain(..) {
            let c = std::mem::take(&mut self.idents[ident as usize]);
            let parts = file.parts(ident);
            for &t in parts {
                let sum = &mut self.terms[t as usize];
                if *sum == [0; FIELDS] {
                    self.touched.push(t);
                }
                for f in 0..FIELDS {
                    sum[f] += c[f];
                }
            }
            for f in 0..FIELDS {
                lens[f] += c[f] as u64 * parts.len() as u64;
            }
        }
        lens
    }

    /// The terms with counts and their counts, emptied.
    fn drain(&mut self) -> impl Iterator<Item = (u32, [u32; FIELDS])> + '_ {
        let terms = &mut self.terms;
        self.touched
            .drain(..)
            .map(|t| (t, std::mem::take(&mut terms[t as usize])))
    }
}

/// Sets `starts` to the byte offset where each line of `src` starts.
fn line_starts(src: &[u8], starts: &mut Vec<usize>) {
    knav_c::keep::clear_kept(starts);
    starts.push(0);
    starts.extend(memchr::memchr_iter(b'\n', src).map(|i| i + 1));
}

/// The bytes of lines `from..=to` (1-based), clamped to the file.
fn lines(starts: &[usize], len: usize, from: u32, to: u32) -> Range<usize> {
    let at = |line: u32| starts.get(line as usize - 1).copied().unwrap_or(len);
    at(from.max(1))..at(to.saturating_add(1).max(1)).max(at(from.max(1)))
}

/// The comment right above the definition on `line`: a `/* … */` block, or a run of `//`
/// lines, with at most [`MAX_DECL_LINES`] declaration lines and one blank line between; its
/// bytes and the line of its first words.
fn leading_comment(src: &[u8], starts: &[usize], line: u32) -> Option<(Range<usize>, u32)> {
    let text = |k: u32| src[lines(starts, src.len(), k, k)].trim_ascii();
    let (mut k, mut decl, mut blank) = (line.checked_sub(1)?, 0, 0);
    let end_line = loop {
        if k == 0 {
            return None;
        }
        let t = text(k);
        if t.is_empty() {
            blank += 1;
        } else if t.ends_with(b"*/") || t.starts_with(b"//") {
            break k;
        } else if decl < MAX_DECL_LINES
            && !t.starts_with(b"#")
            && !matches!(t.last(), Some(b';' | b'}' | b'{' | b','))
        {
            decl += 1;
        } else {
            return None;
        }
        if blank > 1 {
            return None;
        }
        k -= 1;
    };
    let body = lines(starts, src.len(), end_line, end_line);
    let range = if text(end_line).starts_with(b"//") {
        let mut first = end_line;
        while first > 1 && text(first - 1).starts_with(b"//") {
            first -= 1;
        }
        lines(starts, src.len(), first, end_line).start..body.end
    } else {
        let end = body.start + memchr::memmem::rfind(&src[body.clone()], b"*/")? + 2;
        let floor = end.saturating_sub(MAX_COMMENT_BYTES);
        let open = floor + memchr::memmem::rfind(&src[floor..end - 2], b"/*")?;
        // A comment after code on its line (`x = 1; /* … */`) is that code's.
        let line_start = starts[starts.partition_point(|&s| s <= open) - 1];
        if !src[line_start..open].trim_ascii().is_empty() {
            return None;
        }
        open..end
    };
    let first_line = starts.partition_point(|&s| s <= range.start) as u32;
    let words = (first_line..=end_line).find(|&k| {
        let t = &src[lines(starts, src.len(), k, k)];
        t.iter().any(u8::is_ascii_alphanumeric)
    })?;
    Some((range, words))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(src: &str, line: u32) -> Option<(String, u32)> {
        let mut starts = Vec::new();
        line_starts(src.as_bytes(), &mut starts);
        leading_comment(src.as_bytes(), &starts, line).map(|(r, first)| (src[r].to_string(), first))
    }

    #[test]
    fn a_kernel_doc_above_a_function_and_its_return_type_is_its_comment() {
        let src = "int x;\n\n/**\n * kfree - free memory\n * @p: pointer\n */\nvoid\nkfree(void *p)\n{\n}\n";
        assert_eq!(
            comment(src, 8),
            Some((
                "/**\n * kfree - free memory\n * @p: pointer\n */".to_string(),
                4
            ))
        );
    }

    #[test]
    fn slash_slash_lines_are_a_comment_and_code_ends_the_search() {
        let src = "// one\n// two\nint f(void)\n{\n}\nint g(void)\n";
        assert_eq!(comment(src, 3), Some(("// one\n// two\n".to_string(), 1)));
        assert_eq!(comment(src, 6), None, "g follows f's closing brace");
        let trailing = "int y; /* y's */\nint h(void)\n";
        assert_eq!(
            comment(trailing, 2),
            None,
            "a comment after code is the code's"
        );
    }

    fn function(name: String, line: u32, end_line: u32) -> DefRecord {
        DefRecord {
            file: 0,
            name,
            line,
            end_line: Some(end_line),
            kind: Kind::Function,
            file_local: false,
            typeref: None,
            scope: None,
            signature: None,
            via: None,
        }
    }

    /// A file of C-like text made of `pieces`, and definitions on its lines.
    fn file_strategy() -> impl proptest::strategy::Strategy<Value = (String, Vec<DefRecord>)> {
        use proptest::prelude::*;
        let piece = prop::sample::select(vec![
            "page",
            "free_page",
            "FreePage",
            "HTTPServer",
            "ext4_file_read_iter",
            "a_name_longer_than_sixteen_bytes",
            "a_name_longer_than_sixteen_bytez",
            "x",
            "42",
            "0x1f",
            "the",
            "/*",
            "*/",
            "//",
            "\n",
            "\n",
            " ",
            "(",
            "{",
            "}",
            ";",
            "@param",
        ]);
        let def = (0u32..40, 0u32..12, 0usize..3).prop_map(|(line, more, kind)| DefRecord {
            kind: [Kind::Function, Kind::Struct, Kind::Variable][kind],
            ..function(format!("name{}", line % 5), line.max(1), line.max(1) + more)
        });
        (
            prop::collection::vec(piece, 0..300).prop_map(|p| p.concat()),
            prop::collection::vec(def, 0..8).prop_map(|mut d| {
                d.sort_by_key(|d| d.line);
                d
            }),
        )
    }

    proptest::proptest! {
        #[test]
        fn a_reused_state_makes_the_same_documents_as_a_new_one(
            files in proptest::collection::vec(file_strategy(), 1..8)
        ) {
            let mut state = DocState::default();
            for (i, (src, defs)) in files.iter().enumerate() {
                let path = ["mm/page.c", "fs/ext4/file.c"][i % 2];
                let reused = file_docs(src.as_bytes(), path, defs, &mut state);
                let new = file_docs(src.as_bytes(), path, defs, &mut DocState::default());
                proptest::prop_assert_eq!(
                    (&reused.defs, &reused.terms, &reused.path, &reused.bytes),
                    (&new.defs, &new.terms, &new.path, &new.bytes)
                );
            }
        }
    }

    #[test]
    fn a_huge_files_tables_are_not_kept_for_the_next_file() {
        // 200,000 lines and 100,000 distinct identifiers in one function's body.
        let mut huge = String::from("int f(void)\n{\n");
        for i in 0..100_000 {
            huge.push_str(&format!("\tv{i}++;\n\n"));
        }
        huge.push_str("}\n");
        let lines = huge.lines().count() as u32;
        let mut state = DocState::default();
        let docs = file_docs(
            huge.as_bytes(),
            "huge.c",
            &[function("f".into(), 1, lines)],
            &mut state,
        );
        assert_eq!(docs.defs, [0]);
        assert!(state.starts.capacity() > knav_c::keep::KEEP);
        let small = "int g(void)\n{\n\treturn 0;\n}\n";
        file_docs(
            small.as_bytes(),
            "small.c",
            &[function("g".into(), 1, 4)],
            &mut state,
        );
        assert!(state.starts.capacity() <= knav_c::keep::KEEP);
        assert!(
            state.file.capacity() <= knav_c::keep::KEEP,
            "{}",
            state.file.capacity()
        );
        let counts = &state.counts;
        for v in [&counts.idents, &counts.terms] {
            assert!(v.capacity() <= knav_c::keep::KEEP, "{}", v.capacity());
        }
        for v in [&counts.seen, &counts.touched] {
            assert!(v.capacity() <= knav_c::keep::KEEP, "{}", v.capacity());
        }
    }

    #[test]
    fn definitions_sharing_one_long_line_read_it_a_bounded_number_of_times() {
        let line: String = (0..2000)
            .map(|i| format!("int f{i}(void){{ return g(); }} "))
            .collect();
        let defs: Vec<DefRecord> = (0..2000).map(|i| function(format!("f{i}"), 1, 1)).collect();
        let docs = file_docs(line.as_bytes(), "one.c", &defs, &mut DocState::default());
        assert_eq!(docs.defs.len(), 2000);
        let mut r = crate::codec::Reader::new(&docs.bytes);
        let mut with_body = 0;
        for _ in 0..2000 {
            let head = DocHead::decode(r.bytes(HEAD_LEN)).unwrap();
            with_body += (head.lens[Field::Body as usize] > 0) as usize;
            for _ in 0..r.varint() {
                r.varint();
                super::super::read_tf(&mut r);
            }
        }
        assert!(r.at_end() && !r.overrun);
        // The line is 60,890 bytes: 4 times it and 64 KiB cover 5 reads.
        assert_eq!((line.len(), with_body), (60_890, 5));
    }

    #[test]
    fn a_document_counts_its_terms_per_field() {
        let src =
            "/* Free the page. */\nvoid free_page(int page)\n{\n\tput(page, \"freeing\");\n}\n";
        let def = function("free_page".into(), 2, 5);
        let docs = file_docs(
            src.as_bytes(),
            "mm/page.c",
            &[def],
            &mut DocState::default(),
        );
        assert_eq!(docs.defs, [0]);
        let head = DocHead::decode(&docs.bytes).unwrap();
        assert_eq!(head.comment_back, 1);
        // name: free page; comment: free page; path: mm page; body: free page page put page free
        assert_eq!(head.lens, [2, 2, 2, 6]);
        let mut r = crate::codec::Reader::new(&docs.terms);
        let names: Vec<String> = (0..r.varint())
            .map(|_| String::from_utf8(r.str().to_vec()).unwrap())
            .collect();
        assert!(r.at_end());
        let mut path = Vec::new();
        let mut r = crate::codec::Reader::new(&docs.path);
        for _ in 0..r.varint() {
            path.push((names[r.varint() as usize].as_str(), r.u8()));
        }
        assert!(r.at_end());
        assert_eq!(path, [("mm", 1), ("page", 1)]);
        let mut r = crate::codec::Reader::new(&docs.bytes[HEAD_LEN..]);
        assert_eq!(r.varint(), 3, "free, page, put");
        let mut got = Vec::new();
        while !r.at_end() {
            let term = names[r.varint() as usize].clone();
            got.push((term, super::super::read_tf(&mut r).to_vec()));
        }
        let tf = |t: &str| got.iter().find(|(g, _)| g == t).map(|(_, c)| c.clone());
        assert_eq!(tf("free"), Some(vec![1, 1, 0, 2]));
        assert_eq!(tf("page"), Some(vec![1, 1, 0, 3]));
        assert_eq!(tf("put"), Some(vec![0, 0, 0, 1]));
    }
}
