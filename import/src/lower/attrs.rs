//! Typed access to an ONNX node's attributes.

use crate::onnx::AttributeProto;

/// Typed access to a node's attributes.
pub(crate) struct Attrs<'a>(pub &'a [AttributeProto]);

impl<'a> Attrs<'a> {
    fn get(&self, name: &str) -> Option<&'a AttributeProto> {
        self.0.iter().find(|a| a.name == name)
    }
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    pub fn int(&self, name: &str, default: i64) -> i64 {
        self.get(name).map_or(default, |a| a.i)
    }
    pub fn float(&self, name: &str, default: f32) -> f32 {
        self.get(name).map_or(default, |a| a.f)
    }
    pub fn ints(&self, name: &str) -> Option<&'a [i64]> {
        self.get(name).map(|a| a.ints.as_slice())
    }
    pub fn floats(&self, name: &str) -> Option<&'a [f32]> {
        self.get(name).map(|a| a.floats.as_slice())
    }
    pub fn string(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(|a| String::from_utf8_lossy(&a.s).into_owned())
    }
    pub fn tensor(&self, name: &str) -> Option<&'a crate::onnx::TensorProto> {
        self.get(name).and_then(|a| a.t.as_ref())
    }
}
