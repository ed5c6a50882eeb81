//! The workspace: the one owner of the user's scenario, between the inputs (profiles, GGUF
//! headers, options) and the engine (`core`). It holds the scenario, the scenario as loaded
//! or last saved (`base`), the model's raw figures and which settings the user changed, the
//! profiles the scenario came from, the pinned artifact and the last report. Every change goes
//! through it — [`Workspace::apply`] (one `core::edit::Edit`), [`Workspace::open`] (an
//! artifact read by [`open::read`]), [`Workspace::switch`] (another profile) and
//! [`Workspace::save`] — and ends with one evaluation; a change that cannot be evaluated is
//! undone and the error returned. The CLI builds its scenario with the same steps
//! ([`prepare`]); the explorer routes its keys here and keeps only UI state.
//! Depends on: build, compare, core, gguf, ollama, profile, remote, safetensors, sanitize.

pub mod build;
pub mod compare;
pub mod library;

pub mod open;

use crate::build::{BuildError, ScenarioOptions};
use crate::core::Report;
use crate::core::edit::{self, Edit, EditError, NewModel, Setting};
use crate::core::gpu_layers::MaxGpuLayers;
use crate::core::model::ArchFigures;
use crate::core::scenario::{Machine, Scenario, ScenarioError};
use crate::core::units::{self, Provenance};
use crate::profile::file::{MachineFile, ModelFile, ScenarioFile};
use crate::profile::save::{self, MachineFigure};
use crate::profile::{Catalog, Origin, ProfileError, load};
use std::path::{Path, PathBuf};

pub use open::{GgufInput, Opened, Rows, open_gguf, with_gguf};

use crate::core::mlx::{MlxPlan, Runtime};
use crate::safetensors::plan::{MachineFigures, MlxArtifact, MlxSettings};
use std::sync::Arc;

/// Where the machine profile came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineOrigin {
    /// A profile shipped with llmbound.
    BuiltIn,
    /// A profile in the user's profile directory.
    Saved,
    /// A TOML file named on the command line.
    File,
}

impl MachineOrigin {
    /// The origin of a catalogue entry.
    pub fn of(o: &Origin) -> MachineOrigin {
        match o {
            Origin::Builtin => MachineOrigin::BuiltIn,
            Origin::File(_) => MachineOrigin::Saved,
        }
    }
    /// As the Machine pane shows it.
    pub fn label(self) -> &'static str {
        match self {
            MachineOrigin::BuiltIn => "built-in",
            MachineOrigin::Saved => "saved",
            MachineOrigin::File => "file",
        }
    }
}

/// The profile artifact of the scenario (before or without a GGUF file).
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedArtifact {
    /// Artifact id in the model profile.
    pub id: String,
    /// File name.
    pub file: String,
    /// Exact bytes.
    pub bytes: u64,
    /// Pinned SHA-256.
    pub sha256: Option<String>,
    /// Quantization preset name.
    pub quantization: String,
}

impl PinnedArtifact {
    fn of(a: &crate::profile::file::ArtifactFile) -> PinnedArtifact {
        PinnedArtifact {
            id: a.id.clone(),
            file: a.file.clone(),
            bytes: a.bytes,
            sha256: a.sha256.clone(),
            quantization: a.quantization.clone(),
        }
    }
}

/// Another profile to use.
#[derive(Debug, Clone, PartialEq)]
pub enum Switch {
    /// To this machine profile.
    Machine(String),
    /// To this model profile.
    Model(String),
    /// To this scenario profile.
    Scenario(String),
}

/// What [`Workspace::save`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveKind {
    /// The machine profile.
    Machine,
    /// The scenario (and the edited machine and model with it).
    Scenario,
}

