//! codemode-mcp integration tests: one binary, a module per area.

mod api;
mod catalogs;
mod fuzz;
mod hostile;
mod names;
mod support;
