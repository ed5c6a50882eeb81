//! Bytes read per token by each device of a placement and the decode ceilings over devices
//! (docs/bounds.md §4, §6; issue 22 item 5). Every figure is worked by hand in the comments.

use llmbound::core::kv::CacheSettings;
use llmbound::core::model::{ArchFigures, ModelShape, Moe, PerLayer};
use llmbound::core::placement::{
    Backend, Bandwidths, ContextFigures, Device, Link, PlacementModel, PlacementSettings, ceilings,
    cpu_moe, decode_reads, place,
};
use llmbound::core::units::{Bytes, BytesPerSec, Provenance, Sourced};
use llmbound::core::weights::ExpertCount;

/// 4 layers, 2 KV heads of 64 (f16: K 2×64×2 + V 2×64×2 = 512 bytes per token per layer),
/// n_embd 512, vocabulary 1000.
fn shape(moe: Option<Moe>) -> ModelShape {
    let fig = ArchFigures {
        architecture: "llama".into(),
        layers: 4,
        head_count: PerLayer::Uniform(8),
        head_count_kv: PerLayer::Uniform(2),
        key_length: Some(64),
        value_length: Some(64),
        embedding_length: 512,
        vocab_size: 1000,
        native_context: Some(4096),
        sliding_window: None,
        sliding_pattern: None,
        chunk_size: None,
        mla: None,
        moe,
        ssm: None,
        recurrent_layers: None,
        tied_embeddings: false,
        keys: Default::default(),
    };
    ModelShape::from_figures("t", &fig, Provenance::File).unwrap()
}

/// token_embd 1,000,000 (1000 rows of 1000 bytes), per layer attention 1,000,000 and either a
/// dense FFN of 3,000,000 or 8 routed experts of 1,000,000 (8,000,000) plus a shared expert of
/// 1,000,000; output 2,000,000.
fn model(moe: bool) -> PlacementModel {
    let mut t: Vec<(String, u64)> = vec![("token_embd.weight".into(), 1_000_000)];
    for il in 0..4 {
        t.push((format!("blk.{il}.attn_q.weight"), 1_000_000));
        if moe {
            t.push((format!("blk.{il}.ffn_up_exps.weight"), 8_000_000));
            t.push((format!("blk.{il}.ffn_up_shexp.weight"), 1_000_000));
        } else {
            t.push((format!("blk.{il}.ffn_up.weight"), 3_000_000));
        }
    }
    t.push(("output.weight".into(), 2_000_000));
    PlacementModel::from_tensors(
        t.iter().map(|(n, b)| (n.as_str(), *b)),
        4,
        if moe { 8 } else { 0 },
        4096,
        false,
    )
}

fn dev(name: &str, backend: Backend) -> Device {
    Device {
        buffer_name: name.into(),
        backend,
        free: Bytes(8 << 30),
        total: Bytes(8 << 30),
        max_tensor: None,
    }
}

fn ctx() -> ContextFigures {
    ContextFigures {
        layer_bytes: vec![0; 4],
        ..Default::default()
    }
}

fn cache(n: u64) -> CacheSettings {
    CacheSettings {
        context: n,
        ..Default::default()
    }
}

fn bw(x: f64) -> Sourced<BytesPerSec> {
    Sourced::new(BytesPerSec(x), Provenance::Spec, "test")
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs(), "{a} vs {b}");
}

fn even_split() -> PlacementSettings {
    PlacementSettings {
        tensor_split: Some(vec![1.0, 1.0]),
        ..Default::default()
    }
}

