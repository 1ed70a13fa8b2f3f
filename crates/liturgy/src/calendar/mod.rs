//! The General Roman Calendar: which celebration a date has, and why.
//!
//! A civil year is computed in one pass (Proper of Time, then the Proper of Saints, then the
//! transfers and the order of precedence of the General Norms) and kept in a small cache, so
//! asking for many dates of one year costs one computation.

mod proper;
mod resolve;
mod sanctorale;
pub(crate) mod temporale;

pub use proper::{GENERAL_ROMAN, calendar_ids};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{Datelike, NaiveDate};
use serde::{Deserialize, Serialize};

use crate::{FIRST_YEAR, LAST_YEAR, LiturgyError};

pub(crate) use temporale::KeyDates;

/// How many computed years a [`Calendar`] keeps; enough for a service answering about the
/// present, the past year and the next few, small enough to stay a few megabytes.
const CACHED_YEARS: usize = 16;

/// The options a bishops' conference may choose for its territory. All three are false in the
/// General Roman Calendar itself; the United States, for example, sets all three.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct CalendarOptions {
    /// Keep Epiphany on the Sunday between January 2 and 8 instead of January 6.
    pub epiphany_on_sunday: bool,
    /// Keep the Ascension on the Seventh Sunday of Easter instead of the Thursday before.
    pub ascension_on_sunday: bool,
    /// Keep Corpus Christi on the Sunday after Trinity instead of the Thursday before.
    pub corpus_christi_on_sunday: bool,
}

/// The rank of a celebration as printed in the calendar; the exact place in the order of
/// precedence is [`Celebration::precedence`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rank {
    /// The highest rank: begins with First Vespers, has a Creed and a Gloria.
    Solemnity,
    /// A feast, kept within the natural day (feasts of the Lord may replace a Sunday).
    Feast,
    /// An obligatory memorial.
    Memorial,
    /// A memorial the celebrant may keep or not.
    OptionalMemorial,
    /// A memorial falling on a privileged weekday: it may only be commemorated.
    Commemoration,
    /// A Sunday of the Proper of Time.
    Sunday,
    /// A weekday of the Proper of Time.
    Weekday,
}

impl Rank {
    /// The lowercase wire name, e.g. `optional_memorial`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rank::Solemnity => "solemnity",
            Rank::Feast => "feast",
            Rank::Memorial => "memorial",
            Rank::OptionalMemorial => "optional_memorial",
            Rank::Commemoration => "commemoration",
            Rank::Sunday => "sunday",
            Rank::Weekday => "weekday",
        }
    }
}

/// The liturgical colour of the day's Mass. One vocabulary of lowercase English words; violet
/// (not purple) as in the General Instruction of the Roman Missal, n. 346.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Color {
    /// Feasts of the Lord (other than of his Passion), of Mary, of saints who were not martyrs.
    White,
    /// The Passion, Pentecost, apostles and martyrs.
    Red,
    /// Ordinary Time.
    Green,
    /// Advent, Lent, and Masses for the dead.
    Violet,
    /// Gaudete and Laetare Sundays, where it is the custom.
    Rose,
    /// Masses for the dead, where it is the custom.
    Black,
}

impl Color {
    /// The lowercase wire name, e.g. `violet`.
    pub fn as_str(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Red => "red",
            Color::Green => "green",
            Color::Violet => "violet",
            Color::Rose => "rose",
            Color::Black => "black",
        }
    }
}

/// The season of the liturgical year a date belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Season {
    /// From First Vespers of the First Sunday of Advent to December 24.
    Advent,
    /// From the Nativity to the Baptism of the Lord.
    Christmas,
    /// From Ash Wednesday to Wednesday of Holy Week.
    Lent,
    /// Holy Thursday (Mass of the Lord's Supper), Good Friday and Holy Saturday.
    PaschalTriduum,
    /// From Easter Sunday to Pentecost.
    Easter,
    /// The rest of the year.
    OrdinaryTime,
}

impl Season {
    /// The lowercase wire name, e.g. `ordinary_time`.
    pub fn as_str(self) -> &'static str {
        match self {
            Season::Advent => "advent",
            Season::Christmas => "christmas",
            Season::Lent => "lent",
            Season::PaschalTriduum => "paschal_triduum",
            Season::Easter => "easter",
            Season::OrdinaryTime => "ordinary_time",
        }
    }
}

