//! Tab completion of a path typed in a prompt (GGUF files, llama-bench results). Reads the
//! folder named; never draws.

/// Complete a GGUF path: the common prefix of the matching files and folders, and a note
/// listing them when there are several (or saying none matches).
pub fn complete_path(text: &str) -> (String, Option<String>) {
    let (t, names) = complete_path_in(text, &[".gguf"]);
    let note = match names.len() {
        0 if std::fs::read_dir(path_dir(text)).is_err() => {
            Some(format!("no folder \"{}\"", path_dir(text)))
        }
        0 => Some("no GGUF file or folder matches".into()),
        1 => None,
        n => {
            let shown: Vec<&str> = names.iter().take(8).map(|s| s.as_str()).collect();
            let more = if n > 8 {
                format!(" … {} more", n - 8)
            } else {
                String::new()
            };
            Some(format!("{}{more}", shown.join("  ")))
        }
    };
    (t, note)
}

fn path_dir(text: &str) -> &str {
    match text.rfind('/') {
        Some(i) => &text[..=i],
        None => ".",
    }
}

/// Complete a path to the common prefix of the files ending in one of `exts` and folders
/// that start with it; returns the new text and the names that matched.
pub fn complete_path_in(text: &str, exts: &[&str]) -> (String, Vec<String>) {
    let (dir, prefix) = match text.rfind('/') {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => ("", text),
    };
    let read_from = if dir.is_empty() { "." } else { dir };
    let Ok(entries) = std::fs::read_dir(read_from) else {
        return (text.to_string(), Vec::new());
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            (name.starts_with(prefix)
                && (is_dir || exts.iter().any(|x| name.ends_with(x)))
                && !name.starts_with('.'))
            .then(|| if is_dir { format!("{name}/") } else { name })
        })
        .collect();
    names.sort();
    match names.as_slice() {
        [] => (text.to_string(), Vec::new()),
        [one] => (format!("{dir}{one}"), names),
        many => {
            let mut common = many[0].clone();
            for n in many {
                while !n.starts_with(&common) {
                    common.pop();
                }
            }
            (format!("{dir}{common}"), names)
        }
    }
}