#[test]
fn two_devices_dense() {
    let (s, m) = (shape(None), model(false));
    let d = [dev("CUDA0", Backend::Cuda), dev("CUDA1", Backend::Cuda)];
    let p = place(&m, &ctx(), &d, &even_split()).unwrap();
    let r = decode_reads(&s, &m, &p, &d, &cache(1000), ExpertCount::Expected);
    // 5 positions (4 layers + output) at -ts 1,1: layers 0-2 on CUDA0, layer 3 and the output
    // on CUDA1; the cache at 1000 tokens is 512 × 1000 = 512,000 bytes per layer
    assert_eq!(r.devices.len(), 2);
    assert_eq!(r.devices[0].weights, 3 * 4_000_000);
    assert_eq!(r.devices[0].cache, 3 * 512_000);
    assert_eq!(r.devices[1].weights, 4_000_000 + 2_000_000);
    assert_eq!(r.devices[1].cache, 512_000);
    assert_eq!(r.devices[0].experts + r.devices[1].experts, 0);
    // the host reads one embedding row: 1,000,000 / 1000
    assert_eq!(r.host.total(), 1000);
    assert_eq!(r.rpc_hops, 0);
    let c = ceilings(
        &r,
        &Bandwidths {
            host: bw(1e11),
            devices: vec![bw(1e12), bw(5e11)],
            link: None,
        },
    );
    // 13,536,000 / 1e12 = 13.536 µs; 6,512,000 / 5e11 = 13.024 µs; 1000 / 1e11 = 0.01 µs
    close(c.device_seconds[0], 13.536e-6);
    close(c.device_seconds[1], 13.024e-6);
    close(c.host_seconds, 0.01e-6);
    close(c.seconds_per_step, 26.57e-6);
    close(c.seconds_per_step_overlapped, 13.536e-6);
    close(c.tokens_per_second, 1.0 / 26.57e-6);
    close(c.overlapped_tokens_per_second, 1.0 / 13.536e-6);
    assert_eq!(c.provenance, Provenance::Spec);
    // a short context reads no cache
    let r0 = decode_reads(&s, &m, &p, &d, &cache(0), ExpertCount::Expected);
    assert_eq!(r0.devices[0].cache + r0.devices[1].cache, 0);
}

#[test]
fn moe_with_experts_on_the_host() {
    let moe = Moe {
        experts: 8,
        experts_used: 2,
        shared_experts: 1,
    };
    let (s, m) = (shape(Some(moe)), model(true));
    let d = [dev("CUDA0", Backend::Cuda)];
    let set = PlacementSettings {
        overrides: vec![cpu_moe()],
        ..Default::default()
    };
    let p = place(&m, &ctx(), &d, &set).unwrap();
    let r = decode_reads(&s, &m, &p, &d, &cache(1000), ExpertCount::Expected);
    // the device: attention and the shared expert of 4 layers, 4 × 2,000,000, and the output
    // 2,000,000; all four layers' cache
    assert_eq!(r.devices[0].weights, 10_000_000);
    assert_eq!(r.devices[0].experts, 0);
    assert_eq!(r.devices[0].cache, 4 * 512_000);
    // the host: the routed experts at 2 of 8, 4 × 8,000,000 / 4, and one embedding row
    assert_eq!(r.expert_fraction, 0.25);
    assert_eq!(r.host.experts, 8_000_000);
    assert_eq!(r.host.weights, 1000);
    assert_eq!(r.host.cache, 0);
    let c = ceilings(
        &r,
        &Bandwidths {
            host: bw(1e11),
            devices: vec![bw(1e12)],
            link: None,
        },
    );
    // device 12,048,000 / 1e12 = 12.048 µs; host 8,001,000 / 1e11 = 80.01 µs
    close(c.seconds_per_step, 92.058e-6);
    close(c.seconds_per_step_overlapped, 80.01e-6);
    // without -ot the experts are on the device at the same fraction
    let p = place(&m, &ctx(), &d, &PlacementSettings::default()).unwrap();
    let r = decode_reads(&s, &m, &p, &d, &cache(1000), ExpertCount::Minimum);
    assert_eq!(r.devices[0].experts, 8_000_000);
    assert_eq!(r.host.total(), 1000);
}

