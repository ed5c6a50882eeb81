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

fn same_both_ways(scenario: Option<&str>, steps: &[Step]) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let mut app = App::new(
        Catalog::load_with(Some(config.clone())),
        &ScenarioOptions {
            scenario: scenario.map(str::to_string),
            ..Default::default()
        },
    )
    .unwrap();
    let mut args: Vec<&str> = scenario.map_or(Vec::new(), |s| vec!["--scenario", s]);
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

/// The default machine has a measured bandwidth: a new stated bandwidth drops it both ways.
#[test]
fn the_cli_and_the_explorer_apply_the_same_edits_alike() {
    same_both_ways(
        None,
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
                flag: &["--memory", "64 GiB"],
                field: Field::Capacity(0),
                text: "64 GiB",
            },
            Step {
                flag: &["--bandwidth", "300 GB/s"],
                field: Field::Bandwidth(0),
                text: "300 GB/s",
            },
        ],
    );
}

/// Placement edits on a machine with an accelerator and a host tier.
#[test]
fn offload_edits_on_two_tiers_agree() {
    same_both_ways(
        Some("qwen3-32b-rtx-4090-partial"),
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
