//! find_device's driver side: from a compatible's `of_device_id` entries and `OF_DECLARE`
//! declarations, or a device key's table entries (`pci:8086:15b8`, a vendor's wildcard entry,
//! a PCI class entry whose mask matches), to the driver structure naming the table, its probe
//! and remove functions, and the configuration symbol that builds the file (its Makefile line,
//! Kconfig entry and prompt, and y/m/n under `--active-config`); and `--driver NAME|FILE`,
//! everything one driver file matches and reads.

use std::collections::HashMap;

use knav_index::hw::devkeys;
use knav_index::hw::drivers::{DriverFacts, DriverStruct};
use knav_index::hw::ids::{IdRow, DRIVER_KEY};
use knav_index::hw::part::{Hw, Uses};
use knav_index::IndexError;

use super::verdict::Verdict;
use super::Query;
use crate::envelope::{
    DeviceCode, DeviceConfig, DeviceDriver, DeviceFunction, DriverProperty, DriverReport,
    DriverTable,
};

/// Devices named per driver in a callers answer.
const PROBE_DEVICES_SHOWN: usize = 5;

/// Reads the part's C side for one question, each file's facts decoded once.
pub(super) struct Drivers<'q, 's> {
    q: &'q Query<'s>,
    hw: &'q Hw,
    facts: HashMap<u32, DriverFacts>,
}

impl<'q, 's> Drivers<'q, 's> {
    /// A reader of `hw`'s C side for `q`.
    pub(super) fn new(q: &'q Query<'s>, hw: &'q Hw) -> Self {
        Drivers {
            q,
            hw,
            facts: HashMap::new(),
        }
    }

    /// The facts of the C file `file`.
    fn facts(&mut self, file: u32) -> Result<&DriverFacts, IndexError> {
        if !self.facts.contains_key(&file) {
            let (_, at) = self.hw.c_file(file)?;
            let f = self.hw.ids.facts(at)?;
            self.facts.insert(file, f);
        }
        Ok(&self.facts[&file])
    }

    /// The drivers matching a compatible and the code testing for it.
    pub(super) fn of_compatible(
        &mut self,
        uses: &Uses,
    ) -> Result<(Vec<DeviceDriver>, Vec<DeviceCode>), IndexError> {
        let mut drivers = Vec::new();
        for e in &uses.entries {
            drivers.push(self.entry_row(e.file, e.table, e.line)?);
        }
        let mut code = Vec::new();
        for c in &uses.code {
            let path = self.hw.path(c.file)?;
            if c.declared {
                let mut row = DeviceDriver {
                    path,
                    line: c.line,
                    how: c.via.clone(),
                    ..DeviceDriver::default()
                };
                row.config = self.config(&row.path);
                drivers.push(row);
            } else {
                code.push(DeviceCode {
                    path,
                    line: c.line,
                    via: c.via.clone(),
                    compatible: None,
                });
            }
        }
        Ok((drivers, code))
    }

    /// The drivers whose table entries have the device key `asked` (canonical), or a wider
    /// key that covers it ([`devkeys::lookups`]); for `pci:class:CCCCCC`, the class entries
    /// whose mask matches it.
    pub(super) fn of_key(&mut self, asked: &str) -> Result<Vec<DeviceDriver>, IndexError> {
        let mut out = Vec::new();
        if let Some(class) = asked.strip_prefix("pci:class:") {
            let want = u32::from_str_radix(class.split('/').next().unwrap_or(""), 16).ok();
            for (key, rows) in self.hw.ids.prefixed("pci:class:", 100_000)? {
                let Some((c, m)) = key["pci:class:".len()..].split_once('/') else {
                    continue;
                };
                let (Ok(c), Ok(m)) = (u32::from_str_radix(c, 16), u32::from_str_radix(m, 16))
                else {
                    continue;
                };
                if want.is_some_and(|w| w & m == c & m) {
                    self.rows_into(&rows, (key != asked).then_some(key.as_str()), &mut out)?;
                }
            }
            return Ok(out);
        }
        for key in devkeys::lookups(asked) {
            let rows = self.hw.ids.rows(&key)?;
            self.rows_into(&rows, (key != asked).then_some(key.as_str()), &mut out)?;
        }
        Ok(out)
    }

    fn rows_into(
        &mut self,
        rows: &[IdRow],
        key: Option<&str>,
        out: &mut Vec<DeviceDriver>,
    ) -> Result<(), IndexError> {
        for r in rows {
            if let IdRow::Entry { file, table, line } = *r {
                let mut row = self.entry_row(file, table, line)?;
                row.key = key.map(str::to_string);
                out.push(row);
            }
        }
        Ok(())
    }

