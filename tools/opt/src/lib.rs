//! The `glow-opt` driver as a library: read (file or stdin) → split
//! (`--split-input-file`) → parse → verify → pipeline → print (or
//! `--emit=c` bundles). [`opt_main`] takes the pass registry, so a
//! downstream crate builds its own opt tool, with every flag of `glow-opt`
//! (`--list-passes`, `--print-changed`, `--opt-bisect-limit`,
//! `--verify-each`, crash reproducers, `--stats`, `--emit=c`, ...), for the
//! passes it adds. Reports from the debugging flags go to stderr; stdout only
//! ever holds IR. Manual: `docs/glow-opt.md`; tutorial:
//! `docs/writing-a-pass.md`.

pub mod bisect;
pub mod dot;
pub mod profile;
pub mod reduce;
pub mod run;
#[cfg(test)]
mod test_passes;

use clap::{CommandFactory, FromArgMatches, Parser};
use glow_ir::diag::{render_all, Diagnostic};
use glow_ir::printer::{print_module, PrintOptions};
use glow_ir::{expect, parser, verifier};
use glow_passes::cli::{DebugArgs, PipelineArgs};
use glow_passes::manager::read_reproducer;
use glow_passes::{PassManager, PassRegistry, Pipeline};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "glow-opt",
    version,
    about = "Parse, verify, optimize and print .gir instruction IR"
)]
struct Cli {
    #[command(flatten)]
    pipeline: PipelineArgs,
    #[command(flatten)]
    debug: DebugArgs,
    /// List the registered passes with a one-line summary each.
    #[arg(long)]
    list_passes: bool,
    /// Replay a crash reproducer: its input with its pipeline.
    #[arg(long, value_name = "FILE", conflicts_with = "input")]
    run_reproducer: Option<String>,
    /// Input file; `-` or absent reads standard input.
    input: Option<String>,
    /// Write the output here instead of standard output (with --emit=c: the bundle directory).
    #[arg(short = 'o', value_name = "OUT")]
    output: Option<PathBuf>,
    /// Output: `gir` (the IR, default), `c` (a C bundle per function in the -o directory:
    /// NAME.c, NAME.h, NAME.weights.bin), `dot` (Graphviz dataflow per function) or
    /// `dot-interference` (Graphviz buffer interference graph per function).
    #[arg(long, value_name = "FORMAT", default_value = "gir", value_parser = ["gir", "c", "dot", "dot-interference"])]
    emit: String,
    /// With --emit=c: contents of const weights without inline `Data`, by weight name.
    #[arg(long, value_name = "W.safetensors")]
    weights: Option<PathBuf>,
    /// With --emit=c: split the kernels over N threads (pthreads; link with -pthread). Results
    /// are bit-identical to one thread.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: u32,
    /// With --emit=c: let the C compiler contract `a * b + c` into FMA (faster on some machines,
    /// no longer bit-identical to the interpreter; see docs/backend.md).
    #[arg(long)]
    fast_math: bool,
    /// With --emit=c: call `glow_trace_hook(pos, constantWeight, mutableWeight, activations)`
    /// after each instruction (its position in program order), which the program linking the
    /// bundle defines; scripts/bench/profile.py times each instruction with it.
    #[arg(long)]
    trace_hook: bool,
    /// Accepted for `opt -S` habits: the output is always text.
    #[arg(short = 'S')]
    text_output: bool,
    /// Add Glow-style `// size:` and `// Users:` comments.
    #[arg(long)]
    annotate: bool,
    /// Skip the verifier (the parser still checks syntax and names).
    #[arg(long)]
    no_verify: bool,
    /// Treat `// -----` lines as separators of independent chunks.
    #[arg(long)]
    split_input_file: bool,
    /// Check `// expected-error {{...}}` annotations against the diagnostics.
    #[arg(long)]
    verify_diagnostics: bool,
    /// After the pipeline, say on stderr why the two buffers share memory or
    /// do not (the planner's lifetimes and offsets, share-buffers' and
    /// inplace's own reasons), in each function that has both.
    #[arg(long, value_name = "%A,%B")]
    explain_sharing: Option<String>,
}

