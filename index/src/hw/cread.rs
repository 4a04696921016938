//! C driver files read for the hardware part: the reading context built once from the tree's
//! own headers (the ID macros of `pci.h`, `usb.h`, …, the field orders of
//! `mod_devicetable.h`, the `OF_DECLARE` family of every header under `include/` that names
//! it), and each file read with the local headers it includes (`#include "x.h"`, three levels,
//! each header read once per build).
//!
//! A file's facts depend on those headers: [`CReader::salt`] hashes the context's headers, so
//! a part built with other headers reads every C file again, and a file's facts name the local
//! headers they were read with.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use knav_hw::driver_file::LocalHeader;
use knav_hw::driver_file::{read_with_headers, Context};

use super::drivers::DriverFacts;
use crate::codec::hash64;
use crate::text::walk::TextFile;
use crate::tree::beneath::Root;

use knav_hw::driver_file::CONTEXT_HEADERS;

/// Headers larger than this are not read as context or local headers.
const MAX_HEADER_BYTES: u64 = 4 << 20;

/// How deep local includes are followed.
const LOCAL_DEPTH: u32 = 3;

/// True for a C file the hardware part reads.
pub fn is_c_path(path: &str) -> bool {
    path.ends_with(".c") || path.ends_with(".h")
}

/// Texts one of which a C file must hold to say anything about hardware, whatever the
/// context: those of `knav_hw::driver_file`'s reader and the names its context's makers and
/// declarers share (`IRQCHIP_PLATFORM_DRIVER_BEGIN`, `…_OF_DECLARE`). A file with none of
/// them, whose facts were empty and that no file with facts reads as a header, still says
/// nothing after an edit.
pub const COARSE_NEEDLES: [&str; 10] = [
    "_device_id",
    "match_table",
    "id_table",
    "compatible",
    "property",
    "phandle",
    "gpio",
    "DECLARE",
    "DEVICE_TABLE",
    "PLATFORM_DRIVER",
];

/// True when `bytes` hold one of [`COARSE_NEEDLES`].
pub fn may_say_something(bytes: &[u8]) -> bool {
    COARSE_NEEDLES
        .iter()
        .any(|n| memchr::memmem::find(bytes, n.as_bytes()).is_some())
}

/// A local header as read once: the local headers it includes (resolved) and its reading, or
/// nothing when it is not in the tree. Its bytes are not kept.
type Header = Option<Read>;

/// A local header's includes and reading, shared by the files that include it.
type Read = Arc<(Vec<String>, LocalHeader)>;

/// Reads C files for the hardware part.
pub struct CReader<'r> {
    root: &'r Root,
    cx: Context,
    salt: u64,
    /// The context's headers.
    context: Vec<String>,
    /// The tree's C files, for resolving local includes.
    listed: HashSet<&'r str>,
    headers: Mutex<HashMap<String, Header>>,
}

