//! The JSON-RPC 2.0 envelope and this server's error codes.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// A request id as the client sent it. Its JSON type is kept so the response echoes it unchanged:
/// clients match responses by id, and several SDKs compare with `===`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    /// A string id, e.g. `"req-1"` (Python SDKs send UUID strings).
    Str(String),
    /// A number id, e.g. `1` (JavaScript SDKs send integers).
    Num(serde_json::Number),
}

/// Every error this server can answer with. The code numbers and names are the public contract
/// (README.md, "Errors"); several collide with A2A's own meanings on purpose, as the hosted service does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// Invalid JSON.
    ParseError,
    /// Not a single JSON-RPC 2.0 request object.
    InvalidRequest,
    /// Unknown method.
    MethodNotFound,
    /// Missing or invalid params, or an invalid task state transition.
    InvalidParams,
    /// An unexpected server fault.
    InternalError,
    /// Unknown, expired, or another user's task.
    TaskNotFound,
    /// Unknown `skillId`.
    SkillNotFound,
    /// Too many `message/send` calls in the caller's bucket.
    RateLimited,
    /// Missing, malformed, expired, or wrongly signed bearer token.
    Unauthorized,
    /// The caller's plan does not include A2A.
    PlanRequired,
}

impl ErrorCode {
    /// Every code, in the order of the public table.
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::ParseError,
        ErrorCode::InvalidRequest,
        ErrorCode::MethodNotFound,
        ErrorCode::InvalidParams,
        ErrorCode::InternalError,
        ErrorCode::TaskNotFound,
        ErrorCode::SkillNotFound,
        ErrorCode::RateLimited,
        ErrorCode::Unauthorized,
        ErrorCode::PlanRequired,
    ];

    /// The JSON-RPC `error.code` number.
    pub fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::TaskNotFound => -32001,
            ErrorCode::SkillNotFound => -32002,
            ErrorCode::RateLimited => -32003,
            ErrorCode::Unauthorized => -32004,
            ErrorCode::PlanRequired => -32005,
        }
    }

    /// The upper-case name carried in `error.data.name`, stable for machines to switch on.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::ParseError => "PARSE_ERROR",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::MethodNotFound => "METHOD_NOT_FOUND",
            ErrorCode::InvalidParams => "INVALID_PARAMS",
            ErrorCode::InternalError => "INTERNAL_ERROR",
            ErrorCode::TaskNotFound => "TASK_NOT_FOUND",
            ErrorCode::SkillNotFound => "SKILL_NOT_FOUND",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::PlanRequired => "PLAN_REQUIRED",
        }
    }

    /// The human title used as the start of `error.message`.
    pub fn title(self) -> &'static str {
        match self {
            ErrorCode::ParseError => "Parse error",
            ErrorCode::InvalidRequest => "Invalid request",
            ErrorCode::MethodNotFound => "Method not found",
            ErrorCode::InvalidParams => "Invalid params",
            ErrorCode::InternalError => "Internal error",
            ErrorCode::TaskNotFound => "Task not found",
            ErrorCode::SkillNotFound => "Skill not found",
            ErrorCode::RateLimited => "Rate limit exceeded",
            ErrorCode::Unauthorized => "Unauthorized",
            ErrorCode::PlanRequired => "Paid plan required",
        }
    }

    /// The code for a number, if it is one of ours.
    pub fn from_code(code: i64) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.code() == code)
    }
}

/// The `error` member of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The numeric code.
    pub code: i64,
    /// A short sentence for people.
    pub message: String,
    /// Always an object with at least `name`; extra fields per code (`retryAfter`, `availableSkills`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error of `code` with `message`, and `data.name` set from the code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let mut data = serde_json::Map::new();
        data.insert("name".into(), Value::String(code.name().into()));
        ErrorObject {
            code: code.code(),
            message: message.into(),
            data: Some(Value::Object(data)),
        }
    }

    /// Adds one field to `data`.
    pub fn with_data(mut self, key: &str, value: impl Into<Value>) -> Self {
        if let Some(Value::Object(map)) = self.data.as_mut() {
            map.insert(key.into(), value.into());
        }
        self
    }
}

/// A JSON-RPC 2.0 response: exactly one of `result` and `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The request's id, or `null` when it could not be read.
    pub id: Option<Id>,
    /// The method's result on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl Response {
    /// A success response.
    pub fn success(id: Option<Id>, result: Value) -> Self {
        Response {
            jsonrpc: "2.0".into(),
            id,
            result: Some(result),
            error: None,
        }
    }

    /// An error response.
    pub fn failure(id: Option<Id>, error: ErrorObject) -> Self {
        Response {
            jsonrpc: "2.0".into(),
            id,
            result: None,
            error: Some(error),
        }
    }
}

