//! The `world` binary: parse, guard, dispatch, print the error, exit. All logic is in the library.

use std::process::ExitCode;

use clap::Parser;
use world::cli::{self, Cli, Exit};

fn main() -> ExitCode {
    if std::env::var_os("AILANG_REGISTRY_API_KEY").is_some() {
        eprintln!("world: refusing to run: AILANG_REGISTRY_API_KEY is set in the environment; unset it (world never uses registry credentials from the environment)");
        return ExitCode::from(Exit::Usage.code());
    }
    let cli = Cli::parse();
    match cli::run(cli) {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(err) => {
            let text = err.render();
            if !text.is_empty() {
                eprintln!("{text}");
            }
            ExitCode::from(err.exit.code())
        }
    }
}
