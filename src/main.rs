//! The `knav` binary: everything lives in the library; this only hands over the arguments.

#[global_allocator]
static ALLOC: knav::alloc::Alloc = knav::alloc::Alloc;

fn main() {
    std::process::exit(knav::cli::main());
}
