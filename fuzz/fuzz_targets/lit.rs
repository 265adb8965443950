#![no_main]
// The `lit` target of glow_smith::targets (docs/fuzzing.md).
libfuzzer_sys::fuzz_target!(|data: &[u8]| glow_smith::targets::lit(data));
