//! Edits lose nothing (SECURITY.md, issue 45): each finding of the hostile probe where
//! replace_symbol or insert_symbol reported success and lost code that shared the definition's
//! first or last line, tested by name; then a property test over random C files that pack
//! functions, structs with declarators, typedefs of struct bodies, variables, `#define`s
//! with trailing comments on shared lines, unions nested in structs with and without their
//! declarator, and struct members made by a macro: every edit is refused (the file byte for
//! byte as it was) or keeps every other definition's text (and, for a nested union, the
//! enclosing struct's code and its declarator).

use proptest::prelude::*;
use serde_json::json;

mod common;
use common::client::Client;
use common::{tree, Tree};

/// A served tree with its index built.
fn serve(t: &Tree, first: &str) -> Client {
    let root = t.root.display().to_string();
    let mut c = Client::start(&["--root", &root], &t.root, &[]);
    let (text, err) = c.call_when_built("find_definition", json!({"symbol": first}));
    assert!(!err, "{text}");
    c
}

/// `a.c` holding `text`, served; the client and the tree.
fn served(name: &str, text: &str, first: &str) -> (Tree, Client) {
    let t = tree(name, &[("a.c", text)]);
    let c = serve(&t, first);
    (t, c)
}

fn read(t: &Tree) -> String {
    std::fs::read_to_string(t.root.join("a.c")).unwrap()
}

/// A tool's answer without the `Error: ` of a refusal and the final newline.
fn plain((text, err): (String, bool)) -> (String, bool) {
    let text = text.strip_prefix("Error: ").unwrap_or(&text).trim_end();
    (text.to_string(), err)
}

fn replace(c: &mut Client, symbol: &str, source: &str) -> (String, bool) {
    plain(c.call(
        "replace_symbol",
        json!({"file": "a.c", "symbol": symbol, "source": source}),
    ))
}

fn insert(c: &mut Client, anchor: &str, position: &str, source: &str) -> (String, bool) {
    plain(c.call(
        "insert_symbol",
        json!({"file": "a.c", "anchor": anchor, "position": position, "source": source}),
    ))
}

const NEW_F1: &str = "int f1(void)\n{\n\treturn 2;\n}\n";

#[test]
fn a_declaration_after_the_closing_brace_survives_a_replace() {
    let text = "int f1(void)\n{\n\treturn 1;\n} int after_decl = 3;\nint g;\n";
    let (t, mut c) = served("edits-after-decl", text, "f1");
    let (answer, err) = replace(&mut c, "f1", NEW_F1);
    assert!(!err, "{answer}");
    assert!(answer.contains("replaced lines 1-4 of a.c"), "{answer}");
    assert_eq!(
        read(&t),
        "int f1(void)\n{\n\treturn 2;\n} int after_decl = 3;\nint g;\n"
    );
    // And the variable itself, after the brace: the brace stays.
    let (answer, err) = replace(&mut c, "after_decl", "long after_decl = 4;\n");
    assert!(!err, "{answer}");
    assert_eq!(
        read(&t),
        "int f1(void)\n{\n\treturn 2;\n} long after_decl = 4;\nint g;\n"
    );
}

#[test]
fn a_source_ending_in_a_line_comment_does_not_swallow_the_code_kept_after_it() {
    let text = "int a(void) { return 1; } int b(void) { return 2; }\n";
    let (t, mut c) = served("edits-comment-at-end", text, "a");
    let (answer, err) = replace(&mut c, "a", "int a(void) { return 10; } // ten\n");
    assert!(err, "{answer}");
    assert_eq!(
        answer,
        "refused: the source ends in a `//` comment or a directive, which would take in the code \
         after it on line 1 (`int a(void) { return 1; } int b(void) { return 2; }`); end the \
         source with code, or put that code on a line of its own first; a.c is unchanged"
    );
    assert_eq!(read(&t), text);
}

