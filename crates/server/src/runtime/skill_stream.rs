//! A skill run as a running task's work: the pieces of its artifact's text that a streaming
//! skill sends before its last go to the task's event log as they are written (artifact updates
//! with `append`, never `lastChunk`); then the whole artifact, text and data, is sent as one
//! update with `append: false` and `lastChunk: true`, in place of the pieces. A client that keeps
//! only last chunks, or only the last update, holds the whole stored artifact; one that follows
//! `append` replaces the streamed text with it instead of showing it twice. A skill that does not
//! stream sends its whole text as its last piece, so its answer is that one update alone.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use skills::{Skill, SkillError, SkillEvent, SkillOutput, SkillRequest};
use tokio::sync::mpsc;

use a2a_types::{Artifact, Part};

use crate::runtime::EventSink;

/// Pieces the skill may send before the reader takes them; a full channel makes the skill join
/// its next pieces (never wait), so this bounds memory, not speed.
const PIECES_IN_FLIGHT: usize = 64;

/// How a skill's streamed run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamedRun {
    /// The output, whose text and data were sent as chunks of the artifact `artifact_id`.
    Done(SkillOutput),
    /// The skill could not do the work (or ran out of time, or broke): the task ends `failed`
    /// with this text as the agent's message. Chunks already sent stay in the log.
    Failed(String),
}

/// Runs `skill` under `timeout`, sending its text pieces but the last as chunks of the artifact
/// `artifact_id` through `sink`, then the whole artifact in place of them. A log that refuses chunks (full, or closed by a
/// cancel) does not stop the skill: the stored task holds the whole answer either way.
pub async fn run_streamed(
    skill: &dyn Skill,
    request: SkillRequest,
    sink: &EventSink,
    artifact_id: &str,
    timeout: Duration,
) -> StreamedRun {
    let id = skill.info().id;
    let (pieces, mut received) = mpsc::channel(PIECES_IN_FLIGHT);
    let work = AssertUnwindSafe(skill.run_streaming(request, pieces)).catch_unwind();
    let work = tokio::time::timeout(timeout, work);
    tokio::pin!(work);
    let mut started = false;
    let outcome = loop {
        tokio::select! {
            // Pieces first: every piece sent before the output is forwarded before it.
            biased;
            Some(event) = received.recv() => started = forward(sink, artifact_id, event, started).await,
            outcome = &mut work => break outcome,
        }
    };
    // Pieces sent just before the output.
    while let Ok(event) = received.try_recv() {
        started = forward(sink, artifact_id, event, started).await;
    }
    match outcome {
        Err(_) => StreamedRun::Failed(format!(
            "The skill `{id}` did not finish within {} seconds. Please try again later.",
            timeout.as_secs()
        )),
        Ok(Err(_panic)) => {
            tracing::error!(skill = id, "a streamed skill panicked");
            StreamedRun::Failed(format!(
                "The skill `{id}` failed: the server met an internal error. Please try again later."
            ))
        }
        Ok(Ok(Err(SkillError::Failed(reason) | SkillError::InvalidInput(reason)))) => {
            StreamedRun::Failed(reason)
        }
        Ok(Ok(Err(SkillError::Internal(detail)))) => {
            tracing::error!(skill = id, %detail, "a streamed skill met an internal fault");
            StreamedRun::Failed(format!(
                "The skill `{id}` failed: the server met an internal error. Please try again later."
            ))
        }
        Ok(Ok(Ok(output))) => {
            let whole = Artifact {
                artifact_id: artifact_id.to_string(),
                name: Some(output.artifact_name.to_string()),
                parts: vec![
                    Part::text(output.text.clone()),
                    Part::data(output.data.clone()),
                ],
            };
            if let Err(error) = sink.artifact(whole, false, true).await {
                tracing::warn!(%error, "the whole artifact could not be logged; the stored task has it");
            }
            StreamedRun::Done(output)
        }
    }
}

/// Sends one text piece that is not the skill's last as a chunk of the artifact (appended to
/// the pieces before it, never the last chunk); the last piece is not sent, as the whole
/// artifact follows it. Returns whether the artifact has been started.
async fn forward(sink: &EventSink, artifact_id: &str, event: SkillEvent, started: bool) -> bool {
    let SkillEvent::ArtifactText {
        artifact_name,
        text,
        last_chunk,
        ..
    } = event;
    if last_chunk {
        return started;
    }
    let chunk = Artifact {
        artifact_id: artifact_id.to_string(),
        name: Some(artifact_name.to_string()),
        parts: vec![Part::text(text)],
    };
    if let Err(error) = sink.artifact(chunk, started, false).await {
        tracing::warn!(%error, "a streamed chunk could not be logged; the stored task has it");
    }
    true
}
