//! Units, exact byte arithmetic, provenance and the number formats shared by every view.
//! Pure: no I/O, no other top-level module.

use std::fmt;

/// Bytes in a gigabyte (decimal, vendor figures).
pub const GB: u64 = 1_000_000_000;
/// Bytes in a gibibyte (binary, OS figures).
pub const GIB: u64 = 1 << 30;
/// Bytes in a kibibyte.
pub const KIB: u64 = 1 << 10;
/// Bytes in a mebibyte.
pub const MIB: u64 = 1 << 20;

/// Where a number comes from. Ordered from least to most certain:
/// `user < spec < derived < measured < file` (docs/bounds.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provenance {
    /// Typed or chosen by the user.
    User,
    /// A vendor's published figure (peak, advertised count).
    Spec,
    /// Computed from other inputs.
    Derived,
    /// Measured on the machine, with date and method.
    Measured,
    /// Read from an artifact file.
    File,
}

impl Provenance {
    /// All provenances, least certain first.
    pub const ALL: [Provenance; 5] = [
        Provenance::User,
        Provenance::Spec,
        Provenance::Derived,
        Provenance::Measured,
        Provenance::File,
    ];

    /// The lower-case label used in reports and profiles.
    pub fn label(self) -> &'static str {
        match self {
            Provenance::User => "user",
            Provenance::Spec => "spec",
            Provenance::Derived => "derived",
            Provenance::Measured => "measured",
            Provenance::File => "file",
        }
    }

    /// Parse a label written by `label`.
    pub fn parse(s: &str) -> Option<Provenance> {
        Provenance::ALL.into_iter().find(|p| p.label() == s)
    }

    /// The least certain of several provenances (the one a result carries).
    pub fn weakest<I: IntoIterator<Item = Provenance>>(items: I) -> Option<Provenance> {
        items.into_iter().min()
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A value with its provenance and a free-text source (document, date, method).
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    /// The figure.
    pub value: T,
    /// Where it comes from.
    pub provenance: Provenance,
    /// Human-readable citation: document, command, date, method.
    pub source: String,
}

impl<T> Sourced<T> {
    /// A figure with a provenance and a source text.
    pub fn new(value: T, provenance: Provenance, source: impl Into<String>) -> Self {
        Sourced {
            value,
            provenance,
            source: source.into(),
        }
    }
}

/// An exact byte count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Size in GB (10^9 bytes), for display only.
    pub fn gb(self) -> f64 {
        self.0 as f64 / GB as f64
    }
    /// Size in GiB (2^30 bytes), for display only.
    pub fn gib(self) -> f64 {
        self.0 as f64 / GIB as f64
    }
}

/// A bandwidth in bytes per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct BytesPerSec(pub f64);

/// A compute rate in FLOP per second (one multiply-add = 2 FLOP).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct FlopPerSec(pub f64);

/// Group the digits of an integer with commas: `19762149024` → `19,762,149,024`.
pub fn group_digits(n: u128) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Group a signed integer's digits: `-1,234`.
pub fn group_digits_signed(n: i128) -> String {
    if n < 0 {
        format!("-{}", group_digits(n.unsigned_abs()))
    } else {
        group_digits(n as u128)
    }
}

/// `28,352,083,616 bytes = 26.405 GiB` style: exact bytes, then GiB with 3 decimals.
pub fn bytes_gib(n: u64) -> String {
    format!(
        "{} bytes = {} GiB",
        group_digits(n as u128),
        grouped(Bytes(n).gib(), 3)
    )
}

/// GiB with three decimals and the unit: `18.405 GiB`.
pub fn fmt_gib(n: u64) -> String {
    format!("{} GiB", grouped(Bytes(n).gib(), 3))
}

/// GB with three decimals and the unit: `19.762 GB`.
pub fn fmt_gb(n: u64) -> String {
    format!("{} GB", grouped(Bytes(n).gb(), 3))
}

/// Signed GiB with three decimals: `-1.250 GiB`.
pub fn fmt_gib_signed(n: i128) -> String {
    format!("{} GiB", grouped(n as f64 / GIB as f64, 3))
}

