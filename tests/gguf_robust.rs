//! Robustness: random bytes and random mutations of valid headers never panic the reader,
//! every error names an offset inside the file, and what is accepted is self-consistent.

#[path = "support/fuzz_seeds.rs"]
mod fuzz_seeds;

use fuzz_seeds::seeds;
use llmbound::gguf::read_header;
use proptest::prelude::*;
use std::io::Cursor;

fn check(bytes: &[u8]) {
    let len = bytes.len() as u64;
    match read_header(Cursor::new(bytes), len) {
        Ok(h) => {
            assert!(h.header_end <= len);
            assert!(h.data_start >= h.header_end);
            assert_eq!(h.data_start % h.alignment, 0);
            assert!(h.alignment.is_power_of_two());
            assert_eq!(h.missing_bytes, h.data_end.saturating_sub(len));
            for t in &h.tensors {
                assert!(t.dims().len() <= 4);
                assert_eq!(t.offset % h.alignment, 0);
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.is_empty() && !msg.contains('\n'));
            if let Some(off) = e.offset() {
                assert!(off <= len, "offset {off} beyond {len}: {msg}");
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Set(usize, u8),
    Insert(usize, Vec<u8>),
    Remove(usize, usize),
    Truncate(usize),
    SetU64(usize, u64),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(i, v)| Edit::Insert(i, v)),
        (any::<usize>(), 1usize..32).prop_map(|(i, n)| Edit::Remove(i, n)),
        any::<usize>().prop_map(Edit::Truncate),
        (
            any::<usize>(),
            prop_oneof![Just(0u64), Just(u64::MAX), Just(1 << 40), any::<u64>()]
        )
            .prop_map(|(i, v)| Edit::SetU64(i, v)),
    ]
}

fn apply(mut b: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        if b.is_empty() {
            break;
        }
        let n = b.len();
        match e {
            Edit::Set(i, v) => b[i % n] = *v,
            Edit::Insert(i, v) => {
                let at = i % n;
                b.splice(at..at, v.iter().copied());
            }
            Edit::Remove(i, k) => {
                let at = i % n;
                let end = (at + k).min(n);
                b.drain(at..end);
            }
            Edit::Truncate(i) => b.truncate(i % n),
            Edit::SetU64(i, v) => {
                let at = i % n;
                let end = (at + 8).min(n);
                b[at..end].copy_from_slice(&v.to_le_bytes()[..end - at]);
            }
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check(&bytes);
    }

    #[test]
    fn random_bytes_after_a_valid_start(tail in prop::collection::vec(any::<u8>(), 0..512), v in 0u32..5) {
        let mut b = b"GGUF".to_vec();
        b.extend_from_slice(&v.to_le_bytes());
        b.extend_from_slice(&tail);
        check(&b);
    }

    #[test]
    fn mutated_headers_never_panic(seed in 0usize..3, edits in prop::collection::vec(edit(), 1..8)) {
        let b = apply(seeds()[seed].clone(), &edits);
        check(&b);
    }
}

#[test]
fn seeds_are_valid() {
    for s in seeds() {
        let h = read_header(Cursor::new(&s), s.len() as u64).unwrap();
        assert_eq!(h.tensors.len(), 3);
    }
}

/// Inputs the fuzzer found; each must read (or fail) without panicking.
#[test]
fn fuzz_regressions() {
    let found: [&[u8]; 1] = [include_bytes!(
        "../fuzz/corpus/gguf_header/regression-sum-overflow"
    )];
    for bytes in found.iter().copied() {
        check(bytes);
        if let Ok(h) = read_header(Cursor::new(bytes), bytes.len() as u64) {
            let a = llmbound::gguf::Artifact {
                path: "x.gguf".into(),
                shards: vec![llmbound::gguf::Shard {
                    path: "x.gguf".into(),
                    header: h,
                }],
                warnings: Vec::new(),
                known_as: None,
            };
            let inv = llmbound::gguf::TensorInventory::from_artifact(&a);
            let _ = inv.to_core_inventory();
            let _ = llmbound::gguf::model_shape(&a, "x");
        }
    }
}