#[test]
fn two_functions_on_one_line_replacing_the_first_keeps_the_second() {
    let text = "int a(void) { return 1; } int b(void) { return 2; }\n";
    let (t, mut c) = served("edits-two-on-a-line", text, "a");
    let (answer, err) = replace(&mut c, "a", "int a(void) { return 10; }\n");
    assert!(!err, "{answer}");
    assert_eq!(
        read(&t),
        "int a(void) { return 10; } int b(void) { return 2; }\n"
    );
    let (answer, err) = replace(&mut c, "b", "int b(void) { return 20; }\n");
    assert!(!err, "{answer}");
    assert_eq!(
        read(&t),
        "int a(void) { return 10; } int b(void) { return 20; }\n"
    );
}

#[test]
fn a_struct_with_declarators_is_not_replaced_without_its_variables() {
    let text = "struct target {\n\tint x;\n} instance_var, *instance_ptr;\nint g;\n";
    let (t, mut c) = served("edits-struct-declarators", text, "target");
    let (answer, err) = replace(&mut c, "target", "struct target {\n\tlong y;\n};\n");
    assert!(err, "{answer}");
    assert_eq!(
        answer,
        "refused: replacing lines 1-3 of a.c would also remove instance_var (line 3), \
         instance_ptr (line 3), which the source does not define; bring them in the source, or \
         first give them a declaration of their own on a line of their own (for example \
         `struct target var;` after `struct target {…};`); a.c is unchanged"
    );
    assert_eq!(read(&t), text);
    // A variable declared with the struct is not cut out of it either.
    let (answer, err) = replace(&mut c, "instance_var", "struct target instance_var;\n");
    assert!(err, "{answer}");
    assert!(
        answer.starts_with(
            "refused: replacing lines 1-3 of a.c would also remove target (line 1), instance_ptr \
             (line 3), which the source does not define"
        ),
        "{answer}"
    );
    assert_eq!(read(&t), text);
    // A source that declares them too replaces the whole declaration.
    let (answer, err) = replace(
        &mut c,
        "target",
        "struct target {\n\tlong y;\n} instance_var, *instance_ptr;\n",
    );
    assert!(!err, "{answer}");
    assert_eq!(
        read(&t),
        "struct target {\n\tlong y;\n} instance_var, *instance_ptr;\nint g;\n"
    );
}

#[test]
fn a_typedef_named_after_its_struct_body_is_replaced_whole() {
    let text = "int g;\n/* doc */\ntypedef struct {\n\tint a;\n} foo_t;\nint h;\n";
    let (t, mut c) = served("edits-typedef", text, "foo_t");
    let (answer, err) = replace(&mut c, "foo_t", "typedef struct {\n\tlong b;\n} foo_t;\n");
    assert!(!err, "{answer}");
    assert!(answer.contains("replaced lines 3-5 of a.c"), "{answer}");
    assert_eq!(
        read(&t),
        "int g;\n/* doc */\ntypedef struct {\n\tlong b;\n} foo_t;\nint h;\n"
    );
}

#[test]
fn a_declaration_before_the_function_on_its_line_survives_a_replace() {
    let text = "int lead = 1; int target(void)\n{\n\treturn 1;\n}\n";
    let (t, mut c) = served("edits-lead", text, "target");
    let (answer, err) = replace(&mut c, "target", "int target(void)\n{\n\treturn 2;\n}\n");
    assert!(!err, "{answer}");
    assert_eq!(
        read(&t),
        "int lead = 1; int target(void)\n{\n\treturn 2;\n}\n"
    );
    // An insert before it goes before the whole line, lead and all.
    let (answer, err) = insert(&mut c, "target", "before", "int before(void)\n{\n}\n");
    assert!(!err, "{answer}");
    assert_eq!(
        read(&t),
        "int before(void)\n{\n}\n\nint lead = 1; int target(void)\n{\n\treturn 2;\n}\n"
    );
}

