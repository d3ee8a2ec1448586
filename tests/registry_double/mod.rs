//! TEST DOUBLE of the AILANG package registry, for the `world package` tests (issue 31): one
//! loopback HTTP server standing in for both services of the real registry —
//!
//! - the validator's `POST /publish` (AILANG `cmd/registry-validator`): `X-API-Key` checked
//!   (403 `Invalid or missing API key`), a 50 MiB body cap (400), the multipart field
//!   `package`, the tarball unpacked and its `ailang.toml` read (400 on a bad tarball or name),
//!   409 when the version exists (immutable), else the metadata stored and returned (200);
//! - the bucket's `GET /packages/<vendor>/<name>/<version>/metadata.json`: the stored metadata
//!   (`name`, `version`, `tarball_hash`, `content_hash`, `interface_hash`, …), or 404 with the
//!   GCS `<Error><Code>NoSuchKey</Code>…` document.
//!
//! The digests it stores are computed here, independently of `world`'s code, from the bytes it
//! received. Fault modes ([`Mode`]) drop the connection before or after storing, hold a request
//! (for kill -9 tests), answer slowly, or break the probe's control. It is not the registry:
//! no compile check, no contract verification, no index.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};

/// How the next `POST /publish` is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Like the validator.
    Normal,
    /// Read the request, store nothing, close the connection without an answer.
    DropBeforeStore,
    /// Store the version, then close the connection without an answer.
    DropAfterStore,
    /// Accept the connection and never read it (until released).
    HoldAtAccept,
    /// Read the request, then wait (until released) without storing.
    HoldBeforeStore,
    /// Store the version, then wait (until released) without answering.
    HoldAfterStore,
    /// Wait this long, then behave normally (the client's deadline passes first).
    Slow(Duration),
}

/// What the double has seen and holds.
#[derive(Default)]
struct State {
    objects: BTreeMap<String, Vec<u8>>,
    uploads: u32,
    accepted: u32,
    control_down: bool,
    released: bool,
}

/// A running registry double on `127.0.0.1`.
pub struct Registry {
    /// `http://127.0.0.1:<port>`.
    pub origin: String,
    /// The API key it accepts.
    pub key: String,
    mode: Arc<Mutex<Mode>>,
    state: Arc<(Mutex<State>, Condvar)>,
}

fn sha(b: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(b)))
}

fn nsk(path: &str) -> Vec<u8> {
    format!("<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Details>No such object: ailang-registry/{path}</Details></Error>").into_bytes()
}

impl Registry {
    /// Start a double accepting `key`, with the probe's default control `sunholo/auth@0.4.1`
    /// already published.
    pub fn start(key: &str) -> Registry {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let origin = format!("http://{}", listener.local_addr().expect("addr"));
        let r = Registry {
            origin,
            key: key.to_string(),
            mode: Arc::new(Mutex::new(Mode::Normal)),
            state: Arc::new((Mutex::new(State::default()), Condvar::new())),
        };
        r.seed(
            "sunholo",
            "auth",
            "0.4.1",
            "sha256:c0",
            "sha256:c1",
            "sha256:c2",
        );
        let (mode, state, key) = (r.mode.clone(), r.state.clone(), r.key.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (mode, state, key) = (mode.clone(), state.clone(), key.clone());
                std::thread::spawn(move || serve(conn, &mode, &state, &key));
            }
        });
        r
    }

    /// Set the mode of the next uploads.
    pub fn set_mode(&self, m: Mode) {
        *self.mode.lock().unwrap() = m;
    }

    /// Make the probe's control answer 503 (or answer again).
    pub fn control_down(&self, down: bool) {
        self.state.0.lock().unwrap().control_down = down;
    }

    /// Store metadata for a version as if it had been published with these digests.
    pub fn seed(
        &self,
        vendor: &str,
        name: &str,
        version: &str,
        tarball: &str,
        content: &str,
        interface: &str,
    ) {
        let meta = serde_json::json!({
            "schema": "ailang.package-metadata/v1",
            "name": format!("{vendor}/{name}"),
            "version": version,
            "content_hash": content,
            "interface_hash": interface,
            "tarball_hash": tarball,
        });
        self.state.0.lock().unwrap().objects.insert(
            format!("packages/{vendor}/{name}/{version}/metadata.json"),
            serde_json::to_vec_pretty(&meta).unwrap(),
        );
    }

    /// The stored metadata of a version, if any.
    pub fn metadata(&self, vendor: &str, name: &str, version: &str) -> Option<serde_json::Value> {
        let st = self.state.0.lock().unwrap();
        st.objects
            .get(&format!("packages/{vendor}/{name}/{version}/metadata.json"))
            .map(|b| serde_json::from_slice(b).unwrap())
    }

    /// `POST /publish` requests read whole (held-at-accept connections do not count).
    pub fn uploads(&self) -> u32 {
        self.state.0.lock().unwrap().uploads
    }

    /// Connections accepted for `/publish` (including held ones).
    pub fn accepted(&self) -> u32 {
        self.state.0.lock().unwrap().accepted
    }

    /// Wait until `f(uploads, accepted)` holds, up to 30 s.
    pub fn wait_for(&self, f: impl Fn(u32, u32) -> bool) {
        let (lock, cv) = &*self.state;
        let mut st = lock.lock().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !f(st.uploads, st.accepted) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(
                !left.is_zero(),
                "registry double: condition not reached in 30 s"
            );
            st = cv.wait_timeout(st, left).unwrap().0;
        }
    }

    /// Release held requests (they are then dropped without an answer).
    pub fn release(&self) {
        let (lock, cv) = &*self.state;
        lock.lock().unwrap().released = true;
        cv.notify_all();
    }
}

