//! Split models: opening any shard finds the others by name, checks split.count/no and the
//! tensor count, merges the tensor lists, sums the file bytes; missing shards are named.

use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, GgufError, Value, open, open_single};
use std::path::Path;

fn shard(no: u16, count: u16, total_tensors: i32, names: &[&str]) -> GgufWriter {
    let mut w = GgufWriter::new();
    if no == 0 {
        w = w
            .kv("general.architecture", writer::string("llama"))
            .kv("llama.block_count", Value::U32(2));
    }
    w = w
        .kv("split.no", Value::U16(no))
        .kv("split.count", Value::U16(count))
        .kv("split.tensors.count", Value::I32(total_tensors));
    for n in names {
        w = w.tensor(n, GgmlType::F16, &[64, 64]);
    }
    w
}

fn write_model(dir: &Path, prefix: &str, shards: &[GgufWriter]) -> Vec<u64> {
    let n = shards.len();
    shards
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let p = dir.join(format!("{prefix}-{:05}-of-{n:05}.gguf", i + 1));
            w.write_file(&p, Data::Zeros).unwrap()
        })
        .collect()
}

fn three_shards() -> Vec<GgufWriter> {
    vec![
        shard(0, 3, 5, &["token_embd.weight", "blk.0.attn_q.weight"]),
        shard(1, 3, 5, &["blk.0.attn_k.weight", "blk.1.attn_q.weight"]),
        shard(2, 3, 5, &["output.weight"]),
    ]
}

#[test]
fn any_shard_opens_the_whole_model() {
    let dir = tempfile::tempdir().unwrap();
    let sizes = write_model(dir.path(), "Model-Q4", &three_shards());
    for i in 1..=3 {
        let p = dir.path().join(format!("Model-Q4-0000{i}-of-00003.gguf"));
        let a = open(&p).unwrap();
        assert_eq!(a.path, p);
        assert!(a.is_split());
        assert_eq!(a.shards.len(), 3);
        assert_eq!(a.file_bytes(), sizes.iter().sum::<u64>());
        assert_eq!(a.tensor_count(), 5);
        assert_eq!(a.tensor("output.weight").unwrap().shard, 2);
        assert_eq!(a.tensor("blk.0.attn_k.weight").unwrap().shard, 1);
        assert_eq!(a.tensor("token_embd.weight").unwrap().shard, 0);
        // Offsets are per shard.
        assert_eq!(a.tensor("blk.0.attn_k.weight").unwrap().offset, 0);
        assert_eq!(a.metadata().architecture(), Some("llama"));
        let files = a.weight_files();
        assert_eq!(files.len(), 3);
        assert_eq!(files[2].bytes.value, sizes[2]);
        assert!(files[0].file.contains("Model-Q4-00001-of-00003.gguf"));
    }
}

#[test]
fn a_missing_shard_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path(), "M", &three_shards());
    std::fs::remove_file(dir.path().join("M-00003-of-00003.gguf")).unwrap();
    let err = open(dir.path().join("M-00002-of-00003.gguf")).unwrap_err();
    assert!(matches!(err, GgufError::MissingShards { .. }));
    let msg = err.to_string();
    assert!(msg.contains("has 3 shards"), "{msg}");
    assert!(
        msg.contains("\"M-00003-of-00003.gguf\" is missing"),
        "{msg}"
    );
    // The shard alone still opens.
    let one = open_single(dir.path().join("M-00002-of-00003.gguf")).unwrap();
    assert_eq!(one.tensor_count(), 2);
    assert!(one.warnings[0].contains("one shard of a 3-file split model"));
}

#[test]
fn inconsistent_split_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = three_shards();
    s[1] = shard(2, 3, 5, &["blk.0.attn_k.weight", "blk.1.attn_q.weight"]);
    write_model(dir.path(), "M", &s);
    let msg = open(dir.path().join("M-00001-of-00003.gguf"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("M-00002-of-00003.gguf"), "{msg}");
    assert!(msg.contains("split.no is \"2\""), "{msg}");

    let dir = tempfile::tempdir().unwrap();
    let mut s = three_shards();
    s[2] = shard(2, 4, 5, &["output.weight"]);
    write_model(dir.path(), "M", &s);
    let msg = open(dir.path().join("M-00001-of-00003.gguf"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("split.count is \"4\""), "{msg}");
}

#[test]
fn tensor_count_must_match() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = three_shards();
    s[0] = shard(0, 3, 7, &["token_embd.weight", "blk.0.attn_q.weight"]);
    write_model(dir.path(), "M", &s);
    let msg = open(dir.path().join("M-00003-of-00003.gguf"))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("split.tensors.count is \"7\" but the shards hold 5"),
        "{msg}"
    );
}

#[test]
fn duplicate_tensor_across_shards() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = three_shards();
    s[2] = shard(2, 3, 5, &["blk.0.attn_q.weight"]);
    write_model(dir.path(), "M", &s);
    let msg = open(dir.path().join("M-00001-of-00003.gguf"))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("duplicate tensor name \"blk.0.attn_q.weight\""),
        "{msg}"
    );
}

#[test]
fn a_badly_named_shard() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("renamed.gguf");
    three_shards()[0].write_file(&p, Data::Zeros).unwrap();
    let msg = open(&p).unwrap_err().to_string();
    assert!(
        msg.contains("does not follow NAME-00001-of-00003.gguf"),
        "{msg}"
    );
}

#[test]
fn a_single_file_is_one_shard() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("single.gguf");
    let len = GgufWriter::new()
        .tensor("a", GgmlType::F32, &[8])
        .write_file(&p, Data::Zeros)
        .unwrap();
    let a = open(&p).unwrap();
    assert!(!a.is_split());
    assert_eq!(a.file_bytes(), len);
    assert!(a.all_warnings().is_empty());
    let missing = open(dir.path().join("nope.gguf")).unwrap_err().to_string();
    assert!(
        missing.contains("cannot open") && missing.contains("nope.gguf"),
        "{missing}"
    );
}
