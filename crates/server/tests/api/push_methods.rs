//! Push notifications through the A2A methods, end to end: the four config methods on both
//! wires and their errors, inline configs on sends, the notifications a real loopback webhook
//! receiver gets for each state (signed, with the config's token), a task ended through another
//! replica on one Redis, and the capability switched off.

use std::time::Duration;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Settings;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::helpers::{RedisServer, Reply, TestApp, call, spawn_app, uuid, with_redis};
use crate::push::{Answer, Hit, Receiver, fixture, header};

pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// Loopback receivers allowed, fast retries, and one signing key for every replica.
pub(crate) fn push_on(settings: &mut Settings) {
    settings.push.allow_private_targets = true;
    settings.push.base_delay_ms = 50;
    settings.push.max_delay_ms = 200;
    settings.push.poll_interval_ms = 20;
    settings.push.signing_key_path = Some(fixture("ec1.pem"));
}

pub(crate) async fn push_app(customize: impl FnOnce(&mut Settings)) -> TestApp {
    spawn_app(|settings| {
        push_on(settings);
        customize(settings);
    })
    .await
}

pub(crate) async fn rpc(app: &TestApp, token: &str, method: &str, params: Value) -> Reply {
    app.rpc(Some(token), &call(method, params)).await
}

/// A task that keeps working for seconds: a non-blocking send to the slow test skill.
pub(crate) async fn working_task(app: &TestApp, token: &str) -> String {
    let reply = rpc(
        app,
        token,
        "message/send",
        json!({"message": message("test_slow", "take your time"),
               "configuration": {"blocking": false}}),
    )
    .await;
    reply.result()["id"].as_str().unwrap().to_string()
}

pub(crate) fn message(skill: &str, text: &str) -> Value {
    json!({"kind": "message", "messageId": uuid(), "role": "user",
           "parts": [{"kind": "text", "text": text}], "metadata": {"skillId": skill}})
}

pub(crate) fn v1_message(skill: &str, text: &str) -> Value {
    json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}],
           "metadata": {"skillId": skill}})
}

/// The task a notification carries.
pub(crate) fn task_of(hit: &Hit) -> Value {
    serde_json::from_slice(&hit.body).unwrap()
}

