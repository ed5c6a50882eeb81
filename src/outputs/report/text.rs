//! The worksheet as text or markdown: inputs with provenance, derivations with the numbers
//! substituted, the inference and the limitations, in the article's order.

use super::words::plural;
use crate::core::Report;
use crate::core::decode::Ceiling;
use crate::core::evaluate::ClaimCheck;
use crate::core::model::Attention;
use crate::core::units::{
    self, Provenance, bytes_gib, exact_binary, fmt_bandwidth, fmt_flops, fmt_gb, fmt_gib, fmt_ms,
    fmt_rate, fmt_tokens, group_digits, group_digits_signed,
};
use crate::sanitize::{Md, Text};
use std::io::{self, Write};

/// Text or markdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Plain text.
    Text,
    /// Markdown.
    Markdown,
}

/// (name, value, provenance, source) of every input.
pub fn inputs(r: &Report) -> Vec<(String, String, Provenance, String)> {
    let s = &r.inputs;
    let m = &s.model;
    let mut v = Vec::new();
    v.push((
        "model".to_string(),
        format!("{} ({}), {}", m.name, m.architecture, shape_summary(r)),
        m.provenance,
        String::new(),
    ));
    if let Some(p) = &m.parameters_advertised {
        v.push((
            "parameters (advertised)".into(),
            group_digits(p.value as u128),
            p.provenance,
            p.source.clone(),
        ));
    }
    if let Some(p) = &m.active_parameters_advertised {
        v.push((
            "active parameters (advertised)".into(),
            group_digits(p.value as u128),
            p.provenance,
            p.source.clone(),
        ));
    }
    for w in &s.weights {
        v.push((
            format!("artifact {}", w.label()),
            format!("{} bytes", group_digits(w.bytes.value as u128)),
            w.bytes.provenance,
            w.bytes.source.clone(),
        ));
    }
    if let Some(inv) = &s.inventory {
        v.push((
            "tensor inventory".into(),
            format!(
                "{} bytes of tensors, {} parameters counted",
                group_digits(inv.tensor_bytes as u128),
                group_digits(inv.parameters as u128)
            ),
            Provenance::File,
            "GGUF tensor list".into(),
        ));
    }
    v.push((
        "machine".into(),
        format!("{} ({})", s.machine.name, s.machine.id),
        Provenance::Spec,
        String::new(),
    ));
    for t in &s.machine.tiers {
        v.push((
            format!("{} memory ({})", t.name, t.kind),
            format!(
                "{} bytes = {}",
                group_digits(t.capacity.value as u128),
                fmt_gib(t.capacity.value)
            ),
            t.capacity.provenance,
            t.capacity.source.clone(),
        ));
        if let Some(d) = t.device_or_default() {
            v.push((
                format!("{} free to {}", t.name, d.backend.label()),
                format!(
                    "{} bytes = {} (what llama.cpp may fill)",
                    group_digits(d.free.value as u128),
                    fmt_gib(d.free.value)
                ),
                d.free.provenance,
                d.free.source.clone(),
            ));
        }
        v.push((
            format!("{} bandwidth", t.name),
            fmt_bandwidth(t.bandwidth.value),
            t.bandwidth.provenance,
            t.bandwidth.source.clone(),
        ));
        if let Some(mb) = &t.measured_bandwidth {
            v.push((
                format!("{} bandwidth (measured)", t.name),
                fmt_bandwidth(mb.value),
                mb.provenance,
                mb.source.clone(),
            ));
        }
    }
    for c in &s.machine.compute {
        v.push((
            format!("compute {} on {}", c.path, c.tier),
            fmt_flops(c.rate.value),
            c.rate.provenance,
            c.rate.source.clone(),
        ));
    }
    for l in &s.machine.links {
        v.push((
            format!("link {} bandwidth", l.name),
            format!(
                "{} one way (to {})",
                fmt_bandwidth(l.bandwidth.value),
                l.tiers.join(", ")
            ),
            l.bandwidth.provenance,
            l.bandwidth.source.clone(),
        ));
        v.push((
            format!("link {} latency", l.name),
            format!("{} µs per request and reply", l.latency_us.value),
            l.latency_us.provenance,
            l.latency_us.source.clone(),
        ));
    }
    let c = &s.cache;
    // `-c 0`: the context is llama.cpp's, not the user's: the trained one, or -fit's choice
    let cache_provenance = match s.model.native_context {
        Some(trained) if s.offload.context_auto => (
            Provenance::Derived,
            if trained == c.context {
                format!(
                    "-c 0: llama.cpp's default, the trained context {}",
                    fmt_tokens(trained)
                )
            } else {
                format!(
                    "-c 0: llama.cpp's -fit reduced the trained context {} to {} to fit",
                    fmt_tokens(trained),
                    fmt_tokens(c.context)
                )
            },
        ),
        _ => (Provenance::User, "scenario".to_string()),
    };
    v.push((
        "cache".into(),
        format!(
            "{} × {} tokens, K {} ({} bytes/value), V {} ({} bytes/value), flash attention {}, n_ubatch {}{}{}",
            plural(c.sequences, "sequence"),
            fmt_tokens(c.context),
            c.type_k,
            c.type_k.fraction(),
            c.type_v,
            c.type_v.fraction(),
            if c.flash_attn { "on" } else { "off" },
            c.ubatch,
            if c.kv_unified { ", unified KV" } else { "" },
            if c.swa_full { ", swa-full" } else { "" }
        ),
        cache_provenance.0,
        cache_provenance.1,
    ));
    v.push((
        "other allocations A".into(),
        format!("{} bytes", group_digits(s.other_bytes.value as u128)),
        s.other_bytes.provenance,
        s.other_bytes.source.clone(),
    ));
    v
}

