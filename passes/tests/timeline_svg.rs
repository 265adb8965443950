//! The `--mem-timeline` SVG for a 1,000-buffer plan: well-formed XML (a
//! small checker: balanced tags, quoted attributes, known entities), one
//! rectangle with a `<title>` per buffer, the bound and arena lines; and,
//! a real render to PNG with `rsvg-convert` (ignored, with the reason, without it).

use glow_passes::analysis::memory::memory_report;
use glow_passes::planner::timeline::svg;
use glow_passes::PassContext;

fn program(n: usize) -> String {
    let mut s =
        String::from("function big\ndeclare {\n  %in = WeightVar float<16> mutable\n}\n\ncode {\n");
    // Each buffer is written from the previous one and freed three steps later.
    for i in 0..n {
        let size = 16 * (1 + (i * 7919) % 13);
        s += &format!("  %a{i} = allocactivation {{ Ty: float<{size}> }}\n");
        s += &format!("  %s{i} = splat @out %a{i} {{ Value: 1 }}\n");
        if i >= 3 {
            s += &format!("  %d{} = deallocactivation @out %a{}\n", i - 3, i - 3);
        }
    }
    for i in n.saturating_sub(3)..n {
        s += &format!("  %d{i} = deallocactivation @out %a{i}\n");
    }
    s + "}\n"
}

/// Well-formedness: every tag closes in order, attributes are quoted,
/// `&` only starts a known entity. Returns the element names in order.
fn check_xml(x: &str) -> Result<Vec<String>, String> {
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = x;
    while let Some(lt) = rest.find('<') {
        check_text(&rest[..lt])?;
        let gt = rest[lt..].find('>').ok_or("unclosed tag")? + lt;
        let tag = &rest[lt + 1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or(format!("stray </{name}>"))?;
            if open != name {
                return Err(format!("</{name}> closes <{open}>"));
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let body = tag.trim_end_matches('/');
        let name = body
            .split_whitespace()
            .next()
            .ok_or("empty tag")?
            .to_string();
        if !body.matches('"').count().is_multiple_of(2) {
            return Err(format!("unbalanced quotes in <{name}>"));
        }
        check_text(body)?;
        names.push(name.clone());
        if !self_closing {
            stack.push(name);
        }
    }
    check_text(rest)?;
    if let Some(open) = stack.pop() {
        return Err(format!("<{open}> never closed"));
    }
    Ok(names)
}

fn check_text(t: &str) -> Result<(), String> {
    for (i, _) in t.match_indices('&') {
        let ok = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
            .iter()
            .any(|e| t[i..].starts_with(e));
        if !ok {
            return Err(format!("bad entity near {:?}", &t[i..t.len().min(i + 8)]));
        }
    }
    Ok(())
}

/// The timeline of the 1,000-buffer program, planned.
fn timeline() -> String {
    let text = program(1000);
    let mut m = glow_ir::parser::parse(text.as_bytes()).expect("parses");
    let f = &mut m.functions[0];
    let info = &glow_passes::info::PLAN_MEMORY;
    let mut stats = Default::default();
    let mut cx = PassContext::new(info.name, &mut stats, None);
    let mut pass = (info.create)(&Default::default()).expect("create");
    pass.run(f, &mut cx).expect("plans");
    assert!(glow_ir::verifier::verify(f).is_empty());
    let report = memory_report(f);
    assert!(report.planned);
    // Sliding windows of random sizes are not always solved at the bound.
    assert!(report.arena_bytes >= report.lower_bound_bytes);
    assert!(report.ratio() < 1.25, "{}", report.ratio());
    svg(&[report])
}

#[test]
fn thousand_buffer_timeline_is_valid_svg() {
    let doc = timeline();
    let names = check_xml(&doc).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(names.iter().filter(|n| *n == "title").count(), 1002);
    assert!(names.iter().filter(|n| *n == "rect").count() >= 1000);
    assert_eq!(names.iter().filter(|n| *n == "line").count(), 2);
    assert_eq!(check_xml("<a><b></a>"), Err("</a> closes <b>".into()));
    assert!(check_xml("<a>&b</a>").is_err());
}

/// A real SVG renderer accepts the timeline.
#[test]
#[cfg_attr(not(has_rsvg_convert), ignore = "no `rsvg-convert` on PATH")]
fn thousand_buffer_timeline_renders() {
    let doc = timeline();
    let dir = std::env::temp_dir().join(format!("glow-timeline-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let (svg_path, png) = (dir.join("t.svg"), dir.join("t.png"));
    std::fs::write(&svg_path, doc).expect("write svg");
    let out = std::process::Command::new("rsvg-convert")
        .arg(&svg_path)
        .arg("-o")
        .arg(&png)
        .output()
        .expect("rsvg-convert runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).expect("png written");
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 1000);
    let _ = std::fs::remove_dir_all(&dir);
}
