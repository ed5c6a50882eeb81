//! The Devices view: the plan llama.cpp would choose on the scenario's machine, one block per
//! device and one for the host — a bar of model / context / compute against the free memory
//! with the `-fit` margin marked, the figures in MiB as llama.cpp's memory breakdown prints
//! them, the backend and what the free figure is (Metal's working set, the driver's free
//! memory) with its provenance, and the tensor groups the device holds — after the fitted
//! argument line. Reads the report's `plan` only (`core::plan`, `core::placement::groups`);
//! the only sums here are the cells of a bar. Scrolls by logical lines, each with its wrapped
//! rows (`panes::scroll`), its title marked `↑ N more` / `↓ N more` as the Bounds pane's.

use crate::core::edit::Edit;
use crate::core::placement::groups::{BaseKind, Holding, LayerRun, LayerShare, MemoryBase, Share};
use crate::core::placement::{Backend, GpuLayers};
use crate::core::plan::{Plan, PlanError, PlanOrigin};
use crate::core::units;
use crate::tui::panes::scroll::{self, Block, Page};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Borders, Paragraph, Widget};

/// The view's own state: the first block shown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DevicesView {
    /// First logical line shown (stopped where the last line is in view).
    pub scroll: usize,
}

impl DevicesView {
    /// Scroll by `delta` lines; `last` is the last useful position ([`Page::last`]).
    pub fn scroll_by(&mut self, delta: isize, last: usize) {
        self.scroll = self.scroll.min(last).saturating_add_signed(delta).min(last);
    }
}

/// Bytes as whole MiB, as llama.cpp's `llama_memory_breakdown_print` shows them.
pub fn mib(n: u64) -> String {
    units::group_digits(u128::from(n >> 20))
}

/// A signed byte figure as whole MiB (negative: over).
fn mib_signed(n: i128) -> String {
    let m = n.unsigned_abs() >> 20;
    let s = units::group_digits(m);
    if n < 0 { format!("−{s}") } else { s }
}

/// A byte figure in GiB: whole GiB when exact (`36 GiB`), else three decimals.
pub fn gib(n: u64) -> String {
    if n > 0 && n.is_multiple_of(units::GIB) {
        units::exact_binary(n)
    } else {
        units::fmt_gib(n)
    }
}

/// A backend as its vendor writes it (`CUDA`, `Metal`).
fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Cuda => "CUDA",
        Backend::Rocm => "ROCm",
        Backend::Metal => "Metal",
        Backend::Vulkan => "Vulkan",
        Backend::Rpc => "RPC",
    }
}

/// What a device's memory figure is, against its capacity: `36 GiB working set (derived: 3/4
/// of 48 GiB)`, `23.617 GiB free to CUDA (derived) of 24 GiB`.
pub fn base_words(b: &MemoryBase) -> String {
    let of = match b.fraction {
        Some((n, d)) => format!("{}: {n}/{d} of {}", b.provenance.label(), gib(b.capacity)),
        None => format!("{}) of {}", b.provenance.label(), gib(b.capacity)),
    };
    let close = if b.fraction.is_some() { ")" } else { "" };
    match b.kind {
        BaseKind::WorkingSet => format!("{} working set ({of}{close}", gib(b.bytes)),
        BaseKind::DriverFree => {
            format!(
                "{} free to {} ({of}{close}",
                gib(b.bytes),
                backend_name(b.backend)
            )
        }
        BaseKind::ServerReported => {
            format!("{} reported by the RPC server ({of}{close}", gib(b.bytes))
        }
        BaseKind::WholeCapacity => format!(
            "{}: the whole capacity taken as free to {} ({}: no figure in the profile)",
            gib(b.bytes),
            backend_name(b.backend),
            b.provenance.label()
        ),
    }
}

/// A memory figure as the Machine pane shows it beside its name: `36 GiB (3/4)`, `23.617 GiB`,
/// `all of it` (no figure in the profile).
pub fn base_value(b: &MemoryBase) -> String {
    match (b.kind, b.fraction) {
        (BaseKind::WholeCapacity, _) => "all of it".into(),
        (_, Some((n, d))) => format!("{} ({n}/{d})", gib(b.bytes)),
        (_, None) => gib(b.bytes),
    }
}

