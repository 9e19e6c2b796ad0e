//! The decoder fuzz check on pseudo-random and corpus-like inputs (stable Rust, no fuzzer needed).

use codemode_bridge::HostRequest;
use codemode_bridge::fuzz::check_decode;
use codemode_core::fuzz::XorShift;
use serde_json::json;

fn corpus() -> Vec<Vec<u8>> {
    let mut input = serde_json::Map::new();
    input.insert("owner".into(), json!("openclaw"));
    let requests = [
        HostRequest::Search { query: "list shipments".into(), limit: Some(5) },
        HostRequest::Describe { id: "openclaw:core:read".into() },
        HostRequest::CallValue {
            id: "openclaw:core:read".into(),
            input: Some(json!({ "path": "README.md" })),
        },
        HostRequest::Namespace {
            namespace: "gh".into(),
            path: "a\u{1f}b".into(),
            args: vec![json!(null), json!([1])],
        },
        HostRequest::Mcp { server: "github".into(), tool: "createIssue".into(), input },
        HostRequest::Yield { reason: None },
    ];
    let mut out: Vec<Vec<u8>> = requests.iter().map(|r| r.to_payload().into_bytes()).collect();
    for extra in [
        &b"{\"v\":1,\"op\":\"search\",\"query\":\"\\ud83d\\ude00\",\"limit\":1e400}"[..],
        b"{\"v\":1,\"op\":\"callValue\",\"id\":\"x\",\"input\":[[[[[[[[[[[[[[]]]]]]]]]]]]]]}",
        b"{\"v\":1.0,\"op\":\"yield\"}",
        b"{\"v\":1,\"v\":1,\"op\":\"yield\"}",
        b"{\"v\":1,\"op\":\"yield\",\"op\":\"search\",\"query\":\"q\"}",
        b"\xef\xbb\xbf{}",
        b"{\"v\":18446744073709551617,\"op\":\"yield\"}",
        b"{\"v\":1,\"op\":\"namespace\",\"namespace\":\"n\",\"path\":\"p\",\"args\":[-0.0,1e-320,\"\\u0000\"]}",
    ] {
        out.push(extra.to_vec());
    }
    out.push(format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes());
    out.push(format!("{{\"v\":1,\"op\":\"yield\",\"reason\":\"{}\"}}", "x".repeat(70)).into_bytes());
    out
}

#[test]
fn corpus_cases_never_panic() {
    for case in corpus() {
        check_decode(&case);
    }
}

#[test]
fn random_mutations_never_panic() {
    let mut rng = XorShift::new(0x2545_F491_4F6C_DD1D);
    let corpus = corpus();
    let alphabet = b"{}[]\",:0123456789.eE+-\\u tnrfalsevopqyid\x1f\xff";
    for i in 0..4000 {
        let mut data = corpus[i % corpus.len()].clone();
        if data.len() > 4096 {
            data.truncate(4096);
        }
        let edits = 1 + (rng.next_u64() % 6) as usize;
        for _ in 0..edits {
            let pos = if data.is_empty() { 0 } else { (rng.next_u64() as usize) % (data.len() + 1) };
            let byte = alphabet[(rng.next_u64() as usize) % alphabet.len()];
            match rng.next_u64() % 3 {
                0 => data.insert(pos, byte),
                1 if pos < data.len() => data[pos] = byte,
                _ if pos < data.len() => {
                    data.remove(pos);
                }
                _ => data.push(byte),
            }
        }
        check_decode(&data);
    }
    // Pure noise too.
    for _ in 0..2000 {
        let len = (rng.next_u64() % 64) as usize;
        let data: Vec<u8> = (0..len).map(|_| alphabet[(rng.next_u64() as usize) % alphabet.len()]).collect();
        check_decode(&data);
    }
}

#[test]
fn payloads_over_the_budget_are_refused_before_parsing() {
    let over = vec![b' '; 8 * 1024 * 1024 + 1];
    assert!(codemode_bridge::decode_request(std::str::from_utf8(&over).unwrap()).is_err());
    check_decode(&over);
}
