#![no_main]
// The `smith` target of glow_smith::targets (docs/fuzzing.md).
libfuzzer_sys::fuzz_target!(|data: &[u8]| glow_smith::targets::smith(data));
