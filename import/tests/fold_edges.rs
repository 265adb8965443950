//! Fold against run: every op the importer folds over constants, on edge
//! values (NaN of both signs, both zeros, both infinities, the integer
//! extremes, MIN / -1, division by zero, overflow, values that f32 cannot
//! tell apart), imported twice from one graph: once with its inputs as
//! initializers, which the importer folds into constants, once with them as
//! graph inputs, which run on the interpreter and on the C engine. Each
//! engine's output must have the folded constant's bits exactly.
//!
//! One trial per op and engine (`interp::max_f32`, `c::max_f32`); the C
//! trials show as ignored when `cc` is missing. The IR has no shift
//! operators, so there are no shift cases. `Mod` folds but has no run-time
//! lowering to compare with; its overflow case has a trial of its own.
//!
//! `GLOW_WRITE_FOLD_MODELS=DIR` also writes the models of
//! `test/import/fold-edges.txt` to DIR; a trial checks that the files in
//! `test/import/Inputs/fold-edges/` are the ones this test writes.

mod common;

use common::{attr_float, have_cc, import, model, node, Edge};
use glow_backend::elem::{read_int, write_int};
use glow_backend::run::{Engine, Outputs};
use glow_import::onnx::{dtype, AttributeProto, TensorProto};
use glow_ir::{ElemKind, Opcode};
use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::{Arc, OnceLock};

/// A tensor's values: floats, or integers and bools (0/1) as i64.
#[derive(Clone, Debug)]
enum V {
    F(Vec<f32>),
    I(Vec<i64>),
}

impl V {
    fn len(&self) -> usize {
        match self {
            V::F(v) => v.len(),
            V::I(v) => v.len(),
        }
    }

