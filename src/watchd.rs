//! The CLI's watcher daemon, the way git's fsmonitor daemon works: the first query on a tree
//! starts `knav __watchd ROOT INDEX_DIR`, a small detached process holding inotify watches on
//! the tree's directories ([`crate::serve::watch::Watcher`], every file counting but a build's
//! products), and each later query asks it over a Unix socket whether anything changed since
//! the index generation it opened was last found to match the tree. "clean" skips the stat
//! walk of a refresh; anything else (no daemon yet, a dead or foreign socket, a stale token,
//! an overflow, a timeout) makes the query scan the tree as `knav index` does.
//!
//! The socket lives in a private per-user directory (`$XDG_RUNTIME_DIR/knav` when that is the
//! user's own directory of mode 0700, else `/tmp/knav-UID`; mode 0700, owned by the user,
//! checked), never in the tree's `.knav`, which whoever writes the tree controls; the daemon's
//! uid is checked on every connection. One daemon per tree and index directory holds a lock
//! file beside its socket. It runs in its own session in `/`, holding none of its starter's
//! descriptors. It exits after [`IDLE`] without a question, [`OFF_FOR`] after it found it
//! cannot watch, and when the root or the index goes away or is moved.
//!
//! The protocol, one line each way: `check G` → `clean` when the daemon marked generation G
//! clean and saw nothing relevant since, else `dirty` (`off` when it cannot watch); `arm` →
//! `armed N K` before the asking query refreshes, then K lines naming what changed since the
//! last clean mark (`f PATH`: a file, `d PATH`: a directory's entries), or `armed N -` when
//! the daemon cannot say exactly (the query then scans every file); `mark G N` after its
//! refresh found or made generation G: clean from then on only when nothing happened since
//! `arm` N and no other query armed meanwhile.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::serve::watch::Watcher;
use crate::walk::Hint;

/// The daemon exits after this long without a question.
pub const IDLE: Duration = Duration::from_secs(20 * 60);

/// A daemon that cannot watch (the watch limit) says `off` this long, then ends, however often
/// it is asked: the next query starts one that tries again.
pub const OFF_FOR: Duration = Duration::from_secs(5 * 60);

/// How long a query waits for the daemon's answer to `check` before scanning instead.
const CHECK_TIMEOUT: Duration = Duration::from_millis(20);

/// How long `arm` and `mark` may take (they come with a scan of the tree anyway).
const ARM_TIMEOUT: Duration = Duration::from_millis(200);

/// Bytes of an answer at most (a hint of [`MAX_HINT`] paths fits).
const MAX_ANSWER: usize = 1 << 20;

/// Paths a hint names at most: past that, the refresh scans every file.
const MAX_HINT: usize = 1000;

/// The hidden command that runs the daemon.
pub const COMMAND: &str = "__watchd";

/// True unless `KNAV_WATCH=0` (or `off`, `false`, `no`) turns the daemon off.
pub fn enabled() -> bool {
    !std::env::var("KNAV_WATCH").is_ok_and(|v| matches!(v.trim(), "0" | "off" | "false" | "no"))
}

fn euid() -> u32 {
    // SAFETY: plain syscall without arguments.
    unsafe { libc::geteuid() }
}

/// True when a directory owned by `owner` with mode `mode` is `euid`'s alone: no one else may
/// enter it, nor swap what is in it.
fn private_to(owner: u32, mode: u32, euid: u32) -> bool {
    owner == euid && mode & 0o077 == 0
}

/// `$XDG_RUNTIME_DIR` when it is this user's own directory (mode 0700): one inherited from
/// another user (`sudo -E`) is theirs to swap for a link, and is not used.
fn runtime_dir(uid: u32) -> Option<PathBuf> {
    let d = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| Path::new(d).is_absolute())?;
    let m = std::fs::metadata(&d).ok()?;
    (m.is_dir() && private_to(m.uid(), m.mode(), uid)).then(|| PathBuf::from(d))
}

