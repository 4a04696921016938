//! What the server knows about each tree it answers for: whether its first build is running,
//! when the index was last checked for changes, and the lock that makes refreshes one at a time.
//!
//! A call on a tree without an index starts one build in the background and answers at once
//! with a transient error; concurrent calls find the build running and say so. With `--root`,
//! a call whose tree was last checked longer than `serve.debounce_s` ago first runs the
//! incremental refresh (stat, then re-scan only what changed); inside the window it answers from
//! the current index. Where the tree's directories are watched ([`super::watch`]) and nothing
//! relevant happened since the last refresh, the stat walk is skipped. Every call answers from the snapshot it opened, even when a refresh
//! publishes a newer one meanwhile.
//!
//! A call may name only the trees the server was given: the default root (`--root`, else the
//! current directory), `--allow-root` directories and the default root's `serve.roots`. A
//! server without `--root` never builds or refreshes an index, so it creates nothing anywhere.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::envelope::Envelope;
use crate::index::store::{existing_index_dir, index_dir, Snapshot};
use crate::index::BuildOptions;
use crate::progress::{Progress, Status};
use crate::settings::Settings;

use super::watch::Watcher;

/// How the server was started.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The served root (`--root`); `None` serves the current directory read-only.
    pub root: Option<PathBuf>,
    /// Where indexes live (`--index-dir`), when not the default.
    pub index_dir: Option<PathBuf>,
    /// `--debounce`: overrides every tree's `serve.debounce_s`.
    pub debounce: Option<Duration>,
    /// `--allow-root`: more trees calls may name.
    pub allow_roots: Vec<PathBuf>,
    /// `--tools`: the tool groups to serve (overrides `serve.tools`; `None`: that, else all).
    pub tools: Option<Vec<String>>,
}

/// Why a call cannot be answered from an index right now.
pub enum NotReady {
    /// The first build is running (or was just started): retry shortly.
    Building(String),
    /// A lasting error.
    Failed(String),
}

/// All trees the server has answered for.
pub struct Server {
    /// The root served when a call names none.
    pub default_root: PathBuf,
    /// True when started with `--root`: the server may build and refresh indexes.
    pub writable: bool,
    /// The tools listed and answered (`--tools`, else the root's `serve.tools`, else all).
    pub tools: Vec<&'static str>,
    /// The trees calls may name (real paths): the default root, `--allow-root` and the default
    /// root's `serve.roots`.
    allowed: Vec<PathBuf>,
    explicit_index_dir: Option<PathBuf>,
    debounce: Option<Duration>,
    trees: Mutex<HashMap<PathBuf, Arc<Tree>>>,
}

/// One tree: a served root, or a git revision of one.
pub struct Tree {
    root: PathBuf,
    dir: PathBuf,
    /// For a revision: the tree it is of, and the revision.
    rev: Option<RevOf>,
    /// The first (background) build, while it runs or after it failed.
    first: Mutex<First>,
    /// The history index's (background) build, while it runs or after it failed.
    history: Mutex<First>,
    /// When the index was last brought up to date; held while a refresh runs.
    checked: Mutex<Option<Instant>>,
    /// Change notification, once the tree has been refreshed with it in place.
    watcher: Mutex<Option<Watcher>>,
    /// The snapshot last opened and the manifest bytes it was opened under: the next call
    /// reuses it while `CURRENT` reads the same (reopening every part costs a warm call most
    /// of its time).
    opened: Mutex<Option<(Vec<u8>, Arc<Snapshot>)>>,
}

/// The revision a [`Tree`] is: its files are made from git under `revs` on first use, and it
/// is never refreshed (a revision does not change).
struct RevOf {
    /// The served root it is a revision of.
    base: PathBuf,
    /// Where that root's revisions are kept.
    revs: PathBuf,
    /// The revision as git resolved it.
    resolved: crate::index::git::Resolved,
    /// Its `tree/` and `index/` opened through descriptors after its check, once it is there:
    /// the tree's root and index directory are their `/proc/self/fd/N`.
    held: Option<crate::index::indexdir::RevisionDirs>,
}

