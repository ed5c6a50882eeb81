//! Saving profiles: the explorer's edited machine, model and scenario as profile files, and
//! the atomic write (temp file in the same folder, fsync, rename) every save goes through.
//! Depends on `core` and the profile types; never on the TUI.

use super::ProfileError;
use super::file::{
    CacheTypeLabel, ComputeFile, Figure, FlopsValue, HeadsFile, MachineFile, ModelFile,
    ProvenanceLabel, RateValue, RawNumber, ScenarioFile, SizeValue,
};
use super::load::check_id;
use crate::core::model::{ArchFigures, PerLayer};
use crate::core::scenario::{Machine, Scenario};
use crate::core::units::{self, Provenance};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A machine figure the user changed (by tier or compute-rate index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineFigure {
    /// Capacity of tier i.
    Capacity(usize),
    /// Stated bandwidth of tier i.
    Bandwidth(usize),
    /// Measured bandwidth of tier i.
    Measured(usize),
    /// Compute rate i.
    ComputeRate(usize),
    /// Free memory the backend reports on tier i (`iogpu.wired_limit_mb` on a Mac).
    Free(usize),
}

/// The machine profile `file` saved as `id` named `name`, with the edited figures of
/// `machine` (source "edited in the explorer").
pub fn machine_profile(
    file: &MachineFile,
    id: &str,
    name: String,
    machine: &Machine,
    edited: &[MachineFigure],
) -> MachineFile {
    let mut mf = file.clone();
    let is = |f: MachineFigure| edited.contains(&f);
    let user = |source: &str| (ProvenanceLabel(Provenance::User), source.to_string());
    mf.id = id.to_string();
    mf.name = name;
    for (i, t) in machine.tiers.iter().enumerate() {
        let Some(tf) = mf.tiers.get_mut(i) else {
            continue;
        };
        if is(MachineFigure::Capacity(i)) {
            let (p, s) = user("edited in the explorer");
            tf.capacity = Figure {
                value: SizeValue {
                    value: t.capacity.value,
                    raw: RawNumber::Text(format!("{} bytes", t.capacity.value)),
                },
                provenance: p,
                source: s,
                date: None,
                method: None,
            };
        }
        if is(MachineFigure::Bandwidth(i)) {
            let (p, s) = user("edited in the explorer");
            tf.bandwidth = Figure {
                value: RateValue {
                    value: t.bandwidth.value,
                    raw: RawNumber::Text(units::fmt_bandwidth(t.bandwidth.value)),
                },
                provenance: p,
                source: s,
                date: None,
                method: None,
            };
            // The one edit path drops the measured figure with a new stated bandwidth.
            if t.measured_bandwidth.is_none() {
                tf.measured_bandwidth = None;
            }
        }
        if is(MachineFigure::Free(i))
            && let Some(d) = &t.device
        {
            tf.backend = Some(super::file::BackendLabel(d.backend));
            tf.free = Some(Figure {
                value: SizeValue {
                    value: d.free.value,
                    raw: RawNumber::Text(format!("{} bytes", d.free.value)),
                },
                provenance: ProvenanceLabel(d.free.provenance),
                source: d.free.source.clone(),
                date: None,
                method: None,
            });
        }
        if is(MachineFigure::Measured(i)) {
            tf.measured_bandwidth = t.measured_bandwidth.as_ref().map(|b| Figure {
                value: RateValue {
                    value: b.value,
                    raw: RawNumber::Text(units::fmt_bandwidth(b.value)),
                },
                // The figure keeps the provenance it had on screen: a bandwidth typed into
                // the "measured" field is the user's (it was never measured by a method).
                provenance: ProvenanceLabel(b.provenance),
                source: if b.provenance == Provenance::Measured {
                    "measured, edited in the explorer".into()
                } else {
                    "typed in the explorer into the measured field".into()
                },
                date: None,
                method: None,
            });
        }
    }
    for (i, c) in machine.compute.iter().enumerate() {
        if is(MachineFigure::ComputeRate(i))
            && let Some(cf) = mf.compute.get_mut(i)
        {
            let (p, s) = user("edited in the explorer");
            *cf = ComputeFile {
                path: c.path.clone(),
                tier: c.tier.clone(),
                rate: Figure {
                    value: FlopsValue {
                        value: c.rate.value,
                        raw: RawNumber::Text(units::fmt_flops(c.rate.value)),
                    },
                    provenance: p,
                    source: s,
                    date: None,
                    method: None,
                },
            };
        }
    }
    mf
}

/// The model profile `file` saved as `id` with the figures `f` (and a parameter count typed
/// by the user).
pub fn model_profile(
    file: &ModelFile,
    id: &str,
    f: &ArchFigures,
    parameters: Option<u64>,
) -> ModelFile {
    let mut m = file.clone();
    m.id = id.to_string();
    if !m.name.ends_with("(edited)") {
        m.name = format!("{} (edited)", m.name);
    }
    m.layers = f.layers;
    m.attention_heads = f.head_count.max();
    m.kv_heads = match &f.head_count_kv {
        PerLayer::Uniform(n) => HeadsFile::Uniform(*n),
        PerLayer::List(v) => HeadsFile::List(v.clone()),
    };
    if f.key_length.is_some() || f.value_length.is_some() {
        if f.key_length == f.value_length {
            m.head_dim = f.key_length;
            m.key_length = None;
            m.value_length = None;
        } else {
            m.head_dim = None;
            m.key_length = f.key_length;
            m.value_length = f.value_length;
        }
    }
    m.sliding_window = f.sliding_window;
    m.native_context = f.native_context;
    if let (Some(mm), Some(fm)) = (m.moe.as_mut(), f.moe) {
        mm.experts = fm.experts;
        mm.experts_used = fm.experts_used;
    }
    if let (Some(ml), Some(fl)) = (m.mla.as_mut(), f.mla) {
        ml.kv_lora_rank = fl.kv_lora_rank;
        ml.rope_dim = fl.rope_dim;
    }
    if let Some(p) = parameters {
        m.parameters = Some(Figure {
            value: p,
            provenance: ProvenanceLabel(Provenance::User),
            source: "typed in the explorer".into(),
            date: None,
            method: None,
        });
    }
    m
}

/// The scenario profile of `s`'s settings, saved as `id` from the profile `base`.
pub fn scenario_profile(
    base: &ScenarioFile,
    s: &Scenario,
    id: &str,
    artifact: &str,
    machine_id: &str,
    model_id: &str,
) -> ScenarioFile {
    ScenarioFile {
        id: id.to_string(),
        name: if base.id == id {
            base.name.clone()
        } else {
            format!("{} (saved from the explorer)", s.name)
        },
        model: model_id.to_string(),
        artifact: artifact.to_string(),
        machine: machine_id.to_string(),
        context: s.cache.context,
        sequences: s.cache.sequences,
        cache_type_k: CacheTypeLabel(s.cache.type_k),
        cache_type_v: CacheTypeLabel(s.cache.type_v),
        flash_attn: s.cache.flash_attn,
        ubatch: s.cache.ubatch,
        kv_unified: s.cache.kv_unified,
        swa_full: s.cache.swa_full,
        overhead: (s.other_bytes.value > 0).then_some(SizeValue {
            value: s.other_bytes.value,
            raw: RawNumber::Int(s.other_bytes.value as i64),
        }),
        gpu_layers: s.offload.gpu_layers,
        tensor_split: s.offload.tensor_split.clone(),
        no_kv_offload: s.offload.no_kv_offload,
        gpu_layers_all: s.offload.gpu_layers_all && s.offload.gpu_layers.is_none(),
        split_mode: (s.offload.split_mode != crate::core::placement::SplitMode::Layer)
            .then(|| crate::core::edit::split_mode_label(s.offload.split_mode).to_string()),
        main_gpu: (s.offload.main_gpu != 0).then_some(s.offload.main_gpu),
        override_tensor: s.offload.overrides.clone(),
        cpu_moe: s.offload.cpu_moe,
        n_cpu_moe: (s.offload.n_cpu_moe > 0).then_some(s.offload.n_cpu_moe),
        n_cpu_ffn: (s.offload.n_cpu_ffn > 0).then_some(s.offload.n_cpu_ffn),
        fit: (!s.offload.fit).then_some(false),
        fit_target_mib: s.offload.fit_margin_mib.clone(),
        fit_ctx: (s.offload.fit_min_ctx != crate::core::placement::DEFAULT_FIT_MIN_CTX)
            .then_some(s.offload.fit_min_ctx),
        prompt_rows: s.prompt_rows,
        compute_path: s.compute_path.clone(),
        extra_files: base.extra_files.clone(),
    }
}

/// The temp file a save writes before renaming it over `path`: `.NAME.toml.tmp-PID` (the
/// loader reads only names ending in `.toml`, so it never picks one up).
fn temp_name(path: &Path) -> String {
    format!(
        ".{}.tmp-{}",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("profile"),
        std::process::id()
    )
}

/// True when process `pid` still runs. Where `/proc` is not there to ask, a temp file is
/// taken as stale only when it is more than an hour old.
fn pid_alive(pid: u32, modified: Option<std::time::SystemTime>) -> bool {
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        return proc.join(pid.to_string()).exists();
    }
    modified
        .and_then(|m| m.elapsed().ok())
        .is_none_or(|age| age < std::time::Duration::from_secs(3600))
}

