//! What one hardware-description file contributes to the hardware part, from its path and
//! bytes alone ([`HwFacts`]): a device-tree source's model, root compatible, includes and the
//! nodes that name a compatible or a status; a binding schema's title, documented compatibles
//! and properties. The facts are encoded into the part (`facts.dat`) so that a refresh reuses
//! those of every file whose stat did not change and reads only the others.

use knav_hw::dts::IncludeKind;

use super::drivers::DriverFacts;
use crate::codec::{put_opt_str, put_str, put_varint, Reader};

/// What one file gives the hardware part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HwFacts {
    /// A device-tree source (`.dts`, `.dtsi`, `.dtso`).
    Dts(DtsFacts),
    /// A binding schema.
    Binding(BindingFacts),
    /// A C file ([`super::cread`] reads it: its facts depend on headers).
    Driver(DriverFacts),
    /// A file that could not be read.
    Unread,
}

/// What a device-tree source says that the part keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DtsFacts {
    /// The root node's `model`.
    pub model: Option<String>,
    /// The root node's `compatible`.
    pub compatible: Vec<String>,
    /// Its includes as written: (path, line, how).
    pub includes: Vec<(String, u32, IncludeKind)>,
    /// The nodes that have a `compatible` or a `status`.
    pub nodes: Vec<NodeFacts>,
}

/// One node block that names a compatible or a status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeFacts {
    /// The line of its name.
    pub line: u32,
    /// Its path as written in the file (`/soc/i2c@30a20000`, `&i2c1`).
    pub path: String,
    /// Its labels.
    pub labels: Vec<String>,
    /// Its `compatible` strings.
    pub compatible: Vec<String>,
    /// Its `status`.
    pub status: Option<String>,
}

/// What a binding schema says that the part keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BindingFacts {
    /// Its `title`.
    pub title: Option<String>,
    /// The compatibles it documents, each at its first line.
    pub compatibles: Vec<(String, u32)>,
    /// The properties it lists, each at its first line.
    pub properties: Vec<(String, u32)>,
    /// Its `patternProperties` (regular expressions).
    pub patterns: Vec<String>,
    /// The schemas it refers to (every `$ref` it writes: a child node's and a property's
    /// too), as written, once each.
    pub refs: Vec<String>,
    /// True when it admits no property it does not list (`additionalProperties: false` or
    /// `unevaluatedProperties: false`).
    pub closed: bool,
    /// Every mapping key written in it, at any depth, sorted (a child node's properties
    /// among them): the names `knav dt check` accepts as documented.
    pub keys: Vec<String>,
    /// Every value it writes that looks like a compatible (`vendor,name`), at any depth,
    /// sorted: a child node's or a conditional branch's compatibles, which `knav dt check`
    /// counts as documented.
    pub strings: Vec<String>,
    /// Why it could not be read as a schema (`line: message`).
    pub error: Option<String>,
}

/// True for a device-tree source's path.
pub fn is_dts(path: &str) -> bool {
    path.ends_with(".dts") || path.ends_with(".dtsi") || path.ends_with(".dtso")
}

/// True for a binding schema's path.
pub fn is_binding(path: &str) -> bool {
    path.starts_with("Documentation/devicetree/bindings/") && path.ends_with(".yaml")
}

impl HwFacts {
    /// The facts of the device-tree source or binding at `path` of `bytes` (`None`: unread;
    /// a C file is read by [`super::cread::CReader`]).
    pub fn of(path: &str, bytes: Option<&[u8]>) -> HwFacts {
        let Some(bytes) = bytes else {
            return HwFacts::Unread;
        };
        if is_dts(path) {
            return HwFacts::Dts(DtsFacts::of(bytes));
        }
        if is_binding(path) {
            return HwFacts::Binding(BindingFacts::of(bytes));
        }
        HwFacts::Unread
    }

