//! `ListTasks`: a user's stored tasks filtered, ordered newest status first, and cut into
//! pages by an opaque cursor, whichever store they came from. The page is chosen on the
//! owner's index alone; only the tasks of the page are read, a few at a time, and the page ends
//! early, its token pointing after its last task, once the tasks read reach the page's budget in
//! bytes: a page of a hundred tasks of a megabyte is not one answer of a hundred megabytes.

use std::collections::HashSet;

use a2a_types::{Task, TaskState};
use bytes::Bytes;
use chrono::{DateTime, Utc};

use crate::store::{IndexEntry, StoreError, decode_task, short_hash};

/// The most tasks one page holds (A2A 1.0 bounds `pageSize` to 1..=100).
pub const MAX_PAGE_SIZE: u32 = 100;

/// The page size when the request sets none (A2A 1.0's default).
pub const DEFAULT_PAGE_SIZE: u32 = 50;

/// Tasks read from the store per round trip while a page is filled: few enough that a page cut
/// by its budget in bytes reads little beyond it.
pub const READ_BATCH: usize = 8;

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
    pub after: Option<PageCursor>,
    /// Keep only the last N history messages of each task.
    pub history_length: Option<u64>,
}

/// A position in the listing order: the status timestamp and id of a task. Timestamps are
/// RFC 3339 UTC with milliseconds, so their text order is their time order; the id breaks ties.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PageCursor {
    timestamp: String,
    id: String,
}

impl PageCursor {
    /// The opaque `nextPageToken` text.
    pub fn token(&self) -> String {
        hex::encode(format!("{}\n{}", self.timestamp, self.id))
    }

