//! The method table: every JSON-RPC method of both wires in one place — its name, the wire it
//! belongs to, how its params become a typed request of the service (or why it is refused
//! today), and how it is metered. Wire selection, metrics labels, the kit's in-service scenarios
//! and the 1.0 refusals all read it; after [`find`] nothing is dispatched by name.
//!
//! Adding a method: one row here, its [`Call`] variant and conversion, its arm in
//! [`crate::pipeline::call::serve`], and the service method that runs it. The methods a deployment may switch off (streaming and resubscription,
//! push-notification configs) are [`Handler::Optional`].

use a2a_types::v1::CancelTaskRequest;
use a2a_types::v1_push::{
    ListTaskPushNotificationConfigsRequest, TaskPushNotificationConfigRequest,
    V1TaskPushNotificationConfig,
};
use a2a_types::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, MessageSendParams, PushNotificationConfig, TaskIdParams,
    TaskPushNotificationConfig, TaskQueryParams,
};
use bytes::Bytes;
use serde::Serialize;

use crate::bindings::card::AgentCards;
use crate::bindings::jsonrpc::params::{Params, parse_member, parse_params};
use crate::bindings::jsonrpc::v1;
use crate::error::{ApiError, Refusal};
use crate::pipeline::call::{Call, Capabilities, Capability, Served};
use crate::service::{
    CancelRequest, ConfigPage, DeletePushConfigRequest, FinishedTask, GetPushConfigRequest,
    GetRequest, ListPushConfigsRequest, Reply, SendRequest, SetPushConfigRequest, Streamed,
    SubscribeRequest, validate_user_message,
};
use crate::wire::{Version, Wire};

/// One row of the table.
#[derive(Debug)]
pub struct Method {
    /// The JSON-RPC method name; also its metrics label.
    pub name: &'static str,
    /// The wire it belongs to: its name alone chooses the wire, whatever `A2A-Version` says.
    pub version: Version,
    /// What answers it.
    pub handler: Handler,
    /// Which rate-limit bucket it is charged to.
    pub metering: Metering,
}

/// What answers a method.
#[derive(Debug)]
pub enum Handler {
    /// Parses the params into a typed request (`-32602` when they do not fit) on a deployment
    /// offering the given capabilities (a send reads its inline push config only when push
    /// notifications are offered); the request's [`Call`] variant chooses the service method.
    Serve(Parse),
    /// Served as [`Handler::Serve`] when the deployment offers the capability, refused when it
    /// does not: `-32601` on 0.3, the [`Refusal`]'s error on 1.0.
    Optional(Capability, Parse, Refusal),
}

/// How a method's params become its typed request, on a deployment offering the capabilities.
pub type Parse = fn(Params<'_>, Capabilities) -> Result<Call, ApiError>;

/// The bucket a method is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metering {
    /// The bucket of the skill the message asks for (`default` or `expensive`).
    Skill,
    /// The `read` bucket.
    Read,
}

/// A call's answer: one JSON-RPC result, or a stream of them.
pub enum Answer {
    /// One result.
    Reply(Reply),
    /// A task's events, each written as a result of the method's wire.
    Stream(Streamed),
}

/// What the conformance kit records of a call's outcome: a reply as it is, a stream as an empty
/// reply with the stream's charge (its events are not recorded), kept in `stand_in`.
pub fn recorded<'a>(
    outcome: &'a Result<Answer, ApiError>,
    stand_in: &'a mut Option<Reply>,
) -> Result<&'a Reply, &'a ApiError> {
    match outcome {
        Ok(Answer::Reply(reply)) => Ok(reply),
        Ok(Answer::Stream(stream)) => Ok(stand_in.insert(Reply {
            result: Bytes::new(),
            rate: stream.rate,
            sent: None,
        })),
        Err(error) => Err(error),
    }
}

