//! The bounds model ships with the program: every "docs/bounds.md §N" (and
//! "docs/measurements.md §N") cited by the code, the profiles and the docs names a section
//! that exists, and nothing a user reads points to a SPEC file they do not have.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("rs" | "toml" | "md")
        ) {
            out.push(p);
        }
    }
}

fn sections(doc: &str) -> Vec<u32> {
    doc.lines()
        .filter_map(|l| l.strip_prefix("## "))
        .filter_map(|l| l.split('.').next()?.trim().parse().ok())
        .collect()
}

#[test]
fn every_cited_section_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = [
        (
            "docs/bounds.md",
            sections(&std::fs::read_to_string(root.join("docs/bounds.md")).unwrap()),
        ),
        (
            "docs/measurements.md",
            sections(&std::fs::read_to_string(root.join("docs/measurements.md")).unwrap()),
        ),
    ];
    assert_eq!(docs[0].1, (1..=8).collect::<Vec<_>>());
    let mut all = Vec::new();
    for d in ["src", "profiles", "docs"] {
        files(&root.join(d), &mut all);
    }
    let mut cited = 0;
    for f in &all {
        let text = std::fs::read_to_string(f).unwrap();
        for (name, secs) in &docs {
            for (i, _) in text.match_indices(&format!("{name} §")) {
                let rest = &text[i + name.len() + " §".len()..];
                if rest.starts_with('N') {
                    continue; // the placeholder "§N" in prose
                }
                let n: u32 = rest
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect::<String>()
                    .parse()
                    .unwrap_or_else(|_| panic!("{}: \"{name} §\" without a number", f.display()));
                assert!(secs.contains(&n), "{} cites {name} §{n}", f.display());
                cited += 1;
            }
        }
    }
    assert!(cited > 10, "only {cited} citations found");
}

#[test]
fn profiles_cite_no_file_a_user_does_not_have() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    files(&root.join("profiles"), &mut all);
    for f in &all {
        let text = std::fs::read_to_string(f).unwrap();
        for bad in ["SPEC", "shared/data", "seed/"] {
            assert!(!text.contains(bad), "{} mentions {bad}", f.display());
        }
    }
}
