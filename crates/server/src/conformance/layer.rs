//! The kit as a layer around the JSON-RPC endpoint, composed in the router only when the kit
//! is on: before the call it reads `A2A-Simulate` into a typed [`HeaderScenario`] in the
//! request's extensions; after it, a response marked [`Simulated`] with `disconnect` or
//! `malformed_response` is cut off as the scenario says, and an event stream marked with
//! `stream_dropped` or `slow_stream` is cut after its events or paced. The endpoint never reads
//! the header.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use http_body_util::BodyExt;

use super::{Kit, Scenario, Simulated};
use crate::edge::serve::DropConnection;
use crate::paths;

/// The scenario the `A2A-Simulate` header selects (`None`: no header; `Err`: what is wrong
/// with its text), for the endpoint to apply where the real condition arises.
#[derive(Debug, Clone)]
pub struct HeaderScenario(pub Option<Result<Scenario, String>>);

/// The middleware.
pub async fn simulate(State(kit): State<Arc<Kit>>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if !paths::is_call(request.method(), path) {
        return next.run(request).await;
    }
    let selected = kit.scenario(request.headers(), None);
    request.extensions_mut().insert(HeaderScenario(selected));
    let mut response = next.run(request).await;
    let simulated = response
        .extensions()
        .get::<Simulated>()
        .map(|Simulated(scenario)| *scenario);
    match simulated {
        Some(Scenario::Disconnect) => {
            response.extensions_mut().insert(DropConnection);
            response
        }
        Some(Scenario::MalformedResponse) => cut_in_half(response).await,
        Some(Scenario::StreamDropped { events }) => dropped_after(response, events),
        Some(scenario @ Scenario::SlowStream { .. }) => {
            let max = Duration::from_millis(kit.settings().max_slow_ms);
            match scenario.stream_pause(max) {
                Some(pause) => paced(response, pause),
                None => response,
            }
        }
        _ => response,
    }
}

/// How long a `stream_dropped` stream waits between its last event and closing its connection.
const FLUSH_PAUSE: Duration = Duration::from_millis(50);

/// The failure that closes a `stream_dropped` stream's connection: the body ends with an
/// error, so the connection is closed without the end of the answer.
#[derive(Debug)]
struct StreamDropped;

impl std::fmt::Display for StreamDropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stream closed part-way (simulated: stream_dropped)")
    }
}

impl std::error::Error for StreamDropped {}

/// Whether a frame of an event stream carries an event (a keep-alive comment does not): the
/// event stream writes each event, or comment, as one frame.
fn carries_event(frame: &Bytes) -> bool {
    frame.starts_with(b"data:") || frame.windows(6).any(|w| w == b"\ndata:")
}

/// The `stream_dropped` answer: the stream's first `events` events, then its connection closed.
/// Dropping the rest drops the subscription only; the task runs on.
fn dropped_after(response: Response, events: u64) -> Response {
    let (parts, body) = response.into_parts();
    let frames = body.into_data_stream();
    let cut = futures::stream::unfold(Some((frames, 0)), move |state| async move {
        let (mut frames, sent) = state?;
        if sent >= events {
            // A pause first, so the connection writes out the events before it is closed.
            tokio::time::sleep(FLUSH_PAUSE).await;
            let dropped: Result<Bytes, axum::BoxError> = Err(Box::new(StreamDropped));
            return Some((dropped, None));
        }
        let frame = frames.next().await?;
        let sent = sent + u64::from(matches!(&frame, Ok(bytes) if carries_event(bytes)));
        Some((frame.map_err(axum::BoxError::from), Some((frames, sent))))
    });
    Response::from_parts(parts, Body::from_stream(cut))
}

/// The `slow_stream` answer: each event after the first sent `pause` after it was ready.
fn paced(response: Response, pause: Duration) -> Response {
    let (parts, body) = response.into_parts();
    let mut first = true;
    let slowed = body.into_data_stream().then(move |frame| {
        let is_event = matches!(&frame, Ok(bytes) if carries_event(bytes));
        let wait = is_event && !std::mem::replace(&mut first, false);
        async move {
            if wait {
                tokio::time::sleep(pause).await;
            }
            frame
        }
    });
    Response::from_parts(parts, Body::from_stream(slowed))
}

/// The answer with its body cut in half: the `malformed_response` scenario.
async fn cut_in_half(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(half))
}