/// Runs an opt tool called `name` over the passes of `registry` with the
/// command line `args` (the program name first, as `std::env::args_os()`
/// gives it), and returns its exit code: 0 on success, 1 on an input error
/// (read, parse, verify, a pass failing), 2 on a usage error. Every flag of
/// `glow-opt` works, for the registered passes too. A downstream `main` is
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     let registry = glow_passes::PassRegistry::builtin();
///     // A downstream tool registers its passes here: registry.register(&MY_PASS::INFO)
///     std::process::ExitCode::from(glow_opt_driver::opt_main("my-opt", &registry, std::env::args_os()))
/// }
/// ```
pub fn opt_main(
    name: &'static str,
    registry: &PassRegistry,
    args: impl IntoIterator<Item = impl Into<OsString>>,
) -> u8 {
    let command = Cli::command().name(name).bin_name(name);
    let args = glow_passes::cli::normalize_opt_levels(args.into_iter().map(Into::into));
    let args = glow_passes::cli::llvm_single_dash(args, &command);
    let parsed = command
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are errors to clap, with exit code 0.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let tool = Tool { name, registry };
    tool.run(cli)
}

/// The tool's identity: its name (in messages) and the passes it knows.
struct Tool<'a> {
    name: &'static str,
    registry: &'a PassRegistry,
}

impl Tool<'_> {
    fn usage_error(&self, msg: &str) -> u8 {
        eprintln!("{}: error: {msg}", self.name);
        2
    }

    fn input_error(&self, msg: &str) -> u8 {
        eprintln!("{}: error: {msg}", self.name);
        1
    }

    fn run(&self, mut cli: Cli) -> u8 {
        let registry = self.registry;
        if cli.list_passes {
            print!("{}", registry.list_text());
            return 0;
        }
        let input = cli.run_reproducer.as_deref().or(cli.input.as_deref());
        let (name, source) = match read_input(input) {
            Ok(x) => x,
            Err(msg) => return self.input_error(&msg),
        };
        let pipeline = if cli.run_reproducer.is_some() {
            let reproducer = match read_reproducer(&String::from_utf8_lossy(&source)) {
                Ok(r) => r,
                Err(msg) => return self.usage_error(&msg),
            };
            cli.no_verify |= reproducer.flags.iter().any(|f| f == "--no-verify");
            match Pipeline::parse(registry, &reproducer.passes) {
                Ok(p) => p,
                Err(msg) => return self.usage_error(&msg),
            }
        } else {
            match cli.pipeline.pipeline(registry) {
                Ok(p) => p,
                Err(msg) => return self.usage_error(&msg),
            }
        };
        if cli.emit != "c" && cli.weights.is_some() {
            // Ignoring it would let a user believe the weights were used.
            return self.usage_error("--weights is read only with --emit=c");
        }
        if cli.emit == "c" && cli.output.as_deref().is_none_or(|p| p.as_os_str() == "-") {
            return self.usage_error("--emit=c writes a bundle directory: give it with -o DIR");
        }
        let mut instrumentation = match cli.debug.instrumentation(registry) {
            Ok(i) => i,
            Err(msg) => return self.usage_error(&msg),
        };
        if cli.no_verify {
            instrumentation.reproducer_flags.push("--no-verify".into());
        }
        instrumentation.tool = self.name;
        // Replaying a reproducer must not leave another one behind.
        instrumentation.auto_reproducer = cli.run_reproducer.is_none();
        let explain = match cli.explain_sharing.as_deref().map(parse_pair).transpose() {
            Ok(e) => e,
            Err(msg) => return self.usage_error(&msg),
        };
        let mut explained = false;
        let chunks = if cli.split_input_file {
            expect::split_input(&source)
        } else {
            vec![source.clone()]
        };
        let mut outputs = Vec::new();
        let mut modules = Vec::new();
        let mut failed = false;
        let mut stderr = String::new();
        for chunk in &chunks {
            let (module, mut diags) = process(chunk, &cli);
            let module = module.and_then(|mut m| {
                let mut pm = PassManager::new(pipeline.clone(), instrumentation.clone());
                let result = pm.run(&mut m);
                stderr.push_str(&pm.log);
                match result {
                    Ok(()) => Some(m),
                    Err(failure) => {
                        diags.extend(failure.diagnostics);
                        None
                    }
                }
            });
            if cli.verify_diagnostics {
                let problems = expect::check(chunk, &diags);
                failed |= !problems.is_empty();
                stderr.push_str(&render_all(&problems, &name, chunk));
            } else {
                failed |= diags.iter().any(Diagnostic::is_error);
                stderr.push_str(&render_all(&diags, &name, chunk));
            }
            if let (Some(m), Some((a, b))) = (&module, &explain) {
                for f in &m.functions {
                    if let (Some(va), Some(vb)) = (f.lookup(a), f.lookup(b)) {
                        stderr.push_str(&glow_passes::explain::explain_sharing(f, va, vb));
                        explained = true;
                    }
                }
            }
            if let Some(m) = module {
                outputs.push(print_module(
                    &m,
                    PrintOptions {
                        annotate: cli.annotate,
                    },
                ));
                modules.push(m);
            }
        }
        eprint!("{stderr}");
        if failed {
            return 1;
        }
        if let (Some((a, b)), false) = (&explain, explained) {
            return self.input_error(&format!(
                "--explain-sharing: no function has both `%{a}` and `%{b}`"
            ));
        }
        if cli.emit == "c" {
            let dir = cli
                .output
                .as_deref()
                .expect("checked above: --emit=c has -o");
            let codegen = glow_backend::CodegenOptions {
                threads: cli.threads,
                fast_math: cli.fast_math,
                trace: cli.trace_hook,
                ..Default::default()
            };
            return match emit_bundles(&modules, dir, cli.weights.as_deref(), codegen) {
                Ok(()) => 0,
                Err(diags) => {
                    eprint!("{}", render_all(&diags, &name, &source));
                    1
                }
            };
        }
        let text = match cli.emit.as_str() {
            "dot" => modules
                .iter()
                .flat_map(|m| &m.functions)
                .map(dot::dataflow)
                .collect::<String>(),
            "dot-interference" => modules
                .iter()
                .flat_map(|m| &m.functions)
                .map(dot::interference)
                .collect::<String>(),
            _ => outputs.join("// -----\n"),
        };
        // The caller is a `main` about to exit: freeing a large module
        // allocation by allocation only costs time (clang's -disable-free).
        std::mem::forget(modules);
        std::mem::forget(outputs);
        match write_output(cli.output.as_deref(), &text) {
            Ok(()) => 0,
            Err(msg) => self.input_error(&msg),
        }
    }
}

