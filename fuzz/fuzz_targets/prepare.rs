#![no_main]
//! Thin glue: the check lives in the library (`codemode_ts::fuzz::check_prepare`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| codemode_ts::fuzz::check_prepare(data));
