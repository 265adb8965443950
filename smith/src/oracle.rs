//! The differential oracle. For each program: print → parse is a fixed
//! point; every single pass, the `-O` and train pipelines and random pass
//! sequences leave every output bit alone (interpreter, any NaN equals any
//! NaN); the planned arena lies between the lower bound and the aligned
//! naive size; and the C engine computes the interpreter's bits, before and
//! after `-O`. C programs are built in batches: one executable holds many
//! bundles, so `cc` starts once per batch instead of once per program.

use crate::gen::generate;
use crate::rng::Rng;
use glow_backend::memory::Region;
use glow_backend::run::{self, Outputs, RunOptions, Tensor};
use glow_backend::{emit_bundle, BundleOptions, CcOptions, Memory, MemoryLayout};
use glow_ir::diag::render_all;
use glow_ir::printer::{print_module, PrintOptions};
use glow_ir::{parser, verifier, Diagnostic, ElemKind, Function, Module};
use glow_passes::analysis::memory::memory_report;
use glow_passes::pass::PassInfo;
use glow_passes::pipeline::{Mode, Pipeline};
use glow_passes::planner::align_up;
use glow_passes::registry::BUILTIN;

/// Passes the oracle does not run on random programs: `quantize` needs a
/// profile and changes what is computed (test/passes/quantize/,
/// tools/opt/tests/quantize_flow.rs); `differentiate` makes a training step
/// of a program with one output (test/passes/differentiate/,
/// tests/training.rs); `remat` works on such a step and needs a budget
/// (test/passes/remat/, checked there with --compare-passes).
fn not_on_random_programs(p: &PassInfo) -> bool {
    [
        &glow_passes::info::QUANTIZE,
        &glow_passes::info::DIFFERENTIATE,
        &glow_passes::info::REMAT,
    ]
    .iter()
    .any(|q| p.is(q))
}
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Compare the interpreter with the C engine (needs `cc`).
    pub c_engine: bool,
    /// Programs per C build.
    pub batch: usize,
    /// Random pass sequences per program.
    pub sequences: usize,
    /// Where failing programs are written.
    pub failure_dir: PathBuf,
    /// Flags for the C compiler.
    pub cflags: String,
    /// Run the C engine on only the first this many programs.
    pub c_limit: u64,
    /// Seeds checked so far, shared by every clone (a progress display
    /// reads it while the runners work).
    pub checked: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            c_engine: true,
            batch: 64,
            sequences: 2,
            failure_dir: PathBuf::from("smith-failures"),
            cflags: "-O1".to_string(),
            c_limit: u64::MAX,
            checked: Default::default(),
        }
    }
}

/// One failing program.
#[derive(Clone, Debug)]
pub struct Failure {
    pub seed: u64,
    pub message: String,
    /// The program, written to `failure_dir`.
    pub file: Option<PathBuf>,
}

/// The figures of a run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub passed: u64,
    pub failures: Vec<Failure>,
    /// Opcodes the programs used.
    pub opcodes: BTreeSet<&'static str>,
    /// Passes that changed at least one program.
    pub passes_changed: BTreeSet<&'static str>,
    /// Passes run (each on every program).
    pub passes_run: BTreeSet<&'static str>,
    /// Programs the C engine ran (before and after `-O` count twice).
    pub c_runs: u64,
}

impl Report {
    /// Adds the figures of a run over later seeds.
    pub fn merge(&mut self, other: Report) {
        self.passed += other.passed;
        self.failures.extend(other.failures);
        self.opcodes.extend(other.opcodes);
        self.passes_changed.extend(other.passes_changed);
        self.passes_run.extend(other.passes_run);
        self.c_runs += other.c_runs;
    }
}

/// Passes whose result is not meant to be bit-identical: fold-batchnorm
/// rounds differently by design (docs/passes/fold-batchnorm.md); it is
/// run and verified, not compared.
fn exact(p: &PassInfo) -> bool {
    p.name != "fold-batchnorm"
}

