//! Running a function on either engine: resolve every weight's contents
//! (given by name, inline `Data`, or seeded random), lay them out in the
//! bundle's three regions, execute, and read back the mutable weights the
//! function writes. Also the before/after comparison of `--compare-passes`.

use crate::bundle::{emit_bundle, BundleOptions};
use crate::cc::{self, CcOptions};
use crate::elem::{init_bytes, is_integer};
use crate::interp::{self, Memory};
use crate::memory::{MemoryLayout, Region};
use glow_ir::{Diagnostic, ElemKind, Function, Mutability, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    C,
    Interp,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub engine: Engine,
    pub cc: CcOptions,
    /// Seed of the generator for weights without contents.
    pub seed: u64,
    /// Constants without `Data` or a given tensor are an error (a weights
    /// file was given) rather than random.
    pub strict_constants: bool,
    /// Run this many times and report the time per run.
    pub repeat: Option<u64>,
    /// Build the C program here (kept) instead of in a temporary directory.
    pub build_dir: Option<std::path::PathBuf>,
    /// Threads and numerics of the C engine's bundle.
    pub codegen: crate::bundle::CodegenOptions,
}

impl RunOptions {
    /// One interpreter run with weights without contents filled from
    /// `seed`: what the tools that compare runs (bisection, reduction, the
    /// fuzzing oracle) start from.
    pub fn interpreter(seed: u64) -> RunOptions {
        RunOptions {
            engine: Engine::Interp,
            cc: CcOptions::new(None, ""),
            seed,
            strict_constants: false,
            repeat: None,
            build_dir: None,
            codegen: Default::default(),
        }
    }
}

/// One output tensor: a mutable weight the function writes.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub name: String,
    pub ty: Type,
    pub data: Vec<u8>,
}

/// What a run produced.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    pub tensors: Vec<Tensor>,
    /// The final contents of every mutable weight, written or not (what
    /// `--compare-passes` compares: a pass may drop a write that changed nothing).
    pub mutable: Vec<Tensor>,
    /// What `debugprint` printed.
    pub stdout: String,
    pub seconds_per_run: Option<f64>,
}

/// Errors of a run: diagnostics about the IR, or a message (I/O, compiler).
#[derive(Debug)]
pub enum RunError {
    Diagnostic(Diagnostic),
    Message(String),
}

impl From<Diagnostic> for RunError {
    fn from(d: Diagnostic) -> RunError {
        RunError::Diagnostic(d)
    }
}
impl From<String> for RunError {
    fn from(s: String) -> RunError {
        RunError::Message(s)
    }
}

/// The contents of every weight: `given` by name (checked against the
/// type), else inline `Data`, else seeded random (or an error for strict
/// constants).
pub fn resolve_weights(
    f: &Function,
    given: &BTreeMap<String, Vec<u8>>,
    opts: &RunOptions,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    crate::limits::check_tensors(f).map_err(|d| d.message)?;
    let mut out = BTreeMap::new();
    for w in &f.weights {
        let bytes = if let Some(b) = given.get(&w.name) {
            if b.len() as u64 != w.ty.bytes() {
                return Err(format!(
                    "tensor for `%{}` has {} bytes, but `{}` needs {}",
                    w.name,
                    b.len(),
                    w.ty,
                    w.ty.bytes()
                ));
            }
            let mut copy =
                crate::limits::zeroed(b.len() as u64, || format!("the contents of `%{}`", w.name))?;
            copy.copy_from_slice(b);
            copy
        } else if let Some(init) = &w.init {
            // init_bytes allocates as much: find out first whether it can.
            drop(crate::limits::zeroed(w.ty.bytes(), || {
                format!("the contents of `%{}`", w.name)
            })?);
            init_bytes(&w.ty, init).ok_or_else(|| {
                format!("inline data of `%{}` ({}) is not supported", w.name, w.ty)
            })?
        } else if w.mutability == Mutability::Const && opts.strict_constants {
            return Err(format!(
                "constant weight `%{}` ({}) has no `Data` and is not in the weights file",
                w.name, w.ty
            ));
        } else {
            random_bytes(&w.ty, opts.seed, &w.name)?
        };
        out.insert(w.name.clone(), bytes);
    }
    Ok(out)
}

