//! One definition as universal-ctags reports it, parsed from a line of its JSON output.

use std::borrow::Cow;

use serde::Deserialize;

/// The kind of a definition, as ctags's C parser names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    /// `#define NAME`.
    Macro = 0,
    /// An enumeration constant.
    Enumerator = 1,
    /// A function with a body.
    Function = 2,
    /// `enum name { … }`.
    Enum = 3,
    /// A struct or union member.
    Member = 4,
    /// A function declaration without a body.
    Prototype = 5,
    /// `struct name { … }`.
    Struct = 6,
    /// `typedef … name;`.
    Typedef = 7,
    /// `union name { … }`.
    Union = 8,
    /// A variable definition.
    Variable = 9,
    /// An `extern` variable declaration.
    Externvar = 10,
    /// A goto label.
    Label = 11,
    /// Anything else ctags reports.
    Other = 12,
    /// A variable local to a function (made by a macro such as `DEFINE_WAIT`).
    Local = 13,
    /// A function marked as an entry point (`module_init(fn)`, the initcalls): not a definition
    /// of its own, a mark on the function's.
    Entry = 14,
}

impl Kind {
    /// All kinds, indexed by their `u8` value.
    pub const ALL: [Kind; 15] = [
        Kind::Macro,
        Kind::Enumerator,
        Kind::Function,
        Kind::Enum,
        Kind::Member,
        Kind::Prototype,
        Kind::Struct,
        Kind::Typedef,
        Kind::Union,
        Kind::Variable,
        Kind::Externvar,
        Kind::Label,
        Kind::Other,
        Kind::Local,
        Kind::Entry,
    ];

    /// Parses ctags's long kind name.
    pub fn from_name(name: &str) -> Kind {
        match name {
            "macro" => Kind::Macro,
            "enumerator" => Kind::Enumerator,
            "function" => Kind::Function,
            "enum" => Kind::Enum,
            "member" => Kind::Member,
            "prototype" => Kind::Prototype,
            "struct" => Kind::Struct,
            "typedef" => Kind::Typedef,
            "union" => Kind::Union,
            "variable" => Kind::Variable,
            "externvar" => Kind::Externvar,
            "local" => Kind::Local,
            "entry" => Kind::Entry,
            "label" => Kind::Label,
            _ => Kind::Other,
        }
    }

    /// The kind's long name, as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Macro => "macro",
            Kind::Enumerator => "enumerator",
            Kind::Function => "function",
            Kind::Enum => "enum",
            Kind::Member => "member",
            Kind::Prototype => "prototype",
            Kind::Struct => "struct",
            Kind::Typedef => "typedef",
            Kind::Union => "union",
            Kind::Variable => "variable",
            Kind::Externvar => "externvar",
            Kind::Label => "label",
            Kind::Other => "other",
            Kind::Local => "local",
            Kind::Entry => "entry",
        }
    }

    /// The kind from its stored `u8` value.
    pub fn from_u8(v: u8) -> Kind {
        Kind::ALL.get(v as usize).copied().unwrap_or(Kind::Other)
    }

    /// True for declarations that are not the definition itself (prototypes, `extern`).
    pub fn is_declaration(self) -> bool {
        matches!(self, Kind::Prototype | Kind::Externvar)
    }
}

/// One definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The defined name.
    pub name: String,
    /// 1-based line of the definition.
    pub line: u32,
    /// 1-based last line, when ctags knows it (functions, structs, multi-line macros).
    pub end: Option<u32>,
    /// What kind of thing is defined.
    pub kind: Kind,
    /// The type, as ctags writes it without its `typename:` prefix (`ssize_t`, `struct:foo`).
    pub typeref: Option<String>,
    /// The enclosing struct, union or enum of a member or enumerator.
    pub scope: Option<String>,
    /// The parameter list of a function, prototype or function-like macro.
    pub signature: Option<String>,
    /// True when the definition is file-local (`static`, or anything in a `.c` file ctags marks so).
    pub file_local: bool,
}

#[derive(Deserialize)]
struct RawTag<'a> {
    #[serde(rename = "_type", borrow)]
    ty: &'a str,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    end: Option<u32>,
    #[serde(default, borrow)]
    kind: Option<&'a str>,
    #[serde(default)]
    typeref: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    file: Option<bool>,
}

/// What one line of ctags's interactive JSON output says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A definition, and the path ctags gives for its file.
    Tag(Tag, Option<String>),
    /// The end of one request.
    Completed,
    /// ctags could not read or parse the file; the message says why.
    Error(String),
    /// A line to ignore (the program banner, pseudo tags, unknown types).
    Other,
}

