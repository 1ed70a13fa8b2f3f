//! `message/send` and `SendMessage`: a message admitted (recognised if sent before, checked,
//! charged), its task made `submitted`, its skill run, and the ended task stored.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use bytes::Bytes;
use chrono::Utc;
use futures::FutureExt;
use serde_json::Value;
use skills::{Bucket, Skill, SkillError, SkillOutput, SkillRequest, catalog};
use uuid::Uuid;

use a2a_types::{Message, PushNotificationConfig, Task, TaskState, TaskStatus};

use crate::auth::Principal;
use crate::error::ApiError;
use crate::limits::Decision;
use crate::runtime::TransitionObserver;
use crate::store::{MessageRecord, Owner, SaveOutcome, StoredTask, decode_task, now_timestamp};

use super::requests::{FinishedTask, Reply, SendRequest, SentMessage};
use super::simulation::{Simulation, simulated_failure};
use super::tasks::{
    EndedTask, ended_already, merged_data, sent_message, skill_metadata, stored_ending, turns,
};
use super::{A2aService, FULL_STORE_RETRY_SECS};

/// What [`A2aService::begin`] did with a message.
pub(super) enum Begun {
    /// The same message was sent before: its task's id.
    Replayed(String),
    /// The task runs: its id, its `submitted` JSON and the decision charged.
    Started {
        task_id: String,
        submitted: Bytes,
        rate: (Decision, Bucket),
    },
}

/// What [`A2aService::store_ended`] answers: the task as stored, or, when another request
/// with the same message got there first, that request's task as it is now.
pub(super) struct StoredAnswer {
    pub(super) json: Bytes,
    pub(super) seen_before: bool,
}

/// What [`A2aService::admit`] made of a message.
pub(super) enum Prepared {
    /// The same message was sent before: its task's id.
    Replayed(String),
    /// The message may run (boxed: it holds the whole `submitted` task).
    Admitted(Box<Admitted>),
}

/// A message let through to its skill: the limiter's decision in its bucket, the message's
/// idempotency key, the skill, the task `submitted` with the message in its history, and what
/// the skill is asked.
pub(super) struct Admitted {
    pub(super) decision: Decision,
    pub(super) bucket: Bucket,
    pub(super) message_key: String,
    pub(super) skill: Arc<dyn Skill>,
    pub(super) submitted: Task,
    pub(super) new_in_context: bool,
    pub(super) request: SkillRequest,
    pub(super) push: Option<PushNotificationConfig>,
}

/// What a message becomes once it may run: the task `submitted` with the message in its
/// history, what its skill is asked, and whether the task is new in its context.
pub(super) struct Submission {
    pub(super) submitted: Task,
    pub(super) request: SkillRequest,
    pub(super) new_in_context: bool,
}

impl A2aService {
    /// Runs a user message whose params passed [`validate_user_message`](super::validate_user_message). A message sent again
    /// (same id, same content) answers with the task it produced or started, as it is now,
    /// without running the skill or charging the limit; the same id with other content is
    /// another message.
    pub async fn send(
        &self,
        principal: &Principal,
        request: SendRequest,
    ) -> Result<Reply, ApiError> {
        let sent = sent_message(&request.params)?;
        let message_key = sent.content_hash.clone();
        let webhook_fault = matches!(request.simulation, Some(Simulation::Webhook(_)));
        if !request.blocking || request.push.is_some() || webhook_fault {
            return self
                .send_on_runtime(principal, request, message_key, sent)
                .await;
        }
        if let Some(deferred) = self.deferred_charge(principal, &request).await {
            return self
                .send_not_looked_up(principal, request, sent, deferred)
                .await;
        }
        let owner = &principal.owner;
        let simulation = request.simulation.clone();
        let Admitted {
            decision,
            bucket,
            message_key,
            skill,
            submitted,
            new_in_context,
            request,
            ..
        } = match self.admit(principal, request, message_key).await? {
            Prepared::Replayed(task_id) => {
                return Ok(Reply {
                    result: self.owned_task(owner, &task_id).await?,
                    rate: None,
                    sent: Some(sent),
                });
            }
            Prepared::Admitted(admitted) => *admitted,
        };
        let outcome = match simulated_failure(simulation.as_ref(), skill.info().id) {
            Some(reason) => Err(reason),
            None => self.run(skill.as_ref(), request).await?,
        };
        let EndedTask {
            task: stored,
            state,
        } = stored_ending(submitted, outcome)?;
        self.metrics.task(skill.info().id, state);
        self.check_task_size(stored.json.len())?;
        let answer = self
            .store_ended(owner, stored, &message_key, new_in_context)
            .await?;
        Ok(Reply {
            result: answer.json,
            rate: Some((decision, bucket)),
            sent: Some(sent),
        })
    }

