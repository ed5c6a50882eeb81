//! A small GGUF writer for fixtures: versions 2 and 3, either byte order, any metadata and
//! tensor infos (including malformed ones, through the `raw` methods), with the tensor data
//! written as real zeros or as a sparse file of the full size. Used by the tests, the fuzz
//! seeds and the benches; it never writes real weights.
//! Depends on nothing outside `gguf`.

use super::types::{Endian, GgmlType, Value, ValueType};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// How `GgufWriter::write_file` fills the tensor data region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// Only the header (and its padding): a file whose tensors end past its end.
    HeaderOnly,
    /// Zeros written out (small fixtures).
    Zeros,
    /// The file extended to its full size with `set_len` (sparse where the file system
    /// allows: a 20 GB fixture takes no disk).
    Sparse,
}

#[derive(Debug, Clone)]
enum Kv {
    Typed(String, Value),
    Raw {
        key: Vec<u8>,
        type_id: u32,
        payload: Vec<u8>,
    },
}

#[derive(Debug, Clone)]
struct Tensor {
    name: Vec<u8>,
    type_id: u32,
    dims: Vec<u64>,
    offset: Option<u64>,
    bytes: Option<u64>,
}

/// Builds a GGUF file in memory. Offsets not given explicitly are assigned in order, each
/// aligned to the alignment, as llama.cpp's writers do.
#[derive(Debug, Clone)]
pub struct GgufWriter {
    version: u32,
    endian: Endian,
    alignment: u64,
    kvs: Vec<Kv>,
    tensors: Vec<Tensor>,
}

impl Default for GgufWriter {
    fn default() -> Self {
        Self::new()
    }
}

/// A string value.
pub fn string(s: &str) -> Value {
    Value::String(s.to_string())
}

/// An array of u32.
pub fn u32_array(v: &[u32]) -> Value {
    Value::Array {
        element_type: ValueType::U32,
        items: v.iter().map(|x| Value::U32(*x)).collect(),
    }
}

/// An array of i32.
pub fn i32_array(v: &[i32]) -> Value {
    Value::Array {
        element_type: ValueType::I32,
        items: v.iter().map(|x| Value::I32(*x)).collect(),
    }
}

/// An array of bools.
pub fn bool_array(v: &[bool]) -> Value {
    Value::Array {
        element_type: ValueType::Bool,
        items: v.iter().map(|x| Value::Bool(*x)).collect(),
    }
}

/// An array of f32.
pub fn f32_array(v: &[f32]) -> Value {
    Value::Array {
        element_type: ValueType::F32,
        items: v.iter().map(|x| Value::F32(*x)).collect(),
    }
}

/// An array of strings.
pub fn string_array<S: AsRef<str>>(v: impl IntoIterator<Item = S>) -> Value {
    Value::Array {
        element_type: ValueType::String,
        items: v
            .into_iter()
            .map(|s| Value::String(s.as_ref().to_string()))
            .collect(),
    }
}

struct Out {
    buf: Vec<u8>,
    endian: Endian,
}

impl Out {
    fn put<const N: usize>(&mut self, mut le: [u8; N]) {
        if self.endian == Endian::Big {
            le.reverse();
        }
        self.buf.extend_from_slice(&le);
    }
    fn u32(&mut self, v: u32) {
        self.put(v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.put(v.to_le_bytes());
    }
    fn bytes_with_len(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.buf.extend_from_slice(b);
    }
    fn value(&mut self, v: &Value) {
        match v {
            Value::U8(x) => self.put(x.to_le_bytes()),
            Value::I8(x) => self.put(x.to_le_bytes()),
            Value::U16(x) => self.put(x.to_le_bytes()),
            Value::I16(x) => self.put(x.to_le_bytes()),
            Value::U32(x) => self.put(x.to_le_bytes()),
            Value::I32(x) => self.put(x.to_le_bytes()),
            Value::F32(x) => self.put(x.to_le_bytes()),
            Value::Bool(x) => self.put([u8::from(*x)]),
            Value::String(s) => self.bytes_with_len(s.as_bytes()),
            Value::Array {
                element_type,
                items,
            } => {
                self.u32(element_type.id());
                self.u64(items.len() as u64);
                for item in items {
                    self.value(item);
                }
            }
            // A skipped array has no elements in memory: written empty.
            Value::Skipped(s) => {
                self.u32(s.element_type.id());
                self.u64(0);
            }
            Value::U64(x) => self.put(x.to_le_bytes()),
            Value::I64(x) => self.put(x.to_le_bytes()),
            Value::F64(x) => self.put(x.to_le_bytes()),
        }
    }
}

impl GgufWriter {
    /// Version 3, little-endian, alignment 32, nothing in it.
    pub fn new() -> Self {
        GgufWriter {
            version: 3,
            endian: Endian::Little,
            alignment: 32,
            kvs: Vec::new(),
            tensors: Vec::new(),
        }
    }

    /// Set the version field (2 and 3 are valid; others make malformed files).
    pub fn version(mut self, version: u32) -> Self {
        self.version = version;
        self
    }

    /// Set the byte order.
    pub fn endian(mut self, endian: Endian) -> Self {
        self.endian = endian;
        self
    }

    /// Add `general.alignment` (u32) and pad and place tensors with it.
    pub fn alignment(mut self, alignment: u32) -> Self {
        self.alignment = u64::from(alignment).max(1);
        self.kv("general.alignment", Value::U32(alignment))
    }

