//! The GGUF headers the fuzzer starts from: written by `examples/write_fuzz_seeds.rs` into
//! `fuzz/corpus/gguf_header`, and read back by `tests/gguf_robust.rs`.

#![allow(dead_code)]

use llmbound::gguf::writer::{self, GgufWriter};
use llmbound::gguf::{Endian, GgmlType, Value};

/// Three small models: v3 little- and big-endian, v2 little-endian.
pub fn seeds() -> Vec<Vec<u8>> {
    let model = |endian, version| {
        GgufWriter::new()
            .version(version)
            .endian(endian)
            .kv("general.architecture", writer::string("llama"))
            .kv("llama.block_count", Value::U32(2))
            .kv("llama.attention.head_count_kv", writer::u32_array(&[8, 8]))
            .kv(
                "tokenizer.ggml.tokens",
                writer::string_array(["a", "bc", "def"]),
            )
            .kv("general.alignment", Value::U32(32))
            .kv(
                "nested",
                Value::Array {
                    element_type: llmbound::gguf::ValueType::Array,
                    items: vec![writer::bool_array(&[true]), writer::bool_array(&[])],
                },
            )
            .tensor("token_embd.weight", GgmlType::Q8_0, &[64, 3])
            .tensor("blk.0.attn_q.weight", GgmlType::Q4_K, &[256, 2])
            .tensor("output_norm.weight", GgmlType::F32, &[64])
            .header_bytes()
    };
    vec![
        model(Endian::Little, 3),
        model(Endian::Big, 3),
        model(Endian::Little, 2),
    ]
}

/// Every seed with its corpus file name.
pub fn corpus() -> Vec<(&'static str, Vec<u8>)> {
    let names = ["v3-little-endian", "v3-big-endian", "v2-little-endian"];
    let mut v: Vec<(&'static str, Vec<u8>)> = names.into_iter().zip(seeds()).collect();
    let moe = GgufWriter::new()
        .kv("general.architecture", writer::string("deepseek2"))
        .kv("deepseek2.block_count", Value::U32(2))
        .kv("deepseek2.embedding_length", Value::U32(64))
        .kv("deepseek2.attention.head_count", Value::U32(4))
        .kv("deepseek2.attention.head_count_kv", Value::U32(1))
        .kv("deepseek2.attention.key_length", Value::U32(576))
        .kv("deepseek2.attention.kv_lora_rank", Value::U32(512))
        .kv("deepseek2.rope.dimension_count", Value::U32(64))
        .kv("deepseek2.attention.key_length_mla", Value::U32(192))
        .kv("deepseek2.attention.value_length_mla", Value::U32(128))
        .kv("deepseek2.expert_count", Value::U32(8))
        .kv("deepseek2.expert_used_count", Value::U32(2))
        .tensor("token_embd.weight", GgmlType::F16, &[64, 8])
        .tensor("blk.0.ffn_gate_exps.weight", GgmlType::Q8_0, &[64, 32, 8])
        .tensor("blk.1.attn_kv_a_mqa.weight", GgmlType::BF16, &[64, 576])
        .header_bytes();
    let hybrid = GgufWriter::new()
        .kv("general.architecture", writer::string("granitehybrid"))
        .kv("granitehybrid.block_count", Value::U32(4))
        .kv("granitehybrid.embedding_length", Value::U32(64))
        .kv("granitehybrid.attention.head_count", Value::U32(4))
        .kv(
            "granitehybrid.attention.head_count_kv",
            writer::u32_array(&[0, 0, 0, 2]),
        )
        .kv("granitehybrid.ssm.conv_kernel", Value::U32(4))
        .kv("granitehybrid.ssm.inner_size", Value::U32(128))
        .kv("granitehybrid.ssm.state_size", Value::U32(16))
        .kv("granitehybrid.ssm.group_count", Value::U32(1))
        .kv(
            "granitehybrid.attention.sliding_window_pattern",
            Value::U32(4),
        )
        .tensor("blk.0.ssm_in.weight", GgmlType::Q4_0, &[64, 64])
        .header_bytes();
    v.push(("v3-deepseek2-moe", moe));
    v.push(("v3-granitehybrid", hybrid));
    v
}