#[test]
fn rpc_link_is_a_tier() {
    let (s, m) = (shape(None), model(false));
    let d = [
        dev("CUDA0", Backend::Cuda),
        dev("RPC0[10.0.0.2:50052]", Backend::Rpc),
    ];
    let p = place(&m, &ctx(), &d, &even_split()).unwrap();
    let r = decode_reads(&s, &m, &p, &d, &cache(1000), ExpertCount::Expected);
    // layer 3 and the output on the RPC device: one hop, 512 × 4 × 2 = 4096 bytes
    assert_eq!(r.rpc_hops, 1);
    assert_eq!(r.rpc_hop_bytes, 4096);
    let link = Link {
        bandwidth: bw(1.25e9),
        latency_seconds: Sourced::new(100e-6, Provenance::Measured, "ping"),
    };
    let c = ceilings(
        &r,
        &Bandwidths {
            host: bw(1e11),
            devices: vec![bw(1e12), bw(5e11)],
            link: Some(link.clone()),
        },
    );
    // 4096 / 1.25e9 = 3.2768 µs plus 100 µs
    assert_eq!(c.link_bytes, 4096);
    close(c.link_seconds, 103.2768e-6);
    close(c.seconds_per_step, 26.57e-6 + 103.2768e-6);
    close(c.seconds_per_step_overlapped, 103.2768e-6);
    assert_eq!(c.provenance, Provenance::Spec);
    // an RPC device in front and another behind a local one: two hops
    let d3 = [
        dev("RPC0[10.0.0.2:50052]", Backend::Rpc),
        dev("CUDA0", Backend::Cuda),
        dev("RPC1[10.0.0.3:50052]", Backend::Rpc),
    ];
    let set = PlacementSettings {
        tensor_split: Some(vec![2.0, 1.0, 2.0]),
        ..Default::default()
    };
    let p = place(&m, &ctx(), &d3, &set).unwrap();
    let r = decode_reads(&s, &m, &p, &d3, &cache(1000), ExpertCount::Expected);
    assert_eq!(r.rpc_hops, 2);
    // -nkvo: every layer's cache is read from the host
    let set = PlacementSettings {
        no_kv_offload: true,
        ..even_split()
    };
    let p = place(&m, &ctx(), &d, &set).unwrap();
    let r = decode_reads(&s, &m, &p, &d, &cache(1000), ExpertCount::Expected);
    assert_eq!(r.host.cache, 4 * 512_000);
    assert_eq!(r.devices[0].cache + r.devices[1].cache, 0);
}

#[test]
fn a_tied_output_reads_the_whole_matrix_where_it_sits() {
    let s = shape(None);
    let mut t: Vec<(String, u64)> = vec![("token_embd.weight".into(), 1_000_000)];
    for il in 0..4 {
        t.push((format!("blk.{il}.attn_q.weight"), 1_000_000));
    }
    let m = PlacementModel::from_tensors(t.iter().map(|(n, b)| (n.as_str(), *b)), 4, 0, 4096, true);
    let d = [dev("CUDA0", Backend::Cuda)];
    // all layers: the tied copy (the output projection) on the device, read in full; the host
    // reads one row of the embedding
    let p = place(&m, &ctx(), &d, &PlacementSettings::default()).unwrap();
    let r = decode_reads(&s, &m, &p, &d, &cache(0), ExpertCount::Expected);
    assert_eq!(r.devices[0].weights, 4_000_000 + 1_000_000);
    assert_eq!(r.host.weights, 1000);
    // -ngl 0: both on the host, the matrix read once in full
    let set = PlacementSettings {
        gpu_layers: llmbound::core::placement::GpuLayers::Count(0),
        ..Default::default()
    };
    let p = place(&m, &ctx(), &d, &set).unwrap();
    let r = decode_reads(&s, &m, &p, &d, &cache(0), ExpertCount::Expected);
    assert_eq!(r.host.weights, 4_000_000 + 1_000_000);
    assert_eq!(r.devices.iter().map(|x| x.total()).sum::<u64>(), 0);
}
