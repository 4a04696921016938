//! Progress of long work on a terminal: files, bytes, phase and ETA on one redrawn line of
//! stderr. Silent when stderr is not a terminal (piped, in tests, under an MCP client). A
//! phase without counts has its seconds redrawn each second by a ticker thread, so a long
//! phase never looks stuck; an ETA is shown once a phase has run a second and done 2% of its
//! bytes, from that phase's own rate.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A progress line.
pub struct Progress {
    enabled: bool,
    started: Instant,
    last: Option<Instant>,
    shared: Option<Arc<Mutex<Status>>>,
    /// The phase of the counts last shown, when it started and its bytes then.
    counting: Option<(String, Instant, u64)>,
    screen: Arc<Screen>,
    ticker: Option<JoinHandle<()>>,
}

/// What is on the terminal, shared with the ticker.
struct Screen {
    line: Mutex<Line>,
    stop: AtomicBool,
}

#[derive(Default)]
struct Line {
    /// A phase line without counts, redrawn by the ticker.
    phase: Option<String>,
    drawn: bool,
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

/// Redrawn this often at most, and a phase line's seconds this often.
const TICK: Duration = Duration::from_millis(200);

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
            shared: None,
            counting: None,
            screen: Arc::new(Screen {
                line: Mutex::new(Line::default()),
                stop: AtomicBool::new(false),
            }),
            ticker: None,
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
        if self.counting.as_ref().is_none_or(|(p, _, _)| p != phase) {
            self.counting = Some((phase.to_string(), now, bytes));
        }
        if self.last.is_some_and(|l| now - l < TICK) && files < total_files {
            return;
        }
        self.last = Some(now);
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = match &self.counting {
            Some((_, since, from)) => eta(now - *since, bytes.saturating_sub(*from), {
                total_bytes.saturating_sub(*from)
            }),
            None => None,
        }
        .map_or(String::new(), |s| format!(", ETA {s:.0} s"));
        let mb = |b: u64| b as f64 / (1 << 20) as f64;
        let text = format!(
            "knav {phase}: {files}/{total_files} files, {:.0}/{:.0} MB, {elapsed:.0} s{eta}",
            mb(bytes),
            mb(total_bytes)
        );
        let mut line = lock(&self.screen.line);
        line.phase = None;
        draw(&mut line, &text);
    }

    /// Shows a phase without counts (its seconds counting on).
    pub fn phase(&mut self, phase: &str) {
        self.record(phase, None);
        if !self.enabled {
            return;
        }
        self.counting = None;
        {
            let mut line = lock(&self.screen.line);
            line.phase = Some(phase.to_string());
            let text = phase_text(phase, self.started);
            draw(&mut line, &text);
        }
        if self.ticker.is_none() {
            let (screen, started) = (self.screen.clone(), self.started);
            self.ticker = std::thread::Builder::new()
                .name("knav-progress".into())
                .spawn(move || tick(&screen, started))
                .ok();
        }
    }

    /// Clears the line.
    pub fn finish(&mut self) {
        self.screen.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        self.screen.stop.store(false, Ordering::Relaxed);
        let mut line = lock(&self.screen.line);
        line.phase = None;
        if self.enabled && line.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            line.drawn = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.ticker.is_some() {
            self.finish();
        }
    }
}

/// Seconds left at the rate of the phase so far: none before it has run a second and done 2%
/// of its bytes, when a first burst would make a wild guess.
fn eta(ran: Duration, done: u64, total: u64) -> Option<f64> {
    let secs = ran.as_secs_f64();
    (secs >= 1.0 && done > 0 && done * 50 >= total && total > done)
        .then(|| secs * (total - done) as f64 / done as f64)
}

fn phase_text(phase: &str, started: Instant) -> String {
    format!("knav {phase} ({:.0} s)", started.elapsed().as_secs_f64())
}

fn lock(m: &Mutex<Line>) -> std::sync::MutexGuard<'_, Line> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn draw(line: &mut Line, text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[K{text}");
    let _ = err.flush();
    line.drawn = true;
}

/// The ticker: redraws a phase line's seconds until told to stop.
fn tick(screen: &Screen, started: Instant) {
    loop {
        std::thread::park_timeout(Duration::from_secs(1));
        if screen.stop.load(Ordering::Relaxed) {
            return;
        }
        let mut line = lock(&screen.line);
        if let Some(phase) = line.phase.clone() {
            draw(&mut line, &phase_text(&phase, started));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::eta;
    use std::time::Duration;

    #[test]
    fn no_wild_eta_from_a_first_burst() {
        // The first update after 10 ms with 1 KB of 60 GB done gave 3,045,258 s.
        assert_eq!(eta(Duration::from_millis(10), 1 << 10, 60 << 30), None);
        assert_eq!(eta(Duration::from_secs(5), 1 << 20, 60 << 30), None);
        let s = eta(Duration::from_secs(2), 10, 100).unwrap();
        assert!((s - 18.0).abs() < 1e-9, "{s}");
        assert_eq!(eta(Duration::from_secs(2), 100, 100), None);
    }
}
