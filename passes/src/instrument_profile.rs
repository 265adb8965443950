//! `instrument-profile`: Glow's profiling instrumentation
//! (`profileQuantization`): every float buffer gets a running profile of
//! its own, two new mutable weights (`%NAME.histogram`, `float<bins>` of
//! zeros, and `%NAME.info`, `float<2>` holding `[inf, -inf]`: nothing seen,
//! as the trace path's empty profile; Glow starts at `[f32::MAX, f32::MIN]`,
//! empty too), and a `quantizationprofile` adds to it right after each
//! instruction that writes the buffer (through the written operand: a view
//! adds its own elements) and, for the function's inputs, at the start.
//! These are exactly the tensors and the order `glow-run --dump-profile`
//! records from its trace, so running the instrumented function over the
//! calibration set, the state carried from sample to sample, leaves the
//! same profile in those weights (`glow-run --dump-profile
//! --profile-instrumented` reads it from there; docs/passes/instrument-profile.md).

use crate::pass::{Pass, PassContext, PassInfo, PassOption, PassOptions};
use crate::profile::{inputs, DEFAULT_BINS};
use glow_ir::builder::Builder;
use glow_ir::opcode::Family;
use glow_ir::{
    Diagnostic, ElemKind, Function, Mutability, Opcode, Type, Value, WeightData, WeightInit,
};
use std::collections::HashMap;

pub static INFO: PassInfo = PassInfo {
    name: "instrument-profile",
    summary: "Insert a quantizationprofile after every float buffer write (Glow's profiling instrumentation)",
    options: &[PassOption {
        name: "bins",
        help: "histogram bins per buffer (default 2000, as glow-run --profile-bins)",
    }],
    stats: &[
        ("profiles", "Number of quantizationprofile instructions inserted"),
        ("buffers", "Number of buffers profiled"),
    ],
    counters: &[],
    create: |opts: &PassOptions| {
        let bins = opts.get_u64("bins", DEFAULT_BINS as u64)?;
        if bins == 0 {
            return Err("option `bins` must be positive".to_string());
        }
        Ok(Box::new(InstrumentProfile { bins }))
    },
};

struct InstrumentProfile {
    bins: u64,
}

impl InstrumentProfile {
    /// The state weights of the buffer `origin`, made on first use.
    fn state(
        &self,
        f: &mut Function,
        states: &mut HashMap<Value, (Value, Value)>,
        origin: Value,
        cx: &mut PassContext,
    ) -> (Value, Value) {
        if let Some(&s) = states.get(&origin) {
            return s;
        }
        let base = f.value_name(origin).to_string();
        let weight = |f: &mut Function, suffix: &str, ty: Type, init: WeightInit| {
            let name = f.fresh_name(&format!("{base}.{suffix}"));
            Value::Weight(f.push_weight(WeightData {
                name,
                ty,
                mutability: Mutability::Mutable,
                init: Some(init),
            }))
        };
        let h = weight(
            f,
            "histogram",
            Type::float(&[self.bins]),
            WeightInit::Splat(0.0),
        );
        let info = WeightInit::Floats(vec![f64::INFINITY, f64::NEG_INFINITY]);
        let c = weight(f, "info", Type::float(&[2]), info);
        cx.bump("buffers", 1);
        states.insert(origin, (h, c));
        (h, c)
    }
}

fn is_float(f: &Function, v: Value) -> bool {
    f.value_type(v).is_some_and(|t| t.elem == ElemKind::Float)
}

impl Pass for InstrumentProfile {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let order = f.layout.to_vec();
        let Some(&first) = order.first() else {
            return Ok(false);
        };
        let mut states: HashMap<Value, (Value, Value)> = HashMap::new();
        let mut profiles = 0u64;
        // The inputs as given, before the first instruction (in declaration order).
        for name in inputs(f) {
            let Some(w) = f.weight_ids().find(|&w| f.weight(w).name == name) else {
                continue;
            };
            let v = Value::Weight(w);
            if !is_float(f, v) {
                continue;
            }
            let (h, c) = self.state(f, &mut states, v, cx);
            Builder::before(f, first).inst("profile", Opcode::QuantizationProfile, &[v, h, c], &[]);
            profiles += 1;
        }
        for id in order {
            let inst = f.inst(id);
            if inst.opcode.info().family == Family::Memory {
                continue;
            }
            let written: Vec<Value> = inst
                .operands
                .iter()
                .filter(|o| o.kind.writes())
                .map(|o| o.value)
                .collect();
            let mut anchor = id;
            for v in written {
                let origin = f.origin(v).0;
                if !is_float(f, origin) {
                    continue;
                }
                let (h, c) = self.state(f, &mut states, origin, cx);
                anchor = Builder::after(f, anchor).inst(
                    "profile",
                    Opcode::QuantizationProfile,
                    &[v, h, c],
                    &[],
                );
                profiles += 1;
            }
        }
        cx.bump("profiles", profiles);
        Ok(profiles > 0)
    }
}
