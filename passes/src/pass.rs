//! The `Pass` trait, the `PassInfo` that registers a pass, and what a pass
//! sees while it runs: its options, its statistics counters and, under
//! `--debug-only`, a place to explain itself.

use crate::counter::DebugCounters;
use glow_ir::{Diagnostic, Function};
use std::collections::BTreeMap;

/// A transformation or check over one function.
pub trait Pass {
    /// Runs on `f`; returns whether anything changed. An `Err` is a user
    /// error (for example `verify` or `make-weights-const` finding a problem).
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>>;
}

/// An option a pass accepts in `name{key=value}`.
#[derive(Debug, PartialEq, Eq)]
pub struct PassOption {
    pub name: &'static str,
    pub help: &'static str,
}

/// Everything the registry and the tools know about a pass: one `static`
/// per pass, beside its code. Pipelines hold `&'static PassInfo`, so a pass
/// is named by its static in Rust and by `name` only on the command line.
pub struct PassInfo {
    /// Kebab-case, unique in a registry.
    pub name: &'static str,
    /// One line, printed by `--list-passes`.
    pub summary: &'static str,
    pub options: &'static [PassOption],
    /// (counter, description) pairs, printed by `--stats`.
    pub stats: &'static [(&'static str, &'static str)],
    /// (debug counter, description) pairs: the decisions `--debug-counter`
    /// can skip, each asked through `PassContext::should_execute`.
    pub counters: &'static [(&'static str, &'static str)],
    /// Builds the pass from its options; an `Err` is a usage error.
    pub create: fn(&PassOptions) -> Result<Box<dyn Pass>, String>,
}

impl PassInfo {
    /// Whether `self` is the very entry `other` (the same static), which
    /// no other pass can be even under the same name.
    pub fn is(&self, other: &PassInfo) -> bool {
        std::ptr::eq(self, other)
    }
}

impl std::fmt::Debug for PassInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for PassInfo {
    fn eq(&self, other: &Self) -> bool {
        self.is(other)
    }
}

/// `name{key=value,...}` options of one pass invocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassOptions {
    pub values: BTreeMap<String, String>,
}

impl PassOptions {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// A boolean option (`true`/`false`/`1`/`0`), or `default` when absent.
    pub fn get_bool(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(default),
            Some("true" | "1") => Ok(true),
            Some("false" | "0") => Ok(false),
            Some(v) => Err(format!("option `{key}` expects true or false, found `{v}`")),
        }
    }

    /// An unsigned integer option, or `default` when absent.
    pub fn get_u64(&self, key: &str, default: u64) -> Result<u64, String> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("option `{key}` expects an unsigned integer, found `{v}`")),
        }
    }
}

/// Counters per (pass, counter name), printed by `--stats`.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub counters: BTreeMap<(&'static str, &'static str), u64>,
}

/// What a running pass may use besides the function.
pub struct PassContext<'a> {
    pub pass: &'static str,
    /// The running pass's declaration, which names every statistic and
    /// counter it may use (unknown for a context made by `new`).
    info: Option<&'static PassInfo>,
    pub(crate) stats: &'a mut Stats,
    pub(crate) debug: Option<&'a mut String>,
    pub(crate) counters: Option<&'a mut DebugCounters>,
}

impl<'a> PassContext<'a> {
    /// A context for running a pass outside the manager (tests, tools).
    pub fn new(
        pass: &'static str,
        stats: &'a mut Stats,
        debug: Option<&'a mut String>,
    ) -> PassContext<'a> {
        PassContext {
            pass,
            info: None,
            stats,
            debug,
            counters: None,
        }
    }

    /// A context for `info`'s pass, which may use only the statistics and
    /// counters `info` declares (checked in debug builds).
    pub fn for_pass(
        info: &'static PassInfo,
        stats: &'a mut Stats,
        debug: Option<&'a mut String>,
    ) -> PassContext<'a> {
        PassContext {
            info: Some(info),
            ..PassContext::new(info.name, stats, debug)
        }
    }

    /// The same context, asking `counters` before each decision.
    pub fn with_counters(mut self, counters: &'a mut DebugCounters) -> PassContext<'a> {
        self.counters = Some(counters);
        self
    }

    /// Counts one decision of kind `counter` (declared in the pass's
    /// `PassInfo::counters`) and says whether the pass may take it; a skipped
    /// decision is explained under `--debug-only`. Without `--debug-counter`
    /// every decision happens.
    pub fn should_execute(&mut self, counter: &'static str) -> bool {
        debug_assert!(
            self.info
                .is_none_or(|i| i.counters.iter().any(|(c, _)| *c == counter)),
            "pass `{}` asks debug counter `{counter}`, which its PassInfo.counters does not declare",
            self.pass
        );
        let Some(counters) = self.counters.as_deref_mut() else {
            return true;
        };
        let (n, ok) = counters.ask(counter);
        if !ok {
            self.debug(|| format!("--debug-counter skips `{counter}` occurrence {n}"));
        }
        ok
    }

    /// Adds `n` to one of the pass's declared counters.
    pub fn bump(&mut self, counter: &'static str, n: u64) {
        debug_assert!(
            self.info
                .is_none_or(|i| i.stats.iter().any(|(c, _)| *c == counter)),
            "pass `{}` bumps statistic `{counter}`, which its PassInfo.stats does not declare",
            self.pass
        );
        if n > 0 {
            *self.stats.counters.entry((self.pass, counter)).or_default() += n;
        }
    }

    /// Whether `--debug-only` selected this pass.
    pub fn debugging(&self) -> bool {
        self.debug.is_some()
    }

    /// Writes one line of explanation under `--debug-only`; the text is only
    /// built when someone will read it.
    pub fn debug(&mut self, line: impl FnOnce() -> String) {
        if let Some(out) = self.debug.as_deref_mut() {
            out.push_str(&format!("[{}] {}\n", self.pass, line()));
        }
    }
}
