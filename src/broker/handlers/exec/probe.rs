//! The startup probe of `world serve --exec-profile` (exec-and-agui.md §1.2, DEC-EXEC-5): before
//! `Workspace.Exec` is served, each profile runs seven arms in its own sandbox, with a scratch
//! episode in place of a worktree. Any failed arm refuses startup by name:
//! `exec startup probe failed for profile "<p>" (<n> of 7 arms): <arm>: <why>; …`.
//!
//! The client inside the sandbox is the running `world` binary (`world util exec-probe OP ARG
//! …`, bound read-only for the probe only), which prints one positive token per operation
//! (`WORLD-PROBE-WROTE`, `WORLD-PROBE-READ`, `WORLD-PROBE-CONNECTED`, or
//! `WORLD-PROBE-REFUSED <ERRNO>`): a client that cannot run prints nothing and fails the arm.
//! Every arm has a control `world` runs unsandboxed, so it can fail; every write arm also
//! requires the host bytes unchanged.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::args::go_quote;
use super::profile::Profile;
use super::sandbox::{Bwrap, Layout};
use super::{operator_home, state_dir, ExecConfig, ExecError, ExecHandler};
use crate::broker::handlers::HandlerContext;

/// The seven arms, in order.
pub const ARMS: [&str; 7] = [
    "arm1-write-inside",
    "arm2-write-outside",
    "arm3-read-fence",
    "arm4-default-write",
    "arm5-exit-status",
    "arm6-network",
    "arm7-toolchain",
];

/// The errno names a refused file operation may carry on Linux (a hidden region reads as
/// ENOENT, a read-only one EROFS, a 0555 tmpfs EACCES).
pub const FILE_REFUSALS: [&str; 4] = ["EPERM", "EACCES", "EROFS", "ENOENT"];

const DECOY: &str = "DECOY-NOT-A-SECRET\n";
const RUN_BUDGET: Duration = Duration::from_secs(8);

fn errno_name(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EPERM) => "EPERM".into(),
        Some(libc::ENOENT) => "ENOENT".into(),
        Some(libc::EACCES) => "EACCES".into(),
        Some(libc::EROFS) => "EROFS".into(),
        Some(libc::ECONNREFUSED) => "ECONNREFUSED".into(),
        Some(libc::ENETUNREACH) => "ENETUNREACH".into(),
        Some(libc::EHOSTUNREACH) => "EHOSTUNREACH".into(),
        Some(libc::ETIMEDOUT) => "ETIMEDOUT".into(),
        Some(libc::EADDRNOTAVAIL) => "EADDRNOTAVAIL".into(),
        Some(n) => format!("E{n}"),
        None if e.kind() == std::io::ErrorKind::TimedOut => "ETIMEDOUT".into(),
        None => "EUNKNOWN".into(),
    }
}

/// The probe client (`world util exec-probe`): runs each `OP ARG` pair and returns one token
/// line per op. Ops: `write PATH` (writes `WORLD-PROBE`), `read PATH`, `connect PORT`
/// (127.0.0.1, 3 s).
pub fn client(ops: &[String]) -> String {
    let mut out = String::new();
    for pair in ops.chunks(2) {
        let (op, arg) = match pair {
            [op, arg] => (op.as_str(), arg.as_str()),
            _ => ("", ""),
        };
        let token = match op {
            "write" => match std::fs::write(arg, "WORLD-PROBE") {
                Ok(()) => "WORLD-PROBE-WROTE".to_string(),
                Err(e) => format!("WORLD-PROBE-REFUSED {}", errno_name(&e)),
            },
            "read" => match std::fs::File::open(arg).and_then(|mut f| {
                let mut buf = Vec::new();
                f.read_to_end(&mut buf).map(|_| ())
            }) {
                Ok(()) => "WORLD-PROBE-READ".to_string(),
                Err(e) => format!("WORLD-PROBE-REFUSED {}", errno_name(&e)),
            },
            "connect" => match arg.parse::<u16>() {
                Ok(port) => match TcpStream::connect_timeout(
                    &SocketAddr::from(([127, 0, 0, 1], port)),
                    Duration::from_secs(3),
                ) {
                    Ok(_) => "WORLD-PROBE-CONNECTED".to_string(),
                    Err(e) => format!("WORLD-PROBE-REFUSED {}", errno_name(&e)),
                },
                Err(_) => "WORLD-PROBE-ERROR EBADPORT".to_string(),
            },
            _ => "WORLD-PROBE-ERROR EBADOP".to_string(),
        };
        out.push_str(&token);
        out.push('\n');
    }
    out
}

