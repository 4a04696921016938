//! The rows of an answer made from what the lookup found: a definition or a Kconfig entry as a
//! [`Record`] (its line, column, snippet and guard), a file as a file search lists it.

use super::{source, Found, Query};
use crate::envelope::{FileHit, Record};
use knav_index::buildfiles::KconfigEntry;
use knav_index::store::Snapshot;

impl Query<'_> {
    /// A record for a definition.
    pub fn def_record(&self, f: &Found<'_>) -> Record {
        let path = self.path(f.seg, f.def.file);
        let col = self.column_at(f.seg, f.def.file, f.def.line, f.def.name, 0);
        let snippet = self.snippet_near(f.seg, f.def.file, f.def.line, col);
        let (_, macro_signature) = self.macro_shape(f);
        Record {
            symbol: f.def.name.to_string(),
            path: path.to_string(),
            line: f.def.line,
            col,
            kind: Some(f.def.kind.name().to_string()),
            typeref: f.def.typeref.map(str::to_string),
            scope: f.def.scope.map(str::to_string),
            signature: macro_signature,
            guard: self.guard(f.seg, f.def.file, f.def.line),
            snippet,
            resolved_via: f.def.via.map(|v| format!("macro:{v}")),
            ..Default::default()
        }
    }

    /// A record for a Kconfig entry: its `config X` line, with the type, prompt and
    /// dependencies in the snippet (`config HIGHMEM: bool "High memory support"; depends on
    /// X86_32`).
    pub fn kconfig_record(&self, k: &KconfigEntry) -> Record {
        let e = &k.entry;
        let name = e.symbol.trim_start_matches("CONFIG_");
        let mut text = format!("{} {name}", e.keyword);
        let signature = match (&e.kind, &e.prompt) {
            (Some(kind), Some(p)) => Some(format!("{kind} \"{p}\"")),
            (Some(kind), None) => Some(kind.clone()),
            (None, Some(p)) => Some(format!("prompt \"{p}\"")),
            (None, None) => None,
        };
        let mut parts: Vec<String> = signature.iter().cloned().collect();
        if !e.depends.is_empty() {
            let d: Vec<String> = if e.depends.len() == 1 {
                e.depends.clone()
            } else {
                e.depends.iter().map(|d| format!("({d})")).collect()
            };
            parts.push(format!("depends on {}", d.join(" && ")));
        }
        parts.extend(e.selects.iter().cloned());
        if !parts.is_empty() {
            text.push_str(": ");
            text.push_str(&parts.join("; "));
        }
        let col = self
            .source(&k.path)
            .and_then(|s| s.line(e.line).map(|l| source::nth_identifier(l, name, 0)))
            .flatten()
            .map_or(1, |c| c as u32 + 1);
        Record {
            symbol: e.symbol.clone(),
            path: k.path.clone(),
            line: e.line,
            col,
            kind: Some(e.keyword.clone()),
            signature,
            snippet: source::cut(text.as_bytes()),
            resolved_via: Some("kconfig".into()),
            ..Default::default()
        }
    }
}

/// File `file` of segment `seg` of `snap`, at `path`, as a file search lists it.
pub fn file_hit(snap: &Snapshot, path: &str, seg: usize, file: u32) -> FileHit {
    let rec = snap.segments[seg].file(file);
    FileHit {
        path: path.to_string(),
        lines: rec.lines,
        definitions: rec.defs_count,
    }
}
