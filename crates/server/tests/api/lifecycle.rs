//! The task runtime on its own, through both backends: every state transition, events read from
//! the start or live, cancels and reads from another replica, leases that run out when a
//! replica stops, the caps, and the observer told of each state once by the replica that
//! recorded it. The Redis runs use a redis-server of their own.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_types::{Artifact, Message, Part, Role, Task, TaskState, TaskStatus};
use async_trait::async_trait;
use bytes::Bytes;
use magisterium_a2a::bindings::jsonrpc::sse::{Endings, EventWire, Refusal, event_stream};
use magisterium_a2a::redis_conn;
use magisterium_a2a::runtime::skill_stream::{StreamedRun, run_streamed};
use magisterium_a2a::runtime::{
    Canceled, EventSink, LogCaps, MemoryBackend, NewTask, Next, RedisBackend, RuntimeBackend,
    RuntimeSettings, Started, StreamByteCaps, Subscribed, Subscription, TaskRuntime,
    TransitionObserver,
};
use magisterium_a2a::store::{
    MemoryStore, MessageRecord, Owner, RedisStore, StoredTask, TaskStore, decode_task,
};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::helpers::{RedisServer, http_client, uuid};

const WAIT: Duration = Duration::from_secs(10);

fn settings() -> RuntimeSettings {
    RuntimeSettings {
        lease: Duration::from_secs(1),
        keepalive: Duration::from_millis(300),
        max_running_per_owner: 4,
        max_streams_per_owner: 4,
        stream_bytes: StreamByteCaps {
            per_owner: 1024 * 1024,
            total: 8 * 1024 * 1024,
        },
        log: LogCaps {
            max_events: 100,
            max_bytes: 64 * 1024,
            ttl: Duration::from_secs(60),
        },
        max_task_bytes: 1024 * 1024,
    }
}

/// Where the replicas of a test keep their shared state.
enum Backing {
    Memory {
        store: Arc<MemoryStore>,
        backend: Arc<MemoryBackend>,
    },
    Redis(RedisServer),
}

impl Backing {
    fn memory() -> Self {
        let store = Arc::new(MemoryStore::new(Duration::from_secs(3600), 10_000));
        let backend = Arc::new(MemoryBackend::new(
            Arc::clone(&store),
            Duration::from_secs(60),
            10_000,
        ));
        Backing::Memory { store, backend }
    }

    fn redis() -> Self {
        Backing::Redis(RedisServer::start())
    }

    /// One replica: a runtime of its own over the shared state (its own connections, for Redis).
    async fn replica(&self, settings: RuntimeSettings) -> Replica {
        self.observed_replica(settings, None).await
    }

    /// A replica whose runtime tells `observer` of every state change it records.
    async fn observed_replica(
        &self,
        settings: RuntimeSettings,
        observer: Option<Arc<dyn TransitionObserver>>,
    ) -> Replica {
        let (backend, store): (Arc<dyn RuntimeBackend>, Arc<dyn TaskStore>) = match self {
            Backing::Memory { store, backend } => (backend.clone(), store.clone()),
            Backing::Redis(server) => {
                let url = server.url();
                let timeout = Duration::from_secs(2);
                let store = RedisStore::connect(&url, false, Duration::from_secs(86_400), timeout)
                    .await
                    .expect("redis store");
                let connection = redis_conn::connect(&url, false, timeout)
                    .await
                    .expect("redis connection");
                let backend =
                    RedisBackend::connect(connection, Some(&url), Duration::from_secs(86_400))
                        .await
                        .expect("redis backend");
                (Arc::new(backend), Arc::new(store))
            }
        };
        Replica {
            runtime: TaskRuntime::new(backend, store.clone(), settings, observer),
            store,
        }
    }
}

struct Replica {
    runtime: TaskRuntime,
    store: Arc<dyn TaskStore>,
}

fn submitted(text: &str) -> Task {
    let id = uuid();
    let context_id = uuid();
    let mut message = Message::agent_text(uuid(), text);
    message.role = Role::User;
    message.task_id = Some(id.clone());
    message.context_id = Some(context_id.clone());
    Task {
        kind: "task".into(),
        id,
        context_id,
        status: TaskStatus {
            state: TaskState::Submitted,
            message: None,
            timestamp: Some("2026-12-01T10:00:00.000Z".into()),
        },
        artifacts: Vec::new(),
        history: vec![message],
        metadata: None,
    }
}

fn artifact(id: &str, text: &str) -> Artifact {
    Artifact {
        artifact_id: id.into(),
        name: Some("answer".into()),
        parts: vec![Part::text(text)],
    }
}

fn finished(mut task: Task, state: TaskState, artifacts: Vec<Artifact>) -> Task {
    task.status = TaskStatus {
        state,
        message: None,
        timestamp: Some("2026-12-01T10:00:01.000Z".into()),
    };
    task.artifacts = artifacts;
    task
}

fn new_task(owner: &Owner, task: &Task) -> NewTask {
    NewTask {
        owner: owner.clone(),
        task: task.clone(),
        new_in_context: true,
        message_key: uuid(),
    }
}

async fn subscribe(replica: &Replica, owner: &Owner, task_id: &str) -> Subscription {
    match replica.runtime.subscribe(owner, task_id).await.unwrap() {
        Subscribed::Stream(subscription) => *subscription,
        Subscribed::NotFound => panic!("task {task_id} not found"),
        Subscribed::Busy { limit } => panic!("stream places taken ({limit})"),
    }
}

