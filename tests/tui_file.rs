//! The explorer on a GGUF file written by the test (gguf's fixture writer): opening off the
//! UI thread, the Artifact pane's encodings, the tensor browser, the metadata view, hashing
//! against a pinned profile (verified / MISMATCH / not pinned) and cancelling.

use llmbound::build::ScenarioOptions;
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, Value};
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::{App, View};
use llmbound::tui::file::HashState;
use llmbound::tui::views::tensors::{Grouping, TableLine};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A small llama-shaped model mixing encodings the way a Q4_K_M file does.
fn model(layers: u32) -> GgufWriter {
    let mut w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string("Tiny Llama"))
        .kv("general.file_type", Value::U32(15))
        .kv("llama.block_count", Value::U32(layers))
        .kv("llama.embedding_length", Value::U32(256))
        .kv("llama.feed_forward_length", Value::U32(512))
        .kv("llama.context_length", Value::U32(8192))
        .kv("llama.attention.head_count", Value::U32(4))
        .kv("llama.attention.head_count_kv", Value::U32(2))
        .kv("tokenizer.ggml.model", writer::string("gpt2"))
        .kv(
            "tokenizer.ggml.tokens",
            writer::string_array((0..20_000).map(|i| format!("tok{i}"))),
        )
        .kv("tokenizer.ggml.bos_token_id", Value::U32(1))
        .tensor("token_embd.weight", GgmlType::Q4_K, &[256, 1024])
        .tensor("output_norm.weight", GgmlType::F32, &[256])
        .tensor("output.weight", GgmlType::Q6_K, &[256, 1024]);
    for l in 0..layers {
        let ffn_down = if l % 2 == 0 {
            GgmlType::Q6_K
        } else {
            GgmlType::Q4_K
        };
        w = w
            .tensor(&format!("blk.{l}.attn_norm.weight"), GgmlType::F32, &[256])
            .tensor(
                &format!("blk.{l}.attn_q.weight"),
                GgmlType::Q4_K,
                &[256, 256],
            )
            .tensor(
                &format!("blk.{l}.attn_k.weight"),
                GgmlType::Q4_K,
                &[256, 128],
            )
            .tensor(
                &format!("blk.{l}.attn_v.weight"),
                GgmlType::Q6_K,
                &[256, 128],
            )
            .tensor(
                &format!("blk.{l}.attn_output.weight"),
                GgmlType::Q4_K,
                &[256, 256],
            )
            .tensor(&format!("blk.{l}.ffn_norm.weight"), GgmlType::F32, &[256])
            .tensor(
                &format!("blk.{l}.ffn_gate.weight"),
                GgmlType::Q4_K,
                &[256, 512],
            )
            .tensor(
                &format!("blk.{l}.ffn_up.weight"),
                GgmlType::Q4_K,
                &[256, 512],
            )
            .tensor(&format!("blk.{l}.ffn_down.weight"), ffn_down, &[512, 256]);
    }
    w
}

fn write(dir: &Path, name: &str, layers: u32) -> PathBuf {
    let p = dir.join(name);
    model(layers).write_file(&p, Data::Zeros).unwrap();
    p
}

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

fn draw(app: &App, w: u16, h: u16) -> TestBackend {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().clone()
}

fn snap(name: &str, app: &App) {
    insta::assert_snapshot!(format!("{name}_120x36"), draw(app, 120, 36));
    insta::assert_snapshot!(format!("{name}_80x24"), draw(app, 80, 24));
}

#[test]
fn opening_a_file_replaces_the_model_and_bytes() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny-q4_k_m.gguf", 4);
    let app = app_on(d.path(), &p);
    let len = std::fs::metadata(&p).unwrap().len();
    assert_eq!(app.ws().report().artifact.bytes, len);
    assert_eq!(app.ws().scenario().model.layers.len(), 4);
    assert!(app.ws().scenario().inventory.is_some());
    assert!(app.ws().report().decode.inventory_full_context.is_some());
    assert!(app.ws().report().artifact.parameters_counted);
    let l = app.file().loaded.as_ref().unwrap();
    let types: Vec<&str> = l.by_type.iter().map(|t| t.type_name.as_str()).collect();
    assert!(types.contains(&"Q4_K") && types.contains(&"Q6_K") && types.contains(&"F32"));
    let s = draw(&app, 120, 36).to_string();
    assert!(
        s.contains("Q6_K") && s.contains("Q4_K") && s.contains("share"),
        "{s}"
    );
    assert!(s.contains("inventory @ 32,768"), "{s}");
}

