//! The methods, independent of HTTP and of the wire: a typed request in, the task (as stored,
//! 0.3 JSON) or an [`ApiError`] out. The method table (`dispatch`) parses each wire's params
//! into these requests and spells the answers; a new capability (streaming with `stream` and
//! `subscribe`, push-notification configs) is one more method here and one more row there.

pub mod listing;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use chrono::{SecondsFormat, Utc};
use futures::FutureExt;
use serde_json::{Map, Value};
use skills::{
    Bucket, Skill, SkillError, SkillOutput, SkillRegistry, SkillRequest, Speaker, Turn, catalog,
};
use uuid::Uuid;

use a2a_types::{
    Artifact, Message, MessageSendParams, Part, PushNotificationConfig, Role, Task,
    TaskPushNotificationConfig, TaskState, TaskStatus,
};

use crate::auth::Principal;
use crate::error::ApiError;
use crate::gcra::BucketCharge;
use crate::limits::{ChargeFirstOwners, Decision, RateLimiter};
use crate::metrics::Metrics;
use crate::push::Push;
use crate::push::fault::DeliveryFault;
use crate::runtime::skill_stream::{StreamedRun, run_streamed};
use crate::runtime::{
    Canceled, EventSink, NewTask, Started, StreamPlace, Subscribed, Subscription, TaskRuntime,
    TransitionObserver,
};
use crate::store::{
    ChargedSaveOutcome, ChargedSaves, MessageRecord, Owner, SaveOutcome, StoredTask, TaskStore,
    decode_task, message_key_hash,
};
use crate::wire::Version;
use listing::{TaskPage, TaskQuery};

/// What a message naming a task (`taskId`) does to that task, which is always finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishedTask {
    /// Continues it: the reference's 0.3 behaviour, the same task with a longer history.
    Continue,
    /// Refuses the message: A2A 1.0 takes no message for a task in a terminal state;
    /// follow-ups go through `contextId` as new tasks.
    Refuse,
}

/// What a successful call returns, with the rate-limit decision when one was charged.
pub struct Reply {
    /// The JSON-RPC `result`, as JSON text (a stored task is answered as it was stored).
    pub result: Bytes,
    /// The decision and bucket of a charged `message/send`, for the `RateLimit` headers.
    pub rate: Option<(Decision, Bucket)>,
    /// The message a `message/send` carried, for the conformance kit.
    pub sent: Option<SentMessage>,
}

impl Reply {
    /// A result that charged no limit and carried no message (reads).
    pub fn result(result: Bytes) -> Reply {
        Reply {
            result,
            rate: None,
            sent: None,
        }
    }
}

/// The message a `message/send` carried, as the conformance kit reads it: the A2A docs call a
/// `messageId` unique, and another message under a used id is served as a new message, so the
/// kit compares the content hash against the one it saw before under the same id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    /// The message's `messageId` as sent.
    pub message_id: String,
    /// The hash of the message and its configuration (the key a retry is recognised by).
    pub content_hash: String,
}

/// The A2A methods over a skill registry, a store and a limiter.
pub struct A2aService {
    skills: SkillRegistry,
    store: Arc<dyn TaskStore>,
    runtime: Arc<TaskRuntime>,
    limiter: Arc<dyn RateLimiter>,
    metrics: Arc<Metrics>,
    skill_timeout: Duration,
    context_history_tasks: usize,
    sizes: SizeCaps,
    push: Option<Arc<Push>>,
    charge_first: ChargeFirstOwners,
}

/// How long a sender refused for a full store is told to wait: tasks leave as they expire, the
/// oldest first.
const FULL_STORE_RETRY_SECS: u64 = 60;

/// The sizes in bytes the service keeps what it stores and answers within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeCaps {
    /// The largest stored task (`store.max_task_bytes`): a continuation past it is refused.
    pub max_task_bytes: usize,
    /// The stored tasks one `ListTasks` page reads at most (`store.max_list_page_bytes`).
    pub max_list_page_bytes: usize,
}

/// A condition the conformance kit simulates inside the service, passed to [`A2aService::call`]
/// explicitly: the message is stored and fingerprinted exactly as the client sent it.
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

