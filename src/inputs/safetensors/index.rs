//! A model folder: `config.json` plus one `model.safetensors` or the shards a
//! `model.safetensors.index.json` names (else every `model*.safetensors`, as MLX-LM's
//! `load_model` globs them). W is the sum of the shard files' sizes.

use super::SafetensorsError;
use super::config::MlxConfig;
use super::reader::{Header, read_header};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Largest `model.safetensors.index.json` read: 64 MiB (a 100,000-tensor map is ~10 MB).
pub const INDEX_CAP_BYTES: u64 = 64 << 20;

/// Most shard files a set may name (a 1 TB model in 5 GB shards has 200).
pub const MAX_SHARDS: usize = 10_000;

/// One safetensors file of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardFile {
    /// Path.
    pub path: PathBuf,
    /// Its header.
    pub header: Header,
}

/// A model read from its folder: config and every shard's header.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The folder (or the file's folder).
    pub dir: PathBuf,
    /// `config.json`, when present.
    pub config: Option<MlxConfig>,
    /// The shards in order.
    pub shards: Vec<ShardFile>,
    /// Notes on what was unusual (an index naming a tensor a shard lacks, gaps).
    pub warnings: Vec<String>,
}

impl Model {
    /// W: Σ shard file sizes, bytes.
    pub fn file_bytes(&self) -> u64 {
        self.shards.iter().map(|s| s.header.file_len).sum()
    }
    /// Every tensor with its shard index.
    pub fn tensors(&self) -> impl Iterator<Item = (usize, &super::TensorEntry)> {
        self.shards
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.header.tensors.iter().map(move |t| (i, t)))
    }
}

/// Read one safetensors file's header.
pub fn open_file(path: &Path) -> Result<ShardFile, SafetensorsError> {
    let mut f = crate::infile::open_regular(path)
        .map_err(|e| SafetensorsError::io(path, "cannot open", e))?;
    let len = f
        .metadata()
        .map_err(|e| SafetensorsError::io(path, "cannot read its size", e))?
        .len();
    let mut r = std::io::BufReader::new(&mut f);
    let header = read_header(&mut r, len, path)?;
    Ok(ShardFile {
        path: path.to_path_buf(),
        header,
    })
}

fn shard_names_from_index(
    index: &Path,
) -> Result<(Vec<String>, BTreeMap<String, String>), SafetensorsError> {
    let text = crate::infile::read_text(index, INDEX_CAP_BYTES, "safetensors index")
        .map_err(|e| SafetensorsError::io(index, "reading the index", e))?;
    shard_names_from_index_text(&text, index)
}

/// The shard files (sorted, each once) and the tensor → file map of the text of a
/// `model.safetensors.index.json` (`index` names it in errors). A shard name with a separator
/// or `..` is refused: shards sit beside the index.
pub fn shard_names_from_index_text(
    text: &str,
    index: &Path,
) -> Result<(Vec<String>, BTreeMap<String, String>), SafetensorsError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        SafetensorsError::file(
            index,
            format!("not valid JSON at line {} column {}", e.line(), e.column()),
        )
    })?;
    let map = v
        .get("weight_map")
        .and_then(|m| m.as_object())
        .ok_or_else(|| SafetensorsError::file(index, "no \"weight_map\" object"))?;
    let mut files = Vec::new();
    let mut seen = BTreeSet::new();
    let mut names = BTreeMap::new();
    for (tensor, file) in map {
        let file = file.as_str().ok_or_else(|| {
            SafetensorsError::file(
                index,
                format!(
                    "weight_map entry \"{}\" is not a file name",
                    super::reader::cut(tensor)
                ),
            )
        })?;
        // Shards sit beside the index: a name with a separator or `..` is refused.
        if file.contains('/') || file.contains('\\') || file == ".." || file.is_empty() {
            return Err(SafetensorsError::file(
                index,
                format!(
                    "weight_map names \"{}\", not a file beside the index",
                    super::reader::cut(file)
                ),
            ));
        }
        if seen.insert(file.to_string()) {
            files.push(file.to_string());
            if files.len() > MAX_SHARDS {
                return Err(SafetensorsError::file(
                    index,
                    format!("more than {MAX_SHARDS} shard files"),
                ));
            }
        }
        names.insert(tensor.clone(), file.to_string());
    }
    files.sort();
    Ok((files, names))
}

