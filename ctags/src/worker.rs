//! One long-lived `ctags --_interactive` process, asked for one file at a time with a timeout.

use std::ffi::OsString;
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::tag::Line;
use crate::{Ctags, Tag};

/// The definitions ctags found in one file.
#[derive(Debug, Default)]
pub struct FileTags {
    /// Every definition, in the order ctags reported them (pseudo-definitions included).
    pub tags: Vec<Tag>,
    /// What ctags said went wrong with the file (unreadable, unparsable output).
    pub errors: Vec<String>,
}

/// Why a worker could not produce tags for a file.
#[derive(Debug)]
pub enum WorkerError {
    /// ctags took longer than the timeout on this file; the process was killed.
    Timeout(Duration),
    /// ctags could not be started.
    Spawn(std::io::Error),
    /// ctags exited or closed its output while working on the file.
    Died(String),
    /// The file, whose name is not UTF-8 and which knav therefore reads for ctags, cannot be read.
    Read(std::io::Error),
}

impl fmt::Display for WorkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkerError::Timeout(t) => write!(f, "ctags timed out after {} s", t.as_secs()),
            WorkerError::Spawn(e) => write!(f, "cannot start ctags: {e}"),
            WorkerError::Died(why) => write!(f, "ctags died: {why}"),
            WorkerError::Read(e) => write!(f, "cannot read the file: {e}"),
        }
    }
}

impl std::error::Error for WorkerError {}

enum Msg {
    File(FileTags),
    Eof(String),
}

/// A running ctags (killed and reaped when dropped), its input and its parsed output.
struct Process {
    _child: crate::spawn::Child,
    stdin: std::fs::File,
    results: Receiver<Msg>,
}

/// Bytes of a text written to ctags on the asking thread: less than a pipe holds, so the write
/// cannot block.
const INLINE_TEXT: usize = 32 << 10;

/// The options every ctags run gets: JSON, unsorted, C, prototypes and extern variables, no
/// macros (knav's scanner finds those), line/end/kind/typeref/scope/signature, no pattern.
pub(crate) fn base_args() -> [&'static str; 8] {
    [
        // No option file of the user's or of the tree (./.ctags.d): knav's options only.
        "--options=NONE",
        "--_interactive",
        "--output-format=json",
        "--sort=no",
        "--language-force=C",
        "--kinds-C=+px-d",
        "--fields=+neKStZ",
        "--fields=-P",
    ]
}

/// A ctags process that answers one file at a time; restarted after a timeout or a crash.
pub struct Worker {
    program: PathBuf,
    args: Vec<OsString>,
    root: PathBuf,
    timeout: Duration,
    process: Option<Process>,
}

impl Worker {
    /// A worker running `ctags` in `root` with knav's fixed options plus `extra_args`
    /// (for example the kernel option set); paths given to [`Worker::tags`] are relative to `root`.
    pub fn new(ctags: &Ctags, root: &Path, extra_args: &[String], timeout: Duration) -> Worker {
        let mut args: Vec<OsString> = base_args().iter().map(OsString::from).collect();
        args.extend(extra_args.iter().map(OsString::from));
        Worker {
            program: ctags.program.clone(),
            args,
            root: root.to_path_buf(),
            timeout,
            process: None,
        }
    }

