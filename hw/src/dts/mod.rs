//! A device-tree source (`.dts`, `.dtsi`, `.dtso`: dtc's syntax with the C preprocessor's lines
//! in it), read from its bytes as written, before any include is followed or any macro
//! expanded: its includes, every node block with its path, labels, `compatible`, `status` and
//! `model`, and every `&label` / `&{/path}` it uses. The preprocessor's conditionals are not
//! evaluated: the nodes of every branch are recorded.
//!
//! A node's path is the one written in this file: `/soc/i2c@30a20000` under `/ { … }`, and under
//! a reference root `&i2c1 { … }` (an overlay, or a board amending its SoC's `.dtsi`) a path
//! that starts with that root: `&i2c1/pmic@8`. Resolving labels across includes is the
//! index's job.

mod lex;

use lex::{Tok, Token};
use serde::{Deserialize, Serialize};

/// Nodes nested deeper than this are not recorded (their braces are still counted).
const MAX_DEPTH: usize = 64;

/// What one device-tree source says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// `#include` and `/include/` lines, in order.
    pub includes: Vec<Include>,
    /// Every node block as written (`/ { … }` and `&label { … }` blocks included), in order; a
    /// node written twice (two `/ { … }` blocks) is listed twice.
    pub nodes: Vec<Node>,
    /// Every `&label` and `&{/path}`, in order.
    pub uses: Vec<Use>,
    /// The board's `model`: the first root node's (`/ { model = …; }`) that has one.
    pub model: Option<String>,
    /// The board's `compatible`: the first root node's that has one.
    pub compatible: Vec<String>,
    /// Whether the file says `/plugin/;` (an overlay).
    pub plugin: bool,
    /// What could not be read (unbalanced braces, a comment or string that never ends).
    pub problems: Vec<Problem>,
}

/// An `#include` or `/include/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Include {
    /// The path as written, without its `<>` or quotes.
    pub path: String,
    pub line: u32,
    pub kind: IncludeKind,
}

/// How a file is included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IncludeKind {
    /// `#include <dt-bindings/…>`: the preprocessor's include path.
    System,
    /// `#include "x.dtsi"`: the including file's directory first.
    Local,
    /// dtc's `/include/ "x.dtsi"`.
    Dtc,
}

/// One node block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// `/soc/i2c@30a20000`, `/` for the root, `&i2c1` or `&{/soc/i2c}` for a reference root and
    /// `&i2c1/pmic@8` under one; a node outside any block (a fragment meant to be included
    /// inside one) has its bare name, and such a fragment's own properties (`compatible = …;`
    /// outside any block) belong to a node of path `""` (the node it is included into), listed
    /// at the first of them.
    pub path: String,
    /// The name without its unit address (`i2c`); empty for the root; the reference itself
    /// (`&i2c1`) for a reference root.
    pub name: String,
    /// What follows `@` (`30a20000`).
    pub unit_address: Option<String>,
    /// The labels written before it (`l1: l2: node {`).
    pub labels: Vec<String>,
    /// The line of its name.
    pub line: u32,
    /// The strings of its `compatible` property.
    pub compatible: Vec<String>,
    /// Its `status` (`okay`, `disabled`, …).
    pub status: Option<String>,
    /// Its `model`.
    pub model: Option<String>,
}

/// A `&label` or `&{/path}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Use {
    pub target: Target,
    pub line: u32,
    pub site: Site,
}

/// What a reference names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Target {
    /// `&gpio1`: the label.
    Label(String),
    /// `&{/soc/gpio}`: the path.
    Path(String),
}

/// Where a reference is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Site {
    /// In the value of this property (`interrupt-parent = <&gic>;`).
    Value(String),
    /// As a block's root (`&i2c1 { … }`).
    Root,
    /// After `/delete-node/`.
    DeleteNode,
    /// After `/omit-if-no-ref/`.
    OmitIfNoRef,
}

