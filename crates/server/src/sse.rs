//! A task's events as a Server-Sent Events answer: each event one JSON-RPC response carrying
//! the request's `id` (`message/stream`, `tasks/resubscribe`, `SendStreamingMessage`,
//! `SubscribeToTask`), a keep-alive comment on an idle stream, and the end of the answer after
//! the final status. A client that goes away drops only its subscription: the task runs on.

use std::convert::Infallible;

use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::Stream;

use a2a_types::jsonrpc::success_body;
use a2a_types::v1::V1StreamResponse;
use a2a_types::{Id, StreamEvent};

use crate::runtime::{Next, Subscription};
use crate::store::StoreError;

/// Which wire's form the events take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventWire {
    /// 0.3: the logged event as it is (`kind`-tagged), the last a status update with
    /// `final: true`.
    V03,
    /// 1.0: `{"task": …}`, `{"statusUpdate": …}` or `{"artifactUpdate": …}`.
    V1,
}

/// The answer streaming `subscription`'s events under the request's `id`. When the events
/// cannot be read on (the shared store failed), `failure` (a JSON-RPC error response of this
/// wire, made by the caller) is the last event.
pub fn event_stream(
    subscription: Subscription,
    id: Option<Id>,
    wire: EventWire,
    failure: Bytes,
) -> Response {
    Sse::new(events(subscription, id, wire, failure)).into_response()
}

struct Streaming {
    subscription: Subscription,
    id: Option<Id>,
    wire: EventWire,
    failure: Option<Bytes>,
}

fn events(
    subscription: Subscription,
    id: Option<Id>,
    wire: EventWire,
    failure: Bytes,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let state = Streaming {
        subscription,
        id,
        wire,
        failure: Some(failure),
    };
    futures::stream::unfold(state, |mut state| async move {
        // After a failure there is nothing more to send.
        state.failure.as_ref()?;
        let event = match state.subscription.next().await {
            Ok(Some(Next::Event(json))) => match state.render(&json) {
                Ok(body) => Event::default().data(body),
                Err(error) => state.fail(&error)?,
            },
            Ok(Some(Next::KeepAlive)) => Event::default().comment("keep-alive"),
            Ok(None) => return None,
            Err(error) => state.fail(&error)?,
        };
        Some((Ok(event), state))
    })
}

impl Streaming {
    /// One event as the body of a JSON-RPC success response of this wire.
    fn render(&self, json: &[u8]) -> Result<String, StoreError> {
        let body = match self.wire {
            EventWire::V03 => success_body(self.id.as_ref(), json),
            EventWire::V1 => {
                let event =
                    StreamEvent::from_json(json).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                let result = serde_json::to_vec(&V1StreamResponse::from(event))
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                success_body(self.id.as_ref(), &result)
            }
        };
        String::from_utf8(body).map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    /// The failure event, once; `None` when it was sent already.
    fn fail(&mut self, error: &StoreError) -> Option<Event> {
        tracing::error!(%error, "a task's events could not be read on; the stream ends");
        let failure = self.failure.take()?;
        Some(Event::default().data(String::from_utf8_lossy(&failure)))
    }
}
