//! The A2A 1.0 protocol definitions as the server reads them: the descriptor set compiled from
//! `proto/a2a.proto` at build time, each RPC of `A2AService` beside its row in the method table,
//! and the two conversions that let one method table serve this binding: a request message into
//! the ProtoJSON tree the 1.0 rows parse, and a rendered 1.0 JSON result back into the RPC's
//! response message. Each costs one walk of the message (a tree built, or a message filled from
//! JSON text), the price of keeping a single parse and render per method.

use std::sync::LazyLock;

use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, SerializeOptions};
use serde_json::Value;

use crate::bindings::grpc::codec::Encoded;
use crate::bindings::grpc::transcode;
use crate::bindings::jsonrpc::methods::{self, Method};
use crate::error::ApiError;
use crate::paths::{GRPC_SERVICE, grpc_rpc};
use crate::wire::Version;

/// The encoded `FileDescriptorSet` of `a2a.proto` and everything it imports, as gRPC reflection
/// serves it.
pub const DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/a2a_descriptor_set.bin"));

static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(DESCRIPTOR_SET).expect("the descriptor set compiled from proto/ decodes")
});

static RPCS: LazyLock<Vec<Rpc>> = LazyLock::new(|| {
    let service = POOL
        .get_service_by_name(GRPC_SERVICE)
        .expect("a2a.proto defines the service");
    service
        .methods()
        .filter_map(|method| {
            let row = methods::find(method.name()).filter(|row| row.version == Version::V1)?;
            Some(Rpc {
                row,
                input: method.input(),
                output: method.output(),
            })
        })
        .collect()
});

/// The protocol's messages and services, for clients that speak the binding without generated
/// code (the tests' client).
pub fn descriptor_pool() -> &'static DescriptorPool {
    &POOL
}

/// One RPC of the service: its row in the method table and its two message types.
#[derive(Debug)]
pub(crate) struct Rpc {
    /// The 1.0 method it is, by the same name.
    pub(crate) row: &'static Method,
    /// The request message.
    pub(crate) input: MessageDescriptor,
    /// The response message (of each streamed message, for a server-streaming RPC).
    pub(crate) output: MessageDescriptor,
}

/// The RPC a request path names, when the service has it.
pub(crate) fn rpc(path: &str) -> Option<&'static Rpc> {
    let name = grpc_rpc(path)?;
    RPCS.iter().find(|rpc| rpc.row.name == name)
}

/// A request message as the ProtoJSON object its 1.0 row parses (camelCase names, enums by
/// name, fields left at their defaults absent, as a JSON client would send them).
pub(crate) fn to_tree(message: &DynamicMessage) -> Result<Value, ApiError> {
    message
        .serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new())
        .map_err(|e| ApiError::InvalidParams(format!("the message cannot be read: {e}")))
}

/// A rendered 1.0 result (ProtoJSON text) as the protobuf bytes of a message of type `output`
/// (`transcode`). Members the message has no field for are left out (this server's additions
/// to the card, for example).
pub(crate) fn encode_answer(json: &[u8], output: &MessageDescriptor) -> Result<Encoded, ApiError> {
    let tree: Value = serde_json::from_slice(json)
        .map_err(|e| ApiError::Internal(format!("an answer is not JSON: {e}")))?;
    encode_tree(&tree, output)
}

