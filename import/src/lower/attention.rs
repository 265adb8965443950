//! ONNX Attention (opsets 23 to 25) lowered onto existing instructions, in
//! the order of operations of ONNX's reference implementation:
//!
//! - 3-D Q/K/V (`[B, S, heads * D]`) are viewed as `[B, S, heads, D]` and
//!   transposed to `[B, heads, S, D]`; 4-D ones are used as they are;
//! - `past_key`/`past_value` are concatenated in front of K/V along the
//!   sequence (`splat` + two `inserttensor`s): `present_key`/`present_value`;
//! - grouped-query attention repeats each K/V head `q_heads / kv_heads`
//!   times (a tile on a view with a unit axis after the head axis);
//! - `Q * sqrt(scale)` and `K^T * sqrt(scale)` (`elementmul` by splats),
//!   `batchmatmul`, the softcap (`tanh(x / c) * c`), `+ bias`, `softmax` on
//!   rows, `batchmatmul` with V, and for 3-D the transpose back.
//!
//! The bias is the attention mask (padded with -inf up to the key length; a
//! constant bool mask becomes 0 / -inf) plus the causal and sliding-window
//! masks, which are constants (0 where allowed, -inf elsewhere). A query row
//! whose bias is all -inf attends nothing and gives zeros, as in the
//! reference: its row maximum is compared with -inf and the softmax output
//! selected against 0 (a constant bias without such rows needs no guard).
//! `nonpad_kv_seqlen` (an int64 input) is unsupported.

use super::elementwise::{apply, broadcast, broadcast_dims};
use super::{dims_of, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::{Data, Tensor};
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Type, Value};

fn act(v: Value, dims: &[u64]) -> Val {
    Val::Act(Act {
        v,
        dims: dims.to_vec(),
        cl: false,
    })
}

/// The node's attributes that shape the computation.
struct Params {
    q_heads: Option<u64>,
    kv_heads: Option<u64>,
    scale: Option<f32>,
    softcap: f32,
    causal: bool,
    mode: i64,
    left: i64,
    right: i64,
}

fn params(l: &Lowerer, node: &NodeProto) -> Result<Params> {
    let a = Attrs(&node.attribute);
    let heads = |name: &str| -> Result<Option<u64>> {
        match a.has(name).then(|| a.int(name, 0)) {
            Some(n) if n <= 0 => Err(l.err(format!("{name} must be positive, found {n}"))),
            n => Ok(n.map(|n| n as u64)),
        }
    };
    let mode = a.int("qk_matmul_output_mode", 0);
    if !(0..=3).contains(&mode) {
        return Err(l.err(format!("qk_matmul_output_mode {mode} (0 to 3 are defined)")));
    }
    // The softmax in another precision than the inputs' float would round
    // differently from the reference.
    if let Some(p) = a
        .has("softmax_precision")
        .then(|| a.int("softmax_precision", 1))
    {
        if p != 1 {
            return Err(l.unsupported(format!(
                "softmax_precision {p} (only 1, FLOAT, the inputs' type)"
            )));
        }
    }
    let (left, right) = (
        a.int("left_window_size", -1),
        a.int("right_window_size", -1),
    );
    if left < -1 || right < -1 {
        return Err(l.err("window sizes must be -1 or non-negative"));
    }
    Ok(Params {
        q_heads: heads("q_num_heads")?,
        kv_heads: heads("kv_num_heads")?,
        scale: a.has("scale").then(|| a.float("scale", 1.0)),
        softcap: a.float("softcap", 0.0),
        causal: a.int("is_causal", 0) != 0,
        mode,
        left,
        right,
    })
}

