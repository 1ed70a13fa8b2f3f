//! The Proper of Time: Easter, the movable dates, seasons, weeks, cycles, and the celebration
//! each date has before the saints are considered.

use chrono::{Datelike, Days, NaiveDate, Weekday};

use super::{CalendarOptions, Color, Rank, Season, SundayCycle, WeekdayCycle};

/// Easter Sunday by the anonymous Gregorian algorithm (Meeus/Jones/Butcher).
pub(crate) fn easter(year: i32) -> Option<NaiveDate> {
    let a = year.rem_euclid(19);
    let b = year.div_euclid(100);
    let c = year.rem_euclid(100);
    let d = b / 4;
    let e = b % 4;
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let i = c / 4;
    let k = c % 4;
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    NaiveDate::from_ymd_opt(year, u32::try_from(month).ok()?, u32::try_from(day).ok()?)
}

/// The movable dates of one civil year (the Christmas-season dates are those of its January and
/// its December).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyDates {
    pub(crate) year: i32,
    pub(crate) epiphany: NaiveDate,
    pub(crate) baptism: NaiveDate,
    pub(crate) ash_wednesday: NaiveDate,
    pub(crate) palm_sunday: NaiveDate,
    pub(crate) holy_thursday: NaiveDate,
    pub(crate) holy_saturday: NaiveDate,
    pub(crate) easter: NaiveDate,
    pub(crate) ascension: NaiveDate,
    pub(crate) pentecost: NaiveDate,
    pub(crate) trinity: NaiveDate,
    pub(crate) corpus_christi: NaiveDate,
    pub(crate) sacred_heart: NaiveDate,
    pub(crate) christ_the_king: NaiveDate,
    pub(crate) advent_1: NaiveDate,
    pub(crate) holy_family: NaiveDate,
}

impl KeyDates {
    /// The dates of `year`; `None` only outside `chrono`'s range.
    pub(crate) fn new(year: i32, options: CalendarOptions) -> Option<Self> {
        let easter = easter(year)?;
        let after = |days: u64| easter.checked_add_days(Days::new(days));
        let before = |days: u64| easter.checked_sub_days(Days::new(days));

        let epiphany = if options.epiphany_on_sunday {
            sunday_on_or_after(NaiveDate::from_ymd_opt(year, 1, 2)?)?
        } else {
            NaiveDate::from_ymd_opt(year, 1, 6)?
        };
        let baptism = if options.epiphany_on_sunday && epiphany.day() >= 7 {
            epiphany.succ_opt()?
        } else {
            sunday_on_or_after(epiphany.succ_opt()?)?
        };
        let christmas = NaiveDate::from_ymd_opt(year, 12, 25)?;
        let advent_1 = christmas.checked_sub_days(Days::new(
            u64::from(christmas.weekday().num_days_from_sunday()) + 21,
        ))?;
        let advent_1 = if christmas.weekday() == Weekday::Sun {
            advent_1.checked_sub_days(Days::new(7))?
        } else {
            advent_1
        };
        let holy_family = match sunday_on_or_after(NaiveDate::from_ymd_opt(year, 12, 26)?)? {
            sunday if sunday.year() == year => sunday,
            _ => NaiveDate::from_ymd_opt(year, 12, 30)?,
        };
        Some(KeyDates {
            year,
            epiphany,
            baptism,
            ash_wednesday: before(46)?,
            palm_sunday: before(7)?,
            holy_thursday: before(3)?,
            holy_saturday: before(1)?,
            easter,
            ascension: after(if options.ascension_on_sunday { 42 } else { 39 })?,
            pentecost: after(49)?,
            trinity: after(56)?,
            corpus_christi: after(if options.corpus_christi_on_sunday {
                63
            } else {
                60
            })?,
            sacred_heart: after(68)?,
            christ_the_king: advent_1.checked_sub_days(Days::new(7))?,
            advent_1,
            holy_family,
        })
    }
}

/// The first Sunday on or after `date`.
pub(crate) fn sunday_on_or_after(date: NaiveDate) -> Option<NaiveDate> {
    let offset = (7 - date.weekday().num_days_from_sunday()) % 7;
    date.checked_add_days(Days::new(u64::from(offset)))
}

/// December 25 of `year` (the first day after Advent).
fn christmas_of(year: i32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, 12, 25).unwrap_or(NaiveDate::MAX)
}

/// The last Sunday on or before `date`.
fn sunday_on_or_before(date: NaiveDate) -> NaiveDate {
    date.checked_sub_days(Days::new(u64::from(date.weekday().num_days_from_sunday())))
        .unwrap_or(date)
}

