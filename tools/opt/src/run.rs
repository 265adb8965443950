//! `glow-run`: runs a `.gir` function through the C backend (or the
//! reference interpreter) after glow-opt's pass pipeline, writes the mutable
//! weights it writes as `.npy`, prints them for FileCheck, and with
//! `--compare-passes` checks that a pipeline leaves every output bit alone.
//! Exit 0 on success, 1 on any error (or differing outputs), 2 on usage.

use clap::{Parser, ValueEnum};
use glow_backend::npy;
use glow_backend::run::{self, Comparison, Engine, Outputs, RunError, RunOptions};
use glow_backend::text::tensor_line;
use glow_backend::CcOptions;
use glow_ir::diag::render_all;
use glow_ir::{parser, verifier, Diagnostic, Function, Module};
use glow_passes::cli::PipelineArgs;
use glow_passes::PassRegistry;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum EngineArg {
    C,
    Interp,
}

#[derive(Parser, Debug)]
#[command(
    name = "glow-run",
    version,
    about = "Run a .gir function through the C backend or the reference interpreter"
)]
struct Cli {
    /// Input `.gir` file.
    input: PathBuf,
    #[command(flatten)]
    pipeline: PipelineArgs,
    /// Constant weights by name from a safetensors file.
    #[arg(long, value_name = "W.safetensors")]
    weights: Option<PathBuf>,
    /// A mutable weight's contents: NAME=FILE, a `.npy` file or an ONNX
    /// `TensorProto` (`input_0.pb`) (repeatable).
    #[arg(long = "input", value_name = "NAME=FILE")]
    inputs: Vec<String>,
    /// Write every written mutable weight as DIR/<name>.npy.
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Print the written mutable weights as text.
    #[arg(long)]
    print_outputs: bool,
    /// Seed of the generator for weights without contents.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Which engine runs the function.
    #[arg(long, value_enum, default_value = "c")]
    engine: EngineArg,
    /// The C compiler (default: $CC, else cc).
    #[arg(long, value_name = "CC")]
    cc: Option<String>,
    /// Flags for the C compiler (added after -std=c99 -ffp-contract=off).
    #[arg(
        long,
        value_name = "FLAGS",
        default_value = "-O1",
        allow_hyphen_values = true
    )]
    cflags: String,
    /// Run the function before and after PIPELINE (a mode such as `infer`,
    /// or a pass list) on the same inputs and compare the outputs.
    #[arg(long, value_name = "PIPELINE")]
    compare_passes: Option<String>,
    /// Run on the interpreter and write every buffer each instruction writes, right
    /// after it, as DIR/NNNN-<inst>.<operand>.npy, listed in DIR/index.txt.
    #[arg(long, value_name = "DIR", conflicts_with = "compare_passes")]
    dump_tensors: Option<PathBuf>,
    /// Find the first pass execution of PIPELINE (a mode or a pass list) after which the
    /// interpreter's outputs differ, and the first instruction whose written buffer it changed.
    #[arg(long, value_name = "PIPELINE", conflicts_with_all = ["compare_passes", "dump_tensors"])]
    bisect: Option<String>,
    /// Run the program on the interpreter and on the C engine (with --cc, --cflags,
    /// --threads, --fast-math), recording every buffer each instruction writes, and print
    /// the first instruction whose written buffer differs, with the differing elements.
    #[arg(long, conflicts_with_all = ["compare_passes", "dump_tensors", "bisect"])]
    bisect_engines: bool,
    /// Run the (float) function on the interpreter over the calibration set
    /// (--calibration DIR; without it, the inputs as given) and write the
    /// quantization profile of every buffer to FILE (docs/quantization.md).
    #[arg(long, value_name = "P.yaml", conflicts_with_all = ["compare_passes", "dump_tensors", "bisect", "bisect_engines"])]
    dump_profile: Option<PathBuf>,
    /// The calibration set of --dump-profile: a directory of NAME.npy files with a
    /// leading batch dimension, or of subdirectories each holding NAME.npy or
    /// ONNX input_K.pb files (an ONNX model folder with its test_data_set_*).
    #[arg(long, value_name = "DIR", requires = "dump_profile")]
    calibration: Option<PathBuf>,
    /// Histogram bins per buffer in --dump-profile.
    #[arg(long, value_name = "N", default_value_t = glow_passes::profile::DEFAULT_BINS, requires = "dump_profile")]
    profile_bins: usize,
    /// --dump-profile Glow's way: run the function instrumented by the
    /// `instrument-profile` pass (a quantizationprofile after every float
    /// buffer write) and read the profile from its state (the same profile).
    #[arg(long, requires = "dump_profile")]
    profile_instrumented: bool,
    /// Which function of the file to run (default: the first).
    #[arg(long, value_name = "NAME")]
    function: Option<String>,
    /// Build the C engine's bundle, driver and program in DIR and keep them.
    #[arg(long, value_name = "DIR")]
    keep_c: Option<PathBuf>,
    /// Run N times and print the time per run on stderr.
    #[arg(long, value_name = "N")]
    repeat: Option<u64>,
    /// C engine: split the kernels over N threads (pthreads); bit-identical to one thread.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: u32,
    /// C engine: let the compiler contract `a * b + c` into FMA (no longer bit-identical to the
    /// interpreter; see docs/backend.md).
    #[arg(long)]
    fast_math: bool,
}

