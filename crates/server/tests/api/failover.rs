//! Redis failover for real: a primary, two replicas and three sentinels (`redis-server
//! --sentinel`), each a process of the test's own on a free loopback port. The server finds the
//! primary through the sentinels; under load from the test's clients the primary is killed with
//! SIGKILL, the sentinels promote a replica, and the server follows. What is measured: the time
//! from the kill until sends succeed again, and which tasks the clients were answered with are
//! gone afterwards, with `store.replicas_to_ack` 1 (none may be) and 0 (reported). Beside it,
//! `replicas_to_ack` on its own: a write fewer replicas took than asked is refused, and a resend
//! of the same message succeeds once they are there, with the first attempt's task.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::{LimitBackend, Settings, StoreBackend};
use magisterium_a2a::redis_conn;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::helpers::{
    RedisCluster, RedisServer, Reply, TestApp, call, free_port, send_body, spawn_app, uuid,
};

/// A primary starts a replica's first sync at once (Redis waits 5 s for more replicas by default).
const SYNC_AT_ONCE: &[&str] = &["--repl-diskless-sync-delay", "0"];
/// The name the sentinels monitor the primary under.
const MASTER: &str = "a2a";
/// Clients sending at once.
const CLIENTS: usize = 4;
/// How long the clients send before the kill.
const BEFORE_KILL: Duration = Duration::from_millis(1500);
/// How long the clients keep sending once sends succeed again.
const AFTER_RECOVERY: Duration = Duration::from_secs(1);
/// The longest a failover may take before the test fails (the sentinels' down-after is 1 s).
const RECOVERY_BOUND: Duration = Duration::from_secs(20);

/// `redis-server --sentinel` on a free port, with a config file of its own (a sentinel
/// rewrites it), killed on drop.
struct Sentinel {
    child: Child,
    port: u16,
    dir: TempDir,
}

impl Sentinel {
    fn start(primary: u16) -> Sentinel {
        let dir = TempDir::new().expect("temp dir");
        let port = free_port();
        let conf = dir.path().join("sentinel.conf");
        std::fs::write(
            &conf,
            format!(
                "port {port}\nbind 127.0.0.1\ndir {}\nlogfile {}\n\
                 sentinel monitor {MASTER} 127.0.0.1 {primary} 2\n\
                 sentinel down-after-milliseconds {MASTER} 1000\n\
                 sentinel failover-timeout {MASTER} 4000\n\
                 sentinel parallel-syncs {MASTER} 2\n",
                dir.path().display(),
                dir.path().join("sentinel.log").display()
            ),
        )
        .expect("sentinel config");
        let child = Command::new("redis-server")
            .arg(&conf)
            .arg("--sentinel")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server --sentinel starts");
        Sentinel { child, port, dir }
    }

    /// The failover events of this sentinel's log (elections, promotions, switches, aborts),
    /// for a failure's message.
    fn failover_events(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("sentinel.log")).unwrap_or_default();
        log.lines()
            .filter(|line| {
                [
                    "switch-master",
                    "failover",
                    "odown",
                    "promoted",
                    "elected",
                    "vote",
                ]
                .iter()
                .any(|event| line.contains(event))
            })
            .map(|line| line.split_once(" # ").map_or(line, |(_, event)| event))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A primary, two replicas and three sentinels agreeing on them.
struct Deployment {
    nodes: Vec<RedisServer>,
    sentinels: Vec<Sentinel>,
}

impl Deployment {
    async fn start() -> Deployment {
        Self::start_with(&[]).await
    }

    /// A deployment whose primary also takes `primary_args`.
    async fn start_with(primary_args: &[&str]) -> Deployment {
        let mut args = SYNC_AT_ONCE.to_vec();
        args.extend_from_slice(primary_args);
        let primary = RedisServer::start_with(&args);
        let port = primary.port.to_string();
        let mut nodes = vec![primary];
        for _ in 0..2 {
            let mut args = vec!["--replicaof", "127.0.0.1", &port];
            args.extend_from_slice(SYNC_AT_ONCE);
            nodes.push(RedisServer::start_with(&args));
        }
        // A replica the sentinels count may still wait for its first sync.
        wait_for_replicas(nodes[0].port, 2).await;
        let sentinels: Vec<Sentinel> = (0..3).map(|_| Sentinel::start(nodes[0].port)).collect();
        let deployment = Deployment { nodes, sentinels };
        deployment.wait_until_agreed(2).await;
        deployment
    }

