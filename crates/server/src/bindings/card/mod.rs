//! The agent card as served. Clients that do not name a version (0.3 SDKs, `a2a-sdk` 1.x,
//! browsers, crawlers) get the 0.3 card, a superset that also lists the 1.0
//! `supportedInterfaces`; a request with `A2A-Version: 1.x` (as `@a2a-js/sdk` 1.x sends) gets
//! the strict A2A 1.0 card, which a 1.0 schema validates. Both are serialised once, at start,
//! with an `ETag` each and one `Last-Modified`, so clients and caches revalidate with a 304.
//! When the deployment signs its cards ([`signed`]), each form carries its own signature and
//! its `ETag` is that of the signed bytes. The authenticated extended card ([`extended`]) is
//! made per call from the same card.

pub(crate) mod extended;
pub(crate) mod jcs;
pub(crate) mod signed;

use std::collections::BTreeMap;
use std::sync::Arc;

use a2a_types::AgentCard;
use axum::body::Body;
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::store::short_hash;
use crate::wire::{Wire, version_header};
use signed::CardSigner;

/// How long clients and caches may keep the card without revalidating it.
const CACHE_CONTROL: &str = "public, max-age=3600";

/// One form of the card: its JSON text and the strong validator of that text.
struct Representation {
    json: Bytes,
    etag: HeaderValue,
}

impl Representation {
    fn of(mut card: Value, signer: Option<&CardSigner>) -> Result<Self, serde_json::Error> {
        if let Some(signer) = signer {
            signer.sign(&mut card)?;
        }
        let json = serde_json::to_vec(&card)?;
        let etag = format!("\"{}\"", short_hash(&String::from_utf8_lossy(&json)));
        Ok(Representation {
            etag: HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"card\"")),
            json: Bytes::from(json),
        })
    }
}

/// Both forms of the card, ready to answer any GET of it, and the card they were made from,
/// for the extended card.
pub struct ServedCards {
    card: AgentCard,
    signer: Option<Arc<CardSigner>>,
    superset: Representation,
    strict: Representation,
    modified_at: DateTime<Utc>,
    last_modified: HeaderValue,
}

impl ServedCards {
    /// Serialises both forms of `card`, each signed by `signer` when given, last modified at
    /// `now` (the start of the server, whose settings the card is made from).
    pub fn new(
        card: &AgentCard,
        now: DateTime<Utc>,
        signer: Option<Arc<CardSigner>>,
    ) -> Result<Self, serde_json::Error> {
        let modified_at = DateTime::from_timestamp(now.timestamp(), 0).unwrap_or(now);
        let last_modified = modified_at.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        Ok(ServedCards {
            superset: Representation::of(serde_json::to_value(card)?, signer.as_deref())?,
            strict: Representation::of(strict_v1(card), signer.as_deref())?,
            card: card.clone(),
            signer,
            modified_at,
            last_modified: HeaderValue::from_str(&last_modified)
                .unwrap_or(HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT")),
        })
    }

    /// The answer to a GET of the card: the form the request's `A2A-Version` asks for, or a
    /// 304 when the client's copy is current (`If-None-Match`, else `If-Modified-Since`).
    pub fn respond(&self, headers: &HeaderMap) -> Response {
        let card = match Wire::from_header(version_header(headers)) {
            Wire::V1 => &self.strict,
            Wire::V03 | Wire::Unsupported(_) => &self.superset,
        };
        let mut response = if self.is_current(card, headers) {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::NOT_MODIFIED;
            response
        } else {
            let mut response = Response::new(Body::from(card.json.clone()));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        };
        let out = response.headers_mut();
        out.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(CACHE_CONTROL),
        );
        out.insert(header::ETAG, card.etag.clone());
        out.insert(header::LAST_MODIFIED, self.last_modified.clone());
        out.insert(header::VARY, HeaderValue::from_static("A2A-Version"));
        response
    }

    /// RFC 9110 §13.1: `If-None-Match` (weak comparison) decides when present; otherwise
    /// `If-Modified-Since`.
    fn is_current(&self, card: &Representation, headers: &HeaderMap) -> bool {
        if let Some(tags) = headers.get(header::IF_NONE_MATCH) {
            let ours = card.etag.as_bytes();
            return tags.to_str().is_ok_and(|tags| {
                tags.split(',')
                    .map(str::trim)
                    .any(|tag| tag == "*" || tag.trim_start_matches("W/").as_bytes() == ours)
            });
        }
        headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|since| since.to_str().ok())
            .and_then(|since| DateTime::parse_from_rfc2822(since).ok())
            .is_some_and(|since| self.modified_at <= since)
    }
}

