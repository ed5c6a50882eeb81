//! Hostile safetensors files: each gets a one-line error naming the file and the byte,
//! never a panic, a hang or an allocation of a claimed size.

use llmbound::safetensors::{self, reader::MAX_HEADER_BYTES};
use std::fs;
use std::io::Write;
use std::path::Path;

fn write(dir: &Path, name: &str, header_len: u64, json: &[u8], total: u64) -> std::path::PathBuf {
    let p = dir.join(name);
    let mut f = fs::File::create(&p).unwrap();
    f.write_all(&header_len.to_le_bytes()).unwrap();
    f.write_all(json).unwrap();
    if total > 0 {
        f.set_len(total).unwrap();
    }
    p
}

fn honest(dir: &Path, name: &str, json: &str, data: u64) -> std::path::PathBuf {
    write(
        dir,
        name,
        json.len() as u64,
        json.as_bytes(),
        8 + json.len() as u64 + data,
    )
}

fn err(p: &Path) -> String {
    let e = safetensors::index::open_file(p)
        .expect_err("must be refused")
        .to_string();
    assert!(!e.contains('\n'), "not one line: {e}");
    let name = p.to_string_lossy();
    assert!(e.contains(name.as_ref()), "does not name the file: {e}");
    e
}

#[test]
fn truncated_header() {
    let d = tempfile::tempdir().unwrap();
    // Length says 200 bytes; the file ends after 20.
    let p = write(d.path(), "t.safetensors", 200, br#"{"a":{"dtype":"F32""#, 0);
    let e = err(&p);
    assert!(e.contains("byte 0") && e.contains("past the end"), "{e}");
    // Shorter than the length field itself.
    let p = d.path().join("tiny.safetensors");
    fs::write(&p, [1u8, 2, 3]).unwrap();
    let e = err(&p);
    assert!(
        e.contains("byte 0") && e.contains("shorter than the 8-byte"),
        "{e}"
    );
}

#[test]
fn header_cut_inside_json() {
    let d = tempfile::tempdir().unwrap();
    let j = br#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}"#; // no closing brace
    let p = write(
        d.path(),
        "c.safetensors",
        j.len() as u64,
        j,
        8 + j.len() as u64 + 8,
    );
    let e = err(&p);
    assert!(e.contains("not valid JSON") && e.contains("byte "), "{e}");
}

#[test]
fn header_length_beyond_file() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "b.safetensors", 1_000_000, b"{}", 0);
    let e = err(&p);
    assert!(
        e.contains("\"1000000\"") && e.contains("runs past the end"),
        "{e}"
    );
}

#[test]
fn ten_gigabyte_header_claim_is_refused_before_allocating() {
    let d = tempfile::tempdir().unwrap();
    // A 10 GB claim in a sparse 11 GB file: the cap refuses it without reading or allocating.
    let p = write(
        d.path(),
        "big.safetensors",
        10_000_000_000,
        b"{",
        11_000_000_000,
    );
    let e = err(&p);
    assert!(
        e.contains("\"10000000000\"") && e.contains(&MAX_HEADER_BYTES.to_string()),
        "{e}"
    );
    // u64::MAX as well.
    let p = write(d.path(), "max.safetensors", u64::MAX, b"{}", 0);
    let e = err(&p);
    assert!(e.contains("cap"), "{e}");
}

#[test]
fn overlapping_offsets() {
    let d = tempfile::tempdir().unwrap();
    let j = r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}}"#;
    let p = honest(d.path(), "o.safetensors", j, 24);
    let e = err(&p);
    assert!(
        e.contains("\"b\"") && e.contains("overlap") && e.contains("\"a\""),
        "{e}"
    );
    let at = 8 + j.find("\"b\"").unwrap();
    assert!(e.contains(&format!("byte {at}")), "{e}");
}

