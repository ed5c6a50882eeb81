//! Cross-checks of our reader against two others: llama.cpp's own reader (PyPI `gguf`,
//! through `tests/crosscheck_gguf.py`) and `gguf-rs-lib`. The real gemma-3-270m file is
//! checked when `LLMBOUND_GEMMA_GGUF` points at it; fixtures are written by the tests.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use gguf_rs_lib::builder::GGUFBuilder;
use gguf_rs_lib::format::metadata::MetadataValue;
use gguf_rs_lib::format::types::GGUFTensorType;
use gguf_rs_lib::reader::file_reader::GGUFFileReader;
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{Artifact, Endian, GgmlType, TensorInventory, Value, open, read_header};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::Path;
use std::process::Command;

fn python_gguf_available() -> bool {
    Command::new("python3")
        .args(["-c", "import gguf"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn gguf_py(path: &Path) -> Json {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/crosscheck_gguf.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(path)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "crosscheck_gguf.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON from crosscheck_gguf.py")
}

/// Compare everything gguf-py reports with what we read.
fn assert_same_as_gguf_py(a: &Artifact, py: &Json) {
    let h = a.header();
    assert_eq!(py["version"].as_u64(), Some(h.version as u64));
    let order = match h.endian {
        Endian::Little => "little",
        Endian::Big => "big",
    };
    assert_eq!(py["byte_order"].as_str(), Some(order));
    assert_eq!(py["data_offset"].as_u64(), Some(h.data_start));
    assert_eq!(py["alignment"].as_u64(), Some(h.alignment));
    let keys: Vec<&str> = py["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let ours: Vec<&str> = h.metadata.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ours, "metadata keys in file order");

    let tensors = py["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), h.tensors.len());
    for (p, t) in tensors.iter().zip(&h.tensors) {
        assert_eq!(p["name"].as_str(), Some(t.name()));
        assert_eq!(
            p["type"].as_str(),
            Some(t.ggml_type.name().as_str()),
            "{}",
            t.name()
        );
        assert_eq!(p["type_id"].as_u64(), Some(t.ggml_type.0 as u64));
        let shape: Vec<u64> = p["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(shape, t.dims(), "{}", t.name());
        assert_eq!(p["elements"].as_u64(), Some(t.elements), "{}", t.name());
        assert_eq!(p["bytes"].as_u64(), t.bytes, "{}", t.name());
        assert_eq!(p["offset"].as_u64(), Some(t.offset), "{}", t.name());
    }

    let inv = TensorInventory::from_artifact(a);
    let per_type = py["per_type"].as_object().unwrap();
    assert_eq!(per_type.len(), inv.by_type.len());
    for r in &inv.by_type {
        let p = &per_type[&r.type_name];
        assert_eq!(p["count"].as_u64(), Some(r.count as u64), "{}", r.type_name);
        assert_eq!(p["elements"].as_u64(), Some(r.elements), "{}", r.type_name);
        assert_eq!(p["bytes"].as_u64(), Some(r.bytes), "{}", r.type_name);
    }
}

fn fixture() -> GgufWriter {
    GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string("cross"))
        .kv("llama.block_count", Value::U32(1))
        .kv("llama.attention.head_count_kv", writer::u32_array(&[2]))
        .kv("llama.rope.freq_base", Value::F32(500000.0))
        .kv(
            "tokenizer.ggml.tokens",
            writer::string_array(["<s>", "a", "b"]),
        )
        .tensor("token_embd.weight", GgmlType::Q8_0, &[64, 3])
        .tensor("blk.0.attn_q.weight", GgmlType::Q4_K, &[256, 64])
        .tensor("blk.0.ffn_down.weight", GgmlType::Q6_K, &[256, 64])
        .tensor("blk.0.attn_norm.weight", GgmlType::F32, &[64])
        .tensor("blk.0.ffn_up.weight", GgmlType::BF16, &[64, 16])
        .tensor("blk.0.ffn_gate_exps.weight", GgmlType::MXFP4, &[64, 16, 4])
        .tensor("output.weight", GgmlType::IQ4_XS, &[256, 3])
}

#[test]
fn gguf_py_reads_our_fixtures_the_same() {
    if !python_gguf_available() {
        skipped!(
            "note: python3 with the `gguf` package is unavailable; gguf-py cross-check skipped"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (version, endian) in [(3, Endian::Little), (2, Endian::Little), (3, Endian::Big)] {
        let p = dir.path().join(format!("x-v{version}-{endian}.gguf"));
        fixture()
            .version(version)
            .endian(endian)
            .write_file(&p, Data::Zeros)
            .unwrap();
        let a = open(&p).unwrap();
        assert_same_as_gguf_py(&a, &gguf_py(&p));
    }
}

#[test]
fn gemma_matches_gguf_py() {
    let Some(path) = std::env::var_os("LLMBOUND_GEMMA_GGUF") else {
        skipped!("note: LLMBOUND_GEMMA_GGUF is unset; the gemma-3-270m cross-check was skipped");
        return;
    };
    if !python_gguf_available() {
        skipped!("note: python3 with the `gguf` package is unavailable; cross-check skipped");
        return;
    }
    let path = Path::new(&path);
    let a = open(path).unwrap();
    let py = gguf_py(path);
    assert_same_as_gguf_py(&a, &py);
    let inv = TensorInventory::from_artifact(&a);
    assert_eq!(inv.rows.len(), 236);
    assert_eq!(inv.parameters, 268_098_176);
    assert!(inv.tied_output);
    assert_eq!(inv.row("token_embd.weight").unwrap().type_name, "Q8_0");
}

/// What gguf-rs-lib reads, in our terms.
/// Data start and (name, type id, dims, offset) of every tensor.
type View = (u64, Vec<(String, u32, Vec<u64>, u64)>);

fn rs_lib_view(bytes: &[u8]) -> gguf_rs_lib::Result<View> {
    let r = GGUFFileReader::new(Cursor::new(bytes))?;
    let tensors = r
        .tensor_infos()
        .iter()
        .map(|t| {
            (
                t.name().to_string(),
                t.tensor_type() as u32,
                t.shape().dims().to_vec(),
                t.data_offset(),
            )
        })
        .collect();
    Ok((r.tensor_data_offset(), tensors))
}

fn our_view(bytes: &[u8]) -> View {
    let h = read_header(Cursor::new(bytes), bytes.len() as u64).unwrap();
    let tensors = h
        .tensors
        .iter()
        .map(|t| {
            (
                t.name().to_string(),
                t.ggml_type.0,
                t.dims().to_vec(),
                t.offset,
            )
        })
        .collect();
    (h.data_start, tensors)
}

#[test]
fn gguf_rs_lib_agrees_on_our_fixture() {
    let bytes = fixture().to_bytes();
    assert_eq!(rs_lib_view(&bytes).unwrap(), our_view(&bytes));
    let r = GGUFFileReader::new(Cursor::new(&bytes)).unwrap();
    let m = r.metadata();
    assert_eq!(
        m.get("general.name").and_then(|v| v.as_str()),
        Some("cross")
    );
    assert_eq!(m.get("llama.block_count").and_then(|v| v.as_u64()), Some(1));
}

#[test]
fn we_read_what_gguf_rs_lib_writes() {
    let (bytes, _) = GGUFBuilder::new()
        .add_metadata(
            "general.architecture",
            MetadataValue::String("llama".into()),
        )
        .add_metadata("llama.block_count", MetadataValue::U32(2))
        .add_metadata("general.file_type", MetadataValue::U32(15))
        .add_tensor("a.weight", vec![32, 2], GGUFTensorType::F32, vec![0; 256])
        .unwrap()
        .add_tensor("b.weight", vec![32, 2], GGUFTensorType::Q8_0, vec![0; 68])
        .unwrap()
        .add_tensor("c.weight", vec![256], GGUFTensorType::Q4_K, vec![0; 144])
        .unwrap()
        .build_to_bytes()
        .unwrap();
    assert_eq!(our_view(&bytes), rs_lib_view(&bytes).unwrap());
    let h = read_header(Cursor::new(&bytes), bytes.len() as u64).unwrap();
    assert_eq!(h.metadata.get_u64("llama.block_count").unwrap(), Some(2));
    assert_eq!(h.tensor("c.weight").unwrap().bytes, Some(144));
    assert_eq!(h.missing_bytes, 0);
}

/// The reasons for a reader of our own: files llama.cpp reads that gguf-rs-lib refuses.
#[test]
fn gguf_rs_lib_refuses_files_llama_cpp_reads() {
    let refused = [
        ("version 2", fixture().version(2).to_bytes()),
        ("big-endian", fixture().endian(Endian::Big).to_bytes()),
        (
            "hyphenated key",
            fixture()
                .kv("gpt-oss.expert_count", Value::U32(32))
                .to_bytes(),
        ),
        ("alignment 4", fixture().alignment(4).to_bytes()),
        (
            "unknown tensor type",
            fixture()
                .tensor_raw(b"x.weight", 31, &[32], None, Some(18))
                .to_bytes(),
        ),
    ];
    let mut summary = BTreeMap::new();
    for (what, bytes) in refused {
        read_header(Cursor::new(&bytes), bytes.len() as u64)
            .unwrap_or_else(|e| panic!("{what}: we must read it: {e}"));
        summary.insert(what, rs_lib_view(&bytes).is_err());
    }
    // Record what gguf-rs-lib 0.3.3 does; every case is refused today.
    assert!(
        summary.values().all(|refused| *refused),
        "gguf-rs-lib now reads some of these: {summary:?}"
    );
}

#[test]
fn gemma_matches_gguf_rs_lib_when_it_reads_it() {
    let Some(path) = std::env::var_os("LLMBOUND_GEMMA_GGUF") else {
        skipped!("note: LLMBOUND_GEMMA_GGUF is unset; skipped");
        return;
    };
    // gguf-rs-lib checks tensor ranges against the file size but reads no tensor data.
    let file = std::fs::File::open(&path).unwrap();
    let r = match GGUFFileReader::new(std::io::BufReader::new(file)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("note: gguf-rs-lib refuses the gemma file: {e}");
            return;
        }
    };
    let a = open(&path).unwrap();
    assert_eq!(r.tensor_data_offset(), a.header().data_start);
    assert_eq!(r.tensor_count(), a.tensor_count());
    for (x, y) in r.tensor_infos().iter().zip(a.tensors()) {
        assert_eq!(x.name(), y.name());
        assert_eq!(x.tensor_type() as u32, y.ggml_type.0);
        assert_eq!(x.shape().dims(), y.dims());
        assert_eq!(x.data_offset(), y.offset);
        assert_eq!(Some(x.expected_data_size()), y.bytes);
    }
}
