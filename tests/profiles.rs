//! Every shipped profile parses and is listed; the embedded list equals the files on disk;
//! each invalid fixture fails with its own message.

use llmbound::core::evaluate;
use llmbound::profile::builtin::BUILTIN;
use llmbound::profile::{Catalog, load};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn embedded_list_equals_files_on_disk() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let mut on_disk = BTreeSet::new();
    for kind in ["machines", "models", "scenarios"] {
        for e in std::fs::read_dir(root.join(kind)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let name = p.file_name().unwrap().to_str().unwrap().to_string();
                let text = std::fs::read_to_string(&p).unwrap();
                on_disk.insert((kind.to_string(), name, text));
            }
        }
    }
    let embedded: BTreeSet<_> = BUILTIN
        .iter()
        .map(|(k, n, t)| (k.to_string(), n.to_string(), t.to_string()))
        .collect();
    assert_eq!(embedded, on_disk, "run scripts/gen-builtin.sh");
}

#[test]
fn every_builtin_parses_and_every_scenario_evaluates() {
    let cat = Catalog::builtin();
    assert!(cat.errors.is_empty(), "{:#?}", cat.errors);
    assert!(cat.machines.len() >= 12);
    assert!(cat.models.len() >= 12);
    for s in &cat.scenarios {
        let scen = load::scenario(&cat, &s.value).unwrap_or_else(|e| panic!("{}: {e}", s.id));
        evaluate(&scen).unwrap_or_else(|e| panic!("{}: {e}", s.id));
    }
}

#[test]
fn invalid_fixtures_fail_with_their_message() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/invalid_profiles");
    let mut n = 0;
    for kind in ["machines", "models", "scenarios"] {
        let Ok(rd) = std::fs::read_dir(dir.join(kind)) else {
            continue;
        };
        for e in rd {
            let p = e.unwrap().path();
            let src = std::fs::read_to_string(&p).unwrap();
            let expect = src
                .lines()
                .find_map(|l| l.strip_prefix("# expect: "))
                .unwrap_or_else(|| panic!("{} has no '# expect: ' line", p.display()))
                .to_string();
            let tmp = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(tmp.path().join(kind)).unwrap();
            std::fs::copy(&p, tmp.path().join(kind).join(p.file_name().unwrap())).unwrap();
            let cat = Catalog::load_with(Some(tmp.path().to_path_buf()));
            assert_eq!(cat.errors.len(), 1, "{}: {:?}", p.display(), cat.errors);
            let msg = cat.errors[0].to_string();
            assert!(
                msg.contains(&expect),
                "{}: got {msg:?}, want {expect:?}",
                p.display()
            );
            assert!(!msg.contains('\n'), "one line: {msg:?}");
            n += 1;
        }
    }
    assert!(n >= 10, "only {n} invalid fixtures");
}

#[test]
fn user_profiles_override_builtins_by_id() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("machines")).unwrap();
    let src = BUILTIN
        .iter()
        .find(|(_, n, _)| *n == "macbook-pro-m4-pro-48gb.toml")
        .unwrap()
        .2
        .replace("273 GB/s", "300 GB/s");
    std::fs::write(
        tmp.path().join("machines/macbook-pro-m4-pro-48gb.toml"),
        src,
    )
    .unwrap();
    let cat = Catalog::load_with(Some(tmp.path().to_path_buf()));
    assert!(cat.errors.is_empty());
    let m = cat.machine("macbook-pro-m4-pro-48gb").unwrap();
    assert_eq!(m.tiers[0].bandwidth.value.value.0, 300e9);
    assert_eq!(
        cat.machines
            .iter()
            .filter(|e| e.id == "macbook-pro-m4-pro-48gb")
            .count(),
        1
    );
}