/// The user's private directory for sockets, made if missing (`$XDG_RUNTIME_DIR/knav`, else
/// `/tmp/knav-UID`); `Err` with its path when it is not a real directory of this user's that no
/// one else may enter (someone made it first, or a link).
fn private_dir_or_why() -> Result<PathBuf, PathBuf> {
    let uid = euid();
    let dir = match runtime_dir(uid) {
        Some(d) => d.join("knav"),
        None => PathBuf::from(format!("/tmp/knav-{uid}")),
    };
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() && private_to(m.uid(), m.mode(), uid) => Ok(dir),
        _ => Err(dir),
    }
}

/// [`private_dir_or_why`] when it can be had.
fn private_dir() -> Option<PathBuf> {
    private_dir_or_why().ok()
}

/// Why the watcher cannot run for this user, for `knav status`: its private directory is not
/// theirs. `None` when it is, or when `KNAV_WATCH=0` turned the watcher off.
pub fn unavailable() -> Option<String> {
    let dir = private_dir_or_why().err().filter(|_| enabled())?;
    Some(format!(
        "the watcher is off: {} is not a directory of yours that only you may enter (another \
         user made it, or it is a link), so every query scans the tree; remove it to turn the \
         watcher on",
        dir.display()
    ))
}

/// The socket and lock file of the daemon of `root` indexed in `index_dir`, started from this
/// very binary (a knav installed anew starts a daemon of its own; the old one ends idle).
fn paths(private: &Path, root: &Path, index_dir: &Path, exe: &Path) -> (PathBuf, PathBuf) {
    let mut key = root.as_os_str().as_bytes().to_vec();
    key.push(0);
    key.extend_from_slice(index_dir.as_os_str().as_bytes());
    if let Ok(m) = std::fs::metadata(exe) {
        key.extend_from_slice(format!("\0{}:{}:{}", m.dev(), m.ino(), m.mtime_nsec()).as_bytes());
        key.extend_from_slice(&m.mtime().to_le_bytes());
    }
    let h = crate::index::hash64(&key);
    (
        private.join(format!("w-{h:016x}.sock")),
        private.join(format!("w-{h:016x}.lock")),
    )
}

/// This process's own binary, whose daemon it asks.
const SELF: &str = "/proc/self/exe";

/// Where the daemon of `root` indexed in `index_dir` that binary `exe` starts listens; `None`
/// without a private directory.
pub fn socket_of(root: &Path, index_dir: &Path, exe: &Path) -> Option<PathBuf> {
    Some(paths(&private_dir()?, root, index_dir, exe).0)
}

/// What the daemon said.
#[derive(Debug, PartialEq, Eq)]
pub enum Said {
    /// Nothing relevant changed since the generation asked about was found to match the tree.
    Clean,
    /// Something may have changed: scan.
    Dirty,
    /// The daemon cannot watch this tree (no inotify, the watch limit): scan.
    Off,
    /// No daemon listens (no socket, or a dead one): start one, and scan.
    Absent,
    /// A daemon that did not answer in time, another user's, or one that said nonsense: scan.
    Failed,
}

/// A query's link to the daemon of one tree.
pub struct Client {
    socket: PathBuf,
    root: PathBuf,
    index_dir: PathBuf,
}

impl Client {
    /// The daemon of `root` indexed in `index_dir`; `None` when the watcher is turned off or
    /// the private directory cannot be had.
    pub fn of(root: &Path, index_dir: &Path) -> Option<Client> {
        Client::of_binary(root, index_dir, Path::new(SELF))
    }

    /// [`Client::of`] the daemon binary `exe` starts (for tests, which are another binary).
    /// Relative paths are made absolute: the daemon runs in `/`.
    pub fn of_binary(root: &Path, index_dir: &Path, exe: &Path) -> Option<Client> {
        if !enabled() {
            return None;
        }
        let private = private_dir()?;
        let root = std::path::absolute(root).ok()?;
        let index_dir = std::path::absolute(index_dir).ok()?;
        let (socket, _) = paths(&private, &root, &index_dir, exe);
        Some(Client {
            socket,
            root,
            index_dir,
        })
    }