#[test]
fn a_define_whose_comment_goes_on_past_its_line_is_not_replaced() {
    let text = "#define X 1 /* starts\n ends */\nint y;\n";
    let (t, mut c) = served("edits-define-comment", text, "y");
    let (answer, err) = replace(&mut c, "X", "#define X 2\n");
    assert!(err, "{answer}");
    assert_eq!(
        answer,
        "refused: the last line 1 of X (`#define X 1 /* starts`) opens a comment that goes on to \
         line 2: replacing its lines would leave the rest behind; close it on line 1 first, or \
         edit these lines with your editor; a.c is unchanged"
    );
    assert_eq!(read(&t), text);
    // Nor is anything inserted inside the comment.
    let (answer, err) = insert(&mut c, "X", "after", "int z;\n");
    assert!(err, "{answer}");
    assert!(
        answer.starts_with(
            "refused: inserting after X would go after its line 1, but line 2 is inside a \
             preprocessor directive that begins on line 1 (`#define X 1 /* starts`)"
        ),
        "{answer}"
    );
    assert_eq!(read(&t), text);
}

#[test]
fn an_insert_after_a_definition_does_not_split_code_that_shares_its_last_line() {
    let text = "int f1(void)\n{\n\treturn 1;\n} int arr[] = {\n\t1,\n};\n";
    let (t, mut c) = served("edits-insert-split", text, "f1");
    let (answer, err) = insert(&mut c, "f1", "after", "int z;\n");
    assert!(err, "{answer}");
    assert!(
        answer.starts_with(
            "refused: inserting after f1 would go after its line 4, but line 5 is inside the \
             '{' of line 4 (`} int arr[] = {`)"
        ),
        "{answer}"
    );
    assert_eq!(read(&t), text);
    // Replacing f1 keeps arr whole.
    let (answer, err) = replace(&mut c, "f1", NEW_F1);
    assert!(!err, "{answer}");
    assert_eq!(
        read(&t),
        "int f1(void)\n{\n\treturn 2;\n} int arr[] = {\n\t1,\n};\n"
    );
}

/// fs/nfsd/xdr4.h:809-877 in small: a union defined among a struct's members, its member
/// `u` declared after its closing brace.
const NFSD4_OP: &str = "struct nfsd4_op {\n\tu32\t\t\topnum;\n\t__be32\t\t\tstatus;\n\
                        \tunion nfsd4_op_u {\n\t\tstruct nfsd4_access\taccess;\n\
                        \t\tstruct nfsd4_close\tclose;\n\t} u;\n\
                        \tstruct nfs4_replay *replay;\n};\nint after;\n";

#[test]
fn a_union_nested_in_a_struct_is_replaced_in_place() {
    let (t, mut c) = served("edits-nested-union", NFSD4_OP, "nfsd4_op_u");
    let own = "\tunion nfsd4_op_u {\n\t\tstruct nfsd4_access\taccess;\n\
               \t\tstruct nfsd4_close\tclose;\n\t} u;\n";
    let (answer, err) = replace(&mut c, "nfsd4_op_u", own);
    assert!(!err, "{answer}");
    assert!(answer.contains("replaced lines 4-7 of a.c"), "{answer}");
    assert_eq!(read(&t), NFSD4_OP, "its own text changes nothing");
    let new = "\tunion nfsd4_op_u {\n\t\tstruct nfsd4_access\taccess;\n\t\tu64\t\t\tseq;\n\t} u;\n";
    let (answer, err) = replace(&mut c, "nfsd4_op_u", new);
    assert!(!err, "{answer}");
    assert_eq!(
        read(&t),
        NFSD4_OP.replace("\t\tstruct nfsd4_close\tclose;\n", "\t\tu64\t\t\tseq;\n"),
        "the enclosing struct's lines are kept byte for byte"
    );
}

