//! Per-core serving threads: one OS thread per core, each running a single-threaded tokio
//! runtime, each given connections in turn. A connection's socket is registered with the
//! reactor of the thread that serves it, so its readiness, its request and its answer stay on
//! that thread: no wake-up crosses to another core through a futex, as happens when a
//! work-stealing runtime's idle worker is woken for a request another worker's reactor saw.
//!
//! The acceptor hands over whole connections (one cross-thread wake-up per connection, not per
//! request), in turn rather than by the kernel's `SO_REUSEPORT` hash: a handful of long-lived
//! keep-alive connections hashed onto two listeners often land unevenly, and one thread would
//! then serve most of the load while the other idles (BENCHMARKS.md, "Serving threads").
//! Background work (the task runtime's dispatcher and reaper, the push worker, JWKS refresh)
//! stays on the runtime that started the server; each thread that talks to a single Redis has
//! a connection of its own, driven on that thread (`redis_conn`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{mpsc, oneshot};

/// Work handed to a serving thread: called on that thread, inside its runtime (so sockets it
/// registers belong to that thread's reactor); the future it returns runs there as a task.
type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// Serving threads started by [`ServingThreads::start`]; [`ServingThreads::stop`] ends them.
pub struct ServingThreads {
    /// One queue per thread. Unbounded: what is queued is bounded by the connection cap, since
    /// the acceptor holds a connection slot before it hands a connection over.
    queues: Vec<mpsc::UnboundedSender<Job>>,
    /// The thread the next job goes to (modulo the count).
    next: AtomicUsize,
    /// Resolved by each thread once its runtime has shut down.
    finished: Vec<oneshot::Receiver<()>>,
}

impl ServingThreads {
    /// Starts `count` threads (at least one), named `a2a-serve-N`.
    pub fn start(count: usize) -> std::io::Result<Self> {
        let count = count.max(1);
        let mut queues = Vec::with_capacity(count);
        let mut finished = Vec::with_capacity(count);
        for number in 0..count {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (queue, mut jobs) = mpsc::unbounded_channel::<Job>();
            let (done, ended) = oneshot::channel();
            std::thread::Builder::new()
                .name(format!("a2a-serve-{number}"))
                .spawn(move || {
                    runtime.block_on(async move {
                        while let Some(job) = jobs.recv().await {
                            tokio::spawn(job());
                        }
                    });
                    // What still runs here (connections past the grace period, tasks started
                    // by their requests) ends with the thread, as it would with the process.
                    runtime.shutdown_background();
                    let _ = done.send(());
                })?;
            queues.push(queue);
            finished.push(ended);
        }
        Ok(ServingThreads {
            queues,
            next: AtomicUsize::new(0),
            finished,
        })
    }

    /// Runs `job` on the next thread in turn: `job` is called there, and the future it returns
    /// is spawned on that thread's runtime.
    pub fn run<F>(&self, job: impl FnOnce() -> F + Send + 'static)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let at = self.next.fetch_add(1, Ordering::Relaxed) % self.queues.len();
        let job: Job = Box::new(move || Box::pin(job()));
        if self.queues[at].send(job).is_err() {
            tracing::warn!(
                thread = at,
                "a serving thread has ended: connection dropped"
            );
        }
    }

    /// Closes the queues and waits until every thread has shut its runtime down.
    pub async fn stop(self) {
        drop(self.queues);
        for ended in self.finished {
            let _ = ended.await;
        }
    }
}
