//! The liturgical calendar of the Roman Rite (1969): dates, celebrations, precedence, lectionary.
//!
//! Everything here is computed from rules and from data compiled into the crate, so a calendar
//! answer never needs the network or the file system.

pub mod bible;
pub mod calendar;
pub mod citation;
mod date_words;
pub mod dates;
pub mod lectionary;
pub mod names;

pub use calendar::{
    Calendar, CalendarOptions, Celebration, Color, GENERAL_ROMAN, LiturgicalDay, Rank,
    SanctoraleStatus, Season, SundayCycle, WeekdayCycle, calendar_ids,
};

/// The first civil year the engine answers for: the reformed calendar took effect on
/// 1 January 1970, and earlier years followed other rules.
pub const FIRST_YEAR: i32 = 1970;
/// The last civil year the engine answers for; four-digit years keep every date arithmetic
/// safely inside `chrono`'s range.
pub const LAST_YEAR: i32 = 9999;

/// Why a calendar question could not be answered. One enum for the crate, so callers match on
/// one type whatever part of the crate refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiturgyError {
    /// The date lies outside [`FIRST_YEAR`]..=[`LAST_YEAR`].
    #[error("the calendar covers the years {first} to {last}; {year} is outside that range", first = FIRST_YEAR, last = LAST_YEAR)]
    YearOutOfRange {
        /// The year asked for.
        year: i32,
    },
    /// No date or occasion could be read from the text.
    #[error("could not find a date in \"{query}\". {}", dates::ACCEPTED_FORMS)]
    UnrecognizedDate {
        /// The text as received.
        query: String,
    },
    /// A numeric date such as `12/08/2026` that reads differently in different countries.
    #[error(
        "\"{text}\" is ambiguous (day/month or month/day?); write it as 2026-12-08 or as 8 December 2026"
    )]
    AmbiguousDate {
        /// The ambiguous part of the text.
        text: String,
    },
    /// A day asked for by name that the given year does not have, e.g. a Sunday of Ordinary
    /// Time replaced by a solemnity.
    #[error("{what} does not occur in {year}")]
    NotInYear {
        /// The day as understood.
        what: String,
        /// The year searched.
        year: i32,
    },
    /// The compiled-in calendar data is malformed; a build defect, caught by the unit tests.
    #[error("calendar data, line {line}: {reason}")]
    InvalidData {
        /// Line of the data file.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A calendar id that is not one of [`calendar_ids`].
    #[error("unknown calendar `{id}`; the calendars are {}", calendar_ids().collect::<Vec<_>>().join(", "))]
    UnknownCalendar {
        /// The id asked for.
        id: String,
    },
    /// A date that does not exist, such as `February 30` or `2026-13-01`.
    #[error("\"{text}\" is not a valid calendar date")]
    InvalidDate {
        /// The offending part of the text.
        text: String,
    },
}
