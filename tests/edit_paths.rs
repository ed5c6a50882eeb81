//! One edit path: the same edits given as CLI flags and typed into the explorer produce the
//! same JSON report, byte for byte (issue 9).

use assert_cmd::Command;
use llmbound::build::ScenarioOptions;
use llmbound::core::edit::Setting;
use llmbound::profile::Catalog;
use llmbound::tui::action::Action;
use llmbound::tui::app::App;
use llmbound::tui::fields::Field;

#[path = "support/fixtures.rs"]
mod fixtures;

fn cli_json(args: &[&str], config: &std::path::Path) -> String {
    let out = Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", config)
        .env("NO_COLOR", "1")
        .args(["report", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn explorer_json(app: &App) -> String {
    // The launch line names the file as the user did (the CLI's --gguf), else the preset's.
    let model_path = (app.ws().opened())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| app.ws().scenario().weights[0].file.clone());
    let mut s =
        serde_json::to_string_pretty(&llmbound::report::to_json(app.ws().report(), &model_path))
            .unwrap();
    s.push('\n');
    s
}

/// Each edit as the flag that makes it and the explorer field and text that make it.
struct Step {
    flag: &'static [&'static str],
    field: Field,
    text: &'static str,
}

fn same_both_ways(scenario: Option<&str>, machine: Option<&str>, steps: &[Step]) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let mut app = App::new(
        Catalog::load_with(Some(config.clone())),
        &ScenarioOptions {
            scenario: scenario.map(str::to_string),
            machine: machine.map(str::to_string),
            ..Default::default()
        },
    )
    .unwrap();
    let mut args: Vec<&str> = scenario.map_or(Vec::new(), |s| vec!["--scenario", s]);
    if let Some(m) = machine {
        args.extend(["--machine", m]);
    }
    let before = explorer_json(&app);
    assert_eq!(before, cli_json(&args, &config), "before any edit");
    for s in steps {
        app.set_field(s.field, s.text);
        assert!(
            app.message().is_none_or(|m| !m.error),
            "{:?} {:?}: {:?}",
            s.field,
            s.text,
            app.message()
        );
        args.extend_from_slice(s.flag);
    }
    let cli = cli_json(&args, &config);
    let explorer = explorer_json(&app);
    assert_ne!(explorer, before, "the edits changed nothing");
    if explorer != cli {
        for (i, (a, b)) in explorer.lines().zip(cli.lines()).enumerate() {
            assert_eq!(a, b, "line {} differs (explorer, CLI)", i + 1);
        }
        assert_eq!(explorer, cli);
    }
}

/// On a machine with a measured bandwidth: a new stated bandwidth drops it both ways.
#[test]
fn the_cli_and_the_explorer_apply_the_same_edits_alike() {
    same_both_ways(
        None,
        Some("h200-measured"),
        &[
            Step {
                flag: &["-c", "8192"],
                field: Field::Setting(Setting::Context),
                text: "8192",
            },
            Step {
                flag: &["--sequences", "2"],
                field: Field::Setting(Setting::Sequences),
                text: "2",
            },
            Step {
                flag: &["--ctk", "q8_0"],
                field: Field::Setting(Setting::CacheTypeK),
                text: "q8_0",
            },
            Step {
                flag: &["--ctv", "q8_0"],
                field: Field::Setting(Setting::CacheTypeV),
                text: "q8_0",
            },
            Step {
                flag: &["--flash-attn", "on"],
                field: Field::Setting(Setting::FlashAttn),
                text: "on",
            },
            Step {
                flag: &["--ubatch", "256"],
                field: Field::Setting(Setting::Ubatch),
                text: "256",
            },
            Step {
                flag: &["--overhead", "2 GiB"],
                field: Field::Setting(Setting::Overhead),
                text: "2 GiB",
            },
            Step {
                flag: &["--prompt-rows", "1024"],
                field: Field::Setting(Setting::PromptRows),
                text: "1024",
            },
            Step {
                flag: &["--memory", "160 GiB"],
                field: Field::Setting(Setting::Capacity(0)),
                text: "160 GiB",
            },
            Step {
                flag: &["--bandwidth", "4000 GB/s"],
                field: Field::Setting(Setting::Bandwidth(0)),
                text: "4000 GB/s",
            },
        ],
    );
}

