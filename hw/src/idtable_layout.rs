//! The field order of each struct a header declares, read from its bytes: what a positional
//! entry of a match table (`{ "ACPI0003", 0 }`) initializes, by the order
//! `include/linux/mod_devicetable.h` gives each `*_device_id`.

use crate::cmacro_lex::{lex, Kind, Tok};
use crate::fxhash::FxHashMap;

/// Struct tags and their fields' names in declaration order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layouts {
    structs: FxHashMap<String, Vec<String>>,
}

impl Layouts {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Learns every `struct TAG { … };` of one header's bytes (a later one replaces an
    /// earlier one of the same tag).
    pub fn learn(&mut self, src: &[u8]) {
        let text = crate::cmacro_lex::text(src);
        let toks = lex(&text).toks;
        let mut i = 0;
        while i + 2 < toks.len() {
            if toks[i].is_ident("struct") && toks[i + 1].kind == Kind::Ident && toks[i + 2].is("{")
            {
                let Some((fields, end)) = fields(&toks, i + 2) else {
                    // Unclosed to the end: no later struct closes either, and scanning again
                    // from each would be quadratic.
                    break;
                };
                self.structs.insert(toks[i + 1].text.to_string(), fields);
                i = end;
                continue;
            }
            i += 1;
        }
    }

    /// The fields of `struct tag`, in order.
    pub fn fields(&self, tag: &str) -> Option<&[String]> {
        self.structs.get(tag).map(Vec::as_slice)
    }
}

/// The member names of the struct body whose `{` is at `open`, and the index past its `}`. A
/// member is named by its declarator's last identifier before `[`, `:` or an attribute; a
/// nested anonymous struct or union gives its own members in place.
fn fields(toks: &[Tok<'_>], open: usize) -> Option<(Vec<String>, usize)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut name: Option<String> = None;
    let mut closed = false;
    let mut k = open + 1;
    while k < toks.len() {
        let t = &toks[k];
        match (t.kind, t.text.as_ref()) {
            (Kind::Punct, "{") => {
                name = None;
                depth += 1;
            }
            (Kind::Punct, "}") if depth == 0 => return Some((out, k + 1)),
            (Kind::Punct, "}") => depth -= 1,
            (Kind::Punct, "(") => k = skip_parens(toks, k),
            (Kind::Punct, "[" | ":") => closed = true,
            (Kind::Punct, ";") => {
                out.extend(name.take());
                closed = false;
            }
            (Kind::Punct, ",") => out.extend(name.take()),
            (Kind::Ident, "__attribute__" | "__aligned" | "__packed") => closed = true,
            (Kind::Ident, id) if !closed => name = Some(id.to_string()),
            _ => {}
        }
        k += 1;
    }
    None
}

/// The index of the `)` that closes the `(` at `open` (the last token when none does).
fn skip_parens(toks: &[Tok<'_>], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.is("(") {
            depth += 1;
        } else if t.is(")") {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    toks.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mod_devicetable_orders() {
        // include/linux/mod_devicetable.h, Linux 6.12 (abridged).
        let h = b"struct pci_device_id {\n\t__u32 vendor, device;\t\t/* Vendor and device ID or PCI_ANY_ID*/\n\t__u32 subvendor, subdevice;\n\t__u32 class, class_mask;\n\tkernel_ulong_t driver_data;\n\t__u32 override_only;\n};\n\
struct usb_device_id {\n\t__u16\t\tmatch_flags;\n\t__u8\t\tbInterfaceNumber;\n\tkernel_ulong_t\tdriver_info\n\t\t__attribute__((aligned(sizeof(kernel_ulong_t))));\n};\n\
struct of_device_id {\n\tchar\tname[32];\n\tchar\ttype[32];\n\tchar\tcompatible[128];\n\tconst void *data;\n};\n\
struct ssb_device_id {\n\t__u16\tvendor;\n\t__u8\trevision;\n\t__u8\t__pad;\n} __attribute__((packed, aligned(2)));\n";
        let mut l = Layouts::new();
        l.learn(h);
        assert_eq!(
            l.fields("pci_device_id").unwrap(),
            [
                "vendor",
                "device",
                "subvendor",
                "subdevice",
                "class",
                "class_mask",
                "driver_data",
                "override_only"
            ]
        );
        assert_eq!(
            l.fields("usb_device_id").unwrap(),
            ["match_flags", "bInterfaceNumber", "driver_info"]
        );
        assert_eq!(
            l.fields("of_device_id").unwrap(),
            ["name", "type", "compatible", "data"]
        );
        assert_eq!(
            l.fields("ssb_device_id").unwrap(),
            ["vendor", "revision", "__pad"]
        );
        assert_eq!(l.fields("nothing"), None);
    }
}
