//! A kernel `.config` (`CONFIG_X=y`, `=m`, strings, numbers, `# CONFIG_X is not set`) or a
//! short macro list (`CONFIG_A=y,CONFIG_B=m`), and the preprocessor macros it defines, exactly
//! as `scripts/kconfig/confdata.c` writes `autoconf.h`: `=y` defines `CONFIG_X` as 1, `=m`
//! defines `CONFIG_X_MODULE` (and not `CONFIG_X`), strings and numbers define `CONFIG_X` as
//! their value, and an unset symbol defines nothing.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Symbols are kept by a 64-bit hash of their name, not the name: a Debian .config sets
/// 7,000 of them and is parsed per query, and a map of strings spends its time allocating.
/// Each 8-byte chunk goes through a full 64-bit mix (splitmix64's finalizer, a bijection), so
/// names collide only by chance (~n²/2⁶⁵); a weaker mix made CONFIG_QI and CONFIG_YD one key.
fn key(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ name.len() as u64;
    for chunk in name.as_bytes().chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = mix(h ^ u64::from_le_bytes(w));
    }
    h
}

/// splitmix64's finalizer: every input bit changes about half the output bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key is a hash already.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | *b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Map = HashMap<u64, Value, BuildHasherDefault<KeyHasher>>;

/// One symbol's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// `=y`.
    Yes,
    /// `=m`.
    Module,
    /// `# CONFIG_X is not set` (or `=n`).
    No,
    /// An `int` or `hex` value.
    Number(i64),
    /// A string value, unquoted.
    Text(String),
}

/// A configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    values: Map,
    /// True for a whole `.config`: a symbol it does not mention is not set. A macro list names
    /// only some symbols: the others are unknown.
    complete: bool,
    /// True for [`Config::all_yes`]: every symbol is `y`.
    all_yes: bool,
}

/// What a `.config` makes of a preprocessor macro name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Macro {
    /// Defined, with this value (strings count as defined, value unknown).
    Defined(Option<i64>),
    /// Not defined.
    Undefined,
    /// Not decided by the configuration.
    Unknown,
}

impl Config {
    /// Parses a `.config` file's text; an error names the line and what was expected there,
    /// without quoting it.
    pub fn parse(text: &str) -> Result<Config, String> {
        let mut values = Map::default();
        values.reserve(text.len() / 40);
        let bytes = text.as_bytes();
        let mut start = 0;
        // Lines found with memchr: a distribution's .config has 11,000 of them, and a query
        // with an active config parses it whole.
        for (n, end) in memchr::memchr_iter(b'\n', bytes)
            .chain(std::iter::once(bytes.len()))
            .enumerate()
        {
            let line = &text[start..end];
            start = end + 1;
            let (name, value) = match fast_assignment(line) {
                Some(a) => a,
                None => {
                    // `# CONFIG_X is not set` needs no entry: a whole .config says not set for
                    // every symbol it does not set.
                    let t = line.trim_start();
                    if t.is_empty() || t.starts_with('#') {
                        continue;
                    }
                    // The error names the line, never quotes it: the file may be anything
                    // the user (or a client) named.
                    parse_assignment(line.trim_end_matches('\r'))
                        .map_err(|bad| format!("line {}: {}", n + 1, bad.expected()))?
                }
            };
            values.insert(key(name), value);
        }
        Ok(Config {
            values,
            complete: true,
            all_yes: false,
        })
    }

    /// Parses the short form `CONFIG_A=y,CONFIG_B=m` (commas or whitespace between); symbols
    /// it does not name stay unknown.
    pub fn from_macros(list: &str) -> Result<Config, String> {
        let mut values = Map::default();
        for item in list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
        {
            let (name, value) = parse_assignment(item)
                .map_err(|bad| format!("'{}': {}", short(item), bad.expected()))?;
            values.insert(key(name), value);
        }
        if values.is_empty() {
            return Err("no CONFIG_X=value in the list".into());
        }
        Ok(Config {
            values,
            complete: false,
            all_yes: false,
        })
    }

    /// Every symbol set to `y`: what is built only when a symbol is *not* set is not built
    /// under it (a no-MMU fallback), which is how code built in common configurations is told
    /// from the rest without a `.config`.
    pub fn all_yes() -> Config {
        Config {
            all_yes: true,
            ..Config::default()
        }
    }

