//! The JSON-RPC envelope and the A2A 0.3 params, as the server reads an untrusted request body:
//! parsing must never panic, and whatever params are accepted must survive a round trip, since
//! the server stores and later re-serves what it accepted. The server reads a body through the
//! fast path first (`parse_request_borrowed`, params parsed straight from their raw text) and
//! falls back to the full parse: whatever the fast path accepts, the full parse must accept and
//! read the same way.
#![no_main]

use a2a_types::jsonrpc::{parse_request, parse_request_borrowed};
use a2a_types::{MessageSendParams, TaskIdParams, TaskQueryParams};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

fn round_trips<T>(params: &Value)
where
    T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug,
{
    if let Ok(parsed) = serde_json::from_value::<T>(params.clone()) {
        let written = serde_json::to_value(&parsed).expect("accepted params serialise");
        let again: T = serde_json::from_value(written).expect("serialised params parse again");
        assert_eq!(parsed, again, "params change in a round trip");
    }
}

/// Params parsed from their raw text (the server's fast path, taken for an object) equal the
/// params parsed from the tree (its fallback).
fn raw_agrees_with_tree<T>(raw: &RawValue, tree: &Value)
where
    T: DeserializeOwned + PartialEq + std::fmt::Debug,
{
    if raw.get().starts_with('{')
        && let Ok(fast) = serde_json::from_str::<T>(raw.get())
    {
        let full = serde_json::from_value::<T>(tree.clone())
            .expect("params the raw text parses into, the tree parses into too");
        assert_eq!(fast, full, "params read differently from the raw text");
    }
}

fuzz_target!(|body: &[u8]| {
    let full = parse_request(body);
    if let Some(fast) = parse_request_borrowed(body) {
        let full = full
            .as_ref()
            .expect("a body the fast path accepts, the full parse accepts");
        assert_eq!(
            Some(&fast.id),
            full.id.as_ref(),
            "the fast path reads another id"
        );
        assert_eq!(
            fast.method, full.method,
            "the fast path reads another method"
        );
        let tree = fast.params.map_or(Value::Null, |raw| {
            serde_json::from_str(raw.get()).expect("raw params parse")
        });
        assert_eq!(tree, full.params, "the fast path reads other params");
        if let Some(raw) = fast.params {
            raw_agrees_with_tree::<MessageSendParams>(raw, &full.params);
            raw_agrees_with_tree::<TaskQueryParams>(raw, &full.params);
            raw_agrees_with_tree::<TaskIdParams>(raw, &full.params);
        }
    }
    if let Ok(request) = full {
        round_trips::<MessageSendParams>(&request.params);
        round_trips::<TaskQueryParams>(&request.params);
        round_trips::<TaskIdParams>(&request.params);
    }
});