fn wait_released(state: &(Mutex<State>, Condvar)) {
    let (lock, cv) = state;
    let mut st = lock.lock().unwrap();
    while !st.released {
        st = cv.wait_timeout(st, Duration::from_secs(60)).unwrap().0;
        if st.released {
            break;
        }
    }
}

fn respond(mut conn: TcpStream, status: u16, ctype: &str, body: &[u8]) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        503 => "Service Unavailable",
        _ => "Other",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body);
}

fn json_error(conn: TcpStream, status: u16, msg: &str) {
    respond(
        conn,
        status,
        "application/json",
        serde_json::json!({ "error": msg }).to_string().as_bytes(),
    );
}

fn serve(conn: TcpStream, mode: &Mutex<Mode>, state: &(Mutex<State>, Condvar), key: &str) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (
        parts.next().unwrap_or("").to_string(),
        parts.next().unwrap_or("").to_string(),
    );
    let m = *mode.lock().unwrap();
    if method == "POST" && path == "/publish" {
        {
            let (lock, cv) = state;
            lock.lock().unwrap().accepted += 1;
            cv.notify_all();
        }
        if m == Mode::HoldAtAccept {
            wait_released(state);
            return;
        }
    }
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    match (method.as_str(), path.as_str()) {
        ("GET", p) => {
            let key_path = p.trim_start_matches('/').to_string();
            let st = state.0.lock().unwrap();
            if st.control_down && key_path.starts_with("packages/sunholo/auth/") {
                drop(st);
                return respond(conn, 503, "text/plain", b"unavailable");
            }
            match st.objects.get(&key_path).cloned() {
                Some(b) => {
                    drop(st);
                    respond(conn, 200, "application/json", &b)
                }
                None => {
                    drop(st);
                    respond(conn, 404, "application/xml; charset=UTF-8", &nsk(&key_path))
                }
            }
        }
        ("POST", "/publish") => {
            if headers.get("x-api-key").map(String::as_str) != Some(key) {
                return json_error(conn, 403, "Invalid or missing API key");
            }
            if len > 50 << 20 {
                return json_error(
                    conn,
                    400,
                    "Failed to parse multipart form: request body too large",
                );
            }
            let mut body = vec![0u8; len];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            {
                let (lock, cv) = state;
                lock.lock().unwrap().uploads += 1;
                cv.notify_all();
            }
            match m {
                Mode::DropBeforeStore => return,
                Mode::HoldBeforeStore => {
                    wait_released(state);
                    return;
                }
                Mode::Slow(d) => std::thread::sleep(d),
                _ => {}
            }
            let ctype = headers.get("content-type").cloned().unwrap_or_default();
            let tarball = match multipart_package(&ctype, &body) {
                Some(t) => t,
                None => return json_error(conn, 400, "Missing 'package' field in form data"),
            };
            let meta = match validate(&tarball) {
                Ok(m) => m,
                Err(e) => return json_error(conn, 400, &e),
            };
            let name = meta["name"].as_str().unwrap_or("").to_string();
            let version = meta["version"].as_str().unwrap_or("").to_string();
            let path = format!("packages/{name}/{version}/metadata.json");
            let bytes = serde_json::to_vec_pretty(&meta).unwrap();
            {
                let mut st = state.0.lock().unwrap();
                if st.objects.contains_key(&path) {
                    drop(st);
                    return json_error(
                        conn,
                        409,
                        &format!("Version {name}@{version} already published (immutable)"),
                    );
                }
                st.objects.insert(path, bytes.clone());
                st.objects
                    .insert(format!("packages/{name}/{version}/package.tar.gz"), tarball);
            }
            match m {
                Mode::DropAfterStore => {}
                Mode::HoldAfterStore => wait_released(state),
                _ => respond(conn, 200, "application/json", &bytes),
            }
        }
        _ => json_error(conn, 404, "not found"),
    }
}

