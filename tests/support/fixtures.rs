//! Small llama-shaped GGUF models for the remote and library tests (written by the test).
#![allow(dead_code)]

use llmbound::gguf::writer::{self, GgufWriter};
use llmbound::gguf::{GgmlType, Value};

/// The tensors of a tiny llama model with `layers` layers, as (name, type, dims).
fn tensors(layers: u32) -> Vec<(String, GgmlType, Vec<u64>)> {
    let mut t = vec![
        (
            "token_embd.weight".to_string(),
            GgmlType::Q8_0,
            vec![128, 2000],
        ),
        ("output_norm.weight".to_string(), GgmlType::F32, vec![128]),
        ("output.weight".to_string(), GgmlType::Q6_K, vec![256, 2000]),
    ];
    for l in 0..layers {
        for (n, dims, ty) in [
            ("attn_q", vec![128u64, 128], GgmlType::Q8_0),
            ("attn_k", vec![128, 32], GgmlType::Q8_0),
            ("attn_v", vec![128, 32], GgmlType::Q8_0),
            ("attn_output", vec![128, 128], GgmlType::Q8_0),
            ("ffn_gate", vec![128, 512], GgmlType::Q8_0),
            ("ffn_up", vec![128, 512], GgmlType::Q8_0),
            ("ffn_down", vec![512, 256], GgmlType::Q4_K),
            ("attn_norm", vec![128], GgmlType::F32),
        ] {
            t.push((format!("blk.{l}.{n}.weight"), ty, dims));
        }
    }
    t
}

fn meta(w: GgufWriter, name: &str, layers: u32) -> GgufWriter {
    meta_trained(w, name, layers, 8192)
}

fn meta_trained(w: GgufWriter, name: &str, layers: u32, trained: u32) -> GgufWriter {
    w.kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string(name))
        .kv("llama.block_count", Value::U32(layers))
        .kv("llama.embedding_length", Value::U32(128))
        .kv("llama.context_length", Value::U32(trained))
        .kv("llama.attention.head_count", Value::U32(8))
        .kv("llama.attention.head_count_kv", Value::U32(2))
        .kv(
            "tokenizer.ggml.tokens",
            writer::string_array((0..2000).map(|i| format!("t{i}"))),
        )
}

/// One file.
pub fn tiny(name: &str, layers: u32) -> GgufWriter {
    let mut w = meta(GgufWriter::new(), name, layers);
    for (n, ty, d) in tensors(layers) {
        w = w.tensor(&n, ty, &d);
    }
    w
}

/// One file trained on `trained` tokens (`llama.context_length`).
pub fn tiny_trained(name: &str, layers: u32, trained: u32) -> GgufWriter {
    let mut w = meta_trained(GgufWriter::new(), name, layers, trained);
    for (n, ty, d) in tensors(layers) {
        w = w.tensor(&n, ty, &d);
    }
    w
}

/// The same model split into `count` shards (metadata in the first, as gguf-split does).
pub fn split(name: &str, layers: u32, count: u16) -> Vec<GgufWriter> {
    let all = tensors(layers);
    let per = all.len().div_ceil(count as usize);
    (0..count)
        .map(|i| {
            let mut w = GgufWriter::new();
            if i == 0 {
                w = meta(w, name, layers);
            }
            w = w
                .kv("split.no", Value::U16(i))
                .kv("split.count", Value::U16(count))
                .kv("split.tensors.count", Value::I32(all.len() as i32));
            for (n, ty, d) in all.iter().skip(i as usize * per).take(per) {
                w = w.tensor(n, *ty, d);
            }
            w
        })
        .collect()
}

/// A projector-like file (clip architecture), small.
pub fn projector() -> GgufWriter {
    GgufWriter::new()
        .kv("general.architecture", writer::string("clip"))
        .tensor("mm.0.weight", GgmlType::F16, &[64, 64])
}