    /// Whether anything changed since generation `generation` was marked clean.
    pub fn check(&self, generation: u64) -> Said {
        let said = self.ask(&format!("check {generation}\n"), CHECK_TIMEOUT);
        match said {
            Ok(a) => match a.trim_end() {
                "clean" => Said::Clean,
                "dirty" => Said::Dirty,
                "off" => Said::Off,
                _ => Said::Failed,
            },
            Err(s) => s,
        }
    }

    /// Tells the daemon a refresh starts now: its token, for [`Client::mark`], and what changed
    /// since the index last matched the tree when the daemon knows exactly (else the refresh
    /// scans every file).
    pub fn arm(&self) -> Option<(u64, Option<Hint>)> {
        let a = self.ask("arm\n", ARM_TIMEOUT).ok()?;
        let mut lines = a.lines();
        let mut head = lines.next()?.strip_prefix("armed ")?.split(' ');
        let token = head.next()?.parse().ok()?;
        let Some(Ok(n)) = head.next().map(str::parse::<usize>) else {
            return Some((token, None));
        };
        let mut hint = Hint::default();
        for line in lines {
            match line.split_once(' ') {
                Some(("f", p)) => hint.files.insert(p.to_string()),
                Some(("d", p)) => hint.dirs.insert(p.to_string()),
                _ => return Some((token, None)),
            };
        }
        let complete = hint.files.len() + hint.dirs.len() == n;
        Some((token, complete.then_some(hint)))
    }

    /// Tells the daemon the scan armed with `token` found (or made) generation `generation`.
    pub fn mark(&self, generation: u64, token: u64) {
        let _ = self.ask(&format!("mark {generation} {token}\n"), ARM_TIMEOUT);
    }

    /// Starts the daemon, detached: its own session, in `/`, with no standard streams and
    /// none of the caller's other descriptors (a pipe the caller's shell handed down would
    /// stay open, and its reader wait, for the daemon's whole life). A second one started
    /// meanwhile finds the lock taken and exits.
    pub fn spawn(&self) {
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new(exe);
        cmd.arg(COMMAND)
            .arg(&self.root)
            .arg(&self.index_dir)
            .current_dir("/")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: setsid and close_range are async-signal-safe and touch no memory of the
        // parent's; marking descriptors close-on-exec keeps the one std reports exec errors on.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                #[cfg(target_os = "linux")]
                libc::syscall(
                    libc::SYS_close_range,
                    3u32,
                    u32::MAX,
                    libc::CLOSE_RANGE_CLOEXEC,
                );
                Ok(())
            });
        }
        let _ = cmd.spawn();
    }

    /// Sends `line` and reads the one-line answer, within `timeout` for each step.
    fn ask(&self, line: &str, timeout: Duration) -> Result<String, Said> {
        let mut s = connect(&self.socket, timeout)?;
        if peer_uid(&s) != Some(euid()) {
            return Err(Said::Failed);
        }
        s.write_all(line.as_bytes()).map_err(|_| Said::Failed)?;
        // The answer ends where the daemon closes the connection.
        let mut buf = Vec::new();
        let deadline = Instant::now() + timeout;
        let mut chunk = [0u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || buf.len() > MAX_ANSWER {
                return Err(Said::Failed);
            }
            let _ = s.set_read_timeout(Some(left));
            match s.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(_) => return Err(Said::Failed),
            }
        }
        if !buf.ends_with(b"\n") {
            return Err(Said::Failed);
        }
        String::from_utf8(buf).map_err(|_| Said::Failed)
    }
}

