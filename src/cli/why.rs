//! `world why`: walk the provenance of an entry and verify every link (store-format.md §13.2).

use std::path::PathBuf;

use super::output::Output;
use super::{read_input, CliError, Context, Exit};
use crate::store::read::{Space, WhyError, WhyTarget as Target};

/// Explain where a world, entry, object, invocation or result came from, re-hashing each
/// object and recomputing each link. Exit 0 when every link holds, 3 on a broken link, 1 when
/// the target is not found.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// An entry index, `head`, a ref (entry hash, world, object; full, bare hex or unique
    /// prefix ≥ 6 hex), an invocation id (cli:/a2a:/mcp:/rest:), or `-` for a result on stdin
    #[arg(value_name = "TARGET", required_unless_present = "result")]
    target: Option<String>,
    /// A result file: the output an invoke printed, or its `invoke --json` object (walked by
    /// its invocationId); one trailing LF is ignored
    #[arg(long, value_name = "FILE", conflicts_with = "target")]
    result: Option<PathBuf>,
    /// How many entries back from the head to search for non-index targets (1..5000)
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=5000))]
    scan: u32,
}

fn strip_lf(mut b: Vec<u8>) -> Vec<u8> {
    if b.last() == Some(&b'\n') {
        b.pop();
    }
    b
}

/// What `why -` / `--result` walks: an `invoke --json` object (one line naming
/// `invocationId` and `outputRef`) by its invocation id, anything else as result bytes.
fn result_target(bytes: Vec<u8>) -> Target {
    let id = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .filter(|v| v.get("outputRef").is_some_and(|o| o.is_string()))
        .and_then(|v| v.get("invocationId")?.as_str().map(str::to_string));
    match id {
        Some(id) => Target::Invocation(id),
        None => Target::Result(bytes),
    }
}

/// Run `world why`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    // Set when TARGET was an entry hash (walked as its index): the answer says "entry".
    let mut by_entry_hash = false;
    if args.target.as_deref() == Some("-")
        || args.result.as_deref() == Some(std::path::Path::new("-"))
    {
        super::stdin_not_terminal("why", "the result bytes to explain")?;
    }
    let target = match (&args.target, &args.result) {
        (_, Some(file)) => result_target(strip_lf(read_input(file, 8 * 1024 * 1024, "why")?)),
        (Some(t), None) if t == "-" => result_target(strip_lf(read_input(
            std::path::Path::new("-"),
            8 * 1024 * 1024,
            "why",
        )?)),
        (Some(t), None) if t == "head" => Target::Head,
        (Some(t), None)
            if t.starts_with("sha256:")
                || (t.len() >= 6
                    && t.bytes().all(|b| b.is_ascii_hexdigit() || b == b'.')
                    && !t.bytes().all(|b| b.is_ascii_digit()))
                || t.ends_with('…') =>
        {
            // Entries, worlds and objects by full ref, bare hex or unique prefix; an entry
            // hash (as `world log` prints it) is walked as its index.
            let store = ctx.open_read()?;
            let c = super::refs::resolve(
                &store,
                &[Space::Entry, Space::World, Space::Object],
                t,
                "why",
            )?;
            match c.space {
                Space::Entry => {
                    let idx = store
                        .entry_index_of(&c.reference)
                        .map_err(|e| super::refs::ref_err("why", e))?;
                    match idx {
                        Some(i) => {
                            by_entry_hash = true;
                            Target::Index(i)
                        }
                        None => Target::Ref(c.reference),
                    }
                }
                _ => Target::Ref(c.reference),
            }
        }
        (Some(t), None) if t.bytes().all(|b| b.is_ascii_digit()) => Target::Index(
            t.parse()
                .map_err(|_| CliError::failed("why", "log index out of range"))?,
        ),
        (Some(t), None)
            if ["cli:", "a2a:", "mcp:", "rest:"]
                .iter()
                .any(|p| t.starts_with(p)) =>
        {
            Target::Invocation(t.clone())
        }
        (Some(t), None) => {
            return Err(CliError::failed(
                "why",
                format!("{t:?} is not an index, head, a sha256 ref, an invocation id or -"),
            ))
        }
        (None, None) => return Err(CliError::usage("why", "give a TARGET or --result FILE")),
    };
    let store = ctx.open_read()?;
    let mut why = store.why(&target, args.scan).map_err(|e| match e {
        WhyError::NotFound(m) => CliError::failed("why", m),
        WhyError::Store(s) => CliError::store("why", s),
    })?;
    if by_entry_hash {
        why.matched_by = "entry".into();
    }
    if out.json {
        out.json_line(&why)?;
    } else {
        let h = &why.entry.header;
        // Values a client wrote (writtenBy, semantic ids in the details) are shown escaped
        // (DEC-TRUST3-4).
        let esc = crate::termtext::escape_line;
        out.view(format!(
            "#{} {} prev {} fn {} interpreter {} (matched by {})",
            h.entry_index,
            esc(&h.written_by),
            h.prev_entry_hash,
            h.transition_fn,
            h.interpreter,
            why.matched_by
        ))?;
        if let Some(n) = &why.note {
            out.view(format!("note: {}", esc(n)))?;
        }
        for l in &why.links {
            out.view(format!(
                "{} {:<7} {}{}",
                if l.ok {
                    super::output::paint("✓", 32, out.color)
                } else {
                    super::output::paint("✗", 31, out.color)
                },
                l.name,
                l.reference
                    .as_deref()
                    .map(|r| format!("{} ", esc(r)))
                    .unwrap_or_default(),
                esc(&l.detail)
            ))?;
        }
        let broken = why.links.iter().filter(|l| !l.ok).count();
        if broken == 0 {
            out.view(format!("all {} link(s) verified", why.links.len()))?;
        } else {
            out.view(format!(
                "{broken} of {} link(s) BROKEN — integrity refusal (exit 3)",
                why.links.len()
            ))?;
        }
    }
    Ok(if why.ok {
        Exit::Success
    } else {
        Exit::Integrity
    })
}
