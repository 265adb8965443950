//! The executor of the built-in shell.
//!
//! Pipeline stages run one after another and each stage's stdout is buffered and fed to the next
//! stage's stdin (tests are small; this keeps the code simple and deterministic). The pipeline's
//! status follows `pipefail`: the last failing stage's status, or 0. Every command's stdout and
//! stderr go through OS pipes (so `2>&1` keeps their interleaving) read by helper threads. Child
//! processes run in their own process group so a timeout can kill whatever they spawned too.

use super::builtins::{self, Io};
use super::parse::{Command, CommandLine, Connector, Pipeline, Redirect};
use crate::features::is_executable;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{PipeReader, PipeWriter, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

/// Tool name to executable; consulted before `$PATH`.
pub type Tools = BTreeMap<String, PathBuf>;

/// A command's exit status; `signal` is set when a signal ended it (code is then 128 + signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    pub code: i32,
    pub signal: Option<i32>,
}

impl Status {
    const OK: Status = Status {
        code: 0,
        signal: None,
    };
    const FAIL: Status = Status {
        code: 1,
        signal: None,
    };

    fn from_code(code: i32) -> Status {
        Status { code, signal: None }
    }

    /// Whether the command succeeded.
    pub fn success(&self) -> bool {
        self.code == 0 && self.signal.is_none()
    }
}

/// A command's standard input.
pub enum Input {
    Null,
    Bytes(Vec<u8>),
    File(File),
}

/// Where a command's stdout or stderr goes.
enum Handle {
    Pipe(PipeWriter),
    File(File),
}

impl Handle {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Handle::Pipe(p) => p,
            Handle::File(f) => f,
        }
    }

    fn into_stdio(self) -> Stdio {
        match self {
            Handle::Pipe(p) => p.into(),
            Handle::File(f) => f.into(),
        }
    }
}

#[derive(Clone, Copy)]
enum Sink {
    Out,
    Err,
    File(usize),
}

/// Shell state that persists across the RUN lines of one test.
pub struct Shell<'a> {
    /// Current directory (`cd` changes it).
    pub cwd: PathBuf,
    /// Variables added by `export` for later commands.
    pub env: BTreeMap<String, String>,
    /// Tool substitutions.
    pub tools: &'a Tools,
    /// When the test must be finished; commands are killed past it.
    pub deadline: Option<Instant>,
    /// Set once a command was killed (or not started) because of the deadline.
    pub timed_out: bool,
    /// A lit-style transcript of what ran and what it printed.
    pub log: String,
    /// How deep `env` prefixes nest in the command being run.
    depth: usize,
}

/// How deep `env` and `not` prefixes may nest in one command: each level
/// recurses, and a stack overflow would abort every test of the run.
pub const MAX_PREFIX_DEPTH: usize = 100;

