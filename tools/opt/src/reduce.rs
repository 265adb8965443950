//! `glow-reduce` as a library: [`reduce_main`] takes the pass registry, so
//! a downstream crate's reducer knows its passes for `--crash-in`,
//! `--verify-fails-after` and `--miscompile` (as [`crate::opt_main`] does
//! for opt flags). Manual: docs/glow-opt.md, "Reducing a test case".
//!
//! A candidate is interesting when the test says so: an external SCRIPT
//! (`SCRIPT [ARGS...] CANDIDATE.gir` exits 0, llvm-reduce's interface) or a
//! built-in check run in process. The reducer removes functions, then
//! chunks of instructions (with everything that uses them), cuts `@in`
//! operands loose onto fresh input weights, resets members to their
//! defaults and drops unused weights, round after round until nothing more
//! goes. Every candidate parses and verifies before the test sees it.

use clap::{CommandFactory, FromArgMatches, Parser};
use glow_ir::diag::render_all;
use glow_ir::function::{Mutability, WeightData, WeightId};
use glow_ir::printer::{print_module, PrintOptions};
use glow_ir::{
    parser, verifier, Diagnostic, InstId, MemberValue, Module, Opcode, OperandKind, Value,
};
use glow_passes::manager::{read_reproducer, Instrumentation};
use glow_passes::{PassManager, PassRegistry, Pipeline};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Parser, Debug)]
#[command(
    name = "glow-reduce",
    version,
    about = "Shrink a .gir file while an interestingness test keeps passing"
)]
struct Cli {
    /// The input `.gir` (a crash reproducer works too).
    input: PathBuf,
    /// The interestingness test: run with the candidate's path last; exit 0 = interesting.
    /// A name without `/` is looked up beside this tool first, then on PATH.
    #[arg(long, value_name = "SCRIPT", group = "what")]
    test: Option<PathBuf>,
    /// An argument for the test, before the candidate's path (repeatable).
    #[arg(
        long = "test-arg",
        value_name = "ARG",
        allow_hyphen_values = true,
        requires = "test"
    )]
    test_args: Vec<String>,
    /// Interesting: running `--pipeline` (default: PASS alone) crashes in pass PASS.
    #[arg(long, value_name = "PASS", group = "what")]
    crash_in: Option<String>,
    /// Interesting: the IR is invalid after a pass of PIPELINE (`--passes` syntax).
    #[arg(long, value_name = "PIPELINE", group = "what")]
    verify_fails_after: Option<String>,
    /// Interesting: the interpreter's outputs differ before and after PIPELINE.
    #[arg(long, value_name = "PIPELINE", group = "what")]
    miscompile: Option<String>,
    /// With --crash-in: the passes to run (`--passes` syntax).
    #[arg(long, value_name = "PIPELINE", requires = "crash_in")]
    pipeline: Option<String>,
    /// Where the reduced file goes (default: standard output).
    #[arg(short = 'o', value_name = "OUT.gir")]
    output: Option<PathBuf>,
}

/// What makes a candidate interesting.
enum Test {
    Script {
        program: PathBuf,
        args: Vec<String>,
    },
    /// Running the pipeline crashes in the pass named.
    CrashIn(Pipeline, String),
    VerifyFails(Pipeline),
    Miscompile(Pipeline),
    /// A reproducer's pipeline still fails with the same first message.
    SameFailure(Pipeline, String),
}

/// Runs a reducer called `name` with the passes of `registry` over the
/// command line `args` (program name first); returns the exit code: 0 on
/// success, 1 when the input is bad or not interesting, 2 on usage.
pub fn reduce_main(
    name: &'static str,
    registry: &PassRegistry,
    args: impl IntoIterator<Item = impl Into<OsString>>,
) -> u8 {
    let command = Cli::command().name(name).bin_name(name);
    let cli = match command
        .try_get_matches_from(args.into_iter().map(Into::into))
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    match run(name, registry, &cli) {
        Ok(()) => 0,
        Err((code, msg)) => {
            eprintln!("{}", msg.trim_end());
            code
        }
    }
}

