//! Step 7 (R8, transitions.md §9): the episode's handler context and registry, and why a
//! declared effect has no handler when none serves it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::authority::approvals::StoreApprovals;
use crate::authority::session;
use crate::broker::{self, handlers::HandlerContext, handlers::HandlerRegistry};
use crate::store::{Error as StoreError, Store};
use crate::transitions::registry::Descriptor;

use super::{Host, InvokeError};

/// The handler context and registry for an episode: worktree from the override or the
/// episode's binding (`<root>/<episode>`).
pub fn episode_handlers(
    store: &Store,
    episode: &str,
    host: &Host<'_>,
) -> Result<(HandlerContext, HandlerRegistry), StoreError> {
    let root = match &host.workspace_root {
        Some(r) => Some(r.clone()),
        None => session::binding(store.conn(), episode)?
            .map(|b| b.workspace_root)
            .filter(|r| !r.is_empty())
            .map(PathBuf::from),
    };
    let ctx = HandlerContext {
        episode: episode.to_string(),
        worktree: root.map(|r| r.join(episode)),
        db_path: store.path().to_path_buf(),
        tool: host.tool.clone(),
        run_caps: host.run_caps.clone(),
        examples_dir: host.examples_dir.clone(),
        git_bin: broker::handlers::process::find_in_path(
            "git",
            std::env::var_os("PATH").as_deref(),
        ),
        exec: host.exec.clone(),
    };
    let mut services = host.services.clone();
    if services.approvals.is_none() && store.is_writer() {
        // `Human.*` are served over this store (§12); a read-only caller (`world tools list`)
        // lists them without a writing connection.
        services.approvals = Some(Arc::new(StoreApprovals::for_writer(store)?));
    }
    let reg = HandlerRegistry::for_episode(&ctx, services);
    Ok((ctx, reg))
}

/// Why `effect` has no handler for this episode, for the operator (R8 keeps the wire text).
pub(super) fn unserved_reasons(
    effect: &str,
    ctx: &HandlerContext,
    handlers: &HandlerRegistry,
) -> Vec<String> {
    let mut why: Vec<String> = handlers.warnings().to_vec();
    let needs_worktree =
        effect.starts_with("Workspace.") || effect.starts_with("Ailang.") || effect == "Git.Commit";
    if needs_worktree {
        match &ctx.worktree {
            None => why.push(format!(
                "{effect} needs the episode worktree: mint the session with --workspace-root DIR (or pass --workspace-root DIR) and create DIR/{}",
                ctx.episode
            )),
            Some(w) if !w.is_dir() => why.push(format!(
                "{effect} needs the episode worktree {}, which is not a directory; create it",
                w.display()
            )),
            Some(_) => {}
        }
    }
    if effect.starts_with("Ailang.") && ctx.tool.is_none() {
        why.push(format!(
            "{effect} runs the pinned tool binary: pass --tool-ailang-bin PATH"
        ));
    }
    if effect == "Git.Commit" && ctx.worktree.as_ref().is_some_and(|w| w.is_dir()) {
        why.push(
            "Git.Commit needs a git repository in the worktree and a git executable on PATH".into(),
        );
    }
    why
}

/// Step 7 (R8): every declared effect needs a handler, else
/// [`InvokeError::EffectsUnsupported`] with the reasons none serves it.
pub(super) fn check_handlers(
    desc: &Descriptor,
    hctx: &HandlerContext,
    handlers: &HandlerRegistry,
) -> Result<(), InvokeError> {
    for e in &desc.declared_effects {
        if handlers.handler_for(&e.effect).is_none() {
            return Err(InvokeError::EffectsUnsupported(
                e.effect.clone(),
                unserved_reasons(&e.effect, hctx, handlers),
            ));
        }
    }
    Ok(())
}