/// Why a change was not made (the workspace is as it was).
#[derive(Debug, Clone, thiserror::Error)]
pub enum Refusal {
    /// The edit itself is refused (the one edit function's reason).
    #[error("{0}")]
    Edit(#[from] EditError),
    /// The changed scenario cannot be evaluated.
    #[error("{0}")]
    Evaluate(#[from] ScenarioError),
    /// A profile or option could not be used.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// No such machine profile.
    #[error("unknown machine \"{id}\"; {known}")]
    UnknownMachine {
        /// The id asked for.
        id: String,
        /// The ids there are.
        known: String,
    },
    /// `-ngl` does not apply: the machine has no accelerator and host tier.
    #[error("GPU layers apply to a machine with an accelerator tier and a host tier")]
    NoOffload,
    /// Not even `-ngl 0` fits.
    #[error("no -ngl fits: not even -ngl 0 (every layer in host memory)")]
    NoGpuLayersFit,
    /// The opened header has no model the bounds can use.
    #[error("{0}")]
    NoModel(String),
    /// Nothing can be saved there.
    #[error("{0}")]
    CannotSave(&'static str),
    /// The profile could not be written (exists, invalid, I/O).
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The runtime does not apply to what is open.
    #[error("{0}")]
    Runtime(String),
}

/// MLX-LM's plan of `a` on `s`'s machine at `s`'s context (MLX-LM's default settings; the
/// working set from the machine's profile, `safetensors::plan::machine_working_set`).
/// Why runtime `r` does not apply: llama.cpp needs a GGUF (or a model profile), MLX-LM a
/// safetensors model.
fn runtime_refusal(r: Runtime, llama_applies: bool, mlx_open: bool) -> Option<String> {
    match r {
        Runtime::LlamaCpp if !llama_applies => Some(
            "llama.cpp needs a GGUF: the open model is a safetensors model for MLX-LM (open a GGUF of it, or a repository with both)".into(),
        ),
        Runtime::MlxLm if !mlx_open => Some(
            "MLX-LM needs a safetensors model: open an MLX folder or repository (o)".into(),
        ),
        _ => None,
    }
}

fn mlx_plan_of(a: &MlxArtifact, s: &Scenario) -> Option<MlxPlan> {
    let fig = MachineFigures::of(&s.machine)?;
    let settings = MlxSettings::with(&fig, &s.mlx_lm);
    Some(crate::safetensors::plan::plan(
        a,
        &settings,
        s.cache.context,
        &fig,
    ))
}

/// Why the workspace cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The scenario options do not build a scenario.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The scenario builds but cannot be evaluated.
    #[error("{0}")]
    Evaluate(String),
}

/// The scenario the options describe, and where it came from: the steps the CLI and the
/// explorer share (profiles, then the artifact, then each option as an [`Edit`]).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The scenario.
    pub scenario: Scenario,
    /// The model's raw figures.
    pub figures: ArchFigures,
    /// Provenance of unedited model figures (spec from a profile, file from a GGUF).
    pub model_base: Provenance,
    /// Settings the options changed.
    pub edited: Vec<Setting>,
    /// The scenario profile (None once a GGUF is the model).
    pub scenario_file: Option<ScenarioFile>,
    /// The model profile (None once a GGUF is the model).
    pub model_file: Option<ModelFile>,
    /// The machine profile as loaded.
    pub machine_file: MachineFile,
    /// Where it came from.
    pub machine_origin: MachineOrigin,
    /// The profile artifact of the scenario.
    pub pinned: Option<PinnedArtifact>,
    /// The safetensors model MLX-LM runs, when `--gguf` named one (alone, or beside the GGUF
    /// of a repository that has both).
    pub mlx: Option<Arc<MlxArtifact>>,
    /// llama.cpp's figures are for the artifact named (false when it is a safetensors model
    /// alone: the scenario's llama.cpp model is then the profile's, not the artifact's).
    pub llama_applies: bool,
    /// The scenario's model is the safetensors model's own shape (config.json maps one to
    /// one); false when its shape is MLX-LM's only.
    pub mlx_shaped: bool,
    /// Ollama's plan, when `--gguf` named an `ollama:NAME` model: its context, parallel
    /// requests and `-ngl` are the scenario's unless the options set them.
    pub ollama: Option<OllamaRun>,
}

/// Ollama's plan for an `ollama:NAME` model on the scenario's machine (issue 22: Ollama runs
/// llama-server and leaves `-ngl` to `-fit`), and the Ollama parameters that reproduce the
/// scenario's placement. Made by [`ollama_defaults`] when the model is opened; the report's
/// "Ollama" section and JSON `ollama` word it.
#[derive(Debug, Clone, PartialEq)]
pub struct OllamaRun {
    /// The name as given (`qwen3:32b`).
    pub name: String,
    /// The Modelfile's `num_ctx` / `num_gpu` (its params layer).
    pub modelfile: crate::ollama::ModelfileParams,
    /// The total VRAM Ollama compares with its thresholds: Σ over the machine's local GPUs
    /// of their total memory (Metal: the working set) less `OLLAMA_GPU_OVERHEAD`, bytes.
    pub total_vram: u64,
    /// `OLLAMA_CONTEXT_LENGTH`, `OLLAMA_NUM_PARALLEL` as read (None: unset or not a number).
    pub environment: (Option<u64>, Option<u64>),
    /// Ollama's own plan (context, parallel requests, `-ngl`).
    pub plan: crate::ollama::OllamaPlan,
    /// The scenario's context per sequence, after the options (Ollama's `num_ctx` unless
    /// `--context` set another).
    pub context: u64,
    /// The scenario's sequences (Ollama's parallel requests unless `--sequences` set them).
    pub parallel: u64,
    /// The scenario's `-ngl` (Ollama's `num_gpu`, else `-fit`'s, unless `-ngl` set it).
    pub gpu_layers: crate::core::placement::GpuLayers,
    /// Placement flags the scenario sets that no Ollama parameter passes on (`-ts`, `-sm`,
    /// `-mg`, `-ot`, `--cpu-moe`, `--n-cpu-moe`, `--n-cpu-ffn`, `-nkvo`, `-fit off`).
    pub not_passed: Vec<&'static str>,
}

impl OllamaRun {
    /// The Ollama parameters (`/set parameter …` lines) that make Ollama start llama-server
    /// at the scenario's `-c` and `-ngl`.
    pub fn reproduce(&self) -> Vec<String> {
        crate::ollama::reproduce(
            self.context.saturating_mul(self.parallel),
            self.parallel,
            self.gpu_layers,
        )
    }

    /// The scenario's context is Ollama's (no option changed it).
    pub fn context_is_ollamas(&self) -> bool {
        self.context == self.plan.num_ctx && self.parallel == self.plan.parallel
    }

    /// The scenario's `-ngl` is Ollama's (no option changed it).
    pub fn gpu_layers_is_ollamas(&self) -> bool {
        self.gpu_layers == self.plan.gpu_layers
    }

