//! Measure this machine's memory bandwidth in every mode and print the figures and the
//! machine profile (seconds of work; run by hand on a quiet machine):
//! `cargo run --release --example measure_bandwidth`.

use llmbound::detect::{self, Mode};

fn main() {
    for mode in [Mode::Quick, Mode::Normal, Mode::Thorough] {
        let d = detect::detect(mode, &mut |_, _| {}).unwrap();
        let r = &d.bandwidth;
        eprintln!(
            "{:>8}: {} × {} MiB, {} threads: best {:.2} GB/s, median {:.2} GB/s, worst {:.2} GB/s; load {:?}, busy before {:?}, others during {:?}",
            mode.label(),
            r.samples.len(),
            r.bytes_per_repetition >> 20,
            r.threads,
            r.best / 1e9,
            r.median / 1e9,
            r.worst / 1e9,
            d.load.load_average,
            d.load.busy_fraction,
            d.others_during
        );
        for w in &d.warnings {
            eprintln!("          warning: {w}");
        }
        if mode == Mode::Normal {
            eprintln!("{}", d.to_toml("this-machine").unwrap());
        }
    }
}
