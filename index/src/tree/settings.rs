//! Per-tree settings from `ROOT/.knav.toml`: how often the MCP server refreshes, which paths the
//! index ignores, and extra universal-ctags options. A missing file means the defaults; a file
//! with an unknown key or a bad value is an error that names the file, the key and the fix.
//!
//! ```toml
//! [serve]
//! debounce_s = 5            # refresh at most this often before answering (0: every call)
//! roots = ["../linux-next"] # more trees a server with --root here answers for
//! config_dirs = ["/boot"]   # directories an MCP active_config path may be in
//! tools = ["core", "search"] # the tool groups a server lists (default: all)
//!
//! [index]
//! ignore = ["drivers/gpu/drm/amd/include/asic_reg/", "*.mod.c"]
//!
//! [ctags]
//! options = ["-Imy_macro_attr+"]
//!
//! [cache]
//! dir = "/var/cache/knav" # the fact store (default: $KNAV_CACHE_DIR, else the user cache)
//! max_size = "4G"         # pruned to this after a build (K, M, G or bytes)
//! enabled = true          # false: every file is analyzed, nothing is kept
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The settings file's name, at the top of the tree.
pub const FILE_NAME: &str = ".knav.toml";

/// Default `serve.debounce_s`.
pub const DEFAULT_DEBOUNCE_S: f64 = 5.0;

/// Longest debounce accepted (an hour); longer is surely a mistake.
const MAX_DEBOUNCE_S: f64 = 3600.0;

/// Settings of one tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// How long an index stays fresh enough for the MCP server to answer without a refresh.
    pub debounce: Duration,
    /// Paths the walk leaves out.
    pub ignore: Ignore,
    /// Options added to every ctags run.
    pub ctags_options: Vec<String>,
    /// More trees a server serving this one answers for, as written (relative to the root).
    pub roots: Vec<String>,
    /// Directories besides the root an MCP `active_config` path may lie in, as written.
    pub config_dirs: Vec<String>,
    /// The MCP tool groups to serve (`None`: all), checked by the server.
    pub tools: Option<Vec<String>>,
    /// The fact store the tree's builds use.
    pub cache: Cache,
}

/// Default `cache.max_size`: 4 GiB.
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 4 << 30;

/// Where a tree's builds keep files' facts ([`crate::factstore`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Cache {
    /// The store's directory; `None`: no store (disabled, or no cache directory known).
    pub dir: Option<PathBuf>,
    /// The size the store is pruned to after a build.
    pub max_bytes: u64,
}

impl Default for Cache {
    fn default() -> Self {
        Cache::resolve(None, None, None).unwrap_or(Cache {
            dir: None,
            max_bytes: DEFAULT_CACHE_MAX_BYTES,
        })
    }
}

impl Cache {
    /// The store: `KNAV_CACHE_DIR` (`off`: none), else `dir`, else the user cache directory;
    /// none when `enabled` is false.
    fn resolve(
        dir: Option<&str>,
        max_size: Option<&str>,
        enabled: Option<bool>,
    ) -> Result<Cache, String> {
        let max_bytes = match max_size {
            Some(s) => parse_size(s).map_err(|e| format!("cache.max_size: {e}"))?,
            None => DEFAULT_CACHE_MAX_BYTES,
        };
        let env = std::env::var("KNAV_CACHE_DIR")
            .ok()
            .filter(|v| !v.is_empty());
        let dir = match (env.as_deref(), dir) {
            (Some("off"), _) => None,
            _ if enabled == Some(false) => None,
            (Some(_), _) | (None, None) => crate::factstore::FactStore::default_dir(),
            (None, Some(d)) if Path::new(d).is_absolute() => Some(PathBuf::from(d)),
            (None, Some(d)) => {
                return Err(format!(
                    "cache.dir = \"{d}\" is not an absolute path; give the store's directory \
                     from the root of the file system"
                ))
            }
        };
        Ok(Cache { dir, max_bytes })
    }
}

