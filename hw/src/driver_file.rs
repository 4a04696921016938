//! What one C file says about hardware: its match tables, the driver structures that name
//! them, compatibles outside tables and properties read by name. The caller builds a
//! [`Context`] once from the headers it chooses (macros such as `PCI_DEVICE` from
//! `include/linux/pci.h`, IDs from `pci_ids.h`, the field orders of `mod_devicetable.h`, the
//! `OF_DECLARE` family from `of.h` and the headers that wrap it), and a [`LocalHeader`] once
//! for each local header (`#include "hw.h"`), then reads each file's bytes with its local
//! headers. Most files hold none of the names the readers look for and are passed over
//! without being lexed (`driver_needles`).
//!
//! A macro whose `#define` declares a table or a driver structure
//! (`IRQCHIP_PLATFORM_DRIVER_BEGIN(name)` opens `struct of_device_id name##_irqchip_match_table[]`)
//! is expanded in place before the tables and drivers are read.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::cmacro::{arguments, Lookup, Macro, Macros, Scope};
use crate::cmacro_lex::{lex, Define, Kind, Lexed, Tok};
use crate::driver::{drivers_in, Driver};
use crate::driver_compat::{compatibles_in, CodeCompatible, Declarers};
pub mod local;
use crate::driver_needles::Needles;
use crate::driver_props::{properties_in, PropertyRead};
use crate::fxhash::FxHashSet;
use crate::idtable::{exported_in, tables_in, Table};
use crate::idtable_layout::Layouts;
use crate::landmarks::Landmarks;
pub use local::LocalHeader;

/// The headers of a Linux tree a context is built from, when the tree has them (with every
/// header under `include/` that names `OF_DECLARE`): the ID macros' and tables' own.
pub const CONTEXT_HEADERS: [&str; 17] = [
    "include/linux/mod_devicetable.h",
    "include/linux/pci_ids.h",
    "include/linux/pci.h",
    "include/linux/usb.h",
    "include/linux/hid.h",
    "include/linux/mmc/sdio_func.h",
    "include/linux/mmc/sdio_ids.h",
    "include/linux/usb/input.h",
    "include/linux/of.h",
    "include/media/dvb-usb-ids.h",
    "include/linux/comedi/comedi_pci.h",
    "include/uapi/linux/usb/ch9.h",
    "include/uapi/linux/usb/cdc.h",
    "include/sound/hda_codec.h",
    "include/linux/soundwire/sdw.h",
    "include/linux/i3c/device.h",
    "include/pcmcia/device_id.h",
];

/// What the reader knows before it reads a file, built from headers' bytes.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// The shared macros.
    pub macros: Macros<'static>,
    /// Struct field orders.
    pub layouts: Layouts,
    /// The `OF_DECLARE` family.
    pub declarers: Declarers,
    /// The shared macros that declare a table or a driver structure.
    pub makers: Vec<String>,
    /// Texts one of which a file must hold to say anything (none: every file is read).
    pub(crate) needles: Needles,
    /// The names of `makers`, searched for in a file's text.
    maker_names: Needles,
}

impl Context {
    /// A context from headers' bytes: every `#define` and every struct layout they hold
    /// (a later header's definition wins), and the declarers their macros make.
    pub fn from_headers<'a>(headers: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let mut cx = Self::default();
        for h in headers {
            cx.macros.learn(h);
            cx.layouts.learn(h);
        }
        cx.declarers = Declarers::learn(&cx.macros);
        cx.makers = cx
            .macros
            .iter()
            .filter(|(name, m)| makes_table_or_driver(m) && !cx.declarers.contains(name))
            .map(|(name, _)| name.to_string())
            .collect();
        cx.needles = Needles::for_readers(&cx.declarers, &cx.makers);
        let makers: Vec<&str> = cx.makers.iter().map(String::as_str).collect();
        cx.maker_names = Needles::new(&makers);
        cx
    }
}

