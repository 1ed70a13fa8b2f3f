//! Reading a date out of what people type: "next Sunday", "Easter 2026", "8 December",
//! "the third Sunday of Advent", "2026-12-08".
//!
//! Conventions, chosen so that an answer never surprises:
//! - A weekday name alone, or with "this" or "coming", is the next such day, **today included**;
//!   "next Friday" is the first Friday **after** today; "Friday after next" the one a week
//!   later; "last Friday" the latest before today.
//! - An occasion or a month and day without a year ("Christmas", "Pentecost", "December 8",
//!   "the third Sunday of Advent") is this year's when it has not passed yet (today included),
//!   otherwise next year's.
//! - Occasions that fall on fixed dates ("Immaculate Conception", "St Joseph") give their civil
//!   date; the calendar itself says whether the celebration was transferred that year.
//! - Numeric dates must be ISO (`2026-12-08`, or `2026/12/08`): `12/08/2026` means August 12 in
//!   some countries and December 8 in others, so it is refused with a hint.
//! - Surrounding words are ignored and case does not matter.
//! - The same forms are understood in Latin, Portuguese, Polish, French, Dutch, German, Spanish
//!   and Italian ("Wielkanoc 2027", "dimanche prochain", "3 maja", "morgen"): their words are
//!   read as the English ones first.

use chrono::{Datelike, Days, NaiveDate, Weekday};

use crate::calendar::temporale::ORDINALS;
use crate::calendar::{Calendar, KeyDates};
use crate::{FIRST_YEAR, LAST_YEAR, LiturgyError};

/// What the parser understands, with examples; the tail of every "could not find a date" error.
pub const ACCEPTED_FORMS: &str = "Write a date such as 2026-12-08, 8 December 2026 or December 8; \
a day such as today, tomorrow, yesterday, Friday or next Sunday; or an occasion such as \
Christmas, Easter 2026, Ash Wednesday 2027, Pentecost, Corpus Christi, All Saints or the third \
Sunday of Advent. The same in la, pt, pl, fr, nl, de, es and it (e.g. Pâques 2027, nächsten \
Sonntag, 3 maja).";

/// The date a request is about. `today` is the caller's notion of today (in its time zone);
/// `calendar` supplies the movable dates under its options (e.g. Epiphany on a Sunday).
pub fn parse_date_query(
    text: &str,
    today: NaiveDate,
    calendar: &Calendar,
) -> Result<NaiveDate, LiturgyError> {
    let tokens = crate::date_words::to_english(&tokenize(text));
    let unrecognized = || LiturgyError::UnrecognizedDate {
        query: text.trim().to_string(),
    };

    if let Some(date) = numeric_date(&tokens)? {
        return Ok(date);
    }
    let year = explicit_year(&tokens)?;
    if let Some(date) = sunday_of_season(&tokens, year, today, calendar)? {
        return Ok(date);
    }
    if let Some(date) = occasion(&tokens, year, today, calendar)? {
        return Ok(date);
    }
    if let Some(date) = month_and_day(&tokens, year, today)? {
        return Ok(date);
    }
    if year.is_some() {
        return Err(unrecognized());
    }
    if let Some(date) = relative_day(&tokens, today) {
        return Ok(date);
    }
    weekday(&tokens, today).ok_or_else(unrecognized)
}

/// Lowercase words, with surrounding punctuation removed but inner `-` and `/` kept.
fn tokenize(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '?' | '!' | ';' | '(' | ')' | '"'))
        .map(|word| {
            word.trim_matches(|c: char| matches!(c, '.' | ':' | '\'' | '’'))
                .trim_end_matches("'s")
                .trim_end_matches("’s")
                .to_string()
        })
        .filter(|word| !word.is_empty())
        .collect()
}

fn check_year(year: i32) -> Result<i32, LiturgyError> {
    if (FIRST_YEAR..=LAST_YEAR).contains(&year) {
        Ok(year)
    } else {
        Err(LiturgyError::YearOutOfRange { year })
    }
}

