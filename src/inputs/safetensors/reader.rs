//! The safetensors header: an 8-byte little-endian length, then that many bytes of JSON
//! mapping each tensor name to `{dtype, shape, data_offsets}` (offsets relative to the data
//! section that follows the header), plus an optional `__metadata__` string map.
//! Only the header is read; the tensor data is never touched.

use super::SafetensorsError;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// Largest header read: 100,000,000 bytes (100 MB), the limit of the safetensors library
/// itself. Real headers are kilobytes to a few MB (a 1,000-tensor shard is about 150 KB).
/// A larger claim is refused before anything is allocated.
pub const MAX_HEADER_BYTES: u64 = 100_000_000;

/// A safetensors element type (the `dtype` strings of the format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dtype {
    /// `BOOL`, 1 byte.
    Bool,
    /// `U8`.
    U8,
    /// `I8`.
    I8,
    /// `F8_E5M2`.
    F8E5M2,
    /// `F8_E4M3`.
    F8E4M3,
    /// `F8_E8M0` (MX scales).
    F8E8M0,
    /// `I16`.
    I16,
    /// `U16`.
    U16,
    /// `F16`.
    F16,
    /// `BF16`.
    BF16,
    /// `I32`.
    I32,
    /// `U32` (MLX's packed quantized weights).
    U32,
    /// `F32`.
    F32,
    /// `F64`.
    F64,
    /// `I64`.
    I64,
    /// `U64`.
    U64,
    /// `C64` (complex of two f32).
    C64,
    /// `F4` (e2m1), 4 bits.
    F4,
    /// `F6_E2M3`, 6 bits.
    F6E2M3,
    /// `F6_E3M2`, 6 bits.
    F6E3M2,
}

/// Every dtype with its name and width in bits.
const DTYPES: &[(Dtype, &str, u64)] = &[
    (Dtype::Bool, "BOOL", 8),
    (Dtype::U8, "U8", 8),
    (Dtype::I8, "I8", 8),
    (Dtype::F8E5M2, "F8_E5M2", 8),
    (Dtype::F8E4M3, "F8_E4M3", 8),
    (Dtype::F8E8M0, "F8_E8M0", 8),
    (Dtype::I16, "I16", 16),
    (Dtype::U16, "U16", 16),
    (Dtype::F16, "F16", 16),
    (Dtype::BF16, "BF16", 16),
    (Dtype::I32, "I32", 32),
    (Dtype::U32, "U32", 32),
    (Dtype::F32, "F32", 32),
    (Dtype::F64, "F64", 64),
    (Dtype::I64, "I64", 64),
    (Dtype::U64, "U64", 64),
    (Dtype::C64, "C64", 64),
    (Dtype::F4, "F4", 4),
    (Dtype::F6E2M3, "F6_E2M3", 6),
    (Dtype::F6E3M2, "F6_E3M2", 6),
];

impl Dtype {
    /// Parse the header's `dtype` string.
    pub fn parse(s: &str) -> Option<Dtype> {
        DTYPES.iter().find(|(_, n, _)| *n == s).map(|(d, _, _)| *d)
    }
    /// The name as the format spells it.
    pub fn name(self) -> &'static str {
        DTYPES
            .iter()
            .find(|(d, _, _)| *d == self)
            .map_or("?", |e| e.1)
    }
    /// Width of one element, bits.
    pub fn bits(self) -> u64 {
        DTYPES
            .iter()
            .find(|(d, _, _)| *d == self)
            .map_or(8, |e| e.2)
    }
}

/// One tensor of a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorEntry {
    /// Tensor name.
    pub name: String,
    /// Element type.
    pub dtype: Dtype,
    /// Dims as stored (outermost first, as numpy and MLX write them).
    pub shape: Vec<u64>,
    /// Elements (product of dims).
    pub elements: u64,
    /// Start of the data relative to the data section, bytes.
    pub begin: u64,
    /// End (exclusive) relative to the data section, bytes.
    pub end: u64,
}

impl TensorEntry {
    /// Bytes of its data (`end − begin`, checked equal to elements × width).
    pub fn bytes(&self) -> u64 {
        self.end - self.begin
    }
}

/// A parsed header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The length field (bytes of JSON).
    pub header_len: u64,
    /// Where the data section starts in the file: `8 + header_len`.
    pub data_start: u64,
    /// The file's length, bytes.
    pub file_len: u64,
    /// Tensors ordered by their data offset.
    pub tensors: Vec<TensorEntry>,
    /// `__metadata__` (MLX writes `{"format": "mlx"}`).
    pub metadata: BTreeMap<String, String>,
    /// Bytes of the data section covered by no tensor (the format expects none).
    pub gap_bytes: u64,
}

