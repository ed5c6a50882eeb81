//! The explorer's number formatter: thousands separators, binary units that scale with the
//! size, token counts short enough for a column, rates and times that keep their precision at
//! both ends of the range. Exact byte counts stay in `core::units` (`group_digits`,
//! `exact_binary`), shared with the reports; this module is for the figures that must fit a
//! column or a chart label, and the cuts (`fit`, `keep_tail`) that make text fit one. Pure:
//! strings in, strings out.

use crate::core::units::{self, GIB, KIB, MIB};

const TIB: u64 = 1024 * GIB;
const PIB: u64 = 1024 * TIB;

/// A float with grouped thousands and `decimals` places: `524,258.405`.
pub fn grouped(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "—".into()
        } else {
            "∞".into()
        };
    }
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s.as_str(), None),
    };
    let int: u128 = int.parse().unwrap_or(0);
    let mut out = String::new();
    if v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.push('-');
    }
    out.push_str(&units::group_digits(int));
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// Bytes in the binary unit that suits them, three decimals from MiB up: `512 bytes`,
/// `4.500 KiB`, `103.500 MiB`, `18.405 GiB`, `511.983 TiB`. Never `0.000 GiB` for a small
/// total, never six-digit GiB.
pub fn bytes(n: u64) -> String {
    let (unit, name) = unit_of(n);
    if unit == 1 {
        return format!("{} bytes", units::group_digits(n as u128));
    }
    format!("{} {name}", grouped(n as f64 / unit as f64, 3))
}

/// Signed bytes, as [`bytes`] with a minus sign when negative: `-2.405 GiB`.
pub fn bytes_signed(n: i128) -> String {
    let a = n.unsigned_abs().min(u64::MAX as u128) as u64;
    if n < 0 {
        format!("-{}", bytes(a))
    } else {
        bytes(a)
    }
}

fn unit_of(n: u64) -> (u64, &'static str) {
    if n >= PIB {
        (PIB, "PiB")
    } else if n >= TIB {
        (TIB, "TiB")
    } else if n >= GIB {
        (GIB, "GiB")
    } else if n >= MIB {
        (MIB, "MiB")
    } else if n >= KIB {
        (KIB, "KiB")
    } else {
        (1, "bytes")
    }
}

/// Several byte figures in one shared unit, chosen so the largest reads under 10,000 (GiB at
/// least), each as [`compact`]: `W 18.4 C 8 X 0.38 / 48 GiB`, `W 0.02 C 512 / 0.05 TiB`.
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
        .map(|&b| compact(b as f64 / unit as f64))
        .collect();
    (out, name)
}

/// A figure with about three significant digits and grouped thousands: `0`, `0.38`, `8`,
/// `18.4`, `524`, `2,048`, `0.004`.
pub fn compact(v: f64) -> String {
    if !v.is_finite() {
        return grouped(v, 0);
    }
    let a = v.abs();
    let s = if a == 0.0 {
        "0".to_string()
    } else if a >= 100.0 {
        grouped(v, 0)
    } else if a >= 10.0 {
        units::trim_float(v, 1)
    } else if a >= 0.01 {
        units::trim_float(v, 2)
    } else {
        // Small but not zero: three significant digits, never a bare 0.
        let digits = (-a.log10().floor()) as usize + 2;
        units::trim_float(v, digits.min(12))
    };
    if s == "-0" { "0".into() } else { s }
}

/// Tokens/s for a column: two decimals with grouped thousands (`4,314.28`), whole numbers
/// from 100,000 (as `units::fmt_rate`), and three significant digits below 0.01 so a tiny
/// ceiling never reads `0.00`.
pub fn rate(tps: f64) -> String {
    if tps.is_finite() && tps > 0.0 && tps < 0.01 {
        return compact(tps);
    }
    if tps.is_finite() && (1_000.0..100_000.0).contains(&tps.abs()) {
        return grouped(tps, 2);
    }
    units::fmt_rate(tps)
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
    fn bytes_scale_with_the_size() {
        assert_eq!(bytes(0), "0 bytes");
        assert_eq!(bytes(1_000), "1,000 bytes");
        assert_eq!(bytes(2_560), "2.500 KiB");
        assert_eq!(bytes(105_984 * 1024), "103.500 MiB");
        assert_eq!(bytes(19_762_149_024), "18.405 GiB");
        // 524,288 GiB = 512 TiB, not "524288.000 GiB".
        assert_eq!(bytes(524_288 * GIB), "512.000 TiB");
        assert_eq!(bytes(u64::MAX), "16,384.000 PiB");
        assert_eq!(bytes_signed(-562_918_175_962_784), "-511.971 TiB");
    }

    #[test]
    fn grouped_floats() {
        assert_eq!(grouped(524_258.405, 3), "524,258.405");
        assert_eq!(grouped(-1234.5, 1), "-1,234.5");
        assert_eq!(grouped(-0.0001, 2), "0.00");
        assert_eq!(grouped(f64::INFINITY, 2), "∞");
    }

    #[test]
    fn compact_figures_never_read_zero_when_they_are_not() {
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(18.405), "18.4");
        assert_eq!(compact(8.0), "8");
        assert_eq!(compact(0.3799), "0.38");
        assert_eq!(compact(524_288.0), "524,288");
        assert_eq!(compact(0.000_234), "0.000234");
        assert_ne!(compact(1e-9), "0");
    }

    #[test]
    fn one_unit_for_a_bar() {
        let (f, u) = bytes_in_one_unit(&[19_762_149_024, 8 * GIB, 48 * GIB]);
        assert_eq!((f.join(" "), u), ("18.4 8 48".into(), "GiB"));
        let (f, u) = bytes_in_one_unit(&[19_762_149_024, 524_288 * GIB, 48 * GIB]);
        assert_eq!((f.join(" "), u), ("0.02 512 0.05".into(), "TiB"));
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
