//! The library view: every GGUF model on the machine (`crate::library`), evaluated on the
//! current scenario's machine, context and cache types; rows follow every edit. Scanning runs
//! on a worker thread (headers only); Enter opens the selected model in the panes.

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

/// A finished scan: the models and the manifests or files that could not be used.
type ScanResult = (Vec<Scanned>, Vec<String>, Vec<String>);

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
    rx: Option<Receiver<ScanResult>>,
}

impl LibraryView {
    /// True while the worker scans.
    pub fn scanning(&self) -> bool {
        self.rx.is_some()
    }

    /// Start scanning on a worker thread (no-op while one runs).
    pub fn start_scan(&mut self, cat: &Catalog) {
        if self.rx.is_some() {
            return;
        }
        let roots = self
            .roots
            .clone()
            .unwrap_or_else(|| library::roots(&[], true));
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
                let (found, problems) = library::discover(&roots);
                let scanned = library::scan(&cat, found);
                let _ = tx.send((scanned, problems, searched));
            });
        if spawned.is_ok() {
            self.rx = Some(rx);
        }
    }

    /// Take a finished scan; true when one arrived.
    pub fn poll(&mut self) -> bool {
        let Some(rx) = &self.rx else { return false };
        match rx.try_recv() {
            Ok((scanned, problems, searched)) => {
                self.scanned = scanned;
                self.problems = problems;
                self.searched = searched;
                self.scanned_once = true;
                self.rx = None;
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
    /// store that name resolves in (so the panes show its Ollama name, not the blob's digest).
    pub fn selected_path(&self) -> Option<PathBuf> {
        let r = self.rows.get(self.selected)?;
        let f = &self.scanned[r.index].found;
        let by_name = f.store == Store::Ollama
            && library::ollama::resolve(&f.name).is_ok_and(|blob| blob == f.path);
        Some(if by_name {
            PathBuf::from(format!("ollama:{}", f.name))
        } else {
            f.path.clone()
        })
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

    /// Move or re-sort; returns true when the rows must be re-sorted.
    pub fn update(&mut self, a: Action, page: usize) -> bool {
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
    /// Styles.
    pub theme: Theme,
}

impl Widget for LibraryScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let v = self.view;
        let s = self.scenario;
        let [head, body, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Fill(1),
            Constraint::Length(2),
        ])
        .areas(area);
        Paragraph::new(Line::from(vec![
            Span::styled("Library · ", t.heading()),
            Span::styled(
                format!(
                    "{} model{} · {} · ctx {} × {} · K {} V {} · by {}",
                    v.rows.len(),
                    if v.rows.len() == 1 { "" } else { "s" },
                    s.machine.id,
                    units::fmt_tokens(s.cache.context),
                    s.cache.sequences,
                    s.cache.type_k,
                    s.cache.type_v,
                    sort_name(v.sort)
                ),
                t.text(),
            ),
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
                "no model folders on this machine (HF cache, Ollama, LM Studio, llama.cpp): o opens a file or URL".to_string()
            } else {
                format!("no GGUF models in {}", v.searched.join(", "))
            };
            Paragraph::new(Span::styled(msg, t.label())).render(inner, buf);
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
                Constraint::Length(9),
                Constraint::Length(if wide { 19 } else { 9 }),
                Constraint::Length(4),
                Constraint::Length(12),
                Constraint::Length(8),
            ]);
            titles.extend(["file GB", "quant mix", "fits", "max ctx", "ceiling"]);
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
                    let c = library::output::cells(sc, r);
                    let f = r.outcome.as_ref().ok();
                    let mut cells = vec![Line::from(c[0].clone())];
                    if wide {
                        cells.push(Line::from(c[1].clone()));
                        cells.push(Line::from(c[2].clone()));
                    }
                    let gb = sc
                        .file_bytes()
                        .map(|b| format!("{:.3}", units::Bytes(b).gb()))
                        .unwrap_or_else(|| "-".into());
                    cells.push(Line::from(gb).right_aligned());
                    match &r.outcome {
                        Ok(_) => {
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
                        Err(e) => {
                            cells.push(Line::from(Span::styled(library::output::clean(e), t.bad())))
                        }
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
        }
        let problems = if v.problems.is_empty() {
            String::new()
        } else {
            format!(
                " · {} skipped: {}",
                v.problems.len(),
                library::output::clean(&v.problems[0])
            )
        };
        Paragraph::new(vec![
            Line::from(Span::styled(
                format!(
                    "ceilings tok/s at ctx (upper bounds) · GB = 10^9 B · * above native{problems}"
                ),
                t.label(),
            )),
            Line::from(Span::styled(
                "↑↓ model  Enter open in the panes  r next sort  [ ] context  Esc back",
                t.label(),
            )),
        ])
        .render(foot, buf);
    }
}
