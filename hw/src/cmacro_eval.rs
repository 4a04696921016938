//! The value of an initializer after its macros are expanded: a string (adjacent literals
//! joined), an integer constant expression (`0x8086`, `(~0)`, `(kernel_ulong_t)1 << 3`,
//! `'a'`), or else its text as written after expansion (`board_82571`, `&foo_info`).

use serde::{Deserialize, Serialize};

use crate::cmacro::text_of;
use crate::cmacro_lex::{Kind, Tok};
use crate::strings;

/// How deep parentheses and unary operators may nest in one expression.
const MAX_DEPTH: usize = 64;

/// A field's value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Value {
    /// A string literal (several adjacent ones joined), unescaped.
    Str(String),
    /// An integer constant, as C's unsigned 64-bit arithmetic computes it (`~0` is all ones).
    Int(u64),
    /// What could not be resolved, as C text after expansion.
    Text(String),
}

/// The value of the expanded tokens `toks`.
pub fn value(toks: &[Tok<'_>]) -> Value {
    if !toks.is_empty() && toks.iter().all(|t| t.kind == Kind::Str) {
        let joined: String = toks
            .iter()
            .map(|t| t.text.as_ref())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(s) = strings::literals(joined.as_bytes()).into_iter().next() {
            return Value::Str(s);
        }
    }
    let mut p = Parser { toks, at: 0 };
    match p.expr(0, 0) {
        Some(v) if p.at == toks.len() => Value::Int(v),
        _ => Value::Text(text_of(toks)),
    }
}

/// A precedence-climbing reader of an integer constant expression.
struct Parser<'t, 'a> {
    toks: &'t [Tok<'a>],
    at: usize,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.at).map(|t| t.text.as_ref())
    }

    /// An expression whose binary operators bind at least as tightly as `min`.
    fn expr(&mut self, min: u8, depth: usize) -> Option<u64> {
        let mut left = self.unary(depth)?;
        while let Some(op) = self.toks.get(self.at).filter(|t| t.kind == Kind::Punct) {
            let Some(prec) = precedence(&op.text) else {
                break;
            };
            if prec < min {
                break;
            }
            let op = op.text.to_string();
            self.at += 1;
            let right = self.expr(prec + 1, depth + 1)?;
            left = binary(&op, left, right)?;
        }
        Some(left)
    }

    /// A primary with its unary operators and casts.
    fn unary(&mut self, depth: usize) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        let t = self.toks.get(self.at)?;
        self.at += 1;
        match (t.kind, t.text.as_ref()) {
            (Kind::Number, n) => number(n),
            (Kind::Char, c) => strings::literal(format!("\"{}\"", c.trim_matches('\'')).as_bytes())
                .and_then(|(s, _)| s.bytes().next())
                .map(u64::from),
            (Kind::Punct, "-") => self.unary(depth + 1).map(u64::wrapping_neg),
            (Kind::Punct, "+") => self.unary(depth + 1),
            (Kind::Punct, "~") => self.unary(depth + 1).map(|v| !v),
            (Kind::Punct, "!") => self.unary(depth + 1).map(|v| u64::from(v == 0)),
            (Kind::Punct, "(") => {
                if let Some(after) = self.cast_end() {
                    self.at = after;
                    return self.unary(depth + 1);
                }
                let v = self.expr(0, depth + 1)?;
                (self.peek() == Some(")")).then(|| self.at += 1)?;
                Some(v)
            }
            _ => None,
        }
    }

    /// Past the `)` of a cast whose `(` was just read: identifiers and `*` only, followed by
    /// something a value starts with.
    fn cast_end(&self) -> Option<usize> {
        let mut k = self.at;
        while let Some(t) = self.toks.get(k) {
            match t.kind {
                Kind::Ident => k += 1,
                Kind::Punct if t.text == "*" => k += 1,
                Kind::Punct if t.text == ")" && k > self.at => {
                    let next = self.toks.get(k + 1)?;
                    let starts = matches!(next.kind, Kind::Number | Kind::Char | Kind::Ident)
                        || matches!(next.text.as_ref(), "(" | "~" | "-" | "!");
                    return starts.then_some(k + 1);
                }
                _ => return None,
            }
        }
        None
    }
}

/// The binding strength of a binary operator.
fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

/// `l op r` in unsigned 64-bit arithmetic; `None` for a division by zero.
fn binary(op: &str, l: u64, r: u64) -> Option<u64> {
    Some(match op {
        "||" => u64::from(l != 0 || r != 0),
        "&&" => u64::from(l != 0 && r != 0),
        "|" => l | r,
        "^" => l ^ r,
        "&" => l & r,
        "==" => u64::from(l == r),
        "!=" => u64::from(l != r),
        "<" => u64::from(l < r),
        ">" => u64::from(l > r),
        "<=" => u64::from(l <= r),
        ">=" => u64::from(l >= r),
        "<<" => l.checked_shl(u32::try_from(r).ok()?).unwrap_or(0),
        ">>" => l.checked_shr(u32::try_from(r).ok()?).unwrap_or(0),
        "+" => l.wrapping_add(r),
        "-" => l.wrapping_sub(r),
        "*" => l.wrapping_mul(r),
        "/" => l.checked_div(r)?,
        "%" => l.checked_rem(r)?,
        _ => return None,
    })
}

/// An integer literal's value (`0x1F`, `017`, `0b101`, `10UL`); `None` for a float.
fn number(n: &str) -> Option<u64> {
    let n = n.trim_end_matches(['u', 'U', 'l', 'L']);
    let (digits, radix) = if let Some(h) = n.strip_prefix("0x").or(n.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = n.strip_prefix("0b").or(n.strip_prefix("0B")) {
        (b, 2)
    } else if n.len() > 1 && n.starts_with('0') {
        (&n[1..], 8)
    } else {
        (n, 10)
    };
    u64::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmacro_lex::lex;

    fn v(src: &str) -> Value {
        value(&lex(src).toks)
    }

    #[test]
    fn integers_strings_and_text() {
        assert_eq!(v("0x8086"), Value::Int(0x8086));
        assert_eq!(v("(~0)"), Value::Int(u64::MAX));
        assert_eq!(v("(kernel_ulong_t)1 << 3 | 4"), Value::Int(12));
        assert_eq!(v("((0x0c0330) << 8)"), Value::Int(0x0c033000));
        assert_eq!(v("0xffffUL - 017"), Value::Int(0xffff - 15));
        assert_eq!(v("'A'"), Value::Int(65));
        assert_eq!(
            v("\"fsl,\" \"imx21-i2c\""),
            Value::Str("fsl,imx21-i2c".into())
        );
        assert_eq!(v("board_82571"), Value::Text("board_82571".into()));
        assert_eq!(
            v("(kernel_ulong_t)&foo_info"),
            Value::Text("(kernel_ulong_t)&foo_info".into())
        );
        assert_eq!(v("1 / 0"), Value::Text("1/0".into()));
        assert_eq!(v("1.5"), Value::Text("1.5".into()));
        assert_eq!(v(""), Value::Text(String::new()));
    }

    #[test]
    fn deep_nesting_is_text() {
        let deep = format!("{}1{}", "(".repeat(500), ")".repeat(500));
        assert!(matches!(v(&deep), Value::Text(_)));
        assert!(matches!(v(&"-".repeat(10_000)), Value::Text(_)));
    }
}