/// One buffer an instruction wrote, as it was right after the instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    /// Position of the instruction in program order.
    pub position: usize,
    pub inst: String,
    pub opcode: &'static str,
    /// The operand's name in the opcode table (`Dest`, ...).
    pub operand: &'static str,
    /// The value the operand names (a weight, an alloc or a view).
    pub value: String,
    pub ty: Type,
    pub data: Vec<u8>,
}

/// One buffer an instruction writes, where it lives: what both engines'
/// traces record after the instruction.
struct Slot {
    position: usize,
    inst: String,
    opcode: &'static str,
    operand: &'static str,
    value: String,
    ty: Type,
    region: Region,
    offset: usize,
}

/// Every `@out`/`@inout` operand of every instruction that computes (not
/// allocs, deallocs or views), in program order and operand order.
fn written_slots(f: &Function, layout: &MemoryLayout) -> Vec<Slot> {
    let mut out = Vec::new();
    for (pos, id) in f.inst_ids().enumerate() {
        let inst = f.inst(id);
        let info = inst.opcode.info();
        if info.family == glow_ir::opcode::Family::Memory {
            continue;
        }
        for (k, op) in inst.operands.iter().enumerate() {
            if op.kind == glow_ir::OperandKind::In {
                continue;
            }
            let (Some(place), Some(ty)) = (layout.place(f, op.value), f.value_type(op.value))
            else {
                continue;
            };
            let value = match op.value {
                Value::Weight(w) => f.weights[w.index()].name.clone(),
                Value::Inst(i) => f.inst(i).name.clone(),
            };
            out.push(Slot {
                position: pos,
                inst: inst.name.clone(),
                opcode: info.name,
                operand: inst.operand_name(k).unwrap_or(""),
                value,
                ty: ty.clone(),
                region: place.region,
                offset: place.offset as usize,
            });
        }
    }
    out
}

impl Slot {
    fn written(&self, data: Vec<u8>) -> Written {
        Written {
            position: self.position,
            inst: self.inst.clone(),
            opcode: self.opcode,
            operand: self.operand,
            value: self.value.clone(),
            ty: self.ty.clone(),
            data,
        }
    }
}

/// Loads the weights of `f` into a fresh memory for `layout`.
fn load_weights(
    f: &Function,
    layout: &MemoryLayout,
    weights: &BTreeMap<String, Vec<u8>>,
) -> Result<Memory, RunError> {
    let mut mem = Memory::try_new(layout, &f.name)?;
    for (i, w) in f.weights.iter().enumerate() {
        let p = layout.weight_place(i);
        let bytes = weights
            .get(&w.name)
            .ok_or_else(|| format!("no contents for `%{}`", w.name))?;
        let at = p.offset as usize;
        mem.region_mut(p.region)[at..at + bytes.len()].copy_from_slice(bytes);
    }
    Ok(mem)
}

/// Runs `f` on the interpreter and records, after every instruction, each
/// buffer its `@out`/`@inout` operands name.
pub fn trace(f: &Function, weights: &BTreeMap<String, Vec<u8>>) -> Result<Vec<Written>, RunError> {
    let layout = MemoryLayout::plan(f)?;
    let mut mem = load_weights(f, &layout, weights)?;
    let slots = written_slots(f, &layout);
    let mut next = 0;
    let mut out = Vec::new();
    let mut stdout = String::new();
    interp::run_observed(f, &layout, &mut mem, &mut stdout, &mut |pos, mem| {
        while next < slots.len() && slots[next].position == pos {
            let s = &slots[next];
            let region = mem.region(s.region);
            if let Some(data) = region.get(s.offset..s.offset + s.ty.bytes() as usize) {
                out.push(s.written(data.to_vec()));
            }
            next += 1;
        }
    })?;
    Ok(out)
}

