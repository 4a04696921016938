//! Timing whole processes: wall time from spawn to exit and peak RSS from `wait4`'s rusage, with
//! stdout captured (its size is an answer's size) and the tail of stderr kept for errors.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One finished process.
#[derive(Clone, Debug)]
pub struct Run {
    /// From spawn to exit.
    pub wall: Duration,
    /// Peak resident set of the process itself, in KiB.
    pub max_rss_kb: u64,
    /// Exit status 0.
    pub ok: bool,
    /// What it printed on stdout.
    pub stdout: Vec<u8>,
    /// The end of what it printed on stderr.
    pub stderr_tail: String,
}

/// Runs `cmd` to the end.
pub fn run(cmd: &mut Command) -> Result<Run, String> {
    let what = format!("{cmd:?}");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("{what}: {e}"))?;
    let mut out = child.stdout.take().ok_or("no stdout pipe")?;
    let mut err = child.stderr.take().ok_or("no stderr pipe")?;
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `usage` is plain data wait4 fills; `pid` is our child, not yet waited for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = loop {
        // SAFETY: as above; `status` and `usage` are writable.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break rc;
        }
    };
    let wall = started.elapsed();
    if rc < 0 {
        return Err(format!(
            "{what}: wait4: {}",
            std::io::Error::last_os_error()
        ));
    }
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr);
    let tail: String = stderr.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
    Ok(Run {
        wall,
        max_rss_kb: usage.ru_maxrss as u64,
        ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stdout,
        stderr_tail: tail,
    })
}

/// Median and 90th percentile of `samples` (nearest rank).
pub fn median_p90(samples: &[Duration]) -> (Duration, Duration) {
    if samples.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    let mut s = samples.to_vec();
    s.sort();
    let rank = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    (rank(0.5), rank(0.9))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_timed_and_its_output_kept() {
        let r = run(Command::new("sh").args(["-c", "echo hello; echo oops >&2; exit 3"])).unwrap();
        assert_eq!(r.stdout, b"hello\n");
        assert_eq!(r.stderr_tail, "oops");
        assert!(!r.ok);
        assert!(r.max_rss_kb > 0);
    }

    #[test]
    fn median_and_p90_use_nearest_rank() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        let (m, p) = median_p90(&ms(&[5, 1, 3, 2, 4]));
        assert_eq!((m.as_millis(), p.as_millis()), (3, 5));
        let (m, p) = median_p90(&ms(&[7]));
        assert_eq!((m.as_millis(), p.as_millis()), (7, 7));
    }
}
