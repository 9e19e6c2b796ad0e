#![no_main]
//! Thin glue: the check lives in the library (`codemode_bridge::fuzz::check_decode`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| codemode_bridge::fuzz::check_decode(data));