/// The kept build folder as an absolute path: the compiler runs in it, so a
/// relative one would be looked up from inside itself.
fn build_dir(opts: &RunOptions) -> Result<Option<std::path::PathBuf>, String> {
    opts.build_dir
        .as_deref()
        .map(|d| std::path::absolute(d).map_err(|e| format!("cannot resolve {}: {e}", d.display())))
        .transpose()
}

/// The same trace on the C engine: the bundle is built with
/// `CodegenOptions::trace`, and the driver's `glow_trace_hook` writes each
/// slot's bytes after its instruction, in the interpreter trace's order.
pub fn trace_c(
    f: &Function,
    weights: &BTreeMap<String, Vec<u8>>,
    opts: &RunOptions,
) -> Result<Vec<Written>, RunError> {
    let layout = MemoryLayout::plan(f)?;
    let mut mem = load_weights(f, &layout, weights)?;
    let slots = written_slots(f, &layout);
    let bundle = emit_bundle(
        f,
        &BundleOptions {
            weights: weights.clone(),
            zero_missing_weights: true,
            codegen: crate::bundle::CodegenOptions {
                trace: true,
                ..opts.codegen
            },
        },
    )?;
    let tmp = tempfile::Builder::new()
        .prefix("glow-trace")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let kept = build_dir(opts)?;
    let dir = kept.as_deref().unwrap_or(tmp.path());
    let hooks: Vec<cc::TraceSlot> = slots
        .iter()
        .map(|s| cc::TraceSlot {
            position: s.position,
            region: s.region,
            offset: s.offset as u64,
            bytes: s.ty.bytes(),
        })
        .collect();
    let file = dir.join("trace.bin");
    let exe = cc::build_traced(&bundle, dir, &opts.cc, &hooks, &file)?;
    cc::run(&exe, dir, &bundle.weights, &mut mem, None)?;
    let data = std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut out = Vec::new();
    let mut at = 0;
    for s in &slots {
        let n = s.ty.bytes() as usize;
        let Some(bytes) = data.get(at..at + n) else {
            return Err(format!(
                "the C engine's trace ends early, before %{} ({} of {} slots)",
                s.inst,
                out.len(),
                slots.len()
            )
            .into());
        };
        out.push(s.written(bytes.to_vec()));
        at += n;
    }
    Ok(out)
}

/// Runs `f` with weight contents `weights` (from `resolve_weights`).
pub fn run(
    f: &Function,
    weights: &BTreeMap<String, Vec<u8>>,
    opts: &RunOptions,
) -> Result<Outputs, RunError> {
    let layout = MemoryLayout::plan(f)?;
    let mut mem = load_weights(f, &layout, weights)?;
    let mut outputs = Outputs::default();
    match opts.engine {
        Engine::Interp => {
            let start = std::time::Instant::now();
            let reps = opts.repeat.unwrap_or(1).max(1);
            for _ in 0..reps {
                outputs.stdout.clear();
                interp::run(f, &layout, &mut mem, &mut outputs.stdout)?;
            }
            if opts.repeat.is_some() {
                outputs.seconds_per_run = Some(start.elapsed().as_secs_f64() / reps as f64);
            }
        }
        Engine::C => {
            let bundle = emit_bundle(
                f,
                &BundleOptions {
                    // The real constants: packed copies are made from them.
                    weights: weights.clone(),
                    zero_missing_weights: true,
                    codegen: opts.codegen,
                },
            )?;
            let tmp = tempfile::Builder::new()
                .prefix("glow-run")
                .tempdir()
                .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
            let kept = build_dir(opts)?;
            let dir = kept.as_deref().unwrap_or(tmp.path());
            let exe = cc::build(&bundle, dir, &opts.cc)?;
            let r = cc::run(&exe, dir, &bundle.weights, &mut mem, opts.repeat)?;
            outputs.stdout = r.stdout;
            outputs.seconds_per_run = r.seconds_per_run;
        }
    }
    let written = written_weights(f);
    for (w, wd) in f.weights.iter().enumerate() {
        let p = layout.weight_place(w);
        if p.region != Region::Mutable {
            continue;
        }
        let at = p.offset as usize;
        let t = Tensor {
            name: wd.name.clone(),
            ty: wd.ty.clone(),
            data: mem.mutable[at..at + wd.ty.bytes() as usize].to_vec(),
        };
        if written.contains(&w) {
            outputs.tensors.push(t.clone());
        }
        outputs.mutable.push(t);
    }
    Ok(outputs)
}

