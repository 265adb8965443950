#![no_main]
// The `trace` target of glow_smith::targets (docs/fuzzing.md).
libfuzzer_sys::fuzz_target!(|data: &[u8]| glow_smith::targets::trace(data));