fn shape_summary(r: &Report) -> String {
    let m = &r.inputs.model;
    let l = &m.layers;
    let hkv_uniform = l.iter().all(|x| x.head_count_kv == l[0].head_count_kv);
    let mut s = format!(
        "{} layers, {} heads, {} KV heads, key/value dims {}/{}",
        l.len(),
        l[0].head_count,
        if hkv_uniform {
            l[0].head_count_kv.to_string()
        } else {
            "per-layer".into()
        },
        l[0].key_length,
        l[0].value_length
    );
    let sliding = l
        .iter()
        .filter(|x| matches!(x.attention, Attention::Sliding { .. }))
        .count();
    if let Some(w) = m.sliding_window() {
        s.push_str(&format!(
            ", sliding window {} on {} layers",
            fmt_tokens(w),
            sliding
        ));
    }
    if let Some(Attention::Chunked { chunk }) = l
        .iter()
        .map(|x| x.attention)
        .find(|a| matches!(a, Attention::Chunked { .. }))
    {
        s.push_str(&format!(", chunked attention {} tokens", fmt_tokens(chunk)));
    }
    if let Some(mla) = m.mla {
        s.push_str(&format!(
            ", MLA latent {} + {} rope",
            mla.kv_lora_rank, mla.rope_dim
        ));
    }
    if let Some(moe) = m.moe {
        s.push_str(&format!(
            ", {} of {} experts",
            moe.experts_used, moe.experts
        ));
    }
    if m.state.is_some() {
        s.push_str(&format!(
            ", {} recurrent layers",
            l.iter().filter(|x| x.recurrent).count()
        ));
    }
    if m.tied_embeddings {
        s.push_str(", tied embeddings");
    }
    if let Some(n) = m.native_context {
        s.push_str(&format!(", native context {}", fmt_tokens(n)));
    }
    s
}

/// What the bounds do not claim.
pub fn limitations(r: &Report) -> Vec<String> {
    let mut v = vec![
        "These are bounds, not benchmarks: a ceiling can reject an impossible configuration or claim; it does not predict what a runtime achieves.".to_string(),
    ];
    if r.inputs.inventory.is_none() {
        v.push("No tensor inventory: file bytes are a conservative proxy for bytes read per token (open the GGUF for the inventory mode).".into());
    }
    if r.decode.optimistic_vendor {
        v.push(
            "The bandwidth is a vendor peak specification, not sustained application bandwidth."
                .into(),
        );
    }
    if r.capacity.other_bytes == 0 {
        let buffers = if r.layout.compute_placed {
            "each device's and the host's as llama.cpp's scheduler splits the graph"
        } else {
            "a CPU-backend model; GPU backends reserve differently"
        };
        v.push(format!("The article's W + K + A excludes process overhead (A = 0); the runtime memory counts llama.cpp's allocated cache, output and compute buffers ({buffers}) but not the OS share or other processes."));
    }
    v.push("The decode ceilings omit activation traffic, sampling, kernel launches, synchronization, thermal state and attention arithmetic; they assume one complete logical cache read at the retained context.".into());
    v
}

fn ceiling_line(c: &Ceiling, b: u64) -> String {
    let label = super::json::ceiling_label(c);
    // With several sequences a step yields one token of each: rates are labelled aggregate
    // (across B sequences) or per sequence, and the time is per step.
    let across = super::words::across_sequences(b);
    let per = if b > 1 { "ms per step" } else { "ms/token" };
    if c.tier_bytes.iter().filter(|x| **x > 0).count() > 1 {
        format!(
            "{} tokens/s{across} ({} {per}) non-overlapped; {} tokens/s{across} with perfect overlap — {label}",
            fmt_rate(c.tokens_per_second),
            fmt_ms(c.ms_per_token),
            fmt_rate(c.overlapped_tokens_per_second)
        )
    } else if b > 1 {
        format!(
            "{} × {} / {} bytes/step = {} tokens/s{across}, {} tokens/s per sequence ({} {per}) — {label}",
            b,
            fmt_bandwidth(c.bandwidth),
            group_digits(c.step_bytes as u128),
            fmt_rate(c.tokens_per_second),
            fmt_rate(c.per_sequence_tokens_per_second),
            fmt_ms(c.ms_per_token)
        )
    } else {
        format!(
            "{} / {} bytes/token = {} tokens/s ({} ms/token) — {label}",
            fmt_bandwidth(c.bandwidth),
            group_digits(c.step_bytes as u128),
            fmt_rate(c.tokens_per_second),
            fmt_ms(c.ms_per_token)
        )
    }
}

struct Out<'a, W: Write> {
    w: &'a mut W,
    style: Style,
}

impl<W: Write> Out<'_, W> {
    fn heading(&mut self, t: &str) -> io::Result<()> {
        match self.style {
            Style::Text => writeln!(self.w, "\n{t}\n{}", "-".repeat(t.chars().count())),
            Style::Markdown => writeln!(self.w, "\n## {t}\n"),
        }
    }
    fn row(&mut self, k: &str, v: &str) -> io::Result<()> {
        match self.style {
            Style::Text => writeln!(self.w, "  {:<22} {}", Text(k), Text(v)),
            Style::Markdown => writeln!(self.w, "| {} | {} |", Md(k), Md(v)),
        }
    }
    fn table_head(&mut self, a: &str, b: &str) -> io::Result<()> {
        if self.style == Style::Markdown {
            writeln!(self.w, "| {a} | {b} |\n|---|---|")?;
        }
        Ok(())
    }
    fn para(&mut self, t: &str) -> io::Result<()> {
        match self.style {
            Style::Text => writeln!(self.w, "  {}", Text(t)),
            Style::Markdown => writeln!(self.w, "- {}", Text(t)),
        }
    }
}

/// Write the worksheet.
pub fn write_worksheet<W: Write>(
    r: &Report,
    model_path: &str,
    style: Style,
    w: &mut W,
) -> io::Result<()> {
    write_worksheet_with(r, model_path, None, style, w)
}

