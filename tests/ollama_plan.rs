//! Ollama's plan (issue 22 item 4): the Modelfile's parameters from a store the test writes,
//! Ollama's default context by total VRAM, its clamps, and the parameters that reproduce a plan.

use std::path::Path;

use llmbound::core::placement::GpuLayers;
use llmbound::ollama::{
    ContextSource, ModelfileParams, OllamaError, OllamaSettings, default_context, plan,
    read_params, reproduce, resolve_in, total_vram,
};

const GIB: u64 = 1 << 30;
const MODEL: &str = "1111111111111111111111111111111111111111111111111111111111111111";

/// A params digest per model name (its bytes in hex, padded to 64 digits).
fn params_digest(name: &str) -> String {
    let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{hex:0<64}")
}

/// A store with `library/<name>:latest` whose manifest names a model blob and, when given, a
/// params layer with that JSON.
fn store(root: &Path, name: &str, params: Option<&str>) {
    let blobs = root.join("blobs");
    std::fs::create_dir_all(&blobs).unwrap();
    std::fs::write(blobs.join(format!("sha256-{MODEL}")), b"GGUF").unwrap();
    let mut layers = vec![format!(
        r#"{{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:{MODEL}","size":4}}"#
    )];
    if let Some(p) = params {
        let d = params_digest(name);
        std::fs::write(blobs.join(format!("sha256-{d}")), p).unwrap();
        layers.push(format!(
            r#"{{"mediaType":"application/vnd.ollama.image.params","digest":"sha256:{d}","size":{}}}"#,
            p.len()
        ));
    }
    let dir = root.join("manifests/registry.ollama.ai/library").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("latest"),
        format!(r#"{{"schemaVersion":2,"layers":[{}]}}"#, layers.join(",")),
    )
    .unwrap();
}

fn settings(total_vram: u64) -> OllamaSettings {
    OllamaSettings {
        total_vram,
        context_length: None,
        num_parallel: 1,
        vision: false,
        n_ctx_train: 262_144,
    }
}

#[test]
fn default_context_by_total_vram() {
    assert_eq!(default_context(47 * GIB), 262_144);
    assert_eq!(default_context(47 * GIB - 1), 32_768);
    assert_eq!(default_context(23 * GIB), 32_768);
    assert_eq!(default_context(23 * GIB - 1), 4096);
    assert_eq!(default_context(0), 4096);
    // two 24 GiB cards: 48 GiB; with 1 GiB of OLLAMA_GPU_OVERHEAD each, 46 GiB
    assert_eq!(total_vram(&[24 * GIB, 24 * GIB], 0), 48 * GIB);
    assert_eq!(
        default_context(total_vram(&[24 * GIB, 24 * GIB], 0)),
        262_144
    );
    assert_eq!(
        default_context(total_vram(&[24 * GIB, 24 * GIB], GIB)),
        32_768
    );
    // an overhead above a card's memory counts that card as none
    assert_eq!(total_vram(&[8 * GIB], 9 * GIB), 0);
}

#[test]
fn modelfile_parameters_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    store(
        dir.path(),
        "tuned",
        Some(r#"{"num_ctx":8192,"num_gpu":20,"stop":["<|im_end|>"],"temperature":0.6}"#),
    );
    store(dir.path(), "plain", None);
    let m = resolve_in(dir.path(), "tuned").unwrap();
    assert!(m.params.is_some());
    let p = read_params(&m).unwrap();
    assert_eq!(
        p,
        ModelfileParams {
            num_ctx: Some(8192),
            num_gpu: Some(20)
        }
    );
    // the Modelfile wins over the VRAM default; -c is num_ctx × parallel requests
    let s = OllamaSettings {
        num_parallel: 2,
        ..settings(48 * GIB)
    };
    let pl = plan(&p, &s);
    assert_eq!(pl.num_ctx, 8192);
    assert_eq!(pl.context_source, ContextSource::Modelfile);
    assert_eq!(pl.llama_ctx, 16_384);
    assert_eq!(pl.gpu_layers, GpuLayers::Count(20));
    assert_eq!(
        reproduce(pl.llama_ctx, pl.parallel, pl.gpu_layers),
        vec![
            "/set parameter num_ctx 8192".to_string(),
            "/set parameter num_gpu 20".to_string()
        ]
    );
    // no params layer: nothing set, the default by VRAM, -ngl left to -fit
    let m = resolve_in(dir.path(), "plain").unwrap();
    let p = read_params(&m).unwrap();
    assert_eq!(p, ModelfileParams::default());
    let pl = plan(&p, &settings(24 * GIB));
    assert_eq!(
        (pl.num_ctx, pl.context_source, pl.gpu_layers),
        (32_768, ContextSource::VramDefault, GpuLayers::Auto)
    );
    assert_eq!(
        reproduce(pl.llama_ctx, pl.parallel, pl.gpu_layers),
        vec!["/set parameter num_ctx 32768".to_string()]
    );
}

