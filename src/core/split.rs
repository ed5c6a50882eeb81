//! `--tensor-split` proportions as fractions of the offloaded layers, normalised without
//! overflow: each proportion is divided by the largest before summing, so `1e308,1e308` is
//! the even split that `1,1` is. Typed errors; `Display` words them. Pure: no I/O.

use std::fmt;

/// Why a split list cannot be used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SplitError {
    /// More proportions than accelerators.
    TooLong {
        /// Proportions given.
        given: usize,
        /// Accelerator tiers of the machine.
        devices: usize,
    },
    /// A proportion is NaN or infinite.
    NotFinite {
        /// 0-based position.
        index: usize,
    },
    /// A proportion is negative.
    Negative {
        /// 0-based position.
        index: usize,
        /// The value.
        value: f64,
    },
    /// Every proportion is 0 (or the list is empty).
    AllZero,
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::TooLong { given, devices } => write!(
                f,
                "tensor split lists {given} proportions but the machine has {devices} accelerator{} (GPU tiers)",
                if *devices == 1 { "" } else { "s" }
            ),
            SplitError::NotFinite { index } => write!(
                f,
                "tensor split proportion {} is not a finite number",
                index + 1
            ),
            SplitError::Negative { index, value } => write!(
                f,
                "tensor split proportion {} is negative ({value}): proportions must be non-negative",
                index + 1
            ),
            SplitError::AllZero => {
                f.write_str("tensor split proportions are all 0: at least one must be above 0")
            }
        }
    }
}

impl std::error::Error for SplitError {}

/// The fraction of the offloaded layers each of `devices` accelerators takes (Σ = 1; missing
/// trailing proportions are 0, as llama.cpp reads them).
pub fn fractions(split: &[f64], devices: usize) -> Result<Vec<f64>, SplitError> {
    let mut max = 0.0f64;
    for (index, &value) in split.iter().enumerate() {
        if !value.is_finite() {
            return Err(SplitError::NotFinite { index });
        }
        if value < 0.0 {
            return Err(SplitError::Negative { index, value });
        }
        max = max.max(value);
    }
    // Each value is checked before the length, so a bad value is named whatever the count.
    if split.len() > devices {
        return Err(SplitError::TooLong {
            given: split.len(),
            devices,
        });
    }
    if max <= 0.0 {
        return Err(SplitError::AllZero);
    }
    // Each ratio is in [0, 1] and the sum in [1, devices]: no overflow, no underflow to 0.
    let ratios: Vec<f64> = split.iter().map(|x| x / max).collect();
    let sum: f64 = ratios.iter().sum();
    let mut out: Vec<f64> = ratios.iter().map(|r| r / sum).collect();
    out.resize(devices, 0.0);
    Ok(out)
}

/// The proportions for llama.cpp's `-ts` (parsed there as 32-bit floats): as written when every
/// one is 0 or within 0.001 – 1,000,000, else rescaled so the largest is 1 (the same layout,
/// never a 300-digit number or a value a float cannot hold).
pub fn fmt_for_llama_cpp(split: &[f64]) -> String {
    use super::units::trim_float;
    let plain = split
        .iter()
        .all(|x| *x == 0.0 || (x.is_finite() && (1e-3..=1e6).contains(&x.abs())));
    let max = split
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0f64, f64::max);
    split
        .iter()
        .map(|x| {
            if plain {
                trim_float(*x, 3)
            } else if max > 0.0 && x.is_finite() {
                trim_float(x / max, 6)
            } else {
                "0".to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}
