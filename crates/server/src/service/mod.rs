//! The methods, independent of HTTP and of the wire: a typed request in, the task (as stored,
//! 0.3 JSON) or an `ApiError` out. A binding parses its params into these requests
//! (`requests`) and spells the answers; a new capability (streaming with `stream` and
//! `subscribe`, push-notification configs) is one more method here and one more row there.

mod deferred;
pub mod listing;
mod plan;
mod push_configs;
mod reads;
mod requests;
mod send;
mod simulation;
mod streams;
mod tasks;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use skills::{Bucket, SkillRegistry};

use crate::auth::Principal;
use crate::config::LimitSettings;
use crate::error::ApiError;
use crate::limits::{ChargeFirstOwners, Decision, RateLimiter};
use crate::metrics::Metrics;
use crate::push::Push;
use crate::runtime::TaskRuntime;
use crate::store::{Owner, TaskStore};

pub use plan::{BucketFacts, PlanFacts, PlanRead};
pub use requests::{
    CancelRequest, ConfigPage, DeletePushConfigRequest, FinishedTask, GetPushConfigRequest,
    GetRequest, ListPushConfigsRequest, ListRequest, MAX_ID_CHARS, Reply, SendRequest, SentMessage,
    SetPushConfigRequest, SizeCaps, Streamed, SubscribeRequest, Tasks,
};
pub use simulation::Simulation;
pub use tasks::validate_user_message;

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
    plan_limits: Option<LimitSettings>,
}

/// How long a sender refused for a full store is told to wait: tasks leave as they expire, the
/// oldest first.
pub(super) const FULL_STORE_RETRY_SECS: u64 = 60;

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
            plan_limits: None,
        }
    }

    /// The same service, told the plans' limits when they apply (`None`: no limit applies), for
    /// the extended card's account of the caller's plan.
    #[must_use]
    pub fn with_plan_limits(self, limits: Option<LimitSettings>) -> Self {
        A2aService {
            plan_limits: limits,
            ..self
        }
    }

    /// The registry, for the agent card.
    pub fn skills(&self) -> &SkillRegistry {
        &self.skills
    }

    /// Push notifications, which the method table offers only when the deployment does.
    pub(super) fn push(&self) -> Result<&Push, ApiError> {
        self.push.as_deref().ok_or_else(|| {
            ApiError::Internal("a push-notification call reached a server without push".into())
        })
    }

    /// The owner's task once it ended, waiting while it works.
    pub(super) async fn ended_task(&self, owner: &Owner, task_id: &str) -> Result<Bytes, ApiError> {
        self.runtime
            .ended(owner, task_id)
            .await?
            .ok_or_else(|| ApiError::TaskNotFound(task_id.to_string()))
    }

    /// Charges one call of the caller to `bucket`, or refuses it (429 `-32003`).
    pub(super) async fn charge(
        &self,
        principal: &Principal,
        bucket: Bucket,
    ) -> Result<Decision, ApiError> {
        let decision = self
            .limiter
            .check(&principal.owner, principal.plan, bucket)
            .await;
        self.admitted(principal, bucket, decision)
    }

    /// A call charged to `bucket` with `decision`, or its refusal (429 `-32003`). A refusal in
    /// the `default` bucket holds the owner on the charge-first path until its `retryAfter`
    /// has passed ([`ChargeFirstOwners`]).
    pub(super) fn admitted(
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
    pub(super) fn check_task_size(&self, bytes: usize) -> Result<(), ApiError> {
        if bytes <= self.sizes.max_task_bytes {
            return Ok(());
        }
        Err(ApiError::InvalidParams(format!(
            "the task would be {bytes} bytes stored, over the limit of {} bytes; send a shorter message, or start a new task in the same conversation (contextId without taskId)",
            self.sizes.max_task_bytes
        )))
    }

    /// The owner's task, working or kept.
    pub(super) async fn owned_task(&self, owner: &Owner, id: &str) -> Result<Bytes, ApiError> {
        self.runtime
            .read(owner, id)
            .await?
            .ok_or_else(|| ApiError::TaskNotFound(id.to_string()))
    }
}
