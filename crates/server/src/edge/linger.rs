//! A lingering close: when the server ends a connection whose client may still be sending (a
//! body refused unread, e.g. 413 from its `Content-Length`), closing the socket with bytes
//! unread makes the kernel send a reset, and a client still writing its body meets that reset
//! before it reads the answer. So the connection's close first sends FIN (the answer is
//! complete), then reads and discards what the client still sends, within a bound of time and
//! bytes, and only then closes.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// How long a closing connection keeps discarding what its client still sends: long enough for
/// a client on a slow link to see the answer and stop writing, short enough that a client which
/// never stops cannot hold the connection (and its slot under the connection cap) for long.
pub const LINGER_TIMEOUT: Duration = Duration::from_secs(2);

/// How many bytes a closing connection discards at most: a client on a fast link could send
/// gigabytes within [`LINGER_TIMEOUT`]; past this the socket closes (with a reset) at once.
pub const LINGER_MAX_BYTES: usize = 16 * 1024 * 1024;

/// Bytes read per discarding read.
const DISCARD_CHUNK: usize = 8 * 1024;

enum Closing {
    /// Serving: nothing closed yet.
    Open,
    /// FIN sent; discarding what arrives until the client closes or a bound is reached.
    Draining { until: Pin<Box<Sleep>>, left: usize },
    /// Done: the socket may be dropped.
    Closed,
}

/// A connection's socket whose shutdown is a lingering close.
pub struct LingeringClose<S> {
    inner: S,
    closing: Closing,
}

impl<S> LingeringClose<S> {
    /// `inner`, closed with a linger.
    pub fn new(inner: S) -> Self {
        LingeringClose {
            inner,
            closing: Closing::Open,
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> LingeringClose<S> {
    /// Reads and discards until the client closes, errs, or the bytes or the time run out.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Closing::Draining { until, left } = &mut self.closing else {
            return Poll::Ready(());
        };
        let mut scratch = [0u8; DISCARD_CHUNK];
        loop {
            let mut buffer = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut buffer) {
                Poll::Ready(Ok(())) if !buffer.filled().is_empty() => {
                    *left = left.saturating_sub(buffer.filled().len());
                    if *left == 0 {
                        return Poll::Ready(());
                    }
                }
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => {
                    return match until.as_mut().poll(cx) {
                        Poll::Ready(()) => Poll::Ready(()),
                        Poll::Pending => Poll::Pending,
                    };
                }
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for LingeringClose<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for LingeringClose<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Closing::Open = this.closing {
            std::task::ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            this.closing = Closing::Draining {
                until: Box::pin(tokio::time::sleep(LINGER_TIMEOUT)),
                left: LINGER_MAX_BYTES,
            };
        }
        std::task::ready!(this.poll_drain(cx));
        this.closing = Closing::Closed;
        Poll::Ready(Ok(()))
    }
}
