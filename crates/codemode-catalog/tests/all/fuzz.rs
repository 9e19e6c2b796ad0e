//! The search fuzz check on pseudo-random and corpus-like inputs.

use codemode_catalog::fuzz::check_search;
use codemode_core::fuzz::XorShift;

#[test]
fn random_inputs() {
    let mut rng = XorShift::new(XorShift::DEFAULT_SEED);
    let alphabet = b"abcdeilnorstu_-. :ISXZ0123456789\xff\xc3\xa9";
    for _ in 0..2_000 {
        let len = (rng.next_u64() % 48) as usize;
        let data: Vec<u8> = (0..len)
            .map(|_| {
                let r = rng.next_u64();
                if r.is_multiple_of(4) {
                    (r >> 8) as u8
                } else {
                    alphabet[(r >> 8) as usize % alphabet.len()]
                }
            })
            .collect();
        check_search(&data);
    }
}

#[test]
fn corpus_like_inputs() {
    for case in [
        &b""[..],
        b"\x00",
        b"\x08create issue",
        b"\x32list_issues",
        b"openclaw:core:create_issue",
        b"mcp:owner:get-feature-flag",
        b"__proto__",
        b"constructor prototype toString",
        b"\xff\xfe\xfd",
        "🙂🙂🙂 ünïcödé".as_bytes(),
        b"HTTPServerStart",
        b"2fa",
        b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ] {
        check_search(case);
    }
    check_search("issue ".repeat(5_000).as_bytes());
}
