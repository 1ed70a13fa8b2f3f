//! Which JSON-RPC wire a request speaks, as far as the `A2A-Version` header tells: a leaf, so
//! that the error renderer, the method table and the card all name the wire the same way.

use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};

/// The request header that names the A2A version a client speaks (absent means 0.3).
pub const VERSION_HEADER: &str = "a2a-version";

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