/// Placement edits on a machine with an accelerator and a host tier.
#[test]
fn offload_edits_on_two_tiers_agree() {
    same_both_ways(
        Some("qwen3-32b-rtx-4090-partial"),
        None,
        &[
            Step {
                flag: &["--gpu-layers", "40"],
                field: Field::Setting(Setting::GpuLayers),
                text: "40",
            },
            Step {
                flag: &["--bandwidth", "900 GB/s"],
                field: Field::Setting(Setting::Bandwidth(0)),
                text: "900 GB/s",
            },
            Step {
                flag: &["--kv-unified"],
                field: Field::Setting(Setting::KvUnified),
                text: "on",
            },
        ],
    );
}

fn default_scenario() -> (llmbound::core::Scenario, llmbound::core::model::ArchFigures) {
    let cat = Catalog::load_with(None);
    let o = ScenarioOptions {
        machine: Some("h200-measured".into()),
        ..Default::default()
    };
    let s = llmbound::workspace::scenario(&cat, &o).unwrap();
    let fig = llmbound::core::edit::figures_of(&s.model);
    (s, fig)
}

#[test]
fn the_edit_function_checks_what_it_changes() {
    use llmbound::core::edit::{Edit, EditError, apply};
    let (mut s, mut fig) = default_scenario();
    assert!(s.machine.tiers[0].measured_bandwidth.is_some());
    // A stated bandwidth drops the measured one.
    apply(
        &mut s,
        &mut fig,
        &Edit::Bandwidth {
            tier: 0,
            rate: llmbound::core::units::BytesPerSec(300e9),
        },
    )
    .unwrap();
    assert!(s.machine.tiers[0].measured_bandwidth.is_none());
    assert_eq!(s.machine.tiers[0].bandwidth.value.0, 300e9);
    // More KV heads than heads, and KV heads that do not divide them, are refused with the
    // figures unchanged.
    let heads = fig.head_count.max();
    let before = fig.clone();
    for kv in [heads + 8, heads - 1] {
        let e = apply(&mut s, &mut fig, &Edit::KvHeads(kv)).unwrap_err();
        assert!(matches!(e, EditError::Shape(_)), "{e}");
        assert!(e.to_string().contains("head_count"), "{e}");
        assert_eq!(fig, before);
    }
    // A window longer than the native context is refused; one inside it is kept.
    let native = fig.native_context.unwrap();
    let e = apply(&mut s, &mut fig, &Edit::Window(native + 1)).unwrap_err();
    assert!(matches!(e, EditError::WindowAboveContext { .. }), "{e}");
    apply(&mut s, &mut fig, &Edit::Window(4096)).unwrap();
    assert_eq!(fig.sliding_window, Some(4096));
    // A tier the machine does not have.
    let e = apply(
        &mut s,
        &mut fig,
        &Edit::Capacity {
            tier: 9,
            bytes: 1 << 30,
        },
    )
    .unwrap_err();
    assert_eq!(e, EditError::NoTier(9));
}

#[test]
fn the_explorer_shows_why_an_edit_was_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(dir.path().join("none"))),
        &ScenarioOptions::default(),
    )
    .unwrap();
    let ctx = app.ws().scenario().cache.context;
    app.set_field(Field::Setting(Setting::Window), "10000000");
    let m = app.message().cloned().unwrap();
    assert!(m.error && m.text.contains("above the context"), "{m:?}");
    app.set_field(Field::Setting(Setting::Context), "-5");
    let m = app.message().cloned().unwrap();
    assert!(m.error && m.text.starts_with("context:"), "{m:?}");
    assert_eq!(app.ws().scenario().cache.context, ctx);
    app.set_field(Field::Setting(Setting::CacheTypeK), "q3_k");
    let m = app.message().cloned().unwrap();
    assert!(m.text.contains("q4_0 or iq4_nl"), "{m:?}");
}

/// The explorer on `opts` with no user profiles, and the CLI arguments that describe the same.
fn explorer(config: &std::path::Path, opts: &ScenarioOptions) -> App {
    App::new(Catalog::load_with(Some(config.to_path_buf())), opts).unwrap()
}

fn assert_same(explorer: &str, cli: &str, what: &str) {
    if explorer != cli {
        for (i, (a, b)) in explorer.lines().zip(cli.lines()).enumerate() {
            assert_eq!(a, b, "{what}: line {} differs (explorer, CLI)", i + 1);
        }
        assert_eq!(explorer, cli, "{what}");
    }
}

