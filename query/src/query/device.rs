//! find_device: what the tree's hardware description says of one compatible string — the
//! binding schemas that document it, and the boards whose device trees have a node of it,
//! their own or through the `.dtsi` files they include (with the node's status in each board),
//! from the index's hardware part (`knav_index::hw`). A pattern with one `*` lists the
//! compatibles it matches. Order: boards by path.

use std::collections::{BTreeMap, HashMap};

use knav_index::hw::part::{FileKind, Hw, NodeUse};
use knav_index::{IndexError, Part};

use super::Query;
use crate::envelope::{
    quote, Device, DeviceBinding, DeviceBoard, DeviceMatch, DeviceNode, Envelope, Results,
};

/// The tool's name.
pub const TOOL: &str = "find_device";

/// Compatibles a pattern lists at most.
const MAX_MATCHES: usize = 10_000;

/// Answers find_device for `compatible` (exact, or with one `*`).
pub fn find_device(q: &Query<'_>, compatible: &str) -> Envelope {
    let compatible = compatible.trim();
    if compatible.is_empty() {
        return q.envelope_error(TOOL, "give a compatible string (fsl,imx21-i2c)".into());
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
        Ok(Some(uses)) => answer(q, &hw, compatible, uses.documented, uses.nodes),
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

/// The answer for a compatible the part holds.
fn answer(
    q: &Query<'_>,
    hw: &Hw,
    compatible: &str,
    documented: Vec<knav_index::hw::part::Documented>,
    nodes: Vec<NodeUse>,
) -> Envelope {
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
            FileKind::Binding => {}
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
