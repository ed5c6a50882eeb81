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
    if let Some(split) = &s.offload.tensor_split {
        parts.push("-sm".into());
        parts.push("layer".into());
        parts.push("-ts".into());
        parts.push(crate::core::split::fmt_for_llama_cpp(split));
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
