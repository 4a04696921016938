//! What one C file gives the hardware part ([`DriverFacts`]): its match tables with each
//! entry's device keys ([`super::devkeys`]) or compatible, the driver structures that name
//! them, compatibles declared or matched in code, the properties it reads by name and the
//! local headers it was read with. Made from `knav_hw::driver_file`'s answer, encoded into
//! `facts.dat` (reused by a refresh) and `drivers.dat` (read by queries).

use knav_hw::cmacro_eval::Value;
use knav_hw::driver_file::DriverFile;

use super::devkeys;
use super::facts::{opt_string, string};
use crate::codec::{put_opt_str, put_str, put_varint, Reader};

/// What a C file says about hardware, as the part keeps it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverFacts {
    /// The local headers (`#include "x.h"`, root-relative) it was read with: a change to
    /// one of them reads the file again.
    pub locals: Vec<String>,
    /// Its match tables.
    pub tables: Vec<TableFacts>,
    /// Its driver structures that name a table.
    pub drivers: Vec<DriverStruct>,
    /// Compatibles outside tables: (line, via, compatible, declared).
    pub compatibles: Vec<(u32, String, String, bool)>,
    /// Properties read by name: (line, function, property).
    pub properties: Vec<(u32, String, String)>,
}

/// One match table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableFacts {
    /// The struct tag of its entries (`pci_device_id`).
    pub kind: String,
    /// The array's name.
    pub name: String,
    /// The line of its name.
    pub line: u32,
    /// The bus its `MODULE_DEVICE_TABLE` names, if any.
    pub module_bus: Option<String>,
    /// Its entries.
    pub entries: Vec<EntryFacts>,
}

/// One entry of a match table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryFacts {
    /// Its line.
    pub line: u32,
    /// Its device keys (`pci:8086:15b8`) or, in an `of_device_id` table, its compatible.
    pub keys: Vec<String>,
    /// What it matches, for a reader ([`devkeys::about`]).
    pub about: String,
}

/// A driver structure that names a table, as `knav_hw::driver` reads it.
pub type DriverStruct = knav_hw::driver::Driver;

impl DriverFacts {
    /// The facts of `f`, read with the local headers `locals`.
    pub fn of(f: DriverFile, locals: Vec<String>) -> DriverFacts {
        let tables = f
            .tables
            .into_iter()
            .map(|t| {
                let entries = t
                    .entries
                    .iter()
                    .map(|e| EntryFacts {
                        line: e.line,
                        keys: if t.kind == "of_device_id" {
                            match e.get("compatible") {
                                Some(Value::Str(c)) if !c.is_empty() => vec![c.clone()],
                                _ => Vec::new(),
                            }
                        } else {
                            devkeys::keys(&t.kind, e)
                        },
                        about: devkeys::about(e),
                    })
                    .collect();
                TableFacts {
                    module_bus: t.module_device_table.map(|(bus, _)| bus),
                    kind: t.kind,
                    name: t.name,
                    line: t.line,
                    entries,
                }
            })
            .collect();
        DriverFacts {
            locals,
            tables,
            drivers: f.drivers,
            compatibles: f
                .compatibles
                .into_iter()
                .map(|c| (c.line, c.via, c.compatible, c.declared))
                .collect(),
            properties: f
                .properties
                .into_iter()
                .map(|p| (p.line, p.function, p.property))
                .collect(),
        }
    }

