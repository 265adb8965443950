//! C kernels of the detection instructions (docs/gir.md, "Detection"): calls
//! of the static functions of `detection.c` (the bundle's `Detection`
//! kernel section), which compute in the order of `interp/detection.rs`.

use super::runtime::Kernel;
use super::sparse::c_i64;
use super::KCtx;
use crate::elem::ctype;
use crate::error::BackendError;
use crate::ops::c_float;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode};

type R = Result<(), BackendError>;

pub fn emit(c: &mut KCtx) -> R {
    match c.inst.opcode {
        Opcode::NonMaxSuppression => nms(c),
        Opcode::RoiAlign => roi_align(c),
        Opcode::BBoxTransform => bbox_transform(c),
        Opcode::Mfcc => mfcc(c),
        _ => Err(c.err("not a detection instruction")),
    }
}

/// A float operand or member as a C expression: the operand's first element
/// when the instruction has it, else the member's value.
fn float_limit(
    c: &mut KCtx,
    name: &str,
    member: glow_ir::member::Key<glow_ir::member::Float>,
) -> Result<String, BackendError> {
    if c.inst.operand_named(name).is_some() {
        c.require_f32s(&[name])?;
        c.decl(name, "float")?;
        Ok(format!("{name}[0]"))
    } else {
        Ok(c_float(c.member(member)? as f32))
    }
}

fn nms(c: &mut KCtx) -> R {
    let (it, ct) = (c.ty("Indices")?, c.ty("NumberOfSelectedIndices")?);
    let (bt, st) = (c.ty("Boxes")?, c.ty("Scores")?);
    c.require_f32s(&["Boxes", "Scores"])?;
    for t in [&it, &ct] {
        if !matches!(t.elem, ElemKind::Index32 | ElemKind::Index64) {
            return Err(c.unsupported(t));
        }
    }
    let v4 = c.member(m::IS_TF_VERSION4)?;
    let (nb, nc, n) = if v4 {
        (1, 1, bt.dims[0])
    } else {
        (bt.dims[0], st.dims[1], bt.dims[1])
    };
    let center = c.member(m::CENTER_POINT_BOX)? != 0;
    let compact = c.member(m::COMPACT)?;
    c.decl("Indices", ctype(it.elem))?;
    c.decl("NumberOfSelectedIndices", ctype(ct.elem))?;
    c.decl("Boxes", "float")?;
    c.decl("Scores", "float")?;
    let limit = if c.inst.operand_named("MaxOutputIn").is_some() {
        let lt = c.ty("MaxOutputIn")?;
        if !matches!(lt.elem, ElemKind::Index32 | ElemKind::Index64) {
            return Err(c.unsupported(&lt));
        }
        c.decl("MaxOutputIn", ctype(lt.elem))?;
        "(MaxOutputIn[0] < 0 ? (int64_t)0 : (int64_t)MaxOutputIn[0])".to_string()
    } else {
        let l = c.member(m::MAX_OUTPUT_BOXES_PER_CLASS)?;
        format!("{}ll", if l > 0 { l } else { -1 })
    };
    let iou = float_limit(c, "IouThresholdIn", m::IOU_THRESHOLD)?;
    let score = float_limit(c, "ScoreThresholdIn", m::SCORE_THRESHOLD)?;
    c.rt.use_kernel(Kernel::Detection);
    c.w.line(&format!(
        "glow_nms(Indices, NumberOfSelectedIndices, {}, Boxes, Scores, {nb}u, {nc}u, {n}u, {}, {}, {limit}, {iou}, {score}, {}u, {}u, {});",
        (it.elem == ElemKind::Index64) as u8,
        v4 as u8,
        center as u8,
        it.dims[0],
        ct.size(),
        compact as u8
    ));
    Ok(())
}