/// `[` and `]` halve and double the context, `n` sets the most GPU layers that fit: each is
/// the edit the CLI flag makes.
#[test]
fn keys_that_edit_agree_with_their_flags() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let opts = ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        ..Default::default()
    };
    let mut app = explorer(&config, &opts);
    let ctx = app.ws().scenario().cache.context;
    app.update(Action::HalveContext);
    app.update(Action::HalveContext);
    app.update(Action::DoubleContext);
    assert_eq!(app.ws().scenario().cache.context, ctx / 2);
    let half = (ctx / 2).to_string();
    let args = [
        "--scenario",
        "qwen3-32b-rtx-4090-partial",
        "-c",
        half.as_str(),
    ];
    assert_same(&explorer_json(&app), &cli_json(&args, &config), "[ ] ]");
    app.update(Action::MaxGpuLayers);
    assert!(
        app.message().is_some_and(|m| !m.error),
        "{:?}",
        app.message()
    );
    let all = llmbound::core::tiers::all_gpu_layers(&app.ws().scenario().model);
    let n = (app.ws().scenario().offload.gpu_layers)
        .unwrap_or(all)
        .to_string();
    let mut args = args.to_vec();
    args.extend(["--gpu-layers", n.as_str()]);
    assert_same(&explorer_json(&app), &cli_json(&args, &config), "n");
    // N: the largest context that fits, as the report states it, is the context `-c` sets.
    let max = (app.ws().report().capacity.max_context_tokens).expect("a memory limit");
    assert_ne!(max, app.ws().scenario().cache.context);
    app.update(Action::MaxContext);
    assert_eq!(app.ws().scenario().cache.context, max);
    assert!(
        app.message()
            .is_some_and(|m| !m.error && m.text.contains("largest")),
        "{:?}",
        app.message()
    );
    let max = max.to_string();
    args[3] = max.as_str();
    let cli = cli_json(&args, &config);
    assert_same(&explorer_json(&app), &cli, "N");
    // At that context it still fits, and it is still the largest.
    let v: serde_json::Value = serde_json::from_str(&cli).unwrap();
    assert_eq!(
        v["capacity"]["fits"],
        serde_json::Value::Bool(true),
        "{cli}"
    );
    app.update(Action::MaxContext);
    assert!(
        app.message()
            .is_some_and(|m| m.text.contains("is the largest")),
        "{:?}",
        app.message()
    );
}

/// Opening a GGUF in the explorer (`o`, the library's Enter, a path given at start) makes
/// the same scenario as `--gguf`, with the projector given beside it kept, and a switch of
/// machine the same as `--machine`.
#[test]
fn opening_a_file_and_switching_a_machine_agree_with_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let model = dir.path().join("tiny.gguf");
    fixtures::tiny("tiny", 4)
        .write_file(&model, llmbound::gguf::writer::Data::Zeros)
        .unwrap();
    let proj = dir.path().join("mmproj.gguf");
    fixtures::projector()
        .write_file(&proj, llmbound::gguf::writer::Data::Zeros)
        .unwrap();
    let opts = ScenarioOptions {
        mmproj: Some(proj.clone()),
        ..Default::default()
    };
    let mut app = explorer(&config, &opts);
    app.update(Action::OpenPath(model.clone()));
    app.wait_for_jobs(std::time::Duration::from_secs(30));
    assert!(
        app.message().is_some_and(|m| !m.error),
        "{:?}",
        app.message()
    );
    let weights = &app.ws().scenario().weights;
    assert!(
        weights.iter().any(|w| w.file == "mmproj.gguf"),
        "the projector given beside the model stays: {weights:?}"
    );
    let (m, p) = (model.display().to_string(), proj.display().to_string());
    let args = ["--gguf", m.as_str(), "--mmproj", p.as_str()];
    assert_same(&explorer_json(&app), &cli_json(&args, &config), "open");
    app.select_machine("desktop-rtx-4090");
    let mut args = args.to_vec();
    args.extend(["--machine", "desktop-rtx-4090"]);
    assert_same(&explorer_json(&app), &cli_json(&args, &config), "switch");
}

