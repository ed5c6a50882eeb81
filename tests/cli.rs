//! The headless CLI: the worked example in every format, exit codes, one-line errors.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use assert_cmd::Command;

fn llmbound() -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    let dir = tempfile::tempdir().unwrap();
    c.env("LLMBOUND_CONFIG_DIR", dir.path().join("none"));
    c.env("NO_COLOR", "1");
    c
}

fn stdout(args: &[&str]) -> String {
    let out = llmbound().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const SECTION_7: &[&str] = &[
    "4.820 bits/parameter",
    "18.405 GiB",
    "262,144 bytes/token = 256 KiB/token",
    "8,589,934,592 bytes = 8 GiB",
    "28,352,083,616 bytes = 26.405 GiB",
    "23,187,523,936 bytes = 21.595 GiB",
    "13.81 tokens/s (72.39 ms/token)",
    "9.63 tokens/s (103.85 ms/token)",
    "none: the profile has no sustained compute rate for this path",
    "fits if everything else stays within the free memory",
    "optimistic vendor ceiling",
];

#[test]
fn report_text_reproduces_section_7() {
    let text = stdout(&["report"]);
    for want in SECTION_7 {
        assert!(text.contains(want), "text lacks {want:?}");
    }
    insta::assert_snapshot!("report_default_text", text);
}

#[test]
fn report_markdown_reproduces_section_7() {
    let md = stdout(&["report", "--format", "markdown"]);
    for want in SECTION_7 {
        assert!(md.contains(want), "markdown lacks {want:?}");
    }
    assert!(md.starts_with("# llmbound worksheet"));
}

#[test]
fn report_json_memory_is_itemised_per_tier() {
    let j: serde_json::Value =
        serde_json::from_str(&stdout(&["report", "--format", "json"])).unwrap();
    let tiers = j["capacity"]["tiers"].as_array().unwrap();
    let t = tiers.iter().find(|t| t["used"] == true).unwrap();
    let m = &t["memory"];
    let get = |k: &str| m[k].as_u64().unwrap_or_else(|| panic!("{k}"));
    // W on the one unified tier; the cache as allocated (no padding at 32,768 tokens).
    assert_eq!(get("model_bytes"), 19_762_149_024);
    assert_eq!(get("context_bytes"), 8_589_934_592);
    // The output buffer: 151,936 × 1 × 4 bytes of f32 logits.
    assert_eq!(get("output_bytes"), 607_744);
    let compute = get("compute_bytes");
    assert!(compute > 300 << 20 && compute < 450 << 20, "{compute}");
    assert_eq!(get("user_bytes"), 0);
    assert_eq!(
        get("total_bytes"),
        get("model_bytes") + get("context_bytes") + get("output_bytes") + compute
    );
    // Held against what Metal lets llama.cpp fill (the profile's working set, 36 GiB of the
    // 48 GiB), not the whole memory.
    assert_eq!(get("capacity_bytes"), 38_654_705_664);
    assert_eq!(
        m["free_bytes"].as_i64().unwrap(),
        38_654_705_664 - get("total_bytes") as i64
    );
    assert_eq!(m["fits"], true);
    assert!(m["decides"].is_null());
    // The totals and the buffers' provenance.
    assert_eq!(j["capacity"]["memory"]["total_bytes"], get("total_bytes"));
    assert_eq!(j["capacity"]["buffers"]["provenance"], "derived");
    assert!(
        j["capacity"]["buffers"]["basis"]
            .as_str()
            .unwrap()
            .contains("GPU backends reserve differently")
    );
    // The article's keys keep their meaning beside it.
    assert_eq!(j["capacity"]["total_bytes"], 28_352_083_616u64);
    assert_eq!(j["capacity"]["headroom_bytes"], 23_187_523_936u64);
}

#[test]
fn report_json_short_tier_names_what_decides() {
    let j: serde_json::Value = serde_json::from_str(&stdout(&[
        "report",
        "--format",
        "json",
        "--context",
        "131072",
    ]))
    .unwrap();
    let c = &j["capacity"];
    assert_eq!(c["fits"], false);
    let t = c["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["used"] == true)
        .unwrap();
    assert_eq!(t["memory"]["fits"], false);
    assert_eq!(t["memory"]["decides"], "cache");
    assert!(t["memory"]["free_bytes"].as_i64().unwrap() < 0);
}

#[test]
fn report_json_contract() {
    let j: serde_json::Value =
        serde_json::from_str(&stdout(&["report", "--format", "json"])).unwrap();
    assert_eq!(j["artifact"]["bytes"], 19_762_149_024u64);
    assert_eq!(
        format!(
            "{:.3}",
            j["artifact"]["bits_per_parameter"].as_f64().unwrap()
        ),
        "4.820"
    );
    assert_eq!(j["artifact"]["parameters_basis"], "advertised");
    assert_eq!(j["kv"]["bytes_per_token"], 262_144);
    assert_eq!(j["kv"]["bytes"], 8_589_934_592u64);
    assert_eq!(j["kv"]["allocated_bytes"], 8_589_934_592u64);
    assert_eq!(j["kv"]["recurrent_bytes"], 0);
    assert!(j["kv"]["naive_bytes"].is_null());
    assert_eq!(j["kv"]["per_layer"].as_array().unwrap().len(), 64);
    assert_eq!(j["capacity"]["weights_bytes"], 19_762_149_024u64);
    assert_eq!(j["capacity"]["kv_bytes"], 8_589_934_592u64);
    assert_eq!(j["capacity"]["other_bytes"], 0);
    assert_eq!(j["capacity"]["total_bytes"], 28_352_083_616u64);
    assert_eq!(j["capacity"]["memory_bytes"], 51_539_607_552u64);
    assert_eq!(j["capacity"]["headroom_bytes"], 23_187_523_936u64);
    assert_eq!(j["capacity"]["fits"], true);
    // The article's largest context (W + K ≤ M); the runtime's is smaller by the buffers.
    assert_eq!(j["capacity"]["article_max_context_tokens"], 121_221);
    assert_eq!(j["capacity"]["article_fits"], true);
    // The runtime's is held against Metal's 36 GiB working set: (36 GiB − W − buffers) at
    // 256 KiB per token is about 70k tokens, far below the article's figure over 48 GiB.
    let runtime_max = j["capacity"]["max_context_tokens"].as_u64().unwrap();
    assert!(
        runtime_max > 65_000 && runtime_max < 75_000,
        "{runtime_max}"
    );
    assert_eq!(j["capacity"]["max_context_exceeds_native"], true);
    let d = &j["decode"];
    let r2 = |v: &serde_json::Value| format!("{:.2}", v.as_f64().unwrap());
    assert_eq!(r2(&d["short_context"]["tokens_per_second"]), "13.81");
    assert_eq!(r2(&d["short_context"]["ms_per_token"]), "72.39");
    assert_eq!(r2(&d["full_context"]["tokens_per_second"]), "9.63");
    assert_eq!(r2(&d["full_context"]["ms_per_token"]), "103.85");
    assert_eq!(
        r2(&d["full_context"]["per_sequence_tokens_per_second"]),
        "9.63"
    );
    assert_eq!(d["bandwidth_provenance"], "spec");
    assert_eq!(d["short_context"]["label"], "optimistic vendor ceiling");
    assert!(d["inventory"].is_null());
    assert!(j["prefill"]["ceiling_tokens_per_second"].is_null());
    assert!(
        j["prefill"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("none: the profile has no sustained compute rate for this path")
    );
    assert!(
        j["llama_cpp_command"]
            .as_str()
            .unwrap()
            .contains("-c 32768 -np 1 -ctk f16 -ctv f16 -fa on")
    );
}

#[test]
fn json_and_text_agree() {
    for args in [
        vec!["--context", "16384"],
        vec![
            "--context",
            "100000",
            "--cache-type-k",
            "q8_0",
            "--cache-type-v",
            "q4_0",
        ],
        vec!["--scenario", "qwen3-32b-rtx-4090-partial"],
        vec!["--scenario", "gemma-3-270m-cpu-vm", "--sequences", "4"],
    ] {
        let mut a = vec!["report"];
        a.extend(&args);
        let text = stdout(&a);
        a.extend(["--format", "json"]);
        let j: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
        let rate = format!(
            "{:.2}",
            j["decode"]["full_context"]["tokens_per_second"]
                .as_f64()
                .unwrap()
        );
        assert!(
            text.contains(&format!("{rate} tokens/s")),
            "{args:?}: {rate}"
        );
        let kv = llmbound::core::units::group_digits(j["kv"]["bytes"].as_u64().unwrap() as u128);
        assert!(text.contains(&kv), "{args:?}: {kv}");
        let head = llmbound::core::units::group_digits_signed(
            j["capacity"]["headroom_bytes"].as_i64().unwrap() as i128,
        );
        assert!(text.contains(&head), "{args:?}: {head}");
    }
}

#[test]
fn halving_the_context() {
    let text = stdout(&["report", "--context", "16384"]);
    assert!(text.contains("11.35 tokens/s"), "{text}");
}

#[test]
fn check_lists_exceeded_ceilings() {
    let out = llmbound()
        .args(["check", "--tokens-per-second", "11"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(
        t.contains("ABOVE the file mode, 32,768 tokens ceiling"),
        "{t}"
    );
    assert!(t.contains("fewer than 32,768 tokens were retained"), "{t}");
    let out = llmbound()
        .args(["check", "--tokens-per-second", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("within every ceiling")
    );
}

fn fails(args: &[&str], want: &str) {
    let out = llmbound().args(args).output().unwrap();
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(want), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    if out.status.code() == Some(1) {
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: one line: {err}"
        );
    }
}

#[test]
fn bad_input_is_one_line_and_non_zero() {
    fails(
        &["report", "--machine", "no-such-machine"],
        "unknown machine \"no-such-machine\"",
    );
    fails(
        &["report", "--scenario", "nope"],
        "unknown scenario \"nope\"",
    );
    fails(&["report", "--overhead", "3 parsecs"], "unknown size unit");
    fails(&["report", "--overhead=-1GB"], "negative");
    fails(&["report", "--memory", "0"], "above 0");
    fails(&["report", "--bandwidth", "0 GB/s"], "must be positive");
    // `--context 0` is llama.cpp's `-c 0`, the trained context (tests/plan.rs
    // context_zero_lets_fit_reduce_the_trained_context, which also refuses it for a model
    // that states no trained context)
    fails(
        &["report", "--context", "1000000000000000"],
        "beyond llama.cpp's u32 context",
    );
    fails(
        &["report", "--sequences", "100000"],
        "above llama.cpp's limit",
    );
    fails(
        &["report", "--cache-type-k", "q3_k"],
        "unknown cache type \"q3_k\"",
    );
    fails(
        &["report", "--tier", "gpu7", "--memory", "1 GiB"],
        "has no tier \"gpu7\"",
    );
    fails(
        &["report", "--machine", "/nonexistent/m.toml"],
        "/nonexistent/m.toml",
    );
    fails(
        &["check", "--tokens-per-second=-3"],
        "must be a positive rate",
    );
    fails(&["report", "--context", "banana"], "invalid value");
}

#[test]
fn what_if_overrides() {
    let j: serde_json::Value = serde_json::from_str(&stdout(&[
        "report",
        "--memory",
        "24 GiB",
        "--bandwidth",
        "400 GB/s",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(j["capacity"]["fits"], false);
    assert_eq!(j["capacity"]["memory_bytes"], 25_769_803_776u64);
    assert_eq!(j["decode"]["bandwidth_provenance"], "user");
    assert_eq!(j["decode"]["short_context"]["label"], "ceiling");
}

#[test]
fn profiles_commands() {
    let list = stdout(&["profiles", "list"]);
    for id in [
        "macbook-pro-m4-pro-48gb",
        "qwen3-32b",
        "qwen3-32b-q4_k_m",
        "default",
    ] {
        assert!(list.contains(id), "{id}");
    }
    let show = stdout(&["profiles", "show", "qwen3-32b"]);
    assert!(show.contains("19762149024"));
    let path = stdout(&["profiles", "path"]);
    assert!(path.trim_end().ends_with("none"));
}

#[test]
fn moe_preset_without_gguf_gets_an_active_parameter_estimate() {
    // gpt-oss-20b: 21 B parameters, 3.6 B active (model card), 32 experts, 4 used.
    let j: serde_json::Value = serde_json::from_str(&stdout(&[
        "report",
        "--model",
        "gpt-oss-20b",
        "--artifact-bytes",
        "12109565632",
        "--format",
        "json",
    ]))
    .unwrap();
    let inv = &j["decode"]["inventory"];
    assert_eq!(inv["estimate"], true, "{inv}");
    assert!(inv["basis"].as_str().unwrap().starts_with("estimate"));
    let read = inv["read_bytes_per_token"].as_u64().unwrap();
    // Well below the whole file, near W × A / P.
    assert!(read < 12_109_565_632 / 4, "{read}");
    assert!(read > 12_109_565_632 / 20, "{read}");
    let file = j["decode"]["short_context"]["tokens_per_second"]
        .as_f64()
        .unwrap();
    let est = inv["short_context"]["tokens_per_second"].as_f64().unwrap();
    assert!(est > 4.0 * file, "{est} vs {file}");
    // Without an inventory the estimate cannot call a rate impossible.
    assert_eq!(j["decode"]["highest_decides"], false);
}

#[test]
fn report_gives_the_most_gpu_layers_that_fit() {
    use llmbound::core::gpu_layers::{fits_at, max_gpu_layers};
    let cat = llmbound::profile::Catalog::builtin();
    let s = llmbound::profile::load::scenario(
        &cat,
        &cat.scenario("qwen3-32b-rtx-4090-partial").unwrap(),
    )
    .unwrap();
    use llmbound::core::gpu_layers::{keeps_margin, with_gpu_layers};
    let m = max_gpu_layers(&s).unwrap().gpu_layers.unwrap();
    // the most layers that fit with llama.cpp's 1024 MiB margin kept on the card
    let kept = |n| {
        llmbound::core::evaluate(&with_gpu_layers(&s, n))
            .is_ok_and(|r| r.capacity.fits && keeps_margin(&r))
    };
    assert!(fits_at(&s, m) && kept(m) && !kept(m + 1));
    let args = ["report", "--scenario", "qwen3-32b-rtx-4090-partial"];
    let j: serde_json::Value =
        serde_json::from_str(&stdout(&[&args[..], &["--format", "json"]].concat())).unwrap();
    assert_eq!(j["capacity"]["max_gpu_layers"], m);
    assert!(
        j["capacity"]["max_gpu_layers_decode"]["tokens_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let text = stdout(&args);
    let line = text
        .lines()
        .find(|l| l.contains("most GPU layers"))
        .unwrap();
    assert!(line.contains(&format!("-ngl {m} of 65")), "{line}");
    assert!(line.contains("decode ceiling there at"), "{line}");
    let md = stdout(&[&args[..], &["--format", "markdown"]].concat());
    assert!(md.contains(&format!("-ngl {m} of 65")));
    // Not applicable on a machine without an accelerator tier: null.
    let j: serde_json::Value = serde_json::from_str(&stdout(&[
        "report",
        "--scenario",
        "gemma-3-270m-cpu-vm",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(j["capacity"]["max_gpu_layers"].is_null());
}

#[test]
fn compare_lists_fitting_machines_first_with_plain_column_names() {
    let text = stdout(&[
        "compare",
        "--machine",
        "desktop-rtx-4090",
        "--machine",
        "macbook-pro-m4-pro-48gb",
    ]);
    assert!(text.contains("fullest tier / slowest tier"), "{text}");
    assert!(!text.contains("limits"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("desktop-rtx-4090") || l.starts_with("macbook-pro"))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    // Each machine at its own placement: the 4090 (24,184 MiB free to CUDA) does not hold
    // every layer of Qwen3-32B at 32k; llama.cpp's -fit keeps its 1024 MiB margin with
    // -ngl 55 of 65; the Mac holds it whole.
    let gpu = rows
        .iter()
        .find(|r| r.starts_with("desktop-rtx-4090"))
        .unwrap();
    assert!(
        gpu.contains("yes") && gpu.contains("55/65") && gpu.contains("-fit -c 32768 -ngl 55"),
        "{text}"
    );
    let mac = rows.iter().find(|r| r.starts_with("macbook-pro")).unwrap();
    assert!(mac.contains("yes"), "{text}");
}

#[test]
fn a_configuration_llama_cpp_refuses_is_headlined_as_not_starting() {
    // A quantized V cache without flash attention: llama.cpp refuses it before allocating,
    // and so does `report`: the figures are printed, the exit is 1 with llama.cpp's reason.
    let refused = |args: &[&str]| {
        let out = llmbound().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            err.contains(
                "llama.cpp will not start: a quantized V cache (q8_0) needs flash attention"
            ),
            "{err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        String::from_utf8(out.stdout).unwrap()
    };
    let text = refused(&["report", "--cache-type-v", "q8_0", "--flash-attn", "off"]);
    let verdict = text.lines().find(|l| l.contains("verdict")).unwrap();
    assert!(verdict.contains("llama.cpp will not start"), "{verdict}");
    assert!(!text.contains("The capacity model accepts"), "{text}");
    let largest = text
        .lines()
        .find(|l| l.contains("largest context"))
        .unwrap();
    assert!(
        largest.contains("none: llama.cpp will not start"),
        "{largest}"
    );
    let j: serde_json::Value = serde_json::from_str(&refused(&[
        "report",
        "--cache-type-v",
        "q8_0",
        "--flash-attn",
        "off",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(
        j["capacity"]["verdict"]
            .as_str()
            .unwrap()
            .starts_with("llama.cpp will not start"),
        "{}",
        j["capacity"]
    );
    // With flash attention on, the same cache types start.
    let ok = stdout(&["report", "--cache-type-v", "q8_0"]);
    assert!(!ok.contains("will not start"), "{ok}");
}

/// The title and the JSON `scenario` are derived from the scenario the flags built, not
/// kept from the scenario profile they changed (issue 9: `--model gemma-3-270m -c 4096` was
/// headed "Qwen3-32B Q4_K_M on a 48 GiB M4 Pro, 32,768 tokens, f16 cache").
#[test]
fn the_title_follows_the_flags() {
    let args = [
        "report",
        "--model",
        "gemma-3-270m",
        "--machine",
        "macbook-pro-m4-pro-48gb",
        "-c",
        "4096",
    ];
    let text = stdout(&args);
    let first = text.lines().next().unwrap();
    assert!(!first.contains("Qwen3"), "{first}");
    assert!(first.contains("gemma-3-270m-q4_k_m.gguf"), "{first}");
    assert!(first.contains("4,096 tokens"), "{first}");
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&json_args)).unwrap();
    let name = j["scenario"].as_str().unwrap();
    assert_eq!(format!("llmbound worksheet: {name}"), first);
    // The scenario profile as it is keeps its own name; one flag that changes it does not.
    let plain = stdout(&["report"]);
    assert!(
        plain.starts_with("llmbound worksheet: Qwen3-32B Q4_K_M on a 48 GiB M4 Pro, 32,768 tokens")
    );
    let halved = stdout(&["report", "-c", "16384"]);
    assert!(
        halved.lines().next().unwrap().contains("16,384 tokens"),
        "{halved}"
    );
}

/// Commands that take no scenario show none of its flags, and clap's suggestions do not
/// reach for them.
#[test]
fn only_scenario_commands_take_scenario_flags() {
    for cmd in [
        vec!["hash", "--help"],
        vec!["inspect", "--help"],
        vec!["profiles", "--help"],
        vec!["machine", "detect", "--help"],
    ] {
        let help = stdout(&cmd);
        for flag in ["--draft", "--context", "--machine", "--gguf", "--tier"] {
            assert!(!help.contains(flag), "{cmd:?} shows {flag}:\n{help}");
        }
    }
    let report = stdout(&["report", "--help"]);
    assert!(report.contains("--draft") && report.contains("--context"));
    let out = llmbound()
        .args(["hash", "--no-cach", "x.gguf"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("--draft"), "{err}");
}

/// The artifact of a GGUF is listed once as "artifact NAME", not "artifact artifact NAME".
#[test]
fn the_artifact_is_named_once() {
    let Ok(g) = std::env::var("LLMBOUND_GEMMA_GGUF") else {
        skipped!(
            "SKIPPED the_artifact_is_named_once: set LLMBOUND_GEMMA_GGUF to the gemma-3-270m GGUF"
        );
        return;
    };
    let text = stdout(&["report", "--gguf", &g]);
    assert!(!text.contains("artifact artifact"), "{text}");
    assert!(text.contains("artifact gemma-3-270m-q4_k_m.gguf"), "{text}");
}

/// The RPC link's bytes per token are a hidden state there and back (Qwen3-32B: 5,120 f32
/// values each way, 40 KiB), printed in a unit that shows them (in MiB they read 0.04).
#[test]
fn the_rpc_link_bytes_are_printed_in_their_unit() {
    let out = stdout(&["report", "--machine", "rtx-4090-rpc-laptop"]);
    assert!(out.contains("RPC link 40.000 KiB over 1 hop"), "{out}");
}