    /// Record the scenario's settings after the options.
    fn settle(&mut self, s: &Scenario) {
        use crate::core::placement::SplitMode;
        self.context = s.cache.context;
        self.parallel = s.cache.sequences.max(1);
        self.gpu_layers = s.offload.ngl();
        let o = &s.offload;
        let mut v = Vec::new();
        for (set, flag) in [
            (o.tensor_split.is_some(), "-ts"),
            (o.split_mode != SplitMode::Layer, "-sm"),
            (o.main_gpu != 0, "-mg"),
            (!o.overrides.is_empty(), "-ot"),
            (o.cpu_moe, "--cpu-moe"),
            (o.n_cpu_moe != 0, "--n-cpu-moe"),
            (o.n_cpu_ffn != 0, "--n-cpu-ffn"),
            (o.no_kv_offload, "-nkvo"),
            (!o.fit, "-fit off"),
        ] {
            if set {
                v.push(flag);
            }
        }
        self.not_passed = v;
    }
}

/// A whole number from the environment, as Ollama's `envconfig` reads it (unset, empty or not
/// a number: None, and Ollama keeps its default).
fn env_u64(key: &str) -> Option<u64> {
    std::env::var(key).ok()?.trim().parse().ok()
}

/// Ollama's plan for the model `name` on the scenario's machine: the Modelfile's parameters
/// from the store (`OLLAMA_MODELS`), the environment (`OLLAMA_CONTEXT_LENGTH`,
/// `OLLAMA_NUM_PARALLEL`, `OLLAMA_GPU_OVERHEAD`) and the total VRAM of the machine's local
/// GPUs (RPC devices are not Ollama's).
pub fn ollama_defaults(name: &str, s: &Scenario) -> Result<OllamaRun, String> {
    use crate::core::placement::Backend;
    let store = crate::ollama::store().ok_or_else(|| {
        crate::ollama::OllamaError::NoStore {
            name: name.to_string(),
        }
        .to_string()
    })?;
    let m = crate::ollama::resolve_in(&store, name).map_err(|e| e.to_string())?;
    let modelfile = crate::ollama::read_params(&m).map_err(|e| e.to_string())?;
    let gpus: Vec<u64> = s
        .machine
        .devices()
        .into_iter()
        .filter(|(_, d)| d.backend != Backend::Rpc)
        .map(|(_, d)| match d.backend {
            Backend::Metal => d.free.0,
            _ => d.total.0,
        })
        .collect();
    let overhead = env_u64("OLLAMA_GPU_OVERHEAD").unwrap_or(0);
    let total_vram = crate::ollama::total_vram(&gpus, overhead);
    let environment = (
        env_u64("OLLAMA_CONTEXT_LENGTH"),
        env_u64("OLLAMA_NUM_PARALLEL"),
    );
    let plan = crate::ollama::plan(
        &modelfile,
        &crate::ollama::OllamaSettings {
            total_vram,
            context_length: environment.0,
            num_parallel: environment.1.filter(|n| *n > 0).unwrap_or(1),
            vision: m.projector.is_some(),
            n_ctx_train: s.model.native_context.unwrap_or(0),
        },
    );
    Ok(OllamaRun {
        name: name.to_string(),
        modelfile,
        total_vram,
        environment,
        context: plan.num_ctx,
        parallel: plan.parallel,
        gpu_layers: plan.gpu_layers,
        plan,
        not_passed: Vec::new(),
    })
}

/// The edits that put Ollama's plan into a scenario: its context per request, its parallel
/// requests, and `-ngl` when the Modelfile's `num_gpu` sets it.
fn ollama_edits(run: &OllamaRun) -> Vec<Edit> {
    let mut v = vec![
        Edit::Context(run.plan.num_ctx),
        Edit::Sequences(run.plan.parallel),
    ];
    if run.plan.gpu_layers != crate::core::placement::GpuLayers::Auto {
        v.push(Edit::Ngl(run.plan.gpu_layers));
    }
    v
}

/// The Ollama name an opened reference names.
fn ollama_name(reference: &Path) -> Option<String> {
    match crate::remote::Source::parse(reference) {
        crate::remote::Source::Ollama(n) => Some(n),
        _ => None,
    }
}

fn record(edited: &mut Vec<Setting>, e: &Edit) {
    if let Some(k) = e.setting()
        && !edited.contains(&k)
    {
        edited.push(k);
    }
}

/// Build the scenario the options describe: its profiles, the GGUF they name (opened by
/// [`open::read`] and applied as an [`Edit::Model`]), then every option as the [`Edit`] it
/// makes. The name is the scenario profile's only while the options leave it what the
/// profile describes; otherwise it is derived (`Scenario::derived_name`).
pub fn prepare(cat: &Catalog, o: &ScenarioOptions) -> Result<Prepared, BuildError> {
    let (mut s, profile) = build::profile_scenario(cat, o)?;
    let scenario_file = cat
        .scenario(o.scenario.as_deref().unwrap_or("default"))
        .ok();
    let profile_machine = scenario_file.as_ref().map(|f| f.machine.clone());
    let model_id = o
        .model
        .clone()
        .or_else(|| scenario_file.as_ref().map(|s| s.model.clone()));
    let mut model_file = model_id.and_then(|id| cat.model(&id).ok());
    let artifact_id = match (&o.artifact, &o.model) {
        (Some(a), _) => Some(a.clone()),
        (None, Some(_)) => model_file
            .as_ref()
            .and_then(|m| m.artifacts.first().map(|a| a.id.clone())),
        (None, None) => scenario_file.as_ref().map(|s| s.artifact.clone()),
    };
    let mut pinned = model_file.as_ref().and_then(|m| {
        m.artifacts
            .iter()
            .find(|a| Some(&a.id) == artifact_id.as_ref())
            .map(PinnedArtifact::of)
    });
    let mut figures = match &model_file {
        Some(m) if o.artifact_bytes.is_none() || o.model.is_some() => load::arch_figures(m),
        _ => edit::figures_of(&s.model),
    };
    let mut model_base = Provenance::Spec;
    let mut scenario_file = scenario_file;
    let mut mlx = None;
    let mut llama_applies = true;
    let mut mlx_shaped = false;
    let opened = match &o.gguf {
        Some(path) => Some(open::read(path, Rows::Totals).map_err(BuildError::Gguf)?),
        None => None,
    };
    if let Some(opened) = &opened {
        mlx = opened.mlx.clone();
        if opened.is_mlx_only() {
            llama_applies = false;
            // Its shape and files where config.json maps one to one (else the profile's stay).
            if let Some((m, fig)) = open::mlx_model(opened) {
                let mut t = s.clone();
                let mut f = figures.clone();
                if edit::apply(&mut t, &mut f, &Edit::Model(Box::new(m))).is_ok() {
                    (s, figures) = (t, fig);
                    mlx_shaped = true;
                    model_base = Provenance::File;
                    model_file = None;
                    scenario_file = None;
                    pinned = None;
                }
            }
            edit::apply(&mut s, &mut figures, &Edit::Runtime(Runtime::MlxLm))
                .map_err(build_edit("--gguf"))?;
            let name = format!(
                "{} (MLX-LM) on {}",
                open::mlx_model_name(opened),
                s.machine.name
            );
            edit::apply(&mut s, &mut figures, &Edit::Name(name)).map_err(build_edit("--gguf"))?;
        }
    }
    if let Some(opened) = opened.as_ref().filter(|_| llama_applies) {
        let matched = opened.matched(cat);
        let (m, fig) = open::new_model(opened, matched.as_ref())?;
        edit::apply(&mut s, &mut figures, &Edit::Model(Box::new(m)))
            .map_err(|e| BuildError::Gguf(e.to_string()))?;
        figures = fig;
        model_base = Provenance::File;
        pinned = matched.as_ref().map(|(_, a)| PinnedArtifact::of(a));
        model_file = None;
        scenario_file = None;
        let name = s.derived_name();
        edit::apply(&mut s, &mut figures, &Edit::Name(name)).map_err(build_edit("--gguf"))?;
    }
    // The options' machine figures first: Ollama's default context follows the machine's
    // total VRAM as the options leave it (`--memory`, `--device-free`, `--rpc`).
    let (machine_edits, other_edits): (Vec<_>, Vec<_>) = o
        .edits(&s)?
        .into_iter()
        .partition(|(_, e)| e.setting().is_some_and(|k| k.is_machine()));
    let mut edited = Vec::new();
    for (flag, e) in machine_edits {
        edit::apply(&mut s, &mut figures, &e).map_err(build_edit(flag))?;
        record(&mut edited, &e);
    }
    // An Ollama model: Ollama's context, parallel requests and num_gpu, under the options.
    let mut ollama = match o.gguf.as_deref().and_then(ollama_name) {
        Some(name) if llama_applies => {
            let run = ollama_defaults(&name, &s).map_err(BuildError::Gguf)?;
            for e in ollama_edits(&run) {
                edit::apply(&mut s, &mut figures, &e).map_err(build_edit("--gguf"))?;
            }
            Some(run)
        }
        _ => None,
    };
    for (flag, e) in other_edits {
        edit::apply(&mut s, &mut figures, &e).map_err(build_edit(flag))?;
        record(&mut edited, &e);
    }
    if let Some(run) = &mut ollama {
        run.settle(&s);
    }
    if let Some(f) = o.mlx_lm_flag().filter(|_| mlx.is_none()) {
        return Err(BuildError::Flag {
            flag: f,
            message: "an MLX-LM setting, and no safetensors model is open (give --gguf or --model-dir a model folder)".into(),
        });
    }
    if let Some(why) = runtime_refusal(s.runtime, llama_applies, mlx.is_some()) {
        return Err(BuildError::Flag {
            flag: "--runtime",
            message: why,
        });
    }
    s.validate().map_err(|e| BuildError::Flag {
        flag: "scenario",
        message: e.0,
    })?;
    if o.gguf.is_none() {
        // The scenario profile as the file describes it.
        let as_profile = load::scenario(cat, &profile).ok();
        if !as_profile.is_some_and(|p| p.same_subject(&s)) {
            let name = s.derived_name();
            edit::apply(&mut s, &mut figures, &Edit::Name(name)).map_err(build_edit("scenario"))?;
        }
    }
    let machine_ref = (o.machine.clone())
        .or(profile_machine)
        .unwrap_or_else(|| s.machine.id.clone());
    let machine_file = cat.machine(&machine_ref)?;
    let machine_origin = cat
        .machines
        .iter()
        .find(|e| e.id == machine_file.id)
        .map_or(MachineOrigin::File, |e| MachineOrigin::of(&e.origin));
    Ok(Prepared {
        scenario: s,
        figures,
        model_base,
        edited,
        scenario_file,
        model_file,
        machine_file,
        machine_origin,
        pinned,
        mlx,
        llama_applies,
        mlx_shaped,
        ollama,
    })
}

fn build_edit(flag: &'static str) -> impl Fn(EditError) -> BuildError {
    move |e| BuildError::Flag {
        flag,
        message: e.to_string(),
    }
}

/// The scenario the options describe (the CLI's commands). A safetensors model alone has no
/// llama.cpp scenario: the error names `report --model-dir`, which gives its MLX-LM plan.
pub fn scenario(cat: &Catalog, o: &ScenarioOptions) -> Result<Scenario, BuildError> {
    scenario_and_ollama(cat, o).map(|(s, _)| s)
}

/// The scenario on each of `machines`, each at its own placement (`compare::compare`); with
/// Ollama's plan `run` while the scenario's context and sequences are still Ollama's, each
/// machine is put at Ollama's plan for it (its default context follows the machine's VRAM).
pub fn compare_machines(
    s: &Scenario,
    machines: &[Machine],
    run: Option<&OllamaRun>,
) -> Vec<compare::CompareRow> {
    let Some(run) = run.filter(|r| r.context_is_ollamas()) else {
        return compare::compare(s, machines);
    };
    compare::compare_scenarios(
        machines
            .iter()
            .map(|m| {
                let sc = compare::on_machine(s, m).and_then(|sc| {
                    ollama_defaults(&run.name, &sc)
                        .and_then(|own| {
                            edit::applied(&sc, &ollama_edits(&own)).map_err(|e| e.to_string())
                        })
                        .map_err(ScenarioError)
                });
                (m, sc)
            })
            .collect(),
    )
}

/// [`scenario`], with Ollama's plan when `--gguf` named an `ollama:NAME` model.
pub fn scenario_and_ollama(
    cat: &Catalog,
    o: &ScenarioOptions,
) -> Result<(Scenario, Option<OllamaRun>), BuildError> {
    let p = prepare(cat, o)?;
    if !p.llama_applies {
        let name = o
            .gguf
            .as_deref()
            .map(crate::sanitize::path)
            .unwrap_or_default();
        return Err(BuildError::Gguf(format!(
            "{name} is a safetensors model for MLX-LM, not a GGUF: `llmbound report --model-dir {name}` gives its MLX-LM plan"
        )));
    }
    Ok((p.scenario, p.ollama))
}

/// The user's scenario and everything it came from; see the module header.
#[derive(Debug, Clone)]
pub struct Workspace {
    catalog: Catalog,
    scenario: Scenario,
    base: Scenario,
    report: Report,
    figures: ArchFigures,
    model_base: Provenance,
    edited: Vec<Setting>,
    scenario_file: Option<ScenarioFile>,
    model_file: Option<ModelFile>,
    machine_file: MachineFile,
    machine_origin: MachineOrigin,
    pinned: Option<PinnedArtifact>,
    max_gpu_layers: Option<MaxGpuLayers>,
    opened: Option<PathBuf>,
    mlx: Option<Arc<MlxArtifact>>,
    mlx_plan: Option<MlxPlan>,
    llama_applies: bool,
    mlx_shaped: bool,
    ollama: Option<OllamaRun>,
}

/// Everything [`Workspace::apply`] puts back when a change cannot be evaluated.
#[derive(Debug, Clone)]
struct Undo {
    scenario: Scenario,
    figures: ArchFigures,
    edited: Vec<Setting>,
}

impl Workspace {
    /// The workspace on the scenario the options describe.
    pub fn new(catalog: Catalog, opts: &ScenarioOptions) -> Result<Workspace, StartError> {
        let p = prepare(&catalog, opts)?;
        let report =
            crate::compare::evaluation(&p.scenario).map_err(|e| StartError::Evaluate(e.0))?;
        let max_gpu_layers = crate::core::gpu_layers::max_gpu_layers(&p.scenario);
        // Settings given at start-up are where the user starts: only machine figures count
        // as unsaved edits (they are what a saved machine would differ by).
        let edited = p.edited.into_iter().filter(|k| k.is_machine()).collect();
        let mlx_plan = p.mlx.as_ref().and_then(|a| mlx_plan_of(a, &p.scenario));
        Ok(Workspace {
            catalog,
            base: p.scenario.clone(),
            scenario: p.scenario,
            report,
            figures: p.figures,
            model_base: p.model_base,
            edited,
            scenario_file: p.scenario_file,
            model_file: p.model_file,
            machine_file: p.machine_file,
            machine_origin: p.machine_origin,
            pinned: p.pinned,
            max_gpu_layers,
            opened: opts.gguf.clone(),
            mlx: p.mlx,
            mlx_plan,
            llama_applies: p.llama_applies,
            mlx_shaped: p.mlx_shaped,
            ollama: p.ollama,
        })
    }

