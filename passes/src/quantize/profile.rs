//! Quantization profiles: per buffer, the range and a histogram of the
//! values it held over a calibration set (`glow-run --dump-profile`), read
//! back by the `quantize` pass (`--load-profile`).
//!
//! **Histogram** (Glow's `generateTensorHistogram`, lib/Quantization/Base/
//! Profile.cpp): a fixed number of bins (`bins`, 2000 by default) over the
//! running `[min, max]`. The first tensor sets the range; a later tensor
//! outside it widens the range and re-bins the counts into the same number
//! of bins over the new range (each old bin's count split over the at most
//! two new bins it overlaps, in proportion, in whole counts); then every
//! element adds 1 to its bin (`(x - min) / width`, the last bin closed).
//!
//! **File format**: a small YAML subset, written and read here (no YAML
//! library): `key: value` lines, `#` comments, a `buffers:` block sequence of
//! mappings indented by two spaces, strings in double quotes with `\"` and
//! `\\` escapes (or plain words), numbers as Rust prints them (shortest
//! round trip), histograms as flow sequences `[0, 3, ...]` on one line.
//!
//! ```yaml
//! # glow-rs quantization profile
//! version: 1
//! function: "main_graph"
//! hash: "9f0c1d2e3a4b5c6d"
//! samples: 200
//! bins: 2000
//! buffers:
//!   - name: "/0/Conv_output_0"
//!     min: -1.5
//!     max: 3.25
//!     histogram: [12, 0, 4, ...]
//! ```
//!
//! `hash` is the FNV-1a 64-bit hash (16 hex digits) of the canonical printer
//! output of the function the profile was taken on; the pass refuses a
//! profile of any other text.

use glow_ir::printer::{print_function, PrintOptions};
use glow_ir::{Function, Mutability, Value};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The default histogram size.
pub const DEFAULT_BINS: usize = 2000;

/// The range and histogram of one buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferProfile {
    pub name: String,
    pub min: f32,
    pub max: f32,
    pub histogram: Vec<f32>,
}

impl BufferProfile {
    /// An empty profile (no value seen yet: `min > max`).
    pub fn new(name: &str, bins: usize) -> BufferProfile {
        BufferProfile {
            name: name.to_string(),
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            histogram: vec![0.0; bins],
        }
    }

    /// Adds the values of one tensor (Glow's scheme, module comment;
    /// `glow_ir::quant::profile_update`, what the `quantizationprofile`
    /// instruction computes too). NaN and infinite values are left out of
    /// the range and the histogram.
    pub fn add(&mut self, values: &[f32]) {
        glow_ir::quant::profile_update(values, &mut self.histogram, &mut self.min, &mut self.max);
    }
}

/// The mutable weights `f` reads before writing them, in declaration order:
/// the inputs a profile records as given.
pub fn inputs(f: &Function) -> Vec<String> {
    let mut first: HashMap<Value, bool> = HashMap::new();
    for i in f.inst_ids() {
        for o in &f.inst(i).operands {
            let org = f.origin(o.value).0;
            first.entry(org).or_insert(o.kind.reads());
        }
    }
    f.weight_ids()
        .filter(|&w| f.weight(w).mutability == Mutability::Mutable)
        .filter(|&w| first.get(&Value::Weight(w)).copied().unwrap_or(false))
        .map(|w| f.weight(w).name.clone())
        .collect()
}

/// A whole profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub function: String,
    /// [`function_hash`] of the profiled function.
    pub hash: u64,
    pub samples: u64,
    pub bins: usize,
    pub buffers: Vec<BufferProfile>,
}

impl Profile {
    pub fn get(&self, name: &str) -> Option<&BufferProfile> {
        self.buffers.iter().find(|b| b.name == name)
    }
}

/// FNV-1a 64 of the canonical text of `f`.
pub fn function_hash(f: &Function) -> u64 {
    let text = print_function(f, PrintOptions::default());
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn num(x: f32) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:?}")
    }
}

