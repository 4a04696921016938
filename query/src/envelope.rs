//! The envelope: the one answer shape every tool returns, rendered as text or JSON.
//!
//! Keys are only ever added, never renamed. `results` is a list of records or, for
//! find_callees, reachability and update_index, an object; `error` replaces it on failure.

use serde::Serialize;

/// A symbol location: definitions, references (with `role`), bodies (with `end_line`, `body`).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Record {
    /// The name.
    pub symbol: String,
    /// Root-relative path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based byte column.
    pub col: u32,
    /// ctags kind.
    pub kind: Option<String>,
    /// Type.
    pub typeref: Option<String>,
    /// Enclosing struct/union/enum.
    pub scope: Option<String>,
    /// Parameter list.
    pub signature: Option<String>,
    /// Enclosing `#if` conditions, outermost first; `null` when the file was not scanned.
    pub guard: Option<Vec<String>>,
    /// The source line, cut at 200 characters.
    pub snippet: String,
    /// How the name was resolved, when not a literal match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_via: Option<String>,
    /// References: def, decl, call, ref or export.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// References: the enclosing function, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// Bodies: the last line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// Bodies: the source text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Bodies: true when the body was cut (at the line cap or the byte cap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_truncated: Option<bool>,
    /// Bodies: the cap that cut it, `"300 lines"` or `"65536 bytes"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_cut: Option<String>,
    /// With an active config: `true` when it decides the line is built, `null` when it cannot
    /// decide. Absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<Option<bool>>,
    /// search_code: how well the definition matches the query (BM25F, higher is better).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    /// search_code: the first line of words of the comment above the definition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// search_code: why it ranked: the query's words it has and where (name, comment, path,
    /// body).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// References asked for places only (`Page::places_only`): the 0-based column in UTF-16
    /// code units, what a language server's client counts (`knav lsp` need not read the file
    /// again). Not serialized.
    #[serde(skip)]
    pub utf16_col: Option<u32>,
}

/// A search_code score, rounded to two decimals; never NaN, so records stay comparable.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
#[serde(transparent)]
pub struct Score(pub f64);

impl Eq for Score {}

/// One line a text search matched (search_text).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Hit {
    /// Root-relative path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based byte column of the first match on the line.
    pub col: u32,
    /// The line, cut at 200 characters (from a little before the match when it lies further).
    pub snippet: String,
    /// The innermost definition whose lines hold the hit, or `null`.
    pub enclosing: Option<Enclosing>,
    /// Enclosing `#if` conditions (C files), outermost first; `null` for other files.
    pub guard: Option<Vec<String>>,
    /// With `context`: the lines before and after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<Context>,
    /// With an active config: `true` when it builds the line, `null` when undecided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<Option<bool>>,
}

/// The definition enclosing a hit.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Enclosing {
    /// Its name.
    pub symbol: String,
    /// ctags kind.
    pub kind: String,
    /// First line.
    pub line: u32,
    /// Last line.
    pub end_line: u32,
    /// Its first source line, cut at 200 characters.
    pub signature: String,
}

/// Lines around a hit.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Context {
    /// The lines before it, in order.
    pub before: Vec<String>,
    /// The lines after it, in order.
    pub after: Vec<String>,
}

/// What a text search covered.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct SearchSummary {
    /// The pattern.
    pub pattern: String,
    /// `lines`, `files` (`-l`) or `count` (`-c`).
    pub mode: &'static str,
    /// Matching lines (kept, in every page).
    pub hits: u64,
    /// Files with a kept hit.
    pub files_with_hits: u64,
    /// Files rg searches within the scope (paths, globs, prefix).
    pub files_searched: u64,
    /// Of those, files read because the trigram index could not rule them out.
    pub files_read: u64,
    /// Of those searched, files with a NUL byte, which rg reads only up to it.
    pub files_binary: u64,
}

/// A result left out because the active configuration does not build it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Hidden {
    /// Root-relative path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// Why: the false condition and the symbols' states.
    pub reason: String,
}

