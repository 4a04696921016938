//! `knav device` (find_device) end to end on the fixture's device trees
//! (`arch/arm/boot/dts/acme/`: `acme-soc.dtsi` included by two boards, one by `#include` and
//! one by `/include/`, each enabling another of its two I2C nodes by `&label`;
//! `arch/x86/boot/dts/board.dts`) and binding schema
//! (`Documentation/devicetree/bindings/i2c/acme,soc-i2c.yaml`): exact answers, patterns,
//! not-found with near matches, and refreshes after a `.dts`, a `.dtsi` or a binding changed.

use serde_json::{json as j, Value};

mod common;
use common::{age, fixture, json, knav};

const BOARD_A: &str = "arch/arm/boot/dts/acme/acme-board-a.dts";
const BOARD_B: &str = "arch/arm/boot/dts/acme/acme-board-b.dts";
const SOC: &str = "arch/arm/boot/dts/acme/acme-soc.dtsi";
const BINDING: &str = "Documentation/devicetree/bindings/i2c/acme,soc-i2c.yaml";

/// The `hw` line of an update_index answer.
fn hw_report(v: &Value) -> String {
    v["results"]["hw"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_compatible_in_a_dtsi_reaches_both_boards_with_each_boards_status() {
    let t = fixture("device-text");
    let (code, out) = knav(&t, &["device", "fsl,imx21-i2c"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        format!(
            "fsl,imx21-i2c: 1 binding, 2 boards · nodes: 0 in .dts, 2 in .dtsi, 0 in overlays\n\
             {BINDING}:13: binding  Acme SoC I2C controller\n\
             {BOARD_A}  \"Acme Board A\"\n\
             \x20   {SOC}:14: /soc/i2c@43f80000  [okay]\n\
             \x20   {SOC}:20: /soc/i2c@43f84000  [disabled]\n\
             {BOARD_B}  \"Acme Board B\"\n\
             \x20   {SOC}:14: /soc/i2c@43f80000  [disabled]\n\
             \x20   {SOC}:20: /soc/i2c@43f84000  [okay]\n\
             next: knav grep\n"
        )
    );
    let (code, v) = json(&t, &["device", "acme,soc-i2c"]);
    assert_eq!(code, 0);
    let d = &v["results"];
    assert_eq!(
        d["bindings"],
        j!([{"path": BINDING, "line": 15, "title": "Acme SoC I2C controller"}])
    );
    assert_eq!(
        (d["boards"].as_u64(), v["total"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(d["board_rows"][0]["path"], BOARD_A);
    assert_eq!(d["board_rows"][0]["model"], "Acme Board A");
    assert_eq!(
        d["board_rows"][0]["nodes"][0],
        j!({"path": SOC, "line": 14, "node": "/soc/i2c@43f80000", "status": "okay"})
    );
    // A node with no status written is okay; nodes in a board's own file are counted apart.
    let (_, v) = json(&t, &["device", "gpio-leds"]);
    let d = &v["results"];
    assert_eq!(
        (d["dts_nodes"].as_u64(), d["dtsi_nodes"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(d["bindings"], j!([]));
    assert_eq!(
        d["board_rows"],
        j!([{"path": BOARD_B, "model": "Acme Board B",
             "nodes": [{"path": BOARD_B, "line": 10, "node": "/leds"}]}])
    );
    // The page: one board, the next at offset 1.
    let (_, v) = json(&t, &["device", "arm,cortex-a9-gic", "--limit", "1"]);
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(2), Some(true))
    );
    assert_eq!(v["results"]["board_rows"][0]["path"], BOARD_A);
    let (_, v) = json(
        &t,
        &["device", "arm,cortex-a9-gic", "--path-prefix", "arch/x86"],
    );
    assert_eq!(v["results"]["boards"], 0);
}

#[test]
fn a_pattern_lists_compatibles_and_one_no_file_names_is_an_error_with_near_matches() {
    let t = fixture("device-find");
    let (code, out) = knav(&t, &["device", "acme,soc*"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "acme,soc  (0 bindings, 3 nodes)\n\
         acme,soc-i2c  (1 binding, 2 nodes)\n\
         next: knav device\n"
    );
    let (_, v) = json(&t, &["device", "*-i2c"]);
    assert_eq!(v["results"]["matches"][0]["compatible"], "acme,soc-i2c");
    assert_eq!(v["results"]["matches"][1]["compatible"], "fsl,imx21-i2c");
    let (code, out) = knav(&t, &["device", "acme,soc-i2d"]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "Error: no binding or device tree names compatible 'acme,soc-i2d'\n\
         did you mean: acme,soc-i2c\n\
         next: knav device\n"
    );
    // Too far for two edits: the vendor's compatibles.
    let (code, v) = json(&t, &["device", "acme,uart"]);
    assert_eq!(code, 1);
    assert_eq!(
        v["near_misses"],
        j!([
            "acme,board-a",
            "acme,board-b",
            "acme,misc-blob",
            "acme,soc",
            "acme,soc-i2c"
        ])
    );
    let (code, v) = json(&t, &["device", "a*b*c"]);
    assert_eq!(code, 1);
    assert!(
        v["error"].as_str().unwrap().contains("more than one *"),
        "{v}"
    );
}

#[test]
fn a_refresh_reads_only_the_hardware_files_that_changed() {
    let t = fixture("device-refresh");
    age(&t.root);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(
        hw_report(&v).split(", in ").next().unwrap_or_default(),
        "hardware (knav device): 4 device trees, 1 bindings, 0 driver files, 8 compatibles (19 files read, 0 kept), 0.0 MB",
        "{v}"
    );
    // A board's status changed: that file alone is read again.
    let a = t.root.join(BOARD_A);
    let text = std::fs::read_to_string(&a).unwrap();
    std::fs::write(
        &a,
        text.replace("status = \"okay\"", "status = \"disabled\""),
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    assert!(hw_report(&v).contains("(1 files read, 18 kept)"), "{v}");
    let (_, v) = json(&t, &["device", "fsl,imx21-i2c"]);
    assert_eq!(
        v["results"]["board_rows"][0]["nodes"][0]["status"],
        "disabled"
    );
    // A node added to the .dtsi reaches both boards.
    let soc = t.root.join(SOC);
    let text = std::fs::read_to_string(&soc).unwrap();
    std::fs::write(
        &soc,
        text.replace(
            "\t};\n};",
            "\t\tuart@1000 {\n\t\t\tcompatible = \"acme,uart\";\n\t\t};\n\t};\n};",
        ),
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    assert!(hw_report(&v).contains("(1 files read, 18 kept)"), "{v}");
    let (code, v) = json(&t, &["device", "acme,uart"]);
    assert_eq!((code, v["results"]["boards"].as_u64()), (0, Some(2)), "{v}");
    // The binding documents one more compatible.
    let b = t.root.join(BINDING);
    let text = std::fs::read_to_string(&b).unwrap();
    std::fs::write(
        &b,
        text.replace(
            "      - const: fsl,imx21-i2c\n      - items",
            "      - const: fsl,imx21-i2c\n      - const: acme,uart\n      - items",
        ),
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    assert!(hw_report(&v).contains("(1 files read, 18 kept)"), "{v}");
    let (_, v) = json(&t, &["device", "acme,uart"]);
    assert_eq!(v["results"]["bindings"][0]["line"], 14, "{v}");
    // A board that includes another board's .dts reaches that board's nodes.
    std::fs::write(
        t.root.join("arch/arm/boot/dts/acme/acme-board-a2.dts"),
        "#include \"acme-board-a.dts\"\n\n/ {\n\tmodel = \"Acme Board A2\";\n};\n",
    )
    .unwrap();
    let (_, v) = json(&t, &["index"]);
    assert!(hw_report(&v).contains("(1 files read, 19 kept)"), "{v}");
    let (_, v) = json(&t, &["device", "acme,board-a"]);
    let rows = &v["results"]["board_rows"];
    assert_eq!(
        (rows[0]["path"].as_str(), rows[1]["path"].as_str()),
        (
            Some(BOARD_A),
            Some("arch/arm/boot/dts/acme/acme-board-a2.dts")
        ),
        "{v}"
    );
    assert_eq!(
        rows[1]["nodes"],
        j!([{"path": BOARD_A, "line": 6, "node": "/"}])
    );
    assert_eq!(rows[1]["model"], "Acme Board A2");
    // A file touched, not changed: the part stays.
    age(&t.root);
    let (_, v) = json(&t, &["index"]);
    assert_eq!(
        (v["results"]["mode"].as_str(), v["results"].get("hw")),
        (Some("unchanged"), None),
        "{v}"
    );
    // A board removed. The two C files that include a local header are read again: their
    // headers were touched (a header's stat, not its bytes, vouches for the facts of a file
    // read with it).
    std::fs::remove_file(t.root.join(BOARD_B)).unwrap();
    let (_, v) = json(&t, &["index"]);
    assert!(hw_report(&v).contains("(2 files read, 17 kept)"), "{v}");
    let (_, v) = json(&t, &["device", "acme,uart"]);
    assert_eq!(v["results"]["boards"], 2, "{v}");
}

#[test]
fn a_hardware_part_of_an_older_format_is_written_again_by_the_next_refresh() {
    let t = fixture("device-old-format");
    let (_, v) = json(&t, &["index"]);
    assert!(!hw_report(&v).is_empty(), "{v}");
    // An index an older knav wrote: its manifest names no format for the part.
    let current = t.root.join(".knav/CURRENT");
    let text = std::fs::read_to_string(&current).unwrap();
    let mut m: Value = serde_json::from_str(&text).unwrap();
    m["hw"].as_object_mut().unwrap().remove("format");
    std::fs::write(&current, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let (_, v) = json(&t, &["index"]);
    assert!(hw_report(&v).contains("(19 files read, 0 kept)"), "{v}");
    let (code, v) = json(&t, &["device", "acme,soc-i2c"]);
    assert_eq!((code, v["results"]["boards"].as_u64()), (0, Some(2)), "{v}");
}
