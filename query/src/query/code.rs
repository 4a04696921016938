//! search_code: definitions ranked for a natural-language query with BM25F. The query's words
//! become terms as the documents' did ([`knav_index::code::terms`]), each word with the
//! abbreviations that count as it (the seed table of [`super::vocab`], `interrupt` or `irq`, and
//! those the tree's own names and comments show, [`super::learned`]); each document scores, per
//! query word, its idf (of the documents with any of its terms) times the weighted,
//! length-normalized frequency of its terms over the four fields (name > comment > path > body)
//! saturated by BM25's `K1` (`knav_index::bm25`). The score is scaled by the share of the
//! query's words the document has, and raised by the share its name has ([`NAMED`]). The
//! kernel's own code comes before its tests, samples, tools and documentation (their score is
//! scaled down; `--scope` keeps one of them, [`Scope`]), and a document of a file a newer
//! segment replaced is not counted. The best [`RERANKED`] are then scaled up by three priors:
//! how widely their name is used (the number of files it occurs in: the kernel's own API,
//! `kfree`, `mutex_lock`, answers a question more often than a driver's helper); their size (the
//! function that does the work, `do_mmap`, `shrink_folio_list`, is long, and the one-line
//! wrappers and accessors around it match the same words); and the kernel's core over device
//! drivers and other architectures than x86 ([`is_core`]); and each name is kept once, its best
//! definition. Then each of them gains a share of the score of every one of the best [`VOTERS`]
//! functions that calls it ([`vote`]): the function the matching code calls is often the one
//! that does what was asked. Every rule was measured on the tuning half of kernel-bench's questions
//! (`search-questions.tsv`); its held-out half is only ever run. Each answer says why it ranked
//! ([`super::why`]).

use std::cmp::Reverse;

use knav_ctags::Kind;

use super::lookup::Found;
use super::Query;
use crate::envelope::{Envelope, Results, Score};
use knav_index::bm25;
use knav_index::code::extract::{Field, FIELDS};
use knav_index::code::terms::Terms;
use knav_index::rank::PathClass;

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "search_code";

/// Which files search_code answers from (SHARC's searchMode): `all` ranks the kernel's own
/// code first and the rest scaled down; the others keep one class of
/// [`knav_index::rank::PathClass`] (`docs` answers with search_docs' sections).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// Everything, the kernel's own code first.
    #[default]
    All,
    /// The kernel's own code: not tests, samples, tools or documentation.
    Code,
    /// `tools/testing`, selftests, `samples/` and KUnit tests.
    Tests,
    /// `Documentation/`: its sections, as search_docs ranks them.
    Docs,
}

impl std::str::FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Scope, String> {
        match s {
            "all" | "" => Ok(Scope::All),
            "code" => Ok(Scope::Code),
            "tests" => Ok(Scope::Tests),
            "docs" => Ok(Scope::Docs),
            f => Err(format!(
                "scope must be code, tests, docs or all, not {}",
                crate::envelope::quote(f)
            )),
        }
    }
}

impl Scope {
    /// True when a document of class `class` is in the scope.
    fn keeps(self, class: PathClass) -> bool {
        match self {
            Scope::All => true,
            Scope::Code => class == PathClass::Code,
            Scope::Tests => class == PathClass::Tests,
            Scope::Docs => class == PathClass::Docs,
        }
    }
}

/// Field weights: name, comment, path, body.
const WEIGHTS: [f32; FIELDS] = [6.0, 4.0, 1.0, 0.5];

/// How much a name carrying the query's words counts: the score is scaled by
/// `1 + NAMED * (the share of the query's words in the name)`. Every score is also scaled by
/// the share of the query's words the definition has in any field.
const NAMED: f32 = 1.0;

/// Length normalization of each field (0: none, 1: full).
const B: [f32; FIELDS] = [0.5, 0.75, 0.5, 0.75];

/// The score of a definition that is not the kernel's own code (tests, samples, tools,
/// documentation: [`PathClass`]) is scaled by this.
const COPY_FACTOR: f32 = 0.5;

/// The score of a type (struct, union, enum, typedef) is scaled by this: a question in words
/// asks more often what code does than what it holds.
const TYPE_FACTOR: f32 = 0.6;

