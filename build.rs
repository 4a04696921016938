//! Build script of the knav package: a release binary's debug sections (its line tables, see
//! `[profile.release]` in Cargo.toml) are compressed by the linker, so that a panic's backtrace
//! and a profiler still name each function with its file and line without the binary's weight.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    // GNU ld, gold and lld all take the flag; std's backtraces read zlib-compressed sections.
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("PROFILE") == "release" {
        println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    }
}
