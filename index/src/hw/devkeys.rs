//! The device keys of a match-table entry: the text a user types to name the device it
//! matches, in one namespace per bus. `pci:8086:15b8` (a wildcard part is `*`: `pci:8086:*`),
//! `pci:class:0c0330/ffffff` for a class entry, `usb:0b95:1790`, `usb:class:08:06:50` for an
//! interface-class entry, `hid:046d:c52b`, `sdio:02d0:4329`, `virtio:0001`, and for buses whose
//! devices have names, the name: `acpi:ACPI0003`, `i2c:lm75`, `spi:…`, `platform:…`. An
//! `of_device_id` entry's compatible is not a key here: compatibles have their own map.
//!
//! A number is lowercase hexadecimal of at least four digits; a field left unresolved (a
//! vendor macro the index's headers do not define) keeps its C text, so it can still be found
//! by that name.

use knav_hw::cmacro_eval::Value;
use knav_hw::idtable::Entry;

/// A field value that means "any": C's `~0` in a 32-bit field (`PCI_ANY_ID`, `HID_ANY_ID`).
fn is_any(v: u64) -> bool {
    v as u32 == u32::MAX
}

/// A number as a key part: at least four hexadecimal digits, `*` for "any".
fn hex(v: &Value) -> String {
    match v {
        Value::Int(n) if is_any(*n) => "*".to_string(),
        Value::Int(n) => format!("{n:04x}"),
        Value::Str(s) => s.clone(),
        Value::Text(t) => t.replace(' ', ""),
    }
}

/// A number of `digits` hexadecimal digits.
fn hex_n(v: &Value, digits: usize) -> String {
    match v {
        Value::Int(n) => format!("{n:0digits$x}"),
        other => hex(other),
    }
}

/// The bus of a table kind: `pci_device_id` → `pci`, `amba_id` → `amba`.
pub fn bus(kind: &str) -> &str {
    kind.strip_suffix("_device_id")
        .or_else(|| kind.strip_suffix("_id"))
        .unwrap_or(kind)
}

/// The keys of `entry` of a table of `kind`; none for `of_device_id` (its compatible is
/// keyed elsewhere) and for an entry whose fields the reader could not expand.
pub fn keys(kind: &str, entry: &Entry) -> Vec<String> {
    let get = |name: &str| entry.get(name);
    let int = |name: &str| match get(name) {
        Some(Value::Int(n)) => Some(*n),
        _ => None,
    };
    match kind {
        "of_device_id" => Vec::new(),
        "pci_device_id" => {
            let (Some(vendor), Some(device)) = (get("vendor"), get("device")) else {
                return Vec::new();
            };
            let mut out = Vec::new();
            let any_vendor = matches!(vendor, Value::Int(n) if is_any(*n));
            if !(any_vendor && matches!(device, Value::Int(n) if is_any(*n))) {
                out.push(format!("pci:{}:{}", hex(vendor), hex(device)));
            }
            if let (Some(class), Some(mask)) = (int("class"), int("class_mask")) {
                if mask != 0 {
                    out.push(format!("pci:class:{class:06x}/{mask:06x}"));
                }
            }
            out
        }
        "usb_device_id" => {
            let flags = int("match_flags").unwrap_or(0);
            let mut out = Vec::new();
            if flags & 0x1 != 0 {
                let product = match get("idProduct") {
                    Some(v) if flags & 0x2 != 0 => hex(v),
                    _ => "*".to_string(),
                };
                let vendor = get("idVendor").map_or_else(|| "*".to_string(), hex);
                out.push(format!("usb:{vendor}:{product}"));
            }
            for (flag, prefix, fields) in [
                (
                    0x80,
                    "usb:class",
                    [
                        "bInterfaceClass",
                        "bInterfaceSubClass",
                        "bInterfaceProtocol",
                    ],
                ),
                (
                    0x10,
                    "usb:devclass",
                    ["bDeviceClass", "bDeviceSubClass", "bDeviceProtocol"],
                ),
            ] {
                if flags & flag != 0 {
                    let parts: Vec<String> = fields
                        .iter()
                        .enumerate()
                        .map(|(i, f)| match get(f) {
                            Some(v) if flags & (flag << i) != 0 => hex_n(v, 2),
                            _ => "*".to_string(),
                        })
                        .collect();
                    out.push(format!("{prefix}:{}", parts.join(":")));
                }
            }
            out
        }
        "hid_device_id" | "sdio_device_id" => {
            let (v, d) = if kind == "hid_device_id" {
                ("vendor", "product")
            } else {
                ("vendor", "device")
            };
            match (get(v), get(d)) {
                (Some(a), Some(b)) => vec![format!("{}:{}:{}", bus(kind), hex(a), hex(b))],
                _ => Vec::new(),
            }
        }
        "virtio_device_id" => get("device")
            .map(|d| vec![format!("virtio:{}", hex(d))])
            .unwrap_or_default(),
        _ => named_or_numbered(kind, entry),
    }
}

