//! The bundle: `NAME.c`, `NAME.h` and `NAME.weights.bin` in the shape of
//! Glow's AOT bundles (see docs/backend.md for the contract). Output is
//! deterministic: the same function and options give byte-identical files.

use crate::elem::init_bytes;
use crate::emit::runtime::PackKind;
use crate::emit::{emit_body, Runtime};
use crate::error::BackendError;
use crate::memory::MemoryLayout;
use crate::namer::{comment_text, Namer};
use glow_ir::ALIGN;
use glow_ir::{Diagnostic, Function, Mutability, Opcode, Type};
use std::collections::BTreeMap;
use std::path::Path;

/// How to build a bundle.
#[derive(Clone, Debug, Default)]
pub struct BundleOptions {
    /// Contents of weights without inline `Data`, by IR name, as raw
    /// little-endian element bytes of the weight's type.
    pub weights: BTreeMap<String, Vec<u8>>,
    /// Fill constant weights that have neither `Data` nor an entry in
    /// `weights` with zeros instead of failing.
    pub zero_missing_weights: bool,
    pub codegen: CodegenOptions,
}

/// How the generated code computes (docs/backend.md, "Threads and numerics").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodegenOptions {
    /// More than 1: the kernels split their outputs over this many threads
    /// (pthreads), each element computed by one thread in the single-thread
    /// order, so results are bit-identical to one thread.
    pub threads: u32,
    /// Allow results other than the interpreter's (docs/backend.md): the
    /// C compiler may contract the `a * b + c` outside the dot products
    /// (those are fused multiply-adds in both modes).
    pub fast_math: bool,
    /// Output pixels (GEMM rows) per tile of the float kernels; 0 is
    /// `emit::runtime::TILE_PIXELS`. Every value computes the same numbers.
    pub tile_pixels: u32,
    /// Call `glow_trace_hook(pos, constantWeight, mutableWeight, activations)`
    /// after each instruction (its position in program order), which the
    /// program must define: `glow-run --bisect-engines` records every
    /// written buffer of the C engine with it.
    pub trace: bool,
}

/// One mutable weight (an input or output) of a bundle.
#[derive(Clone, Debug)]
pub struct MutableWeight {
    pub name: String,
    pub ty: Type,
    /// `NAME_<weight>`, the header's offset macro.
    pub macro_name: String,
    pub offset: u64,
}

/// A generated bundle, ready to be written.
#[derive(Clone, Debug)]
pub struct Bundle {
    /// The C identifier of the entry point (and the file stem).
    pub name: String,
    pub c_source: String,
    pub header: String,
    /// The constant region's bytes (`NAME.weights.bin`).
    pub weights: Vec<u8>,
    pub layout: MemoryLayout,
    pub mutable: Vec<MutableWeight>,
    /// What the source was generated for (threads need `-pthread`).
    pub codegen: CodegenOptions,
}

/// Identifiers the kernels declare locally, besides the operand names of the
/// opcode table and the `glow_*` names of `kernels.c` (both reserved from
/// their source); reserved so that no function name can shadow or be
/// shadowed by them.
const KERNEL_LOCALS: &[&str] = &[
    "constantWeight",
    "mutableWeight",
    "activations",
    "shape",
    "m",
    "fs",
    "dims",
    "ds",
    "ss",
    "to",
];