/// Documents whose score the use of their name scales, best first; every other scores less
/// than they do before and after.
const RERANKED: usize = 1000;

/// How much the use of a name counts: the score is scaled by `1 + POPULARITY * ln(1 + files)`.
const POPULARITY: f32 = 0.3;

/// How much a definition's size counts: the score is scaled by
/// `1 + SIZE * ln(1 + body terms / SIZE_UNIT)`, flat for a short function.
const SIZE: f32 = 0.3;

/// Body terms of a definition whose size doubles [`SIZE`]'s share (`ln 2`).
const SIZE_UNIT: f32 = 200.0;

/// The score of a definition of the kernel's core ([`is_core`]) is scaled by this.
const CORE_FACTOR: f32 = 1.5;

/// The best functions whose calls vote ([`vote`]).
const VOTERS: usize = 80;

/// What a vote adds to a definition's score: this share of the voter's score.
const VOTE: f32 = 0.15;

/// The bit of a document's name count set while its name has the current query word.
const NAME_NOW: u8 = 1 << 7;

/// Query words at most: a longer query is refused rather than walking every postings list.
const MAX_TERMS: usize = 32;

/// A document that scored, in segment `seg`.
#[derive(Clone, Copy, Debug)]
struct Hit {
    seg: usize,
    doc: u32,
    score: f32,
    /// The query's words it has (bit i: word i).
    mask: u32,
    /// How many of the best matches call it ([`vote`]).
    voters: u16,
}

/// Answers search_code for `query`, keeping definitions of `kind` when given and files of
/// `scope`.
pub fn search_code(q: &Query<'_>, query: &str, kind: Option<Kind>, scope: Scope) -> Envelope {
    if scope == Scope::Docs {
        let mut env = super::search_docs(q, query);
        env.tool = TOOL;
        return env;
    }
    let mut words = Terms::default();
    let slots = super::vocab::slots(&mut words, query);
    if slots.is_empty() {
        return q.envelope_error(
            TOOL,
            format!(
                "query {} has no word to search for (only stopwords, numbers or single \
                 letters); describe what the code does: `oom kill process`",
                crate::envelope::quote(query)
            ),
        );
    }
    if slots.len() > MAX_TERMS {
        return q.envelope_error(
            TOOL,
            format!("query has {} words; give at most {MAX_TERMS}", slots.len()),
        );
    }
    let mut terms: Vec<Vec<String>> = slots
        .iter()
        .map(|s| {
            s.terms
                .iter()
                .map(|&id| words.term(id).to_string())
                .collect()
        })
        .collect();
    if let Some(seg) = q
        .snap
        .segments
        .iter()
        .max_by_key(|s| s.code().map_or(0, |c| c.len()))
    {
        for slot in &mut terms {
            for short in super::learned::short_forms(seg, &slot[0]) {
                if !slot.contains(&short) {
                    slot.push(short);
                }
            }
        }
    }
    let why_words = super::why::words(query, &terms);
    let mut hits = score(q, &terms, kind, scope);
    rerank(q, &mut hits, &terms);
    vote(q, &mut hits);
    let mut env = q.envelope(TOOL);
    super::page::order_pages(q, &mut hits, |h| (Reverse(h.score.to_bits()), h.seg, h.doc));
    let page = q.paginate(&mut env, hits);
    let mut records = Vec::with_capacity(page.len());
    let mut stems = Terms::default();
    for h in page {
        let seg = &q.snap.segments[h.seg];
        let Some(doc) = seg.code().and_then(|c| c.doc(h.doc)) else {
            seg.mark_damaged("codedocs.dat", "a document id is past its end");
            continue;
        };
        let def = seg.def_at(doc.def);
        let mut r = q.def_record(&Found { seg: h.seg, def });
        r.end_line = def.end_line;
        r.score = Some(Score((h.score * 100.0).round() as f64 / 100.0));
        let mut comment = String::new();
        if doc.head.comment_back > 0 {
            let line = def.line.saturating_sub(doc.head.comment_back as u32);
            let text = q.snippet_at(h.seg, def.file, line);
            r.comment = Some(comment_words(&text)).filter(|c| !c.is_empty());
            if let Some(t) = q.text_at(h.seg, def.file, line, def.line) {
                comment = t.lines(line, def.line.saturating_sub(1));
            }
        }
        let path = q.path(h.seg, def.file);
        let mut why = super::why::reasons(&mut stems, &why_words, h.mask, def.name, &comment, path);
        if h.voters > 0 {
            let s = if h.voters == 1 { "" } else { "es" };
            let sep = if why.is_empty() { "" } else { " · " };
            why = format!("{why}{sep}called by {} match{s}", h.voters);
        }
        r.why = Some(why).filter(|w| !w.is_empty());
        records.push(r);
    }
    if env.total == 0 {
        env.message = Some(format!(
            "no definition matches '{query}'{}; try other words, `knav find` (search_symbols) \
             for parts of a name, or `knav grep` (search_text) for text",
            kind.map_or(String::new(), |k| format!(" with kind {}", k.name()))
        ));
        env.next_tools = vec!["search_symbols", "search_text"];
    } else {
        env.next_tools = vec!["get_symbol_body", "find_callers"];
    }
    env.results = Some(Results::Records(records));
    env
}

