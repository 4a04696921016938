//! Finding `ctags` and checking that it is a Universal Ctags with the features knav needs.

use std::fmt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How to install Universal Ctags, named in every error about a missing or unfit `ctags`.
pub const INSTALL_HINT: &str = "install Universal Ctags: `apt-get install universal-ctags` \
(Debian/Ubuntu), `dnf install ctags` (Fedora), `brew install universal-ctags` (macOS), \
or point KNAV_CTAGS at its binary";

/// How long a successful probe is trusted within one process.
pub const PROBE_TTL: Duration = Duration::from_secs(60);

/// A checked Universal Ctags binary.
#[derive(Clone, Debug)]
pub struct Ctags {
    /// The program to run (a bare name is looked up on `PATH`).
    pub program: PathBuf,
    /// The version it reported, e.g. `5.9.0`.
    pub version: String,
}

/// Why `ctags` cannot be used.
#[derive(Debug)]
pub enum ProbeError {
    /// The program could not be started at all.
    NotFound {
        /// The program that was tried.
        program: PathBuf,
        /// The operating system's reason.
        reason: std::io::Error,
    },
    /// It ran, but is not Universal Ctags (Exuberant Ctags, Emacs etags, …).
    NotUniversal {
        /// The program that was tried.
        program: PathBuf,
        /// The first line it printed for `--version`.
        banner: String,
    },
    /// It is Universal Ctags but lacks a feature knav depends on.
    MissingFeature {
        /// The program that was tried.
        program: PathBuf,
        /// The feature, as `ctags --list-features` names it.
        feature: &'static str,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::NotFound { program, reason } => write!(
                f,
                "cannot run ctags ({}): {reason}; {INSTALL_HINT}",
                program.display()
            ),
            ProbeError::NotUniversal { program, banner } => write!(
                f,
                "{} is not Universal Ctags (it says {banner:?}); {INSTALL_HINT}",
                program.display()
            ),
            ProbeError::MissingFeature { program, feature } => write!(
                f,
                "{} was built without the {feature:?} feature that knav needs \
                 (see `ctags --list-features`); {INSTALL_HINT}",
                program.display()
            ),
        }
    }
}

impl std::error::Error for ProbeError {}

impl Ctags {
    /// Finds ctags (`KNAV_CTAGS`, else `ctags` on `PATH`) and checks it. A program that passed
    /// is trusted for [`PROBE_TTL`] in this process (a server refreshing after every edit would
    /// otherwise start two processes each time); a failure is never remembered.
    pub fn probe() -> Result<Ctags, ProbeError> {
        static LAST: Mutex<Option<(Instant, Ctags)>> = Mutex::new(None);
        let program = std::env::var_os("KNAV_CTAGS")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("ctags"));
        let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, ctags)) = &*last {
            if ctags.program == program && at.elapsed() < PROBE_TTL {
                return Ok(ctags.clone());
            }
        }
        let ctags = Ctags::probe_program(program)?;
        *last = Some((Instant::now(), ctags.clone()));
        Ok(ctags)
    }

    /// Checks one given program.
    pub fn probe_program(program: PathBuf) -> Result<Ctags, ProbeError> {
        // Both questions at once: each is a process start, and a refresh waits for them.
        let spawn = |arg: &str| {
            Command::new(&program)
                .arg(arg)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
        };
        let not_found = |reason| ProbeError::NotFound {
            program: program.clone(),
            reason,
        };
        let version = spawn("--version").map_err(not_found)?;
        let features = spawn("--list-features");
        let version = version.wait_with_output().map_err(not_found)?;
        let features = features
            .and_then(|f| f.wait_with_output())
            .map_err(not_found)?;
        let text = String::from_utf8_lossy(&version.stdout);
        let banner = text.lines().next().unwrap_or("").trim().to_string();
        if !banner.starts_with("Universal Ctags") {
            return Err(ProbeError::NotUniversal { program, banner });
        }
        let version = banner
            .trim_start_matches("Universal Ctags")
            .trim()
            .split([',', '(', ' '])
            .next()
            .unwrap_or("")
            .to_string();
        let features = String::from_utf8_lossy(&features.stdout);
        for feature in ["json", "interactive"] {
            let has = features
                .lines()
                .any(|l| l.split_whitespace().next() == Some(feature));
            if !has {
                return Err(ProbeError::MissingFeature { program, feature });
            }
        }
        Ok(Ctags { program, version })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_program_names_the_install_command() {
        let err = Ctags::probe_program(PathBuf::from("/nonexistent/ctags")).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ProbeError::NotFound { .. }));
        assert!(msg.contains("apt-get install universal-ctags"), "{msg}");
        assert!(msg.contains("/nonexistent/ctags"), "{msg}");
    }

    #[test]
    fn a_program_that_is_not_ctags_is_refused() {
        // `true` runs and prints nothing: not Universal Ctags.
        let err = Ctags::probe_program(PathBuf::from("true")).unwrap_err();
        assert!(matches!(err, ProbeError::NotUniversal { .. }), "{err}");
    }
}
