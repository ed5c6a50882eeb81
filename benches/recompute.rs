//! A full recompute of a scenario (every bound, the decode curve, placement): the work the
//! TUI does on every key press. Run with `cargo bench --bench recompute`.

use criterion::{Criterion, criterion_group, criterion_main};
use llmbound::core::evaluate;
use llmbound::profile::{Catalog, load};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let cat = Catalog::builtin();
    for id in [
        "default",
        "qwen3-32b-rtx-4090-partial",
        "gemma-3-270m-cpu-vm",
    ] {
        let s = load::scenario(&cat, &cat.scenario(id).unwrap()).unwrap();
        c.bench_function(&format!("evaluate {id}"), |b| {
            b.iter(|| evaluate(black_box(&s)).unwrap())
        });
    }
    c.bench_function("load built-in catalogue", |b| b.iter(Catalog::builtin));
}

criterion_group!(benches, bench);
criterion_main!(benches);