/// The `package` part of a multipart body.
fn multipart_package(ctype: &str, body: &[u8]) -> Option<Vec<u8>> {
    let boundary = ctype.split("boundary=").nth(1)?.trim_matches('"');
    let delim = format!("--{boundary}").into_bytes();
    let find = |hay: &[u8], needle: &[u8], from: usize| {
        hay.get(from..)?
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|p| p + from)
    };
    let mut at = find(body, &delim, 0)?;
    loop {
        let start = at + delim.len();
        if body.get(start..start + 2) == Some(b"--") {
            return None;
        }
        let head_end = find(body, b"\r\n\r\n", start)?;
        let head = String::from_utf8_lossy(&body[start..head_end]).to_string();
        let next = find(body, &[b"\r\n".as_slice(), &delim].concat(), head_end)?;
        if head.contains("name=\"package\"") {
            return Some(body[head_end + 4..next].to_vec());
        }
        at = next + 2;
    }
}

/// Unpack the tarball, read its manifest, compute the digests (independently of `world`).
fn validate(tarball: &[u8]) -> Result<serde_json::Value, String> {
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(tarball));
    for e in ar.entries().map_err(|e| format!("Invalid tarball: {e}"))? {
        let mut e = e.map_err(|e| format!("Invalid tarball: {e}"))?;
        let p = e
            .path()
            .map_err(|e| format!("Invalid tarball: {e}"))?
            .to_string_lossy()
            .into_owned();
        if p.starts_with('/') || p.split('/').any(|s| s == "..") {
            return Err(format!("Invalid tarball: unsafe path {p}"));
        }
        let mut b = Vec::new();
        e.read_to_end(&mut b)
            .map_err(|e| format!("Invalid tarball: {e}"))?;
        files.insert(p, b);
    }
    let toml_bytes = files
        .get("ailang.toml")
        .ok_or("Invalid manifest: no ailang.toml")?;
    let doc: toml::Table = String::from_utf8_lossy(toml_bytes)
        .parse()
        .map_err(|e| format!("Invalid manifest: {e}"))?;
    let pkg = doc
        .get("package")
        .and_then(|v| v.as_table())
        .ok_or("Invalid manifest: no [package]")?;
    let s = |k: &str| {
        pkg.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    let (name, version) = (s("name"), s("version"));
    if !name.contains('/') {
        return Err(format!(
            "Invalid package name: {name} (must be vendor/name)"
        ));
    }
    let list = |sect: &str, k: &str| -> Vec<String> {
        doc.get(sect)
            .and_then(|t| t.get(k))
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut content = Sha256::new();
    for (p, b) in files.iter().filter(|(p, _)| p.ends_with(".ail")) {
        content.update(format!("file:{p}\n"));
        content.update(b);
    }
    let mut iface = format!("name:{name}\nedition:{}\n", s("edition"));
    if !s("ailang").is_empty() {
        iface.push_str(&format!("ailang:{}\n", s("ailang")));
    }
    let (mut ex, mut ef) = (list("exports", "modules"), list("effects", "max"));
    ex.sort();
    ef.sort();
    for e in ex {
        iface.push_str(&format!("export:{e}\n"));
    }
    for e in ef {
        iface.push_str(&format!("effect:{e}\n"));
    }
    Ok(serde_json::json!({
        "schema": "ailang.package-metadata/v1",
        "name": name,
        "version": version,
        "content_hash": format!("sha256:{}", hex::encode(content.finalize())),
        "interface_hash": sha(iface.as_bytes()),
        "tarball_hash": sha(tarball),
        "tarball_size": tarball.len(),
    }))
}
