//! Every figure true, every verdict honest: a claim is judged at the context it was made at
//! and the verdict says how far it reaches; every figure a ranking calls an upper bound is the
//! inventory ceiling and is at least every other ceiling printed for that row; each machine of
//! a comparison runs at its own placement.

use assert_cmd::Command;
use llmbound::compare::{CompareFigures, compare};
use llmbound::core::claim::ClaimOutcome;
use llmbound::core::decode;
use llmbound::core::{Scenario, check_claim, evaluate};
use llmbound::library::{Store, discover_in, evaluate as library_evaluate, scan};
use llmbound::profile::{Catalog, load};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

#[path = "support/fixtures.rs"]
mod fixtures;

/// The real gemma-3-270m Q4_K_M header, extended (sparse) to the real file's 253,113,024 bytes.
fn gemma(dir: &Path) -> PathBuf {
    let header = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bench/cpu/gemma-3-270m-q4_k_m.gguf-header");
    let p = dir.join("gemma-3-270m-q4_k_m.gguf");
    std::fs::copy(header, &p).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(253_113_024)
        .unwrap();
    p
}

fn scenario_on(path: &Path, machine: &str, context: u64) -> Scenario {
    let cat = Catalog::builtin();
    let mut s = load::scenario(&cat, &cat.scenario("default").unwrap()).unwrap();
    s.machine = load::machine(&cat.machine(machine).unwrap());
    let g = llmbound::workspace::open_gguf(&cat, path).unwrap();
    llmbound::workspace::with_gguf(&mut s, &g).unwrap();
    s.cache.context = context;
    s
}

fn llmbound() -> Command {
    Command::cargo_bin("llmbound").unwrap()
}

