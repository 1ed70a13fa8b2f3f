//! What the two calendar skills share: the deployment's calendar, "today" in its time zone, and
//! reading the date of a request (data `date` first, then data `query`, then the text).

use std::sync::OnceLock;

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use liturgy::dates::{ACCEPTED_FORMS, parse_date_query};
use liturgy::{Calendar, CalendarOptions, LiturgicalDay};
use serde_json::Value;

use crate::{LiturgySettings, SkillError, SkillRequest};

/// The data-part fields a request may use to override the deployment's calendar options.
pub const OPTION_FIELDS: [&str; 3] = [
    "epiphany_on_sunday",
    "ascension_on_sunday",
    "corpus_christi_on_sunday",
];

/// One calendar per combination of the three options, built on first use, so that per-request
/// overrides reuse the cached years instead of recomputing them.
pub struct CalendarSource {
    time_zone: Tz,
    defaults: CalendarOptions,
    calendars: [OnceLock<Calendar>; 8],
}

/// A request's date with the calendar that answers for it.
#[derive(Debug, Clone)]
pub struct ResolvedDay<'a> {
    /// The civil date asked about.
    pub date: NaiveDate,
    /// The calendar with the options in force for this request.
    pub calendar: &'a Calendar,
    /// What that calendar says about the date.
    pub day: LiturgicalDay,
}

impl CalendarSource {
    /// The deployment's calendar; refuses a time zone that is not an IANA name, because "today"
    /// would otherwise silently be reckoned in the wrong place.
    pub fn new(settings: &LiturgySettings) -> Result<Self, SkillError> {
        let time_zone: Tz = settings.time_zone.parse().map_err(|_| {
            SkillError::Internal(format!(
                "liturgy.time_zone `{}` is not an IANA time zone such as `Europe/Rome` or `UTC`",
                settings.time_zone
            ))
        })?;
        Ok(CalendarSource {
            time_zone,
            defaults: CalendarOptions {
                epiphany_on_sunday: settings.epiphany_on_sunday,
                ascension_on_sunday: settings.ascension_on_sunday,
                corpus_christi_on_sunday: settings.corpus_christi_on_sunday,
            },
            calendars: std::array::from_fn(|_| OnceLock::new()),
        })
    }

    /// The civil date of `now` in the deployment's time zone.
    pub fn today(&self, now: DateTime<Utc>) -> NaiveDate {
        now.with_timezone(&self.time_zone).date_naive()
    }

    /// The calendar kept with these options.
    pub fn calendar(&self, options: CalendarOptions) -> &Calendar {
        let index = usize::from(options.epiphany_on_sunday)
            | usize::from(options.ascension_on_sunday) << 1
            | usize::from(options.corpus_christi_on_sunday) << 2;
        self.calendars[index].get_or_init(|| Calendar::new(options))
    }

    /// The deployment's options with the request's boolean overrides applied.
    pub fn request_options(&self, request: &SkillRequest) -> Result<CalendarOptions, SkillError> {
        let mut options = self.defaults;
        for field in OPTION_FIELDS {
            let value = match request.data.get(field) {
                None | Some(Value::Null) => continue,
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

    /// The date a request is about and what the calendar says of it. A data `date`
    /// (`YYYY-MM-DD`) wins over a data `query`, which wins over the text.
    pub fn resolve(&self, request: &SkillRequest) -> Result<ResolvedDay<'_>, SkillError> {
        let calendar = self.calendar(self.request_options(request)?);
        let date = match request.data.get("date").filter(|v| !v.is_null()) {
            Some(value) => {
                let text = value.as_str().map(str::trim).unwrap_or_default();
                NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| {
                    SkillError::Failed(format!(
                        "`date` must be a calendar date written YYYY-MM-DD, e.g. {{\"date\": \"2026-12-08\"}}; got {value}"
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
                parse_date_query(query, self.today(request.now), calendar)
                    .map_err(|error| SkillError::Failed(error.to_string()))?
            }
        };
        let day = calendar
            .day(date)
            .map_err(|error| SkillError::Failed(error.to_string()))?;
        Ok(ResolvedDay {
            date,
            calendar,
            day,
        })
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
