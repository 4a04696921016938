//! Members, macro-made definitions and arrays of an anonymous struct type (issue 46, items 2,
//! 11 and 15), each test named after what broke: members inside `struct_group()` and anonymous
//! unions, a member's references, the body of a name a macro made (its `#define` chain looked
//! for within a bound), the names a `SYSCALL_DEFINE` makes reaching its body, and callers
//! through `vtable[i].op()`.

mod common;

use common::{json, knav, tree, Tree};
use serde_json::Value;

const SKBUFF: &str = "\
#ifndef _SKBUFF_H
#define _SKBUFF_H
struct sock_common {
	union {
		unsigned long skc_addrpair;
		struct {
			unsigned int skc_daddr;
			unsigned int skc_rcv_saddr;
		};
	};
	int skc_family;
};

struct sk_buff {
	unsigned int len;
	struct_group(headers,
		unsigned char pkt_type;
		unsigned short protocol;
		unsigned short mac_header;
	);
	union {
		int inner;
	} named;
	unsigned char *data;
};
#endif
";

const SKBUFF_USER: &str = "\
#include <linux/skbuff.h>
int skb_len(struct sk_buff *skb)
{
	return skb->len + skb->headers.protocol;
}
";

const OTHER_LEN: &str = "\
struct buf { int len; };
int buf_len(struct buf *b)
{
	int len = b->len;
	return len;
}
";

/// The tree of the member tests.
fn members_tree(name: &str) -> Tree {
    tree(
        name,
        &[
            ("include/linux/skbuff.h", SKBUFF),
            ("net/core/skb_len.c", SKBUFF_USER),
            ("lib/buf.c", OTHER_LEN),
        ],
    )
}