/// Open a model folder, or a single `.safetensors` file (its folder's `config.json` is read).
pub fn open_dir(path: &Path) -> Result<Model, SafetensorsError> {
    let meta = std::fs::metadata(path).map_err(|e| SafetensorsError::io(path, "cannot open", e))?;
    let (dir, single) = if meta.is_dir() {
        (path.to_path_buf(), None)
    } else {
        (
            path.parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            Some(path.to_path_buf()),
        )
    };
    let cfg_path = dir.join("config.json");
    let config = if cfg_path.exists() {
        Some(MlxConfig::read(&cfg_path)?)
    } else {
        None
    };
    let index = dir.join("model.safetensors.index.json");
    let mut expected: Option<BTreeMap<String, String>> = None;
    let files: Vec<PathBuf> = if let Some(f) = single {
        vec![f]
    } else if index.exists() {
        let (files, names) = shard_names_from_index(&index)?;
        expected = Some(names);
        files.into_iter().map(|f| dir.join(f)).collect()
    } else {
        let rd =
            std::fs::read_dir(&dir).map_err(|e| SafetensorsError::io(&dir, "cannot list", e))?;
        let mut v: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("model") && n.ends_with(".safetensors"))
            })
            .take(MAX_SHARDS + 1)
            .collect();
        if v.len() > MAX_SHARDS {
            return Err(SafetensorsError::file(
                &dir,
                format!("more than {MAX_SHARDS} shard files"),
            ));
        }
        v.sort();
        v
    };
    if files.is_empty() {
        return Err(SafetensorsError::file(
            &dir,
            "no model*.safetensors file and no model.safetensors.index.json: not an MLX or safetensors model folder",
        ));
    }
    let mut shards = Vec::with_capacity(files.len());
    for f in &files {
        shards.push(open_file(f)?);
    }
    assemble(dir, config, expected.map(|n| (index, n)), shards)
}

/// A model from headers already read (a local folder's or a remote repository's): the index's
/// tensor → file map, when there is one, is checked against the shards (a tensor it names in a
/// shard that lacks it is an error; one in another shard, or one it does not name, a warning),
/// and data sections no tensor covers are noted.
pub fn assemble(
    dir: PathBuf,
    config: Option<MlxConfig>,
    expected: Option<(PathBuf, BTreeMap<String, String>)>,
    shards: Vec<ShardFile>,
) -> Result<Model, SafetensorsError> {
    let mut warnings = Vec::new();
    if let Some((index, names)) = expected {
        let mut have: BTreeMap<&str, &str> = BTreeMap::new();
        for s in &shards {
            let file = s
                .path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            for t in &s.header.tensors {
                have.insert(t.name.as_str(), file);
            }
        }
        for (tensor, file) in &names {
            match have.get(tensor.as_str()) {
                Some(f) if f == file => {}
                Some(f) => warnings.push(format!(
                    "the index puts \"{}\" in \"{file}\" but it is in \"{f}\"",
                    super::reader::cut(tensor)
                )),
                None => {
                    return Err(SafetensorsError::file(
                        &index,
                        format!(
                            "names tensor \"{}\" in \"{file}\", which does not hold it",
                            super::reader::cut(tensor)
                        ),
                    ));
                }
            }
        }
        let extra = have.len().saturating_sub(names.len());
        if extra > 0 {
            warnings.push(format!(
                "{extra} tensors in the shards are not in the index"
            ));
        }
    }
    for s in &shards {
        if s.header.gap_bytes > 0 {
            warnings.push(format!(
                "\"{}\": {} bytes of its data section belong to no tensor",
                crate::sanitize::path(&s.path),
                s.header.gap_bytes
            ));
        }
    }
    Ok(Model {
        dir,
        config,
        shards,
        warnings,
    })
}
