//! Store properties on random owners, ids and messages, through the `TaskStore` trait of both
//! backends: what is written is read back unchanged by its owner only, a message id names one
//! task per owner, contexts list their owner's tasks in order, and nothing outlives its TTL.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use a2a_types::{Message, Part, Role, Task, TaskState, TaskStatus};
use magisterium_a2a::store::{
    MemoryStore, MessageRecord, Owner, RedisStore, SaveOutcome, StoredTask, TaskStore, decode_task,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use tokio::runtime::Runtime;

use crate::helpers::{RedisServer, uuid};

/// A task as the stores take it.
fn stored(task: &Task) -> Result<StoredTask, TestCaseError> {
    StoredTask::of(task).map_err(|e| TestCaseError::fail(format!("serialise: {e}")))
}

/// An owner's task read back and parsed: the stored text must be the task written.
async fn read(
    store: &dyn TaskStore,
    owner: &Owner,
    task_id: &str,
) -> Result<Option<Task>, TestCaseError> {
    let json = store
        .get(owner, task_id)
        .await
        .map_err(|e| TestCaseError::fail(format!("get failed: {e}")))?;
    json.map(|json| decode_task(&json))
        .transpose()
        .map_err(|e| TestCaseError::fail(format!("stored task does not parse: {e}")))
}

/// How many tasks a context listing may return; larger than any scenario here.
const CONTEXT_LIMIT: usize = 100;

/// One write of a scenario: indexes into small pools, so that owners share ids, message ids
/// are retried and contexts collect several tasks.
#[derive(Debug, Clone)]
struct Write {
    owner: usize,
    task: usize,
    message: usize,
    context: usize,
    text: String,
}

/// A scenario: the subjects (any text, hash-tag braces included), the id pools, the writes.
#[derive(Debug, Clone)]
struct Scenario {
    subjects: Vec<String>,
    task_ids: Vec<String>,
    message_ids: Vec<String>,
    context_ids: Vec<String>,
    writes: Vec<Write>,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    let id = "[a-zA-Z0-9:{}_./ -]{1,24}|[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
    (
        prop::collection::hash_set("\\PC{1,16}", 2..4),
        prop::collection::hash_set(id, 1..5),
        prop::collection::hash_set(id, 1..5),
        prop::collection::hash_set(id, 1..3),
    )
        .prop_flat_map(|(subjects, tasks, messages, contexts)| {
            let write = (
                0..subjects.len(),
                0..tasks.len(),
                0..messages.len(),
                0..contexts.len(),
                "\\PC{0,40}",
            )
                .prop_map(|(owner, task, message, context, text)| Write {
                    owner,
                    task,
                    message,
                    context,
                    text,
                });
            (
                Just(subjects.into_iter().collect::<Vec<_>>()),
                Just(tasks.into_iter().collect::<Vec<_>>()),
                Just(messages.into_iter().collect::<Vec<_>>()),
                Just(contexts.into_iter().collect::<Vec<_>>()),
                prop::collection::vec(write, 1..12),
            )
        })
        .prop_map(
            |(subjects, task_ids, message_ids, context_ids, writes)| Scenario {
                subjects,
                task_ids,
                message_ids,
                context_ids,
                writes,
            },
        )
}

fn task(id: &str, context_id: &str, message_id: &str, text: &str) -> Task {
    Task {
        kind: "task".into(),
        id: id.into(),
        context_id: context_id.into(),
        status: TaskStatus {
            state: TaskState::Completed,
            message: None,
            timestamp: Some("2026-11-30T06:00:00.000Z".into()),
        },
        artifacts: Vec::new(),
        history: vec![Message {
            kind: "message".into(),
            message_id: message_id.into(),
            role: Role::User,
            parts: vec![Part::text(text)],
            task_id: Some(id.into()),
            context_id: Some(context_id.into()),
            reference_task_ids: None,
            extensions: None,
            metadata: None,
        }],
        metadata: None,
    }
}

/// What the store must hold after a scenario, computed without it.
#[derive(Default)]
struct Model {
    tasks: HashMap<(usize, String), Task>,
    messages: HashMap<(usize, String), MessageRecord>,
    contexts: HashMap<(usize, String), Vec<String>>,
}

/// Plays a scenario against a store and checks every read against the model. Subjects get a
/// fresh suffix so that cases sharing one store cannot see each other's writes.
async fn check_scenario(store: &dyn TaskStore, scenario: &Scenario) -> Result<(), TestCaseError> {
    let run = uuid();
    let owners: Vec<Owner> = scenario
        .subjects
        .iter()
        .map(|s| Owner::of("", &format!("{s}#{run}")))
        .collect();
    let mut model = Model::default();
    for write in &scenario.writes {
        let task_id = &scenario.task_ids[write.task];
        let message_id = &scenario.message_ids[write.message];
        let context_id = &scenario.context_ids[write.context];
        let task = task(task_id, context_id, message_id, &write.text);
        let record = MessageRecord {
            task_id: task_id.clone(),
        };
        let outcome = store
            .save(
                &owners[write.owner],
                &stored(&task)?,
                message_id,
                &record,
                true,
            )
            .await
            .map_err(|e| TestCaseError::fail(format!("save failed: {e}")))?;
        let key = (write.owner, message_id.clone());
        match model.messages.get(&key) {
            Some(first) => prop_assert_eq!(outcome, SaveOutcome::Duplicate(first.clone())),
            None => {
                prop_assert_eq!(outcome, SaveOutcome::Saved);
                model.messages.insert(key, record);
                model
                    .tasks
                    .insert((write.owner, task_id.clone()), task.clone());
                model
                    .contexts
                    .entry((write.owner, context_id.clone()))
                    .or_default()
                    .push(task_id.clone());
            }
        }
    }
    for (index, owner) in owners.iter().enumerate() {
        for task_id in &scenario.task_ids {
            let stored = read(store, owner, task_id).await?;
            prop_assert_eq!(
                stored.as_ref(),
                model.tasks.get(&(index, task_id.clone())),
                "task {:?} as read by owner {}",
                task_id,
                index
            );
        }
        for message_id in &scenario.message_ids {
            let record = store
                .message(owner, message_id)
                .await
                .map_err(|e| TestCaseError::fail(format!("message failed: {e}")))?;
            prop_assert_eq!(
                record.as_ref(),
                model.messages.get(&(index, message_id.clone()))
            );
        }
        let mut indexed: Vec<String> = store
            .owned_index(owner)
            .await
            .map_err(|e| TestCaseError::fail(format!("owned_index failed: {e}")))?
            .into_iter()
            .map(|entry| entry.task_id)
            .collect();
        indexed.sort();
        indexed.dedup();
        let mut expected: Vec<String> = model
            .tasks
            .keys()
            .filter(|(o, _)| *o == index)
            .map(|(_, id)| id.clone())
            .collect();
        expected.sort();
        prop_assert_eq!(indexed, expected, "owner {} indexes its tasks", index);
        for context_id in &scenario.context_ids {
            let listed = store
                .context(owner, context_id, CONTEXT_LIMIT)
                .await
                .map_err(|e| TestCaseError::fail(format!("context failed: {e}")))?;
            let expected: Vec<&Task> = model
                .contexts
                .get(&(index, context_id.clone()))
                .map(|ids| {
                    ids.iter()
                        .filter_map(|id| model.tasks.get(&(index, id.clone())))
                        .collect()
                })
                .unwrap_or_default();
            prop_assert_eq!(listed.iter().collect::<Vec<_>>(), expected);
        }
    }
    Ok(())
}

/// Writes a scenario, waits past the TTL, and checks that nothing of it can be read.
async fn check_expiry(
    store: &dyn TaskStore,
    scenario: &Scenario,
    ttl: Duration,
) -> Result<(), TestCaseError> {
    let owner = Owner::of("", &format!("{}#{}", scenario.subjects[0], uuid()));
    for write in &scenario.writes {
        let task_id = &scenario.task_ids[write.task];
        let message_id = &scenario.message_ids[write.message];
        let context_id = &scenario.context_ids[write.context];
        let record = MessageRecord {
            task_id: task_id.clone(),
        };
        let task = task(task_id, context_id, message_id, &write.text);
        let outcome = store
            .save(&owner, &stored(&task)?, message_id, &record, true)
            .await
            .map_err(|e| TestCaseError::fail(format!("save failed: {e}")))?;
        if outcome == SaveOutcome::Saved {
            let stored = read(store, &owner, task_id).await?;
            prop_assert_eq!(stored.as_ref(), Some(&task), "readable until its TTL");
        }
    }
    tokio::time::sleep(ttl + Duration::from_millis(600)).await;
    for write in &scenario.writes {
        let task_id = &scenario.task_ids[write.task];
        let message_id = &scenario.message_ids[write.message];
        let context_id = &scenario.context_ids[write.context];
        let read = |e: magisterium_a2a::store::StoreError| TestCaseError::fail(e.to_string());
        prop_assert!(store.get(&owner, task_id).await.map_err(read)?.is_none());
        prop_assert!(
            store
                .message(&owner, message_id)
                .await
                .map_err(read)?
                .is_none()
        );
        prop_assert!(
            store
                .context(&owner, context_id, CONTEXT_LIMIT)
                .await
                .map_err(read)?
                .is_empty()
        );
        prop_assert!(store.owned_index(&owner).await.map_err(read)?.is_empty());
    }
    Ok(())
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// `cases` cases, with no failure file: the runner is driven by hand, outside `proptest!`, so a
/// failing case is printed in full instead.
fn quiet(cases: u32) -> Config {
    Config {
        failure_persistence: None,
        ..Config::with_cases(cases)
    }
}

fn run_scenarios(runtime: &Runtime, store: Arc<dyn TaskStore>, cases: u32) {
    let mut runner = TestRunner::new(quiet(cases));
    runner
        .run(&scenario(), |scenario| {
            runtime.block_on(check_scenario(store.as_ref(), &scenario))
        })
        .unwrap();
}

fn run_expiry(runtime: &Runtime, store: Arc<dyn TaskStore>, ttl: Duration) {
    let mut runner = TestRunner::new(quiet(3));
    runner
        .run(&scenario(), |scenario| {
            runtime.block_on(check_expiry(store.as_ref(), &scenario, ttl))
        })
        .unwrap();
}

#[test]
fn memory_store_reads_back_to_the_owner_only() {
    let runtime = runtime();
    let store = Arc::new(MemoryStore::new(Duration::from_secs(600), 100_000));
    run_scenarios(&runtime, store, 256);
}

#[test]
fn redis_store_reads_back_to_the_owner_only() {
    let redis = RedisServer::start();
    let runtime = runtime();
    let store: Arc<dyn TaskStore> = Arc::new(
        runtime
            .block_on(RedisStore::connect(
                &redis.url(),
                false,
                Duration::from_secs(600),
                Duration::from_secs(2),
            ))
            .unwrap(),
    );
    run_scenarios(&runtime, store, 128);
}

#[test]
fn memory_store_forgets_after_the_ttl() {
    let runtime = runtime();
    let ttl = Duration::from_millis(400);
    run_expiry(&runtime, Arc::new(MemoryStore::new(ttl, 100_000)), ttl);
}

#[test]
fn redis_store_forgets_after_the_ttl() {
    let redis = RedisServer::start();
    let runtime = runtime();
    let ttl = Duration::from_secs(1);
    let store: Arc<dyn TaskStore> = Arc::new(
        runtime
            .block_on(RedisStore::connect(
                &redis.url(),
                false,
                ttl,
                Duration::from_secs(2),
            ))
            .unwrap(),
    );
    run_expiry(&runtime, store, ttl);
}