/// The short name of what a memory figure is (`working set`, `free to CUDA`).
pub fn base_name(b: &MemoryBase) -> String {
    match b.kind {
        BaseKind::WorkingSet => "working set".into(),
        BaseKind::DriverFree => format!("free to {}", backend_name(b.backend)),
        BaseKind::ServerReported => "reported by the RPC server".into(),
        BaseKind::WholeCapacity => format!("free to {}", backend_name(b.backend)),
    }
}

fn layer_span(r: &LayerRun) -> String {
    if r.first == r.last {
        format!("layer {}", r.first)
    } else {
        format!("layers {}–{}", r.first, r.last)
    }
}

/// The tensor groups a buffer holds: `layers 0–33 · experts of layers 35–47 · output`.
pub fn holding_words(h: &Holding) -> String {
    let mut parts: Vec<String> = Vec::new();
    if h.input == Share::Whole {
        parts.push("token embedding".into());
    } else if h.input == Share::Part {
        parts.push("part of the input layer".into());
    }
    for r in &h.layers {
        let span = layer_span(r);
        parts.push(match &r.share {
            LayerShare::Whole => span,
            LayerShare::AllButExperts => format!("{span} but their experts"),
            LayerShare::Experts => format!("experts of {span}"),
            LayerShare::Tensors(k) => format!("{} of {span}", k.join(", ")),
            LayerShare::AllBut(k) => format!("{span} but {}", k.join(", ")),
        });
    }
    match h.output {
        Share::Whole => parts.push("output".into()),
        Share::Part => parts.push("part of the output layer".into()),
        Share::None => {}
    }
    if !h.caches.is_empty() {
        let r: Vec<String> = h
            .caches
            .iter()
            .map(|&(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}–{b}")
                }
            })
            .collect();
        parts.push(format!("KV of layers {}", r.join(", ")));
    }
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(" · ")
    }
}

/// A bar `width` cells wide: `█` model, `▓` context, `▒` compute, `░` free, `│` where the
/// margin begins (free − margin), over the free memory (or the use, when it passes it).
pub fn bar(model: u64, context: u64, compute: u64, free: u64, margin: u64, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let scale = free
        .max(model.saturating_add(context).saturating_add(compute))
        .max(1) as u128;
    let cells = |b: u64| ((u128::from(b) * width as u128) / scale) as usize;
    let (m, c, x) = (cells(model), cells(context), cells(compute));
    let mut out: Vec<char> = std::iter::repeat_n('█', m)
        .chain(std::iter::repeat_n('▓', c))
        .chain(std::iter::repeat_n('▒', x))
        .collect();
    out.resize(width, '░');
    out.truncate(width);
    if margin > 0 && free > margin {
        let at = cells(free - margin).min(width - 1);
        out[at] = '│';
    }
    out.into_iter().collect()
}

/// Units a figure is never wrapped away from.
const UNITS: [&str; 8] = ["B", "bytes", "KiB", "MiB", "GiB", "TiB", "MB", "GB"];

/// A line wrapped to `width`: at spaces (a figure stays with its unit), a word longer than the
/// width split into pieces (the argument line's `-ot` list has no spaces), continuation rows
/// indented by `indent`.
fn wrap(s: &str, width: usize, indent: usize) -> Vec<String> {
    let width = width.max(indent + 8);
    let lead = s.chars().take_while(|c| *c == ' ').count();
    let mut out: Vec<String> = Vec::new();
    let mut cur = " ".repeat(lead);
    let mut words: Vec<String> = Vec::new();
    for w in s[lead..].split(' ').filter(|w| !w.is_empty()) {
        match words.last_mut() {
            Some(prev) if UNITS.contains(&w) && prev.ends_with(|c: char| c.is_ascii_digit()) => {
                prev.push(' ');
                prev.push_str(w);
            }
            _ => words.push(w.to_string()),
        }
    }
    for word in &words {
        let cur_len = cur.chars().count();
        let sep = usize::from(!cur.trim().is_empty());
        let wl = word.chars().count();
        if cur_len + sep + wl <= width {
            if sep == 1 {
                cur.push(' ');
            }
            cur.push_str(word);
            continue;
        }
        if sep == 1 {
            out.push(std::mem::take(&mut cur));
            cur = " ".repeat(indent);
        }
        let mut rest: Vec<char> = word.chars().collect();
        loop {
            let room = width.saturating_sub(cur.chars().count()).max(1);
            if rest.len() <= room {
                cur.extend(rest);
                break;
            }
            cur.extend(rest.drain(..room));
            out.push(std::mem::take(&mut cur));
            cur = " ".repeat(indent);
        }
    }
    if !cur.trim().is_empty() || out.is_empty() {
        out.push(if cur.trim().is_empty() {
            String::new()
        } else {
            cur
        });
    }
    out
}