impl<'r> CReader<'r> {
    /// A reader of the C files among `files` (the text walk's list) under `root`, its
    /// context built from the tree's headers.
    pub fn new(root: &'r Root, files: &'r [TextFile]) -> CReader<'r> {
        use rayon::prelude::*;
        let mut paths: Vec<&str> = CONTEXT_HEADERS.to_vec();
        let declaring: Vec<&str> = files
            .par_iter()
            .filter(|f| {
                f.path.starts_with("include/")
                    && f.path.ends_with(".h")
                    && f.size <= MAX_HEADER_BYTES
                    && !CONTEXT_HEADERS.contains(&f.path.as_str())
            })
            .filter(|f| {
                root.read(&f.path)
                    .is_ok_and(|b| memchr::memmem::find(&b, b"OF_DECLARE").is_some())
            })
            .map(|f| f.path.as_str())
            .collect();
        paths.extend(declaring);
        let bytes: Vec<(&str, Vec<u8>)> = paths
            .iter()
            .filter_map(|p| Some((*p, root.read_capped(p, MAX_HEADER_BYTES).ok()?)))
            .collect();
        let mut salted = Vec::new();
        for (p, b) in &bytes {
            salted.extend_from_slice(p.as_bytes());
            salted.extend_from_slice(&hash64(b).to_le_bytes());
        }
        CReader {
            root,
            cx: Context::from_headers(bytes.iter().map(|(_, b)| b.as_slice())),
            salt: hash64(&salted),
            context: bytes.iter().map(|(p, _)| p.to_string()).collect(),
            listed: files
                .iter()
                .filter(|f| is_c_path(&f.path))
                .map(|f| f.path.as_str())
                .collect(),
            headers: Mutex::new(HashMap::new()),
        }
    }

    /// A hash of the context's headers: facts read under another salt are read again.
    pub fn salt(&self) -> u64 {
        self.salt
    }

    /// The headers the context was built from.
    pub fn context(&self) -> &[String] {
        &self.context
    }

    /// The facts of the C file at `path` of `bytes`.
    pub fn read(&self, path: &str, bytes: &[u8]) -> DriverFacts {
        let mut seen = HashSet::new();
        let mut locals = Vec::new();
        let includes = self.includes(path, bytes);
        self.quoted(&includes, LOCAL_DEPTH, &mut seen, &mut locals);
        let headers: Vec<&LocalHeader> = locals.iter().map(|(_, h)| &h.1).collect();
        let f = read_with_headers(bytes, &self.cx, &headers);
        DriverFacts::of(f, locals.into_iter().map(|(p, _)| p).collect())
    }

    /// The local headers of the tree `src` (at `path`) includes with quotes, resolved.
    fn includes(&self, path: &str, src: &[u8]) -> Vec<String> {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let mut out = Vec::new();
        for at in memchr::memmem::find_iter(src, b"#include \"") {
            let rest = &src[at + 10..];
            let Some(end) = memchr::memchr2(b'"', b'\n', rest) else {
                continue;
            };
            if rest[end] != b'"' {
                continue;
            }
            let Ok(name) = std::str::from_utf8(&rest[..end]) else {
                continue;
            };
            if let Some(header) = join(dir, name).filter(|h| self.listed.contains(h.as_str())) {
                out.push(header);
            }
        }
        out
    }

    /// Adds the local headers `includes` to `out`, depth first (a header's own includes
    /// before it), each once.
    fn quoted(
        &self,
        includes: &[String],
        depth: u32,
        seen: &mut HashSet<String>,
        out: &mut Vec<(String, Read)>,
    ) {
        if depth == 0 {
            return;
        }
        for header in includes {
            if !seen.insert(header.clone()) {
                continue;
            }
            if let Some(h) = self.header(header) {
                self.quoted(&h.0, depth - 1, seen, out);
                out.push((header.clone(), h));
            }
        }
    }

    /// The local header `path`, read once per build.
    fn header(&self, path: &str) -> Header {
        if let Some(h) = self.lock().get(path) {
            return h.clone();
        }
        let h = self.root.read_capped(path, MAX_HEADER_BYTES).ok().map(|b| {
            let local = LocalHeader::new(&b, &self.cx);
            Arc::new((self.includes(path, &b), local))
        });
        self.lock().insert(path.to_string(), h.clone());
        h
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Header>> {
        self.headers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `name` relative to the directory `dir`, `..` and `.` resolved; `None` when it leaves the
/// root or is absolute.
pub(super) fn join(dir: &str, name: &str) -> Option<String> {
    if name.starts_with('/') {
        return None;
    }
    super::includes::normalized(dir, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_includes_resolve_inside_the_root_only() {
        assert_eq!(
            join("drivers/net", "x.h").as_deref(),
            Some("drivers/net/x.h")
        );
        assert_eq!(
            join("drivers/net/a", "../b/./y.h").as_deref(),
            Some("drivers/net/b/y.h")
        );
        assert_eq!(join("drivers", "../../etc/passwd"), None);
        assert_eq!(join("drivers", "/etc/passwd"), None);
    }
}
