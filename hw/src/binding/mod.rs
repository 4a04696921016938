//! A device-tree binding schema (`Documentation/devicetree/bindings/**/*.yaml`, json-schema
//! written in YAML), read from its bytes: its `$id` and `title`, the compatibles it documents,
//! the properties and property patterns it lists, the schemas it `$ref`s and whether it is
//! closed (`additionalProperties: false`, `unevaluatedProperties: false`). Every item carries
//! its 1-based line. The YAML is parsed with `saphyr`, whose marked nodes keep their lines;
//! aliases are expanded within its limit, and nesting is bounded here before parsing.

mod walk;

use saphyr::{LoadableYamlNode, MarkedYaml};
use serde::{Deserialize, Serialize};

/// Deeper nesting than this (indentation columns or open `[`/`{`) is refused before parsing.
const MAX_NESTING: usize = 512;

/// What one binding schema says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// `$id` (`http://devicetree.org/schemas/i2c/i2c-imx.yaml#`).
    pub id: Option<String>,
    pub title: Option<String>,
    /// The compatibles it documents, each once, at its first line, in order: the strings of
    /// `properties: compatible:`'s `const`, `enum` and `items` (every item of a fallback list),
    /// through `oneOf`, `anyOf`, `allOf` and `contains`.
    pub compatibles: Vec<Named>,
    /// `select: false`: a common schema, applied only where another `$ref`s it.
    pub select_false: bool,
    /// The properties it lists, each once at its first line: top-level `properties`, and those
    /// of the `allOf` / `anyOf` / `oneOf` entries and their `then` and `else` branches.
    pub properties: Vec<Property>,
    /// The keys (regular expressions) of `patternProperties`, at the same places.
    pub pattern_properties: Vec<Named>,
    /// The `$ref`s of the schema itself: top-level and in its `allOf` entries (and their
    /// `then` / `else`).
    pub refs: Vec<Named>,
    /// `additionalProperties: false`.
    pub additional_properties_false: bool,
    /// `unevaluatedProperties: false`.
    pub unevaluated_properties_false: bool,
}

/// A string and its line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Named {
    pub name: String,
    pub line: u32,
}

/// A listed property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Property {
    pub name: String,
    /// The line of its key.
    pub line: u32,
    /// The `$ref`s of its schema (directly, or in its `allOf` / `oneOf` / `anyOf`).
    pub refs: Vec<String>,
}

/// Why a file could not be read as a schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Error {
    pub line: u32,
    pub message: String,
}

/// Reads one binding schema. A file that is not UTF-8, not YAML, nested too deep or whose top
/// is not a mapping is an [`Error`] with its line.
pub fn read(bytes: &[u8]) -> Result<Binding, Error> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = line_of(&bytes[..e.valid_up_to()]);
        Error {
            line,
            message: format!("not UTF-8 ({e}); binding schemas are UTF-8 text"),
        }
    })?;
    check_nesting(text)?;
    let docs = MarkedYaml::load_from_str(text).map_err(|e| Error {
        line: u32::try_from(e.marker().line()).unwrap_or(u32::MAX),
        message: format!("not valid YAML: {}", e.info()),
    })?;
    let Some(top) = docs.first() else {
        return Err(Error {
            line: 1,
            message: "no YAML document in the file".to_string(),
        });
    };
    if !top.data.is_mapping() {
        return Err(Error {
            line: walk::line(top),
            message: "the schema is not a mapping".to_string(),
        });
    }
    Ok(walk::binding(top))
}

