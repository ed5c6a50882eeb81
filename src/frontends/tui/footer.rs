//! The bottom line's key hints, generated from the keymap (`Keymap::footer`): every key that
//! works in the current view and has a footer word in `assets/keymap.toml`, fitted to the
//! width (descriptions are added while they fit; the keys themselves always show).

use super::keymap::{Context, Keymap};
use super::theme::Theme;
use ratatui::text::{Line, Span};

/// The keys that work in a view, with a word each, in the order they are shown.
pub fn hints(keymap: &Keymap, context: Context) -> Vec<(String, String)> {
    keymap.footer(context)
}

/// The hints in `width` columns: every key, and as many descriptions (in order) as fit.
pub fn fit(pairs: &[(String, String)], width: usize) -> Vec<(String, String)> {
    let keys_only: usize = pairs.iter().map(|(k, _)| k.chars().count() + 1).sum();
    let mut room = width.saturating_sub(keys_only);
    let mut out: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, _)| (k.to_string(), String::new()))
        .collect();
    // ? and q keep their words first (a new user looks for them), then Esc, then in order.
    let rank = |k: &str| match k {
        "?" | "q" => 0,
        "Esc" => 1,
        _ => 2,
    };
    let order = (0..3).flat_map(|r| (0..pairs.len()).filter(move |i| rank(&pairs[*i].0) == r));
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
pub fn line(pairs: &[(String, String)], width: usize, t: Theme) -> Line<'static> {
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

    fn text(f: &[(String, String)]) -> String {
        f.iter()
            .map(|(k, w)| {
                if w.is_empty() {
                    format!(" {k}")
                } else {
                    format!(" {k} {w}")
                }
            })
            .collect()
    }

    #[test]
    fn every_key_shows_at_80_columns() {
        let km = Keymap::builtin();
        for c in Context::ALL.into_iter().filter(|c| *c != Context::Global) {
            let f = fit(&hints(&km, c), 80);
            assert!(text(&f).chars().count() <= 80, "{c:?}: {}", text(&f));
            assert_eq!(f.len(), hints(&km, c).len());
            // Every view's footer names help, quit and the message log.
            for k in ["?", "q", "@", "y"] {
                assert!(f.iter().any(|(x, _)| x == k), "{c:?} lacks {k}");
            }
            // Esc, ? and q keep their words at 80 columns.
            for (k, w) in [("?", "help"), ("q", "quit")] {
                assert!(f.contains(&(k.into(), w.into())), "{c:?}: {}", text(&f));
            }
        }
    }

    #[test]
    fn the_footer_comes_from_the_keymap() {
        let km = Keymap::builtin();
        let full = |c| text(&hints(&km, c));
        assert_eq!(
            full(Context::Compare),
            " ↑↓ PgUp/Dn g G rows ←→ column Space mark f marked only / filter - show/hide \
             r sort Enter use Esc back [ ] context o open file t tensors m metadata L library \
             b bench d devices y copy launch @ messages ? help q quit"
        );
        // The panes: their own ↑↓ (fields); no Esc, no paging keys; the view's own key is
        // left out of its footer.
        let main = full(Context::Main);
        assert!(
            main.starts_with(" Tab pane ↑↓ field ←→ adjust Enter type"),
            "{main}"
        );
        assert!(!main.contains("Esc") && !main.contains("PgUp"), "{main}");
        assert!(!full(Context::Library).contains("L library"));
        assert!(!full(Context::Tensors).contains("t tensors"));
        // `/` only where it does something.
        assert!(!full(Context::Library).contains(" / "));
        assert!(!full(Context::Bench).contains(" / "));
    }

    #[test]
    fn a_key_added_to_the_keymap_shows_in_the_footer_help_and_docs() {
        let text = format!(
            "{}\n[[key]]\nkeys = [\"z\"]\naction = \"reverse\"\ncontext = \"library\"\n\
             help = \"a new key\"\nfooter = \"zed\"\n",
            crate::tui::keymap::KEYMAP_TOML
        );
        let km = Keymap::parse(&text).unwrap();
        assert!(hints(&km, Context::Library).contains(&("z".into(), "zed".into())));
        assert!(km.markdown().contains("| `z` | a new key |"));
        assert!(km.bindings(Context::Library).any(|b| b.help == "a new key"));
    }
}
