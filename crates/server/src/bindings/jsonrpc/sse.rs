//! A task's events as a Server-Sent Events answer: each event one JSON-RPC response carrying
//! the request's `id` (`message/stream`, `tasks/resubscribe`, `SendStreamingMessage`,
//! `SubscribeToTask`), or on the HTTP+JSON binding the 1.0 `StreamResponse` alone, a keep-alive
//! comment on an idle stream, and the end of the answer after the final status. A client that goes away drops only its subscription: the task runs on.
//!
//! Each event counts against the owner's and the replica's budgets of queued stream bytes from
//! when it is handed to the connection until the connection asks for the next one (its client
//! took it, or most of it); an event that would pass a budget is not sent: the stream ends with
//! the refusal naming the budget instead.

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

/// The comment a resumed stream sends when the task's log no longer holds the events after its
/// `Last-Event-ID`: the task's current state follows, then the events after it.
pub const GAP: &str =
    "the events after Last-Event-ID are no longer held; the task's current state follows";

/// Which wire's form the events take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventWire {
    /// 0.3: the logged event as it is (`kind`-tagged), the last a status update with
    /// `final: true`.
    V03,
    /// 1.0: `{"task": …}`, `{"statusUpdate": …}` or `{"artifactUpdate": …}`.
    V1,
    /// 1.0 as the HTTP+JSON binding sends it: each event the `StreamResponse` itself, with no
    /// JSON-RPC envelope around it.
    V1Bare,
}

/// Makes the last event of a stream refused for a byte budget: an error in the stream's
/// binding and wire (a JSON-RPC error response, a `google.rpc.Status`) naming the budget's
/// setting.
pub type Refusal = Box<dyn Fn(&'static str) -> Bytes + Send + Sync>;

/// How a stream ends early, made by the caller in its wire's terms.
pub struct Endings {
    /// The last event when the events cannot be read on (the shared store failed).
    pub failure: Bytes,
    /// The last event when the next one would pass a byte budget.
    pub refusal: Refusal,
}

/// The answer streaming `subscription`'s events under the request's `id`, ending early as
/// `endings` say.
pub fn event_stream(
    subscription: Subscription,
    id: Option<Id>,
    wire: EventWire,
    endings: Endings,
) -> Response {
    Sse::new(events(subscription, id, wire, endings)).into_response()
}

struct Streaming {
    subscription: Subscription,
    id: Option<Id>,
    wire: EventWire,
    failure: Option<Bytes>,
    refusal: Refusal,
}

fn events(
    subscription: Subscription,
    id: Option<Id>,
    wire: EventWire,
    endings: Endings,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let state = Streaming {
        subscription,
        id,
        wire,
        failure: Some(endings.failure),
        refusal: endings.refusal,
    };
    futures::stream::unfold(state, |mut state| async move {
        // After a failure there is nothing more to send.
        state.failure.as_ref()?;
        // Asked for the next event: the connection has room again.
        state.subscription.taken();
        let event = match state.subscription.next().await {
            Ok(Some(Next::Event(json, place))) => match state.render(&json) {
                Ok(body) => match state.subscription.handed_out(body.len()) {
                    // The event's `id` is its place in the task's log: a client that loses
                    // the stream resumes after it with `Last-Event-ID`, through any replica.
                    Ok(()) => match place {
                        Some(place) => Event::default().id(place.to_string()).data(body),
                        None => Event::default().data(body),
                    },
                    Err(budget) => state.refuse(budget)?,
                },
                Err(error) => state.fail(&error)?,
            },
            Ok(Some(Next::Gap)) => Event::default().comment(GAP),
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
            EventWire::V1 | EventWire::V1Bare => {
                let event =
                    StreamEvent::from_json(json).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                let result = serde_json::to_vec(&V1StreamResponse::from(event))
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                if self.wire == EventWire::V1Bare {
                    result
                } else {
                    success_body(self.id.as_ref(), &result)
                }
            }
        };
        String::from_utf8(body).map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    /// The refusal naming `budget`, as the last event.
    fn refuse(&mut self, budget: &'static str) -> Option<Event> {
        tracing::info!(
            budget,
            "a stream's next event would pass a byte budget; the stream ends"
        );
        self.failure.take()?;
        let refusal = (self.refusal)(budget);
        Some(Event::default().data(String::from_utf8_lossy(&refusal)))
    }

    /// The failure event, once; `None` when it was sent already.
    fn fail(&mut self, error: &StoreError) -> Option<Event> {
        tracing::error!(%error, "a task's events could not be read on; the stream ends");
        let failure = self.failure.take()?;
        Some(Event::default().data(String::from_utf8_lossy(&failure)))
    }
}
