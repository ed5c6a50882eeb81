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
