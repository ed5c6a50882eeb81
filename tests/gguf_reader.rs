//! The GGUF header reader on fixtures written by `gguf::writer`: versions, byte orders,
//! metadata order and types, large arrays, sparse multi-GB files, and one test per malformed
//! category asserting its message.

use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{Endian, GgmlType, GgufError, Header, Value, ValueType, read_header};
use std::io::Cursor;

fn read(bytes: &[u8]) -> Result<Header, GgufError> {
    read_header(Cursor::new(bytes), bytes.len() as u64)
}

fn err(bytes: &[u8]) -> String {
    match read(bytes) {
        Ok(h) => panic!("expected an error, read {} tensors", h.tensors.len()),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "one line: {msg}");
            msg
        }
    }
}

fn assert_err(bytes: &[u8], want: &str) {
    let msg = err(bytes);
    assert!(msg.contains(want), "message {msg:?} lacks {want:?}");
}

fn small_model() -> GgufWriter {
    GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string("tiny"))
        .kv("llama.block_count", Value::U32(2))
        .kv("llama.attention.head_count_kv", writer::u32_array(&[4, 2]))
        .kv("llama.rope.freq_base", Value::F32(10000.0))
        .kv("general.flag", Value::Bool(true))
        .kv("general.big", Value::U64(1 << 40))
        .kv("general.neg", Value::I32(-5))
        .kv("general.i8", Value::I8(7))
        .kv("general.u16", Value::U16(65535))
        .kv("general.i16", Value::I16(-2))
        .kv("general.u8", Value::U8(200))
        .kv("general.i64", Value::I64(42))
        .kv("general.f64", Value::F64(0.5))
        .kv("general.pattern", writer::bool_array(&[true, false]))
        .tensor("token_embd.weight", GgmlType::Q8_0, &[64, 100])
        .tensor("blk.0.attn_q.weight", GgmlType::Q4_K, &[256, 64])
        .tensor("blk.0.attn_norm.weight", GgmlType::F32, &[64])
        .tensor("output.weight", GgmlType::Q6_K, &[256, 100])
}

#[test]
fn reads_a_v3_little_endian_file() {
    let w = small_model();
    let bytes = w.to_bytes();
    let h = read(&bytes).unwrap();
    assert_eq!(h.version, 3);
    assert_eq!(h.endian, Endian::Little);
    assert_eq!(h.alignment, 32);
    assert_eq!(h.data_start % 32, 0);
    assert_eq!(h.file_len, bytes.len() as u64);
    assert_eq!(h.missing_bytes, 0);
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    let keys: Vec<&str> = h.metadata.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys[..3],
        ["general.architecture", "general.name", "llama.block_count"]
    );
    assert_eq!(h.tensors.len(), 4);
    let q = h.tensor("blk.0.attn_q.weight").unwrap();
    assert_eq!(q.elements, 256 * 64);
    assert_eq!(q.bytes, Some(64 * 144));
    assert_eq!(q.offset % 32, 0);
    let e = h.tensor("token_embd.weight").unwrap();
    assert_eq!(e.bytes, Some(100 * 2 * 34));
    assert_eq!(h.tensor_bytes(), 6800 + 9216 + 256 + 100 * 210);
    assert_eq!(h.data_end, bytes.len() as u64);
}

#[test]
fn typed_getters() {
    let h = read(&small_model().to_bytes()).unwrap();
    let m = &h.metadata;
    assert_eq!(m.get_u64("llama.block_count").unwrap(), Some(2));
    assert_eq!(m.get_u64("general.big").unwrap(), Some(1 << 40));
    assert_eq!(m.get_u64("general.u8").unwrap(), Some(200));
    assert_eq!(m.get_u64("general.i8").unwrap(), Some(7));
    assert_eq!(m.get_u64("general.u16").unwrap(), Some(65535));
    assert_eq!(m.get_u64("general.i64").unwrap(), Some(42));
    assert_eq!(m.get_u64("absent").unwrap(), None);
    let neg = m.get_u64("general.neg").unwrap_err().to_string();
    assert!(
        neg.contains("\"general.neg\"") && neg.contains("-5"),
        "{neg}"
    );
    assert!(m.get_u64("general.i16").is_err());
    assert_eq!(m.get_str("general.name").unwrap(), Some("tiny"));
    assert!(m.get_str("llama.block_count").is_err());
    assert_eq!(m.get_f64("llama.rope.freq_base").unwrap(), Some(10000.0));
    assert_eq!(m.get_f64("general.f64").unwrap(), Some(0.5));
    assert_eq!(m.get_f64("llama.block_count").unwrap(), Some(2.0));
    assert_eq!(m.get_bool("general.flag").unwrap(), Some(true));
    assert_eq!(
        m.get_u32_array("llama.attention.head_count_kv").unwrap(),
        Some(vec![4, 2])
    );
    assert!(m.get_u32_array("llama.block_count").is_err());
    assert_eq!(
        m.get_bool_array("general.pattern").unwrap(),
        Some(vec![true, false])
    );
    assert_eq!(m.architecture(), Some("llama"));
}

