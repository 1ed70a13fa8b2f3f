//! What the memory task store keeps per task, its compressed form included (the JSON text a
//! save is given is not kept), and how many allocations one save makes, counted by an instrumented allocator (counts, not timings). The
//! allocator is the whole test binary's; the counts are this test's alone because nextest (the
//! README's test command) runs every test in a process of its own.
//!
//! The load is the memory benchmark's: one user, each message a new task in a new context.

use std::alloc::System;
use std::time::Duration;

use a2a_types::{Artifact, Message, Part, Role, Task, TaskState, TaskStatus};
use magisterium_a2a::store::{
    MemoryStore, MessageRecord, Owner, SaveOutcome, StoredTask, TaskStore, message_key_hash,
};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Enough tasks that the maps' growth is averaged over many saves.
const TASKS: usize = 20_000;

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A finished task shaped as the server makes them: the question and the answer in its
/// history, one artifact, about 1.2 KB of JSON.
fn task() -> Task {
    let id = uuid();
    let context_id = uuid();
    let question = Message {
        kind: "message".into(),
        message_id: uuid(),
        role: Role::User,
        parts: vec![Part::text("Which saints are remembered today?")],
        task_id: Some(id.clone()),
        context_id: Some(context_id.clone()),
        reference_task_ids: None,
        extensions: None,
        metadata: None,
    };
    let mut answer = Message::agent_text(uuid(), "x".repeat(180));
    answer.task_id = Some(id.clone());
    answer.context_id = Some(context_id.clone());
    Task {
        kind: "task".into(),
        id,
        context_id,
        status: TaskStatus {
            state: TaskState::Completed,
            message: None,
            timestamp: Some("2026-12-08T10:00:00.000Z".into()),
        },
        artifacts: vec![Artifact {
            artifact_id: uuid(),
            name: Some("saints".into()),
            parts: vec![Part::text("y".repeat(275))],
        }],
        history: vec![question, answer],
        metadata: None,
    }
}

/// What saving [`TASKS`] tasks kept and cost, the owner of each chosen by `owner_of`.
struct Footprint {
    /// Bytes kept per task, its compressed form included (as requested from the allocator).
    bytes_per_task: isize,
    /// Allocations kept per task.
    kept_allocations: f64,
    /// Allocations made per save, kept or not.
    allocations_per_save: f64,
}

fn measure(load: &str, owner_of: impl Fn(usize) -> Owner) -> Footprint {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = MemoryStore::new(Duration::from_secs(3600), 1_000_000);
    // Everything a save is given is made before counting: the JSON text is the task's own.
    let saves: Vec<(Owner, StoredTask, String, MessageRecord)> = (0..TASKS)
        .map(|n| {
            let stored = StoredTask::of(&task()).unwrap();
            let record = MessageRecord {
                task_id: stored.id.clone(),
            };
            (owner_of(n), stored, message_key_hash(&uuid()), record)
        })
        .collect();
    let json_bytes: usize = saves.iter().map(|(_, task, _, _)| task.json.len()).sum();

    let region = Region::new(GLOBAL);
    runtime.block_on(async {
        for (owner, task, message_key, record) in &saves {
            let saved = store
                .save(owner, task, message_key, record, true)
                .await
                .unwrap();
            assert_eq!(saved, SaveOutcome::Saved);
        }
    });
    let change = region.change();

    let tasks = TASKS as f64;
    // Reallocations count into the bytes allocated and freed already.
    let kept = change.bytes_allocated as isize - change.bytes_deallocated as isize;
    let footprint = Footprint {
        bytes_per_task: kept / TASKS as isize,
        kept_allocations: (change.allocations as f64 - change.deallocations as f64) / tasks,
        allocations_per_save: change.allocations as f64 / tasks,
    };
    println!(
        "{load}: {TASKS} tasks of {} JSON bytes on average: {} bytes kept per task in all \
         in {:.2} allocations; {:.2} allocations and {:.2} reallocations per save",
        json_bytes / TASKS,
        footprint.bytes_per_task,
        footprint.kept_allocations,
        footprint.allocations_per_save,
        change.reallocations as f64 / tasks,
    );
    footprint
}

/// Both loads in one test: the allocator counts every thread of the process, so no other test
/// may run beside the measurement, whichever runner runs this binary.
#[test]
fn a_stored_task_costs_less_than_its_json() {
    let owner = Owner::of("", "footprint");
    let one_user = measure("one user", |_| owner.clone());
    // Before the shards, the moka caches kept 1,276 bytes in 29 allocations per task beyond its
    // JSON, and a save made 57 allocations; before compression the shards kept 594 bytes beyond
    // the JSON, 1,834 in all.
    assert!(one_user.bytes_per_task < 900, "{}", one_user.bytes_per_task);
    assert!(
        one_user.kept_allocations < 1.5,
        "{}",
        one_user.kept_allocations
    );
    assert!(
        one_user.allocations_per_save < 3.0,
        "{}",
        one_user.allocations_per_save
    );

    let many = measure("a user per task", |n| Owner::of("", &format!("user-{n}")));
    // Before the shards: 2,105 bytes in 44 allocations per task beyond its JSON, 73
    // allocations per save; before compression 847 beyond the JSON, about 2,090 in all.
    assert!(many.bytes_per_task < 1100, "{}", many.bytes_per_task);
    assert!(many.kept_allocations < 2.5, "{}", many.kept_allocations);
    assert!(
        many.allocations_per_save < 4.0,
        "{}",
        many.allocations_per_save
    );
}
