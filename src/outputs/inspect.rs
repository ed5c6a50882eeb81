//! `llmbound inspect`: a GGUF artifact's header as a report — file, shards, metadata, every
//! tensor with its encoding and bytes, rollups by type and by layer — in text, markdown or JSON.
//! Formatters write to `impl Write`; nothing here touches tensor data.
//!
//! Output streams: rows are made one at a time from the reader's tensor infos as they are
//! written, so a million-tensor header costs a sort order (4 bytes a tensor) on top of the
//! header itself, never a second or third copy of every tensor.
//! Depends on: core, gguf, report, sanitize.

use crate::core::units::{fmt_gb, fmt_gib, group_digits};
use crate::gguf::inventory::layer_of;
use crate::gguf::{Artifact, GgmlType, Rollups, RowContext, TensorInfo, TensorRow};
use crate::sanitize;
use serde::{Serialize, Serializer};
use std::collections::HashMap;
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
    /// Type id (not in the JSON; groups the text listing).
    #[serde(skip)]
    pub ggml_type: GgmlType,
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

/// The inspect report (JSON contract). The tensor list is produced while it is written.
#[derive(Serialize)]
pub struct InspectJson<'a> {
    /// Document kind and its version: "llmbound-inspect/1".
    pub schema: &'static str,
    /// llmbound version (the GGUF's own version is `file.version`).
    pub version: &'static str,
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
    pub tensors: TensorList<'a>,
    /// By type, most bytes first.
    pub by_type: Vec<TypeJson>,
    /// By layer.
    pub by_layer: Vec<LayerJson>,
    /// Metadata (only with --metadata).
    pub metadata: Option<Vec<MetaJson>>,
    /// Warnings.
    pub warnings: Vec<String>,
}

/// The tensors of an artifact in a chosen order, turned into rows only as they are written.
pub struct TensorList<'a> {
    tensors: Vec<&'a TensorInfo>,
    order: Vec<u32>,
    ctx: RowContext,
}

impl TensorList<'_> {
    /// Number of tensors.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// No tensors.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The rows in order.
    pub fn rows(&self) -> impl Iterator<Item = TensorRow> + '_ {
        self.order
            .iter()
            .map(|&i| self.ctx.row(self.tensors[i as usize]))
    }
}

impl Serialize for TensorList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.rows().map(TensorJson::from))
    }
}

impl From<TensorRow> for TensorJson {
    fn from(r: TensorRow) -> Self {
        TensorJson {
            name: r.name,
            type_name: r.type_name,
            shape: r.shape,
            elements: r.elements,
            bytes: r.bytes,
            offset: r.offset,
            shard: r.shard,
            layer: r.layer,
            bits_per_weight: r.bits_per_weight,
            role: r.role.to_string(),
            counted: r.counted,
        }
    }
}

/// Tensor indices in `sort` order; ties keep file order (the sorts are stable).
fn sorted(tensors: &[&TensorInfo], sort: Sort) -> Vec<u32> {
    let mut order: Vec<u32> = (0..tensors.len() as u32).collect();
    let t = |i: &u32| tensors[*i as usize];
    match sort {
        Sort::Name => order.sort_by(|a, b| t(a).name().cmp(t(b).name())),
        Sort::Bytes => order.sort_by(|a, b| {
            let (a, b) = (t(a), t(b));
            b.bytes.cmp(&a.bytes).then(a.name().cmp(b.name()))
        }),
        Sort::Offset => order.sort_by_key(|i| (t(i).shard, t(i).offset)),
        Sort::Type => {
            // Rank the few distinct types by name once instead of naming them per comparison.
            let mut types: Vec<(String, GgmlType)> = Vec::new();
            let mut seen: HashMap<GgmlType, ()> = HashMap::new();
            for x in tensors {
                if seen.insert(x.ggml_type, ()).is_none() {
                    types.push((x.ggml_type.name(), x.ggml_type));
                }
            }
            types.sort();
            let rank: HashMap<GgmlType, usize> = types
                .iter()
                .enumerate()
                .map(|(i, (_, g))| (*g, i))
                .collect();
            order.sort_by(|a, b| {
                let (a, b) = (t(a), t(b));
                rank[&a.ggml_type]
                    .cmp(&rank[&b.ggml_type])
                    .then(a.name().cmp(b.name()))
            });
        }
    }
    order
}

