//! Speaking to the AILANG package registry: which origins may be used, the registry credential
//! file, the validator's `POST /publish`, and the read-only bucket probe behind `reconcile`
//! (the reference's `registry_publish.go`, `credential.go`, `registry_reconcile.go`, and AILANG's
//! `cmd/ailang/pkg_publish.go` and `cmd/registry-validator`).
//!
//! - **Origins.** The registry is two services: the public bucket (`$AILANG_REGISTRY`, read
//!   only; metadata at `<bucket>/packages/<vendor>/<name>/<version>/metadata.json`) and the
//!   validator (`$AILANG_REGISTRY_VALIDATOR`, `POST /publish`). A production origin must be
//!   `https` and not loopback; a loopback origin (`127.0.0.0/8`, `::1`, `localhost`) is
//!   allowed, as `http` or `https`, only when the caller opted in ([`Origins::loopback`]).
//!   Every origin: no `*`, no userinfo, a host, no query or fragment, no trailing `/`.
//! - **Upload.** `multipart/form-data` with one file part `package` (`package.tar.gz`,
//!   `application/octet-stream`) and `X-API-Key: <credential>`; no redirects followed. 200 is
//!   success; 409, 400, 403 and any other status are definite failures with the publisher's
//!   messages; a transport error or the deadline is indeterminate (the body may have left).
//! - **Probe.** `GET` with `Accept: application/json`, 10 s per request, 1 MiB per body (a
//!   longer body is cut, so it fails to parse: uninformative), no redirects.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::publish::Hashes;

/// The production validator origin (AILANG's compiled default).
pub const PRODUCTION_VALIDATOR: &str = "https://registry.ailang.sunholo.com";
/// The production bucket origin (AILANG's default `$AILANG_REGISTRY`).
pub const PRODUCTION_BUCKET: &str = "https://storage.googleapis.com/ailang-registry";
/// The environment variable `ailang publish` reads its key from; `world` refuses to run a
/// publish while it is set.
pub const CREDENTIAL_VARIABLE: &str = "AILANG_REGISTRY_API_KEY";
/// The multipart field the validator reads the tarball from.
pub const FORM_FIELD: &str = "package";
/// The validator's form limit, bytes.
pub const MAX_FORM_BYTES: usize = 50 << 20;
/// Largest response body kept, bytes.
pub const MAX_BODY_BYTES: u64 = 1 << 20;
/// One probe request's bound.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// The known-positive control the probe reads in the same pass (measured to exist).
pub const DEFAULT_CONTROL: (&str, &str, &str) = ("sunholo", "auth", "0.4.1");
/// Absent samples needed to resolve `not-published`.
pub const ABSENT_SAMPLES_REQUIRED: u32 = 3;
/// Probe passes at most (`2 × 3 + 2`).
pub const MAX_PROBE_ATTEMPTS: u32 = 2 * ABSENT_SAMPLES_REQUIRED + 2;

/// Whether `host` (from an origin, brackets removed) is loopback.
pub fn is_loopback_host(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "::1" | "localhost") || host.starts_with("127.")
}

/// A checked registry origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The origin text as given.
    pub text: String,
    /// Its host, brackets removed.
    pub host: String,
    /// Whether the host is loopback.
    pub loopback: bool,
}

/// Checks one origin (module docs); `what` names it in the refusal.
///
/// # Errors
/// The refusal text, which never echoes userinfo.
pub fn check_origin(what: &str, raw: &str, allow_loopback: bool) -> Result<Origin, String> {
    if raw.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if raw.contains('*') {
        return Err(format!("{what} is a wildcard: {raw}"));
    }
    if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{what} contains whitespace or control characters"));
    }
    let (scheme, rest) = raw
        .split_once("://")
        .ok_or_else(|| format!("{what} is unparseable: {raw} has no scheme"))?;
    let authority = rest.split('/').next().unwrap_or("");
    if authority.contains('@') {
        return Err(format!("{what} embeds credentials in the URL"));
    }
    if raw.contains('?') || raw.contains('#') {
        return Err(format!("{what} carries a query or fragment: {raw}"));
    }
    if raw.ends_with('/') {
        return Err(format!("{what} must not end in a slash: {raw}"));
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split_once(']').map(|(h, _)| h).unwrap_or("")
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    if host.is_empty() {
        return Err(format!("{what} has no host: {raw}"));
    }
    let loopback = is_loopback_host(host);
    match (allow_loopback, loopback) {
        (true, false) => {
            return Err(format!(
                "{what} {raw:?} is not a loopback origin; --loopback-registry takes only 127.0.0.0/8, ::1 or localhost"
            ))
        }
        (true, true) if scheme != "http" && scheme != "https" => {
            return Err(format!("{what} scheme must be http or https on loopback: {raw}"))
        }
        (false, _) if scheme != "https" => {
            return Err(format!("{what} must be https for a live origin: {raw}"))
        }
        (false, true) => {
            return Err(format!(
                "a loopback {what} needs --loopback-registry (a local registry), not {raw}"
            ))
        }
        _ => {}
    }
    Ok(Origin {
        text: raw.to_string(),
        host: host.to_string(),
        loopback,
    })
}

