//! The GGUF header reader: magic, version, metadata in file order, tensor infos. Reads from
//! any `Read + Seek` and never reads tensor data. Every count and length is bounded by the
//! bytes left in the file before anything is allocated.
//! Depends on nothing outside `gguf`.

use super::GgufError;
use super::types::{Endian, GgmlType, SkippedArray, TensorInfo, Value, ValueType};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Read, Seek, SeekFrom};

/// ggml's `GGML_MAX_DIMS`.
pub const MAX_DIMS: u32 = 4;
/// How deep arrays of arrays may nest.
pub const MAX_ARRAY_DEPTH: usize = 4;
/// Arrays larger than this in the file are left there (`Value::Skipped`).
pub const KEEP_ARRAY_BYTES: u64 = 64 * 1024;
/// Alignment when `general.alignment` is absent (`GGUF_DEFAULT_ALIGNMENT`).
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// Fewest bytes of a metadata key/value: key length (8) + type (4) + a 1-byte value.
const MIN_KV_BYTES: u64 = 13;
/// Fewest bytes of a tensor info: name length (8) + n_dims (4) + type (4) + offset (8).
const MIN_TENSOR_INFO_BYTES: u64 = 24;
/// Cap on up-front reservations; vectors grow as records are actually read.
const MAX_RESERVE: u64 = 4096;
/// Skips up to this size read through the buffer instead of seeking.
const SKIP_BY_READING: u64 = 64 * 1024;

/// One metadata key/value pair, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataEntry {
    /// The key, any UTF-8 (`gpt-oss.block_count` is legal).
    pub key: String,
    /// The value.
    pub value: Value,
    /// Byte offset of the key/value record in the file.
    pub offset: u64,
}

/// Metadata in file order with typed getters. Typed getters return `Ok(None)` when the key is
/// absent and an error naming the key when it has an unusable type.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metadata {
    /// The entries in file order.
    pub entries: Vec<MetadataEntry>,
}

impl Metadata {
    /// The entry for `key`.
    pub fn get(&self, key: &str) -> Option<&MetadataEntry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The value for `key`.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.get(key).map(|e| &e.value)
    }

    /// Entries in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, MetadataEntry> {
        self.entries.iter()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn wrong(e: &MetadataEntry, expected: &str) -> GgufError {
        GgufError::WrongType {
            key: e.key.clone(),
            expected: expected.into(),
            found: match &e.value {
                Value::String(_) | Value::Array { .. } | Value::Skipped(_) => {
                    e.value.type_description()
                }
                v => format!("{} \"{v}\"", v.value_type()),
            },
            offset: e.offset,
        }
    }

    /// A non-negative integer of any width.
    pub fn get_u64(&self, key: &str) -> Result<Option<u64>, GgufError> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => e
                .value
                .as_u64()
                .map(Some)
                .ok_or_else(|| Self::wrong(e, "a non-negative integer")),
        }
    }

    /// A non-negative integer that fits u32.
    pub fn get_u32(&self, key: &str) -> Result<Option<u32>, GgufError> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => e
                .value
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .map(Some)
                .ok_or_else(|| Self::wrong(e, "an integer between 0 and 4,294,967,295")),
        }
    }

    /// A string.
    pub fn get_str(&self, key: &str) -> Result<Option<&str>, GgufError> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => e
                .value
                .as_str()
                .map(Some)
                .ok_or_else(|| Self::wrong(e, "a string")),
        }
    }

    /// A float or an integer.
    pub fn get_f64(&self, key: &str) -> Result<Option<f64>, GgufError> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => e
                .value
                .as_f64()
                .map(Some)
                .ok_or_else(|| Self::wrong(e, "a number")),
        }
    }

    /// A bool.
    pub fn get_bool(&self, key: &str) -> Result<Option<bool>, GgufError> {
        match self.get(key) {
            None => Ok(None),
            Some(e) => e
                .value
                .as_bool()
                .map(Some)
                .ok_or_else(|| Self::wrong(e, "a bool")),
        }
    }

    /// An array of integers that fit u32 (per-layer figures such as
    /// `<arch>.attention.head_count_kv`).
    pub fn get_u32_array(&self, key: &str) -> Result<Option<Vec<u32>>, GgufError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        let expected = "an array of integers between 0 and 4,294,967,295";
        match &e.value {
            Value::Array { items, .. } => items
                .iter()
                .map(|v| v.as_u64().and_then(|x| u32::try_from(x).ok()))
                .collect::<Option<Vec<u32>>>()
                .map(Some)
                .ok_or_else(|| Self::wrong(e, expected)),
            _ => Err(Self::wrong(e, expected)),
        }
    }

    /// An array of bools (`<arch>.attention.sliding_window_pattern`).
    pub fn get_bool_array(&self, key: &str) -> Result<Option<Vec<bool>>, GgufError> {
        let Some(e) = self.get(key) else {
            return Ok(None);
        };
        match &e.value {
            Value::Array { items, .. } => items
                .iter()
                .map(Value::as_bool)
                .collect::<Option<Vec<bool>>>()
                .map(Some)
                .ok_or_else(|| Self::wrong(e, "an array of bools")),
            _ => Err(Self::wrong(e, "an array of bools")),
        }
    }

    /// Number of elements of an array value (kept or skipped), e.g. the tokenizer's tokens.
    pub fn array_len(&self, key: &str) -> Option<u64> {
        self.value(key).and_then(Value::array_len)
    }

    /// `general.architecture`.
    pub fn architecture(&self) -> Option<&str> {
        self.value("general.architecture").and_then(Value::as_str)
    }
}