#[test]
fn v2_and_big_endian_read_the_same() {
    let base = small_model().to_bytes();
    let le = read(&base).unwrap();
    for (version, endian) in [(2, Endian::Little), (2, Endian::Big), (3, Endian::Big)] {
        let bytes = small_model().version(version).endian(endian).to_bytes();
        let h = read(&bytes).unwrap();
        assert_eq!(h.version, version);
        assert_eq!(h.endian, endian);
        assert_eq!(h.metadata, le.metadata);
        assert_eq!(h.tensors, le.tensors);
        assert_eq!(h.data_start, le.data_start);
    }
    // The version field of a big-endian file read little-endian is 0x03000000.
    let be = small_model().endian(Endian::Big).to_bytes();
    assert_eq!(&be[4..8], &[0, 0, 0, 3]);
}

#[test]
fn any_utf8_keys_in_file_order() {
    let bytes = GgufWriter::new()
        .kv("general.architecture", writer::string("gpt-oss"))
        .kv("gpt-oss.block_count", Value::U32(24))
        .kv("command-r.Weird Key ✓", Value::U8(1))
        .kv("falcon-h1.ssm.inner_size", Value::U32(1536))
        .kv("a.first", Value::U8(0))
        .to_bytes();
    let h = read(&bytes).unwrap();
    let keys: Vec<&str> = h.metadata.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "general.architecture",
            "gpt-oss.block_count",
            "command-r.Weird Key ✓",
            "falcon-h1.ssm.inner_size",
            "a.first"
        ]
    );
    // Offsets are increasing and point at each record.
    let offsets: Vec<u64> = h.metadata.iter().map(|e| e.offset).collect();
    assert_eq!(offsets[0], 24);
    assert!(offsets.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn large_arrays_are_skipped_and_loaded_on_demand() {
    let tokens: Vec<String> = (0..262_144).map(|i| format!("tok{i}")).collect();
    let scores: Vec<f32> = (0..20_000).map(|i| i as f32).collect();
    let bytes = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("tokenizer.ggml.tokens", writer::string_array(&tokens))
        .kv("tokenizer.ggml.scores", writer::f32_array(&scores))
        .kv("small", writer::string_array(["a", "b"]))
        .kv("after", Value::U32(9))
        .to_bytes();
    let h = read(&bytes).unwrap();
    let Value::Skipped(t) = h.metadata.value("tokenizer.ggml.tokens").unwrap() else {
        panic!("tokens kept in memory");
    };
    assert_eq!((t.element_type, t.count), (ValueType::String, 262_144));
    assert_eq!(h.metadata.array_len("tokenizer.ggml.tokens"), Some(262_144));
    let Value::Skipped(s) = h.metadata.value("tokenizer.ggml.scores").unwrap() else {
        panic!("scores kept in memory");
    };
    assert_eq!(
        (s.element_type, s.count, s.byte_len),
        (ValueType::F32, 20_000, 80_000)
    );
    assert_eq!(h.metadata.get_u64("after").unwrap(), Some(9));
    assert_eq!(h.metadata.array_len("small"), Some(2));
    let loaded = llmbound::gguf::load_array(
        Cursor::new(&bytes),
        bytes.len() as u64,
        h.endian,
        "tokenizer.ggml.tokens",
        t,
    )
    .unwrap();
    assert_eq!(loaded.len(), 262_144);
    assert_eq!(loaded[261_000], Value::String("tok261000".into()));
    let loaded = llmbound::gguf::load_array(
        Cursor::new(&bytes),
        bytes.len() as u64,
        h.endian,
        "tokenizer.ggml.scores",
        s,
    )
    .unwrap();
    assert_eq!(loaded[19_999], Value::F32(19_999.0));
}

#[test]
fn sparse_20_gb_file_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.gguf");
    // 40 layers of 4 × (8192 × 16384) Q8_0 ≈ 20 GB plus an F16 embedding.
    let mut w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .tensor("token_embd.weight", GgmlType::F16, &[8192, 32000]);
    for l in 0..40 {
        for n in ["attn_q", "attn_k", "attn_v", "attn_output"] {
            w = w.tensor(
                &format!("blk.{l}.{n}.weight"),
                GgmlType::Q8_0,
                &[8192, 16384],
            );
        }
    }
    let len = w.write_file(&path, Data::Sparse).unwrap();
    assert!(len > 20_000_000_000);
    let a = llmbound::gguf::open(&path).unwrap();
    let h = a.header();
    assert_eq!(h.file_len, len);
    assert_eq!(h.missing_bytes, 0);
    assert_eq!(h.tensors.len(), 161);
    let per = 8192u64 * 16384 / 32 * 34;
    assert_eq!(h.tensor_bytes(), 160 * per + 8192 * 32000 * 2);
    assert_eq!(a.file_bytes(), len);
}

