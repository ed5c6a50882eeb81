//! The command line's conventions: completions and the man page from the clap definition, one
//! exit-code table for every command, errors that say what to do next, negative numbers that
//! reach the validators, `machine detect`'s wording, the GGUF count message, where fetched
//! test data lives, and the README's quick start.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use assert_cmd::Command;
use llmbound::exit;
use std::path::{Path, PathBuf};
use std::process::Output;

fn llmbound(config: &Path) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", config);
    c.env("XDG_CACHE_HOME", config.join("cache"));
    c.env("NO_COLOR", "1");
    c
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn run(config: &Path, args: &[&str]) -> Output {
    llmbound(config).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `args` and checks the exit code and that stderr contains every `want`.
fn expect(config: &Path, args: &[&str], code: i32, want: &[&str]) -> Output {
    let o = run(config, args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: stderr lacks {w:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    if code == exit::BAD_INPUT || (code == exit::USAGE && err.starts_with("llmbound: error:")) {
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: one line: {err}"
        );
    }
    o
}

/// The header-only copy of the synthetic Qwen3-8B Q8_0 file, made full-size sparse.
fn qwen3_8b(dir: &Path) -> PathBuf {
    let p = dir.join("qwen3-8b-q8_0-synth.gguf");
    std::fs::copy(
        repo("tests/fixtures/bench/h200/qwen3-8b-q8_0-synth.gguf-header"),
        &p,
    )
    .unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(8_703_585_952)
        .unwrap();
    p
}

const SUBCOMMANDS: &[&str] = &[
    "report",
    "check",
    "compare",
    "inspect",
    "hash",
    "bench",
    "machine",
    "detect",
    "profiles",
    "list",
    "show",
    "path",
    "completions",
    "man",
];

const FLAGS: &[&str] = &[
    "--tokens-per-second",
    "--from-bench",
    "--gguf",
    "--machine",
    "--context",
    "--cache-type-k",
    "--format",
    "--no-cache",
    "--save",
    "--force",
    "--metadata",
];

#[test]
fn completions_for_every_shell_name_every_command_and_flag() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = expect(dir.path(), &["completions", shell], exit::OK, &[]);
        let script = String::from_utf8(o.stdout).unwrap();
        for word in SUBCOMMANDS.iter().chain(FLAGS) {
            // fish names a long flag without its dashes: `-l tokens-per-second`.
            let word = match shell {
                "fish" if word.starts_with("--") => format!("-l {}", &word[2..]),
                _ => word.to_string(),
            };
            assert!(script.contains(&word), "{shell} completions lack {word:?}");
        }
    }
    // No profile is read: a broken one in the profile directory does not show up.
    let machines = dir.path().join("machines");
    std::fs::create_dir_all(&machines).unwrap();
    std::fs::write(machines.join("broken.toml"), "id = ").unwrap();
    for args in [&["completions", "bash"][..], &["man"][..]] {
        let o = expect(dir.path(), args, exit::OK, &[]);
        assert!(stderr(&o).is_empty(), "{args:?}: {}", stderr(&o));
    }
    let o = expect(
        dir.path(),
        &["profiles", "list"],
        exit::OK,
        &["skipped a profile"],
    );
    assert!(!o.stdout.is_empty());
    expect(
        dir.path(),
        &["completions", "tcsh"],
        exit::USAGE,
        &["invalid value 'tcsh'", "bash"],
    );
    // The bash script loads and registers a completion for llmbound.
    if std::process::Command::new("bash")
        .arg("--version")
        .output()
        .is_ok()
    {
        let o = run(dir.path(), &["completions", "bash"]);
        let path = dir.path().join("llmbound.bash");
        std::fs::write(&path, &o.stdout).unwrap();
        let check = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source '{}' && complete -p llmbound",
                path.display()
            ))
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&check.stdout);
        assert!(
            check.status.success() && out.contains("llmbound"),
            "{out} {}",
            String::from_utf8_lossy(&check.stderr)
        );
    } else {
        skipped!("note: bash is not installed; loading the bash completions was skipped");
    }
}

