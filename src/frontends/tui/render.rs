//! Drawing the app: `impl Widget for &App` places the panes or the current view, the title
//! and status lines, the help overlay and questions. Reads the app; changes nothing.

use super::app::{App, Modal, View};
use super::fields::Pane;
use super::layout::{self, MainLayout};
use super::panes::artifact::ArtifactPane;
use super::panes::bounds::BoundsPane;
use super::panes::claim::ClaimPane;
use super::panes::inputs::InputPane;
use super::views::bench::BenchScreen;
use super::views::compare::CompareScreen;
use super::views::help::HelpOverlay;
use super::views::metadata::MetadataScreen;
use super::views::tensors::TensorsScreen;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget, Wrap};

impl Widget for &App {
    fn render(self, area: Rect, buf: &mut Buffer) {
        self.render_screen(area, buf);
        strip_unsafe(area, buf);
    }
}

/// ratatui already drops graphemes holding C0/C1 controls; the bidi overrides, isolates and
/// separators that file strings (model, tier, tensor and file names) may carry are removed
/// here, cell by cell, so no drawn cell can reorder or break the terminal's line.
pub fn strip_unsafe(area: Rect, buf: &mut Buffer) {
    let area = area.intersection(buf.area);
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let cell = &mut buf[(x, y)];
            if cell.symbol().chars().any(crate::sanitize::is_unsafe) {
                let kept: String = cell
                    .symbol()
                    .chars()
                    .filter(|c| !crate::sanitize::is_unsafe(*c))
                    .collect();
                cell.set_symbol(if kept.is_empty() { " " } else { &kept });
            }
        }
    }
}

impl App {
    fn render_screen(&self, area: Rect, buf: &mut Buffer) {
        let t = self.theme();
        if layout::too_small(area) {
            Paragraph::new(vec![
                Line::from(Span::styled("llmbound", t.heading())),
                Line::from(format!(
                    "The terminal is {}×{}; the explorer needs at least {}×{}.",
                    area.width,
                    area.height,
                    layout::MIN_WIDTH,
                    layout::MIN_HEIGHT
                )),
                Line::from("Enlarge the window, or press q to quit."),
            ])
            .wrap(Wrap { trim: true })
            .render(area, buf);
            return;
        }
        match self.view() {
            View::Main => self.render_main(area, buf),
            other => {
                let [body, status] =
                    Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
                let file = self.file().loaded.as_ref();
                let name = file.map(|f| f.file_name.as_str());
                match other {
                    View::Tensors => TensorsScreen {
                        view: self.tensors(),
                        inv: self.file().inventory(),
                        file_name: name,
                        theme: t,
                    }
                    .render(body, buf),
                    View::Metadata => MetadataScreen {
                        view: self.metadata(),
                        rows: self.file().metadata_rows(),
                        expanded: self
                            .metadata
                            .expanded
                            .as_deref()
                            .and_then(|k| self.file().array(k)),
                        file_name: name,
                        theme: t,
                    }
                    .render(body, buf),
                    View::Library => super::views::library::LibraryScreen {
                        view: self.library(),
                        scenario: self.ws().scenario(),
                        open: self.file().loaded.as_ref().map(|l| l.path.as_path()),
                        theme: t,
                    }
                    .render(body, buf),
                    View::Devices => super::views::devices::DevicesScreen {
                        view: self.devices(),
                        plan: &self.ws().report().plan,
                        machine: &self.ws().scenario().machine.name,
                        theme: t,
                    }
                    .render(body, buf),
                    View::Bench => BenchScreen {
                        view: self.bench(),
                        theme: t,
                    }
                    .render(body, buf),
                    _ => CompareScreen {
                        view: self.compare(),
                        pending: self.compare_switch(),
                        subject: {
                            let c = &self.ws().scenario().cache;
                            // machines at their own contexts (Ollama's default by VRAM):
                            // the context column gives each one's
                            let context = if self.compare().own_contexts {
                                "Ollama's context per machine".to_string()
                            } else {
                                format!(
                                    "{} token{} × {} sequence{}",
                                    crate::core::units::fmt_tokens(c.context),
                                    if c.context == 1 { "" } else { "s" },
                                    c.sequences,
                                    if c.sequences == 1 { "" } else { "s" },
                                )
                            };
                            format!(
                                "{} · {context} · K {} V {}",
                                self.ws().scenario().model.name,
                                c.type_k,
                                c.type_v
                            )
                        },
                        theme: t,
                    }
                    .render(body, buf),
                }
                self.render_status(status, buf);
            }
        }
        if let Some(i) = self.input() {
            super::prompt::render_list(i, area, t, buf);
        }
        if let Modal::Log(scroll) = self.modal() {
            super::views::messages::MessagesOverlay {
                log: &self.log(),
                scroll: *scroll,
                theme: t,
            }
            .render(area, buf);
        }
        if let Modal::Help(scroll) = self.modal() {
            HelpOverlay {
                keymap: self.keymap(),
                context: self.key_context(),
                scroll: *scroll,
                scroll_end: Some(self.help_scroll_end()),
                theme: t,
            }
            .render(area, buf);
        }
        let question = (self.confirm())
            .map(|c| c.question.clone())
            .or_else(|| self.pending_question());
        if let Some(q) = question {
            let w = (q.chars().count() as u16 + 4).min(area.width);
            let r = Rect {
                x: area.x + (area.width - w) / 2,
                y: area.y + area.height / 2 - 2,
                width: w,
                height: 3,
            };
            Clear.render(r, buf);
            Paragraph::new(Span::styled(q, t.warn()))
                .block(
                    Block::new()
                        .borders(Borders::ALL)
                        .border_type(BorderType::Thick)
                        .border_style(t.bad()),
                )
                .render(r, buf);
        }
    }
}

