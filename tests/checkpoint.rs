//! Signed checkpoints, proofs, witnesses and offline bundles through the binary (issue 33):
//! a checkpoint is taken, then a history rewritten with every hash recomputed, a log
//! truncated and re-extended, and a fork from an older head are each caught by `verify
//! --checkpoint`; an exported bundle verifies with only the public key and is refused after
//! any edit or under another key. History is rewritten with rusqlite plus `world commit`,
//! so every hash, world ref and derived table is recomputed by `world` itself.

use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;

use crate::common::{Run, TestEnv};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A store with genesis and `n` notes committed with `commit --put`, and a log key.
fn store_with(n: usize) -> TestEnv {
    let env = TestEnv::new();
    env.run(&["genesis"]).ok();
    put(&env, 1, n, "note");
    env.run(&["key", "generate", "--out", s(&env.path("log.key"))])
        .ok();
    let pubkey = env.run(&["key", "public", s(&env.path("log.key"))]).ok();
    env.write("log.pub", pubkey.stdout.as_bytes());
    env
}

fn put(env: &TestEnv, from: usize, to: usize, tag: &str) {
    for i in from..=to {
        let f = env.write(
            &format!("{tag}{i}.json"),
            format!("{{\"{tag}\":{i}}}").as_bytes(),
        );
        env.run(&["commit", "--put", s(&f), "--semantic-id", "demo/note/v1"])
            .ok();
    }
}

fn checkpoint(env: &TestEnv, out: &str) -> PathBuf {
    let p = env.path(out);
    env.run(&[
        "checkpoint",
        "--key",
        s(&env.path("log.key")),
        "--out",
        s(&p),
    ])
    .ok();
    p
}

fn verify_cp(env: &TestEnv, db: &Path, cp: &Path) -> Run {
    env.run(&[
        "--db",
        s(db),
        "verify",
        "--json",
        "--checkpoint",
        s(cp),
        "--key",
        s(&env.path("log.pub")),
    ])
}