/// `2026-12-08` and `2026/12/08`; refuses `12/08/2026`, `8.12.2026` and the like.
fn numeric_date(tokens: &[String]) -> Result<Option<NaiveDate>, LiturgyError> {
    for token in tokens {
        if !token.chars().any(|c| matches!(c, '-' | '/' | '.')) {
            continue;
        }
        let parts: Vec<&str> = token.split(['-', '/', '.']).collect();
        if parts.len() < 2
            || !parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        {
            continue;
        }
        let invalid = || LiturgyError::InvalidDate {
            text: token.clone(),
        };
        if parts.len() == 3 && parts[0].len() == 4 {
            let year = parts[0].parse().map_err(|_| invalid())?;
            let month = parts[1].parse().map_err(|_| invalid())?;
            let day = parts[2].parse().map_err(|_| invalid())?;
            let date = NaiveDate::from_ymd_opt(year, month, day).ok_or_else(invalid)?;
            check_year(year)?;
            return Ok(Some(date));
        }
        return Err(LiturgyError::AmbiguousDate {
            text: token.clone(),
        });
    }
    Ok(None)
}

/// The first four-digit number of the text, taken as a year.
fn explicit_year(tokens: &[String]) -> Result<Option<i32>, LiturgyError> {
    tokens
        .iter()
        .find(|t| t.len() == 4 && t.chars().all(|c| c.is_ascii_digit()))
        .map(|t| {
            t.parse::<i32>()
                .map_err(|_| LiturgyError::InvalidDate { text: t.clone() })
                .and_then(check_year)
        })
        .transpose()
}

/// Where `phrase` starts among `tokens`.
fn find_phrase(tokens: &[String], phrase: &[&str]) -> Option<usize> {
    tokens
        .windows(phrase.len())
        .position(|window| window.iter().zip(phrase).all(|(token, word)| token == word))
}

/// The date `compute(year)` for the given year, or else the first one not before today.
fn this_or_next<F>(
    year: Option<i32>,
    today: NaiveDate,
    compute: F,
) -> Result<NaiveDate, LiturgyError>
where
    F: Fn(i32) -> Result<NaiveDate, LiturgyError>,
{
    if let Some(year) = year {
        return compute(year);
    }
    let this_year = compute(today.year())?;
    if this_year >= today {
        Ok(this_year)
    } else {
        compute(check_year(today.year() + 1)?)
    }
}

type KeyDate = fn(&KeyDates) -> Option<NaiveDate>;

/// Occasions by name, longest phrases first so that "easter monday" is not read as "easter".
const MOVABLE_OCCASIONS: &[(&[&str], KeyDate)] = &[
    (&["baptism", "of", "the", "lord"], |k| Some(k.baptism)),
    (&["ash", "wednesday"], |k| Some(k.ash_wednesday)),
    (&["palm", "sunday"], |k| Some(k.palm_sunday)),
    (&["holy", "thursday"], |k| Some(k.holy_thursday)),
    (&["maundy", "thursday"], |k| Some(k.holy_thursday)),
    (&["good", "friday"], |k| {
        k.holy_saturday.checked_sub_days(Days::new(1))
    }),
    (&["holy", "saturday"], |k| Some(k.holy_saturday)),
    (&["easter", "vigil"], |k| Some(k.holy_saturday)),
    (&["easter", "monday"], |k| {
        k.easter.checked_add_days(Days::new(1))
    }),
    (&["divine", "mercy"], |k| {
        k.easter.checked_add_days(Days::new(7))
    }),
    (&["corpus", "christi"], |k| Some(k.corpus_christi)),
    (&["body", "and", "blood"], |k| Some(k.corpus_christi)),
    (&["sacred", "heart"], |k| Some(k.sacred_heart)),
    (&["christ", "the", "king"], |k| Some(k.christ_the_king)),
    (&["holy", "family"], |k| Some(k.holy_family)),
    (&["trinity"], |k| Some(k.trinity)),
    (&["epiphany"], |k| Some(k.epiphany)),
    (&["ascension"], |k| Some(k.ascension)),
    (&["pentecost"], |k| Some(k.pentecost)),
    (&["whitsunday"], |k| Some(k.pentecost)),
    (&["easter"], |k| Some(k.easter)),
];

/// Occasions on fixed dates: phrase, month, day.
const FIXED_OCCASIONS: &[(&[&str], u32, u32)] = &[
    (&["christmas", "eve"], 12, 24),
    (&["new", "year"], 1, 1),
    (&["mary", "mother", "of", "god"], 1, 1),
    (&["immaculate", "conception"], 12, 8),
    (&["all", "saints"], 11, 1),
    (&["all", "souls"], 11, 2),
    (&["assumption"], 8, 15),
    (&["annunciation"], 3, 25),
    (&["st", "joseph"], 3, 19),
    (&["saint", "joseph"], 3, 19),
    (&["christmas"], 12, 25),
    (&["nativity", "of", "the", "lord"], 12, 25),
];

