//! Calls through function pointers on the fixture's stream layer (`fs/streams/stream.h`,
//! `fs/streams/`): an ops struct with implementations registered by designated initializers,
//! by assignment, in an array and through a registration macro; calls through a parameter, a
//! local, a member chain, an expression of unknown type and `INDIRECT_CALL_2`; and a member of
//! the same name in an unrelated struct (`sound_ops.fetch`) that must not match.

use serde_json::{json as j, Value};

mod common;
use common::{fixture, json, knav, tree};

/// The functions a change_impact answer lists as callers.
fn callers_of_impact(v: &Value) -> Vec<&str> {
    v["results"]["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["function"].as_str().unwrap())
        .collect()
}

/// `CALLER LINE VIA CERTAINTY REGISTERED_AT` of each call site of a callers answer.
fn sites(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {}:{} {} {} {}",
                r["caller"].as_str().unwrap_or("-"),
                r["path"].as_str().unwrap(),
                r["line"],
                r["via"].as_str().unwrap_or("direct"),
                r["certainty"].as_str().unwrap_or("-"),
                r["registered_at"].as_str().unwrap_or("-"),
            )
        })
        .collect()
}

#[test]
fn callers_through_an_ops_table_by_every_way_of_registering() {
    let t = fixture("indirect-callers");
    let fetch_sites = |reg: &str| {
        vec![
            format!("stream_fetch fs/streams/core.c:13 stream_operations.fetch type {reg}"),
            format!("stream_fetch_fast fs/streams/core.c:23 stream_operations.fetch type {reg}"),
        ]
    };
    for (func, reg) in [
        ("plain_fetch", "fs/streams/impl.c:20"), // designated initializer
        ("fancy_fetch", "fs/streams/impl.c:35"), // ops->fetch = fancy_fetch;
        ("table_fetch", "fs/streams/impl.c:44"), // an array of ops structs
        ("macro_fetch", "fs/streams/impl.c:53"), // DEFINE_STREAM_OPS(macro) = { … }
    ] {
        let (code, v) = json(&t, &["callers", func]);
        assert_eq!(code, 0);
        assert_eq!(sites(&v), fetch_sites(reg), "{func}");
        assert_eq!(
            v["message"], "0 direct calls, 2 through function pointers",
            "{func}"
        );
    }
    // A member chain (`s->s_op->open`), and the same-named member of another struct.
    let (_, v) = json(&t, &["callers", "plain_open"]);
    assert_eq!(
        sites(&v),
        ["stream_open fs/streams/core.c:6 stream_operations.open type fs/streams/impl.c:19"]
    );
    let (_, v) = json(&t, &["callers", "beep_fetch"]);
    assert_eq!(
        sites(&v),
        ["sound_fetch fs/streams/core.c:33 sound_ops.fetch type fs/streams/impl.c:61"]
    );
    // A parameter's type; an expression of unknown type matched by the member's name is a
    // guess, counted and left out unless asked for, then labelled with the member only.
    let (_, v) = json(&t, &["callers", "plain_release"]);
    assert_eq!(
        sites(&v),
        ["stream_release fs/streams/core.c:18 stream_operations.release type fs/streams/impl.c:21"]
    );
    assert_eq!(
        v["message"],
        "0 direct calls, 1 through function pointers; +1 guess left out (a call through a \
         member whose struct is not known for sure): include_uncertain lists it"
    );
    let (_, v) = json(&t, &["callers", "plain_release", "--include-uncertain"]);
    assert_eq!(
        sites(&v),
        [
            "stream_release fs/streams/core.c:18 stream_operations.release type fs/streams/impl.c:21",
            "stream_close fs/streams/core.c:28 ?.release field-name fs/streams/impl.c:21",
        ]
    );
    assert_eq!(v["message"], "0 direct calls, 2 through function pointers");
    let (_, out) = knav(&t, &["callers", "plain_release"]);
    assert!(
        out.contains("+1 guess left out (a call through a member whose struct is not known for sure): --include-uncertain lists it\n"),
        "{out}"
    );
    // Direct calls come first.
    let (_, v) = json(&t, &["callers", "stream_fetch"]);
    assert_eq!(
        sites(&v),
        ["ksys_stream_fetch fs/streams/core.c:38 direct - -"]
    );
    let (_, out) = knav(&t, &["callers", "plain_fetch"]);
    assert!(
        out.starts_with(
            "stream_fetch  fs/streams/core.c:13: return ops->fetch(s, buf, n);  \
             [via stream_operations.fetch, registered fs/streams/impl.c:20, type]\n"
        ),
        "{out}"
    );
}

