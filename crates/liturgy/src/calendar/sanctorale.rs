//! The Proper of Saints, read from `data/sanctorale.txt` (compiled into the crate) once, and the
//! line format the proper calendars of `data/calendars/` share with it.

use std::sync::OnceLock;

use chrono::{Datelike, Days, NaiveDate, Weekday};

use super::Color;
use super::Rank;
use super::temporale::KeyDates;
use crate::LiturgyError;

/// The data file; its header documents the format.
const SANCTORALE: &str = include_str!("../../data/sanctorale.txt");

/// Where an entry falls in a year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryDate {
    /// A fixed civil date.
    Fixed { month: u32, day: u32 },
    /// The Monday after Pentecost (Mary, Mother of the Church).
    MondayAfterPentecost,
    /// The Saturday after the Sacred Heart (the Immaculate Heart of Mary).
    SaturdayAfterSacredHeart,
    /// So many days after Easter Sunday (`easter+53`: the Thursday after Pentecost).
    AfterEaster(u16),
    /// The `nth` given weekday of a month (`10-mon-2`: the second Monday of October).
    NthWeekday {
        month: u32,
        weekday: Weekday,
        nth: u8,
    },
}

/// A shift a conference applies to a date falling on a given weekday (`/sat+1`: from a
/// Saturday to the Sunday after).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WeekdayShift {
    pub(crate) weekday: Weekday,
    pub(crate) days: i8,
}

/// The rank an entry has in the data file. Feasts of the Lord are kept apart from other feasts
/// because they outrank the Sundays of Ordinary Time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryRank {
    Solemnity,
    FeastOfTheLord,
    Feast,
    Memorial,
    OptionalMemorial,
}

impl EntryRank {
    /// Level in the Table of Liturgical Days (General Norms n. 59).
    pub(crate) fn precedence(self) -> u8 {
        match self {
            EntryRank::Solemnity => 3,
            EntryRank::FeastOfTheLord => 5,
            EntryRank::Feast => 7,
            EntryRank::Memorial => 10,
            EntryRank::OptionalMemorial => 12,
        }
    }

    /// The rank printed in the calendar.
    pub(crate) fn rank(self) -> Rank {
        match self {
            EntryRank::Solemnity => Rank::Solemnity,
            EntryRank::FeastOfTheLord | EntryRank::Feast => Rank::Feast,
            EntryRank::Memorial => Rank::Memorial,
            EntryRank::OptionalMemorial => Rank::OptionalMemorial,
        }
    }
}

/// One line of the data file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SanctoraleEntry {
    pub(crate) date: EntryDate,
    /// Moves by weekday applied after the date rule (England and Wales).
    pub(crate) shifts: Vec<WeekdayShift>,
    pub(crate) id: &'static str,
    pub(crate) rank: EntryRank,
    /// A celebration proper to a territory: one level lower in the Table of Liturgical Days
    /// than the same rank in the General Calendar (solemnity 4, feast 8, memorial 11).
    pub(crate) proper: bool,
    pub(crate) color: Color,
    pub(crate) since: i32,
    pub(crate) until: Option<i32>,
    pub(crate) name: &'static str,
    /// The calendar whose data file has the line (`general-roman`, `europe`, `poland`…).
    pub(crate) source: &'static str,
}

impl SanctoraleEntry {
    /// Whether the entry is in the calendar of `year`.
    pub(crate) fn applies_in(&self, year: i32) -> bool {
        year >= self.since && self.until.is_none_or(|until| year <= until)
    }

    /// Level in the Table of Liturgical Days (General Norms n. 59).
    pub(crate) fn precedence(&self) -> u8 {
        let level = self.rank.precedence();
        match self.rank {
            EntryRank::Solemnity | EntryRank::Feast | EntryRank::Memorial if self.proper => {
                level + 1
            }
            _ => level,
        }
    }

