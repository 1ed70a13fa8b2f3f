//! A request's messages checked as their bytes arrive, so that a fault of the framing is
//! refused at once and in the binding's terms (a status with the A2A `ErrorInfo`, as every
//! other refusal): a length prefix past the limit is refused on its five bytes, whatever it
//! declares (4 GiB included), before any of the message is buffered; a body that ends inside a
//! message is a message cut short; a body that misses its deadline is `DEADLINE_EXCEEDED`, the
//! 408 of the other bindings. tonic, which reads the messages after this, takes a [`Status`]
//! found in the body's error as the call's answer.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::BoxError;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::StatusCode;
use hyper::body::{Frame, SizeHint};

use crate::bindings::grpc::status::status;
use crate::bindings::jsonrpc::envelope::BodyLimits;
use crate::edge::body_deadline;
use crate::error::ApiError;

/// The length prefix of a message: its compressed flag, then its length (big-endian).
const PREFIX: usize = 5;

/// A request body whose messages are checked against `limits` as they arrive.
pub(crate) struct FramedBody {
    inner: Body,
    limits: BodyLimits,
    /// The bytes of the current prefix seen so far.
    prefix: [u8; PREFIX],
    seen: usize,
    /// The bytes of the current message still to come.
    remaining: usize,
    /// A refusal was given: the body ends there.
    refused: bool,
}

impl FramedBody {
    /// `inner`, its messages at most `limits.max_bytes` each.
    pub(crate) fn new(inner: Body, limits: BodyLimits) -> Self {
        FramedBody {
            inner,
            limits,
            prefix: [0; PREFIX],
            seen: 0,
            remaining: 0,
            refused: false,
        }
    }

    /// Follows the framing through `data`; a prefix past the limit is refused.
    fn scan(&mut self, data: &[u8]) -> Result<(), ApiError> {
        let mut at = 0;
        while at < data.len() {
            if self.remaining > 0 {
                let taken = self.remaining.min(data.len() - at);
                self.remaining -= taken;
                at += taken;
                continue;
            }
            self.prefix[self.seen] = data[at];
            self.seen += 1;
            at += 1;
            if self.seen == PREFIX {
                self.seen = 0;
                let [_, a, b, c, d] = self.prefix;
                let declared = u32::from_be_bytes([a, b, c, d]);
                let length = usize::try_from(declared).unwrap_or(usize::MAX);
                if length > self.limits.max_bytes {
                    return Err(ApiError::InvalidRequest {
                        message: format!(
                            "Invalid request: the message declares {declared} bytes, more than the limit of {} bytes",
                            self.limits.max_bytes
                        ),
                        status: StatusCode::PAYLOAD_TOO_LARGE,
                    });
                }
                self.remaining = length;
            }
        }
        Ok(())
    }

    /// Whether the body stopped inside a message (its prefix or its bytes).
    fn inside_a_message(&self) -> bool {
        self.seen > 0 || self.remaining > 0
    }

    fn refuse(&mut self, error: &ApiError) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.refused = true;
        Poll::Ready(Some(Err(Box::new(status(error, "-", None)))))
    }
}

impl HttpBody for FramedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.refused {
            return Poll::Ready(None);
        }
        match ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref()
                    && let Err(error) = self.scan(data)
                {
                    return self.refuse(&error);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(error)) if body_deadline::passed(&error) => {
                let error = ApiError::InvalidRequest {
                    message: format!(
                        "Invalid request: the body did not arrive within {} seconds",
                        self.limits.read_timeout.as_secs()
                    ),
                    status: StatusCode::REQUEST_TIMEOUT,
                };
                self.refuse(&error)
            }
            Some(Err(error)) => Poll::Ready(Some(Err(error.into()))),
            None if self.inside_a_message() => {
                let error = ApiError::InvalidRequest {
                    message: "Invalid request: the body ended inside a message".into(),
                    status: StatusCode::BAD_REQUEST,
                };
                self.refuse(&error)
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.refused || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn framed(limit: usize) -> FramedBody {
        FramedBody::new(
            Body::empty(),
            BodyLimits {
                max_bytes: limit,
                read_timeout: Duration::from_secs(1),
            },
        )
    }

    #[test]
    fn prefixes_are_followed_across_chunks_and_checked_against_the_limit() {
        let mut body = framed(10);
        // A message of 3 bytes, then the first two bytes of the next prefix.
        body.scan(&[0, 0, 0, 0, 3, 1, 2, 3, 0, 0]).unwrap();
        assert!(body.inside_a_message());
        body.scan(&[0, 0, 10]).unwrap();
        body.scan(&[0; 10]).unwrap();
        assert!(!body.inside_a_message());
        assert!(
            body.scan(&[0, 0, 0, 0, 11]).is_err(),
            "one byte past the limit"
        );
        let mut huge = framed(10);
        assert!(huge.scan(&[0, 0xff, 0xff, 0xff, 0xff]).is_err());
    }
}