/// [`write_worksheet`], with an "Ollama" section after "Reproduce" for an `ollama:NAME` model.
pub fn write_worksheet_with<W: Write>(
    r: &Report,
    model_path: &str,
    ollama: Option<&crate::workspace::OllamaRun>,
    style: Style,
    w: &mut W,
) -> io::Result<()> {
    let s = &r.inputs;
    let mut o = Out { w, style };
    match style {
        Style::Text => writeln!(o.w, "llmbound worksheet: {}", Text(&r.scenario))?,
        Style::Markdown => writeln!(o.w, "# llmbound worksheet: {}", Text(&r.scenario))?,
    }
    let note = "Bounds, not benchmarks. GB = 10^9 bytes, GiB = 2^30 bytes.";
    match style {
        Style::Text => writeln!(o.w, "{note}")?,
        Style::Markdown => writeln!(o.w, "\n{note}")?,
    }

    o.heading("Inputs")?;
    match style {
        Style::Markdown => writeln!(
            o.w,
            "| input | value | provenance | source |\n|---|---|---|---|"
        )?,
        Style::Text => {}
    }
    for (name, value, p, src) in inputs(r) {
        match style {
            Style::Text => {
                writeln!(o.w, "  {:<26} {}  [{p}]", Text(&name), Text(&value))?;
                if !src.is_empty() {
                    writeln!(o.w, "  {:<26}   source: {}", "", Text(&src))?;
                }
            }
            Style::Markdown => writeln!(
                o.w,
                "| {} | {} | {p} | {} |",
                Md(&name),
                Md(&value),
                Md(&src)
            )?,
        }
    }

    o.heading("Capacity")?;
    o.table_head("figure", "derivation")?;
    let a = &r.artifact;
    if let (Some(p), Some(d)) = (a.parameters, a.bits_per_parameter) {
        o.row(
            "file density",
            &format!(
                "8 × {} bytes / {} parameters = {:.3} bits/parameter ({}, {})",
                group_digits(a.bytes as u128),
                group_digits(p as u128),
                d,
                if a.parameters_counted {
                    "counted"
                } else {
                    "advertised"
                },
                a.parameters_provenance.map_or("", |p| p.label())
            ),
        )?;
    }
    o.row(
        "file size",
        &format!(
            "{} bytes = {} ({})",
            group_digits(a.bytes as u128),
            fmt_gib(a.bytes),
            fmt_gb(a.bytes)
        ),
    )?;
    o.row("KV per token", &kv_derivation(r))?;
    let n = s.cache.context;
    o.row(
        &if s.cache.sequences > 1 {
            format!("KV, {} × {} tokens", s.cache.sequences, fmt_tokens(n))
        } else {
            format!("KV at {} tokens", fmt_tokens(n))
        },
        &format!(
            "{} = {}",
            kv_total_derivation(r),
            units::bytes_and_binary(r.kv.bytes)
        ),
    )?;
    if let Some(naive) = r.kv.naive_bytes {
        o.row(
            "KV naive per-head (MLA)",
            &format!(
                "{} (stored: the latent {} — V is a view of K)",
                units::bytes_and_binary(naive),
                units::bytes_and_binary(r.kv.bytes)
            ),
        )?;
    }
    if r.kv.recurrent_bytes > 0 {
        o.row(
            "recurrent state",
            &format!(
                "{} (f32, independent of context)",
                units::bytes_and_binary(r.kv.recurrent_bytes)
            ),
        )?;
    }
    if r.kv.allocated_bytes != r.kv.total_bytes() {
        o.row(
            "llama.cpp allocates",
            &format!(
                "{} ({} cells padded to 256{})",
                units::bytes_and_binary(r.kv.allocated_bytes),
                fmt_tokens(r.kv.allocated_context),
                if s.cache.swa_full {
                    ", swa-full"
                } else {
                    ", windows + n_ubatch on sliding layers"
                }
            ),
        )?;
    }
    let c = &r.capacity;
    let wk = c.weights_bytes.saturating_add(c.kv_bytes);
    o.row(
        "W + K",
        &format!(
            "{} + {} = {}",
            group_digits(c.weights_bytes as u128),
            group_digits(c.kv_bytes as u128),
            bytes_gib(wk)
        ),
    )?;
    if c.other_bytes > 0 {
        o.row(
            "W + K + A",
            &format!(
                "{} + {} = {}",
                group_digits(wk as u128),
                group_digits(c.other_bytes as u128),
                bytes_gib(c.total_bytes)
            ),
        )?;
    }
    let tiers_used = r.tiers.iter().filter(|t| t.used).count();
    if tiers_used == 1 {
        let head_label = if c.other_bytes == 0 {
            "left for A"
        } else {
            "headroom"
        };
        o.row(
            head_label,
            &format!(
                "{} − {} = {} bytes = {}",
                group_digits(c.memory_bytes as u128),
                group_digits(c.total_bytes as u128),
                group_digits_signed(c.headroom_bytes),
                units::fmt_gib_signed(c.headroom_bytes)
            ),
        )?;
    } else {
        o.row(
            "headroom",
            &format!(
                "{} bytes = {} on the limiting tier {} (tiers below)",
                group_digits_signed(c.headroom_bytes),
                units::fmt_gib_signed(c.headroom_bytes),
                c.limiting_tier
            ),
        )?;
    }
    if r.tiers.iter().filter(|t| t.used).count() > 1 {
        for t in r.tiers.iter().filter(|t| t.used) {
            o.row(
                &format!("tier {}", t.name),
                &format!(
                    "{} layers{}{}: W {} + K {} + A {} of {} → headroom {} {}",
                    t.layers,
                    if t.output { " + output" } else { "" },
                    if t.embedding { " + embedding" } else { "" },
                    fmt_gib(t.weights_bytes),
                    fmt_gib(t.kv_bytes),
                    fmt_gib(t.other_bytes),
                    fmt_gib(t.capacity_bytes),
                    units::fmt_gib_signed(t.headroom_bytes),
                    if t.fits { "fits" } else { "DOES NOT FIT" }
                ),
            )?;
        }
        if !r.split.exact {
            o.row(
                "placement",
                "per-layer bytes estimated (W spread evenly; open the GGUF for exact bytes)",
            )?;
        }
    }
    write_runtime_memory(&mut o, r)?;
    o.row("verdict", &super::words::verdict(c))?;
    o.row(
        "largest context",
        &match c.max_context_tokens {
            _ if c.starts_at_no_context() => {
                "none: llama.cpp will not start with these settings".into()
            }
            Some(m) if c.max_context_by_tensor_limit => format!(
                "{} tokens per sequence (every cache tensor within its device's tensor limit){}",
                fmt_tokens(m),
                match s.model.native_context {
                    Some(nat) if m > nat => format!(" (above the native {})", fmt_tokens(nat)),
                    _ => String::new(),
                }
            ),
            Some(m) => format!(
                "{} tokens per sequence (runtime memory){}{}",
                fmt_tokens(m),
                match s.model.native_context {
                    Some(nat) if m > nat => format!(" (above the native {})", fmt_tokens(nat)),
                    _ => String::new(),
                },
                match c.article_max_context_tokens {
                    Some(a) if a != m => format!("; W + K + A alone: {}", fmt_tokens(a)),
                    _ => String::new(),
                }
            ),
            None => "no limit from memory: every layer's cache is bounded by a window".into(),
        },
    )?;
    if let Some(m) = crate::core::gpu_layers::max_gpu_layers(s) {
        o.row(
            "most GPU layers",
            &max_gpu_layers_line(&m, s.cache.sequences),
        )?;
    }

    let d = &r.decode;
    o.heading(&if d.optimistic_vendor {
        format!(
            "Decode ceilings ({}s: the bandwidth is a spec figure)",
            super::words::VENDOR_CEILING
        )
    } else {
        "Decode ceilings".to_string()
    })?;
    o.table_head("ceiling", "derivation")?;
    let b = s.cache.sequences;
    o.row("short context (file)", &ceiling_line(&d.short_context, b))?;
    o.row(
        &format!("{} tokens (file)", fmt_tokens(n)),
        &ceiling_line(&d.full_context, b),
    )?;
    if let (Some(is), Some(inf)) = (&d.inventory_short_context, &d.inventory_full_context) {
        let (tag, note) = if d.inventory_estimated {
            (
                "est.",
                " — estimate: routed-expert bytes from the advertised active parameters (no tensor inventory; open the GGUF for the counted figure)",
            )
        } else {
            ("inv.", "")
        };
        o.row(
            if d.inventory_estimated {
                "active read/token"
            } else {
                "inventory read/token"
            },
            &format!(
                "{} (of {} in the file){note}",
                bytes_gib(is.weight_read_bytes),
                group_digits(r.artifact.bytes as u128)
            ),
        )?;
        o.row(&format!("short context ({tag})"), &ceiling_line(is, b))?;
        o.row(
            &format!("{} tokens ({tag})", fmt_tokens(n)),
            &ceiling_line(inf, b),
        )?;
    }
    // The highest ceilings name what they are the highest of: every ceiling at a short
    // context, every ceiling at N (the same mode, so the two never mix).
    let of = super::words::highest_of(d.highest_decides, d.inventory_estimated);
    let overlapped = |c: &crate::core::decode::Ceiling| {
        if c.tier_bytes.iter().filter(|x| **x > 0).count() > 1 {
            ", tiers perfectly overlapped"
        } else {
            ""
        }
    };
    o.row(
        "highest, short context",
        &format!(
            "{} tokens/s{} ({}{}): the highest of the short-context ceilings ({of})",
            fmt_rate(d.highest_short.top_tokens_per_second()),
            super::words::across_sequences(b),
            fmt_bandwidth(d.highest_short.bandwidth),
            overlapped(&d.highest_short),
        ),
    )?;
    o.row(
        &format!("highest, {} tokens", fmt_tokens(n)),
        &format!(
            "{} tokens/s{}{} ({}{}): the highest of the ceilings at {} tokens{}",
            fmt_rate(d.highest.top_tokens_per_second()),
            super::words::across_sequences(b),
            if b > 1 { " per sequence" } else { "" },
            fmt_bandwidth(d.highest.bandwidth),
            overlapped(&d.highest),
            fmt_tokens(n),
            if d.highest_decides {
                format!(
                    "; a rate above it is impossible with {} tokens retained",
                    fmt_tokens(n)
                )
            } else {
                "; without a tensor inventory no rate can be called impossible".into()
            }
        ),
    )?;
    o.row(
        "provenance",
        &format!(
            "{} (bandwidth {})",
            d.full_context.provenance, d.full_context.bandwidth_provenance
        ),
    )?;

    let ro = &r.roofline;
    o.heading("Prefill and roofline")?;
    o.table_head("figure", "value")?;
    match ro.prefill_ceiling_tokens_per_second {
        Some(t) => o.row(
            "prefill ceiling",
            &format!(
                "{} tokens/s for {} rows ({}; {} on \"{}\", {})",
                fmt_rate(t),
                fmt_tokens(ro.prompt_rows),
                super::words::prefill_reason(ro),
                fmt_flops(ro.compute.unwrap_or_default()),
                ro.compute_path,
                ro.compute_provenance.map_or("", |p| p.label())
            ),
        )?,
        None => o.row("prefill ceiling", &super::words::prefill_reason(ro))?,
    }
    if let Some(l) = &ro.linear {
        o.row(
            "linear parameters",
            &format!(
                "{} ({}, {})",
                group_digits(l.parameters.round() as u128),
                super::words::linear_basis(l.basis),
                l.provenance
            ),
        )?;
    }
    if let Some(wi) = ro.weight_only_intensity {
        o.row(
            "weight-only intensity",
            &format!(
                "{} FLOP/byte at batch-one decode (2 P_linear / W_linear)",
                units::grouped(wi, 2)
            ),
        )?;
    }
    o.row(
        "decode intensity",
        &format!(
            "{} FLOP/byte at {} tokens",
            units::grouped(ro.decode_intensity, 2),
            fmt_tokens(n)
        ),
    )?;
    o.row(
        "prefill intensity",
        &format!(
            "{} FLOP/byte for {} prompt rows (weight reuse raises it with rows)",
            units::grouped(ro.prefill_intensity, 1),
            fmt_tokens(ro.prompt_rows)
        ),
    )?;
    if let (Some(rb), Some(x)) = (ro.machine_balance, ro.crossover_rows) {
        o.row(
            "machine balance",
            &format!(
                "{} FLOP/byte; crossover S* = {} rows",
                units::grouped(rb, 1),
                units::grouped(x, 0)
            ),
        )?;
    }

    write_placement(&mut o, r)?;

    o.heading("Reproduce")?;
    match style {
        Style::Text => writeln!(o.w, "  {}", Text(&super::llama_cpp_command(r, model_path)))?,
        Style::Markdown => writeln!(
            o.w,
            "```sh\n{}\n```",
            Text(&super::llama_cpp_command(r, model_path))
        )?,
    }

    if let Some(ol) = ollama {
        o.heading("Ollama")?;
        o.table_head("setting", "value")?;
        for (k, v) in ollama_lines(ol) {
            o.row(&k, &v)?;
        }
    }

    o.heading("Inference")?;
    // Both figures per tier, the smaller of each (the limiting tier): the runtime's free
    // memory is never a sum over tiers beside a one-tier headroom.
    let used: Vec<_> = r.tiers.iter().filter(|t| t.used).collect();
    let runtime_free = c.runtime_free_bytes;
    let verdict_line = if c.starts_and_fits() {
        // each figure names its base: the tier it is on and what it is held against (the
        // tier's capacity; the memory llama.cpp may fill there), the least of any tier
        let fullest = used.iter().min_by_key(|t| t.headroom_bytes);
        let limiting = used.iter().find(|t| t.name == c.limiting_tier).or(fullest);
        let several = used.len() > 1;
        let headroom = match fullest {
            Some(t) => format!(
                "{} of the {} on {} remain outside weights and cache{}",
                units::fmt_gib_signed(c.headroom_bytes),
                units::fmt_gib(t.capacity_bytes),
                t.name,
                if several {
                    ", the least of any tier"
                } else {
                    ""
                }
            ),
            None => format!(
                "{} remain outside weights and cache",
                units::fmt_gib_signed(c.headroom_bytes)
            ),
        };
        let beside = match limiting {
            Some(t) => format!(
                "{} of the {} llama.cpp may fill {}{} beside its allocated cache and buffers",
                units::fmt_gib_signed(runtime_free),
                units::fmt_gib(t.memory.capacity_bytes),
                if fullest.is_some_and(|f| f.index == t.index) {
                    "there".to_string()
                } else {
                    format!("on {}", t.name)
                },
                if several {
                    ", the least of any tier,"
                } else {
                    ""
                }
            ),
            None => format!(
                "{} beside llama.cpp's allocated cache and buffers",
                units::fmt_gib_signed(runtime_free)
            ),
        };
        format!(
            "The capacity model accepts this artifact at {} tokens × {} on {}; {headroom} ({beside}){}.",
            fmt_tokens(n),
            plural(b, "sequence"),
            s.machine.name,
            if c.other_bytes == 0 {
                " for the OS, other processes and allocator slack"
            } else {
                ""
            }
        )
    } else {
        format!(
            "The capacity model rejects this configuration: {}.",
            super::words::verdict(c)
        )
    };
    o.para(&verdict_line)?;
    o.para(&format!(
        "Any observed rate above {} tokens/s{} (short context) or {} tokens/s (at {} tokens{}) falsifies an assumption: not all counted bytes were read per token, fewer tokens were retained, bytes came from a faster tier than the one counted, or the bandwidth figure does not describe the path. Rates below identify no cause.",
        fmt_rate(d.short_context.tokens_per_second),
        super::words::across_sequences(s.cache.sequences),
        fmt_rate(d.full_context.tokens_per_second),
        fmt_tokens(n),
        if s.cache.sequences > 1 {
            " per sequence"
        } else {
            ""
        }
    ))?;

    if !r.warnings.is_empty() {
        o.heading("Warnings")?;
        for wn in &r.warnings {
            o.para(&super::words::warning(wn))?;
        }
    }
    o.heading("Limitations")?;
    for l in limitations(r) {
        o.para(&l)?;
    }
    Ok(())
}