    /// A send that runs on the runtime: a non-blocking one, or a blocking one with a push
    /// config (or the kit's webhook fault), so that its changes are pushed like every started
    /// task's; a blocking one waits for its end.
    async fn send_on_runtime(
        &self,
        principal: &Principal,
        request: SendRequest,
        message_key: String,
        sent: SentMessage,
    ) -> Result<Reply, ApiError> {
        let blocking = request.blocking;
        let owner = &principal.owner;
        let (result, rate) = match self.begin(principal, request, message_key).await? {
            Begun::Replayed(task_id) => (self.owned_task(owner, &task_id).await?, None),
            Begun::Started { task_id, rate, .. } if blocking => {
                (self.ended_task(owner, &task_id).await?, Some(rate))
            }
            Begun::Started {
                submitted, rate, ..
            } => (submitted, Some(rate)),
        };
        Ok(Reply {
            result,
            rate,
            sent: Some(sent),
        })
    }

    /// Stores the task a blocking send ended, and answers it: a continued task's configs are
    /// told how this turn ended; a message stored meanwhile under the same key answers with
    /// its task instead.
    pub(super) async fn store_ended(
        &self,
        owner: &Owner,
        stored: StoredTask,
        message_key: &str,
        new_in_context: bool,
    ) -> Result<StoredAnswer, ApiError> {
        let record = MessageRecord {
            task_id: stored.id.clone(),
        };
        Ok(
            match self
                .store
                .save(owner, &stored, message_key, &record, new_in_context)
                .await?
            {
                SaveOutcome::Saved => {
                    if !new_in_context && let Some(push) = &self.push {
                        // The configs an earlier turn set on the task are told how this one ended.
                        push.entered(owner, &record.task_id, stored.json.clone())
                            .await;
                    }
                    StoredAnswer {
                        json: stored.json,
                        seen_before: false,
                    }
                }
                SaveOutcome::Duplicate(existing) => StoredAnswer {
                    json: self.owned_task(owner, &existing.task_id).await?,
                    seen_before: true,
                },
            },
        )
    }

    /// What every send does before its skill runs, `message_key` being the message's
    /// idempotency key ([`message_key`]): a message sent again is recognised; a
    /// continued task is read, checked (it stored_ending, it may be continued, its context, the size
    /// it would be stored at) and the message is charged; then the task is made `submitted`
    /// with the message in its history, and the skill's request with the conversation so far.
    pub(super) async fn admit(
        &self,
        principal: &Principal,
        request: SendRequest,
        message_key: String,
    ) -> Result<Prepared, ApiError> {
        let SendRequest {
            params,
            finished,
            simulation,
            push,
            language,
            default_skill,
            ..
        } = request;
        let message = params.message;
        let skill = Arc::clone(self.skill_for(&message, default_skill)?);
        crate::telemetry::traces::record_skill(skill.info().id);
        let owner = &principal.owner;
        if let Some(record) = self.store.message(owner, &message_key).await? {
            return Ok(Prepared::Replayed(record.task_id));
        }
        if let Some(budget) = self.store.over_budget() {
            return Err(ApiError::OverBudget {
                budget,
                retry_after_secs: FULL_STORE_RETRY_SECS,
            });
        }
        if let Some(config) = &push {
            self.push()?.check_config(config)?;
        }
        let continued = self.continued(owner, &message, finished).await?;
        // A continued task the checks above let through takes an inline config only when it
        // has room for it: refused here, before anything is charged.
        if let (Some(config), Some(task)) = (&push, &continued) {
            self.push()?.check_room(owner, &task.id, config).await?;
        }
        let bucket = skill.info().bucket;
        if let Some(&Simulation::RateLimited { retry_after_secs }) = simulation.as_ref() {
            return Err(ApiError::RateLimited {
                retry_after_secs,
                bucket: bucket.as_str(),
                limit: None,
            });
        }
        let decision = self.charge(principal, bucket).await?;
        let Submission {
            submitted,
            request,
            new_in_context,
        } = self
            .submission(owner, message, continued, skill.as_ref(), language)
            .await?;
        Ok(Prepared::Admitted(Box::new(Admitted {
            decision,
            bucket,
            message_key,
            skill,
            submitted,
            new_in_context,
            request,
            push,
        })))
    }