#[test]
fn a_file_that_is_not_gguf_is_a_message_not_a_crash() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("notes.txt");
    std::fs::write(&p, "hello, this is text").unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(d.path().to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.update(Action::OpenPath(p));
    app.wait_for_jobs(Duration::from_secs(10));
    let m = app.message().cloned().unwrap();
    assert!(m.error && m.text.contains("not a GGUF file"), "{}", m.text);
    assert!(app.file().loaded.is_none());
    assert_eq!(
        format!(
            "{:.2}",
            app.ws().report().decode.short_context.tokens_per_second
        ),
        "13.81"
    );
    app.update(Action::OpenPath(d.path().join("missing.gguf")));
    app.wait_for_jobs(Duration::from_secs(10));
    assert!(app.message().unwrap().text.contains("cannot open"));
}

#[test]
fn the_open_key_asks_for_a_path() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny.gguf", 2);
    let mut app = App::new(
        Catalog::load_with(Some(d.path().to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.update(Action::Open);
    assert!(app.is_typing());
    app.update(Action::SetText(p.display().to_string()));
    app.wait_for_jobs(Duration::from_secs(30));
    assert_eq!(app.ws().scenario().model.layers.len(), 2);
}

#[test]
fn tensor_browser_sorts_filters_searches_and_groups() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny.gguf", 4);
    let mut app = app_on(d.path(), &p);
    app.update(Action::Tensors);
    assert_eq!(app.view(), View::Tensors);
    let n = app.file().inventory().len();
    assert_eq!(n, 3 + 4 * 9);
    assert_eq!(app.tensors().lines.len(), n);
    // Sort by bytes (→ from name/type/shape/elements/bytes), largest first.
    for _ in 0..5 {
        app.update(Action::Right);
    }
    let inv = app.file().inventory().to_vec();
    let first = match app.tensors().lines[0] {
        TableLine::Tensor(i) => i,
        _ => panic!(),
    };
    assert!(inv.iter().all(|t| t.bytes <= inv[first].bytes));
    // Filter by type cycles through the types in the file.
    app.update(Action::Filter);
    let f = app.tensors().filter.clone().unwrap();
    assert!(
        app.tensors()
            .lines
            .iter()
            .all(|l| matches!(l, TableLine::Tensor(i) if inv[*i].type_name == f))
    );
    app.update(Action::Filter);
    app.update(Action::Filter);
    app.update(Action::Filter);
    assert_eq!(app.tensors().filter, None);
    // Incremental search.
    app.update(Action::Search);
    for c in "ffn_down".chars() {
        app.update(Action::Input(c));
    }
    assert_eq!(app.tensors().shown, 4);
    app.update(Action::Submit);
    assert_eq!(app.tensors().search, "ffn_down");
    app.update(Action::Back);
    assert_eq!(app.tensors().shown, n);
    // Group by layer, then by type, with rollups.
    app.update(Action::Group);
    assert_eq!(app.tensors().group, Grouping::Layer);
    let groups = app
        .tensors()
        .lines
        .iter()
        .filter(|l| matches!(l, TableLine::Group { .. }))
        .count();
    assert_eq!(groups, 5);
    app.update(Action::Group);
    assert_eq!(app.tensors().group, Grouping::Type);
    let shares: f64 = app
        .tensors()
        .lines
        .iter()
        .filter_map(|l| match l {
            TableLine::Group { share, .. } => Some(*share),
            _ => None,
        })
        .sum();
    assert!((shares - 1.0).abs() < 1e-9);
    app.update(Action::Back);
    assert_eq!(app.view(), View::Main);
}

#[test]
fn ten_thousand_tensors_scroll() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "big.gguf", 1200);
    let mut app = app_on(d.path(), &p);
    app.update(Action::Tensors);
    assert!(app.file().inventory().len() > 10_000);
    for _ in 0..50 {
        app.update(Action::PageDown);
        let _ = draw(&app, 120, 36);
    }
    app.update(Action::End);
    let s = draw(&app, 120, 36).to_string();
    assert!(s.contains("blk.1199.ffn_down.weight"), "{s}");
    app.update(Action::Group);
    app.update(Action::Search);
    app.update(Action::SetText("blk.77.".into()));
    assert_eq!(app.tensors().shown, 9);
}

