//! The memory timeline as SVG, the plot memory-planning papers use: x is
//! the instruction index, y the byte offset in the arena, one rectangle per
//! buffer (its hover `<title>` gives name, type, size, lifetime and offset),
//! a dashed line at the lower bound and a solid one at the arena top. One
//! panel per function. Deterministic text; names are XML-escaped. Strokes
//! shrink with the buffer count so 1,000-buffer programs stay readable.

use crate::analysis::memory::MemoryReport;
use std::fmt::Write;

const WIDTH: f64 = 1200.0;
const PANEL_H: f64 = 520.0;
const LEFT: f64 = 100.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 50.0;

/// One SVG document with a panel per report.
pub fn svg(reports: &[MemoryReport]) -> String {
    let panels = reports.len().max(1) as f64;
    let height = panels * (PANEL_H + TOP + BOTTOM);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="white"/>"#
    );
    for (k, r) in reports.iter().enumerate() {
        panel(&mut s, r, k as f64 * (PANEL_H + TOP + BOTTOM));
    }
    s.push_str("</svg>\n");
    s
}

fn panel(s: &mut String, r: &MemoryReport, y0: f64) {
    let plot_w = WIDTH - LEFT - RIGHT;
    let (top, bottom) = (y0 + TOP, y0 + TOP + PANEL_H);
    let steps = r
        .buffers
        .iter()
        .map(|b| b.last + 1)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let ymax = (r.arena_bytes.max(r.lower_bound_bytes).max(1) as f64) * 1.05;
    let x = |i: f64| LEFT + i / steps * plot_w;
    let y = |b: f64| bottom - b / ymax * PANEL_H;
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{:.1}" font-size="15">{} — arena {} B, lower bound {} B ({:.4}x), naive {} B, {} buffers{}</text>"#,
        y0 + 30.0,
        escape(&r.function),
        r.arena_bytes,
        r.lower_bound_bytes,
        r.ratio(),
        r.naive_bytes,
        r.buffers.len(),
        if r.planned {
            ""
        } else {
            " (unplanned: what plan-memory would do)"
        }
    );
    let _ = writeln!(
        s,
        "<rect x=\"{LEFT}\" y=\"{top:.1}\" width=\"{plot_w:.1}\" height=\"{PANEL_H:.1}\" fill=\"#f7f7f7\" stroke=\"#999\"/>"
    );
    axes(s, steps, ymax, &x, &y, bottom);
    let stroke = if r.buffers.len() > 300 { 0.2 } else { 0.8 };
    let _ = writeln!(s, "<g stroke=\"#333\" stroke-width=\"{stroke}\">");
    for (i, b) in r.buffers.iter().enumerate() {
        let (x0, x1) = (x(b.first as f64), x((b.last + 1) as f64));
        let (ya, yb) = (
            y(b.offset as f64),
            y(b.offset.saturating_add(b.aligned_bytes) as f64),
        );
        // Golden-angle hues: neighbours get distinct colours.
        let hue = (i as f64 * 137.508) % 360.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x0:.2}" y="{yb:.2}" width="{:.2}" height="{:.2}" fill="hsl({hue:.0},65%,62%)"><title>%{}: {}, {} B ({} aligned), live [{}, {}], offset {}</title></rect>"#,
            (x1 - x0).max(0.5),
            (ya - yb).max(0.5),
            escape(&b.name),
            escape(&b.ty),
            b.bytes,
            b.aligned_bytes,
            b.first,
            b.last,
            b.offset
        );
    }
    s.push_str("</g>\n");
    let (lb, ar) = (y(r.lower_bound_bytes as f64), y(r.arena_bytes as f64));
    let right = LEFT + plot_w;
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{lb:.2}\" x2=\"{right:.1}\" y2=\"{lb:.2}\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>lower bound {} B</title></line>",
        r.lower_bound_bytes
    );
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{ar:.2}\" x2=\"{right:.1}\" y2=\"{ar:.2}\" stroke=\"#000\" stroke-width=\"1.5\"><title>arena {} B</title></line>",
        r.arena_bytes
    );
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#d62728\">lower bound</text>",
        right - 4.0,
        lb + 14.0
    );
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">arena</text>",
        right - 4.0,
        ar - 4.0
    );
}

fn axes(
    s: &mut String,
    steps: f64,
    ymax: f64,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
    bottom: f64,
) {
    for k in 0..=5 {
        let i = (steps * k as f64 / 5.0).round();
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(i),
            bottom + 18.0,
            i
        );
        let b = ymax * k as f64 / 5.0;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 6.0,
            y(b) + 4.0,
            human(b)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">instruction</text>"#,
        LEFT + (WIDTH - LEFT - RIGHT) / 2.0,
        bottom + 38.0
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{:.1}" transform="rotate(-90 16 {:.1})" text-anchor="middle">byte offset</text>"#,
        bottom - PANEL_H / 2.0,
        bottom - PANEL_H / 2.0
    );
}

/// Bytes with a binary unit.
fn human(b: f64) -> String {
    match b {
        b if b >= 1048576.0 => format!("{:.1} MiB", b / 1048576.0),
        b if b >= 1024.0 => format!("{:.1} KiB", b / 1024.0),
        b => format!("{b:.0} B"),
    }
}

/// XML text escaping.
pub fn escape(t: &str) -> String {
    let mut o = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}