    /// The date of the entry in the year of `dates`.
    pub(crate) fn date_in(&self, dates: &KeyDates) -> Option<NaiveDate> {
        let date = match self.date {
            EntryDate::Fixed { month, day } => NaiveDate::from_ymd_opt(dates.year, month, day),
            EntryDate::MondayAfterPentecost => dates.pentecost.checked_add_days(Days::new(1)),
            EntryDate::SaturdayAfterSacredHeart => {
                dates.sacred_heart.checked_add_days(Days::new(1))
            }
            EntryDate::AfterEaster(days) => {
                dates.easter.checked_add_days(Days::new(u64::from(days)))
            }
            EntryDate::NthWeekday {
                month,
                weekday,
                nth,
            } => NaiveDate::from_weekday_of_month_opt(dates.year, month, weekday, nth),
        }?;
        match self
            .shifts
            .iter()
            .find(|shift| shift.weekday == date.weekday())
        {
            Some(shift) if shift.days >= 0 => {
                date.checked_add_days(Days::new(shift.days.unsigned_abs().into()))
            }
            Some(shift) => date.checked_sub_days(Days::new(shift.days.unsigned_abs().into())),
            None => Some(date),
        }
    }
}

/// Every entry of the data file, parsed on first use.
pub(crate) fn entries() -> Result<&'static [SanctoraleEntry], LiturgyError> {
    static PARSED: OnceLock<Result<Vec<SanctoraleEntry>, LiturgyError>> = OnceLock::new();
    PARSED
        .get_or_init(|| parse(SANCTORALE))
        .as_deref()
        .map_err(Clone::clone)
}

/// The entries of a calendar data file; lines starting with `@` are left to the caller.
pub(crate) fn parse(text: &'static str) -> Result<Vec<SanctoraleEntry>, LiturgyError> {
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('@') {
            continue;
        }
        let invalid = |reason: &str| LiturgyError::InvalidData {
            line: index + 1,
            reason: reason.to_string(),
        };
        let fields: Vec<&'static str> = line.split('|').map(str::trim).collect();
        let [date, id, rank, color, years, name] = fields[..] else {
            return Err(invalid("expected six fields separated by `|`"));
        };
        let mut rules = date.split('/');
        let date = parse_date(rules.next().unwrap_or_default()).map_err(invalid)?;
        let shifts = rules
            .map(parse_shift)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid("a weekday shift reads like `/sat+1` or `/mon-1`"))?;
        let (proper, rank) = match rank.strip_prefix("proper_") {
            Some(rank) => (true, rank),
            None => (false, rank),
        };
        let rank = match rank {
            "solemnity" => EntryRank::Solemnity,
            "feast_of_the_lord" if !proper => EntryRank::FeastOfTheLord,
            "feast" => EntryRank::Feast,
            "memorial" => EntryRank::Memorial,
            "optional_memorial" if !proper => EntryRank::OptionalMemorial,
            _ => return Err(invalid("unknown rank")),
        };
        let color = match color {
            "white" => Color::White,
            "red" => Color::Red,
            "green" => Color::Green,
            "violet" => Color::Violet,
            "rose" => Color::Rose,
            "black" => Color::Black,
            _ => return Err(invalid("unknown colour")),
        };
        let (since, until) = years
            .split_once('-')
            .ok_or_else(|| invalid("the years must read `1970-` or `1970-2020`"))?;
        let since = since.parse().map_err(|_| invalid("bad first year"))?;
        let until = match until {
            "" => None,
            last => Some(last.parse().map_err(|_| invalid("bad last year"))?),
        };
        if id.is_empty() || name.is_empty() {
            return Err(invalid("empty id or name"));
        }
        entries.push(SanctoraleEntry {
            date,
            shifts,
            id,
            rank,
            proper,
            color,
            since,
            until,
            name,
            source: super::proper::GENERAL_ROMAN,
        });
    }
    Ok(entries)
}