/// The 1-based line at the end of `bytes`.
fn line_of(bytes: &[u8]) -> u32 {
    let n = memchr::memchr_iter(b'\n', bytes).count() + 1;
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Refuses text nested deeper than [`MAX_NESTING`] (by indentation or by open flow brackets),
/// so that neither the parser nor the walk can exhaust the stack on a hostile file.
fn check_nesting(text: &str) -> Result<(), Error> {
    let mut flow = 0usize;
    for (i, l) in text.lines().enumerate() {
        let indent = l.len() - l.trim_start_matches([' ', '-', '?', ':']).len();
        for b in l.bytes() {
            match b {
                b'[' | b'{' => flow += 1,
                b']' | b'}' => flow = flow.saturating_sub(1),
                _ => {}
            }
        }
        if indent > MAX_NESTING || flow > MAX_NESTING {
            return Err(Error {
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
                message: format!("nested deeper than {MAX_NESTING} levels"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Modelled on Documentation/devicetree/bindings/i2c/i2c-imx.yaml (its enums shortened).
    const I2C_IMX: &str = "# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
%YAML 1.2
---
$id: http://devicetree.org/schemas/i2c/i2c-imx.yaml#
$schema: http://devicetree.org/meta-schemas/core.yaml#

title: Freescale Inter IC (I2C) and High Speed Inter IC (HS-I2C) for i.MX

allOf:
  - $ref: /schemas/i2c/i2c-controller.yaml#

properties:
  compatible:
    oneOf:
      - const: fsl,imx1-i2c
      - const: fsl,imx21-i2c
      - items:
          - enum:
              - fsl,ls1012a-i2c
              - fsl,ls1021a-i2c
          - const: fsl,vf610-i2c
      - items:
          - const: fsl,imx35-i2c
          - const: fsl,imx1-i2c

  reg:
    maxItems: 1

  dma-names:
    items:
      - const: rx
      - const: tx

  sda-gpios:
    maxItems: 1

unevaluatedProperties: false
";

    fn names(v: &[Named]) -> Vec<(&str, u32)> {
        v.iter().map(|n| (n.name.as_str(), n.line)).collect()
    }

    #[test]
    fn an_i2c_controller_schema() {
        let b = read(I2C_IMX.as_bytes()).unwrap();
        assert_eq!(
            b.id.as_deref(),
            Some("http://devicetree.org/schemas/i2c/i2c-imx.yaml#")
        );
        assert_eq!(
            b.title.as_deref(),
            Some("Freescale Inter IC (I2C) and High Speed Inter IC (HS-I2C) for i.MX")
        );
        assert_eq!(
            names(&b.compatibles),
            [
                ("fsl,imx1-i2c", 15),
                ("fsl,imx21-i2c", 16),
                ("fsl,ls1012a-i2c", 19),
                ("fsl,ls1021a-i2c", 20),
                ("fsl,vf610-i2c", 21),
                ("fsl,imx35-i2c", 23),
            ]
        );
        let props: Vec<_> = b
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.line))
            .collect();
        assert_eq!(
            props,
            [
                ("compatible", 13),
                ("reg", 26),
                ("dma-names", 29),
                ("sda-gpios", 34)
            ]
        );
        assert_eq!(names(&b.refs), [("/schemas/i2c/i2c-controller.yaml#", 10)]);
        assert!(b.unevaluated_properties_false);
        assert!(!b.additional_properties_false);
        assert!(!b.select_false);
    }

    /// Modelled on Documentation/devicetree/bindings/serial/8250.yaml: `if`/`then` branches in
    /// `allOf`, a fallback list of enums.
    #[test]
    fn a_schema_with_branches_and_fallback_lists() {
        let b = read(
            b"allOf:
  - $ref: serial.yaml#
  - if:
      properties:
        compatible:
          const: mrvl,mmp-uart
    then:
      properties:
        reg-shift:
          const: 2
    else:
      patternProperties:
        '^pinctrl-[0-9]+$': true
properties:
  compatible:
    oneOf:
      - items:
          - enum:
              - ns16750
          - enum:
              - ns16550 # Deprecated
              - ns16550a
      - contains:
          const: mrvl,mmp-uart
  clock-frequency: true
  resets:
    allOf:
      - $ref: /schemas/types.yaml#/definitions/phandle-array
patternProperties:
  '^gpio@[0-9a-f]+$':
    $ref: /schemas/gpio/gpio.yaml#
additionalProperties: false
",
        )
        .unwrap();
        assert_eq!(
            names(&b.compatibles),
            [
                ("ns16750", 19),
                ("ns16550", 21),
                ("ns16550a", 22),
                ("mrvl,mmp-uart", 24)
            ]
        );
        let props: Vec<_> = b
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.line, p.refs.clone()))
            .collect();
        assert_eq!(
            props,
            [
                ("compatible", 15, vec![]),
                ("clock-frequency", 25, vec![]),
                (
                    "resets",
                    26,
                    vec!["/schemas/types.yaml#/definitions/phandle-array".to_string()]
                ),
                ("reg-shift", 9, vec![]),
            ]
        );
        assert_eq!(
            names(&b.pattern_properties),
            [("^gpio@[0-9a-f]+$", 30), ("^pinctrl-[0-9]+$", 13)]
        );
        assert_eq!(names(&b.refs), [("serial.yaml#", 2)]);
        assert!(b.additional_properties_false);
    }

    /// Modelled on Documentation/devicetree/bindings/spi/arm,pl022-peripheral-props.yaml.
    #[test]
    fn a_common_schema_says_select_false() {
        let b = read(b"$id: x\nselect: false\nproperties:\n  pl022,interface:\n    enum: [0, 1]\nadditionalProperties: true\n").unwrap();
        assert!(b.select_false);
        assert!(!b.additional_properties_false);
        assert!(b.compatibles.is_empty());
        assert_eq!(b.properties[0].name, "pl022,interface");
    }

    #[test]
    fn what_is_not_a_schema_is_an_error_with_its_line() {
        let e = read(b"a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(e.message.starts_with("not valid YAML"), "{e:?}");
        assert!(e.line >= 2, "{e:?}");
        let e = read(b"a: 1\n\xff\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(
            read(b"- a\n").unwrap_err().message,
            "the schema is not a mapping"
        );
        assert_eq!(read(b"").unwrap_err().line, 1);
        let deep = "[".repeat(2_000);
        assert_eq!(read(deep.as_bytes()).unwrap_err().line, 1);
        // Nesting past the limit is refused, and up to it does not exhaust a test thread's stack.
        for nest in ["- ", "? ", ": ", "? - ", "{a: ", "[", "!t [", "? !t &a - "] {
            assert!(read(nest.repeat(100_000).as_bytes()).is_err());
            let _ = read(nest.repeat(MAX_NESTING / nest.len()).as_bytes());
        }
        let e = read(b"a: 1\na: 2\n").unwrap_err();
        assert_eq!(e.line, 2, "{e:?}");
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_read_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let _ = read(&bytes);
        }

        #[test]
        fn any_prefix_of_a_real_schema_reads_without_panic(cut in 0..I2C_IMX.len()) {
            let _ = read(&I2C_IMX.as_bytes()[..cut]);
        }
    }
}
