//! The command line: parse (clap derive) → build the scenario → dispatch to the TUI or a
//! report. Reports go to stdout; one-line errors to stderr; exit codes from `crate::exit`
//! (1 bad input, 2 usage, 3 a claim above the highest ceiling, 4 a file that is not the
//! artifact). Never enters raw mode except through the TUI.
//! Depends on: bench, build, compare, core, detect, exit, gguf, infile, inspect, mlx_cli, mlx_report, models, profile, remote, report, sanitize, tui, workspace.

mod completions;
mod man;

use crate::build::{self, ScenarioOptions};
use crate::core::{self, Report};
use crate::inspect;
use crate::profile::{Catalog, Origin};
use crate::report::{self, Format};
use crate::sanitize::Text;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use crate::exit;

#[derive(Parser, Debug)]
#[command(
    name = "llmbound",
    version,
    about = "Capacity, KV-cache and roofline bounds for running LLMs locally: does it fit, and how fast could decode possibly go?",
    long_about = None,
    after_help = crate::exit::summary(),
    // The scenario flags before a subcommand would be ignored by it: only the explorer (no
    // subcommand) takes them there; each command that takes a scenario has its own.
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    scenario: ScenarioOptions,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the worksheet of a scenario (the default scenario with no options).
    Report {
        #[command(flatten)]
        scenario: ScenarioOptions,
        #[arg(long, value_enum, default_value_t = OutFormat::Text)]
        format: OutFormat,
        #[command(flatten)]
        mlx: crate::mlx_report::MlxOptions,
    },
    /// Hold a claimed or observed decode rate against every ceiling; exit 3 when impossible.
    #[command(group(
        clap::ArgGroup::new("rate")
            .required(true)
            .args(["tokens_per_second", "from_bench"])
    ))]
    Check {
        /// The claimed or observed aggregate decode rate, tokens/s: `30`, `30 t/s`, `30 tok/s`,
        /// `30 tokens/s` (or give --from-bench).
        #[arg(
            long = "tokens-per-second",
            value_name = "X",
            allow_negative_numbers = true
        )]
        tokens_per_second: Option<String>,
        /// Check every row of a llama-bench result file instead (`-o json` or `-o jsonl`).
        #[arg(long = "from-bench", value_name = "FILE")]
        from_bench: Option<PathBuf>,
        #[command(flatten)]
        scenario: ScenarioOptions,
        #[arg(long, value_enum, default_value_t = OutFormat::Text)]
        format: OutFormat,
    },
    /// The same model and cache settings on several machines side by side.
    Compare {
        #[command(flatten)]
        scenario: ScenarioOptions,
        #[arg(long, value_enum, default_value_t = OutFormat::Text)]
        format: OutFormat,
    },
    /// Read a GGUF header (never its tensor data): metadata, every tensor, rollups by type and layer.
    Inspect {
        /// The GGUF file (any shard of a split model).
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = OutFormat::Text)]
        format: OutFormat,
        /// Tensor order.
        #[arg(long, value_enum, default_value_t = SortArg::Offset)]
        sort: SortArg,
        /// Group the tensors with rollups.
        #[arg(long, value_enum)]
        group: Option<GroupArg>,
        /// Also list the metadata key/values (long arrays summarised).
        #[arg(long)]
        metadata: bool,
    },
    /// SHA-256 of an artifact (every shard), compared with a pinned artifact profile.
    Hash {
        /// The GGUF file (any shard of a split model).
        file: PathBuf,
        /// Ignore the cache of earlier results.
        #[arg(long = "no-cache")]
        no_cache: bool,
        #[arg(long, value_enum, default_value_t = OutFormat::Text)]
        format: OutFormat,
    },
    /// Hold llama-bench results (`-o json` / `-o jsonl`) against their ceilings, row by row;
    /// exit 3 when a decode row is above its highest ceiling.
    Bench {
        /// One or more result files.
        #[arg(required = true, value_name = "RESULTS.json")]
        files: Vec<PathBuf>,
        #[command(flatten)]
        scenario: ScenarioOptions,
        #[arg(long, value_enum, default_value_t = OutFormat::Text)]
        format: OutFormat,
    },
    /// Every GGUF model on this machine (HF cache, Ollama, LM Studio, llama.cpp, --dir):
    /// fits or not at the context, largest context that fits, decode ceilings.
    Models {
        #[command(flatten)]
        scenario: ScenarioOptions,
        #[command(flatten)]
        models: crate::outputs::models::ModelsArgs,
    },
    /// Profiles of this machine.
    Machine {
        #[command(subcommand)]
        action: MachineCmd,
    },
    /// List, show or locate profiles (`list` when no action is given).
    Profiles {
        #[command(subcommand)]
        action: Option<ProfilesCmd>,
    },
    /// Print a shell completion script (e.g. `llmbound completions bash > ~/.local/share/bash-completion/completions/llmbound`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on stdout (e.g. `llmbound man > ~/.local/share/man/man1/llmbound.1`).
    Man,
}

