//! Progress of long work on a terminal: files, bytes, phase and ETA on one redrawn line of
//! stderr. Silent when stderr is not a terminal (piped, in tests, under an MCP client).

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A progress line.
pub struct Progress {
    enabled: bool,
    started: Instant,
    last: Option<Instant>,
    drawn: bool,
    shared: Option<Arc<Mutex<Status>>>,
}

/// The last progress reported, for a build that runs in the background (the MCP server's first
/// build reads it to say how far along it is).
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// The phase.
    pub phase: String,
    /// Files done.
    pub files: u64,
    /// Files in all.
    pub total_files: u64,
    /// Bytes done.
    pub bytes: u64,
    /// Bytes in all.
    pub total_bytes: u64,
}

impl Progress {
    /// Progress on stderr when it is a terminal.
    pub fn stderr() -> Progress {
        Progress::new(std::io::stderr().is_terminal())
    }

    /// Progress that prints only when `enabled`.
    pub fn new(enabled: bool) -> Progress {
        Progress {
            enabled,
            started: Instant::now(),
            last: None,
            drawn: false,
            shared: None,
        }
    }

    /// Progress that prints nothing and keeps the last report in `status`.
    pub fn shared(status: Arc<Mutex<Status>>) -> Progress {
        let mut p = Progress::new(false);
        p.shared = Some(status);
        p
    }

    fn record(&self, phase: &str, counts: Option<(u64, u64, u64, u64)>) {
        if let Some(s) = &self.shared {
            if let Ok(mut s) = s.lock() {
                s.phase = phase.to_string();
                if let Some((files, total_files, bytes, total_bytes)) = counts {
                    (s.files, s.total_files, s.bytes, s.total_bytes) =
                        (files, total_files, bytes, total_bytes);
                }
            }
        }
    }

    /// Shows `files` of `total_files` and `bytes` of `total_bytes` done in `phase`.
    pub fn update(
        &mut self,
        phase: &str,
        files: u64,
        total_files: u64,
        bytes: u64,
        total_bytes: u64,
    ) {
        self.record(phase, Some((files, total_files, bytes, total_bytes)));
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if self
            .last
            .is_some_and(|l| now - l < Duration::from_millis(200))
            && files < total_files
        {
            return;
        }
        self.last = Some(now);
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = if bytes > 0 && total_bytes > bytes {
            format!(
                ", ETA {:.0} s",
                elapsed * (total_bytes - bytes) as f64 / bytes as f64
            )
        } else {
            String::new()
        };
        let mb = |b: u64| b as f64 / (1 << 20) as f64;
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[Kknav {phase}: {files}/{total_files} files, {:.0}/{:.0} MB, {elapsed:.0} s{eta}",
            mb(bytes),
            mb(total_bytes)
        );
        let _ = err.flush();
        self.drawn = true;
    }

    /// Shows a phase without counts.
    pub fn phase(&mut self, phase: &str) {
        self.record(phase, None);
        if !self.enabled {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[Kknav {phase} ({:.0} s)",
            self.started.elapsed().as_secs_f64()
        );
        let _ = err.flush();
        self.drawn = true;
    }

    /// Clears the line.
    pub fn finish(&mut self) {
        if self.enabled && self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            self.drawn = false;
        }
    }
}