/// A GGUF header as read from one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// GGUF version (2 or 3).
    pub version: u32,
    /// Byte order of the file.
    pub endian: Endian,
    /// Data alignment in bytes (`general.alignment`, default 32).
    pub alignment: u64,
    /// Metadata in file order.
    pub metadata: Metadata,
    /// Tensor infos in file order.
    pub tensors: Vec<TensorInfo>,
    /// Byte offset where the tensor infos end.
    pub header_end: u64,
    /// Byte offset of the tensor data: `header_end` aligned up.
    pub data_start: u64,
    /// File length in bytes.
    pub file_len: u64,
    /// End of the last tensor's data (absolute), tensors of unknown type left out.
    pub data_end: u64,
    /// Bytes the file is short of `data_end` (a partial download when non-zero).
    pub missing_bytes: u64,
    /// What is unusual but readable (unknown tensor types, zero-size dims, …).
    pub warnings: Vec<String>,
}

impl Header {
    /// Σ tensor bytes of known types (saturating at `u64::MAX`).
    pub fn tensor_bytes(&self) -> u64 {
        super::inventory::saturating_sum(self.tensors.iter().filter_map(|t| t.bytes))
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name() == name)
    }
}

/// A lazily built description of what is being read, for error messages only.
type What<'a> = &'a dyn Fn() -> String;

struct Src<R> {
    r: R,
    pos: u64,
    len: u64,
    endian: Endian,
    /// Reused by `skip_strings`.
    chunk: Vec<u8>,
    /// Bytes read from `r` past the position (`ahead[ahead_at..]` are at `pos..`): what
    /// `skip_strings` read beyond the end of its array is kept here rather than given back by
    /// seeking backwards, so the reader only ever moves forward (a ranged HTTP reader refetches
    /// on a backward seek, and its header cache only grows while reads are in order).
    ahead: Vec<u8>,
    ahead_at: usize,
}

/// Bytes `skip_strings` reads at a time.
const SKIP_CHUNK: usize = 64 * 1024;

impl<R: Read + Seek> Src<R> {
    fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    fn truncated(&self, needed: u64, what: What) -> GgufError {
        GgufError::Truncated {
            offset: self.pos,
            what: what(),
            needed,
            file_len: self.len,
        }
    }

