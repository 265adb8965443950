//! The shell's built-in commands that only move bytes and files: `echo`, `cat`, `mkdir`, `rm`,
//! `diff`, `true`, `false`, `:`. (`cd`, `export`, `env` and `not` touch shell state or wrap other
//! commands and live in the executor.) Each returns an exit status and writes its diagnostics to
//! the command's stderr; none of them can panic on bad arguments.

use super::exec::Input;
use std::io::{Read, Write};
use std::path::Path;

/// The streams and directory a builtin runs with.
pub(super) struct Io<'a> {
    pub stdin: &'a mut Input,
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    pub cwd: &'a Path,
}

/// Runs builtin `name`; `None` when `name` is not one of these builtins.
pub(super) fn run(name: &str, args: &[String], io: &mut Io) -> Option<i32> {
    let status = match name {
        "true" | ":" => 0,
        "false" => 1,
        "echo" => echo(args, io),
        "cat" => cat(args, io),
        "mkdir" => mkdir(args, io),
        "rm" => rm(args, io),
        "diff" => diff(args, io),
        _ => return None,
    };
    Some(status)
}

fn echo(args: &[String], io: &mut Io) -> i32 {
    let mut newline = true;
    let mut escapes = false;
    let mut rest = args;
    // Leading option words made only of n/e/E letters, as in bash.
    while let Some(first) = rest.first() {
        let Some(flags) = first.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flags.chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        rest = &rest[1..];
    }
    let mut text = rest.join(" ");
    if escapes {
        text = unescape(&text);
    }
    if newline {
        text.push('\n');
    }
    write_or_fail(io.out, text.as_bytes())
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('a') => out.push('\x07'),
            Some('0') => out.push('\0'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn write_or_fail(w: &mut dyn Write, bytes: &[u8]) -> i32 {
    match w.write_all(bytes) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

fn read_stdin(io: &mut Io) -> Vec<u8> {
    let mut buf = Vec::new();
    match io.stdin {
        Input::Null => {}
        Input::Bytes(b) => buf = std::mem::take(b),
        Input::File(f) => {
            let _ = f.read_to_end(&mut buf);
        }
    }
    buf
}

fn cat(args: &[String], io: &mut Io) -> i32 {
    let files: Vec<&String> = args
        .iter()
        .filter(|a| a.as_str() == "-" || !a.starts_with('-'))
        .collect();
    if files.len() != args.len() {
        let _ = writeln!(io.err, "cat: options are not supported by the built-in cat");
        return 1;
    }
    let mut status = 0;
    if files.is_empty() {
        let data = read_stdin(io);
        return write_or_fail(io.out, &data);
    }
    for f in files {
        let data = if f == "-" {
            read_stdin(io)
        } else {
            match std::fs::read(io.cwd.join(f)) {
                Ok(d) => d,
                Err(e) => {
                    let _ = writeln!(io.err, "cat: {f}: {}", describe(&e));
                    status = 1;
                    continue;
                }
            }
        };
        if write_or_fail(io.out, &data) != 0 {
            status = 1;
        }
    }
    status
}

fn describe(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}

/// Splits leading `-xyz` flag words from operands; `--` ends the flags.
fn split_flags(args: &[String]) -> (String, Vec<&String>) {
    let mut flags = String::new();
    let mut operands = Vec::new();
    let mut done = false;
    for a in args {
        if !done && a == "--" {
            done = true;
        } else if !done && a.len() > 1 && a.starts_with('-') {
            flags.push_str(&a[1..]);
        } else {
            operands.push(a);
        }
    }
    (flags, operands)
}

fn mkdir(args: &[String], io: &mut Io) -> i32 {
    let (flags, dirs) = split_flags(args);
    if flags.chars().any(|c| c != 'p') || dirs.is_empty() {
        let _ = writeln!(io.err, "mkdir: usage: mkdir [-p] DIR...");
        return 1;
    }
    let parents = flags.contains('p');
    let mut status = 0;
    for d in dirs {
        let path = io.cwd.join(d);
        let res = if parents {
            std::fs::create_dir_all(&path)
        } else {
            std::fs::create_dir(&path)
        };
        if let Err(e) = res {
            let _ = writeln!(
                io.err,
                "mkdir: cannot create directory '{d}': {}",
                describe(&e)
            );
            status = 1;
        }
    }
    status
}

fn rm(args: &[String], io: &mut Io) -> i32 {
    let (flags, paths) = split_flags(args);
    if flags.chars().any(|c| !matches!(c, 'r' | 'R' | 'f')) {
        let _ = writeln!(io.err, "rm: usage: rm [-rf] PATH...");
        return 1;
    }
    let recursive = flags.contains('r') || flags.contains('R');
    let force = flags.contains('f');
    let mut status = 0;
    for p in paths {
        let path = io.cwd.join(p);
        let res = match std::fs::symlink_metadata(&path) {
            Err(e) if force && e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
            Ok(m) if m.is_dir() && recursive => std::fs::remove_dir_all(&path),
            Ok(m) if m.is_dir() => Err(std::io::Error::other("Is a directory")),
            Ok(_) => std::fs::remove_file(&path),
        };
        if let Err(e) = res {
            let _ = writeln!(io.err, "rm: cannot remove '{p}': {}", describe(&e));
            status = 1;
        }
    }
    status
}

fn diff(args: &[String], io: &mut Io) -> i32 {
    let (flags, files) = split_flags(args);
    if flags.chars().any(|c| !matches!(c, 'u' | 'b' | 'w' | 'B')) || files.len() != 2 {
        let _ = writeln!(io.err, "diff: usage: diff [-u] [-b] [-w] [-B] FILE1 FILE2");
        return 2;
    }
    let mut texts = Vec::new();
    for f in &files {
        let data = if f.as_str() == "-" {
            Ok(read_stdin(io))
        } else {
            std::fs::read(io.cwd.join(f))
        };
        match data {
            Ok(d) => texts.push(normalize(&String::from_utf8_lossy(&d), &flags)),
            Err(e) => {
                let _ = writeln!(io.err, "diff: {f}: {}", describe(&e));
                return 2;
            }
        }
    }
    if texts[0] == texts[1] {
        return 0;
    }
    let d = similar::TextDiff::from_lines(&texts[0], &texts[1]);
    let rendered = d.unified_diff().header(files[0], files[1]).to_string();
    let _ = io.out.write_all(rendered.as_bytes());
    1
}

/// Applies diff's whitespace options: `-w` drops all blanks, `-b` collapses runs, `-B` drops
/// blank lines.
fn normalize(text: &str, flags: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let norm: String = if flags.contains('w') {
            body.chars().filter(|c| !c.is_whitespace()).collect()
        } else if flags.contains('b') {
            body.split_whitespace().collect::<Vec<_>>().join(" ")
        } else {
            body.to_string()
        };
        if flags.contains('B') && norm.trim().is_empty() {
            continue;
        }
        out.push_str(&norm);
        if line.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}
