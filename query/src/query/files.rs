//! search_files: the indexed files whose path matches every token of a query. A token matches
//! a path when it starts one of its components or one of their `_`, `-` or `.`-separated pieces,
//! ignoring case (`ext2 file` finds `fs/ext2/file.c`; a one-letter token must be a whole
//! piece); a token holding a separator (`read_wr`, `ext2/fi`) must also start at a boundary.
//! Candidates come from each segment's part index of paths. Order: a file whose name (or name
//! without its extension) is the query first, then one so named by one of the tokens, then the
//! kernel before `tools/` and `samples/`, shallower paths first, then path order.

use super::Query;
use crate::envelope::{Envelope, Results};
use knav_index::PartsOf;
use knav_index::{at_boundary, intersect, path_separator};

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "search_files";

/// Answers search_files for `query`.
pub fn search_files(q: &Query<'_>, query: &str) -> Envelope {
    let query = query.trim();
    let tokens: Vec<String> = query
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .filter(|t| t.bytes().any(|b| !path_separator(b)))
        .collect();
    if tokens.is_empty() {
        return q.envelope_error(
            TOOL,
            format!(
                "query {} has no token to match; give parts of a path (ext2 file)",
                crate::envelope::quote(query)
            ),
        );
    }
    let whole = tokens.join(" ");
    let spanning: Vec<&String> = tokens
        .iter()
        .filter(|t| t.bytes().any(path_separator))
        .collect();
    let mut hits: Vec<(u8, u8, usize, &str, usize, u32)> = Vec::new();
    for (s, seg) in q.snap.segments.iter().enumerate() {
        let mut ids: Option<Vec<u64>> = None;
        'tokens: for t in &tokens {
            for sub in t
                .split(|c: char| path_separator(c as u8))
                .filter(|p| !p.is_empty())
            {
                let Some(found) = seg
                    .search()
                    .and_then(|s| s.ids(PartsOf::Files, sub.as_bytes(), t.len() == 1))
                else {
                    seg.mark_damaged("fileparts.dat", "a part's files do not decode");
                    return q.envelope_error(TOOL, "damaged index".into());
                };
                ids = Some(match ids {
                    None => found,
                    Some(prev) => intersect(&prev, &found),
                });
                if ids.as_ref().is_some_and(Vec::is_empty) {
                    break 'tokens;
                }
            }
        }
        for id in ids.unwrap_or_default() {
            let Ok(file) = u32::try_from(id) else {
                continue;
            };
            if file >= seg.file_count() || !q.snap.is_live(s, file) {
                continue;
            }
            let path = seg.file_path(file);
            if !q.page.wanted(path) {
                continue;
            }
            if !spanning.is_empty() {
                let lower = path.to_ascii_lowercase();
                if !spanning
                    .iter()
                    .all(|t| at_boundary(lower.as_bytes(), t.as_bytes(), path_separator))
                {
                    continue;
                }
            }
            let base = path.rsplit('/').next().unwrap_or(path);
            let stem = base.split('.').next().unwrap_or(base);
            let named = |t: &str| t.eq_ignore_ascii_case(base) || t.eq_ignore_ascii_case(stem);
            // The file named by the query, then one named by a token (`ext4 inode`: inode.c).
            let tier = if named(&whole) {
                0u8
            } else if tokens.iter().any(|t| named(t)) {
                1
            } else {
                2
            };
            let (copies, _, _) = knav_index::rank::rank(knav_ctags::Kind::Other, path);
            let depth = path.matches('/').count();
            hits.push((tier, copies, depth, path, s, file));
        }
    }
    super::page::order_pages(q, &mut hits, |h| *h);
    let mut env = q.envelope(TOOL);
    let page = q.paginate(&mut env, hits);
    let files = page
        .into_iter()
        .map(|(_, _, _, path, s, file)| super::record::file_hit(q.snap, path, s, file))
        .collect();
    if env.total == 0 {
        env.message = Some(format!(
            "no indexed file's path matches '{query}' (only .c, .h and .S files are indexed); \
             try fewer or shorter tokens"
        ));
        env.next_tools = vec!["search_symbols"];
    } else {
        env.next_tools = vec!["list_file_symbols"];
    }
    env.results = Some(Results::Files(files));
    env
}