fn occasion(
    tokens: &[String],
    year: Option<i32>,
    today: NaiveDate,
    calendar: &Calendar,
) -> Result<Option<NaiveDate>, LiturgyError> {
    let movable = MOVABLE_OCCASIONS
        .iter()
        .filter_map(|(phrase, rule)| Some((find_phrase(tokens, phrase)?, phrase.len(), *rule)))
        .min_by_key(|(position, length, _)| (*position, usize::MAX - length));
    let fixed = FIXED_OCCASIONS
        .iter()
        .filter_map(|(phrase, month, day)| {
            Some((find_phrase(tokens, phrase)?, phrase.len(), *month, *day))
        })
        .min_by_key(|(position, length, ..)| (*position, usize::MAX - length));
    match (movable, fixed) {
        (Some((movable_at, _, rule)), fixed) if fixed.is_none_or(|(at, ..)| movable_at <= at) => {
            this_or_next(year, today, |year| {
                let dates = calendar.key_dates(year)?;
                rule(&dates).ok_or(LiturgyError::YearOutOfRange { year })
            })
            .map(Some)
        }
        (_, Some((_, _, month, day))) => this_or_next(year, today, |year| {
            NaiveDate::from_ymd_opt(check_year(year)?, month, day)
                .ok_or(LiturgyError::YearOutOfRange { year })
        })
        .map(Some),
        _ => Ok(None),
    }
}

/// "first" to "thirty-fourth", or "1st" to "34th".
fn ordinal_number(token: &str) -> Option<u8> {
    if let Some(index) = ORDINALS
        .iter()
        .position(|word| word.eq_ignore_ascii_case(token))
    {
        return u8::try_from(index + 1).ok();
    }
    let digits = token
        .strip_suffix("st")
        .or_else(|| token.strip_suffix("nd"))
        .or_else(|| token.strip_suffix("rd"))
        .or_else(|| token.strip_suffix("th"))?;
    digits.parse().ok().filter(|n| (1..=34).contains(n))
}

/// "the third Sunday of Advent", "2nd Sunday of Easter", "fifth Sunday in Ordinary Time".
fn sunday_of_season(
    tokens: &[String],
    year: Option<i32>,
    today: NaiveDate,
    calendar: &Calendar,
) -> Result<Option<NaiveDate>, LiturgyError> {
    let Some(at) = tokens.iter().position(|t| t == "sunday") else {
        return Ok(None);
    };
    let Some(number) = at
        .checked_sub(1)
        .and_then(|i| tokens.get(i))
        .and_then(|t| ordinal_number(t))
    else {
        return Ok(None);
    };
    let season = tokens
        .get(at + 1)
        .filter(|t| *t == "of" || *t == "in")
        .and_then(|_| tokens.get(at + 2));
    let (id, what) = match season.map(String::as_str) {
        Some("advent") if number <= 4 => (format!("advent_{number}_sunday"), "of Advent"),
        Some("lent") if number <= 5 => (format!("lent_{number}_sunday"), "of Lent"),
        Some("easter") if number == 1 => ("easter_sunday".to_string(), "of Easter"),
        Some("easter") if number == 2 => ("divine_mercy_sunday".to_string(), "of Easter"),
        Some("easter") if number <= 7 => (format!("easter_time_{number}_sunday"), "of Easter"),
        Some("ordinary") if number >= 2 => {
            (format!("ordinary_time_{number}_sunday"), "in Ordinary Time")
        }
        _ => return Ok(None),
    };
    let find = |year: i32| -> Result<NaiveDate, LiturgyError> {
        calendar
            .year(year)?
            .iter()
            .find(|day| day.temporal_id == id)
            .map(|day| day.date)
            .ok_or_else(|| LiturgyError::NotInYear {
                what: format!(
                    "the {} Sunday {what} (a higher celebration replaces it that year)",
                    ORDINALS[usize::from(number - 1)]
                ),
                year,
            })
    };
    match year {
        Some(year) => find(year).map(Some),
        None => {
            let this_year = find(today.year()).ok().filter(|date| *date >= today);
            match this_year {
                Some(date) => Ok(Some(date)),
                None => find(check_year(today.year() + 1)?).map(Some),
            }
        }
    }
}