/// Builds the bundle of a verified function.
pub fn emit_bundle(f: &Function, opts: &BundleOptions) -> Result<Bundle, BackendError> {
    let mut layout = MemoryLayout::plan(f)?;
    let mut namer = Namer::new();
    namer.reserve("glow_trace_hook");
    for l in KERNEL_LOCALS {
        namer.reserve(l);
    }
    for k in crate::emit::runtime::kernel_identifiers() {
        namer.reserve(k);
    }
    // Every kernel declares its operands under their table names.
    for op in glow_ir::Opcode::ALL {
        for o in op.info().operands {
            namer.reserve(o.name);
        }
    }
    let name = namer.name_family(&f.name, crate::namer::BUNDLE_SUFFIXES);
    // The body's chunk functions.
    for k in 0..=f.inst_ids().count() / crate::emit::CHUNK {
        namer.reserve(&format!("{name}_part{k}"));
    }
    let mut mutable = Vec::new();
    let mut weights = vec![0u8; layout.constant_size as usize];
    for (i, w) in f.weights.iter().enumerate() {
        let place = layout.weight_place(i);
        match w.mutability {
            Mutability::Mutable => mutable.push(MutableWeight {
                name: w.name.clone(),
                ty: w.ty.clone(),
                macro_name: namer.name(&format!("{name}_"), &w.name),
                offset: place.offset,
            }),
            Mutability::Const => {
                let bytes = constant_bytes(f, i, opts)?;
                let at = place.offset as usize;
                weights[at..at + bytes.len()].copy_from_slice(&bytes);
            }
        }
    }
    let (body, source, packings, packed_bytes) = {
        let mut rt = Runtime::new(&weights);
        rt.set_tile_pixels(opts.codegen.tile_pixels);
        let body = emit_body(f, &layout, &mut rt, opts.codegen.trace)?;
        let packings: Vec<(usize, PackKind, u64)> =
            rt.packings().map(|(w, k, at)| (w, k.clone(), at)).collect();
        (body, rt.source(), packings, rt.packed_bytes())
    };
    append_packed(f, &layout, &packings, packed_bytes, &mut weights);
    layout.constant_size += packed_bytes;
    let header = header(f, &name, &layout, &mutable);
    let c_source = c_source(f, &name, &source, &body, opts.codegen);
    Ok(Bundle {
        name,
        c_source,
        header,
        weights,
        layout,
        mutable,
        codegen: opts.codegen,
    })
}

/// Appends the packed copies of constant weights the kernels asked for (at
/// the offsets `rt` gave them, right after the weights).
fn append_packed(
    f: &Function,
    layout: &MemoryLayout,
    packings: &[(usize, PackKind, u64)],
    packed_bytes: u64,
    weights: &mut Vec<u8>,
) {
    let layout_end = weights.len() as u64;
    weights.resize((layout_end + packed_bytes) as usize, 0);
    for &(w, ref kind, at) in packings {
        let place = layout.weight_place(w);
        let size = f.weights[w].ty.bytes() as usize;
        let at = at as usize;
        let packed = kind.pack_bytes(&weights[place.offset as usize..place.offset as usize + size]);
        weights[at..at + packed.len()].copy_from_slice(&packed);
    }
}

/// A constant weight's bytes: inline data, then `opts.weights`, then zeros
/// when allowed.
fn constant_bytes(f: &Function, i: usize, opts: &BundleOptions) -> Result<Vec<u8>, BackendError> {
    let w = &f.weights[i];
    let at = |d: Diagnostic| match (f.spans.weight(i), f.spans.function) {
        (Some(s), _) => d.at(s.line),
        (None, Some(s)) => d.at(s),
        (None, None) => d,
    };
    if let Some(init) = &w.init {
        return init_bytes(&w.ty, init).ok_or_else(|| {
            at(Diagnostic::error(format!(
                "weight `%{}`: inline data of type `{}` is not supported by the backend",
                w.name, w.ty
            )))
        });
    }
    if let Some(b) = opts.weights.get(&w.name) {
        if b.len() as u64 != w.ty.bytes() {
            return Err(at(Diagnostic::error(format!(
                "weight `%{}`: {} bytes given, `{}` needs {}",
                w.name,
                b.len(),
                w.ty,
                w.ty.bytes()
            ))));
        }
        return Ok(b.clone());
    }
    if opts.zero_missing_weights {
        return Ok(vec![0; w.ty.bytes() as usize]);
    }
    Err(at(Diagnostic::error(format!(
        "constant weight `%{}` has no `Data` and no contents were given; pass them with `--weights W.safetensors` (a tensor named after the weight)",
        w.name
    ))))
}