    /// `host:port` of every sentinel, as `store.redis_sentinels` takes them.
    fn sentinel_list(&self) -> String {
        self.sentinels
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Waits until every sentinel knows the primary with `replicas` replicas and the two other
    /// sentinels (needed to elect a leader for a failover).
    async fn wait_until_agreed(&self, replicas: i64) {
        let started = Instant::now();
        loop {
            let mut agreed = true;
            for sentinel in &self.sentinels {
                let facts = sentinel_facts(sentinel.port).await;
                agreed &= facts
                    .get("num-slaves")
                    .is_some_and(|n| n == &replicas.to_string())
                    && facts.get("num-other-sentinels").is_some_and(|n| n == "2")
                    && facts.get("flags").is_some_and(|f| f == "master");
            }
            if agreed {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the sentinels did not agree on the deployment"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// What each node and sentinel holds and says, for a failure's message: each node's role
    /// and its keys naming `task_id` (the leases' set included), each sentinel's primary,
    /// epoch and failover events.
    async fn picture(&self, task_id: &str) -> String {
        let mut picture = Vec::new();
        for server in &self.nodes {
            let (role, _) = role_and_keys(server.port).await;
            let keys = keys_matching(server.port, &format!("*{task_id}*")).await;
            let leases: Vec<String> = redis::cmd("ZRANGE")
                .arg("a2a:v1:leases")
                .arg(0)
                .arg(-1)
                .query_async(&mut node(server.port).await)
                .await
                .unwrap_or_default();
            let leased = leases.iter().any(|member| member.ends_with(task_id));
            picture.push(format!(
                "node {}: {role}, keys {keys:?}, leased {leased}",
                server.port
            ));
        }
        for sentinel in &self.sentinels {
            let facts = sentinel_facts(sentinel.port).await;
            picture.push(format!(
                "sentinel {}: primary {:?}:{:?} epoch {:?}; {}",
                sentinel.port,
                facts.get("ip"),
                facts.get("port"),
                facts.get("config-epoch"),
                sentinel.failover_events()
            ));
        }
        picture.join("\n")
    }

    /// SIGKILLs the current primary (the first node).
    fn kill_primary(&mut self) {
        self.nodes.remove(0).stop();
    }

    /// Has the sentinels move the primary to a replica while it still runs (`SENTINEL
    /// FAILOVER`), and returns the new primary's port once every sentinel names it and it
    /// answers as a primary.
    async fn fail_over(&self) -> u16 {
        let old = self.nodes[0].port;
        let mut connection =
            redis::Client::open(format!("redis://127.0.0.1:{}/", self.sentinels[0].port))
                .expect("sentinel URL")
                .get_multiplexed_async_connection()
                .await
                .expect("sentinel");
        let _: String = redis::cmd("SENTINEL")
            .arg("FAILOVER")
            .arg(MASTER)
            .query_async(&mut connection)
            .await
            .expect("SENTINEL FAILOVER");
        let started = Instant::now();
        loop {
            let mut named = Vec::new();
            for sentinel in &self.sentinels {
                named.push(sentinel_facts(sentinel.port).await.get("port").cloned());
            }
            if let Some(Some(port)) = named.first()
                && named.iter().all(|n| n.as_deref() == Some(port))
                && let Ok(port) = port.parse::<u16>()
                && port != old
                && role_and_keys(port).await.0 == "master"
            {
                return port;
            }
            assert!(
                started.elapsed() < RECOVERY_BOUND,
                "the sentinels moved the primary"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Where a send's task is stored: whether Redis on `port` holds its key.
async fn holds_task(port: u16, task_id: &str) -> bool {
    !keys_matching(port, &format!("a2a:v1:{{o:*}}:task:{task_id}"))
        .await
        .is_empty()
}

/// One `test_echo` send as `token`: its task's id.
async fn sent_task(app: &TestApp, token: &str) -> String {
    let reply = app
        .rpc(
            Some(token),
            &send_body("test_echo", "which primary", &uuid()),
        )
        .await;
    assert_eq!(reply.code(), 0, "a send: {}", reply.body);
    reply.result()["id"]
        .as_str()
        .expect("the task's id")
        .to_string()
}

/// After two failovers in a row the sentinels can disagree for a while: one that missed the
/// second still names the primary of the first, which keeps answering as a primary until it is
/// demoted. Here the stale sentinel, asked first, names a lone Redis that answers as a primary
/// and holds nothing; the others name the primary of a newer configuration (a failover made
/// with `SENTINEL FAILOVER`). The server must take the newest configuration's primary: its
/// tasks are stored there, and the stale one receives nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sentinel_that_missed_a_failover_cannot_send_the_server_to_a_stale_primary() {
    let deployment = Deployment::start().await;
    let primary = deployment.fail_over().await;
    let stale = RedisServer::start();
    let stale_sentinel = Sentinel::start(stale.port);
    let sentinels = format!(
        "127.0.0.1:{},{}",
        stale_sentinel.port,
        deployment.sentinel_list()
    );
    let app = spawn_app(through_sentinels(sentinels, 0)).await;
    let token = app.token("newest", Plan::Enterprise);
    for _ in 0..3 {
        let task_id = sent_task(&app, &token).await;
        assert!(
            holds_task(primary, &task_id).await,
            "the task is stored on the primary of the newest configuration"
        );
    }
    assert_eq!(
        role_and_keys(stale.port).await,
        ("master".to_string(), 0),
        "the primary named by the stale sentinel received nothing"
    );
}

/// The sentinels move the primary while the old one keeps answering as a primary (here it
/// refuses the sentinels' reconfiguration: `CLIENT` is renamed away on it, so their `MULTI` …
/// `CLIENT KILL` … `EXEC` aborts, and no connection of the server is cut). The server follows
/// the sentinels' `+switch-master` message: its sends are soon stored on the new primary, not
/// on the old one, where they would be lost when it rejoins as a replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_server_follows_the_sentinels_when_the_old_primary_still_answers() {
    let deployment = Deployment::start_with(&["--rename-command", "CLIENT", ""]).await;
    let old = deployment.nodes[0].port;
    let app = spawn_app(through_sentinels(deployment.sentinel_list(), 0)).await;
    let token = app.token("follower", Plan::Enterprise);
    let before = sent_task(&app, &token).await;
    assert!(
        holds_task(old, &before).await,
        "stored on the first primary"
    );

    let primary = deployment.fail_over().await;
    assert_eq!(
        role_and_keys(old).await.0,
        "master",
        "the old primary still answers as a primary"
    );
    let started = Instant::now();
    loop {
        let reply = app
            .rpc(
                Some(&token),
                &send_body("test_echo", "which primary", &uuid()),
            )
            .await;
        if reply.code() == 0 {
            let task_id = reply.result()["id"].as_str().expect("id").to_string();
            if holds_task(primary, &task_id).await {
                println!(
                    "the server followed the sentinels {:.2} s after the failover",
                    started.elapsed().as_secs_f64()
                );
                break;
            }
        } else {
            assert_eq!(reply.code(), -32603, "a send: {}", reply.body);
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the server still stores its tasks on the old primary"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What a sentinel says of the primary (`SENTINEL MASTER`), as field → value.
async fn sentinel_facts(port: u16) -> std::collections::HashMap<String, String> {
    let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}/")) else {
        return Default::default();
    };
    let Ok(mut connection) = client.get_multiplexed_async_connection().await else {
        return Default::default();
    };
    let facts: Vec<String> = redis::cmd("SENTINEL")
        .arg("MASTER")
        .arg(MASTER)
        .query_async(&mut connection)
        .await
        .unwrap_or_default();
    facts
        .chunks(2)
        .filter_map(|pair| match pair {
            [k, v] => Some((k.clone(), v.clone())),
            _ => None,
        })
        .collect()
}

fn through_sentinels(sentinels: String, replicas_to_ack: u32) -> impl FnOnce(&mut Settings) {
    move |s: &mut Settings| {
        s.store.backend = StoreBackend::Redis;
        s.store.redis_sentinels = Some(sentinels);
        s.store.redis_sentinel_master = Some(MASTER.into());
        s.store.replicas_to_ack = replicas_to_ack;
        s.store.replicas_ack_timeout_ms = 1000;
        // The limiter follows the primary too (its charges ride in the saves): limits far
        // above the test's rate, so that none is refused for them.
        s.limits.enabled = Some(true);
        s.limits.backend = LimitBackend::Redis;
        s.limits.enterprise.default_per_minute = 1_000_000;
        s.limits.reads_per_minute = 1_000_000;
    }
}

/// One send a client made: by whom, when it started and ended, and the task when it was
/// answered with one.
struct Sent {
    token: usize,
    started: Instant,
    ended: Instant,
    message_id: String,
    task: Option<Value>,
}

/// A task, or `None` for the refusal a client may resend (`-32603`); anything else fails.
fn task_or_retryable(reply: &Reply) -> Option<Value> {
    if reply.code() == -32603 {
        return None;
    }
    let task = reply.result();
    assert_eq!(
        task["kind"], "task",
        "a send is answered with a task: {}",
        reply.body
    );
    Some(task.clone())
}

/// [`CLIENTS`] clients sending in turn as each of `tokens`' users, every send recorded.
struct Load {
    app: Arc<TestApp>,
    tokens: Arc<Vec<String>>,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<Sent>>>,
    clients: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    fn start(app: Arc<TestApp>, tokens: Vec<String>) -> Load {
        let tokens = Arc::new(tokens);
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let clients = (0..CLIENTS)
            .map(|client| {
                let (app, tokens, stop, log) =
                    (app.clone(), tokens.clone(), stop.clone(), log.clone());
                tokio::spawn(async move {
                    let mut turn = client;
                    while !stop.load(SeqCst) {
                        let token = turn % tokens.len();
                        turn += CLIENTS;
                        let message_id = uuid();
                        let started = Instant::now();
                        let body = send_body("test_echo", "through a failover", &message_id);
                        let task = task_or_retryable(&app.rpc(Some(&tokens[token]), &body).await);
                        let refused = task.is_none();
                        log.lock().unwrap().push(Sent {
                            token,
                            started,
                            ended: Instant::now(),
                            message_id,
                            task,
                        });
                        if refused {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    }
                })
            })
            .collect();
        Load {
            app,
            tokens,
            stop,
            log,
            clients,
        }
    }

    /// Waits until sends are refused after `killed_at`, then succeed again: no refusal for
    /// [`AFTER_RECOVERY`] and at least two successes per client since the last one. Returns
    /// when the first success after the last refusal ended (the recovery).
    async fn until_recovered(&self, killed_at: Instant) -> Instant {
        loop {
            {
                let log = self.log.lock().unwrap();
                let last_refusal = log
                    .iter()
                    .filter(|s| s.ended > killed_at && s.task.is_none())
                    .map(|s| s.ended)
                    .max();
                if let Some(refused) = last_refusal
                    && refused.elapsed() > AFTER_RECOVERY
                {
                    let successes: Vec<Instant> = log
                        .iter()
                        .filter(|s| s.ended > refused && s.task.is_some())
                        .map(|s| s.ended)
                        .collect();
                    if successes.len() >= 2 * CLIENTS {
                        return successes.into_iter().min().expect("successes");
                    }
                }
            }
            assert!(
                killed_at.elapsed() < RECOVERY_BOUND,
                "sends succeed again within {RECOVERY_BOUND:?} of the primary's death"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the clients, reads back every task they were answered with and resends every
    /// refused message.
    async fn finish(self, killed_at: Instant, recovered: Instant) -> Figures {
        self.stop.store(true, SeqCst);
        for client in self.clients {
            client.await.expect("client");
        }
        let sent = std::mem::take(&mut *self.log.lock().unwrap());
        let after = sent.iter().filter(|s| s.ended > recovered).count();
        assert!(after > 0, "the clients sent after the recovery");
        let acknowledged: Vec<&Sent> = sent.iter().filter(|s| s.task.is_some()).collect();
        let mut lost = 0;
        for sent in &acknowledged {
            let id = &sent.task.as_ref().expect("a task")["id"];
            let body = call("tasks/get", json!({"id": id}));
            let reply = retried(&self.app, &self.tokens[sent.token], &body).await;
            if reply.code() != 0 {
                let when = if sent.ended > killed_at {
                    format!("{} ms after", (sent.ended - killed_at).as_millis())
                } else {
                    format!("{} ms before", (killed_at - sent.ended).as_millis())
                };
                println!(
                    "failover: task {id}, answered {when} the kill, is not read back: {}",
                    reply.body
                );
                lost += 1;
            }
        }
        // Each refused message, resent once the server serves again, is answered with a task
        // (the first attempt's when its write survived, else a fresh run).
        for refused in sent.iter().filter(|s| s.task.is_none()) {
            let body = send_body("test_echo", "through a failover", &refused.message_id);
            let reply = retried(&self.app, &self.tokens[refused.token], &body).await;
            let task = task_or_retryable(&reply)
                .unwrap_or_else(|| panic!("a resend after the recovery succeeds: {}", reply.body));
            assert_eq!(task["status"]["state"], "completed");
        }
        let last_refusal = sent
            .iter()
            .filter(|s| s.task.is_none())
            .map(|s| s.ended)
            .max()
            .unwrap_or(killed_at);
        let slowest = sent
            .iter()
            .filter(|s| s.ended > killed_at)
            .map(|s| s.ended - s.started)
            .max()
            .unwrap_or_default();
        Figures {
            recovery: recovered - killed_at,
            last_refusal: last_refusal.saturating_duration_since(killed_at),
            slowest,
            acknowledged: acknowledged.len(),
            lost,
            refused: sent.iter().filter(|s| s.task.is_none()).count(),
        }
    }
}

/// A call's answer, tried again while it is `-32603` (a connection the failover closed is
/// found closed by the call that meets it), as a client would, for up to 5 s.
async fn retried(app: &TestApp, token: &str, body: &Value) -> Reply {
    let mut reply = app.rpc(Some(token), body).await;
    for _ in 0..50 {
        if reply.code() != -32603 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        reply = app.rpc(Some(token), body).await;
    }
    reply
}

/// What one failover run measured.
struct Figures {
    /// From the kill to the first success after the last refusal.
    recovery: Duration,
    /// From the kill to the end of the last refused send.
    last_refusal: Duration,
    /// The longest send that ended after the kill.
    slowest: Duration,
    acknowledged: usize,
    lost: usize,
    refused: usize,
}

impl Figures {
    fn print(&self, what: &str) {
        println!(
            "failover figures ({what}): recovery {} ms, last refusal {} ms, slowest send {} ms, {} tasks acknowledged, {} lost, {} sends refused (-32603)",
            self.recovery.as_millis(),
            self.last_refusal.as_millis(),
            self.slowest.as_millis(),
            self.acknowledged,
            self.lost,
            self.refused
        );
    }
}

/// Kills the primary under load from [`CLIENTS`] clients of a server with `replicas_to_ack`.
async fn sentinel_failover_under_load(replicas_to_ack: u32) -> Figures {
    let mut deployment = Deployment::start().await;
    let app = Arc::new(
        spawn_app(through_sentinels(
            deployment.sentinel_list(),
            replicas_to_ack,
        ))
        .await,
    );
    let token = app.token("failover", Plan::Enterprise);
    let load = Load::start(app, vec![token]);
    tokio::time::sleep(BEFORE_KILL).await;
    let killed_at = Instant::now();
    deployment.kill_primary();
    let recovered = load.until_recovered(killed_at).await;
    load.finish(killed_at, recovered).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_one_replica_to_ack_no_acknowledged_task_is_lost_when_the_primary_dies() {
    let figures = sentinel_failover_under_load(1).await;
    figures.print("sentinel, replicas_to_ack=1");
    assert!(figures.acknowledged > 0 && figures.refused > 0);
    assert_eq!(figures.lost, 0, "every acknowledged task reads back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_replicas_to_ack_the_server_follows_the_failover_and_reports_what_is_lost() {
    let figures = sentinel_failover_under_load(0).await;
    figures.print("sentinel, replicas_to_ack=0");
    assert!(figures.acknowledged > 0 && figures.refused > 0);
}

/// A primary and one replica on their own (no sentinels): `replicas_to_ack = 2` cannot be met
/// until a second replica joins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_short_of_its_replicas_is_refused_and_its_resend_returns_the_same_task() {
    let primary = RedisServer::start_with(SYNC_AT_ONCE);
    let port = primary.port.to_string();
    let _replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    wait_for_replicas(primary.port, 1).await;
    let url = primary.url();
    let app = spawn_app(move |s: &mut Settings| {
        s.store.backend = StoreBackend::Redis;
        s.store.redis_url = Some(url);
        s.store.replicas_to_ack = 2;
        s.store.replicas_ack_timeout_ms = 300;
        s.limits.enabled = Some(false);
    })
    .await;
    let token = app.token("acks", Plan::Enterprise);
    let body = send_body("test_echo", "kept twice", &uuid());

    let started = Instant::now();
    let refused = app.rpc(Some(&token), &body).await;
    assert_eq!(
        refused.code(),
        -32603,
        "short of its replicas: {}",
        refused.body
    );
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the wait ran its timeout"
    );
    // The write is on the primary; a resend now is refused the same way, not answered with it.
    assert_eq!(app.rpc(Some(&token), &body).await.code(), -32603);

    let _second = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    wait_for_replicas(primary.port, 2).await;
    // The replica just joined may take a moment to acknowledge: resent as a client would.
    let task = retried(&app, &token, &body).await.result().clone();
    let again = app.rpc(Some(&token), &body).await.result().clone();
    assert_eq!(task["id"], again["id"], "one task for the message");
    let tasks = owned_tasks(primary.port).await;
    assert_eq!(
        tasks, 1,
        "the refused attempt and its resends stored one task"
    );
}

/// Waits until the primary on `port` has `count` replicas online and in sync.
async fn wait_for_replicas(port: u16, count: usize) {
    let mut connection = node(port).await;
    let started = Instant::now();
    loop {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut connection)
            .await
            .expect("INFO");
        let online = info
            .lines()
            .filter(|l| l.starts_with("slave") && l.contains("state=online"))
            .count();
        if online >= count {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "replicas in sync"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How many task keys Redis on `port` holds.
async fn owned_tasks(port: u16) -> usize {
    keys_matching(port, "a2a:v1:{o:*}:task:*").await.len()
}

/// A task working on the runtime, with its stream open, when the primary dies: the stream ends
/// (its final status, or an error event when its read met the outage), and reads of the task
/// are served again after the failover: it reaches a terminal state (its runner's, or `failed`
/// by a reaper once its lease runs out), and is never "not found", even when the sentinels
/// fail over twice and disagree for a while.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_working_task_and_its_open_stream_across_a_failover() {
    let mut deployment = Deployment::start().await;
    let app = spawn_app({
        let sentinels = deployment.sentinel_list();
        move |s: &mut Settings| {
            through_sentinels(sentinels, 1)(s);
            s.tasks.lease_secs = 3;
        }
    })
    .await;
    let token = app.token("streamer", Plan::Enterprise);
    let mut body = send_body("test_slow", "working through a failover", &uuid());
    body["method"] = json!("message/stream");
    let response = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .expect("request");
    let mut stream = response.bytes_stream();
    use futures::StreamExt;
    let mut text = String::new();
    while !text.contains("\"working\"") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("the task starts working")
            .unwrap_or_else(|| panic!("more of the stream after {text}"))
            .expect("a chunk");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let task_id = first_event(&text)["result"]["id"]
        .as_str()
        .expect("the first event is the task")
        .to_string();
    deployment.kill_primary();
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(chunk) => text.push_str(&String::from_utf8_lossy(&chunk)),
                Err(_) => break,
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the stream ends within 30 s of the kill");
    let events: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect();
    let last = events.last().expect("events");
    println!(
        "failover stream: the last of {} events: {last}",
        events.len()
    );
    assert!(
        last["result"]["final"] == true || last["error"]["code"] == -32603,
        "the stream ends with its final status or a -32603 error event: {last}"
    );

    let started = Instant::now();
    let state = loop {
        let reply = app
            .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
            .await;
        if reply.code() == 0 {
            let state = reply.result()["status"]["state"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if ["completed", "failed", "canceled"].contains(&state.as_str()) {
                break reply.result()["status"].clone();
            }
        } else {
            // Never "not found" (-32001): the task was written before its stream showed it.
            assert_eq!(
                reply.code(),
                -32603,
                "a read after the failover: {}",
                reply.body
            );
        }
        if started.elapsed() > RECOVERY_BOUND {
            panic!(
                "the task did not end within {RECOVERY_BOUND:?} of the failover; the last read: {}\n{}",
                reply.body,
                deployment.picture(&task_id).await
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    println!("failover working task: ended {state}");
}

fn first_event(text: &str) -> Value {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find_map(|data| serde_json::from_str(data.trim()).ok())
        .expect("one event")
}

/// A Redis Cluster of three primaries with two replicas each (so a promoted replica still has
/// one to acknowledge its writes); one primary holding the clients' keys is killed and the
/// cluster promotes one of its replicas (`cluster-node-timeout` 1 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_redis_cluster_follows_a_killed_primary_to_its_promoted_replica() {
    let mut cluster = RedisCluster::start_with(
        3,
        2,
        &[
            "--cluster-node-timeout",
            "1000",
            "--repl-diskless-sync-delay",
            "0",
        ],
    );
    let nodes = &mut cluster.nodes;
    let started = Instant::now();
    while !cluster_ready(nodes).await {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the cluster becomes ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let seeds: Vec<String> = nodes.iter().map(RedisServer::url).collect();
    let app = Arc::new(
        spawn_app(move |s: &mut Settings| {
            s.store.backend = StoreBackend::Redis;
            s.store.redis_url = Some(seeds.join(","));
            s.store.replicas_to_ack = 1;
            s.store.replicas_ack_timeout_ms = 1000;
            s.limits.enabled = Some(false);
        })
        .await,
    );
    let tokens = (0..16)
        .map(|user| app.token(&format!("cluster-{user}"), Plan::Enterprise))
        .collect();
    let load = Load::start(app, tokens);
    tokio::time::sleep(BEFORE_KILL).await;
    let mut victim = None;
    for (index, node) in nodes.iter().enumerate() {
        let (role, keys) = role_and_keys(node.port).await;
        if role == "master" && keys > 0 {
            victim = Some(index);
            break;
        }
    }
    let killed_at = Instant::now();
    nodes[victim.expect("a primary holds the clients' keys")].stop();
    let recovered = load.until_recovered(killed_at).await;
    let figures = load.finish(killed_at, recovered).await;
    figures.print("cluster, replicas_to_ack=1");
    assert_eq!(figures.lost, 0, "every acknowledged task reads back");
}

/// Every node says `cluster_state:ok` and each primary has its two replicas online.
async fn cluster_ready(nodes: &[RedisServer]) -> bool {
    let mut replicas = 0;
    for node in nodes {
        let Ok(mut connection) =
            redis_conn::connect(&node.url(), false, Duration::from_secs(2)).await
        else {
            return false;
        };
        let info: String = redis::cmd("CLUSTER")
            .arg("INFO")
            .query_async(&mut connection)
            .await
            .unwrap_or_default();
        if !info.contains("cluster_state:ok") {
            return false;
        }
        let replication: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut connection)
            .await
            .unwrap_or_default();
        replicas += replication
            .lines()
            .filter(|l| l.starts_with("slave") && l.contains("state=online"))
            .count();
    }
    replicas == 6
}

/// A plain connection to the Redis node on `port`.
async fn node(port: u16) -> redis_conn::RedisConnection {
    redis_conn::connect(
        &format!("redis://127.0.0.1:{port}/0"),
        false,
        Duration::from_secs(2),
    )
    .await
    .expect("connect")
}

/// The keys of the Redis node on `port` matching `pattern`.
async fn keys_matching(port: u16, pattern: &str) -> Vec<String> {
    redis::cmd("KEYS")
        .arg(pattern)
        .query_async(&mut node(port).await)
        .await
        .expect("KEYS")
}

/// A node's role and how many keys it holds.
async fn role_and_keys(port: u16) -> (String, i64) {
    let mut connection = node(port).await;
    let role: Vec<redis::Value> = redis::cmd("ROLE")
        .query_async(&mut connection)
        .await
        .expect("ROLE");
    let role = match role.first() {
        Some(redis::Value::BulkString(role)) => String::from_utf8_lossy(role).into_owned(),
        _ => String::new(),
    };
    let keys: i64 = redis::cmd("DBSIZE")
        .query_async(&mut connection)
        .await
        .expect("DBSIZE");
    (role, keys)
}
