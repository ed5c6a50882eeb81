//! Reading llama-bench output: `-o json` (one array) and `-o jsonl` (one object per line),
//! into `BenchRow`s. Field names and meanings follow llama-bench; every error is one line naming
//! the file, the line and the row. Depends on nothing but serde_json.

use crate::profile::load::line_col;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Where a row was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSource {
    /// The file, as named by the caller (shared by the file's rows).
    pub file: Arc<str>,
    /// 1-based position of the row in its file.
    pub row: usize,
    /// 1-based line where the row's object starts.
    pub line: usize,
}

impl fmt::Display for RowSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: row {}", self.file, self.line, self.row)
    }
}

/// llama-bench's `flash_attn`: an integer (−1 auto, 0 off, 1 on) since 2025, a bool before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlashAttn {
    /// `-fa auto` (−1): llama.cpp decided; what it chose is not recorded.
    Auto,
    /// `-fa 0` or `false`.
    Off,
    /// `-fa 1` or `true`.
    On,
}

impl FlashAttn {
    /// `auto`, `off` or `on`.
    pub fn label(self) -> &'static str {
        match self {
            FlashAttn::Auto => "auto",
            FlashAttn::Off => "off",
            FlashAttn::On => "on",
        }
    }
}

impl fmt::Display for FlashAttn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// What a llama-bench test measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    /// Prompt processing (`-p`): `n_prompt > 0`, `n_gen == 0`.
    Prompt,
    /// Token generation (`-n`): `n_prompt == 0`, `n_gen > 0`. The only kind a decode ceiling bounds.
    Generation,
    /// Prompt then generation (`-pg`): `avg_ts` counts both kinds of tokens together.
    Combined,
}

impl TestKind {
    /// llama-bench's short name: `pp`, `tg` or `pg`.
    pub fn label(self) -> &'static str {
        match self {
            TestKind::Prompt => "pp",
            TestKind::Generation => "tg",
            TestKind::Combined => "pg",
        }
    }
}

impl fmt::Display for TestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One llama-bench result row: the fields llmbound uses, as llama-bench names them.
/// Optional fields are `None` when the file (an older llama-bench) does not have them. The
/// text fields are shared (`Arc<str>`): a file repeats the same few values in every row, and
/// one allocation per value instead of one per row and field is what keeps 200,000 rows cheap.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchRow {
    /// Where the row was read.
    pub source: RowSource,
    /// `build_commit`; llama-bench writes "unknown" when built outside git.
    pub build_commit: Option<Arc<str>>,
    /// `build_number`.
    pub build_number: Option<i64>,
    /// `backends` ("CPU", "CUDA", "Metal", ...).
    pub backends: Option<Arc<str>>,
    /// `cpu_info`.
    pub cpu_info: Option<Arc<str>>,
    /// `gpu_info` (empty without a GPU).
    pub gpu_info: Option<Arc<str>>,
    /// `model_filename`.
    pub model_filename: Option<Arc<str>>,
    /// `model_type` (llama.cpp's description: "gemma3 270M Q4_K - Medium").
    pub model_type: Option<Arc<str>>,
    /// `model_size`: Σ tensor bytes of the artifact (not the file size), bytes.
    pub model_size: u64,
    /// `model_n_params`: Σ tensor elements.
    pub model_n_params: u64,
    /// `n_batch`: logical batch.
    pub n_batch: Option<u64>,
    /// `n_ubatch`: physical micro-batch.
    pub n_ubatch: Option<u64>,
    /// `n_threads`: CPU threads.
    pub n_threads: Option<u64>,
    /// `type_k`: K cache type name (absent in old files: llama.cpp's default f16).
    pub type_k: Option<Arc<str>>,
    /// `type_v`: V cache type name (absent in old files: f16).
    pub type_v: Option<Arc<str>>,
    /// `n_gpu_layers`: llama.cpp `-ngl` (−1 = all; counts the output layer, SPEC §6).
    pub n_gpu_layers: Option<i64>,
    /// `n_cpu_moe`: the first n layers keep their routed experts in host memory.
    pub n_cpu_moe: Option<i64>,
    /// `split_mode`: "none", "layer" or "row".
    pub split_mode: Option<Arc<str>>,
    /// `main_gpu`.
    pub main_gpu: Option<i64>,
    /// `no_kv_offload` (`-nkvo`).
    pub no_kv_offload: Option<bool>,
    /// `flash_attn`.
    pub flash_attn: Option<FlashAttn>,
    /// `tensor_split` as written ("0.00", "0.60/0.40").
    pub tensor_split: Option<Arc<str>>,
    /// `tensor_buft_overrides` as written ("none" when there are none).
    pub tensor_buft_overrides: Option<Arc<str>>,
    /// `n_prompt`: prompt tokens per repetition.
    pub n_prompt: u64,
    /// `n_gen`: generated tokens per repetition.
    pub n_gen: u64,
    /// `n_depth`: tokens already in the cache before the test (0 in files older than `-d`).
    pub n_depth: u64,
    /// `test_time` (ISO 8601).
    pub test_time: Option<Arc<str>>,
    /// `avg_ts`: mean over repetitions of (n_prompt + n_gen) / seconds, tokens/s.
    pub avg_ts: f64,
    /// `stddev_ts`, tokens/s.
    pub stddev_ts: Option<f64>,
    /// `samples_ts`: each repetition's rate, tokens/s.
    pub samples_ts: Vec<f64>,
}

