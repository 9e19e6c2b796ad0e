//! Integration tests of the codemode runtime, against the real sandbox.

mod checklist;
mod concurrency;
mod lifecycle;
mod namespaces;
mod support;
mod surface;
