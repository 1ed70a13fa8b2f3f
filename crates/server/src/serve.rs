//! The accept loop: hyper with limits a server facing the internet needs and `axum::serve`
//! does not expose — a cap on open connections, a deadline on every connection that is not
//! serving a request (slow-loris, silent sockets, HTTP/2 prefaces that never ask anything), a
//! bound on header size — and a graceful shutdown that answers every request already sent.
//!
//! At shutdown the connections the kernel has already accepted (the listen backlog) are taken
//! before the listener closes, because closing it resets them and a load balancer cannot resend
//! a POST it has already sent; and a connection whose request is not read yet gets that request
//! answered (hyper's graceful shutdown alone would drop it unanswered).
//!
//! Every connection ends with a lingering close ([`crate::linger`]): an answer sent with the
//! body unread (413 from `Content-Length`) reaches a client that is still writing that body.
//!
//! Connections are served on the runtime that accepts them ([`Threads::Shared`], tokio's
//! work-stealing runtime) or each on one of the per-core serving threads
//! ([`Threads::PerCore`], [`crate::serving_threads`]); the accept loop, the connection cap
//! and the drain at shutdown are the same in both.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;
use tower::ServiceExt;

use crate::linger::LingeringClose;
use crate::serving_threads::ServingThreads;

/// Connections taken from the listen backlog at shutdown at most (the kernel bounds the backlog
/// too; this bounds the drain under a flood of new connections).
const MAX_BACKLOG_DRAINED: usize = 4096;
/// Put in a response's extensions to close the connection instead of sending it (the
/// conformance kit's `disconnect`: the call ran, its answer is lost).
#[derive(Debug, Clone, Copy)]
pub struct DropConnection;

/// The error that closes a connection carrying a [`DropConnection`] response.
#[derive(Debug)]
struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection closed before the answer (simulated: disconnect)")
    }
}

impl std::error::Error for Dropped {}

/// Connection-level limits.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Open connections at most; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// A connection with no request in progress is closed once this time passes without a
    /// complete request head: before its first request (whatever it sent, HTTP/1 or HTTP/2),
    /// and between requests (keep-alive idle).
    pub header_read_timeout: Duration,
    /// Largest request head (line and headers) accepted; larger gets 431.
    pub max_header_bytes: usize,
    /// How long shutdown waits for requests in flight.
    pub shutdown_grace: Duration,
}

/// Where connections are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// On the runtime that runs [`serve`] (the multi-threaded, work-stealing runtime of the
    /// binary): a request may be picked up by any worker.
    Shared,
    /// On this many threads of their own, one single-threaded runtime each, connections handed
    /// to them in turn: a connection's requests stay on one thread.
    PerCore(usize),
}

/// What one connection is doing: requests in progress, and when it last started or finished
/// one (milliseconds since the connection opened). Shared by the connection's service, which
/// records requests, and the task that closes the connection once it has been idle too long.
struct Activity {
    opened: Instant,
    in_progress: AtomicUsize,
    last_change_ms: AtomicU64,
    /// Stores a permit when a request starts: a wait after any request completes at once.
    began: Notify,
}

impl Activity {
    fn new() -> Self {
        Activity {
            opened: Instant::now(),
            in_progress: AtomicUsize::new(0),
            last_change_ms: AtomicU64::new(0),
            began: Notify::new(),
        }
    }