/// Something the reader could not make sense of, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub line: u32,
    pub message: String,
}

impl Problem {
    fn new(line: u32, message: &str) -> Problem {
        Problem {
            line,
            message: message.to_string(),
        }
    }
}

/// Reads one device-tree source. Never fails: what cannot be read is in `problems`.
pub fn read(src: &[u8]) -> Source {
    let (tokens, includes, problems) = lex::tokens(src);
    let mut p = Parser {
        t: &tokens,
        i: 0,
        stack: Vec::new(),
        fragment: None,
        out: Source {
            includes,
            problems,
            ..Source::default()
        },
    };
    p.run();
    let mut out = p.out;
    for n in out.nodes.iter().filter(|n| n.path == "/") {
        if out.model.is_none() {
            out.model.clone_from(&n.model);
        }
        if out.compatible.is_empty() {
            out.compatible.clone_from(&n.compatible);
        }
    }
    out
}

/// Bytes of the source as text (not UTF-8 replaced).
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// An open node block: its path and its index in `nodes` (`None` past [`MAX_DEPTH`]).
struct Frame {
    path: String,
    node: Option<usize>,
    line: u32,
}

struct Parser<'t> {
    t: &'t [Token<'t>],
    i: usize,
    stack: Vec<Frame>,
    /// The node of a fragment's own properties, once it has one.
    fragment: Option<usize>,
    out: Source,
}

