//! `knav device` on drivers, end to end: the fixture's copy gains the headers that define
//! `pci_device_id`, `PCI_DEVICE` and `PCI_VDEVICE`, a platform driver matching two of its
//! compatibles (a property named through a local header's `#define`), a PCI driver with an
//! exact and a vendor-wide entry, and the Makefile and Kconfig lines that build them. Exact
//! files, lines, probe functions, CONFIG symbols and y/m/n; `--driver` by structure, `.name`
//! and file; a local header edited reads the file that includes it again.

use serde_json::{json as j, Value};

mod common;
use common::{fixture, json, knav, Tree};

const I2C: &str = "drivers/i2c/busses/i2c-acme.c";
const PCI: &str = "drivers/net/acme-pci.c";

const I2C_C: &str = "// SPDX-License-Identifier: GPL-2.0
#include <linux/mod_devicetable.h>
#include \"i2c-acme.h\"

static int acme_i2c_probe(struct platform_device *pdev)
{
\tu32 freq;

\tof_property_read_u32(pdev->dev.of_node, \"clock-frequency\", &freq);
\treturn device_property_read_bool(&pdev->dev, ACME_WAKE_PROP);
}

static void acme_i2c_remove(struct platform_device *pdev)
{
}

static const struct of_device_id acme_i2c_dt_ids[] = {
\t{ .compatible = \"fsl,imx21-i2c\" },
\t{ .compatible = \"acme,soc-i2c\" },
\t{ /* sentinel */ }
};
MODULE_DEVICE_TABLE(of, acme_i2c_dt_ids);

static struct platform_driver acme_i2c_driver = {
\t.probe = acme_i2c_probe,
\t.remove = acme_i2c_remove,
\t.driver = {
\t\t.name = \"acme-i2c\",
\t\t.of_match_table = acme_i2c_dt_ids,
\t},
};
";

const PCI_C: &str = "// SPDX-License-Identifier: GPL-2.0
#include <linux/pci.h>
#include <linux/pci_ids.h>

static int acme_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
\treturn 0;
}

static const struct pci_device_id acme_pci_tbl[] = {
\t{ PCI_VDEVICE(ACME, 0x0001), 0 },
\t{ PCI_DEVICE(PCI_VENDOR_ID_ACME, PCI_ANY_ID) },
\t{ }
};
MODULE_DEVICE_TABLE(pci, acme_pci_tbl);

static struct pci_driver acme_pci_driver = {
\t.name = \"acme-pci\",
\t.id_table = acme_pci_tbl,
\t.probe = acme_pci_probe,
};
";

/// The fixture's copy with the drivers, their headers and build lines.
fn tree(name: &str) -> Tree {
    let t = fixture(name);
    let files = [
        (
            "include/linux/mod_devicetable.h",
            "struct pci_device_id {\n\t__u32 vendor, device;\n\t__u32 subvendor, subdevice;\n\
             \t__u32 class, class_mask;\n\tkernel_ulong_t driver_data;\n\t__u32 override_only;\n};\n\
             #define PCI_ANY_ID (~0)\n\
             struct of_device_id {\n\tchar name[32];\n\tchar type[32];\n\tchar compatible[128];\n\
             \tconst void *data;\n};\n",
        ),
        (
            "include/linux/pci.h",
            "#include <linux/mod_devicetable.h>\n\
             #define PCI_DEVICE(vend,dev) \\\n\t.vendor = (vend), .device = (dev), \\\n\
             \t.subvendor = PCI_ANY_ID, .subdevice = PCI_ANY_ID\n\
             #define PCI_VDEVICE(vend, dev) \\\n\t.vendor = PCI_VENDOR_ID_##vend, .device = (dev), \\\n\
             \t.subvendor = PCI_ANY_ID, .subdevice = PCI_ANY_ID, 0, 0\n",
        ),
        (
            "include/linux/pci_ids.h",
            "#define PCI_VENDOR_ID_ACME\t0x1de5\n",
        ),
        (
            "drivers/i2c/busses/i2c-acme.h",
            "#define ACME_WAKE_PROP \"acme,wakeup\"\n",
        ),
        (I2C, I2C_C),
        (PCI, PCI_C),
        (
            "drivers/i2c/busses/Makefile",
            "obj-$(CONFIG_I2C_ACME) += i2c-acme.o\n",
        ),
        ("drivers/net/Makefile", "obj-$(CONFIG_ACME_PCI) += acme-pci.o\n"),
        ("config.acme", "CONFIG_I2C_ACME=m\n# CONFIG_ACME_PCI is not set\n"),
    ];
    for (path, text) in files {
        let p = t.root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let append = |path: &str, text: &str| {
        let p = t.root.join(path);
        let old = std::fs::read_to_string(&p).unwrap();
        std::fs::write(p, old + text).unwrap();
    };
    append(
        "Makefile",
        "obj-y += drivers/i2c/busses/\nobj-y += drivers/net/\n",
    );
    append(
        "Kconfig",
        "\nconfig I2C_ACME\n\ttristate \"Acme SoC I2C controller\"\n\n\
         config ACME_PCI\n\ttristate \"Acme PCI card\"\n",
    );
    t
}

/// The 1-based line of the first line of `text` holding `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
}

/// The config's path in `t`.
fn config(t: &Tree) -> String {
    t.root.join("config.acme").display().to_string()
}

#[test]
fn a_compatible_names_its_driver_probe_config_and_whether_the_config_builds_it() {
    let t = tree("device-drivers-compat");
    let cfg = config(&t);
    let (code, v) = json(&t, &["device", "acme,soc-i2c", "--active-config", &cfg]);
    assert_eq!(code, 0, "{v}");
    let kconfig_line = line_of(
        &std::fs::read_to_string(t.root.join("Kconfig")).unwrap(),
        "I2C_ACME",
    );
    assert_eq!(
        v["results"]["drivers"],
        j!([{
            "path": I2C,
            "line": line_of(I2C_C, "acme,soc-i2c"),
            "how": "of_device_id acme_i2c_dt_ids",
            "driver": "platform_driver acme_i2c_driver",
            "driver_line": line_of(I2C_C, "struct platform_driver"),
            "probe": {"name": "acme_i2c_probe", "path": I2C, "line": line_of(I2C_C, "int acme_i2c_probe")},
            "remove": {"name": "acme_i2c_remove", "path": I2C, "line": line_of(I2C_C, "void acme_i2c_remove")},
            "config": {
                "symbol": "CONFIG_I2C_ACME",
                "makefile": "drivers/i2c/busses/Makefile:1",
                "kconfig": format!("Kconfig:{kconfig_line}"),
                "prompt": "Acme SoC I2C controller",
                "built": "m",
            },
        }]),
        "{v}"
    );
    // The binding and the boards are still there.
    assert_eq!(v["results"]["bindings"][0]["line"], 15, "{v}");
    assert_eq!(v["results"]["boards"], 2, "{v}");
    let (code, out) = knav(&t, &["device", "fsl,imx21-i2c"]);
    assert_eq!(code, 0);
    let second = out.lines().nth(1).unwrap_or_default();
    assert_eq!(
        second,
        format!(
            "{I2C}:{}: of_device_id acme_i2c_dt_ids · platform_driver acme_i2c_driver :{} · \
             probe acme_i2c_probe :5 · remove acme_i2c_remove :13 · CONFIG_I2C_ACME \
             \"Acme SoC I2C controller\" (Kconfig:{kconfig_line})",
            line_of(I2C_C, "fsl,imx21-i2c"),
            line_of(I2C_C, "struct platform_driver")
        ),
        "{out}"
    );
}

#[test]
fn a_pci_id_finds_the_exact_entry_and_the_vendors_wildcard_one() {
    let t = tree("device-drivers-pci");
    let cfg = config(&t);
    let (code, v) = json(&t, &["device", "PCI:0x1DE5:1", "--active-config", &cfg]);
    assert_eq!(code, 0, "{v}");
    let d = &v["results"];
    assert_eq!(d["compatible"], "pci:1de5:0001");
    let rows: Vec<(u64, Option<&str>, &str)> = d["drivers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["line"].as_u64().unwrap(),
                r["key"].as_str(),
                r["entry"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                line_of(PCI_C, "PCI_VDEVICE"),
                None,
                "PCI_VDEVICE: vendor=1de5 device=0001 subvendor=* subdevice=*"
            ),
            (
                line_of(PCI_C, "PCI_DEVICE(PCI"),
                Some("pci:1de5:*"),
                "PCI_DEVICE: vendor=1de5 device=* subvendor=* subdevice=*"
            ),
        ],
        "{v}"
    );
    let c = &d["drivers"][0]["config"];
    assert_eq!(
        (c["symbol"].as_str(), c["built"].as_str(), c["why"].as_str()),
        (
            Some("CONFIG_ACME_PCI"),
            Some("n"),
            Some("drivers/net/Makefile:1 obj-$(CONFIG_ACME_PCI) += acme-pci.o: CONFIG_ACME_PCI is not set")
        ),
        "{v}"
    );
    assert_eq!(d["drivers"][0]["probe"]["line"], 5);
    // Another device of the vendor: the wildcard entry alone.
    let (_, v) = json(&t, &["device", "pci:1de5:0002"]);
    assert_eq!(
        v["results"]["drivers"].as_array().map(Vec::len),
        Some(1),
        "{v}"
    );
    // No table has the vendor: an error, with the keys near it.
    let (code, v) = json(&t, &["device", "pci:1de6:0001"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        v["error"], "no driver's table matches 'pci:1de6:0001'",
        "{v}"
    );
    assert_eq!(v["near_misses"], j!(["pci:1de5:0001"]), "{v}");
}

#[test]
fn driver_reports_tables_and_properties_by_structure_name_and_file() {
    let t = tree("device-drivers-report");
    let (code, out) = knav(&t, &["device", "--driver", "acme_i2c_driver"]);
    assert_eq!(code, 0, "{out}");
    let table_line = line_of(I2C_C, "acme_i2c_dt_ids[]");
    assert!(
        out.contains(&format!(
            "{I2C}:{table_line}: of_device_id acme_i2c_dt_ids (2 entries, MODULE_DEVICE_TABLE(of))\n    fsl,imx21-i2c\n    acme,soc-i2c\n"
        )),
        "{out}"
    );
    assert!(
        out.ends_with(
            "properties read:\n    :9 clock-frequency (of_property_read_u32)\n    :10 acme,wakeup (device_property_read_bool)\n"
        ),
        "{out}"
    );
    // By `.name` and by path: the same report.
    let (_, by_name) = knav(&t, &["device", "--driver", "acme-i2c"]);
    let (_, by_path) = knav(&t, &["device", "driver:drivers/i2c/busses/i2c-acme.c"]);
    assert_eq!(
        (by_name.as_str(), by_path.as_str()),
        (out.as_str(), out.as_str())
    );
    let (code, v) = json(&t, &["device", "--driver", "acme_i2c_drivr"]);
    assert_eq!(code, 1);
    assert_eq!(v["near_misses"], j!(["acme_i2c_driver"]), "{v}");
}

#[test]
fn a_local_header_edited_reads_the_driver_that_includes_it_again() {
    let t = tree("device-drivers-local");
    let props = |t: &Tree| -> Value {
        let (_, v) = json(t, &["device", "--driver", "acme_i2c_driver"]);
        v["results"]["driver_file"]["properties"][1]["property"].clone()
    };
    assert_eq!(props(&t), "acme,wakeup");
    std::fs::write(
        t.root.join("drivers/i2c/busses/i2c-acme.h"),
        "#define ACME_WAKE_PROP \"wakeup-source\"\n",
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    let hw = v["results"]["hw"].as_str().unwrap_or_default().to_string();
    assert!(hw.contains("2 driver files"), "{hw}");
    // The header and the file including it, no other.
    assert!(hw.contains("(2 files read,"), "{hw}");
    assert_eq!(props(&t), "wakeup-source");
}

#[test]
fn dt_check_reports_a_property_the_binding_does_not_name_and_nodes_no_driver_matches() {
    let t = tree("device-drivers-check");
    let (code, out) = knav(&t, &["dt", "check", "property"]);
    assert_eq!(code, 0, "{out}");
    // clock-frequency is dt-schema's core; acme,wakeup (through the local header) is not in
    // the binding.
    assert_eq!(
        out,
        format!(
            "dt check: 0 undocumented, 3 unmatched, 1 property\n\
             {I2C}:10: property acme,wakeup: read by device_property_read_bool; not in \
             Documentation/devicetree/bindings/i2c/acme,soc-i2c.yaml\n\
             next: knav device\n"
        )
    );
    // The i2c nodes are matched now; the interrupt controller, the LEDs and the blob are not.
    let (_, v) = json(&t, &["device", "--check", "unmatched"]);
    let rows: Vec<(&str, u64, &str)> = v["results"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap(),
                f["line"].as_u64().unwrap(),
                f["subject"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("arch/arm/boot/dts/acme/acme-board-b.dts", 10, "gpio-leds"),
            (
                "arch/arm/boot/dts/acme/acme-soc.dtsi",
                9,
                "arm,cortex-a9-gic"
            ),
            ("arch/x86/boot/dts/board.dts", 5, "acme,misc-blob"),
        ],
        "{v}"
    );
    // Documented once the binding names it; an unknown kind is an error.
    let b = t
        .root
        .join("Documentation/devicetree/bindings/i2c/acme,soc-i2c.yaml");
    let text = std::fs::read_to_string(&b).unwrap();
    std::fs::write(
        &b,
        text.replace("  reg:\n", "  acme,wakeup:\n    type: boolean\n\n  reg:\n"),
    )
    .unwrap();
    let (_, out) = knav(&t, &["dt", "check", "property"]);
    assert!(
        out.starts_with("dt check: 0 undocumented, 3 unmatched, 0 property\n"),
        "{out}"
    );
    let (code, v) = json(&t, &["dt", "check", "typo"]);
    assert_eq!(code, 1);
    assert_eq!(
        v["error"],
        "'typo' is no kind of finding: give undocumented, unmatched, property or none for all"
    );
}

#[test]
fn an_edit_to_a_c_file_that_says_nothing_about_hardware_keeps_the_part() {
    let t = tree("device-drivers-quick");
    let (_, v) = json(&t, &["index"]);
    assert!(v["results"]["hw"].as_str().is_some(), "{v}");
    // kernel/config.c holds no match table, driver or property read, and no driver reads it.
    let fork = t.root.join("kernel/config.c");
    let text = std::fs::read_to_string(&fork).unwrap();
    std::fs::write(&fork, text + "\nstatic int forks_counted;\n").unwrap();
    let (_, v) = json(&t, &["index"]);
    assert_eq!(
        (v["results"]["changed"].as_u64(), v["results"].get("hw")),
        (Some(1), None),
        "{v}"
    );
    // The driver gains a compatible: the part is written again and answers it (kernel/config.c
    // is read again too: the part kept its old stat).
    let i2c = t.root.join(I2C);
    std::fs::write(
        &i2c,
        I2C_C.replace(
            "\t{ /* sentinel */ }",
            "\t{ .compatible = \"acme,soc-i2c-v2\" },\n\t{ /* sentinel */ }",
        ),
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    assert!(
        v["results"]["hw"]
            .as_str()
            .unwrap_or_default()
            .contains("(2 files read,"),
        "{v}"
    );
    let (code, v) = json(&t, &["device", "acme,soc-i2c-v2"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["results"]["drivers"][0]["line"], 20, "{v}");
}

#[test]
fn callers_of_a_probe_function_name_the_devices_that_reach_it() {
    let t = tree("device-drivers-callers");
    let (_, out) = knav(&t, &["callers", "acme_i2c_probe"]);
    assert!(
        out.contains(&format!(
            "probe of platform_driver acme_i2c_driver ({I2C}:{}), matching 2 devices: \
             fsl,imx21-i2c, acme,soc-i2c\n",
            line_of(I2C_C, "struct platform_driver")
        )),
        "{out}"
    );
    let (_, v) = json(&t, &["callers", "acme_pci_probe"]);
    assert_eq!(
        v["devices"],
        j!([{"driver": "pci_driver acme_pci_driver", "path": PCI,
             "line": line_of(PCI_C, "struct pci_driver"), "devices": 2,
             "first": ["pci:1de5:0001", "pci:1de5:*"]}]),
        "{v}"
    );
    // A function no driver names as its probe: no such line.
    let (_, v) = json(&t, &["callers", "acme_i2c_remove"]);
    assert_eq!(v.get("devices"), None, "{v}");
}

#[test]
fn a_table_a_header_defines_finds_the_driver_of_the_file_that_includes_it() {
    // Modelled on drivers/net/ethernet/dlink/dl2k.h's rio_pci_tbl and dl2k.c's rio_driver.
    let t = tree("device-drivers-header-table");
    std::fs::write(
        t.root.join("drivers/net/acme-hdr.h"),
        "#include <linux/pci.h>\n#include <linux/pci_ids.h>\n\
         static const struct pci_device_id acme_hdr_tbl[] = {\n\
         \t{ PCI_VDEVICE(ACME, 0x0010), 0 },\n\t{ }\n};\n",
    )
    .unwrap();
    std::fs::write(
        t.root.join("drivers/net/acme-hdr.c"),
        "#include \"acme-hdr.h\"\n\nstatic int acme_hdr_probe(struct pci_dev *pdev)\n{\n\treturn 0;\n}\n\n\
         static struct pci_driver acme_hdr_driver = {\n\t.id_table = acme_hdr_tbl,\n\
         \t.probe = acme_hdr_probe,\n};\n",
    )
    .unwrap();
    let (code, v) = json(&t, &["device", "pci:1de5:0010"]);
    assert_eq!(code, 0, "{v}");
    let row = &v["results"]["drivers"][0];
    assert_eq!(
        (
            row["path"].as_str(),
            row["line"].as_u64(),
            row["driver"].as_str(),
            row["probe"]["line"].as_u64()
        ),
        (
            Some("drivers/net/acme-hdr.h"),
            Some(4),
            Some("pci_driver acme_hdr_driver (drivers/net/acme-hdr.c:8)"),
            Some(3)
        ),
        "{v}"
    );
}