#[test]
fn metadata_lists_keys_and_expands_long_arrays() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny.gguf", 2);
    let mut app = app_on(d.path(), &p);
    app.update(Action::Metadata);
    let rows = app.file().metadata_rows().to_vec();
    assert!(rows.iter().any(|r| r.key == "general.architecture"));
    let tokens = rows
        .iter()
        .position(|r| r.key == "tokenizer.ggml.tokens")
        .unwrap();
    assert_eq!(rows[tokens].array_len, Some(20_000));
    app.update(Action::Home);
    for _ in 0..tokens {
        app.update(Action::Down);
    }
    app.update(Action::Toggle);
    app.wait_for_jobs(Duration::from_secs(10));
    let values = app
        .file()
        .array("tokenizer.ggml.tokens")
        .unwrap()
        .clone()
        .unwrap();
    assert_eq!(values.len(), 20_000);
    let s = draw(&app, 120, 36).to_string();
    assert!(
        s.contains("tok0") && s.contains("▾ tokenizer.ggml.tokens"),
        "{s}"
    );
    app.update(Action::Search);
    app.update(Action::SetText("bos".into()));
    assert_eq!(app.metadata().shown.len(), 1);
}

fn pin(cfg: &Path, bytes: u64, sha: &str) {
    std::fs::create_dir_all(cfg.join("models")).unwrap();
    std::fs::write(
        cfg.join("models/tiny.toml"),
        format!(
            "id = \"tiny\"\nname = \"Tiny\"\narchitecture = \"llama\"\nlayers = 4\nattention-heads = 4\nkv-heads = 2\nhidden-size = 256\nvocab-size = 1024\n\n[[artifact]]\nid = \"tiny-q\"\nfile = \"tiny.gguf\"\nbytes = {bytes}\nsha256 = \"{sha}\"\n"
        ),
    )
    .unwrap();
}

fn sha_of(p: &Path) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(std::fs::read(p).unwrap());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn hashing_verifies_against_a_pinned_profile() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny.gguf", 4);
    let len = std::fs::metadata(&p).unwrap().len();
    pin(d.path(), len, &sha_of(&p));
    // A pinned file of the same size is hashed on open.
    let mut app = app_on(d.path(), &p);
    app.wait_for_jobs(Duration::from_secs(30));
    assert!(
        matches!(app.file().hash, HashState::Verified(_)),
        "{:?}",
        app.file().hash
    );
    assert!(draw(&app, 120, 36).to_string().contains("verified"));

    pin(d.path(), len, &"0".repeat(64));
    let mut app = app_on(d.path(), &p);
    app.wait_for_jobs(Duration::from_secs(30));
    assert!(
        matches!(app.file().hash, HashState::Mismatch { .. }),
        "{:?}",
        app.file().hash
    );
    assert!(draw(&app, 120, 36).to_string().contains("MISMATCH"));
}

#[test]
fn hashing_an_unpinned_file_on_demand_and_cancelling() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny.gguf", 4);
    let mut app = app_on(d.path(), &p);
    assert_eq!(app.file().hash, HashState::Idle);
    app.update(Action::Hash);
    app.update(Action::CancelHash);
    app.wait_for_jobs(Duration::from_secs(30));
    assert!(
        matches!(
            app.file().hash,
            HashState::Cancelled | HashState::NotPinned(_)
        ),
        "{:?}",
        app.file().hash
    );
    app.update(Action::Hash);
    app.wait_for_jobs(Duration::from_secs(30));
    match &app.file().hash {
        HashState::NotPinned(h) => assert_eq!(*h, sha_of(&p)),
        other => panic!("{other:?}"),
    }
    assert!(draw(&app, 120, 36).to_string().contains("not pinned"));
}

#[test]
fn snapshot_file_open() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny-q4_k_m.gguf", 4);
    let mut app = app_on(d.path(), &p);
    app.update(Action::Back);
    snap("file_open", &app);
}

