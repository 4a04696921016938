//! `knav dt check`'s findings, computed when the hardware part is written (a pure function of
//! its files' facts) and kept in `check.dat`:
//! - **undocumented**: a compatible a driver matches (a match table, an `OF_DECLARE`-family
//!   declaration, a test in code — what `scripts/dtc/dt-extract-compatibles` lists) that no
//!   binding schema documents, at the driver's line (what `make dt_compatible_check` reports);
//! - **unmatched**: a device-tree node (the root aside: machines are matched by board code)
//!   none of whose compatibles any driver matches, at the node's line;
//! - **property**: a property a driver reads by literal name that the binding schemas of the
//!   compatibles its `of_device_id` tables match do not name anywhere (a property of a child
//!   node counts as named, and so does one that a `patternProperties` key, a schema in the
//!   tree they `$ref` anywhere, or the core schemas of dt-schema provide). A driver whose
//!   bindings `$ref` a schema the tree does not hold (other than `types.yaml`) is not judged.
//!
//! Judged on a sample of Linux 6.12's findings (kernel-bench/results): a compatible a
//! binding names anywhere (a child node's, a conditional branch's) counts as documented; a
//! node whose compatible, vendor prefix stripped, an I2C or SPI id table names is matched, as
//! those cores match it; CPU nodes and SoundWire `sdw…` compatibles are left out.

use std::collections::{HashMap, HashSet};

use super::facts::{BindingFacts, HwFacts};
use crate::codec::{put_str, put_varint, Reader};
use crate::text::walk::TextFile;

/// The kinds of findings, as `check.dat` numbers them.
pub const KINDS: [&str; 3] = ["undocumented", "unmatched", "property"];

/// Properties every node may have through dt-schema's core schemas (`dt-core.yaml`,
/// `interrupts.yaml`, `clock.yaml`, `reset.yaml`, `dma.yaml`, `power-domain.yaml`,
/// `pinctrl-consumer.yaml`, `iommu.yaml`, …), which the kernel tree does not hold.
const CORE: &[&str] = &[
    "compatible",
    "reg",
    "reg-names",
    "reg-io-width",
    "status",
    "label",
    "phandle",
    "#address-cells",
    "#size-cells",
    "ranges",
    "dma-ranges",
    "dma-coherent",
    "dma-noncoherent",
    "interrupts",
    "interrupts-extended",
    "interrupt-names",
    "interrupt-parent",
    "interrupt-controller",
    "#interrupt-cells",
    "interrupt-map",
    "interrupt-map-mask",
    "clocks",
    "clock-names",
    "#clock-cells",
    "clock-output-names",
    "clock-frequency",
    "assigned-clocks",
    "assigned-clock-rates",
    "assigned-clock-parents",
    "resets",
    "reset-names",
    "#reset-cells",
    "dmas",
    "dma-names",
    "#dma-cells",
    "power-domains",
    "power-domain-names",
    "#power-domain-cells",
    "pinctrl-names",
    "iommus",
    "iommu-map",
    "memory-region",
    "memory-region-names",
    "wakeup-source",
    "secure-status",
    "device_type",
    "name",
    "model",
    "gpio-controller",
    "#gpio-cells",
    "gpio-line-names",
    "ngpios",
    "gpio-ranges",
    "nvmem-cells",
    "nvmem-cell-names",
    "mboxes",
    "mbox-names",
    "#mbox-cells",
    "operating-points-v2",
    "power-supply",
    "#thermal-sensor-cells",
    "#cooling-cells",
    "#phy-cells",
    "phys",
    "phy-names",
    "port",
    "ports",
    "remote-endpoint",
    "endpoint",
];

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Its kind, an index into [`KINDS`].
    pub kind: u8,
    /// The file.
    pub path: String,
    /// The line.
    pub line: u32,
    /// The compatible or property.
    pub subject: String,
    /// What is wrong, for a reader.
    pub detail: String,
}

/// What the findings are judged against: the bindings' compatibles and names, and what
/// drivers match.
struct Known<'a> {
    /// Each documented compatible's bindings, by index into `binding_list`.
    documented: HashMap<&'a str, Vec<usize>>,
    /// Compatible-like values any binding writes.
    mentioned: HashSet<&'a str>,
    bindings: HashMap<&'a str, &'a BindingFacts>,
    binding_list: Vec<(&'a str, &'a BindingFacts)>,
    /// Compatibles C code matches.
    matched: HashSet<&'a str>,
    /// Names of I2C and SPI id tables.
    bus_names: HashSet<&'a str>,
}

