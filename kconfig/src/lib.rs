//! Which code a kernel `.config` builds: the `.config` itself ([`Config`]), the `#if`
//! expressions of C sources evaluated under it ([`eval`]) in three values: true, false, or
//! unknown where the answer depends on something a `.config` does not say (a macro that is not
//! a config symbol, `MODULE`); the Kbuild Makefiles that decide which files are compiled
//! ([`makefile`], [`kbuild`]); and the Kconfig entries that define the symbols ([`kconfig`]).
//! Files are read with [`read_file`]: regular files of bounded size only.
#![deny(missing_docs)]

mod config;
mod expr;
mod file;
pub mod kbuild;
pub mod kconfig;
pub mod makefile;

pub use config::{Config, Value};
pub use expr::{eval, Tri};
pub use file::{read_file, ReadError, MAX_CONFIG_BYTES};
