//! The conditions the conformance kit has the service simulate, as plain data of a send:
//! the service applies them where the real condition arises and knows nothing else of the kit.

use a2a_types::{Artifact, Part};

use crate::push::fault::DeliveryFault;
use crate::runtime::EventSink;

/// A condition the conformance kit simulates inside the service, passed with the send
/// ([`SendRequest::simulation`](super::SendRequest::simulation)) explicitly: the message is stored and fingerprinted exactly as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Simulation {
    /// Refuse at the rate limiter, in the bucket of the skill asked for, without charging it.
    RateLimited {
        /// Seconds the client is told to wait.
        retry_after_secs: u64,
    },
    /// Store a `failed` task without running the skill.
    SkillFailed,
    /// End the task `failed` without running the skill, after the first part of an answer: a
    /// task that runs after its call returned sends it as an artifact chunk (not the last), so
    /// a stream shows `working`, part of the artifact, then the final `failed` status.
    FailMidStream,
    /// Run the task as usual, and fail its webhook notifications as the fault says
    /// (`push_retried`, `push_undelivered`).
    Webhook(DeliveryFault),
}

/// The first part of the answer a `fail_mid_stream` task sends before it fails.
const PART_OF_AN_ANSWER: &str =
    "This answer stops part-way (simulated by the conformance kit: fail_mid_stream)";

/// The reason a simulated failure gives, when the conformance kit asks for one.
pub(super) fn simulated_failure(simulation: Option<&Simulation>, skill_id: &str) -> Option<String> {
    let scenario = match simulation? {
        Simulation::SkillFailed => "skill_failed",
        Simulation::FailMidStream => "fail_mid_stream",
        Simulation::RateLimited { .. } | Simulation::Webhook(_) => return None,
    };
    Some(format!(
        "The skill `{skill_id}` failed (simulated by the conformance kit: {scenario})."
    ))
}

/// Sends the first part of the answer a `fail_mid_stream` task stops after, as an artifact
/// chunk that is not the last.
pub(super) async fn send_part_of_an_answer(sink: &EventSink, artifact_id: &str) {
    let part = Artifact {
        artifact_id: artifact_id.to_string(),
        name: Some("answer".into()),
        parts: vec![Part::text(PART_OF_AN_ANSWER)],
    };
    if let Err(error) = sink.artifact(part, false, false).await {
        tracing::warn!(%error, "a simulated chunk could not be logged");
    }
}
