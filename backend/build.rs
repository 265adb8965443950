//! Sets `cfg(has_cc)` for the tests that compile C (see ../build/tool_cfg.rs),
//! and `cfg(has_tsan)` when `cc -fsanitize=thread` builds and runs a threaded
//! program (the thread pool's race test).
#[path = "../build/tool_cfg.rs"]
mod tool_cfg;

use std::process::Command;

fn main() {
    tool_cfg::detect("has_cc", &["cc"]);
    println!("cargo::rustc-check-cfg=cfg(has_tsan)");
    if tsan_runs() {
        println!("cargo::rustc-cfg=has_tsan");
    }
}

/// Whether a pthread program built with `-fsanitize=thread` runs cleanly
/// (the runtime library may be missing, or refuse the memory layout).
fn tsan_runs() -> bool {
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return false;
    };
    let dir = std::path::PathBuf::from(out);
    let src = dir.join("tsan_probe.c");
    let exe = dir.join("tsan_probe");
    let probe = "#include <pthread.h>\nstatic int x;\n\
                 static void *f(void *a) { __atomic_add_fetch(&x, 1, __ATOMIC_SEQ_CST); return a; }\n\
                 int main(void) { pthread_t t; if (pthread_create(&t, 0, f, 0)) return 1;\n\
                 pthread_join(t, 0); return x != 1; }\n";
    if std::fs::write(&src, probe).is_err() {
        return false;
    }
    let built = Command::new("cc")
        .args(["-fsanitize=thread", "-O1", "-pthread"])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .is_ok_and(|o| o.status.success());
    built
        && Command::new(&exe)
            .output()
            .is_ok_and(|o| o.status.success())
}
