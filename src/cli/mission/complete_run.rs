//! `world mission complete-run`: close a run, each `--criterion` naming evidence the store
//! holds.

use super::*;

/// The flags of `world mission complete-run`.
#[derive(ClapArgs, Debug)]
pub struct CompleteRunArgs {
    /// The mission id
    mission: String,
    /// Run id
    #[arg(long, value_name = "R")]
    run: String,
    /// NAME=sha256:… (repeatable)
    #[arg(long = "criterion", value_name = "NAME=REF")]
    criteria: Vec<String>,
    #[command(flatten)]
    common: Common,
}

/// Run `world mission complete-run`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    a: &CompleteRunArgs,
) -> Result<Exit, CliError> {
    let CompleteRunArgs {
        mission,
        run,
        criteria,
        common,
    } = a;
    let mut m = serde_json::Map::new();
    for c in criteria {
        let Some((k, r)) = c.split_once('=') else {
            return Err(CliError::usage(
                "--criterion",
                format!("{c:?} is not NAME=sha256:REF"),
            ));
        };
        m.insert(k.to_string(), r.into());
    }
    // As for --evidence: each criterion's evidence must be content the store holds and
    // re-hashes (approve and reconcile refuse the same refs).
    if !m.is_empty() {
        let store = ctx.open_read()?;
        for (k, r) in &m {
            let r = r.as_str().unwrap_or_default();
            mission::check_evidence(r)
                .map_err(|e| CliError::usage("--criterion", format!("{k}: {e}")))?;
            match store::object_in(store.conn(), r) {
                Ok(Some(o)) if o.verifies() => {}
                Ok(_) => {
                    return Err(CliError::failed(
                        "mission complete-run",
                        format!("--criterion {k}={r} names no object in the store that re-hashes to it"),
                    )
                    .hint("store the evidence first (e.g. `world mission approve … --evidence-file FILE` or `world commit --put FILE`)"))
                }
                Err(e) => return Err(CliError::store("mission complete-run", e)),
            }
        }
    }
    write(
        ctx,
        out,
        plain(
            "mission complete-run",
            ledger,
            mission,
            common,
            build(&json!({"type": "completeRun", "runId": run, "criteria": m})),
        ),
    )
}
