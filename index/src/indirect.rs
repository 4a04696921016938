//! `indirect.dat`: a segment's calls through function pointers ([`knav_c::indirect`]) as one
//! sorted table of tab-separated lines, looked up by binary search over the memory map.
//!
//! Each line starts with its table letter and its key:
//!
//! - `M  OWNER.MEMBER  TAG|-  0|1`: a member of struct `OWNER`, of struct type `TAG`, `1` when
//!   it is a function pointer;
//! - `P  MEMBER  OWNER`: struct `OWNER` has a function-pointer member `MEMBER`;
//! - `R  FUNC  TYPE  FIELD  FILE  LINE`: `FUNC` is stored in member `FIELD` of `TYPE` (a
//!   [`knav_c::indirect::TypePath`], `tag.member…`) at line `LINE` of file id `FILE`;
//! - `F  FIELD  TYPE  FUNC  FILE  LINE`: the same registration, by member;
//! - `D  FIELD  TYPE|?  FILE  LINE`: a call through member `FIELD` of `TYPE` (`?`: unknown);
//! - `I  FUNC  FILE  LINE`: `INDIRECT_CALL_n` names `FUNC` as a likely target.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::format::header;
use knav_c::indirect::Facts;

/// The file's name in a segment.
pub const FILE: &str = "indirect.dat";
/// The spool its lines go to while the segment is built, removed when the table is written.
const SPOOL: &str = "indirect.spool";

/// Collects the lines of every file of a segment, then writes them sorted. While the segment's
/// files are scanned the lines go to a spool file beside the table, not to memory: the kernel's
/// 60 MB of lines would otherwise sit on top of the scan's peak RSS.
pub struct IndirectWriter {
    spool_path: PathBuf,
    spool: BufWriter<File>,
    /// Registrations and dispatch sites added.
    pub registrations: u64,
    /// Dispatch sites added.
    pub dispatches: u64,
}

impl IndirectWriter {
    /// A writer spooling to `SPOOL` in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<IndirectWriter> {
        let spool_path = dir.join(SPOOL);
        let spool = BufWriter::with_capacity(1 << 20, File::create(&spool_path)?);
        Ok(IndirectWriter {
            spool_path,
            spool,
            registrations: 0,
            dispatches: 0,
        })
    }

    fn line(&mut self, fields: &[&str]) -> std::io::Result<()> {
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                self.spool.write_all(b"\t")?;
            }
            self.spool.write_all(f.as_bytes())?;
        }
        self.spool.write_all(b"\n")
    }

    /// Adds what file `file` shows.
    pub fn add(&mut self, file: u32, facts: &Facts) -> std::io::Result<()> {
        let file = file.to_string();
        for m in &facts.members {
            let key = format!("{}.{}", m.owner, m.name);
            let tag = m.tag.as_deref().unwrap_or("-");
            self.line(&["M", &key, tag, if m.fnptr { "1" } else { "0" }])?;
            if m.fnptr {
                self.line(&["P", &m.name, &m.owner])?;
            }
        }
        for r in &facts.registrations {
            let (target, line) = (r.target.encode(), r.line.to_string());
            self.line(&["R", &r.func, &target, &r.field, &file, &line])?;
            self.line(&["F", &r.field, &target, &r.func, &file, &line])?;
        }
        for d in &facts.dispatches {
            let target = d.target.as_ref().map_or("?".to_string(), |t| t.encode());
            self.line(&["D", &d.field, &target, &file, &d.line.to_string()])?;
        }
        for (func, line) in &facts.listed {
            self.line(&["I", func, &file, &line.to_string()])?;
        }
        self.registrations += facts.registrations.len() as u64;
        self.dispatches += (facts.dispatches.len() + facts.listed.len()) as u64;
        Ok(())
    }

    /// Writes the table, sorted and without repeated lines, to `path`, and removes the spool.
    pub fn finish(self, path: &Path) -> std::io::Result<()> {
        let IndirectWriter {
            spool_path, spool, ..
        } = self;
        drop(spool.into_inner().map_err(|e| e.into_error())?);
        let text = std::fs::read(&spool_path)?;
        let mut lines: Vec<&[u8]> = text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        lines.sort_unstable();
        lines.dedup();
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        out.write_all(&header(b"INDI"))?;
        for l in &lines {
            out.write_all(l)?;
            out.write_all(b"\n")?;
        }
        out.into_inner().map_err(|e| e.into_error())?;
        drop(lines);
        drop(text);
        std::fs::remove_file(&spool_path)
    }
}

