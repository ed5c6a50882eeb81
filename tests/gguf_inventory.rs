//! The tensor inventory, its mapping to the core's `Inventory`, and the architecture figures
//! and model shape read from metadata: synthetic MoE, tied and hybrid fixtures, and the real
//! Qwen3-8B-shaped header in `shared/data` (made full size as a sparse file).

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use llmbound::core::model::{Attention, Mla, Moe, PerLayer, Ssm};
use llmbound::core::weights::{ExpertCount, inventory_read_bytes};
use llmbound::gguf::inventory::Role;
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{
    Artifact, GgmlType, TensorInventory, Value, arch_figures, arch_report, model_shape, open,
};
use std::path::{Path, PathBuf};

fn open_written(w: &GgufWriter) -> (tempfile::TempDir, Artifact) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.gguf");
    w.write_file(&p, Data::Zeros).unwrap();
    let a = open(&p).unwrap();
    (dir, a)
}

fn moe_model(tied: bool) -> GgufWriter {
    let mut w = GgufWriter::new()
        .kv("general.architecture", writer::string("qwen3moe"))
        .kv("qwen3moe.block_count", Value::U32(2))
        .kv("qwen3moe.embedding_length", Value::U32(64))
        .kv("qwen3moe.context_length", Value::U32(4096))
        .kv("qwen3moe.attention.head_count", Value::U32(4))
        .kv("qwen3moe.attention.head_count_kv", Value::U32(2))
        .kv("qwen3moe.attention.key_length", Value::U32(16))
        .kv("qwen3moe.attention.value_length", Value::U32(16))
        .kv("qwen3moe.expert_count", Value::U32(8))
        .kv("qwen3moe.expert_used_count", Value::U32(2))
        .kv(
            "tokenizer.ggml.tokens",
            writer::string_array((0..1000).map(|i| format!("t{i}"))),
        )
        .tensor("token_embd.weight", GgmlType::Q8_0, &[64, 1000])
        .tensor("output_norm.weight", GgmlType::F32, &[64]);
    if !tied {
        w = w.tensor("output.weight", GgmlType::F16, &[64, 1000]);
    }
    w = w.tensor("rope_freqs.weight", GgmlType::F32, &[32]);
    for l in 0..2 {
        w = w
            .tensor(&format!("blk.{l}.attn_norm.weight"), GgmlType::F32, &[64])
            .tensor(&format!("blk.{l}.attn_q.weight"), GgmlType::F16, &[64, 64])
            .tensor(&format!("blk.{l}.attn_k.weight"), GgmlType::F16, &[64, 32])
            .tensor(
                &format!("blk.{l}.ffn_gate_inp.weight"),
                GgmlType::F32,
                &[64, 8],
            )
            .tensor(
                &format!("blk.{l}.ffn_gate_exps.weight"),
                GgmlType::Q8_0,
                &[64, 128, 8],
            )
            .tensor(
                &format!("blk.{l}.ffn_down_exps.weight"),
                GgmlType::Q8_0,
                &[128, 64, 8],
            )
            .tensor(
                &format!("blk.{l}.ffn_up_shexp.weight"),
                GgmlType::F16,
                &[64, 128],
            );
    }
    w
}

