//! The tensor view's display: footer totals follow the type filter, groups fold and unfold
//! with the right marker, headers are not cut, the group share is labelled.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use llmbound::build::ScenarioOptions;
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, Value};
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::{App, View};
use llmbound::tui::views::tensors::{Grouping, TableLine};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;
use std::time::Duration;

fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().to_string()
}

fn open(p: PathBuf, cfg: &std::path::Path) -> App {
    let mut app = App::new(
        Catalog::load_with(Some(cfg.to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.set_hash_cache(None);
    app.update(Action::OpenPath(p));
    app.wait_for_jobs(Duration::from_secs(60));
    assert!(app.file().loaded.is_some(), "{:?}", app.message());
    app.update(Action::Tensors);
    assert_eq!(app.view(), View::Tensors);
    app
}

/// Two layers, tied output (so the embedding reads "full (tied output)"), three types.
fn tiny(dir: &std::path::Path) -> PathBuf {
    let mut w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("llama.block_count", Value::U32(2))
        .kv("llama.embedding_length", Value::U32(256))
        .kv("llama.feed_forward_length", Value::U32(512))
        .kv("llama.context_length", Value::U32(4096))
        .kv("llama.attention.head_count", Value::U32(4))
        .kv("llama.attention.head_count_kv", Value::U32(2))
        .tensor("token_embd.weight", GgmlType::Q8_0, &[256, 1024])
        .tensor("output_norm.weight", GgmlType::F32, &[256]);
    for l in 0..2 {
        w = w
            .tensor(&format!("blk.{l}.attn_norm.weight"), GgmlType::F32, &[256])
            .tensor(
                &format!("blk.{l}.attn_q.weight"),
                GgmlType::Q4_K,
                &[256, 256],
            )
            .tensor(
                &format!("blk.{l}.attn_v.weight"),
                GgmlType::Q8_0,
                &[256, 128],
            )
            .tensor(
                &format!("blk.{l}.ffn_down.weight"),
                GgmlType::Q4_K,
                &[512, 256],
            );
    }
    let p = dir.join("tiny.gguf");
    w.write_file(&p, Data::Zeros).unwrap();
    p
}

#[test]
fn the_footer_totals_follow_the_filter() {
    let d = tempfile::tempdir().unwrap();
    let mut app = open(tiny(d.path()), d.path());
    let s = draw(&app, 120, 36);
    assert!(s.contains("in all 10 tensors"), "{s}");
    // Q8_0 first? the filter cycles by bytes; step until it is Q8_0.
    for _ in 0..4 {
        app.update(Action::Filter);
        if app.tensors().filter.as_deref() == Some("Q8_0") {
            break;
        }
    }
    assert_eq!(app.tensors().filter.as_deref(), Some("Q8_0"));
    let inv = app.file().inventory();
    let want: u64 = inv
        .iter()
        .filter(|t| t.type_name == "Q8_0")
        .filter_map(|t| t.bytes)
        .sum();
    let s = draw(&app, 120, 36);
    assert!(s.contains("3 of 10"), "{s}");
    assert!(
        s.contains(&format!(
            "Σ {} bytes = {} in 3 of 10 tensors",
            llmbound::core::units::group_digits(want as u128),
            llmbound::tui::format::bytes(want)
        )),
        "{s}"
    );
}

#[test]
fn groups_fold_and_unfold() {
    let d = tempfile::tempdir().unwrap();
    let mut app = open(tiny(d.path()), d.path());
    app.update(Action::Group);
    assert_eq!(app.tensors().group, Grouping::Layer);
    let before = app.tensors().lines.len();
    let s = draw(&app, 120, 36);
    assert!(s.contains("▾ layer 0 · 4 tensors"), "{s}");
    assert!(!s.contains("▸ layer"), "{s}");
    app.update(Action::Toggle);
    assert_eq!(app.tensors().lines.len(), before - 4);
    assert!(
        matches!(&app.tensors().lines[app.tensors().selected], TableLine::Group { label, .. } if label == "layer 0")
    );
    let s = draw(&app, 120, 36);
    assert!(s.contains("▸ layer 0 · 4 tensors"), "{s}");
    assert!(s.contains("▾ layer 1"), "{s}");
    insta::assert_snapshot!("folded_layer_120x36", s);
    insta::assert_snapshot!("folded_layer_80x24", draw(&app, 80, 24));
    app.update(Action::Toggle);
    assert_eq!(app.tensors().lines.len(), before);
}

#[test]
fn headers_and_entries_are_not_cut() {
    let d = tempfile::tempdir().unwrap();
    let mut app = open(tiny(d.path()), d.path());
    // sort by bits per weight (descending shows the arrow)
    while app.tensors().sort != llmbound::tui::views::tensors::Column::Bits {
        app.update(Action::Right);
    }
    let s = draw(&app, 120, 36);
    assert!(s.contains("bits/w↓"), "{s}");
    assert!(s.contains("full (tied output)"), "{s}");
    insta::assert_snapshot!("sorted_by_bits_120x36", s);
    insta::assert_snapshot!("sorted_by_bits_80x24", draw(&app, 80, 24));
}

#[test]
fn gemma_q8_0_filter_totals() {
    let Ok(p) = std::env::var("LLMBOUND_GEMMA_GGUF") else {
        skipped!("skipped: set LLMBOUND_GEMMA_GGUF to the gemma-3-270m GGUF");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let mut app = open(PathBuf::from(p), d.path());
    for _ in 0..8 {
        app.update(Action::Filter);
        if app.tensors().filter.as_deref() == Some("Q8_0") {
            break;
        }
    }
    let (n, _, bytes) = app.tensors().shown_totals();
    assert_eq!(n, app.tensors().shown);
    let s = draw(&app, 120, 36);
    assert!(s.contains(&format!("{n} of 236")), "{s}");
    assert!(
        s.contains(&format!(
            "Σ {} bytes = {} in {n} of 236 tensors",
            llmbound::core::units::group_digits(bytes as u128),
            llmbound::tui::format::bytes(bytes)
        )),
        "{s}"
    );
}

/// A layer with a long norm name and a 3-D expert tensor, beside the tiny file's tensors.
fn long_names(dir: &std::path::Path) -> (PathBuf, u64) {
    let w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("llama.block_count", Value::U32(2))
        .kv("llama.embedding_length", Value::U32(256))
        .kv("llama.feed_forward_length", Value::U32(512))
        .kv("llama.context_length", Value::U32(4096))
        .kv("llama.attention.head_count", Value::U32(4))
        .kv("llama.attention.head_count_kv", Value::U32(2))
        .tensor("token_embd.weight", GgmlType::Q8_0, &[256, 1024])
        .tensor("blk.0.attn_norm.weight", GgmlType::F32, &[256])
        .tensor("blk.0.post_attention_norm.weight", GgmlType::F32, &[256])
        .tensor("blk.0.ffn_gate_exps.weight", GgmlType::Q8_0, &[256, 512, 8])
        .tensor("blk.1.attn_norm.weight", GgmlType::F32, &[256])
        .tensor("output_norm.weight", GgmlType::F32, &[256]);
    let data = w.data_len();
    let p = dir.join("long.gguf");
    w.write_file(&p, Data::Zeros).unwrap();
    (p, data)
}

#[test]
fn names_whole_shapes_whole_offsets_absolute() {
    let d = tempfile::tempdir().unwrap();
    let (p, data_len) = long_names(d.path());
    let file_len = std::fs::metadata(&p).unwrap().len();
    let mut app = open(p, d.path());
    // The data section is the file's last `data_len` bytes: where the first tensor starts.
    let start = file_len - data_len;
    for (w, h) in [(80, 24), (100, 30), (120, 36), (200, 50)] {
        app.update(Action::Resize(w, h));
        let s = draw(&app, w, h);
        // The longest name whole while other cells stand empty.
        assert!(
            s.contains("blk.0.post_attention_norm.weight "),
            "{w}×{h}\n{s}"
        );
        assert!(!s.contains("post_attention_norm.wei…"), "{w}×{h}\n{s}");
        let titles = s.lines().nth(2).unwrap_or("");
        if titles.contains("file offset") {
            // Absolute: the first tensor's data starts at the data section's start.
            assert!(
                s.contains(&format!(
                    " {} ",
                    llmbound::core::units::group_digits(start as u128)
                )),
                "{w}×{h}\n{s}"
            );
        } else {
            // Hidden columns are named on the rule above the table.
            assert!(s.contains(" of 8 columns"), "{w}×{h}\n{s}");
        }
        if titles.contains("shape") {
            assert!(s.contains("256 × 512 × 8"), "{w}×{h}\n{s}");
        }
    }
    let s = draw(&app, 200, 50);
    assert!(s.contains("file offset"), "{s}");
    assert!(!s.contains(" of 8 columns"), "{s}");
    // At 80 wide → sorts only by the columns on screen.
    app.update(Action::Resize(80, 24));
    let s = draw(&app, 80, 24);
    assert!(s.contains(" of 8 columns"), "{s}");
    use llmbound::tui::views::tensors::Column;
    for _ in 0..12 {
        app.update(Action::Right);
        let c = app.tensors().sort;
        assert!(
            !matches!(c, Column::Offset | Column::Elements | Column::Shape),
            "sorted by a hidden column {c:?}"
        );
        let title = c.title();
        assert!(draw(&app, 80, 24).contains(title), "{title}");
    }
}

#[test]
fn group_order_follows_the_sort_direction() {
    let d = tempfile::tempdir().unwrap();
    let mut app = open(tiny(d.path()), d.path());
    app.update(Action::Group);
    let labels = |app: &App| -> Vec<String> {
        (app.tensors().lines.iter())
            .filter_map(|l| match l {
                TableLine::Group { label, .. } => Some(label.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(labels(&app), ["layer 0", "layer 1", "outside layers"]);
    app.update(Action::Reverse);
    assert_eq!(labels(&app), ["outside layers", "layer 1", "layer 0"]);
}