    fn spawn(&self) -> Result<Process, WorkerError> {
        let args: Vec<&std::ffi::OsStr> = self.args.iter().map(|a| a.as_os_str()).collect();
        let (child, stdin, stdout) =
            crate::spawn::spawn(&self.program, &args, &self.root).map_err(WorkerError::Spawn)?;
        let (tx, results) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::with_capacity(1 << 16, stdout);
            let mut buf = Vec::with_capacity(512);
            let mut file = FileTags::default();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Msg::Eof("ctags closed its output".into()));
                        return;
                    }
                    Ok(_) => {}
                }
                match Line::parse(&buf) {
                    Line::Tag(tag, _) => file.tags.push(tag),
                    Line::Error(e) => file.errors.push(e),
                    Line::Completed => {
                        if tx.send(Msg::File(std::mem::take(&mut file))).is_err() {
                            return;
                        }
                    }
                    Line::Other => {}
                }
            }
        });
        Ok(Process {
            _child: child,
            stdin,
            results,
        })
    }

    /// The definitions in `path` (relative to the worker's root).
    pub fn tags(&mut self, path: &Path) -> Result<FileTags, WorkerError> {
        // A JSON request names a file in UTF-8: another name's file is sent with the request,
        // under its name made UTF-8 (which only names anonymous types).
        match path.to_str() {
            Some(name) => {
                let request = serde_json::json!({"command": "generate-tags", "filename": name});
                self.ask(&request, &[])
            }
            None => {
                let text = std::fs::read(self.root.join(path)).map_err(WorkerError::Read)?;
                self.tags_of_text(path, &text)
            }
        }
    }

    /// The definitions in `text`, the bytes of the file `path` (which names anonymous types
    /// only: ctags reads nothing but `text`).
    pub fn tags_of_text(&mut self, path: &Path, text: &[u8]) -> Result<FileTags, WorkerError> {
        let name = request_name(path);
        let request =
            serde_json::json!({"command": "generate-tags", "filename": name, "size": text.len()});
        self.ask(&request, text)
    }

    /// Sends `request` (and `text` after it) and waits for its tags. ctags reads a request
    /// with a buffer of 1,024 bytes: a longer line would be cut in two, and the text after it
    /// read as requests of its own.
    fn ask(&mut self, request: &serde_json::Value, text: &[u8]) -> Result<FileTags, WorkerError> {
        let mut process = match self.process.take() {
            Some(p) => p,
            None => self.spawn()?,
        };
        let sent = writeln!(process.stdin, "{request}").and_then(|_| {
            if text.len() <= INLINE_TEXT {
                process.stdin.write_all(text)
            } else {
                // A ctags that stops reading would block this write past the timeout: a
                // larger text goes on another thread, which ends when ctags is killed.
                let mut pipe = process.stdin.try_clone()?;
                let text = text.to_vec();
                std::thread::spawn(move || {
                    let _ = pipe.write_all(&text);
                });
                Ok(())
            }
        });
        if let Err(e) = sent {
            return Err(WorkerError::Died(format!("cannot write to ctags: {e}")));
        }
        let deadline = Instant::now() + self.timeout;
        let wait = deadline.saturating_duration_since(Instant::now());
        match process.results.recv_timeout(wait) {
            Ok(Msg::File(tags)) => {
                self.process = Some(process);
                Ok(tags)
            }
            Ok(Msg::Eof(why)) => Err(WorkerError::Died(why)),
            Err(RecvTimeoutError::Timeout) => Err(WorkerError::Timeout(self.timeout)),
            Err(RecvTimeoutError::Disconnected) => {
                Err(WorkerError::Died("ctags output reader stopped".into()))
            }
        }
        // On every error path `process` is dropped here, which kills ctags; the next call
        // starts a fresh one.
    }
}

