//! The explorer's Devices view (`d`): the plan llama.cpp would choose per device and host,
//! drawn at 80×24 and 120×36 on the default M4 Pro, two RTX 3090s with a Qwen3-32B-shaped
//! file and one 16 GiB card with a Qwen3-30B-A3B-shaped file (experts overflow with `-ot`);
//! scrolling in whole blocks; `a` applies the fitted plan through the workspace, and the
//! report then equals the CLI's with the same flags.

use assert_cmd::Command;
use llmbound::build::ScenarioOptions;
use llmbound::core::plan::PlanOrigin;
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::{App, View};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::{Path, PathBuf};

fn draw(app: &App, w: u16, h: u16) -> TestBackend {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().clone()
}

fn text(app: &App, w: u16, h: u16) -> String {
    draw(app, w, h).to_string()
}

fn snap(name: &str, app: &mut App) {
    app.update(Action::Resize(120, 36));
    insta::assert_snapshot!(format!("{name}_120x36"), draw(app, 120, 36));
    app.update(Action::Resize(80, 24));
    insta::assert_snapshot!(format!("{name}_80x24"), draw(app, 80, 24));
}

/// A full-size copy of a committed llama.cpp oracle header (the tensors past its end made
/// sparse), so the explorer opens the file whole: the tensor list llama.cpp placed.
fn shaped_gguf(dir: &Path, name: &str) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-cpp");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join(format!("{name}.json"))).unwrap(),
    )
    .unwrap();
    let size = json["model"]["file_size"].as_u64().unwrap();
    let header = fixtures.join(json["model"]["header"].as_str().unwrap());
    let out = dir.join(format!("{name}.gguf"));
    std::fs::copy(&header, &out).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&out)
        .unwrap()
        .set_len(size)
        .unwrap();
    out
}

fn devices_app(config: &Path, opts: ScenarioOptions) -> App {
    let mut app = App::new(Catalog::load_with(Some(config.to_path_buf())), &opts).unwrap();
    app.update(Action::Devices);
    assert_eq!(app.view(), View::Devices);
    app
}

/// Qwen3-30B-A3B-shaped on one 16 GiB CUDA card at 32k: llama.cpp's `-fit` keeps attention
/// on the card and overflows experts with `-ot` (issue 22's measured case).
fn moe_opts(gguf: PathBuf) -> ScenarioOptions {
    ScenarioOptions {
        machine: Some("desktop-rtx-4090".into()),
        memory: Some("16 GiB".into()),
        device_free: Some("16 GiB".into()),
        gguf: Some(gguf),
        context: Some(32768),
        ..Default::default()
    }
}

fn dual_3090_opts(gguf: PathBuf) -> ScenarioOptions {
    ScenarioOptions {
        machine: Some("desktop-dual-rtx-3090".into()),
        gguf: Some(gguf),
        ..Default::default()
    }
}

#[test]
fn snapshot_devices_m4_pro() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = devices_app(dir.path(), ScenarioOptions::default());
    snap("devices_m4_pro", &mut app);
    let t = text(&app, 120, 36);
    assert!(
        t.contains("MTL0 · unified · metal · 36 GiB working set (derived: 3/4 of 48 GiB)"),
        "{t}"
    );
    // llama.cpp counts the output layer: 64 repeating layers offload as 65
    // llama.cpp prints -ngl -1 when every layer fits
    assert!(
        t.contains("-ngl -1 (auto) · offloaded 65/65 layers (64 repeating + output)"),
        "{t}"
    );
}

/// A machine without devices: `-fit` fits the context to system memory, leaving out the weights
/// in CPU_REPACK as llama.cpp does, and the view says why the host is then short (no device
/// verdict: there is no device).
#[test]
fn snapshot_devices_cpu_only_fit_leaves_out_repacked_weights() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "llama-3.1-8b-shape");
    let opts = |memory: &str| ScenarioOptions {
        machine: Some("epyc-zen5-2vcpu-vm".into()),
        memory: Some(memory.into()),
        tier: Some("host".into()),
        gguf: Some(gguf.clone()),
        context: Some(0),
        ..Default::default()
    };
    let mut app = devices_app(dir.path(), opts("16 GiB"));
    snap("devices_cpu_only_16gib", &mut app);
    let t = text(&app, 120, 36);
    assert!(!t.contains("every device"), "{t}");
    assert!(t.contains("✗ the host's share is"), "{t}");
    assert!(t.contains("out of its projection of system memory"), "{t}");
    // the Cache pane's context row is the context -fit chose, which the bounds are at
    let main = App::new(
        Catalog::load_with(Some(dir.path().to_path_buf())),
        &opts("16 GiB"),
    )
    .unwrap();
    let n_ctx = main.ws().report().plan.clone().unwrap().n_ctx;
    assert!(n_ctx < 131_072);
    let t = text(&main, 120, 36);
    let shown = format!(
        "context    auto: {}",
        llmbound::core::units::group_digits(u128::from(n_ctx))
    );
    assert!(t.contains(&shown), "{shown}\n{t}");
    // with room for the repacked weights too, the host holds its share
    let app = devices_app(dir.path(), opts("64 GiB"));
    let t = text(&app, 120, 36);
    assert!(
        t.contains("✓ the host holds its share within its memory"),
        "{t}"
    );
    assert!(!t.contains("CPU_REPACK"), "{t}");
}

