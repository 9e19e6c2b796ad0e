//! Integration tests of the codemode runtime, against the real sandbox.

mod bounds;
mod checklist;
mod concurrency;
mod discovery;
mod guest_thread;
mod immediate_calls;
mod lifecycle;
mod namespaces;
mod positions;
mod preparation;
mod scale;
mod shared_runs;
mod stores;
mod support;
mod surface;
#[path = "../../benches/support/synthetic.rs"]
mod synthetic;