    fn touch(&self) {
        let elapsed = self.opened.elapsed().as_millis();
        self.last_change_ms.store(
            u64::try_from(elapsed).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// A request head arrived; the returned token ends the request when dropped: with the
    /// response body once it ends, or with the response future if the peer went away first.
    fn begin(self: &Arc<Self>) -> InProgress {
        self.in_progress.fetch_add(1, Ordering::Relaxed);
        self.touch();
        self.began.notify_one();
        InProgress(Arc::clone(self))
    }

    /// When the connection's idle deadline falls, or `None` while a request is in progress.
    fn idle_deadline(&self, timeout: Duration) -> Option<Instant> {
        if self.in_progress.load(Ordering::Relaxed) > 0 {
            return None;
        }
        let last = Duration::from_millis(self.last_change_ms.load(Ordering::Relaxed));
        Some(self.opened + last + timeout)
    }
}

/// A request in progress on its connection; dropping it ends the request.
struct InProgress(Arc<Activity>);

impl Drop for InProgress {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_progress.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A response body that keeps its request in progress until the body ends (its last frame or
/// an error is read) or is dropped (the peer went away): an event stream still sending is not
/// an idle connection, however long it lasts.
struct BodyInProgress {
    body: Body,
    in_progress: Option<InProgress>,
}

impl hyper::body::Body for BodyInProgress {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            this.in_progress = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then stops accepting, serves the
/// connections already waiting in the backlog, and waits (up to the grace period) for the
/// connections' requests in flight.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    threads: Threads,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let max_connections = limits.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let slots = Arc::new(Semaphore::new(max_connections));
    let (stop, stopping) = watch::channel(false);
    let builder = Arc::new(connection_builder(&limits));
    let threads = match threads {
        Threads::Shared => None,
        Threads::PerCore(count) => Some(ServingThreads::start(count)?),
    };
    // Each connection holds its slot until it ends.
    let spawn_connection = |stream: TcpStream, peer, permit: OwnedSemaphorePermit| {
        let builder = Arc::clone(&builder);
        let router = router.clone();
        let stopping = stopping.clone();
        let idle_timeout = limits.header_read_timeout;
        let Some(threads) = &threads else {
            let connection =
                serve_connection(&builder, stream, peer, router, idle_timeout, stopping);
            tokio::spawn(async move {
                connection.await;
                drop(permit);
            });
            return;
        };
        // The socket leaves this runtime's reactor and joins the serving thread's.
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(error) => {
                tracing::warn!(%error, %peer, "a connection could not be handed to a serving thread");
                return;
            }
        };
        threads.run(move || async move {
            match TcpStream::from_std(stream) {
                Ok(stream) => {
                    serve_connection(&builder, stream, peer, router, idle_timeout, stopping).await
                }
                Err(error) => {
                    tracing::warn!(%error, %peer, "a serving thread could not take a connection")
                }
            }
            drop(permit);
        });
    };
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        spawn_connection(stream, peer, permit);
    }
    let _ = stop.send(true);
    let mut waiting = 0;
    for (stream, peer) in drain_backlog(listener) {
        // Each drained connection holds a slot of its own, so the wait below covers it.
        if max_connections + waiting >= Semaphore::MAX_PERMITS {
            break;
        }
        slots.add_permits(1);
        let Ok(permit) = Arc::clone(&slots).try_acquire_owned() else {
            continue;
        };
        waiting += 1;
        spawn_connection(stream, peer, permit);
    }
    if waiting > 0 {
        tracing::info!(
            connections = waiting,
            "shutdown: serving the connections waiting in the backlog"
        );
    }
    let all = u32::try_from(max_connections + waiting).unwrap_or(u32::MAX);
    if tokio::time::timeout(limits.shutdown_grace, slots.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!("shutdown grace period over: closing the connections still open");
    }
    if let Some(threads) = threads {
        threads.stop().await;
    }
    Ok(())
}

/// Takes every connection waiting in the listen backlog, then closes the listener. The accepts
/// are direct non-blocking calls, so the backlog is seen as the kernel holds it now.
fn drain_backlog(listener: TcpListener) -> Vec<(TcpStream, SocketAddr)> {
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            tracing::warn!(%error, "shutdown: the listen backlog could not be drained");
            return Vec::new();
        }
    };
    let mut drained = Vec::new();
    while drained.len() < MAX_BACKLOG_DRAINED {
        match listener.accept() {
            Ok((stream, peer)) => {
                match stream
                    .set_nonblocking(true)
                    .and_then(|()| TcpStream::from_std(stream))
                {
                    Ok(stream) => drained.push((stream, peer)),
                    Err(error) => {
                        tracing::warn!(%error, %peer, "shutdown: a waiting connection could not be served")
                    }
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::ConnectionAborted
                ) => {}
            Err(error) => {
                tracing::warn!(%error, "shutdown: accept failed while draining the backlog");
                break;
            }
        }
    }
    drained
}

/// HTTP/1 and HTTP/2 (by prior knowledge, `h2c`) on one port. HTTP/2 pings a peer whose
/// requests are in progress, and drops it when the ping goes unanswered.
fn connection_builder(limits: &ConnectionLimits) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.header_read_timeout)
        .keep_alive_timeout(limits.header_read_timeout)
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX));
    builder
}

/// Serves one connection until it ends, closing it gracefully when the server stops or when
/// it has had no request in progress (a request lasts until its response body ends) for
/// `idle_timeout`, and at once if it has not closed
/// within another `idle_timeout` after that.
fn serve_connection(
    builder: &auto::Builder<TokioExecutor>,
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    idle_timeout: Duration,
    mut stopping: watch::Receiver<bool>,
) -> impl Future<Output = ()> + Send + 'static {
    let activity = Arc::new(Activity::new());
    let watched = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        let in_progress = watched.begin();
        request
            .extensions_mut()
            .insert(ConnectInfo::<SocketAddr>(peer));
        let response = router.clone().oneshot(request.map(Body::new));
        async move {
            match response.await {
                Ok(response) if response.extensions().get::<DropConnection>().is_some() => {
                    Err(Dropped)
                }
                Ok(response) => Ok(response.map(|body| BodyInProgress {
                    body,
                    in_progress: Some(in_progress),
                })),
                Err(infallible) => match infallible {},
            }
        }
    });
    let connection = builder
        .serve_connection_with_upgrades(TokioIo::new(LingeringClose::new(stream)), service)
        .into_owned();
    async move {
        tokio::pin!(connection);
        let check = tokio::time::sleep(idle_timeout);
        tokio::pin!(check);
        let mut closing = false;
        let mut stop_after_first_request = false;
        loop {
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(%error, %peer, "connection ended with an error");
                    }
                    return;
                }
                _ = stopping.changed(), if !closing && !stop_after_first_request => {
                    // A client that connected just before the stop may have sent a request not
                    // read yet: close after a request has started (at once if one already has),
                    // or at the idle deadline if none comes.
                    stop_after_first_request = true;
                }
                () = activity.began.notified(), if stop_after_first_request && !closing => {
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
                () = &mut check => match activity.idle_deadline(idle_timeout) {
                    Some(deadline) if deadline <= Instant::now() => {
                        if closing {
                            tracing::debug!(%peer, "idle connection did not close: dropped");
                            return;
                        }
                        closing = true;
                        connection.as_mut().graceful_shutdown();
                        check.as_mut().reset(Instant::now() + idle_timeout);
                    }
                    Some(deadline) => check.as_mut().reset(deadline),
                    None => check.as_mut().reset(Instant::now() + idle_timeout),
                },
            }
        }
    }
}
