//! What C driver files say about hardware, checked on the real Linux 6.12 tree
//! (`KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12`): every `.c` and `.h` file read with
//! `knav_hw::driver_file`, counts printed, a dozen facts checked against the files, and the
//! compatibles compared with what the kernel's own `scripts/dtc/dt-extract-compatibles` prints
//! on the same tree (run here when `python3` is present; its output goes to a scratch file).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use knav_hw::cmacro_eval::Value;
use knav_hw::driver_file::{read_with, Context, DriverFile};

/// The tree, or `None` (the test then says so and fails: it runs only when asked).
fn tree() -> PathBuf {
    PathBuf::from(
        std::env::var("KNAV_KERNEL_TREE")
            .expect("set KNAV_KERNEL_TREE to a Linux 6.12 tree to run this ignored test"),
    )
}

/// The headers the context is built from: the ID macros' and tables' own, and every header
/// under `include/` that mentions `OF_DECLARE` (the family's wrappers).
fn context(root: &Path) -> Context {
    let mut paths: Vec<PathBuf> = [
        "include/linux/mod_devicetable.h",
        "include/linux/pci_ids.h",
        "include/linux/pci.h",
        "include/linux/usb.h",
        "include/linux/hid.h",
        "include/linux/mmc/sdio_func.h",
        "include/linux/mmc/sdio_ids.h",
        "include/linux/usb/input.h",
        "include/linux/of.h",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    let mut headers = Vec::new();
    walk(&root.join("include"), &mut |p| {
        if p.extension().is_some_and(|e| e == "h") {
            headers.push(p.to_path_buf());
        }
    });
    for h in headers {
        let bytes = std::fs::read(&h).unwrap_or_default();
        if memchr::memmem::find(&bytes, b"OF_DECLARE").is_some() && !paths.contains(&h) {
            paths.push(h);
        }
    }
    let bytes: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display())))
        .collect();
    Context::from_headers(bytes.iter().map(Vec::as_slice))
}

/// Every file under `dir`, hidden directories and symbolic links left out.
fn walk(dir: &Path, f: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(ft) = e.file_type() else { continue };
        let p = e.path();
        if ft.is_dir() && !e.file_name().to_string_lossy().starts_with('.') {
            walk(&p, f);
        } else if ft.is_file() {
            f(&p);
        }
    }
}

/// The headers a file includes with quotes, from its own directory.
fn local_headers(path: &Path, src: &[u8]) -> Vec<Vec<u8>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for at in memchr::memmem::find_iter(src, b"#include \"") {
        let rest = &src[at + 10..];
        let Some(end) = memchr::memchr2(b'"', b'\n', rest) else {
            continue;
        };
        if rest[end] == b'"' {
            let name = String::from_utf8_lossy(&rest[..end]);
            if let Ok(b) = std::fs::read(dir.join(name.as_ref())) {
                out.push(b);
            }
        }
    }
    out
}

/// Reads one file of the tree.
fn read_file(root: &Path, rel: &str, cx: &Context) -> DriverFile {
    let path = root.join(rel);
    let src = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {rel}: {e}"));
    let local = local_headers(&path, &src);
    let refs: Vec<&[u8]> = local.iter().map(Vec::as_slice).collect();
    read_with(&src, cx, &refs)
}

/// Every compatible a file's tables (of `of_device_id`), declarations and code name.
fn compatibles(f: &DriverFile) -> Vec<String> {
    let mut out = Vec::new();
    for t in f.tables.iter().filter(|t| t.kind == "of_device_id") {
        for e in &t.entries {
            if let Some(Value::Str(s)) = e.get("compatible") {
                if !s.is_empty() {
                    out.push(s.clone());
                }
            }
        }
    }
    out.extend(f.compatibles.iter().map(|c| c.compatible.clone()));
    out
}