#[test]
fn a_nested_definition_without_its_declarator_is_refused_naming_the_member() {
    let (t, mut c) = served("edits-nested-declarator", NFSD4_OP, "nfsd4_op_u");
    let (answer, err) = replace(
        &mut c,
        "nfsd4_op_u",
        "\tunion nfsd4_op_u {\n\t\tint x;\n\t};\n",
    );
    assert!(err, "{answer}");
    assert_eq!(
        answer,
        "refused: replacing lines 4-7 of a.c would also remove u (line 7, declared after the \
         nested definition's closing brace), which the source does not define; bring them in \
         the source, or first give them a declaration of their own on a line of their own (for \
         example `struct target var;` after `struct target {…};`); a.c is unchanged"
    );
    assert_eq!(read(&t), NFSD4_OP);
    // In a function's body the declarator is a local, which the index may not list.
    let text = "int f(void)\n{\n\tstruct pair {\n\t\tint a;\n\t} p;\n\treturn p.a;\n}\n";
    let (t, mut c) = served("edits-nested-local", text, "f");
    let (answer, err) = replace(&mut c, "pair", "\tstruct pair {\n\t\tlong a;\n\t};\n");
    assert!(err, "{answer}");
    assert!(
        answer.starts_with(
            "refused: replacing lines 3-5 of a.c would also remove p (line 5, declared after the \
             nested definition's closing brace)"
        ),
        "{answer}"
    );
    assert_eq!(read(&t), text);
    let (answer, err) = replace(&mut c, "pair", "\tstruct pair {\n\t\tlong a;\n\t} p;\n");
    assert!(!err, "{answer}");
    assert_eq!(read(&t), text.replace("int a;", "long a;"));
}

#[test]
fn nested_structs_with_pointer_and_array_declarators_are_replaced_in_place() {
    // drivers/base/map.c:19-30, include/sound/simple_card_utils.h:57-66,
    // fs/bcachefs/btree_types.h:314-342, each in small.
    let files = [
        (
            "probe",
            "struct kobj_map {\n\tstruct probe {\n\t\tstruct probe *next;\n\t\tdev_t dev;\n\
             \t\tvoid *data;\n\t} *probes[255];\n\tstruct mutex *lock;\n};\n",
            "\tstruct probe {\n\t\tstruct probe *next;\n\t\tdev_t dev;\n\t\tvoid *data;\n\
             \t} *probes[255];\n",
        ),
        (
            "simple_dai_props",
            "struct simple_util_priv {\n\tstruct snd_soc_card snd_card;\n\
             \tstruct simple_dai_props {\n\t\tstruct simple_util_dai *cpu_dai;\n\
             \t\tunsigned int mclk_fs;\n\t} *dai_props;\n\tstruct simple_util_jack hp_jack;\n};\n",
            "\tstruct simple_dai_props {\n\t\tstruct simple_util_dai *cpu_dai;\n\
             \t\tunsigned int mclk_fs;\n\t} *dai_props;\n",
        ),
        (
            "btree_path_level",
            "struct btree_path {\n\tu8\t\t\tidx;\n\n\t/* btree_iter_copy starts here: */\n\
             \tstruct btree_path_level {\n\t\tstruct btree\t*b;\n\t\tstruct btree_node_iter \
             iter;\n\t\tu32\t\t\tlock_seq;\n\t}\t\t\tl[BTREE_MAX_DEPTH];\n};\n",
            "\tstruct btree_path_level {\n\t\tstruct btree\t*b;\n\t\tstruct btree_node_iter \
             iter;\n\t\tu32\t\t\tlock_seq;\n\t}\t\t\tl[BTREE_MAX_DEPTH];\n",
        ),
    ];
    for (symbol, text, own) in files {
        let (t, mut c) = served(&format!("edits-nested-{symbol}"), text, symbol);
        let (answer, err) = replace(&mut c, symbol, own);
        assert!(!err, "{symbol}: {answer}");
        assert_eq!(read(&t), text, "{symbol}");
        let grown = own.replacen(";\n", ";\n\t\tint added;\n", 1);
        let (answer, err) = replace(&mut c, symbol, &grown);
        assert!(!err, "{symbol}: {answer}");
        assert_eq!(read(&t), text.replace(own, &grown), "{symbol}");
    }
}

