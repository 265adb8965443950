//! The program generator: random `.gir` functions that verify by
//! construction. It keeps a model of every buffer (type, role, origin,
//! whether its origin is live and fully defined) and only emits an
//! instruction whose operands the model says are valid: shapes from the
//! opcode's shape rule, inputs fully written before they are read (so a
//! pass that reorders or shares memory can never change what a read sees),
//! outputs that never overlap an input except an in-place pair, and every
//! alloc deallocated.

use crate::rng::Rng;
use glow_ir::opcode::Family;
use glow_ir::types::{format_f32, format_float};
use glow_ir::{ElemKind, Opcode, Type};
use std::collections::BTreeSet;
use std::fmt::Write;

/// How the generator's program came to be, for the oracle's figures.
#[derive(Clone, Debug)]
pub struct Program {
    pub text: String,
    /// Opcodes the program uses.
    pub opcodes: BTreeSet<&'static str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Const,
    Mutable,
    Alloc,
    View,
}

#[derive(Clone, Debug)]
struct Buf {
    name: String,
    ty: Type,
    role: Role,
    /// Index of the weight or alloc at the end of the view chain (itself
    /// for those).
    origin: usize,
    /// First byte inside the origin.
    start: u64,
    /// Origins only: still allocated (weights always are).
    live: bool,
    /// Origins only: every byte written since the alloc (weights: always).
    defined: bool,
    /// Weights: the inline `Data` text.
    data: Option<String>,
}

/// The function name every generated program uses.
pub const FUNCTION_NAME: &str = "smith";

/// Generates the program of `seed`.
pub fn generate(seed: u64) -> Program {
    generate_from(&mut Rng::new(seed))
}

/// Generates a program from a stream (the fuzz target feeds bytes).
pub fn generate_from(rng: &mut Rng) -> Program {
    let mut g = Gen {
        rng,
        bufs: Vec::new(),
        code: Vec::new(),
        counter: 0,
        opcodes: BTreeSet::new(),
    };
    let steps = g.rng.range(2, 24);
    for _ in 0..steps {
        g.step();
        if g.rng.chance(25) {
            g.dealloc_some();
        }
    }
    g.finish();
    let text = g.text();
    Program {
        text,
        opcodes: g.opcodes,
    }
}

struct Gen<'r> {
    rng: &'r mut Rng,
    bufs: Vec<Buf>,
    code: Vec<String>,
    counter: u32,
    opcodes: BTreeSet<&'static str>,
}

/// Kernels, strides, pads, dilation and input height/width of a window.
type Window = ([u64; 2], [u64; 2], [u64; 4], [u64; 2], [u64; 2]);

