//! One way to open an artifact, for every front end: a local file, any shard of a split
//! model, a URL, `hf://`, `owner/repo:QUANT` or `ollama:NAME` is read header-only by
//! `remote::open_any`, and [`new_model`] turns what was read into the one [`Edit::Model`] the
//! workspace (or a what-if copy: a library row) applies. The partial-download warning, the
//! reader's warnings and the advertised parameter counts of a model profile whose artifact has
//! exactly the same size are added here, once. An `ollama:NAME` is also resolved here to the
//! blob path llama.cpp's command names, so the report exporters read no file.
//!
//! Depends on core, gguf, remote, ollama and profile; no terminal.

use crate::build::BuildError;
use crate::core::edit::{self, Edit, NewModel};
use crate::core::model::{ArchFigures, ModelShape};
use crate::core::scenario::Scenario;
use crate::core::units;
use crate::gguf::{self, TensorInventory};
use crate::profile::Catalog;
use crate::profile::file::{ArtifactFile, ModelFile};
use crate::safetensors::plan::MlxArtifact;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An artifact's header as read.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The path or reference the user named.
    pub path: PathBuf,
    /// The artifact (all shards).
    pub artifact: gguf::Artifact,
    /// Its tensor inventory (with one row per tensor when asked for).
    pub inventory: TensorInventory,
    /// The model shape and the raw figures it was built from, or why the KV maths cannot be
    /// done from this header (the reader's message; the inventory can still be shown).
    pub model: Result<(ModelShape, ArchFigures), String>,
    /// What the reader guessed or noticed, and a partial download: the warnings the report
    /// carries for this file, in the CLI and the explorer alike.
    pub warnings: Vec<String>,
    /// How it was fetched (bytes transferred, which file a quantisation picked): the CLI
    /// prints them on stderr, the explorer in its message line.
    pub notes: Vec<String>,
    /// The safetensors model MLX-LM runs (an MLX folder or repository), when one was read:
    /// alone (`artifact` then has no shards and `model` says llama.cpp needs a GGUF) or beside
    /// the GGUF of a repository that has both.
    pub mlx: Option<Arc<MlxArtifact>>,
    /// A GGUF was read (false for a safetensors model alone: `artifact` is then a placeholder
    /// with no metadata, no tensors and 0 bytes).
    pub has_gguf: bool,
}

/// Tensor rows in the inventory (the explorer lists them; the CLI and the library do not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// One row per tensor.
    Every,
    /// Totals and rollups only.
    Totals,
}

/// The model name a header gives (`general.name`, else the file's stem).
fn model_name(artifact: &gguf::Artifact, path: &Path) -> String {
    artifact
        .metadata()
        .get_str("general.name")
        .ok()
        .flatten()
        .map(str::to_string)
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

/// The warning a partial download carries everywhere it is shown.
pub fn partial_download_warning(missing_bytes: u64) -> String {
    format!(
        "partial download: {} bytes of tensor data are missing; W is the size of the complete file",
        units::group_digits(missing_bytes as u128)
    )
}

/// The model as the llama.cpp command names it: an `ollama:NAME` reference resolved to its
/// blob's path (Ollama's manifest is read here, before the report is built, so the exporters
/// do no I/O); any other reference as given, and an Ollama name that does not resolve as typed.
pub fn llama_cpp_model_path(reference: &Path) -> String {
    match crate::remote::Source::parse(reference) {
        crate::remote::Source::Ollama(name) => crate::ollama::resolve(&name)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| reference.display().to_string()),
        _ => reference.display().to_string(),
    }
}

