//! One call of each kind on each binding: the request to send and the check of its answer, so
//! a figure counts only answers that are what the call asked for (a JSON-RPC error under
//! HTTP 200, or a gRPC status other than OK, is a wrong answer).

use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderMap, Method, Request, StatusCode};
use prost::Message as _;

use crate::proto;

/// Which binding a run speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Binding {
    /// JSON-RPC on the 1.0 wire (`SendMessage`, `GetTask`).
    Jsonrpc,
    /// HTTP+JSON (`POST …/rest/message:send`, `GET …/rest/tasks/{id}`).
    Rest,
    /// gRPC (`lf.a2a.v1.A2AService/SendMessage`, `…/GetTask`).
    Grpc,
    /// The JSON floor of `bench-floor` (`POST /json`), fed the 0.3 `message/send` or
    /// `tasks/get` body.
    Floor,
}

/// Which operation a run repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Operation {
    /// A new message each call (a unique `messageId`) to `saints_of_the_day`.
    Send,
    /// The same stored task read each call.
    Get,
}

/// What every call of a run needs.
pub struct Target {
    /// `http://host:port`, no trailing slash.
    pub base: String,
    /// The bearer token.
    pub token: String,
    /// The binding.
    pub binding: Binding,
    /// The operation.
    pub operation: Operation,
    /// The task `Get` reads.
    pub task_id: String,
}

const SKILL: &str = "saints_of_the_day";
const DATE: &str = "2026-12-08";

impl Target {
    /// The request and its body for the call with this `message_id` (used by `Send`).
    pub fn request(&self, message_id: &str) -> (Request<()>, Bytes) {
        let (method, path, content_type, body) = match (self.binding, self.operation) {
            (Binding::Grpc, operation) => (
                Method::POST,
                format!("/lf.a2a.v1.A2AService/{}", grpc_method(operation)),
                "application/grpc",
                grpc_body(operation, message_id, &self.task_id),
            ),
            (Binding::Jsonrpc, Operation::Send) => json_call(
                "/api/v1/a2a",
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": message_1_0(message_id)}),
            ),
            (Binding::Jsonrpc, Operation::Get) => json_call(
                "/api/v1/a2a",
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                    "params": {"id": self.task_id}}),
            ),
            (Binding::Rest, Operation::Send) => {
                json_call("/api/v1/a2a/rest/message:send", message_1_0(message_id))
            }
            (Binding::Rest, Operation::Get) => (
                Method::GET,
                format!("/api/v1/a2a/rest/tasks/{}", self.task_id),
                "application/json",
                Bytes::new(),
            ),
            (Binding::Floor, Operation::Send) => json_call(
                "/json",
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
                    "params": {"message": {"kind": "message", "messageId": message_id,
                        "role": "user", "parts": [{"kind": "data", "data": {"date": DATE}}],
                        "metadata": {"skillId": SKILL}}}}),
            ),
            (Binding::Floor, Operation::Get) => json_call(
                "/json",
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                    "params": {"id": self.task_id}}),
            ),
        };
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("authorization", format!("Bearer {}", self.token))
            .header("a2a-version", "1.0");
        if !body.is_empty() {
            request = request.header("content-type", content_type);
        }
        if self.binding == Binding::Grpc {
            request = request.header("te", "trailers");
        }
        (request.body(()).expect("a valid request"), body)
    }

    /// Whether an answer is the one the call asked for: a completed task, and for gRPC the
    /// status OK in the trailers.
    pub fn answered(&self, status: StatusCode, body: &[u8], trailers: Option<&HeaderMap>) -> bool {
        if status != StatusCode::OK {
            return false;
        }
        match self.binding {
            Binding::Grpc => {
                let ok = trailers
                    .and_then(|t| t.get("grpc-status"))
                    .is_some_and(|s| s == "0");
                ok && grpc_completed(self.operation, body)
            }
            Binding::Floor => !contains(body, b"\"error\":{"),
            Binding::Jsonrpc | Binding::Rest => {
                !contains(body, b"\"error\":{") && contains(body, b"TASK_STATE_COMPLETED")
            }
        }
    }
}

fn grpc_method(operation: Operation) -> &'static str {
    match operation {
        Operation::Send => "SendMessage",
        Operation::Get => "GetTask",
    }
}

/// The 1.0 `SendMessageRequest` as ProtoJSON.
fn message_1_0(message_id: &str) -> serde_json::Value {
    serde_json::json!({"message": {"messageId": message_id, "role": "ROLE_USER",
        "parts": [{"data": {"date": DATE}}], "metadata": {"skillId": SKILL}}})
}

fn json_call(path: &str, body: serde_json::Value) -> (Method, String, &'static str, Bytes) {
    (
        Method::POST,
        path.to_string(),
        "application/json",
        Bytes::from(body.to_string()),
    )
}

/// The gRPC request message in its length-prefixed frame.
fn grpc_body(operation: Operation, message_id: &str, task_id: &str) -> Bytes {
    let encoded = match operation {
        Operation::Send => proto::SendMessageRequest {
            message: Some(proto::Message {
                message_id: message_id.to_string(),
                role: proto::ROLE_USER,
                parts: vec![proto::Part {
                    data: Some(proto::Value {
                        kind: Some(proto::Kind::Object(proto::Struct::of_strings(&[(
                            "date", DATE,
                        )]))),
                    }),
                }],
                metadata: Some(proto::Struct::of_strings(&[("skillId", SKILL)])),
            }),
        }
        .encode_to_vec(),
        Operation::Get => proto::GetTaskRequest {
            id: task_id.to_string(),
        }
        .encode_to_vec(),
    };
    let mut framed = BytesMut::with_capacity(5 + encoded.len());
    framed.put_u8(0);
    framed.put_u32(u32::try_from(encoded.len()).expect("a small message"));
    framed.put_slice(&encoded);
    framed.freeze()
}

/// Whether a gRPC answer's one message is a completed task.
fn grpc_completed(operation: Operation, body: &[u8]) -> bool {
    let Some(message) = body.get(5..) else {
        return false;
    };
    let task = match operation {
        Operation::Send => proto::SendMessageResponse::decode(message)
            .ok()
            .and_then(|r| r.task),
        Operation::Get => proto::Task::decode(message).ok(),
    };
    task.and_then(|t| t.status)
        .is_some_and(|s| s.state == proto::COMPLETED)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}
