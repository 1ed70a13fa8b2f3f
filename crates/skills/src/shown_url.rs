//! How a URL appears in logs and error messages: its scheme and host (with the port) and a
//! hash of the rest. A peer's URL may carry a secret anywhere after the host (a Slack-style
//! webhook path, a `?key=` query, a JWKS `client_secret`, a model server's `api-version`
//! token), so none of it is written out; the hash still tells two URLs of one host apart and
//! lets an operator match a log line to a URL they know. The server logs every URL of a peer
//! through [`shown_url`] (webhooks, the JWKS, the model server).

use reqwest::Url;
use sha2::{Digest, Sha256};

/// Hex digits of the hash that are shown: enough to tell URLs apart, too few to matter.
const HASH_HEX_DIGITS: usize = 12;

/// `scheme://host[:port]/[sha256:<12 hex digits>]`, user and password dropped; the rest (path,
/// query and fragment) is hashed with SHA-256. A string that is not a URL shows as
/// `[not a URL]`.
pub fn shown_url(raw: &str) -> String {
    let Ok(url) = Url::parse(raw.trim()) else {
        return "[not a URL]".to_string();
    };
    let mut shown = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        shown.push_str(&format!(":{port}"));
    }
    let mut hasher = Sha256::new();
    hasher.update(url.path());
    if let Some(query) = url.query() {
        hasher.update(format!("?{query}"));
    }
    if let Some(fragment) = url.fragment() {
        hasher.update(format!("#{fragment}"));
    }
    shown.push_str("/[sha256:");
    for byte in hasher.finalize().iter().take(HASH_HEX_DIGITS / 2) {
        shown.push_str(&format!("{byte:02x}"));
    }
    shown.push(']');
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_scheme_and_host_are_shown_and_the_rest_is_hashed() {
        let shown = shown_url(
            "https://user:pw@hooks.example:8443/services/T0/B0/path-secret?key=query-secret#frag",
        );
        assert!(
            shown.starts_with("https://hooks.example:8443/[sha256:"),
            "{shown}"
        );
        for secret in [
            "user",
            "pw",
            "services",
            "path-secret",
            "query-secret",
            "frag",
        ] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert_eq!(
            shown.len(),
            "https://hooks.example:8443/[sha256:]".len() + 12
        );
    }

    #[test]
    fn the_hash_tells_urls_of_one_host_apart() {
        let a = shown_url("https://hooks.example/a?key=1");
        assert_eq!(a, shown_url("https://hooks.example/a?key=1"));
        assert_ne!(a, shown_url("https://hooks.example/a?key=2"));
        assert_eq!(shown_url("not a url"), "[not a URL]");
        assert!(shown_url("http://[::1]:9/x").starts_with("http://[::1]:9/[sha256:"));
    }
}
