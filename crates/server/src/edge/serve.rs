//! The accept loop: hyper with limits a server facing the internet needs and `axum::serve`
//! does not expose — a cap on open connections, a deadline on every connection that is not
//! serving a request (slow-loris, silent sockets, HTTP/2 prefaces that never ask anything), a
//! bound on header size, a deadline on every answer whose client stops taking its bytes — and a
//! graceful shutdown that answers every request already sent.
//!
//! At shutdown the connections the kernel has already accepted (the listen backlog) are taken
//! before the listener closes, because closing it resets them and a load balancer cannot resend
//! a POST it has already sent; and a connection whose request is not read yet gets that request
//! answered (hyper's graceful shutdown alone would drop it unanswered).
//!
//! Every connection ends with a lingering close ([`crate::edge::linger`]): an answer sent with the
//! body unread (413 from `Content-Length`) reaches a client that is still writing that body.
//!
//! Connections are served on the runtime that accepts them ([`Threads::Shared`], tokio's
//! work-stealing runtime) or each on one of the per-core serving threads
//! ([`Threads::PerCore`], [`crate::edge::serving_threads`]); the accept loop, the connection cap
//! and the drain at shutdown are the same in both.

use std::future::Future;
use std::io::IoSlice;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;
use tower::ServiceExt;

use crate::edge::linger::LingeringClose;
use crate::edge::serving_threads::ServingThreads;

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
    /// A connection is dropped, with every answer on it, once an answer in progress has waited
    /// this long for its client to take more of it (hyper has its head or a frame of its body
    /// and asks for no more: an HTTP/2 window left shut), or its socket has refused every write
    /// this long (the client reads nothing, even after the body's last frame): a client that
    /// stops reading holds no memory or stream place for longer.
    pub write_timeout: Duration,
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
/// one (milliseconds since the connection opened); the answers waiting for their client to take
/// what they handed out, each with when it started waiting. Shared by the connection's service,
/// which records requests, and the task that closes the connection once it has been idle, or a
/// client has taken nothing of one answer, for too long.
struct Activity {
    opened: Instant,
    in_progress: AtomicUsize,
    last_change_ms: AtomicU64,
    /// The answers waiting for their client: an answer's number and when it started waiting.
    /// Each answer's wait is its own, so a new request on the same HTTP/2 connection never
    /// renews a stalled answer's deadline.
    waiting: Mutex<Vec<(u64, u64)>>,
    next_answer: AtomicU64,
    /// Whether the connection speaks HTTP/2: there, the socket taking bytes says nothing of
    /// which answer they belong to.
    http2: AtomicBool,
    /// Whether the socket's last write was refused for want of room (the client reads nothing),
    /// and since when.
    socket_full: AtomicBool,
    socket_full_since_ms: AtomicU64,
    /// Stores a permit when a request starts: a wait after any request completes at once.
    began: Notify,
}

