//! Every name a C99 program may see — keywords, the identifiers and macros
//! of `<math.h>`, `<stdlib.h>`, `<stdio.h>`, `<string.h>`, `<stdint.h>`,
//! `<stddef.h>`, `<float.h>`, `<limits.h>`, the bundle's own macros — used
//! as a function name and as a weight name whose macro would spell it
//! (`INT8` + `%MAX` = `INT8_MAX`). All bundles are compiled warning-free
//! into one program that includes every header after the C99 headers, calls
//! every entry point and checks what it wrote. Ignored without `cc`.

use glow_backend::namer::reserved_names;
use glow_backend::{emit_bundle, BundleOptions, CcOptions};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::process::Command;

/// Names C99 reserves by pattern, one of each kind, and names that would
/// give one bundle another's include guard or size macro.
const EXTRA: &[&str] = &[
    "INT8_MAX",
    "UINT64_C",
    "INT_LEAST16_MIN",
    "int_fast8_t",
    "uint32_t",
    "FLT_MAX",
    "DBL_EPSILON",
    "LDBL_DIG",
    "strdup",
    "memfrob",
    "wcsfoo",
    "f_x_H",
    "f_x",
    "g_MEM_ALIGN",
    "g_CONSTANT_MEM_SIZE",
    "glow_driver_c",
];

fn quote(s: &str) -> String {
    format!("\"{s}\"")
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn a_bundle_per_reserved_name_compiles_and_runs() {
    // Function name -> weight names.
    let mut fns: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut names = reserved_names();
    names.extend(EXTRA.iter().map(|s| s.to_string()));
    for n in &names {
        fns.entry(n.clone()).or_default().push(n.clone());
        if let Some((p, rest)) = n
            .split_once('_')
            .filter(|(p, r)| !p.is_empty() && !r.is_empty())
        {
            fns.entry(p.to_string()).or_default().push(rest.to_string());
        }
    }
    fns.entry("f".into()).or_default().push("x_H".into());
    let mut src = String::new();
    for (f, ws) in &fns {
        let mut ws = ws.clone();
        ws.sort();
        ws.dedup();
        let _ = write!(src, "function {}\ndeclare {{\n", quote(f));
        for w in &ws {
            let _ = writeln!(src, "  %{} = WeightVar float<2> mutable", quote(w));
        }
        src.push_str("}\n\ncode {\n");
        for (i, w) in ws.iter().enumerate() {
            let _ = writeln!(
                src,
                "  {i} %s{i} = splat @out %{} {{ Value: 3.0 }}",
                quote(w)
            );
        }
        src.push_str("}\n\n");
    }
    let m = glow_ir::parser::parse(src.as_bytes()).expect("parses");
    assert!(glow_ir::verifier::verify_module(&m).is_empty());
    // Bundles of one program must not share an identifier (a weight macro
    // `wchar_t_1` of bundle `wchar` is the entry point of bundle
    // `wchar_t_1`); such bundles go to separate programs.
    let mut groups: Vec<(
        std::collections::BTreeSet<String>,
        Vec<glow_backend::Bundle>,
    )> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in &m.functions {
        let b = emit_bundle(f, &BundleOptions::default()).expect("bundle");
        assert!(seen.insert(b.name.clone()), "two bundles named {}", b.name);
        let mut ids: std::collections::BTreeSet<String> =
            b.mutable.iter().map(|w| w.macro_name.clone()).collect();
        ids.insert(b.name.clone());
        for s in glow_backend::namer::BUNDLE_SUFFIXES {
            ids.insert(format!("{}{s}", b.name));
        }
        assert_eq!(
            ids.len(),
            b.mutable.len() + 6,
            "a bundle's own names clash: {ids:?}"
        );
        match groups.iter_mut().find(|(used, _)| used.is_disjoint(&ids)) {
            Some((used, bs)) => {
                used.extend(ids);
                bs.push(b);
            }
            None => groups.push((ids, vec![b])),
        }
    }
    assert!(groups.len() <= 4, "{} programs", groups.len());
    let mut ran = 0;
    for (_, bundles) in &groups {
        ran += build_and_run(bundles);
    }
    assert_eq!(ran, m.functions.len());
}

/// Compiles `bundles` into one program that includes the C99 headers and
/// every bundle header, calls every entry point and checks each output;
/// returns how many ran.
fn build_and_run(bundles: &[glow_backend::Bundle]) -> usize {
    let dir = tempfile::tempdir().expect("temp dir");
    // Every bundle's source starts with the same prelude (includes, shared
    // helpers); one translation unit holds it once, then each bundle's own
    // prototype and entry point. A bundle with another prelude is its own file.
    let mut all_c = String::new();
    let mut extra_c: Vec<String> = Vec::new();
    let mut prelude: Option<String> = None;
    let mut main = String::from(
        "#include <math.h>\n#include <stdlib.h>\n#include <stdio.h>\n#include <string.h>\n\
         #include <stdint.h>\n#include <stddef.h>\n#include <float.h>\n#include <limits.h>\n",
    );
    let mut calls = String::new();
    for b in bundles {
        b.write_to(dir.path()).expect("writes");
        let own = format!("int {}(uint8_t *constantWeight", b.name);
        let at = b.c_source.find(&own).expect("the entry point's prototype");
        let (pre, rest) = b.c_source.split_at(at);
        // The first comment names the bundle; the rest is shared.
        let pre = pre.split_once("*/").map_or(pre, |(_, p)| p);
        match &prelude {
            None => {
                prelude = Some(pre.to_string());
                all_c.push_str(&b.c_source);
            }
            Some(p) if p == pre => all_c.push_str(rest),
            Some(_) => extra_c.push(format!("{}.c", b.name)),
        }
        let _ = writeln!(main, "#include \"{}.h\"", b.name);
        let n = &b.name;
        let _ = writeln!(
            calls,
            "  m = region({n}_MUTABLE_MEM_SIZE); a = region({n}_ACTIVATIONS_MEM_SIZE);\n  \
             if ({n}(c, m, a) != 0) return 1;"
        );
        for w in &b.mutable {
            let _ = writeln!(
                calls,
                "  if (((float *)(m + {}))[1] != 3.0f) {{ printf(\"bad %s\\n\", \"{}\"); return 1; }}",
                w.macro_name, w.macro_name
            );
        }
        calls.push_str("  count++;\n");
    }
    main.push_str(
        "\nstatic uint8_t *region(size_t n) {\n  void *p = malloc(n + 64);\n  \
         if (!p) exit(3);\n  return (uint8_t *)(((uintptr_t)p + 63) / 64 * 64);\n}\n\n\
         int main(void) {\n  uint8_t *c = region(64), *m, *a;\n  int count = 0;\n",
    );
    main.push_str(&calls);
    main.push_str("  printf(\"%d bundles ran\\n\", count);\n  return 0;\n}\n");
    std::fs::write(dir.path().join("main.c"), &main).expect("main.c");
    std::fs::write(dir.path().join("all.c"), &all_c).expect("all.c");
    let mut args: Vec<String> = [
        "-std=c99", "-O0", "-Wall", "-Wextra", "-Werror", "-o", "prog", "main.c", "all.c",
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra_c.iter().cloned());
    args.extend(["-lm".into(), "-lpthread".into()]);
    let out = CcOptions::new(Some("cc"), "")
        .run(dir.path(), &args)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(dir.path().join("prog"))
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    assert_eq!(stdout.trim(), format!("{} bundles ran", bundles.len()));
    assert!(
        extra_c.len() <= 8,
        "{} bundles with another prelude",
        extra_c.len()
    );
    bundles.len()
}
