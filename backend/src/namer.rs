//! The one place where IR names become C identifiers (Naga's `Namer` idea).
//!
//! Guarantee: every identifier the namer returns matches
//! `[A-Za-z][A-Za-z0-9_]*`, is not a C keyword or a name the generated code
//! uses (libc/libm functions, the bundle's own macros), and is unique within
//! the namer. So no IR name, quoted or not, can inject text into the C source.

use std::collections::BTreeSet;

/// C99/C11 keywords plus C++ keywords (the header is `extern "C"`-safe, so
/// its identifiers must also be legal C++).
const KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Bool",
    "_Complex",
    "_Imaginary",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Generic",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "bitand",
    "bitor",
    "bool",
    "catch",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "constexpr",
    "const_cast",
    "decltype",
    "delete",
    "dynamic_cast",
    "explicit",
    "export",
    "false",
    "friend",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "reinterpret_cast",
    "static_assert",
    "static_cast",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typeid",
    "typename",
    "using",
    "virtual",
    "wchar_t",
    "xor",
    "xor_eq",
];

/// Names the generated code uses beyond the C99 headers below (the region
/// parameters are among the kernels' locals, bundle.rs): `main`, and the
/// `<time.h>` names glow-run's driver includes. The driver's own names all
/// start with `glow_`, which no handed-out identifier does.
#[rustfmt::skip]
const RESERVED: &[&str] = &[
    "main", "errno", "assert", "exit", "abort", "clock", "clock_t", "CLOCKS_PER_SEC", "time",
    "time_t", "difftime", "mktime", "asctime", "ctime", "gmtime", "localtime", "strftime", "tm",
];

/// Every identifier and macro of the C99 headers a bundle, its driver or
/// a program using it includes: `<math.h>`, `<stdlib.h>`, `<stdio.h>`,
/// `<string.h>`, `<stdint.h>`, `<stddef.h>`, `<float.h>`, `<limits.h>`.
/// The patterns C99 reserves for these headers are in `reserved_pattern`.
#[rustfmt::skip]
pub const C99_NAMES: &[&str] = &[
    // <math.h> macros and types (functions are in MATH_FUNCTIONS).
    "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "INFINITY", "NAN", "FP_INFINITE", "FP_NAN", "FP_NORMAL",
    "FP_SUBNORMAL", "FP_ZERO", "FP_FAST_FMA", "FP_FAST_FMAF", "FP_FAST_FMAL", "FP_ILOGB0",
    "FP_ILOGBNAN", "FP_CONTRACT", "MATH_ERRNO", "MATH_ERREXCEPT", "math_errhandling",
    "fpclassify", "isfinite", "isinf", "isnan", "isnormal", "signbit", "isgreater",
    "isgreaterequal", "isless", "islessequal", "islessgreater", "isunordered", "float_t",
    "double_t",
    // <stdlib.h>
    "div_t", "ldiv_t", "lldiv_t", "EXIT_FAILURE", "EXIT_SUCCESS", "RAND_MAX", "MB_CUR_MAX",
    "atof", "atoi", "atol", "atoll", "strtod", "strtof", "strtold", "strtol", "strtoll",
    "strtoul", "strtoull", "rand", "srand", "calloc", "free", "malloc", "realloc", "atexit",
    "_Exit", "getenv", "system", "bsearch", "qsort", "abs", "labs", "llabs", "div", "ldiv",
    "lldiv", "mblen", "mbtowc", "wctomb", "mbstowcs", "wcstombs",
    // <stdio.h>
    "FILE", "fpos_t", "_IOFBF", "_IOLBF", "_IONBF", "BUFSIZ", "EOF", "FOPEN_MAX", "FILENAME_MAX",
    "L_tmpnam", "SEEK_CUR", "SEEK_END", "SEEK_SET", "TMP_MAX", "stderr", "stdin", "stdout",
    "remove", "rename", "tmpfile", "tmpnam", "fclose", "fflush", "fopen", "freopen", "setbuf",
    "setvbuf", "fprintf", "fscanf", "printf", "scanf", "snprintf", "sprintf", "sscanf",
    "vfprintf", "vfscanf", "vprintf", "vscanf", "vsnprintf", "vsprintf", "vsscanf", "fgetc",
    "fgets", "fputc", "fputs", "getc", "getchar", "gets", "putc", "putchar", "puts", "ungetc",
    "fread", "fwrite", "fgetpos", "fseek", "fsetpos", "ftell", "rewind", "clearerr", "feof",
    "ferror", "perror",
    // <string.h>
    "memcpy", "memmove", "strcpy", "strncpy", "strcat", "strncat", "memcmp", "strcmp", "strcoll",
    "strncmp", "strxfrm", "memchr", "strchr", "strcspn", "strpbrk", "strrchr", "strspn",
    "strstr", "strtok", "memset", "strerror", "strlen",
    // <stdint.h> (the int*_t / INT*_MAX families are patterns)
    "intptr_t", "uintptr_t", "intmax_t", "uintmax_t", "PTRDIFF_MIN", "PTRDIFF_MAX",
    "SIG_ATOMIC_MIN", "SIG_ATOMIC_MAX", "SIZE_MAX", "WCHAR_MIN", "WCHAR_MAX", "WINT_MIN",
    "WINT_MAX",
    // <stddef.h>
    "ptrdiff_t", "size_t", "wchar_t", "NULL", "offsetof", "max_align_t",
    // <float.h> (the FLT_/DBL_/LDBL_ families are patterns)
    "DECIMAL_DIG",
    // <limits.h>
    "CHAR_BIT", "SCHAR_MIN", "SCHAR_MAX", "UCHAR_MAX", "CHAR_MIN", "CHAR_MAX", "MB_LEN_MAX",
    "SHRT_MIN", "SHRT_MAX", "USHRT_MAX", "INT_MIN", "INT_MAX", "UINT_MAX", "LONG_MIN",
    "LONG_MAX", "ULONG_MAX", "LLONG_MIN", "LLONG_MAX", "ULLONG_MAX",
];

