//! What the language server holds between messages: the workspace's trees (one index per
//! folder, built and refreshed as `knav serve` does it, by [`crate::serve::state`]), the open
//! documents, the client's options and encoding; and the two steps every request shares: the
//! name under the cursor with the snapshot that answers for its tree, and an answer's
//! `path:line:col` as a location in the client's terms.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_server::ErrorCode;
use lsp_types::{Location, Position, Range, TextDocumentPositionParams, Uri};
use serde_json::Value;

use crate::envelope::Envelope;
use crate::index::store::Snapshot;
use crate::query::{Page, MAX_LIMIT};
use crate::request::Ask;
use crate::serve::state::{NotReady, Server, Tree};

use super::buffers::{range_on, Buffers, Mapped};
use super::position::{byte_of, word_at, Encoding, Lines};
use super::transport::Out;

/// Results one request gathers at most over its pages.
pub const MAX_RESULTS: u64 = 20_000;

/// The failure of a request at a cursor on no identifier.
pub const NO_NAME: &str = "no name under the cursor";

/// Bytes of a file read to place an answer's columns.
const MAX_SOURCE: u64 = 64 << 20;

/// A request's failure, as LSP answers it.
#[derive(Debug)]
pub struct Failure {
    /// JSON-RPC error code.
    pub code: i32,
    /// What went wrong and what to do.
    pub message: String,
}

impl Failure {
    /// Bad parameters.
    pub fn params(e: impl std::fmt::Display) -> Failure {
        Failure {
            code: ErrorCode::InvalidParams as i32,
            message: format!("invalid parameters: {e}"),
        }
    }

    /// A request that cannot be answered now or here.
    pub fn failed(message: impl Into<String>) -> Failure {
        Failure {
            code: ErrorCode::RequestFailed as i32,
            message: message.into(),
        }
    }
}

/// The client's settings (`initializationOptions`, `workspace/didChangeConfiguration`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// The `.config` deciding what is built (a path, relative to the folder's root or absolute).
    pub active_config: Option<String>,
    /// Only answers whose path starts with this.
    pub path_prefix: Option<String>,
    /// The request groups served ([`super::GROUPS`]); `None`: all.
    pub groups: Option<Vec<String>>,
}

impl Options {
    /// The options in `v` (`{"activeConfig": …, "pathPrefix": …, "groups": […]}`, or the same
    /// under `"knav"`), over `self`.
    pub fn merged(&self, v: &Value) -> Result<Options, String> {
        let v = v.get("knav").unwrap_or(v);
        let mut o = self.clone();
        if v.is_null() {
            return Ok(o);
        }
        let Some(obj) = v.as_object() else {
            return Err(format!("knav's settings are an object, not {v}"));
        };
        let text = |k: &str| -> Result<Option<Option<String>>, String> {
            match obj.get(k) {
                None => Ok(None),
                Some(Value::Null) => Ok(Some(None)),
                Some(Value::String(s)) if s.is_empty() => Ok(Some(None)),
                Some(Value::String(s)) => Ok(Some(Some(s.clone()))),
                Some(other) => Err(format!("{k} is a string, not {other}")),
            }
        };
        if let Some(a) = text("activeConfig")? {
            o.active_config = a;
        }
        if let Some(p) = text("pathPrefix")? {
            o.path_prefix = p;
        }
        if let Some(g) = obj.get("groups") {
            o.groups = match g {
                Value::Null => None,
                Value::Array(items) => Some(
                    items
                        .iter()
                        .map(|i| i.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .ok_or("groups is a list of names")?,
                ),
                _ => return Err("groups is a list of names".into()),
            };
        }
        Ok(o)
    }
}

/// The client's capabilities the server acts on.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientCaps {
    /// `window.workDoneProgress`: the server may create progress tokens.
    pub progress: bool,
    /// clangd's `textDocument.inactiveRegionsCapabilities.inactiveRegions`.
    pub inactive_regions: bool,
    /// `callHierarchy` etc. need nothing more; kept for later capabilities.
    pub hierarchical_symbols: bool,
}

/// The name under a cursor, and what answers for it.
pub struct Cursor {
    /// The tree the document is in.
    pub tree: Arc<Tree>,
    /// Its snapshot.
    pub snap: Arc<Snapshot>,
    /// The page every question of the request uses (options applied).
    pub page: Page,
    /// The identifier under the cursor.
    pub name: String,
    /// The document's root-relative path.
    pub path: String,
    /// The cursor's line (the buffer's, else the file's), without its line break.
    pub line: String,
    /// The byte offset of the name on `line`.
    pub start: usize,
}