/// What a request envelope holds once it passed the envelope checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id to echo; `None` for a notification (no `id` member), which the caller checks
    /// like any other call before refusing it.
    pub id: Option<Id>,
    /// The method name.
    pub method: String,
    /// The params, `Value::Null` when absent.
    pub params: Value,
}

/// Why an envelope was refused, with the id when it could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvelopeError {
    /// The id, if the body was parsed far enough to read a valid one.
    pub id: Option<Id>,
    /// The error to answer with.
    pub error: ErrorObject,
}

/// Parses and checks a request body: JSON, one object, then in this order `jsonrpc: "2.0"`, a
/// string method, and a string or number id when there is one. Batches are refused: this
/// server answers one call per request.
pub fn parse_request(body: &[u8]) -> Result<Request, EnvelopeError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| EnvelopeError {
        id: None,
        error: ErrorObject::new(ErrorCode::ParseError, format!("Parse error: {e}")),
    })?;
    request_from_value(value)
}

/// The envelope checks of [`parse_request`] on an already parsed value. A missing `id` passes:
/// whether the method exists and its params are valid is checked first, as for any call.
pub fn request_from_value(value: Value) -> Result<Request, EnvelopeError> {
    let invalid = |id: Option<Id>, why: &str| EnvelopeError {
        id,
        error: ErrorObject::new(ErrorCode::InvalidRequest, format!("Invalid request: {why}")),
    };
    let mut object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(invalid(
                None,
                "batches are not supported; send one request object per call",
            ));
        }
        _ => return Err(invalid(None, "the body must be a JSON-RPC request object")),
    };
    let id = match object.remove("id") {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(Id::Str(s))),
        Some(Value::Number(n)) => Ok(Some(Id::Num(n))),
        Some(_) => Err("`id` must be a string or a number"),
    };
    let readable_id = id.clone().ok().flatten();
    match object.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => return Err(invalid(readable_id, "`jsonrpc` must be \"2.0\"")),
    }
    let method = match object.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return Err(invalid(readable_id, "`method` must be a string")),
        None => return Err(invalid(readable_id, "`method` is missing")),
    };
    let id = id.map_err(|why| invalid(None, why))?;
    let params = object.remove("params").unwrap_or(Value::Null);
    Ok(Request { id, method, params })
}

/// A well-formed request read straight from the body: the params stay raw JSON text, so that
/// the method parses them once, directly into its own types, without an intermediate tree.
#[derive(Debug, Clone)]
pub struct BorrowedRequest<'a> {
    /// The id to echo.
    pub id: Id,
    /// The method name.
    pub method: String,
    /// The raw `params`, if present.
    pub params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

/// Any JSON value, read as a tree parse reads it (every string decoded, every number
/// converted) and then forgotten: it refuses exactly what a tree parse refuses, without
/// allocating a tree. Skipping a value (`IgnoredAny`, raw params) checks its syntax only.
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> serde::de::Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked)
    }
}

/// The fast path of [`parse_request`] for a body that passes every envelope check: `None` for
/// anything else (bad JSON, a batch, a missing or mistyped member, a duplicated key), in which
/// case [`parse_request`] gives the exact refusal. Both accept the same well-formed requests and
/// read the same id, method and params from them: the body is first checked as a tree parse
/// checks it (members the envelope skips and the raw params included), then read.
pub fn parse_request_borrowed(body: &[u8]) -> Option<BorrowedRequest<'_>> {
    let text = std::str::from_utf8(body).ok()?;
    // A request is an object. serde reads a struct from an array of its members too, which
    // would take `["2.0","m","1"]` (a batch to the full parse) for a request.
    if !text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
    {
        return None;
    }
    serde_json::from_str::<Checked>(text).ok()?;
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return None;
    }
    let raw_id = envelope.id?.get();
    let id = match raw_id.as_bytes().first()? {
        b'"' => Id::Str(serde_json::from_str(raw_id).ok()?),
        b'-' | b'0'..=b'9' => Id::Num(serde_json::from_str(raw_id).ok()?),
        _ => return None,
    };
    Some(BorrowedRequest {
        id,
        method: envelope.method?.into_owned(),
        params: envelope.params,
    })
}