/// Where a publish goes: the bucket and the validator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origins {
    /// The bucket (read-only metadata; the approval scope names it).
    pub registry: Origin,
    /// The validator (`POST /publish`).
    pub validator: Origin,
}

impl Origins {
    /// The production registry: `registry` (default [`PRODUCTION_BUCKET`]) must be https and
    /// not loopback, and must not be the validator; the validator is [`PRODUCTION_VALIDATOR`].
    ///
    /// # Errors
    /// The refusal text.
    pub fn production(registry: Option<&str>) -> Result<Origins, String> {
        let registry = check_origin(
            "registry origin",
            registry.unwrap_or(PRODUCTION_BUCKET),
            false,
        )?;
        let validator = check_origin("validator origin", PRODUCTION_VALIDATOR, false)?;
        if registry.host.eq_ignore_ascii_case(&validator.host) {
            return Err(format!(
                "the registry origin is the bucket, not the validator service {PRODUCTION_VALIDATOR}"
            ));
        }
        Ok(Origins {
            registry,
            validator,
        })
    }

    /// A local registry on this machine: one loopback origin serving both the bucket layout
    /// and `POST /publish` (http allowed).
    ///
    /// # Errors
    /// The refusal text.
    pub fn loopback(origin: &str) -> Result<Origins, String> {
        let o = check_origin("loopback registry origin", origin, true)?;
        Ok(Origins {
            registry: o.clone(),
            validator: o,
        })
    }

    /// Whether this is a local (loopback) registry.
    pub fn is_loopback(&self) -> bool {
        self.registry.loopback
    }

    /// Rebuilds the origins a stored request names: loopback when its registry origin is.
    ///
    /// # Errors
    /// The refusal text.
    pub fn for_recorded(registry_origin: &str, allow_loopback: bool) -> Result<Origins, String> {
        if allow_loopback {
            Origins::loopback(registry_origin)
        } else {
            Origins::production(Some(registry_origin))
        }
    }
}

/// The object URL of one package version's metadata: both the probe target and its control
/// are built here from one origin, differing only in vendor/name/version.
///
/// # Errors
/// A segment that is empty, `.`/`..` or needs escaping.
pub fn metadata_url(
    origin: &str,
    vendor: &str,
    name: &str,
    version: &str,
) -> Result<String, String> {
    for (what, v) in [("vendor", vendor), ("name", name), ("version", version)] {
        super::manifest::check_segment(what, v)?;
    }
    Ok(format!(
        "{origin}/packages/{vendor}/{name}/{version}/metadata.json"
    ))
}

/// Why the credential file was refused.
#[derive(Debug, thiserror::Error)]
#[error("registry credential file {path:?}: {why}")]
pub struct CredentialError {
    /// The path as given.
    pub path: String,
    /// Why.
    pub why: String,
}

/// The registry API key's file: an absolute path to a regular file of mode exactly 0600,
/// outside the package's working tree. Only the path is kept; the bytes are read when used.
#[derive(Clone, Debug)]
pub struct CredentialFile {
    path: PathBuf,
}

impl CredentialFile {
    /// Checks the file's place and mode. `work_tree` is the tree the secret must not live in
    /// (the git work tree holding the package, or the package directory).
    ///
    /// # Errors
    /// [`CredentialError`] naming the path and the rule, never the contents.
    pub fn open(path: &Path, work_tree: &Path) -> Result<CredentialFile, CredentialError> {
        let err = |why: String| CredentialError {
            path: path.display().to_string(),
            why,
        };
        if !path.is_absolute() {
            return Err(err("path is not absolute".into()));
        }
        let resolved = path
            .canonicalize()
            .map_err(|e| err(format!("resolve path: {e}")))?;
        let root = work_tree.canonicalize().map_err(|e| {
            err(format!(
                "resolve the working tree {}: {e}",
                work_tree.display()
            ))
        })?;
        if resolved.starts_with(&root) {
            return Err(err(format!(
                "file is inside the working tree {}; keep the key outside it",
                root.display()
            )));
        }
        let f = CredentialFile { path: resolved };
        f.check_mode().map_err(err)?;
        Ok(f)
    }

