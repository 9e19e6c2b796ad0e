//! codemode-core integration tests: one binary, a module per area.

mod config;
mod fuzz;
mod guest;
mod hint;
mod ident;
mod text;
mod validate;
mod wire;