/// Longest `messageId`, `taskId` and `contextId` accepted, in characters: they become store
/// keys and log fields, and a UUID has 36.
pub const MAX_ID_CHARS: usize = 256;

/// `message/send` and `SendMessage`: a user message that passed [`validate_user_message`].
#[derive(Debug)]
pub struct SendRequest {
    /// The message and its configuration.
    pub params: MessageSendParams,
    /// What the message does to the finished task it names, which differs per wire.
    pub finished: FinishedTask,
    /// The conformance kit's override, when a scenario simulates a condition of the service.
    pub simulation: Option<Simulation>,
    /// Whether the answer waits for the task to end (0.3 `configuration.blocking`, the
    /// default; 1.0 `returnImmediately` is its opposite).
    pub blocking: bool,
    /// A push config for the task the message starts, stored before it starts so that its
    /// first change is pushed too (`None` when push notifications are not offered).
    pub push: Option<PushNotificationConfig>,
    /// The wire the message came over: an inline push config is told in its terms.
    pub wire: Version,
    /// The caller's language preference, for skills that answer in several languages.
    pub language: Option<String>,
    /// The skill a message without `metadata.skillId` goes to, when the call came through a
    /// skill's own agent (`/agents/{skill_id}`).
    pub default_skill: Option<&'static str>,
}

/// `tasks/pushNotificationConfig/set` and `CreateTaskPushNotificationConfig`.
#[derive(Debug)]
pub struct SetPushConfigRequest {
    /// The caller's task, working or kept.
    pub task_id: String,
    /// The config; without an id it takes the task's id, replacing the config of that id.
    pub config: PushNotificationConfig,
    /// The wire of the method that sets it: the config's notifications are in its terms.
    pub wire: Version,
}

/// `tasks/pushNotificationConfig/get` and `GetTaskPushNotificationConfig`.
#[derive(Debug)]
pub struct GetPushConfigRequest {
    /// The caller's task.
    pub task_id: String,
    /// The config; `None` (0.3 only): the task's first.
    pub config_id: Option<String>,
}

/// `tasks/pushNotificationConfig/list` and `ListTaskPushNotificationConfigs`.
#[derive(Debug)]
pub struct ListPushConfigsRequest {
    /// The caller's task.
    pub task_id: String,
    /// Which of the task's configs, ordered by id.
    pub page: ConfigPage,
}

/// A page of a task's push configs, ordered by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigPage {
    /// At most this many; `None`: all.
    pub size: Option<usize>,
    /// Only those whose id sorts after this one (the previous page's last).
    pub after: Option<String>,
}

/// `tasks/pushNotificationConfig/delete` and `DeleteTaskPushNotificationConfig`.
#[derive(Debug)]
pub struct DeletePushConfigRequest {
    /// The caller's task.
    pub task_id: String,
    /// The config to remove.
    pub config_id: String,
}

/// `tasks/resubscribe` and `SubscribeToTask`.
#[derive(Debug)]
pub struct SubscribeRequest {
    /// The task's id.
    pub id: String,
}

/// A task's events, answered as a stream, with the rate-limit decision when one was charged.
pub struct Streamed {
    /// The events, from the task's first.
    pub subscription: Subscription,
    /// The decision and bucket of a charged send, for the `RateLimit` headers.
    pub rate: Option<(Decision, Bucket)>,
}

/// What [`A2aService::begin`] did with a message.
enum Begun {
    /// The same message was sent before: its task's id.
    Replayed(String),
    /// The task runs: its id, its `submitted` JSON and the decision charged.
    Started {
        task_id: String,
        submitted: Bytes,
        rate: (Decision, Bucket),
    },
}

/// `tasks/get` and `GetTask`.
#[derive(Debug)]
pub struct GetRequest {
    /// The task's id.
    pub id: String,
    /// Keep only the last this many messages of the history.
    pub history_length: Option<u64>,
}

/// `tasks/cancel` and `CancelTask`.
#[derive(Debug)]
pub struct CancelRequest {
    /// The task's id.
    pub id: String,
}

/// `ListTasks`: one page of the caller's tasks.
#[derive(Debug)]
pub struct ListRequest {
    /// Filters, page size and position.
    pub query: TaskQuery,
    /// Whether the tasks keep their artifacts (1.0's `includeArtifacts`).
    pub include_artifacts: bool,
}

