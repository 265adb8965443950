//! `--emit=dot` and `--emit=dot-interference`: Graphviz drawings of a
//! function, built as `petgraph` graphs and written with its `Dot` printer.
//! Nodes and edges are added in program order, so the text is
//! deterministic.
//!
//! - Dataflow: one node per instruction (`N opcode %name`) and per weight
//!   (a grey box); `allocactivation`s are the buffers
//!   (boxes too). An `@in` operand is an edge from the value to the
//!   instruction, an `@out` one from the instruction to the value, `@inout`
//!   both ways; a `tensorview` points at its source with a dashed `view`
//!   edge; deallocs are left out (they only end a lifetime).
//! - Interference: one node per activation (name, bytes, lifetime, offset
//!   when planned); an edge joins two buffers live at the same time,
//!   labelled with the bytes they need together. In a planned function two
//!   buffers whose bytes overlap are marked: dashed `shares` when their
//!   lifetimes do not overlap (what the planner may do), red `OVERLAP` when
//!   they do (a broken plan).

use glow_ir::member as m;
use glow_ir::{Function, Opcode, OperandKind, Value};
use glow_passes::analysis::memory::memory_report_aligned;
use petgraph::dot::{Config, Dot};
use petgraph::graph::{Graph, NodeIndex};

/// Graphviz attributes of a node or an edge, as `key=value` text.
type Attrs = String;

fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn render(g: &Graph<Attrs, Attrs>, name: &str) -> String {
    let dot = Dot::with_attr_getters(
        g,
        &[Config::NodeNoLabel, Config::EdgeNoLabel],
        &|_, e| e.weight().clone(),
        &|_, (_, n)| n.clone(),
    );
    // petgraph names the graph nothing; say which function it is.
    format!("{dot:?}").replacen(
        "digraph {",
        &format!("digraph {} {{\n    label={}\n", quoted(name), quoted(name)),
        1,
    )
}

/// The dataflow graph of `f` in Dot.
pub fn dataflow(f: &Function) -> String {
    let mut g: Graph<Attrs, Attrs> = Graph::new();
    let mut weight_nodes: Vec<NodeIndex> = Vec::new();
    for w in &f.weights {
        let kind = match w.mutability {
            glow_ir::function::Mutability::Const => "const",
            glow_ir::function::Mutability::Mutable => "mutable",
        };
        let label = format!("%{}\n{} {kind}", w.name, w.ty);
        weight_nodes.push(g.add_node(format!(
            "label={} shape=box style=filled fillcolor=\"#e8e8e8\"",
            quoted(&label)
        )));
    }
    let mut inst_nodes: Vec<Option<NodeIndex>> = vec![None; f.insts.len()];
    for (pos, id) in f.layout.iter().enumerate() {
        let inst = f.inst(id);
        if inst.opcode == Opcode::DeallocActivation {
            continue;
        }
        let (shape, label) = match inst.opcode {
            Opcode::AllocActivation => (
                "box",
                format!(
                    "%{}\n{}",
                    inst.name,
                    inst.get(m::TY).map(|t| t.to_string()).unwrap_or_default()
                ),
            ),
            op => (
                "ellipse",
                format!("{pos} {} %{}", op.info().name, inst.name),
            ),
        };
        inst_nodes[id.index()] =
            Some(g.add_node(format!("label={} shape={shape}", quoted(&label))));
    }
    let node_of = |v: Value| match v {
        Value::Weight(w) => weight_nodes.get(w.index()).copied(),
        Value::Inst(i) => inst_nodes.get(i.index()).copied().flatten(),
    };
    for id in &f.layout {
        let inst = f.inst(id);
        let Some(me) = inst_nodes[id.index()] else {
            continue;
        };
        for op in &inst.operands {
            let Some(other) = node_of(op.value) else {
                continue;
            };
            if inst.opcode == Opcode::TensorView {
                g.add_edge(me, other, "label=\"view\" style=dashed".into());
                continue;
            }
            match op.kind {
                OperandKind::In => {
                    g.add_edge(other, me, String::new());
                }
                OperandKind::Out => {
                    g.add_edge(me, other, "color=\"#1f77b4\"".into());
                }
                OperandKind::InOut => {
                    g.add_edge(other, me, String::new());
                    g.add_edge(me, other, "color=\"#1f77b4\"".into());
                }
            }
        }
    }
    render(&g, &f.name)
}

/// The buffer interference graph of `f` in Dot.
pub fn interference(f: &Function) -> String {
    let r = memory_report_aligned(f, glow_ir::ALIGN);
    let mut g: Graph<Attrs, Attrs, petgraph::Undirected> = Graph::new_undirected();
    let nodes: Vec<NodeIndex> = r
        .buffers
        .iter()
        .map(|b| {
            let mut label = format!("%{}\n{} B, live [{}, {}]", b.name, b.bytes, b.first, b.last);
            if r.planned {
                label.push_str(&format!("\noffset {}", b.offset));
            }
            g.add_node(format!("label={} shape=box", quoted(&label)))
        })
        .collect();
    for (i, a) in r.buffers.iter().enumerate() {
        for (j, b) in r.buffers.iter().enumerate().skip(i + 1) {
            let live_together = a.first <= b.last && b.first <= a.last;
            let bytes_overlap = r.planned
                && a.offset < b.offset + b.aligned_bytes
                && b.offset < a.offset + a.aligned_bytes;
            let attrs = match (live_together, bytes_overlap) {
                (true, false) => format!("label=\"{} B\"", a.bytes + b.bytes),
                (true, true) => format!(
                    "label=\"OVERLAP {} B\" color=red penwidth=2",
                    a.bytes + b.bytes
                ),
                (false, true) => "label=\"shares\" style=dashed color=\"#2ca02c\"".to_string(),
                (false, false) => continue,
            };
            g.add_edge(nodes[i], nodes[j], attrs);
        }
    }
    let dot = Dot::with_attr_getters(
        &g,
        &[Config::NodeNoLabel, Config::EdgeNoLabel],
        &|_, e| e.weight().clone(),
        &|_, (_, n)| n.clone(),
    );
    let body = format!("{dot:?}");
    body.replacen(
        "graph {",
        &format!(
            "graph {} {{\n    label={}\n",
            quoted(&f.name),
            quoted(&format!("{} (buffer interference)", f.name))
        ),
        1,
    )
}
