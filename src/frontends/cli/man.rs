//! `llmbound man`: the manual page (roff), rendered by clap_mangen from the same clap
//! definition the parser uses. One page holds everything: the global (scenario) options, then
//! every command with its own options, then the exit codes from `crate::exit::TABLE`.

use clap::CommandFactory;
use std::io::Write;

/// Write the whole manual page.
pub(super) fn write(out: &mut impl Write) -> std::io::Result<()> {
    let mut cmd = super::Cli::command().disable_help_subcommand(true);
    cmd.build();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf: Vec<u8> = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    man.render_options_section(&mut buf)?;
    buf.extend_from_slice(b".SH COMMANDS\n");
    for sub in cmd.get_subcommands() {
        command(&mut buf, sub, "llmbound")?;
    }
    buf.extend_from_slice(b".SH \"EXIT STATUS\"\n");
    for (code, meaning) in crate::exit::TABLE {
        buf.extend_from_slice(format!(".TP\n\\fB{code}\\fR\n{}\n", text(meaning)).as_bytes());
    }
    buf.extend_from_slice(
        format!(
            ".SH ENVIRONMENT\n.TP\n\\fBLLMBOUND_CONFIG_DIR\\fR\n{}\n.TP\n\\fBNO_COLOR\\fR\n{}\n.TP\n\\fBLLMBOUND_AUTO_HASH\\fR\n{}\n",
            text("The directory of the user's profiles (machines/, models/, scenarios/); `llmbound profiles path` prints the one in use."),
            text("Set to any value: the explorer draws without colour."),
            text("off (or 0, false): the explorer does not hash a local file on opening when its size matches a pinned artifact; Enter on the Artifact pane still does. Default on.")
        )
        .as_bytes(),
    );
    man.render_version_section(&mut buf)?;
    out.write_all(&buf)
}

/// One command: a subsection with its synopsis, what it does and its own options (the
/// scenario options are global and listed once, under OPTIONS).
fn command(buf: &mut Vec<u8>, sub: &clap::Command, parent: &str) -> std::io::Result<()> {
    let name = format!("{parent} {}", sub.get_name());
    if sub.has_subcommands() {
        for s in sub.get_subcommands() {
            command(buf, s, &name)?;
        }
        return Ok(());
    }
    let own: Vec<&clap::Arg> = sub
        .get_arguments()
        .filter(|a| !a.is_global_set() && !a.is_hide_set())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    // Arguments of a required group (check's --tokens-per-second | --from-bench) read as one
    // choice.
    let grouped: Vec<Vec<&clap::Arg>> = sub
        .get_groups()
        .filter(|g| g.is_required_set())
        .map(|g| {
            own.iter()
                .copied()
                .filter(|a| g.get_args().any(|id| id == a.get_id()))
                .collect()
        })
        .collect();
    let mut usage = format!("\\fB{}\\fR", text(&name));
    for g in &grouped {
        let words: Vec<String> = g.iter().map(|a| bare_word(a)).collect();
        usage.push_str(&format!(" ({})", words.join(" | ")));
    }
    for a in &own {
        if grouped.iter().flatten().any(|g| g.get_id() == a.get_id()) {
            continue;
        }
        usage.push(' ');
        usage.push_str(&synopsis_word(a));
    }
    if SCENARIO_COMMANDS.contains(&sub.get_name()) {
        usage.push_str(" [\\fIscenario options\\fR]");
    }
    buf.extend_from_slice(format!(".SS \"{}\"\n{usage}\n.br\n", text(&name)).as_bytes());
    if let Some(about) = sub.get_long_about().or_else(|| sub.get_about()) {
        buf.extend_from_slice(format!("{}\n", text(&about.to_string())).as_bytes());
    }
    // clap_mangen renders the option list; demote its section heading to a paragraph.
    let own_cmd = clap::Command::new("options")
        .disable_help_flag(true)
        .args(own.iter().map(|a| (*a).clone()));
    let mut opts = Vec::new();
    clap_mangen::Man::new(own_cmd).render_options_section(&mut opts)?;
    let opts = String::from_utf8_lossy(&opts).replace(".SH OPTIONS\n", ".PP\n");
    buf.extend_from_slice(opts.as_bytes());
    Ok(())
}

/// The commands that take the scenario options.
const SCENARIO_COMMANDS: &[&str] = &["report", "check", "compare", "bench"];

/// How one argument reads in a synopsis line.
fn synopsis_word(a: &clap::Arg) -> String {
    let word = bare_word(a);
    if a.is_required_set() {
        word
    } else {
        format!("[{word}]")
    }
}

/// An argument with its value, without brackets.
fn bare_word(a: &clap::Arg) -> String {
    let value = a
        .get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.to_string())
        .unwrap_or_else(|| a.get_id().to_string().to_uppercase());
    match a.get_long() {
        Some(l) if a.get_action().takes_values() => {
            format!("\\fB\\-\\-{}\\fR \\fI{}\\fR", text(l), text(&value))
        }
        Some(l) => format!("\\fB\\-\\-{}\\fR", text(l)),
        None => format!("\\fI{}\\fR", text(&value)),
    }
}

/// Text safe in roff: backslashes and hyphens escaped, no line starting a request.
fn text(s: &str) -> String {
    let t = s.replace('\\', "\\e").replace('-', "\\-");
    t.lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