/// References of one file, when references are grouped by file.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct FileGroup {
    /// Root-relative path.
    pub path: String,
    /// References in the file.
    pub count: u64,
    /// Their lines.
    pub lines: Vec<u32>,
}

/// One call site.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CallSite {
    /// The enclosing function; `null` at file scope.
    pub caller: Option<String>,
    /// Root-relative path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// The call's source line.
    pub snippet: String,
    /// Enclosing `#if` conditions.
    pub guard: Option<Vec<String>>,
    /// With an active config: `true` when it builds the call, `null` when undecided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<Option<bool>>,
    /// A call through a pointer: the member called (`STRUCT.FIELD`) or `INDIRECT_CALL`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// A call through a member: `path:line` where the function was stored in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered_at: Option<String>,
    /// A call through a pointer: `type` when the struct type of the call's expression is
    /// known, `field-name` when only the member's name matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certainty: Option<&'static str>,
    /// Where the call's name (the member's, through a pointer) is on the line, when the answer
    /// read it: its 1-based byte column and 0-based column in UTF-16 code units (what a
    /// language server's client counts). Not serialized.
    #[serde(skip)]
    pub at_col: Option<(u32, u32)>,
    /// Where the enclosing function's name is, when the answer read it: the line its
    /// definition starts on, the name's 1-based byte column and 0-based UTF-16 column. Not
    /// serialized.
    #[serde(skip)]
    pub caller_at: Option<(u32, u32, u32)>,
}

/// One function called from a body.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Callee {
    /// The called name.
    pub symbol: String,
    /// Line of the first call.
    pub line: u32,
    /// `path:line` of its best definition, if known.
    pub defined_at: Option<String>,
    /// A call through a member (`symbol` is `STRUCT.FIELD`, or `FIELD` when the struct is
    /// not known): how many functions are registered in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered: Option<u64>,
    /// The first few of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// A call through a member of a struct not known, without `include_uncertain`: how many
    /// functions are stored in members of that name (guesses, not listed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guesses: Option<u64>,
}

/// find_callees' answer.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Callees {
    /// The function.
    pub symbol: String,
    /// Its definition's path.
    pub path: String,
    /// Its definition's line.
    pub line: u32,
    /// What it calls, in order of first call.
    pub callees: Vec<Callee>,
}

/// reachability's answer.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Reach {
    /// Start.
    pub from: String,
    /// Goal.
    pub to: String,
    /// True when a call chain was found.
    pub reachable: bool,
    /// The shortest chain found, `from` first.
    pub chain: Vec<String>,
    /// Per call of the chain (`chain[i]` calls `chain[i + 1]`), the member it went through
    /// (`STRUCT.FIELD`, `INDIRECT_CALL`), `null` for a direct call; empty when all are direct.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<Option<String>>,
    /// Functions whose bodies were searched.
    pub explored: u64,
}

/// A file search_files found.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct FileHit {
    /// Root-relative path.
    pub path: String,
    /// Lines in the file when indexed.
    pub lines: u32,
    /// ctags's definitions in it (`#define`s not counted).
    pub definitions: u32,
}

/// A documentation section search_docs found.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DocHit {
    /// Root-relative path.
    pub path: String,
    /// 1-based line of the section's title.
    pub line: u32,
    /// The section's title.
    pub title: String,
    /// The section's line with the most query words, at most 200 characters.
    pub snippet: String,
    /// BM25F score, two decimals.
    pub score: f32,
}

/// change_impact's answer: who a change to a function affects.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Impact {
    /// The function.
    pub symbol: String,
    /// Levels of callers walked (1: direct callers only).
    pub depth: u32,
    /// `path:line` of its best-ranked definition (as find_definition ranks them).
    pub defined_at: Option<String>,
    /// Its `MAINTAINERS` subsystem.
    pub subsystem: Option<String>,
    /// The `EXPORT_SYMBOL*` macro exporting it, if any.
    pub exported: Option<String>,
    /// Functions calling it.
    pub direct_callers: u64,
    /// Functions reached at levels 2 and deeper.
    pub transitive_callers: u64,
    /// Call sites read.
    pub call_sites: u64,
    /// True when the walk stopped at its cap: every count is then a floor, not a total.
    pub counts_capped: bool,
    /// Affected functions and call sites per `MAINTAINERS` subsystem, most first.
    pub subsystems: Vec<ImpactGroup>,
    /// The same per top directory.
    pub top_dirs: Vec<ImpactGroup>,
    /// The affected functions of this page, by level, then path and line.
    pub callers: Vec<Affected>,
}

