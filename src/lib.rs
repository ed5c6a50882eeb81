//! llmbound: capacity and throughput bounds for local LLM inference.
