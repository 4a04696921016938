//! change_impact: who is affected by a change to a function — its callers, their callers, to a
//! depth — grouped by `MAINTAINERS` subsystem and top directory, each with its export status.
//!
//! The walk is breadth-first over the call sites find_callers reads ([`direct_calls`], and the
//! calls through function pointers whose struct type is certain, [`indirect_calls`]). A
//! `static` caller is followed only through the calls of its own file. The walk reads at most
//! [`MAX_CALL_SITES`] call sites: past that every count is a floor (`counts_capped`), never a
//! total.

use std::collections::{HashMap, HashSet};

use knav_ctags::Kind;

use super::callers::{direct_calls, indirect_calls};
use super::def::macro_on_line;
use super::lookup::{def_lines, not_found, valid_name};
use super::Query;
use crate::envelope::{Affected, Envelope, Impact, ImpactGroup, Results};
use crate::maintainers::{top_dir, Maintainers};
use knav_c::scan::Role;
use knav_index::segment::Postings;

/// The tool this module answers (its MCP name, and `Ask::tool`'s).
pub const TOOL: &str = "change_impact";

/// Default levels of callers.
pub const DEFAULT_DEPTH: u32 = 2;
/// Most levels of callers.
pub const MAX_DEPTH: u32 = 10;
/// Call sites a walk reads at most; past it, counts are floors.
pub const MAX_CALL_SITES: usize = 10_000;

/// A function the walk reached: `(name, path)` of the file defining it.
type Node = (String, String);

/// What is known of one affected function.
struct Reached {
    level: u32,
    calls: String,
    line: u32,
    sites: u64,
    seg: usize,
    file: u32,
    active: Option<Option<bool>>,
    /// `STRUCT.FIELD` when the call goes through a function pointer.
    via: Option<String>,
}

/// Answers change_impact for `symbol` to `depth` levels of callers; callers through members of
/// unknown struct type (guesses by member name) are followed with `include_uncertain`, else
/// counted.
pub fn change_impact(q: &Query<'_>, symbol: &str, depth: u32, include_uncertain: bool) -> Envelope {
    if !valid_name(symbol) {
        return q.envelope_error(TOOL, format!("'{symbol}' is not a C identifier"));
    }
    if depth > MAX_DEPTH {
        return q.envelope_error(TOOL, format!("depth must be 0..{MAX_DEPTH}, not {depth}"));
    }
    let defs = q.definitions(symbol);
    if defs.is_empty() && q.postings_iter(symbol).next().is_none() {
        return not_found(q, TOOL, symbol);
    }
    let mut env = q.envelope(TOOL);
    let subsystems = match crate::maintainers::for_root(&q.snap.root) {
        Ok(Some(m)) => Some(m),
        Ok(None) => {
            env.warn("the tree has no MAINTAINERS file: grouped by top directory only");
            None
        }
        Err(e) => {
            env.warn(format!("{e}: grouped by top directory only"));
            None
        }
    };
    let subsystem_of = |path: &str| -> Option<String> {
        subsystems
            .as_deref()
            .and_then(|m: &Maintainers| m.subsystem(path))
            .map(str::to_string)
    };

    let mut walk = CallerWalk::run(q, &mut env, symbol, depth, include_uncertain);
    let (by_subsystem, by_dir) = walk.groups(&subsystem_of);
    let direct = walk.reached.values().filter(|r| r.level == 1).count() as u64;
    // Its best-ranked definition (a `#define` of kmalloc before a copy in tools/).
    let best = defs.iter().find(|f| f.def.kind != Kind::Entry);
    let defined = best.map(|f| format!("{}:{}", q.path(f.seg, f.def.file), f.def.line));
    let subsystem = best.and_then(|f| subsystem_of(q.path(f.seg, f.def.file)));
    let exported = export_macro(q, symbol);

    let rows = walk.rows();
    let functions = rows.iter().filter(|r| r.0.is_some()).count() as u64;
    let page = q.paginate(&mut env, rows);
    let callers = page
        .into_iter()
        .map(|(function, path, r)| Affected {
            exported: function.as_deref().and_then(|f| export_macro(q, f)),
            subsystem: subsystem_of(&path),
            guard: q.guard(r.seg, r.file, r.line),
            function,
            level: r.level,
            calls: r.calls,
            line: r.line,
            call_sites: r.sites,
            path,
            active: r.active,
            via: r.via,
        })
        .collect();
    if walk.hidden > env.hidden.len() as u64 {
        env.warn(format!(
            "{} call sites hidden by the active config; {} listed",
            walk.hidden,
            env.hidden.len()
        ));
    }
    if walk.capped {
        env.warn(format!(
            "the walk stopped after {MAX_CALL_SITES} call sites: every count is a floor"
        ));
    }
    if functions == 0 && depth > 0 {
        env.message = Some(format!(
            "no calls to '{symbol}' found (it may be used through a function pointer; \
             find_references lists every mention)"
        ));
    }
    if walk.guesses > 0 {
        let guesses = super::callers::guesses_left_out(walk.guesses as usize);
        env.message = Some(match env.message.take() {
            Some(m) => format!("{m}; {guesses}"),
            None => guesses,
        });
    }
    env.results = Some(Results::Impact(Impact {
        symbol: symbol.to_string(),
        depth,
        defined_at: defined,
        subsystem,
        exported,
        direct_callers: direct,
        transitive_callers: functions - direct,
        call_sites: walk.read as u64,
        counts_capped: walk.capped,
        subsystems: by_subsystem,
        top_dirs: by_dir,
        callers,
    }));
    env.next_tools = vec!["find_callers", "get_symbol_body", "reachability"];
    env
}

