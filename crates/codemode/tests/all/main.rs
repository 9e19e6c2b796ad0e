//! Integration tests of the codemode runtime, against the real sandbox.

mod bounds;
mod checklist;
mod concurrency;
mod discovery;
mod lifecycle;
mod namespaces;
mod positions;
mod preparation;
mod shared_runs;
mod stores;
mod support;
mod surface;