/// Where tasks live: the store of finished tasks and the runtime of running ones, over the
/// same backing.
pub struct Tasks {
    /// Finished tasks, kept 24 h.
    pub store: Arc<dyn TaskStore>,
    /// Tasks that run after their call returned.
    pub runtime: Arc<TaskRuntime>,
    /// Each task's push configs, when push notifications are offered (the runtime is given
    /// the same, to push every change).
    pub push: Option<Arc<Push>>,
}

/// What [`A2aService::admit`] made of a message.
enum Prepared {
    /// The same message was sent before: its task's id.
    Replayed(String),
    /// The message may run (boxed: it holds the whole `submitted` task).
    Admitted(Box<Admitted>),
}

/// A message let through to its skill: the limiter's decision in its bucket, the message's
/// idempotency key, the skill, the task `submitted` with the message in its history, and what
/// the skill is asked.
struct Admitted {
    decision: Decision,
    bucket: Bucket,
    message_key: String,
    skill: Arc<dyn Skill>,
    submitted: Task,
    new_in_context: bool,
    request: SkillRequest,
    push: Option<PushNotificationConfig>,
}

/// A send whose charge the save of its task applies: its skill, the charge, and the store's
/// saves that apply it.
struct DeferredCharge<'a> {
    skill: Arc<dyn Skill>,
    charge: BucketCharge,
    saves: &'a dyn ChargedSaves,
}

/// A task its skill ended, as it is stored, with its state (for the metrics).
struct EndedTask {
    task: StoredTask,
    state: &'static str,
}

/// What a message becomes once it may run: the task `submitted` with the message in its
/// history, what its skill is asked, and whether the task is new in its context.
struct Submission {
    submitted: Task,
    request: SkillRequest,
    new_in_context: bool,
}

impl A2aService {
    /// Wires the parts together.
    pub fn new(
        skills: SkillRegistry,
        tasks: Tasks,
        limiter: Arc<dyn RateLimiter>,
        metrics: Arc<Metrics>,
        skill_timeout: Duration,
        context_history_tasks: usize,
        sizes: SizeCaps,
    ) -> Self {
        A2aService {
            skills,
            store: tasks.store,
            runtime: tasks.runtime,
            limiter,
            metrics,
            skill_timeout,
            context_history_tasks,
            sizes,
            push: tasks.push,
            charge_first: ChargeFirstOwners::new(ChargeFirstOwners::CAPACITY),
        }
    }

    /// The registry, for the agent card.
    pub fn skills(&self) -> &SkillRegistry {
        &self.skills
    }

    /// The caller's task as stored (0.3 JSON), its history trimmed to the last
    /// `history_length` messages when given.
    pub async fn get(&self, principal: &Principal, request: GetRequest) -> Result<Bytes, ApiError> {
        self.charge(principal, Bucket::Read).await?;
        let json = self.owned_task(&principal.owner, &request.id).await?;
        match request.history_length {
            None => Ok(json),
            Some(length) => {
                let mut task = decode_task(&json)?;
                task.trim_history(usize::try_from(length).unwrap_or(usize::MAX));
                Ok(StoredTask::of(&task)?.json)
            }
        }
    }

    /// Cancels the caller's working task, wherever it runs: it ends `canceled` and its skill's
    /// work is dropped. A task that ended already is refused, naming its state.
    pub async fn cancel(
        &self,
        principal: &Principal,
        request: CancelRequest,
    ) -> Result<Bytes, ApiError> {
        self.charge(principal, Bucket::Read).await?;
        if let Canceled::Canceled(json) = self.runtime.cancel(&principal.owner, &request.id).await?
        {
            return Ok(json);
        }
        let task = decode_task(&self.owned_task(&principal.owner, &request.id).await?)?;
        Err(ApiError::InvalidStateTransition(task.status.state.as_str()))
    }