/// Runs the probe for every profile of `cfg` (whose sandbox is `bwrap`); scratch episodes go
/// under `workspace_root`, or `<state>/exec-probe` without one. Everything planted is removed.
///
/// # Errors
/// One `exec startup probe failed …` line per refused profile, joined with `; `, or why the
/// probe could not be set up.
pub fn probe_all(
    cfg: &ExecConfig,
    bwrap: &std::sync::Arc<Bwrap>,
    db_path: &Path,
    workspace_root: Option<&Path>,
) -> Result<(), ExecError> {
    let mut errs = Vec::new();
    for p in cfg.profiles.values() {
        if let Err(e) = probe_profile(p, bwrap, cfg.max_output_bytes, db_path, workspace_root) {
            errs.push(e);
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        let texts: Vec<String> = errs.iter().map(ToString::to_string).collect();
        Err(ExecError::Probe(texts.join("; ")))
    }
}

fn mkdir(d: &Path) -> Result<(), ExecError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(d)
        .map_err(|e| ExecError::Probe(format!("exec probe: mkdir {}: {e}", d.display())))
}

/// Removes what one profile's probe planted.
struct Scratch {
    paths: Vec<PathBuf>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for p in self.paths.iter().rev() {
            if p.is_dir() {
                let _ = std::fs::remove_dir_all(p);
            } else {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

fn tokens(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| l.starts_with("WORLD-PROBE-"))
        .map(|l| l.trim().to_string())
        .collect()
}

fn file_refused(tok: &str) -> bool {
    tok.strip_prefix("WORLD-PROBE-REFUSED ")
        .is_some_and(|c| FILE_REFUSALS.contains(&c))
}

/// One profile's planted scratch episode: the handler and sandbox layout the arms run in, and
/// the host paths and unsandboxed controls they are checked against.
struct Site {
    h: ExecHandler,
    layout: Layout,
    cwd: PathBuf,
    state: PathBuf,
    /// Decoys in HOME, the state dir and the workspace root (arm 3).
    decoys: Vec<PathBuf>,
    /// Whether each decoy was planted and read back unsandboxed (arm 3's control).
    decoy_ok: Vec<bool>,
    inside: PathBuf,
    outside: PathBuf,
    tmp: PathBuf,
    /// The sibling scratch episode is writable unsandboxed (arm 2's control).
    outside_ctl: bool,
    /// The `/tmp` target does not exist yet (arm 4's control).
    tmp_ctl: bool,
    scratch: Scratch,
}

/// Arm 6's live listener on 127.0.0.1, proved live by an unsandboxed connect (`net_ctl`).
struct Net {
    listener: TcpListener,
    port: u16,
    net_ctl: bool,
}

/// The arms that failed, each with its first reason; arms are indexes into [`ARMS`].
#[derive(Default)]
struct Failed(Vec<(usize, String)>);

impl Failed {
    /// Records `why` for `arm` unless the arm already failed.
    fn fail(&mut self, arm: usize, why: String) {
        if !self.0.iter().any(|(a, _)| *a == arm) {
            self.0.push((arm, why));
        }
    }
}

/// A capture's exit code and the head of its stderr, for a failure reason.
fn describe(c: &crate::process::Captured) -> String {
    format!(
        "exit {:?}, stderr {:?}",
        c.exit_code,
        String::from_utf8_lossy(&c.stderr.head)
            .trim()
            .chars()
            .take(240)
            .collect::<String>()
    )
}

fn probe_profile(
    p: &std::sync::Arc<Profile>,
    bwrap: &std::sync::Arc<Bwrap>,
    max_output: u64,
    db_path: &Path,
    workspace_root: Option<&Path>,
) -> Result<(), ExecError> {
    let setup = |e: String| {
        ExecError::Probe(format!(
            "exec probe for profile {}: {e}",
            go_quote(&p.project)
        ))
    };
    let site = plant(p, bwrap, max_output, db_path, workspace_root, &setup)?;
    let net = listen(&setup)?;
    let client = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| setup(format!("the probe client: {e}")))?;
    let mut failed = Failed::default();
    client_arms(&site, &net, &client, &mut failed);
    signal_arm(&site, &mut failed);
    toolchain_arm(p, &site, &mut failed);
    let state = site.state.clone();
    drop(site.scratch);
    // Only when empty: another daemon's probe may be running there.
    let _ = std::fs::remove_dir(state.join("exec-probe"));
    report(p, failed)
}

/// Plants one profile's scratch episode (worktree, sibling, caches, decoys) and renders its
/// sandbox; `setup` words a failure.
fn plant(
    p: &std::sync::Arc<Profile>,
    bwrap: &std::sync::Arc<Bwrap>,
    max_output: u64,
    db_path: &Path,
    workspace_root: Option<&Path>,
    setup: &dyn Fn(String) -> ExecError,
) -> Result<Site, ExecError> {
    let state = state_dir(db_path).map_err(|e| setup(e.to_string()))?;
    let home = operator_home().map_err(|e| setup(e.to_string()))?;
    let mut rnd = [0u8; 8];
    getrandom::getrandom(&mut rnd).map_err(|e| setup(e.to_string()))?;
    let id = format!("wep-{}", hex::encode(rnd));
    let mut scratch = Scratch { paths: Vec::new() };
    let ws_root = match workspace_root {
        Some(w) => std::fs::canonicalize(w).map_err(|e| setup(e.to_string()))?,
        None => {
            let w = state.join("exec-probe").join(&id);
            mkdir(&w).map_err(|e| setup(e.to_string()))?;
            scratch.paths.push(w.clone());
            w
        }
    };
    let worktree = ws_root.join(&id);
    let sibling = ws_root.join(format!("{id}-sib"));
    for d in [&worktree, &sibling] {
        mkdir(d).map_err(|e| setup(e.to_string()))?;
        scratch.paths.push(d.clone());
    }
    scratch.paths.push(state.join("exec-cache").join(&id));
    scratch.paths.push(
        state
            .join("exec")
            .join(format!("{id}.{}.srt.json", p.project)),
    );
    let h = ExecHandler::new(
        p.clone(),
        bwrap.clone(),
        &id,
        worktree.clone(),
        max_output,
        Default::default(),
    );
    let ctx = HandlerContext {
        episode: id.clone(),
        db_path: db_path.to_path_buf(),
        ..HandlerContext::default()
    };
    let layout = h.layout(&ctx).map_err(|e| setup(e.to_string()))?;
    h.settings(&layout).map_err(|e| setup(e.to_string()))?;
    let cwd = if p.root == "." {
        worktree.clone()
    } else {
        worktree.join(&p.root)
    };
    mkdir(&cwd).map_err(|e| setup(e.to_string()))?;
    for d in ["home", "tmp", "pycache", "npm"]
        .into_iter()
        .map(String::from)
        .chain(p.caches.keys().cloned())
    {
        mkdir(&layout.cache.join(d)).map_err(|e| setup(e.to_string()))?;
    }
    // Decoys in HOME, the state dir and the workspace root (arm 3), each read back first.
    let decoys: Vec<PathBuf> = [&home, &state, &ws_root]
        .iter()
        .map(|d| d.join(format!(".world-exec-probe-{id}")))
        .collect();
    let mut decoy_ok = Vec::new();
    for d in &decoys {
        let planted = std::fs::write(d, DECOY).is_ok();
        scratch.paths.push(d.clone());
        decoy_ok.push(planted && std::fs::read_to_string(d).is_ok_and(|t| t == DECOY));
    }
    let inside = worktree.join("world-exec-probe-inside");
    let outside = sibling.join("world-exec-probe-outside");
    let tmp = PathBuf::from(format!("/tmp/world-exec-probe-{id}"));
    scratch.paths.push(tmp.clone());
    let outside_ctl = std::fs::write(sibling.join("control"), "control").is_ok();
    let tmp_ctl = !tmp.exists();
    Ok(Site {
        h,
        layout,
        cwd,
        state,
        decoys,
        decoy_ok,
        inside,
        outside,
        tmp,
        outside_ctl,
        tmp_ctl,
        scratch,
    })
}

/// Arm 6's live listener, proved live by an unsandboxed connect.
fn listen(setup: &dyn Fn(String) -> ExecError) -> Result<Net, ExecError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| setup(format!("listener: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| setup(e.to_string()))?
        .port();
    let net_ctl = TcpStream::connect(("127.0.0.1", port)).is_ok() && listener.accept().is_ok();
    listener
        .set_nonblocking(true)
        .map_err(|e| setup(e.to_string()))?;
    Ok(Net {
        listener,
        port,
        net_ctl,
    })
}

/// Arms 1, 2, 3, 4 and 6: one sandboxed run of the probe `client` writes inside and outside,
/// reads the decoys, writes `/tmp` and connects to the listener.
fn client_arms(site: &Site, net: &Net, client: &Path, failed: &mut Failed) {
    let mut argv: Vec<std::ffi::OsString> = vec![
        client.to_path_buf().into(),
        "util".into(),
        "exec-probe".into(),
        "write".into(),
        site.inside.clone().into(),
        "write".into(),
        site.outside.clone().into(),
    ];
    for d in &site.decoys {
        argv.push("read".into());
        argv.push(d.clone().into());
    }
    argv.extend([
        "write".into(),
        site.tmp.clone().into(),
        "connect".into(),
        net.port.to_string().into(),
    ]);
    match site.h.spawn(
        &site.layout,
        &site.cwd,
        argv,
        &[client.to_path_buf()],
        RUN_BUDGET,
    ) {
        Err(e) => {
            for arm in [0, 1, 2, 3, 5] {
                failed.fail(arm, e.to_string());
            }
        }
        Ok((a, _)) => {
            let t = tokens(&a.stdout.head);
            let tok = |i: usize| t.get(i).cloned().unwrap_or_default();
            write_arms(site, &tok, &a, failed);
            decoy_arm(site, &tok, failed);
            tmp_arm(site, &tok, failed);
            net_arm(net, &tok, failed);
        }
    }
}

/// Arms 1 and 2 from the client run `a` whose `i`th token is `tok(i)`.
fn write_arms(
    site: &Site,
    tok: &dyn Fn(usize) -> String,
    a: &crate::process::Captured,
    failed: &mut Failed,
) {
    let wrote = std::fs::read_to_string(&site.inside).unwrap_or_default();
    if tok(0) != "WORLD-PROBE-WROTE" || wrote != "WORLD-PROBE" {
        failed.fail(
            0,
            format!(
                "a write inside the scratch worktree: token {:?}, read back {wrote:?} ({})",
                tok(0),
                describe(a)
            ),
        );
    }
    let outside = &site.outside;
    if !site.outside_ctl {
        failed.fail(
            1,
            "control: the sibling scratch episode is not writable unsandboxed".into(),
        );
    } else if !file_refused(&tok(1)) || outside.exists() {
        failed.fail(1, format!("a write to a sibling episode: token {:?} (want WORLD-PROBE-REFUSED {}), on the host: present={} ({})", tok(1), FILE_REFUSALS.join("|"), outside.exists(), describe(a)));
    }
}

/// Arm 3: every decoy read is refused.
fn decoy_arm(site: &Site, tok: &dyn Fn(usize) -> String, failed: &mut Failed) {
    for (i, d) in site.decoys.iter().enumerate() {
        if !site.decoy_ok[i] {
            failed.fail(
                2,
                format!(
                    "control: decoy {} did not read back unsandboxed",
                    d.display()
                ),
            );
        } else if !file_refused(&tok(2 + i)) {
            failed.fail(
                2,
                format!(
                    "a read of decoy {}: token {:?} (want WORLD-PROBE-REFUSED {})",
                    d.display(),
                    tok(2 + i),
                    FILE_REFUSALS.join("|")
                ),
            );
        }
    }
}

/// Arm 4: the write to `/tmp` is refused and leaves nothing on the host.
fn tmp_arm(site: &Site, tok: &dyn Fn(usize) -> String, failed: &mut Failed) {
    let tmp = &site.tmp;
    if !site.tmp_ctl {
        failed.fail(3, format!("control: {} already exists", tmp.display()));
    } else if !file_refused(&tok(5)) || tmp.exists() {
        failed.fail(
            3,
            format!(
                "a write to {}: token {:?}, on the host: present={}",
                tmp.display(),
                tok(5),
                tmp.exists()
            ),
        );
    }
}

/// Arm 6: the connect to the host listener is refused and never reaches it.
fn net_arm(net: &Net, tok: &dyn Fn(usize) -> String, failed: &mut Failed) {
    let reached = net.listener.accept().is_ok();
    if !net.net_ctl {
        failed.fail(
            5,
            "control: the host listener did not accept an unsandboxed connect".into(),
        );
    } else if !tok(6).starts_with("WORLD-PROBE-REFUSED ") || reached {
        failed.fail(
            5,
            format!(
                "a connect to 127.0.0.1:{}: token {:?}, reached the host listener: {reached}",
                net.port,
                tok(6)
            ),
        );
    }
}

/// Arm 5: a death by signal is 128+n through the trampoline.
fn signal_arm(site: &Site, failed: &mut Failed) {
    let b = site.h.spawn(
        &site.layout,
        &site.cwd,
        vec!["/bin/sh".into(), "-c".into(), "kill -TERM $$".into()],
        &[],
        RUN_BUDGET,
    );
    match b {
        Ok((b, _)) if b.exit_code == Some(143) => {}
        Ok((b, _)) => failed.fail(
            4,
            format!("a SIGTERM death: {} (want exit 143)", describe(&b)),
        ),
        Err(e) => failed.fail(4, e.to_string()),
    }
}

/// Arm 7: the toolchain answers under the sandbox.
fn toolchain_arm(p: &Profile, site: &Site, failed: &mut Failed) {
    let mut toolchain: Vec<std::ffi::OsString> = vec![p.probe.argv0.clone().into()];
    toolchain.extend(p.probe.argv.iter().skip(1).map(Into::into));
    let budget = Duration::from_millis(p.timeout_ms);
    let started = Instant::now();
    match site
        .h
        .spawn(&site.layout, &site.cwd, toolchain, &[], budget)
    {
        Ok((c, _)) if c.exit_code == Some(0) => {}
        Ok((c, _)) => failed.fail(
            6,
            format!(
                "probe {:?}: {} after {} ms",
                p.probe.argv,
                describe(&c),
                started.elapsed().as_millis()
            ),
        ),
        Err(e) => failed.fail(6, e.to_string()),
    }
}

/// The profile's verdict: `Ok` when no arm failed, else one line naming each failed arm.
fn report(p: &Profile, failed: Failed) -> Result<(), ExecError> {
    let mut failed = failed.0;
    if failed.is_empty() {
        return Ok(());
    }
    failed.sort_by_key(|(a, _)| *a);
    let parts: Vec<String> = failed
        .iter()
        .map(|(a, why)| format!("{}: {why}", ARMS[*a]))
        .collect();
    Err(ExecError::Probe(format!(
        "exec startup probe failed for profile {} ({} of 7 arms): {}",
        go_quote(&p.project),
        failed.len(),
        parts.join("; ")
    )))
}
