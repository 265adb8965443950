//! `glow-import`: an ONNX model into a `.gir` file (and a safetensors
//! weights file). Exit 0 on success, 1 on any import error (a message on
//! stderr, never a panic), 2 on bad usage. Outputs are written atomically.

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use glow_import::{import_model, safetensors_bytes, write_atomic, Layout, Options};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LayoutArg {
    Nhwc,
    Nchw,
}

/// Import an ONNX model into glow's .gir instruction IR.
#[derive(Parser, Debug)]
#[command(name = "glow-import", version)]
struct Args {
    /// The ONNX model file.
    model: PathBuf,
    /// Where to write the .gir text (`-` for stdout).
    #[arg(short = 'o', long = "output", default_value = "-")]
    output: String,
    /// Write constant weights to this safetensors file instead of inline `Data:`.
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Batch size: the first dimension of every graph input.
    #[arg(long)]
    batch: Option<u64>,
    /// Activation layout of the spatial instructions.
    #[arg(long, value_enum, default_value = "nhwc")]
    layout: LayoutArg,
    /// Fill stripped tensors with seeded random values of their recorded mean and std.
    #[arg(long, value_name = "SEED")]
    fill_stripped: Option<u64>,
    /// Refuse models whose constants (initializers and folded results, as f32) take more than
    /// BYTES in total; at most the default, 4294967296.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..=glow_ir::limits::MAX_TOTAL_BYTES))]
    max_constant_bytes: Option<u64>,
    /// Freeze graph input NAME to the value in FILE (`.npy` or an ONNX `TensorProto` such as
    /// `input_1.pb`): it becomes a constant, so a shape, axes or sizes fed at run time are
    /// known at import time (repeatable).
    #[arg(long = "bind", value_name = "NAME=FILE")]
    bind: Vec<String>,
}

fn run(args: &Args) -> Result<()> {
    let bytes = std::fs::read(&args.model)
        .with_context(|| format!("cannot read {}", args.model.display()))?;
    let opts = Options {
        batch: args.batch,
        layout: match args.layout {
            LayoutArg::Nhwc => Layout::Nhwc,
            LayoutArg::Nchw => Layout::Nchw,
        },
        fill_stripped: args.fill_stripped,
        inline_weights: args.weights.is_none(),
        base_dir: args.model.parent().map(PathBuf::from),
        frozen_inputs: bound_inputs(&args.bind)?,
        max_constant_bytes: args.max_constant_bytes,
    };
    if matches!(args.batch, Some(0)) {
        anyhow::bail!("--batch must be at least 1");
    }
    let imported = import_model(&bytes, &opts)
        .with_context(|| format!("cannot import {}", args.model.display()))?;
    for note in &imported.notes {
        eprintln!("glow-import: {note}");
    }
    if let Some(w) = &args.weights {
        write_atomic(w, &safetensors_bytes(&imported.weights)?)?;
    }
    let text = imported.gir_text();
    if args.output == "-" {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        // A closed pipe is not an import failure.
        let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    } else {
        write_atomic(std::path::Path::new(&args.output), text.as_bytes())?;
    }
    Ok(())
}

/// The `--bind NAME=FILE` values, read and decoded.
fn bound_inputs(binds: &[String]) -> Result<Vec<(String, glow_import::tensor::Tensor)>> {
    let mut out: Vec<(String, glow_import::tensor::Tensor)> = Vec::new();
    for b in binds {
        let Some((name, file)) = b.split_once('=') else {
            anyhow::bail!("--bind `{b}`: expected NAME=FILE");
        };
        if out.iter().any(|(n, _)| n == name) {
            anyhow::bail!("--bind: graph input `{name}` is bound twice");
        }
        let bytes = std::fs::read(file).with_context(|| format!("cannot read {file}"))?;
        let t = glow_import::read_bound_tensor(&bytes)
            .map_err(|e| anyhow::anyhow!("--bind {name}={file}: {e}"))?;
        out.push((name.to_string(), t));
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("glow-import: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
