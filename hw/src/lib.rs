//! knav-hw: the kernel's hardware description, one file's bytes at a time. Device-tree sources
//! (`.dts`, `.dtsi`, `.dtso`), binding schemas (`Documentation/devicetree/bindings/**/*.yaml`)
//! and the match tables of C drivers (`of_device_id`, `pci_device_id`, …) say which devices a
//! board has, which compatibles are documented and which devices a driver handles. Like
//! `knav-c`, this crate opens no file and knows nothing of indexes or queries: `knav-index`
//! reads the files and joins what this crate finds.
//!
//! - [`strings`]: the string literals of a C or device-tree value (`"a", "b"`), unescaped.
//! - `fxhash` (private): the fast hasher of the maps keyed by names.
//! - [`binding`]: a binding schema's compatibles, properties, patterns and `$ref`s.
//! - [`dts`]: a device-tree source's includes, nodes, labels, compatibles and `&label` uses.
//! - [`cmacro_lex`]: the tokens of one C file with their lines, and its `#define`s.
//! - [`cmacro`]: macros learned from `#define`s and expanded (`#`, `##`, variadics), bounded.
//! - [`cmacro_eval`]: an initializer's value: a string, an integer constant or its text.
//! - [`idtable_layout`]: the field order of each struct a header declares (positional entries).
//! - [`idtable`]: the `*_device_id` match tables of one C file, their entries and
//!   `MODULE_DEVICE_TABLE`.
//! - `landmarks` (private): where the readers look in a file's tokens, found in one pass.
//! - [`driver`]: the driver structures that name a table, with probe, remove and name.
//! - [`driver_compat`]: compatibles outside tables (the `OF_DECLARE` family, matches in code).
//! - [`driver_props`]: properties a driver reads by literal name.
//! - `fxhash` (private): the fast hasher of the maps keyed by names.
//! - `driver_needles` (private): the texts a file must hold to say anything.
//! - [`driver_file`]: all of the above for one C file, from a context built from headers;
//!   its `local` module: a local header's `#define`s, read once for every file including it.

pub mod binding;
pub mod cmacro;
pub mod cmacro_eval;
pub mod cmacro_lex;
pub mod driver;
pub mod driver_compat;
pub mod driver_file;
mod driver_needles;
pub mod driver_props;
pub mod dts;
mod fxhash;
pub mod idtable;
pub mod idtable_layout;
mod landmarks;
pub mod strings;
