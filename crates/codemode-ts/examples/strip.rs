//! Strips a cell read from stdin and prints the JavaScript or the diagnostics.
//!
//! Run: `echo 'const x: number = 1; return x;' | cargo run -p codemode-ts --example strip -- ts`
//! (the argument `js` or `ts` picks the language; default `ts`).

use std::io::Read;

use codemode_ts::{Language, StripOptions, strip};

fn main() {
    let language = match std::env::args().nth(1).as_deref() {
        Some("js") => Language::JavaScript,
        _ => Language::TypeScript,
    };
    let mut source = String::new();
    if std::io::stdin().read_to_string(&mut source).is_err() {
        eprintln!("stdin is not UTF-8");
        std::process::exit(2);
    }
    let out = strip(&source, &StripOptions::new(language));
    if out.is_ok() {
        print!("{}", out.code);
    } else {
        eprintln!("{}", out.error_message());
        std::process::exit(1);
    }
}