impl Activity {
    fn new() -> Self {
        Activity {
            opened: Instant::now(),
            in_progress: AtomicUsize::new(0),
            last_change_ms: AtomicU64::new(0),
            waiting: Mutex::new(Vec::new()),
            next_answer: AtomicU64::new(0),
            http2: AtomicBool::new(false),
            socket_full: AtomicBool::new(false),
            socket_full_since_ms: AtomicU64::new(0),
            began: Notify::new(),
        }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn touch(&self) {
        self.last_change_ms
            .store(self.elapsed_ms(), Ordering::Relaxed);
    }

    fn waiting(&self) -> MutexGuard<'_, Vec<(u64, u64)>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answer `answer` handed its client something (its head, or a frame of its body) and
    /// waits for it to be taken.
    fn await_client(&self, answer: u64) {
        let now = self.elapsed_ms();
        self.waiting().push((answer, now));
    }

    /// The client took what answer `answer` handed it (the answer is asked for more), or the
    /// answer ended.
    fn client_took(&self, answer: u64) {
        let mut waiting = self.waiting();
        if let Some(at) = waiting.iter().position(|&(number, _)| number == answer) {
            waiting.swap_remove(at);
        }
    }

    /// A write to the socket went through (`true`) or found it full (`false`). Only a change
    /// of state is recorded, so a full socket's deadline runs from the first refusal, and a
    /// socket taking bytes costs one load a write. On HTTP/1 the bytes a full socket takes
    /// again are the one answer's in progress: its wait starts again.
    fn socket_wrote(&self, wrote: bool) {
        if self.socket_full.load(Ordering::Relaxed) != wrote {
            return;
        }
        let now = self.elapsed_ms();
        self.socket_full.store(!wrote, Ordering::Relaxed);
        if !wrote {
            self.socket_full_since_ms.store(now, Ordering::Relaxed);
        } else if !self.http2.load(Ordering::Relaxed) {
            for (_, since) in self.waiting().iter_mut() {
                *since = now;
            }
        }
    }

    /// When the connection's write deadline falls: the write timeout after the longest wait of
    /// an answer for its client, or after the socket became full (an answer's last frame may
    /// still sit in the connection's buffer after its body ended); `None` while neither waits.
    fn write_deadline(&self, timeout: Duration) -> Option<Instant> {
        let oldest_answer = self.waiting().iter().map(|&(_, since)| since).min();
        let socket = self
            .socket_full
            .load(Ordering::Relaxed)
            .then(|| self.socket_full_since_ms.load(Ordering::Relaxed));
        let since = match (oldest_answer, socket) {
            (Some(answer), Some(socket)) => answer.min(socket),
            (answer, socket) => answer.or(socket)?,
        };
        Some(self.opened + Duration::from_millis(since) + timeout)
    }

    /// A request head arrived; the returned token ends the request when dropped: with the
    /// response body once it ends, or with the response future if the peer went away first.
    fn begin(self: &Arc<Self>, http2: bool) -> InProgress {
        self.in_progress.fetch_add(1, Ordering::Relaxed);
        if http2 {
            self.http2.store(true, Ordering::Relaxed);
        }
        self.touch();
        self.began.notify_one();
        InProgress {
            activity: Arc::clone(self),
            answer: self.next_answer.fetch_add(1, Ordering::Relaxed),
            awaiting_client: false,
        }
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

/// A request in progress on its connection, and whether its answer waits for the client to
/// take what it handed out; dropping it ends the request.
struct InProgress {
    activity: Arc<Activity>,
    /// The answer's number on its connection.
    answer: u64,
    awaiting_client: bool,
}

impl InProgress {
    /// The answer handed out its head or a frame: it waits for the client.
    fn handed_out(&mut self) {
        if !self.awaiting_client {
            self.awaiting_client = true;
            self.activity.await_client(self.answer);
        }
    }

    /// The answer is asked for more: the client took what it had.
    fn asked_for_more(&mut self) {
        if self.awaiting_client {
            self.awaiting_client = false;
            self.activity.client_took(self.answer);
        }
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.asked_for_more();
        self.activity.touch();
        self.activity.in_progress.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A response body that keeps its request in progress until the body ends (its last frame or
/// an error is read) or is dropped (the peer went away): an event stream still sending is not
/// an idle connection, however long it lasts. From its head until hyper asks for its first
/// frame, and from each frame it yields until hyper asks for the next, it waits for the client
/// (hyper asks for more only once what it holds is written, or, on HTTP/2, once the client's
/// window has room): the connection's write deadline runs. While it waits for its own next
/// frame (an event stream's idle task) the deadline does not run.
struct BodyInProgress {
    body: Body,
    in_progress: Option<InProgress>,
}

impl BodyInProgress {
    fn new(body: Body, in_progress: InProgress) -> Self {
        BodyInProgress {
            body,
            in_progress: Some(in_progress),
        }
    }
}

impl hyper::body::Body for BodyInProgress {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if let Some(in_progress) = &mut this.in_progress {
            in_progress.asked_for_more();
        }
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        match &polled {
            Poll::Ready(None | Some(Err(_))) => this.in_progress = None,
            Poll::Ready(Some(Ok(_))) => {
                if let Some(in_progress) = &mut this.in_progress {
                    in_progress.handed_out();
                }
            }
            Poll::Pending => {}
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

/// A connection's socket, recording in its [`Activity`] whether writes go through or find the
/// socket full, for the write deadline.
struct WatchedWrites<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> WatchedWrites<S> {
    fn record<T>(&self, polled: Poll<std::io::Result<T>>) -> Poll<std::io::Result<T>> {
        match &polled {
            Poll::Ready(Ok(_)) => self.activity.socket_wrote(true),
            Poll::Pending => self.activity.socket_wrote(false),
            Poll::Ready(Err(_)) => {}
        }
        polled
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WatchedWrites<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WatchedWrites<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.record(polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.record(polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
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
        send_parts_at_once(&stream, peer);
        let builder = Arc::clone(&builder);
        let router = router.clone();
        let stopping = stopping.clone();
        let timeouts = Timeouts {
            idle: limits.header_read_timeout,
            write: limits.write_timeout,
        };
        let Some(threads) = &threads else {
            let connection = serve_connection(&builder, stream, peer, router, timeouts, stopping);
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
                    serve_connection(&builder, stream, peer, router, timeouts, stopping).await
                }
                Err(error) => {
                    tracing::warn!(%error, %peer, "a serving thread could not take a connection")
                }
            }
            drop(permit);
        });
    };
    tokio::pin!(shutdown);
    accept_until(&listener, &slots, shutdown, &spawn_connection).await;
    let _ = stop.send(true);
    let waiting = serve_backlog(listener, &slots, max_connections, &spawn_connection);
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

/// Accepts connections, each once a connection slot is free, until `shutdown` resolves.
async fn accept_until(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
    mut shutdown: Pin<&mut impl Future<Output = ()>>,
    spawn_connection: &impl Fn(TcpStream, SocketAddr, OwnedSemaphorePermit),
) {
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = shutdown.as_mut() => break,
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
            () = shutdown.as_mut() => break,
        };
        spawn_connection(stream, peer, permit);
    }
}

/// Serves the connections waiting in the listen backlog at shutdown, each with a slot of its
/// own (so the wait for the slots covers it); how many.
fn serve_backlog(
    listener: TcpListener,
    slots: &Arc<Semaphore>,
    max_connections: usize,
    spawn_connection: &impl Fn(TcpStream, SocketAddr, OwnedSemaphorePermit),
) -> usize {
    let mut waiting = 0;
    for (stream, peer) in drain_backlog(listener) {
        if max_connections + waiting >= Semaphore::MAX_PERMITS {
            break;
        }
        slots.add_permits(1);
        let Ok(permit) = Arc::clone(slots).try_acquire_owned() else {
            continue;
        };
        waiting += 1;
        spawn_connection(stream, peer, permit);
    }
    waiting
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

/// The deadlines of one connection.
#[derive(Debug, Clone, Copy)]
struct Timeouts {
    /// With no request in progress (see [`ConnectionLimits::header_read_timeout`]).
    idle: Duration,
    /// With an answer waiting for its client (see [`ConnectionLimits::write_timeout`]).
    write: Duration,
}

/// What the connection's timer decides when it fires.
enum Check {
    /// An answer's client took nothing for the write timeout: drop the connection.
    Drop,
    /// Idle past its deadline: close it gracefully, or drop it if that was done already.
    Idle,
    /// Nothing due: look again then.
    At(Instant),
}

impl Timeouts {
    /// What is due now. Looking again no later than one write timeout from now catches an
    /// answer that starts waiting meanwhile by its own deadline.
    fn check(&self, activity: &Activity) -> Check {
        let now = Instant::now();
        let write = activity.write_deadline(self.write);
        if write.is_some_and(|deadline| deadline <= now) {
            return Check::Drop;
        }
        let idle = activity.idle_deadline(self.idle);
        if idle.is_some_and(|deadline| deadline <= now) {
            return Check::Idle;
        }
        let next = idle.unwrap_or(now + self.idle);
        Check::At(next.min(write.unwrap_or(now + self.write)))
    }
}

/// An answer is written as its parts are ready (each event of a stream; a gRPC message, then
/// its trailers): each part goes out at once (`TCP_NODELAY`) instead of waiting, under Nagle's
/// algorithm, for the client to acknowledge the one before, which a client that delays its
/// acknowledgements holds back for 40 ms.
fn send_parts_at_once(stream: &TcpStream, peer: SocketAddr) {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, %peer, "TCP_NODELAY could not be set");
    }
}

/// Serves one connection until it ends, closing it gracefully when the server stops or when
/// it has had no request in progress (a request lasts until its response body ends) for the
/// idle timeout, and at once if it has not closed within another idle timeout after that; and
/// dropping it when an answer on it has waited the write timeout for its client.
fn serve_connection(
    builder: &auto::Builder<TokioExecutor>,
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    timeouts: Timeouts,
    mut stopping: watch::Receiver<bool>,
) -> impl Future<Output = ()> + Send + 'static {
    let activity = Arc::new(Activity::new());
    let watched = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        let mut in_progress = watched.begin(request.version() == hyper::Version::HTTP_2);
        request
            .extensions_mut()
            .insert(ConnectInfo::<SocketAddr>(peer));
        let response = router.clone().oneshot(request.map(Body::new));
        async move {
            match response.await {
                Ok(response) if response.extensions().get::<DropConnection>().is_some() => {
                    Err(Dropped)
                }
                Ok(response) => {
                    in_progress.handed_out();
                    Ok(response.map(|body| BodyInProgress::new(body, in_progress)))
                }
                Err(infallible) => match infallible {},
            }
        }
    });
    let socket = WatchedWrites {
        inner: LingeringClose::new(stream),
        activity: Arc::clone(&activity),
    };
    let connection = builder
        .serve_connection_with_upgrades(TokioIo::new(socket), service)
        .into_owned();
    async move {
        tokio::pin!(connection);
        let check = tokio::time::sleep(timeouts.idle.min(timeouts.write));
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
                () = &mut check => match timeouts.check(&activity) {
                    Check::Drop => {
                        tracing::debug!(%peer, "an answer's client took nothing for the write timeout: dropped");
                        return;
                    }
                    Check::Idle => {
                        if closing {
                            tracing::debug!(%peer, "idle connection did not close: dropped");
                            return;
                        }
                        closing = true;
                        connection.as_mut().graceful_shutdown();
                        check.as_mut().reset(Instant::now() + timeouts.idle);
                    }
                    Check::At(next) => check.as_mut().reset(next),
                },
            }
        }
    }
}