/// A call site read: `(segment, file, line, active, via)`, `via` the `STRUCT.FIELD` of a call
/// through a function pointer.
type Site = (usize, u32, u32, Option<Option<bool>>, Option<String>);

/// A function to follow: its name and, for a `static` one, the path of its file.
type Follow = (String, Option<String>);

/// A row of the answer: the affected function (`None`: a call at file scope), its path and
/// what is known of it.
type Row = (Option<String>, String, Reached);

/// The breadth-first walk of change_impact over callers, and what it found.
#[derive(Default)]
struct CallerWalk {
    /// The functions reached.
    reached: HashMap<Node, Reached>,
    /// The functions reached, in the order reached.
    order: Vec<Node>,
    /// Call sites outside any function, with their paths.
    file_scope: Vec<(String, Reached)>,
    /// The functions followed (or to follow).
    followed: HashSet<Follow>,
    /// Call sites read.
    read: usize,
    /// Call sites the active config hides.
    hidden: u64,
    /// The walk stopped at [`MAX_CALL_SITES`].
    capped: bool,
    /// Follow calls through members of unknown struct type.
    include_uncertain: bool,
    /// Such calls left out.
    guesses: u64,
    /// The names of the `static` functions of each file read, by `(segment, file)`.
    statics: HashMap<(usize, u32), HashSet<String>>,
}