#[test]
fn moe_inventory_maps_to_the_core() {
    let (_d, a) = open_written(&moe_model(false));
    let inv = TensorInventory::from_artifact(&a);
    assert_eq!(inv.rows.len(), 18);
    assert_eq!(inv.tensor_bytes, 536_864);
    assert_eq!(inv.parameters, 420_064);
    assert!(!inv.tied_output);
    assert_eq!(inv.experts, Some((8, 2)));
    assert_eq!(inv.unknown_size_tensors, 0);

    let embd = inv.row("token_embd.weight").unwrap();
    assert_eq!(embd.counted, "1 row of 1,000");
    assert_eq!(embd.role, Role::TokenEmbedding);
    assert!(!embd.linear);
    assert_eq!(embd.type_name, "Q8_0");
    assert!((embd.bits_per_weight.unwrap() - 8.5).abs() < 1e-12);
    let exps = inv.row("blk.1.ffn_gate_exps.weight").unwrap();
    assert_eq!(exps.counted, "2/8 experts");
    assert_eq!(exps.layer, Some(1));
    assert_eq!(
        inv.row("blk.0.ffn_up_shexp.weight").unwrap().role,
        Role::SharedExpert
    );
    assert!(inv.row("blk.0.ffn_up_shexp.weight").unwrap().linear);
    assert!(!inv.row("blk.0.attn_norm.weight").unwrap().linear);

    let types: Vec<(&str, u64)> = inv
        .by_type
        .iter()
        .map(|t| (t.type_name.as_str(), t.bytes))
        .collect();
    assert_eq!(types, [("Q8_0", 346_528), ("F16", 185_344), ("F32", 4_992)]);
    let share: f64 = inv.by_type.iter().map(|t| t.share).sum();
    assert!((share - 1.0).abs() < 1e-12);
    let layers: Vec<(Option<u32>, u64)> = inv.by_layer.iter().map(|l| (l.layer, l.bytes)).collect();
    assert_eq!(
        layers,
        [(Some(0), 170_240), (Some(1), 170_240), (None, 196_384)]
    );

    let core = inv.to_core_inventory();
    assert_eq!(core.tensor_bytes, 536_864);
    assert_eq!(core.parameters, 420_064);
    assert_eq!(core.embedding_bytes, 68_000);
    assert_eq!(core.embedding_row_bytes, 68);
    assert_eq!(core.embedding_elements, 64_000);
    assert!(!core.tied_output);
    assert_eq!(core.output_bytes, 128_256);
    assert_eq!(core.layer_bytes, vec![170_240, 170_240]);
    assert_eq!(core.layer_routed_expert_bytes, vec![139_264, 139_264]);
    assert_eq!(core.other_bytes, 128);
    assert_eq!(core.linear_dense_elements, 93_696);
    assert_eq!(core.linear_dense_bytes, 189_440);
    assert_eq!(core.linear_expert_elements, 262_144);
    // Every byte is in exactly one bucket.
    assert_eq!(
        core.embedding_bytes
            + core.output_bytes
            + core.other_bytes
            + core.layer_bytes.iter().sum::<u64>(),
        core.tensor_bytes
    );
    assert_eq!(
        inventory_read_bytes(&core, Some((8, 2)), 1, ExpertCount::Expected),
        61_952 + 128_256 + 128 + 68 + 69_632
    );
}

#[test]
fn tied_embedding_is_the_output_projection() {
    let (_d, a) = open_written(&moe_model(true));
    let inv = TensorInventory::from_artifact(&a);
    assert!(inv.tied_output);
    let embd = inv.row("token_embd.weight").unwrap();
    assert_eq!(embd.counted, "full (tied output)");
    assert!(embd.linear);
    let core = inv.to_core_inventory();
    assert!(core.tied_output);
    assert_eq!(core.output_bytes, 256);
    assert_eq!(core.linear_dense_elements, 29_696 + 64_000);
    assert_eq!(core.linear_dense_bytes, 61_440 + 68_000);
    assert!(arch_figures(&a).unwrap().tied_embeddings);
}

#[test]
fn moe_figures_and_shape() {
    let (_d, a) = open_written(&moe_model(false));
    let f = arch_figures(&a).unwrap();
    assert_eq!(f.architecture, "qwen3moe");
    assert_eq!(f.layers, 2);
    assert_eq!(f.head_count, PerLayer::Uniform(4));
    assert_eq!(f.head_count_kv, PerLayer::Uniform(2));
    assert_eq!((f.key_length, f.value_length), (Some(16), Some(16)));
    assert_eq!(f.embedding_length, 64);
    assert_eq!(f.vocab_size, 1000);
    assert_eq!(f.native_context, Some(4096));
    assert_eq!(
        f.moe,
        Some(Moe {
            experts: 8,
            experts_used: 2,
            shared_experts: 0
        })
    );
    assert!(!f.tied_embeddings);
    let s = model_shape(&a, "tiny-moe").unwrap();
    assert_eq!(s.name, "tiny-moe");
    assert_eq!(s.layer_count(), 2);
    assert_eq!(s.provenance, llmbound::core::units::Provenance::File);
}

