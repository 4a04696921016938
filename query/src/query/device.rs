//! find_device: what the tree's hardware description says of one device — for a compatible
//! string, the drivers that match it ([`super::device_drivers`]), the binding schemas that
//! document it, and the boards whose device trees have a node of it, their own or through the
//! `.dtsi` files they include (with the node's status in each board); for a device key
//! (`pci:8086:15b8`, `usb:0b95:1790`, `acpi:ACPI0003`, `i2c:lm75`), the drivers whose tables
//! match it; for `driver:NAME|FILE`, what that driver matches and reads. From the index's
//! hardware part (`knav_index::hw`). A pattern with one `*` lists the compatibles it matches.
//! Order: drivers by path, boards by path.

use std::collections::{BTreeMap, HashMap};

use knav_index::hw::devkeys;
use knav_index::hw::ids::DRIVER_KEY;
use knav_index::hw::part::{FileKind, Hw, NodeUse, Uses};
use knav_index::{IndexError, Part};

use super::device_drivers::Drivers;
use super::Query;
use crate::envelope::{
    quote, Device, DeviceBinding, DeviceBoard, DeviceFinding, DeviceMatch, DeviceNode, Envelope,
    Results,
};

/// The tool's name.
pub const TOOL: &str = "find_device";

/// Compatibles a pattern lists at most.
const MAX_MATCHES: usize = 10_000;

/// True when `asked` is a device key (`pci:8086:15b8`), not a compatible: its bus is one
/// whose keys the part holds (`PCI:…` too).
fn is_key(hw: &Hw, asked: &str) -> bool {
    asked.split_once(':').is_some_and(|(bus, _)| {
        let bus = format!("{}:", bus.to_ascii_lowercase());
        bus != DRIVER_KEY
            && bus != CHECK_KEY
            && hw.ids.prefixed(&bus, 1).is_ok_and(|k| !k.is_empty())
    })
}

/// Answers find_device for `compatible` (exact, or with one `*`), a device key or
/// `driver:NAME|FILE`.
pub fn find_device(q: &Query<'_>, compatible: &str) -> Envelope {
    let compatible = compatible.trim();
    if compatible.is_empty() {
        return q.envelope_error(
            TOOL,
            "give a compatible string (fsl,imx21-i2c), a device ID (pci:8086:15b8) or driver:NAME"
                .into(),
        );
    }
    let Some(part) = &q.snap.manifest.hw else {
        return q.envelope_error(
            TOOL,
            "the index has no hardware part (built by an older knav); run knav index".into(),
        );
    };
    let hw = match open(q, part) {
        Ok(hw) => hw,
        Err(e) => return q.envelope_error(TOOL, e.rebuild().to_string()),
    };
    if let Some(kind) = compatible.strip_prefix(CHECK_KEY) {
        return check(q, &hw, kind.trim());
    }
    if let Some(name) = compatible.strip_prefix(DRIVER_KEY) {
        return driver_report(q, &hw, name.trim());
    }
    if is_key(&hw, compatible) {
        return by_key(q, &hw, &devkeys::canonical(compatible));
    }
    if let Some((prefix, suffix)) = compatible.split_once('*') {
        if suffix.contains('*') {
            return q.envelope_error(
                TOOL,
                format!("{} has more than one *: give one", quote(compatible)),
            );
        }
        return pattern(q, &hw, compatible, prefix, suffix);
    }
    match hw.uses(compatible) {
        Ok(Some(uses)) => answer(q, &hw, compatible, uses),
        Ok(None) => not_found(q, &hw, compatible),
        Err(e) => q.envelope_error(TOOL, e.rebuild().to_string()),
    }
}

/// Opens the hardware part; a small one is checksummed first, as the other parts are.
fn open(q: &Query<'_>, part: &knav_index::hw::HwRef) -> Result<Hw, IndexError> {
    let hw = <Hw as Part>::open(&q.snap.index_dir, part)?;
    if knav_index::checksum_at_open(hw.bytes()) {
        Hw::verify_files(&q.snap.index_dir, part, Some(&hw))?;
    }
    Ok(hw)
}

/// The device that asks for `knav dt check`'s findings (`check:` all of them, `check:KIND`
/// one kind).
pub const CHECK_KEY: &str = "check:";

