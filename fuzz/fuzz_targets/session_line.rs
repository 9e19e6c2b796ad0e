#![no_main]
//! Thin glue: the check lives in the library (`codemode_cli::fuzz::check_session_line`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| codemode_cli::fuzz::check_session_line(data));