/// The profile as text (module comment).
pub fn write(p: &Profile) -> String {
    let mut out = String::from(
        "# glow-rs quantization profile (docs/quantization.md)\nversion: 1\nfunction: ",
    );
    quote(&p.function, &mut out);
    let _ = write!(
        out,
        "\nhash: \"{:016x}\"\nsamples: {}\nbins: {}\nbuffers:\n",
        p.hash, p.samples, p.bins
    );
    for b in &p.buffers {
        out.push_str("  - name: ");
        quote(&b.name, &mut out);
        let _ = write!(
            out,
            "\n    min: {:?}\n    max: {:?}\n    histogram: [",
            b.min, b.max
        );
        for (i, c) in b.histogram.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&num(*c));
        }
        out.push_str("]\n");
    }
    out
}

/// A parse error at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl ParseError {
    /// `file:line:col: error: message`.
    pub fn render(&self, file: &str) -> String {
        format!("{file}:{}:{}: error: {}", self.line, self.col, self.message)
    }
}

struct Line<'a> {
    no: usize,
    indent: usize,
    text: &'a str,
}

fn err(line: usize, col: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        col,
        message: message.into(),
    }
}

/// Splits `key: value` at the first `:` outside quotes; the column of the value.
fn key_value<'a>(l: &Line<'a>) -> Result<(&'a str, &'a str, usize), ParseError> {
    let t = l.text;
    let Some(colon) = t.find(':') else {
        return Err(err(
            l.no,
            l.indent + 1,
            format!("expected `key: value`, found `{t}`"),
        ));
    };
    let key = t[..colon].trim_end();
    let rest = &t[colon + 1..];
    let lead = rest.len() - rest.trim_start().len();
    let value = rest.trim();
    Ok((key, value, l.indent + colon + 1 + lead + 1))
}

fn parse_str(v: &str, line: usize, col: usize) -> Result<String, ParseError> {
    if let Some(body) = v.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    let after = body[i + 1..].trim();
                    if !after.is_empty() {
                        return Err(err(
                            line,
                            col + i + 2,
                            format!("unexpected `{after}` after the string"),
                        ));
                    }
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, '"')) => out.push('"'),
                    Some((_, '\\')) => out.push('\\'),
                    Some((_, 'n')) => out.push('\n'),
                    Some((j, c)) => {
                        return Err(err(line, col + j + 1, format!("unknown escape `\\{c}`")))
                    }
                    None => break,
                },
                c => out.push(c),
            }
        }
        Err(err(line, col, "unterminated string"))
    } else if v.is_empty() {
        Err(err(line, col, "expected a value"))
    } else {
        Ok(v.to_string())
    }
}

fn parse_f32(v: &str, line: usize, col: usize, what: &str) -> Result<f32, ParseError> {
    let x: f32 = match v {
        ".inf" | "inf" => f32::INFINITY,
        "-.inf" | "-inf" => f32::NEG_INFINITY,
        _ => v.parse().map_err(|_| {
            err(
                line,
                col,
                format!("expected a number for `{what}`, found `{v}`"),
            )
        })?,
    };
    Ok(x)
}

fn parse_u64(v: &str, line: usize, col: usize, what: &str) -> Result<u64, ParseError> {
    v.parse().map_err(|_| {
        err(
            line,
            col,
            format!("expected an unsigned integer for `{what}`, found `{v}`"),
        )
    })
}

fn parse_list(v: &str, line: usize, col: usize) -> Result<Vec<f32>, ParseError> {
    let Some(inner) = v.strip_prefix('[').and_then(|s| s.strip_suffix(']')) else {
        return Err(err(
            line,
            col,
            "expected a list `[n, n, ...]` for `histogram`",
        ));
    };
    let mut out = Vec::new();
    let mut at = col + 1;
    for part in inner.split(',') {
        let t = part.trim();
        let c = at + (part.len() - part.trim_start().len());
        at += part.len() + 1;
        if t.is_empty() && inner.trim().is_empty() {
            break;
        }
        let x: f32 = t.parse().map_err(|_| {
            err(
                line,
                c,
                format!("expected a count in `histogram`, found `{t}`"),
            )
        })?;
        if !(x >= 0.0 && x.is_finite()) {
            return Err(err(
                line,
                c,
                format!("a histogram count must be non-negative, found `{t}`"),
            ));
        }
        out.push(x);
    }
    Ok(out)
}