#[test]
fn partial_download_reports_missing_bytes() {
    let w = small_model();
    let full = w.to_bytes();
    let cut = &full[..full.len() - 1000];
    let h = read(cut).unwrap();
    assert_eq!(h.missing_bytes, 1000);
    assert!(
        h.warnings
            .iter()
            .any(|m| m.contains("1000 bytes are missing"))
    );
    // Header only.
    let header = w.header_bytes();
    let h = read(&header).unwrap();
    assert_eq!(h.missing_bytes, (full.len() - header.len()) as u64);
}

#[test]
fn zero_size_dimension_is_a_warning() {
    let bytes = GgufWriter::new()
        .tensor("empty.weight", GgmlType::F32, &[0, 16])
        .tensor("x.weight", GgmlType::F32, &[16])
        .to_bytes();
    let h = read(&bytes).unwrap();
    assert_eq!(h.tensor("empty.weight").unwrap().elements, 0);
    assert!(h.warnings.iter().any(|w| w.contains("zero-size")));
}

#[test]
fn unknown_and_removed_tensor_types_open_with_warnings() {
    let bytes = GgufWriter::new()
        .tensor_raw(b"a.weight", 99, &[32, 4], None, Some(64))
        .tensor_raw(b"b.weight", 31, &[32, 4], None, Some(64))
        .tensor_raw(b"c.weight", 5, &[32, 4], None, Some(64))
        .tensor("d.weight", GgmlType::MXFP4, &[64, 2])
        .to_bytes();
    let h = read(&bytes).unwrap();
    let a = h.tensor("a.weight").unwrap();
    assert_eq!(a.bytes, None);
    assert_eq!(a.ggml_type.name(), "unknown(99)");
    let all = h.warnings.join(" | ");
    assert!(all.contains("unknown ggml type id \"99\""), "{all}");
    assert!(all.contains("removed ggml type Q4_0_4_4 (id 31)"), "{all}");
    assert!(all.contains("removed ggml type Q4_3 (id 5)"), "{all}");
    assert_eq!(h.tensor("d.weight").unwrap().bytes, Some(4 * 17));
}

// ---- malformed files: one test per category ----

#[test]
fn empty_file() {
    assert_err(b"", "empty (0 bytes)");
}

#[test]
fn truncated_file() {
    let full = small_model().header_bytes();
    for cut in [2usize, 6, 10, 30, 60, 200, 400] {
        let msg = err(&full[..cut]);
        assert!(msg.contains("truncated"), "{cut}: {msg}");
        assert!(msg.contains(&format!("ends at byte {cut}")), "{cut}: {msg}");
    }
    let one = GgufWriter::new()
        .kv("general.name", writer::string("x"))
        .header_bytes();
    let msg = err(&one[..40]);
    assert!(msg.contains("the length of metadata key #0"), "{msg}");
    let msg = err(&one[..46]);
    assert!(
        msg.contains("truncated file: it ends at byte 46 while reading the value type of key \"general.name\" at byte 44"),
        "{msg}"
    );
}