/// A program that passed the interpreter checks and waits for the C engine.
struct CJob {
    seed: u64,
    text: String,
    what: &'static str,
    f: Function,
    weights: BTreeMap<String, Vec<u8>>,
    reference: Outputs,
}

fn interp_opts(seed: u64) -> RunOptions {
    RunOptions::interpreter(seed)
}

fn bits_equal(kind: ElemKind, a: &[u8], b: &[u8]) -> Option<usize> {
    let eb = kind.bytes() as usize;
    (0..a.len() / eb).find(|&i| {
        let (x, y) = (&a[i * eb..i * eb + eb], &b[i * eb..i * eb + eb]);
        if x == y {
            return false;
        }
        let nan = |v: &[u8]| match kind {
            ElemKind::Float => f32::from_le_bytes(v.try_into().unwrap()).is_nan(),
            ElemKind::Float64 => f64::from_le_bytes(v.try_into().unwrap()).is_nan(),
            _ => false,
        };
        !(nan(x) && nan(y))
    })
}

/// For a pass that rounds differently by design: float outputs within
/// `1e-4 * (1 + max |before|)` of each other (NaN matching NaN), others exact.
pub fn far(before: &Outputs, after: &Outputs) -> Option<String> {
    for b in &before.mutable {
        let Some(a) = after.mutable.iter().find(|t| t.name == b.name) else {
            continue;
        };
        if b.ty.elem != ElemKind::Float || a.ty != b.ty {
            if a.data != b.data {
                return Some(format!("%{}: non-float output changed", b.name));
            }
            continue;
        }
        let f = |d: &[u8]| -> Vec<f32> {
            d.chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
        let (x, y) = (f(&b.data), f(&a.data));
        let scale = x
            .iter()
            .filter(|v| v.is_finite())
            .fold(0f32, |m, v| m.max(v.abs()));
        let tol = 1e-4 * (1.0 + scale);
        for (i, (p, q)) in x.iter().zip(&y).enumerate() {
            let ok = (p.is_nan() && q.is_nan()) || p == q || (p - q).abs() <= tol;
            if !ok {
                return Some(format!(
                    "%{}: element {i}: {p} vs {q} (tolerance {tol})",
                    b.name
                ));
            }
        }
    }
    None
}

/// `None` when `after` has `before`'s bits in every mutable weight (by
/// name; a weight a pass made constant is skipped) and the same printed
/// text; else what differs.
pub fn differ(before: &Outputs, after: &Outputs) -> Option<String> {
    let mut problems = Vec::new();
    for b in &before.mutable {
        let Some(a) = after.mutable.iter().find(|t| t.name == b.name) else {
            continue;
        };
        if a.ty != b.ty {
            problems.push(format!("%{}: type {} became {}", b.name, b.ty, a.ty));
        } else if let Some(i) = bits_equal(b.ty.elem, &b.data, &a.data) {
            let eb = b.ty.elem.bytes() as usize;
            problems.push(format!(
                "%{} ({}): element {i} differs: {:02x?} vs {:02x?}",
                b.name,
                b.ty,
                &b.data[i * eb..i * eb + eb],
                &a.data[i * eb..i * eb + eb]
            ));
        }
    }
    // A pass may rename the printed buffer (sharing); the values must stay.
    let values = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| l.split_once(" = ").map_or(l, |(_, v)| v).to_string())
            .collect()
    };
    if values(&before.stdout) != values(&after.stdout) {
        problems.push(format!(
            "debugprint output differs:\n{}---\n{}",
            before.stdout, after.stdout
        ));
    }
    (!problems.is_empty()).then(|| problems.join("\n"))
}

fn parse_verified(text: &str) -> Result<Module, String> {
    let m =
        parser::parse(text.as_bytes()).map_err(|d| render_all(&d, "smith.gir", text.as_bytes()))?;
    let d = verifier::verify_module(&m);
    if d.iter().any(Diagnostic::is_error) {
        return Err(render_all(&d, "smith.gir", text.as_bytes()));
    }
    Ok(m)
}

