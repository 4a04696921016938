//! What C driver files say about hardware, checked on the real Linux 6.12 tree
//! (`KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12`): every `.c` and `.h` file read with
//! `knav_hw::driver_file`, counts printed, a dozen facts checked against the files, and the
//! compatibles compared with what the kernel's own `scripts/dtc/dt-extract-compatibles` prints
//! on the same tree (run here when `python3` is present; its output goes to a scratch file).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use knav_hw::cmacro_eval::Value;
use knav_hw::driver_file::{read_with_headers, Context, DriverFile, LocalHeader};

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
    let mut paths: Vec<PathBuf> = knav_hw::driver_file::CONTEXT_HEADERS
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

/// A local header read once: its `#define`s for the reader and the headers it includes with
/// quotes.
struct Header {
    local: LocalHeader,
    includes: Vec<PathBuf>,
}

/// Reads files of the tree with the local headers each includes, each header read and lexed
/// once (as the index does), timing the reader's own work.
struct Reader<'c> {
    root: PathBuf,
    cx: &'c Context,
    /// Every header met, `None` when it could not be read.
    headers: HashMap<PathBuf, Option<Header>>,
    /// Time spent in `read_with_headers`.
    reading: Duration,
    /// Time spent in `LocalHeader::new`.
    making_headers: Duration,
}

impl<'c> Reader<'c> {
    fn new(root: &Path, cx: &'c Context) -> Self {
        Self {
            root: root.to_path_buf(),
            cx,
            headers: HashMap::new(),
            reading: Duration::ZERO,
            making_headers: Duration::ZERO,
        }
    }

    /// Reads one file of the tree.
    fn read(&mut self, rel: &str) -> DriverFile {
        let path = self.root.join(rel);
        let src = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {rel}: {e}"));
        let mut seen = BTreeSet::new();
        let mut local = Vec::new();
        self.quoted(&includes(&path, &src), 3, &mut seen, &mut local);
        let refs: Vec<&LocalHeader> = local
            .iter()
            .filter_map(|p| self.headers.get(p)?.as_ref())
            .map(|h| &h.local)
            .collect();
        let started = Instant::now();
        let f = read_with_headers(&src, self.cx, &refs);
        self.reading += started.elapsed();
        f
    }

    /// Adds the headers of `includes` to `out` with those they include (`depth` levels, each
    /// once), innermost first.
    fn quoted(
        &mut self,
        includes: &[PathBuf],
        depth: u32,
        seen: &mut BTreeSet<PathBuf>,
        out: &mut Vec<PathBuf>,
    ) {
        if depth == 0 {
            return;
        }
        for header in includes {
            if !seen.insert(header.clone()) {
                continue;
            }
            let inner = match self.header(header) {
                Some(h) => h.includes.clone(),
                None => continue,
            };
            self.quoted(&inner, depth - 1, seen, out);
            out.push(header.clone());
        }
    }

    /// The header at `path`, read and lexed on first use.
    fn header(&mut self, path: &Path) -> Option<&Header> {
        if !self.headers.contains_key(path) {
            let header = std::fs::read(path).ok().map(|b| {
                let started = Instant::now();
                let local = LocalHeader::new(&b, self.cx);
                self.making_headers += started.elapsed();
                Header {
                    local,
                    includes: includes(path, &b),
                }
            });
            self.headers.insert(path.to_path_buf(), header);
        }
        self.headers.get(path)?.as_ref()
    }
}

/// The headers `src` (at `path`) includes with quotes, from its own directory.
fn includes(path: &Path, src: &[u8]) -> Vec<PathBuf> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for at in memchr::memmem::find_iter(src, b"#include \"") {
        let rest = &src[at + 10..];
        let Some(end) = memchr::memchr2(b'"', b'\n', rest) else {
            continue;
        };
        if rest[end] == b'"' {
            out.push(dir.join(String::from_utf8_lossy(&rest[..end]).as_ref()));
        }
    }
    out
}