/// A failure: already-rendered diagnostics, a message to prefix, or a
/// usage error (a bad pipeline flag: exit 2, as glow-opt).
enum Fail {
    Rendered(String),
    Msg(String),
    Usage(String),
}

impl From<String> for Fail {
    fn from(s: String) -> Fail {
        Fail::Msg(s)
    }
}

/// The `glow-run` tool over `registry`: downstream crates build their own
/// run tool this way, so `--compare-passes`, `--bisect` and the pipeline
/// flags know their passes. Returns the exit code.
pub fn run_main(
    name: &'static str,
    registry: &PassRegistry,
    args: impl IntoIterator<Item = impl Into<OsString>>,
) -> u8 {
    let command = <Cli as clap::CommandFactory>::command()
        .name(name)
        .bin_name(name);
    let args = glow_passes::cli::normalize_opt_levels(args.into_iter().map(Into::into));
    let args = glow_passes::cli::llvm_single_dash(args, &command);
    let parsed = command
        .try_get_matches_from(args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are errors to clap, with exit code 0.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let cx = Ctx { name, registry };
    match real_main(&cx, &cli) {
        Ok(code) => code,
        Err(Fail::Rendered(text)) => {
            eprintln!("{}", text.trim_end());
            1
        }
        Err(Fail::Msg(msg)) => {
            eprintln!("{name}: error: {msg}");
            1
        }
        Err(Fail::Usage(msg)) => {
            eprintln!("{name}: error: {msg}");
            2
        }
    }
}

/// The tool's identity: its name (in messages) and the passes it knows.
struct Ctx<'a> {
    name: &'static str,
    registry: &'a PassRegistry,
}