    /// The little-endian bytes of ONNX type `code` (also the engines' layout).
    fn bytes(&self, code: i32) -> Vec<u8> {
        match self {
            V::F(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            V::I(v) => {
                let k = kind(code);
                let mut out = vec![0u8; v.len() * k.bytes() as usize];
                for (i, &x) in v.iter().enumerate() {
                    write_int(k, &mut out, i, x);
                }
                out
            }
        }
    }

    /// Element `i` as text, for a failure message.
    fn show(&self, i: usize) -> String {
        match self {
            V::F(v) => show_f32(v[i]),
            V::I(v) => v[i].to_string(),
        }
    }
}

fn show_f32(x: f32) -> String {
    format!("{x:?} ({:#010x})", x.to_bits())
}

fn kind(code: i32) -> ElemKind {
    match code {
        dtype::FLOAT => ElemKind::Float,
        dtype::INT64 => ElemKind::Index64,
        dtype::INT32 => ElemKind::Index32,
        dtype::INT8 => ElemKind::Int8,
        dtype::UINT8 => ElemKind::UInt8,
        dtype::BOOL => ElemKind::Bool,
        _ => panic!("no element kind for ONNX type {code}"),
    }
}

/// Element `i` of an output's bytes as text.
fn show_elem(code: i32, bytes: &[u8], i: usize) -> String {
    let k = kind(code);
    if k == ElemKind::Float {
        let b = &bytes[i * 4..i * 4 + 4];
        show_f32(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    } else {
        read_int(k, bytes, i).to_string()
    }
}

/// One folded node: its op, attributes, typed inputs and output type.
struct Case {
    name: String,
    op: &'static str,
    attrs: Vec<AttributeProto>,
    inputs: Vec<(i32, V)>,
    out: i32,
}

impl Case {
    fn input_name(&self, i: usize) -> String {
        format!("{}.{}", self.name, ["a", "b", "c"][i])
    }
    fn len(&self) -> usize {
        self.inputs[0].1.len()
    }
}

const F32_EDGES: [f32; 14] = [
    f32::NAN,
    -f32::NAN,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    3.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::MAX,
    f32::MIN_POSITIVE,
    1e-45,
];

/// 2^53 and 2^53 + 1 (and MAX - 1, MAX) differ as integers, not as f32.
const I64_EDGES: [i64; 14] = [
    i64::MIN,
    i64::MIN + 1,
    -(1 << 31),
    -2,
    -1,
    0,
    1,
    2,
    7,
    1 << 31,
    1 << 53,
    (1 << 53) + 1,
    i64::MAX - 1,
    i64::MAX,
];

const I32_EDGES: [i64; 8] = [
    i32::MIN as i64,
    i32::MIN as i64 + 1,
    -1,
    0,
    1,
    3,
    i32::MAX as i64 - 1,
    i32::MAX as i64,
];
const I8_EDGES: [i64; 6] = [-128, -127, -1, 0, 1, 127];
const U8_EDGES: [i64; 6] = [0, 1, 2, 127, 128, 255];

/// Every pair of `edges`: the left operands and the right ones.
fn pairs<T: Copy>(edges: &[T]) -> (Vec<T>, Vec<T>) {
    let a = edges
        .iter()
        .flat_map(|&x| edges.iter().map(move |_| x))
        .collect();
    let b = edges.iter().flat_map(|_| edges.iter().copied()).collect();
    (a, b)
}

fn binary(name: &str, op: &'static str, code: i32, edges: &V, out: i32) -> Case {
    let (a, b) = match edges {
        V::F(e) => {
            let (a, b) = pairs(e);
            (V::F(a), V::F(b))
        }
        V::I(e) => {
            let (a, b) = pairs(e);
            (V::I(a), V::I(b))
        }
    };
    Case {
        name: name.into(),
        op,
        attrs: vec![],
        inputs: vec![(code, a), (code, b)],
        out,
    }
}

fn unary(name: &str, op: &'static str, attrs: Vec<AttributeProto>, x: (i32, V), out: i32) -> Case {
    Case {
        name: name.into(),
        op,
        attrs,
        inputs: vec![x],
        out,
    }
}

fn cast_attr(to: i32) -> Vec<AttributeProto> {
    vec![common::attr_int("to", to as i64)]
}

fn cases() -> Vec<Case> {
    let f = V::F(F32_EDGES.to_vec());
    let ints = [
        ("i64", dtype::INT64, V::I(I64_EDGES.to_vec())),
        ("i32", dtype::INT32, V::I(I32_EDGES.to_vec())),
        ("i8", dtype::INT8, V::I(I8_EDGES.to_vec())),
        ("u8", dtype::UINT8, V::I(U8_EDGES.to_vec())),
    ];
    let mut out = Vec::new();
    for op in [
        "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean",
    ] {
        let name = format!("{}_f32", op.to_lowercase());
        out.push(binary(&name, op, dtype::FLOAT, &f, dtype::FLOAT));
    }
    for (suffix, code, e) in &ints {
        // Pow of integers: by squaring, wrapping (`ops::ipow`).
        for op in ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"] {
            let name = format!("{}_{suffix}", op.to_lowercase());
            out.push(binary(&name, op, *code, e, *code));
        }
    }
    for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"] {
        let l = op.to_lowercase();
        out.push(binary(
            &format!("{l}_f32"),
            op,
            dtype::FLOAT,
            &f,
            dtype::BOOL,
        ));
        let (_, code, e) = &ints[0];
        out.push(binary(&format!("{l}_i64"), op, *code, e, dtype::BOOL));
    }
    let bools = V::I(vec![0, 1]);
    for op in ["And", "Or", "Xor", "Equal"] {
        let name = format!("{}_bool", op.to_lowercase());
        out.push(binary(&name, op, dtype::BOOL, &bools, dtype::BOOL));
    }
    out.push(unary(
        "not_bool",
        "Not",
        vec![],
        (dtype::BOOL, bools.clone()),
        dtype::BOOL,
    ));
    let fx = || (dtype::FLOAT, f.clone());
    for (name, op, attrs) in [
        ("neg_f32", "Neg", vec![]),
        ("abs_f32", "Abs", vec![]),
        ("reciprocal_f32", "Reciprocal", vec![]),
        ("sign_f32", "Sign", vec![]),
        (
            "thresholdedrelu_f32",
            "ThresholdedRelu",
            vec![attr_float("alpha", 0.5)],
        ),
        (
            "shrink_f32",
            "Shrink",
            vec![attr_float("bias", 0.25), attr_float("lambd", 0.5)],
        ),
        ("softsign_f32", "Softsign", vec![]),
        ("swish_f32", "Swish", vec![]),
    ] {
        out.push(unary(name, op, attrs, fx(), dtype::FLOAT));
    }
    // Casts: floats beyond every integer range, and halves; integers beyond
    // the narrower kinds' ranges.
    let mut fc = F32_EDGES.to_vec();
    fc.extend([
        2.5, -2.5, 255.9, 300.0, -300.0, 3e9, -3e9, 1e19, -1e19, 9.3e18,
    ]);
    let fc = V::F(fc);
    for (suffix, to) in [
        ("i64", dtype::INT64),
        ("i32", dtype::INT32),
        ("i8", dtype::INT8),
        ("u8", dtype::UINT8),
        ("bool", dtype::BOOL),
    ] {
        out.push(unary(
            &format!("cast_f32_{suffix}"),
            "Cast",
            cast_attr(to),
            (dtype::FLOAT, fc.clone()),
            to,
        ));
    }
    let mut ic = I64_EDGES.to_vec();
    ic.extend([255, 256, -129, 300, (1 << 24) + 1]);
    let ic = V::I(ic);
    for (suffix, to) in [
        ("f32", dtype::FLOAT),
        ("i32", dtype::INT32),
        ("i8", dtype::INT8),
        ("u8", dtype::UINT8),
        ("bool", dtype::BOOL),
    ] {
        out.push(unary(
            &format!("cast_i64_{suffix}"),
            "Cast",
            cast_attr(to),
            (dtype::INT64, ic.clone()),
            to,
        ));
    }
    let n = F32_EDGES.len();
    out.push(Case {
        name: "where_f32".into(),
        op: "Where",
        attrs: vec![],
        inputs: vec![
            (dtype::BOOL, V::I((0..n as i64).map(|i| i % 2).collect())),
            (dtype::FLOAT, f.clone()),
            (
                dtype::FLOAT,
                V::F(F32_EDGES.iter().rev().copied().collect()),
            ),
        ],
        out: dtype::FLOAT,
    });
    out
}