/// Read an artifact's header (never its tensor data).
pub fn read(path: &Path, rows: Rows) -> Result<Opened, String> {
    let opened = crate::remote::open_any(path)?;
    let transfer = opened.transfer_note();
    let mlx = match &opened.mlx {
        Some(m) => Some(Arc::new(
            MlxArtifact::of(&m.dir, m.clone()).map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    let artifact = opened.artifact;
    if !opened.has_gguf
        && let Some(a) = &mlx
    {
        return Ok(Opened {
            path: path.to_path_buf(),
            inventory: TensorInventory::summary(&artifact),
            artifact,
            model: Err(format!(
                "{} is a safetensors model for MLX-LM: llama.cpp's figures need a GGUF of it",
                crate::sanitize::path(path)
            )),
            warnings: a.warnings(),
            notes: opened.notes.into_iter().chain(transfer).collect(),
            mlx,
            has_gguf: false,
        });
    }
    let inventory = match rows {
        Rows::Every => TensorInventory::from_artifact(&artifact),
        Rows::Totals => TensorInventory::summary(&artifact),
    };
    let name = model_name(&artifact, path);
    let model = gguf::model_shape_and_figures(&artifact, &name).map_err(|e| e.to_string());
    let mut warnings = artifact.all_warnings();
    let notes: Vec<String> = opened.notes.into_iter().chain(transfer).collect();
    if artifact.missing_bytes() > 0 {
        warnings.push(partial_download_warning(artifact.missing_bytes()));
    }
    Ok(Opened {
        path: path.to_path_buf(),
        artifact,
        inventory,
        model,
        warnings,
        notes,
        mlx,
        has_gguf: true,
    })
}

/// Read a safetensors model for MLX-LM by any name (a folder, a `.safetensors` file or URL,
/// `owner/repo`, `hf://`): the one opening `report --model-dir` and `inspect` use.
pub fn read_mlx(path: &Path) -> Result<Arc<MlxArtifact>, String> {
    let o = read(path, Rows::Totals)?;
    o.mlx.ok_or_else(|| {
        format!(
            "{}: no safetensors model there (config.json and model*.safetensors); a GGUF opens with --gguf",
            crate::sanitize::path(path)
        )
    })
}

/// The name a safetensors model is shown by: its folder's name, or the repository as named.
pub fn mlx_model_name(o: &Opened) -> String {
    mlx_path_name(&o.path)
}

/// The name a safetensors model at `path` is shown by (as [`mlx_model_name`]).
pub fn mlx_path_name(path: &Path) -> String {
    if !crate::remote::is_remote(path)
        && let Some(name) = hf_cache_repo(path)
    {
        return name;
    }
    match path.file_name() {
        Some(f) if !crate::remote::is_remote(path) => f.to_string_lossy().into_owned(),
        _ => crate::sanitize::path(path),
    }
}

/// `owner/repo[/sub…]` for a folder of the Hugging Face cache
/// (`…/models--owner--repo/snapshots/REV[/sub…]`): a snapshot's folder is named by its
/// revision hash, not by the model.
fn hf_cache_repo(path: &Path) -> Option<String> {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let i = parts.iter().rposition(|p| p.starts_with("models--"))?;
    if parts.get(i + 1).map(String::as_str) != Some("snapshots") || parts.len() < i + 3 {
        return None;
    }
    let repo = parts[i]["models--".len()..].replacen("--", "/", 1);
    Some(
        std::iter::once(repo)
            .chain(parts[i + 3..].iter().cloned())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// The edit that makes a safetensors model the scenario's model (its shape from config.json,
/// its files as W, its inventory), where config.json maps one to one
/// (`MlxArtifact::arch_figures`): the panes then show this model. `None` for any other.
pub fn mlx_model(o: &Opened) -> Option<(NewModel, ArchFigures)> {
    let a = o.mlx.as_ref()?;
    let fig = a.arch_figures()?;
    let shape = ModelShape::from_figures(
        mlx_model_name(o),
        &fig,
        crate::core::units::Provenance::File,
    )
    .ok()?;
    let ffn = a
        .model
        .config
        .as_ref()
        .and_then(|c| c.u64("intermediate_size"));
    Some((
        NewModel {
            shape,
            weights: a.weight_files(),
            inventory: Some(a.inventory.to_core()),
            feed_forward: Some(crate::core::runtime::FeedForward {
                length: ffn.unwrap_or(0),
                expert_length: 0,
                shared_expert_length: 0,
            }),
        },
        fig,
    ))
}

/// Read a safetensors model's headers by any name, without its MLX-LM cache layout (`inspect`
/// lists the tensors of any architecture).
pub fn read_safetensors(path: &Path) -> Result<crate::safetensors::Model, String> {
    crate::remote::open_any(path)?.mlx.ok_or_else(|| {
        format!(
            "{}: no safetensors model there (config.json and model*.safetensors)",
            crate::sanitize::path(path)
        )
    })
}

impl Opened {
    /// True when this opening is a safetensors model alone (MLX-LM's artifact, no GGUF).
    pub fn is_mlx_only(&self) -> bool {
        self.mlx.is_some() && !self.has_gguf
    }
}

impl Opened {
    /// The model profile artifact of exactly this size, when the catalogue has one.
    pub fn matched(&self, cat: &Catalog) -> Option<(ModelFile, ArtifactFile)> {
        cat.artifact_with_bytes(self.artifact.file_bytes())
    }

    /// Why the KV maths cannot be done from this header, as one line naming the file.
    pub fn model_error_line(&self) -> Option<String> {
        let e = self.model.as_ref().err()?;
        let p = self.path.display().to_string();
        Some(if e.contains(&p) {
            e.clone()
        } else {
            format!("{p}: {e}")
        })
    }
}

/// Why an opened header gives no model for the bounds (one line naming the file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoModel {
    /// The tensor data ends short of its offsets: `inspect`'s line.
    #[error("{0}")]
    Incomplete(String),
    /// The header lacks what the KV maths needs (the reader's message).
    #[error("{0}")]
    Shape(String),
}

impl From<NoModel> for BuildError {
    fn from(e: NoModel) -> BuildError {
        match e {
            NoModel::Incomplete(why) => BuildError::Incomplete(why),
            NoModel::Shape(why) => BuildError::Gguf(why),
        }
    }
}

/// The edit an opened header makes, and the raw figures of its model (for model edits).
/// The advertised parameter counts of a model profile whose artifact has exactly the same
/// size are kept (spec); otherwise the file's counted parameters serve.
pub fn new_model(
    o: &Opened,
    matched: Option<&(ModelFile, ArtifactFile)>,
) -> Result<(NewModel, ArchFigures), NoModel> {
    // A partial download is refused for the bounds everywhere with `inspect`'s line (its
    // tensors and metadata can still be browsed).
    if let Some(why) = gguf::incomplete_reason(&o.path, &o.artifact) {
        return Err(NoModel::Incomplete(why));
    }
    let (mut shape, figures) = match &o.model {
        Ok(m) => m.clone(),
        Err(_) => return Err(NoModel::Shape(o.model_error_line().unwrap_or_default())),
    };
    shape.warnings.extend(o.warnings.iter().cloned());
    if let Some((m, _)) = matched {
        shape.parameters_advertised = m.parameters.as_ref().map(|p| p.sourced());
        shape.active_parameters_advertised = m.active_parameters.as_ref().map(|p| p.sourced());
    }
    Ok((
        NewModel {
            shape,
            weights: o.artifact.weight_files(),
            inventory: Some(o.inventory.to_core_inventory()),
            feed_forward: None,
        },
        figures,
    ))
}

/// An opened GGUF artifact with what the bounds need from it (`workspace::open`).
#[derive(Debug, Clone)]
pub struct GgufInput {
    /// The header as read.
    pub opened: Opened,
    /// A model profile artifact of exactly the same size, when there is one.
    pub matched: Option<(ModelFile, ArtifactFile)>,
}

impl GgufInput {
    /// The artifact (all shards).
    pub fn artifact(&self) -> &gguf::Artifact {
        &self.opened.artifact
    }
    /// Its tensor inventory (totals and rollups).
    pub fn inventory(&self) -> &TensorInventory {
        &self.opened.inventory
    }
    /// The model shape, or why the KV maths cannot be done (one line naming the file).
    pub fn shape(&self) -> Result<&ModelShape, String> {
        match &self.opened.model {
            Ok((m, _)) => Ok(m),
            Err(_) => Err(self.opened.model_error_line().unwrap_or_default()),
        }
    }
}

/// Open a GGUF header (never its tensor data) and match it to a profile by exact size: the
/// one opening every front end uses (`workspace::open::read`).
pub fn open_gguf(cat: &Catalog, path: &Path) -> Result<GgufInput, BuildError> {
    let opened = read(path, Rows::Totals).map_err(BuildError::Gguf)?;
    if !opened.has_gguf {
        return Err(BuildError::Gguf(format!(
            "{} is a safetensors model for MLX-LM, not a GGUF",
            crate::sanitize::path(path)
        )));
    }
    let matched = opened.matched(cat);
    Ok(GgufInput { opened, matched })
}

/// Replace `s`'s model with an opened file's (a what-if copy: a library row, a test), by the
/// same [`Edit::Model`] the workspace applies; the name becomes "FILE on MACHINE".
pub fn with_gguf(s: &mut Scenario, g: &GgufInput) -> Result<(), BuildError> {
    let (m, _) = new_model(&g.opened, g.matched.as_ref())?;
    let next = edit::applied(s, &[Edit::Model(Box::new(m))])
        .map_err(|e| BuildError::Gguf(e.to_string()))?;
    let name = next.derived_name();
    *s = edit::applied(&next, &[Edit::Name(name)]).map_err(|e| BuildError::Gguf(e.to_string()))?;
    Ok(())
}
