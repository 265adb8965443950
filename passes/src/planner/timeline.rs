//! The memory timeline as SVG, the plot memory-planning papers use: x is
//! the instruction index, y the byte offset in the arena, one rectangle per
//! buffer (labelled with its name where it has room; its hover `<title>`
//! gives name, type, size, lifetime and offset), round ticks on both axes,
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
        r#"<text x="{LEFT}" y="{:.1}" font-size="15">{} — arena {} B, lower bound {} B ({:.4}x), naive {} B, {}{}</text>"#,
        y0 + 30.0,
        escape(&r.function),
        r.arena_bytes,
        r.lower_bound_bytes,
        r.ratio(),
        r.naive_bytes,
        plural(r.buffers.len(), "buffer"),
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
    // Names on the rectangles that have room for a few letters; a
    // tooltip alone is invisible in a printed or embedded plot.
    s.push_str("<g font-size=\"10\" fill=\"#111\">\n");
    for b in &r.buffers {
        let (x0, x1) = (x(b.first as f64), x((b.last + 1) as f64));
        let (ya, yb) = (
            y(b.offset as f64),
            y(b.offset.saturating_add(b.aligned_bytes) as f64),
        );
        let fits = ((x1 - x0 - 4.0) / 6.0).floor();
        if ya - yb < 12.0 || fits < 3.0 {
            continue;
        }
        let label = shorten(&format!("%{}", b.name), fits as usize);
        let _ = writeln!(
            s,
            r#"<text x="{:.2}" y="{:.2}">{}</text>"#,
            x0 + 2.0,
            (ya + yb) / 2.0 + 3.5,
            escape(&label)
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
    // Instruction ticks: whole numbers at a 1-2-5 step, none repeated.
    let step = nice_step(steps / 5.0).max(1.0);
    let mut i = 0.0;
    while i <= steps {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(i),
            bottom + 18.0,
            i
        );
        i += step;
    }
    // Byte ticks: round values of one binary unit (0, 200 KiB, 400 KiB, ...).
    let unit = if ymax >= 1048576.0 {
        1048576.0
    } else if ymax >= 1024.0 {
        1024.0
    } else {
        1.0
    };
    let step = nice_step(ymax / unit / 5.0).max(1.0) * unit;
    let mut b = 0.0;
    while b <= ymax {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 6.0,
            y(b) + 4.0,
            human(b)
        );
        b += step;
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

/// Bytes with a binary unit, without a fraction when the value is whole.
fn human(b: f64) -> String {
    let (v, unit) = match b {
        b if b >= 1048576.0 => (b / 1048576.0, "MiB"),
        b if b >= 1024.0 => (b / 1024.0, "KiB"),
        b => (b, "B"),
    };
    if v.fract() == 0.0 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.1} {unit}")
    }
}

/// The smallest of 1, 2, 5, 10, 20, 50, ... that is at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 1.0 {
        return 1.0;
    }
    let mut p = 1.0;
    loop {
        for m in [1.0, 2.0, 5.0] {
            if m * p >= raw {
                return m * p;
            }
        }
        p *= 10.0;
    }
}

/// `n thing` or `n things`.
fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// `text` cut to `max` characters, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(0.4), 1.0);
        assert_eq!(nice_step(1.2), 2.0);
        assert_eq!(nice_step(168.6), 200.0);
        assert_eq!(human(204800.0), "200 KiB");
        assert_eq!(human(215.0), "215 B");
        assert_eq!(plural(1, "buffer"), "1 buffer");
        assert_eq!(shorten("%abcdef", 4), "%ab…");
    }
}
