//! The memory store's bounds as a client meets them: what its TTL and its cap take away, and
//! task ids it never gave out.

use std::time::Duration;

use magisterium_a2a::auth::Plan;
use serde_json::json;

use magisterium_a2a::service::MAX_ID_CHARS;

use crate::helpers::{TestApp, call, send_body, spawn_app, uuid};

async fn get_code(app: &TestApp, token: &str, id: &str) -> i64 {
    app.rpc(Some(token), &call("tasks/get", json!({"id": id})))
        .await
        .code()
}

#[tokio::test]
async fn a_resend_after_the_ttl_runs_the_message_again() {
    let app = spawn_app(|s| s.store.task_ttl_secs = 1).await;
    let token = app.token("resend-after-ttl", Plan::Pro);
    let message_id = uuid();
    let body = send_body("test_echo", "once more", &message_id);
    let first = app.rpc(Some(&token), &body).await.result().clone();
    let retry = app.rpc(Some(&token), &body).await.result().clone();
    assert_eq!(
        retry["id"], first["id"],
        "within the TTL a resend is answered"
    );
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let again = app.rpc(Some(&token), &body).await.result().clone();
    assert_ne!(
        again["id"], first["id"],
        "the message's record left with its task: the resend ran as a new task"
    );
    assert_eq!(again["status"]["state"], "completed");
    let first_id = first["id"].as_str().unwrap();
    assert_eq!(get_code(&app, &token, first_id).await, -32001);
}

#[tokio::test]
async fn the_cap_takes_the_oldest_saved_task_first_even_one_just_read() {
    let app = spawn_app(|s| s.store.memory_max_tasks = 3).await;
    let token = app.token("capped", Plan::Pro);
    let mut bodies = Vec::new();
    let mut ids = Vec::new();
    for n in 0..3 {
        let body = send_body("test_echo", &format!("task {n}"), &uuid());
        let task = app.rpc(Some(&token), &body).await.result().clone();
        ids.push(task["id"].as_str().unwrap().to_string());
        bodies.push(body);
    }
    // Reading the oldest does not keep it: eviction follows the order of saves.
    assert_eq!(get_code(&app, &token, &ids[0]).await, 0);
    let body = send_body("test_echo", "task 3", &uuid());
    let newest = app.rpc(Some(&token), &body).await.result().clone();
    ids.push(newest["id"].as_str().unwrap().to_string());
    assert_eq!(
        get_code(&app, &token, &ids[0]).await,
        -32001,
        "the oldest saved left"
    );
    for id in &ids[1..] {
        assert_eq!(get_code(&app, &token, id).await, 0, "{id} stays");
    }
    // Its message record left with it: the same message runs again, as a new task.
    let rerun = app.rpc(Some(&token), &bodies[0]).await.result().clone();
    assert!(!ids.iter().any(|id| rerun["id"] == json!(id)));
    // Whatever the cap took away, a listing holds no more than the cap and only live tasks.
    let listed = app.rpc(Some(&token), &call("ListTasks", json!({}))).await;
    let tasks = listed.result()["tasks"].as_array().unwrap().clone();
    assert_eq!(tasks.len(), 3, "{tasks:?}");
    for task in &tasks {
        let id = task["id"].as_str().unwrap();
        assert_eq!(
            get_code(&app, &token, id).await,
            0,
            "listed {id} reads back"
        );
    }
}

#[tokio::test]
async fn task_ids_the_server_never_gave_out_are_not_found() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("odd-ids", Plan::Pro);
    let task = app
        .send(&token, "test_echo", "a real one")
        .await
        .result()
        .clone();
    let id = task["id"].as_str().unwrap();
    assert_eq!(get_code(&app, &token, id).await, 0);
    let simple = id.replace('-', "");
    let odd = [
        id.to_uppercase(),
        format!("{{{id}}}"),
        format!("urn:uuid:{id}"),
        simple.clone(),
        simple.to_uppercase(),
        format!("{id} "),
        format!(" {id}"),
        format!("{id}0"),
        id[..35].to_string(),
        id.replace('-', "_"),
        "t1".to_string(),
        String::new(),
        "\u{0}".repeat(36),
        "é".repeat(18),
        "g".repeat(36),
        "-".repeat(36),
        "x".repeat(100_000),
        "ffffffff-ffff-ffff-ffff-ffffffffffff".to_string(),
        "00000000-0000-0000-0000-000000000000".to_string(),
    ];
    for odd in &odd {
        let shown = &odd[..odd.len().min(40)];
        assert_eq!(get_code(&app, &token, odd).await, -32001, "get {shown:?}");
        let cancel = app
            .rpc(Some(&token), &call("tasks/cancel", json!({"id": odd})))
            .await;
        assert_eq!(cancel.code(), -32001, "cancel {shown:?}");
        let mut follow = send_body("test_echo", "continue", &uuid());
        follow["params"]["message"]["taskId"] = json!(odd);
        let reply = app.rpc(Some(&token), &follow).await;
        // A `taskId` longer than any id is refused as a parameter before any lookup.
        let expected = if odd.chars().count() > MAX_ID_CHARS {
            -32602
        } else {
            -32001
        };
        assert_eq!(reply.code(), expected, "continue {shown:?}");
    }
    // The real task is untouched by all of it.
    assert_eq!(get_code(&app, &token, id).await, 0);
}
