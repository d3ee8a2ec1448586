//! `FS.Read` / `FS.Write`: the direct file handler whose scope is one canonical absolute file
//! path (authority-and-broker.md §12 row 3, §13 "FS.* scope"; new in `world`).
//!
//! The scope must be canonical: absolute, and its physical resolution
//! ([`confine::resolve_physical`]) must be itself (no symlink, no `.`/`..`, no trailing `/`).
//! The request path must be absolute and resolve to exactly the scope. Ops and outputs are
//! those of the workspace handler: `read` for `FS.Read`; `write` and `edit` for `FS.Write`
//! (an `FS.Write` never creates directories). The file is opened from `/` one component at a
//! time with `O_NOFOLLOW`, so a symlink swapped in after the check is never followed.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use super::confine::{self, ConfineError};
use super::workspace::{do_edit, do_read, do_write, file_op, FileRefusal, FileTarget};
use super::{payload_object, required_str, Handler, HandlerContext, HandlerOutcome, FS_WRITE};

/// The `FS.Read` or `FS.Write` handler.
pub struct FsHandler {
    effect: &'static str,
}

impl FsHandler {
    /// A handler for `effect` ([`super::FS_READ`] or [`FS_WRITE`]).
    pub fn new(effect: &'static str) -> Self {
        FsHandler { effect }
    }

    fn run(&self, scope: &str, payload: &Value) -> Result<HandlerOutcome, FileRefusal> {
        let effect = self.effect;
        let write = effect == FS_WRITE;
        let scope_path = Path::new(scope);
        let canonical = scope.starts_with('/')
            && !scope.contains('\0')
            && confine::resolve_physical(scope_path)
                .is_ok_and(|r| r.as_os_str() == scope_path.as_os_str());
        if !canonical {
            return Err(FileRefusal::FsScope {
                effect,
                scope: scope.to_owned(),
            });
        }
        let obj = payload_object(payload)?;
        let op = file_op(obj, effect, write)?;
        let path = required_str(obj, "path", effect)?;
        if !path.starts_with('/') || path.contains('\0') {
            return Err(FileRefusal::FsPath {
                effect,
                path: path.to_owned(),
            });
        }
        match confine::resolve_physical(Path::new(path)) {
            Ok(resolved) if resolved.as_os_str() == scope_path.as_os_str() => {}
            Ok(resolved) => {
                return Err(FileRefusal::FsOutsideScope {
                    effect,
                    path: path.to_owned(),
                    resolved: resolved.display().to_string(),
                    scope: scope.to_owned(),
                })
            }
            Err(source) => {
                return Err(ConfineError::Io {
                    path: path.to_owned(),
                    source,
                }
                .into());
            }
        }
        let relative = scope_path.strip_prefix("/").unwrap_or(scope_path);
        let target = FileTarget {
            base: Path::new("/"),
            relative,
            request: path,
        };
        Ok(match op {
            "read" => do_read(&target),
            "write" => do_write(&target, required_str(obj, "content", effect)?, false),
            _ => do_edit(
                &target,
                required_str(obj, "old_text", effect)?,
                required_str(obj, "new_text", effect)?,
            ),
        })
    }
}

impl Handler for FsHandler {
    fn effect(&self) -> &'static str {
        self.effect
    }

    fn execute(
        &self,
        _ctx: &HandlerContext,
        scope: &str,
        payload: &Value,
        _deadline: Instant,
    ) -> HandlerOutcome {
        self.run(scope, payload)
            .unwrap_or_else(|refusal| HandlerOutcome::Failed(refusal.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::FS_READ;
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::symlink;

    fn call(effect: &'static str, scope: &str, payload: Value) -> HandlerOutcome {
        FsHandler::new(effect).execute(&HandlerContext::default(), scope, &payload, Instant::now())
    }

    #[test]
    fn reads_and_writes_exactly_the_scope() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical");
        let file = base.join("notes.txt");
        std::fs::write(&file, "one").expect("write");
        let scope = file.display().to_string();
        match call(FS_READ, &scope, json!({"op":"read","path":scope})) {
            HandlerOutcome::Succeeded(out) => {
                let v: Value = serde_json::from_slice(&out).expect("json");
                assert_eq!(v["content"], json!("one"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            call(
                FS_WRITE,
                &scope,
                json!({"op":"write","path":scope,"content":"two"})
            ),
            HandlerOutcome::Succeeded(_)
        ));
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "two");
    }

    #[test]
    fn attack_fs_read_of_a_path_that_is_not_the_scope() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::write(base.join("granted.txt"), "ok").expect("write");
        std::fs::write(base.join("secret.txt"), "no").expect("write");
        let scope = base.join("granted.txt").display().to_string();
        let other = base.join("secret.txt").display().to_string();
        match call(FS_READ, &scope, json!({"op":"read","path":other})) {
            HandlerOutcome::Failed(msg) => {
                assert!(msg.contains("not to the grant's scope"), "{msg}")
            }
            o => panic!("{o:?}"),
        }
        // A symlink that resolves to the scope is the scope; one that resolves elsewhere is not.
        symlink(base.join("granted.txt"), base.join("alias")).expect("symlink");
        let alias = base.join("alias").display().to_string();
        assert!(matches!(
            call(FS_READ, &scope, json!({"op":"read","path":alias})),
            HandlerOutcome::Succeeded(_)
        ));
        // `..` spelled into the request is resolved, not compared as text.
        let dotted = format!("{}/x/../granted.txt", base.display());
        assert!(matches!(
            call(FS_READ, &scope, json!({"op":"read","path":dotted})),
            HandlerOutcome::Failed(_)
        ));
        // Relative paths and non-canonical scopes are refused.
        assert!(matches!(
            call(FS_READ, &scope, json!({"op":"read","path":"granted.txt"})),
            HandlerOutcome::Failed(_)
        ));
        let alias_scope = base.join("alias").display().to_string();
        match call(
            FS_READ,
            &alias_scope,
            json!({"op":"read","path":alias_scope}),
        ) {
            HandlerOutcome::Failed(msg) => {
                assert!(msg.contains("not a canonical absolute file path"), "{msg}")
            }
            o => panic!("{o:?}"),
        }
        // A write op under FS.Read changes nothing.
        assert!(matches!(
            call(
                FS_READ,
                &scope,
                json!({"op":"write","path":scope,"content":"x"})
            ),
            HandlerOutcome::Failed(_)
        ));
        assert_eq!(
            std::fs::read_to_string(base.join("granted.txt")).expect("read"),
            "ok"
        );
    }

    #[test]
    fn fs_write_through_a_symlink_leaf_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::write(base.join("victim"), "keep").expect("write");
        // The scope names a file that does not exist yet; the attacker plants a symlink there
        // after the grant was minted: the resolution no longer equals the scope.
        let scope = base.join("planned.txt").display().to_string();
        symlink(base.join("victim"), base.join("planned.txt")).expect("symlink");
        assert!(matches!(
            call(
                FS_WRITE,
                &scope,
                json!({"op":"write","path":scope,"content":"pwn"})
            ),
            HandlerOutcome::Failed(_)
        ));
        assert_eq!(
            std::fs::read_to_string(base.join("victim")).expect("read"),
            "keep"
        );
    }
}