/// The cards of every agent of this server: the whole agent's and each skill's own.
#[derive(Clone, Copy)]
pub(crate) struct AgentCards<'a> {
    /// The whole agent's.
    pub(crate) main: &'a ServedCards,
    /// Each skill's own agent's, by skill id.
    pub(crate) skills: &'a BTreeMap<&'static str, ServedCards>,
}

impl AgentCards<'_> {
    /// The cards of the skill's own agent, or of the whole agent (`None`, or a skill without
    /// an agent of its own).
    pub(crate) fn of(&self, agent: Option<&str>) -> &ServedCards {
        agent
            .and_then(|skill| self.skills.get(skill))
            .unwrap_or(self.main)
    }
}

/// The card in the strict A2A 1.0 form: no 0.3 members (`url`, `protocolVersion`,
/// `preferredTransport`, `security`, `supportsAuthenticatedExtendedCard`,
/// `capabilities.stateTransitionHistory`); security in the 1.0 spelling.
pub fn strict_v1(card: &AgentCard) -> Value {
    let mut capabilities = Map::new();
    capabilities.insert("streaming".into(), card.capabilities.streaming.into());
    capabilities.insert(
        "pushNotifications".into(),
        card.capabilities.push_notifications.into(),
    );
    if !card.capabilities.extensions.is_empty() {
        capabilities.insert(
            "extensions".into(),
            Value::Array(card.capabilities.extensions.clone()),
        );
    }
    capabilities.insert(
        "extendedAgentCard".into(),
        card.supports_authenticated_extended_card.into(),
    );
    let mut strict = Map::new();
    strict.insert("name".into(), card.name.clone().into());
    strict.insert("description".into(), card.description.clone().into());
    strict.insert(
        "supportedInterfaces".into(),
        json!(card.supported_interfaces),
    );
    if let Some(provider) = &card.provider {
        strict.insert("provider".into(), json!(provider));
    }
    strict.insert("version".into(), card.version.clone().into());
    if let Some(url) = &card.documentation_url {
        strict.insert("documentationUrl".into(), url.clone().into());
    }
    strict.insert("capabilities".into(), Value::Object(capabilities));
    if !card.security_schemes.is_empty() {
        let schemes = card
            .security_schemes
            .iter()
            .map(|(name, scheme)| (name.clone(), security_scheme_v1(scheme)))
            .collect();
        strict.insert("securitySchemes".into(), Value::Object(schemes));
    }
    if !card.security.is_empty() {
        let requirements = card
            .security
            .iter()
            .map(|requirement| {
                let schemes: Map<String, Value> = requirement
                    .iter()
                    .map(|(name, scopes)| (name.clone(), json!({ "list": scopes })))
                    .collect();
                json!({ "schemes": schemes })
            })
            .collect();
        strict.insert("securityRequirements".into(), Value::Array(requirements));
    }
    strict.insert("defaultInputModes".into(), json!(card.default_input_modes));
    strict.insert(
        "defaultOutputModes".into(),
        json!(card.default_output_modes),
    );
    strict.insert("skills".into(), json!(card.skills));
    Value::Object(strict)
}

/// A 0.3 (OpenAPI-style, `type`-tagged) security scheme in the 1.0 one-of form. This server
/// declares HTTP schemes only (the bearer token); a scheme of another type is kept as written.
fn security_scheme_v1(scheme: &Value) -> Value {
    if scheme.get("type").and_then(Value::as_str) != Some("http") {
        return scheme.clone();
    }
    let mut http = Map::new();
    if let Some(name) = scheme.get("scheme").and_then(Value::as_str) {
        let name = if name.eq_ignore_ascii_case("bearer") {
            "Bearer"
        } else {
            name
        };
        http.insert("scheme".into(), name.into());
    }
    for member in ["bearerFormat", "description"] {
        if let Some(value) = scheme.get(member) {
            http.insert(member.into(), value.clone());
        }
    }
    json!({ "httpAuthSecurityScheme": http })
}