/// The largest binary unit that divides the count exactly, for figures like KV/token:
/// `262144` → `256 KiB`; otherwise bytes.
pub fn exact_binary(n: u64) -> String {
    for (unit, size) in [("GiB", GIB), ("MiB", MIB), ("KiB", KIB)] {
        if n >= size && n.is_multiple_of(size) {
            return format!("{} {unit}", group_digits((n / size) as u128));
        }
    }
    format!("{} bytes", group_digits(n as u128))
}

/// A compact human size in both units: `18.405 GiB (19.762 GB)`.
pub fn fmt_both(n: u64) -> String {
    format!("{} ({})", fmt_gib(n), fmt_gb(n))
}

/// A figure scaled by the first decimal step it reaches, with at most three decimals and no
/// trailing zeros: the one scaling of bandwidths and compute rates.
fn decimal_scaled(v: f64, steps: &[(f64, &str)], base: &str) -> String {
    let (scaled, unit) = steps
        .iter()
        .find(|(size, _)| v >= *size)
        .map_or((v, base), |(size, unit)| (v / size, unit));
    format!("{} {unit}", trim_float(scaled, 3))
}

/// Bandwidth with its decimal unit: `273 GB/s`, `4.354 TB/s`, `47.55 GB/s`.
pub fn fmt_bandwidth(bw: BytesPerSec) -> String {
    decimal_scaled(bw.0, &[(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s")], "B/s")
}

/// Compute rate with its decimal unit: `989.5 TFLOP/s`.
pub fn fmt_flops(c: FlopPerSec) -> String {
    decimal_scaled(
        c.0,
        &[(1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s")],
        "FLOP/s",
    )
}

/// A float with at most `decimals` decimals and no trailing zeros: `273`, `4.354`.
pub fn trim_float(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A float with grouped thousands and `decimals` places: `524,258.405`; `∞`, and `—` for NaN.
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
    out.push_str(&group_digits(int));
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// A figure with about three significant digits and grouped thousands: `0`, `0.38`, `8`,
/// `18.4`, `524`, `2,048`, `0.004`; never a bare `0` for a figure that is not zero.
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
        trim_float(v, 1)
    } else if a >= 0.01 {
        trim_float(v, 2)
    } else {
        // Small but not zero: three significant digits.
        let digits = (-a.log10().floor()) as usize + 2;
        trim_float(v, digits.min(12))
    };
    if s == "-0" { "0".into() } else { s }
}

/// Tokens per second, the one rate format of every report, table and pane: two decimals
/// with grouped thousands (`13.81`, `1,078.57`), whole grouped numbers from 100,000
/// (`129,269`), three significant digits below 0.01 so a tiny ceiling never reads `0.00`
/// (`0.00365`), and a short scientific form beyond any input range.
pub fn fmt_rate(tps: f64) -> String {
    if !tps.is_finite() {
        return "∞".to_string();
    }
    if tps > 0.0 && tps < 0.01 {
        return compact(tps);
    }
    if tps >= 1e15 {
        // Beyond any input range: a short scientific form, never hundreds of digits.
        format!("{tps:.3e}")
    } else if tps >= 100_000.0 {
        group_digits(tps.round() as u128)
    } else {
        grouped(tps, 2)
    }
}

/// The binary unit that suits a byte count (`bytes` below a KiB), and its size.
fn binary_unit(n: u64) -> (u64, &'static str) {
    const UNITS: [(u32, &str); 5] = [
        (50, "PiB"),
        (40, "TiB"),
        (30, "GiB"),
        (20, "MiB"),
        (10, "KiB"),
    ];
    UNITS
        .iter()
        .find(|(shift, _)| n >= 1u64 << shift)
        .map_or((1, "bytes"), |(shift, name)| (1u64 << shift, *name))
}

/// Bytes in the binary unit that suits them, three decimals from KiB up: `512 bytes`,
/// `4.500 KiB`, `103.500 MiB`, `18.405 GiB`, `511.983 TiB`. Never `0.000 GiB` for a small
/// total, never six-digit GiB.
pub fn fmt_binary(n: u64) -> String {
    let (unit, name) = binary_unit(n);
    if unit == 1 {
        return format!("{} bytes", group_digits(n as u128));
    }
    format!("{} {name}", grouped(n as f64 / unit as f64, 3))
}

/// Signed bytes, as [`fmt_binary`] with a minus sign when negative: `-2.405 GiB`.
pub fn fmt_binary_signed(n: i128) -> String {
    let a = n.unsigned_abs().min(u64::MAX as u128) as u64;
    if n < 0 {
        format!("-{}", fmt_binary(a))
    } else {
        fmt_binary(a)
    }
}

/// A size exact when its exact binary unit reads short (`256 KiB`, `8 GiB`, `512 bytes`), else
/// scaled with three decimals (`103.500 MiB`, never `105,984 KiB`).
pub fn fmt_binary_short(n: u64) -> String {
    let exact = exact_binary(n);
    let figure = exact.split(' ').next().unwrap_or("");
    if figure.len() <= 3 {
        exact
    } else {
        fmt_binary(n)
    }
}

/// Exact bytes, then the size as [`fmt_binary_short`] reads it: `262,144 bytes = 256 KiB`,
/// `108,527,616 bytes = 103.500 MiB`, `512 bytes`.
pub fn bytes_and_binary(n: u64) -> String {
    if n < KIB {
        format!("{} bytes", group_digits(n as u128))
    } else {
        format!(
            "{} bytes = {}",
            group_digits(n as u128),
            fmt_binary_short(n)
        )
    }
}

/// Exact bytes, then the binary unit that suits them from MiB up (three decimals): `2,992,365,216
/// bytes = 2.787 GiB`, `3,145,728 bytes = 3.000 MiB`, `1,000 bytes`. Never six-digit GiB in a
/// headline.
pub fn bytes_scaled(n: u64) -> String {
    let exact = group_digits(n as u128);
    if n < MIB {
        return format!("{exact} bytes");
    }
    let (unit, name) = binary_unit(n);
    format!(
        "{exact} bytes = {} {name}",
        grouped(n as f64 / unit as f64, 3)
    )
}

/// Exact bytes and MiB to two decimals, as llama.cpp logs its buffers: `3,145,728 bytes =
/// 3.00 MiB`.
pub fn bytes_mib(n: u64) -> String {
    format!(
        "{} bytes = {:.2} MiB",
        group_digits(n as u128),
        n as f64 / MIB as f64
    )
}

/// Milliseconds per token with two decimals: `72.39`.
pub fn fmt_ms(ms: f64) -> String {
    if ms.is_finite() && ms.abs() >= 1e12 {
        // Beyond any input range: a short scientific form, never hundreds of digits.
        return format!("{ms:.3e}");
    }
    format!("{ms:.2}")
}

/// Tokens with grouped digits: `32,768`.
pub fn fmt_tokens(n: u64) -> String {
    group_digits(n as u128)
}

/// Errors from parsing a size or rate written with units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError(pub String);

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn split_number(s: &str) -> Result<(f64, String), UnitError> {
    let t = s.trim();
    let end = t
        .char_indices()
        .find(|(_, c)| {
            !(c.is_ascii_digit() || matches!(c, '.' | '_' | ',' | 'e' | 'E' | '+' | '-'))
        })
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    // "1e9" vs "1 EB": an 'e'/'E' followed by a letter belongs to the unit.
    let (mut num, mut unit) = (t[..end].to_string(), t[end..].trim().to_string());
    if (num.ends_with('e') || num.ends_with('E')) && !unit.is_empty() {
        let last = num.pop().unwrap_or('e');
        unit = format!("{last}{unit}");
    }
    let clean: String = num.chars().filter(|c| *c != '_' && *c != ',').collect();
    if clean.is_empty() {
        return Err(UnitError(format!("\"{s}\" has no number")));
    }
    let v: f64 = clean
        .parse()
        .map_err(|_| UnitError(format!("\"{s}\" is not a number with a unit")))?;
    if !v.is_finite() {
        return Err(UnitError(format!("\"{s}\" is not finite")));
    }
    Ok((v, unit))
}

/// Why a count (tokens, sequences, layers, rows) does not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountError {
    /// Nothing given.
    Empty,
    /// Not a number.
    NotANumber,
    /// Below zero, or not finite.
    Negative,
    /// Above `u64::MAX`.
    TooLarge,
    /// Not a whole number.
    Fraction,
}

/// A count as people write one: `32768`, `32,768`, `32_768`, `32k` (× 1,024: a 32k context
/// is 32,768 tokens), `1m` (× 1,048,576), `1e3`. The one count parser of the CLI and the
/// explorer.
pub fn parse_count(text: &str) -> Result<u64, CountError> {
    let clean: String = text
        .trim()
        .chars()
        .filter(|c| *c != ',' && *c != '_' && !c.is_whitespace())
        .collect();
    if clean.is_empty() {
        return Err(CountError::Empty);
    }
    if let Ok(v) = clean.parse::<u64>() {
        return Ok(v);
    }
    let lower = clean.to_ascii_lowercase();
    let (num, mult) = if let Some(n) = lower.strip_suffix('k') {
        (n, 1024f64)
    } else if let Some(n) = lower.strip_suffix('m') {
        (n, 1024f64 * 1024.0)
    } else {
        (lower.as_str(), 1.0)
    };
    let v: f64 = num.parse().map_err(|_| CountError::NotANumber)?;
    let v = v * mult;
    if v.is_nan() || v < 0.0 {
        return Err(CountError::Negative);
    }
    if v >= u64::MAX as f64 {
        return Err(CountError::TooLarge);
    }
    if v.fract() != 0.0 {
        return Err(CountError::Fraction);
    }
    Ok(v as u64)
}

/// Parse a size: `"48 GiB"`, `"19.762 GB"`, `"512 MiB"`, `"1234"` (bytes), `"2e9"`.
/// The result must be a whole number of bytes and fit in u64.
pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    let (v, unit) = split_number(s)?;
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" | "byte" | "bytes" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "kib" | "k" => KIB as f64,
        "mib" | "m" => MIB as f64,
        "gib" | "g" => GIB as f64,
        "tib" | "t" => (1u64 << 40) as f64,
        _ => {
            return Err(UnitError(format!(
                "\"{s}\": unknown size unit \"{unit}\" (use bytes, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            )));
        }
    };
    let bytes = v * mult;
    if bytes < 0.0 {
        return Err(UnitError(format!("\"{s}\" is negative")));
    }
    if bytes >= u64::MAX as f64 {
        return Err(UnitError(format!("\"{s}\" is too large")));
    }
    let rounded = bytes.round();
    if (bytes - rounded).abs() > 1e-6 * bytes.max(1.0) {
        return Err(UnitError(format!("\"{s}\" is not a whole number of bytes")));
    }
    Ok(rounded as u64)
}

/// Parse a bandwidth: `"273 GB/s"`, `"4.8 TB/s"`, `"273e9"` (bytes/s), `"64 GiB/s"`.
pub fn parse_bandwidth(s: &str) -> Result<BytesPerSec, UnitError> {
    let (v, unit) = split_number(s)?;
    let u = unit.to_ascii_lowercase();
    let base = u
        .strip_suffix("/s")
        .or_else(|| u.strip_suffix("ps"))
        .unwrap_or(&u);
    let mult: f64 = match base.trim() {
        "" | "b" | "bytes" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "kib" => KIB as f64,
        "mib" => MIB as f64,
        "gib" => GIB as f64,
        "tib" => (1u64 << 40) as f64,
        _ => {
            return Err(UnitError(format!(
                "\"{s}\": unknown bandwidth unit \"{unit}\" (use B/s, GB/s, TB/s, GiB/s)"
            )));
        }
    };
    let bw = v * mult;
    if bw <= 0.0 {
        return Err(UnitError(format!("\"{s}\": a bandwidth must be positive")));
    }
    check_bandwidth(BytesPerSec(bw)).map_err(|e| UnitError(format!("\"{s}\": {e}")))
}

/// Parse a compute rate: `"989.5 TFLOP/s"`, `"165 TFLOPS"`, `"1e15"`.
pub fn parse_flops(s: &str) -> Result<FlopPerSec, UnitError> {
    let (v, unit) = split_number(s)?;
    let u = unit.to_ascii_lowercase();
    let base = u
        .strip_suffix("flop/s")
        .or_else(|| u.strip_suffix("flops"))
        .unwrap_or(&u);
    let mult: f64 = match base.trim() {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        "p" => 1e15,
        _ => {
            return Err(UnitError(format!(
                "\"{s}\": unknown compute unit \"{unit}\" (use FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s)"
            )));
        }
    };
    let c = v * mult;
    if c <= 0.0 {
        return Err(UnitError(format!(
            "\"{s}\": a compute rate must be positive"
        )));
    }
    check_flops(FlopPerSec(c)).map_err(|e| UnitError(format!("\"{s}\": {e}")))
}

/// The lowest bandwidth taken as an input, bytes/s (1 MB/s: below any memory or disk).
pub const MIN_BANDWIDTH: f64 = 1e6;
/// The highest bandwidth taken as an input, bytes/s (100 TB/s: about 20× the fastest HBM
/// stack of 2025, the 4.8 TB/s of an H200 or the 8 TB/s of a B200).
pub const MAX_BANDWIDTH: f64 = 1e14;
/// The lowest compute rate taken as an input, FLOP/s (1 MFLOP/s).
pub const MIN_FLOPS: f64 = 1e6;
/// The highest compute rate taken as an input, FLOP/s (1 EFLOP/s: about 50× the densest
/// low-precision figure of a single 2025 accelerator).
pub const MAX_FLOPS: f64 = 1e18;
/// The smallest memory tier capacity taken as an input, bytes (1 MiB).
pub const MIN_CAPACITY: u64 = MIB;
/// The largest memory tier capacity taken as an input, bytes (1 PiB).
pub const MAX_CAPACITY: u64 = 1 << 50;
/// The highest decode rate a claim may state, tokens/s (10^9: far above any ceiling this
/// tool can compute from the bandwidth range).
pub const MAX_CLAIM_TOKENS_PER_SECOND: f64 = 1e9;
/// The lowest decode rate a claim may state, tokens/s (one token in about 11.6 days).
pub const MIN_CLAIM_TOKENS_PER_SECOND: f64 = 1e-6;

/// A physical input outside the range llmbound takes (typed; `Display` words it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RangeError {
    /// Not a finite number.
    NotFinite,
    /// Below the lowest plausible value.
    TooSmall {
        /// What the figure is.
        quantity: Quantity,
    },
    /// Above the highest plausible value.
    TooLarge {
        /// What the figure is.
        quantity: Quantity,
    },
}

/// A physical quantity with a plausible range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A memory bandwidth, bytes/s.
    Bandwidth,
    /// A compute rate, FLOP/s.
    ComputeRate,
    /// A memory capacity, bytes.
    Capacity,
    /// A decode rate, tokens/s.
    TokensPerSecond,
}

impl Quantity {
    /// Name and range in words.
    pub fn describe(self) -> (&'static str, String) {
        match self {
            Quantity::Bandwidth => (
                "a bandwidth",
                format!(
                    "between {} and {}",
                    fmt_bandwidth(BytesPerSec(MIN_BANDWIDTH)),
                    fmt_bandwidth(BytesPerSec(MAX_BANDWIDTH))
                ),
            ),
            Quantity::ComputeRate => (
                "a compute rate",
                "between 1 MFLOP/s and 1,000 PFLOP/s".to_string(),
            ),
            Quantity::Capacity => (
                "a memory capacity",
                format!(
                    "between {} and {}",
                    exact_binary(MIN_CAPACITY),
                    exact_binary(MAX_CAPACITY)
                ),
            ),
            Quantity::TokensPerSecond => (
                "a decode rate",
                "between 0.000001 and 1,000,000,000 tokens/s".to_string(),
            ),
        }
    }
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RangeError::NotFinite => f.write_str("not a finite number"),
            RangeError::TooSmall { quantity } => {
                let (name, range) = quantity.describe();
                write!(f, "below the plausible range ({name} must be {range})")
            }
            RangeError::TooLarge { quantity } => {
                let (name, range) = quantity.describe();
                write!(f, "above the plausible range ({name} must be {range})")
            }
        }
    }
}