/// A pass list, or a mode (`none`, `train`, `infer`) as `--compare-passes` takes.
fn pipeline(registry: &PassRegistry, text: &str) -> Result<Pipeline, (u8, String)> {
    let parsed = if glow_passes::pipeline::MODE_NAMES.contains(&text) {
        glow_passes::pipeline::Mode::parse(text).map(|m| registry.pipeline_for(m))
    } else {
        Pipeline::parse(registry, text)
    };
    parsed.map_err(|e| (2, format!("glow-reduce: error: {e}")))
}

fn run(name: &str, registry: &PassRegistry, cli: &Cli) -> Result<(), (u8, String)> {
    let file = cli.input.display().to_string();
    let bytes = std::fs::read(&cli.input)
        .map_err(|e| (1, format!("{name}: error: cannot read '{file}': {e}")))?;
    let module = parser::parse(&bytes).map_err(|d| (1, render_all(&d, &file, &bytes)))?;
    let diags = verifier::verify_module(&module);
    if diags.iter().any(Diagnostic::is_error) {
        return Err((1, render_all(&diags, &file, &bytes)));
    }
    let text = String::from_utf8_lossy(&bytes);
    // A reproducer's first line says how to replay it; the result keeps it.
    let header = text
        .lines()
        .next()
        .filter(|l| l.starts_with("// glow-opt reproducer:"))
        .map(|l| format!("{l}\n"))
        .unwrap_or_default();
    let test = if let Some(program) = &cli.test {
        Test::Script {
            program: resolve_test(program),
            args: cli.test_args.clone(),
        }
    } else if let Some(pass) = &cli.crash_in {
        registry
            .lookup_or_suggest(pass)
            .map_err(|e| (2, format!("{name}: error: {e}")))?;
        let p = pipeline(registry, cli.pipeline.as_deref().unwrap_or(pass))?;
        Test::CrashIn(p, pass.clone())
    } else if let Some(p) = &cli.verify_fails_after {
        Test::VerifyFails(pipeline(registry, p)?)
    } else if let Some(p) = &cli.miscompile {
        Test::Miscompile(pipeline(registry, p)?)
    } else if !header.is_empty() {
        let r = read_reproducer(&header).map_err(|e| (1, format!("{name}: error: {e}")))?;
        let p = pipeline(registry, &r.passes)?;
        let first = failure(&p, &module).unwrap_or_default();
        Test::SameFailure(p, first)
    } else {
        return Err((
            2,
            format!(
                "{name}: error: say what is interesting: --test=SCRIPT, --crash-in=PASS, \
                 --verify-fails-after=PIPELINE or --miscompile=PIPELINE (a crash reproducer \
                 needs none of them)"
            ),
        ));
    };
    if !matches!(test, Test::Script { .. }) {
        // Passes that crash on purpose here would print a panic per candidate.
        std::panic::set_hook(Box::new(|_| {}));
    }
    let dir = std::env::temp_dir().join(format!("glow-reduce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| {
        (
            1,
            format!("{name}: error: cannot create {}: {e}", dir.display()),
        )
    })?;
    let mut r = Reducer {
        test,
        candidate: dir.join("candidate.gir"),
        header,
        runs: 0,
    };
    let result = r.reduce(module);
    let _ = std::fs::remove_dir_all(&dir);
    let reduced = result.map_err(|e| (1, e))?;
    let out = format!(
        "{}{}",
        r.header,
        print_module(&reduced, PrintOptions::default())
    );
    match &cli.output {
        Some(path) if path.as_os_str() != "-" => glow_ir::output::write_file(path, out.as_bytes())
            .map_err(|e| {
                (
                    1,
                    format!("{name}: error: cannot write '{}': {e}", path.display()),
                )
            }),
        _ => {
            print!("{out}");
            Ok(())
        }
    }
}

/// A pass manager for candidates: a failing one is expected, so it writes
/// no crash reproducer.
fn manager(p: &Pipeline) -> PassManager {
    let inst = Instrumentation {
        auto_reproducer: false,
        ..Instrumentation::default()
    };
    PassManager::new(p.clone(), inst)
}

