//! `config.json` of an MLX-LM / Hugging Face model: the architecture's shape and MLX's
//! quantization (`quantization.{group_size, bits, mode}` and per-layer overrides keyed by
//! the module path, as `mlx_lm.utils.quantize_model` writes them).

use super::SafetensorsError;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Largest `config.json` read: 16 MiB (real ones are a few KB; a per-layer quantization map
/// of a 1,000-layer model is under 1 MiB).
pub const CONFIG_CAP_BYTES: u64 = 16 << 20;

/// MLX quantization modes (`mx.quantize(mode=…)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantMode {
    /// `affine`: packed values + a scale and a bias per group, in the model dtype.
    Affine,
    /// `mxfp4`: e2m1 values, one uint8 (e8m0) scale per 32, no biases.
    Mxfp4,
    /// `nvfp4`: e2m1 values, one fp8 (e4m3) scale per 16, no biases.
    Nvfp4,
    /// `mxfp8`: e4m3 values, one uint8 scale per 32, no biases.
    Mxfp8,
}

impl QuantMode {
    /// Parse a mode name.
    pub fn parse(s: &str) -> Option<QuantMode> {
        match s {
            "affine" => Some(QuantMode::Affine),
            "mxfp4" => Some(QuantMode::Mxfp4),
            "nvfp4" => Some(QuantMode::Nvfp4),
            "mxfp8" => Some(QuantMode::Mxfp8),
            _ => None,
        }
    }
    /// The name MLX uses.
    pub fn name(self) -> &'static str {
        match self {
            QuantMode::Affine => "affine",
            QuantMode::Mxfp4 => "mxfp4",
            QuantMode::Nvfp4 => "nvfp4",
            QuantMode::Mxfp8 => "mxfp8",
        }
    }
    /// MLX-LM's default (group size, bits) of the mode (`quantize_model`'s `mode_defaults`).
    pub fn defaults(self) -> (u64, u64) {
        match self {
            QuantMode::Affine => (64, 4),
            QuantMode::Mxfp4 => (32, 4),
            QuantMode::Nvfp4 => (16, 4),
            QuantMode::Mxfp8 => (32, 8),
        }
    }
}

/// One quantization setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantization {
    /// Elements per group.
    pub group_size: u64,
    /// Bits per packed value.
    pub bits: u64,
    /// Mode.
    pub mode: QuantMode,
}

impl Quantization {
    /// A short label: `affine q4 g64`, `mxfp4`.
    pub fn label(&self) -> String {
        match self.mode {
            QuantMode::Affine => format!("affine q{} g{}", self.bits, self.group_size),
            m => m.name().to_string(),
        }
    }
}

/// The parts of `config.json` the bounds use. Numbers absent from the file are `None`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MlxConfig {
    /// `model_type` (MLX-LM's module name: `llama`, `gemma3_text`, `qwen3_next`, …).
    pub model_type: String,
    /// The (text) config object as read, for per-architecture keys.
    pub raw: Map<String, Value>,
    /// The global quantization (`quantization` without per-layer keys).
    pub quantization: Option<Quantization>,
    /// Per-module overrides: module path → setting, `None` = left unquantized.
    pub overrides: BTreeMap<String, Option<Quantization>>,
}

fn quant_of(v: &Map<String, Value>, default_mode: QuantMode) -> Option<Quantization> {
    let mode = v
        .get("mode")
        .and_then(Value::as_str)
        .and_then(QuantMode::parse)
        .unwrap_or(default_mode);
    let (g, b) = mode.defaults();
    Some(Quantization {
        group_size: v.get("group_size").and_then(Value::as_u64).unwrap_or(g),
        bits: v.get("bits").and_then(Value::as_u64).unwrap_or(b),
        mode,
    })
}

impl MlxConfig {
    /// Parse the text of a `config.json`. A multimodal config's `text_config` is taken as
    /// the model's shape when the top level has no `num_hidden_layers`.
    pub fn parse(text: &str, path: &Path) -> Result<MlxConfig, SafetensorsError> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            SafetensorsError::file(
                path,
                format!(
                    "not valid JSON at line {} column {}: {}",
                    e.line(),
                    e.column(),
                    super::reader::cut(&e.to_string())
                ),
            )
        })?;
        let Value::Object(top) = v else {
            return Err(SafetensorsError::file(path, "not a JSON object"));
        };
        let mut raw = top.clone();
        if !raw.contains_key("num_hidden_layers")
            && let Some(Value::Object(t)) = top.get("text_config")
        {
            for (k, v) in t {
                raw.insert(k.clone(), v.clone());
            }
        }
        let model_type = raw
            .get("model_type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let q = top
            .get("quantization")
            .or_else(|| top.get("quantization_config"))
            .and_then(Value::as_object);
        let mut quantization = None;
        let mut overrides = BTreeMap::new();
        if let Some(q) = q {
            // Hugging Face quantization_config of other quantizers (GPTQ, AWQ…) carries a
            // `quant_method`; only MLX's form is read here.
            if !q.contains_key("quant_method") {
                quantization = quant_of(q, QuantMode::Affine);
                let global_mode = quantization.map_or(QuantMode::Affine, |q| q.mode);
                for (k, v) in q {
                    match v {
                        Value::Object(o) => {
                            overrides.insert(k.clone(), quant_of(o, global_mode));
                        }
                        Value::Bool(false) => {
                            overrides.insert(k.clone(), None);
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(MlxConfig {
            model_type,
            raw,
            quantization,
            overrides,
        })
    }

    /// Read and parse `config.json` (bounded by [`CONFIG_CAP_BYTES`]).
    pub fn read(path: &Path) -> Result<MlxConfig, SafetensorsError> {
        let text = crate::infile::read_text(path, CONFIG_CAP_BYTES, "config.json")
            .map_err(|e| SafetensorsError::io(path, "reading config.json", e))?;
        MlxConfig::parse(&text, path)
    }

    /// An unsigned key.
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.raw.get(key).and_then(Value::as_u64)
    }
    /// A boolean key.
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.raw.get(key).and_then(Value::as_bool)
    }
    /// A string key.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.raw.get(key).and_then(Value::as_str)
    }
    /// A list of strings (`layer_types`).
    pub fn strings(&self, key: &str) -> Option<Vec<String>> {
        let a = self.raw.get(key)?.as_array()?;
        Some(
            a.iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect(),
        )
    }
    /// A list of unsigned integers (`mlp_only_layers`).
    pub fn u64s(&self, key: &str) -> Option<Vec<u64>> {
        let a = self.raw.get(key)?.as_array()?;
        Some(a.iter().filter_map(Value::as_u64).collect())
    }

    /// The quantization of the module at `path` (a tensor name without `.weight`): its
    /// override, else the global setting.
    pub fn quantization_of(&self, path: &str) -> Option<Quantization> {
        match self.overrides.get(path) {
            Some(q) => *q,
            None => self.quantization,
        }
    }
}
