use a2a_types::{TaskState, TaskStatus};

use super::*;
use crate::store::{CONTEXT_CAP, OWNER_INDEX_CAP};

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A finished task as the server stores it.
fn stored(id: &str, context_id: &str) -> StoredTask {
    StoredTask::of(&Task {
        kind: "task".into(),
        id: id.into(),
        context_id: context_id.into(),
        status: TaskStatus {
            state: TaskState::Completed,
            message: None,
            timestamp: Some("2026-12-01T10:00:00.000Z".into()),
        },
        artifacts: Vec::new(),
        history: Vec::new(),
        metadata: None,
    })
    .unwrap()
}

fn record(task: &StoredTask) -> MessageRecord {
    MessageRecord {
        task_id: task.id.clone(),
    }
}

/// Saves a new task with a message of its own, in a context of its own unless one is given.
async fn save_new(store: &MemoryStore, owner: &Owner, context: Option<&str>) -> StoredTask {
    let task = stored(&uuid(), context.unwrap_or(&uuid()));
    let saved = store
        .save(owner, &task, &message_key(), &record(&task), true)
        .await
        .unwrap();
    assert_eq!(saved, SaveOutcome::Saved);
    task
}

/// Saves `task` with the message `key`.
async fn save(
    store: &MemoryStore,
    owner: &Owner,
    task: &StoredTask,
    key: &str,
    new_in_context: bool,
) -> SaveOutcome {
    store
        .save(owner, task, key, &record(task), new_in_context)
        .await
        .unwrap()
}

fn message_key() -> String {
    crate::store::message_key_hash(&uuid())
}

async fn ids_in_index(store: &MemoryStore, owner: &Owner) -> Vec<String> {
    store
        .owned_index(owner)
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.task_id)
        .collect()
}

fn owners(count: usize) -> Vec<Owner> {
    (0..count)
        .map(|n| Owner::of("", &format!("user-{n}")))
        .collect()
}

#[tokio::test]
async fn a_full_store_keeps_the_newest_tasks() {
    let store = MemoryStore::new(Duration::from_secs(3600), 100);
    let owner = Owner::of("", "alice");
    let mut ids = Vec::new();
    for _ in 0..400 {
        ids.push(save_new(&store, &owner, None).await.id);
        assert!(
            store.census().tasks <= 100,
            "the cap holds after every save"
        );
    }
    for id in &ids[300..] {
        assert!(store.get(&owner, id).await.unwrap().is_some(), "{id}");
    }
    for id in &ids[..300] {
        assert!(store.get(&owner, id).await.unwrap().is_none(), "{id}");
    }
    assert_eq!(ids_in_index(&store, &owner).await, ids[300..].to_vec());
}

#[tokio::test]
async fn the_cap_takes_the_oldest_saved_of_all_owners_and_a_read_keeps_nothing() {
    let store = MemoryStore::new(Duration::from_secs(3600), 50);
    let owners = owners(40);
    let mut saved = Vec::new();
    for n in 0..50 {
        let owner = &owners[n % owners.len()];
        saved.push((owner.clone(), save_new(&store, owner, None).await));
    }
    for n in 50..200 {
        // The oldest saved is read just before each save: it leaves all the same.
        let (oldest_owner, oldest) = saved[n - 50].clone();
        assert!(
            store
                .get(&oldest_owner, &oldest.id)
                .await
                .unwrap()
                .is_some()
        );
        let owner = &owners[n % owners.len()];
        saved.push((owner.clone(), save_new(&store, owner, None).await));
        assert!(
            store
                .get(&oldest_owner, &oldest.id)
                .await
                .unwrap()
                .is_none()
        );
        let census = store.census();
        assert_eq!(census.tasks, 50, "{census:?}");
        assert!(census.saves <= 100 && census.messages <= 100, "{census:?}");
    }
    for (n, (owner, task)) in saved.iter().enumerate() {
        let kept = store.get(owner, &task.id).await.unwrap().is_some();
        assert_eq!(kept, n >= 150, "task {n}");
    }
}

#[tokio::test]
async fn a_task_saved_again_outlives_its_earlier_save() {
    let store = MemoryStore::new(Duration::from_secs(3600), 3);
    let owner = Owner::of("", "alice");
    let task = stored(&uuid(), "ctx");
    let (first, second) = (message_key(), message_key());
    assert_eq!(
        save(&store, &owner, &task, &first, true).await,
        SaveOutcome::Saved
    );
    let other = save_new(&store, &owner, None).await;
    assert_eq!(
        save(&store, &owner, &task, &second, false).await,
        SaveOutcome::Saved
    );
    let newer: Vec<String> = vec![
        save_new(&store, &owner, None).await.id,
        save_new(&store, &owner, None).await.id,
    ];
    // Four tasks for three places: the task's first save leaves (its message with it, the
    // task staying), then the oldest saved task.
    assert!(store.get(&owner, &task.id).await.unwrap().is_some());
    assert!(store.get(&owner, &other.id).await.unwrap().is_none());
    assert_eq!(store.message(&owner, &first).await.unwrap(), None);
    assert_eq!(
        store.message(&owner, &second).await.unwrap(),
        Some(record(&task))
    );
    let contexts = store.context(&owner, "ctx", 10).await.unwrap();
    assert_eq!(contexts.len(), 1, "the task stays in its context");
    let mut index = vec![task.id.clone()];
    index.extend(newer);
    assert_eq!(ids_in_index(&store, &owner).await, index);
    assert_eq!(store.census().tasks, 3);
}