impl<'t> Parser<'t> {
    fn tok(&self, k: usize) -> Option<&Tok<'t>> {
        self.t.get(self.i + k).map(|t| &t.tok)
    }

    fn line(&self) -> u32 {
        self.t.get(self.i).map_or(0, |t| t.line)
    }

    fn run(&mut self) {
        while self.i < self.t.len() {
            self.statement();
        }
        for f in std::mem::take(&mut self.stack) {
            let msg = format!("`{}` is never closed", f.path);
            self.out.problems.push(Problem {
                line: f.line,
                message: msg,
            });
        }
    }

    /// One statement: a node block, a property, a directive or a closing `};`.
    fn statement(&mut self) {
        let mut labels = Vec::new();
        while let Some(Tok::Label(l)) = self.tok(0) {
            labels.push(text(l));
            self.i += 1;
        }
        let line = self.line();
        let opens = self.tok(1) == Some(&Tok::Punct(b'{'));
        match self.tok(0).cloned() {
            None => {}
            Some(Tok::Punct(b'}')) => self.close(line),
            Some(Tok::Directive(d)) => self.directive(d, line),
            Some(Tok::Slash) if opens => self.open("/".to_string(), String::new(), labels, line),
            Some(Tok::Ref(t)) if opens => {
                let written = match &t {
                    Target::Label(l) => format!("&{l}"),
                    Target::Path(p) => format!("&{{{p}}}"),
                };
                self.use_ref(t, line, Site::Root);
                self.open(written.clone(), written, labels, line);
            }
            Some(Tok::Word(w)) if opens => {
                let w = text(w);
                // Past MAX_DEPTH no path is built: they would grow with the depth.
                let path = match self.stack.last() {
                    _ if self.stack.len() >= MAX_DEPTH => String::new(),
                    Some(f) if f.path == "/" => format!("/{w}"),
                    Some(f) => format!("{}/{w}", f.path),
                    None => w.clone(),
                };
                self.open(path, w, labels, line);
            }
            Some(Tok::Word(w)) => {
                self.i += 1;
                if self.tok(0) == Some(&Tok::Punct(b'=')) {
                    self.i += 1;
                    self.property(w, line);
                } else if self.tok(0) == Some(&Tok::Punct(b';')) {
                    self.i += 1;
                }
            }
            Some(_) => self.i += 1,
        }
    }

    fn use_ref(&mut self, target: Target, line: u32, site: Site) {
        self.out.uses.push(Use { target, line, site });
    }

    /// Opens a block at its name (the `{` follows).
    fn open(&mut self, path: String, written: String, labels: Vec<String>, line: u32) {
        self.i += 2;
        let recorded =
            self.stack.len() < MAX_DEPTH && self.stack.last().is_none_or(|f| f.node.is_some());
        let node = recorded.then(|| {
            let (name, unit_address) = match written.split_once('@') {
                Some((n, u)) if !written.starts_with('&') => (n.to_string(), Some(u.to_string())),
                _ if written == "/" => (String::new(), None),
                _ => (written, None),
            };
            self.out.nodes.push(Node {
                path: path.clone(),
                name,
                unit_address,
                labels,
                line,
                compatible: Vec::new(),
                status: None,
                model: None,
            });
            self.out.nodes.len() - 1
        });
        self.stack.push(Frame { path, node, line });
    }

    /// The node a fragment's own properties belong to (path `""`), made at the first of them.
    fn fragment(&mut self, line: u32) -> usize {
        if let Some(i) = self.fragment {
            return i;
        }
        self.out.nodes.push(Node {
            path: String::new(),
            name: String::new(),
            unit_address: None,
            labels: Vec::new(),
            line,
            compatible: Vec::new(),
            status: None,
            model: None,
        });
        self.fragment = Some(self.out.nodes.len() - 1);
        self.out.nodes.len() - 1
    }

    /// `}` and its `;`.
    fn close(&mut self, line: u32) {
        self.i += 1;
        if self.tok(0) == Some(&Tok::Punct(b';')) {
            self.i += 1;
        }
        if self.stack.pop().is_none() {
            self.out
                .problems
                .push(Problem::new(line, "a `}` that closes no block"));
        }
    }

    /// A directive at the start of a statement.
    fn directive(&mut self, name: &[u8], line: u32) {
        self.i += 1;
        match name {
            b"plugin" => self.out.plugin = true,
            b"delete-node" => {
                if let Some(Tok::Ref(t)) = self.tok(0).cloned() {
                    self.use_ref(t, line, Site::DeleteNode);
                }
            }
            b"omit-if-no-ref" => {
                // Either `/omit-if-no-ref/ &label;` or a node block, read as the next statement.
                if let Some(Tok::Ref(t)) = self.tok(0).cloned() {
                    self.use_ref(t, line, Site::OmitIfNoRef);
                    self.i += 1;
                }
                return;
            }
            _ => {}
        }
        self.skip_to_semicolon();
    }

    /// Past the next `;` at this level; stops before a `{` or `}` (a missing `;`).
    fn skip_to_semicolon(&mut self) {
        while let Some(t) = self.tok(0) {
            match t {
                Tok::Punct(b';') => {
                    self.i += 1;
                    return;
                }
                Tok::Punct(b'{' | b'}') => return,
                _ => self.i += 1,
            }
        }
    }

    /// The value of property `name` (after its `=`) up to its `;`: its strings and references.
    fn property(&mut self, name: &[u8], line: u32) {
        let mut strings = Vec::new();
        while let Some(t) = self.t.get(self.i) {
            match &t.tok {
                Tok::Punct(b';') => {
                    self.i += 1;
                    break;
                }
                Tok::Punct(b'{' | b'}') => {
                    let msg = format!("property `{}` has no `;`", text(name));
                    self.out.problems.push(Problem {
                        line: t.line,
                        message: msg,
                    });
                    break;
                }
                Tok::Str(s) => strings.push(*s),
                Tok::Ref(r) => {
                    let (target, line) = (r.clone(), t.line);
                    self.use_ref(target, line, Site::Value(text(name)));
                }
                _ => {}
            }
            self.i += 1;
        }
        let node = match self.stack.last() {
            Some(f) => f.node,
            None => Some(self.fragment(line)),
        };
        let Some(node) = node else {
            return;
        };
        let node = &mut self.out.nodes[node];
        let unescaped = || {
            strings
                .iter()
                .filter_map(|s| crate::strings::literal(s))
                .map(|(t, _)| t)
        };
        match name {
            b"compatible" => node.compatible = unescaped().collect(),
            b"status" => node.status = unescaped().next(),
            b"model" => node.model = unescaped().next(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each use of `s`: its target, line and site.
    fn uses(s: &Source) -> Vec<(&Target, u32, &Site)> {
        s.uses
            .iter()
            .map(|u| (&u.target, u.line, &u.site))
            .collect()
    }

    /// Modelled on arch/arm/boot/dts/nxp/imx/imx27.dtsi (its head and its first I2C node).
    const IMX27: &[u8] = br#"// SPDX-License-Identifier: GPL-2.0-or-later
#include "imx27-pinfunc.h"
#include <dt-bindings/clock/imx27-clock.h>
/ {
	#address-cells = <1>;
	/*
	 * a { brace } in a comment
	 */
	chosen {};
	aliases {
		i2c0 = &i2c1;
	};
	soc {
		aipi@10000000 { /* AIPI1 */
			i2c1: i2c@10012000 {
				compatible = "fsl,imx27-i2c", "fsl,imx21-i2c";
				clocks = <&clks IMX27_CLK_I2C1_IPG_GATE>;
				status = "disabled";
			};
		};
	};
};
"#;

    fn paths(s: &Source) -> Vec<&str> {
        s.nodes.iter().map(|n| n.path.as_str()).collect()
    }

    #[test]
    fn a_soc_dtsi_its_includes_nodes_and_uses() {
        let s = read(IMX27);
        assert_eq!(s.problems, []);
        assert_eq!(
            s.includes,
            [
                Include {
                    path: "imx27-pinfunc.h".into(),
                    line: 2,
                    kind: IncludeKind::Local
                },
                Include {
                    path: "dt-bindings/clock/imx27-clock.h".into(),
                    line: 3,
                    kind: IncludeKind::System
                },
            ]
        );
        assert_eq!(
            paths(&s),
            [
                "/",
                "/chosen",
                "/aliases",
                "/soc",
                "/soc/aipi@10000000",
                "/soc/aipi@10000000/i2c@10012000"
            ]
        );
        let i2c = &s.nodes[5];
        assert_eq!(i2c.name, "i2c");
        assert_eq!(i2c.unit_address.as_deref(), Some("10012000"));
        assert_eq!(i2c.labels, ["i2c1"]);
        assert_eq!(i2c.line, 15);
        assert_eq!(i2c.compatible, ["fsl,imx27-i2c", "fsl,imx21-i2c"]);
        assert_eq!(i2c.status.as_deref(), Some("disabled"));
        let uses = uses(&s);
        assert_eq!(
            uses,
            [
                (
                    &Target::Label("i2c1".into()),
                    11,
                    &Site::Value("i2c0".into())
                ),
                (
                    &Target::Label("clks".into()),
                    17,
                    &Site::Value("clocks".into())
                ),
            ]
        );
    }

    /// Modelled on arch/arm64/boot/dts/freescale/fsl-ls1028a-qds-13bb.dtso.
    #[test]
    fn an_overlay_its_reference_roots_and_their_children() {
        let s = read(
            b"/dts-v1/;\n/plugin/;\n\n&mdio_slot1 {\n\t#address-cells = <1>;\n\
              \tslot1_sgmii: ethernet-phy@2 {\n\t\t/* AQR112 */\n\t\treg = <0x2>;\n\
              \t\tcompatible = \"ethernet-phy-ieee802.3-c45\";\n\t};\n};\n\n\
              &enetc_port0 {\n\tphy-handle = <&slot1_sgmii>;\n\tstatus = \"okay\";\n};\n\
              &{/soc/spi@2100000} {\n\tflash@0 { };\n};\n",
        );
        assert!(s.plugin);
        assert_eq!(s.problems, []);
        assert_eq!(
            paths(&s),
            [
                "&mdio_slot1",
                "&mdio_slot1/ethernet-phy@2",
                "&enetc_port0",
                "&{/soc/spi@2100000}",
                "&{/soc/spi@2100000}/flash@0"
            ]
        );
        assert_eq!(s.nodes[0].name, "&mdio_slot1");
        assert_eq!(s.nodes[1].labels, ["slot1_sgmii"]);
        assert_eq!(s.nodes[1].line, 6);
        assert_eq!(s.nodes[2].status.as_deref(), Some("okay"));
        let uses = uses(&s);
        assert_eq!(
            uses,
            [
                (&Target::Label("mdio_slot1".into()), 4, &Site::Root),
                (&Target::Label("enetc_port0".into()), 13, &Site::Root),
                (
                    &Target::Label("slot1_sgmii".into()),
                    14,
                    &Site::Value("phy-handle".into())
                ),
                (&Target::Path("/soc/spi@2100000".into()), 17, &Site::Root),
            ]
        );
    }

    #[test]
    fn a_board_its_model_and_compatible() {
        let s = read(
            b"/dts-v1/;\n#include \"imx27.dtsi\"\n/ {\n\tmodel = \"Eukrea CPUIMX27\";\n\
              \tcompatible = \"eukrea,cpuimx27\", \"fsl,imx27\";\n};\n/ {\n\tmodel = \"x\";\n};\n",
        );
        assert_eq!(s.model.as_deref(), Some("Eukrea CPUIMX27"));
        assert_eq!(s.compatible, ["eukrea,cpuimx27", "fsl,imx27"]);
        assert_eq!(paths(&s), ["/", "/"]);
        assert_eq!(s.nodes[1].model.as_deref(), Some("x"));
    }

    #[test]
    fn directives_byte_strings_chars_and_expressions_are_skipped() {
        let s = read(
            b"/dts-v1/;\n/memreserve/ 0x10000000 0x4000;\n/include/ \"common.dtsi\"\n\
              / {\n\tl1: l2: node@0 {\n\t\tmac = [00 11 22 33 44 55];\n\
              \t\tval = /bits/ 16 <0x1 'a' '}'>;\n\t\tsum = <(1 + (2 * 3)) PIN(4, 5) (X > 2 ? 1 : 0)>;\n\
              \t\tpins = <&{/pinctrl/x} 1>;\n\t\tstr = \"}{\", \"\\\"\";\n\t};\n\
              \t/delete-node/ &old;\n\t/delete-property/ foo;\n\t/omit-if-no-ref/ pins: pins {\n\t};\n\
              \t/omit-if-no-ref/ &lonely;\n};\n",
        );
        assert_eq!(s.problems, []);
        assert_eq!(
            s.includes,
            [Include {
                path: "common.dtsi".into(),
                line: 3,
                kind: IncludeKind::Dtc
            }]
        );
        assert_eq!(paths(&s), ["/", "/node@0", "/pins"]);
        assert_eq!(s.nodes[1].labels, ["l1", "l2"]);
        assert_eq!(s.nodes[2].labels, ["pins"]);
        assert_eq!(s.nodes[2].line, 14);
        let uses = uses(&s);
        assert_eq!(
            uses,
            [
                (
                    &Target::Path("/pinctrl/x".into()),
                    9,
                    &Site::Value("pins".into())
                ),
                (&Target::Label("old".into()), 12, &Site::DeleteNode),
                (&Target::Label("lonely".into()), 16, &Site::OmitIfNoRef),
            ]
        );
    }

    #[test]
    fn preprocessor_lines_and_both_branches_of_a_conditional() {
        let s = read(
            b"#define PAD(x) \\\n\t((x) { }\n#ifdef CONFIG_A\n&a {\n\tx { };\n};\n#else\n\
              &b {\n\ty { };\n};\n#endif\n/ {\n\t#address-cells = <1>;\n\t#size-cells = <0>;\n};\n",
        );
        assert_eq!(s.problems, []);
        assert_eq!(paths(&s), ["&a", "&a/x", "&b", "&b/y", "/"]);
        assert_eq!(s.nodes[4].line, 12);
    }

    /// Modelled on arch/arm64/boot/dts/apple/t600x-pmgr.dtsi and
    /// arch/arm64/boot/dts/marvell/armada-cp11x.dtsi: labels, references and names made by macros.
    #[test]
    fn labels_references_and_names_made_by_macros() {
        let s = read(
            b"&DIE_NODE(pmgr) {\n\tDIE_NODE(ps_sio): power-controller@1c0 {\n\
              \t\tpower-domains = <&DIE_NODE(ps_pms)>, <&x>;\n\t};\n};\n\
              / {\n\tCP11X_LABEL(ic): CP11X_NODE_NAME(ic-thermal) {\n\t\tp = <&CP11X_LABEL(t) 0>;\n\t};\n};\n",
        );
        assert_eq!(s.problems, []);
        assert_eq!(
            paths(&s),
            [
                "&DIE_NODE(pmgr)",
                "&DIE_NODE(pmgr)/power-controller@1c0",
                "/",
                "/CP11X_NODE_NAME(ic-thermal)"
            ]
        );
        assert_eq!(s.nodes[1].labels, ["DIE_NODE(ps_sio)"]);
        assert_eq!(s.nodes[3].labels, ["CP11X_LABEL(ic)"]);
        let targets: Vec<_> = s.uses.iter().map(|u| (&u.target, u.line)).collect();
        assert_eq!(
            targets,
            [
                (&Target::Label("DIE_NODE(pmgr)".into()), 1),
                (&Target::Label("DIE_NODE(ps_pms)".into()), 3),
                (&Target::Label("x".into()), 3),
                (&Target::Label("CP11X_LABEL(t)".into()), 8),
            ]
        );
    }

    /// Modelled on arch/powerpc/boot/dts/fsl/qoriq-sec6.0-0.dtsi, included inside a node.
    #[test]
    fn a_fragments_own_properties_belong_to_the_node_it_is_included_into() {
        let s = read(
            b"compatible = \"fsl,sec-v6.0\", \"fsl,sec-v5.0\",\n\t\"fsl,sec-v4.0\";\n\
              #address-cells = <1>;\njr@1000 {\n\tcompatible = \"fsl,sec-v6.0-job-ring\";\n};\n\
              status = \"okay\";\n",
        );
        assert_eq!(paths(&s), ["", "jr@1000"]);
        assert_eq!(s.nodes[0].line, 1);
        assert_eq!(
            s.nodes[0].compatible,
            ["fsl,sec-v6.0", "fsl,sec-v5.0", "fsl,sec-v4.0"]
        );
        assert_eq!(s.nodes[0].status.as_deref(), Some("okay"));
        assert_eq!(s.nodes[1].compatible, ["fsl,sec-v6.0-job-ring"]);
    }

    #[test]
    fn broken_input_is_reported_not_fatal() {
        let s = read(b"/ {\n\ta {\n\t\tp = <1>\n\t};\n}; };\n/* never");
        let lines: Vec<u32> = s.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [6, 4, 5]);
        assert_eq!(paths(&s), ["/", "/a"]);
        let deep = b"n {".repeat(200);
        let s = read(&deep);
        assert_eq!(s.nodes.len(), MAX_DEPTH);
        assert_eq!(s.problems.len(), 200);
        // Paths are not built past the limit: this would take minutes if they were.
        let deep = b"name {".repeat(200_000);
        let start = std::time::Instant::now();
        assert_eq!(read(&deep).nodes.len(), MAX_DEPTH);
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_read_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let _ = read(&bytes);
        }

        #[test]
        fn any_prefix_of_a_real_file_reads(cut in 0..IMX27.len()) {
            let s = read(&IMX27[..cut]);
            proptest::prop_assert!(s.nodes.len() <= 6);
        }
    }
}
