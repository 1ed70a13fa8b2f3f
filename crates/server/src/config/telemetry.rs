//! Settings of the trace export (`[telemetry]`, `A2A__TELEMETRY__*`): off unless a collector is
//! named.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Where and how often spans are sent (`[telemetry]`). Without `otlp_endpoint` no span is made
/// for export and no exporter runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetrySettings {
    /// The OpenTelemetry collector's base URL (`A2A__TELEMETRY__OTLP_ENDPOINT`), an http(s)
    /// URL; spans are POSTed to its `/v1/traces` as OTLP/HTTP protobuf. Unset: no traces.
    pub otlp_endpoint: Option<String>,
    /// How long finished spans wait before they are sent in one batch, in milliseconds.
    pub export_interval_ms: u64,
    /// Most finished spans held for export; past it new spans are dropped, so a collector that
    /// is down costs at most this many spans of memory.
    pub max_queued_spans: usize,
    /// Longest one export may take (connect, send, answer), in milliseconds.
    pub export_timeout_ms: u64,
}

impl Default for TelemetrySettings {
    fn default() -> Self {
        TelemetrySettings {
            otlp_endpoint: None,
            export_interval_ms: 5_000,
            max_queued_spans: 2_048,
            export_timeout_ms: 10_000,
        }
    }
}

impl TelemetrySettings {
    /// The collector's `/v1/traces` URL, when traces are on (the endpoint checked by
    /// the start).
    pub fn traces_url(&self) -> Option<String> {
        let base = self.otlp_endpoint.as_deref()?.trim();
        Some(format!("{}/v1/traces", base.trim_end_matches('/')))
    }

    /// Checks the endpoint (an http or https URL with a host) and the numbers.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if let Some(endpoint) = &self.otlp_endpoint {
            let url = reqwest::Url::parse(endpoint.trim()).map_err(|e| {
                ConfigError::invalid(
                    "telemetry.otlp_endpoint",
                    format!("is not a URL ({e}); give the collector's base URL, e.g. http://otel-collector:4318"),
                )
            })?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err(ConfigError::invalid(
                    "telemetry.otlp_endpoint",
                    "must be an http:// or https:// URL with a host, e.g. http://otel-collector:4318",
                ));
            }
            if url.query().is_some() || url.fragment().is_some() {
                return Err(ConfigError::invalid(
                    "telemetry.otlp_endpoint",
                    "must be the collector's base URL without a query or fragment (/v1/traces is added)",
                ));
            }
        }
        if !(10..=600_000).contains(&self.export_interval_ms) {
            return Err(ConfigError::invalid(
                "telemetry.export_interval_ms",
                "must be between 10 and 600000 (milliseconds)",
            ));
        }
        if !(1..=1_000_000).contains(&self.max_queued_spans) {
            return Err(ConfigError::invalid(
                "telemetry.max_queued_spans",
                "must be between 1 and 1000000",
            ));
        }
        if !(100..=600_000).contains(&self.export_timeout_ms) {
            return Err(ConfigError::invalid(
                "telemetry.export_timeout_ms",
                "must be between 100 and 600000 (milliseconds)",
            ));
        }
        Ok(())
    }
}
