//! Which definition of a struct tag a file sees, when the tree defines the tag in more than one
//! place (each e1000 driver defines its own `struct e1000_mac_operations`; about 2,300 tags of
//! the kernel are defined in more than one file). C sees the definition its includes bring in;
//! knav approximates that by place: a file sees the definition that shares the most directories
//! with it (a driver's own header beside it), else the one global header (`include/`, its
//! architecture's `arch/X/include/`; outside `arch/`, `include/` before an architecture's own);
//! copies in `tools/`, `samples/` and `Documentation/` are seen only from there. Two definitions
//! alike by that measure decide nothing.

use knav_ctags::Kind;

use super::Query;

/// What a file sees of a struct tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// The tag has one defining file (or none indexed): nothing to tell apart.
    Only,
    /// The definition in this file.
    In(String),
    /// Several definitions are alike for the file: which one it sees is not known.
    Unsure,
}

/// The files defining struct (or union) `tag`, each once, in path order; for the type of a
/// named anonymous struct (`foo::ops`), those of the struct it is in.
pub fn defining_files(q: &Query<'_>, tag: &str) -> Vec<String> {
    let tag = tag.split(knav_c::indirect::ANONYMOUS).next().unwrap_or(tag);
    let mut files: Vec<String> = q
        .definitions(tag)
        .iter()
        .filter(|f| matches!(f.def.kind, Kind::Struct | Kind::Union))
        .map(|f| q.path(f.seg, f.def.file).to_string())
        .collect();
    files.sort_unstable();
    files.dedup();
    files
}

/// True for the copies of kernel code that `tools/`, `samples/` and `Documentation/` carry,
/// with headers of their own. (Not a driver's `selftests/` directory, which
/// `knav_index::rank` ranks as a copy: it includes the driver's own headers.)
pub(super) fn is_copy(path: &str) -> bool {
    path.starts_with("tools/") || path.starts_with("samples/") || path.starts_with("Documentation/")
}