#[test]
fn a_struct_member_made_by_a_macro_is_part_of_its_struct() {
    // include/linux/nodemask_types.h:8 and include/linux/cpumask_types.h:9.
    let text = "#include <linux/bitmap.h>\n\
                typedef struct { DECLARE_BITMAP(bits, MAX_NUMNODES); } nodemask_t;\n\
                typedef struct cpumask { DECLARE_BITMAP(bits, NR_CPUS); } cpumask_t;\n\
                int after;\n";
    let (t, mut c) = served("edits-macro-member", text, "nodemask_t");
    let nodemask = "typedef struct { DECLARE_BITMAP(bits, MAX_NUMNODES); } nodemask_t;\n";
    let cpumask = "typedef struct cpumask { DECLARE_BITMAP(bits, NR_CPUS); } cpumask_t;\n";
    for (symbol, own) in [
        ("nodemask_t", nodemask),
        ("cpumask", cpumask),
        ("cpumask_t", cpumask),
    ] {
        let (answer, err) = replace(&mut c, symbol, own);
        assert!(!err, "{symbol}: {answer}");
        assert_eq!(read(&t), text, "{symbol}");
    }
    let (answer, err) = replace(
        &mut c,
        "nodemask_t",
        "typedef struct { DECLARE_BITMAP(node_bits, MAX_NUMNODES); } nodemask_t;\n",
    );
    assert!(!err, "{answer}");
    assert_eq!(read(&t), text.replace("(bits, MAX", "(node_bits, MAX"));
}

/// One top-level definition of a generated file.
#[derive(Clone, Debug)]
enum Item {
    /// `int fK(void) { return K; }`, on one line or four.
    Func { multiline: bool },
    /// `struct sK { int aK; };`, with `vK, *pK` declared with it, on one line or three.
    Struct { declarators: bool, multiline: bool },
    /// `int gK = K;`.
    Var,
    /// `typedef struct { int tK; } tK_t;`, on one line or three.
    Typedef { multiline: bool },
    /// `#define MK K`, with no comment, a comment on its line, or one that goes on a line.
    Define { comment: u8 },
    /// `union nK { int yK; } uK;` among the members of `struct oK {`, on one line or six,
    /// with or without its declarator `uK`; its replacement keeps `uK` or drops it.
    Nested {
        multiline: bool,
        declarator: bool,
        keep: bool,
    },
    /// `typedef struct [cK] { DECLARE_BITMAP(bK, 8); } mK_t;`: a member made by a macro.
    Bitmap { named: bool },
}

impl Item {
    fn name(&self, k: usize) -> String {
        match self {
            Item::Func { .. } => format!("f{k}"),
            Item::Struct { .. } => format!("s{k}"),
            Item::Var => format!("g{k}"),
            Item::Typedef { .. } => format!("t{k}_t"),
            Item::Define { .. } => format!("M{k}"),
            Item::Nested { .. } => format!("n{k}"),
            Item::Bitmap { .. } => format!("m{k}_t"),
        }
    }

    /// What an accepted replace of this definition must keep of its text: the enclosing
    /// struct's code around a nested one (and its declarator, kept or refused).
    fn kept(&self, k: usize) -> Vec<String> {
        match self {
            Item::Nested {
                multiline: true,
                declarator,
                ..
            } => {
                let mut kept = vec![
                    format!("struct o{k} {{\n\tint x{k};\n"),
                    format!("\n\tint w{k};\n}};"),
                ];
                if *declarator {
                    kept.push(format!("}} u{k};\n\tint w{k};"));
                }
                kept
            }
            Item::Nested { .. } => vec![format!("struct o{k} {{"), format!("int w{k}; }};")],
            _ => Vec::new(),
        }
    }

