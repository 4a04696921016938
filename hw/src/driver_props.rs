//! Properties a C file reads by literal name: `of_property_read_u32(np, "clock-frequency", &f)`,
//! `device_property_present(dev, "wakeup-source")`, `of_parse_phandle(np, "syscon", 0)`, … Every
//! family the kernel's property API has takes the property's name as its second argument
//! (`include/linux/of.h`, `property.h`, `of_gpio.h`); a name given by a macro is expanded.

use serde::{Deserialize, Serialize};

use crate::cmacro::{arguments, Scope};
use crate::cmacro_eval::{value, Value};
use crate::cmacro_lex::{Kind, Tok};

/// Function-name prefixes of the families that read a property.
const PREFIXES: [&str; 5] = [
    "of_property_",
    "device_property_",
    "fwnode_property_",
    "of_parse_phandle",
    "of_get_named_gpio",
];

/// Functions of their own that read a property.
const FUNCTIONS: [&str; 3] = [
    "of_get_property",
    "of_find_property",
    "of_count_phandle_with_args",
];

/// A property read by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PropertyRead {
    /// The line of the call.
    pub line: u32,
    /// The function called.
    pub function: String,
    /// The property's name.
    pub property: String,
}

/// True when `name` is a function that reads the property named by its second argument.
pub fn reads_property(name: &str) -> bool {
    FUNCTIONS.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The properties read by name among `toks`.
pub fn properties(toks: &[Tok<'_>], scope: Scope<'_>) -> Vec<PropertyRead> {
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if t.kind != Kind::Ident || !reads_property(&t.text) {
            continue;
        }
        let Some((args, _)) = arguments(toks, k + 1) else {
            continue;
        };
        if let Some(Value::Str(s)) = args.get(1).map(|a| value(&scope.expand(a))) {
            out.push(PropertyRead {
                line: t.line,
                function: t.text.to_string(),
                property: s,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmacro::Macros;
    use crate::cmacro_lex::lex;

    #[test]
    fn reads_by_name() {
        // Modelled on drivers/i2c/busses/i2c-imx.c and drivers/mfd/syscon.c, Linux 6.12.
        let src = b"#define PROP \"fsl,dma\"\nstatic int p(struct device *dev)\n{\n\tret = of_property_read_u32(np, \"clock-frequency\", &rate);\n\tif (device_property_present(dev, PROP))\n\t\tx = of_parse_phandle(np, \"syscon\", 0);\n\tof_property_read_u32(np, name, &v);\n\tof_property_read_bool;\n}\n";
        let l = lex(std::str::from_utf8(src).unwrap());
        let mut file = Macros::new();
        for d in &l.defines {
            file.add(d.clone());
        }
        let shared = Macros::new();
        let got: Vec<_> = properties(
            &l.toks,
            Scope {
                file: &file,
                shared: &shared,
            },
        )
        .into_iter()
        .map(|p| (p.line, p.function, p.property))
        .collect();
        assert_eq!(
            got,
            [
                (
                    4,
                    "of_property_read_u32".to_string(),
                    "clock-frequency".to_string()
                ),
                (5, "device_property_present".into(), "fsl,dma".into()),
                (6, "of_parse_phandle".into(), "syscon".into()),
            ]
        );
    }
}
