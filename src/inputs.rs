//! The inputs layer: everything that comes from outside the process — GGUF and safetensors
//! headers (local, remote, Ollama and LM Studio stores), machine/model/scenario profiles, the
//! machine llmbound runs on — read through bounded readers and turned into `core`'s input types.
//! Its modules import core and each other, nothing later (tests/module_graph.rs).

pub mod detect;
pub mod gguf;
pub mod infile;
pub mod ollama;
pub mod profile;
pub mod remote;
pub mod safetensors;
pub mod sanitize;
