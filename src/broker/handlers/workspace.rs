//! `Workspace.Read` / `Workspace.Write`: the native file handler confined to the episode
//! worktree (authority-and-broker.md §12 row 1, §12.1, §13; transitions.md §13.2, §13.4).
//!
//! | Payload | Output |
//! |---|---|
//! | `{op:"read", path}` | `{"ok":true,"path":P,"content":TEXT,"bytes":N}` |
//! | `{op:"write", path, content}` | `{"ok":true,"path":P,"bytes":N}` |
//! | `{op:"edit", path, old_text, new_text}` | `{"ok":true,"path":P,"replacements":1}` |
//!
//! A tool-level refusal (missing file, `old_text` not unique) is a *successful* effect whose
//! output is `{"ok":false,"path":P,"refused":MSG}` (transitions.md §13.4). Every confinement
//! refusal and every malformed payload is [`HandlerOutcome::Failed`] (§12 row 1, §13).

use std::io;
use std::path::Path;
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::confine::{self, go_errno_text, ConfineError, Sandbox};
use super::{
    check_keys, payload_object, required_str, Handler, HandlerContext, HandlerOutcome, PayloadError,
};
use super::{WORKSPACE_WRITE, WORKTREE_SCOPE};

/// Largest file a read or edit accepts: 8 MiB (the policy's `max_fs_transfer_bytes`).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// One file operation's target: a base directory holding no symlink, the path below it, and
/// the request path used in messages and outputs.
pub(crate) struct FileTarget<'a> {
    pub base: &'a Path,
    pub relative: &'a Path,
    pub request: &'a str,
}

/// A tool-level refusal: status ok, output `ok:false` (transitions.md §13.4).
pub(crate) fn refusal(path: &str, message: String) -> HandlerOutcome {
    HandlerOutcome::json(&json!({"ok": false, "path": path, "refused": message}))
}

/// Maps an I/O error on a confined path: a symlink at the final component of a write is a
/// confinement refusal (failed); anything else is the tool's `ok:false` answer in the
/// reference's Go wording (`read nope.ail: openat nope.ail: no such file or directory`).
fn io_outcome(op: &str, request: &str, err: &io::Error, write: bool) -> HandlerOutcome {
    if write && err.raw_os_error() == Some(libc::ELOOP) {
        return HandlerOutcome::Failed(
            ConfineError::SymlinkLeaf {
                path: request.to_owned(),
            }
            .to_string(),
        );
    }
    if err.raw_os_error() == Some(libc::EFBIG) {
        return refusal(
            request,
            format!("{op} {request}: the file is larger than the {MAX_FILE_BYTES}-byte limit"),
        );
    }
    refusal(
        request,
        format!("{op} {request}: openat {request}: {}", go_errno_text(err)),
    )
}

/// Reads the target as UTF-8 text.
pub(crate) fn do_read(target: &FileTarget<'_>) -> HandlerOutcome {
    let bytes = match confine::open_read(target.base, target.relative, MAX_FILE_BYTES) {
        Ok(bytes) => bytes,
        Err(err) => return io_outcome("read", target.request, &err, false),
    };
    let len = bytes.len();
    match String::from_utf8(bytes) {
        Ok(content) => HandlerOutcome::json(&json!({
            "ok": true, "path": target.request, "content": content, "bytes": len,
        })),
        Err(_) => refusal(
            target.request,
            format!("read {}: the file is not UTF-8 text", target.request),
        ),
    }
}

/// Replaces the target's content (creating parents when `create_dirs`).
pub(crate) fn do_write(
    target: &FileTarget<'_>,
    content: &str,
    create_dirs: bool,
) -> HandlerOutcome {
    match confine::write_atomic(
        target.base,
        target.relative,
        content.as_bytes(),
        create_dirs,
    ) {
        Ok(()) => HandlerOutcome::json(
            &json!({"ok": true, "path": target.request, "bytes": content.len()}),
        ),
        Err(err) => io_outcome("write", target.request, &err, true),
    }
}

/// Counts the occurrences of `needle` in `haystack`, overlapping ones included (so `aa` occurs
/// twice in `aaa`: replacing either would be a guess).
pub(crate) fn count_occurrences(haystack: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    let mut count = 0;
    let mut start = 0;
    while let Some(found) = haystack.get(start..).and_then(|rest| rest.find(needle)) {
        count += 1;
        let at = start + found;
        // Advance by one character so overlapping matches are counted.
        start = at
            + haystack
                .get(at..)
                .and_then(|s| s.chars().next())
                .map_or(1, char::len_utf8);
    }
    count
}

