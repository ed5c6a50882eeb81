//! The bounds engine: every formula of SPEC.md, once. Pure arithmetic: no I/O, no UI,
//! no serialization, no imports from other top-level modules.

pub mod model;
pub mod units;
pub mod weights;
