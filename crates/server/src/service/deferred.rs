//! The send whose charge its task's save applies (the charge-first path's opposite): a plain
//! new blocking message to a `default`-bucket skill is run first and charged in the same step
//! that stores its task.

use std::sync::Arc;

use skills::{Bucket, Skill, SkillRequest};

use a2a_types::Task;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::gcra::BucketCharge;
use crate::limits::Decision;
use crate::store::{ChargedSaveOutcome, ChargedSaves};

use super::A2aService;
use super::requests::{Reply, SendRequest, SentMessage};
use super::send::Submission;
use super::tasks::{EndedTask, stored_ending};

/// A send whose charge the save of its task applies: its skill, the charge, and the store's
/// saves that apply it.
pub(super) struct DeferredCharge<'a> {
    pub(super) skill: Arc<dyn Skill>,
    pub(super) charge: BucketCharge,
    pub(super) saves: &'a dyn ChargedSaves,
}

impl A2aService {
    /// The charge a blocking send may leave to the save of its task, with the store's saves
    /// that apply it: then its skill runs first, and one atomic step of the store checks the
    /// message, charges the caller and stores the task (one round trip to Redis instead of
    /// three). Only for a new message (no task to read), without a push config or a
    /// simulation, to a skill of the `default` bucket (cheap and local: running it before the
    /// charge risks little), from an owner not held on the charge-first path, with a limiter
    /// that keeps its buckets in the store's Redis and a bucket open to the plan. Everything
    /// else is charged before its skill runs: an LLM call of the `expensive` bucket never runs
    /// uncharged, and a closed bucket is refused before anything runs.
    pub(super) fn deferred_charge(
        &self,
        principal: &Principal,
        request: &SendRequest,
    ) -> Option<DeferredCharge<'_>> {
        let message = &request.params.message;
        let plain_new_message = request.blocking
            && request.push.is_none()
            && request.simulation.is_none()
            && message.task_id.is_none();
        if !plain_new_message || self.charge_first.holds(&principal.owner) {
            return None;
        }
        // A skill that does not exist is refused on the charge-first path, as before.
        let skill = self.skill_for(message, request.default_skill).ok()?;
        if skill.info().bucket != Bucket::Default {
            return None;
        }
        let saves = self.store.charged_saves()?;
        let charge = self
            .limiter
            .defer(&principal.owner, principal.plan, Bucket::Default)?;
        Some(DeferredCharge {
            skill: Arc::clone(skill),
            charge,
            saves,
        })
    }

    /// A blocking send whose save applies its charge ([`A2aService::deferred_charge`]): the
    /// skill runs, then the store checks the message, charges the caller and stores the task
    /// in one atomic step; the answer and its `RateLimit` headers are those of the
    /// charge-first path. What that path would not have run holds the owner on it for a while
    /// ([`ChargeFirstOwners`]), so no client gets uncharged runs one after another:
    /// - a message seen before answers with its task, uncharged, and holds the owner for one
    ///   emission interval (the time one call frees up);
    /// - a refused charge stores nothing, is answered as the same refusal, and holds the owner
    ///   until its `retryAfter` has passed;
    /// - a run that ends in an error (invalid input, a task over the size cap) is charged by
    ///   the limiter as the charge-first path charged it, and a refusal wins over the error;
    /// - a store that fails (Redis unreachable) answers `-32603`, as a failed save does, and
    ///   holds the owner for one interval. Its step did all or nothing: a retry of the same
    ///   message finds its task, or runs it again.
    pub(super) async fn send_charged_by_its_save(
        &self,
        principal: &Principal,
        request: SendRequest,
        sent: SentMessage,
        deferred: DeferredCharge<'_>,
    ) -> Result<Reply, ApiError> {
        let DeferredCharge {
            skill,
            charge,
            saves,
        } = deferred;
        let owner = &principal.owner;
        let message = request.params.message;
        let Submission {
            submitted, request, ..
        } = self
            .submission(owner, message, None, skill.as_ref(), request.language)
            .await?;
        let stored = match self.run_to_stored(skill.as_ref(), request, submitted).await {
            Ok(stored) => stored,
            Err(error) => {
                self.charge(principal, Bucket::Default).await?;
                return Err(error);
            }
        };
        let one_interval = charge.interval();
        let saved = saves
            .save_charged(owner, &stored.task, &sent.content_hash, &charge)
            .await;
        match saved {
            Ok(ChargedSaveOutcome::Charged(gcra)) => {
                let decision = Decision::of_gcra(charge.limit, &gcra);
                let decision = self.admitted(principal, Bucket::Default, decision)?;
                self.metrics.task(skill.info().id, stored.state);
                Ok(Reply {
                    result: stored.task.json,
                    rate: Some((decision, Bucket::Default)),
                    sent: Some(sent),
                })
            }
            Ok(ChargedSaveOutcome::Seen(record)) => {
                self.charge_first.hold(owner, one_interval);
                Ok(Reply {
                    result: self.owned_task(owner, &record.task_id).await?,
                    rate: None,
                    sent: Some(sent),
                })
            }
            Err(error) => {
                self.charge_first.hold(owner, one_interval);
                Err(error.into())
            }
        }
    }

    /// Runs a `submitted` task's skill and makes the terminal task as it is stored, refused
    /// when it would be stored over the size cap.
    pub(super) async fn run_to_stored(
        &self,
        skill: &dyn Skill,
        request: SkillRequest,
        submitted: Task,
    ) -> Result<EndedTask, ApiError> {
        let ended = stored_ending(submitted, self.run(skill, request).await?)?;
        self.check_task_size(ended.task.json.len())?;
        Ok(ended)
    }
}
