//! Trace export (`[telemetry]`): OpenTelemetry spans over OTLP/HTTP (protobuf) to a collector,
//! built as one more layer of the log subscriber. Off unless `telemetry.otlp_endpoint` is set;
//! then only the spans of [`TRACE_TARGET`] are exported, and only that layer sees them.
//!
//! The layer hands finished spans to the SDK's batch processor: a bounded queue
//! (`telemetry.max_queued_spans`; a full queue drops new spans) drained by one thread, which
//! posts each batch through [`RuntimeClient`] on the server's tokio runtime with a timeout, so
//! a slow or dead collector never blocks a request nor grows memory.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::http::{HeaderMap, Request, Response};
use bytes::Bytes;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_http::{HeaderExtractor, HttpClient, HttpError};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

use crate::config::TelemetrySettings;

/// The `tracing` target of every span that is exported (the call, its store round trips, the
/// model request, a push delivery). The log layer never shows them; without an endpoint no
/// layer enables them, so their callsites are disabled and cost one cached check each.
pub const TRACE_TARGET: &str = skills::TRACE_TARGET;

/// Whether the exporter was installed in this process (the endpoint was set at start).
static TRACES_ON: AtomicBool = AtomicBool::new(false);

/// The provider, kept to flush and stop the exporter at shutdown.
static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// Whether spans are exported: code that would do work only for a trace (reading the client's
/// `traceparent`, recording the skill, carrying the trace into a task) asks this first.
pub fn traces_on() -> bool {
    TRACES_ON.load(Ordering::Relaxed)
}

/// Why the exporter could not be built.
#[derive(Debug, thiserror::Error)]
#[error("the OTLP trace exporter could not be built: {0}")]
pub struct ExporterError(String);

/// The exporting layer for `settings`, or `None` (no endpoint: nothing is built, no thread
/// runs). Must be called inside the tokio runtime that will carry the exports.
pub(super) fn layer<S>(
    settings: &TelemetrySettings,
) -> Result<Option<impl Layer<S> + Send + Sync + 'static>, ExporterError>
where
    S: tracing::Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
{
    let Some(url) = settings.traces_url() else {
        return Ok(None);
    };
    let timeout = Duration::from_millis(settings.export_timeout_ms);
    let client = RuntimeClient::new(timeout)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_endpoint(url)
        .with_timeout(timeout)
        .build()
        .map_err(|e| ExporterError(e.to_string()))?;
    let batches = BatchConfigBuilder::default()
        .with_max_queue_size(settings.max_queued_spans)
        .with_max_export_batch_size(settings.max_queued_spans.min(512))
        .with_scheduled_delay(Duration::from_millis(settings.export_interval_ms))
        .build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::new(exporter, batches))
        .with_resource(
            Resource::builder()
                .with_service_name(env!("CARGO_PKG_NAME"))
                .build(),
        )
        .build();
    let tracer = provider.tracer(env!("CARGO_PKG_NAME"));
    if PROVIDER.set(provider).is_err() {
        return Ok(None);
    }
    TRACES_ON.store(true, Ordering::Relaxed);
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_filter(Targets::new().with_target(TRACE_TARGET, tracing::Level::TRACE));
    Ok(Some(layer))
}

/// Sends the spans still queued and stops the exporter's thread (at shutdown; a no-op when
/// traces are off). Blocks for at most the export timeout.
pub fn shutdown() {
    if let Some(provider) = PROVIDER.get() {
        let _ = provider.shutdown();
    }
}

/// The span of one call, a child of the client's `traceparent` when it sent a valid one; its
/// method, skill, owner and rate-limit fields are recorded as they become known
/// ([`record_call`]). Disabled, and nothing read, when traces are off.
pub fn call_span(binding: &'static str, request_id: &str, headers: &HeaderMap) -> tracing::Span {
    if !traces_on() {
        return tracing::Span::none();
    }
    let span = tracing::info_span!(
        target: TRACE_TARGET,
        "a2a.call",
        otel.kind = "server",
        a2a.binding = binding,
        a2a.request_id = %super::UserText(request_id),
        a2a.method = tracing::field::Empty,
        a2a.skill = tracing::field::Empty,
        a2a.owner = tracing::field::Empty,
        a2a.rate_limit = tracing::field::Empty,
    );
    let parent = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
    if parent.span().span_context().is_valid() {
        let _ = span.set_parent(parent);
    }
    span
}