fn meta_only(arch: &str, kvs: Vec<(&str, Value)>) -> GgufWriter {
    let mut w = GgufWriter::new().kv("general.architecture", writer::string(arch));
    for (k, v) in kvs {
        let key = if k.starts_with("general.") || k.starts_with("tokenizer.") {
            k.to_string()
        } else {
            format!("{arch}.{k}")
        };
        w = w.kv(&key, v);
    }
    w.tensor("token_embd.weight", GgmlType::F16, &[64, 500])
}

fn base(layers: u32) -> Vec<(&'static str, Value)> {
    vec![
        ("block_count", Value::U32(layers)),
        ("embedding_length", Value::U32(64)),
        ("attention.head_count", Value::U32(4)),
        ("attention.head_count_kv", Value::U32(2)),
    ]
}

#[test]
fn gemma3_window_from_the_file() {
    let mut kv = base(18);
    kv.push(("attention.sliding_window", Value::U32(512)));
    let (_d, a) = open_written(&meta_only("gemma3", kv));
    let s = model_shape(&a, "g").unwrap();
    let sliding = s
        .layers
        .iter()
        .filter(|l| l.attention == Attention::Sliding { window: 512 })
        .count();
    assert_eq!(sliding, 15);
    assert!(s.tied_embeddings);
    // key_length absent: embedding_length / head_count.
    assert_eq!(s.layers[0].key_length, 16);
    assert_eq!(s.vocab_size, 500, "vocab from token_embd dim 1");
}

#[test]
fn sliding_window_pattern_array_or_period() {
    let mut kv = base(4);
    kv.push(("attention.sliding_window", Value::U32(128)));
    kv.push((
        "attention.sliding_window_pattern",
        writer::bool_array(&[true, false, false, true]),
    ));
    let (_d, a) = open_written(&meta_only("gemma3", kv));
    let f = arch_figures(&a).unwrap();
    assert_eq!(f.sliding_pattern, Some(vec![true, false, false, true]));
    let mut kv = base(8);
    kv.push(("attention.sliding_window", Value::U32(128)));
    kv.push(("attention.sliding_window_pattern", Value::U32(4)));
    let (_d, a) = open_written(&meta_only("cohere2", kv));
    let f = arch_figures(&a).unwrap();
    // A period is kept as such; the core applies it with the architecture's rule.
    assert_eq!(f.sliding_pattern, None);
    assert_eq!(f.keys.swa_period, Some(4));
    let s = model_shape(&a, "c").unwrap();
    assert_eq!(
        s.layers
            .iter()
            .map(|l| matches!(l.attention, Attention::Sliding { .. }))
            .collect::<Vec<_>>(),
        vec![true, true, true, false, true, true, true, false]
    );
}

#[test]
fn llama4_chunks_unless_window_is_zero() {
    let (_d, a) = open_written(&meta_only("llama4", base(8)));
    let s = model_shape(&a, "l").unwrap();
    assert_eq!(s.layers[0].attention, Attention::Chunked { chunk: 8192 });
    assert_eq!(s.layers[3].attention, Attention::Full);
    let mut kv = base(8);
    kv.push(("attention.sliding_window", Value::U32(0)));
    let (_d, a) = open_written(&meta_only("llama4", kv));
    let s = model_shape(&a, "l").unwrap();
    assert!(s.layers.iter().all(|l| l.attention == Attention::Full));
}

