//! `glow-lsp`: the `.gir` language server on stdin/stdout (the library
//! `glow_lsp`). `-lit-test` reads JSON-RPC messages separated by `// -----`
//! lines from stdin and prints every message the server sends, for the
//! transcript tests in test/lsp/. Manual: docs/lsp.md.

use clap::{CommandFactory, FromArgMatches, Parser};
use std::io::Read;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "glow-lsp",
    version,
    about = "The .gir language server (JSON-RPC over stdin/stdout)"
)]
struct Cli {
    /// Read `// -----`-separated JSON-RPC messages from stdin (no
    /// Content-Length headers) and print the server's messages as JSON.
    #[arg(long)]
    lit_test: bool,
    /// Talk over stdin/stdout (the only transport; accepted because
    /// language clients such as VS Code's pass it).
    #[arg(long)]
    stdio: bool,
}

fn main() -> ExitCode {
    let command = Cli::command();
    let args = glow_passes::cli::llvm_single_dash(std::env::args_os().collect(), &command);
    let cli = match command
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    if !cli.lit_test {
        return ExitCode::from(glow_lsp::serve_stdio());
    }
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("glow-lsp: error: cannot read standard input: {e}");
        return ExitCode::from(1);
    }
    let (out, code) = glow_lsp::lit_test(&input);
    print!("{out}");
    ExitCode::from(code)
}