#[derive(Default)]
enum First {
    #[default]
    None,
    Running {
        started: Instant,
        status: Arc<Mutex<Status>>,
    },
    Failed(String),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these leaves plain data behind: keep serving.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Server {
    /// A server for `opts`, its default root resolved.
    pub fn new(opts: &ServeOptions) -> Result<Server, String> {
        let (root, writable) = match &opts.root {
            Some(r) => (crate::beneath::resolve_root(r)?, true),
            // Without --root, the tree the current directory is in (found upward, as the CLI
            // finds it), read-only.
            None => {
                let cwd = crate::beneath::resolve_root(Path::new("."))?;
                let named = opts.index_dir.is_some()
                    || std::env::var_os("KNAV_INDEX_DIR").is_some_and(|d| !d.is_empty());
                let found = crate::discover::root_above(&cwd, named).map(|f| f.root);
                (found.unwrap_or(cwd), false)
            }
        };
        let mut allowed = vec![root.clone()];
        for r in &opts.allow_roots {
            allowed
                .push(crate::beneath::resolve_root(r).map_err(|e| format!("--allow-root: {e}"))?);
        }
        // A bad settings file is better reported at start than on the first call; a read-only
        // server serves what it can.
        let settings = Settings::load(&root);
        match settings
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|s| s.resolved_roots(&root))
        {
            Ok(roots) => allowed.extend(roots),
            Err(e) if writable => return Err(e),
            Err(e) => eprintln!("knav serve: {e}; serving {} only", root.display()),
        }
        let groups = match &opts.tools {
            Some(g) => Some(g.as_slice()),
            None => settings.as_ref().ok().and_then(|s| s.tools.as_deref()),
        };
        let tools = super::tools::select(groups).map_err(|e| match &opts.tools {
            Some(_) => format!("--tools: {e}"),
            None => format!(
                "{}: serve.tools: {e}",
                root.join(crate::settings::FILE_NAME).display()
            ),
        })?;
        allowed.dedup();
        Ok(Server {
            default_root: root,
            writable,
            tools,
            allowed,
            explicit_index_dir: opts.index_dir.clone(),
            debounce: opts.debounce,
            trees: Mutex::new(HashMap::new()),
        })
    }

    /// The tree a call names (or the default one), resolved.
    pub fn tree(&self, root: Option<&str>) -> Result<Arc<Tree>, String> {
        let root = match root {
            None => self.default_root.clone(),
            Some(r) => crate::beneath::resolve_root(Path::new(r))?,
        };
        if !self.allowed.contains(&root) {
            let served: Vec<String> = self
                .allowed
                .iter()
                .map(|r| r.display().to_string())
                .collect();
            return Err(format!(
                "root {} is not served; this server answers for {} only. Name more trees with \
                 `knav serve --allow-root DIR` or in serve.roots of {}",
                root.display(),
                served.join(", "),
                self.default_root.join(crate::settings::FILE_NAME).display()
            ));
        }
        let mut trees = lock(&self.trees);
        let explicit = self.explicit_index_dir.as_deref();
        Ok(trees
            .entry(root.clone())
            .or_insert_with(|| {
                let explicit = explicit.filter(|_| root == self.default_root);
                // A read-only server creates nothing, not even an empty `.knav`.
                let dir = if self.writable {
                    index_dir(&root, explicit)
                } else {
                    existing_index_dir(&root, explicit)
                };
                Arc::new(Tree {
                    root,
                    dir,
                    rev: None,
                    first: Mutex::new(First::None),
                    history: Mutex::new(First::None),
                    checked: Mutex::new(None),
                    watcher: Mutex::new(None),
                    opened: Mutex::new(None),
                })
            })
            .clone())
    }

    /// Revision `rev` of the tree a call names (or the default one): its files are made and
    /// indexed by its first build.
    pub fn tree_at(&self, root: Option<&str>, rev: &str) -> Result<Arc<Tree>, String> {
        let base = self.tree(root)?;
        let revs = base.dir.join(crate::status::REVS);
        let resolved = crate::index::git::resolved::resolve(&base.root, &revs, rev)
            .map_err(|e| e.to_string())?;
        // A revision directory that is not one knav made (planted links) is refused.
        crate::index::git::revision::check_kept(&revs, &resolved).map_err(|e| e.to_string())?;
        let dir = crate::index::git::revision::dir_of(&revs, &resolved);
        let root = dir.join("tree");
        // Once its files are there, read through descriptors opened one name at a time after
        // the check (no link followed): its directories swapped for links later are not read.
        let held = match root.is_dir() {
            true => {
                Some(crate::index::indexdir::RevisionDirs::open(&dir).map_err(|e| e.to_string())?)
            }
            false => None,
        };
        let mut trees = lock(&self.trees);
        // A tree kept from before its files were made is replaced once they are (and no build
        // of it runs).
        if let Some(t) = trees.get(&root) {
            let pinned = t.rev.as_ref().is_some_and(|r| r.held.is_some());
            if pinned || held.is_none() || t.first_build_state().is_some() {
                return Ok(t.clone());
            }
        }
        let (at, index) = match &held {
            Some(h) => (h.tree.via().to_path_buf(), h.index.via().to_path_buf()),
            None => (root.clone(), dir.join("index")),
        };
        let tree = Arc::new(Tree {
            root: at,
            dir: index,
            rev: Some(RevOf {
                base: base.root.clone(),
                revs,
                resolved,
                held,
            }),
            first: Mutex::new(First::None),
            history: Mutex::new(First::None),
            checked: Mutex::new(None),
            watcher: Mutex::new(None),
            opened: Mutex::new(None),
        });
        trees.insert(root, tree.clone());
        Ok(tree)
    }