/// The lines of table `table` with key `key` that have `N` fields after the key, each split
/// into them; found by binary search in `body` (the file after its header), read as they are
/// asked for, nothing allocated a line. A damaged table gives fewer lines, never a panic.
pub fn lookup<'a, const N: usize>(
    body: &'a [u8],
    table: &str,
    key: &str,
) -> impl Iterator<Item = [&'a str; N]> + 'a {
    let mut prefix = Vec::with_capacity(table.len() + key.len() + 2);
    prefix.extend_from_slice(table.as_bytes());
    prefix.push(b'\t');
    prefix.extend_from_slice(key.as_bytes());
    prefix.push(b'\t');
    // The first line not before `prefix`: lines are sorted, so binary search on line starts.
    let line_at = |pos: usize| -> usize {
        match memchr::memrchr(b'\n', &body[..pos]) {
            Some(k) => k + 1,
            None => 0,
        }
    };
    let (mut lo, mut hi) = (0usize, body.len());
    while lo < hi {
        let mid = line_at(lo + (hi - lo) / 2).max(lo);
        let end = memchr::memchr(b'\n', &body[mid..]).map_or(body.len(), |k| mid + k);
        if body[mid..end] < prefix[..] {
            lo = end + 1;
        } else {
            hi = mid;
        }
    }
    let mut at = lo.min(body.len());
    std::iter::from_fn(move || {
        while at < body.len() && body[at..].starts_with(&prefix) {
            let end = memchr::memchr(b'\n', &body[at..]).map_or(body.len(), |k| at + k);
            let rest = &body[at + prefix.len()..end];
            at = end + 1;
            if let Some(fields) = std::str::from_utf8(rest).ok().and_then(split::<N>) {
                return Some(fields);
            }
        }
        None
    })
}

/// `line`'s `N` tab-separated fields; `None` when it has another number.
fn split<const N: usize>(line: &str) -> Option<[&str; N]> {
    let mut out = [""; N];
    let mut parts = line.split('\t');
    for slot in &mut out {
        *slot = parts.next()?;
    }
    parts.next().is_none().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use knav_c::indirect::{Dispatch, Member, Registration, TypePath};

    #[test]
    fn lines_written_sorted_are_found_by_key() {
        let dir = std::env::temp_dir().join(format!("knav-indirect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut w = IndirectWriter::create(&dir).unwrap();
        let path = |tag: &str| TypePath {
            tag: tag.to_string(),
            chain: Vec::new(),
        };
        let facts = Facts {
            members: vec![Member {
                owner: "ops".into(),
                name: "read".into(),
                tag: None,
                fnptr: true,
            }],
            registrations: vec![
                Registration {
                    target: path("ops"),
                    field: "read".into(),
                    func: "b_read".into(),
                    line: 9,
                },
                Registration {
                    target: path("ops"),
                    field: "read".into(),
                    func: "a_read".into(),
                    line: 3,
                },
            ],
            dispatches: vec![Dispatch {
                target: None,
                field: "read".into(),
                line: 20,
            }],
            listed: Vec::new(),
        };
        w.add(7, &facts).unwrap();
        w.add(7, &facts).unwrap();
        let file = dir.join(FILE);
        w.finish(&file).unwrap();
        let bytes = std::fs::read(&file).unwrap();
        assert!(!dir.join(SPOOL).exists(), "the spool is removed");
        std::fs::remove_dir_all(&dir).unwrap();
        let body = &bytes[crate::format::HEADER_LEN..];
        let rows = |table: &str, key: &str| -> Vec<Vec<String>> {
            let mut out: Vec<Vec<String>> = Vec::new();
            // Each table's arity; a line of another is not given.
            out.extend(lookup::<4>(body, table, key).map(|f| f.map(String::from).to_vec()));
            out.extend(lookup::<3>(body, table, key).map(|f| f.map(String::from).to_vec()));
            out.extend(lookup::<2>(body, table, key).map(|f| f.map(String::from).to_vec()));
            out.extend(lookup::<1>(body, table, key).map(|f| f.map(String::from).to_vec()));
            out
        };
        assert_eq!(rows("R", "a_read"), [["ops", "read", "7", "3"]]);
        assert_eq!(
            rows("F", "read"),
            [["ops", "a_read", "7", "3"], ["ops", "b_read", "7", "9"]]
        );
        assert_eq!(rows("D", "read"), [["?", "7", "20"]]);
        assert_eq!(rows("P", "read"), [["ops"]]);
        assert_eq!(rows("M", "ops.read"), [["-", "1"]]);
        assert!(rows("R", "c_read").is_empty());
        assert_eq!(lookup::<1>(b"garbage\xff\n\nR\tx", "R", "x").count(), 0);
        assert_eq!(lookup::<1>(b"R\tx\t\xff\nR\tx\tok\n", "R", "x").count(), 1);
    }
}
