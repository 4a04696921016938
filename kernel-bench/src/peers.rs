//! The tools knav is measured against, found on `PATH` with their versions; a missing one is
//! reported as missing, never guessed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One external program.
#[derive(Clone, Debug)]
pub struct Peer {
    /// Its name on `PATH`.
    pub name: &'static str,
    /// Where it is, when installed.
    pub path: Option<PathBuf>,
    /// The first line of its version output.
    pub version: String,
}

impl Peer {
    /// Looks `name` up and asks it its version with `version_arg`.
    pub fn find(name: &'static str, version_arg: &str) -> Peer {
        let path = which(name);
        let version = path
            .as_ref()
            .and_then(|p| Command::new(p).arg(version_arg).output().ok())
            .map(|o| {
                let text = if o.stdout.is_empty() {
                    o.stderr
                } else {
                    o.stdout
                };
                String::from_utf8_lossy(&text)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string()
            })
            .unwrap_or_else(|| "missing".to_string());
        let version = if name == "readtags" && path.is_some() {
            "installed (part of Universal Ctags, see ctags)".to_string()
        } else {
            version
        };
        Peer {
            name,
            path,
            version,
        }
    }

    /// A command running it.
    pub fn cmd(&self) -> Option<Command> {
        self.path.as_ref().map(Command::new)
    }
}

/// Every peer the benchmark uses.
#[derive(Clone, Debug)]
pub struct Peers {
    /// GNU Global's indexer.
    pub gtags: Peer,
    /// GNU Global's query tool.
    pub global: Peer,
    /// universal-ctags.
    pub ctags: Peer,
    /// universal-ctags's tag file reader.
    pub readtags: Peer,
    /// cscope.
    pub cscope: Peer,
    /// ripgrep.
    pub rg: Peer,
}

impl Peers {
    /// Finds them all.
    pub fn find() -> Peers {
        Peers {
            gtags: Peer::find("gtags", "--version"),
            global: Peer::find("global", "--version"),
            ctags: Peer::find("ctags", "--version"),
            // readtags has no version option; it comes with (and is as old as) ctags.
            readtags: Peer::find("readtags", "-h"),
            cscope: Peer::find("cscope", "-V"),
            rg: Peer::find("rg", "--version"),
        }
    }

    /// All of them, for the report.
    pub fn all(&self) -> [&Peer; 6] {
        [
            &self.gtags,
            &self.global,
            &self.ctags,
            &self.readtags,
            &self.cscope,
            &self.rg,
        ]
    }
}

/// `name` on `PATH`, or `name` itself when it is a path to an executable.
pub fn which(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| executable(p))
}
