//! The module import graph: `core` depends on no other module of the crate (and on no I/O,
//! terminal or serialisation crate), and the top-level modules import each other without a
//! loop. Read from the sources: every `crate::NAME` path in `src/`, per top-level module.

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

/// Top-level module → the top-level modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = first.trim_end_matches(".rs").to_string();
        if top == "main" || top == "lib" {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&f).unwrap());
        let deps = g.entry(top.clone()).or_default();
        let mut rest = code.as_str();
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                // `use crate::{a::x, b};`
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    let name = ident_at(part.trim());
                    if !name.is_empty() && name != top {
                        deps.insert(name);
                    }
                }
            } else {
                let name = ident_at(after);
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
                    let assigns = (rest.starts_with('=') && !rest.starts_with("=="))
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