/// Printing `m`, parsing the text and printing again gives the same text.
fn round_trip(m: &Module) -> Result<String, String> {
    let once = print_module(m, PrintOptions::default());
    let again = parse_verified(&once)
        .map_err(|e| format!("the printed program does not read back:\n{e}\n{once}"))?;
    let twice = print_module(&again, PrintOptions::default());
    if once != twice {
        return Err(format!(
            "print -> parse -> print changes the text:\n{once}---\n{twice}"
        ));
    }
    Ok(once)
}

fn interp(f: &Function, weights: &BTreeMap<String, Vec<u8>>, seed: u64) -> Result<Outputs, String> {
    run::run(f, weights, &interp_opts(seed)).map_err(|e| match e {
        run::RunError::Diagnostic(d) => d.message,
        run::RunError::Message(m) => m,
    })
}

/// The arena of a planned function lies between the max-live bound and
/// the naive size (every buffer its own aligned memory).
fn check_arena(f: &Function) -> Result<(), String> {
    let r = memory_report(f);
    if !r.planned {
        return Err("plan-memory left the function unplanned".into());
    }
    let naive: u64 = r
        .buffers
        .iter()
        .map(|b| align_up(b.bytes, r.align))
        .fold(0, u64::saturating_add);
    if r.arena_bytes > naive || r.arena_bytes < r.lower_bound_bytes {
        return Err(format!(
            "arena {} outside [lower bound {}, aligned naive {naive}]",
            r.arena_bytes, r.lower_bound_bytes
        ));
    }
    Ok(())
}

/// Runs `pipeline` on a copy of `m`; checks the result reads back, verifies
/// and (when `compare`) computes `reference`'s bits.
#[allow(clippy::too_many_arguments)] // The oracle's context, passed once per pipeline.
fn after_pipeline(
    m: &Module,
    pipeline: &Pipeline,
    label: &str,
    compare: bool,
    weights: &BTreeMap<String, Vec<u8>>,
    reference: &Outputs,
    seed: u64,
) -> Result<(Module, bool), String> {
    let mut after = m.clone();
    glow_passes::run_pipeline(&mut after, pipeline).map_err(|d| {
        let text = print_module(m, PrintOptions::default());
        format!(
            "{label} failed:\n{}",
            render_all(&d, "smith.gir", text.as_bytes())
        )
    })?;
    let changed =
        print_module(&after, PrintOptions::default()) != print_module(m, PrintOptions::default());
    round_trip(&after).map_err(|e| format!("after {label}: {e}"))?;
    // Passes after plan-memory may erase buffers and leave the arena as it was.
    if pipeline
        .steps
        .last()
        .is_some_and(|s| s.pass.name == "plan-memory")
    {
        check_arena(&after.functions[0]).map_err(|e| format!("after {label}: {e}"))?;
    }
    if changed {
        // A pass may add weights (fold-batchnorm's, with inline data).
        let weights = run::resolve_weights(&after.functions[0], weights, &interp_opts(seed))?;
        let out = interp(&after.functions[0], &weights, seed)
            .map_err(|e| format!("the interpreter fails after {label}: {e}"))?;
        let d = if compare {
            differ(reference, &out)
        } else {
            far(reference, &out)
        };
        if let Some(d) = d {
            return Err(format!("outputs differ before and after {label}:\n{d}"));
        }
    }
    Ok((after, changed))
}