#[test]
fn snapshot_inventory_browser() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny-q4_k_m.gguf", 4);
    let mut app = app_on(d.path(), &p);
    app.update(Action::Tensors);
    snap("inventory_browser", &app);
    app.update(Action::Group);
    app.update(Action::Group);
    snap("inventory_by_type", &app);
}

#[test]
fn snapshot_metadata() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny-q4_k_m.gguf", 4);
    let mut app = app_on(d.path(), &p);
    app.update(Action::Metadata);
    snap("metadata", &app);
}

#[test]
fn the_open_prompt_completes_paths() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "alpha-q4.gguf", 2);
    write(d.path(), "alpha-q8.gguf", 2);
    std::fs::write(d.path().join("alpha.txt"), "x").unwrap();
    let base = format!("{}/al", d.path().display());
    let (t, note) = llmbound::tui::app::complete_path(&base);
    assert_eq!(t, format!("{}/alpha-q", d.path().display()));
    assert!(note.unwrap().contains("alpha-q4.gguf"));
    let (t, note) = llmbound::tui::app::complete_path(&format!("{}/alpha-q8", d.path().display()));
    assert_eq!(t, format!("{}/alpha-q8.gguf", d.path().display()));
    assert!(note.is_none());
}

#[test]
fn a_file_without_kv_keys_is_still_browsable() {
    let cfg = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // No head_count: the KV maths cannot be done, the inventory can.
    let p = dir.path().join("no-heads.gguf");
    GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("llama.block_count", Value::U32(2))
        .kv("llama.embedding_length", Value::U32(64))
        .tensor("token_embd.weight", GgmlType::F16, &[64, 100])
        .tensor("blk.0.attn_q.weight", GgmlType::Q8_0, &[64, 64])
        .tensor("blk.1.attn_q.weight", GgmlType::Q8_0, &[64, 64])
        .write_file(&p, Data::Zeros)
        .unwrap();
    let app = app_on(cfg.path(), &p);
    let m = app.message().unwrap();
    assert!(m.error, "{}", m.text);
    assert!(
        m.text.contains("tensors (t) and metadata (m) are shown"),
        "{}",
        m.text
    );
    assert!(!m.text.contains('\n'));
    // the bounds keep the default scenario; the views browse the file
    assert_eq!(app.ws().scenario().model.name, "Qwen3-32B");
    assert_eq!(app.file().inventory().len(), 3);
    assert!(
        app.file()
            .metadata_rows()
            .iter()
            .any(|r| r.key == "llama.block_count")
    );
}

/// (Issue 19, auto-hash) Opening a file whose size matches a pinned artifact says why it is
/// being hashed; with the setting off (`LLMBOUND_AUTO_HASH=off`) it is not hashed and the
/// status line says how to hash it.
#[test]
fn auto_hash_says_why_and_can_be_turned_off() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "tiny.gguf", 4);
    let len = std::fs::metadata(&p).unwrap().len();
    pin(d.path(), len, &sha_of(&p));
    let app = app_on(d.path(), &p);
    let log: Vec<String> = app.log().into_iter().map(|m| m.text).collect();
    assert!(
        log.iter().any(
            |m| m.contains("hashing: its size matches the pinned artifact tiny-q")
                && m.contains("LLMBOUND_AUTO_HASH=off")
        ),
        "{log:?}"
    );
    let mut app = App::new(
        Catalog::load_with(Some(d.path().to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.set_hash_cache(None);
    app.set_auto_hash(false);
    app.update(Action::OpenPath(p.clone()));
    app.wait_for_jobs(Duration::from_secs(30));
    assert_eq!(app.file().hash, HashState::Idle);
    let m = app.message().map(|m| m.text.clone()).unwrap_or_default();
    assert!(
        m.contains(
            "its size matches the pinned artifact tiny-q: Enter on the Artifact pane hashes it"
        ),
        "{m}"
    );
    use llmbound::tui::app::auto_hash_setting;
    assert_eq!(auto_hash_setting(None), Ok(true));
    assert_eq!(auto_hash_setting(Some("off")), Ok(false));
    assert_eq!(auto_hash_setting(Some("0")), Ok(false));
    assert!(
        auto_hash_setting(Some("sometimes"))
            .unwrap_err()
            .contains("LLMBOUND_AUTO_HASH")
    );
}
