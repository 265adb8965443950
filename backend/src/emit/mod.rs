//! The C emitter: one block per instruction, each a loop nest with the
//! shapes as constants. Buffers are `region + byte offset` pointers from the
//! memory layout; a tensorview is just such a pointer. Kernels look their
//! operands and members up by the names in the opcode table; the one `match`
//! over opcodes is `emit_inst`, which picks the kernel family.

mod detection;
mod elementwise;
mod grad;
mod index;
mod linalg;
mod loss;
mod movement;
mod norm_grad;
mod pairwise;
mod quant;
mod rearrange;
pub mod runtime;
mod sort;
mod sparse;
mod spatial;

pub use grad::ConvGradGeom;
pub use linalg::split;
pub use runtime::Runtime;
pub use spatial::{Conv3d, Window};

use crate::error::{inst_error, unsupported, BackendError};
use crate::memory::{MemoryLayout, Region};
use crate::namer::comment_text;
use glow_ir::{ElemKind, Function, InstData, InstId, Opcode, Type};

/// Indented C text.
#[derive(Default)]
pub struct CWriter {
    pub out: String,
    indent: usize,
}

impl CWriter {
    pub fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }
    /// `text {` and indent.
    pub fn open(&mut self, text: &str) {
        if text.is_empty() {
            self.line("{");
        } else {
            self.line(&format!("{text} {{"));
        }
        self.indent += 1;
    }
    pub fn close(&mut self) {
        self.indent = self.indent.saturating_sub(1);
        self.line("}");
    }
    /// `for (size_t VAR = 0; VAR < N; VAR++) {`.
    pub fn for_loop(&mut self, var: &str, n: u64) {
        self.open(&format!("for (size_t {var} = 0; {var} < {n}u; {var}++)"));
    }
}

/// What a kernel emitter sees.
pub struct KCtx<'a, 'c> {
    pub f: &'a Function,
    pub id: InstId,
    pub inst: &'a InstData,
    pub mem: &'a MemoryLayout,
    pub w: &'a mut CWriter,
    pub rt: &'a mut Runtime<'c>,
}

impl KCtx<'_, '_> {
    pub fn err(&self, msg: impl Into<String>) -> BackendError {
        inst_error(self.f, self.id, msg)
    }

    pub fn unsupported(&self, ty: &Type) -> BackendError {
        unsupported(self.f, self.id, ty)
    }

    /// The type of the operand called `name` in the opcode table.
    pub fn ty(&self, name: &str) -> Result<Type, BackendError> {
        let op = self
            .inst
            .operand_named(name)
            .ok_or_else(|| self.err(format!("missing operand {name}")))?;
        self.f
            .value_type(op.value)
            .cloned()
            .ok_or_else(|| self.err(format!("operand {name} is not a buffer")))
    }

    /// Declares `<ctype> *<name> = (<ctype> *)(region + offset);` for the
    /// operand called `name` (read-only operands get `const`).
    pub fn decl(&mut self, name: &str, ctype: &str) -> Result<(), BackendError> {
        let info = self.inst.opcode.info();
        let k = info
            .operand_index(name)
            .ok_or_else(|| self.err(format!("no operand {name}")))?;
        let op = self
            .inst
            .operands
            .get(k)
            .ok_or_else(|| self.err(format!("missing operand {name}")))?;
        let place = self
            .mem
            .place(self.f, op.value)
            .ok_or_else(|| self.err(format!("operand {name} has no memory")))?;
        let cq = if op.kind.writes() { "" } else { "const " };
        let base = match place.region {
            Region::Constant => "constantWeight",
            Region::Mutable => "mutableWeight",
            Region::Activations => "activations",
        };
        self.w.line(&format!(
            "{cq}{ctype} *{name} = ({cq}{ctype} *)({base} + {});",
            place.offset
        ));
        Ok(())
    }

