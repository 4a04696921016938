//! Compatibles a C file names outside its match tables: the `OF_DECLARE` family
//! (`IRQCHIP_DECLARE(name, "compat", fn)`, `CLK_OF_DECLARE`, `TIMER_OF_DECLARE`, …, learned from
//! the `#define`s that reach `_OF_DECLARE` and where they pass its `compat`), and compatibles
//! matched in code (`of_device_is_compatible(np, "x")`, `of_find_compatible_node`, …).

use serde::{Deserialize, Serialize};

use crate::cmacro::{arguments, Macros, Scope};
use crate::cmacro_eval::{value, Value};
use crate::cmacro_lex::{Kind, Tok};
use crate::fxhash::FxHashMap;
use crate::landmarks::Landmarks;

/// The functions (and function-like macros) that match a node against a compatible, and
/// the index of the compatible among their arguments (`include/linux/of.h`, `of_fdt.h`,
/// `property.h`, and the powerpc boot wrapper's `arch/powerpc/boot/ops.h`).
pub(crate) const MATCHERS: [(&str, usize); 10] = [
    ("dt_is_compatible", 1),
    ("of_device_is_compatible", 1),
    ("of_machine_is_compatible", 0),
    ("of_find_compatible_node", 2),
    ("for_each_compatible_node", 2),
    ("of_flat_dt_is_compatible", 1),
    ("of_get_compatible_child", 1),
    ("fwnode_device_is_compatible", 1),
    ("device_is_compatible", 1),
    ("of_fdt_is_compatible", 2),
];

/// How many rounds of learning follow macros that invoke declarers: chains are a few deep.
const MAX_ROUNDS: usize = 8;

/// A compatible named outside a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeCompatible {
    /// The line of the call or invocation.
    pub line: u32,
    /// The function or macro called (`of_device_is_compatible`, `IRQCHIP_DECLARE`).
    pub via: String,
    /// The compatible.
    pub compatible: String,
    /// True for a declaration of the `OF_DECLARE` family, false for a match in code.
    pub declared: bool,
}

/// The macros that declare an OF match outside tables, and the index of their compatible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declarers {
    compat_arg: FxHashMap<String, usize>,
}

impl Default for Declarers {
    /// `_OF_DECLARE(table, name, compat, fn, fn_type)` alone (`include/linux/of.h`).
    fn default() -> Self {
        Self {
            compat_arg: FxHashMap::from_iter([("_OF_DECLARE".to_string(), 2)]),
        }
    }
}

impl Declarers {
    /// `_OF_DECLARE` and every macro of `macros` that passes one of its parameters to the
    /// compatible of a declarer, as deep as the chains go; any of a macro's definitions counts
    /// (`RESERVEDMEM_OF_DECLARE` is defined for `CONFIG_OF_RESERVED_MEM` and as a stub).
    pub fn learn(macros: &Macros<'_>) -> Self {
        let mut d = Self::default();
        d.extend(macros);
        d
    }

    /// Adds the declarers `macros` defines on top of these.
    pub fn extend(&mut self, macros: &Macros<'_>) {
        self.extend_all(&[macros]);
    }