/// Connects to the socket at `path` without blocking past `timeout`: `Absent` when nothing
/// listens there, `Failed` when the connection cannot be made in time.
fn connect(path: &Path, timeout: Duration) -> Result<UnixStream, Said> {
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: a zeroed sockaddr_un is a valid value of the type.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() >= addr.sun_path.len() {
        return Err(Said::Failed);
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (d, s) in addr.sun_path.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    let flags = libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: plain syscall; the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_UNIX, flags, 0) };
    if fd < 0 {
        return Err(Said::Failed);
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    // SAFETY: `addr` is a valid sockaddr_un of at least `len` bytes.
    let r = unsafe {
        libc::connect(
            fd,
            &addr as *const libc::sockaddr_un as *const libc::sockaddr,
            len as libc::socklen_t,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error().raw_os_error();
        // A listener's full queue (EAGAIN) is a busy daemon, not a missing one.
        return Err(match e {
            Some(libc::ENOENT) | Some(libc::ECONNREFUSED) => Said::Absent,
            _ => Said::Failed,
        });
    }
    let s = UnixStream::from(owned);
    s.set_nonblocking(false).map_err(|_| Said::Failed)?;
    let _ = s.set_write_timeout(Some(timeout));
    Ok(s)
}

/// The uid of the process at the other end of `s`.
fn peer_uid(s: &UnixStream) -> Option<u32> {
    // SAFETY: a zeroed ucred is a valid value; getsockopt writes at most `len` bytes into it.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `s`'s descriptor is open; `cred` and `len` are writable and `len` is its size.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    (r == 0).then_some(cred.uid)
}

/// The daemon's state for its one tree.
struct Daemon {
    root: PathBuf,
    index_dir: PathBuf,
    /// The root's identity when the daemon started: moved or gone, the daemon ends.
    root_id: (u64, u64),
    watcher: Option<Watcher>,
    /// The generation the last `mark` found matching the tree, while nothing happened since.
    clean: Option<u64>,
    /// The token of the last `arm`.
    armed: u64,
    /// What changed since the last clean mark, as far as the watcher said; `None` once it
    /// could not say exactly (an overflow, a new watch, the first refresh).
    pending: Option<Hint>,
    /// When the watcher was found unable to watch (and dropped, its watches freed).
    off_since: Option<Instant>,
}

impl Daemon {
    /// Every directory the index's last walk saw, root-relative.
    fn known_dirs(&self) -> impl Iterator<Item = String> {
        crate::index::store::read_walk_cache(&self.index_dir)
            .map(|c| c.dirs)
            .unwrap_or_default()
            .into_iter()
            .map(|d| d.path)
    }

    /// Watches the directories the index's last walk saw; a watcher that could not (the watch
    /// limit) is dropped, freeing the watches it holds, and the daemon is off from then on.
    fn watch_known(&mut self) {
        let dirs: Vec<String> = self.known_dirs().collect();
        if let Some(w) = self.watcher.as_mut() {
            w.watch(&self.root, dirs.into_iter());
        }
        if self.watcher.as_ref().is_none_or(|w| !w.is_usable()) {
            self.watcher = None;
            self.off_since.get_or_insert_with(Instant::now);
        }
    }

    /// True when the daemon should end: idle since `asked_at` for [`IDLE`], off for
    /// [`OFF_FOR`], or its tree or index gone.
    fn should_end(&self, asked_at: Instant) -> bool {
        asked_at.elapsed() > IDLE
            || self.off_since.is_some_and(|t| t.elapsed() > OFF_FOR)
            || !self.tree_there()
    }

    /// False when nothing relevant happened since the last `arm`, the watches complete.
    fn quiet(&mut self) -> bool {
        self.watcher.as_mut().is_some_and(Watcher::is_clean)
    }

    /// The answer to one request line.
    fn answer(&mut self, line: &str) -> String {
        if self.watcher.as_ref().is_none_or(|w| !w.is_usable()) {
            return "off".into();
        }
        let mut words = line.split_ascii_whitespace();
        let command = words.next();
        let numbers: Vec<u64> = words.filter_map(|w| w.parse().ok()).collect();
        match command {
            Some("check") => {
                let asked = numbers.first().copied();
                if asked.is_some() && self.clean == asked && self.quiet() {
                    return "clean".into();
                }
                self.clean = None;
                "dirty".into()
            }
            Some("arm") => {
                self.clean = None;
                let since = self.watcher.as_mut().and_then(Watcher::begin_refresh);
                // Past MAX_HINT paths no hint is handed over: none is kept either.
                self.pending = match (self.pending.take(), since) {
                    (Some(mut p), Some(h)) => {
                        p.files.extend(h.files);
                        p.dirs.extend(h.dirs);
                        Some(p).filter(|p| p.files.len() + p.dirs.len() <= MAX_HINT)
                    }
                    _ => None,
                };
                self.armed += 1;
                self.armed_answer()
            }
            Some("mark") => {
                let (generation, token) = (numbers.first().copied(), numbers.get(1).copied());
                // Directories the scan found are watched from now on; a new one keeps the
                // tree dirty until a scan has run with its watch in place.
                self.watch_known();
                if self.watcher.is_none() {
                    return "off".into();
                }
                if token == Some(self.armed) && self.quiet() {
                    self.clean = generation;
                    self.pending = Some(Hint::default());
                    return "clean".into();
                }
                "dirty".into()
            }
            _ => "error: requests are check G, arm, mark G N".into(),
        }
    }

    /// `armed N K` and the K paths of the pending hint, or `armed N -` when there is none fit
    /// to hand over: unknown, too long, or naming a file that changes which files are walked
    /// (an ignore file, `.knav.toml`), which a hinted walk would not apply to the directories
    /// it trusts. (Other text files need no hint: a refresh stats every file `knav grep`
    /// reads.)
    fn armed_answer(&self) -> String {
        const WALK_RULES: &[&str] = &[".gitignore", ".ignore", ".rgignore", ".knav.toml"];
        let usable = self.pending.as_ref().filter(|p| {
            p.files.len() + p.dirs.len() <= MAX_HINT
                && !p.files.iter().any(|f| {
                    let name = f.rsplit('/').next().unwrap_or(f);
                    WALK_RULES.contains(&name)
                })
        });
        let Some(p) = usable else {
            return format!("armed {} -", self.armed);
        };
        let mut out = format!("armed {} {}", self.armed, p.files.len() + p.dirs.len());
        for f in &p.files {
            out.push_str(&format!("\nf {f}"));
        }
        for d in &p.dirs {
            out.push_str(&format!("\nd {d}"));
        }
        out
    }

    /// True while the root is the directory it was and the index is there.
    fn tree_there(&self) -> bool {
        let same = std::fs::metadata(&self.root)
            .is_ok_and(|m| (m.dev(), m.ino()) == self.root_id && m.is_dir());
        same && self.index_dir.join(crate::index::store::CURRENT).is_file()
    }
}

/// Serves one connection: one request line, one answer, within a few milliseconds.
fn serve_one(d: &mut Daemon, mut s: UnixStream) {
    if peer_uid(&s) != Some(euid()) {
        return;
    }
    let _ = s.set_nonblocking(false);
    let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
    let _ = s.set_write_timeout(Some(Duration::from_millis(50)));
    let mut buf = [0u8; 128];
    let mut got = 0;
    while got < buf.len() && !buf[..got].contains(&b'\n') {
        match s.read(&mut buf[got..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => got += n,
        }
    }
    let line = String::from_utf8_lossy(&buf[..got]).into_owned();
    let answer = d.answer(line.lines().next().unwrap_or(""));
    let _ = s.write_all(format!("{answer}\n").as_bytes());
}

/// `knav __watchd ROOT INDEX_DIR`: runs the daemon of that tree until it is idle for [`IDLE`]
/// or the tree or its index goes; exit 0 also when another daemon already serves it.
pub fn main(args: &[std::ffi::OsString]) -> i32 {
    let (Some(root), Some(index_dir)) = (args.first(), args.get(1)) else {
        eprintln!("knav {COMMAND}: usage: knav {COMMAND} ROOT INDEX_DIR");
        return 2;
    };
    close_inherited();
    let (root, index_dir) = (PathBuf::from(root), PathBuf::from(index_dir));
    if !root.is_absolute() || !index_dir.is_absolute() {
        eprintln!("knav {COMMAND}: ROOT and INDEX_DIR must be absolute paths");
        return 2;
    }
    let Some(private) = private_dir() else {
        return 1;
    };
    let (socket, lock_path) = paths(&private, &root, &index_dir, Path::new(SELF));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&lock_path);
    // One daemon a tree: a second one started meanwhile leaves.
    let Ok(lock) = lock else { return 1 };
    if lock.try_lock().is_err() {
        return 0;
    }
    let Ok(meta) = std::fs::metadata(&root) else {
        return 1;
    };
    // A socket left by a daemon that died is removed: only the lock's holder binds.
    let _ = std::fs::remove_file(&socket);
    let Ok(listener) = UnixListener::bind(&socket) else {
        return 1;
    };
    let mut d = Daemon {
        root: root.clone(),
        index_dir,
        root_id: (meta.dev(), meta.ino()),
        watcher: Watcher::new().map(Watcher::every_file),
        clean: None,
        armed: 0,
        pending: None,
        off_since: None,
    };
    d.watch_known();
    serve(&mut d, &listener);
    let _ = std::fs::remove_file(&socket);
    // Removed while held: a daemon that opened it meanwhile serves its own socket, at worst
    // until it is idle.
    let _ = std::fs::remove_file(&lock_path);
    drop(lock);
    0
}

/// Closes every descriptor but the standard streams: whatever started the daemon may have
/// handed down a pipe whose reader waits for its last writer to go.
fn close_inherited() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain syscall; nothing of this process's own is open yet.
        let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
        if r == 0 {
            return;
        }
    }
    // A kernel without close_range: the open ones, by number.
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: nothing of this process's own is open yet (the listing's own descriptor is
        // closed already: closing its number again fails harmlessly).
        unsafe { libc::close(fd) };
    }
}

