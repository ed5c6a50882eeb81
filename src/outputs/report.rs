//! Reports: the JSON contract (`Serialize` structs built `From<&core::Report>`) and the text and
//! markdown worksheets. Formatters write to `impl Write` and return; they never print, and
//! they read no file (an Ollama name arrives resolved).
//! Depends on: build, compare, core, exit, gguf, ollama, profile, remote, sanitize, workspace.

pub mod compare;
pub mod export;
pub mod hash;
pub mod incomplete;
pub mod json;
pub mod text;
pub mod words;

pub use export::{Export, ReportDoc, render, render_string};
pub use json::{JsonReport, to_json};
pub use text::{Style, write_check, write_worksheet};

use crate::core::Report;
use crate::core::placement::{Backend, SplitMode};
use crate::core::scenario::TierKind;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Plain text worksheet.
    #[default]
    Text,
    /// Markdown worksheet.
    Markdown,
    /// JSON contract.
    Json,
}

/// The llama.cpp command line that reproduces the scenario with every relevant flag explicit.
pub fn llama_cpp_command(r: &Report, model_path: &str) -> String {
    // Credentials typed into a URL (or `HF_ENDPOINT`) are never shown.
    crate::remote::http::redact(&llama_cpp_command_raw(r, model_path)).into_owned()
}

