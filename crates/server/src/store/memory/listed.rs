//! An owner-index entry as the memory store keeps it: 48 bytes and no allocation when it is in
//! the form the server makes (a UUID task id, an RFC 3339 UTC timestamp with milliseconds, a
//! context hash), spelled out otherwise. Turned back into an [`IndexEntry`] only when listed.

use a2a_types::TaskState;
use chrono::{DateTime, NaiveDate, NaiveTime, SecondsFormat};

use super::keys::{Digest, PackedTaskKey, hex_bytes};
use crate::store::IndexEntry;

/// One entry of an owner's index.
#[derive(Debug, Clone)]
pub(super) enum Listed {
    /// The server's form, packed.
    Compact(Compact),
    /// Any other entry, as it was given.
    Spelled(Box<IndexEntry>),
}

/// An entry of the server's form.
#[derive(Debug, Clone)]
pub(super) struct Compact {
    task: Digest,
    /// The status timestamp, in milliseconds since the Unix epoch.
    changed: i64,
    state: TaskState,
    context: Digest,
}

impl Listed {
    /// The entry of `entry`, packed when it can be read back exactly.
    pub(super) fn of(entry: &IndexEntry) -> Self {
        let compact = || {
            Some(Compact {
                task: PackedTaskKey::of(&entry.task_id).uuid_bytes()?,
                changed: millis_of(&entry.timestamp)?,
                state: entry.state,
                context: hex_bytes(&entry.context_hash)?,
            })
        };
        match compact() {
            Some(compact) => Listed::Compact(compact),
            None => Listed::Spelled(Box::new(entry.clone())),
        }
    }

    /// The task the entry lists.
    pub(super) fn task(&self) -> PackedTaskKey {
        match self {
            Listed::Compact(compact) => PackedTaskKey::uuid(compact.task),
            Listed::Spelled(entry) => PackedTaskKey::of(&entry.task_id),
        }
    }

    /// The entry as it was given.
    pub(super) fn entry(&self) -> IndexEntry {
        match self {
            Listed::Compact(compact) => IndexEntry {
                task_id: PackedTaskKey::uuid(compact.task).id(),
                timestamp: text_of(compact.changed),
                state: compact.state,
                context_hash: hex::encode(compact.context),
            },
            Listed::Spelled(entry) => entry.as_ref().clone(),
        }
    }
}

/// Reads `YYYY-MM-DDTHH:MM:SS.mmmZ`, the one form [`text_of`] prints (a valid date and time,
/// years 0000 to 9999); any other text is `None`, so that whatever is read prints back the same.
fn millis_of(text: &str) -> Option<i64> {
    let text = text.as_bytes();
    let separators = [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
    ];
    if text.len() != 24 || text[23] != b'Z' || separators.iter().any(|&(at, c)| text[at] != c) {
        return None;
    }
    let number = |from: usize, to: usize| {
        text[from..to].iter().try_fold(0u32, |value, &digit| {
            digit
                .is_ascii_digit()
                .then(|| value * 10 + u32::from(digit - b'0'))
        })
    };
    let date = NaiveDate::from_ymd_opt(
        i32::try_from(number(0, 4)?).ok()?,
        number(5, 7)?,
        number(8, 10)?,
    )?;
    let time = NaiveTime::from_hms_milli_opt(
        number(11, 13)?,
        number(14, 16)?,
        number(17, 19)?,
        number(20, 23)?,
    )?;
    Some(date.and_time(time).and_utc().timestamp_millis())
}

/// Prints milliseconds since the epoch as RFC 3339 UTC with milliseconds, as the server stamps
/// a task's status.
fn text_of(millis: i64) -> String {
    DateTime::from_timestamp_millis(millis)
        .map(|time| time.to_rfc3339_opts(SecondsFormat::Millis, true))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::short_hash;

    fn entry(task_id: &str, timestamp: &str, context_hash: &str) -> IndexEntry {
        IndexEntry {
            task_id: task_id.into(),
            timestamp: timestamp.into(),
            state: TaskState::Completed,
            context_hash: context_hash.into(),
        }
    }

    #[test]
    fn the_servers_entries_are_packed_and_read_back_exactly() {
        assert_eq!(std::mem::size_of::<Listed>(), 48);
        let id = uuid::Uuid::new_v4().to_string();
        let context = short_hash("ctx");
        for timestamp in [
            "2026-12-01T10:00:00.000Z",
            "2026-02-28T23:59:59.999Z",
            "2028-02-29T00:00:00.001Z",
            "1970-01-01T00:00:00.000Z",
            "0000-01-01T00:00:00.000Z",
            "0999-06-15T12:30:45.500Z",
            "9999-12-31T23:59:59.999Z",
        ] {
            let given = entry(&id, timestamp, &context);
            let listed = Listed::of(&given);
            assert!(matches!(listed, Listed::Compact(_)), "{timestamp}");
            assert_eq!(listed.entry(), given, "{timestamp}");
            assert_eq!(listed.task(), PackedTaskKey::of(&id));
        }
        let now = chrono::Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        assert_eq!(
            Listed::of(&entry(&id, &now, &context)).entry().timestamp,
            now
        );
    }

    #[test]
    fn any_other_entry_is_kept_as_given() {
        let id = uuid::Uuid::new_v4().to_string();
        let context = short_hash("ctx");
        for given in [
            entry("t1", "2026-12-01T10:00:00.000Z", &context),
            entry(&id.to_uppercase(), "2026-12-01T10:00:00.000Z", &context),
            entry(&id, "", &context),
            entry(&id, "2026-12-01T10:00:00Z", &context),
            entry(&id, "2026-12-01T10:00:00.000z", &context),
            entry(&id, "2026-12-01T10:00:00.000+00:00", &context),
            entry(&id, "2026-12-01 10:00:00.000Z", &context),
            entry(&id, "2026-02-30T10:00:00.000Z", &context),
            entry(&id, "2026-12-01T24:00:00.000Z", &context),
            entry(&id, "2026-12-01T23:59:60.000Z", &context),
            entry(&id, "+2026-12-01T10:00:00.00Z", &context),
            entry(&id, "2026-1é-01T10:00:00.00Z", &context),
            entry(&id, "2026-12-01T10:00:00.000Z", "c"),
            entry(&id, "2026-12-01T10:00:00.000Z", &context.to_uppercase()),
        ] {
            let listed = Listed::of(&given);
            assert!(matches!(listed, Listed::Spelled(_)), "{given:?}");
            assert_eq!(listed.entry(), given);
            assert_eq!(listed.task(), PackedTaskKey::of(&given.task_id));
        }
    }
}