/// Operand text: (kind word, buffer index).
type Ops = Vec<(&'static str, usize)>;

const QUANT_BASES: [u8; 4] = [0, 1, 2, 3];

impl Gen<'_> {
    // ---- names and types ----

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        // Now and then a name that needs quoting, for the printer and the
        // C namer.
        if self.rng.chance(4) {
            format!("\"{prefix}/{}:0\"", self.counter)
        } else {
            format!("{prefix}{}", self.counter)
        }
    }

    fn dims(&mut self, rank: usize) -> Vec<u64> {
        (0..rank)
            .map(|_| {
                if self.rng.chance(10) {
                    self.rng.range(5, 7) as u64
                } else {
                    self.rng.range(1, 4) as u64
                }
            })
            .collect()
    }

    fn quant_kind(&mut self, base: u8) -> ElemKind {
        let scale = *self
            .rng
            .pick(&[0.5f32, 0.25, 0.125, 0.0625, 0.1, 0.03125, 0.01, 1.0]);
        match base {
            0 => ElemKind::Int8Q {
                scale,
                offset: self.rng.range(-10, 10) as i32,
            },
            1 => ElemKind::UInt8Q {
                scale,
                offset: self.rng.range(0, 20) as i32,
            },
            2 => ElemKind::Int16Q {
                scale,
                offset: self.rng.range(-100, 100) as i32,
            },
            _ => ElemKind::Int32Q {
                scale,
                offset: self.rng.range(-100, 100) as i32,
            },
        }
    }

    /// Any element kind (what the data-movement opcodes take).
    fn any_kind(&mut self) -> ElemKind {
        match self.rng.below(14) {
            0..=3 => ElemKind::Float,
            4 => ElemKind::Float16,
            5 => ElemKind::BFloat16,
            6 => ElemKind::Float64,
            7 => ElemKind::Index32,
            8 => ElemKind::Index64,
            9 => ElemKind::Bool,
            10 => ElemKind::Int8,
            11 => ElemKind::UInt8,
            _ => {
                let b = *self.rng.pick(&QUANT_BASES);
                self.quant_kind(b)
            }
        }
    }

    /// Kinds the backend computes element-wise arithmetic on.
    fn arith_kind(&mut self) -> ElemKind {
        match self.rng.below(8) {
            0 => ElemKind::Index32,
            1 => ElemKind::Index64,
            2 => ElemKind::Int8,
            3 => ElemKind::UInt8,
            _ => ElemKind::Float,
        }
    }

    // ---- the buffer model ----

    fn alive(&self, b: usize) -> bool {
        self.bufs[self.bufs[b].origin].live
    }

    fn readable(&self, b: usize) -> bool {
        let o = &self.bufs[self.bufs[b].origin];
        o.live && o.defined
    }

    fn writable(&self, b: usize) -> bool {
        self.alive(b) && self.bufs[self.bufs[b].origin].role != Role::Const
    }

    /// Whether writing `b` writes every byte of its origin.
    fn whole(&self, b: usize) -> bool {
        let buf = &self.bufs[b];
        buf.start == 0 && buf.ty.bytes() == self.bufs[buf.origin].ty.bytes()
    }

    fn push(&mut self, name: String, ty: Type, role: Role, origin: Option<(usize, u64)>) -> usize {
        let i = self.bufs.len();
        let (origin, start) = origin.unwrap_or((i, 0));
        self.bufs.push(Buf {
            name,
            ty,
            role,
            origin,
            start,
            live: true,
            defined: matches!(role, Role::Const | Role::Mutable),
            data: None,
        });
        i
    }

    fn emit(&mut self, name: &str, opcode: &'static str, ops: &Ops, members: &str) {
        self.opcodes.insert(opcode);
        let mut line = format!("%{name} = {opcode}");
        for (k, (kind, b)) in ops.iter().enumerate() {
            let sep = if k == 0 { " " } else { ", " };
            let _ = write!(line, "{sep}{kind} %{}", self.bufs[*b].name);
        }
        if !members.is_empty() {
            let _ = write!(line, " {{ {members} }}");
        }
        self.code.push(line);
    }

    // ---- weights and their data ----

    fn data(&mut self, ty: &Type, positive: bool) -> Option<String> {
        let n = ty.size();
        if matches!(ty.elem, ElemKind::Float16 | ElemKind::BFloat16) {
            return None;
        }
        let splat = self.rng.chance(15);
        let count = if splat { 1 } else { n };
        let mut items = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let mut s = String::new();
            match ty.elem {
                ElemKind::Float => {
                    let v = self.rng.unit() * 2.0;
                    format_f32(if positive { v.abs() + 0.125 } else { v }, &mut s);
                }
                ElemKind::Float64 => format_float(self.rng.unit() as f64 * 3.0, &mut s),
                ElemKind::Index32 | ElemKind::Index64 => {
                    let _ = write!(s, "{}", self.rng.range(-3, 8));
                }
                ElemKind::Bool => s.push_str(if self.rng.chance(50) { "true" } else { "false" }),
                k => {
                    let (lo, hi) = k.quant_range().or(k.int_range()).unwrap_or((0, 0));
                    let _ = write!(s, "{}", self.rng.range(lo.max(-128), hi.min(255)));
                }
            }
            items.push(s);
        }
        Some(if splat {
            // `splat(...)` takes a number, also for bool.
            let v = match items[0].as_str() {
                "true" => "1",
                "false" => "0",
                v => v,
            };
            format!("splat({v})")
        } else {
            format!("[{}]", items.join(", "))
        })
    }

    /// A new weight: a mutable input, or a constant with inline data or
    /// without (the oracle fills it from its seed).
    fn new_weight(&mut self, ty: &Type, mutable: bool, positive: bool) -> usize {
        let role = if mutable { Role::Mutable } else { Role::Const };
        let name = self.fresh(if mutable { "in" } else { "w" });
        let b = self.push(name, ty.clone(), role, None);
        let with_data = !mutable && (positive || self.rng.chance(50));
        self.bufs[b].data = if with_data {
            self.data(ty, positive)
        } else {
            None
        };
        b
    }

    fn text(&self) -> String {
        let mut out = format!("function {FUNCTION_NAME}\ndeclare {{\n");
        for w in self
            .bufs
            .iter()
            .filter(|b| matches!(b.role, Role::Const | Role::Mutable))
        {
            let m = if w.role == Role::Const {
                "const"
            } else {
                "mutable"
            };
            let _ = write!(out, "  %{} = WeightVar {} {m}", w.name, w.ty);
            if let Some(d) = &w.data {
                let _ = write!(out, " {{ Data: {d} }}");
            }
            out.push('\n');
        }
        out.push_str("}\n\ncode {\n");
        for line in &self.code {
            let _ = writeln!(out, "  {line}");
        }
        out.push_str("}\n");
        out
    }

    // ---- operands ----

    /// A view of `src` with type `ty` at a random element offset where it
    /// fits (`None` when it does not fit at all).
    fn view_of(&mut self, src: usize, ty: &Type) -> Option<usize> {
        let s = self.bufs[src].clone();
        let eb = s.ty.elem.bytes();
        let (src_bytes, view_bytes) = (s.ty.bytes(), ty.bytes());
        if view_bytes > src_bytes {
            return None;
        }
        let last = (src_bytes - view_bytes) / eb;
        let lin = if self.rng.chance(40) {
            0
        } else {
            self.rng.below(last + 1)
        };
        // Offsets are the row-major coordinates of the linear start.
        let strides = s.ty.strides();
        let mut rest = lin;
        let offsets: Vec<String> = strides
            .iter()
            .map(|&st| {
                let o = rest / st;
                rest %= st;
                o.to_string()
            })
            .collect();
        let name = self.fresh("v");
        let o = self.push(
            name.clone(),
            ty.clone(),
            Role::View,
            Some((s.origin, s.start + lin * eb)),
        );
        let members = format!("Ty: {ty}, Offsets: [{}]", offsets.join(", "));
        self.emit(&name, "tensorview", &vec![("@in", src)], &members);
        Some(o)
    }

    /// A buffer of type `ty` whose contents are defined: an existing one,
    /// a view of one, or a new weight.
    fn input(&mut self, ty: &Type) -> usize {
        let same: Vec<usize> = (0..self.bufs.len())
            .filter(|&b| self.readable(b) && self.bufs[b].ty == *ty)
            .collect();
        if !same.is_empty() && self.rng.chance(65) {
            return *self.rng.pick(&same);
        }
        if self.rng.chance(12) {
            let bigger: Vec<usize> = (0..self.bufs.len())
                .filter(|&b| {
                    self.readable(b)
                        && self.bufs[b].ty.elem == ty.elem
                        && self.bufs[b].ty.bytes() >= ty.bytes()
                })
                .collect();
            if !bigger.is_empty() {
                let src = *self.rng.pick(&bigger);
                if let Some(v) = self.view_of(src, ty) {
                    return v;
                }
            }
        }
        let mutable = self.rng.chance(35);
        self.new_weight(ty, mutable, false)
    }

    fn overlaps_any(&self, b: usize, others: &[usize]) -> bool {
        let o = self.bufs[b].origin;
        others.iter().any(|&x| self.bufs[x].origin == o)
    }

    /// A buffer of type `ty` to write, whose origin is none of `inputs`'.
    fn output(&mut self, ty: &Type, inputs: &[usize]) -> usize {
        let roll = self.rng.below(100);
        if roll < 30 {
            let reuse: Vec<usize> = (0..self.bufs.len())
                .filter(|&b| {
                    self.bufs[b].role == Role::Alloc
                        && self.bufs[b].live
                        && self.bufs[b].ty == *ty
                        && !self.overlaps_any(b, inputs)
                })
                .collect();
            if !reuse.is_empty() {
                return *self.rng.pick(&reuse);
            }
        } else if roll < 40 {
            let hosts: Vec<usize> = (0..self.bufs.len())
                .filter(|&b| {
                    self.bufs[b].origin == b
                        && self.writable(b)
                        && self.bufs[b].ty.elem == ty.elem
                        && self.bufs[b].ty.bytes() >= ty.bytes()
                        && !self.overlaps_any(b, inputs)
                })
                .collect();
            if !hosts.is_empty() {
                let host = *self.rng.pick(&hosts);
                if let Some(v) = self.view_of(host, ty) {
                    return v;
                }
            }
        } else if roll < 55 {
            let outs: Vec<usize> = (0..self.bufs.len())
                .filter(|&b| {
                    self.bufs[b].role == Role::Mutable
                        && self.bufs[b].ty == *ty
                        && !self.overlaps_any(b, inputs)
                })
                .collect();
            if !outs.is_empty() && self.rng.chance(50) {
                return *self.rng.pick(&outs);
            }
            let name = self.fresh("out");
            return self.push(name, ty.clone(), Role::Mutable, None);
        }
        self.alloc(ty)
    }

    /// A new alloc, placed at a random earlier point now and then (a longer
    /// lifetime for the sinking passes to shorten).
    fn alloc(&mut self, ty: &Type) -> usize {
        let name = self.fresh("a");
        let b = self.push(name.clone(), ty.clone(), Role::Alloc, None);
        self.bufs[b].defined = false;
        let line = format!("%{name} = allocactivation {{ Ty: {ty} }}");
        self.opcodes.insert("allocactivation");
        let at = if self.rng.chance(25) {
            self.rng.below(self.code.len() as u64 + 1) as usize
        } else {
            self.code.len()
        };
        self.code.insert(at, line);
        b
    }

    /// Records the writes of an instruction's outputs.
    fn wrote(&mut self, outs: &[usize]) {
        for &b in outs {
            if self.whole(b) {
                let o = self.bufs[b].origin;
                self.bufs[o].defined = true;
            }
        }
    }

    /// Emits `opcode` with `ins` read and a fresh or reused output of
    /// `dest_ty` written first (operand 0), optionally in place of one of
    /// `inplace` (input positions counted from 0).
    fn simple(
        &mut self,
        opcode: &'static str,
        dest_ty: &Type,
        ins: &[usize],
        inplace: &[usize],
        members: &str,
    ) -> usize {
        let mut dest = None;
        if !inplace.is_empty() && self.rng.chance(20) {
            let k = *self.rng.pick(inplace);
            let cand = ins[k];
            let shares = ins.iter().enumerate().any(|(j, &x)| {
                x != cand && self.bufs[x].origin == self.bufs[cand].origin && j != k
            });
            // The same value in another slot is fine only for in-place slots.
            let same_elsewhere = ins
                .iter()
                .enumerate()
                .any(|(j, &x)| j != k && x == cand && !inplace.contains(&j));
            if self.writable(cand) && self.bufs[cand].ty == *dest_ty && !shares && !same_elsewhere {
                dest = Some(cand);
            }
        }
        let dest = match dest {
            Some(d) => d,
            None => self.output(dest_ty, ins),
        };
        let mut ops: Ops = vec![("@out", dest)];
        ops.extend(ins.iter().map(|&b| ("@in", b)));
        let name = self.fresh("i");
        self.emit(&name, opcode, &ops, members);
        self.wrote(&[dest]);
        dest
    }

    // ---- the opcodes ----

    fn step(&mut self) {
        match self.rng.below(50) {
            0..=1 => self.binary(),
            2 => self.compare(),
            3 => self.select(),
            4 => self.unary(),
            5 => self.unary(),
            6 => self.softmax(),
            7 if self.rng.chance(40) => self.rearrange(),
            7 => self.transpose(),
            8 | 9 => self.insert(),
            10 => self.extract(),
            11 | 12 => self.convolution(),
            13 => self.pool(),
            14 => self.fully_connected(),
            15 => self.matmul(),
            16 => self.batch_matmul(),
            17 => self.batched_add(),
            18 => self.reduce_add(),
            19 => self.batchnorm(),
            20 => self.lrn(),
            21 => self.quantize(),
            22 => self.dequantize(),
            23 => self.rescale(),
            24 => self.splat(),
            25 => self.touch(),
            26 => self.copy(),
            27 => self.debugprint(),
            28 => self.free_view(),
            29 => self.layernorm(),
            30 => match self.rng.below(4) {
                0 => self.predicate(),
                1 => self.int_unary(),
                _ => self.logical(),
            },
            31 => self.gather(),
            32 if self.rng.chance(25) => self.convolution3d(),
            32 => self.conv_transpose(),
            33 => self.gather_index(),
            34 | 35 => self.scatter(),
            36 => self.one_hot(),
            37 if self.rng.chance(50) => self.topk(),
            37 => self.arg_min_max(),
            // The unary family is the largest: more draws.
            38 | 46 | 48 => self.unary(),
            39 => self.convert(),
            40..=42 => self.quantized(),
            43 if self.rng.chance(25) => self.pairwise_dot(),
            43 if self.rng.chance(20) => self.threshold_grad(),
            43 => self.activation_grad(),
            44 if self.rng.chance(40) => self.bce_with_logits(),
            44 => self.loss(),
            45 if self.rng.chance(75) => self.sgd(),
            45 => self.quantization_profile(),
            47 => self.training(),
            49 if self.rng.chance(15) => self.detection(),
            49 if self.rng.chance(15) => self.roi_align(),
            49 if self.rng.chance(15) => self.bbox_transform(),
            49 if self.rng.chance(10) => self.mfcc(),
            49 => self.sparse(),
            _ => self.binary(),
        }
    }

    /// The opcodes of a kernel family, from the table: a new opcode of the
    /// family is generated without an edit here.
    fn of_family(family: Family) -> Vec<Opcode> {
        Opcode::ALL
            .iter()
            .copied()
            .filter(|o| o.info().family == family)
            .collect()
    }

    fn binary(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::Binary));
        let rank = self.rng.range(1, 4) as usize;
        // The backend's operator table says which have an integer form.
        let def = glow_backend::ops::binary(op);
        let int = def.is_some_and(|b| !b.c_int.is_empty());
        let float = def.is_some_and(|b| !b.c_float.is_empty());
        let kind = if !float {
            // Integer-only operators (the bitwise ones, the shifts).
            *self.rng.pick(&[
                ElemKind::Index32,
                ElemKind::Index64,
                ElemKind::Int8,
                ElemKind::UInt8,
            ])
        } else if int {
            self.arith_kind()
        } else {
            ElemKind::Float
        };
        let ty = Type::new(kind, &self.dims(rank));
        let a = self.input(&ty);
        let b = if self.rng.chance(10) {
            a
        } else {
            self.input(&ty)
        };
        self.simple(op.name(), &ty, &[a, b], &[0, 1], "");
    }

    fn compare(&mut self) {
        let rank = self.rng.range(1, 4) as usize;
        let dims = self.dims(rank);
        let (ka, kb) = match self.rng.below(4) {
            0 => {
                let base = *self.rng.pick(&QUANT_BASES);
                (self.quant_kind(base), self.quant_kind(base))
            }
            _ => {
                let k = self.arith_kind();
                (k, k)
            }
        };
        let a = self.input(&Type::new(ka, &dims));
        let b = self.input(&Type::new(kb, &dims));
        let op = *self.rng.pick(&Self::of_family(Family::Compare));
        self.simple(
            op.name(),
            &Type::new(ElemKind::Bool, &dims),
            &[a, b],
            &[],
            "",
        );
    }

    fn select(&mut self) {
        let rank = self.rng.range(1, 4) as usize;
        let dims = self.dims(rank);
        let ty = Type::new(self.any_kind(), &dims);
        let c = self.input(&Type::new(ElemKind::Bool, &dims));
        let a = self.input(&ty);
        let b = self.input(&ty);
        self.simple("elementselect", &ty, &[c, a, b], &[1, 2], "");
    }

    fn float_ty(&mut self, lo: usize, hi: usize) -> Type {
        let rank = self.rng.range(lo as i64, hi as i64) as usize;
        Type::float(&self.dims(rank))
    }

    /// The float (and bool) members: `Min`/`Max` of `clip` in order, others
    /// small, bools either way.
    fn float_members(&mut self, op: Opcode) -> String {
        let mut out = Vec::new();
        let lo = self.rng.unit();
        let hi = lo + self.rng.unit().abs();
        for m in op.info().members {
            if m.ty == glow_ir::opcode::MemberType::Bool {
                let b = if self.rng.chance(50) { "true" } else { "false" };
                out.push(format!("{}: {b}", m.name));
                continue;
            }
            let v = match m.name {
                "Min" => lo,
                "Max" => hi,
                // Optional members are now and then left to their default.
                _ if m.default != glow_ir::opcode::Default::Required && self.rng.chance(30) => {
                    continue
                }
                _ => self.rng.unit().abs() * 0.5,
            };
            let mut t = String::new();
            format_f32(v, &mut t);
            out.push(format!("{}: {t}", m.name));
        }
        out.join(", ")
    }

    fn unary(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::Unary));
        let ty = self.float_ty(1, 4);
        let a = self.input(&ty);
        let members = self.float_members(op);
        self.simple(op.name(), &ty, &[a], &[0], &members);
    }

    fn softmax(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::SoftMax));
        let ty = self.float_ty(2, 2);
        let a = self.input(&ty);
        self.simple(op.name(), &ty, &[a], &[], "");
    }

    fn transpose(&mut self) {
        let rank = self.rng.range(1, 4) as usize;
        let src_ty = Type::new(self.any_kind(), &self.dims(rank));
        let mut perm: Vec<usize> = (0..rank).collect();
        self.rng.shuffle(&mut perm);
        let dest_dims: Vec<u64> = perm.iter().map(|&p| src_ty.dims[p]).collect();
        let a = self.input(&src_ty);
        let shuffle: Vec<String> = perm.iter().map(|p| p.to_string()).collect();
        self.simple(
            "transpose",
            &Type::new(src_ty.elem, &dest_dims),
            &[a],
            &[],
            &format!("Shuffle: [{}]", shuffle.join(", ")),
        );
    }

    /// A defined, writable buffer of type `ty` for an `@inout` operand.
    fn inout(&mut self, ty: &Type) -> usize {
        let cands: Vec<usize> = (0..self.bufs.len())
            .filter(|&b| self.readable(b) && self.writable(b) && self.bufs[b].ty == *ty)
            .collect();
        if !cands.is_empty() && self.rng.chance(60) {
            return *self.rng.pick(&cands);
        }
        if self.rng.chance(40) || matches!(ty.elem, ElemKind::Float16 | ElemKind::BFloat16) {
            return self.new_weight(ty, true, false);
        }
        // A fresh alloc, fully defined by a splat first.
        let a = self.alloc(ty);
        let name = self.fresh("i");
        let v = self.splat_value(ty.elem);
        self.emit(&name, "splat", &vec![("@out", a)], &format!("Value: {v}"));
        self.wrote(&[a]);
        a
    }

    fn insert(&mut self) {
        let rank = self.rng.range(1, 4) as usize;
        let kind = self.any_kind();
        let d = self.dims(rank);
        let axis = self.rng.below(rank as u64) as usize;
        let s: Vec<u64> = d
            .iter()
            .map(|&x| self.rng.range(1, x as i64) as u64)
            .collect();
        let count = self.rng.range(1, (d[axis] / s[axis]) as i64) as u64;
        let offs: Vec<String> = (0..rank)
            .map(|i| {
                let used = if i == axis { count * s[i] } else { s[i] };
                self.rng.range(0, (d[i] - used) as i64).to_string()
            })
            .collect();
        let dest_ty = Type::new(kind, &d);
        let src = self.input(&Type::new(kind, &s));
        let mut dest = self.inout(&dest_ty);
        if self.bufs[dest].origin == self.bufs[src].origin {
            dest = self.new_weight(&dest_ty, true, false);
        }
        let name = self.fresh("i");
        let members = format!(
            "Offsets: [{}], Count: {count}, Axis: {axis}",
            offs.join(", ")
        );
        self.emit(
            &name,
            "inserttensor",
            &vec![("@inout", dest), ("@in", src)],
            &members,
        );
    }

    fn extract(&mut self) {
        let rank = self.rng.range(1, 4) as usize;
        let kind = self.any_kind();
        let d = self.dims(rank);
        let s: Vec<u64> = d
            .iter()
            .map(|&x| self.rng.range(1, x as i64) as u64)
            .collect();
        let offs: Vec<String> = (0..rank)
            .map(|i| self.rng.range(0, (d[i] - s[i]) as i64).to_string())
            .collect();
        let src = self.input(&Type::new(kind, &d));
        self.simple(
            "extracttensor",
            &Type::new(kind, &s),
            &[src],
            &[],
            &format!("Offsets: [{}]", offs.join(", ")),
        );
    }

    /// Kernel, stride, pads, dilation and input extent of one spatial axis
    /// pair, so that the output has at least one element.
    fn window(&mut self, dilate: bool) -> Window {
        let k = [self.rng.range(1, 3) as u64, self.rng.range(1, 3) as u64];
        let st = [self.rng.range(1, 2) as u64, self.rng.range(1, 2) as u64];
        let pads = if self.rng.chance(50) {
            [0; 4]
        } else {
            [0, 0, 0, 0].map(|_: u64| self.rng.range(0, 2) as u64)
        };
        let dil = if dilate && self.rng.chance(25) {
            [self.rng.range(1, 2) as u64, self.rng.range(1, 2) as u64]
        } else {
            [1, 1]
        };
        let mut input = [self.rng.range(1, 6) as u64, self.rng.range(1, 6) as u64];
        for a in 0..2 {
            let eff = (k[a] - 1) * dil[a] + 1;
            let padded = input[a] + pads[a] + pads[a + 2];
            if padded < eff {
                input[a] += eff - padded;
            }
        }
        (k, st, pads, dil, input)
    }

    fn out_extent(k: u64, s: u64, p0: u64, p1: u64, d: u64, input: u64) -> u64 {
        (input + p0 + p1 - ((k - 1) * d + 1)) / s + 1
    }

    fn list(v: &[u64]) -> String {
        let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        format!("[{}]", s.join(", "))
    }

    fn convolution(&mut self) {
        let nchw = self.rng.chance(30);
        let group = *self.rng.pick(&[1u64, 1, 1, 2, 3]);
        let depthwise = self.rng.chance(20);
        let cpg = if depthwise {
            1
        } else {
            self.rng.range(1, 3) as u64
        };
        let opg = if depthwise {
            self.rng.range(1, 2) as u64
        } else {
            self.rng.range(1, 4) as u64
        };
        let (c, oc) = (group * cpg, group * opg);
        let n = self.rng.range(1, 2) as u64;
        let (k, st, pads, dil, [h, w]) = self.window(true);
        let oh = Self::out_extent(k[0], st[0], pads[0], pads[2], dil[0], h);
        let ow = Self::out_extent(k[1], st[1], pads[1], pads[3], dil[1], w);
        let (src_d, filt_d, dest_d) = if nchw {
            ([n, c, h, w], [oc, cpg, k[0], k[1]], [n, oc, oh, ow])
        } else {
            ([n, h, w, c], [oc, k[0], k[1], cpg], [n, oh, ow, oc])
        };
        let src = self.input(&Type::float(&src_d));
        let filt_ty = Type::float(&filt_d);
        // Constant filters take the packed kernels, computed ones the reference.
        let filter = if self.rng.chance(75) {
            self.new_weight(&filt_ty, false, false)
        } else {
            self.input(&filt_ty)
        };
        let bias = self.input(&Type::float(&[oc]));
        let (act, args) = match self.rng.below(10) {
            0 => ("RELU", "[]".to_string()),
            1 => ("CLIP", "[-0.5, 0.75]".to_string()),
            2 => ("TANH", "[]".to_string()),
            3 => ("SIGMOID", "[]".to_string()),
            4 => ("LEAKY_RELU", "[0.125]".to_string()),
            _ => ("NONE", "[]".to_string()),
        };
        let members = format!(
            "Kernels: {}, Strides: {}, Pads: {}, Group: {group}, Dilation: {}, Layout: {}, FusedActivation: {act}, FusedActivationArgs: {args}",
            Self::list(&k),
            Self::list(&st),
            Self::list(&pads),
            Self::list(&dil),
            if nchw { "NCHW" } else { "NHWC" }
        );
        let dest_ty = Type::float(&dest_d);
        if act == "NONE" && self.rng.chance(10) {
            // fold-batchnorm's pattern: constant inline filter, bias and
            // batchnorm parameters.
            let filter = self.new_weight(&filt_ty, false, true);
            let bias = self.new_weight(&Type::float(&[oc]), false, true);
            let x = self.alloc(&dest_ty);
            let name = self.fresh("i");
            let ops = vec![("@out", x), ("@in", src), ("@in", filter), ("@in", bias)];
            self.emit(&name, "convolution", &ops, &members);
            self.wrote(&[x]);
            let cty = Type::float(&[oc]);
            let p: Vec<usize> = (0..4).map(|_| self.new_weight(&cty, false, true)).collect();
            let ch = if nchw { 1 } else { 3 };
            let bn = format!("ChannelIdx: {ch}, Epsilon: 0.001, Momentum: 0.9");
            let ins = [x, p[0], p[1], p[2], p[3]];
            self.simple("batchnormalization", &dest_ty, &ins, &[], &bn);
            self.dealloc(x);
            return;
        }
        // The optional Residual operand, as fuse-residual writes it.
        let mut ins = vec![src, filter, bias];
        if self.rng.chance(15) {
            ins.push(self.input(&dest_ty));
        }
        // With a residual, sometimes written in place of it (an in-place pair).
        let inplace: &[usize] = if ins.len() == 4 { &[3] } else { &[] };
        let d = self.simple("convolution", &dest_ty, &ins, inplace, &members);
        // fuse-residual's pattern: the result plus another tensor.
        if ins.len() == 3
            && act == "NONE"
            && self.bufs[d].role == Role::Alloc
            && self.rng.chance(30)
        {
            let r = self.input(&dest_ty);
            let (a, b) = if self.rng.chance(50) { (d, r) } else { (r, d) };
            let sum = self.simple("elementadd", &dest_ty, &[a, b], &[], "");
            self.dealloc(d);
            if self.bufs[sum].role == Role::Alloc && self.rng.chance(50) {
                self.simple("relu", &dest_ty, &[sum], &[], "");
            }
            return;
        }
        // fuse-activations' pattern: an activation of the result.
        if act == "NONE" && self.bufs[d].role == Role::Alloc && self.rng.chance(40) {
            match self.rng.below(4) {
                0 => self.simple("relu", &dest_ty, &[d], &[], ""),
                1 => self.simple("sigmoid", &dest_ty, &[d], &[], ""),
                2 => self.simple("tanh", &dest_ty, &[d], &[], ""),
                _ => self.simple("clip", &dest_ty, &[d], &[], "Min: -0.25, Max: 0.5"),
            };
            if self.rng.chance(70) {
                self.dealloc(d);
            }
        }
    }

    /// `convtranspose` (NHWC): output padding below the stride, groups,
    /// constant or computed filters.
    fn conv_transpose(&mut self) {
        let group = *self.rng.pick(&[1u64, 1, 2, 3]);
        let (cpg, opg) = (self.rng.range(1, 3) as u64, self.rng.range(1, 3) as u64);
        let (c, oc) = (group * cpg, group * opg);
        let n = self.rng.range(1, 2) as u64;
        let k = [self.rng.range(1, 3) as u64, self.rng.range(1, 3) as u64];
        let st = [self.rng.range(1, 3) as u64, self.rng.range(1, 3) as u64];
        let dil = [self.rng.range(1, 2) as u64, self.rng.range(1, 2) as u64];
        let (h, w) = (self.rng.range(1, 4) as u64, self.rng.range(1, 4) as u64);
        let full = [
            (h - 1) * st[0] + (k[0] - 1) * dil[0] + 1,
            (w - 1) * st[1] + (k[1] - 1) * dil[1] + 1,
        ];
        // Crops that leave at least one row and column.
        let mut pads = [0u64; 4];
        for a in 0..2 {
            pads[a] = self.rng.range(0, (full[a] - 1).min(2) as i64) as u64;
            pads[a + 2] = self.rng.range(0, (full[a] - 1 - pads[a]).min(2) as i64) as u64;
        }
        let op = [0, 1].map(|a| self.rng.range(0, st[a] as i64 - 1) as u64);
        let oh = full[0] - pads[0] - pads[2] + op[0];
        let ow = full[1] - pads[1] - pads[3] + op[1];
        let src = self.input(&Type::float(&[n, h, w, c]));
        let filt_ty = Type::float(&[c, k[0], k[1], opg]);
        let filter = if self.rng.chance(50) {
            self.new_weight(&filt_ty, false, false)
        } else {
            self.input(&filt_ty)
        };
        let bias = self.input(&Type::float(&[oc]));
        let members = format!(
            "Kernels: {}, Strides: {}, Pads: {}, Group: {group}, Dilation: {}, OutputPadding: {}",
            Self::list(&k),
            Self::list(&st),
            Self::list(&pads),
            Self::list(&dil),
            Self::list(&op)
        );
        let dest_ty = Type::float(&[n, oh, ow, oc]);
        self.simple(
            "convtranspose",
            &dest_ty,
            &[src, filter, bias],
            &[],
            &members,
        );
    }

    /// `convolution3d` (NTHWC float): small windows, strides, pads on each
    /// side below the kernel, groups, constant or runtime filters.
    fn convolution3d(&mut self) {
        let group = *self.rng.pick(&[1u64, 1, 2]);
        let (c, oc) = (
            group * self.rng.range(1, 2) as u64,
            group * self.rng.range(1, 2) as u64,
        );
        let n = self.rng.range(1, 2) as u64;
        let mut k = [0u64; 3];
        let mut st = [0u64; 3];
        let mut pads = [0u64; 6];
        let mut inp = [0u64; 3];
        let mut out = [0u64; 3];
        for a in 0..3 {
            k[a] = self.rng.range(1, 3) as u64;
            st[a] = self.rng.range(1, 2) as u64;
            pads[2 * a] = self.rng.range(0, k[a] as i64 - 1) as u64;
            pads[2 * a + 1] = self.rng.range(0, k[a] as i64 - 1) as u64;
            let lo = (k[a] as i64 - (pads[2 * a] + pads[2 * a + 1]) as i64).max(1);
            inp[a] = self.rng.range(lo, lo + 2) as u64;
            out[a] = (inp[a] + pads[2 * a] + pads[2 * a + 1] - k[a]) / st[a] + 1;
        }
        let src = self.input(&Type::float(&[n, inp[0], inp[1], inp[2], c]));
        let filt_ty = Type::float(&[oc, k[0], k[1], k[2], c / group]);
        let filter = if self.rng.chance(50) {
            self.new_weight(&filt_ty, false, false)
        } else {
            self.input(&filt_ty)
        };
        let bias = self.input(&Type::float(&[oc]));
        let members = format!(
            "Kernels: {}, Strides: {}, Pads: {}, Group: {group}",
            Self::list(&k),
            Self::list(&st),
            Self::list(&pads)
        );
        let dest_ty = Type::float(&[n, out[0], out[1], out[2], oc]);
        self.simple(
            "convolution3d",
            &dest_ty,
            &[src, filter, bias],
            &[],
            &members,
        );
    }

    fn pool(&mut self) {
        let nchw = self.rng.chance(30);
        let avg = self.rng.chance(50);
        let (n, c) = (self.rng.range(1, 2) as u64, self.rng.range(1, 4) as u64);
        let (k, st, pads, dil, [h, w]) = self.window(true);
        let oh = Self::out_extent(k[0], st[0], pads[0], pads[2], dil[0], h);
        let ow = Self::out_extent(k[1], st[1], pads[1], pads[3], dil[1], w);
        let (src_d, dest_d) = if nchw {
            ([n, c, h, w], [n, c, oh, ow])
        } else {
            ([n, h, w, c], [n, oh, ow, c])
        };
        let src = self.input(&Type::float(&src_d));
        let mut members = format!(
            "Kernels: {}, Strides: {}, Pads: {}, Layout: {}, Dilation: {}",
            Self::list(&k),
            Self::list(&st),
            Self::list(&pads),
            if nchw { "NCHW" } else { "NHWC" },
            Self::list(&dil)
        );
        if avg {
            let _ = write!(members, ", CountIncludePads: {}", self.rng.chance(50));
        }
        let op = if avg { "avgpool" } else { "maxpool" };
        self.simple(op, &Type::float(&dest_d), &[src], &[], &members);
    }

    /// The training instructions (docs/training.md).
    fn training(&mut self) {
        match self.rng.below(2) {
            0 => self.convolution_grad(),
            _ => self.pool_grad(),
        }
    }

    /// `maxpoolwithargmax` (then now and then its gradient, on its outputs
    /// or on other buffers: an index outside `Src` is skipped) or
    /// `avgpoolgrad`, over the windows `pool` makes, without dilation.
    fn pool_grad(&mut self) {
        let nchw = self.rng.chance(30);
        let (n, c) = (self.rng.range(1, 2) as u64, self.rng.range(1, 4) as u64);
        let (k, st, pads, _, [h, w]) = self.window(false);
        let oh = Self::out_extent(k[0], st[0], pads[0], pads[2], 1, h);
        let ow = Self::out_extent(k[1], st[1], pads[1], pads[3], 1, w);
        let (src_d, dest_d) = if nchw {
            ([n, c, h, w], [n, c, oh, ow])
        } else {
            ([n, h, w, c], [n, oh, ow, c])
        };
        let (src_ty, dest_ty) = (Type::float(&src_d), Type::float(&dest_d));
        let arg_ty = Type::new(ElemKind::Index64, &dest_d);
        let mut members = format!(
            "Kernels: {}, Strides: {}, Pads: {}, Layout: {}",
            Self::list(&k),
            Self::list(&st),
            Self::list(&pads),
            if nchw { "NCHW" } else { "NHWC" }
        );
        let src = self.input(&src_ty);
        if self.rng.chance(40) {
            let _ = write!(members, ", CountIncludePads: {}", self.rng.chance(50));
            let dest = self.input(&dest_ty);
            let dest_grad = self.input(&dest_ty);
            let sg = self.output(&src_ty, &[dest, src, dest_grad]);
            let ops: Ops = vec![
                ("@in", dest),
                ("@in", src),
                ("@in", dest_grad),
                ("@out", sg),
            ];
            let name = self.fresh("i");
            self.emit(&name, "avgpoolgrad", &ops, &members);
            self.wrote(&[sg]);
            return;
        }
        let dest = self.output(&dest_ty, &[src]);
        let argmax = self.output(&arg_ty, &[src, dest]);
        let name = self.fresh("i");
        let ops: Ops = vec![("@out", dest), ("@in", src), ("@out", argmax)];
        self.emit(&name, "maxpoolwithargmax", &ops, &members);
        self.wrote(&[dest, argmax]);
        if self.rng.chance(30) {
            return;
        }
        let (dest, argmax) = if self.rng.chance(75) {
            (dest, argmax)
        } else {
            (self.input(&dest_ty), self.input(&arg_ty))
        };
        let dest_grad = self.input(&dest_ty);
        let sg = self.output(&src_ty, &[dest, src, argmax, dest_grad]);
        let ops: Ops = vec![
            ("@in", dest),
            ("@in", src),
            ("@in", argmax),
            ("@in", dest_grad),
            ("@out", sg),
        ];
        let name = self.fresh("i");
        self.emit(&name, "maxpoolwithargmaxgrad", &ops, &members);
        self.wrote(&[sg]);
    }

    /// `convolutiongrad` over a convolution's windows, groups and layouts;
    /// the three gradients go to buffers apart from the inputs and from
    /// each other.
    fn convolution_grad(&mut self) {
        let nchw = self.rng.chance(30);
        let group = *self.rng.pick(&[1u64, 1, 2, 3]);
        let (cpg, opg) = (self.rng.range(1, 3) as u64, self.rng.range(1, 3) as u64);
        let (c, oc) = (group * cpg, group * opg);
        let n = self.rng.range(1, 2) as u64;
        let (k, st, pads, dil, [h, w]) = self.window(true);
        let oh = Self::out_extent(k[0], st[0], pads[0], pads[2], dil[0], h);
        let ow = Self::out_extent(k[1], st[1], pads[1], pads[3], dil[1], w);
        let (src_d, filt_d, dest_d) = if nchw {
            ([n, c, h, w], [oc, cpg, k[0], k[1]], [n, oc, oh, ow])
        } else {
            ([n, h, w, c], [oc, k[0], k[1], cpg], [n, oh, ow, oc])
        };
        let (src_ty, filt_ty) = (Type::float(&src_d), Type::float(&filt_d));
        let src = self.input(&src_ty);
        let filter = self.input(&filt_ty);
        let dest_grad = self.input(&Type::float(&dest_d));
        let mut taken = vec![src, filter, dest_grad];
        let mut outs = Vec::new();
        // Sometimes SrcGrad is @inout: the sums are added to what it holds.
        let sum_into = self.rng.chance(25);
        for (k, ty) in [src_ty, filt_ty, Type::float(&[oc])]
            .into_iter()
            .enumerate()
        {
            let o = if k == 0 && sum_into {
                let mut b = self.inout(&ty);
                if self.overlaps_any(b, &taken) {
                    b = self.new_weight(&ty, true, false);
                }
                b
            } else {
                self.output(&ty, &taken)
            };
            taken.push(o);
            outs.push(o);
        }
        // Sometimes SrcGrad is zeros (an input's gradient).
        let zeros = if self.rng.chance(20) {
            ", ComputeSrcGrad: false"
        } else {
            ""
        };
        let members = format!(
            "Kernels: {}, Strides: {}, Pads: {}, Group: {group}, Dilation: {}, Layout: {}{zeros}",
            Self::list(&k),
            Self::list(&st),
            Self::list(&pads),
            Self::list(&dil),
            if nchw { "NCHW" } else { "NHWC" }
        );
        let mut ops: Ops = vec![("@in", src), ("@in", filter), ("@in", dest_grad)];
        ops.extend(outs.iter().map(|&o| ("@out", o)));
        if sum_into {
            ops[3].0 = "@inout";
        }
        let name = self.fresh("i");
        self.emit(&name, "convolutiongrad", &ops, &members);
        self.wrote(&outs);
    }

    fn fully_connected(&mut self) {
        let [n, k, m] = [0; 3].map(|_: u64| self.rng.range(1, 7) as u64);
        let src = self.input(&Type::float(&[n, k]));
        let wt = Type::float(&[k, m]);
        let weights = if self.rng.chance(70) {
            self.new_weight(&wt, false, false)
        } else {
            self.input(&wt)
        };
        let bias = self.input(&Type::float(&[m]));
        self.simple(
            "fullyconnected",
            &Type::float(&[n, m]),
            &[src, weights, bias],
            &[],
            "",
        );
    }

    fn matmul(&mut self) {
        let [a, z, b] = [0; 3].map(|_: u64| self.rng.range(1, 7) as u64);
        let l = self.input(&Type::float(&[a, z]));
        let r = self.input(&Type::float(&[z, b]));
        self.simple("matmul", &Type::float(&[a, b]), &[l, r], &[], "");
    }

    fn batch_matmul(&mut self) {
        let [n, a, z, b] = [0; 4].map(|_: u64| self.rng.range(1, 4) as u64);
        let l = self.input(&Type::float(&[n, a, z]));
        let r = self.input(&Type::float(&[n, z, b]));
        self.simple("batchmatmul", &Type::float(&[n, a, b]), &[l, r], &[], "");
    }

    fn batched_add(&mut self) {
        let ty = self.float_ty(2, 4);
        let batch = self.input(&ty);
        let slice = self.input(&Type::float(&ty.dims[1..]));
        self.simple("batchedadd", &ty, &[batch, slice], &[0], "");
    }

    fn reduce_add(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::Reduce));
        let ty = self.float_ty(1, 4);
        let axis = self.rng.below(ty.rank() as u64) as usize;
        let mut d = ty.dims.clone();
        d.remove(axis);
        if d.is_empty() {
            d.push(1);
        }
        let src = self.input(&ty);
        self.simple(
            op.name(),
            &Type::float(&d),
            &[src],
            &[],
            &format!("Axis: {axis}"),
        );
    }

    /// `batchnormalization`, now and then followed by its gradient.
    fn batchnorm(&mut self) {
        let ty = self.float_ty(1, 4);
        let ch = self.rng.below(ty.rank() as u64) as usize;
        let cty = Type::float(&[ty.dims[ch]]);
        let src = self.input(&ty);
        let scale = self.input(&cty);
        let bias = self.input(&cty);
        let mean = self.input(&cty);
        // A positive variance keeps the results finite.
        let var = self.new_weight(&cty, false, true);
        let members = format!("ChannelIdx: {ch}, Epsilon: 0.001, Momentum: 0.9");
        self.simple(
            "batchnormalization",
            &ty,
            &[src, scale, bias, mean, var],
            &[],
            &members,
        );
        // Half the time its gradient over the same statistics.
        if self.rng.chance(50) {
            let dest_grad = self.input(&ty);
            let ins = [src, scale, mean, var, dest_grad];
            let sg = self.output(&ty, &ins);
            let scg = self.output(&cty, &[&ins[..], &[sg]].concat());
            let bg = self.output(&cty, &[&ins[..], &[sg, scg]].concat());
            let ops: Ops = vec![
                ("@in", src),
                ("@in", scale),
                ("@in", mean),
                ("@in", var),
                ("@in", dest_grad),
                ("@out", sg),
                ("@out", scg),
                ("@out", bg),
            ];
            let name = self.fresh("i");
            let members = format!("ChannelIdx: {ch}, Epsilon: 0.001");
            self.emit(&name, "batchnormalizationgrad", &ops, &members);
            self.wrote(&[sg, scg, bg]);
        }
    }

    /// A binary cross-entropy loss over logits: weights of `Input`'s dims
    /// or one per column, any reduction.
    fn bce_with_logits(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::BceWithLogits));
        let ty = self.float_ty(1, 3);
        let col = Type::float(&ty.dims[ty.dims.len() - 1..]);
        let mut ins = vec![self.input(&ty), self.input(&ty)];
        for _ in 3..op.info().operands.len() {
            let w = if self.rng.chance(50) {
                ty.clone()
            } else {
                col.clone()
            };
            ins.push(self.input(&w));
        }
        let r = self.rng.below(3);
        let dest = if r == 0 { ty } else { Type::float(&[1]) };
        self.simple(op.name(), &dest, &ins, &[], &format!("Reduction: {r}"));
    }

    /// `elementisnan`: a `bool` of a float input's shape.
    fn predicate(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::Predicate));
        let ty = self.float_ty(1, 4);
        let a = self.input(&ty);
        let dest = Type::new(ElemKind::Bool, &ty.dims);
        self.simple(op.name(), &dest, &[a], &[], "");
    }

    /// `elementbitwisenot`, `modulo` over a plain integer kind; a divisor
    /// of either sign, never 0.
    fn int_unary(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::IntUnary));
        let kind = *self.rng.pick(&[
            ElemKind::Index32,
            ElemKind::Index64,
            ElemKind::Int8,
            ElemKind::UInt8,
        ]);
        let rank = self.rng.range(1, 4) as usize;
        let ty = Type::new(kind, &self.dims(rank));
        let a = self.input(&ty);
        let mut members = Vec::new();
        for m in op.info().members {
            match m.ty {
                glow_ir::opcode::MemberType::Bool => {
                    let b = if self.rng.chance(50) { "true" } else { "false" };
                    members.push(format!("{}: {b}", m.name));
                }
                _ => {
                    let d = self.rng.range(1, 9);
                    let d = if self.rng.chance(30) { -d } else { d };
                    members.push(format!("{}: {d}", m.name));
                }
            }
        }
        self.simple(op.name(), &ty, &[a], &[0], &members.join(", "));
    }

    fn logical(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::Logical));
        let rank = self.rng.range(1, 4) as usize;
        let ty = Type::new(ElemKind::Bool, &self.dims(rank));
        let ins: Vec<usize> = (1..op.info().operands.len())
            .map(|_| self.input(&ty))
            .collect();
        let inplace: Vec<usize> = (0..ins.len()).collect();
        self.simple(op.name(), &ty, &ins, &inplace, "");
    }

    fn gather(&mut self) {
        let rank = self.rng.range(1, 3) as usize;
        let data_ty = Type::new(self.any_kind(), &self.dims(rank));
        let axis = self.rng.below(rank as u64) as usize;
        let irank = self.rng.range(1, 2) as usize;
        let kind = if self.rng.chance(50) {
            ElemKind::Index32
        } else {
            ElemKind::Index64
        };
        let idx_ty = Type::new(kind, &self.dims(irank));
        let mut d = data_ty.dims[..axis].to_vec();
        d.extend(&idx_ty.dims);
        d.extend(&data_ty.dims[axis + 1..]);
        let data = self.input(&data_ty);
        let idx = self.input(&idx_ty);
        let members = format!("Axis: {axis}");
        self.simple(
            "gather",
            &Type::new(data_ty.elem, &d),
            &[data, idx],
            &[],
            &members,
        );
    }

    /// A recommendation instruction: a float table of 1 to 8 rows, indices,
    /// lengths and offsets of any values (out-of-range ones are defined).
    /// `nonmaxsuppression` in ONNX's or TensorFlow's form, Glow's layout or
    /// the compact one, with member or run-time limits and any capacity.
    fn detection(&mut self) {
        let v4 = self.rng.chance(30);
        let (b, c, n) = if v4 {
            (1, 1, self.rng.range(1, 6) as u64)
        } else {
            (
                self.rng.range(1, 2) as u64,
                self.rng.range(1, 3) as u64,
                self.rng.range(1, 6) as u64,
            )
        };
        let (bt, st) = if v4 {
            (Type::float(&[n, 4]), Type::float(&[n]))
        } else {
            (Type::float(&[b, n, 4]), Type::float(&[b, c, n]))
        };
        let (boxes, scores) = (self.input(&bt), self.input(&st));
        let mut limits = Vec::new();
        if self.rng.chance(30) {
            let lk = self.index_kind();
            let l = self.input(&Type::new(lk, &[1]));
            let (t, u) = (
                self.input(&Type::float(&[1])),
                self.input(&Type::float(&[1])),
            );
            limits = vec![l, t, u];
        }
        let mut ins = vec![boxes, scores];
        ins.extend(&limits);
        let ik = self.index_kind();
        let rows = self.rng.range(1, (b * c * n) as i64) as u64;
        let it = if v4 {
            Type::new(ik, &[rows])
        } else {
            Type::new(ik, &[rows, 3])
        };
        let idx = self.output(&it, &ins);
        let ct = Type::new(ik, &[self.rng.range(1, 4) as u64 * b]);
        ins.push(idx);
        let count = self.output(&ct, &ins);
        let mut ops: Ops = vec![
            ("@out", idx),
            ("@out", count),
            ("@in", boxes),
            ("@in", scores),
        ];
        ops.extend(limits.iter().map(|&l| ("@in", l)));
        let members = format!(
            "CenterPointBox: {}, MaxOutputBoxesPerClass: {}, IouThreshold: {}, ScoreThreshold: {}, IsTFVersion4: {v4}, Compact: {}",
            self.rng.below(2),
            self.rng.range(0, 3),
            self.rng.pick(&["0.0", "0.3", "0.5", "0.9"]),
            self.rng.pick(&["-1.0", "0.0", "0.5"]),
            self.rng.chance(50)
        );
        let name = self.fresh("i");
        self.emit(&name, "nonmaxsuppression", &ops, &members);
        self.wrote(&[idx, count]);
    }

    /// `roialign` of every mode and box form on a small NHWC map.
    fn roi_align(&mut self) {
        let (n, h, w, c) = (
            self.rng.range(1, 2) as u64,
            self.rng.range(1, 5) as u64,
            self.rng.range(1, 5) as u64,
            self.rng.range(1, 3) as u64,
        );
        let map = self.input(&Type::float(&[n, h, w, c]));
        let k = self.rng.range(1, 4) as u64;
        let rotated = self.rng.chance(25);
        let cols = if rotated {
            6
        } else {
            *self.rng.pick(&[4u64, 5])
        };
        let boxes = self.input(&Type::float(&[k, cols]));
        let bk = self.index_kind();
        let batch = self.input(&Type::new(bk, &[k]));
        let (oh, ow) = (self.rng.range(1, 3) as u64, self.rng.range(1, 3) as u64);
        let dest = Type::float(&[k, oh, ow, c]);
        let members = format!(
            "Mode: {}, OutputHeight: {oh}, OutputWidth: {ow}, SamplingRatio: {}, SpatialScale: {}, Aligned: {}, Rotated: {rotated}",
            self.rng.pick(&["AVG", "MAX", "ONNX_MAX"]),
            self.rng.range(0, 2),
            self.rng.pick(&["1.0", "0.5", "3.0"]),
            self.rng.chance(50)
        );
        self.simple("roialign", &dest, &[map, boxes, batch], &[], &members);
    }

    /// `bboxtransform`, upright or rotated, with or without image numbers.
    fn bbox_transform(&mut self) {
        let rotated = self.rng.chance(40);
        let d = if rotated { 5 } else { 4 };
        let n = self.rng.range(1, 5) as u64;
        let b = self.rng.range(1, 2) as u64;
        let classes = self.rng.range(1, 2) as u64;
        let cols = d + self.rng.below(2);
        let rois = self.input(&Type::float(&[n, cols]));
        let deltas = self.input(&Type::float(&[n, classes * d]));
        let info = self.input(&Type::float(&[b, 3]));
        let out = self.output(&Type::float(&[n, classes * d]), &[rois, deltas, info]);
        let splits = self.output(&Type::float(&[b]), &[rois, deltas, info, out]);
        let members = format!(
            "Weights: [{}, 1.0, 2.0, 0.5], ApplyScale: {}, Rotated: {rotated}, AngleBoundOn: {}, AngleBoundLo: -90, AngleBoundHi: 90, ClipAngleThresh: {}, LegacyPlusOne: {}",
            self.rng.pick(&["1.0", "10.0"]),
            self.rng.chance(50),
            self.rng.chance(50),
            self.rng.pick(&["1.0", "30.0"]),
            self.rng.chance(50)
        );
        let name = self.fresh("i");
        let ops: Ops = vec![
            ("@out", out),
            ("@out", splits),
            ("@in", rois),
            ("@in", deltas),
            ("@in", info),
        ];
        self.emit(&name, "bboxtransform", &ops, &members);
        self.wrote(&[out, splits]);
    }

    /// `mfcc` over a small spectrogram; the ranges are random indices, so
    /// some are empty or run past the row.
    fn mfcc(&mut self) {
        let (w, s) = (self.rng.range(1, 3) as u64, self.rng.range(1, 6) as u64);
        let (f, nc) = (self.rng.range(1, 4) as u64, self.rng.range(1, 3) as u64);
        let spec = self.input(&Type::float(&[w, s]));
        let nwt = self.rng.range(1, 8) as u64;
        let weights = self.input(&Type::float(&[nwt]));
        let ranges = self.input(&Type::new(ElemKind::Index32, &[2 * f]));
        let dct = self.input(&Type::float(&[nc, f]));
        let members = format!(
            "SampleRate: 16000.0, LowerFrequency: 20.0, UpperFrequency: 4000.0, FilterBankCount: {f}, NumCoefficients: {nc}"
        );
        self.simple(
            "mfcc",
            &Type::float(&[w, nc]),
            &[spec, weights, ranges, dct],
            &[],
            &members,
        );
    }

    fn sparse(&mut self) {
        let which = self.rng.below(16);
        let mut table = vec![self.rng.range(1, 8) as u64];
        // An embedding table is 2-D.
        let inner = if which == 4 {
            1
        } else {
            self.rng.range(1, 2) as usize
        };
        table.extend(self.dims(inner));
        let table_ty = Type::new(ElemKind::Float, &table);
        let segs = self.rng.range(1, 4) as u64;
        let n = self.rng.range(1, 9) as u64;
        let (ik, lk) = (self.index_kind(), self.index_kind());
        let mut dest = vec![segs];
        dest.extend(&table[1..]);
        let dest = Type::new(ElemKind::Float, &dest);
        let data = self.input(&table_ty);
        let idx_ty = Type::new(ik, &[n]);
        let len_ty = Type::new(lk, &[segs]);
        match which {
            0 => {
                let (i, l) = (self.input(&idx_ty), self.input(&len_ty));
                self.simple("sparselengthssum", &dest, &[data, i, l], &[], "");
            }
            1 => {
                let w = self.input(&Type::new(ElemKind::Float, &[n]));
                let (i, l) = (self.input(&idx_ty), self.input(&len_ty));
                self.simple("sparselengthsweightedsum", &dest, &[data, w, i, l], &[], "");
            }
            2 => {
                let l = self.input(&len_ty);
                self.simple("lengthssum", &dest, &[data, l], &[], "");
            }
            3 => {
                let end = self.rng.chance(50);
                let w = self.input(&Type::new(ElemKind::Float, &[n]));
                let i = self.input(&idx_ty);
                let o = self.input(&Type::new(ik, &[segs + end as u64]));
                let members = format!("HasEndOffset: {end}");
                self.simple("embeddingbag", &dest, &[data, w, i, o], &[], &members);
            }
            5 => {
                let l = self.input(&len_ty);
                self.simple("lengthstoranges", &Type::new(ik, &[segs, 2]), &[l], &[], "");
            }
            6 => {
                let l = self.input(&len_ty);
                self.simple("lengthsrangefill", &Type::new(ik, &[n]), &[l], &[], "");
            }
            7 => {
                let kind = self.any_kind();
                let d = self.input(&Type::new(kind, &[n]));
                let (per, m) = (self.rng.range(1, 3) as u64, self.rng.range(1, 9) as u64);
                let r = self.input(&Type::new(ik, &[segs, per, 2]));
                let out = self.alloc(&Type::new(kind, &[m]));
                let lengths = self.alloc(&Type::new(ik, &[segs]));
                let ops: Ops = vec![("@out", out), ("@out", lengths), ("@in", d), ("@in", r)];
                let name = self.fresh("i");
                self.emit(&name, "gatherranges", &ops, "");
                self.wrote(&[out, lengths]);
            }
            8 => {
                let kind = self.any_kind();
                let vals = self.input(&Type::new(kind, &[n, 2]));
                let def = self.input(&Type::new(kind, &[2]));
                let (i, l) = (self.input(&idx_ty), self.input(&len_ty));
                let dest = Type::new(kind, &[segs, 3, 2]);
                self.simple(
                    "sparsetodensemask",
                    &dest,
                    &[i, vals, def, l],
                    &[],
                    "Mask: [2, 0, 5]",
                );
            }
            9 => {
                let dense = self.rng.range(1, 6) as u64;
                let vals = self.input(&Type::new(ElemKind::Float, &[n]));
                let (l, i) = (self.input(&len_ty), self.input(&idx_ty));
                let dest = Type::new(ElemKind::Float, &[segs, dense]);
                let members = format!("DefaultValue: 0.25, DenseLastDim: {dense}");
                self.simple("batchsparsetodense", &dest, &[l, i, vals], &[], &members);
            }
            10 => {
                let kind = self.any_kind();
                let rows = self.rng.range(1, 4) as u64;
                let d = self.input(&Type::new(kind, &[rows, 3]));
                let ind_kind = if self.rng.chance(50) {
                    ElemKind::Bool
                } else {
                    ik
                };
                let ind = self.input(&Type::new(ind_kind, &[segs + 1]));
                let dest = Type::new(kind, &[segs + 1, 3]);
                self.simple("fillexampleswithindicator", &dest, &[d, ind], &[], "");
            }
            11 => {
                let labels = self.rng.range(1, 3) as u64;
                let per = self.rng.range(1, 3) as u64;
                let n = labels * per;
                let (l, i) = (self.input(&len_ty), self.input(&Type::new(ik, &[n])));
                let v = self.input(&Type::new(ElemKind::Float, &[n]));
                let lv = self.alloc(&Type::new(ElemKind::Float, &[labels, per]));
                let ex = self.alloc(&Type::new(ElemKind::Index32, &[labels, per]));
                let gom = self.alloc(&Type::new(ik, &[n]));
                let ops: Ops = vec![
                    ("@out", lv),
                    ("@out", ex),
                    ("@out", gom),
                    ("@in", l),
                    ("@in", i),
                    ("@in", v),
                ];
                let name = self.fresh("i");
                self.emit(
                    &name,
                    "sparselabelsplit",
                    &ops,
                    &format!("NumLabels: {labels}"),
                );
                self.wrote(&[lv, ex, gom]);
            }
            12 => {
                let q = Type::new(
                    ElemKind::UInt8Q {
                        scale: 0.25,
                        offset: 1,
                    },
                    &table,
                );
                let q = self.input(&q);
                let rows = Type::new(ElemKind::Float, &[table[0]]);
                let (sc, of) = (self.input(&rows), self.input(&rows));
                let w = self.input(&Type::new(ElemKind::Float, &[n]));
                let (i, l) = (self.input(&idx_ty), self.input(&len_ty));
                let op = "rowwisequantizedsparselengthsweightedsum";
                self.simple(op, &dest, &[q, sc, of, w, i, l], &[], "");
            }
            13 => {
                let (tasks, tables, batches) = (table[0], self.rng.range(1, 3) as u64, segs);
                let w = self.input(&Type::new(ElemKind::Float, &[tasks, 6]));
                let to = self.input(&Type::new(ik, &[tables + 1]));
                let off = self.input(&Type::new(ik, &[tables * batches + 1]));
                let i = self.input(&Type::new(ik, &[n]));
                let dest = Type::new(ElemKind::Float, &[tasks, batches, tables]);
                self.simple(
                    "batchedunaryembeddingsbags",
                    &dest,
                    &[w, to, off, i],
                    &[],
                    "",
                );
            }
            14 => {
                let k = self.rng.range(1, 3) as u64;
                let pe_ty = Type::new(self.any_kind(), &[segs, n]);
                let pe = self.input(&pe_ty);
                let lists = [k + 1, k, k + 1, k].map(|d| Type::new(ElemKind::Index64, &[d]));
                let ins: Vec<usize> = lists.iter().map(|t| self.input(t)).collect();
                let op = "permutepooledembeddings";
                self.simple(op, &pe_ty, &[pe, ins[0], ins[1], ins[2], ins[3]], &[], "");
            }
            15 => {
                // Fused rows: 1 to 4 values (two per byte for ui4fused), then
                // the scale and offset bytes.
                let nibbles = self.rng.chance(50);
                let values = self.rng.range(1, 4) as u64;
                let width = if nibbles { values.div_ceil(2) } else { values } + 8;
                let line = if nibbles { (width - 8) * 2 } else { values };
                let fused = glow_ir::types::Fused {
                    nibbles,
                    fp16: false,
                    scale: 1.0,
                    offset: 0,
                };
                let q = self.input(&Type::new(ElemKind::Fused(fused), &[table[0], width]));
                let w = self.input(&Type::new(ElemKind::Float, &[n]));
                let i = self.input(&idx_ty);
                let dest = Type::new(ElemKind::Float, &[segs, line]);
                match self.rng.below(3) {
                    0 => {
                        let l = self.input(&len_ty);
                        let op = "fusedrowwisequantizedsparselengthsweightedsum";
                        self.simple(op, &dest, &[q, w, i, l], &[], "");
                    }
                    1 => {
                        let l = self.input(&len_ty);
                        self.simple(
                            "fusedrowwisequantizedsparselengthssum",
                            &dest,
                            &[q, i, l],
                            &[],
                            "",
                        );
                    }
                    _ => {
                        let end = self.rng.chance(50);
                        let o = self.input(&Type::new(ik, &[segs + end as u64]));
                        let members = format!("HasEndOffset: {end}");
                        let op = "embeddingbagbyterowwiseoffsets";
                        self.simple(op, &dest, &[q, w, i, o], &[], &members);
                    }
                }
            }
            _ => {
                let rank = self.rng.range(1, 2) as usize;
                let id = self.dims(rank);
                let i = self.input(&Type::new(ik, &id));
                let mut d = id;
                d.extend(&table[1..]);
                let members = format!("PadIdx: {}", self.rng.range(-1, 3));
                self.simple(
                    "embedding",
                    &Type::new(ElemKind::Float, &d),
                    &[data, i],
                    &[],
                    &members,
                );
            }
        }
    }

    fn index_kind(&mut self) -> ElemKind {
        if self.rng.chance(50) {
            ElemKind::Index32
        } else {
            ElemKind::Index64
        }
    }

    /// Indices for `gatherelements`/`scatterelements` on `data`: no larger
    /// than `data` except on `axis`.
    fn element_indices(&mut self, data: &[u64], axis: usize) -> Vec<u64> {
        let mut id = Vec::new();
        for (k, &d) in data.iter().enumerate() {
            id.push(if k == axis {
                self.rng.range(1, 4) as u64
            } else {
                self.rng.range(1, d as i64) as u64
            });
        }
        id
    }

    /// `gatherelements` or `gathernd` (with `BatchDims`) on data of any kind.
    fn gather_index(&mut self) {
        let rank = self.rng.range(1, 3) as usize;
        let data_ty = Type::new(self.any_kind(), &self.dims(rank));
        let kind = self.index_kind();
        if self.rng.chance(50) {
            let axis = self.rng.below(rank as u64) as usize;
            let id = self.element_indices(&data_ty.dims, axis);
            let data = self.input(&data_ty);
            let idx = self.input(&Type::new(kind, &id));
            let members = format!("Axis: {axis}");
            let dest = Type::new(data_ty.elem, &id);
            self.simple("gatherelements", &dest, &[data, idx], &[], &members);
            return;
        }
        let b = self.rng.below(rank as u64) as usize;
        let k = self.rng.range(1, (rank - b) as i64) as usize;
        let mut id = data_ty.dims[..b].to_vec();
        if self.rng.chance(50) {
            id.push(self.rng.range(1, 3) as u64);
        }
        let mut dd = id.clone();
        dd.extend(&data_ty.dims[b + k..]);
        if dd.is_empty() {
            dd.push(1);
        }
        id.push(k as u64);
        let data = self.input(&data_ty);
        let idx = self.input(&Type::new(kind, &id));
        let members = format!("BatchDims: {b}");
        let dest = Type::new(data_ty.elem, &dd);
        self.simple("gathernd", &dest, &[data, idx], &[], &members);
    }

    /// `scatterelements` or `scatternd`: any kind when updates replace,
    /// float or index kinds for a reduction.
    fn scatter(&mut self) {
        let rank = self.rng.range(1, 3) as usize;
        let red = *self.rng.pick(glow_ir::opcode::REDUCTIONS);
        let kind = if red == "none" {
            self.any_kind()
        } else {
            self.arith_kind()
        };
        let data_ty = Type::new(kind, &self.dims(rank));
        let ik = self.index_kind();
        if self.rng.chance(50) {
            let axis = self.rng.below(rank as u64) as usize;
            let id = self.element_indices(&data_ty.dims, axis);
            let data = self.input(&data_ty);
            let idx = self.input(&Type::new(ik, &id));
            let upd = self.input(&Type::new(kind, &id));
            let members = format!("Axis: {axis}, Reduction: {red}");
            self.simple(
                "scatterelements",
                &data_ty,
                &[data, idx, upd],
                &[],
                &members,
            );
            return;
        }
        let k = self.rng.range(1, rank as i64) as usize;
        let mut id = Vec::new();
        if self.rng.chance(70) {
            id.push(self.rng.range(1, 4) as u64);
        }
        let mut ud = id.clone();
        ud.extend(&data_ty.dims[k..]);
        if ud.is_empty() {
            ud.push(1);
        }
        id.push(k as u64);
        let data = self.input(&data_ty);
        let idx = self.input(&Type::new(ik, &id));
        let upd = self.input(&Type::new(kind, &ud));
        let members = format!("Reduction: {red}");
        self.simple("scatternd", &data_ty, &[data, idx, upd], &[], &members);
    }

    fn one_hot(&mut self) {
        let rank = self.rng.range(1, 3) as usize;
        let id = self.dims(rank);
        let ik = self.index_kind();
        let idx = self.input(&Type::new(ik, &id));
        let axis = self.rng.below(rank as u64 + 1) as usize;
        let mut dd = id;
        dd.insert(axis, self.rng.range(1, 5) as u64);
        let kind = self.arith_kind();
        let (mut off, mut on) = (String::new(), String::new());
        format_f32(self.rng.unit() * 4.0, &mut off);
        format_f32(self.rng.unit() * 4.0, &mut on);
        let members = format!("Axis: {axis}, OffValue: {off}, OnValue: {on}");
        self.simple("onehot", &Type::new(kind, &dd), &[idx], &[], &members);
    }

    fn arg_min_max(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::ArgMinMax));
        let ty = self.float_ty(1, 3);
        let src = self.input(&ty);
        let axis = self.rng.below(ty.rank() as u64) as usize;
        let (keep, last) = (self.rng.chance(50), self.rng.chance(50));
        let mut dd = ty.dims.clone();
        if keep {
            dd[axis] = 1;
        } else {
            dd.remove(axis);
        }
        if dd.is_empty() {
            dd.push(1);
        }
        let members = format!("Axis: {axis}, KeepDims: {keep}, SelectLastIndex: {last}");
        let dest = Type::new(self.index_kind(), &dd);
        self.simple(op.name(), &dest, &[src], &[], &members);
    }

    /// `topk`: the K largest or smallest of each last-dimension row, with
    /// index32 or index64 indices.
    fn topk(&mut self) {
        let ty = self.float_ty(1, 3);
        let src = self.input(&ty);
        let n = *ty.dims.last().unwrap_or(&1);
        let k = self.rng.range(1, n as i64) as u64;
        let mut kd = ty.dims.clone();
        if let Some(last) = kd.last_mut() {
            *last = k;
        }
        let values = self.output(&Type::float(&kd), &[src]);
        let idx_ty = Type::new(self.index_kind(), &kd);
        let indices = self.output(&idx_ty, &[src, values]);
        let largest = self.rng.chance(50);
        let members = format!("K: {k}, Largest: {largest}");
        let name = self.fresh("i");
        let ops: Ops = vec![("@out", values), ("@out", indices), ("@in", src)];
        self.emit(&name, "topk", &ops, &members);
        self.wrote(&[values, indices]);
    }

    fn rank_dims(&mut self, lo: i64, hi: i64) -> Vec<u64> {
        let rank = self.rng.range(lo, hi) as usize;
        self.dims(rank)
    }

    /// The rearranging instructions (`pad` in every mode, the resizes,
    /// `spacetodepth`, `flip`, `cumsum`, `nonzero`, `mean`, `concat`), picked
    /// from the family.
    fn rearrange(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::Rearrange));
        let mut kind = self.any_kind();
        if matches!(kind, ElemKind::Float16 | ElemKind::BFloat16) {
            kind = ElemKind::Float;
        }
        match op {
            Opcode::Pad => {
                let ty = Type::new(kind, &self.rank_dims(1, 3));
                let r = ty.dims.len();
                let mut pads = vec![0i64; 2 * r];
                let mut out = ty.dims.clone();
                for (k, o) in out.iter_mut().enumerate() {
                    for side in [k, k + r] {
                        let p = self.rng.range(-1, 3);
                        if *o as i64 + p >= 1 {
                            pads[side] = p;
                            *o = (*o as i64 + p) as u64;
                        }
                    }
                }
                let a = self.input(&ty);
                let list: Vec<String> = pads.iter().map(|p| p.to_string()).collect();
                let members = format!(
                    "Pad: [{}], PaddingMode: {}, Value: {}",
                    list.join(", "),
                    self.rng.below(4),
                    self.splat_value(kind)
                );
                self.simple("pad", &Type::new(kind, &out), &[a], &[], &members);
            }
            Opcode::ResizeNearest | Opcode::ResizeBilinear => {
                let bilinear = op == Opcode::ResizeBilinear;
                let rank = if bilinear {
                    4
                } else {
                    self.rng.range(1, 4) as usize
                };
                let ty = Type::new(
                    if bilinear { ElemKind::Float } else { kind },
                    &self.dims(rank),
                );
                let mut scales = Vec::new();
                let mut out = Vec::new();
                for (k, &n) in ty.dims.iter().enumerate() {
                    let mut s = *self.rng.pick(&[0.5f32, 1.0, 1.5, 2.0, 2.5, 3.0]);
                    if (bilinear && (k == 0 || k == 3)) || (n as f32 * s).floor() < 1.0 {
                        s = 1.0;
                    }
                    out.push((n as f32 * s).floor() as u64);
                    let mut t = String::new();
                    format_f32(s, &mut t);
                    scales.push(t);
                }
                let a = self.input(&ty);
                let members = format!("Scale: [{}]", scales.join(", "));
                self.simple(op.name(), &Type::new(ty.elem, &out), &[a], &[], &members);
            }
            Opcode::SpaceToDepth => {
                let b = self.rng.range(1, 2) as u64;
                let mut d = self.dims(4);
                d[1] *= b;
                d[2] *= b;
                let ty = Type::new(kind, &d);
                let a = self.input(&ty);
                let out = Type::new(kind, &[d[0], d[1] / b, d[2] / b, d[3] * b * b]);
                self.simple("spacetodepth", &out, &[a], &[], &format!("BlockSize: {b}"));
            }
            Opcode::Flip => {
                let ty = Type::new(kind, &self.rank_dims(1, 3));
                let axis = self.rng.below(ty.dims.len() as u64);
                let a = self.input(&ty);
                self.simple("flip", &ty, &[a], &[], &format!("Axis: {axis}"));
            }
            Opcode::CumSum => {
                let kind = self.arith_kind();
                let ty = Type::new(kind, &self.rank_dims(1, 3));
                let r = ty.dims.len() as i64;
                let dim = self.rng.range(-r, r - 1);
                let a = self.input(&ty);
                let members = format!(
                    "Dim: {dim}, Exclusive: {}, Reverse: {}",
                    self.rng.chance(50),
                    self.rng.chance(50)
                );
                self.simple("cumsum", &ty, &[a], &[], &members);
            }
            Opcode::Mean => {
                let ty = self.float_ty(1, 3);
                let r = ty.dims.len();
                let mut dims: Vec<usize> = (0..r).filter(|_| self.rng.chance(50)).collect();
                if dims.is_empty() {
                    dims.push(self.rng.below(r as u64) as usize);
                }
                let keep = self.rng.chance(50);
                let mut out: Vec<u64> = (0..r)
                    .filter_map(|k| match (dims.contains(&k), keep) {
                        (false, _) => Some(ty.dims[k]),
                        (true, true) => Some(1),
                        (true, false) => None,
                    })
                    .collect();
                if out.is_empty() {
                    out.push(1);
                }
                if self.rng.chance(50) {
                    dims.reverse();
                }
                let a = self.input(&ty);
                let list: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
                let members = format!("MeanDims: [{}]", list.join(", "));
                self.simple("mean", &Type::float(&out), &[a], &[], &members);
            }
            Opcode::Concat => {
                let base = self.rank_dims(1, 3);
                let axis = self.rng.below(base.len() as u64) as usize;
                let n = self.rng.range(1, 3);
                let mut ins = Vec::new();
                let mut out = base.clone();
                out[axis] = 0;
                for _ in 0..n {
                    let mut d = base.clone();
                    d[axis] = self.rng.range(1, 3) as u64;
                    out[axis] += d[axis];
                    ins.push(self.input(&Type::new(kind, &d)));
                }
                let members = format!("Axis: {axis}");
                self.simple("concat", &Type::new(kind, &out), &ins, &[], &members);
            }
            Opcode::Bucketize => {
                let ty = self.float_ty(1, 3);
                let a = self.input(&ty);
                let mut bounds: Vec<f32> =
                    (0..self.rng.below(5)).map(|_| self.rng.unit()).collect();
                bounds.sort_by(f32::total_cmp);
                let list: Vec<String> = bounds
                    .iter()
                    .map(|&v| {
                        let mut t = String::new();
                        format_f32(v, &mut t);
                        t
                    })
                    .collect();
                let out = Type::new(ElemKind::Index32, &ty.dims);
                let members = format!("Boundaries: [{}]", list.join(", "));
                self.simple("bucketize", &out, &[a], &[], &members);
            }
            Opcode::BatchOneHot => {
                let kind = *self.rng.pick(&[
                    ElemKind::Float,
                    ElemKind::Index64,
                    ElemKind::Index32,
                    ElemKind::Int8,
                ]);
                let d = self.dims(2);
                let v = self.rng.range(1, 6) as u64;
                let data = self.input(&Type::new(kind, &d));
                let lengths = self.input(&Type::new(ElemKind::Index32, &[d[1]]));
                let values = self.input(&Type::new(kind, &[v]));
                let out = Type::new(kind, &[d[0], v]);
                self.simple("batchonehot", &out, &[data, lengths, values], &[], "");
            }
            Opcode::ScatterData => {
                let cumulative = self.rng.chance(50);
                let kind = if cumulative { self.arith_kind() } else { kind };
                let d = self.rank_dims(1, 3);
                let k = self.rng.range(1, d.len() as i64) as usize;
                let n = self.rng.range(1, 4) as u64;
                let data_ty = Type::new(kind, &d);
                let ik = self.index_kind();
                let idx = self.input(&Type::new(ik, &[n, k as u64]));
                let mut sd = vec![n];
                sd.extend_from_slice(&d[k..]);
                let sl = self.input(&Type::new(kind, &sd));
                let mut data = self.inout(&data_ty);
                if self.overlaps_any(data, &[idx, sl]) {
                    data = self.new_weight(&data_ty, true, false);
                }
                let name = self.fresh("i");
                let ops: Ops = vec![("@inout", data), ("@in", idx), ("@in", sl)];
                self.emit(
                    &name,
                    "scatterdata",
                    &ops,
                    &format!("Cumulative: {cumulative}"),
                );
                self.wrote(&[data]);
            }
            Opcode::AdaptiveAvgPool => {
                let d = self.dims(4);
                let a = self.input(&Type::float(&d));
                let (h, w) = (self.rng.range(1, 5) as u64, self.rng.range(1, 5) as u64);
                self.simple(
                    "adaptiveavgpool",
                    &Type::float(&[d[0], h, w, d[3]]),
                    &[a],
                    &[],
                    "",
                );
            }
            Opcode::GaussianFill => {
                let d = self.rank_dims(1, 3);
                let shape = self.input(&Type::new(kind, &d));
                let (mut mean, mut scale) = (String::new(), String::new());
                format_f32(self.rng.unit(), &mut mean);
                format_f32(self.rng.unit().abs() * 2.0, &mut scale);
                let members = format!(
                    "Mean: {mean}, Scale: {scale}, Seed: {}",
                    self.rng.range(-5, 1000)
                );
                self.simple("gaussianfill", &Type::float(&d), &[shape], &[], &members);
            }
            Opcode::IndexAdd => {
                let d = self.rank_dims(1, 3);
                let dim = self.rng.below(d.len() as u64) as usize;
                let n = self.rng.range(1, 5) as u64;
                let mut sd = d.clone();
                sd[dim] = n;
                let input = self.input(&Type::float(&d));
                let ik = self.index_kind();
                let idx = self.input(&Type::new(ik, &[n]));
                let src = self.input(&Type::float(&sd));
                let mut alpha = String::new();
                format_f32(self.rng.unit() * 2.0, &mut alpha);
                let members = format!("Dim: {dim}, Alpha: {alpha}");
                self.simple(
                    "indexadd",
                    &Type::float(&d),
                    &[input, idx, src],
                    &[],
                    &members,
                );
            }
            _ => {
                let ty = Type::new(ElemKind::Bool, &self.rank_dims(1, 3));
                let a = self.input(&ty);
                let out = Type::new(ElemKind::Index32, &[ty.size()]);
                self.simple(op.name(), &out, &[a], &[], "");
            }
        }
    }

    /// `relugrad`/`sigmoidgrad`/`tanhgrad`, now and then in place of
    /// `DestGrad` (the table's pair).
    /// `batchedpairwisedotproduct` over a variadic list of 2 to 4 inputs,
    /// half the time followed by its gradient (two lists).
    fn pairwise_dot(&mut self) {
        let n = self.rng.range(2, 4) as u64;
        let (b, v) = (self.rng.range(1, 4) as u64, self.rng.range(1, 6) as u64);
        let vt = Type::float(&[b, v]);
        let pt = Type::float(&[b, n * (n - 1) / 2]);
        let srcs: Vec<usize> = (0..n).map(|_| self.input(&vt)).collect();
        let members = format!("NumInputs: {n}, VectorSize: {v}");
        self.simple("batchedpairwisedotproduct", &pt, &srcs, &[], &members);
        if self.rng.chance(50) {
            let dg = self.input(&pt);
            let mut taken = srcs.clone();
            taken.push(dg);
            let mut grads = Vec::new();
            for _ in 0..n {
                let g = self.output(&vt, &taken);
                taken.push(g);
                grads.push(g);
            }
            let mut ops: Ops = vec![("@in", dg)];
            ops.extend(grads.iter().map(|&g| ("@out", g)));
            ops.extend(srcs.iter().map(|&x| ("@in", x)));
            let name = self.fresh("i");
            self.emit(&name, "batchedpairwisedotproductgrad", &ops, &members);
            self.wrote(&grads);
        }
    }

    /// `thresholdgrad`, its threshold in [-1, 1).
    fn threshold_grad(&mut self) {
        let ty = self.float_ty(1, 4);
        let g = self.input(&ty);
        let x = self.input(&ty);
        let mut t = String::new();
        format_f32(self.rng.unit(), &mut t);
        self.simple(
            "thresholdgrad",
            &ty,
            &[g, x],
            &[0],
            &format!("Threshold: {t}"),
        );
    }

    fn activation_grad(&mut self) {
        let op = *self.rng.pick(&Self::of_family(Family::ActivationGrad));
        let ty = self.float_ty(1, 4);
        let d = self.input(&ty);
        let g = self.input(&ty);
        let apart = self.bufs[g].origin != self.bufs[d].origin;
        let out = if apart && self.writable(g) && self.rng.chance(20) {
            g
        } else {
            self.output(&ty, &[d, g])
        };
        let name = self.fresh("i");
        let ops = vec![("@in", d), ("@in", g), ("@out", out)];
        self.emit(&name, op.name(), &ops, "");
        self.wrote(&[out]);
    }

    /// `softmaxgrad`, `crossentropyloss` or `crossentropylossgrad` over a
    /// 2-D `[N, C]` with one label per row (`[N]` or `[N, 1]`; random
    /// labels may be out of range, which gives NaN, never a bad read).
    fn loss(&mut self) {
        let ty = self.float_ty(2, 2);
        let n = ty.dims[0];
        let p = self.input(&ty);
        let kind = self.index_kind();
        let ld = if self.rng.chance(50) {
            vec![n]
        } else {
            vec![n, 1]
        };
        let lt = Type::new(kind, &ld);
        let lab = self.input(&lt);
        let name = self.fresh("i");
        match self.rng.below(3) {
            0 => {
                let src = self.input(&ty);
                let out = self.output(&ty, &[p, src, lab]);
                let ops = vec![("@in", p), ("@in", src), ("@in", lab), ("@out", out)];
                self.emit(&name, "softmaxgrad", &ops, "");
                self.wrote(&[out]);
            }
            1 => {
                let ce = self.output(&Type::float(&[1]), &[p, lab]);
                let ops = vec![("@in", p), ("@in", lab), ("@out", ce)];
                self.emit(&name, "crossentropyloss", &ops, "");
                self.wrote(&[ce]);
            }
            _ => {
                let cg = self.input(&Type::float(&[1]));
                let pg = self.output(&ty, &[cg, p, lab]);
                let lg = self.output(&lt, &[cg, p, lab, pg]);
                let ops = vec![
                    ("@in", cg),
                    ("@in", p),
                    ("@in", lab),
                    ("@out", pg),
                    ("@out", lg),
                ];
                self.emit(&name, "crossentropylossgrad", &ops, "");
                self.wrote(&[pg, lg]);
            }
        }
    }

    /// `sgd` with a random subset of its members; `Weight` and `Velocity`
    /// are defined buffers of their own, apart from `Gradient`.
    fn sgd(&mut self) {
        let ty = self.float_ty(1, 4);
        let g = self.input(&ty);
        let mut w = self.inout(&ty);
        if self.bufs[w].origin == self.bufs[g].origin {
            w = self.new_weight(&ty, true, false);
        }
        let mut v = self.inout(&ty);
        if self.overlaps_any(v, &[g, w]) {
            v = self.new_weight(&ty, true, false);
        }
        let mut members = Vec::new();
        for (key, scale) in [
            ("LearningRate", 0.5f32),
            ("Momentum", 1.0),
            ("L1Decay", 0.01),
            ("L2Decay", 0.01),
        ] {
            if key == "LearningRate" || self.rng.chance(50) {
                let mut t = String::new();
                format_f32(self.rng.unit().abs() * scale, &mut t);
                members.push(format!("{key}: {t}"));
            }
        }
        if self.rng.chance(50) {
            members.push(format!("BatchSize: {}", self.rng.range(1, 8)));
        }
        let name = self.fresh("i");
        let ops = vec![("@inout", w), ("@in", g), ("@inout", v)];
        self.emit(&name, "sgd", &ops, &members.join(", "));
        self.wrote(&[w, v]);
    }

    /// `quantizationprofile`: a float tensor added to a state of its own,
    /// most often the state Glow starts with, else seeded values.
    fn quantization_profile(&mut self) {
        let ty = self.float_ty(1, 4);
        let x = self.input(&ty);
        let bins = self.rng.range(1, 40) as u64;
        let h = self.new_weight(&Type::float(&[bins]), true, false);
        let ci = self.new_weight(&Type::float(&[2]), true, false);
        if self.rng.chance(70) {
            self.bufs[h].data = Some("splat(0.0)".to_string());
            self.bufs[ci].data = Some("[3.4028235e38, -3.4028235e38]".to_string());
        }
        let name = self.fresh("i");
        let ops = vec![("@in", x), ("@inout", h), ("@inout", ci)];
        self.emit(&name, "quantizationprofile", &ops, "");
        self.wrote(&[h, ci]);
    }

    fn layernorm(&mut self) {
        let ty = self.float_ty(1, 4);
        let last = Type::float(&[*ty.dims.last().unwrap_or(&1)]);
        let src = self.input(&ty);
        let scale = self.input(&last);
        let bias = self.input(&last);
        let members = if self.rng.chance(50) {
            "Epsilon: 0.001"
        } else {
            ""
        };
        self.simple("layernormalization", &ty, &[src, scale, bias], &[], members);
    }

    /// `localresponsenormalization`, now and then followed by its gradient.
    fn lrn(&mut self) {
        let ty = self.float_ty(2, 4);
        let src = self.input(&ty);
        let dest = self.output(&ty, &[src]);
        let scale = self.output(&ty, &[src, dest]);
        let hw = self.rng.range(0, 2);
        let name = self.fresh("i");
        let members = format!("HalfWindowSize: {hw}, Alpha: 0.0001, Beta: 0.75, K: 2.0");
        self.emit(
            &name,
            "localresponsenormalization",
            &vec![("@out", dest), ("@in", src), ("@out", scale)],
            &members,
        );
        self.wrote(&[dest, scale]);
        // Half the time its gradient, over the forward's own Dest and Scale
        // (a random Scale would be negative, and its power NaN).
        if self.rng.chance(50) {
            let dest_grad = self.input(&ty);
            let sg = self.output(&ty, &[dest, src, scale, dest_grad]);
            let ops: Ops = vec![
                ("@in", dest),
                ("@in", src),
                ("@in", scale),
                ("@in", dest_grad),
                ("@out", sg),
            ];
            let name = self.fresh("i");
            self.emit(&name, "localresponsenormalizationgrad", &ops, &members);
            self.wrote(&[sg]);
        }
    }

    /// An `i8` or `ui8` kind with an offset inside its range.
    fn q8(&mut self) -> ElemKind {
        let b = self.rng.below(2) as u8;
        self.quant_kind(b)
    }

    /// A constant weight with the given inline data.
    fn const_data(&mut self, ty: &Type, data: String) -> usize {
        let name = self.fresh("w");
        let b = self.push(name, ty.clone(), Role::Const, None);
        self.bufs[b].data = Some(data);
        b
    }

    /// The integer quantized kernels (docs/quantization.md): products with
    /// `i32` biases of scale input × filter, channel-wise convolutions,
    /// element-wise arithmetic, activations (also as fuse-activations'
    /// pattern) and pools, on `i8`/`ui8` mixed.
    fn quantized(&mut self) {
        let scale = |k: ElemKind| k.quant().map_or(1.0, |q| q.0);
        match self.rng.below(6) {
            0 | 1 => {
                let channelwise = self.rng.chance(40);
                let nchw = !channelwise && self.rng.chance(25);
                let group = *self.rng.pick(&[1u64, 1, 2]);
                let (cpg, opg) = (self.rng.range(1, 3) as u64, self.rng.range(1, 3) as u64);
                let (c, oc) = (group * cpg, group * opg);
                let (k, st, pads, dil, [h, w]) = self.window(true);
                let oh = Self::out_extent(k[0], st[0], pads[0], pads[2], dil[0], h);
                let ow = Self::out_extent(k[1], st[1], pads[1], pads[3], dil[1], w);
                let (src_d, filt_d, dest_d) = if nchw {
                    ([1, c, h, w], [oc, cpg, k[0], k[1]], [1, oc, oh, ow])
                } else {
                    ([1, h, w, c], [oc, k[0], k[1], cpg], [1, oh, ow, oc])
                };
                let (sk, fk, dk) = (self.q8(), self.q8(), self.q8());
                let src = self.input(&Type::new(sk, &src_d));
                let (act, args) = match self.rng.below(4) {
                    0 => ("RELU", "[]"),
                    1 => ("CLIP", "[-0.5, 0.75]"),
                    _ => ("NONE", "[]"),
                };
                let mut members = format!(
                    "Kernels: {}, Strides: {}, Pads: {}, Group: {group}, Dilation: {}, FusedActivation: {act}, FusedActivationArgs: {args}",
                    Self::list(&k),
                    Self::list(&st),
                    Self::list(&pads),
                    Self::list(&dil),
                );
                let dest_ty = Type::new(dk, &dest_d);
                if channelwise {
                    let fk = unit_params(fk);
                    let filter = self.new_weight(&Type::new(fk, &filt_d), false, false);
                    let bias = self.input(&Type::new(
                        ElemKind::Int32Q {
                            scale: 1.0,
                            offset: 0,
                        },
                        &[oc],
                    ));
                    let scales: Vec<f32> = (0..oc)
                        .map(|_| *self.rng.pick(&[0.5f32, 0.25, 0.125, 0.0625, 0.1, 0.03125]))
                        .collect();
                    let offs: Vec<i64> = (0..oc).map(|_| self.rng.range(-3, 3)).collect();
                    let fmt = |v: &[String]| format!("[{}]", v.join(", "));
                    let f32s = |v: &[f32]| {
                        fmt(&v
                            .iter()
                            .map(|x| {
                                let mut s = String::new();
                                format_f32(*x, &mut s);
                                s
                            })
                            .collect::<Vec<_>>())
                    };
                    let sx = scale(sk);
                    let bs: Vec<f32> = scales.iter().map(|&f| sx * f).collect();
                    let fs = self.const_data(&Type::float(&[oc]), f32s(&scales));
                    let fo = self.const_data(
                        &Type::new(ElemKind::Index32, &[oc]),
                        fmt(&offs.iter().map(|o| o.to_string()).collect::<Vec<_>>()),
                    );
                    let bsw = self.const_data(&Type::float(&[oc]), f32s(&bs));
                    let bo = self
                        .const_data(&Type::new(ElemKind::Index32, &[oc]), "splat(0)".to_string());
                    self.simple(
                        "channelwisequantizedconvolution",
                        &dest_ty,
                        &[src, filter, bias, fs, fo, bsw, bo],
                        &[],
                        &members,
                    );
                    return;
                }
                members.push_str(if nchw {
                    ", Layout: NCHW"
                } else {
                    ", Layout: NHWC"
                });
                let filt_ty = Type::new(fk, &filt_d);
                let filter = if self.rng.chance(70) {
                    self.new_weight(&filt_ty, false, false)
                } else {
                    self.input(&filt_ty)
                };
                let bk = ElemKind::Int32Q {
                    scale: scale(sk) * scale(fk),
                    offset: 0,
                };
                let bias = self.input(&Type::new(bk, &[oc]));
                let d = self.simple("convolution", &dest_ty, &[src, filter, bias], &[], &members);
                if act == "NONE" && self.bufs[d].role == Role::Alloc && self.rng.chance(50) {
                    if self.rng.chance(50) {
                        self.simple("relu", &dest_ty, &[d], &[], "");
                    } else {
                        self.simple("clip", &dest_ty, &[d], &[], "Min: -0.25, Max: 0.5");
                    }
                    if self.rng.chance(70) {
                        self.dealloc(d);
                    }
                }
            }
            2 => {
                let (xk, wk, dk) = (self.q8(), self.q8(), self.q8());
                let [a, z, b] = [0; 3].map(|_: u64| self.rng.range(1, 7) as u64);
                match self.rng.below(6) {
                    4 | 5 => {
                        // Dynamic: float rows quantized at run time, `i8`
                        // weights per tensor or (5) per column.
                        let src = self.input(&Type::float(&[a, z]));
                        let rowwise = self.rng.chance(50);
                        let wk = if rowwise {
                            unit_params(ElemKind::Int8Q {
                                scale: 1.0,
                                offset: 0,
                            })
                        } else {
                            self.quant_kind(0)
                        };
                        let wt = Type::new(wk, &[z, b]);
                        let weights = if self.rng.chance(70) {
                            self.new_weight(&wt, false, false)
                        } else {
                            self.input(&wt)
                        };
                        let bias = self.input(&Type::float(&[b]));
                        let mut ops = vec![src, weights, bias];
                        if rowwise {
                            let scales: Vec<String> = (0..b)
                                .map(|_| {
                                    let mut t = String::new();
                                    format_f32(
                                        *self.rng.pick(&[0.5f32, 0.25, 0.1, 0.03125]),
                                        &mut t,
                                    );
                                    t
                                })
                                .collect();
                            let offs: Vec<String> = (0..b)
                                .map(|_| self.rng.range(-128, 127).to_string())
                                .collect();
                            ops.push(self.const_data(
                                &Type::float(&[b]),
                                format!("[{}]", scales.join(", ")),
                            ));
                            ops.push(self.const_data(
                                &Type::new(ElemKind::Index32, &[b]),
                                format!("[{}]", offs.join(", ")),
                            ));
                        }
                        let op = if rowwise {
                            "dynamicrowwisequantizedfullyconnected"
                        } else {
                            "dynamicquantizedfullyconnected"
                        };
                        self.simple(op, &Type::float(&[a, b]), &ops, &[], "");
                    }
                    3 => {
                        // Row-wise: `b x z` weights, a scale and offset per row.
                        let src = self.input(&Type::new(xk, &[a, z]));
                        let wk = unit_params(wk);
                        let wt = Type::new(wk, &[b, z]);
                        let weights = if self.rng.chance(70) {
                            self.new_weight(&wt, false, false)
                        } else {
                            self.input(&wt)
                        };
                        let bk = ElemKind::Int32Q {
                            scale: scale(xk) * 0.1,
                            offset: 0,
                        };
                        let bias = self.input(&Type::new(bk, &[b]));
                        let scales: Vec<String> = (0..b)
                            .map(|_| {
                                let mut t = String::new();
                                format_f32(*self.rng.pick(&[0.5f32, 0.25, 0.1, 0.03125]), &mut t);
                                t
                            })
                            .collect();
                        let offs: Vec<String> =
                            (0..b).map(|_| self.rng.range(-3, 3).to_string()).collect();
                        let sw =
                            self.const_data(&Type::float(&[b]), format!("[{}]", scales.join(", ")));
                        let ow = self.const_data(
                            &Type::new(ElemKind::Index32, &[b]),
                            format!("[{}]", offs.join(", ")),
                        );
                        self.simple(
                            "rowwisequantizedfullyconnected",
                            &Type::new(dk, &[a, b]),
                            &[src, weights, bias, sw, ow],
                            &[],
                            "",
                        );
                    }
                    0 => {
                        let src = self.input(&Type::new(xk, &[a, z]));
                        let wt = Type::new(wk, &[z, b]);
                        let weights = if self.rng.chance(70) {
                            self.new_weight(&wt, false, false)
                        } else {
                            self.input(&wt)
                        };
                        let bk = ElemKind::Int32Q {
                            scale: scale(xk) * scale(wk),
                            offset: 0,
                        };
                        let bias = self.input(&Type::new(bk, &[b]));
                        self.simple(
                            "fullyconnected",
                            &Type::new(dk, &[a, b]),
                            &[src, weights, bias],
                            &[],
                            "",
                        );
                    }
                    1 => {
                        let l = self.input(&Type::new(xk, &[a, z]));
                        let r = self.input(&Type::new(wk, &[z, b]));
                        self.simple("matmul", &Type::new(dk, &[a, b]), &[l, r], &[], "");
                    }
                    _ => {
                        let n = self.rng.range(1, 3) as u64;
                        let l = self.input(&Type::new(xk, &[n, a, z]));
                        let r = self.input(&Type::new(wk, &[n, z, b]));
                        self.simple("batchmatmul", &Type::new(dk, &[n, a, b]), &[l, r], &[], "");
                    }
                }
            }
            3 => {
                let op = *self.rng.pick(&[
                    "elementadd",
                    "elementsub",
                    "elementmul",
                    "elementmax",
                    "elementmin",
                    "batchedadd",
                ]);
                let rank = self.rng.range(if op == "batchedadd" { 2 } else { 1 }, 4) as usize;
                let d = self.dims(rank);
                let (lk, rk, dk) = (self.q8(), self.q8(), self.q8());
                let l = self.input(&Type::new(lk, &d));
                let rd: &[u64] = if op == "batchedadd" { &d[1..] } else { &d };
                let r = self.input(&Type::new(rk, rd));
                self.simple(op, &Type::new(dk, &d), &[l, r], &[], "");
            }
            4 => {
                let rank = self.rng.range(1, 4) as usize;
                let d = self.dims(rank);
                let (sk, dk) = (self.q8(), self.q8());
                let src = self.input(&Type::new(sk, &d));
                if self.rng.chance(30) {
                    let table = self.input(&Type::new(dk, &[256]));
                    self.simple("intlookuptable", &Type::new(dk, &d), &[src, table], &[], "");
                } else if self.rng.chance(50) {
                    self.simple("relu", &Type::new(dk, &d), &[src], &[], "");
                } else {
                    self.simple(
                        "clip",
                        &Type::new(dk, &d),
                        &[src],
                        &[],
                        "Min: -0.3, Max: 0.6",
                    );
                }
            }
            _ => {
                let avg = self.rng.chance(50);
                let c = self.rng.range(1, 4) as u64;
                let (k, st, pads, dil, [h, w]) = self.window(!avg);
                let oh = Self::out_extent(k[0], st[0], pads[0], pads[2], dil[0], h);
                let ow = Self::out_extent(k[1], st[1], pads[1], pads[3], dil[1], w);
                let (sk, dk) = (self.q8(), self.q8());
                let src = self.input(&Type::new(sk, &[1, h, w, c]));
                let mut members = format!(
                    "Kernels: {}, Strides: {}, Pads: {}, Dilation: {}",
                    Self::list(&k),
                    Self::list(&st),
                    Self::list(&pads),
                    Self::list(&dil)
                );
                if avg {
                    let _ = write!(members, ", CountIncludePads: {}", self.rng.chance(50));
                }
                let op = if avg { "avgpool" } else { "maxpool" };
                self.simple(op, &Type::new(dk, &[1, oh, ow, c]), &[src], &[], &members);
            }
        }
    }

    fn quantize(&mut self) {
        let rank = self.rng.range(1, 4) as usize;
        let d = self.dims(rank);
        let src = self.input(&Type::float(&d));
        if self.rng.chance(40) {
            let (byte, params, members) = self.per_axis(&d);
            let ins = [src, params[0], params[1]];
            self.simple("quantize", &Type::new(byte, &d), &ins, &[], &members);
            return;
        }
        let base = *self.rng.pick(&QUANT_BASES);
        let q = self.quant_kind(base);
        self.simple("quantize", &Type::new(q, &d), &[src], &[], "");
    }

    fn dequantize(&mut self) {
        let rank = self.rng.range(1, 4) as usize;
        let d = self.dims(rank);
        if self.rng.chance(40) {
            let (byte, params, members) = self.per_axis(&d);
            let src = self.input(&Type::new(byte, &d));
            let ins = [src, params[0], params[1]];
            self.simple("dequantize", &Type::float(&d), &ins, &[], &members);
            return;
        }
        let base = *self.rng.pick(&QUANT_BASES);
        let q = self.quant_kind(base);
        let src = self.input(&Type::new(q, &d));
        self.simple("dequantize", &Type::float(&d), &[src], &[], "");
    }

    /// The per-axis form's byte kind, its `Scales` (positive constants) and
    /// `Offsets` (constants) along a random axis of `d`, and its members.
    fn per_axis(&mut self, d: &[u64]) -> (ElemKind, [usize; 2], String) {
        let byte = *self.rng.pick(&[ElemKind::Int8, ElemKind::UInt8]);
        let axis = self.rng.range(0, d.len() as i64 - 1) as usize;
        let n = d[axis];
        let scales = self.new_weight(&Type::float(&[n]), false, true);
        let offsets = self.new_weight(&Type::new(ElemKind::Index32, &[n]), false, false);
        (byte, [scales, offsets], format!("Axis: {axis}"))
    }

    /// `convertto` between two plain kinds (the same one is a copy).
    fn convert(&mut self) {
        use ElemKind::*;
        const PLAIN: [ElemKind; 6] = [Float, Index32, Index64, Int8, UInt8, Bool];
        let rank = self.rng.range(1, 4) as usize;
        let d = self.dims(rank);
        let (s, t) = (*self.rng.pick(&PLAIN), *self.rng.pick(&PLAIN));
        let src = self.input(&Type::new(s, &d));
        self.simple("convertto", &Type::new(t, &d), &[src], &[], "");
    }

    fn rescale(&mut self) {
        let rank = self.rng.range(1, 4) as usize;
        let d = self.dims(rank);
        let base = *self.rng.pick(&QUANT_BASES);
        let (a, b) = (self.quant_kind(base), self.quant_kind(base));
        if self.rng.chance(30) && a.quant_range().is_some_and(|r| r.1 <= 255) {
            // Per axis: the bytes' parameters are constants in their range
            // (the multipliers are derived when compiling).
            let (byte, [scales, offsets], members) = self.per_axis(&d);
            let (lo, hi) = if byte == ElemKind::Int8 {
                (-128, 127)
            } else {
                (0, 255)
            };
            let n = self.bufs[offsets].ty.size() as usize;
            let offs: Vec<String> = (0..n).map(|_| self.rng.range(lo, hi).to_string()).collect();
            self.bufs[offsets].data = Some(format!("[{}]", offs.join(", ")));
            let src = self.input(&Type::new(byte, &d));
            let ins = [src, scales, offsets];
            self.simple("rescalequantized", &Type::new(b, &d), &ins, &[], &members);
            return;
        }
        let src = self.input(&Type::new(a, &d));
        self.simple("rescalequantized", &Type::new(b, &d), &[src], &[], "");
    }

    fn splat_value(&mut self, kind: ElemKind) -> String {
        let mut s = String::new();
        match kind {
            ElemKind::Bool => s.push_str(if self.rng.chance(50) { "1" } else { "0" }),
            ElemKind::Index32 | ElemKind::Index64 => {
                format_f32(self.rng.range(-3, 8) as f32 + self.rng.unit() * 0.5, &mut s)
            }
            _ => format_f32(self.rng.unit() * 4.0, &mut s),
        }
        s
    }

    fn splat(&mut self) {
        let mut kind = self.any_kind();
        if matches!(kind, ElemKind::Float16 | ElemKind::BFloat16) {
            kind = ElemKind::Float;
        }
        let rank = self.rng.range(1, 4) as usize;
        let ty = Type::new(kind, &self.dims(rank));
        let v = self.splat_value(kind);
        self.simple("splat", &ty, &[], &[], &format!("Value: {v}"));
    }

    /// `touch` on a fresh or reused alloc: its contents are undefined after.
    fn touch(&mut self) {
        let rank = self.rng.range(1, 3) as usize;
        let ty = Type::new(self.any_kind(), &self.dims(rank));
        let live: Vec<usize> = (0..self.bufs.len())
            .filter(|&b| self.bufs[b].role == Role::Alloc && self.bufs[b].live)
            .collect();
        let a = if !live.is_empty() && self.rng.chance(40) {
            *self.rng.pick(&live)
        } else {
            self.alloc(&ty)
        };
        let name = self.fresh("i");
        self.emit(&name, "touch", &vec![("@out", a)], "");
        self.bufs[a].defined = false;
    }

    fn copy(&mut self) {
        let rank = self.rng.range(1, 4) as usize;
        let ty = Type::new(self.any_kind(), &self.dims(rank));
        let src = self.input(&ty);
        self.simple("copy", &ty, &[src], &[0], "");
    }

    fn debugprint(&mut self) {
        let printable: Vec<usize> = (0..self.bufs.len())
            .filter(|&b| {
                self.readable(b)
                    && !matches!(
                        self.bufs[b].ty.elem,
                        ElemKind::Float16 | ElemKind::BFloat16 | ElemKind::Fused(_)
                    )
            })
            .collect();
        let src = if printable.is_empty() {
            self.input(&Type::float(&[3]))
        } else {
            *self.rng.pick(&printable)
        };
        let name = self.fresh("i");
        let members = if self.rng.chance(50) {
            String::new()
        } else {
            "Format: \"console\", FileName: \"\"".to_string()
        };
        self.emit(&name, "debugprint", &vec![("@in", src)], &members);
    }

    /// A view that nothing may use (dead-alloc removes it), or a reshape
    /// of a live buffer that later steps pick up as an input.
    fn free_view(&mut self) {
        let live: Vec<usize> = (0..self.bufs.len()).filter(|&b| self.alive(b)).collect();
        if live.is_empty() {
            return self.binary();
        }
        let src = *self.rng.pick(&live);
        let s = self.bufs[src].ty.clone();
        let total = s.size();
        let n = if self.rng.chance(50) {
            total
        } else {
            self.rng.range(1, total as i64) as u64
        };
        // Split n into up to three factors.
        let mut dims = Vec::new();
        let mut rest = n;
        for _ in 0..self.rng.range(0, 2) {
            let divs: Vec<u64> = (1..=rest).filter(|d| rest % d == 0).collect();
            let d = *self.rng.pick(&divs);
            dims.push(d);
            rest /= d;
        }
        dims.push(rest);
        self.view_of(src, &Type::new(s.elem, &dims));
    }

    // ---- lifetimes ----

    fn dealloc(&mut self, b: usize) {
        let name = self.fresh("d");
        self.emit(&name, "deallocactivation", &vec![("@out", b)], "");
        self.bufs[b].live = false;
    }

    fn dealloc_some(&mut self) {
        let live: Vec<usize> = (0..self.bufs.len())
            .filter(|&b| self.bufs[b].role == Role::Alloc && self.bufs[b].live)
            .collect();
        if !live.is_empty() {
            let b = *self.rng.pick(&live);
            self.dealloc(b);
        }
    }

    /// Copies a few results into outputs, then ends every lifetime.
    fn finish(&mut self) {
        let results: Vec<usize> = (0..self.bufs.len())
            .filter(|&b| self.bufs[b].role == Role::Alloc && self.readable(b))
            .collect();
        for _ in 0..2 {
            if results.is_empty() {
                break;
            }
            let b = *self.rng.pick(&results);
            let ty = self.bufs[b].ty.clone();
            let name = self.fresh("out");
            let out = self.push(name, ty, Role::Mutable, None);
            let iname = self.fresh("i");
            self.emit(&iname, "copy", &vec![("@out", out), ("@in", b)], "");
        }
        let mut live: Vec<usize> = (0..self.bufs.len())
            .filter(|&b| self.bufs[b].role == Role::Alloc && self.bufs[b].live)
            .collect();
        self.rng.shuffle(&mut live);
        for b in live {
            self.dealloc(b);
        }
    }
}

/// `k`'s 8-bit kind with scale 1 and offset 0: the type of weights whose
/// parameters come from per-channel or per-row operands.
fn unit_params(k: ElemKind) -> ElemKind {
    match k {
        ElemKind::Int8Q { .. } => ElemKind::Int8Q {
            scale: 1.0,
            offset: 0,
        },
        _ => ElemKind::UInt8Q {
            scale: 1.0,
            offset: 0,
        },
    }
}
