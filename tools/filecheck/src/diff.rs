//! Glow extension: `--diff`, a unified diff between what the failing block's
//! checks expected (their pattern texts, one per line) and the input lines
//! of that block. Regex and variable blocks stay as written, so the diff is
//! a reading aid, not a second verdict.

use crate::directive::CheckString;
use crate::pattern::CheckKind;
use crate::source::Sources;
use similar::TextDiff;

/// Input lines shown at most, so a huge input does not drown the report.
const MAX_LINES: usize = 200;

/// Renders the diff for the check strings `block` over the input `region`.
pub fn render(
    sources: &Sources,
    input_buf: usize,
    strings: &[CheckString],
    block: (usize, usize),
    region: (usize, usize),
) -> String {
    let mut expected = String::new();
    let end = block.1.min(strings.len());
    for cs in &strings[block.0.min(end)..end] {
        if matches!(cs.pat.kind, CheckKind::Eof | CheckKind::Not) {
            continue;
        }
        let text = &sources.bufs[cs.loc.buf].text;
        let line_end = text[cs.loc.offset..]
            .find('\n')
            .map_or(text.len(), |i| cs.loc.offset + i);
        let pat = text[cs.loc.offset..line_end].trim();
        let n = match cs.pat.kind {
            CheckKind::Count(n) => n,
            _ => 1,
        };
        for _ in 0..n {
            expected.push_str(pat);
            expected.push('\n');
        }
    }
    let input = &sources.bufs[input_buf].text;
    let (s, e) = (region.0.min(input.len()), region.1.min(input.len()));
    // Start at the beginning of the line holding the region start.
    let s = input[..s].rfind('\n').map_or(0, |i| i + 1);
    let mut actual = String::new();
    for line in input[s..e].lines().take(MAX_LINES) {
        let t = line.trim();
        if !t.is_empty() {
            actual.push_str(t);
            actual.push('\n');
        }
    }
    let diff = TextDiff::from_lines(&expected, &actual);
    let body = diff
        .unified_diff()
        .context_radius(3)
        .header("expected (check patterns)", "actual (input)")
        .to_string();
    format!("\nDiff of the failing block (--diff):\n{}", body)
}
