//! Where an update spends its time: phase timings on stderr when `KNAV_TRACE` is set (the CLI
//! keeps one [`Trace`] from its start).

use std::time::Instant;

/// Phase timings on stderr when `KNAV_TRACE` is set: where an update spends its time, in wall
/// time and in CPU time (user + system, all threads: comparable on a busy machine).
pub struct Trace {
    on: bool,
    last: Instant,
    last_cpu: f64,
}

impl Default for Trace {
    fn default() -> Self {
        Trace::new()
    }
}

impl Trace {
    /// A trace that starts now; silent unless `KNAV_TRACE` is set.
    pub fn new() -> Trace {
        Trace {
            on: std::env::var_os("KNAV_TRACE").is_some(),
            last: Instant::now(),
            last_cpu: cpu_seconds(),
        }
    }

    /// Ends phase `phase`: its wall and CPU time since the last mark, with the memory now.
    pub fn mark(&mut self, phase: &str) {
        if self.on {
            let cpu = cpu_seconds();
            eprintln!(
                "knav trace: {phase}: {:.1} ms, CPU {:.1} ms (RSS {}, peak {})",
                self.last.elapsed().as_secs_f64() * 1e3,
                (cpu - self.last_cpu) * 1e3,
                status("VmRSS:"),
                status("VmHWM:")
            );
            self.last = Instant::now();
            self.last_cpu = cpu;
        }
    }
}

/// User + system CPU seconds of the process so far (all threads); 0 where unknown.
fn cpu_seconds() -> f64 {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid rusage to write.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// A field of the process's status as Linux reports it (`VmRSS:` now, `VmHWM:` at its
/// peak); `?` elsewhere.
pub(crate) fn status(field: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with(field))?;
            Some(line[field.len()..].trim().to_string())
        })
        .unwrap_or_else(|| "?".into())
}
