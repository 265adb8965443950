//! The one typed accessor for instruction members, shared by the C emitter
//! and the interpreter: a missing or mistyped member is the same error in
//! both engines, and the operator tables read their parameters the same way.

use crate::error::{inst_error, BackendError};
use glow_ir::member::{Key, Kind};
use glow_ir::opcode::MemberType;
use glow_ir::{Function, InstId, MemberValue};

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

    /// A member's value; a missing one is an error naming it.
    pub fn get<K: Kind>(&self, key: Key<K>) -> Result<K::Out<'a>, BackendError> {
        self.f
            .inst(self.id)
            .get(key)
            .ok_or_else(|| self.missing(key.name()))
    }

    /// A member the table names (for code that walks the table).
    fn by_name(&self, name: &str) -> Result<&'a MemberValue, BackendError> {
        self.f
            .inst(self.id)
            .member_by_name(name)
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
                MemberType::Bool => {
                    self.by_name(m.name)
                        .map(|v| if v.as_bool() == Some(true) { 1.0 } else { 0.0 })
                }
                _ => {
                    let v = self.by_name(m.name)?;
                    v.as_float()
                        .map(|v| v as f32)
                        .ok_or_else(|| self.missing(m.name))
                }
            })
            .collect()
    }

    /// Every `Int` and `Bool` member of the opcode, in table order (a bool
    /// as 1 or 0): the parameters of an `IntUnary` operator (`modulo`:
    /// Divisor, SignFollowDivisor).
    pub fn int_params(&self) -> Result<Vec<i64>, BackendError> {
        let inst = self.f.inst(self.id);
        inst.opcode
            .info()
            .members
            .iter()
            .filter(|m| matches!(m.ty, MemberType::Int | MemberType::Bool))
            .map(|m| {
                let v = self.by_name(m.name)?;
                match m.ty {
                    MemberType::Bool => Ok(i64::from(v.as_bool() == Some(true))),
                    _ => v.as_int().ok_or_else(|| self.missing(m.name)),
                }
            })
            .collect()
    }
}
