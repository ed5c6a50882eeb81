//! The CLI's hooks for safetensors / MLX-LM (`report --model-dir`, `inspect DIR`), kept out
//! of `cli.rs` so that file only calls them. Errors are one-line messages of bad input.

use crate::build::ScenarioOptions;
use crate::mlx_report::{MachineFigures, MlxOptions};
use crate::profile::Catalog;
use std::io::Write;
use std::path::Path;

/// The machine when `--machine` is not given: the article's (SPEC §7).
pub const DEFAULT_MACHINE: &str = "macbook-pro-m4-pro-48gb";
/// The context when `--context` is not given, tokens (the article's).
pub const DEFAULT_CONTEXT: u64 = 32_768;

/// A one-line message for bad input (the CLI exits with its bad-input code).
fn bad(e: impl std::fmt::Display) -> String {
    e.to_string().replace('\n', " ")
}

/// A folder, or a file ending in `.safetensors`: read as a safetensors model.
pub fn is_safetensors(p: &Path) -> bool {
    p.is_dir() || p.extension().is_some_and(|e| e == "safetensors")
}

/// `inspect DIR`.
pub fn inspect(p: &Path, out: &mut impl Write) -> Result<i32, String> {
    crate::mlx_report::write_inspect(p, out).map_err(bad)?;
    Ok(0)
}

/// `report --model-dir DIR`.
pub fn report(
    cat: &Catalog,
    o: &ScenarioOptions,
    mlx: &MlxOptions,
    out: &mut impl Write,
) -> Result<i32, String> {
    let id = o.machine.as_deref().unwrap_or(DEFAULT_MACHINE);
    let m = crate::profile::load::machine(&cat.machine(id).map_err(bad)?);
    let tier = m
        .tiers
        .first()
        .ok_or_else(|| bad(format!("machine \"{id}\" has no memory tier")))?;
    let mut fig = MachineFigures {
        name: m.name.clone(),
        capacity: tier.capacity.value,
        bandwidth: tier.headline_bandwidth().value.0,
        bandwidth_provenance: tier.headline_bandwidth().provenance.label(),
    };
    if let Some(s) = &o.memory {
        fig.capacity = crate::core::units::parse_bytes(s)
            .map_err(|e| bad(format!("--memory \"{s}\": {e}")))?;
    }
    if let Some(s) = &o.bandwidth {
        fig.bandwidth = crate::core::units::parse_bandwidth(s)
            .map_err(|e| bad(format!("--bandwidth \"{s}\": {e}")))?
            .0;
        fig.bandwidth_provenance = "user";
    }
    let context = o.context.unwrap_or(DEFAULT_CONTEXT);
    crate::mlx_report::write_report(mlx, context, &fig, out).map_err(bad)?;
    Ok(0)
}
