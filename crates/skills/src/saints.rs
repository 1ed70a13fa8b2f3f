//! `saints_of_the_day`: the celebrations of a date in the General Roman Calendar or a national
//! one, whether each is kept that year and why not, and the Roman Martyrology names when the
//! operator installed them.

use std::collections::HashMap;
use std::path::Path;

use async_trait::async_trait;
use chrono::{Datelike, NaiveDate};
use liturgy::Celebration;
use serde_json::{Map, Value, json};

use crate::calendar::{CalendarSource, ResolvedDay};
use crate::phrases::sentences;
use crate::{LiturgySettings, Skill, SkillError, SkillInfo, SkillOutput, SkillRequest, catalog};

/// The optional Martyrology names file in the data directory: UTF-8, one `MM-DD<TAB>name` a
/// line, `#` comments. Names are listed under the civil date they are commemorated on (not on
/// the eve, when the Martyrology is read in choir).
pub const MARTYROLOGY_FILE: &str = "martyrology.tsv";

/// The saints and celebrations of a date.
pub struct SaintsOfTheDay {
    calendars: CalendarSource,
    martyrology: Option<HashMap<(u32, u32), Vec<String>>>,
}

impl SaintsOfTheDay {
    /// The skill for a deployment: its calendar settings, and `data_dir` where a
    /// [`MARTYROLOGY_FILE`] may be installed. A missing file only leaves the Martyrology out; a
    /// malformed one is refused so that the operator hears of it at start-up.
    pub fn new(settings: &LiturgySettings, data_dir: &Path) -> Result<Self, SkillError> {
        let path = data_dir.join(MARTYROLOGY_FILE);
        let martyrology =
            match std::fs::read_to_string(&path) {
                Ok(text) => Some(parse_martyrology(&text).map_err(|reason| {
                    SkillError::Internal(format!("{}: {reason}", path.display()))
                })?),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
                Err(error) => {
                    return Err(SkillError::Internal(format!(
                        "cannot read {}: {error}",
                        path.display()
                    )));
                }
            };
        Ok(SaintsOfTheDay {
            calendars: CalendarSource::new(settings)?,
            martyrology,
        })
    }
}

fn parse_martyrology(text: &str) -> Result<HashMap<(u32, u32), Vec<String>>, String> {
    let mut names: HashMap<(u32, u32), Vec<String>> = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fault = |what: &str| format!("line {}: {what}", index + 1);
        let (date, name) = line
            .split_once('\t')
            .ok_or_else(|| fault("expected `MM-DD<TAB>name`"))?;
        let (month, day) = date
            .split_once('-')
            .and_then(|(m, d)| Some((m.parse::<u32>().ok()?, d.parse::<u32>().ok()?)))
            .filter(|&(m, d)| NaiveDate::from_ymd_opt(2000, m, d).is_some())
            .ok_or_else(|| fault("the date must be MM-DD, e.g. 01-28"))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(fault("empty name"));
        }
        names
            .entry((month, day))
            .or_default()
            .push(name.to_string());
    }
    Ok(names)
}

/// One entry of the artifact's `celebrations`.
fn celebration_json(
    celebration: &Celebration,
    celebrated: bool,
    reason: Option<&str>,
    words: &ResolvedDay<'_>,
) -> Value {
    let mut entry = json!({
        "id": celebration.id,
        "name": celebration.name,
        "rank": celebration.rank.as_str(),
        "rank_name": words.rank_word(celebration.rank),
        "color": celebration.color.as_str(),
        "color_name": words.color_word(celebration.color),
        "celebrated": celebrated,
    });
    if let (Some(reason), Some(object)) = (reason, entry.as_object_mut()) {
        object.insert("reason".into(), Value::String(reason.to_string()));
    }
    entry
}

/// "Tuesday 8 December 2026".
fn long_date(date: NaiveDate) -> String {
    date.format("%A %-d %B %Y").to_string()
}

fn describe(celebration: &Celebration, words: &ResolvedDay<'_>) -> String {
    format!(
        "{} ({}, {})",
        celebration.name,
        words.rank_word(celebration.rank),
        words.color_word(celebration.color)
    )
}