impl Line {
    /// Parses one output line; a line that is not JSON is an error line.
    pub(crate) fn parse(line: &[u8]) -> Line {
        let raw: RawTag = match serde_json::from_slice(line) {
            Ok(raw) => raw,
            // serde's message can quote the line: a fixed reason instead.
            Err(_) => return Line::Error(UNREADABLE.into()),
        };
        match raw.ty {
            "tag" => {
                let (Some(name), Some(line)) = (raw.name, raw.line) else {
                    return Line::Other;
                };
                let typeref = raw.typeref.map(|t| match t.strip_prefix("typename:") {
                    Some(rest) => rest.to_string(),
                    None => t,
                });
                Line::Tag(
                    Tag {
                        name,
                        line,
                        end: raw.end,
                        kind: Kind::from_name(raw.kind.unwrap_or("")),
                        typeref,
                        scope: raw.scope,
                        signature: raw.signature,
                        file_local: raw.file.unwrap_or(false),
                    },
                    raw.path,
                )
            }
            "completed" => Line::Completed,
            "error" => {
                let v: serde_json::Value = serde_json::from_slice(line).unwrap_or_default();
                let msg = v.get("message").and_then(|m| m.as_str()).unwrap_or("");
                Line::Error(error_reason(msg).into())
            }
            _ => Line::Other,
        }
    }
}

/// The reason given for a line of ctags's output that is not JSON.
const UNREADABLE: &str = "ctags wrote a line knav cannot read (not shown)";

/// The reason given for ctags's error `message`: one of a few fixed texts, never the message's
/// own words, which can quote a file's text (the first unknown line of an option file).
fn error_reason(message: &str) -> &'static str {
    if message.starts_with("cannot open") {
        "ctags cannot open the file"
    } else {
        "ctags reported an error (its message is not shown: it can quote a file)"
    }
}

/// Undoes the escapes of ctags's tag-file format (`\\`, `\t`, `\n`, `\r`, `\xHH`).
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    String::from_utf8_lossy(&unescape_bytes(s.as_bytes())).into_owned()
}

/// [`unescape`] of bytes: a path, which need not be UTF-8.
fn unescape_bytes(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let (byte, len) = match s[i..] {
            [b'\\', b't', ..] => (b'\t', 2),
            [b'\\', b'n', ..] => (b'\n', 2),
            [b'\\', b'r', ..] => (b'\r', 2),
            [b'\\', b'x', h, l, ..] => match (h as char).to_digit(16).zip((l as char).to_digit(16))
            {
                Some((h, l)) => ((h * 16 + l) as u8, 4),
                None => (b'x', 2),
            },
            [b'\\', other, ..] => (other, 2),
            [c, ..] => (c, 1),
            [] => break,
        };
        out.push(byte);
        i += len;
    }
    out
}

impl Tag {
    /// Parses one line of ctags's tag-file output (`--output-format=u-ctags --excmd=number`
    /// with the fields knav asks for) into the tag and its file's path.
    pub fn parse_tag_line(line: &[u8]) -> Option<(Tag, Cow<'_, [u8]>)> {
        let mut fields = line.splitn(3, |&b| b == b'\t');
        let (name, path) = (fields.next()?, fields.next()?);
        // Source bytes that are not UTF-8 (a Latin-1 comment in a signature) are kept lossily;
        // the path stays bytes, to be matched with the path ctags was given.
        let name = unescape(&String::from_utf8_lossy(name));
        let path = if path.contains(&b'\\') {
            Cow::Owned(unescape_bytes(path))
        } else {
            Cow::Borrowed(path)
        };
        let rest = String::from_utf8_lossy(fields.next()?);
        let mut fields = rest.trim_end_matches(['\n', '\r']).split('\t');
        let address = fields.next()?;
        let mut tag = Tag {
            name,
            line: address.trim_end_matches(";\"").parse().ok()?,
            end: None,
            kind: Kind::Other,
            typeref: None,
            scope: None,
            signature: None,
            file_local: false,
        };
        for field in fields {
            match field.split_once(':') {
                None => tag.kind = Kind::from_name(field),
                Some(("line", v)) => tag.line = v.parse().unwrap_or(tag.line),
                Some(("end", v)) => tag.end = v.parse().ok(),
                Some(("file", _)) => tag.file_local = true,
                Some(("typeref", v)) => {
                    let v = v.strip_prefix("typename:").unwrap_or(v);
                    tag.typeref = Some(unescape(v));
                }
                Some(("scope", v)) => {
                    let name = v.split_once(':').map_or(v, |(_, n)| n);
                    tag.scope = Some(unescape(name));
                }
                Some(("signature", v)) => tag.signature = Some(unescape(v)),
                Some(("kind", v)) => tag.kind = Kind::from_name(v),
                Some(_) => {}
            }
        }
        Some((tag, path))
    }