#[test]
fn callers_through_pointers_respect_the_active_config_and_paging() {
    let t = fixture("indirect-active");
    let config = t.root.join(".config");
    let config = config.to_str().unwrap();
    let (_, v) = json(&t, &["callers", "ghost_fetch"]);
    assert_eq!(
        sites(&v).len(),
        2,
        "without a config the registration counts"
    );
    let (_, v) = json(&t, &["callers", "ghost_fetch", "--active-config", config]);
    assert_eq!(v["results"], j!([]));
    assert_eq!(
        v["hidden"],
        j!([{"path": "fs/streams/impl.c", "line": 70,
             "reason": "#if CONFIG_HIGHMEM: CONFIG_HIGHMEM is not set"}])
    );
    let (_, v) = json(
        &t,
        &["callers", "plain_fetch", "--limit", "1", "--offset", "1"],
    );
    assert_eq!(
        sites(&v),
        ["stream_fetch_fast fs/streams/core.c:23 stream_operations.fetch type fs/streams/impl.c:20"]
    );
    assert_eq!(v["total"], 2);
}

#[test]
fn callees_list_each_call_through_a_member_once_with_its_targets() {
    let t = fixture("indirect-callees");
    let (_, v) = json(&t, &["callees", "stream_fetch"]);
    assert_eq!(
        v["results"]["callees"],
        j!([{"symbol": "stream_operations.fetch", "line": 13, "defined_at": null,
             "registered": 5,
             "targets": ["plain_fetch", "fancy_fetch", "table_fetch", "macro_fetch", "ghost_fetch"]}])
    );
    let config = t.root.join(".config");
    let (_, v) = json(
        &t,
        &[
            "callees",
            "stream_fetch",
            "--active-config",
            config.to_str().unwrap(),
        ],
    );
    assert_eq!(
        v["results"]["callees"][0]["registered"], 4,
        "ghost_fetch is not built"
    );
    // A call through a member of unknown struct type: its targets are guesses, counted
    // unless asked for.
    let (_, v) = json(&t, &["callees", "stream_close"]);
    assert_eq!(
        v["results"]["callees"],
        j!([{"symbol": "lookup_stream", "line": 28, "defined_at": null},
            {"symbol": "?.release", "line": 28, "defined_at": null, "guesses": 1}])
    );
    assert_eq!(
        v["message"],
        "+1 guess left out (a call through a member whose struct is not known for sure): \
         include_uncertain lists it"
    );
    let (_, v) = json(&t, &["callees", "stream_close", "--include-uncertain"]);
    assert_eq!(
        v["results"]["callees"],
        j!([{"symbol": "lookup_stream", "line": 28, "defined_at": null},
            {"symbol": "?.release", "line": 28, "defined_at": null,
             "registered": 1, "targets": ["plain_release"]}])
    );
    let (_, out) = knav(&t, &["callees", "stream_close"]);
    assert!(
        out.contains("  ?.release  line 28 → through a pointer of unknown struct type, 1 guesses by member name\n"),
        "{out}"
    );
    let (_, v) = json(&t, &["callees", "stream_fetch_fast"]);
    let names: Vec<&str> = v["results"]["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["symbol"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "INDIRECT_CALL_2",
            "stream_operations.fetch",
            "plain_fetch",
            "fancy_fetch"
        ]
    );
}

