//! The comparison of one scenario on several machines, as text, markdown or JSON.

use super::Format;
use crate::compare::CompareRow;
use crate::core::Scenario;
use crate::core::units::{fmt_gib_signed, fmt_ms, fmt_rate, fmt_tokens};
use serde::Serialize;
use std::io::{self, Write};

/// Document kind and version of `compare --format json`.
pub const SCHEMA: &str = "llmbound-compare/1";

/// `compare`: one scenario on several machines.
pub struct CompareDoc<'a> {
    /// The scenario (its model, artifact and cache settings).
    pub base: &'a Scenario,
    /// One row per machine.
    pub rows: &'a [CompareRow],
}

impl super::export::Export for CompareDoc<'_> {
    fn schema(&self) -> &'static str {
        SCHEMA
    }
    fn write_json(&self, mut w: &mut dyn Write) -> io::Result<()> {
        write(self.base, self.rows, Format::Json, &mut w)
    }
    fn write_styled(&self, style: super::Style, mut w: &mut dyn Write) -> io::Result<()> {
        let f = match style {
            super::Style::Text => Format::Text,
            super::Style::Markdown => Format::Markdown,
        };
        write(self.base, self.rows, f, &mut w)
    }
}

/// One machine's figures (JSON contract).
#[derive(Debug, Clone, Serialize)]
pub struct CompareJson {
    /// Machine id.
    pub machine: String,
    /// Machine name.
    pub name: String,
    /// Why it could not be evaluated.
    pub error: Option<String>,
    /// The context per sequence this machine was evaluated at, tokens: the scenario's, or
    /// under Ollama its default for this machine's VRAM.
    pub context_tokens: Option<u64>,
    /// The sequences it was evaluated at.
    pub sequences: Option<u64>,
    /// Every used tier fits.
    pub fits: Option<bool>,
    /// Free runtime memory on the limiting tier (weights, allocated cache, buffers and A
    /// counted), bytes.
    pub headroom_bytes: Option<i128>,
    /// Largest context that fits.
    pub max_context_tokens: Option<u64>,
    /// The decode ceiling the machines are ranked by, at the scenario's context, tokens/s:
    /// from the tensor inventory (an upper bound) when it is known, else file mode.
    pub ceiling_tokens_per_second: Option<f64>,
    /// The same at a short context.
    pub ceiling_short_context_tokens_per_second: Option<f64>,
    /// The ranking ceilings are upper bounds (inventory); false: file mode, the rate if every
    /// byte of the file is read per token.
    pub ceiling_is_upper_bound: Option<bool>,
    /// `-ngl` this machine was evaluated at (its own placement: all layers, or the most that
    /// fit); null for a machine with no accelerator and host tier.
    pub gpu_layers: Option<u32>,
    /// `-ngl` for every layer (L + 1).
    pub all_gpu_layers: Option<u32>,
    /// How the placement was chosen: `-fit` and the arguments llama.cpp prints on this
    /// machine, or "most layers that fit"; null on an error row.
    pub placement: Option<String>,
    /// File-mode short-context decode ceiling.
    pub short_context_tokens_per_second: Option<f64>,
    /// File-mode decode ceiling at the scenario's context.
    pub full_context_tokens_per_second: Option<f64>,
    /// Its time per token.
    pub full_context_ms_per_token: Option<f64>,
    /// Inventory-mode decode ceiling at the context.
    pub inventory_full_context_tokens_per_second: Option<f64>,
    /// Perfect-overlap bound across tiers.
    pub overlapped_tokens_per_second: Option<f64>,
    /// Prefill ceiling.
    pub prefill_tokens_per_second: Option<f64>,
    /// Tier with the least headroom.
    pub capacity_tier: Option<String>,
    /// Tier moving the most bytes per token.
    pub decode_tier: Option<String>,
    /// Provenance of the bandwidth.
    pub bandwidth_provenance: Option<&'static str>,
    /// The ceilings are optimistic vendor ceilings.
    pub optimistic_vendor_ceiling: Option<bool>,
}

