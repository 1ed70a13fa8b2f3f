//! What the two calendar skills share: the deployment's calendar, "today" in its time zone, and
//! reading the date of a request (data `date` first, then data `query`, then the text).

use std::sync::OnceLock;

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use liturgy::dates::{ACCEPTED_FORMS, parse_date_query};
use liturgy::names::{self, Names};
use liturgy::{Calendar, CalendarOptions, LiturgicalDay, calendar_ids};
use serde_json::Value;

use crate::{LiturgySettings, SkillError, SkillRequest, limits};

/// The data-part fields a request may use to override the calendar's options.
pub const OPTION_FIELDS: [&str; 3] = [
    "epiphany_on_sunday",
    "ascension_on_sunday",
    "corpus_christi_on_sunday",
];

/// How many computed years a calendar other than the deployment's keeps: with seventeen
/// calendars and eight combinations of options, requests could otherwise make the service hold
/// over two thousand years of days; a year is recomputed in about a millisecond.
const OTHER_CALENDAR_YEARS: usize = 2;

/// One calendar per territory and combination of the three options, built on first use, so
/// that per-request choices reuse the cached years instead of recomputing them.
pub struct CalendarSource {
    time_zone: Tz,
    calendar: &'static str,
    language: &'static str,
    overrides: [Option<bool>; 3],
    calendars: Vec<OnceLock<Calendar>>,
}

/// A request's date with the calendar and language that answer for it.
#[derive(Debug, Clone)]
pub struct ResolvedDay<'a> {
    /// The civil date asked about.
    pub date: NaiveDate,
    /// The calendar with the options in force for this request.
    pub calendar: &'a Calendar,
    /// What that calendar says about the date, with names in [`ResolvedDay::language`].
    pub day: LiturgicalDay,
    /// The language of the answer (`en` when the one asked for is not supported).
    pub language: &'static str,
    /// Names of ranks, colours and seasons in that language (none for English).
    pub names: Option<&'static Names>,
    /// Why the answer is not in the language asked for, when it is not.
    pub language_note: Option<String>,
}

impl CalendarSource {
    /// The deployment's calendar; refuses a time zone that is not an IANA name, an unknown
    /// calendar and an unsupported language, because answers would otherwise silently come
    /// from the wrong place or in the wrong language.
    pub fn new(settings: &LiturgySettings) -> Result<Self, SkillError> {
        let time_zone: Tz = settings.time_zone.parse().map_err(|_| {
            SkillError::Internal(format!(
                "liturgy.time_zone `{}` is not an IANA time zone such as `Europe/Rome` or `UTC`",
                settings.time_zone
            ))
        })?;
        if let Some((key, reason)) = settings.invalid_key() {
            return Err(SkillError::Internal(format!("{key} {reason}")));
        }
        let calendar = calendar_ids()
            .find(|id| *id == settings.calendar)
            .unwrap_or(liturgy::GENERAL_ROMAN);
        let language = names::supported(&settings.language).unwrap_or("en");
        Ok(CalendarSource {
            time_zone,
            calendar,
            language,
            overrides: [
                settings.epiphany_on_sunday,
                settings.ascension_on_sunday,
                settings.corpus_christi_on_sunday,
            ],
            calendars: calendar_ids()
                .flat_map(|_| [(); 8])
                .map(|()| OnceLock::new())
                .collect(),
        })
    }

    /// The civil date of `now` in the deployment's time zone.
    pub fn today(&self, now: DateTime<Utc>) -> NaiveDate {
        now.with_timezone(&self.time_zone).date_naive()
    }

    /// The calendar kept for this territory (one of [`calendar_ids`]) with these options.
    pub fn calendar(&self, id: &str, options: CalendarOptions) -> Option<&Calendar> {
        let position = calendar_ids().position(|known| known == id)?;
        let index = position * 8
            + (usize::from(options.epiphany_on_sunday)
                | usize::from(options.ascension_on_sunday) << 1
                | usize::from(options.corpus_christi_on_sunday) << 2);
        let slot = self.calendars.get(index)?;
        if let Some(calendar) = slot.get() {
            return Some(calendar);
        }
        let calendar = Calendar::of(id, options).ok()?;
        let calendar = if id == self.calendar {
            calendar
        } else {
            calendar.with_cached_years(OTHER_CALENDAR_YEARS)
        };
        Some(slot.get_or_init(|| calendar))
    }