#[test]
fn snapshot_devices_dual_3090_qwen3_32b() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "qwen3-32b-shape");
    let mut app = devices_app(dir.path(), dual_3090_opts(gguf));
    snap("devices_dual_3090_qwen3_32b", &mut app);
    let plan = app.ws().report().plan.clone().unwrap();
    assert!(plan.exact_model, "the file's tensor list");
    assert_eq!(plan.devices.len(), 2);
    // the last device holds the output layer
    assert_eq!(
        plan.devices[1].holds.output,
        llmbound::core::placement::groups::Share::Whole
    );
    assert_eq!(
        plan.host_holds.input,
        llmbound::core::placement::groups::Share::Whole
    );
}

#[test]
fn snapshot_devices_moe_16_gib_card() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "qwen3-30b-a3b-shape");
    let mut app = devices_app(dir.path(), moe_opts(gguf));
    snap("devices_moe_16gib", &mut app);
    let plan = app.ws().report().plan.clone().unwrap();
    let PlanOrigin::Fitted { arguments, .. } = &plan.origin else {
        panic!("{:?}", plan.origin)
    };
    assert!(arguments.contains("-ngl 49 -ot "), "{arguments}");
    assert!(!plan.overrides.is_empty());
    // the host holds experts the -ot patterns sent there
    let host = llmbound::tui::views::devices::holding_words(&plan.host_holds);
    assert!(host.contains("experts of layers"), "{host}");
    // the end of the view is reachable at 80×24
    app.update(Action::End);
    snap("devices_moe_16gib_end", &mut app);
    // `a` applies the plan; back in the main view the headline is the plan's: it fits, and
    // the decode split reads the experts left in system memory on the host
    app.update(Action::ApplyPlan);
    app.update(Action::Back);
    assert_eq!(app.view(), View::Main);
    snap("main_moe_16gib_applied", &mut app);
    let r = app.ws().report();
    assert!(r.capacity.fits, "{:?}", r.capacity.verdict);
    let t = text(&app, 120, 36);
    assert!(!t.contains("does not fit"), "{t}");
    assert!(r.decode.short_context.tier_bytes[1] > 4 << 30);
}

#[test]
fn scrolling_reaches_both_ends_and_marks_the_title() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "qwen3-30b-a3b-shape");
    // (two devices and the host: more lines than 80×24 shows)
    let opts = ScenarioOptions {
        context: Some(32768),
        ..dual_3090_opts(gguf)
    };
    let mut app = devices_app(dir.path(), opts);
    app.update(Action::Resize(80, 24));
    let title = |app: &App| text(app, 80, 24).lines().next().unwrap().to_string();
    let top = text(&app, 80, 24);
    assert!(
        title(&app).contains("↓ ") && !title(&app).contains("↑"),
        "{top}"
    );
    app.update(Action::End);
    let end = text(&app, 80, 24);
    assert!(!title(&app).contains("↓"), "End shows the last line: {end}");
    assert!(
        title(&app).contains("↑ ") && end.contains("every device holds its share"),
        "{end}"
    );
    let at_end = app.devices().scroll;
    app.update(Action::Down);
    assert_eq!(app.devices().scroll, at_end, "no scrolling past the end");
    app.update(Action::PageDown);
    assert_eq!(app.devices().scroll, at_end);
    app.update(Action::Up);
    assert_eq!(
        app.devices().scroll,
        at_end - 1,
        "one block up from the end"
    );
    app.update(Action::Home);
    assert_eq!(text(&app, 80, 24), top);
    app.update(Action::PageDown);
    assert!(app.devices().scroll > 0);
    app.update(Action::PageUp);
    assert_eq!(app.devices().scroll, 0);
    app.update(Action::Back);
    assert_eq!(app.view(), View::Main);
}

#[test]
fn the_machine_pane_and_bounds_name_the_memory_bases() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = devices_app(dir.path(), ScenarioOptions::default());
    app.update(Action::Back);
    let t = text(&app, 120, 36);
    assert!(t.contains("working set 36 GiB (3/4)"), "{t}");
    assert!(t.contains("21.595 GiB of the 48 GiB capacity"), "{t}");
    // where the runtime line keeps to one row, it names its base too
    app.update(Action::Resize(200, 50));
    let t = text(&app, 200, 50);
    assert!(
        t.contains("9.164 GiB free of the 36 GiB working set"),
        "{t}"
    );
}