/// The first error message of running `p` on `m`, if it fails.
fn failure(p: &Pipeline, m: &Module) -> Option<String> {
    let mut m = m.clone();
    let err = manager(p).run(&mut m).err()?;
    err.diagnostics.first().map(|d| d.message.clone())
}

/// Whether `f`'s interpreter outputs differ before and after `p`.
fn miscompiled(p: &Pipeline, m: &Module) -> bool {
    use glow_backend::run::{self, Comparison, RunOptions};
    let mut after = m.clone();
    if manager(p).run(&mut after).is_err() {
        return false;
    }
    let opts = RunOptions::interpreter(1);
    m.functions.iter().zip(&after.functions).any(|(f, g)| {
        let Ok(w) = run::resolve_weights(f, &Default::default(), &opts) else {
            return false;
        };
        match (run::run(f, &w, &opts), run::run(g, &w, &opts)) {
            (Ok(a), Ok(b)) => matches!(run::compare(&a, &b), Comparison::Different(_)),
            _ => false,
        }
    })
}

/// `PATH` for the test: this executable's directory first, so a script
/// calls the glow tools that came with this reducer by name.
fn test_path() -> Option<OsString> {
    let dir = std::env::current_exe().ok()?.parent()?.to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).ok()
}

/// A bare name is a tool beside this executable if there is one there.
fn resolve_test(test: &Path) -> PathBuf {
    if test.components().count() == 1 {
        let beside = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(|d| d.join(test)));
        if let Some(p) = beside.filter(|p| p.is_file()) {
            return p;
        }
    }
    test.to_path_buf()
}

struct Reducer {
    test: Test,
    candidate: PathBuf,
    header: String,
    /// How many times the test ran.
    runs: usize,
}

fn size(m: &Module) -> (usize, usize, usize) {
    (
        m.functions.len(),
        m.functions.iter().map(|f| f.layout.len()).sum(),
        m.functions.iter().map(|f| f.weights.len()).sum(),
    )
}

impl Reducer {
    fn reduce(&mut self, mut cur: Module) -> Result<Module, String> {
        let text = print_module(&cur, PrintOptions::default());
        if !self.interesting(&cur, &text)? {
            return Err(format!(
                "glow-reduce: error: the input is not interesting: {}",
                self.describe()
            ));
        }
        let (f0, i0, w0) = size(&cur);
        eprintln!("glow-reduce: input: {f0} functions, {i0} instructions, {w0} weights");
        let mut round = 0;
        loop {
            round += 1;
            let before = print_module(&cur, PrintOptions::default());
            cur = self.functions(cur)?;
            cur = self.instructions(cur)?;
            cur = self.operands(cur)?;
            cur = self.activations(cur)?;
            cur = self.members(cur)?;
            cur = self.shapes(cur)?;
            cur = self.weights(cur)?;
            let (f, i, w) = size(&cur);
            eprintln!(
                "glow-reduce: round {round}: {f} functions, {i} instructions, {w} weights ({} tests run)",
                self.runs
            );
            if print_module(&cur, PrintOptions::default()) == before {
                return Ok(cur);
            }
        }
    }

    fn describe(&self) -> String {
        match &self.test {
            Test::Script { program, .. } => {
                format!("`{}` exits non-zero on it", program.display())
            }
            Test::CrashIn(_, pass) => format!("no crash in pass `{pass}`"),
            Test::VerifyFails(p) => format!("the IR stays valid through `{}`", p.to_text()),
            Test::Miscompile(p) => format!("the outputs stay the same through `{}`", p.to_text()),
            Test::SameFailure(p, _) => {
                format!("the reproducer's pipeline `{}` does not fail", p.to_text())
            }
        }
    }