    /// The row of the entry at `line` of table `table` of file `file`.
    fn entry_row(&mut self, file: u32, table: u32, line: u32) -> Result<DeviceDriver, IndexError> {
        let path = self.hw.path(file)?;
        let facts = self.facts(file)?;
        let t = facts.tables.get(table as usize);
        let how = t.map_or_else(String::new, |t| format!("{} {}", t.kind, t.name));
        let entry = t
            .and_then(|t| t.entries.iter().find(|e| e.line == line))
            .filter(|_| t.is_some_and(|t| t.kind != "of_device_id"))
            .map(|e| e.about.clone());
        let driver = t.and_then(|t| facts.driver_of(&t.name)).cloned();
        let table_name = t.map(|t| t.name.clone());
        let mut row = DeviceDriver {
            path,
            line,
            how,
            entry,
            ..DeviceDriver::default()
        };
        match driver {
            Some(d) => {
                self.fill_driver(&mut row, &d);
                row.config = self.config(&row.path);
            }
            // A table a header defines: the driver of a file that includes it names it.
            None => {
                if let Some((file, d)) = self.driver_elsewhere(table_name.as_deref(), &row.path)? {
                    let at = self.hw.path(file)?;
                    row.config = self.config(&at);
                    let mut named = DeviceDriver {
                        path: at,
                        ..DeviceDriver::default()
                    };
                    self.fill_driver(&mut named, &d);
                    row.driver = named
                        .driver
                        .map(|n| format!("{n} ({}:{})", named.path, d.line));
                    row.driver_line = None;
                    row.probe = named.probe;
                    row.remove = named.remove;
                }
            }
        }
        if row.config.is_none() {
            row.config = self.config(&row.path);
        }
        Ok(row)
    }

    /// The driver structure of another file that names `table`, defined by the header
    /// `header`: one of a file that reads that header, else the first.
    fn driver_elsewhere(
        &mut self,
        table: Option<&str>,
        header: &str,
    ) -> Result<Option<(u32, DriverStruct)>, IndexError> {
        let Some(table) = table else {
            return Ok(None);
        };
        let rows = self
            .hw
            .ids
            .rows(&format!("{}{table}", knav_index::hw::ids::TABLE_KEY))?;
        let mut first = None;
        for r in rows {
            let IdRow::Driver { file, driver } = r else {
                continue;
            };
            let facts = self.facts(file)?;
            let Some(d) = facts.drivers.get(driver as usize).cloned() else {
                continue;
            };
            if facts.locals.iter().any(|l| l == header) {
                return Ok(Some((file, d)));
            }
            first.get_or_insert((file, d));
        }
        Ok(first)
    }

    /// Fills `row`'s driver structure and functions from `d`.
    fn fill_driver(&self, row: &mut DeviceDriver, d: &DriverStruct) {
        row.driver = Some(format!("{} {}", d.kind, d.var));
        row.driver_line = Some(d.line);
        row.probe = d.probe.as_deref().map(|n| self.function(n, &row.path));
        row.remove = d.remove.as_deref().map(|n| self.function(n, &row.path));
    }

    /// Where `name` is defined: in `path` when it is, else its first definition.
    fn function(&self, name: &str, path: &str) -> DeviceFunction {
        let defs = self.q.definitions(name);
        let pick = defs
            .iter()
            .find(|f| self.q.path(f.seg, f.def.file) == path)
            .or_else(|| defs.first());
        DeviceFunction {
            name: name.to_string(),
            path: pick.map(|f| self.q.path(f.seg, f.def.file).to_string()),
            line: pick.map(|f| f.def.line),
        }
    }