/// What one C file says about hardware.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverFile {
    /// Its match tables.
    pub tables: Vec<Table>,
    /// Its structures that name a table.
    pub drivers: Vec<Driver>,
    /// Compatibles outside tables (also in its own `#define` bodies, at the `#define`'s line).
    pub compatibles: Vec<CodeCompatible>,
    /// Properties read by name (also in its own `#define` bodies).
    pub properties: Vec<PropertyRead>,
    /// Every `MODULE_DEVICE_TABLE(bus, name)`: bus, table name and line, for tables of any
    /// type.
    pub module_device_tables: Vec<(String, String, u32)>,
}

// The index reads files from rayon's threads, with one context and local headers shared by
// all of them: a type that stopped being `Send` or `Sync` fails the build here.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<Context>();
    shared::<LocalHeader>();
    shared::<DriverFile>();
};

/// Reads one C file's bytes.
pub fn read(src: &[u8], cx: &Context) -> DriverFile {
    read_with_headers(src, cx, &[])
}

/// Reads one C file's bytes with the `#define`s of the local headers it includes
/// (`#include "hw.h"`: the caller finds and reads them), given as bytes: each is read here
/// for this file alone; [`read_with_headers`] takes them read once for every file.
pub fn read_with(src: &[u8], cx: &Context, local: &[&[u8]]) -> DriverFile {
    let local: Vec<LocalHeader> = local.iter().map(|h| LocalHeader::new(h, cx)).collect();
    let refs: Vec<&LocalHeader> = local.iter().collect();
    read_with_headers(src, cx, &refs)
}

/// Reads one C file's bytes with the `#define`s of the local headers it includes, innermost
/// first, which its own `#define`s override (and a later header's an earlier one's). A file
/// that holds no needle (a name or part of a name the readers match tokens by, such as
/// `_device_id` or `of_device_is_compatible`) and names no macro of its local headers whose
/// body holds one says nothing.
pub fn read_with_headers(src: &[u8], cx: &Context, local: &[&LocalHeader]) -> DriverFile {
    if !cx.needles.in_bytes(src) && !invokes_a_local_needle(src, local) {
        return DriverFile::default();
    }
    let text = crate::cmacro_lex::text(src);
    let lexed = lex(&text);
    let mut own = Macros::new();
    for d in &lexed.defines {
        own.add(d.clone());
    }
    let layers: Vec<&dyn Lookup> = local.iter().map(|h| *h as &dyn Lookup).collect();
    let scope = Scope {
        file: &own,
        local: &layers,
        shared: &cx.macros,
    };
    let declarers = declarers(cx, &own, local);
    let wrappers = Wrappers::new(
        cx,
        &lexed.defines,
        local,
        matches!(declarers, Cow::Owned(_)),
    );
    let marks = Landmarks::of(&lexed.toks);
    let (compatibles, properties) = calls(&lexed, &marks, scope, &declarers, &wrappers);
    let made = cx.maker_names.in_bytes(text.as_bytes())
        || own.iter().any(|(_, m)| makes_table_or_driver(m))
        || local.iter().any(|h| {
            h.makers
                .iter()
                .any(|n| scope.own(n).is_some_and(makes_table_or_driver))
        });
    let spliced;
    let (toks, marks) = if made {
        spliced = splice(&lexed.toks, scope, &declarers);
        let marks = Landmarks::of(&spliced);
        (&spliced, marks)
    } else {
        (&lexed.toks, marks)
    };
    let exported = exported_in(toks, &marks);
    DriverFile {
        tables: tables_in(toks, &marks, scope, &cx.layouts, &exported),
        drivers: drivers_in(toks, &marks, scope),
        module_device_tables: exported,
        compatibles,
        properties,
    }
}

