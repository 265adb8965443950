//! The C engine: writes a bundle plus a generated driver (`main`) into a
//! directory, builds them with the system C compiler, and runs the program
//! on a `Memory`. The driver reads the constant and mutable regions from
//! files, zeroes the activation arena, calls the entry point and writes the
//! mutable region back, so outputs are read exactly like the interpreter's.

use crate::bundle::Bundle;
use crate::interp::Memory;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// How to compile: the compiler command (`cc`, or `$CC`, possibly with
/// arguments) and extra flags.
#[derive(Clone, Debug)]
pub struct CcOptions {
    pub cc: Vec<String>,
    pub cflags: Vec<String>,
}

impl CcOptions {
    /// `--cc` if given, else `$CC`, else `cc`; flags split on whitespace.
    pub fn new(cc: Option<&str>, cflags: &str) -> CcOptions {
        let cc = cc
            .map(str::to_string)
            .or_else(|| std::env::var("CC").ok().filter(|s| !s.trim().is_empty()))
            .unwrap_or_else(|| "cc".to_string());
        CcOptions {
            cc: cc.split_whitespace().map(str::to_string).collect(),
            cflags: cflags.split_whitespace().map(str::to_string).collect(),
        }
    }

    /// Whether the compiler starts and answers `--version`.
    pub fn found(&self) -> bool {
        self.run(Path::new("."), ["--version"])
            .is_ok_and(|o| o.status.success())
    }

    /// Runs the compiler in `dir` with `args` after its own arguments; the
    /// error says why it did not start. The caller judges the exit status.
    pub fn run<A: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: impl IntoIterator<Item = A>,
    ) -> Result<Output, String> {
        let (prog, own) = self
            .cc
            .split_first()
            .ok_or("the C compiler command is empty")?;
        Command::new(prog)
            .args(own)
            .args(args)
            .current_dir(dir)
            .output()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    format!("C compiler `{prog}` not found (install one, or pass --cc / set $CC)")
                } else {
                    format!("cannot run the C compiler `{prog}`: {e}")
                }
            })
    }

    /// `run` with the flags every bundle is built with first: C99, no
    /// floating-point contraction (both engines must round alike), `cflags`.
    pub fn run_bundle_build<A: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: impl IntoIterator<Item = A>,
    ) -> Result<Output, String> {
        let mut all: Vec<OsString> = ["-std=c99", "-ffp-contract=off"]
            .iter()
            .map(OsString::from)
            .collect();
        all.extend(self.cflags.iter().map(OsString::from));
        all.extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self.run(dir, all)
    }
}