    /// Reads a `pageToken`; `None` when it is not one this server made.
    pub fn from_token(token: &str) -> Option<PageCursor> {
        let text = String::from_utf8(hex::decode(token).ok()?).ok()?;
        let (timestamp, id) = text.split_once('\n')?;
        Some(PageCursor {
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
    pub next: Option<PageCursor>,
    /// How many tasks match the filters, over all pages.
    pub total: usize,
}

/// Which tasks one page holds, chosen from the owner's index alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The page's tasks' positions, newest status first.
    pub page: Vec<PageCursor>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<PageCursor>,
    /// How many tasks match the filters, over all pages.
    pub total: usize,
}

/// Filters and orders index entries (in any order, a task's newest entry winning) and picks
/// the page the query asks for.
pub fn select(entries: Vec<IndexEntry>, query: &TaskQuery) -> Selection {
    let context_hash = query.context_id.as_deref().map(short_hash);
    let mut matching: Vec<PageCursor> = entries
        .into_iter()
        .filter(|entry| {
            context_hash
                .as_ref()
                .is_none_or(|hash| *hash == entry.context_hash)
                && query.state.is_none_or(|state| state == entry.state)
                && query.since.is_none_or(|since| {
                    DateTime::parse_from_rfc3339(&entry.timestamp)
                        .is_ok_and(|changed| changed >= since)
                })
        })
        .map(|entry| PageCursor {
            timestamp: entry.timestamp,
            id: entry.task_id,
        })
        .collect();
    matching.sort_unstable_by(|a, b| b.cmp(a));
    let mut seen = HashSet::new();
    matching.retain(|cursor| seen.insert(cursor.id.clone()));
    let total = matching.len();
    let start = match &query.after {
        Some(after) => matching.partition_point(|cursor| cursor >= after),
        None => 0,
    };
    let rest = &matching[start..];
    let size = rest.len().min(query.page_size as usize);
    let next = (rest.len() > size && size > 0).then(|| rest[size - 1].clone());
    Selection {
        page: rest[..size].to_vec(),
        next,
        total,
    }
}

impl Selection {
    /// The ids of the page's tasks from the `from`-th, at most `count` of them.
    pub fn ids(&self, from: usize, count: usize) -> Vec<String> {
        self.page
            .iter()
            .skip(from)
            .take(count)
            .map(|cursor| cursor.id.clone())
            .collect()
    }

    /// Ends the page after its first `kept` tasks (at least one), its next page starting after
    /// the last one kept; a page already that short is left as it is.
    pub fn cut(&mut self, kept: usize) {
        let kept = kept.max(1);
        if kept < self.page.len() {
            self.page.truncate(kept);
            self.next = self.page.last().cloned();
        }
    }
}

/// How many of `stored` (the page's tasks in order, as read) fit in `max_bytes`: the tasks are
/// taken in order while their JSON, added up, stays within it; the first always fits.
pub fn fitting(stored: &[Option<Bytes>], max_bytes: usize) -> usize {
    let mut bytes = 0usize;
    let mut kept = 0;
    for json in stored {
        bytes += json.as_ref().map_or(0, Bytes::len);
        if bytes > max_bytes && kept > 0 {
            break;
        }
        kept += 1;
    }
    kept
}

/// The page's tasks read back (JSON text, `None` for one that expired meanwhile), with their
/// histories trimmed as the query asks.
pub fn page(
    selection: Selection,
    stored: Vec<Option<Bytes>>,
    query: &TaskQuery,
) -> Result<TaskPage, StoreError> {
    let mut tasks = Vec::with_capacity(stored.len());
    for json in stored.iter().flatten() {
        let mut task = decode_task(json)?;
        if let Some(length) = query.history_length {
            task.trim_history(usize::try_from(length).unwrap_or(usize::MAX));
        }
        tasks.push(task);
    }
    Ok(TaskPage {
        tasks,
        next: selection.next,
        total: selection.total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, context: &str, state: TaskState, timestamp: &str) -> IndexEntry {
        IndexEntry {
            task_id: id.into(),
            timestamp: timestamp.into(),
            state,
            context_hash: short_hash(context),
        }
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

    #[test]
    fn pages_follow_each_other_newest_first_with_ties_broken_by_id() {
        let entries = vec![
            entry("a", "c1", TaskState::Completed, "2026-12-01T10:00:00.000Z"),
            entry("c", "c1", TaskState::Failed, "2026-12-01T12:00:00.000Z"),
            entry("b", "c2", TaskState::Completed, "2026-12-01T12:00:00.000Z"),
            entry("d", "c2", TaskState::Completed, "2026-12-01T09:00:00.000Z"),
            // An older entry of a continued task gives way to its newest.
            entry("a", "c1", TaskState::Completed, "2026-12-01T08:00:00.000Z"),
        ];
        let paged = |after: Option<PageCursor>| {
            select(
                entries.clone(),
                &TaskQuery {
                    page_size: 3,
                    after,
                    ..query()
                },
            )
        };
        let first = paged(None);
        assert_eq!(
            (first.ids(0, 9).join(","), first.total),
            ("c,b,a".into(), 4)
        );
        let second = paged(PageCursor::from_token(&first.next.unwrap().token()));
        assert_eq!(
            (second.ids(0, 9).join(","), second.next),
            ("d".into(), None)
        );

        let failed = select(
            entries.clone(),
            &TaskQuery {
                state: Some(TaskState::Failed),
                ..query()
            },
        );
        assert_eq!((failed.ids(0, 9).join(","), failed.total), ("c".into(), 1));
        let since = select(
            entries.clone(),
            &TaskQuery {
                context_id: Some("c2".into()),
                since: Some("2026-12-01T12:00:00Z".parse().unwrap()),
                ..query()
            },
        );
        assert_eq!(since.ids(0, 9).join(","), "b");
    }

    #[test]
    fn a_page_ends_where_its_bytes_run_out_and_goes_on_after_its_last_task() {
        let entries: Vec<IndexEntry> = (0..5)
            .map(|n| {
                let timestamp = format!("2026-12-01T1{n}:00:00.000Z");
                entry(&format!("t{n}"), "c", TaskState::Completed, &timestamp)
            })
            .collect();
        let mut selection = select(entries.clone(), &query());
        let stored: Vec<Option<Bytes>> =
            (0..5).map(|_| Some(Bytes::from(vec![b'x'; 100]))).collect();
        assert_eq!(fitting(&stored, 250), 2);
        assert_eq!(fitting(&stored, 50), 1, "the first task always fits");
        assert_eq!(fitting(&stored, 10_000), 5);
        selection.cut(fitting(&stored, 250));
        assert_eq!(selection.ids(0, 9).join(","), "t4,t3");
        let rest = select(
            entries,
            &TaskQuery {
                after: selection.next.clone(),
                ..query()
            },
        );
        assert_eq!(rest.ids(0, 9).join(","), "t2,t1,t0");
    }

    #[test]
    fn tokens_round_trip_and_strangers_are_refused() {
        let cursor = PageCursor {
            timestamp: "2026-12-01T12:00:00.000Z".into(),
            id: "t:1".into(),
        };
        assert_eq!(PageCursor::from_token(&cursor.token()), Some(cursor));
        assert_eq!(PageCursor::from_token("not-a-token"), None);
        assert_eq!(PageCursor::from_token(&hex::encode("no separator")), None);
    }
}