/// Each query word's inverse document frequency over the segments' `n` documents (a word's
/// documents are at most those of all its terms).
fn idfs(codes: &[&knav_index::code::read::CodeIndex], slots: &[Vec<String>], n: f32) -> Vec<f32> {
    slots
        .iter()
        .map(|terms| {
            let df: u64 = terms
                .iter()
                .flat_map(|t| codes.iter().filter_map(|c| c.postings(t.as_str())))
                .map(|p| p.docs)
                .sum();
            bm25::idf(n, (df as f32).min(n))
        })
        .collect()
}

/// The per-document sums of one segment's scoring: zero for every document no word touched,
/// and put back to zero after a query, so a server's queries reuse them instead of clearing
/// (or faulting in) megabytes each.
struct Sums {
    /// Room for the sums of its length / [`SUM_BYTES`] documents ([`Sums::parts`]).
    buf: super::zeroed::Zeroed,
    /// The documents with a score, each once.
    scored: Vec<u32>,
    /// The documents a word touched (with repeats): those put back to zero.
    dirty: Vec<u32>,
}

/// The sums of a document, as [`Sums::parts`] gives them: its score so far, a word's weighted
/// frequency in it (over its fields), the query's words it has (bit i: word i), and how many
/// query words its name has.
type Parts<'a> = (&'a mut [f32], &'a mut [f32], &'a mut [u32], &'a mut [u8]);

/// Sums given back, for the next query.
static SUMS: std::sync::Mutex<Vec<Sums>> = std::sync::Mutex::new(Vec::new());

/// The bytes of one document's sums.
const SUM_BYTES: usize = 4 + 4 + 4 + 1;

impl Sums {
    /// Sums of `n` documents, all zero.
    fn take(n: usize) -> Sums {
        let kept = SUMS.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match kept {
            Some(s) if s.buf.len() >= n * SUM_BYTES => s,
            _ => Sums {
                buf: super::zeroed::Zeroed::new(n * SUM_BYTES),
                scored: Vec::new(),
                dirty: Vec::new(),
            },
        }
    }

    /// The four sums of every document `buf` has room for, each a slice of that many.
    fn parts(buf: &mut super::zeroed::Zeroed) -> Parts<'_> {
        let n = buf.len() / SUM_BYTES;
        let p = buf.as_mut_ptr();
        // SAFETY: four disjoint ranges of the buffer's `n * SUM_BYTES` zeroed (or since
        // written) bytes, each aligned for its type (the buffer is 4-byte aligned and the first
        // three ranges are 4n bytes long); zero is a valid f32, u32 and u8.
        unsafe {
            (
                std::slice::from_raw_parts_mut(p.cast::<f32>(), n),
                std::slice::from_raw_parts_mut(p.add(4 * n).cast::<f32>(), n),
                std::slice::from_raw_parts_mut(p.add(8 * n).cast::<u32>(), n),
                std::slice::from_raw_parts_mut(p.add(12 * n), n),
            )
        }
    }

    /// Puts every touched document back to zero and keeps the sums for the next query.
    fn give_back(mut self) {
        let (scores, freq, mask, named) = Sums::parts(&mut self.buf);
        for &d in &self.dirty {
            let d = d as usize;
            scores[d] = 0.0;
            freq[d] = 0.0;
            mask[d] = 0;
            named[d] = 0;
        }
        self.dirty.clear();
        self.scored.clear();
        SUMS.lock().unwrap_or_else(|e| e.into_inner()).push(self);
    }
}

