#![no_main]
//! Thin glue: the check lives in the library (`codemode_mcp::fuzz::check_render`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| codemode_mcp::fuzz::check_render(data));