    fn text(&self, k: usize) -> String {
        match self {
            Item::Func { multiline: false } => format!("int f{k}(void) {{ return {k}; }}"),
            Item::Func { multiline: true } => format!("int f{k}(void)\n{{\n\treturn {k};\n}}"),
            Item::Struct {
                declarators,
                multiline,
            } => {
                let decl = if *declarators {
                    format!(" v{k}, *p{k}")
                } else {
                    String::new()
                };
                if *multiline {
                    format!("struct s{k} {{\n\tint a{k};\n}}{decl};")
                } else {
                    format!("struct s{k} {{ int a{k}; }}{decl};")
                }
            }
            Item::Var => format!("int g{k} = {k};"),
            Item::Typedef { multiline: false } => format!("typedef struct {{ int t{k}; }} t{k}_t;"),
            Item::Typedef { multiline: true } => {
                format!("typedef struct {{\n\tint t{k};\n}} t{k}_t;")
            }
            Item::Define { comment: 0 } => format!("#define M{k} {k}"),
            Item::Define { comment: 1 } => format!("#define M{k} {k} /* m{k} */"),
            Item::Define { .. } => format!("#define M{k} {k} /* m{k}\n * more */"),
            Item::Nested {
                multiline,
                declarator,
                ..
            } => {
                let decl = if *declarator {
                    format!(" u{k}")
                } else {
                    String::new()
                };
                if *multiline {
                    format!(
                        "struct o{k} {{\n\tint x{k};\n\tunion n{k} {{\n\t\tint y{k};\n\t}}{decl};\n\
                         \tint w{k};\n}};"
                    )
                } else {
                    format!(
                        "struct o{k} {{ int x{k}; union n{k} {{ int y{k}; }}{decl}; int w{k}; }};"
                    )
                }
            }
            Item::Bitmap { named } => {
                let tag = if *named {
                    format!("c{k} ")
                } else {
                    String::new()
                };
                format!("typedef struct {tag}{{ DECLARE_BITMAP(b{k}, 8); }} m{k}_t;")
            }
        }
    }

    /// A new definition of the same name.
    fn replacement(&self, k: usize) -> String {
        match self {
            Item::Func { .. } => format!("int f{k}(void)\n{{\n\treturn 1000;\n}}\n"),
            Item::Struct { .. } => format!("struct s{k} {{\n\tlong b{k};\n}};\n"),
            Item::Var => format!("int g{k} = 1000;\n"),
            Item::Typedef { .. } => format!("typedef struct {{\n\tlong u{k};\n}} t{k}_t;\n"),
            Item::Define { .. } => format!("#define M{k} 1000\n"),
            Item::Nested { keep, .. } => {
                let decl = if *keep {
                    format!(" u{k}")
                } else {
                    String::new()
                };
                format!("\tunion n{k} {{\n\t\tlong y{k};\n\t}}{decl};\n")
            }
            Item::Bitmap { named } => {
                let tag = if *named {
                    format!("c{k} ")
                } else {
                    String::new()
                };
                format!("typedef struct {tag}{{\n\tDECLARE_BITMAP(b{k}, 16);\n}} m{k}_t;\n")
            }
        }
    }
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        any::<bool>().prop_map(|multiline| Item::Func { multiline }),
        (any::<bool>(), any::<bool>()).prop_map(|(declarators, multiline)| Item::Struct {
            declarators,
            multiline
        }),
        Just(Item::Var),
        any::<bool>().prop_map(|multiline| Item::Typedef { multiline }),
        (0u8..3).prop_map(|comment| Item::Define { comment }),
        (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(multiline, declarator, keep)| {
            Item::Nested {
                multiline,
                declarator,
                keep,
            }
        }),
        any::<bool>().prop_map(|named| Item::Bitmap { named }),
    ]
}

