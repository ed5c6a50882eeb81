//! The explorer's column and label formats: token counts short enough for a column, chart
//! axis labels, several figures in one shared unit, and the cuts (`fit`, `keep_tail`) that make
//! text fit one, and word wrapping (`wrap_words`). Bytes, rates, grouped and compact figures are `core::units`' one formatter
//! set (re-exported here), shared with the reports. Pure: strings in, strings out.

use crate::core::units::{self, GIB};

const TIB: u64 = 1024 * GIB;
const PIB: u64 = 1024 * TIB;

/// The shared number formats, under the names the panes use: grouped floats, bytes that
/// scale, compact figures and rates come from `core::units`, never a copy of their own.
pub use units::{
    compact, fmt_binary as bytes, fmt_binary_short as bytes_short,
    fmt_binary_signed as bytes_signed, fmt_rate as rate, grouped,
};

/// Several byte figures in one shared unit, chosen so the largest reads under 10,000 (GiB at
/// least), each to three significant digits (one precision rule for every bar's row):
/// `W 18.4 C 8.00 X 0.380 / 48.0 GiB`, `W 0.0200 C 512 / 0.0500 TiB`.
pub fn bytes_in_one_unit(figures: &[u64]) -> (Vec<String>, &'static str) {
    let max = figures.iter().copied().max().unwrap_or(0);
    let (unit, name) = if max >= 10_000 * TIB {
        (PIB, "PiB")
    } else if max >= 10_000 * GIB {
        (TIB, "TiB")
    } else {
        (GIB, "GiB")
    };
    let out = figures
        .iter()
        .map(|&b| units::significant(b as f64 / unit as f64, 3))
        .collect();
    (out, name)
}

/// Milliseconds for a column: two decimals, grouped whole milliseconds from 100,000 up:
/// `72.39`, `2,062,160`.
pub fn ms(ms: f64) -> String {
    if ms.is_finite() && ms.abs() >= 100_000.0 && ms.abs() < 1e15 {
        return grouped(ms, 0);
    }
    units::fmt_ms(ms)
}

/// A token count short enough for a label column: grouped below a million (`32,768`,
/// `119,296`), then in binary multiples when exact (`2Gi`, `512Mi`), else three significant
/// digits with an SI suffix (`2.15G`, `12.5M`).
pub fn tokens_short(n: u64) -> String {
    if n < 1_000_000 {
        return units::group_digits(n as u128);
    }
    for (m, s) in [(1u64 << 40, "Ti"), (1 << 30, "Gi"), (1 << 20, "Mi")] {
        if n >= m && n.is_multiple_of(m) {
            return format!("{}{s}", units::group_digits((n / m) as u128));
        }
    }
    let (d, s) = if n >= 1_000_000_000_000 {
        (1e12, "T")
    } else if n >= 1_000_000_000 {
        (1e9, "G")
    } else {
        (1e6, "M")
    };
    let x = n as f64 / d;
    let dec = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    format!("{}{s}", units::trim_float(x, dec))
}

/// A chart's token-axis label: `0`, `512`, `16k`, `32k`, `1M`, `2G` (binary multiples when
/// exact, as context lengths are), else SI with one decimal.
pub fn tokens_axis(n: f64) -> String {
    if !n.is_finite() || n < 0.0 {
        return "—".into();
    }
    let u = n.round() as u64;
    for (m, s) in [(1u64 << 30, "G"), (1 << 20, "M"), (1 << 10, "k")] {
        if u >= m && u.is_multiple_of(m) {
            return format!("{}{s}", u / m);
        }
    }
    crate::tui::plot::si(n)
}

/// Cut text to `width` characters, ending in `…` when cut.
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// Words laid greedily into lines of at most `width` characters, one space between words; a
/// word longer than the width stands alone on its line (cut it first with [`fit`] to bound
/// it). No words, no lines.
pub fn wrap_words<S: AsRef<str>>(words: impl IntoIterator<Item = S>, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for w in words {
        let w = w.as_ref();
        let n = line.chars().count();
        if n > 0 && n + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `s` in at most `width` columns: whole when it fits, else "…" and its end.
pub fn keep_tail(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width || width == 0 {
        return s.to_string();
    }
    let tail: String = s.chars().skip(n - (width - 1)).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_unit_for_a_bar() {
        let (f, u) = bytes_in_one_unit(&[19_762_149_024, 8 * GIB, 48 * GIB]);
        assert_eq!((f.join(" "), u), ("18.4 8.00 48.0".into(), "GiB"));
        let (f, u) = bytes_in_one_unit(&[19_762_149_024, 524_288 * GIB, 48 * GIB]);
        assert_eq!((f.join(" "), u), ("0.0180 512 0.0469".into(), "TiB"));
    }

    #[test]
    fn rates_and_times_fit_a_column() {
        assert_eq!(rate(13.81), "13.81");
        assert_eq!(rate(0.000_485), "0.000485");
        assert_eq!(rate(4_314.28), "4,314.28");
        assert_eq!(rate(220_330.0), "220,330");
        assert_eq!(ms(72.39), "72.39");
        assert_eq!(ms(2_062_160.13), "2,062,160");
        assert!(ms(2_062_160.13).chars().count() <= 10);
    }

    #[test]
    fn tokens_fit_a_label() {
        assert_eq!(tokens_short(32_768), "32,768");
        assert_eq!(tokens_short(1 << 31), "2Gi");
        assert_eq!(tokens_short(12_512_000), "12.5M");
        assert_eq!(tokens_short(4_294_967_295), "4.29G");
        assert_eq!(tokens_axis(32_768.0), "32k");
        assert_eq!(tokens_axis(1_073_741_824.0), "1G");
        assert_eq!(tokens_axis(0.0), "0");
    }
}
