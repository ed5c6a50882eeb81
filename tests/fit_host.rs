//! `-fit` without devices, against llama.cpp b11434's own runs: tests/fixtures/llama-cpp/
//! fit-host/fit-host.json (written by scripts/oracle/fit_host.py, never in CI: the CPU build of
//! llama-fit-params with no `--rpc` devices, on a machine whose total memory the fixture
//! records). Without a GPU llama.cpp weighs the host's projection against the CPU device's
//! total less the 1024 MiB margin and leaves the weights in `CPU_REPACK` out of it; each case's
//! fitted arguments (or refusal) must be llama.cpp's, each dry run's host model, the part of it
//! in `CPU_REPACK` and its context equal to llama.cpp's to the byte, and its compute buffer
//! within [`COMPUTE_BAND`] (to the byte on at least [`COMPUTE_EXACT_FLOOR`] dry runs).

#[macro_use]
#[path = "support/skip.rs"]
mod skip;
#[path = "support/header_model.rs"]
mod header_model;

use std::path::{Path, PathBuf};

use llmbound::core::cache::CacheType;
use llmbound::core::kv::CacheSettings;
use llmbound::core::placement::{self, FitSettings, Placement};
use llmbound::core::units::Bytes;
use llmbound::profile::Catalog;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Fixture {
    schema: String,
    llama_cpp: Info,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Info {
    build: u32,
    host_total_bytes: u64,
    host_cpu: HostCpu,
}

#[derive(Debug, Deserialize)]
struct HostCpu {
    avx2: bool,
}

#[derive(Debug, Deserialize)]
struct Case {
    model: String,
    header: String,
    args: Vec<String>,
    ok: bool,
    arguments: Option<String>,
    error: Option<String>,
    dry_runs: Vec<DryRun>,
}

#[derive(Debug, Deserialize)]
struct DryRun {
    n_ctx: u32,
    buffers: Vec<Buffer>,
}

#[derive(Debug, Deserialize)]
struct Buffer {
    buft: String,
    model: u64,
    context: u64,
    compute: u64,
}

/// Cases in the fixture (so a regenerated fixture that lost its grid fails).
const CASES_FLOOR: usize = 14;

/// Dry runs whose host compute buffer is llama.cpp's to the byte.
const COMPUTE_EXACT_FLOOR: usize = 20;

/// The host compute buffer's largest difference allowed (of 21 dry runs, 1 is not to the
/// byte: DeepSeek-V3 4 KiB high, in the single-backend graph replay).
const COMPUTE_BAND: u64 = 1 << 20;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-cpp/fit-host")
}

fn fixture() -> Option<Fixture> {
    let text = std::fs::read_to_string(dir().join("fit-host.json")).ok()?;
    let f: Fixture = serde_json::from_str(&text).expect("fit-host.json parses");
    assert_eq!(f.schema, "llmbound-llama-cpp-fit-host/1");
    Some(f)
}

/// The cache flags of a case (`--swa-full` takes no value).
fn cache_settings(args: &[String]) -> CacheSettings {
    let mut cs = CacheSettings::default();
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).map(String::as_str).unwrap_or("");
        match args[i].as_str() {
            "--swa-full" => {
                cs.swa_full = true;
                i += 1;
                continue;
            }
            "-np" => cs.sequences = v.parse().unwrap(),
            "-ctk" => cs.type_k = CacheType::parse(v).unwrap(),
            "-ctv" => cs.type_v = CacheType::parse(v).unwrap(),
            "-ub" => cs.ubatch = v.parse().unwrap(),
            "-c" | "-b" => {}
            f => panic!("unread flag {f}"),
        }
        i += 2;
    }
    cs
}

/// llama.cpp's host buffers of one dry run: (model, of it CPU_REPACK, context, compute).
fn host_of(d: &DryRun) -> (u64, u64, u64, u64) {
    let sum = |f: fn(&Buffer) -> u64| d.buffers.iter().map(f).sum::<u64>();
    let repack = d
        .buffers
        .iter()
        .filter(|b| b.buft == "CPU_REPACK")
        .map(|b| b.model)
        .sum();
    (
        sum(|b| b.model),
        repack,
        sum(|b| b.context),
        sum(|b| b.compute),
    )
}

fn ours(p: &Placement) -> (u64, u64, u64, u64) {
    (
        p.host.model.0,
        p.host_repack.0,
        p.host.context.0,
        p.host.compute.0,
    )
}

#[test]
fn fit_without_devices_is_llama_cpps() {
    let Some(f) = fixture() else {
        skipped!("no fit-host fixture in {}", dir().display());
        return;
    };
    assert_eq!(f.llama_cpp.build, 11434);
    // the fixture's machine repacks as `HostCpu::X86Avx2` does
    assert!(f.llama_cpp.host_cpu.avx2);
    assert!(f.cases.len() >= CASES_FLOOR, "{} cases", f.cases.len());
    let cat = Catalog::builtin();
    let mut problems = Vec::new();
    let (mut plans, mut runs, mut exact) = (0, 0, 0);
    for c in &f.cases {
        let l = header_model::load(&cat, &dir().join(&c.header));
        let parsed = placement::parse_args(&c.args, &[]).unwrap();
        let cs = cache_settings(&parsed.rest);
        let fs = FitSettings {
            n_ctx: parsed.n_ctx,
            n_seq: cs.sequences as u32,
            kv_unified: cs.kv_unified,
            host_free: Bytes(f.llama_cpp.host_total_bytes),
            ..Default::default()
        };
        let (shape, ff) = (&l.shape, l.ff);
        let ctx_at = |n: u32| placement::context_figures(shape, &ff, &cs, n);
        let id = format!("{} {}", c.model, c.args.join(" "));
        match (
            placement::fit(&l.model, &[], &parsed.settings, &fs, &ctx_at),
            c.ok,
        ) {
            (Ok(plan), true) if Some(plan.arguments()) == c.arguments => {
                plans += 1;
                // one projection per llama.cpp dry run
                if plan.probes as usize != c.dry_runs.len() {
                    problems.push(format!(
                        "{id}: {} projections, llama.cpp {} dry runs",
                        plan.probes,
                        c.dry_runs.len()
                    ));
                }
            }
            (Err(e), false) if Some(&e.0) == c.error.as_ref() => plans += 1,
            (got, _) => problems.push(format!(
                "{id}: llmbound {:?}, llama.cpp {:?}",
                got.map(|p| p.arguments()).map_err(|e| e.0),
                c.arguments.as_ref().or(c.error.as_ref())
            )),
        }
        for d in &c.dry_runs {
            let ctx = placement::context_figures(&l.shape, &l.ff, &cs, d.n_ctx);
            let p = placement::place(&l.model, &ctx, &[], &parsed.settings).unwrap();
            let (got, want) = (ours(&p), host_of(d));
            exact += usize::from(got == want);
            if got.0 == want.0
                && got.1 == want.1
                && got.2 == want.2
                && got.3.abs_diff(want.3) <= COMPUTE_BAND
            {
                runs += 1;
            } else {
                problems.push(format!(
                    "{id} at -c {}: host (model, CPU_REPACK, context, compute) {got:?}, llama.cpp {want:?}",
                    d.n_ctx
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{plans} plans and {runs} dry runs equal; differing:\n{}",
        problems.join("\n")
    );
    assert!(
        exact >= COMPUTE_EXACT_FLOOR,
        "{exact} dry runs to the byte (at least {COMPUTE_EXACT_FLOOR})"
    );
    eprintln!("fit-host: {plans} plans equal, {runs} dry runs in the band, {exact} to the byte");
}