/// Byte offset in the file of a serde_json error at `line`/`column` (1-based) of the JSON.
fn json_offset(json: &[u8], line: usize, column: usize) -> u64 {
    let mut start = 0usize;
    let mut l = 1;
    if line > 1 {
        for (i, b) in json.iter().enumerate() {
            if *b == b'\n' {
                l += 1;
                if l == line {
                    start = i + 1;
                    break;
                }
            }
        }
    }
    8 + (start + column.saturating_sub(1)) as u64
}

/// Byte offset in the file of the first `"name"` key in the JSON (for messages about a
/// tensor); the header start when it cannot be found.
fn name_offset(json: &[u8], name: &str) -> u64 {
    let quoted = serde_json::to_string(name).unwrap_or_default();
    let q = quoted.as_bytes();
    json.windows(q.len().max(1))
        .position(|w| w == q)
        .map_or(8, |p| 8 + p as u64)
}

/// A name or value for a one-line message: control characters escaped, cut at 80
/// characters with `…`.
pub(crate) fn cut(s: &str) -> String {
    let t = crate::sanitize::text(s);
    if t.chars().count() > 80 {
        let mut c: String = t.chars().take(79).collect();
        c.push('…');
        c
    } else {
        t.into_owned()
    }
}

/// Read the header of a safetensors file of `file_len` bytes from `r`, positioned at its
/// first byte. Reads 8 + header-length bytes and no more.
pub fn read_header<R: Read>(
    r: &mut R,
    file_len: u64,
    path: &Path,
) -> Result<Header, SafetensorsError> {
    if file_len < 8 {
        return Err(SafetensorsError::at(
            path,
            0,
            format!(
                "the file is {file_len} bytes, shorter than the 8-byte header length: not a safetensors file"
            ),
        ));
    }
    let mut len8 = [0u8; 8];
    r.read_exact(&mut len8)
        .map_err(|e| SafetensorsError::io(path, "reading the header length at byte 0", e))?;
    let header_len = u64::from_le_bytes(len8);
    if header_len > MAX_HEADER_BYTES {
        return Err(SafetensorsError::at(
            path,
            0,
            format!(
                "header length \"{header_len}\" is more than the {MAX_HEADER_BYTES}-byte (100 MB) cap: not a safetensors file or corrupt"
            ),
        ));
    }
    if header_len > file_len - 8 {
        return Err(SafetensorsError::at(
            path,
            0,
            format!(
                "header length \"{header_len}\" runs past the end of the file at byte {file_len} ({} bytes after the length field): truncated or not a safetensors file",
                file_len - 8
            ),
        ));
    }
    if header_len < 2 {
        return Err(SafetensorsError::at(
            path,
            0,
            format!("header length \"{header_len}\" is too short for a JSON object"),
        ));
    }
    // Bounded by both checks above: at most 100 MB and at most the file.
    let mut json = Vec::with_capacity(header_len as usize);
    r.take(header_len)
        .read_to_end(&mut json)
        .map_err(|e| SafetensorsError::io(path, "reading the header at byte 8", e))?;
    if (json.len() as u64) < header_len {
        return Err(SafetensorsError::at(
            path,
            8 + json.len() as u64,
            format!(
                "the file ends inside the header ({} of {header_len} header bytes read): truncated",
                json.len()
            ),
        ));
    }
    parse_json(&json, header_len, file_len, path)
}

