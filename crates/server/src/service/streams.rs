//! Tasks that run after their call returned: `message/stream`, `tasks/resubscribe`, and the
//! start of a task on the runtime that every non-blocking or pushed send shares.

use std::sync::Arc;

use skills::Bucket;
use uuid::Uuid;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::runtime::skill_stream::{StreamedRun, run_streamed};
use crate::runtime::{EventSink, NewTask, Started, StreamPlace, Subscribed, Subscription};
use crate::store::{Owner, decode_task};

use super::A2aService;
use super::requests::{SendRequest, Streamed, SubscribeRequest};
use super::send::{Admitted, Begun, Prepared};
use super::simulation::{Simulation, send_part_of_an_answer, simulated_failure};
use super::tasks::{finish_task, message_key};

impl A2aService {
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
        if request.refuse_finished && request.resume_after.is_none() {
            let task = decode_task(&self.owned_task(&principal.owner, &request.id).await?)?;
            if task.status.state.is_terminal() {
                return Err(ApiError::TaskFinished {
                    task_id: task.id,
                    state: task.status.state.as_str(),
                });
            }
        }
        let place = self.hold_stream(&principal.owner).await?;
        let mut subscription = self.open_stream(place, &request.id).await?;
        if let Some(place) = request.resume_after {
            subscription.resume_after(place);
        }
        Ok(Streamed {
            subscription,
            rate: None,
        })
    }

    /// One of the owner's stream places, or the refusal naming the cap (429 `-32003`).
    pub(super) async fn hold_stream(&self, owner: &Owner) -> Result<StreamPlace, ApiError> {
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

    pub(super) async fn open_stream(
        &self,
        place: StreamPlace,
        task_id: &str,
    ) -> Result<Subscription, ApiError> {
        match self.runtime.subscribe_with(place, task_id).await? {
            Subscribed::Stream(subscription) => Ok(*subscription),
            Subscribed::NotFound | Subscribed::Busy { .. } => {
                Err(ApiError::TaskNotFound(task_id.to_string()))
            }
        }
    }

    /// Admits a message exactly as a blocking send does, then starts its task on the runtime
    /// (its skill streaming its answer into the task's events) without waiting for it to end.
    /// The message is recorded as the task starts, so the same message sent again, even at the
    /// same time through another replica, answers with this task.
    pub(super) async fn begin(
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
                        send_part_of_an_answer(&sink, &artifact_id).await;
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
}