/// The key of an entry of another bus: its first string field (`name`, `id`, …) when it has
/// one, else its identifying numbers (`vendor`, `device`, `product`, `id`, `phy_id`, `type`)
/// joined.
fn named_or_numbered(kind: &str, entry: &Entry) -> Vec<String> {
    let bus = bus(kind);
    let data = |n: &str| n.contains("data") || n.contains("info") || n.contains("flags");
    if let Some(s) = entry.fields.iter().find_map(|f| match &f.value {
        Value::Str(s) if !data(&f.name) && !s.is_empty() => Some(s),
        _ => None,
    }) {
        return vec![format!("{bus}:{s}")];
    }
    let parts: Vec<String> = ["vendor", "device", "product", "id", "phy_id", "type"]
        .iter()
        .filter_map(|n| entry.get(n).map(hex))
        .collect();
    if parts.is_empty() {
        return Vec::new();
    }
    vec![format!("{bus}:{}", parts.join(":"))]
}

/// What an entry matches, for a reader: its fields but the driver's data, `name=value`,
/// numbers in hexadecimal (`vendor=8086 device=15b8`), or the entry as written when it was
/// not expanded.
pub fn about(entry: &Entry) -> String {
    if let Some(t) = &entry.unexpanded {
        return t.clone();
    }
    let skip = |n: &str| {
        n.contains("driver_data") || n == "data" || n.contains("driver_info") || n == "match_flags"
    };
    let mut out = String::new();
    for f in entry.fields.iter().filter(|f| !skip(&f.name)) {
        let v = match &f.value {
            Value::Int(0) => continue,
            Value::Str(s) => format!("\"{s}\""),
            v if f.name.starts_with("class") => hex_n(v, 6),
            v if f.name.starts_with('b') => hex_n(v, 2),
            v => hex(v),
        };
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&f.name);
        out.push('=');
        out.push_str(&v);
    }
    if let Some(via) = &entry.via {
        out = if out.is_empty() {
            via.clone()
        } else {
            format!("{via}: {out}")
        };
    }
    out
}

/// The key prefixes a query for `key` looks up, most precise first: the key itself, then the
/// same vendor with any device (`pci:8086:15b8` → `pci:8086:*`), then the device of any
/// vendor.
pub fn lookups(key: &str) -> Vec<String> {
    let mut out = vec![key.to_string()];
    let parts: Vec<&str> = key.split(':').collect();
    if let [bus @ ("pci" | "usb" | "hid" | "sdio"), vendor, device] = parts[..] {
        if device != "*" {
            out.push(format!("{bus}:{vendor}:*"));
        }
        if vendor != "*" {
            out.push(format!("{bus}:*:{device}"));
        }
    }
    out
}

