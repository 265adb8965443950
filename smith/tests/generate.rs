//! Every generated program verifies: 10,000 seeds, generation and
//! verification only.

use glow_ir::diag::render_all;
use glow_ir::{parser, verifier, Diagnostic};

fn check(seeds: std::ops::Range<u64>) {
    for seed in seeds {
        let p = glow_smith::generate(seed);
        let m = parser::parse(p.text.as_bytes()).unwrap_or_else(|d| {
            panic!(
                "seed {seed}: does not parse:\n{}\n{}",
                render_all(&d, "gen.gir", p.text.as_bytes()),
                p.text
            )
        });
        let d = verifier::verify_module(&m);
        assert!(
            !d.iter().any(Diagnostic::is_error),
            "seed {seed}: does not verify:\n{}\n{}",
            render_all(&d, "gen.gir", p.text.as_bytes()),
            p.text
        );
    }
}

#[test]
fn ten_thousand_seeds_verify() {
    // Two threads: the seeds are independent.
    std::thread::scope(|s| {
        let a = s.spawn(|| check(0..5_000));
        check(5_000..10_000);
        a.join().unwrap();
    });
}

#[test]
fn same_seed_same_program() {
    for seed in [0, 1, 77, u64::MAX] {
        assert_eq!(
            glow_smith::generate(seed).text,
            glow_smith::generate(seed).text
        );
    }
    assert_ne!(glow_smith::generate(1).text, glow_smith::generate(2).text);
}