/// As [`encode_answer`], for an answer already held as a JSON tree (a stream's event).
pub(crate) fn encode_tree(tree: &Value, output: &MessageDescriptor) -> Result<Encoded, ApiError> {
    transcode::encode(tree, output).map(Encoded).map_err(|e| {
        ApiError::Internal(format!(
            "an answer does not fit {}: {e}",
            output.full_name()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::DeserializeOptions;

    /// ProtoJSON text as a `DynamicMessage`, by `prost-reflect`'s own reading.
    fn from_json(json: &[u8], output: &MessageDescriptor) -> Result<DynamicMessage, String> {
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let options = DeserializeOptions::new().deny_unknown_fields(false);
        DynamicMessage::deserialize_with_options(output.clone(), &mut deserializer, &options)
            .map_err(|e| e.to_string())
    }

    /// What `transcode` writes reads back as what `prost-reflect` makes of the same JSON.
    fn assert_transcoded(json: &Value, output: &MessageDescriptor) {
        let text = serde_json::to_vec(json).unwrap();
        let expected = from_json(&text, output).unwrap();
        let encoded = encode_answer(&text, output).unwrap();
        let decoded = DynamicMessage::decode(output.clone(), encoded.0.as_slice()).unwrap();
        assert_eq!(
            to_tree(&decoded).unwrap(),
            to_tree(&expected).unwrap(),
            "{json}"
        );
    }

    #[test]
    fn answers_are_transcoded_as_prost_reflect_reads_them() {
        let message = |role: &str, text: &str| {
            serde_json::json!({"messageId": "m-1", "contextId": "c", "taskId": "t", "role": role,
                "parts": [{"text": text}, {"data": {"date": "2026-12-08", "n": 3, "x": 1.5,
                    "ok": true, "none": null, "list": [1, "two", {"three": [3.0, false]}]},
                    "mediaType": "application/json"}],
                "metadata": {"skillId": "saints_of_the_day", "deep": {"a": {"b": {"c": [[]]}}}}})
        };
        let task = serde_json::json!({"id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-01T10:00:00.123Z",
                "message": message("ROLE_AGENT", "done")},
            "artifacts": [{"artifactId": "a", "name": "answer", "parts": [{"text": "é ✓"},
                {"data": {"saints": [{"name": "Ambrose", "rank": "memorial"}]}}]}],
            "history": [message("ROLE_USER", "hi"), message("ROLE_AGENT", "")],
            "metadata": {"skillId": "saints_of_the_day"}, "unknownMember": {"x": 1}});
        let get = rpc(&format!("/{GRPC_SERVICE}/GetTask")).unwrap();
        assert_transcoded(&task, &get.output);
        let send = rpc(&format!("/{GRPC_SERVICE}/SendMessage")).unwrap();
        assert_transcoded(&serde_json::json!({"task": task}), &send.output);
        let list = rpc(&format!("/{GRPC_SERVICE}/ListTasks")).unwrap();
        assert_transcoded(
            &serde_json::json!({"tasks": [task, task], "nextPageToken": "", "pageSize": 2,
                "totalSize": "2"}),
            &list.output,
        );
        let stream = rpc(&format!("/{GRPC_SERVICE}/SendStreamingMessage")).unwrap();
        assert_transcoded(
            &serde_json::json!({"statusUpdate": {"taskId": "t", "contextId": "c",
                "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-12-01T10:00:00Z"},
                "metadata": null}}),
            &stream.output,
        );
        let card = rpc(&format!("/{GRPC_SERVICE}/GetExtendedAgentCard")).unwrap();
        assert_transcoded(
            &serde_json::json!({"name": "n", "description": "d", "version": "1",
                "supportedInterfaces": [{"url": "http://x/api/v1/a2a", "protocolBinding":
                    "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {"streaming": true, "pushNotifications": true,
                    "extendedAgentCard": true, "extensions": [{"uri": "u", "required": false,
                        "params": {"plan": "pro", "buckets": {"read": {"perMinute": 600}}}}]},
                "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "bearer",
                    "bearerFormat": "JWT"}}},
                "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"],
                    "examples": ["e"]}],
                "signatures": [{"protected": "p", "signature": "s", "header": {"kid": "k"}}]}),
            &card.output,
        );
    }

    #[test]
    fn an_answer_that_does_not_fit_its_message_is_an_internal_error() {
        let get = rpc(&format!("/{GRPC_SERVICE}/GetTask")).unwrap();
        for bad in [
            serde_json::json!({"id": 3}),
            serde_json::json!({"status": {"state": "NO_SUCH_STATE"}}),
            serde_json::json!({"status": {"timestamp": "yesterday"}}),
            serde_json::json!({"history": {"not": "a list"}}),
        ] {
            let text = serde_json::to_vec(&bad).unwrap();
            assert!(
                matches!(
                    encode_answer(&text, &get.output),
                    Err(ApiError::Internal(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn every_rpc_of_the_service_has_its_1_0_row() {
        let service = descriptor_pool().get_service_by_name(GRPC_SERVICE).unwrap();
        assert_eq!(service.methods().count(), 11);
        for method in service.methods() {
            let path = format!("/{GRPC_SERVICE}/{}", method.name());
            let rpc = rpc(&path).unwrap_or_else(|| panic!("{path} has no row"));
            assert_eq!(rpc.row.streams(), method.is_server_streaming(), "{path}");
        }
        assert!(rpc(&format!("/{GRPC_SERVICE}/message/send")).is_none());
        assert!(rpc("/grpc.health.v1.Health/Check").is_none());
    }

    #[test]
    fn a_request_reads_as_the_protojson_a_json_client_sends() {
        let get = rpc(&format!("/{GRPC_SERVICE}/GetTask")).unwrap();
        let message = from_json(br#"{"id": "t-1", "historyLength": 0}"#, &get.input).unwrap();
        assert_eq!(
            to_tree(&message).unwrap(),
            serde_json::json!({"id": "t-1", "historyLength": 0}),
            "an optional field set to its default is still sent"
        );
        let task = rpc(&format!("/{GRPC_SERVICE}/GetTask")).unwrap();
        let answer = from_json(
            br#"{"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED",
                "timestamp": "2026-12-01T10:00:00.000Z"}, "extra": 1}"#,
            &task.output,
        )
        .unwrap();
        assert_eq!(
            to_tree(&answer).unwrap()["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
}