/// A key as typed, made canonical: the bus lowercased, numbers of the numbered buses
/// lowercased and padded to four digits, a `0x` prefix dropped (`PCI:0x8086:15B8` →
/// `pci:8086:15b8`); names (`acpi:ACPI0003`, `i2c:lm75`) kept as typed.
pub fn canonical(key: &str) -> String {
    let Some((bus, rest)) = key.split_once(':') else {
        return key.to_string();
    };
    let bus = bus.to_ascii_lowercase();
    if !matches!(bus.as_str(), "pci" | "usb" | "hid" | "sdio" | "virtio") {
        return format!("{bus}:{rest}");
    }
    let parts: Vec<String> = rest
        .split(':')
        .map(|p| {
            let p = p.trim_start_matches("0x").trim_start_matches("0X");
            if p != "*" && !p.is_empty() && p.bytes().all(|b| b.is_ascii_hexdigit()) && p.len() <= 4
            {
                format!("{:0>4}", p.to_ascii_lowercase())
            } else {
                p.to_ascii_lowercase()
            }
        })
        .collect();
    format!("{bus}:{}", parts.join(":"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use knav_hw::idtable::Field;

    fn entry(fields: &[(&str, Value)]) -> Entry {
        Entry {
            line: 1,
            via: None,
            fields: fields
                .iter()
                .map(|(n, v)| Field {
                    name: n.to_string(),
                    value: v.clone(),
                })
                .collect(),
            unexpanded: None,
        }
    }

    #[test]
    fn pci_entries_key_by_vendor_device_and_class() {
        let any = Value::Int(u64::MAX);
        // PCI_VDEVICE(INTEL, 0x15b8) as pci.h expands it.
        let e = entry(&[
            ("vendor", Value::Int(0x8086)),
            ("device", Value::Int(0x15b8)),
            ("subvendor", any.clone()),
            ("subdevice", any.clone()),
            ("class", Value::Int(0)),
            ("class_mask", Value::Int(0)),
        ]);
        assert_eq!(keys("pci_device_id", &e), ["pci:8086:15b8"]);
        assert_eq!(about(&e), "vendor=8086 device=15b8 subvendor=* subdevice=*");
        // PCI_DEVICE_CLASS(PCI_CLASS_SERIAL_USB_XHCI, ~0).
        let e = entry(&[
            ("vendor", any.clone()),
            ("device", any.clone()),
            ("class", Value::Int(0x0c0330)),
            ("class_mask", Value::Int(0xffff_ffff)),
        ]);
        assert_eq!(keys("pci_device_id", &e), ["pci:class:0c0330/ffffffff"]);
    }

    #[test]
    fn usb_entries_key_by_what_their_flags_match() {
        // USB_DEVICE(0x0b95, 0x1790).
        let e = entry(&[
            ("match_flags", Value::Int(3)),
            ("idVendor", Value::Int(0x0b95)),
            ("idProduct", Value::Int(0x1790)),
        ]);
        assert_eq!(keys("usb_device_id", &e), ["usb:0b95:1790"]);
        // USB_INTERFACE_INFO(USB_CLASS_MASS_STORAGE, USB_SC_SCSI, USB_PR_BULK).
        let e = entry(&[
            ("match_flags", Value::Int(0x380)),
            ("bInterfaceClass", Value::Int(8)),
            ("bInterfaceSubClass", Value::Int(6)),
            ("bInterfaceProtocol", Value::Int(0x50)),
        ]);
        assert_eq!(keys("usb_device_id", &e), ["usb:class:08:06:50"]);
        // USB_VENDOR_AND_INTERFACE_INFO(0x0bda, 0xff, 0xff, 0xff): any product of the vendor.
        let e = entry(&[
            ("match_flags", Value::Int(0x381)),
            ("idVendor", Value::Int(0x0bda)),
            ("bInterfaceClass", Value::Int(0xff)),
            ("bInterfaceSubClass", Value::Int(0xff)),
            ("bInterfaceProtocol", Value::Int(0xff)),
        ]);
        assert_eq!(
            keys("usb_device_id", &e),
            ["usb:0bda:*", "usb:class:ff:ff:ff"]
        );
    }

    #[test]
    fn named_buses_key_by_name() {
        let e = entry(&[("id", Value::Str("ACPI0003".into()))]);
        assert_eq!(keys("acpi_device_id", &e), ["acpi:ACPI0003"]);
        let e = entry(&[
            ("name", Value::Str("lm75".into())),
            ("driver_data", Value::Text("lm75".into())),
        ]);
        assert_eq!(keys("i2c_device_id", &e), ["i2c:lm75"]);
        assert_eq!(keys("of_device_id", &e), Vec::<String>::new());
        let e = entry(&[
            ("phy_id", Value::Int(0x0143_bc30)),
            ("phy_id_mask", Value::Int(0xffff_fff0)),
        ]);
        assert_eq!(keys("mdio_device_id", &e), ["mdio:143bc30"]);
    }

    #[test]
    fn typed_keys_are_made_canonical_and_widened() {
        assert_eq!(canonical("PCI:0x8086:15B8"), "pci:8086:15b8");
        assert_eq!(canonical("usb:b95:1790"), "usb:0b95:1790");
        assert_eq!(canonical("acpi:ACPI0003"), "acpi:ACPI0003");
        assert_eq!(
            lookups("pci:8086:15b8"),
            ["pci:8086:15b8", "pci:8086:*", "pci:*:15b8"]
        );
        assert_eq!(lookups("i2c:lm75"), ["i2c:lm75"]);
    }
}