fn states(hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|hit| {
            task_of(hit)["status"]["state"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Waits until the receiver got a notification of `state`; returns every hit so far.
async fn wait_for_state(receiver: &Receiver, state: &str) -> Vec<Hit> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let hits = receiver.hits();
        if states(&hits).iter().any(|s| s == state) {
            return hits;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no `{state}` notification; got {:?}",
            states(&hits)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The notification of `state` among `hits`.
fn hit_of<'a>(hits: &'a [Hit], state: &str) -> &'a Hit {
    hits.iter()
        .find(|hit| task_of(hit)["status"]["state"] == state)
        .unwrap_or_else(|| panic!("no `{state}` notification"))
}

fn count_of(hits: &[Hit], state: &str) -> usize {
    states(hits).iter().filter(|s| *s == state).count()
}

/// Checks the notification's JWT against the JWKS `app` serves and the hash of its body.
pub(crate) async fn assert_signed(app: &TestApp, hit: &Hit, url: &str) {
    let jwks: JwkSet = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = header(hit, "authorization")
        .and_then(|value| value.strip_prefix("Bearer "))
        .expect("a bearer JWT");
    let kid = jsonwebtoken::decode_header(token).unwrap().kid.unwrap();
    let jwk = jwks.find(&kid).expect("the kid is in the served JWKS");
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_audience(&[url]);
    validation.set_required_spec_claims(&["exp", "iat", "iss", "aud"]);
    let claims =
        jsonwebtoken::decode::<Value>(token, &DecodingKey::from_jwk(jwk).unwrap(), &validation)
            .expect("the JWT verifies against the served JWKS")
            .claims;
    assert_eq!(
        claims["request_body_sha256"],
        hex::encode(Sha256::digest(&hit.body))
    );
    assert!(uuid::Uuid::parse_str(header(hit, "idempotency-key").unwrap()).is_ok());
}

/// set, get, list and delete on the 0.3 wire, their errors, and the config that is left told
/// of the cancel that ends the task.
async fn methods_0_3(app: &TestApp) {
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let url = receiver.url();
    let alice = app.token("alice", Plan::Pro);
    let bob = app.token("bob", Plan::Pro);
    let task_id = working_task(app, &alice).await;

    let set = rpc(
        app,
        &alice,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": task_id, "pushNotificationConfig":
            {"id": "c-1", "url": url, "token": "tok-1"}}),
    )
    .await;
    assert_eq!(
        set.result(),
        &json!({"taskId": task_id, "pushNotificationConfig":
            {"id": "c-1", "url": url, "token": "tok-1"}})
    );
    let unnamed = rpc(
        app,
        &alice,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": task_id, "pushNotificationConfig": {"url": url}}),
    )
    .await;
    assert_eq!(
        unnamed.result()["pushNotificationConfig"]["id"],
        task_id.as_str(),
        "a config without an id takes the task's"
    );
    let got = rpc(
        app,
        &alice,
        "tasks/pushNotificationConfig/get",
        json!({"id": task_id, "pushNotificationConfigId": "c-1"}),
    )
    .await;
    assert_eq!(got.result(), set.result());
    let listed = rpc(
        app,
        &alice,
        "tasks/pushNotificationConfig/list",
        json!({"id": task_id}),
    )
    .await;
    let listed = listed.result().as_array().unwrap().clone();
    assert_eq!(listed.len(), 2);
    let first = rpc(
        app,
        &alice,
        "tasks/pushNotificationConfig/get",
        json!({"id": task_id}),
    )
    .await;
    assert_eq!(first.result(), &listed[0], "no config id: the first");

    let deleted = rpc(
        app,
        &alice,
        "tasks/pushNotificationConfig/delete",
        json!({"id": task_id, "pushNotificationConfigId": task_id}),
    )
    .await;
    assert_eq!(deleted.result(), &Value::Null);
    for (method, params) in [
        (
            "tasks/pushNotificationConfig/delete",
            json!({"id": task_id, "pushNotificationConfigId": task_id}),
        ),
        (
            "tasks/pushNotificationConfig/get",
            json!({"id": task_id, "pushNotificationConfigId": "nope"}),
        ),
    ] {
        let unknown = rpc(app, &alice, method, params).await;
        assert_eq!(unknown.code(), -32602, "{method}: {}", unknown.body);
        assert!(
            unknown.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no push notification config"),
            "{}",
            unknown.body
        );
    }

    // Unknown tasks, and another user's, are not found.
    for (token, id) in [
        (&alice, "no-such-task".to_string()),
        (&bob, task_id.clone()),
    ] {
        for (method, params) in [
            (
                "tasks/pushNotificationConfig/set",
                json!({"taskId": id, "pushNotificationConfig": {"url": url}}),
            ),
            ("tasks/pushNotificationConfig/get", json!({"id": id})),
            ("tasks/pushNotificationConfig/list", json!({"id": id})),
            (
                "tasks/pushNotificationConfig/delete",
                json!({"id": id, "pushNotificationConfigId": "c-1"}),
            ),
        ] {
            let refused = rpc(app, token, method, params).await;
            assert_eq!(refused.code(), -32001, "{method} {id}: {}", refused.body);
        }
    }
    // Bad configs name the field; bad params are -32602 too.
    for config in [
        json!({"url": "ftp://hooks.example.org/"}),
        json!({"url": "not a url"}),
        json!({"url": url, "token": "a\r\nX-Evil: 1"}),
    ] {
        let refused = rpc(
            app,
            &alice,
            "tasks/pushNotificationConfig/set",
            json!({"taskId": task_id, "pushNotificationConfig": config}),
        )
        .await;
        assert_eq!(refused.code(), -32602, "{}", refused.body);
        assert!(
            refused.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("pushNotificationConfig."),
            "{}",
            refused.body
        );
    }
    let no_url = rpc(
        app,
        &alice,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": task_id, "pushNotificationConfig": {}}),
    )
    .await;
    assert_eq!(no_url.code(), -32602);

    let canceled = rpc(app, &alice, "tasks/cancel", json!({"id": task_id})).await;
    assert_eq!(canceled.result()["status"]["state"], "canceled");
    wait_for_state(&receiver, "canceled").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let hits = receiver.hits();
    assert_eq!(count_of(&hits, "canceled"), 1, "one config left, told once");
    let hit = hit_of(&hits, "canceled");
    assert_eq!(header(hit, "x-a2a-notification-token"), Some("tok-1"));
    assert_eq!(task_of(hit)["id"], task_id.as_str());
    assert_signed(app, hit, &url).await;

    // A kept terminal task takes configs too.
    let kept = rpc(
        app,
        &alice,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": task_id, "pushNotificationConfig": {"id": "later", "url": url}}),
    )
    .await;
    assert_eq!(kept.result()["pushNotificationConfig"]["id"], "later");
}