/// Answers connections until the daemon should end.
fn serve(d: &mut Daemon, listener: &UnixListener) {
    let (mut asked_at, mut looked_at) = (Instant::now(), Instant::now());
    loop {
        let mut fds = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut fds, 1, 1000) };
        if ready > 0 {
            if let Ok((s, _)) = listener.accept() {
                serve_one(d, s);
                asked_at = Instant::now();
            }
        }
        if looked_at.elapsed() >= Duration::from_secs(1) {
            looked_at = Instant::now();
            // Read the queued events now and then, so that a busy tree overflows no queue
            // between questions.
            if let Some(w) = d.watcher.as_mut() {
                w.drain();
            }
            if d.should_end(asked_at) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_dir_counts_only_when_the_user_s_alone() {
        assert!(private_to(1000, 0o40700, 1000));
        assert!(
            !private_to(1000, 0o40700, 0),
            "another user's, inherited by sudo -E"
        );
        assert!(!private_to(1000, 0o40755, 1000), "others may enter");
        assert!(!private_to(1000, 0o40770, 1000), "the group may write");
    }

    #[test]
    fn a_daemon_that_cannot_watch_says_off_then_ends_however_often_asked() {
        let root = std::env::temp_dir().join(format!("knav-watchd-off-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join(".knav")).unwrap();
        std::fs::write(root.join(".knav").join(crate::index::store::CURRENT), "{}").unwrap();
        let meta = std::fs::metadata(&root).unwrap();
        let mut d = Daemon {
            root: root.clone(),
            index_dir: root.join(".knav"),
            root_id: (meta.dev(), meta.ino()),
            watcher: Watcher::new(),
            clean: None,
            armed: 0,
            pending: None,
            off_since: None,
        };
        d.watch_known();
        assert!(d.watcher.is_some() && d.off_since.is_none());
        // A watch that cannot be added (as at the watch limit) turns the watcher off and
        // frees its watches.
        if let Some(w) = d.watcher.as_mut() {
            w.watch(&root, std::iter::once("no\0such".to_string()));
        }
        d.watch_known();
        assert!(d.watcher.is_none());
        assert_eq!(d.answer("check 1"), "off");
        assert!(!d.should_end(Instant::now()), "off for a while first");
        d.off_since = Instant::now().checked_sub(OFF_FOR + Duration::from_secs(1));
        assert_eq!(d.answer("check 1"), "off");
        assert!(
            d.should_end(Instant::now()),
            "asked just now, off long enough"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