/// The driver's C source for `bundle`.
pub fn driver_source(b: &Bundle) -> String {
    let n = &b.name;
    format!(
        r#"/* glow-run driver for bundle `{n}`: DRIVER WEIGHTS MUTABLE_IN MUTABLE_OUT [REPEAT] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "{n}.h"

static uint8_t *glow_driver_aligned(void **raw, size_t n) {{
  *raw = malloc(n + {n}_MEM_ALIGN);
  if (!*raw) return NULL;
  return (uint8_t *)(((uintptr_t)*raw + {n}_MEM_ALIGN - 1) / {n}_MEM_ALIGN * {n}_MEM_ALIGN);
}}

static int glow_driver_load(const char *path, uint8_t *dst, size_t n) {{
  FILE *f = fopen(path, "rb");
  size_t got;
  if (!f) return 1;
  got = n ? fread(dst, 1, n, f) : 0;
  fclose(f);
  return got != n;
}}

int main(int glow_driver_argc, char **glow_driver_argv) {{
  void *glow_driver_raw_c, *glow_driver_raw_m, *glow_driver_raw_a;
  uint8_t *glow_driver_c, *glow_driver_m, *glow_driver_a;
  long glow_driver_repeat, glow_driver_r;
  clock_t glow_driver_t0, glow_driver_t1;
  FILE *glow_driver_out;
  if (glow_driver_argc < 4) {{
    fprintf(stderr, "usage: %s WEIGHTS MUTABLE_IN MUTABLE_OUT [REPEAT]\n", glow_driver_argv[0]);
    return 2;
  }}
  glow_driver_repeat = glow_driver_argc > 4 ? atol(glow_driver_argv[4]) : 1;
  glow_driver_c = glow_driver_aligned(&glow_driver_raw_c, {n}_CONSTANT_MEM_SIZE);
  glow_driver_m = glow_driver_aligned(&glow_driver_raw_m, {n}_MUTABLE_MEM_SIZE);
  glow_driver_a = glow_driver_aligned(&glow_driver_raw_a, {n}_ACTIVATIONS_MEM_SIZE);
  if (!glow_driver_c || !glow_driver_m || !glow_driver_a) {{
    fprintf(stderr, "out of memory\n");
    return 3;
  }}
  memset(glow_driver_a, 0, {n}_ACTIVATIONS_MEM_SIZE);
  if (glow_driver_load(glow_driver_argv[1], glow_driver_c, {n}_CONSTANT_MEM_SIZE) || glow_driver_load(glow_driver_argv[2], glow_driver_m, {n}_MUTABLE_MEM_SIZE)) {{
    fprintf(stderr, "cannot read the weight files\n");
    return 3;
  }}
  glow_driver_t0 = clock();
  for (glow_driver_r = 0; glow_driver_r < glow_driver_repeat; glow_driver_r++) {{
    if ({n}(glow_driver_c, glow_driver_m, glow_driver_a) != 0) {{
      fprintf(stderr, "the bundle returned an error\n");
      return 4;
    }}
  }}
  glow_driver_t1 = clock();
  if (glow_driver_argc > 4) fprintf(stderr, "glow-run-seconds-per-run %.9f\n", (double)(glow_driver_t1 - glow_driver_t0) / CLOCKS_PER_SEC / (double)(glow_driver_repeat > 0 ? glow_driver_repeat : 1));
  glow_driver_out = fopen(glow_driver_argv[3], "wb");
  if (!glow_driver_out || fwrite(glow_driver_m, 1, {n}_MUTABLE_MEM_SIZE, glow_driver_out) != {n}_MUTABLE_MEM_SIZE) {{
    fprintf(stderr, "cannot write %s\n", glow_driver_argv[3]);
    return 3;
  }}
  fclose(glow_driver_out);
  free(glow_driver_raw_c);
  free(glow_driver_raw_m);
  free(glow_driver_raw_a);
  return 0;
}}
"#
    )
}

/// One buffer the trace hook writes after instruction `position`.
pub struct TraceSlot {
    pub position: usize,
    pub region: crate::memory::Region,
    pub offset: u64,
    pub bytes: u64,
}

/// The `glow_trace_hook` of a bundle built with `CodegenOptions::trace`:
/// after instruction `pos` it appends the bytes of that instruction's slots
/// to `file`, in slot order.
pub fn trace_hook_source(slots: &[TraceSlot], file: &Path) -> String {
    use crate::memory::Region;
    let mut s = String::from("/* glow-run --bisect-engines: the written buffers after each instruction. */\n#include <stdio.h>\n#include <stdint.h>\n#include <stdlib.h>\n\n");
    s.push_str("static const struct { long pos; int region; unsigned long long off, len; } glow_trace_slots[] = {\n");
    for t in slots {
        let r = match t.region {
            Region::Constant => 0,
            Region::Mutable => 1,
            Region::Activations => 2,
        };
        s.push_str(&format!(
            "  {{{}, {r}, {}ull, {}ull}},\n",
            t.position, t.offset, t.bytes
        ));
    }
    // An empty initializer list is not C99.
    if slots.is_empty() {
        s.push_str("  {-1, 0, 0ull, 0ull},\n");
    }
    let path: String = file
        .display()
        .to_string()
        .chars()
        .flat_map(|c| match c {
            '\\' | '"' => vec!['\\', c],
            _ => vec![c],
        })
        .collect();
    s.push_str(&format!(
        r#"}};
static FILE *glow_trace_file;
static size_t glow_trace_next;

void glow_trace_hook(int pos, const uint8_t *constantWeight, const uint8_t *mutableWeight, const uint8_t *activations) {{
  const size_t n = sizeof glow_trace_slots / sizeof glow_trace_slots[0];
  if (!glow_trace_file) {{
    glow_trace_file = fopen("{path}", "wb");
    if (!glow_trace_file) {{
      fprintf(stderr, "cannot write the trace file\n");
      exit(3);
    }}
  }}
  while (glow_trace_next < n && glow_trace_slots[glow_trace_next].pos == pos) {{
    const uint8_t *base = glow_trace_slots[glow_trace_next].region == 0 ? constantWeight : glow_trace_slots[glow_trace_next].region == 1 ? mutableWeight : activations;
    size_t len = (size_t)glow_trace_slots[glow_trace_next].len;
    if (fwrite(base + glow_trace_slots[glow_trace_next].off, 1, len, glow_trace_file) != len) {{
      fprintf(stderr, "cannot write the trace file\n");
      exit(3);
    }}
    glow_trace_next++;
  }}
  fflush(glow_trace_file);
}}
"#
    ));
    s
}

