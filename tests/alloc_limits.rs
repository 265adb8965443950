//! Reproducer 14 and its kin: a 2 GiB weight is within the tensor limit, but under an
//! address-space limit its allocation fails. glow-run must say which buffer
//! it could not allocate and exit 1; it aborted with "memory allocation of
//! 2147483712 bytes failed" and a core dump. (A lit RUN line cannot set a
//! resource limit, so this is a Rust test: the limit is set in the child.)

use std::os::unix::process::CommandExt;
use std::process::Command;

/// glow-run on `gir` under an address-space limit.
fn run_limited(gir: &str, limit: u64, extra: &[&str]) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_glow-run"));
    cmd.args([gir, "--engine=interp"]).args(extra);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit as libc::rlim_t,
                rlim_max: limit as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().expect("glow-run starts");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_weight_too_large_for_memory_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let gir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/limit-alloc-2gib.gir");
    let (code, err) = run_limited(gir, 1 << 30, &["--output-dir", out.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        "glow-run: error: cannot allocate 2.0 GiB for the contents of `%x`"
    );
    assert!(!out.exists(), "no output directory on error");
}

#[test]
fn the_interpreters_region_is_named_when_it_is_what_fails() {
    // Small weights, a 2 GiB activation: the interpreter's arena is what fails.
    let dir = tempfile::tempdir().unwrap();
    let gir = dir.path().join("act.gir");
    std::fs::write(
        &gir,
        "function act\ndeclare {\n  %y = WeightVar float<16> mutable\n}\n\ncode {\n  \
         0 %a = allocactivation { Ty: float<536870912> }\n  1 %s = splat @out %y { Value: 1.0 }\n  \
         2 %d = deallocactivation @out %a\n}\n",
    )
    .unwrap();
    let (code, err) = run_limited(gir.to_str().unwrap(), 1 << 30, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        "glow-run: error: cannot allocate 2.0 GiB for the activations of `act`"
    );
}

#[test]
fn a_kernel_temporary_too_large_for_memory_is_an_error_at_the_instruction() {
    // The interpreter builds an 8-byte word per element while it splats:
    // a 256 MiB int8 buffer needs a 2 GiB temporary, which the limit refuses.
    let dir = tempfile::tempdir().unwrap();
    let gir = dir.path().join("tmp.gir");
    std::fs::write(
        &gir,
        "function tmp\ndeclare {\n  %y = WeightVar float<16> mutable\n}\ncode {\n  \
         0 %a = allocactivation { Ty: int8<268435456> }\n  1 %s = splat @out %a { Value: 1.0 }\n  \
         2 %t = splat @out %y { Value: 1.0 }\n  3 %d = deallocactivation @out %a\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, err) = run_limited(
        gir.to_str().unwrap(),
        3 << 29,
        &["--output-dir", out.to_str().unwrap()],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "{}:7:3: error: `%s` (splat): cannot allocate 2.0 GiB for a temporary of the interpreter",
            gir.display()
        )),
        "{err}"
    );
    assert!(!out.exists(), "no output directory on error");
}