/// The `<math.h>` functions; each also exists with an `f` and an `l` suffix.
#[rustfmt::skip]
pub const MATH_FUNCTIONS: &[&str] = &[
    "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh",
    "sinh", "tanh", "exp", "exp2", "expm1", "frexp", "ilogb", "ldexp", "log", "log10", "log1p",
    "log2", "logb", "modf", "scalbn", "scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf",
    "erfc", "lgamma", "tgamma", "ceil", "floor", "nearbyint", "rint", "lrint", "llrint", "round",
    "lround", "llround", "trunc", "fmod", "remainder", "remquo", "copysign", "nan", "nextafter",
    "nexttoward", "fdim", "fmax", "fmin", "fma",
];

/// The endings of the macros a bundle `NAME` defines (`NAME_H`,
/// `NAME_MEM_ALIGN`, ...). No identifier the namer hands out ends with one,
/// so no weight macro or entry point of one bundle is another bundle's macro.
pub const BUNDLE_SUFFIXES: &[&str] = &[
    "_H",
    "_CONSTANT_MEM_SIZE",
    "_MUTABLE_MEM_SIZE",
    "_ACTIVATIONS_MEM_SIZE",
    "_MEM_ALIGN",
];

/// Every name the namer avoids by list (keywords, the generated code's
/// names, the C99 headers' names, math functions with their `f`/`l`
/// forms), for tests that compile a bundle per name.
pub fn reserved_names() -> Vec<String> {
    let mut v: Vec<String> = KEYWORDS
        .iter()
        .chain(RESERVED)
        .chain(C99_NAMES)
        .map(|s| s.to_string())
        .collect();
    for f in MATH_FUNCTIONS {
        v.extend([f.to_string(), format!("{f}f"), format!("{f}l")]);
    }
    v
}

/// Whether `ident` is a standard library name of the C99 headers above.
pub fn is_c99_name(ident: &str) -> bool {
    C99_NAMES.contains(&ident) || is_math_function(ident) || reserved_pattern(ident)
}

