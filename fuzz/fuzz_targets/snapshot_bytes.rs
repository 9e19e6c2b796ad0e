#![no_main]
//! Thin glue: the check lives in the library (`codemode_sandbox::fuzz::check_snapshot_bytes`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| codemode_sandbox::fuzz::check_snapshot_bytes(data));