    /// Appends the encoded facts to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        match self {
            HwFacts::Unread => out.push(0),
            HwFacts::Dts(d) => {
                out.push(1);
                put_opt_str(out, d.model.as_deref());
                put_strs(out, &d.compatible);
                put_varint(out, d.includes.len() as u64);
                for (p, line, kind) in &d.includes {
                    put_str(out, p.as_bytes());
                    put_varint(out, *line as u64);
                    out.push(kind_byte(*kind));
                }
                put_varint(out, d.nodes.len() as u64);
                for n in &d.nodes {
                    put_varint(out, n.line as u64);
                    put_str(out, n.path.as_bytes());
                    put_strs(out, &n.labels);
                    put_strs(out, &n.compatible);
                    put_opt_str(out, n.status.as_deref());
                }
            }
            HwFacts::Binding(b) => {
                out.push(2);
                put_opt_str(out, b.title.as_deref());
                put_lined(out, &b.compatibles);
                put_lined(out, &b.properties);
                put_strs(out, &b.patterns);
                put_strs(out, &b.refs);
                out.push(u8::from(b.closed));
                put_strs(out, &b.keys);
                put_strs(out, &b.strings);
                put_opt_str(out, b.error.as_deref());
            }
            HwFacts::Driver(d) => {
                out.push(3);
                d.put(out);
            }
        }
    }

    /// Facts written by [`HwFacts::put`]; `None` when they do not decode.
    pub fn get(r: &mut Reader<'_>) -> Option<HwFacts> {
        let facts = match r.u8() {
            0 => HwFacts::Unread,
            1 => {
                let model = opt_string(r);
                let compatible = strs(r)?;
                let n = r.varint();
                let mut includes = Vec::with_capacity(r.room_for(n, 3));
                for _ in 0..n {
                    let p = string(r)?;
                    let line = r.varint() as u32;
                    includes.push((p, line, byte_kind(r.u8())?));
                }
                let n = r.varint();
                let mut nodes = Vec::with_capacity(r.room_for(n, 5));
                for _ in 0..n {
                    nodes.push(NodeFacts {
                        line: r.varint() as u32,
                        path: string(r)?,
                        labels: strs(r)?,
                        compatible: strs(r)?,
                        status: opt_string(r),
                    });
                }
                HwFacts::Dts(DtsFacts {
                    model,
                    compatible,
                    includes,
                    nodes,
                })
            }
            2 => HwFacts::Binding(BindingFacts {
                title: opt_string(r),
                compatibles: lined(r)?,
                properties: lined(r)?,
                patterns: strs(r)?,
                refs: strs(r)?,
                closed: r.u8() == 1,
                keys: strs(r)?,
                strings: strs(r)?,
                error: opt_string(r),
            }),
            3 => HwFacts::Driver(DriverFacts::get(r)?),
            _ => return None,
        };
        (!r.overrun).then_some(facts)
    }
}

impl DtsFacts {
    /// The facts of a device-tree source of `bytes`.
    pub fn of(bytes: &[u8]) -> DtsFacts {
        let src = knav_hw::dts::read(bytes);
        let nodes = src
            .nodes
            .into_iter()
            .filter(|n| !n.compatible.is_empty() || n.status.is_some())
            .map(|n| NodeFacts {
                line: n.line,
                path: n.path,
                labels: n.labels,
                compatible: n.compatible,
                status: n.status,
            })
            .collect();
        DtsFacts {
            model: src.model,
            compatible: src.compatible,
            includes: src
                .includes
                .into_iter()
                .map(|i| (i.path, i.line, i.kind))
                .collect(),
            nodes,
        }
    }
}

impl BindingFacts {
    /// The facts of a binding schema of `bytes`.
    pub fn of(bytes: &[u8]) -> BindingFacts {
        match knav_hw::binding::read(bytes) {
            Ok(b) => BindingFacts {
                title: b.title,
                compatibles: b
                    .compatibles
                    .into_iter()
                    .map(|n| (n.name, n.line))
                    .collect(),
                refs: refs(bytes),
                properties: b.properties.into_iter().map(|p| (p.name, p.line)).collect(),
                patterns: b.pattern_properties.into_iter().map(|n| n.name).collect(),
                closed: b.additional_properties_false || b.unevaluated_properties_false,
                keys: keys(bytes),
                strings: compatible_like(bytes),
                error: None,
            },
            Err(e) => BindingFacts {
                error: Some(format!("{}: {}", e.line, e.message)),
                ..BindingFacts::default()
            },
        }
    }
}