    /// Pad and place tensors with `alignment` without writing the key (for malformed files).
    pub fn padding(mut self, alignment: u64) -> Self {
        self.alignment = alignment.max(1);
        self
    }

    /// Add a metadata key/value.
    pub fn kv(mut self, key: &str, value: Value) -> Self {
        self.kvs.push(Kv::Typed(key.to_string(), value));
        self
    }

    /// Add a metadata record from raw parts: key bytes (any, even invalid UTF-8), a type id
    /// (any, even unknown) and the value's bytes as they go in the file.
    pub fn kv_raw(mut self, key: &[u8], type_id: u32, payload: Vec<u8>) -> Self {
        self.kvs.push(Kv::Raw {
            key: key.to_vec(),
            type_id,
            payload,
        });
        self
    }

    /// Add a tensor info, its offset assigned after the previous tensor.
    pub fn tensor(mut self, name: &str, ggml_type: GgmlType, dims: &[u64]) -> Self {
        self.tensors.push(Tensor {
            name: name.as_bytes().to_vec(),
            type_id: ggml_type.0,
            dims: dims.to_vec(),
            offset: None,
            bytes: None,
        });
        self
    }

    /// Add a tensor info with an explicit data offset.
    pub fn tensor_at(mut self, name: &str, ggml_type: GgmlType, dims: &[u64], offset: u64) -> Self {
        self.tensors.push(Tensor {
            name: name.as_bytes().to_vec(),
            type_id: ggml_type.0,
            dims: dims.to_vec(),
            offset: Some(offset),
            bytes: None,
        });
        self
    }

    /// Add a tensor info from raw parts; `bytes` sizes the data of a type the table does not
    /// know (for placing the next tensor), `offset` `None` = assigned.
    pub fn tensor_raw(
        mut self,
        name: &[u8],
        type_id: u32,
        dims: &[u64],
        offset: Option<u64>,
        bytes: Option<u64>,
    ) -> Self {
        self.tensors.push(Tensor {
            name: name.to_vec(),
            type_id,
            dims: dims.to_vec(),
            offset,
            bytes,
        });
        self
    }

    fn tensor_bytes(t: &Tensor) -> u64 {
        if let Some(b) = t.bytes {
            return b;
        }
        let elements = t
            .dims
            .iter()
            .try_fold(1u64, |a, d| a.checked_mul(*d))
            .unwrap_or(0);
        GgmlType(t.type_id).bytes_for(elements).unwrap_or(0)
    }

    /// The data offsets (relative to the data start) each tensor gets.
    pub fn offsets(&self) -> Vec<u64> {
        let mut next = 0u64;
        let mut out = Vec::with_capacity(self.tensors.len());
        for t in &self.tensors {
            let off = t
                .offset
                .unwrap_or_else(|| next.next_multiple_of(self.alignment));
            out.push(off);
            next = off.saturating_add(Self::tensor_bytes(t));
        }
        out
    }

    /// Length of the tensor data region: the end of the tensor that ends last.
    pub fn data_len(&self) -> u64 {
        self.offsets()
            .iter()
            .zip(&self.tensors)
            .map(|(o, t)| o.saturating_add(Self::tensor_bytes(t)))
            .max()
            .unwrap_or(0)
    }

    /// The header, padded to the data start.
    pub fn header_bytes(&self) -> Vec<u8> {
        let mut out = Out {
            buf: Vec::new(),
            endian: self.endian,
        };
        out.buf.extend_from_slice(b"GGUF");
        out.u32(self.version);
        out.u64(self.tensors.len() as u64);
        out.u64(self.kvs.len() as u64);
        for kv in &self.kvs {
            match kv {
                Kv::Typed(key, value) => {
                    out.bytes_with_len(key.as_bytes());
                    out.u32(value.value_type().id());
                    out.value(value);
                }
                Kv::Raw {
                    key,
                    type_id,
                    payload,
                } => {
                    out.bytes_with_len(key);
                    out.u32(*type_id);
                    out.buf.extend_from_slice(payload);
                }
            }
        }
        for (t, off) in self.tensors.iter().zip(self.offsets()) {
            out.bytes_with_len(&t.name);
            out.u32(t.dims.len() as u32);
            for d in &t.dims {
                out.u64(*d);
            }
            out.u32(t.type_id);
            out.u64(off);
        }
        let padded = (out.buf.len() as u64).next_multiple_of(self.alignment);
        out.buf.resize(padded as usize, 0);
        out.buf
    }

    /// The whole file in memory, tensor data as zeros.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = self.header_bytes();
        let total = b.len() as u64 + self.data_len();
        b.resize(total as usize, 0);
        b
    }

    /// Write the file; returns its length in bytes.
    pub fn write_file(&self, path: &Path, data: Data) -> io::Result<u64> {
        let header = self.header_bytes();
        let total = header.len() as u64 + self.data_len();
        let file = File::create(path)?;
        let mut w = BufWriter::new(file);
        w.write_all(&header)?;
        match data {
            Data::HeaderOnly => {
                w.flush()?;
                Ok(header.len() as u64)
            }
            Data::Zeros => {
                let zeros = vec![0u8; 1 << 16];
                let mut left = total - header.len() as u64;
                while left > 0 {
                    let n = left.min(zeros.len() as u64) as usize;
                    w.write_all(&zeros[..n])?;
                    left -= n as u64;
                }
                w.flush()?;
                Ok(total)
            }
            Data::Sparse => {
                let file = w.into_inner().map_err(|e| e.into_error())?;
                file.set_len(total)?;
                Ok(total)
            }
        }
    }
}