fn real_main(cx: &Ctx, cli: &Cli) -> Result<u8, Fail> {
    let tool = cx.name;
    let file = cli.input.display().to_string();
    let source = std::fs::read(&cli.input).map_err(|e| format!("cannot read '{file}': {e}"))?;
    let module = parse_and_verify(&source, &file)?;
    let opts = RunOptions {
        engine: match cli.engine {
            EngineArg::C => Engine::C,
            EngineArg::Interp => Engine::Interp,
        },
        cc: CcOptions::new(cli.cc.as_deref(), &cli.cflags),
        seed: cli.seed,
        strict_constants: cli.weights.is_some(),
        repeat: cli.repeat,
        build_dir: cli.keep_c.clone(),
        codegen: glow_backend::CodegenOptions {
            threads: cli.threads,
            fast_math: cli.fast_math,
            ..Default::default()
        },
    };
    if module.functions.is_empty() {
        let d = Diagnostic::error("the file has no function").at(glow_ir::Span::new(0, 0));
        return Err(Fail::Rendered(render_all(&[d], &file, &source)));
    }
    let given = given_tensors(cli, &module)?;
    let mut optimized = module.clone();
    apply_pipeline(cx, &mut optimized, &cli.pipeline, &source, &file)?;
    let f = pick(&optimized, cli.function.as_deref())?;
    // Before any tensor is allocated: a clear error instead of an abort.
    glow_backend::limits::check_tensors(f)
        .and_then(|()| glow_backend::MemoryLayout::plan(f).map(drop))
        .map_err(|d| Fail::Rendered(render_all(&[d], &file, &source)))?;
    if !opts.strict_constants {
        // Random constants give meaningless outputs; say so, as glow-import's --fill-stripped does.
        let filled = f
            .weights
            .iter()
            .filter(|w| w.mutability == glow_ir::Mutability::Const)
            .filter(|w| w.init.is_none() && !given.contains_key(&w.name))
            .count();
        if filled > 0 {
            eprintln!(
                "{tool}: note: filled {filled} constant weight(s) without `Data` with seeded \
                 random values (seed {}); outputs are not meaningful; pass --weights W.safetensors",
                opts.seed
            );
        }
    }
    let weights = run::resolve_weights(f, &given, &opts)?;
    if let Some(list) = &cli.bisect {
        let pipeline = pipeline_args(list)
            .pipeline(cx.registry)
            .map_err(Fail::Usage)?;
        return match crate::bisect::bisect(f, &weights, &pipeline)? {
            Some(found) => {
                print!("{}", crate::bisect::report(tool, &found, list));
                Ok(1)
            }
            None => {
                println!("{tool}: no pass of `{list}` changes the outputs (interpreter)");
                Ok(0)
            }
        };
    }
    if cli.bisect_engines {
        return match crate::bisect::bisect_engines(f, &weights, &opts)? {
            Some((a, b)) => {
                print!("{}", crate::bisect::engines_report(tool, f, &a, &b));
                Ok(1)
            }
            None => {
                println!(
                    "{tool}: the C engine and the interpreter write the same bytes at every instruction"
                );
                Ok(0)
            }
        };
    }
    if let Some(out) = &cli.dump_profile {
        return dump_profile(cx, cli, f, &weights, out);
    }
    if let Some(dir) = &cli.dump_tensors {
        return dump_tensors(cx, f, &weights, dir, &source, &file);
    }
    if let Some(list) = &cli.compare_passes {
        return compare_passes(cx, f, &weights, list, &opts, &source, &file);
    }
    let outputs = execute(f, &weights, &opts, &source, &file)?;
    print!("{}", outputs.stdout);
    if let Some(s) = outputs.seconds_per_run {
        eprintln!("{tool}: {:.6} ms per run", s * 1e3);
    }
    if let Some(dir) = &cli.output_dir {
        write_npy(dir, &outputs)?;
    }
    if cli.print_outputs {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for t in &outputs.tensors {
            if let Err(e) = writeln!(out, "{}", tensor_line(&t.name, &t.ty, &t.data)) {
                // A reader that stopped early (`| head`) is not a failure.
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    break;
                }
                return Err(format!("cannot write the outputs: {e}").into());
            }
        }
    }
    if !cli.print_outputs && cli.output_dir.is_none() {
        // A silent success looks like nothing happened.
        eprintln!("{}", run_summary(cx, f, cli.engine, &outputs));
    }
    Ok(0)
}

/// One line on stderr after a run that showed no outputs: what ran and
/// how to see what it computed.
fn run_summary(cx: &Ctx, f: &Function, engine: EngineArg, outputs: &Outputs) -> String {
    let tool = cx.name;
    let engine = match engine {
        EngineArg::C => "the C engine",
        EngineArg::Interp => "the interpreter",
    };
    let mut names = String::new();
    for (i, t) in outputs.tensors.iter().enumerate() {
        names.push_str(if i == 0 { " (" } else { ", " });
        glow_ir::printer::write_name(&t.name, &mut names);
    }
    if !names.is_empty() {
        names.push(')');
    }
    let n = outputs.tensors.len();
    let weights = if n == 1 { "weight" } else { "weights" };
    format!(
        "{tool}: ran function `{}` on {engine}: {n} mutable {weights} written{names}; \
         show them with --print-outputs or write them with --output-dir=DIR",
        f.name
    )
}

fn parse_and_verify(source: &[u8], file: &str) -> Result<Module, Fail> {
    let m = parser::parse(source).map_err(|d| Fail::Rendered(render_all(&d, file, source)))?;
    let diags = verifier::verify_module(&m);
    if diags.iter().any(Diagnostic::is_error) {
        return Err(Fail::Rendered(render_all(&diags, file, source)));
    }
    Ok(m)
}

/// The one place glow-run applies glow-opt's pipeline flags.
fn apply_pipeline(
    cx: &Ctx,
    m: &mut Module,
    args: &PipelineArgs,
    source: &[u8],
    file: &str,
) -> Result<(), Fail> {
    let pipeline = args.pipeline(cx.registry).map_err(Fail::Usage)?;
    glow_passes::run_pipeline(m, &pipeline)
        .map_err(|d| Fail::Msg(render_all(&d, file, source).trim_end().to_string()))
}

