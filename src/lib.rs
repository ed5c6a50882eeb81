//! llmbound: capacity, KV-cache and roofline bounds for running LLMs locally.

pub mod bench;
pub mod build;
pub mod cli;
pub mod compare;
pub mod core;
pub mod detect;
pub mod exit;
pub mod gguf;
pub mod infile;
pub mod inspect;
pub mod library;
pub mod mlx_cli;
pub mod mlx_report;
pub mod ollama;
pub mod profile;
pub mod remote;
pub mod report;
pub mod safetensors;
pub mod sanitize;
pub mod tui;
pub mod workspace;
