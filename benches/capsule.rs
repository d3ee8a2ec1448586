//! Capsule overhead (issue 3, "Performance"): `world`'s capsule run of `fake-ailang` (the
//! TEST DOUBLE for the `ailang` CLI) against exec'ing the same archived binary directly,
//! with the same argv, cwd and environment, N times each in this process. Prints both means
//! and the ratio; the target is ≤ 1.5 (issue 19 item 4).
//!
//! `cargo bench --bench capsule` (N from env `CAPSULE_BENCH_N`, default 200).

use std::fs;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use world::interp::archive::Archive;
use world::interp::capsule;
use world::interp::external::External;

#[path = "../fixtures/fake-ailang/locate.rs"]
mod locate;

const SOURCE: &[u8] = b"module capsule/main\n-- fake: output {\"ok\":true}\nexport func main(input: string) -> string =\n  input\n";

fn main() {
    let n: u32 = std::env::var("CAPSULE_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let store = tempfile::tempdir().expect("temp dir");
    let archive = Archive::for_db(&store.path().join("world.db"));
    let fake = locate::fake_ailang();
    let (archived, _) = archive.archive(&fake).expect("archive the fake");
    let interp = External::resolve(&archive, &archived.hash_ref).expect("resolve");
    // The verified-digest cache (DEC-PERF-6) holds only files older than RACY, as an archived
    // interpreter is in use.
    std::thread::sleep(world::interp::archive::RACY);

    // The direct baseline runs in one pre-staged root, exactly as the capsule stages it.
    let root = tempfile::Builder::new()
        .prefix("world-capsule-")
        .tempdir()
        .expect("root");
    let root_path = std::path::absolute(root.path()).expect("absolute root");
    fs::create_dir_all(root_path.join("host/capsule")).expect("mkdir");
    fs::write(root_path.join("host/capsule/main.ail"), SOURCE).expect("source");
    fs::write(root_path.join("args.json"), capsule::args_bytes(b"{}")).expect("args");
    fs::create_dir_all(root_path.join(".capsule-cache")).expect("cache");
    let direct = || {
        let out = Command::new(&archived.binary)
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
            .current_dir(&root_path)
            .env_clear()
            .env("AILANG_FS_SANDBOX", &root_path)
            .env("AILANG_RELAX_MODULES", "1")
            .env("AILANG_CACHE_DIR", root_path.join(".capsule-cache"))
            .stdin(Stdio::null())
            .process_group(0)
            .output()
            .expect("direct exec");
        assert_eq!(
            out.stdout,
            b"{\"ok\":true}\n",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let via_capsule = || {
        let out = capsule::run_phase(
            &interp,
            SOURCE,
            b"{}",
            Instant::now() + Duration::from_secs(60),
        )
        .expect("capsule run");
        assert_eq!(out, b"{\"ok\":true}");
    };

    for _ in 0..10 {
        direct();
        via_capsule();
    }
    // Interleave in blocks so machine noise hits both sides alike.
    let (mut t_direct, mut t_capsule) = (Duration::ZERO, Duration::ZERO);
    let block = 10;
    for _ in 0..n.div_ceil(block) {
        let t = Instant::now();
        for _ in 0..block {
            direct();
        }
        t_direct += t.elapsed();
        let t = Instant::now();
        for _ in 0..block {
            via_capsule();
        }
        t_capsule += t.elapsed();
    }
    let runs = f64::from(n.div_ceil(block) * block);
    // The spec re-hashes the archived binary before every run; measure that share apart.
    let t = Instant::now();
    for _ in 0..n {
        world::interp::archive::hash_file(&archived.binary).expect("hash");
    }
    let h = t.elapsed().as_secs_f64() / f64::from(n.max(1)) * 1e3;
    let d = t_direct.as_secs_f64() / runs * 1e3;
    let c = t_capsule.as_secs_f64() / runs * 1e3;
    let ratio = c / d;
    println!(
        "binary size: {} bytes (re-hashed before every capsule run)",
        archived.manifest.size
    );
    println!("direct exec : {d:.3} ms/run over {runs} runs");
    println!("capsule run : {c:.3} ms/run over {runs} runs");
    println!(
        "full re-hash: {h:.3} ms (what a run costs without the verified-digest cache, DEC-PERF-6)"
    );
    println!(
        "ratio       : {ratio:.3} (target <= 1.5: {})",
        if ratio <= 1.5 { "met" } else { "NOT met" }
    );
    println!(
        "ratio with a full re-hash per run (before DEC-PERF-6): {:.3}",
        (c + h) / d
    );
}
