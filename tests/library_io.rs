//! Scanning a library reads headers only: sparse copies of the real gemma file are scanned in
//! this process and the bytes it read (`rchar` of /proc/self/io) stay within the headers. In a
//! file of its own, so no other test of the same process reads files meanwhile.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use std::path::PathBuf;

/// Bytes this process has read through read(2) and friends (`rchar` of /proc/self/io).
fn bytes_read_by_this_process() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Real model headers: sparse copies of the gemma file (its 6.5 MB header written, the tensor
/// data a hole), scanned in this process; the bytes read stay within the headers, so no
/// tensor data is read. (Other tests of this file read only child pipes of a few kB.)
#[test]
fn scanning_reads_the_headers_of_real_models_only() {
    let Some(gemma) = std::env::var_os("LLMBOUND_GEMMA_GGUF")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
    else {
        skipped!("set LLMBOUND_GEMMA_GGUF to the gemma-3-270m Q4_K_M GGUF");
        return;
    };
    if bytes_read_by_this_process().is_none() {
        skipped!("no /proc/self/io to count the bytes read");
        return;
    }
    let a = llmbound::gguf::open(&gemma).unwrap();
    let header_len = a.header().data_start;
    let file_len = a.file_bytes();
    let mut header = vec![0u8; header_len as usize];
    {
        use std::io::Read;
        std::fs::File::open(&gemma)
            .unwrap()
            .read_exact(&mut header)
            .unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("copies");
    std::fs::create_dir_all(&dir).unwrap();
    const COPIES: u64 = 10;
    for i in 0..COPIES {
        let p = dir.join(format!("gemma-copy-{i:02}-Q4_K_M.gguf"));
        std::fs::write(&p, &header).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(file_len)
            .unwrap();
    }
    let cat = llmbound::profile::Catalog::load_with(Some(home.path().join("config")));
    let roots = llmbound::library::roots(std::slice::from_ref(&dir), false);
    let before = bytes_read_by_this_process().unwrap();
    let (found, problems) = llmbound::library::discover(&roots);
    let scanned = llmbound::library::scan(&cat, found);
    let read = bytes_read_by_this_process().unwrap() - before;
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(scanned.len() as u64, COPIES);
    for s in &scanned {
        assert_eq!(s.file_bytes(), Some(file_len));
        assert_eq!(s.architecture(), "gemma3");
    }
    // Each header once, plus at most one buffer of read-ahead per file; a single file's
    // tensor data (246 MB) would be far more.
    let slack = 1024 * 1024;
    assert!(
        read <= COPIES * (header_len + slack),
        "{read} bytes read for {COPIES} headers of {header_len} bytes"
    );
    // Walking the 262,144 strings of the vocabulary alone passes over megabytes: the count works.
    assert!(
        read >= COPIES * 1024 * 1024,
        "{read}: too few bytes counted"
    );
    eprintln!(
        "{COPIES} sparse copies of gemma: {read} bytes read for headers of {header_len} bytes each (files of {file_len} bytes)"
    );
}
