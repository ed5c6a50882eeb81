//! Chart coordinates for the Bounds pane, computed once per recompute from the report (the
//! decode curve is `report.decode.curve` as is; the roofline is drawn in log10 coordinates).
//! Pure: no terminal, no I/O.

use crate::core::Report;
use crate::core::tiers::MemoryItem;

/// The decode ceiling over context length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CurvePlot {
    /// (context tokens, file-mode tokens/s).
    pub file: Vec<(f64, f64)>,
    /// (context tokens, inventory-mode tokens/s), empty without an inventory.
    pub inventory: Vec<(f64, f64)>,
    /// The scenario's point (N, full-context ceiling).
    pub current: Vec<(f64, f64)>,
    /// X axis bounds.
    pub x_bounds: [f64; 2],
    /// Y axis bounds.
    pub y_bounds: [f64; 2],
    /// X axis labels.
    pub x_labels: Vec<String>,
    /// Y axis labels.
    pub y_labels: Vec<String>,
}

/// The roofline, log10 of FLOP/byte against log10 of FLOP/s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RooflinePlot {
    /// The bandwidth slope (up to the ridge when there is a compute roof).
    pub slope: Vec<(f64, f64)>,
    /// The compute roof, when the profile has a rate for the path.
    pub roof: Vec<(f64, f64)>,
    /// The decode point.
    pub decode: Vec<(f64, f64)>,
    /// The prefill point (S rows).
    pub prefill: Vec<(f64, f64)>,
    /// X bounds (log10).
    pub x_bounds: [f64; 2],
    /// Y bounds (log10).
    pub y_bounds: [f64; 2],
    /// X labels.
    pub x_labels: Vec<String>,
    /// Y labels.
    pub y_labels: Vec<String>,
}

/// One tier's memory bar: the runtime's memory itemised (model, allocated cache, output
/// buffer, compute buffer, A) and free space, as fractions of the bar.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TierBar {
    /// Tier name.
    pub name: String,
    /// Capacity M_i, bytes.
    pub capacity_bytes: u64,
    /// The items in `MemoryItem::ALL` order (model, cache, output, compute, A), bytes.
    pub items: [u64; 5],
    /// Capacity − Σ items, bytes (negative: short).
    pub free_bytes: i128,
    /// Fits.
    pub fits: bool,
    /// Fractions of the bar: the five items, then free; the bar spans max(M, Σ items).
    pub fractions: [f64; 6],
    /// Where the capacity ends on the bar (1 when it fits).
    pub capacity_fraction: f64,
}

/// Both charts and the capacity bars.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plots {
    /// Decode ceiling over context.
    pub curve: CurvePlot,
    /// Roofline.
    pub roofline: RooflinePlot,
    /// One bar per used tier.
    pub bars: Vec<TierBar>,
}

fn bars(r: &Report) -> Vec<TierBar> {
    r.tiers
        .iter()
        .filter(|t| t.used)
        .map(|t| {
            let m = &t.memory;
            let items = MemoryItem::ALL.map(|i| m.bytes(i));
            let used = m.total_bytes as f64;
            let span = (m.capacity_bytes as f64).max(used).max(1.0);
            let free = (m.capacity_bytes as f64 - used).max(0.0);
            let mut fractions = [0.0; 6];
            for (f, b) in fractions.iter_mut().zip(items) {
                *f = b as f64 / span;
            }
            fractions[5] = free / span;
            TierBar {
                name: t.name.clone(),
                capacity_bytes: m.capacity_bytes,
                items,
                free_bytes: m.free_bytes,
                fits: m.fits,
                fractions,
                capacity_fraction: m.capacity_bytes as f64 / span,
            }
        })
        .collect()
}

/// A compact SI number for axis labels: `273G`, `1.5T`, `64k`, `0.1`.
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e15 {
        (v / 1e15, "P")
    } else if a >= 1e12 {
        (v / 1e12, "T")
    } else if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x.abs() >= 10.0 || x.fract().abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    };
    format!("{s}{suffix}")
}

fn tokens_label(n: f64) -> String {
    crate::tui::format::tokens_axis(n)
}