/// Counts of one subsystem or directory.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ImpactGroup {
    /// The subsystem's title or the directory.
    pub name: String,
    /// Affected functions in it.
    pub functions: u64,
    /// Call sites in it.
    pub call_sites: u64,
}

/// One function a change affects.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Affected {
    /// The calling function; `null` for a call at file scope.
    pub function: Option<String>,
    /// 1 for a direct caller, 2 for a caller of one, …
    pub level: u32,
    /// The function it calls on the way.
    pub calls: String,
    /// Root-relative path.
    pub path: String,
    /// Its first call's line.
    pub line: u32,
    /// Its calls of `calls`.
    pub call_sites: u64,
    /// Its `MAINTAINERS` subsystem.
    pub subsystem: Option<String>,
    /// The `EXPORT_SYMBOL*` macro exporting it, if any.
    pub exported: Option<String>,
    /// The first call's `#if` guard.
    pub guard: Option<Vec<String>>,
    /// With an active config: `true` when it builds the call, `null` when undecided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<Option<bool>>,
    /// `STRUCT.FIELD` when it calls `calls` through a function pointer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// review_diff's answer: one page of rows in diff order (a hunk, a touched definition, a file
/// without hunks), with the totals of all pages.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Review {
    /// The files of this page's rows, each with this page's hunks of it.
    pub files: Vec<ReviewFile>,
    /// Hunks in the diff, on all pages.
    pub hunks: u64,
    /// Hunks neither of whose sides is in the tree's file, on all pages.
    pub hunks_not_applied: u64,
    /// The touched definitions of this page, in diff order.
    pub definitions: Vec<Touched>,
    /// Files in the diff, on all pages.
    pub files_total: u64,
    /// Touched definitions, on all pages.
    pub definitions_total: u64,
}

/// One file of a reviewed diff.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ReviewFile {
    /// Its path (the new one; the old one for a deleted file).
    pub path: String,
    /// A renamed file's old path (its definitions' path while the tree has that one).
    pub old_path: Option<String>,
    /// modified, added, deleted or renamed.
    pub status: &'static str,
    /// A binary patch.
    pub binary: bool,
    /// Its `MAINTAINERS` subsystem.
    pub subsystem: Option<String>,
    /// Its hunks on this page.
    pub hunks: Vec<HunkStatus>,
    /// Its hunks in the diff, on all pages.
    pub hunks_total: u64,
    /// Why it is not reviewed (a path that leaves the root); nothing of it is read.
    pub error: Option<String>,
}

/// Whether one hunk applies to the tree.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct HunkStatus {
    /// `-a,b +c,d`.
    pub hunk: String,
    /// yes, already applied (the tree has its new side), new file, or no.
    pub applies: &'static str,
    /// Lines between where the header puts it and where it is.
    pub offset: i64,
    /// Why it does not apply.
    pub note: Option<String>,
}

/// One definition a diff touches.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Touched {
    /// The name (`CONFIG_X` for a Kconfig entry).
    pub symbol: String,
    /// function, struct, macro, kconfig, …
    pub kind: &'static str,
    /// modified, added or removed.
    pub change: &'static str,
    /// Root-relative path.
    pub path: String,
    /// Its first line (in the new file for an added one).
    pub line: u32,
    /// The hunk, `-a,b +c,d`.
    pub hunk: String,
    /// Its `#if` guard in the tree (for an added one, where it goes).
    pub guard: Option<Vec<String>>,
    /// Direct call sites in the tree (functions and macros).
    pub callers: Option<u64>,
    /// `MAINTAINERS` subsystems of its file and its callers, most callers first.
    pub subsystems: Vec<String>,
}

