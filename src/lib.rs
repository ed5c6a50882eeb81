//! llmbound: capacity, KV-cache and roofline bounds for running LLMs locally.

pub mod core;
pub mod profile;
pub mod build;
pub mod gguf;
pub mod compare;
pub mod tui;
