//! The `knav` binary: everything lives in the library; this only hands over the arguments.

#[global_allocator]
static ALLOC: knav::alloc::Alloc = knav::alloc::Alloc;

fn main() {
    // cscope's interface (`knav::cscope`): `knav cscope ARGS`, or knav run through a link named
    // `cscope` (the name Vim's and Neovim's cscope plugins run).
    let mut args = std::env::args_os();
    let program = args.next().map(std::path::PathBuf::from);
    let args: Vec<std::ffi::OsString> = args.collect();
    if program.is_some_and(|p| p.file_name().is_some_and(|n| n == "cscope")) {
        std::process::exit(knav::cscope::main(&args));
    }
    if args.first().is_some_and(|a| a == "cscope") {
        std::process::exit(knav::cscope::main(&args[1..]));
    }
    std::process::exit(knav::cli::main());
}
