//! A task's events as the messages of a server-streaming RPC (`SendStreamingMessage`,
//! `SubscribeToTask`): each event the 1.0 `StreamResponse` the event stream of the other
//! bindings carries, the last the final status; then the call ends with `OK`. A keep-alive or a
//! gap in a resumed log sends nothing (HTTP/2 keeps the connection alive). A client that cancels
//! the call drops only its subscription: the task runs on.
//!
//! As on the event stream, each message counts against the owner's and the replica's budgets of
//! queued stream bytes until the next one is asked for; a message that would pass a budget is
//! not sent: the call ends with `RESOURCE_EXHAUSTED` naming the budget instead.

use std::pin::Pin;

use a2a_types::StreamEvent;
use a2a_types::v1::V1StreamResponse;
use futures::Stream;
use prost_reflect::MessageDescriptor;
use tonic::Status;

use crate::bindings::grpc::codec::Encoded;
use crate::bindings::grpc::schema;
use crate::bindings::grpc::status::status;
use crate::error::ApiError;
use crate::runtime::{Next, Subscription};

/// The messages of a streamed answer.
pub(crate) type EventStream = Pin<Box<dyn Stream<Item = Result<Encoded, Status>> + Send>>;

/// What the stream needs between two messages.
struct Streaming {
    subscription: Subscription,
    output: MessageDescriptor,
    request_id: String,
}

/// The messages of `subscription`'s events, each a message of type `output`.
pub(crate) fn events(
    subscription: Subscription,
    output: MessageDescriptor,
    request_id: String,
) -> EventStream {
    let state = Streaming {
        subscription,
        output,
        request_id,
    };
    Box::pin(futures::stream::unfold(Some(state), |state| async move {
        let mut state = state?;
        loop {
            // Asked for the next message: the connection has room again.
            state.subscription.taken();
            let json = match state.subscription.next().await {
                Ok(Some(Next::Event(json, _))) => json,
                Ok(Some(Next::Gap | Next::KeepAlive)) => continue,
                Ok(None) => return None,
                Err(error) => {
                    let error = ApiError::Internal(format!(
                        "a task's events could not be read on: {error}"
                    ));
                    return Some((Err(state.status(&error)), None));
                }
            };
            let message = match render(&json, &state.output) {
                Ok(message) => message,
                Err(error) => return Some((Err(state.status(&error)), None)),
            };
            return match state.subscription.handed_out(message.0.len()) {
                Ok(()) => Some((Ok(message), Some(state))),
                Err(budget) => {
                    tracing::info!(
                        budget,
                        "a stream's next event would pass a byte budget; the stream ends"
                    );
                    let error = ApiError::OverBudget {
                        budget,
                        retry_after_secs: state.subscription.keepalive().as_secs(),
                    };
                    Some((Err(state.status(&error)), None))
                }
            };
        }
    }))
}

impl Streaming {
    fn status(&self, error: &ApiError) -> Status {
        status(error, &self.request_id, None)
    }
}

/// A logged event (its 0.3 form) as a 1.0 `StreamResponse` message.
fn render(json: &[u8], output: &MessageDescriptor) -> Result<Encoded, ApiError> {
    let event = StreamEvent::from_json(json).map_err(|e| ApiError::Internal(e.to_string()))?;
    let response = serde_json::to_value(V1StreamResponse::from(event))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    schema::encode_tree(&response, output)
}
