//! The syntax tree the grammar builds: what was written, with byte spans.
//! `parser` lowers it into a `Function`, checking names, opcodes and members.

/// A token's text with its byte range.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    pub value: T,
    pub start: usize,
    pub end: usize,
}

pub type Text<'a> = Spanned<&'a str>;

#[derive(Clone, Debug, PartialEq)]
pub struct FuncAst<'a> {
    pub name: Text<'a>,
    pub start: usize,
    pub end: usize,
    pub weights: Vec<Box<WeightAst<'a>>>,
    pub insts: Vec<Box<InstAst<'a>>>,
    /// `function f { Arena: N, Align: A }` header members.
    pub members: Vec<Box<MemberAst<'a>>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WeightAst<'a> {
    pub start: usize,
    pub end: usize,
    pub name: Text<'a>,
    pub ty: Box<TypeAst<'a>>,
    pub mutable: Text<'a>,
    pub members: Vec<Box<MemberAst<'a>>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InstAst<'a> {
    pub start: usize,
    pub end: usize,
    pub name: Text<'a>,
    pub opcode: Text<'a>,
    pub operands: Vec<OperandAst<'a>>,
    pub members: Vec<Box<MemberAst<'a>>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OperandAst<'a> {
    pub kind: Text<'a>,
    pub name: Text<'a>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MemberAst<'a> {
    pub name: Text<'a>,
    pub value: ValueAst<'a>,
    pub end: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Num<'a> {
    Int(&'a str),
    Float(&'a str),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ValueAst<'a> {
    Num(Spanned<Num<'a>>),
    Ident(Text<'a>),
    Str(Text<'a>),
    Array {
        elems: Vec<ValueAst<'a>>,
        /// Span of a `...` that a Glow dump left in place of elements.
        truncated: Option<(usize, usize)>,
        start: usize,
        end: usize,
    },
    Type(Box<TypeAst<'a>>),
    Call {
        func: Text<'a>,
        arg: Spanned<Num<'a>>,
        end: usize,
    },
}

impl ValueAst<'_> {
    pub fn span(&self) -> (usize, usize) {
        match self {
            ValueAst::Num(n) => (n.start, n.end),
            ValueAst::Ident(t) | ValueAst::Str(t) => (t.start, t.end),
            ValueAst::Array { start, end, .. } => (*start, *end),
            ValueAst::Type(t) => (t.start, t.end),
            ValueAst::Call { func, end, .. } => (func.start, *end),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeAst<'a> {
    pub start: usize,
    pub end: usize,
    pub elem: Text<'a>,
    /// `[S:scale O:offset]`: key, value pairs as written.
    pub quant: Vec<(Text<'a>, Spanned<Num<'a>>)>,
    pub dims: Vec<Text<'a>>,
}
