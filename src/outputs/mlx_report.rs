//! The MLX-LM plan of a safetensors model folder (`llmbound report --model-dir DIR`) and its
//! tensor list (`llmbound inspect DIR`): W, inventory, MLX-LM's cache at the context, the
//! prefill activation estimate, the working-set rule and the decode ceilings, with the
//! `mlx_lm.generate` line that runs it. Reads through `safetensors`, computes in
//! `core::mlx`, writes to `impl Write`.
//! Depends on: core, report, safetensors, sanitize, workspace.

use crate::core::mlx::{self, MlxPlan, PlanLimit, RuntimeFigures, WorkingSet};
use crate::core::units::{fmt_both, fmt_rate, group_digits};
use crate::report::Format;
pub use crate::safetensors::plan::{
    MachineFigures, MlxArtifact, MlxSettings, SEARCH_CAP, machine_working_set, plan,
};
use crate::safetensors::{self, MlxInventory};
use std::io::{self, Write};
use std::path::Path;

/// MLX-LM's options for `report --model-dir`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct MlxOptions {
    /// A safetensors model folder (config.json + model*.safetensors, an MLX or Hugging Face
    /// model): report the MLX-LM plan instead of llama.cpp's.
    #[arg(long = "model-dir", value_name = "DIR")]
    pub model_dir: Option<std::path::PathBuf>,
    /// MLX-LM's run settings: `--kv-bits`, `--kv-group-size`, `--quantized-kv-start` and
    /// `--max-kv-size`, scenario flags (`build::ScenarioOptions::mlx_lm`) the caller copies
    /// here.
    #[arg(skip)]
    pub run: mlx::MlxLmSettings,
    /// Metal's recommendedMaxWorkingSetSize on the Mac (MLX-LM's wired limit), bytes or
    /// "36 GiB": enables the working-set verdict.
    #[arg(long = "working-set", value_name = "BYTES")]
    pub working_set: Option<String>,
}

/// Why the MLX plan could not be made.
#[derive(Debug, thiserror::Error)]
pub enum MlxReportError {
    /// Reading the folder.
    #[error(transparent)]
    Read(#[from] safetensors::SafetensorsError),
    /// No artifact: unreadable or without a cache layout.
    #[error(transparent)]
    Artifact(#[from] safetensors::plan::ArtifactError),
    /// The model could not be opened (one line naming it).
    #[error("{0}")]
    Open(String),
    /// A bad option.
    #[error("{0}")]
    Option(String),
}

impl MlxOptions {
    /// The settings the options give on `machine` (`--working-set` before the machine's
    /// figure; a bad `--working-set` is a one-line error).
    pub fn settings(&self, machine: &MachineFigures) -> Result<MlxSettings, MlxReportError> {
        let working_set = match &self.working_set {
            Some(s) => Some(
                crate::core::units::parse_bytes(s)
                    .map_err(|e| MlxReportError::Option(format!("--working-set \"{s}\": {e}")))?,
            ),
            None => None,
        };
        Ok(MlxSettings {
            kv_quant: self.run.kv_quant(),
            max_kv_size: self.run.max_kv_size,
            working_set: working_set.or(machine.working_set),
            working_set_provenance: match working_set {
                Some(_) => Some("user"),
                None => machine.working_set_provenance,
            },
        })
    }
}

/// The `mlx_lm.generate` line for the settings.
pub fn launch_line_for(dir: &Path, s: &MlxSettings) -> String {
    let mut line = format!(
        "mlx_lm.generate --model {} --prompt -",
        crate::sanitize::path(dir)
    );
    if let Some(m) = s.max_kv_size {
        line.push_str(&format!(" --max-kv-size {m}"));
    }
    if let Some(q) = s.kv_quant {
        line.push_str(&format!(
            " --kv-bits {} --kv-group-size {} --quantized-kv-start {}",
            q.bits, q.group_size, q.start
        ));
    }
    line
}

/// The `mlx_lm.generate` line for the options.
pub fn launch_line(dir: &Path, context: u64, o: &MlxOptions) -> String {
    let _ = context;
    let s = MlxSettings {
        kv_quant: o.run.kv_quant(),
        max_kv_size: o.run.max_kv_size,
        ..MlxSettings::default()
    };
    launch_line_for(dir, &s)
}

/// Everything one MLX-LM report shows: the artifact, the machine, the settings and the plan.
#[derive(Debug, Clone)]
pub struct MlxReport<'a> {
    /// The artifact.
    pub artifact: &'a MlxArtifact,
    /// The machine.
    pub machine: &'a MachineFigures,
    /// The settings.
    pub settings: MlxSettings,
    /// The plan.
    pub plan: MlxPlan,
    /// llama.cpp's figures for the same model on the same machine at the same context, and
    /// its launch line, for the side-by-side comparison (`--gguf` beside `--model-dir`).
    pub llama_cpp: Option<(RuntimeFigures, String)>,
}

impl<'a> MlxReport<'a> {
    /// The plan of `artifact` on `machine` at `context`.
    pub fn new(
        artifact: &'a MlxArtifact,
        machine: &'a MachineFigures,
        settings: MlxSettings,
        context: u64,
    ) -> MlxReport<'a> {
        let plan = plan(artifact, &settings, context, machine);
        MlxReport {
            artifact,
            machine,
            settings,
            plan,
            llama_cpp: None,
        }
    }
}