    fn check_mode(&self) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let md = std::fs::symlink_metadata(&self.path).map_err(|e| format!("stat: {e}"))?;
        if !md.file_type().is_file() {
            return Err("not a regular file".into());
        }
        let perm = md.permissions().mode() & 0o777;
        if perm != 0o600 {
            return Err(format!("mode is {perm:#o}, want exactly 0600"));
        }
        Ok(())
    }

    /// Reads the key (mode re-checked; trailing CR/LF removed; must not be empty).
    ///
    /// # Errors
    /// [`CredentialError`].
    pub fn read(&self) -> Result<Vec<u8>, CredentialError> {
        let err = |why: String| CredentialError {
            path: self.path.display().to_string(),
            why,
        };
        self.check_mode().map_err(err)?;
        let mut bytes = crate::fileread::read_regular(&self.path, 64 * 1024)
            .map_err(|e| err(format!("read: {e}")))?;
        while matches!(bytes.last(), Some(b'\n' | b'\r')) {
            bytes.pop();
        }
        if bytes.is_empty() {
            return Err(err("file is empty".into()));
        }
        if bytes.iter().any(|b| b.is_ascii_control()) || std::str::from_utf8(&bytes).is_err() {
            return Err(err(
                "the key holds control characters or is not UTF-8".into()
            ));
        }
        Ok(bytes)
    }

    /// The resolved path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether the process environment carries a non-empty [`CREDENTIAL_VARIABLE`].
pub fn ambient_credential() -> bool {
    std::env::var_os(CREDENTIAL_VARIABLE).is_some_and(|v| !v.is_empty())
}

fn agent(loopback: bool, timeout: Duration) -> ureq3::Agent {
    let mut cfg = ureq3::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .http_status_as_error(false)
        .user_agent(concat!("world/", env!("CARGO_PKG_VERSION")));
    if loopback {
        cfg = cfg.proxy(None);
    }
    cfg.build().into()
}

/// How an upload ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UploadEnd {
    /// The validator answered with this status and (at most 1 MiB of) body.
    Answered {
        /// HTTP status.
        status: u16,
        /// The body as text (lossy).
        body: String,
    },
    /// The deadline passed before an answer.
    TimedOut(String),
    /// The connection failed or dropped before an answer.
    Transport(String),
}

fn random_boundary() -> String {
    let mut b = [0u8; 30];
    if getrandom::getrandom(&mut b).is_err() {
        // A fixed boundary still delimits correctly: the tarball is gzip, never this text.
        return "world-publish-boundary-0123456789abcdef".into();
    }
    hex::encode(b)
}

/// The multipart body: `(content type, bytes)`.
pub fn multipart_body(tarball: &[u8]) -> (String, Vec<u8>) {
    let boundary = random_boundary();
    let mut body = Vec::with_capacity(tarball.len() + 512);
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{FORM_FIELD}\"; filename=\"package.tar.gz\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(tarball);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// `POST <validator>/publish` with the tarball and the key, bounded by `deadline`.
pub fn upload(origins: &Origins, tarball: &[u8], key: &[u8], deadline: Instant) -> UploadEnd {
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        return UploadEnd::TimedOut("the handler deadline passed before the upload".into());
    }
    let (content_type, body) = multipart_body(tarball);
    let url = format!("{}/publish", origins.validator.text);
    let key = String::from_utf8_lossy(key).into_owned();
    let result = agent(origins.is_loopback(), remaining)
        .post(&url)
        .header("Content-Type", &content_type)
        .header("X-API-Key", &key)
        .send(&body[..]);
    match result {
        Ok(mut resp) => {
            let status = resp.status().as_u16();
            let mut buf = Vec::new();
            // The status decides; a body that fails to read is only a shorter message.
            let _ = resp
                .body_mut()
                .as_reader()
                .take(MAX_BODY_BYTES)
                .read_to_end(&mut buf);
            UploadEnd::Answered {
                status,
                body: String::from_utf8_lossy(&buf).into_owned(),
            }
        }
        Err(ureq3::Error::Timeout(t)) => UploadEnd::TimedOut(format!("timeout ({t})")),
        Err(e) => UploadEnd::Transport(e.to_string()),
    }
}

