//! Redis faults injected for real, no mocks: a Redis that answers late (every reply held back
//! by a loopback proxy, or writes stalled with `CLIENT PAUSE … WRITE`), one that refuses writes
//! (`maxmemory` reached under `noeviction`), a connection cut after a script call was forwarded
//! and before its reply, and all of these toggled while requests are in flight. Each test has a
//! `redis-server` of its own and one user; the server reaches Redis through the proxy where a
//! fault needs one.
//!
//! The guarantee checked throughout: a client either gets a task it can read back, or `-32603`;
//! nothing half-written is left in Redis; and retrying the same `messageId` once the fault is
//! over returns the task the first attempt stored, or runs the message once, never a refusal of
//! the id and never a second task.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use futures::future::join_all;
use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Settings;
use redis::aio::MultiplexedConnection;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::helpers::{RedisServer, Reply, TestApp, call, send_body, spawn_app, uuid, with_redis};

/// How long the store waits for each Redis reply (`store.redis_timeout_ms`, default 2000).
const STORE_TIMEOUT: Duration = Duration::from_secs(2);
/// Slack on a loaded machine when checking that an answer came at the timeout, not later.
const SLACK: Duration = Duration::from_millis(2500);
/// How long a test waits for the server to serve again once a fault is lifted.
const RECOVERY: Duration = Duration::from_secs(15);

/// The faults the proxy injects, changed while it runs.
#[derive(Default)]
struct Faults {
    /// Every reply from Redis is held back this long, in order.
    reply_delay_ms: AtomicU64,
    /// How many more script calls get their connection cut after the call was forwarded and
    /// before its reply.
    scripts_to_cut: AtomicUsize,
    /// Connections cut so far.
    cuts: AtomicUsize,
}

impl Faults {
    fn delay_replies(&self, delay: Duration) {
        self.reply_delay_ms.store(delay.as_millis() as u64, SeqCst);
    }

    fn cut_scripts(&self, count: usize) {
        self.scripts_to_cut.store(count, SeqCst);
    }

