//! Command-line arguments and dispatch (temporary: index only).
use std::path::PathBuf;

/// Runs the CLI; returns the exit code.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().collect();
    let root = PathBuf::from(args.get(2).cloned().unwrap_or(".".into()));
    let root = match crate::walk::resolve_root(&root) { Ok(r) => r, Err(e) => { eprintln!("{e}"); return 1; } };
    let dir = crate::index::store::index_dir(&root, None);
    let mut p = crate::progress::Progress::stderr();
    match crate::index::update(&root, &dir, args.get(3).is_some(), &Default::default(), &mut p) {
        Ok(r) => { println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default()); 0 }
        Err(e) => { eprintln!("error: {e}"); 1 }
    }
}
