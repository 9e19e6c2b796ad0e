#![no_main]
//! Thin glue: the check lives in the library (`codemode_core::fuzz::check_schema_hint`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| codemode_core::fuzz::check_schema_hint(data));