fn pick<'m>(m: &'m Module, name: Option<&str>) -> Result<&'m Function, String> {
    match name {
        None => m
            .functions
            .first()
            .ok_or_else(|| "the file has no function".to_string()),
        Some(n) => m.functions.iter().find(|f| f.name == n).ok_or_else(|| {
            let names = m.functions.iter().map(|f| f.name.as_str());
            match glow_ir::diag::did_you_mean(n, names) {
                Some(s) => format!("no function named `{n}` in the file; did you mean `{s}`?"),
                None => format!("no function named `{n}` in the file"),
            }
        }),
    }
}

/// Tensors from `--weights` and `--input`, by weight name, checked against
/// the weight's type.
fn given_tensors(cli: &Cli, m: &Module) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let f = pick(m, cli.function.as_deref())?;
    let ty_of = |name: &str| {
        f.weights
            .iter()
            .find(|w| w.name == name)
            .map(|w| w.ty.clone())
    };
    let mut out = BTreeMap::new();
    if let Some(path) = &cli.weights {
        out.extend(glow_backend::weights::load_safetensors(f, path)?);
    }
    for spec in &cli.inputs {
        let (name, file) = spec
            .split_once('=')
            .ok_or_else(|| format!("--input `{spec}`: expected NAME=FILE"))?;
        let name = name.strip_prefix('%').unwrap_or(name);
        let ty = ty_of(name).ok_or_else(|| {
            let names = f.weights.iter().map(|w| w.name.as_str());
            match glow_ir::diag::did_you_mean(name, names) {
                Some(s) => {
                    format!("--input: the function has no weight `%{name}`; did you mean `%{s}`?")
                }
                None => format!("--input: the function has no weight `%{name}`"),
            }
        })?;
        let bytes = std::fs::read(file).map_err(|e| format!("cannot read '{file}': {e}"))?;
        let arr = read_tensor_file(file, &bytes)
            .map_err(|e| format!("input `%{name}` ('{file}'): {e}"))?;
        let data = npy::expect(&arr, &ty).map_err(|e| format!("input `%{name}` ('{file}') {e}"))?;
        out.insert(name.to_string(), data);
    }
    Ok(out)
}

/// An `--input` file: `.npy` by its magic, else an ONNX `TensorProto`
/// (the `.pb` files of ONNX test data sets), both checked as npy arrays.
fn read_tensor_file(file: &str, bytes: &[u8]) -> Result<npy::Npy, String> {
    let is_pb = Path::new(file).extension().is_some_and(|e| e == "pb");
    if bytes.starts_with(b"\x93NUMPY") {
        return npy::read(bytes);
    }
    pb_tensor(bytes).map_err(|e| {
        if is_pb {
            format!("not an ONNX TensorProto: {e}")
        } else {
            format!("neither a .npy file nor an ONNX TensorProto ({e})")
        }
    })
}

/// A serialized `TensorProto` as the npy array of the same element kind,
/// shape and little-endian bytes.
fn pb_tensor(bytes: &[u8]) -> Result<npy::Npy, String> {
    use glow_import::onnx::dtype;
    let t = glow_import::onnx::decode_tensor(bytes).map_err(|e| e.to_string())?;
    if t.data_location == 1 {
        return Err("external data is not supported here".into());
    }
    let (descr, size) = match t.data_type {
        dtype::FLOAT => ("<f4", 4),
        dtype::UINT8 => ("|u1", 1),
        dtype::INT8 => ("|i1", 1),
        5 => ("<i2", 2),
        dtype::INT32 => ("<i4", 4),
        dtype::INT64 => ("<i8", 8),
        dtype::BOOL => ("|b1", 1),
        10 => ("<f2", 2),
        dtype::DOUBLE => ("<f8", 8),
        16 => ("<u2", 2),
        code => {
            return Err(format!(
                "element type {} has no .gir element kind",
                dtype::name(code)
            ))
        }
    };
    let mut shape = Vec::new();
    let mut n: u64 = 1;
    for &d in &t.dims {
        let d = u64::try_from(d).map_err(|_| format!("negative dimension {d}"))?;
        n = n
            .checked_mul(d)
            .filter(|&n| n <= glow_ir::limits::MAX_TENSOR_BYTES)
            .ok_or("dims are too large")?;
        shape.push(d);
    }
    let data = if !t.raw_data.is_empty() || n == 0 {
        t.raw_data
    } else {
        // Typed fields: 16-bit and smaller kinds are stored widened in int32_data.
        match t.data_type {
            dtype::FLOAT => t.float_data.iter().flat_map(|x| x.to_le_bytes()).collect(),
            dtype::DOUBLE => t.double_data.iter().flat_map(|x| x.to_le_bytes()).collect(),
            dtype::INT64 => t.int64_data.iter().flat_map(|x| x.to_le_bytes()).collect(),
            _ => t
                .int32_data
                .iter()
                .flat_map(|x| x.to_le_bytes().into_iter().take(size))
                .collect(),
        }
    };
    if data.len() as u64 != n * size as u64 {
        return Err(format!(
            "has {} data bytes, but dims {shape:?} of {} need {}",
            data.len(),
            dtype::name(t.data_type),
            n * size as u64
        ));
    }
    Ok(npy::Npy {
        descr: descr.to_string(),
        shape,
        data,
    })
}