/// Layers per cache class, `2 × KVCache, 1 × ArraysCache`.
fn classes(s: &mlx::CacheState) -> String {
    let mut m: std::collections::BTreeMap<&str, usize> = Default::default();
    for l in &s.layers {
        *m.entry(l.class.name()).or_default() += 1;
    }
    m.iter()
        .map(|(k, v)| format!("{v} × {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn verdict_words(v: WorkingSet) -> &'static str {
    match v {
        WorkingSet::Wired => "within the wired limit: resident",
        WorkingSet::Pages => {
            "above the wired limit, within MLX's memory limit: loads, then pages on every token"
        }
        WorkingSet::OverLimit => "above MLX's memory limit (1.5 × the working set)",
    }
}

fn verdict_key(v: WorkingSet) -> &'static str {
    match v {
        WorkingSet::Wired => "wired",
        WorkingSet::Pages => "pages",
        WorkingSet::OverLimit => "over_limit",
    }
}

fn limit_words(l: PlanLimit) -> String {
    match l {
        PlanLimit::WiredLimit(b) => format!(
            "the wired limit ({} bytes, Metal's working set)",
            group_digits(b as u128)
        ),
        PlanLimit::Capacity(b) => format!(
            "the memory capacity ({} bytes; the working set is not known)",
            group_digits(b as u128)
        ),
    }
}

/// The largest context as words: "12,288 tokens", "131,072 tokens (the native context)".
fn largest_words(r: &MlxReport<'_>) -> String {
    largest_words_of(r.artifact, &r.plan)
}

fn largest_words_of(art: &MlxArtifact, p: &MlxPlan) -> String {
    match p.largest_context {
        None => "none: not even one token fits".into(),
        Some(n) => format!(
            "{} tokens{}",
            group_digits(n as u128),
            if !p.largest_is_search_max {
                ""
            } else if art.native_context().is_some() {
                " (the native context)"
            } else {
                " (the search's end; the config gives no native context)"
            }
        ),
    }
}

/// Write the MLX-LM plan of `o.model_dir` for a prompt of `context` tokens (the prefill of
/// the whole context sets the largest activation peak) on `machine`, as text.
pub fn write_report(
    o: &MlxOptions,
    context: u64,
    machine: &MachineFigures,
    out: &mut impl Write,
) -> Result<(), MlxReportError> {
    write_report_as(o, context, machine, Format::Text, out)
}

/// [`write_report`] in any of the report formats.
pub fn write_report_as(
    o: &MlxOptions,
    context: u64,
    machine: &MachineFigures,
    format: Format,
    out: &mut impl Write,
) -> Result<(), MlxReportError> {
    write_report_beside(o, context, machine, None, format, out)
}

/// [`write_report_as`] with llama.cpp's report of the same model on the same machine at the
/// same context beside it (`llama`: the report and the model as named), side by side.
pub fn write_report_beside(
    o: &MlxOptions,
    context: u64,
    machine: &MachineFigures,
    llama: Option<(&crate::core::Report, &str)>,
    format: Format,
    out: &mut impl Write,
) -> Result<(), MlxReportError> {
    write_report_checked(o, context, machine, llama, format, out).map(|_| ())
}

/// [`write_report_beside`], returning MLX-LM's refusal of the run when it refuses it (the
/// report is written either way: the CLI then exits with the refusal, as it does with
/// llama.cpp's).
pub fn write_report_checked(
    o: &MlxOptions,
    context: u64,
    machine: &MachineFigures,
    llama: Option<(&crate::core::Report, &str)>,
    format: Format,
    out: &mut impl Write,
) -> Result<Option<String>, MlxReportError> {
    let dir = o
        .model_dir
        .as_deref()
        .ok_or_else(|| MlxReportError::Option("no --model-dir".into()))?;
    let settings = o.settings(machine)?;
    let art = crate::workspace::open::read_mlx(dir).map_err(MlxReportError::Open)?;
    let mut r = MlxReport::new(&art, machine, settings, context);
    r.llama_cpp = llama.map(|(rep, model)| {
        (
            mlx::llama_cpp_figures(rep),
            crate::report::llama_cpp_command(rep, model),
        )
    });
    let io = |e: io::Error| MlxReportError::Option(e.to_string());
    match format {
        Format::Text => write_text(&r, out).map_err(io)?,
        Format::Markdown => write_markdown(&r, out).map_err(io)?,
        Format::Json => {
            let v = to_json(&r);
            serde_json::to_writer_pretty(&mut *out, &v)
                .map_err(|e| MlxReportError::Option(e.to_string()))?;
            writeln!(out).map_err(io)?
        }
    }
    Ok(r.plan
        .memory
        .as_ref()
        .err()
        .map(|e| format!("MLX-LM refuses this run: {}", e.message())))
}

/// The text report.
pub fn write_text(r: &MlxReport<'_>, out: &mut impl Write) -> io::Result<()> {
    let art = r.artifact;
    let p = &r.plan;
    writeln!(
        out,
        "MLX-LM plan (models mlx-lm {}, mlx {})",
        mlx::MLX_LM_VERSION,
        mlx::MLX_VERSION
    )?;
    writeln!(
        out,
        "  runtime        MLX-LM (the figures below are MLX-LM's, not llama.cpp's)"
    )?;
    writeln!(out, "  model folder   {}", crate::sanitize::path(&art.dir))?;
    writeln!(
        out,
        "  model type     {} ({} layers)",
        crate::sanitize::text(art.model_type()),
        art.layout.layers.len()
    )?;
    let w = p.weights_bytes;
    writeln!(
        out,
        "  W (files)      {} bytes = {} in {} file(s)",
        group_digits(w as u128),
        fmt_both(w),
        art.model.shards.len()
    )?;
    for (k, b, n) in art.encodings() {
        let bpw = crate::core::units::bits_per_weight(b, n).unwrap_or(0.0);
        writeln!(
            out,
            "    {:<22} {:>16} bytes  {:.3} bits/weight",
            crate::sanitize::text(&k),
            group_digits(b as u128),
            bpw
        )?;
    }
    writeln!(
        out,
        "  read per token {} bytes (inventory: packed weights + scales/biases{})",
        group_digits(p.weights_read_bytes as u128),
        match art.inventory.experts {
            Some((n, k)) => format!(", {k}/{n} routed experts"),
            None => String::new(),
        }
    )?;
    match &p.memory {
        Err(e) => {
            writeln!(
                out,
                "  cache          refused by MLX-LM: {}{}",
                e.message(),
                refusal_hint(e)
            )?;
        }
        Ok(m) => {
            let k = m.cache.bytes();
            writeln!(
                out,
                "  cache at {}    {} bytes = {} ({})",
                group_digits(p.context as u128),
                group_digits(k as u128),
                fmt_both(k),
                classes(&m.cache)
            )?;
            if m.cache.max_kv_size_ignored {
                writeln!(
                    out,
                    "                 --max-kv-size has no effect: this model builds its own caches (make_cache)"
                )?;
            }
            writeln!(
                out,
                "  activations    {} bytes (estimate: the largest model call's f32 attention scores and rows, as MLX's CPU backend holds them; Metal's fused attention holds less)",
                group_digits(m.activations as u128)
            )?;
            writeln!(
                out,
                "  W + cache + activations  {} bytes = {}",
                group_digits(m.total as u128),
                fmt_both(m.total)
            )?;
            writeln!(
                out,
                "  {}: {} bytes capacity; headroom {} bytes within {}",
                crate::sanitize::text(&r.machine.name),
                group_digits(r.machine.capacity as u128),
                crate::core::units::group_digits_signed(p.headroom.unwrap_or(0)),
                limit_words(p.limit)
            )?;
            match &p.working_set {
                Some(c) => {
                    writeln!(
                        out,
                        "  working set    {} (wired limit {} bytes, memory limit {} bytes; {}){}",
                        verdict_words(c.verdict),
                        group_digits(c.wired_limit as u128),
                        group_digits(c.memory_limit as u128),
                        r.settings.working_set_provenance.unwrap_or("user"),
                        if c.warns {
                            "; MLX-LM warns: weights above 0.9 × the recommended size"
                        } else {
                            ""
                        }
                    )?;
                }
                None => {
                    writeln!(
                        out,
                        "  working set    not checked: give --working-set (Metal's recommendedMaxWorkingSetSize)"
                    )?;
                }
            }
            writeln!(
                out,
                "  largest context {} (W + cache + activations within {})",
                largest_words(r),
                limit_words(p.limit)
            )?;
            writeln!(
                out,
                "  decode ceiling {} tokens/s short context, {} tokens/s at {} tokens (cache read {} bytes in its stored width; {} bandwidth)",
                fmt_rate(p.decode_short),
                fmt_rate(p.decode_at_context.unwrap_or(p.decode_short)),
                group_digits(p.context as u128),
                group_digits(m.cache.read_bytes() as u128),
                r.machine.bandwidth_provenance
            )?;
        }
    }
    for wrn in art.warnings() {
        writeln!(out, "  note: {}", crate::sanitize::text(&wrn))?;
    }
    writeln!(
        out,
        "  launch         {}",
        launch_line_for(&art.dir, &r.settings)
    )?;
    if let Some((l, cmd)) = &r.llama_cpp {
        writeln!(
            out,
            "\nllama.cpp vs MLX-LM on {} at {} tokens",
            crate::sanitize::text(&r.machine.name),
            group_digits(p.context as u128)
        )?;
        let rows = side_by_side_rows(l, &mlx::mlx_lm_figures(p), p.context);
        for (k, a, b) in &rows {
            writeln!(out, "  {k:<26} {a:>24}  {b:>24}")?;
        }
        writeln!(out, "  llama.cpp launch  {cmd}")?;
        writeln!(
            out,
            "  MLX-LM launch     {}",
            launch_line_for(&art.dir, &r.settings)
        )?;
    }
    Ok(())
}

fn bytes_cell(b: Option<u64>) -> String {
    b.map_or_else(
        || "refused".into(),
        |b| format!("{} B", group_digits(b as u128)),
    )
}

fn rate_cell(v: Option<f64>) -> String {
    v.map_or_else(|| "refused".into(), |v| format!("{} tokens/s", fmt_rate(v)))
}

/// The rows of the side-by-side comparison: (what, llama.cpp, MLX-LM), the first row the
/// header. Every throughput is a ceiling.
pub fn side_by_side_rows(
    l: &RuntimeFigures,
    m: &RuntimeFigures,
    context: u64,
) -> Vec<(String, String, String)> {
    let n = group_digits(context as u128);
    let both = |f: &dyn Fn(&RuntimeFigures) -> String| (f(l), f(m));
    let mut rows = vec![(
        String::new(),
        l.runtime.name().to_string(),
        m.runtime.name().to_string(),
    )];
    let mut push = |k: String, (a, b): (String, String)| rows.push((k, a, b));
    push(
        "W (files)".into(),
        both(&|f| bytes_cell(Some(f.weights_bytes))),
    );
    push(
        format!("cache at {n}"),
        both(&|f| bytes_cell(f.cache_bytes)),
    );
    push(
        format!("total at {n}"),
        both(&|f| bytes_cell(f.total_bytes)),
    );
    push(
        "fits".into(),
        both(&|f| if f.fits { "yes" } else { "no" }.into()),
    );
    push(
        "largest context".into(),
        both(&|f| {
            f.largest_context.map_or_else(
                || "none".into(),
                |c| format!("{} tokens", group_digits(c as u128)),
            )
        }),
    );
    push(
        "decode ceiling, short".into(),
        both(&|f| rate_cell(Some(f.decode_short))),
    );
    push(
        format!("decode ceiling at {n}"),
        both(&|f| rate_cell(f.decode_at_context)),
    );
    rows
}

fn figures_json(f: &RuntimeFigures) -> serde_json::Value {
    serde_json::json!({
        "runtime": f.runtime.name(),
        "weights_bytes": f.weights_bytes,
        "cache_bytes": f.cache_bytes,
        "total_bytes": f.total_bytes,
        "fits": f.fits,
        "largest_context_tokens": f.largest_context,
        "decode_short_context": { "tokens_per_second": rate(f.decode_short), "label": "ceiling" },
        "decode_at_context": f.decode_at_context.map(|v| serde_json::json!({ "tokens_per_second": rate(v), "label": "ceiling" })),
    })
}

/// Escape `|` for a markdown table cell.
fn cell(s: &str) -> String {
    crate::sanitize::text(s).replace('|', "\\|")
}

/// The markdown report.
pub fn write_markdown(r: &MlxReport<'_>, out: &mut impl Write) -> io::Result<()> {
    let art = r.artifact;
    let p = &r.plan;
    writeln!(
        out,
        "# MLX-LM plan: {}\n",
        cell(&crate::sanitize::path(&art.dir))
    )?;
    writeln!(
        out,
        "Runtime: **MLX-LM** (models mlx-lm {}, mlx {}); machine: {}; context {} tokens.\n",
        mlx::MLX_LM_VERSION,
        mlx::MLX_VERSION,
        cell(&r.machine.name),
        group_digits(p.context as u128)
    )?;
    writeln!(out, "| quantity | bytes | |")?;
    writeln!(out, "|---|---:|---|")?;
    writeln!(
        out,
        "| W (files) | {} | {}, {} file(s), {} |",
        group_digits(p.weights_bytes as u128),
        fmt_both(p.weights_bytes),
        art.model.shards.len(),
        cell(art.model_type())
    )?;
    for (k, b, n) in art.encodings() {
        let bpw = crate::core::units::bits_per_weight(b, n).unwrap_or(0.0);
        writeln!(
            out,
            "| · {} | {} | {:.3} bits/weight |",
            cell(&k),
            group_digits(b as u128),
            bpw
        )?;
    }
    writeln!(
        out,
        "| weights read per token | {} | inventory |",
        group_digits(p.weights_read_bytes as u128)
    )?;
    match &p.memory {
        Err(e) => writeln!(out, "| cache | refused | MLX-LM: {} |", cell(&e.message()))?,
        Ok(m) => {
            writeln!(
                out,
                "| cache at {} tokens | {} | {} |",
                group_digits(p.context as u128),
                group_digits(m.cache.bytes() as u128),
                cell(&classes(&m.cache))
            )?;
            writeln!(
                out,
                "| activations | {} | estimate (MLX's CPU backend) |",
                group_digits(m.activations as u128)
            )?;
            writeln!(
                out,
                "| W + cache + activations | {} | {} |",
                group_digits(m.total as u128),
                fmt_both(m.total)
            )?;
            writeln!(
                out,
                "| capacity | {} | headroom {} bytes within {} |",
                group_digits(r.machine.capacity as u128),
                crate::core::units::group_digits_signed(p.headroom.unwrap_or(0)),
                limit_words(p.limit)
            )?;
        }
    }
    writeln!(out)?;
    if let Some(c) = &p.working_set {
        writeln!(
            out,
            "- Working set: {} (wired limit {} bytes, memory limit {} bytes).",
            verdict_words(c.verdict),
            group_digits(c.wired_limit as u128),
            group_digits(c.memory_limit as u128)
        )?;
    } else if p.memory.is_ok() {
        writeln!(
            out,
            "- Working set: not checked (give `--working-set`, Metal's recommendedMaxWorkingSetSize)."
        )?;
    }
    if p.memory.is_ok() {
        writeln!(
            out,
            "- Largest context: {} (within {}).",
            largest_words(r),
            limit_words(p.limit)
        )?;
        writeln!(
            out,
            "- Decode ceiling: {} tokens/s short context, {} tokens/s at {} tokens ({} bandwidth).",
            fmt_rate(p.decode_short),
            fmt_rate(p.decode_at_context.unwrap_or(p.decode_short)),
            group_digits(p.context as u128),
            r.machine.bandwidth_provenance
        )?;
    }
    for wrn in art.warnings() {
        writeln!(out, "- Note: {}", cell(&wrn))?;
    }
    writeln!(
        out,
        "\n```sh\n{}\n```",
        launch_line_for(&art.dir, &r.settings)
    )?;
    if let Some((l, cmd)) = &r.llama_cpp {
        writeln!(
            out,
            "\n## llama.cpp vs MLX-LM on {} at {} tokens\n",
            cell(&r.machine.name),
            group_digits(p.context as u128)
        )?;
        let rows = side_by_side_rows(l, &mlx::mlx_lm_figures(p), p.context);
        for (i, (k, a, b)) in rows.iter().enumerate() {
            writeln!(out, "| {} | {} | {} |", cell(k), cell(a), cell(b))?;
            if i == 0 {
                writeln!(out, "|---|---:|---:|")?;
            }
        }
        writeln!(out, "\n```sh\n{cmd}\n```")?;
    }
    Ok(())
}

/// A rate for JSON: unrounded, `null` when not finite.
fn rate(v: f64) -> serde_json::Value {
    if v.is_finite() {
        serde_json::json!(v)
    } else {
        serde_json::Value::Null
    }
}

/// The JSON document (`"schema": "llmbound-mlx-report/1"`, docs/cli.md).
pub fn to_json(r: &MlxReport<'_>) -> serde_json::Value {
    use serde_json::json;
    let art = r.artifact;
    let p = &r.plan;
    let encodings: Vec<_> = art
        .encodings()
        .into_iter()
        .map(|(k, b, n)| {
            json!({
                "encoding": k,
                "bytes": b,
                "elements": n,
                "bits_per_weight": crate::core::units::bits_per_weight(b, n).map_or(serde_json::Value::Null, rate),
            })
        })
        .collect();
    let (cache, refused, memory) = match &p.memory {
        Err(e) => (
            serde_json::Value::Null,
            json!(e.message()),
            serde_json::Value::Null,
        ),
        Ok(m) => (
            json!({
                "bytes": m.cache.bytes(),
                "read_bytes": m.cache.read_bytes(),
                "max_kv_size_ignored": m.cache.max_kv_size_ignored,
                "layers": m.cache.layers.iter().map(|l| json!({
                    "class": l.class.name(),
                    "cells": l.cells,
                    "offset": l.offset,
                    "bytes": l.bytes,
                    "read_bytes": l.read_bytes,
                })).collect::<Vec<_>>(),
            }),
            serde_json::Value::Null,
            json!({
                "weights_bytes": p.weights_bytes,
                "cache_bytes": m.cache.bytes(),
                "activation_bytes": m.activations,
                "activation_basis": "estimate",
                "total_bytes": m.total,
                "capacity_bytes": r.machine.capacity,
                "headroom_bytes": p.headroom.unwrap_or(0).clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                "limit": match p.limit {
                    PlanLimit::WiredLimit(b) => json!({"kind": "wired_limit", "bytes": b}),
                    PlanLimit::Capacity(b) => json!({"kind": "capacity", "bytes": b}),
                },
                "fits": p.fits,
            }),
        ),
    };
    json!({
        "schema": "llmbound-mlx-report/1",
        "version": env!("CARGO_PKG_VERSION"),
        "runtime": "mlx-lm",
        "mlx_lm_version": mlx::MLX_LM_VERSION,
        "mlx_version": mlx::MLX_VERSION,
        "model": {
            "folder": crate::sanitize::path(&art.dir),
            "model_type": art.model_type(),
            "layers": art.layout.layers.len(),
            "files": art.model.shards.len(),
            "native_context_tokens": art.native_context(),
        },
        "weights": {
            "bytes": p.weights_bytes,
            "provenance": "file",
            "read_bytes_per_token": p.weights_read_bytes,
            "encodings": encodings,
            "experts": art.inventory.experts.map(|(n, k)| json!({"total": n, "used": k})),
        },
        "machine": {
            "name": r.machine.name,
            "capacity_bytes": r.machine.capacity,
            "bandwidth_bytes_per_second": r.machine.bandwidth,
            "bandwidth_provenance": r.machine.bandwidth_provenance,
        },
        "settings": {
            "kv_bits": r.settings.kv_quant.map(|q| q.bits),
            "kv_group_size": r.settings.kv_quant.map(|q| q.group_size),
            "quantized_kv_start": r.settings.kv_quant.map(|q| q.start),
            "max_kv_size": r.settings.max_kv_size,
            "prefill_step_size": mlx::PREFILL_STEP,
        },
        "context_tokens": p.context,
        "cache": cache,
        "refused": refused,
        "memory": memory,
        "working_set": p.working_set.map(|c| json!({
            "verdict": verdict_key(c.verdict),
            "wired_limit_bytes": c.wired_limit,
            "memory_limit_bytes": c.memory_limit,
            "warns": c.warns,
            "provenance": r.settings.working_set_provenance,
        })),
        "largest_context": {
            "tokens": p.largest_context,
            "reaches_search_end": p.largest_is_search_max,
            "search_end_tokens": art.native_context().unwrap_or(SEARCH_CAP),
        },
        "decode": {
            "short_context": { "tokens_per_second": rate(p.decode_short), "label": "ceiling" },
            "at_context": p.decode_at_context.map(|v| json!({ "tokens_per_second": rate(v), "label": "ceiling" })),
            "bandwidth_provenance": r.machine.bandwidth_provenance,
        },
        "mlx_lm_command": launch_line_for(&art.dir, &r.settings),
        "warnings": art.warnings(),
        "side_by_side": r.llama_cpp.as_ref().map(|(l, cmd)| json!({
            "context_tokens": p.context,
            "llama_cpp": figures_json(l),
            "mlx_lm": figures_json(&mlx::mlx_lm_figures(p)),
            "llama_cpp_command": cmd,
        })),
    })
}

/// `inspect DIR`: every logical tensor of a safetensors model.
pub fn write_inspect(dir: &Path, out: &mut impl Write) -> Result<(), MlxReportError> {
    let model = crate::workspace::open::read_safetensors(dir).map_err(MlxReportError::Open)?;
    write_inspect_model(&model, out)
}

/// [`write_inspect`] of headers already read.
pub fn write_inspect_model(
    model: &safetensors::Model,
    out: &mut impl Write,
) -> Result<(), MlxReportError> {
    let inv = MlxInventory::of(model);
    let io = |e: io::Error| MlxReportError::Option(e.to_string());
    writeln!(
        out,
        "{}: {} file(s), {} bytes = {}, {} tensors",
        crate::sanitize::path(&model.dir),
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

/// The Model pane of a safetensors model whose shape core does not hold (MoE, MLA, sliding
/// window, hybrid …): config.json's figures as the file gives them, and plainly that the
/// cache, memory and ceilings are MLX-LM's figures only (never the previous model's shape).
pub fn unshaped_model_lines(art: &MlxArtifact) -> Vec<String> {
    let mut v = vec![format!(
        "{}: shape is MLX-LM's only",
        crate::sanitize::text(art.model_type())
    )];
    v.push(
        "core holds no layout for it: cache, memory and ceilings are MLX-LM's (Bounds pane)"
            .to_string(),
    );
    if let Some(c) = art.model.config.as_ref() {
        let keys = [
            ("num_hidden_layers", "layers"),
            ("hidden_size", "hidden"),
            ("num_attention_heads", "heads"),
            ("num_key_value_heads", "KV heads"),
            ("head_dim", "head dim"),
            ("num_local_experts", "experts"),
            ("num_experts", "experts"),
            ("n_routed_experts", "routed experts"),
            ("num_experts_per_tok", "experts per token"),
            ("kv_lora_rank", "KV LoRA rank"),
            ("sliding_window", "sliding window"),
            ("vocab_size", "vocabulary"),
        ];
        for (k, label) in keys {
            if let Some(n) = c.u64(k) {
                v.push(format!("{label:<18}{:>10}  file", group_digits(n as u128)));
            }
        }
    }
    v.push("llama.cpp's settings need a GGUF of it".to_string());
    v
}

/// The explorer's Bounds pane for MLX-LM, as lines: which runtime the figures are for, W, the
/// cache, the activation estimate, the total against the machine, the working-set rule, the
/// largest context, the decode ceilings and the launch line; with llama.cpp's figures of the
/// same model (`llama`, when both runtimes apply) side by side under them.
pub fn explorer_lines(
    art: &MlxArtifact,
    p: &MlxPlan,
    machine: &MachineFigures,
    llama: Option<&RuntimeFigures>,
) -> Vec<String> {
    explorer_lines_with(
        art,
        p,
        machine,
        &MlxSettings::on(machine),
        llama,
        usize::MAX,
    )
}

/// [`explorer_lines`] of a plan made with `settings` (`--kv-bits`, `--max-kv-size` …): the
/// launch line carries them, and a `--max-kv-size` the model ignores is said. Narrower than
/// the side-by-side table (`width` columns), each row's label goes on its own line above
/// the two figures.
pub fn explorer_lines_with(
    art: &MlxArtifact,
    p: &MlxPlan,
    machine: &MachineFigures,
    settings: &MlxSettings,
    llama: Option<&RuntimeFigures>,
    width: usize,
) -> Vec<String> {
    let mut v = Vec::new();
    let n = group_digits(p.context as u128);
    v.push(format!(
        "runtime MLX-LM (mlx-lm {}, mlx {}){}",
        mlx::MLX_LM_VERSION,
        mlx::MLX_VERSION,
        if llama.is_some() {
            "; llama.cpp also applies"
        } else {
            "; llama.cpp needs a GGUF of it"
        }
    ));
    v.push(format!(
        "W {} B = {} ({} file{}, {})",
        group_digits(p.weights_bytes as u128),
        fmt_both(p.weights_bytes),
        art.model.shards.len(),
        if art.model.shards.len() == 1 { "" } else { "s" },
        crate::sanitize::text(art.model_type())
    ));
    match &p.memory {
        Err(e) => v.push(format!(
            "cache refused by MLX-LM: {}{}",
            e.message(),
            refusal_hint(e)
        )),
        Ok(m) => {
            v.push(format!(
                "cache at {n}: {} B ({})",
                group_digits(m.cache.bytes() as u128),
                classes(&m.cache)
            ));
            if m.cache.max_kv_size_ignored {
                v.push(
                    "--max-kv-size has no effect: this model builds its own caches (make_cache)"
                        .into(),
                );
            }
            v.push(format!(
                "W + cache + activations {} B = {}; headroom {} B of {}{}",
                group_digits(m.total as u128),
                fmt_both(m.total),
                crate::core::units::group_digits_signed(p.headroom.unwrap_or(0)),
                fmt_both(p.limit.bytes()),
                match p.limit {
                    PlanLimit::WiredLimit(_) => " (the working set)",
                    PlanLimit::Capacity(_) => "",
                }
            ));
            v.push(format!("largest context {}", largest_words_of(art, p)));
            v.push(format!(
                "decode ceiling {} tokens/s short, {} tokens/s at {n} ({} bandwidth)",
                fmt_rate(p.decode_short),
                fmt_rate(p.decode_at_context.unwrap_or(p.decode_short)),
                machine.bandwidth_provenance
            ));
            v.push(match &p.working_set {
                Some(c) => format!("working set: {}", verdict_words(c.verdict)),
                None => "working set not checked: no Metal working set (recommendedMaxWorkingSetSize) in the machine profile".into(),
            });
            v.push(format!(
                "activations {} B (estimate: prefill in chunks of {})",
                group_digits(m.activations as u128),
                group_digits(mlx::PREFILL_STEP as u128)
            ));
        }
    }
    if let Some(l) = llama {
        v.push(String::new());
        let rows = side_by_side_rows(l, &mlx::mlx_lm_figures(p), p.context);
        if width >= 68 {
            for (k, a, b) in rows {
                v.push(format!("{k:<22} {a:>22} {b:>22}"));
            }
        } else {
            for (i, (k, a, b)) in rows.into_iter().enumerate() {
                if i > 0 {
                    v.push(k);
                }
                v.push(format!("{a:>18} {b:>18}"));
            }
        }
    }
    v.push(format!("launch {}", launch_line_for(&art.dir, settings)));
    for w in art.warnings() {
        v.push(format!("! {}", crate::sanitize::text(&w)));
    }
    v
}

/// What avoids MLX's refusal, where a setting does (after MLX's own message): a group size
/// that divides the head dimension.
fn refusal_hint(e: &mlx::MlxRefusal) -> String {
    match e {
        mlx::MlxRefusal::GroupSize { dim, .. } => {
            let fit: Vec<String> = (mlx::KV_GROUP_SIZES.iter())
                .filter(|g| *dim % **g == 0)
                .map(|g| g.to_string())
                .collect();
            if fit.is_empty() {
                format!(
                    " (no --kv-group-size divides the head dimension {dim}: leave --kv-bits unset)"
                )
            } else {
                format!(
                    " (--kv-group-size {} divides the head dimension {dim})",
                    fit.join(" or ")
                )
            }
        }
        _ => String::new(),
    }
}
