//! The `world` binary: parse, guard, dispatch, print the error, exit. All logic is in the library.

use std::process::ExitCode;

use world::cli::{self, Exit};

fn main() -> ExitCode {
    let json = cli::argv_wants_json(std::env::args_os());
    if std::env::var_os("AILANG_REGISTRY_API_KEY").is_some() {
        let err = cli::CliError::usage("refusing to run", "AILANG_REGISTRY_API_KEY is set in the environment; unset it (world never uses registry credentials from the environment)").with_code("registry_key_in_env");
        cli::print_error(&err, json);
        return ExitCode::from(Exit::Usage.code());
    }
    let cli = match cli::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => return cli::print_clap_error(e, json),
    };
    let json = cli.root.json;
    match cli::run(cli) {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(err) => {
            cli::print_error(&err, json);
            ExitCode::from(err.exit.code())
        }
    }
}
