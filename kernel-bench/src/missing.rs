//! The audit of missing definitions (issue 46): every name the index holds that is referenced
//! in at least [`MIN_FILES`] files outside `tools/` and defined in none of them (no definition
//! record, no `#define`), read from the index's names and postings, each with the reason knav
//! has no definition of it; and names cscope defines in kernel code, each of which knav must
//! define too.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use knav_c::scan::Role;
use knav_index::segment::Postings;
use knav_index::store::Snapshot;

/// Files outside `tools/` a name must be referenced in to be audited.
pub const MIN_FILES: u64 = 10;

/// Names of cscope's sample looked up in knav.
pub const CSCOPE_SAMPLE: usize = 200;

/// A name referenced widely with no definition, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Missing {
    pub name: String,
    /// Files outside `tools/` that reference it.
    pub files: u64,
    pub reason: &'static str,
}

/// The audit's result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Audit {
    /// Names referenced in at least [`MIN_FILES`] files outside `tools/`.
    pub audited: u64,
    /// Those without a definition, most referenced first.
    pub missing: Vec<Missing>,
    /// cscope's sample: names looked up, and those knav does not define.
    pub cscope: Option<(usize, Vec<String>)>,
    /// Seconds the audit took.
    pub seconds: f64,
}

/// What a file's path says about the names in it.
const LIVE: u8 = 1;
const ASM_OFFSETS: u8 = 2;
const LINKER_SCRIPT: u8 = 4;
const ASSEMBLY: u8 = 8;
/// A file of the kernel, not of a user-space program (`scripts/`, `samples/`, `usr/`).
const KERNEL: u8 = 16;

fn file_class(path: &str) -> u8 {
    if path.starts_with("tools/") {
        return 0;
    }
    let mut c = LIVE;
    if path.contains("asm-offsets") {
        c |= ASM_OFFSETS;
    }
    if !(path.starts_with("scripts/") || path.starts_with("samples/") || path.starts_with("usr/")) {
        c |= KERNEL;
    }
    if path.contains(".lds") {
        c |= LINKER_SCRIPT;
    } else if path.ends_with(".S") {
        c |= ASSEMBLY;
    }
    c
}

/// Names of the compiler's and of Kbuild's command line: predefined, never defined in a file.
const PREDEFINED: &[&str] = &[
    "__func__",
    "__FUNCTION__",
    "__LINE__",
    "__FILE__",
    "__BASE_FILE__",
    "__COUNTER__",
    "__DATE__",
    "__TIME__",
    "__VA_ARGS__",
    "__VA_OPT__",
    "__has_attribute",
    "__has_builtin",
    "__has_include",
    "__has_feature",
    "__GNUC__",
    "__GNUC_MINOR__",
    "__GNUC_PATCHLEVEL__",
    "__clang__",
    "__clang_major__",
    "__OPTIMIZE__",
    "__STDC__",
    "__STDC_VERSION__",
    "__CHECKER__",
    "__KERNEL__",
    "__ASSEMBLY__",
    "__ASSEMBLER__",
    "__LP64__",
    "__x86_64__",
    "__i386__",
    "__aarch64__",
    "__arm__",
    "__powerpc64__",
    "__powerpc__",
    "__mips__",
    "__s390x__",
    "__riscv",
    "__BYTE_ORDER__",
    "__ORDER_LITTLE_ENDIAN__",
    "__ORDER_BIG_ENDIAN__",
    "__CHAR_BIT__",
    "__LITTLE_ENDIAN__",
    "__BIG_ENDIAN__",
    "__ARMEB__",
    "__ARM_ARCH",
    "__thumb2__",
    "__SANITIZE_ADDRESS__",
    "__SANITIZE_THREAD__",
    "MODULE",
    "KBUILD_MODNAME",
    "KBUILD_BASENAME",
    "KBUILD_MODFILE",
    "__DISABLE_EXPORTS",
    "__NO_FORTIFY",
    "__BOOT_COMPRESSED",
    "__GENKSYMS__",
    "__CHECK_ENDIAN__",
    "__alignof",
    "__label__",
    "__int128",
    "__auto_type",
    "offsetof",
    "va_list",
    "va_start",
    "va_end",
    "va_arg",
    "va_copy",
];

/// Names of the headers Kbuild generates (include/generated/, include/config/).
const GENERATED: &[&str] = &[
    "UTS_RELEASE",
    "UTS_VERSION",
    "UTS_MACHINE",
    "LINUX_COMPILE_BY",
    "LINUX_COMPILE_HOST",
    "LINUX_COMPILER",
    "LINUX_VERSION_CODE",
    "LINUX_VERSION_MAJOR",
    "LINUX_VERSION_PATCHLEVEL",
    "LINUX_VERSION_SUBLEVEL",
    "MAX_NR_ZONES",
    "NR_PAGEFLAGS",
    "SPINLOCK_SIZE",
    "NR_CPUS_BITS",
    "KCONFIG_CONFIG",
];

