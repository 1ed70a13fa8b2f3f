//! The resource URLs of §11, each the 1.0 method it stands for, and the params that method's
//! row parses: the path's ids and the query's options as ProtoJSON fields, beside the body's.
//! A path segment such as `{id}:cancel` is split here, as the router cannot match it.

use axum::http::{Method, StatusCode};
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};

use crate::bindings::jsonrpc::methods::{self, Method as Row};
use crate::error::ApiError;

/// Whether an operation reads a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyUse {
    /// No body is read (a `GET` or `DELETE`).
    None,
    /// A body may carry more fields (a cancel's `metadata`); an empty one is no fields.
    Optional,
    /// The body is the request (a message, a push config).
    Required,
}

/// A request's operation and the fields its URL gives.
#[derive(Debug)]
pub(crate) struct Route {
    /// The 1.0 method's row in the method table.
    pub(crate) row: &'static Row,
    /// The fields the path and the query give, as ProtoJSON members of the method's request;
    /// they take precedence over the body's.
    pub(crate) fields: Map<String, Value>,
    /// Whether the body is read.
    pub(crate) body: BodyUse,
    /// The skill whose own agent the call is for: a message without `skillId` goes to it.
    pub(crate) agent: Option<&'static str>,
}

/// A query parameter an operation reads, and how its text becomes a JSON value.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Whole,
    Flag,
}

/// The query parameters of `ListTasks` (§11), by their camelCase names.
const LIST_TASKS: &[(&str, Kind)] = &[
    ("contextId", Kind::Text),
    ("status", Kind::Text),
    ("pageSize", Kind::Whole),
    ("pageToken", Kind::Text),
    ("historyLength", Kind::Whole),
    ("statusTimestampAfter", Kind::Text),
    ("includeArtifacts", Kind::Flag),
];

/// The query parameter of `GetTask`.
const GET_TASK: &[(&str, Kind)] = &[("historyLength", Kind::Whole)];

/// The query parameters of `ListTaskPushNotificationConfigs`.
const LIST_CONFIGS: &[(&str, Kind)] = &[("pageSize", Kind::Whole), ("pageToken", Kind::Text)];

/// The operation `method` and `below` (the request's `path` below the binding's base, as
/// [`crate::paths::rest_target`] splits it) name, with the fields of the path and of `query`
/// (`name=value` pairs, already decoded). A path below the base that names no operation is
/// `MethodNotFound` (404); a known path with another HTTP method is a 405.
pub(crate) fn resolve(
    method: &Method,
    path: &str,
    below: &str,
    query: &[(String, String)],
) -> Result<Route, ApiError> {
    let segments: Vec<&str> = below.split('/').filter(|s| !s.is_empty()).collect();
    let not_found = || ApiError::MethodNotFound(format!("{method} {path}"));
    let Operation {
        name,
        allowed,
        body,
        mut fields,
        options,
    } = operation(method, &segments)?.ok_or_else(not_found)?;
    if !allowed.contains(method) {
        let allow: Vec<&str> = allowed.iter().map(Method::as_str).collect();
        return Err(ApiError::InvalidRequest {
            message: format!(
                "Invalid request: {method} is not allowed on {path}; use {}",
                allow.join(" or ")
            ),
            status: StatusCode::METHOD_NOT_ALLOWED,
        });
    }
    let row = methods::find(name).ok_or_else(not_found)?;
    read_query(query, options, &mut fields)?;
    Ok(Route {
        row,
        fields,
        body,
        agent: None,
    })
}

/// What a resource URL names: its 1.0 method, the HTTP methods it takes, whether it reads a
/// body, the fields its path gives and the query options it reads.
struct Operation {
    name: &'static str,
    allowed: &'static [Method],
    body: BodyUse,
    fields: Map<String, Value>,
    options: &'static [(&'static str, Kind)],
}

const POST: &[Method] = &[Method::POST];
const GET: &[Method] = &[Method::GET];
const GET_OR_POST: &[Method] = &[Method::GET, Method::POST];
const DELETE: &[Method] = &[Method::DELETE];
const GET_OR_DELETE: &[Method] = &[Method::GET, Method::DELETE];

impl Operation {
    fn new(name: &'static str, allowed: &'static [Method], body: BodyUse) -> Self {
        Operation {
            name,
            allowed,
            body,
            fields: Map::new(),
            options: &[],
        }
    }

    /// The operation with the fields its path gives.
    fn with(self, fields: Map<String, Value>) -> Self {
        Operation { fields, ..self }
    }

    /// The operation reading these query options.
    fn reading(self, options: &'static [(&'static str, Kind)]) -> Self {
        Operation { options, ..self }
    }
}

