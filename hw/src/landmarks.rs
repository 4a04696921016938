//! Where the readers of one C file look in its tokens, found in one pass: the bracket that
//! closes each one that opens, the `struct` keywords a match table may start at, the `= {`
//! of initializers, the `MODULE_DEVICE_TABLE`s and the calls. Each reader then visits its own
//! few places instead of every token (a file's tokens were walked six times).

use crate::cmacro_lex::{Kind, Tok};

/// The places of one token list the readers look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Landmarks {
    /// For each token, the index of the bracket that closes it when it opens one (any of `(`,
    /// `[`, `{` closed by any of `)`, `]`, `}`, as depth counts them); `u32::MAX` otherwise.
    pub(crate) close: Vec<u32>,
    /// Each `struct` followed by a tag that ends in `_device_id`.
    pub(crate) tables: Vec<usize>,
    /// Each `=` followed by `{`.
    pub(crate) initializers: Vec<usize>,
    /// Each `MODULE_DEVICE_TABLE`.
    pub(crate) exports: Vec<usize>,
    /// Each identifier followed by a `(` that closes (what a reader takes for a call; `t[` is
    /// none).
    pub(crate) calls: Vec<usize>,
}

impl Landmarks {
    /// The landmarks of `toks`.
    pub(crate) fn of(toks: &[Tok<'_>]) -> Self {
        /// What the previous token was, for the one a `(`, `{` or tag completes.
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum Last {
            Other,
            Ident,
            Struct,
            Assign,
        }
        let mut m = Self {
            close: vec![u32::MAX; toks.len()],
            ..Self::default()
        };
        let mut open = Vec::new();
        let mut parens = Vec::new();
        let mut last = Last::Other;
        for (k, t) in toks.iter().enumerate() {
            let text = t.text.as_bytes();
            last = match t.kind {
                Kind::Punct => match text {
                    [b'('] => {
                        if matches!(last, Last::Ident | Last::Struct) {
                            parens.push(k - 1);
                        }
                        open.push(k);
                        Last::Other
                    }
                    [b'{'] => {
                        if last == Last::Assign {
                            m.initializers.push(k - 1);
                        }
                        open.push(k);
                        Last::Other
                    }
                    [b'['] => {
                        open.push(k);
                        Last::Other
                    }
                    [b'}' | b')' | b']'] => {
                        if let Some(o) = open.pop() {
                            m.close[o] = u32::try_from(k).unwrap_or(u32::MAX);
                        }
                        Last::Other
                    }
                    [b'='] => Last::Assign,
                    _ => Last::Other,
                },
                Kind::Ident => {
                    if last == Last::Struct && text.ends_with(b"_device_id") {
                        m.tables.push(k - 1);
                    }
                    match text {
                        b"struct" => Last::Struct,
                        b"MODULE_DEVICE_TABLE" => {
                            m.exports.push(k);
                            Last::Ident
                        }
                        _ => Last::Ident,
                    }
                }
                _ => Last::Other,
            };
        }
        m.calls = parens
            .into_iter()
            .filter(|&k| m.close[k + 1] != u32::MAX)
            .collect();
        m
    }

    /// The index of the bracket that closes the one at `open`.
    pub(crate) fn closer(&self, open: usize) -> Option<usize> {
        match *self.close.get(open)? {
            u32::MAX => None,
            c => usize::try_from(c).ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmacro_lex::lex;
    use crate::idtable::{called, closers};

    #[test]
    fn the_places_each_reader_looks_at() {
        let src = "static const struct pci_device_id t[] = { { PCI_VDEVICE(INTEL, 1) }, {} };\nMODULE_DEVICE_TABLE(pci, t);\nstruct foo x = { .a = f(g(1), (2)) };\nint y = h(;\n";
        let l = lex(src);
        let m = Landmarks::of(&l.toks);
        assert_eq!(m.close, closers(&l.toks));
        let text =
            |ks: &[usize]| -> Vec<&str> { ks.iter().map(|&k| l.toks[k].text.as_ref()).collect() };
        assert_eq!(text(&m.tables), ["struct"]);
        assert_eq!(m.tables, [2]);
        assert_eq!(text(&m.exports), ["MODULE_DEVICE_TABLE"]);
        assert_eq!(m.initializers.len(), 2);
        assert_eq!(
            text(&m.calls),
            ["PCI_VDEVICE", "MODULE_DEVICE_TABLE", "f", "g"]
        );
        let called: Vec<usize> = called(&l.toks)
            .filter(|(k, _)| l.toks[k + 1].is("("))
            .map(|(k, _)| k)
            .collect();
        assert_eq!(m.calls, called, "`t[` is no call; h( never closes");
        assert_eq!(m.closer(m.calls[0] + 1), Some(m.calls[0] + 5));
    }
}