/// `knav dt check`: the findings of `kind` (all when empty) under the path prefix, counted by
/// kind, paged in kind, path and line order.
fn check(q: &Query<'_>, hw: &Hw, kind: &str) -> Envelope {
    use knav_index::hw::check::KINDS;
    if !kind.is_empty() && !KINDS.contains(&kind) {
        return q.envelope_error(
            TOOL,
            format!(
                "{} is no kind of finding: give {} or none for all",
                quote(kind),
                KINDS.join(", ")
            ),
        );
    }
    let all = match hw.findings() {
        Ok(f) => f,
        Err(e) => return q.envelope_error(TOOL, e.rebuild().to_string()),
    };
    let mut counts = vec![0u64; KINDS.len()];
    let kept: Vec<_> = all
        .into_iter()
        .filter(|f| q.page.wanted(&f.path))
        .inspect(|f| counts[f.kind as usize] += 1)
        .filter(|f| kind.is_empty() || KINDS[f.kind as usize] == kind)
        .collect();
    let mut env = q.envelope(TOOL);
    let page = q.paginate(&mut env, kept);
    env.next_tools = vec![TOOL];
    env.results = Some(Results::Device(Box::new(Device {
        compatible: format!("{CHECK_KEY}{kind}"),
        counts: KINDS
            .iter()
            .zip(counts)
            .map(|(k, n)| (k.to_string(), n))
            .collect(),
        findings: page
            .into_iter()
            .map(|f| DeviceFinding {
                kind: KINDS[f.kind as usize],
                path: f.path,
                line: f.line,
                subject: f.subject,
                detail: f.detail,
            })
            .collect(),
        ..Device::default()
    })));
    env
}

/// The answer for a device key: the drivers whose tables match it.
fn by_key(q: &Query<'_>, hw: &Hw, key: &str) -> Envelope {
    let mut drivers = Drivers::new(q, hw);
    let rows = match drivers.of_key(key) {
        Ok(r) => r,
        Err(e) => return q.envelope_error(TOOL, e.rebuild().to_string()),
    };
    let mut env = q.envelope(TOOL);
    if rows.is_empty() {
        env.error = Some(format!("no driver's table matches {}", quote(key)));
        let mut near = hw.ids.near(key, 2, 8);
        if near.is_empty() {
            if let Some((bus_vendor, _)) = key.rsplit_once(':') {
                near = hw
                    .ids
                    .prefixed(&format!("{bus_vendor}:"), 8)
                    .map(|v| v.into_iter().map(|(k, _)| k).collect())
                    .unwrap_or_default();
            }
        }
        env.near_misses = near;
        env.next_tools = vec![TOOL];
        return env;
    }
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|r| q.page.wanted(&r.path))
        .collect();
    let page = q.paginate(&mut env, rows);
    env.next_tools = vec!["find_definition", "find_callers"];
    env.results = Some(Results::Device(Box::new(Device {
        compatible: key.to_string(),
        drivers: page,
        ..Device::default()
    })));
    env
}

/// The driver structures whose `.probe` is `function`, each with the devices it matches;
/// empty without a hardware part or when none is.
pub(crate) fn probe_devices(q: &Query<'_>, function: &str) -> Vec<crate::envelope::ProbeDevices> {
    let Some(part) = &q.snap.manifest.hw else {
        return Vec::new();
    };
    let Ok(hw) = open(q, part) else {
        return Vec::new();
    };
    let rows = hw
        .ids
        .rows(&format!("{}{function}", knav_index::hw::ids::PROBE_KEY))
        .unwrap_or_default();
    let mut drivers = Drivers::new(q, &hw);
    rows.into_iter()
        .filter_map(|r| match r {
            knav_index::hw::ids::IdRow::Driver { file, driver } => {
                drivers.probe_devices(file, driver).ok().flatten()
            }
            _ => None,
        })
        .collect()
}

