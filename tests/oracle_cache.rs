//! llmbound's allocated KV cache and recurrent state against llama.cpp's own figures: every
//! case of the oracle fixtures (tests/fixtures/llama-cpp/, produced by llama.cpp's
//! `llama-fit-params` on the same GGUF headers) must match byte for byte, per cache (K and V,
//! cells, layers, streams) and per recurrent memory (R and S, rows, layers). A case that cannot
//! match is listed in `KNOWN_DIFFERENCES` with its reason (and in docs/architectures.md).

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

#[path = "common/oracle.rs"]
mod oracle;

use llmbound::core::cache::CacheType;
use llmbound::core::kv::{self, AllocatedCache, CacheKind, CacheSettings};

/// Cases that cannot match, with why (docs/architectures.md): architectures whose cache
/// llmbound does not model exactly, and llama.cpp crashes that are no cache rule. They are
/// reported, not failed.
fn known_difference(case: &oracle::OracleCase) -> Option<&'static str> {
    if case.model.arch == "t5" && case.case.settings.n_parallel > 1 && !case.case.ok {
        return Some(
            "llama.cpp's t5 graph asserts with several sequences (a crash, not a cache refusal)",
        );
    }
    llmbound::core::model::unsupported_reason(&case.model.arch)
}

fn settings(s: &oracle::Settings) -> Result<CacheSettings, String> {
    let np = u64::from(s.n_parallel.max(1));
    Ok(CacheSettings {
        // llama-fit-params -c is the total over the sequences; llmbound's N is per sequence.
        context: s.n_ctx.div_ceil(np),
        sequences: np,
        type_k: CacheType::parse(&s.type_k).ok_or(format!("type {}", s.type_k))?,
        type_v: CacheType::parse(&s.type_v).ok_or(format!("type {}", s.type_v))?,
        flash_attn: s.flash_attn == "on",
        ubatch: u64::from(s.n_ubatch),
        kv_unified: s.kv_unified,
        swa_full: s.swa_full,
    })
}

fn describe(c: &AllocatedCache) -> String {
    format!(
        "{:?}: {} cells × {} streams, {} layers, K {} V {}",
        c.kind, c.cells, c.streams, c.layers, c.k_bytes, c.v_bytes
    )
}