    /// Adds the declarers the tables define together on top of these (a chain may pass
    /// through macros of several tables: a file's own and its local headers').
    pub fn extend_all(&mut self, tables: &[&Macros<'_>]) {
        for _ in 0..MAX_ROUNDS {
            let mut found = Vec::new();
            for (name, m) in tables.iter().flat_map(|t| t.all()) {
                let Some(params) = &m.params else { continue };
                if self.compat_arg.contains_key(name) {
                    continue;
                }
                for (j, t) in m.body.iter().enumerate() {
                    let Some(&k) = self.arg(t) else { continue };
                    let Some((args, _)) = arguments(&m.body, j + 1) else {
                        continue;
                    };
                    if let Some([p]) = args.get(k).map(Vec::as_slice) {
                        if let Some(at) = params.iter().position(|q| *q == p.text) {
                            found.push((name.to_string(), at));
                            break;
                        }
                    }
                }
            }
            if found.is_empty() {
                return;
            }
            self.compat_arg.extend(found);
        }
    }

    /// The compatible's index when `t` names a declarer.
    fn arg(&self, t: &Tok<'_>) -> Option<&usize> {
        (t.kind == Kind::Ident)
            .then(|| self.compat_arg.get(t.text.as_ref()))
            .flatten()
    }

    /// True when one of `toks` names a declarer: a macro whose body holds none adds no
    /// declarer to these by itself.
    pub fn any_in(&self, toks: &[Tok<'_>]) -> bool {
        toks.iter().any(|t| self.arg(t).is_some())
    }

    /// The declarers' names, in no order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.compat_arg.keys().map(String::as_str)
    }

    /// True when `name` is a declarer.
    pub fn contains(&self, name: &str) -> bool {
        self.compat_arg.contains_key(name)
    }
}

/// The compatibles of declarers and matching calls among `toks`; a compatible given by a
/// macro is expanded, one that is not a string in the end is left out. An invocation of one of
/// the file's own macros whose body makes such a call with a compatible built from its
/// parameters (`CLK_OF_DECLARE(x##id, "samsung,exynos5433-cmu-bus"#id, f)`) is expanded and
/// its calls read, at the invocation's line.
pub fn compatibles(
    toks: &[Tok<'_>],
    scope: Scope<'_>,
    declarers: &Declarers,
) -> Vec<CodeCompatible> {
    compatibles_in(toks, &Landmarks::of(toks), scope, declarers, &|_| true)
}

/// [`compatibles`] at the calls [`Landmarks`] found, looking into the file's own macros only
/// where `may_wrap` says a macro of that name may wrap a call.
pub(crate) fn compatibles_in(
    toks: &[Tok<'_>],
    marks: &Landmarks,
    scope: Scope<'_>,
    declarers: &Declarers,
    may_wrap: &dyn Fn(&str) -> bool,
) -> Vec<CodeCompatible> {
    let mut out = Vec::new();
    let mut wrappers: FxHashMap<&str, bool> = FxHashMap::default();
    for &k in &marks.calls {
        let t = &toks[k];
        if let Some(c) = call(toks, k, scope, declarers) {
            out.push(c);
            continue;
        }
        if !may_wrap(&t.text) {
            continue;
        }
        // Once per name: a file calls the same functions many times, and a name is looked up
        // in each of its local headers.
        let wraps = *wrappers.entry(t.text.as_ref()).or_insert_with(|| {
            scope
                .own(&t.text)
                .is_some_and(|m| wraps_a_call(&m.body, scope, declarers))
        });
        if let (true, Some((_, end))) = (wraps, arguments(toks, k + 1)) {
            let expanded = scope.substituted(&toks[k..end]).unwrap_or_default();
            out.extend((0..expanded.len()).filter_map(|j| call(&expanded, j, scope, declarers)));
        }
    }
    out
}

/// The compatible of the declarer or matcher called at `toks[k]`, if it is one and its
/// compatible is a string.
fn call(
    toks: &[Tok<'_>],
    k: usize,
    scope: Scope<'_>,
    declarers: &Declarers,
) -> Option<CodeCompatible> {
    let t = &toks[k];
    let (at, declared) = match declarers.arg(t) {
        Some(&a) => (a, true),
        None => MATCHERS
            .iter()
            .find(|(f, _)| *f == t.text)
            .map(|&(_, a)| (a, false))?,
    };
    let (args, _) = arguments(toks, k + 1)?;
    match args.get(at).map(|a| value(&scope.expand(a)))? {
        Value::Str(s) => Some(CodeCompatible {
            line: t.line,
            via: t.text.to_string(),
            compatible: s,
            declared,
        }),
        _ => None,
    }
}

/// True when a macro body calls a declarer or matcher whose compatible is not a string by
/// itself (it depends on the macro's parameters).
fn wraps_a_call(body: &[Tok<'_>], scope: Scope<'_>, declarers: &Declarers) -> bool {
    body.iter().enumerate().any(|(j, t)| {
        (declarers.arg(t).is_some() || MATCHERS.iter().any(|(f, _)| *f == t.text))
            && body.get(j + 1).is_some_and(|n| n.is("("))
            && call(body, j, scope, declarers).is_none()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The macros `l`'s own `#define`s make.
    fn file_macros<'a>(l: &crate::cmacro_lex::Lexed<'a>) -> Macros<'a> {
        let mut file = Macros::new();
        for def in &l.defines {
            file.add(def.clone());
        }
        file
    }
    use crate::cmacro_lex::lex;

    // include/linux/of.h, irqchip.h and clk-provider.h, Linux 6.12 (abridged).
    const HEADERS: &str = "#define _OF_DECLARE(table, name, compat, fn, fn_type) static const struct of_device_id __of_table_##name = { .compatible = compat, .data = (fn == (fn_type)NULL) ? fn : fn }\n\
#define OF_DECLARE_2(table, name, compat, fn) \\\n\t\t_OF_DECLARE(table, name, compat, fn, of_init_fn_2)\n\
#define IRQCHIP_DECLARE(name, compat, fn)\t\\\n\tOF_DECLARE_2(irqchip, name, compat, typecheck_irq_init_cb(fn))\n\
#define CLK_OF_DECLARE_DRIVER(name, compat, fn) \\\n\tstatic void __init name##_of_clk_init_driver(struct device_node *np) { of_node_clear_flag(np, OF_POPULATED); fn(np); } \\\n\tOF_DECLARE_1(clk, name, compat, name##_of_clk_init_driver)\n\
#define OF_DECLARE_1(table, name, compat, fn) _OF_DECLARE(table, name, compat, fn, of_init_fn_1)\n\
#define CPU_METHOD_OF_DECLARE(name, _method, _ops) static const struct of_cpu_method __x_##name = { .method = _method, .ops = _ops }\n";

    #[test]
    fn declarers_are_learned_through_chains() {
        let mut m = Macros::new();
        m.learn(HEADERS.as_bytes());
        let d = Declarers::learn(&m);
        assert_eq!(d.compat_arg.get("IRQCHIP_DECLARE"), Some(&1));
        assert_eq!(d.compat_arg.get("CLK_OF_DECLARE_DRIVER"), Some(&1));
        assert_eq!(d.compat_arg.get("OF_DECLARE_2"), Some(&2));
        assert!(!d.contains("CPU_METHOD_OF_DECLARE"));
        // include/linux/of_reserved_mem.h: the stub of the #else branch is defined last.
        m.learn(b"#ifdef CONFIG_OF_RESERVED_MEM\n#define RESERVEDMEM_OF_DECLARE(name, compat, init) \\\n\t_OF_DECLARE(reservedmem, name, compat, init, reservedmem_of_init_fn)\n#else\n#define RESERVEDMEM_OF_DECLARE(name, compat, init) \\\n\t_OF_DECLARE_STUB(reservedmem, name, compat, init, reservedmem_of_init_fn)\n#endif\n");
        let d = Declarers::learn(&m);
        assert_eq!(d.compat_arg.get("RESERVEDMEM_OF_DECLARE"), Some(&1));
    }

    #[test]
    fn a_wrapper_that_builds_the_compatible() {
        // drivers/clk/samsung/clk-exynos5433.c, Linux 6.12 (lines 3237-3247, abridged).
        let mut m = Macros::new();
        m.learn(HEADERS.as_bytes());
        m.learn(b"#define CLK_OF_DECLARE(name, compat, fn) OF_DECLARE_1(clk, name, compat, fn)\n");
        let d = Declarers::learn(&m);
        let src = "#define exynos5433_cmu_bus_init(id)\t\\\nstatic void __init exynos5433_cmu_bus##id##_init(struct device_node *np)\\\n{ }\\\nCLK_OF_DECLARE(exynos5433_cmu_bus##id,\t\\\n\t\t\"samsung,exynos5433-cmu-bus\"#id,\t\\\n\t\texynos5433_cmu_bus##id##_init)\n\nexynos5433_cmu_bus_init(0);\nexynos5433_cmu_bus_init(1);\n";
        let l = lex(src);
        let file = file_macros(&l);
        let scope = Scope {
            file: &file,
            local: &[],
            shared: &m,
        };
        let found: Vec<_> = compatibles(&l.toks, scope, &d)
            .into_iter()
            .map(|c| (c.line, c.via, c.compatible))
            .collect();
        assert_eq!(
            found,
            [
                (
                    8,
                    "CLK_OF_DECLARE".to_string(),
                    "samsung,exynos5433-cmu-bus0".to_string()
                ),
                (
                    9,
                    "CLK_OF_DECLARE".into(),
                    "samsung,exynos5433-cmu-bus1".into()
                ),
            ]
        );
    }

    #[test]
    fn declarations_and_matches_in_code() {
        let mut m = Macros::new();
        m.learn(HEADERS.as_bytes());
        let d = Declarers::learn(&m);
        // Modelled on drivers/irqchip/irq-gic.c and arch/arm/mach-imx/mach-imx6q.c.
        let src = b"#define COMPAT \"arm,cortex-a9-gic\"\nIRQCHIP_DECLARE(gic_400, \"arm,gic-400\", gic_of_init);\nIRQCHIP_DECLARE(cortex_a9_gic, COMPAT, gic_of_init);\nstatic void f(void)\n{\n\tif (of_machine_is_compatible(\"fsl,imx6q\"))\n\t\tnp = of_find_compatible_node(NULL, NULL, \"fsl,imx6q-iomuxc-gpr\");\n\tof_device_is_compatible(np, name);\n}\n";
        let l = lex(std::str::from_utf8(src).unwrap());
        let file = file_macros(&l);
        let scope = Scope {
            file: &file,
            local: &[],
            shared: &m,
        };
        let found: Vec<_> = compatibles(&l.toks, scope, &d)
            .into_iter()
            .map(|c| (c.line, c.via, c.compatible, c.declared))
            .collect();
        assert_eq!(
            found,
            [
                (
                    2,
                    "IRQCHIP_DECLARE".to_string(),
                    "arm,gic-400".to_string(),
                    true
                ),
                (
                    3,
                    "IRQCHIP_DECLARE".into(),
                    "arm,cortex-a9-gic".into(),
                    true
                ),
                (
                    6,
                    "of_machine_is_compatible".into(),
                    "fsl,imx6q".into(),
                    false
                ),
                (
                    7,
                    "of_find_compatible_node".into(),
                    "fsl,imx6q-iomuxc-gpr".into(),
                    false
                ),
            ]
        );
    }
}