/// The next event as JSON, skipping keep-alives.
async fn next_event(subscription: &mut Subscription) -> Option<Value> {
    loop {
        let next = tokio::time::timeout(WAIT, subscription.next())
            .await
            .expect("an event within the wait")
            .unwrap();
        match next {
            Some(Next::Event(json, _)) => return Some(serde_json::from_slice(&json).unwrap()),
            Some(Next::KeepAlive | Next::Gap) => continue,
            None => return None,
        }
    }
}

/// Every event until the stream ends.
async fn all_events(subscription: &mut Subscription) -> Vec<Value> {
    let mut events = Vec::new();
    while let Some(event) = next_event(subscription).await {
        events.push(event);
    }
    events
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|event| match event["kind"].as_str().unwrap() {
            "status-update" => format!(
                "status:{}{}",
                event["status"]["state"].as_str().unwrap(),
                if event["final"] == true { ":final" } else { "" }
            ),
            kind => kind.to_string(),
        })
        .collect()
}

async fn state_of(replica: &Replica, owner: &Owner, task_id: &str) -> Option<TaskState> {
    let json = replica.runtime.read(owner, task_id).await.unwrap()?;
    Some(decode_task(&json).unwrap().status.state)
}

async fn eventually_state(replica: &Replica, owner: &Owner, task_id: &str, state: TaskState) {
    let deadline = Instant::now() + WAIT;
    while state_of(replica, owner, task_id).await != Some(state) {
        assert!(
            Instant::now() < deadline,
            "task {task_id} never reached {state:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Sets its flag when dropped: tells whether a task's work was dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Work that never finishes on its own, and says when it is dropped.
fn endless(
    flag: &Arc<AtomicBool>,
) -> impl FnOnce(EventSink) -> futures::future::BoxFuture<'static, Task> {
    let guard = DropFlag(Arc::clone(flag));
    move |_sink| {
        Box::pin(async move {
            let _guard = guard;
            std::future::pending::<Task>().await
        })
    }
}

/// submitted → working → (a streamed chunk, an artifact sent at the end) → completed; the
/// stored task is the one `tasks/get` reads; a late subscriber reads the whole log.
async fn completes(backing: &Backing) {
    let replica = backing.replica(settings()).await;
    let owner = Owner::of("", &uuid());
    let task = submitted("a question");
    let (release, released) = oneshot::channel::<()>();
    let done = finished(
        task.clone(),
        TaskState::Completed,
        vec![artifact("streamed", "Hello, world"), artifact("data", "42")],
    );
    let started = replica
        .runtime
        .start(new_task(&owner, &task), move |sink| async move {
            sink.artifact(artifact("streamed", "Hello, "), false, false)
                .await
                .unwrap();
            let _ = released.await;
            sink.artifact(artifact("streamed", "world"), true, true)
                .await
                .unwrap();
            done
        })
        .await
        .unwrap();
    let Started::Running(json) = started else {
        panic!("the task did not start");
    };
    assert_eq!(
        decode_task(&json).unwrap().status.state,
        TaskState::Submitted
    );
    eventually_state(&replica, &owner, &task.id, TaskState::Working).await;
    assert!(
        replica.store.get(&owner, &task.id).await.unwrap().is_none(),
        "a working task is not among the kept ones"
    );

    let mut live = subscribe(&replica, &owner, &task.id).await;
    let first = next_event(&mut live).await.unwrap();
    assert_eq!(first["kind"], "task");
    assert_eq!(first["status"]["state"], "submitted");
    assert_eq!(
        kinds(&[next_event(&mut live).await.unwrap()]),
        ["status:working"]
    );
    let chunk = next_event(&mut live).await.unwrap();
    assert_eq!(chunk["kind"], "artifact-update");
    assert_eq!(chunk["append"], false);
    assert_eq!(chunk["lastChunk"], false);
    assert_eq!(chunk["taskId"], task.id.as_str());
    assert_eq!(chunk["contextId"], task.context_id.as_str());

    release.send(()).unwrap();
    let rest = all_events(&mut live).await;
    assert_eq!(
        kinds(&rest),
        [
            "artifact-update",
            "artifact-update",
            "status:completed:final"
        ]
    );
    assert_eq!(rest[0]["append"], true);
    assert_eq!(rest[0]["lastChunk"], true);
    assert_eq!(
        rest[1]["artifact"]["artifactId"], "data",
        "an artifact the work did not stream is sent before the end"
    );
    assert!(
        live.next().await.unwrap().is_none(),
        "nothing after the final event"
    );

    let stored = replica.store.get(&owner, &task.id).await.unwrap().unwrap();
    let stored = decode_task(&stored).unwrap();
    assert_eq!(stored.status.state, TaskState::Completed);
    assert_eq!(stored.artifacts.len(), 2);
    assert_eq!(
        state_of(&replica, &owner, &task.id).await,
        Some(TaskState::Completed)
    );

    let mut late = subscribe(&replica, &owner, &task.id).await;
    assert_eq!(
        kinds(&all_events(&mut late).await),
        [
            "task",
            "status:working",
            "artifact-update",
            "artifact-update",
            "artifact-update",
            "status:completed:final"
        ],
        "a subscriber joining after the end reads the whole log"
    );

    // Another user's task of the same id does not exist for them.
    let stranger = Owner::of("", &uuid());
    assert!(
        replica
            .runtime
            .read(&stranger, &task.id)
            .await
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        replica
            .runtime
            .subscribe(&stranger, &task.id)
            .await
            .unwrap(),
        Subscribed::NotFound
    ));
    assert_eq!(
        replica.runtime.cancel(&stranger, &task.id).await.unwrap(),
        Canceled::NotWorking
    );
}

/// submitted → working → failed, with the work's reason kept.
async fn fails(backing: &Backing) {
    let replica = backing.replica(settings()).await;
    let owner = Owner::of("", &uuid());
    let task = submitted("bad input");
    let mut failed = finished(task.clone(), TaskState::Failed, Vec::new());
    failed.status.message = Some(Message::agent_text(uuid(), "The corpus is empty."));
    replica
        .runtime
        .start(new_task(&owner, &task), move |_sink| async move { failed })
        .await
        .unwrap();
    let mut events = subscribe(&replica, &owner, &task.id).await;
    let events = all_events(&mut events).await;
    assert_eq!(
        kinds(&events),
        ["task", "status:working", "status:failed:final"]
    );
    assert_eq!(
        events[2]["status"]["message"]["parts"][0]["text"],
        "The corpus is empty."
    );
    assert_eq!(
        state_of(&replica, &owner, &task.id).await,
        Some(TaskState::Failed)
    );
}

/// A continued task runs again under its id: the new run has a log of its own, and ends
/// stored with its new turn.
async fn runs_again(backing: &Backing) {
    let replica = backing.replica(settings()).await;
    let owner = Owner::of("", &uuid());
    let task = submitted("first turn");
    let first = finished(
        task.clone(),
        TaskState::Completed,
        vec![artifact("a1", "one")],
    );
    replica
        .runtime
        .start(new_task(&owner, &task), move |_sink| async move { first })
        .await
        .unwrap();
    eventually_state(&replica, &owner, &task.id, TaskState::Completed).await;

    let mut again = task.clone();
    again
        .history
        .push(Message::agent_text(uuid(), "second turn"));
    let second = finished(
        again.clone(),
        TaskState::Completed,
        vec![artifact("a2", "two")],
    );
    let continued = NewTask {
        owner: owner.clone(),
        task: again,
        new_in_context: false,
        message_key: uuid(),
    };
    replica
        .runtime
        .start(continued, move |_sink| async move { second })
        .await
        .unwrap();
    let mut events = subscribe(&replica, &owner, &task.id).await;
    let events = all_events(&mut events).await;
    assert_eq!(
        kinds(&events),
        [
            "task",
            "status:working",
            "artifact-update",
            "status:completed:final"
        ],
        "the second run's log, whole and alone"
    );
    assert_eq!(events[2]["artifact"]["artifactId"], "a2");
    let stored = decode_task(&replica.store.get(&owner, &task.id).await.unwrap().unwrap()).unwrap();
    assert_eq!(stored.history.len(), 2);
}

/// Work that panics ends its task `failed` at once, not when its lease runs out.
async fn panics(backing: &Backing) {
    let replica = backing.replica(settings()).await;
    let owner = Owner::of("", &uuid());
    let task = submitted("a question that breaks the skill");
    replica
        .runtime
        .start(new_task(&owner, &task), |_sink| async move {
            panic!("the work broke")
        })
        .await
        .unwrap();
    let mut events = subscribe(&replica, &owner, &task.id).await;
    let events = all_events(&mut events).await;
    assert_eq!(
        kinds(&events),
        ["task", "status:working", "status:failed:final"]
    );
    assert!(
        events[2]["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("internal error")
    );
    assert_eq!(
        state_of(&replica, &owner, &task.id).await,
        Some(TaskState::Failed)
    );
}

/// working → canceled: the work is dropped, the task kept `canceled`, the log closed; a second
/// cancel finds nothing working (the caller then answers as for any finished task).
async fn cancels(backing: &Backing) {
    let replica = backing.replica(settings()).await;
    let owner = Owner::of("", &uuid());
    let task = submitted("a long question");
    let dropped = Arc::new(AtomicBool::new(false));
    replica
        .runtime
        .start(new_task(&owner, &task), endless(&dropped))
        .await
        .unwrap();
    eventually_state(&replica, &owner, &task.id, TaskState::Working).await;
    let mut events = subscribe(&replica, &owner, &task.id).await;

    let Canceled::Canceled(json) = replica.runtime.cancel(&owner, &task.id).await.unwrap() else {
        panic!("a working task is canceled");
    };
    assert_eq!(
        decode_task(&json).unwrap().status.state,
        TaskState::Canceled
    );
    wait_until(|| dropped.load(Ordering::SeqCst), "the work is dropped").await;
    assert_eq!(
        kinds(&all_events(&mut events).await),
        ["task", "status:working", "status:canceled:final"]
    );
    assert_eq!(
        state_of(&replica, &owner, &task.id).await,
        Some(TaskState::Canceled)
    );
    assert_eq!(
        replica.runtime.cancel(&owner, &task.id).await.unwrap(),
        Canceled::NotWorking
    );
}

/// The owner's running tasks and open streams are capped; a place frees when a task ends or a
/// stream is dropped. Another owner is not affected.
async fn caps(backing: &Backing) {
    let mut capped = settings();
    capped.max_running_per_owner = 2;
    capped.max_streams_per_owner = 2;
    let replica = backing.replica(capped).await;
    let owner = Owner::of("", &uuid());
    let dropped = Arc::new(AtomicBool::new(false));
    let mut ids = Vec::new();
    for _ in 0..2 {
        let task = submitted("q");
        let started = replica
            .runtime
            .start(new_task(&owner, &task), endless(&dropped))
            .await
            .unwrap();
        assert!(matches!(started, Started::Running(_)));
        ids.push(task.id);
    }
    let third = submitted("one too many");
    assert_eq!(
        replica
            .runtime
            .start(new_task(&owner, &third), endless(&dropped))
            .await
            .unwrap(),
        Started::Busy { limit: 2 }
    );
    let other = Owner::of("", &uuid());
    assert!(matches!(
        replica
            .runtime
            .start(new_task(&other, &submitted("mine")), endless(&dropped))
            .await
            .unwrap(),
        Started::Running(_)
    ));

    let first = subscribe(&replica, &owner, &ids[0]).await;
    let _second = subscribe(&replica, &owner, &ids[1]).await;
    assert!(matches!(
        replica.runtime.subscribe(&owner, &ids[0]).await.unwrap(),
        Subscribed::Busy { limit: 2 }
    ));
    drop(first);
    let deadline = Instant::now() + WAIT;
    loop {
        match replica.runtime.subscribe(&owner, &ids[0]).await.unwrap() {
            Subscribed::Stream(_) => break,
            _ => assert!(
                Instant::now() < deadline,
                "a dropped stream frees its place"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    replica.runtime.cancel(&owner, &ids[0]).await.unwrap();
    assert!(matches!(
        replica
            .runtime
            .start(new_task(&owner, &third), endless(&dropped))
            .await
            .unwrap(),
        Started::Running(_)
    ));
}

/// A message starts one task: the same message key starting another task, through another
/// replica and with the owner at the running cap, finds the first; so does a key the store saved
/// with a blocking send's task. A stream place held before its task exists counts at the cap.
async fn one_task_per_message(backing: &Backing) {
    let mut one_running = settings();
    one_running.max_running_per_owner = 1;
    one_running.max_streams_per_owner = 1;
    let a = backing.replica(one_running).await;
    let b = backing.replica(one_running).await;
    let owner = Owner::of("", &uuid());
    let dropped = Arc::new(AtomicBool::new(false));
    let first = submitted("q");
    let mut new = new_task(&owner, &first);
    assert!(matches!(
        a.runtime
            .start(new.clone(), endless(&dropped))
            .await
            .unwrap(),
        Started::Running(_)
    ));
    let other = submitted("q");
    new.task = other.clone();
    assert_eq!(
        b.runtime
            .start(new.clone(), endless(&dropped))
            .await
            .unwrap(),
        Started::Seen(first.id.clone())
    );
    assert_eq!(b.runtime.read(&owner, &other.id).await.unwrap(), None);
    assert_eq!(
        b.runtime
            .start(new_task(&owner, &other), endless(&dropped))
            .await
            .unwrap(),
        Started::Busy { limit: 1 },
        "another message meets the cap"
    );

    let place = a
        .runtime
        .hold_stream(&owner)
        .await
        .unwrap()
        .expect("a place");
    assert!(b.runtime.hold_stream(&owner).await.unwrap().is_none());
    assert!(matches!(
        b.runtime.subscribe(&owner, &first.id).await.unwrap(),
        Subscribed::Busy { limit: 1 }
    ));
    match a
        .runtime
        .subscribe_with(place, "no-such-task")
        .await
        .unwrap()
    {
        Subscribed::NotFound => {}
        _ => panic!("an unknown task is not found"),
    }
    assert!(
        b.runtime.hold_stream(&owner).await.unwrap().is_some(),
        "the place of a stream that found no task is given back at once"
    );
    a.runtime.cancel(&owner, &first.id).await.unwrap();

    let saved = finished(submitted("saved"), TaskState::Completed, Vec::new());
    let key = uuid();
    let record = MessageRecord {
        task_id: saved.id.clone(),
    };
    a.store
        .save(
            &owner,
            &StoredTask::of(&saved).unwrap(),
            &key,
            &record,
            true,
        )
        .await
        .unwrap();
    let mut resent = new_task(&owner, &submitted("saved"));
    resent.message_key = key;
    assert_eq!(
        b.runtime.start(resent, endless(&dropped)).await.unwrap(),
        Started::Seen(saved.id)
    );
}

/// A log at its cap leaves out further chunks but never the final status, and a subscriber that
/// reads nothing while the work runs holds nothing back: the task ends, and it reads the same
/// bounded log afterwards.
async fn bounded_log_and_slow_subscriber(backing: &Backing) {
    let mut capped = settings();
    capped.log.max_events = 20;
    let replica = backing.replica(capped).await;
    let owner = Owner::of("", &uuid());
    let task = submitted("a long answer");
    let answer: String = (0..500).map(|n| format!("{n} ")).collect();
    let done = finished(
        task.clone(),
        TaskState::Completed,
        vec![artifact("a", &answer)],
    );
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let mut slow = {
        replica
            .runtime
            .start(new_task(&owner, &task), move |sink| async move {
                let _ = started_rx.await;
                for n in 0..500 {
                    sink.artifact(artifact("a", &format!("{n} ")), n > 0, n == 499)
                        .await
                        .unwrap();
                }
                done
            })
            .await
            .unwrap();
        subscribe(&replica, &owner, &task.id).await
    };
    started_tx.send(()).unwrap();
    eventually_state(&replica, &owner, &task.id, TaskState::Completed).await;

    let events = all_events(&mut slow).await;
    assert_eq!(events.len(), 20, "the log holds its cap of events");
    assert_eq!(kinds(&events[..2]), ["task", "status:working"]);
    assert_eq!(kinds(&events[19..]), ["status:completed:final"]);
    let stored = replica.store.get(&owner, &task.id).await.unwrap().unwrap();
    assert_eq!(
        decode_task(&stored).unwrap().artifacts[0].parts[0],
        Part::text(answer),
        "the stored task holds the whole answer"
    );
}

/// Two replicas on one shared state: a task started on A is read, subscribed to and canceled
/// through B; A drops its work promptly.
async fn across_replicas(backing: &Backing) {
    // A long lease: only the cancel signal, not A's next renewal, can stop the work in time.
    let mut long_lease = settings();
    long_lease.lease = Duration::from_secs(60);
    let a = backing.replica(long_lease).await;
    let b = backing.replica(long_lease).await;
    let owner = Owner::of("https://idp.example", &uuid());
    let task = submitted("started on A");
    let dropped = Arc::new(AtomicBool::new(false));
    a.runtime
        .start(new_task(&owner, &task), endless(&dropped))
        .await
        .unwrap();
    eventually_state(&b, &owner, &task.id, TaskState::Working).await;
    let mut on_b = subscribe(&b, &owner, &task.id).await;
    assert_eq!(next_event(&mut on_b).await.unwrap()["kind"], "task");

    let asked = Instant::now();
    assert!(matches!(
        b.runtime.cancel(&owner, &task.id).await.unwrap(),
        Canceled::Canceled(_)
    ));
    wait_until(|| dropped.load(Ordering::SeqCst), "A drops the work").await;
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "the cancel reaches A at once, not at its next lease renewal ({:?})",
        asked.elapsed()
    );
    assert_eq!(
        kinds(&all_events(&mut on_b).await),
        ["status:working", "status:canceled:final"]
    );
    assert_eq!(
        state_of(&a, &owner, &task.id).await,
        Some(TaskState::Canceled)
    );
}

/// A replica that stops without ending its task: once the lease runs out, another replica's
/// reaper ends it `failed`, once, and closes its log.
async fn lease_runs_out(backing: &Backing) {
    let a = backing.replica(settings()).await;
    let b = backing.replica(settings()).await;
    let owner = Owner::of("", &uuid());
    let task = submitted("A stops");
    let dropped = Arc::new(AtomicBool::new(false));
    a.runtime
        .start(new_task(&owner, &task), endless(&dropped))
        .await
        .unwrap();
    eventually_state(&b, &owner, &task.id, TaskState::Working).await;
    let mut on_b = subscribe(&b, &owner, &task.id).await;
    assert_eq!(
        b.runtime.reap().await.unwrap(),
        0,
        "a renewed lease is not taken over"
    );
    let stopped = Instant::now();
    drop(a);
    wait_until(
        || dropped.load(Ordering::SeqCst),
        "a stopped replica's work is gone",
    )
    .await;
    assert_eq!(
        kinds(&all_events(&mut on_b).await),
        ["task", "status:working", "status:failed:final"]
    );
    assert!(
        stopped.elapsed() >= settings().lease / 2,
        "not ended before the lease ran out ({:?})",
        stopped.elapsed()
    );
    let json = b.runtime.read(&owner, &task.id).await.unwrap().unwrap();
    let ended = decode_task(&json).unwrap();
    assert_eq!(ended.status.state, TaskState::Failed);
    assert!(
        ended.status.message.unwrap().text().contains("stopped"),
        "the task says why it failed"
    );
    assert_eq!(b.runtime.reap().await.unwrap(), 0, "ended once");
}

/// The state changes told, each as (replica, task id, state).
type Told = Arc<Mutex<Vec<(&'static str, String, TaskState)>>>;

/// Records each state change it is told of, with the replica that told it.
struct Recorder {
    replica: &'static str,
    seen: Told,
}

#[async_trait]
impl TransitionObserver for Recorder {
    async fn entered(&self, _owner: &Owner, task_id: &str, task_json: Bytes) {
        let state = decode_task(&task_json).unwrap().status.state;
        self.seen
            .lock()
            .unwrap()
            .push((self.replica, task_id.to_string(), state));
    }
}

/// Each state a task enters is told once, by the replica that recorded it: a task completing
/// on A, one started on A and canceled through B, and one whose replica D stopped, ended
/// `failed` by one of three live reapers (A, B and C).
async fn observed(backing: &Backing) {
    let seen: Told = Arc::default();
    let observer = |replica| -> Option<Arc<dyn TransitionObserver>> {
        Some(Arc::new(Recorder {
            replica,
            seen: Arc::clone(&seen),
        }))
    };
    let a = backing.observed_replica(settings(), observer("A")).await;
    let b = backing.observed_replica(settings(), observer("B")).await;
    let c = backing.observed_replica(settings(), observer("C")).await;
    let owner = Owner::of("", &uuid());
    let of_task = |task_id: &str| -> Vec<(&'static str, TaskState)> {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|(_, id, _)| id == task_id)
            .map(|(replica, _, state)| (*replica, *state))
            .collect()
    };

    let completing = submitted("completes on A");
    let done = finished(completing.clone(), TaskState::Completed, Vec::new());
    a.runtime
        .start(
            new_task(&owner, &completing),
            move |_sink| async move { done },
        )
        .await
        .unwrap();
    eventually_state(&b, &owner, &completing.id, TaskState::Completed).await;

    let canceled = submitted("canceled through B");
    let dropped = Arc::new(AtomicBool::new(false));
    a.runtime
        .start(new_task(&owner, &canceled), endless(&dropped))
        .await
        .unwrap();
    eventually_state(&b, &owner, &canceled.id, TaskState::Working).await;
    wait_until(|| of_task(&canceled.id).len() == 2, "working is told").await;
    assert!(matches!(
        b.runtime.cancel(&owner, &canceled.id).await.unwrap(),
        Canceled::Canceled(_)
    ));

    let stopping = backing.observed_replica(settings(), observer("D")).await;
    let orphan = submitted("its replica stops");
    stopping
        .runtime
        .start(new_task(&owner, &orphan), endless(&dropped))
        .await
        .unwrap();
    eventually_state(&b, &owner, &orphan.id, TaskState::Working).await;
    wait_until(|| of_task(&orphan.id).len() == 2, "working is told").await;
    drop(stopping);
    eventually_state(&b, &owner, &orphan.id, TaskState::Failed).await;
    // Both reapers sweep twice per lease: time for a second ending, which must not come.
    tokio::time::sleep(settings().lease * 2).await;

    assert_eq!(
        of_task(&completing.id),
        [
            ("A", TaskState::Submitted),
            ("A", TaskState::Working),
            ("A", TaskState::Completed)
        ]
    );
    assert_eq!(
        of_task(&canceled.id),
        [
            ("A", TaskState::Submitted),
            ("A", TaskState::Working),
            ("B", TaskState::Canceled)
        ]
    );
    let orphan_seen = of_task(&orphan.id);
    assert_eq!(
        orphan_seen[..2],
        [("D", TaskState::Submitted), ("D", TaskState::Working)]
    );
    assert_eq!(orphan_seen.len(), 3, "ended once: {orphan_seen:?}");
    assert!(
        matches!(orphan_seen[2], ("A" | "B" | "C", TaskState::Failed)),
        "a reaper of a live replica ends it: {orphan_seen:?}"
    );
    drop(c);
}

/// What a subscription yields, each event with its place in the log, `Err(())` for a gap.
async fn placed(subscription: &mut Subscription) -> Vec<Result<(Option<u64>, Value), ()>> {
    let mut items = Vec::new();
    loop {
        let next = tokio::time::timeout(WAIT, subscription.next())
            .await
            .expect("an event within the wait")
            .unwrap();
        match next {
            Some(Next::Event(json, place)) => {
                items.push(Ok((place, serde_json::from_slice(&json).unwrap())));
            }
            Some(Next::Gap) => items.push(Err(())),
            Some(Next::KeepAlive) => continue,
            None => return items,
        }
    }
}

/// A stream cut after some events resumes on another replica after the last event its client
/// saw: every later event once, none before. A place the log does not hold gives a gap, the
/// task's current state and its end; after the final event, nothing.
async fn resumes(backing: &Backing) {
    let a = backing.replica(settings()).await;
    let b = backing.replica(settings()).await;
    let owner = Owner::of("", &uuid());
    let task = submitted("resume me");
    let (release, released) = oneshot::channel::<()>();
    let done = finished(
        task.clone(),
        TaskState::Completed,
        vec![artifact("streamed", "one two three")],
    );
    a.runtime
        .start(new_task(&owner, &task), move |sink| async move {
            for (at, piece) in ["one ", "two ", "three"].into_iter().enumerate() {
                sink.artifact(artifact("streamed", piece), at > 0, false)
                    .await
                    .unwrap();
            }
            let _ = released.await;
            done
        })
        .await
        .unwrap();
    // The client reads five events on A (the task, working, three pieces) and is cut.
    let mut cut = subscribe(&a, &owner, &task.id).await;
    let mut seen = Vec::new();
    while seen.len() < 5 {
        match cut.next().await.unwrap() {
            Some(Next::Event(json, place)) => {
                seen.push((place, serde_json::from_slice::<Value>(&json).unwrap()));
            }
            _ => continue,
        }
    }
    drop(cut);
    let places: Vec<Option<u64>> = seen.iter().map(|(place, _)| *place).collect();
    assert_eq!(places, [Some(0), Some(1), Some(2), Some(3), Some(4)]);

    // It saw up to the second piece (place 3) when the cut came; it resumes on B.
    let mut resumed = subscribe(&b, &owner, &task.id).await;
    resumed.resume_after(3);
    release.send(()).unwrap();
    let rest: Vec<(Option<u64>, Value)> = placed(&mut resumed)
        .await
        .into_iter()
        .map(|item| item.expect("no gap"))
        .collect();
    assert_eq!(rest[0].0, Some(4), "the first event after the one it saw");
    assert_eq!(rest[0].1["artifact"]["parts"][0]["text"], "three");
    // (A final status made from the stored task, when the subscriber looked between the save
    // and the log's last event, has no place.)
    let places: Vec<u64> = rest.iter().filter_map(|(place, _)| *place).collect();
    assert!(
        places.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "each event once, in order: {places:?}"
    );
    assert_eq!(
        kinds(&[rest.last().unwrap().1.clone()]),
        ["status:completed:final"]
    );

    // A place past the end of the log: said, then the task as it is, then its end.
    let mut beyond = subscribe(&b, &owner, &task.id).await;
    beyond.resume_after(1_000);
    let items = placed(&mut beyond).await;
    assert_eq!(items[0], Err(()), "{items:?}");
    let (place, state) = items[1].clone().unwrap();
    assert_eq!((place, state["kind"].as_str()), (None, Some("task")));
    assert_eq!(state["status"]["state"], "completed");
    assert_eq!(items.len(), 3, "{items:?}");

    // After the final event, nothing follows.
    let whole = placed(&mut subscribe(&a, &owner, &task.id).await).await;
    let last = whole
        .last()
        .unwrap()
        .clone()
        .unwrap()
        .0
        .expect("the log's final event");
    let mut after_the_end = subscribe(&a, &owner, &task.id).await;
    after_the_end.resume_after(last);
    assert!(placed(&mut after_the_end).await.is_empty());
}

#[tokio::test]
async fn memory_resumes() {
    resumes(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_resumes() {
    resumes(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_observed() {
    observed(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_observed() {
    observed(&Backing::redis()).await;
}

async fn wait_until(condition: impl Fn() -> bool, what: &str) {
    let deadline = Instant::now() + WAIT;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn memory_completes() {
    completes(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_completes() {
    completes(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_fails() {
    fails(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_fails() {
    fails(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_panics() {
    panics(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_panics() {
    panics(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_runs_again() {
    runs_again(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_runs_again() {
    runs_again(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_cancels() {
    cancels(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_cancels() {
    cancels(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_one_task_per_message() {
    one_task_per_message(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_one_task_per_message() {
    one_task_per_message(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_caps() {
    caps(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_caps() {
    caps(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_bounded_log_and_slow_subscriber() {
    bounded_log_and_slow_subscriber(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_bounded_log_and_slow_subscriber() {
    bounded_log_and_slow_subscriber(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_across_replicas() {
    across_replicas(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_across_replicas() {
    across_replicas(&Backing::redis()).await;
}

#[tokio::test]
async fn memory_lease_runs_out() {
    lease_runs_out(&Backing::memory()).await;
}

#[tokio::test]
async fn redis_lease_runs_out() {
    lease_runs_out(&Backing::redis()).await;
}

/// Serves one stream answer on a loopback port and returns its URL.
async fn serve_stream(response: axum::response::Response) -> String {
    let slot = Arc::new(std::sync::Mutex::new(Some(response)));
    let router = axum::Router::new().route(
        "/stream",
        axum::routing::get(move || {
            let slot = Arc::clone(&slot);
            async move { slot.lock().unwrap().take().expect("one request") }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/stream", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// An SSE body split into its frames: `Ok(json)` for data, `Err(text)` for comments.
fn frames(body: &str) -> Vec<Result<Value, String>> {
    body.split("\n\n")
        .filter(|frame| !frame.trim().is_empty())
        .map(
            |frame| match frame.lines().find_map(|l| l.strip_prefix("data: ")) {
                Some(data) => Ok(serde_json::from_str(data).unwrap()),
                None => Err(frame.trim_start_matches(':').trim().to_string()),
            },
        )
        .collect()
}

/// The `id` of each event frame of an SSE body, in order.
fn event_ids(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("id: ")))
        .map(str::to_string)
        .collect()
}

/// A task whose work waits for a release, streamed on `wire`; returns the URL and the release.
async fn streamed_task(
    replica: &Replica,
    wire: EventWire,
) -> (String, oneshot::Sender<()>, Owner, String) {
    let owner = Owner::of("", &uuid());
    let task = submitted("stream me");
    let (release, released) = oneshot::channel::<()>();
    let done = finished(
        task.clone(),
        TaskState::Completed,
        vec![artifact("a", "all")],
    );
    replica
        .runtime
        .start(new_task(&owner, &task), move |_sink| async move {
            let _ = released.await;
            done
        })
        .await
        .unwrap();
    let subscription = subscribe(replica, &owner, &task.id).await;
    let failure = bytes::Bytes::from_static(
        br#"{"jsonrpc":"2.0","id":"req-7","error":{"code":-32603,"message":"Internal error"}}"#,
    );
    let refusal: Refusal = Box::new(|budget| {
        bytes::Bytes::from(format!(
            r#"{{"jsonrpc":"2.0","id":"req-7","error":{{"code":-32003,"message":"{budget}"}}}}"#
        ))
    });
    let response = event_stream(
        subscription,
        Some(a2a_types::Id::Str("req-7".into())),
        wire,
        Endings { failure, refusal },
    );
    (serve_stream(response).await, release, owner, task.id)
}

#[tokio::test]
async fn a_0_3_stream_is_one_response_per_event_with_keep_alives_and_a_final_status() {
    let backing = Backing::memory();
    let replica = backing.replica(settings()).await;
    let (url, release, _, _) = streamed_task(&replica, EventWire::V03).await;
    let response = http_client().get(&url).send().await.unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "text/event-stream",
        "an SSE answer"
    );
    // Idle for more than a keep-alive interval before the work ends.
    tokio::time::sleep(settings().keepalive * 2).await;
    release.send(()).unwrap();
    let body = tokio::time::timeout(WAIT, response.text())
        .await
        .expect("the stream ends after the final status")
        .unwrap();
    let frames = frames(&body);
    assert!(
        frames.iter().any(|f| f == &Err("keep-alive".to_string())),
        "an idle stream gets keep-alive comments: {body}"
    );
    let events: Vec<Value> = frames.into_iter().filter_map(Result::ok).collect();
    assert_eq!(
        event_ids(&body),
        ["0", "1", "2", "3"],
        "each event's id is its place in the task's log"
    );
    for event in &events {
        assert_eq!(event["jsonrpc"], "2.0");
        assert_eq!(event["id"], "req-7", "each event carries the request id");
    }
    let results: Vec<Value> = events.iter().map(|e| e["result"].clone()).collect();
    assert_eq!(
        kinds(&results),
        [
            "task",
            "status:working",
            "artifact-update",
            "status:completed:final"
        ]
    );
}

#[tokio::test]
async fn a_1_0_stream_wraps_each_event_by_what_it_is() {
    let backing = Backing::memory();
    let replica = backing.replica(settings()).await;
    let (url, release, _, _) = streamed_task(&replica, EventWire::V1).await;
    release.send(()).unwrap();
    let body = tokio::time::timeout(WAIT, http_client().get(&url).send().await.unwrap().text())
        .await
        .unwrap()
        .unwrap();
    let results: Vec<Value> = frames(&body)
        .into_iter()
        .filter_map(Result::ok)
        .map(|event| event["result"].clone())
        .collect();
    let members: Vec<&str> = results
        .iter()
        .map(|r| r.as_object().unwrap().keys().next().unwrap().as_str())
        .collect();
    assert_eq!(
        members,
        ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    );
    assert_eq!(
        results[0]["task"]["status"]["state"],
        "TASK_STATE_SUBMITTED"
    );
    assert_eq!(
        results[3]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert!(
        results[3]["statusUpdate"].get("final").is_none(),
        "1.0 has no `final`"
    );
    assert_eq!(results[2]["artifactUpdate"]["lastChunk"], true);
}

#[tokio::test]
async fn a_client_leaving_a_stream_does_not_cancel_the_task() {
    let backing = Backing::redis();
    let replica = backing.replica(settings()).await;
    let (url, release, owner, task_id) = streamed_task(&replica, EventWire::V03).await;
    let mut response = http_client().get(&url).send().await.unwrap();
    let first = response.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("\"kind\":\"task\""));
    drop(response);
    tokio::time::sleep(Duration::from_millis(100)).await;
    release.send(()).unwrap();
    eventually_state(&replica, &owner, &task_id, TaskState::Completed).await;
}

/// A skill that writes its answer in three pieces, pausing between them, or never finishes.
struct Typist {
    info: skills::SkillInfo,
}

const TYPIST: skills::SkillInfo = skills::SkillInfo {
    id: "test_typist",
    ..crate::helpers::ECHO
};
const STALLED: skills::SkillInfo = skills::SkillInfo {
    id: "test_stalled",
    ..crate::helpers::ECHO
};

#[async_trait::async_trait]
impl skills::Skill for Typist {
    fn info(&self) -> &skills::SkillInfo {
        &self.info
    }

    async fn run(
        &self,
        _request: skills::SkillRequest,
    ) -> Result<skills::SkillOutput, skills::SkillError> {
        unreachable!("only run_streaming is called")
    }

    async fn run_streaming(
        &self,
        _request: skills::SkillRequest,
        events: tokio::sync::mpsc::Sender<skills::SkillEvent>,
    ) -> Result<skills::SkillOutput, skills::SkillError> {
        if self.info.id == "test_stalled" {
            std::future::pending::<()>().await;
        }
        let pieces = ["The answer ", "is ", "written."];
        for (at, text) in pieces.iter().enumerate() {
            let event = skills::SkillEvent::ArtifactText {
                artifact_name: "answer",
                text: text.to_string(),
                append: at > 0,
                last_chunk: at == pieces.len() - 1,
            };
            events.send(event).await.unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut data = serde_json::Map::new();
        data.insert("citations".into(), serde_json::json!([]));
        Ok(skills::SkillOutput {
            artifact_name: "answer",
            text: pieces.concat(),
            data,
        })
    }
}

/// Runs a test skill as a task's work through `run_streamed`; returns the task's events.
async fn streamed_skill(info: skills::SkillInfo, timeout: Duration) -> (Vec<Value>, Task) {
    let backing = Backing::memory();
    let replica = backing.replica(settings()).await;
    let owner = Owner::of("", &uuid());
    let task = submitted("a question");
    let base = task.clone();
    replica
        .runtime
        .start(new_task(&owner, &task), move |sink| async move {
            let request = skills::SkillRequest::from_text("a question", chrono::Utc::now());
            match run_streamed(&Typist { info }, request, &sink, "art-1", timeout).await {
                StreamedRun::Done(output) => finished(
                    base,
                    TaskState::Completed,
                    vec![Artifact {
                        artifact_id: "art-1".into(),
                        name: Some(output.artifact_name.into()),
                        parts: vec![Part::text(output.text), Part::data(output.data)],
                    }],
                ),
                StreamedRun::Failed(reason) => {
                    let mut failed = finished(base, TaskState::Failed, Vec::new());
                    failed.status.message = Some(Message::agent_text(uuid(), reason));
                    failed
                }
            }
        })
        .await
        .unwrap();
    let mut subscription = subscribe(&replica, &owner, &task.id).await;
    let events = all_events(&mut subscription).await;
    let stored = decode_task(
        &replica
            .runtime
            .read(&owner, &task.id)
            .await
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    (events, stored)
}

#[tokio::test]
async fn a_skills_pieces_are_streamed_then_the_whole_artifact_replaces_them() {
    let (events, stored) = streamed_skill(TYPIST, Duration::from_secs(10)).await;
    assert_eq!(
        kinds(&events),
        [
            "task",
            "status:working",
            "artifact-update",
            "artifact-update",
            "artifact-update",
            "status:completed:final"
        ]
    );
    let chunks = &events[2..5];
    let flags: Vec<(bool, bool)> = chunks
        .iter()
        .map(|c| (c["append"] == true, c["lastChunk"] == true))
        .collect();
    assert_eq!(
        flags,
        [(false, false), (true, false), (false, true)],
        "the text pieces as they come, then the whole artifact in place of them"
    );
    let streamed: String = chunks[..2]
        .iter()
        .map(|c| c["artifact"]["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, "The answer is ");
    let whole = &chunks[2]["artifact"];
    assert_eq!(whole["parts"][0]["text"], "The answer is written.");
    assert_eq!(whole["parts"][1]["kind"], "data");
    for chunk in chunks {
        assert_eq!(chunk["artifact"]["artifactId"], "art-1");
    }
    assert_eq!(stored.status.state, TaskState::Completed);
    assert_eq!(
        serde_json::to_value(&stored.artifacts[0]).unwrap(),
        *whole,
        "the last update is the stored artifact"
    );
}

#[tokio::test]
async fn a_streamed_skill_past_its_time_ends_the_task_failed() {
    let (events, stored) = streamed_skill(STALLED, Duration::from_millis(300)).await;
    assert_eq!(
        kinds(&events),
        ["task", "status:working", "status:failed:final"]
    );
    assert_eq!(stored.status.state, TaskState::Failed);
    assert!(
        stored
            .status
            .message
            .unwrap()
            .text()
            .contains("did not finish"),
        "the task says why"
    );
}