/// Compare one case; Err lists every difference.
fn compare(case: &oracle::OracleCase) -> Result<(), String> {
    let path = case.gguf.as_ref().ok_or("no GGUF")?;
    let artifact = llmbound::gguf::open(path).map_err(|e| format!("open: {e}"))?;
    let s = settings(&case.case.settings)?;
    let shape = llmbound::gguf::model_shape(&artifact, &case.model.name);
    // llama.cpp crashed after allocating its caches (killed by a signal while reserving the
    // compute graph, no message: the realistic ERNIE-4.5-21B-A3B shape with a quantized cache
    // at 32,768 tokens): not a refusal llmbound could repeat, and the caches it logged are
    // still compared.
    let crashed = !case.case.ok
        && case
            .case
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("killed by"))
        && !case.case.kv_caches.is_empty();
    if !case.case.ok && !crashed {
        // llama.cpp refused: llmbound must refuse too (shape error or a typed refusal), or the
        // refusal is one outside the cache (quantized V without flash attention).
        let err = case.case.error.clone().unwrap_or_default();
        return match shape {
            Err(_) => Ok(()),
            Ok(m) if !kv::cache(&m, &s).refusals.is_empty() => Ok(()),
            Ok(_) if s.type_v.is_quantized() && !s.flash_attn => Ok(()),
            Ok(_) => Err(format!(
                "llama.cpp refused ({err}) but llmbound gives figures"
            )),
        };
    }
    let m = shape.map_err(|e| format!("llmbound refuses a model llama.cpp runs: {e}"))?;
    let c = kv::cache(&m, &s);
    if !c.refusals.is_empty() {
        return Err(format!(
            "llmbound refuses ({:?}) but llama.cpp ran",
            c.refusals
        ));
    }
    let mut diffs = Vec::new();
    let ours: Vec<&AllocatedCache> = c
        .caches
        .iter()
        .filter(|x| {
            x.kind != CacheKind::Recurrent && !matches!(x.kind, CacheKind::CompressorState { .. })
        })
        .collect();
    if ours.len() != case.case.kv_caches.len() {
        diffs.push(format!(
            "{} KV caches, llama.cpp {}: ours {:?}",
            ours.len(),
            case.case.kv_caches.len(),
            ours.iter().map(|x| describe(x)).collect::<Vec<_>>()
        ));
    }
    for (o, l) in ours.iter().zip(&case.case.kv_caches) {
        let theirs = (
            l.cells,
            u64::from(l.streams),
            l.layers,
            l.k_bytes,
            l.v_bytes,
        );
        let mine = (o.cells, o.streams, o.layers, o.k_bytes, o.v_bytes);
        if mine != theirs {
            diffs.push(format!(
                "cache {:?} ({}): llmbound (cells, streams, layers, K, V) = {mine:?}, llama.cpp {theirs:?}",
                o.kind, l.role
            ));
        }
    }
    let rec: Vec<&AllocatedCache> = c
        .caches
        .iter()
        .filter(|x| x.kind == CacheKind::Recurrent)
        .collect();
    if rec.len() != case.case.recurrent.len() {
        diffs.push(format!(
            "{} recurrent memories, llama.cpp {}",
            rec.len(),
            case.case.recurrent.len()
        ));
    }
    for (o, l) in rec.iter().zip(&case.case.recurrent) {
        // llama.cpp logs n_layer (every layer) here, not the layers holding state: compare
        // the rows and the bytes.
        let theirs = (l.cells, l.r_bytes, l.s_bytes + l.p_bytes);
        let mine = (o.cells, o.k_bytes, o.v_bytes);
        if mine != theirs {
            diffs.push(format!(
                "recurrent: llmbound (rows, R, S) = {mine:?}, llama.cpp {theirs:?} ({} layers held state here)",
                o.layers
            ));
        }
    }
    // deepseek4's compressor states: per state, the layers and the kv + score bytes.
    let states: Vec<&AllocatedCache> = c
        .caches
        .iter()
        .filter(|x| matches!(x.kind, CacheKind::CompressorState { .. }))
        .collect();
    if states.len() != case.case.dsv4_states.len() {
        diffs.push(format!(
            "{} compressor states, llama.cpp {}",
            states.len(),
            case.case.dsv4_states.len()
        ));
    }
    for (o, l) in states.iter().zip(&case.case.dsv4_states) {
        let theirs = (l.state_size, u64::from(l.streams), l.layers, l.bytes);
        let mine = (o.cells, o.streams, o.layers, o.bytes());
        if mine != theirs {
            diffs.push(format!(
                "compressor state {}: llmbound (rows, streams, layers, bytes) = {mine:?}, llama.cpp {theirs:?}",
                l.name
            ));
        }
    }
    let total = case.case.kv_bytes() + case.case.recurrent_bytes() + case.case.state_bytes();
    if c.allocated_bytes != total {
        diffs.push(format!(
            "allocated {} bytes, llama.cpp {total}",
            c.allocated_bytes
        ));
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("; "))
    }
}

#[test]
fn allocated_cache_matches_llama_cpp() {
    if !oracle::fixtures_dir().is_dir() {
        skipped!(
            "SKIPPED: no oracle fixtures at {}",
            oracle::fixtures_dir().display()
        );
        return;
    }
    let cases = oracle::cases();
    assert!(!cases.is_empty(), "no oracle cases");
    let (mut checked, mut skipped, mut known) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut skipped_models = std::collections::BTreeSet::new();
    for case in &cases {
        let what = format!("{} {}", case.model.name, case.case.id);
        if case.gguf.as_ref().is_none_or(|p| !p.exists()) {
            if skipped_models.insert(case.model.name.clone()) {
                skipped!(
                    "SKIPPED every case of {}: its GGUF is not available{}",
                    case.model.name,
                    case.model
                        .external
                        .as_ref()
                        .map(|e| format!(" (set {} to {})", e.env, e.file))
                        .unwrap_or_default()
                );
            }
            skipped += 1;
            continue;
        }
        match (compare(case), known_difference(case)) {
            (Ok(()), _) => checked += 1,
            (Err(e), Some(why)) => {
                eprintln!("KNOWN DIFFERENCE {what}: {why}: {e}");
                known += 1;
            }
            (Err(e), None) => failures.push(format!("{what}: {e}")),
        }
    }
    eprintln!(
        "{checked} cases exact, {known} known differences, {skipped} skipped, {} failures",
        failures.len()
    );
    assert!(checked + known > 0, "no oracle case could be checked");
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from llama.cpp:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
