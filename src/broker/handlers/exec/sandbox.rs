//! The bubblewrap sandbox of `Workspace.Exec` (exec-and-agui.md §1.8, DEC-EXEC-1..5): finding
//! and checking `bwrap`, the seccomp program that refuses `socket(AF_UNIX)`, the settings
//! rendering (§1.6, the same JSON the reference hands srt, without the seccomp entry) and the
//! `bwrap` command line built from it.

use std::ffi::OsString;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::process;

use super::profile::sha256_file;
use super::ExecError;

/// The runtime name in the result's `sandbox` block.
pub const RUNTIME: &str = "bubblewrap";

/// The oldest bubblewrap accepted (DEC-EXEC-1).
pub const MIN_VERSION: (u32, u32) = (0, 8);

/// The deny names under the worktree, mounted read-only when they exist (§1.6 `denyWrite`).
pub const DENY_NAMES: [&str; 7] = [
    ".git",
    ".github",
    ".pi",
    ".claude",
    ".ailang",
    ".gitmodules",
    ".gitattributes",
];

/// The trampoline the sandboxed shell runs: `env -i` installs exactly World's environment,
/// and the shell (not exec'd away) turns a signal death into 128+n.
pub const TRAMPOLINE: &str = "/usr/bin/env -i \"$@\"; exit $?";

/// A located, version-checked, hashed `bwrap` that can build a sandbox on this host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bwrap {
    /// The binary.
    pub path: PathBuf,
    /// `bwrap --version`'s number (`0.8.0`).
    pub version: String,
    /// sha256 of the binary at startup (bare hex); re-verified before every call.
    pub sha256: String,
}

/// The environment variable naming the `bwrap` binary to use instead of the search.
pub const BWRAP_ENV: &str = "WORLD_EXEC_BWRAP";

/// Where `bwrap` is looked for: `$WORLD_EXEC_BWRAP` when set (and only there), else
/// `/usr/bin/bwrap`, then each directory of `PATH`.
pub fn locate() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(BWRAP_ENV).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let fixed = PathBuf::from("/usr/bin/bwrap");
    if fixed.is_file() {
        return Some(fixed);
    }
    crate::broker::handlers::process::find_in_path("bwrap", std::env::var_os("PATH").as_deref())
}

fn parse_version(text: &str) -> Option<(String, (u32, u32))> {
    let v = text.trim().strip_prefix("bubblewrap ")?.trim();
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((v.to_string(), (major, minor)))
}

impl Bwrap {
    /// Finds `bwrap`, checks its version (≥ 0.8), hashes it, and proves it can build the
    /// sandbox here (a trial run of `/bin/true` under every namespace and the seccomp
    /// program). Never runs anything outside a sandbox.
    ///
    /// # Errors
    /// Why there is no usable sandbox (`bwrap` missing, too old, or unable to create its
    /// namespaces on this host), for the operator.
    pub fn detect() -> Result<Bwrap, ExecError> {
        let path = locate().ok_or_else(|| {
            ExecError::Sandbox(match std::env::var_os(BWRAP_ENV) {
                Some(p) if !p.is_empty() => {
                    format!("{BWRAP_ENV}={} is not a file", Path::new(&p).display())
                }
                _ => "bubblewrap (bwrap) is not installed: install the Debian package `bubblewrap` (>= 0.8)"
                    .to_string(),
            })
        })?;
        let deadline = Instant::now() + Duration::from_secs(5);
        let out = process::run(
            &process::Spec::new(&path, 4096, deadline)
                .arg("--version")
                .env("PATH", "/usr/bin:/bin"),
        )
        .map_err(|e| ExecError::Sandbox(format!("{}: --version: {e}", path.display())))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (version, (major, minor)) = parse_version(&text).ok_or_else(|| {
            ExecError::Sandbox(format!(
                "{}: --version printed {:?}, not \"bubblewrap X.Y.Z\"",
                path.display(),
                text.trim()
            ))
        })?;
        if (major, minor) < MIN_VERSION {
            return Err(ExecError::Sandbox(format!(
                "{} is bubblewrap {version}; Workspace.Exec needs >= {}.{}",
                path.display(),
                MIN_VERSION.0,
                MIN_VERSION.1
            )));
        }
        let sha256 = sha256_file(&path)
            .map_err(|e| ExecError::Sandbox(format!("{}: {e}", path.display())))?;
        let bwrap = Bwrap {
            path,
            version,
            sha256,
        };
        bwrap.trial()?;
        Ok(bwrap)
    }

