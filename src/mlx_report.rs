//! The MLX-LM plan of a safetensors model folder (`llmbound report --model-dir DIR`) and its
//! tensor list (`llmbound inspect DIR`): W, inventory, MLX-LM's cache at the context, the
//! prefill activation estimate, the working-set rule and the decode ceilings, with the
//! `mlx_lm.generate` line that runs it. Reads through `safetensors`, computes in
//! `core::mlx`, writes to `impl Write`.

use crate::core::mlx::{self, ActivationShape, KvQuant, MlxRun, WorkingSet};
use crate::core::units::{fmt_both, fmt_rate, group_digits};
use crate::core::weights::{ExpertCount, inventory_read_bytes};
use crate::safetensors::{self, MlxInventory, Model, layout};
use std::io::{self, Write};
use std::path::Path;

/// MLX-LM's options for `report --model-dir`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct MlxOptions {
    /// A safetensors model folder (config.json + model*.safetensors, an MLX or Hugging Face
    /// model): report the MLX-LM plan instead of llama.cpp's.
    #[arg(long = "model-dir", value_name = "DIR")]
    pub model_dir: Option<std::path::PathBuf>,
    /// MLX-LM `--kv-bits` (quantized KV cache from --quantized-kv-start tokens).
    #[arg(long = "kv-bits")]
    pub kv_bits: Option<u64>,
    /// MLX-LM `--kv-group-size`.
    #[arg(long = "kv-group-size", default_value_t = mlx::KV_GROUP_SIZE)]
    pub kv_group_size: u64,
    /// MLX-LM `--quantized-kv-start`, tokens.
    #[arg(long = "quantized-kv-start", default_value_t = mlx::QUANTIZED_KV_START)]
    pub quantized_kv_start: u64,
    /// MLX-LM `--max-kv-size`, tokens (a RotatingKVCache on models without their own caches).
    #[arg(long = "max-kv-size")]
    pub max_kv_size: Option<u64>,
    /// Metal's recommendedMaxWorkingSetSize on the Mac (MLX-LM's wired limit), bytes or
    /// "36 GiB": enables the working-set verdict.
    #[arg(long = "working-set", value_name = "BYTES")]
    pub working_set: Option<String>,
}

/// What the report needs of the machine.
#[derive(Debug, Clone)]
pub struct MachineFigures {
    /// Display name.
    pub name: String,
    /// Memory capacity, bytes.
    pub capacity: u64,
    /// Bandwidth, bytes/s.
    pub bandwidth: f64,
    /// Provenance label of the bandwidth.
    pub bandwidth_provenance: &'static str,
}