/// The declarers in force in a file: the context's, and those its own and its local headers'
/// macros make (owned then), when one of their bodies names one of the context's (a chain
/// starts there).
fn declarers<'c>(cx: &'c Context, own: &Macros<'_>, local: &[&LocalHeader]) -> Cow<'c, Declarers> {
    let names_one = local.iter().any(|h| h.names_a_declarer)
        || own.all().any(|(_, m)| cx.declarers.any_in(&m.body));
    if !names_one {
        return Cow::Borrowed(&cx.declarers);
    }
    let mut d = cx.declarers.clone();
    let mut tables = vec![own];
    tables.extend(local.iter().map(|h| h.macros()));
    d.extend_all(&tables);
    Cow::Owned(d)
}

/// The macros of a file and of its local headers that may wrap a call of a matcher, a
/// declarer or a property reader: such a macro names what it calls in its body, which then
/// holds a needle; any macro may when the file has declarers of its own, or when the
/// context filters nothing.
struct Wrappers<'n> {
    /// Any macro may.
    any: bool,
    /// The names of those that may.
    names: FxHashSet<&'n str>,
    /// For each of the file's `#define`s, whether its body holds a needle.
    own: Vec<bool>,
}

impl<'n> Wrappers<'n> {
    /// The wrappers among the file's `defines` and its `local` headers' macros.
    fn new(
        cx: &Context,
        defines: &'n [Define<'_>],
        local: &[&'n LocalHeader],
        own_declarers: bool,
    ) -> Self {
        let own: Vec<bool> = defines
            .iter()
            .map(|d| d.body.iter().any(|t| cx.needles.in_token(&t.text)))
            .collect();
        let names = (defines.iter().zip(&own))
            .filter(|(_, holds)| **holds)
            .map(|(d, _)| d.name)
            .chain(
                local
                    .iter()
                    .flat_map(|h| h.needle_macros.iter().map(String::as_str)),
            )
            .collect();
        Self {
            any: !cx.needles.filter() || own_declarers,
            names,
            own,
        }
    }

    /// True when the macro named `name`, if there is one, may wrap a call.
    fn may_wrap(&self, name: &str) -> bool {
        self.any || (!self.names.is_empty() && self.names.contains(name))
    }
}

/// The compatibles and properties a file names in calls, in its code and in its own
/// `#define` bodies (there at the `#define`'s line), ordered by line. A body is read only when
/// it holds a needle or invokes a macro that may wrap a call.
fn calls(
    lexed: &Lexed<'_>,
    marks: &Landmarks,
    scope: Scope<'_>,
    declarers: &Declarers,
    wrappers: &Wrappers<'_>,
) -> (Vec<CodeCompatible>, Vec<PropertyRead>) {
    let may_wrap = |name: &str| wrappers.may_wrap(name);
    let mut compats = compatibles_in(&lexed.toks, marks, scope, declarers, &may_wrap);
    let mut props = properties_in(&lexed.toks, marks, scope, &may_wrap);
    for (d, holds) in lexed.defines.iter().zip(&wrappers.own) {
        let invokes = || {
            d.body
                .iter()
                .any(|t| t.kind == Kind::Ident && may_wrap(&t.text))
        };
        if !holds && !invokes() {
            continue;
        }
        let body: Vec<Tok<'_>> = d
            .body
            .iter()
            .map(|t| Tok {
                line: d.line,
                ..t.clone()
            })
            .collect();
        let marks = Landmarks::of(&body);
        compats.extend(compatibles_in(&body, &marks, scope, declarers, &may_wrap));
        props.extend(properties_in(&body, &marks, scope, &may_wrap));
    }
    compats.sort_by_key(|c| c.line);
    props.sort_by_key(|p| p.line);
    (compats, props)
}

/// True when `src` names a macro of its local headers whose body holds a needle (a header's
/// macro that declares a table or a driver for the file).
fn invokes_a_local_needle(src: &[u8], local: &[&LocalHeader]) -> bool {
    local.iter().any(|h| {
        h.holds_needle
            && h.needle_macros
                .iter()
                .any(|n| memchr::memmem::find(src, n.as_bytes()).is_some())
    })
}

