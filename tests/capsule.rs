//! The capsule against `fake-ailang`, the TEST DOUBLE for the external `ailang` CLI
//! (fixtures/fake-ailang/README.md), and against a real `ailang` when `AILANG_BIN` is set.
//!
//! The double refuses (exit 70, `FAKE-AILANG CONTRACT VIOLATION`) any `run` or `check` not
//! started exactly as transitions.md §6 / §6.1 require, so every passing run here also
//! proves the argv, cwd, environment, process-group and staging contract.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use world::interp::archive::{Archive, ArchiveError, ArchiveStatus, Manifest};
use world::interp::capsule::{self, CapsuleError};
use world::interp::external::External;
use world::interp::{Interpreter, RunError, RunLimits};

/// The TEST DOUBLE's path.
fn fake() -> PathBuf {
    crate::common::fake_ailang()
}

struct Store {
    dir: tempfile::TempDir,
    archive: Archive,
}

fn store() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let archive = Archive::for_db(&dir.path().join("world.db"));
    Store { dir, archive }
}

fn pinned(s: &Store) -> External {
    let (archived, _) = s.archive.archive(&fake()).unwrap();
    External::resolve(&s.archive, &archived.hash_ref).unwrap()
}

/// A transition source for the double: directives plus a `main(input: string)`.
fn src(directives: &str) -> Vec<u8> {
    let lines: String = directives
        .lines()
        .map(|l| format!("-- fake: {l}\n"))
        .collect();
    format!("module capsule/main\n\n{lines}export func main(input: string) -> string =\n  input\n")
        .into_bytes()
}

fn secs(n: u64) -> Instant {
    Instant::now() + Duration::from_secs(n)
}

fn run(
    interp: &External,
    directives: &str,
    input: &str,
    deadline: Instant,
) -> Result<Vec<u8>, CapsuleError> {
    capsule::run_phase(interp, &src(directives), input.as_bytes(), deadline)
}

