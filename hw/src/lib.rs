//! knav-hw: the kernel's hardware description, one file's bytes at a time. Device-tree sources
//! (`.dts`, `.dtsi`, `.dtso`), binding schemas (`Documentation/devicetree/bindings/**/*.yaml`)
//! and the match tables of C drivers (`of_device_id`, `pci_device_id`, …) say which devices a
//! board has, which compatibles are documented and which devices a driver handles. Like
//! `knav-c`, this crate opens no file and knows nothing of indexes or queries: `knav-index`
//! reads the files and joins what this crate finds.
//!
//! - [`strings`]: the string literals of a C or device-tree value (`"a", "b"`), unescaped.
//! - [`binding`]: a binding schema's compatibles, properties, patterns and `$ref`s.
//! - [`dts`]: a device-tree source's includes, nodes, labels, compatibles and `&label` uses.

pub mod binding;
pub mod dts;
pub mod strings;
