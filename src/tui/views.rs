//! The full-screen views (tensor inventory, metadata, compare machines) and the help overlay.

pub mod compare;
pub mod help;
pub mod metadata;
pub mod tensors;