/// A 4-D `[B, heads, S, D]` plain activation of Q, K or V (3-D inputs are
/// split into heads and transposed).
fn to_heads(
    l: &mut Lowerer,
    v: &Val,
    heads: Option<u64>,
    what: &str,
    out: &str,
    base: &str,
) -> Result<Act> {
    let a = l.act(v);
    let a = l.to_plain(&a, out);
    let d = a.dims.clone();
    match d.len() {
        4 => Ok(a),
        3 => {
            let h = heads
                .ok_or_else(|| l.err(format!("3-D {what} needs q_num_heads and kv_num_heads")))?;
            if !d[2].is_multiple_of(h) {
                return Err(l.err(format!(
                    "{what} hidden size {} is not a multiple of {h} heads",
                    d[2]
                )));
            }
            let split = [d[0], d[1], h, d[2] / h];
            let sv = l.view(&format!("{out}.{what}.split"), a.v, &split);
            let dims = [d[0], h, d[1], d[2] / h];
            let t = l.alloc(&format!("{out}.{what}.heads"), &dims);
            l.transpose(base, t, sv, vec![0, 2, 1, 3]);
            Ok(Act {
                v: t,
                dims: dims.to_vec(),
                cl: false,
            })
        }
        _ => Err(l.err(format!("{what} must be 3-D or 4-D, found {d:?}"))),
    }
}

/// `[past; cur]` along the sequence axis (2) of 4-D activations.
fn concat_seq(
    l: &mut Lowerer,
    past: &Val,
    cur: &Act,
    what: &str,
    name: &str,
    base: &str,
) -> Result<Act> {
    let p = l.act(past);
    let p = l.to_plain(&p, name);
    let (pd, cd) = (&p.dims, &cur.dims);
    if pd.len() != 4 || pd[0] != cd[0] || pd[1] != cd[1] || pd[3] != cd[3] {
        return Err(l.err(format!(
            "{what} has dims {pd:?}, which do not extend {cd:?} along the sequence"
        )));
    }
    let dims = [cd[0], cd[1], pd[2] + cd[2], cd[3]];
    let dest = l.splat_buffer(name, &dims, 0.0);
    for (src, at) in [(p.v, 0), (cur.v, pd[2] as i64)] {
        let members = [m::OFFSETS.to(vec![0, 0, at, 0])];
        l.inst(base, Opcode::InsertTensor, &[dest, src], &members);
    }
    Ok(Act {
        v: dest,
        dims: dims.to_vec(),
        cl: false,
    })
}

/// Each of K's (or V's) heads repeated `reps` times: `[h0, h0, h1, h1, ...]`.
fn repeat_heads(l: &mut Lowerer, a: &Act, reps: u64, out: &str) -> Act {
    if reps == 1 {
        return a.clone();
    }
    let d = &a.dims;
    let mut cur = vec![d[0], d[1], 1, d[2], d[3]];
    let full = [d[0], d[1], reps, d[2], d[3]];
    let src = l.view(&format!("{out}.gqa"), a.v, &cur);
    let t = l.tile(out, src, &mut cur, &full, 5);
    let dims = [d[0], d[1] * reps, d[2], d[3]];
    let v = l.view(&format!("{out}.gqa"), t, &dims);
    Act {
        v,
        dims: dims.to_vec(),
        cl: false,
    }
}

/// The causal and sliding-window masks as one `[S, L]` constant (0 where
/// key `j` may be attended from query `i`, -inf elsewhere), or `None`.
fn position_bias(p: &Params, s: u64, len: u64, past: u64) -> Option<Tensor> {
    if !p.causal && p.left < 0 && p.right < 0 {
        return None;
    }
    let mut v = Vec::with_capacity((s * len) as usize);
    for i in 0..s as i64 {
        for j in 0..len as i64 {
            let diff = i + past as i64 - j;
            let ok = (!p.causal || diff >= 0)
                && (p.left < 0 || diff <= p.left)
                && (p.right < 0 || -diff <= p.right);
            v.push(if ok { 0.0 } else { f32::NEG_INFINITY });
        }
    }
    Some(Tensor::f32(vec![s, len], v))
}

