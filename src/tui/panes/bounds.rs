//! The Bounds pane: capacity bars and verdict, the largest context, decode ceilings (file and
//! inventory mode, short and full context, non-overlapped and overlapped), prefill and the
//! roofline, and two charts. Reads the report and the chart coordinates; computes nothing.

use crate::core::Report;
use crate::core::decode::Ceiling;
use crate::core::units::{self, Provenance};
use crate::tui::plot::Plots;
use crate::tui::theme::Theme;
use crate::tui::widgets::MemoryBar;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph, Widget, Wrap};

/// The Bounds pane.
pub struct BoundsPane<'a> {
    /// The report.
    pub report: &'a Report,
    /// Chart coordinates and bars.
    pub plots: &'a Plots,
    /// Focused.
    pub focused: bool,
    /// Compact layout: no charts.
    pub compact: bool,
    /// Rows the lower text is scrolled by.
    pub scroll: u16,
    /// Styles.
    pub theme: Theme,
}

/// What a ceiling is called: a spec bandwidth makes it an optimistic vendor ceiling.
pub fn ceiling_kind(c: &Ceiling) -> String {
    match c.bandwidth_provenance {
        Provenance::Spec => "optimistic vendor ceiling".into(),
        p => format!("ceiling ({} bandwidth)", p.label()),
    }
}