    /// One page of the caller's tasks of the last 24 hours (`ListTasks`), charged as a read.
    pub async fn list(
        &self,
        principal: &Principal,
        request: ListRequest,
    ) -> Result<TaskPage, ApiError> {
        self.charge(principal, Bucket::Read).await?;
        let owner = &principal.owner;
        let query = &request.query;
        let mut selection = listing::select(self.store.owned_index(owner).await?, query);
        let stored = self.read_page(owner, &mut selection).await?;
        let mut page = listing::page(selection, stored, query)?;
        if !request.include_artifacts {
            for task in &mut page.tasks {
                task.artifacts.clear();
            }
        }
        Ok(page)
    }

    /// The tasks of a page, read a few at a time until they reach the page's budget in bytes;
    /// the page is cut after the last that fits.
    async fn read_page(
        &self,
        owner: &Owner,
        selection: &mut listing::Selection,
    ) -> Result<Vec<Option<Bytes>>, ApiError> {
        let mut stored = Vec::with_capacity(selection.page.len());
        let mut bytes = 0usize;
        while stored.len() < selection.page.len() && bytes <= self.sizes.max_list_page_bytes {
            let ids = selection.ids(stored.len(), listing::READ_BATCH);
            let read = self.store.tasks(owner, &ids).await?;
            bytes += read.iter().flatten().map(Bytes::len).sum::<usize>();
            stored.extend(read);
        }
        let kept = listing::fitting(&stored, self.sizes.max_list_page_bytes);
        selection.cut(kept);
        stored.truncate(kept);
        Ok(stored)
    }

    /// Sets a push config on the caller's task, working or kept (a kept task's configs are
    /// told of a later turn's changes); charged as a read.
    pub async fn set_push_config(
        &self,
        principal: &Principal,
        request: SetPushConfigRequest,
    ) -> Result<TaskPushNotificationConfig, ApiError> {
        let push = self.push_of_owned_task(principal, &request.task_id).await?;
        Ok(push
            .set_config(
                &principal.owner,
                &request.task_id,
                request.config,
                request.wire,
            )
            .await?)
    }

    /// One push config of the caller's task; charged as a read.
    pub async fn get_push_config(
        &self,
        principal: &Principal,
        request: GetPushConfigRequest,
    ) -> Result<TaskPushNotificationConfig, ApiError> {
        let push = self.push_of_owned_task(principal, &request.task_id).await?;
        let owner = &principal.owner;
        let config_id = request.config_id.as_deref();
        push.get_config(owner, &request.task_id, config_id)
            .await?
            .ok_or_else(|| no_push_config(&request.task_id, config_id))
    }

    /// A page of the caller's task's push configs, and the id the next page starts after
    /// when there is one; charged as a read.
    pub async fn list_push_configs(
        &self,
        principal: &Principal,
        request: ListPushConfigsRequest,
    ) -> Result<(Vec<TaskPushNotificationConfig>, Option<String>), ApiError> {
        let push = self.push_of_owned_task(principal, &request.task_id).await?;
        let owner = &principal.owner;
        let after = request.page.after.as_deref();
        let mut configs: Vec<TaskPushNotificationConfig> = push
            .list_configs(owner, &request.task_id)
            .await?
            .into_iter()
            .filter(|config| after < config.push_notification_config.id.as_deref())
            .collect();
        let next = match request.page.size {
            Some(size) if configs.len() > size => {
                configs.truncate(size);
                configs
                    .last()
                    .and_then(|config| config.push_notification_config.id.clone())
            }
            _ => None,
        };
        Ok((configs, next))
    }

    /// Removes a push config of the caller's task; an id the task has no config of is
    /// refused (`-32602`); charged as a read.
    pub async fn delete_push_config(
        &self,
        principal: &Principal,
        request: DeletePushConfigRequest,
    ) -> Result<(), ApiError> {
        let push = self.push_of_owned_task(principal, &request.task_id).await?;
        let owner = &principal.owner;
        if push
            .delete_config(owner, &request.task_id, &request.config_id)
            .await?
        {
            Ok(())
        } else {
            Err(no_push_config(&request.task_id, Some(&request.config_id)))
        }
    }