/// The most rows one logical line takes; a longer one is cut, its last row ending in `…`.
const MAX_ROWS: usize = 4;

/// One block per logical line (its wrapped rows kept together, at most [`MAX_ROWS`]).
/// Returns whether a line was cut.
fn push_lines(out: &mut Vec<Block>, lines: Vec<(String, Style)>, width: usize) -> bool {
    let mut cut = false;
    for (s, st) in lines {
        let indent = s.chars().take_while(|c| *c == ' ').count() + 2;
        let mut rows = wrap(&s, width, indent);
        if rows.len() > MAX_ROWS {
            rows.truncate(MAX_ROWS);
            if let Some(last) = rows.last_mut() {
                let keep: String = last.chars().take(width.saturating_sub(1)).collect();
                *last = format!("{keep}…");
            }
            cut = true;
        }
        out.push(Block {
            lines: rows
                .into_iter()
                .map(|l| Line::from(Span::styled(l, st)))
                .collect(),
        });
    }
    cut
}

/// The view's blocks for a plan at a text `width`: the argument line, each device, the host,
/// the verdict.
pub fn blocks(plan: &Result<Plan, PlanError>, width: usize, t: &Theme) -> Vec<Block> {
    let p = match plan {
        Ok(p) => p,
        Err(e) => {
            let mut out = Vec::new();
            push_lines(
                &mut out,
                vec![(format!("llama.cpp refuses these flags: {}", e.0), t.bad())],
                width,
            );
            return out;
        }
    };
    let mut out = Vec::new();
    let origin = match &p.origin {
        PlanOrigin::Fitted { arguments, probes } => format!(
            "-fit on chooses ({probes} dry run{}): {arguments}",
            if *probes == 1 { "" } else { "s" }
        ),
        PlanOrigin::FitRefused { reason } if p.cache_over_limit.is_some() => {
            format!("-fit on stops: {reason}")
        }
        PlanOrigin::FitRefused { reason } => {
            format!("-fit on gives up: {reason}; llama.cpp loads the flags as given")
        }
        PlanOrigin::FitOff => "-fit off: the flags as given".to_string(),
    };
    if push_lines(&mut out, vec![(origin, t.text())], width) {
        push_lines(
            &mut out,
            vec![(
                "  (cut here: a applies the whole line; llmbound report prints it)".into(),
                t.label(),
            )],
            width,
        );
    }
    push_lines(
        &mut out,
        vec![
            (
                format!(
                    "-c {} · -ngl {}{} · offloaded {}/{} layers ({} repeating + output) · tensor bytes {}",
                    units::group_digits(u128::from(p.n_ctx)),
                    p.ngl,
                    match p.ngl {
                        -1 => " (auto)",
                        -2 => " (all)",
                        _ => "",
                    },
                    p.offloaded_layers,
                    p.offloadable_layers,
                    p.n_layer,
                    if p.exact_model {
                        "from the file"
                    } else {
                        "estimated from W"
                    }
                ),
                t.text(),
            ),
            (
                "█ model ▓ context ▒ compute ░ free │ margin (-fitt) · MiB as llama.cpp prints"
                    .into(),
                t.label(),
            ),
            (String::new(), t.text()),
        ],
        width,
    );
    let bar_w = width.saturating_sub(2).clamp(10, 60);
    for d in &p.devices {
        let base = d.base.as_ref().map_or_else(
            || {
                format!(
                    "{} MiB free ({})",
                    mib(d.free.value),
                    d.free.provenance.label()
                )
            },
            base_words,
        );
        let over = if d.left < 0 { t.bad() } else { t.text() };
        let used = d.memory.total();
        push_lines(
            &mut out,
            vec![
                (
                    format!(
                        "{} · {} · {} · {base}",
                        d.buffer_name, d.tier_name, d.backend
                    ),
                    t.heading(),
                ),
                (
                    format!(
                        "  {} of {} MiB",
                        bar(
                            d.memory.model.0,
                            d.memory.context.0,
                            d.memory.compute.0,
                            d.free.value,
                            d.margin,
                            bar_w
                        ),
                        mib(d.free.value)
                    ),
                    over,
                ),
                (
                    format!(
                        "  model {} + context {} + compute {} = {} MiB · margin {} · left {} MiB",
                        mib(d.memory.model.0),
                        mib(d.memory.context.0),
                        mib(d.memory.compute.0),
                        mib(used),
                        mib(d.margin),
                        mib_signed(d.left_after_margin)
                    ),
                    over,
                ),
                (format!("  holds {}", holding_words(&d.holds)), t.text()),
            ],
            width,
        );
        if let Some(lo) = &d.limited {
            // (two lines, so that neither is cut at 80 columns)
            let (what, hint) = crate::outputs::report::words::limited_ops_parts(&d.buffer_name, lo);
            let lines = std::iter::once(what)
                .chain(hint)
                .map(|l| (format!("  {l}"), t.warn()))
                .collect();
            push_lines(&mut out, lines, width);
        }
        push_lines(&mut out, vec![(String::new(), t.text())], width);
    }
    push_lines(
        &mut out,
        vec![
            (
                format!(
                    "Host{}",
                    p.host_capacity.map_or_else(
                        || {
                            let unified = p.devices.iter().find(|d| d.backend == "metal");
                            format!(
                                " · no host tier in the profile{}",
                                unified.map_or_else(String::new, |d| format!(
                                    ": the CPU's share of the same {} unified memory",
                                    gib(d.total)
                                ))
                            )
                        },
                        |c| format!(" · {} of memory", gib(c))
                    ),
                ),
                t.heading(),
            ),
            (
                format!(
                    "  model {} + context {} + compute {} = {} MiB",
                    mib(p.host.model.0),
                    mib(p.host.context.0),
                    mib(p.host.compute.0),
                    mib(p.host.total())
                ),
                t.text(),
            ),
            (
                format!("  holds {}", holding_words(&p.host_holds)),
                t.text(),
            ),
            (String::new(), t.text()),
        ],
        width,
    );
    let mut verdict = Vec::new();
    if p.devices.is_empty() {
        if p.host_capacity.is_some() && p.host_short().is_none() {
            verdict.push((
                "✓ the host holds its share within its memory".to_string(),
                t.text(),
            ));
        }
    } else if p.devices_fit {
        verdict.push((
            "✓ every device holds its share within its free memory".to_string(),
            t.text(),
        ));
    } else {
        verdict.push((
            "✗ a device cannot hold its share within its free memory".to_string(),
            t.bad(),
        ));
    }
    if let Some(r) = p.cache_refusal() {
        verdict.push((format!("✗ {r}"), t.bad()));
    }
    if let Some(short) = p.host_short() {
        verdict.push((
            format!(
                "✗ the host's share is {} MiB more than its memory",
                mib(short)
            ),
            t.bad(),
        ));
    }
    if let Some(b) = p.fit_left_out_repack() {
        verdict.push((
            crate::outputs::report::words::fit_left_out_repack(&format!("{} MiB", mib(b))),
            t.text(),
        ));
    }
    push_lines(&mut out, verdict, width);
    out
}

