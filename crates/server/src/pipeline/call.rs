//! A call in the service's terms, whichever binding parsed it: its typed request ([`Call`]),
//! the capabilities a deployment offers, and the one step that runs it over the service and
//! hands back what it served ([`Served`]), for the binding to spell in its wire.

use a2a_types::TaskPushNotificationConfig;
use bytes::Bytes;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::service::listing::TaskPage;
use crate::service::{
    A2aService, CancelRequest, DeletePushConfigRequest, GetPushConfigRequest, GetRequest,
    ListPushConfigsRequest, ListRequest, PlanRead, Reply, SendRequest, SetPushConfigRequest,
    Simulation, Streamed, SubscribeRequest,
};

/// A capability a deployment may switch off (`A2A__AGENT__*`), as its card advertises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capability {
    /// Streamed answers and resubscription (`capabilities.streaming`).
    Streaming,
    /// Push-notification configs and inline configs on sends
    /// (`capabilities.pushNotifications`).
    PushNotifications,
}

/// The capabilities a deployment offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Capabilities {
    /// Streamed answers and resubscription.
    pub(crate) streaming: bool,
    /// Push-notification configs and the webhooks they name.
    pub(crate) push_notifications: bool,
}

impl Capabilities {
    /// Whether `capability` is offered.
    pub(crate) fn offers(self, capability: Capability) -> bool {
        match capability {
            Capability::Streaming => self.streaming,
            Capability::PushNotifications => self.push_notifications,
        }
    }
}

/// A call whose method exists and whose params are valid, in the service's terms.
#[derive(Debug)]
pub(crate) enum Call {
    /// A message to a skill.
    Send(SendRequest),
    /// One task.
    Get(GetRequest),
    /// A cancel.
    Cancel(CancelRequest),
    /// A page of tasks (1.0 only).
    List(ListRequest),
    /// A message to a skill, answered with its task's events.
    Stream(SendRequest),
    /// A task's events.
    Subscribe(SubscribeRequest),
    /// A push config set for a task.
    SetPushConfig(SetPushConfigRequest),
    /// One push config of a task.
    GetPushConfig(GetPushConfigRequest),
    /// A task's push configs.
    ListPushConfigs(ListPushConfigsRequest),
    /// A push config removed.
    DeletePushConfig(DeletePushConfigRequest),
    /// The authenticated extended card of the agent called: the whole agent (`None`) or a
    /// skill's own agent.
    ExtendedCard {
        /// The skill whose agent was called, if one was.
        agent: Option<&'static str>,
    },
}

/// What a caller brings besides its request: for a message, its language preference, the
/// skill its address stands for and the conformance kit's override; for the extended card, the
/// agent called; for a subscription, the event its stream saw last. Other calls read none.
#[derive(Debug, Default)]
pub(crate) struct Caller {
    /// The caller's language preference (HTTP `Accept-Language`), at most 256 characters.
    pub(crate) language: Option<String>,
    /// The skill a message without `metadata.skillId` goes to (a skill's own agent).
    pub(crate) default_skill: Option<&'static str>,
    /// The conformance kit's override, when a scenario simulates a condition of the service.
    pub(crate) simulation: Option<Simulation>,
    /// The id of the last event a resumed stream's client saw (HTTP `Last-Event-ID`), as sent.
    pub(crate) last_event_id: Option<String>,
}

impl Call {
    /// Hands the caller's context to the call that reads it: a send its language, default
    /// skill and simulation; the extended card the agent called; a subscription the place it
    /// resumes after, which must be an event id this server gave (a whole number: `-32602`
    /// otherwise).
    pub(crate) fn with_caller(&mut self, caller: Caller) -> Result<(), ApiError> {
        match self {
            Call::Send(request) | Call::Stream(request) => {
                request.language = caller.language;
                request.default_skill = caller.default_skill;
                request.simulation = caller.simulation;
            }
            Call::ExtendedCard { agent } => *agent = caller.default_skill,
            Call::Subscribe(request) => {
                request.resume_after = resume_after(caller.last_event_id.as_deref())?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// The place in a task's log a `Last-Event-ID` names: none when absent or empty (as an
/// event-stream client sends it before it saw an event with an id).
fn resume_after(last_event_id: Option<&str>) -> Result<Option<u64>, ApiError> {
    match last_event_id.map(str::trim) {
        None | Some("") => Ok(None),
        Some(id) => id.parse::<u64>().map(Some).map_err(|_| {
            ApiError::InvalidParams(format!(
                "Last-Event-ID `{}` is not the id of an event of this server's streams (a whole number)",
                id.chars().take(32).collect::<String>()
            ))
        }),
    }
}

/// What the service served for a call, before a binding spells it.
pub(crate) enum Served {
    /// A send's answer (the task or message as 0.3 JSON, with its charge).
    Sent(Reply),
    /// A task as stored (0.3 JSON).
    Task(Bytes),
    /// A page of tasks.
    Page(TaskPage),
    /// One push config.
    PushConfig(TaskPushNotificationConfig),
    /// A page of push configs, and the id the next page starts after.
    PushConfigs(Vec<TaskPushNotificationConfig>, Option<String>),
    /// A push config removed.
    Deleted,
    /// A task's events.
    Stream(Streamed),
    /// What the caller's plan gives, for the extended card of the agent called.
    ExtendedCard {
        /// The plan's facts and the read's charge.
        read: PlanRead,
        /// The skill whose agent was called, if one was.
        agent: Option<&'static str>,
    },
}

/// Runs a call over the service.
pub(crate) async fn serve(
    service: &A2aService,
    principal: &Principal,
    call: Call,
) -> Result<Served, ApiError> {
    Ok(match call {
        Call::Send(request) => Served::Sent(service.send(principal, request).await?),
        Call::Get(request) => Served::Task(service.get(principal, request).await?),
        Call::Cancel(request) => Served::Task(service.cancel(principal, request).await?),
        Call::List(request) => Served::Page(service.list(principal, request).await?),
        Call::Stream(request) => Served::Stream(service.stream(principal, request).await?),
        Call::Subscribe(request) => Served::Stream(service.subscribe(principal, request).await?),
        Call::SetPushConfig(request) => {
            Served::PushConfig(service.set_push_config(principal, request).await?)
        }
        Call::GetPushConfig(request) => {
            Served::PushConfig(service.get_push_config(principal, request).await?)
        }
        Call::ListPushConfigs(request) => {
            let (configs, next) = service.list_push_configs(principal, request).await?;
            Served::PushConfigs(configs, next)
        }
        Call::DeletePushConfig(request) => {
            service.delete_push_config(principal, request).await?;
            Served::Deleted
        }
        Call::ExtendedCard { agent } => Served::ExtendedCard {
            read: service.plan_facts(principal).await?,
            agent,
        },
    })
}