fn kv_derivation(r: &Report) -> String {
    let m = &r.inputs.model;
    let c = &r.inputs.cache;
    let l0 = &m.layers[0];
    let full: Vec<_> = m
        .layers
        .iter()
        .filter(|l| l.attention == Attention::Full && l.owns_cache)
        .collect();
    let uniform = m.layers.iter().all(|l| l == l0 && l.owns_cache)
        && m.mla.is_none()
        && !m.layers.iter().any(|l| l.recurrent);
    let per = r.kv.bytes_per_token;
    let unit = exact_binary(per);
    let tail = if unit.ends_with("bytes") {
        format!("{} bytes/token", group_digits(per as u128))
    } else {
        format!("{} bytes/token = {unit}/token", group_digits(per as u128))
    };
    if uniform && l0.key_length == l0.value_length && c.type_k == c.type_v {
        format!(
            "2 × {} layers × {} KV heads × {} values/head × {} bytes/value = {tail}",
            m.layers.len(),
            l0.head_count_kv,
            l0.key_length,
            c.type_k.fraction()
        )
    } else if let Some(mla) = m.mla {
        format!(
            "{} layers × ({} latent + {} rope) values × {} bytes/value (K only; V is a view) = {tail}",
            full.len(),
            mla.kv_lora_rank,
            mla.rope_dim,
            c.type_k.fraction()
        )
    } else {
        format!(
            "Σ over {} full-attention layers of H_KV × (d_k × {} + d_v × {}) = {tail}{}",
            full.len(),
            c.type_k.fraction(),
            c.type_v.fraction(),
            if full.len() < m.layers.len() {
                format!(
                    "; all {} layers, windows not applied: {} bytes/token",
                    m.layers.len(),
                    group_digits(r.kv.bytes_per_token_all_layers as u128)
                )
            } else {
                String::new()
            }
        )
    }
}