/// A partial download is refused for the bounds by `report --gguf` and by the explorer's open,
/// with the same line (the explorer still lists its tensors and metadata).
#[test]
fn a_partial_download_is_refused_alike_by_the_explorer_and_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let model = dir.path().join("partial.gguf");
    fixtures::tiny("partial", 4)
        .write_file(&model, llmbound::gguf::writer::Data::HeaderOnly)
        .unwrap();
    let mut app = explorer(&config, &ScenarioOptions::default());
    let before = explorer_json(&app);
    app.update(Action::OpenPath(model.clone()));
    app.wait_for_jobs(std::time::Duration::from_secs(30));
    let m = app.message().cloned().expect("a message");
    assert!(m.error && m.text.contains("incomplete:"), "{m:?}");
    assert_eq!(
        explorer_json(&app),
        before,
        "the bounds keep the previous model"
    );
    assert!(
        app.file().loaded.is_some(),
        "its tensors can still be browsed"
    );
    let out = Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", &config)
        .args(["report", "--gguf"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let reason = m.text.split("previous model: ").nth(1).unwrap();
    assert!(err.contains(reason), "CLI: {err}\nexplorer: {reason}");
}

/// A llama-bench row is evaluated on the scenario its settings make: the same edits as the
/// flags that state them.
#[test]
fn a_bench_row_is_the_scenario_its_flags_make() {
    let cat = Catalog::load_with(None);
    let base = llmbound::workspace::scenario(
        &cat,
        &ScenarioOptions {
            scenario: Some("qwen3-8b-synth-h200".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let row = llmbound::bench::parse_str(
        "row.json",
        r#"[{"build_commit": "0c1e570", "backends": "CUDA", "gpu_info": "NVIDIA H200",
            "model_size": 8703561728, "model_n_params": 8190735360, "n_batch": 2048,
            "n_ubatch": 256, "n_threads": 16, "type_k": "q8_0", "type_v": "q8_0",
            "n_gpu_layers": 20, "n_cpu_moe": 0, "split_mode": "layer", "main_gpu": 0,
            "no_kv_offload": false, "flash_attn": 1, "tensor_split": "0.00",
            "tensor_buft_overrides": "none", "n_prompt": 0, "n_gen": 128, "n_depth": 8192,
            "avg_ts": 100.0, "samples_ts": [100.0]}]"#,
    )
    .unwrap()
    .remove(0);
    let (edits, _) = llmbound::bench::eval::row_edits(&row, &base).unwrap();
    let from_row = llmbound::core::edit::applied(&base, &edits).unwrap();
    let flags = llmbound::workspace::scenario(
        &cat,
        &ScenarioOptions {
            scenario: Some("qwen3-8b-synth-h200".into()),
            context: Some(8192 + 64),
            sequences: Some(1),
            cache_type_k: Some("q8_0".into()),
            cache_type_v: Some("q8_0".into()),
            flash_attn: Some(true),
            ubatch: Some(256),
            gpu_layers: Some(20),
            ..Default::default()
        },
    )
    .unwrap();
    let strip = |mut s: llmbound::core::Scenario| {
        s.name.clear();
        s
    };
    assert_eq!(strip(from_row), strip(flags));
}

/// Placement and run settings typed on a machine with two accelerators: `-ts`, `-nkvo`,
/// `--swa-full` and the compute path, each the edit its flag makes.
#[test]
fn placement_rows_typed_agree_with_their_flags() {
    same_both_ways(
        Some("qwen3-32b-rtx-4090-partial"),
        Some("desktop-dual-rtx-3090"),
        &[
            Step {
                flag: &["--tensor-split", "3,1"],
                field: Field::Setting(Setting::TensorSplit),
                text: "3,1",
            },
            Step {
                flag: &["--no-kv-offload"],
                field: Field::Setting(Setting::NoKvOffload),
                text: "on",
            },
            Step {
                flag: &["--swa-full"],
                field: Field::Setting(Setting::SwaFull),
                text: "on",
            },
            Step {
                flag: &["--compute-path", "int8"],
                field: Field::Setting(Setting::ComputePath),
                text: "int8",
            },
        ],
    );
}

/// llama.cpp's placement flags typed in the explorer's Cache pane on a machine with two
/// accelerators: `-fit`, `-fitt`, `-sm`, `-mg` and `-ot`, each the edit its flag makes.
#[test]
fn llama_cpp_placement_rows_typed_agree_with_their_flags() {
    same_both_ways(
        Some("qwen3-32b-rtx-4090-partial"),
        Some("desktop-dual-rtx-3090"),
        &[
            Step {
                flag: &["--fit", "off"],
                field: Field::Setting(Setting::Fit),
                text: "off",
            },
            Step {
                flag: &["--fit-target", "2048,512"],
                field: Field::Setting(Setting::FitTarget),
                text: "2048,512",
            },
            Step {
                flag: &["--split-mode", "none"],
                field: Field::Setting(Setting::SplitMode),
                text: "none",
            },
            Step {
                flag: &["--main-gpu", "1"],
                field: Field::Setting(Setting::MainGpu),
                text: "1",
            },
            Step {
                flag: &["--override-tensor", r"blk\.3\.ffn_down.*=CPU"],
                field: Field::Setting(Setting::OverrideTensor),
                text: r"blk\.3\.ffn_down.*=CPU",
            },
        ],
    );
}

/// The value a row shows as typed text, after a key stepped it (the flag's value).
fn typed(app: &App, s: Setting) -> String {
    llmbound::tui::fields::edit_text(app.ws(), s)
}

/// ←, → and Space on a row make the edit the flag for the value it lands on makes.
#[test]
fn stepping_keys_agree_with_the_flags_of_the_values_they_reach() {
    use llmbound::tui::fields::Pane;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let scenario = "qwen3-32b-rtx-4090-partial";
    let mut app = explorer(
        &config,
        &ScenarioOptions {
            scenario: Some(scenario.into()),
            ..Default::default()
        },
    );
    let select = |app: &mut App, s: Setting| {
        app.update(Action::Resize(120, 36));
        while app.focus() != Pane::Cache {
            app.update(Action::NextPane);
        }
        for _ in 0..40 {
            if app.selected_field(Pane::Cache) == Some(Field::Setting(s)) {
                return;
            }
            app.update(Action::Down);
        }
        panic!("no row {s:?}");
    };
    let step = |app: &mut App, s: Setting, key: Action| {
        select(app, s);
        let before = typed(app, s);
        app.update(key);
        let after = typed(app, s);
        assert_ne!(before, after, "{s:?} did not move");
        after
    };
    let ctx = step(&mut app, Setting::Context, Action::Right);
    let ctk = step(&mut app, Setting::CacheTypeK, Action::Right);
    let ub = step(&mut app, Setting::Ubatch, Action::Left);
    assert_eq!(step(&mut app, Setting::KvUnified, Action::Toggle), "on");
    let ngl = step(&mut app, Setting::GpuLayers, Action::Left);
    assert!(
        app.message().is_none_or(|m| !m.error),
        "{:?}",
        app.message()
    );
    let args = [
        "--scenario",
        scenario,
        "-c",
        &ctx,
        "--ctk",
        &ctk,
        "--ubatch",
        &ub,
        "--kv-unified",
        "--gpu-layers",
        &ngl,
    ];
    assert_same(&explorer_json(&app), &cli_json(&args, &config), "← → Space");
}

/// Choosing a model (M), a scenario (S) and a machine (the Machine pane's picker) in the
/// explorer makes the scenario `--model`, `--scenario` and `--machine` make.
#[test]
fn switching_profiles_with_the_pickers_agrees_with_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let mut app = explorer(&config, &ScenarioOptions::default());
    let answer = |app: &mut App| {
        if app.pending_question().is_some() {
            app.update(Action::Yes);
        }
        assert!(
            app.message().is_none_or(|m| !m.error),
            "{:?}",
            app.message()
        );
    };
    app.update(Action::PickScenario);
    app.update(Action::SetText("qwen3-32b-rtx-4090-partial".into()));
    answer(&mut app);
    let args = ["--scenario", "qwen3-32b-rtx-4090-partial"];
    assert_same(&explorer_json(&app), &cli_json(&args, &config), "S");
    app.update(Action::PickModel);
    app.update(Action::SetText("qwen3-8b".into()));
    answer(&mut app);
    let mut args = args.to_vec();
    args.extend(["--model", "qwen3-8b"]);
    assert_same(&explorer_json(&app), &cli_json(&args, &config), "M");
    app.set_field(Field::MachineProfile, "desktop-rtx-5090");
    answer(&mut app);
    args.extend(["--machine", "desktop-rtx-5090"]);
    assert_same(&explorer_json(&app), &cli_json(&args, &config), "machine");
}

/// Enter on a library row opens that file: the same scenario as `--gguf`.
#[test]
fn the_library_enter_agrees_with_gguf() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let models = dir.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    let model = models.join("only-Q8_0.gguf");
    fixtures::tiny("only", 4)
        .write_file(&model, llmbound::gguf::writer::Data::Zeros)
        .unwrap();
    let mut app = explorer(&config, &ScenarioOptions::default());
    app.set_library_roots(vec![(llmbound::library::Store::Folder, models.clone())]);
    app.update(Action::Library);
    app.wait_for_jobs(std::time::Duration::from_secs(30));
    assert_eq!(app.library().rows.len(), 1);
    app.update(Action::Edit);
    app.wait_for_jobs(std::time::Duration::from_secs(30));
    assert!(
        app.message().is_some_and(|m| !m.error),
        "{:?}",
        app.message()
    );
    let m = model.display().to_string();
    let args = ["--gguf", m.as_str()];
    assert_same(
        &explorer_json(&app),
        &cli_json(&args, &config),
        "library Enter",
    );
}