fn categories(r: &Run) -> Vec<String> {
    r.json()["failures"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| f["category"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Remove entries `k..` as someone with write access would: log rows, their world rows and
/// memberships, and the head moved back to world `k − 1`; the signed checkpoints this store
/// kept are deleted too, so nothing inside the file remembers.
fn rewind(db: &Path, k: i64) {
    let c = Connection::open(db).expect("open");
    c.execute_batch(&format!(
        "DELETE FROM commit_objects WHERE entry_index >= {k};
         DELETE FROM log_entries WHERE entry_index >= {k};
         DELETE FROM worlds WHERE revision >= {k};
         UPDATE store_heads SET world_ref = (SELECT world_ref FROM worlds WHERE revision = {k} - 1)
           WHERE head_key = 'selected_world_head';
         DELETE FROM world_checkpoints;"
    ))
    .expect("rewind");
}

#[test]
fn a_checkpoint_verifies_and_proves_its_entries() {
    let env = store_with(5);
    let cp = checkpoint(&env, "cp.txt");
    let note = fs::read_to_string(&cp).expect("read");
    let lines: Vec<&str> = note.lines().collect();
    assert!(lines[0].starts_with("ailang-world/"), "{note}");
    assert_eq!(lines[1], "6");
    assert_eq!(lines[3], "");
    assert!(
        lines[4].starts_with(&format!("\u{2014} {} ", lines[0])),
        "{note}"
    );
    // The private key is 0600; the public key is a signed-note verifier key.
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(env.path("log.key"))
        .expect("key")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let vkey = fs::read_to_string(env.path("log.pub")).expect("pub");
    world::tlog::note::Verifier::parse(vkey.trim()).expect("a verifier key");

    verify_cp(&env, &env.db, &cp).ok();
    env.verify_ok();

    // Stored, listed and served as the latest.
    let list = env.run(&["--json", "checkpoint", "list"]).ok().json_lines();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["treeSize"], 6);
    assert_eq!(list[0]["note"].as_str(), Some(note.as_str()));
    // Signing again without new entries stores nothing new.
    env.run(&["checkpoint", "--key", s(&env.path("log.key"))])
        .ok();
    assert_eq!(
        env.run(&["--json", "checkpoint", "list"])
            .ok()
            .json_lines()
            .len(),
        1
    );

    // Every entry's inclusion proof is a c2sp.org/tlog-proof carrying the checkpoint.
    for i in 0..6 {
        let p = env
            .run(&[
                "prove",
                &i.to_string(),
                "--checkpoint",
                s(&cp),
                "--key",
                s(&env.path("log.pub")),
            ])
            .ok();
        assert!(
            p.stdout.starts_with("c2sp.org/tlog-proof@v1\nextra "),
            "{}",
            p.stdout
        );
        assert!(p.stdout.contains(&format!("\nindex {i}\n")));
        assert!(p.stdout.ends_with(&note), "{}", p.stdout);
        let parsed = world::tlog::checkpoint::InclusionProof::parse(&p.stdout).expect("parse");
        let body = world::tlog::checkpoint::Checkpoint::parse_body(
            &world::tlog::note::Note::parse(note.as_bytes())
                .expect("note")
                .text,
        )
        .expect("body");
        let leaf = parsed.extra.clone().expect("extra");
        parsed
            .verify_leaf(&leaf, &body)
            .expect("the proof verifies");
    }
    // An entry outside the checkpoint's tree is bad input.
    put(&env, 6, 6, "note");
    env.run(&["prove", "6", "--checkpoint", s(&cp)])
        .code(1)
        .one_line_error();
    // Another key refuses the checkpoint (exit 3).
    env.run(&[
        "key",
        "generate",
        "--out",
        s(&env.path("other.key")),
        "--name",
        "example.com/other",
    ])
    .ok();
    let other = env.run(&["key", "public", s(&env.path("other.key"))]).ok();
    let r = env
        .run(&[
            "--json",
            "verify",
            "--checkpoint",
            s(&cp),
            "--key",
            other.stdout.trim(),
        ])
        .code(3);
    assert_eq!(categories(&r), vec!["checkpoint_signature"]);
}

#[test]
fn a_rewritten_history_with_every_hash_recomputed_fails() {
    let env = store_with(5);
    let cp = checkpoint(&env, "cp.txt");
    // Entry 3's object rewritten: entries 3.. recommitted by `world` itself, so the objects,
    // entry hashes, world refs, head and derived tables are all consistent again.
    rewind(&env.db, 3);
    let f = env.write("forged3.json", b"{\"note\":\"forged\"}");
    env.run(&["commit", "--put", s(&f), "--semantic-id", "demo/note/v1"])
        .ok();
    put(&env, 4, 5, "note");
    assert_eq!(env.log_len(), 6);
    env.verify_ok();
    let r = verify_cp(&env, &env.db, &cp).code(3);
    assert_eq!(categories(&r), vec!["checkpoint"], "{r:#?}");
    assert!(r.json()["failures"][0]["reason"]
        .as_str()
        .unwrap_or_default()
        .contains("rewritten or forked"));
    // Proofs against the checkpoint are refused too.
    env.run(&["prove", "1", "--checkpoint", s(&cp)]).code(3);
}

#[test]
fn a_truncated_and_re_extended_log_fails_and_the_store_refuses_to_sign_a_fork() {
    let env = store_with(5);
    let cp = checkpoint(&env, "cp.txt");
    // Truncated only: the checkpoint covers more than the log has.
    let copy = env.path("truncated.db");
    fs::copy(&env.db, &copy).expect("copy");
    rewind(&copy, 2);
    let r = verify_cp(&env, &copy, &cp).code(3);
    assert!(categories(&r).contains(&"checkpoint".to_string()), "{r:#?}");

    // Truncated and re-extended past the checkpoint's size, keeping the stored checkpoints:
    // plain verify reports the store's own checkpoint, and signing a new one is refused.
    let c = Connection::open(&env.db).expect("open");
    c.execute_batch(
        "DELETE FROM commit_objects WHERE entry_index >= 4;
         DELETE FROM log_entries WHERE entry_index >= 4;
         DELETE FROM worlds WHERE revision >= 4;
         UPDATE store_heads SET world_ref = (SELECT world_ref FROM worlds WHERE revision = 3)
           WHERE head_key = 'selected_world_head';",
    )
    .expect("truncate");
    drop(c);
    put(&env, 1, 4, "again");
    assert_eq!(env.log_len(), 8);
    let r = env.run(&["--json", "verify"]).code(3);
    assert!(categories(&r).contains(&"checkpoint".to_string()), "{r:#?}");
    let r = env
        .run(&["checkpoint", "--key", s(&env.path("log.key"))])
        .code(3);
    assert!(r.stderr.contains("refusing to sign a fork"), "{r:#?}");
    let r = verify_cp(&env, &env.db, &cp).code(3);
    assert!(categories(&r).contains(&"checkpoint".to_string()), "{r:#?}");
}

#[test]
fn a_fork_from_an_older_head_fails_and_a_consistent_log_proves_consistency() {
    let env = store_with(3);
    let fork = env.path("fork.db");
    fs::copy(&env.db, &fork).expect("copy at 4 entries");
    let old = checkpoint(&env, "cp4.txt");
    put(&env, 4, 6, "note");
    let cp = checkpoint(&env, "cp7.txt");
    // The original extends both checkpoints; a consistency proof links them.
    verify_cp(&env, &env.db, &old).ok();
    let proof = env
        .run(&[
            "prove",
            "--from",
            s(&old),
            "--checkpoint",
            s(&cp),
            "--key",
            s(&env.path("log.pub")),
        ])
        .ok();
    assert!(
        proof.stdout.starts_with("old 4\nnew 7\n"),
        "{}",
        proof.stdout
    );
    let pj = env
        .run(&["--json", "prove", "--from", s(&old), "--checkpoint", s(&cp)])
        .ok()
        .json();
    assert_eq!(
        (pj["oldSize"].as_u64(), pj["newSize"].as_u64()),
        (Some(4), Some(7))
    );
    // The fork: the copy taken at 4 entries, extended differently to the same size.
    put_at(&env, &fork, 4, 6, "forked");
    let r = verify_cp(&env, &fork, &cp).code(3);
    assert_eq!(categories(&r), vec!["checkpoint"], "{r:#?}");
    // It still extends the older checkpoint.
    verify_cp(&env, &fork, &old).ok();
    // No consistency proof from the fork's view.
    env.run(&[
        "--db",
        s(&fork),
        "prove",
        "--from",
        s(&old),
        "--checkpoint",
        s(&cp),
    ])
    .code(3);
}

fn put_at(env: &TestEnv, db: &Path, from: usize, to: usize, tag: &str) {
    for i in from..=to {
        let f = env.write(
            &format!("{tag}{i}.json"),
            format!("{{\"{tag}\":{i}}}").as_bytes(),
        );
        env.run(&[
            "--db",
            s(db),
            "commit",
            "--put",
            s(&f),
            "--semantic-id",
            "demo/note/v1",
        ])
        .ok();
    }
}

#[test]
fn witnesses_cosign_and_verify_requires_them() {
    let env = store_with(3);
    let old = checkpoint(&env, "cp4.txt");
    put(&env, 4, 5, "note");
    let cp = checkpoint(&env, "cp6.txt");
    // A witness key needs a name.
    env.run(&[
        "key",
        "generate",
        "--witness",
        "--out",
        s(&env.path("w.key")),
    ])
    .code(2);
    let w = env
        .run(&[
            "key",
            "generate",
            "--witness",
            "--name",
            "witness.example/ci",
            "--out",
            s(&env.path("w.key")),
        ])
        .ok();
    let wpub = w.stdout.trim().to_string();
    // The witness cosigns the first checkpoint, then the next one given a consistency proof.
    let cosigned_old = env.path("cp4-w.txt");
    env.run(&[
        "checkpoint",
        "cosign",
        s(&old),
        "--key",
        s(&env.path("w.key")),
        "--log-key",
        s(&env.path("log.pub")),
        "--out",
        s(&cosigned_old),
    ])
    .ok();
    let proof = env
        .run(&["prove", "--from", s(&old), "--checkpoint", s(&cp)])
        .ok();
    let proof_file = env.write("proof.txt", proof.stdout.as_bytes());
    let cosigned = env
        .run(&[
            "checkpoint",
            "cosign",
            s(&cp),
            "--key",
            s(&env.path("w.key")),
            "--log-key",
            s(&env.path("log.pub")),
            "--last",
            s(&old),
            "--proof",
            s(&proof_file),
        ])
        .ok();
    let cosigned_file = env.write("cp6-w.txt", cosigned.stdout.as_bytes());
    assert_eq!(
        cosigned
            .stdout
            .lines()
            .filter(|l| l.starts_with('\u{2014}'))
            .count(),
        2
    );
    // A log key cannot cosign, and a wrong proof is refused.
    env.run(&[
        "checkpoint",
        "cosign",
        s(&cp),
        "--key",
        s(&env.path("log.key")),
        "--log-key",
        s(&env.path("log.pub")),
    ])
    .code(1);
    let bad_proof = env.write("bad.txt", proof.stdout.replacen('A', "B", 1).as_bytes());
    let r = env.run(&[
        "checkpoint",
        "cosign",
        s(&cp),
        "--key",
        s(&env.path("w.key")),
        "--log-key",
        s(&env.path("log.pub")),
        "--last",
        s(&old),
        "--proof",
        s(&bad_proof),
    ]);
    assert_ne!(r.code, 0, "{r:#?}");

    let args = |cpf: &Path| {
        vec![
            "--json".to_string(),
            "verify".into(),
            "--checkpoint".into(),
            s(cpf).into(),
            "--key".into(),
            s(&env.path("log.pub")).into(),
            "--witness".into(),
            wpub.clone(),
        ]
    };
    let run = |a: Vec<String>| env.run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let ok = run(args(&cosigned_file)).ok().json();
    let label = wpub.splitn(3, '+').take(2).collect::<Vec<_>>().join("+");
    assert_eq!(ok["checkpoint"]["witnesses"][0][0], label.as_str());
    run(args(&cosigned_old)).ok();
    // Without the witness's cosignature the checkpoint is refused.
    let r = run(args(&cp)).code(3);
    assert_eq!(categories(&r), vec!["checkpoint_signature"]);
    // Merged into the stored checkpoint, which `checkpoint show` and GET /v1/checkpoint print.
    env.run(&["checkpoint", "merge", s(&cosigned_file), "--witness", &wpub])
        .ok();
    let shown = env.run(&["checkpoint", "show"]).ok();
    assert_eq!(shown.stdout, cosigned.stdout);
    // A note whose text no stored checkpoint signs cannot be merged.
    let other = env.write(
        "x.txt",
        cosigned.stdout.replace("\n6\n", "\n5\n").as_bytes(),
    );
    env.run(&["checkpoint", "merge", s(&other)]).code(1);
}

/// The mixed-episode fixture of `tests/replay.rs`, reduced: genesis, publish, one session,
/// three invocations of episode ep1 and one of ep2.
fn episode_store() -> TestEnv {
    let env = TestEnv::new();
    let manifest = crate::common::repo().join("fixtures/transitions/manifest.json");
    env.run(&["genesis"]).ok();
    // The manifest names its sources relative to the repository.
    let o = env
        .cmd()
        .current_dir(crate::common::repo())
        .args(["publish", "--manifest", s(&manifest), "--yes"])
        .output()
        .expect("publish");
    Run::from_output(o).ok();
    for ep in ["ep1", "ep2"] {
        let tok = env.path(&format!("{ep}.tok"));
        env.run(&[
            "session",
            "mint",
            "--episode",
            ep,
            "--grant",
            "world.apply=world:10",
            "--yes",
            "--out",
            s(&tok),
        ])
        .ok();
    }
    let call = |ep: &str, id: &str, args: &str| {
        let tok = env.path(&format!("{ep}.tok"));
        env.run(&["invoke", id, "--session", s(&tok), "--args", args])
            .ok();
    };
    call("ep1", "echo", r#"{"a":1}"#);
    call("ep2", "echo", r#"{"b":2}"#);
    call("ep1", "counter", r#"{"a":1,"b":[1,2]}"#);
    call("ep1", "echo", r#"{"c":3}"#);
    env.run(&["key", "generate", "--out", s(&env.path("log.key"))])
        .ok();
    let pubkey = env.run(&["key", "public", s(&env.path("log.key"))]).ok();
    env.write("log.pub", pubkey.stdout.as_bytes());
    env
}

fn verify_bundle(dir: &Path, bundle: &Path, key: &str) -> Run {
    Run::from_output(
        std::process::Command::new(crate::common::world_bin())
            .env_clear()
            .env("HOME", dir)
            .current_dir(dir)
            .args(["--json", "verify", "--bundle", s(bundle), "--key", key])
            .output()
            .expect("run"),
    )
}

#[test]
fn an_exported_bundle_verifies_offline_with_only_the_public_key() {
    let env = episode_store();
    let b = env.path("b.db");
    // No checkpoint yet: refused, nothing written.
    let r = env
        .run(&["export-episode", "ep1", "--out", s(&b), "--checkpoint"])
        .code(1);
    assert!(r.stderr.contains("no checkpoint"), "{r:#?}");
    assert!(!b.exists());
    checkpoint(&env, "cp.txt");
    // A checkpoint that does not cover the episode's last entry is refused too.
    env.run(&[
        "invoke",
        "echo",
        "--session",
        s(&env.path("ep1.tok")),
        "--args",
        r#"{"d":4}"#,
    ])
    .ok();
    env.run(&["export-episode", "ep1", "--out", s(&b), "--checkpoint"])
        .code(1);
    let cp2 = fs::read_to_string(checkpoint(&env, "cp2.txt")).expect("cp");
    let size: u64 = cp2
        .lines()
        .nth(1)
        .and_then(|l| l.parse().ok())
        .expect("size");
    env.run(&["export-episode", "ep1", "--out", s(&b), "--checkpoint"])
        .ok();

    // Another machine: an empty directory holding only the bundle and the public key.
    let away = tempfile::tempdir().expect("tempdir");
    let moved = away.path().join("b.db");
    fs::copy(&b, &moved).expect("copy bundle");
    let key = fs::read_to_string(env.path("log.pub"))
        .expect("pub")
        .trim()
        .to_string();
    let ok = verify_bundle(away.path(), &moved, &key).ok().json();
    assert_eq!(ok["checkpoint"]["proven"], 4, "{ok}");
    assert_eq!(ok["ok"], true);

    // Another key.
    env.run(&[
        "key",
        "generate",
        "--out",
        s(&env.path("o.key")),
        "--name",
        "example.com/o",
    ])
    .ok();
    let other = env
        .run(&["key", "public", s(&env.path("o.key"))])
        .ok()
        .stdout;
    let r = verify_bundle(away.path(), &moved, other.trim()).code(3);
    assert!(
        categories(&r).contains(&"checkpoint_signature".to_string()),
        "{r:#?}"
    );

    // Any edit is refused (each on a fresh copy).
    let resize = format!(
        "UPDATE world_bundle_proofs SET proof = replace(proof, char(10) || '{size}' || char(10), char(10) || '{}' || char(10)) WHERE instr(proof, char(10) || '{size}' || char(10)) > 0",
        size + 1
    );
    let edits: Vec<(&str, &str)> = vec![
        ("log row", "UPDATE log_entries SET semantics_epoch = semantics_epoch + 1 WHERE entry_index = (SELECT min(entry_index) FROM log_entries)"),
        ("object", "UPDATE objects SET payload = CAST('{\"a\":2}' AS BLOB) WHERE semantic_id = 'world/invocation-input/v1' AND payload = CAST('{\"a\":1}' AS BLOB)"),
        ("proof path", "UPDATE world_bundle_proofs SET proof = replace(proof, char(10) || 'index ', char(10) || 'index 1') WHERE entry_index = (SELECT max(entry_index) FROM world_bundle_proofs)"),
        ("checkpoint in a proof", &resize),
        ("entry removed", "DELETE FROM log_entries WHERE entry_index = (SELECT max(entry_index) FROM log_entries)"),
        ("proof removed", "DELETE FROM world_bundle_proofs WHERE entry_index = (SELECT min(entry_index) FROM world_bundle_proofs)"),
    ];
    for (what, sql) in edits {
        let edited = away.path().join(format!("{}.db", what.replace(' ', "-")));
        fs::copy(&moved, &edited).expect("copy");
        let c = Connection::open(&edited).expect("open");
        c.execute_batch("PRAGMA foreign_keys = OFF;").expect("fk");
        let n = c.execute(sql, []).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(n > 0, "{what}: the edit changed nothing");
        drop(c);
        let r = verify_bundle(away.path(), &edited, &key);
        assert_eq!(r.code, 3, "{what}: {r:#?}");
    }
    // A plain bundle (no --checkpoint) has nothing to prove.
    let plain = env.path("plain.db");
    env.run(&["export-episode", "ep1", "--out", s(&plain)]).ok();
    let r = verify_bundle(env.dir.path(), &plain, &key).code(3);
    assert_eq!(categories(&r), vec!["bundle_proof"]);
    // A second export to the same file is refused with a hint, the bundle left as it was.
    let bytes = std::fs::read(&plain).unwrap();
    let again = env
        .run(&["export-episode", "ep1", "--out", s(&plain)])
        .code(1);
    assert!(again.stderr.contains("choose another --out"), "{again:#?}");
    assert_eq!(std::fs::read(&plain).unwrap(), bytes);
}

#[test]
fn bad_keys_and_files_are_clear_errors_and_change_nothing() {
    let env = store_with(2);
    let before = env.snapshot();
    // Signing needs a key; a missing file, a public key, or a witness key is refused.
    env.run(&["checkpoint"]).code(2).one_line_error();
    env.run(&["checkpoint", "--key", s(&env.path("nope.key"))])
        .code(1)
        .one_line_error();
    env.run(&["checkpoint", "--key", s(&env.path("log.pub"))])
        .code(1)
        .one_line_error();
    env.run(&[
        "key",
        "generate",
        "--witness",
        "--name",
        "w.example/1",
        "--out",
        s(&env.path("w.key")),
    ])
    .ok();
    env.run(&["checkpoint", "--key", s(&env.path("w.key"))])
        .code(1)
        .one_line_error();
    // key generate never overwrites.
    env.run(&["key", "generate", "--out", s(&env.path("log.key"))])
        .code(1)
        .one_line_error();
    // A bad name.
    env.run(&[
        "key",
        "generate",
        "--name",
        "a b",
        "--out",
        s(&env.path("x.key")),
    ])
    .code(1);
    assert!(!env.path("x.key").exists());
    // verify --key without a checkpoint or bundle; a malformed verifier key; no checkpoint.
    env.run(&["verify", "--key", s(&env.path("log.pub"))])
        .code(2);
    env.run(&[
        "verify",
        "--checkpoint",
        s(&env.path("log.pub")),
        "--key",
        "not+a+key",
    ])
    .code(1);
    env.run(&["prove", "1"]).code(1).one_line_error();
    let garbage = env.write("garbage.txt", b"hello\n");
    let r = env
        .run(&[
            "--json",
            "verify",
            "--checkpoint",
            s(&garbage),
            "--key",
            s(&env.path("log.pub")),
        ])
        .code(3);
    assert_eq!(categories(&r), vec!["checkpoint_signature"]);
    env.run(&["prove", "1", "--checkpoint", s(&garbage)])
        .code(1)
        .one_line_error();
    assert_eq!(env.snapshot(), before);
    // A private key readable by others is warned about.
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(env.path("log.key"), fs::Permissions::from_mode(0o644)).expect("chmod");
    let r = env
        .run(&["checkpoint", "--key", s(&env.path("log.key"))])
        .ok();
    assert!(r.stderr.contains("chmod 600"), "{r:#?}");
    let v: Value = env.run(&["--json", "checkpoint", "show"]).ok().json();
    assert_eq!(v["treeSize"], 3);
}
