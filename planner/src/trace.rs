//! Glow's allocator trace format (`MemoryAllocatorTestModels.txt`):
//! `MODEL name`, `ALIGN n`, `ALLOC id size`, `FREE id`, `MEM n`, `EFF r`,
//! `#` comments. Each event is one time step, so a buffer lives from its
//! ALLOC to its FREE (closed). Errors carry line and column (1-based).

use super::Buffer;
use std::collections::BTreeMap;

/// One model of a trace file.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceModel {
    pub name: String,
    pub align: u64,
    /// Buffers in ALLOC order.
    pub buffers: Vec<Buffer>,
    /// Glow's recorded arena (`MEM`), if any.
    pub glow_mem: Option<u64>,
}

/// A problem at `line:col`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

/// Parses a whole trace file; every error found is returned.
pub fn parse(text: &str) -> Result<Vec<TraceModel>, Vec<TraceError>> {
    let mut models: Vec<TraceModel> = Vec::new();
    let mut errors = Vec::new();
    // Per model: id -> (buffer index, ALLOC line) of open buffers.
    let mut open: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut time: u32 = 0;
    let mut model_line = 0;
    for (ln, line) in text.lines().enumerate() {
        let ln = ln + 1;
        let words = split_words(line);
        let Some(&(c0, kw)) = words.first() else {
            continue;
        };
        if kw.starts_with('#') {
            continue;
        }
        let err = |col: usize, message: String| TraceError {
            line: ln,
            col,
            message,
        };
        let arg = |k: usize, what: &str| -> Result<(usize, &str), TraceError> {
            words
                .get(k)
                .copied()
                .ok_or_else(|| err(line.trim_end().len() + 1, format!("`{kw}` expects {what}")))
        };
        let num = |k: usize, what: &str| -> Result<u64, TraceError> {
            let (c, w) = arg(k, what)?;
            w.parse::<u64>()
                .map_err(|_| err(c, format!("expected {what}, found `{w}`")))
        };
        let expected_len = match kw {
            "MODEL" | "ALIGN" | "FREE" | "MEM" | "EFF" => 2,
            "ALLOC" => 3,
            _ => {
                errors.push(err(
                    c0,
                    format!(
                        "unknown record `{kw}`; expected MODEL, ALIGN, ALLOC, FREE, MEM or EFF"
                    ),
                ));
                continue;
            }
        };
        if let Some(&(c, w)) = words.get(expected_len) {
            errors.push(err(c, format!("unexpected `{w}` after `{kw}` record")));
            continue;
        }
        if kw == "MODEL" {
            close_model(&mut open, model_line, &mut errors);
            seen.clear();
            time = 0;
            model_line = ln;
            match arg(1, "a model name") {
                Ok((_, name)) => models.push(TraceModel {
                    name: name.to_string(),
                    align: glow_ir::ALIGN,
                    buffers: Vec::new(),
                    glow_mem: None,
                }),
                Err(e) => errors.push(e),
            }
            continue;
        }
        let Some(m) = models.last_mut() else {
            errors.push(err(c0, format!("`{kw}` before the first MODEL record")));
            continue;
        };
        let r: Result<(), TraceError> = (|| {
            match kw {
                "ALIGN" => m.align = num(1, "an alignment in bytes")?,
                "MEM" => m.glow_mem = Some(num(1, "a size in bytes")?),
                "EFF" => {
                    let (c, w) = arg(1, "a ratio")?;
                    if w.parse::<f64>().is_err() {
                        return Err(err(c, format!("expected a ratio, found `{w}`")));
                    }
                }
                "ALLOC" => {
                    let (c, id) = arg(1, "a buffer id")?;
                    let size = num(2, "a size in bytes")?;
                    if let Some(prev) = seen.get(id) {
                        return Err(err(
                            c,
                            format!("buffer `{id}` was already allocated on line {prev}"),
                        ));
                    }
                    seen.insert(id.to_string(), ln);
                    open.insert(id.to_string(), (m.buffers.len(), ln));
                    // Recorded even when too large, so its FREE is not a second error.
                    m.buffers
                        .push(Buffer::new(size.min(MAX_BUFFER_BYTES), time, time));
                    time = time.saturating_add(1);
                    if size > MAX_BUFFER_BYTES {
                        let (c, _) = arg(2, "a size in bytes")?;
                        return Err(err(
                            c,
                            format!("size {size} is too large: a buffer may have at most {MAX_BUFFER_BYTES} bytes (2^48)"),
                        ));
                    }
                }
                _ => {
                    let (c, id) = arg(1, "a buffer id")?;
                    let Some((b, _)) = open.remove(id) else {
                        return Err(err(
                            c,
                            if seen.contains_key(id) {
                                format!("buffer `{id}` is freed twice")
                            } else {
                                format!("buffer `{id}` is freed but was never allocated")
                            },
                        ));
                    };
                    m.buffers[b].last = time;
                    time = time.saturating_add(1);
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            errors.push(e);
        }
    }
    close_model(&mut open, model_line, &mut errors);
    if errors.is_empty() {
        Ok(models)
    } else {
        errors.sort_by_key(|e| (e.line, e.col));
        Err(errors)
    }
}

/// The largest buffer a trace may describe: sums of a million of them stay
/// far from overflowing the planner's 64-bit arithmetic.
pub const MAX_BUFFER_BYTES: u64 = 1 << 48;

/// Buffers still open at the end of a model are an error at their ALLOC.
fn close_model(
    open: &mut BTreeMap<String, (usize, usize)>,
    _model: usize,
    errors: &mut Vec<TraceError>,
) {
    for (id, (_, ln)) in std::mem::take(open) {
        errors.push(TraceError {
            line: ln,
            col: 1,
            message: format!("buffer `{id}` is allocated but never freed"),
        });
    }
}

/// Whitespace-separated words with their 1-based columns.
fn split_words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line
        .char_indices()
        .chain(std::iter::once((line.len(), ' ')))
    {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((line[..s].chars().count() + 1, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    out
}