/// Indices of the mutable weights some instruction writes (through views
/// too), in declaration order.
pub fn written_weights(f: &Function) -> Vec<usize> {
    let mut set = BTreeSet::new();
    for id in f.inst_ids() {
        for op in &f.inst(id).operands {
            if op.kind.writes() {
                if let (Value::Weight(w), _) = f.origin(op.value) {
                    if f.weight(w).mutability == Mutability::Mutable {
                        set.insert(w.index());
                    }
                }
            }
        }
    }
    set.into_iter().collect()
}

/// splitmix64.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Seeded contents for a weight, independent of declaration order: floats
/// uniform in [-1, 1), quantized values over their range (at most
/// [-128, 255]), index values in [0, 8), int8/uint8 over their range, bools
/// 0/1, 16-bit floats zero.
pub fn random_bytes(ty: &Type, seed: u64, name: &str) -> Result<Vec<u8>, String> {
    let mut state = name.bytes().fold(seed ^ 0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    let n = ty.size() as usize;
    let mut out = crate::limits::zeroed(ty.bytes(), || format!("the contents of `%{name}`"))?;
    for i in 0..n {
        let r = next(&mut state);
        match ty.elem {
            ElemKind::Float => {
                let v = (r >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
                crate::elem::write_f32(&mut out, i, v);
            }
            ElemKind::Float64 => {
                let v = (r >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
                out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
            ElemKind::Float16 | ElemKind::BFloat16 => {}
            ElemKind::Bool => out[i] = (r & 1) as u8,
            // Any bytes, the rows' scales and offsets too (NaN and infinity included).
            ElemKind::Fused(_) => out[i] = (r >> 32) as u8,
            ElemKind::Index32 | ElemKind::Index64 => {
                crate::elem::write_int(ty.elem, &mut out, i, (r % 8) as i64)
            }
            k if is_integer(k) => {
                let (lo, hi) = k.quant_range().or(k.int_range()).unwrap_or((0, 0));
                let (lo, hi) = (lo.max(-128), hi.min(255));
                let v = lo + (r % (hi - lo + 1) as u64) as i64;
                crate::elem::write_int(k, &mut out, i, v);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The result of comparing two runs' outputs.
#[derive(Clone, Debug, PartialEq)]
pub enum Comparison {
    Identical { tensors: usize, elements: u64 },
    Different(Vec<String>),
}

/// Compares the final contents of the mutable weights by name (those of
/// `before`; a weight a pass made constant is skipped): bit-identical, or
/// per tensor the largest absolute difference (floats) or the first
/// differing element.
pub fn compare(before: &Outputs, after: &Outputs) -> Comparison {
    let mut problems = Vec::new();
    let mut elements = 0u64;
    for b in &before.mutable {
        let Some(a) = after.mutable.iter().find(|t| t.name == b.name) else {
            continue;
        };
        if a.ty != b.ty {
            problems.push(format!(
                "%{}: type changed from {} to {}",
                b.name, b.ty, a.ty
            ));
            continue;
        }
        elements += b.ty.size();
        if a.data == b.data {
            continue;
        }
        problems.push(describe_difference(b, a));
    }
    if before.stdout != after.stdout {
        problems.push("debugprint output differs".to_string());
    }
    if problems.is_empty() {
        Comparison::Identical {
            tensors: before.mutable.len(),
            elements,
        }
    } else {
        Comparison::Different(problems)
    }
}

fn describe_difference(b: &Tensor, a: &Tensor) -> String {
    let n = b.ty.size() as usize;
    if b.ty.elem == ElemKind::Float {
        let (mut worst, mut at) = (0f64, 0usize);
        let mut differing = 0usize;
        for i in 0..n {
            let (x, y) = (
                crate::elem::read_f32(&b.data, i),
                crate::elem::read_f32(&a.data, i),
            );
            if x.to_bits() != y.to_bits() {
                differing += 1;
                let d = (x as f64 - y as f64).abs();
                let d = if d.is_nan() { f64::INFINITY } else { d };
                if d >= worst {
                    worst = d;
                    at = i;
                }
            }
        }
        let (x, y) = (
            crate::elem::read_f32(&b.data, at),
            crate::elem::read_f32(&a.data, at),
        );
        format!(
            "%{}: {differing} of {n} elements differ; largest difference {worst:e} at element {at} (before {x:?}, after {y:?})",
            b.name
        )
    } else {
        let eb = b.ty.elem.bytes() as usize;
        let first = (0..n)
            .find(|&i| b.data[i * eb..i * eb + eb] != a.data[i * eb..i * eb + eb])
            .unwrap_or(0);
        format!("%{}: elements differ, first at element {first}", b.name)
    }
}

/// A function built once and run many times on memory kept between runs:
/// what a training loop needs (each step updates the mutable weights in
/// place; the caller changes inputs between steps).
pub struct Session {
    f: Function,
    layout: MemoryLayout,
    mem: Memory,
    /// The C engine's built program and its constant region.
    exe: Option<(tempfile::TempDir, std::path::PathBuf, Vec<u8>)>,
}

impl Session {
    /// Lays out `f` with the weight contents `weights` (from
    /// `resolve_weights`) and, for the C engine, compiles it.
    pub fn new(
        f: &Function,
        weights: &BTreeMap<String, Vec<u8>>,
        opts: &RunOptions,
    ) -> Result<Session, RunError> {
        let layout = MemoryLayout::plan(f)?;
        let mem = load_weights(f, &layout, weights)?;
        let exe = match opts.engine {
            Engine::Interp => None,
            Engine::C => {
                let bundle = emit_bundle(
                    f,
                    &BundleOptions {
                        weights: weights.clone(),
                        zero_missing_weights: true,
                        codegen: opts.codegen,
                    },
                )?;
                let dir = tempfile::Builder::new()
                    .prefix("glow-session")
                    .tempdir()
                    .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
                let exe = cc::build(&bundle, dir.path(), &opts.cc)?;
                Some((dir, exe, bundle.weights))
            }
        };
        Ok(Session {
            f: f.clone(),
            layout,
            mem,
            exe,
        })
    }

    /// Runs the function once; returns what `debugprint` printed.
    pub fn run(&mut self) -> Result<String, RunError> {
        match &self.exe {
            None => {
                let mut out = String::new();
                interp::run(&self.f, &self.layout, &mut self.mem, &mut out)?;
                Ok(out)
            }
            Some((dir, exe, constant)) => {
                let r = cc::run(exe, dir.path(), constant, &mut self.mem, None)?;
                Ok(r.stdout)
            }
        }
    }

    fn place(&self, name: &str) -> Option<(Region, usize, usize)> {
        let i = self.f.weights.iter().position(|w| w.name == name)?;
        let p = self.layout.weight_place(i);
        Some((
            p.region,
            p.offset as usize,
            self.f.weights[i].ty.bytes() as usize,
        ))
    }

    /// The current contents of the mutable weight `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        let (r, at, n) = self.place(name)?;
        (r == Region::Mutable).then(|| &self.mem.mutable[at..at + n])
    }

    /// Overwrites the mutable weight `name` (an input before a run).
    pub fn set(&mut self, name: &str, bytes: &[u8]) -> Result<(), String> {
        match self.place(name) {
            Some((Region::Mutable, at, n)) if n == bytes.len() => {
                self.mem.mutable[at..at + n].copy_from_slice(bytes);
                Ok(())
            }
            Some((Region::Mutable, _, n)) => {
                Err(format!("`%{name}` holds {n} bytes, {} given", bytes.len()))
            }
            _ => Err(format!(
                "`%{name}` is not a mutable weight of `{}`",
                self.f.name
            )),
        }
    }
}