#[test]
fn bad_magic_says_what_the_file_is() {
    let mut st = 20u64.to_le_bytes().to_vec();
    st.extend_from_slice(b"{\"__metadata__\":{}}   ");
    assert_err(&st, "safetensors");
    assert_err(b"PK\x03\x04\x14\x00\x00\x00junk", "zip archive");
    assert_err(b"tjgg\x03\x00\x00\x00rest", "legacy GGJT");
    assert_err(b"lmgg\x01\x00\x00\x00rest", "legacy ggml");
    assert_err(b"<!DOCTYPE html><html>", "HTML page");
    assert_err(
        b"version https://git-lfs.github.com/spec/v1\n",
        "Git LFS pointer",
    );
    assert_err(b"hello, this is text\n", "text file");
    assert_err(b"\x80\x02}q\x00", "pickle");
    assert_err(b"\x00\x01\x02\x03\xff\xfe", "unrecognised binary");
    let msg = err(b"PK\x03\x04\x14\x00\x00\x00junk");
    assert!(msg.contains("\"PK\\x03\\x04"), "{msg}");
}

#[test]
fn version_1_and_unknown_versions() {
    let v1 = GgufWriter::new().version(1).to_bytes();
    assert_err(&v1, "GGUF version \"1\"");
    let v9 = GgufWriter::new().version(9).to_bytes();
    assert_err(&v9, "unknown GGUF version \"9\"");
}