impl App {
    fn render_main(&self, area: Rect, buf: &mut Buffer) {
        let t = self.theme();
        let Some(l) = layout::main_layout(area, self.focus(), self.layout_hints()) else {
            return;
        };
        self.render_title(&l, buf);
        if let Some(tabs) = l.tabs {
            // The tabs are drawn where clicks find them (`tabs::rects`).
            for (p, r) in super::tabs::rects(tabs) {
                let style = if layout::compact_left(self.focus()) == p {
                    t.title(true)
                } else {
                    t.label()
                };
                buf.set_stringn(r.x, r.y, super::tabs::label(p), r.width as usize, style);
            }
        }
        for (pane, rect) in &l.panes {
            let focused = self.focus() == *pane;
            match pane {
                Pane::Artifact => ArtifactPane {
                    weights: &self.ws().scenario().weights,
                    figures: &self.ws().artifact_figures(),
                    pinned: self.ws().pinned(),
                    file: self.file(),
                    llama_cpp_beside_mlx: self.ws().runtime() == crate::core::mlx::Runtime::MlxLm
                        && self
                            .ws()
                            .runtimes()
                            .contains(&crate::core::mlx::Runtime::LlamaCpp),
                    focused,
                    theme: t,
                }
                .render(*rect, buf),
                Pane::Model if self.ws().mlx_unshaped().is_some() => {
                    self.render_unshaped_model(*rect, focused, buf)
                }
                Pane::Model | Pane::Cache | Pane::Machine => {
                    let rows = self.rows(*pane);
                    let subtitle = match pane {
                        Pane::Model => self.ws().scenario().model.architecture.clone(),
                        _ => String::new(),
                    };
                    InputPane {
                        pane: *pane,
                        subtitle,
                        rows: &rows,
                        selected: self.selected_row(*pane),
                        focused,
                        theme: t,
                    }
                    .render(*rect, buf);
                }
                Pane::Bounds if self.ws.runtime() == crate::core::mlx::Runtime::MlxLm => {
                    self.render_mlx_bounds(*rect, focused, buf)
                }
                Pane::Bounds => BoundsPane {
                    report: self.ws().report(),
                    plots: self.plots(),
                    focused,
                    compact: l.compact,
                    scroll: self.bounds_scroll(),
                    scroll_end: Some(self.bounds_scroll_end()),
                    runtime: (self.ws().runtimes().len() > 1).then(|| self.ws().runtime().name()),
                    other_model: self
                        .file()
                        .refused
                        .as_ref()
                        .map(|_| self.ws().scenario().model.name.as_str()),
                    theme: t,
                }
                .render(*rect, buf),
                Pane::Claim => ClaimPane {
                    claim: self.claim(),
                    report: self.ws().report(),
                    focused,
                    scroll: self.claim_scroll(),
                    scroll_end: Some(self.claim_scroll_end()),
                    theme: t,
                }
                .render(*rect, buf),
            }
        }
        self.render_status(l.status, buf);
    }