/// The compare view's Enter ("use this machine") makes the scenario `--machine` makes.
#[test]
fn compare_use_this_machine_agrees_with_machine() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let scenario = "qwen3-32b-rtx-4090-partial";
    let mut app = explorer(
        &config,
        &ScenarioOptions {
            scenario: Some(scenario.into()),
            ..Default::default()
        },
    );
    app.update(Action::Resize(120, 36));
    app.update(Action::Compare);
    let target = "server-h100-sxm-80gb";
    for _ in 0..60 {
        if app.compare().selected_machine().as_deref() == Some(target) {
            break;
        }
        app.update(Action::Down);
    }
    assert_eq!(app.compare().selected_machine().as_deref(), Some(target));
    app.update(Action::Edit);
    assert_eq!(app.view(), llmbound::tui::app::View::Main);
    let args = ["--scenario", scenario, "--machine", target];
    assert_same(
        &explorer_json(&app),
        &cli_json(&args, &config),
        "compare Enter",
    );
}

/// The bench view (b) holds each llama-bench row against the ceilings of the scenario its
/// settings make: the same text as `llmbound bench` on the same scenario.
#[test]
fn the_bench_view_agrees_with_the_bench_command() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let scenario = "qwen3-8b-synth-h200";
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bench/h200/bench_q8_0.json");
    let mut app = explorer(
        &config,
        &ScenarioOptions {
            scenario: Some(scenario.into()),
            ..Default::default()
        },
    );
    app.update(Action::Bench);
    app.update(Action::SetText(file.display().to_string()));
    assert_eq!(app.view(), llmbound::tui::app::View::Bench);
    let out = Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", &config)
        .env("NO_COLOR", "1")
        .arg("bench")
        .arg(&file)
        .args(["--scenario", scenario])
        .output()
        .unwrap();
    let cli = String::from_utf8(out.stdout).unwrap();
    let explorer = app.bench().lines.join("\n");
    assert!(explorer.contains("(6 rows)"), "{explorer}");
    assert_same(&explorer, cli.trim_end_matches('\n'), "bench");
    // After an edit the view follows: the CLI with the same flag.
    app.update(Action::HalveContext);
    let out = Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", &config)
        .env("NO_COLOR", "1")
        .arg("bench")
        .arg(&file)
        .args(["--scenario", scenario, "-c"])
        .arg(app.ws().scenario().cache.context.to_string())
        .output()
        .unwrap();
    let cli = String::from_utf8(out.stdout).unwrap();
    assert_same(
        &app.bench().lines.join("\n"),
        cli.trim_end_matches('\n'),
        "bench after [",
    );
}

