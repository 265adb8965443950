#![no_main]
// The `filecheck` target of glow_smith::targets (docs/fuzzing.md).
libfuzzer_sys::fuzz_target!(|data: &[u8]| glow_smith::targets::filecheck(data));
