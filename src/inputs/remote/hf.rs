//! Hugging Face Hub names: the endpoint (`HF_ENDPOINT`), the token (`HF_TOKEN` or the token
//! file), `resolve/` URLs, the repository file listing, and picking the GGUF of a quant from
//! it as llama.cpp's `-hf owner/repo:QUANT` does.
//! Hand-written rather than `hf-hub`: that crate downloads whole files into its cache, and we
//! need only a listing and range reads of a header.

use super::RemoteError;
use super::http::Client;
use std::path::PathBuf;

/// The Hub used when `HF_ENDPOINT` is not set.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// The Hub endpoint: `HF_ENDPOINT` or huggingface.co, without a trailing slash.
pub fn endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string())
}

/// `HF_HOME`, else `~/.cache/huggingface` (as huggingface_hub).
pub fn hf_home() -> Option<PathBuf> {
    use crate::infile::{env_dir, home};
    env_dir("HF_HOME")
        .or_else(|| env_dir("XDG_CACHE_HOME").map(|x| x.join("huggingface")))
        .or_else(|| home().map(|h| h.join(".cache").join("huggingface")))
}

/// The token and where it came from: `HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, the file named by
/// `HF_TOKEN_PATH`, else `$HF_HOME/token` (`~/.cache/huggingface/token`).
pub fn token() -> Option<(String, String)> {
    for var in ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"] {
        if let Ok(t) = std::env::var(var) {
            let t = t.trim().to_string();
            if !t.is_empty() {
                return Some((t, var.to_string()));
            }
        }
    }
    let file =
        crate::infile::env_dir("HF_TOKEN_PATH").or_else(|| hf_home().map(|h| h.join("token")))?;
    // A token file is a line; a FIFO or a huge file there is not one and is not waited on.
    let t = crate::infile::read_bytes(&file, 64 * 1024, "a token file").ok()?;
    // Not UTF-8 is kept as it is read (lossily), so the client refuses it with a message
    // rather than sending no token at all.
    let t = String::from_utf8_lossy(&t);
    let t = t.trim().to_string();
    (!t.is_empty()).then(|| (t, file.display().to_string()))
}

/// A client that sends the token to the Hub's host only.
pub fn client() -> Client {
    let ep = endpoint();
    Client::new(token(), super::http::host_of(&ep).map(str::to_string))
}

