//! Where a device-tree source's `#include` and `/include/` lead, as the kernel's build finds
//! them: `"x.dtsi"` and `/include/ "x.dtsi"` first beside the including file, then (and
//! `<x>` only) through the search directory `scripts/dtc/include-prefixes`, whose entries are
//! links the walk does not follow: `dt-bindings/…` is `include/dt-bindings/…` and `ARCH/…` is
//! `arch/ARCH/boot/dts/…`. A path that leads to no file of the tree leads nowhere.

use std::collections::HashMap;

use knav_hw::dts::IncludeKind;

/// The search directory of the kernel's device-tree preprocessing (`DTC_INCLUDE`).
const PREFIXES: &str = "scripts/dtc/include-prefixes";

/// The id of the file `written` (included `kind`-wise by the file at `from`) leads to, among
/// `ids` (every file of the part by path).
pub fn resolve(
    from: &str,
    written: &str,
    kind: IncludeKind,
    ids: &HashMap<&str, u32>,
) -> Option<u32> {
    if written.starts_with('/') {
        return None;
    }
    if kind != IncludeKind::System {
        let dir = from.rfind('/').map_or("", |i| &from[..i]);
        if let Some(id) = normalized(dir, written).and_then(|p| ids.get(p.as_str()).copied()) {
            return Some(id);
        }
    }
    let (first, rest) = written.split_once('/')?;
    let target = match first {
        "dt-bindings" => format!("include/dt-bindings/{rest}"),
        "." | ".." => {
            return normalized(PREFIXES, written).and_then(|p| ids.get(p.as_str()).copied())
        }
        arch => format!("arch/{arch}/boot/dts/{rest}"),
    };
    normalized("", &target).and_then(|p| ids.get(p.as_str()).copied())
}

/// `dir/written` with `.` and `..` taken away; `None` when it climbs above the root.
pub(super) fn normalized(dir: &str, written: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for p in written.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_lead_where_the_kernel_build_finds_them() {
        let files = [
            "arch/arm/boot/dts/nxp/imx/imx25.dtsi",
            "arch/arm/boot/dts/nxp/imx/imx25-pinfunc.h",
            "arch/arm64/boot/dts/freescale/imx8mm.dtsi",
            "arch/arm/boot/dts/nxp/imx/imx7d.dtsi",
            "include/dt-bindings/gpio/gpio.h",
        ];
        let ids: HashMap<&str, u32> = files
            .iter()
            .enumerate()
            .map(|(i, p)| (*p, i as u32))
            .collect();
        let board = "arch/arm/boot/dts/nxp/imx/imx25-pdk.dts";
        assert_eq!(
            resolve(board, "imx25.dtsi", IncludeKind::Local, &ids),
            Some(0)
        );
        assert_eq!(
            resolve(board, "imx25.dtsi", IncludeKind::Dtc, &ids),
            Some(0)
        );
        assert_eq!(
            resolve(board, "imx25.dtsi", IncludeKind::System, &ids),
            None
        );
        assert_eq!(
            resolve(board, "dt-bindings/gpio/gpio.h", IncludeKind::System, &ids),
            Some(4)
        );
        // arch/arm64/boot/dts/freescale/imx7d-*.dts include their 32-bit SoC this way.
        let arm64 = "arch/arm64/boot/dts/freescale/x.dts";
        assert_eq!(
            resolve(arm64, "arm/nxp/imx/imx7d.dtsi", IncludeKind::Local, &ids),
            Some(3)
        );
        assert_eq!(
            resolve(arm64, "../../../../../etc/passwd", IncludeKind::Local, &ids),
            None
        );
        assert_eq!(
            resolve(board, "/etc/passwd", IncludeKind::Local, &ids),
            None
        );
        assert_eq!(
            resolve(board, "missing.dtsi", IncludeKind::Local, &ids),
            None
        );
    }
}
