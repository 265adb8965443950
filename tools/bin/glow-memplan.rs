//! `glow-memplan TRACEFILE [--json]`: plans every model of a Glow allocator
//! trace (`ALLOC`/`FREE` records) with the activation planner and prints,
//! per model, the naive bytes, the max-live lower bound, the arena reached,
//! arena/bound, Glow's recorded `MEM` and the planning time, then a summary
//! of how many models reached the bound. Trace errors are reported as
//! `file:line:col: error: message`, exit 1; usage errors exit 2.

use clap::Parser;
use glow_passes::planner::{self, align_up, trace, PlanOptions};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    name = "glow-memplan",
    version,
    about = "Plan the activation arena of every model in a Glow ALLOC/FREE trace"
)]
struct Cli {
    /// The trace file (Glow's MemoryAllocatorTestModels.txt format).
    tracefile: String,
    /// Print a JSON list of {model, naive, lower_bound, arena, glow_mem, millis}.
    #[arg(long)]
    json: bool,
    /// Override every model's ALIGN (bytes; 0 or 1 = none).
    #[arg(long, value_name = "BYTES")]
    align: Option<u64>,
    /// Moves the order search may try per model.
    #[arg(long, value_name = "N", default_value_t = PlanOptions::default().search_budget)]
    budget: u32,
}

struct Row {
    model: String,
    buffers: usize,
    naive: u64,
    lower_bound: u64,
    arena: u64,
    glow_mem: Option<u64>,
    millis: f64,
    algorithm: &'static str,
}

/// A `.gir` by name or by its `function`/`declare {`/`code {` lines, which
/// no trace record starts with.
fn looks_like_gir(file: &str, text: &str) -> bool {
    file.ends_with(".gir")
        || text
            .lines()
            .map(str::trim)
            .any(|l| l.starts_with("function ") || l == "declare {" || l == "code {")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let text = match std::fs::read(&cli.tracefile) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            eprintln!("{}: error: cannot read file: {e}", cli.tracefile);
            return ExitCode::from(1);
        }
    };
    let models = match trace::parse(&text) {
        Ok(m) => m,
        Err(_) if looks_like_gir(&cli.tracefile, &text) => {
            // One hint instead of an "unknown record" per line of IR.
            eprintln!(
                "{}:1:1: error: this is a .gir file; glow-memplan reads Glow allocation traces \
                 (MODEL/ALLOC/FREE records); for a .gir's activation memory use \
                 glow-opt --mem-report (with -O or --pass=plan-memory)",
                cli.tracefile
            );
            return ExitCode::from(1);
        }
        Err(errors) => {
            for e in errors {
                eprintln!(
                    "{}:{}:{}: error: {}",
                    cli.tracefile, e.line, e.col, e.message
                );
            }
            return ExitCode::from(1);
        }
    };
    let mut rows = Vec::new();
    for m in &models {
        let opts = PlanOptions {
            align: cli.align.unwrap_or(m.align),
            search_budget: cli.budget,
        };
        let t0 = Instant::now();
        let plan = match planner::try_plan(&m.buffers, &opts) {
            Ok(plan) => plan,
            Err(msg) => {
                eprintln!("{}: error: model `{}`: {msg}", cli.tracefile, m.name);
                return ExitCode::from(1);
            }
        };
        let millis = t0.elapsed().as_secs_f64() * 1e3;
        if let Some(problem) = planner::check(&m.buffers, &plan.offsets, opts.align) {
            eprintln!(
                "glow-memplan: internal error: invalid plan for {}: {problem}",
                m.name
            );
            return ExitCode::from(1);
        }
        rows.push(Row {
            model: m.name.clone(),
            buffers: m.buffers.len(),
            naive: m
                .buffers
                .iter()
                .map(|b| align_up(b.size, opts.align))
                .fold(0u64, u64::saturating_add),
            lower_bound: plan.lower_bound,
            arena: plan.arena,
            glow_mem: m.glow_mem,
            millis,
            algorithm: plan.algorithm.name(),
        });
    }
    let out = if cli.json { json(&rows) } else { table(&rows) };
    use std::io::Write;
    // A closed stdout (e.g. `| head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(out.as_bytes());
    ExitCode::SUCCESS
}

fn table(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<40} {:>7} {:>12} {:>12} {:>12} {:>8} {:>12} {:>9}  {}\n",
        "model",
        "buffers",
        "naive",
        "lower-bound",
        "arena",
        "arena/LB",
        "glow-MEM",
        "ms",
        "algorithm"
    );
    for r in rows {
        s += &format!(
            "{:<40} {:>7} {:>12} {:>12} {:>12} {:>8.4} {:>12} {:>9.3}  {}\n",
            r.model,
            r.buffers,
            r.naive,
            r.lower_bound,
            r.arena,
            ratio(r.arena, r.lower_bound),
            r.glow_mem.map_or("-".to_string(), |m| m.to_string()),
            r.millis,
            r.algorithm
        );
    }
    let at = rows.iter().filter(|r| r.arena == r.lower_bound).count();
    let glow_at = rows
        .iter()
        .filter(|r| r.glow_mem == Some(r.lower_bound))
        .count();
    let total: f64 = rows.iter().map(|r| r.millis).sum();
    let max = rows.iter().map(|r| r.millis).fold(0.0, f64::max);
    s += &format!(
        "{at} of {} models at the lower bound (Glow's MEM: {glow_at}); planning {total:.1} ms total, {max:.1} ms max\n",
        rows.len()
    );
    s
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

fn json(rows: &[Row]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "  {{\"model\": {}, \"naive\": {}, \"lower_bound\": {}, \"arena\": {}, \"glow_mem\": {}, \"millis\": {:.3}}}",
                glow_passes::analysis::memory::json_string(&r.model),
                r.naive,
                r.lower_bound,
                r.arena,
                r.glow_mem.map_or("null".to_string(), |m| m.to_string()),
                r.millis
            )
        })
        .collect();
    if items.is_empty() {
        "[]\n".to_string()
    } else {
        format!("[\n{}\n]\n", items.join(",\n"))
    }
}