/// Replaces `old_text` (which must occur exactly once) with `new_text`.
pub(crate) fn do_edit(target: &FileTarget<'_>, old_text: &str, new_text: &str) -> HandlerOutcome {
    let p = target.request;
    if old_text.is_empty() {
        return refusal(
            p,
            format!("edit {p}: old_text is empty; give the exact text to replace"),
        );
    }
    let bytes = match confine::open_read(target.base, target.relative, MAX_FILE_BYTES) {
        Ok(bytes) => bytes,
        Err(err) => return io_outcome("edit", p, &err, false),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return refusal(p, format!("edit {p}: the file is not UTF-8 text"));
    };
    match count_occurrences(&text, old_text) {
        0 => refusal(
            p,
            format!("edit {p}: old_text not found — the file may have changed; read it again"),
        ),
        1 => {
            let updated = text.replacen(old_text, new_text, 1);
            match confine::write_atomic(target.base, target.relative, updated.as_bytes(), false) {
                Ok(()) => HandlerOutcome::json(&json!({"ok": true, "path": p, "replacements": 1})),
                Err(err) => io_outcome("edit", p, &err, true),
            }
        }
        n => refusal(
            p,
            format!("edit {p}: old_text occurs {n} times; include more context so it is unique"),
        ),
    }
}

/// Why a file effect (`Workspace.*`, `FS.*`) was refused before it touched a file; its text is
/// the `failed` outcome's message.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileRefusal {
    /// The payload's shape.
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// Host-side confinement (§13).
    #[error(transparent)]
    Confine(#[from] ConfineError),
    /// `write`/`edit` asked of a read effect.
    #[error("{effect} refuses op {op:?}: writes and edits need Workspace.Write")]
    WriteOnRead {
        /// The effect.
        effect: String,
        /// The op asked for.
        op: String,
    },
    /// An op the effect does not serve.
    #[error("{effect} refuses op {op:?}: it admits only {allowed}")]
    Op {
        /// The effect.
        effect: String,
        /// The op asked for.
        op: String,
        /// The ops it serves, comma-separated.
        allowed: String,
    },
    /// A `Workspace.*` scope other than the worktree.
    #[error("{effect} refused: scope {scope:?} is not {:?}", WORKTREE_SCOPE)]
    WorkspaceScope {
        /// The effect.
        effect: &'static str,
        /// The granted scope.
        scope: String,
    },
    /// A write to a path naming a directory.
    #[error("{effect} refuses path {path:?}: it names a directory (ends with /); name a file")]
    Directory {
        /// The effect.
        effect: &'static str,
        /// The requested path.
        path: String,
    },
    /// An `FS.*` scope that is not a canonical absolute file path.
    #[error("{effect} refused: scope {scope:?} is not a canonical absolute file path")]
    FsScope {
        /// The effect.
        effect: &'static str,
        /// The granted scope.
        scope: String,
    },
    /// An `FS.*` path that is relative or holds NUL.
    #[error("{effect} refused: path {path:?} must be an absolute path without NUL")]
    FsPath {
        /// The effect.
        effect: &'static str,
        /// The requested path.
        path: String,
    },
    /// An `FS.*` path that resolves elsewhere than the scope.
    #[error("{effect} refused: path {path:?} resolves to {resolved:?}, not to the grant's scope {scope:?}")]
    FsOutsideScope {
        /// The effect.
        effect: &'static str,
        /// The requested path.
        path: String,
        /// Where it resolves.
        resolved: String,
        /// The granted scope.
        scope: String,
    },
}

/// The ops of one file effect: `read` for a read effect, `write`/`edit` for a write effect.
/// Returns the op, or the failure for an op the effect does not serve.
pub(crate) fn file_op<'a>(
    obj: &'a Map<String, Value>,
    effect: &str,
    write: bool,
) -> Result<&'a str, FileRefusal> {
    let op = required_str(obj, "op", effect)?;
    let allowed: &[&str] = if write { &["write", "edit"] } else { &["read"] };
    if allowed.contains(&op) {
        let keys: &[&str] = match op {
            "read" => &["op", "path"],
            "write" => &["op", "path", "content"],
            _ => &["op", "path", "old_text", "new_text"],
        };
        check_keys(obj, keys, effect)?;
        return Ok(op);
    }
    if !write && matches!(op, "write" | "edit") {
        return Err(FileRefusal::WriteOnRead {
            effect: effect.to_owned(),
            op: op.to_owned(),
        });
    }
    Err(FileRefusal::Op {
        effect: effect.to_owned(),
        op: op.to_owned(),
        allowed: allowed.join(", "),
    })
}

