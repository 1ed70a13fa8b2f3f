//! The same behaviour through both task stores: idempotent retries, continuation, contexts,
//! owner scoping, history trimming and TTL expiry. The Redis runs use a redis-server of their own.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Settings;
use serde_json::{Value, json};

use crate::helpers::{RedisServer, TestApp, call, send_body, spawn_app, uuid, with_redis};

pub async fn behaviour(app: &TestApp) {
    let alice = app.token("alice", Plan::Pro);
    let mallory = app.token("mallory", Plan::Pro);

    // A first message; the retry with the same id returns the same task without running again.
    let message_id = uuid();
    let first = app
        .rpc(
            Some(&alice),
            &send_body("test_echo", "first question", &message_id),
        )
        .await;
    let task = first.result().clone();
    assert_eq!(task["kind"], "task");
    assert_eq!(task["status"]["state"], "completed");
    assert_eq!(task["metadata"]["skillId"], "test_echo");
    assert_eq!(task["history"].as_array().unwrap().len(), 2);
    assert_eq!(task["history"][0]["taskId"], task["id"]);
    assert_eq!(task["history"][0]["contextId"], task["contextId"]);
    assert_eq!(task["history"][1]["role"], "agent");
    assert_eq!(task["artifacts"][0]["name"], "echo");
    assert_eq!(task["artifacts"][0]["parts"][0]["kind"], "text");
    assert_eq!(task["artifacts"][0]["parts"][1]["kind"], "data");
    assert!(task["status"]["timestamp"].as_str().unwrap().ends_with('Z'));
    let retry = app
        .rpc(
            Some(&alice),
            &send_body("test_echo", "first question", &message_id),
        )
        .await;
    assert_eq!(
        retry.result(),
        &task,
        "a retry returns the stored task unchanged"
    );
    assert!(
        retry.header("ratelimit").is_none(),
        "a retry is not charged"
    );

    // The same message id with a different message is a new message, with a task of its own.
    let reused = app
        .rpc(
            Some(&alice),
            &send_body("test_echo", "another question", &message_id),
        )
        .await;
    assert_ne!(reused.result()["id"], task["id"]);
    // Message ids are per user: mallory may use the same id for her own message.
    let theirs = app
        .rpc(Some(&mallory), &send_body("test_echo", "mine", &message_id))
        .await;
    assert_ne!(theirs.result()["id"], task["id"]);

    // Owner scoping: mallory cannot read, cancel or continue alice's task.
    let id = task["id"].as_str().unwrap();
    for body in [
        call("tasks/get", json!({"id": id})),
        call("tasks/cancel", json!({"id": id})),
    ] {
        assert_eq!(app.rpc(Some(&mallory), &body).await.code(), -32001);
    }
    let mut hijack = send_body("test_echo", "let me in", &uuid());
    hijack["params"]["message"]["taskId"] = json!(id);
    assert_eq!(app.rpc(Some(&mallory), &hijack).await.code(), -32001);
    let mut unknown = send_body("test_echo", "x", &uuid());
    unknown["params"]["message"]["taskId"] = json!(uuid());
    assert_eq!(app.rpc(Some(&alice), &unknown).await.code(), -32001);

    // Continuation: same task, history grows, the skill sees the earlier turns, artifacts replaced.
    let mut follow = send_body("test_echo", "second question", &uuid());
    follow["params"]["message"]["taskId"] = json!(id);
    let continued = app.rpc(Some(&alice), &follow).await.result().clone();
    assert_eq!(continued["id"], task["id"]);
    assert_eq!(continued["contextId"], task["contextId"]);
    assert_eq!(continued["history"].as_array().unwrap().len(), 4);
    assert_eq!(
        continued["artifacts"][0]["parts"][1]["data"]["history"],
        json!(["first question", "echo: first question"])
    );
    assert_eq!(continued["artifacts"].as_array().unwrap().len(), 1);
    assert_ne!(
        continued["artifacts"][0]["artifactId"],
        task["artifacts"][0]["artifactId"]
    );
    let stored = app
        .rpc(Some(&alice), &call("tasks/get", json!({"id": id})))
        .await;
    assert_eq!(stored.result(), &continued);
    // A contextId that contradicts the task is refused.
    let mut contradict = send_body("test_echo", "x", &uuid());
    contradict["params"]["message"]["taskId"] = json!(id);
    contradict["params"]["message"]["contextId"] = json!("another-context");
    assert_eq!(app.rpc(Some(&alice), &contradict).await.code(), -32602);

    // historyLength trims from the end; the key is always present.
    for (length, expected) in [(0, 0), (1, 1), (3, 3), (100, 4)] {
        let got = app
            .rpc(
                Some(&alice),
                &call("tasks/get", json!({"id": id, "historyLength": length})),
            )
            .await;
        let history = got.result()["history"].as_array().unwrap().clone();
        assert_eq!(history.len(), expected, "historyLength {length}");
        if expected > 0 {
            assert_eq!(history.last().unwrap()["role"], "agent");
        }
    }

    // A new task in the same context sees the earlier tasks of that context (and only alice's).
    let mut same_context = send_body("test_echo", "third question", &uuid());
    same_context["params"]["message"]["contextId"] = task["contextId"].clone();
    let third = app.rpc(Some(&alice), &same_context).await.result().clone();
    assert_ne!(third["id"], task["id"]);
    assert_eq!(third["contextId"], task["contextId"]);
    let seen = third["artifacts"][0]["parts"][1]["data"]["history"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert_eq!(seen[2], "second question");
    let mut foreign_context = send_body("test_echo", "peek", &uuid());
    foreign_context["params"]["message"]["contextId"] = task["contextId"].clone();
    let peek = app
        .rpc(Some(&mallory), &foreign_context)
        .await
        .result()
        .clone();
    assert_eq!(
        peek["artifacts"][0]["parts"][1]["data"]["history"],
        json!([])
    );

    // A failed task is stored too, with its reason and no artifacts.
    let failed = app
        .send(&alice, "test_fail", "the impossible")
        .await
        .result()
        .clone();
    assert_eq!(failed["status"]["state"], "failed");
    assert_eq!(failed["artifacts"], json!([]));
    assert!(
        failed["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("the impossible")
    );
    let read = app
        .rpc(
            Some(&alice),
            &call("tasks/get", json!({"id": failed["id"]})),
        )
        .await;
    assert_eq!(read.result(), &failed);
    let cancel = app
        .rpc(
            Some(&alice),
            &call("tasks/cancel", json!({"id": failed["id"]})),
        )
        .await;
    assert_eq!(cancel.body["error"]["data"]["state"], "failed");
}

async fn expiry(app: &TestApp) {
    let token = app.token("ttl", Plan::Pro);
    let task = app
        .send(&token, "test_echo", "short-lived")
        .await
        .result()
        .clone();
    let get = call("tasks/get", json!({"id": task["id"]}));
    assert_eq!(app.rpc(Some(&token), &get).await.code(), 0);
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_eq!(
        app.rpc(Some(&token), &get).await.code(),
        -32001,
        "expired after its TTL"
    );
}

fn short_ttl(s: &mut Settings) {
    s.store.task_ttl_secs = 1;
}

#[tokio::test]
async fn memory_store_behaviour() {
    behaviour(&spawn_app(|_| {}).await).await;
}

#[tokio::test]
async fn memory_store_expiry() {
    expiry(&spawn_app(short_ttl).await).await;
}

#[tokio::test]
async fn redis_store_behaviour() {
    let redis = RedisServer::start();
    behaviour(&spawn_app(with_redis(redis.url())).await).await;
}

#[tokio::test]
async fn redis_store_expiry() {
    let redis = RedisServer::start();
    let url = redis.url();
    expiry(
        &spawn_app(move |s| {
            with_redis(url)(s);
            short_ttl(s);
        })
        .await,
    )
    .await;
}

#[tokio::test]
async fn redis_keys_are_namespaced_tagged_and_expire() {
    let redis = RedisServer::start();
    let app = spawn_app(with_redis(redis.url())).await;
    let token = app.token("layout", Plan::Pro);
    let task = app.send(&token, "test_echo", "x").await.result().clone();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut con)
        .await
        .unwrap();
    assert!(keys.contains(&"a2a:v1:schema".to_string()), "{keys:?}");
    let task_key = keys
        .iter()
        .find(|k| k.ends_with(&format!(":task:{}", task["id"].as_str().unwrap())))
        .unwrap();
    let owner = magisterium_a2a::store::Owner::of("", "layout");
    assert!(
        task_key.starts_with(&format!("a2a:v1:{{o:{}}}:", owner.as_str())),
        "the owner is the hash of (issuer, sub): {task_key}"
    );
    assert!(
        !task_key.contains("layout"),
        "the raw sub never appears in keys"
    );
    let ttl: i64 = redis::cmd("TTL")
        .arg(task_key)
        .query_async(&mut con)
        .await
        .unwrap();
    assert!((86_000..=86_400).contains(&ttl), "{ttl}");
    let version: i64 = redis::cmd("GET")
        .arg("a2a:v1:schema")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(version, 5, "every migration in migrations/ is applied");
    let stored: String = redis::cmd("GET")
        .arg(task_key)
        .query_async(&mut con)
        .await
        .unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored, task);
}

