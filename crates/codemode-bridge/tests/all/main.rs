//! Integration tests of codemode-bridge: host-side pieces, and the prelude in the real sandbox.

mod boot;
mod console;
mod fuzz;
mod guest;
mod hostile;
mod limits;
mod scope;