/// The publisher's message for an answered upload (AILANG `uploadTarball`), `None` for 200.
pub fn upload_message(status: u16, body: &str) -> Option<String> {
    match status {
        200 => None,
        409 => {
            Some("version already published (immutable). Bump the version in ailang.toml".into())
        }
        400 => Some(format!("validation failed:\n{body}")),
        403 => Some("not authorized to publish to this namespace".into()),
        s => Some(format!("publish failed (HTTP {s}): {body}")),
    }
}

/// One bounded read-only GET.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// The URL.
    pub url: String,
    /// The status (0 when the request failed).
    pub status: u16,
    /// At most [`MAX_BODY_BYTES`] of the body.
    pub body: Vec<u8>,
    /// Why the request failed.
    pub error: Option<String>,
}

/// `GET url` (module docs).
pub fn fetch(url: &str, loopback: bool) -> Fetched {
    let mut out = Fetched {
        url: url.to_string(),
        status: 0,
        body: Vec::new(),
        error: None,
    };
    match agent(loopback, PROBE_TIMEOUT)
        .get(url)
        .header("Accept", "application/json")
        .call()
    {
        Ok(mut resp) => {
            out.status = resp.status().as_u16();
            if let Err(e) = resp
                .body_mut()
                .as_reader()
                .take(MAX_BODY_BYTES)
                .read_to_end(&mut out.body)
            {
                out.error = Some(e.to_string());
            }
        }
        Err(e) => out.error = Some(e.to_string()),
    }
    out
}

/// A probe sample's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The target is absent (a firing control and GCS's `NoSuchKey` 404).
    Absent,
    /// The target answered 200 with a JSON object (and the control fired).
    Present,
    /// This sample says nothing about the registry.
    Uninformative,
}

/// Whether `body` is a JSON object with at least one member.
fn json_object(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(body)
        .is_ok_and(|m| !m.is_empty())
}

/// Whether `body` decodes as GCS's `<Error><Code>NoSuchKey</Code>…</Error>` document.
pub fn is_no_such_key(body: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(body) else {
        return false;
    };
    let Ok(doc) = roxmltree::Document::parse(text) else {
        return false;
    };
    let root = doc.root_element();
    root.tag_name().name() == "Error"
        && root
            .children()
            .find(|n| n.is_element() && n.tag_name().name() == "Code")
            .and_then(|n| n.text())
            == Some("NoSuchKey")
}

/// Classifies one pass (the reference's `classifyProbeSample`): the control is judged first
/// and completely; only a firing control lets the target's 404 with `NoSuchKey` mean absent.
pub fn classify_sample(control: &Fetched, target: &Fetched) -> (Verdict, String) {
    use Verdict::*;
    if let Some(e) = &control.error {
        return (
            Uninformative,
            format!("same-pass control fetch failed: {e}"),
        );
    }
    if control.status != 200 {
        return (
            Uninformative,
            format!("same-pass control returned {}, want 200", control.status),
        );
    }
    if !json_object(&control.body) {
        return (
            Uninformative,
            "same-pass control body is not a well-formed JSON object".into(),
        );
    }
    if let Some(e) = &target.error {
        return (Uninformative, format!("target fetch failed: {e}"));
    }
    match target.status {
        404 if is_no_such_key(&target.body) => (
            Absent,
            "target 404 with the measured GCS NoSuchKey document and a firing control".into(),
        ),
        404 => (
            Uninformative,
            "target 404 body is not the measured GCS NoSuchKey document".into(),
        ),
        200 if json_object(&target.body) => (
            Present,
            "target 200 with a well-formed metadata document and a firing control".into(),
        ),
        200 => (
            Uninformative,
            "target 200 body is not a well-formed JSON object".into(),
        ),
        s => (Uninformative, format!("target returned {s}")),
    }
}

/// A reconciliation state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ReconcileState {
    /// The bucket serves this version with the expected digests.
    #[serde(rename = "succeeded-reconciled")]
    SucceededReconciled,
    /// The bucket serves this version with other digests (or another identity).
    #[serde(rename = "conflict")]
    Conflict,
    /// Enough absent samples with a firing control: the upload did not land.
    #[serde(rename = "not-published")]
    NotPublished,
    /// No decision: a human is needed.
    #[serde(rename = "probe-unavailable")]
    ProbeUnavailable,
}