/// A copy of the double with a version trailer, so it has other bytes and another version.
fn variant(dir: &Path, version: &str) -> PathBuf {
    let path = dir.join(format!("ailang-{}", version.replace(' ', "_")));
    let mut bytes = fs::read(fake()).unwrap();
    bytes.extend_from_slice(format!("\nFAKE-AILANG-VERSION:{version}\n").as_bytes());
    fs::write(&path, bytes).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn archive_writes_the_binary_and_a_go_indented_sidecar() {
    let s = store();
    let bytes = fs::read(fake()).unwrap();
    let hex = hex::encode(Sha256::digest(&bytes));
    let (archived, status) = s.archive.archive(&fake()).unwrap();
    assert_eq!(status, ArchiveStatus::Added);
    assert_eq!(archived.hash_ref, format!("sha256:{hex}"));

    let dir = s
        .dir
        .path()
        .join(format!("world.db.artifacts/interpreters/sha256/{hex}"));
    let bin = dir.join("ailang");
    assert_eq!(fs::read(&bin).unwrap(), bytes);
    assert_eq!(
        fs::metadata(&bin).unwrap().permissions().mode() & 0o7777,
        0o555
    );
    assert_eq!(archived.binary, std::path::absolute(&bin).unwrap());

    let version = String::from_utf8(
        Command::new(fake())
            .arg("--version")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(version.starts_with("AILANG v0.41.0-fake\n"), "{version}");
    let want = format!(
        "{{\n  \"hash\": \"sha256:{hex}\",\n  \"version\": {},\n  \"size\": {},\n  \"os\": \"{}\",\n  \"arch\": \"{}\"\n}}\n",
        serde_json::to_string(&version).unwrap(),
        bytes.len(),
        if cfg!(target_os = "macos") { "darwin" } else { "linux" },
        if cfg!(target_arch = "aarch64") { "arm64" } else { "amd64" },
    );
    assert_eq!(
        String::from_utf8(fs::read(dir.join("manifest.json")).unwrap()).unwrap(),
        want
    );
    // No temporary file is left behind.
    let leftovers: Vec<_> = fs::read_dir(s.archive.interpreters_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "sha256")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Identical bytes: a no-op.
    let mtime = fs::metadata(dir.join("manifest.json"))
        .unwrap()
        .modified()
        .unwrap();
    let (again, status) = s.archive.archive(&fake()).unwrap();
    assert_eq!(status, ArchiveStatus::Unchanged);
    assert_eq!(again, archived);
    assert_eq!(
        fs::metadata(dir.join("manifest.json"))
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
    assert_eq!(s.archive.only().unwrap(), Some(archived.clone()));

    // Other bytes: a second interpreter; no longer "the only one".
    let other = variant(s.dir.path(), "AILANG v0.52.1");
    let (second, status) = s.archive.archive(&other).unwrap();
    assert_eq!(status, ArchiveStatus::Added);
    assert_eq!(second.manifest.release(), "AILANG v0.52.1");
    let listed: Vec<String> = s
        .archive
        .list()
        .unwrap()
        .into_iter()
        .map(|a| a.hash_ref)
        .collect();
    let mut want_refs = vec![archived.hash_ref.clone(), second.hash_ref.clone()];
    want_refs.sort();
    assert_eq!(listed, want_refs);
    assert_eq!(s.archive.only().unwrap(), None);
}

#[test]
fn a_sidecar_without_the_version_prefix_is_reprobed() {
    let s = store();
    let (archived, _) = s.archive.archive(&fake()).unwrap();
    let sidecar = archived.binary.with_file_name("manifest.json");
    let broken = Manifest {
        version: String::new(),
        ..archived.manifest.clone()
    };
    fs::write(&sidecar, broken.to_bytes()).unwrap();
    let (again, status) = s.archive.archive(&fake()).unwrap();
    assert_eq!(status, ArchiveStatus::Repaired);
    assert_eq!(again.manifest, archived.manifest);
    assert_eq!(fs::read(&sidecar).unwrap(), archived.manifest.to_bytes());
}

#[test]
fn a_non_executable_path_is_refused() {
    let s = store();
    let copy = s.dir.path().join("ailang");
    fs::copy(fake(), &copy).unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o644)).unwrap();
    let err = s.archive.archive(&copy).unwrap_err();
    assert!(matches!(err, ArchiveError::NotExecutable { .. }));
    assert_eq!(
        err.to_string(),
        format!("interpreter path {copy:?} is not an executable regular file: mode 0644 has no execute bit")
    );
    assert!(s.archive.list().unwrap().is_empty());
}

#[test]
fn a_modified_archived_binary_is_refused_before_exec() {
    let s = store();
    let interp = pinned(&s);
    let marker = s.dir.path().join("executed");
    let bin = interp.binary().to_path_buf();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(
        &bin,
        format!("#!/bin/sh\ntouch {}\necho '{{}}'\n", marker.display()),
    )
    .unwrap();

    let err = run(&interp, "output {\"ok\":true}", "{}", secs(10)).unwrap_err();
    match &err {
        CapsuleError::Integrity { expected, actual } => {
            assert_eq!(expected, interp.interpreter_ref());
            assert_ne!(actual, expected);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        interp.check(&src(""), RunLimits::until(secs(10))),
        Err(RunError::HashMismatch { .. })
    ));
    assert!(!marker.exists(), "the modified binary was executed");
    let resolved = s.archive.resolve(interp.interpreter_ref()).unwrap_err();
    assert_eq!(resolved.kind(), "hash_mismatch");
}

/// Overwrite one byte in the middle of `bin` in place: same inode, same size, same mode
/// (0555) and the old mtime put back; only the bytes and the ctime change.
fn edit_in_place(bin: &Path) {
    let before = fs::metadata(bin).unwrap();
    let mut bytes = fs::read(bin).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    let open = || fs::OpenOptions::new().write(true).open(bin);
    let f = match open() {
        Ok(f) => f,
        Err(_) => {
            fs::set_permissions(bin, fs::Permissions::from_mode(0o755)).unwrap();
            let f = open().unwrap();
            fs::set_permissions(bin, fs::Permissions::from_mode(0o555)).unwrap();
            f
        }
    };
    use std::os::unix::fs::FileExt;
    f.write_all_at(&bytes[mid..=mid], mid as u64).unwrap();
    f.set_modified(before.modified().unwrap()).unwrap();
    drop(f);
    let after = fs::metadata(bin).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    assert_eq!(after.permissions().mode() & 0o7777, 0o555);
}

#[test]
fn the_verified_digest_cache_still_refuses_a_swapped_or_edited_binary() {
    use world::interp::archive::{cached, RACY};
    let (a, b, c) = (store(), store(), store());
    let (ia, ib, ic) = (pinned(&a), pinned(&b), pinned(&c));
    let ok = |i: &External| {
        assert_eq!(
            run(i, "output {\"ok\":true}", "{}", secs(10)).unwrap(),
            b"{\"ok\":true}"
        );
    };
    let refused = |i: &External| {
        let err = run(i, "output {\"ok\":true}", "{}", secs(10)).unwrap_err();
        assert!(matches!(err, CapsuleError::Integrity { .. }), "{err:?}");
    };
    // Freshly written files are never cached (their times are within RACY of now).
    ok(&ia);
    assert!(!cached(ia.binary()), "a file younger than RACY was cached");
    std::thread::sleep(RACY + Duration::from_millis(300));
    for i in [&ia, &ib, &ic] {
        ok(i);
        assert!(cached(i.binary()), "the verified digest was not cached");
    }

    // a: swapped: other bytes renamed over the archived path (a new inode), mode 0555, the
    // old mtime.
    let bin = ia.binary().to_path_buf();
    let old = fs::metadata(&bin).unwrap();
    let swap = bin.with_file_name(".swap");
    fs::copy(variant(a.dir.path(), "swapped"), &swap).unwrap();
    fs::File::options()
        .write(true)
        .open(&swap)
        .unwrap()
        .set_modified(old.modified().unwrap())
        .unwrap();
    fs::set_permissions(&swap, fs::Permissions::from_mode(0o555)).unwrap();
    fs::rename(&swap, &bin).unwrap();
    // b and c: edited in place: same inode, size, mode and mtime; only the ctime tells.
    edit_in_place(ib.binary());
    edit_in_place(ic.binary());
    // c is run at once (its ctime is within RACY: re-hashed, not looked up).
    refused(&ic);
    // a and b are run only once the change is older than RACY: their cached keys are still
    // there and differ from the files' (the inode; the ctime).
    std::thread::sleep(RACY + Duration::from_millis(300));
    for i in [&ia, &ib] {
        assert!(!cached(i.binary()));
        refused(i);
    }
    assert!(matches!(
        ib.check(&src(""), RunLimits::until(secs(10))),
        Err(RunError::HashMismatch { .. })
    ));
}

#[test]
fn a_run_returns_the_output_without_its_newline() {
    let s = store();
    let interp = pinned(&s);
    assert_eq!(
        run(&interp, "output {\"ok\":true}", "{}", secs(10)).unwrap(),
        b"{\"ok\":true}"
    );
    // The input reaches main as a JSON string and comes back byte for byte.
    let input = r#"{"a":"<&>\u2028","b":[1,2.50,"é"],"c":"\n"}"#;
    assert_eq!(
        run(&interp, "echo-input", input, secs(10)).unwrap(),
        input.as_bytes()
    );
    // Exactly one LF is stripped.
    assert_eq!(
        run(&interp, r#"write "{}\n\n""#, "{}", secs(10)).unwrap(),
        b"{}\n"
    );
}

#[test]
fn the_child_sees_exactly_the_capsule_environment_and_the_root_is_removed() {
    let s = store();
    let interp = pinned(&s);
    let out = run(&interp, "print-env", "{}", secs(10)).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let cwd = doc["cwd"].as_str().unwrap().to_string();
    let env = doc["env"].as_object().unwrap();
    let keys: Vec<&str> = env.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "AILANG_CACHE_DIR",
            "AILANG_FS_SANDBOX",
            "AILANG_RELAX_MODULES"
        ]
    );
    assert_eq!(env["AILANG_RELAX_MODULES"], "1");
    let sandbox = env["AILANG_FS_SANDBOX"].as_str().unwrap();
    assert_eq!(
        fs::canonicalize(sandbox).ok(),
        None,
        "the temp root must be removed afterwards"
    );
    assert!(Path::new(sandbox)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("world-capsule-"));
    assert_eq!(
        env["AILANG_CACHE_DIR"].as_str().unwrap(),
        format!("{sandbox}/.capsule-cache")
    );
    assert!(
        cwd.ends_with(Path::new(sandbox).file_name().unwrap().to_str().unwrap()),
        "{cwd}"
    );
    assert_eq!(
        doc["argv"],
        serde_json::json!([
            "run",
            "--quiet",
            "--caps",
            "",
            "--entry",
            "main",
            "--args-file",
            "args.json",
            "host/capsule/main.ail"
        ])
    );
    assert_eq!(doc["ownGroup"], true);
}