/// The reason a name has no definition in the tree, from the name and the files it is in.
fn reason(name: &str, classes: u8) -> &'static str {
    if name.starts_with("CONFIG_") {
        return "Kconfig symbol: include/generated/autoconf.h, generated";
    }
    if name.starts_with("__builtin_")
        || name.starts_with("__atomic_")
        || name.starts_with("__sync_")
        || name.starts_with("__SIZEOF_")
        || name.starts_with("__GCC_")
        || name.starts_with("__INT")
        || name.starts_with("__UINT")
        || PREDEFINED.contains(&name)
    {
        return "compiler builtin, or predefined by the compiler or Kbuild's command line";
    }
    let b = name.as_bytes();
    if b.len() > 4
        && name.starts_with("__")
        && name.ends_with("__")
        && !name[2..name.len() - 2].contains("__")
    {
        return "predefined by the compiler (a target or language macro)";
    }
    if GENERATED.contains(&name) {
        return "a generated header (include/generated/: bounds.h, utsrelease.h, version.h…)";
    }
    if name.starts_with("__NR_") || name.starts_with("__NR3264_") {
        return "syscall number: the generated unistd headers (syscall.tbl)";
    }
    if classes & ASM_OFFSETS != 0 {
        return "asm-offsets: generated asm-offsets.h (DEFINE/OFFSET in asm-offsets.c)";
    }
    if classes & LINKER_SCRIPT != 0 {
        return "linker-script symbol (vmlinux.lds)";
    }
    if classes & ASSEMBLY != 0 {
        return "assembler symbol (a label or .set in a .S file)";
    }
    if classes & KERNEL == 0 {
        return "user-space program's name (scripts/, samples/, usr/: libc, libbpf)";
    }
    if b.len() > 1 && b[0] == b'_' && b[1] != b'_' {
        return "a part of a name pasted with ## (`x##_show`), not a name";
    }
    UNEXPLAINED
}

/// The reason of a name none of the rules explain.
const UNEXPLAINED: &str = "unexplained";

/// The reason of each of `names` (name, a file that holds it, relative to `tree`) that ctags,
/// asked for locals, parameters, labels and macro parameters only, reports in that file.
fn scoped_kinds(tree: &Path, names: &[(String, String)]) -> HashMap<String, &'static str> {
    let mut files: Vec<&str> = names.iter().map(|(_, f)| f.as_str()).collect();
    files.sort_unstable();
    files.dedup();
    let wanted: std::collections::HashSet<(&str, &str)> = names
        .iter()
        .map(|(n, f)| (n.as_str(), f.as_str()))
        .collect();
    let mut out = HashMap::new();
    let child = Command::new("ctags")
        .current_dir(tree)
        .args([
            "--options=NONE",
            "--language-force=C",
            "--kinds-C=lzLD",
            "--fields=K",
            "--excmd=number",
            "-o",
            "-",
            "-L",
            "-",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return out;
    };
    let list: String = files.iter().map(|f| format!("{f}\n")).collect();
    if let Some(mut stdin) = child.stdin.take() {
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut stdin, list.as_bytes());
        });
    }
    let Ok(done) = child.wait_with_output() else {
        return out;
    };
    for line in String::from_utf8_lossy(&done.stdout).lines() {
        let c: Vec<&str> = line.split('\t').collect();
        let (Some(name), Some(path), Some(kind)) = (c.first(), c.get(1), c.last()) else {
            continue;
        };
        if !wanted.contains(&(*name, *path)) {
            continue;
        }
        let reason = match *kind {
            "label" => "goto label: scoped in a function, not indexed (nor by cscope)",
            "local" => "local variable: scoped in a function, not indexed (nor by cscope)",
            "parameter" => "function parameter: scoped, not indexed (nor by cscope)",
            "macroparam" => "macro parameter: scoped in a #define, not indexed",
            _ => continue,
        };
        out.entry(name.to_string()).or_insert(reason);
    }
    out
}