    /// Ollama's plan, when the model is an `ollama:NAME` model (its settings follow the
    /// scenario's edits).
    pub fn ollama(&self) -> Option<&OllamaRun> {
        self.ollama.as_ref()
    }

    /// The scenario on each of `machines`, each at its own placement (`compare::compare`);
    /// an Ollama model whose context and sequences are still Ollama's is put on each machine
    /// at Ollama's plan for it (its default context follows the machine's VRAM).
    pub fn compare(&self, machines: &[Machine]) -> Vec<compare::CompareRow> {
        let run = self
            .ollama()
            .filter(|_| !self.is_edited(Setting::Context) && !self.is_edited(Setting::Sequences));
        compare_machines(self.scenario(), machines, run)
    }

    /// Profiles (built-in and the user's).
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }
    /// The last valid scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    /// The scenario as loaded or last saved.
    pub fn base(&self) -> &Scenario {
        &self.base
    }
    /// The report of [`Workspace::scenario`].
    pub fn report(&self) -> &Report {
        &self.report
    }
    /// The model's raw figures (model edits change them).
    pub fn figures(&self) -> &ArchFigures {
        &self.figures
    }
    /// Provenance of unedited model figures.
    pub fn model_base(&self) -> Provenance {
        self.model_base
    }
    /// The user changed this setting since the profiles were loaded or saved.
    pub fn is_edited(&self, k: Setting) -> bool {
        self.edited.contains(&k)
    }
    /// The model figures the user changed.
    pub fn model_edits(&self) -> Vec<Setting> {
        (self.edited.iter().copied())
            .filter(|k| k.is_model())
            .collect()
    }
    /// The machine figures the user changed.
    pub fn machine_edits(&self) -> Vec<Setting> {
        (self.edited.iter().copied())
            .filter(|k| k.is_machine())
            .collect()
    }
    /// The scenario differs from what was loaded or saved.
    pub fn is_changed(&self) -> bool {
        self.scenario != self.base
    }
    /// The scenario profile (None after opening a GGUF).
    pub fn scenario_file(&self) -> Option<&ScenarioFile> {
        self.scenario_file.as_ref()
    }
    /// The model profile (None after opening a GGUF).
    pub fn model_file(&self) -> Option<&ModelFile> {
        self.model_file.as_ref()
    }
    /// The machine profile as loaded (edits are applied when saving).
    pub fn machine_file(&self) -> &MachineFile {
        &self.machine_file
    }
    /// Where the machine profile came from.
    pub fn machine_origin(&self) -> MachineOrigin {
        self.machine_origin
    }
    /// The profile artifact of the scenario.
    pub fn pinned(&self) -> Option<&PinnedArtifact> {
        self.pinned.as_ref()
    }
    /// The most GPU layers that fit (`core::gpu_layers`), recomputed with the report.
    pub fn max_gpu_layers(&self) -> Option<&MaxGpuLayers> {
        self.max_gpu_layers.as_ref()
    }
    /// The artifact opened by path or reference, when the model is one.
    pub fn opened(&self) -> Option<&Path> {
        self.opened.as_deref()
    }
    /// The runtime the figures shown are for (the scenario's setting).
    pub fn runtime(&self) -> Runtime {
        self.scenario.runtime
    }
    /// The runtimes that apply to what is open: llama.cpp for a GGUF or a model profile,
    /// MLX-LM for a safetensors model, both for a repository that has both.
    pub fn runtimes(&self) -> Vec<Runtime> {
        Runtime::ALL
            .into_iter()
            .filter(|r| self.runtime_refusal(*r).is_none())
            .collect()
    }
    /// Why `r` does not apply to what is open, if it does not.
    pub fn runtime_refusal(&self, r: Runtime) -> Option<String> {
        runtime_refusal(r, self.llama_applies, self.mlx.is_some())
    }
    /// The safetensors model open for MLX-LM, if any.
    pub fn mlx(&self) -> Option<&MlxArtifact> {
        self.mlx.as_deref()
    }
    /// MLX-LM's plan of the open safetensors model on the scenario's machine at its context
    /// (recomputed with the report), when one is open.
    pub fn mlx_plan(&self) -> Option<&MlxPlan> {
        self.mlx_plan.as_ref()
    }
    /// The safetensors model open alone whose shape core does not hold (MoE, MLA, sliding
    /// window, hybrid …): the scenario's model and W are then not this model's, and the panes
    /// show this model's files and say its shape figures are MLX-LM's only.
    pub fn mlx_unshaped(&self) -> Option<&MlxArtifact> {
        self.mlx
            .as_deref()
            .filter(|_| !self.llama_applies && !self.mlx_shaped)
    }
    /// The Artifact pane's figures: the report's, or those of the safetensors files of a
    /// model whose shape is MLX-LM's only (W as the files sum, parameters counted).
    pub fn artifact_figures(&self) -> crate::core::evaluate::ArtifactFigures {
        match self.mlx_unshaped() {
            Some(a) => {
                let w = a.weights_bytes();
                let p: u64 = a.inventory.rows.iter().map(|r| r.elements).sum();
                crate::core::evaluate::ArtifactFigures {
                    bytes: w,
                    provenance: Provenance::File,
                    parameters: (p > 0).then_some(p),
                    parameters_provenance: (p > 0).then_some(Provenance::File),
                    parameters_counted: true,
                    bits_per_parameter: units::bits_per_weight(w, p),
                }
            }
            None => self.report.artifact.clone(),
        }
    }
    /// The scenario's name while its figures are MLX-LM's: the safetensors model open and the
    /// machine, "(MLX-LM)" between them (kept through edits).
    fn mlx_name(&self) -> Option<String> {
        let a = self.mlx.as_ref()?;
        (self.scenario.runtime == Runtime::MlxLm).then(|| {
            let path = self.opened.as_deref().unwrap_or(&a.dir);
            format!(
                "{} (MLX-LM) on {}",
                open::mlx_path_name(path),
                self.scenario.machine.name
            )
        })
    }
    /// The machine figures MLX-LM's plan is made with (the first memory tier).
    pub fn mlx_machine(&self) -> Option<MachineFigures> {
        MachineFigures::of(&self.scenario.machine)
    }