fn header(f: &Function, name: &str, l: &MemoryLayout, mutable: &[MutableWeight]) -> String {
    let mut h = String::new();
    h.push_str(&format!(
        "/* Bundle `{name}`, generated by glow-rs from function {}. Do not edit. */\n",
        comment_text(&f.name)
    ));
    h.push_str(&format!(
        "#ifndef {name}_H\n#define {name}_H\n\n#include <stdint.h>\n\n"
    ));
    h.push_str(&format!(
        "#define {name}_CONSTANT_MEM_SIZE {}\n#define {name}_MUTABLE_MEM_SIZE {}\n#define {name}_ACTIVATIONS_MEM_SIZE {}\n#define {name}_MEM_ALIGN {ALIGN}\n\n",
        l.constant_size, l.mutable_size, l.activations_size
    ));
    h.push_str("/* Mutable weights (inputs and outputs) in the mutable region:\n");
    for m in mutable {
        h.push_str(&format!(
            " *   {:<24} {:<28} {:>10} bytes at offset {}\n",
            comment_text(&m.name),
            comment_text(&m.ty.to_string()),
            m.ty.bytes(),
            m.offset
        ));
    }
    let eff = if l.activations_size == 0 {
        100.0
    } else {
        100.0 * l.lower_bound as f64 / l.activations_size as f64
    };
    h.push_str(&format!(
        " * Activations: naive {} bytes, lower bound {} bytes, arena {} bytes (efficiency {:.1}%).\n */\n",
        l.naive_activations, l.lower_bound, l.activations_size, eff
    ));
    for m in mutable {
        h.push_str(&format!("#define {} {}\n", m.macro_name, m.offset));
    }
    h.push_str("\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    h.push_str(&format!("{};\n", signature(name)));
    h.push_str("\n#ifdef __cplusplus\n}\n#endif\n\n");
    h.push_str(&format!("#endif /* {name}_H */\n"));
    h
}

fn signature(name: &str) -> String {
    format!("int {name}(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations)")
}

fn c_source(
    f: &Function,
    name: &str,
    kernels: &str,
    body: &[String],
    codegen: CodegenOptions,
) -> String {
    let mut c = String::new();
    c.push_str(&format!(
        "/* Bundle `{name}`, generated by glow-rs from function {}. Do not edit.\n * Plain C99 + libm; every region must be aligned to 64 bytes. */\n",
        comment_text(&f.name)
    ));
    c.push_str(
        "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n",
    );
    if f.inst_ids().any(|i| f.inst(i).opcode == Opcode::DebugPrint) {
        c.push_str("#include <stdio.h>\n");
    }
    if codegen.threads > 1 {
        c.push_str(&format!(
            "#include <pthread.h>\n#define GLOW_THREADS {}\n",
            codegen.threads
        ));
    }
    if codegen.fast_math {
        // Fast: the compiler may contract a * b + c into FMA.
        c.push_str(concat!(
            "\n#if defined(__clang__)\n#pragma STDC FP_CONTRACT ON\n",
            "#elif defined(__GNUC__)\n#pragma GCC optimize(\"fp-contract=fast\")\n#endif\n"
        ));
    } else {
        // Exact: the dot products call fmaf or FMA intrinsics; no other
        // a * b + c is contracted, whatever the flags.
        c.push_str(concat!(
            "\n#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n",
            "#elif defined(__GNUC__)\n#pragma GCC optimize(\"fp-contract=off\")\n#endif\n"
        ));
    }
    if !kernels.is_empty() {
        c.push('\n');
        c.push_str(kernels);
    }
    c.push('\n');
    if codegen.trace {
        c.push_str("void glow_trace_hook(int pos, const uint8_t *constantWeight, const uint8_t *mutableWeight, const uint8_t *activations);\n");
    }
    c.push_str(&format!("{};\n\n", signature(name)));
    let unused = "  (void)constantWeight;\n  (void)mutableWeight;\n  (void)activations;\n";
    if body.len() > 1 {
        // One function per chunk, kept apart so each is compiled alone.
        c.push_str("#if defined(__GNUC__) || defined(__clang__)\n#define GLOW_NOINLINE __attribute__((noinline))\n#else\n#define GLOW_NOINLINE\n#endif\n\n");
        for (k, chunk) in body.iter().enumerate() {
            c.push_str(&format!(
                "static GLOW_NOINLINE void {name}_part{k}(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations) {{\n{unused}{chunk}}}\n\n"
            ));
        }
    }
    c.push_str(&format!("{} {{\n", signature(name)));
    c.push_str(unused);
    if body.len() > 1 {
        for k in 0..body.len() {
            c.push_str(&format!(
                "  {name}_part{k}(constantWeight, mutableWeight, activations);\n"
            ));
        }
    } else {
        c.push_str(&body[0]);
    }
    c.push_str("  return 0;\n}\n");
    c
}

impl Bundle {
    /// Writes `NAME.c`, `NAME.h`, `NAME.weights.bin` into `dir` (created if
    /// its parent exists: `glow_ir::output::create_output_dir`), through a
    /// temporary directory inside it and renames, so a failure never leaves
    /// a partial file under a final name.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<()> {
        glow_ir::output::create_output_dir(dir)?;
        let tmp = tempfile::Builder::new().prefix(".bundle").tempdir_in(dir)?;
        let files: [(String, &[u8]); 3] = [
            (format!("{}.c", self.name), self.c_source.as_bytes()),
            (format!("{}.h", self.name), self.header.as_bytes()),
            (format!("{}.weights.bin", self.name), &self.weights),
        ];
        for (file, bytes) in &files {
            std::fs::write(tmp.path().join(file), bytes)?;
        }
        for (file, _) in &files {
            std::fs::rename(tmp.path().join(file), dir.join(file))?;
        }
        Ok(())
    }
}

