//! Paging and the path filter every tool shares: the [`Page`] asked for, the envelope that
//! carries its state, a list cut to that page, and whether a path is under the prefix asked.

use super::Query;
use crate::envelope::{Coverage, Envelope};

/// Default page size.
pub const DEFAULT_LIMIT: u64 = 100;
/// Largest page size; larger requests are clamped.
pub const MAX_LIMIT: u64 = 1000;
/// The page of every result, for a front end that prints a whole answer (`knav cscope`, whose
/// callers read every line at once): never a user's `--limit` (the CLI keeps below it) nor an
/// MCP call's `limit` (which refuses one past a billion).
pub const EVERY: u64 = u64::MAX;

/// Paging and filtering shared by every tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// Page size; 0 means the default.
    pub limit: u64,
    /// Results to skip.
    pub offset: u64,
    /// Only results whose path starts with this.
    pub path_prefix: Option<String>,
    /// The `.config` deciding which guarded code is built (`--active-config`).
    pub active: Option<std::sync::Arc<knav_kconfig::Config>>,
    /// Bytes of source text (bodies) one answer shows at most; 0: the query's own maximum
    /// (the CLI's). Over MCP it keeps a body an agent asked for under its token budget.
    pub body_bytes: usize,
    /// References and calls say where they are (path, line, columns; a reference its kind and
    /// role, a call its caller) and leave out their source line and guard (and a reference its
    /// enclosing function): what a language server's client shows of them, without reading or
    /// decoding the rest.
    pub places_only: bool,
}

impl Page {
    /// The page size in effect, and the size asked when it was clamped to [`MAX_LIMIT`].
    pub(super) fn effective_limit(&self) -> (u64, Option<u64>) {
        match self.limit {
            0 => (DEFAULT_LIMIT, None),
            EVERY => (EVERY, None),
            l if l > MAX_LIMIT => (MAX_LIMIT, Some(l)),
            l => (l, None),
        }
    }

    /// True when `path` passes the path prefix filter.
    pub fn wanted(&self, path: &str) -> bool {
        match &self.path_prefix {
            Some(p) => path.starts_with(&*knav_index::tree::pathname::normalize(
                p.trim_start_matches("./"),
            )),
            None => true,
        }
    }
}

impl Query<'_> {
    /// The page size in effect.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// A fresh envelope for `tool` carrying paging state and coverage.
    pub fn envelope(&self, tool: &'static str) -> Envelope {
        let mut e = Envelope::new(tool, &self.snap.root.display().to_string());
        e.offset = self.page.offset;
        e.limit = self.limit;
        e.index = Some(Coverage {
            files_scanned: self.snap.manifest.files_scanned,
            files_unindexed: self.snap.manifest.files_unindexed,
        });
        if let Some(asked) = self.clamped {
            e.warn(format!("limit {asked} clamped to the maximum {MAX_LIMIT}"));
        }
        e
    }

    /// An error envelope for `tool` with paging state.
    pub fn envelope_error(&self, tool: &'static str, error: String) -> Envelope {
        let mut e = self.envelope(tool);
        e.error = Some(error);
        e
    }

    /// Cuts `items` to this page, setting `total` and `truncated`.
    pub fn paginate<T>(&self, env: &mut Envelope, items: Vec<T>) -> Vec<T> {
        self.paginate_by(env, items, self.limit)
    }

    /// [`Query::paginate`] with pages of `size` (a tool whose rows are costly pages by fewer);
    /// an offset past the end leaves the page empty and says so in `message`.
    pub fn paginate_by<T>(&self, env: &mut Envelope, items: Vec<T>, size: u64) -> Vec<T> {
        let total = items.len() as u64;
        env.total = total;
        env.limit = size;
        let start = self.page.offset.min(total);
        let end = start.saturating_add(size).min(total);
        env.truncated = end < total;
        if self.page.offset >= total && self.page.offset > 0 && total > 0 {
            env.message.get_or_insert_with(|| {
                format!(
                    "offset {} is past the end: there are {total} results (offsets 0..{})",
                    self.page.offset,
                    total - 1
                )
            });
        }
        items
            .into_iter()
            .skip(start as usize)
            .take((end - start) as usize)
            .collect()
    }

    /// True when file `file` of segment `seg` passes the path prefix filter (its path is not
    /// even looked up without one: refs of a hot name ask for every posting).
    pub fn wanted_file(&self, seg: usize, file: u32) -> bool {
        self.page.path_prefix.is_none() || self.page.wanted(self.path(seg, file))
    }

    /// True when an indexed file's path starts with the path prefix asked, or none is asked
    /// (`no/such/` matches nothing: an answer says so rather than "0 definitions").
    pub fn prefix_matches(&self) -> bool {
        let Some(p) = &self.page.path_prefix else {
            return true;
        };
        let p = knav_index::tree::pathname::normalize(p.trim_start_matches("./"));
        self.snap.segments.iter().any(|seg| {
            // Paths are sorted: the first at or after the prefix starts with it, or none does.
            let (mut lo, mut hi) = (0, seg.file_count());
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if seg.file_path(mid) < &*p {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo < seg.file_count() && seg.file_path(lo).starts_with(&*p)
        })
    }
}

/// Orders `items` by `key` as far as the pages up to the one `q` asks for: a search may match
/// tens of thousands, and only the first pages are read.
pub fn order_pages<T, K: Ord>(q: &Query<'_>, items: &mut [T], key: impl Fn(&T) -> K) {
    let wanted = q
        .page
        .offset
        .saturating_add(q.limit())
        .min(items.len() as u64) as usize;
    if wanted < items.len() {
        items.select_nth_unstable_by_key(wanted, &key);
    }
    items[..wanted].sort_unstable_by_key(key);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_size_of_zero_is_the_default_and_a_huge_one_is_clamped() {
        let page = |limit| Page {
            limit,
            ..Page::default()
        };
        assert_eq!(page(0).effective_limit(), (DEFAULT_LIMIT, None));
        assert_eq!(page(7).effective_limit(), (7, None));
        assert_eq!(page(MAX_LIMIT).effective_limit(), (MAX_LIMIT, None));
        assert_eq!(page(EVERY).effective_limit(), (EVERY, None));
        assert_eq!(
            page(EVERY - 1).effective_limit(),
            (MAX_LIMIT, Some(EVERY - 1))
        );
        assert_eq!(
            page(MAX_LIMIT + 1).effective_limit(),
            (MAX_LIMIT, Some(MAX_LIMIT + 1))
        );
    }

    #[test]
    fn the_path_filter_reads_a_prefix_as_written_and_passes_all_without_one() {
        let under = |p: &str| Page {
            path_prefix: Some(p.to_string()),
            ..Page::default()
        };
        assert!(Page::default().wanted("fs/read_write.c"));
        assert!(under("fs/").wanted("fs/read_write.c"));
        assert!(under("./fs/").wanted("fs/read_write.c"));
        assert!(!under("fs/").wanted("mm/fs.c"));
        assert!(!under("mm/").wanted(""));
    }
}
