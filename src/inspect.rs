//! `llmbound inspect`: a GGUF artifact's header as a report — file, shards, metadata, every
//! tensor with its encoding and bytes, rollups by type and by layer — in text, markdown or JSON.
//! Formatters write to `impl Write`; nothing here touches tensor data.

use crate::core::units::{fmt_gb, fmt_gib, group_digits};
use crate::gguf::{Artifact, TensorInventory, TensorRow};
use serde::Serialize;
use std::io::{self, Write};

/// Tensor order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    /// By name.
    Name,
    /// Largest first.
    Bytes,
    /// File order (shard, offset).
    #[default]
    Offset,
    /// By type name, then name.
    Type,
}

/// Grouping of the tensor list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Group {
    /// One list.
    #[default]
    None,
    /// By tensor type, with rollups.
    Type,
    /// By layer, with rollups.
    Layer,
}

/// One tensor (JSON contract).
#[derive(Debug, Clone, Serialize)]
pub struct TensorJson {
    /// Name.
    pub name: String,
    /// llama.cpp type name.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Dims, row first.
    pub shape: Vec<u64>,
    /// Elements.
    pub elements: u64,
    /// Bytes (null for an unknown type).
    pub bytes: Option<u64>,
    /// Offset from its shard's data start.
    pub offset: u64,
    /// Shard index.
    pub shard: usize,
    /// Layer index.
    pub layer: Option<u32>,
    /// Bits per weight.
    pub bits_per_weight: Option<f64>,
    /// Role.
    pub role: String,
    /// What a batch-one decode step reads.
    pub counted: String,
}

/// One type rollup.
#[derive(Debug, Clone, Serialize)]
pub struct TypeJson {
    /// Type name.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Tensors.
    pub count: usize,
    /// Elements.
    pub elements: u64,
    /// Bytes.
    pub bytes: u64,
    /// Share of tensor bytes.
    pub share: f64,
    /// Bits per weight.
    pub bits_per_weight: Option<f64>,
}

/// One layer rollup.
#[derive(Debug, Clone, Serialize)]
pub struct LayerJson {
    /// Layer (null: outside layers).
    pub layer: Option<u32>,
    /// Tensors.
    pub count: usize,
    /// Elements.
    pub elements: u64,
    /// Bytes.
    pub bytes: u64,
    /// Share.
    pub share: f64,
}

/// One shard.
#[derive(Debug, Clone, Serialize)]
pub struct ShardJson {
    /// Path.
    pub path: String,
    /// Exact bytes.
    pub bytes: u64,
    /// Bytes missing at the end (partial download).
    pub missing_bytes: u64,
}

/// The file.
#[derive(Debug, Clone, Serialize)]
pub struct FileJson {
    /// Path given.
    pub path: String,
    /// W: Σ of shard sizes.
    pub bytes: u64,
    /// Shards.
    pub shards: Vec<ShardJson>,
    /// GGUF version.
    pub version: u32,
    /// "little" / "big".
    pub endian: String,
    /// Alignment.
    pub alignment: u64,
    /// Bytes missing over all shards.
    pub missing_bytes: u64,
}

/// One metadata entry.
#[derive(Debug, Clone, Serialize)]
pub struct MetaJson {
    /// Key.
    pub key: String,
    /// Type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Value, long arrays summarised.
    pub value: String,
    /// Byte offset of the entry.
    pub offset: u64,
}

/// The inspect report (JSON contract).
#[derive(Debug, Clone, Serialize)]
pub struct InspectJson {
    /// File.
    pub file: FileJson,
    /// `general.architecture`.
    pub architecture: Option<String>,
    /// `general.name`.
    pub name: Option<String>,
    /// Tensors.
    pub tensor_count: usize,
    /// Σ elements.
    pub parameters: u64,
    /// Σ tensor bytes.
    pub tensor_bytes: u64,
    /// Output projection tied to the token embedding.
    pub tied_output: bool,
    /// Tensors, in the chosen order.
    pub tensors: Vec<TensorJson>,
    /// By type, most bytes first.
    pub by_type: Vec<TypeJson>,
    /// By layer.
    pub by_layer: Vec<LayerJson>,
    /// Metadata (only with --metadata).
    pub metadata: Option<Vec<MetaJson>>,
    /// Warnings.
    pub warnings: Vec<String>,
}

fn sorted(inv: &TensorInventory, sort: Sort) -> Vec<&TensorRow> {
    let mut rows: Vec<&TensorRow> = inv.rows.iter().collect();
    match sort {
        Sort::Name => rows.sort_by(|a, b| a.name.cmp(&b.name)),
        Sort::Bytes => rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(&b.name))),
        Sort::Offset => rows.sort_by_key(|r| (r.shard, r.offset)),
        Sort::Type => rows.sort_by(|a, b| a.type_name.cmp(&b.type_name).then(a.name.cmp(&b.name))),
    }
    rows
}

