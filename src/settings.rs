//! Per-tree settings from `ROOT/.knav.toml`: how often the MCP server refreshes, which paths the
//! index ignores, and extra universal-ctags options. A missing file means the defaults; a file
//! with an unknown key or a bad value is an error that names the file, the key and the fix.
//!
//! ```toml
//! [serve]
//! debounce_s = 5            # refresh at most this often before answering (0: every call)
//! roots = ["../linux-next"] # more trees a server with --root here answers for
//! config_dirs = ["/boot"]   # directories an MCP active_config path may be in
//!
//! [index]
//! ignore = ["drivers/gpu/drm/amd/include/asic_reg/", "*.mod.c"]
//!
//! [ctags]
//! options = ["-Imy_macro_attr+"]
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
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            debounce: Duration::from_secs_f64(DEFAULT_DEBOUNCE_S),
            ignore: Ignore::default(),
            ctags_options: Vec::new(),
            roots: Vec::new(),
            config_dirs: Vec::new(),
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
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ServeSection {
    debounce_s: Option<f64>,
    #[serde(default)]
    roots: Vec<String>,
    #[serde(default)]
    config_dirs: Vec<String>,
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

/// ctags options knav sets itself: changing them would break reading ctags's output.
const RESERVED_CTAGS_OPTIONS: &[&str] = &[
    "--output-format",
    "--fields",
    "--sort",
    "--language-force",
    "--recurse",
    "--_interactive",
    "--filter",
    "-f",
    "-o",
    "-x",
    "-e",
    "-L",
    "-R",
];

impl Settings {
    /// The settings of the tree at `root`: its `.knav.toml`, or the defaults.
    pub fn load(root: &Path) -> Result<Settings, String> {
        let path = root.join(FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
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
            let name = opt.split('=').next().unwrap_or(opt);
            let reserved = RESERVED_CTAGS_OPTIONS.iter().any(|r| {
                name == *r || (r.len() == 2 && name.starts_with(r) && !name.starts_with("--"))
            });
            if reserved {
                return Err(format!(
                    "ctags.options: '{opt}' changes ctags's output, which knav reads itself; \
                     remove it"
                ));
            }
        }
        Ok(Settings {
            debounce: Duration::from_secs_f64(debounce_s),
            ignore: Ignore::new(&file.index.ignore)?,
            ctags_options: file.ctags.options,
            roots: file.serve.roots,
            config_dirs: file.serve.config_dirs,
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

/// `dirs` (relative to `root` or absolute) through their real paths.
fn resolve_dirs(root: &Path, dirs: &[String], key: &str) -> Result<Vec<PathBuf>, String> {
    dirs.iter()
        .map(|d| {
            crate::walk::resolve_root(&root.join(d))
                .map_err(|e| format!("{}: {key}: {e}", root.join(FILE_NAME).display()))
        })
        .collect()
}

/// Ignore patterns, matched against root-relative paths with `/` separators.
///
/// A pattern without a `/` matches a file or directory name at any depth (`*.mod.c`,
/// `selftests`); one with a `/` is anchored at the root (`drivers/gpu/*/include`, a leading `/`
/// is allowed). `*` and `?` stay within one path component, `**` crosses them, and a trailing
/// `/` matches directories only. An ignored directory is not entered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ignore {
    patterns: Vec<Pattern>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Pattern {
    source: String,
    glob: Vec<u8>,
    anchored: bool,
    dir_only: bool,
}

impl Ignore {
    /// Compiles `patterns`; an empty or absurd pattern is an error.
    pub fn new(patterns: &[String]) -> Result<Ignore, String> {
        let mut out = Vec::with_capacity(patterns.len());
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
            out.push(Pattern {
                source: p.clone(),
                glob: glob.as_bytes().to_vec(),
                anchored,
                dir_only,
            });
        }
        Ok(Ignore { patterns: out })
    }

    /// True when there are no patterns.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The patterns as written, for hashing into the index options.
    pub fn sources(&self) -> impl Iterator<Item = &str> {
        self.patterns.iter().map(|p| p.source.as_str())
    }

    /// True when the entry at root-relative `path` (a directory when `is_dir`) is ignored.
    pub fn is_ignored(&self, path: &str, is_dir: bool) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        self.patterns.iter().any(|p| {
            if p.dir_only && !is_dir {
                return false;
            }
            let subject = if p.anchored { path } else { name };
            glob_match(&p.glob, subject.as_bytes())
        })
    }
}

/// Matches `text` against `glob` (`*`, `?`, `**`), iteratively: on a mismatch it retries from
/// the last `*` (which never swallows a `/`) and, failing that, from the last `**`.
fn glob_match(glob: &[u8], text: &[u8]) -> bool {
    let (mut g, mut t) = (0, 0);
    // Backtrack points: (glob index after the star, text index it is retried from).
    let mut single: Option<(usize, usize)> = None;
    let mut double: Option<(usize, usize)> = None;
    while t < text.len() {
        if g < glob.len() && glob[g] == b'*' {
            if glob.get(g + 1) == Some(&b'*') {
                g += 2;
                // `**/` also matches nothing at all.
                if glob.get(g) == Some(&b'/') {
                    g += 1;
                }
                double = Some((g, t));
                single = None;
            } else {
                g += 1;
                single = Some((g, t));
            }
            continue;
        }
        if g < glob.len() && (glob[g] == text[t] || (glob[g] == b'?' && text[t] != b'/')) {
            g += 1;
            t += 1;
            continue;
        }
        if let Some((sg, st)) = single.filter(|&(_, st)| text[st] != b'/') {
            (g, t) = (sg, st + 1);
            single = Some((sg, st + 1));
        } else if let Some((dg, dt)) = double {
            (g, t) = (dg, dt + 1);
            double = Some((dg, dt + 1));
            single = None;
        } else {
            return false;
        }
    }
    while g < glob.len() && glob[g] == b'*' {
        g += 1;
    }
    g == glob.len()
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
        assert!(glob_match(b"a?c", b"abc"));
        assert!(!glob_match(b"a?c", b"a/c"));
        assert!(!glob_match(b"a?c", b"ac"));
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
