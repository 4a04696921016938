//! The device-tree and binding readers on the real Linux tree (`KNAV_KERNEL_TREE`, Linux 6.12):
//! every `.dts`, `.dtsi` and `.dtso` under `arch/` and every binding schema under
//! `Documentation/devicetree/bindings` read, counted, and a dozen facts checked by hand against
//! the files (file, line, value). Ignored by default: they need the tree.

use std::path::{Path, PathBuf};
use std::time::Instant;

use knav_hw::binding;
use knav_hw::dts::{self, IncludeKind, Site, Target};

/// The kernel tree, from `KNAV_KERNEL_TREE`.
fn tree() -> PathBuf {
    PathBuf::from(
        std::env::var_os("KNAV_KERNEL_TREE")
            .expect("set KNAV_KERNEL_TREE to a Linux 6.12 source tree"),
    )
}

/// The files under `dir` whose names end in one of `exts`, sorted; symbolic links not followed.
fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for e in entries {
            let e = e.unwrap();
            let ty = e.file_type().unwrap();
            let p = e.path();
            if ty.is_dir() {
                todo.push(p);
            } else if ty.is_file() && exts.iter().any(|x| p.to_string_lossy().ends_with(x)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn read_dts(rel: &str) -> dts::Source {
    let path = tree().join(rel);
    dts::read(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

#[test]
#[ignore = "needs the Linux tree; KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12"]
fn every_device_tree_source_reads() {
    let root = tree();
    let paths = files(&root.join("arch"), &[".dts", ".dtsi", ".dtso"]);
    let bytes: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let start = Instant::now();
    let sources: Vec<dts::Source> = bytes.iter().map(|b| dts::read(b)).collect();
    let elapsed = start.elapsed();
    let (mut nodes, mut compatibles, mut uses, mut includes, mut models) = (0, 0, 0, 0, 0);
    let mut problems = Vec::new();
    for (p, s) in paths.iter().zip(&sources) {
        nodes += s.nodes.len();
        compatibles += s.nodes.iter().map(|n| n.compatible.len()).sum::<usize>();
        uses += s.uses.len();
        includes += s.includes.len();
        models += usize::from(s.model.is_some());
        for pr in &s.problems {
            let rel = p.strip_prefix(&root).unwrap().display().to_string();
            problems.push(format!("{rel}:{}: {}", pr.line, pr.message));
        }
    }
    let mb = bytes.iter().map(Vec::len).sum::<usize>() as f64 / 1e6;
    println!(
        "{} files ({mb:.1} MB) read in {elapsed:?}: {nodes} nodes, {compatibles} compatible \
         strings, {uses} uses, {includes} includes, {models} models; {} problems:\n{}",
        paths.len(),
        problems.len(),
        problems.join("\n")
    );
    // Linux 6.12's counts.
    assert_eq!(paths.len(), 5_425);
    assert_eq!(
        (nodes, compatibles, uses, includes, models),
        (219_433, 86_725, 233_862, 12_946, 3_226)
    );
    assert_eq!(problems.len(), 0);
}

/// Facts read by hand in the files.
#[test]
#[ignore = "needs the Linux tree; KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12"]
fn device_tree_facts_checked_by_hand() {
    let s = read_dts("arch/arm/boot/dts/nxp/imx/imx27.dtsi");
    let inc = &s.includes[1];
    assert_eq!(
        (inc.path.as_str(), inc.line, inc.kind),
        ("dt-bindings/clock/imx27-clock.h", 7, IncludeKind::System)
    );
    assert_eq!(
        (s.includes[0].path.as_str(), s.includes[0].kind),
        ("imx27-pinfunc.h", IncludeKind::Local)
    );
    let i2c = s.nodes.iter().find(|n| n.labels == ["i2c1"]).unwrap();
    assert_eq!(i2c.path, "/soc/bus@10000000/i2c@10012000");
    assert_eq!(i2c.line, 258);
    assert_eq!(i2c.compatible, ["fsl,imx27-i2c", "fsl,imx21-i2c"]);
    assert_eq!(i2c.status.as_deref(), Some("disabled"));
    let soc = s.nodes.iter().find(|n| n.path == "/soc").unwrap();
    assert_eq!(
        (soc.line, soc.labels.as_slice()),
        (77, ["soc".to_string()].as_slice())
    );

    let s = read_dts("arch/arm/boot/dts/nxp/imx/imx27-eukrea-mbimxsd27-baseboard.dts");
    assert_eq!(s.model.as_deref(), Some("Eukrea MBIMXSD27"));
    assert_eq!(
        s.compatible,
        ["eukrea,mbimxsd27-baseboard", "eukrea,cpuimx27", "fsl,imx27"]
    );

    let s = read_dts("arch/arm64/boot/dts/freescale/fsl-ls1028a-qds-13bb.dtso");
    assert!(s.plugin);
    let phy = s
        .nodes
        .iter()
        .find(|n| n.labels == ["slot1_sgmii"])
        .unwrap();
    assert_eq!(
        (phy.path.as_str(), phy.line),
        ("&mdio_slot1/ethernet-phy@2", 19)
    );
    assert_eq!(phy.compatible, ["ethernet-phy-ieee802.3-c45"]);
    let used = s
        .uses
        .iter()
        .find(|u| u.target == Target::Label("slot1_sgmii".into()))
        .unwrap();
    assert_eq!(
        (used.line, &used.site),
        (27, &Site::Value("phy-handle".into()))
    );

    let s = read_dts("arch/arm64/boot/dts/renesas/draak-ebisu-panel-aa104xd12.dtso");
    assert_eq!(s.includes[0].path, "panel-aa104xd12.dtsi");
    assert_eq!(s.includes[0].line, 13);
    let panel = s.nodes.iter().find(|n| n.path == "&{/panel}").unwrap();
    assert_eq!(panel.line, 16);
    assert!(s
        .nodes
        .iter()
        .any(|n| n.path == "&{/panel}/port/endpoint" && n.labels == ["panel_in"]));

    let s = read_dts("arch/mips/boot/dts/ralink/rt3883_eval.dts");
    assert_eq!(
        (
            s.includes[0].path.as_str(),
            s.includes[0].line,
            s.includes[0].kind
        ),
        ("rt3883.dtsi", 4, IncludeKind::Dtc)
    );
    assert_eq!(s.model.as_deref(), Some("Ralink RT3883 evaluation board"));

    let s = read_dts("arch/arm64/boot/dts/allwinner/sun50i-h6-pine-h64-model-b.dts");
    let del = s.uses.iter().find(|u| u.site == Site::DeleteNode).unwrap();
    assert_eq!(
        (&del.target, del.line),
        (&Target::Label("reg_gmac_3v3".into()), 8)
    );

    let s = read_dts("arch/arm64/boot/dts/allwinner/sun50i-h616.dtsi");
    let pins = s.nodes.iter().find(|n| n.labels == ["mmc1_pins"]).unwrap();
    assert_eq!(pins.line, 275);
    assert!(
        pins.path.ends_with("/pinctrl@300b000/mmc1-pins"),
        "{}",
        pins.path
    );

    // A fragment included inside a node: its own compatible belongs to the includer's node.
    let s = read_dts("arch/powerpc/boot/dts/fsl/qoriq-sec6.0-0.dtsi");
    assert_eq!((s.nodes[0].path.as_str(), s.nodes[0].line), ("", 35));
    assert_eq!(
        s.nodes[0].compatible,
        ["fsl,sec-v6.0", "fsl,sec-v5.0", "fsl,sec-v4.0"]
    );
    assert_eq!((s.nodes[1].path.as_str(), s.nodes[1].line), ("jr@1000", 41));

    let s = read_dts("arch/arm64/boot/dts/apple/t600x-pmgr.dtsi");
    assert_eq!(
        (s.nodes[0].path.as_str(), s.nodes[0].line),
        ("&DIE_NODE(pmgr)", 8)
    );
    assert_eq!(s.nodes[1].labels, ["DIE_NODE(ps_pms_bridge)"]);
}

#[test]
#[ignore = "needs the Linux tree; KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12"]
fn every_binding_schema_reads() {
    let root = tree();
    let paths = files(&root.join("Documentation/devicetree/bindings"), &[".yaml"]);
    let bytes: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let start = Instant::now();
    let read: Vec<_> = bytes.iter().map(|b| binding::read(b)).collect();
    let elapsed = start.elapsed();
    let (mut compatibles, mut properties, mut patterns, mut refs, mut common, mut closed) =
        (0, 0, 0, 0, 0, 0);
    let mut errors = Vec::new();
    for (p, r) in paths.iter().zip(&read) {
        match r {
            Ok(b) => {
                compatibles += b.compatibles.len();
                properties += b.properties.len();
                patterns += b.pattern_properties.len();
                refs += b.refs.len();
                common += usize::from(b.select_false);
                closed +=
                    usize::from(b.additional_properties_false || b.unevaluated_properties_false);
            }
            Err(e) => {
                let rel = p.strip_prefix(&root).unwrap().display().to_string();
                errors.push(format!("{rel}:{}: {}", e.line, e.message));
            }
        }
    }
    let mb = bytes.iter().map(Vec::len).sum::<usize>() as f64 / 1e6;
    println!(
        "{} schemas ({mb:.1} MB) read in {elapsed:?}: {compatibles} compatibles, {properties} \
         properties, {patterns} patterns, {refs} refs, {common} select: false, {closed} closed; \
         {} errors:\n{}",
        paths.len(),
        errors.len(),
        errors.join("\n")
    );
    // Linux 6.12's counts.
    assert_eq!(paths.len(), 4_357);
    assert_eq!(
        (compatibles, properties, patterns, refs, common, closed),
        (19_885, 28_515, 1_861, 2_095, 24, 4_032)
    );
    // The one file saphyr refuses: YAML 1.2 does not let a plain scalar start with `-` before
    // a flow indicator (`enum: [..., wled_kn, -]`); the YAML 1.1 parsers of PyYAML and
    // ruamel (dtschema) accept it.
    assert_eq!(
        errors,
        [
            "Documentation/devicetree/bindings/pinctrl/mediatek,mt76x8-pinctrl.yaml:43: not valid \
          YAML: plain scalar cannot start with '-' followed by ,[]{}"
        ]
    );
}

fn read_binding(rel: &str) -> binding::Binding {
    let path = tree().join("Documentation/devicetree/bindings").join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    binding::read(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
}

fn line_of(v: &[binding::Named], name: &str) -> Option<u32> {
    v.iter().find(|n| n.name == name).map(|n| n.line)
}

/// Facts read by hand in the schemas.
#[test]
#[ignore = "needs the Linux tree; KNAV_KERNEL_TREE=/var/tmp/k/linux-source-6.12"]
fn binding_facts_checked_by_hand() {
    let b = read_binding("i2c/i2c-imx.yaml");
    assert_eq!(
        b.id.as_deref(),
        Some("http://devicetree.org/schemas/i2c/i2c-imx.yaml#")
    );
    assert_eq!(b.compatibles.len(), 29);
    assert_eq!(line_of(&b.compatibles, "fsl,imx1-i2c"), Some(18));
    assert_eq!(line_of(&b.compatibles, "fsl,lx2160a-i2c"), Some(30));
    assert_eq!(line_of(&b.compatibles, "fsl,imx8mp-i2c"), Some(55));
    assert_eq!(b.refs.len(), 1);
    assert_eq!(
        (b.refs[0].name.as_str(), b.refs[0].line),
        ("/schemas/i2c/i2c-controller.yaml#", 13)
    );
    let freq = b
        .properties
        .iter()
        .find(|p| p.name == "clock-frequency")
        .unwrap();
    assert_eq!(freq.line, 70);
    assert!(b.unevaluated_properties_false);

    let b = read_binding("serial/8250.yaml");
    assert_eq!(line_of(&b.compatibles, "ns8250"), Some(55));
    assert_eq!(line_of(&b.compatibles, "ns16550"), Some(57));
    assert_eq!(line_of(&b.compatibles, "ralink,rt2880-uart"), Some(91));
    assert_eq!(line_of(&b.compatibles, "nvidia,tegra234-uart"), Some(124));
    let shift = b.properties.iter().find(|p| p.name == "reg-shift").unwrap();
    assert_eq!(shift.line, 150);
    let speed = b
        .properties
        .iter()
        .find(|p| p.name == "current-speed")
        .unwrap();
    assert_eq!(speed.refs, ["/schemas/types.yaml#/definitions/uint32"]);
    assert_eq!(line_of(&b.refs, "serial.yaml#"), Some(13));
    assert_eq!(
        line_of(
            &b.refs,
            "/schemas/memory-controllers/mc-peripheral-props.yaml#"
        ),
        Some(14)
    );

    let b = read_binding("spi/arm,pl022-peripheral-props.yaml");
    assert!(b.select_false);
    assert!(b.compatibles.is_empty());
    let p = &b.properties[0];
    assert_eq!((p.name.as_str(), p.line), ("pl022,interface", 15));
    assert_eq!(p.refs, ["/schemas/types.yaml#/definitions/uint32"]);
}
