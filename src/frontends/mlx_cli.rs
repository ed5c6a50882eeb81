//! The CLI's hooks for safetensors / MLX-LM (`report --model-dir`, `inspect DIR`), kept out
//! of `cli.rs` so that file only calls them. Errors are one-line messages of bad input.
//! Depends on: build, compare, core, mlx_report, profile, remote, report, safetensors, workspace.

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

/// A folder holding config.json or safetensors files, or a file ending in `.safetensors`:
/// read as a safetensors model.
pub fn is_safetensors(p: &Path) -> bool {
    crate::remote::is_local_safetensors(p)
}

/// `inspect NAME` of a remote source that turned out to be a safetensors model alone (an MLX
/// repository): its tensors, from the headers already read.
pub fn inspect_model(m: &crate::safetensors::Model, out: &mut impl Write) -> Result<i32, String> {
    crate::mlx_report::write_inspect_model(m, out).map_err(bad)?;
    Ok(0)
}

/// `inspect DIR`.
pub fn inspect(p: &Path, out: &mut impl Write) -> Result<i32, String> {
    crate::mlx_report::write_inspect(p, out).map_err(bad)?;
    Ok(0)
}

/// `report --model-dir DIR` as text.
pub fn report(
    cat: &Catalog,
    o: &ScenarioOptions,
    mlx: &MlxOptions,
    out: &mut impl Write,
) -> Result<i32, String> {
    report_as(cat, o, mlx, crate::report::Format::Text, out)
}

/// The machine figures of the scenario options (`--machine`, `--memory`, `--bandwidth`),
/// with the working set its profile records (`mlx_report::machine_working_set`).
pub fn machine_figures(cat: &Catalog, o: &ScenarioOptions) -> Result<MachineFigures, String> {
    let id = o.machine.as_deref().unwrap_or(DEFAULT_MACHINE);
    let m = crate::profile::load::machine(&cat.machine(id).map_err(bad)?);
    let mut fig = MachineFigures::of(&m)
        .ok_or_else(|| bad(format!("machine \"{id}\" has no memory tier")))?;
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
    Ok(fig)
}

/// `report --model-dir DIR [--format …]`.
pub fn report_as(
    cat: &Catalog,
    o: &ScenarioOptions,
    mlx: &MlxOptions,
    format: crate::report::Format,
    out: &mut impl Write,
) -> Result<i32, String> {
    let fig = machine_figures(cat, o)?;
    let context = o.context.unwrap_or(DEFAULT_CONTEXT);
    // MLX-LM's flags are scenario flags: checked and copied to the plan's options.
    let mut mlx = mlx.clone();
    mlx.run = o.mlx_lm().map_err(bad)?;
    if o.runtime().map_err(bad)? == Some(crate::core::mlx::Runtime::LlamaCpp) && o.gguf.is_none() {
        return Err(bad(
            "--runtime: llama.cpp needs a GGUF: the open model is a safetensors model for MLX-LM (give --gguf a GGUF of it)",
        ));
    }
    // `--gguf` beside `--model-dir`: llama.cpp's report of the same model on the same machine
    // at the same context, side by side with MLX-LM's plan.
    let llama = match &o.gguf {
        Some(g) => {
            let mut lo = o.clone();
            lo.context = Some(context);
            // llama.cpp's side: MLX-LM's flags are not its.
            (
                lo.kv_bits,
                lo.kv_group_size,
                lo.quantized_kv_start,
                lo.max_kv_size,
            ) = (None, None, None, None);
            lo.runtime = None;
            lo.machine = Some(o.machine.clone().unwrap_or_else(|| DEFAULT_MACHINE.into()));
            let scen = crate::workspace::scenario(cat, &lo).map_err(bad)?;
            Some((
                crate::compare::evaluation(&scen).map_err(bad)?,
                g.display().to_string(),
            ))
        }
        None => None,
    };
    let refused = crate::mlx_report::write_report_checked(
        &mlx,
        context,
        &fig,
        llama.as_ref().map(|(r, m)| (r, m.as_str())),
        format,
        out,
    )
    .map_err(bad)?;
    // A run MLX-LM refuses: the figures are written, the exit is its refusal (bad input),
    // as with a configuration llama.cpp refuses.
    match refused {
        Some(why) => {
            out.flush().map_err(bad)?;
            Err(bad(why))
        }
        None => Ok(0),
    }
}
