//! Opening a GGUF header (and listing its inventory): the real gemma-3-270m file when
//! `LLMBOUND_GEMMA_GGUF` points at it, else a generated file of the same shape (a
//! 262,144-token tokenizer and 236 tensors over 18 layers).
//!
//! One-shot modes for peak-memory and throughput measurements (`/usr/bin/time -v`):
//! `LLMBOUND_OPEN_ONCE=FILE` opens FILE once and prints a summary;
//! `LLMBOUND_HASH_ONCE=FILE` hashes FILE on the worker thread and prints the rate.

use criterion::{Criterion, criterion_group};
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, HashJob, TensorInventory, Value, open};
use llmbound::inspect;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

fn generated(dir: &std::path::Path) -> PathBuf {
    let tokens: Vec<String> = (0..262_144).map(|i| format!("<tok{i}>")).collect();
    let scores: Vec<f32> = (0..262_144).map(|i| i as f32).collect();
    let mut w = GgufWriter::new()
        .kv("general.architecture", writer::string("gemma3"))
        .kv("gemma3.block_count", Value::U32(18))
        .kv("gemma3.embedding_length", Value::U32(640))
        .kv("gemma3.attention.head_count", Value::U32(4))
        .kv("gemma3.attention.head_count_kv", Value::U32(1))
        .kv("gemma3.attention.sliding_window", Value::U32(512))
        .kv("tokenizer.ggml.tokens", writer::string_array(&tokens))
        .kv("tokenizer.ggml.scores", writer::f32_array(&scores))
        .tensor("token_embd.weight", GgmlType::Q8_0, &[640, 262_144])
        .tensor("output_norm.weight", GgmlType::F32, &[640]);
    for l in 0..18 {
        for n in [
            "attn_norm",
            "post_attention_norm",
            "ffn_norm",
            "post_ffw_norm",
            "attn_q_norm",
            "attn_k_norm",
        ] {
            w = w.tensor(&format!("blk.{l}.{n}.weight"), GgmlType::F32, &[640]);
        }
        for (n, t, d) in [
            ("attn_q", GgmlType(6), [640u64, 1024]),
            ("attn_k", GgmlType(6), [640, 256]),
            ("attn_v", GgmlType::Q8_0, [640, 256]),
            ("attn_output", GgmlType::Q4_K, [1024, 640]),
            ("ffn_gate", GgmlType(6), [640, 2048]),
            ("ffn_up", GgmlType(6), [640, 2048]),
            ("ffn_down", GgmlType::Q6_K, [2048, 640]),
        ] {
            w = w.tensor(&format!("blk.{l}.{n}.weight"), t, &d);
        }
    }
    let p = dir.join("generated-gemma-shape.gguf");
    w.write_file(&p, Data::Sparse)
        .expect("write the generated file");
    p
}

fn bench(c: &mut Criterion, path: &std::path::Path, label: &str) {
    c.bench_function(&format!("open header ({label})"), |b| {
        b.iter(|| black_box(open(path).expect("open")))
    });
    let a = open(path).expect("open");
    c.bench_function(&format!("tensor inventory ({label})"), |b| {
        b.iter(|| black_box(TensorInventory::from_artifact(&a).to_core_inventory()))
    });
    // `inspect`'s work after the header: rows made as they are written, to a sink.
    c.bench_function(&format!("inspect text output ({label})"), |b| {
        b.iter(|| {
            let r = inspect::build(&a, inspect::Sort::Offset, false);
            inspect::write_text(&r, inspect::Group::None, false, &mut std::io::sink()).unwrap();
        })
    });
}

fn once_modes() -> bool {
    if let Some(p) = std::env::var_os("LLMBOUND_OPEN_ONCE") {
        let t = Instant::now();
        let a = open(&p).expect("open");
        let inv = TensorInventory::from_artifact(&a);
        println!(
            "opened {} in {:.2} ms: {} tensors, {} parameters, {} tensor bytes, data at byte {}",
            PathBuf::from(&p).display(),
            t.elapsed().as_secs_f64() * 1e3,
            inv.rows.len(),
            inv.parameters,
            inv.tensor_bytes,
            a.header().data_start
        );
        return true;
    }
    if let Some(p) = std::env::var_os("LLMBOUND_HASH_ONCE") {
        let t = Instant::now();
        let d = HashJob::spawn(vec![PathBuf::from(&p)])
            .wait()
            .expect("hash");
        let secs = t.elapsed().as_secs_f64();
        println!(
            "sha256 {} of {} bytes in {:.3} s = {:.0} MB/s",
            d[0].sha256,
            d[0].bytes,
            secs,
            d[0].bytes as f64 / secs / 1e6
        );
        return true;
    }
    false
}

fn benches(c: &mut Criterion) {
    match std::env::var_os("LLMBOUND_GEMMA_GGUF") {
        Some(p) => bench(c, &PathBuf::from(p), "gemma-3-270m"),
        None => {
            let dir = tempfile::tempdir().expect("temp dir");
            let p = generated(dir.path());
            bench(c, &p, "generated gemma-3-270m shape");
        }
    }
}

criterion_group!(gguf_open, benches);

fn main() {
    if once_modes() {
        return;
    }
    gguf_open();
    Criterion::default().configure_from_args().final_summary();
}
