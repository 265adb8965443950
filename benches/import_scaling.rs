//! Import time against model size: synthetic ONNX chains of 2k, 8k and 32k
//! alternating Relu/Sigmoid nodes, imported in process (decode, lower,
//! print) and through the `glow-import` binary, with the growth per 4x more
//! nodes (linear is 4x; the target is at most 5x). Run:
//! `cargo bench --bench import_scaling` (`-- 2000 8000 32000 128000` picks
//! other sizes; `-- --write DIR` also keeps the generated models in DIR).

use glow_import::onnx::{GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto};
use glow_import::{import_model, Options};
use prost::Message;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn value_info(name: &str, dims: &[i64]) -> ValueInfoProto {
    ValueInfoProto::tensor(name, glow_import::onnx::dtype::FLOAT, dims)
}

/// `x -> Relu -> Sigmoid -> Relu -> ... -> y`, `n` nodes on a [1, 64] tensor.
fn chain(n: usize) -> Vec<u8> {
    let name = |k: usize| {
        if k == 0 {
            "x".to_string()
        } else if k == n {
            "y".to_string()
        } else {
            format!("t{k}")
        }
    };
    let node = (0..n)
        .map(|k| NodeProto {
            input: vec![name(k)],
            output: vec![name(k + 1)],
            name: format!("n{k}"),
            op_type: if k % 2 == 0 { "Relu" } else { "Sigmoid" }.to_string(),
            ..NodeProto::default()
        })
        .collect();
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        producer_name: "glow-rs import_scaling".to_string(),
        graph: Some(GraphProto {
            node,
            name: "chain".to_string(),
            initializer: Vec::new(),
            input: vec![value_info("x", &[1, 64])],
            output: vec![value_info("y", &[1, 64])],
        }),
    };
    model.encode_to_vec()
}

/// Best of three, so one scheduling hiccup does not decide the figure.
fn best_of_3(mut f: impl FnMut() -> Duration) -> Duration {
    (0..3).map(|_| f()).min().expect("three runs")
}

fn main() {
    let mut sizes: Vec<usize> = Vec::new();
    let mut keep: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--write" {
            keep = args.next().map(PathBuf::from);
        } else if let Ok(n) = a.parse() {
            sizes.push(n);
        }
    }
    if sizes.is_empty() {
        sizes = vec![2000, 8000, 32000];
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = keep.as_deref().unwrap_or(dir.path());
    std::fs::create_dir_all(dir).expect("model dir");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_glow-import"));
    println!(
        "{:>8} {:>10} {:>12} {:>8} {:>12} {:>8}",
        "nodes", "gir insts", "in-process", "growth", "glow-import", "growth"
    );
    let mut prev: Option<(usize, Duration, Duration)> = None;
    for &n in &sizes {
        let bytes = chain(n);
        let path = dir.join(format!("chain{n}.onnx"));
        std::fs::write(&path, &bytes).expect("write model");
        let mut insts = 0;
        let inproc = best_of_3(|| {
            let start = Instant::now();
            let imported = import_model(&bytes, &Options::default()).expect("import");
            let text = imported.gir_text();
            let d = start.elapsed();
            insts = imported.function.layout.len();
            std::hint::black_box(text);
            d
        });
        let out = dir.join(format!("chain{n}.gir"));
        let binary = best_of_3(|| {
            let start = Instant::now();
            let status = Command::new(&bin)
                .arg(&path)
                .arg("-o")
                .arg(&out)
                .status()
                .expect("run glow-import");
            assert!(status.success(), "glow-import failed on {}", path.display());
            start.elapsed()
        });
        let growth = |now: Duration, before: Duration, m: usize| {
            let per4x = (now.as_secs_f64() / before.as_secs_f64())
                .powf(2.0 / ((n as f64 / m as f64).log2()));
            format!("{per4x:.2}x")
        };
        let (g1, g2) = match prev {
            Some((m, a, b)) => (growth(inproc, a, m), growth(binary, b, m)),
            None => ("-".to_string(), "-".to_string()),
        };
        println!(
            "{:>8} {:>10} {:>10.3} s {:>8} {:>10.3} s {:>8}",
            n,
            insts,
            inproc.as_secs_f64(),
            g1,
            binary.as_secs_f64(),
            g2
        );
        prev = Some((n, inproc, binary));
    }
    println!("growth: time ratio to the previous size, scaled to 4x more nodes (linear = 4x)");
}