/// The results of a tool.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Results {
    /// Symbol, reference or body records.
    Records(Vec<Record>),
    /// Text search hits.
    Hits(Vec<Hit>),
    /// References grouped by file.
    Groups(Vec<FileGroup>),
    /// Call sites.
    Calls(Vec<CallSite>),
    /// Files (search_files).
    Files(Vec<FileHit>),
    /// Documentation sections (search_docs).
    Docs(Vec<DocHit>),
    /// find_callees.
    Callees(Callees),
    /// reachability.
    Reach(Reach),
    /// update_index.
    Index(Box<knav_index::UpdateReport>),
    /// index_status.
    Status(Box<IndexStatus>),
    /// change_impact.
    Impact(Impact),
    /// review_diff.
    Review(Review),
    /// compare_versions.
    Compare(Box<Comparison>),
    /// symbol_history: newest first.
    History(Vec<HistoryEntry>),
    /// find_device.
    Device(Box<Device>),
}

/// What find_device answers for one compatible string (or the compatibles a `*` pattern
/// matches).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Device {
    /// The compatible string (or pattern) asked.
    pub compatible: String,
    /// The binding schemas documenting it.
    pub bindings: Vec<DeviceBinding>,
    /// Boards (`.dts` files) whose device tree has a node of it, their own or through the
    /// `.dtsi` files they include.
    pub boards: u64,
    /// Nodes of it written in `.dts` files.
    pub dts_nodes: u64,
    /// Nodes of it written in `.dtsi` files (counted apart: each may reach many boards).
    pub dtsi_nodes: u64,
    /// Nodes of it written in overlays (`.dtso`).
    pub overlay_nodes: u64,
    /// This page's boards, with their nodes of it.
    pub board_rows: Vec<DeviceBoard>,
    /// For a pattern: this page's compatibles that match it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<DeviceMatch>,
    /// The drivers that match it: their table entries (or `OF_DECLARE`-family declarations),
    /// driver structures, probe functions and the configuration that builds them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drivers: Vec<DeviceDriver>,
    /// Code that tests for it outside match tables (`of_device_is_compatible`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub code: Vec<DeviceCode>,
    /// For `--driver`: what a driver file matches and reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_file: Option<DriverReport>,
    /// For `dt check`: the findings of each kind (`undocumented`, `unmatched`, `property`)
    /// under the path prefix, counted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<(String, u64)>,
    /// For `dt check`: this page's findings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<DeviceFinding>,
}

/// One finding of `knav dt check`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DeviceFinding {
    /// `undocumented` (a compatible a driver matches, no binding documents), `unmatched` (a
    /// device-tree node no driver matches) or `property` (a property a driver reads, its
    /// bindings do not name).
    pub kind: &'static str,
    /// The file.
    pub path: String,
    /// The line.
    pub line: u32,
    /// The compatible(s) or property.
    pub subject: String,
    /// What is wrong.
    pub detail: String,
}

/// A driver matching a device: where it says so and what builds it.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct DeviceDriver {
    /// The C file.
    pub path: String,
    /// The line of the table entry (or declaration).
    pub line: u32,
    /// The match table (`of_device_id i2c_imx_dt_ids`) or declaring macro
    /// (`IRQCHIP_DECLARE`).
    pub how: String,
    /// What the entry matches (`vendor=8086 device=*`), when not the key asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The key it matched (`pci:8086:*`), when not the one asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The driver structure naming the table (`platform_driver i2c_imx_driver`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Its line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_line: Option<u32>,
    /// Its probe function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<DeviceFunction>,
    /// Its remove function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remove: Option<DeviceFunction>,
    /// What builds the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<DeviceConfig>,
}