/// The findings of the part's facts: `described` (device-tree sources and bindings) and
/// `code` (C files), each with its facts; in kind, then path, then line order.
pub fn findings(
    described: &[(&TextFile, &HwFacts)],
    code: &[(&TextFile, &HwFacts)],
) -> Vec<Finding> {
    let k = known(described, code);
    let mut out = Vec::new();
    undocumented(&k, code, &mut out);
    unmatched(&k, described, &mut out);
    properties(&k, code, &mut out);
    out.sort_by(|a, b| (a.kind, &a.path, a.line).cmp(&(b.kind, &b.path, b.line)));
    out
}

/// What the facts know of bindings and matches.
fn known<'a>(
    described: &[(&'a TextFile, &'a HwFacts)],
    code: &[(&'a TextFile, &'a HwFacts)],
) -> Known<'a> {
    let mut documented: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut bindings: HashMap<&str, &BindingFacts> = HashMap::new();
    let binding_list: Vec<(&str, &BindingFacts)> = described
        .iter()
        .filter_map(|(f, fa)| match fa {
            HwFacts::Binding(b) => Some((f.path.as_str(), b)),
            _ => None,
        })
        .collect();
    let mut mentioned: HashSet<&str> = HashSet::new();
    for (i, (path, b)) in binding_list.iter().enumerate() {
        bindings.insert(path, b);
        for (c, _) in &b.compatibles {
            documented.entry(c).or_default().push(i);
        }
        mentioned.extend(b.strings.iter().map(String::as_str));
    }
    let mut matched: HashSet<&str> = HashSet::new();
    // Names of I2C and SPI id tables: their cores match a node's compatible, its vendor
    // prefix stripped, against them.
    let mut bus_names: HashSet<&str> = HashSet::new();
    for (_, fa) in code {
        if let HwFacts::Driver(d) = fa {
            for t in d
                .tables
                .iter()
                .filter(|t| t.kind == "i2c_device_id" || t.kind == "spi_device_id")
            {
                for e in &t.entries {
                    bus_names.extend(
                        e.keys
                            .iter()
                            .filter_map(|k| k.split_once(':'))
                            .map(|(_, n)| n),
                    );
                }
            }
            for t in d.tables.iter().filter(|t| t.kind == "of_device_id") {
                for e in &t.entries {
                    matched.extend(e.keys.iter().map(String::as_str));
                }
            }
            matched.extend(d.compatibles.iter().map(|(_, _, c, _)| c.as_str()));
        }
    }
    Known {
        documented,
        mentioned,
        bindings,
        binding_list,
        matched,
        bus_names,
    }
}

/// Compatibles drivers match that no binding documents.
fn undocumented(k: &Known<'_>, code: &[(&TextFile, &HwFacts)], out: &mut Vec<Finding>) {
    let (documented, mentioned) = (&k.documented, &k.mentioned);
    // Undocumented: each compatible once per file, at its first line there.
    for (f, fa) in code {
        let HwFacts::Driver(d) = fa else { continue };
        let mut seen = HashSet::new();
        let mut named: Vec<(u32, &str, String)> = Vec::new();
        for t in d.tables.iter().filter(|t| t.kind == "of_device_id") {
            for e in &t.entries {
                for c in &e.keys {
                    named.push((e.line, c, format!("matched by {}", t.name)));
                }
            }
        }
        for (line, via, c, _) in &d.compatibles {
            named.push((*line, c, format!("matched by {via}")));
        }
        named.sort_by_key(|(line, _, _)| *line);
        for (line, c, how) in named {
            if !documented.contains_key(c) && !mentioned.contains(c) && seen.insert(c) {
                out.push(Finding {
                    kind: 0,
                    path: f.path.clone(),
                    line,
                    subject: c.to_string(),
                    detail: format!("{how}; no binding schema documents it"),
                });
            }
        }
    }
}

/// Device-tree nodes no driver matches.
fn unmatched(k: &Known<'_>, described: &[(&TextFile, &HwFacts)], out: &mut Vec<Finding>) {
    let (matched, bus_names) = (&k.matched, &k.bus_names);
    // Unmatched nodes.
    for (f, fa) in described {
        let HwFacts::Dts(d) = fa else { continue };
        for n in &d.nodes {
            // The root is matched by board code, CPUs by their device_type.
            if n.compatible.is_empty() || n.path == "/" || n.path.starts_with("/cpus/") {
                continue;
            }
            let handled = |c: &String| {
                matched.contains(c.as_str())
                    || bus_names.contains(c.as_str())
                    || c.split_once(',').is_some_and(|(_, n)| bus_names.contains(n))
                    // SoundWire peripherals: `sdwVMMMMPPPPRR` decoded into an ID.
                    || (c.starts_with("sdw") && c[3..].bytes().all(|b| b.is_ascii_hexdigit()))
            };
            if !n.compatible.iter().any(handled) {
                out.push(Finding {
                    kind: 1,
                    path: f.path.clone(),
                    line: n.line,
                    subject: n.compatible.join(", "),
                    detail: format!("node {}: no driver matches its compatibles", n.path),
                });
            }
        }
    }
}