    /// The calendar a request asks for (data `calendar`, else the deployment's).
    fn request_calendar(&self, request: &SkillRequest) -> Result<&'static str, SkillError> {
        match request.data.get("calendar") {
            None | Some(Value::Null) => Ok(self.calendar),
            Some(value) => {
                let asked = value.as_str().map(str::trim).unwrap_or_default();
                calendar_ids()
                    .find(|id| id.eq_ignore_ascii_case(asked))
                    .ok_or_else(|| {
                        SkillError::Failed(format!(
                            "`calendar` must be one of {}; got {}",
                            calendar_ids().collect::<Vec<_>>().join(", "),
                            truncated(value)
                        ))
                    })
            }
        }
    }

    /// The calendar's own options, with the deployment's settings and then the request's
    /// boolean overrides applied.
    pub fn request_options(
        &self,
        calendar: &str,
        request: &SkillRequest,
    ) -> Result<CalendarOptions, SkillError> {
        let mut options = Calendar::default_options(calendar)
            .map_err(|error| SkillError::Internal(error.to_string()))?;
        for (field, deployment) in OPTION_FIELDS.into_iter().zip(self.overrides) {
            let value = match request.data.get(field) {
                None | Some(Value::Null) => match deployment {
                    Some(value) => value,
                    None => continue,
                },
                Some(Value::Bool(value)) => *value,
                Some(_) => {
                    return Err(SkillError::Failed(format!(
                        "`{field}` must be true or false, e.g. {{\"date\": \"2026-01-04\", \"{field}\": true}}"
                    )));
                }
            };
            match field {
                "epiphany_on_sunday" => options.epiphany_on_sunday = value,
                "ascension_on_sunday" => options.ascension_on_sunday = value,
                _ => options.corpus_christi_on_sunday = value,
            }
        }
        Ok(options)
    }

    /// The language of the answer: data `language`, else the request's `Accept-Language`, else
    /// the deployment's; an unsupported one gives English and a note saying so.
    fn request_language(
        &self,
        request: &SkillRequest,
    ) -> Result<(&'static str, Option<String>), SkillError> {
        match request.data.get("language") {
            None | Some(Value::Null) => {}
            Some(Value::String(tag)) => {
                return Ok(match names::supported(tag) {
                    Some(language) => (language, None),
                    None => (
                        "en",
                        Some(format!(
                            "The language `{}` is not supported, so the answer is in English; the languages are {}.",
                            tag.chars().take(35).collect::<String>(),
                            names::LANGUAGES.join(", ")
                        )),
                    ),
                });
            }
            Some(other) => {
                return Err(SkillError::Failed(format!(
                    "`language` must be a BCP 47 tag such as \"pl\" or \"pt-BR\"; got {}",
                    truncated(other)
                )));
            }
        }
        let from_header = request
            .accept_language
            .as_deref()
            .and_then(names::from_accept_language);
        Ok((from_header.unwrap_or(self.language), None))
    }

    /// The date a request is about and what the calendar says of it. A data `date`
    /// (`YYYY-MM-DD`) wins over a data `query`, which wins over the text.
    pub fn resolve(&self, request: &SkillRequest) -> Result<ResolvedDay<'_>, SkillError> {
        let id = self.request_calendar(request)?;
        let options = self.request_options(id, request)?;
        let calendar = self
            .calendar(id, options)
            .ok_or_else(|| SkillError::Internal(format!("calendar `{id}` could not be built")))?;
        let (language, language_note) = self.request_language(request)?;
        let date = match request.data.get("date").filter(|v| !v.is_null()) {
            Some(value) => {
                let text = value.as_str().map(str::trim).unwrap_or_default();
                NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| {
                    SkillError::Failed(format!(
                        "`date` must be a calendar date written YYYY-MM-DD, e.g. {{\"date\": \"2026-12-08\"}}; got {}",
                        truncated(value)
                    ))
                })?
            }
            None => {
                let query = request
                    .data_str("query")
                    .unwrap_or_else(|| request.text.trim());
                if query.is_empty() {
                    return Err(SkillError::Failed(format!(
                        "No date was given. {ACCEPTED_FORMS}"
                    )));
                }
                limits::check("the date query", query, limits::MAX_DATE_QUERY_CHARS)?;
                parse_date_query(query, self.today(request.now), calendar)
                    .map_err(|error| SkillError::Failed(error.to_string()))?
            }
        };
        let mut day = calendar
            .day(date)
            .map_err(|error| SkillError::Failed(error.to_string()))?;
        let names = Names::of(language);
        if let Some(names) = names {
            localize(&mut day, calendar.lineage(), names);
        }
        Ok(ResolvedDay {
            date,
            calendar,
            day,
            language,
            names,
            language_note,
        })
    }
}