#[test]
fn mla_only_with_the_mla_keys() {
    let kv = vec![
        ("block_count", Value::U32(3)),
        ("embedding_length", Value::U32(7168)),
        ("attention.head_count", Value::U32(128)),
        ("attention.head_count_kv", Value::U32(1)),
        ("attention.key_length", Value::U32(576)),
        ("attention.value_length", Value::U32(512)),
        ("attention.kv_lora_rank", Value::U32(512)),
        ("rope.dimension_count", Value::U32(64)),
        ("attention.key_length_mla", Value::U32(192)),
        ("attention.value_length_mla", Value::U32(128)),
        ("expert_count", Value::U32(256)),
        ("expert_used_count", Value::U32(8)),
        ("expert_shared_count", Value::U32(1)),
    ];
    let (_d, a) = open_written(&meta_only("deepseek2", kv.clone()));
    let f = arch_figures(&a).unwrap();
    assert_eq!(
        f.mla,
        Some(Mla {
            kv_lora_rank: 512,
            rope_dim: 64,
            key_length_mla: 192,
            value_length_mla: 128
        })
    );
    assert_eq!(f.head_count_kv, PerLayer::Uniform(1));
    assert_eq!(f.key_length, Some(576));
    assert_eq!(f.moe.unwrap().shared_experts, 1);
    let old: Vec<(&str, Value)> = kv
        .into_iter()
        .filter(|(k, _)| !k.ends_with("_mla"))
        .collect();
    let (_d, a) = open_written(&meta_only("deepseek2", old));
    assert_eq!(arch_figures(&a).unwrap().mla, None);
}

#[test]
fn hybrids_read_ssm_figures() {
    let ssm = vec![
        ("ssm.conv_kernel", Value::U32(4)),
        ("ssm.inner_size", Value::U32(2048)),
        ("ssm.state_size", Value::U32(128)),
        ("ssm.group_count", Value::U32(1)),
    ];
    let mut kv = base(4);
    kv[3] = ("attention.head_count_kv", writer::u32_array(&[0, 0, 0, 2]));
    kv.extend(ssm.clone());
    let (_d, a) = open_written(&meta_only("granitehybrid", kv));
    let f = arch_figures(&a).unwrap();
    assert_eq!(
        f.ssm,
        Some(Ssm {
            d_conv: 4,
            d_inner: 2048,
            d_state: 128,
            n_group: 1
        })
    );
    assert_eq!(f.head_count_kv, PerLayer::List(vec![0, 0, 0, 2]));
    let s = model_shape(&a, "gh").unwrap();
    assert!(s.layers[0].recurrent && !s.layers[3].recurrent);
    assert_eq!(s.recurrent_bytes_per_sequence(), 3 * 1_076_224);

    let mut kv = base(2);
    kv.extend(ssm);
    let (_d, a) = open_written(&meta_only("falcon-h1", kv));
    let s = model_shape(&a, "fh").unwrap();
    assert!(
        s.layers
            .iter()
            .all(|l| l.recurrent && l.attention == Attention::Full)
    );
}

#[test]
fn unknown_architecture_is_guessed_with_a_warning() {
    let (_d, a) = open_written(&meta_only("mystery-lm", base(2)));
    let r = arch_report(&a).unwrap();
    assert!(r.warnings[0].contains("\"mystery-lm\""), "{:?}", r.warnings);
    assert!(r.warnings[0].contains("generic mystery-lm.* keys"));
    let s = model_shape(&a, "m").unwrap();
    assert!(s.warnings.iter().any(|w| w.contains("mystery-lm")));
}

#[test]
fn missing_kv_keys_fail_the_figures_not_the_inventory() {
    let kv = vec![("embedding_length", Value::U32(64))];
    let (_d, a) = open_written(&meta_only("llama", kv));
    let msg = arch_figures(&a).unwrap_err().to_string();
    assert!(msg.contains("\"llama.block_count\" is missing"), "{msg}");
    assert_eq!(TensorInventory::from_artifact(&a).rows.len(), 1);
    let kv = vec![("block_count", Value::U32(2))];
    let (_d, a) = open_written(&meta_only("llama", kv));
    let msg = arch_figures(&a).unwrap_err().to_string();
    assert!(
        msg.contains("\"llama.attention.head_count\" is missing"),
        "{msg}"
    );
    let mut kv = base(2);
    kv.push(("expert_count", Value::U32(8)));
    let (_d, a) = open_written(&meta_only("llama", kv));
    let msg = arch_figures(&a).unwrap_err().to_string();
    assert!(
        msg.contains("\"llama.expert_used_count\" is missing"),
        "{msg}"
    );
    let mut kv = base(2);
    kv.push(("attention.key_length_mla", Value::U32(192)));
    let (_d, a) = open_written(&meta_only("deepseek2", kv));
    let msg = arch_figures(&a).unwrap_err().to_string();
    // llama.cpp needs both MLA head sizes (kv_lora_rank and rope dims it can do without).
    assert!(msg.contains("value_length_mla\" is missing"), "{msg}");
}