fn month_number(token: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let index = MONTHS
        .iter()
        .position(|month| *month == token || (token.len() >= 3 && month.starts_with(token)))?;
    u32::try_from(index + 1).ok()
}

fn day_number(token: &str) -> Option<u32> {
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|suffix| token.strip_suffix(suffix))
        .unwrap_or(token);
    if digits.is_empty() || digits.len() > 2 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|day| (1..=31).contains(day))
}

/// "December 8", "Dec 8th", "8 December", "8th of December", each with an optional year.
fn month_and_day(
    tokens: &[String],
    year: Option<i32>,
    today: NaiveDate,
) -> Result<Option<NaiveDate>, LiturgyError> {
    for (at, token) in tokens.iter().enumerate() {
        let Some(month) = month_number(token) else {
            continue;
        };
        let after = tokens.get(at + 1).and_then(|t| day_number(t));
        let before = at
            .checked_sub(1)
            .and_then(|i| tokens.get(i))
            .and_then(|t| day_number(t));
        let before_of = at
            .checked_sub(2)
            .filter(|&i| matches!(tokens[i + 1].as_str(), "of" | "de"))
            .and_then(|i| day_number(&tokens[i]));
        let Some(day) = after.or(before).or(before_of) else {
            continue;
        };
        let text = match year {
            Some(year) => format!("{token} {day} {year}"),
            None => format!("{token} {day}"),
        };
        if NaiveDate::from_ymd_opt(2000, month, day).is_none() {
            return Err(LiturgyError::InvalidDate { text });
        }
        return this_or_next(year, today, |year| {
            NaiveDate::from_ymd_opt(check_year(year)?, month, day)
                .ok_or_else(|| LiturgyError::InvalidDate { text: text.clone() })
        })
        .map(Some);
    }
    Ok(None)
}

fn relative_day(tokens: &[String], today: NaiveDate) -> Option<NaiveDate> {
    tokens.iter().find_map(|token| match token.as_str() {
        "today" | "tonight" => Some(today),
        "tomorrow" => today.succ_opt(),
        "yesterday" => today.pred_opt(),
        _ => None,
    })
}