/// The page the view shows in `area` (the body below the header, borders included) at a
/// scroll position.
pub fn page(plan: &Result<Plan, PlanError>, area: Rect, t: &Theme, scroll_at: usize) -> Page {
    let w = area.width.saturating_sub(2) as usize;
    let h = area.height.saturating_sub(2) as usize;
    scroll::page(&blocks(plan, w, t), h, scroll_at)
}

/// The edits that apply a fitted plan as explicit flags (`-fit off -c N -ngl N -ts … -ot …`),
/// or None when `-fit` did not choose the plan.
pub fn fitted_edits(plan: &Result<Plan, PlanError>) -> Option<Vec<Edit>> {
    let p = plan.as_ref().ok()?;
    if !matches!(p.origin, PlanOrigin::Fitted { .. }) {
        return None;
    }
    Some(vec![
        Edit::Fit(false),
        Edit::Ngl(GpuLayers::Count(p.gpu_layers)),
        Edit::TensorSplit(if p.tensor_split.is_empty() {
            None
        } else {
            Some(p.tensor_split.iter().map(|&t| f64::from(t)).collect())
        }),
        Edit::OverrideTensor(p.override_args()),
    ])
}

/// The screen.
pub struct DevicesScreen<'a> {
    /// The view's state.
    pub view: &'a DevicesView,
    /// The report's plan.
    pub plan: &'a Result<Plan, PlanError>,
    /// The machine's name.
    pub machine: &'a str,
    /// Styles.
    pub theme: Theme,
}

