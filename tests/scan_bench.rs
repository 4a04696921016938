//! A bench of the scanner alone (`knav::scan::scan`) over a real kernel tree, not a test: it
//! reads every `.c` and `.h` file into memory, then times `scan()` over all of them with the
//! thread's CPU clock, several rounds, and prints a digest of everything scanned (to compare
//! two versions of the scanner). Run with
//! `KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12 cargo test --release --test scan_bench -- --ignored --nocapture`.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

fn thread_cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            sources(&path, out);
        } else if kind.is_file()
            && matches!(path.extension().and_then(|x| x.to_str()), Some("c" | "h"))
        {
            out.push(path);
        }
    }
}

#[test]
#[ignore = "a bench: needs KNAV_KERNEL_TREE, a kernel source tree"]
fn scan_the_kernel() {
    let tree = std::env::var("KNAV_KERNEL_TREE").expect("KNAV_KERNEL_TREE names a kernel tree");
    let mut paths = Vec::new();
    sources(Path::new(&tree), &mut paths);
    paths.sort();
    let files: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let bytes: usize = files.iter().map(Vec::len).sum();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let mut times = Vec::new();
    for _ in 0..rounds {
        let t = thread_cpu_seconds();
        let mut occurrences = 0;
        for f in &files {
            occurrences += knav::scan::scan(f).occurrences.len();
        }
        times.push(thread_cpu_seconds() - t);
        std::hint::black_box(occurrences);
    }
    let mut digest = std::collections::hash_map::DefaultHasher::new();
    for f in &files {
        format!("{:?}", knav::scan::scan(f)).hash(&mut digest);
    }
    println!(
        "{} files, {} MB; scan CPU seconds per round: {:.3?}; digest {:016x}",
        files.len(),
        bytes >> 20,
        times,
        digest.finish()
    );
}
