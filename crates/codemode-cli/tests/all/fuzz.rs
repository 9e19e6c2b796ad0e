//! The fuzz checks on deterministic pseudo-random and corpus-like inputs.

use codemode_cli::fuzz::{check_fixture, check_session_line};
use codemode_core::fuzz::XorShift;

const CORPUS: &[&str] = &[
    r#"{"tools":[{"name":"a","behavior":{"kind":"sequence","steps":[{"kind":"delay","ms":1},"manual"]}}]}"#,
    r#"{"deny":["a","mcp:s:x"],"tools":[{"name":"a"},{"name":"b","denied":true}],"mcpServers":{"s":{"tools":[{"name":"x"},{"name":"y"}]}}}"#,
    r#"{"mcpServers":{"s":{"command":"x","args":["1"],"env":{"A":"b"},"cwd":"."}}}"#,
    r#"{"namespaces":[{"id":"n","globalName":"N","plugin":"p","scope":{"a":[{"$tool":"t","arg":"k"}],"b":1}}]}"#,
    r#"{"id":1,"op":"exec","scope":{"session":"s","run":"r"},"input":{"code":"return 1"}}"#,
    r#"{"id":"x","op":"cancel","requestId":3}"#,
    r#"{"id": 5, "op": "#,
];

/// Replaces a few bytes of a corpus entry, or builds random JSON-ish text.
fn input(rng: &mut XorShift) -> Vec<u8> {
    const ALPHABET: &[u8] = br#"{}[]":,0123456789 abcdefghijklmnopqrstuvwxyz$-_.\"#;
    let base = CORPUS[(rng.next_u64() % CORPUS.len() as u64) as usize].as_bytes();
    let mut data = base.to_vec();
    if rng.next_u64().is_multiple_of(4) {
        let len = (rng.next_u64() % 64) as usize;
        return (0..len).map(|_| ALPHABET[(rng.next_u64() % ALPHABET.len() as u64) as usize]).collect();
    }
    for _ in 0..(1 + rng.next_u64() % 4) {
        if data.is_empty() {
            break;
        }
        let at = (rng.next_u64() % data.len() as u64) as usize;
        match rng.next_u64() % 3 {
            0 => data[at] = ALPHABET[(rng.next_u64() % ALPHABET.len() as u64) as usize],
            1 => {
                data.remove(at);
            }
            _ => data.insert(at, ALPHABET[(rng.next_u64() % ALPHABET.len() as u64) as usize]),
        }
    }
    data
}

#[test]
fn fixture_and_session_checks_hold_on_pseudo_random_inputs() {
    for entry in CORPUS {
        check_fixture(entry.as_bytes());
        check_session_line(entry.as_bytes());
    }
    let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
    for _ in 0..4000 {
        let data = input(&mut rng);
        check_fixture(&data);
        check_session_line(&data);
    }
}
