//! `Git.Commit`: commits the worktree's staged changes with the `git` CLI
//! (authority-and-broker.md §12 row 4; new in `world`; residual R-SE-5).
//!
//! Payload `{"op":"commit","message":TEXT}` (message non-empty, at most 65536 bytes, no NUL),
//! scope `worktree`. Output `{"ok":true,"commit":"<hex id>"}`.
//!
//! The worktree's own configuration is agent-writable (R-SE-5), so the command neutralises what
//! would run code or talk to anything: hooks (`core.hooksPath=/dev/null`, `--no-verify`),
//! `core.fsmonitor`, signing (`commit.gpgsign=false`), the pager; system and global config are
//! ignored; the identity is fixed; the message goes on stdin (`-F -`), never on argv.
//! Discovery cannot climb above the worktree (`GIT_CEILING_DIRECTORIES`). A commit that passes
//! its deadline is [`HandlerOutcome::Indeterminate`]: it may have happened.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::{json, Value};

use super::confine::Sandbox;
use super::process::{base_env, run_child, ChildError, ChildSpec};
use super::{check_keys, payload_object, required_str, Handler, HandlerContext, HandlerOutcome};
use super::{GIT_COMMIT, WORKTREE_SCOPE};

/// Longest commit message accepted, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 65536;

/// Author and committer of every `Git.Commit`.
pub const COMMIT_IDENTITY: (&str, &str) = ("world", "world@localhost");

/// The `Git.Commit` handler of one episode.
pub struct GitCommitHandler {
    sandbox: Sandbox,
    git: PathBuf,
}

impl GitCommitHandler {
    /// A handler committing in `sandbox`'s root with the `git` executable at `git` (absolute).
    pub fn new(sandbox: Sandbox, git: PathBuf) -> Self {
        GitCommitHandler { sandbox, git }
    }

