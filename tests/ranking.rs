//! Which definition comes first when a name has many: without a config, code of common builds
//! before User-mode Linux, no-MMU variants and files Kbuild builds only when a symbol is not
//! set; with one, what it builds. Each test writes its own tree.

use serde_json::Value;

mod common;
use common::{paths, tree, Tree};

/// The answer of `knav ARGS --format json` on `tree`.
fn json(tree: &Tree, args: &[&str]) -> Value {
    common::json(tree, args).1
}

#[test]
fn the_kernels_printk_define_ranks_before_user_mode_linuxs_static_inline() {
    let t = tree(
        "printk",
        &[
            (
                "arch/um/include/shared/user.h",
                "static inline int printk(const char *fmt, ...)\n{\n\treturn 0;\n}\n",
            ),
            (
                "include/linux/printk.h",
                "#define printk(fmt, ...) _printk(fmt, ##__VA_ARGS__)\n",
            ),
        ],
    );
    assert_eq!(
        paths(&json(&t, &["def", "printk"])),
        ["include/linux/printk.h", "arch/um/include/shared/user.h"]
    );
}

#[test]
fn vmalloc_c_ranks_before_nommu_c() {
    let body = "void vfree(const void *addr)\n{\n}\nEXPORT_SYMBOL(vfree);\n";
    let t = tree(
        "vfree",
        &[
            ("Kbuild", "obj-y += mm/\n"),
            (
                "mm/Makefile",
                "mmu-y := nommu.o\nmmu-$(CONFIG_MMU) := vmalloc.o\nobj-y := util.o $(mmu-y)\n",
            ),
            ("mm/nommu.c", body),
            ("mm/vmalloc.c", body),
        ],
    );
    let v = json(&t, &["def", "vfree"]);
    assert_eq!(paths(&v), ["mm/vmalloc.c", "mm/nommu.c"]);
    // Both export it: the summary names the common build's export.
    assert_eq!(v["exported"]["path"], "mm/vmalloc.c", "{v}");
    // With a config, the replaced variable's nommu.o is not built and says why.
    let v = json(
        &t,
        &[
            "def",
            "vfree",
            "--active-config",
            "CONFIG_X86=y,CONFIG_MMU=y",
        ],
    );
    assert_eq!(paths(&v), ["mm/vmalloc.c"], "{v}");
    let v = json(
        &t,
        &[
            "def",
            "vfree",
            "--active-config",
            "CONFIG_X86=y,CONFIG_MMU=n",
        ],
    );
    assert_eq!(paths(&v), ["mm/nommu.c"], "{v}");
}

#[test]
fn a_file_built_only_when_a_symbol_is_not_set_ranks_after_the_usual_one() {
    let body = "int lib_op(void)\n{\n\treturn 0;\n}\n";
    let t = tree(
        "negated",
        &[
            ("Kbuild", "obj-y += lib/\n"),
            (
                "lib/Makefile",
                "obj-$(CONFIG_GENERIC_OP) += z_generic.o\nifndef CONFIG_GENERIC_OP\nobj-y += a_fallback.o\nendif\n",
            ),
            ("lib/a_fallback.c", body),
            ("lib/z_generic.c", body),
        ],
    );
    assert_eq!(
        paths(&json(&t, &["def", "lib_op"])),
        ["lib/z_generic.c", "lib/a_fallback.c"]
    );
    // With a config, what it builds.
    let v = json(
        &t,
        &["def", "lib_op", "--active-config", "CONFIG_GENERIC_OP=n"],
    );
    assert_eq!(paths(&v), ["lib/a_fallback.c"]);
}