/// Build the report.
pub fn build(a: &Artifact, inv: &TensorInventory, sort: Sort, metadata: bool) -> InspectJson {
    let h = a.header();
    let md = a.metadata();
    InspectJson {
        file: FileJson {
            path: a.path.display().to_string(),
            bytes: a.file_bytes(),
            shards: a
                .shards
                .iter()
                .map(|s| ShardJson {
                    path: s.path.display().to_string(),
                    bytes: s.header.file_len,
                    missing_bytes: s.header.missing_bytes,
                })
                .collect(),
            version: h.version,
            endian: h.endian.to_string(),
            alignment: h.alignment,
            missing_bytes: a.missing_bytes(),
        },
        architecture: md.architecture().map(str::to_string),
        name: md
            .get_str("general.name")
            .ok()
            .flatten()
            .map(str::to_string),
        tensor_count: inv.rows.len(),
        parameters: inv.parameters,
        tensor_bytes: inv.tensor_bytes,
        tied_output: inv.tied_output,
        tensors: sorted(inv, sort)
            .into_iter()
            .map(|r| TensorJson {
                name: r.name.clone(),
                type_name: r.type_name.clone(),
                shape: r.shape.clone(),
                elements: r.elements,
                bytes: r.bytes,
                offset: r.offset,
                shard: r.shard,
                layer: r.layer,
                bits_per_weight: r.bits_per_weight,
                role: r.role.to_string(),
                counted: r.counted.clone(),
            })
            .collect(),
        by_type: inv
            .by_type
            .iter()
            .map(|t| TypeJson {
                type_name: t.type_name.clone(),
                count: t.count,
                elements: t.elements,
                bytes: t.bytes,
                share: t.share,
                bits_per_weight: t.bits_per_weight,
            })
            .collect(),
        by_layer: inv
            .by_layer
            .iter()
            .map(|l| LayerJson {
                layer: l.layer,
                count: l.count,
                elements: l.elements,
                bytes: l.bytes,
                share: l.share,
            })
            .collect(),
        metadata: metadata.then(|| {
            md.iter()
                .map(|e| MetaJson {
                    key: e.key.clone(),
                    type_name: e.value.type_description(),
                    value: e.value.short(200),
                    offset: e.offset,
                })
                .collect()
        }),
        warnings: a.all_warnings(),
    }
}

fn bits(b: Option<f64>) -> String {
    b.map_or("?".into(), |x| format!("{x:.3}"))
}

fn opt_bytes(b: Option<u64>) -> String {
    b.map_or("unknown".into(), |x| group_digits(x as u128))
}

