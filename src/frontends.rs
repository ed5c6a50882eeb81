//! The front ends: the command line (`cli`, `mlx_cli`) and the explorer (`tui`). They parse
//! what the user asks, hand it to the workspace and print what the outputs write.
//! Its modules may import every other layer (tests/module_graph.rs).

pub mod cli;
pub mod mlx_cli;
pub mod tui;