/// The native `Workspace.Read` or `Workspace.Write` handler of one episode.
pub struct WorkspaceHandler {
    effect: &'static str,
    sandbox: Sandbox,
}

impl WorkspaceHandler {
    /// A handler for `effect` (must be [`WORKSPACE_READ`] or [`WORKSPACE_WRITE`]) confined to
    /// `sandbox`.
    pub fn new(effect: &'static str, sandbox: Sandbox) -> Self {
        WorkspaceHandler { effect, sandbox }
    }

    fn run(&self, scope: &str, payload: &Value) -> Result<HandlerOutcome, FileRefusal> {
        if scope != WORKTREE_SCOPE {
            return Err(FileRefusal::WorkspaceScope {
                effect: self.effect,
                scope: scope.to_owned(),
            });
        }
        let write = self.effect == WORKSPACE_WRITE;
        let obj = payload_object(payload)?;
        let op = file_op(obj, self.effect, write)?;
        let path = required_str(obj, "path", self.effect)?;
        if write && (path.ends_with('/') || path.ends_with("/.")) {
            // `dirx/` names a directory; writing it would create a file called `dirx`.
            return Err(FileRefusal::Directory {
                effect: self.effect,
                path: path.to_owned(),
            });
        }
        let resolved = if write {
            self.sandbox.resolve_for_write(path)
        } else {
            self.sandbox.resolve(path)
        };
        let resolved = match resolved {
            Ok(resolved) => resolved,
            Err(ConfineError::Io { source, .. }) => {
                return Ok(io_outcome(op, path, &source, write))
            }
            Err(err) => return Err(err.into()),
        };
        let Some(relative) = self.sandbox.relative(&resolved) else {
            return Err(ConfineError::Escapes {
                path: path.to_owned(),
                root: super::shown(self.sandbox.root()),
            }
            .into());
        };
        let target = FileTarget {
            base: self.sandbox.root(),
            relative,
            request: path,
        };
        Ok(match op {
            "read" => do_read(&target),
            "write" => do_write(&target, required_str(obj, "content", self.effect)?, true),
            _ => do_edit(
                &target,
                required_str(obj, "old_text", self.effect)?,
                required_str(obj, "new_text", self.effect)?,
            ),
        })
    }
}

impl Handler for WorkspaceHandler {
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
    use super::super::WORKSPACE_READ;
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    struct Fixture {
        _dir: tempfile::TempDir,
        outside: PathBuf,
        root: PathBuf,
        read: WorkspaceHandler,
        write: WorkspaceHandler,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical");
        let root = base.join("ep1");
        std::fs::create_dir(&root).expect("mkdir");
        let sandbox = Sandbox::open(&root).expect("sandbox");
        Fixture {
            _dir: dir,
            outside: base,
            root,
            read: WorkspaceHandler::new(WORKSPACE_READ, sandbox.clone()),
            write: WorkspaceHandler::new(WORKSPACE_WRITE, sandbox),
        }
    }

    fn call(h: &WorkspaceHandler, payload: Value) -> HandlerOutcome {
        h.execute(
            &HandlerContext::default(),
            "worktree",
            &payload,
            Instant::now(),
        )
    }

    fn output(outcome: HandlerOutcome) -> Value {
        match outcome {
            HandlerOutcome::Succeeded(bytes) => {
                serde_json::from_slice(&bytes).expect("json output")
            }
            other => panic!("want success, got {other:?}"),
        }
    }

    fn failure(outcome: HandlerOutcome) -> String {
        match outcome {
            HandlerOutcome::Failed(msg) => msg,
            other => panic!("want failure, got {other:?}"),
        }
    }