    /// The Bounds pane when the figures are MLX-LM's: the plan as `mlx_report` words it
    /// (with llama.cpp's figures beside it when both runtimes apply), scrolled as the pane is.
    fn render_mlx_bounds(&self, area: Rect, focused: bool, buf: &mut Buffer) {
        let t = self.theme();
        let lines = match (self.ws.mlx(), self.ws.mlx_plan(), self.ws.mlx_machine()) {
            (Some(a), Some(p), Some(m)) => {
                let llama = (self.ws.runtimes())
                    .contains(&crate::core::mlx::Runtime::LlamaCpp)
                    .then(|| crate::core::mlx::llama_cpp_figures(self.ws.report()));
                let settings = crate::mlx_report::MlxSettings::with(&m, &self.ws.scenario().mlx_lm);
                let width = super::panes::block("", focused, t).inner(area).width as usize;
                crate::mlx_report::explorer_lines_with(a, p, &m, &settings, llama.as_ref(), width)
            }
            _ => vec!["MLX-LM: no plan (the machine has no memory tier)".to_string()],
        };
        // Scrolled in whole blocks as llama.cpp's pane is: each line with its wrapped rows, the
        // side-by-side table (from its blank line to the launch line) as one; the title says
        // what is above and below.
        let width = super::panes::block("", focused, t).inner(area).width;
        let mut blocks: Vec<super::panes::scroll::Block> = Vec::new();
        let mut table: Option<Vec<Line<'static>>> = None;
        for l in lines {
            if l.is_empty() {
                table = Some(vec![Line::from(l)]);
            } else if let Some(rows) = table.as_mut().filter(|_| !l.starts_with("launch ")) {
                rows.push(Line::from(l));
            } else {
                if let Some(rows) = table.take() {
                    blocks.push(super::panes::scroll::Block::group(rows, width));
                }
                blocks.push(super::panes::scroll::Block::wrapped(Line::from(l), width));
            }
        }
        if let Some(rows) = table {
            blocks.push(super::panes::scroll::Block::group(rows, width));
        }
        let inner = super::panes::block("", focused, t).inner(area);
        let page = super::panes::scroll::page(
            &blocks,
            inner.height as usize,
            self.bounds_scroll() as usize,
        );
        self.bounds_scroll_end().set(page.last as u16);
        let mark = page.mark();
        let title = if mark.is_empty() {
            "Bounds · MLX-LM".to_string()
        } else {
            format!("Bounds · MLX-LM · {mark}")
        };
        Paragraph::new(page.lines)
            .block(super::panes::block(title, focused, t))
            .render(area, buf);
    }

    /// The Model pane of a safetensors model whose shape core does not hold: its config.json
    /// figures and that its shape is MLX-LM's only (never the previous model's rows).
    fn render_unshaped_model(&self, area: Rect, focused: bool, buf: &mut Buffer) {
        let t = self.theme();
        let Some(a) = self.ws().mlx_unshaped() else {
            return;
        };
        let lines = crate::mlx_report::unshaped_model_lines(a);
        Paragraph::new(lines.into_iter().map(Line::from).collect::<Vec<_>>())
            .wrap(ratatui::widgets::Wrap { trim: false })
            .block(super::panes::block("Model · MLX-LM", focused, t))
            .render(area, buf);
    }

