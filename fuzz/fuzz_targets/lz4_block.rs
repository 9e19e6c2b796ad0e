#![no_main]
//! Thin glue: the check lives in the library (`codemode_sandbox::fuzz::check_lz4_block`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| codemode_sandbox::fuzz::check_lz4_block(data));