impl Cursor {
    /// The name's range on the cursor's line `line0` (0-based), in `enc`.
    pub fn range(&self, line0: u32, enc: Encoding) -> lsp_types::Range {
        range_on(&self.line, line0, self.start, self.name.len(), enc)
    }
}

/// A folder the client named through a symbolic link: as named, and resolved.
pub type Alias = (PathBuf, PathBuf);

/// The server's state.
pub struct Session {
    /// The trees, as the MCP server keeps them (shared with the refresh started at
    /// `initialized`).
    pub server: Arc<Server>,
    /// The workspace folders (resolved), the first the default.
    pub folders: Vec<PathBuf>,
    /// Open documents.
    pub docs: Buffers,
    /// How the client counts characters.
    pub enc: Encoding,
    /// The client's settings.
    pub options: Options,
    /// What the client can take.
    pub caps: ClientCaps,
    /// Where messages to the client go.
    pub out: Out,
    /// Warnings of the request being answered, logged after it.
    pub notes: Vec<String>,
    /// What the user must see of the request being answered (a location left out), shown
    /// after it.
    pub alerts: Vec<String>,
    /// The first builds running, with their progress tokens.
    pub building: Vec<(Arc<Tree>, String)>,
    /// Folders the client named through a symbolic link: as named, and resolved. The client's
    /// URIs are read in the resolved tree, and answered in the client's spelling (else no
    /// document of such a folder was in any folder, and an answer opened a second buffer).
    pub aliases: Vec<Alias>,
}

impl Session {
    /// The folder (root) holding `path`, the deepest when folders nest.
    pub fn folder_of(&self, path: &Path) -> Option<&PathBuf> {
        self.folders
            .iter()
            .filter(|f| path.starts_with(f))
            .max_by_key(|f| f.as_os_str().len())
    }

    /// The file `uri` names, in the resolved folders (a folder's alias replaced).
    pub fn file_of(&self, uri: &Uri) -> Result<PathBuf, Failure> {
        let path = path_of(uri)?;
        for (named, resolved) in &self.aliases {
            if let Ok(rest) = path.strip_prefix(named) {
                return Ok(resolved.join(rest));
            }
        }
        Ok(path)
    }

    /// `file` (in a resolved folder) as the client names it.
    fn shown(&self, file: &Path) -> PathBuf {
        for (named, resolved) in &self.aliases {
            if let Ok(rest) = file.strip_prefix(resolved) {
                return named.join(rest);
            }
        }
        file.to_path_buf()
    }