#[test]
fn the_man_page_names_every_command_and_exit_code_and_renders() {
    let dir = tempfile::tempdir().unwrap();
    let o = expect(dir.path(), &["man"], exit::OK, &[]);
    let roff = String::from_utf8(o.stdout).unwrap();
    assert!(roff.contains("\n.TH llmbound 1 "), "{}", &roff[..200]);
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH DESCRIPTION",
        ".SH OPTIONS",
        ".SH COMMANDS",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
    ] {
        assert!(roff.contains(section), "man page lacks {section}");
    }
    for cmd in [
        "report",
        "check",
        "compare",
        "inspect",
        "hash",
        "bench",
        "machine detect",
        "profiles list",
        "profiles show",
        "profiles path",
        "completions",
        "man",
    ] {
        assert!(
            roff.contains(&format!(".SS \"llmbound {cmd}\"")),
            "man page lacks a section for {cmd}"
        );
    }
    for flag in FLAGS {
        let escaped = flag.replace('-', "\\-");
        assert!(roff.contains(&escaped), "man page lacks {flag}");
    }
    for (code, _) in exit::TABLE {
        assert!(
            roff.contains(&format!(".TP\n\\fB{code}\\fR\n")),
            "exit {code}"
        );
    }
    // Rendered by man(1) when it is installed: no roff warnings, every command readable.
    let page = dir.path().join("llmbound.1");
    std::fs::write(&page, &roff).unwrap();
    match std::process::Command::new("man")
        .args(["-l", page.to_str().unwrap()])
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
    {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!err.contains("warning"), "{err}");
            for want in [
                "SYNOPSIS",
                "llmbound check (--tokens-per-second X | --from-bench FILE)",
                "EXIT STATUS",
            ] {
                let plain: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
                let plain = plain.replace('\u{2010}', "-");
                assert!(plain.contains(want), "rendered page lacks {want:?}");
            }
        }
        _ => skipped!("note: man -l is not available here; rendering the page was skipped"),
    }
}

