//! The reference interpreter: the oracle the C kernels are tested against.
//! It runs over the very memory layout the bundle uses (three byte regions,
//! tensorviews as offsets), so aliasing behaves as in C. Each kernel reads
//! its inputs into plain vectors, computes with obviously-correct loops in
//! the same operation order as the C text, and writes the result back.

/// Runs a block compiled a second time with the CPU's FMA instructions, when
/// it has them: `mul_add` is then one `vfmadd` instead of a call to libm's
/// `fmaf`. Both are the same single rounding, so the bits do not change.
/// The block is expanded twice: once as a closure called once, which LLVM
/// inlines into the FMA-enabled function, once in place. It must not `return`.
macro_rules! with_fma {
    ($body:block) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "fma")]
            unsafe fn fast<T>(f: impl FnOnce() -> T) -> T {
                f()
            }
            if std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has FMA, checked just above.
                unsafe { fast(|| $body) }
            } else {
                $body
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $body
        }
    }};
}

mod detection;
mod grad;
mod index;
mod kernels;
mod loss;
mod norm_grad;
mod pairwise;
mod quant;
mod rearrange;
mod sort;
mod sparse;

pub use detection::{mfcc_log_zero, BBOX_XFORM_CLIP};
pub use quant::filter_strides;

use crate::error::{inst_error, unsupported, BackendError};
use crate::memory::{MemoryLayout, Region};
use glow_ir::{ElemKind, Function, InstData, InstId, Opcode, Type};

/// The three regions a bundle's entry point receives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    pub constant: Vec<u8>,
    pub mutable: Vec<u8>,
    pub activations: Vec<u8>,
}

impl Memory {
    /// Zero-filled regions of the layout's sizes for function `name`, or
    /// which region could not be allocated.
    pub fn try_new(layout: &MemoryLayout, name: &str) -> Result<Memory, String> {
        let region = |bytes: u64, what: &str| {
            crate::limits::zeroed(bytes, || format!("the {what} of `{name}`"))
        };
        Ok(Memory {
            constant: region(layout.constant_size, "constant weights")?,
            mutable: region(layout.mutable_size, "mutable weights")?,
            activations: region(layout.activations_size, "activations")?,
        })
    }

    /// Zero-filled regions of the layout's sizes.
    pub fn new(layout: &MemoryLayout) -> Memory {
        Memory {
            constant: vec![0; layout.constant_size as usize],
            mutable: vec![0; layout.mutable_size as usize],
            activations: vec![0; layout.activations_size as usize],
        }
    }

    pub fn region(&self, r: Region) -> &[u8] {
        match r {
            Region::Constant => &self.constant,
            Region::Mutable => &self.mutable,
            Region::Activations => &self.activations,
        }
    }

    pub fn region_mut(&mut self, r: Region) -> &mut Vec<u8> {
        match r {
            Region::Constant => &mut self.constant,
            Region::Mutable => &mut self.mutable,
            Region::Activations => &mut self.activations,
        }
    }
}

/// Runs `f` over `mem`; `debugprint` output is appended to `stdout`.
pub fn run(
    f: &Function,
    layout: &MemoryLayout,
    mem: &mut Memory,
    stdout: &mut String,
) -> Result<(), BackendError> {
    run_observed(f, layout, mem, stdout, &mut |_, _| {})
}

/// [`run`], calling `after(position, memory)` after each instruction
/// (`glow-run --dump-tensors` reads the buffers it wrote there).
pub fn run_observed(
    f: &Function,
    layout: &MemoryLayout,
    mem: &mut Memory,
    stdout: &mut String,
    after: &mut dyn FnMut(usize, &Memory),
) -> Result<(), BackendError> {
    for (pos, id) in f.inst_ids().enumerate() {
        let inst = f.inst(id);
        let mut x = Exec {
            f,
            id,
            inst,
            layout,
            mem,
            stdout,
        };
        kernels::exec(&mut x)?;
        after(pos, mem);
    }
    Ok(())
}

