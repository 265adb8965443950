//! `glow-reduce IN.gir --test=SCRIPT [--test-arg=A]... [-o OUT.gir]`:
//! llvm-reduce for `.gir`. SCRIPT runs as `SCRIPT [ARGS...] CANDIDATE.gir`
//! and exits 0 when the candidate is still interesting. The reducer removes
//! functions, then chunks of instructions (with everything that uses them),
//! cuts `@in` operands loose onto fresh input weights, resets members to
//! their defaults and drops unused weights, round after round until nothing
//! more goes. Every candidate parses and verifies before the test sees it.
//! Progress goes to stderr; the result to OUT (atomically) or stdout. A
//! crash reproducer keeps its first line, so the result still replays.
//! Exit 0 on success, 1 when the input is bad or not interesting, 2 on
//! usage. Manual: docs/glow-opt.md, "Reducing a test case".

use clap::Parser;
use glow_ir::diag::render_all;
use glow_ir::function::{Mutability, WeightData, WeightId};
use glow_ir::printer::{print_module, PrintOptions};
use glow_ir::{parser, verifier, Diagnostic, InstId, MemberValue, Module, OperandKind, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

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
    /// A name without `/` is looked up beside glow-reduce first, then on PATH.
    #[arg(long, value_name = "SCRIPT")]
    test: PathBuf,
    /// An argument for the test, before the candidate's path (repeatable).
    #[arg(long = "test-arg", value_name = "ARG", allow_hyphen_values = true)]
    test_args: Vec<String>,
    /// Where the reduced file goes (default: standard output).
    #[arg(short = 'o', value_name = "OUT.gir")]
    output: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{}", msg.trim_end());
            ExitCode::from(1)
        }
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let file = cli.input.display().to_string();
    let bytes = std::fs::read(&cli.input)
        .map_err(|e| format!("glow-reduce: error: cannot read '{file}': {e}"))?;
    let module = parser::parse(&bytes).map_err(|d| render_all(&d, &file, &bytes))?;
    let diags = verifier::verify_module(&module);
    if diags.iter().any(Diagnostic::is_error) {
        return Err(render_all(&diags, &file, &bytes));
    }
    let text = String::from_utf8_lossy(&bytes);
    // A reproducer's first line says how to replay it; the result keeps it.
    let header = text
        .lines()
        .next()
        .filter(|l| l.starts_with("// glow-opt reproducer:"))
        .map(|l| format!("{l}\n"))
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("glow-reduce-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("glow-reduce: error: cannot create {}: {e}", dir.display()))?;
    let mut r = Reducer {
        test: resolve_test(&cli.test),
        args: cli.test_args.clone(),
        candidate: dir.join("candidate.gir"),
        header,
        runs: 0,
    };
    let result = r.reduce(module);
    let _ = std::fs::remove_dir_all(&dir);
    let reduced = result?;
    let out = format!(
        "{}{}",
        r.header,
        print_module(&reduced, PrintOptions::default())
    );
    match &cli.output {
        Some(path) if path.as_os_str() != "-" => glow_ir::output::write_file(path, out.as_bytes())
            .map_err(|e| format!("glow-reduce: error: cannot write '{}': {e}", path.display())),
        _ => {
            print!("{out}");
            Ok(())
        }
    }
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
    test: PathBuf,
    args: Vec<String>,
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
        if !self.interesting(&text)? {
            return Err(format!(
                "glow-reduce: error: the input is not interesting: `{}` exits non-zero on it",
                self.test.display()
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
            cur = self.members(cur)?;
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

    /// Runs the test on `text`; interesting when it exits 0.
    fn interesting(&mut self, text: &str) -> Result<bool, String> {
        glow_ir::output::write_file(&self.candidate, format!("{}{text}", self.header).as_bytes())
            .map_err(|e| format!("glow-reduce: error: cannot write the candidate: {e}"))?;
        self.runs += 1;
        let status = Command::new(&self.test)
            .args(&self.args)
            .arg(&self.candidate)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| {
                format!(
                    "glow-reduce: error: cannot run the test `{}`: {e}",
                    self.test.display()
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
        Ok(self.interesting(&text)?.then_some(m))
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
                    let mut gone = vec![false; f.insts.len()];
                    for &id in &f.layout[at..end] {
                        gone[id.index()] = true;
                    }
                    let mut kept: Vec<InstId> = Vec::new();
                    for &id in &f.layout {
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
                    f.layout = kept;
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
                let id = cur.functions[fi].layout[pos];
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
                    let name = fresh_weight_name(f);
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

    /// Each member that differs from its table default gets the default.
    fn members(&mut self, mut cur: Module) -> Result<Module, String> {
        for fi in 0..cur.functions.len() {
            for pos in 0..cur.functions[fi].layout.len() {
                let id = cur.functions[fi].layout[pos];
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

fn fresh_weight_name(f: &glow_ir::Function) -> String {
    let taken =
        |n: &str| f.weights.iter().any(|w| w.name == n) || f.insts.iter().any(|i| i.name == n);
    (0..)
        .map(|k| format!("reduce.in{k}"))
        .find(|n| !taken(n))
        .expect("an unbounded range has a free name")
}

fn unused_weights(f: &glow_ir::Function) -> Vec<usize> {
    let mut used = vec![false; f.weights.len()];
    for &id in &f.layout {
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