    /// True when the file says nothing about hardware.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
            && self.drivers.is_empty()
            && self.compatibles.is_empty()
            && self.properties.is_empty()
    }

    /// The driver structure that names the table `name`, if any.
    pub fn driver_of(&self, table: &str) -> Option<&DriverStruct> {
        self.drivers
            .iter()
            .find(|d| d.tables.iter().any(|(_, t)| t == table))
    }

    /// Appends the encoded facts to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        put_varint(out, self.locals.len() as u64);
        for l in &self.locals {
            put_str(out, l.as_bytes());
        }
        put_varint(out, self.tables.len() as u64);
        for t in &self.tables {
            put_str(out, t.kind.as_bytes());
            put_str(out, t.name.as_bytes());
            put_varint(out, t.line as u64);
            put_opt_str(out, t.module_bus.as_deref());
            put_varint(out, t.entries.len() as u64);
            for e in &t.entries {
                put_varint(out, e.line as u64);
                put_varint(out, e.keys.len() as u64);
                for k in &e.keys {
                    put_str(out, k.as_bytes());
                }
                put_str(out, e.about.as_bytes());
            }
        }
        put_varint(out, self.drivers.len() as u64);
        for d in &self.drivers {
            put_str(out, d.kind.as_bytes());
            put_str(out, d.var.as_bytes());
            put_varint(out, d.line as u64);
            put_varint(out, d.tables.len() as u64);
            for (des, t) in &d.tables {
                put_str(out, des.as_bytes());
                put_str(out, t.as_bytes());
            }
            put_opt_str(out, d.probe.as_deref());
            put_opt_str(out, d.remove.as_deref());
            put_opt_str(out, d.name.as_deref());
        }
        put_varint(out, self.compatibles.len() as u64);
        for (line, via, c, declared) in &self.compatibles {
            put_varint(out, *line as u64);
            put_str(out, via.as_bytes());
            put_str(out, c.as_bytes());
            out.push(u8::from(*declared));
        }
        put_varint(out, self.properties.len() as u64);
        for (line, function, p) in &self.properties {
            put_varint(out, *line as u64);
            put_str(out, function.as_bytes());
            put_str(out, p.as_bytes());
        }
    }

    /// Facts written by [`DriverFacts::put`]; `None` when they do not decode.
    pub fn get(r: &mut Reader<'_>) -> Option<DriverFacts> {
        let locals = list(r, 1, string)?;
        let tables = list(r, 5, |r| {
            let (kind, name, line) = (string(r)?, string(r)?, r.varint() as u32);
            let module_bus = opt_string(r);
            let entries = list(r, 3, |r| {
                Some(EntryFacts {
                    line: r.varint() as u32,
                    keys: list(r, 1, string)?,
                    about: string(r)?,
                })
            })?;
            Some(TableFacts {
                kind,
                name,
                line,
                module_bus,
                entries,
            })
        })?;
        let drivers = list(r, 7, |r| {
            let (kind, var, line) = (string(r)?, string(r)?, r.varint() as u32);
            Some(DriverStruct {
                kind,
                var,
                line,
                tables: list(r, 2, |r| Some((string(r)?, string(r)?)))?,
                probe: opt_string(r),
                remove: opt_string(r),
                name: opt_string(r),
            })
        })?;
        let compatibles = list(r, 4, |r| {
            let line = r.varint() as u32;
            let (via, c) = (string(r)?, string(r)?);
            Some((line, via, c, r.u8() == 1))
        })?;
        let properties = list(r, 3, |r| {
            let line = r.varint() as u32;
            Some((line, string(r)?, string(r)?))
        })?;
        (!r.overrun).then_some(DriverFacts {
            locals,
            tables,
            drivers,
            compatibles,
            properties,
        })
    }
}

/// A list written as its length and its items, each read by `item` (at least `min` bytes
/// each); `None` when one does not decode or the bytes run out.
fn list<T>(
    r: &mut Reader<'_>,
    min: usize,
    mut item: impl FnMut(&mut Reader<'_>) -> Option<T>,
) -> Option<Vec<T>> {
    let n = r.varint();
    let mut out = Vec::with_capacity(r.room_for(n, min));
    for _ in 0..n {
        out.push(item(r)?);
        if r.overrun {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver file modelled on drivers/i2c/busses/i2c-imx.c, Linux 6.12 (abridged).
    const IMX: &[u8] = b"#include <linux/of.h>\n\
static const struct of_device_id i2c_imx_dt_ids[] = {\n\
\t{ .compatible = \"fsl,imx1-i2c\", .data = &imx1_i2c_hwdata, },\n\
\t{ .compatible = \"fsl,imx21-i2c\", .data = &imx21_i2c_hwdata, },\n\
\t{ /* sentinel */ }\n\
};\n\
MODULE_DEVICE_TABLE(of, i2c_imx_dt_ids);\n\
static int i2c_imx_probe(struct platform_device *pdev)\n\
{\n\
\tof_property_read_u32(pdev->dev.of_node, \"clock-frequency\", &f);\n\
}\n\
static struct platform_driver i2c_imx_driver = {\n\
\t.probe = i2c_imx_probe,\n\
\t.remove_new = i2c_imx_remove,\n\
\t.driver = {\n\
\t\t.name = DRIVER_NAME,\n\
\t\t.of_match_table = i2c_imx_dt_ids,\n\
\t},\n\
};\n";

    #[test]
    fn a_driver_files_facts_decode_as_encoded_and_truncated_ones_do_not() {
        let cx = knav_hw::driver_file::Context::default();
        let f = DriverFacts::of(
            knav_hw::driver_file::read(IMX, &cx),
            vec!["drivers/i2c/busses/x.h".into()],
        );
        assert_eq!(f.tables.len(), 1);
        let t = &f.tables[0];
        assert_eq!(
            (t.name.as_str(), t.line, t.module_bus.as_deref()),
            ("i2c_imx_dt_ids", 2, Some("of"))
        );
        let keys: Vec<_> = t
            .entries
            .iter()
            .map(|e| (e.line, e.keys[0].as_str()))
            .collect();
        assert_eq!(keys, [(3, "fsl,imx1-i2c"), (4, "fsl,imx21-i2c")]);
        let d = f
            .driver_of("i2c_imx_dt_ids")
            .expect("the driver naming the table");
        assert_eq!(
            (d.var.as_str(), d.line, d.probe.as_deref()),
            ("i2c_imx_driver", 12, Some("i2c_imx_probe"))
        );
        assert_eq!(
            f.properties,
            [(10, "of_property_read_u32".into(), "clock-frequency".into())]
        );
        let mut out = Vec::new();
        f.put(&mut out);
        let mut r = Reader::new(&out);
        assert_eq!(DriverFacts::get(&mut r), Some(f.clone()));
        assert!(r.at_end());
        for n in 0..out.len() {
            assert_eq!(DriverFacts::get(&mut Reader::new(&out[..n])), None, "{n}");
        }
    }
}