impl BenchRow {
    /// pp, tg or pg from `n_prompt` and `n_gen` (both 0 is rejected when loading).
    pub fn test(&self) -> TestKind {
        match (self.n_prompt, self.n_gen) {
            (_, 0) => TestKind::Prompt,
            (0, _) => TestKind::Generation,
            _ => TestKind::Combined,
        }
    }

    /// llama-bench's test name: `pp512`, `tg128`, `pp512+tg128`, with `@ d4096` at a depth.
    pub fn test_name(&self) -> String {
        test_name(self.n_prompt, self.n_gen, self.n_depth)
    }

    /// The best repetition (`max(samples_ts)`), tokens/s.
    pub fn best_sample_ts(&self) -> Option<f64> {
        self.samples_ts
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .reduce(f64::max)
    }
}

/// llama-bench's test name of a row with these lengths ([`BenchRow::test_name`]).
pub fn test_name(n_prompt: u64, n_gen: u64, n_depth: u64) -> String {
    let base = match (n_prompt, n_gen) {
        (_, 0) => format!("pp{n_prompt}"),
        (0, _) => format!("tg{n_gen}"),
        _ => format!("pp{n_prompt}+tg{n_gen}"),
    };
    if n_depth > 0 {
        format!("{base} @ d{n_depth}")
    } else {
        base
    }
}

/// A llama-bench file that cannot be read. One line; names the file, and the line and row
/// for problems inside it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BenchError {
    /// The file could not be read.
    #[error("cannot read \"{path}\": {message}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// The file holds no rows.
    #[error(
        "{file}: no llama-bench rows (the file is empty; run llama-bench with -o json or -o jsonl)"
    )]
    Empty {
        /// The file.
        file: String,
    },
    /// Not valid JSON.
    #[error("{file}:{line}:{column}: not valid JSON: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// Valid text but not llama-bench JSON output.
    #[error("{file}: not llama-bench JSON output: {what}")]
    Format {
        /// The file.
        file: String,
        /// What it looks like instead.
        what: String,
    },
    /// A row with a missing or wrong field.
    #[error("{file}:{line}: row {row}: {message}")]
    Row {
        /// The file.
        file: String,
        /// 1-based line where the row starts.
        line: usize,
        /// 1-based row.
        row: usize,
        /// What is wrong, the bad value in quotes.
        message: String,
    },
}

/// The fields of a row that are read (`key_index` numbers them in this order).
const KEYS: [&str; 29] = [
    "avg_ts",
    "backends",
    "build_commit",
    "build_number",
    "cpu_info",
    "flash_attn",
    "gpu_info",
    "main_gpu",
    "model_filename",
    "model_n_params",
    "model_size",
    "model_type",
    "n_batch",
    "n_cpu_moe",
    "n_depth",
    "n_gen",
    "n_gpu_layers",
    "n_prompt",
    "n_threads",
    "n_ubatch",
    "no_kv_offload",
    "samples_ts",
    "split_mode",
    "stddev_ts",
    "tensor_buft_overrides",
    "tensor_split",
    "test_time",
    "type_k",
    "type_v",
];