/// The safetensors model of the MLX fixture `art` (its exact header, sparse data) and its
/// config.json, written to `dir`.
fn mlx_folder(dir: &std::path::Path) {
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mlx/llama_gqa.json");
    let fx: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let art = (fx["artifacts"].as_array().unwrap().iter())
        .find(|a| a["quant"] == "q4g64")
        .unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let header = art["header"].as_str().unwrap();
    let mut head = (header.len() as u64).to_le_bytes().to_vec();
    head.extend_from_slice(header.as_bytes());
    let f = dir.join("model.safetensors");
    std::fs::write(&f, &head).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(art["file_bytes"].as_u64().unwrap())
        .unwrap();
    std::fs::write(dir.join("config.json"), art["config"].to_string()).unwrap();
}

/// MLX-LM's report of what the explorer shows (`report --format json` on a safetensors
/// model): the workspace's own plan, settings and machine, with llama.cpp's figures beside it
/// when both runtimes apply.
fn explorer_mlx_json(app: &App) -> String {
    use llmbound::mlx_report::{MlxReport, MlxSettings};
    let ws = app.ws();
    let machine = ws.mlx_machine().unwrap();
    let model = ws.opened().unwrap().display().to_string();
    let r = MlxReport {
        artifact: ws.mlx().unwrap(),
        machine: &machine,
        settings: MlxSettings::with(&machine, &ws.scenario().mlx_lm),
        plan: ws.mlx_plan().unwrap().clone(),
        llama_cpp: (ws
            .runtimes()
            .contains(&llmbound::core::mlx::Runtime::LlamaCpp))
        .then(|| {
            (
                llmbound::core::mlx::llama_cpp_figures(ws.report()),
                llmbound::report::llama_cpp_command(ws.report(), &model),
            )
        }),
    };
    let mut s = serde_json::to_string_pretty(&llmbound::mlx_report::to_json(&r)).unwrap();
    s.push('\n');
    s
}