fn in_range(v: f64, lo: f64, hi: f64, quantity: Quantity) -> Result<f64, RangeError> {
    if v.is_nan() {
        Err(RangeError::NotFinite)
    } else if v < lo {
        Err(RangeError::TooSmall { quantity })
    } else if v > hi {
        // +∞ from an overflowing product lands here: too large, not "not positive".
        Err(RangeError::TooLarge { quantity })
    } else {
        Ok(v)
    }
}

/// A bandwidth within [`MIN_BANDWIDTH`, `MAX_BANDWIDTH`].
pub fn check_bandwidth(bw: BytesPerSec) -> Result<BytesPerSec, RangeError> {
    in_range(bw.0, MIN_BANDWIDTH, MAX_BANDWIDTH, Quantity::Bandwidth).map(BytesPerSec)
}

/// A compute rate within [`MIN_FLOPS`, `MAX_FLOPS`].
pub fn check_flops(c: FlopPerSec) -> Result<FlopPerSec, RangeError> {
    in_range(c.0, MIN_FLOPS, MAX_FLOPS, Quantity::ComputeRate).map(FlopPerSec)
}

/// A tier capacity within [`MIN_CAPACITY`, `MAX_CAPACITY`].
pub fn check_capacity(bytes: u64) -> Result<u64, RangeError> {
    if bytes < MIN_CAPACITY {
        Err(RangeError::TooSmall {
            quantity: Quantity::Capacity,
        })
    } else if bytes > MAX_CAPACITY {
        Err(RangeError::TooLarge {
            quantity: Quantity::Capacity,
        })
    } else {
        Ok(bytes)
    }
}