    fn git(&self, ctx: &HandlerContext, args: &[&str], stdin: &[u8]) -> ChildSpec {
        let root = self.sandbox.root();
        let mut env = base_env(&ctx.cache_dir());
        let (name, email) = COMMIT_IDENTITY;
        let ceiling = root
            .parent()
            .map(|p| p.as_os_str().to_owned())
            .unwrap_or_else(|| OsString::from("/"));
        env.extend([
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
            ("GIT_TERMINAL_PROMPT".into(), "0".into()),
            ("GIT_CEILING_DIRECTORIES".into(), ceiling),
            ("GIT_AUTHOR_NAME".into(), name.into()),
            ("GIT_AUTHOR_EMAIL".into(), email.into()),
            ("GIT_COMMITTER_NAME".into(), name.into()),
            ("GIT_COMMITTER_EMAIL".into(), email.into()),
        ]);
        let mut all: Vec<OsString> = [
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.pager=cat",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        all.extend(args.iter().map(OsString::from));
        ChildSpec {
            program: self.git.clone(),
            args: all,
            cwd: root.to_path_buf(),
            env,
            stdin: stdin.to_vec(),
            output_cap: 1024 * 1024,
        }
    }

    fn run(
        &self,
        ctx: &HandlerContext,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome {
        if scope != WORKTREE_SCOPE {
            return HandlerOutcome::Failed(format!(
                "{GIT_COMMIT} refused: scope {scope:?} is not {WORKTREE_SCOPE:?}"
            ));
        }
        let message = match payload_object(payload)
            .map_err(String::from)
            .and_then(|obj| {
                check_keys(obj, &["op", "message"], GIT_COMMIT)?;
                let op = required_str(obj, "op", GIT_COMMIT)?;
                if op != "commit" {
                    return Err(format!(
                        "{GIT_COMMIT} refuses op {op:?}: it admits only commit"
                    ));
                }
                Ok(required_str(obj, "message", GIT_COMMIT)?)
            }) {
            Ok(message) => message,
            Err(msg) => return HandlerOutcome::Failed(msg),
        };
        if message.trim().is_empty() || message.len() > MAX_MESSAGE_BYTES || message.contains('\0')
        {
            return HandlerOutcome::Failed(format!(
                "{GIT_COMMIT} refused: the message must be non-empty text of at most {MAX_MESSAGE_BYTES} bytes without NUL"
            ));
        }
        let spec = self.git(
            ctx,
            &[
                "commit",
                "--no-verify",
                "--quiet",
                "--cleanup=verbatim",
                "-F",
                "-",
            ],
            message.as_bytes(),
        );
        match run_child(&spec, deadline) {
            Ok(out) if out.exit_code == 0 => {}
            Ok(out) => {
                let mut text = String::from_utf8_lossy(&out.stderr).trim().to_owned();
                if text.is_empty() {
                    text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
                }
                return HandlerOutcome::Failed(format!(
                    "git commit exited {}: {text}",
                    out.exit_code
                ));
            }
            Err(ChildError::Spawn { program, source }) => {
                return HandlerOutcome::Failed(format!("cannot start {program}: {source}"))
            }
            Err(err) => {
                return HandlerOutcome::Indeterminate(format!(
                    "{err}; whether the commit was made is unknown"
                ))
            }
        }
        let spec = self.git(ctx, &["rev-parse", "--verify", "HEAD"], b"");
        match run_child(&spec, deadline) {
            Ok(out) if out.exit_code == 0 => {
                let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
                if id.len() >= 40 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
                    HandlerOutcome::json(&json!({"ok": true, "commit": id}))
                } else {
                    HandlerOutcome::Indeterminate(format!(
                        "git commit succeeded but HEAD reads {id:?}"
                    ))
                }
            }
            Ok(out) => HandlerOutcome::Indeterminate(format!(
                "git commit succeeded but rev-parse exited {}: {}",
                out.exit_code,
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(err) => HandlerOutcome::Indeterminate(format!(
                "git commit succeeded but reading HEAD failed: {err}"
            )),
        }
    }
}

impl Handler for GitCommitHandler {
    fn effect(&self) -> &'static str {
        GIT_COMMIT
    }

    fn execute(
        &self,
        ctx: &HandlerContext,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome {
        self.run(ctx, scope, payload, deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::super::process::find_in_path;
    use super::*;
    use std::path::Path;
    use std::process::Command;
    use std::time::Duration;

    fn git_bin() -> Option<PathBuf> {
        find_in_path("git", std::env::var_os("PATH").as_deref())
    }

    fn repo() -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
        let git = git_bin()?;
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path())
            .expect("canonical")
            .join("ep1");
        std::fs::create_dir(&root).expect("mkdir");
        let ok = Command::new(&git)
            .args(["init", "-q"])
            .current_dir(&root)
            .status()
            .expect("git init");
        assert!(ok.success());
        Some((dir, root, git))
    }

    fn run_git(git: &Path, root: &Path, args: &[&str]) -> String {
        let out = Command::new(git)
            .args(args)
            .current_dir(root)
            .output()
            .expect("git");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    #[test]
    fn commits_staged_changes_and_ignores_hooks() {
        let Some((_dir, root, git)) = repo() else {
            return;
        };
        std::fs::write(root.join("a.txt"), "a").expect("write");
        run_git(&git, &root, &["add", "a.txt"]);
        // A hook the agent planted must never run.
        let hook = root.join(".git/hooks/pre-commit");
        std::fs::write(
            &hook,
            "#!/bin/sh\ntouch \"$(dirname \"$0\")/../../HOOK_RAN\"\nexit 1\n",
        )
        .expect("hook");
        let mode = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755);
        std::fs::set_permissions(&hook, mode).expect("chmod");
        let ctx = HandlerContext {
            episode: "ep1".into(),
            db_path: root.join("../world.db"),
            ..Default::default()
        };
        let h = GitCommitHandler::new(Sandbox::open(&root).expect("sandbox"), git.clone());
        let out = h.execute(
            &ctx,
            "worktree",
            &json!({"op":"commit","message":"first\n"}),
            Instant::now() + Duration::from_secs(10),
        );
        let HandlerOutcome::Succeeded(bytes) = out else {
            panic!("{out:?}")
        };
        let v: Value = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(
            v["commit"],
            json!(run_git(&git, &root, &["rev-parse", "HEAD"]))
        );
        assert_eq!(
            run_git(&git, &root, &["log", "-1", "--format=%an <%ae>|%s"]),
            "world <world@localhost>|first"
        );
        assert!(!root.join("HOOK_RAN").exists(), "the pre-commit hook ran");
        // Nothing staged: a failed effect, not a success.
        let out = h.execute(
            &ctx,
            "worktree",
            &json!({"op":"commit","message":"again"}),
            Instant::now() + Duration::from_secs(10),
        );
        assert!(
            matches!(out, HandlerOutcome::Failed(ref m) if m.starts_with("git commit exited 1")),
            "{out:?}"
        );
    }

    #[test]
    fn bad_payloads_fail() {
        let Some((_dir, root, git)) = repo() else {
            return;
        };
        let h = GitCommitHandler::new(Sandbox::open(&root).expect("sandbox"), git);
        let ctx = HandlerContext::default();
        let deadline = Instant::now() + Duration::from_secs(5);
        for payload in [
            json!({"op":"commit"}),
            json!({"op":"commit","message":""}),
            json!({"op":"push","message":"x"}),
            json!({"op":"commit","message":"x","amend":true}),
        ] {
            assert!(
                matches!(
                    h.execute(&ctx, "worktree", &payload, deadline),
                    HandlerOutcome::Failed(_)
                ),
                "{payload}"
            );
        }
        assert!(matches!(
            h.execute(
                &ctx,
                "/tmp",
                &json!({"op":"commit","message":"x"}),
                deadline
            ),
            HandlerOutcome::Failed(_)
        ));
    }
}