fn kv_total_derivation(r: &Report) -> String {
    let c = &r.inputs.cache;
    let bounded = r.kv.per_layer.iter().any(|l| {
        matches!(
            l.attention,
            Attention::Sliding { .. } | Attention::Chunked { .. }
        )
    });
    if bounded && r.kv.recurrent_bytes == 0 {
        // The per-token part and the fixed window apart, so the line multiplies out.
        format!(
            "{} bytes/token × {} tokens × {} + {} on the windowed layers ({})",
            group_digits(r.kv.growing_bytes_per_token as u128),
            fmt_tokens(c.context),
            plural(c.sequences, "sequence"),
            group_digits(r.kv.window_bytes as u128),
            if c.swa_full {
                "swa-full: they keep every token too"
            } else {
                "min(N, window) tokens each, fixed from here on"
            }
        )
    } else if bounded {
        format!(
            "full layers × {} tokens + windowed layers × min({}, window), × {}",
            fmt_tokens(c.context),
            fmt_tokens(c.context),
            plural(c.sequences, "sequence")
        )
    } else {
        format!(
            "{} bytes/token × {} tokens × {}",
            group_digits(r.kv.bytes_per_token as u128),
            fmt_tokens(c.context),
            plural(c.sequences, "sequence")
        )
    }
}

