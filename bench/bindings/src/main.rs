//! One HTTP/2 (prior knowledge, cleartext) load client for the three A2A bindings and the JSON
//! floor, so that JSON-RPC, HTTP+JSON and gRPC are measured with the same client, the same
//! connections and the same number of streams in flight: `--connections` connections, each
//! with `--streams` calls in flight, for `--seconds`. Every answer is checked (a completed
//! task; gRPC status OK); the result is one line on stdout:
//! `BENCH_RESULT {"requests":…,"wrong":…,"duration_us":…,"p50_us":…,"p99_us":…,"p999_us":…}`.
//!
//! `bench-bindings --base http://127.0.0.1:PORT --token T --binding grpc --operation send`

mod calls;
mod proto;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use tokio::net::TcpStream;

use calls::{Binding, Operation, Target};

/// The command line.
#[derive(Parser)]
#[command(about = "HTTP/2 load for the A2A bindings")]
struct Args {
    /// `http://host:port` of the server (or of the floor).
    #[arg(long)]
    base: String,
    /// Bearer token of the load user.
    #[arg(long, default_value = "")]
    token: String,
    /// The binding to call.
    #[arg(long, value_enum)]
    binding: Binding,
    /// The operation to repeat.
    #[arg(long, value_enum)]
    operation: Operation,
    /// The task `get` reads.
    #[arg(long, default_value = "")]
    task_id: String,
    /// Connections.
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// Calls in flight on each connection.
    #[arg(long, default_value_t = 8)]
    streams: usize,
    /// Seconds of load.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Prefix of the message ids, unique per run.
    #[arg(long, default_value = "h2")]
    prefix: String,
}

/// Why a run could not be made.
#[derive(Debug, thiserror::Error)]
enum LoadError {
    /// The server could not be reached.
    #[error("cannot connect to {0}: {1}")]
    Connect(String, std::io::Error),
    /// The HTTP/2 handshake failed.
    #[error("HTTP/2 handshake: {0}")]
    Handshake(h2::Error),
}

/// What every caller shares.
struct Shared {
    target: Target,
    prefix: String,
    next_id: AtomicU64,
    wrong: AtomicU64,
    deadline: Instant,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), LoadError> {
    let args = Args::parse();
    let shared = Arc::new(Shared {
        target: Target {
            base: args.base.trim_end_matches('/').to_string(),
            token: args.token,
            binding: args.binding,
            operation: args.operation,
            task_id: args.task_id,
        },
        prefix: args.prefix,
        next_id: AtomicU64::new(0),
        wrong: AtomicU64::new(0),
        deadline: Instant::now() + Duration::from_secs(args.seconds),
    });
    let address = shared.target.base.trim_start_matches("http://").to_string();
    let started = Instant::now();
    let mut callers = Vec::new();
    for _ in 0..args.connections {
        let tcp = TcpStream::connect(&address)
            .await
            .map_err(|e| LoadError::Connect(address.clone(), e))?;
        tcp.set_nodelay(true).ok();
        let (client, connection) = h2::client::handshake(tcp)
            .await
            .map_err(LoadError::Handshake)?;
        tokio::spawn(connection);
        for _ in 0..args.streams {
            callers.push(tokio::spawn(caller(client.clone(), Arc::clone(&shared))));
        }
    }
    let mut latencies = Vec::new();
    for caller in callers {
        latencies.extend(caller.await.unwrap_or_default());
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let at = |share: f64| {
        latencies
            .get(((latencies.len() as f64 * share) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    println!(
        "BENCH_RESULT {}",
        serde_json::json!({
            "requests": latencies.len(),
            "wrong": shared.wrong.load(Ordering::Relaxed),
            "duration_us": elapsed.as_micros() as u64,
            "p50_us": at(0.50),
            "p99_us": at(0.99),
            "p999_us": at(0.999),
        })
    );
    Ok(())
}

/// Calls in turn until the deadline; the latency of each answered call in microseconds. A
/// call that fails on the connection counts as wrong.
async fn caller(mut client: h2::client::SendRequest<Bytes>, shared: Arc<Shared>) -> Vec<u32> {
    let mut latencies = Vec::new();
    while Instant::now() < shared.deadline {
        let number = shared.next_id.fetch_add(1, Ordering::Relaxed);
        let message_id = format!("{}-{number}", shared.prefix);
        let (request, body) = shared.target.request(&message_id);
        let started = Instant::now();
        match call(&mut client, request, body, &shared.target).await {
            Ok(true) => latencies.push(started.elapsed().as_micros() as u32),
            Ok(false) | Err(_) => {
                shared.wrong.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    latencies
}

/// One call: sends it, reads the whole answer and its trailers, and checks it.
async fn call(
    client: &mut h2::client::SendRequest<Bytes>,
    request: http::Request<()>,
    body: Bytes,
    target: &Target,
) -> Result<bool, h2::Error> {
    let ready = client.clone().ready().await?;
    *client = ready;
    let (response, mut send) = client.send_request(request, body.is_empty())?;
    if !body.is_empty() {
        send.send_data(body, true)?;
    }
    let response = response.await?;
    let status = response.status();
    let mut received = response.into_body();
    let mut answer = Vec::new();
    while let Some(chunk) = received.data().await {
        let chunk = chunk?;
        received.flow_control().release_capacity(chunk.len())?;
        answer.extend_from_slice(&chunk);
    }
    let trailers = received.trailers().await?;
    Ok(target.answered(status, &answer, trailers.as_ref()))
}