/// The span of a task's work run after its call (`TaskRuntime::start`): in the trace of the
/// current (call) span, as its child, but not held by it, so the call's span ends with the call
/// however long the work goes on. Disabled when traces are off.
pub fn task_span() -> tracing::Span {
    if !traces_on() {
        return tracing::Span::none();
    }
    let call = tracing::Span::current().context();
    let span = tracing::info_span!(target: TRACE_TARGET, parent: None, "task run");
    if call.span().span_context().is_valid() {
        let _ = span.set_parent(call);
    }
    span
}

/// The span of one push delivery attempt, a child of the trace whose span queued it
/// (`queued_by`, a `traceparent`) when that is valid, else the root of a trace of its own.
pub fn delivery_span(queued_by: Option<&str>) -> tracing::Span {
    if !traces_on() {
        return tracing::Span::none();
    }
    let span = tracing::info_span!(target: TRACE_TARGET, "push delivery", otel.kind = "client");
    if let Some(traceparent) = queued_by {
        let carrier =
            std::collections::HashMap::from([("traceparent".to_string(), traceparent.to_string())]);
        let parent = TraceContextPropagator::new().extract(&carrier);
        if parent.span().span_context().is_valid() {
            let _ = span.set_parent(parent);
        }
    }
    span
}

/// What a call span learns once the call is answered: its method (the method table's name,
/// `other` for a name not in it, so no client text names a span), which also names the span;
/// its owner (the store's hashed owner, `store::Owner`: the subject itself never leaves the
/// server); and the rate limiter's decision (`allowed`, `limited`, or `none` for a call not
/// charged).
pub fn record_call(
    span: &tracing::Span,
    method: &'static str,
    owner: Option<&str>,
    rate_limit: &'static str,
) {
    if span.is_disabled() {
        return;
    }
    span.context().span().update_name(method);
    span.record("a2a.method", method);
    if let Some(owner) = owner {
        span.record("a2a.owner", owner);
    }
    span.record("a2a.rate_limit", rate_limit);
}

/// Records the skill a send runs on the current call span (a no-op when traces are off).
pub fn record_skill(skill: &str) {
    if traces_on() {
        tracing::Span::current().record("a2a.skill", format!("{}", super::UserText(skill)));
    }
}

/// The W3C `traceparent` of the current span, for an outgoing request (the model server, a
/// webhook); `None` when there is no exported span. Given to the skills as their
/// [`skills::TraceContext`].
pub fn traceparent() -> Option<String> {
    if !traces_on() {
        return None;
    }
    let context = tracing::Span::current().context();
    let span = context.span();
    let span_context = span.span_context();
    span_context.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            span_context.trace_id(),
            span_context.span_id(),
            span_context.trace_flags().to_u8()
        )
    })
}

/// The exporter's HTTP client: the server's reqwest client, each request run on the server's
/// tokio runtime (the batch processor's own thread has none), with a timeout.
#[derive(Debug)]
struct RuntimeClient {
    http: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl RuntimeClient {
    fn new(timeout: Duration) -> Result<Self, ExporterError> {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ExporterError(e.to_string()))?;
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| ExporterError("no async runtime to send spans on".into()))?;
        Ok(RuntimeClient { http, runtime })
    }
}

#[async_trait::async_trait]
impl HttpClient for RuntimeClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let http = self.http.clone();
        self.runtime
            .spawn(async move { http.send_bytes(request).await })
            .await
            .map_err(|e| Box::new(e) as HttpError)?
    }
}