    fn io_err(&self, e: io::Error, needed: u64, what: What) -> GgufError {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            self.truncated(needed, what)
        } else {
            GgufError::Io {
                offset: self.pos,
                what: what(),
                source: e,
            }
        }
    }

    /// Copy bytes read ahead into `buf`; returns how many.
    fn take_ahead(&mut self, buf: &mut [u8]) -> usize {
        let avail = self.ahead.len() - self.ahead_at;
        if avail == 0 {
            return 0;
        }
        let k = avail.min(buf.len());
        buf[..k].copy_from_slice(&self.ahead[self.ahead_at..self.ahead_at + k]);
        self.drop_ahead(k);
        k
    }

    /// Consume `k` bytes read ahead.
    fn drop_ahead(&mut self, k: usize) {
        self.ahead_at += k;
        if self.ahead_at == self.ahead.len() {
            self.ahead.clear();
            self.ahead_at = 0;
        }
    }

    fn fill(&mut self, buf: &mut [u8], what: What) -> Result<(), GgufError> {
        let n = buf.len() as u64;
        if self.remaining() < n {
            return Err(self.truncated(n, what));
        }
        let k = self.take_ahead(buf);
        if k < buf.len() {
            self.r
                .read_exact(&mut buf[k..])
                .map_err(|e| self.io_err(e, n, what))?;
        }
        self.pos += n;
        Ok(())
    }

    fn array<const N: usize>(&mut self, what: What) -> Result<[u8; N], GgufError> {
        let mut b = [0u8; N];
        self.fill(&mut b, what)?;
        if self.endian == Endian::Big {
            b.reverse();
        }
        // Bytes are now little-endian.
        Ok(b)
    }

    fn u8(&mut self, what: What) -> Result<u8, GgufError> {
        Ok(self.array::<1>(what)?[0])
    }
    fn u16(&mut self, what: What) -> Result<u16, GgufError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    fn u32(&mut self, what: What) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn u64(&mut self, what: What) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// Skip `n` bytes (already checked against the file length by the caller or here).
    fn skip(&mut self, n: u64, what: What) -> Result<(), GgufError> {
        if self.remaining() < n {
            return Err(self.truncated(n, what));
        }
        let k = ((self.ahead.len() - self.ahead_at) as u64).min(n);
        if k > 0 {
            self.drop_ahead(k as usize);
            self.pos += k;
        }
        let n = n - k;
        if n <= SKIP_BY_READING {
            // Through the caller's buffer: most skips are short strings.
            let mut scratch = [0u8; 512];
            let mut left = n;
            while left > 0 {
                let k = left.min(scratch.len() as u64) as usize;
                self.r
                    .read_exact(&mut scratch[..k])
                    .map_err(|e| self.io_err(e, left, what))?;
                self.pos += k as u64;
                left -= k as u64;
            }
            return Ok(());
        } else {
            let delta = i64::try_from(n).map_err(|_| self.truncated(n, what))?;
            self.r
                .seek(SeekFrom::Current(delta))
                .map_err(|e| self.io_err(e, n, what))?;
        }
        self.pos += n;
        Ok(())
    }

    /// A u64 length followed by that many bytes, bounded by the file.
    fn bytes_with_len(&mut self, what: What) -> Result<(Vec<u8>, u64), GgufError> {
        let len_at = self.pos;
        let len = self.u64(&|| format!("the length of {}", what()))?;
        if len > self.remaining() {
            return Err(GgufError::TooLarge {
                what: format!("the length of {}", what()),
                count: len,
                offset: len_at,
                remaining: self.remaining(),
                file_len: self.len,
            });
        }
        let start = self.pos;
        let mut buf = vec![0u8; len as usize];
        self.fill(&mut buf, what)?;
        Ok((buf, start))
    }

    /// A string read into `buf` (reused between calls: no allocation per string).
    fn str_into<'b>(&mut self, buf: &'b mut Vec<u8>, what: What) -> Result<&'b str, GgufError> {
        let len_at = self.pos;
        let len = self.u64(&|| format!("the length of {}", what()))?;
        if len > self.remaining() {
            return Err(GgufError::TooLarge {
                what: format!("the length of {}", what()),
                count: len,
                offset: len_at,
                remaining: self.remaining(),
                file_len: self.len,
            });
        }
        let start = self.pos;
        buf.clear();
        buf.resize(len as usize, 0);
        self.fill(buf, what)?;
        std::str::from_utf8(buf).map_err(|_| GgufError::InvalidUtf8 {
            what: what(),
            offset: start,
            lossy: String::from_utf8_lossy(buf).chars().take(80).collect(),
        })
    }

    fn string(&mut self, what: What) -> Result<String, GgufError> {
        let (bytes, start) = self.bytes_with_len(what)?;
        String::from_utf8(bytes).map_err(|e| GgufError::InvalidUtf8 {
            what: what(),
            offset: start,
            lossy: String::from_utf8_lossy(e.as_bytes())
                .chars()
                .take(80)
                .collect(),
        })
    }

    fn scalar(&mut self, t: ValueType, what: What) -> Result<Value, GgufError> {
        Ok(match t {
            ValueType::U8 => Value::U8(self.u8(what)?),
            ValueType::I8 => Value::I8(self.u8(what)? as i8),
            ValueType::U16 => Value::U16(self.u16(what)?),
            ValueType::I16 => Value::I16(self.u16(what)? as i16),
            ValueType::U32 => Value::U32(self.u32(what)?),
            ValueType::I32 => Value::I32(self.u32(what)? as i32),
            ValueType::F32 => Value::F32(f32::from_bits(self.u32(what)?)),
            ValueType::Bool => Value::Bool(self.u8(what)? != 0),
            ValueType::U64 => Value::U64(self.u64(what)?),
            ValueType::I64 => Value::I64(self.u64(what)? as i64),
            ValueType::F64 => Value::F64(f64::from_bits(self.u64(what)?)),
            ValueType::String => Value::String(self.string(what)?),
            ValueType::Array => unreachable_array(),
        })
    }

    /// An array's element type and length, refusing a length the rest of the file cannot hold.
    fn array_header(&mut self, key: &str) -> Result<(ValueType, u64), GgufError> {
        let type_at = self.pos;
        let type_id = self.u32(&|| format!("the array element type of key {key:?}"))?;
        let element_type = ValueType::from_id(type_id).ok_or(GgufError::UnknownValueType {
            key: key.into(),
            type_id,
            offset: type_at,
        })?;
        let count_at = self.pos;
        let count = self.u64(&|| format!("the array length of key {key:?}"))?;
        let min_bytes = (count as u128) * (element_type.min_size() as u128);
        if min_bytes > self.remaining() as u128 {
            return Err(GgufError::CountTooLarge {
                what: format!("the array length of key {key:?}"),
                count,
                entries: "array elements".into(),
                needed: min_bytes,
                offset: count_at,
                remaining: self.remaining(),
                file_len: self.len,
            });
        }
        Ok((element_type, count))
    }

    /// Read a value of type `t` of metadata key `key`. Arrays deeper than
    /// `MAX_ARRAY_DEPTH` fail; arrays larger than `KEEP_ARRAY_BYTES` are skipped.
    fn value(&mut self, t: ValueType, key: &str, depth: usize) -> Result<Value, GgufError> {
        if t != ValueType::Array {
            return self.scalar(t, &|| format!("the value of key {key:?}"));
        }
        let array_at = self.pos;
        if depth >= MAX_ARRAY_DEPTH {
            return Err(GgufError::NestedTooDeep {
                key: key.into(),
                limit: MAX_ARRAY_DEPTH,
                offset: array_at,
            });
        }
        let (element_type, count) = self.array_header(key)?;
        let first = self.pos;
        if let Some(size) = element_type.fixed_size() {
            let total = count * size; // bounded by the file length above
            if total > KEEP_ARRAY_BYTES {
                self.skip(total, &|| format!("the elements of key {key:?}"))?;
                return Ok(Value::Skipped(SkippedArray {
                    element_type,
                    count,
                    offset: first,
                    byte_len: total,
                }));
            }
            let mut items = Vec::with_capacity(count as usize);
            for _ in 0..count {
                items.push(self.scalar(element_type, &|| format!("an element of key {key:?}"))?);
            }
            return Ok(Value::Array {
                element_type,
                items,
            });
        }
        if element_type == ValueType::String {
            return self.string_array(count, key, depth);
        }
        // Arrays: keep while the bytes read stay within the budget, then skip.
        let mut items: Option<Vec<Value>> =
            Some(Vec::with_capacity(count.min(MAX_RESERVE) as usize));
        for _ in 0..count {
            let kept = self.pos - first <= KEEP_ARRAY_BYTES;
            match (&mut items, kept) {
                (Some(list), true) => list.push(self.value(element_type, key, depth + 1)?),
                _ => {
                    items = None;
                    self.skip_value(element_type, key, depth + 1)?;
                }
            }
        }
        let byte_len = self.pos - first;
        match items {
            Some(items) if byte_len <= KEEP_ARRAY_BYTES => Ok(Value::Array {
                element_type,
                items,
            }),
            _ => Ok(Value::Skipped(SkippedArray {
                element_type,
                count,
                offset: first,
                byte_len,
            })),
        }
    }

    /// An array of `count` strings starting at the current position (after its header).
    /// Kept (`Value::Array`) when its elements take at most `KEEP_ARRAY_BYTES`, otherwise left
    /// in the file (`Value::Skipped`). The strings that start within the first
    /// `KEEP_ARRAY_BYTES` are checked as they would be kept (UTF-8, same messages) without
    /// being allocated; the rest are walked by `skip_strings`. A kept array is then read again
    /// from its start: at most 64 KiB, while a tokenizer of 262,144 strings is never
    /// allocated string by string.
    fn string_array(&mut self, count: u64, key: &str, depth: usize) -> Result<Value, GgufError> {
        let first = self.pos;
        let what = || format!("the value of key {key:?}");
        let mut scratch = Vec::new();
        let mut done = 0u64;
        while done < count && self.pos - first <= KEEP_ARRAY_BYTES {
            self.str_into(&mut scratch, &what)?;
            done += 1;
        }
        self.skip_strings(count - done, key)?;
        let byte_len = self.pos - first;
        if byte_len > KEEP_ARRAY_BYTES {
            return Ok(Value::Skipped(SkippedArray {
                element_type: ValueType::String,
                count,
                offset: first,
                byte_len,
            }));
        }
        let end = self.pos;
        self.seek_to(first, &what)?;
        let mut items = Vec::with_capacity(count.min(MAX_RESERVE) as usize);
        for _ in 0..count {
            items.push(self.value(ValueType::String, key, depth + 1)?);
        }
        debug_assert_eq!(self.pos, end);
        Ok(Value::Array {
            element_type: ValueType::String,
            items,
        })
    }

    /// Move to `offset` of the file.
    fn seek_to(&mut self, offset: u64, what: What) -> Result<(), GgufError> {
        self.ahead.clear();
        self.ahead_at = 0;
        self.r
            .seek(SeekFrom::Start(offset))
            .map_err(|e| self.io_err(e, 0, what))?;
        self.pos = offset;
        Ok(())
    }

    /// Walk over `count` length-prefixed strings without keeping or checking them (as
    /// `skip_value` does one at a time, with the same messages), reading the bytes in chunks
    /// of `SKIP_CHUNK`: a tokenizer is 262,144 strings, and two small reads per string took
    /// most of the time of reading a whole header. Every length is bounded by the file.
    fn skip_strings(&mut self, count: u64, key: &str) -> Result<(), GgufError> {
        if count == 0 {
            return Ok(());
        }
        let mut buf = std::mem::take(&mut self.chunk);
        buf.resize(SKIP_CHUNK, 0);
        let r = self.skip_strings_with(count, key, &mut buf);
        self.chunk = buf;
        r
    }

    fn skip_strings_with(
        &mut self,
        count: u64,
        key: &str,
        buf: &mut [u8],
    ) -> Result<(), GgufError> {
        let len_what = || format!("a string length in key {key:?}");
        // `buf[at..have]` are the bytes at file offsets `base + at ..`; the reader is at
        // `base + have`.
        let mut base = self.pos;
        // Bytes already read ahead (at most one chunk, left by an earlier call) come first.
        let pending = self.ahead.len() - self.ahead_at;
        buf[..pending].copy_from_slice(&self.ahead[self.ahead_at..]);
        self.ahead.clear();
        self.ahead_at = 0;
        let (mut at, mut have) = (0usize, pending);
        for _ in 0..count {
            if have - at < 8 {
                buf.copy_within(at..have, 0);
                have -= at;
                base += at as u64;
                at = 0;
                let room = self
                    .len
                    .saturating_sub(base + have as u64)
                    .min((buf.len() - have) as u64) as usize;
                let limit = have + room;
                while have < 8 && have < limit {
                    match self.r.read(&mut buf[have..limit]) {
                        Ok(0) => break,
                        Ok(n) => have += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            self.pos = base;
                            return Err(self.io_err(e, 8, &len_what));
                        }
                    }
                }
                if have < 8 {
                    self.pos = base;
                    return Err(self.truncated(8, &len_what));
                }
            }
            let len_at = base + at as u64;
            let mut raw = [0u8; 8];
            raw.copy_from_slice(&buf[at..at + 8]);
            let len = match self.endian {
                Endian::Little => u64::from_le_bytes(raw),
                Endian::Big => u64::from_be_bytes(raw),
            };
            let remaining = self.len.saturating_sub(len_at + 8);
            if len > remaining {
                self.pos = len_at + 8;
                return Err(GgufError::TooLarge {
                    what: len_what(),
                    count: len,
                    offset: len_at,
                    remaining,
                    file_len: self.len,
                });
            }
            let end = at as u64 + 8 + len;
            if end <= have as u64 {
                at = end as usize;
            } else {
                // Past the chunk: move the reader to the end of this string, reading through
                // a short distance (seeking drops a buffered reader's buffer), seeking a long one.
                let past = end - have as u64;
                self.pos = base + have as u64;
                let what = || format!("a string in key {key:?}");
                if past <= SKIP_BY_READING {
                    let mut left = past;
                    while left > 0 {
                        let k = left.min(buf.len() as u64) as usize;
                        self.r
                            .read_exact(&mut buf[..k])
                            .map_err(|e| self.io_err(e, left, &what))?;
                        left -= k as u64;
                    }
                } else {
                    let delta = i64::try_from(past).map_err(|_| self.truncated(past, &what))?;
                    self.r
                        .seek(SeekFrom::Current(delta))
                        .map_err(|e| self.io_err(e, past, &what))?;
                }
                base += end;
                at = 0;
                have = 0;
            }
        }
        // What was read past the last string is read from `ahead` next.
        self.pos = base + at as u64;
        self.ahead.clear();
        self.ahead.extend_from_slice(&buf[at..have]);
        self.ahead_at = 0;
        Ok(())
    }

    /// How many of the next `count` records are whole tensor infos (a name within the file,
    /// at most `MAX_DIMS` dims, all fields present), walked without keeping anything; the
    /// position is restored. The tensor list is then allocated once at its real size: grown
    /// by doubling, it was copied (old and new copy resident together) and left up to twice
    /// its size. A count the file cannot back is never reserved.
    fn count_tensor_records(&mut self, count: u64) -> Result<u64, GgufError> {
        let start = self.pos;
        let none = || String::new();
        let mut n = 0u64;
        while n < count {
            let Ok(len) = self.u64(&none) else { break };
            if len > self.remaining() || self.skip(len, &none).is_err() {
                break;
            }
            let Ok(dims) = self.u32(&none) else { break };
            if dims > MAX_DIMS || self.skip(8 * u64::from(dims) + 4 + 8, &none).is_err() {
                break;
            }
            n += 1;
        }
        self.seek_to(start, &|| "the tensor infos".to_string())?;
        Ok(n)
    }

    /// Walk over a value without keeping it (strings are not checked for UTF-8).
    fn skip_value(&mut self, t: ValueType, key: &str, depth: usize) -> Result<(), GgufError> {
        match t {
            ValueType::String => {
                let len_at = self.pos;
                let len = self.u64(&|| format!("a string length in key {key:?}"))?;
                if len > self.remaining() {
                    return Err(GgufError::TooLarge {
                        what: format!("a string length in key {key:?}"),
                        count: len,
                        offset: len_at,
                        remaining: self.remaining(),
                        file_len: self.len,
                    });
                }
                self.skip(len, &|| format!("a string in key {key:?}"))
            }
            ValueType::Array => {
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(GgufError::NestedTooDeep {
                        key: key.into(),
                        limit: MAX_ARRAY_DEPTH,
                        offset: self.pos,
                    });
                }
                let (element_type, count) = self.array_header(key)?;
                match element_type.fixed_size() {
                    Some(size) => {
                        self.skip(count * size, &|| format!("the elements of key {key:?}"))
                    }
                    None if element_type == ValueType::String => self.skip_strings(count, key),
                    None => {
                        for _ in 0..count {
                            self.skip_value(element_type, key, depth + 1)?;
                        }
                        Ok(())
                    }
                }
            }
            other => {
                let size = other.fixed_size().unwrap_or(1);
                self.skip(size, &|| format!("the value of key {key:?}"))
            }
        }
    }
}