fn weekday(tokens: &[String], today: NaiveDate) -> Option<NaiveDate> {
    let (at, weekday) = tokens.iter().enumerate().find_map(|(at, token)| {
        let weekday = match token.as_str() {
            "monday" => Weekday::Mon,
            "tuesday" => Weekday::Tue,
            "wednesday" => Weekday::Wed,
            "thursday" => Weekday::Thu,
            "friday" => Weekday::Fri,
            "saturday" => Weekday::Sat,
            "sunday" => Weekday::Sun,
            _ => return None,
        };
        Some((at, weekday))
    })?;
    let modifier = at
        .checked_sub(1)
        .and_then(|i| tokens.get(i))
        .map(String::as_str);
    let ahead = u64::from(
        (weekday.num_days_from_monday() + 7 - today.weekday().num_days_from_monday()) % 7,
    );
    match modifier {
        Some("overnext") => {
            today.checked_add_days(Days::new(if ahead == 0 { 14 } else { ahead + 7 }))
        }
        Some("next") => today.checked_add_days(Days::new(if ahead == 0 { 7 } else { ahead })),
        Some("last") | Some("past") => {
            let back = u64::from(
                (today.weekday().num_days_from_monday() + 7 - weekday.num_days_from_monday()) % 7,
            );
            today.checked_sub_days(Days::new(if back == 0 { 7 } else { back }))
        }
        _ => today.checked_add_days(Days::new(ahead)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    /// Wednesday 2026-12-02.
    fn parse(text: &str) -> Result<NaiveDate, LiturgyError> {
        parse_date_query(text, date(2026, 12, 2), &Calendar::default())
    }

    #[test]
    fn relative_days() {
        assert_eq!(parse("today").unwrap(), date(2026, 12, 2));
        assert_eq!(parse("Readings for TOMORROW?").unwrap(), date(2026, 12, 3));
        assert_eq!(parse("yesterday").unwrap(), date(2026, 12, 1));
    }

    #[test]
    fn weekdays_count_from_today() {
        assert_eq!(parse("Wednesday").unwrap(), date(2026, 12, 2));
        assert_eq!(parse("next Wednesday").unwrap(), date(2026, 12, 9));
        assert_eq!(parse("Friday").unwrap(), date(2026, 12, 4));
        assert_eq!(
            parse("readings for next Sunday").unwrap(),
            date(2026, 12, 6)
        );
        assert_eq!(parse("this Sunday").unwrap(), date(2026, 12, 6));
        assert_eq!(parse("last Sunday").unwrap(), date(2026, 11, 29));
    }

    #[test]
    fn the_sunday_after_next_is_the_second_sunday_from_today() {
        // Tuesday 2026-12-01: the coming Sunday is December 6, the one after it December 13.
        let tuesday = date(2026, 12, 1);
        let calendar = Calendar::default();
        let parse = |text| parse_date_query(text, tuesday, &calendar).unwrap();
        assert_eq!(parse("Sunday after next"), date(2026, 12, 13));
        assert_eq!(parse("the Sunday after next"), date(2026, 12, 13));
        assert_eq!(
            parse("readings for the Friday after next?"),
            date(2026, 12, 11)
        );
        assert_eq!(parse("Sunday"), date(2026, 12, 6));
    }

    #[test]
    fn dates_in_every_language() {
        // Wednesday 2026-12-02; Easter 2027 is March 28, Pentecost 2027 May 16.
        for (text, expected) in [
            ("Wielkanoc 2027", date(2027, 3, 28)),
            ("następna niedziela", date(2026, 12, 6)),
            ("3 maja 2027", date(2027, 5, 3)),
            ("jutro", date(2026, 12, 3)),
            ("Pâques 2027", date(2027, 3, 28)),
            ("dimanche prochain", date(2026, 12, 6)),
            ("8 décembre", date(2026, 12, 8)),
            ("aujourd'hui", date(2026, 12, 2)),
            ("Ostern 2027", date(2027, 3, 28)),
            ("nächsten Sonntag", date(2026, 12, 6)),
            ("übernächsten Sonntag", date(2026, 12, 13)),
            ("24. Dezember", date(2026, 12, 24)),
            ("morgen", date(2026, 12, 3)),
            ("Pasen 2027", date(2027, 3, 28)),
            ("volgende zondag", date(2026, 12, 6)),
            ("7 november", date(2027, 11, 7)),
            ("vandaag", date(2026, 12, 2)),
            ("Páscoa 2027", date(2027, 3, 28)),
            ("próximo domingo", date(2026, 12, 6)),
            ("12 de outubro de 2027", date(2027, 10, 12)),
            ("amanhã", date(2026, 12, 3)),
            ("Pascua 2027", date(2027, 3, 28)),
            ("el domingo que viene", date(2026, 12, 6)),
            ("25 de diciembre", date(2026, 12, 25)),
            ("hoy", date(2026, 12, 2)),
            ("Pasqua 2027", date(2027, 3, 28)),
            ("domenica prossima", date(2026, 12, 6)),
            ("Pentecoste 2027", date(2027, 5, 16)),
            ("domani", date(2026, 12, 3)),
            ("Pascha 2027", date(2027, 3, 28)),
            ("hodie", date(2026, 12, 2)),
        ] {
            assert_eq!(parse(text).unwrap(), expected, "{text}");
        }
        for ambiguous in ["03/05/2027", "3.5.2027"] {
            assert!(
                matches!(parse(ambiguous), Err(LiturgyError::AmbiguousDate { .. })),
                "{ambiguous}"
            );
        }
        assert!(matches!(
            parse("dimanche de la météo"),
            Ok(day) if day == date(2026, 12, 6)
        ));
        assert!(matches!(
            parse("quelque chose"),
            Err(LiturgyError::UnrecognizedDate { .. })
        ));
    }

    #[test]
    fn occasions_take_this_year_unless_passed() {
        assert_eq!(parse("Christmas").unwrap(), date(2026, 12, 25));
        assert_eq!(parse("Easter").unwrap(), date(2027, 3, 28));
        assert_eq!(
            parse("what are the readings on Easter 2026?").unwrap(),
            date(2026, 4, 5)
        );
        assert_eq!(parse("Christmas 2030").unwrap(), date(2030, 12, 25));
        assert_eq!(parse("Ash Wednesday 2027").unwrap(), date(2027, 2, 10));
        assert_eq!(parse("Pentecost").unwrap(), date(2027, 5, 16));
        assert_eq!(parse("Corpus Christi 2026").unwrap(), date(2026, 6, 4));
        assert_eq!(parse("Ascension 2026").unwrap(), date(2026, 5, 14));
        assert_eq!(parse("Epiphany").unwrap(), date(2027, 1, 6));
        assert_eq!(parse("All Saints").unwrap(), date(2027, 11, 1));
        assert_eq!(parse("Easter Monday 2026").unwrap(), date(2026, 4, 6));
        assert_eq!(parse("Good Friday 2026").unwrap(), date(2026, 4, 3));
        assert_eq!(parse("Christmas Eve").unwrap(), date(2026, 12, 24));
    }

    #[test]
    fn occasions_follow_the_calendar_options() {
        let sunday = Calendar::new(crate::CalendarOptions {
            epiphany_on_sunday: true,
            ascension_on_sunday: true,
            corpus_christi_on_sunday: true,
        });
        let today = date(2026, 1, 1);
        assert_eq!(
            parse_date_query("Epiphany", today, &sunday).unwrap(),
            date(2026, 1, 4)
        );
        assert_eq!(
            parse_date_query("Ascension", today, &sunday).unwrap(),
            date(2026, 5, 17)
        );
        assert_eq!(
            parse_date_query("Corpus Christi", today, &sunday).unwrap(),
            date(2026, 6, 7)
        );
    }

    #[test]
    fn sundays_of_seasons() {
        assert_eq!(
            parse("the third Sunday of Advent").unwrap(),
            date(2026, 12, 13)
        );
        assert_eq!(parse("first Sunday of Advent").unwrap(), date(2027, 11, 28));
        assert_eq!(parse("3rd Sunday of Lent 2026").unwrap(), date(2026, 3, 8));
        assert_eq!(
            parse("second Sunday of Easter 2026").unwrap(),
            date(2026, 4, 12)
        );
        assert_eq!(
            parse("tenth Sunday in Ordinary Time 2026").unwrap(),
            date(2026, 6, 7)
        );
        assert!(matches!(
            parse("eighth Sunday in Ordinary Time 2026"),
            Err(LiturgyError::NotInYear { year: 2026, .. })
        ));
    }

    #[test]
    fn month_and_day_forms() {
        assert_eq!(parse("December 8").unwrap(), date(2026, 12, 8));
        assert_eq!(parse("Dec 8 2026").unwrap(), date(2026, 12, 8));
        assert_eq!(parse("8 December 2026").unwrap(), date(2026, 12, 8));
        assert_eq!(parse("the 8th of December").unwrap(), date(2026, 12, 8));
        assert_eq!(parse("November 1").unwrap(), date(2027, 11, 1));
        assert_eq!(parse("saints for May 3rd").unwrap(), date(2027, 5, 3));
        assert!(matches!(
            parse("February 30"),
            Err(LiturgyError::InvalidDate { .. })
        ));
        assert_eq!(parse("February 29 2028").unwrap(), date(2028, 2, 29));
        assert!(matches!(
            parse("February 29 2027"),
            Err(LiturgyError::InvalidDate { .. })
        ));
    }

    #[test]
    fn numeric_forms() {
        assert_eq!(parse("2026-12-08").unwrap(), date(2026, 12, 8));
        assert_eq!(parse("on 2026/12/08.").unwrap(), date(2026, 12, 8));
        assert!(matches!(
            parse("12/08/2026"),
            Err(LiturgyError::AmbiguousDate { .. })
        ));
        assert!(matches!(
            parse("8.12.2026"),
            Err(LiturgyError::AmbiguousDate { .. })
        ));
        assert!(matches!(
            parse("2026-13-01"),
            Err(LiturgyError::InvalidDate { .. })
        ));
        assert!(matches!(
            parse("1900-01-01"),
            Err(LiturgyError::YearOutOfRange { year: 1900 })
        ));
    }

    #[test]
    fn nonsense_is_refused_with_examples() {
        for text in ["", "hello there", "2026", "the weather"] {
            let error = parse(text).unwrap_err();
            assert!(
                matches!(error, LiturgyError::UnrecognizedDate { .. }),
                "{text}: {error:?}"
            );
            assert!(error.to_string().contains("next Sunday"), "{error}");
        }
    }
}