/// A generated file and one edit of it.
#[derive(Clone, Debug)]
struct Case {
    /// The definitions, each with what comes after it: 0 a space, 1 a newline, 2 a blank line.
    items: Vec<(Item, u8)>,
    /// Which definition the edit is about.
    target: usize,
    /// 0 replace, 1 insert before, 2 insert after.
    edit: u8,
}

impl Case {
    /// The file's text and each definition's text.
    fn text(&self) -> (String, Vec<String>) {
        let mut text = String::new();
        let mut texts = Vec::new();
        for (k, (item, sep)) in self.items.iter().enumerate() {
            let own = item.text(k);
            // A directive begins a line and ends one.
            if matches!(item, Item::Define { .. }) && !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&own);
            texts.push(own);
            text.push_str(match (sep, item) {
                (_, Item::Define { .. }) | (1, _) => "\n",
                (0, _) => " ",
                _ => "\n\n",
            });
        }
        if !text.ends_with('\n') {
            text.push('\n');
        }
        (text, texts)
    }
}

fn case() -> impl Strategy<Value = Case> {
    prop::collection::vec((item(), 0u8..3), 2..6).prop_flat_map(|items| {
        let n = items.len();
        (Just(items), 0..n, 0u8..3).prop_map(|(items, target, edit)| Case {
            items,
            target,
            edit,
        })
    })
}

/// Serves one tree of `cases` (a file each), applies each case's edit, and checks that it was
/// refused leaving the file as it was, or kept every other definition's text.
fn check_cases(cases: &[Case]) -> Result<(), TestCaseError> {
    let files: Vec<(String, String)> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("p{i}.c"), c.text().0))
        .collect();
    let named: Vec<(&str, &str)> = files
        .iter()
        .map(|(f, text)| (f.as_str(), text.as_str()))
        .collect();
    let t = tree("edits-properties", &named);
    let mut c = serve(&t, &cases[0].items[0].0.name(0));
    for (i, case) in cases.iter().enumerate() {
        let (file, old) = &files[i];
        let texts = case.text().1;
        let (target, k) = (&case.items[case.target].0, case.target);
        let name = target.name(k);
        let inserted = format!("int inserted{i}(void)\n{{\n\treturn {i};\n}}\n");
        let (answer, err) = plain(match case.edit {
            0 => c.call(
                "replace_symbol",
                json!({"file": file, "symbol": name, "source": target.replacement(k)}),
            ),
            e => c.call(
                "insert_symbol",
                json!({"file": file, "anchor": name,
                       "position": if e == 1 { "before" } else { "after" },
                       "source": inserted}),
            ),
        });
        let new = std::fs::read_to_string(t.root.join(file)).unwrap();
        let shown = format!("{case:?}\nold:\n{old}\nnew:\n{new}\nanswer: {answer}");
        if err {
            prop_assert_eq!(&new, old, "refused but changed\n{}", shown);
            prop_assert!(answer.starts_with("refused"), "{}", shown);
            continue;
        }
        for (j, own) in texts.iter().enumerate() {
            if j != case.target || case.edit != 0 {
                prop_assert!(new.contains(own.as_str()), "lost {}\n{}", own, shown);
            }
        }
        if case.edit == 0 {
            for kept in target.kept(k) {
                prop_assert!(new.contains(&kept), "lost {:?}\n{}", kept, shown);
            }
        }
        let brought = if case.edit == 0 {
            target.replacement(k)
        } else {
            inserted
        };
        prop_assert!(new.contains(brought.trim_end()), "{}", shown);
    }
    Ok(())
}

proptest! {
    // Each case serves a tree of ten files and edits each once: a few seconds in a debug build.
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]

    #[test]
    fn every_edit_of_packed_definitions_is_refused_or_keeps_the_others(
        cases in prop::collection::vec(case(), 10)
    ) {
        check_cases(&cases)?;
    }
}