/// The name a request gives a file whose text it sends: it only names anonymous types, so it is
/// `path` made plain (ASCII letters, digits and `._/-`, anything else `_`) and cut to its last
/// 200 bytes, which keeps the request line well under ctags's 1,024-byte buffer.
fn request_name(path: &Path) -> String {
    let plain: String = path
        .to_string_lossy()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    plain[plain.len().saturating_sub(200)..].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_names_a_file_plainly_and_briefly() {
        // A request over ctags's 1,024-byte buffer was cut, and the text sent after it read
        // as requests: another file's tags were answered as this one's.
        let long = format!("{}/evil\"\n.c", "d".repeat(1_100));
        let name = request_name(Path::new(&long));
        assert_eq!(name.len(), 200);
        assert!(name.ends_with("/evil__.c"), "{name}");
        let request =
            serde_json::json!({"command": "generate-tags", "filename": name, "size": 1_000_000});
        assert!(request.to_string().len() < 1_024);
        assert_eq!(
            request_name(Path::new("fs/read_write.c")),
            "fs/read_write.c"
        );
    }
    use crate::Kind;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("knav-ctags-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn tags_of_two_files_from_one_process() {
        // Not skipped without ctags: a green run must mean the test ran.
        let ctags = Ctags::probe()
            .unwrap_or_else(|e| panic!("this test runs ctags, which it needs installed: {e}"));
        let dir = temp_dir("two");
        std::fs::write(
            dir.join("a.c"),
            "static int helper(int x)\n{\n\treturn x;\n}\n",
        )
        .unwrap();
        std::fs::write(dir.join("b.h"), "struct s {\n\tint m;\n};\n#define TWO 2\n").unwrap();
        let mut w = Worker::new(&ctags, &dir, &[], Duration::from_secs(30));
        let a = w.tags(Path::new("a.c")).unwrap();
        assert_eq!(a.tags.len(), 1);
        assert_eq!(a.tags[0].name, "helper");
        assert_eq!((a.tags[0].line, a.tags[0].end), (1, Some(4)));
        assert_eq!(a.tags[0].kind, Kind::Function);
        let b = w.tags(Path::new("b.h")).unwrap();
        let names: Vec<_> = b.tags.iter().map(|t| (t.name.as_str(), t.kind)).collect();
        // Macros are left to knav's scanner (`--kinds-C=-d`).
        assert_eq!(names, [("s", Kind::Struct), ("m", Kind::Member)]);
        assert_eq!(b.tags[1].scope.as_deref(), Some("s"));
        let missing = w.tags(Path::new("missing.c")).unwrap();
        assert!(missing.tags.is_empty());
        assert_eq!(missing.errors.len(), 1, "{:?}", missing.errors);
        // A name that is not UTF-8 cannot be put in a JSON request: its text is sent instead.
        use std::os::unix::ffi::OsStrExt;
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"caf\xff.c"));
        std::fs::write(dir.join(odd), "int g(void) { return 0; }\n").unwrap();
        let c = w.tags(odd).unwrap();
        let names: Vec<_> = c.tags.iter().map(|t| (t.name.as_str(), t.line)).collect();
        assert_eq!(names, [("g", 1)]);
        let b_again = w.tags(Path::new("b.h")).unwrap();
        assert_eq!(
            b_again.tags.len(),
            2,
            "the process still answers after a sent text"
        );
        let gone = w.tags(Path::new(std::ffi::OsStr::from_bytes(b"gone\xff.c")));
        assert!(matches!(gone, Err(WorkerError::Read(_))), "{gone:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_hanging_ctags_times_out_and_the_next_file_still_works() {
        let dir = temp_dir("hang");
        // A stand-in for ctags that hangs on one file, as ctags can on a pathological input.
        let script = dir.join("fake-ctags");
        std::fs::write(
            &script,
            "#!/bin/sh\nwhile read line; do\n  case \"$line\" in *hang*) exec sleep 100;; esac\n  \
             echo '{\"_type\": \"tag\", \"name\": \"x\", \"line\": 1, \"kind\": \"variable\"}'\n  \
             echo '{\"_type\": \"completed\"}'\ndone\n",
        )
        .unwrap();
        let made = std::process::Command::new("chmod")
            .arg("+x")
            .arg(&script)
            .status();
        assert!(matches!(made, Ok(s) if s.success()));
        let ctags = Ctags {
            program: script,
            version: "test".into(),
        };
        let mut w = Worker::new(&ctags, &dir, &[], Duration::from_millis(300));
        let started = Instant::now();
        let err = w.tags(Path::new("hang.c")).unwrap_err();
        assert!(matches!(err, WorkerError::Timeout(_)), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let a = w.tags(Path::new("a.c")).unwrap();
        assert_eq!(a.tags.len(), 1);
        assert_eq!(a.tags[0].name, "x");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