/// The three-year cycle of Sunday readings; it changes on the First Sunday of Advent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SundayCycle {
    /// Year A (Matthew): liturgical years divisible by three, plus one.
    A,
    /// Year B (Mark).
    B,
    /// Year C (Luke).
    C,
}

impl SundayCycle {
    /// `"A"`, `"B"` or `"C"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SundayCycle::A => "A",
            SundayCycle::B => "B",
            SundayCycle::C => "C",
        }
    }
}

/// The two-year cycle of weekday first readings in Ordinary Time; it changes with Advent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WeekdayCycle {
    /// Year I: odd liturgical years.
    I,
    /// Year II: even liturgical years.
    II,
}

impl WeekdayCycle {
    /// `"I"` or `"II"`.
    pub fn as_str(self) -> &'static str {
        match self {
            WeekdayCycle::I => "I",
            WeekdayCycle::II => "II",
        }
    }
}

/// One celebration: of the Proper of Time or of the Proper of Saints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Celebration {
    /// Stable identifier shared with other calendar software (romcal's spelling), e.g.
    /// `advent_2_tuesday` or `thomas_aquinas_priest`.
    pub id: String,
    /// English title.
    pub name: String,
    /// Rank as printed in the calendar.
    pub rank: Rank,
    /// Level in the Table of Liturgical Days (General Norms n. 59): 1 is the Paschal Triduum,
    /// 13 an ordinary weekday. Lower wins.
    pub precedence: u8,
    /// Liturgical colour.
    pub color: Color,
}

/// What became of one entry of the Proper of Saints on a given date.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SanctoraleStatus {
    /// The entry, with the rank it has that day (e.g. `commemoration` in Lent).
    pub celebration: Celebration,
    /// Whether it is kept on this date (as the day's celebration or as an option).
    pub celebrated: bool,
    /// Why it is not kept, or kept differently, e.g. "transferred to 2024-12-09".
    pub reason: Option<String>,
}

/// Everything the calendar says about one civil date.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LiturgicalDay {
    /// The civil date.
    pub date: NaiveDate,
    /// The celebration of the day after the order of precedence has been applied.
    pub celebration: Celebration,
    /// Celebrations that may be kept instead: optional memorials and commemorations.
    pub optional_memorials: Vec<Celebration>,
    /// The season.
    pub season: Season,
    /// The week of the season (Advent 1–4, Lent 0–6 with 0 for Ash Wednesday to the Saturday
    /// after, Easter 1–8 with 8 for Pentecost, Ordinary Time 1–34); none in Christmas Time and
    /// the Triduum, where the lectionary does not count weeks.
    pub week: Option<u8>,
    /// Sunday cycle of the liturgical year the date belongs to.
    pub sunday_cycle: SundayCycle,
    /// Weekday cycle of the liturgical year the date belongs to.
    pub weekday_cycle: WeekdayCycle,
    /// The id of the date in the Proper of Time even when a saint outranks it (e.g.
    /// `advent_2_tuesday`), because the weekday readings follow it. Ordinary Time Sundays are
    /// always `ordinary_time_N_sunday`, including the Sunday of the Word of God.
    pub temporal_id: String,
    /// Every Proper of Saints entry of this civil date, and those transferred to or from it.
    pub sanctorale: Vec<SanctoraleStatus>,
}

/// The General Roman Calendar, or a territory's proper calendar, with the three options.
/// Cheap to share between threads.
#[derive(Debug)]
pub struct Calendar {
    id: &'static str,
    proper: &'static proper::ProperCalendar,
    options: CalendarOptions,
    cached_years: usize,
    years: Mutex<HashMap<i32, Arc<Vec<LiturgicalDay>>>>,
}

impl Calendar {
    /// The General Roman Calendar with these options; nothing is computed until a date is
    /// asked for.
    ///
    /// # Panics
    /// Only if the compiled-in Proper of Saints is malformed, a build defect the unit tests
    /// catch.
    pub fn new(options: CalendarOptions) -> Self {
        match Calendar::of(GENERAL_ROMAN, options) {
            Ok(calendar) => calendar,
            Err(error) => panic!("compiled-in calendar data: {error}"),
        }
    }

