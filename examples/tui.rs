//! Run the explorer on the default scenario, or on a GGUF file: `cargo run --example tui [FILE]`.

fn main() -> color_eyre::Result<()> {
    color_eyre::install()?;
    let gguf = std::env::args_os().nth(1).map(std::path::PathBuf::from);
    llmbound::tui::run(llmbound::tui::Options {
        scenario: Default::default(),
        gguf,
    })
}
