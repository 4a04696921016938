//! A local header a C file includes (`#include "hw.h"`), its `#define`s lexed once so that
//! every file including it reads them without lexing them again (a driver's headers are
//! included by each of its files), with what the reader's cheap tests need to know of it.

use crate::cmacro::Macros;
use crate::cmacro_lex::{defines, text};
use crate::driver_file::{makes_table_or_driver, Context};

/// One local header's `#define`s, owned (`Send` and `Sync`: built once, read by every file
/// that includes it, from any thread), and what they hold for the [`Context`] it was made
/// with; read with another context, a file may be passed over wrongly.
#[derive(Clone, Debug, Default)]
pub struct LocalHeader {
    /// Its macros, in the order of their `#define`s (a later one wins).
    pub(crate) macros: Macros<'static>,
    /// Its bytes hold a needle (`Context`'s texts a file must hold to say anything).
    pub(crate) holds_needle: bool,
    /// The names of its macros one of whose definitions holds a needle in its body: a file
    /// that holds no needle itself says something only if it names one of them.
    pub(crate) needle_macros: Vec<String>,
    /// One of its macros' bodies names a declarer of the `OF_DECLARE` family, so that it may
    /// add declarers of its own.
    pub(crate) names_a_declarer: bool,
    /// The names of its macros that declare a table or a driver structure.
    pub(crate) makers: Vec<String>,
}

impl LocalHeader {
    /// Reads a local header's bytes for files read with `cx`: only its `#define`s, found by
    /// their `#` at the start of a line.
    pub fn new(src: &[u8], cx: &Context) -> Self {
        let text = text(src);
        let defs = defines(&text);
        let mut macros = Macros::new();
        let mut needle_macros: Vec<String> = Vec::new();
        let mut names_a_declarer = false;
        for d in &defs {
            macros.add_owned(d);
            let holds = d.body.iter().any(|t| cx.needles.in_token(&t.text));
            if holds && !needle_macros.iter().any(|n| n == d.name) {
                needle_macros.push(d.name.to_string());
            }
            names_a_declarer |= cx.declarers.any_in(&d.body);
        }
        let makers = macros
            .iter()
            .filter(|(_, m)| makes_table_or_driver(m))
            .map(|(n, _)| n.to_string())
            .collect();
        Self {
            macros,
            holds_needle: cx.needles.in_bytes(src),
            needle_macros,
            names_a_declarer,
            makers,
        }
    }

    /// Its macros.
    pub fn macros(&self) -> &Macros<'static> {
        &self.macros
    }
}
