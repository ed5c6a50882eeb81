//! The Bounds pane: capacity bars and verdict, the largest context, decode ceilings (file and
//! inventory mode, short and full context, non-overlapped and overlapped), prefill and the
//! roofline, and two charts. Reads the report and the chart coordinates; computes nothing.

use crate::core::Report;
use crate::core::decode::Ceiling;
use crate::core::units::{self, Provenance};
use crate::tui::format as fmt;
use crate::tui::plot::Plots;
use crate::tui::theme::Theme;
use crate::tui::widgets::MemoryBar;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph, Widget};

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
    /// Blocks the lower text is scrolled by (`panes::scroll`).
    pub scroll: u16,
    /// Set to the last useful scroll position when drawn, so the keys stop there.
    pub scroll_end: Option<&'a std::cell::Cell<u16>>,
    /// The runtime the figures are for, named in the title when another one also applies
    /// ("Bounds · llama.cpp" beside a safetensors model MLX-LM could run).
    pub runtime: Option<&'a str>,
    /// The model the figures are for, named in the title when the open file is not it (the
    /// bounds refused the file and kept the previous model).
    pub other_model: Option<&'a str>,
    /// Styles.
    pub theme: Theme,
}

/// The KV line of a cache with windowed layers: `3,072 B/tok × 32,768 + 7.500 MiB win =
/// 103.500 MiB logical, 104 MiB alloc` — the per-token part, the fixed window, the logical and
/// the allocated figures (None without a window part, or with a recurrent state beside it).
fn windowed_kv_line(r: &Report) -> Option<String> {
    let kv = &r.kv;
    if kv.window_bytes == 0 || kv.recurrent_bytes > 0 {
        return None;
    }
    let n = r.inputs.cache.context;
    let b = r.inputs.cache.sequences;
    let seqs = if b > 1 {
        format!(" × {b} seq")
    } else {
        String::new()
    };
    Some(format!(
        "{} B/tok × {}{seqs} + {} win = {} logical, {} alloc{}",
        units::group_digits(kv.growing_bytes_per_token as u128),
        units::fmt_tokens(n),
        fmt::bytes_short(kv.window_bytes),
        fmt::bytes_short(kv.bytes),
        fmt::bytes_short(kv.allocated_bytes),
        if r.inputs.cache.swa_full {
            " (swa-full)"
        } else {
            ""
        }
    ))
}

