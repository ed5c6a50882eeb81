//! Every model on the machine: fixture trees for a Hugging Face hub cache, an Ollama store
//! (manifests + blobs), an LM Studio folder and llama.cpp's cache, built by the test from
//! small GGUFs; `llmbound models` lists each once (shards as one, projectors attached) with
//! the same figures `report --gguf FILE` gives; `--gguf ollama:NAME` opens by name.

#[path = "support/fixtures.rs"]
mod fixtures;

use assert_cmd::Command;
use llmbound::gguf::writer::Data;
use std::path::{Path, PathBuf};

fn llmbound(home: &Path) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", home.join("config"))
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env_remove("HF_HOME")
        .env_remove("HF_HUB_CACHE")
        .env_remove("HUGGINGFACE_HUB_CACHE")
        .env_remove("OLLAMA_MODELS")
        .env_remove("LLAMA_CACHE")
        .env("NO_COLOR", "1");
    c
}

fn write(p: &Path, w: &llmbound::gguf::writer::GgufWriter) -> u64 {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    w.write_file(p, Data::Zeros).unwrap()
}

const SHA_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const SHA_P: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const SHA_MISSING: &str = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

fn manifest(layers: &[(&str, &str)]) -> String {
    let l: Vec<String> = layers
        .iter()
        .map(|(t, d)| format!("{{\"mediaType\":\"{t}\",\"digest\":\"sha256:{d}\",\"size\":1}}"))
        .collect();
    format!(
        "{{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",\"config\":{{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:{SHA_A}\",\"size\":1}},\"layers\":[{}]}}",
        l.join(",")
    )
}

/// The four stores under `home`, as their owners lay them out.
fn machine(home: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    // Hugging Face hub cache: snapshot files are links to blobs; a split model in a folder.
    let hub = home.join(".cache/huggingface/hub");
    let repo = hub.join("models--unsloth--Tiny-GGUF");
    let blob = repo.join("blobs/0123abcd");
    write(&blob, &fixtures::tiny("Tiny HF", 2));
    let snap = repo.join("snapshots/1111111111111111111111111111111111111111");
    std::fs::create_dir_all(&snap).unwrap();
    std::os::unix::fs::symlink(&blob, snap.join("Tiny-Q4_K_M.gguf")).unwrap();
    for (i, w) in fixtures::split("Tiny Split", 4, 2).iter().enumerate() {
        let p = snap.join(format!("BF16/Tiny-BF16-{:05}-of-00002.gguf", i + 1));
        write(&p, w);
    }
    files.push(snap.join("Tiny-Q4_K_M.gguf"));
    files.push(snap.join("BF16/Tiny-BF16-00001-of-00002.gguf"));

    // Ollama: a library model with a projector, a user model, a manifest whose blob is gone.
    let ol = home.join(".ollama/models");
    write(
        &ol.join(format!("blobs/sha256-{SHA_A}")),
        &fixtures::tiny("Tiny Ollama", 3),
    );
    write(
        &ol.join(format!("blobs/sha256-{SHA_P}")),
        &fixtures::projector(),
    );
    let m = ol.join("manifests/registry.ollama.ai/library/tiny/3b");
    std::fs::create_dir_all(m.parent().unwrap()).unwrap();
    std::fs::write(
        &m,
        manifest(&[
            ("application/vnd.ollama.image.model", SHA_A),
            ("application/vnd.ollama.image.projector", SHA_P),
        ]),
    )
    .unwrap();
    let m = ol.join("manifests/registry.ollama.ai/library/gone/latest");
    std::fs::create_dir_all(m.parent().unwrap()).unwrap();
    std::fs::write(
        &m,
        manifest(&[("application/vnd.ollama.image.model", SHA_MISSING)]),
    )
    .unwrap();
    files.push(ol.join(format!("blobs/sha256-{SHA_A}")));

    // LM Studio: publisher/repo/file with a projector beside it.
    let lms = home.join(".lmstudio/models/lmstudio-community/Tiny-GGUF");
    write(&lms.join("Tiny-Q8_0.gguf"), &fixtures::tiny("Tiny LMS", 5));
    write(&lms.join("mmproj-Tiny-F16.gguf"), &fixtures::projector());
    files.push(lms.join("Tiny-Q8_0.gguf"));

    // llama.cpp's cache: flat names.
    let lc = home.join(".cache/llama.cpp");
    write(
        &lc.join("ggml-org_Tiny-GGUF_Tiny-Q4_0.gguf"),
        &fixtures::tiny("Tiny llama.cpp", 6),
    );
    files.push(lc.join("ggml-org_Tiny-GGUF_Tiny-Q4_0.gguf"));
    files
}

