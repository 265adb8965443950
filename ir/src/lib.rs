//! The Glow instruction IR: types, the opcode table, functions, the `.gir`
//! parser and printer, the verifier and diagnostics.

pub mod activation;
pub mod ast;
pub mod builder;
pub mod diag;
pub mod expect;
pub mod function;
pub mod fxhash;
pub mod layout;
pub mod lexer;
pub mod limits;
pub mod member;
mod names;
pub mod opcode;
pub mod output;
pub mod parser;
pub mod printer;
pub mod quant;
pub mod shapes;
pub mod span;
pub mod types;
pub mod verifier;

#[allow(clippy::all, unused_parens)]
mod grammar {
    include!(concat!(env!("OUT_DIR"), "/grammar.rs"));
}

pub use diag::{Diagnostic, Severity};
pub use function::{
    Function, InstData, InstId, MemberValue, Module, Mutability, Operand, Value, WeightData,
    WeightId, WeightInit, ALIGN,
};
pub use layout::Layout;
pub use opcode::{Opcode, OperandKind};
pub use span::Span;
pub use types::{ElemKind, Type};