impl CallerWalk {
    /// Walks the callers of `symbol`, to `depth` levels; the call sites the active config
    /// hides are listed in `env`.
    fn run(
        q: &Query<'_>,
        env: &mut Envelope,
        symbol: &str,
        depth: u32,
        include_uncertain: bool,
    ) -> CallerWalk {
        let mut w = CallerWalk {
            include_uncertain,
            ..CallerWalk::default()
        };
        w.followed.insert((symbol.to_string(), None));
        let mut frontier: Vec<Follow> = vec![(symbol.to_string(), None)];
        'walk: for level in 1..=depth {
            let mut next = Vec::new();
            for (name, scope) in frontier {
                for site in w.calls(q, env, &name, scope.as_deref()) {
                    if w.read == MAX_CALL_SITES {
                        w.capped = true;
                        break 'walk;
                    }
                    w.read += 1;
                    w.reach(q, symbol, level, &name, site, &mut next);
                }
            }
            frontier = next;
        }
        w
    }

    /// The call sites of `name` (only those in the file `scope` for a `static` function): its
    /// direct calls, then the calls through function pointers whose struct type is certain.
    /// Those the active config hides are counted and listed in `env`.
    fn calls(
        &mut self,
        q: &Query<'_>,
        env: &mut Envelope,
        name: &str,
        scope: Option<&str>,
    ) -> Vec<Site> {
        let lines = def_lines(&q.definitions(name));
        let postings: Vec<_> = q
            .postings_iter(name)
            .filter(|(s, p)| q.wanted_file(*s, p.file))
            .filter(|(s, p)| scope.is_none_or(|f| q.path(*s, p.file) == f))
            .collect();
        let (calls, mut out) = direct_calls(q, postings, &lines);
        // Calls through function pointers whose struct type is certain, from any file (a
        // static function stored in an ops table is called from elsewhere); the guesses by
        // member name too when asked, else counted.
        let (through, guesses) = indirect_calls(q, name, self.include_uncertain, &mut out);
        self.guesses += guesses as u64;
        for h in out {
            self.hidden += 1;
            env.list_hidden(&h.path, h.line, &h.reason);
        }
        calls
            .into_iter()
            .map(|(s, p, active)| (s, p.file, p.line, active, None))
            .chain(
                through
                    .into_iter()
                    .map(|(c, active)| (c.at.0, c.at.1, c.at.2, active, Some(c.via))),
            )
            .collect()
    }

    /// Notes the call of `name` at `site`, `level` levels from `symbol`: its caller is
    /// reached (and pushed on `next` to follow when new), or another of its call sites
    /// counted; a call outside any function is kept as it is.
    fn reach(
        &mut self,
        q: &Query<'_>,
        symbol: &str,
        level: u32,
        name: &str,
        (s, file, line, active, via): Site,
        next: &mut Vec<Follow>,
    ) {
        let path = q.path(s, file).to_string();
        let here = Reached {
            level,
            calls: name.to_string(),
            line,
            sites: 1,
            seg: s,
            file,
            active,
            via,
        };
        let Some(caller) = q.enclosing_function(s, file, line) else {
            self.file_scope.push((path, here));
            return;
        };
        let node = (caller, path);
        if let Some(r) = self.reached.get_mut(&node) {
            r.sites += 1;
            return;
        }
        if node.0 == symbol {
            return;
        }
        let is_static = self
            .statics
            .entry((s, file))
            .or_insert_with(|| {
                q.snap.segments[s]
                    .file_defs(file)
                    .iter()
                    .filter(|d| d.kind == Kind::Function && d.file_local)
                    .map(|d| d.name.to_string())
                    .collect()
            })
            .contains(&node.0);
        let follow = (node.0.clone(), is_static.then(|| node.1.clone()));
        if self.followed.insert(follow.clone()) {
            next.push(follow);
        }
        self.reached.insert(node.clone(), here);
        self.order.push(node);
    }

    /// The functions and call sites reached, by `MAINTAINERS` subsystem and by top directory:
    /// groups over every affected function and call site, not one page.
    fn groups(
        &self,
        subsystem_of: &impl Fn(&str) -> Option<String>,
    ) -> (Vec<ImpactGroup>, Vec<ImpactGroup>) {
        let mut by_subsystem: HashMap<String, (u64, u64)> = HashMap::new();
        let mut by_dir: HashMap<String, (u64, u64)> = HashMap::new();
        let mut count = |path: &str, function: bool, sites: u64| {
            let sub = subsystem_of(path).unwrap_or_else(|| "(no MAINTAINERS entry)".into());
            for (map, key) in [
                (&mut by_subsystem, sub),
                (&mut by_dir, top_dir(path).to_string()),
            ] {
                let e = map.entry(key).or_default();
                e.0 += function as u64;
                e.1 += sites;
            }
        };
        for (node, r) in &self.reached {
            count(&node.1, true, r.sites);
        }
        for (path, _) in &self.file_scope {
            count(path, false, 1);
        }
        (sorted_groups(by_subsystem), sorted_groups(by_dir))
    }

    /// The rows of the answer, taken from the walk: the functions reached and the calls at
    /// file scope, by level, path, line and function.
    fn rows(&mut self) -> Vec<Row> {
        let mut reached = std::mem::take(&mut self.reached);
        let mut rows: Vec<Row> = std::mem::take(&mut self.order)
            .into_iter()
            .filter_map(|node| {
                let r = reached.remove(&node)?;
                Some((Some(node.0), node.1, r))
            })
            .chain(
                std::mem::take(&mut self.file_scope)
                    .into_iter()
                    .map(|(path, r)| (None, path, r)),
            )
            .collect();
        rows.sort_by(|a, b| {
            (a.2.level, &a.1, a.2.line, &a.0).cmp(&(b.2.level, &b.1, b.2.line, &b.0))
        });
        rows
    }
}

/// The groups of `map` (name → functions, call sites), most functions first, then most call
/// sites, then by name.
fn sorted_groups(map: HashMap<String, (u64, u64)>) -> Vec<ImpactGroup> {
    let mut g: Vec<ImpactGroup> = map
        .into_iter()
        .map(|(name, (functions, call_sites))| ImpactGroup {
            name,
            functions,
            call_sites,
        })
        .collect();
    g.sort_by(|a, b| {
        (b.functions, b.call_sites)
            .cmp(&(a.functions, a.call_sites))
            .then(a.name.cmp(&b.name))
    });
    g
}

/// The `EXPORT_SYMBOL*` macro exporting `name`, when the index knows one (a tracepoint's
/// export is not the function's).
pub fn export_macro(q: &Query<'_>, name: &str) -> Option<String> {
    for (s, seg) in q.snap.segments.iter().enumerate() {
        let Some(entry) = seg.lookup(name.as_bytes()) else {
            continue;
        };
        let at: Vec<(u32, u32)> = match &entry.stats {
            Some(st) => st.exports.clone(),
            None => Postings::new(entry.postings)
                .filter(|p| p.role == Role::Export)
                .map(|p| (p.file, p.line))
                .collect(),
        };
        for (file, line) in at {
            if !q.snap.is_live(s, file) {
                continue;
            }
            let m = macro_on_line(q, s, file, line).unwrap_or_else(|| "EXPORT_SYMBOL".into());
            if !m.starts_with("EXPORT_TRACEPOINT") {
                return Some(m);
            }
        }
    }
    None
}