fn is_math_function(ident: &str) -> bool {
    MATH_FUNCTIONS.contains(&ident)
        || ["f", "l"].iter().any(|s| {
            ident
                .strip_suffix(s)
                .is_some_and(|b| MATH_FUNCTIONS.contains(&b))
        })
}

/// Names C99 reserves for these headers by pattern (7.26): `int*_t` and
/// `uint*_t`, `INT*`/`UINT*` macros ending in `_MAX`, `_MIN` or `_C`.
fn reserved_pattern(ident: &str) -> bool {
    ((ident.starts_with("int") || ident.starts_with("uint")) && ident.ends_with("_t"))
        || ((ident.starts_with("INT") || ident.starts_with("UINT"))
            && ["_MAX", "_MIN", "_C"].iter().any(|s| ident.ends_with(s)))
}

/// Reserved prefixes: the `FLT_`/`DBL_`/`LDBL_` macros of `<float.h>`,
/// `str`, `mem`, `wcs` followed by a lowercase letter (future
/// `<string.h>`/`<stdlib.h>`), `pthread_` (threaded bundles include
/// `<pthread.h>`), and `glow_`/`GLOW_`, the prefixes of the kernels' shared
/// helpers and macros and of glow-run's driver.
fn prefix_reserved(ident: &str) -> bool {
    let lower_after = |p: &str| {
        ident
            .strip_prefix(p)
            .and_then(|r| r.bytes().next())
            .is_some_and(|b| b.is_ascii_lowercase())
    };
    ["FLT_", "DBL_", "LDBL_", "glow_", "GLOW_", "pthread_"]
        .iter()
        .any(|p| ident.starts_with(p))
        || ["str", "mem", "wcs"].iter().any(|p| lower_after(p))
}

/// Hands out sanitised, keyword-safe, unique C identifiers.
#[derive(Clone, Debug, Default)]
pub struct Namer {
    used: BTreeSet<String>,
}

impl Namer {
    pub fn new() -> Namer {
        Namer::default()
    }

    /// Marks an identifier as taken (e.g. a macro the bundle defines).
    pub fn reserve(&mut self, ident: &str) {
        self.used.insert(ident.to_string());
    }

    /// Whether `ident` was handed out or reserved.
    pub fn is_used(&self, ident: &str) -> bool {
        self.used.contains(ident)
    }

    /// A fresh identifier for `name`, prefixed with `prefix` (which must
    /// itself be a valid identifier start, or empty).
    pub fn name(&mut self, prefix: &str, name: &str) -> String {
        let base = self.fresh_base(prefix, name);
        let mut candidate = base.clone();
        let mut n = 1u64;
        while self.is_taken(&candidate) {
            candidate = format!("{base}_{n}");
            n += 1;
        }
        self.used.insert(candidate.clone());
        candidate
    }

    /// A fresh identifier for `name` such that `ident + suffix` is free for
    /// every suffix too (a bundle name and its macros); all are taken.
    pub fn name_family(&mut self, name: &str, suffixes: &[&str]) -> String {
        let mut base = self.fresh_base("", name);
        // Names made from `base_` (its weight macros) must not fall under a
        // reserved prefix either (`FLT` + `_MAX`).
        if prefix_reserved(&format!("{base}_")) {
            base = format!("v{base}");
        }
        let free = |n: &Namer, c: &str| {
            !n.is_taken(c) && suffixes.iter().all(|s| !n.is_reserved(&format!("{c}{s}")))
        };
        let mut candidate = base.clone();
        let mut n = 1u64;
        while !free(self, &candidate) {
            candidate = format!("{base}_{n}");
            n += 1;
        }
        for s in suffixes {
            self.used.insert(format!("{candidate}{s}"));
        }
        self.used.insert(candidate.clone());
        candidate
    }