    /// The finished task a message continues (`taskId`), read and checked: it has ended, it may be
    /// continued on this wire, the message's context is its own, and it stays within the size
    /// cap with the message added.
    async fn continued(
        &self,
        owner: &Owner,
        message: &Message,
        finished: FinishedTask,
    ) -> Result<Option<Task>, ApiError> {
        let continued = match &message.task_id {
            Some(id) => {
                let stored = self.owned_task(owner, id).await?;
                let message_bytes = serde_json::to_vec(&message)
                    .map_err(|e| ApiError::Internal(e.to_string()))?
                    .len();
                self.check_task_size(stored.len() + message_bytes)?;
                Some(decode_task(&stored)?)
            }
            None => None,
        };
        if let Some(task) = &continued {
            ended_already(task)?;
            if finished == FinishedTask::Refuse {
                // Every stored task is terminal: a continuation is refused when asked to be.
                return Err(ApiError::TaskFinished {
                    task_id: task.id.clone(),
                    state: task.status.state.as_str(),
                });
            }
            if let Some(context_id) = &message.context_id
                && &task.context_id != context_id
            {
                return Err(ApiError::InvalidParams(format!(
                    "message.contextId `{context_id}` does not match the context of task `{}`",
                    task.id
                )));
            }
        }
        Ok(continued)
    }

    /// The task a message that may run makes `submitted` (the continued task with the message
    /// appended, or a new one), and what its skill is asked: the message and the conversation
    /// so far (the continued task's turns, or the recent tasks of the context it names).
    pub(super) async fn submission(
        &self,
        owner: &Owner,
        mut message: Message,
        continued: Option<Task>,
        skill: &dyn Skill,
        language: Option<String>,
    ) -> Result<Submission, ApiError> {
        let context_id = continued
            .as_ref()
            .map(|t| t.context_id.clone())
            .or_else(|| message.context_id.clone())
            .unwrap_or_else(|| Uuid::new_v4().to_string());
        let earlier = match &continued {
            Some(task) => turns(&task.history),
            None if message.context_id.is_some() => self
                .store
                .context(owner, &context_id, self.context_history_tasks)
                .await?
                .iter()
                .flat_map(|t| turns(&t.history))
                .collect(),
            None => Vec::new(),
        };
        let request = SkillRequest {
            text: message.text(),
            data: merged_data(&message),
            history: earlier,
            now: Utc::now(),
            accept_language: language,
        };
        let new_in_context = continued.is_none();
        let task_id = continued
            .as_ref()
            .map(|t| t.id.clone())
            .unwrap_or_else(|| Uuid::new_v4().to_string());
        message.task_id = Some(task_id.clone());
        message.context_id = Some(context_id.clone());
        let mut history = continued.map(|t| t.history).unwrap_or_default();
        history.push(message);
        let submitted = Task {
            kind: "task".into(),
            id: task_id,
            context_id,
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(now_timestamp()),
            },
            artifacts: Vec::new(),
            history,
            metadata: Some(skill_metadata(skill.info().id)),
        };
        Ok(Submission {
            submitted,
            request,
            new_in_context,
        })
    }

    /// The skill a message asks for (`metadata.skillId`), else `default_skill`, else the
    /// catalogue's default.
    pub(super) fn skill_for(
        &self,
        message: &Message,
        default_skill: Option<&'static str>,
    ) -> Result<&Arc<dyn Skill>, ApiError> {
        let requested = match message.metadata.as_ref().and_then(|m| m.get("skillId")) {
            None | Some(Value::Null) => default_skill.unwrap_or(catalog::DEFAULT_SKILL_ID),
            Some(Value::String(id)) => id.as_str(),
            Some(_) => {
                return Err(ApiError::InvalidParams(
                    "message.metadata.skillId must be a string".into(),
                ));
            }
        };
        self.skills
            .get(requested)
            .ok_or_else(|| ApiError::SkillNotFound {
                requested: requested.to_string(),
                available: self.skills.ids(),
            })
    }

    pub(super) async fn run(
        &self,
        skill: &dyn Skill,
        request: SkillRequest,
    ) -> Result<Result<SkillOutput, String>, ApiError> {
        let id = skill.info().id;
        let guarded = AssertUnwindSafe(skill.run(request)).catch_unwind();
        match tokio::time::timeout(self.skill_timeout, guarded).await {
            Err(_) => Ok(Err(format!(
                "The skill `{id}` did not finish within {} seconds. Please try again later.",
                self.skill_timeout.as_secs()
            ))),
            Ok(Err(_panic)) => Err(ApiError::Internal(format!("skill `{id}` panicked"))),
            Ok(Ok(Err(SkillError::Internal(detail)))) => {
                Err(ApiError::Internal(format!("skill `{id}`: {detail}")))
            }
            Ok(Ok(Err(SkillError::Failed(reason)))) => Ok(Err(reason)),
            Ok(Ok(Err(SkillError::InvalidInput(reason)))) => Err(ApiError::InvalidParams(reason)),
            Ok(Ok(Ok(output))) => Ok(Ok(output)),
        }
    }
}
