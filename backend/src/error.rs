//! Backend errors are `Diagnostic`s: an unsupported opcode/type pair or a
//! malformed instruction points at the instruction's line when it was parsed.

use glow_ir::{Diagnostic, Function, InstId};

pub type BackendError = Diagnostic;

/// An error about instruction `id`, at its source line when known.
pub fn inst_error(f: &Function, id: InstId, msg: impl Into<String>) -> Diagnostic {
    let inst = f.inst(id);
    let text = format!("`%{}` ({}): {}", inst.name, inst.opcode.name(), msg.into());
    let d = Diagnostic::error(text);
    // An instruction a pass created has no line: point at its function.
    match (f.spans.inst(id.index()), f.spans.function) {
        (Some(s), _) => d.at(s.line),
        (None, Some(s)) => d.at(s),
        (None, None) => d,
    }
}

/// What running or emitting an instruction of the `NoKernel` family reports
/// (Glow's runtime callbacks and external calls: docs/gir.md, "Instrumentation").
pub const NO_KERNEL: &str =
    "this instruction has no kernel on this backend (docs/gir.md, \"Instrumentation and escape hatches\")";

/// The "unsupported element type" error: names the opcode and the type.
pub fn unsupported(f: &Function, id: InstId, ty: &glow_ir::Type) -> Diagnostic {
    inst_error(
        f,
        id,
        format!(
            "element type `{}` is not supported by the backend for `{}` (see docs/backend.md, supported types)",
            ty,
            f.inst(id).opcode.name()
        ),
    )
}