/// The interpreter-side checks of one program; C jobs for later.
fn check_interp(
    seed: u64,
    text: &str,
    cfg: &Config,
    with_c: bool,
    report: &mut Report,
    jobs: &mut Vec<CJob>,
) -> Result<(), String> {
    let m = parse_verified(text).map_err(|e| format!("the generated program is invalid:\n{e}"))?;
    round_trip(&m)?;
    let f = &m.functions[0];
    let weights = run::resolve_weights(f, &BTreeMap::new(), &interp_opts(seed))?;
    let reference = interp(f, &weights, seed).map_err(|e| format!("the interpreter fails: {e}"))?;
    for &p in BUILTIN.iter().filter(|p| !not_on_random_programs(p)) {
        let label = format!("the pass `{}`", p.name);
        let (_, changed) = after_pipeline(
            &m,
            &Pipeline::of(&[p]),
            &label,
            exact(p),
            &weights,
            &reference,
            seed,
        )?;
        report.passes_run.insert(p.name);
        if changed {
            report.passes_changed.insert(p.name);
        }
    }
    let (optimized, _) = after_pipeline(
        &m,
        &Pipeline::for_mode(Mode::Infer),
        "-O",
        true,
        &weights,
        &reference,
        seed,
    )?;
    after_pipeline(
        &m,
        &Pipeline::for_mode(Mode::Train),
        "the train pipeline",
        true,
        &weights,
        &reference,
        seed,
    )?;
    let mut rng = Rng::new(seed ^ 0x7061_7373);
    // plan-memory only last: a later pass that moves lifetimes invalidates
    // the offsets (pipeline.rs says so), and verify-each rejects the result.
    let pool: Vec<&'static PassInfo> = BUILTIN
        .iter()
        .copied()
        .filter(|p| {
            exact(p) && !p.is(&glow_passes::info::PLAN_MEMORY) && !not_on_random_programs(p)
        })
        .collect();
    for _ in 0..cfg.sequences {
        let n = rng.range(2, 7) as usize;
        let mut seq: Vec<&'static PassInfo> = (0..n).map(|_| *rng.pick(&pool)).collect();
        if rng.chance(50) {
            seq.push(&glow_passes::info::PLAN_MEMORY);
        }
        let names: Vec<&str> = seq.iter().map(|p| p.name).collect();
        let label = format!("--passes {}", names.join(","));
        after_pipeline(
            &m,
            &Pipeline::of(&seq),
            &label,
            true,
            &weights,
            &reference,
            seed,
        )?;
    }
    if with_c {
        let o = optimized.functions[0].clone();
        jobs.push(CJob {
            seed,
            text: text.to_string(),
            what: "before -O",
            f: f.clone(),
            weights: weights.clone(),
            reference: reference.clone(),
        });
        jobs.push(CJob {
            seed,
            text: text.to_string(),
            what: "after -O",
            f: o,
            weights,
            reference,
        });
    }
    Ok(())
}

/// The interpreter-side checks of one program (the fuzz target's oracle).
pub fn check_one(text: &str, cfg: &Config) -> Result<(), String> {
    check_interp(0, text, cfg, false, &mut Report::default(), &mut Vec::new())
}

/// Every check of one program, the C engine's too when `cfg.c_engine`: the
/// first failure's message. What `glow-smith --fails-like` (the automatic
/// reduction's interestingness test) runs on each candidate.
pub fn check_text(text: &str, cfg: &Config) -> Result<(), String> {
    let mut jobs = Vec::new();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_interp(
            0,
            text,
            cfg,
            cfg.c_engine,
            &mut Report::default(),
            &mut jobs,
        )
    }));
    match run {
        Ok(r) => r?,
        Err(p) => return Err(format!("panic: {}", panic_text(p))),
    }
    match run_c_batch(&jobs, cfg).into_iter().next() {
        Some(f) => Err(f.message),
        None => Ok(()),
    }
}

/// The kind of a failure message, which a reduced program must keep: the
/// text before its first `:` (`C engine vs interpreter`'s check, a pass's
/// name, `panic`).
pub fn failure_kind(message: &str) -> &str {
    message.split(':').next().unwrap_or(message).trim()
}

