//! `catholic_qa` streaming its answer from an OpenAI-compatible server on loopback: the pieces
//! arrive in order and join to exactly the stored text, whatever the backend or the reader does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::Value;
use skills::qa::{CatholicQa, LlmSettings};
use skills::{Skill, SkillError, SkillEvent, SkillOutput, SkillRequest};
use tokio::sync::mpsc;

use crate::llm_backend::{
    Backend, Reply, SERVED_MODEL, answer_stream, end_events, piece_event, streamed, wants_stream,
};

const QUESTION: &str = "What is grace?";
/// An answer in the pieces a model writes it: a marker split across two pieces, a marker of a
/// passage it was not given, whitespace at both ends.
const PIECES: [&str; 6] = [
    "  Grace is",
    " a supernatural gift of God [",
    "1]. It is bestowed on us [9]",
    " for our salvation [1",
    "].",
    "\n",
];

struct Answering {
    qa: CatholicQa,
    _data: tempfile::TempDir,
}

/// `catholic_qa` over the starter corpus, answering with the model at `backend`.
fn qa_with(backend: &Backend) -> Answering {
    let data = tempfile::tempdir().unwrap();
    crate::starter::install(data.path());
    let corpus = Arc::new(corpus::Corpus::open(data.path()).unwrap());
    let settings = LlmSettings {
        base_url: Some(backend.base_url()),
        model: "configured-model".into(),
        timeout_secs: 10,
        max_retries: 0,
        ..LlmSettings::default()
    };
    Answering {
        qa: CatholicQa::new(corpus, &settings).unwrap(),
        _data: data,
    }
}

/// A backend that streams `events` when asked to stream, and answers `PIECES` whole otherwise.
async fn backend(events: String, pause: Duration) -> Backend {
    Backend::start(move |body| {
        if wants_stream(body) {
            streamed(&events, pause)
        } else {
            Reply::Completion(PIECES.concat())
        }
    })
    .await
}

fn ask() -> SkillRequest {
    SkillRequest::from_text(QUESTION, Utc::now())
}

/// The pieces of one artifact text, as (text, append, last_chunk).
fn pieces(events: &[SkillEvent]) -> Vec<(String, bool, bool)> {
    events
        .iter()
        .map(|event| {
            let SkillEvent::ArtifactText {
                artifact_name,
                text,
                append,
                last_chunk,
            } = event;
            assert_eq!(*artifact_name, "answer");
            (text.clone(), *append, *last_chunk)
        })
        .collect()
}

/// Runs a streamed call, reading every event; returns the outcome and the events in order.
async fn run_streaming(
    qa: &CatholicQa,
    capacity: usize,
) -> (Result<SkillOutput, SkillError>, Vec<SkillEvent>) {
    let (events, mut reader) = mpsc::channel(capacity);
    let read = async move {
        let mut received = Vec::new();
        while let Some(event) = reader.recv().await {
            received.push(event);
        }
        received
    };
    tokio::join!(qa.run_streaming(ask(), events), read)
}

/// Checks the event contract: the first piece starts the artifact, the others append, only
/// the last is marked last, and the pieces join to the output's text.
fn assert_pieces_make(output: &SkillOutput, events: &[SkillEvent]) {
    let pieces = pieces(events);
    assert!(!pieces.is_empty());
    for (index, (_, append, last_chunk)) in pieces.iter().enumerate() {
        assert_eq!(*append, index > 0, "{pieces:?}");
        assert_eq!(*last_chunk, index == pieces.len() - 1, "{pieces:?}");
    }
    let joined: String = pieces.iter().map(|(text, _, _)| text.as_str()).collect();
    assert_eq!(joined, output.text);
}

#[tokio::test]
async fn pieces_arrive_in_order_and_join_to_the_answer_stored_without_streaming() {
    let server = backend(answer_stream(&PIECES), Duration::from_millis(5)).await;
    let answering = qa_with(&server);
    let (outcome, events) = run_streaming(&answering.qa, 8).await;
    let output = outcome.unwrap();
    assert_pieces_make(&output, &events);
    assert!(events.len() >= 3, "the answer was not streamed: {events:?}");

    let answer = output.data["answer"].as_str().unwrap();
    assert_eq!(
        answer,
        "Grace is a supernatural gift of God [1]. It is bestowed on us for our salvation [1]."
    );
    assert!(
        output.text.contains("\n\nSources:\n[1] "),
        "{}",
        output.text
    );
    assert_eq!(output.data["mode"], "llm");
    assert_eq!(output.data["model"], SERVED_MODEL);
    assert_eq!(output.data["citations"].as_array().unwrap().len(), 1);
    // The pieces before the last are the answer as it was written; the last adds the sources.
    let before_last: String = pieces(&events[..events.len() - 1])
        .into_iter()
        .map(|(text, _, _)| text)
        .collect();
    assert!(answer.starts_with(&before_last), "{before_last:?}");

    let whole = answering.qa.run(ask()).await.unwrap();
    assert_eq!(output, whole, "streamed and whole answers differ");
    let exchanges = server.exchanges();
    assert_eq!(exchanges[0].body["stream"], true);
    assert_eq!(exchanges[1].body["stream"], false);
    assert_eq!(exchanges[0].body["messages"], exchanges[1].body["messages"]);
}