#[derive(Subcommand, Debug)]
enum MachineCmd {
    /// Detect memory, CPU and GPUs and measure the sustained read bandwidth of system memory;
    /// print the machine profile (TOML) and optionally save it.
    Detect {
        /// Save the profile under this id in the user's profile directory.
        #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = crate::detect::DEFAULT_ID)]
        save: Option<String>,
        /// Replace an existing profile with the same id, and save even when the machine was
        /// busy while measuring.
        #[arg(long)]
        force: bool,
        /// Measure briefly (less confidence).
        #[arg(long, conflicts_with = "thorough")]
        quick: bool,
        /// Measure longer (more confidence).
        #[arg(long)]
        thorough: bool,
    },
}

#[derive(Subcommand, Debug)]
enum ProfilesCmd {
    /// List every machine, model and scenario (built-in and the user's).
    List,
    /// Print one profile as TOML.
    Show {
        /// Profile id (machine, model or scenario).
        id: String,
    },
    /// Print the user's profile directory.
    Path,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum OutFormat {
    Text,
    Markdown,
    Json,
}

impl From<OutFormat> for Format {
    fn from(f: OutFormat) -> Self {
        match f {
            OutFormat::Text => Format::Text,
            OutFormat::Markdown => Format::Markdown,
            OutFormat::Json => Format::Json,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum SortArg {
    Name,
    Bytes,
    Offset,
    Type,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum GroupArg {
    Type,
    Layer,
}

/// A CLI failure: a one-line message and an exit code.
#[derive(Debug)]
pub struct Failure {
    /// Exit code.
    pub code: i32,
    /// One line.
    pub message: String,
}

fn bad(e: impl std::fmt::Display) -> Failure {
    Failure {
        code: exit::BAD_INPUT,
        message: e.to_string().replace('\n', " "),
    }
}

/// A usage error of ours (exit 2, like clap's own): the command line asks for something the
/// command cannot do.
fn usage(e: impl std::fmt::Display) -> Failure {
    Failure {
        code: exit::USAGE,
        message: e.to_string().replace('\n', " "),
    }
}

/// An artifact whose data or shards are missing (exit 4).
/// A scenario that cannot be built: a partial download is exit 4 with `inspect`'s line, as
/// `inspect` gives it; anything else is bad input.
fn unbuilt(e: crate::build::BuildError) -> Failure {
    match e {
        crate::build::BuildError::Incomplete(why) => incomplete(why),
        other => bad(other),
    }
}

fn incomplete(e: impl std::fmt::Display) -> Failure {
    Failure {
        code: exit::MISMATCH,
        message: e.to_string().replace('\n', " "),
    }
}

/// Opening a GGUF for `inspect` or `hash`: missing shards of a split model are an incomplete
/// artifact (exit 4); anything else is bad input.
fn open_artifact(file: &std::path::Path) -> Result<crate::gguf::Artifact, Failure> {
    crate::gguf::open(file).map_err(|e| {
        let m = build::gguf_message(file, &e);
        if matches!(e, crate::gguf::GgufError::MissingShards { .. }) {
            incomplete(format!("{m}: put every shard in the same folder"))
        } else {
            bad(m)
        }
    })
}

/// After `inspect` or `hash` printed what they found: a partial download is exit 4.
fn check_complete(file: &std::path::Path, a: &crate::gguf::Artifact) -> Result<(), Failure> {
    match crate::gguf::incomplete_reason(file, a) {
        Some(why) => Err(incomplete(why)),
        None => Ok(()),
    }
}

fn io_fail(e: std::io::Error) -> Failure {
    // A closed pipe (`| head`) is not an error worth a message.
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure {
            code: 0,
            message: String::new(),
        }
    } else {
        bad(e)
    }
}

struct Built {
    report: Report,
    model_path: String,
    ollama: Option<crate::workspace::OllamaRun>,
}

fn build(cat: &Catalog, opts: &ScenarioOptions) -> Result<Built, Failure> {
    let (scen, ollama) = crate::workspace::scenario_and_ollama(cat, opts).map_err(unbuilt)?;
    let model_path = match &opts.gguf {
        Some(p) => crate::workspace::open::llama_cpp_model_path(p),
        None => scen
            .weights
            .first()
            .map(|w| w.file.clone())
            .unwrap_or_default(),
    };
    // The one evaluation the explorer makes too: with the placement left to llama.cpp the
    // bounds are those of the plan llama.cpp chooses, so the headline and the plan agree.
    let report = crate::compare::evaluation(&scen).map_err(bad)?;
    Ok(Built {
        report,
        model_path,
        ollama,
    })
}

fn write_report(b: &Built, format: Format, out: &mut impl Write) -> std::io::Result<()> {
    let doc = report::ReportDoc {
        report: &b.report,
        model_path: &b.model_path,
        ollama: b.ollama.as_ref(),
    };
    report::render(&doc, format, out)
}

/// llama.cpp's own single-dash spellings of the placement flags (`-ngl`, `-ts`, `-sm`, `-mg`,
/// `-ot`, `-nkvo`, `-fit`, `-fitt`, `-fitc`, `-cmoe`, `-ncmoe`) as the long flags clap reads;
/// every other argument, and anything after `--`, unchanged.
pub fn llama_cpp_spellings<I: IntoIterator<Item = std::ffi::OsString>>(
    args: I,
) -> Vec<std::ffi::OsString> {
    let mut out = Vec::new();
    let mut rest = false;
    for a in args {
        if rest {
            out.push(a);
            continue;
        }
        let mapped = match a.to_str() {
            Some("--") => {
                rest = true;
                None
            }
            Some("-ngl") => Some("--ngl"),
            Some("-ts") => Some("--tensor-split"),
            Some("-sm") => Some("--split-mode"),
            Some("-mg") => Some("--main-gpu"),
            Some("-ot") => Some("--override-tensor"),
            Some("-nkvo") => Some("--no-kv-offload"),
            Some("-fit") => Some("--fit"),
            Some("-fitt") => Some("--fit-target"),
            Some("-fitc") => Some("--fit-ctx"),
            Some("-cmoe") => Some("--cpu-moe"),
            Some("-ncmoe") => Some("--n-cpu-moe"),
            _ => None,
        };
        out.push(mapped.map_or(a, std::ffi::OsString::from));
    }
    out
}

/// Run the CLI with the process arguments; returns the exit code.
pub fn main() -> i32 {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches_from(llama_cpp_spellings(std::env::args_os()));
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let machines = machines_given(&matches);
    // Remote reads note their transfers on stderr, except under the explorer (no subcommand
    // on a terminal), which owns the screen and shows them itself.
    let explorer = cli.command.is_none() && std::io::stdout().is_terminal();
    if !explorer {
        crate::remote::cli_mode(std::io::stderr().is_terminal());
    }
    // Every command's output goes through one buffer over the locked stdout, flushed once at
    // the end (a JSON inspect of gemma made 3,871 write calls unbuffered).
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let result = run(cli, &machines, &mut out);
    let flushed = out.flush();
    for n in crate::remote::take_notes() {
        eprintln!("llmbound: note: {}", Text(&n));
    }
    match result.and_then(|code| flushed.map(|_| code).map_err(io_fail)) {
        Ok(code) => code,
        Err(f) => {
            if !f.message.is_empty() {
                let _ = out.flush();
                eprintln!(
                    "llmbound: error: {}",
                    Text(&crate::sanitize::error_line(&f.message))
                );
            }
            f.code
        }
    }
}

/// Every `--machine` given, in order (the scenario options keep the first; `compare` takes
/// them all).
fn machines_given(m: &clap::ArgMatches) -> Vec<String> {
    let m = m.subcommand().map_or(m, |(_, sub)| sub);
    m.try_get_many::<String>("machine")
        .ok()
        .flatten()
        .map(|v| v.cloned().collect())
        .unwrap_or_default()
}

fn run(cli: Cli, machines: &[String], out: &mut impl Write) -> Result<i32, Failure> {
    // Generated from the clap definition alone: no profiles are read (a shell that sources
    // the completions at start-up never sees a warning about a broken profile).
    match cli.command {
        Some(Command::Completions { shell }) => {
            completions::write(shell, out).map_err(io_fail)?;
            return Ok(0);
        }
        Some(Command::Man) => {
            man::write(out).map_err(io_fail)?;
            return Ok(0);
        }
        _ => {}
    }
    let cat = Catalog::load();
    for e in &cat.errors {
        eprintln!(
            "llmbound: warning: skipped a profile: {}",
            Text(&e.to_string())
        );
    }
    if let Some(m) = machines.get(1)
        && !matches!(cli.command, Some(Command::Compare { .. }))
    {
        return Err(usage(format!(
            "--machine \"{m}\": give one machine (several only with `llmbound compare`)"
        )));
    }
    match cli.command {
        None => {
            if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
                let opts = cli.scenario.clone();
                // Check the options first so a typo is a one-line error, not a blank screen
                // (a safetensors model has no llama.cpp report to check: MLX-LM's plan).
                let p = crate::workspace::prepare(&cat, &cli.scenario).map_err(unbuilt)?;
                if p.llama_applies {
                    build(&cat, &cli.scenario)?;
                }
                crate::tui::run(crate::tui::Options {
                    gguf: opts.gguf.clone(),
                    scenario: ScenarioOptions { gguf: None, ..opts },
                })
                .map_err(bad)?;
            } else {
                let b = build(&cat, &cli.scenario)?;
                write_report(&b, Format::Text, out).map_err(io_fail)?;
            }
            Ok(0)
        }
        Some(Command::Compare { scenario, format }) => {
            compare(&cat, &scenario, machines, format, out)
        }
        Some(Command::Inspect {
            file,
            format,
            sort,
            group,
            metadata,
        }) => {
            if crate::mlx_cli::is_safetensors(&file) {
                return crate::mlx_cli::inspect(&file, out).map_err(bad);
            }
            // A local file opens here so a missing shard exits 4; any other source by name.
            let a = match crate::remote::Source::parse(&file) {
                crate::remote::Source::Local(p) if !p.is_dir() => open_artifact(&p)?,
                _ => {
                    let o = crate::remote::open_any(&file).map_err(bad)?;
                    if let (false, Some(m)) = (o.has_gguf, &o.mlx) {
                        return crate::mlx_cli::inspect_model(m, out).map_err(bad);
                    }
                    o.artifact
                }
            };
            let sort = match sort {
                SortArg::Name => inspect::Sort::Name,
                SortArg::Bytes => inspect::Sort::Bytes,
                SortArg::Offset => inspect::Sort::Offset,
                SortArg::Type => inspect::Sort::Type,
            };
            let group = match group {
                None => inspect::Group::None,
                Some(GroupArg::Type) => inspect::Group::Type,
                Some(GroupArg::Layer) => inspect::Group::Layer,
            };
            let r = inspect::build(&a, sort, metadata);
            let doc = inspect::InspectDoc { report: &r, group };
            report::render(&doc, format.into(), out).map_err(io_fail)?;
            out.flush().map_err(io_fail)?;
            check_complete(&file, &a)?;
            Ok(0)
        }
        Some(Command::Hash {
            file,
            no_cache,
            format,
        }) => hash(&cat, &file, no_cache, format.into(), out),
        Some(Command::Report {
            scenario,
            format,
            mlx,
        }) => {
            if mlx.model_dir.is_some() {
                return crate::mlx_cli::report_as(&cat, &scenario, &mlx, format.into(), out)
                    .map_err(bad);
            }
            // `--gguf` on a safetensors model: MLX-LM's report of it, as `--model-dir` (beside
            // llama.cpp's when the folder or repository also holds a GGUF).
            // The model is opened once here: a failure is the error `build` would give (it is
            // not opened a second time, which cost a remote source every connection again).
            let probe = match &scenario.gguf {
                Some(g)
                    if scenario.runtime().ok().flatten()
                        != Some(crate::core::mlx::Runtime::LlamaCpp) =>
                {
                    Some(
                        crate::workspace::open::read(g, crate::workspace::Rows::Totals)
                            .map_err(|e| unbuilt(crate::build::BuildError::Gguf(e)))?,
                    )
                }
                _ => None,
            };
            if let (Some(g), Some(opened)) = (&scenario.gguf, probe)
                && opened.mlx.is_some()
            {
                let mut m = mlx.clone();
                m.model_dir = Some(g.clone());
                let mut o = scenario.clone();
                if opened.is_mlx_only() {
                    o.gguf = None;
                }
                return crate::mlx_cli::report_as(&cat, &o, &m, format.into(), out).map_err(bad);
            }
            let b = build(&cat, &scenario)?;
            write_report(&b, format.into(), out).map_err(io_fail)?;
            out.flush().map_err(io_fail)?;
            // A partial download: the figures are printed (for the complete file), then the
            // same exit 4 and one-line reason as `inspect`.
            crate::report::incomplete::check_gguf(scenario.gguf.as_deref()).map_err(incomplete)?;
            // A configuration llama.cpp refuses: the figures are what it would reserve, the
            // exit is llama.cpp's refusal with its reason (bad input, exit 1).
            if b.report.capacity.refused() {
                return Err(bad(crate::report::words::verdict(&b.report.capacity)));
            }
            Ok(0)
        }
        Some(Command::Check {
            tokens_per_second,
            from_bench,
            scenario,
            format,
        }) => {
            let args = scenario;
            if let Some(file) = from_bench {
                return run_bench(&cat, &[file], &args, format, out);
            }
            let text = tokens_per_second.unwrap_or_default();
            // The explorer's claim reads the same text with the same parser.
            let tokens_per_second = match crate::core::units::parse_tokens_per_second(&text) {
                Ok(v) => v,
                Err(crate::core::units::RateTextError::NotPositive) => {
                    return Err(bad(format!(
                        "--tokens-per-second \"{text}\" must be a positive rate in tokens/s (e.g. 12.5)"
                    )));
                }
                Err(e) => return Err(bad(format!("--tokens-per-second \"{text}\" is {e}"))),
            };
            let b = build(&cat, &args)?;
            let c = core::check_claim(&b.report, tokens_per_second);
            report::render(&c, format.into(), out).map_err(io_fail)?;
            Ok(if c.impossible { exit::IMPOSSIBLE } else { 0 })
        }
        Some(Command::Bench {
            files,
            scenario,
            format,
        }) => {
            let args = scenario;
            run_bench(&cat, &files, &args, format, out)
        }
        Some(Command::Machine {
            action:
                MachineCmd::Detect {
                    save,
                    force,
                    quick,
                    thorough,
                },
        }) => run_detect(save, force, quick, thorough, out),
        Some(Command::Profiles { action }) => {
            profiles(&cat, action.unwrap_or(ProfilesCmd::List), out)
        }
        // Written above, before the profiles were loaded.
        Some(Command::Completions { .. } | Command::Man) => Ok(0),
        Some(Command::Models { scenario, models }) => {
            let mut o = scenario;
            o.gguf = None;
            let base = crate::workspace::scenario(&cat, &o).map_err(bad)?;
            crate::outputs::models::run_cli(&cat, &base, &models, out).map_err(io_fail)?;
            Ok(0)
        }
    }
}

fn compare(
    cat: &Catalog,
    args: &ScenarioOptions,
    machine_ids: &[String],
    format: OutFormat,
    out: &mut impl Write,
) -> Result<i32, Failure> {
    if machine_ids.len() < 2 {
        return Err(usage(format!(
            "compare needs at least two --machine options, got {}: e.g. `llmbound compare --machine macbook-pro-m4-pro-48gb --machine desktop-rtx-4090` (`llmbound profiles list` lists the machines)",
            machine_ids.len()
        )));
    }
    let mut first = args.clone();
    first.machine = Some(machine_ids[0].clone());
    let (base, ollama) = crate::workspace::scenario_and_ollama(cat, &first).map_err(unbuilt)?;
    let mut machines = Vec::new();
    for m in machine_ids {
        let file = cat.machine(m).map_err(bad)?;
        let mut machine = crate::profile::load::machine(&file);
        // What-if overrides apply to every machine compared.
        let mut probe = crate::core::edit::applied(
            &base,
            &[crate::core::edit::Edit::Machine(Box::new(machine.clone()))],
        )
        .map_err(|e| {
            bad(build::BuildError::Flag {
                flag: "--machine",
                message: e.to_string(),
            })
        })?;
        let mut o = args.clone();
        o.gguf = None;
        o.mmproj = None;
        o.draft = None;
        build::apply(&mut probe, &o).map_err(bad)?;
        machine = probe.machine;
        machines.push(machine);
    }
    // An Ollama model: Ollama chooses its context by each machine's VRAM (unless the options
    // set the context or sequences)
    let run = ollama
        .as_ref()
        .filter(|_| args.context.is_none() && args.sequences.is_none());
    let rows = crate::workspace::compare_machines(&base, &machines, run);
    report::compare::write(&base, &rows, format.into(), out).map_err(io_fail)?;
    Ok(0)
}

fn run_bench(
    cat: &Catalog,
    files: &[PathBuf],
    args: &ScenarioOptions,
    format: OutFormat,
    out: &mut impl Write,
) -> Result<i32, Failure> {
    let opts = args;
    let base = crate::workspace::scenario(cat, opts).map_err(unbuilt)?;
    let mut rows = Vec::new();
    for f in files {
        let more = crate::bench::load(f).map_err(bad)?;
        // The first file's rows are kept as they are (not copied into an empty list).
        if rows.is_empty() {
            rows = more;
        } else {
            rows.extend(more);
        }
    }
    // The artifact hash is recorded only when it is already known (never computed here).
    let sha = opts.gguf.as_ref().and_then(|p| {
        let a = crate::gguf::open(p).ok()?;
        if a.is_split() {
            return None;
        }
        crate::gguf::HashCache::platform()?.lookup(p).ok().flatten()
    });
    let r = crate::bench::evaluate(
        &rows,
        &base,
        &crate::bench::BenchOptions {
            gguf: opts.gguf.as_ref().map(|p| p.display().to_string()),
            artifact_sha256: sha,
        },
    );
    report::render(&r, format.into(), out).map_err(io_fail)?;
    Ok(r.exit_code())
}

fn run_detect(
    save: Option<String>,
    force: bool,
    quick: bool,
    thorough: bool,
    out: &mut impl Write,
) -> Result<i32, Failure> {
    use crate::detect::{self, Mode};
    let mode = if quick {
        Mode::Quick
    } else if thorough {
        Mode::Thorough
    } else {
        Mode::Normal
    };
    // A bad id, an existing profile or a `machines` file is refused before the measurement.
    if let Some(id) = &save
        && let Some(dir) = crate::profile::load::user_dir()
    {
        crate::profile::load::check_save(&dir, "machines", id, force).map_err(bad)?;
    }
    let tty = std::io::stderr().is_terminal();
    let mut progress = |frac: f64, what: &str| {
        if tty {
            eprint!("\r  {:>3.0}%  {what:<60}", frac * 100.0);
        }
    };
    let d = detect::detect(mode, &mut progress).map_err(bad)?;
    if tty {
        eprint!("\r{}\r", " ".repeat(70));
    }
    for w in &d.warnings {
        eprintln!("llmbound: warning: {}", Text(w));
    }
    for n in d.all_notes() {
        eprintln!("llmbound: note: {}", Text(&n));
    }
    let id = save
        .clone()
        .unwrap_or_else(|| detect::DEFAULT_ID.to_string());
    let text = d.to_toml(&id).map_err(bad)?;
    write!(out, "{}", crate::sanitize::toml(&text)).map_err(io_fail)?;
    if let Some(id) = save {
        d.check_quiet_for_save(force).map_err(bad)?;
        let path = detect::save(&d, &id, force).map_err(bad)?;
        eprintln!("llmbound: saved {}", crate::sanitize::path(&path));
    }
    Ok(0)
}

fn hash(
    cat: &Catalog,
    file: &std::path::Path,
    no_cache: bool,
    format: Format,
    out: &mut impl Write,
) -> Result<i32, Failure> {
    use crate::gguf::{HashCache, HashJob, HashMessage};
    use crate::report::hash::{HashOutcome, HashReport, HashedFile};
    if crate::remote::is_remote(file) {
        return Err(bad(crate::remote::RemoteError::NeedsLocal {
            spec: file.display().to_string(),
            what: "hashing".into(),
        }));
    }
    // Checked before anything opens it: a FIFO would block, /dev/zero never ends.
    let meta = crate::infile::check_regular_or_block(file)
        .map_err(|e| bad(format!("{}: {e}", file.display())))?;
    let block = !meta.is_file();
    let a = if block {
        None
    } else {
        Some(open_artifact(file)?)
    };
    if let Some(a) = &a
        && a.missing_bytes() > 0
    {
        let r = HashReport {
            files: Vec::new(),
            outcome: HashOutcome::Incomplete {
                missing_bytes: a.missing_bytes(),
                present_bytes: a.file_bytes(),
            },
        };
        report::render(&r, format, out).map_err(io_fail)?;
        return Ok(r.exit_code());
    }
    let paths: Vec<PathBuf> = match &a {
        Some(a) => a.paths().into_iter().map(|p| p.to_path_buf()).collect(),
        None => vec![file.to_path_buf()],
    };
    // `--no-cache` does not read the cache, but its fresh digest replaces the entry.
    let cache = HashCache::platform().map(|c| if no_cache { c.write_only() } else { c });
    let mut job = HashJob::spawn_with_cache(paths, cache);
    let tty = std::io::stderr().is_terminal();
    let digests = loop {
        match job.try_recv() {
            Some(HashMessage::Progress(p)) if tty => {
                let frac = if p.total_bytes > 0 {
                    p.bytes_done as f64 / p.total_bytes as f64
                } else {
                    1.0
                };
                let width = 30usize;
                let filled = ((frac * width as f64) as usize).min(width);
                eprint!(
                    "\r  [{}{}] {:>5.1}%  {}/s  ETA {}   ",
                    "#".repeat(filled),
                    "-".repeat(width - filled),
                    frac * 100.0,
                    crate::core::units::fmt_gb(p.bytes_per_s as u64),
                    p.eta_s.map_or("?".into(), |s| format!("{s:.0} s"))
                );
            }
            Some(HashMessage::Finished(r)) => {
                if tty {
                    eprint!("\r{}\r", " ".repeat(70));
                }
                break r.map_err(|e| match e {
                    crate::gguf::HashError::Changed { .. } => Failure {
                        code: exit::MISMATCH,
                        message: format!("{e}; not verified"),
                    },
                    e => bad(e),
                })?;
            }
            Some(_) => {}
            None => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    };
    let files: Vec<HashedFile> = digests
        .iter()
        .map(|d| HashedFile {
            path: d.path.to_string_lossy().into_owned(),
            sha256: d.sha256.clone(),
            from_cache: d.from_cache,
            read_at_s: d.read_at_s,
        })
        .collect();
    let matched = match &a {
        Some(a) => cat.artifact_with_bytes(a.file_bytes()),
        // A block device has no file size to match: match by the digest itself.
        None => digests.first().and_then(|d| {
            cat.models.iter().find_map(|m| {
                m.value
                    .artifacts
                    .iter()
                    .find(|x| x.sha256.as_deref() == Some(d.sha256.as_str()))
                    .map(|x| (m.value.clone(), x.clone()))
            })
        }),
    };
    let outcome = match (&matched, digests.as_slice()) {
        (Some((m, art)), [one]) => match &art.sha256 {
            Some(pinned) if *pinned == one.sha256 => HashOutcome::Verified {
                model: m.id.clone(),
                artifact: art.id.clone(),
                file: art.file.clone(),
            },
            Some(pinned) => HashOutcome::Mismatch {
                artifact: art.id.clone(),
                pinned: pinned.clone(),
                bytes: art.bytes,
            },
            None => HashOutcome::SizeMatchNotPinned {
                artifact: art.id.clone(),
            },
        },
        _ => HashOutcome::NotPinned {
            block_device: block,
        },
    };
    let r = HashReport { files, outcome };
    report::render(&r, format, out).map_err(io_fail)?;
    Ok(r.exit_code())
}

fn profiles(cat: &Catalog, action: ProfilesCmd, out: &mut impl Write) -> Result<i32, Failure> {
    let origin = |o: &Origin| match o {
        Origin::Builtin => "built-in".to_string(),
        Origin::File(p) => crate::sanitize::path(p),
    };
    match action {
        ProfilesCmd::List => {
            // Temp files of saves that were killed before their rename.
            if let Some(d) = &cat.user_dir {
                for kind in ["machines", "models", "scenarios"] {
                    crate::profile::load::clean_stale_temps(&d.join(kind));
                }
            }
            let mut w = |s: String| writeln!(out, "{s}").map_err(io_fail);
            w("machines".into())?;
            for e in &cat.machines {
                w(format!(
                    "  {:<34} {}  [{}]",
                    Text(&e.id),
                    Text(&e.value.name),
                    origin(&e.origin)
                ))?;
            }
            w("models".into())?;
            for e in &cat.models {
                let arts: Vec<&str> = e.value.artifacts.iter().map(|a| a.id.as_str()).collect();
                w(format!(
                    "  {:<34} {} ({}){}  [{}]",
                    Text(&e.id),
                    Text(&e.value.name),
                    Text(&e.value.architecture),
                    if arts.is_empty() {
                        String::new()
                    } else {
                        format!("; artifacts: {}", Text(&arts.join(", ")))
                    },
                    origin(&e.origin)
                ))?;
            }
            w("scenarios".into())?;
            for e in &cat.scenarios {
                w(format!(
                    "  {:<34} {}  [{}]",
                    Text(&e.id),
                    Text(&e.value.name),
                    origin(&e.origin)
                ))?;
            }
            Ok(0)
        }
        ProfilesCmd::Show { id } => {
            let text = if let Ok(m) = cat.machine(&id) {
                toml::to_string_pretty(&m).map_err(bad)?
            } else if let Ok(m) = cat.model(&id) {
                toml::to_string_pretty(&m).map_err(bad)?
            } else if let Ok(s) = cat.scenario(&id) {
                toml::to_string_pretty(&s).map_err(bad)?
            } else {
                return Err(bad(format!(
                    "no machine, model or scenario \"{id}\" (see `llmbound profiles list`)"
                )));
            };
            write!(out, "{}", crate::sanitize::toml(&text)).map_err(io_fail)?;
            Ok(0)
        }
        ProfilesCmd::Path => {
            match &cat.user_dir {
                Some(d) => writeln!(out, "{}", crate::sanitize::path(d)).map_err(io_fail)?,
                None => {
                    return Err(bad(
                        "no user profile directory on this platform: set LLMBOUND_CONFIG_DIR to one",
                    ));
                }
            }
            Ok(0)
        }
    }
}