/// The driver of a batch: `PROGRAM INDEX WEIGHTS MUTABLE_IN MUTABLE_OUT`.
fn batch_driver(names: &[String]) -> String {
    let mut s = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <stdint.h>\n",
    );
    for n in names {
        s.push_str(&format!("#include \"{n}.h\"\n"));
    }
    s.push_str(
        r#"typedef int (*glow_entry)(uint8_t *, uint8_t *, uint8_t *);
struct glow_fn { glow_entry f; size_t c, m, a; };
static const struct glow_fn glow_fns[] = {
"#,
    );
    for n in names {
        s.push_str(&format!(
            "  {{ {n}, {n}_CONSTANT_MEM_SIZE, {n}_MUTABLE_MEM_SIZE, {n}_ACTIVATIONS_MEM_SIZE }},\n"
        ));
    }
    s.push_str(
        r#"};
static uint8_t *glow_aligned(void **raw, size_t n) {
  *raw = malloc(n + 64);
  if (!*raw) return NULL;
  return (uint8_t *)(((uintptr_t)*raw + 63) / 64 * 64);
}
static int glow_load(const char *path, uint8_t *dst, size_t n) {
  FILE *f = fopen(path, "rb");
  size_t got;
  if (!f) return 1;
  got = n ? fread(dst, 1, n, f) : 0;
  fclose(f);
  return got != n;
}
int main(int argc, char **argv) {
  void *rc, *rm, *ra;
  uint8_t *c, *m, *a;
  const struct glow_fn *g;
  FILE *out;
  if (argc < 5) return 2;
  g = &glow_fns[atoi(argv[1])];
  c = glow_aligned(&rc, g->c);
  m = glow_aligned(&rm, g->m);
  a = glow_aligned(&ra, g->a);
  if (!c || !m || !a) return 3;
  memset(a, 0, g->a);
  if (glow_load(argv[2], c, g->c) || glow_load(argv[3], m, g->m)) return 3;
  if (g->f(c, m, a) != 0) return 4;
  out = fopen(argv[4], "wb");
  if (!out || fwrite(m, 1, g->m, out) != g->m) return 3;
  fclose(out);
  free(rc);
  free(rm);
  free(ra);
  return 0;
}
"#,
    );
    s
}

/// Builds and runs one batch of C jobs; returns the failures.
fn run_c_batch(jobs: &[CJob], cfg: &Config) -> Vec<Failure> {
    let mut failures = Vec::new();
    let fail = |j: &CJob, message: String| Failure {
        seed: j.seed,
        message: format!("{} ({}): {message}", j.what, "C engine vs interpreter"),
        file: None,
    };
    let dir = match tempfile::Builder::new().prefix("glow-smith").tempdir() {
        Ok(d) => d,
        Err(e) => {
            return jobs
                .iter()
                .map(|j| fail(j, format!("no temporary directory: {e}")))
                .collect()
        }
    };
    // (job, bundle name, layout, constant region)
    let mut built: Vec<(usize, String, MemoryLayout, Vec<u8>)> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let mut f = j.f.clone();
        f.name = format!("s{i}");
        let b = emit_bundle(
            &f,
            &BundleOptions {
                weights: j.weights.clone(),
                zero_missing_weights: true,
                codegen: Default::default(),
            },
        );
        match b {
            Ok(b) => {
                if let Err(e) = b.write_to(dir.path()) {
                    failures.push(fail(j, format!("cannot write the bundle: {e}")));
                    continue;
                }
                built.push((i, b.name.clone(), b.layout.clone(), b.weights.clone()));
            }
            Err(e) => failures.push(fail(j, format!("the backend rejects it: {}", e.message))),
        }
    }
    if built.is_empty() {
        return failures;
    }
    let names: Vec<String> = built.iter().map(|b| b.1.clone()).collect();
    let exe = match compile(dir.path(), &names, cfg) {
        Ok(e) => e,
        Err(e) => {
            // One bad bundle fails the batch build; build each alone to name it.
            if built.len() > 1 {
                for b in &built {
                    if let Err(e) = compile(dir.path(), std::slice::from_ref(&b.1), cfg) {
                        failures.push(fail(&jobs[b.0], e));
                    }
                }
                return failures;
            }
            failures.push(fail(&jobs[built[0].0], e));
            return failures;
        }
    };
    for (k, (i, _, layout, constant)) in built.iter().enumerate() {
        let j = &jobs[*i];
        match run_c(&exe, dir.path(), k, j, layout, constant) {
            Ok(out) => {
                if let Some(d) = differ(&j.reference, &out) {
                    failures.push(fail(j, d));
                }
            }
            Err(e) => failures.push(fail(j, e)),
        }
    }
    failures
}

