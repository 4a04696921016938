//! The string literals of a C or device-tree value: `"fsl,imx21-i2c"`, or the list
//! `"vendor,a", "vendor,b"` a `compatible` property holds, unescaped as both languages write
//! them (C's simple escapes, octal and hex). Device-tree sources and C match tables both name
//! compatibles this way.

/// The string literals at the start of `s`, separated by commas and blanks (C's adjacent
/// literals `"a" "b"` are joined into one string), up to the first byte that is neither; each
/// unescaped, bytes that are not UTF-8 replaced. A literal without its closing quote ends the
/// list and is left out.
pub fn literals(s: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    let mut joined = false;
    while i < s.len() {
        match s[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b',' => {
                joined = false;
                i += 1;
            }
            b'"' => {
                let Some((text, end)) = literal(&s[i..]) else {
                    break;
                };
                match out.last_mut() {
                    Some(last) if joined => last.push_str(&text),
                    _ => out.push(text),
                }
                joined = true;
                i += end;
            }
            _ => break,
        }
    }
    out
}

/// The literal that starts `s` (at its `"`), unescaped, and the length of it with its quotes;
/// `None` when it does not close.
pub fn literal(s: &[u8]) -> Option<(String, usize)> {
    let mut bytes = Vec::new();
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'"' => return Some((String::from_utf8_lossy(&bytes).into_owned(), i + 1)),
            b'\\' if i + 1 < s.len() => {
                let (b, used) = escape(&s[i + 1..]);
                bytes.push(b);
                i += 1 + used;
            }
            b'\n' => return None,
            b => {
                bytes.push(b);
                i += 1;
            }
        }
    }
    None
}

/// The byte an escape stands for (`s` starts after the backslash) and how many bytes it used.
fn escape(s: &[u8]) -> (u8, usize) {
    let digits = |radix: u32, max: usize, from: usize| {
        let mut v: u32 = 0;
        let mut n = 0;
        while n < max && from + n < s.len() {
            let Some(d) = (s[from + n] as char).to_digit(radix) else {
                break;
            };
            v = v * radix + d;
            n += 1;
        }
        (v as u8, n)
    };
    match s[0] {
        b'n' => (b'\n', 1),
        b't' => (b'\t', 1),
        b'r' => (b'\r', 1),
        b'0'..=b'7' => digits(8, 3, 0),
        b'x' => match digits(16, 2, 1) {
            (_, 0) => (b'x', 1),
            (v, n) => (v, n + 1),
        },
        other => (other, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compatible_list_and_joined_literals() {
        assert_eq!(
            literals(br#""fsl,imx21-i2c", "fsl,imx1-i2c";"#),
            ["fsl,imx21-i2c", "fsl,imx1-i2c"]
        );
        assert_eq!(literals(br#""ti," "omap3-i2c" }"#), ["ti,omap3-i2c"]);
        assert_eq!(literals(br#""a\"b\x41\101\n""#), ["a\"bAA\n"]);
    }

    #[test]
    fn an_unclosed_literal_ends_the_list() {
        assert_eq!(literals(b"\"a\", \"b"), ["a"]);
        assert_eq!(literals(b"\"a\nb\""), Vec::<String>::new());
        assert!(literals(b"NAME").is_empty());
    }
}
