//! The `llmbound` binary: everything lives in the library; this only sets up error reports.

fn main() {
    let _ = color_eyre::install();
    std::process::exit(llmbound::cli::main());
}