impl<'a> Shell<'a> {
    /// A shell starting in `cwd`.
    pub fn new(cwd: PathBuf, tools: &'a Tools, deadline: Option<Instant>) -> Shell<'a> {
        Shell {
            cwd,
            env: BTreeMap::new(),
            tools,
            deadline,
            timed_out: false,
            depth: 0,
            log: String::new(),
        }
    }

    /// Runs a parsed command line; returns the status of the last pipeline that ran.
    pub fn run(&mut self, line: &CommandLine) -> Status {
        let mut status = Status::OK;
        for (conn, pipeline) in &line.items {
            let skip = match conn {
                Connector::Seq => false,
                Connector::And => !status.success(),
                Connector::Or => status.success(),
            };
            if !skip {
                status = self.run_pipeline(pipeline);
            }
        }
        status
    }

    fn run_pipeline(&mut self, p: &Pipeline) -> Status {
        let mut input = Input::Null;
        let mut status = Status::OK;
        let n = p.commands.len();
        for (i, cmd) in p.commands.iter().enumerate() {
            let (st, out, err) = self.run_stage(cmd, input);
            self.log
                .push_str(&format!("# executed command: {}\n", quote_args(&cmd.args)));
            let last = i + 1 == n;
            if last && !out.is_empty() {
                log_block(&mut self.log, "stdout", &out);
            }
            if !err.is_empty() {
                log_block(&mut self.log, "stderr", &err);
            }
            if !st.success() {
                match st.signal {
                    Some(sig) => self
                        .log
                        .push_str(&format!("# error: command terminated by signal {sig}\n")),
                    None => self.log.push_str(&format!(
                        "# error: command failed with exit status: {}\n",
                        st.code
                    )),
                }
                status = st; // pipefail: the last failing stage wins
            }
            input = Input::Bytes(out);
        }
        status
    }

    /// Runs one stage; returns its status, captured stdout and captured stderr.
    fn run_stage(&mut self, cmd: &Command, input: Input) -> (Status, Vec<u8>, Vec<u8>) {
        match self.try_run_stage(cmd, input) {
            Ok(r) => r,
            Err(msg) => (Status::FAIL, Vec::new(), format!("{msg}\n").into_bytes()),
        }
    }

    fn try_run_stage(
        &mut self,
        cmd: &Command,
        mut input: Input,
    ) -> Result<(Status, Vec<u8>, Vec<u8>), String> {
        let mut files: Vec<File> = Vec::new();
        let (mut fd1, mut fd2) = (Sink::Out, Sink::Err);
        for r in &cmd.redirects {
            match r {
                Redirect::Out { fd, append, target } => {
                    files.push(open_out(&self.cwd.join(target), *append, target)?);
                    let s = Sink::File(files.len() - 1);
                    if *fd == 1 {
                        fd1 = s;
                    } else {
                        fd2 = s;
                    }
                }
                Redirect::Both { append, target } => {
                    files.push(open_out(&self.cwd.join(target), *append, target)?);
                    fd1 = Sink::File(files.len() - 1);
                    fd2 = fd1;
                }
                Redirect::Dup { fd, to } => {
                    let src = if *to == 1 { fd1 } else { fd2 };
                    if *fd == 1 {
                        fd1 = src;
                    } else {
                        fd2 = src;
                    }
                }
                Redirect::In { target } => {
                    let f = File::open(self.cwd.join(target))
                        .map_err(|e| format!("cannot open '{target}': {e}"))?;
                    input = Input::File(f);
                }
            }
        }
        let io_err = |e: std::io::Error| format!("cannot set up command I/O: {e}");
        let (out_r, out_w) = std::io::pipe().map_err(io_err)?;
        let (err_r, err_w) = std::io::pipe().map_err(io_err)?;
        let handle = |s: Sink| -> std::io::Result<Handle> {
            Ok(match s {
                Sink::Out => Handle::Pipe(out_w.try_clone()?),
                Sink::Err => Handle::Pipe(err_w.try_clone()?),
                Sink::File(i) => Handle::File(files[i].try_clone()?),
            })
        };
        let h1 = handle(fd1).map_err(io_err)?;
        let h2 = handle(fd2).map_err(io_err)?;
        // Only the handles may keep the write ends open, or the readers never see EOF.
        drop((out_w, err_w, files));
        let status = std::thread::scope(|s| {
            let out = s.spawn(move || drain(out_r));
            let err = s.spawn(move || drain(err_r));
            let status = self.exec(&cmd.args, &BTreeMap::new(), input, h1, h2);
            (
                status,
                out.join().unwrap_or_default(),
                err.join().unwrap_or_default(),
            )
        });
        Ok(status)
    }

    /// Runs a command (builtin, wrapper or program) with its streams set up.
    fn exec(
        &mut self,
        args: &[String],
        env: &BTreeMap<String, String>,
        mut stdin: Input,
        mut h1: Handle,
        mut h2: Handle,
    ) -> Status {
        let Some(name) = args.first() else {
            return Status::OK;
        };
        match name.as_str() {
            "not" => {
                let crash = args.get(1).is_some_and(|a| a == "--crash");
                let rest = &args[if crash { 2 } else { 1 }..];
                if rest.is_empty() {
                    let _ = writeln!(h2.writer(), "not: missing command");
                    return Status::FAIL;
                }
                if self.depth >= MAX_PREFIX_DEPTH {
                    let _ = writeln!(
                        h2.writer(),
                        "not: `not` and `env` prefixes nested more than {MAX_PREFIX_DEPTH} deep"
                    );
                    return Status::FAIL;
                }
                self.depth += 1;
                let st = self.exec(rest, env, stdin, h1, h2);
                self.depth -= 1;
                // `not` inverts a normal exit; a crash only satisfies `not --crash`.
                let ok = if crash {
                    st.signal.is_some()
                } else {
                    st.signal.is_none() && st.code != 0
                };
                Status::from_code(if ok { 0 } else { 1 })
            }
            "env" => {
                let mut env = env.clone();
                let mut i = 1;
                while let Some(a) = args.get(i) {
                    if a == "-u" {
                        if let Some(var) = args.get(i + 1) {
                            env.insert(var.clone(), String::new());
                        }
                        i += 2;
                    } else if let Some((k, v)) = a.split_once('=').filter(|(k, _)| !k.is_empty()) {
                        env.insert(k.to_string(), v.to_string());
                        i += 1;
                    } else {
                        break;
                    }
                }
                if i >= args.len() {
                    let _ = writeln!(
                        h2.writer(),
                        "env: a command is required (printing the environment is not supported)"
                    );
                    return Status::FAIL;
                }
                if self.depth >= MAX_PREFIX_DEPTH {
                    let _ = writeln!(
                        h2.writer(),
                        "env: `not` and `env` prefixes nested more than {MAX_PREFIX_DEPTH} deep"
                    );
                    return Status::FAIL;
                }
                self.depth += 1;
                let st = self.exec(&args[i..], &env, stdin, h1, h2);
                self.depth -= 1;
                st
            }
            "cd" => {
                let Some(dir) = args.get(1) else {
                    let _ = writeln!(h2.writer(), "cd: missing directory");
                    return Status::FAIL;
                };
                let target = self.cwd.join(dir);
                if target.is_dir() {
                    self.cwd = target;
                    Status::OK
                } else {
                    let _ = writeln!(h2.writer(), "cd: {dir}: No such file or directory");
                    Status::FAIL
                }
            }
            "export" => {
                for a in &args[1..] {
                    match a.split_once('=') {
                        Some((k, v)) if !k.is_empty() => {
                            self.env.insert(k.to_string(), v.to_string());
                        }
                        _ => {
                            let _ =
                                writeln!(h2.writer(), "export: expected NAME=VALUE, found '{a}'");
                            return Status::FAIL;
                        }
                    }
                }
                Status::OK
            }
            _ => {
                let mut io = Io {
                    stdin: &mut stdin,
                    out: h1.writer(),
                    err: h2.writer(),
                    cwd: &self.cwd,
                };
                if let Some(code) = builtins::run(name, &args[1..], &mut io) {
                    return Status::from_code(code);
                }
                self.external(args, env, stdin, h1, h2)
            }
        }
    }

    fn external(
        &mut self,
        args: &[String],
        env: &BTreeMap<String, String>,
        stdin: Input,
        h1: Handle,
        mut h2: Handle,
    ) -> Status {
        let name = &args[0];
        let Some(program) = self.resolve(name, env) else {
            let _ = writeln!(h2.writer(), "command not found: {name}");
            return Status::from_code(127);
        };
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.timed_out = true;
            return Status::FAIL;
        }
        let mut command = std::process::Command::new(&program);
        command
            .args(&args[1..])
            .current_dir(&self.cwd)
            .process_group(0);
        for (k, v) in self.env.iter().chain(env.iter()) {
            if v.is_empty() && env.contains_key(k) {
                command.env_remove(k);
            } else {
                command.env(k, v);
            }
        }
        let bytes = match stdin {
            Input::Null => {
                command.stdin(Stdio::null());
                None
            }
            Input::File(f) => {
                command.stdin(Stdio::from(f));
                None
            }
            Input::Bytes(b) => {
                command.stdin(Stdio::piped());
                Some(b)
            }
        };
        command.stdout(h1.into_stdio()).stderr(h2.into_stdio());
        let spawned = command.spawn();
        drop(command); // closes our copies of the output pipes
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                // The stderr handle went into the dropped command; report through the log.
                self.log.push_str(&format!(
                    "# error: could not run {}: {e}\n",
                    program.display()
                ));
                return Status::from_code(127);
            }
        };
        let writer = match (bytes, child.stdin.take()) {
            (Some(b), Some(mut w)) => Some(std::thread::spawn(move || {
                let _ = w.write_all(&b); // a child that exits early closes its stdin: not an error
            })),
            _ => None,
        };
        let status = wait(child, self.deadline, &mut self.timed_out);
        if let Some(w) = writer {
            let _ = w.join();
        }
        status
    }

    /// Finds the executable for `name`: a path, a tool substitution, or a `$PATH` entry.
    fn resolve(&self, name: &str, env: &BTreeMap<String, String>) -> Option<PathBuf> {
        if name.contains('/') {
            let p = self.cwd.join(name);
            return p.is_file().then_some(p);
        }
        if let Some(p) = self.tools.get(name) {
            return Some(p.clone());
        }
        let path = env
            .get("PATH")
            .or_else(|| self.env.get("PATH"))
            .cloned()
            .or_else(|| std::env::var("PATH").ok())?;
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    }
}

