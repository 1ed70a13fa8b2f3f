//! Auth-off mode (`auth.mode = none`) answers only requests that a local client addressed to
//! this machine. Every request then acts as one configured user, so a web page the developer
//! happens to visit must not be able to drive the server (and spend its LLM key): neither by
//! DNS rebinding (a name of the page's that resolves to 127.0.0.1, so the browser sends
//! `Host: attacker.example`) nor by a cross-origin request (`Origin: https://attacker.example`).
//! A request whose `Host` is not a loopback name or address, or whose `Origin` is present and
//! not loopback, is refused with 403 and `-32600` before anything else runs.

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::Response;

use super::RenderRefusal;
use crate::error::ApiError;

/// The middleware: refuses a request not addressed to a loopback host from a loopback origin.
pub async fn only_loopback(
    State(render): State<RenderRefusal>,
    request: Request,
    next: Next,
) -> Response {
    match foreign_addressing(request.headers(), request.uri()) {
        None => next.run(request).await,
        Some(why) => {
            let error = ApiError::InvalidRequest {
                message: format!(
                    "Invalid request: authentication is off (auth.mode = none), so this server answers only requests to a loopback host (localhost, 127.0.0.1, [::1]) without an Origin or from a loopback one; {why}"
                ),
                status: StatusCode::FORBIDDEN,
            };
            render(error, request.uri().path(), request.headers())
        }
    }
}

/// What is not loopback about a request's addressing, if anything.
fn foreign_addressing(headers: &HeaderMap, uri: &Uri) -> Option<String> {
    // HTTP/1.1 sends `Host`; HTTP/2 the `:authority` in the URI.
    let host = headers
        .get(header::HOST)
        .map(|value| {
            value
                .to_str()
                .ok()
                .and_then(|v| v.parse::<Authority>().ok())
        })
        .unwrap_or_else(|| uri.authority().cloned());
    match host {
        Some(host) if is_loopback_host(host.host()) => {}
        Some(host) => return Some(format!("the Host `{}` is not", shown(host.as_str()))),
        None => return Some("the request names no readable Host".into()),
    }
    let origin = headers.get(header::ORIGIN)?;
    let loopback = origin
        .to_str()
        .ok()
        .and_then(|v| v.parse::<Uri>().ok())
        .is_some_and(|origin| origin.host().is_some_and(is_loopback_host));
    (!loopback).then(|| {
        format!(
            "the Origin `{}` is not",
            shown(&String::from_utf8_lossy(origin.as_bytes()))
        )
    })
}

/// `localhost`, a name under `.localhost` (which browsers resolve to loopback themselves), or
/// a loopback address (IPv6 in brackets, as in a URL).
fn is_loopback_host(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// A header value as the refusal quotes it: at most 100 characters.
fn shown(value: &str) -> String {
    value.chars().take(100).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addressing(host: Option<&str>, origin: Option<&str>) -> Option<String> {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, host.parse().unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, origin.parse().unwrap());
        }
        foreign_addressing(&headers, &Uri::from_static("/api/v1/a2a"))
    }

    #[test]
    fn loopback_hosts_and_origins_pass() {
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST:1",
            "app.localhost:8080",
            "127.0.0.1:8080",
            "127.9.9.9",
            "[::1]:8080",
            "[::ffff:127.0.0.1]:80",
        ] {
            assert_eq!(addressing(Some(host), None), None, "{host}");
        }
        for origin in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:5173",
        ] {
            assert_eq!(
                addressing(Some("localhost"), Some(origin)),
                None,
                "{origin}"
            );
        }
    }

    #[test]
    fn rebinding_and_cross_origin_requests_are_named() {
        for host in [
            "attacker.example",
            "attacker.example:8080",
            "localhost.attacker.example",
            "127.0.0.1.nip.io",
            "10.0.0.1:8080",
            "[2001:db8::1]",
            "0.0.0.0:8080",
        ] {
            let why = addressing(Some(host), None).expect(host);
            assert!(why.contains("Host"), "{why}");
        }
        assert!(addressing(None, None).is_some(), "no Host");
        for origin in [
            "https://attacker.example",
            "null",
            "http://localhost.evil:80",
        ] {
            let why = addressing(Some("localhost:8080"), Some(origin)).expect(origin);
            assert!(why.contains("Origin"), "{why}");
        }
    }
}
