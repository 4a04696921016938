//! The texts one of which a C file must hold to say anything about hardware: a test far
//! cheaper than lexing, which passes over most of the kernel's files at once.

use aho_corasick::packed;
use memchr::memmem::Finder;

use crate::driver_compat::{Declarers, MATCHERS};
use crate::driver_props::{FUNCTIONS, PREFIXES};

/// What the table and driver readers match tokens by: a table's struct tag (`pci_device_id`),
/// a designator naming a table (`.of_match_table`, `.id_table`), `MODULE_DEVICE_TABLE`.
const TABLES: [&str; 4] = [
    "_device_id",
    "match_table",
    "id_table",
    "MODULE_DEVICE_TABLE",
];

/// Texts one of which every file that says something holds, each reader matching tokens that
/// contain one: [`TABLES`], the matchers of compatibles (`of_device_is_compatible`), the
/// property readers' names and prefixes (`of_property_`), the names of the declarers of the
/// `OF_DECLARE` family and of the shared macros that make a table or a driver. A file's own
/// declarers, makers and wrappers name one of these in their bodies.
#[derive(Clone, Debug, Default)]
pub(crate) struct Needles {
    search: Search,
    /// The length of the shortest needle: a shorter token holds none.
    shortest: usize,
}

/// How the needles are searched for.
#[derive(Clone, Debug, Default)]
enum Search {
    /// No needles: every text holds one (a context built from nothing filters nothing).
    #[default]
    All,
    /// All needles in one pass (Teddy, where the CPU has the vector instructions for it).
    Packed(packed::Searcher),
    /// One pass per needle.
    Each(Vec<Finder<'static>>),
}

impl Needles {
    /// The needles for the shared `declarers` and `makers`; a text that holds another needle
    /// is left out (`CLK_OF_DECLARE` holds `_OF_DECLARE`).
    pub(crate) fn for_readers(declarers: &Declarers, makers: &[String]) -> Self {
        let mut candidates: Vec<&str> = TABLES
            .iter()
            .copied()
            .chain(MATCHERS.iter().map(|(name, _)| *name))
            .chain(PREFIXES)
            .chain(FUNCTIONS)
            .chain(declarers.names())
            .chain(makers.iter().map(String::as_str))
            .collect();
        candidates.sort_by_key(|t| (t.len(), *t));
        let mut texts: Vec<&str> = Vec::new();
        for t in candidates {
            if !texts.iter().any(|n| t.contains(n)) {
                texts.push(t);
            }
        }
        Self::new(&texts)
    }

    /// The needles `texts` (none: no text holds one).
    pub(crate) fn new(texts: &[&str]) -> Self {
        let packed = (!texts.is_empty())
            .then(|| packed::Config::new().builder().extend(texts).build())
            .flatten();
        let search = match packed {
            Some(s) => Search::Packed(s),
            None => Search::Each(
                texts
                    .iter()
                    .map(|n| Finder::new(n.as_bytes()).into_owned())
                    .collect(),
            ),
        };
        let shortest = texts.iter().map(|t| t.len()).min().unwrap_or(0);
        Self { search, shortest }
    }

    /// False for the needles of a context built from nothing, which every text holds.
    pub(crate) fn filter(&self) -> bool {
        !matches!(self.search, Search::All)
    }

    /// True when `text` holds one of the needles.
    pub(crate) fn in_bytes(&self, text: &[u8]) -> bool {
        match &self.search {
            Search::All => true,
            Search::Packed(s) => s.find(text).is_some(),
            Search::Each(f) => f.iter().any(|f| f.find(text).is_some()),
        }
    }

    /// True when the text of a token holds one of the needles (never, for no needles).
    pub(crate) fn in_token(&self, text: &str) -> bool {
        text.len() >= self.shortest && self.filter() && self.in_bytes(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readers_names_and_no_more() {
        let n = Needles::for_readers(
            &Declarers::default(),
            &["IRQCHIP_PLATFORM_DRIVER_END".into()],
        );
        for holds in [
            "static const struct pci_device_id t[] = {",
            ".of_match_table = of_match_ptr(x),",
            "if (of_device_is_compatible(np, \"x\"))",
            "of_property_read_u32(np, \"reg\", &r);",
            "np = of_parse_phandle(np, \"syscon\", 0);",
            "CLK_OF_DECLARE(a, \"b\", c);",
            "IRQCHIP_PLATFORM_DRIVER_END(meson_gpio_intc)",
        ] {
            assert!(n.in_bytes(holds.as_bytes()), "{holds}");
        }
        for holds_not in [
            "DECLARE_BITMAP(map, 64);",
            "/* a compatible property */",
            "struct drm_property *prop;",
            "",
        ] {
            assert!(!n.in_bytes(holds_not.as_bytes()), "{holds_not}");
        }
        assert!(n.in_token("of_get_named_gpio"));
        assert!(Needles::default().in_bytes(b"int x;"));
        assert!(!Needles::default().in_token("of_property_read_u32"));
        assert!(!Needles::new(&[]).in_bytes(b"int x;"));
    }
}