    /// The value of symbol `name` (`CONFIG_` prefix included); `None` when the config does not
    /// say (a partial list) — a whole `.config` answers [`Value::No`] for a symbol it omits.
    pub fn value(&self, name: &str) -> Option<&Value> {
        match self.values.get(&key(name)) {
            Some(v) => Some(v),
            None if self.all_yes && name.starts_with("CONFIG_") => Some(&Value::Yes),
            None if self.complete && name.starts_with("CONFIG_") => Some(&Value::No),
            None => None,
        }
    }

    /// Symbols the configuration sets (to anything but `n`).
    pub fn set_count(&self) -> usize {
        self.values.values().filter(|v| **v != Value::No).count()
    }

    /// What the configuration makes of macro `name`.
    pub fn macro_of(&self, name: &str) -> Macro {
        if !name.starts_with("CONFIG_") {
            return Macro::Unknown;
        }
        if let Some(base) = name.strip_suffix("_MODULE") {
            match self.values.get(&key(base)) {
                Some(Value::Module) => return Macro::Defined(Some(1)),
                Some(_) => return Macro::Undefined,
                None if self.values.contains_key(&key(name)) => {}
                None if self.complete => return Macro::Undefined,
                None => return Macro::Unknown,
            }
        }
        match self.value(name) {
            Some(Value::Yes) => Macro::Defined(Some(1)),
            Some(Value::Number(n)) => Macro::Defined(Some(*n)),
            Some(Value::Text(_)) => Macro::Defined(None),
            Some(Value::Module) | Some(Value::No) => Macro::Undefined,
            None => Macro::Unknown,
        }
    }

    /// The `arch/` directory the configuration builds (`x86` for `CONFIG_X86=y`), when it
    /// sets one of the architecture symbols.
    pub fn arch(&self) -> Option<&'static str> {
        const ARCHES: &[(&str, &str)] = &[
            ("CONFIG_X86", "x86"),
            ("CONFIG_ARM64", "arm64"),
            ("CONFIG_ARM", "arm"),
            ("CONFIG_RISCV", "riscv"),
            ("CONFIG_PPC", "powerpc"),
            ("CONFIG_S390", "s390"),
            ("CONFIG_MIPS", "mips"),
            ("CONFIG_LOONGARCH", "loongarch"),
            ("CONFIG_SPARC", "sparc"),
            ("CONFIG_PARISC", "parisc"),
            ("CONFIG_ALPHA", "alpha"),
            ("CONFIG_ARC", "arc"),
            ("CONFIG_CSKY", "csky"),
            ("CONFIG_HEXAGON", "hexagon"),
            ("CONFIG_M68K", "m68k"),
            ("CONFIG_MICROBLAZE", "microblaze"),
            ("CONFIG_NIOS2", "nios2"),
            ("CONFIG_OPENRISC", "openrisc"),
            ("CONFIG_SUPERH", "sh"),
            ("CONFIG_UML", "um"),
            ("CONFIG_XTENSA", "xtensa"),
        ];
        ARCHES
            .iter()
            .find(|(sym, _)| self.values.get(&key(sym)) == Some(&Value::Yes))
            .map(|(_, dir)| *dir)
    }

    /// How a reason names the symbol's state: `CONFIG_X is not set`, `CONFIG_X=m`.
    pub fn describe(&self, name: &str) -> String {
        let base = name.strip_suffix("_MODULE").unwrap_or(name);
        match self.value(base) {
            Some(Value::Yes) => format!("{base}=y"),
            Some(Value::Module) => format!("{base}=m"),
            Some(Value::No) => format!("{base} is not set"),
            Some(Value::Number(n)) => format!("{base}={n}"),
            Some(Value::Text(t)) => format!("{base}=\"{t}\""),
            None => format!("{base} is not in the config"),
        }
    }
}

/// `CONFIG_X=y` or `CONFIG_X=m` exactly, as most lines of a .config are; anything else is
/// left to [`parse_assignment`].
fn fast_assignment(line: &str) -> Option<(&str, Value)> {
    let b = line.as_bytes();
    if !b.starts_with(b"CONFIG_") || b.len() < 10 {
        return None;
    }
    let value = match &b[b.len() - 2..] {
        b"=y" => Value::Yes,
        b"=m" => Value::Module,
        _ => return None,
    };
    let name = &line[..line.len() - 2];
    is_symbol_name(name).then_some((name, value))
}

