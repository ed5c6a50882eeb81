//! GGUF metadata values, byte order and the ggml tensor type table.
//! No I/O; depends only on `gguf-rs-lib`'s type geometry.

use gguf_rs_lib::format::types::GGUFTensorType;
use std::fmt;

/// Byte order of every field after the magic (the magic is always the bytes `GGUF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Little-endian (almost every file).
    Little,
    /// Big-endian (written by `gguf-py` with `endianess=BIG`, e.g. for s390x).
    Big,
}

impl fmt::Display for Endian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Endian::Little => "little-endian",
            Endian::Big => "big-endian",
        })
    }
}

/// The type tag of a metadata value (GGUF `gguf_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// 0
    U8,
    /// 1
    I8,
    /// 2
    U16,
    /// 3
    I16,
    /// 4
    U32,
    /// 5
    I32,
    /// 6
    F32,
    /// 7
    Bool,
    /// 8: u64 length + UTF-8 bytes
    String,
    /// 9: u32 element type + u64 count + elements
    Array,
    /// 10
    U64,
    /// 11
    I64,
    /// 12
    F64,
}

impl ValueType {
    /// The type for a GGUF type id, `None` for an unknown id.
    pub fn from_id(id: u32) -> Option<ValueType> {
        use ValueType::*;
        Some(match id {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            _ => return None,
        })
    }

    /// The GGUF type id.
    pub fn id(self) -> u32 {
        use ValueType::*;
        match self {
            U8 => 0,
            I8 => 1,
            U16 => 2,
            I16 => 3,
            U32 => 4,
            I32 => 5,
            F32 => 6,
            Bool => 7,
            String => 8,
            Array => 9,
            U64 => 10,
            I64 => 11,
            F64 => 12,
        }
    }

    /// Size in bytes of a fixed-size value; `None` for strings and arrays.
    pub fn fixed_size(self) -> Option<u64> {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => Some(1),
            U16 | I16 => Some(2),
            U32 | I32 | F32 => Some(4),
            U64 | I64 | F64 => Some(8),
            String | Array => None,
        }
    }

    /// The fewest bytes one value of this type occupies in a file (bounds allocations).
    pub fn min_size(self) -> u64 {
        match self {
            ValueType::String => 8,
            ValueType::Array => 12,
            other => other.fixed_size().unwrap_or(1),
        }
    }

    /// Lower-case name as gguf-py prints it (`u32`, `string`, …).
    pub fn name(self) -> &'static str {
        use ValueType::*;
        match self {
            U8 => "u8",
            I8 => "i8",
            U16 => "u16",
            I16 => "i16",
            U32 => "u32",
            I32 => "i32",
            F32 => "f32",
            Bool => "bool",
            String => "string",
            Array => "array",
            U64 => "u64",
            I64 => "i64",
            F64 => "f64",
        }
    }

    /// An integer type (any width, signed or not).
    pub fn is_integer(self) -> bool {
        use ValueType::*;
        matches!(self, U8 | I8 | U16 | I16 | U32 | I32 | U64 | I64)
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An array too large to keep in memory (more than 64 KiB in the file, e.g. a 262,144-entry
/// tokenizer): recorded by position so it can be loaded on demand
/// (`reader::load_array`, `Artifact::load_array`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkippedArray {
    /// Element type.
    pub element_type: ValueType,
    /// Number of elements.
    pub count: u64,
    /// Byte offset in the file of the first element.
    pub offset: u64,
    /// Bytes the elements occupy in the file.
    pub byte_len: u64,
}

/// One metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// u8
    U8(u8),
    /// i8
    I8(i8),
    /// u16
    U16(u16),
    /// i16
    I16(i16),
    /// u32
    U32(u32),
    /// i32
    I32(i32),
    /// f32
    F32(f32),
    /// bool (any non-zero byte reads as true)
    Bool(bool),
    /// UTF-8 string
    String(String),
    /// An array kept in memory.
    Array {
        /// Element type.
        element_type: ValueType,
        /// The elements.
        items: Vec<Value>,
    },
    /// An array left in the file (larger than 64 KiB).
    Skipped(SkippedArray),
    /// u64
    U64(u64),
    /// i64
    I64(i64),
    /// f64
    F64(f64),
}

impl Value {
    /// The GGUF type of this value (`Array` for kept and skipped arrays).
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array { .. } | Value::Skipped(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }

    /// A description of the type for messages: `u32`, `array of string`.
    pub fn type_description(&self) -> String {
        match self {
            Value::Array { element_type, .. } => format!("array of {element_type}"),
            Value::Skipped(s) => format!("array of {}", s.element_type),
            other => other.value_type().name().to_string(),
        }
    }

