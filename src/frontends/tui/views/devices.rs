//! The Devices view: the plan llama.cpp would choose on the scenario's machine, one block per
//! device and one for the host — a bar of model / context / compute against the free memory
//! with the `-fit` margin marked, the figures in MiB as llama.cpp's memory breakdown prints
//! them, the backend and where the free figure comes from — then the fitted argument line.
//! Reads the report's `plan` only (`core::plan`); the only sums here are the cells of a bar.

use crate::core::edit::Edit;
use crate::core::placement::GpuLayers;
use crate::core::plan::{Plan, PlanError, PlanOrigin};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// The view's own state: the first line shown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DevicesView {
    /// First line shown.
    pub scroll: usize,
}

impl DevicesView {
    /// Scroll by `delta` lines over `total` lines shown `page` at a time.
    pub fn scroll_by(&mut self, delta: isize, total: usize, page: usize) {
        let end = total.saturating_sub(page);
        self.scroll = self.scroll.saturating_add_signed(delta).min(end);
    }
}

/// Bytes as whole MiB, as llama.cpp's `llama_memory_breakdown_print` shows them.
pub fn mib(n: u64) -> String {
    crate::core::units::group_digits(u128::from(n >> 20))
}

/// A signed byte figure as whole MiB (negative: over).
fn mib_signed(n: i128) -> String {
    let m = n.unsigned_abs() >> 20;
    let s = crate::core::units::group_digits(m);
    if n < 0 { format!("−{s}") } else { s }
}

/// A bar `width` cells wide: `M` model, `C` context, `X` compute, `·` free, `|` where the
/// margin begins (free − margin), over the free memory.
pub fn bar(model: u64, context: u64, compute: u64, free: u64, margin: u64, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let scale = free.max(model + context + compute).max(1) as u128;
    let cells = |b: u64| ((u128::from(b) * width as u128) / scale) as usize;
    let (m, c, x) = (cells(model), cells(context), cells(compute));
    let mut out: Vec<char> = std::iter::repeat('M')
        .take(m)
        .chain(std::iter::repeat('C').take(c))
        .chain(std::iter::repeat('X').take(x))
        .collect();
    out.resize(width, '·');
    out.truncate(width);
    if margin > 0 && free > margin {
        let at = cells(free - margin).min(width - 1);
        out[at] = '|';
    }
    out.into_iter().collect()
}

/// The view's lines for a plan at a text `width`.
pub fn lines(plan: &Result<Plan, PlanError>, width: usize) -> Vec<String> {
    let p = match plan {
        Ok(p) => p,
        Err(e) => return vec![format!("llama.cpp refuses these flags: {}", e.0)],
    };
    let mut out = Vec::new();
    let origin = match &p.origin {
        PlanOrigin::Fitted { arguments, probes } => {
            format!("-fit on: {arguments}  ({probes} dry runs)")
        }
        PlanOrigin::FitRefused { reason } => {
            format!("-fit on gave up: {reason}; the flags as given")
        }
        PlanOrigin::FitOff => "-fit off: the flags as given".to_string(),
    };
    out.push(origin);
    out.push(format!(
        "-c {} · -ngl {} of {} layers · model bytes {}",
        crate::core::units::group_digits(u128::from(p.n_ctx)),
        p.gpu_layers,
        p.n_layer,
        if p.exact_model {
            "exact (tensor list)"
        } else {
            "estimated from W"
        }
    ));
    out.push(String::new());
    let bar_w = width.saturating_sub(2).clamp(10, 60);
    for d in &p.devices {
        out.push(format!(
            "{} · {} · {} · free {} MiB ({})",
            d.buffer_name,
            d.tier_name,
            d.backend,
            mib(d.free.value),
            d.free.provenance.label(),
        ));
        if !d.free.source.is_empty() {
            out.push(format!("  free: {}", d.free.source));
        }
        out.push(format!(
            "  {}",
            bar(
                d.memory.model.0,
                d.memory.context.0,
                d.memory.compute.0,
                d.free.value,
                d.margin,
                bar_w
            )
        ));
        out.push(format!(
            "  model {} + context {} + compute {} MiB · margin {} · left {} MiB",
            mib(d.memory.model.0),
            mib(d.memory.context.0),
            mib(d.memory.compute.0),
            mib(d.margin),
            mib_signed(d.left_after_margin)
        ));
    }
    out.push(format!(
        "Host{} · model {} + context {} + compute {} MiB",
        p.host_capacity
            .map(|c| format!(" ({} MiB)", mib(c)))
            .unwrap_or_default(),
        mib(p.host.model.0),
        mib(p.host.context.0),
        mib(p.host.compute.0)
    ));
    out.push(String::new());
    out.push(if p.devices_fit {
        "✓ every device holds its share".to_string()
    } else {
        "✗ a device cannot hold its share".to_string()
    });
    out
}

/// The edits that apply a fitted plan as explicit flags (`-fit off -ngl N [-ts …] [-ot …]`),
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
        Edit::OverrideTensor(
            p.overrides
                .iter()
                .map(|(pat, buf)| format!("{pat}={buf}"))
                .collect(),
        ),
    ])
}

/// The screen.
pub struct DevicesScreen<'a> {
    /// The view's state.
    pub view: &'a DevicesView,
    /// The report's plan.
    pub plan: &'a Result<Plan, PlanError>,
    /// Styles.
    pub theme: Theme,
}

impl Widget for DevicesScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let w = area.width as usize;
        let all = lines(self.plan, w);
        let page = (area.height as usize).saturating_sub(2).max(1);
        let first = self.view.scroll.min(all.len().saturating_sub(page));
        let last = (first + page).min(all.len());
        let mut shown = vec![Line::from(Span::styled(
            crate::tui::format::fit("Devices · the plan llama.cpp would choose · Esc back", w),
            self.theme.heading(),
        ))];
        shown.push(Line::raw(if first > 0 {
            format!("↑ {first} more")
        } else {
            String::new()
        }));
        for l in &all[first..last] {
            shown.push(Line::raw(crate::tui::format::fit(l, w)));
        }
        if last < all.len() {
            if let Some(l) = shown.last_mut() {
                *l = Line::raw(format!("↓ {} more", all.len() - last + 1));
            }
        }
        Paragraph::new(shown).render(area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_marks_the_margin_and_fills_the_width() {
        let mib = 1u64 << 20;
        let b = bar(50 * mib, 10 * mib, 10 * mib, 100 * mib, 10 * mib, 10);
        assert_eq!(b, "MMMMMCX··|");
        assert_eq!(bar(200, 0, 0, 100, 0, 4), "MMMM");
    }

    #[test]
    fn mib_is_whole_as_llama_cpp_prints() {
        assert_eq!(mib(3 * (1 << 20) + 5), "3");
        assert_eq!(mib_signed(-(5i128 << 20)), "−5");
    }

    #[test]
    fn a_refused_plan_says_why() {
        let l = lines(&Err(PlanError("bad -ts".into())), 80);
        assert_eq!(
            l,
            vec!["llama.cpp refuses these flags: bad -ts".to_string()]
        );
    }
}