/// Every live document with at least one of the query's words (of `kind`, under the path
/// prefix), scored. A query word is one of `slots`: the terms that count as it.
fn score(q: &Query<'_>, slots: &[Vec<String>], kind: Option<Kind>, scope: Scope) -> Vec<Hit> {
    let segs = &q.snap.segments;
    // A segment's files not opened: its damage replaces the answer.
    let Some(codes) = segs.iter().map(|s| s.code()).collect::<Option<Vec<_>>>() else {
        return Vec::new();
    };
    let n: f32 = codes.iter().map(|c| c.len() as f32).sum();
    let mut hits = Vec::new();
    let idf = idfs(&codes, slots, n);
    for (s, (seg, code)) in segs.iter().zip(&codes).enumerate() {
        let avg = code.averages();
        let norm = |f: usize, len: u16| bm25::norm(B[f], len as f32, avg[f].max(1.0));
        let mut sums = Sums::take(code.len() as usize);
        let Sums { buf, scored, dirty } = &mut sums;
        let (scores, freq, mask, named) = Sums::parts(buf);
        // The documents a word touched.
        let mut touched: Vec<u32> = Vec::new();
        for (i, (terms, idf)) in slots.iter().zip(&idf).enumerate() {
            for t in terms {
                let Some(mut postings) = code.postings(t.as_str()) else {
                    continue;
                };
                for (doc, tf) in postings.by_ref() {
                    let (Some(d), Some(slot)) = (code.doc(doc), freq.get_mut(doc as usize)) else {
                        seg.mark_damaged("codepost.dat", "a posting names no document");
                        return Vec::new();
                    };
                    if *slot == 0.0 {
                        touched.push(doc);
                    }
                    if tf[Field::Name as usize] > 0 {
                        named[doc as usize] |= NAME_NOW;
                    }
                    for f in [Field::Name, Field::Comment, Field::Body].map(|f| f as usize) {
                        if tf[f] > 0 {
                            *slot += WEIGHTS[f] * tf[f] as f32 / norm(f, d.head.lens[f]);
                        }
                    }
                }
                if postings.overrun {
                    seg.mark_damaged("codepost.dat", "a term's postings run past its end");
                    return Vec::new();
                }
                let path = Field::Path as usize;
                for (file, count) in postings.files() {
                    for doc in code.docs_of(file) {
                        let Some(d) = code.doc(doc) else { break };
                        if freq[doc as usize] == 0.0 {
                            touched.push(doc);
                        }
                        freq[doc as usize] +=
                            WEIGHTS[path] * count as f32 / norm(path, d.head.lens[path]);
                    }
                }
            }
            for &doc in &touched {
                let w = std::mem::take(&mut freq[doc as usize]);
                if w > 0.0 {
                    if mask[doc as usize] == 0 {
                        scored.push(doc);
                    }
                    scores[doc as usize] += bm25::score(*idf, w);
                    mask[doc as usize] |= 1 << i;
                }
                let c = &mut named[doc as usize];
                if *c & NAME_NOW != 0 {
                    *c = (*c & !NAME_NOW) + 1;
                }
            }
            dirty.append(&mut touched);
        }
        let check_file = !q.snap.all_live(s) || q.page.path_prefix.is_some();
        scored.sort_unstable();
        for &doc in scored.iter() {
            let score = scores[doc as usize];
            if score <= 0.0 {
                continue;
            }
            let Some(d) = code.doc(doc) else { continue };
            if kind.is_some_and(|k| d.head.kind != k as u8) {
                continue;
            }
            let class = PathClass::in_byte(d.head.rank);
            if !scope.keeps(class) {
                continue;
            }
            if check_file {
                let Some(file) = code.file_of(doc) else {
                    seg.mark_damaged("codedocs.dat", "a document has no file");
                    return Vec::new();
                };
                if !q.snap.is_live(s, file) || !q.wanted_file(s, file) {
                    continue;
                }
            }
            let mask = mask[doc as usize];
            let named = named[doc as usize];
            let score = score * shares(mask, named, slots.len()) * priors(class, d.head.kind);
            hits.push(Hit {
                seg: s,
                doc,
                score,
                mask,
                voters: 0,
            });
        }
        sums.give_back();
    }
    hits
}