    /// Declares the operand list `name` as an array of pointers,
    /// `<ctype> *const <name>[] = { ... };` (`const` data when read-only),
    /// and gives its length; an empty list is an error (C has no empty
    /// initializer; the shape rules require one operand at least).
    pub fn decl_list(&mut self, name: &str, ctype: &str) -> Result<usize, BackendError> {
        let range = self
            .inst
            .operand_list(name)
            .ok_or_else(|| self.err(format!("no operand list {name}")))?;
        let mut cq = "const ";
        let mut items = Vec::with_capacity(range.len());
        for k in range {
            let op = self.inst.operands[k];
            let place = self
                .mem
                .place(self.f, op.value)
                .ok_or_else(|| self.err(format!("operand {k} has no memory")))?;
            if op.kind.writes() {
                cq = "";
            }
            let base = match place.region {
                Region::Constant => "constantWeight",
                Region::Mutable => "mutableWeight",
                Region::Activations => "activations",
            };
            items.push((base, place.offset));
        }
        if items.is_empty() {
            return Err(self.err(format!("the operand list {name} is empty")));
        }
        let list: Vec<String> = items
            .iter()
            .map(|(base, off)| format!("({cq}{ctype} *)({base} + {off})"))
            .collect();
        self.w.line(&format!(
            "{cq}{ctype} *const {name}[] = {{{}}};",
            list.join(", ")
        ));
        Ok(items.len())
    }

    /// The type of operand `k` (by position).
    pub fn ty_at(&self, k: usize) -> Result<Type, BackendError> {
        let op = self
            .inst
            .operands
            .get(k)
            .ok_or_else(|| self.err(format!("missing operand {k}")))?;
        self.f
            .value_type(op.value)
            .cloned()
            .ok_or_else(|| self.err(format!("operand {k} is not a buffer")))
    }

    /// The weight index of operand `name` when it is a constant weight itself
    /// (not a view), whose contents the bundle knows at emit time.
    pub fn const_weight(&self, name: &str) -> Option<usize> {
        let op = self.inst.operand_named(name)?;
        match op.value {
            glow_ir::Value::Weight(w)
                if self.f.weight(w).mutability == glow_ir::Mutability::Const =>
            {
                Some(w.index())
            }
            _ => None,
        }
    }

    /// The members, through the accessor the interpreter uses too.
    pub fn m(&self) -> crate::members::Members<'_> {
        crate::members::Members::new(self.f, self.id)
    }

    /// A member's value; a missing one is an error naming it.
    pub fn member<K: glow_ir::member::Kind>(
        &self,
        key: glow_ir::member::Key<K>,
    ) -> Result<K::Out<'_>, BackendError> {
        self.m().get(key)
    }

    /// Fails with the unsupported-type error unless `ty` is `float`.
    pub fn require_f32(&self, ty: &Type) -> Result<(), BackendError> {
        if ty.elem == ElemKind::Float {
            Ok(())
        } else {
            Err(self.unsupported(ty))
        }
    }

    /// Every named operand is `float`.
    pub fn require_f32s(&self, names: &[&str]) -> Result<(), BackendError> {
        for n in names {
            self.require_f32(&self.ty(n)?)?;
        }
        Ok(())
    }
}

/// The statements of the entry point's body, one block per instruction.
/// Instructions per chunk of the body: each chunk becomes its own C
/// function, so the compiler's time stays linear in the instruction count.
pub const CHUNK: usize = 64;

/// The statements of the entry point's body, one block per instruction, in
/// chunks of at most [`CHUNK`] instructions.
pub fn emit_body(
    f: &Function,
    mem: &MemoryLayout,
    rt: &mut Runtime<'_>,
    trace: bool,
) -> Result<Vec<String>, BackendError> {
    let mut chunks = Vec::new();
    let mut in_chunk = 0;
    let mut w = CWriter {
        out: String::new(),
        indent: 1,
    };
    for (pos, id) in f.inst_ids().enumerate() {
        let inst = f.inst(id);
        if inst.opcode.info().family == glow_ir::opcode::Family::Memory {
            continue;
        }
        w.line(&format!(
            "/* {pos} %{} = {} */",
            comment_text(&inst.name),
            inst.opcode.name()
        ));
        w.open("");
        let mut ctx = KCtx {
            f,
            id,
            inst,
            mem,
            w: &mut w,
            rt,
        };
        emit_inst(&mut ctx)?;
        w.close();
        if trace {
            w.line(&format!(
                "glow_trace_hook({pos}, constantWeight, mutableWeight, activations);"
            ));
        }
        in_chunk += 1;
        if in_chunk == CHUNK {
            chunks.push(std::mem::take(&mut w.out));
            in_chunk = 0;
        }
    }
    if !w.out.is_empty() || chunks.is_empty() {
        chunks.push(w.out);
    }
    Ok(chunks)
}