/// Properties drivers read that their bindings do not name.
fn properties(k: &Known<'_>, code: &[(&TextFile, &HwFacts)], out: &mut Vec<Finding>) {
    let (documented, bindings, binding_list) = (&k.documented, &k.bindings, &k.binding_list);
    // Properties.
    let core: HashSet<&str> = CORE.iter().copied().collect();
    for (f, fa) in code {
        let HwFacts::Driver(d) = fa else { continue };
        if d.properties.is_empty() {
            continue;
        }
        let mut schemas: Vec<&str> = Vec::new();
        for t in d.tables.iter().filter(|t| t.kind == "of_device_id") {
            for e in &t.entries {
                for c in &e.keys {
                    for &i in documented.get(c.as_str()).into_iter().flatten() {
                        if !schemas.contains(&binding_list[i].0) {
                            schemas.push(binding_list[i].0);
                        }
                    }
                }
            }
        }
        let Some(names) = schema_names(&schemas, bindings) else {
            continue;
        };
        let mut seen = HashSet::new();
        for (line, function, p) in &d.properties {
            if core.contains(p.as_str())
                || p.starts_with("pinctrl-")
                || p.ends_with("-supply")
                || p.ends_with("-gpios")
                || p.ends_with("-gpio")
                || names.has(p)
                || !seen.insert(p.as_str())
            {
                continue;
            }
            out.push(Finding {
                kind: 2,
                path: f.path.clone(),
                line: *line,
                subject: p.clone(),
                detail: format!("read by {function}; not in {}", schemas.join(", ")),
            });
        }
    }
}

/// Every name a set of schemas (and the schemas of the tree they `$ref`) writes as a key, and
/// their `patternProperties`.
struct Names {
    keys: HashSet<String>,
    patterns: Vec<regex_automata::meta::Regex>,
}

impl Names {
    fn has(&self, p: &str) -> bool {
        self.keys.contains(p) || self.patterns.iter().any(|r| r.is_match(p))
    }
}

/// The names `schemas` write, through their `$ref`s in the tree; `None` when there are none
/// or one refers to a schema the tree does not hold (the driver is then not judged).
fn schema_names(schemas: &[&str], bindings: &HashMap<&str, &BindingFacts>) -> Option<Names> {
    if schemas.is_empty() {
        return None;
    }
    let mut names = Names {
        keys: HashSet::new(),
        patterns: Vec::new(),
    };
    let mut todo: Vec<String> = schemas.iter().map(|s| s.to_string()).collect();
    let mut done: HashSet<String> = HashSet::new();
    while let Some(path) = todo.pop() {
        if !done.insert(path.clone()) {
            continue;
        }
        let b = bindings.get(path.as_str())?;
        // A binding that lists devices without their properties judges nothing.
        if b.error.is_some() || path.ends_with("/incomplete-devices.yaml") {
            return None;
        }
        names.keys.extend(b.keys.iter().cloned());
        for p in &b.patterns {
            if let Ok(r) = regex_automata::meta::Regex::new(p) {
                names.patterns.push(r);
            }
        }
        for r in &b.refs {
            let target = r.split('#').next().unwrap_or("");
            if target.is_empty() || target.ends_with("/types.yaml") {
                continue;
            }
            let resolved = match target.strip_prefix("/schemas/") {
                Some(rest) => format!("Documentation/devicetree/bindings/{rest}"),
                None => {
                    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
                    super::cread::join(dir, target.trim_start_matches("./"))?
                }
            };
            todo.push(resolved);
        }
    }
    Some(names)
}

/// Appends the encoded findings to `out`.
pub fn put(findings: &[Finding], out: &mut Vec<u8>) {
    put_varint(out, findings.len() as u64);
    for f in findings {
        out.push(f.kind);
        put_str(out, f.path.as_bytes());
        put_varint(out, f.line as u64);
        put_str(out, f.subject.as_bytes());
        put_str(out, f.detail.as_bytes());
    }
}

/// Findings written by [`put`]; `None` when they do not decode.
pub fn get(r: &mut Reader<'_>) -> Option<Vec<Finding>> {
    let n = r.varint();
    let mut out = Vec::with_capacity(r.room_for(n, 5));
    for _ in 0..n {
        let kind = r.u8();
        let path = super::facts::string(r)?;
        let line = r.varint() as u32;
        let subject = super::facts::string(r)?;
        let detail = super::facts::string(r)?;
        if r.overrun || kind as usize >= KINDS.len() {
            return None;
        }
        out.push(Finding {
            kind,
            path,
            line,
            subject,
            detail,
        });
    }
    Some(out)
}
