//! C kernels of `convolution` (groups, dilation, pads, NHWC/NCHW, fused
//! activation), `maxpool` and `avgpool` (CountIncludePads). Window
//! positions outside the input are skipped; sums run over (kh, kw, channel)
//! in that order, as in the interpreter.

use super::KCtx;
use crate::error::BackendError;
use crate::ops::{c_float, fused_activation};

/// The window members, read once for both engines.
#[derive(Clone, Debug)]
pub struct Window {
    pub kernels: [u64; 2],
    pub strides: [u64; 2],
    /// top, left, bottom, right
    pub pads: [u64; 4],
    pub dilation: [u64; 2],
    pub nchw: bool,
}

impl Window {
    pub fn read(inst: &glow_ir::InstData) -> Option<Window> {
        let two = |name: &str, d: u64| -> Option<[u64; 2]> {
            match inst.member_ints(name) {
                Some(v) if v.len() == 2 => Some([v[0].max(0) as u64, v[1].max(0) as u64]),
                Some(_) => None,
                None => Some([d, d]),
            }
        };
        let pads = match inst.member_ints("Pads") {
            Some(v) if v.len() == 4 => [v[0], v[1], v[2], v[3]].map(|p| p.max(0) as u64),
            Some(_) => return None,
            None => [0; 4],
        };
        Some(Window {
            kernels: two("Kernels", 1)?,
            strides: two("Strides", 1)?,
            pads,
            dilation: two("Dilation", 1)?,
            nchw: inst.member_str("Layout") == Some("NCHW"),
        })
    }

    /// (N, C, H, W) of a 4-D activation.
    pub fn nchw_of(&self, dims: &[u64]) -> [u64; 4] {
        if self.nchw {
            [dims[0], dims[1], dims[2], dims[3]]
        } else {
            [dims[0], dims[3], dims[1], dims[2]]
        }
    }

    /// Strides of (N, C, H, W) in a row-major activation of `dims`.
    pub fn act_strides(&self, dims: &[u64]) -> [u64; 4] {
        let [_, c, h, w] = self.nchw_of(dims);
        if self.nchw {
            [c * h * w, h * w, w, 1]
        } else {
            [h * w * c, 1, w * c, c]
        }
    }
}

fn idx(vars: [&str; 4], strides: [u64; 4]) -> String {
    let t: Vec<String> = vars
        .iter()
        .zip(strides)
        .map(|(v, s)| format!("{v} * {s}u"))
        .collect();
    t.join(" + ")
}

/// Emits the window loops: `ih`/`iw` as signed positions, skipping those
/// outside the input; the caller writes the body and closes two loops.
fn open_window(c: &mut KCtx, win: &Window, h: u64, w: u64) {
    let [pt, pl, _, _] = win.pads;
    c.w.for_loop("kh", win.kernels[0]);
    c.w.line(&format!(
        "long long ih = (long long)(oh * {}u + kh * {}u) - {pt}ll;",
        win.strides[0], win.dilation[0]
    ));
    c.w.line(&format!("if (ih < 0 || ih >= {h}ll) continue;"));
    c.w.for_loop("kw", win.kernels[1]);
    c.w.line(&format!(
        "long long iw = (long long)(ow * {}u + kw * {}u) - {pl}ll;",
        win.strides[1], win.dilation[1]
    ));
    c.w.line(&format!("if (iw < 0 || iw >= {w}ll) continue;"));
}

