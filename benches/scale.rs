//! Scale: a 1,000,000-tensor GGUF header parsed and summed up as `report --gguf` keeps it;
//! 200,000 tensors grouped by layer (the `inspect` listing and the explorer's table); 200,000
//! llama-bench rows parsed, parsed and held against their ceilings, and reported as text and JSON. Inputs are generated here. Not run in CI: `cargo bench --bench scale`.

use criterion::{Criterion, criterion_group, criterion_main};
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, TensorInventory, open, read_header};
use llmbound::inspect::{self, Group, Sort};
use llmbound::tui::views::tensors::{Grouping, TensorView};
use std::hint::black_box;
use std::io::Cursor;

/// `n` F32 tensors of 32 elements, `per_layer` to a layer.
fn many(n: usize, per_layer: usize) -> GgufWriter {
    let mut w = GgufWriter::new().kv("general.architecture", writer::string("llama"));
    for i in 0..n {
        w = w.tensor(
            &format!("blk.{}.t{}.weight", i / per_layer, i % per_layer),
            GgmlType::F32,
            &[32],
        );
    }
    w
}

fn parse_million(c: &mut Criterion) {
    let header = many(1_000_000, 16).header_bytes();
    let file_len = header.len() as u64 + 1_000_000 * 128;
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    g.bench_function("parse a 1,000,000-tensor header", |b| {
        b.iter(|| {
            let h = read_header(Cursor::new(black_box(&header)), file_len).unwrap();
            black_box(h.tensors.len())
        })
    });
    // What `report --gguf` keeps of the tensors: totals and the core inventory, no rows.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("1m.gguf");
    many(1_000_000, 16).write_file(&p, Data::Sparse).unwrap();
    let a = open(&p).unwrap();
    g.bench_function("inventory summary of 1,000,000 tensors", |b| {
        b.iter(|| black_box(TensorInventory::summary(black_box(&a)).to_core_inventory()))
    });
    g.finish();
}

fn group_by_layer(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("200k.gguf");
    many(200_000, 1).write_file(&p, Data::Sparse).unwrap();
    let a = open(&p).unwrap();
    let inv = TensorInventory::from_artifact(&a);
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    g.bench_function("inspect --group layer, 200,000 layers", |b| {
        b.iter(|| {
            let r = inspect::build(&a, Sort::Offset, false);
            inspect::write_text(&r, Group::Layer, false, &mut std::io::sink()).unwrap();
        })
    });
    g.bench_function("explorer rebuild by layer, 200,000 tensors", |b| {
        b.iter(|| {
            let mut v = TensorView {
                group: Grouping::Layer,
                ..TensorView::default()
            };
            v.rebuild(black_box(&inv.rows));
            black_box(v.lines.len())
        })
    });
    g.finish();
}

const ROW: &str = r#"{"build_commit": "abc1234", "build_number": 1, "cpu_info": "AMD EPYC", "gpu_info": "", "backends": "CPU", "model_filename": "m.gguf", "model_type": "llama 1B Q4_K - Medium", "model_size": 100000000, "model_n_params": 200000000, "n_batch": 2048, "n_ubatch": 512, "n_threads": 1, "type_k": "f16", "type_v": "f16", "n_gpu_layers": 0, "flash_attn": 0, "n_prompt": 0, "n_gen": 128, "n_depth": 0, "test_time": "2026-11-30T01:23:11Z", "avg_ts": 10.5, "stddev_ts": 0.1, "samples_ts": [10.4, 10.6]}"#;

fn bench_rows(c: &mut Criterion) {
    let text = vec![ROW; 200_000].join("\n");
    let cat = llmbound::profile::Catalog::load();
    let base = llmbound::workspace::scenario(
        &cat,
        &llmbound::build::ScenarioOptions {
            scenario: Some("gemma-3-270m-cpu-vm".into()),
            ..Default::default()
        },
    )
    .expect("the built-in scenario");
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    g.bench_function("llama-bench parse, 200,000 rows", |b| {
        b.iter(|| {
            let rows = llmbound::bench::parse_str("big.jsonl", black_box(&text)).unwrap();
            black_box(rows.len())
        })
    });
    g.bench_function("llama-bench import, 200,000 rows", |b| {
        b.iter(|| {
            let rows = llmbound::bench::parse_str("big.jsonl", black_box(&text)).unwrap();
            let r = llmbound::bench::evaluate(&rows, &base, &Default::default());
            black_box(r.rows.len())
        })
    });
    // What `llmbound bench` does end to end (less reading the files): the report of 200,000
    // rows of 50 depths, written as text and as JSON.
    let depths = (0..200_000)
        .map(|i| {
            ROW.replace(
                "\"n_depth\": 0",
                &format!("\"n_depth\": {}", (i % 50) * 512),
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    for (name, json) in [
        ("llama-bench import and text report, 200,000 rows", false),
        ("llama-bench import and JSON report, 200,000 rows", true),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let rows = llmbound::bench::parse_str("big.jsonl", black_box(&depths)).unwrap();
                let r = llmbound::bench::evaluate(&rows, &base, &Default::default());
                let mut out = std::io::sink();
                if json {
                    llmbound::bench::write_json(&r, &mut out).unwrap();
                } else {
                    llmbound::bench::write_text(&r, &mut out).unwrap();
                }
                black_box(r.rows.len())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, parse_million, group_by_layer, bench_rows);
criterion_main!(benches);