#[test]
fn counts_that_cannot_fit() {
    let mut b = GgufWriter::new().to_bytes();
    b[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert_err(&b, "the tensor count is \"1099511627776\" at byte 8");
    let mut b = GgufWriter::new().to_bytes();
    b[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_err(&b, "the metadata key/value count is");
    // A string length larger than the file.
    let mut b = GgufWriter::new().kv("k", writer::string("v")).to_bytes();
    let at = 24 + 8 + 1 + 4;
    b[at..at + 8].copy_from_slice(&(1u64 << 50).to_le_bytes());
    assert_err(
        &b,
        "the length of the value of key \"k\" is \"1125899906842624\"",
    );
    // An array length larger than the file.
    let mut b = GgufWriter::new()
        .kv("k", writer::u32_array(&[1, 2]))
        .to_bytes();
    let at = 24 + 8 + 1 + 4 + 4;
    b[at..at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
    assert_err(&b, "the array length of key \"k\"");
    // A key length larger than the file.
    let mut b = GgufWriter::new().kv("k", Value::U8(1)).to_bytes();
    b[24..32].copy_from_slice(&(1u64 << 33).to_le_bytes());
    assert_err(&b, "the length of metadata key #0");
}

#[test]
fn unknown_value_type() {
    let b = GgufWriter::new()
        .kv_raw(b"weird", 13, vec![0; 8])
        .to_bytes();
    assert_err(
        &b,
        "unknown metadata value type \"13\" for key \"weird\" at byte 37",
    );
    let mut payload = 99u32.to_le_bytes().to_vec();
    payload.extend_from_slice(&0u64.to_le_bytes());
    let b = GgufWriter::new().kv_raw(b"arr", 9, payload).to_bytes();
    assert_err(&b, "unknown metadata value type \"99\" for key \"arr\"");
}

#[test]
fn arrays_nested_too_deep() {
    let mut v = Value::U8(1);
    for _ in 0..5 {
        v = Value::Array {
            element_type: v.value_type(),
            items: vec![v],
        };
    }
    let b = GgufWriter::new().kv("deep", v.clone()).to_bytes();
    assert_err(&b, "arrays nested more than 4 deep in key \"deep\"");
    // Four levels are fine.
    let Value::Array { items, .. } = v else {
        unreachable!()
    };
    let b = GgufWriter::new().kv("ok", items[0].clone()).to_bytes();
    read(&b).unwrap();
}

#[test]
fn invalid_utf8() {
    let b = GgufWriter::new()
        .kv_raw(b"bad\xffkey", 4, 1u32.to_le_bytes().to_vec())
        .to_bytes();
    assert_err(&b, "invalid UTF-8 in metadata key #0 at byte 32");
    let mut payload = 3u64.to_le_bytes().to_vec();
    payload.extend_from_slice(b"a\xc3z");
    let b = GgufWriter::new().kv_raw(b"s", 8, payload).to_bytes();
    assert_err(&b, "invalid UTF-8 in the value of key \"s\"");
    let b = GgufWriter::new()
        .tensor_raw(b"t\xfe", 0, &[4], None, None)
        .to_bytes();
    assert_err(&b, "invalid UTF-8 in the name of tensor #0");
}

#[test]
fn too_many_dims() {
    let b = GgufWriter::new()
        .tensor("t", GgmlType::F32, &[1, 1, 1, 1, 1])
        .to_bytes();
    assert_err(&b, "tensor \"t\" at byte 24 has \"5\" dimensions");
}

#[test]
fn element_count_overflow() {
    let b = GgufWriter::new()
        .tensor("t", GgmlType::F32, &[1 << 32, 1 << 32])
        .to_bytes();
    assert_err(
        &b,
        "element count of shape \"[4294967296, 4294967296]\" overflows",
    );
    let b = GgufWriter::new()
        .tensor("t", GgmlType::F32, &[1 << 31, 1 << 31, 2])
        .to_bytes();
    assert_err(&b, "size in bytes overflows");
}

#[test]
fn row_not_a_whole_number_of_blocks() {
    let b = GgufWriter::new()
        .tensor_raw(b"q", 12, &[100, 4], Some(0), Some(0))
        .to_bytes();
    assert_err(
        &b,
        "a row of \"100\" elements is not a multiple of the Q4_K block of 256",
    );
}

#[test]
fn duplicates() {
    let b = GgufWriter::new()
        .kv("k", Value::U8(1))
        .kv("k", Value::U8(2))
        .to_bytes();
    assert_err(&b, "duplicate metadata key \"k\" at byte 38");
    let b = GgufWriter::new()
        .tensor("t", GgmlType::F32, &[4])
        .tensor("t", GgmlType::F32, &[4])
        .to_bytes();
    assert_err(&b, "duplicate tensor name \"t\"");
}

#[test]
fn misaligned_tensor_offset() {
    let b = GgufWriter::new()
        .tensor_at("t", GgmlType::F32, &[4], 20)
        .to_bytes();
    assert_err(
        &b,
        "data offset \"20\" is not a multiple of the alignment 32",
    );
    // With general.alignment 4 the same offset is fine (after a 20-byte tensor).
    let b = GgufWriter::new()
        .alignment(4)
        .tensor_at("a", GgmlType::F32, &[5], 0)
        .tensor_at("t", GgmlType::F32, &[4], 20)
        .to_bytes();
    assert_eq!(read(&b).unwrap().alignment, 4);
}

#[test]
fn alignment_not_a_power_of_two() {
    let b = GgufWriter::new()
        .kv("general.alignment", Value::U32(48))
        .padding(16)
        .to_bytes();
    assert_err(
        &b,
        "general.alignment \"48\" at byte 24 is not a power of two",
    );
    let b = GgufWriter::new()
        .kv("general.alignment", Value::U32(0))
        .to_bytes();
    assert_err(&b, "general.alignment \"0\"");
    let b = GgufWriter::new()
        .kv("general.alignment", writer::string("32"))
        .to_bytes();
    assert_err(
        &b,
        "metadata key \"general.alignment\" at byte 24 is string",
    );
}

#[test]
fn overlapping_tensors() {
    // An overlap is one way of not starting where the previous tensor ends (llama.cpp's rule).
    let b = GgufWriter::new()
        .tensor_at("a", GgmlType::F32, &[32], 0)
        .tensor_at("b", GgmlType::F32, &[64], 128)
        .tensor_at("c", GgmlType::F32, &[64], 224)
        .to_bytes();
    assert_err(
        &b,
        "tensor \"c\" at byte 90: data offset \"224\" is not where the previous tensor's data ends (expected 384",
    );
}

#[test]
fn no_error_offset_beyond_the_file() {
    // Every error built from a file names offsets inside it (checked broadly by the
    // robustness property test); spot-check a truncated tokenizer.
    let tokens: Vec<String> = (0..10_000).map(|i| format!("t{i}")).collect();
    let full = GgufWriter::new()
        .kv("tokenizer.ggml.tokens", writer::string_array(&tokens))
        .to_bytes();
    let cut = &full[..full.len() / 2];
    let msg = err(cut);
    assert!(
        msg.contains(&format!("ends at byte {}", cut.len())),
        "{msg}"
    );
}

#[test]
fn artifact_loads_a_skipped_array_from_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tok.gguf");
    let tokens: Vec<String> = (0..20_000).map(|i| format!("piece{i}")).collect();
    GgufWriter::new()
        .endian(Endian::Big)
        .kv("tokenizer.ggml.tokens", writer::string_array(&tokens))
        .kv("short", writer::u32_array(&[1, 2, 3]))
        .kv("name", writer::string("n"))
        .write_file(&p, Data::Zeros)
        .unwrap();
    let a = llmbound::gguf::open(&p).unwrap();
    assert!(matches!(
        a.metadata().value("tokenizer.ggml.tokens"),
        Some(Value::Skipped(_))
    ));
    let t = a.load_array("tokenizer.ggml.tokens").unwrap();
    assert_eq!(t.len(), 20_000);
    assert_eq!(t[19_999], Value::String("piece19999".into()));
    assert_eq!(
        a.load_array("short").unwrap(),
        vec![Value::U32(1), Value::U32(2), Value::U32(3)]
    );
    let msg = a.load_array("name").unwrap_err().to_string();
    assert!(
        msg.contains("\"name\"") && msg.contains("expected an array"),
        "{msg}"
    );
    let msg = a.load_array("absent").unwrap_err().to_string();
    assert!(msg.contains("\"absent\" is missing"), "{msg}");
}

#[test]
fn values_display_on_one_line() {
    let tokens: Vec<String> = (0..20_000).map(|i| format!("piece{i}")).collect();
    let bytes = GgufWriter::new()
        .kv("tokenizer.ggml.tokens", writer::string_array(&tokens))
        .kv("heads", writer::u32_array(&[8; 40]))
        .kv("template", writer::string("line one\nline two"))
        .to_bytes();
    let h = read(&bytes).unwrap();
    let shown: Vec<String> = h.metadata.iter().map(|e| e.value.short(60)).collect();
    assert!(
        shown[0].starts_with("[string; 20000] (not loaded:"),
        "{}",
        shown[0]
    );
    assert!(shown[1].starts_with("[u32; 40] 8, 8"), "{}", shown[1]);
    assert_eq!(shown[2], "\"line one\\nline two\"");
    assert!(
        shown
            .iter()
            .all(|s| !s.contains('\n') && s.chars().count() <= 60)
    );
}

#[test]
fn the_first_duplicate_in_file_order_is_reported_before_later_problems() {
    // Names are checked for duplicates once at the end (sorted hashes); the error must still
    // be the first problem in file order, at the second record's offset.
    let b = GgufWriter::new()
        .tensor("a", GgmlType::F32, &[4])
        .tensor("b", GgmlType::F32, &[4])
        .tensor("b", GgmlType::F32, &[4])
        .tensor("a", GgmlType::F32, &[4])
        .to_bytes();
    let h = GgufWriter::new()
        .tensor("a", GgmlType::F32, &[4])
        .tensor("b", GgmlType::F32, &[4])
        .to_bytes();
    let third_record = {
        // The two-tensor header ends where the third record would start.
        let plain = read(&h).unwrap();
        plain.header_end
    };
    assert_err(
        &b,
        &format!("duplicate tensor name \"b\" at byte {third_record}"),
    );
    // A duplicate, then a record with a bad row: the duplicate is reported.
    let b = GgufWriter::new()
        .tensor("a", GgmlType::F32, &[4])
        .tensor("a", GgmlType::F32, &[4])
        .tensor_raw(b"q", 12, &[100, 4], Some(0), Some(0))
        .to_bytes();
    assert_err(&b, "duplicate tensor name \"a\"");
    // The failing record's own name repeats an earlier one: the duplicate comes first, as
    // the name is read before the dims.
    let b = GgufWriter::new()
        .tensor("a", GgmlType::F32, &[4])
        .tensor_raw(b"a", 12, &[100, 4], Some(0), Some(0))
        .to_bytes();
    assert_err(&b, "duplicate tensor name \"a\"");
    // A bad row before the duplicate: the bad row is reported.
    let b = GgufWriter::new()
        .tensor_raw(b"q", 12, &[100, 4], Some(0), Some(0))
        .tensor("a", GgmlType::F32, &[4])
        .tensor("a", GgmlType::F32, &[4])
        .to_bytes();
    assert_err(&b, "is not a multiple of the Q4_K block");
    // A duplicate in a file cut short after it: still the duplicate.
    let full = GgufWriter::new()
        .tensor("x", GgmlType::F32, &[4])
        .tensor("x", GgmlType::F32, &[4])
        .tensor("y", GgmlType::F32, &[4])
        .header_bytes();
    let cut = &full[..full.len() - 5];
    assert_err(cut, "duplicate tensor name \"x\"");
}

#[test]
fn many_distinct_names_are_not_duplicates() {
    let mut w = GgufWriter::new();
    for i in 0..5000 {
        w = w.tensor(&format!("blk.{i}.w"), GgmlType::F32, &[4]);
    }
    let h = read(&w.to_bytes()).unwrap();
    assert_eq!(h.tensors.len(), 5000);
    assert_eq!(h.tensors[4321].name(), "blk.4321.w");
    assert_eq!(h.tensors[4321].dims(), &[4]);
    let w = w.tensor("blk.17.w", GgmlType::F32, &[4]);
    assert_err(&w.to_bytes(), "duplicate tensor name \"blk.17.w\"");
}

/// The payload of a string array as it goes in a file (`kv_raw` type 9), and the file offset
/// of each element relative to the payload's start.
fn raw_string_array(items: &[Vec<u8>], big: bool) -> (Vec<u8>, Vec<usize>) {
    let u32b = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u64b = |v: u64| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut p = Vec::new();
    p.extend_from_slice(&u32b(8));
    p.extend_from_slice(&u64b(items.len() as u64));
    let mut at = Vec::new();
    for s in items {
        at.push(p.len());
        p.extend_from_slice(&u64b(s.len() as u64));
        p.extend_from_slice(s);
    }
    (p, at)
}

#[test]
fn large_string_arrays_are_walked_in_chunks_with_strings_of_every_size() {
    // Short strings, strings that straddle the reader's 64 KiB chunks and strings larger than
    // a chunk; then a key after the array that must be read at the right place.
    let mut items: Vec<Vec<u8>> = Vec::new();
    for i in 0..30_000u32 {
        let n = match i % 5000 {
            4999 => 70_000,
            2500 => 200_000,
            k => (k % 37) as usize,
        };
        items.push(
            (0..n)
                .map(|j| b'a' + ((i as usize + j) % 26) as u8)
                .collect(),
        );
    }
    for endian in [Endian::Little, Endian::Big] {
        let big = endian == Endian::Big;
        let (payload, _) = raw_string_array(&items, big);
        let bytes = GgufWriter::new()
            .endian(endian)
            .kv("general.architecture", writer::string("llama"))
            .kv_raw(b"big", 9, payload.clone())
            .kv("after", Value::U32(7))
            .to_bytes();
        let h = read(&bytes).unwrap();
        let Value::Skipped(s) = h.metadata.value("big").unwrap() else {
            panic!("a {}-byte array kept", payload.len());
        };
        assert_eq!((s.count, s.byte_len), (30_000, payload.len() as u64 - 12));
        assert_eq!(h.metadata.get_u64("after").unwrap(), Some(7));
        let loaded =
            llmbound::gguf::load_array(Cursor::new(&bytes), bytes.len() as u64, h.endian, "big", s)
                .unwrap();
        assert_eq!(loaded.len(), items.len());
        for i in [0, 1, 2500, 4999, 5000, 29_999] {
            assert_eq!(
                loaded[i],
                Value::String(String::from_utf8(items[i].clone()).unwrap()),
                "item {i}"
            );
        }
    }
}

#[test]
fn a_small_string_array_is_still_kept_whole() {
    let items: Vec<Vec<u8>> = (0..1000).map(|i| format!("s{i}").into_bytes()).collect();
    let (payload, _) = raw_string_array(&items, false);
    let bytes = GgufWriter::new()
        .kv_raw(b"k", 9, payload)
        .kv("after", Value::U8(1))
        .to_bytes();
    let h = read(&bytes).unwrap();
    let Value::Array { items: got, .. } = h.metadata.value("k").unwrap() else {
        panic!("a small array skipped");
    };
    assert_eq!(got.len(), 1000);
    assert_eq!(got[999], Value::String("s999".into()));
    assert_eq!(h.metadata.get_u64("after").unwrap(), Some(1));
}

#[test]
fn hostile_string_arrays_keep_their_messages() {
    // 20,000 strings of 10 bytes: the first 64 KiB are checked as kept strings, the rest walked.
    let items = || -> Vec<Vec<u8>> { (0..20_000).map(|_| b"0123456789".to_vec()).collect() };
    let start = {
        // The payload's offset in the file: the header (24 bytes), the key's length and bytes,
        // the type.
        24 + 8 + 1 + 4
    };
    for (element, want) in [
        (3usize, "the length of the value of key \"k\""),
        (15_000, "a string length in key \"k\""),
    ] {
        let (mut payload, at) = raw_string_array(&items(), false);
        payload[at[element]..at[element] + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let bytes = GgufWriter::new().kv_raw(b"k", 9, payload).to_bytes();
        assert_err(
            &bytes,
            &format!(
                "{want} is \"1099511627776\" at byte {}",
                start + at[element]
            ),
        );
    }
    // Invalid UTF-8 among the first 64 KiB is refused, as when the array was read string by
    // string; past them the strings are not checked until loaded.
    let mut bad = items();
    bad[5] = b"\xff\xfe".to_vec();
    let (payload, at) = raw_string_array(&bad, false);
    assert_err(
        &GgufWriter::new().kv_raw(b"k", 9, payload).to_bytes(),
        &format!(
            "invalid UTF-8 in the value of key \"k\" at byte {}",
            start + at[5] + 8
        ),
    );
    let mut late = items();
    late[19_000] = b"\xff\xfe".to_vec();
    let (payload, _) = raw_string_array(&late, false);
    let h = read(&GgufWriter::new().kv_raw(b"k", 9, payload).to_bytes()).unwrap();
    assert!(matches!(h.metadata.value("k"), Some(Value::Skipped(_))));
    // Cut inside a length field past the first 64 KiB.
    let (payload, at) = raw_string_array(&items(), false);
    let bytes = GgufWriter::new().kv_raw(b"k", 9, payload).header_bytes();
    let cut = &bytes[..start + at[12_000] + 3];
    assert_err(
        cut,
        &format!(
            "it ends at byte {} while reading a string length in key \"k\" at byte {}",
            cut.len(),
            start + at[12_000]
        ),
    );
}

#[test]
fn string_arrays_one_after_another_are_each_where_they_belong() {
    // What one walk reads past its array is where the next record starts: two large arrays,
    // a small one and a scalar in a row, each read from the right place (both byte orders,
    // through a file and a buffered reader as `open` reads).
    let big =
        |n: usize, tag: &str| -> Vec<String> { (0..n).map(|i| format!("{tag}{i}")).collect() };
    for endian in [Endian::Little, Endian::Big] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("arrays.gguf");
        GgufWriter::new()
            .endian(endian)
            .kv("a", writer::string_array(big(20_000, "a")))
            .kv("b", writer::string_array(big(30_000, "bb")))
            .kv("c", writer::string_array(["x", "y"]))
            .kv("d", writer::string_array(big(9_000, "d")))
            .kv("e", Value::U64(5))
            .tensor("t", GgmlType::F32, &[4])
            .write_file(&p, Data::Zeros)
            .unwrap();
        let a = llmbound::gguf::open(&p).unwrap();
        let m = a.metadata();
        assert_eq!(m.array_len("a"), Some(20_000));
        assert_eq!(m.array_len("b"), Some(30_000));
        assert_eq!(
            m.value("c"),
            Some(&Value::Array {
                element_type: ValueType::String,
                items: vec![Value::String("x".into()), Value::String("y".into())]
            })
        );
        assert_eq!(m.array_len("d"), Some(9_000));
        assert_eq!(m.get_u64("e").unwrap(), Some(5));
        assert_eq!(a.tensor("t").unwrap().dims(), &[4]);
        assert_eq!(
            a.load_array("b").unwrap()[29_999],
            Value::String("bb29999".into())
        );
        assert_eq!(a.load_array("d").unwrap()[0], Value::String("d0".into()));
    }
}