/// `build` for a bundle built with `CodegenOptions::trace`, with the hook
/// that records `slots` into `file`.
pub fn build_traced(
    b: &Bundle,
    dir: &Path,
    opts: &CcOptions,
    slots: &[TraceSlot],
    file: &Path,
) -> Result<PathBuf, String> {
    std::fs::write(dir.join("trace.c"), trace_hook_source(slots, file))
        .map_err(|e| format!("cannot write the trace hook: {e}"))?;
    build_with(b, dir, opts, &["trace.c"])
}

/// Writes the bundle and driver into `dir` and compiles them; returns the
/// executable. Errors carry the compiler's own message.
pub fn build(b: &Bundle, dir: &Path, opts: &CcOptions) -> Result<PathBuf, String> {
    build_with(b, dir, opts, &[])
}

fn build_with(b: &Bundle, dir: &Path, opts: &CcOptions, extra: &[&str]) -> Result<PathBuf, String> {
    b.write_to(dir)
        .map_err(|e| format!("cannot write the bundle into {}: {e}", dir.display()))?;
    std::fs::write(dir.join("driver.c"), driver_source(b))
        .map_err(|e| format!("cannot write the driver: {e}"))?;
    let exe = dir.join(format!("{}.run", b.name));
    let mut args: Vec<OsString> = vec!["-o".into(), exe.clone().into()];
    args.push(dir.join(format!("{}.c", b.name)).into());
    args.push(dir.join("driver.c").into());
    args.extend(extra.iter().map(|x| dir.join(x).into()));
    if b.codegen.threads > 1 {
        args.push("-pthread".into());
    }
    args.push("-lm".into());
    let output = opts.run_bundle_build(dir, args)?;
    if !output.status.success() {
        return Err(format!(
            "the C compiler `{}` failed ({}):\n{}{}",
            opts.cc.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(exe)
}

/// What one run of the program printed, and its time per run when repeated.
pub struct RunOutput {
    pub stdout: String,
    pub seconds_per_run: Option<f64>,
}

/// Runs a built driver on `mem` (the mutable region is updated in place);
/// `constant` is the bundle's constant region (weights and packed copies).
pub fn run(
    exe: &Path,
    dir: &Path,
    constant: &[u8],
    mem: &mut Memory,
    repeat: Option<u64>,
) -> Result<RunOutput, String> {
    let (wf, mi, mo) = (
        dir.join("weights.in"),
        dir.join("mutable.in"),
        dir.join("mutable.out"),
    );
    std::fs::write(&wf, constant).map_err(|e| format!("cannot write {}: {e}", wf.display()))?;
    std::fs::write(&mi, &mem.mutable).map_err(|e| format!("cannot write {}: {e}", mi.display()))?;
    let mut cmd = Command::new(exe);
    cmd.arg(&wf).arg(&mi).arg(&mo);
    if let Some(n) = repeat {
        cmd.arg(n.to_string());
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() {
        return Err(format!(
            "the compiled program failed ({}):\n{stderr}",
            out.status
        ));
    }
    let m = std::fs::read(&mo).map_err(|e| format!("cannot read {}: {e}", mo.display()))?;
    if m.len() != mem.mutable.len() {
        return Err("the compiled program wrote a mutable region of the wrong size".into());
    }
    mem.mutable = m;
    let seconds_per_run = stderr
        .lines()
        .find_map(|l| l.strip_prefix("glow-run-seconds-per-run "))
        .and_then(|s| s.trim().parse().ok());
    Ok(RunOutput {
        stdout: String::from_utf8_lossy(&out.stdout).to_string(),
        seconds_per_run,
    })
}
