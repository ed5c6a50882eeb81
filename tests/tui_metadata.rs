//! The metadata view on the real gemma-3-270m file: a 262,144-entry array and the chat
//! template expand, page, and let the cursor past them (needs LLMBOUND_GEMMA_GGUF).

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use llmbound::build::ScenarioOptions;
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::{App, View};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;
use std::time::Duration;

fn gemma_app() -> Option<(App, tempfile::TempDir)> {
    let Ok(p) = std::env::var("LLMBOUND_GEMMA_GGUF") else {
        skipped!("skipped: set LLMBOUND_GEMMA_GGUF to the gemma-3-270m GGUF");
        return None;
    };
    let d = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(d.path().to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.set_hash_cache(None);
    app.update(Action::OpenPath(PathBuf::from(p)));
    app.wait_for_jobs(Duration::from_secs(60));
    assert!(app.file().loaded.is_some());
    app.update(Action::Metadata);
    assert_eq!(app.view(), View::Metadata);
    Some((app, d))
}

fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().to_string()
}

fn go_to(app: &mut App, key: &str) {
    app.update(Action::Home);
    for _ in 0..200 {
        let rows = app.file().metadata_rows();
        if rows[app.metadata().shown[app.metadata().selected]].key == key {
            return;
        }
        app.update(Action::Down);
    }
    panic!("{key} not found");
}

fn selected_key(app: &App) -> String {
    let rows = app.file().metadata_rows();
    rows[app.metadata().shown[app.metadata().selected]]
        .key
        .clone()
}

#[test]
fn a_long_array_pages_and_lets_the_cursor_past() {
    let Some((mut app, _d)) = gemma_app() else {
        return;
    };
    go_to(&mut app, "tokenizer.ggml.tokens");
    let keys = app.metadata().shown.len();
    let at = app.metadata().selected;
    app.update(Action::Toggle);
    app.wait_for_jobs(Duration::from_secs(60));
    let s = draw(&app, 120, 36);
    assert!(s.contains("▾ tokenizer.ggml.tokens"), "{s}");
    assert!(s.contains(&format!("key {} of {keys}", at + 1)), "{s}");
    // The expanded row no longer says the values are unread.
    assert!(s.contains("262,144 values below · Enter collapses"), "{s}");
    assert!(!s.contains("4,412,518 bytes unread"), "{s}");
    // into the values; End jumps to the last value, the highlight is on screen
    app.update(Action::Down);
    app.update(Action::End);
    assert_eq!(app.metadata().value_row, Some(262_143));
    let s = draw(&app, 120, 36);
    assert!(
        s.contains("row 262,144 of 262,144 in tokenizer.ggml.tokens"),
        "{s}"
    );
    assert!(s.contains("[262143]"), "{s}");
    // past the last value: the next key
    app.update(Action::Down);
    assert_eq!(app.metadata().value_row, None);
    assert_eq!(app.metadata().selected, at + 1);
    // G on the keys reaches the last key, g the first
    app.update(Action::End);
    assert_eq!(app.metadata().selected, keys - 1);
    let s = draw(&app, 80, 24);
    assert!(s.contains(&format!("key {keys} of {keys}")), "{s}");
    app.update(Action::Home);
    assert_eq!(app.metadata().selected, 0);
    // Enter inside the values collapses and leaves the cursor on the key
    go_to(&mut app, "tokenizer.ggml.tokens");
    app.update(Action::PageDown);
    assert!(app.metadata().value_row.is_some());
    app.update(Action::Toggle);
    assert_eq!(app.metadata().expanded, None);
    assert_eq!(selected_key(&app), "tokenizer.ggml.tokens");
}

/// A file with a long multi-line chat template after the token array (the gemma file has none).
fn template_app() -> (App, tempfile::TempDir) {
    use llmbound::gguf::writer::{self, Data, GgufWriter};
    use llmbound::gguf::{GgmlType, Value};
    let d = tempfile::tempdir().unwrap();
    let template: String = (0..60)
        .map(|i| format!("{{% if message['role'] == 'user{i}' %}}\t{{{{ message['content'] }}}}{{% endif %}}\n"))
        .collect();
    let p = d.path().join("template.gguf");
    GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("llama.block_count", Value::U32(1))
        .kv("llama.embedding_length", Value::U32(64))
        .kv("llama.feed_forward_length", Value::U32(128))
        .kv("llama.context_length", Value::U32(4096))
        .kv("llama.attention.head_count", Value::U32(2))
        .kv("llama.attention.head_count_kv", Value::U32(1))
        .kv("tokenizer.chat_template", writer::string(&template))
        .kv("tokenizer.ggml.model", writer::string("gpt2"))
        .tensor("token_embd.weight", GgmlType::F16, &[64, 32])
        .tensor("blk.0.attn_q.weight", GgmlType::F16, &[64, 64])
        .write_file(&p, Data::Zeros)
        .unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(d.path().to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.set_hash_cache(None);
    app.update(Action::OpenPath(p));
    app.wait_for_jobs(Duration::from_secs(30));
    assert!(app.file().loaded.is_some(), "{:?}", app.message());
    app.update(Action::Metadata);
    (app, d)
}

#[test]
fn a_long_string_expands_into_lines_and_pages() {
    let (mut app, _d) = template_app();
    go_to(&mut app, "tokenizer.chat_template");
    let s = draw(&app, 120, 36);
    assert!(s.contains("▸ tokenizer.chat_template"), "{s}");
    app.update(Action::Toggle);
    assert_eq!(
        app.metadata().expanded.as_deref(),
        Some("tokenizer.chat_template")
    );
    app.update(Action::Down);
    app.update(Action::End);
    // 60 lines and the empty one after the last line break
    assert_eq!(app.metadata().value_row, Some(60));
    app.update(Action::Up);
    let s = draw(&app, 120, 36);
    assert!(s.contains("row 60 of 61 in tokenizer.chat_template"), "{s}");
    assert!(s.contains("user59"), "{s}");
    insta::assert_snapshot!("chat_template_end_120x36", s);
    insta::assert_snapshot!("chat_template_end_80x24", draw(&app, 80, 24));
    // the key after it is reachable
    app.update(Action::Down);
    app.update(Action::Down);
    assert_eq!(selected_key(&app), "tokenizer.ggml.model");
}

#[test]
fn snapshot_tokens_expanded() {
    let Some((mut app, _d)) = gemma_app() else {
        return;
    };
    go_to(&mut app, "tokenizer.ggml.tokens");
    app.update(Action::Toggle);
    app.wait_for_jobs(Duration::from_secs(60));
    app.update(Action::Down);
    app.update(Action::PageDown);
    insta::assert_snapshot!("tokens_paged_120x36", draw(&app, 120, 36));
    insta::assert_snapshot!("tokens_paged_80x24", draw(&app, 80, 24));
}