#[tokio::test]
async fn the_0_3_config_methods_in_memory() {
    methods_0_3(&push_app(|_| {}).await).await;
}

#[tokio::test]
async fn the_0_3_config_methods_on_redis() {
    let redis = RedisServer::start();
    methods_0_3(&push_app(with_redis(redis.url())).await).await;
}

#[tokio::test]
async fn a_task_takes_at_most_the_configured_number_of_configs() {
    let app = push_app(|s| s.push.max_configs_per_task = 2).await;
    let token = app.token("capped", Plan::Pro);
    let task_id = working_task(&app, &token).await;
    for id in ["a", "b", "a"] {
        let set = rpc(
            &app,
            &token,
            "tasks/pushNotificationConfig/set",
            json!({"taskId": task_id, "pushNotificationConfig":
                {"id": id, "url": "http://127.0.0.1:9/hook"}}),
        )
        .await;
        assert_eq!(
            set.result()["pushNotificationConfig"]["id"],
            id,
            "a new id up to the cap, or the same id replaced"
        );
    }
    let third = rpc(
        &app,
        &token,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c", "url": "http://127.0.0.1:9/hook"}),
    )
    .await;
    assert_eq!(third.code(), -32602, "{}", third.body);
    assert_eq!(third.body["error"]["data"][0]["reason"], "INVALID_PARAMS");
    assert!(
        third.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_configs_per_task")
    );
}

#[tokio::test]
async fn the_1_0_config_methods_and_their_errors() {
    let app = push_app(|_| {}).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let url = receiver.url();
    let alice = app.token("alice-v1", Plan::Pro);
    let bob = app.token("bob-v1", Plan::Pro);
    let task_id = working_task(&app, &alice).await;

    let created = rpc(
        &app,
        &alice,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c-1", "url": url, "token": "tok-1",
               "authentication": {"scheme": "Bearer", "credentials": "secret"}}),
    )
    .await;
    let expected = json!({"id": "c-1", "taskId": task_id, "url": url, "token": "tok-1",
                          "authentication": {"scheme": "Bearer", "credentials": "secret"}});
    assert_eq!(created.result(), &expected);
    // The release candidates' name takes the same params.
    let second = rpc(
        &app,
        &alice,
        "SetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c-2", "url": url}),
    )
    .await;
    assert_eq!(second.result()["id"], "c-2");
    let got = rpc(
        &app,
        &alice,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c-1"}),
    )
    .await;
    assert_eq!(got.result(), &expected);

    let all = rpc(
        &app,
        &alice,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    )
    .await;
    assert_eq!(all.result()["configs"].as_array().unwrap().len(), 2);
    assert_eq!(all.result()["nextPageToken"], "");
    let page = rpc(
        &app,
        &alice,
        "ListTaskPushNotificationConfig",
        json!({"taskId": task_id, "pageSize": 1}),
    )
    .await;
    assert_eq!(page.result()["configs"][0]["id"], "c-1");
    let token = page.result()["nextPageToken"].as_str().unwrap().to_string();
    assert!(!token.is_empty());
    let next = rpc(
        &app,
        &alice,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id, "pageSize": 1, "pageToken": token}),
    )
    .await;
    assert_eq!(next.result()["configs"][0]["id"], "c-2");
    assert_eq!(next.result()["nextPageToken"], "");

    let deleted = rpc(
        &app,
        &alice,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c-2"}),
    )
    .await;
    assert_eq!(deleted.result(), &json!({}));
    let gone = rpc(
        &app,
        &alice,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c-2"}),
    )
    .await;
    assert_eq!(gone.code(), -32602);
    assert_eq!(gone.body["error"]["data"][0]["reason"], "INVALID_PARAMS");

    for (token, id) in [
        (&alice, "no-such-task".to_string()),
        (&bob, task_id.clone()),
    ] {
        for (method, params) in [
            (
                "CreateTaskPushNotificationConfig",
                json!({"taskId": id, "url": url}),
            ),
            (
                "GetTaskPushNotificationConfig",
                json!({"taskId": id, "id": "c-1"}),
            ),
            ("ListTaskPushNotificationConfigs", json!({"taskId": id})),
            (
                "DeleteTaskPushNotificationConfig",
                json!({"taskId": id, "id": "c-1"}),
            ),
        ] {
            let refused = rpc(&app, token, method, params).await;
            assert_eq!(refused.code(), -32001, "{method}: {}", refused.body);
            assert_eq!(refused.body["error"]["data"][0]["reason"], "TASK_NOT_FOUND");
        }
    }
    for params in [
        json!({"taskId": task_id, "url": "ftp://hooks.example.org/"}),
        json!({"url": url}),
        json!({"taskId": task_id}),
    ] {
        let refused = rpc(&app, &alice, "CreateTaskPushNotificationConfig", params).await;
        assert_eq!(refused.code(), -32602, "{}", refused.body);
    }

    let canceled = rpc(&app, &alice, "CancelTask", json!({"id": task_id})).await;
    assert_eq!(canceled.result()["status"]["state"], "TASK_STATE_CANCELED");
    // Set over 1.0, the config is told in 1.0 terms.
    let hit = wait_for_hit(&receiver, |hit: &Hit| {
        task_of(hit)["task"]["status"]["state"] == "TASK_STATE_CANCELED"
    })
    .await;
    assert_eq!(header(&hit, "x-a2a-notification-token"), Some("tok-1"));
    assert_signed(&app, &hit, &url).await;
}

