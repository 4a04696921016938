//! Root-relative paths as knav keeps them: strings that hold any file name's bytes.
//!
//! A path that is UTF-8 and has no backslash and no control character is kept as it is (every
//! path of the kernel). Any other is escaped: each `\` becomes `\\`, and each byte that is not
//! part of a UTF-8 character, or is part of a control character, becomes `\xNN` (a directory
//! `d\xfe` holding `caf\xff.c` is `d\xfe/caf\xff.c`; a newline in a name is `\x0a`, so that it
//! cannot break a line of an answer, nor an escape sequence drive a terminal). The escape is
//! lossless, so the index, the walk cache and every answer carry the escaped string, and what
//! opens a file turns it back into bytes with [`to_path`] (or [`decode`]).

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

/// The path or name `bytes` as knav keeps it.
pub fn encode(bytes: &[u8]) -> Cow<'_, str> {
    let escaped = |c: char| c == '\\' || c.is_control();
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(escaped) => Cow::Borrowed(s),
        _ => {
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                for c in chunk.valid().chars() {
                    match c {
                        '\\' => out.push_str(r"\\"),
                        c if c.is_control() => push_hex(&mut out, c.encode_utf8(&mut [0; 4])),
                        c => out.push(c),
                    }
                }
                push_hex(&mut out, chunk.invalid());
            }
            Cow::Owned(out)
        }
    }
}

/// Appends each of `bytes` as `\xNN`.
fn push_hex(out: &mut String, bytes: impl AsRef<[u8]>) {
    for b in bytes.as_ref() {
        out.push_str(&format!("\\x{b:02x}"));
    }
}

/// [`encode`] of a name the operating system gave.
pub fn encode_os(name: &OsStr) -> Cow<'_, str> {
    encode(name.as_bytes())
}

/// The bytes of a path [`encode`] made. A backslash that starts no escape (a path a person
/// typed, `back\slash.c`) is taken as itself.
pub fn decode(path: &str) -> Cow<'_, [u8]> {
    if !path.contains('\\') {
        return Cow::Borrowed(path.as_bytes());
    }
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let escape = match b[i..] {
            [b'\\', b'\\', ..] => Some((b'\\', 2)),
            [b'\\', b'x', h, l, ..] => hex(h).zip(hex(l)).map(|(h, l)| ((h << 4) | l, 4)),
            _ => None,
        };
        let (byte, len) = escape.unwrap_or((b[i], 1));
        out.push(byte);
        i += len;
    }
    Cow::Owned(out)
}

/// [`decode`] as a path to open.
pub fn to_path(path: &str) -> Cow<'_, Path> {
    match decode(path) {
        Cow::Borrowed(b) => Cow::Borrowed(Path::new(OsStr::from_bytes(b))),
        Cow::Owned(b) => Cow::Owned(std::ffi::OsString::from_vec(b).into()),
    }
}

/// A path given on the command line: as typed when it is UTF-8 (the escaped form knav shows, or
/// a name whose backslashes start no escape), else its bytes escaped.
pub fn from_arg(arg: &OsStr) -> String {
    match arg.to_str() {
        Some(typed) => typed.to_string(),
        None => encode_os(arg).into_owned(),
    }
}

/// A path as a person may type it (a backslash that starts no escape taken as itself) in the
/// form knav keeps it.
pub fn normalize(path: &str) -> Cow<'_, str> {
    let bytes = decode(path);
    match encode(&bytes) {
        Cow::Borrowed(_) if matches!(bytes, Cow::Borrowed(_)) => Cow::Borrowed(path),
        encoded => Cow::Owned(encoded.into_owned()),
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_name_that_is_not_utf8_is_escaped_byte_by_byte() {
        assert_eq!(encode(b"d\xfe/caf\xff.c"), r"d\xfe/caf\xff.c");
        assert_eq!(encode("café.c".as_bytes()), "café.c");
        assert_eq!(encode(b"\xc3.c"), r"\xc3.c"); // a character cut short
                                                  // Control characters, even in UTF-8: a newline would break a line of an answer.
        assert_eq!(encode(b"a\nb\x1b[31m.c"), r"a\x0ab\x1b[31m.c");
        assert_eq!(encode("a\u{9b}.c".as_bytes()), r"a\xc2\x9b.c");
        assert_eq!(&*decode(r"a\x0ab\x1b[31m.c"), b"a\nb\x1b[31m.c");
        assert_eq!(&*decode(r"d\xfe/caf\xff.c"), b"d\xfe/caf\xff.c");
    }

    #[test]
    fn a_backslash_is_doubled_so_that_an_escape_cannot_be_forged() {
        assert_eq!(encode(br"a\xff.c"), r"a\\xff.c");
        assert_eq!(&*decode(r"a\\xff.c"), br"a\xff.c");
        assert_eq!(encode(b"a\\\xff.c"), r"a\\\xff.c");
    }

    #[test]
    fn a_backslash_that_starts_no_escape_is_taken_as_itself() {
        assert_eq!(&*decode(r"back\slash.c"), br"back\slash.c");
        assert_eq!(&*decode(r"a\xf"), br"a\xf");
        assert_eq!(&*decode("a\\"), b"a\\");
        assert_eq!(normalize(r"back\slash.c"), r"back\\slash.c");
        assert_eq!(normalize(r"caf\xff.c"), r"caf\xff.c");
        assert_eq!(normalize("fs/read_write.c"), "fs/read_write.c");
        assert_eq!(normalize("a\nb.c"), r"a\x0ab.c");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(1000)))]

        #[test]
        fn decoding_an_encoded_name_gives_its_bytes(
            name in proptest::collection::vec(
                prop_oneof![Just(b'\\'), Just(b'x'), Just(b'f'), Just(0xffu8), Just(0xc3), Just(0xa9), any::<u8>()],
                0..24,
            ),
        ) {
            let encoded = encode(&name);
            prop_assert_eq!(&*decode(&encoded), &name[..]);
            prop_assert_eq!(&*normalize(&encoded), &*encoded);
        }

        #[test]
        fn a_utf8_name_without_backslash_or_control_character_is_kept_as_it_is(
            name in "[^\\\\\\p{Cc}]{0,24}",
        ) {
            prop_assert!(matches!(encode(name.as_bytes()), Cow::Borrowed(s) if s == name));
            prop_assert!(matches!(decode(&name), Cow::Borrowed(b) if b == name.as_bytes()));
        }
    }
}
