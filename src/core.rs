//! The bounds engine: every formula of docs/bounds.md, once. Pure arithmetic: no I/O, no UI,
//! no serialization, no imports from other top-level modules.
//! Depends on: nothing.

pub mod arch;
pub mod cache;
pub mod claim;
pub mod decode;
pub mod edit;
pub mod evaluate;
pub mod gpu_layers;
pub mod kv;
pub mod mlx;
pub mod model;
pub mod overflow;
pub mod placement;
pub mod plan;
pub mod roofline;
pub mod runtime;
pub mod scenario;
pub mod shape_check;
pub mod split;
pub mod tiers;
pub mod units;
pub mod weights;

pub use evaluate::{ClaimCheck, FitVerdict, Report, Warning, check_claim, evaluate};
pub use scenario::Scenario;
