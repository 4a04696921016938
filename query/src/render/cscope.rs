//! An envelope as cscope's line-oriented output: one `file function line text` line per
//! result, `<global>` for a line outside any function, what vim's `:cscope`, emacs xcscope and
//! cscope_maps.nvim read back from `cscope -dL -N` or the `-dl` prompt.

use crate::envelope::{Envelope, Results};

/// The function column of a line outside any function.
pub const GLOBAL: &str = "<global>";

/// The cscope lines of `env`'s results (none for an error or a result cscope has no query for).
pub fn cscope_lines(env: &Envelope) -> Vec<String> {
    let line = |path: &str, function: Option<&str>, n: u32, text: &str| {
        format!(
            "{} {} {n} {}",
            one_field(path),
            one_field(function.unwrap_or(GLOBAL)),
            one_line(text.trim())
        )
    };
    let Some(results) = &env.results else {
        return Vec::new();
    };
    match results {
        Results::Records(records) => records
            .iter()
            .map(|r| {
                // A definition's function column is its own name (as cscope's query 1), a
                // reference's the function it is in.
                let function = match r.role.as_deref() {
                    None => Some(r.symbol.as_str()),
                    Some(_) => r.caller.as_deref(),
                };
                line(&r.path, function, r.line, &r.snippet)
            })
            .collect(),
        Results::Calls(calls) => calls
            .iter()
            .map(|c| {
                // A call through a function pointer says so in the text column.
                let text = match &c.via {
                    Some(via) => format!("{} /* via {via} */", c.snippet.trim()),
                    None => c.snippet.clone(),
                };
                line(&c.path, c.caller.as_deref(), c.line, &text)
            })
            .collect(),
        Results::Callees(c) => c
            .callees
            .iter()
            .map(|callee| {
                let text = match &callee.defined_at {
                    Some(at) => format!("{}() /* {at} */", callee.symbol),
                    None => format!("{}()", callee.symbol),
                };
                line(&c.path, Some(&callee.symbol), callee.line, &text)
            })
            .collect(),
        Results::Hits(hits) => hits
            .iter()
            .map(|h| {
                let function = h.enclosing.as_ref().map(|e| e.symbol.as_str());
                line(&h.path, function, h.line, &h.snippet)
            })
            .collect(),
        Results::Files(files) => files
            .iter()
            .map(|f| format!("{} <unknown> 1 <unknown>", one_field(&f.path)))
            .collect(),
        _ => Vec::new(),
    }
}

/// `s` as one space-free field (a path or name with a space would shift the columns).
fn one_field(s: &str) -> String {
    s.replace([' ', '\t', '\n', '\r'], "_")
}

/// `s` on one line.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{CallSite, Record};

    #[test]
    fn a_definition_names_itself_a_reference_its_function_and_file_scope_is_global() {
        let mut env = Envelope::new("find_references", "/t");
        let rec = |role: Option<&str>, caller: Option<&str>| Record {
            symbol: "kmap".into(),
            path: "mm/a b.c".into(),
            line: 7,
            snippet: "\tx = kmap(p);\n".into(),
            role: role.map(String::from),
            caller: caller.map(String::from),
            ..Record::default()
        };
        env.results = Some(Results::Records(vec![
            rec(None, None),
            rec(Some("call"), Some("f")),
            rec(Some("ref"), None),
        ]));
        assert_eq!(
            cscope_lines(&env),
            [
                "mm/a_b.c kmap 7 x = kmap(p);",
                "mm/a_b.c f 7 x = kmap(p);",
                "mm/a_b.c <global> 7 x = kmap(p);"
            ]
        );
        env.results = Some(Results::Calls(vec![CallSite {
            caller: Some("g".into()),
            path: "fs/x.c".into(),
            line: 3,
            snippet: "ops->read(f);".into(),
            guard: None,
            active: None,
            via: Some("file_operations.read".into()),
            registered_at: None,
            certainty: None,
            at_col: None,
            caller_at: None,
        }]));
        assert_eq!(
            cscope_lines(&env),
            ["fs/x.c g 3 ops->read(f); /* via file_operations.read */"]
        );
        env.results = None;
        assert!(cscope_lines(&env).is_empty());
    }
}
