//! The library view: every GGUF model on the machine (`crate::library`), evaluated on the
//! current scenario's machine, context and cache types; rows follow every edit. Scanning runs
//! on a worker thread (headers only); Enter opens the selected model in the panes; `a` adds a
//! folder the user names for this session (nothing is saved).

use crate::core::scenario::Scenario;
use crate::core::units;
use crate::library::{self, Row as LibRow, Scanned, SortKey, Store};
use crate::profile::Catalog;
use crate::tui::action::Action;
use crate::tui::layout;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, Widget};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, TryRecvError};

/// A finished scan from the worker.
#[derive(Debug)]
struct ScanResult {
    /// Models whose headers were read.
    scanned: Vec<Scanned>,
    /// Manifests or files that could not be used.
    problems: Vec<String>,
    /// Folders searched that exist.
    searched: Vec<String>,
    /// Added folders only: merge into the list instead of replacing it.
    added: Vec<PathBuf>,
}

/// The view's state.
#[derive(Debug, Default)]
pub struct LibraryView {
    /// Models whose headers were read.
    pub scanned: Vec<Scanned>,
    /// Rows on the current scenario, in display order.
    pub rows: Vec<LibRow>,
    /// Manifests or files that could not be used.
    pub problems: Vec<String>,
    /// Folders searched.
    pub searched: Vec<String>,
    /// Selected row.
    pub selected: usize,
    /// Row order.
    pub sort: SortKey,
    /// Where to look instead of the standard stores (tests, `--dir`).
    pub roots: Option<Vec<(Store, PathBuf)>>,
    /// A scan has finished at least once.
    pub scanned_once: bool,
    /// Folders the user added in this session (`a`), searched besides the roots.
    pub added: Vec<PathBuf>,
    /// Added folders waiting for the running scan to end.
    pending: Vec<PathBuf>,
    /// What the last added folder brought (shown under the table).
    pub note: Option<String>,
    /// The profiles the last scan used (the scan of a folder that waits uses them too).
    catalog: Option<Catalog>,
    rx: Option<Receiver<ScanResult>>,
}

