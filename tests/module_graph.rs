//! The module import graph: `core` depends on no other module of the crate (and on no I/O,
//! terminal or serialisation crate); the modules import each other without a loop and only
//! along the layers (core → inputs → workspace → outputs → front ends, lib.rs); every module's
//! header says exactly which modules it imports (`//! Depends on: …`); and only `core::edit`
//! changes a scenario. Read from the sources: every `crate::NAME` path in `src/`, per module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source without comments and string literals (a path in a doc comment or a message
/// is not an import).
fn code_only(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let b: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if b[i] == '/' && b.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == '\'' && b.get(i + 2) == Some(&'\'') {
            // A char literal such as '"'.
            i += 3;
        } else if b[i] == '\'' && b.get(i + 1) == Some(&'\\') {
            while i < b.len() && !(b[i] == '\'' && b[i - 1] != '\\' && b[i - 2] != '\'') {
                i += 1;
                if i < b.len() && b[i] == '\'' {
                    break;
                }
            }
            i += 1;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

fn ident_at(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The layers, in order: a module may import modules of its own layer (without a loop) and of
/// the layers before it, never of a later one (lib.rs explains each).
const LAYERS: &[&str] = &["core", "inputs", "workspace", "outputs", "frontends"];

/// The folders that group modules by layer (`src/inputs/gguf.rs` is the module `gguf`).
const GROUPS: &[&str] = &["inputs", "workspace", "outputs", "frontends"];

/// The module a file belongs to: `core`, `workspace` (its own files), or the grouped module's
/// name (`gguf`, `report`, `tui` …); `None` for lib.rs, main.rs and the layer files.
fn module_of(rel: &Path) -> Option<String> {
    let parts: Vec<String> = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    let first = parts[0].as_str();
    match first {
        "main" | "lib" => None,
        _ if GROUPS.contains(&first) && parts.len() == 1 => {
            // A layer file (src/inputs.rs); src/workspace.rs is the workspace itself.
            (first == "workspace").then(|| "workspace".to_string())
        }
        _ if GROUPS.contains(&first) => {
            let name = parts[1].clone();
            if first == "workspace" && !WORKSPACE_GROUPED.contains(&name.as_str()) {
                Some("workspace".to_string())
            } else {
                Some(name)
            }
        }
        _ => Some(first.to_string()),
    }
}

/// The modules grouped under the workspace's folder that are modules of their own (the rest of
/// src/workspace/ is the workspace itself).
const WORKSPACE_GROUPED: &[&str] = &["build", "compare", "library"];

/// The layer of each module, read from the folders.
fn layers() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        if let Some(m) = module_of(rel) {
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string();
            out.insert(m, first);
        }
    }
    out
}

/// The module a path names after `crate::` (`crate::inputs::gguf::x` and the re-export
/// `crate::gguf::x` both name `gguf`).
fn named(after: &str) -> String {
    let first = ident_at(after);
    if GROUPS.contains(&first.as_str())
        && let Some(rest) = after[first.len()..].strip_prefix("::")
    {
        let second = ident_at(rest);
        if first != "workspace" || WORKSPACE_GROUPED.contains(&second.as_str()) {
            return second;
        }
    }
    first
}

/// Module → the modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let Some(top) = module_of(rel) else {
            continue;
        };
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        let deps = g.entry(top.clone()).or_default();
        let mut rest = code.as_str();
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                // `use crate::{a::x, b};`
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    let name = named(part.trim());
                    if !name.is_empty() && name != top {
                        deps.insert(name);
                    }
                }
            } else {
                let name = named(after);
                if !name.is_empty() && name != top {
                    deps.insert(name);
                }
            }
            rest = after;
        }
    }
    g
}

fn reaches(g: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(x) = stack.pop() {
        if x == to {
            return true;
        }
        if seen.insert(x.clone())
            && let Some(next) = g.get(&x)
        {
            stack.extend(next.iter().cloned());
        }
    }
    false
}

#[test]
fn core_imports_no_other_module() {
    let g = graph();
    let core = g.get("core").expect("a core module");
    assert!(core.is_empty(), "core imports {core:?}");
    // Nor any I/O, terminal or serialisation crate.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join("core.rs")];
    rust_files(&src.join("core"), &mut files);
    for f in files {
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        for banned in ["std::fs", "ratatui", "crossterm", "serde_json", "std::net"] {
            assert!(!code.contains(banned), "{} uses {banned}", f.display());
        }
    }
}

#[test]
fn top_level_modules_import_each_other_without_a_loop() {
    let g = graph();
    assert!(g.len() > 5, "read too few modules: {g:?}");
    // The modules on a loop, grouped: those that reach each other.
    let mut loops: Vec<BTreeSet<String>> = Vec::new();
    for a in g.keys() {
        if loops.iter().any(|l| l.contains(a)) {
            continue;
        }
        let group: BTreeSet<String> = (g.keys())
            .filter(|b| *b == a || (reaches(&g, a, b) && reaches(&g, b, a)))
            .cloned()
            .collect();
        if group.len() > 1 {
            loops.push(group);
        }
    }
    assert!(
        loops.is_empty(),
        "import loops between top-level modules: {loops:?}\n(graph: {g:#?})"
    );
}

#[test]
fn the_graph_reader_sees_imports() {
    // A check that can fail: the reader finds the imports this crate is known to have.
    let g = graph();
    assert!(g["cli"].contains("core") && g["cli"].contains("tui"));
    assert!(g["tui"].contains("core"));
    assert!(
        !g["report"].contains("tui"),
        "reports never depend on the explorer"
    );
}

