//! Sets `cfg(has_cc)` for the tests that compile C (see ../build/tool_cfg.rs),
//! `cfg(has_tsan)` when `cc -fsanitize=thread` builds and runs a threaded
//! program (the thread pool's race test), `cfg(has_vnni_ymm)` when
//! `-march=native` builds and runs a 256-bit AVX-512 VNNI instruction and
//! `cfg(has_avxvnni_cc)` when `cc -march=alderlake` targets AVX-VNNI.
#[path = "../build/tool_cfg.rs"]
mod tool_cfg;

use std::process::Command;

fn main() {
    tool_cfg::detect("has_cc", &["cc"]);
    println!("cargo::rustc-check-cfg=cfg(has_tsan)");
    let probe = "#include <pthread.h>\nstatic int x;\n\
                 static void *f(void *a) { __atomic_add_fetch(&x, 1, __ATOMIC_SEQ_CST); return a; }\n\
                 int main(void) { pthread_t t; if (pthread_create(&t, 0, f, 0)) return 1;\n\
                 pthread_join(t, 0); return x != 1; }\n";
    if c_probe(
        "tsan",
        probe,
        &["-fsanitize=thread", "-O1", "-pthread"],
        true,
    ) {
        println!("cargo::rustc-cfg=has_tsan");
    }
    // The 256-bit vpdpbusd: run through AVX-512 VNNI's VL form here, and
    // built (not run) for an AVX-VNNI target.
    println!("cargo::rustc-check-cfg=cfg(has_vnni_ymm)");
    let vnni = "#include <immintrin.h>\n\
                #if !defined(__AVX512VNNI__) || !defined(__AVX512VL__)\n#error no VNNI\n#endif\n\
                int main(void) { __m256i a = _mm256_set1_epi32(1);\n\
                a = _mm256_dpbusd_epi32(a, a, a); return _mm256_extract_epi32(a, 0) != 2; }\n";
    if c_probe("vnni_ymm", vnni, &["-O1", "-march=native"], true) {
        println!("cargo::rustc-cfg=has_vnni_ymm");
    }
    println!("cargo::rustc-check-cfg=cfg(has_avxvnni_cc)");
    let avxvnni = "#if !defined(__AVXVNNI__) || defined(__AVX512F__)\n#error no AVX-VNNI\n#endif\n\
                   int main(void) { return 0; }\n";
    if c_probe("avxvnni", avxvnni, &["-march=alderlake"], false) {
        println!("cargo::rustc-cfg=has_avxvnni_cc");
    }
}

/// Whether `cc FLAGS` builds `source` (and, with `run`, the program exits 0:
/// a runtime library may be missing, or refuse the memory layout).
fn c_probe(name: &str, source: &str, flags: &[&str], run: bool) -> bool {
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return false;
    };
    let dir = std::path::PathBuf::from(out);
    let src = dir.join(format!("{name}_probe.c"));
    let exe = dir.join(format!("{name}_probe"));
    if std::fs::write(&src, source).is_err() {
        return false;
    }
    let built = Command::new("cc")
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .is_ok_and(|o| o.status.success());
    built
        && (!run
            || Command::new(&exe)
                .output()
                .is_ok_and(|o| o.status.success()))
}
