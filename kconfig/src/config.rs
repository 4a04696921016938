//! A kernel `.config` (`CONFIG_X=y`, `=m`, strings, numbers, `# CONFIG_X is not set`) or a
//! short macro list (`CONFIG_A=y,CONFIG_B=m`), and the preprocessor macros it defines, exactly
//! as `scripts/kconfig/confdata.c` writes `autoconf.h`: `=y` defines `CONFIG_X` as 1, `=m`
//! defines `CONFIG_X_MODULE` (and not `CONFIG_X`), strings and numbers define `CONFIG_X` as
//! their value, and an unset symbol defines nothing.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Symbols are kept by a 64-bit hash of their name, not the name: a Debian .config sets
/// 7,000 of them and is parsed per query, and a map of strings spends its time allocating.
/// (Two names of one tree colliding in 64 bits is not a practical concern.)
fn key(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for chunk in name.as_bytes().chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    h ^ (h >> 29) ^ name.len() as u64
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
    /// Parses a `.config` file's text; an error names the line.
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
                    parse_assignment(line.trim_end_matches('\r'))
                        .map_err(|e| format!("line {}: {e}", n + 1))?
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
            let (name, value) = parse_assignment(item)?;
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

fn parse_assignment(item: &str) -> Result<(&str, Value), String> {
    let eq = item
        .bytes()
        .position(|b| b == b'=')
        .ok_or_else(|| format!("'{item}' is not NAME=value"))?;
    let (name, raw) = (item[..eq].trim(), &item[eq + 1..]);
    if !name.starts_with("CONFIG_") || !is_symbol_name(name) {
        return Err(format!("'{name}' is not a CONFIG_ symbol"));
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
                .ok_or_else(|| format!("{name}: unterminated string {raw}"))?;
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
            Value::Number(
                n.ok_or_else(|| format!("{name}: '{raw}' is not y, m, n, a number or a string"))?,
            )
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
        assert!(Config::parse("CONFIG_A=y\nCONFIG_B=maybe\n")
            .unwrap_err()
            .starts_with("line 2:"));
        assert!(Config::parse("FOO=y\n")
            .unwrap_err()
            .contains("not a CONFIG_ symbol"));
        assert!(Config::parse("CONFIG_S=\"open\n")
            .unwrap_err()
            .contains("unterminated"));
        assert!(Config::from_macros(" , ").is_err());
    }
}
