//! The Proper of Saints, read from `data/sanctorale.txt` (compiled into the crate) once.

use std::sync::OnceLock;

use chrono::{Days, NaiveDate};

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
    pub(crate) id: &'static str,
    pub(crate) rank: EntryRank,
    pub(crate) color: Color,
    pub(crate) since: i32,
    pub(crate) until: Option<i32>,
    pub(crate) name: &'static str,
}

impl SanctoraleEntry {
    /// Whether the entry is in the calendar of `year`.
    pub(crate) fn applies_in(&self, year: i32) -> bool {
        year >= self.since && self.until.is_none_or(|until| year <= until)
    }

    /// The date of the entry in the year of `dates`.
    pub(crate) fn date_in(&self, dates: &KeyDates) -> Option<NaiveDate> {
        match self.date {
            EntryDate::Fixed { month, day } => NaiveDate::from_ymd_opt(dates.year, month, day),
            EntryDate::MondayAfterPentecost => dates.pentecost.checked_add_days(Days::new(1)),
            EntryDate::SaturdayAfterSacredHeart => {
                dates.sacred_heart.checked_add_days(Days::new(1))
            }
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

fn parse(text: &'static str) -> Result<Vec<SanctoraleEntry>, LiturgyError> {
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
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
        let date = match date {
            "monday_after_pentecost" => EntryDate::MondayAfterPentecost,
            "saturday_after_sacred_heart" => EntryDate::SaturdayAfterSacredHeart,
            fixed => {
                let (month, day) = fixed
                    .split_once('-')
                    .and_then(|(m, d)| Some((m.parse().ok()?, d.parse().ok()?)))
                    .ok_or_else(|| invalid("the date is neither MM-DD nor a known movable rule"))?;
                if NaiveDate::from_ymd_opt(2000, month, day).is_none() {
                    return Err(invalid("no such month and day"));
                }
                EntryDate::Fixed { month, day }
            }
        };
        let rank = match rank {
            "solemnity" => EntryRank::Solemnity,
            "feast_of_the_lord" => EntryRank::FeastOfTheLord,
            "feast" => EntryRank::Feast,
            "memorial" => EntryRank::Memorial,
            "optional_memorial" => EntryRank::OptionalMemorial,
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
            id,
            rank,
            color,
            since,
            until,
            name,
        });
    }
    Ok(entries)
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
