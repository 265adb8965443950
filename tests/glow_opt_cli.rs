//! `glow-opt`'s exit-code and output-file contract: 0 on success, 1 on an
//! input error, 2 on a usage error, never a panic; an output file is either
//! written whole or left untouched.

use std::path::Path;
use std::process::{Command, Output};

fn glow_opt(args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_glow-opt"));
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("glow-opt starts");
    let input = stdin.unwrap_or(b"").to_vec();
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("glow-opt finishes");
    writer.join().expect("stdin writer");
    out
}

const VALID: &[u8] = b"function f\ndeclare {\n  %x = WeightVar float<2> mutable\n}\n\ncode {\n  0 %s = splat @out %x { Value: 1 }\n}\n";

#[test]
fn exit_codes() {
    assert_eq!(glow_opt(&["-"], Some(VALID)).status.code(), Some(0));
    assert_eq!(
        glow_opt(&[], Some(b"function f\ndeclare {\n"))
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        glow_opt(&["/nonexistent/file.gir"], None).status.code(),
        Some(1)
    );
    assert_eq!(glow_opt(&["--no-such-flag"], None).status.code(), Some(2));
    assert_eq!(
        glow_opt(&["--pass=no-such-pass"], Some(VALID))
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        glow_opt(&["--mode=fast"], Some(VALID)).status.code(),
        Some(2)
    );
}

#[test]
fn arbitrary_bytes_never_crash() {
    let mut seed = 0x2545f4914f6cdd1du64;
    for len in [0usize, 1, 7, 64, 300] {
        for _ in 0..8 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed & 0xff) as u8
                })
                .collect();
            let code = glow_opt(&["-"], Some(&bytes)).status.code();
            assert!(matches!(code, Some(0 | 1)), "exit {code:?} on {bytes:?}");
        }
    }
}

#[test]
fn output_file_is_atomic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out.gir");
    std::fs::write(&out, "previous contents").expect("write");
    let path = out.to_str().expect("utf-8 path");
    // A failing run leaves the old file as it was and no temp files behind.
    let failed = glow_opt(&["-", "-o", path], Some(b"function f\n"));
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(&out).expect("read"),
        "previous contents"
    );
    assert_eq!(entries(dir.path()), 1);
    // A successful run replaces it whole.
    let ok = glow_opt(&["-", "-o", path], Some(VALID));
    assert_eq!(ok.status.code(), Some(0));
    assert!(ok.stdout.is_empty());
    assert!(std::fs::read_to_string(&out)
        .expect("read")
        .starts_with("function f\n"));
    assert_eq!(entries(dir.path()), 1);
}

#[test]
fn output_is_deterministic() {
    let a = glow_opt(&["-", "--annotate"], Some(VALID));
    let b = glow_opt(&["-", "--annotate"], Some(VALID));
    assert_eq!(a.stdout, b.stdout);
    assert!(!a.stdout.is_empty());
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).expect("read dir").count()
}

/// `-o` never turns a device, FIFO or symlink into a regular file, and a
/// write error is an error (reproducer 1).
#[test]
fn output_to_special_files() {
    let null = glow_opt(&["-", "-o", "/dev/null"], Some(VALID));
    assert_eq!(null.status.code(), Some(0));
    assert!(!std::fs::metadata("/dev/null").expect("stat").is_file());
    if Path::new("/dev/full").exists() {
        let full = glow_opt(&["-", "-o", "/dev/full"], Some(VALID));
        assert_eq!(full.status.code(), Some(1));
        let err = String::from_utf8_lossy(&full.stderr);
        assert!(err.contains("cannot write '/dev/full'"), "{err}");
        assert!(!std::fs::metadata("/dev/full").expect("stat").is_file());
    }
    let dir = tempfile::tempdir().expect("temp dir");
    // A symlink stays a symlink; its target gets the output.
    let target = dir.path().join("target.gir");
    let link = dir.path().join("link.gir");
    std::fs::write(&target, "old").expect("write");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let ok = glow_opt(&["-", "-o", link.to_str().unwrap()], Some(VALID));
    assert_eq!(ok.status.code(), Some(0));
    assert!(std::fs::symlink_metadata(&link)
        .expect("lstat")
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&target)
        .expect("read")
        .starts_with("function f\n"));
    // A FIFO is written through, to whoever reads it.
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.map(|s| s.success()).unwrap_or(false) {
        let reader_path = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(reader_path).expect("read fifo"));
        let ok = glow_opt(&["-", "-o", fifo.to_str().unwrap()], Some(VALID));
        assert_eq!(ok.status.code(), Some(0));
        let got = reader.join().expect("reader");
        assert!(got.starts_with(b"function f\n"));
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata(&fifo)
            .expect("stat")
            .file_type()
            .is_fifo());
    }
}

/// A bad pipeline flag is a usage error (exit 2) in every tool that takes
/// one, as glow-opt's table in docs/glow-opt.md says.
#[test]
fn a_bad_pipeline_exits_2_in_every_tool() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("f.gir");
    std::fs::write(&file, VALID).expect("writes");
    let file = file.to_str().expect("utf-8 path");
    let cases: [(&str, &[&str]); 7] = [
        (env!("CARGO_BIN_EXE_glow-opt"), &["--pass=dsee"]),
        (env!("CARGO_BIN_EXE_glow-run"), &["--pass=dsee"]),
        (env!("CARGO_BIN_EXE_glow-run"), &["-O7"]),
        (env!("CARGO_BIN_EXE_glow-run"), &["--mode=infr"]),
        (env!("CARGO_BIN_EXE_glow-run"), &["--compare-passes=infr"]),
        (env!("CARGO_BIN_EXE_glow-run"), &["--bisect=infr"]),
        (env!("CARGO_BIN_EXE_glow-reduce"), &["--miscompile=infr"]),
    ];
    for (tool, args) in cases {
        let out = Command::new(tool)
            .arg(file)
            .args(args)
            .args(if tool.ends_with("glow-run") {
                &["--engine=interp"][..]
            } else {
                &[]
            })
            .output()
            .expect("the tool runs");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{tool} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn weights_without_emit_c_is_a_usage_error() {
    let out = glow_opt(&["-", "--weights", "w.safetensors"], Some(VALID));
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no output on a usage error");
}