/// A blocking `message/send` with an inline config: stored before the task starts, so every
/// state reaches the webhook, each signed, each its own notification.
async fn inline_on_message_send(app: &TestApp) {
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let url = receiver.url();
    let token = app.token("inline", Plan::Pro);
    let sent = rpc(
        app,
        &token,
        "message/send",
        json!({"message": message("test_echo", "hello"),
               "configuration": {"pushNotificationConfig": {"url": url, "token": "inline-tok"}}}),
    )
    .await;
    let task = sent.result();
    assert_eq!(
        task["status"]["state"], "completed",
        "a blocking send waits"
    );
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "echo: hello");
    let task_id = task["id"].as_str().unwrap();
    wait_for_state(&receiver, "completed").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let hits = receiver.hits();
    let mut seen = states(&hits);
    seen.sort();
    assert_eq!(seen, ["completed", "submitted", "working"]);
    let mut keys: Vec<_> = hits
        .iter()
        .map(|hit| header(hit, "idempotency-key").unwrap().to_string())
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 3, "one notification id per change");
    for hit in &hits {
        assert_eq!(task_of(hit)["id"], task_id);
        assert_eq!(header(hit, "x-a2a-notification-token"), Some("inline-tok"));
        assert_signed(app, hit, &url).await;
    }
    let stored = rpc(
        app,
        &token,
        "tasks/pushNotificationConfig/get",
        json!({"id": task_id}),
    )
    .await;
    assert_eq!(
        stored.result()["pushNotificationConfig"]["url"],
        url.as_str()
    );
}

#[tokio::test]
async fn an_inline_config_on_a_blocking_message_send_gets_every_state_in_memory() {
    inline_on_message_send(&push_app(|_| {}).await).await;
}

#[tokio::test]
async fn an_inline_config_on_a_blocking_message_send_gets_every_state_on_redis() {
    let redis = RedisServer::start();
    inline_on_message_send(&push_app(with_redis(redis.url())).await).await;
}