    /// A snapshot of `tree` fit to answer from: refreshed first when the server may write and
    /// the last check is older than the tree's debounce.
    pub fn snapshot(&self, tree: &Arc<Tree>) -> Result<(Arc<Snapshot>, Option<String>), NotReady> {
        if let Some(busy) = tree.first_build_state() {
            return Err(busy);
        }
        let snap = match tree.open() {
            Ok(Some(s)) => s,
            Ok(None) if self.writable => return Err(tree.start_first_build("for the first time")),
            Ok(None) if tree.rev.is_some() => {
                return Err(NotReady::Failed(format!(
                    "{} has no index; run `knav index {}`, or start the server with `knav \
                     serve --root DIR` so it builds revisions itself",
                    tree.label(),
                    tree.index_args()
                )))
            }
            Ok(None) => {
                return Err(NotReady::Failed(format!(
                    "{} has no index (in {}); run `knav index --root {}`, or start the server \
                     with `knav serve --root {}` so it builds and refreshes indexes itself",
                    tree.root.display(),
                    tree.dir.display(),
                    tree.root.display(),
                    tree.root.display()
                )))
            }
            Err(e) if self.writable => {
                return Err(tree.start_first_build(&format!("again ({e})")));
            }
            Err(e) => return Err(NotReady::Failed(e.to_string())),
        };
        // A revision does not change: nothing to refresh.
        if !self.writable || tree.rev.is_some() {
            return Ok((snap, None));
        }
        let settings = match Settings::load(&tree.root) {
            Ok(s) => s,
            Err(e) => return Ok((snap, Some(format!("index not refreshed: {e}")))),
        };
        let mut checked = match tree.checked.try_lock() {
            Ok(c) => c,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            // A refresh or rebuild is running: answer now from the index as it was.
            Err(std::sync::TryLockError::WouldBlock) => {
                return Ok((
                    snap,
                    Some("an index refresh is running; answered from the index before it".into()),
                ))
            }
        };
        let debounce = self.debounce.unwrap_or(settings.debounce);
        if checked.is_some_and(|at| at.elapsed() < debounce) {
            return Ok((snap, None));
        }
        let Some(refreshed) = tree.refresh(&settings) else {
            *checked = Some(Instant::now());
            return Ok((snap, None));
        };
        match refreshed {
            Ok(report) => {
                *checked = Some(Instant::now());
                drop(checked);
                if report.mode == crate::index::UpdateMode::Unchanged {
                    return Ok((snap, None));
                }
                match tree.open() {
                    Ok(Some(s)) => Ok((s, None)),
                    _ => Ok((snap, None)),
                }
            }
            Err(e) => Ok((snap, Some(format!("index not refreshed: {e}")))),
        }
    }

