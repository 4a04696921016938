//! The walks over a parsed binding schema: the compatibles under `properties: compatible:`, the
//! properties and patterns listed at the top and in the combinators' branches, and the `$ref`s.
//! Every walk is bounded by [`MAX_DEPTH`].

use std::collections::HashSet;

use saphyr::{MarkedYaml, Scalar, YamlData};

use super::{Binding, Named, Property};

/// How deep the walks go into nested schemas.
const MAX_DEPTH: usize = 32;

/// The binding that the top mapping of a schema describes.
pub(super) fn binding(top: &MarkedYaml) -> Binding {
    let mut b = Binding {
        id: get(top, "$id")
            .and_then(|(_, v)| text(v))
            .map(str::to_string),
        title: get(top, "title")
            .and_then(|(_, v)| text(v))
            .map(str::to_string),
        select_false: is_false(top, "select"),
        additional_properties_false: is_false(top, "additionalProperties"),
        unevaluated_properties_false: is_false(top, "unevaluatedProperties"),
        ..Binding::default()
    };
    if let Some((_, c)) = get(top, "properties").and_then(|(_, p)| get(p, "compatible")) {
        let mut seen = HashSet::new();
        compatibles(c, &mut b.compatibles, &mut seen, 0);
    }
    let mut seen = Seen::default();
    section(top, &mut b, &mut seen, 0);
    b
}

/// The 1-based line a node starts on.
pub(super) fn line(node: &MarkedYaml) -> u32 {
    u32::try_from(node.span.start.line()).unwrap_or(u32::MAX)
}

/// A scalar's text (strings, and keys left as written), through a tag.
fn text<'a>(node: &'a MarkedYaml) -> Option<&'a str> {
    match &node.data {
        YamlData::Value(Scalar::String(s)) => Some(s),
        YamlData::Representation(s, _, _) => Some(s),
        YamlData::Tagged(_, inner) => match &inner.data {
            YamlData::Value(Scalar::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// The key and value of `key` in a mapping.
fn get<'a>(node: &'a MarkedYaml, key: &str) -> Option<(&'a MarkedYaml<'a>, &'a MarkedYaml<'a>)> {
    match &node.data {
        YamlData::Mapping(m) => m.iter().find(|(k, _)| text(k) == Some(key)),
        _ => None,
    }
}

/// The entries of a sequence (none for anything else).
fn entries<'a>(node: &'a MarkedYaml<'a>) -> &'a [MarkedYaml<'a>] {
    match &node.data {
        YamlData::Sequence(s) => s,
        _ => &[],
    }
}

/// Whether `key` of a mapping is the boolean `false`.
fn is_false(node: &MarkedYaml, key: &str) -> bool {
    get(node, key).is_some_and(|(_, v)| v.data.as_bool() == Some(false))
}

/// The strings a `compatible` schema allows, appended to `out` once each.
fn compatibles(node: &MarkedYaml, out: &mut Vec<Named>, seen: &mut HashSet<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut add = |v: &MarkedYaml| {
        if let Some(s) = text(v) {
            if seen.insert(s.to_string()) {
                out.push(Named {
                    name: s.to_string(),
                    line: line(v),
                });
            }
        }
    };
    if let Some((_, v)) = get(node, "const") {
        add(v);
    }
    if let Some((_, v)) = get(node, "enum") {
        entries(v).iter().for_each(&mut add);
    }
    let mut nested: Vec<&MarkedYaml> = Vec::new();
    if let Some((_, items)) = get(node, "items") {
        match &items.data {
            YamlData::Sequence(s) => nested.extend(s.iter()),
            _ => nested.push(items),
        }
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some((_, v)) = get(node, key) {
            nested.extend(entries(v));
        }
    }
    if let Some((_, v)) = get(node, "contains") {
        nested.push(v);
    }
    for n in nested {
        compatibles(n, out, seen, depth + 1);
    }
}

/// What has been recorded, so that each property, pattern and `$ref` is listed once.
#[derive(Default)]
struct Seen {
    properties: HashSet<String>,
    patterns: HashSet<String>,
    refs: HashSet<String>,
}

/// The properties, patterns and `$ref`s of one schema level, then of its combinators' entries
/// and `then` / `else` branches.
fn section(node: &MarkedYaml, b: &mut Binding, seen: &mut Seen, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some((_, YamlData::Mapping(m))) = get(node, "properties").map(|(k, v)| (k, &v.data)) {
        for (k, v) in m {
            let Some(name) = text(k).filter(|n| !n.starts_with('$')) else {
                continue;
            };
            if seen.properties.insert(name.to_string()) {
                let mut refs = Vec::new();
                property_refs(v, &mut refs, 0);
                b.properties.push(Property {
                    name: name.to_string(),
                    line: line(k),
                    refs,
                });
            }
        }
    }
    if let Some((_, YamlData::Mapping(m))) =
        get(node, "patternProperties").map(|(k, v)| (k, &v.data))
    {
        for (k, _) in m {
            if let Some(name) = text(k).filter(|n| seen.patterns.insert(n.to_string())) {
                b.pattern_properties.push(Named {
                    name: name.to_string(),
                    line: line(k),
                });
            }
        }
    }
    if let Some((_, v)) = get(node, "$ref") {
        if let Some(r) = text(v).filter(|r| seen.refs.insert(r.to_string())) {
            b.refs.push(Named {
                name: r.to_string(),
                line: line(v),
            });
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some((_, v)) = get(node, key) {
            for e in entries(v) {
                section(e, b, seen, depth + 1);
            }
        }
    }
    for key in ["then", "else"] {
        if let Some((_, v)) = get(node, key) {
            section(v, b, seen, depth + 1);
        }
    }
}

/// The `$ref`s of a property's schema: its own and those of its combinators' entries.
fn property_refs(node: &MarkedYaml, out: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(r) = get(node, "$ref").and_then(|(_, v)| text(v)) {
        if !out.iter().any(|o| o == r) {
            out.push(r.to_string());
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some((_, v)) = get(node, key) {
            for e in entries(v) {
                property_refs(e, out, depth + 1);
            }
        }
    }
}