#[test]
fn reachability_follows_type_certain_pointers_and_marks_the_hop() {
    let t = fixture("indirect-reach");
    let (code, v) = json(&t, &["reach", "ksys_stream_fetch", "table_fetch"]);
    assert_eq!(code, 0);
    assert_eq!(
        v["results"]["chain"],
        j!(["ksys_stream_fetch", "stream_fetch", "table_fetch"])
    );
    assert_eq!(v["results"]["via"], j!([null, "stream_operations.fetch"]));
    let (_, out) = knav(&t, &["reach", "ksys_stream_fetch", "table_fetch"]);
    assert!(
        out.starts_with(
            "ksys_stream_fetch reaches table_fetch in 2 calls: \
             ksys_stream_fetch → stream_fetch →[stream_operations.fetch] table_fetch\n"
        ),
        "{out}"
    );
    // Never into the unrelated struct's implementation.
    let (_, v) = json(&t, &["reach", "ksys_stream_fetch", "beep_fetch"]);
    assert_eq!(v["results"]["reachable"], false);
    // A call of unknown type only with --include-uncertain.
    let (_, v) = json(&t, &["reach", "stream_close", "plain_release"]);
    assert_eq!(v["results"]["reachable"], false);
    assert!(
        v["message"].as_str().unwrap().ends_with(
            "; 1 calls through members of unknown struct type not followed (their targets \
             would be guesses by member name): include_uncertain follows them"
        ),
        "{v}"
    );
    let (_, v) = json(
        &t,
        &[
            "reach",
            "stream_close",
            "plain_release",
            "--include-uncertain",
        ],
    );
    assert_eq!(v["results"]["chain"], j!(["stream_close", "plain_release"]));
    assert_eq!(v["results"]["via"], j!(["?.release"]));
    // A direct chain carries no `via`.
    let (_, v) = json(&t, &["reach", "ksys_read", "vfs_read"]);
    assert!(v["results"].get("via").is_none(), "{v}");
}

#[test]
fn references_give_registrations_the_register_role() {
    let t = fixture("indirect-refs");
    let (_, v) = json(&t, &["refs", "plain_fetch"]);
    let rows: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}:{} {}",
                r["path"].as_str().unwrap(),
                r["line"],
                r["role"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            "fs/streams/core.c:23 ref",
            "fs/streams/impl.c:9 def",
            "fs/streams/impl.c:20 register",
        ]
    );
    let (_, v) = json(&t, &["refs", "fancy_fetch"]);
    let roles: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["ref", "def", "register"]);
}