/// The attention mask as an additive float bias over `len` keys: a bool
/// (0/1 integer) constant becomes 0 / -inf, a run-time bool mask an
/// `elementselect` of 0 / -inf, and a shorter last axis is padded with -inf.
fn mask_bias(l: &mut Lowerer, m: &Val, len: u64, out: &str, base: &str) -> Result<Val> {
    let d = dims_of(m);
    let last = *d.last().ok_or_else(|| l.err("attn_mask is a scalar"))?;
    if last > len {
        return Err(l.err(format!(
            "attn_mask has {last} keys, more than the {len} of K"
        )));
    }
    let name = format!("{out}.mask");
    if let Val::Const { t, .. } = m {
        let vals: Vec<f32> = match &t.data {
            Data::I64(b) => b
                .iter()
                .map(|&x| if x != 0 { 0.0 } else { f32::NEG_INFINITY })
                .collect(),
            Data::F32(f) => f.clone(),
        };
        let mut pd = d.clone();
        *pd.last_mut().unwrap_or(&mut 0) = len;
        let mut padded = Vec::with_capacity(vals.len() / last.max(1) as usize * len as usize);
        for row in vals.chunks(last.max(1) as usize) {
            padded.extend_from_slice(row);
            padded.extend(std::iter::repeat_n(
                f32::NEG_INFINITY,
                (len - last) as usize,
            ));
        }
        return Ok(Val::Const {
            name,
            t: Tensor::f32(pd, padded).into(),
        });
    }
    let a = l.act(m);
    let a = if l.kind(&a) == ElemKind::Bool {
        // A run-time bool mask: true keeps a key (0), false hides it (-inf).
        let a = l.to_plain(&a, out);
        let zero = l.splat_buffer(&format!("{name}.keep"), &a.dims, 0.0);
        let ninf = l.splat_buffer(&format!("{name}.hide"), &a.dims, f64::NEG_INFINITY);
        let bias = l.alloc(&format!("{name}.bias"), &a.dims);
        l.inst(base, Opcode::ElementSelect, &[bias, a.v, zero, ninf], &[]);
        Act { v: bias, ..a }
    } else if last == len {
        return Ok(m.clone());
    } else {
        a
    };
    if last == len {
        return Ok(Val::Act(a));
    }
    let a = l.to_plain(&a, out);
    let mut pd = a.dims.clone();
    *pd.last_mut().unwrap_or(&mut 0) = len;
    let dest = l.splat_buffer(&name, &pd, f64::NEG_INFINITY);
    let members = [m::OFFSETS.to(vec![0; pd.len()])];
    l.inst(base, Opcode::InsertTensor, &[dest, a.v], &members);
    Ok(act(dest, &pd))
}

/// Whether some last-axis row of a constant is all -inf.
fn has_masked_row(t: &Tensor) -> bool {
    let n = t.dims.last().copied().unwrap_or(1).max(1) as usize;
    t.to_f32()
        .chunks(n)
        .any(|r| r.iter().all(|&x| x == f32::NEG_INFINITY))
}

/// A new buffer of dims `dims` holding `op(src)` (one input).
fn unary(l: &mut Lowerer, op: Opcode, src: Value, dims: &[u64], name: &str, base: &str) -> Value {
    let dest = l.alloc(name, dims);
    l.inst(base, op, &[dest, src], &[]);
    dest
}

/// `a * c` (or `a / c`) for a scalar `c`, as a new buffer.
fn by_scalar(l: &mut Lowerer, op: Opcode, a: &Act, c: f32, name: &str, base: &str) -> Act {
    let s = l.splat_buffer(&format!("{name}.c"), &a.dims, c as f64);
    let dest = l.alloc(name, &a.dims);
    l.inst(base, op, &[dest, a.v, s], &[]);
    Act {
        v: dest,
        dims: a.dims.clone(),
        cl: false,
    }
}

/// `[n, m, k] x [n, k, p]` on views of 4-D buffers.
fn bmm(l: &mut Lowerer, a: &Act, b: &Act, name: &str, base: &str) -> Act {
    let (ad, bd) = (&a.dims, &b.dims);
    let n = ad[0] * ad[1];
    let dims = [ad[0], ad[1], ad[2], bd[3]];
    let dest = l.alloc(name, &dims);
    let av = l.view(&format!("{name}.lhs"), a.v, &[n, ad[2], ad[3]]);
    let bv = l.view(&format!("{name}.rhs"), b.v, &[n, bd[2], bd[3]]);
    let dv = l.view(&format!("{name}.mm"), dest, &[n, ad[2], bd[3]]);
    l.inst(base, Opcode::BatchMatMul, &[dv, av, bv], &[]);
    Act {
        v: dest,
        dims: dims.to_vec(),
        cl: false,
    }
}