/// The directories `a` and `b` share from the top.
fn shared_dirs(a: &str, b: &str) -> usize {
    fn dir(p: &str) -> &str {
        p.rsplit_once('/').map_or("", |(d, _)| d)
    }
    dir(a)
        .split('/')
        .zip(dir(b).split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

/// True when `header` is a global header `file` may include: `include/…`, or
/// `arch/X/include/…` of the file's own architecture (any, for a file outside `arch/`).
pub(super) fn global_for(header: &str, file: &str) -> bool {
    if header.starts_with("include/") {
        return true;
    }
    let Some(rest) = header.strip_prefix("arch/") else {
        return false;
    };
    let Some((arch, tail)) = rest.split_once('/') else {
        return false;
    };
    tail.starts_with("include/")
        && file
            .strip_prefix("arch/")
            .is_none_or(|f| f.split('/').next() == Some(arch))
}

/// Which of `files` (a tag's defining files, [`defining_files`]) the file at `path` sees.
pub fn seen_from(files: &[String], path: &str) -> Seen {
    // A definition in a `.c` file is that file's alone (hdlc_ppp.c's own `struct proto` is not
    // the one drivers/net/ethernet/ sees), and the file sees no other.
    let header = |f: &str| f.ends_with(".h");
    if !header(path) && files.iter().any(|f| f == path) {
        return Seen::In(path.to_string());
    }
    let copy = is_copy(path);
    let candidates: Vec<&String> = (files.iter())
        .filter(|f| is_copy(f) == copy && header(f))
        .collect();
    match candidates[..] {
        [] => return Seen::Only,
        [one] if files.len() == 1 => return Seen::In(one.clone()),
        _ => {}
    }
    let best = candidates
        .iter()
        .map(|f| shared_dirs(f, path))
        .max()
        .unwrap_or(0);
    let top: Vec<&&String> = candidates
        .iter()
        .filter(|f| shared_dirs(f, path) == best)
        .collect();
    let top: Vec<&&String> = if best == 0 || top.len() > 1 {
        let global: Vec<&&String> = top
            .iter()
            .copied()
            .filter(|f| global_for(f, path))
            .collect();
        // Outside `arch/`, the generic header before one architecture's own definition of
        // the tag (m68k's `struct clk_ops` beside the common clock framework's).
        let generic: Vec<&&String> = global
            .iter()
            .copied()
            .filter(|f| f.starts_with("include/"))
            .collect();
        match (global.is_empty(), generic.len()) {
            (true, _) => top,
            (false, 1) if !path.starts_with("arch/") => generic,
            (false, _) => global,
        }
    } else {
        top
    };
    match top[..] {
        [one] => Seen::In(one.to_string()),
        _ => Seen::Unsure,
    }
}

/// Whether code in `a` and code in `b` see the same definition of a tag defined in `files`:
/// `Some(true)` the same, `Some(false)` two different ones, `None` not known.
pub fn same_struct(files: &[String], a: &str, b: &str) -> Option<bool> {
    if files.len() < 2 {
        return Some(true);
    }
    match (seen_from(files, a), seen_from(files, b)) {
        (Seen::In(x), Seen::In(y)) => Some(x == y),
        (Seen::Only, _) | (_, Seen::Only) => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(f: &[&str]) -> Vec<String> {
        f.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_driver_sees_its_own_header_and_not_its_siblings() {
        let e1000 = files(&[
            "drivers/net/ethernet/intel/e1000e/hw.h",
            "drivers/net/ethernet/intel/igb/e1000_hw.h",
            "drivers/net/ethernet/intel/igbvf/vf.h",
        ]);
        assert_eq!(
            same_struct(
                &e1000,
                "drivers/net/ethernet/intel/igb/e1000_mac.c",
                "drivers/net/ethernet/intel/e1000e/phy.c"
            ),
            Some(false)
        );
        assert_eq!(
            same_struct(
                &e1000,
                "drivers/net/ethernet/intel/igb/e1000_mac.c",
                "drivers/net/ethernet/intel/igb/igb_main.c"
            ),
            Some(true)
        );
        // Outside the drivers, nothing tells the three apart.
        assert_eq!(seen_from(&e1000, "net/core/dev.c"), Seen::Unsure);
    }

    #[test]
    fn a_struct_defined_in_a_c_file_is_seen_only_from_that_file() {
        // chtls_io.c's `tcp_prot.recvmsg(…)` took drivers/net/wan/hdlc_ppp.c's own `struct
        // proto` (two directories shared) for the one it sees, and lost tcp_recvmsg.
        let proto = files(&["drivers/net/wan/hdlc_ppp.c", "include/net/sock.h"]);
        assert_eq!(
            seen_from(&proto, "drivers/net/ethernet/chelsio/chtls/chtls_io.c"),
            Seen::In("include/net/sock.h".into())
        );
        assert_eq!(
            seen_from(&proto, "drivers/net/wan/hdlc_ppp.c"),
            Seen::In("drivers/net/wan/hdlc_ppp.c".into())
        );
        assert_eq!(
            same_struct(
                &proto,
                "drivers/net/wan/hdlc_cisco.c",
                "net/ipv4/tcp_ipv4.c"
            ),
            Some(true)
        );
    }

    #[test]
    fn the_global_header_wins_over_a_copy_and_another_directorys_header() {
        let ops = files(&[
            "drivers/foo/ops.h",
            "include/linux/ops.h",
            "tools/include/linux/ops.h",
        ]);
        assert_eq!(
            seen_from(&ops, "fs/read_write.c"),
            Seen::In("include/linux/ops.h".into())
        );
        assert_eq!(
            seen_from(&ops, "drivers/foo/main.c"),
            Seen::In("drivers/foo/ops.h".into())
        );
        assert_eq!(
            seen_from(&ops, "tools/perf/a.c"),
            Seen::In("tools/include/linux/ops.h".into())
        );
        let arch = files(&[
            "arch/x86/include/asm/smp.h",
            "arch/powerpc/include/asm/smp.h",
        ]);
        assert_eq!(
            seen_from(&arch, "arch/x86/kernel/smp.c"),
            Seen::In("arch/x86/include/asm/smp.h".into())
        );
        assert_eq!(seen_from(&arch, "kernel/smp.c"), Seen::Unsure);
        let clk = files(&[
            "arch/m68k/include/asm/mcfclk.h",
            "include/linux/clk-provider.h",
        ]);
        assert_eq!(
            seen_from(&clk, "drivers/clk/clk-gate.c"),
            Seen::In("include/linux/clk-provider.h".into())
        );
        assert_eq!(
            seen_from(&clk, "arch/m68k/coldfire/clk.c"),
            Seen::In("arch/m68k/include/asm/mcfclk.h".into())
        );
        assert_eq!(
            same_struct(&files(&["include/linux/fs.h"]), "a/b.c", "c/d.c"),
            Some(true)
        );
    }
}