    /// Whether the candidate `m` (printed as `text`) is interesting.
    fn interesting(&mut self, m: &Module, text: &str) -> Result<bool, String> {
        self.runs += 1;
        let (program, args) = match &self.test {
            Test::Script { program, args } => (program, args),
            Test::CrashIn(p, pass) => {
                let crashed = format!("pass `{pass}` crashed");
                return Ok(failure(p, m).is_some_and(|msg| msg.contains(&crashed)));
            }
            Test::VerifyFails(p) => {
                return Ok(failure(p, m).is_some_and(|msg| msg.contains("is invalid after pass")))
            }
            Test::Miscompile(p) => return Ok(miscompiled(p, m)),
            Test::SameFailure(p, first) => {
                return Ok(!first.is_empty() && failure(p, m).as_ref() == Some(first))
            }
        };
        glow_ir::output::write_file(&self.candidate, format!("{}{text}", self.header).as_bytes())
            .map_err(|e| format!("glow-reduce: error: cannot write the candidate: {e}"))?;
        let mut cmd = Command::new(program);
        if let Some(path) = test_path() {
            cmd.env("PATH", path);
        }
        let status = cmd
            .args(args)
            .arg(&self.candidate)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| {
                format!(
                    "glow-reduce: error: cannot run the test `{}`: {e}",
                    program.display()
                )
            })?;
        Ok(status.success())
    }

    /// Keeps `cand` when it parses back, verifies and is still interesting.
    fn try_candidate(&mut self, cand: &Module) -> Result<Option<Module>, String> {
        let text = print_module(cand, PrintOptions::default());
        let Ok(m) = parser::parse(text.as_bytes()) else {
            return Ok(None);
        };
        if verifier::verify_module(&m).iter().any(Diagnostic::is_error) {
            return Ok(None);
        }
        Ok(self.interesting(&m, &text)?.then_some(m))
    }

    fn functions(&mut self, mut cur: Module) -> Result<Module, String> {
        let mut k = cur.functions.len();
        while k > 0 && cur.functions.len() > 1 {
            k -= 1;
            let mut cand = cur.clone();
            cand.functions.remove(k);
            if let Some(m) = self.try_candidate(&cand)? {
                cur = m;
            }
        }
        Ok(cur)
    }

    /// Delta debugging over each function's instructions: halves, then
    /// quarters, ... down to single instructions. Removing an instruction
    /// removes every later one that names it (its users, its dealloc).
    fn instructions(&mut self, mut cur: Module) -> Result<Module, String> {
        for fi in 0..cur.functions.len() {
            let mut chunk = cur.functions[fi].layout.len().div_ceil(2).max(1);
            loop {
                let mut at = 0;
                while at < cur.functions[fi].layout.len() {
                    let mut cand = cur.clone();
                    let f = &mut cand.functions[fi];
                    let end = (at + chunk).min(f.layout.len());
                    let order = f.layout.to_vec();
                    let mut gone = vec![false; f.insts.len()];
                    for &id in &order[at..end] {
                        gone[id.index()] = true;
                    }
                    let mut kept: Vec<InstId> = Vec::new();
                    for &id in &order {
                        let uses_gone = f
                            .inst(id)
                            .operands
                            .iter()
                            .any(|op| matches!(op.value, Value::Inst(x) if gone[x.index()]));
                        if gone[id.index()] || uses_gone {
                            gone[id.index()] = true;
                        } else {
                            kept.push(id);
                        }
                    }
                    f.layout = glow_ir::Layout::from_order(kept);
                    match self.try_candidate(&cand)? {
                        Some(m) => cur = m,
                        None => at += chunk,
                    }
                }
                if chunk == 1 {
                    break;
                }
                chunk = chunk.div_ceil(2);
            }
        }
        Ok(cur)
    }

    /// An `@in` operand that reads another instruction's buffer reads a
    /// fresh mutable weight of the same type instead, so the instructions
    /// that computed the buffer can go.
    fn operands(&mut self, mut cur: Module) -> Result<Module, String> {
        for fi in 0..cur.functions.len() {
            let mut pos = 0;
            while pos < cur.functions[fi].layout.len() {
                let id = cur.functions[fi].layout.to_vec()[pos];
                let n = cur.functions[fi].inst(id).operands.len();
                for k in 0..n {
                    let f = &cur.functions[fi];
                    let op = f.inst(id).operands[k];
                    if op.kind != OperandKind::In || !matches!(op.value, Value::Inst(_)) {
                        continue;
                    }
                    let Some(ty) = f.value_type(op.value).cloned() else {
                        continue;
                    };
                    let mut cand = cur.clone();
                    let f = &mut cand.functions[fi];
                    let name = fresh_weight_name(f, "reduce.in");
                    f.weights.push(WeightData {
                        name,
                        ty,
                        mutability: Mutability::Mutable,
                        init: None,
                    });
                    let w = WeightId((f.weights.len() - 1) as u32);
                    f.inst_mut(id).operands[k].value = Value::Weight(w);
                    f.spans = Default::default();
                    if let Some(m) = self.try_candidate(&cand)? {
                        cur = m;
                        break;
                    }
                }
                pos += 1;
            }
        }
        Ok(cur)
    }

    /// An activation becomes a fresh mutable weight of its type (its alloc
    /// and dealloc go, every operand naming it names the weight): what was
    /// written into it is then observable, so the instructions that only
    /// consumed it can go in the next round.
    fn activations(&mut self, mut cur: Module) -> Result<Module, String> {
        for fi in 0..cur.functions.len() {
            let mut pos = 0;
            while pos < cur.functions[fi].layout.len() {
                let f = &cur.functions[fi];
                let id = f.layout.to_vec()[pos];
                let alloc = f.inst(id);
                let ty = match (alloc.opcode, f.value_type(Value::Inst(id))) {
                    (Opcode::AllocActivation, Some(ty)) => ty.clone(),
                    _ => {
                        pos += 1;
                        continue;
                    }
                };
                let mut cand = cur.clone();
                let f = &mut cand.functions[fi];
                let name = fresh_weight_name(f, "reduce.act");
                f.weights.push(WeightData {
                    name,
                    ty,
                    mutability: Mutability::Mutable,
                    init: None,
                });
                let w = Value::Weight(WeightId((f.weights.len() - 1) as u32));
                let order = f.layout.to_vec();
                let mut kept = Vec::new();
                for &i in &order {
                    let inst = f.inst(i);
                    let names_it = inst.operands.iter().any(|o| o.value == Value::Inst(id));
                    if i == id || (inst.opcode == Opcode::DeallocActivation && names_it) {
                        continue;
                    }
                    for op in &mut f.inst_mut(i).operands {
                        if op.value == Value::Inst(id) {
                            op.value = w;
                        }
                    }
                    kept.push(i);
                }
                f.layout = glow_ir::Layout::from_order(kept);
                f.spans = Default::default();
                match self.try_candidate(&cand)? {
                    // The alloc is gone: the next one is now at `pos`.
                    Some(m) => cur = m,
                    None => pos += 1,
                }
            }
        }
        Ok(cur)
    }

    /// Shrinks a dimension size everywhere it appears (weight types and
    /// type members such as an alloc's `Ty`): each distinct size above 1,
    /// largest first, becomes 1, else half of it. Only candidates whose every
    /// instruction still verifies are tried, so shapes shrink only where the
    /// shape rules allow; a weight whose type changes loses its inline data.
    fn shapes(&mut self, mut cur: Module) -> Result<Module, String> {
        for fi in 0..cur.functions.len() {
            let mut sizes: Vec<u64> = type_dims(&cur.functions[fi])
                .into_iter()
                .filter(|&d| d > 1)
                .collect();
            sizes.sort_unstable_by(|a, b| b.cmp(a));
            sizes.dedup();
            for d in sizes {
                let targets = if d / 2 > 1 { vec![1, d / 2] } else { vec![1] };
                for to in targets {
                    let mut cand = cur.clone();
                    resize_dims(&mut cand.functions[fi], d, to);
                    if let Some(m) = self.try_candidate(&cand)? {
                        cur = m;
                        break;
                    }
                }
            }
        }
        Ok(cur)
    }

    /// Each member that differs from its table default gets the default.
    fn members(&mut self, mut cur: Module) -> Result<Module, String> {
        for fi in 0..cur.functions.len() {
            for pos in 0..cur.functions[fi].layout.len() {
                let id = cur.functions[fi].layout.to_vec()[pos];
                let defs = cur.functions[fi].inst(id).opcode.info().members;
                for (k, def) in defs.iter().enumerate() {
                    let Some(default) = MemberValue::from_default(def.default) else {
                        continue;
                    };
                    let inst = cur.functions[fi].inst(id);
                    if inst.members.get(k).and_then(Option::as_ref) == Some(&default) {
                        continue;
                    }
                    let mut cand = cur.clone();
                    cand.functions[fi].inst_mut(id).members[k] = Some(default);
                    if let Some(m) = self.try_candidate(&cand)? {
                        cur = m;
                    }
                }
            }
        }
        Ok(cur)
    }

    /// Weights no instruction names: all at once, else one by one.
    fn weights(&mut self, mut cur: Module) -> Result<Module, String> {
        for fi in 0..cur.functions.len() {
            let unused = unused_weights(&cur.functions[fi]);
            if unused.is_empty() {
                continue;
            }
            let mut cand = cur.clone();
            drop_weights(&mut cand.functions[fi], &unused);
            if let Some(m) = self.try_candidate(&cand)? {
                cur = m;
                continue;
            }
            for w in unused.into_iter().rev() {
                let mut cand = cur.clone();
                drop_weights(&mut cand.functions[fi], &[w]);
                if let Some(m) = self.try_candidate(&cand)? {
                    cur = m;
                }
            }
        }
        Ok(cur)
    }
}