pub(super) fn attention(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let p = params(l, node)?;
    if l.opt_input(node, 6)?.is_some() {
        return Err(l.unsupported("nonpad_kv_seqlen (an int64 input)"));
    }
    let (qv, kv, vv) = (l.input(node, 0)?, l.input(node, 1)?, l.input(node, 2)?);
    let rank = dims_of(&qv).len();
    if dims_of(&kv).len() != rank || dims_of(&vv).len() != rank {
        return Err(l.err("Q, K and V differ in rank"));
    }
    let (mask, past_k, past_v) = (
        l.opt_input(node, 3)?,
        l.opt_input(node, 4)?,
        l.opt_input(node, 5)?,
    );
    if past_k.is_some() != past_v.is_some() {
        return Err(l.err("past_key and past_value must be given together"));
    }
    let q = to_heads(l, &qv, p.q_heads, "q", &out, &base)?;
    let mut k = to_heads(l, &kv, p.kv_heads, "k", &out, &base)?;
    let mut v = to_heads(l, &vv, p.kv_heads, "v", &out, &base)?;
    let (b, hq, s, dq) = (q.dims[0], q.dims[1], q.dims[2], q.dims[3]);
    if k.dims[0] != b || v.dims[0] != b || k.dims[3] != dq || k.dims[1] != v.dims[1] {
        return Err(l.err(format!(
            "Q {:?}, K {:?} and V {:?} do not match",
            q.dims, k.dims, v.dims
        )));
    }
    if k.dims[2] != v.dims[2] {
        return Err(l.err("K and V differ in sequence length"));
    }
    let past = match (&past_k, &past_v) {
        (Some(pk), Some(pv)) => {
            let n = dims_of(pk).get(2).copied().unwrap_or(0);
            k = concat_seq(l, pk, &k, "past_key", &format!("{out}.present_key"), &base)?;
            v = concat_seq(
                l,
                pv,
                &v,
                "past_value",
                &format!("{out}.present_value"),
                &base,
            )?;
            n
        }
        _ => 0,
    };
    let (present_k, present_v) = (k.clone(), v.clone());
    let (hkv, len) = (k.dims[1], k.dims[2]);
    if hkv == 0 || !hq.is_multiple_of(hkv) {
        return Err(l.err(format!(
            "{hq} query heads are not a multiple of {hkv} key/value heads"
        )));
    }
    // The scale is split over both operands as the reference does.
    let scale = p.scale.map_or(1.0 / (dq as f64).sqrt(), |s| s as f64);
    let sq = scale.sqrt() as f32;
    let qs = by_scalar(l, Opcode::ElementMul, &q, sq, &format!("{out}.qs"), &base);
    let kt_dims = [b, hkv, dq, len];
    let kt = l.alloc(&format!("{out}.kt"), &kt_dims);
    l.transpose(&base, kt, k.v, vec![0, 1, 3, 2]);
    let kt = Act {
        v: kt,
        dims: kt_dims.to_vec(),
        cl: false,
    };
    let ks = by_scalar(l, Opcode::ElementMul, &kt, sq, &format!("{out}.ks"), &base);
    let ks = repeat_heads(l, &ks, hq / hkv, &format!("{out}.ks"));
    let v = repeat_heads(l, &v, hq / hkv, &format!("{out}.v"));
    let mut qk = bmm(l, &qs, &ks, &format!("{out}.qk"), &base);
    if p.softcap > 0.0 {
        let d = by_scalar(
            l,
            Opcode::ElementDiv,
            &qk,
            p.softcap,
            &format!("{out}.cap"),
            &base,
        );
        let t = unary(l, Opcode::Tanh, d.v, &d.dims, &format!("{out}.tanh"), &base);
        let t = Act { v: t, ..d };
        qk = by_scalar(
            l,
            Opcode::ElementMul,
            &t,
            p.softcap,
            &format!("{out}.capped"),
            &base,
        );
    }
    // The additive bias: mask (padded) plus the position masks.
    let full = [b, hq, s, len];
    let mut bias = match &mask {
        Some(m) => Some(mask_bias(l, m, len, &out, &base)?),
        None => None,
    };
    if let Some(pb) = position_bias(&p, s, len, past) {
        let pb = Val::Const {
            name: format!("{out}.causal"),
            t: pb.into(),
        };
        bias = Some(match bias {
            Some(m) => apply(
                l,
                Opcode::ElementAdd,
                &m,
                &pb,
                &format!("{out}.bias"),
                &base,
            )?,
            None => pb,
        });
    }
    if let Some(bv) = &bias {
        let d = dims_of(bv);
        if broadcast_dims(l, &d, &full).ok().as_deref() != Some(&full[..]) {
            return Err(l.err(format!("attn_mask {d:?} does not broadcast to {full:?}")));
        }
    }
    let qk_val = Val::Act(qk.clone());
    let with_bias = match &bias {
        Some(bv) => apply(
            l,
            Opcode::ElementAdd,
            &qk_val,
            bv,
            &format!("{out}.scores"),
            &base,
        )?,
        None => qk_val.clone(),
    };
    let wb = l.act(&with_bias);
    let rows = b * hq * s;
    let sm = l.alloc(&format!("{out}.softmax"), &full);
    let sv = l.view(&format!("{out}.softmax.2d"), sm, &[rows, len]);
    let xv = l.view(&format!("{out}.scores.2d"), wb.v, &[rows, len]);
    l.inst(&base, Opcode::SoftMax, &[sv, xv], &[]);
    let mut probs = Act {
        v: sm,
        dims: full.to_vec(),
        cl: false,
    };
    let guard = match &bias {
        Some(Val::Const { t, .. }) => has_masked_row(t),
        Some(Val::Act(_)) => true,
        None => false,
    };
    if let (true, Some(bv)) = (guard, &bias) {
        probs = zero_masked_rows(l, bv, &probs, &out, &base)?;
    }
    let qk_out = match p.mode {
        0 | 1 => qk_val,
        2 => with_bias,
        _ => Val::Act(probs.clone()),
    };
    let y = bmm(l, &probs, &v, &format!("{out}.pv"), &base);
    let y = if rank == 3 {
        let dv = y.dims[3];
        let t = l.alloc(&format!("{out}.merged"), &[b, s, hq, dv]);
        l.transpose(&base, t, y.v, vec![0, 2, 1, 3]);
        let yv = l.view(&out, t, &[b, s, hq * dv]);
        act(yv, &[b, s, hq * dv])
    } else {
        Val::Act(y)
    };
    let mut outs = vec![y, Val::Act(present_k), Val::Act(present_v), qk_out];
    outs.truncate(node.output.len().max(1));
    Ok(outs)
}