fn cli_json(args: &[String], config: &Path) -> String {
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
    let model_path = (app.ws().opened())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| app.ws().scenario().weights[0].file.clone());
    let mut s =
        serde_json::to_string_pretty(&llmbound::report::to_json(app.ws().report(), &model_path))
            .unwrap();
    s.push('\n');
    s
}

/// `a` in the Devices view applies the fitted plan as `-fit off` with its `-ngl`, `-ts` and
/// `-ot`: the same placement, and the report equals the CLI's given those flags.
fn applies_alike(opts: ScenarioOptions, mut args: Vec<String>, config: &Path) {
    let mut app = devices_app(config, opts);
    let fitted = app.ws().report().plan.clone().unwrap();
    assert!(matches!(fitted.origin, PlanOrigin::Fitted { .. }));
    app.update(Action::ApplyPlan);
    assert!(
        app.message().is_some_and(|m| !m.error),
        "{:?}",
        app.message()
    );
    assert!(app.ws().is_changed());
    let applied = app.ws().report().plan.clone().unwrap();
    assert_eq!(applied.origin, PlanOrigin::FitOff);
    assert_eq!(applied.gpu_layers, fitted.gpu_layers);
    assert_eq!(applied.devices.len(), fitted.devices.len());
    for (a, f) in applied.devices.iter().zip(&fitted.devices) {
        assert_eq!(
            a.memory, f.memory,
            "{}: the fitted placement",
            a.buffer_name
        );
        assert_eq!(a.holds, f.holds);
    }
    assert_eq!(applied.host, fitted.host);
    args.extend(["--fit".into(), "off".into()]);
    args.extend(["--ngl".into(), fitted.gpu_layers.to_string()]);
    if !fitted.tensor_split.is_empty() {
        let ts: Vec<String> = fitted.tensor_split.iter().map(u32::to_string).collect();
        args.extend(["--tensor-split".into(), ts.join(",")]);
    }
    for (pat, buf) in &fitted.overrides {
        args.extend(["--override-tensor".into(), format!("{pat}={buf}")]);
    }
    let cli = cli_json(&args, config);
    let explorer = explorer_json(&app);
    if explorer != cli {
        for (i, (a, b)) in explorer.lines().zip(cli.lines()).enumerate() {
            assert_eq!(a, b, "line {} differs (explorer, CLI)", i + 1);
        }
        assert_eq!(explorer, cli);
    }
}

#[test]
fn applying_the_fitted_plan_agrees_with_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none");
    let moe = shaped_gguf(dir.path(), "qwen3-30b-a3b-shape");
    let m = moe.display().to_string();
    applies_alike(
        moe_opts(moe.clone()),
        [
            "--machine",
            "desktop-rtx-4090",
            "--memory",
            "16 GiB",
            "--device-free",
            "16 GiB",
            "--gguf",
            &m,
            "--context",
            "32768",
        ]
        .map(String::from)
        .to_vec(),
        &config,
    );
    let dense = shaped_gguf(dir.path(), "qwen3-32b-shape");
    let d = dense.display().to_string();
    applies_alike(
        dual_3090_opts(dense.clone()),
        ["--machine", "desktop-dual-rtx-3090", "--gguf", &d]
            .map(String::from)
            .to_vec(),
        &config,
    );
}

#[test]
fn nothing_to_apply_without_a_fitted_plan() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = devices_app(
        dir.path(),
        ScenarioOptions {
            fit: Some(false),
            ..Default::default()
        },
    );
    let before = app.ws().report().plan.clone();
    app.update(Action::ApplyPlan);
    assert!(
        app.message()
            .is_some_and(|m| m.text.contains("no fitted plan")),
        "{:?}",
        app.message()
    );
    assert_eq!(app.ws().report().plan, before);
}

/// With `-ngl auto` the Cache pane's GPU layers row names the layers of llama.cpp's plan, which
/// the bounds are evaluated at (all 49, with the experts its `-ot` names on the host); after
/// `a` the row is the plan's `-ngl`, and the bounds do not move.
#[test]
fn the_gpu_layers_row_says_auto_and_the_layers_the_bounds_are_at() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "qwen3-30b-a3b-shape");
    let opts = moe_opts(gguf);
    let app = App::new(Catalog::load_with(Some(dir.path().to_path_buf())), &opts).unwrap();
    let t = text(&app, 120, 36);
    assert!(t.contains("GPU layers auto: all (49)"), "{t}");
    assert!(t.contains("W 11.6 C 3.00 X 0.337 A 0 / 16.0 GiB"), "{t}");
    let mut app = devices_app(dir.path(), opts);
    app.update(Action::ApplyPlan);
    app.update(Action::Back);
    let t = text(&app, 120, 36);
    assert!(t.contains("GPU layers all (49)"), "{t}");
    assert!(t.contains("W 11.6 C 3.00 X 0.337 A 0 / 16.0 GiB"), "{t}");
}