#[test]
fn head_count_kv_defaults_to_head_count() {
    let kv = vec![
        ("block_count", Value::U32(2)),
        ("embedding_length", Value::U32(64)),
        ("attention.head_count", Value::U32(4)),
        ("vocab_size", Value::U32(32000)),
    ];
    let (_d, a) = open_written(&meta_only("llama", kv));
    let r = arch_report(&a).unwrap();
    assert_eq!(r.figures.head_count_kv, PerLayer::Uniform(4));
    assert_eq!(r.figures.vocab_size, 32000);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("head_count_kv is absent"))
    );
}

fn qwen_header() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        here.join("../shared/data/llama-bench-h200/qwen3-8b-q8_0-synth.header.gguf"),
        here.join("shared/data/llama-bench-h200/qwen3-8b-q8_0-synth.header.gguf"),
        PathBuf::from("/work/shared/data/llama-bench-h200/qwen3-8b-q8_0-synth.header.gguf"),
    ];
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .expect("shared/data/llama-bench-h200/qwen3-8b-q8_0-synth.header.gguf")
}

#[test]
fn qwen3_8b_header_made_full_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("qwen3-8b-q8_0-synth.gguf");
    std::fs::write(&p, std::fs::read(qwen_header()).unwrap()).unwrap();
    // The header alone is a partial download of the whole file.
    let partial = open(&p).unwrap();
    assert_eq!(partial.header().data_start, 24_224);
    assert_eq!(partial.missing_bytes(), 8_703_561_728);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(8_703_585_952)
        .unwrap();
    let a = open(&p).unwrap();
    assert_eq!(a.missing_bytes(), 0);
    assert_eq!(a.file_bytes(), 8_703_585_952);
    assert_eq!(a.tensor_count(), 399);
    let inv = TensorInventory::from_artifact(&a);
    // llama-bench's model_size and model_n_params for this file.
    assert_eq!(inv.tensor_bytes, 8_703_561_728);
    assert_eq!(inv.parameters, 8_190_735_360);
    assert!(!inv.tied_output);
    let core = inv.to_core_inventory();
    assert_eq!(core.layer_bytes.len(), 36);
    let embd = 4096u64 * 151_936 / 32 * 34;
    assert_eq!(core.embedding_bytes, embd);
    assert_eq!(core.embedding_row_bytes, 4096 / 32 * 34);
    assert_eq!(
        core.embedding_bytes
            + core.output_bytes
            + core.other_bytes
            + core.layer_bytes.iter().sum::<u64>(),
        core.tensor_bytes
    );
    let f = arch_figures(&a).unwrap();
    assert_eq!(f.architecture, "qwen3");
    assert_eq!(f.layers, 36);
    assert_eq!(f.head_count_kv, PerLayer::Uniform(8));
    assert_eq!((f.key_length, f.value_length), (Some(128), Some(128)));
    assert_eq!(f.vocab_size, 151_936);
    assert_eq!(f.native_context, Some(40_960));
    assert!(!f.tied_embeddings);
    let s = model_shape(&a, "qwen3-8b").unwrap();
    assert_eq!(s.layer_count(), 36);
    assert!(s.layers.iter().all(|l| l.head_count_kv == 8
        && l.key_length == 128
        && l.value_length == 128
        && l.attention == Attention::Full));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