fn encode_segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn encode_path(p: &str) -> String {
    p.split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

/// `{endpoint}/{repo}/resolve/{revision}/{path}`.
pub fn resolve_url(repo: &str, revision: &str, path: &str) -> String {
    format!(
        "{}/{repo}/resolve/{}/{}",
        endpoint(),
        encode_segment(revision),
        encode_path(path)
    )
}

/// One file of a repository listing.
#[derive(Debug, Clone, PartialEq)]
pub struct RepoFile {
    /// Path in the repository.
    pub path: String,
    /// Size in bytes when the listing gives it.
    pub size: Option<u64>,
}

/// Pages of a paginated listing read at most (the Hub sends 1,000 entries a page).
pub const MAX_LISTING_PAGES: usize = 100;

/// Every entry of a listing must be a path inside the repository: one that is not (`..`,
/// an absolute path) could make a quant name read another repository's file with the token.
fn confine(files: Vec<RepoFile>, url: &str) -> Result<Vec<RepoFile>, RemoteError> {
    for f in &files {
        if let Err(why) = super::confined(&f.path) {
            return Err(RemoteError::Listing {
                url: url.to_string(),
                detail: format!(
                    "the listing names {:?}, which is not a path inside the repository ({why}): refused",
                    crate::sanitize::text(&f.path.chars().take(200).collect::<String>())
                ),
            });
        }
    }
    Ok(files)
}

/// One entry of a `tree` listing (directories are skipped).
fn tree_file(i: &serde_json::Value) -> Option<RepoFile> {
    if i.get("type").and_then(|t| t.as_str()) == Some("directory") {
        return None;
    }
    Some(RepoFile {
        path: i.get("path")?.as_str()?.to_string(),
        size: i
            .get("lfs")
            .and_then(|l| l.get("size"))
            .or_else(|| i.get("size"))
            .and_then(|s| s.as_u64()),
    })
}

/// List a repository's files: `GET {endpoint}/api/models/{repo}/tree/{rev}?recursive=true`,
/// following the `Link: <…>; rel="next"` pages the Hub sends for long listings (at most
/// `MAX_LISTING_PAGES`), else the `siblings` of `GET {endpoint}/api/models/{repo}/revision/{rev}`.
pub fn list(client: &Client, repo: &str, revision: &str) -> Result<Vec<RepoFile>, RemoteError> {
    let ep = endpoint();
    let tree = format!(
        "{ep}/api/models/{repo}/tree/{}?recursive=true",
        encode_segment(revision)
    );
    let mut budget = MAX_LISTING_BYTES;
    let first = get_json_page(client, &tree, &mut budget);
    if let Ok((serde_json::Value::Array(items), next)) = &first {
        let mut files: Vec<RepoFile> = items.iter().filter_map(tree_file).collect();
        let mut next = next.clone();
        let mut seen = std::collections::HashSet::from([tree.clone()]);
        let mut pages = 1;
        while let Some(url) = next.take() {
            if !seen.insert(url.clone()) {
                return Err(RemoteError::Listing {
                    url,
                    detail: "the listing's next-page link points back to a page already read"
                        .into(),
                });
            }
            if pages >= MAX_LISTING_PAGES {
                return Err(RemoteError::Listing {
                    url: tree,
                    detail: format!(
                        "the listing goes on past {MAX_LISTING_PAGES} pages; name the file with hf://{repo}/PATH instead"
                    ),
                });
            }
            let (v, n) = get_json_page(client, &url, &mut budget)?;
            let serde_json::Value::Array(items) = v else {
                return Err(RemoteError::Listing {
                    url,
                    detail: "a page of the listing is not a JSON array".into(),
                });
            };
            files.extend(items.iter().filter_map(tree_file));
            next = n;
            pages += 1;
        }
        return confine(files, &tree);
    }
    // Only a listing the server does not have (404, or a reply in another shape) falls back
    // to the model info; a refusal, a rate limit, an oversize listing or a network failure is
    // said as it is, not hidden behind the fallback's own 404.
    match first {
        Err(e @ RemoteError::Status { code, .. }) if code != 404 => return Err(e),
        Err(RemoteError::Status { .. }) | Ok(_) => {}
        Err(e) => return Err(e),
    }
    let info = if revision == "main" {
        format!("{ep}/api/models/{repo}")
    } else {
        format!(
            "{ep}/api/models/{repo}/revision/{}",
            encode_segment(revision)
        )
    };
    let (v, _) = get_json_page(client, &info, &mut budget)?;
    let sib = v
        .get("siblings")
        .and_then(|s| s.as_array())
        .ok_or_else(|| RemoteError::Listing {
            url: info.clone(),
            detail: "no \"siblings\" list in the reply".into(),
        })?;
    confine(
        sib.iter()
            .filter_map(|s| {
                Some(RepoFile {
                    path: s.get("rfilename")?.as_str()?.to_string(),
                    size: s.get("size").and_then(|x| x.as_u64()),
                })
            })
            .collect(),
        &info,
    )
}

/// Listing bytes read at most over all pages (a Hub listing of thousands of files is ~1 MB).
const MAX_LISTING_BYTES: u64 = 32 * 1024 * 1024;

/// GET one page of JSON (at most `budget` bytes, which it lowers) and its next-page link.
fn get_json_page(
    client: &Client,
    url: &str,
    budget: &mut u64,
) -> Result<(serde_json::Value, Option<String>), RemoteError> {
    use std::io::Read;
    let reply = client.get(url, None)?;
    let next = reply.next_link.clone();
    let mut body = Vec::new();
    reply
        .body
        .take(*budget + 1)
        .read_to_end(&mut body)
        .map_err(|e| RemoteError::Transport {
            url: url.to_string(),
            message: e.to_string(),
        })?;
    client
        .stats
        .bytes
        .fetch_add(body.len() as u64, std::sync::atomic::Ordering::Relaxed);
    if body.len() as u64 > *budget {
        return Err(RemoteError::Listing {
            url: url.to_string(),
            detail: format!(
                "the listing is larger than {MAX_LISTING_BYTES} bytes (the limit of a repository listing): name the file with hf://OWNER/REPO/PATH instead"
            ),
        });
    }
    *budget -= body.len() as u64;
    let v = serde_json::from_slice(&body).map_err(|e| RemoteError::Listing {
        url: url.to_string(),
        detail: format!("not the JSON the Hub sends ({e})"),
    })?;
    Ok((v, next))
}

/// The quant a GGUF file name carries (`Qwen3-32B-UD-Q4_K_XL-00001-of-00002.gguf` →
/// `UD-Q4_K_XL`), upper-case, when it carries one.
pub fn quant_of(file_name: &str) -> Option<String> {
    let base = file_name.rsplit('/').next().unwrap_or(file_name);
    let stem = base.strip_suffix(".gguf").unwrap_or(base);
    let stem = match crate::gguf::split::parse_split_name(base) {
        Some((prefix, _, _)) => prefix,
        None => stem,
    };
    let up = stem.to_ascii_uppercase();
    let bytes = up.as_bytes();
    // The last token starting after '-', '.' or '_' that looks like a ggml quant name.
    let mut best = None;
    for i in 0..bytes.len() {
        if i > 0 && !matches!(bytes[i - 1], b'-' | b'.' | b'_') {
            continue;
        }
        let rest = &up[i..];
        let looks = {
            let r = rest.strip_prefix('I').unwrap_or(rest);
            let r2 = r.strip_prefix("TQ").or_else(|| r.strip_prefix('Q'));
            r2.is_some_and(|x| x.as_bytes().first().is_some_and(u8::is_ascii_digit))
        } || ["F16", "BF16", "F32", "MXFP4"]
            .iter()
            .any(|q| rest.starts_with(q));
        if looks {
            // The quant runs to the end of the stem, or to the next '-' or '.'.
            let end = rest.find(['-', '.']).unwrap_or(rest.len());
            let q = &rest[..end];
            let with_ud = if up[..i].ends_with("UD-") {
                format!("UD-{q}")
            } else {
                q.to_string()
            };
            best = Some(with_ud);
        }
    }
    best
}

/// Files of a listing that are GGUF models (not projectors), grouped so that the shards of a
/// split model are one entry (its first shard).
pub fn model_files(files: &[RepoFile]) -> Vec<&RepoFile> {
    files
        .iter()
        .filter(|f| f.path.to_ascii_lowercase().ends_with(".gguf"))
        .filter(|f| !super::is_projector_name(&f.path))
        .filter(|f| {
            let name = f.path.rsplit('/').next().unwrap_or(&f.path);
            crate::gguf::split::parse_split_name(name).is_none_or(|(_, no, _)| no == 1)
        })
        .collect()
}

/// The GGUF of `quant` in a listing (case-insensitive; `Q4_K` does not match `Q4_K_M`), with a
/// one-line error listing the quants there are when none or several match.
pub fn pick_quant<'a>(
    repo: &str,
    files: &'a [RepoFile],
    quant: &str,
) -> Result<&'a RepoFile, RemoteError> {
    let models = model_files(files);
    let want = quant.to_ascii_uppercase();
    let exact: Vec<&RepoFile> = models
        .iter()
        .copied()
        .filter(|f| quant_of(&f.path).is_some_and(|q| q == want))
        .collect();
    let hits = if exact.is_empty() {
        // `Q4_K_XL` also names `UD-Q4_K_XL` when nothing else carries it.
        models
            .iter()
            .copied()
            .filter(|f| {
                quant_of(&f.path).is_some_and(|q| q.strip_prefix("UD-").is_some_and(|r| r == want))
            })
            .collect()
    } else {
        exact
    };
    match hits.as_slice() {
        [one] => Ok(one),
        [] => {
            let mut quants: Vec<String> = models.iter().filter_map(|f| quant_of(&f.path)).collect();
            quants.sort();
            quants.dedup();
            Err(RemoteError::NoQuant {
                repo: repo.to_string(),
                quant: quant.to_string(),
                available: quants,
                gguf_files: models.len(),
            })
        }
        many => Err(RemoteError::ManyQuant {
            repo: repo.to_string(),
            quant: quant.to_string(),
            files: many.iter().map(|f| f.path.clone()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(p: &str) -> RepoFile {
        RepoFile {
            path: p.into(),
            size: None,
        }
    }

    #[test]
    fn quant_names() {
        assert_eq!(quant_of("Qwen3-32B-Q4_K_M.gguf").as_deref(), Some("Q4_K_M"));
        assert_eq!(
            quant_of("Qwen3-32B-UD-Q4_K_XL-00001-of-00002.gguf").as_deref(),
            Some("UD-Q4_K_XL")
        );
        assert_eq!(
            quant_of("gemma-3-270m-it-q4_k_m.gguf").as_deref(),
            Some("Q4_K_M")
        );
        assert_eq!(quant_of("model.IQ2_XXS.gguf").as_deref(), Some("IQ2_XXS"));
        assert_eq!(quant_of("gpt-oss-20b-MXFP4.gguf").as_deref(), Some("MXFP4"));
        assert_eq!(quant_of("Llama-3-8B-BF16.gguf").as_deref(), Some("BF16"));
        assert_eq!(quant_of("readme.gguf"), None);
    }

    #[test]
    fn picking() {
        let files = vec![
            f("Qwen3-32B-Q4_K_M.gguf"),
            f("Qwen3-32B-Q4_K_S.gguf"),
            f("Qwen3-32B-UD-Q4_K_XL.gguf"),
            f("BF16/Qwen3-32B-BF16-00001-of-00002.gguf"),
            f("BF16/Qwen3-32B-BF16-00002-of-00002.gguf"),
            f("mmproj-F16.gguf"),
            f("README.md"),
        ];
        assert_eq!(
            pick_quant("o/r", &files, "q4_k_m").unwrap().path,
            "Qwen3-32B-Q4_K_M.gguf"
        );
        assert_eq!(
            pick_quant("o/r", &files, "Q4_K_XL").unwrap().path,
            "Qwen3-32B-UD-Q4_K_XL.gguf"
        );
        assert_eq!(
            pick_quant("o/r", &files, "BF16").unwrap().path,
            "BF16/Qwen3-32B-BF16-00001-of-00002.gguf"
        );
        let e = pick_quant("o/r", &files, "Q8_0").unwrap_err().to_string();
        assert!(e.contains("BF16, Q4_K_M, Q4_K_S, UD-Q4_K_XL"), "{e}");
        assert!(pick_quant("o/r", &files, "Q4_K").is_err());
    }
}