#[test]
fn every_command_follows_the_exit_code_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let g = qwen3_8b(d);
    let g = g.to_str().unwrap();
    let bench = repo("tests/fixtures/bench/h200/bench_f16.json");
    let bench = bench.to_str().unwrap();
    let broken = d.join("broken.json");
    std::fs::write(&broken, "[{\"n_prompt\": 0,").unwrap();
    let broken = broken.to_str().unwrap();
    let header_only = repo("tests/fixtures/bench/cpu/gemma-3-270m-q4_k_m.gguf-header");
    let header_only = header_only.to_str().unwrap();
    let not_gguf = d.join("not.gguf");
    std::fs::write(&not_gguf, b"PK\x03\x04 a zip").unwrap();
    let not_gguf = not_gguf.to_str().unwrap();

    // The top level.
    expect(d, &["--version"], exit::OK, &[]);
    let help = expect(d, &["--help"], exit::OK, &[]);
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(
        help.contains("Exit codes: 0 success, 1 bad input"),
        "{help}"
    );
    for (code, _) in exit::TABLE {
        assert!(
            help.contains(&format!(" {code} ")),
            "--help lacks exit {code}"
        );
    }
    expect(d, &["--bogus"], exit::USAGE, &["unexpected argument"]);
    expect(
        d,
        &["frobnicate"],
        exit::USAGE,
        &["unrecognized subcommand"],
    );
    // report
    expect(d, &["report"], exit::OK, &[]);
    expect(
        d,
        &["report", "--machine", "nope"],
        exit::BAD_INPUT,
        &["nope"],
    );
    expect(
        d,
        &["report", "--context", "banana"],
        exit::USAGE,
        &["--context"],
    );
    expect(
        d,
        &[
            "report",
            "--machine",
            "desktop-rtx-4090",
            "--machine",
            "h200-measured",
        ],
        exit::USAGE,
        &["give one machine", "llmbound compare"],
    );
    // check
    expect(d, &["check", "--tokens-per-second", "5"], exit::OK, &[]);
    expect(
        d,
        &["check"],
        exit::USAGE,
        &["--tokens-per-second", "--from-bench"],
    );
    expect(
        d,
        &["check", "--tokens-per-second", "0"],
        exit::BAD_INPUT,
        &["must be a positive rate"],
    );
    expect(
        d,
        &[
            "check",
            "--tokens-per-second",
            "1e9",
            "--gguf",
            g,
            "--machine",
            "h200-measured",
        ],
        exit::IMPOSSIBLE,
        &[],
    );
    expect(
        d,
        &["check", "--tokens-per-second", "5", "--from-bench", bench],
        exit::USAGE,
        &["cannot be used with"],
    );
    // compare
    expect(
        d,
        &[
            "compare",
            "--machine",
            "desktop-rtx-4090",
            "--machine",
            "h200-measured",
        ],
        exit::OK,
        &[],
    );
    expect(
        d,
        &["compare", "--machine", "desktop-rtx-4090"],
        exit::USAGE,
        &["at least two --machine", "llmbound profiles list"],
    );
    expect(d, &["compare"], exit::USAGE, &["got 0"]);
    expect(
        d,
        &[
            "compare",
            "--machine",
            "desktop-rtx-4090",
            "--machine",
            "nope",
        ],
        exit::BAD_INPUT,
        &["unknown machine \"nope\""],
    );
    // inspect
    expect(d, &["inspect", g], exit::OK, &[]);
    expect(d, &["inspect"], exit::USAGE, &["<FILE>"]);
    expect(
        d,
        &["inspect", not_gguf],
        exit::BAD_INPUT,
        &["not a GGUF file"],
    );
    let o = expect(
        d,
        &["inspect", header_only],
        exit::MISMATCH,
        &["incomplete", "missing"],
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("PARTIAL DOWNLOAD"),
        "inspect still prints what it read"
    );
    // hash
    expect(
        d,
        &["hash", "--no-cache", not_gguf],
        exit::BAD_INPUT,
        &["not.gguf"],
    );
    let o = expect(d, &["hash", "--no-cache", header_only], exit::MISMATCH, &[]);
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(said.contains("incomplete"), "{said}");
    expect(d, &["hash"], exit::USAGE, &["<FILE>"]);
    // bench
    expect(
        d,
        &["bench", bench, "--gguf", g, "--machine", "h200-measured"],
        exit::OK,
        &[],
    );
    expect(d, &["bench", broken], exit::BAD_INPUT, &["broken.json"]);
    // A decode row faster than any H200 could go: 3 from bench and from check --from-bench.
    let mut rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bench).unwrap()).unwrap();
    for r in rows.as_array_mut().unwrap() {
        if r["n_gen"] == 128 && r["n_prompt"] == 0 && r["n_depth"] == 0 {
            r["avg_ts"] = serde_json::json!(7000.0);
            r["samples_ts"] = serde_json::json!([7000.0]);
        }
    }
    let doctored = d.join("doctored.json");
    std::fs::write(&doctored, serde_json::to_string(&rows).unwrap()).unwrap();
    let doctored = doctored.to_str().unwrap();
    for cmd in [
        vec!["bench", doctored],
        vec!["check", "--from-bench", doctored],
    ] {
        let mut args = cmd.clone();
        args.extend(["--gguf", g, "--machine", "h200-measured"]);
        expect(d, &args, exit::IMPOSSIBLE, &[]);
    }
    expect(d, &["bench"], exit::USAGE, &["RESULTS.json"]);
    // machine detect (the measuring run is in machine_detect_save_names_force)
    expect(
        d,
        &["machine", "detect", "--quick", "--thorough"],
        exit::USAGE,
        &["cannot be used with"],
    );
    expect(d, &["machine"], exit::USAGE, &["detect"]);
    // profiles
    expect(d, &["profiles", "list"], exit::OK, &[]);
    expect(
        d,
        &["profiles", "show", "nope"],
        exit::BAD_INPUT,
        &["llmbound profiles list"],
    );
    expect(d, &["profiles", "show"], exit::USAGE, &["<ID>"]);
    // completions and man
    expect(d, &["completions"], exit::USAGE, &["<SHELL>"]);
    expect(d, &["man", "extra"], exit::USAGE, &["unexpected argument"]);
}

#[test]
fn negative_numbers_reach_the_validators() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (args, code, want) in [
        (
            vec!["check", "--tokens-per-second", "-5"],
            exit::BAD_INPUT,
            "must be a positive rate",
        ),
        (
            vec!["report", "--context", "-5"],
            exit::USAGE,
            "must not be negative",
        ),
        (
            vec!["report", "--sequences", "-2"],
            exit::USAGE,
            "must not be negative",
        ),
        (
            vec!["report", "--gpu-layers", "-1"],
            exit::USAGE,
            "must not be negative",
        ),
        (
            vec!["report", "--context", "2.5"],
            exit::USAGE,
            "not a fraction",
        ),
        (
            vec!["report", "--overhead", "-1GB"],
            exit::BAD_INPUT,
            "negative",
        ),
        (
            vec!["report", "--memory", "-5"],
            exit::BAD_INPUT,
            "negative",
        ),
        (
            vec!["report", "--bandwidth", "-400 GB/s"],
            exit::BAD_INPUT,
            "--bandwidth",
        ),
        (
            vec!["report", "--artifact-bytes", "-1"],
            exit::BAD_INPUT,
            "negative",
        ),
        (
            vec![
                "report",
                "--scenario",
                "qwen3-32b-rtx-4090-partial",
                "--tensor-split",
                "-1,2",
            ],
            exit::BAD_INPUT,
            "must be non-negative",
        ),
    ] {
        let o = expect(d, &args, code, &[want]);
        assert!(!stderr(&o).contains("unexpected argument"), "{args:?}");
    }
}