/// `~` and `~/…` as the home folder.
fn expand_home(text: &str) -> PathBuf {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    match (text.strip_prefix('~'), home) {
        (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(h).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(text),
    }
}

impl LibraryView {
    /// True while the worker scans.
    pub fn scanning(&self) -> bool {
        self.rx.is_some()
    }

    /// Start scanning on a worker thread (no-op while one runs): the standard stores (or
    /// `roots`) and the added folders.
    pub fn start_scan(&mut self, cat: &Catalog) {
        if self.rx.is_some() {
            return;
        }
        let mut roots = self
            .roots
            .clone()
            .unwrap_or_else(|| library::roots(&[], true));
        roots.extend(self.added.iter().map(|d| (Store::Folder, d.clone())));
        self.pending.clear();
        self.spawn(cat, roots, Vec::new(), Vec::new());
    }

    /// Scan `roots` on a worker. With `added` non-empty the result is merged into the list,
    /// leaving out the files of `known` (the models listed already).
    fn spawn(
        &mut self,
        cat: &Catalog,
        roots: Vec<(Store, PathBuf)>,
        added: Vec<PathBuf>,
        known: Vec<PathBuf>,
    ) {
        self.catalog = Some(cat.clone());
        let cat = cat.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("llmbound-library".into())
            .spawn(move || {
                let searched = roots
                    .iter()
                    .filter(|(_, p)| p.is_dir())
                    .map(|(_, p)| p.display().to_string())
                    .collect();
                let (mut found, problems) = library::discover(&roots);
                if !known.is_empty() {
                    let canon =
                        |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                    let known: std::collections::HashSet<PathBuf> =
                        known.iter().map(canon).collect();
                    found.retain(|f| !known.contains(&canon(&f.path)));
                }
                let scanned = library::scan(&cat, found);
                let _ = tx.send(ScanResult {
                    scanned,
                    problems,
                    searched,
                    added,
                });
            });
        if spawned.is_ok() {
            self.rx = Some(rx);
        }
    }

    /// Add a folder the user named (`~` is the home folder) for this session and scan it on a
    /// worker (after the running scan, if one runs). Nothing is saved. Returns the line to
    /// show, or why the folder cannot be added.
    pub fn add_dir(&mut self, text: &str, cat: &Catalog) -> Result<String, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("no folder named".into());
        }
        let dir = expand_home(text);
        if !dir.is_dir() {
            return Err(format!(
                "\"{}\" is not a folder",
                crate::sanitize::text(&dir.display().to_string()).into_owned()
            ));
        }
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        let shown = crate::sanitize::text(&dir.display().to_string()).into_owned();
        if self.added.contains(&dir) {
            return Err(format!("{shown} is in the library already"));
        }
        self.added.push(dir.clone());
        self.note = Some(format!("scanning {shown} …"));
        if !self.scanned_once && self.rx.is_none() {
            self.start_scan(cat);
        } else {
            self.pending.push(dir);
            self.catalog = Some(cat.clone());
            self.scan_pending();
        }
        // The view's own note follows the scan ("scanning …", then "added …: N more models");
        // this message stays true after the scan ends.
        Ok(format!(
            "{shown} is in the library for this session (nothing is saved)"
        ))
    }

    /// Scan the added folders that wait, unless a scan runs.
    fn scan_pending(&mut self) {
        if self.rx.is_some() || self.pending.is_empty() {
            return;
        }
        let Some(cat) = self.catalog.clone() else {
            return;
        };
        let dirs = std::mem::take(&mut self.pending);
        let roots = dirs.iter().map(|d| (Store::Folder, d.clone())).collect();
        let known = self.scanned.iter().map(|s| s.found.path.clone()).collect();
        self.spawn(&cat, roots, dirs, known);
    }

    /// Take a finished scan (and start scanning the added folders that wait for it); true when
    /// one arrived.
    pub fn poll(&mut self) -> bool {
        let Some(rx) = &self.rx else { return false };
        match rx.try_recv() {
            Ok(r) => {
                if r.added.is_empty() {
                    self.scanned = r.scanned;
                    self.problems = r.problems;
                    self.searched = r.searched;
                    self.note = None;
                } else {
                    let n = r.scanned.len();
                    let dirs: Vec<String> = r
                        .added
                        .iter()
                        .map(|d| crate::sanitize::text(&d.display().to_string()).into_owned())
                        .collect();
                    self.note = Some(format!(
                        "added {}: {n} more model{}",
                        dirs.join(", "),
                        if n == 1 { "" } else { "s" }
                    ));
                    self.scanned.extend(r.scanned);
                    self.problems.extend(r.problems);
                    for d in r.searched {
                        if !self.searched.contains(&d) {
                            self.searched.push(d);
                        }
                    }
                }
                self.scanned_once = true;
                self.rx = None;
                self.scan_pending();
                true
            }
            Err(TryRecvError::Empty) => false,
            Err(TryRecvError::Disconnected) => {
                self.rx = None;
                self.scanned_once = true;
                self.problems
                    .push("the library scan stopped unexpectedly".into());
                true
            }
        }
    }

    /// Evaluate every model on `s` (keeps the selected model selected).
    pub fn refresh(&mut self, s: &Scenario) {
        let keep = self.rows.get(self.selected).map(|r| r.index);
        self.rows = library::evaluate(s, &self.scanned);
        library::sort(&mut self.rows, &self.scanned, self.sort);
        self.selected = keep
            .and_then(|k| self.rows.iter().position(|r| r.index == k))
            .unwrap_or(0)
            .min(self.rows.len().saturating_sub(1));
    }

    /// What opens the selected model: its file, or `ollama:NAME` for a model of the Ollama
    /// store that name resolves in (set by the scan, see [`library::Found::spec`]).
    pub fn selected_path(&self) -> Option<PathBuf> {
        let r = self.rows.get(self.selected)?;
        Some(self.scanned[r.index].found.spec.clone())
    }

    /// The model open in the panes is this row's (its file, or its `ollama:` name).
    fn open_matches(&self, sc: &Scanned, open: Option<&std::path::Path>) -> bool {
        open.is_some_and(|o| o == sc.found.spec || o == sc.found.path)
    }

    /// Next sort order.
    fn next_sort(&mut self) {
        self.sort = match self.sort {
            SortKey::Fit => SortKey::Speed,
            SortKey::Speed => SortKey::Context,
            SortKey::Context => SortKey::Size,
            SortKey::Size => SortKey::Name,
            SortKey::Name => SortKey::Fit,
        };
    }

    /// Why the selected row cannot be evaluated, with its file name (None: it can).
    pub fn selected_error(&self) -> Option<String> {
        let r = self.rows.get(self.selected)?;
        let e = r.outcome.as_ref().err()?;
        let path = &self.scanned[r.index].found.path;
        let why = reason(e, path);
        Some(crate::sanitize::text(&format!("{}: {why}", path.display())).into_owned())
    }

    /// Move or re-sort; returns true when the rows must be re-sorted.
    pub fn update(&mut self, a: Action, page: usize) -> bool {
        // What the last added folder brought is news until the next key.
        if self.rx.is_none() && self.pending.is_empty() {
            self.note = None;
        }
        let n = self.rows.len();
        let last = n.saturating_sub(1);
        match a {
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(last),
            Action::PageUp => self.selected = self.selected.saturating_sub(page.max(1)),
            Action::PageDown => self.selected = (self.selected + page.max(1)).min(last),
            Action::Home => self.selected = 0,
            Action::End => self.selected = last,
            Action::Reverse => {
                self.next_sort();
                return true;
            }
            _ => {}
        }
        false
    }
}