/// A success response around a result that is already JSON text (a stored task), written
/// without parsing it again.
pub fn success_body(id: Option<&Id>, result: &[u8]) -> Vec<u8> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const RESULT: &[u8] = br#","result":"#;
    let mut body = Vec::with_capacity(HEAD.len() + RESULT.len() + result.len() + 48);
    body.extend_from_slice(HEAD);
    // An id is a string, a number or null: its serialisation cannot fail.
    serde_json::to_writer(&mut body, &id).unwrap_or_default();
    body.extend_from_slice(RESULT);
    body.extend_from_slice(result);
    body.push(b'}');
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(code.code()), Some(code));
        }
        let mut names: Vec<_> = ErrorCode::ALL.iter().map(|c| c.name()).collect();
        names.dedup();
        assert_eq!(names.len(), 10);
    }

    #[test]
    fn id_keeps_its_json_type() {
        let r = parse_request(br#"{"jsonrpc":"2.0","id":7,"method":"m"}"#).unwrap();
        assert_eq!(serde_json::to_string(&r.id).unwrap(), "7");
        let r = parse_request(br#"{"jsonrpc":"2.0","id":"7","method":"m"}"#).unwrap();
        assert_eq!(serde_json::to_string(&r.id).unwrap(), "\"7\"");
        let r = parse_request(br#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#).unwrap();
        assert_eq!(serde_json::to_string(&r.id).unwrap(), "1.5");
    }

    #[test]
    fn the_borrowed_parse_agrees_with_the_full_one() {
        let accepted: [&[u8]; 5] = [
            br#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":[1,2]}}"#,
            br#"{"method":"m","id":"x\"y","jsonrpc":"2.0"}"#,
            br#" {"jsonrpc":"2.0","id":-1.5e3,"method":"m\u00e9","params":null,"extra":1} "#,
            br#"{"jsonrpc":"2.0","id":0,"method":"m","params":[1]}"#,
            br#"{"jsonrpc":"2.0","id":"","method":"","params":"text"}"#,
        ];
        for body in accepted {
            let full = parse_request(body).unwrap();
            let fast = parse_request_borrowed(body).unwrap();
            assert_eq!(
                (Some(&fast.id), &fast.method),
                (full.id.as_ref(), &full.method)
            );
            let params: Value = fast
                .params
                .map_or(Value::Null, |raw| serde_json::from_str(raw.get()).unwrap());
            assert_eq!(params, full.params);
        }
        let refused: [&[u8]; 14] = [
            b"{\"jsonrpc\":\"2.0\",\"x\":\"\xa5\",\"id\":1,\"method\":\"m\"}",
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"id":"t","x":1e999}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"\udc00"}}"#,
            b"{",
            b"[]",
            br#"{"jsonrpc":"2.0","method":"m"}"#,
            br#"{"jsonrpc":"1.0","id":3,"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":"a","method":5}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
            // The members in order as an array: a batch to the full parse, never a request.
            br#"["2.0","tasks/get","1",{"id":"t"}]"#,
            b" [\"2.0\",\"\",\"@,\"\n\n,\"@,\"\n]",
        ];
        for body in refused {
            assert!(parse_request_borrowed(body).is_none(), "{body:?}");
        }
    }

    #[test]
    fn a_raw_result_is_wrapped_verbatim() {
        let body = success_body(Some(&Id::Str("a\"b".into())), br#"{"kind":"task"}"#);
        let value: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["id"], "a\"b");
        assert_eq!(value["result"]["kind"], "task");
        assert_eq!(value["jsonrpc"], "2.0");
    }

    #[test]
    fn envelope_errors() {
        let e = parse_request(b"{").unwrap_err();
        assert_eq!(e.error.code, -32700);
        let e = parse_request(b"[]").unwrap_err();
        assert_eq!(e.error.code, -32600);
        let notification = parse_request(br#"{"jsonrpc":"2.0","method":"m"}"#).unwrap();
        assert_eq!((notification.id, notification.method.as_str()), (None, "m"));
        let e = parse_request(br#"{"method":"m"}"#).unwrap_err();
        assert_eq!((e.error.code, e.id), (-32600, None));
        let e = parse_request(br#"{"jsonrpc":"2.0","id":{}}"#).unwrap_err();
        assert!(e.error.message.contains("method"), "{}", e.error.message);
        let e = parse_request(br#"{"jsonrpc":"1.0","id":3,"method":"m"}"#).unwrap_err();
        assert_eq!((e.error.code, e.id), (-32600, Some(Id::Num(3.into()))));
        let e = parse_request(br#"{"jsonrpc":"2.0","id":{},"method":"m"}"#).unwrap_err();
        assert_eq!((e.error.code, e.id), (-32600, None));
        let e = parse_request(br#"{"jsonrpc":"2.0","id":"a","method":5}"#).unwrap_err();
        assert_eq!(e.id, Some(Id::Str("a".into())));
    }
}