/// What a definition's class and kind scale its score by: [`COPY_FACTOR`] when it is not the
/// kernel's own code, [`TYPE_FACTOR`] when it is no function.
fn priors(class: PathClass, kind: u8) -> f32 {
    let copy = if class == PathClass::Code {
        1.0
    } else {
        COPY_FACTOR
    };
    let kind = if kind == Kind::Function as u8 {
        1.0
    } else {
        TYPE_FACTOR
    };
    copy * kind
}

/// What the query's words a definition has scale its score by: the share of them it has
/// (`mask`, a bit a word), times one plus [`NAMED`] times the share its name has (`named`).
fn shares(mask: u32, named: u8, words: usize) -> f32 {
    let words = words as f32;
    mask.count_ones() as f32 / words * (1.0 + NAMED * named as f32 / words)
}

/// True for the kernel's core (a definition of it is scaled by [`CORE_FACTOR`] unless it is a
/// leaf, [`is_leaf`], that no query word names): not a device driver (`drivers/` but the driver core
/// `drivers/base/`, `sound/`) nor another architecture's code than x86's.
fn is_core(path: &str) -> bool {
    let driver = (path.starts_with("drivers/") && !path.starts_with("drivers/base/"))
        || path.starts_with("sound/");
    let other_arch = path.starts_with("arch/") && !path.starts_with("arch/x86/");
    !driver && !other_arch
}

/// For one filesystem's or one network protocol's code (`fs/ext4/`, `net/sctp/`, but not
/// `net/core/`, `net/ipv4/`, `net/ipv6/`), its directory's name.
fn is_leaf(path: &str) -> Option<&str> {
    let mut parts = path.split('/');
    let (top, sub, rest) = (parts.next(), parts.next()?, parts.next());
    rest?;
    match top {
        Some("fs") => Some(sub),
        Some("net") if !matches!(sub, "core" | "ipv4" | "ipv6") => Some(sub),
        _ => None,
    }
}

/// True when one of the query's words is the directory's name (`ext4`, `sctp`).
fn named_dir(dir: &str, slots: &[Vec<String>], stems: &mut Terms) -> bool {
    let ids = stems.of_ident(dir.as_bytes()).to_vec();
    ids.iter()
        .any(|&id| slots.iter().any(|s| s.iter().any(|t| t == stems.term(id))))
}

/// Scales the scores of the best [`RERANKED`] hits by how many files use their name, their
/// size and whether they are the kernel's core.
fn rerank(q: &Query<'_>, hits: &mut Vec<Hit>, slots: &[Vec<String>]) {
    let mut stems = Terms::default();
    let key = |h: &Hit| (Reverse(h.score.to_bits()), h.seg, h.doc);
    if hits.len() > RERANKED {
        hits.select_nth_unstable_by_key(RERANKED, key);
    }
    let n = hits.len().min(RERANKED);
    let mut names: Vec<(String, usize)> = Vec::with_capacity(n);

    for (i, h) in hits[..n].iter_mut().enumerate() {
        let seg = &q.snap.segments[h.seg];
        let Some(doc) = seg.code().and_then(|c| c.doc(h.doc)) else {
            continue;
        };
        let def = seg.def_at(doc.def);
        names.push((def.name.to_string(), i));
        let uses = seg
            .lookup(def.name.as_bytes())
            .map_or(0.0, |e| e.files as f32 / e.defs.len().max(1) as f32);
        h.score *= 1.0 + POPULARITY * (1.0 + uses).ln();
        let body = doc.head.lens[Field::Body as usize] as f32;
        h.score *= 1.0 + SIZE * (1.0 + body / SIZE_UNIT).ln();
        let path = q.path(h.seg, def.file);
        let leaf = is_leaf(path).is_some_and(|dir| !named_dir(dir, slots, &mut stems));
        if is_core(path) && !leaf {
            h.score *= CORE_FACTOR;
        }
    }
    // One result per name: the best of its definitions (`do_mmap`'s prototype and body, the
    // same helper in two drivers).
    names.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(key(&hits[a.1]).cmp(&key(&hits[b.1]))));
    let mut dropped = vec![false; n];
    for w in names.windows(2) {
        if w[0].0 == w[1].0 {
            dropped[w[1].1] = true;
        }
    }
    let mut i = 0;
    hits.retain(|_| {
        i += 1;
        !dropped.get(i - 1).copied().unwrap_or(false)
    });
}

