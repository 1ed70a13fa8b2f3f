//! The proper calendars of territories (`data/calendars/`): which entries each adds to or changes
//! in the calendars it inherits, and its conference's choices for Epiphany, the Ascension and
//! Corpus Christi.

use std::sync::OnceLock;

use super::CalendarOptions;
use super::sanctorale::{self, SanctoraleEntry};
use crate::LiturgyError;

/// The id of the General Roman Calendar, the default.
pub const GENERAL_ROMAN: &str = "general-roman";

/// Each calendar: its id and its data file. The wider regions come first so that the nations
/// inheriting from them find them.
const FILES: [(&str, &str); 16] = [
    (
        "americas",
        include_str!("../../data/calendars/americas.txt"),
    ),
    ("europe", include_str!("../../data/calendars/europe.txt")),
    (
        "united-states",
        include_str!("../../data/calendars/united-states.txt"),
    ),
    ("canada", include_str!("../../data/calendars/canada.txt")),
    (
        "england-and-wales",
        include_str!("../../data/calendars/england-and-wales.txt"),
    ),
    ("ireland", include_str!("../../data/calendars/ireland.txt")),
    (
        "australia",
        include_str!("../../data/calendars/australia.txt"),
    ),
    ("brazil", include_str!("../../data/calendars/brazil.txt")),
    (
        "portugal",
        include_str!("../../data/calendars/portugal.txt"),
    ),
    ("poland", include_str!("../../data/calendars/poland.txt")),
    ("france", include_str!("../../data/calendars/france.txt")),
    ("belgium", include_str!("../../data/calendars/belgium.txt")),
    (
        "netherlands",
        include_str!("../../data/calendars/netherlands.txt"),
    ),
    ("germany", include_str!("../../data/calendars/germany.txt")),
    ("austria", include_str!("../../data/calendars/austria.txt")),
    (
        "switzerland",
        include_str!("../../data/calendars/switzerland.txt"),
    ),
];

/// Every calendar id the engine knows, the General Roman Calendar first.
pub fn calendar_ids() -> impl Iterator<Item = &'static str> {
    std::iter::once(GENERAL_ROMAN).chain(FILES.iter().map(|(id, _)| *id))
}

/// One calendar, parsed and merged with what it inherits.
#[derive(Debug)]
pub(crate) struct ProperCalendar {
    /// This calendar and those it inherits, nearest first, ending with `general-roman`: e.g.
    /// `poland`, `europe`, `general-roman`.
    pub(crate) lineage: Vec<&'static str>,
    /// The conference's choices; the General Roman Calendar's for a wider region.
    pub(crate) options: CalendarOptions,
    /// The Proper of Saints in force: the general entries, with those of the wider region and
    /// then of the nation put in place of the entries with the same id or added.
    pub(crate) entries: Vec<SanctoraleEntry>,
}

/// The calendar with this id, parsed on first use; `None` for an unknown id.
pub(crate) fn proper_calendar(id: &str) -> Option<Result<&'static ProperCalendar, LiturgyError>> {
    static PARSED: [OnceLock<Result<ProperCalendar, LiturgyError>>; FILES.len() + 1] =
        [const { OnceLock::new() }; FILES.len() + 1];
    let index = calendar_ids().position(|known| known == id)?;
    let id = calendar_ids().nth(index)?;
    Some(
        PARSED[index]
            .get_or_init(|| build(id))
            .as_ref()
            .map_err(Clone::clone),
    )
}

fn build(id: &'static str) -> Result<ProperCalendar, LiturgyError> {
    let general = sanctorale::entries()?.to_vec();
    let Some((_, text)) = FILES.iter().find(|(known, _)| *known == id) else {
        return Ok(ProperCalendar {
            lineage: vec![GENERAL_ROMAN],
            options: CalendarOptions::default(),
            entries: general,
        });
    };
    let invalid = |reason: String| LiturgyError::InvalidData { line: 0, reason };
    let mut options = CalendarOptions::default();
    let mut lineage = vec![id];
    let mut entries = general;
    for line in text.lines() {
        if let Some(parents) = line.strip_prefix("@inherits ") {
            for parent in parents.split_whitespace() {
                let inherited = proper_calendar(parent)
                    .ok_or_else(|| invalid(format!("{id}: unknown calendar `{parent}`")))??;
                lineage.extend(inherited.lineage.iter().filter(|p| **p != GENERAL_ROMAN));
                merge(
                    &mut entries,
                    inherited
                        .entries
                        .iter()
                        .filter(|e| e.source != GENERAL_ROMAN)
                        .cloned(),
                );
            }
        } else if let Some(choices) = line.strip_prefix("@options ") {
            for choice in choices.split_whitespace() {
                let (key, value) = choice
                    .split_once('=')
                    .and_then(|(k, v)| Some((k, v.parse::<bool>().ok()?)))
                    .ok_or_else(|| invalid(format!("{id}: bad option `{choice}`")))?;
                match key {
                    "epiphany_on_sunday" => options.epiphany_on_sunday = value,
                    "ascension_on_sunday" => options.ascension_on_sunday = value,
                    "corpus_christi_on_sunday" => options.corpus_christi_on_sunday = value,
                    _ => return Err(invalid(format!("{id}: unknown option `{key}`"))),
                }
            }
        }
    }
    let own = sanctorale::parse(text).map_err(|error| match error {
        LiturgyError::InvalidData { line, reason } => {
            invalid(format!("{id}, line {line}: {reason}"))
        }
        other => other,
    })?;
    merge(
        &mut entries,
        own.into_iter().map(|entry| SanctoraleEntry {
            source: id,
            ..entry
        }),
    );
    lineage.push(GENERAL_ROMAN);
    Ok(ProperCalendar {
        lineage,
        options,
        entries,
    })
}

/// Puts each entry in place of the one with the same id, or adds it.
fn merge(entries: &mut Vec<SanctoraleEntry>, replacements: impl Iterator<Item = SanctoraleEntry>) {
    for replacement in replacements {
        entries.retain(|e| e.id != replacement.id);
        entries.push(replacement);
    }
}