/// A function of a driver and where it is defined.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct DeviceFunction {
    /// Its name.
    pub name: String,
    /// Its definition's file, when the index has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Its definition's line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// The configuration symbol that builds a driver's file.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct DeviceConfig {
    /// `CONFIG_I2C_IMX`.
    pub symbol: String,
    /// The Makefile line that names the file's object under it
    /// (`drivers/i2c/busses/Makefile:60`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub makefile: Option<String>,
    /// The Kconfig entry defining it: `path:line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kconfig: Option<String>,
    /// Its prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Under `--active-config`: `y`, `m` or `n` (not built), absent when undecided or
    /// without a config.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built: Option<String>,
    /// Why it is not built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Code that declares or tests for a compatible outside a match table.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DeviceCode {
    /// The file.
    pub path: String,
    /// The line.
    pub line: u32,
    /// The function or macro (`of_device_is_compatible`).
    pub via: String,
    /// The compatible, in a driver file's report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatible: Option<String>,
}

/// What one driver file matches and reads (`knav device --driver`).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct DriverReport {
    /// The C file.
    pub path: String,
    /// Its driver structures, each with its probe and remove functions.
    pub drivers: Vec<DeviceDriver>,
    /// Its match tables: kind, name, line, and the keys (compatibles or device IDs) of
    /// their entries.
    pub tables: Vec<DriverTable>,
    /// Compatibles it declares or tests outside tables.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub code: Vec<DeviceCode>,
    /// Properties it reads by name: (line, function, property).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<DriverProperty>,
}

/// A match table of a driver file.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct DriverTable {
    /// `of_device_id`, `pci_device_id`, …
    pub kind: String,
    /// The array's name.
    pub name: String,
    /// Its line.
    pub line: u32,
    /// The bus its `MODULE_DEVICE_TABLE` names (absent: none, the module does not load
    /// for these devices by itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module_device_table: Option<String>,
    /// Its entries' keys, in order.
    pub keys: Vec<String>,
}

/// A property a driver reads by name.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DriverProperty {
    /// The line of the call.
    pub line: u32,
    /// The function called.
    pub function: String,
    /// The property.
    pub property: String,
}

/// A binding schema documenting a compatible.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DeviceBinding {
    /// The schema's path.
    pub path: String,
    /// The line of the compatible in it.
    pub line: u32,
    /// Its `title`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A board whose device tree has nodes of a compatible.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DeviceBoard {
    /// The board's `.dts`.
    pub path: String,
    /// Its `model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its nodes of the compatible, where they are written.
    pub nodes: Vec<DeviceNode>,
}

/// A device-tree node of a compatible.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DeviceNode {
    /// The file it is written in (the board's, or a `.dtsi` it includes).
    pub path: String,
    /// The line of its name.
    pub line: u32,
    /// Its path in that file (`/soc/i2c@43f80000`, `&i2c1`).
    pub node: String,
    /// Its `status` in the board (a `&label { status = …; }` the board or its includes
    /// write wins over the node's own); absent: none written (okay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// A compatible a pattern matches.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DeviceMatch {
    /// The compatible string.
    pub compatible: String,
    /// Bindings documenting it.
    pub bindings: u64,
    /// Device-tree nodes naming it.
    pub nodes: u64,
}

/// One commit that touched a definition (symbol_history).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct HistoryEntry {
    /// The commit's first 12 hex digits.
    pub commit: String,
    /// Its author date, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// Its author.
    pub author: String,
    /// Its subject line.
    pub subject: String,
    /// The file of the definition.
    pub path: String,
    /// `function`, `type` or `macro`.
    pub kind: &'static str,
    /// `changed`, `added`, `removed` or `moved`.
    pub change: &'static str,
    /// Lines added inside the definition.
    pub added: u32,
    /// Lines removed inside it.
    pub removed: u32,
    /// For a move: the file it left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// True for the commit that introduced it (its oldest addition the history has).
    pub introduced: bool,
}

/// What compare_versions answers.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Comparison {
    /// The symbol.
    pub symbol: String,
    /// The first version (`null`: the working tree).
    pub a: Option<RevName>,
    /// The second version (`null`: the working tree).
    pub b: Option<RevName>,
    /// Its definitions, paired across the versions.
    pub definitions: Vec<DefChange>,
    /// Its export in each version.
    pub exported: [Option<Export>; 2],
    /// Its callers in each version, those added and removed.
    pub callers: CallersChange,
}