#[test]
fn the_double_refuses_a_call_outside_the_capsule_contract() {
    let root = tempfile::tempdir().unwrap();
    let out = Command::new(fake())
        .args([
            "run",
            "--quiet",
            "--caps",
            "",
            "--entry",
            "main",
            "--args-file",
            "args.json",
            "host/capsule/main.ail",
        ])
        .current_dir(root.path())
        .env("AILANG_RELAX_MODULES", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(70));
    assert!(String::from_utf8_lossy(&out.stderr).contains("FAKE-AILANG CONTRACT VIOLATION"));
}

fn process_gone(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // A zombie waiting for a reaper that never comes (PID 1 in a container) is dead too.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .map(|r| r.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => {
            // No /proc (macOS): signal 0 tells whether the pid exists.
            // SAFETY: kill with signal 0 only checks for existence.
            unsafe { libc::kill(pid, 0) != 0 }
        }
    }
}

#[test]
fn a_deadline_kills_the_whole_process_group() {
    let s = store();
    let interp = pinned(&s);
    let pidfile = s.dir.path().join("grandchild.pid");
    let start = Instant::now();
    let err = run(
        &interp,
        &format!("sleep-with-child {} 30", pidfile.display()),
        "{}",
        start + Duration::from_millis(1500),
    )
    .unwrap_err();
    assert!(matches!(err, CapsuleError::Timeout), "{err:?}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    let pid: i32 = fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(3);
    while !process_gone(pid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(process_gone(pid), "grandchild {pid} survived the deadline");
}

#[test]
fn a_flood_is_an_output_limit_not_a_timeout() {
    let s = store();
    let interp = pinned(&s);
    let start = Instant::now();
    let err = run(&interp, "flood-stdout", "{}", secs(30)).unwrap_err();
    assert!(
        matches!(
            err,
            CapsuleError::OutputLimit {
                stream: "stdout",
                cap: RunLimits::OUTPUT_CAP
            }
        ),
        "{err:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    let err = run(&interp, "flood-stderr", "{}", secs(30)).unwrap_err();
    assert!(
        matches!(
            err,
            CapsuleError::OutputLimit {
                stream: "stderr",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "transition stderr exceeded the 8388608-byte stream cap"
    );
}

#[test]
fn bad_output_is_an_output_error() {
    let s = store();
    let interp = pinned(&s);
    let err = run(&interp, "non-json", "{}", secs(10)).unwrap_err();
    assert_eq!(err.to_string(), "transition output is not a JSON object");
    let err = run(&interp, "output null", "{}", secs(10)).unwrap_err();
    assert!(matches!(err, CapsuleError::Output("is not a JSON object")));
    let big = format!("output {{\"a\":\"{}\"}}", "x".repeat(capsule::MAX_OUTPUT));
    let err = run(&interp, &big, "{}", secs(10)).unwrap_err();
    assert!(
        matches!(err, CapsuleError::Output("exceeds the output cap")),
        "{err:?}"
    );
}

#[test]
fn calling_convention_failures_are_incompatible() {
    let s = store();
    let interp = pinned(&s);
    let err = run(&interp, "fail ARG_DECODE_MISMATCH", "{}", secs(10)).unwrap_err();
    assert!(
        matches!(&err, CapsuleError::Incompatible { stderr } if stderr.contains("ARG_DECODE_MISMATCH")),
        "{err:?}"
    );
    // A real decode mismatch: main takes no argument but gets a string.
    let no_param =
        b"module capsule/main\n-- fake: output {}\nexport func main() -> string =\n  \"{}\"\n";
    let err = capsule::run_phase(&interp, no_param, b"{}", secs(10)).unwrap_err();
    assert!(
        matches!(&err, CapsuleError::Incompatible { stderr } if stderr == "Error: ARG_DECODE_MISMATCH: expected (), got string"),
        "{err:?}"
    );
    let no_main = b"module capsule/main\n-- fake: output {}\nexport func other(input: string) -> string =\n  input\n";
    let err = capsule::run_phase(&interp, no_main, b"{}", secs(10)).unwrap_err();
    assert!(
        matches!(&err, CapsuleError::Incompatible { stderr } if stderr.contains("entrypoint 'main' not found")),
        "{err:?}"
    );
}

#[test]
fn other_failures_are_execution_errors() {
    let s = store();
    let interp = pinned(&s);
    match run(&interp, "fail MOD010", "{}", secs(10)).unwrap_err() {
        CapsuleError::Execution {
            exit_code: 1,
            stderr,
        } => assert!(
            stderr.starts_with("Error: MOD010: module 'x/y'"),
            "{stderr}"
        ),
        other => panic!("{other:?}"),
    }
    match run(
        &interp,
        &format!("fail RT {}", "z".repeat(1000)),
        "{}",
        secs(10),
    )
    .unwrap_err()
    {
        CapsuleError::Execution { stderr, .. } => assert_eq!(stderr.len(), capsule::QUOTE_LIMIT),
        other => panic!("{other:?}"),
    }
    match run(&interp, "exit 7", "{}", secs(10)).unwrap_err() {
        CapsuleError::Execution { exit_code: 7, .. } => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn check_passes_self_contained_sources_and_refuses_world_imports() {
    let s = store();
    let interp = pinned(&s);
    let limits = RunLimits::until(secs(10));
    let ok = interp.check(&src("output {}"), limits).unwrap();
    assert!(ok.passed, "{}", ok.diagnostics);
    let mut importing = b"module capsule/main\nimport world/logepoch (epoch)\n".to_vec();
    importing.extend_from_slice(&src(""));
    let bad = interp.check(&importing, limits).unwrap();
    assert!(!bad.passed);
    assert_eq!(
        bad.diagnostics,
        "Error: LDR001: module not found: world/logepoch\n"
    );
    let bad = interp
        .check(&src("check-fail TC_MATCH_001 non-exhaustive match"), limits)
        .unwrap();
    assert!(!bad.passed);
    assert!(bad
        .diagnostics
        .contains("TC_MATCH_001: non-exhaustive match"));
    let start = Instant::now();
    let slow = interp.check(
        &src("check-sleep 30"),
        RunLimits::until(start + Duration::from_millis(500)),
    );
    assert!(matches!(slow, Err(RunError::Timeout)), "{slow:?}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn the_compile_cache_template_is_promoted_and_seeds_later_runs() {
    let s = store();
    let interp = pinned(&s);
    let source = src("report-cache\nwrite-cache");
    let cold = capsule::run_phase(&interp, &source, b"{}", secs(10)).unwrap();
    assert_eq!(cold, b"{\"warm\":false}");
    let hex = interp.interpreter_ref().trim_start_matches("sha256:");
    let template = s
        .archive
        .capsule_cache_dir(hex)
        .join(hex::encode(Sha256::digest(&source)));
    assert!(template.join("compile/manifest.json").is_file());
    let warm = capsule::run_phase(&interp, &source, b"{}", secs(10)).unwrap();
    assert_eq!(warm, b"{\"warm\":true}");
    // check promotes its cache the same way.
    let checked = src("write-cache\noutput {}");
    assert!(
        interp
            .check(&checked, RunLimits::until(secs(10)))
            .unwrap()
            .passed
    );
    assert!(s
        .archive
        .capsule_cache_dir(hex)
        .join(hex::encode(Sha256::digest(&checked)))
        .join("compile/manifest.json")
        .is_file());
}

#[test]
fn concurrent_runs_all_complete() {
    let s = store();
    let interp = pinned(&s);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..12)
            .map(|i| {
                let interp = &interp;
                scope.spawn(move || run(interp, "echo-input", &format!("{{\"i\":{i}}}"), secs(30)))
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(
                h.join().unwrap().unwrap(),
                format!("{{\"i\":{i}}}").into_bytes()
            );
        }
    });
}

/// Contract tests against a real `ailang`; skipped (saying so) unless `AILANG_BIN` is set.
#[test]
fn real_ailang_when_available() {
    let Some(bin) = std::env::var_os("AILANG_BIN") else {
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "note: AILANG_BIN is not set; skipping the real-ailang contract test"
        );
        return;
    };
    let s = store();
    let (archived, _) = s.archive.archive(Path::new(&bin)).unwrap();
    assert!(
        archived.manifest.release().starts_with("AILANG "),
        "{:?}",
        archived.manifest.version
    );
    let interp = External::resolve(&s.archive, &archived.hash_ref).unwrap();
    let echo = b"module capsule/main\n\nexport func main(input: string) -> string =\n  input\n";
    assert!(
        interp
            .check(echo, RunLimits::until(secs(30)))
            .unwrap()
            .passed
    );
    let input = br#"{"name":"Ada","s":"<&>"}"#;
    assert_eq!(
        capsule::run_phase(&interp, echo, input, secs(60)).unwrap(),
        input
    );
    let unit = b"module capsule/main\n\nexport func main() -> string =\n  \"{}\"\n";
    let err = capsule::run_phase(&interp, unit, b"{}", secs(60)).unwrap_err();
    assert!(matches!(err, CapsuleError::Incompatible { .. }), "{err:?}");
    let importing = b"module capsule/main\n\nimport world/logepoch (epoch)\n\nexport func main(input: string) -> string =\n  input\n";
    let checked = interp.check(importing, RunLimits::until(secs(30))).unwrap();
    assert!(!checked.passed);
    assert!(
        checked.diagnostics.contains("LDR001"),
        "{}",
        checked.diagnostics
    );
}