    /// Any integer as i128 (exact for every integer type).
    pub fn as_i128(&self) -> Option<i128> {
        Some(match self {
            Value::U8(v) => *v as i128,
            Value::I8(v) => *v as i128,
            Value::U16(v) => *v as i128,
            Value::I16(v) => *v as i128,
            Value::U32(v) => *v as i128,
            Value::I32(v) => *v as i128,
            Value::U64(v) => *v as i128,
            Value::I64(v) => *v as i128,
            _ => return None,
        })
    }

    /// A non-negative integer of any width as u64.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_i128().and_then(|v| u64::try_from(v).ok())
    }

    /// A float or an integer as f64.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::F32(v) => Some(*v as f64),
            Value::F64(v) => Some(*v),
            other => other.as_i128().map(|v| v as f64),
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The bool, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Number of elements of an array (kept or skipped).
    pub fn array_len(&self) -> Option<u64> {
        match self {
            Value::Array { items, .. } => Some(items.len() as u64),
            Value::Skipped(s) => Some(s.count),
            _ => None,
        }
    }

    /// A one-line rendering cut to about `max_chars` characters (for lists and the TUI).
    pub fn short(&self, max_chars: usize) -> String {
        let full = self.to_string();
        if full.chars().count() <= max_chars {
            return full;
        }
        let mut cut: String = full.chars().take(max_chars.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::U8(v) => write!(f, "{v}"),
            Value::I8(v) => write!(f, "{v}"),
            Value::U16(v) => write!(f, "{v}"),
            Value::I16(v) => write!(f, "{v}"),
            Value::U32(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::String(s) => write!(f, "{s:?}"),
            Value::Array {
                element_type,
                items,
            } => {
                write!(f, "[{element_type}; {}]", items.len())?;
                for (i, item) in items.iter().enumerate() {
                    if i == 0 {
                        f.write_str(" ")?;
                    } else {
                        f.write_str(", ")?;
                    }
                    if i == 16 {
                        f.write_str("…")?;
                        break;
                    }
                    write!(f, "{item}")?;
                }
                Ok(())
            }
            Value::Skipped(s) => write!(
                f,
                "[{}; {}] (not loaded: {} bytes at byte {})",
                s.element_type, s.count, s.byte_len, s.offset
            ),
        }
    }
}

/// Geometry of a ggml tensor type: `block_elements` values stored in `block_bytes` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeInfo {
    /// llama.cpp's name as gguf-py spells it (`Q4_K`, `BF16`, `MXFP4`).
    pub name: &'static str,
    /// Elements per block (1 for scalar types).
    pub block_elements: u64,
    /// Bytes per block.
    pub block_bytes: u64,
}

/// A ggml tensor type id as stored in a tensor info record.
///
/// The geometry comes from `gguf-rs-lib` 0.3.3's table, checked id by id against gguf-py's
/// `GGML_QUANT_SIZES` and ggml's `ggml.h` in the unit tests below (ids 0–42, including
/// MXFP4 = 39 at 32 elements / 17 bytes and the ternary TQ1_0/TQ2_0). Its table is correct for
/// every id it knows, so no table of our own is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GgmlType(pub u32);

impl GgmlType {
    /// F32 (id 0).
    pub const F32: GgmlType = GgmlType(0);
    /// F16 (id 1).
    pub const F16: GgmlType = GgmlType(1);
    /// Q4_0 (id 2).
    pub const Q4_0: GgmlType = GgmlType(2);
    /// Q8_0 (id 8).
    pub const Q8_0: GgmlType = GgmlType(8);
    /// Q4_K (id 12).
    pub const Q4_K: GgmlType = GgmlType(12);
    /// Q5_K (id 13).
    pub const Q5_K: GgmlType = GgmlType(13);
    /// Q6_K (id 14).
    pub const Q6_K: GgmlType = GgmlType(14);
    /// IQ4_XS (id 23).
    pub const IQ4_XS: GgmlType = GgmlType(23);
    /// BF16 (id 30).
    pub const BF16: GgmlType = GgmlType(30);
    /// MXFP4 (id 39).
    pub const MXFP4: GgmlType = GgmlType(39);

    /// The type id.
    pub fn id(self) -> u32 {
        self.0
    }