#[tokio::test]
async fn readiness_follows_redis() {
    let redis = RedisServer::start();
    let app = spawn_app(with_redis(redis.url())).await;
    assert_eq!(app.get("/readyz").await.status.as_u16(), 200);
    drop(redis);
    let reply = app.get("/readyz").await;
    assert_eq!(reply.status.as_u16(), 503);
    assert_eq!(
        app.get("/healthz").await.status.as_u16(),
        200,
        "the process is still up"
    );
    let token = app.token("down", Plan::Pro);
    let during = app.send(&token, "test_echo", "x").await;
    assert_eq!(
        during.code(),
        -32603,
        "a store fault is an internal error, never a fake success"
    );
}

#[tokio::test]
async fn redis_store_behaviour_with_compressed_writes() {
    let redis = RedisServer::start();
    let url = redis.url();
    behaviour(
        &spawn_app(move |s| {
            with_redis(url)(s);
            s.store.redis_compressed_writes = true;
        })
        .await,
    )
    .await;
}

/// The raw value of a task's key in Redis.
async fn raw_task(redis: &RedisServer, owner_sub: &str, task_id: &str) -> Vec<u8> {
    let owner = magisterium_a2a::store::Owner::of("", owner_sub);
    let client = redis::Client::open(redis.url()).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("GET")
        .arg(format!("a2a:v1:{{o:{}}}:task:{task_id}", owner.as_str()))
        .query_async(&mut con)
        .await
        .unwrap()
}

