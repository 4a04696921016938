//! Calls through a member that a function-like macro makes, learned from its `#define`: the
//! body of `#define map_read(map, ofs) (map)->read(map, ofs)` calls member `read` of its first
//! argument, `v4l2_subdev_call(sd, o, f, args...)` calls `__sd->ops->o->f` with `__sd` a
//! `struct v4l2_subdev *` of its own. [`crate::indirect`] makes a dispatch of each use in a
//! function body, its type from the arguments ([`MemberCall::encode`] is how the definers'
//! table keeps one).

use crate::lex::{tokens, Tok};

/// Where the member path of a [`MemberCall`] starts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Start {
    /// The argument at this index: its type is the use's.
    Param(usize),
    /// A variable the body declares of this struct tag (`struct v4l2_subdev *__sd = (sd);`).
    Tag(String),
    /// A struct object the body names that is neither (`v4l2_subdev_call_wrappers.o->f`): a
    /// global, typed later from its declarations.
    Global(String),
}

/// A member the path follows: named in the body, or by the argument at an index.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// A member named in the body.
    Member(String),
    /// The member the argument at this index names (`o` and `f` of `v4l2_subdev_call`).
    Param(usize),
}

/// A call through a member in a macro's body: the path from its start to the member called,
/// which is the last of `steps` (never empty).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberCall {
    /// What the path starts at.
    pub start: Start,
    /// The members followed, the one called last.
    pub steps: Vec<Step>,
}

impl MemberCall {
    /// `{0}.ops.{1}.{2}`, `v4l2_subdev.ops.{1}.{2}` or `=wrappers.{1}.{2}`: the start, then
    /// each step, an argument as `{index}`.
    pub fn encode(&self) -> String {
        let mut s = match &self.start {
            Start::Param(i) => format!("{{{i}}}"),
            Start::Tag(t) => t.clone(),
            Start::Global(g) => format!("={g}"),
        };
        for step in &self.steps {
            s.push('.');
            match step {
                Step::Member(m) => s.push_str(m),
                Step::Param(i) => s.push_str(&format!("{{{i}}}")),
            }
        }
        s
    }

    /// The number of arguments an invocation needs for this call: one past the highest index
    /// it reads.
    pub fn params(&self) -> usize {
        let start = match self.start {
            Start::Param(i) => i + 1,
            _ => 0,
        };
        let steps = self.steps.iter().map(|s| match s {
            Step::Param(i) => i + 1,
            Step::Member(_) => 0,
        });
        steps.max().unwrap_or(0).max(start)
    }

    /// What [`MemberCall::encode`] wrote; `None` when `s` is not that.
    pub fn decode(s: &str) -> Option<MemberCall> {
        let mut parts = s.split('.');
        let param = |p: &str| {
            p.strip_prefix('{')?
                .strip_suffix('}')?
                .parse::<usize>()
                .ok()
        };
        let first = parts.next()?;
        let start = match (param(first), first.strip_prefix('=')) {
            (Some(i), _) => Start::Param(i),
            (None, Some(g)) if is_ident(g) => Start::Global(g.to_string()),
            (None, None) if is_ident(first) => Start::Tag(first.to_string()),
            _ => return None,
        };
        let steps = parts
            .map(|p| match param(p) {
                Some(i) => Some(Step::Param(i)),
                None => is_ident(p).then(|| Step::Member(p.to_string())),
            })
            .collect::<Option<Vec<Step>>>()?;
        (!steps.is_empty()).then_some(MemberCall { start, steps })
    }
}

/// The paths under which the calls through members of a macro that the header at `path`
/// defines are made: every path for a header of `include/`; the architecture's own files for
/// one of `arch/<arch>/` (floppy.c's `fd_outb` is a call through `sun_fdops` on sparc only);
/// else the files of the header's directory and below (fbtft.h's `write_reg` is not the
/// `write_reg` function of another driver).
pub fn scope_of(path: &str) -> &str {
    if path.starts_with("include/") {
        return "";
    }
    if let Some(rest) = path.strip_prefix("arch/") {
        if let Some(slash) = rest.find('/') {
            return &path[..5 + slash + 1];
        }
    }
    path.rfind('/').map_or("", |slash| &path[..slash + 1])
}

/// A set of names that answers "surely not in it" for most other names without hashing them:
/// one bit of 65,536 per name, from its length and three of its bytes (no memory until a name
/// is added). Most calls in a file are of no macro that calls through members.
#[derive(Clone, Debug, Default)]
pub struct NameSketch(Vec<u64>);

impl NameSketch {
    fn bit(name: &[u8]) -> usize {
        let n = name.len();
        let (a, b, c) = match name {
            [] => (0, 0, 0),
            _ => (name[0], name[n / 2], name[n - 1]),
        };
        (n.wrapping_mul(0x9e37) ^ (a as usize) << 3 ^ (b as usize) << 7 ^ (c as usize) << 11)
            & 0xffff
    }