/// The kernel of each family (the table's `family` column); exhaustive, so
/// a new family must get a kernel here.
fn emit_inst(c: &mut KCtx) -> Result<(), BackendError> {
    use glow_ir::opcode::Family::*;
    let quantized = crate::quant::is_quantized(c.f, c.id);
    let op = c.inst.opcode;
    match op.info().family {
        Memory => Ok(()),
        Copy => movement::copy(c),
        Splat => movement::splat(c),
        Transpose => movement::transpose(c),
        Insert => movement::insert(c),
        Extract => movement::extract(c),
        Gather => movement::gather(c),
        GatherElements => index::gather_elements(c),
        GatherND => index::gather_nd(c),
        ScatterElements => index::scatter_elements(c),
        ScatterND => index::scatter_nd(c),
        OneHot => index::one_hot(c),
        ArgMinMax => index::arg_min_max(c),
        TopK => sort::topk(c),
        Rearrange => rearrange::emit(c),
        DebugPrint => movement::debugprint(c),
        Binary if quantized && crate::quant::has_integer_binary(op) => quant::binary(c),
        Binary => elementwise::binary(c),
        Compare => elementwise::cmplte(c),
        Logical => elementwise::logical(c),
        Select => elementwise::select(c),
        Unary if quantized && matches!(op, Opcode::Relu | Opcode::Clip) => quant::activation(c),
        Unary => elementwise::unary(c),
        Quantization if op == Opcode::RescaleQuantized => quant::activation(c),
        Quantization => elementwise::quantization(c),
        Convert => elementwise::convert(c),
        LookupTable => quant::lookup_table(c),
        BatchedAdd if quantized => quant::binary(c),
        BatchedAdd => linalg::batched_add(c),
        Reduce => linalg::batched_reduce_add(c),
        MatrixMultiply if quantized => quant::matrix_multiply(c),
        MatrixMultiply => match c.inst.opcode {
            Opcode::FullyConnected => linalg::fully_connected(c),
            Opcode::BatchMatMul => linalg::batch_matmul(c),
            _ => linalg::matmul(c),
        },
        SoftMax => linalg::softmax(c),
        BatchNorm => linalg::batchnorm(c),
        LayerNorm => linalg::layernorm(c),
        Lrn => linalg::lrn(c),
        Convolution if quantized => quant::convolution(c),
        Convolution => spatial::convolution(c),
        Convolution3D => spatial::convolution3d(c),
        ConvTranspose => spatial::conv_transpose(c),
        Pool if quantized => quant::pool(c),
        Pool => spatial::pool(c),
        ActivationGrad => loss::activation_grad(c),
        SoftMaxGrad => loss::softmax_grad(c),
        Loss => loss::cross_entropy_loss(c),
        LossGrad => loss::cross_entropy_loss_grad(c),
        Sgd => loss::sgd(c),
        ConvolutionGrad => grad::convolution_grad(c),
        PoolWithArgmax => grad::max_pool_with_argmax(c),
        PoolGrad => grad::pool_grad(c),
        LrnGrad => norm_grad::lrn_grad(c),
        Sparse => sparse::emit(c),
        Detection => detection::emit(c),
        NoKernel => Err(c.err(crate::error::NO_KERNEL)),
        BatchNormGrad => norm_grad::batch_norm_grad(c),
        Predicate => elementwise::predicate(c),
        IntUnary => elementwise::int_unary(c),
        BceWithLogits => loss::bce_with_logits(c),
        PairwiseDot => pairwise::pairwise_dot(c),
        PairwiseDotGrad => pairwise::pairwise_dot_grad(c),
        ThresholdGrad => pairwise::threshold_grad(c),
        DynamicQuantized => quant::dynamic_fully_connected(c),
        Profile => quant::quantization_profile(c),
    }
}

/// `i0 * s0 + i1 * s1 + ...` over loop variables `i0..` with constant strides.
pub fn linear(vars: &[String], strides: &[u64]) -> String {
    let terms: Vec<String> = vars
        .iter()
        .zip(strides)
        .filter(|(_, &s)| s != 0)
        .map(|(v, &s)| {
            if s == 1 {
                v.clone()
            } else {
                format!("{v} * {s}u")
            }
        })
        .collect();
    if terms.is_empty() {
        "0".to_string()
    } else {
        terms.join(" + ")
    }
}

/// Opens one loop per dimension (`i0`, `i1`, ...) and returns the variables;
/// the caller closes `dims.len()` loops.
pub fn open_nest(w: &mut CWriter, dims: &[u64], prefix: &str) -> Vec<String> {
    let vars: Vec<String> = (0..dims.len()).map(|k| format!("{prefix}{k}")).collect();
    for (v, &d) in vars.iter().zip(dims) {
        w.for_loop(v, d);
    }
    vars
}

pub fn close_nest(w: &mut CWriter, n: usize) {
    for _ in 0..n {
        w.close();
    }
}
