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

/// Names the generated code and its includes use.
const RESERVED: &[&str] = &[
    "main",
    "expf",
    "tanhf",
    "sqrtf",
    "powf",
    "nearbyint",
    "printf",
    "putchar",
    "fopen",
    "fclose",
    "fread",
    "fwrite",
    "malloc",
    "free",
    "memcpy",
    "memset",
    "size_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uintptr_t",
    "INFINITY",
    "NAN",
    "NULL",
    "FILE",
    "stdin",
    "stdout",
    "stderr",
    "exit",
    "abort",
    "errno",
    "assert",
    "offsetof",
    "isnan",
];

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
        let base = format!("{prefix}{}", sanitize(name));
        let base = if base.is_empty() || !base.as_bytes()[0].is_ascii_alphabetic() {
            format!("v{base}")
        } else {
            base
        };
        let mut candidate = base.clone();
        let mut n = 1u64;
        while self.is_taken(&candidate) {
            candidate = format!("{base}_{n}");
            n += 1;
        }
        self.used.insert(candidate.clone());
        candidate
    }

    fn is_taken(&self, ident: &str) -> bool {
        self.used.contains(ident) || KEYWORDS.contains(&ident) || RESERVED.contains(&ident)
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
    fn strings_and_comments_are_inert() {
        assert_eq!(c_string("a\"b\\c\n"), "\"a\\042b\\134c\\012\"");
        assert!(!comment_text("*/ x /*").contains("*/"));
    }
}
