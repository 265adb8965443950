//! Text forms of tensors: `--print-outputs` lines (shortest round-trip
//! floats, as the `.gir` printer writes them) and C's `%.9g`, which the
//! interpreter reproduces for `debugprint` so both engines print alike.

use crate::elem::{is_integer, read_int};
use glow_ir::types::{format_f32, format_float};
use glow_ir::{ElemKind, Type};

/// `%name = TYPE [v0, v1, ...]` for a tensor's bytes.
pub fn tensor_line(name: &str, ty: &Type, bytes: &[u8]) -> String {
    let mut out = String::new();
    glow_ir::printer::write_name(name, &mut out);
    out.push_str(&format!(" = {ty} ["));
    let n = ty.size() as usize;
    for i in 0..n {
        if i > 0 {
            out.push_str(", ");
        }
        match ty.elem {
            ElemKind::Float => format_f32(crate::elem::read_f32(bytes, i), &mut out),
            ElemKind::Float64 => {
                let mut a = [0u8; 8];
                a.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
                format_float(f64::from_le_bytes(a), &mut out);
            }
            ElemKind::Bool => out.push_str(if bytes[i] != 0 { "true" } else { "false" }),
            k if is_integer(k) => out.push_str(&read_int(k, bytes, i).to_string()),
            _ => out.push_str(&format!(
                "0x{:04x}",
                u16::from_le_bytes([bytes[i * 2], bytes[i * 2 + 1]])
            )),
        }
    }
    out.push(']');
    out
}

/// C's `printf("%.9g", v)` (glibc spelling of inf/nan).
pub fn g9(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    const P: i32 = 9;
    let e = format!("{:.*e}", (P - 1) as usize, v);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    if (-4..P).contains(&x) {
        let fixed = format!("{:.*}", (P - 1 - x) as usize, v);
        strip_zeros(&fixed)
    } else {
        let sign = if x < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip_zeros(mant), x.abs())
    }
}

fn strip_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g9_matches_printf() {
        assert_eq!(g9(0.0), "0");
        assert_eq!(g9(1.0), "1");
        assert_eq!(g9(0.1f32 as f64), "0.100000001");
        assert_eq!(g9(123456789.0), "123456789");
        assert_eq!(g9(1234567890.0), "1.23456789e+09");
        assert_eq!(g9(1e-5), "1e-05");
        assert_eq!(g9(-2.5), "-2.5");
        assert_eq!(g9(0.0001), "0.0001");
    }

    #[test]
    fn tensor_lines() {
        let t = Type::float(&[2]);
        let mut b = Vec::new();
        b.extend_from_slice(&1.5f32.to_le_bytes());
        b.extend_from_slice(&0.1f32.to_le_bytes());
        assert_eq!(tensor_line("r", &t, &b), "%r = float<2> [1.5, 0.1]");
    }
}
