//! Which JSON-RPC wire a request speaks, as far as the `A2A-Version` header tells: a leaf, so
//! that the error renderer, the method table and the card all name the wire the same way.

use axum::http::HeaderMap;
use percent_encoding::percent_decode_str;
use serde::{Deserialize, Serialize};

/// The request header that names the A2A version a client speaks (absent means 0.3).
pub const VERSION_HEADER: &str = "a2a-version";

/// The `A2A-Version` query parameter of a request's `query`, decoded: A2A 1.0 lets a client
/// that cannot set the header give its version there. The name is matched without regard to
/// case, as a header's is; the first readable one counts.
pub fn query_version(query: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = percent_decode_str(name).decode_utf8().ok()?;
        if !name.eq_ignore_ascii_case(VERSION_HEADER) {
            return None;
        }
        let value = percent_decode_str(value).decode_utf8().ok()?;
        Some(value.into_owned())
    })
}

/// The `A2A-Version` request header, when it is readable text.
pub fn version_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok())
}

/// A version this server speaks; every method of the method table belongs to one. Stored with
/// a push config (as `"0.3"` or `"1.0"`) to tell its webhook in the terms it was set in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Version {
    /// A2A 0.3 (`message/send`, `kind`-tagged objects, this project's error codes).
    #[serde(rename = "0.3")]
    V03,
    /// A2A 1.0 (`SendMessage`, no `kind`, wrapped results, `ErrorInfo` errors).
    #[serde(rename = "1.0")]
    V1,
}

/// Which JSON-RPC wire a request speaks, and so how its answer (errors included) is spelt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wire {
    /// A2A 0.3 (`message/send`, `kind`-tagged objects, this project's error codes).
    V03,
    /// A2A 1.0 (`SendMessage`, no `kind`, wrapped results, `ErrorInfo` errors).
    V1,
    /// The `A2A-Version` header names a version this server does not speak; answered in 1.0
    /// terms with `VersionNotSupportedError`.
    Unsupported(String),
}

impl Wire {
    /// The wire the `A2A-Version` header names: a missing or empty header means 0.3, as A2A
    /// 1.0 prescribes. A method name, when there is one, decides before it
    /// (`methods::select` of the JSON-RPC binding).
    pub fn from_header(version_header: Option<&str>) -> Wire {
        match version_header.map(str::trim) {
            None | Some("") => Wire::V03,
            Some(version) => match major_minor(version) {
                Some((0, _)) => Wire::V03,
                Some((1, 0)) => Wire::V1,
                _ => Wire::Unsupported(version.to_string()),
            },
        }
    }

    /// Whether answers are spelt in 1.0 terms.
    pub fn is_v1(&self) -> bool {
        !matches!(self, Wire::V03)
    }

    /// The version a call was answered in, for the conformance kit's report.
    pub fn label(&self) -> &'static str {
        match self {
            Wire::V03 => "0.3",
            Wire::V1 => "1.0",
            Wire::Unsupported(_) => "unsupported",
        }
    }
}

impl From<Version> for Wire {
    fn from(version: Version) -> Wire {
        match version {
            Version::V03 => Wire::V03,
            Version::V1 => Wire::V1,
        }
    }
}

fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.split('.');
    let major = parts.next()?.trim().parse().ok()?;
    let minor = match parts.next() {
        Some(minor) => minor.trim().parse().ok()?,
        None => 0,
    };
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_from_the_query_by_any_case_of_its_name() {
        assert_eq!(query_version("A2A-Version=1.0").as_deref(), Some("1.0"));
        assert_eq!(
            query_version("pageSize=2&a2a-version=1.0.1").as_deref(),
            Some("1.0.1")
        );
        assert_eq!(query_version("A2A%2DVersion=0%2E3").as_deref(), Some("0.3"));
        assert_eq!(query_version("A2A-Version=").as_deref(), Some(""));
        assert_eq!(query_version("A2A-Version").as_deref(), Some(""));
        assert_eq!(query_version("version=1.0"), None);
        assert_eq!(
            query_version("A2A-Version=%FF&A2A-Version=1.0").as_deref(),
            Some("1.0")
        );
    }
}