fn rows_json(rows: &[CompareRow]) -> Vec<CompareJson> {
    rows.iter()
        .map(|r| match &r.outcome {
            Ok(f) => CompareJson {
                machine: r.machine_id.clone(),
                name: r.machine_name.clone(),
                error: None,
                context_tokens: Some(f.context_tokens),
                sequences: Some(f.sequences),
                fits: Some(f.fits),
                headroom_bytes: Some(f.headroom_bytes),
                max_context_tokens: f.max_context_tokens,
                ceiling_tokens_per_second: Some(f.ceiling_tokens_per_second),
                ceiling_short_context_tokens_per_second: Some(f.ceiling_short_tokens_per_second),
                ceiling_is_upper_bound: Some(f.ceiling_is_upper_bound),
                gpu_layers: f.gpu_layers,
                all_gpu_layers: Some(f.all_gpu_layers),
                placement: Some(f.placement.clone()),
                short_context_tokens_per_second: Some(f.short_tokens_per_second),
                full_context_tokens_per_second: Some(f.full_tokens_per_second),
                full_context_ms_per_token: Some(f.full_ms_per_token),
                inventory_full_context_tokens_per_second: f.inventory_full_tokens_per_second,
                overlapped_tokens_per_second: Some(f.overlapped_tokens_per_second),
                prefill_tokens_per_second: f.prefill_tokens_per_second,
                capacity_tier: Some(f.capacity_tier.clone()),
                decode_tier: Some(f.decode_tier.clone()),
                bandwidth_provenance: Some(f.bandwidth_provenance.label()),
                optimistic_vendor_ceiling: Some(f.optimistic_vendor),
            },
            Err(e) => CompareJson {
                machine: r.machine_id.clone(),
                name: r.machine_name.clone(),
                error: Some(e.to_string()),
                context_tokens: None,
                sequences: None,
                fits: None,
                headroom_bytes: None,
                max_context_tokens: None,
                ceiling_tokens_per_second: None,
                ceiling_short_context_tokens_per_second: None,
                ceiling_is_upper_bound: None,
                gpu_layers: None,
                all_gpu_layers: None,
                placement: None,
                short_context_tokens_per_second: None,
                full_context_tokens_per_second: None,
                full_context_ms_per_token: None,
                inventory_full_context_tokens_per_second: None,
                overlapped_tokens_per_second: None,
                prefill_tokens_per_second: None,
                capacity_tier: None,
                decode_tier: None,
                bandwidth_provenance: None,
                optimistic_vendor_ceiling: None,
            },
        })
        .collect()
}

/// Write the comparison.
/// "N tokens", with " × S sequences" when there are several.
fn at_context(tokens: u64, sequences: u64) -> String {
    if sequences > 1 {
        format!("{} tokens × {sequences} sequences", fmt_tokens(tokens))
    } else {
        format!("{} tokens", fmt_tokens(tokens))
    }
}