/// What a ceiling is called: a spec bandwidth makes it an optimistic vendor ceiling.
pub fn ceiling_kind(c: &Ceiling) -> String {
    match c.bandwidth_provenance {
        Provenance::Spec => crate::report::words::VENDOR_CEILING.into(),
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
        // X is one figure for two buffers, so its two symbols share one name.
        let wide = width >= 60;
        let entries: [(&[usize], &str); 5] = if wide {
            [
                (&[0], "W model"),
                (&[1], "C cache"),
                (&[2, 3], "X output + compute buffers"),
                (&[4], "A other"),
                (&[5], "free"),
            ]
        } else {
            [
                (&[0], "W model"),
                (&[1], "C cache"),
                (&[2, 3], "X buffers"),
                (&[4], "A other"),
                (&[5], "free"),
            ]
        };
        let gap = if wide { "  " } else { " " };
        let mut legend = Vec::new();
        for (i, (symbols, name)) in entries.iter().enumerate() {
            if i > 0 {
                legend.push(Span::raw(gap));
            }
            for k in *symbols {
                legend.push(Span::styled(sym[*k], st[*k]));
            }
            // No-break spaces keep a symbol and its name on one line when the legend wraps.
            legend.push(Span::styled(
                format!("\u{a0}{}", name.replacen(' ', "\u{a0}", 1)),
                t.label(),
            ));
        }
        lines.push(Line::from(legend));
        // The bases the two figures are held against: the runtime's, what the backend reports
        // (Metal's working set); the W+K+A headroom's, the limiting tier's capacity.
        let limiting = r.tiers.iter().find(|x| x.used && x.name == c.limiting_tier);
        let base = limiting
            .and_then(|x| r.inputs.machine.tiers.get(x.index))
            .and_then(crate::core::placement::groups::memory_base);
        let runtime_base = match (&base, limiting) {
            (Some(b), _) => format!(
                " of the {} {}",
                crate::tui::views::devices::gib(b.bytes),
                crate::tui::views::devices::base_name(b)
            ),
            (None, Some(x)) => format!(
                " of {}'s {}",
                x.name,
                crate::tui::views::devices::gib(x.memory.capacity_bytes)
            ),
            (None, None) => String::new(),
        };
        let one_tier = r.tiers.iter().filter(|x| x.used).count() == 1;
        let headroom_base = limiting.map_or_else(String::new, |x| {
            let cap = crate::tui::views::devices::gib(x.capacity_bytes);
            if one_tier {
                format!(" of the {cap} capacity")
            } else {
                format!(" of {}'s {cap} capacity", x.name)
            }
        });
        // a placement by tensor charges each device its own compute buffer (the bars above):
        // the figure is their sum; whole layers show the one CPU-model figure
        let (buffers, buffers_base) = if r.layout.compute_placed {
            (
                c.runtime_bytes
                    .output_bytes
                    .saturating_add(c.runtime_bytes.compute_bytes),
                " (derived: summed over tiers)",
            )
        } else {
            (
                c.buffers
                    .output_bytes
                    .saturating_add(c.buffers.compute_bytes),
                " (derived: llama.cpp CPU model)",
            )
        };
        let mut decide = vec![
            Span::styled("runtime ", t.label()),
            Span::styled(
                format!(
                    "{} · buffers {}{}",
                    {
                        let f = c.runtime_free_bytes;
                        let figure = if f >= 0 {
                            format!("{} free", fmt::bytes(f as u64))
                        } else {
                            format!("short {}", fmt::bytes_signed(f).trim_start_matches('-'))
                        };
                        // The runtime's base is named where the line keeps to one row (or
                        // wraps anyway, in a narrow pane); the bar above ends with it.
                        let long = format!(
                            "runtime {figure}{runtime_base} · buffers {}{}",
                            fmt::bytes(buffers),
                            if width >= 60 { buffers_base } else { "" }
                        );
                        if width < 60 || long.chars().count() <= width as usize {
                            format!("{figure}{runtime_base}")
                        } else {
                            figure
                        }
                    },
                    fmt::bytes(buffers),
                    if width >= 60 { buffers_base } else { "" }
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
                    "{} bytes = {}{headroom_base}",
                    units::group_digits_signed(c.headroom_bytes),
                    fmt::bytes_signed(c.headroom_bytes)
                ),
                head_style,
            ),
        ]));
        // Sliding or chunked layers: the per-token part and the fixed window apart, the
        // logical figure beside the allocated one, so the line multiplies out.
        if let Some(l) = windowed_kv_line(r) {
            lines.push(Line::from(vec![
                Span::styled("KV ", t.label()),
                Span::styled(l, t.text()),
            ]));
        } else {
            lines.push(Line::from(vec![
                Span::styled("KV ", t.label()),
                Span::styled(
                    {
                        // The per-token part of the figure beside it (with --swa-full the sliding layers
                        // grow too), so the line multiplies out.
                        let b = r.kv.growing_bytes_per_token;
                        if b < 1024 || !b.is_multiple_of(1024) {
                            format!("{} bytes/token", units::group_digits(b as u128))
                        } else {
                            format!(
                                "{} bytes/token = {}",
                                units::group_digits(b as u128),
                                units::exact_binary(b)
                            )
                        }
                    },
                    t.text(),
                ),
                Span::styled(" · ", t.label()),
                Span::styled(
                    if r.inputs.cache.sequences > 1 {
                        format!(
                            "{} at {} tokens × {} sequences",
                            fmt::bytes_short(c.kv_bytes),
                            units::fmt_tokens(n),
                            r.inputs.cache.sequences
                        )
                    } else {
                        format!(
                            "{} at {} tokens",
                            fmt::bytes_short(c.kv_bytes),
                            units::fmt_tokens(n)
                        )
                    },
                    t.text(),
                ),
            ]));
        }
        let max = match c.max_context_tokens {
            // A refused configuration starts at no context: no figure under the ✗.
            _ if c.starts_at_no_context() => vec![
                Span::styled("largest context that fits ", t.label()),
                Span::styled("none: llama.cpp will not start", t.bad()),
            ],
            Some(m) => {
                let mut v = vec![
                    Span::styled("largest context that fits ", t.label()),
                    Span::styled(format!("{} tokens", units::fmt_tokens(m)), t.figure()),
                ];
                if r.inputs.cache.sequences > 1 {
                    v.push(Span::styled(
                        format!(" per sequence × {}", r.inputs.cache.sequences),
                        t.label(),
                    ));
                }
                if c.max_context_exceeds_native {
                    v.push(Span::styled(" (> native)", t.warn()));
                }
                if c.max_context_by_tensor_limit {
                    v.push(Span::styled(" (tensor limit)", t.label()));
                }
                if let Some(a) = c.article_max_context_tokens
                    && a != m
                    && !c.max_context_by_tensor_limit
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

    /// How many of `decode_lines` are the table (its header, the Σ note, its rows), which
    /// scroll as one block.
    fn decode_table_len(&self) -> usize {
        let d = &self.report.decode;
        let inventory = match (&d.inventory_short_context, &d.inventory_full_context) {
            (Some(_), Some(_)) => 2,
            _ => 1,
        };
        1 + usize::from(self.report.inputs.cache.sequences > 1) + 2 + inventory
    }

    fn decode_lines(&self) -> Vec<Line<'static>> {
        let t = self.theme;
        let r = self.report;
        let d = &r.decode;
        let n = r.inputs.cache.context;
        let seqs = r.inputs.cache.sequences;
        // The label column is as wide as its longest label ("inventory @ 131,072" is 19).
        let longest_tag = match (&d.inventory_full_context, d.inventory_estimated) {
            (None, _) => "file",
            (Some(_), false) => "inventory",
            (Some(_), true) => "active est.",
        };
        let lw = format!("{longest_tag} @ {}", fmt::tokens_short(n))
            .chars()
            .count()
            .max(18);
        let mut lines = vec![Line::from(vec![
            Span::styled(format!("{:<lw$}", "Decode ceiling"), t.heading()),
            if seqs > 1 {
                Span::styled(format!("{:>9} {:>10}", "Σ tok/s", "ms/step"), t.label())
            } else {
                Span::styled(format!("{:>9} {:>10}", "tokens/s", "ms/token"), t.label())
            },
        ])];
        if seqs > 1 {
            // With several sequences a step yields one token for each: the rate is their sum,
            // the time is one step's.
            lines.push(Line::from(Span::styled(
                format!("Σ over {seqs} sequences; step = 1 token each"),
                t.label(),
            )));
        }
        let row = |label: String, c: &Ceiling| {
            Line::from(vec![
                Span::styled(format!("{label:<lw$}"), t.label()),
                Span::styled(format!("{:>9}", fmt::rate(c.tokens_per_second)), t.figure()),
                Span::styled(format!(" {:>10}", fmt::ms(c.ms_per_token)), t.text()),
            ])
        };
        lines.push(row("file, short".into(), &d.short_context));
        lines.push(row(
            format!("file @ {}", fmt::tokens_short(n)),
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
                lines.push(row(format!("{tag} @ {}", fmt::tokens_short(n)), f));
            }
            _ => lines.push(Line::from(vec![
                Span::styled(format!("{:<lw$}", "inventory mode"), t.label()),
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
                        "summed {} · overlapped {} tokens/s",
                        fmt::rate(d.full_context.tokens_per_second),
                        fmt::rate(d.full_context.overlapped_tokens_per_second)
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
                        "{} {} @\u{a0}{}",
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
                "one memory tier: no overlap to add",
                t.label(),
            )));
        }
        if r.inputs.cache.sequences > 1 {
            lines.push(Line::from(vec![
                Span::styled(
                    format!("per sequence @ {}: ", units::fmt_tokens(n)),
                    t.label(),
                ),
                Span::styled(
                    format!(
                        "{} tokens/s",
                        fmt::rate(d.full_context.per_sequence_tokens_per_second)
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
                Span::styled(format!("{} tokens/s", fmt::rate(p)), t.figure()),
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
                    "decode {:.2} · prefill {} (S={})",
                    rl.decode_intensity,
                    units::group_digits(rl.prefill_intensity.round().max(0.0) as u128),
                    rl.prompt_rows
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
        let [top, _, bottom] = Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(1),
            Constraint::Fill(1),
        ])
        .areas(area);
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
        // The current context as a drop line in the same braille grid as the curve, so its
        // top sits on the curve at every size (a block marker rounds to a different row).
        let now: Vec<(f64, f64)> = c
            .current
            .iter()
            .flat_map(|&(x, y)| [(x, c.y_bounds[0]), (x, y)])
            .collect();
        sets.push(
            Dataset::default()
                .name("now")
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(t.marker())
                .data(&now),
        );
        let titles: &[&str] = if c.inventory.is_empty() {
            &[
                "decode ceiling tok/s by context (│ = now)",
                "tok/s ceiling by context (│ now)",
                "tok/s ceiling by context",
            ]
        } else {
            &[
                "decode ceiling tok/s by context: file, inventory (│ = now)",
                "tok/s ceiling: file, inventory (│ now)",
                "tok/s ceiling by context",
            ]
        };
        let fit = |ts: &[&'static str]| {
            ts.iter()
                .copied()
                .find(|s| s.chars().count() <= area.width as usize)
                .unwrap_or(ts[ts.len() - 1])
        };
        let title = fit(titles);
        draw_chart(
            ChartFrame {
                title,
                x_bounds: c.x_bounds,
                y_bounds: c.y_bounds,
                x_labels: &c.x_labels,
                y_labels: &c.y_labels,
            },
            sets,
            top,
            buf,
            t,
        );
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
                // A glyph of its own, so NO_COLOR still tells it from decode's █.
                .marker(Marker::Dot)
                .graph_type(GraphType::Scatter)
                .style(t.warn())
                .data(&rp.prefill),
        );
        draw_chart(
            ChartFrame {
                // With no compute rate there is no roof: the chart says so rather than call a
                // bandwidth slope a roofline.
                // Every width names both axes: y is FLOP/s, x is FLOP per byte read (the
                // labels `1.6P` and `0.3 100 32k` carry no unit of their own).
                title: fit(if rp.roof.is_empty() {
                    &[
                        "no compute rate: bandwidth slope only, log-log · y FLOP/s, x FLOP/byte (█ decode)",
                        "no compute rate: bandwidth slope only · y FLOP/s, x FLOP/byte",
                        "no compute rate: slope only · y FLOP/s, x FLOP/byte",
                        "no compute rate · y FLOP/s, x FLOP/byte",
                        "no rate: y FLOP/s, x FLOP/B",
                        "no rate: FLOP/s, FLOP/B",
                    ]
                } else {
                    &[
                        "roofline, log-log: y FLOP/s, x FLOP/byte (█ decode, • prefill)",
                        "roofline: y FLOP/s, x FLOP/byte (█ decode • prefill)",
                        "y FLOP/s, x FLOP/byte (█ decode • prefill)",
                        "y FLOP/s x FLOP/B █ decode • prefill",
                        "y FLOP/s, x FLOP/byte",
                        "y FLOP/s, x FLOP/B",
                        "FLOP/s, FLOP/B",
                    ]
                }),
                x_bounds: rp.x_bounds,
                y_bounds: rp.y_bounds,
                x_labels: &rp.x_labels,
                y_labels: &rp.y_labels,
            },
            sets,
            bottom,
            buf,
            t,
        );
    }
}

/// Rows the two charts need to draw (two of 6 and the row between them).
const CHARTS_MIN_ROWS: u16 = 13;

/// The warnings in one row: the first, cut to fit, and how many more read below.
fn fold_warnings(warnings: &[String], width: u16, t: Theme) -> Line<'static> {
    let more = warnings.len().saturating_sub(1);
    let tail = if more == 0 {
        " (in full below)".to_string()
    } else {
        format!(" (+{more} more below)")
    };
    let room = (width as usize).saturating_sub(2 + tail.chars().count());
    let first = warnings.first().map_or("", String::as_str);
    let cut = if room == 0 && !first.is_empty() {
        "…".to_string()
    } else {
        fmt::fit(first, room)
    };
    Line::from(vec![
        Span::styled("! ", t.warn()),
        Span::styled(cut, t.warn()),
        Span::styled(tail, t.label()),
    ])
}

/// What frames one chart: its title, bounds and axis labels.
struct ChartFrame<'a> {
    title: &'a str,
    x_bounds: [f64; 2],
    y_bounds: [f64; 2],
    x_labels: &'a [String],
    y_labels: &'a [String],
}

/// One chart that owns its whole rectangle: the title on the first row, a gutter as wide as
/// the longest y label (labels right-aligned in it, never past it), the axis lines, the x
/// labels on the last row inside the rectangle. ratatui's `Chart` draws only the data, in the
/// plot area left inside the frame, so no label can run into neighbouring text.
fn draw_chart(f: ChartFrame<'_>, sets: Vec<Dataset<'_>>, area: Rect, buf: &mut Buffer, t: Theme) {
    if area.height < 5 || area.width < 12 {
        return;
    }
    let put = |x: u16, y: u16, s: &str, buf: &mut Buffer| {
        buf.set_stringn(
            x,
            y,
            s,
            (area.right().saturating_sub(x)) as usize,
            t.label(),
        );
    };
    put(area.x, area.y, f.title, buf);
    let gutter = f
        .y_labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0) as u16;
    let axis_x = area.x + gutter;
    let plot_top = area.y + 1;
    let axis_y = area.bottom() - 2;
    let label_y = area.bottom() - 1;
    let plot = Rect::new(
        axis_x + 1,
        plot_top,
        area.right().saturating_sub(axis_x + 1),
        axis_y - plot_top,
    );
    for y in plot_top..axis_y {
        buf[(axis_x, y)].set_symbol("│").set_style(t.label());
    }
    buf[(axis_x, axis_y)].set_symbol("└").set_style(t.label());
    for x in axis_x + 1..area.right() {
        buf[(x, axis_y)].set_symbol("─").set_style(t.label());
    }
    // y labels: top, middle, bottom rows of the plot, right-aligned in the gutter.
    let n = f.y_labels.len();
    for (i, l) in f.y_labels.iter().enumerate() {
        let row = if n <= 1 {
            axis_y - 1
        } else {
            let span = (axis_y - 1 - plot_top) as usize;
            axis_y - 1 - (span * i / (n - 1)) as u16
        };
        let w = l.chars().count() as u16;
        put(axis_x.saturating_sub(w), row, l, buf);
    }
    // x labels: first at the axis, last ending at the right edge, the rest centred; a label
    // that would touch its left neighbour is skipped.
    let mut next_free = area.x;
    let n = f.x_labels.len();
    for (i, l) in f.x_labels.iter().enumerate() {
        let w = l.chars().count() as u16;
        let x = if i == 0 {
            axis_x.saturating_sub(w.saturating_sub(1))
        } else if i + 1 == n {
            area.right().saturating_sub(w)
        } else {
            let centre = plot.x + (plot.width as usize * i / (n - 1)) as u16;
            centre.saturating_sub(w / 2)
        };
        if x < next_free || x + w > area.right() {
            continue;
        }
        put(x, label_y, l, buf);
        next_free = x + w + 1;
    }
    if plot.width > 0 && plot.height > 0 {
        Chart::new(sets)
            .legend_position(None)
            .x_axis(Axis::default().bounds(f.x_bounds))
            .y_axis(Axis::default().bounds(f.y_bounds))
            .render(plot, buf);
    }
}