fn compile(dir: &Path, names: &[String], cfg: &Config) -> Result<PathBuf, String> {
    let tag = if names.len() == 1 {
        names[0].as_str()
    } else {
        "all"
    };
    let driver = dir.join(format!("driver_{tag}.c"));
    std::fs::write(&driver, batch_driver(names)).map_err(|e| e.to_string())?;
    let exe = dir.join(format!("batch_{tag}"));
    let mut args: Vec<OsString> = vec!["-o".into(), exe.clone().into()];
    args.extend(names.iter().map(|n| dir.join(format!("{n}.c")).into()));
    args.push(driver.into());
    args.push("-lm".into());
    let out = CcOptions::new(None, &cfg.cflags).run_bundle_build(dir, args)?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        let head: String = msg.lines().take(20).collect::<Vec<_>>().join("\n");
        return Err(format!("the C build fails:\n{head}"));
    }
    Ok(exe)
}

fn run_c(
    exe: &Path,
    dir: &Path,
    k: usize,
    j: &CJob,
    layout: &MemoryLayout,
    constant: &[u8],
) -> Result<Outputs, String> {
    let mut mem = Memory::new(layout);
    for (w, wd) in j.f.weights.iter().enumerate() {
        let p = layout.weight_place(w);
        let bytes = &j.weights[&wd.name];
        let at = p.offset as usize;
        mem.region_mut(p.region)[at..at + bytes.len()].copy_from_slice(bytes);
    }
    let (wf, mi, mo) = (
        dir.join(format!("w{k}.in")),
        dir.join(format!("m{k}.in")),
        dir.join(format!("m{k}.out")),
    );
    std::fs::write(&wf, constant).map_err(|e| e.to_string())?;
    std::fs::write(&mi, &mem.mutable).map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .arg(k.to_string())
        .arg(&wf)
        .arg(&mi)
        .arg(&mo)
        .output()
        .map_err(|e| format!("cannot run the program: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the compiled program fails ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let m = std::fs::read(&mo).map_err(|e| e.to_string())?;
    let mut outputs = Outputs {
        stdout: String::from_utf8_lossy(&out.stdout).to_string(),
        ..Outputs::default()
    };
    for (w, wd) in j.f.weights.iter().enumerate() {
        let p = layout.weight_place(w);
        if p.region != Region::Mutable {
            continue;
        }
        let at = p.offset as usize;
        let data = m
            .get(at..at + wd.ty.bytes() as usize)
            .ok_or("the program wrote a short mutable region")?
            .to_vec();
        outputs.mutable.push(Tensor {
            name: wd.name.clone(),
            ty: wd.ty.clone(),
            data,
        });
    }
    Ok(outputs)
}

/// Writes a failing program beside its seed and message.
fn record(cfg: &Config, mut f: Failure, text: &str) -> Failure {
    let path = cfg.failure_dir.join(format!("seed-{}.gir", f.seed));
    let body = format!(
        "// glow-smith seed {}\n// {}\n{text}",
        f.seed,
        f.message.lines().next().unwrap_or("")
    );
    if std::fs::create_dir_all(&cfg.failure_dir).is_ok() && std::fs::write(&path, body).is_ok() {
        f.file = Some(path);
    }
    f
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Runs the oracle on `seeds` with `jobs` threads, each over one
/// contiguous chunk, and merges the chunks' reports in seed order, so the
/// report (and `c_limit`, counted from the first seed) does not depend on
/// `jobs`. `progress` sees each failure as a thread finds it.
pub fn run_seeds_parallel(
    seeds: std::ops::Range<u64>,
    jobs: usize,
    cfg: &Config,
    progress: impl Fn(&Failure) + Sync,
) -> Report {
    let n = seeds.end.saturating_sub(seeds.start);
    let jobs = (jobs.max(1) as u64).min(n.max(1));
    let chunk = n.div_ceil(jobs);
    let reports: Vec<Report> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|i| {
                let offset = i * chunk;
                let start = seeds.start + offset;
                let end = (start + chunk).min(seeds.end);
                let cfg = Config {
                    c_limit: cfg.c_limit.saturating_sub(offset),
                    ..cfg.clone()
                };
                let progress = &progress;
                (
                    start,
                    s.spawn(move || run_seeds(start..end, &cfg, progress)),
                )
            })
            .collect();
        handles
            .into_iter()
            .map(|(start, h)| {
                // A panic outside the per-seed guard (in a C batch) fails
                // the chunk's first seed rather than losing its count.
                h.join().unwrap_or_else(|p| Report {
                    failures: vec![Failure {
                        seed: start,
                        message: format!("panic in the runner: {}", panic_text(p)),
                        file: None,
                    }],
                    ..Report::default()
                })
            })
            .collect()
    });
    let mut report = Report::default();
    for r in reports {
        report.merge(r);
    }
    report
}