    /// One sandboxed `/bin/true` with the handler's namespaces, mounts and seccomp program.
    fn trial(&self) -> Result<(), ExecError> {
        let filter =
            SeccompFd::new().map_err(|e| ExecError::Sandbox(format!("seccomp program: {e}")))?;
        let fd = filter.raw().to_string();
        let args: Vec<OsString> = [
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--perms",
            "0555",
            "--tmpfs",
            "/run",
            "--seccomp",
            &fd,
            "--",
            "/bin/true",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let mut spec = process::Spec::new(
            &self.path,
            64 * 1024,
            Instant::now() + Duration::from_secs(5),
        )
        .args(args)
        .env("PATH", "/usr/bin:/bin");
        spec.keep_fds = vec![filter.raw()];
        let out =
            process::run(&spec).map_err(|e| ExecError::Sandbox(format!("bwrap trial run: {e}")))?;
        if out.exit_code != 0 {
            return Err(ExecError::Sandbox(format!(
                "bwrap cannot build a sandbox on this host (exit {}): {}",
                out.exit_code,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(())
    }

    /// Re-verifies the binary before a call (§1.5 step 3, DEC-EXEC-3).
    ///
    /// # Errors
    /// `broker: exec confinement stack drifted: <path>: <why>`.
    pub fn verify(&self) -> Result<(), ExecError> {
        verify_file(&self.path, &self.sha256)
    }
}

/// Re-hashes `path` against `want` (bare hex).
///
/// # Errors
/// `broker: exec confinement stack drifted: <path>: sha256 <x>, verified as <y>` (or the I/O
/// error when it is gone).
pub fn verify_file(path: &Path, want: &str) -> Result<(), ExecError> {
    match sha256_file(path) {
        Ok(got) if got == want => Ok(()),
        Ok(got) => Err(ExecError::Sandbox(format!(
            "broker: exec confinement stack drifted: {}: sha256 {got}, verified as {want}",
            path.display()
        ))),
        Err(e) => Err(ExecError::Sandbox(format!(
            "broker: exec confinement stack drifted: {}: {e}",
            path.display()
        ))),
    }
}

// Classic BPF, as the kernel reads `struct sock_filter` (code u16, jt u8, jf u8, k u32).
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const AF_UNIX: u32 = 1;

/// The native `AUDIT_ARCH_*` and `socket` numbers (plus the x32 `socket` on x86_64).
fn arch() -> Option<(u32, u32, u32)> {
    if cfg!(target_arch = "x86_64") {
        Some((0xc000_003e, 41, 0x4000_0000 | 41))
    } else if cfg!(target_arch = "aarch64") {
        Some((0xc000_00b7, 198, u32::MAX))
    } else {
        None
    }
}

/// The seccomp program (DEC-EXEC-2): `socket(AF_UNIX, …)` fails with `EPERM`; a syscall of a
/// foreign architecture kills the process (fail closed); everything else is allowed. `None`
/// on an architecture this build has no numbers for.
pub fn seccomp_program() -> Option<Vec<u8>> {
    let (audit_arch, nr_socket, nr_socket_x32) = arch()?;
    let ins: [(u16, u8, u8, u32); 10] = [
        (LD_W_ABS, 0, 0, 4),                           // 0: A = arch
        (JEQ_K, 0, 7, audit_arch),                     // 1: foreign → 9
        (LD_W_ABS, 0, 0, 0),                           // 2: A = nr
        (JEQ_K, 1, 0, nr_socket),                      // 3: socket → 5
        (JEQ_K, 0, 2, nr_socket_x32),                  // 4: x32 socket → 5, else → 7
        (LD_W_ABS, 0, 0, 16), // 5: A = low word of args[0] (the kernel reads an int)
        (JEQ_K, 1, 0, AF_UNIX), // 6: AF_UNIX → 8
        (RET_K, 0, 0, RET_ALLOW), // 7
        (RET_K, 0, 0, RET_ERRNO | libc::EPERM as u32), // 8
        (RET_K, 0, 0, RET_KILL_PROCESS), // 9
    ];
    let mut out = Vec::with_capacity(ins.len() * 8);
    for (code, jt, jf, k) in ins {
        out.extend_from_slice(&code.to_ne_bytes());
        out.push(jt);
        out.push(jf);
        out.extend_from_slice(&k.to_ne_bytes());
    }
    Some(out)
}

/// The seccomp program in an anonymous memory file, positioned at 0, close-on-exec in this
/// process (the runner clears the flag in the child only, `process::Spec::keep_fds`).
pub struct SeccompFd(std::fs::File);

impl SeccompFd {
    /// Writes the program.
    ///
    /// # Errors
    /// An unsupported architecture or the I/O error.
    pub fn new() -> std::io::Result<SeccompFd> {
        let program = seccomp_program().ok_or_else(|| {
            std::io::Error::other("no seccomp syscall numbers for this architecture")
        })?;
        // SAFETY: a NUL-terminated name and valid flags; the returned fd is owned below.
        let fd = unsafe { libc::memfd_create(c"world-exec-seccomp".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        file.write_all(&program)?;
        file.seek(SeekFrom::Start(0))?;
        Ok(SeccompFd(file))
    }

    /// The descriptor number (`bwrap --seccomp N`).
    pub fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Everything one settings rendering and one `bwrap` line depend on; every path canonical.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The episode worktree: readable and writable.
    pub worktree: PathBuf,
    /// `<state>/exec-cache/<ep>/<project>`: readable and writable.
    pub cache: PathBuf,
    /// The operator's HOME: hidden.
    pub home: PathBuf,
    /// The state dir (the store file's directory): hidden.
    pub state: PathBuf,
    /// The workspace root (every episode's parent): hidden, so siblings are unreadable.
    pub workspace_root: PathBuf,
    /// The profile's read roots, each followed by its realpath (deduplicated).
    pub read_roots: Vec<PathBuf>,
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Go's `json.MarshalIndent(v, "", " ")` escaping for the strings of the settings: `<`, `>`,
/// `&`, U+2028 and U+2029 as `\u00XX`.
fn go_escape_html(text: String) -> String {
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

impl Layout {
    /// The settings JSON (§1.6 "Settings"): one-space indent, LF at the end; `allowRead` has
    /// no seccomp entry (DEC-EXEC-3).
    pub fn settings(&self) -> Vec<u8> {
        use serde::Serialize;
        let mut deny_write: Vec<String> = DENY_NAMES
            .iter()
            .map(|n| s(&self.worktree.join(n)))
            .collect();
        deny_write.push("/tmp/claude".into());
        deny_write.push(s(&self.home.join(".npm").join("_logs")));
        deny_write.push(s(&self.home.join(".claude").join("debug")));
        let mut allow_read = vec![s(&self.worktree), s(&self.cache)];
        for r in &self.read_roots {
            let r = s(r);
            if !allow_read.contains(&r) {
                allow_read.push(r);
            }
        }
        let v = serde_json::json!({
            "filesystem": {
                "denyRead": [s(&self.home), s(&self.state), s(&self.workspace_root)],
                "allowRead": allow_read,
                "allowWrite": [s(&self.worktree), s(&self.cache)],
                "denyWrite": deny_write,
            },
            "network": {
                "allowedDomains": [],
                "deniedDomains": [],
                "allowLocalBinding": false,
                "allowAllUnixSockets": false,
            },
            "enableWeakerNetworkIsolation": false,
            "allowAppleEvents": false,
        });
        let mut buf = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(
            &mut buf,
            serde_json::ser::PrettyFormatter::with_indent(b" "),
        );
        // A Value of strings, bools and arrays always serializes.
        let _ = v.serialize(&mut ser);
        let mut text = go_escape_html(String::from_utf8_lossy(&buf).into_owned()).into_bytes();
        text.push(b'\n');
        text
    }

    /// The `bwrap` arguments before `--` (DEC-EXEC-2): every namespace, no capabilities, the
    /// host read-only, HOME / state / workspace root / `/run` hidden under empty read-only
    /// (0555) tmpfs (ancestors first, DEC-EXEC-8), the
    /// read roots read-only, the worktree and cache writable, each existing deny name
    /// read-only, each of `extra_ro` read-only (the startup probe's client), the seccomp
    /// program on `seccomp_fd`, the cwd `cwd`.
    pub fn bwrap_args(&self, seccomp_fd: RawFd, cwd: &Path, extra_ro: &[PathBuf]) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        let mut push = |xs: &[&dyn AsRef<std::ffi::OsStr>]| {
            for x in xs {
                a.push(x.as_ref().to_os_string());
            }
        };
        push(&[
            &"--unshare-all",
            &"--die-with-parent",
            &"--new-session",
            &"--cap-drop",
            &"ALL",
            &"--ro-bind",
            &"/",
            &"/",
            &"--dev",
            &"/dev",
            &"--proc",
            &"/proc",
        ]);
        let mut hidden: Vec<&Path> = vec![&self.home, &self.state, &self.workspace_root];
        hidden.sort_by_key(|p| p.components().count());
        for h in hidden {
            push(&[&"--perms", &"0555", &"--tmpfs", &h]);
        }
        push(&[&"--perms", &"0555", &"--tmpfs", &"/run"]);
        for r in &self.read_roots {
            push(&[&"--ro-bind", r, r]);
        }
        push(&[&"--bind", &self.worktree, &self.worktree]);
        push(&[&"--bind", &self.cache, &self.cache]);
        for n in DENY_NAMES {
            let p = self.worktree.join(n);
            if p.symlink_metadata().is_ok() {
                push(&[&"--ro-bind", &p, &p]);
            }
        }
        for p in extra_ro {
            push(&[&"--ro-bind", p, p]);
        }
        let fd = seccomp_fd.to_string();
        push(&[&"--seccomp", &fd, &"--chdir", &cwd]);
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            worktree: "/W/workspace/ep1".into(),
            cache: "/W/state/exec-cache/ep1/ailang-compiler".into(),
            home: "/Users/op".into(),
            state: "/W/state".into(),
            workspace_root: "/W/workspace".into(),
            read_roots: vec![
                "/Users/op/go/pkg/mod".into(),
                "/opt/homebrew/Cellar/go/1.26.4/libexec".into(),
            ],
        }
    }

    #[test]
    fn settings_are_the_reference_linux_golden_without_the_seccomp_entry() {
        let want = "{\n \"filesystem\": {\n  \"denyRead\": [\n   \"/Users/op\",\n   \"/W/state\",\n   \"/W/workspace\"\n  ],\n  \"allowRead\": [\n   \"/W/workspace/ep1\",\n   \"/W/state/exec-cache/ep1/ailang-compiler\",\n   \"/Users/op/go/pkg/mod\",\n   \"/opt/homebrew/Cellar/go/1.26.4/libexec\"\n  ],\n  \"allowWrite\": [\n   \"/W/workspace/ep1\",\n   \"/W/state/exec-cache/ep1/ailang-compiler\"\n  ],\n  \"denyWrite\": [\n   \"/W/workspace/ep1/.git\",\n   \"/W/workspace/ep1/.github\",\n   \"/W/workspace/ep1/.pi\",\n   \"/W/workspace/ep1/.claude\",\n   \"/W/workspace/ep1/.ailang\",\n   \"/W/workspace/ep1/.gitmodules\",\n   \"/W/workspace/ep1/.gitattributes\",\n   \"/tmp/claude\",\n   \"/Users/op/.npm/_logs\",\n   \"/Users/op/.claude/debug\"\n  ]\n },\n \"network\": {\n  \"allowedDomains\": [],\n  \"deniedDomains\": [],\n  \"allowLocalBinding\": false,\n  \"allowAllUnixSockets\": false\n },\n \"enableWeakerNetworkIsolation\": false,\n \"allowAppleEvents\": false\n}\n";
        assert_eq!(String::from_utf8(layout().settings()).unwrap(), want);
    }

    #[test]
    fn bwrap_line_hides_ancestors_first_and_binds_the_worktree() {
        let mut l = layout();
        l.state = "/W".into();
        let args: Vec<String> = l
            .bwrap_args(7, Path::new("/W/workspace/ep1"), &[])
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let line = args.join(" ");
        assert!(line.starts_with("--unshare-all --die-with-parent --new-session --cap-drop ALL --ro-bind / / --dev /dev --proc /proc --perms 0555 --tmpfs /W --perms 0555 --tmpfs /Users/op --perms 0555 --tmpfs /W/workspace --perms 0555 --tmpfs /run"), "{line}");
        assert!(
            line.contains("--bind /W/workspace/ep1 /W/workspace/ep1"),
            "{line}"
        );
        assert!(
            line.ends_with("--seccomp 7 --chdir /W/workspace/ep1"),
            "{line}"
        );
    }

    #[test]
    fn version_parsing() {
        assert_eq!(
            parse_version("bubblewrap 0.8.0\n"),
            Some(("0.8.0".into(), (0, 8)))
        );
        assert_eq!(parse_version("bwrap 1"), None);
    }

    #[test]
    fn seccomp_program_shape() {
        if let Some(p) = seccomp_program() {
            assert_eq!(p.len(), 80);
        }
    }
}