/// Raises each of the best [`RERANKED`] hits by the functions among the best [`VOTERS`] that
/// call it (by [`VOTE`] of each caller's score): the function that does what was asked is often
/// the one the code matching the question's words calls (the serial drivers' receive functions
/// all call `tty_flip_buffer_push`; the protocols' timers, `mod_timer`).
fn vote(q: &Query<'_>, hits: &mut [Hit]) {
    let key = |h: &Hit| (Reverse(h.score.to_bits()), h.seg, h.doc);
    let n = hits.len().min(RERANKED);
    if hits.len() > n {
        hits.select_nth_unstable_by_key(n, key);
    }
    let best = &mut hits[..n];
    best.sort_unstable_by_key(key);
    let defs: Vec<Option<Found<'_>>> = best
        .iter()
        .map(|h| {
            let seg = &q.snap.segments[h.seg];
            let doc = seg.code()?.doc(h.doc)?;
            Some(Found {
                seg: h.seg,
                def: seg.def_at(doc.def),
            })
        })
        .collect();
    let mut by_name: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(n);
    for (i, f) in defs.iter().enumerate() {
        if let Some(f) = f {
            by_name.entry(f.def.name).or_insert(i);
        }
    }
    let mut add = vec![0f32; n];
    let mut voters = vec![0u16; n];
    for (v, f) in defs.iter().enumerate().take(VOTERS) {
        let Some(f) = f.as_ref().filter(|f| f.def.kind == Kind::Function) else {
            continue;
        };
        for callee in super::callees::direct_calls(q, f) {
            if let Some(&j) = by_name.get(callee.as_str()) {
                add[j] += VOTE * best[v].score;
                voters[j] = voters[j].saturating_add(1);
            }
        }
    }
    for ((h, a), n) in best.iter_mut().zip(add).zip(voters) {
        h.score += a;
        h.voters = n;
    }
}

/// The words of a comment's line: without its `/*`, `*`, `//` and `*/`.
pub fn comment_words(line: &str) -> String {
    let t = line.trim();
    let t = t.strip_suffix("*/").unwrap_or(t);
    t.trim_start_matches(['/', '*', '!']).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_and_other_architectures_are_not_the_core() {
        for (path, core) in [
            ("mm/vmscan.c", true),
            ("arch/x86/entry/common.c", true),
            ("drivers/base/dd.c", true),
            ("include/linux/fs.h", true),
            ("drivers/net/e1000/e1000_main.c", false),
            ("sound/core/pcm.c", false),
            ("arch/arm64/mm/fault.c", false),
        ] {
            assert_eq!(is_core(path), core, "{path}");
        }
    }

    #[test]
    fn one_filesystems_or_protocols_code_is_a_leaf() {
        for (path, leaf) in [
            ("fs/ext4/inode.c", Some("ext4")),
            ("fs/read_write.c", None),
            ("net/sctp/socket.c", Some("sctp")),
            ("net/core/dev.c", None),
            ("net/ipv4/tcp.c", None),
            ("net/socket.c", None),
            ("mm/vmscan.c", None),
        ] {
            assert_eq!(is_leaf(path), leaf, "{path}");
        }
        let mut stems = Terms::default();
        let slots = vec![vec!["ext4".to_string()], vec!["read".to_string()]];
        assert!(named_dir("ext4", &slots, &mut stems));
        assert!(!named_dir("btrfs", &slots, &mut stems));
    }

    #[test]
    fn a_comment_line_loses_its_markers() {
        assert_eq!(
            comment_words(" * kfree - free memory"),
            "kfree - free memory"
        );
        assert_eq!(comment_words("/** kfree - free */"), "kfree - free");
        assert_eq!(comment_words("// Pick a victim"), "Pick a victim");
    }
}