/// The real gemma-3-270m file when `LLMBOUND_GEMMA_GGUF` points at it.
#[test]
fn gemma3_270m_when_available() {
    let Some(path) = std::env::var_os("LLMBOUND_GEMMA_GGUF") else {
        skipped!("note: LLMBOUND_GEMMA_GGUF is unset; the gemma-3-270m checks were skipped");
        return;
    };
    let a = open(&path).unwrap();
    assert_eq!(a.file_bytes(), 253_113_024);
    let inv = TensorInventory::from_artifact(&a);
    assert_eq!(inv.rows.len(), 236);
    assert_eq!(inv.parameters, 268_098_176);
    assert!(inv.tied_output);
    assert_eq!(inv.row("token_embd.weight").unwrap().type_name, "Q8_0");
    let s = model_shape(&a, "gemma-3-270m").unwrap();
    assert_eq!(s.layer_count(), 18);
    assert!(s.tied_embeddings);
    let sliding = s
        .layers
        .iter()
        .filter(|l| l.attention == Attention::Sliding { window: 512 })
        .count();
    assert_eq!(sliding, 15);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert!(a.all_warnings().is_empty(), "{:?}", a.all_warnings());
    let core = inv.to_core_inventory();
    assert!(core.tied_output);
    assert_eq!(core.tensor_bytes, 246_587_904);
    assert_eq!(core.layer_bytes.len(), 18);
}

/// `summary` (what `report --gguf` keeps) has every total of the full inventory, no rows.
#[test]
fn the_summary_is_the_inventory_without_rows() {
    let mut files = vec![moe_model(false), moe_model(true)];
    // Layers out of order with a gap, a layer number written with a leading zero (its width
    // is not read, as before), an unknown type.
    files.push(
        GgufWriter::new()
            .kv("general.architecture", writer::string("llama"))
            .tensor("token_embd.weight", GgmlType::Q8_0, &[64, 100])
            .tensor("blk.3.ffn_up.weight", GgmlType::F16, &[64, 96])
            .tensor("blk.0.ffn_gate.weight", GgmlType::F16, &[64, 80])
            .tensor("blk.07.ffn_up.weight", GgmlType::F16, &[64, 500])
            .tensor("blk.1.ffn_up_shexp.weight", GgmlType::F16, &[64, 48])
            .tensor_raw(b"blk.2.odd.weight", 99, &[64, 64], None, Some(0)),
    );
    let mut opened = Vec::new();
    for w in &files {
        opened.push(open_written(w));
    }
    let mut artifacts: Vec<&Artifact> = opened.iter().map(|(_, a)| a).collect();
    let gemma = std::env::var_os("LLMBOUND_GEMMA_GGUF").map(|p| open(&p).unwrap());
    match &gemma {
        Some(a) => artifacts.push(a),
        None => eprintln!("note: LLMBOUND_GEMMA_GGUF is unset; gemma left out of this check"),
    }
    for a in artifacts {
        let full = TensorInventory::from_artifact(a);
        let summary = TensorInventory::summary(a);
        assert!(summary.rows.is_empty());
        assert_eq!(full.rows.len(), a.tensor_count());
        assert_eq!(full.by_type, summary.by_type);
        assert_eq!(full.by_layer, summary.by_layer);
        assert_eq!(
            (
                full.parameters,
                full.tensor_bytes,
                full.unknown_size_tensors
            ),
            (
                summary.parameters,
                summary.tensor_bytes,
                summary.unknown_size_tensors
            )
        );
        assert_eq!(
            (full.tied_output, full.experts),
            (summary.tied_output, summary.experts)
        );
        assert_eq!(full.to_core_inventory(), summary.to_core_inventory());
    }
    let core = TensorInventory::summary(&opened[2].1).to_core_inventory();
    // blk.07 is layer 7 (its bytes count there) but its width is not read.
    assert_eq!(core.layer_bytes.len(), 8);
    assert_eq!(core.layer_bytes[3], 64 * 96 * 2);
    assert_eq!(core.layer_bytes[7], 64 * 500 * 2);
    assert_eq!(core.layer_bytes[5], 0);
    assert_eq!(core.feed_forward.length, 96);
    assert_eq!(core.feed_forward.shared_expert_length, 48);
    assert_eq!(core.embedding_row_bytes, 64 / 32 * 34);
}