/// `(path, line)` of each record of a JSON answer.
fn places(v: &Value) -> Vec<(String, u64)> {
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results: {v}"))
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn def_finds_members_inside_struct_group_and_anonymous_unions() {
    let t = members_tree("members-groups");
    let h = "include/linux/skbuff.h".to_string();
    for (asked, line) in [
        ("sk_buff.protocol", 18),
        ("sk_buff.mac_header", 19),
        ("sk_buff.pkt_type", 17),
        ("sk_buff.headers", 16),
        ("sock_common.skc_daddr", 7),
        ("sock_common.skc_addrpair", 5),
        ("sk_buff.len", 15),
    ] {
        let (code, v) = json(&t, &["def", asked]);
        assert_eq!(code, 0, "{asked}: {v}");
        assert_eq!(places(&v), [(h.clone(), line)], "{asked}: {v}");
    }
    // A member of an anonymous union declared as a member is found, written as it is.
    let (code, v) = json(&t, &["def", "sk_buff.inner"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(places(&v), [(h.clone(), 22)], "{v}");
    assert!(
        v["warning"]
            .as_str()
            .unwrap()
            .contains("written sk_buff.named.inner"),
        "{v}"
    );
    let (code, out) = knav(&t, &["def", "sk_buff.skc_daddr"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no member 'skc_daddr' in struct or union 'sk_buff'"),
        "{out}"
    );
}

#[test]
fn a_members_references_are_counted_in_files_naming_its_struct_not_every_len() {
    let t = members_tree("members-refs");
    let (code, v) = json(&t, &["def", "sk_buff.len"]);
    assert_eq!(code, 0, "{v}");
    // skb_len.c's `skb->len`; not lib/buf.c's three, which never name sk_buff.
    assert_eq!(v["reference_count"], 1, "{v}");
    assert_eq!(v["file_count"], 1, "{v}");
    assert_eq!(v["top_files"][0]["path"], "net/core/skb_len.c", "{v}");
    let w = v["warning"].as_str().unwrap();
    assert!(
        w.contains(
            "references are of the name len in the 1 files that also name sk_buff (4 in all files)"
        ),
        "{w}"
    );
    let (_, v) = json(&t, &["def", "len"]);
    assert_eq!(v["reference_count"], 4, "{v}");
}

const PAGE_FLAGS: &str = "\
#ifndef PAGE_FLAGS_H
#define PAGE_FLAGS_H
struct folio { unsigned long flags; };
#define FOLIO_TEST_FLAG(name, page)					\\
static inline int folio_test_##name(const struct folio *folio)		\\
{ return folio->flags & page; }

#define TESTPAGEFLAG(uname, lname, policy)				\\
FOLIO_TEST_FLAG(lname, FOLIO_##policy)					\\
static inline int Page##uname(const struct folio *page)		\\
{ return page->flags != 0; }

#define PAGEFLAG(uname, lname, policy)					\\
	TESTPAGEFLAG(uname, lname, policy)

PAGEFLAG(Dirty, dirty, PF_HEAD) PAGEFLAG(LRU, lru, PF_HEAD)
#endif
";

const TRACE: &str = "\
#define TRACE_EVENT(name, proto, args, tstruct, assign, print) \\
	static inline void trace_##name(proto) { }
#define TP_PROTO(args...) args
TRACE_EVENT(sched_switch,

	TP_PROTO(int prev, int next),

	TP_ARGS(prev, next),

	TP_STRUCT__entry(
		__field(int, prev)
	),

	TP_fast_assign(
		__entry->prev = prev; /* ) } */
	),

	TP_printk(\"prev=%d)\", __entry->prev)
);
int after_the_event;
";

const READ: &str = "\
ssize_t ksys_read(unsigned int fd)
{
	return vfs_read(fd);
}

SYSCALL_DEFINE3(read, unsigned int, fd, char *, buf, size_t, count)
{
	return ksys_read(fd);
}

ssize_t vfs_read(unsigned int fd)
{
	return fd;
}
";

/// The tree of the macro tests.
fn macros_tree(name: &str) -> Tree {
    tree(
        name,
        &[
            ("include/linux/page-flags.h", PAGE_FLAGS),
            ("include/trace/events/sched.h", TRACE),
            ("fs/read_write.c", READ),
        ],
    )
}

#[test]
fn body_of_a_name_a_macro_made_is_the_whole_invocation_and_names_the_macro_chain() {
    let t = macros_tree("macros-body");
    let (code, v) = json(&t, &["body", "trace_sched_switch"]);
    assert_eq!(code, 0, "{v}");
    let r = &v["results"][0];
    assert_eq!(
        (r["line"].as_u64(), r["end_line"].as_u64()),
        (Some(4), Some(19)),
        "{v}"
    );
    let body = r["body"].as_str().unwrap();
    assert!(
        body.starts_with("TRACE_EVENT(sched_switch,\n\n\tTP_PROTO(int prev, int next),"),
        "{body}"
    );
    assert!(
        body.ends_with("\tTP_printk(\"prev=%d)\", __entry->prev)\n);"),
        "{body}"
    );
    let w = v["warning"].as_str().unwrap();
    assert!(
        w.contains(
            "trace_sched_switch is made by TRACE_EVENT(sched_switch, …) at \
             include/trace/events/sched.h:4; #define TRACE_EVENT at include/trace/events/sched.h:1"
        ),
        "{w}"
    );

    let (code, v) = json(&t, &["body", "folio_test_lru"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["results"][0]["body"], "PAGEFLAG(LRU, lru, PF_HEAD)",
        "{v}"
    );
    let w = v["warning"].as_str().unwrap();
    assert!(
        w.contains(
            "folio_test_lru is made by PAGEFLAG(LRU, lru, PF_HEAD) at include/linux/page-flags.h:16; \
             #define PAGEFLAG at include/linux/page-flags.h:13 → TESTPAGEFLAG at \
             include/linux/page-flags.h:8 → FOLIO_TEST_FLAG at include/linux/page-flags.h:4 declares it"
        ),
        "{w}"
    );
}

/// A header with 8 `#define`s each of `SYSCALL_DEFINE1` and `L1_k`, `L2_k`, `L3_k` (k below
/// `fan`), each level's calling every macro of the next, none declaring `sys_NAME`.
fn fanned_defines(fan: usize) -> String {
    let calls = |level: usize| -> String {
        (0..fan)
            .map(|k| format!("L{level}_{k}(name)"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = String::new();
    for copy in 0..8 {
        out.push_str(&format!("#ifdef CONFIG_V{copy}\n"));
        out.push_str(&format!(
            "#define SYSCALL_DEFINE1(name, ...) {}\n",
            calls(1)
        ));
        for level in 1..=2 {
            for k in 0..fan {
                out.push_str(&format!(
                    "#define L{level}_{k}(name) {}\n",
                    calls(level + 1)
                ));
            }
        }
        for k in 0..fan {
            out.push_str(&format!(
                "#define L3_{k}(name) int other_{k}_##name(void);\n"
            ));
        }
        out.push_str("#endif\n");
    }
    out
}

#[test]
fn body_of_a_syscall_behind_fanned_out_defines_stops_after_256_defines_read() {
    let t = tree(
        "macros-fan",
        &[
            ("include/linux/syscalls.h", fanned_defines(20)),
            (
                "kernel/target.c",
                "SYSCALL_DEFINE1(target, int, x)\n{\n\treturn x;\n}\n".to_string(),
            ),
        ],
    );
    let (code, out) = knav(&t, &["index"]);
    assert_eq!(code, 0, "{out}");
    // main read every path through the defines: 8 × (8 × 20)³ of them, minutes at fan 20.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(["body", "sys_target", "--format", "json", "--root"])
        .arg(&t.root)
        .env_remove("KNAV_INDEX_DIR")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("knav body sys_target still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][0]["path"], "kernel/target.c", "{v}");
    let w = v["warning"].as_str().unwrap_or_default();
    assert!(
        w.contains(
            "#define SYSCALL_DEFINE1 at include/linux/syscalls.h:2 (the #define that declares \
             it not found: 256 #defines read)"
        ),
        "{w}"
    );
}

#[test]
fn reach_from_a_name_syscall_define_makes_follows_the_syscall_body() {
    let t = macros_tree("macros-reach");
    for from in [
        "sys_read",
        "__x64_sys_read",
        "__se_sys_read",
        "__do_sys_read",
    ] {
        let (code, v) = json(&t, &["reach", from, "vfs_read"]);
        assert_eq!(code, 0, "{from}: {v}");
        assert_eq!(v["results"]["reachable"], true, "{from}: {v}");
        assert_eq!(
            v["results"]["chain"],
            serde_json::json!([from, "ksys_read", "vfs_read"]),
            "{from}: {v}"
        );
    }
}

#[test]
fn callees_of_a_syscall_leave_out_the_macro_that_defines_it() {
    let t = macros_tree("macros-callees");
    for name in ["sys_read", "__x64_sys_read"] {
        let (code, out) = knav(&t, &["callees", name]);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("calls 1:\n  ksys_read  line 8 → fs/read_write.c:1"),
            "{name}: {out}"
        );
        assert!(!out.contains("SYSCALL_DEFINE3  line"), "{name}: {out}");
    }
}

const VTABLE: &str = "\
static int a_init(void) { return 0; }
static void a_exit(void) { }
static int b_init(void) { return 0; }

static const struct {
	int (*init)(void);
	void (*exit)(void);
} init_funcs[] = {
	{ .init = a_init,
	  .exit = a_exit },
	{ .init = b_init },
};

int run_inits(void)
{
	int i, err;

	for (i = 0; i < 2; i++) {
		err = init_funcs[i].init();
		if (err)
			init_funcs[i].exit();
	}
	return 0;
}
";

/// Another file with an array of the same name, of another anonymous struct.
const OTHER_VTABLE: &str = "\
static int c_init(void) { return 1; }

static const struct {
	int (*init)(void);
} init_funcs[] = {
	{ .init = c_init },
};

int other_inits(void)
{
	return init_funcs[0].init();
}
";

#[test]
fn callers_through_an_array_declared_with_its_anonymous_struct_type() {
    let t = tree(
        "vtable-array",
        &[
            ("drivers/gpu/i915_module.c", VTABLE),
            ("drivers/misc/other_module.c", OTHER_VTABLE),
        ],
    );
    let (code, v) = json(&t, &["callers", "a_init"]);
    assert_eq!(code, 0, "{v}");
    let callers: Vec<(String, u64)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["caller"].as_str().unwrap_or("").to_string(),
                r["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(callers, [("run_inits".to_string(), 19)], "{v}");
    let (_, v) = json(&t, &["callers", "a_exit"]);
    assert_eq!(v["results"][0]["line"], 21, "{v}");
    // The other file's array of the same name is another type.
    let (_, v) = json(&t, &["callers", "c_init"]);
    assert_eq!(
        places(&v),
        [("drivers/misc/other_module.c".to_string(), 11)],
        "{v}"
    );
    let (_, out) = knav(&t, &["callees", "run_inits"]);
    assert!(out.contains("@init_funcs.init  line 19"), "{out}");
}

/// The Linux 6.12 tree of `KNAV_KERNEL_TREE` (its index: `KNAV_INDEX_DIR`, or the tree's own).
fn kernel() -> String {
    match std::env::var("KNAV_KERNEL_TREE") {
        Ok(tree) if !tree.is_empty() => tree,
        _ => panic!("KNAV_KERNEL_TREE is not set: set it to a Linux 6.12 source tree"),
    }
}

/// knav's text answer on the kernel tree.
fn on_kernel(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_knav"))
        .args(args)
        .args(["--root", &kernel()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_flexible_array_member_declare_flex_array_makes_is_defined() {
    // include/linux/socket.h's struct sockaddr: sa_data is made by DECLARE_FLEX_ARRAY inside an
    // anonymous union; the audit of missing definitions listed it as a local variable.
    let t = tree(
        "members-flex",
        &[
            (
                "include/linux/socket.h",
                "struct sockaddr {\n\tunsigned short sa_family;\n\tunion {\n\t\tchar sa_data_min[14];\n\t\tDECLARE_FLEX_ARRAY(char, sa_data);\n\t};\n};\nstruct blob {\n\tint n;\n\t__DECLARE_FLEX_ARRAY(struct page *, pages);\n};\n",
            ),
            (
                "net/socket.c",
                "#include <linux/socket.h>\nint f(struct sockaddr *a)\n{\n\treturn a->sa_data[0];\n}\n",
            ),
        ],
    );
    let h = "include/linux/socket.h".to_string();
    for (asked, line) in [("sa_data", 5), ("sockaddr.sa_data", 5), ("blob.pages", 10)] {
        let (code, v) = json(&t, &["def", asked]);
        assert_eq!(code, 0, "{asked}: {v}");
        assert_eq!(places(&v), [(h.clone(), line)], "{asked}: {v}");
        assert_eq!(v["results"][0]["kind"], "member", "{asked}: {v}");
    }
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_members_of_struct_group_and_anonymous_unions_are_found() {
    for (asked, at) in [
        (
            "sk_buff.headers",
            "include/linux/skbuff.h:951: struct_group(headers,",
        ),
        (
            "sk_buff.protocol",
            "include/linux/skbuff.h:1063: __be16\t\t\tprotocol;",
        ),
        (
            "sk_buff.mac_header",
            "include/linux/skbuff.h:1066: __u16\t\t\tmac_header;",
        ),
        (
            "sock_common.skc_daddr",
            "include/net/sock.h:154: __be32\tskc_daddr;",
        ),
    ] {
        let out = on_kernel(&["def", asked]);
        assert!(
            out.lines().nth(1).is_some_and(|l| l.starts_with(at)),
            "{asked}: {out}"
        );
    }
    let out = on_kernel(&["def", "sk_buff.len"]);
    assert!(
        out.contains("references are of the name len in the "),
        "{out}"
    );
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_macro_made_names_show_their_invocation_and_reach_their_body() {
    let out = on_kernel(&["body", "trace_sched_switch"]);
    assert!(
        out.starts_with("include/trace/events/sched.h:222-269:"),
        "{out}"
    );
    let out = on_kernel(&["body", "folio_test_dirty"]);
    assert!(
        out.contains(
            "#define PAGEFLAG at include/linux/page-flags.h:442 → TESTPAGEFLAG at \
             include/linux/page-flags.h:407 → FOLIO_TEST_FLAG at include/linux/page-flags.h:374"
        ),
        "{out}"
    );
    let out = on_kernel(&["reach", "__x64_sys_read", "ext4_file_read_iter"]);
    assert!(
        out.starts_with("__x64_sys_read reaches ext4_file_read_iter in 4 calls"),
        "{out}"
    );
    let out = on_kernel(&["callees", "sys_read"]);
    assert!(!out.contains("SYSCALL_DEFINE3"), "{out}");
}

#[test]
#[ignore = "needs KNAV_KERNEL_TREE"]
fn kernel_callers_through_i915_init_funcs_are_recorded() {
    let out = on_kernel(&["callers", "i915_active_module_init"]);
    assert!(
        out.contains(
            "i915_init  drivers/gpu/drm/i915/i915_module.c:88: err = init_funcs[i].init();"
        ),
        "{out}"
    );
}

#[test]
fn refs_of_a_name_a_macro_makes_and_nothing_names_is_no_error() {
    let t = macros_tree("macros-refs");
    for name in ["folio_test_lru", "__x64_sys_read"] {
        let (code, out) = knav(&t, &["refs", name]);
        assert_eq!(code, 0, "{name}: {out}");
        assert!(
            out.starts_with(&format!(
                "no references to '{name}': it is defined, and nothing in the index names it\n"
            )),
            "{name}: {out}"
        );
    }
    let (code, out) = knav(&t, &["refs", "folio_test_nothing"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no symbol named 'folio_test_nothing'"),
        "{out}"
    );
}
