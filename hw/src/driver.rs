//! The driver structures of one C file that name a match table: `struct platform_driver
//! foo_driver = { .probe = …, .driver = { .name = "foo", .of_match_table = of_match_ptr(foo_of_match) } };`
//! with their type, variable, line, probe and remove functions and name. A table is named by a
//! designator ending in `match_table` or `id_table` at any depth (`.of_match_table`,
//! `.acpi_match_table`, `.id_table`), through a wrapper macro or `&` (its last identifier).

use serde::{Deserialize, Serialize};

use crate::cmacro::Scope;
use crate::cmacro_eval::{value, Value};
use crate::cmacro_lex::{Kind, Tok};
use crate::landmarks::Landmarks;

/// How many tokens a designator's value may have (a table's name, a function's, a string).
const MAX_VALUE_TOKENS: usize = 256;

/// One driver structure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Driver {
    /// Its struct tag (`platform_driver`, `pci_driver`).
    pub kind: String,
    /// The variable's name.
    pub var: String,
    /// The line of the variable's name.
    pub line: u32,
    /// The tables it names: the designator (`of_match_table`) and the table's name.
    pub tables: Vec<(String, String)>,
    /// The `.probe` (or `.probe_new`) function.
    pub probe: Option<String>,
    /// The `.remove` (or `.remove_new`) function.
    pub remove: Option<String>,
    /// The `.name` string.
    pub name: Option<String>,
}

