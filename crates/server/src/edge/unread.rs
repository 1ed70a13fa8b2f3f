//! An answer given with the request's body left unread (a refusal from the headers alone: the
//! token, the plan, an unknown route, the guard's) ends its connection, as the server cannot
//! read the next request after bytes it skipped. Saying so with `Connection: close` keeps a
//! client that pools connections (the Python SDKs' `httpx`) from sending its next call on a
//! connection that is closing, where it would meet "server disconnected" instead of an answer.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::header::CONNECTION;
use axum::http::{HeaderValue, Version};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Frame, SizeHint};

/// A request body that notes when it has been read to its end.
struct WatchedBody {
    inner: Body,
    ended: Arc<AtomicBool>,
}

impl HttpBody for WatchedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.ended.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Runs the request and adds `Connection: close` to its answer when the request had a body
/// that was not read to its end (a request without a body keeps its connection).
pub(crate) async fn close_if_unread(request: Request, next: Next) -> Response {
    // HTTP/2 has no `Connection` header: a stream's unread body costs the connection nothing.
    if request.version() >= Version::HTTP_2 {
        return next.run(request).await;
    }
    let ended = Arc::new(AtomicBool::new(request.body().is_end_stream()));
    let watched = Arc::clone(&ended);
    let request = request.map(|inner| {
        Body::new(WatchedBody {
            inner,
            ended: watched,
        })
    });
    let mut response = next.run(request).await;
    if !ended.load(Ordering::Acquire) {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