    #[test]
    fn write_then_read_then_edit() {
        let f = fixture();
        let out = output(call(
            &f.write,
            json!({"op":"write","path":"src/hello.ail","content":"hello world\n"}),
        ));
        assert_eq!(out, json!({"ok":true,"path":"src/hello.ail","bytes":12}));
        let out = output(call(&f.read, json!({"op":"read","path":"src/hello.ail"})));
        assert_eq!(
            out,
            json!({"ok":true,"path":"src/hello.ail","content":"hello world\n","bytes":12})
        );
        let out = output(call(
            &f.write,
            json!({"op":"edit","path":"src/hello.ail","old_text":"world","new_text":"there"}),
        ));
        assert_eq!(
            out,
            json!({"ok":true,"path":"src/hello.ail","replacements":1})
        );
        assert_eq!(
            std::fs::read_to_string(f.root.join("src/hello.ail")).expect("read"),
            "hello there\n"
        );
        // Exact key order of the outputs (the output bytes are hashed into the record).
        match call(&f.read, json!({"op":"read","path":"src/hello.ail"})) {
            HandlerOutcome::Succeeded(bytes) => assert_eq!(
                String::from_utf8(bytes).expect("utf8"),
                r#"{"ok":true,"path":"src/hello.ail","content":"hello there\n","bytes":12}"#
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn edit_with_zero_and_two_occurrences_is_an_ok_false_answer() {
        let f = fixture();
        std::fs::write(f.root.join("hello.ail"), "x = 1\nx = 1\n").expect("write");
        let out = output(call(
            &f.write,
            json!({"op":"edit","path":"hello.ail","old_text":"x = 1","new_text":"y"}),
        ));
        assert_eq!(out["ok"], json!(false));
        assert_eq!(
            out["refused"],
            json!("edit hello.ail: old_text occurs 2 times; include more context so it is unique")
        );
        let out = output(call(
            &f.write,
            json!({"op":"edit","path":"hello.ail","old_text":"zzz","new_text":"y"}),
        ));
        assert_eq!(
            out["refused"],
            json!("edit hello.ail: old_text not found — the file may have changed; read it again")
        );
        assert_eq!(
            std::fs::read_to_string(f.root.join("hello.ail")).expect("read"),
            "x = 1\nx = 1\n"
        );
    }

    #[test]
    fn missing_file_is_the_reference_refusal() {
        let f = fixture();
        let out = output(call(&f.read, json!({"op":"read","path":"nope.ail"})));
        assert_eq!(
            out["refused"],
            json!("read nope.ail: openat nope.ail: no such file or directory")
        );
    }

    #[test]
    fn write_op_under_read_is_refused_without_change() {
        let f = fixture();
        let msg = failure(call(
            &f.read,
            json!({"op":"write","path":"a.txt","content":"x"}),
        ));
        assert!(msg.contains("need Workspace.Write"), "{msg}");
        assert!(!f.root.join("a.txt").exists());
        let msg = failure(call(&f.write, json!({"op":"read","path":"a.txt"})));
        assert!(msg.contains("admits only write, edit"), "{msg}");
    }

    #[test]
    fn attack_dotdot_escape() {
        let f = fixture();
        let msg = failure(call(
            &f.write,
            json!({"op":"write","path":"a/../../x","content":"pwn"}),
        ));
        assert!(msg.contains("no \"..\" segment"), "{msg}");
        assert!(!f.outside.join("x").exists());
    }

    #[test]
    fn attack_absolute_path() {
        let f = fixture();
        let msg = failure(call(&f.read, json!({"op":"read","path":"/etc/passwd"})));
        assert!(msg.starts_with("path \"/etc/passwd\" refused"), "{msg}");
    }

    #[test]
    fn attack_leading_dash_and_nul() {
        let f = fixture();
        let msg = failure(call(
            &f.write,
            json!({"op":"write","path":"-rf","content":"x"}),
        ));
        assert!(msg.contains("no leading \"-\""), "{msg}");
        let msg = failure(call(
            &f.write,
            json!({"op":"write","path":"a\u{0}b","content":"x"}),
        ));
        assert!(msg.contains("NUL"), "{msg}");
        assert_eq!(std::fs::read_dir(&f.root).expect("ls").count(), 0);
    }

    #[test]
    fn attack_invalid_utf8_path() {
        // JSON cannot carry invalid UTF-8 (serde_json refuses a lone surrogate escape), so a
        // payload never reaches the handler with one; the byte-level predicate refuses it too.
        assert!(serde_json::from_str::<Value>(r#"{"op":"read","path":"\udc80"}"#).is_err());
        assert!(matches!(
            confine::check_plan_path_bytes(b"\xc3\x28"),
            Err(ConfineError::NotUtf8 { .. })
        ));
    }

    #[test]
    fn attack_sibling_prefix_directory() {
        let f = fixture();
        let sibling = f.outside.join("ep1_secret");
        std::fs::create_dir(&sibling).expect("mkdir");
        std::fs::write(sibling.join("token"), "s3cret").expect("write");
        symlink("../ep1_secret", f.root.join("peek")).expect("symlink");
        let msg = failure(call(&f.read, json!({"op":"read","path":"peek/token"})));
        assert_eq!(
            msg,
            format!(
                "path \"peek/token\" escapes sandbox {:?}",
                f.root.display().to_string()
            )
        );
    }

    #[test]
    fn attack_write_through_symlinked_parent_to_missing_file() {
        let f = fixture();
        let target_dir = f.outside.join("elsewhere");
        std::fs::create_dir(&target_dir).expect("mkdir");
        symlink(&target_dir, f.root.join("linkdir")).expect("symlink");
        let msg = failure(call(
            &f.write,
            json!({"op":"write","path":"linkdir/new.txt","content":"pwn"}),
        ));
        assert!(msg.contains("escapes sandbox"), "{msg}");
        assert!(!target_dir.join("new.txt").exists());
    }

    #[test]
    fn attack_git_writes_any_case() {
        let f = fixture();
        std::fs::create_dir(f.root.join(".git")).expect("mkdir");
        std::fs::write(f.root.join(".git/config"), "[core]\n").expect("write");
        let msg = failure(call(
            &f.write,
            json!({"op":"write","path":".git/config","content":"pwn"}),
        ));
        assert_eq!(
            msg,
            "path \".git/config\": .git/ is read-only to the lane's tools"
        );
        let msg = failure(call(
            &f.write,
            json!({"op":"write","path":".GIT/x","content":"pwn"}),
        ));
        assert!(msg.contains(".git/ is read-only"), "{msg}");
        let msg = failure(call(
            &f.write,
            json!({"op":"edit","path":".git/config","old_text":"core","new_text":"x"}),
        ));
        assert!(msg.contains(".git/ is read-only"), "{msg}");
        assert_eq!(
            std::fs::read_to_string(f.root.join(".git/config")).expect("read"),
            "[core]\n"
        );
        assert!(!f.root.join(".GIT").exists());
        let msg = failure(call(
            &f.write,
            json!({"op":"write","path":".claude/settings.json","content":"{}"}),
        ));
        assert_eq!(msg, "path \".claude/settings.json\" matches fs_deny_write \".claude/**\" — read-only under this policy");
    }

    #[test]
    fn symlink_leaf_inside_is_followed_for_write_but_stays_inside() {
        let f = fixture();
        std::fs::write(f.root.join("real.txt"), "a").expect("write");
        symlink("real.txt", f.root.join("alias.txt")).expect("symlink");
        output(call(
            &f.write,
            json!({"op":"write","path":"alias.txt","content":"b"}),
        ));
        assert_eq!(
            std::fs::read_to_string(f.root.join("real.txt")).expect("read"),
            "b"
        );
        assert!(f
            .root
            .join("alias.txt")
            .symlink_metadata()
            .expect("lstat")
            .file_type()
            .is_symlink());
    }

    #[test]
    fn malformed_payloads_fail() {
        let f = fixture();
        assert!(failure(call(&f.read, json!("read"))).contains("not a JSON object"));
        assert!(failure(call(&f.read, json!({"op":"read"}))).contains("\"path\" is missing"));
        assert!(failure(call(&f.read, json!({"op":"read","path":7}))).contains("must be a string"));
        assert!(
            failure(call(&f.read, json!({"op":"read","path":"a","x":1})))
                .contains("unknown payload key")
        );
        let msg = failure(f.read.execute(
            &HandlerContext::default(),
            "other",
            &json!({"op":"read","path":"a"}),
            Instant::now(),
        ));
        assert!(msg.contains("scope \"other\""), "{msg}");
    }

    #[test]
    fn occurrence_counting_includes_overlaps() {
        assert_eq!(count_occurrences("aaa", "aa"), 2);
        assert_eq!(count_occurrences("éaéa", "éa"), 2);
        assert_eq!(count_occurrences("abc", ""), 0);
        assert_eq!(count_occurrences("abc", "d"), 0);
    }
}