fn json(c: &mut Command) -> serde_json::Value {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn every_store_is_found_once_with_report_figures() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    machine(h);
    let args = [
        "--machine",
        "epyc-zen5-2vcpu-vm",
        "-c",
        "4096",
        "--format",
        "json",
    ];
    let v = json(llmbound(h).arg("models").args(args));
    assert_eq!(v["schema"], "llmbound-models/1");
    let models = v["models"].as_array().unwrap();
    let names: Vec<&str> = models.iter().map(|m| m["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "ggml-org_Tiny-GGUF_Tiny-Q4_0.gguf",
            "lmstudio-community/Tiny-GGUF/Tiny-Q8_0.gguf",
            "tiny:3b",
            "unsloth/Tiny-GGUF/BF16/Tiny-BF16-00001-of-00002.gguf",
            "unsloth/Tiny-GGUF/Tiny-Q4_K_M.gguf",
        ]
    );
    let by = |n: &str| models.iter().find(|m| m["name"] == n).unwrap();
    assert_eq!(by("tiny:3b")["store"], "ollama");
    assert_eq!(by("tiny:3b")["gguf"], "ollama:tiny:3b");
    assert!(by("tiny:3b")["mmproj"].as_str().unwrap().ends_with(SHA_P));
    assert_eq!(
        by("unsloth/Tiny-GGUF/BF16/Tiny-BF16-00001-of-00002.gguf")["shards"],
        2
    );
    assert!(
        by("lmstudio-community/Tiny-GGUF/Tiny-Q8_0.gguf")["mmproj"]
            .as_str()
            .unwrap()
            .ends_with("mmproj-Tiny-F16.gguf")
    );
    // The manifest whose blob is gone is named in one line, and no model comes from it.
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    let p = problems[0].as_str().unwrap();
    assert!(
        p.contains("gone/latest") && p.contains(SHA_MISSING) && p.contains("missing"),
        "{p}"
    );

    // Each row's figures equal `report --gguf FILE` on the same scenario.
    for m in models {
        if m["mmproj"].is_string() {
            continue;
        }
        let r = json(
            llmbound(h)
                .arg("report")
                .args(args)
                .arg("--gguf")
                .arg(m["path"].as_str().unwrap()),
        );
        assert_eq!(m["file_bytes"], r["artifact"]["bytes"], "{}", m["name"]);
        assert_eq!(m["fits"], r["capacity"]["fits"]);
        assert_eq!(m["max_context_tokens"], r["capacity"]["max_context_tokens"]);
        // The ranking figure is the inventory ceiling (an upper bound); the file-mode one is
        // shown apart, "if every byte is read".
        assert_eq!(m["decode_ceiling_is_upper_bound"], true);
        assert_eq!(
            m["decode_ceiling_tokens_per_second"],
            r["decode"]["inventory"]["full_context"]["tokens_per_second"]
        );
        assert_eq!(
            m["every_byte_read_tokens_per_second"],
            r["decode"]["full_context"]["tokens_per_second"]
        );
    }
    // With the projector, W grows by exactly its size.
    let t = by("tiny:3b");
    let proj = std::fs::metadata(t["mmproj"].as_str().unwrap())
        .unwrap()
        .len();
    assert_eq!(
        t["weights_bytes"].as_u64().unwrap(),
        t["file_bytes"].as_u64().unwrap() + proj
    );

    // Open by the Ollama name.
    let r = json(
        llmbound(h)
            .arg("report")
            .args(args)
            .args(["--gguf", "ollama:tiny:3b"]),
    );
    assert_eq!(r["artifact"]["bytes"], t["file_bytes"]);
    // llama.cpp takes the blob's path: the name is resolved before the report is written.
    let cmd = r["llama_cpp_command"].as_str().unwrap();
    assert!(
        cmd.starts_with("llama-server -m ") && cmd.contains("blobs/sha256-"),
        "{cmd}"
    );
    let o = llmbound(h)
        .args(["inspect", "ollama:nothere"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("ollama:nothere") && e.contains("tiny:3b"), "{e}");
    let o = llmbound(h)
        .args(["inspect", "ollama:gone"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing"));

    // Text and Markdown say what the figures are.
    let o = llmbound(h)
        .args([
            "models",
            "--machine",
            "epyc-zen5-2vcpu-vm",
            "--sort",
            "name",
        ])
        .output()
        .unwrap();
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(
        t.contains("decode ceilings from the tensor inventory are upper bounds")
            && t.contains("tiny:3b +mmproj"),
        "{t}"
    );
    assert!(t.contains("(2 files)"), "{t}");
    assert!(t.contains("skipped: "), "{t}");
}

#[test]
fn environment_variables_move_the_stores() {
    let home = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let h = home.path();
    let o = other.path();
    write(
        &o.join("hub/models--a--b/snapshots/r/m-Q4_0.gguf"),
        &fixtures::tiny("A", 2),
    );
    write(
        &o.join("ollama/blobs").join(format!("sha256-{SHA_A}")),
        &fixtures::tiny("B", 2),
    );
    let m = o.join("ollama/manifests/registry.ollama.ai/user/m/q4");
    std::fs::create_dir_all(m.parent().unwrap()).unwrap();
    std::fs::write(
        &m,
        manifest(&[("application/vnd.ollama.image.model", SHA_A)]),
    )
    .unwrap();
    write(&o.join("llama/x.gguf"), &fixtures::tiny("C", 2));
    write(&o.join("mine/deep/er/y.gguf"), &fixtures::tiny("D", 2));
    let v = json(
        llmbound(h)
            .env("HF_HUB_CACHE", o.join("hub"))
            .env("OLLAMA_MODELS", o.join("ollama"))
            .env("LLAMA_CACHE", o.join("llama"))
            .args(["models", "--format", "json", "--sort", "name", "--dir"])
            .arg(o.join("mine")),
    );
    let names: Vec<&str> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["a/b/m-Q4_0.gguf", "deep/er/y.gguf", "user/m:q4", "x.gguf"]
    );
    // --only-dirs skips the standard stores.
    let v = json(
        llmbound(h)
            .env("HF_HUB_CACHE", o.join("hub"))
            .args(["models", "--format", "json", "--only-dirs", "--dir"])
            .arg(o.join("mine")),
    );
    assert_eq!(v["models"].as_array().unwrap().len(), 1);
}

/// Not a timed assertion: prints how long 100 models take (run with --nocapture).
#[test]
fn a_hundred_models_scan_headers_only() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("many");
    let w = fixtures::tiny("Many", 4);
    for i in 0..100 {
        // Sparse: the tensor data is never read, so it need not exist on disk.
        let p = dir.join(format!("m{i:03}/model-{i:03}-Q8_0.gguf"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        w.write_file(&p, Data::Sparse).unwrap();
    }
    let start = std::time::Instant::now();
    let v = json(
        llmbound(home.path())
            .args(["models", "--format", "json", "--only-dirs", "--dir"])
            .arg(&dir),
    );
    let took = start.elapsed();
    assert_eq!(v["models"].as_array().unwrap().len(), 100);
    eprintln!("100 models listed by `llmbound models` in {took:?} (process start included)");
}

#[test]
fn a_scan_keeps_only_what_a_row_needs() {
    use llmbound::library::{Store, discover_in, evaluate, scan};
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("m");
    for i in 0..3 {
        write(
            &dir.join(format!("M{i}-Q8_0.gguf")),
            &fixtures::tiny(&format!("M{i}"), 2),
        );
    }
    let cat = llmbound::profile::Catalog::load_with(Some(home.path().join("config")));
    let (found, problems) = discover_in(Store::Folder, &dir);
    assert!(problems.is_empty(), "{problems:?}");
    let scanned = scan(&cat, found);
    assert_eq!(scanned.len(), 3);
    for s in &scanned {
        let g = s.input.as_ref().unwrap();
        for sh in &g.artifact().shards {
            // The tensor list and the tokenizer are gone; the row's keys stay.
            assert!(sh.header.tensors.is_empty());
            assert!(
                sh.header.metadata.entries.len() <= 3,
                "{:?}",
                sh.header.metadata.entries.len()
            );
        }
        assert_eq!(s.architecture(), "llama");
        assert!(!s.quant_mix().is_empty());
        assert!(s.file_bytes().unwrap() > 0);
    }
    // The figures of a slim row are those of the full header (`report --gguf`).
    let base = llmbound::workspace::scenario(&cat, &Default::default()).unwrap();
    for r in evaluate(&base, &scanned) {
        let full = llmbound::workspace::open_gguf(&cat, &scanned[r.index].found.path).unwrap();
        let mut sc = base.clone();
        llmbound::workspace::with_gguf(&mut sc, &full).unwrap();
        let want = llmbound::core::evaluate(&sc).map(|x| llmbound::compare::CompareFigures::of(&x));
        assert_eq!(
            format!("{:?}", r.outcome.as_ref().ok()),
            format!("{:?}", want.as_ref().ok())
        );
    }
}

#[cfg(unix)]
#[test]
fn an_unreadable_folder_is_reported_not_skipped_in_silence() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("m");
    write(&dir.join("ok/A-Q8_0.gguf"), &fixtures::tiny("A", 1));
    // A folder that cannot be listed (here a file named as one) is said, for anyone.
    let not_dir = dir.join("ok/A-Q8_0.gguf");
    let v = json(
        llmbound(home.path())
            .args(["models", "--only-dirs", "--format", "json", "--dir"])
            .arg(&not_dir),
    );
    let problems = v["problems"].to_string();
    assert!(problems.contains("cannot read folder"), "{problems}");
    let locked = dir.join("locked");
    write(&locked.join("B-Q8_0.gguf"), &fixtures::tiny("B", 1));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read_dir(&locked).is_ok() {
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        eprintln!("SKIPPED: running with privileges that read a mode-000 folder (root)");
        return;
    }
    let v = json(
        llmbound(home.path())
            .args(["models", "--only-dirs", "--format", "json", "--dir"])
            .arg(&dir),
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let problems = v["problems"].to_string();
    assert!(
        problems.contains("cannot read folder") && problems.contains("locked"),
        "{problems}"
    );
    assert_eq!(v["models"].as_array().unwrap().len(), 1);
}

/// Issue 19: `models` gives a small file's size in a unit that shows it (`1.176 MiB`), never
/// `0.000 GB`, and its title says which units the sizes are in.
#[test]
fn models_sizes_read_in_a_unit_that_shows_them() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("small");
    write(&dir.join("small-Q8_0.gguf"), &fixtures::tiny("Small", 2));
    let out = llmbound(home.path())
        .args(["models", "--only-dirs", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("0.000 GB"), "{text}");
    assert!(text.contains(" MiB "), "{text}");
    assert!(text.contains("sizes in binary units"), "{text}");
}