    /// Applies a replace_symbol or insert_symbol edit to `tree`: against an index brought up
    /// to date first, and refreshed again before the answer.
    pub fn edit(&self, tree: &Arc<Tree>, edit: &crate::edit::Edit) -> Result<Envelope, String> {
        let not_ready = |n: NotReady| match n {
            NotReady::Building(m) | NotReady::Failed(m) => m,
        };
        if !self.writable {
            return Err(format!(
                "{} refused: this server is read-only (started without --root); restart it \
                 with `knav serve --root DIR` to edit",
                edit.tool()
            ));
        }
        if let Some(busy) = tree.first_build_state() {
            return Err(not_ready(busy));
        }
        let settings = Settings::load(&tree.root)?;
        let open = || {
            Snapshot::open(&tree.root, &tree.dir)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("{} has no index", tree.root.display()))
        };
        // Held throughout: no refresh runs between the index read and the write.
        let mut checked = lock(&tree.checked);
        if let Some(Err(e)) = tree.refresh(&settings) {
            return Err(format!(
                "{} refused: the index cannot be refreshed: {e}",
                edit.tool()
            ));
        }
        let snap = open()?;
        let ctags_args = BuildOptions::with_settings(&settings).ctags_args;
        let written = crate::edit::apply(&snap, edit, &ctags_args)?;
        drop(snap);
        let refreshed = tree.refresh(&settings);
        *checked = Some(Instant::now());
        drop(checked);
        let mut env = crate::edit::answer(&open()?, edit.tool(), &written);
        if let Some(Err(e)) = refreshed {
            env.warn(format!(
                "the file is written but the index not refreshed: {e}"
            ));
        }
        Ok(env)
    }

    /// Brings `tree`'s index up to date now, whatever the debounce (a file was saved): only
    /// what the watcher saw change is looked at when it watches the tree; without a watcher
    /// yet, the whole tree is walked.
    pub fn refresh_now(&self, tree: &Arc<Tree>) -> Result<(), NotReady> {
        if !self.writable || tree.rev.is_some() {
            return Ok(());
        }
        if let Some(busy) = tree.first_build_state() {
            return Err(busy);
        }
        let settings = Settings::load(&tree.root).map_err(NotReady::Failed)?;
        let mut checked = lock(&tree.checked);
        match tree.refresh(&settings) {
            Some(Err(e)) => Err(NotReady::Failed(e.to_string())),
            _ => {
                *checked = Some(Instant::now());
                Ok(())
            }
        }
    }

    /// Runs update_index on `tree` now.
    pub fn update(&self, tree: &Arc<Tree>, full: bool) -> Result<Envelope, NotReady> {
        let root_s = tree.root.display().to_string();
        if !self.writable {
            return Err(NotReady::Failed(
                "this server is read-only (started without --root); run `knav index` or \
                 restart it with `knav serve --root DIR`"
                    .into(),
            ));
        }
        if let Some(busy) = tree.first_build_state() {
            return Err(busy);
        }
        let opts = BuildOptions::for_root(&tree.root).map_err(NotReady::Failed)?;
        let mut checked = lock(&tree.checked);
        let report = crate::index::update(
            &tree.root,
            &tree.dir,
            full,
            &opts,
            &mut Progress::new(false),
        )
        .map_err(|e| NotReady::Failed(e.to_string()))?;
        *checked = Some(Instant::now());
        Ok(Envelope::index_report(&root_s, report))
    }
}

impl Tree {
    /// The index's current snapshot: the one opened last while `CURRENT` holds the same bytes
    /// and no read of it ran into damage, else opened again.
    fn open(&self) -> Result<Option<Arc<Snapshot>>, crate::index::IndexError> {
        let current = std::fs::read(self.dir.join(crate::index::store::CURRENT)).ok();
        let mut opened = lock(&self.opened);
        if let (Some(bytes), Some((was, snap))) = (&current, opened.as_ref()) {
            if bytes == was && snap.damage().is_none() {
                return Ok(Some(snap.clone()));
            }
        }
        *opened = None;
        let Some(snap) = Snapshot::open(&self.root, &self.dir)?.map(Arc::new) else {
            return Ok(None);
        };
        // Kept under the bytes read before it was opened: were they older than the manifest
        // it opened, the next call only opens it again.
        if let Some(bytes) = current {
            *opened = Some((bytes, snap.clone()));
        }
        Ok(Some(snap))
    }

    /// Brings the index up to date, statting only what the watcher saw change when it can;
    /// `None` when it saw nothing change. The caller holds `checked`.
    fn refresh(
        &self,
        settings: &Settings,
    ) -> Option<Result<crate::index::UpdateReport, crate::index::IndexError>> {
        let mut watcher = lock(&self.watcher);
        if watcher.as_mut().is_some_and(Watcher::is_clean) {
            return None;
        }
        if watcher.is_none() {
            // Every file: a text file grep searches counts as a C file does.
            *watcher = Watcher::new().map(Watcher::every_file);
        }
        let hint = watcher.as_mut().and_then(|w| {
            if w.is_new() {
                w.watch(&self.root, self.known_dirs());
            }
            w.begin_refresh()
        });
        let opts = BuildOptions::with_settings(settings);
        let refreshed = crate::index::update_hinted(
            &self.root,
            &self.dir,
            false,
            &opts,
            &mut Progress::new(false),
            hint.as_ref(),
        );
        if let (Some(w), Ok(report)) = (watcher.as_mut(), &refreshed) {
            // Directories the refresh read may be new: watched from now on, and one more
            // refresh to be sure nothing happened in them before the watch.
            if report.dirs_read > 0 {
                w.watch(&self.root, self.known_dirs());
            }
        }
        Some(refreshed)
    }