/// One instruction's view of the machine.
pub struct Exec<'a> {
    pub f: &'a Function,
    pub id: InstId,
    pub inst: &'a InstData,
    pub layout: &'a MemoryLayout,
    pub mem: &'a mut Memory,
    pub stdout: &'a mut String,
}

impl Exec<'_> {
    /// The members, through the accessor the C emitter uses too.
    pub fn m(&self) -> crate::members::Members<'_> {
        crate::members::Members::new(self.f, self.id)
    }

    pub fn err(&self, msg: impl Into<String>) -> BackendError {
        inst_error(self.f, self.id, msg)
    }

    pub fn unsupported(&self, ty: &Type) -> BackendError {
        unsupported(self.f, self.id, ty)
    }

    pub fn opcode(&self) -> Opcode {
        self.inst.opcode
    }

    /// An empty vector with room for `n` elements of a temporary of this
    /// instruction, or "cannot allocate ..." naming it: the sizes come from
    /// the input, so running out of memory is an error, not an abort.
    pub fn room<T>(&self, n: usize) -> Result<Vec<T>, BackendError> {
        let mut v = Vec::new();
        v.try_reserve_exact(n).map_err(|_| {
            let bytes = (n as u64).saturating_mul(std::mem::size_of::<T>() as u64);
            self.err(format!(
                "cannot allocate {} for a temporary of the interpreter",
                crate::limits::human_bytes(bytes)
            ))
        })?;
        Ok(v)
    }

    /// `n` copies of `value`, allocated as [`Exec::room`] does.
    pub fn scratch<T: Clone>(&self, n: usize, value: T) -> Result<Vec<T>, BackendError> {
        let mut v = self.room(n)?;
        v.resize(n, value);
        Ok(v)
    }

    /// Type and byte range of the operand called `name`.
    fn locate(&self, name: &str) -> Result<(Type, Region, usize), BackendError> {
        let v = self
            .inst
            .operand_named(name)
            .ok_or_else(|| self.err(format!("missing operand {name}")))?
            .value;
        self.locate_value(v, name)
    }

    /// The positions of the operands of the table's operand list `name`.
    pub fn list(&self, name: &str) -> Result<std::ops::Range<usize>, BackendError> {
        self.inst
            .operand_list(name)
            .ok_or_else(|| self.err(format!("missing operand list {name}")))
    }

    /// Type and byte range of operand `k` (by position).
    fn locate_at(&self, k: usize) -> Result<(Type, Region, usize), BackendError> {
        let op = self
            .inst
            .operands
            .get(k)
            .ok_or_else(|| self.err(format!("missing operand {k}")))?;
        self.locate_value(op.value, &format!("{k}"))
    }

    /// Operand `k`'s elements as f32 (it must be `float`).
    pub fn f32s_at(&self, k: usize) -> Result<Vec<f32>, BackendError> {
        let (ty, r, off) = self.locate_at(k)?;
        if ty.elem != ElemKind::Float {
            return Err(self.unsupported(&ty));
        }
        let b = &self.mem.region(r)[off..off + ty.bytes() as usize];
        let mut out = self.room(ty.size() as usize)?;
        out.extend((0..ty.size() as usize).map(|i| crate::elem::read_f32(b, i)));
        Ok(out)
    }

    /// Writes `v` to operand `k` (a `float` one).
    pub fn put_f32s_at(&mut self, k: usize, v: &[f32]) -> Result<(), BackendError> {
        let (ty, r, off) = self.locate_at(k)?;
        if ty.elem != ElemKind::Float {
            return Err(self.unsupported(&ty));
        }
        let b = &mut self.mem.region_mut(r)[off..off + ty.bytes() as usize];
        for (i, x) in v.iter().enumerate() {
            crate::elem::write_f32(b, i, *x);
        }
        Ok(())
    }

    /// Operand `k`'s raw element bits (any kind).
    pub fn bits_at(&self, k: usize) -> Result<Vec<u64>, BackendError> {
        let (ty, r, off) = self.locate_at(k)?;
        let n = ty.elem.bytes() as usize;
        let b = &self.mem.region(r)[off..off + ty.bytes() as usize];
        let mut out = self.room(ty.size() as usize)?;
        out.extend(b.chunks(n).map(|c| {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(c);
            u64::from_le_bytes(a)
        }));
        Ok(out)
    }

    pub fn ty_at(&self, k: usize) -> Result<Type, BackendError> {
        Ok(self.locate_at(k)?.0)
    }

    fn locate_value(
        &self,
        v: glow_ir::Value,
        name: &str,
    ) -> Result<(Type, Region, usize), BackendError> {
        let ty = self
            .f
            .value_type(v)
            .cloned()
            .ok_or_else(|| self.err(format!("operand {name} is not a buffer")))?;
        let p = self
            .layout
            .place(self.f, v)
            .ok_or_else(|| self.err(format!("operand {name} has no memory")))?;
        let end = p.offset + ty.bytes();
        if end > self.mem.region(p.region).len() as u64 {
            return Err(self.err(format!("operand {name} lies outside its region")));
        }
        Ok((ty, p.region, p.offset as usize))
    }

    pub fn ty(&self, name: &str) -> Result<Type, BackendError> {
        Ok(self.locate(name)?.0)
    }

    fn bytes(&self, name: &str) -> Result<(Type, &[u8]), BackendError> {
        let (ty, r, off) = self.locate(name)?;
        let n = ty.bytes() as usize;
        Ok((ty, &self.mem.region(r)[off..off + n]))
    }

    /// The operand's elements as f32 (the operand must be `float`).
    pub fn f32s(&self, name: &str) -> Result<Vec<f32>, BackendError> {
        let (ty, b) = self.bytes(name)?;
        if ty.elem != ElemKind::Float {
            return Err(self.unsupported(&ty));
        }
        let mut out = self.room(ty.size() as usize)?;
        out.extend((0..ty.size() as usize).map(|i| crate::elem::read_f32(b, i)));
        Ok(out)
    }

    /// The operand's elements as integers (integer-stored kinds).
    pub fn ints(&self, name: &str) -> Result<Vec<i64>, BackendError> {
        let (ty, b) = self.bytes(name)?;
        if !crate::elem::is_integer(ty.elem) {
            return Err(self.unsupported(&ty));
        }
        let mut out = self.room(ty.size() as usize)?;
        out.extend((0..ty.size() as usize).map(|i| crate::elem::read_int(ty.elem, b, i)));
        Ok(out)
    }

    /// The operand's raw element bits (any kind).
    pub fn bits(&self, name: &str) -> Result<Vec<u64>, BackendError> {
        let (ty, b) = self.bytes(name)?;
        let n = ty.elem.bytes() as usize;
        let mut out = self.room(ty.size() as usize)?;
        out.extend(b.chunks(n).map(|c| {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(c);
            u64::from_le_bytes(a)
        }));
        Ok(out)
    }

    fn dest(&mut self, name: &str) -> Result<(Type, &mut [u8]), BackendError> {
        let (ty, r, off) = self.locate(name)?;
        let n = ty.bytes() as usize;
        Ok((ty, &mut self.mem.region_mut(r)[off..off + n]))
    }

    pub fn put_f32s(&mut self, name: &str, v: &[f32]) -> Result<(), BackendError> {
        let (ty, b) = self.dest(name)?;
        if ty.elem != ElemKind::Float {
            return Err(unsupported(self.f, self.id, &ty));
        }
        for (i, x) in v.iter().enumerate() {
            crate::elem::write_f32(b, i, *x);
        }
        Ok(())
    }

    pub fn put_ints(&mut self, name: &str, v: &[i64]) -> Result<(), BackendError> {
        let (ty, b) = self.dest(name)?;
        for (i, x) in v.iter().enumerate() {
            crate::elem::write_int(ty.elem, b, i, *x);
        }
        Ok(())
    }

    pub fn put_bits(&mut self, name: &str, v: &[u64]) -> Result<(), BackendError> {
        let (ty, b) = self.dest(name)?;
        let n = ty.elem.bytes() as usize;
        for (i, x) in v.iter().enumerate() {
            b[i * n..i * n + n].copy_from_slice(&x.to_le_bytes()[..n]);
        }
        Ok(())
    }
}
