//! `glow-update-checks FILE...`: regenerates each file's CHECK lines (or
//! another prefix's) from what its RUN lines print, in place. The tools are
//! the ones beside this executable, as for glow-lit. Exit 0 when every file
//! was updated (or, with `--check`, is up to date), 1 when one could not be,
//! 2 on a usage error. Manual: docs/testing.md.

use clap::Parser;
use glow_lit::tools_in_dir;
use glow_lit::update_checks::{update_text, UpdateOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "glow-update-checks",
    version,
    about = "Regenerate a test's CHECK lines from the output of its RUN lines"
)]
struct Cli {
    /// The test files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The prefix whose lines are regenerated.
    #[arg(long, value_name = "P", default_value = "CHECK")]
    check_prefix: String,
    /// Change nothing: exit 1 and name each file whose checks are not what
    /// its RUN lines print now.
    #[arg(long)]
    check: bool,
    /// Use this executable for a tool name, e.g. `--tool glow-opt=PATH`.
    #[arg(long, value_name = "NAME=PATH")]
    tool: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let exe = std::env::current_exe().unwrap_or_default();
    let bin_dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let mut tools = tools_in_dir(&bin_dir);
    for t in &cli.tool {
        let Some((name, path)) = t.split_once('=') else {
            eprintln!("glow-update-checks: error: --tool expects NAME=PATH, got `{t}`");
            return ExitCode::from(2);
        };
        let path = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
        tools.insert(name.to_string(), path);
    }
    let temp_dir = std::env::temp_dir().join(format!("glow-update-checks-{}", std::process::id()));
    let opts = UpdateOptions {
        prefix: cli.check_prefix.clone(),
        tools,
        temp_dir: temp_dir.clone(),
    };
    let mut failed = false;
    for file in &cli.files {
        let shown = file.display();
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("glow-update-checks: error: cannot read '{shown}': {e}");
                failed = true;
                continue;
            }
        };
        let new = match update_text(file, &text, &opts) {
            Ok(t) => t,
            Err(msg) => {
                eprintln!("glow-update-checks: error: {shown}: {msg}");
                failed = true;
                continue;
            }
        };
        if new == text {
            eprintln!("glow-update-checks: {shown}: up to date");
        } else if cli.check {
            eprintln!(
                "glow-update-checks: {shown}: the {} lines differ from what the RUN lines print",
                cli.check_prefix
            );
            failed = true;
        } else if let Err(e) = glow_ir::output::write_file(file, new.as_bytes()) {
            eprintln!("glow-update-checks: error: cannot write '{shown}': {e}");
            failed = true;
        } else {
            eprintln!("glow-update-checks: {shown}: updated");
        }
    }
    let _ = std::fs::remove_dir_all(&temp_dir);
    ExitCode::from(u8::from(failed))
}