    /// Every directory the last walk saw, root-relative.
    fn known_dirs(&self) -> impl Iterator<Item = String> {
        crate::index::store::read_walk_cache(&self.dir)
            .map(|c| c.dirs)
            .unwrap_or_default()
            .into_iter()
            .map(|d| d.path)
    }

    /// Directories an MCP `active_config` path may lie in: the root and its
    /// `serve.config_dirs`, real paths.
    /// For a revision, its served root's: a `.config` is the user's, not the revision's.
    pub fn config_dirs(&self) -> Result<Vec<PathBuf>, String> {
        let root = self.base_root();
        let mut dirs = vec![root.to_path_buf()];
        dirs.extend(Settings::load(root)?.resolved_config_dirs(root)?);
        Ok(dirs)
    }

    /// The served root: this tree's, or the one it is a revision of.
    pub fn base_root(&self) -> &Path {
        self.rev.as_ref().map_or(&self.root, |r| &r.base)
    }

    /// The resolved root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Its index directory.
    pub fn index_dir(&self) -> &Path {
        &self.dir
    }

    /// `Some` while the first build runs (the transient message) or after it failed (the error,
    /// reported once; the next call starts over).
    fn first_build_state(&self) -> Option<NotReady> {
        let mut first = lock(&self.first);
        match &*first {
            First::None => None,
            First::Running { started, status } => {
                let status = lock(status).clone();
                Some(NotReady::Building(self.building_message(
                    "for the first time",
                    started.elapsed(),
                    &status,
                )))
            }
            First::Failed(e) => {
                let e = format!("building the index of {} failed: {e}", self.label());
                *first = First::None;
                Some(NotReady::Failed(e))
            }
        }
    }

    /// `Some` while the history index is brought up to `tip` in the background (the transient
    /// message; the build starts with the first call that needs it) or after that failed
    /// (reported once); `None` when it is up to date, or when this server may not write it
    /// (the answer then says which command builds it).
    pub fn history_ready(self: &Arc<Self>, writable: bool, tip: &str) -> Option<NotReady> {
        let mut history = lock(&self.history);
        let reading = |elapsed: Duration, status: &Status| {
            NotReady::Building(format!(
                "Reading the git history of {} ({}). Retry this call shortly.",
                self.label(),
                self.progress(elapsed, status)
            ))
        };
        match &*history {
            First::Running { started, status } => {
                let status = lock(status).clone();
                return Some(reading(started.elapsed(), &status));
            }
            First::Failed(e) => {
                let e = format!("building the history index of {} failed: {e}", self.label());
                *history = First::None;
                return Some(NotReady::Failed(e));
            }
            First::None => {}
        }
        if !writable || crate::history::has_tip(&self.root, &self.dir, tip) {
            return None;
        }
        let tip = tip.to_string();
        let started = self.spawn_job(
            history,
            |t| &t.history,
            "knav-history",
            move |tree, progress| {
                crate::index::git::history::update(&tree.root, &tree.dir, Some(&tip), progress)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            },
        );
        if let Err(e) = started {
            return Some(NotReady::Failed(format!(
                "cannot start the history build: {e}"
            )));
        }
        Some(reading(Duration::ZERO, &Status::default()))
    }