    fn undo_point(&self) -> Undo {
        Undo {
            scenario: self.scenario.clone(),
            figures: self.figures.clone(),
            edited: self.edited.clone(),
        }
    }

    fn restore(&mut self, u: Undo) {
        self.scenario = u.scenario;
        self.figures = u.figures;
        self.edited = u.edited;
    }

    /// Name the scenario (the loaded name while it is what was loaded, else derived) and
    /// evaluate it; on failure go back to `undo`.
    fn commit(&mut self, undo: Undo) -> Result<(), Refusal> {
        let name = if self.scenario.same_subject(&self.base)
            && self.scenario.runtime == self.base.runtime
        {
            self.base.name.clone()
        } else if let Some(n) = self.mlx_name() {
            n
        } else {
            self.scenario.derived_name()
        };
        self.raw(Edit::Name(name))?;
        match crate::compare::evaluation(&self.scenario) {
            Ok(r) => {
                self.report = r;
                if let Some(o) = &mut self.ollama {
                    o.settle(&self.scenario);
                }
                self.max_gpu_layers = crate::core::gpu_layers::max_gpu_layers(&self.scenario);
                self.mlx_plan = (self.mlx.as_ref()).and_then(|a| mlx_plan_of(a, &self.scenario));
                Ok(())
            }
            Err(e) => {
                self.restore(undo);
                Err(Refusal::Evaluate(e))
            }
        }
    }

