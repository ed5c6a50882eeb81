//! The outputs layer: reports over the engine's results (text, markdown and JSON worksheets,
//! `inspect`, the llama-bench comparison, the MLX-LM plan) and the process exit codes. Writes to
//! `impl Write`; never the terminal's raw mode.
//! Its modules import core, inputs, the workspace and each other (tests/module_graph.rs).

pub mod bench;
pub mod exit;
pub mod inspect;
pub mod mlx_report;
pub mod models;
pub mod report;