/// Why the MLX plan could not be made.
#[derive(Debug, thiserror::Error)]
pub enum MlxReportError {
    /// Reading the folder.
    #[error(transparent)]
    Read(#[from] safetensors::SafetensorsError),
    /// No layout for this model.
    #[error("{dir}: {source}")]
    Layout {
        /// The folder.
        dir: String,
        /// Why.
        source: layout::LayoutError,
    },
    /// A bad option.
    #[error("{0}")]
    Option(String),
}

fn shape_of(model: &Model) -> ActivationShape {
    let c = model.config.as_ref();
    let u = |k: &str| c.and_then(|c| c.u64(k)).unwrap_or(0);
    let experts = u("num_experts_per_tok") * u("moe_intermediate_size")
        + u("shared_expert_intermediate_size");
    ActivationShape {
        heads: u("num_attention_heads"),
        hidden: u("hidden_size"),
        ffn: u("intermediate_size").max(experts),
        recurrent_state: u("linear_num_value_heads")
            * u("linear_value_head_dim")
            * u("linear_key_head_dim")
            * 4,
    }
}

/// The `mlx_lm.generate` line for the options.
pub fn launch_line(dir: &Path, context: u64, o: &MlxOptions) -> String {
    let _ = context;
    let mut s = format!(
        "mlx_lm.generate --model {} --prompt -",
        crate::sanitize::path(dir)
    );
    if let Some(m) = o.max_kv_size {
        s.push_str(&format!(" --max-kv-size {m}"));
    }
    if let Some(b) = o.kv_bits {
        s.push_str(&format!(
            " --kv-bits {b} --kv-group-size {} --quantized-kv-start {}",
            o.kv_group_size, o.quantized_kv_start
        ));
    }
    s
}

/// Write the MLX-LM plan of `o.model_dir` for a prompt of `context` tokens (the prefill of
/// the whole context sets the largest activation peak) on `machine`.
pub fn write_report(
    o: &MlxOptions,
    context: u64,
    machine: &MachineFigures,
    out: &mut impl Write,
) -> Result<(), MlxReportError> {
    let dir = o
        .model_dir
        .as_deref()
        .ok_or_else(|| MlxReportError::Option("no --model-dir".into()))?;
    let model = safetensors::open_dir(dir)?;
    let inv = MlxInventory::of(&model);
    let lay = layout::layout_of(&model).map_err(|source| MlxReportError::Layout {
        dir: crate::sanitize::path(dir),
        source,
    })?;
    let working_set = match &o.working_set {
        Some(s) => Some(
            crate::core::units::parse_bytes(s)
                .map_err(|e| MlxReportError::Option(format!("--working-set \"{s}\": {e}")))?,
        ),
        None => None,
    };
    let w = model.file_bytes();
    let core_inv = inv.to_core();
    let w_read = inventory_read_bytes(&core_inv, inv.experts, 1, ExpertCount::Expected);
    let mut run = MlxRun::prompt(context.max(1));
    run.max_kv_size = o.max_kv_size;
    run.kv_quant = o.kv_bits.map(|bits| KvQuant {
        bits,
        group_size: o.kv_group_size,
        start: o.quantized_kv_start,
    });
    let io = |e: io::Error| MlxReportError::Option(e.to_string());
    let cfg_type = model.config.as_ref().map_or("?", |c| c.model_type.as_str());
    writeln!(
        out,
        "MLX-LM plan (models mlx-lm {}, mlx {})",
        mlx::MLX_LM_VERSION,
        mlx::MLX_VERSION
    )
    .map_err(io)?;
    writeln!(out, "  model folder   {}", crate::sanitize::path(dir)).map_err(io)?;
    writeln!(
        out,
        "  model type     {} ({} layers)",
        crate::sanitize::text(cfg_type),
        lay.layers.len()
    )
    .map_err(io)?;
    writeln!(
        out,
        "  W (files)      {} bytes = {} in {} file(s)",
        group_digits(w as u128),
        fmt_both(w),
        model.shards.len()
    )
    .map_err(io)?;
    let mut enc: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
    for r in &inv.rows {
        let e = enc.entry(r.encoding.as_str()).or_default();
        e.0 += r.bytes;
        e.1 += r.elements;
    }
    for (k, (b, n)) in &enc {
        let bpw = if *n > 0 {
            8.0 * *b as f64 / *n as f64
        } else {
            0.0
        };
        writeln!(
            out,
            "    {:<22} {:>16} bytes  {:.3} bits/weight",
            crate::sanitize::text(k),
            group_digits(*b as u128),
            bpw
        )
        .map_err(io)?;
    }
    writeln!(
        out,
        "  read per token {} bytes (inventory: packed weights + scales/biases{})",
        group_digits(w_read as u128),
        match inv.experts {
            Some((n, k)) => format!(", {k}/{n} routed experts"),
            None => String::new(),
        }
    )
    .map_err(io)?;
    let classes = |s: &mlx::CacheState| {
        let mut m: std::collections::BTreeMap<&str, usize> = Default::default();
        for l in &s.layers {
            *m.entry(l.class.name()).or_default() += 1;
        }
        m.iter()
            .map(|(k, v)| format!("{v} × {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match mlx::simulate(&lay, &run) {
        Err(e) => {
            writeln!(out, "  cache          refused by MLX-LM: {}", e.message()).map_err(io)?;
        }
        Ok(state) => {
            let k = state.bytes();
            writeln!(
                out,
                "  cache at {}    {} bytes = {} ({})",
                group_digits(context as u128),
                group_digits(k as u128),
                fmt_both(k),
                classes(&state)
            )
            .map_err(io)?;
            if state.max_kv_size_ignored {
                writeln!(out, "                 --max-kv-size has no effect: this model builds its own caches (make_cache)").map_err(io)?;
            }
            let act = mlx::prefill_activation_estimate(&shape_of(&model), &run);
            let total = w.saturating_add(k).saturating_add(act);
            writeln!(
                out,
                "  activations    {} bytes (estimate: the largest model call's f32 attention scores and rows, as MLX's CPU backend holds them; Metal's fused attention holds less)",
                group_digits(act as u128)
            )
            .map_err(io)?;
            writeln!(
                out,
                "  W + cache + activations  {} bytes = {}",
                group_digits(total as u128),
                fmt_both(total)
            )
            .map_err(io)?;
            let headroom = machine.capacity as i128 - total as i128;
            writeln!(
                out,
                "  {}: {} bytes capacity, headroom {} bytes",
                crate::sanitize::text(&machine.name),
                group_digits(machine.capacity as u128),
                crate::core::units::group_digits_signed(headroom)
            )
            .map_err(io)?;
            match working_set {
                Some(rec) => {
                    let c = mlx::working_set(w, total, rec);
                    let v = match c.verdict {
                        WorkingSet::Wired => "within the wired limit: resident",
                        WorkingSet::Pages => {
                            "above the wired limit, within MLX's memory limit: loads, then pages on every token"
                        }
                        WorkingSet::OverLimit => "above MLX's memory limit (1.5 × the working set)",
                    };
                    writeln!(
                        out,
                        "  working set    {} (wired limit {} bytes, memory limit {} bytes){}",
                        v,
                        group_digits(c.wired_limit as u128),
                        group_digits(c.memory_limit as u128),
                        if c.warns {
                            "; MLX-LM warns: weights above 0.9 × the recommended size"
                        } else {
                            ""
                        }
                    )
                    .map_err(io)?;
                }
                None => {
                    writeln!(out, "  working set    not checked: give --working-set (Metal's recommendedMaxWorkingSetSize)").map_err(io)?;
                }
            }
            let short = mlx::decode_ceiling(machine.bandwidth, w_read, 0);
            let long = mlx::decode_ceiling(machine.bandwidth, w_read, state.read_bytes());
            writeln!(
                out,
                "  decode ceiling {} tokens/s short context, {} tokens/s at {} tokens (cache read {} bytes in its stored width; {} bandwidth)",
                fmt_rate(short),
                fmt_rate(long),
                group_digits(context as u128),
                group_digits(state.read_bytes() as u128),
                machine.bandwidth_provenance
            )
            .map_err(io)?;
        }
    }
    for wrn in model.warnings.iter().chain(&inv.warnings) {
        writeln!(out, "  note: {}", crate::sanitize::text(wrn)).map_err(io)?;
    }
    writeln!(out, "  launch         {}", launch_line(dir, context, o)).map_err(io)?;
    Ok(())
}

/// `inspect DIR`: every logical tensor of a safetensors model.
pub fn write_inspect(dir: &Path, out: &mut impl Write) -> Result<(), MlxReportError> {
    let model = safetensors::open_dir(dir)?;
    let inv = MlxInventory::of(&model);
    let io = |e: io::Error| MlxReportError::Option(e.to_string());
    writeln!(
        out,
        "{}: {} file(s), {} bytes = {}, {} tensors",
        crate::sanitize::path(dir),
        model.shards.len(),
        group_digits(model.file_bytes() as u128),
        fmt_both(model.file_bytes()),
        inv.rows.len()
    )
    .map_err(io)?;
    writeln!(
        out,
        "{:<56} {:<22} {:>22} {:>14} {:>9}  role",
        "tensor", "encoding", "shape", "bytes", "bits/w"
    )
    .map_err(io)?;
    for r in &inv.rows {
        let shape = r
            .shape
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("×");
        writeln!(
            out,
            "{:<56} {:<22} {:>22} {:>14} {:>9}  {}",
            crate::sanitize::text(&r.name),
            crate::sanitize::text(&r.encoding),
            shape,
            group_digits(r.bytes as u128),
            r.bits_per_weight.map_or("?".into(), |b| format!("{b:.3}")),
            r.role
        )
        .map_err(io)?;
    }
    for wrn in model.warnings.iter().chain(&inv.warnings) {
        writeln!(out, "note: {}", crate::sanitize::text(wrn)).map_err(io)?;
    }
    Ok(())
}
