#![no_main]
//! Thin glue: the check lives in the library (`codemode_catalog::fuzz::check_search`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| codemode_catalog::fuzz::check_search(data));