fn execute(
    f: &Function,
    weights: &BTreeMap<String, Vec<u8>>,
    opts: &RunOptions,
    source: &[u8],
    file: &str,
) -> Result<Outputs, Fail> {
    run::run(f, weights, opts).map_err(|e| match e {
        RunError::Diagnostic(d) => Fail::Rendered(render_all(&[d], file, source)),
        RunError::Message(m) => Fail::Msg(m),
    })
}

/// Writes every output as `DIR/<name>.npy`, all or nothing: names are
/// checked first (too long for the file system: shortened; two outputs on
/// one file: an error), every file is written into a temporary directory
/// inside DIR, and only then moved into place.
fn write_npy(dir: &Path, outputs: &Outputs) -> Result<(), String> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut owner: BTreeMap<String, &str> = BTreeMap::new();
    for t in &outputs.tensors {
        let name = npy::file_name(&t.name);
        if let Some(other) = owner.insert(name.clone(), &t.name) {
            return Err(format!(
                "outputs `%{other}` and `%{}` would both be written to '{name}'",
                t.name
            ));
        }
        files.push((name, npy::write(&t.ty, &t.data)));
    }
    glow_ir::output::create_output_dir(dir)
        .map_err(|e| format!("cannot create '{}': {e}", dir.display()))?;
    for (name, _) in &files {
        if dir.join(name).is_dir() {
            return Err(format!(
                "cannot write '{}': is a directory (nothing was written)",
                dir.join(name).display()
            ));
        }
    }
    let tmp = tempfile::Builder::new()
        .prefix(".glow-run")
        .tempdir_in(dir)
        .map_err(|e| format!("cannot write into '{}': {e}", dir.display()))?;
    for (name, bytes) in &files {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write '{}': {e}", dir.join(name).display()))?;
    }
    for (name, bytes) in &files {
        let target = dir.join(name);
        let regular_or_absent = match std::fs::symlink_metadata(&target) {
            Ok(m) => m.file_type().is_file(),
            Err(_) => true,
        };
        // A symlink, FIFO or device is written through, as `-o` does.
        let moved = if regular_or_absent {
            std::fs::rename(tmp.path().join(name), &target)
        } else {
            glow_ir::output::write_file(&target, bytes)
        };
        moved.map_err(|e| format!("cannot write '{}': {e}", target.display()))?;
    }
    Ok(())
}

/// A mode (`none`, `train`, `infer`) or a pass list, as pipeline flags.
fn pipeline_args(list: &str) -> PipelineArgs {
    if glow_passes::pipeline::MODE_NAMES.contains(&list) {
        PipelineArgs {
            mode: Some(list.to_string()),
            ..PipelineArgs::default()
        }
    } else {
        PipelineArgs {
            passes: vec![list.to_string()],
            ..PipelineArgs::default()
        }
    }
}