    /// Adds `name`.
    pub fn insert(&mut self, name: &[u8]) {
        if self.0.is_empty() {
            self.0 = vec![0; 1 << 10];
        }
        let b = NameSketch::bit(name);
        self.0[b / 64] |= 1 << (b % 64);
    }

    /// False when `name` was surely never added.
    pub fn may_hold(&self, name: &[u8]) -> bool {
        let b = NameSketch::bit(name);
        self.0.get(b / 64).is_some_and(|w| w & (1 << (b % 64)) != 0)
    }
}

fn is_ident(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| !b.is_ascii_digit())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The member access (`->` or `.`) ending right before token `j`: the index of its first token.
fn access_before(toks: &[Tok<'_>], j: usize) -> Option<usize> {
    match (
        j.checked_sub(2).map(|a| toks[a]),
        toks.get(j.wrapping_sub(1)),
    ) {
        (Some(Tok::Punct(b'-')), Some(Tok::Punct(b'>'))) => Some(j - 2),
        (_, Some(Tok::Punct(b'.'))) => Some(j - 1),
        _ => None,
    }
}

/// The calls through members that a `#define`'s `body` makes, with `params` its parameters
/// (the variadic one last, which never names a start or a member): `x->f(`, `(x)->a.f(`,
/// `(*x->f)(`, where `x` is a parameter, a variable the body declares of a struct type, or a
/// struct object it names with `.`.
pub fn learn(params: &[&str], variadic: bool, body: &[u8]) -> Vec<MemberCall> {
    if memchr::memmem::find(body, b"->").is_none() && memchr::memchr(b'.', body).is_none() {
        return Vec::new();
    }
    let toks = tokens(body);
    let named = if variadic {
        &params[..params.len().saturating_sub(1)]
    } else {
        params
    };
    let param = |w: &str| named.iter().position(|p| *p == w);
    // `struct t *name` declared in the body.
    let mut locals: Vec<(&str, &str)> = Vec::new();
    for (i, w) in toks.windows(3).enumerate() {
        if let [Tok::Ident("struct" | "union"), Tok::Ident(tag), next] = w {
            let mut j = i + 2;
            if *next == Tok::Punct(b'*') {
                j += 1;
            }
            if let Some(Tok::Ident(v)) = toks.get(j) {
                locals.push((v, tag));
            }
        }
    }
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Tok::Ident(field) = *t else { continue };
        // `x->f(` or `(*x->f)(`.
        let through = toks.get(i + 1) == Some(&Tok::Punct(b')'))
            && toks.get(i + 2) == Some(&Tok::Punct(b'('));
        if toks.get(i + 1) != Some(&Tok::Punct(b'(')) && !through {
            continue;
        }
        let mut steps = vec![field];
        let mut j = i;
        // The base name, the index of the path's first token, and whether `.` follows it.
        let (base, first, first_dot) = loop {
            let Some(a) = access_before(&toks, j) else {
                break (None, 0, false);
            };
            let dot = toks[a] == Tok::Punct(b'.');
            match a.checked_sub(1).map(|b| toks[b]) {
                // `(x)->f`: the path starts at `x`.
                Some(Tok::Punct(b')')) if a >= 3 && toks[a - 3] == Tok::Punct(b'(') => {
                    match toks[a - 2] {
                        Tok::Ident(x) => break (Some(x), a - 3, dot),
                        _ => break (None, 0, false),
                    }
                }
                Some(Tok::Ident(x)) => {
                    if access_before(&toks, a - 1).is_some() {
                        steps.push(x);
                        j = a - 1;
                    } else {
                        break (Some(x), a - 1, dot);
                    }
                }
                _ => break (None, 0, false),
            }
        };
        let Some(base) = base else { continue };
        // `to_foo(x)->f(`, `a.get(x)->f(`: a call's result, not the argument; `g_##x->f(`:
        // a pasted name.
        let before = first.checked_sub(1).map(|b| toks[b]);
        let result = toks[first] == Tok::Punct(b'(')
            && matches!(before, Some(Tok::Ident(w)) if w != "return")
            || matches!(before, Some(Tok::Punct(b')' | b']')));
        if result || before == Some(Tok::Paste) {
            continue;
        }
        // `(*x->f)(`, not `(x)->hi) (x)->hi = …`.
        if through
            && !(first >= 2
                && toks[first - 1] == Tok::Punct(b'*')
                && toks[first - 2] == Tok::Punct(b'('))
        {
            continue;
        }
        steps.reverse();
        let start = match (param(base), locals.iter().find(|(v, _)| *v == base)) {
            (Some(p), _) => Start::Param(p),
            (None, Some((_, tag))) => Start::Tag(tag.to_string()),
            (None, None) if first_dot && !params.contains(&base) => Start::Global(base.to_string()),
            _ => continue,
        };
        let steps: Option<Vec<Step>> = steps
            .iter()
            .map(|s| match param(s) {
                Some(p) => Some(Step::Param(p)),
                None if params.contains(s) => None,
                None => Some(Step::Member(s.to_string())),
            })
            .collect();
        let Some(steps) = steps else { continue };
        let call = MemberCall { start, steps };
        if !out.contains(&call) {
            out.push(call);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learned(params: &[&str], variadic: bool, body: &str) -> Vec<String> {
        learn(params, variadic, body.as_bytes())
            .iter()
            .map(MemberCall::encode)
            .collect()
    }

    #[test]
    fn calls_through_a_parameter_a_local_and_a_global_are_learned() {
        assert_eq!(
            learned(&["map", "ofs"], false, " (map)->read(map, ofs)"),
            ["{0}.read"]
        );
        assert_eq!(
            learned(&["p", "f", "args"], true, " ((p)->f(args))"),
            ["{0}.{1}"]
        );
        // v4l2_subdev_call, cut down.
        let body = " ({ struct v4l2_subdev *__sd = (sd); int __result; \
                    if (v4l2_subdev_call_wrappers.o && v4l2_subdev_call_wrappers.o->f) \
                    __result = v4l2_subdev_call_wrappers.o->f(__sd, ##args); \
                    else __result = __sd->ops->o->f(__sd, ##args); __result; })";
        assert_eq!(
            learned(&["sd", "o", "f", "args"], true, body),
            [
                "=v4l2_subdev_call_wrappers.{1}.{2}",
                "v4l2_subdev.ops.{1}.{2}"
            ]
        );
        assert_eq!(
            learned(&["x"], false, " (*(x)->ops->op)(x)"),
            ["{0}.ops.op"]
        );
        // A struct local by value, and `return (x)->…`.
        assert_eq!(
            learned(
                &["x"],
                false,
                " ({ struct foo tmp = *(x); tmp.ops->f(&tmp); })"
            ),
            ["foo.ops.f"]
        );
        assert_eq!(learned(&["x"], false, " return (x)->f(x)"), ["{0}.f"]);
        // `a.get(x)` calls through global `a`; what it returns is not typed.
        assert_eq!(learned(&["x"], false, " a.get(x)->f(x)"), ["=a.get"]);
    }

    #[test]
    fn no_member_call_is_learned_from_other_bodies() {
        // A plain call, a call of a parameter, a member read, a call through a local of no
        // struct type, a member named by the variadic parameter.
        for (params, body) in [
            (&["x"][..], " foo(x)"),
            (&["f", "x"][..], " f(x)"),
            (&["x"][..], " ((x)->count)"),
            (&["x"][..], " ({ int *p = x; p->f(); })"),
            (&["x", "args"][..], " (x)->args(1)"),
            // A call's result, a pasted name (the review's cases).
            (&["x"][..], " to_foo(x)->ops->start(x)"),
            (&["x"][..], " g_##x->f()"),
            (&["x", "op"][..], " (x)->ops_##op->f(x)"),
            // ipw2100.h's INC_STAT: a member in parentheses before a parenthesis.
            (
                &["x"][..],
                " do { if (++(x)->value > (x)->hi) (x)->hi = (x)->value; } while (0)",
            ),
        ] {
            assert_eq!(learned(params, true, body), Vec::<String>::new(), "{body}");
        }
    }

    #[test]
    fn a_headers_macros_apply_where_it_is_seen() {
        assert_eq!(scope_of("include/media/v4l2-subdev.h"), "");
        assert_eq!(
            scope_of("arch/sparc/include/asm/floppy_64.h"),
            "arch/sparc/"
        );
        assert_eq!(
            scope_of("drivers/staging/fbtft/fbtft.h"),
            "drivers/staging/fbtft/"
        );
        assert_eq!(scope_of("top.h"), "");
    }

    #[test]
    fn a_sketch_holds_what_was_added() {
        let mut s = NameSketch::default();
        assert!(!s.may_hold(b"v4l2_subdev_call"));
        for n in ["v4l2_subdev_call", "map_read", "", "x"] {
            s.insert(n.as_bytes());
        }
        for n in ["v4l2_subdev_call", "map_read", "", "x"] {
            assert!(s.may_hold(n.as_bytes()), "{n}");
        }
        assert!(!s.may_hold(b"kfree"));
    }

    #[test]
    fn a_member_call_survives_its_encoding() {
        for s in [
            "{0}.ops.{1}.{2}",
            "v4l2_subdev.ops.{1}.{2}",
            "=w.{1}",
            "{0}.read",
        ] {
            assert_eq!(
                MemberCall::decode(s).map(|c| c.encode()).as_deref(),
                Some(s)
            );
        }
        for s in ["{0}", "", "{x}.f", "a b.f", "{0}..f"] {
            assert_eq!(MemberCall::decode(s), None, "{s}");
        }
    }
}