/// The answer for `driver:NAME|FILE`: each file it names, what it matches and reads.
fn driver_report(q: &Query<'_>, hw: &Hw, name: &str) -> Envelope {
    let mut drivers = Drivers::new(q, hw);
    let files = match drivers.named(name) {
        Ok(f) => f,
        Err(e) => return q.envelope_error(TOOL, e.rebuild().to_string()),
    };
    let Some(&file) = files.first() else {
        let mut env = q.envelope(TOOL);
        env.error = Some(format!(
            "no driver structure or driver file is named {}",
            quote(name)
        ));
        env.near_misses = hw
            .ids
            .near(&format!("{DRIVER_KEY}{name}"), 2, 8)
            .into_iter()
            .map(|k| k.strip_prefix(DRIVER_KEY).unwrap_or(&k).to_string())
            .collect();
        env.next_tools = vec![TOOL];
        return env;
    };
    let report = match drivers.report(file) {
        Ok(r) => r,
        Err(e) => return q.envelope_error(TOOL, e.rebuild().to_string()),
    };
    let mut env = q.envelope(TOOL);
    if files.len() > 1 {
        env.warning = Some(format!(
            "{} files have a driver named {}; showing {} (ask by path for another: {})",
            files.len(),
            quote(name),
            report.path,
            files[1..]
                .iter()
                .filter_map(|&f| hw.path(f).ok())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    env.total = report.tables.iter().map(|t| t.keys.len() as u64).sum();
    env.next_tools = vec!["find_definition", "find_callers"];
    env.results = Some(Results::Device(Box::new(Device {
        compatible: format!("{DRIVER_KEY}{name}"),
        driver_file: Some(report),
        ..Device::default()
    })));
    env
}

/// The answer for a compatible the part holds.
fn answer(q: &Query<'_>, hw: &Hw, compatible: &str, uses: Uses) -> Envelope {
    let (drivers, code) = match Drivers::new(q, hw).of_compatible(&uses) {
        Ok(d) => d,
        Err(e) => return q.envelope_error(TOOL, e.rebuild().to_string()),
    };
    let Uses {
        documented, nodes, ..
    } = uses;
    let bindings = documented
        .iter()
        .map(|d| {
            let f = &hw.files[d.file as usize];
            DeviceBinding {
                path: f.path.clone(),
                line: d.line,
                title: f.about.clone(),
            }
        })
        .collect();
    let mut device = Device {
        compatible: compatible.to_string(),
        bindings,
        drivers,
        code,
        ..Device::default()
    };
    let includers = hw.includers();
    let mut reached: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut boards: BTreeMap<u32, Vec<&NodeUse>> = BTreeMap::new();
    for n in &nodes {
        match hw.files[n.file as usize].kind {
            FileKind::Board | FileKind::Include => {
                // A board's own node, and its nodes in the boards that include it (a .dts
                // included by another, as some are, reaches that board too).
                if hw.files[n.file as usize].kind == FileKind::Board {
                    device.dts_nodes += 1;
                    boards.entry(n.file).or_default().push(n);
                } else {
                    device.dtsi_nodes += 1;
                }
                let by = reached
                    .entry(n.file)
                    .or_insert_with(|| hw.boards_including(&includers, n.file));
                for &b in by.iter().filter(|&&b| b != n.file) {
                    boards.entry(b).or_default().push(n);
                }
            }
            FileKind::Overlay => device.overlay_nodes += 1,
            FileKind::Binding | FileKind::Code => {}
        }
    }
    let boards: Vec<(u32, Vec<&NodeUse>)> = boards
        .into_iter()
        .filter(|(b, _)| q.page.wanted(&hw.files[*b as usize].path))
        .collect();
    device.boards = boards.len() as u64;
    let mut env = q.envelope(TOOL);
    let page = q.paginate(&mut env, boards);
    device.board_rows = page
        .into_iter()
        .map(|(b, ns)| board_row(hw, b, &ns))
        .collect();
    env.next_tools = vec!["search_text"];
    env.results = Some(Results::Device(Box::new(device)));
    env
}

/// Board `b`'s row: its model and its nodes `ns`, each with its status in the board.
fn board_row(hw: &Hw, b: u32, ns: &[&NodeUse]) -> DeviceBoard {
    let f = &hw.files[b as usize];
    let nodes = ns
        .iter()
        .map(|n| {
            let set = match n.labels.is_empty() {
                true => None,
                false => hw.status_in(b, &n.labels),
            };
            DeviceNode {
                path: hw.files[n.file as usize].path.clone(),
                line: n.line,
                node: n.path.clone(),
                status: set.or_else(|| n.status.clone()),
            }
        })
        .collect();
    DeviceBoard {
        path: f.path.clone(),
        model: f.about.clone(),
        nodes,
    }
}

/// The compatibles `prefix*suffix` matches, each with its counts.
fn pattern(q: &Query<'_>, hw: &Hw, asked: &str, prefix: &str, suffix: &str) -> Envelope {
    let names = hw.matching(prefix, suffix, MAX_MATCHES);
    let mut env = q.envelope(TOOL);
    if names.is_empty() {
        env.error = Some(format!("no compatible matches {}", quote(asked)));
        return env;
    }
    let page = q.paginate(&mut env, names);
    let mut matches = Vec::with_capacity(page.len());
    for c in page {
        let uses = match hw.uses(&c) {
            Ok(u) => u.unwrap_or_default(),
            Err(e) => return q.envelope_error(TOOL, e.rebuild().to_string()),
        };
        matches.push(DeviceMatch {
            compatible: c,
            bindings: uses.documented.len() as u64,
            nodes: uses.nodes.len() as u64,
        });
    }
    env.next_tools = vec![TOOL];
    env.results = Some(Results::Device(Box::new(Device {
        compatible: asked.to_string(),
        matches,
        ..Device::default()
    })));
    env
}

/// No binding or device tree names `compatible`: the compatibles within two edits of it, else
/// those of its vendor (`fsl,`).
fn not_found(q: &Query<'_>, hw: &Hw, compatible: &str) -> Envelope {
    let mut env = q.envelope(TOOL);
    env.error = Some(format!(
        "no binding or device tree names compatible {}",
        quote(compatible)
    ));
    let mut near = hw.near(compatible, 8);
    if near.is_empty() {
        if let Some((vendor, _)) = compatible.split_once(',') {
            near = hw.matching(&format!("{vendor},"), "", 8);
        }
    }
    env.near_misses = near;
    env.next_tools = vec![TOOL];
    env
}