/// A size: bytes, or a number with `K`, `M`, `G` or `T` (powers of 1024; `KB`, `MiB` too).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let unit = unit.trim().to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => {
            return Err(format!(
                "'{s}' is not a size; write bytes or a number with K, M, G or T"
            ))
        }
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size; write bytes or a number with K, M, G or T"))?;
    let bytes = n * (1u64 << shift) as f64;
    if !(0.0..1.8e19).contains(&bytes) {
        return Err(format!("'{s}' is out of range"));
    }
    Ok(bytes as u64)
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            debounce: Duration::from_secs_f64(DEFAULT_DEBOUNCE_S),
            ignore: Ignore::default(),
            ctags_options: Vec::new(),
            roots: Vec::new(),
            config_dirs: Vec::new(),
            tools: None,
            cache: Cache::default(),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    serve: ServeSection,
    #[serde(default)]
    index: IndexSection,
    #[serde(default)]
    ctags: CtagsSection,
    #[serde(default)]
    cache: CacheSection,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CacheSection {
    dir: Option<String>,
    max_size: Option<toml::Value>,
    enabled: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ServeSection {
    debounce_s: Option<f64>,
    #[serde(default)]
    roots: Vec<String>,
    #[serde(default)]
    config_dirs: Vec<String>,
    tools: Option<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct IndexSection {
    #[serde(default)]
    ignore: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CtagsSection {
    #[serde(default)]
    options: Vec<String>,
}

/// What `[ctags] options` may hold: options that change how ctags reads C text, nothing else.
/// An option that names a file or a program (`--options`, `-L`, `-f`, `--optlib-dir`, `-I@file`),
/// that changes ctags's output (`--fields`, `--output-format`, `--extras`), or that removes
/// kinds (`--kinds-C=-f-p`, which hides definitions) is refused: the list is what is allowed.
pub const ALLOWED_CTAGS_OPTIONS: &str = "-I<identifiers> (letters, digits, _ , + =), \
     -D<macro>=<definition>, --kinds-C=+<kinds> and --kinds-C++=+<kinds> (kinds added only)";

/// Whether `opt`, one `[ctags] options` entry, is one [`ALLOWED_CTAGS_OPTIONS`] names.
fn allowed_ctags_option(opt: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if let Some(list) = opt.strip_prefix("-I") {
        // Not `@file` (a list read from a file), not `-` (the list cleared first).
        let list = list.strip_prefix('+').unwrap_or(list);
        return !list.is_empty()
            && list
                .chars()
                .all(|c| ident(c) || matches!(c, '+' | ',' | '='));
    }
    if let Some(def) = opt.strip_prefix("-D") {
        let Some((name, body)) = def.split_once('=') else {
            return false;
        };
        let name_ok = name.split_once('(').map_or_else(
            || !name.is_empty() && name.chars().all(ident),
            |(n, args)| {
                !n.is_empty()
                    && n.chars().all(ident)
                    && args.strip_suffix(')').is_some_and(|a| {
                        a.chars().all(|c| ident(c) || matches!(c, ',' | '.' | ' '))
                    })
            },
        );
        return name_ok && body.chars().all(|c| c == ' ' || c.is_ascii_graphic());
    }
    let kinds = opt
        .strip_prefix("--kinds-C=")
        .or_else(|| opt.strip_prefix("--kinds-C++="));
    kinds.is_some_and(|k| {
        let mut rest = k;
        while let Some(after) = rest.strip_prefix('+') {
            rest = match after.strip_prefix('{') {
                Some(named) => match named.split_once('}') {
                    Some((n, r)) if !n.is_empty() && n.chars().all(ident) => r,
                    _ => return false,
                },
                None => match after.chars().next() {
                    Some(c) if c.is_ascii_alphabetic() => &after[1..],
                    _ => return false,
                },
            };
        }
        !k.is_empty() && rest.is_empty()
    })
}

/// The largest `.knav.toml` read, in bytes.
const MAX_SETTINGS_BYTES: u64 = 1 << 20;

impl Settings {
    /// The settings of the tree at `root`: its `.knav.toml`, or the defaults. A revision's
    /// files (`revs/t-<tree>/tree`, made from a commit for `--rev`, `compare_versions`, `knav
    /// diff A..B`) are a commit's, and a commit's `.knav.toml` is not its owner's word: they
    /// get the settings of the work tree whose index keeps them ([`owner_of_revision`]), or the
    /// defaults when it is not known, never the revision's own.
    pub fn load(root: &Path) -> Result<Settings, String> {
        if crate::indexdir::is_revision_tree(root) {
            return match owner_of_revision(root) {
                Some(owner) if !crate::indexdir::is_revision_tree(&owner) => {
                    Settings::load_own(&owner)
                }
                _ => Ok(Settings::default()),
            };
        }
        Settings::load_own(root)
    }

    /// The settings of `root` from its own `.knav.toml`.
    fn load_own(root: &Path) -> Result<Settings, String> {
        use crate::tree::beneath::Unread;
        let path = root.join(FILE_NAME);
        let read = crate::tree::beneath::Root::open(root)
            .map_err(Unread::Io)
            .and_then(|r| r.read_capped(FILE_NAME, MAX_SETTINGS_BYTES));
        let text = match read {
            Ok(t) => {
                String::from_utf8(t).map_err(|e| format!("{}: not UTF-8: {e}", path.display()))?
            }
            Err(Unread::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Settings::default())
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        Settings::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Settings from the text of a `.knav.toml`.
    pub fn parse(text: &str) -> Result<Settings, String> {
        let file: File = toml::from_str(text).map_err(|e| {
            let msg = e.message().to_string();
            match e.span() {
                Some(span) => {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}: {msg}")
                }
                None => msg,
            }
        })?;
        let debounce_s = file.serve.debounce_s.unwrap_or(DEFAULT_DEBOUNCE_S);
        if !(0.0..=MAX_DEBOUNCE_S).contains(&debounce_s) {
            return Err(format!(
                "serve.debounce_s = {debounce_s} is out of range; use 0 to {MAX_DEBOUNCE_S} seconds"
            ));
        }
        for opt in &file.ctags.options {
            if !opt.starts_with('-') {
                return Err(format!(
                    "ctags.options: '{opt}' is not an option; options start with '-' \
                     (files come from the walk, not from ctags arguments)"
                ));
            }
            if !allowed_ctags_option(opt) {
                return Err(format!(
                    "ctags.options: '{opt}' is not allowed: only options that change how ctags \
                     reads C text are, and none that names a file or a program, changes ctags's \
                     output or removes kinds; allowed are {ALLOWED_CTAGS_OPTIONS}; remove it"
                ));
            }
        }
        Ok(Settings {
            debounce: Duration::from_secs_f64(debounce_s),
            ignore: Ignore::new(&file.index.ignore)?,
            ctags_options: file.ctags.options,
            roots: file.serve.roots,
            config_dirs: file.serve.config_dirs,
            tools: file.serve.tools,
            cache: Cache::resolve(
                file.cache.dir.as_deref(),
                file.cache
                    .max_size
                    .map(|v| match v {
                        toml::Value::String(s) => s,
                        other => other.to_string(),
                    })
                    .as_deref(),
                file.cache.enabled,
            )?,
        })
    }

    /// `serve.roots`, resolved against `root`; an entry that is not a directory is an error.
    pub fn resolved_roots(&self, root: &Path) -> Result<Vec<PathBuf>, String> {
        resolve_dirs(root, &self.roots, "serve.roots")
    }

    /// `serve.config_dirs`, resolved against `root`; an entry that is not a directory is an
    /// error.
    pub fn resolved_config_dirs(&self, root: &Path) -> Result<Vec<PathBuf>, String> {
        resolve_dirs(root, &self.config_dirs, "serve.config_dirs")
    }
}

/// The work tree whose index keeps the revision files at `rev_root` (`INDEX/revs/t-<tree>/tree`):
/// the root INDEX's manifest names, else the directory holding INDEX when it is `.knav`.
pub fn owner_of_revision(rev_root: &Path) -> Option<PathBuf> {
    let tree = rev_root
        .ancestors()
        .find(|d| crate::indexdir::named_like_revision_tree(d))?;
    let index_dir = tree.parent()?.parent()?.parent()?;
    let current = std::fs::read(index_dir.join("CURRENT")).ok();
    let named = current
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|m| m.get("root")?.as_str().map(PathBuf::from))
        .filter(|r| r.is_absolute() && r.is_dir());
    named.or_else(|| {
        (index_dir.file_name()? == ".knav").then(|| index_dir.parent().map(Path::to_path_buf))?
    })
}

/// `dirs` (relative to `root` or absolute) through their real paths.
fn resolve_dirs(root: &Path, dirs: &[String], key: &str) -> Result<Vec<PathBuf>, String> {
    dirs.iter()
        .map(|d| {
            crate::tree::beneath::resolve_root(&root.join(d))
                .map_err(|e| format!("{}: {key}: {e}", root.join(FILE_NAME).display()))
        })
        .collect()
}

/// Ignore patterns, matched against root-relative paths with `/` separators by `globset`.
///
/// A pattern without a `/` matches a file or directory name at any depth (`*.mod.c`,
/// `selftests`); one with a `/` is anchored at the root (`drivers/gpu/*/include`, a leading `/`
/// is allowed). `*` and `?` stay within one path component, `**` (a whole component) crosses
/// them and also matches no component at all, `[ab]` and `{x,y}` are classes and alternatives,
/// and a trailing `/` matches directories only. An ignored directory is not entered.
#[derive(Clone, Debug, Default)]
pub struct Ignore {
    /// The patterns as written.
    sources: Vec<String>,
    /// By what they match (the name or the path) and whether directories only; see
    /// [`Ignore::sets`].
    sets: [globset::GlobSet; 4],
}

/// Index into [`Ignore::sets`]: anchored patterns match the path, others the name.
fn set_index(anchored: bool, dir_only: bool) -> usize {
    anchored as usize * 2 + dir_only as usize
}

impl PartialEq for Ignore {
    fn eq(&self, other: &Ignore) -> bool {
        self.sources == other.sources
    }
}

impl Eq for Ignore {}

impl Ignore {
    /// Compiles `patterns`; an empty or absurd pattern is an error.
    pub fn new(patterns: &[String]) -> Result<Ignore, String> {
        let mut builders: [globset::GlobSetBuilder; 4] =
            std::array::from_fn(|_| globset::GlobSetBuilder::new());
        for p in patterns {
            let mut glob = p.trim();
            if glob.is_empty() || glob == "/" {
                return Err(format!(
                    "index.ignore: empty pattern '{p}'; remove it or name a path"
                ));
            }
            if glob.contains("..") || glob.contains('\\') {
                return Err(format!(
                    "index.ignore: '{p}' has '..' or '\\'; patterns are root-relative paths with /"
                ));
            }
            let dir_only = glob.ends_with('/');
            glob = glob.trim_end_matches('/');
            let anchored = glob.contains('/');
            glob = glob.trim_start_matches('/');
            // globset would take `a**b` as `a*b`; the documented `**` crosses components.
            if glob.split('/').any(|c| c.contains("**") && c != "**") {
                return Err(format!(
                    "index.ignore: '{p}': '**' must be a whole path component (a/**/b), or use '*'"
                ));
            }
            let compiled = globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .backslash_escape(false)
                .build()
                .map_err(|e| format!("index.ignore: '{p}': {}", e.kind()))?;
            builders[set_index(anchored, dir_only)].add(compiled);
        }
        let mut sets: [globset::GlobSet; 4] = Default::default();
        for (set, b) in sets.iter_mut().zip(builders) {
            *set = b.build().map_err(|e| format!("index.ignore: {e}"))?;
        }
        Ok(Ignore {
            sources: patterns.to_vec(),
            sets,
        })
    }

    /// True when there are no patterns.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The patterns as written, for hashing into the index options.
    pub fn sources(&self) -> impl Iterator<Item = &str> {
        self.sources.iter().map(String::as_str)
    }

    /// True when the entry at root-relative `path` (a directory when `is_dir`) is ignored.
    pub fn is_ignored(&self, path: &str, is_dir: bool) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        let hit = |anchored: bool, dir_only: bool| {
            let set = &self.sets[set_index(anchored, dir_only)];
            !set.is_empty() && set.is_match(if anchored { path } else { name })
        };
        hit(false, false) || hit(true, false) || (is_dir && (hit(false, true) || hit(true, true)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignore(p: &[&str]) -> Ignore {
        Ignore::new(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn name_patterns_match_at_any_depth() {
        let i = ignore(&["*.mod.c", "selftests"]);
        assert!(i.is_ignored("drivers/net/foo.mod.c", false));
        assert!(i.is_ignored("foo.mod.c", false));
        assert!(!i.is_ignored("drivers/net/foo.c", false));
        assert!(i.is_ignored("tools/testing/selftests", true));
        assert!(!i.is_ignored("tools/testing/selftests2", true));
    }

    #[test]
    fn anchored_patterns_match_from_the_root_and_stars_stay_in_a_component() {
        let i = ignore(&["drivers/*/include/", "/arch/arm64"]);
        assert!(i.is_ignored("drivers/gpu/include", true));
        assert!(!i.is_ignored("drivers/gpu/include", false)); // directories only
        assert!(!i.is_ignored("drivers/gpu/drm/include", true));
        assert!(i.is_ignored("arch/arm64", true));
        assert!(!i.is_ignored("x/arch/arm64", true));
    }

    #[test]
    fn double_star_crosses_components_and_matches_nothing() {
        let i = ignore(&["drivers/**/asic_reg", "**/*.gen.h"]);
        assert!(i.is_ignored("drivers/gpu/drm/amd/include/asic_reg", true));
        assert!(i.is_ignored("drivers/asic_reg", true));
        assert!(i.is_ignored("a/b/c.gen.h", false));
        assert!(i.is_ignored("c.gen.h", false));
        assert!(!i.is_ignored("a/b/c.h", false));
    }

    #[test]
    fn question_mark_is_one_character_but_not_a_slash() {
        let i = ignore(&["x/a?c"]);
        assert!(i.is_ignored("x/abc", false));
        assert!(!i.is_ignored("x/a/c", false));
        assert!(!i.is_ignored("x/ac", false));
    }

    #[test]
    fn double_star_slash_matches_whole_components_not_part_of_one() {
        // The hand-written matcher let `**/` end inside a component: `b/a` of `ab/a` matched.
        let i = ignore(&["**/?/**", "**/b"]);
        assert!(!i.is_ignored("ab/a", false));
        assert!(!i.is_ignored("ab", false));
        assert!(i.is_ignored("a/b", false) && i.is_ignored("b", true));
    }

    #[test]
    fn a_double_star_inside_a_component_is_a_clear_error() {
        let e = Ignore::new(&["a**b/c".to_string()]).unwrap_err();
        assert!(e.starts_with("index.ignore: 'a**b/c':"), "{e}");
    }

    /// One path component against one glob component: `*` any run, `?` one character.
    fn reference_component(g: &[u8], t: &[u8]) -> bool {
        match g.split_first() {
            None => t.is_empty(),
            Some((b'*', rest)) => (0..=t.len()).any(|k| reference_component(rest, &t[k..])),
            Some((b'?', rest)) => !t.is_empty() && reference_component(rest, &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && reference_component(rest, &t[1..]),
        }
    }

    /// Components against glob components: `**` is any number of components (at least one
    /// when it ends the glob, as `dir/**` is what is under dir).
    fn reference_components(g: &[&str], p: &[&str]) -> bool {
        match g.split_first() {
            None => p.is_empty(),
            Some((&"**", [])) => !p.is_empty(),
            Some((&"**", rest)) => (0..=p.len()).any(|k| reference_components(rest, &p[k..])),
            Some((c, rest)) => {
                !p.is_empty()
                    && reference_component(c.as_bytes(), p[0].as_bytes())
                    && reference_components(rest, &p[1..])
            }
        }
    }

    /// An independent reading of the documented rules for one glob.
    fn reference_match(glob: &[u8], text: &[u8]) -> bool {
        let (g, t) = (
            std::str::from_utf8(glob).unwrap(),
            std::str::from_utf8(text).unwrap(),
        );
        let g: Vec<&str> = g.split('/').collect();
        let t: Vec<&str> = t.split('/').collect();
        reference_components(&g, &t)
    }

    /// The documented rules, with [`reference_match`] for one glob.
    fn reference_ignored(pattern: &str, path: &str, is_dir: bool) -> bool {
        let dir_only = pattern.ends_with('/');
        let glob = pattern.trim_end_matches('/');
        let anchored = glob.contains('/');
        let glob = glob.trim_start_matches('/');
        let name = path.rsplit('/').next().unwrap_or(path);
        let subject = if anchored { path } else { name };
        (!dir_only || is_dir) && reference_match(glob.as_bytes(), subject.as_bytes())
    }

    use proptest::prelude::*;

    /// A path component of a glob: `**` alone, or letters, `*` and `?` with no two stars
    /// side by side (globset takes `**` only as a whole component).
    fn glob_component() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => Just("**".to_string()),
            6 => proptest::collection::vec(prop_oneof![Just("a"), Just("b"), Just("*"), Just("?")], 1..4)
                .prop_map(|t| t.concat())
                .prop_filter("no ** inside a component", |c| !c.contains("**")),
        ]
    }

    fn pattern() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            proptest::collection::vec(glob_component(), 1..4),
            any::<bool>(),
        )
            .prop_map(|(lead, parts, trail)| {
                format!(
                    "{}{}{}",
                    if lead { "/" } else { "" },
                    parts.join("/"),
                    if trail { "/" } else { "" }
                )
            })
    }

    fn path() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![Just("a"), Just("b"), Just("ab"), Just("ba"), Just("aab")],
            1..5,
        )
        .prop_map(|p| p.join("/"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(1000)))]

        #[test]
        fn ignore_globs_follow_the_documented_rules(
            ps in proptest::collection::vec(pattern(), 1..4),
            path in path(),
            is_dir in any::<bool>(),
        ) {
            let i = Ignore::new(&ps).unwrap();
            let want = ps.iter().any(|p| reference_ignored(p, &path, is_dir));
            prop_assert_eq!(i.is_ignored(&path, is_dir), want, "patterns {:?} path {}", ps, path);
        }
    }

    #[test]
    fn settings_parse_every_key_and_default_the_rest() {
        let s = Settings::parse(
            "[serve]\ndebounce_s = 0.5\nroots = [\"../b\"]\nconfig_dirs = [\"/boot\"]\n\
             [index]\nignore = [\"*.mod.c\"]\n\
             [ctags]\noptions = [\"-Ifoo+\"]\n",
        )
        .unwrap();
        assert_eq!(s.debounce, Duration::from_millis(500));
        assert!(s.ignore.is_ignored("x/y.mod.c", false));
        assert_eq!(s.ctags_options, vec!["-Ifoo+".to_string()]);
        assert_eq!(
            (s.roots, s.config_dirs),
            (vec!["../b".into()], vec!["/boot".into()])
        );
        assert_eq!(Settings::parse("").unwrap(), Settings::default());
    }

    #[test]
    fn ctags_options_that_name_a_file_or_remove_kinds_are_refused_naming_what_is_allowed() {
        for ok in [
            "-Ifoo+",
            "-I+__my_attr,__other",
            "-Ifoo=bar",
            "-D__rcu=",
            "-DDECLARE(x)=int x",
            "--kinds-C=+l",
            "--kinds-C++=+{local}+p",
        ] {
            let s = Settings::parse(&format!("[ctags]\noptions = [\"{ok}\"]\n"));
            assert_eq!(s.map(|s| s.ctags_options), Ok(vec![ok.to_string()]), "{ok}");
        }
        for bad in [
            "--options=/etc/ssl/private/key.pem",
            "--options-maybe=/x",
            "--optlib-dir=/x",
            "-I@/etc/passwd",
            "-I-",
            "-I",
            "-L/etc/passwd",
            "-f/tmp/tags",
            "-o-",
            "--_xformat=%N",
            "--fields=+n",
            "--extras=+q",
            "--kinds-C=-f-p",
            "--kinds-C=fp",
            "--kinds-C=+",
            "--kinds-all=+x",
            "--param-CPreProcessor._expand=1",
            "--langmap=C:+.txt",
            "--regex-C=/x/y/",
            "-Dx",
            "-Ia b",
        ] {
            let e = Settings::parse(&format!("[ctags]\noptions = [\"{bad}\"]\n")).unwrap_err();
            assert_eq!(
                e,
                format!(
                    "ctags.options: '{bad}' is not allowed: only options that change how ctags \
                     reads C text are, and none that names a file or a program, changes ctags's \
                     output or removes kinds; allowed are {ALLOWED_CTAGS_OPTIONS}; remove it"
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_revision_tree_takes_its_owners_settings_not_its_commits() {
        let base = std::env::temp_dir().join(format!("knav-settings-rev-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let rev = base.join(".knav/revs/t-0123/tree");
        std::fs::create_dir_all(&rev).unwrap();
        std::fs::write(base.join(".knav/revs/t-0123/rev.json"), "{}").unwrap();
        std::fs::write(base.join(FILE_NAME), "[index]\nignore = [\"owner/\"]\n").unwrap();
        std::fs::write(
            rev.join(FILE_NAME),
            "[index]\nignore = [\"fs/\"]\n[cache]\ndir = \"/tmp/commit-store\"\n",
        )
        .unwrap();
        assert_eq!(owner_of_revision(&rev), Some(base.clone()));
        let s = Settings::load(&rev).unwrap();
        assert!(s.ignore.is_ignored("owner", true) && !s.ignore.is_ignored("fs", true));
        assert_ne!(s.cache.dir, Some(PathBuf::from("/tmp/commit-store")));
        // Nothing known of the owner: the defaults, never the commit's.
        std::fs::remove_file(base.join(FILE_NAME)).unwrap();
        assert_eq!(Settings::load(&rev).unwrap(), Settings::default());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn settings_errors_name_the_line_and_the_fix() {
        let e = Settings::parse("[serve]\ndebounce = 5\n").unwrap_err();
        assert!(e.starts_with("line 2:") && e.contains("debounce"), "{e}");
        let e = Settings::parse("[serve]\ndebounce_s = -1\n").unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        let e = Settings::parse("[ctags]\noptions = [\"--output-format=xref\"]\n").unwrap_err();
        assert!(e.contains("remove it"), "{e}");
        let e = Settings::parse("[ctags]\noptions = [\"-f\", \"tags\"]\n").unwrap_err();
        assert!(e.contains("'-f'"), "{e}");
        let e = Settings::parse("[index]\nignore = [\"../x\"]\n").unwrap_err();
        assert!(e.contains("'..'"), "{e}");
        let e = Settings::parse("[serve]\ndebounce_s = \"5\"\n").unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
    }
}