impl Widget for BoundsPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let name = match self.runtime {
            Some(r) => format!("Bounds · {r}"),
            None => "Bounds".to_string(),
        };
        let inner = super::block(name.clone(), self.focused, t).inner(area);
        if inner.height < 3 {
            super::block(name, self.focused, t).render(area, buf);
            return;
        }
        let bars = &self.plots.bars;
        let wrap = |ls: Vec<Line<'static>>| -> Vec<Line<'static>> {
            ls.into_iter()
                .flat_map(|l| super::wrap_line(l, inner.width))
                .collect()
        };
        let cap_lines = wrap(self.capacity_lines(inner.width));
        let worded = crate::report::words::warnings(&self.report.warnings);
        let warnings_raw: Vec<Line<'static>> = worded
            .iter()
            .map(|w| {
                Line::from(vec![
                    Span::styled("! ", t.warn()),
                    Span::styled(w.clone(), t.warn()),
                ])
            })
            .collect();
        let warnings = wrap(warnings_raw.clone());
        // detail_lines: legend, runtime, headroom, KV, largest context.
        let mut detail_raw = self.detail_lines(inner.width);
        let mut detail = Vec::new();
        // Compact (80×24, 100×30): the largest context and both decode ceilings come right
        // under the bars; the rest of the detail, the warnings and prefill scroll below them.
        let mut compact_tail = Vec::new();
        if self.compact {
            // The tail keeps logical lines: each scrolls as one block with all its wrapped
            // rows (a row of "runtime … free of the 36 GiB / working set · buffers …" never
            // starts the page on its own).
            let largest = detail_raw.pop();
            compact_tail = detail_raw;
            compact_tail.extend(warnings_raw.iter().cloned());
            detail = wrap(largest.iter().cloned().collect());
            // The decode ceilings come first when the pane is short (a claim open at 80×24):
            // the header and both file-mode rows need three rows under the bars; the largest
            // context then reads under the ceilings.
            let above = (cap_lines.len() + bars.len() * 2 + detail.len()) as u16;
            if above + 3 > inner.height && !detail.is_empty() {
                detail.clear();
                let mut tail: Vec<Line<'static>> = largest.into_iter().collect();
                tail.append(&mut compact_tail);
                compact_tail = tail;
            }
        } else {
            // Warnings sit with the verdict, above the ceilings and the charts, while the
            // charts keep the rows they need to draw; else the warnings fold into one line
            // (the first, cut, and how many more) and read in full under the decode ceilings,
            // and if that is not enough the detail above the largest context moves there too.
            let fixed = (cap_lines.len() + bars.len()) as u16;
            let room = inner.height.saturating_sub(CHARTS_MIN_ROWS);
            let full_detail = wrap(detail_raw.clone());
            if fixed + (full_detail.len() + warnings.len()) as u16 <= room || warnings.is_empty() {
                detail.extend(full_detail);
                detail.extend(warnings);
            } else {
                let folded = fold_warnings(&worded, inner.width, t);
                if fixed + (full_detail.len() + 1) as u16 <= room {
                    detail.extend(full_detail);
                } else {
                    // The legend (it reads the bar) and the largest context stay; runtime,
                    // headroom and KV per token read under the ceilings.
                    let largest = detail_raw.pop();
                    let legend = (!detail_raw.is_empty()).then(|| detail_raw.remove(0));
                    compact_tail = detail_raw;
                    detail.extend(wrap(legend.into_iter().chain(largest).collect()));
                }
                let whole = self.report.warnings.len() == 1 && warnings.len() == 1;
                if whole {
                    // One warning that fits its row is shown as it is, once.
                    detail.extend(warnings);
                } else {
                    detail.push(folded);
                    compact_tail.extend(warnings_raw);
                }
            }
        }
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
            let [model, cache, output, compute, user] = b.items;
            let (f, unit) = fmt::bytes_in_one_unit(&[
                model,
                cache,
                output.saturating_add(compute),
                user,
                b.capacity_bytes,
            ]);
            let figures = format!(
                " W {} C {} X {} A {} / {} {unit}",
                f[0], f[1], f[2], f[3], f[4]
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
            // The figures whole (the unit last: "/ 36.0 GiB" never cut to "Gi"); the bar
            // keeps at least 8 cells.
            let fig_w = (figures.chars().count() as u16)
                .min(top.width.saturating_sub(name_w + 8).max(top.width / 2));
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
        // The text below scrolls in whole blocks: the decode table with its header, each
        // other line with all its wrapped rows, the prefill ceiling with its heading.
        let decode = self.decode_lines();
        let table = self.decode_table_len().min(decode.len());
        let mut groups: Vec<Vec<Line<'static>>> = Vec::new();
        let mut decode = decode.into_iter();
        groups.push(decode.by_ref().take(table).collect());
        groups.extend(decode.map(|l| vec![l]));
        groups.extend(compact_tail.into_iter().map(|l| vec![l]));
        let mut prefill = self.prefill_lines().into_iter();
        groups.push(
            std::iter::once(Line::raw(""))
                .chain(prefill.next())
                .collect(),
        );
        groups.extend(prefill.map(|l| vec![l]));
        let (text_area, charts) = if self.compact || rest.width < 70 {
            (rest, None)
        } else {
            // The text column is as wide as its longest line (at least 46, leaving the charts
            // 30 columns), then two blank columns, then the charts.
            let widest = groups
                .iter()
                .flatten()
                .map(|l| l.width() as u16)
                .max()
                .unwrap_or(0);
            let left_w = widest.clamp(46, (rest.width * 45 / 100).max(46));
            let [left, _, right] = Layout::horizontal([
                Constraint::Length(left_w),
                Constraint::Length(2),
                Constraint::Fill(1),
            ])
            .areas(rest);
            (left, Some(right))
        };
        let blocks: Vec<super::scroll::Block> = groups
            .into_iter()
            .map(|g| super::scroll::Block::group(g, text_area.width))
            .collect();
        let page = super::scroll::page(&blocks, text_area.height as usize, self.scroll as usize);
        if let Some(end) = self.scroll_end {
            end.set(page.last as u16);
        }
        Paragraph::new(page.lines.clone()).render(text_area, buf);
        if let Some(right) = charts {
            self.charts(right, buf);
        }
        let mark = page.mark();
        let mut title = if mark.is_empty() {
            name
        } else {
            format!("{name} · {mark}")
        };
        // after the scroll mark, so a narrow title cuts the model's name (with "…"), not it
        if let Some(m) = self.other_model {
            title.push_str(&format!(
                " · {} (not the open file)",
                crate::sanitize::text(m)
            ));
        }
        let title = crate::tui::format::fit(&title, area.width.saturating_sub(4) as usize);
        super::block(title, self.focused, t).render(area, buf);
    }
}
