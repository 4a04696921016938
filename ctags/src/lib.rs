//! Runs universal-ctags and turns its output into definitions.
//!
//! knav takes definitions (name, line, end line, kind, typeref, scope, signature) from
//! universal-ctags, an external program. This crate treats that program as untrusted:
//!
//! * [`Ctags::probe`] checks before any work that `ctags` exists, is Universal Ctags and has the
//!   `json` and `interactive` features, and otherwise fails with an error naming the install
//!   command.
//! * [`Worker`] keeps one `ctags --_interactive` process alive and asks it for one file at a time,
//!   so a pool of workers splits the work dynamically by file (and therefore by bytes: big files
//!   simply keep a worker busy longer) and streams tags as they are produced. A file that takes
//!   longer than the timeout kills the process; the worker reports that file as timed out and
//!   starts a fresh process for the next one.
//! * [`kernel`] holds the kernel's option set: the annotation macros ctags must ignore to parse
//!   kernel C, taken from the identifiers the kernel's own `scripts/tags.sh` passes with `-I`.
//!
//! Pseudo-definitions that ctags makes of macro invocations (`SYSCALL_DEFINE3(read, …)` is
//! reported as a function named `SYSCALL_DEFINE3`) are dropped by [`Tag::is_macro_pseudo_definition`];
//! the names such macros create are resolved elsewhere.
#![deny(missing_docs)]

mod batch;
pub mod kernel;
pub mod macros;
mod probe;
mod spawn;
mod tag;
mod worker;

pub use batch::tags_of_chunk;
pub use probe::{Ctags, ProbeError};
pub use tag::{Kind, Tag};
pub use worker::{FileTags, Worker, WorkerError};
