//! Typed values of the explorer's rows: the parsers that turn text into a setting's value,
//! the text a prompt opens on (read back to the same value), the step rules' arithmetic on
//! counts, and the one-line messages for text that cannot be used. Pure.

use crate::core::cache::CacheType;
use crate::core::edit::EditError;
use crate::core::scenario::{MAX_CONTEXT, Scenario};
use crate::core::units::{self, GIB};

/// A typed value that cannot be used; every message is worded here, one line naming the
/// field and the text.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldError {
    /// Nothing typed where a number is needed.
    Empty(&'static str),
    /// Not a number.
    NotANumber(&'static str, String),
    /// Negative or not finite.
    Negative(&'static str, String),
    /// Beyond the field's range.
    TooLarge(&'static str, String),
    /// A fraction where a whole number is needed.
    Fraction(&'static str, String),
    /// Not on or off.
    NotOnOff(&'static str, String),
    /// Not a cache type llama.cpp knows.
    CacheType(&'static str, String),
    /// A size, bandwidth or rate that does not parse (the unit parser's reason).
    Unit(&'static str, String),
    /// An empty compute path.
    NoComputePath,
    /// Experts not typed as "used of total".
    Experts(String),
    /// A parameter count that does not parse.
    Parameters(String),
    /// A parameter count out of any plausible range.
    ParametersImplausible(String),
    /// The value parses but the scenario refuses it (the one edit function's reason).
    Refused(&'static str, EditError),
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldError::Empty(w) => write!(f, "{w}: type a number"),
            FieldError::NotANumber(w, t) => write!(f, "{w}: \"{t}\" is not a number"),
            FieldError::Negative(w, t) => write!(f, "{w}: \"{t}\" must be a positive number"),
            FieldError::TooLarge(w, t) => write!(f, "{w}: \"{t}\" is too large"),
            FieldError::Fraction(w, t) => write!(f, "{w}: \"{t}\" must be a whole number"),
            FieldError::NotOnOff(w, t) => write!(f, "{w}: \"{t}\" is not on or off"),
            FieldError::CacheType(w, t) => write!(
                f,
                "{w}: unknown cache type \"{t}\" ({})",
                CacheType::names_list()
            ),
            FieldError::Unit(w, m) => write!(f, "{w}: {m}"),
            FieldError::NoComputePath => f.write_str("compute path: type a path name (e.g. fp16)"),
            FieldError::Experts(t) => {
                write!(f, "experts: type \"8 of 128\" (used of total), not \"{t}\"")
            }
            FieldError::Parameters(t) => write!(
                f,
                "parameters: \"{t}\" is not a number (e.g. 32.8e9 or 32.8B)"
            ),
            FieldError::ParametersImplausible(t) => {
                write!(f, "parameters: \"{t}\" is not a plausible parameter count")
            }
            FieldError::Refused(w, e) => write!(f, "{w}: {e}"),
        }
    }
}

impl std::error::Error for FieldError {}

pub(super) fn parse_count(text: &str, what: &'static str) -> Result<u64, FieldError> {
    let t = text.trim();
    units::parse_count(t).map_err(|e| match e {
        units::CountError::Empty => FieldError::Empty(what),
        units::CountError::NotANumber => FieldError::NotANumber(what, t.into()),
        units::CountError::Negative => FieldError::Negative(what, t.into()),
        units::CountError::TooLarge => FieldError::TooLarge(what, t.into()),
        units::CountError::Fraction => FieldError::Fraction(what, t.into()),
    })
}

/// `--tensor-split` as llama.cpp takes it: proportions per accelerator, `,` or `/` between;
/// "auto" (or nothing) splits by memory, as llama.cpp does without `-ts`.
pub(super) fn parse_split(text: &str, what: &'static str) -> Result<Option<Vec<f64>>, FieldError> {
    if text.trim().is_empty() || text.trim().eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    let parts: Vec<&str> = text.split([',', '/']).map(str::trim).collect();
    let mut v = Vec::with_capacity(parts.len());
    for p in parts {
        let x: f64 = p
            .parse()
            .map_err(|_| FieldError::NotANumber(what, text.trim().into()))?;
        if !x.is_finite() || x < 0.0 {
            return Err(FieldError::Negative(what, text.trim().into()));
        }
        v.push(x);
    }
    if !v.iter().any(|x| *x > 0.0) {
        return Err(FieldError::Empty(what));
    }
    Ok(Some(v))
}

/// The split as `-ts` takes it, or "auto" (by memory) without one.
pub(super) fn tensor_split_text(s: &Scenario) -> String {
    match &s.offload.tensor_split {
        Some(v) => v
            .iter()
            .map(|x| short_decimal(*x))
            .collect::<Vec<_>>()
            .join(","),
        None => "auto".into(),
    }
}

pub(super) fn parse_u32(text: &str, what: &'static str) -> Result<u32, FieldError> {
    let v = parse_count(text, what)?;
    u32::try_from(v).map_err(|_| FieldError::TooLarge(what, text.trim().into()))
}

pub(super) fn parse_bool(text: &str, what: &'static str) -> Result<bool, FieldError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" | "y" => Ok(true),
        "off" | "0" | "false" | "no" | "n" => Ok(false),
        other => Err(FieldError::NotOnOff(what, other.into())),
    }
}

pub(super) fn parse_cache_type(text: &str, what: &'static str) -> Result<CacheType, FieldError> {
    CacheType::parse(text).ok_or_else(|| FieldError::CacheType(what, text.trim().into()))
}

/// The next context length up: a quarter of the power of two below it (32,768 → 40,960).
pub fn context_step_up(n: u64) -> u64 {
    let p = if n == 0 {
        1
    } else {
        1u64 << (63 - n.leading_zeros())
    };
    let step = (p / 4).max(1);
    (n / step + 1).saturating_mul(step)
}

/// The next context length down (32,768 → 28,672), never below 1.
pub fn context_step_down(n: u64) -> u64 {
    if n <= 1 {
        return 1;
    }
    let below = n - 1;
    let p = 1u64 << (63 - below.leading_zeros());
    let step = (p / 4).max(1);
    ((below / step) * step).max(1)
}

pub(super) fn step_u64(v: u64, dir: i32, step: u64, min: u64) -> u64 {
    if dir > 0 {
        v.saturating_add(step)
    } else {
        v.saturating_sub(step).max(min)
    }
}

pub(super) fn halve_double(v: u64, dir: i32) -> u64 {
    if dir > 0 {
        v.saturating_mul(2)
    } else {
        (v / 2).max(1)
    }
}

pub(super) fn clamp_u32(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

/// Parameters: `32.8e9`, `32,800,000,000`, `32.8B`, `671b`, `270M`.
pub fn parse_params(t: &str) -> Result<u64, FieldError> {
    let lower: String = t
        .trim()
        .to_ascii_lowercase()
        .chars()
        .filter(|c| *c != ',' && *c != '_' && !c.is_whitespace())
        .collect();
    let (num, mult) = match lower.chars().last() {
        Some('b') => (&lower[..lower.len() - 1], 1e9),
        Some('m') => (&lower[..lower.len() - 1], 1e6),
        Some('k') => (&lower[..lower.len() - 1], 1e3),
        Some('t') => (&lower[..lower.len() - 1], 1e12),
        _ => (lower.as_str(), 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| FieldError::Parameters(t.trim().into()))?;
    let v = v * mult;
    if !v.is_finite() || v < 1.0 || v >= u64::MAX as f64 {
        return Err(FieldError::ParametersImplausible(t.trim().into()));
    }
    Ok(v.round() as u64)
}

/// The context after `[` (halve) or `]` (double).
pub fn halve_or_double_context(n: u64, double: bool) -> u64 {
    if double {
        n.saturating_mul(2).min(MAX_CONTEXT.saturating_mul(2))
    } else {
        (n / 2).max(1)
    }
}

/// Bytes as typed: whole GiB or GB when exact, else the byte count.
pub(super) fn bytes_text(b: u64) -> String {
    if b == 0 {
        "0".into()
    } else if b.is_multiple_of(GIB) {
        format!("{} GiB", b / GIB)
    } else if b.is_multiple_of(1_000_000_000) {
        format!("{} GB", b / 1_000_000_000)
    } else if b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else {
        b.to_string()
    }
}

/// A bandwidth as typed, in GB/s.
pub(super) fn rate_text(bytes_per_s: f64) -> String {
    format!("{} GB/s", short_decimal(bytes_per_s / 1e9))
}

/// The shortest decimal that reads back to `v` within a millionth (no float noise).
pub(super) fn short_decimal(v: f64) -> String {
    for places in 0..=6 {
        let t = format!("{v:.places$}");
        if let Ok(back) = t.parse::<f64>()
            && (back - v).abs() <= v.abs() * 1e-9
        {
            return t;
        }
    }
    v.to_string()
}