/// Every identifier bundle `b` puts into a program that includes it: the
/// entry point, the include guard and size macros, the weight macros.
pub fn identifiers(b: &Bundle) -> Vec<String> {
    let mut v = vec![b.name.clone()];
    v.extend(
        crate::namer::BUNDLE_SUFFIXES
            .iter()
            .map(|s| format!("{}{s}", b.name)),
    );
    v.extend(b.mutable.iter().map(|m| m.macro_name.clone()));
    v
}

/// Bundles written together must not share an identifier (two functions
/// `a.b` and `a/b` both make bundle `a_b`; the weight macro `f_x_y` of `f`
/// is the entry point of a bundle `f_x_y`). The error is at the later
/// function's name, with the earlier one as a secondary label.
pub fn check_clashes(items: &[(&Function, &Bundle)]) -> Result<(), Diagnostic> {
    let mut owner: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (f, b)) in items.iter().enumerate() {
        for id in identifiers(b) {
            let Some(&j) = owner.get(&id) else {
                owner.insert(id, i);
                continue;
            };
            let (g, other) = items[j];
            let msg = if id == b.name && id == other.name {
                format!(
                    "functions `{}` and `{}` both make a bundle named `{id}`",
                    g.name, f.name
                )
            } else {
                format!(
                    "bundle `{}` defines `{id}`, which bundle `{}` defines too; rename one of the functions",
                    b.name, other.name
                )
            };
            let mut d = Diagnostic::error(msg);
            if let Some(s) = f.spans.function {
                d = d.at_labelled(s, "this function");
            }
            if let Some(s) = g.spans.function {
                d = d.with_secondary(s, "clashes with this one");
            }
            return Err(d);
        }
    }
    Ok(())
}