/// Every method of both wires.
pub static METHODS: [Method; 23] = [
    serve("message/send", Version::V03, Metering::Skill, send_v03),
    optional(
        "message/stream",
        Version::V03,
        Metering::Skill,
        Capability::Streaming,
        stream_v03,
        Refusal::Operation,
    ),
    serve("tasks/get", Version::V03, Metering::Read, get_v03),
    serve("tasks/cancel", Version::V03, Metering::Read, cancel_v03),
    optional(
        "tasks/resubscribe",
        Version::V03,
        Metering::Read,
        Capability::Streaming,
        subscribe_v03,
        Refusal::Operation,
    ),
    optional(
        "tasks/pushNotificationConfig/set",
        Version::V03,
        Metering::Read,
        Capability::PushNotifications,
        set_push_v03,
        Refusal::Push,
    ),
    optional(
        "tasks/pushNotificationConfig/get",
        Version::V03,
        Metering::Read,
        Capability::PushNotifications,
        get_push_v03,
        Refusal::Push,
    ),
    optional(
        "tasks/pushNotificationConfig/list",
        Version::V03,
        Metering::Read,
        Capability::PushNotifications,
        list_push_v03,
        Refusal::Push,
    ),
    optional(
        "tasks/pushNotificationConfig/delete",
        Version::V03,
        Metering::Read,
        Capability::PushNotifications,
        delete_push_v03,
        Refusal::Push,
    ),
    serve("SendMessage", Version::V1, Metering::Skill, send_v1),
    optional(
        "SendStreamingMessage",
        Version::V1,
        Metering::Skill,
        Capability::Streaming,
        stream_v1,
        Refusal::Operation,
    ),
    serve("GetTask", Version::V1, Metering::Read, get_v1),
    serve("CancelTask", Version::V1, Metering::Read, cancel_v1),
    serve("ListTasks", Version::V1, Metering::Read, list_v1),
    optional(
        "SubscribeToTask",
        Version::V1,
        Metering::Read,
        Capability::Streaming,
        subscribe_v1,
        Refusal::Operation,
    ),
    optional(
        "CreateTaskPushNotificationConfig",
        Version::V1,
        Metering::Read,
        Capability::PushNotifications,
        set_push_v1,
        Refusal::Push,
    ),
    optional(
        "GetTaskPushNotificationConfig",
        Version::V1,
        Metering::Read,
        Capability::PushNotifications,
        get_push_v1,
        Refusal::Push,
    ),
    optional(
        "ListTaskPushNotificationConfigs",
        Version::V1,
        Metering::Read,
        Capability::PushNotifications,
        list_push_v1,
        Refusal::Push,
    ),
    optional(
        "DeleteTaskPushNotificationConfig",
        Version::V1,
        Metering::Read,
        Capability::PushNotifications,
        delete_push_v1,
        Refusal::Push,
    ),
    serve(
        "agent/getAuthenticatedExtendedCard",
        Version::V03,
        Metering::Read,
        extended_card,
    ),
    serve(
        "GetExtendedAgentCard",
        Version::V1,
        Metering::Read,
        extended_card,
    ),
    // The names of the 1.0 release candidates, which SDKs of that time still send; served with
    // the params and results of their 1.0 names.
    optional(
        "SetTaskPushNotificationConfig",
        Version::V1,
        Metering::Read,
        Capability::PushNotifications,
        set_push_v1,
        Refusal::Push,
    ),
    optional(
        "ListTaskPushNotificationConfig",
        Version::V1,
        Metering::Read,
        Capability::PushNotifications,
        list_push_v1,
        Refusal::Push,
    ),
];

impl Method {
    /// Whether the method answers with an event stream (`message/stream`, `tasks/resubscribe`,
    /// `SendStreamingMessage`, `SubscribeToTask`): its failures are sent as one event too.
    pub fn streams(&self) -> bool {
        matches!(self.handler, Handler::Optional(Capability::Streaming, ..))
    }
}

const fn serve(name: &'static str, version: Version, metering: Metering, parse: Parse) -> Method {
    Method {
        name,
        version,
        handler: Handler::Serve(parse),
        metering,
    }
}

const fn optional(
    name: &'static str,
    version: Version,
    metering: Metering,
    capability: Capability,
    parse: Parse,
    refusal: Refusal,
) -> Method {
    Method {
        name,
        version,
        handler: Handler::Optional(capability, parse, refusal),
        metering,
    }
}