    /// The one call of `core::edit::apply` on the user's scenario.
    fn raw(&mut self, e: Edit) -> Result<(), EditError> {
        edit::apply(&mut self.scenario, &mut self.figures, &e)
    }

    /// Apply one edit and evaluate. A refused edit or a scenario that cannot be evaluated
    /// leaves the workspace as it was.
    pub fn apply(&mut self, e: Edit) -> Result<(), Refusal> {
        if let Edit::Runtime(r) = &e
            && let Some(why) = self.runtime_refusal(*r)
        {
            return Err(Refusal::Runtime(why));
        }
        let u = self.undo_point();
        if let Err(err) = self.raw(e.clone()) {
            self.restore(u);
            return Err(err.into());
        }
        record(&mut self.edited, &e);
        self.commit(u)
    }

    /// Set `-ngl` to the most GPU layers that fit. Returns what was found.
    pub fn apply_max_gpu_layers(&mut self) -> Result<MaxGpuLayers, Refusal> {
        let Some(m) = self.max_gpu_layers.clone() else {
            return Err(Refusal::NoOffload);
        };
        let Some(n) = m.gpu_layers else {
            return Err(Refusal::NoGpuLayersFit);
        };
        self.apply(Edit::GpuLayers((n < m.all_layers).then_some(n)))?;
        Ok(m)
    }

    /// Use an opened artifact: its model, W and inventory replace the current model; files
    /// the runtime loads beside it stay, as do the machine and the settings.
    pub fn open(&mut self, o: &Opened) -> Result<(), Refusal> {
        if o.is_mlx_only() {
            return self.open_mlx(o);
        }
        let matched = o.matched(&self.catalog);
        let (m, figures) =
            open::new_model(o, matched.as_ref()).map_err(|e| Refusal::NoModel(e.to_string()))?;
        self.use_model(m, figures)?;
        // An Ollama model: Ollama's context, parallel requests and num_gpu.
        if let Some(name) = ollama_name(&o.path) {
            let run = ollama_defaults(&name, &self.scenario).map_err(Refusal::NoModel)?;
            let u = self.undo_point();
            for e in ollama_edits(&run) {
                if let Err(err) = self.raw(e) {
                    self.restore(u);
                    return Err(err.into());
                }
            }
            self.ollama = Some(run);
            self.commit(u)?;
        }
        self.model_base = Provenance::File;
        self.scenario_file = None;
        self.model_file = None;
        self.pinned = matched.as_ref().map(|(_, a)| PinnedArtifact::of(a));
        self.opened = Some(o.path.clone());
        // A repository with both: its safetensors model for MLX-LM stays beside the GGUF.
        self.mlx = o.mlx.clone();
        self.mlx_plan = (self.mlx.as_ref()).and_then(|a| mlx_plan_of(a, &self.scenario));
        self.base = self.scenario.clone();
        Ok(())
    }

    /// Use a safetensors model alone: MLX-LM's plan is of it, and llama.cpp's figures do not
    /// apply (the scenario keeps its llama.cpp model, which is not this one, until a GGUF or a
    /// model profile is opened).
    fn open_mlx(&mut self, o: &Opened) -> Result<(), Refusal> {
        self.ollama = None;
        let before = (self.mlx.take(), self.llama_applies);
        self.mlx = o.mlx.clone();
        self.llama_applies = false;
        // The panes show this model: its shape from config.json and its safetensors files as
        // W, where config.json maps one to one (`MlxArtifact::arch_figures`); else the
        // scenario keeps the shape it had.
        let model = open::mlx_model_name(o);
        let shaped = open::mlx_model(o);
        let mut result = Err(Refusal::NoModel(String::new()));
        for attempt in [shaped, None] {
            let u = self.undo_point();
            let with_shape = attempt.is_some();
            let r = (|| {
                if let Some((m, fig)) = attempt {
                    self.raw(Edit::Model(Box::new(m)))?;
                    self.figures = fig;
                    self.edited.retain(|k| !k.is_model());
                }
                self.raw(Edit::Runtime(Runtime::MlxLm))?;
                Ok::<(), Refusal>(())
            })();
            result = match r {
                Ok(()) => self.commit(u),
                Err(e) => {
                    self.restore(u);
                    Err(e)
                }
            };
            if result.is_ok() {
                self.mlx_shaped = with_shape;
                if with_shape {
                    self.model_base = Provenance::File;
                    self.scenario_file = None;
                    self.model_file = None;
                }
                break;
            }
        }
        if let Err(e) = result {
            (self.mlx, self.llama_applies) = before;
            self.mlx_plan = (self.mlx.as_ref()).and_then(|a| mlx_plan_of(a, &self.scenario));
            return Err(e);
        }
        self.pinned = None;
        self.opened = Some(o.path.clone());
        // Named for the model open.
        let name = format!("{model} (MLX-LM) on {}", self.scenario.machine.name);
        self.raw(Edit::Name(name))?;
        self.base = self.scenario.clone();
        Ok(())
    }

