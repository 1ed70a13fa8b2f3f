//! `catholic_qa` with `[llm] http2` on: answers in flight at once share one HTTP/2 connection
//! to a backend that speaks HTTP/2 only (cleartext, no negotiation), and each still arrives
//! whole and in order.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use chrono::Utc;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use skills::qa::{CatholicQa, LlmSettings};
use skills::{Skill, SkillError, SkillEvent, SkillOutput, SkillRequest};
use tokio::net::TcpListener;
use tokio::sync::{Barrier, mpsc};

use crate::llm_backend::answer_stream;

/// Answers asked at once: each is held until all of them are in flight.
const AT_ONCE: usize = 8;

/// A chat-completions server that speaks HTTP/2 only and counts its connections.
struct Http2Backend {
    address: SocketAddr,
    connections: Arc<AtomicUsize>,
}

impl Http2Backend {
    /// Starts the server; every request waits at `gate` before its streamed answer is written.
    async fn start(gate: Arc<Barrier>) -> Http2Backend {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&connections);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let gate = Arc::clone(&gate);
                let answer = service_fn(move |request: Request<hyper::body::Incoming>| {
                    let gate = Arc::clone(&gate);
                    async move {
                        let body = request.into_body().collect().await.unwrap().to_bytes();
                        let asked: serde_json::Value = serde_json::from_slice(&body).unwrap();
                        assert_eq!(asked["stream"], true);
                        gate.wait().await;
                        let events = answer_stream(&["Grace is a gift", " of God [1]."]);
                        Ok::<_, Infallible>(
                            Response::builder()
                                .header("content-type", "text/event-stream")
                                .body(Full::new(Bytes::from(events)))
                                .unwrap(),
                        )
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(socket), answer),
                );
            }
        });
        Http2Backend {
            address,
            connections,
        }
    }
}

/// Runs one streamed answer, reading every event.
async fn answer(qa: &CatholicQa) -> (Result<SkillOutput, SkillError>, Vec<SkillEvent>) {
    let (events, mut reader) = mpsc::channel(8);
    let read = async move {
        let mut received = Vec::new();
        while let Some(event) = reader.recv().await {
            received.push(event);
        }
        received
    };
    let request = SkillRequest::from_text("What is grace?", Utc::now());
    tokio::join!(qa.run_streaming(request, events), read)
}

#[tokio::test]
async fn answers_in_flight_share_one_http2_connection() {
    let backend = Http2Backend::start(Arc::new(Barrier::new(AT_ONCE))).await;
    let data = tempfile::tempdir().unwrap();
    crate::starter::install(data.path());
    let corpus = Arc::new(corpus::Corpus::open(data.path()).unwrap());
    let settings = LlmSettings {
        base_url: Some(format!("http://{}/v1", backend.address)),
        model: "configured-model".into(),
        timeout_secs: 10,
        max_retries: 0,
        http2: true,
        ..LlmSettings::default()
    };
    let qa = Arc::new(CatholicQa::new(corpus, &settings).unwrap());
    let calls: Vec<_> = (0..AT_ONCE)
        .map(|_| {
            let qa = Arc::clone(&qa);
            tokio::spawn(async move { answer(&qa).await })
        })
        .collect();
    for call in calls {
        let (outcome, events) = call.await.unwrap();
        let output = outcome.expect("a completed answer");
        assert_eq!(
            output.data["answer"], "Grace is a gift of God [1].",
            "{events:?}"
        );
        assert!(!events.is_empty(), "the answer was not streamed");
    }
    assert_eq!(
        backend.connections.load(Ordering::SeqCst),
        1,
        "{AT_ONCE} answers held at once must share one connection"
    );
}