/// The index of a field in `KEYS` (a `match`: faster than searching the list, as this runs
/// for every field of every row).
fn key_index(key: &str) -> Option<usize> {
    Some(match key {
        "avg_ts" => 0,
        "backends" => 1,
        "build_commit" => 2,
        "build_number" => 3,
        "cpu_info" => 4,
        "flash_attn" => 5,
        "gpu_info" => 6,
        "main_gpu" => 7,
        "model_filename" => 8,
        "model_n_params" => 9,
        "model_size" => 10,
        "model_type" => 11,
        "n_batch" => 12,
        "n_cpu_moe" => 13,
        "n_depth" => 14,
        "n_gen" => 15,
        "n_gpu_layers" => 16,
        "n_prompt" => 17,
        "n_threads" => 18,
        "n_ubatch" => 19,
        "no_kv_offload" => 20,
        "samples_ts" => 21,
        "split_mode" => 22,
        "stddev_ts" => 23,
        "tensor_buft_overrides" => 24,
        "tensor_split" => 25,
        "test_time" => 26,
        "type_k" => 27,
        "type_v" => 28,
        _ => return None,
    })
}

/// One top-level JSON value of a result file: a row object with only the fields in `KEYS`
/// (the others are skipped by the parser without being built), or anything else (refused
/// with its text). Building a `serde_json::Map` of every field of every row, keys and all,
/// was most of the time of reading a large file.
enum Parsed<'de> {
    Row(Box<RowFields<'de>>),
    Other(Value),
}

/// A field's value: a string without escapes borrowed from the text (no copy; it is
/// interned when the row is built), anything else as a JSON value.
enum Field<'de> {
    Str(&'de str),
    Json(Value),
}

