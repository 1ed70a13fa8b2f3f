//! `ListTasks`: a user's stored tasks filtered, ordered newest status first, and cut into
//! pages by an opaque cursor, whichever store they came from.

use a2a_types::{Task, TaskState};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::store::{StoreError, decode_task};

/// The most tasks one page holds (A2A 1.0 bounds `pageSize` to 1..=100).
pub const MAX_PAGE_SIZE: u32 = 100;

/// The page size when the request sets none (A2A 1.0's default).
pub const DEFAULT_PAGE_SIZE: u32 = 50;

/// Which tasks to list, and how much of each.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskQuery {
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose status changed at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// Tasks per page, 1..=[`MAX_PAGE_SIZE`].
    pub page_size: u32,
    /// Continue after this position (from the previous page's token).
    pub after: Option<Cursor>,
    /// Keep only the last N history messages of each task.
    pub history_length: Option<u64>,
}

/// A position in the listing order: the status timestamp and id of a task. Timestamps are
/// RFC 3339 UTC with milliseconds, so their text order is their time order; the id breaks ties.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    timestamp: String,
    id: String,
}

impl Cursor {
    /// The opaque `nextPageToken` text.
    pub fn token(&self) -> String {
        hex::encode(format!("{}\n{}", self.timestamp, self.id))
    }

    /// Reads a `pageToken`; `None` when it is not one this server made.
    pub fn from_token(token: &str) -> Option<Cursor> {
        let text = String::from_utf8(hex::decode(token).ok()?).ok()?;
        let (timestamp, id) = text.split_once('\n')?;
        Some(Cursor {
            timestamp: timestamp.to_string(),
            id: id.to_string(),
        })
    }
}

/// One page of tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPage {
    /// The tasks, newest status first, histories trimmed as asked.
    pub tasks: Vec<Task>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<Cursor>,
    /// How many tasks match the filters, over all pages.
    pub total: usize,
}

/// The members filters and ordering need, read without building the rest of the task.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    id: String,
    context_id: String,
    status: SummaryStatus,
}

#[derive(Deserialize)]
struct SummaryStatus {
    state: TaskState,
    #[serde(default)]
    timestamp: Option<String>,
}

/// Filters, orders and pages stored tasks (JSON text, in any order).
pub fn page(stored: Vec<Bytes>, query: &TaskQuery) -> Result<TaskPage, StoreError> {
    let mut matching = Vec::new();
    for json in stored {
        let summary: Summary =
            serde_json::from_slice(&json).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        if query
            .context_id
            .as_ref()
            .is_some_and(|context| *context != summary.context_id)
            || query
                .state
                .is_some_and(|state| state != summary.status.state)
        {
            continue;
        }
        let timestamp = summary.status.timestamp.unwrap_or_default();
        if let Some(since) = query.since {
            let changed = DateTime::parse_from_rfc3339(&timestamp).ok();
            if changed.is_none_or(|changed| changed < since) {
                continue;
            }
        }
        let cursor = Cursor {
            timestamp,
            id: summary.id,
        };
        matching.push((cursor, json));
    }
    matching.sort_unstable_by(|a, b| b.0.cmp(&a.0));
    let total = matching.len();
    let start = match &query.after {
        Some(after) => matching.partition_point(|(cursor, _)| cursor >= after),
        None => 0,
    };
    let rest = &matching[start..];
    let size = rest.len().min(query.page_size as usize);
    let next = (rest.len() > size && size > 0).then(|| rest[size - 1].0.clone());
    let mut tasks = Vec::with_capacity(size);
    for (_, json) in &rest[..size] {
        let mut task = decode_task(json)?;
        if let Some(length) = query.history_length {
            task.trim_history(usize::try_from(length).unwrap_or(usize::MAX));
        }
        tasks.push(task);
    }
    Ok(TaskPage { tasks, next, total })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(id: &str, context: &str, state: &str, timestamp: &str) -> Bytes {
        Bytes::from(format!(
            r#"{{"kind":"task","id":"{id}","contextId":"{context}","status":{{"state":"{state}","timestamp":"{timestamp}"}},"artifacts":[],"history":[]}}"#
        ))
    }

    fn query() -> TaskQuery {
        TaskQuery {
            context_id: None,
            state: None,
            since: None,
            page_size: DEFAULT_PAGE_SIZE,
            after: None,
            history_length: None,
        }
    }

    fn ids(page: &TaskPage) -> Vec<&str> {
        page.tasks.iter().map(|t| t.id.as_str()).collect()
    }

    #[test]
    fn pages_follow_each_other_newest_first_with_ties_broken_by_id() {
        let tasks = vec![
            stored("a", "c1", "completed", "2026-12-01T10:00:00.000Z"),
            stored("c", "c1", "failed", "2026-12-01T12:00:00.000Z"),
            stored("b", "c2", "completed", "2026-12-01T12:00:00.000Z"),
            stored("d", "c2", "completed", "2026-12-01T09:00:00.000Z"),
        ];
        let first = page(
            tasks.clone(),
            &TaskQuery {
                page_size: 3,
                ..query()
            },
        )
        .unwrap();
        assert_eq!((ids(&first), first.total), (vec!["c", "b", "a"], 4));
        let token = first.next.unwrap().token();
        let second = page(
            tasks.clone(),
            &TaskQuery {
                page_size: 3,
                after: Cursor::from_token(&token),
                ..query()
            },
        )
        .unwrap();
        assert_eq!((ids(&second), &second.next), (vec!["d"], &None));

        let failed = page(
            tasks.clone(),
            &TaskQuery {
                state: Some(TaskState::Failed),
                ..query()
            },
        )
        .unwrap();
        assert_eq!((ids(&failed), failed.total), (vec!["c"], 1));
        let since = page(
            tasks,
            &TaskQuery {
                context_id: Some("c2".into()),
                since: Some("2026-12-01T12:00:00Z".parse().unwrap()),
                ..query()
            },
        )
        .unwrap();
        assert_eq!(ids(&since), vec!["b"]);
    }

    #[test]
    fn tokens_round_trip_and_strangers_are_refused() {
        let cursor = Cursor {
            timestamp: "2026-12-01T12:00:00.000Z".into(),
            id: "t:1".into(),
        };
        assert_eq!(Cursor::from_token(&cursor.token()), Some(cursor));
        assert_eq!(Cursor::from_token("not-a-token"), None);
        assert_eq!(Cursor::from_token(&hex::encode("no separator")), None);
    }
}