/// Parses a profile; every problem is reported at its line and column.
pub fn parse(text: &str) -> Result<Profile, ParseError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        if raw.contains('\t') {
            let col = raw.find('\t').unwrap_or(0) + 1;
            return Err(err(
                no,
                col,
                "tabs are not allowed in the profile (indent with spaces)",
            ));
        }
        let body = strip_comment(raw);
        let trimmed = body.trim_end();
        if trimmed.trim().is_empty() {
            continue;
        }
        let indent = trimmed.len() - trimmed.trim_start().len();
        lines.push(Line {
            no,
            indent,
            text: trimmed.trim_start(),
        });
    }
    let mut version = None;
    let mut function = None;
    let mut hash = None;
    let mut samples = 0u64;
    let mut bins = None;
    let mut buffers: Vec<(usize, BufferProfile)> = Vec::new();
    let mut seen_buffers = false;
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        if l.indent != 0 {
            return Err(err(l.no, l.indent + 1, "unexpected indentation"));
        }
        let (key, value, col) = key_value(l)?;
        match key {
            "version" => {
                let v = parse_u64(value, l.no, col, "version")?;
                if v != 1 {
                    return Err(err(l.no, col, format!("unsupported profile version {v} (this tool reads version 1)")));
                }
                version = Some(v);
            }
            "function" => function = Some(parse_str(value, l.no, col)?),
            "hash" => {
                let s = parse_str(value, l.no, col)?;
                let h = u64::from_str_radix(&s, 16).map_err(|_| {
                    err(l.no, col, format!("expected 16 hex digits for `hash`, found `{s}`"))
                })?;
                hash = Some(h);
            }
            "samples" => samples = parse_u64(value, l.no, col, "samples")?,
            "bins" => bins = Some(parse_u64(value, l.no, col, "bins")? as usize),
            "buffers" => {
                if !value.is_empty() && value != "[]" {
                    return Err(err(l.no, col, "expected the buffers on the following lines"));
                }
                seen_buffers = true;
                i += 1;
                while i < lines.len() && lines[i].indent > 0 {
                    let item = &lines[i];
                    let Some(first) = item.text.strip_prefix("- ") else {
                        return Err(err(item.no, item.indent + 1, "expected `- name: ...` starting a buffer"));
                    };
                    let first_line = Line {
                        no: item.no,
                        indent: item.indent + 2,
                        text: first.trim_start(),
                    };
                    let field_indent = item.indent + 2;
                    let mut fields = vec![first_line];
                    i += 1;
                    while i < lines.len() && lines[i].indent == field_indent && !lines[i].text.starts_with("- ") {
                        fields.push(Line {
                            no: lines[i].no,
                            indent: lines[i].indent,
                            text: lines[i].text,
                        });
                        i += 1;
                    }
                    if i < lines.len() && lines[i].indent > field_indent {
                        return Err(err(lines[i].no, lines[i].indent + 1, "unexpected indentation"));
                    }
                    let (mut name, mut min, mut max, mut hist) = (None, None, None, None);
                    for fl in &fields {
                        let (k, v, c) = key_value(fl)?;
                        match k {
                            "name" => name = Some(parse_str(v, fl.no, c)?),
                            "min" => min = Some(parse_f32(v, fl.no, c, "min")?),
                            "max" => max = Some(parse_f32(v, fl.no, c, "max")?),
                            "histogram" => hist = Some(parse_list(v, fl.no, c)?),
                            other => {
                                return Err(err(fl.no, fl.indent + 1, format!("unknown buffer field `{other}` (expected name, min, max, histogram)")))
                            }
                        }
                    }
                    let missing = |what: &str| err(item.no, item.indent + 1, format!("this buffer has no `{what}`"));
                    let b = BufferProfile {
                        name: name.ok_or_else(|| missing("name"))?,
                        min: min.ok_or_else(|| missing("min"))?,
                        max: max.ok_or_else(|| missing("max"))?,
                        histogram: hist.unwrap_or_default(),
                    };
                    if let Some((line, _)) = buffers.iter().find(|(_, o)| o.name == b.name) {
                        return Err(err(item.no, item.indent + 3, format!("buffer `{}` is listed twice (first on line {line})", b.name)));
                    }
                    buffers.push((item.no, b));
                }
                continue;
            }
            other => {
                return Err(err(l.no, 1, format!("unknown key `{other}` (expected version, function, hash, samples, bins, buffers)")))
            }
        }
        i += 1;
    }
    let end = lines.last().map_or(1, |l| l.no);
    if version.is_none() {
        return Err(err(1, 1, "the profile has no `version: 1` line"));
    }
    let hash = hash.ok_or_else(|| err(end, 1, "the profile has no `hash`"))?;
    if !seen_buffers {
        return Err(err(end, 1, "the profile has no `buffers`"));
    }
    let bins = bins.unwrap_or(DEFAULT_BINS);
    for (line, b) in &buffers {
        if !b.histogram.is_empty() && b.histogram.len() != bins {
            return Err(err(
                *line,
                1,
                format!(
                    "buffer `{}` has {} histogram bins, but the profile says `bins: {bins}`",
                    b.name,
                    b.histogram.len()
                ),
            ));
        }
    }
    Ok(Profile {
        function: function.unwrap_or_default(),
        hash,
        samples,
        bins,
        buffers: buffers.into_iter().map(|(_, b)| b).collect(),
    })
}

