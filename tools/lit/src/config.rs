//! Suite configuration: `lit.toml` at a suite root and `lit.local.toml` overrides in subdirectories.
//!
//! The files use a small, strict subset of TOML (`key = "string" | ["array", ...] | true | false`,
//! `#` comments), parsed here by hand so the runner needs no TOML dependency. Unknown keys are
//! errors, so a typo in a config never silently changes which tests run.

use std::path::Path;
use thiserror::Error;

/// Name of the file that marks a suite root.
pub const SUITE_CONFIG: &str = "lit.toml";
/// Name of the per-directory override file.
pub const LOCAL_CONFIG: &str = "lit.local.toml";

/// Errors while reading a config file.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{path}:{line}: {msg}")]
    Syntax {
        path: String,
        line: usize,
        msg: String,
    },
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
}

/// The root configuration of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteConfig {
    /// Shown in test names: `NAME :: rel/path`.
    pub name: String,
    /// File suffixes (with the dot) that are tests.
    pub suffixes: Vec<String>,
    /// File or directory base names never treated as tests (e.g. `Inputs`).
    pub excludes: Vec<String>,
    /// Features made available to every test of the suite.
    pub features: Vec<String>,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig {
            name: "glow".into(),
            suffixes: vec![".gir".into(), ".txt".into()],
            excludes: vec!["Inputs".into()],
            features: Vec::new(),
        }
    }
}

/// A per-directory override; applies to its directory and everything below.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocalConfig {
    /// Replaces the inherited suffix list when present.
    pub suffixes: Option<Vec<String>>,
    /// Added to the inherited excludes.
    pub excludes: Vec<String>,
    /// Added to the inherited features.
    pub features: Vec<String>,
    /// Marks every test below as UNSUPPORTED (when `Some(true)`).
    pub unsupported: Option<bool>,
}

/// A parsed TOML-subset value.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Str(String),
    Bool(bool),
    Array(Vec<String>),
}

impl SuiteConfig {
    /// Reads and validates a `lit.toml`.
    pub fn load(path: &Path) -> Result<SuiteConfig, ConfigError> {
        let text = read(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses the text of a `lit.toml`; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<SuiteConfig, ConfigError> {
        let mut cfg = SuiteConfig::default();
        for (line, key, value) in parse_pairs(text, origin)? {
            let err = |msg: String| syntax(origin, line, msg);
            match (key.as_str(), value) {
                ("name", Value::Str(s)) => cfg.name = s,
                ("suffixes", Value::Array(a)) => cfg.suffixes = a,
                ("excludes", Value::Array(a)) => cfg.excludes = a,
                ("features", Value::Array(a)) => cfg.features = a,
                ("name" | "suffixes" | "excludes" | "features", _) => {
                    return Err(err(format!("wrong type for key `{key}`")))
                }
                _ => {
                    return Err(err(format!(
                        "unknown key `{key}` (expected name, suffixes, excludes, features)"
                    )))
                }
            }
        }
        Ok(cfg)
    }
}

impl LocalConfig {
    /// Reads and validates a `lit.local.toml`.
    pub fn load(path: &Path) -> Result<LocalConfig, ConfigError> {
        let text = read(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses the text of a `lit.local.toml`; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<LocalConfig, ConfigError> {
        let mut cfg = LocalConfig::default();
        for (line, key, value) in parse_pairs(text, origin)? {
            let err = |msg: String| syntax(origin, line, msg);
            match (key.as_str(), value) {
                ("suffixes", Value::Array(a)) => cfg.suffixes = Some(a),
                ("excludes", Value::Array(a)) => cfg.excludes = a,
                ("features", Value::Array(a)) => cfg.features = a,
                ("unsupported", Value::Bool(b)) => cfg.unsupported = Some(b),
                ("suffixes" | "excludes" | "features" | "unsupported", _) => {
                    return Err(err(format!("wrong type for key `{key}`")))
                }
                _ => {
                    return Err(err(format!(
                        "unknown key `{key}` (expected suffixes, excludes, features, unsupported)"
                    )))
                }
            }
        }
        Ok(cfg)
    }
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|err| ConfigError::Io {
        path: path.display().to_string(),
        err,
    })
}

fn syntax(origin: &str, line: usize, msg: String) -> ConfigError {
    ConfigError::Syntax {
        path: origin.to_string(),
        line,
        msg,
    }
}

/// Splits the file into `(line, key, value)` triples; arrays may span lines.
fn parse_pairs(text: &str, origin: &str) -> Result<Vec<(usize, String, Value)>, ConfigError> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((idx, raw)) = lines.next() {
        let line = idx + 1;
        let stripped = strip_comment(raw);
        let trimmed = stripped.trim();
        if trimmed.is_empty() {
            continue;
        }
        let Some((key, rest)) = trimmed.split_once('=') else {
            return Err(syntax(
                origin,
                line,
                format!("expected `key = value`, found `{trimmed}`"),
            ));
        };
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(syntax(origin, line, format!("invalid key `{key}`")));
        }
        let mut value_text = rest.trim().to_string();
        // An array continues until its closing bracket, possibly on a later line.
        if value_text.starts_with('[') {
            while !array_closed(&value_text) {
                let Some((_, next)) = lines.next() else {
                    return Err(syntax(origin, line, "unterminated array".into()));
                };
                value_text.push(' ');
                value_text.push_str(strip_comment(next).trim());
            }
        }
        let value = parse_value(&value_text).map_err(|m| syntax(origin, line, m))?;
        if out
            .iter()
            .any(|(_, k, _): &(usize, String, Value)| k == key)
        {
            return Err(syntax(origin, line, format!("duplicate key `{key}`")));
        }
        out.push((line, key.to_string(), value));
    }
    Ok(out)
}

/// Removes a `#` comment that is not inside a string.
fn strip_comment(line: &str) -> &str {
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            '\\' if in_str && !escaped => {
                escaped = true;
                continue;
            }
            '"' if !escaped => in_str = !in_str,
            '#' if !in_str => return &line[..i],
            _ => {}
        }
        escaped = false;
    }
    line
}