/// A task sent without waiting (stored by the task runtime's finish, not by the save), once
/// completed.
async fn finished_in_background(app: &TestApp, token: &str, text: &str) -> Value {
    let mut body = send_body("test_echo", text, &uuid());
    body["params"]["configuration"] = json!({"blocking": false});
    let id = app.rpc(Some(token), &body).await.result()["id"].clone();
    for _ in 0..100 {
        let read = app
            .rpc(Some(token), &call("tasks/get", json!({"id": id})))
            .await;
        if read.result()["status"]["state"] == "completed" {
            return read.result().clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the task {id} did not complete");
}

#[tokio::test]
async fn replicas_writing_plain_and_compressed_tasks_read_each_others() {
    let redis = RedisServer::start();
    let (plain_url, compressed_url) = (redis.url(), redis.url());
    // A replica of the release before (it writes plain JSON) beside one that writes compressed.
    let plain = spawn_app(with_redis(plain_url)).await;
    let compressed = spawn_app(move |s| {
        with_redis(compressed_url)(s);
        s.store.redis_compressed_writes = true;
    })
    .await;
    let text = "Which saints are remembered today? ".repeat(20);
    let mut written = Vec::new();
    for (app, form) in [(&plain, b'{'), (&compressed, 0x01)] {
        let token = app.token("upgrade", Plan::Pro);
        let saved = app.send(&token, "test_echo", &text).await.result().clone();
        let finished = finished_in_background(app, &token, &text).await;
        for task in [saved, finished] {
            let id = task["id"].as_str().unwrap().to_string();
            let raw = raw_task(&redis, "upgrade", &id).await;
            assert_eq!(raw[0], form, "the form each replica writes");
            let json_len = serde_json::to_vec(&task).unwrap().len();
            if form == 0x01 {
                assert!(raw.len() * 3 < json_len, "{} of {json_len}", raw.len());
            }
            written.push(task);
        }
    }
    for app in [&plain, &compressed] {
        let token = app.token("upgrade", Plan::Pro);
        for task in &written {
            let read = app
                .rpc(Some(&token), &call("tasks/get", json!({"id": task["id"]})))
                .await;
            assert_eq!(read.result(), task, "either replica reads either form");
        }
        let listed = app
            .rpc(
                Some(&token),
                &call(
                    "ListTasks",
                    json!({"pageSize": 10, "includeArtifacts": true}),
                ),
            )
            .await;
        let listed: Vec<&Value> = listed.result()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|task| &task["id"])
            .collect();
        for task in &written {
            assert!(listed.contains(&&task["id"]), "{listed:?}");
        }
        // A follow-up in the context of a task the other replica wrote sees its earlier turn.
        for task in &written {
            let mut follow_up = send_body("test_echo", "and tomorrow?", &uuid());
            follow_up["params"]["message"]["contextId"] = task["contextId"].clone();
            let reply = app.rpc(Some(&token), &follow_up).await;
            assert_eq!(reply.result()["contextId"], task["contextId"]);
            let seen = &reply.result()["artifacts"][0]["parts"][1]["data"]["history"];
            assert!(
                seen.as_array().unwrap().contains(&json!(text)),
                "the earlier turn is read back: {seen}"
            );
        }
    }
}

/// Each thread that talks to a single Redis has a connection of its own, made on its first
/// command: two threads, each with a single-threaded runtime as the serving threads have, open
/// two connections beside the starting thread's, and each thread's commands are answered on it.
#[test]
fn each_thread_talks_to_redis_on_a_connection_of_its_own() {
    let redis = RedisServer::start();
    let starter = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let connection = starter
        .block_on(magisterium_a2a::redis_conn::connect(
            &redis.url(),
            false,
            Duration::from_secs(2),
        ))
        .unwrap();
    let clients = || -> usize {
        starter.block_on(async {
            let client = redis::Client::open(redis.url()).unwrap();
            let mut own = client.get_multiplexed_async_connection().await.unwrap();
            let list: String = redis::cmd("CLIENT")
                .arg("LIST")
                .query_async(&mut own)
                .await
                .unwrap();
            // This probe's own connection is not counted.
            list.lines().count() - 1
        })
    };
    assert_eq!(
        clients(),
        1,
        "the starting thread's connection, made at once"
    );
    let talked = Arc::new(Barrier::new(3));
    let counted = Arc::new(Barrier::new(3));
    let threads: Vec<_> = (0..2)
        .map(|number| {
            let mut connection = connection.clone();
            let (talked, counted) = (Arc::clone(&talked), Arc::clone(&counted));
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async move {
                    for round in 0..3 {
                        let key = format!("per-thread:{number}:{round}");
                        let _: () = redis::cmd("SET")
                            .arg(&key)
                            .arg(number)
                            .query_async(&mut connection)
                            .await
                            .unwrap();
                        let read: u32 = redis::cmd("GET")
                            .arg(&key)
                            .query_async(&mut connection)
                            .await
                            .unwrap();
                        assert_eq!(read, number);
                    }
                    // The thread, and so its connection, lives until the count is taken.
                    talked.wait();
                    counted.wait();
                })
            })
        })
        .collect();
    talked.wait();
    assert_eq!(
        clients(),
        3,
        "one more connection per thread, not per command"
    );
    counted.wait();
    for thread in threads {
        thread.join().unwrap();
    }
}