impl ReconcileState {
    /// The state's name.
    pub fn name(self) -> &'static str {
        match self {
            ReconcileState::SucceededReconciled => "succeeded-reconciled",
            ReconcileState::Conflict => "conflict",
            ReconcileState::NotPublished => "not-published",
            ReconcileState::ProbeUnavailable => "probe-unavailable",
        }
    }
}

/// One probe pass, as recorded.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// The verdict.
    pub verdict: Verdict,
    /// The control's status (0: no answer).
    pub control_status: u16,
    /// The target's status (0: no answer).
    pub target_status: u16,
    /// Why.
    pub reason: String,
}

/// The result of one reconciliation pass.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// The state reached.
    pub state: ReconcileState,
    /// The target URL.
    pub target_url: String,
    /// The control URL.
    pub control_url: String,
    /// Every pass.
    pub samples: Vec<Sample>,
    /// Absent samples.
    pub absent_samples: u32,
    /// Uninformative samples.
    pub uninformative_samples: u32,
    /// The digests a present document served.
    pub served: Option<Hashes>,
    /// Why this state.
    pub detail: String,
}

/// What to probe.
#[derive(Clone, Debug)]
pub struct ProbeTarget<'a> {
    /// The bucket origin.
    pub registry: &'a Origin,
    /// Vendor, name, version.
    pub vendor: &'a str,
    /// The short name.
    pub name: &'a str,
    /// The version.
    pub version: &'a str,
    /// The digests the publish bound.
    pub expected: &'a Hashes,
    /// The known-positive control `(vendor, name, version)`.
    pub control: (&'a str, &'a str, &'a str),
    /// Pause between passes.
    pub interval: Duration,
}

/// Resolves one publish by reading the bucket (the reference's `ReconcileRegistryPublish`):
/// control then target per pass; present → compare identity and all three digests; three
/// absent samples within eight passes → not-published; otherwise probe-unavailable. GET only.
///
/// # Errors
/// A refusal before any request (unbuildable URLs, the control being the target, an empty
/// expected digest).
pub fn reconcile(t: &ProbeTarget<'_>) -> Result<Receipt, String> {
    let origin = &t.registry.text;
    let target_url = metadata_url(origin, t.vendor, t.name, t.version)?;
    let control_url = metadata_url(origin, t.control.0, t.control.1, t.control.2)?;
    if control_url == target_url {
        return Err(format!(
            "the known-positive control {control_url} is the probe target itself"
        ));
    }
    if t.expected.tarball_sha256.is_empty()
        || t.expected.content_hash.is_empty()
        || t.expected.interface_hash.is_empty()
    {
        return Err("reconciliation requires all three expected digests".into());
    }
    let mut r = Receipt {
        state: ReconcileState::ProbeUnavailable,
        target_url: target_url.clone(),
        control_url: control_url.clone(),
        samples: Vec::new(),
        absent_samples: 0,
        uninformative_samples: 0,
        served: None,
        detail: String::new(),
    };
    for attempt in 0..MAX_PROBE_ATTEMPTS {
        if attempt > 0 && !t.interval.is_zero() {
            std::thread::sleep(t.interval);
        }
        let control = fetch(&control_url, t.registry.loopback);
        let target = fetch(&target_url, t.registry.loopback);
        let (verdict, reason) = classify_sample(&control, &target);
        r.samples.push(Sample {
            verdict,
            control_status: control.status,
            target_status: target.status,
            reason,
        });
        match verdict {
            Verdict::Present => {
                resolve_present(&mut r, &target.body, t);
                return Ok(r);
            }
            Verdict::Absent => {
                r.absent_samples += 1;
                if r.absent_samples >= ABSENT_SAMPLES_REQUIRED {
                    r.state = ReconcileState::NotPublished;
                    r.detail = format!(
                        "{} absent samples, each with a firing same-pass control",
                        r.absent_samples
                    );
                    return Ok(r);
                }
            }
            Verdict::Uninformative => r.uninformative_samples += 1,
        }
    }
    r.detail = format!(
        "{} attempts yielded {} absent and {} uninformative samples; {ABSENT_SAMPLES_REQUIRED} absent required — human required",
        r.samples.len(),
        r.absent_samples,
        r.uninformative_samples
    );
    Ok(r)
}

