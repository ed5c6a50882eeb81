//! llmbound: capacity, KV-cache and roofline bounds for running LLMs locally.
//!
//! The crate is layered; each layer imports only the layers above it in this list
//! (`tests/module_graph.rs` enforces it):
//! - [`core`]: the bounds engine, pure arithmetic (no I/O, no UI, no other module);
//! - [`inputs`]: what comes from outside — GGUF and safetensors headers, remote and local
//!   stores, profiles, the machine llmbound runs on — turned into core's input types;
//! - [`workspace`]: the one owner of the user's scenario (the options that build it, the
//!   artifacts it opens, the machines it is compared on, the models of the library);
//! - [`outputs`]: reports over the engine's results — text, markdown, JSON, inspect, bench;
//! - [`frontends`]: the command line and the explorer.
//!
//! The modules keep their short paths (`llmbound::gguf`, `llmbound::report` …) through the
//! re-exports below.

pub mod core;
pub mod frontends;
pub mod inputs;
pub mod outputs;
pub mod workspace;

pub use frontends::{cli, mlx_cli, tui};
pub use inputs::{detect, gguf, infile, ollama, profile, remote, safetensors, sanitize};
pub use outputs::{bench, exit, inspect, mlx_report, report};
pub use workspace::{build, compare, library};