#[test]
fn a_rate_below_the_short_context_ceiling_is_impossible_only_at_the_claimed_context() {
    let d = tempfile::tempdir().unwrap();
    let g = gemma(d.path());
    let out = llmbound()
        .args(["check", "--tokens-per-second", "3500", "--gguf"])
        .arg(&g)
        .args(["--machine", "desktop-rtx-4090", "-c", "32768"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    let head = text.lines().next().unwrap();
    assert!(
        head.starts_with("IMPOSSIBLE with 32,768 tokens retained:"),
        "{head}"
    );
    assert!(head.contains("possible with at most"), "{head}");
    // One mode: the inventory short-context figure, never the file-mode 3,150.04.
    assert!(head.contains("4,087.79"), "{head}");
    assert!(!head.contains("3,150.04"), "{head}");
}

#[test]
fn the_reach_of_a_claim_is_the_ceiling_inverted_to_the_token() {
    let d = tempfile::tempdir().unwrap();
    let s = scenario_on(&gemma(d.path()), "desktop-rtx-4090", 32_768);
    let r = evaluate(&s).unwrap();
    let c = check_claim(&r, 3500.0);
    assert_eq!(c.outcome, ClaimOutcome::Impossible);
    assert!(c.context_decides());
    let m = c.max_context_tokens.expect("a reach");
    assert!(m > 0 && m < 32_768, "{m}");
    let h = &r.decode.highest;
    let at = |n| {
        decode::ceiling(
            &r.inputs,
            &r.layout,
            &r.split,
            h.mode,
            h.experts,
            h.bandwidth_choice,
            n,
        )
        .top_tokens_per_second()
    };
    assert!(at(m) >= 3500.0);
    assert!(at(m + 1) < 3500.0);
    // Above the short-context ceiling: impossible at every context, no reach.
    let c = check_claim(&r, 5000.0);
    assert!(c.impossible && c.max_context_tokens.is_none());
    let v = llmbound::report::words::claim_verdict(&c);
    assert!(v.contains("at every context"), "{v}");
}

#[test]
fn the_report_names_what_each_highest_ceiling_is_the_highest_of() {
    let d = tempfile::tempdir().unwrap();
    let g = gemma(d.path());
    let out = llmbound()
        .args(["report", "--gguf"])
        .arg(&g)
        .args(["--machine", "desktop-rtx-4090", "-c", "32768"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("the highest of the short-context ceilings"),
        "{text}"
    );
    assert!(
        text.contains("the highest of the ceilings at 32,768 tokens"),
        "{text}"
    );
}

/// Machines with one pool, a GPU beside host RAM, two GPUs, a measured server.
const MACHINES: [&str; 5] = [
    "desktop-rtx-4090",
    "mac-mini-m4-pro-64gb",
    "desktop-ddr5-cpu-only",
    "desktop-dual-rtx-3090",
    "h200-measured",
];

fn upper_bound_is_at_least_every_ceiling(f: &CompareFigures) -> Result<(), TestCaseError> {
    if f.ceiling_is_upper_bound {
        let eps = 1e-9 * f.ceiling_tokens_per_second;
        for other in [
            f.full_tokens_per_second,
            f.overlapped_tokens_per_second,
            f.inventory_full_tokens_per_second.unwrap_or(0.0),
        ] {
            prop_assert!(f.ceiling_tokens_per_second + eps >= other, "{f:?}");
        }
        prop_assert!(
            f.ceiling_short_tokens_per_second + eps >= f.short_tokens_per_second,
            "{f:?}"
        );
        prop_assert!(
            f.ceiling_short_tokens_per_second + eps >= f.ceiling_tokens_per_second,
            "{f:?}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// No claim below the short-context ceiling of its mode is ever IMPOSSIBLE without a
    /// context qualifier; and every "upper bound" a ranking shows is at least every other
    /// ceiling printed for that row.
    #[test]
    fn verdicts_and_rankings_are_honest(m in proptest::sample::select(MACHINES.to_vec()),
                                         n in 1u64..140_000, b in 1u64..5,
                                         frac in 0.0f64..1.5,
                                         ngl in proptest::option::of(0u32..20)) {
        let d = tempfile::tempdir().unwrap();
        let mut s = scenario_on(&gemma(d.path()), m, n);
        s.cache.sequences = b;
        s.offload.gpu_layers = ngl;
        let Ok(r) = evaluate(&s) else { return Ok(()) };
        let hs = r.decode.highest_short.top_tokens_per_second();
        let tps = frac * hs * 1.2;
        let c = check_claim(&r, tps);
        let v = llmbound::report::words::claim_verdict(&c);
        if v.starts_with("IMPOSSIBLE") && tps <= hs {
            prop_assert!(
                v.contains(" retained")
                    && (v.contains("at most") || v.contains("only with no tokens retained")),
                "{v}"
            );
        }
        if c.impossible && tps > hs {
            prop_assert!(v.contains("at every context"), "{v}");
        }
        let own = CompareFigures::of(&r);
        upper_bound_is_at_least_every_ceiling(&own)?;
        // The bound is the ceiling `check` judges claims against, whatever bandwidth the
        // machine's rows use (a measured one below the spec sheet's included).
        if own.ceiling_is_upper_bound {
            prop_assert!(own.ceiling_tokens_per_second >= r.decode.highest.top_tokens_per_second() * (1.0 - 1e-9));
            prop_assert!(own.ceiling_short_tokens_per_second >= hs * (1.0 - 1e-9));
        }
        let cat = Catalog::builtin();
        let machines: Vec<_> = MACHINES.iter().map(|id| load::machine(&cat.machine(id).unwrap())).collect();
        for row in compare(&s, &machines) {
            if let Ok(f) = &row.outcome {
                upper_bound_is_at_least_every_ceiling(f)?;
            }
        }
        // The library and `models` rank by the same figures: gemma and an MoE shape (where
        // reading every byte of the file is far below the inventory ceiling).
        oracle_model(d.path(), "qwen3-30b-a3b-shape");
        let (found, _) = discover_in(Store::Folder, d.path());
        let scanned = scan(&cat, found);
        prop_assert_eq!(scanned.len(), 2);
        for row in library_evaluate(&s, &scanned) {
            if let Ok(f) = &row.outcome {
                prop_assert!(f.ceiling_is_upper_bound, "{f:?}");
                upper_bound_is_at_least_every_ceiling(f)?;
            }
        }
    }
}

#[test]
fn each_machine_of_a_comparison_runs_at_its_own_placement() {
    let cat = Catalog::builtin();
    let mut s = load::scenario(&cat, &cat.scenario("qwen3-32b-rtx-4090-partial").unwrap()).unwrap();
    // -ngl 6, as if picked for another machine: the H100 and H200 must not inherit it.
    s.offload.gpu_layers = Some(6);
    let machines: Vec<_> = [
        "server-h100-sxm-80gb",
        "server-h200-sxm-141gb",
        "desktop-rtx-3090",
    ]
    .iter()
    .map(|id| load::machine(&cat.machine(id).unwrap()))
    .collect();
    let rows = compare(&s, &machines);
    for r in &rows[..2] {
        let f = r.outcome.as_ref().unwrap();
        assert!(f.fits, "{}", r.machine_id);
        assert_eq!(f.gpu_layers, Some(f.all_gpu_layers), "{}", r.machine_id);
    }
    // A 24 GB card: not every layer fits at 32,768 tokens, the most that fit do.
    let f = rows[2].outcome.as_ref().unwrap();
    let n = f.gpu_layers.unwrap();
    assert!(f.fits, "{f:?}");
    assert!(n > 6 && n < f.all_gpu_layers, "{n}");
    // The text says which placement each machine ran at.
    let mut out = Vec::new();
    llmbound::report::compare::write(&s, &rows, llmbound::report::Format::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("own placement"), "{text}");
    assert!(
        text.contains(&format!("{n}/{}", f.all_gpu_layers)),
        "{text}"
    );
}

#[test]
fn compare_labels_the_file_mode_figure_and_never_calls_it_an_upper_bound() {
    let d = tempfile::tempdir().unwrap();
    let s = scenario_on(&gemma(d.path()), "desktop-rtx-4090", 32_768);
    let cat = Catalog::builtin();
    let m = vec![load::machine(&cat.machine("desktop-rtx-4090").unwrap())];
    let rows = compare(&s, &m);
    let f = rows[0].outcome.as_ref().unwrap();
    assert!(f.ceiling_is_upper_bound);
    assert!(f.ceiling_tokens_per_second > f.full_tokens_per_second);
    let mut out = Vec::new();
    llmbound::report::compare::write(&s, &rows, llmbound::report::Format::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("every byte read"), "{text}");
    assert!(
        !text.contains("upper bounds on decode (file mode)"),
        "{text}"
    );
}

/// An oracle fixture's header extended (sparse) to the file size llama.cpp was given.
fn oracle_model(dir: &Path, name: &str) -> PathBuf {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-cpp");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fx.join(format!("{name}.json"))).unwrap())
            .unwrap();
    let p = dir.join(format!("{name}.gguf"));
    std::fs::copy(fx.join(format!("models/{name}.header.gguf")), &p).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(j["model"]["file_size"].as_u64().unwrap())
        .unwrap();
    p
}

#[test]
fn report_refuses_different_k_and_v_types_where_llama_cpp_does() {
    // llama.cpp (oracle fixture deepseek2-tiny, c32768-np1-kq4_0-vf16): "model does not
    // support different K (q4_0) and V (f16) cache types".
    let d = tempfile::tempdir().unwrap();
    let g = oracle_model(d.path(), "deepseek2-tiny");
    let out = llmbound()
        .args(["report", "--gguf"])
        .arg(&g)
        .args([
            "-c",
            "32768",
            "--cache-type-k",
            "q4_0",
            "--cache-type-v",
            "f16",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not support different K (q4_0) and V (f16) cache types"),
        "{err}"
    );
    // The same types start.
    let ok = llmbound()
        .args(["report", "--gguf"])
        .arg(&g)
        .args([
            "-c",
            "32768",
            "--cache-type-k",
            "q4_0",
            "--cache-type-v",
            "q4_0",
        ])
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// A file whose tensor data ends `short` bytes before its header says.
fn partial(dir: &Path, short: u64) -> PathBuf {
    let g = gemma(dir);
    let f = std::fs::OpenOptions::new().write(true).open(&g).unwrap();
    f.set_len(253_113_024 - short).unwrap();
    g
}

#[test]
fn a_partial_download_is_refused_alike_by_report_inspect_and_models() {
    let d = tempfile::tempdir().unwrap();
    let g = partial(d.path(), 10_000);
    let line = |args: &[&str]| {
        let out = llmbound().args(args).arg(&g).output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            err.contains("incomplete: 10,000 bytes of tensor data are missing"),
            "{args:?}: {err}"
        );
        err.lines()
            .find(|l| l.contains("incomplete"))
            .unwrap()
            .to_string()
    };
    let a = line(&["report", "--gguf"]);
    let b = line(&["inspect"]);
    assert_eq!(a, b);
    // `models` lists it as an error row with the same reason, never "fits".
    let out = llmbound()
        .args(["models", "--only-dirs", "--format", "json", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &j["models"][0];
    assert!(m["fits"].is_null(), "{m}");
    assert!(
        m["error"]
            .as_str()
            .unwrap()
            .contains("incomplete: 10,000 bytes of tensor data are missing"),
        "{m}"
    );
}

#[test]
fn a_cache_that_is_not_modelled_is_not_supported_rather_than_a_number() {
    let cat = Catalog::builtin();
    let mut s = load::scenario(&cat, &cat.scenario("default").unwrap()).unwrap();
    s.model.architecture = "graniteswitch".into();
    s.model.unsupported =
        llmbound::core::model::unsupported_reason("graniteswitch").map(str::to_string);
    let e = evaluate(&s).unwrap_err();
    assert!(e.0.starts_with("not supported:"), "{}", e.0);
    assert!(e.0.contains("router layer"), "{}", e.0);
}

#[test]
fn recurrent_compute_buffers_not_replayed_are_upper_bounds_not_exact() {
    use llmbound::core::runtime::{ComputeStatus, compute_status};
    for a in ["mamba", "mamba2", "rwkv6"] {
        assert!(
            matches!(compute_status(a), ComputeStatus::UpperBound(_)),
            "{a}"
        );
    }
    // RWKV-7 is replayed node by node (every CPU fixture case to the byte)
    assert_eq!(compute_status("rwkv7"), ComputeStatus::Exact);
}

/// "-23.669 GiB" / "86.951 GiB" → GiB.
fn gib(s: &str) -> f64 {
    s.trim()
        .trim_end_matches("GiB")
        .trim()
        .replace(',', "")
        .parse()
        .unwrap()
}

#[test]
fn free_memory_beside_the_buffers_is_the_limiting_tier_never_a_sum() {
    let cat = Catalog::builtin();
    let s = load::scenario(&cat, &cat.scenario("qwen3-32b-rtx-4090-partial").unwrap()).unwrap();
    let r = evaluate(&s).unwrap();
    assert!(r.tiers.iter().filter(|t| t.used).count() > 1);
    let out = llmbound()
        .args(["report", "--scenario", "qwen3-32b-rtx-4090-partial"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("beside its allocated cache and buffers"))
        .unwrap_or_else(|| panic!("{text}"));
    let (head, tail) = line
        .split_once(" remain outside weights and cache")
        .unwrap();
    // "…; X GiB of gpu0's 24.000 GiB capacity" and "(Y GiB of the … llama.cpp may fill on …"
    let number = |s: &str| gib(&s.split_whitespace().take(2).collect::<Vec<_>>().join(" "));
    let first = number(head.rsplit("; ").next().unwrap());
    let second = number(tail.split_once('(').unwrap().1);
    assert!(second <= first, "{line}");
    let used: Vec<_> = r.tiers.iter().filter(|t| t.used).collect();
    let min_free = used.iter().map(|t| t.memory.free_bytes).min().unwrap();
    assert!(
        (second - min_free as f64 / (1u64 << 30) as f64).abs() < 0.001,
        "{line}"
    );
    // each figure names its base: the tier it is on and what it is held against
    let fullest = used.iter().min_by_key(|t| t.headroom_bytes).unwrap();
    let limiting = used.iter().min_by_key(|t| t.memory.free_bytes).unwrap();
    assert!(head.ends_with(&format!(" on {}", fullest.name)), "{line}");
    assert!(
        tail.contains(&format!("llama.cpp may fill on {}", limiting.name))
            || (limiting.index == fullest.index && tail.contains("llama.cpp may fill there")),
        "{line}"
    );
    assert!(tail.contains("the least of any tier"), "{line}");
}

#[test]
fn the_allocated_cache_tips_it_only_when_the_logical_cache_fits() {
    let cat = Catalog::builtin();
    let mut s = load::scenario(&cat, &cat.scenario("default").unwrap()).unwrap();
    s.cache.context = 262_144;
    let r = evaluate(&s).unwrap();
    assert!(r.capacity.headroom_bytes < 0);
    let v = llmbound::report::words::verdict(&r.capacity);
    assert!(!v.contains("the allocated cache tips it"), "{v}");
    assert!(v.contains("the logical cache alone does not fit"), "{v}");
}

#[test]
fn a_mamba_file_never_borrows_the_profile_models_ffn_for_its_compute_buffer() {
    // mamba-small-shape (6 layers, d_inner 512, d_state 16, vocab 2,048) at -c 32768 -ub 512:
    // llama.cpp reserves 7,913,504 bytes (7.55 MiB). The report once gave 152.5 MiB, the
    // default profile's Qwen3 FFN width applied to a file without FFN tensors.
    let d = tempfile::tempdir().unwrap();
    let g = oracle_model(d.path(), "mamba-small-shape");
    let out = llmbound()
        .args(["report", "--format", "json", "-c", "32768", "--gguf"])
        .arg(&g)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &j["capacity"]["buffers"];
    let compute = b["compute_bytes"].as_u64().unwrap();
    let want = 7_913_504u64;
    // An upper bound: never below llama.cpp, and well within 2× of it (not 20×).
    assert!(compute >= want && compute < 2 * want, "{compute}");
    assert_eq!(b["compute_status"], "upper_bound");
}

#[test]
fn json_gives_no_largest_context_where_llama_cpp_will_not_start() {
    let d = tempfile::tempdir().unwrap();
    let g = oracle_model(d.path(), "deepseek2-tiny");
    let run = |ctv: &str| {
        let out = llmbound()
            .args(["report", "--format", "json", "--gguf"])
            .arg(&g)
            .args([
                "-c",
                "32768",
                "--cache-type-k",
                "q4_0",
                "--cache-type-v",
                ctv,
            ])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["capacity"].clone()
    };
    let refused = run("f16");
    assert_eq!(refused["starts"], false, "{refused}");
    assert!(refused["max_context_tokens"].is_null(), "{refused}");
    for t in refused["tiers"].as_array().into_iter().flatten() {
        assert!(t["max_context_tokens"].is_null(), "{t}");
    }
    let starts = run("q4_0");
    assert_eq!(starts["starts"], true, "{starts}");
    assert!(starts["max_context_tokens"].is_u64(), "{starts}");
}

/// Defect 7's second half: a file that opens only with a warning (here a tensor with a
/// zero-sized dimension) is marked wherever it is listed, with the warning `inspect` and
/// `report` print, never an unmarked row.
#[test]
fn a_file_that_opens_with_a_warning_is_marked_by_report_inspect_and_models_alike() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("zero-dim.gguf");
    let w = fixtures::tiny("Zero dim", 2).tensor(
        "blk.0.extra.weight",
        llmbound::gguf::GgmlType::F32,
        &[128, 0],
    );
    std::fs::write(&p, w.to_bytes()).unwrap();
    let warning = r#"tensor "blk.0.extra.weight" has a zero-size dimension [128, 0] (0 elements)"#;
    let both = |args: &[&str]| {
        let out = llmbound().args(args).arg(&p).output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let inspect = both(&["inspect"]);
    assert!(inspect.contains(warning), "inspect: {inspect}");
    let report = both(&["report", "--gguf"]);
    assert!(report.contains(warning), "report: {report}");
    // `models` (JSON): the row carries the same warning.
    let out = llmbound()
        .args(["models", "--only-dirs", "--format", "json", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &j["models"][0];
    let warnings: Vec<&str> = m["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings in {m}"))
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(warnings.iter().any(|w| w.contains(warning)), "{m}");
    // `models` (text): the row is marked (!) and the warning follows the table.
    let out = llmbound()
        .args(["models", "--only-dirs", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(!)"), "{text}");
    assert!(text.contains(&format!("(!): warning: {warning}")), "{text}");
}
