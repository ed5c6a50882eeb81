//! One edit path: the same edits given as CLI flags and typed into the explorer produce the
//! same JSON report, byte for byte (issue 9).

use assert_cmd::Command;
use llmbound::build::ScenarioOptions;
use llmbound::profile::Catalog;
use llmbound::tui::app::App;
use llmbound::tui::fields::Field;

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
    let model_path = app.scenario.weights[0].file.clone();
    let mut s =
        serde_json::to_string_pretty(&llmbound::report::to_json(&app.report, &model_path)).unwrap();
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
            app.message.as_ref().is_none_or(|m| !m.error),
            "{:?} {:?}: {:?}",
            s.field,
            s.text,
            app.message
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
                field: Field::Context,
                text: "8192",
            },
            Step {
                flag: &["--sequences", "2"],
                field: Field::Sequences,
                text: "2",
            },
            Step {
                flag: &["--ctk", "q8_0"],
                field: Field::TypeK,
                text: "q8_0",
            },
            Step {
                flag: &["--ctv", "q8_0"],
                field: Field::TypeV,
                text: "q8_0",
            },
            Step {
                flag: &["--flash-attn", "on"],
                field: Field::FlashAttn,
                text: "on",
            },
            Step {
                flag: &["--ubatch", "256"],
                field: Field::Ubatch,
                text: "256",
            },
            Step {
                flag: &["--overhead", "2 GiB"],
                field: Field::Other,
                text: "2 GiB",
            },
            Step {
                flag: &["--prompt-rows", "1024"],
                field: Field::PromptRows,
                text: "1024",
            },
            Step {
                flag: &["--memory", "160 GiB"],
                field: Field::Capacity(0),
                text: "160 GiB",
            },
            Step {
                flag: &["--bandwidth", "4000 GB/s"],
                field: Field::Bandwidth(0),
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
                field: Field::GpuLayers,
                text: "40",
            },
            Step {
                flag: &["--bandwidth", "900 GB/s"],
                field: Field::Bandwidth(0),
                text: "900 GB/s",
            },
            Step {
                flag: &["--kv-unified"],
                field: Field::KvUnified,
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
    let s = llmbound::build::scenario(&cat, &o).unwrap();
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
    let ctx = app.scenario.cache.context;
    app.set_field(Field::Window, "10000000");
    let m = app.message.clone().unwrap();
    assert!(m.error && m.text.contains("above the context"), "{m:?}");
    app.set_field(Field::Context, "-5");
    let m = app.message.clone().unwrap();
    assert!(m.error && m.text.starts_with("context:"), "{m:?}");
    assert_eq!(app.scenario.cache.context, ctx);
    app.set_field(Field::TypeK, "q3_k");
    let m = app.message.clone().unwrap();
    assert!(m.text.contains("q4_0 or iq4_nl"), "{m:?}");
}
