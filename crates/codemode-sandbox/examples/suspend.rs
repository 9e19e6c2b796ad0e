//! Run JavaScript in the sandbox, suspend it on a host call, snapshot it, and restore it in a fresh
//! instance on another thread, where the host's answer is delivered.
//!
//! ```sh
//! cargo run -p codemode-sandbox --example suspend
//! ```
use std::time::{Duration, Instant};

use codemode_sandbox::{Delivery, Sandbox, SandboxConfig, Step};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A tiny guest API: one async host function. (The codemode-bridge prelude is the real one.)
    // It captures the private import, then removes it, before any user code runs.
    let prelude = "{ const hostCall = __codemode_host_call;\n\
                     globalThis.ask = (q) => hostCall(JSON.stringify({ q })); }\n\
                   delete globalThis.__codemode_host_call;";
    let sandbox = Sandbox::new(SandboxConfig::default(), prelude)?;
    let deadline = Instant::now() + Duration::from_secs(5);

    let mut vm = sandbox.start()?;
    let step = vm.eval_cell(
        "const answer = await ask('the meaning of life'); return { answer, doubled: answer * 2 };",
        "user.js",
        deadline,
    )?;
    println!("after eval: {step:?}");
    assert_eq!(step, Step::Pending { pending_calls: 1 }, "the cell waits on its host call");
    for call in vm.take_host_calls() {
        println!("host call #{}: {}", call.id, call.payload);
    }

    // Nothing of the guest is on the stack while it awaits: capture it and drop the instance.
    let snapshot = vm.snapshot()?;
    println!("snapshot: {} bytes", snapshot.to_bytes().len());
    drop(vm);

    // Later, elsewhere: a fresh instance from the snapshot, then the host's answer.
    let result = std::thread::spawn(move || -> Result<Step, codemode_sandbox::SandboxError> {
        let mut vm = sandbox.restore(&snapshot)?;
        vm.deliver(0, Delivery::Resolve("42".into()), deadline)?;
        vm.run_jobs(deadline)
    })
    .join()
    .map_err(|_| "restore thread panicked")??;
    println!("after restore: {result:?}");
    assert_eq!(result, Step::Completed { value_json: Some(r#"{"answer":42,"doubled":84}"#.into()) });
    Ok(())
}