impl BoundsPane<'_> {
    fn capacity_lines(&self, width: u16) -> Vec<Line<'static>> {
        let t = self.theme;
        let r = self.report;
        let c = &r.capacity;
        let mut lines = Vec::new();
        let verdict_style = if c.starts_and_fits() { t.ok() } else { t.bad() };
        let mark = if c.starts_and_fits() { "✓ " } else { "✗ " };
        lines.push(Line::from(vec![
            Span::styled(mark, verdict_style),
            Span::styled(crate::report::words::verdict(c), verdict_style),
        ]));
        let _ = width;
        lines
    }

    fn detail_lines(&self, width: u16) -> Vec<Line<'static>> {
        let t = self.theme;
        let r = self.report;
        let c = &r.capacity;
        let n = r.inputs.cache.context;
        let mut lines = Vec::new();
        // Legend of the bars: W model, C allocated cache, X output + compute buffers, A, free.
        let st = crate::tui::widgets::memory_bar::styles(t);
        let sym = crate::tui::widgets::memory_bar::SYMBOLS;
        let names = if width >= 60 {
            [
                "W model", "C cache", "X output", "compute", "A other", "free",
            ]
        } else {
            ["W", "C", "X out", "compute", "A", "free"]
        };
        let gap = if width >= 60 { "  " } else { " " };
        let mut legend = Vec::new();
        for (i, name) in names.iter().enumerate() {
            if i == 3 {
                // output and compute share the X figure
                legend.push(Span::styled("+", t.label()));
            } else if i > 0 {
                legend.push(Span::raw(gap));
            }
            legend.push(Span::styled(sym[i], st[i]));
            legend.push(Span::styled(format!(" {name}"), t.label()));
        }
        lines.push(Line::from(legend));
        let free = c.memory_bytes as i128 - c.runtime_bytes.total_bytes as i128;
        let mut decide = vec![
            Span::styled("runtime ", t.label()),
            Span::styled(
                format!(
                    "{} · buffers {}{}",
                    {
                        let f = r
                            .tiers
                            .iter()
                            .filter(|x| x.used)
                            .map(|x| x.memory.free_bytes)
                            .min()
                            .unwrap_or(free);
                        if f >= 0 {
                            format!("{} free", units::fmt_gib(f as u64))
                        } else {
                            format!("short {}", units::fmt_gib(f.unsigned_abs() as u64))
                        }
                    },
                    {
                        let b = c.buffers.output_bytes + c.buffers.compute_bytes;
                        if b >= units::GIB {
                            units::fmt_gib(b)
                        } else {
                            format!("{} MiB", units::trim_float(b as f64 / units::MIB as f64, 2))
                        }
                    },
                    if width >= 60 {
                        " (derived: llama.cpp CPU model)"
                    } else {
                        ""
                    }
                ),
                if c.fits { t.text() } else { t.bad() },
            ),
        ];
        if let Some(item) = r
            .tiers
            .iter()
            .find(|x| x.used && x.name == c.limiting_tier)
            .and_then(|x| x.memory.overflows_at)
        {
            decide.push(Span::styled(
                format!(" · {} decides", crate::report::words::item(item)),
                t.bad(),
            ));
        }
        lines.push(Line::from(decide));
        let head_style = if c.headroom_bytes >= 0 {
            t.text()
        } else {
            t.bad()
        };
        lines.push(Line::from(vec![
            Span::styled("W+K+A headroom ", t.label()),
            Span::styled(
                format!(
                    "{} bytes = {}",
                    units::group_digits_signed(c.headroom_bytes),
                    units::fmt_gib_signed(c.headroom_bytes)
                ),
                head_style,
            ),
        ]));
        lines.push(Line::from(vec![
            Span::styled("KV ", t.label()),
            Span::styled(
                format!(
                    "{} bytes/token = {}",
                    units::group_digits(r.kv.bytes_per_token as u128),
                    units::exact_binary(r.kv.bytes_per_token)
                ),
                t.text(),
            ),
            Span::styled(" · ", t.label()),
            Span::styled(
                format!(
                    "{} at {} tokens",
                    units::exact_binary(c.kv_bytes),
                    units::fmt_tokens(n)
                ),
                t.text(),
            ),
        ]));
        let max = match c.max_context_tokens {
            Some(m) => {
                let mut v = vec![
                    Span::styled("largest context that fits ", t.label()),
                    Span::styled(format!("{} tokens", units::fmt_tokens(m)), t.figure()),
                ];
                if c.max_context_exceeds_native {
                    v.push(Span::styled(" (> native)", t.warn()));
                }
                if let Some(a) = c.article_max_context_tokens
                    && a != m
                {
                    v.push(Span::styled(
                        format!(" · W+K+A alone {}", units::fmt_tokens(a)),
                        t.label(),
                    ));
                }
                v
            }
            None => vec![
                Span::styled("largest context that fits ", t.label()),
                Span::styled("no memory limit", t.figure()),
            ],
        };
        lines.push(Line::from(max));
        lines
    }

    fn decode_lines(&self) -> Vec<Line<'static>> {
        let t = self.theme;
        let r = self.report;
        let d = &r.decode;
        let n = r.inputs.cache.context;
        let mut lines = vec![Line::from(vec![
            Span::styled(format!("{:<18}", "Decode ceiling"), t.heading()),
            Span::styled(format!("{:>9} {:>10}", "tokens/s", "ms/token"), t.label()),
        ])];
        let row = |label: String, c: &Ceiling| {
            Line::from(vec![
                Span::styled(format!("{label:<18}"), t.label()),
                Span::styled(
                    format!("{:>9}", units::fmt_rate(c.tokens_per_second)),
                    t.figure(),
                ),
                Span::styled(format!(" {:>10}", units::fmt_ms(c.ms_per_token)), t.text()),
            ])
        };
        lines.push(row("file, short".into(), &d.short_context));
        lines.push(row(
            format!("file @ {}", units::fmt_tokens(n)),
            &d.full_context,
        ));
        match (&d.inventory_short_context, &d.inventory_full_context) {
            (Some(s), Some(f)) => {
                let tag = if d.inventory_estimated {
                    "active est."
                } else {
                    "inventory"
                };
                lines.push(row(format!("{tag}, short"), s));
                lines.push(row(format!("{tag} @ {}", units::fmt_tokens(n)), f));
            }
            _ => lines.push(Line::from(vec![
                Span::styled(format!("{:<18}", "inventory mode"), t.label()),
                Span::styled("open the GGUF (o)", t.label()),
            ])),
        }
        let kind = ceiling_kind(&d.full_context);
        let kind_style = if d.full_context.bandwidth_provenance == Provenance::Spec {
            t.warn()
        } else {
            t.text()
        };
        lines.push(Line::from(vec![
            Span::styled(kind, kind_style),
            Span::styled(
                format!(
                    " · {} {}",
                    d.full_context.bandwidth_provenance.label(),
                    units::fmt_bandwidth(d.full_context.bandwidth)
                ),
                t.label(),
            ),
        ]));
        if d.full_context.tier_bytes.iter().filter(|b| **b > 0).count() > 1 {
            lines.push(Line::from(vec![
                Span::styled("tiers ", t.label()),
                Span::styled(
                    format!(
                        "sum {} · overlap {} tokens/s",
                        units::fmt_rate(d.full_context.tokens_per_second),
                        units::fmt_rate(d.full_context.overlapped_tokens_per_second)
                    ),
                    t.figure(),
                ),
            ]));
            let tiers = &r.inputs.machine.tiers;
            let parts: Vec<String> = d
                .full_context
                .tier_bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b > 0)
                .map(|(i, b)| {
                    format!(
                        "{} {} @ {}",
                        tiers[i].name,
                        units::fmt_gb(*b),
                        units::fmt_bandwidth(tiers[i].headline_bandwidth().value)
                    )
                })
                .collect();
            lines.push(Line::from(Span::styled(
                format!(" {}", parts.join(" · ")),
                t.label(),
            )));
        } else {
            lines.push(Line::from(Span::styled(
                "one tier moves every byte: sum = overlap",
                t.label(),
            )));
        }
        if r.inputs.cache.sequences > 1 {
            lines.push(Line::from(vec![
                Span::styled("per sequence ", t.label()),
                Span::styled(
                    format!(
                        "{} tokens/s",
                        units::fmt_rate(d.full_context.per_sequence_tokens_per_second)
                    ),
                    t.text(),
                ),
            ]));
        }
        lines
    }

    fn prefill_lines(&self) -> Vec<Line<'static>> {
        let t = self.theme;
        let rl = &self.report.roofline;
        let mut lines = Vec::new();
        match rl.prefill_ceiling_tokens_per_second {
            Some(p) => lines.push(Line::from(vec![
                Span::styled("Prefill ceiling ", t.heading()),
                Span::styled(format!("{} tokens/s", units::fmt_rate(p)), t.figure()),
                Span::styled(
                    format!(
                        " ({}-limited, {} rows)",
                        rl.prefill_limited_by.map_or("?", |l| l.label()),
                        rl.prompt_rows
                    ),
                    t.label(),
                ),
            ])),
            None => lines.push(Line::from(vec![
                Span::styled("Prefill ceiling ", t.heading()),
                Span::styled(crate::report::words::prefill_reason(rl), t.warn()),
            ])),
        }
        lines.push(Line::from(vec![
            Span::styled("FLOP/byte ", t.label()),
            Span::styled(
                format!(
                    "decode {:.2} · prefill ({} rows) {:.0}",
                    rl.decode_intensity, rl.prompt_rows, rl.prefill_intensity
                ),
                t.text(),
            ),
        ]));
        let balance = rl.machine_balance.map_or("—".into(), |b| format!("{b:.0}"));
        let cross = rl
            .crossover_rows
            .map_or("— (no compute rate)".into(), |x| format!("{x:.0} rows"));
        lines.push(Line::from(vec![
            Span::styled("balance R ", t.label()),
            Span::styled(balance, t.text()),
            Span::styled(" · crossover S* ", t.label()),
            Span::styled(cross, t.text()),
        ]));
        lines
    }

    fn charts(&self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let [top, bottom] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
        let c = &self.plots.curve;
        let mut sets = vec![
            Dataset::default()
                .name("file")
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(t.line_file())
                .data(&c.file),
        ];
        if !c.inventory.is_empty() {
            sets.push(
                Dataset::default()
                    .name("inventory")
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(t.line_inventory())
                    .data(&c.inventory),
            );
        }
        sets.push(
            Dataset::default()
                .name("now")
                .marker(Marker::Block)
                .graph_type(GraphType::Scatter)
                .style(t.marker())
                .data(&c.current),
        );
        Chart::new(sets)
            .block(
                ratatui::widgets::Block::new().title(Line::from(Span::styled(
                    "ceiling tok/s vs context",
                    t.label(),
                ))),
            )
            .legend_position(None)
            .x_axis(
                Axis::default()
                    .bounds(c.x_bounds)
                    .labels(c.x_labels.clone())
                    .style(t.label()),
            )
            .y_axis(
                Axis::default()
                    .bounds(c.y_bounds)
                    .labels(c.y_labels.clone())
                    .style(t.label()),
            )
            .render(top, buf);
        let rp = &self.plots.roofline;
        let mut sets = vec![
            Dataset::default()
                .name("bandwidth")
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(t.line_file())
                .data(&rp.slope),
        ];
        if !rp.roof.is_empty() {
            sets.push(
                Dataset::default()
                    .name("compute")
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(t.line_inventory())
                    .data(&rp.roof),
            );
        }
        sets.push(
            Dataset::default()
                .name("decode")
                .marker(Marker::Block)
                .graph_type(GraphType::Scatter)
                .style(t.marker())
                .data(&rp.decode),
        );
        sets.push(
            Dataset::default()
                .name("prefill")
                .marker(Marker::Block)
                .graph_type(GraphType::Scatter)
                .style(t.warn())
                .data(&rp.prefill),
        );
        Chart::new(sets)
            .block(
                ratatui::widgets::Block::new()
                    .title(Line::from(Span::styled("roofline, log-log", t.label()))),
            )
            .legend_position(None)
            .x_axis(
                Axis::default()
                    .bounds(rp.x_bounds)
                    .labels(rp.x_labels.clone())
                    .style(t.label()),
            )
            .y_axis(
                Axis::default()
                    .bounds(rp.y_bounds)
                    .labels(rp.y_labels.clone())
                    .style(t.label()),
            )
            .render(bottom, buf);
    }
}