/// This thread's user CPU time so far (`/proc/thread-self/stat`, in clock ticks of 10 ms):
/// on a machine shared with other work, steadier than the wall clock.
fn thread_user_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    // Field 14 (utime) is the 12th after the name's closing parenthesis.
    let ticks: u64 = after_name
        .split_whitespace()
        .nth(11)
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// Reads one file of the tree.
fn read_file(root: &Path, rel: &str, cx: &Context) -> DriverFile {
    Reader::new(root, cx).read(rel)
}

/// Every compatible a file's tables (of `of_device_id`), declarations and code name, with
/// how: `table NAME:LINE` or `FUNCTION:LINE`.
fn compatibles(f: &DriverFile) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for t in f.tables.iter().filter(|t| t.kind == "of_device_id") {
        for e in &t.entries {
            if let Some(Value::Str(s)) = e.get("compatible") {
                if !s.is_empty() {
                    out.push((s.clone(), format!("table {}:{}", t.name, e.line)));
                }
            }
        }
    }
    out.extend(
        f.compatibles
            .iter()
            .map(|c| (c.compatible.clone(), format!("{}:{}", c.via, c.line))),
    );
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
    // KNAV_HW_DUMP=path writes every file's findings there, to diff two builds' outputs.
    let mut dump = std::env::var_os("KNAV_HW_DUMP").map(|p| {
        std::io::BufWriter::new(std::fs::File::create(&p).expect("creating KNAV_HW_DUMP"))
    });
    let mut reader = Reader::new(&root, &cx);
    let started = Instant::now();
    let cpu_started = thread_user_time();
    let mut ours: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut how: HashMap<(String, String), String> = HashMap::new();
    let mut unexpanded = 0;
    let mut ours_d: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut declared_anywhere: BTreeSet<String> = BTreeSet::new();
    // Per ID field: entries where it is a number, where it is text, where it is not set.
    let mut resolved: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut any_mdt_files = 0;
    let mut other_mdt: BTreeMap<String, usize> = BTreeMap::new();
    let mut tables: BTreeMap<String, (usize, usize, BTreeSet<String>)> = BTreeMap::new();
    let (mut mdt_files, mut drivers, mut probes, mut props, mut declared, mut in_code) =
        (0, 0, 0, 0, 0, 0);
    for p in &files {
        let rel = p
            .strip_prefix(&root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned();
        let f = reader.read(&rel);
        if let Some(dump) = dump.as_mut() {
            if f != DriverFile::default() {
                writeln!(dump, "{rel}: {f:?}").expect("writing KNAV_HW_DUMP");
            }
        }
        for t in &f.tables {
            let id_fields: &[&str] = match t.kind.as_str() {
                "pci_device_id" => &["vendor", "device"],
                "usb_device_id" => &["idVendor", "idProduct"],
                "hid_device_id" => &["vendor", "product"],
                "sdio_device_id" => &["vendor", "device"],
                _ => &[],
            };
            for e in &t.entries {
                for name in id_fields {
                    let r = resolved.entry(format!("{}.{name}", t.kind)).or_default();
                    match e.get(name) {
                        Some(Value::Int(_)) => r.0 += 1,
                        Some(_) => {
                            r.1 += 1;
                            if r.1 <= 3 {
                                println!(
                                    "  unresolved {}.{name} at {rel}:{}: {:?}",
                                    t.kind,
                                    e.line,
                                    e.get(name)
                                );
                            }
                        }
                        None => r.2 += 1,
                    }
                }
            }
            unexpanded += t.entries.iter().filter(|e| e.unexpanded.is_some()).count();
            let k = tables.entry(t.kind.clone()).or_default();
            k.0 += 1;
            k.1 += t.entries.len();
            k.2.insert(rel.clone());
        }
        mdt_files += usize::from(f.tables.iter().any(|t| t.module_device_table.is_some()));
        any_mdt_files += usize::from(!f.module_device_tables.is_empty());
        for (bus, name, _) in &f.module_device_tables {
            if !f.tables.iter().any(|t| t.name == *name) {
                *other_mdt.entry(bus.clone()).or_default() += 1;
                if bus.ends_with("_device_id")
                    || ["of", "pci", "acpi", "usb"].contains(&bus.as_str())
                {
                    println!("  MODULE_DEVICE_TABLE({bus}, {name}) with no table: {rel}");
                }
            }
        }
        drivers += f.drivers.len();
        probes += f.drivers.iter().filter(|d| d.probe.is_some()).count();
        props += f.properties.len();
        declared += f.compatibles.iter().filter(|c| c.declared).count();
        in_code += f.compatibles.iter().filter(|c| !c.declared).count();
        let d = driver_matched(&f);
        if !d.is_empty() {
            ours_d.insert(rel.clone(), d);
        }
        declared_anywhere.extend(
            f.compatibles
                .iter()
                .filter(|c| c.declared && !c.via.ends_with("_DRIVER"))
                .map(|c| c.compatible.clone()),
        );
        let c = compatibles(&f);
        if !c.is_empty() {
            for (compat, h) in &c {
                how.entry((rel.clone(), compat.clone()))
                    .or_insert_with(|| h.clone());
            }
            ours.insert(rel, c.into_iter().map(|(compat, _)| compat).collect());
        }
    }
    let elapsed = started.elapsed();
    let cpu = thread_user_time().saturating_sub(cpu_started);
    println!(
        "{} files read in {:.2?}, {:.2?} of it in the reader (read_with_headers) and {:.2?} in \
         LocalHeader::new for {} local headers, each once; user CPU time {:.2?} (context from \
         headers: {:.2?})",
        files.len(),
        elapsed,
        reader.reading,
        reader.making_headers,
        reader.headers.values().flatten().count(),
        cpu,
        context_time
    );
    println!("macros in the context: {}", cx.macros.len());
    for (kind, (n, entries, in_files)) in &tables {
        println!(
            "{kind}: {n} tables, {entries} entries, in {} files",
            in_files.len()
        );
    }
    println!(
        "files with a MODULE_DEVICE_TABLE: {any_mdt_files}; naming a *_device_id table of the \
         file: {mdt_files}"
    );
    println!(
        "MODULE_DEVICE_TABLEs naming no *_device_id table of their file, by bus: {other_mdt:?}"
    );
    println!("driver structures naming a table: {drivers} ({probes} with a probe)");
    println!("entries of a macro no header in the context defines: {unexpanded}");
    for (field, (num, text, unset)) in &resolved {
        println!("{field}: a number in {num} entries, text in {text}, unset in {unset}");
    }
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
    compare_with_script(&root, &ours, &how);
    compare_driver_mode(&root, &ours_d, &declared_anywhere);
}