/// Where a scenario changes: only `core::edit` (the one edit function) assigns a scenario's
/// fields; every other module builds `Edit`s and hands them to the workspace (or to
/// `edit::applied` for a what-if copy). Read from the sources: an assignment, compound
/// assignment or in-place change (`push`, `extend`, `retain`, `clear`, `insert`) of a
/// scenario field through a scenario-named binding.
fn scenario_changes(skip_edit: bool) -> Vec<String> {
    const RECEIVERS: &[&str] = &["scenario", "s", "sc", "base", "next", "probe", "fresh"];
    const FIELDS: &[&str] = &[
        "name",
        "model",
        "weights",
        "inventory",
        "machine",
        "cache",
        "offload",
        "other_bytes",
        "prompt_rows",
        "compute_path",
        "feed_forward",
    ];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        if skip_edit && rel == "core/edit.rs" {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        // Test modules may build scenarios by hand.
        let code = code.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            let bytes = line.as_bytes();
            for r in RECEIVERS {
                let mut from = 0;
                while let Some(i) = line[from..].find(&format!("{r}.")).map(|i| i + from) {
                    from = i + r.len() + 1;
                    let before = line[..i].chars().last();
                    if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                        continue;
                    }
                    let field = ident_at(&line[from..]);
                    if !FIELDS.contains(&field.as_str()) {
                        continue;
                    }
                    // The rest of the place expression: `.x`, `[i]`, then the operation.
                    let mut j = from + field.len();
                    loop {
                        if bytes.get(j) == Some(&b'.')
                            && bytes.get(j + 1).is_some_and(|c| c.is_ascii_alphabetic())
                        {
                            let id = ident_at(&line[j + 1..]);
                            if line[j + 1 + id.len()..].starts_with('(') {
                                let changes =
                                    ["push", "extend", "retain", "clear", "insert", "truncate"];
                                if changes.contains(&id.as_str()) {
                                    found.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
                                }
                                break;
                            }
                            j += 1 + id.len();
                        } else if bytes.get(j) == Some(&b'[') {
                            match line[j..].find(']') {
                                Some(k) => j += k + 1,
                                None => break,
                            }
                        } else {
                            break;
                        }
                    }
                    let rest = line[j..].trim_start();
                    let assigns = (rest.starts_with('=')
                        && !rest.starts_with("==")
                        && !rest.starts_with("=>"))
                        || ["+=", "-=", "*=", "/=", "|="]
                            .iter()
                            .any(|op| rest.starts_with(op));
                    if assigns {
                        found.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn only_the_edit_function_changes_a_scenario() {
    let found = scenario_changes(true);
    assert!(
        found.is_empty(),
        "scenario fields changed outside core::edit (make an Edit and give it to the workspace):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scenario_change_scan_sees_a_change() {
    // A check that can fail: the scan finds the changes the edit function itself makes.
    let all = scenario_changes(false);
    let in_edit: Vec<&String> = all
        .iter()
        .filter(|l| l.starts_with("src/core/edit.rs"))
        .collect();
    assert!(
        in_edit.iter().any(|l| l.contains("s.weights = "))
            && in_edit.iter().any(|l| l.contains("s.name = "))
            && in_edit
                .iter()
                .any(|l| l.contains("c.context") || l.contains("s.offload")),
        "{all:#?}"
    );
}

#[test]
fn every_module_imports_only_its_own_layer_and_those_before() {
    let g = graph();
    let layer = layers();
    let rank = |m: &str| {
        let l = layer
            .get(m)
            .unwrap_or_else(|| panic!("no layer for module {m}"));
        LAYERS.iter().position(|x| x == l).unwrap()
    };
    let mut wrong = Vec::new();
    for (m, deps) in &g {
        for d in deps {
            if !layer.contains_key(d) {
                continue; // a layer name itself (crate::inputs) or a macro path
            }
            if rank(d) > rank(m) {
                wrong.push(format!("{m} ({}) imports {d} ({})", layer[m], layer[d]));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers {LAYERS:?}:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn the_layer_check_sees_a_layer() {
    // A check that can fail: the reader puts the known modules in their layers.
    let layer = layers();
    assert_eq!(layer["gguf"], "inputs");
    assert_eq!(layer["report"], "outputs");
    assert_eq!(layer["tui"], "frontends");
    assert_eq!(layer["build"], "workspace");
    assert_eq!(layer["workspace"], "workspace");
    assert_eq!(layer["core"], "core");
}

/// The modules a module's header says it depends on: the `//!` line that starts
/// `Depends on:`, a comma-separated list of module names (or `nothing`), ending in a period.
fn stated(header: &str) -> Option<BTreeSet<String>> {
    let line = header
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| l.trim_start_matches("//!").trim())
        .find(|l| l.starts_with("Depends on:"))?;
    let list = line["Depends on:".len()..].trim().trim_end_matches('.');
    if list == "nothing" {
        return Some(BTreeSet::new());
    }
    Some(
        list.split(',')
            .map(|x| x.trim().trim_matches('`').to_string())
            .filter(|x| !x.is_empty())
            .collect(),
    )
}

#[test]
fn every_module_header_states_what_it_imports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph();
    let layer = layers();
    let mut wrong = Vec::new();
    for m in g.keys() {
        let file = if m == "core" || m == "workspace" {
            src.join(format!("{m}.rs"))
        } else {
            src.join(&layer[m]).join(format!("{m}.rs"))
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let measured: BTreeSet<String> = g[m]
            .iter()
            .filter(|d| layer.contains_key(*d))
            .cloned()
            .collect();
        match stated(&text) {
            None => wrong.push(format!("{}: no `//! Depends on:` line", file.display())),
            Some(s) if s != measured => wrong.push(format!(
                "{}: says {:?}, imports {:?}",
                file.display(),
                s,
                measured
            )),
            Some(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "module headers:\n  {}",
        wrong.join("\n  ")
    );
}