/// Whole weeks from `from` to `to` (both Sundays, `to` later).
fn weeks_between(from: NaiveDate, to: NaiveDate) -> u8 {
    u8::try_from((to - from).num_days().div_euclid(7)).unwrap_or(u8::MAX)
}

/// A date as the Proper of Time has it, before the saints are considered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TemporalDay {
    pub(crate) id: String,
    /// The celebration's id when it differs from `id` (the Sunday of the Word of God).
    pub(crate) celebration_id: Option<&'static str>,
    pub(crate) name: String,
    pub(crate) rank: Rank,
    pub(crate) precedence: u8,
    pub(crate) color: Color,
    pub(crate) season: Season,
    pub(crate) week: Option<u8>,
    pub(crate) sunday_cycle: SundayCycle,
    pub(crate) weekday_cycle: WeekdayCycle,
}

struct Entry {
    id: String,
    name: String,
    rank: Rank,
    precedence: u8,
    color: Color,
}

fn entry(
    id: impl Into<String>,
    name: impl Into<String>,
    rank: Rank,
    precedence: u8,
    color: Color,
) -> Entry {
    Entry {
        id: id.into(),
        name: name.into(),
        rank,
        precedence,
        color,
    }
}

/// The Proper of Time of `date`, which must lie in `dates.year`.
pub(crate) fn temporal_day(date: NaiveDate, dates: &KeyDates) -> TemporalDay {
    let weekday = date.weekday();
    let is_sunday = weekday == Weekday::Sun;
    let sunday = sunday_on_or_before(date);
    let liturgical_year = if date >= dates.advent_1 {
        dates.year + 1
    } else {
        dates.year
    };
    let sunday_cycle = match liturgical_year.rem_euclid(3) {
        1 => SundayCycle::A,
        2 => SundayCycle::B,
        _ => SundayCycle::C,
    };
    let weekday_cycle = if liturgical_year.rem_euclid(2) == 1 {
        WeekdayCycle::I
    } else {
        WeekdayCycle::II
    };
    let mut celebration_id = None;

    let (season, week, day) = if date >= dates.advent_1 && date < christmas_of(dates.year) {
        let week = weeks_between(dates.advent_1, sunday) + 1;
        let day = if is_sunday {
            let color = if week == 3 {
                Color::Rose
            } else {
                Color::Violet
            };
            let name = format!("{} Sunday of Advent", ordinal(week));
            entry(
                format!("advent_{week}_sunday"),
                name,
                Rank::Sunday,
                2,
                color,
            )
        } else if date.month() == 12 && date.day() >= 17 {
            let id = format!("advent_december_{}", date.day());
            let name = format!(
                "{} {}, Weekday of Advent",
                weekday_name(weekday),
                month_day(date)
            );
            entry(id, name, Rank::Weekday, 9, Color::Violet)
        } else {
            let id = format!("advent_{week}_{}", weekday_id(weekday));
            let name = format!(
                "{} of the {} Week of Advent",
                weekday_name(weekday),
                ordinal(week)
            );
            entry(id, name, Rank::Weekday, 13, Color::Violet)
        };
        (Season::Advent, Some(week), day)
    } else if date.month() == 12 && date.day() >= 25 {
        let day = if date.day() == 25 {
            entry(
                "nativity_of_the_lord",
                "The Nativity of the Lord",
                Rank::Solemnity,
                2,
                Color::White,
            )
        } else if date == dates.holy_family {
            entry(
                "holy_family_of_jesus_mary_and_joseph",
                "The Holy Family of Jesus, Mary and Joseph",
                Rank::Feast,
                5,
                Color::White,
            )
        } else {
            let octave_day = u8::try_from(date.day() - 24).unwrap_or(u8::MAX);
            let id = format!("christmas_octave_day_{octave_day}");
            let name = format!(
                "{} Day within the Octave of the Nativity of the Lord",
                ordinal(octave_day)
            );
            entry(id, name, Rank::Weekday, 9, Color::White)
        };
        (Season::Christmas, None, day)
    } else if date <= dates.baptism {
        let day = if date.month() == 1 && date.day() == 1 {
            entry(
                "mary_mother_of_god",
                "Solemnity of Mary, the Holy Mother of God",
                Rank::Solemnity,
                3,
                Color::White,
            )
        } else if date == dates.epiphany {
            entry(
                "epiphany_of_the_lord",
                "The Epiphany of the Lord",
                Rank::Solemnity,
                2,
                Color::White,
            )
        } else if date == dates.baptism {
            entry(
                "baptism_of_the_lord",
                "The Baptism of the Lord",
                Rank::Feast,
                5,
                Color::White,
            )
        } else if date < dates.epiphany {
            if is_sunday {
                entry(
                    "second_sunday_after_christmas",
                    "Second Sunday after the Nativity",
                    Rank::Sunday,
                    6,
                    Color::White,
                )
            } else {
                let id = format!("christmas_time_january_{}", date.day());
                let name = format!(
                    "{} {}, Weekday of Christmas Time",
                    weekday_name(weekday),
                    month_day(date)
                );
                entry(id, name, Rank::Weekday, 13, Color::White)
            }
        } else {
            let id = format!("{}_after_epiphany", weekday_id(weekday));
            let name = format!("{} after the Epiphany", weekday_name(weekday));
            entry(id, name, Rank::Weekday, 13, Color::White)
        };
        (Season::Christmas, None, day)
    } else if date < dates.ash_wednesday {
        let week = weeks_between(sunday_on_or_before(dates.baptism), sunday) + 1;
        if week == 3 && is_sunday && dates.year >= 2020 {
            celebration_id = Some("sunday_of_the_word_of_god");
        }
        (
            Season::OrdinaryTime,
            Some(week),
            ordinary_time(week, weekday),
        )
    } else if date < dates.holy_thursday {
        let first_sunday = dates.ash_wednesday + Days::new(4);
        if date < first_sunday {
            let day = if date == dates.ash_wednesday {
                entry(
                    "ash_wednesday",
                    "Ash Wednesday",
                    Rank::Weekday,
                    2,
                    Color::Violet,
                )
            } else {
                let id = format!("{}_after_ash_wednesday", weekday_id(weekday));
                let name = format!("{} after Ash Wednesday", weekday_name(weekday));
                entry(id, name, Rank::Weekday, 9, Color::Violet)
            };
            (Season::Lent, Some(0), day)
        } else {
            let week = weeks_between(first_sunday, sunday) + 1;
            let day = if week >= 6 {
                if is_sunday {
                    entry(
                        "palm_sunday_of_the_passion_of_the_lord",
                        "Palm Sunday of the Passion of the Lord",
                        Rank::Sunday,
                        2,
                        Color::Red,
                    )
                } else {
                    let id = format!("holy_{}", weekday_id(weekday));
                    let name = format!("{} of Holy Week", weekday_name(weekday));
                    entry(id, name, Rank::Weekday, 2, Color::Violet)
                }
            } else if is_sunday {
                let color = if week == 4 {
                    Color::Rose
                } else {
                    Color::Violet
                };
                let name = format!("{} Sunday of Lent", ordinal(week));
                entry(format!("lent_{week}_sunday"), name, Rank::Sunday, 2, color)
            } else {
                let id = format!("lent_{week}_{}", weekday_id(weekday));
                let name = format!(
                    "{} of the {} Week of Lent",
                    weekday_name(weekday),
                    ordinal(week)
                );
                entry(id, name, Rank::Weekday, 9, Color::Violet)
            };
            (Season::Lent, Some(week), day)
        }
    } else if date <= dates.holy_saturday {
        let day = if date == dates.holy_thursday {
            entry(
                "thursday_of_the_lords_supper",
                "Thursday of the Lord's Supper (Holy Thursday)",
                Rank::Weekday,
                1,
                Color::White,
            )
        } else if date == dates.holy_saturday {
            entry(
                "holy_saturday",
                "Holy Saturday",
                Rank::Weekday,
                1,
                Color::Violet,
            )
        } else {
            entry(
                "friday_of_the_passion_of_the_lord",
                "Friday of the Passion of the Lord (Good Friday)",
                Rank::Weekday,
                1,
                Color::Red,
            )
        };
        (Season::PaschalTriduum, None, day)
    } else if date <= dates.pentecost {
        let week = weeks_between(dates.easter, sunday) + 1;
        let day = if date == dates.easter {
            entry(
                "easter_sunday",
                "Easter Sunday of the Resurrection of the Lord",
                Rank::Solemnity,
                1,
                Color::White,
            )
        } else if date == dates.pentecost {
            entry(
                "pentecost_sunday",
                "Pentecost Sunday",
                Rank::Solemnity,
                2,
                Color::Red,
            )
        } else if date == dates.ascension {
            entry(
                "ascension_of_the_lord",
                "The Ascension of the Lord",
                Rank::Solemnity,
                2,
                Color::White,
            )
        } else if week == 1 {
            let id = format!("easter_{}", weekday_id(weekday));
            let name = format!("{} within the Octave of Easter", weekday_name(weekday));
            entry(id, name, Rank::Solemnity, 2, Color::White)
        } else if is_sunday && week == 2 {
            entry(
                "divine_mercy_sunday",
                "Second Sunday of Easter (Sunday of Divine Mercy)",
                Rank::Sunday,
                2,
                Color::White,
            )
        } else if is_sunday {
            let name = format!("{} Sunday of Easter", ordinal(week));
            entry(
                format!("easter_time_{week}_sunday"),
                name,
                Rank::Sunday,
                2,
                Color::White,
            )
        } else {
            let id = format!("easter_time_{week}_{}", weekday_id(weekday));
            let name = format!(
                "{} of the {} Week of Easter",
                weekday_name(weekday),
                ordinal(week)
            );
            entry(id, name, Rank::Weekday, 13, Color::White)
        };
        (Season::Easter, Some(week), day)
    } else {
        let weeks_to_king = weeks_between(sunday, dates.christ_the_king);
        let week = 34u8.saturating_sub(weeks_to_king);
        let day = if date == dates.trinity {
            entry(
                "most_holy_trinity",
                "The Most Holy Trinity",
                Rank::Solemnity,
                3,
                Color::White,
            )
        } else if date == dates.corpus_christi {
            entry(
                "most_holy_body_and_blood_of_christ",
                "The Most Holy Body and Blood of Christ (Corpus Christi)",
                Rank::Solemnity,
                3,
                Color::White,
            )
        } else if date == dates.sacred_heart {
            entry(
                "most_sacred_heart_of_jesus",
                "The Most Sacred Heart of Jesus",
                Rank::Solemnity,
                3,
                Color::White,
            )
        } else if date == dates.christ_the_king {
            entry(
                "our_lord_jesus_christ_king_of_the_universe",
                "Our Lord Jesus Christ, King of the Universe",
                Rank::Solemnity,
                3,
                Color::White,
            )
        } else {
            ordinary_time(week, weekday)
        };
        (Season::OrdinaryTime, Some(week), day)
    };

    TemporalDay {
        id: day.id,
        celebration_id,
        name: if celebration_id.is_some() {
            format!("{} (Sunday of the Word of God)", day.name)
        } else {
            day.name
        },
        rank: day.rank,
        precedence: day.precedence,
        color: day.color,
        season,
        week,
        sunday_cycle,
        weekday_cycle,
    }
}