#[tokio::test]
async fn a_continued_task_moves_to_the_newest_end_of_its_index() {
    let store = MemoryStore::new(Duration::from_secs(3600), 1000);
    let owner = Owner::of("", "alice");
    let first = save_new(&store, &owner, Some("ctx")).await;
    let second = save_new(&store, &owner, None).await;
    let third = save_new(&store, &owner, None).await;
    assert_eq!(
        save(&store, &owner, &first, &message_key(), false).await,
        SaveOutcome::Saved
    );
    assert_eq!(
        ids_in_index(&store, &owner).await,
        vec![second.id, third.id, first.id.clone()]
    );
    let context = store.context(&owner, "ctx", 10).await.unwrap();
    assert_eq!(
        context.len(),
        1,
        "continuing does not add the task to its context again"
    );
    assert_eq!(context[0].id, first.id);
}

#[tokio::test]
async fn a_context_keeps_its_newest_tasks_and_an_index_its_newest_entries() {
    let store = MemoryStore::new(Duration::from_secs(3600), 10_000);
    let owner = Owner::of("", "alice");
    let mut ids = Vec::new();
    for _ in 0..CONTEXT_CAP + 20 {
        ids.push(save_new(&store, &owner, Some("ctx")).await.id);
    }
    let listed: Vec<String> = store
        .context(&owner, "ctx", 1000)
        .await
        .unwrap()
        .into_iter()
        .map(|task| task.id)
        .collect();
    assert_eq!(listed, ids[20..].to_vec(), "the newest, oldest first");
    let limited = store.context(&owner, "ctx", 5).await.unwrap();
    let limited: Vec<String> = limited.into_iter().map(|task| task.id).collect();
    assert_eq!(limited, ids[ids.len() - 5..].to_vec());

    for _ in ids.len()..OWNER_INDEX_CAP + 5 {
        ids.push(save_new(&store, &owner, None).await.id);
    }
    assert_eq!(ids_in_index(&store, &owner).await, ids[5..].to_vec());
    assert_eq!(store.census().index_entries, OWNER_INDEX_CAP);
    // Tasks beyond the index still read back by id.
    assert!(store.get(&owner, &ids[0]).await.unwrap().is_some());
}