/// The line without a `#` comment (a `#` inside a quoted string stays).
fn strip_comment(s: &str) -> &str {
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_str => escaped = true,
            '"' => in_str = !in_str,
            '#' if !in_str => return &s[..i],
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_follows_glows_scheme() {
        let mut b = BufferProfile::new("x", 4);
        b.add(&[0.0, 1.0, 2.0, 4.0]);
        assert_eq!((b.min, b.max), (0.0, 4.0));
        assert_eq!(b.histogram, vec![1.0, 1.0, 1.0, 1.0]);
        // Widening to [0, 8] folds the four bins of width 1 into bins of width 2.
        b.add(&[8.0]);
        assert_eq!((b.min, b.max), (0.0, 8.0));
        assert_eq!(b.histogram.iter().sum::<f32>(), 5.0);
        assert_eq!(b.histogram, vec![2.0, 2.0, 0.0, 1.0]);
        // Non-finite values are ignored.
        b.add(&[f32::NAN, f32::INFINITY]);
        assert_eq!(b.histogram.iter().sum::<f32>(), 5.0);
    }

    #[test]
    fn writes_and_parses_back() {
        let p = Profile {
            function: "f \"q\"".into(),
            hash: 0x0123_4567_89ab_cdef,
            samples: 3,
            bins: 3,
            buffers: vec![
                BufferProfile {
                    name: "/0/Conv # x".into(),
                    min: -1.5,
                    max: 0.1,
                    histogram: vec![1.0, 0.0, 7.0],
                },
                BufferProfile {
                    name: "y".into(),
                    min: 0.0,
                    max: 0.0,
                    histogram: vec![3.0, 0.0, 0.0],
                },
            ],
        };
        let text = write(&p);
        assert_eq!(parse(&text), Ok(p));
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("version: 1\nhash: \"zz\"\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 7));
        assert!(e.message.contains("hex"), "{e:?}");
        let e = parse("version: 1\nhash: \"00\"\nbuffers:\n  - name: a\n    min: x\n").unwrap_err();
        assert_eq!(
            (e.line, e.col, e.render("p.yaml").as_str()),
            (
                5,
                10,
                "p.yaml:5:10: error: expected a number for `min`, found `x`"
            )
        );
        let e = parse("version: 1\nhash: \"00\"\nbuffers:\n  - name: a\n    max: 1\n").unwrap_err();
        assert!(e.message.contains("no `min`"), "{e:?}");
        assert_eq!(e.line, 4);
        let e = parse("version: 2\n").unwrap_err();
        assert!(e.message.contains("version 2"));
        let e = parse("verison: 1\n").unwrap_err();
        assert!(e.message.contains("unknown key `verison`"));
    }
}