#[test]
fn machine_detect_save_names_the_flag_that_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let machines = dir.path().join("machines");
    std::fs::create_dir_all(&machines).unwrap();
    let existing = "# not a profile llmbound can load; only its name matters here\n";
    std::fs::write(machines.join("taken.toml"), existing).unwrap();
    let o = run(
        dir.path(),
        &["machine", "detect", "--quick", "--save", "taken"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{err}");
    for want in ["taken.toml already exists", "--force", "--save OTHER-ID"] {
        assert!(err.contains(want), "{want}: {err}");
    }
    // Refused before anything is measured: nothing printed, the file untouched.
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(machines.join("taken.toml")).unwrap(),
        existing
    );
}

#[test]
fn detect_writes_each_warning_once_and_names_its_command() {
    use llmbound::core::units::MIB;
    use llmbound::detect::{self, DetectOptions, Mode};
    let opts = DetectOptions {
        buffer_bytes: 4 * MIB,
        repetitions: 2,
        threads: Some(2),
        load_sample: std::time::Duration::from_millis(20),
        exact_buffer: true,
        ..DetectOptions::from(Mode::Quick)
    };
    let mut d = detect::detect_with(&opts, &mut |_, _| {}).unwrap();
    let w = "a warning written by this test";
    d.warnings.push(w.into());
    let text = d.to_toml("box").unwrap();
    assert_eq!(text.matches(w).count(), 1, "{text}");
    for stale in [
        "`llmbound detect`",
        "by llmbound detect",
        "\"llmbound detect (",
    ] {
        assert!(!text.contains(stale), "{stale}: {text}");
    }
    assert!(text.contains("`llmbound machine detect`"), "{text}");
    assert!(text.contains("llmbound machine detect ("), "{text}");
}

#[test]
fn a_count_is_compared_with_the_bytes_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    // The first 1,000 bytes of the real gemma-3-270m file (its header copy, or the file itself).
    let source = std::env::var_os("LLMBOUND_GEMMA_GGUF")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo("tests/fixtures/bench/cpu/gemma-3-270m-q4_k_m.gguf-header"));
    let bytes = std::fs::read(&source).unwrap();
    let cut = dir.path().join("cut.gguf");
    std::fs::write(&cut, &bytes[..1000]).unwrap();
    let o = expect(
        dir.path(),
        &["inspect", cut.to_str().unwrap()],
        exit::BAD_INPUT,
        &[
            "the tensor count is \"236\" at byte 8",
            "236 tensor entries need at least 5664 bytes; 976 are left",
            "download or convert it again",
        ],
    );
    assert!(!stderr(&o).contains("more than the 976 bytes"));
}

