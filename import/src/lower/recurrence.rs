//! The stateful sequence ops of opset 27, composed of other ops as ONNX's
//! reference computes them: CausalConvWithState (the past state, or zeros,
//! in front of the input, a depthwise Conv, the optional SiLU, the last
//! `k - 1` positions as the new state) and LinearAttention (the recurrence
//! unrolled over the static sequence length with batched matmuls).

use super::compose::{attr_int, attr_ints, base_of, with, Composer};
use super::{dims_of, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use glow_ir::ElemKind;

/// Run-time inputs of these ops are float.
fn float_inputs(l: &mut Lowerer, node: &NodeProto) -> Result<()> {
    for i in 0..node.input.len() {
        if let Some(Val::Act(a)) = l.opt_input(node, i)? {
            if l.kind(&a) != ElemKind::Float {
                return Err(l.unsupported(format!(
                    "a run-time {} tensor (`{}`) as input {i} of {}",
                    l.kind(&a),
                    node.input[i],
                    node.op_type
                )));
            }
        }
    }
    Ok(())
}

/// The name of input `i` when it is given.
fn given(l: &Lowerer, node: &NodeProto, i: usize) -> Result<Option<String>> {
    Ok(l.opt_input(node, i)?.map(|_| node.input[i].clone()))
}

pub(super) fn causal_conv(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    float_inputs(l, node)?;
    let attrs = Attrs(&node.attribute);
    let silu = match attrs.string("activation").as_deref() {
        None | Some("none") => false,
        Some("silu") | Some("swish") => true,
        Some(other) => {
            return Err(l.unsupported(format!("CausalConvWithState activation `{other}`")))
        }
    };
    let (xd, wd) = (dims_of(&l.input(node, 0)?), dims_of(&l.input(node, 1)?));
    let [b, ch, _] = *xd.as_slice() else {
        return Err(l.err(format!("input {xd:?} is not [batch, channels, length]")));
    };
    if wd.len() != 3 || wd[0] != ch || wd[1] != 1 || wd[2] == 0 {
        return Err(l.err(format!("weight {wd:?} is not [{ch}, 1, k]")));
    }
    let k = wd[2];
    if k == 1 {
        // The state keeps k - 1 = 0 positions.
        return Err(l.unsupported("CausalConvWithState with k = 1 (a zero-size present_state)"));
    }
    let (bias, past) = (given(l, node, 2)?, given(l, node, 3)?);
    if let Some(p) = &past {
        let pd = dims_of(&l.vals[p]);
        if pd != [b, ch, k - 1] {
            return Err(l.err(format!("past_state {pd:?} is not [{b}, {ch}, {}]", k - 1)));
        }
    }
    let names: Vec<&str> = node.input.iter().map(String::as_str).collect();
    let base = base_of(node);
    let (y, state) = with(l, &base, |c| {
        let pad = match &past {
            Some(p) => p.clone(),
            None => {
                let n = (b * ch * (k - 1)) as usize;
                c.konst("zeros", Tensor::f32(vec![b, ch, k - 1], vec![0.0; n]))
            }
        };
        let padded = c.op("Concat", &[&pad, names[0]], vec![attr_int("axis", 2)])?;
        let mut ins = vec![padded.as_str(), names[1]];
        if let Some(bias) = &bias {
            ins.push(bias);
        }
        let conv = c.op(
            "Conv",
            &ins,
            vec![
                attr_int("group", ch as i64),
                attr_ints("kernel_shape", &[k as i64]),
            ],
        )?;
        let y = if silu {
            let s = c.op("Sigmoid", &[&conv], vec![])?;
            c.op("Mul", &[&conv, &s], vec![])?
        } else {
            conv
        };
        let len = c.dims(&padded)[2];
        let state = c.slice(&padded, 2, len - (k - 1), len)?;
        Ok((y, state))
    })?;
    Ok(vec![l.vals[&y].clone(), l.vals[&state].clone()])
}

/// `x` `[B, T, H * D]` as `[B, T, H, D]`.
fn heads(c: &mut Composer, x: &str, h: u64) -> Result<String> {
    let d = c.dims(x);
    c.reshape(x, &[d[0], d[1], h, d[2] / h])
}

pub(super) fn linear_attention(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    float_inputs(l, node)?;
    let attrs = Attrs(&node.attribute);
    let rule = attrs
        .string("update_rule")
        .unwrap_or_else(|| "gated_delta".into());
    let (gating, delta) = match rule.as_str() {
        "linear" => (false, false),
        "gated" => (true, false),
        "delta" => (false, true),
        "gated_delta" => (true, true),
        other => return Err(l.unsupported(format!("LinearAttention update_rule `{other}`"))),
    };
    let (hq, hkv) = (attrs.int("q_num_heads", 0), attrs.int("kv_num_heads", 0));
    if hq <= 0 || hkv <= 0 || hq % hkv != 0 {
        return Err(l.err(format!(
            "q_num_heads ({hq}) must be a positive multiple of kv_num_heads ({hkv})"
        )));
    }
    let (hq, hkv) = (hq as u64, hkv as u64);
    let (qd, kd, vd) = (
        dims_of(&l.input(node, 0)?),
        dims_of(&l.input(node, 1)?),
        dims_of(&l.input(node, 2)?),
    );
    let ok3 = |d: &[u64], h: u64| d.len() == 3 && d[2].is_multiple_of(h) && d[2] > 0;
    if !ok3(&qd, hq) || !ok3(&kd, hkv) || !ok3(&vd, hkv) || kd[..2] != qd[..2] || vd[..2] != qd[..2]
    {
        return Err(l.err(format!(
            "query {qd:?}, key {kd:?} and value {vd:?} are not [B, T, heads * D] of one B and T"
        )));
    }
    let (b, t, dk, dv) = (qd[0], qd[1], qd[2] / hq, vd[2] / hkv);
    if kd[2] / hkv != dk {
        return Err(l.err(format!(
            "key {kd:?} does not have the query's head size {dk}"
        )));
    }
    let (past, decay, beta) = (given(l, node, 3)?, given(l, node, 4)?, given(l, node, 5)?);
    if gating != decay.is_some() || delta != beta.is_some() {
        return Err(l.err(format!(
            "update_rule `{rule}` {} decay and {} beta",
            if gating { "needs" } else { "forbids" },
            if delta { "needs" } else { "forbids" }
        )));
    }
    if let Some(p) = &past {
        let pd = dims_of(&l.vals[p]);
        if pd != [b, hkv, dk, dv] {
            return Err(l.err(format!("past_state {pd:?} is not [{b}, {hkv}, {dk}, {dv}]")));
        }
    }
    let last = |l: &Lowerer, n: &Option<String>, allowed: &[u64]| -> Result<u64> {
        let Some(n) = n else { return Ok(1) };
        let d = dims_of(&l.vals[n]);
        match *d.as_slice() {
            [bb, tt, e] if bb == b && tt == t && allowed.contains(&e) => Ok(e),
            _ => Err(l.err(format!(
                "input `{n}` {d:?} is not [{b}, {t}, one of {allowed:?}]"
            ))),
        }
    };
    let decay_last = last(l, &decay, &[hkv, hkv * dk])?;
    let beta_last = last(l, &beta, &[hkv, 1])?;
    let scale = match attrs.float("scale", 0.0) {
        0.0 => 1.0 / (dk as f32).sqrt(),
        s => s,
    };
    let names: Vec<&str> = node.input.iter().map(String::as_str).collect();
    let base = base_of(node);
    let (y, state) = with(l, &base, |c| {
        let q = heads(c, names[0], hq)?;
        let k = heads(c, names[1], hkv)?;
        let v = heads(c, names[2], hkv)?;
        let g = match &decay {
            Some(d) => Some(c.reshape(d, &[b, t, hkv, decay_last / hkv])?),
            None => None,
        };
        let be = match &beta {
            Some(x) => Some(c.reshape(x, &[b, t, beta_last, 1])?),
            None => None,
        };
        let at3 = c.ints(&[3]);
        let mut state = match &past {
            Some(p) => p.clone(),
            None => {
                let n = (b * hkv * dk * dv) as usize;
                c.konst("zeros", Tensor::f32(vec![b, hkv, dk, dv], vec![0.0; n]))
            }
        };
        let sc = c.scalar(scale);
        let mut outs = Vec::with_capacity(t as usize);
        for i in 0..t {
            let row = |c: &mut Composer, x: &str, last: u64, h: u64| -> Result<String> {
                let p = c.pick(x, 1, i)?;
                c.reshape(&p, &[b, h, 1, last])
            };
            if let Some(g) = &g {
                // state *= exp(g_t), broadcast over d_v.
                let gt = c.pick(g, 1, i)?;
                let e = c.op("Exp", &[&gt], vec![])?;
                let e = c.op("Unsqueeze", &[&e, &at3], vec![])?;
                state = c.op("Mul", &[&state, &e], vec![])?;
            }
            let kt = row(c, &k, dk, hkv)?;
            let mut vt = row(c, &v, dv, hkv)?;
            if let Some(be) = &be {
                // v_t = beta_t (v_t - k_t S).
                let got = c.op("MatMul", &[&kt, &state], vec![])?;
                let diff = c.op("Sub", &[&vt, &got], vec![])?;
                let bt = c.pick(be, 1, i)?;
                let bt = c.op("Unsqueeze", &[&bt, &at3], vec![])?;
                vt = c.op("Mul", &[&bt, &diff], vec![])?;
            }
            // state += k_t^T v_t, the outer product as a matmul of one term.
            let kc = c.op("Transpose", &[&kt], vec![attr_ints("perm", &[0, 1, 3, 2])])?;
            let outer = c.op("MatMul", &[&kc, &vt], vec![])?;
            state = c.op("Add", &[&state, &outer], vec![])?;
            // Query heads read their group's state: [B, Hkv, g, dk] @ S.
            let qt = c.pick(&q, 1, i)?;
            let qg = c.reshape(&qt, &[b, hkv, hq / hkv, dk])?;
            let o = c.op("MatMul", &[&qg, &state], vec![])?;
            let o = c.op("Mul", &[&o, &sc], vec![])?;
            outs.push(c.reshape(&o, &[b, 1, hq * dv])?);
        }
        let refs: Vec<&str> = outs.iter().map(String::as_str).collect();
        let y = if refs.len() == 1 {
            outs[0].clone()
        } else {
            c.op("Concat", &refs, vec![attr_int("axis", 1)])?
        };
        Ok((y, state))
    })?;
    Ok(vec![l.vals[&y].clone(), l.vals[&state].clone()])
}