impl Plots {
    /// Chart coordinates of a report.
    pub fn from_report(r: &Report) -> Plots {
        Plots {
            curve: curve(r),
            roofline: roofline(r),
            bars: bars(r),
        }
    }
}

fn curve(r: &Report) -> CurvePlot {
    let c = &r.decode.curve;
    let file: Vec<(f64, f64)> = c
        .iter()
        .filter(|p| p.file_tokens_per_second.is_finite())
        .map(|p| (p.context_tokens as f64, p.file_tokens_per_second))
        .collect();
    let inventory: Vec<(f64, f64)> = c
        .iter()
        .filter_map(|p| {
            p.inventory_tokens_per_second
                .map(|t| (p.context_tokens as f64, t))
        })
        .filter(|(_, t)| t.is_finite())
        .collect();
    let n = r.inputs.cache.context as f64;
    let full = r.decode.full_context.tokens_per_second;
    let current = if full.is_finite() {
        vec![(n, full)]
    } else {
        vec![]
    };
    let x_max = file.iter().map(|p| p.0).fold(1.0f64, f64::max);
    let y_max = file
        .iter()
        .chain(inventory.iter())
        .map(|p| p.1)
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.1;
    CurvePlot {
        x_labels: vec![
            "0".into(),
            tokens_label((x_max / 2.0).round()),
            tokens_label(x_max),
        ],
        y_labels: vec!["0".into(), si(y_max / 2.0), si(y_max)],
        file,
        inventory,
        current,
        x_bounds: [0.0, x_max],
        y_bounds: [0.0, y_max],
    }
}

fn roofline(r: &Report) -> RooflinePlot {
    let rl = &r.roofline;
    // Every rate comes from core's roofline (attainable = min(B × I, C), the ridge C / B); the
    // chart only places them on log axes. A zero rate is drawn at 1 FLOP/s so logs stay finite.
    let y_of = |i: f64| rl.attainable_flops_per_second(i).max(1.0).log10();
    let pos = |x: f64| x.is_finite() && x > 0.0;
    let mut xs: Vec<f64> = [
        Some(rl.decode_intensity),
        Some(rl.prefill_intensity),
        rl.ridge_intensity,
    ]
    .into_iter()
    .flatten()
    .filter(|x| pos(*x))
    .collect();
    if xs.is_empty() {
        xs.push(1.0);
    }
    let x_lo = xs
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .log10()
        .floor()
        - 0.5;
    let x_hi = xs.iter().copied().fold(0.0f64, f64::max).log10().ceil() + 0.5;
    let x_lo10 = 10f64.powf(x_lo);
    let x_hi10 = 10f64.powf(x_hi);
    let (slope, roof) = match rl.ridge_intensity.filter(|r| pos(*r)) {
        Some(ridge) => {
            let ridge = ridge.clamp(x_lo10, x_hi10);
            (
                vec![(x_lo, y_of(x_lo10)), (ridge.log10(), y_of(ridge))],
                vec![(ridge.log10(), y_of(ridge)), (x_hi, y_of(x_hi10))],
            )
        }
        None => (vec![(x_lo, y_of(x_lo10)), (x_hi, y_of(x_hi10))], vec![]),
    };
    let point = |i: f64| {
        if pos(i) {
            vec![(i.log10(), y_of(i))]
        } else {
            vec![]
        }
    };
    let y_lo = y_of(x_lo10).floor();
    let y_hi = y_of(x_hi10).max(y_of(x_lo10)).ceil() + 0.2;
    RooflinePlot {
        slope,
        roof,
        decode: point(rl.decode_intensity),
        prefill: point(rl.prefill_intensity),
        x_labels: vec![si(x_lo10), si(10f64.powf((x_lo + x_hi) / 2.0)), si(x_hi10)],
        y_labels: vec![
            si(10f64.powf(y_lo)),
            si(10f64.powf((y_lo + y_hi) / 2.0)),
            si(10f64.powf(y_hi)),
        ],
        x_bounds: [x_lo, x_hi],
        y_bounds: [y_lo, y_hi],
    }
}