fn resolve_present(r: &mut Receipt, body: &[u8], t: &ProbeTarget<'_>) {
    let v: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            r.state = ReconcileState::ProbeUnavailable;
            r.detail = format!("present document did not decode: {e}");
            return;
        }
    };
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    let served = Hashes {
        tarball_sha256: s("tarball_hash"),
        content_hash: s("content_hash"),
        interface_hash: s("interface_hash"),
    };
    let want = format!("{}/{}", t.vendor, t.name);
    let (name, version) = (s("name"), s("version"));
    r.served = Some(served.clone());
    if name != want || version != t.version {
        r.state = ReconcileState::Conflict;
        r.detail = format!(
            "served document identifies {name}@{version}, want {want}@{}",
            t.version
        );
        return;
    }
    match Hashes::compare(&served, t.expected, "public metadata") {
        Ok(()) => {
            r.state = ReconcileState::SucceededReconciled;
            r.detail = "served metadata matches all three expected digests".into();
        }
        Err(why) => {
            r.state = ReconcileState::Conflict;
            r.detail = why;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_follow_the_refusal_set() {
        assert!(Origins::production(None).is_ok());
        for (raw, want) in [
            ("http://storage.example/b", "must be https"),
            ("https://127.0.0.1:9/b", "needs --loopback-registry"),
            ("https://user:pw@storage.example/b", "embeds credentials"),
            ("https://storage.example/b/", "must not end in a slash"),
            ("https://storage.example/b?x=1", "query or fragment"),
            ("https://*.example", "wildcard"),
            ("https://registry.ailang.sunholo.com", "not the validator"),
            ("storage.example", "no scheme"),
        ] {
            let err = Origins::production(Some(raw)).unwrap_err();
            assert!(err.contains(want), "{raw}: {err}");
            assert!(!err.contains("pw"), "{err}");
        }
        assert!(Origins::loopback("http://127.0.0.1:8080")
            .unwrap()
            .is_loopback());
        assert!(Origins::loopback("http://[::1]:8080").is_ok());
        assert!(Origins::loopback("http://localhost:1").is_ok());
        assert!(Origins::loopback("http://10.0.0.1:1")
            .unwrap_err()
            .contains("not a loopback"));
        assert!(Origins::loopback("ftp://127.0.0.1")
            .unwrap_err()
            .contains("http or https"));
    }

    #[test]
    fn the_classifier_needs_a_firing_control_and_the_gcs_document() {
        let f = |status, body: &str| Fetched {
            url: String::new(),
            status,
            body: body.as_bytes().to_vec(),
            error: None,
        };
        let nsk = "<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey</Code><Message>No such object</Message></Error>";
        let ok = f(200, "{\"name\":\"sunholo/auth\"}");
        assert_eq!(classify_sample(&ok, &f(404, nsk)).0, Verdict::Absent);
        assert_eq!(
            classify_sample(&ok, &f(404, &nsk[..60])).0,
            Verdict::Uninformative
        );
        assert_eq!(
            classify_sample(&ok, &f(404, "not found")).0,
            Verdict::Uninformative
        );
        assert_eq!(
            classify_sample(&f(200, "{}"), &f(404, nsk)).0,
            Verdict::Uninformative
        );
        assert_eq!(
            classify_sample(&f(503, "{}"), &f(404, nsk)).0,
            Verdict::Uninformative
        );
        assert_eq!(
            classify_sample(&ok, &f(200, "{\"a\":1}")).0,
            Verdict::Present
        );
        assert_eq!(
            classify_sample(&ok, &f(200, "<html>")).0,
            Verdict::Uninformative
        );
        assert_eq!(classify_sample(&ok, &f(403, nsk)).0, Verdict::Uninformative);
    }

    #[test]
    fn metadata_urls_refuse_unsafe_segments() {
        assert_eq!(
            metadata_url("https://b.example/r", "a", "b", "1.0").unwrap(),
            "https://b.example/r/packages/a/b/1.0/metadata.json"
        );
        assert!(metadata_url("https://b", "..", "b", "1").is_err());
        assert!(metadata_url("https://b", "a", "b/c", "1").is_err());
        assert!(metadata_url("https://b", "a", "", "1").is_err());
    }

    #[test]
    fn the_multipart_body_carries_one_package_part() {
        let (ct, body) = multipart_body(b"\x1f\x8bTAR");
        let boundary = ct.strip_prefix("multipart/form-data; boundary=").unwrap();
        let text = String::from_utf8_lossy(&body);
        assert!(text.starts_with(&format!("--{boundary}\r\n")));
        assert!(text.contains("name=\"package\"; filename=\"package.tar.gz\""));
        assert!(text.ends_with(&format!("\r\n--{boundary}--\r\n")));
    }
}