    /// Geometry and name, `None` for an id ggml does not define (or no longer defines).
    pub fn info(self) -> Option<TypeInfo> {
        let t = GGUFTensorType::from_u32(self.0).ok()?;
        let block_bytes = t.block_size_bytes()? as u64;
        let block_elements = t.block_size() as u64;
        if block_elements == 0 || block_bytes == 0 {
            return None;
        }
        Some(TypeInfo {
            name: t.name(),
            block_elements,
            block_bytes,
        })
    }

    /// The name of a type that ggml once had and removed, for warnings.
    pub fn removed_name(self) -> Option<&'static str> {
        Some(match self.0 {
            4 => "Q4_2",
            5 => "Q4_3",
            31 => "Q4_0_4_4",
            32 => "Q4_0_4_8",
            33 => "Q4_0_8_8",
            36 => "IQ4_NL_4_4",
            37 => "IQ4_NL_4_8",
            38 => "IQ4_NL_8_8",
            _ => return None,
        })
    }

    /// llama.cpp's name, or `unknown(ID)`.
    pub fn name(self) -> String {
        match self.info() {
            Some(i) => i.name.to_string(),
            None => format!("unknown({})", self.0),
        }
    }

    /// Bytes of `elements` values: `elements / block_elements × block_bytes`. `None` for an
    /// unknown type, a count that is not a whole number of blocks, or on overflow.
    pub fn bytes_for(self, elements: u64) -> Option<u64> {
        let info = self.info()?;
        if !elements.is_multiple_of(info.block_elements) {
            return None;
        }
        (elements / info.block_elements).checked_mul(info.block_bytes)
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// ggml's `GGML_MAX_DIMS`: a tensor has at most this many dimensions (the reader refuses more).
pub const MAX_DIMS: usize = 4;

/// One tensor info record of a GGUF header.
///
/// Compact because a header may hold a million of them: the name is stored inline when it is
/// at most 24 bytes (`compact_str`, already in the dependency tree through ratatui; most
/// llama.cpp names are that short) and the dims in a fixed array of `MAX_DIMS` with a count,
/// instead of a `String` and a `Vec` (two allocations, 170 bytes a tensor with the rest).
/// Read the name and dims through [`TensorInfo::name`] and [`TensorInfo::dims`].
#[derive(Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// Tensor name (`blk.0.attn_q.weight`).
    name: compact_str::CompactString,
    /// Dimensions, innermost (row) first, as ggml's `ne`; the first `n_dims` are used.
    dims: [u64; MAX_DIMS],
    /// Number of dims used.
    n_dims: u8,
    /// ggml type.
    pub ggml_type: GgmlType,
    /// Offset of the data relative to the shard's data start, bytes.
    pub offset: u64,
    /// Index of the shard holding the data (0 for a single file).
    pub shard: usize,
    /// Byte offset of this record in its file.
    pub header_offset: u64,
    /// Elements = product of dims.
    pub elements: u64,
    /// Data size in bytes; `None` for an unknown type.
    pub bytes: Option<u64>,
}

