//! Machine, model and scenario profiles: TOML files (kebab-case, strict), the embedded
//! presets, the user's profile directory, and conversion to core types.
//! Depends on: core, infile.

pub mod builtin;
pub mod file;
pub mod load;
pub mod save;

pub use load::{Catalog, Entry, Origin, ProfileError};