pub fn convolution(c: &mut KCtx) -> Result<(), BackendError> {
    let names = ["Dest", "Src", "Filter", "Bias"];
    for n in names {
        let t = c.ty(n)?;
        c.require_f32(&t)?;
    }
    let (d, s, fl) = (c.ty("Dest")?, c.ty("Src")?, c.ty("Filter")?);
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let group = c.member_int("Group")?.max(1) as u64;
    let act = c.inst.member_str("FusedActivation").unwrap_or("NONE");
    let args = c
        .inst
        .member("FusedActivationArgs")
        .and_then(|v| v.as_floats())
        .unwrap_or(&[]);
    let (fused, _) = fused_activation(act, args)
        .ok_or_else(|| c.err(format!("unknown fused activation {act}")))?;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, oc, oh, ow] = win.nchw_of(&d.dims);
    let (cg, ocg) = (ch / group, oc / group);
    let [kh, kw] = win.kernels;
    // Filter strides over (oc, kh, kw, cg).
    let fs = if win.nchw {
        [cg * kh * kw, kw, 1, kh * kw]
    } else {
        [kh * kw * cg, kw * cg, cg, 1]
    };
    let _ = fl;
    for nm in names {
        c.decl(nm, "float")?;
    }
    c.w.for_loop("n", n);
    c.w.for_loop("oh", oh);
    c.w.for_loop("ow", ow);
    c.w.for_loop("oc", oc);
    c.w.line(&format!("size_t g = oc / {ocg}u;"));
    c.w.line("float sum = 0.0f;");
    open_window(c, &win, h, w);
    c.w.for_loop("cg", cg);
    c.w.line(&format!(
        "sum += Src[{}] * Filter[{}];",
        idx(
            [
                "n",
                &format!("(g * {cg}u + cg)"),
                "(size_t)ih",
                "(size_t)iw"
            ],
            win.act_strides(&s.dims)
        ),
        idx(["oc", "kh", "kw", "cg"], fs)
    ));
    c.w.close();
    c.w.close();
    c.w.close();
    c.w.line("float x = sum + Bias[oc];");
    c.w.line(&format!(
        "Dest[{}] = {fused};",
        idx(["n", "oc", "oh", "ow"], win.act_strides(&d.dims))
    ));
    for _ in 0..4 {
        c.w.close();
    }
    Ok(())
}

/// `maxpool` (first valid element, then `x > max`; 0 when the window is all
/// padding) and `avgpool` (sum / kernel area, or / valid count without
/// `CountIncludePads`; 0 for an empty count).
pub fn pool(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    c.require_f32(&d)?;
    c.require_f32(&s)?;
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let is_max = c.inst.opcode == glow_ir::Opcode::MaxPool;
    let include = c
        .inst
        .member("CountIncludePads")
        .and_then(|v| v.as_bool())
        .unwrap_or(true);
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, _, oh, ow] = win.nchw_of(&d.dims);
    c.decl("Dest", "float")?;
    c.decl("Src", "float")?;
    c.w.for_loop("n", n);
    c.w.for_loop("oh", oh);
    c.w.for_loop("ow", ow);
    c.w.for_loop("ch", ch);
    if is_max {
        c.w.line("int first = 1;");
        c.w.line("float acc = 0.0f;");
    } else {
        c.w.line("float acc = 0.0f;");
        c.w.line("size_t cnt = 0;");
    }
    open_window(c, &win, h, w);
    let src = format!(
        "Src[{}]",
        idx(
            ["n", "ch", "(size_t)ih", "(size_t)iw"],
            win.act_strides(&s.dims)
        )
    );
    if is_max {
        c.w.line(&format!("float x = {src};"));
        c.w.line("if (first || x > acc) { acc = x; first = 0; }");
    } else {
        c.w.line(&format!("acc += {src};"));
        c.w.line("cnt++;");
    }
    c.w.close();
    c.w.close();
    let dest = format!(
        "Dest[{}]",
        idx(["n", "ch", "oh", "ow"], win.act_strides(&d.dims))
    );
    if is_max {
        c.w.line(&format!("{dest} = acc;"));
    } else if include {
        let area = c_float((win.kernels[0] * win.kernels[1]) as f32);
        c.w.line("(void)cnt;");
        c.w.line(&format!("{dest} = acc / {area};"));
    } else {
        c.w.line(&format!("{dest} = cnt ? acc / (float)cnt : 0.0f;"));
    }
    for _ in 0..4 {
        c.w.close();
    }
    Ok(())
}