impl ResolvedDay<'_> {
    /// The fields every calendar answer carries: the calendar and language used, and why the
    /// language is not the one asked for.
    pub fn describe(&self, data: &mut serde_json::Map<String, Value>) {
        data.insert("calendar".into(), Value::from(self.calendar.id()));
        data.insert("language".into(), Value::from(self.language));
        if let Some(note) = &self.language_note {
            data.insert("language_note".into(), Value::from(note.as_str()));
        }
    }

    /// A rank in the answer's language, e.g. `uroczystość` or `optional memorial`.
    pub fn rank_word(&self, rank: liturgy::Rank) -> String {
        self.names
            .and_then(|names| names.rank(rank))
            .map_or_else(|| rank.as_str().replace('_', " "), str::to_string)
    }

    /// A colour in the answer's language.
    pub fn color_word(&self, color: liturgy::Color) -> String {
        self.names
            .and_then(|names| names.color(color))
            .unwrap_or(color.as_str())
            .to_string()
    }

    /// A season in the answer's language.
    pub fn season_word(&self, season: liturgy::Season) -> String {
        self.names
            .and_then(|names| names.season(season))
            .map_or_else(|| season.as_str().replace('_', " "), str::to_string)
    }
}

/// Puts the names of `names` in place of the English ones where it has them.
fn localize(day: &mut LiturgicalDay, lineage: &[&str], names: &Names) {
    let celebrations = std::iter::once(&mut day.celebration)
        .chain(day.optional_memorials.iter_mut())
        .chain(day.sanctorale.iter_mut().map(|s| &mut s.celebration));
    for celebration in celebrations {
        if let Some(name) = names.celebration(lineage, &celebration.id) {
            celebration.name = name.to_string();
        }
    }
}