/// Waits for `child`, killing its process group at the deadline.
fn wait(mut child: std::process::Child, deadline: Option<Instant>, timed_out: &mut bool) -> Status {
    let Some(deadline) = deadline else {
        return to_status(child.wait());
    };
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let remaining = deadline.saturating_duration_since(Instant::now());
    let result = match rx.recv_timeout(remaining) {
        Ok(r) => r,
        Err(_) => {
            *timed_out = true;
            kill_tree(pid);
            rx.recv()
                .unwrap_or_else(|_| Err(std::io::Error::other("waiter thread died")))
        }
    };
    let _ = waiter.join();
    to_status(result)
}

/// Kills `pid`'s process group and every descendant of `pid`, whatever
/// group it is in (a nested glow-lit runs each command in a group of its
/// own). Everything is stopped first, so nothing forks or is re-parented
/// away while the tree is collected, then killed.
fn kill_tree(pid: i32) {
    let mut stopped = std::collections::BTreeSet::new();
    // SAFETY: kill(2) only sends signals; a negative pid names the child's own group.
    unsafe {
        libc::kill(-pid, libc::SIGSTOP);
    }
    loop {
        let fresh: Vec<i32> = descendants(pid)
            .into_iter()
            .filter(|p| !stopped.contains(p))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for p in fresh {
            // SAFETY: as above; `p` is a descendant of our child.
            unsafe {
                libc::kill(p, libc::SIGSTOP);
            }
            stopped.insert(p);
        }
    }
    // SAFETY: as above.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        for &p in &stopped {
            libc::kill(p, libc::SIGKILL);
        }
    }
}