#[tokio::test]
async fn bytes_split_anywhere_with_comments_and_crlf_give_the_same_answer() {
    let mut events = String::from(": keep-alive\r\n\r\n");
    for (index, piece) in PIECES.iter().enumerate() {
        let event = piece_event(piece).replace("\n", "\r\n");
        if index == 2 {
            // One event split over several `data:` lines, as the format allows.
            let json = event.trim_start_matches("data: ").trim_end();
            let (first, second) = json.split_at(json.find(",\"id\"").unwrap());
            events.push_str(&format!("data: {first}\r\ndata: {second}\r\n\r\n"));
        } else {
            events.push_str(&event);
        }
        events.push_str(":\n\n");
    }
    events.push_str("data: {\"choices\": [], \"usage\": {\"total_tokens\": 9}}\n\n");
    events.push_str(&end_events());
    let pieces = events.as_bytes().chunks(3).map(<[u8]>::to_vec).collect();
    let server = Backend::start(move |body| {
        if wants_stream(body) {
            Reply::Stream {
                pieces: Vec::clone(&pieces),
                pause: Duration::from_millis(1),
            }
        } else {
            Reply::Completion(PIECES.concat())
        }
    })
    .await;
    let answering = qa_with(&server);
    let (outcome, events) = run_streaming(&answering.qa, 8).await;
    let output = outcome.unwrap();
    assert_pieces_make(&output, &events);
    assert_eq!(output, answering.qa.run(ask()).await.unwrap());
}

fn failure(outcome: Result<SkillOutput, SkillError>) -> String {
    match outcome {
        Err(SkillError::Failed(message)) => message,
        other => panic!("expected a failed task, got {other:?}"),
    }
}

fn assert_no_last_piece(events: &[SkillEvent]) {
    assert!(
        pieces(events).iter().all(|(_, _, last)| !last),
        "{events:?}"
    );
}

#[tokio::test]
async fn an_error_mid_stream_fails_the_call_without_the_backends_words() {
    let events = format!(
        "{}{}data: {{\"error\": {{\"message\": \"secret-upstream-detail: overloaded\", \"type\": \"server_error\"}}}}\n\n",
        piece_event("Grace is"),
        piece_event(" a gift [1]"),
    );
    let server = backend(events, Duration::from_millis(5)).await;
    let answering = qa_with(&server);
    let (outcome, events) = run_streaming(&answering.qa, 8).await;
    let message = failure(outcome);
    assert!(
        message.contains("it stopped with an error while writing the answer"),
        "{message}"
    );
    assert!(!message.contains("secret-upstream-detail"), "{message}");
    assert_no_last_piece(&events);
}

#[tokio::test]
async fn a_stream_that_ends_early_fails_but_one_that_finished_without_done_does_not() {
    let cut: String = PIECES[..3].iter().map(|piece| piece_event(piece)).collect();
    let server = backend(cut, Duration::ZERO).await;
    let answering = qa_with(&server);
    let (outcome, events) = run_streaming(&answering.qa, 8).await;
    let message = failure(outcome);
    assert!(message.contains("cut off before the end"), "{message}");
    assert_no_last_piece(&events);

    let finished = answer_stream(&PIECES).replace("data: [DONE]\n\n", "");
    let server = backend(finished, Duration::ZERO).await;
    let answering = qa_with(&server);
    let (outcome, events) = run_streaming(&answering.qa, 8).await;
    let output = outcome.unwrap();
    assert_pieces_make(&output, &events);
    assert_eq!(output, answering.qa.run(ask()).await.unwrap());
}

#[tokio::test]
async fn a_line_over_the_cap_is_refused() {
    let huge = format!(
        "{}data: {{\"choices\": [{{\"delta\": {{\"content\": \"{}\"}}}}]}}\n\n{}",
        piece_event("Grace"),
        "x".repeat(300 * 1024),
        end_events()
    );
    let server = backend(huge, Duration::ZERO).await;
    let answering = qa_with(&server);
    let (outcome, events) = run_streaming(&answering.qa, 8).await;
    let message = failure(outcome);
    assert!(message.contains("its reply could not be read"), "{message}");
    assert_no_last_piece(&events);
}