    fn use_model(&mut self, m: NewModel, figures: ArchFigures) -> Result<(), Refusal> {
        self.ollama = None;
        let u = self.undo_point();
        if let Err(e) = self.raw(Edit::Model(Box::new(m))) {
            self.restore(u);
            return Err(e.into());
        }
        self.figures = figures;
        self.edited.retain(|k| !k.is_model());
        // A llama.cpp model: the figures are llama.cpp's, and no safetensors model stays open.
        let was = (self.mlx.take(), self.llama_applies);
        self.llama_applies = true;
        if let Err(e) = self.raw(Edit::Runtime(Runtime::LlamaCpp)) {
            (self.mlx, self.llama_applies) = was;
            self.restore(u);
            return Err(e.into());
        }
        let r = self.commit(u);
        if r.is_err() {
            (self.mlx, self.llama_applies) = was;
            self.mlx_plan = (self.mlx.as_ref()).and_then(|a| mlx_plan_of(a, &self.scenario));
        }
        r
    }

    /// What a switch would drop without saving, if anything.
    pub fn dropped_by(&self, sw: &Switch) -> Option<&'static str> {
        let machine =
            self.scenario.machine != self.base.machine || !self.machine_edits().is_empty();
        let model = !self.model_edits().is_empty();
        match sw {
            Switch::Machine(_) if machine => Some("the machine's unsaved edits"),
            Switch::Model(_) if model => Some("the model's unsaved edits"),
            Switch::Scenario(_) if machine || model || self.is_changed() => {
                Some("every unsaved edit")
            }
            _ => None,
        }
    }

    /// The switch would change nothing.
    pub fn is_current(&self, sw: &Switch) -> bool {
        match sw {
            Switch::Machine(id) => *id == self.scenario.machine.id,
            Switch::Model(id) => self.model_file.as_ref().is_some_and(|m| m.id == *id),
            Switch::Scenario(id) => {
                self.scenario_file.as_ref().is_some_and(|s| s.id == *id) && !self.is_changed()
            }
        }
    }

    /// Use another profile. A model profile that pins no artifact needs `bytes` (its exact
    /// weights size as typed). The machine (with its edits), cache and run settings stay
    /// through a model switch; a scenario switch replaces everything.
    pub fn switch(&mut self, sw: &Switch, bytes: Option<&str>) -> Result<(), Refusal> {
        match sw {
            Switch::Machine(id) => self.switch_machine(id),
            Switch::Model(id) => self.switch_model(id, bytes),
            Switch::Scenario(id) => self.switch_scenario(id),
        }
    }

    fn switch_machine(&mut self, id: &str) -> Result<(), Refusal> {
        let Some(entry) = self.catalog.machines.iter().find(|m| m.id == id) else {
            return Err(Refusal::UnknownMachine {
                id: id.to_string(),
                known: load::known_ids(id, self.catalog.machines.iter().map(|m| m.id.as_str())),
            });
        };
        let file = entry.value.clone();
        let origin = MachineOrigin::of(&entry.origin);
        let u = self.undo_point();
        self.raw(Edit::Machine(Box::new(load::machine(&file))))?;
        self.edited.retain(|k| !k.is_machine());
        self.commit(u)?;
        self.machine_file = file;
        self.machine_origin = origin;
        Ok(())
    }

    /// True when the model profile pins no artifact (a switch to it needs the bytes).
    pub fn pins_no_artifact(&self, id: &str) -> bool {
        (self.catalog.models.iter())
            .find(|m| m.id == id)
            .is_some_and(|m| m.value.artifacts.is_empty())
    }

    fn switch_model(&mut self, id: &str, bytes: Option<&str>) -> Result<(), Refusal> {
        let opts = ScenarioOptions {
            model: Some(id.to_string()),
            artifact_bytes: bytes.map(str::to_string),
            ..Default::default()
        };
        let fresh = prepare(&self.catalog, &opts)?;
        let s = fresh.scenario;
        let m = NewModel {
            shape: s.model,
            weights: s.weights,
            inventory: s.inventory,
            feed_forward: Some(s.feed_forward),
        };
        self.use_model(m, fresh.figures)?;
        self.model_file = fresh.model_file;
        self.pinned = fresh.pinned;
        self.model_base = Provenance::Spec;
        self.opened = None;
        if self.scenario_file.is_none() {
            self.scenario_file = fresh.scenario_file;
        }
        Ok(())
    }

    fn switch_scenario(&mut self, id: &str) -> Result<(), Refusal> {
        let opts = ScenarioOptions {
            scenario: Some(id.to_string()),
            ..Default::default()
        };
        let fresh = Workspace::new(self.catalog.clone(), &opts).map_err(|e| match e {
            StartError::Build(b) => Refusal::Build(b),
            StartError::Evaluate(m) => Refusal::Evaluate(ScenarioError(m)),
        })?;
        *self = fresh;
        Ok(())
    }

    /// Why `kind` cannot be saved now, if it cannot.
    pub fn cannot_save(&self, kind: SaveKind) -> Option<&'static str> {
        if self.catalog.user_dir.is_none() {
            return Some("no configuration directory: set LLMBOUND_CONFIG_DIR");
        }
        if kind == SaveKind::Scenario && self.scenario_file.is_none() {
            return Some(
                "a scenario opened on a GGUF file cannot be saved as a profile: its model is the file (save the machine from the Machine pane)",
            );
        }
        None
    }

    /// The id a save offers first.
    pub fn default_save_id(&self, kind: SaveKind) -> String {
        match kind {
            SaveKind::Machine => {
                if self.machine_origin == MachineOrigin::Saved {
                    self.machine_file.id.clone()
                } else {
                    format!("{}-mine", self.machine_file.id)
                }
            }
            SaveKind::Scenario => self
                .scenario_file
                .as_ref()
                .map_or("my-scenario".into(), |s| format!("{}-mine", s.id)),
        }
    }

    fn machine_figures(&self) -> Vec<MachineFigure> {
        (self.edited.iter())
            .filter_map(|k| match *k {
                Setting::Capacity(i) => Some(MachineFigure::Capacity(i)),
                Setting::Bandwidth(i) => Some(MachineFigure::Bandwidth(i)),
                Setting::Measured(i) => Some(MachineFigure::Measured(i)),
                Setting::ComputeRate(i) => Some(MachineFigure::ComputeRate(i)),
                Setting::DeviceFree(i) => Some(MachineFigure::Free(i)),
                _ => None,
            })
            .collect()
    }

    /// The machine profile with the user's edits applied.
    pub fn machine_profile(&self, id: &str) -> MachineFile {
        let edits = self.machine_edits();
        let name = if edits.is_empty() {
            self.machine_file.name.clone()
        } else {
            edited_machine_name(
                &self.machine_file.name,
                &load::machine(&self.machine_file),
                &self.scenario.machine,
                &edits,
            )
        };
        save::machine_profile(
            &self.machine_file,
            id,
            name,
            &self.scenario.machine,
            &self.machine_figures(),
        )
    }

    /// The model profile with the user's edits applied (None without a model profile).
    pub fn model_profile(&self, id: &str) -> Option<ModelFile> {
        let parameters = (self.is_edited(Setting::Parameters))
            .then(|| {
                self.scenario
                    .model
                    .parameters_advertised
                    .as_ref()
                    .map(|p| p.value)
            })
            .flatten();
        Some(save::model_profile(
            self.model_file.as_ref()?,
            id,
            &self.figures,
            parameters,
        ))
    }

    /// The scenario profile of the current settings.
    pub fn scenario_profile(
        &self,
        id: &str,
        machine_id: &str,
        model_id: &str,
    ) -> Option<ScenarioFile> {
        let base = self.scenario_file.as_ref()?;
        let artifact = self
            .pinned
            .as_ref()
            .map_or(base.artifact.as_str(), |p| p.id.as_str());
        Some(save::scenario_profile(
            base,
            &self.scenario,
            id,
            artifact,
            machine_id,
            model_id,
        ))
    }

    /// Save `kind` as `id` in the user's profile directory (atomic writes; an existing file
    /// is kept unless `overwrite`). Afterwards the saved profiles are the ones in use and the
    /// scenario counts as unedited. Returns the files written.
    pub fn save(
        &mut self,
        kind: SaveKind,
        id: &str,
        overwrite: bool,
    ) -> Result<Vec<PathBuf>, Refusal> {
        if let Some(why) = self.cannot_save(kind) {
            return Err(Refusal::CannotSave(why));
        }
        let Some(dir) = self.catalog.user_dir.clone() else {
            return Err(Refusal::CannotSave(
                "no configuration directory: set LLMBOUND_CONFIG_DIR",
            ));
        };
        let header = "# Saved from llmbound's explorer.\n";
        let paths = match kind {
            SaveKind::Machine => {
                let mf = self.machine_profile(id);
                load::check_machine(id, "", &mf, None)?;
                vec![load::save(&dir, "machines", id, &mf, header, overwrite)?]
            }
            SaveKind::Scenario => self.save_scenario(&dir, id, header, overwrite)?,
        };
        self.catalog = Catalog::load_with(Some(dir));
        if (kind == SaveKind::Machine || !self.machine_edits().is_empty())
            && let Ok(mf) = self.catalog.machine(id)
        {
            self.raw(Edit::MachineId(id.to_string()))?;
            self.machine_file = mf;
            self.machine_origin = MachineOrigin::Saved;
            self.edited.retain(|k| !k.is_machine());
        }
        if kind == SaveKind::Scenario {
            let name = format!("{} ({id})", self.scenario.name);
            self.raw(Edit::Name(name))?;
            self.edited.clear();
            self.base = self.scenario.clone();
        } else {
            // The saved machine is the machine as loaded now.
            let saved = Edit::Machine(Box::new(self.scenario.machine.clone()));
            self.base = edit::applied(&self.base, &[saved])?;
        }
        Ok(paths)
    }

    fn save_scenario(
        &self,
        dir: &Path,
        id: &str,
        header: &str,
        overwrite: bool,
    ) -> Result<Vec<PathBuf>, ProfileError> {
        let mut paths = Vec::new();
        let mut machine_id = self.scenario.machine.id.clone();
        if !self.machine_edits().is_empty() {
            let mf = self.machine_profile(id);
            load::check_machine(id, "", &mf, None)?;
            paths.push(load::save(dir, "machines", id, &mf, header, overwrite)?);
            machine_id = id.to_string();
        }
        let mut model_id = self
            .scenario_file
            .as_ref()
            .map(|s| s.model.clone())
            .unwrap_or_default();
        if !self.model_edits().is_empty()
            && let Some(m) = self.model_profile(id)
        {
            load::check_model(id, "", &m, None)?;
            paths.push(load::save(dir, "models", id, &m, header, overwrite)?);
            model_id = id.to_string();
        }
        let Some(sf) = self.scenario_profile(id, &machine_id, &model_id) else {
            return Ok(paths);
        };
        load::check_scenario(id, "", &sf, None)?;
        paths.push(load::save(dir, "scenarios", id, &sf, header, overwrite)?);
        Ok(paths)
    }
}

