//! `#if` expressions evaluated under a configuration, in three values.
//!
//! The grammar is the preprocessor's: integer and character literals, `defined X` and
//! `defined(X)`, the kernel's `IS_ENABLED`, `IS_BUILTIN`, `IS_MODULE` and `IS_REACHABLE`,
//! arithmetic, shifts, comparisons, bitwise operators, `!`, `&&`, `||`, `?:` and parentheses.
//! A name that is not a config symbol is unknown, and unknown spreads except where `&&`, `||`
//! or `?:` decide without it (`0 && X` is false whatever X is). A guard knav stores as `X` (from
//! `#ifdef X`) reads the same as `#if X` for config symbols: defined means 1.

use crate::config::{Config, Macro, Value};

/// Parentheses and `?:` nested deeper than this make an expression unknown: the evaluator
/// recurses once per level, and the kernel's deepest `#if` nests 4.
const MAX_NESTING: usize = 64;

/// A three-valued truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tri {
    /// Known true.
    True,
    /// Known false.
    False,
    /// Not decided by the configuration.
    Unknown,
}

/// Evaluates `expr` under `config`: is the code it guards compiled? A malformed expression, or
/// one nested deeper than [`MAX_NESTING`], is unknown.
pub fn eval(expr: &str, config: &Config) -> Tri {
    let tokens = match tokenize(expr) {
        Some(t) => t,
        None => return Tri::Unknown,
    };
    let mut p = Parser {
        t: &tokens,
        i: 0,
        depth: 0,
        config,
    };
    let v = p.conditional();
    if p.i != tokens.len() {
        return Tri::Unknown;
    }
    match v {
        Some(0) => Tri::False,
        Some(_) => Tri::True,
        None => Tri::Unknown,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Num(i64),
    Ident(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "!", "~", "*", "/", "%", "+", "-",
    "<", ">", "&", "^", "|", "?", ":", ",",
];

fn tokenize(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b'\\' {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(s[start..i].to_string()));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let text = s[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let n = if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                u64::from_str_radix(h, 16).ok()? as i64
            } else if text.len() > 1 && text.starts_with('0') {
                i64::from_str_radix(&text[1..], 8).ok()?
            } else {
                text.parse().ok()?
            };
            out.push(Tok::Num(n));
        } else if c == b'\'' {
            // 'a', '\n', '\0', '\x41'
            let end = s[i + 1..].find('\'')? + i + 1;
            let inner = &s[i + 1..end];
            let v = match inner.as_bytes() {
                [ch] => *ch as i64,
                [b'\\', b'n'] => 10,
                [b'\\', b't'] => 9,
                [b'\\', b'0'] => 0,
                [b'\\', b'\\'] => 92,
                [b'\\', b'\''] => 39,
                [b'\\', b'x', hex @ ..] => {
                    i64::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?
                }
                _ => return None,
            };
            out.push(Tok::Num(v));
            i = end + 1;
        } else {
            let op = OPS.iter().find(|op| s[i..].starts_with(**op))?;
            out.push(Tok::Op(op));
            i += op.len();
        }
    }
    Some(out)
}

struct Parser<'a> {
    t: &'a [Tok],
    i: usize,
    /// Levels of [`Parser::conditional`] entered and not left.
    depth: usize,
    config: &'a Config,
}

/// `None` is unknown.
type V = Option<i64>;

