//! Starting ctags without copying knav's address space.
//!
//! std's `Command` starts a program with `posix_spawn` (a vfork-like clone) only when it is
//! asked for nothing `posix_spawn` cannot do; a `pre_exec` hook (knav's PDEATHSIG) or, in a
//! statically linked knav, a working directory make it `fork()`. A fork of a build of hundreds
//! of MB copies its page tables and makes every page it writes afterwards a copy-on-write fault,
//! seconds of CPU over a kernel's ctags runs (BENCHMARKS.md, "Design measurements"). Here the child is a `CLONE_VM | CLONE_VFORK` clone, as glibc's
//! own `posix_spawn` makes, which sets PDEATHSIG, wires its pipes, changes directory and execs.
//! Where the clone is refused, std's `Command` starts it (`spawn_std`), forking.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A started ctags: killed and reaped when dropped, unless already waited for.
pub(crate) struct Child {
    pid: libc::pid_t,
    reaped: bool,
}

impl Child {
    /// Kills the process (SIGKILL); a process already reaped is left alone.
    pub(crate) fn kill(&mut self) {
        if !self.reaped {
            // SAFETY: kill has no memory effects; the pid is our unreaped child's.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
            }
        }
    }

    /// Waits for the process to end and reaps it; true when it exited with status 0 (false
    /// when it was killed, failed, or had been reaped before).
    pub(crate) fn wait(&mut self) -> bool {
        let mut ok = false;
        while !self.reaped {
            let mut status = 0;
            // SAFETY: status is a valid out-pointer; the pid is our child's.
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r == self.pid || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                self.reaped = true;
                ok = r == self.pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            }
        }
        ok
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
        self.wait();
    }
}

/// An owned file descriptor closed when dropped (until made a `File`).
struct Fd(RawFd);

impl Fd {
    /// Gives the descriptor to a `File`.
    fn into_file(self) -> File {
        let fd = self.0;
        std::mem::forget(self);
        // SAFETY: fd is open and owned by nobody else.
        unsafe { File::from_raw_fd(fd) }
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is owned by this Fd.
        unsafe {
            libc::close(self.0);
        }
    }
}

/// Checks a libc return value.
fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Moves `fd` above the standard descriptors (a knav started with 0, 1 or 2 closed gets its
/// pipes there, and the child's `dup2` onto 0, 1, 2 would then overwrite one with another).
fn above_stdio(fd: Fd) -> io::Result<Fd> {
    if fd.0 > 2 {
        return Ok(fd);
    }
    // SAFETY: fcntl on an open descriptor; the low one is closed when `fd` drops.
    let high = cvt(unsafe { libc::fcntl(fd.0, libc::F_DUPFD_CLOEXEC, 3) })?;
    Ok(Fd(high))
}

/// A pipe, both ends close-on-exec: (read end, write end).
fn pipe() -> io::Result<(Fd, Fd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    let (r, w) = (Fd(fds[0]), Fd(fds[1]));
    Ok((above_stdio(r)?, above_stdio(w)?))
}

/// `program` as an absolute path to exec (the child changes directory first): a bare name is
/// looked up on `PATH` (glibc's default when it is unset) as `execvp` does, the first entry
/// this process may execute.
fn resolve(program: &Path) -> io::Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    if program.as_os_str().as_bytes().contains(&b'/') {
        return Ok(cwd.join(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    std::env::split_paths(&path)
        .map(|dir| cwd.join(dir).join(program))
        .find(|p| {
            p.is_file()
                && c_string(p.as_os_str()).is_ok_and(|c| {
                    // SAFETY: access with a valid C string.
                    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
                })
        })
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is not on PATH", program.display()),
            )
        })
}

fn c_string(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{:?} has a NUL byte", s),
        )
    })
}

/// What the child needs, made before the clone: it may not allocate.
struct ChildPlan {
    program: CString,
    argv: Vec<*const libc::c_char>,
    /// The environment, pointers into [`ChildEnv`]'s strings, null-terminated.
    envp: Vec<*const libc::c_char>,
    cwd: CString,
    /// Descriptors to become the child's 0, 1 and 2.
    stdio: [RawFd; 3],
    /// Where the child writes its errno when it cannot exec.
    report: RawFd,
    parent: libc::pid_t,
    /// The signal mask ctags starts with.
    mask: libc::sigset_t,
}

