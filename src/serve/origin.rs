//! DNS-rebinding protection on every route (surfaces.md §2, DEC-SERVE-2): the `Host` header
//! must name a loopback host at the bound port, and an `Origin` header, when present, must be
//! a loopback origin at that port or one of `--allow-origin`. `null` is refused. A request
//! target in absolute form (`GET http://host:port/v1/head`) names the authority that replaces
//! `Host` (RFC 9112 §3.2.2), so it passes the same allowlist (issue 26 §8).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::rest::ApiError;
use super::App;

/// Why a request's `Host` or `Origin` was refused (the 403 body names the header value).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// A `Host` value that is not visible ASCII.
    #[error("Host header is not visible ASCII")]
    HostNotAscii,
    /// No `Host` header.
    #[error("Host header is absent")]
    HostAbsent,
    /// Several `Host` headers.
    #[error("more than one Host header")]
    HostTwice,
    /// A `Host` other than this daemon's loopback address.
    #[error("Host {0:?} is not this daemon's loopback address")]
    Host(String),
    /// An absolute-form request target whose authority is not this daemon's loopback address.
    #[error("request target authority {0:?} is not this daemon's loopback address")]
    Target(String),
    /// Several `Origin` headers.
    #[error("more than one Origin header")]
    OriginTwice,
    /// An `Origin` value that is not visible ASCII.
    #[error("Origin header is not visible ASCII")]
    OriginNotAscii,
    /// An `Origin` that is neither this daemon's nor allowed (`null` never is).
    #[error("Origin {0:?} is not allowed")]
    Origin(String),
}

/// Check `Host`, the authority of an absolute-form request target (`target`, `None` for the
/// usual origin form) and `Origin` against the allowlist for `port`.
///
/// # Errors
/// [`Refused`], naming the refused value.
pub fn check(
    headers: &HeaderMap,
    target: Option<&str>,
    port: u16,
    allow: &[String],
) -> Result<(), Refused> {
    let hosts = [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    if let Some(t) = target {
        if !hosts.iter().any(|h| h.eq_ignore_ascii_case(t)) {
            return Err(Refused::Target(t.to_owned()));
        }
    }
    let mut host_values = headers.get_all(header::HOST).iter();
    let host = match (host_values.next(), host_values.next()) {
        (Some(h), None) => h.to_str().map_err(|_| Refused::HostNotAscii)?,
        (None, _) => return Err(Refused::HostAbsent),
        (Some(_), Some(_)) => return Err(Refused::HostTwice),
    };
    if !hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return Err(Refused::Host(host.to_owned()));
    }
    let mut origins = headers.get_all(header::ORIGIN).iter();
    match (origins.next(), origins.next()) {
        (None, _) => Ok(()),
        (Some(_), Some(_)) => Err(Refused::OriginTwice),
        (Some(o), None) => {
            let o = o.to_str().map_err(|_| Refused::OriginNotAscii)?;
            let own = hosts
                .iter()
                .any(|h| o.eq_ignore_ascii_case(&format!("http://{h}")));
            if o != "null" && (own || allow.iter().any(|a| a == o)) {
                Ok(())
            } else {
                Err(Refused::Origin(o.to_owned()))
            }
        }
    }
}

/// The loopback authority the client used (its `Host`, one of `127.0.0.1:<port>`,
/// `localhost:<port>`, `[::1]:<port>`, lower-cased), else `127.0.0.1:<port>`: the agent
/// card's URLs name the address the client reached (DEC-A2A-4).
pub fn authority(headers: &HeaderMap, port: u16) -> String {
    let own = [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_ascii_lowercase)
        .filter(|h| own.contains(h))
        .unwrap_or_else(|| own[0].clone())
}

/// Middleware: 403 `Forbidden` (REST envelope) for a refused Host or Origin.
pub async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let target = req.uri().authority().map(|a| a.as_str());
    match check(req.headers(), target, app.port, &app.allow_origins) {
        Ok(()) => next.run(req).await,
        Err(why) => {
            ApiError::new(StatusCode::FORBIDDEN, "Forbidden", why.to_string()).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn check_h(h: &HeaderMap, port: u16, allow: &[String]) -> Result<(), Refused> {
        check(h, None, port, allow)
    }

    #[test]
    fn absolute_form_targets_pass_the_host_allowlist() {
        let host = h(Some("127.0.0.1:80"), None);
        assert!(check(&host, Some("127.0.0.1:80"), 80, &[]).is_ok());
        assert!(check(&host, Some("LOCALHOST:80"), 80, &[]).is_ok());
        for bad in [
            "evil.example",
            "evil.example:80",
            "127.0.0.1:81",
            "u@127.0.0.1:80",
        ] {
            assert_eq!(
                check(&host, Some(bad), 80, &[]),
                Err(Refused::Target(bad.into())),
                "{bad}"
            );
        }
    }

    fn h(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut m = HeaderMap::new();
        if let Some(x) = host {
            m.insert(header::HOST, HeaderValue::from_str(x).unwrap());
        }
        if let Some(x) = origin {
            m.insert(header::ORIGIN, HeaderValue::from_str(x).unwrap());
        }
        m
    }

    #[test]
    fn hosts() {
        assert!(check_h(&h(Some("127.0.0.1:80"), None), 80, &[]).is_ok());
        assert!(check_h(&h(Some("localhost:80"), None), 80, &[]).is_ok());
        assert!(check_h(&h(Some("[::1]:80"), None), 80, &[]).is_ok());
        assert!(check_h(&h(Some("127.0.0.1:81"), None), 80, &[]).is_err());
        assert!(check_h(&h(Some("evil.example:80"), None), 80, &[]).is_err());
        assert!(check_h(&h(None, None), 80, &[]).is_err());
    }

    #[test]
    fn origins() {
        let host = Some("127.0.0.1:80");
        assert!(check_h(&h(host, Some("http://127.0.0.1:80")), 80, &[]).is_ok());
        assert!(check_h(&h(host, Some("http://localhost:80")), 80, &[]).is_ok());
        assert!(check_h(&h(host, Some("null")), 80, &["null".into()]).is_err());
        assert!(check_h(&h(host, Some("http://evil.example")), 80, &[]).is_err());
        assert!(check_h(
            &h(host, Some("http://evil.example")),
            80,
            &["http://evil.example".into()]
        )
        .is_ok());
        assert!(check_h(&h(host, Some("http://127.0.0.1:81")), 80, &[]).is_err());
    }
}