/// `probs` with every query row whose bias is all -inf set to 0.
fn zero_masked_rows(
    l: &mut Lowerer,
    bias: &Val,
    probs: &Act,
    out: &str,
    base: &str,
) -> Result<Act> {
    let b = l.act(bias);
    let b = l.to_plain(&b, out);
    let d = super::ir_dims(&b.dims);
    let r = d.len();
    let mut md = d[..r - 1].to_vec();
    if md.is_empty() {
        md.push(1);
    }
    let m = l.alloc(&format!("{out}.rowmax"), &md);
    let axis = m::AXIS.to(r as i64 - 1);
    l.inst(base, Opcode::BatchedReduceMax, &[m, b.v], &[axis]);
    let mut kd = d[..r - 1].to_vec();
    kd.push(1);
    let mv = l.view(&format!("{out}.rowmax"), m, &kd);
    let full = probs.dims.clone();
    let mf = broadcast(
        l,
        &act(mv, &kd),
        &full,
        &format!("{out}.rowmax"),
        ElemKind::Float,
    )?;
    let ninf = l.splat_buffer(&format!("{out}.ninf"), &full, f64::NEG_INFINITY);
    let cond = l
        .b()
        .alloc(&format!("{out}.masked"), Type::new(ElemKind::Bool, &full));
    l.track_alloc(cond);
    l.inst(base, Opcode::ElementCmpLTE, &[cond, mf, ninf], &[]);
    let zero = l.splat_buffer(&format!("{out}.zero"), &full, 0.0);
    let dest = l.alloc(&format!("{out}.probs"), &full);
    l.inst(
        base,
        Opcode::ElementSelect,
        &[dest, cond, zero, probs.v],
        &[],
    );
    Ok(Act {
        v: dest,
        dims: full,
        cl: false,
    })
}