    fn take_cut(&self) -> bool {
        self.scripts_to_cut
            .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    fn cuts(&self) -> usize {
        self.cuts.load(SeqCst)
    }
}

/// A loopback TCP proxy in front of one Redis, injecting [`Faults`].
struct FaultProxy {
    port: u16,
    faults: Arc<Faults>,
    accept: JoinHandle<()>,
}

impl FaultProxy {
    async fn start(upstream: u16) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("proxy port");
        let port = listener.local_addr().expect("proxy address").port();
        let faults = Arc::new(Faults::default());
        let shared = faults.clone();
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, upstream, shared.clone()));
            }
        });
        FaultProxy {
            port,
            faults,
            accept,
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Relays one connection: requests at once, replies after the current delay (order kept). When
/// a script call is to be cut, the next reply is dropped and the server's side of the connection
/// closed; Redis still runs what it was sent, since its side is closed only after that.
async fn relay(client: TcpStream, upstream: u16, faults: Arc<Faults>) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let armed = AtomicBool::new(false);
    let (held, mut due) = mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
    let requests = async {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = match client_read.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if server_write.write_all(&buffer[..n]).await.is_err() {
                return;
            }
            if contains(&buffer[..n], b"EVALSHA") && faults.take_cut() {
                armed.store(true, SeqCst);
            }
        }
    };
    let replies_in = async {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = match server_read.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if armed.load(SeqCst) {
                faults.cuts.fetch_add(1, SeqCst);
                return;
            }
            let delay = Duration::from_millis(faults.reply_delay_ms.load(SeqCst));
            let at = tokio::time::Instant::now() + delay;
            if held.send((at, buffer[..n].to_vec())).is_err() {
                return;
            }
        }
    };
    let replies_out = async {
        while let Some((at, bytes)) = due.recv().await {
            tokio::time::sleep_until(at).await;
            if client_write.write_all(&bytes).await.is_err() {
                return;
            }
        }
    };
    tokio::select! {
        () = requests => {}
        () = replies_in => {}
        () = replies_out => {}
    }
    // The client's side closes now; Redis sees the end of the stream only after what it got.
    drop(client_write);
    drop(client_read);
    let _ = server_write.shutdown().await;
    let mut sink = vec![0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while matches!(server_read.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The Redis store at `url`, with limits high enough for the many calls of these tests.
fn store_at(url: String) -> impl FnOnce(&mut Settings) {
    move |s: &mut Settings| {
        with_redis(url)(s);
        s.limits.enterprise.default_per_minute = 100_000;
    }
}

/// A direct connection to Redis, beside the server's, to inject faults and inspect keys.
async fn admin(redis: &RedisServer) -> MultiplexedConnection {
    redis::Client::open(redis.url())
        .expect("redis url")
        .get_multiplexed_async_connection()
        .await
        .expect("an admin connection to redis")
}

async fn memory_full(admin: &mut MultiplexedConnection, full: bool) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query_async(admin)
        .await
        .expect("CONFIG SET maxmemory-policy");
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(if full { "1" } else { "0" })
        .query_async(admin)
        .await
        .expect("CONFIG SET maxmemory");
}

async fn pause_writes(admin: &mut MultiplexedConnection, for_how_long: Duration) {
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(for_how_long.as_millis() as u64)
        .arg("WRITE")
        .query_async(admin)
        .await
        .expect("CLIENT PAUSE");
}

async fn unpause(admin: &mut MultiplexedConnection) {
    let _: () = redis::cmd("CLIENT")
        .arg("UNPAUSE")
        .query_async(admin)
        .await
        .expect("CLIENT UNPAUSE");
}

/// What a client saw: `Some(task)` or `None` for `-32603`. Anything else under a Redis fault (an
/// HTTP error page, another code, a task that is not finished) fails the test.
fn outcome(reply: &Reply) -> Option<Value> {
    assert_eq!(
        reply.status.as_u16(),
        200,
        "a Redis fault is a JSON-RPC error, never an HTTP error page: {}",
        reply.body
    );
    assert_eq!(reply.body["jsonrpc"], "2.0", "{}", reply.body);
    match reply.code() {
        0 => {
            let task = reply.result().clone();
            assert_eq!(task["kind"], "task", "{task}");
            assert_eq!(task["status"]["state"], "completed", "{task}");
            Some(task)
        }
        -32603 => {
            assert!(
                reply.body["error"]["data"]["requestId"].is_string(),
                "{}",
                reply.body
            );
            None
        }
        other => panic!(
            "under a Redis fault a call answers a task or -32603, not {other}: {}",
            reply.body
        ),
    }
}

fn message_id(body: &Value) -> &str {
    body["params"]["message"]["messageId"]
        .as_str()
        .expect("a message id")
}

/// Sends `body` and times the answer.
async fn timed(app: &TestApp, token: &str, body: Value) -> (Value, Reply, Duration) {
    let started = Instant::now();
    let reply = app.rpc(Some(token), &body).await;
    (body, reply, started.elapsed())
}

/// A call made while Redis is slower than the store's timeout: refused with `-32603`, at the
/// timeout and not when Redis would have answered.
fn assert_refused_at_the_timeout(reply: &Reply, took: Duration) {
    assert!(
        outcome(reply).is_none(),
        "a call while Redis is slower than the timeout is refused, never a fake success: {}",
        reply.body
    );
    assert!(
        took >= STORE_TIMEOUT - Duration::from_millis(300) && took < STORE_TIMEOUT + SLACK,
        "answered after {took:?}, not at the store's timeout of {STORE_TIMEOUT:?}"
    );
}

/// Every task a client received reads back unchanged.
async fn assert_readable(app: &TestApp, token: &str, tasks: &[Value]) {
    for task in tasks {
        let reply = app
            .rpc(Some(token), &call("tasks/get", json!({"id": task["id"]})))
            .await;
        assert_eq!(
            reply.result(),
            task,
            "every task a client received reads back unchanged"
        );
    }
}

/// Retries a failed send once the fault is lifted, as a client would (a `-32603` while the
/// connection comes back is retried again): the task the first attempt stored if its write
/// landed (`landed`), else a fresh run; never `-32602` "messageId already used".
async fn retry(app: &TestApp, token: &str, body: &Value, landed: Option<&str>) -> Value {
    let started = Instant::now();
    loop {
        // `outcome` fails the test on any answer but a task or -32603.
        if let Some(task) = outcome(&app.rpc(Some(token), body).await) {
            if let Some(id) = landed {
                assert_eq!(
                    task["id"], id,
                    "the retry returns the task the first attempt stored, not a second one"
                );
            }
            return task;
        }
        assert!(
            started.elapsed() < RECOVERY,
            "the server serves again after the fault"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until a read of `task` succeeds again; returns how long that took.
async fn wait_until_serving(app: &TestApp, token: &str, task: &Value) -> Duration {
    let started = Instant::now();
    loop {
        let reply = app
            .rpc(Some(token), &call("tasks/get", json!({"id": task["id"]})))
            .await;
        if reply.code() == 0 {
            assert_eq!(reply.result(), task);
            return started.elapsed();
        }
        assert_eq!(reply.code(), -32603, "{}", reply.body);
        assert!(
            started.elapsed() < RECOVERY,
            "the server serves again once Redis does, without a restart"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The store's keys, read straight from Redis (one user per test, so no owner filter).
#[derive(Debug, Default, PartialEq)]
struct Stored {
    /// Task id → the stored task.
    tasks: HashMap<String, Value>,
    /// Hashed message (id and content) → the task id its record names.
    records: HashMap<String, String>,
    /// Hashed context id → the task ids it lists.
    contexts: HashMap<String, Vec<String>>,
}

impl Stored {
    async fn read(admin: &mut MultiplexedConnection) -> Stored {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg("a2a:v1:*")
            .query_async(admin)
            .await
            .expect("KEYS");
        let mut stored = Stored::default();
        for key in keys {
            if let Some((_, id)) = key.split_once(":task:") {
                let raw: String = redis::cmd("GET")
                    .arg(&key)
                    .query_async(admin)
                    .await
                    .unwrap();
                let task: Value = serde_json::from_str(&raw).expect("a stored task is JSON");
                stored.tasks.insert(id.to_string(), task);
            } else if let Some((_, hash)) = key.split_once(":msg:") {
                let raw: String = redis::cmd("GET")
                    .arg(&key)
                    .query_async(admin)
                    .await
                    .unwrap();
                stored.records.insert(hash.to_string(), raw);
            } else if let Some((_, hash)) = key.split_once(":ctx:") {
                let ids: Vec<String> = redis::cmd("LRANGE")
                    .arg(&key)
                    .arg(0)
                    .arg(-1)
                    .query_async(admin)
                    .await
                    .unwrap();
                stored.contexts.insert(hash.to_string(), ids);
            }
        }
        stored
    }

    /// The task id the record of `message_id` names, if its write landed: the named task
    /// whose history holds that message (saves are atomic, so the task holds it only then).
    fn record_for(&self, message_id: &str) -> Option<&str> {
        self.records.values().map(String::as_str).find(|id| {
            self.tasks.get(*id).is_some_and(|task| {
                task["history"]
                    .as_array()
                    .is_some_and(|history| history.iter().any(|m| m["messageId"] == message_id))
            })
        })
    }

    /// Nothing half-written: every record names a stored task, every stored task is named by
    /// exactly one record and listed in exactly one context (each message in these tests starts
    /// a task of its own, or continues one whose record and context already exist).
    fn assert_whole(&self) {
        for (id, task) in &self.tasks {
            assert_eq!(task["id"], id.as_str(), "a task is stored under its own id");
        }
        let mut named: HashMap<&str, usize> = HashMap::new();
        for id in self.records.values() {
            assert!(
                self.tasks.contains_key(id),
                "a message record names task {id}, which is not stored"
            );
            *named.entry(id).or_default() += 1;
        }
        let mut listed: HashMap<&str, usize> = HashMap::new();
        for id in self.contexts.values().flatten() {
            assert!(
                self.tasks.contains_key(id),
                "a context lists task {id}, which is not stored"
            );
            *listed.entry(id).or_default() += 1;
        }
        for id in self.tasks.keys() {
            assert!(
                named.get(id.as_str()).is_some_and(|n| *n >= 1),
                "task {id} is stored without a message record"
            );
            assert_eq!(
                listed.get(id.as_str()),
                Some(&1),
                "task {id} is listed once in its context"
            );
        }
    }
}

#[tokio::test]
async fn a_slow_redis_is_waited_for_within_the_timeout_and_refused_beyond_it() {
    let redis = RedisServer::start();
    let mut admin = admin(&redis).await;
    let proxy = FaultProxy::start(redis.port).await;
    let app = spawn_app(store_at(proxy.url())).await;
    let token = app.token("slow", Plan::Enterprise);
    let first = outcome(&app.send(&token, "test_echo", "before").await).expect("served");
    let mut received = vec![first.clone()];

    // Slow but within the timeout: every reply 400 ms late. A send makes at least two round
    // trips, one in an existing context at least four.
    proxy.faults.delay_replies(Duration::from_millis(400));
    let mut in_context = send_body("test_echo", "same context", &uuid());
    in_context["params"]["message"]["contextId"] = first["contextId"].clone();
    let mut bodies: Vec<Value> = (0..4)
        .map(|i| send_body("test_echo", &format!("slow {i}"), &uuid()))
        .collect();
    bodies.push(in_context);
    let answers = join_all(bodies.into_iter().map(|b| timed(&app, &token, b))).await;
    for (_, reply, took) in &answers {
        let task = outcome(reply).expect("a call within the timeout is waited for and succeeds");
        assert!(
            *took >= Duration::from_millis(400),
            "the replies really were late: {took:?}"
        );
        received.push(task);
    }
    let within = answers.iter().map(|a| a.2).max().unwrap();
    assert_eq!(
        received.last().unwrap()["artifacts"][0]["parts"][1]["data"]["history"],
        json!(["before", "echo: before"]),
        "the slow context read still returned the earlier turns"
    );

    // Slower than the timeout: every reply 5 s late. Calls and readiness answer at the timeout.
    proxy.faults.delay_replies(Duration::from_secs(5));
    let bodies: Vec<Value> = (0..6)
        .map(|i| send_body("test_echo", &format!("too slow {i}"), &uuid()))
        .collect();
    let started = Instant::now();
    let (refused, ready) = tokio::join!(
        join_all(bodies.into_iter().map(|b| timed(&app, &token, b))),
        app.get("/readyz")
    );
    let ready_took = started.elapsed();
    for (_, reply, took) in &refused {
        assert_refused_at_the_timeout(reply, *took);
    }
    assert_eq!(
        ready.status.as_u16(),
        503,
        "not ready while Redis is too slow"
    );
    assert!(ready_took < STORE_TIMEOUT + SLACK, "{ready_took:?}");
    let slowest = refused.iter().map(|a| a.2).max().unwrap();
    assert_eq!(
        app.get("/healthz").await.status.as_u16(),
        200,
        "the process stays up"
    );

    // The slowness ends: the server serves again without a restart, once the replies held back
    // have drained.
    proxy.faults.delay_replies(Duration::ZERO);
    let recovery = wait_until_serving(&app, &token, &first).await;

    // Retrying each refused message: the stored task if its write landed, else a fresh run.
    let stored = Stored::read(&mut admin).await;
    stored.assert_whole();
    for (body, _, _) in &refused {
        let landed = stored.record_for(message_id(body));
        received.push(retry(&app, &token, body, landed).await);
    }
    assert_readable(&app, &token, &received).await;
    Stored::read(&mut admin).await.assert_whole();
    eprintln!(
        "slow Redis: 400 ms replies, sends answered within {within:?}; 5 s replies, refused after at most {slowest:?} (readiness {ready_took:?}); serving again {recovery:?} after the delay ended"
    );
}

#[tokio::test]
async fn writes_stalled_past_the_timeout_land_later_and_a_retry_returns_them() {
    let redis = RedisServer::start();
    let mut admin = admin(&redis).await;
    let app = spawn_app(store_at(redis.url())).await;
    let token = app.token("paused", Plan::Enterprise);
    let first = outcome(&app.send(&token, "test_echo", "before").await).expect("served");
    let mut received = vec![first.clone()];

    // Writes stalled for 800 ms, within the timeout: the call waits and succeeds.
    pause_writes(&mut admin, Duration::from_millis(800)).await;
    let (_, reply, within) = timed(&app, &token, send_body("test_echo", "brief", &uuid())).await;
    received.push(outcome(&reply).expect("a write stalled within the timeout is waited for"));
    assert!(
        within >= Duration::from_millis(400),
        "the write really waited: {within:?}"
    );

    // Writes stalled until further notice: the call is refused at the timeout; its write waits
    // in Redis.
    pause_writes(&mut admin, Duration::from_secs(60)).await;
    let (lone, reply, lone_took) =
        timed(&app, &token, send_body("test_echo", "stalled", &uuid())).await;
    assert_refused_at_the_timeout(&reply, lone_took);
    // Behind it, further calls are refused at the timeout as well (a read may succeed or wait
    // behind the stalled write on the shared connection; it is never answered wrongly).
    let bodies: Vec<Value> = (0..4)
        .map(|i| send_body("test_echo", &format!("behind {i}"), &uuid()))
        .collect();
    let (behind, read) = tokio::join!(
        join_all(bodies.into_iter().map(|b| timed(&app, &token, b))),
        timed(&app, &token, call("tasks/get", json!({"id": first["id"]})))
    );
    for (_, reply, took) in &behind {
        assert_refused_at_the_timeout(reply, *took);
    }
    let (_, read, read_took) = read;
    assert!(read_took < STORE_TIMEOUT + SLACK, "{read_took:?}");
    let read_served = outcome(&read);
    match &read_served {
        Some(task) => assert_eq!(task, &first),
        None => assert!(read_took >= STORE_TIMEOUT - Duration::from_millis(300)),
    }

    // Redis resumes: the stalled write runs, whole; the retry returns exactly that task.
    unpause(&mut admin).await;
    let recovery = wait_until_serving(&app, &token, &first).await;
    let stored = Stored::read(&mut admin).await;
    stored.assert_whole();
    let landed = stored
        .record_for(message_id(&lone))
        .expect("the stalled write landed once Redis resumed")
        .to_string();
    let again = retry(&app, &token, &lone, Some(&landed)).await;
    assert_eq!(again, stored.tasks[&landed], "the stored task, unchanged");
    received.push(again);
    for (body, _, _) in &behind {
        let landed = stored.record_for(message_id(body));
        received.push(retry(&app, &token, body, landed).await);
    }
    assert_readable(&app, &token, &received).await;
    let after = Stored::read(&mut admin).await;
    after.assert_whole();
    assert_eq!(
        after.records.len(),
        received.len(),
        "one task per message, never two"
    );
    eprintln!(
        "paused writes: 800 ms pause answered in {within:?}; a longer pause refused after {lone_took:?}; a read behind it {} after {read_took:?}; serving {recovery:?} after the pause ended",
        if read_served.is_some() {
            "served"
        } else {
            "refused"
        }
    );
}

#[tokio::test]
async fn writes_refused_for_memory_leave_nothing_and_a_retry_runs_fresh() {
    let redis = RedisServer::start();
    let mut admin = admin(&redis).await;
    let app = spawn_app(store_at(redis.url())).await;
    let token = app.token("oom", Plan::Enterprise);
    let first = outcome(&app.send(&token, "test_echo", "before").await).expect("served");
    let mut received = vec![first.clone()];

    // Redis is out of memory: every write is refused with an OOM error, inside the save script.
    memory_full(&mut admin, true).await;
    let before = Stored::read(&mut admin).await;
    let mut refused = Vec::new();
    let mut slowest = Duration::ZERO;
    for i in 0..5 {
        let (body, reply, took) = timed(
            &app,
            &token,
            send_body("test_echo", &format!("oom {i}"), &uuid()),
        )
        .await;
        assert!(
            outcome(&reply).is_none(),
            "a refused write is an error, never a fake success: {}",
            reply.body
        );
        assert!(took < STORE_TIMEOUT + SLACK, "{took:?}");
        slowest = slowest.max(took);
        refused.push(body);
    }
    // Reads are still served.
    assert_readable(&app, &token, &received).await;
    assert_eq!(
        Stored::read(&mut admin).await,
        before,
        "a refused write leaves nothing behind"
    );

    // Memory again: each retry runs the message once, as new.
    memory_full(&mut admin, false).await;
    for body in &refused {
        let task = retry(&app, &token, body, None).await;
        assert!(
            received.iter().all(|t| t["id"] != task["id"]),
            "a fresh task"
        );
        received.push(task);
    }
    assert_readable(&app, &token, &received).await;
    let after = Stored::read(&mut admin).await;
    after.assert_whole();
    assert_eq!(after.records.len(), received.len(), "one task per message");
    eprintln!("out of memory: writes refused in at most {slowest:?}");
}

#[tokio::test]
async fn a_connection_cut_before_the_reply_keeps_the_write_and_a_retry_returns_it() {
    let redis = RedisServer::start();
    let mut admin = admin(&redis).await;
    let proxy = FaultProxy::start(redis.port).await;
    let app = spawn_app(store_at(proxy.url())).await;
    let token = app.token("cut", Plan::Enterprise);
    // The first save also loads the script into Redis.
    let first = outcome(&app.send(&token, "test_echo", "before").await).expect("served");

    // A new task: the save reaches Redis, its reply never reaches the server.
    proxy.faults.cut_scripts(1);
    let body = send_body("test_echo", "cut short", &uuid());
    let reply = app.rpc(Some(&token), &body).await;
    assert!(
        outcome(&reply).is_none(),
        "a lost reply is an error, never a guess: {}",
        reply.body
    );
    assert_eq!(proxy.faults.cuts(), 1);
    let stored = Stored::read(&mut admin).await;
    stored.assert_whole();
    let landed = stored
        .record_for(message_id(&body))
        .expect("Redis ran the save it received before the cut")
        .to_string();
    let task = retry(&app, &token, &body, Some(&landed)).await;
    assert_eq!(task, stored.tasks[&landed]);

    // A continuation of the first task, cut the same way: the retry returns the continued task.
    proxy.faults.cut_scripts(1);
    let mut follow = send_body("test_echo", "and then?", &uuid());
    follow["params"]["message"]["taskId"] = first["id"].clone();
    assert!(outcome(&app.rpc(Some(&token), &follow).await).is_none());
    assert_eq!(proxy.faults.cuts(), 2);
    let stored = Stored::read(&mut admin).await;
    stored.assert_whole();
    let continued = retry(&app, &token, &follow, Some(first["id"].as_str().unwrap())).await;
    assert_eq!(continued["history"].as_array().unwrap().len(), 4);
    assert_eq!(
        continued,
        stored.tasks[first["id"].as_str().unwrap()],
        "the retry returns the continuation the first attempt stored, not a second turn"
    );

    assert_readable(&app, &token, &[task, continued]).await;
    let after = Stored::read(&mut admin).await;
    after.assert_whole();
    assert_eq!((after.tasks.len(), after.records.len()), (2, 3));
}

#[tokio::test]
async fn under_toggled_faults_every_client_gets_a_readable_task_or_an_error() {
    let redis = RedisServer::start();
    let mut admin = admin(&redis).await;
    let proxy = FaultProxy::start(redis.port).await;
    let app = Arc::new(spawn_app(store_at(proxy.url())).await);
    let token = app.token("toggled", Plan::Enterprise);
    let first = outcome(&app.send(&token, "test_echo", "before").await).expect("served");

    // Four clients send paced messages while the faults come and go.
    let done = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..4)
        .map(|client| {
            let (app, token, done) = (app.clone(), token.clone(), done.clone());
            tokio::spawn(async move {
                let mut sent = Vec::new();
                while !done.load(SeqCst) {
                    let text = format!("client {client} call {}", sent.len());
                    let body = send_body("test_echo", &text, &uuid());
                    let reply = app.rpc(Some(&token), &body).await;
                    sent.push((body, outcome(&reply)));
                    tokio::time::sleep(Duration::from_millis(60)).await;
                }
                sent
            })
        })
        .collect();
    let faults = proxy.faults.clone();
    let phase = |ms| tokio::time::sleep(Duration::from_millis(ms));
    for round in 0..2 {
        phase(150).await;
        memory_full(&mut admin, true).await;
        phase(250).await;
        memory_full(&mut admin, false).await;
        phase(150).await;
        faults.cut_scripts(usize::MAX);
        phase(250).await;
        faults.cut_scripts(0);
        phase(150).await;
        if round == 0 {
            // Writes stalled past the timeout, then resumed by Redis itself.
            pause_writes(&mut admin, Duration::from_millis(2500)).await;
            phase(2500).await;
        } else {
            // Every reply late past the timeout, then on time again once the late ones drain.
            faults.delay_replies(Duration::from_millis(2500));
            phase(300).await;
            faults.delay_replies(Duration::ZERO);
            phase(2500).await;
        }
    }
    done.store(true, SeqCst);
    let mut sent = Vec::new();
    for client in clients {
        sent.extend(client.await.expect("a client's calls met the guarantee"));
    }
    unpause(&mut admin).await;
    let recovery = wait_until_serving(&app, &token, &first).await;

    let got = sent.iter().filter(|(_, task)| task.is_some()).count();
    let refused = sent.len() - got;
    assert!(sent.len() >= 50, "{} calls", sent.len());
    assert!(got > 0 && refused > 0, "{got} tasks, {refused} errors");
    assert!(proxy.faults.cuts() > 0);

    // The guarantee: each client got a task it can read back, or an error; Redis holds nothing
    // half-written; a retry returns what the first attempt stored, or runs the message once.
    let stored = Stored::read(&mut admin).await;
    stored.assert_whole();
    let mut received = vec![first];
    let mut landed_then_refused = 0;
    for (body, task) in &sent {
        let record = stored.record_for(message_id(body));
        match task {
            Some(task) => {
                assert_eq!(
                    record,
                    task["id"].as_str(),
                    "the task a client got is the one stored for its message"
                );
                received.push(task.clone());
            }
            None => {
                landed_then_refused += usize::from(record.is_some());
                received.push(retry(&app, &token, body, record).await);
            }
        }
    }
    assert_readable(&app, &token, &received).await;
    let after = Stored::read(&mut admin).await;
    after.assert_whole();
    assert_eq!(
        (after.records.len(), after.tasks.len()),
        (received.len(), received.len()),
        "exactly one task per message"
    );
    eprintln!(
        "toggled faults: {} calls, {got} tasks, {refused} errors ({landed_then_refused} of them stored, returned by the retry), {} cuts; serving {recovery:?} after the last fault",
        sent.len(),
        proxy.faults.cuts()
    );
}