fn parse_json(
    json: &[u8],
    header_len: u64,
    file_len: u64,
    path: &Path,
) -> Result<Header, SafetensorsError> {
    if json.first() != Some(&b'{') {
        return Err(SafetensorsError::at(
            path,
            8,
            "the header does not start with '{': not a safetensors file",
        ));
    }
    let map: BTreeMap<String, serde_json::Value> = serde_json::from_slice(json).map_err(|e| {
        SafetensorsError::at(
            path,
            json_offset(json, e.line(), e.column()),
            format!("the header is not valid JSON: {}", cut(&e.to_string())),
        )
    })?;
    let data_start = 8 + header_len;
    let data_len = file_len - data_start;
    let mut metadata = BTreeMap::new();
    let mut tensors = Vec::with_capacity(map.len());
    for (name, v) in &map {
        let at = name_offset(json, name);
        let bad =
            |m: String| SafetensorsError::at(path, at, format!("tensor \"{}\": {m}", cut(name)));
        if name == "__metadata__" {
            let Some(obj) = v.as_object() else {
                return Err(SafetensorsError::at(
                    path,
                    at,
                    "\"__metadata__\" is not an object",
                ));
            };
            for (k, v) in obj {
                let Some(s) = v.as_str() else {
                    return Err(SafetensorsError::at(
                        path,
                        at,
                        format!("\"__metadata__\" entry \"{}\" is not a string", cut(k)),
                    ));
                };
                metadata.insert(k.clone(), s.to_string());
            }
            continue;
        }
        let Some(obj) = v.as_object() else {
            return Err(bad("its entry is not an object".into()));
        };
        let dtype_s = obj
            .get("dtype")
            .and_then(|d| d.as_str())
            .ok_or_else(|| bad("no \"dtype\" string".into()))?;
        let dtype = Dtype::parse(dtype_s)
            .ok_or_else(|| bad(format!("unknown dtype \"{}\"", cut(dtype_s))))?;
        let shape_v = obj
            .get("shape")
            .and_then(|s| s.as_array())
            .ok_or_else(|| bad("no \"shape\" array".into()))?;
        let mut shape = Vec::with_capacity(shape_v.len());
        let mut elements: u64 = 1;
        for d in shape_v {
            let d = d
                .as_u64()
                .ok_or_else(|| bad(format!("shape entry \"{d}\" is not a non-negative integer")))?;
            elements = elements
                .checked_mul(d)
                .ok_or_else(|| bad(format!("shape {shape_v:?} has more than 2^64 elements")))?;
            shape.push(d);
        }
        let offs = obj
            .get("data_offsets")
            .and_then(|s| s.as_array())
            .filter(|a| a.len() == 2)
            .ok_or_else(|| bad("no \"data_offsets\" pair".into()))?;
        let (Some(begin), Some(end)) = (offs[0].as_u64(), offs[1].as_u64()) else {
            return Err(bad(format!(
                "data_offsets {offs:?} are not non-negative integers"
            )));
        };
        if begin > end {
            return Err(bad(format!(
                "data_offsets [{begin}, {end}] end before they begin"
            )));
        }
        if end > data_len {
            return Err(bad(format!(
                "data_offsets [{begin}, {end}] end at file byte {}, past the end of the file at byte {file_len}",
                data_start.saturating_add(end)
            )));
        }
        let bits = elements
            .checked_mul(dtype.bits())
            .ok_or_else(|| bad("its size overflows".into()))?;
        if bits % 8 != 0 || bits / 8 != end - begin {
            return Err(bad(format!(
                "{elements} elements of {} need {} bytes but data_offsets [{begin}, {end}] hold {}",
                dtype.name(),
                bits.div_ceil(8),
                end - begin
            )));
        }
        tensors.push(TensorEntry {
            name: name.clone(),
            dtype,
            shape,
            elements,
            begin,
            end,
        });
    }
    tensors.sort_by_key(|t| (t.begin, t.end));
    let mut covered_to = 0u64;
    let mut gap_bytes = 0u64;
    let mut prev: Option<&TensorEntry> = None;
    for t in &tensors {
        if t.begin < covered_to {
            let p = prev.map_or("", |p| p.name.as_str());
            return Err(SafetensorsError::at(
                path,
                name_offset(json, &t.name),
                format!(
                    "tensor \"{}\" data_offsets [{}, {}] overlap tensor \"{}\", which ends at {covered_to} (file byte {})",
                    cut(&t.name),
                    t.begin,
                    t.end,
                    cut(p),
                    data_start + covered_to
                ),
            ));
        }
        gap_bytes += t.begin - covered_to;
        covered_to = t.end;
        prev = Some(t);
    }
    gap_bytes += data_len - covered_to;
    Ok(Header {
        header_len,
        data_start,
        file_len,
        tensors,
        metadata,
        gap_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(json: &str, data: usize) -> Vec<u8> {
        let mut v = (json.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(json.as_bytes());
        v.resize(v.len() + data, 0);
        v
    }

    #[test]
    fn reads_a_header() {
        let j = r#"{"__metadata__":{"format":"mlx"},"b":{"dtype":"BF16","shape":[2,3],"data_offsets":[16,28]},"a":{"dtype":"U32","shape":[4],"data_offsets":[0,16]}}"#;
        let f = file(j, 28);
        let h = read_header(&mut &f[..], f.len() as u64, Path::new("x")).unwrap();
        assert_eq!(h.tensors[0].name, "a");
        assert_eq!(h.tensors[1].bytes(), 12);
        assert_eq!(h.tensors[1].elements, 6);
        assert_eq!(h.metadata["format"], "mlx");
        assert_eq!(h.gap_bytes, 0);
        assert_eq!(h.data_start, 8 + j.len() as u64);
    }

    #[test]
    fn json_error_names_the_byte() {
        let j = r#"{"a":{"dtype":"BF16",,}}"#;
        let f = file(j, 0);
        let e = read_header(&mut &f[..], f.len() as u64, Path::new("m.safetensors"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("\"m.safetensors\" byte 29:"), "{e}");
        assert!(!e.contains('\n'));
    }
}
