//! Strip a TypeScript cell and print the JavaScript, or the diagnostics.
//!
//! ```sh
//! cargo run -p codemode-ts --example strip -- 'const n: number = 41; return n + 1;'
//! echo 'import fs from "fs"' | cargo run -p codemode-ts --example strip
//! ```
use std::io::Read;

use codemode_ts::{Language, StripOptions, strip};

fn main() -> std::io::Result<()> {
    let source = match std::env::args().nth(1) {
        Some(code) => code,
        None => {
            let mut code = String::new();
            std::io::stdin().read_to_string(&mut code)?;
            code
        }
    };
    let out = strip(&source, &StripOptions::new(Language::TypeScript));
    if out.is_ok() {
        println!("// {} (runs as the body of an async function)", out.file_name());
        println!("{}", out.code);
    } else {
        for diagnostic in &out.diagnostics {
            println!(
                "{:?} at {}:{}: {}",
                diagnostic.kind, diagnostic.line, diagnostic.column, diagnostic.message
            );
        }
        println!("\nthe message a model sees:\n{}", out.error_message());
        std::process::exit(1);
    }
    Ok(())
}