fn llama_cpp_command_raw(r: &Report, model_path: &str) -> String {
    let s = &r.inputs;
    let c = &s.cache;
    // The model as llama.cpp takes it: a file with -m, a URL with -mu, a Hugging Face quant
    // with -hf. An Ollama name arrives resolved to its blob's path
    // (`workspace::open::llama_cpp_model_path`): exporters do no I/O.
    use crate::remote::Source;
    let (flag, model) = match Source::parse(std::path::Path::new(model_path)) {
        Source::Url(u) => ("-mu", u),
        Source::HfFile {
            repo,
            revision,
            path,
        } => (
            "-mu",
            crate::remote::hf::resolve_url(&repo, &revision, &path),
        ),
        Source::HfQuant {
            repo,
            revision,
            quant,
        } if revision == "main" => ("-hf", format!("{repo}:{quant}")),
        Source::HfRepo { repo, revision } if revision == "main" => ("-hf", repo),
        _ => ("-m", model_path.to_string()),
    };
    let mut parts = vec![
        "llama-server".to_string(),
        flag.into(),
        shell_quote(&model),
        "-c".into(),
        c.context.saturating_mul(c.sequences).to_string(),
        "-np".into(),
        c.sequences.to_string(),
        "-ctk".into(),
        c.type_k.name().into(),
        "-ctv".into(),
        c.type_v.name().into(),
        "-fa".into(),
        if c.flash_attn { "on" } else { "off" }.into(),
    ];
    let ngl = if !s.machine.accelerators().is_empty() {
        r.layout.gpu_layers
    } else if s.machine.tiers.iter().any(|t| t.kind == TierKind::Unified) {
        crate::core::tiers::all_gpu_layers(&s.model)
    } else {
        0
    };
    parts.push("-ngl".into());
    parts.push(ngl.to_string());
    parts.push("-ub".into());
    parts.push(c.ubatch.to_string());
    if c.kv_unified {
        parts.push("-kvu".into());
    }
    if c.swa_full {
        parts.push("--swa-full".into());
    }
    if s.offload.no_kv_offload {
        parts.push("-nkvo".into());
    }
    // the machine's RPC servers, in device order (llama.cpp adds them as devices)
    let rpc: Vec<String> = s
        .machine
        .tiers
        .iter()
        .filter_map(|t| t.device.as_ref())
        .filter(|d| d.backend == Backend::Rpc)
        .filter_map(|d| d.endpoint.clone())
        .collect();
    if !rpc.is_empty() {
        parts.push("--rpc".into());
        parts.push(shell_quote(&rpc.join(",")));
    }
    let o = &s.offload;
    // -sm as set (`layer` is the default, spelled out beside -ts)
    let split_mode = match o.split_mode {
        SplitMode::None => Some("none"),
        SplitMode::Row => Some("row"),
        SplitMode::Layer => o.tensor_split.is_some().then_some("layer"),
    };
    if let Some(m) = split_mode {
        parts.push("-sm".into());
        parts.push(m.into());
    }
    if o.main_gpu != 0 {
        parts.push("-mg".into());
        parts.push(o.main_gpu.to_string());
    }
    if let Some(split) = &o.tensor_split {
        parts.push("-ts".into());
        parts.push(crate::core::split::fmt_for_llama_cpp(split));
    }
    // tensor overrides as written (each its own -ot, as llama.cpp accepts them repeated)
    for ot in &o.overrides {
        parts.push("-ot".into());
        parts.push(shell_quote(ot));
    }
    if o.cpu_moe {
        parts.push("--cpu-moe".into());
    }
    if o.n_cpu_moe != 0 {
        parts.push("--n-cpu-moe".into());
        parts.push(o.n_cpu_moe.to_string());
    }
    if o.n_cpu_ffn != 0 {
        parts.push("--n-cpu-ffn".into());
        parts.push(o.n_cpu_ffn.to_string());
    }
    parts.push("-fit".into());
    parts.push("off".into());
    for w in s.weights.iter().skip(1) {
        let flag = match w.kind {
            crate::core::weights::WeightKind::Mmproj => "--mmproj",
            crate::core::weights::WeightKind::Draft => "-md",
            crate::core::weights::WeightKind::Artifact(_) => continue,
        };
        parts.push(flag.into());
        parts.push(shell_quote(&w.file));
    }
    parts.join(" ")
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=:+@".contains(c))
        && !s.is_empty()
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command_for(model_path: &str) -> String {
        let cat = crate::profile::Catalog::builtin();
        let s =
            crate::workspace::scenario(&cat, &crate::build::ScenarioOptions::default()).unwrap();
        let r = crate::core::evaluate(&s).unwrap();
        llama_cpp_command(&r, model_path)
    }

    /// The placement flags a scenario sets are all on the line, so the command places the
    /// tensors as the report does.
    #[test]
    fn the_placement_flags_are_reproduced() {
        let cat = crate::profile::Catalog::builtin();
        let opts = crate::build::ScenarioOptions {
            machine: Some("rtx-4090-rpc-laptop".into()),
            ..Default::default()
        };
        let mut s = crate::workspace::scenario(&cat, &opts).unwrap();
        s.offload.overrides = vec![r"blk\.(1|3)\.ffn_down=CPU".into(), "output=CPU".into()];
        s.offload.n_cpu_moe = 4;
        s.offload.n_cpu_ffn = 2;
        s.offload.cpu_moe = true;
        s.offload.split_mode = crate::core::placement::SplitMode::None;
        s.offload.main_gpu = 1;
        let r = crate::core::evaluate(&s).unwrap();
        let line = llama_cpp_command(&r, "/m/x.gguf");
        for part in [
            " --rpc 192.168.10.2:50052 ",
            " -sm none -mg 1 ",
            r" -ot 'blk\.(1|3)\.ffn_down=CPU' -ot output=CPU ",
            " --cpu-moe --n-cpu-moe 4 --n-cpu-ffn 2 -fit off",
        ] {
            assert!(line.contains(part), "{part:?} not in {line}");
        }
        // the built-in Mac has none of them
        let plain = command_for("/m/x.gguf");
        for flag in [
            " --rpc ",
            " -sm ",
            " -mg ",
            " -ot ",
            " --cpu-moe",
            " --n-cpu-",
        ] {
            assert!(!plain.contains(flag), "{flag:?} in {plain}");
        }
    }

    #[test]
    fn the_model_is_named_as_llama_cpp_takes_it() {
        assert!(command_for("/models/x.gguf").starts_with("llama-server -m /models/x.gguf -c "));
        assert!(
            command_for("https://host/x.gguf").starts_with("llama-server -mu https://host/x.gguf ")
        );
        assert!(
            command_for("unsloth/Qwen3-32B-GGUF:Q4_K_M")
                .starts_with("llama-server -hf unsloth/Qwen3-32B-GGUF:Q4_K_M ")
        );
        assert!(
            command_for("hf://o/r/sub/x.gguf").starts_with(
                "llama-server -mu https://huggingface.co/o/r/resolve/main/sub/x.gguf "
            )
        );
    }
}