    /// The first step of the four push-config methods: push notifications offered, the call
    /// charged as a read, and the task the caller's own (working or kept).
    async fn push_of_owned_task(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<&Push, ApiError> {
        let push = self.push()?;
        self.charge(principal, Bucket::Read).await?;
        self.owned_task(&principal.owner, task_id).await?;
        Ok(push)
    }

    /// Push notifications, which the method table offers only when the deployment does.
    fn push(&self) -> Result<&Push, ApiError> {
        self.push.as_deref().ok_or_else(|| {
            ApiError::Internal("a push-notification call reached a server without push".into())
        })
    }

    /// The owner's task once it ended, waiting while it works.
    async fn ended_task(&self, owner: &Owner, task_id: &str) -> Result<Bytes, ApiError> {
        self.runtime
            .ended(owner, task_id)
            .await?
            .ok_or_else(|| ApiError::TaskNotFound(task_id.to_string()))
    }

    /// Charges one call of the caller to `bucket`, or refuses it (429 `-32003`).
    async fn charge(&self, principal: &Principal, bucket: Bucket) -> Result<Decision, ApiError> {
        let decision = self
            .limiter
            .check(&principal.owner, principal.plan, bucket)
            .await;
        self.admitted(principal, bucket, decision)
    }

    /// A call charged to `bucket` with `decision`, or its refusal (429 `-32003`). A refusal in
    /// the `default` bucket holds the owner on the charge-first path until its `retryAfter`
    /// has passed ([`ChargeFirstOwners`]).
    fn admitted(
        &self,
        principal: &Principal,
        bucket: Bucket,
        decision: Decision,
    ) -> Result<Decision, ApiError> {
        match decision {
            Decision::Limited { retry_after, limit } => {
                self.metrics
                    .rate_limited(principal.plan.as_str(), bucket.as_str());
                if bucket == Bucket::Default {
                    self.charge_first.hold(&principal.owner, retry_after);
                }
                Err(ApiError::RateLimited {
                    retry_after_secs: Decision::retry_after_secs(retry_after),
                    bucket: bucket.as_str(),
                    limit: Some(limit),
                })
            }
            Decision::Unavailable => Err(ApiError::Internal(
                "the rate limiter is unavailable (fail mode closed)".into(),
            )),
            Decision::Allowed { .. } | Decision::Unmetered => Ok(decision),
        }
    }

    /// Refuses a task that would be stored larger than the cap (`-32602`); what is stored
    /// already stays as it was.
    fn check_task_size(&self, bytes: usize) -> Result<(), ApiError> {
        if bytes <= self.sizes.max_task_bytes {
            return Ok(());
        }
        Err(ApiError::InvalidParams(format!(
            "the task would be {bytes} bytes stored, over the limit of {} bytes; send a shorter message, or start a new task in the same conversation (contextId without taskId)",
            self.sizes.max_task_bytes
        )))
    }

    /// The owner's task, working or kept.
    async fn owned_task(&self, owner: &Owner, id: &str) -> Result<Bytes, ApiError> {
        self.runtime
            .read(owner, id)
            .await?
            .ok_or_else(|| ApiError::TaskNotFound(id.to_string()))
    }

    /// Runs a user message whose params passed [`validate_user_message`]. A message sent again
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
            // A blocking send with a push config (or the kit's webhook fault) runs on the
            // runtime as well, so that its changes are pushed like every started task's, and
            // waits for its end.
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
            return Ok(Reply {
                result,
                rate,
                sent: Some(sent),
            });
        }
        if let Some(deferred) = self.deferred_charge(principal, &request) {
            return self
                .send_charged_by_its_save(principal, request, sent, deferred)
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
        } = ended(submitted, outcome)?;
        self.metrics.task(skill.info().id, state);
        self.check_task_size(stored.json.len())?;
        let record = MessageRecord {
            task_id: stored.id.clone(),
        };
        let result = match self
            .store
            .save(owner, &stored, &message_key, &record, new_in_context)
            .await?
        {
            SaveOutcome::Saved => {
                if !new_in_context && let Some(push) = &self.push {
                    // The configs an earlier turn set on the task are told how this one ended.
                    push.entered(owner, &record.task_id, stored.json.clone())
                        .await;
                }
                stored.json
            }
            SaveOutcome::Duplicate(existing) => self.owned_task(owner, &existing.task_id).await?,
        };
        Ok(Reply {
            result,
            rate: Some((decision, bucket)),
            sent: Some(sent),
        })
    }

    /// `message/stream` and `SendStreamingMessage`: starts the task as a non-blocking send does
    /// and answers with its events. A message sent again answers with its task's events. The
    /// stream's place is held first: a stream refused for the cap starts and charges nothing.
    pub async fn stream(
        &self,
        principal: &Principal,
        request: SendRequest,
    ) -> Result<Streamed, ApiError> {
        let message_key = message_key(&request.params)?;
        let place = self.hold_stream(&principal.owner).await?;
        let (task_id, rate) = match self.begin(principal, request, message_key).await {
            Ok(Begun::Replayed(task_id)) => (task_id, None),
            Ok(Begun::Started { task_id, rate, .. }) => (task_id, Some(rate)),
            Err(error) => {
                place.release().await?;
                return Err(error);
            }
        };
        let subscription = self.open_stream(place, &task_id).await?;
        Ok(Streamed { subscription, rate })
    }

    /// `tasks/resubscribe` and `SubscribeToTask`: the caller's task's events from the first,
    /// then live until its final status; charged as a read.
    pub async fn subscribe(
        &self,
        principal: &Principal,
        request: SubscribeRequest,
    ) -> Result<Streamed, ApiError> {
        self.charge(principal, Bucket::Read).await?;
        let place = self.hold_stream(&principal.owner).await?;
        let subscription = self.open_stream(place, &request.id).await?;
        Ok(Streamed {
            subscription,
            rate: None,
        })
    }

    /// One of the owner's stream places, or the refusal naming the cap (429 `-32003`).
    async fn hold_stream(&self, owner: &Owner) -> Result<StreamPlace, ApiError> {
        self.runtime
            .hold_stream(owner)
            .await?
            .ok_or_else(|| ApiError::RateLimited {
                retry_after_secs: self.runtime.settings().keepalive.as_secs(),
                bucket: "streams",
                limit: Some(
                    u32::try_from(self.runtime.settings().max_streams_per_owner)
                        .unwrap_or(u32::MAX),
                ),
            })
    }

    async fn open_stream(
        &self,
        place: StreamPlace,
        task_id: &str,
    ) -> Result<Subscription, ApiError> {
        match self.runtime.subscribe_with(place, task_id).await? {
            Subscribed::Stream(subscription) => Ok(subscription),
            Subscribed::NotFound | Subscribed::Busy { .. } => {
                Err(ApiError::TaskNotFound(task_id.to_string()))
            }
        }
    }

    /// What every send does before its skill runs, `message_key` being the message's
    /// idempotency key ([`message_key`]): a message sent again is recognised; a
    /// continued task is read, checked (it ended, it may be continued, its context, the size
    /// it would be stored at) and the message is charged; then the task is made `submitted`
    /// with the message in its history, and the skill's request with the conversation so far.
    async fn admit(
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

    /// The task a message that may run makes `submitted` (the continued task with the message
    /// appended, or a new one), and what its skill is asked: the message and the conversation
    /// so far (the continued task's turns, or the recent tasks of the context it names).
    async fn submission(
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

    /// The charge a blocking send may leave to the save of its task, with the store's saves
    /// that apply it: then its skill runs first, and one atomic step of the store checks the
    /// message, charges the caller and stores the task (one round trip to Redis instead of
    /// three). Only for a new message (no task to read), without a push config or a
    /// simulation, to a skill of the `default` bucket (cheap and local: running it before the
    /// charge risks little), from an owner not held on the charge-first path, with a limiter
    /// that keeps its buckets in the store's Redis and a bucket open to the plan. Everything
    /// else is charged before its skill runs: an LLM call of the `expensive` bucket never runs
    /// uncharged, and a closed bucket is refused before anything runs.
    fn deferred_charge(
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
    async fn send_charged_by_its_save(
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
    async fn run_to_stored(
        &self,
        skill: &dyn Skill,
        request: SkillRequest,
        submitted: Task,
    ) -> Result<EndedTask, ApiError> {
        let ended = ended(submitted, self.run(skill, request).await?)?;
        self.check_task_size(ended.task.json.len())?;
        Ok(ended)
    }

    /// Admits a message exactly as a blocking send does, then starts its task on the runtime
    /// (its skill streaming its answer into the task's events) without waiting for it to end.
    /// The message is recorded as the task starts, so the same message sent again, even at the
    /// same time through another replica, answers with this task.
    async fn begin(
        &self,
        principal: &Principal,
        request: SendRequest,
        message_key: String,
    ) -> Result<Begun, ApiError> {
        let simulation = request.simulation.clone();
        let wire = request.wire;
        let Admitted {
            decision,
            bucket,
            message_key,
            skill,
            submitted,
            new_in_context,
            request: skill_request,
            push,
        } = match self.admit(principal, request, message_key).await? {
            Prepared::Replayed(task_id) => return Ok(Begun::Replayed(task_id)),
            Prepared::Admitted(admitted) => *admitted,
        };
        let task_id = submitted.id.clone();
        if let (Some(Simulation::Webhook(fault)), Some(push)) = (&simulation, &self.push) {
            push.set_fault(&principal.owner, &task_id, fault).await?;
        }
        if let Some(config) = push {
            self.push()?
                .set_config(&principal.owner, &task_id, config, wire)
                .await?;
        }
        let new = NewTask {
            owner: principal.owner.clone(),
            new_in_context,
            message_key,
            task: submitted.clone(),
        };
        let timeout = self.skill_timeout;
        let metrics = Arc::clone(&self.metrics);
        let work = move |sink: EventSink| async move {
            let skill_id = skill.info().id;
            let artifact_id = Uuid::new_v4().to_string();
            let outcome = match simulated_failure(simulation.as_ref(), skill_id) {
                Some(reason) => {
                    if simulation == Some(Simulation::FailMidStream) {
                        let part = Artifact {
                            artifact_id: artifact_id.clone(),
                            name: Some("answer".into()),
                            parts: vec![Part::text(PART_OF_AN_ANSWER)],
                        };
                        if let Err(error) = sink.artifact(part, false, false).await {
                            tracing::warn!(%error, "a simulated chunk could not be logged");
                        }
                    }
                    Err(reason)
                }
                None => {
                    match run_streamed(skill.as_ref(), skill_request, &sink, &artifact_id, timeout)
                        .await
                    {
                        StreamedRun::Done(output) => Ok(output),
                        StreamedRun::Failed(reason) => Err(reason),
                    }
                }
            };
            let task = finish_task(submitted, &artifact_id, outcome);
            metrics.task(skill_id, task.status.state.as_str());
            task
        };
        match self.runtime.start(new, work).await? {
            Started::Running(submitted) => Ok(Begun::Started {
                task_id,
                submitted,
                rate: (decision, bucket),
            }),
            Started::Seen(task_id) => Ok(Begun::Replayed(task_id)),
            Started::Busy { limit } => Err(ApiError::RateLimited {
                retry_after_secs: self.runtime.settings().lease.as_secs(),
                bucket: "running",
                limit: Some(u32::try_from(limit).unwrap_or(u32::MAX)),
            }),
        }
    }

    /// The skill a message asks for (`metadata.skillId`), else `default_skill`, else the
    /// catalogue's default.
    fn skill_for(
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

    async fn run(
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

/// The checks of a user message beyond its types: the params are valid once these pass.
pub fn validate_user_message(message: &Message) -> Result<(), ApiError> {
    let invalid = |why: &str| Err(ApiError::InvalidParams(why.to_string()));
    if message.kind != "message" {
        return invalid("message.kind must be \"message\"");
    }
    if message.role != Role::User {
        return invalid("message.role must be \"user\"");
    }
    if message.message_id.trim().is_empty() {
        return invalid("message.messageId must be a non-empty string");
    }
    for (field, value) in [
        ("messageId", Some(&message.message_id)),
        ("taskId", message.task_id.as_ref()),
        ("contextId", message.context_id.as_ref()),
    ] {
        if value.is_some_and(|id| id.chars().count() > MAX_ID_CHARS) {
            return invalid(&format!(
                "message.{field} is longer than the limit of {MAX_ID_CHARS} characters"
            ));
        }
    }
    if message.parts.is_empty() {
        return invalid("message.parts must hold at least one text or data part");
    }
    if message.parts.iter().any(|p| matches!(p, Part::File { .. })) {
        return Err(ApiError::ContentTypeNotSupported(
            "file parts are not supported; send text or data parts".into(),
        ));
    }
    Ok(())
}

/// Refuses a message for a task that is still running: its turn is not over.
fn ended_already(task: &Task) -> Result<(), ApiError> {
    if task.status.state.is_terminal() {
        return Ok(());
    }
    Err(ApiError::InvalidParams(format!(
        "task `{}` is still {}; wait for it to end or cancel it before sending it another message",
        task.id,
        task.status.state.as_str()
    )))
}

/// The message a send carried, for the conformance kit.
fn sent_message(params: &MessageSendParams) -> Result<SentMessage, ApiError> {
    Ok(SentMessage {
        message_id: params.message.message_id.clone(),
        content_hash: message_key(params)?,
    })
}

/// The idempotency key of a message: a hash of its content as the server understood it
/// (message, its id included, and configuration; unknown fields dropped), so that the same
/// message sent again is recognised and another message under a used id is one of its own.
fn message_key(params: &MessageSendParams) -> Result<String, ApiError> {
    let content = serde_json::to_string(&(&params.message, &params.configuration))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(message_key_hash(&content))
}

fn merged_data(message: &Message) -> Map<String, Value> {
    let mut data = Map::new();
    for part in &message.parts {
        if let Part::Data { data: fields, .. } = part {
            data.extend(fields.clone());
        }
    }
    data
}

fn turns(history: &[Message]) -> Vec<Turn> {
    history
        .iter()
        .map(|m| Turn {
            speaker: match m.role {
                Role::User => Speaker::User,
                Role::Agent => Speaker::Agent,
            },
            text: m.text(),
        })
        .collect()
}

fn now_timestamp() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn skill_metadata(skill_id: &str) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("skillId".into(), Value::String(skill_id.to_string()));
    metadata
}

/// The reason a simulated failure gives, when the conformance kit asks for one.
fn simulated_failure(simulation: Option<&Simulation>, skill_id: &str) -> Option<String> {
    let scenario = match simulation? {
        Simulation::SkillFailed => "skill_failed",
        Simulation::FailMidStream => "fail_mid_stream",
        Simulation::RateLimited { .. } | Simulation::Webhook(_) => return None,
    };
    Some(format!(
        "The skill `{skill_id}` failed (simulated by the conformance kit: {scenario})."
    ))
}

/// A `submitted` task ended with its skill's outcome, on either send path: the answer as the
/// artifact `artifact_id` (the one its chunks were streamed under, for a task that ran after
/// its call returned), the agent's reply in the history.
/// The terminal task a skill's outcome makes of `submitted`, as it is stored (both blocking
/// send paths).
fn ended(submitted: Task, outcome: Result<SkillOutput, String>) -> Result<EndedTask, ApiError> {
    let task = finish_task(submitted, &Uuid::new_v4().to_string(), outcome);
    Ok(EndedTask {
        task: StoredTask::of(&task)?,
        state: task.status.state.as_str(),
    })
}

fn finish_task(mut task: Task, artifact_id: &str, outcome: Result<SkillOutput, String>) -> Task {
    let (state, reply, artifacts) = match outcome {
        Ok(output) => {
            let artifact = Artifact {
                artifact_id: artifact_id.to_string(),
                name: Some(output.artifact_name.to_string()),
                parts: vec![Part::text(output.text.clone()), Part::data(output.data)],
            };
            (TaskState::Completed, output.text, vec![artifact])
        }
        Err(reason) => (TaskState::Failed, reason, Vec::new()),
    };
    let mut agent = Message::agent_text(Uuid::new_v4().to_string(), reply);
    agent.task_id = Some(task.id.clone());
    agent.context_id = Some(task.context_id.clone());
    task.history.push(agent.clone());
    task.artifacts = artifacts;
    task.status = TaskStatus {
        state,
        message: (state == TaskState::Failed).then_some(agent),
        timestamp: Some(now_timestamp()),
    };
    task
}

/// The refusal of a push config id the task has none of (`None`: the task has no config).
fn no_push_config(task_id: &str, config_id: Option<&str>) -> ApiError {
    ApiError::InvalidParams(match config_id {
        Some(id) => format!("task `{task_id}` has no push notification config `{id}`"),
        None => format!("task `{task_id}` has no push notification config"),
    })
}