/// A date rule: `MM-DD`, `easter+N`, `MM-www-N`, or a named movable rule.
fn parse_date(text: &str) -> Result<EntryDate, &'static str> {
    const UNKNOWN: &str = "the date is neither MM-DD, easter+N, MM-www-N nor a known movable rule";
    match text {
        "monday_after_pentecost" => return Ok(EntryDate::MondayAfterPentecost),
        "saturday_after_sacred_heart" => return Ok(EntryDate::SaturdayAfterSacredHeart),
        _ => {}
    }
    if let Some(days) = text.strip_prefix("easter+") {
        return days
            .parse()
            .map(EntryDate::AfterEaster)
            .map_err(|_| UNKNOWN);
    }
    let parts: Vec<&str> = text.split('-').collect();
    match parts[..] {
        [month, day] => {
            let (month, day) = (
                month.parse().map_err(|_| UNKNOWN)?,
                day.parse().map_err(|_| UNKNOWN)?,
            );
            if NaiveDate::from_ymd_opt(2000, month, day).is_none() {
                return Err("no such month and day");
            }
            Ok(EntryDate::Fixed { month, day })
        }
        [month, weekday, nth] => {
            let month = month
                .parse()
                .ok()
                .filter(|m| (1..=12).contains(m))
                .ok_or(UNKNOWN)?;
            let weekday = weekday.parse().map_err(|_| UNKNOWN)?;
            let nth = nth
                .parse()
                .ok()
                .filter(|n| (1..=5).contains(n))
                .ok_or(UNKNOWN)?;
            Ok(EntryDate::NthWeekday {
                month,
                weekday,
                nth,
            })
        }
        _ => Err(UNKNOWN),
    }
}

/// `sat+1`, `mon-1`.
fn parse_shift(text: &str) -> Option<WeekdayShift> {
    let at = text.find(['+', '-'])?;
    let weekday = text[..at].parse().ok()?;
    let days: i8 = text[at..].trim_start_matches('+').parse().ok()?;
    (days != 0 && days.abs() < 7).then_some(WeekdayShift { weekday, days })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_file_parses_and_covers_the_whole_year() {
        let entries = entries().unwrap();
        assert!(entries.len() > 200, "only {} entries", entries.len());
        let current: Vec<_> = entries.iter().filter(|e| e.applies_in(2026)).collect();
        let solemnities = current
            .iter()
            .filter(|e| e.rank == EntryRank::Solemnity)
            .count();
        // Joseph, Annunciation, John the Baptist, Peter and Paul, Assumption, All Saints,
        // All Souls (kept with the solemnities), Immaculate Conception.
        assert_eq!(solemnities, 8);
        for month in 1..=12 {
            assert!(
                current
                    .iter()
                    .any(|e| matches!(e.date, EntryDate::Fixed { month: m, .. } if m == month)),
                "no entry in month {month}"
            );
        }
    }

    #[test]
    fn one_id_never_appears_twice_in_a_year() {
        let entries = entries().unwrap();
        for year in [1970, 2001, 2002, 2015, 2016, 2020, 2021, 2026] {
            let mut ids: Vec<_> = entries
                .iter()
                .filter(|e| e.applies_in(year))
                .map(|e| e.id)
                .collect();
            let count = ids.len();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), count, "duplicate id in {year}");
        }
    }

    #[test]
    fn bad_lines_are_refused_with_their_line_number() {
        let error = parse("# header\n01-32|x|memorial|white|1970-|X\n").unwrap_err();
        assert_eq!(
            error,
            LiturgyError::InvalidData {
                line: 2,
                reason: "no such month and day".into()
            }
        );
        assert!(parse("01-02|x|memorial|white|1970|X\n").is_err());
        assert!(parse("01-02|x|great|white|1970-|X\n").is_err());
        assert!(parse("01-02|x|memorial|white|1970-\n").is_err());
    }
}