impl Parser<'_> {
    fn peek_op(&self, op: &str) -> bool {
        matches!(self.t.get(self.i), Some(Tok::Op(o)) if *o == op)
    }

    fn eat(&mut self, op: &str) -> bool {
        if self.peek_op(op) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Gives up on the whole expression: `i` past the end never equals the length.
    fn malformed(&mut self) -> V {
        self.i = self.t.len() + 1;
        None
    }

    fn conditional(&mut self) -> V {
        if self.depth >= MAX_NESTING {
            return self.malformed();
        }
        self.depth += 1;
        let v = self.conditional_inner();
        self.depth -= 1;
        v
    }

    fn conditional_inner(&mut self) -> V {
        let c = self.or();
        if !self.eat("?") {
            return c;
        }
        let a = self.conditional();
        if !self.eat(":") {
            return self.malformed();
        }
        let b = self.conditional();
        match c {
            Some(0) => b,
            Some(_) => a,
            None if a == b => a,
            None => None,
        }
    }

    fn or(&mut self) -> V {
        let mut v = self.and();
        while self.eat("||") {
            let r = self.and();
            v = match (v, r) {
                (Some(a), _) if a != 0 => Some(1),
                (_, Some(b)) if b != 0 => Some(1),
                (Some(_), Some(_)) => Some(0),
                _ => None,
            };
        }
        v
    }

    fn and(&mut self) -> V {
        let mut v = self.binary(0);
        while self.eat("&&") {
            let r = self.binary(0);
            v = match (v, r) {
                (Some(0), _) | (_, Some(0)) => Some(0),
                (Some(_), Some(_)) => Some(1),
                _ => None,
            };
        }
        v
    }

    /// Binary operators from `|` down to `*`, by precedence level.
    fn binary(&mut self, level: usize) -> V {
        const LEVELS: &[&[&str]] = &[
            &["|"],
            &["^"],
            &["&"],
            &["==", "!="],
            &["<", ">", "<=", ">="],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut v = self.binary(level + 1);
        loop {
            let Some(op) = LEVELS[level].iter().find(|op| self.peek_op(op)) else {
                return v;
            };
            self.i += 1;
            let r = self.binary(level + 1);
            v = match (v, r) {
                (Some(a), Some(b)) => apply(op, a, b),
                _ => None,
            };
        }
    }

    /// Prefix operators, applied innermost first; a loop, not recursion, so `!!!…` of any
    /// length costs no stack.
    fn unary(&mut self) -> V {
        let start = self.i;
        while matches!(self.t.get(self.i), Some(Tok::Op("!" | "~" | "-" | "+"))) {
            self.i += 1;
        }
        let ops = start..self.i;
        let mut v = self.primary()?;
        for at in ops.rev() {
            v = match self.t[at] {
                Tok::Op("!") => (v == 0) as i64,
                Tok::Op("~") => !v,
                Tok::Op("-") => v.wrapping_neg(),
                _ => v,
            };
        }
        Some(v)
    }

    fn primary(&mut self) -> V {
        let tok = self.t.get(self.i).cloned();
        self.i += 1;
        match tok {
            Some(Tok::Num(n)) => Some(n),
            Some(Tok::Op("(")) => {
                let v = self.conditional();
                if !self.eat(")") {
                    return self.malformed();
                }
                v
            }
            Some(Tok::Ident(name)) if name == "defined" => {
                let paren = self.eat("(");
                let Some(Tok::Ident(m)) = self.t.get(self.i).cloned() else {
                    return self.malformed();
                };
                self.i += 1;
                if paren && !self.eat(")") {
                    return self.malformed();
                }
                match self.config.macro_of(&m) {
                    Macro::Defined(_) => Some(1),
                    Macro::Undefined => Some(0),
                    Macro::Unknown => None,
                }
            }
            Some(Tok::Ident(name)) if self.peek_op("(") => {
                self.i += 1;
                let args = self.arguments()?;
                self.call(&name, &args)
            }
            Some(Tok::Ident(name)) => match self.config.macro_of(&name) {
                // A string-valued symbol in `#if` is a compile error in the kernel; as a guard
                // from `#ifdef` it means defined.
                Macro::Defined(v) => Some(v.unwrap_or(1)),
                Macro::Undefined => Some(0),
                Macro::Unknown => None,
            },
            _ => self.malformed(),
        }
    }

    /// The identifiers of a call's argument list up to `)`; other arguments make the call
    /// unknown.
    fn arguments(&mut self) -> Option<Vec<Option<String>>> {
        let mut args = Vec::new();
        let mut depth = 0usize;
        let mut cur: Vec<Tok> = Vec::new();
        while let Some(t) = self.t.get(self.i).cloned() {
            self.i += 1;
            match t {
                Tok::Op("(") => depth += 1,
                Tok::Op(")") if depth == 0 => {
                    args.push(single_ident(&cur));
                    return Some(args);
                }
                Tok::Op(")") => depth -= 1,
                Tok::Op(",") if depth == 0 => {
                    args.push(single_ident(&cur));
                    cur.clear();
                    continue;
                }
                _ => {}
            }
            cur.push(t);
        }
        self.malformed();
        None
    }

    fn call(&self, name: &str, args: &[Option<String>]) -> V {
        let [Some(sym)] = args else {
            return None;
        };
        let value = self.config.value(sym);
        let known = |v: Option<&Value>| v.is_some() && sym.starts_with("CONFIG_");
        if !known(value) {
            return None;
        }
        let (y, m) = match value {
            Some(Value::Yes) => (true, false),
            Some(Value::Module) => (false, true),
            _ => (false, false),
        };
        match name {
            "IS_ENABLED" | "IS_ENABLED_CFG" => Some((y || m) as i64),
            "IS_BUILTIN" => Some(y as i64),
            "IS_MODULE" => Some(m as i64),
            // Built in: reachable from everywhere; a module: only from code built as a module,
            // which `MODULE` decides and a .config does not say.
            "IS_REACHABLE" => match (y, m) {
                (true, _) => Some(1),
                (_, true) => None,
                _ => Some(0),
            },
            _ => None,
        }
    }
}

fn single_ident(toks: &[Tok]) -> Option<String> {
    match toks {
        [Tok::Ident(s)] => Some(s.clone()),
        _ => None,
    }
}

fn apply(op: &str, a: i64, b: i64) -> V {
    Some(match op {
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "==" => (a == b) as i64,
        "!=" => (a != b) as i64,
        "<" => (a < b) as i64,
        ">" => (a > b) as i64,
        "<=" => (a <= b) as i64,
        ">=" => (a >= b) as i64,
        "<<" => a.checked_shl(u32::try_from(b).ok()?)?,
        ">>" => a.checked_shr(u32::try_from(b).ok()?)?,
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" => a.checked_div(b)?,
        "%" => a.checked_rem(b)?,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config::parse(
            "CONFIG_Y=y\nCONFIG_M=m\n# CONFIG_N is not set\nCONFIG_HZ=250\nCONFIG_S=\"s\"\n",
        )
        .unwrap()
    }

    fn e(expr: &str) -> Tri {
        eval(expr, &cfg())
    }

    #[test]
    fn defined_in_both_spellings_and_bare_symbols() {
        assert_eq!(e("defined(CONFIG_Y)"), Tri::True);
        assert_eq!(e("defined CONFIG_Y"), Tri::True);
        assert_eq!(
            e("defined(CONFIG_M)"),
            Tri::False,
            "=m does not define CONFIG_M"
        );
        assert_eq!(e("defined(CONFIG_M_MODULE)"), Tri::True);
        assert_eq!(e("defined(CONFIG_N)"), Tri::False);
        assert_eq!(e("defined(CONFIG_ABSENT)"), Tri::False, "a whole .config");
        assert_eq!(e("CONFIG_Y"), Tri::True);
        assert_eq!(e("!CONFIG_Y"), Tri::False);
        assert_eq!(e("CONFIG_M"), Tri::False);
        assert_eq!(e("CONFIG_S"), Tri::True, "#ifdef of a string symbol");
        assert_eq!(e("defined(__KERNEL__)"), Tri::Unknown);
        assert_eq!(e("SOME_MACRO"), Tri::Unknown);
    }

    #[test]
    fn each_kconfig_h_macro() {
        assert_eq!(e("IS_ENABLED(CONFIG_Y)"), Tri::True);
        assert_eq!(e("IS_ENABLED(CONFIG_M)"), Tri::True);
        assert_eq!(e("IS_ENABLED(CONFIG_N)"), Tri::False);
        assert_eq!(e("IS_BUILTIN(CONFIG_Y)"), Tri::True);
        assert_eq!(e("IS_BUILTIN(CONFIG_M)"), Tri::False);
        assert_eq!(e("IS_MODULE(CONFIG_M)"), Tri::True);
        assert_eq!(e("IS_MODULE(CONFIG_Y)"), Tri::False);
        assert_eq!(e("IS_REACHABLE(CONFIG_Y)"), Tri::True);
        assert_eq!(e("IS_REACHABLE(CONFIG_M)"), Tri::Unknown, "MODULE decides");
        assert_eq!(e("IS_REACHABLE(CONFIG_N)"), Tri::False);
        assert_eq!(e("IS_ENABLED(NOT_A_CONFIG)"), Tri::Unknown);
        assert_eq!(e("OTHER_FN(CONFIG_Y)"), Tri::Unknown);
    }

    #[test]
    fn operators_literals_and_precedence() {
        assert_eq!(e("CONFIG_HZ == 250"), Tri::True);
        assert_eq!(e("CONFIG_HZ > 100 && CONFIG_HZ < 1000"), Tri::True);
        assert_eq!(e("CONFIG_HZ >= 300"), Tri::False);
        assert_eq!(e("(1 << 4) == 16 && 0x10 == 020"), Tri::True);
        assert_eq!(e("2 + 3 * 4 == 14"), Tri::True);
        assert_eq!(e("(2 + 3) * 4 == 20"), Tri::True);
        assert_eq!(e("10 / 3 == 3 && 10 % 3 == 1 && 7 - 9 == -2"), Tri::True);
        assert_eq!(
            e("(6 & 3) == 2 && (6 | 1) == 7 && (6 ^ 2) == 4 && ~0 == -1"),
            Tri::True
        );
        assert_eq!(e("'A' == 65 && '\\n' == 10"), Tri::True);
        assert_eq!(e("1UL << 3 == 8"), Tri::True);
        assert_eq!(e("CONFIG_Y ? 5 : 0"), Tri::True);
        assert_eq!(e("CONFIG_N ? 5 : 0"), Tri::False);
        assert_eq!(e("1 / 0"), Tri::Unknown);
        assert_eq!(e("0"), Tri::False, "#if 0 is false under any config");
        assert_eq!(e("1 +"), Tri::Unknown);
        assert_eq!(e("(1"), Tri::Unknown);
    }

    #[test]
    fn unknown_spreads_except_where_the_operator_decides_without_it() {
        assert_eq!(e("X && CONFIG_N"), Tri::False);
        assert_eq!(e("CONFIG_N && X"), Tri::False);
        assert_eq!(e("X && CONFIG_Y"), Tri::Unknown);
        assert_eq!(e("X || CONFIG_Y"), Tri::True);
        assert_eq!(e("X || CONFIG_N"), Tri::Unknown);
        assert_eq!(e("!X"), Tri::Unknown);
        assert_eq!(e("X + 1"), Tri::Unknown);
        assert_eq!(e("X ? 1 : 1"), Tri::True);
        assert_eq!(e("!(CONFIG_HIGHMEM) && (CONFIG_Y)"), Tri::True);
    }

    /// `eval` on a thread with a small stack: a server's worker has 2 MiB, a debug build spends
    /// more per level than a release one.
    fn e_small_stack(expr: String) -> Tri {
        std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(move || e(&expr))
            .unwrap()
            .join()
            .expect("eval overflowed a 512 KiB stack")
    }

    #[test]
    fn deeply_nested_parentheses_do_not_overflow_the_stack() {
        let nest = |n: usize, inner: &str| format!("{}{inner}{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(e_small_stack(nest(MAX_NESTING - 1, "CONFIG_Y")), Tri::True);
        assert_eq!(e_small_stack(nest(MAX_NESTING - 1, "CONFIG_N")), Tri::False);
        assert_eq!(e_small_stack(nest(MAX_NESTING, "CONFIG_Y")), Tri::Unknown);
        assert_eq!(e_small_stack(nest(8_000, "CONFIG_Y")), Tri::Unknown);
        assert_eq!(e_small_stack(nest(8_000, "")), Tri::Unknown);
        assert_eq!(e_small_stack("(".repeat(100_000)), Tri::Unknown);
        // `?:` nests on its right.
        let chain = "CONFIG_N ? 0 : ".repeat(MAX_NESTING - 1) + "1";
        assert_eq!(e_small_stack(chain), Tri::True);
        assert_eq!(e_small_stack("1 ? ".repeat(10_000)), Tri::Unknown);
        assert_eq!(
            e_small_stack("CONFIG_N ? 0 : ".repeat(10_000) + "1"),
            Tri::Unknown
        );
    }

    #[test]
    fn long_chains_of_prefix_operators_do_not_overflow_the_stack() {
        assert_eq!(e_small_stack("!".repeat(100_000) + "CONFIG_Y"), Tri::True);
        assert_eq!(e_small_stack("!".repeat(100_001) + "CONFIG_Y"), Tri::False);
        assert_eq!(e_small_stack("-".repeat(100_000) + "1"), Tri::True);
        assert_eq!(e_small_stack("~".repeat(100_001) + "0"), Tri::True);
        assert_eq!(e_small_stack("-".repeat(100_000)), Tri::Unknown);
        assert_eq!(e("!-~+1 == 0"), Tri::True, "applied innermost first");
        assert_eq!(e("-!0 == -1 && ~-1 == 0"), Tri::True);
    }

    #[test]
    fn a_macro_list_keeps_unnamed_symbols_unknown() {
        let c = Config::from_macros("CONFIG_A=y").unwrap();
        assert_eq!(eval("CONFIG_A && CONFIG_B", &c), Tri::Unknown);
        assert_eq!(eval("CONFIG_A || CONFIG_B", &c), Tri::True);
        assert_eq!(eval("IS_ENABLED(CONFIG_B)", &c), Tri::Unknown);
    }
}