/// Write a claim check.
pub fn write_check<W: Write>(c: &ClaimCheck, style: Style, w: &mut W) -> io::Result<()> {
    let c = &super::words::claim(c);
    let mut o = Out { w, style };
    match style {
        Style::Text => writeln!(o.w, "{}", Text(&c.verdict))?,
        Style::Markdown => writeln!(o.w, "# Claim check\n\n**{}**", Text(&c.verdict))?,
    }
    o.heading(&format!(
        "{} tokens/s{} against every decode ceiling",
        fmt_rate(c.tokens_per_second),
        super::words::across_sequences(c.sequences)
    ))?;
    for l in &c.lines {
        let mark = if l.exceeded { "ABOVE" } else { "below" };
        o.para(&format!(
            "{mark} the {} ceiling: {} tokens/s{}",
            l.ceiling,
            fmt_rate(l.tokens_per_second),
            if l.exceeded {
                " ⇒ an assumption is false; at least one of:"
            } else {
                ""
            }
        ))?;
        if l.exceeded {
            for a in &l.assumptions {
                match style {
                    Style::Text => writeln!(o.w, "      - {}", Text(a))?,
                    Style::Markdown => writeln!(o.w, "  - {}", Text(a))?,
                }
            }
        }
    }
    Ok(())
}

/// The runtime's memory per used tier, itemised (model, allocated cache, output buffer,
/// compute buffer, A), with the provenance of the buffers.
fn write_runtime_memory<W: Write>(o: &mut Out<'_, W>, r: &Report) -> io::Result<()> {
    let c = &r.capacity;
    let b = &c.buffers;
    // a placement by tensor charges each device its own compute buffer (the rows below): the
    // figure is their sum, not the CPU model's single figure
    if r.layout.compute_placed {
        o.row(
            "runtime buffers",
            &format!(
                "output {} + compute {} summed over the tiers below — {}",
                units::bytes_mib(c.runtime_bytes.output_bytes),
                units::bytes_mib(c.runtime_bytes.compute_bytes),
                super::words::PLACED_BUFFERS_PROVENANCE
            ),
        )?;
    } else {
        o.row(
            "runtime buffers",
            &format!(
                "output {} + compute {} ({} graph rows{}) — {}",
                units::bytes_mib(b.output_bytes),
                units::bytes_mib(b.compute_bytes),
                group_digits(b.graph_tokens as u128),
                if b.ffn_estimated {
                    ", FFN width estimated"
                } else {
                    ""
                },
                super::words::BUFFERS_PROVENANCE
            ),
        )?;
    }
    for t in r.tiers.iter().filter(|t| t.used) {
        let m = &t.memory;
        // A device tier is held against what its backend reports free (Metal's working set,
        // CUDA's total less its context), not its whole capacity.
        let free_to = r.inputs.machine.tiers[t.index]
            .device_or_default()
            .filter(|_| m.capacity_bytes != t.capacity_bytes)
            .map(|d| format!(" free to {}", d.backend.label()))
            .unwrap_or_default();
        o.row(
            &format!("runtime {}", t.name),
            &format!(
                "model {} + cache {} + output {} + compute {} + A {} = {} of {}{free_to} → {} {}",
                fmt_gib(m.model_bytes),
                fmt_gib(m.context_bytes),
                fmt_gib(m.output_bytes),
                fmt_gib(m.compute_bytes),
                fmt_gib(m.user_bytes),
                fmt_gib(m.total_bytes),
                fmt_gib(m.capacity_bytes),
                if m.free_bytes >= 0 { "free" } else { "short" },
                units::fmt_gib(m.free_bytes.unsigned_abs().min(u64::MAX as u128) as u64),
            ),
        )?;
    }
    Ok(())
}

/// MiB to two decimals with grouped digits, as llama.cpp's memory breakdown prints them.
fn mib2(n: u64) -> String {
    mib2_signed(i128::from(n))
}

/// Signed MiB to two decimals with grouped digits.
fn mib2_signed(n: i128) -> String {
    let hundredths = (n.unsigned_abs() * 100 + (units::MIB as u128) / 2) / units::MIB as u128;
    format!(
        "{}{}.{:02} MiB",
        if n < 0 { "-" } else { "" },
        group_digits(hundredths / 100),
        hundredths % 100
    )
}