/// Build the report (the tensor rows are made when it is written).
pub fn build(a: &Artifact, sort: Sort, metadata: bool) -> InspectJson<'_> {
    let h = a.header();
    let md = a.metadata();
    let tensors: Vec<&TensorInfo> = a.tensors().collect();
    let ctx = RowContext::of(a);
    let rollups = Rollups::of(tensors.iter().copied());
    let order = sorted(&tensors, sort);
    InspectJson {
        schema: SCHEMA,
        version: crate::report::export::VERSION,
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
        tensor_count: tensors.len(),
        parameters: rollups.parameters,
        tensor_bytes: rollups.tensor_bytes,
        tied_output: ctx.tied_output,
        tensors: TensorList {
            tensors,
            order,
            ctx,
        },
        by_type: rollups
            .by_type
            .iter()
            .map(|t| TypeJson {
                type_name: t.type_name.clone(),
                ggml_type: t.ggml_type,
                count: t.count,
                elements: t.elements,
                bytes: t.bytes,
                share: t.share,
                bits_per_weight: t.bits_per_weight,
            })
            .collect(),
        by_layer: rollups
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

/// Document kind and version of `inspect --format json`.
pub const SCHEMA: &str = "llmbound-inspect/1";

/// `inspect`: a GGUF header, with the grouping the text and markdown forms use.
pub struct InspectDoc<'a, 'b> {
    /// The report.
    pub report: &'b InspectJson<'a>,
    /// Tensor grouping of the text and markdown forms.
    pub group: Group,
}

impl crate::report::Export for InspectDoc<'_, '_> {
    fn schema(&self) -> &'static str {
        SCHEMA
    }
    fn write_json(&self, mut w: &mut dyn Write) -> io::Result<()> {
        write_json(self.report, &mut w)
    }
    fn write_styled(&self, style: crate::report::Style, mut w: &mut dyn Write) -> io::Result<()> {
        write_text(
            self.report,
            self.group,
            style == crate::report::Style::Markdown,
            &mut w,
        )
    }
}

/// Write the report as pretty JSON, one tensor at a time.
pub fn write_json<W: Write>(r: &InspectJson, w: &mut W) -> io::Result<()> {
    crate::report::export::json_to(r, w)
}

/// The tensors of each group in the list's order, groups in `keys_in_order` order, in one pass
/// over the tensors: a group is found by a map lookup, never by searching the keys or
/// filtering the whole list once per group.
fn grouped<K: std::hash::Hash + Eq>(
    list: &TensorList,
    keys_in_order: impl Iterator<Item = K>,
    key_of: impl Fn(&TensorInfo) -> K,
) -> Vec<Vec<u32>> {
    let slot: HashMap<K, usize> = keys_in_order.enumerate().map(|(i, k)| (k, i)).collect();
    let mut groups: Vec<Vec<u32>> = vec![Vec::new(); slot.len()];
    for &i in &list.order {
        if let Some(&g) = slot.get(&key_of(list.tensors[i as usize])) {
            groups[g].push(i);
        }
    }
    groups
}

