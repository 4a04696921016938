//! find_device on the real Linux 6.12 tree, `#[ignore]`d by default: run them with
//! `KNAV_KERNEL_TREE=<tree> KNAV_INDEX_DIR=<dir> cargo test --release --test device_kernel --
//! --ignored` (the tree is indexed into `KNAV_INDEX_DIR` on first use, about a minute; without
//! it, into the tree's own `.knav`). Every fact below was read in the files it names.

use serde_json::Value;

/// `knav device COMPATIBLE --format json` on the tree of `KNAV_KERNEL_TREE`.
fn device(compatible: &str) -> Value {
    let tree = match std::env::var("KNAV_KERNEL_TREE") {
        Ok(tree) if !tree.is_empty() => tree,
        _ => panic!(
            "KNAV_KERNEL_TREE is not set: set it to a Linux 6.12 source tree (and KNAV_INDEX_DIR \
             to a directory of yours when the tree is read-only)"
        ),
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_knav"))
        .args([
            "device", compatible, "--format", "json", "--limit", "100000",
        ])
        .args(["--root", &tree])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The row of board `path`, with its nodes.
fn board<'a>(v: &'a Value, path: &str) -> &'a Value {
    v["results"]["board_rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["path"] == path)
        .unwrap_or_else(|| panic!("no board {path}: {v}"))
}

/// The binding rows as `path:line`.
fn bindings(v: &Value) -> Vec<String> {
    v["results"]["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| format!("{}:{}", b["path"].as_str().unwrap(), b["line"]))
        .collect()
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn fsl_imx21_i2c_is_documented_once_and_enabled_on_the_imx25_pdk_through_its_dtsi() {
    let v = device("fsl,imx21-i2c");
    // i2c-imx.yaml:19 `- const: fsl,imx21-i2c` (again at 37 and 56: listed once).
    assert_eq!(
        bindings(&v),
        ["Documentation/devicetree/bindings/i2c/i2c-imx.yaml:19"]
    );
    assert_eq!(
        v["results"]["bindings"][0]["title"],
        "Freescale Inter IC (I2C) and High Speed Inter IC (HS-I2C) for i.MX"
    );
    // imx25-pdk.dts:8 `#include "imx25.dtsi"`, whose i2c1 (line 100, under soc and the AIPS1
    // bus, `status = "disabled"`) the board enables at line 120 (`&i2c1 { … status = "okay"; }`).
    let b = board(&v, "arch/arm/boot/dts/nxp/imx/imx25-pdk.dts");
    assert_eq!(b["model"], "Freescale i.MX25 Product Development Kit");
    let n = b["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["line"] == 100)
        .unwrap_or_else(|| panic!("{b}"));
    assert_eq!(n["path"], "arch/arm/boot/dts/nxp/imx/imx25.dtsi");
    assert_eq!(n["node"], "/soc/bus@43f00000/i2c@43f80000");
    assert_eq!(n["status"], "okay");
    // Its i2c3 (imx25.dtsi:111) the board leaves disabled.
    let n = b["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["line"] == 111)
        .unwrap_or_else(|| panic!("{b}"));
    assert_eq!(n["status"], "disabled");
    assert_eq!(v["results"]["dts_nodes"], 0);
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn arm_cortex_a9_gic_reaches_the_pandaboard_through_two_includes() {
    let v = device("arm,cortex-a9-gic");
    // arm,gic.yaml:33 `- arm,cortex-a9-gic` (an enum item of properties: compatible).
    assert!(
        bindings(&v).contains(
            &"Documentation/devicetree/bindings/interrupt-controller/arm,gic.yaml:33".to_string()
        ),
        "{v}"
    );
    // omap4-panda.dts:7 includes omap443x.dtsi, whose line 8 includes omap4.dtsi: the gic at
    // line 70, no status written.
    let b = board(&v, "arch/arm/boot/dts/ti/omap/omap4-panda.dts");
    assert_eq!(b["model"], "TI OMAP4 PandaBoard");
    assert_eq!(
        b["nodes"][0],
        serde_json::json!({"path": "arch/arm/boot/dts/ti/omap/omap4.dtsi", "line": 70,
                           "node": "/interrupt-controller@48241000"})
    );
    assert!(
        v["results"]["boards"].as_u64().unwrap() > 100,
        "{}",
        v["results"]["boards"]
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn snps_dwmac_is_documented_by_its_schema_and_the_glue_layers_and_enabled_on_marduk() {
    let v = device("snps,dwmac");
    let got = bindings(&v);
    // snps,dwmac.yaml:23 is under `select:`, not the compatible property: line 87 is.
    for want in [
        "Documentation/devicetree/bindings/net/snps,dwmac.yaml:87",
        "Documentation/devicetree/bindings/net/amlogic,meson-dwmac.yaml:145",
        "Documentation/devicetree/bindings/net/starfive,jh7110-dwmac.yaml:29",
        "Documentation/devicetree/bindings/net/renesas,rzn1-gmac.yaml:31",
    ] {
        assert!(got.contains(&want.to_string()), "{want}: {got:?}");
    }
    let own = v["results"]["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["path"] == "Documentation/devicetree/bindings/net/snps,dwmac.yaml")
        .unwrap();
    assert_eq!(own["title"], "Synopsys DesignWare MAC");
    // pistachio_marduk.dts:10 includes pistachio.dtsi (enet at 779, disabled at 793) and
    // enables it at line 107.
    let b = board(&v, "arch/mips/boot/dts/img/pistachio_marduk.dts");
    assert_eq!(b["model"], "IMG Marduk (Creator Ci40)");
    assert_eq!(
        b["nodes"][0],
        serde_json::json!({"path": "arch/mips/boot/dts/img/pistachio.dtsi", "line": 779,
                           "node": "/ethernet@18140000", "status": "okay"})
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn a_boards_own_compatible_is_its_root_node_documented_by_the_platform_schema() {
    let v = device("fsl,imx25-pdk");
    // fsl.yaml:37 `- fsl,imx25-pdk`; imx25-pdk.dts:10 `/ {` with it at line 12.
    assert_eq!(
        bindings(&v),
        ["Documentation/devicetree/bindings/arm/fsl.yaml:37"]
    );
    assert_eq!(
        v["results"]["bindings"][0]["title"],
        "Freescale i.MX Platforms"
    );
    assert_eq!(
        (
            v["results"]["boards"].as_u64(),
            v["results"]["dts_nodes"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(
        v["results"]["board_rows"][0]["nodes"][0],
        serde_json::json!({"path": "arch/arm/boot/dts/nxp/imx/imx25-pdk.dts", "line": 10, "node": "/"})
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn a_misspelt_compatible_is_not_found_with_the_right_one_near() {
    let v = device("fsl,imx21-i2d");
    assert!(
        v["error"].as_str().unwrap().contains("'fsl,imx21-i2d'"),
        "{v}"
    );
    let near: Vec<&str> = v["near_misses"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(near.contains(&"fsl,imx21-i2c"), "{near:?}");
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE=<Linux 6.12 tree>; run with --ignored"]
fn drivers_of_an_imx_compatible_an_intel_nic_and_a_table_in_a_header() {
    // drivers/i2c/busses/i2c-imx.c:279 `{ .compatible = "fsl,imx21-i2c", … }`, named by
    // i2c_imx_driver (:1630) whose probe is i2c_imx_probe (:1446); Makefile:75
    // `obj-$(CONFIG_I2C_IMX) += i2c-imx.o`.
    let v = device("fsl,imx21-i2c");
    let d = &v["results"]["drivers"][0];
    assert_eq!(
        (
            d["path"].as_str(),
            d["line"].as_u64(),
            d["driver_line"].as_u64(),
            d["probe"]["line"].as_u64(),
            d["config"]["symbol"].as_str()
        ),
        (
            Some("drivers/i2c/busses/i2c-imx.c"),
            Some(279),
            Some(1630),
            Some(1446),
            Some("CONFIG_I2C_IMX")
        ),
        "{v}"
    );
    // e1000e's entry (netdev.c:7875, PCI_VDEVICE(INTEL, E1000_DEV_ID_PCH_SPT_I219_V2)) first,
    // then Intel's vendor-wide class entries.
    let v = device("pci:8086:15b8");
    let rows = v["results"]["drivers"].as_array().unwrap();
    assert_eq!(
        (rows[0]["path"].as_str(), rows[0]["line"].as_u64()),
        (
            Some("drivers/net/ethernet/intel/e1000e/netdev.c"),
            Some(7875)
        ),
        "{v}"
    );
    assert_eq!(rows[0]["config"]["symbol"], "CONFIG_E1000E", "{v}");
    assert!(rows[1..].iter().all(|r| r["key"] == "pci:8086:*"), "{v}");
    // dl2k.h:422 defines the table; dl2k.c:1878's rio_driver names it.
    let v = device("pci:13f0:2021");
    let d = &v["results"]["drivers"][0];
    assert_eq!(
        (d["path"].as_str(), d["line"].as_u64(), d["driver"].as_str()),
        (
            Some("drivers/net/ethernet/dlink/dl2k.h"),
            Some(422),
            Some("pci_driver rio_driver (drivers/net/ethernet/dlink/dl2k.c:1878)")
        ),
        "{v}"
    );
}