/// The plan's lines: how it came about, then one row per device and the host.
pub fn placement_lines(r: &Report) -> Vec<(String, String)> {
    use crate::core::plan::PlanOrigin;
    let mut v = Vec::new();
    let p = match &r.plan {
        Err(e) => {
            v.push(("llama.cpp refuses".into(), e.0.clone()));
            return v;
        }
        Ok(p) => p,
    };
    match &p.origin {
        PlanOrigin::Fitted { arguments, probes } => v.push((
            "-fit on".into(),
            format!(
                "llama.cpp's -fit chooses {arguments} ({})",
                plural(u64::from(*probes), "dry-run projection")
            ),
        )),
        PlanOrigin::FitRefused { reason } if p.cache_over_limit.is_some() => {
            v.push(("-fit on".into(), format!("-fit stops: {reason}")))
        }
        PlanOrigin::FitRefused { reason } => v.push((
            "-fit on".into(),
            format!("-fit gives up ({reason}): llama.cpp loads the flags as given"),
        )),
        PlanOrigin::FitOff => v.push(("-fit off".into(), "the placement flags as given".into())),
    }
    if let Some(b) = p.fit_left_out_repack() {
        v.push((
            String::new(),
            format!("{} (below)", super::words::fit_left_out_repack(&mib2(b))),
        ));
    }
    let all = p.n_layer.saturating_add(1);
    v.push((
        "placement".into(),
        format!(
            "-c {} · -ngl {} of {all} on {} device{}",
            group_digits(p.n_ctx as u128),
            p.gpu_layers.min(all),
            p.devices.len(),
            if p.devices.len() == 1 { "" } else { "s" }
        ),
    ));
    // A plan with -ot patterns the whole-layer tier model does not place: the bounds above
    // are at the most whole layers that fit (compare::evaluation), this section at the plan.
    if matches!(p.origin, PlanOrigin::Fitted { .. })
        && !p.overrides.is_empty()
        && r.inputs.offload.overrides.is_empty()
    {
        v.push((
            "bounds above".into(),
            format!(
                "at -ngl {} of {all}, whole layers (the tier model does not place -ot patterns); the rows below are this plan's",
                r.layout.gpu_layers.min(all)
            ),
        ));
    }
    for d in &p.devices {
        v.push((
            format!("{} ({}, {})", d.buffer_name, d.tier_name, d.backend),
            format!(
                "model {} + context {} + compute {} = {} of {} free [{}] → {} {}; after the {} margin {}",
                mib2(d.memory.model.0),
                mib2(d.memory.context.0),
                mib2(d.memory.compute.0),
                mib2(d.memory.total()),
                mib2(d.free.value),
                d.free.provenance.label(),
                if d.left >= 0 { "left" } else { "short" },
                mib2(d.left.unsigned_abs().min(u64::MAX as u128) as u64),
                mib2(d.margin),
                mib2_signed(d.left_after_margin),
            ),
        ));
        if let Some(lo) = &d.limited {
            v.push((String::new(), super::words::limited_ops(&d.buffer_name, lo)));
        }
    }
    v.push((
        "host".into(),
        format!(
            "model {} + context {} + compute {} = {}{}{}",
            mib2(p.host.model.0),
            mib2(p.host.context.0),
            mib2(p.host.compute.0),
            mib2(p.host.total()),
            p.host_capacity
                .map(|c| format!(" of {} ({})", mib2(c), units::fmt_gib(c)))
                .unwrap_or_default(),
            p.host_short()
                .map(|b| format!(" → short {}", mib2(b)))
                .unwrap_or_default()
        ),
    ));
    let mut reads: Vec<String> = p
        .devices
        .iter()
        .zip(&p.reads.devices)
        .map(|(d, q)| {
            let bw = r.inputs.machine.tiers[d.tier].headline_bandwidth();
            format!(
                "{} {} at {} [{}]",
                d.buffer_name,
                mib2(q.total()),
                units::fmt_bandwidth(bw.value),
                bw.provenance.label()
            )
        })
        .collect();
    reads.push(format!("host {}", mib2(p.reads.host.total())));
    if p.ceilings.link_bytes > 0 || p.link_missing {
        reads.push(format!(
            "RPC link {} over {} hop{}{}",
            // a hidden state there and back is KiB: in MiB it would read 0.00
            units::fmt_binary(p.ceilings.link_bytes),
            p.reads.rpc_hops,
            if p.reads.rpc_hops == 1 { "" } else { "s" },
            if p.link_missing {
                " (no [[link]] in the machine profile: the hops count as no time)"
            } else {
                ""
            }
        ));
    }
    v.push(("reads per token".into(), reads.join(" · ")));
    v.push((
        "decode ceiling".into(),
        format!(
            "sum bound {} tok/s (memories one after another) · overlap bound {} tok/s (the slowest memory alone) [{}{}]",
            units::fmt_rate(p.ceilings.tokens_per_second),
            units::fmt_rate(p.ceilings.overlapped_tokens_per_second),
            p.ceilings.provenance.label(),
            if p.ceilings.provenance == crate::core::units::Provenance::Spec {
                ": an optimistic vendor ceiling"
            } else {
                ""
            }
        ),
    ));
    v.push((
        "tensor bytes".into(),
        if p.exact_model
            && r.inputs
                .inventory
                .as_ref()
                .is_some_and(|i| !i.tensors.is_empty())
        {
            "from the GGUF's tensor list (file), each tensor padded to 32 bytes".into()
        } else {
            "ESTIMATED per layer from W (no GGUF tensor list): -ot patterns see stand-in names"
                .into()
        },
    ));
    v.push((
        "compute".into(),
        super::json::PLACEMENT_COMPUTE_BASIS.into(),
    ));
    v
}

/// The "Placement (llama.cpp)" section.
fn write_placement<W: Write>(o: &mut Out<'_, W>, r: &Report) -> io::Result<()> {
    o.heading("Placement (llama.cpp)")?;
    o.table_head("device", "memory")?;
    for (k, v) in placement_lines(r) {
        o.row(&k, &v)?;
    }
    Ok(())
}

