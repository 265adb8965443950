//! `glow-train`: trains the const weights of an inference `.gir` function
//! with SGD (docs/training.md). The training step is built once by the
//! `differentiate` pass and glow-opt's `-O` pipeline and compiled once (C
//! engine by default); every batch then runs it on memory kept between
//! steps. Accuracy on a test set is measured after each epoch with the
//! inference function, and the trained weights are written as safetensors
//! that `glow-run --weights` reads. Exit 0 on success, 1 on any error.

use clap::{Parser, ValueEnum};
use glow_backend::npy;
use glow_backend::run::{self, Engine, RunOptions, Session};
use glow_backend::CcOptions;
use glow_ir::diag::render_all;
use glow_ir::{parser, verifier, Diagnostic, Function, Module, Mutability};
use glow_passes::cli::PipelineArgs;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum EngineArg {
    C,
    Interp,
}

#[derive(Parser, Debug)]
#[command(
    name = "glow-train",
    version,
    about = "Train the weights of a .gir function with SGD on a dataset of .npy files"
)]
struct Cli {
    /// The inference `.gir` (its batch size is the training batch size).
    input: PathBuf,
    /// Initial constant weights by name (safetensors, as glow-import writes them).
    #[arg(long, value_name = "W.safetensors")]
    weights: Option<PathBuf>,
    /// Training images: float32 .npy of [count, ...the input's dims after the batch].
    #[arg(long, value_name = "X.npy")]
    train_images: PathBuf,
    /// Training labels: int64 or int32 .npy of [count], each in 0..classes.
    #[arg(long, value_name = "Y.npy")]
    train_labels: PathBuf,
    /// Test images, to report accuracy after each epoch.
    #[arg(long, value_name = "X.npy", requires = "test_labels")]
    test_images: Option<PathBuf>,
    #[arg(long, value_name = "Y.npy", requires = "test_images")]
    test_labels: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    epochs: u64,
    /// Learning rate.
    #[arg(long, default_value_t = 0.01)]
    lr: f64,
    #[arg(long, default_value_t = 0.0)]
    momentum: f64,
    /// L2 weight decay.
    #[arg(long, default_value_t = 0.0)]
    weight_decay: f64,
    /// Seed of the per-epoch shuffle.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The mutable weight that takes the images (default: the only one read).
    #[arg(long = "input", value_name = "NAME")]
    input_name: Option<String>,
    /// Where the trained weights go (safetensors; rewritten after each epoch).
    #[arg(short = 'o', long, value_name = "OUT.safetensors")]
    output: PathBuf,
    /// Also write the training step as `.gir`.
    #[arg(long, value_name = "STEP.gir")]
    emit_step: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "c")]
    engine: EngineArg,
    #[arg(long, value_name = "CC")]
    cc: Option<String>,
    #[arg(
        long,
        value_name = "FLAGS",
        default_value = "-O2",
        allow_hyphen_values = true
    )]
    cflags: String,
    /// Threads of the C engine's kernels.
    #[arg(long, default_value_t = 1)]
    threads: u32,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{}", msg.trim_end());
            ExitCode::from(1)
        }
    }
}

fn err(msg: impl std::fmt::Display) -> String {
    format!("glow-train: error: {msg}")
}

/// A labelled dataset in memory.
struct Data {
    /// Bytes of one image.
    image_bytes: usize,
    images: Vec<u8>,
    labels: Vec<i64>,
}

fn load_data(
    images: &Path,
    labels: &Path,
    image_dims: &[u64],
    classes: u64,
) -> Result<Data, String> {
    let read =
        |p: &Path| std::fs::read(p).map_err(|e| err(format!("cannot read '{}': {e}", p.display())));
    let x = npy::read(&read(images)?).map_err(|e| err(format!("{}: {e}", images.display())))?;
    let y = npy::read(&read(labels)?).map_err(|e| err(format!("{}: {e}", labels.display())))?;
    if x.descr != "<f4" || x.shape.len() != image_dims.len() + 1 || x.shape[1..] != *image_dims {
        return Err(err(format!(
            "{}: images must be float32 of shape [count, {}], found {} {:?}",
            images.display(),
            image_dims
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            x.descr,
            x.shape
        )));
    }
    let count = x.shape[0];
    if y.shape != [count] {
        return Err(err(format!(
            "{}: labels must have shape [{count}] (one per image), found {:?}",
            labels.display(),
            y.shape
        )));
    }
    let labels_v: Vec<i64> = match y.descr.as_str() {
        "<i8" => y
            .data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "<i4" => y
            .data
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()) as i64)
            .collect(),
        k => {
            return Err(err(format!(
                "{}: labels must be int64 or int32, found dtype {k}",
                labels.display()
            )))
        }
    };
    if let Some((i, &l)) = labels_v
        .iter()
        .enumerate()
        .find(|(_, &l)| l < 0 || l as u64 >= classes)
    {
        return Err(err(format!(
            "{}: label {l} of image {i} is outside 0..{classes} (the model has {classes} classes)",
            labels.display()
        )));
    }
    let image_bytes = (x.data.len() as u64 / count.max(1)) as usize;
    Ok(Data {
        image_bytes,
        images: x.data,
        labels: labels_v,
    })
}