/// The audit of the index at `index_dir` of `tree`, and cscope's sample when `cscope_out` (a
/// cross-reference cscope built of the tree, `cscope -b -q -k`) is given.
pub fn measure(tree: &Path, index_dir: &Path, cscope_out: Option<&Path>) -> Result<Audit, String> {
    let started = std::time::Instant::now();
    let snap = Snapshot::open(tree, index_dir)
        .map_err(|e| format!("the index at {}: {e}", index_dir.display()))?
        .ok_or_else(|| format!("no index at {}; build it first", index_dir.display()))?;
    // Per name: files outside tools/ referencing it, the classes of those files, defined, the
    // first of those files.
    let mut names: HashMap<String, (u64, u8, bool, Option<String>)> = HashMap::new();
    for (s, seg) in snap.segments.iter().enumerate() {
        let classes: Vec<u8> = (0..seg.file_count())
            .map(|f| {
                if snap.is_live(s, f) {
                    file_class(seg.file_path(f))
                } else {
                    0
                }
            })
            .collect();
        let class = |f: u32| classes.get(f as usize).copied().unwrap_or(0);
        for (shard, fst) in seg.names().iter().enumerate() {
            let mut stream = fst.stream();
            while let Some((key, off)) = fst::Streamer::next(&mut stream) {
                let entry = seg.entry_at(shard, off);
                if entry.files < MIN_FILES && !names.contains_key(key_str(key)) {
                    continue;
                }
                let defined = entry
                    .defs
                    .iter()
                    .any(|&d| class(seg.def_at(d).file) & LIVE != 0);
                let row = names.entry(key_str(key).to_string()).or_default();
                row.2 |= defined;
                let mut last = u32::MAX;
                for p in Postings::new(entry.postings) {
                    let c = class(p.file);
                    if c & LIVE == 0 {
                        continue;
                    }
                    row.2 |= p.role == Role::MacroDef;
                    if p.file != last {
                        row.0 += 1;
                        row.1 |= c;
                        last = p.file;
                        if row.3.is_none() && !row.2 {
                            row.3 = Some(seg.file_path(p.file).to_string());
                        }
                    }
                }
            }
        }
    }
    let mut audit = Audit::default();
    let mut first_files: Vec<(String, String)> = Vec::new();
    let mut audited: Vec<String> = Vec::new();
    for (name, (files, classes, defined, first)) in names {
        if files < MIN_FILES {
            continue;
        }
        audit.audited += 1;
        audited.push(name.clone());
        if !defined {
            let reason = reason(&name, classes);
            if let (UNEXPLAINED, Some(f)) = (reason, first) {
                first_files.push((name.clone(), f));
            }
            audit.missing.push(Missing {
                name,
                files,
                reason,
            });
        }
    }
    // What ctags says of the rest in the first file holding each: a local, a parameter, a
    // label or a macro's parameter is scoped, and no tool indexes it as a definition.
    let scoped = scoped_kinds(tree, &first_files);
    for m in &mut audit.missing {
        if let Some(r) = scoped.get(&m.name) {
            m.reason = r;
        }
    }
    audit
        .missing
        .sort_by(|a, b| b.files.cmp(&a.files).then(a.name.cmp(&b.name)));
    if let Some(out) = cscope_out {
        audited.sort_unstable();
        audit.cscope = Some(cscope_sample(tree, out, &snap, &audited)?);
    }
    audit.seconds = started.elapsed().as_secs_f64();
    Ok(audit)
}

fn key_str(key: &[u8]) -> &str {
    std::str::from_utf8(key).unwrap_or("")
}

/// Up to [`CSCOPE_SAMPLE`] names cscope defines in kernel code (outside `tools/`), asked of
/// cscope (`1NAME`, `-L1`, in one line-mode process) for every n-th of the `audited` names
/// (sorted), and those of them knav defines nowhere outside `tools/`.
fn cscope_sample(
    tree: &Path,
    out: &Path,
    snap: &Snapshot,
    audited: &[String],
) -> Result<(usize, Vec<String>), String> {
    let step = (audited.len() / (3 * CSCOPE_SAMPLE)).max(1);
    let asked: Vec<&str> = audited.iter().step_by(step).map(String::as_str).collect();
    let mut child = Command::new("cscope")
        .current_dir(tree)
        .args(["-d", "-l", "-f"])
        .arg(out)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cscope: {e}"))?;
    let queries: String = asked.iter().map(|n| format!("1{n}\n")).collect();
    if let Some(mut stdin) = child.stdin.take() {
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut stdin, queries.as_bytes());
        });
    }
    let done = child
        .wait_with_output()
        .map_err(|e| format!("cscope: {e}"))?;
    let text = String::from_utf8_lossy(&done.stdout);
    // One answer per query after each `>> ` prompt: `cscope: N lines` and its N lines, or a
    // line saying it found nothing.
    let mut sample = Vec::new();
    for (name, answer) in asked.iter().zip(text.split(">> ").skip(1)) {
        let defined_in_kernel = answer
            .lines()
            .skip(1)
            .filter_map(|l| l.split(' ').next())
            .any(|path| !path.starts_with("tools/") && !path.starts_with("./tools/"));
        if answer.starts_with("cscope: ") && defined_in_kernel {
            sample.push(*name);
            if sample.len() == CSCOPE_SAMPLE {
                break;
            }
        }
    }
    if sample.is_empty() {
        return Err("cscope defines none of the names asked".into());
    }
    let missing = sample
        .iter()
        .filter(|n| !knav_defines(snap, n))
        .map(|n| n.to_string())
        .collect();
    Ok((sample.len(), missing))
}

