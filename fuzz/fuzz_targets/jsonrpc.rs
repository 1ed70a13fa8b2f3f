//! The JSON-RPC envelope and the A2A 0.3 params, as the server reads an untrusted request body:
//! parsing must never panic, and whatever params are accepted must survive a round trip, since
//! the server stores and later re-serves what it accepted.
#![no_main]

use a2a_types::jsonrpc::parse_request;
use a2a_types::{MessageSendParams, TaskIdParams, TaskQueryParams};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

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

fuzz_target!(|body: &[u8]| {
    if let Ok(request) = parse_request(body) {
        round_trips::<MessageSendParams>(&request.params);
        round_trips::<TaskQueryParams>(&request.params);
        round_trips::<TaskIdParams>(&request.params);
    }
});
