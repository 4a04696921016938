//! Which code a kernel `.config` builds: the `.config` itself ([`Config`]) and the `#if`
//! expressions of C sources evaluated under it ([`eval`]) in three values: true, false, or
//! unknown where the answer depends on something a `.config` does not say (a macro that is not
//! a config symbol, `MODULE`).
#![deny(missing_docs)]

mod config;
mod expr;

pub use config::{Config, Value};
pub use expr::{eval, Tri};