/// A group's heading: `Q4_K: 1,234 tensors, 5,678 bytes (12.3%)`.
fn rollup_title(name: &str, count: usize, bytes: u64, share: f64) -> String {
    format!(
        "{name}: {} tensors, {} bytes ({:.1}%)",
        group_digits(count as u128),
        group_digits(bytes as u128),
        share * 100.0
    )
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
    // Every string from the file (paths, names, keys, values, warnings) is escaped for the
    // terminal; markdown cells also escape `|`.
    let safe = |s: &str| sanitize::field(s, markdown).into_owned();
    let title = format!(
        "{}: {} bytes = {} ({})",
        safe(&f.path),
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
                    safe(&s.path),
                    group_digits(s.bytes as u128)
                ),
            )?;
        }
    }
    line(
        w,
        format!(
            "architecture {}{}",
            safe(r.architecture.as_deref().unwrap_or("(none)")),
            r.name
                .as_ref()
                .map(|n| format!(", name \"{}\"", safe(n)))
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
        line(w, format!("warning: {}", safe(wn)))?;
    }

    // Column widths from the cells (an unknown type's name is longer than any known one), so
    // no row pushes the columns after it out of line.
    let type_w = r
        .by_type
        .iter()
        .map(|t| safe(&t.type_name).chars().count())
        .max()
        .unwrap_or(0)
        .max(10);
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
            "  {:<type_w$} {:>8} {:>16} {:>16} {:>7} {:>11}",
            "type", "tensors", "elements", "bytes", "share", "bits/weight"
        )?;
    }
    for t in &r.by_type {
        let cells = [
            safe(&t.type_name),
            group_digits(t.count as u128),
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
                "  {:<type_w$} {:>8} {:>16} {:>16} {:>7} {:>11}",
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
    let row_cells = |t: &TensorRow| -> [String; 8] {
        [
            safe(&t.name),
            safe(&t.type_name),
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
        .tensors
        .iter()
        .map(|t| sanitize::text(t.name()).chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 48);
    let tensor_type_w = r
        .by_type
        .iter()
        .map(|t| safe(&t.type_name).chars().count())
        .max()
        .unwrap_or(0)
        .max(8);
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
                "  {:<name_w$} {:<tensor_type_w$} {:<18} {:>14} {:>14} {:>7} {:>14}  {}",
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
    let table_row = |w: &mut W, t: &TensorRow| -> io::Result<()> {
        let c = row_cells(t);
        if markdown {
            writeln!(w, "| {} |", c.join(" | "))
        } else {
            writeln!(
                w,
                "  {:<name_w$} {:<tensor_type_w$} {:<18} {:>14} {:>14} {:>7} {:>14}  {}",
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
    let list = &r.tensors;
    match group {
        Group::None => {
            section(w, "Tensors".into())?;
            table_head(w)?;
            for t in list.rows() {
                table_row(w, &t)?;
            }
        }
        Group::Type => {
            let groups = grouped(list, r.by_type.iter().map(|t| t.ggml_type), |t| t.ggml_type);
            for (ty, members) in r.by_type.iter().zip(groups) {
                section(
                    w,
                    rollup_title(&safe(&ty.type_name), ty.count, ty.bytes, ty.share),
                )?;
                table_head(w)?;
                for i in members {
                    table_row(w, &list.ctx.row(list.tensors[i as usize]))?;
                }
            }
        }
        Group::Layer => {
            let groups = grouped(list, r.by_layer.iter().map(|l| l.layer), |t| {
                layer_of(t.name())
            });
            for (l, members) in r.by_layer.iter().zip(groups) {
                let name = l
                    .layer
                    .map_or("outside layers".to_string(), |n| format!("layer {n}"));
                section(w, rollup_title(&name, l.count, l.bytes, l.share))?;
                table_head(w)?;
                for i in members {
                    table_row(w, &list.ctx.row(list.tensors[i as usize]))?;
                }
            }
        }
    }
    if let Some(md) = &r.metadata {
        section(w, "Metadata".into())?;
        for e in md {
            if markdown {
                writeln!(
                    w,
                    "- `{}` ({}): {}",
                    safe(&e.key),
                    safe(&e.type_name),
                    safe(&e.value)
                )?;
            } else {
                writeln!(
                    w,
                    "  {} ({}) = {}",
                    safe(&e.key),
                    safe(&e.type_name),
                    safe(&e.value)
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::writer::{Data, GgufWriter};
    use crate::gguf::{GgmlType, Value};

    /// Where each line of a table puts the text `cell` (in characters).
    fn column_of(line: &str, cell: &str) -> Option<usize> {
        line.find(cell).map(|b| line[..b].chars().count())
    }

    #[test]
    fn an_unknown_tensor_type_keeps_the_tables_aligned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.gguf");
        GgufWriter::new()
            .kv("general.architecture", Value::String("llama".into()))
            .tensor("a.weight", GgmlType::F32, &[48])
            .tensor_raw(b"x.weight", 31, &[48], None, Some(18))
            .write_file(&path, Data::Zeros)
            .unwrap();
        let a = crate::gguf::open_single(&path).unwrap();
        let r = build(&a, Sort::Name, false);
        let mut out = Vec::new();
        write_text(&r, Group::None, false, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // By type: every row as wide as the header (all later columns right-aligned).
        let head = lines
            .iter()
            .position(|l| l.contains("bits/weight"))
            .unwrap();
        let width = lines[head].chars().count();
        for l in &lines[head + 1..head + 3] {
            assert_eq!(l.chars().count(), width, "{text}");
        }
        // Tensors: the shape column starts at the same place on every row.
        let head = lines
            .iter()
            .position(|l| l.contains("read per token"))
            .unwrap();
        let shape = column_of(lines[head], "shape").unwrap();
        for l in &lines[head + 1..head + 3] {
            assert_eq!(column_of(l, "48 "), Some(shape), "{text}");
        }
    }
}