#[tokio::test]
async fn an_inline_config_on_send_message_and_on_a_stream_gets_working_and_completed() {
    let app = push_app(|_| {}).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let url = receiver.url();
    let token = app.token("inline-v1", Plan::Pro);
    let sent = rpc(
        &app,
        &token,
        "SendMessage",
        json!({"message": v1_message("test_echo", "hi"),
               "configuration": {"returnImmediately": true,
                   "taskPushNotificationConfig": {"url": url, "token": "v1-tok"}}}),
    )
    .await;
    let task_id = sent.result()["task"]["id"].as_str().unwrap().to_string();
    // A config set over 1.0 is told in 1.0 terms: a `StreamResponse` holding the task.
    let v1_task = |hit: &Hit| task_of(hit)["task"].clone();
    let completed_of = |task_id: &str| {
        let task_id = task_id.to_string();
        move |hit: &Hit| {
            v1_task(hit)["id"] == task_id.as_str()
                && v1_task(hit)["status"]["state"] == "TASK_STATE_COMPLETED"
        }
    };
    wait_for_hit(&receiver, completed_of(&task_id)).await;
    let of_task: Vec<Hit> = receiver
        .hits()
        .into_iter()
        .filter(|hit| v1_task(hit)["id"] == task_id.as_str())
        .collect();
    assert!(
        of_task
            .iter()
            .any(|hit| v1_task(hit)["status"]["state"] == "TASK_STATE_WORKING")
    );
    assert!(of_task.iter().all(|hit| v1_task(hit).get("kind").is_none()));
    assert!(
        of_task
            .iter()
            .all(|hit| header(hit, "x-a2a-notification-token") == Some("v1-tok"))
    );

    // A streamed send with the release candidates' spelling.
    let streamed = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&token)
        .json(&call(
            "SendStreamingMessage",
            json!({"message": v1_message("test_echo", "streamed"),
                   "configuration": {"pushNotificationConfig": {"url": url, "id": "rc"}}}),
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(streamed.contains("TASK_STATE_COMPLETED"), "{streamed}");
    wait_for_hit(&receiver, move |hit: &Hit| {
        v1_task(hit)["id"] != task_id.as_str()
            && v1_task(hit)["status"]["state"] == "TASK_STATE_COMPLETED"
    })
    .await;
}

/// Waits until the receiver got a notification `wanted` accepts; returns it.
pub(crate) async fn wait_for_hit(receiver: &Receiver, wanted: impl Fn(&Hit) -> bool) -> Hit {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(hit) = receiver.hits().into_iter().find(|hit| wanted(hit)) {
            return hit;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no such notification among {} received",
            receiver.hits().len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_bad_inline_config_is_refused_before_anything_is_charged_or_started() {
    let app = push_app(|s| s.limits.pro.default_per_minute = 1).await;
    let token = app.token("bad-inline", Plan::Pro);
    let refused = rpc(
        &app,
        &token,
        "message/send",
        json!({"message": message("test_echo", "x"),
               "configuration": {"pushNotificationConfig": {"url": "ftp://hooks.example.org/"}}}),
    )
    .await;
    assert_eq!(refused.code(), -32602, "{}", refused.body);
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pushNotificationConfig.url")
    );
    for configuration in [
        json!({"taskPushNotificationConfig": {"url": "not a url"}}),
        json!({"taskPushNotificationConfig": {"token": "no url"}}),
        json!({"taskPushNotificationConfig": 7}),
    ] {
        let refused = rpc(
            &app,
            &token,
            "SendMessage",
            json!({"message": v1_message("test_echo", "x"), "configuration": configuration}),
        )
        .await;
        assert_eq!(refused.code(), -32602, "{}", refused.body);
        assert!(
            refused.body["error"]["message"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("pushnotificationconfig"),
            "{}",
            refused.body
        );
    }
    let listed = rpc(&app, &token, "ListTasks", json!({})).await;
    assert_eq!(listed.result()["totalSize"], 0, "no task was made");
    let allowed = app
        .send(&token, "test_echo", "the one call of the minute")
        .await;
    assert_eq!(
        allowed.result()["status"]["state"],
        "completed",
        "the refused sends were not charged"
    );
}

#[tokio::test]
async fn a_config_set_through_one_replica_is_pushed_when_another_ends_the_task() {
    let redis = RedisServer::start();
    let a = push_app(with_redis(redis.url())).await;
    let b = push_app(with_redis(redis.url())).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let url = receiver.url();
    let token = a.token("two-replicas", Plan::Pro);
    let task_id = working_task(&a, &token).await;
    let set = rpc(
        &a,
        &token,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": task_id, "pushNotificationConfig": {"url": url, "token": "across"}}),
    )
    .await;
    assert!(set.body.get("result").is_some(), "{}", set.body);
    let listed = rpc(
        &b,
        &token,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    )
    .await;
    assert_eq!(listed.result()["configs"][0]["url"], url.as_str());

    let canceled = rpc(&b, &token, "tasks/cancel", json!({"id": task_id})).await;
    assert_eq!(canceled.result()["status"]["state"], "canceled");
    wait_for_state(&receiver, "canceled").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let hits = receiver.hits();
    assert_eq!(count_of(&hits, "canceled"), 1, "ended once, pushed once");
    let hit = hit_of(&hits, "canceled");
    assert_eq!(header(hit, "x-a2a-notification-token"), Some("across"));
    // Both replicas sign with the same key: either one's JWKS verifies the notification.
    assert_signed(&a, hit, &url).await;
    assert_signed(&b, hit, &url).await;
}

#[tokio::test]
async fn with_push_notifications_off_the_card_and_the_refusals_are_as_before() {
    let app = push_app(|s| s.agent.push_notifications = false).await;
    let card = app.get("/.well-known/agent-card.json").await;
    assert_eq!(card.body["capabilities"]["pushNotifications"], false);
    let token = app.token("push-off", Plan::Pro);
    for method in [
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
    ] {
        let refused = rpc(&app, &token, method, json!({"id": "x"})).await;
        assert_eq!(refused.code(), -32601, "{method}");
        assert_eq!(
            refused.body["error"]["message"],
            format!("Method not found: {method}")
        );
    }
    for method in [
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "SetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfig",
    ] {
        let refused = rpc(&app, &token, method, json!({})).await;
        assert_eq!(refused.code(), -32003, "{method}");
        assert_eq!(
            refused.body["error"]["data"][0]["reason"],
            "PUSH_NOTIFICATION_NOT_SUPPORTED"
        );
    }
    // An inline config is ignored, whatever it holds, as before.
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    for config in [
        json!({"url": receiver.url()}),
        json!({"url": "ftp://x"}),
        json!(7),
    ] {
        let sent = rpc(
            &app,
            &token,
            "message/send",
            json!({"message": message("test_echo", "quiet"),
                   "configuration": {"pushNotificationConfig": config}}),
        )
        .await;
        assert_eq!(sent.result()["status"]["state"], "completed");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.hits().is_empty(), "nothing is pushed");
}

/// A config set on a kept task hears about the next turn of that task, even when the turn is a
/// plain blocking `message/send` without a config of its own.
#[tokio::test]
async fn a_kept_tasks_config_is_told_of_a_blocking_continuation() {
    let app = push_app(|_| {}).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let url = receiver.url();
    let token = app.token("continues", Plan::Pro);
    let first = rpc(
        &app,
        &token,
        "message/send",
        json!({"message": message("test_echo", "first")}),
    )
    .await;
    let task_id = first.result()["id"].as_str().unwrap().to_string();
    let set = rpc(
        &app,
        &token,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": task_id, "pushNotificationConfig": {"url": url, "token": "kept"}}),
    )
    .await;
    assert_eq!(set.result()["taskId"], task_id.as_str());
    let mut next = message("test_echo", "second");
    next["taskId"] = json!(task_id);
    let continued = rpc(&app, &token, "message/send", json!({"message": next})).await;
    assert_eq!(continued.result()["status"]["state"], "completed");
    assert_eq!(continued.result()["history"].as_array().unwrap().len(), 4);
    let hits = wait_for_state(&receiver, "completed").await;
    let completed = hit_of(&hits, "completed");
    assert_eq!(task_of(completed)["id"], task_id.as_str());
    assert_eq!(task_of(completed)["history"].as_array().unwrap().len(), 4);
    assert_eq!(header(completed, "x-a2a-notification-token"), Some("kept"));
}