/// `pid` and its descendants, from the parent links in `/proc`.
fn descendants(pid: i32) -> Vec<i32> {
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid ...`; comm may contain spaces and parentheses.
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
                .and_then(|w| w.parse::<i32>().ok());
            if let Some(pp) = ppid {
                children.entry(pp).or_default().push(p);
            }
        }
    }
    let mut out = vec![pid];
    let mut k = 0;
    while k < out.len() {
        if let Some(c) = children.get(&out[k]) {
            out.extend(c);
        }
        k += 1;
    }
    out
}

fn to_status(r: std::io::Result<std::process::ExitStatus>) -> Status {
    match r {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(c), _) => Status::from_code(c),
            (None, Some(sig)) => Status {
                code: 128 + sig,
                signal: Some(sig),
            },
            (None, None) => Status::FAIL,
        },
        Err(_) => Status::FAIL,
    }
}

fn open_out(path: &Path, append: bool, shown: &str) -> Result<File, String> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .append(append)
        .truncate(!append)
        .open(path)
        .map_err(|e| format!("cannot open '{shown}' for writing: {e}"))
}

fn drain(mut r: PipeReader) -> Vec<u8> {
    let mut buf = Vec::new();
    let _ = r.read_to_end(&mut buf);
    buf
}

/// Renders arguments so that the transcript can be pasted into a POSIX shell.
pub fn quote_args(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Appends output in lit's framed style (`# .---command stdout---` ... `` # `--- ``).
fn log_block(log: &mut String, what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    log.push_str(&format!("# .---command {what}------------\n"));
    for line in text.lines() {
        log.push_str("# | ");
        log.push_str(line);
        log.push('\n');
    }
    log.push_str("# `-----------------------------\n");
}
