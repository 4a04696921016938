//! The cost of the pointer pass (`indirect::facts`) alone over a kernel tree: every `.c` and
//! `.h` file is read into memory first, then `facts` runs over all of them, several rounds, timed
//! with the thread's CPU clock. A digest of the answers shows two builds agree.
//!
//! `KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12 cargo test --release --test indirect_bench \
//!  -- --ignored --nocapture`

use std::hash::{Hash, Hasher};
use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(ty) = e.file_type() else { continue };
        let p = e.path();
        if ty.is_dir() {
            sources(&p, out);
        } else if ty.is_file() && matches!(p.extension().and_then(|x| x.to_str()), Some("c" | "h"))
        {
            out.extend(std::fs::read(&p));
        }
    }
}

fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[test]
#[ignore = "a benchmark: needs a kernel tree in KNAV_KERNEL_TREE and a release build"]
fn facts_over_the_kernel() {
    let tree = std::env::var("KNAV_KERNEL_TREE").expect("KNAV_KERNEL_TREE names a kernel tree");
    let mut files = Vec::new();
    sources(Path::new(&tree), &mut files);
    let bytes: usize = files.iter().map(Vec::len).sum();
    eprintln!("{} files, {} MB", files.len(), bytes >> 20);
    let tag = |m: &[u8]| m.starts_with(b"DEFINE_").then(|| "sched_class".to_string());
    for round in 0..3 {
        let t0 = thread_cpu_seconds();
        let all: Vec<_> = files
            .iter()
            .map(|f| knav::indirect::facts(f, &tag))
            .collect();
        let cpu = thread_cpu_seconds() - t0;
        let mut digest = std::collections::hash_map::DefaultHasher::new();
        for f in &all {
            format!("{f:?}").hash(&mut digest);
        }
        eprintln!(
            "round {round}: facts {cpu:.3} s CPU, digest {:016x}",
            digest.finish()
        );
    }
}