pub fn write<W: Write>(
    base: &Scenario,
    rows: &[CompareRow],
    format: Format,
    w: &mut W,
) -> io::Result<()> {
    let json = rows_json(rows);
    if format == Format::Json {
        #[derive(Serialize)]
        struct Doc<'a> {
            schema: &'static str,
            version: &'static str,
            model: &'a str,
            context: u64,
            sequences: u64,
            cache_type_k: &'static str,
            cache_type_v: &'static str,
            machines: &'a [CompareJson],
        }
        return super::export::json_to(
            &Doc {
                schema: SCHEMA,
                version: super::export::VERSION,
                model: &base.model.name,
                context: base.cache.context,
                sequences: base.cache.sequences,
                cache_type_k: base.cache.type_k.name(),
                cache_type_v: base.cache.type_v.name(),
                machines: &json,
            },
            w,
        );
    }
    let md = format == Format::Markdown;
    // Each machine at its own context (Ollama's default follows the VRAM): the title says so
    // and each row's placement starts with its context.
    let own_context = crate::compare::at_own_contexts(rows, base);
    let title = if own_context {
        format!(
            "{} at each machine's own context (Ollama's default by VRAM; the placement column gives it), K {} / V {}: decode ceilings and capacity per machine, each at its own placement (llama.cpp's -fit plan, or the most layers that fit)",
            base.model.name, base.cache.type_k, base.cache.type_v
        )
    } else {
        format!(
            "{} at {}, K {} / V {}: decode ceilings and capacity per machine, each at its own placement (llama.cpp's -fit plan, or the most layers that fit)",
            base.model.name,
            at_context(base.cache.context, base.cache.sequences),
            base.cache.type_k,
            base.cache.type_v
        )
    };
    let title = crate::sanitize::text(&title);
    if md {
        writeln!(w, "# {title}\n")?;
    } else {
        writeln!(w, "{title}\n")?;
    }
    // Several sequences: rates are aggregate across them, times are per step, the largest
    // context is per sequence.
    let b = base.cache.sequences;
    let agg = if b > 1 {
        format!(" (all {b} seq)")
    } else {
        String::new()
    };
    // Inventory known: the ceilings are upper bounds and the file-mode figure is shown apart,
    // "if every byte is read". Without it every figure is file mode and says so.
    let upper = json.iter().any(|r| r.ceiling_is_upper_bound == Some(true));
    let mode = if upper { "" } else { " if every byte read" };
    let head: [String; 12] = [
        "machine".into(),
        "fits".into(),
        "-ngl".into(),
        "free".into(),
        if b > 1 {
            "max context/seq".into()
        } else {
            "max context".into()
        },
        format!("short ceiling t/s{agg}{mode}"),
        format!("ceiling t/s{agg}{mode}"),
        if b > 1 {
            "ms/step".into()
        } else {
            "ms/token".into()
        },
        if upper {
            format!("every byte read t/s{agg}")
        } else {
            format!("inventory t/s{agg}")
        },
        "fullest tier / slowest tier".into(),
        "bandwidth".into(),
        "placement".into(),
    ];
    // Machines that fit first, then those that do not, then errors; otherwise as given.
    let mut sorted: Vec<&CompareJson> = json.iter().collect();
    sorted.sort_by_key(|r| match (&r.error, r.fits) {
        (None, Some(true)) => 0,
        (None, _) => 1,
        (Some(_), _) => 2,
    });
    let cells: Vec<[String; 12]> = sorted
        .into_iter()
        .map(|r| match &r.error {
            Some(e) => [
                r.machine.clone(),
                "error".into(),
                e.clone(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ],
            None => [
                r.machine.clone(),
                if r.fits == Some(true) {
                    "yes".into()
                } else {
                    "NO".into()
                },
                match (r.gpu_layers, r.all_gpu_layers) {
                    (Some(n), Some(all)) if n >= all => "all".into(),
                    (Some(n), Some(all)) => format!("{n}/{all}"),
                    _ => "-".into(),
                },
                fmt_gib_signed(r.headroom_bytes.unwrap_or(0)),
                r.max_context_tokens.map_or("no limit".into(), fmt_tokens),
                fmt_rate(r.ceiling_short_context_tokens_per_second.unwrap_or(0.0)),
                fmt_rate(r.ceiling_tokens_per_second.unwrap_or(0.0)),
                fmt_ms(r.full_context_ms_per_token.unwrap_or(0.0)),
                if upper {
                    r.full_context_tokens_per_second
                        .map_or("-".into(), fmt_rate)
                } else {
                    r.inventory_full_context_tokens_per_second
                        .map_or("-".into(), fmt_rate)
                },
                format!(
                    "{} / {}",
                    r.capacity_tier.clone().unwrap_or_default(),
                    r.decode_tier.clone().unwrap_or_default()
                ),
                if r.optimistic_vendor_ceiling == Some(true) {
                    format!("spec ({})", super::words::VENDOR_CEILING)
                } else {
                    r.bandwidth_provenance.unwrap_or("").to_string()
                },
                match (own_context, r.context_tokens) {
                    (true, Some(c)) => format!(
                        "at {}: {}",
                        at_context(c, r.sequences.unwrap_or(1)),
                        r.placement.clone().unwrap_or_default()
                    ),
                    _ => r.placement.clone().unwrap_or_default(),
                },
            ],
        })
        .map(|c| c.map(|s| crate::sanitize::field(&s, md).into_owned()))
        .collect();
    if md {
        writeln!(w, "| {} |", head.join(" | "))?;
        writeln!(
            w,
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|"
        )?;
        for c in &cells {
            writeln!(w, "| {} |", c.join(" | "))?;
        }
    } else {
        let widths: Vec<usize> = (0..12)
            .map(|i| {
                cells
                    .iter()
                    .map(|c| c[i].chars().count())
                    .chain([head[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |c: &[String]| -> String {
            c.iter()
                .enumerate()
                .map(|(i, s)| {
                    if (2..9).contains(&i) {
                        format!("{s:>width$}", width = widths[i])
                    } else {
                        format!("{s:<width$}", width = widths[i])
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
        };
        writeln!(w, "{}", line(&head).trim_end())?;
        for c in &cells {
            writeln!(w, "{}", line(c).trim_end())?;
        }
        writeln!(
            w,
            "\n{} Each machine at its own placement (placement: the -fit plan llama.cpp chooses there, keeping its 1024 MiB margin per device, or the most layers that fit). Fullest tier: least free memory; slowest tier: takes longest to read per token. Machines that do not fit are listed last.",
            if upper {
                "Ceilings from the tensor inventory are upper bounds on decode, not predictions; \"every byte read\" is file mode: the rate if every byte of the file were read per token, not an upper bound."
            } else {
                "No tensor inventory: every ceiling is file mode, the rate if every byte of the file were read per token — not an upper bound (give the GGUF for one)."
            }
        )?;
    }
    Ok(())
}
