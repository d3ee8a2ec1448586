//! The embedded executor `ailang-subset` (ailang.md §6): its identity, and the
//! [`Interpreter`] implementation the capsule calls.

use super::run::{check_outcome, run, Options, RunRequest};
use sha2::{Digest, Sha256};
use std::time::Instant;
use world_interp::{CheckOutcome, Interpreter, RunError, RunLimits, RunOutcome};

/// The dialect number: changes only when the subset's meaning changes (ailang.md §6).
pub const DIALECT: u32 = 1;
/// The identity string whose sha256 is the interpreter ref.
pub const IDENTITY: &str = "world/ailang-subset/v1|dialect:1";
/// The whole `--version` text (its first line is the release string).
pub const VERSION_TEXT: &str = "world-ailang-subset dialect 1\n";
/// The file label used inside the capsule (transitions.md §6).
pub const CAPSULE_LABEL: &str = "host/capsule/main.ail";

/// The embedded AILANG subset interpreter.
#[derive(Clone, Debug)]
pub struct Embedded {
    reference: String,
}

impl Default for Embedded {
    fn default() -> Self {
        Self::new()
    }
}

impl Embedded {
    /// The interpreter with ref `sha256:<hex of sha256(IDENTITY)>`.
    pub fn new() -> Self {
        let digest = Sha256::digest(IDENTITY.as_bytes());
        Embedded {
            reference: format!("sha256:{}", hex::encode(digest)),
        }
    }
}

impl Interpreter for Embedded {
    fn interpreter_ref(&self) -> &str {
        &self.reference
    }

    fn version_text(&self) -> &str {
        VERSION_TEXT
    }

    /// `check` with `MOD010` relaxed; `diagnostics` holds the stderr lines.
    fn check(&self, source: &[u8], limits: RunLimits) -> Result<CheckOutcome, RunError> {
        let out = check_outcome(
            CAPSULE_LABEL,
            source,
            &Options {
                quiet: true,
                ..Options::default()
            },
        );
        if Instant::now() >= limits.deadline {
            return Err(RunError::Timeout);
        }
        Ok(CheckOutcome {
            passed: out.exit_code == 0,
            diagnostics: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// `run --quiet --caps "" --entry main --args-file <args>`.
    fn run(&self, source: &[u8], args: &[u8], limits: RunLimits) -> Result<RunOutcome, RunError> {
        run(RunRequest {
            label: CAPSULE_LABEL.to_string(),
            source: source.to_vec(),
            entry: "main".to_string(),
            args: Some(args.to_vec()),
            deadline: Some(limits.deadline),
            output_cap: limits.output_cap,
            options: Options {
                quiet: true,
                // Published sources were checked whole at publish time.
                skip_tests: true,
                ..Options::default()
            },
        })
    }
}

/// Why `source` cannot serve as a transition's capsule entry, or `None` when it can or when the
/// subset cannot tell (transitions.md §7: "every transition exports `main(input: string) ->
/// string`"; the capsule runs `--entry main` with one JSON string argument).
///
/// Returns a one-line reason when the module parses and its `main` is missing, takes other than
/// exactly one parameter, or declares a parameter or result type other than `string` (an
/// undeclared type is accepted, as the run would accept it). A source the subset's parser does
/// not accept gives `None`: the pinned interpreter's own check has already passed it, and a
/// newer dialect must not be refused on the subset's account.
pub fn capsule_entry_problem(source: &str) -> Option<String> {
    use crate::ast::TypeExpr;
    let module = crate::parser::parse_module(source).ok()?;
    let Some(main) = module.funcs.iter().find(|f| &*f.name == "main") else {
        return Some("the module defines no function `main`".to_string());
    };
    let is_string = |t: &Option<TypeExpr>| match t {
        None => true,
        Some(TypeExpr::Named(name, args, _)) => &**name == "string" && args.is_empty(),
        Some(_) => false,
    };
    match main.params.as_slice() {
        [p] if !is_string(&p.ty) => Some(format!(
            "`main`'s parameter `{}` is not declared `string`",
            p.name
        )),
        [_] if !is_string(&main.ret) => Some("`main` does not return `string`".to_string()),
        [_] => None,
        params => Some(format!(
            "`main` takes {} parameters, not one (`input: string`)",
            params.len()
        )),
    }
}

/// `world ailang --version`: the version text.
pub fn cli_version() -> &'static str {
    VERSION_TEXT
}

/// True when `reference` is the ref of a dialect this build runs (today only [`DIALECT`]);
/// replay of an entry recorded under another embedded dialect must stop (ailang.md §6).
pub fn runs_ref(reference: &str) -> bool {
    reference == Embedded::new().interpreter_ref()
}

/// `world ailang check --json FILE` (ailang.md §2 `--json`).
pub fn cli_check_json(path_label: &str, bytes: &[u8], opts: &Options) -> RunOutcome {
    super::run::check_json_outcome(path_label, bytes, opts)
}

/// `world ailang check FILE`: `path_label` is the path as typed; exit 0 pass, 1 errors.
pub fn cli_check(path_label: &str, bytes: &[u8], opts: &Options) -> RunOutcome {
    check_outcome(path_label, bytes, opts)
}

/// `world ailang run [--entry E] [--args-json J] FILE`. `args_json` `None` means `null`.
/// Bounds come from `limits`; a timeout or output overflow is a [`RunError`].
pub fn cli_run(
    path_label: &str,
    bytes: &[u8],
    entry: &str,
    args_json: Option<&str>,
    limits: RunLimits,
    opts: &Options,
) -> Result<RunOutcome, RunError> {
    run(RunRequest {
        label: path_label.to_string(),
        source: bytes.to_vec(),
        entry: entry.to_string(),
        args: args_json.map(|s| s.as_bytes().to_vec()),
        deadline: Some(limits.deadline),
        output_cap: limits.output_cap,
        options: opts.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_the_dialect_hash() {
        let e = Embedded::new();
        assert!(e.interpreter_ref().starts_with("sha256:"));
        assert_eq!(e.interpreter_ref().len(), 71);
        assert_eq!(e.release(), "world-ailang-subset dialect 1");
        assert!(!e.release().starts_with("AILANG v"));
    }
}