#[test]
fn fetched_test_data_lives_outside_target() {
    let script = repo("scripts/test-data-dir.sh");
    let dir = |env: &[(&str, &str)]| {
        let mut c = std::process::Command::new("bash");
        c.arg(&script)
            .env_remove("LLMBOUND_TEST_DATA")
            .env_remove("XDG_CACHE_HOME");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap().trim_end().to_string()
    };
    assert_eq!(
        dir(&[("HOME", "/home/u")]),
        "/home/u/.cache/llmbound/test-data"
    );
    assert_eq!(
        dir(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/c")]),
        "/c/llmbound/test-data"
    );
    assert_eq!(
        dir(&[("HOME", "/home/u"), ("LLMBOUND_TEST_DATA", "/data")]),
        "/data"
    );
    let test_sh = std::fs::read_to_string(repo("scripts/test.sh")).unwrap();
    assert!(test_sh.contains("data=\"$(scripts/test-data-dir.sh)\""));
    assert!(!test_sh.contains("gemma=\"$PWD/target"));
}

/// Every `llmbound …` command line in the README and docs/cli.md names a real command, and the
/// exit-code table there is `llmbound::exit::TABLE`.
#[test]
fn the_readme_and_cli_reference_match_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let cli = std::fs::read_to_string(repo("docs/cli.md")).unwrap();
    for quick in [
        "cargo run --release",
        "scripts/test.sh",
        "cargo install --path . --locked",
        "llmbound completions",
        "llmbound man",
    ] {
        assert!(readme.contains(quick), "README lacks {quick:?}");
    }
    let mut seen = std::collections::BTreeSet::new();
    for line in readme.lines().chain(cli.lines()) {
        let line = line.trim_start().trim_start_matches("$ ");
        let Some(rest) = line.strip_prefix("llmbound ") else {
            continue;
        };
        let mut words: Vec<&str> = Vec::new();
        for w in rest.split_whitespace() {
            if w.starts_with('-')
                || w.starts_with('[')
                || !w.chars().all(|c| c.is_ascii_lowercase())
            {
                break;
            }
            words.push(w);
            if !matches!(w, "machine" | "profiles") {
                break;
            }
        }
        if !words.is_empty() {
            seen.insert(words.join(" "));
        }
    }
    for cmd in &seen {
        let mut args: Vec<&str> = cmd.split(' ').collect();
        args.push("--help");
        expect(dir.path(), &args, exit::OK, &[]);
    }
    for c in [
        "report",
        "check",
        "compare",
        "inspect",
        "hash",
        "bench",
        "completions",
        "man",
    ] {
        assert!(seen.contains(c), "docs never show `llmbound {c}`");
    }
    for (code, meaning) in exit::TABLE {
        assert!(
            cli.contains(&format!("| {code} | {meaning} |")),
            "docs/cli.md lacks the row for exit {code}"
        );
    }
}

#[test]
fn a_split_model_with_a_missing_shard_exits_4() {
    use llmbound::gguf::writer::{self, Data, GgufWriter};
    use llmbound::gguf::{GgmlType, Value};
    let dir = tempfile::tempdir().unwrap();
    for no in 0..2u16 {
        let mut w = GgufWriter::new();
        if no == 0 {
            w = w
                .kv("general.architecture", writer::string("llama"))
                .kv("llama.block_count", Value::U32(2));
        }
        w.kv("split.no", Value::U16(no))
            .kv("split.count", Value::U16(2))
            .kv("split.tensors.count", Value::I32(2))
            .tensor(&format!("blk.{no}.attn_q.weight"), GgmlType::F16, &[64, 64])
            .write_file(
                &dir.path().join(format!("M-{:05}-of-00002.gguf", no + 1)),
                Data::Zeros,
            )
            .unwrap();
    }
    let first = dir.path().join("M-00001-of-00002.gguf");
    let first = first.to_str().unwrap();
    expect(dir.path(), &["inspect", first], exit::OK, &[]);
    std::fs::remove_file(dir.path().join("M-00002-of-00002.gguf")).unwrap();
    for cmd in ["inspect", "hash"] {
        expect(
            dir.path(),
            &[cmd, first],
            exit::MISMATCH,
            &["\"M-00002-of-00002.gguf\" is missing", "every shard"],
        );
    }
}

/// An unknown id that part of a known one matches is answered with it, as the explorer's
/// picker would match it; `profiles` alone lists; `-c 32k` is 32,768 tokens on the CLI as in
/// the explorer.
#[test]
fn near_misses_and_defaults_read_as_people_type_them() {
    let d = tempfile::tempdir().unwrap();
    expect(
        d.path(),
        &["report", "--machine", "5090"],
        exit::BAD_INPUT,
        &["unknown machine \"5090\"; did you mean desktop-rtx-5090? known: "],
    );
    // Two machines match "4090": both are named.
    expect(
        d.path(),
        &["report", "--machine", "4090"],
        exit::BAD_INPUT,
        &[
            "unknown machine \"4090\"; did you mean one of desktop-rtx-4090, rtx-4090-rpc-laptop? known: ",
        ],
    );
    let far = expect(
        d.path(),
        &["report", "--machine", "zzz"],
        exit::BAD_INPUT,
        &[],
    );
    assert!(!stderr(&far).contains("did you mean"), "{}", stderr(&far));
    let o = run(d.path(), &["profiles"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list = run(d.path(), &["profiles", "list"]);
    assert_eq!(o.stdout, list.stdout);
    let k = run(d.path(), &["report", "--format", "json", "-c", "32k"]);
    assert!(k.status.success(), "{}", stderr(&k));
    let v: serde_json::Value = serde_json::from_slice(&k.stdout).unwrap();
    assert_eq!(v["settings"]["context"], 32768, "{}", v["settings"]);
}