/// `--dump-tensors`: the interpreter's trace as one `.npy` per written
/// buffer and an index, one line per file in program order:
/// `POSITION %inst opcode OPERAND %value TYPE FILE`.
fn dump_tensors(
    cx: &Ctx,
    f: &Function,
    weights: &BTreeMap<String, Vec<u8>>,
    dir: &Path,
    source: &[u8],
    file: &str,
) -> Result<u8, Fail> {
    let tool = cx.name;
    let written = run::trace(f, weights).map_err(|e| match e {
        RunError::Diagnostic(d) => Fail::Rendered(render_all(&[d], file, source)),
        RunError::Message(m) => Fail::Msg(m),
    })?;
    glow_ir::output::create_output_dir(dir)
        .map_err(|e| format!("cannot create '{}': {e}", dir.display()))?;
    let mut index = String::new();
    for w in &written {
        let name = format!(
            "{:04}-{}.{}.npy",
            w.position,
            npy::file_stem(&w.inst),
            w.operand.to_ascii_lowercase()
        );
        let path = dir.join(&name);
        glow_ir::output::write_file(&path, &npy::write(&w.ty, &w.data))
            .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
        let (mut inst, mut value) = (String::new(), String::new());
        glow_ir::printer::write_name(&w.inst, &mut inst);
        glow_ir::printer::write_name(&w.value, &mut value);
        index.push_str(&format!(
            "{} {inst} {} {} {value} {} {name}\n",
            w.position, w.opcode, w.operand, w.ty
        ));
    }
    let path = dir.join("index.txt");
    glow_ir::output::write_file(&path, index.as_bytes())
        .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
    eprintln!(
        "{tool}: wrote {} tensors of function `{}` (interpreter) to {}",
        written.len(),
        f.name,
        dir.display()
    );
    Ok(0)
}

/// `--dump-profile`: the quantization profile over the calibration set.
fn dump_profile(
    cx: &Ctx,
    cli: &Cli,
    f: &Function,
    weights: &BTreeMap<String, Vec<u8>>,
    out: &Path,
) -> Result<u8, Fail> {
    let tool = cx.name;
    use crate::profile;
    if cli.profile_bins == 0 {
        return Err("--profile-bins must be positive".to_string().into());
    }
    let samples = match &cli.calibration {
        Some(dir) => {
            let read = |bytes: &[u8]| -> Result<(String, npy::Npy), String> {
                let name = glow_import::onnx::decode_tensor(bytes)
                    .map(|t| t.name)
                    .unwrap_or_default();
                Ok((name, pb_tensor(bytes)?))
            };
            profile::calibration_set(f, dir, Some(&read))?
        }
        None => vec![profile::Sample::new()],
    };
    let collect = if cli.profile_instrumented {
        profile::collect_instrumented
    } else {
        profile::collect
    };
    let p = collect(f, weights, &samples, cli.profile_bins).map_err(|e| match e {
        RunError::Diagnostic(d) => Fail::Msg(d.message),
        RunError::Message(m) => Fail::Msg(m),
    })?;
    let text = glow_passes::profile::write(&p);
    glow_ir::output::write_file(out, text.as_bytes())
        .map_err(|e| format!("cannot write '{}': {e}", out.display()))?;
    eprintln!(
        "{tool}: profiled {} buffers of function `{}` over {} samples (interpreter{}) into {}",
        p.buffers.len(),
        f.name,
        p.samples,
        if cli.profile_instrumented {
            ", instrumented"
        } else {
            ""
        },
        out.display()
    );
    Ok(0)
}

/// Runs `f` as given (after the command-line pipeline) and after `list`,
/// on the same weight contents, and reports the comparison.
fn compare_passes(
    cx: &Ctx,
    f: &Function,
    weights: &BTreeMap<String, Vec<u8>>,
    list: &str,
    opts: &RunOptions,
    source: &[u8],
    file: &str,
) -> Result<u8, Fail> {
    let tool = cx.name;
    let args = pipeline_args(list);
    let mut after = Module {
        functions: vec![f.clone()],
    };
    apply_pipeline(cx, &mut after, &args, source, file)?;
    let before_out = execute(f, weights, opts, source, file)?;
    let after_out = execute(&after.functions[0], weights, opts, source, file)?;
    match run::compare(&before_out, &after_out) {
        Comparison::Identical { tensors, elements } => {
            println!("{tool}: bit-identical before and after `{list}`: {tensors} mutable weights, {elements} elements");
            Ok(0)
        }
        Comparison::Different(problems) => {
            println!("{tool}: outputs differ before and after `{list}`:");
            for p in problems {
                println!("  {p}");
            }
            Ok(1)
        }
    }
}