impl Widget for BoundsPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let block = super::block("Bounds", self.focused, t);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 3 {
            return;
        }
        let bars = &self.plots.bars;
        let wrap = |ls: Vec<Line<'static>>| -> Vec<Line<'static>> {
            ls.into_iter()
                .flat_map(|l| super::wrap_line(l, inner.width))
                .collect()
        };
        let cap_lines = wrap(self.capacity_lines(inner.width));
        let detail = wrap(self.detail_lines(inner.width));
        let bar_rows = if self.compact { 2 } else { 1 };
        let top_h = (cap_lines.len() + bars.len() * bar_rows + detail.len()) as u16;
        let [top, rest] =
            Layout::vertical([Constraint::Length(top_h), Constraint::Fill(1)]).areas(inner);
        // Verdict, one bar per used tier, then the headroom, KV and largest-context lines.
        let mut y = top.y;
        let put = |line: Line<'static>, buf: &mut Buffer, y: &mut u16| {
            if *y < top.bottom() {
                Paragraph::new(line).render(Rect::new(top.x, *y, top.width, 1), buf);
                *y += 1;
            }
        };
        for l in cap_lines {
            put(l, buf, &mut y);
        }
        for b in bars {
            if y >= top.bottom() {
                break;
            }
            let g = |x: u64| units::trim_float(units::Bytes(x).gib(), 2);
            let [model, cache, output, compute, user] = b.items;
            let figures = format!(
                " W {} C {} X {} A {} / {}",
                g(model),
                g(cache),
                g(output.saturating_add(compute)),
                g(user),
                units::fmt_gib(b.capacity_bytes)
            );
            let name_w = 9u16;
            let fig_style = if b.fits { t.label() } else { t.bad() };
            if self.compact {
                let bar_w = top.width.saturating_sub(name_w);
                Paragraph::new(Span::styled(format!("{:<9}", b.name), t.heading()))
                    .render(Rect::new(top.x, y, name_w, 1), buf);
                MemoryBar { bar: b, theme: t }.render(Rect::new(top.x + name_w, y, bar_w, 1), buf);
                y += 1;
                if y < top.bottom() {
                    Paragraph::new(Span::styled(figures, fig_style))
                        .render(Rect::new(top.x, y, top.width, 1), buf);
                    y += 1;
                }
                continue;
            }
            let fig_w = (figures.chars().count() as u16).min(top.width / 2);
            let bar_w = top.width.saturating_sub(name_w + fig_w);
            Paragraph::new(Span::styled(format!("{:<9}", b.name), t.heading()))
                .render(Rect::new(top.x, y, name_w, 1), buf);
            MemoryBar { bar: b, theme: t }.render(Rect::new(top.x + name_w, y, bar_w, 1), buf);
            Paragraph::new(Span::styled(figures, fig_style))
                .render(Rect::new(top.x + name_w + bar_w, y, fig_w, 1), buf);
            y += 1;
        }
        for l in detail {
            put(l, buf, &mut y);
        }
        let mut text = self.decode_lines();
        text.push(Line::raw(""));
        for w in &self.report.warnings {
            text.push(Line::from(vec![
                Span::styled("! ", t.warn()),
                Span::styled(w.clone(), t.warn()),
            ]));
        }
        text.extend(self.prefill_lines());
        if self.compact || rest.width < 70 {
            Paragraph::new(text)
                .wrap(Wrap { trim: false })
                .scroll((self.scroll, 0))
                .render(rest, buf);
            return;
        }
        let [left, right] =
            Layout::horizontal([Constraint::Length(46), Constraint::Fill(1)]).areas(rest);
        Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .scroll((self.scroll, 0))
            .render(left, buf);
        self.charts(right, buf);
    }
}