/// Writes one C bundle per function into `dir`. Every bundle is generated
/// before any is written, so an error leaves the directory untouched.
fn emit_bundles(
    modules: &[glow_ir::Module],
    dir: &Path,
    weights: Option<&Path>,
    codegen: glow_backend::CodegenOptions,
) -> Result<(), Vec<Diagnostic>> {
    let mut bundles = Vec::new();
    let functions: Vec<&glow_ir::Function> = modules.iter().flat_map(|m| &m.functions).collect();
    for &f in &functions {
        let mut opts = glow_backend::BundleOptions {
            codegen,
            ..Default::default()
        };
        if let Some(path) = weights {
            opts.weights = glow_backend::weights::load_safetensors(f, path)
                .map_err(|e| vec![Diagnostic::error(e)])?;
        }
        bundles.push(glow_backend::emit_bundle(f, &opts).map_err(|d| vec![d])?);
    }
    let pairs: Vec<_> = functions.iter().copied().zip(&bundles).collect();
    glow_backend::bundle::check_clashes(&pairs).map_err(|d| vec![d])?;
    for b in &bundles {
        b.write_to(dir).map_err(|e| {
            vec![Diagnostic::error(format!(
                "cannot write the bundle `{}` to '{}': {e}",
                b.name,
                dir.display()
            ))]
        })?;
    }
    Ok(())
}

/// Parses and verifies one chunk; the module is returned only when it is valid.
fn process(source: &[u8], cli: &Cli) -> (Option<glow_ir::Module>, Vec<Diagnostic>) {
    match parser::parse(source) {
        Err(diags) => (None, diags),
        Ok(m) => {
            let diags = if cli.no_verify {
                Vec::new()
            } else {
                verifier::verify_module(&m)
            };
            let ok = !diags.iter().any(Diagnostic::is_error);
            (ok.then_some(m), diags)
        }
    }
}

/// The two names of `--explain-sharing=%a,%b` (the `%` optional, quoted
/// names as in `.gir`).
fn parse_pair(s: &str) -> Result<(String, String), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("--explain-sharing expects `%a,%b`, got `{s}`"))?;
    let name = |n: &str| glow_ir::parser::unquote_name(n.trim());
    let (a, b) = (name(a), name(b));
    if a.is_empty() || b.is_empty() {
        return Err(format!("--explain-sharing expects two names, got `{s}`"));
    }
    Ok((a, b))
}

fn read_input(path: Option<&str>) -> Result<(String, Vec<u8>), String> {
    match path {
        None | Some("-") => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(("<stdin>".to_string(), buf))
        }
        Some(p) => std::fs::read(p)
            .map(|b| (p.to_string(), b))
            .map_err(|e| format!("cannot read '{p}': {e}")),
    }
}

/// Writes to `path` without ever leaving a partial file or replacing a device
/// (`glow_ir::output`); `None` or `-` writes to stdout.
fn write_output(path: Option<&Path>, text: &str) -> Result<(), String> {
    let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .map_err(|e| format!("cannot write output: {e}"));
    };
    glow_ir::output::write_file(path, text.as_bytes())
        .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
    Ok(())
}
