//! An OpenAI-compatible chat-completions server on loopback, written on a bare TCP socket so
//! that a test controls every byte and pause of the reply and learns when the client closed
//! the connection.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The name the server gives its model in every reply.
pub const SERVED_MODEL: &str = "served-model";

/// How the server answers one request.
#[derive(Clone)]
pub enum Reply {
    /// `200 text/event-stream`: these bytes, each piece written and flushed on its own, with
    /// `pause` before each but the first; then the connection is closed.
    Stream {
        pieces: Vec<Vec<u8>>,
        pause: Duration,
    },
    /// `200 application/json`: a chat completion whose content is this text.
    Completion(String),
    /// The same, after a pause in which nothing at all is written.
    Late { after: Duration, content: String },
    /// Any status, with a `Retry-After` of so many seconds when given, and this body as it is.
    Raw {
        status: StatusCode,
        retry_after_secs: Option<u64>,
        body: String,
    },
}

/// What the server saw of one connection.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// The request's target, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The request's `Authorization` header, if it had one.
    pub authorization: Option<String>,
    /// The request's JSON body.
    pub body: Value,
    /// When every piece of the reply had been written.
    pub replied_at: Option<Instant>,
    /// When the client closed its side of the connection.
    pub closed_at: Option<Instant>,
}

/// A running server: its address and the exchanges so far, in order.
pub struct Backend {
    pub address: SocketAddr,
    exchanges: Arc<Mutex<Vec<Exchange>>>,
}

impl Backend {
    /// Starts a server that answers each request with `reply(body)`.
    pub async fn start(reply: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Backend {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let exchanges = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&exchanges);
        let reply = Arc::new(reply);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let log = Arc::clone(&log);
                let reply = Arc::clone(&reply);
                tokio::spawn(async move { serve(socket, log, reply.as_ref()).await });
            }
        });
        Backend { address, exchanges }
    }

    /// Starts a server that answers with `replies` in turn, repeating the last once the others
    /// are used.
    pub async fn scripted(replies: Vec<Reply>) -> Backend {
        let replies = Mutex::new(VecDeque::from(replies));
        Backend::start(move |_| {
            let mut replies = replies.lock().unwrap();
            if replies.len() > 1 {
                replies.pop_front().unwrap()
            } else {
                replies.front().cloned().unwrap()
            }
        })
        .await
    }

    /// The `[llm] base_url` of this server.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// The exchanges so far.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.exchanges.lock().unwrap().clone()
    }

    /// Waits (up to `limit`) until the client has closed the first connection.
    pub async fn closed_at(&self, limit: Duration) -> Option<Instant> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(closed) = self.exchanges().first().and_then(|e| e.closed_at) {
                return Some(closed);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        None
    }
}

async fn serve(
    mut socket: TcpStream,
    log: Arc<Mutex<Vec<Exchange>>>,
    reply: &(dyn Fn(&Value) -> Reply + Send + Sync),
) {
    socket.set_nodelay(true).unwrap();
    let Some(exchange) = read_request(&mut socket).await else {
        return;
    };
    let body = exchange.body.clone();
    let index = {
        let mut log = log.lock().unwrap();
        log.push(exchange);
        log.len() - 1
    };
    let (mut reader, mut writer) = socket.into_split();
    let watcher_log = Arc::clone(&log);
    tokio::spawn(async move {
        let mut byte = [0u8; 1];
        // The client sends nothing more: a read ends only when it closes the connection.
        let _ = reader.read(&mut byte).await;
        watcher_log.lock().unwrap()[index].closed_at = Some(Instant::now());
    });
    let (head, pieces, pause) = match reply(&body) {
        Reply::Stream { pieces, pause } => (
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                .to_string(),
            pieces,
            pause,
        ),
        Reply::Completion(content) => completion_reply(&content),
        Reply::Late { after, content } => {
            tokio::time::sleep(after).await;
            completion_reply(&content)
        }
        Reply::Raw {
            status,
            retry_after_secs,
            body,
        } => {
            let retry_after = retry_after_secs
                .map(|seconds| format!("retry-after: {seconds}\r\n"))
                .unwrap_or_default();
            (
                format!(
                    "HTTP/1.1 {status}\r\n{retry_after}content-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                ),
                vec![body.into_bytes()],
                Duration::ZERO,
            )
        }
    };
    if writer.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for (index, piece) in pieces.iter().enumerate() {
        if index > 0 && !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        if writer.write_all(piece).await.is_err() || writer.flush().await.is_err() {
            return;
        }
    }
    log.lock().unwrap()[index].replied_at = Some(Instant::now());
    let _ = writer.shutdown().await;
}

/// The head and pieces of a `200 application/json` chat completion whose content is `content`.
fn completion_reply(content: &str) -> (String, Vec<Vec<u8>>, Duration) {
    let completion = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": SERVED_MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    })
    .to_string();
    (
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            completion.len()
        ),
        vec![completion.into_bytes()],
        Duration::ZERO,
    )
}

/// The target, `Authorization` header and JSON body of one HTTP/1.1 request with a
/// `content-length`.
async fn read_request(socket: &mut TcpStream) -> Option<Exchange> {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let header_end = loop {
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        received.extend_from_slice(&buffer[..read]);
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
    };
    let head = String::from_utf8_lossy(&received[..header_end]).into_owned();
    let path = head.split(' ').nth(1)?.to_string();
    let header = |wanted: &str| {
        head.lines().skip(1).find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case(wanted)
                .then(|| value.trim().to_string())
        })
    };
    let authorization = header("authorization");
    let length: usize = header("content-length")?.parse().ok()?;
    while received.len() < header_end + length {
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        received.extend_from_slice(&buffer[..read]);
    }
    let body = serde_json::from_slice(&received[header_end..header_end + length]).ok()?;
    Some(Exchange {
        path,
        authorization,
        body,
        ..Exchange::default()
    })
}

/// One `data:` event carrying the next piece of the answer.
pub fn piece_event(content: &str) -> String {
    let chunk = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": SERVED_MODEL,
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}],
    });
    format!("data: {chunk}\n\n")
}

/// The events that end an answer properly: a finish reason, then `[DONE]`.
pub fn end_events() -> String {
    let finish = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": SERVED_MODEL,
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    });
    format!("data: {finish}\n\ndata: [DONE]\n\n")
}

/// The whole event stream of an answer written in these pieces.
pub fn answer_stream(pieces: &[&str]) -> String {
    let mut stream: String = pieces.iter().map(|piece| piece_event(piece)).collect();
    stream.push_str(&end_events());
    stream
}

/// A reply written as one piece per event, with `pause` between them.
pub fn streamed(events: &str, pause: Duration) -> Reply {
    let pieces = events
        .split_inclusive("\n\n")
        .map(|event| event.as_bytes().to_vec())
        .collect();
    Reply::Stream { pieces, pause }
}

/// Whether a request asked for a streamed answer.
pub fn wants_stream(body: &Value) -> bool {
    body["stream"] == Value::Bool(true)
}