/// Remove the temp files (`.NAME.toml.tmp-PID`) that saves killed before their rename left in
/// `dir`, when their process is gone. Returns how many were removed.
pub fn clean_stale_temps(dir: &Path) -> usize {
    let Ok(rd) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = name
            .strip_prefix('.')
            .and_then(|n| n.rsplit_once(".toml.tmp-"))
            .and_then(|(_, pid)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let meta = e.metadata().ok();
        if !meta.as_ref().is_some_and(|m| m.is_file()) {
            continue;
        }
        if pid != std::process::id()
            && !pid_alive(pid, meta.and_then(|m| m.modified().ok()))
            && fs::remove_file(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Write a file atomically: a temp file in the same directory, fsync, rename. The temp file
/// is removed when any step fails, and stale ones of killed saves are cleaned first.
pub fn write_atomic(path: &Path, contents: &str) -> Result<(), ProfileError> {
    let io = |e: std::io::Error| ProfileError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    check_folder(dir)?;
    fs::create_dir_all(dir).map_err(io)?;
    clean_stale_temps(dir);
    let tmp = dir.join(temp_name(path));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(contents.as_bytes())?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(e)
    })
}

/// A folder profiles are saved in must be a folder (or not exist yet): a file of that name
/// is named in the error instead of `File exists (os error 17)`.
fn check_folder(dir: &Path) -> Result<(), ProfileError> {
    for d in dir.ancestors() {
        match fs::metadata(d) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(ProfileError::Io {
                    path: d.display().to_string(),
                    message: "is not a folder (profiles are saved in a folder of this name); move it away".into(),
                });
            }
            Err(_) => continue,
        }
    }
    Ok(())
}

/// Check, before any work is done, that a profile can be saved as `<dir>/<kind>/<id>.toml`:
/// the id is valid, the folder is a folder, and no profile of that id exists unless
/// `overwrite`. Returns the path it would be saved at.
pub fn check_save(
    dir: &Path,
    kind: &str,
    id: &str,
    overwrite: bool,
) -> Result<PathBuf, ProfileError> {
    check_id("--save", "", id, None)?;
    let folder = dir.join(kind);
    check_folder(&folder)?;
    let path = folder.join(format!("{id}.toml"));
    if path.exists() && !overwrite {
        return Err(ProfileError::Exists {
            path: path.display().to_string(),
        });
    }
    Ok(path)
}

/// Save a profile as `<dir>/<kind>/<id>.toml`, atomically; refuse to overwrite unless asked.
pub fn save<T: serde::Serialize>(
    dir: &Path,
    kind: &str,
    id: &str,
    value: &T,
    header: &str,
    overwrite: bool,
) -> Result<PathBuf, ProfileError> {
    let path = check_save(dir, kind, id, overwrite)?;
    let body = toml::to_string_pretty(value).map_err(|e| ProfileError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    write_atomic(&path, &format!("{header}{body}"))?;
    Ok(path)
}