/// The most GPU layers that fit, in one line: `-ngl N of L+1 …; decode ceiling there …`.
pub fn max_gpu_layers_line(m: &crate::core::gpu_layers::MaxGpuLayers, sequences: u64) -> String {
    let Some(n) = m.gpu_layers else {
        return format!(
            "none: not even -ngl 0 fits (every layer in host memory; all = {})",
            m.all_layers
        );
    };
    let place = if n >= m.all_layers {
        format!("-ngl {n} (all {} layers with the output)", m.all_layers)
    } else {
        format!("-ngl {n} of {}", m.all_layers)
    };
    let rate = |c: &Ceiling| {
        if sequences > 1 {
            format!(
                "{} tokens/s aggregate over {sequences} sequences ({} per sequence)",
                fmt_rate(c.tokens_per_second),
                fmt_rate(c.per_sequence_tokens_per_second)
            )
        } else {
            format!("{} tokens/s", fmt_rate(c.tokens_per_second))
        }
    };
    let mut out = place;
    if let Some(c) = &m.ceiling {
        out.push_str(&format!(
            "; decode ceiling there at {} tokens: {} (file mode)",
            fmt_tokens(c.context_tokens),
            rate(c)
        ));
    }
    if let Some(c) = &m.inventory_ceiling {
        out.push_str(&format!(", {} (inventory mode)", rate(c)));
    }
    out
}

/// The "Ollama" section's rows: Ollama's plan for the model (its context by the Modelfile,
/// the environment or total VRAM; `-ngl` by `num_gpu` or `-fit`), what the options changed,
/// and the Ollama parameters that reproduce the scenario's `-c` and `-ngl`.
pub fn ollama_lines(ol: &crate::workspace::OllamaRun) -> Vec<(String, String)> {
    use crate::ollama::ContextSource;
    let p = &ol.plan;
    let why = match p.context_source {
        ContextSource::Modelfile => "the Modelfile's num_ctx".to_string(),
        ContextSource::Environment => "OLLAMA_CONTEXT_LENGTH".to_string(),
        ContextSource::VramDefault => format!(
            "Ollama's default for {} total VRAM (≥ 47 GiB → 262,144; ≥ 23 GiB → 32,768; else 4,096)",
            units::fmt_gib(ol.total_vram)
        ),
    };
    let mut v = vec![
        ("model".to_string(), format!("ollama:{}", ol.name)),
        (
            "context".into(),
            format!(
                "num_ctx {} per request × {} = -c {}: {why}, within the trained context",
                fmt_tokens(p.num_ctx),
                plural(p.parallel, "parallel request"),
                fmt_tokens(p.llama_ctx)
            ),
        ),
        (
            "-ngl".into(),
            match p.gpu_layers {
                crate::core::placement::GpuLayers::Auto => {
                    "num_gpu unset: Ollama passes no -ngl and llama.cpp's -fit chooses the layers at that context".to_string()
                }
                g => format!(
                    "-ngl {} from the Modelfile's num_gpu (llama.cpp's -fit then keeps the layers)",
                    super::json::gpu_layers_word(g)
                ),
            },
        ),
    ];
    if !ol.context_is_ollamas() {
        v.push((
            "options".into(),
            format!(
                "the options set {} tokens × {} (-c {}) instead",
                fmt_tokens(ol.context),
                plural(ol.parallel, "sequence"),
                fmt_tokens(ol.context.saturating_mul(ol.parallel))
            ),
        ));
    }
    if !ol.gpu_layers_is_ollamas() {
        v.push((
            "options".into(),
            format!(
                "the options set -ngl {} instead",
                super::json::gpu_layers_word(ol.gpu_layers)
            ),
        ));
    }
    let mut params = ol.reproduce();
    if ol.parallel > 1 {
        params.push(format!(
            "OLLAMA_NUM_PARALLEL={} in the server's environment",
            ol.parallel
        ));
    }
    v.push(("reproduce".into(), params.join(" · ")));
    if !ol.not_passed.is_empty() {
        v.push((
            "not passed".into(),
            format!(
                "no Ollama parameter passes {} on: Ollama runs llama.cpp without them",
                ol.not_passed.join(", ")
            ),
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_report() -> Report {
        let cat = crate::profile::Catalog::builtin();
        let s =
            crate::workspace::scenario(&cat, &crate::build::ScenarioOptions::default()).unwrap();
        crate::core::evaluate(&s).unwrap()
    }

    /// Every decimal figure of four or more integer digits in `text` (`1107.11`, `3000.00`):
    /// rates printed without their thousands grouped.
    fn ungrouped(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for word in text.split(|c: char| c.is_whitespace() || "(),;:".contains(c)) {
            if let Some((int, frac)) = word.split_once('.')
                && int.len() >= 4
                && int.chars().all(|c| c.is_ascii_digit())
                && !frac.is_empty()
                && frac.chars().all(|c| c.is_ascii_digit())
            {
                out.push(word.to_string());
            }
        }
        out
    }

    #[test]
    fn the_check_body_groups_the_rate_as_its_headline_does() {
        let r = default_report();
        let c = crate::core::check_claim(&r, 3000.0);
        let mut out = Vec::new();
        write_check(&c, Style::Text, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("3,000.00 tokens/s against every"), "{text}");
        assert!(
            ungrouped(&text).is_empty(),
            "{:?}\n{text}",
            ungrouped(&text)
        );
    }

    #[test]
    fn the_worksheet_prints_no_ungrouped_rate() {
        // A small model on a fast machine: the ceilings pass 1,000 tokens/s.
        let cat = crate::profile::Catalog::builtin();
        let opts = crate::build::ScenarioOptions {
            model: Some("gemma-3-270m".into()),
            machine: Some("server-h200-sxm-141gb".into()),
            ..Default::default()
        };
        let s = crate::workspace::scenario(&cat, &opts).unwrap();
        let r = crate::core::evaluate(&s).unwrap();
        assert!(r.decode.highest_short.top_tokens_per_second() >= 1_000.0);
        let mut out = Vec::new();
        write_worksheet(&r, "/m.gguf", Style::Text, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            ungrouped(&text).is_empty(),
            "{:?}\n{text}",
            ungrouped(&text)
        );
    }
}