/// True when a live file outside `tools/` has a definition or `#define` of `name`.
fn knav_defines(snap: &Snapshot, name: &str) -> bool {
    snap.segments.iter().enumerate().any(|(s, seg)| {
        let Some(entry) = seg.lookup(name.as_bytes()) else {
            return false;
        };
        let live = |f: u32| snap.is_live(s, f) && !seg.file_path(f).starts_with("tools/");
        entry.defs.iter().any(|&d| live(seg.def_at(d).file))
            || Postings::new(entry.postings).any(|p| p.role == Role::MacroDef && live(p.file))
    })
}

/// The report's section.
pub fn section(a: &Audit) -> String {
    use std::fmt::Write;
    let mut by_reason: Vec<(&str, usize)> = Vec::new();
    for m in &a.missing {
        match by_reason.iter_mut().find(|r| r.0 == m.reason) {
            Some(r) => r.1 += 1,
            None => by_reason.push((m.reason, 1)),
        }
    }
    by_reason.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
    let mut o = format!(
        "\n## Missing definitions: the audit\n\n{} names are referenced in {MIN_FILES} files or \
         more outside tools/; {} of them have no definition (no record, no `#define`) outside \
         tools/ (audit: {:.1} s). Per reason:\n\n| reason | names |\n|---|---|\n",
        a.audited,
        a.missing.len(),
        a.seconds
    );
    for (r, n) in &by_reason {
        let _ = writeln!(o, "| {r} | {n} |");
    }
    if let Some((sampled, missing)) = &a.cscope {
        let _ = writeln!(
            o,
            "\ncscope's sample: {sampled} names cscope defines in kernel code (`cscope -L1` of \
             every n-th audited name), {} of them without a definition in knav{}",
            missing.len(),
            if missing.is_empty() {
                String::new()
            } else {
                format!(": {}", missing.join(", "))
            }
        );
    }
    let _ = writeln!(o, "\n| name | files | reason |\n|---|---|---|");
    for m in &a.missing {
        let _ = writeln!(o, "| `{}` | {} | {} |", m.name, m.files, m.reason);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The audit on the tree of `KNAV_KERNEL_TREE` and the index of `KNAV_INDEX_DIR`, printed
    /// (with cscope's sample when `KNAV_CSCOPE_OUT` names its cross-reference).
    #[test]
    #[ignore = "needs KNAV_KERNEL_TREE and KNAV_INDEX_DIR"]
    fn audit_of_the_kernel() {
        let var = |v: &str| std::env::var_os(v).map(std::path::PathBuf::from);
        let (tree, index) = (
            var("KNAV_KERNEL_TREE").unwrap(),
            var("KNAV_INDEX_DIR").unwrap(),
        );
        let cscope = var("KNAV_CSCOPE_OUT");
        let a = measure(&tree, &index, cscope.as_deref()).unwrap();
        println!("{}", section(&a));
    }

    #[test]
    fn reasons_follow_the_name_and_the_files() {
        assert_eq!(
            reason("CONFIG_SMP", LIVE),
            "Kconfig symbol: include/generated/autoconf.h, generated"
        );
        assert!(reason("__builtin_expect", LIVE).starts_with("compiler builtin"));
        assert!(reason("TI_flags", LIVE | ASM_OFFSETS).starts_with("asm-offsets"));
        assert!(reason("_stext", LIVE | LINKER_SCRIPT).starts_with("linker-script"));
        assert_eq!(reason("some_name", LIVE | KERNEL), "unexplained");
        assert!(reason("strerror", LIVE).starts_with("user-space"));
        assert!(reason("__sparc__", LIVE | KERNEL).starts_with("predefined"));
        assert!(reason("_show", LIVE | KERNEL).starts_with("a part of a name"));
        assert_eq!(file_class("tools/x.c"), 0);
        assert_eq!(
            file_class("arch/x86/kernel/asm-offsets.c"),
            LIVE | KERNEL | ASM_OFFSETS
        );
        assert_eq!(file_class("scripts/mod/modpost.c"), LIVE);
        assert_eq!(
            file_class("arch/x86/kernel/vmlinux.lds.S"),
            LIVE | KERNEL | LINKER_SCRIPT
        );
    }
}
