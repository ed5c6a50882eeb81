//! KV cache element types as exact block fractions (llama.cpp `-ctk` / `-ctv`, docs/bounds.md §3).
//! Pure: no I/O, no other top-level module.

use std::fmt;

/// A cache element type. Sizes are exact: bytes per block / elements per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheType {
    /// 4 bytes per element.
    F32,
    /// 2 bytes per element.
    F16,
    /// 2 bytes per element.
    Bf16,
    /// 34 bytes per 32 elements.
    Q8_0,
    /// 18 bytes per 32 elements.
    Q4_0,
    /// 20 bytes per 32 elements.
    Q4_1,
    /// 22 bytes per 32 elements.
    Q5_0,
    /// 24 bytes per 32 elements.
    Q5_1,
    /// 18 bytes per 32 elements.
    Iq4Nl,
}

impl CacheType {
    /// Every type, in the order selectors cycle through them.
    pub const ALL: [CacheType; 9] = [
        CacheType::F32,
        CacheType::F16,
        CacheType::Bf16,
        CacheType::Q8_0,
        CacheType::Q5_1,
        CacheType::Q5_0,
        CacheType::Q4_1,
        CacheType::Q4_0,
        CacheType::Iq4Nl,
    ];

    /// llama.cpp's name for the type.
    pub fn name(self) -> &'static str {
        match self {
            CacheType::F32 => "f32",
            CacheType::F16 => "f16",
            CacheType::Bf16 => "bf16",
            CacheType::Q8_0 => "q8_0",
            CacheType::Q4_0 => "q4_0",
            CacheType::Q4_1 => "q4_1",
            CacheType::Q5_0 => "q5_0",
            CacheType::Q5_1 => "q5_1",
            CacheType::Iq4Nl => "iq4_nl",
        }
    }

    /// Every name for a message, from [`CacheType::ALL`]: "f32, f16, …, q4_0 or iq4_nl".
    pub fn names_list() -> String {
        let names: Vec<&str> = CacheType::ALL.iter().map(|t| t.name()).collect();
        let (last, rest) = names.split_last().expect("nine types");
        format!("{} or {last}", rest.join(", "))
    }

    /// Parse llama.cpp's name (case-insensitive).
    pub fn parse(s: &str) -> Option<CacheType> {
        let l = s.trim().to_ascii_lowercase();
        CacheType::ALL.into_iter().find(|t| t.name() == l)
    }

    /// (bytes per block, elements per block).
    pub fn block(self) -> (u64, u64) {
        match self {
            CacheType::F32 => (4, 1),
            CacheType::F16 | CacheType::Bf16 => (2, 1),
            CacheType::Q8_0 => (34, 32),
            CacheType::Q4_0 | CacheType::Iq4Nl => (18, 32),
            CacheType::Q4_1 => (20, 32),
            CacheType::Q5_0 => (22, 32),
            CacheType::Q5_1 => (24, 32),
        }
    }

    /// Size of one element in 1/32 byte units (exact for every type): f16 → 64, q8_0 → 34.
    pub fn b32_per_element(self) -> u64 {
        let (bytes, elems) = self.block();
        bytes * 32 / elems
    }

    /// Bytes per element as a float, for display only (`q8_0` → 1.0625).
    pub fn bytes_per_element(self) -> f64 {
        let (bytes, elems) = self.block();
        bytes as f64 / elems as f64
    }

    /// The block fraction as text: `2`, `34/32`.
    pub fn fraction(self) -> String {
        let (bytes, elems) = self.block();
        if elems == 1 {
            bytes.to_string()
        } else {
            format!("{bytes}/{elems}")
        }
    }

    /// A block-quantized type (needs flash attention as a V cache in llama.cpp).
    pub fn is_quantized(self) -> bool {
        self.block().1 > 1
    }
}

impl fmt::Display for CacheType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_fractions() {
        assert_eq!(CacheType::F16.b32_per_element(), 64);
        assert_eq!(CacheType::F32.b32_per_element(), 128);
        assert_eq!(CacheType::Q8_0.b32_per_element(), 34);
        assert_eq!(CacheType::Q4_0.b32_per_element(), 18);
        assert_eq!(CacheType::Q4_1.b32_per_element(), 20);
        assert_eq!(CacheType::Q5_0.b32_per_element(), 22);
        assert_eq!(CacheType::Q5_1.b32_per_element(), 24);
        assert_eq!(CacheType::Iq4Nl.b32_per_element(), 18);
        assert_eq!(CacheType::Bf16.b32_per_element(), 64);
    }

    #[test]
    fn names_round_trip() {
        for t in CacheType::ALL {
            assert_eq!(CacheType::parse(t.name()), Some(t));
        }
        assert_eq!(CacheType::parse("Q8_0"), Some(CacheType::Q8_0));
        assert_eq!(CacheType::parse("q3_k"), None);
    }
}