/// The row of a method name.
pub fn find(name: &str) -> Option<&'static Method> {
    METHODS.iter().find(|method| method.name == name)
}

/// Chooses the wire: an `A2A-Version` this server does not speak is refused whatever the
/// method; otherwise a method of the table decides, and for anything else (unknown methods,
/// unreadable bodies, refusals before the body is read) the header does.
pub fn select(version_header: Option<&str>, method: Option<&Method>) -> Wire {
    match (Wire::from_header(version_header), method) {
        (unsupported @ Wire::Unsupported(_), _) => unsupported,
        (_, Some(method)) => method.version.into(),
        (by_header, None) => by_header,
    }
}

/// The metrics label of a call: its method's name, `other` for a name outside the table (so
/// labels stay bounded).
pub fn label(method: Option<&Method>) -> &'static str {
    method.map_or("other", |method| method.name)
}

impl Method {
    /// The method's typed request, or the error its method or params get, on a deployment
    /// offering `offered`. Nothing runs, so a notification is checked this way before its
    /// refusal.
    pub fn parse(&self, params: Params<'_>, offered: Capabilities) -> Result<Call, ApiError> {
        match self.handler {
            Handler::Serve(parse) => parse(params, offered),
            Handler::Optional(capability, parse, _) if offered.offers(capability) => {
                parse(params, offered)
            }
            Handler::Optional(_, _, refusal) => Err(ApiError::Unsupported {
                method: self.name,
                refusal,
            }),
        }
    }

    /// Whether the call runs a skill on a deployment offering `offered`: the conformance kit's
    /// in-service scenarios (`rate_limited` in the skill's bucket, `skill_failed`) apply to
    /// these calls only.
    pub fn runs_a_skill(&self, offered: Capabilities) -> bool {
        let served = match self.handler {
            Handler::Serve(_) => true,
            Handler::Optional(capability, _, _) => offered.offers(capability),
        };
        served && self.metering == Metering::Skill
    }
}

/// Spells what the service served in the method's wire.
/// `cards` are the agents' cards, of which an extended card is made.
pub(crate) fn render(
    version: Version,
    served: Served,
    cards: AgentCards<'_>,
) -> Result<Answer, ApiError> {
    let reply = match served {
        Served::Stream(streamed) => return Ok(Answer::Stream(streamed)),
        Served::Sent(reply) => match version {
            Version::V03 => reply,
            Version::V1 => v1::send_reply(reply)?,
        },
        Served::Task(task) => task_reply(version, task)?,
        Served::Page(page) => v1::list_reply(page)?,
        Served::PushConfig(config) => push_config_reply(version, config)?,
        Served::PushConfigs(configs, next) => match version {
            Version::V03 => json_reply(&configs)?,
            Version::V1 => v1::push_configs_reply(configs, next)?,
        },
        // 0.3 answers `null`; 1.0 answers `google.protobuf.Empty`, `{}` in JSON.
        Served::Deleted => Reply::result(Bytes::from_static(match version {
            Version::V03 => b"null",
            Version::V1 => b"{}",
        })),
        Served::ExtendedCard { read, agent } => Reply {
            result: cards
                .of(agent)
                .extended(version, &read.facts)
                .map_err(|e| ApiError::Internal(format!("the extended card: {e}")))?,
            rate: Some((read.decision, skills::Bucket::Read)),
            sent: None,
        },
    };
    Ok(Answer::Reply(reply))
}

fn task_reply(version: Version, stored: bytes::Bytes) -> Result<Reply, ApiError> {
    match version {
        Version::V03 => Ok(Reply::result(stored)),
        Version::V1 => v1::task_reply(&stored),
    }
}

fn push_config_reply(
    version: Version,
    config: TaskPushNotificationConfig,
) -> Result<Reply, ApiError> {
    match version {
        Version::V03 => json_reply(&config),
        Version::V1 => json_reply(&V1TaskPushNotificationConfig::from(config)),
    }
}

fn json_reply<T: Serialize>(value: &T) -> Result<Reply, ApiError> {
    serde_json::to_vec(value)
        .map(|json| Reply::result(Bytes::from(json)))
        .map_err(|e| ApiError::Internal(e.to_string()))
}