/// The driver structures among `toks`.
pub fn drivers(toks: &[Tok<'_>], scope: Scope<'_>) -> Vec<Driver> {
    drivers_in(toks, &Landmarks::of(toks), scope)
}

/// [`drivers`] at the initializers [`Landmarks`] found.
pub(crate) fn drivers_in(toks: &[Tok<'_>], marks: &Landmarks, scope: Scope<'_>) -> Vec<Driver> {
    let mut out = Vec::new();
    // Past the end of the last initializer read: one inside it is a member's.
    let mut from = 0;
    for &k in &marks.initializers {
        if k < from {
            continue;
        }
        let Some(end) = marks.closer(k + 1) else {
            continue;
        };
        if let Some(mut d) = declared(toks, k) {
            designators(&toks[k + 2..end], scope, &mut d);
            if !d.tables.is_empty() {
                out.push(d);
            }
        }
        from = end + 1;
    }
    out
}

/// The variable whose initializer's `=` is at `toks[eq]`, from the words before it:
/// `static struct platform_driver foo_driver __refdata`, `static gpr_driver_t apm_driver`
/// (a typedef). `None` for a member (`.driver = {`), an array or a lone name.
fn declared(toks: &[Tok<'_>], eq: usize) -> Option<Driver> {
    let mut start = eq;
    while start > 0 && toks[start - 1].kind == Kind::Ident && eq - start < 8 {
        start -= 1;
    }
    if start > 0 && (toks[start - 1].is(".") || toks[start - 1].is("->")) {
        return None;
    }
    let words: Vec<&Tok<'_>> = toks[start..eq]
        .iter()
        .filter(|t| {
            !t.text.starts_with("__")
                && !matches!(t.text.as_ref(), "static" | "const" | "volatile" | "extern")
        })
        .collect();
    let (kind, var) = match words.as_slice() {
        [s, tag, .., var] if matches!(s.text.as_ref(), "struct" | "union") && words.len() >= 3 => {
            (tag, var)
        }
        [ty, .., var] if words.len() >= 2 && !matches!(ty.text.as_ref(), "struct" | "union") => {
            (ty, var)
        }
        _ => return None,
    };
    Some(Driver {
        kind: kind.text.to_string(),
        var: var.text.to_string(),
        line: var.line,
        tables: Vec::new(),
        probe: None,
        remove: None,
        name: None,
    })
}

/// Reads each `.member = value` of an initializer body (at any depth) into `d`; the shallowest
/// probe, remove and name win (a name through a macro is expanded).
fn designators(body: &[Tok<'_>], scope: Scope<'_>, d: &mut Driver) {
    let mut depth = 0usize;
    let mut best = [usize::MAX; 3];
    for k in 0..body.len() {
        let t = &body[k];
        match t.text.as_ref() {
            "{" | "(" | "[" if t.kind == Kind::Punct => depth += 1,
            "}" | ")" | "]" if t.kind == Kind::Punct => depth = depth.saturating_sub(1),
            "." if t.kind == Kind::Punct => {
                let (Some(m), Some(eq)) = (body.get(k + 1), body.get(k + 2)) else {
                    continue;
                };
                if m.kind != Kind::Ident || !eq.is("=") {
                    continue;
                }
                let member = m.text.as_ref();
                let names_table = member.ends_with("match_table") || member.ends_with("id_table");
                let wanted = ["probe", "probe_new", "remove", "remove_new", "name"];
                if !names_table && !wanted.contains(&member) {
                    continue;
                }
                let val = value_toks(&body[k + 3..]);
                if names_table {
                    if let Some(name) = last_ident(val) {
                        d.tables.push((member.to_string(), name));
                    }
                    continue;
                }
                let slot = match member {
                    "probe" | "probe_new" => 0,
                    "remove" | "remove_new" => 1,
                    "name" => 2,
                    _ => continue,
                };
                if depth >= best[slot] {
                    continue;
                }
                let name = (slot == 2).then(|| value(&scope.expand(val)));
                let text = match (slot, name) {
                    (2, Some(Value::Str(s))) => Some(s),
                    (2, _) => None,
                    (_, _) => last_ident(val),
                };
                if let Some(text) = text {
                    best[slot] = depth;
                    match slot {
                        0 => d.probe = Some(text),
                        1 => d.remove = Some(text),
                        _ => d.name = Some(text),
                    }
                }
            }
            _ => {}
        }
    }
}

/// The tokens of a designator's value: up to its top-level `,` or the end of its braces, at
/// most [`MAX_VALUE_TOKENS`].
fn value_toks<'t, 'a>(toks: &'t [Tok<'a>]) -> &'t [Tok<'a>] {
    let toks = &toks[..toks.len().min(MAX_VALUE_TOKENS)];
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate() {
        if t.kind != Kind::Punct {
            continue;
        }
        match t.text.as_ref() {
            "{" | "(" | "[" => depth += 1,
            "}" | ")" | "]" if depth == 0 => return &toks[..k],
            "}" | ")" | "]" => depth -= 1,
            "," if depth == 0 => return &toks[..k],
            _ => {}
        }
    }
    toks
}

/// The last identifier of a value other than `NULL` (`of_match_ptr(foo_of_match)` →
/// `foo_of_match`, `IS_ENABLED(X) ? probe : NULL` → `probe`).
fn last_ident(val: &[Tok<'_>]) -> Option<String> {
    val.iter()
        .rev()
        .find(|t| t.kind == Kind::Ident && t.text != "NULL")
        .map(|t| t.text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmacro::Macros;
    use crate::cmacro_lex::lex;

    fn read(src: &[u8]) -> Vec<Driver> {
        let l = lex(std::str::from_utf8(src).unwrap());
        let mut file = Macros::new();
        for d in &l.defines {
            file.add(d.clone());
        }
        let shared = Macros::new();
        drivers(
            &l.toks,
            Scope {
                file: &file,
                local: &[],
                shared: &shared,
            },
        )
    }

    #[test]
    fn a_platform_driver_with_nested_driver() {
        // Modelled on drivers/i2c/busses/i2c-imx.c, Linux 6.12.
        let src = b"#define DRIVER_NAME \"imx-i2c\"\nstatic struct platform_driver i2c_imx_driver = {\n\t.probe = i2c_imx_probe,\n\t.remove_new = i2c_imx_remove,\n\t.driver = {\n\t\t.name = DRIVER_NAME,\n\t\t.pm = pm_ptr(&i2c_imx_pm_ops),\n\t\t.of_match_table = i2c_imx_dt_ids,\n\t\t.acpi_match_table = i2c_imx_acpi_ids,\n\t},\n\t.id_table = imx_i2c_devtype,\n};\nstatic struct file_operations f = { .open = o };\n";
        let d = read(src);
        assert_eq!(d.len(), 1);
        let d = &d[0];
        assert_eq!(
            (d.kind.as_str(), d.var.as_str(), d.line),
            ("platform_driver", "i2c_imx_driver", 2)
        );
        assert_eq!(d.probe.as_deref(), Some("i2c_imx_probe"));
        assert_eq!(d.remove.as_deref(), Some("i2c_imx_remove"));
        assert_eq!(d.name.as_deref(), Some("imx-i2c"), "through its macro");
        assert_eq!(
            d.tables,
            [
                ("of_match_table".to_string(), "i2c_imx_dt_ids".to_string()),
                ("acpi_match_table".into(), "i2c_imx_acpi_ids".into()),
                ("id_table".into(), "imx_i2c_devtype".into())
            ]
        );
    }

    #[test]
    fn a_typedef_driver_and_no_members() {
        // sound/soc/qcom/qdsp6/q6apm.c:866-875, Linux 6.12.
        let src = b"static gpr_driver_t apm_driver = {\n\t.probe = apm_probe,\n\t.driver = {\n\t\t.name = \"qcom-apm\",\n\t\t.of_match_table = of_match_ptr(apm_device_id),\n\t},\n};\nvoid f(void) { x.driver = (struct d){ .of_match_table = t }; p->drv = { .id_table = u }; }\n";
        let d = read(src);
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].kind.as_str(), d[0].var.as_str(), d[0].line),
            ("gpr_driver_t", "apm_driver", 1)
        );
        assert_eq!(d[0].tables[0].1, "apm_device_id");
    }

    #[test]
    fn wrappers_and_names() {
        // Modelled on drivers/net/ethernet/intel/e1000e/netdev.c's pci_driver.
        let src = b"static struct pci_driver e1000_driver __refdata = {\n\t.name     = e1000e_driver_name,\n\t.id_table = e1000_pci_tbl,\n\t.probe    = e1000_probe,\n};\nstruct spi_driver s = { .driver = { .name = \"ads7846\", .of_match_table = of_match_ptr(ads7846_dt_ids) }, .probe = ads7846_probe };\n";
        let d = read(src);
        assert_eq!(d.len(), 2);
        assert_eq!(
            d[0].tables,
            [("id_table".to_string(), "e1000_pci_tbl".to_string())]
        );
        assert_eq!(d[1].tables[0].1, "ads7846_dt_ids");
        assert_eq!(d[1].name.as_deref(), Some("ads7846"));
        assert_eq!(d[1].line, 6);
    }
}
