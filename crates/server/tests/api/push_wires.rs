//! Each config is told in the terms of the wire it was set over: a config set over 0.3 gets the
//! 0.3 task, one set over 1.0 a 1.0 `StreamResponse` holding the task as `GetTask` answers it,
//! signed over the body actually sent; on both stores. And an inline config a task has no room
//! for is refused before its send is charged or started.

use magisterium_a2a::auth::Plan;
use serde_json::{Value, json};

use crate::helpers::{RedisServer, TestApp, with_redis};
use crate::push::{Answer, Hit, Receiver};
use crate::push_methods::{
    assert_signed, message, push_app, rpc, task_of, wait_for_hit, working_task,
};

/// One task, one config set over each wire, the task cancelled: each receiver gets its wire's
/// body.
async fn bodies_follow_the_wire_of_each_config(app: &TestApp) {
    let old = Receiver::start(vec![Answer::Status(200)]).await;
    let new = Receiver::start(vec![Answer::Status(200)]).await;
    let token = app.token("wires", Plan::Pro);
    let task_id = working_task(app, &token).await;
    rpc(
        app,
        &token,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": task_id, "pushNotificationConfig": {"id": "old", "url": old.url()}}),
    )
    .await
    .result();
    rpc(
        app,
        &token,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "new", "url": new.url()}),
    )
    .await
    .result();
    rpc(app, &token, "tasks/cancel", json!({"id": task_id}))
        .await
        .result();

    let old_hit = wait_for_hit(&old, |hit: &Hit| {
        task_of(hit)["status"]["state"] == "canceled"
    })
    .await;
    let old_body = task_of(&old_hit);
    assert_eq!(old_body["kind"], "task", "0.3: the task as 0.3 stores it");
    assert_eq!(old_body["id"], task_id.as_str());

    let new_hit = wait_for_hit(&new, |hit: &Hit| {
        task_of(hit)["task"]["status"]["state"] == "TASK_STATE_CANCELED"
    })
    .await;
    let new_body = task_of(&new_hit);
    let members: Vec<&String> = new_body.as_object().unwrap().keys().collect();
    assert_eq!(members, ["task"], "1.0: a StreamResponse holding the task");
    let got = rpc(app, &token, "GetTask", json!({"id": task_id})).await;
    assert_eq!(
        new_body["task"],
        *got.result(),
        "the task as GetTask answers it"
    );
    assert!(new_body["task"].get("kind").is_none());

    for hit in old.hits() {
        assert_eq!(task_of(&hit)["kind"], "task");
        assert_signed(app, &hit, &old.url()).await;
    }
    for hit in new.hits() {
        assert!(task_of(&hit)["task"]["id"] == task_id.as_str());
        assert_signed(app, &hit, &new.url()).await;
    }
}

#[tokio::test]
async fn notification_bodies_follow_the_wire_of_each_config_in_memory() {
    let app = push_app(|_| {}).await;
    bodies_follow_the_wire_of_each_config(&app).await;
}

#[tokio::test]
async fn notification_bodies_follow_the_wire_of_each_config_on_redis() {
    let redis = RedisServer::start();
    let app = push_app(with_redis(redis.url())).await;
    bodies_follow_the_wire_of_each_config(&app).await;
}

fn history_len(task: &Value) -> usize {
    task["history"].as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn an_inline_config_a_continued_task_has_no_room_for_is_refused_before_the_charge() {
    let app = push_app(|s| {
        s.push.max_configs_per_task = 1;
        s.limits.pro.default_per_minute = 2;
    })
    .await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let url = receiver.url();
    let token = app.token("full", Plan::Pro);
    let first = rpc(
        &app,
        &token,
        "message/send",
        json!({"message": message("test_echo", "one"),
               "configuration": {"pushNotificationConfig": {"id": "a", "url": url}}}),
    )
    .await;
    let task_id = first.result()["id"].as_str().unwrap().to_string();
    let before = history_len(first.result());

    let mut next = message("test_echo", "two");
    next["taskId"] = json!(task_id);
    let refused = rpc(
        &app,
        &token,
        "message/send",
        json!({"message": next,
               "configuration": {"pushNotificationConfig": {"id": "b", "url": url}}}),
    )
    .await;
    assert_eq!(refused.code(), -32602, "{}", refused.body);
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_configs_per_task"),
        "{}",
        refused.body
    );
    let got = rpc(&app, &token, "tasks/get", json!({"id": task_id})).await;
    assert_eq!(got.result()["status"]["state"], "completed");
    assert_eq!(
        history_len(got.result()),
        before,
        "the refused message was not started"
    );

    // The config of the same id is replaced, not added: there is room for it, and the
    // refused send above was not charged, so this second send of the minute is allowed.
    let mut again = message("test_echo", "three");
    again["taskId"] = json!(task_id);
    let replaced = rpc(
        &app,
        &token,
        "message/send",
        json!({"message": again,
               "configuration": {"pushNotificationConfig": {"id": "a", "url": url}}}),
    )
    .await;
    assert_eq!(replaced.result()["status"]["state"], "completed");
    assert!(history_len(replaced.result()) > before);
}
