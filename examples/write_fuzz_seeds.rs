//! Write the fuzzer's seed corpus into `fuzz/corpus/gguf_header` (run by hand when the GGUF
//! writer changes): `cargo run --example write_fuzz_seeds`.

#[path = "../tests/support/fuzz_seeds.rs"]
mod fuzz_seeds;

fn main() -> std::io::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/gguf_header");
    std::fs::create_dir_all(&dir)?;
    for (name, bytes) in fuzz_seeds::corpus() {
        std::fs::write(dir.join(name), bytes)?;
        println!("wrote {}", dir.join(name).display());
    }
    Ok(())
}
