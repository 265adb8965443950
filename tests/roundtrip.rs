//! Every `.gir` file in the lit suite round-trips: each `// -----` chunk that
//! parses prints to text that parses back and prints identically. Also a
//! robustness sweep: mutated versions of every file never panic the parser,
//! the verifier or the printer.

use glow_ir::printer::{print_module, PrintOptions};
use glow_ir::{parser, verifier};
use std::path::{Path, PathBuf};

fn suite_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test");
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "gir"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_suite_file_round_trips() {
    let mut round_tripped = 0;
    for path in suite_files() {
        let source = std::fs::read(&path).expect("readable test file");
        for chunk in glow_ir::expect::split_input(&source) {
            let Ok(module) = parser::parse(&chunk) else {
                continue;
            };
            let once = print_module(&module, PrintOptions::default());
            let again = match parser::parse(once.as_bytes()) {
                Ok(m) => print_module(&m, PrintOptions::default()),
                Err(d) => panic!(
                    "{}: printed IR does not parse:\n{}\n{}",
                    path.display(),
                    glow_ir::diag::render_all(&d, "<printed>", once.as_bytes()),
                    once
                ),
            };
            assert_eq!(
                once,
                again,
                "{}: print(parse(x)) is not a fixed point",
                path.display()
            );
            // Annotated output parses back to the same function too.
            let annotated = print_module(&module, PrintOptions { annotate: true });
            let m = parser::parse(annotated.as_bytes()).expect("annotated output parses");
            assert_eq!(
                print_module(&m, PrintOptions::default()),
                once,
                "{}",
                path.display()
            );
            round_tripped += 1;
        }
    }
    assert!(
        round_tripped >= 10,
        "only {round_tripped} chunks round-tripped; is test/ there?"
    );
}

/// Every chunk of the suite that parses and verifies goes through the infer
/// and train pipelines; each output verifies (the pass manager checks after
/// every pass) and round-trips, planned `Offset`s and `Arena` included.
#[test]
fn pipeline_outputs_verify_and_round_trip() {
    use glow_passes::pipeline::{Mode, Pipeline};
    let mut optimized = 0;
    for path in suite_files() {
        let source = std::fs::read(&path).expect("readable test file");
        for chunk in glow_ir::expect::split_input(&source) {
            let Ok(module) = parser::parse(&chunk) else {
                continue;
            };
            if !verifier::verify_module(&module).is_empty() {
                continue;
            }
            for mode in [Mode::Infer, Mode::Train] {
                let mut m = module.clone();
                if let Err(d) = glow_passes::run_pipeline(&mut m, &Pipeline::for_mode(mode)) {
                    panic!(
                        "{}: {mode:?} pipeline failed:\n{}",
                        path.display(),
                        glow_ir::diag::render_all(&d, "<chunk>", &chunk)
                    );
                }
                let once = print_module(&m, PrintOptions::default());
                let reparsed = parser::parse(once.as_bytes()).expect("pipeline output parses");
                assert!(
                    verifier::verify_module(&reparsed).is_empty(),
                    "{}: output does not verify",
                    path.display()
                );
                assert_eq!(
                    print_module(&reparsed, PrintOptions::default()),
                    once,
                    "{}",
                    path.display()
                );
                optimized += 1;
            }
        }
    }
    assert!(
        optimized >= 100,
        "only {optimized} pipeline runs; is test/ there?"
    );
}

/// A small deterministic generator so the sweep is the same on every run.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn mutated_inputs_never_panic() {
    let mut rng = Lcg(0x9e3779b97f4a7c15);
    let interesting: &[&[u8]] = &[
        b"%", b"@", b"{", b"}", b"[", b"]", b"<", b">", b"\n", b"\"", b"...", b"-", b"0", b"x",
        b"\xff", b"//",
    ];
    for path in suite_files() {
        let source = std::fs::read(&path).expect("readable test file");
        for _ in 0..40 {
            let mut m = source.clone();
            for _ in 0..1 + rng.next() % 4 {
                if m.is_empty() {
                    break;
                }
                let at = (rng.next() as usize) % m.len();
                match rng.next() % 3 {
                    0 => {
                        m.remove(at);
                    }
                    1 => {
                        let t = interesting[(rng.next() as usize) % interesting.len()];
                        m.splice(at..at, t.iter().copied());
                    }
                    _ => {
                        let end = (at + 1 + (rng.next() as usize) % 20).min(m.len());
                        m.drain(at..end);
                    }
                }
            }
            let result = std::panic::catch_unwind(|| {
                let diags = match parser::parse(&m) {
                    Ok(module) => {
                        let _ = print_module(&module, PrintOptions { annotate: true });
                        verifier::verify_module(&module)
                    }
                    Err(d) => d,
                };
                let _ = glow_ir::diag::render_all(&diags, "m.gir", &m);
                diags
            });
            let Ok(diags) = result else {
                panic!(
                    "{}: panic on mutated input:\n{}",
                    path.display(),
                    String::from_utf8_lossy(&m)
                );
            };
            // Every diagnostic points at a position inside the file.
            for d in &diags {
                let inside = d
                    .primary
                    .as_ref()
                    .is_some_and(|l| l.span.start as usize <= m.len());
                assert!(
                    inside,
                    "{}: a diagnostic without a position in the file: {}\n{}",
                    path.display(),
                    d.message,
                    String::from_utf8_lossy(&m)
                );
            }
        }
    }
}