fn fresh_weight_name(f: &glow_ir::Function, prefix: &str) -> String {
    let taken =
        |n: &str| f.weights.iter().any(|w| w.name == n) || f.insts.iter().any(|i| i.name == n);
    (0..)
        .map(|k| format!("{prefix}{k}"))
        .find(|n| !taken(n))
        .expect("an unbounded range has a free name")
}

/// Every dimension size of the weights' types and of the type members.
fn type_dims(f: &glow_ir::Function) -> Vec<u64> {
    let mut out: Vec<u64> = f.weights.iter().flat_map(|w| w.ty.dims.clone()).collect();
    for id in &f.layout {
        for m in f.inst(id).members.iter().flatten() {
            if let MemberValue::Type(t) = m {
                out.extend(&t.dims);
            }
        }
    }
    out
}

/// Replaces the dimension size `from` by `to` in every weight type and type
/// member of `f`.
fn resize_dims(f: &mut glow_ir::Function, from: u64, to: u64) {
    let swap = |t: &mut glow_ir::Type| -> bool {
        let mut changed = false;
        for d in &mut t.dims {
            if *d == from {
                *d = to;
                changed = true;
            }
        }
        changed
    };
    for w in &mut f.weights {
        if swap(&mut w.ty) {
            w.init = None;
        }
    }
    for id in f.layout.to_vec() {
        for m in f.inst_mut(id).members.iter_mut().flatten() {
            if let MemberValue::Type(t) = m {
                swap(t);
            }
        }
    }
    f.spans = Default::default();
}

