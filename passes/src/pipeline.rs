//! Pipelines: the lists of pass invocations that `--pass`, `--passes`, `-O`
//! and `--mode` describe.

use crate::pass::PassOptions;
use crate::registry::{self, PassInfo};
use glow_ir::diag::did_you_mean;

/// One pass invocation with its options.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub pass: &'static PassInfo,
    pub options: PassOptions,
}

/// An ordered list of pass invocations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pipeline {
    pub steps: Vec<Step>,
}

/// Optimization modes (the seed commit's `OptimizationMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    None,
    Train,
    Infer,
}

/// Glow's default order. Each constraint on the order:
pub const INFER: &[&str] = &[
    // Simplify first, so later passes see canonical views and copies.
    "peephole",
    // Drop dead writes before they extend lifetimes.
    "dse",
    // Activations into their convolution, before anything shares the
    // intermediate buffer that fusing erases.
    "fuse-activations",
    // Turn contiguous insert/extract into views before sharing looks at them.
    "optimize-inserts",
    "optimize-extracts",
    // Element-wise results take over an input buffer that dies there, before
    // sharing: in-place is exact (no lifetime test), sharing merges the rest.
    "inplace",
    // The heart: reuse buffers whose live intervals do not overlap.
    "share-buffers",
    // Sharing leaves copies with equal source and dest; erase them.
    "peephole",
    // Shrink lifetimes to the uses that remain after sharing.
    "dealloc-sinking",
    "alloc-sinking",
    // Sharing can make more writes dead.
    "dse",
    // Remove the allocs sharing emptied, and unused views.
    "dead-alloc",
    // A check that nothing wrote a const weight.
    "make-weights-const",
    // Last: offsets follow the final alloc/dealloc positions, which any
    // later pass could move.
    "plan-memory",
];

impl Mode {
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "none" => Ok(Mode::None),
            "train" => Ok(Mode::Train),
            "infer" => Ok(Mode::Infer),
            other => Err(format!(
                "unknown mode `{other}`; expected none, train or infer"
            )),
        }
    }

    /// The pass names this mode runs.
    pub fn pass_names(self) -> Vec<&'static str> {
        match self {
            Mode::None => Vec::new(),
            // Training keeps every buffer distinct: gradients need them. The
            // arena plan stays: it only follows the explicit lifetimes.
            Mode::Train => INFER
                .iter()
                .copied()
                .filter(|&p| p != "share-buffers" && p != "inplace" && p != "fuse-activations")
                .collect(),
            Mode::Infer => INFER.to_vec(),
        }
    }
}

impl Pipeline {
    /// The pipeline of a mode.
    pub fn for_mode(mode: Mode) -> Pipeline {
        let steps = mode
            .pass_names()
            .into_iter()
            .filter_map(registry::lookup)
            .map(|pass| Step {
                pass,
                options: PassOptions::default(),
            })
            .collect();
        Pipeline { steps }
    }

    /// Parses `a,b{key=value,k2=v2},c`.
    pub fn parse(text: &str) -> Result<Pipeline, String> {
        let mut steps = Vec::new();
        for item in split_top_level(text)? {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!("empty pass name in `{text}`"));
            }
            let (name, opts) = match item.find('{') {
                Some(open) => {
                    let Some(body) = item[open + 1..].strip_suffix('}') else {
                        return Err(format!("unterminated options in `{item}`"));
                    };
                    (item[..open].trim(), parse_options(body)?)
                }
                None => (item, PassOptions::default()),
            };
            let pass = lookup_or_suggest(name)?;
            for key in opts.values.keys() {
                if !pass.options.iter().any(|o| o.name == key) {
                    let known: Vec<&str> = pass.options.iter().map(|o| o.name).collect();
                    let hint = match did_you_mean(key, known.iter().copied()) {
                        Some(s) => format!("; did you mean `{s}`?"),
                        None if known.is_empty() => format!("; `{}` takes no options", pass.name),
                        None => format!("; its options are {}", known.join(", ")),
                    };
                    return Err(format!("pass `{}` has no option `{key}`{hint}", pass.name));
                }
            }
            (pass.create)(&opts).map_err(|e| format!("pass `{}`: {e}", pass.name))?;
            steps.push(Step {
                pass,
                options: opts,
            });
        }
        Ok(Pipeline { steps })
    }

    /// `a,b{k=v}` text of this pipeline (used by crash reproducers).
    pub fn to_text(&self) -> String {
        let items: Vec<String> = self
            .steps
            .iter()
            .map(|s| {
                if s.options.values.is_empty() {
                    s.pass.name.to_string()
                } else {
                    let kv: Vec<String> = s
                        .options
                        .values
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    format!("{}{{{}}}", s.pass.name, kv.join(","))
                }
            })
            .collect();
        items.join(",")
    }
}

/// A registered pass by name, or an error listing the closest names.
pub fn lookup_or_suggest(name: &str) -> Result<&'static PassInfo, String> {
    registry::lookup(name).ok_or_else(|| {
        let names = registry::PASSES.iter().map(|p| p.name);
        match did_you_mean(name, names) {
            Some(s) => {
                format!("unknown pass `{name}`; did you mean `{s}`? (--list-passes lists them all)")
            }
            None => format!(
                "unknown pass `{name}`; known passes: {}",
                registry::PASSES
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    })
}

fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unbalanced `}}` in `{text}`"));
                }
            }
            ',' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced `{{` in `{text}`"));
    }
    items.push(&text[start..]);
    Ok(items)
}

fn parse_options(body: &str) -> Result<PassOptions, String> {
    let mut opts = PassOptions::default();
    for kv in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(format!("expected `key=value`, found `{kv}`"));
        };
        opts.values
            .insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(opts)
}