/// A deterministic permutation of `0..n` for `epoch` (splitmix64 + Fisher-Yates).
fn shuffle(n: usize, seed: u64, epoch: u64) -> Vec<usize> {
    let mut s = seed ^ epoch.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

fn parse(path: &Path) -> Result<(Module, Vec<u8>, String), String> {
    let file = path.display().to_string();
    let source = std::fs::read(path).map_err(|e| err(format!("cannot read '{file}': {e}")))?;
    let m = parser::parse(&source).map_err(|d| render_all(&d, &file, &source))?;
    let diags = verifier::verify_module(&m);
    if diags.iter().any(Diagnostic::is_error) {
        return Err(render_all(&diags, &file, &source));
    }
    if m.functions.is_empty() {
        return Err(err(format!("{file}: the file has no function")));
    }
    Ok((m, source, file))
}

fn run_passes(m: &mut Module, args: PipelineArgs, source: &[u8], file: &str) -> Result<(), String> {
    let pipeline = args
        .pipeline(&glow_passes::PassRegistry::builtin())
        .map_err(err)?;
    glow_passes::run_pipeline(m, &pipeline).map_err(|d| render_all(&d, file, source))
}

/// glow-opt's `-O`.
fn infer_args() -> PipelineArgs {
    PipelineArgs {
        mode: Some("infer".into()),
        ..Default::default()
    }
}

fn real_main(cli: &Cli) -> Result<(), String> {
    let (module, source, file) = parse(&cli.input)?;
    let f = &module.functions[0];
    let given = match &cli.weights {
        Some(p) => glow_backend::weights::load_safetensors(f, p).map_err(err)?,
        None => BTreeMap::new(),
    };
    // The step: differentiate, then glow-opt's -O.
    let mut step_m = Module {
        functions: vec![f.clone()],
    };
    let diff = format!(
        "differentiate{{lr={},momentum={},weight-decay={}}}",
        cli.lr, cli.momentum, cli.weight_decay
    );
    run_passes(
        &mut step_m,
        PipelineArgs {
            passes: vec![diff],
            ..Default::default()
        },
        &source,
        &file,
    )?;
    run_passes(&mut step_m, infer_args(), &source, &file)?;
    let step = &step_m.functions[0];
    if let Some(p) = &cli.emit_step {
        let text = glow_ir::printer::print_module(&step_m, Default::default());
        glow_ir::output::write_file(p, text.as_bytes())
            .map_err(|e| err(format!("cannot write '{}': {e}", p.display())))?;
    }
    // The trained weights: the step's sgd targets.
    let trained: Vec<String> = step
        .layout
        .iter()
        .filter(|&i| step.inst(i).opcode == glow_ir::Opcode::Sgd)
        .map(|i| step.value_name(step.inst(i).operands[0].value).to_string())
        .collect();
    // Inference with the trained weights mutable, so each epoch sets them.
    let mut infer_f = f.clone();
    for w in &mut infer_f.weights {
        if trained.contains(&w.name) {
            w.mutability = Mutability::Mutable;
        }
    }
    let mut infer_m = Module {
        functions: vec![infer_f],
    };
    run_passes(&mut infer_m, infer_args(), &source, &file)?;
    let infer = &infer_m.functions[0];

    let input = pick_input(f, cli.input_name.as_deref())?;
    let in_ty = f
        .weights
        .iter()
        .find(|w| w.name == input)
        .map(|w| w.ty.clone())
        .expect("picked");
    let logits_ty = step
        .weights
        .iter()
        .find(|w| w.name == "labels")
        .map(|w| w.ty.clone());
    let batch = in_ty.dims[0] as usize;
    let out_name = output_name(f)?;
    let out_ty = f
        .weights
        .iter()
        .find(|w| w.name == out_name)
        .map(|w| w.ty.clone())
        .expect("output");
    let classes = out_ty.dims[1];
    let _ = logits_ty;
    let train = load_data(
        &cli.train_images,
        &cli.train_labels,
        &in_ty.dims[1..],
        classes,
    )?;
    let test = match (&cli.test_images, &cli.test_labels) {
        (Some(x), Some(y)) => Some(load_data(x, y, &in_ty.dims[1..], classes)?),
        _ => None,
    };
    if train.labels.len() < batch {
        return Err(err(format!(
            "{} training images are fewer than one batch of {batch}",
            train.labels.len()
        )));
    }
    let opts = RunOptions {
        engine: match cli.engine {
            EngineArg::C => Engine::C,
            EngineArg::Interp => Engine::Interp,
        },
        cc: CcOptions::new(cli.cc.as_deref(), &cli.cflags),
        seed: 0,
        strict_constants: cli.weights.is_some(),
        repeat: None,
        build_dir: None,
        codegen: glow_backend::CodegenOptions {
            threads: cli.threads,
            ..Default::default()
        },
    };
    // Every mutable weight the caller does not give starts at zero
    // (gradients, velocities, the loss, the batch).
    let zeros = |g: &Function,
                 given: &BTreeMap<String, Vec<u8>>|
     -> Result<BTreeMap<String, Vec<u8>>, String> {
        let mut all = given.clone();
        for w in &g.weights {
            if w.mutability == Mutability::Mutable && !all.contains_key(&w.name) && w.init.is_none()
            {
                all.insert(w.name.clone(), vec![0; w.ty.bytes() as usize]);
            }
        }
        run::resolve_weights(g, &all, &opts).map_err(err)
    };
    let step_w = zeros(step, &given)?;
    let infer_w = zeros(infer, &given)?;
    let fail = |e: run::RunError| match e {
        run::RunError::Diagnostic(d) => render_all(&[d], &file, &source),
        run::RunError::Message(m) => err(m),
    };
    let mut step_s = Session::new(step, &step_w, &opts).map_err(fail)?;
    let mut infer_s = Session::new(infer, &infer_w, &opts).map_err(fail)?;
    let steps = train.labels.len() / batch;
    eprintln!(
        "glow-train: {} images, batch {batch}, {steps} steps per epoch ({} left out), {} weights trained, engine {}",
        train.labels.len(),
        train.labels.len() - steps * batch,
        trained.len(),
        if matches!(cli.engine, EngineArg::C) { "C" } else { "interpreter" }
    );
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut last = (0.0f64, None::<f64>);
    for epoch in 0..cli.epochs {
        let order = shuffle(train.labels.len(), cli.seed, epoch);
        let mut sum = 0.0f64;
        for s in 0..steps {
            let rows = &order[s * batch..(s + 1) * batch];
            let (x, y) = gather(&train, rows);
            step_s.set(&input, &x).map_err(err)?;
            step_s.set("labels", &y).map_err(err)?;
            step_s.run().map_err(fail)?;
            let loss =
                f32::from_le_bytes(step_s.get("loss").expect("loss")[..4].try_into().unwrap());
            if !loss.is_finite() {
                return Err(err(format!(
                    "the loss is {loss} at epoch {} step {}; '{}' keeps the weights of the last finished epoch",
                    epoch + 1,
                    s + 1,
                    cli.output.display()
                )));
            }
            sum += loss as f64;
            if tty {
                let done = (s + 1) * 30 / steps;
                eprint!(
                    "\repoch {:>3}/{} [{}{}] {:>4}/{steps} loss {:.4}",
                    epoch + 1,
                    cli.epochs,
                    "=".repeat(done),
                    " ".repeat(30 - done),
                    s + 1,
                    sum / (s + 1) as f64
                );
                let _ = std::io::stderr().flush();
            }
        }
        let mean = sum / steps as f64;
        for name in &trained {
            let bytes = step_s.get(name).expect("trained weight").to_vec();
            infer_s.set(name, &bytes).map_err(err)?;
        }
        let acc = match &test {
            Some(t) => Some(accuracy(
                &mut infer_s,
                t,
                &input,
                &out_name,
                batch,
                classes as usize,
                &fail,
            )?),
            None => None,
        };
        let acc_text = acc.map_or(String::new(), |a| {
            format!(", test accuracy {:.2}%", a * 100.0)
        });
        if tty {
            eprint!("\r\x1b[K");
        }
        eprintln!(
            "epoch {:>3}/{}: mean loss {mean:.4}{acc_text}",
            epoch + 1,
            cli.epochs
        );
        write_weights(&cli.output, step, &step_s, &trained)?;
        last = (mean, acc);
    }
    let acc_text = last.1.map_or(String::new(), |a| {
        format!(", test accuracy {:.2}%", a * 100.0)
    });
    eprintln!(
        "glow-train: {} epochs, final mean loss {:.4}{acc_text}; weights in '{}'",
        cli.epochs,
        last.0,
        cli.output.display()
    );
    Ok(())
}

/// The images and labels of `rows`, as the step's input and `labels` bytes.
fn gather(d: &Data, rows: &[usize]) -> (Vec<u8>, Vec<u8>) {
    let mut x = Vec::with_capacity(rows.len() * d.image_bytes);
    let mut y = Vec::with_capacity(rows.len() * 8);
    for &r in rows {
        x.extend_from_slice(&d.images[r * d.image_bytes..(r + 1) * d.image_bytes]);
        y.extend_from_slice(&d.labels[r].to_le_bytes());
    }
    (x, y)
}

/// The fraction of `d` whose largest logit is its label (the last batch is
/// padded with zeros and only its real rows count).
fn accuracy(
    s: &mut Session,
    d: &Data,
    input: &str,
    output: &str,
    batch: usize,
    classes: usize,
    fail: &dyn Fn(run::RunError) -> String,
) -> Result<f64, String> {
    let n = d.labels.len();
    let mut right = 0usize;
    for start in (0..n).step_by(batch) {
        let rows: Vec<usize> = (start..(start + batch).min(n)).collect();
        let (mut x, _) = gather(d, &rows);
        x.resize(batch * d.image_bytes, 0);
        s.set(input, &x).map_err(err)?;
        s.run().map_err(fail)?;
        let logits = s.get(output).expect("output");
        for (k, &r) in rows.iter().enumerate() {
            let row: Vec<f32> = logits[k * classes * 4..(k + 1) * classes * 4]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let best = (0..classes).fold(0, |b, i| if row[i] > row[b] { i } else { b });
            right += (best as i64 == d.labels[r]) as usize;
        }
    }
    Ok(right as f64 / n.max(1) as f64)
}

/// The trained weights as safetensors, written atomically.
fn write_weights(
    path: &Path,
    step: &Function,
    s: &Session,
    trained: &[String],
) -> Result<(), String> {
    let files: Vec<glow_import::WeightFile> = trained
        .iter()
        .map(|name| glow_import::WeightFile {
            name: name.clone(),
            ty: step
                .weights
                .iter()
                .find(|w| &w.name == name)
                .map(|w| w.ty.clone())
                .expect("trained"),
            bytes: s.get(name).expect("trained").to_vec(),
        })
        .collect();
    let bytes = glow_import::safetensors_bytes(&files).map_err(|e| err(e.to_string()))?;
    glow_ir::output::write_file(path, &bytes)
        .map_err(|e| err(format!("cannot write '{}': {e}", path.display())))
}

/// The only mutable weight the function reads and never writes (or `name`).
fn pick_input(f: &Function, name: Option<&str>) -> Result<String, String> {
    let written = run::written_weights(f);
    let inputs: Vec<&str> = f
        .weights
        .iter()
        .enumerate()
        .filter(|(i, w)| w.mutability == Mutability::Mutable && !written.contains(i))
        .map(|(_, w)| w.name.as_str())
        .collect();
    match (name, inputs.as_slice()) {
        (Some(n), _) if inputs.contains(&n) => Ok(n.to_string()),
        (Some(n), _) => Err(err(format!(
            "`--input {n}`: not a mutable weight the function only reads"
        ))),
        (None, [one]) => Ok(one.to_string()),
        (None, many) => Err(err(format!(
            "the function has {} inputs ({}); name the images with --input NAME",
            many.len(),
            many.join(", ")
        ))),
    }
}

/// The written mutable weight (the logits).
fn output_name(f: &Function) -> Result<String, String> {
    let written = run::written_weights(f);
    match written.as_slice() {
        [w] => Ok(f.weights[*w].name.clone()),
        _ => Err(err(
            "the function must write exactly one mutable weight (the logits)",
        )),
    }
}