impl Widget for DevicesScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let pg = page(self.plan, area, &t, self.view.scroll);
        let mark = pg.mark();
        let room = area.width.saturating_sub(4) as usize;
        let tail = if mark.is_empty() {
            " ".to_string()
        } else {
            format!(" · {mark} ")
        };
        // the machine's name gives way to the scroll mark
        let head = crate::tui::format::fit(
            &format!(" Devices · {}", self.machine),
            room.saturating_sub(tail.chars().count()),
        );
        let title = format!("{head}{tail}");
        let frame = ratatui::widgets::Block::new()
            .borders(Borders::ALL)
            .border_style(t.label())
            .title(Line::from(Span::styled(title, t.heading())));
        let inner = frame.inner(area);
        frame.render(area, buf);
        Paragraph::new(pg.lines).render(inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_marks_the_margin_and_fills_the_width() {
        let mib = 1u64 << 20;
        let b = bar(50 * mib, 10 * mib, 10 * mib, 100 * mib, 10 * mib, 10);
        assert_eq!(b, "█████▓▒░░│");
        assert_eq!(bar(200, 0, 0, 100, 0, 4), "████");
    }

    #[test]
    fn mib_is_whole_as_llama_cpp_prints() {
        assert_eq!(mib(3 * (1 << 20) + 5), "3");
        assert_eq!(mib_signed(-(5i128 << 20)), "−5");
    }

    #[test]
    fn a_refused_plan_says_why() {
        let b = blocks(
            &Err(PlanError("bad -ts".into())),
            80,
            &Theme { color: false },
        );
        let text: Vec<String> = b[0].lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(
            text,
            vec!["llama.cpp refuses these flags: bad -ts".to_string()]
        );
    }

    #[test]
    fn a_figure_stays_with_its_unit() {
        let w = wrap("  margin 1,024 · left 32 MiB", 24, 4);
        assert_eq!(w, vec!["  margin 1,024 · left", "    32 MiB"]);
    }

    #[test]
    fn a_long_word_is_split_not_lost() {
        let w = wrap("-ot aaaaaaaaaaaaaaaaaaaa", 10, 2);
        assert_eq!(w, vec!["-ot", "  aaaaaaaa", "  aaaaaaaa", "  aaaa"]);
        assert_eq!(w.concat().replace(' ', ""), "-otaaaaaaaaaaaaaaaaaaaa");
    }

    #[test]
    fn holdings_are_worded_by_group() {
        let h = Holding {
            layers: vec![
                LayerRun {
                    first: 0,
                    last: 33,
                    share: LayerShare::Whole,
                },
                LayerRun {
                    first: 34,
                    last: 34,
                    share: LayerShare::AllBut(vec!["ffn_down_exps".into()]),
                },
                LayerRun {
                    first: 35,
                    last: 47,
                    share: LayerShare::AllButExperts,
                },
            ],
            output: Share::Whole,
            input: Share::None,
            caches: vec![(0, 47)],
        };
        assert_eq!(
            holding_words(&h),
            "layers 0–33 · layer 34 but ffn_down_exps · layers 35–47 but their experts · output · KV of layers 0–47"
        );
    }
}