    /// The calendar with this id (one of [`calendar_ids`]) and these options.
    pub fn of(id: &str, options: CalendarOptions) -> Result<Self, LiturgyError> {
        let proper = proper::proper_calendar(id)
            .ok_or_else(|| LiturgyError::UnknownCalendar { id: id.to_string() })??;
        Ok(Calendar {
            id: proper.lineage[0],
            proper,
            options,
            cached_years: CACHED_YEARS,
            years: Mutex::new(HashMap::new()),
        })
    }

    /// The same calendar keeping at most `years` computed years (at least one), for a service
    /// that holds many calendars and must bound the memory they take together.
    pub fn with_cached_years(mut self, years: usize) -> Self {
        self.cached_years = years.max(1);
        self
    }

    /// The options a calendar's bishops' conference chose (all false for the General Roman
    /// Calendar and the wider regions).
    pub fn default_options(id: &str) -> Result<CalendarOptions, LiturgyError> {
        proper::proper_calendar(id)
            .ok_or_else(|| LiturgyError::UnknownCalendar { id: id.to_string() })?
            .map(|proper| proper.options)
    }

    /// The calendar's id, e.g. `general-roman` or `poland`.
    pub fn id(&self) -> &'static str {
        self.id
    }

    /// The calendars whose proper names this one's celebrations may carry, nearest first and
    /// ending with `general-roman`: e.g. `poland`, `europe`, `general-roman`.
    pub fn lineage(&self) -> &'static [&'static str] {
        &self.proper.lineage
    }

    /// The options this calendar was built with.
    pub fn options(&self) -> CalendarOptions {
        self.options
    }

    /// The liturgical day of a civil date in [`FIRST_YEAR`]..=[`LAST_YEAR`].
    pub fn day(&self, date: NaiveDate) -> Result<LiturgicalDay, LiturgyError> {
        let year = self.year(date.year())?;
        let index = date.ordinal0() as usize;
        year.get(index)
            .cloned()
            .ok_or(LiturgyError::YearOutOfRange { year: date.year() })
    }

    /// Every day of a civil year, January 1 first; computed once and cached.
    pub fn year(&self, year: i32) -> Result<Arc<Vec<LiturgicalDay>>, LiturgyError> {
        check_year(year)?;
        if let Some(days) = self.lock_years().get(&year) {
            return Ok(Arc::clone(days));
        }
        let days = Arc::new(resolve::compute_year(
            year,
            self.options,
            &self.proper.entries,
        )?);
        let mut years = self.lock_years();
        if years.len() >= self.cached_years {
            years.clear();
        }
        years.insert(year, Arc::clone(&days));
        Ok(days)
    }

    /// Easter Sunday of a year, by the Gregorian computus.
    pub fn easter(year: i32) -> Result<NaiveDate, LiturgyError> {
        check_year(year)?;
        temporale::easter(year).ok_or(LiturgyError::YearOutOfRange { year })
    }

    /// The movable dates of a civil year under this calendar's options.
    pub(crate) fn key_dates(&self, year: i32) -> Result<KeyDates, LiturgyError> {
        check_year(year)?;
        KeyDates::new(year, self.options).ok_or(LiturgyError::YearOutOfRange { year })
    }

    fn lock_years(&self) -> std::sync::MutexGuard<'_, HashMap<i32, Arc<Vec<LiturgicalDay>>>> {
        self.years
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Default for Calendar {
    fn default() -> Self {
        Calendar::new(CalendarOptions::default())
    }
}

fn check_year(year: i32) -> Result<(), LiturgyError> {
    if (FIRST_YEAR..=LAST_YEAR).contains(&year) {
        Ok(())
    } else {
        Err(LiturgyError::YearOutOfRange { year })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calendar_keeps_no_more_years_than_asked() {
        let calendar = Calendar::of("poland", CalendarOptions::default())
            .unwrap()
            .with_cached_years(2);
        for year in 2020..2030 {
            calendar.year(year).unwrap();
            assert!(calendar.lock_years().len() <= 2, "{year}");
        }
        let kept = Calendar::default();
        for year in 2020..2030 {
            kept.year(year).unwrap();
        }
        assert_eq!(kept.lock_years().len(), 10);
    }
}
