//! Import of llama-bench measurements (`-o json` / `-o jsonl`) and their comparison with the
//! decode and prefill ceilings of the same scenario (docs/bounds.md §4, §5, §8). Reads the files it is
//! given and calls `core`; never the terminal, the TUI or the command line.
//!
//! Flow: `load(path)` → `Vec<BenchRow>`; `evaluate(&rows, &base_scenario, &BenchOptions)` →
//! `BenchReport`; `write_text` / `write_markdown` / `write_json` render it.
//! Depends on: compare, core, exit, infile, profile, report, sanitize.

pub mod eval;
pub mod json;
pub mod parse;
pub mod text;

pub use eval::{
    ArtifactCheck, BandwidthFigure, BenchOptions, BenchReport, CeilingFigure, DecodeComparison,
    ExceededCeiling, Note, PrefillComparison, RecordField, RowReport, evaluate,
};
pub use json::write_json;
pub use parse::{BenchError, BenchRow, FlashAttn, RowSource, TestKind, load, parse_str};
pub use text::{headline, write_markdown, write_text};