fn array_closed(text: &str) -> bool {
    let mut in_str = false;
    let mut escaped = false;
    for c in text.chars() {
        match c {
            '\\' if in_str && !escaped => {
                escaped = true;
                continue;
            }
            '"' if !escaped => in_str = !in_str,
            ']' if !in_str => return true,
            _ => {}
        }
        escaped = false;
    }
    false
}

fn parse_value(text: &str) -> Result<Value, String> {
    match text {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        _ => {}
    }
    if text.starts_with('"') {
        let (s, rest) = parse_string(text)?;
        if !rest.trim().is_empty() {
            return Err(format!("unexpected text after string: `{}`", rest.trim()));
        }
        return Ok(Value::Str(s));
    }
    if let Some(inner) = text.strip_prefix('[') {
        let mut items = Vec::new();
        let mut rest = inner.trim_start();
        loop {
            if let Some(after) = rest.strip_prefix(']') {
                if !after.trim().is_empty() {
                    return Err(format!("unexpected text after array: `{}`", after.trim()));
                }
                return Ok(Value::Array(items));
            }
            if !rest.starts_with('"') {
                return Err("arrays may only hold strings".into());
            }
            let (s, after) = parse_string(rest)?;
            items.push(s);
            rest = after.trim_start();
            if let Some(after) = rest.strip_prefix(',') {
                rest = after.trim_start();
            } else if !rest.starts_with(']') {
                return Err("expected `,` or `]` in array".into());
            }
        }
    }
    Err(format!(
        "unsupported value `{text}` (expected a string, array of strings, or boolean)"
    ))
}

/// Parses a basic TOML string at the start of `text`; returns it and the remaining text.
fn parse_string(text: &str) -> Result<(String, &str), String> {
    let mut out = String::new();
    let mut chars = text.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &text[i + 1..])),
            '\\' => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, '"')) => out.push('"'),
                Some((_, '\\')) => out.push('\\'),
                Some((_, other)) => return Err(format!("unsupported escape `\\{other}`")),
                None => break,
            },
            _ => out.push(c),
        }
    }
    Err("unterminated string".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suite_config() {
        let cfg = SuiteConfig::parse(
            "# the suite\nname = \"glow\"\nsuffixes = [\".gir\", # ir\n  \".txt\"]\nexcludes = [\"Inputs\"]\n",
            "lit.toml",
        )
        .unwrap();
        assert_eq!(cfg.name, "glow");
        assert_eq!(cfg.suffixes, vec![".gir", ".txt"]);
        assert_eq!(cfg.excludes, vec!["Inputs"]);
    }

    #[test]
    fn rejects_unknown_keys_and_bad_values() {
        assert!(SuiteConfig::parse("sufixes = []", "x").is_err());
        assert!(SuiteConfig::parse("name = [\"a\"]", "x").is_err());
        assert!(SuiteConfig::parse("name = \"a", "x").is_err());
        assert!(SuiteConfig::parse("suffixes = [\"a\"", "x").is_err());
        assert!(SuiteConfig::parse("just words", "x").is_err());
        assert!(LocalConfig::parse("unsupported = 1", "x").is_err());
    }

    #[test]
    fn parses_local_config() {
        let cfg =
            LocalConfig::parse("unsupported = true\nfeatures = [\"a\", \"b\",]", "x").unwrap();
        assert_eq!(cfg.unsupported, Some(true));
        assert_eq!(cfg.features, vec!["a", "b"]);
        assert_eq!(cfg.suffixes, None);
    }
}
