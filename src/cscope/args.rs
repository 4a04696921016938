//! cscope's command line as `knav cscope` reads it: the options cscope itself takes, in the
//! forms Vim (`cscope -dl -f FILE`), cscope_maps.nvim (`cscope -dL -N SYMBOL -f FILE -P DIR`,
//! `cscope -f FILE -bqkv`) and emacs xcscope (`cscope -f cscope.out -d -L -N SYMBOL`,
//! `cscope -b -i cscope.files -f cscope.out`) give them, and knav's own long options
//! (`--active-config`, `--install-link`).

use std::ffi::OsString;
use std::path::PathBuf;

/// What the arguments ask.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Options {
    /// `-L`: one query, its lines, exit.
    pub one_shot: bool,
    /// `-l`: queries at the `>> ` prompt.
    pub line_mode: bool,
    /// `-b`: build the cross-reference only (knav: refresh the index), then exit.
    pub build: bool,
    /// `-C`: patterns of text queries match case-insensitively.
    pub fold_case: bool,
    /// `-N PATTERN`: the query.
    pub query: Option<(u8, String)>,
    /// `-P PATH`: the tree's top (the current directory by default).
    pub root: Option<PathBuf>,
    /// `-f FILE`: cscope's database file (knav keeps its index elsewhere; `-b` leaves an empty
    /// one where there is none, for the plugins that look for it before they ask).
    pub database: Option<PathBuf>,
    /// `--active-config FILE_OR_MACROS`: leave out what that configuration does not build, as
    /// the CLI's `--active-config` does.
    pub active_config: Option<String>,
    /// `--install-link DIR`: make `DIR/cscope` a symbolic link to this knav, and nothing else.
    pub install_link: Option<PathBuf>,
}

/// cscope's options that take a value (`-f cscope.out`, `-s DIR`, `-I DIR`, `-i FILE`,
/// `-p N`); knav reads `-P` and `-f`, and accepts the rest.
const VALUED: &str = "fFiIpPs";

/// cscope's options without a value that knav accepts and needs nothing from: `-d` (do not
/// update the database: knav's answers are always fresh), `-k` (kernel mode: knav never reads
/// /usr/include), `-q` (inverted index), `-c`, `-e`, `-R`, `-T`, `-u`, `-U`, `-v`, `-V`.
const IGNORED: &str = "dkqceRTuUvV";

/// Reads cscope's arguments (`-dL -1 name`, `-d -L -1name`, `-dl -f cscope.out`).
pub(super) fn parse(args: &[OsString]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(arg) = it.next() {
        if let Some(long) = arg.strip_prefix("--") {
            long_option(&mut o, long, &mut it)?;
            continue;
        }
        let Some(flags) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
            continue; // a source file named on the command line: the index has them all
        };
        for (i, c) in flags.char_indices() {
            let rest = &flags[i + c.len_utf8()..];
            let value = |it: &mut dyn Iterator<Item = String>| match rest {
                "" => it.next().ok_or_else(|| format!("-{c} needs a value")),
                _ => Ok(rest.to_string()),
            };
            if let Some(n) = c.to_digit(10) {
                o.query = Some((n as u8, value(&mut it)?));
                break;
            }
            if VALUED.contains(c) {
                let v = value(&mut it)?;
                match c {
                    'P' => o.root = Some(PathBuf::from(v)),
                    'f' => o.database = Some(PathBuf::from(v)),
                    _ => {}
                }
                break;
            }
            match c {
                'L' => o.one_shot = true,
                'l' => o.line_mode = true,
                'b' => o.build = true,
                'C' => o.fold_case = true,
                c if IGNORED.contains(c) => {}
                _ => return Err(format!("unknown option -{c}")),
            }
        }
    }
    Ok(o)
}

/// `--NAME VALUE` or `--NAME=VALUE` (`long` without its dashes): knav's own options.
fn long_option(
    o: &mut Options,
    long: &str,
    it: &mut dyn Iterator<Item = String>,
) -> Result<(), String> {
    let (name, inline) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (long, None),
    };
    let mut value = || {
        inline
            .clone()
            .or_else(|| it.next())
            .ok_or_else(|| format!("--{name} needs a value"))
    };
    match name {
        "active-config" => o.active_config = Some(value()?),
        "install-link" => o.install_link = Some(PathBuf::from(value()?)),
        _ => {
            return Err(format!(
                "unknown option --{name} (knav cscope's own are --active-config FILE and \
                 --install-link DIR)"
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn cscopes_arguments_are_read_as_vim_and_cscope_maps_give_them() {
        let o = parse(&args(&["-dL", "-1", "vfs_read"])).unwrap();
        assert!(o.one_shot && o.query == Some((1, "vfs_read".into())));
        let o = parse(&args(&["-d", "-L", "-3kmalloc", "-P", "/t"])).unwrap();
        assert_eq!(o.query, Some((3, "kmalloc".into())));
        assert_eq!(o.root, Some(PathBuf::from("/t")));
        let o = parse(&args(&["-dl", "-f", "cscope.out"])).unwrap();
        assert!(o.line_mode && o.query.is_none());
        assert_eq!(o.database, Some(PathBuf::from("cscope.out")));
        assert!(parse(&args(&["-Z"])).unwrap_err().contains("-Z"));
        assert!(parse(&args(&["-L", "-0"]))
            .unwrap_err()
            .contains("-0 needs a value"));
    }

    #[test]
    fn the_plugins_exact_command_lines_are_read() {
        // cscope_maps.nvim's query and its `:Cs db build`.
        let o = parse(&args(&[
            "-dL",
            "-3",
            "vfs_read",
            "-f",
            "/t/cscope.out",
            "-P",
            "/t",
        ]))
        .unwrap();
        assert!(o.one_shot && !o.build);
        assert_eq!(o.query, Some((3, "vfs_read".into())));
        assert_eq!(o.root, Some(PathBuf::from("/t")));
        let o = parse(&args(&["-f", "/t/cscope.out", "-bqkv"])).unwrap();
        assert!(o.build && o.query.is_none());
        assert_eq!(o.database, Some(PathBuf::from("/t/cscope.out")));
        // xcscope's query (its custom options first) and its indexing.
        let o = parse(&args(&[
            "-I/usr/include",
            "-k",
            "-q",
            "-f",
            "cscope.out",
            "-d",
            "-L",
            "-9",
            "pos",
        ]))
        .unwrap();
        assert_eq!(o.query, Some((9, "pos".into())));
        let o = parse(&args(&[
            "-k",
            "-b",
            "-i",
            "cscope.files",
            "-f",
            "cscope.out",
        ]))
        .unwrap();
        assert!(o.build);
    }

    #[test]
    fn knavs_own_long_options_take_a_value_either_way() {
        let o = parse(&args(&["--active-config", "a/.config", "-dL", "-0", "x"])).unwrap();
        assert_eq!(o.active_config.as_deref(), Some("a/.config"));
        let o = parse(&args(&["--install-link=/bin"])).unwrap();
        assert_eq!(o.install_link, Some(PathBuf::from("/bin")));
        assert!(parse(&args(&["--active-config"]))
            .unwrap_err()
            .contains("--active-config needs a value"));
        assert!(parse(&args(&["--frobnicate"]))
            .unwrap_err()
            .contains("--frobnicate"));
        // A pattern that starts with dashes is the query's, not an option.
        let o = parse(&args(&["-L", "-4", "--x"])).unwrap();
        assert_eq!(o.query, Some((4, "--x".into())));
    }
}