fn render(words: &ResolvedDay<'_>, martyrology: Option<&[String]>) -> (String, Map<String, Value>) {
    let day = &words.day;
    let principal = &day.celebration;
    let principal_status = day
        .sanctorale
        .iter()
        .find(|s| s.celebrated && s.celebration.id == principal.id);
    let mut celebrations = vec![celebration_json(
        principal,
        true,
        principal_status.and_then(|s| s.reason.as_deref()),
        words,
    )];
    let mut lines = vec![format!(
        "{} — {}.",
        match words.names {
            Some(_) => day.date.to_string(),
            None => long_date(day.date),
        },
        describe(principal, words)
    )];
    if let Some(reason) = principal_status.and_then(|s| s.reason.as_deref()) {
        lines.push(format!("({reason}.)"));
    }
    for status in &day.sanctorale {
        if status.celebrated && status.celebration.id == principal.id {
            continue;
        }
        celebrations.push(celebration_json(
            &status.celebration,
            status.celebrated,
            status.reason.as_deref(),
            words,
        ));
        let reason = status
            .reason
            .as_deref()
            .map(|r| format!(" — {r}"))
            .unwrap_or_default();
        if status.celebrated {
            lines.push(format!(
                "{}: {}{reason}.",
                sentences(words.language).may_also_be_kept,
                describe(&status.celebration, words)
            ));
        } else {
            lines.push(format!(
                "{}: {}{reason}.",
                sentences(words.language).not_celebrated,
                describe(&status.celebration, words)
            ));
        }
    }

    let mut data = Map::new();
    data.insert("date".into(), Value::String(day.date.to_string()));
    data.insert("celebrations".into(), Value::Array(celebrations));
    words.describe(&mut data);
    if let Some(note) = &words.language_note {
        lines.push(note.clone());
    }
    if let Some(names) = martyrology {
        if !names.is_empty() {
            lines.push(format!(
                "{}: {}.",
                sentences(words.language).martyrology,
                names.join("; ")
            ));
        }
        let names = names.iter().map(|name| json!({ "name": name })).collect();
        data.insert("martyrology".into(), Value::Array(names));
    }
    (lines.join("\n"), data)
}

#[async_trait]
impl Skill for SaintsOfTheDay {
    fn info(&self) -> &SkillInfo {
        &catalog::SAINTS_OF_THE_DAY
    }