#[test]
fn ollama_clamps_the_context() {
    let none = ModelfileParams::default();
    // at most the trained context
    let s = OllamaSettings {
        n_ctx_train: 40_960,
        ..settings(80 * GIB)
    };
    assert_eq!(plan(&none, &s).num_ctx, 40_960);
    // OLLAMA_CONTEXT_LENGTH over the default, the Modelfile over both
    let s = OllamaSettings {
        context_length: Some(16_384),
        ..settings(8 * GIB)
    };
    let pl = plan(&none, &s);
    assert_eq!(
        (pl.num_ctx, pl.context_source),
        (16_384, ContextSource::Environment)
    );
    let mf = ModelfileParams {
        num_ctx: Some(2),
        num_gpu: Some(0),
    };
    let pl = plan(&mf, &s);
    assert_eq!(
        (pl.num_ctx, pl.context_source),
        (4, ContextSource::Modelfile)
    );
    assert_eq!(pl.gpu_layers, GpuLayers::Count(0));
    // a projector: at least 2048; num_gpu -1 leaves -ngl to -fit
    let mf = ModelfileParams {
        num_ctx: Some(512),
        num_gpu: Some(-1),
    };
    let pl = plan(&mf, &OllamaSettings { vision: true, ..s });
    assert_eq!((pl.num_ctx, pl.gpu_layers), (2048, GpuLayers::Auto));
}

#[test]
fn bad_params_layers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path(), "words", Some(r#"{"num_ctx":"big"}"#));
    store(dir.path(), "frac", Some(r#"{"num_gpu":1.5}"#));
    store(dir.path(), "list", Some(r#"[1,2]"#));
    for (name, says) in [
        ("words", "num_ctx is \"big\", not a whole number"),
        ("frac", "num_gpu is 1.5, not a whole number"),
        ("list", "not a JSON object"),
    ] {
        let m = resolve_in(dir.path(), name).unwrap();
        let e = read_params(&m).unwrap_err();
        assert!(matches!(e, OllamaError::BadParams { .. }), "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
    // a manifest naming a params blob that is missing
    store(dir.path(), "gone", Some("{}"));
    std::fs::remove_file(
        dir.path()
            .join(format!("blobs/sha256-{}", params_digest("gone"))),
    )
    .unwrap();
    let e = resolve_in(dir.path(), "gone").unwrap_err();
    assert!(matches!(e, OllamaError::MissingBlob { .. }), "{e}");
}

/// Ollama always passes `-c`: llama.cpp's `-fit` then keeps that context and fits the layers,
/// where without `-c` it would shrink the trained context instead.
#[test]
fn the_plan_is_llama_cpps_fit_at_ollamas_context() {
    use llmbound::core::placement::{
        Backend, ContextFigures, Device, FitSettings, PlacementModel, PlacementSettings, fit,
    };
    use llmbound::core::units::Bytes;
    // 8 layers of 512 MiB, a 64 MiB embedding and output, trained on 131,072 tokens; the
    // cache is 4 KiB per token per layer (512 MiB per layer at 131,072)
    let mut t: Vec<(String, u64)> = vec![("token_embd.weight".into(), 64 << 20)];
    for il in 0..8 {
        t.push((format!("blk.{il}.attn_q.weight"), 256 << 20));
        t.push((format!("blk.{il}.ffn_up.weight"), 256 << 20));
    }
    t.push(("output.weight".into(), 64 << 20));
    let m = PlacementModel::from_tensors(
        t.iter().map(|(n, b)| (n.as_str(), *b)),
        8,
        0,
        131_072,
        false,
    );
    let d = [Device {
        buffer_name: "CUDA0".into(),
        backend: Backend::Cuda,
        free: Bytes(8 * GIB),
        total: Bytes(8 * GIB),
        max_tensor: None,
    }];
    let ctx = |n: u32| ContextFigures {
        layer_bytes: vec![u64::from(n) * 4096; 8],
        ..Default::default()
    };
    // llama.cpp alone: -c unset, so -fit shrinks the context and keeps every layer
    let own = fit(
        &m,
        &d,
        &PlacementSettings::default(),
        &FitSettings::default(),
        &ctx,
    )
    .unwrap();
    assert!(own.n_ctx < 131_072, "{}", own.arguments());
    assert_eq!(own.placement.gpu_layers, 9, "{}", own.arguments());
    // Ollama with the Modelfile's num_ctx 131072 on this 8 GiB card: -c 131072, fewer layers
    let mf = ModelfileParams {
        num_ctx: Some(131_072),
        num_gpu: None,
    };
    let pl = plan(
        &mf,
        &OllamaSettings {
            n_ctx_train: 131_072,
            ..settings(8 * GIB)
        },
    );
    let (mut ps, mut fs) = (PlacementSettings::default(), FitSettings::default());
    pl.apply(&mut ps, &mut fs);
    let ol = fit(&m, &d, &ps, &fs, &ctx).unwrap();
    assert_eq!(ol.n_ctx, 131_072, "{}", ol.arguments());
    // 7 GiB after the margin: the output (64 MiB) and 6 layers of 1 GiB (weights and cache)
    assert_eq!(ol.placement.gpu_layers, 7, "{}", ol.arguments());
    // the VRAM default on 8 GiB (4096 tokens): every layer fits
    let pl = plan(&ModelfileParams::default(), &settings(8 * GIB));
    let (mut ps, mut fs) = (PlacementSettings::default(), FitSettings::default());
    pl.apply(&mut ps, &mut fs);
    let ol = fit(&m, &d, &ps, &fs, &ctx).unwrap();
    assert_eq!(
        (ol.n_ctx, ol.placement.gpu_layers),
        (4096, 9),
        "{}",
        ol.arguments()
    );
}
