//! Benches of one build step alone over a real kernel tree, not tests (`#[ignore]`d): every
//! `.c` and `.h` file of `KNAV_KERNEL_TREE` is read into memory first, then the step runs over
//! all of them for `ROUNDS` rounds (3 by default), timed with the thread's CPU clock; a digest
//! of everything the step gave tells two versions of it apart (built by the same toolchain:
//! the digest is std's `DefaultHasher`, whose algorithm may change between releases). Run with
//! `KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12 cargo test --release -p kernel-bench --test steps -- --ignored --nocapture`.

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

/// Times `step` over every C file of the tree and prints its CPU seconds per round and the
/// digest of what it gave for each file.
fn bench<T: std::fmt::Debug>(name: &str, step: impl Fn(&[u8]) -> T) {
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
        for f in &files {
            std::hint::black_box(step(f));
        }
        times.push(thread_cpu_seconds() - t);
    }
    let mut digest = std::collections::hash_map::DefaultHasher::new();
    for f in &files {
        format!("{:?}", step(f)).hash(&mut digest);
    }
    println!(
        "{name}: {} files, {} MB; CPU seconds per round: {:.3?}; digest {:016x}",
        files.len(),
        bytes >> 20,
        times,
        digest.finish()
    );
}

#[test]
#[ignore = "a bench: needs KNAV_KERNEL_TREE, a kernel source tree"]
fn scan_the_kernel() {
    bench("scan", knav_c::scan::scan);
}

#[test]
#[ignore = "a bench: needs KNAV_KERNEL_TREE, a kernel source tree"]
fn pointer_facts_of_the_kernel() {
    // Macros named DEFINE_* declare a `struct sched_class`, as DEFINE_SCHED_CLASS does.
    let tag = |m: &[u8]| m.starts_with(b"DEFINE_").then(|| "sched_class".to_string());
    bench("indirect::facts", |f| knav_c::indirect::facts(f, &tag));
}

/// The definitions of every file of the index at `KNAV_BENCH_INDEX` with its bytes in the tree
/// (those without a document left out): what the build gives [`file_docs`] after ctags.
///
/// [`file_docs`]: knav_index::code::extract::file_docs
fn files_with_definitions() -> Vec<(String, Vec<u8>, Vec<knav_index::format::DefRecord>)> {
    use knav_index::code::extract::is_document;
    use knav_index::format::DefRecord;
    let tree = std::env::var("KNAV_KERNEL_TREE").expect("KNAV_KERNEL_TREE names a kernel tree");
    let index = std::env::var("KNAV_BENCH_INDEX").expect("KNAV_BENCH_INDEX names its index");
    let seg = std::fs::read_dir(&index)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("seg-"))
        .expect("the index has a segment");
    let seg = knav_index::segment::Segment::open(&seg).unwrap();
    let mut files = Vec::new();
    for id in 0..seg.file_count() {
        let defs: Vec<DefRecord> = seg.file_defs(id).iter().map(|d| d.to_record()).collect();
        if !defs.iter().any(is_document) {
            continue;
        }
        let path = seg.file_path(id).to_string();
        if let Ok(src) = std::fs::read(Path::new(&tree).join(&path)) {
            files.push((path, src, defs));
        }
    }
    files
}

#[test]
#[ignore = "a bench: needs KNAV_KERNEL_TREE, a kernel source tree, and KNAV_BENCH_INDEX, its index"]
fn code_documents_of_the_kernel() {
    use knav_index::code::extract::{file_docs, DocState};
    let files = files_with_definitions();
    let bytes: usize = files.iter().map(|f| f.1.len()).sum();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let mut times = Vec::new();
    let mut digests = Vec::new();
    for _ in 0..rounds {
        // A build worker's state lives from file to file, as here.
        let mut state = DocState::default();
        let mut digest = std::collections::hash_map::DefaultHasher::new();
        let mut cpu = 0.0;
        for (path, src, defs) in &files {
            let t = thread_cpu_seconds();
            let docs = file_docs(src, path, defs, &mut state);
            cpu += thread_cpu_seconds() - t;
            (&docs.defs, &docs.terms, &docs.path, &docs.bytes).hash(&mut digest);
        }
        times.push(cpu);
        digests.push(digest.finish());
    }
    assert!(digests.windows(2).all(|w| w[0] == w[1]), "{digests:x?}");
    println!(
        "file_docs: {} files, {} MB; CPU seconds per round: {:.3?}; digest {:016x}",
        files.len(),
        bytes >> 20,
        times,
        digests[0]
    );
}

#[test]
#[ignore = "a bench: needs KNAV_KERNEL_TREE, a kernel source tree"]
fn trigrams_of_the_kernel() {
    // The count of each file's distinct trigrams and an order-sensitive fold of their keys.
    bench("text::index trigram keys", |f| {
        knav_index::text::index::trigram_keys(f, |keys| {
            (
                keys.len(),
                keys.iter().fold(0u32, |h, &k| h.rotate_left(5) ^ k),
            )
        })
    });
}