/// A saved machine's name: the profile's name without an earlier edit note, followed by the
/// edits as they are now (`… (edited: unified 64.000 GiB)`), so the name never keeps a stale
/// "(edited)". The product's name is kept as it is: a size it states is the product's, and
/// the note says what changed (no "RTX 4090 22 GiB", a product that does not exist). `_before`
/// is the machine as its profile states it.
pub fn edited_machine_name(
    base: &str,
    _before: &crate::core::scenario::Machine,
    m: &crate::core::scenario::Machine,
    edits: &[Setting],
) -> String {
    let base = base
        .split(" (edited")
        .next()
        .unwrap_or(base)
        .trim_end()
        .to_string();
    let tier = |i: usize| m.tiers.get(i);
    let parts: Vec<String> = edits
        .iter()
        .filter_map(|f| match *f {
            Setting::Capacity(i) => {
                tier(i).map(|t| format!("{} {}", t.name, units::fmt_gib(t.capacity.value)))
            }
            Setting::Bandwidth(i) => {
                tier(i).map(|t| format!("{} {}", t.name, units::fmt_bandwidth(t.bandwidth.value)))
            }
            Setting::Measured(i) => tier(i).map(|t| match &t.measured_bandwidth {
                Some(b) => format!("{} measured {}", t.name, units::fmt_bandwidth(b.value)),
                None => format!("{} measured none", t.name),
            }),
            Setting::ComputeRate(i) => m
                .compute
                .get(i)
                .map(|c| format!("{} {}", c.path, units::fmt_flops(c.rate.value))),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        base.to_string()
    } else {
        format!("{base} (edited: {})", parts.join(", "))
    }
}