#[tokio::test]
async fn a_backend_that_does_not_stream_gives_the_answer_in_one_piece() {
    let server = Backend::start(|_| Reply::Completion(PIECES.concat())).await;
    let answering = qa_with(&server);
    let (outcome, events) = run_streaming(&answering.qa, 8).await;
    let output = outcome.unwrap();
    assert_pieces_make(&output, &events);
    assert_eq!(output, answering.qa.run(ask()).await.unwrap());
}

#[tokio::test]
async fn a_slow_reader_gets_fewer_larger_pieces_and_never_holds_the_backend() {
    let words: Vec<String> = (0..200).map(|n| format!(" word{n}")).collect();
    let mut pieces: Vec<&str> = words.iter().map(String::as_str).collect();
    pieces.push(" [1].");
    let server = backend(answer_stream(&pieces), Duration::from_millis(1)).await;
    let answering = qa_with(&server);
    let (events, mut reader) = mpsc::channel(1);
    let read = async move {
        let mut received = Vec::new();
        while let Some(event) = reader.recv().await {
            received.push(event);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        received
    };
    let started = Instant::now();
    let (outcome, events) = tokio::join!(
        async {
            let outcome = answering.qa.run_streaming(ask(), events).await;
            (outcome, started.elapsed())
        },
        read
    );
    let (outcome, took) = outcome;
    let output = outcome.unwrap();
    assert_pieces_make(&output, &events);
    assert!(
        events.len() < 60,
        "{} events for 201 pieces: nothing was joined",
        events.len()
    );
    // One event at a time for 201 pieces at 50 ms each would take 10 seconds.
    assert!(took < Duration::from_secs(4), "{took:?}");
}

#[tokio::test]
async fn a_reader_that_leaves_does_not_stop_the_answer() {
    let server = backend(answer_stream(&PIECES), Duration::from_millis(20)).await;
    let answering = qa_with(&server);
    let (events, mut reader) = mpsc::channel(1);
    let leave = async move {
        let first = reader.recv().await;
        drop(reader);
        first
    };
    let (outcome, first) = tokio::join!(answering.qa.run_streaming(ask(), events), leave);
    assert!(first.is_some());
    let output = outcome.unwrap();
    assert_eq!(output, answering.qa.run(ask()).await.unwrap());
}

#[tokio::test]
async fn dropping_the_call_closes_the_connection_to_the_backend() {
    let words: Vec<String> = (0..100).map(|n| format!(" word{n}")).collect();
    let pieces: Vec<&str> = words.iter().map(String::as_str).collect();
    let server = backend(answer_stream(&pieces), Duration::from_millis(100)).await;
    let answering = qa_with(&server);
    let (events, mut reader) = mpsc::channel(8);
    let mut call = Box::pin(answering.qa.run_streaming(ask(), events));
    tokio::select! {
        outcome = &mut call => panic!("the call ended before its first piece: {outcome:?}"),
        first = reader.recv() => assert!(first.is_some()),
    }
    assert!(server.exchanges()[0].closed_at.is_none());
    drop(call);
    let dropped = Instant::now();
    let closed = server
        .closed_at(Duration::from_secs(3))
        .await
        .expect("the connection to the backend stayed open");
    let after = closed.saturating_duration_since(dropped);
    assert!(
        after < Duration::from_millis(500),
        "closed {after:?} after the drop"
    );
    assert!(server.exchanges()[0].replied_at.is_none());
}

#[tokio::test]
async fn without_a_model_the_whole_text_is_one_last_piece() {
    let data = tempfile::tempdir().unwrap();
    crate::starter::install(data.path());
    let corpus = Arc::new(corpus::Corpus::open(data.path()).unwrap());
    let qa = CatholicQa::new(Arc::clone(&corpus), &LlmSettings::default()).unwrap();
    let (outcome, events) = run_streaming(&qa, 1).await;
    let output = outcome.unwrap();
    assert_eq!(output.data["mode"], "extractive");
    assert_eq!(pieces(&events), [(output.text.clone(), false, true)]);
    assert_eq!(output, qa.run(ask()).await.unwrap());

    // Any other skill streams through the trait's default: its artifact as one last piece.
    let search = skills::documents::DocumentSearch::new(corpus);
    let (events, mut reader) = mpsc::channel(1);
    let output = search
        .run_streaming(SkillRequest::from_text("grace", Utc::now()), events)
        .await
        .unwrap();
    let event = reader.recv().await.unwrap();
    assert_eq!(
        event,
        SkillEvent::ArtifactText {
            artifact_name: output.artifact_name,
            text: output.text.clone(),
            append: false,
            last_chunk: true,
        }
    );
    assert!(reader.recv().await.is_none());
    assert_ne!(output.data["results"], Value::Null);
}