/// The saves trim the Redis owner index only once it is an eighth over its cap (each command
/// inside the save script costs about as much as a small command of its own); whatever its
/// length between two trims, the index lists the newest `OWNER_INDEX_CAP` tasks, and the list
/// never grows past the cap and its eighth.
#[tokio::test]
async fn the_redis_owner_index_lists_the_newest_tasks_between_its_trims() {
    use magisterium_a2a::store::{
        MessageRecord, OWNER_INDEX_CAP, Owner, RedisStore, StoredTask, TaskStore,
    };
    let redis = RedisServer::start();
    let store = RedisStore::connect(
        &redis.url(),
        false,
        Duration::from_secs(3600),
        Duration::from_secs(2),
    )
    .await
    .expect("the store");
    let owner = Owner::of("", "many-tasks");
    let slack = OWNER_INDEX_CAP / 8;
    let mut saved = Vec::new();
    for n in 0..OWNER_INDEX_CAP + slack + 3 {
        let task: a2a_types::Task = serde_json::from_value(json!({
            "kind": "task",
            "id": uuid(),
            "contextId": uuid(),
            "status": {"state": "completed"},
        }))
        .expect("a task");
        let record = MessageRecord {
            task_id: task.id.clone(),
        };
        store
            .save(
                &owner,
                &StoredTask::of(&task).unwrap(),
                &uuid(),
                &record,
                true,
            )
            .await
            .expect("a save");
        saved.push(task.id);
        let count = n + 1;
        let past = OWNER_INDEX_CAP + slack;
        if [OWNER_INDEX_CAP + 1, past, past + 1, past + 3].contains(&count) {
            let listed: std::collections::HashSet<String> = store
                .owned_index(&owner)
                .await
                .expect("the index")
                .into_iter()
                .map(|entry| entry.task_id)
                .collect();
            let newest: std::collections::HashSet<String> = saved
                [saved.len().saturating_sub(OWNER_INDEX_CAP)..]
                .iter()
                .cloned()
                .collect();
            assert_eq!(
                listed, newest,
                "after {count} saves: the newest {OWNER_INDEX_CAP}"
            );
        }
    }
    let mut connection = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("a2a:v1:{o:*}:tasks")
        .query_async(&mut connection)
        .await
        .unwrap();
    let length: usize = redis::cmd("LLEN")
        .arg(&keys[0])
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(
        length <= OWNER_INDEX_CAP + slack,
        "the list was trimmed once past its cap and an eighth: {length} entries"
    );
}