#[tokio::test]
async fn two_owners_never_meet_whatever_ids_they_share() {
    let store = MemoryStore::new(Duration::from_secs(3600), 1000);
    let (alice, bob) = (Owner::of("", "alice"), Owner::of("", "bob"));
    let shared_uuid = uuid();
    for id in [shared_uuid.as_str(), "t1"] {
        let key = message_key();
        let theirs = [stored(id, "alice's"), stored(id, "bob's")];
        for (owner, task) in [(&alice, &theirs[0]), (&bob, &theirs[1])] {
            let saved = store.save(owner, task, &key, &record(task), true).await;
            assert_eq!(
                saved.unwrap(),
                SaveOutcome::Saved,
                "{id}: a message of its own"
            );
        }
        for (owner, task) in [(&alice, &theirs[0]), (&bob, &theirs[1])] {
            let json = store.get(owner, id).await.unwrap().unwrap();
            assert_eq!(json, task.json, "{id}: each reads its own");
        }
        assert_eq!(store.context(&alice, "bob's", 10).await.unwrap(), vec![]);
    }
    assert_eq!(ids_in_index(&store, &alice).await.len(), 2);
    assert!(
        store
            .get(&Owner::of("", "carol"), "t1")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn ids_in_another_form_are_other_ids() {
    let store = MemoryStore::new(Duration::from_secs(3600), 1000);
    let owner = Owner::of("", "alice");
    let task = save_new(&store, &owner, None).await;
    let t1 = stored("t1", "ctx");
    let saved = store.save(&owner, &t1, "m-1", &record(&t1), true).await;
    assert_eq!(saved.unwrap(), SaveOutcome::Saved);
    assert_eq!(
        store.get(&owner, "t1").await.unwrap(),
        Some(t1.json.clone())
    );
    assert_eq!(
        store.message(&owner, "m-1").await.unwrap(),
        Some(record(&t1))
    );
    for odd in [
        task.id.to_uppercase(),
        task.id.replace('-', ""),
        format!("{{{}}}", task.id),
        "T1".into(),
        "t1 ".into(),
        String::new(),
        "\u{0}".into(),
        "é".repeat(18),
    ] {
        assert!(store.get(&owner, &odd).await.unwrap().is_none(), "{odd:?}");
    }
    assert_eq!(store.message(&owner, "M-1").await.unwrap(), None);
    let listed = store.owned_index(&owner).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        listed[1], t1.entry,
        "an entry of another form lists as given"
    );
}

#[tokio::test]
async fn a_message_recorded_first_keeps_its_record() {
    let store = MemoryStore::new(Duration::from_secs(3600), 1000);
    let owner = Owner::of("", "alice");
    let key = message_key();
    let started = MessageRecord { task_id: uuid() };
    assert_eq!(store.record_message(&owner, &key, &started), None);
    let another = MessageRecord { task_id: uuid() };
    assert_eq!(
        store.record_message(&owner, &key, &another),
        Some(started.clone())
    );
    let task = stored(&another.task_id, "ctx");
    let saved = store
        .save(&owner, &task, &key, &another, true)
        .await
        .unwrap();
    assert_eq!(saved, SaveOutcome::Duplicate(started.clone()));
    assert!(
        store.get(&owner, &task.id).await.unwrap().is_none(),
        "nothing written"
    );
    let finished = stored(&started.task_id, "ctx");
    store.save_finished(&owner, &finished, true).unwrap();
    assert_eq!(
        store.get(&owner, &finished.id).await.unwrap(),
        Some(finished.json)
    );
    assert_eq!(store.recorded_message(&owner, &key), Some(started));
}

#[tokio::test]
async fn expired_entries_leave_and_take_their_owners_with_them() {
    let ttl = Duration::from_millis(300);
    let store = MemoryStore::new(ttl, 100_000);
    let owners = owners(30);
    let mut written = Vec::new();
    for owner in &owners {
        let key = message_key();
        let task = save_new(&store, owner, Some("shared context")).await;
        save_new(&store, owner, None).await;
        let started = MessageRecord { task_id: uuid() };
        assert_eq!(store.record_message(owner, &message_key(), &started), None);
        written.push((owner, key, task));
    }
    let before = store.census();
    assert_eq!(before.owners, owners.len());
    tokio::time::sleep(ttl + Duration::from_millis(200)).await;
    // Reads see nothing the moment the TTL ends, before any upkeep.
    for (owner, key, task) in &written {
        assert!(store.get(owner, &task.id).await.unwrap().is_none());
        assert_eq!(store.message(owner, key).await.unwrap(), None);
        assert!(
            store
                .context(owner, "shared context", 10)
                .await
                .unwrap()
                .is_empty()
        );
        assert!(store.owned_index(owner).await.unwrap().is_empty());
    }
    // Writes of one other owner take everything expired away, in every shard.
    let newcomer = Owner::of("", "newcomer");
    for _ in 0..2 * SHARDS {
        save_new(&store, &newcomer, Some("hers")).await;
    }
    let after = store.census();
    let newcomers = 2 * SHARDS;
    assert_eq!(
        after,
        Census {
            tasks: newcomers,
            messages: newcomers,
            contexts: 1,
            owners: 1,
            index_entries: newcomers,
            saves: newcomers,
        }
    );
}

#[tokio::test]
async fn a_message_recorded_again_after_its_ttl_keeps_its_new_record() {
    let ttl = Duration::from_millis(200);
    let store = MemoryStore::new(ttl, 1000);
    let owner = Owner::of("", "alice");
    let key = message_key();
    let first = MessageRecord { task_id: uuid() };
    assert_eq!(store.record_message(&owner, &key, &first), None);
    tokio::time::sleep(ttl + Duration::from_millis(100)).await;
    assert_eq!(store.recorded_message(&owner, &key), None);
    let second = MessageRecord { task_id: uuid() };
    assert_eq!(store.record_message(&owner, &key, &second), None);
    // The first record's save has left (this write expired it): the new record stays.
    assert_eq!(store.census().saves, 1);
    assert_eq!(store.recorded_message(&owner, &key), Some(second));
}

#[tokio::test]
async fn memory_stays_bounded_under_continued_tasks_and_many_owners() {
    let cap = 10;
    let store = MemoryStore::new(Duration::from_secs(3600), cap as u64);
    let owners = owners(50);
    let mut tasks: Vec<(Owner, StoredTask)> = Vec::new();
    for n in 0..2000 {
        let owner = &owners[n * 7 % owners.len()];
        if n % 3 == 0
            && let Some((owner, task)) = tasks.last()
        {
            // A continued task: saved again, through either path.
            if n % 2 == 0 {
                store.save_finished(owner, task, false).unwrap();
            } else {
                assert_eq!(
                    save(&store, owner, task, &message_key(), false).await,
                    SaveOutcome::Saved
                );
            }
        } else {
            let started = MessageRecord { task_id: uuid() };
            assert_eq!(store.record_message(owner, &message_key(), &started), None);
            tasks.push((owner.clone(), save_new(&store, owner, Some("ctx")).await));
        }
        let census = store.census();
        assert!(census.tasks <= cap, "{census:?}");
        assert!(census.saves <= 2 * cap, "{census:?}");
        assert!(census.messages <= census.saves, "{census:?}");
        assert!(census.owners <= census.tasks, "{census:?}");
        assert!(census.contexts <= census.tasks, "{census:?}");
        assert!(census.index_entries <= census.tasks, "{census:?}");
    }
}

#[tokio::test]
async fn a_task_moved_to_another_context_leaves_no_membership_behind() {
    let store = MemoryStore::new(Duration::from_secs(3600), 2);
    let owner = Owner::of("", "alice");
    let moved = stored("t1", "x");
    assert_eq!(
        save(&store, &owner, &moved, "m1", true).await,
        SaveOutcome::Saved
    );
    assert_eq!(
        save(&store, &owner, &moved, "m2", false).await,
        SaveOutcome::Saved
    );
    let other = stored("t2", "other");
    for message in ["m3", "m4", "m5"] {
        assert_eq!(
            save(&store, &owner, &other, message, false).await,
            SaveOutcome::Saved
        );
    }
    // The first save of t1 has left while t1 is still of context x: x keeps it.
    assert_eq!(store.context(&owner, "x", 10).await.unwrap().len(), 1);
    let elsewhere = stored("t1", "y");
    assert_eq!(
        save(&store, &owner, &elsewhere, "m6", true).await,
        SaveOutcome::Saved
    );
    for _ in 0..10 {
        save_new(&store, &owner, None).await;
    }
    let census = store.census();
    assert_eq!(census.tasks, 2);
    assert_eq!(
        census.contexts, 2,
        "{census:?}: only the live tasks' contexts"
    );
    assert!(store.context(&owner, "x", 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn each_owner_keeps_its_tasks_within_its_share_in_bytes_and_the_count_never_leaks() {
    // Tasks are counted by their stored (compressed) form, whose size varies by a few bytes
    // with the random ids: the share holds two tasks and a half.
    let cost =
        |task: &StoredTask| packing::pack(&task.json).unwrap().len() + shard::TASK_OVERHEAD_BYTES;
    let one = cost(&stored(&uuid(), &uuid()));
    let store = MemoryStore::new(Duration::from_millis(50), 1000)
        .with_byte_budget(100 * one as u64, (2 * one + one / 2) as u64);
    let [loud, quiet] = [Owner::of("", "loud"), Owner::of("", "quiet")];
    let quiet_tasks = [
        save_new(&store, &quiet, None).await,
        save_new(&store, &quiet, None).await,
    ];
    let mut loud_tasks = Vec::new();
    for _ in 0..5 {
        loud_tasks.push(save_new(&store, &loud, None).await);
    }
    // The loud owner keeps its newest two; the quiet owner's are untouched.
    let kept: Vec<String> = loud_tasks[3..].iter().map(|task| task.id.clone()).collect();
    assert_eq!(ids_in_index(&store, &loud).await, kept);
    assert!(store.get(&loud, &loud_tasks[0].id).await.unwrap().is_none());
    for task in &quiet_tasks {
        assert!(store.get(&quiet, &task.id).await.unwrap().is_some());
    }
    let kept_bytes: usize = quiet_tasks.iter().chain(&loud_tasks[3..]).map(cost).sum();
    assert_eq!(store.bytes.load(Ordering::Relaxed), kept_bytes);
    assert_eq!(store.over_budget(), None);

    // Past the total, a new task is refused; once everything expired, nothing is counted.
    let full = MemoryStore::new(Duration::from_millis(50), 1000)
        .with_byte_budget((one / 2) as u64, (one + one / 2) as u64);
    save_new(&full, &quiet, None).await;
    assert_eq!(full.over_budget(), Some(MAX_BYTES_KEY));
    tokio::time::sleep(Duration::from_millis(80)).await;
    for store in [&store, &full] {
        // Writes do the upkeep: a few of them take every expired save away.
        let passer_by = Owner::of("", "passer-by");
        for _ in 0..SHARDS {
            store.record_message(
                &passer_by,
                &message_key(),
                &MessageRecord { task_id: uuid() },
            );
        }
        let census = store.census();
        assert_eq!(census.tasks, 0, "{census:?}");
        assert_eq!(store.bytes.load(Ordering::Relaxed), 0);
    }
}