/// One definition in one version.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DefAt {
    /// Root-relative path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// ctags kind.
    pub kind: Option<String>,
    /// Parameter list.
    pub signature: Option<String>,
    /// Enclosing `#if` conditions.
    pub guard: Option<Vec<String>>,
}

/// A definition paired across the two versions.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DefChange {
    /// `same`, `changed`, `moved` (another file; maybe changed too), `added` or `removed`.
    pub status: &'static str,
    /// In the first version.
    pub a: Option<DefAt>,
    /// In the second version.
    pub b: Option<DefAt>,
    /// What differs: `signature`, `guard`, `kind`, `body`.
    pub changed: Vec<&'static str>,
    /// The body's unified diff, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The diff's lines in all, when more than `compare::MAX_DIFF_LINES` were cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_cut: Option<usize>,
}

/// Callers in both versions.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct CallersChange {
    /// Call sites in the first version.
    pub a_total: u64,
    /// Call sites in the second.
    pub b_total: u64,
    /// Callers (function and file) only the second version has.
    pub added_total: u64,
    /// Callers only the first version has.
    pub removed_total: u64,
    /// The first added, by file then function.
    pub added: Vec<Caller>,
    /// The first removed.
    pub removed: Vec<Caller>,
    /// False when a version has more call sites than were read (the first 1000 of each were
    /// compared).
    pub complete: bool,
}

/// A calling function (`null`: file scope) in a file.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Caller {
    /// Root-relative path.
    pub path: String,
    /// The enclosing function.
    pub caller: Option<String>,
}

/// Where an `EXPORT_SYMBOL*` line names the symbol.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Export {
    /// The macro, e.g. `EXPORT_SYMBOL_GPL`.
    #[serde(rename = "macro")]
    pub macro_name: String,
    /// Root-relative path.
    pub path: String,
    /// 1-based line.
    pub line: u32,
}

/// `{path, count}` of the files with the most references.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TopFile {
    /// Root-relative path.
    pub path: String,
    /// References in it.
    pub count: u64,
}

/// The summary of a definition-shaped envelope.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DefSummary {
    /// The symbol asked for.
    pub symbol: String,
    /// Definitions found.
    pub definition_count: u64,
    /// Distinct guard stacks among them.
    pub guard_variants: u64,
    /// References (occurrences that are not definitions or declarations).
    pub reference_count: u64,
    /// Files with references.
    pub file_count: u64,
    /// When the definitions are of several kinds of entity (a function and a struct member
    /// named alike), those kinds: the counts and top files are of every entity of the name,
    /// since a reference is not told apart by what it refers to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counts_mix: Vec<&'static str>,
    /// The files with the most references.
    pub top_files: Vec<TopFile>,
    /// Export status.
    pub exported: Option<Export>,
    /// Where the function is registered as an entry point (`module_init(fn)`, an initcall).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_point: Option<Export>,
}

/// Index coverage, so every answer can say what was searched.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coverage {
    /// `.c`/`.h` files scanned.
    pub files_scanned: u64,
    /// Files not indexed.
    pub files_unindexed: u64,
}

/// One answer.
#[derive(Clone, Debug, Serialize)]
pub struct Envelope {
    /// Which tool answered.
    pub tool: &'static str,
    /// The resolved root.
    pub root: String,
    /// The git revision answered for (`--rev`); absent: the files as they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rev: Option<RevName>,
    /// The results, absent on error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<Results>,
    /// Results in all pages.
    pub total: u64,
    /// Offset of this page.
    pub offset: u64,
    /// True when more results exist beyond this page.
    pub truncated: bool,
    /// The page size used.
    pub limit: u64,
    /// Definition summary, on definition-shaped envelopes.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub summary: Option<DefSummary>,
    /// Suggested follow-up tools.
    pub next_tools: Vec<&'static str>,
    /// Out-of-band notice (clamped limit, unbalanced directives…).
    pub warning: Option<String>,
    /// Why the results are empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Why the call failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Near-misses for a name that was not found (`~name`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub near_misses: Vec<String>,
    /// What the index covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Coverage>,
    /// Results the active configuration does not build, with the reason for each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hidden: Vec<Hidden>,
    /// Text searches: what was searched and found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSummary>,
    /// The name the answer is about when it is not the name as asked: the tag of
    /// `struct file_operations`, `sys_openat` for `openat`, a near match for a misspelling. The
    /// next tools take it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// True when `subject` is a guess (a near match: `vfs_read` for `vfs_raed`), not the name
    /// asked: the CLI exits 1, as for a name not found.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub near_match: bool,
    /// find_callers of a driver's probe function: the driver structures naming it and the
    /// devices their match tables list (the hardware that reaches it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<ProbeDevices>,
}

