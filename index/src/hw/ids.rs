//! The C side of the hardware part: `cfiles.dat`, the C files that say something (path order,
//! read one at a time through an offset table: a query opens the part without decoding
//! them); `drivers.dat`, each one's [`DriverFacts`]; and `ids.fst` / `ids.dat`, each device key
//! (`pci:8086:15b8`, [`super::devkeys`]), each driver name (`driver:i2c_imx_driver`, also by
//! its `.name`) and probe function (`probe:i2c_imx_probe`) to the table entries and driver
//! structures that have it. A C file's id in the
//! part is the number of device-tree and binding files plus its index here.

use std::collections::BTreeMap;
use std::path::Path;

use super::drivers::DriverFacts;
use crate::codec::{put_varint, Reader};
use crate::disk::MapBytes;
use crate::error::IndexError;
use crate::format::{check_header, header, HEADER_LEN};

/// The files of this side, in the order [`IdsWriter::finish`] writes them.
pub const FILES: [&str; 4] = ["cfiles.dat", "drivers.dat", "ids.fst", "ids.dat"];

const CFILES_KIND: &[u8; 4] = b"HWCF";
const DRIVERS_KIND: &[u8; 4] = b"HWDR";
const IDS_KIND: &[u8; 4] = b"HWID";

/// The key prefix of a driver's names.
pub const DRIVER_KEY: &str = "driver:";

/// The key prefix of a driver's probe function (`probe:i2c_imx_probe`).
pub const PROBE_KEY: &str = "probe:";

/// The key prefix of a table a driver names that its own file does not define (a header it
/// includes does: `table:rio_pci_tbl`).
pub const TABLE_KEY: &str = "table:";

/// One row of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdRow {
    /// An entry of a match table.
    Entry {
        /// The file's id.
        file: u32,
        /// The table's index among the file's tables.
        table: u32,
        /// The entry's line.
        line: u32,
    },
    /// A driver structure.
    Driver {
        /// The file's id.
        file: u32,
        /// Its index among the file's drivers.
        driver: u32,
    },
}

/// Collects the C files' facts and writes this side.
#[derive(Default)]
pub struct IdsWriter {
    /// Each C file's record: path and offset in `drivers.dat`.
    cfiles: Vec<u8>,
    /// Where each record starts in `cfiles`.
    starts: Vec<u32>,
    drivers: Vec<u8>,
    keys: BTreeMap<String, Vec<u8>>,
}

impl IdsWriter {
    /// A writer with nothing yet.
    pub fn new() -> IdsWriter {
        IdsWriter {
            drivers: header(DRIVERS_KIND).to_vec(),
            ..IdsWriter::default()
        }
    }

    /// Adds the facts of the file `file` (the next C file, in path order) at `path`.
    pub fn add(&mut self, file: u32, path: &str, f: &DriverFacts) {
        let at = self.drivers.len() as u64;
        f.put(&mut self.drivers);
        self.starts.push(self.cfiles.len() as u32);
        crate::codec::put_str(&mut self.cfiles, path.as_bytes());
        put_varint(&mut self.cfiles, at);
        for (ti, t) in f.tables.iter().enumerate() {
            if t.kind == "of_device_id" {
                continue; // its compatibles are in the compatibles' map
            }
            for e in &t.entries {
                for k in &e.keys {
                    let rows = self.keys.entry(k.clone()).or_default();
                    rows.push(0);
                    put_varint(rows, file as u64);
                    put_varint(rows, ti as u64);
                    put_varint(rows, e.line as u64);
                }
            }
        }
        for (di, d) in f.drivers.iter().enumerate() {
            let mut names = vec![format!("{DRIVER_KEY}{}", d.var)];
            names.extend(
                d.name
                    .as_deref()
                    .filter(|n| *n != d.var)
                    .map(|n| format!("{DRIVER_KEY}{n}")),
            );
            names.extend(d.probe.as_deref().map(|p| format!("{PROBE_KEY}{p}")));
            names.extend(
                d.tables
                    .iter()
                    .filter(|(_, t)| !f.tables.iter().any(|own| own.name == *t))
                    .map(|(_, t)| format!("{TABLE_KEY}{t}")),
            );
            for n in names {
                let rows = self.keys.entry(n).or_default();
                rows.push(1);
                put_varint(rows, file as u64);
                put_varint(rows, di as u64);
            }
        }
    }

    /// Writes this side's files into `dir`; returns each with its bytes.
    pub fn finish(self, dir: &Path) -> Result<Vec<(&'static str, Vec<u8>)>, IndexError> {
        let mut rows = header(IDS_KIND).to_vec();
        let mut fst = crate::fstbuild::MapWriter::new(Vec::new());
        for (k, r) in &self.keys {
            fst.insert(k.as_bytes(), rows.len() as u64)
                .map_err(|e| IndexError::io("cannot write", dir)(e))?;
            put_varint(&mut rows, r.len() as u64);
            rows.extend_from_slice(r);
        }
        let fst = fst
            .finish()
            .map_err(|e| IndexError::io("cannot write", dir)(e))?;
        let mut cfiles = header(CFILES_KIND).to_vec();
        cfiles.extend_from_slice(&(self.starts.len() as u32).to_le_bytes());
        for s in &self.starts {
            cfiles.extend_from_slice(&s.to_le_bytes());
        }
        cfiles.extend_from_slice(&self.cfiles);
        Ok(vec![
            (FILES[0], cfiles),
            (FILES[1], self.drivers),
            (FILES[2], fst),
            (FILES[3], rows),
        ])
    }
}

