//! cscope's query 9, "find assignments to this symbol", decided on a reference's source line.
//! The index records no write role (a reference is a call, an export, a macro definition or
//! a plain mention), so query 9 is query 0's lines kept where the line assigns the name as
//! cscope's scanner sees it: the name's first whole-word occurrence on the line followed (past
//! blanks) by `=` that is not `==`, or by a compound assignment (`+=`, `<<=`, …). Like Debian's
//! cscope 15.9, `x++`, `++x`, `x[i] = …` and `(x) = …` are no assignment to `x`; `int x = 1`,
//! `p->x = 1` and `.x = 1` (an initializer) are.

/// Whether `line` assigns `name`, as cscope's query 9 decides it.
pub(super) fn assigns(line: &str, name: &str) -> bool {
    let Some(after) = first_word(line, name).map(|end| &line[end..]) else {
        return false;
    };
    let after = after.trim_start_matches([' ', '\t']);
    let op = ["<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="];
    if op.iter().any(|o| after.starts_with(o)) {
        return true;
    }
    after.starts_with('=') && !after.starts_with("==")
}

/// The byte offset just past the first occurrence of `name` in `line` as a whole identifier
/// in code: not in a string or character literal, nor in a comment (as cscope's scanner skips
/// them).
fn first_word(line: &str, name: &str) -> Option<usize> {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let (bytes, want) = (line.as_bytes(), name.as_bytes());
    if want.is_empty() {
        return None;
    }
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => return None,
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = line[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
            }
            b if ident(b) => {
                let start = i;
                while i < bytes.len() && ident(bytes[i]) {
                    i += 1;
                }
                if &bytes[start..i] == want {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::assigns;

    #[test]
    fn assignments_are_the_ones_cscope_counts() {
        // Each as Debian's cscope 15.9 answers `-9 x` on the line.
        for yes in [
            "x = 1;",
            "x += 2;",
            "x <<= 1;",
            "x |= 1;",
            "int x = 9;",
            "sv.x = 5;",
            "p->x = 6;",
            "*x = 12;",
            "x\t= 3;",
            "x=4;",
            ".x = plain_x,",
        ] {
            assert!(assigns(yes, "x"), "{yes}");
        }
        for no in [
            "x++;",
            "++x;",
            "x--;",
            "if (x == 3) x = 4;",
            "x != 2;",
            "x <= 2;",
            "(x) = 11;",
            "arr[x] = 13;",
            "x[1] = 2;",
            "xy = 1;",
            "y = x;",
            "x",
        ] {
            assert!(!assigns(no, "x"), "{no}");
        }
        assert!(assigns("ops->fetch = fancy_fetch;", "fetch"));
        assert!(!assigns("return ops->fetch(s, buf, n);", "fetch"));
        assert!(!assigns("é = 1;", ""));
        assert!(assigns("é x = 1;", "x"));
        // A name in a string, a character literal or a comment is no occurrence.
        assert!(!assigns(r#"TP_printk("x=%d", x)"#, "x"));
        assert!(assigns(r#"s = "\"x"; x = 1;"#, "x"));
        assert!(!assigns("/* x = 1 */ y = x;", "x"));
        assert!(assigns("/* x */ x = 1;", "x"));
        assert!(!assigns("y = 0; // x = 1", "x"));
        assert!(!assigns("c = 'x'; x", "x"));
    }
}