fn unused_weights(f: &glow_ir::Function) -> Vec<usize> {
    let mut used = vec![false; f.weights.len()];
    for id in &f.layout {
        for op in &f.inst(id).operands {
            if let Value::Weight(w) = op.value {
                used[w.index()] = true;
            }
        }
    }
    (0..f.weights.len()).filter(|&w| !used[w]).collect()
}

/// Removes the weights `drop` (indices, sorted) and renumbers the rest.
fn drop_weights(f: &mut glow_ir::Function, drop: &[usize]) {
    let mut map = vec![None; f.weights.len()];
    let mut kept = Vec::new();
    for (i, w) in f.weights.drain(..).enumerate() {
        if !drop.contains(&i) {
            map[i] = Some(kept.len() as u32);
            kept.push(w);
        }
    }
    f.weights = kept;
    for inst in &mut f.insts {
        for op in &mut inst.operands {
            if let Value::Weight(w) = op.value {
                // Erased instructions may name a dropped weight; they are not printed.
                op.value = Value::Weight(WeightId(map[w.index()].unwrap_or(0)));
            }
        }
    }
    f.spans = Default::default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use glow_ir::{Function, Opcode};
    use glow_passes::{Pass, PassContext, PassInfo, PassOptions, Step};

    /// Panics on any function with a `tanh`.
    struct CrashOnTanh;
    impl Pass for CrashOnTanh {
        fn run(&mut self, f: &mut Function, _: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
            let tanh = f.layout.iter().any(|i| f.inst(i).opcode == Opcode::Tanh);
            assert!(!tanh, "tanh is not supported");
            Ok(false)
        }
    }
    static CRASH_ON_TANH: PassInfo = PassInfo {
        name: "test-crash-on-tanh",
        summary: "panics on a tanh",
        options: &[],
        stats: &[],
        counters: &[],
        create: |_: &PassOptions| Ok(Box::new(CrashOnTanh)),
    };

    /// Erases the first instruction when it is an alloc: its users break.
    struct BreakFirstAlloc;
    impl Pass for BreakFirstAlloc {
        fn run(&mut self, f: &mut Function, _: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
            match f.layout.first() {
                Some(i) if f.inst(i).opcode == Opcode::AllocActivation => {
                    f.layout.remove(i);
                    Ok(true)
                }
                _ => Ok(false),
            }
        }
    }
    static BREAK_FIRST_ALLOC: PassInfo = PassInfo {
        name: "test-break-first-alloc",
        summary: "erases a leading alloc",
        options: &[],
        stats: &[],
        counters: &[],
        create: |_: &PassOptions| Ok(Box::new(BreakFirstAlloc)),
    };

    use crate::test_passes::BUMP_SPLATS;

    const INPUT: &str = "function f
declare {
  %in = WeightVar float<4> mutable
  %out = WeightVar float<4> mutable
  %other = WeightVar float<4> mutable
  %k = WeightVar float<4> const { Data: [1, 2, 3, 4] }
}

code {
  0 %a = allocactivation { Ty: float<4> }
  1 %ra = relu @out %a, @in %in
  2 %b = allocactivation { Ty: float<4> }
  3 %rb = elementadd @out %b, @in %a, @in %k
  4 %s = splat @out %other { Value: 2 }
  5 %t = tanh @out %out, @in %b
  6 %db = deallocactivation @out %b
  7 %da = deallocactivation @out %a
}
";

    fn reduce(test: Test) -> Module {
        std::panic::set_hook(Box::new(|_| {}));
        let m = parser::parse(INPUT.as_bytes()).expect("parses");
        let mut r = Reducer {
            test,
            candidate: std::env::temp_dir().join("unused-candidate.gir"),
            header: String::new(),
            runs: 0,
        };
        let out = r.reduce(m).expect("the input is interesting");
        let _ = std::panic::take_hook();
        out
    }

    fn only(pass: &'static PassInfo) -> Pipeline {
        Pipeline {
            steps: vec![Step {
                pass,
                options: PassOptions::default(),
            }],
        }
    }

    fn opcodes(m: &Module) -> Vec<Opcode> {
        let f = &m.functions[0];
        f.layout.iter().map(|i| f.inst(i).opcode).collect()
    }

    #[test]
    fn a_crash_reduces_to_the_instruction_it_needs() {
        let m = reduce(Test::CrashIn(
            only(&CRASH_ON_TANH),
            CRASH_ON_TANH.name.into(),
        ));
        assert_eq!(opcodes(&m), [Opcode::Tanh]);
        assert!(m.functions[0].weights.len() <= 2);
    }

    #[test]
    fn the_same_failure_as_a_reproducer_reduces_too() {
        let p = only(&CRASH_ON_TANH);
        let m = parser::parse(INPUT.as_bytes()).expect("parses");
        let first = failure(&p, &m).expect("crashes");
        let m = reduce(Test::SameFailure(p, first));
        assert_eq!(opcodes(&m), [Opcode::Tanh]);
    }

    #[test]
    fn a_verifier_failure_keeps_an_alloc_first_and_a_user() {
        let m = reduce(Test::VerifyFails(only(&BREAK_FIRST_ALLOC)));
        let ops = opcodes(&m);
        assert_eq!(ops.first(), Some(&Opcode::AllocActivation));
        assert!(ops.len() <= 3, "{ops:?}");
    }

    #[test]
    fn a_miscompile_reduces_to_the_splat() {
        let m = reduce(Test::Miscompile(only(&BUMP_SPLATS)));
        assert_eq!(opcodes(&m), [Opcode::Splat]);
    }
}