fn unreachable_array() -> Value {
    // `scalar` is never called with `Array`; keep a harmless value rather than panic.
    Value::Array {
        element_type: ValueType::U8,
        items: Vec::new(),
    }
}

/// Escape the first bytes of a file for a message: `PK\x03\x04`.
fn escape_start(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes.iter().take(8) {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' {
            s.push(b as char);
        } else if b == b' ' {
            s.push(' ');
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

/// What a file that is not GGUF looks like, from its first bytes.
pub fn sniff(start: &[u8], file_len: u64) -> String {
    let lower: Vec<u8> = start
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .map(|b| b.to_ascii_lowercase())
        .collect();
    if start.starts_with(b"PK\x03\x04") {
        return "a zip archive (a PyTorch .pt/.bin checkpoint?)".into();
    }
    if start.len() >= 9 && start[8] == b'{' {
        let n = u64::from_le_bytes([
            start[0], start[1], start[2], start[3], start[4], start[5], start[6], start[7],
        ]);
        if n.checked_add(8).is_some_and(|end| end <= file_len) {
            return format!(
                "a safetensors file (a {n}-byte JSON header): convert it to GGUF with llama.cpp's convert_hf_to_gguf.py"
            );
        }
    }
    let legacy = [
        (b"lmgg", "ggml"),
        (b"fmgg", "GGMF"),
        (b"tjgg", "GGJT"),
        (b"algg", "GGLA"),
    ];
    for (magic, name) in legacy {
        if start.starts_with(magic) {
            return format!(
                "a legacy {name} file (pre-GGUF llama.cpp format): convert it again to GGUF"
            );
        }
    }
    if start.first() == Some(&0x80) && matches!(start.get(1), Some(2..=5)) {
        return "a Python pickle (a PyTorch checkpoint?)".into();
    }
    if start.starts_with(b"\x93NUMPY") {
        return "a NumPy array file".into();
    }
    if lower.starts_with(b"version https://git-lfs") {
        return "a Git LFS pointer file, not the model itself: fetch the real file (git lfs pull)"
            .into();
    }
    if lower.starts_with(b"<!doctype") || lower.starts_with(b"<html") || lower.starts_with(b"<?xml")
    {
        return "an HTML page (a download that saved a web page instead of the model?)".into();
    }
    if lower.first() == Some(&b'{') || lower.first() == Some(&b'[') {
        return "JSON text".into();
    }
    if !start.is_empty()
        && std::str::from_utf8(start).is_ok_and(|s| {
            s.chars()
                .all(|c| !c.is_control() || c.is_ascii_whitespace())
        })
    {
        return "a text file".into();
    }
    "unrecognised binary data".into()
}

/// The first tensor name in file order that repeats an earlier one, as the error to report.
/// `names` are the records read, `pending` the name (and record offset) of a record whose
/// reading failed after its name; `hashes` the names' hashes in file order (sorted here).
fn first_duplicate(
    tensors: &[TensorInfo],
    pending: Option<(&str, u64)>,
    hashes: &mut [u64],
    hasher: &RandomState,
) -> Option<GgufError> {
    hashes.sort_unstable();
    let repeated: HashSet<u64> = hashes
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    if repeated.is_empty() {
        return None;
    }
    let records = tensors
        .iter()
        .map(|t| (t.name(), t.header_offset))
        .chain(pending);
    // Only the names whose hash repeats are kept.
    let mut seen: HashMap<u64, Vec<&str>> = HashMap::new();
    for (name, offset) in records {
        let h = hasher.hash_one(name);
        if !repeated.contains(&h) {
            continue;
        }
        let same = seen.entry(h).or_default();
        if same.contains(&name) {
            return Some(GgufError::DuplicateTensor {
                name: name.into(),
                offset,
            });
        }
        same.push(name);
    }
    None
}

/// Read a GGUF header from `r` (positioned anywhere; it is rewound), whose total length is
/// `file_len` bytes. Tensor data is never read. Reads are small (a tokenizer is hundreds of
/// thousands of length-prefixed strings): give it a buffered reader, as `open` does.
pub fn read_header<R: Read + Seek>(r: R, file_len: u64) -> Result<Header, GgufError> {
    read_header_with(r, file_len, u64::MAX, false)
}

/// As [`read_header`], for a reader that may fetch at most `limit` bytes from byte 0 (a remote
/// header cap): the key/value and tensor counts are checked against the bytes the limit
/// leaves, not the size the server claims. `single_pass`: never walk the tensor list twice
/// (a ranged HTTP reader would fetch it again); the list then grows as it is read.
pub fn read_header_with<R: Read + Seek>(
    mut r: R,
    file_len: u64,
    limit: u64,
    single_pass: bool,
) -> Result<Header, GgufError> {
    if file_len == 0 {
        return Err(GgufError::Empty);
    }
    r.seek(SeekFrom::Start(0)).map_err(|e| GgufError::Io {
        offset: 0,
        what: "the start of the file".into(),
        source: e,
    })?;
    let mut src = Src {
        r,
        pos: 0,
        len: file_len,
        endian: Endian::Little,
        chunk: Vec::new(),
        ahead: Vec::new(),
        ahead_at: 0,
    };

    // Magic, sniffing what the file is when it is not GGUF.
    let mut start = [0u8; 64];
    let n = file_len.min(64) as usize;
    src.fill(&mut start[..n], &|| "the magic".to_string())?;
    if !start[..n].starts_with(b"GGUF") {
        if n < 4 && b"GGUF".starts_with(&start[..n]) {
            return Err(GgufError::Truncated {
                offset: 0,
                what: "the magic".into(),
                needed: 4,
                file_len,
            });
        }
        return Err(GgufError::BadMagic {
            start: escape_start(&start[..n]),
            looks_like: sniff(&start[..n], file_len),
        });
    }
    src.r.seek(SeekFrom::Start(4)).map_err(|e| GgufError::Io {
        offset: 4,
        what: "the version".into(),
        source: e,
    })?;
    src.pos = 4;

    // Version, and from it the byte order.
    let raw = src.array::<4>(&|| "the version".to_string())?;
    let le = u32::from_le_bytes(raw);
    let be = u32::from_be_bytes(raw);
    let version = match (le, be) {
        (2 | 3, _) => le,
        (_, 2 | 3) => {
            src.endian = Endian::Big;
            be
        }
        (1, _) | (_, 1) => return Err(GgufError::Version1),
        _ => return Err(GgufError::UnknownVersion { version: le }),
    };

    let count_at = src.pos;
    let tensor_count = src.u64(&|| "the tensor count".to_string())?;
    let kv_at = src.pos;
    let kv_count = src.u64(&|| "the metadata key/value count".to_string())?;
    let room = src.remaining().min(limit.saturating_sub(src.pos));
    if (kv_count as u128) * (MIN_KV_BYTES as u128) > room as u128 {
        return Err(GgufError::CountTooLarge {
            what: "the metadata key/value count".into(),
            count: kv_count,
            entries: "key/value entries".into(),
            needed: (kv_count as u128) * (MIN_KV_BYTES as u128),
            offset: kv_at,
            remaining: room,
            file_len,
        });
    }
    if (tensor_count as u128) * (MIN_TENSOR_INFO_BYTES as u128) > room as u128 {
        return Err(GgufError::CountTooLarge {
            what: "the tensor count".into(),
            count: tensor_count,
            entries: "tensor entries".into(),
            needed: (tensor_count as u128) * (MIN_TENSOR_INFO_BYTES as u128),
            offset: count_at,
            remaining: room,
            file_len,
        });
    }

    // Metadata.
    let mut entries: Vec<MetadataEntry> = Vec::with_capacity(kv_count.min(MAX_RESERVE) as usize);
    let mut keys: HashSet<String> = HashSet::new();
    for i in 0..kv_count {
        let offset = src.pos;
        let key = src.string(&|| format!("metadata key #{i}"))?;
        if keys.contains(&key) {
            return Err(GgufError::DuplicateKey { key, offset });
        }
        let type_at = src.pos;
        let type_id = src.u32(&|| format!("the value type of key {key:?}"))?;
        let t = ValueType::from_id(type_id).ok_or_else(|| GgufError::UnknownValueType {
            key: key.clone(),
            type_id,
            offset: type_at,
        })?;
        let value = src.value(t, &key, 0)?;
        keys.insert(key.clone());
        entries.push(MetadataEntry { key, value, offset });
    }
    let metadata = Metadata { entries };

    // Alignment.
    let alignment = match metadata.get("general.alignment") {
        None => DEFAULT_ALIGNMENT,
        Some(e) => {
            let v = e.value.as_u64().ok_or_else(|| GgufError::WrongType {
                key: e.key.clone(),
                expected: "an unsigned integer".into(),
                found: e.value.type_description(),
                offset: e.offset,
            })?;
            if v == 0 || !v.is_power_of_two() {
                return Err(GgufError::BadAlignment {
                    value: v,
                    offset: e.offset,
                });
            }
            v
        }
    };

    // Tensor infos. Names are checked for duplicates through their 64-bit hashes (randomly
    // keyed, so a file cannot aim for collisions), 8 bytes a tensor in a list sorted once at
    // the end, rather than a second copy of every name or a hash set (about 19 bytes a tensor
    // at a million, and a cache miss per insert). A hash seen twice is confirmed against the
    // names, which only a real duplicate (or a one-in-2^64 accident) costs. The first problem
    // in file order is still the one reported: when a later record fails, the names read
    // before it are checked first (`first_duplicate`).
    let mut warnings = Vec::new();
    // Up to MAX_RESERVE records are reserved as stated (as small as before); a larger list
    // is counted first, so that it is allocated once (and a remote header is not walked
    // twice for an ordinary model).
    let records = if tensor_count <= MAX_RESERVE {
        tensor_count
    } else if single_pass {
        MAX_RESERVE
    } else {
        src.count_tensor_records(tensor_count)?
    } as usize;
    let mut tensors: Vec<TensorInfo> = Vec::with_capacity(records);
    let hasher = RandomState::new();
    let mut name_hashes: Vec<u64> = Vec::with_capacity(records);
    let mut unknown_types: Vec<(GgmlType, String)> = Vec::new();
    // llama.cpp's rule (gguf.cpp, `gguf_init_from_file_impl`): in file order, each tensor's
    // data offset equals the previous tensor's end rounded up to the alignment, the first at 0.
    // `None` after a tensor of unknown type, whose size is unknown: the next one may then
    // start anywhere at or after it.
    let mut expected_offset: Option<u64> = Some(0);
    let mut last_offset = 0u64;
    let mut relative_end = 0u64;
    let mut name_buf: Vec<u8> = Vec::new();
    // The record being read: its offset, and whether its name (in `name_buf`) was read.
    let mut current: (u64, bool) = (0, false);
    let read = (|| -> Result<(), GgufError> {
        for i in 0..tensor_count {
            let offset = src.pos;
            current = (offset, false);
            let name = src.str_into(&mut name_buf, &|| format!("the name of tensor #{i}"))?;
            name_hashes.push(hasher.hash_one(name));
            current.1 = true;
            let n_dims = src.u32(&|| format!("the dimension count of tensor {name:?}"))?;
            if n_dims > MAX_DIMS {
                return Err(GgufError::TooManyDims {
                    name: name.into(),
                    dims: n_dims,
                    offset,
                });
            }
            let mut dim_array = [0u64; MAX_DIMS as usize];
            let dims = &mut dim_array[..n_dims as usize];
            for d in dims.iter_mut() {
                *d = src.u64(&|| format!("a dimension of tensor {name:?}"))?;
            }
            let dims: &[u64] = dims;
            let ggml_type = GgmlType(src.u32(&|| format!("the type of tensor {name:?}"))?);
            let data_offset = src.u64(&|| format!("the data offset of tensor {name:?}"))?;

            let elements = dims
                .iter()
                .try_fold(1u64, |acc, d| acc.checked_mul(*d))
                .ok_or_else(|| GgufError::ElementOverflow {
                    name: name.into(),
                    shape: format!("{dims:?}"),
                    offset,
                })?;
            if dims.contains(&0) {
                warnings.push(format!(
                    "tensor {name:?} has a zero-size dimension {dims:?} (0 elements)"
                ));
            }
            let bytes =
                match ggml_type.info() {
                    Some(info) => {
                        let row = dims.first().copied().unwrap_or(1);
                        if !row.is_multiple_of(info.block_elements) {
                            return Err(GgufError::RowNotBlockMultiple {
                                name: name.into(),
                                row,
                                type_name: info.name.into(),
                                block: info.block_elements,
                                offset,
                            });
                        }
                        Some(ggml_type.bytes_for(elements).ok_or_else(|| {
                            GgufError::ByteOverflow {
                                name: name.into(),
                                offset,
                            }
                        })?)
                    }
                    None => {
                        unknown_types.push((ggml_type, name.into()));
                        None
                    }
                };
            if !data_offset.is_multiple_of(alignment) {
                return Err(GgufError::MisalignedTensor {
                    name: name.into(),
                    data_offset,
                    alignment,
                    offset,
                });
            }
            let in_place = match expected_offset {
                Some(e) => data_offset == e,
                None => data_offset >= last_offset,
            };
            if !in_place {
                return Err(GgufError::NotContiguous {
                    name: name.into(),
                    data_offset,
                    expected: expected_offset,
                    previous_end: last_offset,
                    alignment,
                    offset,
                });
            }
            last_offset = data_offset;
            expected_offset = match bytes {
                Some(b) => {
                    let end =
                        data_offset
                            .checked_add(b)
                            .ok_or_else(|| GgufError::ByteOverflow {
                                name: name.into(),
                                offset,
                            })?;
                    if b > 0 {
                        relative_end = relative_end.max(end);
                    }
                    Some(end.checked_next_multiple_of(alignment).ok_or_else(|| {
                        GgufError::ByteOverflow {
                            name: name.into(),
                            offset,
                        }
                    })?)
                }
                None => None,
            };
            // At most MAX_DIMS dims (checked above), so `new` always returns a record.
            tensors.extend(TensorInfo::new(
                name,
                ggml_type,
                dims,
                data_offset,
                0,
                offset,
                elements,
                bytes,
            ));
        }
        Ok(())
    })();
    let pending = match &read {
        Ok(()) => None,
        Err(_) => current
            .1
            .then(|| std::str::from_utf8(&name_buf).ok().map(|n| (n, current.0)))
            .flatten(),
    };
    if let Some(dup) = first_duplicate(&tensors, pending, &mut name_hashes, &hasher) {
        return Err(dup);
    }
    read?;
    drop(name_hashes);
    tensors.shrink_to_fit();
    for (t, name) in &unknown_types {
        let what = match t.removed_name() {
            Some(old) => format!("the removed ggml type {old} (id {})", t.0),
            None => format!("an unknown ggml type id \"{}\"", t.0),
        };
        warnings.push(format!(
            "tensor {name:?} has {what}: its size is unknown and left out of the totals"
        ));
    }

    let header_end = src.pos;
    let data_start =
        header_end
            .checked_next_multiple_of(alignment)
            .ok_or(GgufError::BadAlignment {
                value: alignment,
                offset: header_end,
            })?;

    // Offsets in place (above) cannot overlap; the data ends where the last sized tensor does.
    let data_end = data_start.saturating_add(relative_end);
    let data_end = if tensors.is_empty() {
        header_end
    } else {
        data_end
    };
    let missing_bytes = data_end.saturating_sub(file_len);
    if missing_bytes > 0 {
        warnings.push(format!(
            "the tensor data ends at byte {data_end} but the file has {file_len} bytes: {missing_bytes} bytes are missing (a partial download?)"
        ));
    }

    Ok(Header {
        version,
        endian: src.endian,
        alignment,
        metadata,
        tensors,
        header_end,
        data_start,
        file_len,
        data_end,
        missing_bytes,
        warnings,
    })
}

/// Load an array that the reader left in the file, from a reader over that file.
pub fn load_array<R: Read + Seek>(
    mut r: R,
    file_len: u64,
    endian: Endian,
    key: &str,
    skipped: &SkippedArray,
) -> Result<Vec<Value>, GgufError> {
    r.seek(SeekFrom::Start(skipped.offset))
        .map_err(|e| GgufError::Io {
            offset: skipped.offset,
            what: format!("the elements of key {key:?}"),
            source: e,
        })?;
    let mut src = Src {
        r,
        pos: skipped.offset,
        len: file_len,
        endian,
        chunk: Vec::new(),
        ahead: Vec::new(),
        ahead_at: 0,
    };
    if (skipped.count as u128) * (skipped.element_type.min_size() as u128) > src.remaining() as u128
    {
        return Err(GgufError::CountTooLarge {
            what: format!("the array length of key {key:?}"),
            count: skipped.count,
            entries: "array elements".into(),
            needed: (skipped.count as u128) * (skipped.element_type.min_size() as u128),
            offset: skipped.offset,
            remaining: src.remaining(),
            file_len,
        });
    }
    let mut items = Vec::with_capacity(skipped.count.min(1 << 20) as usize);
    for _ in 0..skipped.count {
        let v = match skipped.element_type {
            ValueType::Array => src.value(ValueType::Array, key, 1)?,
            t => src.scalar(t, &|| format!("an element of key {key:?}"))?,
        };
        items.push(v);
    }
    Ok(items)
}