/// Runs `dt-extract-compatibles -H` on the tree and prints the differences by kind; asserts
/// that knav finds at least 99.5% of the script's (file, compatible) pairs.
fn compare_with_script(
    root: &Path,
    ours: &BTreeMap<String, Vec<String>>,
    how: &HashMap<(String, String), String>,
) {
    let Some(theirs) = script_output(root, false) else {
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
    let extra_how: String = extra
        .iter()
        .map(|p| {
            format!(
                "{}: {} ({})\n",
                p.0,
                p.1,
                how.get(p).map_or("", String::as_str)
            )
        })
        .collect();
    std::fs::write(tmp.join("ids-extra.txt"), extra_how).expect("writing ids-extra.txt");
    let mut by_how: BTreeMap<String, usize> = BTreeMap::new();
    for p in &extra {
        let h = how.get(*p).map_or("", String::as_str);
        let kind = h.split([' ', ':']).next().unwrap_or("");
        *by_how.entry(kind.to_string()).or_default() += 1;
    }
    println!("extra pairs by how knav found them: {by_how:?}");
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
fn script_output(root: &Path, driver_mode: bool) -> Option<BTreeMap<String, Vec<String>>> {
    let out = Command::new("python3")
        .arg("scripts/dtc/dt-extract-compatibles")
        .arg("-H")
        .args(driver_mode.then_some("-d"))
        .arg(".")
        .current_dir(root)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "the script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let name = if driver_mode {
        "dt-extract-compatibles-d.txt"
    } else {
        "dt-extract-compatibles.txt"
    };
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
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

/// The compatibles of `f`'s `of_device_id` tables that a driver structure of the file names
/// by `.of_match_table`: what `dt-extract-compatibles -d` lists before it drops the
/// compatibles of the `OF_DECLARE` family.
fn driver_matched(f: &DriverFile) -> Vec<String> {
    let named: BTreeSet<&str> = f
        .drivers
        .iter()
        .flat_map(|d| d.tables.iter())
        .filter(|(designator, _)| designator == "of_match_table")
        .map(|(_, table)| table.as_str())
        .collect();
    f.tables
        .iter()
        .filter(|t| t.kind == "of_device_id" && named.contains(t.name.as_str()))
        .flat_map(|t| t.entries.iter())
        .filter_map(|e| match e.get("compatible") {
            Some(Value::Str(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// Compares knav's driver-matched compatibles (less those the `OF_DECLARE` family names,
/// `_DRIVER` variants kept) with `dt-extract-compatibles -d`.
fn compare_driver_mode(
    root: &Path,
    ours: &BTreeMap<String, Vec<String>>,
    declared: &BTreeSet<String>,
) {
    let Some(theirs) = script_output(root, true) else {
        return;
    };
    let ours: BTreeSet<(String, String)> = ours
        .iter()
        .filter(|(f, _)| f.ends_with(".c"))
        .flat_map(|(f, cs)| cs.iter().map(move |c| (f.clone(), c.clone())))
        .filter(|(_, c)| !declared.contains(c))
        .collect();
    let theirs: BTreeSet<(String, String)> = theirs
        .iter()
        .flat_map(|(f, cs)| cs.iter().map(move |c| (f.clone(), c.clone())))
        .collect();
    let missed: Vec<_> = theirs.difference(&ours).collect();
    let extra: Vec<_> = ours.difference(&theirs).collect();
    println!(
        "driver mode: script {} pairs, knav {}; the script's alone: {}, knav's alone: {}",
        theirs.len(),
        ours.len(),
        missed.len(),
        extra.len()
    );
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let list = |v: &[&(String, String)]| -> String {
        v.iter().map(|(f, c)| format!("{f}: {c}\n")).collect()
    };
    std::fs::write(tmp.join("ids-d-missed.txt"), list(&missed)).expect("writing ids-d-missed.txt");
    std::fs::write(tmp.join("ids-d-extra.txt"), list(&extra)).expect("writing ids-d-extra.txt");
    for (f, c) in missed.iter().take(20) {
        println!("  driver mode, missed {f}: {c}");
    }
    let found = theirs.len() - missed.len();
    assert!(
        found * 1000 >= theirs.len() * 990,
        "driver mode: knav finds {found} of the script's {} pairs",
        theirs.len()
    );
}

/// The one table of `f` named `name`.
fn table<'f>(f: &'f DriverFile, name: &str) -> &'f knav_hw::idtable::Table {
    f.tables
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no table {name}"))
}

#[test]
#[ignore = "needs the Linux tree; KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12"]
fn facts_read_from_the_files() {
    let root = tree();
    let cx = context(&root);
    let int = |v: u64| Some(Value::Int(v));
    let s = |v: &str| Some(Value::Str(v.to_string()));

    // drivers/net/ethernet/intel/e1000e/netdev.c:7795-7953, E1000_DEV_ID_* from its hw.h:12.
    let f = read_file(&root, "drivers/net/ethernet/intel/e1000e/netdev.c", &cx);
    let t = table(&f, "e1000_pci_tbl");
    assert_eq!((t.kind.as_str(), t.line), ("pci_device_id", 7795));
    assert_eq!(
        t.entries.len(),
        115,
        "115 PCI_VDEVICE lines, the terminator left out"
    );
    assert_eq!(t.module_device_table, Some(("pci".to_string(), 7930)));
    let e = &t.entries[0];
    assert_eq!((e.line, e.via.as_deref()), (7796, Some("PCI_VDEVICE")));
    assert_eq!(e.get("vendor").cloned(), int(0x8086));
    assert_eq!(e.get("device").cloned(), int(0x105E));
    assert_eq!(
        e.get("subdevice").cloned(),
        int(u64::MAX),
        "PCI_ANY_ID is (~0)"
    );
    assert_eq!(
        e.get("driver_data").cloned(),
        Some(Value::Text("board_82571".into()))
    );
    assert_eq!(
        t.entries[3].line, 7799,
        "an entry over two lines starts at its brace"
    );
    let d = f
        .drivers
        .iter()
        .find(|d| d.var == "e1000_driver")
        .expect("e1000_driver");
    assert_eq!((d.kind.as_str(), d.line), ("pci_driver", 7945));
    assert_eq!(
        d.tables,
        [("id_table".to_string(), "e1000_pci_tbl".to_string())]
    );
    assert_eq!(
        (d.probe.as_deref(), d.remove.as_deref()),
        (Some("e1000_probe"), Some("e1000_remove"))
    );

    // drivers/hwmon/lm75.c:755-757: the attribute before the name.
    let f = read_file(&root, "drivers/hwmon/lm75.c", &cx);
    let t = table(&f, "lm75_of_match");
    assert_eq!((t.line, t.entries[0].line), (755, 757));
    assert_eq!(t.entries[0].get("compatible").cloned(), s("adi,adt75"));

    // drivers/acpi/ac.c:41-43: positional, by acpi_device_id's field order.
    let f = read_file(&root, "drivers/acpi/ac.c", &cx);
    let t = table(&f, "ac_device_ids");
    assert_eq!(t.entries.len(), 1);
    assert_eq!(t.entries[0].get("id").cloned(), s("ACPI0003"));

    // drivers/net/usb/asix_devices.c:1459-1463: `{`, a comment, USB_DEVICE (0x077b, 0x2226).
    let f = read_file(&root, "drivers/net/usb/asix_devices.c", &cx);
    let e = &table(&f, "products").entries[0];
    assert_eq!(
        e.line, 1462,
        "USB_DEVICE's line, after its brace and a comment"
    );
    assert_eq!(
        e.get("match_flags").cloned(),
        int(3),
        "USB_DEVICE_ID_MATCH_DEVICE"
    );
    assert_eq!(
        (e.get("idVendor").cloned(), e.get("idProduct").cloned()),
        (int(0x077b), int(0x2226))
    );

    // drivers/net/usb/cdc_ether.c:584,959-961: USB_INTERFACE_INFO with the class codes of
    // include/uapi/linux/usb/ch9.h:317 and cdc.h:16,25, the match flags of
    // mod_devicetable.h:164-166.
    let f = read_file(&root, "drivers/net/usb/cdc_ether.c", &cx);
    let t = table(&f, "products");
    assert_eq!(t.line, 584);
    let e = t
        .entries
        .iter()
        .find(|e| e.line == 960)
        .expect("the entry of line 960");
    assert_eq!(e.via.as_deref(), Some("USB_INTERFACE_INFO"));
    assert_eq!(e.get("match_flags").cloned(), int(0x380));
    assert_eq!(
        (
            e.get("bInterfaceClass").cloned(),
            e.get("bInterfaceSubClass").cloned(),
            e.get("bInterfaceProtocol").cloned()
        ),
        (int(2), int(6), int(0))
    );
    assert_eq!(
        e.get("driver_info").cloned(),
        Some(Value::Text("(unsigned long)&cdc_info".into()))
    );

    // drivers/i2c/busses/i2c-i801.c:1001-1002: PCI_DEVICE_DATA(INTEL, 82801AA_3, 0) pastes
    // PCI_DEVICE_ID_INTEL_82801AA_3 (include/linux/pci_ids.h:2778).
    let f = read_file(&root, "drivers/i2c/busses/i2c-i801.c", &cx);
    let e = &table(&f, "i801_ids").entries[0];
    assert_eq!((e.line, e.via.as_deref()), (1002, Some("PCI_DEVICE_DATA")));
    assert_eq!(
        (e.get("vendor").cloned(), e.get("device").cloned()),
        (int(0x8086), int(0x2413))
    );
    assert_eq!(e.get("driver_data").cloned(), int(0));

    // drivers/hid/hid-apple.c:992-993 with drivers/hid/hid-ids.h:97,99.
    let f = read_file(&root, "drivers/hid/hid-apple.c", &cx);
    let e = &table(&f, "apple_devices").entries[0];
    assert_eq!((e.line, e.via.as_deref()), (993, Some("HID_USB_DEVICE")));
    assert_eq!(
        (e.get("vendor").cloned(), e.get("product").cloned()),
        (int(0x05ac), int(0x0304))
    );

    // drivers/net/wireless/broadcom/brcm80211/brcmfmac/bcmsdh.c:963-977, a local macro over
    // SDIO_DEVICE (include/linux/mmc/sdio_ids.h:56,71).
    let f = read_file(
        &root,
        "drivers/net/wireless/broadcom/brcm80211/brcmfmac/bcmsdh.c",
        &cx,
    );
    let e = &table(&f, "brcmf_sdmmc_ids").entries[0];
    assert_eq!((e.line, e.via.as_deref()), (977, Some("BRCMF_SDIO_DEVICE")));
    assert_eq!(
        (e.get("vendor").cloned(), e.get("device").cloned()),
        (int(0x02d0), int(0xa887))
    );

    // drivers/irqchip/irq-gic.c:1513, kernel/dma/coherent.c:409 (RESERVEDMEM_OF_DECLARE),
    // drivers/clk/samsung/clk-exynos5433.c:3246 (a local wrapper pasting "bus"#id).
    let declared = |rel: &str| -> Vec<(u32, String, String)> {
        read_file(&root, rel, &cx)
            .compatibles
            .into_iter()
            .map(|c| (c.line, c.via, c.compatible))
            .collect()
    };
    assert!(declared("drivers/irqchip/irq-gic.c").contains(&(
        1513,
        "IRQCHIP_DECLARE".into(),
        "arm,gic-400".into()
    )));
    assert!(declared("kernel/dma/coherent.c").contains(&(
        409,
        "RESERVEDMEM_OF_DECLARE".into(),
        "shared-dma-pool".into()
    )));
    assert!(declared("drivers/clk/samsung/clk-exynos5433.c").contains(&(
        3246,
        "CLK_OF_DECLARE".into(),
        "samsung,exynos5433-cmu-bus0".into()
    )));
    // arch/arm/mach-exynos/firmware.c:201, its compatible on the next line.
    assert!(declared("arch/arm/mach-exynos/firmware.c").contains(&(
        201,
        "of_find_compatible_node".into(),
        "samsung,secure-firmware".into()
    )));

    // drivers/irqchip/irq-meson-gpio.c:606-608, a table and driver made by macros.
    let f = read_file(&root, "drivers/irqchip/irq-meson-gpio.c", &cx);
    let t = table(&f, "meson_gpio_intc_irqchip_match_table");
    assert_eq!(
        (t.line, t.module_device_table.clone()),
        (606, Some(("of".to_string(), 608)))
    );
    let d = &f.drivers[0];
    assert_eq!(
        (d.var.as_str(), d.name.as_deref()),
        ("meson_gpio_intc_driver", Some("meson_gpio_intc"))
    );

    // drivers/i2c/busses/i2c-imx.c:1523-1524: a property read over two lines.
    let f = read_file(&root, "drivers/i2c/busses/i2c-imx.c", &cx);
    assert!(f.properties.iter().any(|p| p.line == 1523
        && p.property == "clock-frequency"
        && p.function == "of_property_read_u32"));
}