/// Runs the oracle on the programs of `seeds`; `progress` sees each
/// failure as it is found.
pub fn run_seeds(
    seeds: impl IntoIterator<Item = u64>,
    cfg: &Config,
    mut progress: impl FnMut(&Failure),
) -> Report {
    let mut report = Report::default();
    let mut failed_seeds = BTreeSet::new();
    let mut jobs = Vec::new();
    let flush = |jobs: &mut Vec<CJob>,
                 report: &mut Report,
                 failed: &mut BTreeSet<u64>,
                 progress: &mut dyn FnMut(&Failure)| {
        report.c_runs += jobs.len() as u64;
        for f in run_c_batch(jobs, cfg) {
            if failed.insert(f.seed) {
                let text = jobs
                    .iter()
                    .find(|j| j.seed == f.seed)
                    .map(|j| j.text.clone());
                let f = record(cfg, f, &text.unwrap_or_default());
                progress(&f);
                report.failures.push(f);
            }
        }
        jobs.clear();
    };
    let mut count = 0u64;
    for seed in seeds {
        count += 1;
        let p = generate(seed);
        report.opcodes.extend(p.opcodes.iter().copied());
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut r = Report::default();
            let mut js = Vec::new();
            let with_c = cfg.c_engine && count <= cfg.c_limit;
            let res = check_interp(seed, &p.text, cfg, with_c, &mut r, &mut js);
            (res, r, js)
        }));
        let failed = match result {
            Ok((Ok(()), r, js)) => {
                report.passes_run.extend(r.passes_run);
                report.passes_changed.extend(r.passes_changed);
                jobs.extend(js);
                None
            }
            Ok((Err(message), _, _)) => Some(message),
            Err(panic) => Some(format!("panic: {}", panic_text(panic))),
        };
        if let Some(message) = failed {
            failed_seeds.insert(seed);
            let f = record(
                cfg,
                Failure {
                    seed,
                    message,
                    file: None,
                },
                &p.text,
            );
            progress(&f);
            report.failures.push(f);
        }
        cfg.checked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if jobs.len() >= cfg.batch.max(1) * 2 {
            flush(&mut jobs, &mut report, &mut failed_seeds, &mut progress);
        }
    }
    if !jobs.is_empty() {
        flush(&mut jobs, &mut report, &mut failed_seeds, &mut progress);
    }
    report.passed = count - failed_seeds.len() as u64;
    report
}