/// A driver structure whose `.probe` is a function, and the devices it matches.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ProbeDevices {
    /// `platform_driver i2c_imx_driver`.
    pub driver: String,
    /// Its file.
    pub path: String,
    /// Its line.
    pub line: u32,
    /// The devices (compatibles and device IDs) of the tables it names.
    pub devices: u64,
    /// The first of them.
    pub first: Vec<String>,
}

/// The git revision an answer is for.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RevName {
    /// The revision as asked (`v6.1`, `HEAD~3`).
    pub name: String,
    /// Its commit (full hex object id).
    pub commit: String,
}

impl RevName {
    /// The name of a revision git resolved.
    pub fn of(r: &knav_index::git::Resolved) -> RevName {
        RevName {
            name: r.asked.clone(),
            commit: r.commit.clone(),
        }
    }

    /// `NAME (SHORT-SHA)` of a revision, or `working tree` for none.
    pub fn label(rev: Option<&RevName>) -> String {
        match rev {
            Some(r) => format!("{} ({})", r.name, r.short()),
            None => "working tree".to_string(),
        }
    }

    /// The commit's first 12 hex digits, as text answers show it.
    pub fn short(&self) -> &str {
        &self.commit[..self.commit.len().min(12)]
    }
}

/// Hidden results a long answer lists at most; the rest are counted in a warning.
pub const MAX_HIDDEN_LISTED: usize = 100;

impl Envelope {
    /// Lists a result the active configuration does not build, up to [`MAX_HIDDEN_LISTED`].
    pub fn list_hidden(&mut self, path: &str, line: u32, reason: &str) {
        if self.hidden.len() < MAX_HIDDEN_LISTED {
            self.hidden.push(Hidden {
                path: path.to_string(),
                line,
                reason: reason.to_string(),
            });
        }
    }

    /// An empty envelope for `tool`.
    pub fn new(tool: &'static str, root: &str) -> Envelope {
        Envelope {
            tool,
            root: root.to_string(),
            rev: None,
            results: None,
            total: 0,
            offset: 0,
            truncated: false,
            limit: 0,
            summary: None,
            next_tools: Vec::new(),
            warning: None,
            message: None,
            error: None,
            near_misses: Vec::new(),
            index: None,
            hidden: Vec::new(),
            search: None,
            subject: None,
            near_match: false,
            devices: Vec::new(),
        }
    }

    /// An error envelope.
    pub fn error(tool: &'static str, root: &str, error: impl Into<String>) -> Envelope {
        let mut e = Envelope::new(tool, root);
        e.error = Some(error.into());
        e
    }

    /// The answer of update_index: the report of one build or refresh.
    pub fn index_report(root: &str, report: knav_index::UpdateReport) -> Envelope {
        let mut env = Envelope::new("update_index", root);
        env.total = 1;
        env.results = Some(Results::Index(Box::new(report)));
        env
    }

    /// Adds a warning, keeping earlier ones.
    pub fn warn(&mut self, w: impl Into<String>) {
        let w = w.into();
        self.warning = Some(match self.warning.take() {
            Some(old) => format!("{old}; {w}"),
            None => w,
        });
    }