    /// True for what ctags reports when it mistakes a macro invocation for a declaration:
    /// `SYSCALL_DEFINE3(read, …) { … }` becomes a "function" `SYSCALL_DEFINE3` without a return
    /// type, and `EXPORT_SYMBOL(vfs_read);` a "prototype" whose parameters are bare names.
    pub fn is_macro_pseudo_definition(&self) -> bool {
        // Real C functions and prototypes always have a return type; macro invocations never.
        matches!(self.kind, Kind::Function | Kind::Prototype) && self.typeref.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_function_tag() {
        let line = br#"{"_type": "tag", "name": "vfs_read", "path": "a.c", "line": 9, "typeref": "typename:ssize_t", "kind": "function", "signature": "(struct file * file)", "end": 12}"#;
        let Line::Tag(tag, path) = Line::parse(line) else {
            panic!("not a tag")
        };
        assert_eq!(path.as_deref(), Some("a.c"));
        assert_eq!(tag.name, "vfs_read");
        assert_eq!(tag.line, 9);
        assert_eq!(tag.end, Some(12));
        assert_eq!(tag.kind, Kind::Function);
        assert_eq!(tag.typeref.as_deref(), Some("ssize_t"));
        assert_eq!(tag.signature.as_deref(), Some("(struct file * file)"));
        assert!(!tag.file_local);
        assert!(!tag.is_macro_pseudo_definition());
    }

    #[test]
    fn macro_invocations_are_pseudo_definitions() {
        let sys = br#"{"_type": "tag", "name": "SYSCALL_DEFINE3", "path": "a.c", "line": 14, "kind": "function", "signature": "(read,unsigned int,fd)", "end": 17}"#;
        let export = br#"{"_type": "tag", "name": "EXPORT_SYMBOL", "path": "a.c", "file": true, "line": 13, "kind": "prototype", "signature": "(vfs_read)", "end": 13}"#;
        let proto = br#"{"_type": "tag", "name": "proto", "path": "a.c", "line": 18, "typeref": "typename:int", "kind": "prototype", "signature": "(int)", "end": 18}"#;
        let void = br#"{"_type": "tag", "name": "f", "path": "a.c", "line": 18, "typeref": "typename:int", "kind": "prototype", "signature": "(void)"}"#;
        for (line, pseudo) in [
            (&sys[..], true),
            (export, true),
            (proto, false),
            (void, false),
        ] {
            let Line::Tag(tag, _) = Line::parse(line) else {
                panic!("not a tag")
            };
            assert_eq!(tag.is_macro_pseudo_definition(), pseudo, "{}", tag.name);
        }
    }

    #[test]
    fn parses_tag_file_lines() {
        let line =
            "b\ta.c\t2;\"\tmember\tline:2\tscope:struct:foo\ttyperef:typename:char *\tfile:\tend:2";
        let (tag, path) = Tag::parse_tag_line(line.as_bytes()).unwrap();
        assert_eq!(&*path, b"a.c");
        assert_eq!(tag.name, "b");
        assert_eq!((tag.line, tag.end), (2, Some(2)));
        assert_eq!(tag.kind, Kind::Member);
        assert_eq!(tag.scope.as_deref(), Some("foo"));
        assert_eq!(tag.typeref.as_deref(), Some("char *"));
        assert!(tag.file_local);
        let line = "vfs_read\tfs/a b.c\t9;\"\tfunction\tline:9\ttyperef:typename:ssize_t\tsignature:(struct file * file,char \\\\x)\tend:12\n";
        let (tag, path) = Tag::parse_tag_line(line.as_bytes()).unwrap();
        assert_eq!(&*path, b"fs/a b.c");
        assert_eq!(
            tag.signature.as_deref(),
            Some("(struct file * file,char \\x)")
        );
        assert!(!tag.file_local);
        assert!(Tag::parse_tag_line(b"garbage").is_none());
    }

    #[test]
    fn a_tag_lines_path_that_is_not_utf8_keeps_its_bytes() {
        let line =
            b"f\td\xfe/caf\xff\\\\\\t.c\t1;\"\tfunction\tline:1\tsignature:(char c\xe9)\tend:1\n";
        let (tag, path) = Tag::parse_tag_line(line).unwrap();
        assert_eq!(&*path, b"d\xfe/caf\xff\\\t.c");
        assert_eq!(tag.name, "f");
        assert_eq!(tag.signature.as_deref(), Some("(char c\u{fffd})"));
        assert_eq!(tag.end, Some(1));
    }

    #[test]
    fn completed_and_errors() {
        assert_eq!(
            Line::parse(br#"{"_type": "completed", "command": "generate-tags"}"#),
            Line::Completed
        );
        assert_eq!(
            Line::parse(br#"{"_type": "error", "message": "cannot open input file"}"#),
            Line::Error("ctags cannot open the file".into())
        );
        assert!(matches!(Line::parse(b"garbage"), Line::Error(_)));
    }

    #[test]
    fn an_error_quoting_an_option_files_line_is_reported_without_its_text() {
        let pem =
            br#"{"_type": "error", "message": "unknown option: -----BEGIN PRIVATE KEY-----"}"#;
        let Line::Error(why) = Line::parse(pem) else {
            panic!("not an error line");
        };
        assert_eq!(
            why,
            "ctags reported an error (its message is not shown: it can quote a file)"
        );
        // Not JSON, or JSON of another shape: serde's message would quote it.
        for line in [
            &b"-----BEGIN PRIVATE KEY-----"[..],
            br#"{"_type": "tag", "name": "x", "line": "MIIEvQIBADANBg"}"#,
        ] {
            assert_eq!(Line::parse(line), Line::Error(UNREADABLE.into()));
        }
        assert_eq!(
            Line::parse(br#"{"_type": "program", "name": "Universal Ctags"}"#),
            Line::Other
        );
    }
}