    /// The tree of `uri`'s file, its root-relative path, and the snapshot answering for it.
    pub fn tree_of(&mut self, uri: &Uri) -> Result<(Arc<Tree>, Arc<Snapshot>, String), Failure> {
        let path = self.file_of(uri)?;
        let Some(root) = self.folder_of(&path).cloned() else {
            return Err(Failure::failed(format!(
                "{} is in no workspace folder knav serves ({}); open its tree as a folder",
                path.display(),
                self.folders
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let rel = path
            .strip_prefix(&root)
            .map(|p| crate::pathname::encode_os(p.as_os_str()).into_owned())
            .unwrap_or_default();
        let (tree, snap) = self.snapshot(&root)?;
        Ok((tree, snap, rel))
    }

    /// The tree at `root` and its snapshot (refreshed as the MCP server refreshes), or why
    /// there is none yet.
    pub fn snapshot(&mut self, root: &Path) -> Result<(Arc<Tree>, Arc<Snapshot>), Failure> {
        let root_s = root.display().to_string();
        let tree = self.server.tree(Some(&root_s)).map_err(Failure::failed)?;
        match self.server.snapshot(&tree) {
            Ok((snap, warning)) => {
                self.notes.extend(warning);
                Ok((tree, snap))
            }
            Err(NotReady::Building(m)) | Err(NotReady::Failed(m)) => Err(Failure::failed(m)),
        }
    }

    /// The page the options make, for `tree`.
    pub fn page(&self, tree: &Tree) -> Result<Page, Failure> {
        let mut page = Page {
            limit: MAX_LIMIT,
            path_prefix: self.options.path_prefix.clone(),
            ..Page::default()
        };
        if let Some(arg) = &self.options.active_config {
            let config = crate::request::active_config_within(arg, tree.base_root(), None)
                .map_err(|e| Failure::failed(format!("activeConfig: {e}")))?;
            page.active = Some(config);
        }
        Ok(page)
    }

    /// The name under the cursor of `at` (read from the open buffer, else the file), and what
    /// answers for it.
    pub fn cursor(&mut self, at: &TextDocumentPositionParams) -> Result<Cursor, Failure> {
        let uri = &at.text_document.uri;
        let (tree, snap, path) = self.tree_of(uri)?;
        let past = || Failure::params(format!("line {} is past the end", at.position.line));
        let n = at.position.line as usize;
        let line = match self.docs.get(uri) {
            Some(doc) => doc.lines.line(&doc.text, n).ok_or_else(past)?.to_string(),
            None => {
                let text = read_text(&tree, &path).ok_or_else(|| {
                    Failure::failed(format!("{path} cannot be read; open it first"))
                })?;
                let lines = Lines::new(&text);
                lines.line(&text, n).ok_or_else(past)?.to_string()
            }
        };
        let byte = byte_of(&line, at.position.character as usize, self.enc);
        let (start, name) = word_at(&line, byte).ok_or_else(|| Failure::failed(NO_NAME))?;
        let name = name.to_string();
        let page = self.page(&tree)?;
        Ok(Cursor {
            tree,
            snap,
            page,
            name,
            path,
            line,
            start,
        })
    }

    /// Every result of `ask`'s answer, asked in one page ([`crate::query::EVERY`]: a page loop
    /// would compute the answer again for each page), as one envelope of at most
    /// [`MAX_RESULTS`] results (the user told when there were more); its warnings kept to log.
    pub fn all(&mut self, snap: &Snapshot, page: &Page, ask: &Ask) -> Envelope {
        let every = Page {
            limit: crate::query::EVERY,
            offset: 0,
            ..page.clone()
        };
        let mut env = crate::request::answer(snap, every, ask);
        if let Some(results) = env.results.as_mut() {
            let n = results_len(results);
            if n > MAX_RESULTS {
                truncate(results, MAX_RESULTS as usize);
                self.alerts.push(format!(
                    "{n} results; the first {MAX_RESULTS} are listed (set knav's pathPrefix \
                     option to narrow them)"
                ));
            }
        }
        self.notes.extend(env.warning.clone());
        env
    }

    /// Where `len` bytes at 1-based `line` and byte `col` of root-relative `path` in `tree`
    /// are, in the client's terms: mapped into the open buffer when the file is open with
    /// unsaved edits; `None` (noted) when the edit changed that line. The file is read only
    /// when `utf16` (the column in UTF-16 units, when the answer read the line) is `None`.
    #[allow(clippy::too_many_arguments)]
    pub fn location(
        &mut self,
        tree: &Tree,
        texts: &mut Texts,
        path: &str,
        line: u32,
        col: u32,
        len: usize,
        utf16: Option<u32>,
    ) -> Option<Location> {
        let file = tree.base_root().join(crate::pathname::to_path(path));
        let uri = uri_of(&self.shown(&file))?;
        let (line0, col0) = (line.saturating_sub(1), col.saturating_sub(1) as usize);
        let enc = self.enc;
        if let Some(doc) = self.docs.by_path_mut(&file) {
            return match doc.map_line(line0) {
                Mapped::At(l) => Some(Location::new(uri, doc.range(l, col0, len, enc))),
                Mapped::Changed => {
                    self.alerts.push(format!(
                        "{path}:{line} is in lines edited since the last save: left out; save \
                         to have it re-indexed"
                    ));
                    None
                }
            };
        }
        // An identifier's bytes are ASCII: as many UTF-16 units as bytes.
        let known = utf16.map(|u| match enc {
            Encoding::Utf8 => col0 as u32,
            Encoding::Utf16 => u,
        });
        if let Some(start) = known.filter(|_| col > 0) {
            let end = start.saturating_add(len as u32);
            let range = Range::new(Position::new(line0, start), Position::new(line0, end));
            return Some(Location::new(uri, range));
        }
        let text = texts.line(tree, path, line0).unwrap_or_default();
        Some(Location::new(uri, range_on(&text, line0, col0, len, enc)))
    }
}

/// The files an answer's locations are on, read once per request to place columns.
#[derive(Default)]
pub struct Texts {
    files: HashMap<String, Option<(String, Lines)>>,
}

impl Texts {
    /// Line `line0` (0-based) of `path` in `tree`.
    pub fn line(&mut self, tree: &Tree, path: &str, line0: u32) -> Option<String> {
        let entry = self.files.entry(path.to_string()).or_insert_with(|| {
            let text = read_text(tree, path)?;
            let lines = Lines::new(&text);
            Some((text, lines))
        });
        let (text, lines) = entry.as_ref()?;
        lines.line(text, line0 as usize).map(str::to_string)
    }
}

/// The text of root-relative `path` in `tree`, read beneath its root (bad UTF-8 replaced).
pub fn read_text(tree: &Tree, path: &str) -> Option<String> {
    let root = crate::beneath::Root::open(tree.base_root()).ok()?;
    let bytes = root.read_capped(path, MAX_SOURCE).ok()?;
    Some(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn results_len(r: &crate::envelope::Results) -> u64 {
    use crate::envelope::Results as R;
    (match r {
        R::Records(v) => v.len(),
        R::Hits(v) => v.len(),
        R::Groups(v) => v.len(),
        R::Calls(v) => v.len(),
        R::Files(v) => v.len(),
        _ => 0,
    }) as u64
}

fn truncate(r: &mut crate::envelope::Results, n: usize) {
    use crate::envelope::Results as R;
    match r {
        R::Records(v) => v.truncate(n),
        R::Hits(v) => v.truncate(n),
        R::Groups(v) => v.truncate(n),
        R::Calls(v) => v.truncate(n),
        R::Files(v) => v.truncate(n),
        _ => {}
    }
}

/// The file a `file://` URI names (percent-escapes decoded).
pub fn path_of(uri: &Uri) -> Result<PathBuf, Failure> {
    let s = uri.as_str();
    let Some(rest) = s.strip_prefix("file://") else {
        return Err(Failure::params(format!("{s} is no file: URI")));
    };
    // `file:///path` or `file://localhost/path`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let mut bytes = Vec::with_capacity(rest.len());
    let raw = rest.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        // Two hex digits (`u8::from_str_radix` would take `%+1` too); else the `%` is kept.
        let escape = raw
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
        if raw[i] == b'%' {
            let hex = escape.and_then(|h| std::str::from_utf8(h).ok());
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                bytes.push(b);
                i += 3;
                continue;
            }
        }
        bytes.push(raw[i]);
        i += 1;
    }
    use std::os::unix::ffi::OsStringExt;
    let path = PathBuf::from(std::ffi::OsString::from_vec(bytes));
    if !path.is_absolute() {
        return Err(Failure::params(format!("{s} names no absolute path")));
    }
    // `/tree/../elsewhere` starts with `/tree` component by component: refused, not resolved.
    if path
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return Err(Failure::params(format!(
            "{s} names a path through `..`; send the path without it"
        )));
    }
    Ok(path)
}

/// The `file://` URI of absolute `path` (escaped as RFC 3986 needs).
pub fn uri_of(path: &Path) -> Option<Uri> {
    use std::os::unix::ffi::OsStrExt;
    let mut s = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_spaces_and_bytes_goes_to_a_uri_and_back() {
        let p = PathBuf::from("/t/a b/ü%.c");
        let uri = uri_of(&p).unwrap();
        assert_eq!(uri.as_str(), "file:///t/a%20b/%C3%BC%25.c");
        assert_eq!(path_of(&uri).unwrap(), p);
        assert!(path_of(&"http://x/y".parse().unwrap()).is_err());
    }

    #[test]
    fn a_uri_through_dotdot_is_refused_and_a_bad_escape_kept() {
        let out = path_of(&"file:///t/tree/../../etc/passwd".parse().unwrap());
        assert!(out.unwrap_err().message.contains("`..`"));
        // An invalid escape is refused by the URI's parser (the params do not deserialize), so
        // path_of sees only valid ones; `%2B1` is `+1`, not byte 1.
        assert!("file:///t/a%+1".parse::<Uri>().is_err());
        assert!("file:///t/a%4".parse::<Uri>().is_err());
        let p = path_of(&"file:///t/a%25%2B1".parse().unwrap()).unwrap();
        assert_eq!(p, PathBuf::from("/t/a%+1"));
    }

    #[test]
    fn options_merge_over_the_old_ones() {
        let o = Options::default()
            .merged(&serde_json::json!({"activeConfig": ".config", "pathPrefix": "fs/"}))
            .unwrap();
        let o = o
            .merged(&serde_json::json!({"knav": {"pathPrefix": null}}))
            .unwrap();
        assert_eq!(o.active_config.as_deref(), Some(".config"));
        assert_eq!(o.path_prefix, None);
        assert!(o.merged(&serde_json::json!({"groups": "x"})).is_err());
    }
}