/// The clone's first and only function: runs on its own stack in knav's memory while the
/// parent thread waits, so it calls only async-signal-safe functions and touches nothing but
/// the plan. Every signal is blocked on entry (the parent blocked them before the clone).
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: arg is the ChildPlan the parent keeps alive until the clone has exec'd or exited.
    let plan = unsafe { &*(arg as *const ChildPlan) };
    // SAFETY: only async-signal-safe calls on the plan's valid descriptors and strings.
    unsafe {
        let fail = |report: RawFd| -> ! {
            let errno = *libc::__errno_location();
            libc::write(report, (&errno as *const libc::c_int).cast(), 4);
            libc::_exit(127)
        };
        // Handlers are knav's code: none may run here, nor in ctags (exec resets them anyway).
        for sig in 1..=libc::SIGRTMAX() {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && (old.sa_sigaction != libc::SIG_IGN || sig == libc::SIGPIPE)
                && old.sa_sigaction != libc::SIG_DFL
            {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            fail(plan.report);
        }
        // knav died before the prctl: nobody would kill this child.
        if libc::getppid() != plan.parent {
            libc::_exit(127);
        }
        for (target, &fd) in plan.stdio.iter().enumerate() {
            if libc::dup2(fd, target as libc::c_int) < 0 {
                fail(plan.report);
            }
        }
        if libc::chdir(plan.cwd.as_ptr()) != 0 {
            fail(plan.report);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &plan.mask, std::ptr::null_mut());
        libc::execve(
            plan.program.as_ptr(),
            plan.argv.as_ptr(),
            plan.envp.as_ptr(),
        );
        fail(plan.report)
    }
}

/// The glibc tunable that lets a thread keep up to 4,096 freed blocks of each small size
/// for reuse (glibc's default is 7). ctags makes and frees a token or a string at nearly
/// every word; with the default, most frees went on to glibc's bins and their consolidation
/// (`_int_malloc`, `_int_free`, `malloc_consolidate`). With this setting it runs fewer
/// instructions and a few percent less CPU, for a few MB more of peak RSS
/// (BENCHMARKS.md, "Design measurements").
const CTAGS_TUNABLE: &str = "glibc.malloc.tcache_count=4096";

/// The environment ctags starts with: knav's own, with [`CTAGS_TUNABLE`] added to
/// `GLIBC_TUNABLES` unless that already sets `tcache_count`. (A ctags not linked with glibc
/// ignores it.)
struct ChildEnv(Vec<CString>);

impl ChildEnv {
    fn new() -> ChildEnv {
        let mut tuned = false;
        let mut vars: Vec<CString> = std::env::vars_os()
            .filter_map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                if k == "GLIBC_TUNABLES" {
                    tuned = true;
                    kv.extend(tunables(Some(v.as_bytes())));
                } else {
                    kv.extend_from_slice(v.as_bytes());
                }
                // A variable with a NUL byte cannot be passed on: left out.
                CString::new(kv).ok()
            })
            .collect();
        if !tuned {
            let mut kv = b"GLIBC_TUNABLES=".to_vec();
            kv.extend(tunables(None));
            vars.extend(CString::new(kv).ok());
        }
        ChildEnv(vars)
    }

    /// The pointers `execve` takes, valid while `self` lives.
    fn pointers(&self) -> Vec<*const libc::c_char> {
        let mut p: Vec<*const libc::c_char> = self.0.iter().map(|v| v.as_ptr()).collect();
        p.push(std::ptr::null());
        p
    }
}

/// The value of `GLIBC_TUNABLES` for ctags, from knav's own (`None`: unset).
fn tunables(own: Option<&[u8]>) -> Vec<u8> {
    let mut v = own.unwrap_or_default().to_vec();
    if !v
        .windows(b"tcache_count".len())
        .any(|w| w == b"tcache_count")
    {
        if !v.is_empty() {
            v.push(b':');
        }
        v.extend_from_slice(CTAGS_TUNABLE.as_bytes());
    }
    v
}

