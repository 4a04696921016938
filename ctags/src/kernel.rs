//! The kernel's ctags option set: annotation macros that would otherwise confuse ctags's C parser.

/// The option file, one option per line, `#` comments.
pub const OPTIONS: &str = include_str!("../kernel.ctags");

/// The options of [`OPTIONS`], ready to pass to ctags.
pub fn options() -> Vec<String> {
    OPTIONS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .flat_map(|l| match l.split_once(' ') {
            Some((flag, value)) => vec![flag.to_string(), value.trim().to_string()],
            None => vec![l.to_string()],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn options_are_flag_value_pairs() {
        let opts = super::options();
        assert_eq!(opts.len() % 2, 0);
        assert!(opts
            .chunks(2)
            .all(|p| p[0] == "-I" && !p[1].contains(' ') || p[0] == "-D" && p[1].contains('=')));
        assert!(opts.iter().any(|o| o.contains("__read_mostly")));
    }
}