impl Field<'_> {
    fn is_null(&self) -> bool {
        matches!(self, Field::Json(Value::Null))
    }

    /// The string, borrowed or not.
    fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            Field::Json(Value::String(s)) => Some(s),
            Field::Json(_) => None,
        }
    }

    /// As a JSON value (for the numbers and for messages).
    fn json(&self) -> std::borrow::Cow<'_, Value> {
        match self {
            Field::Str(s) => std::borrow::Cow::Owned(Value::String((*s).to_owned())),
            Field::Json(v) => std::borrow::Cow::Borrowed(v),
        }
    }
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Field<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Field<'de>, E> {
                Ok(Field::Str(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field<'de>, E> {
                Ok(Field::Json(Value::String(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Field<'de>, E> {
                Ok(Field::Json(Value::String(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Field<'de>, E> {
                Ok(Field::Json(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Field<'de>, E> {
                Ok(Field::Json(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Field<'de>, E> {
                Ok(Field::Json(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Field<'de>, E> {
                Ok(Field::Json(Value::from(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Field<'de>, E> {
                Ok(Field::Json(Value::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<Field<'de>, E> {
                Ok(Field::Json(Value::Null))
            }
            // Arrays and objects are built by serde_json's own `Value`.
            fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<Field<'de>, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(s)).map(Field::Json)
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Field<'de>, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(m)).map(Field::Json)
            }
        }
        d.deserialize_any(V)
    }
}

/// The values of a row's fields, by their index in `KEYS`; a repeated field keeps its last
/// value (as `serde_json::Map` did).
struct RowFields<'de> {
    values: [Option<Field<'de>>; KEYS.len()],
}

impl<'de> RowFields<'de> {
    fn get(&self, key: &str) -> Option<&Field<'de>> {
        let i = key_index(key);
        debug_assert!(i.is_some(), "{key} is not in KEYS");
        self.values[i?].as_ref()
    }
}

/// One shared copy of each distinct text value of a file's rows: the value of the same field
/// in the previous row is tried first (rows repeat it), then the set.
#[derive(Default)]
struct Interner {
    last: [Option<Arc<str>>; KEYS.len()],
    set: HashSet<Arc<str>>,
}

impl Interner {
    fn get(&mut self, key: &str, s: &str) -> Arc<str> {
        let Some(i) = key_index(key) else {
            return Arc::from(s);
        };
        if let Some(a) = &self.last[i]
            && **a == *s
        {
            return a.clone();
        }
        // A run's rows each have their own `test_time`: kept once per row, never in the set.
        if key == "test_time" {
            let a: Arc<str> = Arc::from(s);
            self.last[i] = Some(a.clone());
            return a;
        }
        let a = match self.set.get(s) {
            Some(a) => a.clone(),
            None => {
                let a: Arc<str> = Arc::from(s);
                self.set.insert(a.clone());
                a
            }
        };
        self.last[i] = Some(a.clone());
        a
    }
}

/// A field name, as its index in `KEYS` (`None` for a field that is not read).
struct KeyIndex(Option<usize>);

impl<'de> Deserialize<'de> for KeyIndex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = KeyIndex;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyIndex, E> {
                Ok(KeyIndex(key_index(v)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Parsed<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ParsedVisitor)
    }
}

struct ParsedVisitor;

impl<'de> Visitor<'de> for ParsedVisitor {
    type Value = Parsed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Parsed<'de>, A::Error> {
        let mut row = Box::new(RowFields {
            values: std::array::from_fn(|_| None),
        });
        while let Some(KeyIndex(k)) = m.next_key::<KeyIndex>()? {
            match k {
                Some(i) => row.values[i] = Some(m.next_value::<Field<'de>>()?),
                None => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Parsed::Row(row))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Parsed<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = s.next_element::<Value>()? {
            items.push(v);
        }
        Ok(Parsed::Other(Value::Array(items)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Parsed<'de>, E> {
        Ok(Parsed::Other(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Parsed<'de>, E> {
        Ok(Parsed::Other(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Parsed<'de>, E> {
        Ok(Parsed::Other(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Parsed<'de>, E> {
        Ok(Parsed::Other(Value::from(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Parsed<'de>, E> {
        Ok(Parsed::Other(Value::String(v.to_owned())))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Parsed<'de>, E> {
        Ok(Parsed::Other(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Parsed<'de>, E> {
        Ok(Parsed::Other(Value::Null))
    }
}

/// Read a llama-bench `-o json` or `-o jsonl` file.
pub fn load(path: impl AsRef<Path>) -> Result<Vec<BenchRow>, BenchError> {
    let p = path.as_ref();
    let name = p.display().to_string();
    let text = crate::infile::read_text(
        p,
        crate::infile::BENCH_CAP_BYTES,
        "a llama-bench result file",
    )
    .map_err(|e| BenchError::Io {
        path: name.clone(),
        message: e.to_string(),
    })?;
    parse_str(&name, &text)
}

/// Parse llama-bench output held in memory; `file` names it in errors and row sources.
pub fn parse_str(file: &str, text: &str) -> Result<Vec<BenchRow>, BenchError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let start = text.find(|c: char| !c.is_whitespace());
    let Some(start) = start else {
        return Err(BenchError::Empty { file: file.into() });
    };
    let objects = match text.as_bytes()[start] {
        b'[' => array_objects(file, text)?,
        b'{' => return stream_rows(file, text),
        _ => {
            return Err(BenchError::Format {
                file: file.into(),
                what: format!(
                    "{}; run llama-bench with -o json or -o jsonl",
                    looks_like(&text[start..])
                ),
            });
        }
    };
    if objects.is_empty() {
        return Err(BenchError::Empty { file: file.into() });
    }
    let shared: Arc<str> = Arc::from(file);
    let mut strings = Interner::default();
    objects
        .into_iter()
        .enumerate()
        .map(|(i, (line, v))| {
            let src = RowSource {
                file: shared.clone(),
                row: i + 1,
                line,
            };
            row_from_value(src, v, &mut strings)
        })
        .collect()
}

fn looks_like(s: &str) -> String {
    let first = s.lines().next().unwrap_or("").trim();
    if first.starts_with('|') {
        "it starts with \"|\", which looks like llama-bench's markdown table".into()
    } else if first.starts_with("build_commit,") || first.contains(",model_filename,") {
        "it starts with a CSV header, which looks like llama-bench's -o csv output".into()
    } else if first.to_ascii_uppercase().starts_with("CREATE TABLE")
        || first.to_ascii_uppercase().starts_with("INSERT")
    {
        "it starts with SQL, which looks like llama-bench's -o sql output".into()
    } else {
        let shown: String = first.chars().take(24).collect();
        format!("it starts with \"{shown}\", not \"[\" or \"{{\"")
    }
}

fn syntax(file: &str, e: &serde_json::Error) -> BenchError {
    BenchError::Syntax {
        file: file.into(),
        line: e.line(),
        column: e.column(),
        message: e
            .to_string()
            .split(" at line ")
            .next()
            .unwrap_or("")
            .to_string(),
    }
}

/// The objects of a top-level array, each with the line where it starts.
fn array_objects<'t>(file: &str, text: &'t str) -> Result<Vec<(usize, Parsed<'t>)>, BenchError> {
    // The text starts with `[` (checked by the caller): valid JSON is an array.
    let items: Vec<Parsed<'t>> = serde_json::from_str(text).map_err(|e| syntax(file, &e))?;
    let starts = element_starts(text);
    let mut lines = Lines::new(text);
    Ok(items
        .into_iter()
        .enumerate()
        .map(|(i, v)| (starts.get(i).map_or(1, |o| lines.at(*o)), v))
        .collect())
}

/// Line numbers of increasing byte offsets, counted from the last offset asked for: one pass
/// over the text for all rows (counting from the start for each row was quadratic).
struct Lines<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            text,
            pos: 0,
            line: 1,
        }
    }

    /// The 1-based line of byte `offset`; offsets asked for must not decrease (an earlier
    /// one is counted from the start).
    fn at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        if offset < self.pos {
            return line_col(self.text, offset).0;
        }
        self.line += newlines(&self.text.as_bytes()[self.pos..offset]);
        self.pos = offset;
        self.line
    }
}

/// The number of `\n` in `b`, 64 bytes at a time (a byte sum the compiler vectorises; a
/// plain filter-and-count went two bytes at a time over the whole file).
fn newlines(b: &[u8]) -> usize {
    let mut chunks = b.chunks_exact(64);
    let mut n = 0usize;
    for c in &mut chunks {
        n += usize::from(c.iter().map(|&x| u8::from(x == b'\n')).sum::<u8>());
    }
    n + chunks.remainder().iter().filter(|&&x| x == b'\n').count()
}

/// Byte offsets where each element of the top-level array starts (the text is valid JSON).
fn element_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut expect_element = false;
    for (i, c) in text.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if expect_element && !c.is_whitespace() && c != ']' {
            starts.push(i);
            expect_element = false;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                if depth == 1 && c == '[' {
                    expect_element = true;
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => expect_element = true,
            _ => {}
        }
    }
    starts
}

/// Rows written one after another (jsonl, or concatenated objects), each with its line. Each
/// object becomes a row as soon as it is read, so the parsed JSON of the whole file is never
/// held at once; a syntax error anywhere still wins over a bad field in an earlier row.
fn stream_rows(file: &str, text: &str) -> Result<Vec<BenchRow>, BenchError> {
    let mut out = Vec::new();
    let mut count = 0usize;
    let shared: Arc<str> = Arc::from(file);
    let mut strings = Interner::default();
    let mut first_row_error: Option<BenchError> = None;
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Parsed>();
    let mut prev_end = 0usize;
    let mut lines = Lines::new(text);
    loop {
        let next = stream.next();
        let Some(item) = next else { break };
        let v = item.map_err(|e| syntax(file, &e))?;
        let end = stream.byte_offset();
        let start = text[prev_end..end]
            .find(|c: char| !c.is_whitespace())
            .map_or(prev_end, |o| prev_end + o);
        prev_end = end;
        count += 1;
        let src = RowSource {
            file: shared.clone(),
            row: count,
            line: lines.at(start),
        };
        if first_row_error.is_some() {
            continue;
        }
        match row_from_value(src, v, &mut strings) {
            Ok(r) => out.push(r),
            Err(e) => first_row_error = Some(e),
        }
    }
    if let Some(e) = first_row_error {
        return Err(e);
    }
    if count == 0 {
        return Err(BenchError::Empty { file: file.into() });
    }
    Ok(out)
}

struct Fields<'a, 'de> {
    src: &'a RowSource,
    map: &'a RowFields<'de>,
}

impl<'a, 'de> Fields<'a, 'de> {
    fn err(&self, message: String) -> BenchError {
        BenchError::Row {
            file: self.src.file.to_string(),
            line: self.src.line,
            row: self.src.row,
            message,
        }
    }

    fn get(&self, key: &str) -> Option<&'a Field<'de>> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn missing(&self, key: &str) -> BenchError {
        self.err(format!("field \"{key}\" is missing"))
    }

    fn wrong(&self, key: &str, v: &Value, expected: &str) -> BenchError {
        let shown: String = v.to_string().chars().take(40).collect();
        self.err(format!("field \"{key}\" is {shown}, expected {expected}"))
    }

    fn u64_opt(&self, key: &str) -> Result<Option<u64>, BenchError> {
        match self.get(key).map(Field::json) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.wrong(key, &v, "a whole number ≥ 0")),
        }
    }

    fn u64_req(&self, key: &str) -> Result<u64, BenchError> {
        self.u64_opt(key)?.ok_or_else(|| self.missing(key))
    }

    fn i64_opt(&self, key: &str) -> Result<Option<i64>, BenchError> {
        match self.get(key).map(Field::json) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.wrong(key, &v, "a whole number")),
        }
    }

    fn f64_opt(&self, key: &str) -> Result<Option<f64>, BenchError> {
        match self.get(key).map(Field::json) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(self.wrong(key, &v, "a number ≥ 0")),
            },
        }
    }

    /// A text field, as the file's shared copy of its value.
    fn string_opt(
        &self,
        key: &str,
        strings: &mut Interner,
    ) -> Result<Option<Arc<str>>, BenchError> {
        match self.get(key) {
            None => Ok(None),
            Some(f) => match f.as_str() {
                Some(s) => Ok(Some(strings.get(key, s))),
                None => Err(self.wrong(key, &f.json(), "a string")),
            },
        }
    }

    fn bool_opt(&self, key: &str) -> Result<Option<bool>, BenchError> {
        match self.get(key).map(Field::json) {
            None => Ok(None),
            Some(v) => match &*v {
                Value::Bool(b) => Ok(Some(*b)),
                v => match v.as_i64() {
                    Some(0) => Ok(Some(false)),
                    Some(1) => Ok(Some(true)),
                    _ => Err(self.wrong(key, v, "true or false")),
                },
            },
        }
    }

    fn flash_attn(&self) -> Result<Option<FlashAttn>, BenchError> {
        let key = "flash_attn";
        let Some(f) = self.get(key) else {
            return Ok(None);
        };
        if let Some(s) = f.as_str() {
            return match s.trim().to_ascii_lowercase().as_str() {
                "auto" | "-1" => Ok(Some(FlashAttn::Auto)),
                "on" | "1" | "true" => Ok(Some(FlashAttn::On)),
                "off" | "0" | "false" => Ok(Some(FlashAttn::Off)),
                _ => Err(self.wrong(
                    key,
                    &Value::String(s.to_owned()),
                    "-1 (auto), 0 (off) or 1 (on)",
                )),
            };
        }
        match &*f.json() {
            Value::Bool(b) => Ok(Some(if *b { FlashAttn::On } else { FlashAttn::Off })),
            v => match v.as_i64() {
                Some(-1) => Ok(Some(FlashAttn::Auto)),
                Some(0) => Ok(Some(FlashAttn::Off)),
                Some(1) => Ok(Some(FlashAttn::On)),
                _ => Err(self.wrong(key, v, "-1 (auto), 0 (off) or 1 (on)")),
            },
        }
    }

    /// A rate above the plausible range (`units::MAX_CLAIM_TOKENS_PER_SECOND`) is refused.
    fn rate_in_range(&self, key: &str, tps: f64) -> Result<(), BenchError> {
        if tps > crate::core::units::MAX_CLAIM_TOKENS_PER_SECOND {
            let e = crate::core::units::RangeError::TooLarge {
                quantity: crate::core::units::Quantity::TokensPerSecond,
            };
            return Err(self.err(format!("field \"{key}\" = {tps:.3e} tokens/s is {e}")));
        }
        Ok(())
    }

    fn samples(&self) -> Result<Vec<f64>, BenchError> {
        let key = "samples_ts";
        match self.get(key).map(Field::json).as_deref() {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| match x.as_f64() {
                    Some(f) if f.is_finite() && f >= 0.0 => {
                        self.rate_in_range(key, f)?;
                        Ok(f)
                    }
                    _ => Err(self.wrong(key, x, "numbers ≥ 0")),
                })
                .collect(),
            Some(v) => Err(self.wrong(key, v, "an array of numbers")),
        }
    }
}

fn row_from_value(
    src: RowSource,
    v: Parsed<'_>,
    strings: &mut Interner,
) -> Result<BenchRow, BenchError> {
    let map = match &v {
        Parsed::Row(map) => map,
        Parsed::Other(v) => {
            let shown: String = v.to_string().chars().take(40).collect();
            return Err(BenchError::Row {
                file: src.file.to_string(),
                line: src.line,
                row: src.row,
                message: format!("{shown} is not an object (a llama-bench row)"),
            });
        }
    };
    let f = Fields { src: &src, map };
    if f.get("avg_ts").is_none() && f.get("n_prompt").is_none() && f.get("model_size").is_none() {
        return Err(f.err(
            "has none of \"avg_ts\", \"n_prompt\", \"model_size\": not a llama-bench row".into(),
        ));
    }
    let n_prompt = f.u64_req("n_prompt")?;
    let n_gen = f.u64_req("n_gen")?;
    if n_prompt == 0 && n_gen == 0 {
        return Err(f.err("n_prompt and n_gen are both 0: the row measured nothing".into()));
    }
    let avg_ts = f.f64_opt("avg_ts")?.ok_or_else(|| f.missing("avg_ts"))?;
    f.rate_in_range("avg_ts", avg_ts)?;
    let model_size = f.u64_req("model_size")?;
    if model_size == 0 {
        return Err(f.err("field \"model_size\" is 0: no artifact".into()));
    }
    let mut row = BenchRow {
        build_commit: f.string_opt("build_commit", strings)?,
        build_number: f.i64_opt("build_number")?,
        backends: f.string_opt("backends", strings)?,
        cpu_info: f.string_opt("cpu_info", strings)?,
        gpu_info: f.string_opt("gpu_info", strings)?,
        model_filename: f.string_opt("model_filename", strings)?,
        model_type: f.string_opt("model_type", strings)?,
        model_size,
        model_n_params: f.u64_req("model_n_params")?,
        n_batch: f.u64_opt("n_batch")?,
        n_ubatch: f.u64_opt("n_ubatch")?,
        n_threads: f.u64_opt("n_threads")?,
        type_k: f.string_opt("type_k", strings)?,
        type_v: f.string_opt("type_v", strings)?,
        n_gpu_layers: f.i64_opt("n_gpu_layers")?,
        n_cpu_moe: f.i64_opt("n_cpu_moe")?,
        split_mode: f.string_opt("split_mode", strings)?,
        main_gpu: f.i64_opt("main_gpu")?,
        no_kv_offload: f.bool_opt("no_kv_offload")?,
        flash_attn: f.flash_attn()?,
        tensor_split: f.string_opt("tensor_split", strings)?,
        tensor_buft_overrides: f.string_opt("tensor_buft_overrides", strings)?,
        n_prompt,
        n_gen,
        n_depth: f.u64_opt("n_depth")?.unwrap_or(0),
        test_time: f.string_opt("test_time", strings)?,
        avg_ts,
        stddev_ts: f.f64_opt("stddev_ts")?,
        samples_ts: f.samples()?,
        source: RowSource {
            file: src.file.clone(),
            row: 0,
            line: 0,
        },
    };
    row.source = src;
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"model_size": 100, "model_n_params": 50, "n_prompt": 0, "n_gen": 128,
        "n_depth": 4096, "avg_ts": 10.5, "samples_ts": [10.0, 11.0], "flash_attn": 1,
        "type_k": "q8_0", "type_v": "q8_0"}"#;

    #[test]
    fn array_rows_carry_their_lines() {
        let text = format!("[\n  {ROW},\n  {ROW}\n]\n");
        let rows = parse_str("a.json", &text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].source.line, 2);
        assert_eq!(rows[1].source.line, 5);
        assert_eq!(rows[1].source.row, 2);
        assert_eq!(rows[0].test(), TestKind::Generation);
        assert_eq!(rows[0].test_name(), "tg128 @ d4096");
        assert_eq!(rows[0].best_sample_ts(), Some(11.0));
        assert_eq!(rows[0].flash_attn, Some(FlashAttn::On));
    }

    #[test]
    fn newlines_are_counted_in_chunks_and_the_rest() {
        for n in [0usize, 1, 63, 64, 65, 200] {
            let text: Vec<u8> = (0..n)
                .map(|i| if i % 3 == 0 { b'\n' } else { b'x' })
                .collect();
            assert_eq!(newlines(&text), n.div_ceil(3), "{n}");
        }
        assert_eq!(newlines(&[b'\n'; 300]), 300);
    }

    #[test]
    fn text_fields_are_shared_and_wrong_types_quoted() {
        let one = ROW.replace('\n', " ");
        let escaped = one.replace("\"type_k\": \"q8_0\"", "\"type_k\": \"q\\u0038_0\"");
        let rows = parse_str("a.jsonl", &format!("{one}\n{escaped}\n{one}")).unwrap();
        let (a, b, c) = (&rows[0], &rows[1], &rows[2]);
        assert_eq!(b.type_k.as_deref(), Some("q8_0"));
        assert!(Arc::ptr_eq(
            a.type_k.as_ref().unwrap(),
            b.type_k.as_ref().unwrap()
        ));
        assert!(Arc::ptr_eq(
            a.type_k.as_ref().unwrap(),
            c.type_k.as_ref().unwrap()
        ));
        // Two fields with the same text share it too.
        assert!(Arc::ptr_eq(
            a.type_k.as_ref().unwrap(),
            a.type_v.as_ref().unwrap()
        ));
        assert!(Arc::ptr_eq(&a.source.file, &c.source.file));
        let e = parse_str(
            "x.json",
            &ROW.replace("\"n_gen\": 128", "\"n_gen\": \"128\""),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "x.json:1: row 1: field \"n_gen\" is \"128\", expected a whole number ≥ 0"
        );
        let e = parse_str(
            "x.json",
            &ROW.replace("\"type_k\": \"q8_0\"", "\"type_k\": 8"),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "x.json:1: row 1: field \"type_k\" is 8, expected a string"
        );
        let on = ROW.replace("\"flash_attn\": 1", "\"flash_attn\": \"\\u006Fff\"");
        assert_eq!(
            parse_str("x", &on).unwrap()[0].flash_attn,
            Some(FlashAttn::Off)
        );
        let bad = ROW.replace("\"flash_attn\": 1", "\"flash_attn\": \"maybe\"");
        assert_eq!(
            parse_str("x", &bad).unwrap_err().to_string(),
            "x:1: row 1: field \"flash_attn\" is \"maybe\", expected -1 (auto), 0 (off) or 1 (on)"
        );
    }

    #[test]
    fn every_key_has_its_index() {
        for (i, k) in KEYS.iter().enumerate() {
            assert_eq!(key_index(k), Some(i), "{k}");
        }
        assert_eq!(key_index("avg_tsx"), None);
    }

    #[test]
    fn fields_not_read_are_skipped_and_a_repeated_field_keeps_its_last_value() {
        let row = ROW.replace(
            "\"avg_ts\": 10.5",
            "\"extra\": {\"deep\": [1, [2, {\"x\": null}]]}, \"avg_ts\": 3.0, \"av\\u0067_ts\": 10.5",
        );
        for text in [row.clone(), format!("[{row}]")] {
            let rows = parse_str("x", &text).unwrap();
            assert_eq!(rows[0].avg_ts, 10.5, "{text}");
            assert_eq!(rows[0].n_depth, 4096);
        }
        for (text, shown) in [
            ("[1, {}]", "1"),
            ("[true, \"s\"]", "true"),
            ("[[1, 2]]", "[1,2]"),
        ] {
            let e = parse_str("x.json", text).unwrap_err().to_string();
            assert!(
                e.contains(&format!("{shown} is not an object (a llama-bench row)")),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn jsonl_rows() {
        let one = ROW.replace('\n', " ");
        let text = format!("{one}\n\n{one}\n");
        let rows = parse_str("a.jsonl", &text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].source.line, 3);
    }

    #[test]
    fn flash_attn_forms() {
        for (v, want) in [
            ("true", FlashAttn::On),
            ("false", FlashAttn::Off),
            ("-1", FlashAttn::Auto),
            ("0", FlashAttn::Off),
        ] {
            let text = ROW.replace("\"flash_attn\": 1", &format!("\"flash_attn\": {v}"));
            assert_eq!(
                parse_str("x", &text).unwrap()[0].flash_attn,
                Some(want),
                "{v}"
            );
        }
        let text = ROW.replace("\"flash_attn\": 1", "\"flash_attn\": 7");
        let e = parse_str("x.json", &text).unwrap_err().to_string();
        assert_eq!(
            e,
            "x.json:1: row 1: field \"flash_attn\" is 7, expected -1 (auto), 0 (off) or 1 (on)"
        );
    }

    #[test]
    fn errors_name_file_line_row() {
        let text = format!("[\n{ROW},\n{}\n]", ROW.replace("\"avg_ts\": 10.5,", ""));
        let e = parse_str("b.json", &text).unwrap_err().to_string();
        // ROW spans three lines: row 2 starts on line 5.
        assert_eq!(e, "b.json:5: row 2: field \"avg_ts\" is missing");
        let e = parse_str("c.json", "[{\"n_prompt\": 1,}]")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.json:1:17: not valid JSON"), "{e}");
        let e = parse_str("d.md", "| model | size |\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("markdown"), "{e}");
        assert!(matches!(
            parse_str("e.json", "  \n"),
            Err(BenchError::Empty { .. })
        ));
        assert!(matches!(
            parse_str("e.json", "[]"),
            Err(BenchError::Empty { .. })
        ));
        let e = parse_str("f.json", &ROW.replace("\"n_gen\": 128", "\"n_gen\": 0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("both 0"), "{e}");
        let e = parse_str("g.json", &ROW.replace("\"n_gen\": 128", "\"n_gen\": -3"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "g.json:1: row 1: field \"n_gen\" is -3, expected a whole number ≥ 0"
        );
    }
}
