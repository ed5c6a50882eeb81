//! The bottom line's key hints: every key that works in the current view, fitted to the
//! width (descriptions are added in order while they fit; the keys themselves always show).

use super::app::View;
use super::theme::Theme;
use ratatui::text::{Line, Span};

/// The keys that work in a view, with a word each, in the order they are shown.
pub fn hints(view: View) -> &'static [(&'static str, &'static str)] {
    match view {
        View::Main => &[
            ("Tab", "pane"),
            ("↑↓", "field"),
            ("←→", "adjust"),
            ("Enter", "type"),
            ("Space", "toggle"),
            ("[ ]", "context"),
            ("/", "claim"),
            ("s", "save"),
            ("o", "open"),
            ("t", "tensors"),
            ("m", "metadata"),
            ("c", "compare"),
            ("L", "library"),
            ("b", "bench"),
            ("d", "devices"),
            ("n", "most GPU layers"),
            ("N", "largest context"),
            ("M", "model"),
            ("S", "scenario"),
            ("x", "stop hash"),
            ("@", "messages"),
            ("?", "help"),
            ("q", "quit"),
        ],
        View::Tensors => &[
            ("↑↓ PgUp PgDn g G", "rows"),
            ("←→", "sort"),
            ("r", "reverse"),
            ("f", "filter"),
            ("Enter", "group"),
            ("Space", "fold"),
            ("/", "search"),
            ("Esc", "back"),
            ("[ ]", "context"),
            ("o", "open"),
            ("m", "metadata"),
            ("c", "compare"),
            ("b", "bench"),
            ("x", "stop hash"),
            ("@", "messages"),
            ("?", "help"),
            ("q", "quit"),
        ],
        View::Metadata => &[
            ("↑↓ PgUp PgDn g G", "rows"),
            ("Enter", "expand"),
            ("/", "search"),
            ("Esc", "back"),
            ("[ ]", "context"),
            ("o", "open"),
            ("t", "tensors"),
            ("c", "compare"),
            ("b", "bench"),
            ("x", "stop hash"),
            ("@", "messages"),
            ("?", "help"),
            ("q", "quit"),
        ],
        View::Compare => &[
            ("↑↓ PgUp PgDn g G", "rows"),
            ("←→", "column"),
            ("Space", "mark"),
            ("f", "marked only"),
            ("/", "filter"),
            ("-", "show/hide"),
            ("r", "sort"),
            ("Enter", "use"),
            ("Esc", "back"),
            ("[ ]", "context"),
            ("o", "open"),
            ("t", "tensors"),
            ("m", "metadata"),
            ("b", "bench"),
            ("x", "stop hash"),
            ("@", "messages"),
            ("?", "help"),
            ("q", "quit"),
        ],
        View::Library => &[
            ("↑↓ PgUp PgDn g G", "rows"),
            ("Enter", "open"),
            ("r", "sort"),
            ("a", "add folder"),
            ("Esc", "back"),
            ("[ ]", "context"),
            ("o", "open file"),
            ("c", "compare"),
            ("@", "messages"),
            ("?", "help"),
            ("q", "quit"),
        ],
        View::Devices => &[
            ("↑↓ PgUp PgDn g G", "scroll"),
            ("a", "apply plan"),
            ("Esc", "back"),
            ("@", "messages"),
            ("?", "help"),
            ("q", "quit"),
        ],
        View::Bench => &[
            ("↑↓ PgUp PgDn g G", "scroll"),
            ("Enter", "import"),
            ("Esc", "back"),
            ("[ ]", "context"),
            ("o", "open"),
            ("t", "tensors"),
            ("m", "metadata"),
            ("c", "compare"),
            ("x", "stop hash"),
            ("@", "messages"),
            ("?", "help"),
            ("q", "quit"),
        ],
    }
}

/// The hints in `width` columns: every key, and as many descriptions (in order) as fit.
pub fn fit(pairs: &[(&str, &str)], width: usize) -> Vec<(String, String)> {
    let keys_only: usize = pairs.iter().map(|(k, _)| k.chars().count() + 1).sum();
    let mut room = width.saturating_sub(keys_only);
    let mut out: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, _)| (k.to_string(), String::new()))
        .collect();
    // Esc, ? and q keep their words first (a new user looks for them), then in order.
    let first = |k: &str| matches!(k, "Esc" | "?" | "q");
    let order = (0..pairs.len())
        .filter(|i| first(pairs[*i].0))
        .chain((0..pairs.len()).filter(|i| !first(pairs[*i].0)));
    for i in order {
        let extra = pairs[i].1.chars().count() + 1;
        if extra <= room {
            room -= extra;
            out[i].1 = pairs[i].1.to_string();
        }
    }
    out
}

/// The fitted hints as a styled line (" key what").
pub fn line(pairs: &[(&str, &str)], width: usize, t: Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for (k, w) in fit(pairs, width) {
        spans.push(Span::styled(format!(" {k}"), t.key()));
        if !w.is_empty() {
            spans.push(Span::styled(format!(" {w}"), t.label()));
        }
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_shows_at_80_columns() {
        for v in [
            View::Main,
            View::Tensors,
            View::Metadata,
            View::Compare,
            View::Library,
            View::Bench,
            View::Devices,
        ] {
            let f = fit(hints(v), 80);
            let text: String = f
                .iter()
                .map(|(k, w)| {
                    if w.is_empty() {
                        format!(" {k}")
                    } else {
                        format!(" {k} {w}")
                    }
                })
                .collect();
            assert!(text.chars().count() <= 80, "{v:?}: {text}");
            assert_eq!(f.len(), hints(v).len());
        }
    }
}
