//! llmbound: capacity, KV-cache and roofline bounds for running LLMs locally.

pub mod bench;
pub mod build;
pub mod core;
pub mod gguf;
pub mod profile;