fn sort_name(k: SortKey) -> &'static str {
    match k {
        SortKey::Fit => "fit",
        SortKey::Speed => "ceiling",
        SortKey::Context => "max context",
        SortKey::Size => "size",
        SortKey::Name => "name",
    }
}

/// The library view, drawn.
pub struct LibraryScreen<'a> {
    /// State.
    pub view: &'a LibraryView,
    /// The scenario the rows are evaluated on.
    pub scenario: &'a Scenario,
    /// The model open in the panes (its row is marked).
    pub open: Option<&'a std::path::Path>,
    /// Styles.
    pub theme: Theme,
}

/// The mark of the model open in the panes (the line under the table names it).
pub const OPEN_MARK: &str = "◆";

/// An error as the row shows it: without the file's path (the name column shows the file).
fn reason(e: &str, path: &std::path::Path) -> String {
    let p = path.display().to_string();
    let e = e.strip_prefix(p.as_str()).unwrap_or(e);
    e.trim_start_matches([':', ' ']).to_string()
}

impl Widget for LibraryScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let v = self.view;
        let s = self.scenario;
        let [head, body, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Fill(1),
            Constraint::Length(1),
        ])
        .areas(area);
        // An empty list says so, not "row 0 of 0".
        let position = if v.rows.is_empty() {
            "no models".to_string()
        } else {
            format!("row {} of {}", v.selected + 1, v.rows.len())
        };
        let title = format!(
            "{position} · {} · ctx {}{} · K {} V {} · by {}",
            s.machine.id,
            units::fmt_tokens(s.cache.context),
            if s.cache.sequences == 1 {
                String::new()
            } else {
                format!(" × {}", s.cache.sequences)
            },
            s.cache.type_k,
            s.cache.type_v,
            sort_name(v.sort)
        );
        let room = (head.width as usize).saturating_sub("Library · ".len());
        Paragraph::new(Line::from(vec![
            Span::styled("Library · ", t.heading()),
            Span::styled(crate::tui::format::fit(&title, room), t.text()),
        ]))
        .render(head, buf);
        let block = Block::new()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_style(t.label());
        let inner = block.inner(body);
        block.render(body, buf);
        if v.rows.is_empty() {
            let msg = if v.scanning() || !v.scanned_once {
                "scanning the Hugging Face cache, Ollama, LM Studio and llama.cpp folders (headers only) …".to_string()
            } else if v.searched.is_empty() {
                "no model folders on this machine (HF cache, Ollama, LM Studio, llama.cpp): a adds a folder, o opens a file or URL".to_string()
            } else {
                format!("no GGUF models in {}", v.searched.join(", "))
            };
            Paragraph::new(Span::styled(msg, t.label()))
                .wrap(ratatui::widgets::Wrap { trim: true })
                .render(inner, buf);
        } else {
            // Widths: the numbers fixed, the name takes what is left.
            let wide = inner.width >= 110;
            let mut widths = vec![Constraint::Fill(1)];
            let mut titles = vec!["model"];
            if wide {
                widths.extend([Constraint::Length(9), Constraint::Length(10)]);
                titles.extend(["store", "arch"]);
            }
            widths.extend([
                // "999.999 MiB": bytes in the binary unit that shows them.
                Constraint::Length(11),
                Constraint::Length(if wide { 19 } else { 9 }),
                Constraint::Length(4),
                Constraint::Length(12),
                // "99,999.99": the widest rate below 100,000 (whole numbers from there).
                Constraint::Length(9),
            ]);
            titles.extend(["size", "quant mix", "fits", "max ctx", "ceiling"]);
            // The name column's width: what the fixed columns and the gaps leave. A long name
            // keeps its end (the file name) and loses its start.
            let fixed: u16 = widths
                .iter()
                .map(|c| match c {
                    Constraint::Length(n) => *n,
                    _ => 0,
                })
                .sum();
            let name_width =
                (inner.width as usize).saturating_sub(fixed as usize + widths.len() - 1);
            let header = Row::new(
                titles
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let l = Line::from(Span::styled(*x, t.label()));
                        if i >= titles.len() - 5 && *x != "quant mix" && *x != "fits" {
                            l.right_aligned()
                        } else {
                            l
                        }
                    })
                    .collect::<Vec<_>>(),
            );
            let h = inner.height.saturating_sub(1) as usize;
            let off = layout::scroll_offset(v.selected, h, v.rows.len());
            let rows: Vec<Row> = v
                .rows
                .iter()
                .enumerate()
                .skip(off)
                .take(h)
                .map(|(i, r)| {
                    let sc = &v.scanned[r.index];
                    let c = crate::outputs::models::cells(sc, r);
                    let f = r.outcome.as_ref().ok();
                    let is_open = v.open_matches(sc, self.open);
                    let name = crate::tui::format::keep_tail(&c[0], name_width.saturating_sub(2));
                    let mut cells = vec![Line::from(vec![
                        Span::raw(if is_open { OPEN_MARK } else { " " }),
                        Span::raw(" "),
                        Span::raw(name),
                    ])];
                    // An error row has only its name here: the reason is drawn across the
                    // other columns after the table.
                    if r.outcome.is_ok() {
                        if wide {
                            cells.push(Line::from(c[1].clone()));
                            cells.push(Line::from(c[2].clone()));
                        }
                        let size = sc
                            .file_bytes()
                            .map(units::fmt_binary)
                            .unwrap_or_else(|| "-".into());
                        cells.push(Line::from(size).right_aligned());
                        // The two largest types (narrow: the largest only).
                        let keep = if wide { 2 } else { 1 };
                        let mix = c[4].split(", ").take(keep).collect::<Vec<_>>().join(", ");
                        cells.push(Line::from(mix));
                        let fits = f.is_some_and(|f| f.fits);
                        cells.push(Line::from(Span::styled(
                            if fits { "yes" } else { "NO" },
                            if fits { t.ok() } else { t.bad() },
                        )));
                        let ctx = if c[6].ends_with('*') {
                            c[6].clone()
                        } else {
                            format!("{} ", c[6])
                        };
                        cells.push(Line::from(ctx).right_aligned());
                        cells.push(
                            Line::from(Span::styled(c[7].clone(), t.figure())).right_aligned(),
                        );
                    }
                    let style = if i == v.selected {
                        t.selected()
                    } else {
                        t.text()
                    };
                    Row::new(cells).style(style)
                })
                .collect();
            Table::new(rows, widths)
                .header(header)
                .column_spacing(1)
                .render(inner, buf);
            // An error row: its reason over the columns after the name, cut with "…" (Enter
            // shows it whole).
            // They start after the longest name among the error rows shown (a wide terminal
            // gives the reason the room the name column does not use).
            let names = (v.rows.iter().skip(off).take(h))
                .filter(|r| r.outcome.is_err())
                .map(|r| {
                    let c = crate::outputs::models::cells(&v.scanned[r.index], r);
                    c[0].chars().count() + 2
                })
                .max()
                .unwrap_or(0)
                .min(name_width);
            let x = inner.x + names as u16 + 1;
            let w = inner.right().saturating_sub(x) as usize;
            for (n, r) in v.rows.iter().enumerate().skip(off).take(h) {
                if let Err(e) = &r.outcome {
                    let why = reason(e, &v.scanned[r.index].found.path);
                    let text = crate::sanitize::text(&format!("error: {why}")).into_owned();
                    let y = inner.y + 1 + (n - off) as u16;
                    let style = if n == v.selected {
                        t.selected().patch(t.bad())
                    } else {
                        t.bad()
                    };
                    let text = format!("{:<w$}", crate::tui::format::fit(&text, w));
                    buf.set_stringn(x, y, text, w, style);
                }
            }
        }
        let problems = if v.problems.is_empty() {
            String::new()
        } else {
            format!(
                " · {} skipped: {}",
                v.problems.len(),
                crate::sanitize::text(&v.problems[0]).into_owned()
            )
        };
        let note = v
            .note
            .as_ref()
            .map(|n| format!("{n} · "))
            .unwrap_or_default();
        // The selected row's refusal or warning, as `report` and `inspect` word it (without
        // the path: the row names the file); else the legend. The keys are in the footer
        // below, with every other view's.
        let selected = v.rows.get(v.selected);
        let line = match selected {
            Some(r) if r.outcome.is_err() || !r.warnings.is_empty() => {
                let path = format!("{}: ", v.scanned[r.index].found.path.display());
                let (mark, what, style) = match &r.outcome {
                    Err(e) => (
                        "✗ ",
                        e.strip_prefix(&path).unwrap_or(e).to_string(),
                        t.bad(),
                    ),
                    Ok(_) => {
                        let more = r.warnings.len() - 1;
                        let more = if more > 0 {
                            format!(" (+{more} more)")
                        } else {
                            String::new()
                        };
                        (
                            "(!) warning: ",
                            format!("{}{more}", r.warnings[0]),
                            t.warn(),
                        )
                    }
                };
                Line::from(Span::styled(
                    crate::tui::format::fit(
                        &format!("{mark}{}", crate::sanitize::text(&what)),
                        foot.width as usize,
                    ),
                    style,
                ))
            }
            _ => {
                let open = if v
                    .rows
                    .iter()
                    .any(|r| v.open_matches(&v.scanned[r.index], self.open))
                {
                    format!("{OPEN_MARK} open · ")
                } else {
                    String::new()
                };
                // Narrow: the store and arch columns are left out, and the line says so.
                let text = if !v.rows.is_empty() && inner.width < 110 {
                    format!(
                        "{note}{open}store, arch: ≥110 cols · upper bounds tok/s at ctx · own -ngl · * > native{problems}"
                    )
                } else {
                    format!(
                        "{note}{open}ceilings tok/s at ctx (upper bounds) · own -ngl · * above native{problems}"
                    )
                };
                Line::from(Span::styled(
                    crate::tui::format::fit(&text, foot.width as usize),
                    t.label(),
                ))
            }
        };
        Paragraph::new(line).render(foot, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::format::keep_tail;

    #[test]
    fn long_names_keep_their_end() {
        assert_eq!(keep_tail("abc", 5), "abc");
        assert_eq!(keep_tail("lmstudio/gemma-Q4_K_M.gguf", 10), "…_K_M.gguf");
        assert_eq!(
            keep_tail("lmstudio/gemma-Q4_K_M.gguf", 10).chars().count(),
            10
        );
    }

    #[test]
    fn home_is_expanded() {
        assert_eq!(expand_home("/a/b"), PathBuf::from("/a/b"));
        assert_eq!(expand_home("~user/x"), PathBuf::from("~user/x"));
        if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            assert_eq!(expand_home("~"), PathBuf::from(&h));
            assert_eq!(expand_home("~/m/n"), PathBuf::from(&h).join("m/n"));
        }
    }
}
