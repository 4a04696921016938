//! What can go wrong opening, checking, building or publishing an index, as the cases a caller
//! tells apart: an index of another format version is rebuilt before a query, damage is
//! rebuilt by the next `knav index`, and every other error is shown as it is.
//!
//! The messages are the ones users see: each says what failed and where, and an index that
//! cannot be used says what to run ([`IndexError::Rebuild`]).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An error of the index layer. Cloned when a snapshot keeps one to show on every answer.
#[derive(Clone, Debug)]
pub enum IndexError {
    /// Reading or writing a file failed: `what` failed (empty: just reading `path`) at `path`.
    Io {
        /// What was being done (`cannot publish index in`), or empty.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The system's error.
        source: Arc<io::Error>,
    },
    /// There is no index to check.
    NoIndex {
        /// The index directory.
        dir: PathBuf,
    },
    /// The index directory cannot be created: another one is needed.
    NoIndexDir {
        /// The directory.
        dir: PathBuf,
        /// The system's error.
        source: Arc<io::Error>,
    },
    /// A JSON file of the index (`CURRENT`, a `meta.json`) does not parse.
    Json {
        /// The file.
        path: PathBuf,
        /// What serde found.
        source: Arc<serde_json::Error>,
    },
    /// An index file is not one this knav reads (its header or its version).
    Format {
        /// The file or segment directory.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The manifest has another format version: the index was built by another knav.
    OtherFormat {
        /// The index directory.
        dir: PathBuf,
        /// The version found.
        found: u32,
        /// The version this knav reads.
        reads: u32,
    },
    /// An index file is shorter or longer than the manifest says.
    Truncated {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// The length its segment's `meta.json` gives.
        expected: u64,
    },
    /// An index file is damaged: a checksum mismatch or a record that does not decode.
    Damaged {
        /// The file.
        file: PathBuf,
        /// What is wrong (`checksum mismatch`).
        detail: String,
    },
    /// An index that cannot be used as it is, with what to run: `knav index --full` (`full`)
    /// or `knav index`.
    Rebuild {
        /// Why it cannot be used.
        cause: Box<IndexError>,
        /// Whether the fix is a full rebuild.
        full: bool,
    },
    /// ctags cannot be run.
    Ctags(Arc<knav_ctags::ProbeError>),
    /// A build stopped without a file to blame (a worker or thread failed).
    Build(String),
}

impl IndexError {
    /// An [`IndexError::Io`] maker for `map_err`: `what` failed at `path`.
    pub fn io(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> IndexError {
        let path = path.to_path_buf();
        move |source| IndexError::Io {
            what,
            path,
            source: Arc::new(source),
        }
    }

    /// Damage in `file`.
    pub fn damaged(file: impl Into<PathBuf>, detail: impl Into<String>) -> IndexError {
        IndexError::Damaged {
            file: file.into(),
            detail: detail.into(),
        }
    }

    /// This error, with "run `knav index --full` to rebuild" after it.
    pub fn rebuild_full(self) -> IndexError {
        IndexError::Rebuild {
            cause: Box::new(self),
            full: true,
        }
    }

    /// This error, with "run `knav index` to rebuild it" after it.
    pub fn rebuild(self) -> IndexError {
        IndexError::Rebuild {
            cause: Box::new(self),
            full: false,
        }
    }

    /// This error with every path reached through a pinned directory's descriptor
    /// (`/proc/self/fd/N/…`) shown as the directory's own ([`crate::indexdir::shown`]):
    /// called while the directory is still open.
    pub fn shown(self) -> IndexError {
        use crate::indexdir::{shown, shown_text};
        let text = |e: Arc<io::Error>| {
            let s = e.to_string();
            match shown_text(&s) {
                t if t == s => e,
                t => Arc::new(io::Error::new(e.kind(), t)),
            }
        };
        match self {
            IndexError::Io { what, path, source } => IndexError::Io {
                what,
                path: shown(&path),
                source: text(source),
            },
            IndexError::NoIndex { dir } => IndexError::NoIndex { dir: shown(&dir) },
            IndexError::NoIndexDir { dir, source } => IndexError::NoIndexDir {
                dir: shown(&dir),
                source: text(source),
            },
            IndexError::Json { path, source } => IndexError::Json {
                path: shown(&path),
                source,
            },
            IndexError::Format { path, detail } => IndexError::Format {
                path: shown(&path),
                detail: shown_text(&detail),
            },
            IndexError::OtherFormat { dir, found, reads } => IndexError::OtherFormat {
                dir: shown(&dir),
                found,
                reads,
            },
            IndexError::Truncated {
                path,
                len,
                expected,
            } => IndexError::Truncated {
                path: shown(&path),
                len,
                expected,
            },
            IndexError::Damaged { file, detail } => IndexError::Damaged {
                file: shown(&file),
                detail: shown_text(&detail),
            },
            IndexError::Rebuild { cause, full } => IndexError::Rebuild {
                cause: Box::new(cause.shown()),
                full,
            },
            IndexError::Build(what) => IndexError::Build(shown_text(&what)),
            e @ IndexError::Ctags(_) => e,
        }
    }

    /// The error without what to run about it: why an update rebuilt the index.
    pub fn cause(&self) -> &IndexError {
        match self {
            IndexError::Rebuild { cause, .. } => cause,
            other => other,
        }
    }
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A path reached through a pinned directory's descriptor shows as the directory's.
        use crate::indexdir::shown;
        match self {
            IndexError::Io {
                what: "",
                path,
                source,
            } => {
                write!(f, "{}: {source}", shown(path).display())
            }
            IndexError::Io { what, path, source } => {
                write!(f, "{what} {}: {source}", shown(path).display())
            }
            IndexError::NoIndex { dir } => {
                write!(f, "no index in {}; run `knav index`", shown(dir).display())
            }
            IndexError::NoIndexDir { dir, source } => write!(
                f,
                "cannot create index directory {}: {source}; pass --index-dir or set \
                 KNAV_INDEX_DIR",
                shown(dir).display()
            ),
            IndexError::Json { path, source } => write!(f, "{}: {source}", shown(path).display()),
            IndexError::Format { path, detail } => write!(f, "{}: {detail}", shown(path).display()),
            IndexError::OtherFormat { dir, found, reads } => write!(
                f,
                "the index in {} has format version {found}, this knav reads {}; run `knav \
                 index --full` to rebuild it",
                shown(dir).display(),
                reads
            ),
            IndexError::Truncated {
                path,
                len,
                expected,
            } => write!(
                f,
                "{} is {len} bytes, the index says {expected}: truncated or replaced",
                shown(path).display()
            ),
            IndexError::Damaged { file, detail } => {
                write!(
                    f,
                    "the index file {} is damaged ({detail})",
                    shown(file).display()
                )
            }
            IndexError::Rebuild { cause, full: true } => {
                write!(f, "{cause}; run `knav index --full` to rebuild")
            }
            IndexError::Rebuild { cause, full: false } => {
                write!(f, "{cause}; run `knav index` to rebuild it")
            }
            IndexError::Ctags(e) => e.fmt(f),
            IndexError::Build(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for IndexError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IndexError::Io { source, .. } | IndexError::NoIndexDir { source, .. } => {
                Some(&**source)
            }
            IndexError::Json { source, .. } => Some(&**source),
            IndexError::Rebuild { cause, .. } => Some(&**cause),
            IndexError::Ctags(e) => Some(&**e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_where_and_what_to_do() {
        let e = IndexError::io("cannot publish index in", Path::new("/x/.knav"))(io::Error::other(
            "disk full",
        ));
        assert_eq!(e.to_string(), "cannot publish index in /x/.knav: disk full");
        let e = IndexError::io("", Path::new("/x/.knav/CURRENT"))(io::Error::other("denied"));
        assert_eq!(e.to_string(), "/x/.knav/CURRENT: denied");
        let e = IndexError::damaged("/x/seg/defs.dat", "checksum mismatch").rebuild();
        assert_eq!(
            e.to_string(),
            "the index file /x/seg/defs.dat is damaged (checksum mismatch); run `knav index` to \
             rebuild it"
        );
        let cause = IndexError::damaged("/x/seg/files.dat", "checksum mismatch");
        let e = cause.clone().rebuild_full();
        assert!(e
            .to_string()
            .ends_with("; run `knav index --full` to rebuild"));
        assert_eq!(e.cause().to_string(), cause.to_string());
        assert!(std::error::Error::source(&e).is_some());
    }
}