/// Issue 18: MLX-LM's settings typed in the Cache pane (shown while the figures are
/// MLX-LM's) make the edits `--kv-bits`, `--kv-group-size`, `--quantized-kv-start` and
/// `--max-kv-size` make: the same MLX-LM report, byte for byte.
#[test]
fn mlx_lm_rows_typed_agree_with_their_flags() {
    let d = tempfile::tempdir().unwrap();
    let config = d.path().join("none");
    let dir = d.path().join("llama-q4");
    mlx_folder(&dir);
    let p = dir.display().to_string();
    let mut app = explorer(
        &config,
        &ScenarioOptions {
            gguf: Some(dir.clone()),
            context: Some(6000),
            ..Default::default()
        },
    );
    let mut args = vec!["--gguf", p.as_str(), "--context", "6000"];
    let before = explorer_mlx_json(&app);
    assert_same(&before, &cli_json(&args, &config), "before any edit");
    // The Cache pane shows MLX-LM's rows, not llama.cpp's.
    let cache: Vec<Option<Field>> = (app.rows(llmbound::tui::fields::Pane::Cache).iter())
        .map(|r| r.field)
        .collect();
    for s in [
        Setting::KvBits,
        Setting::KvGroupSize,
        Setting::QuantizedKvStart,
        Setting::MaxKvSize,
    ] {
        assert!(cache.contains(&Some(Field::Setting(s))), "{s:?}: {cache:?}");
    }
    for s in [
        Setting::CacheTypeK,
        Setting::FlashAttn,
        Setting::Ubatch,
        Setting::Runtime,
    ] {
        assert!(
            !cache.contains(&Some(Field::Setting(s))),
            "{s:?}: {cache:?}"
        );
    }
    let steps = [
        Step {
            flag: &["--kv-bits", "4"],
            field: Field::Setting(Setting::KvBits),
            text: "4",
        },
        Step {
            flag: &["--kv-group-size", "32"],
            field: Field::Setting(Setting::KvGroupSize),
            text: "32",
        },
        Step {
            flag: &["--quantized-kv-start", "1000"],
            field: Field::Setting(Setting::QuantizedKvStart),
            text: "1000",
        },
        Step {
            flag: &["--max-kv-size", "4096"],
            field: Field::Setting(Setting::MaxKvSize),
            text: "4096",
        },
    ];
    for s in &steps {
        app.set_field(s.field, s.text);
        assert!(
            app.message().is_none_or(|m| !m.error),
            "{:?} {:?}: {:?}",
            s.field,
            s.text,
            app.message()
        );
        args.extend_from_slice(s.flag);
    }
    let cli = cli_json(&args, &config);
    let explorer = explorer_mlx_json(&app);
    assert_ne!(explorer, before, "the edits changed nothing");
    assert_same(&explorer, &cli, "MLX-LM rows");
    let v: serde_json::Value = serde_json::from_str(&cli).unwrap();
    assert_eq!(v["settings"]["kv_bits"], 4, "{cli}");
    // The quantized cache: MLX-LM's class after 6,000 tokens from 1,000.
    assert!(cli.contains("QuantizedKVCache"), "{cli}");
    // What MLX refuses is refused both ways with the flag's reason.
    app.set_field(Field::Setting(Setting::KvGroupSize), "48");
    let m = app.message().cloned().unwrap();
    assert!(m.error && m.text.contains("32, 64 or 128"), "{m:?}");
    let out = Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", &config)
        .args(["report", "--gguf", p.as_str(), "--kv-group-size", "48"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--kv-group-size") && err.contains("32, 64 or 128"),
        "{err}"
    );
    // A 128-wide group does not divide this model's 64-wide heads: MLX's own refusal when
    // the cache is quantized, in the explorer and the report alike.
    app.set_field(Field::Setting(Setting::KvGroupSize), "128");
    let g = args.iter().position(|a| *a == "--kv-group-size").unwrap();
    args[g + 1] = "128";
    let out = Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", &config)
        .env("NO_COLOR", "1")
        .args(["report", "--format", "json"])
        .args(&args)
        .output()
        .unwrap();
    // The report is written, and the exit is MLX's refusal (as with llama.cpp's).
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MLX-LM refuses this run: ValueError: [quantize]"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let cli = String::from_utf8(out.stdout).unwrap();
    assert_same(&explorer_mlx_json(&app), &cli, "group 128");
    assert!(
        cli.contains("divisible by the quantization group size 128"),
        "{cli}"
    );
    // MLX-LM's flags on a model MLX-LM cannot run are refused, not ignored.
    let out = Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", &config)
        .args(["report", "--kv-bits", "4"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--kv-bits") && err.contains("no safetensors model"),
        "{err}"
    );
}

/// Issue 18: the runtime row, shown where both runtimes apply (a folder holding a GGUF and
/// a safetensors model), makes the edit `--runtime` makes: typed to MLX-LM, the MLX-LM report
/// (llama.cpp's figures beside it); typed back to llama.cpp, llama.cpp's report.
#[test]
fn the_runtime_row_agrees_with_the_runtime_flag() {
    let d = tempfile::tempdir().unwrap();
    let config = d.path().join("none");
    let dir = d.path().join("both");
    mlx_folder(&dir);
    fixtures::tiny("tiny", 4)
        .write_file(
            &dir.join("tiny-Q8_0.gguf"),
            llmbound::gguf::writer::Data::Zeros,
        )
        .unwrap();
    let p = dir.display().to_string();
    let mut app = explorer(
        &config,
        &ScenarioOptions {
            gguf: Some(dir.clone()),
            context: Some(1000),
            ..Default::default()
        },
    );
    let base = ["--gguf", p.as_str(), "--context", "1000"];
    let shown = |app: &App| {
        (app.rows(llmbound::tui::fields::Pane::Cache).iter())
            .any(|r| r.field == Some(Field::Setting(Setting::Runtime)))
    };
    assert!(shown(&app), "both runtimes apply: the row is shown");
    app.set_field(Field::Setting(Setting::Runtime), "MLX-LM");
    assert!(
        app.message().is_none_or(|m| !m.error),
        "{:?}",
        app.message()
    );
    let mut args = base.to_vec();
    args.extend(["--runtime", "mlx-lm"]);
    let cli = cli_json(&args, &config);
    assert_same(&explorer_mlx_json(&app), &cli, "runtime MLX-LM");
    assert!(cli.contains("side_by_side"), "{cli}");
    app.set_field(Field::Setting(Setting::Runtime), "llama.cpp");
    let mut args = base.to_vec();
    args.extend(["--runtime", "llama.cpp"]);
    assert_same(
        &explorer_json(&app),
        &cli_json(&args, &config),
        "runtime llama.cpp",
    );
    // On a safetensors model alone the row is not shown and the flag is refused.
    let only = d.path().join("only");
    mlx_folder(&only);
    let app = explorer(
        &config,
        &ScenarioOptions {
            gguf: Some(only.clone()),
            ..Default::default()
        },
    );
    assert!(!shown(&app));
    let out = Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", &config)
        .args(["report", "--runtime", "llama.cpp", "--gguf"])
        .arg(&only)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("llama.cpp needs a GGUF"), "{err}");
}