    /// The configuration symbol that builds the C file `path`, from Kbuild's Makefile lines;
    /// `None` for a header or a file Kbuild does not reach.
    pub(super) fn config(&self, path: &str) -> Option<DeviceConfig> {
        let build = self.q.snap.build.as_ref()?;
        // The first alternative's innermost symbol: the object's own line (its directories'
        // come first).
        let alternatives = build.file_conditions(path);
        let chain: Vec<_> = alternatives
            .first()?
            .iter()
            .filter(|a| a.symbol.starts_with("CONFIG_"))
            .collect();
        let atom = *chain.last()?;
        let mut c = DeviceConfig {
            symbol: atom.symbol.clone(),
            makefile: atom.origin.split(' ').next().map(str::to_string),
            ..DeviceConfig::default()
        };
        if let Some(k) = self.q.kconfig_entries(&atom.symbol).into_iter().next() {
            c.kconfig = Some(format!("{}:{}", k.path, k.entry.line));
            c.prompt = k.entry.prompt.clone();
        }
        if let Some(config) = self.q.page.active.as_deref() {
            match self.q.file_verdict(path, config) {
                Verdict::Hidden(why) => {
                    c.built = Some("n".into());
                    c.why = Some(why.to_string());
                }
                Verdict::Live => {
                    // A module when any symbol on the way is one.
                    let values: Vec<_> = chain.iter().map(|a| config.value(&a.symbol)).collect();
                    c.built = if values.contains(&Some(&knav_kconfig::Value::Module)) {
                        Some("m".into())
                    } else if values.iter().all(|v| v == &Some(&knav_kconfig::Value::Yes)) {
                        Some("y".into())
                    } else {
                        None
                    };
                }
                Verdict::Unknown => {}
            }
        }
        Some(c)
    }

    /// The driver structure `driver` of the C file `file` and the devices its tables list.
    pub(super) fn probe_devices(
        &mut self,
        file: u32,
        driver: u32,
    ) -> Result<Option<crate::envelope::ProbeDevices>, IndexError> {
        let path = self.hw.path(file)?;
        let facts = self.facts(file)?;
        let Some(d) = facts.drivers.get(driver as usize) else {
            return Ok(None);
        };
        let keys: Vec<&String> = facts
            .tables
            .iter()
            .filter(|t| d.tables.iter().any(|(_, name)| *name == t.name))
            .flat_map(|t| t.entries.iter().flat_map(|e| e.keys.iter()))
            .collect();
        Ok(Some(crate::envelope::ProbeDevices {
            driver: format!("{} {}", d.kind, d.var),
            path,
            line: d.line,
            devices: keys.len() as u64,
            first: keys
                .iter()
                .take(PROBE_DEVICES_SHOWN)
                .map(|k| k.to_string())
                .collect(),
        }))
    }

    /// The files `--driver NAME|FILE` names: a path of the part's, or the files of the
    /// driver structures of that variable or `.name`.
    pub(super) fn named(&self, name: &str) -> Result<Vec<u32>, IndexError> {
        if let Some(id) = self.hw.c_id(name)? {
            return Ok(vec![id]);
        }
        let mut files: Vec<u32> = self
            .hw
            .ids
            .rows(&format!("{DRIVER_KEY}{name}"))?
            .into_iter()
            .map(|r| match r {
                IdRow::Driver { file, .. } | IdRow::Entry { file, .. } => file,
            })
            .collect();
        files.sort_unstable();
        files.dedup();
        Ok(files)
    }

    /// Everything the C file `file` matches and reads.
    pub(super) fn report(&mut self, file: u32) -> Result<DriverReport, IndexError> {
        let path = self.hw.path(file)?;
        let facts = self.facts(file)?.clone();
        let config = self.config(&path);
        let path_of_code = path.clone();
        let drivers = facts
            .drivers
            .iter()
            .map(|d| {
                let mut row = DeviceDriver {
                    path: path.clone(),
                    line: d.line,
                    how: d
                        .tables
                        .iter()
                        .map(|(des, t)| format!(".{des} = {t}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    config: config.clone(),
                    ..DeviceDriver::default()
                };
                self.fill_driver(&mut row, d);
                row
            })
            .collect();
        Ok(DriverReport {
            path,
            drivers,
            tables: facts
                .tables
                .iter()
                .map(|t| DriverTable {
                    kind: t.kind.clone(),
                    name: t.name.clone(),
                    line: t.line,
                    module_device_table: t.module_bus.clone(),
                    keys: t
                        .entries
                        .iter()
                        .map(|e| e.keys.first().cloned().unwrap_or_else(|| e.about.clone()))
                        .collect(),
                })
                .collect(),
            code: facts
                .compatibles
                .iter()
                .map(|(line, via, c, _)| DeviceCode {
                    path: path_of_code.clone(),
                    line: *line,
                    via: via.clone(),
                    compatible: Some(c.clone()),
                })
                .collect(),
            properties: facts
                .properties
                .iter()
                .map(|(line, function, property)| DriverProperty {
                    line: *line,
                    function: function.clone(),
                    property: property.clone(),
                })
                .collect(),
        })
    }
}