    async fn run(&self, request: SkillRequest) -> Result<SkillOutput, SkillError> {
        let resolved = self.calendars.resolve(&request)?;
        let martyrology = self.martyrology.as_ref().map(|names| {
            names
                .get(&(resolved.date.month(), resolved.date.day()))
                .map_or(&[][..], Vec::as_slice)
        });
        let (text, data) = render(&resolved, martyrology);
        Ok(SkillOutput {
            artifact_name: "saints",
            text,
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    #[tokio::test]
    async fn the_text_follows_the_language_and_the_calendar() {
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
        let mut request = SkillRequest::from_text("", now);
        request.data = json!({"date": "2027-05-03", "calendar": "poland", "language": "pl"})
            .as_object()
            .cloned()
            .unwrap();
        let output = skill().run(request).await.unwrap();
        assert!(output.text.starts_with("2027-05-03 — "), "{}", output.text);
        assert!(output.text.contains("Królowej Polski"), "{}", output.text);
        assert!(
            output.text.contains("(uroczystość, biały)"),
            "{}",
            output.text
        );
        assert_eq!(output.data["calendar"], "poland");
        assert_eq!(output.data["celebrations"][0]["rank"], "solemnity");
        assert_eq!(output.data["celebrations"][0]["color_name"], "biały");
        let mut impeded = SkillRequest::from_text("", now);
        impeded.data = json!({"date": "2026-05-03", "calendar": "poland", "language": "pl"})
            .as_object()
            .cloned()
            .unwrap();
        let sunday = skill().run(impeded).await.unwrap();
        assert!(
            sunday
                .text
                .contains("W tym roku nie obchodzi się: Najświętszej Maryi Panny"),
            "{}",
            sunday.text
        );
        assert!(
            sunday.text.contains("transferred to 2026-05-04"),
            "{}",
            sunday.text
        );
    }

    fn skill() -> SaintsOfTheDay {
        let empty = tempfile::tempdir().unwrap();
        SaintsOfTheDay::new(&LiturgySettings::default(), empty.path()).unwrap()
    }

    fn request(text: &str, data: Value) -> SkillRequest {
        let mut request =
            SkillRequest::from_text(text, Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap());
        request.data = data.as_object().cloned().unwrap_or_default();
        request
    }

    fn celebrations(output: &SkillOutput) -> &Vec<Value> {
        output.data["celebrations"].as_array().unwrap()
    }

    #[tokio::test]
    async fn a_solemnity_and_its_displaced_saint() {
        let output = skill()
            .run(request("", json!({"date": "2026-12-08"})))
            .await
            .unwrap();
        assert_eq!(output.artifact_name, "saints");
        assert_eq!(output.data["date"], "2026-12-08");
        let first = &celebrations(&output)[0];
        assert_eq!(
            first["name"],
            "The Immaculate Conception of the Blessed Virgin Mary"
        );
        assert_eq!(first["rank"], "solemnity");
        assert_eq!(first["color"], "white");
        assert_eq!(first["celebrated"], true);
        assert!(output.text.starts_with(
            "Tuesday 8 December 2026 — The Immaculate Conception of the Blessed Virgin Mary (solemnity, white)."
        ));
        assert!(output.data.get("martyrology").is_none());
    }

    #[tokio::test]
    async fn impeded_and_transferred_entries_say_why() {
        let sunday = skill()
            .run(request("December 8 2024", json!({})))
            .await
            .unwrap();
        let list = celebrations(&sunday);
        assert_eq!(list[0]["name"], "Second Sunday of Advent");
        assert_eq!(list[0]["rank"], "sunday");
        let moved = &list[1];
        assert_eq!(moved["celebrated"], false);
        assert!(
            moved["reason"]
                .as_str()
                .unwrap()
                .starts_with("transferred to 2024-12-09")
        );
        assert!(sunday.text.contains("Not celebrated this year"));

        let monday = skill()
            .run(request("", json!({"date": "2024-12-09"})))
            .await
            .unwrap();
        assert_eq!(
            celebrations(&monday)[0]["reason"],
            "transferred from 2024-12-08"
        );
    }

    #[tokio::test]
    async fn optional_memorials_are_offered() {
        let output = skill()
            .run(request("", json!({"date": "2026-01-20"})))
            .await
            .unwrap();
        let list = celebrations(&output);
        assert_eq!(list.len(), 3);
        assert_eq!(list[0]["rank"], "weekday");
        assert!(
            list[1..]
                .iter()
                .all(|c| c["rank"] == "optional_memorial" && c["celebrated"] == true)
        );
        assert_eq!(output.text.matches("May also be kept").count(), 2);
    }

    #[tokio::test]
    async fn text_queries_use_today_and_the_options() {
        let output = skill().run(request("tomorrow", json!({}))).await.unwrap();
        assert_eq!(output.data["date"], "2026-12-01");
        let epiphany = skill()
            .run(request(
                "",
                json!({"date": "2026-01-04", "epiphany_on_sunday": true}),
            ))
            .await
            .unwrap();
        assert_eq!(
            celebrations(&epiphany)[0]["name"],
            "The Epiphany of the Lord"
        );
    }

    #[tokio::test]
    async fn unreadable_requests_fail_with_an_example() {
        let error = skill()
            .run(request("tell me a story", json!({})))
            .await
            .unwrap_err();
        assert!(matches!(error, SkillError::Failed(m) if m.contains("2026-12-08")));
    }

    #[tokio::test]
    async fn the_martyrology_is_listed_when_installed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(MARTYROLOGY_FILE),
            "# names\n01-28\tSaint Thomas Aquinas\n01-28\tSaint Julian of Cuenca\n01-29\tSaint Gildas\n",
        )
        .unwrap();
        let skill = SaintsOfTheDay::new(&LiturgySettings::default(), dir.path()).unwrap();
        let output = skill
            .run(request("", json!({"date": "2027-01-28"})))
            .await
            .unwrap();
        let names = output.data["martyrology"].as_array().unwrap();
        assert_eq!(names.len(), 2);
        assert_eq!(names[1]["name"], "Saint Julian of Cuenca");
        assert!(
            output
                .text
                .contains("Roman Martyrology: Saint Thomas Aquinas; Saint Julian of Cuenca.")
        );
        let other_day = skill
            .run(request("", json!({"date": "2027-02-03"})))
            .await
            .unwrap();
        assert_eq!(other_day.data["martyrology"], json!([]));
    }

    #[test]
    fn a_malformed_martyrology_is_refused_at_start_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(MARTYROLOGY_FILE),
            "01-28\tSaint Thomas\n13-01\tNobody\n",
        )
        .unwrap();
        let error = SaintsOfTheDay::new(&LiturgySettings::default(), dir.path())
            .err()
            .unwrap();
        assert!(matches!(error, SkillError::Internal(m) if m.contains("line 2")));
    }
}