fn roi_align(c: &mut KCtx) -> R {
    let (rt, ft, bt, it) = (
        c.ty("Result")?,
        c.ty("FeatureMap")?,
        c.ty("Boxes")?,
        c.ty("BatchIndices")?,
    );
    c.require_f32s(&["Result", "FeatureMap", "Boxes"])?;
    if !matches!(it.elem, ElemKind::Index32 | ElemKind::Index64) {
        return Err(c.unsupported(&it));
    }
    let mode = match c.member(m::MODE)? {
        "MAX" => 1,
        "ONNX_MAX" => 2,
        _ => 0,
    };
    let aligned = c.member(m::ALIGNED)?;
    let rotated = c.member(m::ROTATED)?;
    let ratio = c.member(m::SAMPLING_RATIO)?.max(0);
    let scale = c_float(c.member(m::SPATIAL_SCALE)? as f32);
    c.decl("Result", "float")?;
    c.decl("FeatureMap", "float")?;
    c.decl("Boxes", "float")?;
    c.decl("BatchIndices", ctype(it.elem))?;
    c.rt.use_kernel(Kernel::Detection);
    let d = &ft.dims;
    c.w.line(&format!(
        "glow_roi_align(Result, FeatureMap, Boxes, BatchIndices, {}, {}u, {}u, {}u, {}u, {}u, {}u, {}u, {}u, {mode}, {}, {}, {ratio}u, {scale});",
        (it.elem == ElemKind::Index64) as u8,
        d[0],
        d[1],
        d[2],
        d[3],
        rt.dims[0],
        rt.dims[1],
        rt.dims[2],
        bt.dims[1],
        aligned as u8,
        rotated as u8
    ));
    Ok(())
}

fn bbox_transform(c: &mut KCtx) -> R {
    c.require_f32s(&["BoxOut", "RoiBatchSplits", "Rois", "Deltas", "ImInfo"])?;
    let (rt, dt, it) = (c.ty("Rois")?, c.ty("Deltas")?, c.ty("ImInfo")?);
    let w = c.member(m::WEIGHTS)?;
    let wt: Vec<String> = (0..4)
        .map(|i| c_float(w.get(i).copied().unwrap_or(1.0) as f32))
        .collect();
    let apply = c.member(m::APPLY_SCALE)?;
    let rotated = c.member(m::ROTATED)?;
    let bound = c.member(m::ANGLE_BOUND_ON)?;
    let (lo, hi) = (c.member(m::ANGLE_BOUND_LO)?, c.member(m::ANGLE_BOUND_HI)?);
    let thresh = c_float(c.member(m::CLIP_ANGLE_THRESH)? as f32);
    let plus = if c.member(m::LEGACY_PLUS_ONE)? {
        "1.0f"
    } else {
        "0.0f"
    };
    for name in ["BoxOut", "RoiBatchSplits", "Rois", "Deltas", "ImInfo"] {
        c.decl(name, "float")?;
    }
    c.rt.use_kernel(Kernel::Detection);
    c.w.open("");
    c.w.line(&format!(
        "static const float wt[4] = {{{}}};",
        wt.join(", ")
    ));
    c.w.line(&format!(
        "glow_bbox_transform(BoxOut, RoiBatchSplits, Rois, Deltas, ImInfo, {}u, {}u, {}u, {}u, wt, {}, {}, {}, {}, {}, {thresh}, {plus}, {});",
        rt.dims[0],
        rt.dims[1],
        dt.dims[1],
        it.dims[0],
        apply as u8,
        rotated as u8,
        bound as u8,
        c_i64(lo),
        c_i64(hi),
        c_float(crate::interp::BBOX_XFORM_CLIP)
    ));
    c.w.close();
    Ok(())
}

fn mfcc(c: &mut KCtx) -> R {
    c.require_f32s(&["Coefficients", "Spectrogram", "MelWeights", "DctMat"])?;
    let (st, ot, wt, rt) = (
        c.ty("Spectrogram")?,
        c.ty("Coefficients")?,
        c.ty("MelWeights")?,
        c.ty("MelRanges")?,
    );
    if rt.elem != ElemKind::Index32 {
        return Err(c.unsupported(&rt));
    }
    for name in ["Coefficients", "Spectrogram", "MelWeights", "DctMat"] {
        c.decl(name, "float")?;
    }
    c.decl("MelRanges", "int32_t")?;
    c.rt.use_kernel(Kernel::Detection);
    c.w.line(&format!(
        "glow_mfcc(Coefficients, Spectrogram, MelWeights, {}u, MelRanges, DctMat, {}u, {}u, {}u, {}u, {});",
        wt.size(),
        st.dims[0],
        st.dims[1],
        rt.size() / 2,
        ot.dims[1],
        c_float(crate::interp::mfcc_log_zero())
    ));
    Ok(())
}
