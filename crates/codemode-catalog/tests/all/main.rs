//! Integration tests of codemode-catalog, one module per area.

mod asks;
mod catalog;
mod fuzz;
mod intents;
mod named;
mod names;
mod namespace;
mod properties;
mod quick_index;
mod search;
mod snapshots;
mod support;