#[test]
fn out_of_file_offsets() {
    let d = tempfile::tempdir().unwrap();
    let j = r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
    let p = honest(d.path(), "oof.safetensors", j, 8);
    let e = err(&p);
    assert!(e.contains("past the end of the file"), "{e}");
    let j = r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[16,0]}}"#;
    let p = honest(d.path(), "rev.safetensors", j, 16);
    assert!(err(&p).contains("end before they begin"));
    // Huge offsets and an element count that overflows.
    let j = r#"{"a":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,18446744073709551615]}}"#;
    let p = honest(d.path(), "huge.safetensors", j, 16);
    err(&p);
    let j = r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,12]}}"#;
    let p = honest(d.path(), "size.safetensors", j, 16);
    assert!(err(&p).contains("need 16 bytes"));
}

#[test]
fn unknown_dtype() {
    let d = tempfile::tempdir().unwrap();
    let j = r#"{"a":{"dtype":"Q4_K","shape":[4],"data_offsets":[0,16]}}"#;
    let p = honest(d.path(), "u.safetensors", j, 16);
    let e = err(&p);
    assert!(e.contains("unknown dtype \"Q4_K\""), "{e}");
}

#[test]
fn not_json_and_odd_values() {
    let d = tempfile::tempdir().unwrap();
    for (name, j) in [
        ("gguf.safetensors", "GGUF\u{3}\0\0\0"),
        ("arr.safetensors", "[1,2,3]"),
        ("num.safetensors", r#"{"a":5}"#),
        (
            "neg.safetensors",
            r#"{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#,
        ),
        ("meta.safetensors", r#"{"__metadata__":{"format":5}}"#),
        (
            "ctl.safetensors",
            "{\"a\u{1b}[2J\":{\"dtype\":\"X\",\"shape\":[],\"data_offsets\":[0,0]}}",
        ),
        (
            "deep.safetensors",
            &format!("{{\"a\":{}{}}}", "[".repeat(10_000), "]".repeat(10_000)),
        ),
    ] {
        let p = honest(d.path(), name, j, 0);
        let e = err(&p);
        assert!(!e.contains('\u{1b}'), "control character in message: {e:?}");
    }
}

#[test]
fn index_naming_a_missing_tensor_or_a_path_outside() {
    let d = tempfile::tempdir().unwrap();
    let j = r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
    honest(d.path(), "model-00001-of-00001.safetensors", j, 4);
    fs::write(
        d.path().join("model.safetensors.index.json"),
        r#"{"weight_map":{"a":"model-00001-of-00001.safetensors","b":"model-00001-of-00001.safetensors"}}"#,
    )
    .unwrap();
    let e = safetensors::open_dir(d.path()).unwrap_err().to_string();
    assert!(e.contains("\"b\"") && !e.contains('\n'), "{e}");
    fs::write(
        d.path().join("model.safetensors.index.json"),
        r#"{"weight_map":{"a":"../../etc/passwd"}}"#,
    )
    .unwrap();
    let e = safetensors::open_dir(d.path()).unwrap_err().to_string();
    assert!(e.contains("not a file beside the index"), "{e}");
}

#[test]
fn an_honest_sharded_set_reads() {
    let d = tempfile::tempdir().unwrap();
    let j1 = r#"{"__metadata__":{"format":"mlx"},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}"#;
    let j2 = r#"{"b":{"dtype":"U32","shape":[3],"data_offsets":[0,12]}}"#;
    let p1 = honest(d.path(), "model-00001-of-00002.safetensors", j1, 8);
    let p2 = honest(d.path(), "model-00002-of-00002.safetensors", j2, 12);
    fs::write(
        d.path().join("model.safetensors.index.json"),
        r#"{"metadata":{},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}"#,
    )
    .unwrap();
    let m = safetensors::open_dir(d.path()).unwrap();
    assert_eq!(m.shards.len(), 2);
    let w = fs::metadata(p1).unwrap().len() + fs::metadata(p2).unwrap().len();
    assert_eq!(m.file_bytes(), w);
    assert_eq!(m.tensors().count(), 2);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}