/// Bytes of the clone's stack: it only makes system calls.
const CHILD_STACK: usize = 64 << 10;

/// Starts `program` with `args` in directory `cwd`, its stdin and stdout piped to the returned
/// files and its stderr to /dev/null; it is killed (SIGKILL) when the thread that started it
/// exits, so a killed knav leaves no ctags behind.
pub(crate) fn spawn(
    program: &Path,
    args: &[&OsStr],
    cwd: &Path,
) -> io::Result<(Child, File, File)> {
    let program_c = c_string(resolve(program)?.as_os_str())?;
    let cwd_c = c_string(cwd.as_os_str())?;
    let args_c = std::iter::once(program.as_os_str())
        .chain(args.iter().copied())
        .map(c_string)
        .collect::<io::Result<Vec<_>>>()?;
    let (in_r, in_w) = pipe()?;
    let (out_r, out_w) = pipe()?;
    let (report_r, report_w) = pipe()?;
    let null = c"/dev/null";
    // SAFETY: open with a valid C string.
    let null = above_stdio(Fd(cvt(unsafe {
        libc::open(null.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC)
    })?))?;
    let mut argv: Vec<*const libc::c_char> = args_c.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let env = ChildEnv::new();
    // SAFETY: sigset_t is plain data; sigfillset, sigemptyset and pthread_sigmask get valid
    // pointers. Nothing between the block and the restore below can return early.
    let (all, empty, mut mask) = unsafe {
        let (mut all, mut empty): (libc::sigset_t, libc::sigset_t) =
            (std::mem::zeroed(), std::mem::zeroed());
        libc::sigfillset(&mut all);
        libc::sigemptyset(&mut empty);
        (all, empty, std::mem::zeroed::<libc::sigset_t>())
    };
    // SAFETY: see above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut mask) };
    let plan = ChildPlan {
        program: program_c,
        argv,
        envp: env.pointers(),
        cwd: cwd_c,
        stdio: [in_r.0, out_w.0, null.0],
        report: report_w.0,
        // SAFETY: getpid has no preconditions.
        parent: unsafe { libc::getpid() },
        // ctags starts with no signal blocked, as std's Command makes it.
        mask: empty,
    };
    let mut stack = vec![0u8; CHILD_STACK];
    // SAFETY: the stack is writable and outlives the clone's run (CLONE_VFORK suspends this
    // thread until the child execs or exits); child_main touches only the plan.
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(CHILD_STACK) as usize & !15;
        libc::clone(
            child_main,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &plan as *const ChildPlan as *mut libc::c_void,
        )
    };
    let cloned = io::Error::last_os_error();
    // SAFETY: restores this thread's mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut()) };
    drop(stack);
    if pid < 0 {
        // A clone refused (a seccomp filter that allows only fork-like clones, say): std's way,
        // which forks in a static knav but works wherever a process can be started.
        drop((in_r, in_w, out_r, out_w, report_r, report_w, null));
        return spawn_std(program, args, cwd)
            .map_err(|e| io::Error::new(e.kind(), format!("clone refused ({cloned}), then: {e}")));
    }
    let mut child = Child { pid, reaped: false };
    drop((in_r, out_w, report_w, null));
    // The report pipe closes at exec (close-on-exec) or carries the errno of what failed.
    let mut errno = [0u8; 4];
    let mut report = report_r.into_file();
    match report.read_exact(&mut errno) {
        Ok(()) => {
            child.wait();
            return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
        }
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {}
        Err(e) => return Err(e),
    }
    Ok((child, in_w.into_file(), out_r.into_file()))
}