/// True when `name` has only the characters a symbol may have.
fn is_symbol_name(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// What is wrong with a line that is not an assignment a `.config` can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bad {
    NoEquals,
    NotSymbol,
    Unterminated,
    Value,
}

impl Bad {
    /// What was expected instead.
    fn expected(self) -> &'static str {
        match self {
            Bad::NoEquals => {
                "expected CONFIG_NAME=value, `# CONFIG_NAME is not set`, a # comment or nothing"
            }
            Bad::NotSymbol => {
                "expected a CONFIG_ symbol (CONFIG_ then letters, digits, _) before '='"
            }
            Bad::Unterminated => "expected a closing '\"' at the end of the string value",
            Bad::Value => "expected a value of y, m, n, a number or a \"string\" after '='",
        }
    }
}

/// At most 40 characters of `s`, for an error about the user's own argument.
fn short(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn parse_assignment(item: &str) -> Result<(&str, Value), Bad> {
    let eq = item.bytes().position(|b| b == b'=').ok_or(Bad::NoEquals)?;
    let (name, raw) = (item[..eq].trim(), &item[eq + 1..]);
    if !name.starts_with("CONFIG_") || !is_symbol_name(name) {
        return Err(Bad::NotSymbol);
    }
    let raw = raw.trim();
    let value = match raw {
        "y" => Value::Yes,
        "m" => Value::Module,
        "n" | "" => Value::No,
        _ if raw.starts_with('"') => {
            let inner = raw
                .strip_prefix('"')
                .and_then(|r| r.strip_suffix('"'))
                .ok_or(Bad::Unterminated)?;
            Value::Text(inner.replace("\\\"", "\"").replace("\\\\", "\\"))
        }
        _ => {
            // Hex values fill 64 bits (CONFIG_ILLEGAL_POINTER_VALUE=0xdead000000000000), as the
            // preprocessor's unsigned arithmetic does.
            let n = if let Some(h) = raw.strip_prefix("0x").or_else(|| raw.strip_prefix("0X")) {
                u64::from_str_radix(h, 16).ok().map(|v| v as i64)
            } else {
                raw.parse::<i64>().ok()
            };
            Value::Number(n.ok_or(Bad::Value)?)
        }
    };
    Ok((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOT_CONFIG: &str = "#\n# Automatically generated file; DO NOT EDIT.\n#\nCONFIG_64BIT=y\n\
        CONFIG_EXT4_FS=m\n# CONFIG_HIGHMEM is not set\nCONFIG_LOCALVERSION=\"-knav\"\n\
        CONFIG_NR_CPUS=64\nCONFIG_PHYSICAL_START=0x1000000\n\
        CONFIG_ILLEGAL_POINTER_VALUE=0xdead000000000000\n";

    #[test]
    fn a_dot_config_maps_values_to_macros_as_autoconf_h_does() {
        let c = Config::parse(DOT_CONFIG).unwrap();
        assert_eq!(c.macro_of("CONFIG_64BIT"), Macro::Defined(Some(1)));
        // =m defines CONFIG_X_MODULE, not CONFIG_X.
        assert_eq!(c.macro_of("CONFIG_EXT4_FS"), Macro::Undefined);
        assert_eq!(c.macro_of("CONFIG_EXT4_FS_MODULE"), Macro::Defined(Some(1)));
        assert_eq!(c.macro_of("CONFIG_64BIT_MODULE"), Macro::Undefined);
        assert_eq!(c.macro_of("CONFIG_HIGHMEM"), Macro::Undefined);
        assert_eq!(c.macro_of("CONFIG_NR_CPUS"), Macro::Defined(Some(64)));
        assert_eq!(
            c.macro_of("CONFIG_PHYSICAL_START"),
            Macro::Defined(Some(0x1000000))
        );
        assert_eq!(c.macro_of("CONFIG_LOCALVERSION"), Macro::Defined(None));
        // A real Debian .config has 64-bit hex values.
        assert_eq!(
            c.value("CONFIG_ILLEGAL_POINTER_VALUE"),
            Some(&Value::Number(0xdead000000000000u64 as i64))
        );
        // A whole .config: absent means not set. Other macros are not its business.
        assert_eq!(c.macro_of("CONFIG_NOT_MENTIONED"), Macro::Undefined);
        assert_eq!(c.macro_of("__KERNEL__"), Macro::Unknown);
        assert_eq!(c.describe("CONFIG_HIGHMEM"), "CONFIG_HIGHMEM is not set");
        assert_eq!(c.describe("CONFIG_EXT4_FS"), "CONFIG_EXT4_FS=m");
        assert_eq!(c.arch(), None);
        assert_eq!(
            Config::parse("CONFIG_X86=y\nCONFIG_64BIT=y\n")
                .unwrap()
                .arch(),
            Some("x86")
        );
        assert_eq!(
            Config::from_macros("CONFIG_ARM64=y").unwrap().arch(),
            Some("arm64")
        );
        assert_eq!(
            c.value("CONFIG_LOCALVERSION"),
            Some(&Value::Text("-knav".into()))
        );
    }

    #[test]
    fn symbols_whose_hashes_collided_keep_their_own_values() {
        // Found by the property tests: the old key mixed high bytes poorly.
        let c = Config::parse("CONFIG_QI=y\nCONFIG_YD=m\n").unwrap();
        assert_eq!(c.value("CONFIG_QI"), Some(&Value::Yes));
        assert_eq!(c.value("CONFIG_YD"), Some(&Value::Module));
        // Every two-letter suffix of a name gets its own key.
        let names: Vec<String> = (b'A'..=b'Z')
            .flat_map(|a| (b'0'..=b'Z').map(move |b| format!("CONFIG_{}{}", a as char, b as char)))
            .collect();
        let keys: std::collections::HashSet<u64> = names.iter().map(|n| key(n)).collect();
        assert_eq!(keys.len(), names.len());
    }

    #[test]
    fn a_macro_list_leaves_other_symbols_unknown() {
        let c = Config::from_macros("CONFIG_A=y, CONFIG_B=m CONFIG_C=n").unwrap();
        assert_eq!(c.macro_of("CONFIG_A"), Macro::Defined(Some(1)));
        assert_eq!(c.macro_of("CONFIG_B_MODULE"), Macro::Defined(Some(1)));
        assert_eq!(c.macro_of("CONFIG_C"), Macro::Undefined);
        assert_eq!(c.macro_of("CONFIG_D"), Macro::Unknown);
        assert_eq!(c.macro_of("CONFIG_D_MODULE"), Macro::Unknown);
    }

    #[test]
    fn bad_lines_are_errors_naming_the_line() {
        let err = |text: &str| Config::parse(text).unwrap_err();
        assert_eq!(
            err("CONFIG_A=y\nCONFIG_B=maybe\n"),
            "line 2: expected a value of y, m, n, a number or a \"string\" after '='"
        );
        assert_eq!(
            err("FOO=y\n"),
            "line 1: expected a CONFIG_ symbol (CONFIG_ then letters, digits, _) before '='"
        );
        assert_eq!(
            err("\n\nCONFIG_S=\"open\n"),
            "line 3: expected a closing '\"' at the end of the string value"
        );
        assert_eq!(
            err("# c\nplain words\n"),
            "line 2: expected CONFIG_NAME=value, `# CONFIG_NAME is not set`, a # comment or nothing"
        );
        assert!(Config::from_macros(" , ").is_err());
        // A list is the user's own argument: quoted, cut short.
        assert_eq!(
            Config::from_macros("CONFIG_A=y,CONFIG_B=maybe").unwrap_err(),
            "'CONFIG_B=maybe': expected a value of y, m, n, a number or a \"string\" after '='"
        );
        let long = format!("CONFIG_{}=x", "A".repeat(10_000));
        let e = Config::from_macros(&long).unwrap_err();
        assert!(
            e.starts_with(&format!("'CONFIG_{}…': ", "A".repeat(33))),
            "{e}"
        );
    }

    #[test]
    fn parse_errors_never_quote_the_file() {
        // Over MCP, `active_config: "/etc/shadow"` echoed the file's first line.
        let shadow = "root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n";
        let e = Config::parse(shadow).unwrap_err();
        assert_eq!(
            e,
            "line 1: expected CONFIG_NAME=value, `# CONFIG_NAME is not set`, a # comment or nothing"
        );
        for text in [
            "secret_token=hunter2\n",
            "CONFIG_A=hunter2\n",
            "CONFIG_A=\"hunter2\n",
            "CONFIG_hunter2 = x y\n",
        ] {
            let e = Config::parse(text).unwrap_err();
            assert!(!e.contains("hunter2") && !e.contains("secret"), "{e}");
        }
    }
}