/// A claimed decode rate within [`MIN_CLAIM_TOKENS_PER_SECOND`, `MAX_CLAIM_TOKENS_PER_SECOND`].
pub fn check_tokens_per_second(tps: f64) -> Result<f64, RangeError> {
    if !tps.is_finite() {
        return Err(RangeError::NotFinite);
    }
    in_range(
        tps,
        MIN_CLAIM_TOKENS_PER_SECOND,
        MAX_CLAIM_TOKENS_PER_SECOND,
        Quantity::TokensPerSecond,
    )
}

/// Bits per weight (or per parameter): 8 × bytes / elements; `None` without elements. The
/// figure the inventories, the artifact pane and the reports print for an encoding or a file.
pub fn bits_per_weight(bytes: u64, elements: u64) -> Option<f64> {
    (elements > 0).then(|| 8.0 * bytes as f64 / elements as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rate_format_groups_thousands_and_keeps_tiny_figures() {
        assert_eq!(fmt_rate(13.814), "13.81");
        assert_eq!(fmt_rate(1107.11), "1,107.11");
        assert_eq!(fmt_rate(3000.0), "3,000.00");
        assert_eq!(fmt_rate(2352.27), "2,352.27");
        assert_eq!(fmt_rate(129_269.4), "129,269");
        assert_eq!(fmt_rate(0.003651), "0.00365");
        assert_eq!(fmt_rate(0.0000913), "0.0000913");
        assert_eq!(fmt_rate(0.0), "0.00");
        assert_eq!(fmt_rate(f64::INFINITY), "∞");
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
    fn sizes_read_in_a_unit_that_suits_them() {
        assert_eq!(fmt_binary(0), "0 bytes");
        assert_eq!(fmt_binary(1_000), "1,000 bytes");
        assert_eq!(fmt_binary(2_560), "2.500 KiB");
        assert_eq!(fmt_binary(105_984 * KIB), "103.500 MiB");
        assert_eq!(fmt_binary(19_762_149_024), "18.405 GiB");
        assert_eq!(fmt_binary_signed(-(3 * GIB as i128)), "-3.000 GiB");
        // 524,288 GiB = 512 TiB, not "524288.000 GiB".
        assert_eq!(fmt_binary(524_288 * GIB), "512.000 TiB");
        assert_eq!(fmt_binary(u64::MAX), "16,384.000 PiB");
        assert_eq!(fmt_binary_signed(-562_918_175_962_784), "-511.971 TiB");
        // Exact when the exact unit reads short, else scaled: never 105,984 KiB.
        assert_eq!(fmt_binary_short(256 * KIB), "256 KiB");
        assert_eq!(fmt_binary_short(8 * GIB), "8 GiB");
        assert_eq!(fmt_binary_short(105_984 * KIB), "103.500 MiB");
        assert_eq!(
            bytes_and_binary(105_984 * KIB),
            "108,527,616 bytes = 103.500 MiB"
        );
        assert_eq!(bytes_and_binary(262_144), "262,144 bytes = 256 KiB");
        assert_eq!(bytes_and_binary(512), "512 bytes");
        assert_eq!(bytes_scaled(3 << 20), "3,145,728 bytes = 3.000 MiB");
        assert_eq!(bytes_scaled(1000), "1,000 bytes");
        assert_eq!(bytes_mib(3 << 20), "3,145,728 bytes = 3.00 MiB");
    }

    #[test]
    fn provenance_order_is_spec_order() {
        use Provenance::*;
        assert!(User < Spec && Spec < Derived && Derived < Measured && Measured < File);
        assert_eq!(Provenance::weakest([File, Spec, Measured]), Some(Spec));
    }

    #[test]
    fn digits_group() {
        assert_eq!(group_digits(19_762_149_024), "19,762,149,024");
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits_signed(-1234), "-1,234");
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("48 GiB").unwrap(), 51_539_607_552);
        assert_eq!(parse_bytes("19762149024").unwrap(), 19_762_149_024);
        assert_eq!(parse_bytes("2e9").unwrap(), 2_000_000_000);
        assert_eq!(parse_bytes("1.5 KiB").unwrap(), 1536);
        assert_eq!(parse_bytes("0").unwrap(), 0);
        assert!(parse_bytes("-1 GB").is_err());
        assert!(parse_bytes("12 parsecs").is_err());
        assert!(parse_bytes("1e40").is_err());
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("0.5").is_err());
    }

    #[test]
    fn rates_parse() {
        assert_eq!(parse_bandwidth("273 GB/s").unwrap().0, 273e9);
        assert_eq!(parse_bandwidth("273e9").unwrap().0, 273e9);
        assert_eq!(parse_bandwidth("4.8 TB/s").unwrap().0, 4.8e12);
        assert!(parse_bandwidth("0 GB/s").is_err());
        assert!(parse_bandwidth("5 furlongs").is_err());
        assert_eq!(parse_flops("989.5 TFLOP/s").unwrap().0, 989.5e12);
        assert_eq!(parse_flops("1e15").unwrap().0, 1e15);
    }

    #[test]
    fn physical_ranges() {
        let e = parse_bandwidth("1e-300 GB/s").unwrap_err().0;
        assert!(e.contains("below the plausible range"), "{e}");
        let e = parse_bandwidth("1e308 GB/s").unwrap_err().0;
        assert!(e.contains("above the plausible range"), "{e}");
        assert!(parse_bandwidth("1 MB/s").is_ok() && parse_bandwidth("100 TB/s").is_ok());
        assert!(parse_bandwidth("0.99 MB/s").is_err() && parse_bandwidth("101 TB/s").is_err());
        assert!(
            parse_flops("1e30")
                .unwrap_err()
                .0
                .contains("above the plausible range")
        );
        assert!(check_capacity(MIB).is_ok() && check_capacity(MIB - 1).is_err());
        assert!(check_capacity(1 << 50).is_ok() && check_capacity((1 << 50) + 1).is_err());
        assert!(check_tokens_per_second(1e9).is_ok());
        assert!(check_tokens_per_second(1e300).is_err());
        assert_eq!(
            check_tokens_per_second(f64::NAN),
            Err(RangeError::NotFinite)
        );
        // Never hundreds of digits.
        assert_eq!(fmt_rate(1e300), "1.000e300");
        assert_eq!(fmt_ms(1e300), "1.000e300");
        assert_eq!(fmt_rate(123_456.0), "123,456");
    }

    #[test]
    fn formats() {
        assert_eq!(exact_binary(262_144), "256 KiB");
        assert_eq!(exact_binary(8_589_934_592), "8 GiB");
        assert_eq!(fmt_gib(19_762_149_024), "18.405 GiB");
        assert_eq!(fmt_bandwidth(BytesPerSec(273e9)), "273 GB/s");
        assert_eq!(fmt_bandwidth(BytesPerSec(4.354e12)), "4.354 TB/s");
    }
}