fn send_v03(params: Params<'_>, offered: Capabilities) -> Result<Call, ApiError> {
    user_message_v03(params, offered).map(Call::Send)
}

fn stream_v03(params: Params<'_>, offered: Capabilities) -> Result<Call, ApiError> {
    user_message_v03(params, offered).map(Call::Stream)
}

/// A 0.3 message: blocking unless `configuration.blocking` is `false`; its
/// `configuration.pushNotificationConfig` read when push notifications are offered (ignored,
/// as before, when not).
fn user_message_v03(params: Params<'_>, offered: Capabilities) -> Result<SendRequest, ApiError> {
    let params: MessageSendParams = parse_params(params)?;
    validate_user_message(&params.message)?;
    let configuration = params.configuration.as_ref();
    let blocking = configuration
        .and_then(|c| c.get("blocking"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true);
    let push = match configuration.and_then(|c| c.get("pushNotificationConfig")) {
        Some(config) if offered.push_notifications && !config.is_null() => {
            Some(parse_member::<PushNotificationConfig>(
                config,
                "configuration.pushNotificationConfig",
            )?)
        }
        _ => None,
    };
    Ok(SendRequest {
        params,
        finished: FinishedTask::Continue,
        simulation: None,
        language: None,
        default_skill: None,
        blocking,
        push,
        wire: Version::V03,
    })
}

fn subscribe_v03(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let params: TaskIdParams = parse_params(params)?;
    Ok(Call::Subscribe(SubscribeRequest {
        id: params.id,
        resume_after: None,
        refuse_finished: false,
    }))
}

fn stream_v1(params: Params<'_>, offered: Capabilities) -> Result<Call, ApiError> {
    v1::send_request(parse_params(params)?, offered.push_notifications).map(Call::Stream)
}

/// `SubscribeToTask` takes the params of `CancelTask`: the task id (and an ignored tenant).
fn subscribe_v1(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let request: CancelTaskRequest = parse_params(params)?;
    Ok(Call::Subscribe(SubscribeRequest {
        id: request.id,
        resume_after: None,
        refuse_finished: true,
    }))
}

fn set_push_v03(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let params: TaskPushNotificationConfig = parse_params(params)?;
    Ok(Call::SetPushConfig(SetPushConfigRequest {
        task_id: params.task_id,
        config: params.push_notification_config,
        wire: Version::V03,
    }))
}

/// 0.3 `get`: the config named by `pushNotificationConfigId`, or the task's first.
fn get_push_v03(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let params: GetTaskPushNotificationConfigParams = parse_params(params)?;
    Ok(Call::GetPushConfig(GetPushConfigRequest {
        task_id: params.id,
        config_id: params.push_notification_config_id,
    }))
}

fn list_push_v03(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let params: ListTaskPushNotificationConfigParams = parse_params(params)?;
    Ok(Call::ListPushConfigs(ListPushConfigsRequest {
        task_id: params.id,
        page: ConfigPage::default(),
    }))
}

fn delete_push_v03(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let params: DeleteTaskPushNotificationConfigParams = parse_params(params)?;
    Ok(Call::DeletePushConfig(DeletePushConfigRequest {
        task_id: params.id,
        config_id: params.push_notification_config_id,
    }))
}

fn set_push_v1(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    v1::set_push_request(parse_params(params)?).map(Call::SetPushConfig)
}

fn get_push_v1(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let request: TaskPushNotificationConfigRequest = parse_params(params)?;
    Ok(Call::GetPushConfig(GetPushConfigRequest {
        task_id: request.task_id,
        config_id: Some(request.id),
    }))
}

fn list_push_v1(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let request: ListTaskPushNotificationConfigsRequest = parse_params(params)?;
    Ok(Call::ListPushConfigs(v1::list_push_request(request)))
}

fn delete_push_v1(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let request: TaskPushNotificationConfigRequest = parse_params(params)?;
    Ok(Call::DeletePushConfig(DeletePushConfigRequest {
        task_id: request.task_id,
        config_id: request.id,
    }))
}

/// The extended card takes no params on 0.3 and an ignored `tenant` on 1.0: absent params or an
/// object of any members.
fn extended_card(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    match params.into_tree() {
        serde_json::Value::Null | serde_json::Value::Object(_) => {
            Ok(Call::ExtendedCard { agent: None })
        }
        _ => Err(ApiError::InvalidParams("params must be an object".into())),
    }
}

fn get_v03(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let params: TaskQueryParams = parse_params(params)?;
    Ok(Call::Get(GetRequest {
        id: params.id,
        history_length: params.history_length,
    }))
}

fn cancel_v03(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    let params: TaskIdParams = parse_params(params)?;
    Ok(Call::Cancel(CancelRequest { id: params.id }))
}

fn send_v1(params: Params<'_>, offered: Capabilities) -> Result<Call, ApiError> {
    v1::send_request(parse_params(params)?, offered.push_notifications).map(Call::Send)
}

fn get_v1(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    parse_params(params).map(|request| Call::Get(v1::get_request(request)))
}

fn cancel_v1(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    parse_params(params).map(|request| Call::Cancel(v1::cancel_request(request)))
}

fn list_v1(params: Params<'_>, _: Capabilities) -> Result<Call, ApiError> {
    v1::list_request(parse_params(params)?).map(Call::List)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(header: Option<&str>, method: &str) -> Wire {
        select(header, find(method))
    }

    #[test]
    fn wire_follows_the_method_then_the_header() {
        assert_eq!(wire(None, "SendMessage"), Wire::V1);
        assert_eq!(wire(Some("0.3"), "GetTask"), Wire::V1);
        assert_eq!(wire(Some("1.0"), "message/send"), Wire::V03);
        assert_eq!(wire(Some("1.0"), "message/stream"), Wire::V03);
        assert_eq!(wire(None, "SubscribeToTask"), Wire::V1);
        assert_eq!(wire(None, "nope"), Wire::V03);
        assert_eq!(wire(Some("1.0"), "nope"), Wire::V1);
        assert_eq!(select(Some("1.0.1"), None), Wire::V1);
        assert_eq!(select(Some(" 0.3 "), None), Wire::V03);
        assert_eq!(select(Some(""), None), Wire::V03);
        assert_eq!(
            wire(Some("2.0"), "SendMessage"),
            Wire::Unsupported("2.0".into())
        );
        assert_eq!(
            select(Some("banana"), None),
            Wire::Unsupported("banana".into())
        );
        assert!(Wire::Unsupported("9".into()).is_v1());
        assert!(!Wire::V03.is_v1());
    }

    #[test]
    fn labels_are_the_table_names_and_nothing_else() {
        assert_eq!(label(find("tasks/get")), "tasks/get");
        assert_eq!(label(find("SendMessage")), "SendMessage");
        assert_eq!(label(find("evil/\"method")), "other");
        let mut names: Vec<_> = METHODS.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METHODS.len(), "every name once");
    }

    #[test]
    fn refused_methods_are_refused_with_their_1_0_error_and_only_sends_run_a_skill() {
        let off = Capabilities {
            streaming: false,
            push_notifications: false,
        };
        let refused = find("SendStreamingMessage")
            .unwrap()
            .parse(Params::Raw(None), off)
            .unwrap_err();
        assert!(matches!(
            refused,
            ApiError::Unsupported {
                method: "SendStreamingMessage",
                refusal: Refusal::Operation
            }
        ));
        assert_eq!(
            refused.to_string(),
            "Method not found: SendStreamingMessage"
        );
        let running: Vec<_> = METHODS
            .iter()
            .filter(|m| m.runs_a_skill(off))
            .map(|m| m.name)
            .collect();
        assert_eq!(running, ["message/send", "SendMessage"]);
        let on = Capabilities {
            streaming: true,
            push_notifications: true,
        };
        let running: Vec<_> = METHODS
            .iter()
            .filter(|m| m.runs_a_skill(on))
            .map(|m| m.name)
            .collect();
        assert_eq!(
            running,
            [
                "message/send",
                "message/stream",
                "SendMessage",
                "SendStreamingMessage"
            ]
        );
    }
}
