//! The one typed accessor for instruction members, shared by the C emitter
//! and the interpreter: a missing or mistyped member is the same error in
//! both engines, and the operator tables read their parameters the same way.

use crate::error::{inst_error, BackendError};
use glow_ir::opcode::MemberType;
use glow_ir::{Function, InstId};

/// The members of one instruction.
#[derive(Clone, Copy)]
pub struct Members<'a> {
    pub f: &'a Function,
    pub id: InstId,
}

impl<'a> Members<'a> {
    pub fn new(f: &'a Function, id: InstId) -> Members<'a> {
        Members { f, id }
    }

    fn missing(&self, name: &str) -> BackendError {
        inst_error(self.f, self.id, format!("member {name} is missing"))
    }

    pub fn int(&self, name: &str) -> Result<i64, BackendError> {
        self.f
            .inst(self.id)
            .member_int(name)
            .ok_or_else(|| self.missing(name))
    }

    pub fn float(&self, name: &str) -> Result<f64, BackendError> {
        self.f
            .inst(self.id)
            .member_float(name)
            .ok_or_else(|| self.missing(name))
    }

    pub fn bool(&self, name: &str) -> Result<bool, BackendError> {
        self.f
            .inst(self.id)
            .member(name)
            .and_then(|v| v.as_bool())
            .ok_or_else(|| self.missing(name))
    }

    pub fn ints(&self, name: &str) -> Result<Vec<i64>, BackendError> {
        self.f
            .inst(self.id)
            .member_ints(name)
            .map(<[i64]>::to_vec)
            .ok_or_else(|| self.missing(name))
    }

    /// Every `Float` and `Bool` member of the opcode, in table order, as
    /// f32 (a bool as 1 or 0): the parameters of an element-wise operator
    /// (`clip`: Min, Max; `leakyrelu`: Alpha; `gelu`: Approximate).
    pub fn float_params(&self) -> Result<Vec<f32>, BackendError> {
        let inst = self.f.inst(self.id);
        inst.opcode
            .info()
            .members
            .iter()
            .filter(|m| matches!(m.ty, MemberType::Float | MemberType::Bool))
            .map(|m| match m.ty {
                MemberType::Bool => self.bool(m.name).map(|b| if b { 1.0 } else { 0.0 }),
                _ => self.float(m.name).map(|v| v as f32),
            })
            .collect()
    }
}