/// The graph of every case: the inputs as initializers (`folded`) or as
/// graph inputs.
fn graph(cases: &[Case], folded: bool) -> Vec<u8> {
    let dims: Vec<Vec<i64>> = cases.iter().map(|c| vec![c.len() as i64]).collect();
    let names: Vec<Vec<String>> = cases
        .iter()
        .map(|c| (0..c.inputs.len()).map(|i| c.input_name(i)).collect())
        .collect();
    let mut nodes = Vec::new();
    let mut inputs: Vec<Edge> = Vec::new();
    let mut outputs: Vec<Edge> = Vec::new();
    let mut inits = Vec::new();
    for (k, c) in cases.iter().enumerate() {
        let ins: Vec<&str> = names[k].iter().map(String::as_str).collect();
        nodes.push(node(c.op, &ins, &[&c.name], c.attrs.clone()));
        outputs.push((&c.name, c.out, &dims[k]));
        for (i, (code, v)) in c.inputs.iter().enumerate() {
            if folded {
                inits.push(TensorProto {
                    name: names[k][i].clone(),
                    dims: dims[k].clone(),
                    data_type: *code,
                    raw_data: v.bytes(*code),
                    ..Default::default()
                });
            } else {
                inputs.push((&names[k][i], *code, &dims[k]));
            }
        }
    }
    model(nodes, &inputs, &outputs, inits, 18)
}

/// The folded outputs (read back through the interpreter: the function is
/// only copies of constants) and each engine's outputs of the run-time graph.
struct Runs {
    folded: Outputs,
    interp: OnceLock<Outputs>,
    c: OnceLock<Outputs>,
    feeds: Vec<(String, Vec<u8>)>,
    runtime: glow_import::Imported,
}

impl Runs {
    fn new(cases: &[Case]) -> Runs {
        let folded = import(&graph(cases, true));
        // Nothing but copies: every node folded.
        for id in folded.function.inst_ids() {
            let op = folded.function.inst(id).opcode;
            assert_eq!(
                op,
                Opcode::Copy,
                "a node was not folded:\n{}",
                folded.gir_text()
            );
        }
        let folded = common::run_on(&folded, &[], Engine::Interp);
        let feeds = cases
            .iter()
            .flat_map(|c| {
                c.inputs
                    .iter()
                    .enumerate()
                    .map(|(i, (code, v))| (c.input_name(i), v.bytes(*code)))
            })
            .collect();
        Runs {
            folded,
            interp: OnceLock::new(),
            c: OnceLock::new(),
            feeds,
            runtime: import(&graph(cases, false)),
        }
    }

    fn engine(&self, engine: Engine) -> &Outputs {
        let cell = match engine {
            Engine::Interp => &self.interp,
            Engine::C => &self.c,
        };
        cell.get_or_init(|| {
            let feeds: Vec<(&str, Vec<u8>)> = self
                .feeds
                .iter()
                .map(|(n, b)| (n.as_str(), b.clone()))
                .collect();
            common::run_on(&self.runtime, &feeds, engine)
        })
    }
}

fn output<'a>(outs: &'a Outputs, name: &str) -> &'a [u8] {
    &outs
        .tensors
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no output `{name}`"))
        .data
}

/// The engine's bits of case `c` against the folded constant's.
fn check(c: &Case, runs: &Runs, engine: Engine) -> Result<(), Failed> {
    let want = output(&runs.folded, &c.name);
    let got = output(runs.engine(engine), &c.name);
    if want == got {
        return Ok(());
    }
    let w = kind(c.out).bytes() as usize;
    let bad: Vec<String> = (0..c.len())
        .filter(|&i| want[i * w..i * w + w] != got[i * w..i * w + w])
        .map(|i| {
            let args: Vec<String> = c.inputs.iter().map(|(_, v)| v.show(i)).collect();
            format!(
                "  {}({}): folded {}, {engine:?} {}",
                c.op,
                args.join(", "),
                show_elem(c.out, want, i),
                show_elem(c.out, got, i)
            )
        })
        .collect();
    Err(format!(
        "{} of {} elements differ:\n{}",
        bad.len(),
        c.len(),
        bad.join("\n")
    )
    .into())
}