    /// The process exit code for this envelope: 1 when it carries an error or answers a near
    /// match instead of the name asked ([`Envelope::near_match`]). A text search
    /// answers as grep does: 0 with hits, 1 without, 2 on an error.
    pub fn exit_code(&self) -> i32 {
        match (self.tool, self.error.is_some()) {
            ("search_text", true) => 2,
            ("search_text", false) if self.total == 0 => 1,
            (_, true) => 1,
            _ if self.near_match => 1,
            _ => 0,
        }
    }
}

/// What index_status answers.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct IndexStatus {
    /// The index directory.
    pub index_dir: String,
    /// The git revisions kept beside it (`--rev`), most recently used first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub revisions: Vec<knav_index::git::revision::Kept>,
    /// True when a published index can be opened.
    pub indexed: bool,
    /// Why not, when there is an index that cannot be opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unusable: Option<String>,
    /// The index generation (each publish adds one).
    pub generation: u64,
    /// Seconds since it was published.
    pub age_s: u64,
    /// C sources (`.c`, `.h`, `.S`) scanned.
    pub files_scanned: u64,
    /// Files not (fully) indexed, as every answer counts them.
    pub files_unindexed: u64,
    /// The same by reason.
    pub unindexed: Unindexed,
    /// Symbolic links skipped.
    pub symlinks: u64,
    /// Bytes of the index directory.
    pub size_bytes: u64,
    /// The build running now, if any.
    pub build: Option<Build>,
    /// Definitions each kernel macro family made (`SYSCALL_DEFINE`: 3684, …).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub macro_definitions: std::collections::BTreeMap<String, u64>,
    /// The text form lists every macro family, not the top five.
    #[serde(skip)]
    pub verbose: bool,
    /// What changed in the tree's C sources since the index was built (`knav status`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_indexed: Option<SinceIndexed>,
}

/// What changed in a tree's C sources since its index was built, refreshing nothing.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct SinceIndexed {
    /// How it was found: `watcher` (its daemon saw nothing change) or `scan` (every file
    /// stat'ed against the index, as a refresh does).
    pub by: String,
    /// Files new since.
    pub added: u64,
    /// Files whose bytes differ.
    pub changed: u64,
    /// Files gone.
    pub deleted: u64,
    /// The first few, each `added PATH`, `changed PATH` or `deleted PATH`.
    pub files: Vec<String>,
}

/// Files not (fully) indexed, by reason.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Unindexed {
    /// Not C sources (the walk saw them; `knav grep` searches them).
    pub not_c: u64,
    /// ctags failed or timed out: references only.
    pub no_definitions: u64,
    /// NUL bytes.
    pub binary: u64,
    /// Over the size cap.
    pub too_big: u64,
    /// Could not be read.
    pub unreadable: u64,
}

/// A build in progress.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Build {
    /// The process holding the build lock, when it wrote its pid.
    pub pid: Option<u32>,
    /// How far along it is, when this process runs it.
    pub progress: Option<String>,
}

/// An index's files as a user reads them: `61264 C files indexed; 25366 other files (grep
/// only)`, with the C files not indexed when there are any. `scanned`: C sources; `unindexed`:
/// files not indexed, `other` (not C sources) among them.
pub fn file_counts(scanned: u64, unindexed: u64, other: u64) -> String {
    let not = unindexed.saturating_sub(other);
    let mut s = format!("{} C files indexed", scanned.saturating_sub(not));
    if not > 0 {
        s.push_str(&format!(", {not} not indexed (`knav status` says why)"));
    }
    if other > 0 {
        s.push_str(&format!("; {other} other files (grep only)"));
    }
    s
}

/// How many characters of user input an error quotes.
const QUOTE_CHARS: usize = 80;

/// `s` quoted for an error message: whole when short, else its first characters, an ellipsis
/// and its length, so a huge input never comes back as a huge error; its control characters
/// escaped, so it cannot start a line of its own.
pub fn quote(s: &str) -> String {
    let one_line = knav_index::printable::one_line;
    match s.char_indices().nth(QUOTE_CHARS) {
        None => format!("'{}'", one_line(s)),
        Some((cut, _)) => format!("'{}…' ({} bytes)", one_line(&s[..cut]), s.len()),
    }
}