#[test]
fn change_impact_of_a_static_ops_function_follows_its_calls_through_pointers() {
    // Regression: plain_fetch is static and only registered in an ops table, so change_impact
    // found no caller at all before it read the calls through pointers.
    let t = fixture("indirect-impact");
    let (code, out) = knav(&t, &["impact", "plain_fetch"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "plain_fetch: 2 direct callers, 1 more within depth 2 · 3 call sites · defined fs/streams/impl.c:9 (THE REST)\n\
         subsystems (functions): THE REST 3\n\
         top dirs (functions): fs 3\n\
         1 stream_fetch →[stream_operations.fetch] plain_fetch  fs/streams/core.c:13  [THE REST]\n\
         1 stream_fetch_fast →[stream_operations.fetch] plain_fetch  fs/streams/core.c:23  [THE REST]\n\
         2   ksys_stream_fetch → stream_fetch  fs/streams/core.c:38  [THE REST]\n\
         next: knav callers plain_fetch, knav body plain_fetch, knav reach plain_fetch TARGET\n"
    );
    let (_, v) = json(&t, &["impact", "plain_fetch", "--depth", "1"]);
    let callers = v["results"]["callers"].as_array().unwrap();
    assert_eq!(callers.len(), 2, "{v}");
    assert_eq!(callers[0]["via"], "stream_operations.fetch");
    // A guess by member name is not followed: stream_close calls `->release` on an untyped
    // pointer, so only stream_release (typed) is affected by plain_release.
    let (_, v) = json(&t, &["impact", "plain_release", "--depth", "1"]);
    let names = callers_of_impact(&v);
    assert_eq!(names, ["stream_release"], "{v}");
    assert_eq!(
        v["message"],
        "+1 guess left out (a call through a member whose struct is not known for sure): \
         include_uncertain lists it"
    );
    let (_, v) = json(
        &t,
        &[
            "impact",
            "plain_release",
            "--depth",
            "1",
            "--include-uncertain",
        ],
    );
    let names = callers_of_impact(&v);
    assert_eq!(names, ["stream_release", "stream_close"], "{v}");
    assert_eq!(v["results"]["callers"][1]["via"], "?.release", "{v}");
}

/// Two drivers, each with its own `struct mac_ops` in its own header, and a third file outside
/// both calling through the tag.
fn two_structs_one_tag() -> common::Tree {
    let ops = "struct mac_ops {\n\tint (*link)(int);\n};\n";
    let driver = |name: &str| {
        format!(
            "#include \"hw.h\"\nstatic int {name}_link(int x)\n{{\n\treturn x;\n}}\n\
             static const struct mac_ops {name}_ops = {{\n\t.link = {name}_link,\n}};\n\
             int {name}_has_link(struct mac_ops *ops)\n{{\n\treturn ops->link(1);\n}}\n"
        )
    };
    tree(
        "indirect-two-tags",
        &[
            ("drivers/net/alpha/hw.h", ops),
            ("drivers/net/alpha/main.c", &driver("alpha")),
            ("drivers/net/beta/hw.h", ops),
            ("drivers/net/beta/main.c", &driver("beta")),
            (
                "net/core/link.c",
                "int any_link(struct mac_ops *ops)\n{\n\treturn ops->link(2);\n}\n",
            ),
        ],
    )
}

#[test]
fn a_struct_tag_defined_twice_joins_only_the_definition_each_file_sees() {
    // Regression: igb's and igbvf's calls through their own struct e1000_mac_operations were
    // type-certain callers of e1000e's functions.
    let t = two_structs_one_tag();
    let (_, v) = json(&t, &["callers", "alpha_link"]);
    assert_eq!(
        sites(&v),
        ["alpha_has_link drivers/net/alpha/main.c:11 mac_ops.link type drivers/net/alpha/main.c:7"]
    );
    assert_eq!(
        v["message"],
        "0 direct calls, 1 through function pointers; +1 guess left out (a call through a \
         member whose struct is not known for sure): include_uncertain lists it",
        "net/core sees neither header: which struct it calls through is not known"
    );
    let (_, v) = json(&t, &["callers", "alpha_link", "--include-uncertain"]);
    assert_eq!(
        sites(&v),
        [
            "alpha_has_link drivers/net/alpha/main.c:11 mac_ops.link type drivers/net/alpha/main.c:7",
            "any_link net/core/link.c:3 mac_ops.link tag drivers/net/alpha/main.c:7",
        ]
    );
    let (_, v) = json(&t, &["callees", "beta_has_link"]);
    assert_eq!(
        v["results"]["callees"][0]["targets"],
        j!(["beta_link"]),
        "{v}"
    );
}

#[test]
fn member_macros_local_function_pointers_and_structs_defined_with_their_variable_are_typed() {
    // Regressions: `sk->sk_prot->sendmsg` (sk_prot a #define in struct sock), `open =
    // f->f_op->open; open(f);` (do_dentry_open) and `static const struct t { … } v[] = { … }`
    // were guesses by member name, or not seen at all.
    let t = tree(
        "indirect-forms",
        &[
            (
                "include/net/sock.h",
                "struct proto {\n\tint (*sendmsg)(struct sock *sk);\n};\n\
                 struct sock_common {\n\tstruct proto *skc_prot;\n};\n\
                 struct sock {\n\tstruct sock_common __sk_common;\n\
                 #define sk_prot\t\t__sk_common.skc_prot\n};\n",
            ),
            (
                "net/ipv4/tcp.c",
                "#include <net/sock.h>\nint tcp_sendmsg(struct sock *sk)\n{\n\treturn 0;\n}\n\
                 struct proto tcp_prot = {\n\t.sendmsg = tcp_sendmsg,\n};\n",
            ),
            (
                "net/ipv4/af_inet.c",
                "#include <net/sock.h>\nint inet_sendmsg(struct sock *sk)\n{\n\
                 \treturn sk->sk_prot->sendmsg(sk);\n}\n",
            ),
            (
                "include/linux/fs.h",
                "struct file;\nstruct file_operations {\n\tint (*open)(struct file *);\n};\n\
                 struct file {\n\tconst struct file_operations *f_op;\n};\n",
            ),
            (
                "fs/open.c",
                "#include <linux/fs.h>\n\n\n\n\n\n\n\
                 int do_open(struct file *f)\n{\n\tint (*open)(struct file *);\n\
                 \topen = f->f_op->open;\n\treturn open(f);\n}\n",
            ),
            (
                "fs/simple.c",
                "#include \"open.h\"\nstatic int simple_open(struct file *f)\n{\n\treturn 0;\n}\n\
                 static const struct table_ops {\n\tint (*open)(struct file *);\n} simple_ops[] = {\n\
                 \t{ .open = simple_open },\n};\n\
                 int open_first(struct file *f)\n{\n\treturn simple_ops[0].open(f);\n}\n",
            ),
            (
                "fs/ramfs.c",
                "#include <linux/fs.h>\n\n\n\n\
                 static int ramfs_open(struct file *f)\n{\n\treturn 0;\n}\n\
                 const struct file_operations ramfs_fops = {\n\t.open = ramfs_open,\n};\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callers", "tcp_sendmsg"]);
    assert_eq!(
        sites(&v),
        ["inet_sendmsg net/ipv4/af_inet.c:4 proto.sendmsg type net/ipv4/tcp.c:7"]
    );
    let (_, v) = json(&t, &["callers", "simple_open"]);
    assert_eq!(
        sites(&v),
        ["open_first fs/simple.c:13 table_ops.open type fs/simple.c:9"]
    );
    let (_, v) = json(&t, &["callers", "ramfs_open", "--include-uncertain"]);
    let found = sites(&v);
    assert!(
        found
            .iter()
            .any(|s| s.starts_with("do_open fs/open.c:12 file_operations.open")),
        "{found:?}"
    );
}

#[test]
fn a_call_through_a_functions_result_is_typed_by_its_return_type() {
    // `crypto_aead_alg(tfm)->decrypt(req)` and `container_of(…, struct t, …)->ops->f()` were
    // guesses by member name (and are no guess at all where several structs have the member).
    let t = tree(
        "indirect-returns",
        &[
            (
                "include/crypto/aead.h",
                "struct aead_alg {\n\tint (*decrypt)(int req);\n};\n\
                 struct crypto_aead;\n\
                 static inline struct aead_alg *crypto_aead_alg(struct crypto_aead *tfm)\n{\n\
                 \treturn 0;\n}\n\
                 struct other_alg {\n\tint (*decrypt)(int req);\n};\n",
            ),
            (
                "crypto/gcm.c",
                "#include <crypto/aead.h>\nstatic int gcm_decrypt(int req)\n{\n\treturn req;\n}\n\
                 static struct aead_alg gcm_alg = {\n\t.decrypt = gcm_decrypt,\n};\n",
            ),
            (
                "crypto/aead.c",
                "#include <crypto/aead.h>\n\
                 int crypto_aead_decrypt(struct crypto_aead *tfm, int req)\n{\n\
                 \treturn crypto_aead_alg(tfm)->decrypt(req);\n}\n",
            ),
            (
                "drivers/foo/foo.c",
                "struct foo_ops {\n\tvoid (*reset)(int);\n};\n\
                 struct foo_dev {\n\tconst struct foo_ops *ops;\n\tint work;\n};\n\
                 static void foo_reset(int x)\n{\n}\n\
                 static const struct foo_ops foo_ops = {\n\t.reset = foo_reset,\n};\n\
                 void foo_work(int *w)\n{\n\
                 \tcontainer_of(w, struct foo_dev, work)->ops->reset(1);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callers", "gcm_decrypt"]);
    assert_eq!(
        sites(&v),
        ["crypto_aead_decrypt crypto/aead.c:4 aead_alg.decrypt type crypto/gcm.c:7"]
    );
    let (_, v) = json(&t, &["callers", "foo_reset"]);
    assert_eq!(
        sites(&v),
        ["foo_work drivers/foo/foo.c:16 foo_ops.reset type drivers/foo/foo.c:12"]
    );
}

#[test]
fn a_member_name_that_several_structs_have_gives_no_guess() {
    // `kunit_suite.init` was guessed to reach nouveau, r8152 and perf callbacks: dozens of
    // structs have a function pointer named `init`.
    let t = tree(
        "indirect-shared-member",
        &[
            (
                "lib/a.c",
                "struct a_ops {\n\tint (*init)(int);\n\tint (*only_a)(int);\n};\n\
                 static int a_init(int x)\n{\n\treturn x;\n}\n\
                 static int a_only(int x)\n{\n\treturn x;\n}\n\
                 static struct a_ops a = {\n\t.init = a_init,\n\t.only_a = a_only,\n};\n",
            ),
            (
                "lib/b.c",
                "struct b_ops {\n\tint (*init)(int);\n};\n",
            ),
            (
                "lib/use.c",
                "int use(void *p)\n{\n\treturn ((struct x *)p)->init(1) + ((struct x *)p)->only_a(2);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callers", "a_init", "--include-uncertain"]);
    assert_eq!(sites(&v), Vec::<String>::new(), "{v}");
    let (_, v) = json(&t, &["callers", "a_only", "--include-uncertain"]);
    assert_eq!(
        sites(&v),
        ["use lib/use.c:3 ?.only_a field-name lib/a.c:15"],
        "{v}"
    );
}

#[test]
fn indirect_call_wrappers_learned_from_their_defines_list_their_functions() {
    // `INDIRECT_CALL_INET` (a header's) and `INDIRECT_CALL_MT` (a .c file's own) were not
    // seen: only `INDIRECT_CALL_<n>` was.
    let t = tree(
        "indirect-wrappers",
        &[
            (
                "include/linux/indirect_call_wrapper.h",
                "#define INDIRECT_CALL_1(f, f1, ...) \\\n\
                 \t({ likely(f == f1) ? f1(__VA_ARGS__) : f(__VA_ARGS__); })\n\
                 #define INDIRECT_CALL_2(f, f2, f1, ...) \\\n\
                 \t({ likely(f == f2) ? f2(__VA_ARGS__) : INDIRECT_CALL_1(f, f1, __VA_ARGS__); })\n\
                 #if IS_BUILTIN(CONFIG_IPV6)\n\
                 #define INDIRECT_CALL_INET(f, f2, f1, ...) INDIRECT_CALL_2(f, f2, f1, __VA_ARGS__)\n\
                 #else\n\
                 #define INDIRECT_CALL_INET(f, f2, f1, ...) f(__VA_ARGS__)\n\
                 #endif\n",
            ),
            (
                "net/ipv4/tcp_ipv4.c",
                "int tcp_v4_rcv(int skb)\n{\n\treturn skb;\n}\n",
            ),
            (
                "net/ipv6/tcp_ipv6.c",
                "int tcp_v6_rcv(int skb)\n{\n\treturn skb;\n}\n",
            ),
            (
                "net/core/dev.c",
                "#include <linux/indirect_call_wrapper.h>\n\
                 struct net_protocol {\n\tint (*handler)(int skb);\n};\n\
                 int deliver(const struct net_protocol *ipprot, int skb)\n{\n\
                 \treturn INDIRECT_CALL_INET(ipprot->handler, tcp_v6_rcv, tcp_v4_rcv, skb);\n}\n",
            ),
            (
                "net/core/fib_rules.c",
                "#include <linux/indirect_call_wrapper.h>\n\
                 #ifdef CONFIG_IP_MULTIPLE_TABLES\n\
                 #define INDIRECT_CALL_MT(f, f2, f1, ...) INDIRECT_CALL_INET(f, f2, f1, __VA_ARGS__)\n\
                 #else\n\
                 #define INDIRECT_CALL_MT(f, f2, f1, ...) INDIRECT_CALL_1(f, f1, __VA_ARGS__)\n\
                 #endif\n\
                 int match(int (*m)(int), int x)\n{\n\
                 \treturn INDIRECT_CALL_MT(m, tcp_v6_rcv, tcp_v4_rcv, x);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callers", "tcp_v4_rcv"]);
    let mut found = sites(&v);
    found.sort();
    assert_eq!(
        found,
        [
            "deliver net/core/dev.c:7 INDIRECT_CALL type -",
            "match net/core/fib_rules.c:9 INDIRECT_CALL type -",
        ],
        "{v}"
    );
}

#[test]
fn a_call_through_a_global_declared_in_a_header_is_typed_by_its_declaration() {
    // `clk_divider_ops.recalc_rate(…)` was a guess by member name; `efi.set_time(…)` was
    // guessed to reach RTC drivers' set_time.
    let t = tree(
        "indirect-globals",
        &[
            (
                "include/linux/clk-provider.h",
                "struct clk_ops {\n\tunsigned long (*recalc_rate)(int hw);\n};\n\
                 extern const struct clk_ops clk_divider_ops;\n",
            ),
            (
                "include/linux/efi.h",
                "struct efi {\n\tint (*set_time)(int t);\n};\nextern struct efi efi;\n",
            ),
            (
                "drivers/rtc/rtc-x.c",
                "struct rtc_class_ops {\n\tint (*set_time)(int t);\n};\n\
                 static int x_set_time(int t)\n{\n\treturn t;\n}\n\
                 static const struct rtc_class_ops x_ops = {\n\t.set_time = x_set_time,\n};\n",
            ),
            (
                "drivers/clk/clk-divider.c",
                "#include <linux/clk-provider.h>\n\
                 static unsigned long div_recalc(int hw)\n{\n\treturn 0;\n}\n\
                 const struct clk_ops clk_divider_ops = {\n\t.recalc_rate = div_recalc,\n};\n",
            ),
            (
                "drivers/clk/clk-user.c",
                "#include <linux/clk-provider.h>\n#include <linux/efi.h>\n\
                 unsigned long user_recalc(int hw)\n{\n\
                 \treturn clk_divider_ops.recalc_rate(hw) + efi.set_time(1);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callers", "div_recalc"]);
    assert_eq!(
        sites(&v),
        ["user_recalc drivers/clk/clk-user.c:5 clk_ops.recalc_rate type drivers/clk/clk-divider.c:7"]
    );
    let (_, v) = json(&t, &["callers", "x_set_time", "--include-uncertain"]);
    assert_eq!(sites(&v), Vec::<String>::new(), "{v}");
}

#[test]
fn a_call_through_a_member_of_a_named_anonymous_union_is_typed() {
    // `in->ops.dpi->connect(in)` (omapfb's displays): `ops` is a `union { … } ops;` whose type
    // has no tag, and the call was a guess by member name.
    let t = tree(
        "indirect-anonymous-union",
        &[
            (
                "include/video/omapfb_dss.h",
                "struct omap_dss_device;\n\
                 struct omapdss_dpi_ops {\n\tint (*connect)(struct omap_dss_device *d);\n};\n\
                 struct omapdss_dvi_ops {\n\tint (*connect)(struct omap_dss_device *d);\n};\n\
                 struct omap_dss_device {\n\tunion {\n\
                 \t\tconst struct omapdss_dpi_ops *dpi;\n\
                 \t\tconst struct omapdss_dvi_ops *dvi;\n\t} ops;\n};\n",
            ),
            (
                "drivers/video/dpi.c",
                "#include <video/omapfb_dss.h>\n\
                 static int dpi_connect(struct omap_dss_device *d)\n{\n\treturn 0;\n}\n\
                 static const struct omapdss_dpi_ops dpi_ops = {\n\t.connect = dpi_connect,\n};\n",
            ),
            (
                "drivers/video/panel.c",
                "#include <video/omapfb_dss.h>\n\
                 int panel_connect(struct omap_dss_device *in)\n{\n\
                 \treturn in->ops.dpi->connect(in);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callers", "dpi_connect"]);
    assert_eq!(
        sites(&v),
        ["panel_connect drivers/video/panel.c:4 omapdss_dpi_ops.connect type drivers/video/dpi.c:7"]
    );
}

#[test]
fn a_member_of_a_named_anonymous_struct_is_not_the_enclosing_structs_member_of_that_name() {
    // radeon's `rdev->asic->init(rdev)` listed the `.dpm = { .init = … }` functions as
    // type-certain targets, and `rdev->asic->dpm.init(rdev)` the top-level `.init` ones.
    let t = tree(
        "indirect-anonymous-struct",
        &[
            (
                "drivers/gpu/radeon/radeon.h",
                "struct radeon_device;\n\
                 struct radeon_asic {\n\tint (*init)(struct radeon_device *rdev);\n\
                 \tstruct {\n\t\tint (*init)(struct radeon_device *rdev);\n\t} dpm;\n};\n\
                 struct radeon_device {\n\tstruct radeon_asic *asic;\n};\n",
            ),
            (
                "drivers/gpu/radeon/radeon_asic.c",
                "#include \"radeon.h\"\n\
                 int r600_init(struct radeon_device *rdev)\n{\n\treturn 0;\n}\n\
                 int rv6xx_dpm_init(struct radeon_device *rdev)\n{\n\treturn 0;\n}\n\
                 static struct radeon_asic r600_asic = {\n\t.init = &r600_init,\n\
                 \t.dpm = {\n\t\t.init = &rv6xx_dpm_init,\n\t},\n};\n",
            ),
            (
                "drivers/gpu/radeon/radeon_device.c",
                "#include \"radeon.h\"\n\
                 int radeon_device_init(struct radeon_device *rdev)\n{\n\
                 \treturn rdev->asic->init(rdev);\n}\n\
                 int radeon_pm_init(struct radeon_device *rdev)\n{\n\
                 \treturn rdev->asic->dpm.init(rdev);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callers", "rv6xx_dpm_init", "--include-uncertain"]);
    assert_eq!(
        sites(&v),
        [
            "radeon_pm_init drivers/gpu/radeon/radeon_device.c:8 radeon_asic::dpm.init type \
             drivers/gpu/radeon/radeon_asic.c:13"
        ],
        "{v}"
    );
    let (_, v) = json(&t, &["callers", "r600_init", "--include-uncertain"]);
    assert_eq!(
        sites(&v),
        [
            "radeon_device_init drivers/gpu/radeon/radeon_device.c:4 radeon_asic.init type \
             drivers/gpu/radeon/radeon_asic.c:11"
        ],
        "{v}"
    );
}

#[test]
fn calls_written_inside_function_like_macros_are_dispatches_where_the_macro_is_seen() {
    // `v4l2_subdev_call(sd, video, s_stream, 1)` and `(map)->read(map, ofs)` behind
    // `map_read` were not seen as calls through pointers at all.
    let t = tree(
        "macro-member-calls",
        &[
            (
                "include/media/subdev.h",
                "struct subdev_video_ops {\n\tint (*s_stream)(struct subdev *sd, int on);\n};\n\
                 struct subdev_ops {\n\tconst struct subdev_video_ops *video;\n};\n\
                 struct subdev {\n\tconst struct subdev_ops *ops;\n};\n\
                 #define subdev_call(sd, o, f, args...) \\\n\
                 \t({ struct subdev *__sd = (sd); \\\n\
                 \t   __sd->ops->o->f(__sd, ##args); })\n",
            ),
            (
                "drivers/media/sensor.c",
                "#include <media/subdev.h>\n\
                 static int sensor_s_stream(struct subdev *sd, int on)\n{\n\treturn on;\n}\n\
                 static const struct subdev_video_ops sensor_video_ops = {\n\
                 \t.s_stream = sensor_s_stream,\n};\n",
            ),
            (
                "drivers/media/bridge.c",
                "#include <media/subdev.h>\n\
                 struct bridge {\n\tstruct subdev *source;\n};\n\
                 int bridge_start(struct bridge *b)\n{\n\
                 \treturn subdev_call(b->source, video, s_stream, 1);\n}\n",
            ),
            // A driver header's macro applies below its own directory only: another driver's
            // function of the same name is no call through a member.
            (
                "drivers/staging/fbtft/fbtft.h",
                "struct fbtft_ops {\n\tint (*write_register)(struct fbtft_par *par, int n);\n};\n\
                 struct fbtft_par {\n\tstruct fbtft_ops fbtftops;\n};\n\
                 #define write_reg(par, ...) ((par)->fbtftops.write_register(par, __VA_ARGS__))\n",
            ),
            (
                "drivers/staging/fbtft/fb_one.c",
                "#include \"fbtft.h\"\n\
                 static int one_write(struct fbtft_par *par, int n)\n{\n\treturn n;\n}\n\
                 static struct fbtft_ops one_ops = {\n\t.write_register = one_write,\n};\n\
                 int one_init(struct fbtft_par *par)\n{\n\treturn write_reg(par, 1);\n}\n",
            ),
            (
                "drivers/net/other.c",
                "static int write_reg(int par, int n)\n{\n\treturn par + n;\n}\n\
                 int other_init(int par)\n{\n\treturn write_reg(par, 1);\n}\n",
            ),
            // A file's own `#define` of the name hides the header's.
            (
                "drivers/media/own.c",
                "#include <media/subdev.h>\n\
                 #undef subdev_call\n#define subdev_call(sd, o, f, args...) 0\n\
                 int own_start(struct subdev *sd)\n{\n\
                 \treturn subdev_call(sd, video, s_stream, 1);\n}\n",
            ),
        ],
    );
    let (_, v) = json(&t, &["callers", "sensor_s_stream"]);
    assert_eq!(
        sites(&v),
        [
            "bridge_start drivers/media/bridge.c:7 subdev_video_ops.s_stream type \
             drivers/media/sensor.c:7"
        ],
        "{v}"
    );
    let (_, v) = json(&t, &["callers", "one_write", "--include-uncertain"]);
    assert_eq!(
        sites(&v),
        [
            "one_init drivers/staging/fbtft/fb_one.c:11 fbtft_ops.write_register type \
             drivers/staging/fbtft/fb_one.c:7"
        ],
        "{v}"
    );
}
