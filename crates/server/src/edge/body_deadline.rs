//! A deadline for a whole request body: a client that trickles its body a byte at a time is
//! cut off at the same moment as one that sends nothing (a timeout per chunk would restart on
//! every byte).

use std::error::Error;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use hyper::body::{Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// A request body that must arrive whole before a deadline, set when the request is let in:
/// a client that trickles its body a byte at a time is cut off all the same. The timer is
/// armed only if the body is not already there.
pub struct DeadlineBody {
    inner: Body,
    deadline: Instant,
    timer: Option<Pin<Box<Sleep>>>,
    timeout: Duration,
}

impl DeadlineBody {
    /// `inner`, due whole within `timeout` from now.
    pub fn new(inner: Body, timeout: Duration) -> Self {
        DeadlineBody {
            inner,
            deadline: Instant::now() + timeout,
            timer: None,
            timeout,
        }
    }
}

/// The error of a body that missed its deadline.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {} s", .0.as_secs())]
struct BodyDeadlinePassed(Duration);

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let missed = |timeout| Poll::Ready(Some(Err(BodyDeadlinePassed(timeout).into())));
        if Instant::now() >= self.deadline {
            return missed(self.timeout);
        }
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        let deadline = self.deadline;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => missed(self.timeout),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Whether `error`, or an error it wraps, is a missed body deadline.
pub fn passed(error: &(dyn Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.is::<BodyDeadlinePassed>() {
            return true;
        }
        cause = error.source();
    }
    false
}