/// Mod folds with its own arithmetic (not an instruction's); MIN % -1 is 0
/// rather than an overflow that aborted the import.
fn integer_mod_folds_min_by_minus_one() -> Result<(), Failed> {
    let a = V::I(vec![i64::MIN, -7, 7, -7, 5]);
    let b = V::I(vec![-1, 2, -2, -2, 0]);
    for (fmod, want) in [(0, [0, 1, -1, -1, 0]), (1, [0, -1, 1, -1, 0])] {
        let case = Case {
            name: "mod".into(),
            op: "Mod",
            attrs: vec![common::attr_int("fmod", fmod)],
            inputs: vec![(dtype::INT64, a.clone()), (dtype::INT64, b.clone())],
            out: dtype::INT64,
        };
        let outs = common::run_on(&import(&graph(&[case], true)), &[], Engine::Interp);
        let got = output(&outs, "mod");
        let got: Vec<i64> = (0..want.len())
            .map(|i| read_int(ElemKind::Index64, got, i))
            .collect();
        if got != want {
            return Err(format!("fmod={fmod}: {got:?}, want {want:?}").into());
        }
    }
    Ok(())
}

/// The lit test's models and the run-time model's inputs, as
/// `GLOW_WRITE_FOLD_MODELS` writes them.
fn lit_models() -> Vec<(String, Vec<u8>)> {
    let max = Case {
        name: "max".into(),
        op: "Max",
        attrs: vec![],
        inputs: vec![
            (dtype::FLOAT, V::F(vec![f32::NAN, 1.0, -0.0, 0.0])),
            (dtype::FLOAT, V::F(vec![1.0, f32::NAN, 0.0, -0.0])),
        ],
        out: dtype::FLOAT,
    };
    let div = Case {
        name: "div".into(),
        op: "Div",
        attrs: vec![],
        inputs: vec![
            (dtype::INT64, V::I(vec![i64::MIN, i64::MIN, 7, -7])),
            (dtype::INT64, V::I(vec![-1, 0, -2, 0])),
        ],
        out: dtype::INT64,
    };
    let cases = [max, div];
    let mut files = vec![
        ("fold-edges.onnx".to_string(), graph(&cases, true)),
        ("run-edges.onnx".to_string(), graph(&cases, false)),
    ];
    for c in &cases {
        for (i, (code, v)) in c.inputs.iter().enumerate() {
            let ty = glow_ir::Type::new(kind(*code), &[v.len() as u64]);
            let npy = glow_backend::npy::write(&ty, &v.bytes(*code));
            files.push((format!("{}.npy", c.input_name(i)), npy));
        }
    }
    files
}

fn lit_inputs_are_current() -> Result<(), Failed> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../test/import/Inputs/fold-edges");
    for (name, bytes) in lit_models() {
        let path = dir.join(&name);
        let on_disk = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if on_disk != bytes {
            return Err(format!(
                "{} is not what this test writes; rerun with GLOW_WRITE_FOLD_MODELS={}",
                path.display(),
                dir.display()
            )
            .into());
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    if let Some(dir) = std::env::var_os("GLOW_WRITE_FOLD_MODELS") {
        for (name, bytes) in lit_models() {
            let path = std::path::Path::new(&dir).join(&name);
            std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    let cases = Arc::new(cases());
    let runs: Arc<OnceLock<Runs>> = Arc::new(OnceLock::new());
    let cc = have_cc();
    if !cc {
        println!("ignored: c::*: no `cc` on PATH");
    }
    let mut trials = vec![
        Trial::test("lit_inputs_are_current", lit_inputs_are_current),
        Trial::test(
            "integer_mod_folds_min_by_minus_one",
            integer_mod_folds_min_by_minus_one,
        ),
    ];
    for (engine, prefix) in [(Engine::Interp, "interp"), (Engine::C, "c")] {
        for k in 0..cases.len() {
            let (cases, runs) = (cases.clone(), runs.clone());
            let name = format!("{prefix}::{}", cases[k].name);
            let trial = Trial::test(name, move || {
                let runs = runs.get_or_init(|| Runs::new(&cases));
                check(&cases[k], runs, engine)
            });
            trials.push(if engine == Engine::C {
                trial.with_ignored_flag(!cc)
            } else {
                trial
            });
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