/// [`spawn`] through std's `Command`, for where the clone is refused: the same pipes,
/// directory, environment and PDEATHSIG.
fn spawn_std(program: &Path, args: &[&OsStr], cwd: &Path) -> io::Result<(Child, File, File)> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let own = std::env::var_os("GLIBC_TUNABLES");
    let tuned = tunables(own.as_deref().map(OsStr::as_bytes));
    let mut cmd = Command::new(resolve(program)?);
    cmd.args(args)
        .current_dir(cwd)
        .env("GLIBC_TUNABLES", OsStr::from_bytes(&tuned))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut started = cmd.spawn()?;
    let (Some(stdin), Some(stdout)) = (started.stdin.take(), started.stdout.take()) else {
        return Err(io::Error::other("ctags started without its pipes"));
    };
    // The std handle is dropped without waiting: `Child` reaps the process by its pid.
    let pid = started.id() as libc::pid_t;
    Ok((
        Child { pid, reaped: false },
        File::from(std::os::fd::OwnedFd::from(stdin)),
        File::from(std::os::fd::OwnedFd::from(stdout)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_std_fallback_starts_a_program_with_the_same_pipes_and_environment() {
        use std::io::Write;
        let dir = std::env::temp_dir();
        let script = OsStr::new("cat; printf '%s' \"$GLIBC_TUNABLES\"; pwd");
        let (mut child, mut stdin, mut stdout) =
            spawn_std(Path::new("/bin/sh"), &[OsStr::new("-c"), script], &dir).unwrap();
        stdin.write_all(b"in\n").unwrap();
        drop(stdin);
        let mut out = String::new();
        stdout.read_to_string(&mut out).unwrap();
        assert!(child.wait(), "{out}");
        let cwd = std::fs::canonicalize(&dir).unwrap();
        assert_eq!(
            out,
            format!(
                "in\n{}{}\n",
                String::from_utf8_lossy(&tunables(
                    std::env::var_os("GLIBC_TUNABLES")
                        .as_deref()
                        .map(OsStr::as_bytes)
                )),
                cwd.display()
            )
        );
    }
    use std::io::Write;

    #[test]
    fn a_spawned_program_reads_its_stdin_in_its_directory() {
        let dir = std::env::temp_dir();
        let (mut child, mut stdin, mut stdout) = spawn(
            Path::new("sh"),
            &[OsStr::new("-c"), OsStr::new("pwd; cat")],
            &dir,
        )
        .unwrap();
        stdin.write_all(b"hello\n").unwrap();
        drop(stdin);
        let mut out = String::new();
        stdout.read_to_string(&mut out).unwrap();
        child.wait();
        let want = format!("{}\nhello\n", dir.canonicalize().unwrap().display());
        assert_eq!(out, want);
    }

    #[test]
    fn ctags_gets_the_environment_with_a_larger_malloc_cache() {
        let (mut child, stdin, mut stdout) = spawn(
            Path::new("sh"),
            &[
                OsStr::new("-c"),
                OsStr::new("echo \"$GLIBC_TUNABLES\"; echo \"$PATH\""),
            ],
            Path::new("/"),
        )
        .unwrap();
        drop(stdin);
        let mut out = Vec::new();
        stdout.read_to_end(&mut out).unwrap();
        child.wait();
        let own = std::env::var_os("GLIBC_TUNABLES");
        let mut want = tunables(own.as_deref().map(OsStr::as_bytes));
        want.push(b'\n');
        want.extend_from_slice(std::env::var_os("PATH").unwrap_or_default().as_bytes());
        want.push(b'\n');
        assert_eq!(out, want);
    }

    #[test]
    fn the_tunable_is_added_to_the_users_unless_it_sets_the_same() {
        assert_eq!(tunables(None), b"glibc.malloc.tcache_count=4096");
        assert_eq!(tunables(Some(b"")), b"glibc.malloc.tcache_count=4096");
        assert_eq!(
            tunables(Some(b"glibc.malloc.check=3")),
            b"glibc.malloc.check=3:glibc.malloc.tcache_count=4096"
        );
        assert_eq!(
            tunables(Some(b"glibc.malloc.tcache_count=0")),
            b"glibc.malloc.tcache_count=0"
        );
    }

    #[test]
    fn a_missing_program_is_an_error_not_a_child() {
        let err = spawn(Path::new("/nonexistent/ctags"), &[], Path::new("/"))
            .err()
            .expect("no such program");
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
        let err = spawn(Path::new("no-such-program-knav"), &[], Path::new("/"))
            .err()
            .expect("not on PATH");
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
        let err = spawn(Path::new("sh"), &[], Path::new("/nonexistent-dir"))
            .err()
            .expect("no such directory");
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
    }
}