/// Write the report as text (`markdown = false`) or markdown.
pub fn write_text<W: Write>(
    r: &InspectJson,
    group: Group,
    markdown: bool,
    w: &mut W,
) -> io::Result<()> {
    let f = &r.file;
    let title = format!(
        "{}: {} bytes = {} ({})",
        crate::sanitize::text(&f.path),
        group_digits(f.bytes as u128),
        fmt_gib(f.bytes),
        fmt_gb(f.bytes)
    );
    if markdown {
        writeln!(w, "# {title}\n")?;
    } else {
        writeln!(w, "{title}")?;
    }
    let line = |w: &mut W, s: String| -> io::Result<()> {
        if markdown {
            writeln!(w, "- {s}")
        } else {
            writeln!(w, "  {s}")
        }
    };
    line(
        w,
        format!(
            "GGUF v{}, {}, alignment {}, {} shard{}",
            f.version,
            f.endian,
            f.alignment,
            f.shards.len(),
            if f.shards.len() == 1 { "" } else { "s" }
        ),
    )?;
    if f.shards.len() > 1 {
        for s in &f.shards {
            line(
                w,
                format!(
                    "shard {}: {} bytes",
                    crate::sanitize::text(&s.path),
                    group_digits(s.bytes as u128)
                ),
            )?;
        }
    }
    line(
        w,
        format!(
            "architecture {}{}",
            crate::sanitize::text(r.architecture.as_deref().unwrap_or("(none)")),
            r.name
                .as_ref()
                .map(|n| format!(", name \"{}\"", crate::sanitize::text(n)))
                .unwrap_or_default()
        ),
    )?;
    line(
        w,
        format!(
            "{} tensors, {} parameters (counted), {} bytes of tensor data; output {}",
            group_digits(r.tensor_count as u128),
            group_digits(r.parameters as u128),
            group_digits(r.tensor_bytes as u128),
            if r.tied_output {
                "tied to the token embedding"
            } else {
                "separate"
            }
        ),
    )?;
    if f.missing_bytes > 0 {
        line(
            w,
            format!(
                "PARTIAL DOWNLOAD: {} bytes of tensor data are missing",
                group_digits(f.missing_bytes as u128)
            ),
        )?;
    }
    for wn in &r.warnings {
        line(w, format!("warning: {}", crate::sanitize::text(wn)))?;
    }

    // Per encoding: the obvious proof that a "Q4_K_M" is not all 4-bit.
    if markdown {
        writeln!(
            w,
            "\n## By type\n\n| type | tensors | elements | bytes | share | bits/weight |\n|---|---:|---:|---:|---:|---:|"
        )?;
    } else {
        writeln!(w, "\nBy type")?;
        writeln!(
            w,
            "  {:<10} {:>8} {:>16} {:>16} {:>7} {:>11}",
            "type", "tensors", "elements", "bytes", "share", "bits/weight"
        )?;
    }
    for t in &r.by_type {
        let cells = [
            t.type_name.clone(),
            t.count.to_string(),
            group_digits(t.elements as u128),
            group_digits(t.bytes as u128),
            format!("{:.1}%", t.share * 100.0),
            bits(t.bits_per_weight),
        ];
        if markdown {
            writeln!(w, "| {} |", cells.join(" | "))?;
        } else {
            writeln!(
                w,
                "  {:<10} {:>8} {:>16} {:>16} {:>7} {:>11}",
                cells[0], cells[1], cells[2], cells[3], cells[4], cells[5]
            )?;
        }
    }

    let header = [
        "name",
        "type",
        "shape",
        "elements",
        "bytes",
        "bits/w",
        "offset",
        "read per token",
    ];
    let row_cells = |t: &TensorJson| -> [String; 8] {
        [
            crate::sanitize::field(&t.name, markdown).into_owned(),
            t.type_name.clone(),
            t.shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("×"),
            group_digits(t.elements as u128),
            opt_bytes(t.bytes),
            bits(t.bits_per_weight),
            group_digits(t.offset as u128),
            t.counted.clone(),
        ]
    };
    let name_w = r
        .tensors
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(4)
        .clamp(4, 48);
    let table_head = |w: &mut W| -> io::Result<()> {
        if markdown {
            writeln!(
                w,
                "| {} |\n|---|---|---|---:|---:|---:|---:|---|",
                header.join(" | ")
            )
        } else {
            writeln!(
                w,
                "  {:<name_w$} {:<8} {:<18} {:>14} {:>14} {:>7} {:>14}  {}",
                header[0],
                header[1],
                header[2],
                header[3],
                header[4],
                header[5],
                header[6],
                header[7]
            )
        }
    };
    let table_row = |w: &mut W, t: &TensorJson| -> io::Result<()> {
        let c = row_cells(t);
        if markdown {
            writeln!(w, "| {} |", c.join(" | "))
        } else {
            writeln!(
                w,
                "  {:<name_w$} {:<8} {:<18} {:>14} {:>14} {:>7} {:>14}  {}",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
            )
        }
    };
    let section = |w: &mut W, title: String| -> io::Result<()> {
        if markdown {
            writeln!(w, "\n## {title}\n")
        } else {
            writeln!(w, "\n{title}")
        }
    };
    match group {
        Group::None => {
            section(w, "Tensors".into())?;
            table_head(w)?;
            for t in &r.tensors {
                table_row(w, t)?;
            }
        }
        Group::Type => {
            for ty in &r.by_type {
                section(
                    w,
                    format!(
                        "{}: {} tensors, {} bytes ({:.1}%)",
                        ty.type_name,
                        ty.count,
                        group_digits(ty.bytes as u128),
                        ty.share * 100.0
                    ),
                )?;
                table_head(w)?;
                for t in r.tensors.iter().filter(|t| t.type_name == ty.type_name) {
                    table_row(w, t)?;
                }
            }
        }
        Group::Layer => {
            for l in &r.by_layer {
                let name = l
                    .layer
                    .map_or("outside layers".to_string(), |n| format!("layer {n}"));
                section(
                    w,
                    format!(
                        "{name}: {} tensors, {} bytes ({:.1}%)",
                        l.count,
                        group_digits(l.bytes as u128),
                        l.share * 100.0
                    ),
                )?;
                table_head(w)?;
                for t in r.tensors.iter().filter(|t| t.layer == l.layer) {
                    table_row(w, t)?;
                }
            }
        }
    }
    if let Some(md) = &r.metadata {
        use crate::sanitize::Text as San;
        section(w, "Metadata".into())?;
        for e in md {
            if markdown {
                writeln!(
                    w,
                    "- `{}` ({}): {}",
                    San(&e.key),
                    e.type_name,
                    San(&e.value)
                )?;
            } else {
                writeln!(w, "  {} ({}) = {}", San(&e.key), e.type_name, San(&e.value))?;
            }
        }
    }
    Ok(())
}
