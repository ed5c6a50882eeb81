//! The explorer shows what the CLI shows: a split opened from any shard is one artifact of
//! its shards (no extras, named for shard 1); a refused cache has no "largest context that
//! fits"; a windowed cache's KV line multiplies out.

#[path = "support/fixtures.rs"]
mod fixtures;

use llmbound::build::ScenarioOptions;
use llmbound::gguf::writer::Data;
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::App;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::Path;
use std::time::Duration;

fn app_on(cfg: &Path, file: &Path) -> App {
    let mut app = App::new(
        Catalog::load_with(Some(cfg.to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.set_hash_cache(None);
    app.update(Action::OpenPath(file.to_path_buf()));
    app.wait_for_jobs(Duration::from_secs(30));
    assert!(app.file().loaded.is_some(), "{:?}", app.message());
    app
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().to_string()
}

#[test]
fn a_split_opened_from_its_second_shard_is_three_shards_and_no_extra() {
    let d = tempfile::tempdir().unwrap();
    let shards = fixtures::split("Tiny", 6, 3);
    for (i, w) in shards.into_iter().enumerate() {
        w.write_file(
            &d.path().join(format!("tiny-{:05}-of-00003.gguf", i + 1)),
            Data::Zeros,
        )
        .unwrap();
    }
    let app = app_on(d.path(), &d.path().join("tiny-00002-of-00003.gguf"));
    // 120×36 shows the Artifact pane beside the others; 80×24 shows the headline.
    let s = screen(&app, 120, 36);
    assert!(s.contains("3 shards"), "{s}");
    assert!(!s.contains("extra"), "{s}");
    for (w, h) in [(120, 36), (80, 24)] {
        let s = screen(&app, w, h);
        assert!(s.contains("tiny-00001-of-00003"), "{s}");
        assert!(!s.contains("tiny-00002-of-00003"), "{s}");
    }
}

fn app_with(opts: ScenarioOptions) -> (App, tempfile::TempDir) {
    let d = tempfile::tempdir().unwrap();
    let app = App::new(Catalog::load_with(Some(d.path().to_path_buf())), &opts).unwrap();
    (app, d)
}

#[test]
fn a_refused_cache_shows_no_largest_context_under_its_cross() {
    let (app, _d) = app_with(ScenarioOptions {
        cache_type_v: Some("q8_0".into()),
        flash_attn: Some(false),
        ..Default::default()
    });
    for (w, h) in [(120, 36), (80, 24)] {
        let s = screen(&app, w, h);
        assert!(s.contains("will not start"), "{s}");
        let flat: String = s.split('\n').collect::<Vec<_>>().join(" ");
        assert!(!flat.contains("largest context that fits 1"), "{s}");
        assert!(!flat.contains("119,296 tokens"), "{s}");
    }
}

#[test]
fn a_windowed_cache_line_multiplies_out_and_swa_full_moves_both() {
    // gemma-3-270m: sliding layers (window 512) beside full ones.
    let line = |swa_full: bool| {
        let (app, _d) = app_with(ScenarioOptions {
            scenario: Some("gemma-3-270m-cpu-vm".into()),
            swa_full,
            ..Default::default()
        });
        let kv = &app.ws().report().kv;
        let n = app.ws().report().inputs.cache.context;
        assert!(
            kv.growing_bytes_per_token * n + kv.window_bytes >= kv.bytes.saturating_sub(64)
                && kv.growing_bytes_per_token * n + kv.window_bytes <= kv.bytes + 64,
            "{kv:?}"
        );
        let s = screen(&app, 120, 36);
        let per_token = llmbound::core::units::group_digits(kv.growing_bytes_per_token as u128);
        if kv.window_bytes > 0 {
            let l = s
                .lines()
                .find(|l| l.contains("B/tok ×"))
                .unwrap_or_else(|| panic!("{s}"))
                .to_string();
            assert!(
                l.contains(&format!("KV {per_token} B/tok × 4,096 + ")),
                "{l}"
            );
            assert!(
                l.contains(" win = ") && l.contains("logical, ") && l.contains(" alloc"),
                "{l}"
            );
        } else {
            // Every layer grows (swa-full): the per-token figure times N is the total.
            assert!(s.contains(&format!("KV {per_token} bytes/token")), "{s}");
        }
        (kv.bytes, kv.allocated_bytes, kv.window_bytes)
    };
    let (logical, allocated, window) = line(false);
    assert!(window > 0);
    let (logical_full, allocated_full, _) = line(true);
    assert!(logical_full > logical, "{logical_full} vs {logical}");
    assert!(
        allocated_full > allocated,
        "{allocated_full} vs {allocated}"
    );
}

/// A partial download opened in the explorer: the Artifact pane gives the file's own size and
/// the bytes it lacks (it paired the file's name with the previous model's 19.762 GB, and
/// counted 19 GB "missing" against it), says the bounds do not use it, and the Bounds title
/// names the model its figures are for.
#[test]
fn a_partial_download_is_described_as_itself_and_the_bounds_name_their_model() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("tiny-partial.gguf");
    fixtures::tiny("Tiny", 4)
        .write_file(&path, Data::Zeros)
        .unwrap();
    let full = std::fs::metadata(&path).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(full - 1000).unwrap();
    let app = app_on(d.path(), &path);
    assert!(app.file().refused.is_some(), "{:?}", app.message());
    let s = screen(&app, 120, 36);
    let size = format!(
        "{} bytes",
        llmbound::core::units::group_digits(u128::from(full - 1000))
    );
    assert!(s.contains(&size), "{size}\n{s}");
    assert!(s.contains("PARTIAL DOWNLOAD: 1,000 bytes missing"), "{s}");
    assert!(s.contains("✗ not for the bounds: "), "{s}");
    assert!(s.contains("Bounds · Qwen3-32B (not the open file)"), "{s}");
    // nothing of the previous model's artifact beside the file's name
    assert!(!s.contains("19.762 GB"), "{s}");
    assert!(!s.contains("bits/param"), "{s}");
    let s = screen(&app, 80, 24);
    assert!(s.contains("(not t…"), "{s}");
}
