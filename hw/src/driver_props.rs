//! Properties a C file reads by literal name: `of_property_read_u32(np, "clock-frequency", &f)`,
//! `device_property_present(dev, "wakeup-source")`, `of_parse_phandle(np, "syscon", 0)`, … Every
//! family the kernel's property API has takes the property's name as its second argument
//! (`include/linux/of.h`, `property.h`, `of_gpio.h`); a name given by a macro is expanded.

use serde::{Deserialize, Serialize};

use crate::cmacro::{arguments, Scope};
use crate::cmacro_eval::{value, Value};
use crate::cmacro_lex::{Kind, Tok};
use crate::fxhash::FxHashMap;
use crate::landmarks::Landmarks;

/// Function-name prefixes of the families that read a property.
pub(crate) const PREFIXES: [&str; 5] = [
    "of_property_",
    "device_property_",
    "fwnode_property_",
    "of_parse_phandle",
    "of_get_named_gpio",
];

/// Functions of their own that read a property.
pub(crate) const FUNCTIONS: [&str; 3] = [
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

/// The properties read by name among `toks`. An invocation of one of the file's own macros
/// whose body reads a property named by its parameters (`#define rd(np, name, v)
/// of_property_read_u32(np, "vendor," name, v)`) is read in its substituted body, at the
/// invocation's line.
pub fn properties(toks: &[Tok<'_>], scope: Scope<'_>) -> Vec<PropertyRead> {
    properties_in(toks, &Landmarks::of(toks), scope, &|_| true)
}

/// [`properties`] at the calls [`Landmarks`] found, looking into the file's own macros only
/// where `may_wrap` says a macro of that name may wrap a call.
pub(crate) fn properties_in(
    toks: &[Tok<'_>],
    marks: &Landmarks,
    scope: Scope<'_>,
    may_wrap: &dyn Fn(&str) -> bool,
) -> Vec<PropertyRead> {
    let mut out = Vec::new();
    let mut wrappers: FxHashMap<&str, bool> = FxHashMap::default();
    for &k in &marks.calls {
        let t = &toks[k];
        if reads_property(&t.text) {
            out.extend(read_at(toks, k, scope));
            continue;
        }
        if !may_wrap(&t.text) {
            continue;
        }
        // Once per name, as `driver_compat::compatibles` does.
        let wraps = *wrappers.entry(t.text.as_ref()).or_insert_with(|| {
            scope.own(&t.text).is_some_and(|m| {
                m.body.iter().enumerate().any(|(j, b)| {
                    b.kind == Kind::Ident
                        && reads_property(&b.text)
                        && m.body.get(j + 1).is_some_and(|n| n.is("("))
                        && read_at(&m.body, j, scope).is_none()
                })
            })
        });
        if wraps {
            let body = scope.substituted(&toks[k..]).unwrap_or_default();
            out.extend((0..body.len()).filter_map(|j| {
                let b = &body[j];
                (b.kind == Kind::Ident && reads_property(&b.text))
                    .then(|| read_at(&body, j, scope))
                    .flatten()
            }));
        }
    }
    out
}

/// The property read by the call at `toks[k]`, when its name is a string.
fn read_at(toks: &[Tok<'_>], k: usize, scope: Scope<'_>) -> Option<PropertyRead> {
    let t = &toks[k];
    let (args, _) = arguments(toks, k + 1)?;
    match value(&scope.expand(args.get(1)?)) {
        Value::Str(s) => Some(PropertyRead {
            line: t.line,
            function: t.text.to_string(),
            property: s,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmacro::Macros;
    use crate::cmacro_lex::lex;

    #[test]
    fn reads_by_name() {
        // Modelled on drivers/i2c/busses/i2c-imx.c and drivers/mfd/syscon.c, Linux 6.12.
        let src = b"#define PROP \"fsl,dma\"\nstatic int p(struct device *dev)\n{\n\tret = of_property_read_u32(np, \"clock-frequency\", &rate);\n\tif (device_property_present(dev, PROP))\n\t\tx = of_parse_phandle(np, \"syscon\", 0);\n\tof_property_read_u32(np, name, &v);\n\tof_property_read_bool;\n\tRD(np, \"ti,x\");\n}\n#define RD(np, n) of_property_read_bool(np, n)\n";
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
                local: &[],
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
                (9, "of_property_read_bool".into(), "ti,x".into()),
            ]
        );
    }
}
