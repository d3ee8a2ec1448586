//! Bearer credentials (surfaces.md §3, authority-and-broker.md §1.3): only
//! `Authorization: Bearer <64-hex>` is read. The credential id (sha256 of the token) is
//! compared in constant time after the lookup; tokens are never logged.

use axum::http::{header, HeaderMap, StatusCode};
use subtle::ConstantTimeEq;

use crate::ops::session::{self, Session, SessionError};
use crate::store::read::Store;

/// What the `Authorization` header holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bearer {
    /// No `Authorization` header.
    Absent,
    /// Present but not exactly one `Bearer <64-hex>`.
    Malformed,
    /// The 64-hex token.
    Token(String),
}

/// Parse the `Authorization` header: absent, malformed (several headers, another scheme, not
/// 64 hex), or the token. The scheme is matched case-insensitively (RFC 9110 §11.1).
pub fn parse_bearer(headers: &HeaderMap) -> Bearer {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(v) = values.next() else {
        return Bearer::Absent;
    };
    if values.next().is_some() {
        return Bearer::Malformed;
    }
    let Ok(text) = v.to_str() else {
        return Bearer::Malformed;
    };
    let Some((scheme, token)) = text.split_once(' ') else {
        return Bearer::Malformed;
    };
    if !scheme.eq_ignore_ascii_case("bearer") || !session::is_hex64(token) {
        return Bearer::Malformed;
    }
    Bearer::Token(token.to_string())
}

/// The message of a store that cannot be opened for reading (503 `StoreUnavailable`; the
/// cause goes to stderr only).
pub const STORE_UNAVAILABLE: &str = "store unavailable: it could not be opened for reading";

/// Why a request has no usable session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denial {
    /// No header.
    Absent,
    /// Malformed header.
    Malformed,
    /// No such live credential (revoked, never minted, undecodable grants).
    Unknown,
    /// Past `expires_at`.
    Expired,
    /// The credential lookup passed its 3 s bound.
    Timeout,
    /// The store failed (cause for stderr only).
    Store(String),
    /// The store could not be opened for reading (cause for stderr only).
    Unavailable(String),
}

impl Denial {
    /// The text/plain message of MCP and A2A v1.0 (surfaces.md §3).
    pub fn message(&self) -> &'static str {
        match self {
            Denial::Absent => {
                "session credential is absent: send Authorization: Bearer <session-credential>"
            }
            Denial::Malformed => {
                "malformed Authorization header: expected Bearer <64-hex-credential>"
            }
            Denial::Unknown => "unknown session credential",
            Denial::Expired => "session credential has expired",
            Denial::Timeout => "credential lookup timed out",
            Denial::Store(_) => "internal store failure",
            Denial::Unavailable(_) => STORE_UNAVAILABLE,
        }
    }

    /// The cause to log on stderr, for the host-side denials ([`Denial::Store`],
    /// [`Denial::Unavailable`]); `None` for the caller's own.
    pub fn cause(&self) -> Option<&str> {
        match self {
            Denial::Store(c) | Denial::Unavailable(c) => Some(c),
            _ => None,
        }
    }

    /// The REST class and status (`/v1/commit`, agent cards).
    pub fn rest(&self) -> (StatusCode, &'static str, &'static str) {
        match self {
            Denial::Absent => (
                StatusCode::UNAUTHORIZED,
                "SessionAbsent",
                "a session credential is required: no Authorization Bearer header was present",
            ),
            Denial::Malformed => (StatusCode::BAD_REQUEST, "InvalidSession", self.message()),
            Denial::Unknown => (StatusCode::UNAUTHORIZED, "SessionUnknown", self.message()),
            Denial::Expired => (StatusCode::UNAUTHORIZED, "SessionExpired", self.message()),
            Denial::Timeout => (StatusCode::SERVICE_UNAVAILABLE, "Timeout", self.message()),
            Denial::Store(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal",
                self.message(),
            ),
            Denial::Unavailable(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "StoreUnavailable",
                self.message(),
            ),
        }
    }

    /// The HTTP status for MCP / A2A v1.0 text/plain answers (401, or 503/500 for the host).
    pub fn plain_status(&self) -> StatusCode {
        match self {
            Denial::Timeout | Denial::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Denial::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::UNAUTHORIZED,
        }
    }
}

/// Resolve `token` at `now` in `store` by the one agent rule (`authority::session::agent`,
/// DEC-ARCH-11); the stored credential id is then compared with the token's in constant time
/// (a row found by any other means is refused).
///
/// # Errors
/// [`Denial::Unknown`], [`Denial::Expired`], [`Denial::Malformed`] or [`Denial::Store`].
pub fn lookup(
    store: &Store,
    token: &str,
    now: i64,
    unattested: session::Unattested,
) -> Result<Session, Denial> {
    let s = session::resolve(store, token, now, unattested).map_err(|e| match e {
        SessionError::Malformed => Denial::Malformed,
        // surfaces.md §3 fixes the wire text; a revoked (or unattested) credential is
        // "unknown" there [V].
        SessionError::Unknown
        | SessionError::Revoked
        | SessionError::Tampered(_)
        | SessionError::Unattested => Denial::Unknown,
        SessionError::Expired => Denial::Expired,
        other => Denial::Store(other.to_string()),
    })?;
    let want = session::credential_id(token);
    if !bool::from(want.as_bytes().ct_eq(s.credential_id.as_bytes())) {
        return Err(Denial::Unknown);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(v: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for x in v {
            h.append(header::AUTHORIZATION, HeaderValue::from_str(x).unwrap());
        }
        h
    }

    #[test]
    fn bearer_forms() {
        let tok = "ab".repeat(32);
        assert_eq!(parse_bearer(&with(&[])), Bearer::Absent);
        assert_eq!(
            parse_bearer(&with(&[&format!("Bearer {tok}")])),
            Bearer::Token(tok.clone())
        );
        assert_eq!(
            parse_bearer(&with(&[&format!("bearer {tok}")])),
            Bearer::Token(tok.clone())
        );
        assert_eq!(parse_bearer(&with(&["Bearer abc"])), Bearer::Malformed);
        assert_eq!(
            parse_bearer(&with(&[&format!("Basic {tok}")])),
            Bearer::Malformed
        );
        assert_eq!(
            parse_bearer(&with(&[&format!("Bearer  {tok}")])),
            Bearer::Malformed
        );
        assert_eq!(parse_bearer(&with(&["Bearer"])), Bearer::Malformed);
        assert_eq!(
            parse_bearer(&with(&[&format!("Bearer {tok}"), &format!("Bearer {tok}")])),
            Bearer::Malformed
        );
    }

    #[test]
    fn rest_classes_match_the_table() {
        assert_eq!(Denial::Absent.rest().0, StatusCode::UNAUTHORIZED);
        assert_eq!(
            Denial::Malformed.rest(),
            (
                StatusCode::BAD_REQUEST,
                "InvalidSession",
                Denial::Malformed.message()
            )
        );
        assert_eq!(Denial::Unknown.rest().1, "SessionUnknown");
        assert_eq!(Denial::Expired.rest().1, "SessionExpired");
    }
}