/// `toks` with each invocation of a macro that declares a table or a driver structure
/// expanded in place (declarers are left to [`compatibles`]).
fn splice<'a>(toks: &[Tok<'a>], scope: Scope<'a>, declarers: &Declarers) -> Vec<Tok<'a>> {
    let maker = |t: &Tok<'_>| -> Option<&Macro<'_>> {
        if t.kind != Kind::Ident || declarers.contains(&t.text) {
            return None;
        }
        scope.get(&t.text).filter(|m| makes_table_or_driver(m))
    };
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let Some(m) = maker(&toks[i]) else {
            out.push(toks[i].clone());
            i += 1;
            continue;
        };
        let end = match m.params {
            None => i + 1,
            Some(_) => match arguments(toks, i + 1) {
                Some((_, end)) => end,
                None => i + 1,
            },
        };
        out.extend(scope.expand(&toks[i..end]));
        i = end;
    }
    out
}

/// True when a macro's body declares a `*_device_id` struct or names a table by designator.
pub(crate) fn makes_table_or_driver(m: &Macro<'_>) -> bool {
    m.body.windows(2).any(|w| {
        (w[0].is_ident("struct") && w[1].text.ends_with("_device_id"))
            || (w[0].is(".")
                && (w[1].text.ends_with("match_table") || w[1].text.ends_with("id_table")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmacro_eval::Value;

    /// Abridged from include/linux/mod_devicetable.h, pci.h, pci_ids.h, usb.h, of.h and
    /// irqchip.h of Linux 6.12.
    const HEADERS: &str = "struct pci_device_id {\n\t__u32 vendor, device;\n\t__u32 subvendor, subdevice;\n\t__u32 class, class_mask;\n\tkernel_ulong_t driver_data;\n\t__u32 override_only;\n};\n\
struct acpi_device_id {\n\t__u8 id[ACPI_ID_LEN];\n\tkernel_ulong_t driver_data;\n\t__u32 cls;\n\t__u32 cls_msk;\n};\n\
struct of_device_id {\n\tchar\tname[32];\n\tchar\ttype[32];\n\tchar\tcompatible[128];\n\tconst void *data;\n};\n\
#define USB_DEVICE_ID_MATCH_VENDOR\t\t0x0001\n#define USB_DEVICE_ID_MATCH_PRODUCT\t\t0x0002\n\
#define PCI_ANY_ID (~0)\n#define PCI_VENDOR_ID_INTEL\t\t0x8086\n\
#define PCI_VDEVICE(vend, dev) \\\n\t.vendor = PCI_VENDOR_ID_##vend, .device = (dev), \\\n\t.subvendor = PCI_ANY_ID, .subdevice = PCI_ANY_ID, 0, 0\n\
#define USB_DEVICE_ID_MATCH_DEVICE \\\n\t\t(USB_DEVICE_ID_MATCH_VENDOR | USB_DEVICE_ID_MATCH_PRODUCT)\n\
#define USB_DEVICE(vend, prod) \\\n\t.match_flags = USB_DEVICE_ID_MATCH_DEVICE, \\\n\t.idVendor = (vend), \\\n\t.idProduct = (prod)\n\
#define IRQCHIP_PLATFORM_DRIVER_BEGIN(drv_name) \\\nstatic const struct of_device_id drv_name##_irqchip_match_table[] = {\n\
#define IRQCHIP_MATCH(compat, fn) { .compatible = compat,\t\t\\\n\t\t\t\t    .data = typecheck_irq_init_cb(fn), },\n\
#define IRQCHIP_PLATFORM_DRIVER_END(drv_name, ...)\t\t\t\\\n\t{},\t\t\t\t\t\t\t\t\\\n};\t\t\t\t\t\t\t\t\t\\\nMODULE_DEVICE_TABLE(of, drv_name##_irqchip_match_table);\t\t\\\nstatic struct platform_driver drv_name##_driver = {\t\t\t\\\n\t.probe  = IS_ENABLED(CONFIG_IRQCHIP) ? \t\t\t\t\\\n\t\t\tplatform_irqchip_probe : NULL,\t\t\t\\\n\t.driver = {\t\t\t\t\t\t\t\\\n\t\t.name = #drv_name,\t\t\t\t\t\\\n\t\t.of_match_table = drv_name##_irqchip_match_table,\t\\\n\t},\t\t\t\t\t\t\t\t\\\n};\t\t\t\t\t\t\t\t\t\\\nbuiltin_platform_driver(drv_name##_driver)\n";

    fn cx() -> Context {
        Context::from_headers([HEADERS.as_bytes()])
    }

    #[test]
    fn a_pci_table_through_pci_vdevice() {
        // Modelled on drivers/net/ethernet/intel/e1000e/netdev.c (E1000_DEV_ID_* come from its
        // local hw.h).
        let hw = b"#define E1000_DEV_ID_82571EB_COPPER\t\t0x105E\n";
        let src = b"#include \"e1000.h\"\n\nstatic const struct pci_device_id e1000_pci_tbl[] = {\n\t{ PCI_VDEVICE(INTEL, E1000_DEV_ID_82571EB_COPPER), board_82571 },\n\t{ PCI_VDEVICE(INTEL, E1000_DEV_ID_82571EB_QUAD_COPPER_LP),\n\t  board_82571 },\n\n\t{ 0, 0, 0, 0, 0, 0, 0 }\t/* terminate list */\n};\nMODULE_DEVICE_TABLE(pci, e1000_pci_tbl);\n";
        let f = read_with(src, &cx(), &[hw]);
        assert_eq!(f.tables.len(), 1);
        let t = &f.tables[0];
        assert_eq!(
            (t.kind.as_str(), t.name.as_str(), t.line),
            ("pci_device_id", "e1000_pci_tbl", 3)
        );
        assert_eq!(t.module_device_table, Some(("pci".to_string(), 10)));
        assert_eq!(t.entries.len(), 2, "the terminator is left out");
        let e = &t.entries[0];
        assert_eq!((e.line, e.via.as_deref()), (4, Some("PCI_VDEVICE")));
        assert_eq!(e.get("vendor"), Some(&Value::Int(0x8086)));
        assert_eq!(e.get("device"), Some(&Value::Int(0x105E)));
        assert_eq!(e.get("subvendor"), Some(&Value::Int(u64::MAX)));
        assert_eq!(e.get("class_mask"), Some(&Value::Int(0)));
        assert_eq!(
            e.get("driver_data"),
            Some(&Value::Text("board_82571".into()))
        );
        let e = &t.entries[1];
        assert_eq!(e.line, 5);
        assert_eq!(
            e.get("device"),
            Some(&Value::Text("(E1000_DEV_ID_82571EB_QUAD_COPPER_LP)".into())),
            "an unknown name is kept as its text"
        );
    }

    #[test]
    fn positional_designated_and_usb() {
        // Modelled on drivers/acpi/ac.c, drivers/i2c/busses/i2c-imx.c (its attribute placed
        // before the name as drivers/hwmon/lm75.c:755 places it) and
        // drivers/net/usb/asix_devices.c, Linux 6.12.
        let src = b"static const struct acpi_device_id ac_device_ids[] __maybe_unused = {\n\t{\"ACPI0003\", 0},\n\t{\"\", 0},\n};\n\
static const struct of_device_id __maybe_unused i2c_imx_dt_ids[] = {\n\t{ .compatible = \"fsl,imx1-i2c\", .data = &imx1_i2c_hwdata, },\n\t{ /* sentinel */ }\n};\n\
static const struct usb_device_id\tproducts [] = {\n{\n\tUSB_DEVICE (0x0b95, 0x1790),\n\t.driver_info = (unsigned long) &ax88179_info,\n},\n\t{ },\n};\n";
        let f = read(src, &cx());
        let kinds: Vec<_> = f
            .tables
            .iter()
            .map(|t| (t.kind.as_str(), t.entries.len()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("acpi_device_id", 1),
                ("of_device_id", 1),
                ("usb_device_id", 1)
            ]
        );
        assert_eq!(
            f.tables[0].entries[0].get("id"),
            Some(&Value::Str("ACPI0003".into()))
        );
        assert_eq!(
            f.tables[0].entries[0].get("driver_data"),
            Some(&Value::Int(0))
        );
        let of = &f.tables[1].entries[0];
        assert_eq!(
            of.get("compatible"),
            Some(&Value::Str("fsl,imx1-i2c".into()))
        );
        assert_eq!(
            of.get("data"),
            Some(&Value::Text("&imx1_i2c_hwdata".into()))
        );
        assert_eq!(f.tables[1].name, "i2c_imx_dt_ids");
        assert_eq!(f.tables[1].module_device_table, None);
        let usb = &f.tables[2].entries[0];
        assert_eq!(usb.line, 11, "its first token, the line after its brace");
        assert_eq!(usb.get("match_flags"), Some(&Value::Int(3)));
        assert_eq!(usb.get("idVendor"), Some(&Value::Int(0x0b95)));
        assert_eq!(usb.get("idProduct"), Some(&Value::Int(0x1790)));
    }

    #[test]
    fn an_entry_of_an_unknown_macro_is_kept_as_written() {
        // Modelled on sound/pci/hda/patch_realtek.c (HDA_CODEC_ENTRY is in hda_codec.h).
        let src = b"static const struct hda_device_id snd_hda_id_realtek[] = {\n\tHDA_CODEC_ENTRY(0x10ec0215, \"ALC215\", patch_alc269),\n\t{} /* terminator */\n};\n";
        let f = read(src, &cx());
        let e = &f.tables[0].entries;
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].line, e[0].via.as_deref()),
            (2, Some("HDA_CODEC_ENTRY"))
        );
        assert!(e[0].fields.is_empty());
        assert_eq!(
            e[0].unexpanded.as_deref(),
            Some("HDA_CODEC_ENTRY(0x10ec0215,\"ALC215\",patch_alc269)")
        );
    }

    #[test]
    fn a_table_and_driver_made_by_macros() {
        // Modelled on drivers/irqchip/irq-meson-gpio.c, Linux 6.12.
        let src = b"IRQCHIP_PLATFORM_DRIVER_BEGIN(meson_gpio_intc)\nIRQCHIP_MATCH(\"amlogic,meson-gpio-intc\", meson_gpio_irq_of_init)\nIRQCHIP_PLATFORM_DRIVER_END(meson_gpio_intc)\n";
        let f = read(src, &cx());
        assert_eq!(f.tables.len(), 1);
        let t = &f.tables[0];
        assert_eq!(
            (t.name.as_str(), t.line),
            ("meson_gpio_intc_irqchip_match_table", 1)
        );
        assert_eq!(t.entries.len(), 1);
        assert_eq!(t.entries[0].line, 2);
        assert_eq!(t.entries[0].via.as_deref(), Some("IRQCHIP_MATCH"));
        assert_eq!(
            t.entries[0].get("compatible"),
            Some(&Value::Str("amlogic,meson-gpio-intc".into()))
        );
        assert_eq!(t.module_device_table, Some(("of".to_string(), 3)));
        assert_eq!(
            f.module_device_tables,
            [(
                "of".to_string(),
                "meson_gpio_intc_irqchip_match_table".to_string(),
                3
            )]
        );
        let d = &f.drivers[0];
        assert_eq!((d.var.as_str(), d.line), ("meson_gpio_intc_driver", 3));
        assert_eq!(d.probe.as_deref(), Some("platform_irqchip_probe"));
        assert_eq!(d.name.as_deref(), Some("meson_gpio_intc"));
    }

    #[test]
    fn a_file_without_needles_reads_through_its_headers_macros() {
        // Modelled on a driver whose header wraps the matcher with a vendor prefix.
        let cx = cx();
        let hw = LocalHeader::new(
            b"#define VENDOR_IS(np, chip) of_device_is_compatible(np, \"vendor,\" chip)\n",
            &cx,
        );
        assert!(hw.holds_needle);
        assert_eq!(hw.needle_macros, ["VENDOR_IS"]);
        let src =
            b"static int probe(struct device_node *np)\n{\n\treturn VENDOR_IS(np, \"chip\");\n}\n";
        let f = read_with_headers(src, &cx, &[&hw]);
        assert_eq!(
            f.compatibles
                .iter()
                .map(|c| (c.line, c.via.as_str(), c.compatible.as_str()))
                .collect::<Vec<_>>(),
            [(3, "of_device_is_compatible", "vendor,chip")]
        );
        let silent = b"static int probe(void)\n{\n\treturn 0;\n}\n";
        assert_eq!(
            read_with_headers(silent, &cx, &[&hw]),
            DriverFile::default()
        );
        assert_eq!(
            read_with(src, &cx, &[&b"#define VENDOR_IS(np, chip) 0\n"[..]]),
            DriverFile::default()
        );
    }

    #[test]
    fn one_local_header_serves_files_on_several_threads() {
        // A header without needles is lexed on the first lookup, from whichever thread.
        let cx = cx();
        let hw = LocalHeader::new(b"#define E1000_DEV_ID_82571EB_COPPER\t\t0x105E\n", &cx);
        let src: &[u8] = b"static const struct pci_device_id t[] = {\n\t{ PCI_VDEVICE(INTEL, E1000_DEV_ID_82571EB_COPPER), 0 },\n\t{ }\n};\n";
        let devices: Vec<Option<Value>> = std::thread::scope(|s| {
            let readers: Vec<_> = (0..4)
                .map(|_| s.spawn(|| read_with_headers(src, &cx, &[&hw])))
                .collect();
            readers
                .into_iter()
                .map(|r| {
                    r.join()
                        .ok()
                        .and_then(|f| f.tables.first()?.entries.first()?.get("device").cloned())
                })
                .collect()
        });
        assert_eq!(devices, vec![Some(Value::Int(0x105E)); 4]);
    }

    #[test]
    fn compatibles_in_own_defines() {
        let src = b"#define IS_IMX(np) of_device_is_compatible(np, \"fsl,imx6q\")\n\nint x;\n";
        let f = read(src, &cx());
        assert_eq!(f.compatibles.len(), 1);
        assert_eq!(
            (f.compatibles[0].line, f.compatibles[0].compatible.as_str()),
            (1, "fsl,imx6q")
        );
    }

    #[test]
    fn unclosed_input_stays_linear() {
        let mut src = String::from("#define W(n) of_property_read_bool(np, n)\n");
        for _ in 0..20_000 {
            src.push_str("static const struct of_device_id t[] = { { .compatible = of_device_is_compatible(np, W(\n");
        }
        let started = std::time::Instant::now();
        let f = read(src.as_bytes(), &cx());
        assert!(f.tables.is_empty());
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{:?}",
            started.elapsed()
        );
        let mut header = String::new();
        for _ in 0..20_000 {
            header.push_str("struct a { int b; ( \n");
        }
        let started = std::time::Instant::now();
        let _ = Context::from_headers([header.as_bytes()]);
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn any_bytes_are_read_without_panic(cut in 0usize..2000, junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let mut src = HEADERS.as_bytes().to_vec();
            src.extend_from_slice(b"\nstatic const struct pci_device_id t[] = { { PCI_VDEVICE(INTEL, 1), 2 }, {} };\nIRQCHIP_PLATFORM_DRIVER_BEGIN(x)\nIRQCHIP_MATCH(\"a\", f)\nIRQCHIP_PLATFORM_DRIVER_END(x)\n");
            src.truncate(cut.min(src.len()));
            src.extend_from_slice(&junk);
            let cx = cx();
            let _ = read(&src, &cx);
        }
    }
}