#[test]
#[ignore = "needs the Linux tree; KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12"]
fn every_c_and_h_file() {
    let root = tree();
    let started = Instant::now();
    let cx = context(&root);
    let context_time = started.elapsed();
    let mut files = Vec::new();
    walk(&root, &mut |p| {
        if p.extension().is_some_and(|e| e == "c" || e == "h") {
            files.push(p.to_path_buf());
        }
    });
    let started = Instant::now();
    let mut ours: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut tables: BTreeMap<String, (usize, usize, BTreeSet<String>)> = BTreeMap::new();
    let (mut mdt_files, mut drivers, mut probes, mut props, mut declared, mut in_code) =
        (0, 0, 0, 0, 0, 0);
    for p in &files {
        let rel = p
            .strip_prefix(&root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned();
        let f = read_file(&root, &rel, &cx);
        for t in &f.tables {
            let k = tables.entry(t.kind.clone()).or_default();
            k.0 += 1;
            k.1 += t.entries.len();
            k.2.insert(rel.clone());
        }
        mdt_files += usize::from(f.tables.iter().any(|t| t.module_device_table.is_some()));
        drivers += f.drivers.len();
        probes += f.drivers.iter().filter(|d| d.probe.is_some()).count();
        props += f.properties.len();
        declared += f.compatibles.iter().filter(|c| c.declared).count();
        in_code += f.compatibles.iter().filter(|c| !c.declared).count();
        let c = compatibles(&f);
        if !c.is_empty() {
            ours.insert(rel, c);
        }
    }
    let elapsed = started.elapsed();
    println!(
        "{} files read in {:.2?} (context from headers: {:.2?})",
        files.len(),
        elapsed,
        context_time
    );
    println!("macros in the context: {}", cx.macros.len());
    for (kind, (n, entries, in_files)) in &tables {
        println!(
            "{kind}: {n} tables, {entries} entries, in {} files",
            in_files.len()
        );
    }
    println!("files with a MODULE_DEVICE_TABLE naming a table: {mdt_files}");
    println!("driver structures naming a table: {drivers} ({probes} with a probe)");
    println!("properties read by name: {props}");
    println!("compatibles declared (OF_DECLARE family): {declared}, matched in code: {in_code}");
    let pci = &tables["pci_device_id"];
    let usb = &tables["usb_device_id"];
    let acpi = &tables["acpi_device_id"];
    let of = &tables["of_device_id"];
    // `grep -rlE 'pci_device_id\s+\w+\s*\[' --include=*.[ch]` finds 944 files, 8 of them with
    // only a declaration or a parameter.
    assert!(pci.2.len() >= 930, "files with PCI tables: {}", pci.2.len());
    assert!(usb.2.len() >= 375, "files with USB tables: {}", usb.2.len());
    assert!(
        acpi.2.len() >= 530,
        "files with ACPI tables: {}",
        acpi.2.len()
    );
    assert!(of.0 >= 5400, "of_device_id tables: {}", of.0);
    compare_with_script(&root, &ours);
}

/// Runs `dt-extract-compatibles -H` on the tree and prints the differences by kind; asserts
/// that knav finds at least 99.5% of the script's (file, compatible) pairs.
fn compare_with_script(root: &Path, ours: &BTreeMap<String, Vec<String>>) {
    let Some(theirs) = script_output(root) else {
        println!("python3 is missing: the comparison with dt-extract-compatibles is skipped");
        return;
    };
    let pairs = |m: &BTreeMap<String, Vec<String>>, c_only: bool| -> BTreeSet<(String, String)> {
        m.iter()
            .filter(|(f, _)| !c_only || f.ends_with(".c"))
            .flat_map(|(f, cs)| cs.iter().map(move |c| (f.clone(), c.clone())))
            .collect()
    };
    let ours_c = pairs(ours, true);
    let theirs = pairs(&theirs, false);
    let missed: Vec<_> = theirs.difference(&ours_c).collect();
    let extra: Vec<_> = ours_c.difference(&theirs).collect();
    let strings = |s: &BTreeSet<(String, String)>| -> BTreeSet<String> {
        s.iter().map(|(_, c)| c.clone()).collect()
    };
    let (ours_s, theirs_s) = (strings(&ours_c), strings(&theirs));
    let all_ours: BTreeSet<String> = ours.values().flatten().cloned().collect();
    println!(
        "script: {} (file, compatible) pairs, {} distinct; knav in .c files: {} pairs, {} distinct; \
         knav in .c and .h: {} distinct",
        theirs.len(),
        theirs_s.len(),
        ours_c.len(),
        ours_s.len(),
        all_ours.len()
    );
    println!(
        "pairs the script has and knav not: {}; knav has and the script not: {}",
        missed.len(),
        extra.len()
    );
    println!(
        "distinct strings the script has and knav not: {}",
        theirs_s.difference(&all_ours).count()
    );
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let list = |v: &[&(String, String)]| -> String {
        v.iter().map(|(f, c)| format!("{f}: {c}\n")).collect()
    };
    std::fs::write(tmp.join("ids-missed.txt"), list(&missed)).expect("writing ids-missed.txt");
    std::fs::write(tmp.join("ids-extra.txt"), list(&extra)).expect("writing ids-extra.txt");
    println!(
        "both lists in full: {}",
        tmp.join("ids-{missed,extra}.txt").display()
    );
    for (f, c) in missed.iter().take(60) {
        println!("  missed {f}: {c}");
    }
    let mut by_dir: HashMap<&str, usize> = HashMap::new();
    for (f, _) in &extra {
        *by_dir.entry(f.split('/').next().unwrap_or("")).or_default() += 1;
    }
    println!("extra pairs by top directory: {by_dir:?}");
    for (f, c) in extra.iter().take(40) {
        println!("  extra {f}: {c}");
    }
    let found = theirs.len() - missed.len();
    assert!(
        found * 1000 >= theirs.len() * 995,
        "knav finds {found} of the script's {} pairs",
        theirs.len()
    );
}

/// The script's output as file → compatibles, written to a scratch file first.
fn script_output(root: &Path) -> Option<BTreeMap<String, Vec<String>>> {
    let out = Command::new("python3")
        .arg("scripts/dtc/dt-extract-compatibles")
        .arg("-H")
        .arg(".")
        .current_dir(root)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "the script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dt-extract-compatibles.txt");
    std::fs::write(&scratch, &out.stdout).expect("writing the script's output");
    println!("the script's output: {}", scratch.display());
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((file, list)) = line.split_once(": compatible(s): ") else {
            continue;
        };
        let file = file.strip_prefix("./").unwrap_or(file).to_string();
        map.entry(file)
            .or_default()
            .extend(list.split(' ').map(str::to_string));
    }
    Some(map)
}