/// The operation the path's `segments` name (`None`: none), with the ids they hold: a route of
/// §11, or the same route below a first segment naming a tenant (`/{tenant}/message:send`),
/// whose name becomes the request's `tenant` (one tenant is served: it is read and ignored).
fn operation(method: &Method, segments: &[&str]) -> Result<Option<Operation>, ApiError> {
    if let Some(operation) = operation_of_tenant(method, segments)? {
        return Ok(Some(operation));
    }
    let [tenant, below @ ..] = segments else {
        return Ok(None);
    };
    let Some(operation) = operation_of_tenant(method, below)? else {
        return Ok(None);
    };
    let mut fields = ids(&[("tenant", tenant)])?;
    fields.extend(operation.fields);
    Ok(Some(Operation {
        fields,
        ..operation
    }))
}

/// The operation a route of §11 names, without a tenant segment. A collection with two
/// operations is told apart by `method`.
fn operation_of_tenant(method: &Method, segments: &[&str]) -> Result<Option<Operation>, ApiError> {
    let op = Operation::new;
    let operation = match segments {
        ["message:send"] => op("SendMessage", POST, BodyUse::Required),
        ["message:stream"] => op("SendStreamingMessage", POST, BodyUse::Required),
        ["extendedAgentCard"] => op("GetExtendedAgentCard", GET, BodyUse::None),
        ["tasks"] => op("ListTasks", GET, BodyUse::None).reading(LIST_TASKS),
        ["tasks", action] => match action.rsplit_once(':') {
            Some((id, "cancel")) => {
                op("CancelTask", POST, BodyUse::Optional).with(ids(&[("id", id)])?)
            }
            Some((id, "subscribe")) => {
                op("SubscribeToTask", GET_OR_POST, BodyUse::Optional).with(ids(&[("id", id)])?)
            }
            Some(_) => return Ok(None),
            None => op("GetTask", GET, BodyUse::None)
                .with(ids(&[("id", action)])?)
                .reading(GET_TASK),
        },
        ["tasks", task, "pushNotificationConfigs"] => {
            let fields = ids(&[("taskId", task)])?;
            if *method == Method::POST {
                op("CreateTaskPushNotificationConfig", POST, BodyUse::Required).with(fields)
            } else {
                op(
                    "ListTaskPushNotificationConfigs",
                    GET_OR_POST,
                    BodyUse::None,
                )
                .with(fields)
                .reading(LIST_CONFIGS)
            }
        }
        ["tasks", task, "pushNotificationConfigs", config] => {
            let fields = ids(&[("taskId", task), ("id", config)])?;
            if *method == Method::DELETE {
                op("DeleteTaskPushNotificationConfig", DELETE, BodyUse::None).with(fields)
            } else {
                op(
                    "GetTaskPushNotificationConfig",
                    GET_OR_DELETE,
                    BodyUse::None,
                )
                .with(fields)
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(operation))
}

/// The ids of a path, each segment percent-decoded.
fn ids(named: &[(&str, &str)]) -> Result<Map<String, Value>, ApiError> {
    let mut fields = Map::new();
    for (name, segment) in named {
        let decoded = percent_decode_str(segment).decode_utf8().map_err(|_| {
            ApiError::InvalidParams(format!("{name}: the path segment is not UTF-8"))
        })?;
        if decoded.is_empty() {
            return Err(ApiError::InvalidParams(format!("{name} is required")));
        }
        fields.insert((*name).into(), Value::String(decoded.into_owned()));
    }
    Ok(fields)
}

/// The query's options the operation reads, by their camelCase or proto (snake_case) names;
/// other parameters are ignored, as ProtoJSON ignores unknown fields.
fn read_query(
    query: &[(String, String)],
    options: &[(&str, Kind)],
    fields: &mut Map<String, Value>,
) -> Result<(), ApiError> {
    for (name, text) in query {
        let camel = camel_case(name);
        let Some(&(field, kind)) = options.iter().find(|(field, _)| *field == camel) else {
            continue;
        };
        let value = match kind {
            Kind::Text => Value::String(text.clone()),
            Kind::Whole => text.parse::<u64>().map(Value::from).map_err(|_| {
                ApiError::InvalidParams(format!(
                    "{field} must be a whole number, not `{}`",
                    text.chars().take(32).collect::<String>()
                ))
            })?,
            Kind::Flag => match text.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => {
                    return Err(ApiError::InvalidParams(format!(
                        "{field} must be true or false, not `{}`",
                        text.chars().take(32).collect::<String>()
                    )));
                }
            },
        };
        fields.insert(field.into(), value);
    }
    Ok(())
}

/// `history_length` as `historyLength`; a camelCase name stays as it is.
fn camel_case(name: &str) -> String {
    let mut camel = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            camel.extend(c.to_uppercase());
            upper = false;
        } else {
            camel.push(c);
        }
    }
    camel
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(method: Method, path: &str, query: &[(&str, &str)]) -> Result<Route, ApiError> {
        let query: Vec<(String, String)> = query
            .iter()
            .map(|(n, v)| ((*n).to_string(), (*v).to_string()))
            .collect();
        resolve(
            &method,
            &format!("{}{path}", crate::paths::REST_PATH),
            path,
            &query,
        )
    }

    #[test]
    fn every_resource_url_names_its_1_0_method() {
        let cases = [
            (Method::POST, "/message:send", "SendMessage"),
            (Method::POST, "/message:stream", "SendStreamingMessage"),
            (Method::GET, "/tasks", "ListTasks"),
            (Method::GET, "/tasks/t1", "GetTask"),
            (Method::POST, "/tasks/t1:cancel", "CancelTask"),
            (Method::GET, "/tasks/t1:subscribe", "SubscribeToTask"),
            (Method::POST, "/tasks/t1:subscribe", "SubscribeToTask"),
            (
                Method::POST,
                "/tasks/t1/pushNotificationConfigs",
                "CreateTaskPushNotificationConfig",
            ),
            (
                Method::GET,
                "/tasks/t1/pushNotificationConfigs",
                "ListTaskPushNotificationConfigs",
            ),
            (
                Method::GET,
                "/tasks/t1/pushNotificationConfigs/c1",
                "GetTaskPushNotificationConfig",
            ),
            (
                Method::DELETE,
                "/tasks/t1/pushNotificationConfigs/c1",
                "DeleteTaskPushNotificationConfig",
            ),
            (Method::GET, "/extendedAgentCard", "GetExtendedAgentCard"),
        ];
        for (method, path, name) in cases {
            let routed = route(method.clone(), path, &[]).unwrap();
            assert_eq!(routed.row.name, name, "{method} {path}");
        }
    }

    #[test]
    fn ids_are_decoded_and_options_typed_by_either_name() {
        let routed = route(Method::GET, "/tasks/a%20b", &[("history_length", "3")]).unwrap();
        assert_eq!(routed.fields["id"], "a b");
        assert_eq!(routed.fields["historyLength"], 3);
        let routed = route(
            Method::GET,
            "/tasks",
            &[("pageSize", "5"), ("includeArtifacts", "true"), ("x", "y")],
        )
        .unwrap();
        assert_eq!(routed.fields["pageSize"], 5);
        assert_eq!(routed.fields["includeArtifacts"], true);
        assert!(!routed.fields.contains_key("x"));
        let routed = route(Method::GET, "/tasks/t%3A1:cancel", &[]);
        assert!(
            matches!(routed, Err(ApiError::InvalidRequest { status, .. }) if status == StatusCode::METHOD_NOT_ALLOWED)
        );
        let routed = route(Method::POST, "/tasks/t%3A1:cancel", &[]).unwrap();
        assert_eq!(routed.fields["id"], "t:1");
    }

    #[test]
    fn every_route_is_served_below_a_tenant_too() {
        let routed = route(Method::POST, "/acme/message:send", &[]).unwrap();
        assert_eq!(routed.row.name, "SendMessage");
        assert_eq!(routed.fields["tenant"], "acme");
        let routed = route(
            Method::DELETE,
            "/t%20x/tasks/t1/pushNotificationConfigs/c1",
            &[],
        )
        .unwrap();
        assert_eq!(routed.row.name, "DeleteTaskPushNotificationConfig");
        assert_eq!(routed.fields["tenant"], "t x");
        assert_eq!(routed.fields["taskId"], "t1");
        let routed = route(Method::GET, "/acme/tasks", &[("pageSize", "2")]).unwrap();
        assert_eq!(routed.row.name, "ListTasks");
        assert_eq!(routed.fields["pageSize"], 2);
        assert!(matches!(
            route(Method::GET, "/acme/other/tasks", &[]),
            Err(ApiError::MethodNotFound(_))
        ));
    }

    #[test]
    fn unknown_routes_and_bad_options_are_refused() {
        assert!(matches!(
            route(Method::POST, "/message:teleport", &[]),
            Err(ApiError::MethodNotFound(_))
        ));
        assert!(matches!(
            route(Method::POST, "/tasks/t1:pause", &[]),
            Err(ApiError::MethodNotFound(_))
        ));
        assert!(matches!(
            route(Method::GET, "/tasks/t1/a/b/c", &[]),
            Err(ApiError::MethodNotFound(_))
        ));
        assert!(matches!(
            route(Method::GET, "/tasks", &[("pageSize", "many")]),
            Err(ApiError::InvalidParams(message)) if message.contains("pageSize")
        ));
        assert!(matches!(
            route(Method::GET, "/tasks/%FF", &[]),
            Err(ApiError::InvalidParams(_))
        ));
    }
}