impl fmt::Debug for TensorInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorInfo")
            .field("name", &self.name())
            .field("ggml_type", &self.ggml_type)
            .field("dims", &self.dims())
            .field("offset", &self.offset)
            .field("shard", &self.shard)
            .field("header_offset", &self.header_offset)
            .field("elements", &self.elements)
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl TensorInfo {
    /// A record; `None` when `dims` has more than `MAX_DIMS` entries. `elements` and `bytes`
    /// are taken as given (the reader computes them with overflow checks).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: &str,
        ggml_type: GgmlType,
        dims: &[u64],
        offset: u64,
        shard: usize,
        header_offset: u64,
        elements: u64,
        bytes: Option<u64>,
    ) -> Option<TensorInfo> {
        if dims.len() > MAX_DIMS {
            return None;
        }
        let mut d = [0u64; MAX_DIMS];
        d[..dims.len()].copy_from_slice(dims);
        Some(TensorInfo {
            name: compact_str::CompactString::from(name),
            dims: d,
            n_dims: dims.len() as u8,
            ggml_type,
            offset,
            shard,
            header_offset,
            elements,
            bytes,
        })
    }

    /// Tensor name (`blk.0.attn_q.weight`).
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// Dimensions, innermost (row) first, as ggml's `ne`.
    pub fn dims(&self) -> &[u64] {
        &self.dims[..self.n_dims as usize]
    }

    /// Elements of one row (dim 0), 0 for a tensor without dims.
    pub fn row_elements(&self) -> u64 {
        self.dims().first().copied().unwrap_or(0)
    }

    /// Number of rows: the product of dims 1.. (saturating: with a zero-size row the other
    /// dims are not bounded by the element count).
    pub fn rows(&self) -> u64 {
        self.dims()
            .iter()
            .skip(1)
            .fold(1, |a, d| a.saturating_mul(*d))
    }

    /// `[4096, 151936]` style shape.
    pub fn shape_string(&self) -> String {
        let parts: Vec<String> = self.dims().iter().map(|d| d.to_string()).collect();
        format!("[{}]", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gguf-py 0.19 `GGML_QUANT_SIZES` (block elements, block bytes) plus mainline ggml's
    /// Q2_0 (id 42: `QK2_0` 64, `block_q2_0` = f16 + 16 bytes). Q8_1 is ggml's current
    /// `block_q8_1` (two f16 + 32 bytes = 36); gguf-py still says 40 from when d and s were
    /// f32. Q8_1 is an activation type that files do not carry.
    const EXPECTED: &[(u32, &str, u64, u64)] = &[
        (0, "F32", 1, 4),
        (1, "F16", 1, 2),
        (2, "Q4_0", 32, 18),
        (3, "Q4_1", 32, 20),
        (6, "Q5_0", 32, 22),
        (7, "Q5_1", 32, 24),
        (8, "Q8_0", 32, 34),
        (9, "Q8_1", 32, 36),
        (10, "Q2_K", 256, 84),
        (11, "Q3_K", 256, 110),
        (12, "Q4_K", 256, 144),
        (13, "Q5_K", 256, 176),
        (14, "Q6_K", 256, 210),
        (15, "Q8_K", 256, 292),
        (16, "IQ2_XXS", 256, 66),
        (17, "IQ2_XS", 256, 74),
        (18, "IQ3_XXS", 256, 98),
        (19, "IQ1_S", 256, 50),
        (20, "IQ4_NL", 32, 18),
        (21, "IQ3_S", 256, 110),
        (22, "IQ2_S", 256, 82),
        (23, "IQ4_XS", 256, 136),
        (24, "I8", 1, 1),
        (25, "I16", 1, 2),
        (26, "I32", 1, 4),
        (27, "I64", 1, 8),
        (28, "F64", 1, 8),
        (29, "IQ1_M", 256, 56),
        (30, "BF16", 1, 2),
        (34, "TQ1_0", 256, 54),
        (35, "TQ2_0", 256, 66),
        (39, "MXFP4", 32, 17),
        (40, "NVFP4", 64, 36),
        (41, "Q1_0", 128, 18),
        (42, "Q2_0", 64, 18),
    ];

    #[test]
    fn type_table_matches_ggml() {
        for &(id, name, elems, bytes) in EXPECTED {
            let info = GgmlType(id)
                .info()
                .unwrap_or_else(|| panic!("id {id} unknown"));
            assert_eq!(
                (info.name, info.block_elements, info.block_bytes),
                (name, elems, bytes),
                "id {id}"
            );
        }
    }

    #[test]
    fn removed_and_unknown_ids() {
        for id in [4, 5, 31, 32, 33, 36, 37, 38, 43, 1000] {
            assert!(GgmlType(id).info().is_none(), "id {id}");
            assert_eq!(GgmlType(id).name(), format!("unknown({id})"));
        }
        assert_eq!(GgmlType(31).removed_name(), Some("Q4_0_4_4"));
        assert_eq!(GgmlType(38).removed_name(), Some("IQ4_NL_8_8"));
        assert_eq!(GgmlType(4).removed_name(), Some("Q4_2"));
    }

    #[test]
    fn tensor_info_stays_compact() {
        // A million of these make up a large header's memory: name inline up to 24 bytes,
        // dims in place (was 104 bytes plus two allocations).
        assert!(std::mem::size_of::<TensorInfo>() <= 112);
        let t = TensorInfo::new(
            "blk.0.attn_q.weight",
            GgmlType::F32,
            &[4, 2],
            0,
            0,
            0,
            8,
            Some(32),
        )
        .unwrap();
        assert_eq!(
            (t.name(), t.dims(), t.rows()),
            ("blk.0.attn_q.weight", &[4u64, 2][..], 2)
        );
        assert!(TensorInfo::new("x", GgmlType::F32, &[1; 5], 0, 0, 0, 1, Some(4)).is_none());
    }

    #[test]
    fn bytes_for_whole_blocks_only() {
        assert_eq!(GgmlType::Q4_K.bytes_for(256 * 10), Some(1440));
        assert_eq!(GgmlType::Q4_K.bytes_for(100), None);
        assert_eq!(GgmlType::F16.bytes_for(7), Some(14));
        assert_eq!(GgmlType::F32.bytes_for(u64::MAX), None);
    }
}