/// A value as quoted in an error, cut to a readable length.
fn truncated(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;

    fn source(time_zone: &str) -> CalendarSource {
        CalendarSource::new(&LiturgySettings {
            time_zone: time_zone.into(),
            ..LiturgySettings::default()
        })
        .unwrap()
    }

    fn request(text: &str, data: Value) -> SkillRequest {
        let mut request =
            SkillRequest::from_text(text, Utc.with_ymd_and_hms(2026, 12, 1, 23, 30, 0).unwrap());
        request.data = data.as_object().cloned().unwrap_or_default();
        request
    }

    #[test]
    fn today_follows_the_time_zone() {
        let late_evening = request("today", json!({}));
        let utc = source("UTC");
        let rome = source("Europe/Rome");
        let in_utc = utc.resolve(&late_evening).unwrap().date;
        assert_eq!(in_utc, NaiveDate::from_ymd_opt(2026, 12, 1).unwrap());
        let in_rome = rome.resolve(&late_evening).unwrap().date;
        assert_eq!(in_rome, NaiveDate::from_ymd_opt(2026, 12, 2).unwrap());
    }

    #[test]
    fn data_date_wins_over_query_and_text() {
        let source = source("UTC");
        let both = request(
            "tomorrow",
            json!({"date": "2026-12-08", "query": "Christmas"}),
        );
        assert_eq!(
            source.resolve(&both).unwrap().date.to_string(),
            "2026-12-08"
        );
        let query = request("tomorrow", json!({"query": "Christmas"}));
        assert_eq!(
            source.resolve(&query).unwrap().date.to_string(),
            "2026-12-25"
        );
        let text = request("tomorrow", json!({}));
        assert_eq!(
            source.resolve(&text).unwrap().date.to_string(),
            "2026-12-02"
        );
    }

    #[test]
    fn overrides_change_the_calendar() {
        let source = source("UTC");
        let plain = request("", json!({"date": "2026-01-04"}));
        assert_eq!(
            source.resolve(&plain).unwrap().day.celebration.id,
            "second_sunday_after_christmas"
        );
        let sunday = request(
            "",
            json!({"date": "2026-01-04", "epiphany_on_sunday": true}),
        );
        assert_eq!(
            source.resolve(&sunday).unwrap().day.celebration.id,
            "epiphany_of_the_lord"
        );
        let bad = request(
            "",
            json!({"date": "2026-01-04", "epiphany_on_sunday": "yes"}),
        );
        assert!(
            matches!(source.resolve(&bad), Err(SkillError::Failed(m)) if m.contains("true or false"))
        );
    }

    #[test]
    fn bad_input_says_what_is_accepted() {
        let source = source("UTC");
        for (text, data, expected) in [
            ("", json!({}), "No date was given"),
            ("what is the weather", json!({}), "next Sunday"),
            ("", json!({"date": "08/12/2026"}), "YYYY-MM-DD"),
            ("", json!({"date": 20261208}), "YYYY-MM-DD"),
            ("", json!({"date": "1969-12-31"}), "1970"),
            ("12/08/2026", json!({}), "ambiguous"),
        ] {
            let error = source.resolve(&request(text, data)).unwrap_err();
            assert!(
                matches!(&error, SkillError::Failed(m) if m.contains(expected)),
                "{text}: {error:?}"
            );
        }
    }

    #[test]
    fn the_language_comes_from_data_then_header_then_deployment() {
        let deployment = CalendarSource::new(&LiturgySettings {
            language: "de".into(),
            ..LiturgySettings::default()
        })
        .unwrap();
        let mut asked = request("", json!({"date": "2026-04-05", "language": "pt-BR"}));
        asked.accept_language = Some("pl".into());
        let resolved = deployment.resolve(&asked).unwrap();
        assert_eq!(resolved.language, "pt");
        assert_eq!(resolved.day.celebration.name, "Domingo da Páscoa");
        assert_eq!(resolved.day.celebration.id, "easter_sunday");
        let mut header = request("", json!({"date": "2026-04-05"}));
        header.accept_language = Some("sv-SE, pl;q=0.9".into());
        let resolved = deployment.resolve(&header).unwrap();
        assert_eq!(
            (
                resolved.language,
                resolved.rank_word(liturgy::Rank::Solemnity).as_str()
            ),
            ("pl", "uroczystość")
        );
        let plain = deployment
            .resolve(&request("", json!({"date": "2026-04-05"})))
            .unwrap();
        assert_eq!(plain.language, "de");
        assert_eq!(
            plain.day.celebration.name,
            "Ostersonntag der Auferstehung des Herrn"
        );
        let unsupported = deployment
            .resolve(&request(
                "",
                json!({"date": "2026-04-05", "language": "sv"}),
            ))
            .unwrap();
        assert_eq!(unsupported.language, "en");
        assert!(
            unsupported
                .language_note
                .unwrap()
                .contains("`sv` is not supported")
        );
        assert_eq!(
            unsupported.day.celebration.name,
            "Easter Sunday of the Resurrection of the Lord"
        );
        let bad = request("", json!({"date": "2026-04-05", "language": 7}));
        assert!(
            matches!(deployment.resolve(&bad), Err(SkillError::Failed(m)) if m.contains("BCP 47"))
        );
    }

    #[test]
    fn dutch_names_the_netherlands_calendar() {
        let source = source("UTC");
        let willibrord = request(
            "",
            json!({"date": "2026-11-07", "calendar": "netherlands", "language": "nl-NL"}),
        );
        let resolved = source.resolve(&willibrord).unwrap();
        assert_eq!(resolved.language, "nl");
        assert_eq!(resolved.day.celebration.id, "willibrord_of_utrecht_bishop");
        assert_eq!(
            resolved.rank_word(resolved.day.celebration.rank),
            "hoogfeest"
        );
        assert!(
            resolved
                .day
                .celebration
                .name
                .contains("patroon van Nederland")
        );
        let sunday = request(
            "volgende zondag",
            json!({"calendar": "netherlands", "language": "nl"}),
        );
        let resolved = source.resolve(&sunday).unwrap();
        assert_eq!(resolved.date.to_string(), "2026-12-06");
        assert_eq!(resolved.day.celebration.name, "2e zondag van de Advent");
    }

    #[test]
    fn the_calendar_comes_from_data_then_deployment_with_its_options() {
        let source = source("UTC");
        let poland = request("", json!({"date": "2027-05-03", "calendar": " Poland"}));
        let resolved = source.resolve(&poland).unwrap();
        assert_eq!(resolved.day.celebration.id, "our_lady_queen_of_poland");
        assert_eq!(resolved.calendar.id(), "poland");
        assert!(resolved.calendar.options().ascension_on_sunday);
        let thursday = request(
            "",
            json!({"date": "2026-05-14", "calendar": "poland", "ascension_on_sunday": false}),
        );
        assert_eq!(
            source.resolve(&thursday).unwrap().day.celebration.id,
            "ascension_of_the_lord"
        );
        let deployment = CalendarSource::new(&LiturgySettings {
            calendar: "brazil".into(),
            ..LiturgySettings::default()
        })
        .unwrap();
        let aparecida = deployment
            .resolve(&request("", json!({"date": "2026-10-12"})))
            .unwrap();
        assert_eq!(aparecida.day.celebration.id, "our_lady_of_aparecida");
        let unknown = request("", json!({"date": "2026-10-12", "calendar": "atlantis"}));
        assert!(
            matches!(source.resolve(&unknown), Err(SkillError::Failed(m)) if m.contains("poland"))
        );
        let settings = LiturgySettings {
            calendar: "atlantis".into(),
            ..LiturgySettings::default()
        };
        assert!(
            matches!(CalendarSource::new(&settings), Err(SkillError::Internal(m)) if m.contains("liturgy.calendar"))
        );
        let settings = LiturgySettings {
            language: "tlh".into(),
            ..LiturgySettings::default()
        };
        assert!(
            matches!(CalendarSource::new(&settings), Err(SkillError::Internal(m)) if m.contains("liturgy.language"))
        );
    }

    #[test]
    fn the_card_lists_every_calendar_and_language() {
        for info in [
            crate::catalog::LITURGICAL_READINGS,
            crate::catalog::SAINTS_OF_THE_DAY,
        ] {
            for id in calendar_ids() {
                assert!(info.description.contains(id), "{}: {id}", info.id);
            }
            for language in names::LANGUAGES {
                assert!(
                    info.description.contains(&format!(" {language}")),
                    "{}: {language}",
                    info.id
                );
            }
        }
    }

    #[test]
    fn an_unknown_time_zone_is_a_configuration_fault() {
        let settings = LiturgySettings {
            time_zone: "Mars/Olympus".into(),
            ..LiturgySettings::default()
        };
        assert!(matches!(
            CalendarSource::new(&settings),
            Err(SkillError::Internal(m)) if m.contains("Mars/Olympus")
        ));
    }
}
