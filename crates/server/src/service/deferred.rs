//! The sends not looked up first (the charge-first path's opposite): a plain new blocking
//! message to a `default`-bucket skill is charged from a lease before it runs, or run first and
//! charged in the same step that stores its task; either way its save alone tells a message
//! seen before.

use std::sync::Arc;
use std::time::Duration;

use skills::{Bucket, Skill, SkillRequest};

use a2a_types::Task;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::gcra::BucketCharge;
use crate::limits::Decision;
use crate::store::{ChargedSaveOutcome, ChargedSaves, MessageRecord, Owner};

use super::A2aService;
use super::requests::{Reply, SendRequest, SentMessage};
use super::send::Submission;
use super::tasks::{EndedTask, stored_ending};

/// A send not looked up first: its skill, and how its call is charged.
pub(super) struct DeferredCharge<'a> {
    pub(super) skill: Arc<dyn Skill>,
    pub(super) charged: ChargedBy<'a>,
}

/// How a send not looked up first is charged.
pub(super) enum ChargedBy<'a> {
    /// Before it runs, from this replica's lease of the bucket: the limiter's decision, and the
    /// lease's span.
    Lease { decision: Decision, span: Duration },
    /// After it runs, by the store's save of its task: the charge and the saves that apply it.
    Save {
        charge: BucketCharge,
        saves: &'a dyn ChargedSaves,
    },
}

impl A2aService {
    /// How a blocking send may skip the look-up of its message, when it may: charged ahead
    /// from the limiter's lease ([`RateLimiter::lease_span`](crate::limits::RateLimiter)),
    /// or left to the save of its task, with the store's saves that apply it (its skill runs
    /// first, then one atomic step of the store checks the message, charges the caller and
    /// stores the task: one round trip to Redis instead of three). Only for a new message (no
    /// task to read), without a push config or a simulation, to a skill of the `default` bucket
    /// (cheap and local: running it again for a message sent twice, or before its charge, risks
    /// little), from an owner not held on the charge-first path, with a limiter that leases or
    /// keeps its buckets in the store's Redis, and a bucket open to the plan. Everything else
    /// is looked up, then charged before its skill runs: an LLM call of the `expensive` bucket
    /// never runs uncharged, a closed bucket is refused before anything runs, and a refused
    /// lease goes that way too (a message sent before is answered, not refused).
    pub(super) async fn deferred_charge(
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
        let (owner, plan) = (&principal.owner, principal.plan);
        let charged = if let Some(span) = self.limiter.lease_span(plan, Bucket::Default) {
            match self.limiter.check(owner, plan, Bucket::Default).await {
                decision @ Decision::Allowed { .. } => ChargedBy::Lease { decision, span },
                _ => return None,
            }
        } else {
            ChargedBy::Save {
                saves: self.store.charged_saves()?,
                charge: self.limiter.defer(owner, plan, Bucket::Default)?,
            }
        };
        Some(DeferredCharge {
            skill: Arc::clone(skill),
            charged,
        })
    }

    /// A blocking send not looked up first ([`A2aService::deferred_charge`]): the skill runs,
    /// then the store checks the message and stores the task in one atomic step, applying the
    /// charge when the save carries it; the answer and its `RateLimit` headers are those of the
    /// charge-first path. What that path would not have run holds the owner on it for a while
    /// ([`ChargeFirstOwners`](crate::limits::ChargeFirstOwners)), so no client gets uncharged
    /// runs one after another:
    /// - a message seen before answers with its task, uncharged, and holds the owner for one
    ///   emission interval (the time one call frees up); a call charged from a lease is given
    ///   back to it and holds the owner for the lease's span, so resends run at most one skill
    ///   a span however high the limit;
    /// - a refused charge stores nothing, is answered as the same refusal, and holds the owner
    ///   until its `retryAfter` has passed;
    /// - a run that ends in an error (invalid input, a task over the size cap) is charged as
    ///   the charge-first path charged it, and a refusal wins over the error;
    /// - a store that fails (Redis unreachable) answers `-32603`, as a failed save does, and
    ///   holds the owner for one interval. Its step did all or nothing: a retry of the same
    ///   message finds its task, or runs it again.
    pub(super) async fn send_not_looked_up(
        &self,
        principal: &Principal,
        request: SendRequest,
        sent: SentMessage,
        deferred: DeferredCharge<'_>,
    ) -> Result<Reply, ApiError> {
        let DeferredCharge { skill, charged } = deferred;
        let message = request.params.message;
        let Submission {
            submitted,
            request,
            new_in_context,
        } = self
            .submission(
                &principal.owner,
                message,
                None,
                skill.as_ref(),
                request.language,
            )
            .await?;
        let ran = self.run_to_stored(skill.as_ref(), request, submitted).await;
        let (state, reply) = match charged {
            ChargedBy::Lease { decision, span } => {
                let EndedTask { task, state } = ran?;
                let owner = &principal.owner;
                let answer = self
                    .store_ended(owner, task, &sent.content_hash, new_in_context)
                    .await?;
                let rate = if answer.seen_before {
                    // Answered uncharged: the call goes back to the lease, and the owner's
                    // resends are looked up first for a span.
                    self.limiter
                        .give_back(owner, principal.plan, Bucket::Default);
                    self.charge_first.hold(owner, span);
                    None
                } else {
                    Some((decision, Bucket::Default))
                };
                let reply = Reply {
                    result: answer.json,
                    rate,
                    sent: Some(sent),
                };
                (state, reply)
            }
            ChargedBy::Save { charge, saves } => {
                let stored = match ran {
                    Ok(stored) => stored,
                    Err(error) => {
                        self.charge(principal, Bucket::Default).await?;
                        return Err(error);
                    }
                };
                let reply = self
                    .save_charging(principal, &stored, sent, &charge, saves)
                    .await?;
                (stored.state, reply)
            }
        };
        if reply.rate.is_some() {
            self.metrics.task(skill.info().id, state);
        }
        Ok(reply)
    }

    /// Saves the task of a call whose charge the save applies.
    async fn save_charging(
        &self,
        principal: &Principal,
        stored: &EndedTask,
        sent: SentMessage,
        charge: &BucketCharge,
        saves: &dyn ChargedSaves,
    ) -> Result<Reply, ApiError> {
        let owner = &principal.owner;
        let one_interval = charge.interval();
        let saved = saves
            .save_charged(owner, &stored.task, &sent.content_hash, charge)
            .await;
        match saved {
            Ok(ChargedSaveOutcome::Charged(gcra)) => {
                let decision = Decision::of_gcra(charge.limit, &gcra);
                let decision = self.admitted(principal, Bucket::Default, decision)?;
                Ok(Reply {
                    result: stored.task.json.clone(),
                    rate: Some((decision, Bucket::Default)),
                    sent: Some(sent),
                })
            }
            Ok(ChargedSaveOutcome::Seen(record)) => {
                self.charge_first.hold(owner, one_interval);
                self.seen_before(owner, &record, sent).await
            }
            Err(error) => {
                self.charge_first.hold(owner, one_interval);
                Err(error.into())
            }
        }
    }

    /// The answer to a message seen before: the task it produced, as it is now, uncharged.
    async fn seen_before(
        &self,
        owner: &Owner,
        record: &MessageRecord,
        sent: SentMessage,
    ) -> Result<Reply, ApiError> {
        Ok(Reply {
            result: self.owned_task(owner, &record.task_id).await?,
            rate: None,
            sent: Some(sent),
        })
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
