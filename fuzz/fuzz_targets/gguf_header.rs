//! Fuzz the GGUF header reader (and what is built from an accepted header: the inventory,
//! the architecture figures and the model shape). Run with `cargo +nightly fuzz run
//! gguf_header` from the repository root; seeds are in `fuzz/corpus/gguf_header/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use llmbound::gguf::{
    Artifact, Shard, TensorInventory, Value, arch_report, load_array, model_shape, read_header,
};
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    let len = data.len() as u64;
    match read_header(Cursor::new(data), len) {
        Ok(header) => {
            for entry in header.metadata.iter() {
                let _ = entry.value.short(80);
                if let Value::Skipped(s) = &entry.value {
                    let _ = load_array(Cursor::new(data), len, header.endian, &entry.key, s);
                }
            }
            assert!(header.header_end <= len);
            assert!(header.data_start >= header.header_end);
            assert_eq!(header.missing_bytes, header.data_end.saturating_sub(len));
            let artifact = Artifact {
                path: "fuzz.gguf".into(),
                shards: vec![Shard {
                    path: "fuzz.gguf".into(),
                    header,
                }],
                warnings: Vec::new(),
            };
            let inventory = TensorInventory::from_artifact(&artifact);
            let core = inventory.to_core_inventory();
            assert_eq!(core.tensor_bytes, inventory.tensor_bytes);
            let _ = arch_report(&artifact);
            let _ = model_shape(&artifact, "fuzz");
        }
        Err(e) => {
            let message = e.to_string();
            assert!(!message.contains('\n'));
            if let Some(offset) = e.offset() {
                assert!(offset <= len, "{message}");
            }
        }
    }
});