fn ordinary_time(week: u8, weekday: Weekday) -> Entry {
    if weekday == Weekday::Sun {
        let name = format!("{} Sunday in Ordinary Time", ordinal(week));
        entry(
            format!("ordinary_time_{week}_sunday"),
            name,
            Rank::Sunday,
            6,
            Color::Green,
        )
    } else {
        let id = format!("ordinary_time_{week}_{}", weekday_id(weekday));
        let name = format!(
            "{} of the {} Week in Ordinary Time",
            weekday_name(weekday),
            ordinal(week)
        );
        entry(id, name, Rank::Weekday, 13, Color::Green)
    }
}

/// `monday`, `tuesday`…, as used in the ids.
pub(crate) fn weekday_id(weekday: Weekday) -> &'static str {
    match weekday {
        Weekday::Mon => "monday",
        Weekday::Tue => "tuesday",
        Weekday::Wed => "wednesday",
        Weekday::Thu => "thursday",
        Weekday::Fri => "friday",
        Weekday::Sat => "saturday",
        Weekday::Sun => "sunday",
    }
}

/// `Monday`, `Tuesday`…, as used in the names.
pub(crate) fn weekday_name(weekday: Weekday) -> &'static str {
    match weekday {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}

/// `December 17`.
fn month_day(date: NaiveDate) -> String {
    format!("{} {}", MONTH_NAMES[date.month0() as usize], date.day())
}

/// English month names, January first.
pub(crate) const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// English ordinal words, "First" to "Thirty-fourth"; the longest count the calendar needs.
pub(crate) const ORDINALS: [&str; 34] = [
    "First",
    "Second",
    "Third",
    "Fourth",
    "Fifth",
    "Sixth",
    "Seventh",
    "Eighth",
    "Ninth",
    "Tenth",
    "Eleventh",
    "Twelfth",
    "Thirteenth",
    "Fourteenth",
    "Fifteenth",
    "Sixteenth",
    "Seventeenth",
    "Eighteenth",
    "Nineteenth",
    "Twentieth",
    "Twenty-first",
    "Twenty-second",
    "Twenty-third",
    "Twenty-fourth",
    "Twenty-fifth",
    "Twenty-sixth",
    "Twenty-seventh",
    "Twenty-eighth",
    "Twenty-ninth",
    "Thirtieth",
    "Thirty-first",
    "Thirty-second",
    "Thirty-third",
    "Thirty-fourth",
];

fn ordinal(number: u8) -> String {
    usize::from(number)
        .checked_sub(1)
        .and_then(|index| ORDINALS.get(index))
        .map_or_else(|| format!("{number}th"), |word| (*word).to_string())
}