/// Every mapping key a YAML text writes (`  clock-frequency:`, `- "#address-cells":`), once
/// each, sorted; comments and block scalars' lines that look like keys are included too,
/// which only makes a name count as documented.
fn keys(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start().trim_start_matches("- ");
        let t = t.trim_start_matches(['"', '\'']);
        let end = t
            .find(|c: char| !(c.is_ascii_alphanumeric() || "#,._+-@".contains(c)))
            .unwrap_or(t.len());
        let (name, rest) = t.split_at(end);
        let rest = rest.trim_start_matches(['"', '\'']);
        if !name.is_empty() && (rest == ":" || rest.starts_with(": ")) {
            out.push(name.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every `$ref` a YAML text writes, once each, in order.
fn refs(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let Some(at) = line.find("$ref:") else {
            continue;
        };
        let r = line[at + 5..].trim().trim_matches(['"', '\'']);
        if !r.is_empty() && !out.iter().any(|o| o == r) {
            out.push(r.to_string());
        }
    }
    out
}

/// Every scalar of a YAML text that looks like a compatible (`fsl,imx21-i2c`: a comma, no
/// blank), once each, sorted.
fn compatible_like(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut out: Vec<String> = text
        .split(|c: char| c.is_whitespace() || "'\"[]{}".contains(c))
        .map(|w| w.trim_end_matches(':'))
        .filter(|w| {
            w.contains(',')
                && !w.starts_with(',')
                && !w.ends_with(',')
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_,.+".contains(&b))
        })
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

fn kind_byte(k: IncludeKind) -> u8 {
    match k {
        IncludeKind::System => 0,
        IncludeKind::Local => 1,
        IncludeKind::Dtc => 2,
    }
}

fn byte_kind(b: u8) -> Option<IncludeKind> {
    Some(match b {
        0 => IncludeKind::System,
        1 => IncludeKind::Local,
        2 => IncludeKind::Dtc,
        _ => return None,
    })
}

fn put_strs(out: &mut Vec<u8>, v: &[String]) {
    put_varint(out, v.len() as u64);
    for s in v {
        put_str(out, s.as_bytes());
    }
}

fn put_lined(out: &mut Vec<u8>, v: &[(String, u32)]) {
    put_varint(out, v.len() as u64);
    for (s, line) in v {
        put_str(out, s.as_bytes());
        put_varint(out, *line as u64);
    }
}

/// A string written by `put_str`; `None` when it is not UTF-8 (the part is damaged).
pub(super) fn string(r: &mut Reader<'_>) -> Option<String> {
    std::str::from_utf8(r.str()).ok().map(str::to_string)
}

pub(super) fn opt_string(r: &mut Reader<'_>) -> Option<String> {
    r.opt_str().map(str::to_string)
}

fn strs(r: &mut Reader<'_>) -> Option<Vec<String>> {
    let n = r.varint();
    let mut v = Vec::with_capacity(r.room_for(n, 1));
    for _ in 0..n {
        v.push(string(r)?);
    }
    Some(v)
}

fn lined(r: &mut Reader<'_>) -> Option<Vec<(String, u32)>> {
    let n = r.varint();
    let mut v = Vec::with_capacity(r.room_for(n, 2));
    for _ in 0..n {
        v.push((string(r)?, r.varint() as u32));
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_decode_as_encoded() {
        // Modelled on arch/arm/boot/dts/nxp/imx/imx25.dtsi's i2c node.
        let dts = b"#include \"imx25-pinfunc.h\"\n/ {\n\tmodel = \"M\";\n\tcompatible = \"fsl,imx25\";\n\ti2c1: i2c@43f80000 {\n\t\tcompatible = \"fsl,imx25-i2c\", \"fsl,imx21-i2c\";\n\t\tstatus = \"disabled\";\n\t};\n};\n&i2c1 { status = \"okay\"; };\n";
        let f = HwFacts::of("arch/arm/boot/dts/a.dtsi", Some(dts));
        let HwFacts::Dts(d) = &f else { panic!("{f:?}") };
        assert_eq!(d.model.as_deref(), Some("M"));
        assert_eq!(
            d.includes[0],
            ("imx25-pinfunc.h".into(), 1, IncludeKind::Local)
        );
        assert_eq!(d.nodes.len(), 3, "{d:?}");
        assert_eq!(d.nodes[1].path, "/i2c@43f80000");
        assert_eq!(d.nodes[1].labels, ["i2c1"]);
        assert_eq!(d.nodes[2].path, "&i2c1");
        let yaml = b"title: T\nproperties:\n  compatible:\n    const: a,b\n  reg: true\n";
        let b = HwFacts::of("Documentation/devicetree/bindings/x.yaml", Some(yaml));
        for f in [f, b, HwFacts::Unread] {
            let mut out = Vec::new();
            f.put(&mut out);
            let mut r = Reader::new(&out);
            assert_eq!(HwFacts::get(&mut r), Some(f));
            assert!(r.at_end());
        }
    }

    #[test]
    fn truncated_facts_do_not_decode() {
        let f = HwFacts::of("a.dts", Some(b"/ { x { compatible = \"a,b\"; }; };"));
        let mut out = Vec::new();
        f.put(&mut out);
        for n in 0..out.len() {
            assert_eq!(HwFacts::get(&mut Reader::new(&out[..n])), None, "{n}");
        }
    }
}