/// This side of an open part.
pub struct Ids {
    dir: std::path::PathBuf,
    cfiles: memmap2::Mmap,
    /// C files in `cfiles.dat`.
    count: usize,
    drivers: memmap2::Mmap,
    keys: fst::Map<MapBytes>,
    rows: memmap2::Mmap,
}

impl Ids {
    /// Opens this side in `dir`.
    pub fn open(dir: &Path) -> Result<Ids, IndexError> {
        let cfiles = crate::disk::map(dir, FILES[0], None)?;
        check_header(&cfiles, CFILES_KIND, &dir.join(FILES[0]))?;
        let count = cfiles
            .get(HEADER_LEN..HEADER_LEN + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .filter(|&n| HEADER_LEN + 4 + 4 * n <= cfiles.len())
            .ok_or_else(|| IndexError::damaged(dir.join(FILES[0]), "its count does not fit"))?;
        let drivers = crate::disk::map(dir, FILES[1], None)?;
        check_header(&drivers, DRIVERS_KIND, &dir.join(FILES[1]))?;
        let keys = crate::damage::open_fst(dir, FILES[2], None)?;
        let rows = crate::disk::map(dir, FILES[3], None)?;
        check_header(&rows, IDS_KIND, &dir.join(FILES[3]))?;
        Ok(Ids {
            dir: dir.to_path_buf(),
            cfiles,
            count,
            drivers,
            keys,
            rows,
        })
    }

    /// Bytes of the files a query may read.
    pub fn bytes(&self) -> u64 {
        (self.cfiles.len()
            + self.drivers.len()
            + self.keys.as_fst().as_bytes().len()
            + self.rows.len()) as u64
    }

    /// The number of C files.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no C file says anything.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The path of the C file `i` (its index here) and the offset of its facts in
    /// `drivers.dat`.
    pub fn c_file(&self, i: usize) -> Result<(String, u64), IndexError> {
        let damaged = || IndexError::damaged(self.dir.join(FILES[0]), "a record does not decode");
        if i >= self.count {
            return Err(damaged());
        }
        let at = HEADER_LEN + 4 + 4 * i;
        let start = self
            .cfiles
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(damaged)?;
        let body = HEADER_LEN + 4 + 4 * self.count + start;
        let mut r = Reader::new(self.cfiles.get(body..).ok_or_else(damaged)?);
        let path = std::str::from_utf8(r.str())
            .map_err(|_| damaged())?
            .to_string();
        let drivers_at = r.varint();
        if r.overrun {
            return Err(damaged());
        }
        Ok((path, drivers_at))
    }

    /// The index of the C file at `path`, found by bisection (paths are in order).
    pub fn find(&self, path: &str) -> Result<Option<usize>, IndexError> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.c_file(mid)?.0.as_str().cmp(path) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(mid)),
            }
        }
        Ok(None)
    }

    /// The facts of the C file whose record starts at `at` in `drivers.dat`.
    pub fn facts(&self, at: u64) -> Result<DriverFacts, IndexError> {
        let damaged = || IndexError::damaged(self.dir.join(FILES[1]), "a record does not decode");
        let bytes = self
            .drivers
            .get(at as usize..)
            .filter(|_| at >= HEADER_LEN as u64)
            .ok_or_else(damaged)?;
        DriverFacts::get(&mut Reader::new(bytes)).ok_or_else(damaged)
    }

    /// The rows of `key`; empty when no entry or driver has it.
    pub fn rows(&self, key: &str) -> Result<Vec<IdRow>, IndexError> {
        match self.keys.get(key) {
            Some(at) => self.rows_at(at),
            None => Ok(Vec::new()),
        }
    }

    /// The keys that start with `prefix`, at most `max`, with their rows.
    pub fn prefixed(
        &self,
        prefix: &str,
        max: usize,
    ) -> Result<Vec<(String, Vec<IdRow>)>, IndexError> {
        use fst::{Automaton, IntoStreamer, Streamer};
        let mut s = self
            .keys
            .search(fst::automaton::Str::new(prefix).starts_with())
            .into_stream();
        let mut out = Vec::new();
        while let Some((k, at)) = s.next() {
            out.push((String::from_utf8_lossy(k).into_owned(), self.rows_at(at)?));
            if out.len() >= max {
                break;
            }
        }
        Ok(out)
    }

    /// Keys within `edits` edits of `key`, at most `max`.
    pub fn near(&self, key: &str, edits: u32, max: usize) -> Vec<String> {
        super::near_keys(&self.keys, key, edits, max)
    }

    fn rows_at(&self, at: u64) -> Result<Vec<IdRow>, IndexError> {
        let damaged = || IndexError::damaged(self.dir.join(FILES[3]), "a row does not decode");
        let bytes = super::rows_at(&self.rows, at).ok_or_else(damaged)?;
        let mut r = Reader::new(bytes);
        let mut out = Vec::new();
        while !r.at_end() && !r.overrun {
            let tag = r.u8();
            let file = r.varint() as u32;
            out.push(match tag {
                0 => IdRow::Entry {
                    file,
                    table: r.varint() as u32,
                    line: r.varint() as u32,
                },
                1 => IdRow::Driver {
                    file,
                    driver: r.varint() as u32,
                },
                _ => return Err(damaged()),
            });
        }
        if r.overrun {
            return Err(damaged());
        }
        Ok(out)
    }
}