    fn render_title(&self, l: &MainLayout, buf: &mut Buffer) {
        let t = self.theme();
        let width = l.title.width as usize;
        let (left, tagline, right) = title_parts(&self.title(), width);
        let [lt, r] = Layout::horizontal([
            Constraint::Fill(1),
            Constraint::Length(right.chars().count() as u16),
        ])
        .areas(l.title);
        Paragraph::new(Line::from(vec![
            Span::styled(" llmbound ", t.title(true)),
            Span::styled(format!(" {left}"), t.heading()),
            Span::styled(tagline, t.label()),
        ]))
        .render(lt, buf);
        Paragraph::new(Span::styled(right, t.label())).render(r, buf);
    }

    fn render_status(&self, area: Rect, buf: &mut Buffer) {
        let t = self.theme();
        if let Some(i) = self.input() {
            prompt_line(i, t, area, buf);
            return;
        }
        if let Some(m) = self.message() {
            let style = if m.error { t.bad() } else { t.ok() };
            // A message wider than the line ends in "…"; `@` shows it in full.
            let text = super::format::fit(&m.text, area.width as usize);
            Paragraph::new(Span::styled(text, style)).render(area, buf);
            return;
        }
        Paragraph::new(super::footer::line(
            &super::footer::hints(self.keymap(), self.key_context()),
            area.width as usize,
            t,
        ))
        .render(area, buf);
    }
}

/// The line being typed: prompt, text (reversed while the opening value is selected) with the
/// cursor kept in view, and the keys that work.
fn prompt_line(i: &super::app::Input, t: super::theme::Theme, area: Rect, buf: &mut Buffer) {
    use super::app::InputTarget;
    let hint = match i.target {
        _ if !i.choices.is_empty() => "  ↑↓ choose · Enter takes · Esc cancels",
        // The open prompt names what it opens: its hint is shorter, so both fit at 120.
        InputTarget::OpenPath => "  Tab completes · ↑↓ history · Esc cancels",
        InputTarget::BenchPath => "  Tab completes · ↑↓ history · Enter opens · Esc cancels",
        _ if i.selected => "  typing replaces · ←→ edit · Enter accepts · Esc cancels",
        _ => "  ↑↓ history · Enter accepts · Esc cancels",
    };
    let prompt_w = i.prompt.chars().count();
    let full = area.width as usize;
    // The hint goes first when room is short: the text keeps 12 columns, or its whole length
    // while it is typed (a URL pasted into the open prompt, whose label is long, had 15).
    let hint_w = hint.chars().count();
    let text_w = i.text.chars().count().max(11) + 1;
    let hint = if full > prompt_w + text_w + hint_w {
        hint
    } else {
        ""
    };
    let room = full
        .saturating_sub(prompt_w + hint.chars().count() + 1)
        .max(4);
    let (before, after) = i.visible(room);
    let text_style = if i.selected {
        t.input().add_modifier(ratatui::style::Modifier::REVERSED)
    } else {
        t.input()
    };
    Paragraph::new(Line::from(vec![
        Span::styled(i.prompt.clone(), t.key()),
        Span::styled(before, text_style),
        Span::styled("▏", t.input()),
        Span::styled(after, text_style),
        Span::styled(hint, t.label()),
    ]))
    .render(area, buf);
}

/// The title line's parts for a width: the scenario (cut with "…" only when nothing else is
/// left to drop), the tagline and the right-hand hints, dropped in that order when short.
/// " llmbound " takes 10 columns before them.
pub fn title_parts(scenario: &str, width: usize) -> (String, &'static str, &'static str) {
    const TAG: &str = " · bounds, not benchmarks";
    const RIGHT: &str = " ? help  q quit ";
    let name_w = scenario.chars().count() + 1;
    let room = width.saturating_sub(10);
    if name_w + TAG.len() + RIGHT.len() <= room {
        return (scenario.to_string(), TAG, RIGHT);
    }
    if name_w + RIGHT.len() <= room {
        return (scenario.to_string(), "", RIGHT);
    }
    if name_w <= room {
        return (scenario.to_string(), "", "");
    }
    // The name and its space overflow `room`: cut it to one column less.
    let cut = if room < 2 {
        "…".to_string()
    } else {
        crate::tui::format::fit(scenario, room - 1)
    };
    (cut, "", "")
}