    /// `prefix` + the sanitized name, starting with a letter; a `v` after
    /// the prefix when the name falls under a reserved prefix, which no
    /// `_N` suffix could leave.
    fn fresh_base(&self, prefix: &str, name: &str) -> String {
        let s = sanitize(name);
        let base = format!("{prefix}{s}");
        if base.is_empty() || !base.as_bytes()[0].is_ascii_alphabetic() || prefix_reserved(&base) {
            let after = format!("{prefix}v{s}");
            // A reserved prefix itself (never a bundle's): `v` in front.
            if prefix_reserved(&after) {
                format!("v{base}")
            } else {
                after
            }
        } else {
            base
        }
    }

    /// Taken for a handed-out name: reserved, or ending like a bundle macro.
    fn is_taken(&self, ident: &str) -> bool {
        self.is_reserved(ident) || BUNDLE_SUFFIXES.iter().any(|s| ident.ends_with(s))
    }

    fn is_reserved(&self, ident: &str) -> bool {
        self.used.contains(ident)
            || KEYWORDS.contains(&ident)
            || RESERVED.contains(&ident)
            || is_c99_name(ident)
            || prefix_reserved(ident)
    }
}

/// Every byte outside `[A-Za-z0-9_]` becomes `_`; runs of `_` collapse so
/// that `a/b` and `a.b` stay readable (uniqueness comes from the namer).
pub fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    out
}

/// A C string literal for arbitrary text: printable ASCII except `"`, `\`
/// and `?` (trigraphs) as is, everything else as an octal escape.
pub fn c_string(text: &str) -> String {
    let mut out = String::from("\"");
    for b in text.bytes() {
        if (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b'\\' | b'?') {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\{:03o}", b));
        }
    }
    out.push('"');
    out
}

/// Text safe inside a `/* */` comment: only `[A-Za-z0-9_.%@ ,=-]` survives.
pub fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || " _.%@,=-<>".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_ident(s: &str) -> bool {
        let b = s.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphabetic()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    }

    #[test]
    fn names_are_identifiers_and_unique() {
        let mut n = Namer::new();
        let inputs = [
            "x",
            "x",
            "int",
            "1abc",
            "",
            "a/b",
            "a.b",
            "*/ evil(); /*",
            "\"q\"",
            "main",
            "é",
            "_Bool",
            "x_1",
        ];
        let mut seen = BTreeSet::new();
        for i in inputs {
            let id = n.name("", i);
            assert!(is_ident(&id), "{id}");
            assert!(!KEYWORDS.contains(&id.as_str()), "{id}");
            assert!(seen.insert(id.clone()), "duplicate {id}");
        }
    }

    #[test]
    fn reserved_names_and_prefixes_are_avoided() {
        let mut n = Namer::new();
        assert_eq!(n.name_family("log", BUNDLE_SUFFIXES), "log_1");
        assert!(n.is_used("log_1_H"));
        assert_eq!(n.name_family("FLT", BUNDLE_SUFFIXES), "vFLT");
        assert_eq!(n.name("vFLT_", "MAX"), "vFLT_MAX");
        assert_eq!(n.name("", "strdup"), "vstrdup");
        assert_eq!(n.name("glow_", "driver_c"), "vglow_driver_c");
        assert_eq!(n.name("glo", "w_x"), "glovw_x");
        assert_eq!(n.name("", "glow_min"), "vglow_min");
        assert_eq!(n.name("", "GLOW_VEC"), "vGLOW_VEC");
        assert_eq!(n.name("", "pthread_create"), "vpthread_create");
        assert_eq!(n.name("", "SIZE_MAX"), "SIZE_MAX_1");
        assert_eq!(n.name("", "INT8_MAX"), "INT8_MAX_1");
        assert_eq!(n.name("", "uint_fast8_t"), "uint_fast8_t_1");
        assert_eq!(n.name("f_", "x_H"), "f_x_H_1");
        assert_eq!(n.name("", "isinf"), "isinf_1");
        assert_eq!(n.name("", "sqrtl"), "sqrtl_1");
        assert_eq!(n.name("", "EOF"), "EOF_1");
    }

    #[test]
    fn strings_and_comments_are_inert() {
        assert_eq!(c_string("a\"b\\c\n"), "\"a\\042b\\134c\\012\"");
        assert!(!comment_text("*/ x /*").contains("*/"));
    }
}