    /// Marks the job slot `held` (the locked `slot` of this tree) running and runs `job` in a
    /// thread named `name`, with progress the slot shows; the slot then says how it ended
    /// (nothing, or the failure, reported once). An error when no thread could be started.
    fn spawn_job(
        self: &Arc<Self>,
        mut held: MutexGuard<'_, First>,
        slot: fn(&Tree) -> &Mutex<First>,
        name: &str,
        job: impl FnOnce(&Tree, &mut Progress) -> Result<(), String> + Send + 'static,
    ) -> Result<(), String> {
        let status = Arc::new(Mutex::new(Status::default()));
        *held = First::Running {
            started: Instant::now(),
            status: status.clone(),
        };
        drop(held);
        let tree = self.clone();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let done = job(&tree, &mut Progress::shared(status));
                *lock(slot(&tree)) = match done {
                    Ok(()) => First::None,
                    Err(e) => First::Failed(e),
                };
            })
            .map(|_| ())
            .map_err(|e| {
                *lock(slot(self)) = First::None;
                e.to_string()
            })
    }

    /// Starts the background build unless one runs; returns the transient message.
    fn start_first_build(self: &Arc<Self>, why: &str) -> NotReady {
        let first = lock(&self.first);
        if let First::Running { started, status } = &*first {
            let status = lock(status).clone();
            return NotReady::Building(self.building_message(why, started.elapsed(), &status));
        }
        let started = self.spawn_job(
            first,
            |t| &t.first,
            "knav-first-build",
            |tree, progress| {
                if let Some(r) = &tree.rev {
                    crate::index::git::revision::make(
                        &r.base,
                        &r.revs,
                        r.resolved.clone(),
                        progress,
                    )
                    .map_err(|e| e.to_string())?;
                }
                let opts = BuildOptions::for_root(&tree.root)?;
                crate::index::update(&tree.root, &tree.dir, false, &opts, progress)
                    .map_err(|e| e.to_string())?;
                *lock(&tree.checked) = Some(Instant::now());
                Ok(())
            },
        );
        if let Err(e) = started {
            return NotReady::Failed(format!("cannot start the index build: {e}"));
        }
        NotReady::Building(self.building_message(why, Duration::ZERO, &Status::default()))
    }

    /// index_status for this tree, with the progress of its first build or its refresh when
    /// one runs; builds and refreshes nothing.
    pub fn status(&self) -> Envelope {
        let progress = match &*lock(&self.first) {
            First::Running { started, status } => {
                let status = lock(status).clone();
                Some(self.progress(started.elapsed(), &status))
            }
            _ if matches!(
                self.checked.try_lock(),
                Err(std::sync::TryLockError::WouldBlock)
            ) =>
            {
                Some("refreshing the index".to_string())
            }
            _ => None,
        };
        crate::status::index_status(&self.root, &self.dir, progress)
    }

    /// What the tree is, for messages: its root, or `revision R (SHA) of ROOT`.
    pub fn label(&self) -> String {
        match &self.rev {
            Some(r) => format!(
                "revision {} ({}) of {}",
                r.resolved.asked,
                r.resolved.short(),
                r.base.display()
            ),
            None => self.root.display().to_string(),
        }
    }

    /// The arguments of `knav index` that build this tree's index.
    fn index_args(&self) -> String {
        match &self.rev {
            Some(r) => format!("--root {} --rev {}", r.base.display(), r.resolved.commit),
            None => format!("--root {}", self.root.display()),
        }
    }

    /// The tree an answer names (a revision's base) and the revision, if any.
    pub fn answer_root(&self) -> (String, Option<crate::envelope::RevName>) {
        match &self.rev {
            Some(r) => (
                r.base.display().to_string(),
                Some(crate::envelope::RevName::of(&r.resolved)),
            ),
            None => (self.root.display().to_string(), None),
        }
    }

    fn building_message(&self, why: &str, elapsed: Duration, s: &Status) -> String {
        format!(
            "Indexing {} {why} ({}). Retry this call shortly.",
            self.label(),
            self.progress(elapsed, s)
        )
    }

    /// How far a build is: `12 s elapsed; 3 of 9 files, …`.
    fn progress(&self, elapsed: Duration, s: &Status) -> String {
        let secs = elapsed.as_secs();
        let how_far = if s.total_bytes > 0 && s.bytes >= s.total_bytes {
            format!(
                "all {} files read, now: {}; a few seconds left",
                s.total_files, s.phase
            )
        } else if s.total_bytes > 0 && s.bytes > 0 {
            let left = elapsed.as_secs_f64() * (s.total_bytes - s.bytes.min(s.total_bytes)) as f64
                / s.bytes as f64;
            format!(
                "{} of {} files, {:.0}% of {:.0} MB, about {:.0} s left",
                s.files,
                s.total_files,
                100.0 * s.bytes as f64 / s.total_bytes as f64,
                s.total_bytes as f64 / (1 << 20) as f64,
                left
            )
        } else if !s.phase.is_empty() {
            format!(
                "{}; a Linux-kernel-sized tree takes about a minute",
                s.phase
            )
        } else {
            "a Linux-kernel-sized tree takes about a minute".to_string()
        };
        format!("{secs} s elapsed; {how_far}")
    }
}
